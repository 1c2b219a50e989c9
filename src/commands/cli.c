/* cli.c - ktally's option table (one row per option: cli.h), the checks
 * several commands share (kt_options_*), and the command line's dispatch
 * to a command's own parser (commands.h), a --config file's words first. */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "config-file.h"
#include "commands.h"
#include "kind.h"
#include "error.h"
#include "kprops.h"

const char *const kt_mode_names[] = { "transactional", "idempotent", NULL };

/* ---- Values the generic types do not cover ---------------------------------- */

static gboolean
parse_db (const char *flag, const char *text, gpointer field, GError **error)
{
  KtDbConfig *db = field;
  /* Loaded after --db (the table's order): keep them. */
  g_autofree char *password_file = g_steal_pointer (&db->password_file);
  g_autofree char *defaults_file = g_steal_pointer (&db->defaults_file);
  gboolean ok;

  (void) flag;
  kt_db_config_clear (db);
  ok = kt_db_uri_parse (text, db, error);
  db->password_file = g_steal_pointer (&password_file);
  db->defaults_file = g_steal_pointer (&defaults_file);
  return ok;
}

static void
clear_db (gpointer field)
{
  KtDbConfig *db = field;
  g_autofree char *password_file = g_steal_pointer (&db->password_file);
  g_autofree char *defaults_file = g_steal_pointer (&db->defaults_file);

  kt_db_config_clear (db);
  db->password_file = g_steal_pointer (&password_file);
  db->defaults_file = g_steal_pointer (&defaults_file);
}

/* The URI is described as [mysql] keys (describe.c), never with its password. */
static char *
text_db (gconstpointer field)
{
  return ((const KtDbConfig *) field)->database != NULL ? g_strdup ("(set)") : NULL;
}

static gboolean
parse_offsets (const char *flag, const char *text, gpointer field, GError **error)
{
  GArray **out = field;

  g_clear_pointer (out, g_array_unref);
  *out = g_array_new (FALSE, FALSE, sizeof (KtPartitionOffset));
  return kt_partition_offsets_parse (flag, text, *out, error);
}

static void
clear_array (gpointer field)
{
  g_clear_pointer ((GArray **) field, g_array_unref);
}

static char *
text_offsets (gconstpointer field)
{
  const GArray *a = *(GArray *const *) field;
  GString *out;

  if (a == NULL)
    return NULL;
  out = g_string_new (NULL);
  for (guint i = 0; i < a->len; i++)
    g_string_append_printf (out, "%s%d:%" G_GINT64_FORMAT, i ? "," : "",
                            g_array_index (a, KtPartitionOffset, i).partition,
                            g_array_index (a, KtPartitionOffset, i).offset);
  return g_string_free (out, FALSE);
}

static gboolean
parse_partitions (const char *flag, const char *text, gpointer field, GError **error)
{
  GArray **out = field;

  g_clear_pointer (out, g_array_unref);
  *out = g_array_new (FALSE, FALSE, sizeof (gint32));
  return kt_partition_list_parse (flag, text, *out, error);
}

static char *
text_partitions (gconstpointer field)
{
  const GArray *a = *(GArray *const *) field;
  GString *out;

  if (a == NULL)
    return NULL;
  out = g_string_new (NULL);
  for (guint i = 0; i < a->len; i++)
    g_string_append_printf (out, "%s%d", i ? "," : "", g_array_index (a, gint32, i));
  return g_string_free (out, FALSE);
}

static gboolean
parse_log_format (const char *flag, const char *text, gpointer field, GError **error)
{
  /* Its message names the flag. */
  (void) flag;
  *(const KtLogFormat **) field = kt_log_format_lookup (text, error);
  return *(const KtLogFormat **) field != NULL;
}

static void
clear_log_format (gpointer field)
{
  *(const KtLogFormat **) field = NULL;
}

static char *
text_log_format (gconstpointer field)
{
  const KtLogFormat *f = *(const KtLogFormat *const *) field;

  return f != NULL ? g_strdup (f->name) : NULL;
}

/* ---- The table --------------------------------------------------------------- */

#define AT(field) offsetof (KtConfig, field)
#define KAFKA_CMDS (KT_CMD_RUN | KT_CMD_REPLAY | KT_CMD_STATUS)
#define MANAGE_CMDS (KT_CMD_JOBS | KT_CMD_RESET | KT_CMD_FORGET)
#define DB_CMDS (KT_CMD_ALL & ~KT_CMD_CONFIG)
#define JOB_CMDS (KT_CMD_RUN | KT_CMD_REPLAY)

static const char *const modes[] = { "transactional", "idempotent", NULL };
static const char *const starts[] = { "earliest", "latest", NULL };
static const char *const losses[] = { "fail", "skip", NULL };
static const char *const stores[] = { "mysql", "kafka", NULL };
static const char *const log_formats[] = { "text", "json", "logfmt", NULL };

const KtOption kt_option_table[] = {
  /* Kafka */
  { "brokers", 'b', "kafka", KT_OPT_TEXT, AT (brokers), .commands = KAFKA_CMDS | MANAGE_CMDS
    | KT_CMD_AUDIT, .metavar = "LIST", .help = "Kafka bootstrap servers, host:port[,host:port...]" },
  { "topic", 't', "kafka", KT_OPT_LIST, AT (topics), .commands = KAFKA_CMDS | KT_CMD_RESET,
    .flags = KT_OPT_SET, .identity = "job.topics", .metavar = "NAME[,NAME...]",
    .help = "The topic to read; run and status take several, one job over all of them" },
  { "group", 'g', "kafka", KT_OPT_TEXT, AT (group), .commands = KT_CMD_RUN | KT_CMD_STATUS,
    .metavar = "NAME",
    .help = "Share the topic's partitions with the other instances of this Kafka consumer "
            "group (offsets still come from MySQL only)" },
  { "partitions", 'p', "kafka", KT_OPT_CUSTOM, AT (only_partitions), .commands = KT_CMD_RUN,
    .parse = parse_partitions, .clear = clear_array, .text = text_partitions,
    .fallback_doc = "all", .metavar = "LIST",
    .help = "Read only these partitions, e.g. 0-3,7 (a static share)" },
  { "kafka-property", 'X', NULL, KT_OPT_REPEAT, AT (kafka_properties),
    .commands = KAFKA_CMDS | MANAGE_CMDS | KT_CMD_AUDIT, .metavar = "KEY=VALUE",
    .help = "librdkafka property (repeatable), e.g. -X security.protocol=SSL; in a config "
            "file, any other key of [kafka]. Those exactly-once depends on "
            "(enable.auto.commit, isolation.level...) are refused" },

  /* MySQL */
  { "db", 0, NULL, KT_OPT_CUSTOM, AT (db), .commands = DB_CMDS | KT_CMD_CONFIG,
    .parse = parse_db, .clear = clear_db, .text = text_db, .metavar = "URI",
    .help = "MySQL database: mysql://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?socket=PATH]"
            "[&ssl-mode=required|verify-ca|verify-identity&ssl-ca=PATH...]; keep the "
            "password out of it (MYSQL_PWD, --db-password-file, --db-defaults-file). In a "
            "config file: [mysql] uri, or the keys below" },
  { "db-password-file", 0, NULL, KT_OPT_PATH, AT (db.password_file),
    .commands = DB_CMDS | KT_CMD_CONFIG, .flags = KT_OPT_RELOAD, .metavar = "FILE",
    .help = "Read the MySQL password from the first line of this file (mode 0600 or 0400); "
            "read again at every connection. In a config file: [mysql] password-file" },
  { "db-defaults-file", 0, NULL, KT_OPT_PATH, AT (db.defaults_file),
    .commands = DB_CMDS | KT_CMD_CONFIG, .flags = KT_OPT_RELOAD, .metavar = "FILE",
    .help = "A MySQL option file whose [client] group gives the password (or more). In a "
            "config file: [mysql] defaults-file" },
  /* [mysql]'s keys that make up --db in a config file (config.c). */
  { "uri", 0, "mysql", KT_OPT_TEXT, 0, .commands = DB_CMDS | KT_CMD_CONFIG,
    .flags = KT_OPT_FILE_ONLY, .help = "The whole --db URI (the keys below are ignored then)" },
  { "host", 0, "mysql", KT_OPT_TEXT, 0, .commands = DB_CMDS | KT_CMD_CONFIG,
    .flags = KT_OPT_FILE_ONLY, .help = "The server's host name or address" },
  { "port", 0, "mysql", KT_OPT_TEXT, 0, .commands = DB_CMDS | KT_CMD_CONFIG,
    .flags = KT_OPT_FILE_ONLY, .help = "Its TCP port (3306)" },
  { "socket", 0, "mysql", KT_OPT_TEXT, 0, .commands = DB_CMDS | KT_CMD_CONFIG,
    .flags = KT_OPT_FILE_ONLY, .help = "A Unix socket instead of host and port" },
  { "user", 0, "mysql", KT_OPT_TEXT, 0, .commands = DB_CMDS | KT_CMD_CONFIG,
    .flags = KT_OPT_FILE_ONLY, .help = "The MySQL user" },
  { "database", 0, "mysql", KT_OPT_TEXT, 0, .commands = DB_CMDS | KT_CMD_CONFIG,
    .flags = KT_OPT_FILE_ONLY, .help = "The database ktally's tables are in" },
  { "ssl-mode", 0, "mysql", KT_OPT_TEXT, 0, .commands = DB_CMDS | KT_CMD_CONFIG,
    .flags = KT_OPT_FILE_ONLY,
    .help = "TLS: preferred, disabled, required, verify-ca or verify-identity" },
  { "ssl-ca", 0, "mysql", KT_OPT_TEXT, 0, .commands = DB_CMDS | KT_CMD_CONFIG,
    .flags = KT_OPT_FILE_ONLY, .help = "The CA certificate that signed the server's" },
  { "ssl-cert", 0, "mysql", KT_OPT_TEXT, 0, .commands = DB_CMDS | KT_CMD_CONFIG,
    .flags = KT_OPT_FILE_ONLY, .help = "A client certificate" },
  { "ssl-key", 0, "mysql", KT_OPT_TEXT, 0, .commands = DB_CMDS | KT_CMD_CONFIG,
    .flags = KT_OPT_FILE_ONLY, .help = "The client certificate's key" },
  { "password-file", 0, "mysql", KT_OPT_PATH, 0, .commands = DB_CMDS | KT_CMD_CONFIG,
    .flags = KT_OPT_FILE_ONLY | KT_OPT_RELOAD, .help = "--db-password-file" },
  { "defaults-file", 0, "mysql", KT_OPT_PATH, 0, .commands = DB_CMDS | KT_CMD_CONFIG,
    .flags = KT_OPT_FILE_ONLY | KT_OPT_RELOAD, .help = "--db-defaults-file" },

  /* The job */
  { "job", 'j', "batch", KT_OPT_TEXT, AT (job), .commands = KAFKA_CMDS | KT_CMD_RESET
    | KT_CMD_FORGET | KT_CMD_AUDIT, .fallback_doc = "the topic", .metavar = "NAME",
    .help = "The job's name: its offsets, its identity and its audit rows are stored "
            "under it" },
  { "kind", 'k', "batch", KT_OPT_TEXT, AT (kind), .fallback = "count",
    .commands = KT_CMD_RUN, .identity = "job.kind", .metavar = "KIND",
    .help = "count: per-minute ERROR counts; ledger: per-account balances from JSON "
            "transactions {txn, account, amount, ts}" },
  { "mode", 'm', "batch", KT_OPT_WORD, AT (mode), .words = modes, .fallback = "transactional",
    .commands = KT_CMD_RUN | KT_CMD_INIT_DB, .identity = "job.mode", .metavar = "MODE",
    .help = "transactional: counts and offsets in one transaction; idempotent: counts that "
            "carry the offsets they include, offsets stored after (init-db: which tables)" },
  { "offsets", 0, "batch", KT_OPT_WORD, AT (offsets), .words = stores, .fallback = "mysql",
    .commands = KT_CMD_RUN, .identity = "job.offsets", .metavar = "WHERE",
    .help = "Where idempotent mode keeps offsets: mysql (kafka_offset) or kafka (the "
            "consumer group ktally-JOB)" },
  { "table", 0, "batch", KT_OPT_TEXT, AT (table), .fallback = "error_log",
    .commands = KT_CMD_RUN, .identity = "job.output", .metavar = "NAME",
    .help = "Table the counts go to (created if absent, in the shape --by and --sum give; "
            "idempotent mode: a view NAME over the per-topic table NAME_topic)" },
  { "table", 0, NULL, KT_OPT_TEXT, AT (table), .fallback = "error_log_replay",
    .commands = KT_CMD_REPLAY, .identity = "job.output", .metavar = "NAME",
    .help = "Table the counts are added to (created like error_log if absent)" },
  { "share-table", 0, "batch", KT_OPT_SWITCH, AT (share_table), .commands = KT_CMD_RUN,
    .help = "Count into a table even though another job already counts one of these "
            "topics into it (refused otherwise: two jobs over one topic count everything "
            "twice); for jobs over different partitions" },
  { "start", 0, "batch", KT_OPT_WORD, AT (start), .words = starts, .fallback = "earliest",
    .commands = KT_CMD_RUN, .metavar = "WHERE",
    .help = "Where a partition with no stored offset starts" },
  { "from", 0, NULL, KT_OPT_CUSTOM, AT (replay_from), .commands = KT_CMD_REPLAY,
    .parse = parse_offsets, .clear = clear_array, .text = text_offsets,
    .metavar = "P:OFF[,P:OFF...]", .help = "First offset of each partition to replay (inclusive)" },
  { "until", 0, NULL, KT_OPT_CUSTOM, AT (replay_until), .commands = KT_CMD_REPLAY,
    .parse = parse_offsets, .clear = clear_array, .text = text_offsets,
    .metavar = "P:OFF[,P:OFF...]", .help = "End offset of each partition (exclusive)" },

  /* Batches */
  { "interval", 'i', "batch", KT_OPT_SECONDS, AT (interval), .fallback = "5s", .min = 0,
    .max = 86400, .commands = KT_CMD_RUN, .flags = KT_OPT_RELOAD, .metavar = "DURATION",
    .help = "From one batch start to the next, e.g. 500ms, 5 (seconds), 2m (0: back "
            "to back)" },
  { "max-per-partition", 'n', "batch", KT_OPT_INT, AT (max_per_partition),
    .fallback = "100000", .min = 1, .max = G_MAXINT64, .commands = JOB_CMDS,
    .flags = KT_OPT_RELOAD, .metavar = "N",
    .help = "At most this many offsets per partition per batch" },
  { "max-batch-bytes", 0, "batch", KT_OPT_INT, AT (max_batch_bytes), .fallback = "67108864",
    .min = 1024, .max = G_MAXINT64, .commands = KT_CMD_RUN, .flags = KT_OPT_RELOAD,
    .metavar = "BYTES", .help = "Stop reading a batch after this many bytes of values" },
  { "exit-when-idle", 0, "batch", KT_OPT_SWITCH, AT (exit_when_idle), .commands = KT_CMD_RUN,
    .help = "Exit 0 after the first batch that finds nothing new (backfills, tests)" },
  { "on-data-loss", 0, "batch", KT_OPT_WORD, AT (on_data_loss), .words = losses,
    .fallback = "fail", .commands = KT_CMD_RUN, .metavar = "WHAT",
    .help = "When retention removed offsets not yet read: fail (exit 4) or skip (continue "
            "from the log start, with a warning naming the lost range)" },
  { "startup-timeout", 0, "batch", KT_OPT_SECONDS, AT (startup_timeout), .fallback = "20s",
    .min = 0, .max = 3600, .commands = KAFKA_CMDS | MANAGE_CMDS,
    .flags = KT_OPT_OPEN_MIN, .metavar = "DURATION",
    .help = "How long to wait for Kafka and MySQL at start-up" },
  { "audit-keep", 0, "batch", KT_OPT_SECONDS, AT (audit_keep), .min = 1, .max = 1e12,
    .fallback_doc = "keep all", .commands = KT_CMD_RUN, .metavar = "DURATION",
    .help = "Keep this long of ktally_batches row by row (e.g. 7d); older rows are "
            "folded into one per partition" },

  /* Service */
  { "http", 0, "http", KT_OPT_TEXT, AT (http), .fallback_doc = "off", .commands = KT_CMD_RUN,
    .metavar = "ADDR:PORT",
    .help = "Serve /metrics (Prometheus), /livez, /readyz, /healthz and a status page on "
            "this address, e.g. 127.0.0.1:9464" },
  { "health-max-lag", 0, "http", KT_OPT_INT, AT (health_max_lag), .min = 0,
    .max = G_MAXINT64, .fallback_doc = "no bound", .commands = KT_CMD_RUN, .metavar = "N",
    .help = "/readyz: not ready while more offsets than this are not committed" },
  { "health-max-commit-age", 0, "http", KT_OPT_SECONDS, AT (health_max_commit_age),
    .min = 0, .max = 1e9, .fallback_doc = "3 intervals, at least 60s",
    .commands = KT_CMD_RUN, .metavar = "DURATION",
    .help = "/readyz: not ready when no batch has succeeded for this long" },
  { "health-max-stall", 0, "http", KT_OPT_SECONDS, AT (health_max_stall), .fallback = "120s",
    .min = 0, .max = 1e9, .commands = KT_CMD_RUN, .flags = KT_OPT_OPEN_MIN,
    .metavar = "DURATION",
    .help = "/livez: not alive when the batch loop has not moved for this long" },

  /* What one command does */
  { "json", 0, NULL, KT_OPT_SWITCH, AT (json), .commands = KT_CMD_STATUS | MANAGE_CMDS,
    .help = "Print one JSON document instead of a table" },
  { "to", 0, NULL, KT_OPT_TEXT, AT (reset_to), .commands = KT_CMD_RESET, .metavar = "WHERE",
    .help = "Where to: earliest, latest, PARTITION:OFFSET[,...] or batch:ID" },
  { "dry-run", 'n', NULL, KT_OPT_SWITCH, AT (dry_run), .commands = KT_CMD_RESET
    | KT_CMD_FORGET, .help = "Print the plan and change nothing (the default)" },
  { "execute", 0, NULL, KT_OPT_SWITCH, AT (execute), .commands = KT_CMD_RESET | KT_CMD_FORGET,
    .help = "Apply the plan, in one transaction" },
  { "rebuild", 0, NULL, KT_OPT_SWITCH, AT (rebuild), .commands = KT_CMD_RESET,
    .help = "With --to earliest: empty the job's output and count everything again (the "
            "only way back for a transactional job)" },
  { "accept-data-loss", 0, NULL, KT_OPT_SWITCH, AT (accept_data_loss),
    .commands = KT_CMD_RESET,
    .help = "With --rebuild: rebuild although retention removed offsets the job counted" },
  { "check", 0, NULL, KT_OPT_SWITCH, AT (check), .commands = KT_CMD_CONFIG,
    .help = "Check run's options (and a --config file) and print the effective settings "
            "as a config file" },
  { "connect", 0, NULL, KT_OPT_SWITCH, AT (check_connect), .commands = KT_CMD_CONFIG,
    .help = "With --check: also reach Kafka (each topic's partitions) and MySQL (the "
            "database, its schema version, the grants ktally needs); creates nothing" },

  /* Every command */
  { "config", 'c', NULL, KT_OPT_PATH, AT (config_file), .commands = KT_CMD_ALL,
    .metavar = "FILE",
    .help = "Read options from this INI file first ([kafka] [mysql] [batch] [parse] "
            "[http] [log]; keys spelled like the long options); flags given here win" },
  { "verbose", 'v', "log", KT_OPT_SWITCH, AT (verbose), .commands = KT_CMD_ALL,
    .flags = KT_OPT_RELOAD,
    .help = "Log per-partition detail and librdkafka's own messages" },
  { "quiet", 'q', "log", KT_OPT_SWITCH, AT (quiet), .commands = KT_CMD_ALL,
    .flags = KT_OPT_RELOAD, .help = "Log only warnings and errors" },
  { "log-format", 0, "log", KT_OPT_CUSTOM, AT (log_format), .words = log_formats,
    .fallback = "text", .commands = KT_CMD_ALL, .parse = parse_log_format,
    .clear = clear_log_format, .text = text_log_format, .metavar = "FORMAT",
    .help = "text (the journal's fields under systemd), json or logfmt: one object or "
            "line of key=value pairs per record, a batch's figures as fields" },
  KT_OPTION_END
};

const KtOption *const *
kt_option_tables (void)
{
  static const KtOption **tables;

  if (g_once_init_enter (&tables))
    {
      const KtOption *const *kinds = kt_kind_option_tables ();
      guint n = g_strv_length ((char **) kinds);
      const KtOption **all = g_new0 (const KtOption *, n + 2);

      all[0] = kt_option_table;
      memcpy (all + 1, kinds, n * sizeof *kinds);
      g_once_init_leave (&tables, all);
    }
  return tables;
}

/* ---- Checks ---------------------------------------------------------------- */

void
kt_config_free (KtConfig *config)
{
  if (config == NULL)
    return;
  for (const KtOption *const *t = kt_option_tables (); *t != NULL; t++)
    kt_option_table_clear (*t, config);
  g_free (config->topic);
  g_free (config->replay_range);
  kt_db_config_clear (&config->db);
  g_strfreev (config->words);
  g_free (config);
}

static gboolean
all_chars_in (const char *s, const char *extra, gsize max_len)
{
  gsize n = 0;

  if (s == NULL || *s == '\0')
    return FALSE;
  for (const char *p = s; *p != '\0'; p++, n++)
    if (!g_ascii_isalnum (*p) && *p != '_' && (extra == NULL || strchr (extra, *p) == NULL))
      return FALSE;
  return n <= max_len;
}

gboolean
kt_is_job_name (const char *name)
{
  glong n = 0;

  if (name == NULL || *name == '\0' || !g_utf8_validate (name, -1, NULL))
    return FALSE;
  for (const char *p = name; *p != '\0'; p = g_utf8_next_char (p), n++)
    {
      gunichar c = g_utf8_get_char (p);

      if (c < 0x80 ? !g_ascii_isalnum (c) && strchr ("._-", (int) c) == NULL
                   : c > 0xFFFF)
        return FALSE;
    }
  return n <= 64;
}

void
kt_scrub_argv (int argc, char **argv)
{
  for (int i = 1; i < argc; i++)
    {
      kt_db_uri_scrub (argv[i]);
      kt_kprops_scrub (argv[i]);
    }
}

static gint
compare_partition_offsets (gconstpointer a, gconstpointer b)
{
  const KtPartitionOffset *x = a, *y = b;
  return (x->partition > y->partition) - (x->partition < y->partition);
}

gboolean
kt_partition_offsets_parse (const char *flag, const char *text, GArray *out,
                            GError **error)
{
  g_auto(GStrv) items = g_strsplit (text, ",", -1);

  for (char **item = items; *item != NULL; item++)
    {
      g_auto(GStrv) pair = g_strsplit (*item, ":", 3);
      guint64 partition, offset;
      KtPartitionOffset po;

      if (g_strv_length (pair) != 2
          || !g_ascii_string_to_unsigned (pair[0], 10, 0, G_MAXINT32, &partition, NULL)
          || !g_ascii_string_to_unsigned (pair[1], 10, 0, G_MAXINT64, &offset, NULL))
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                       "%s: expected PARTITION:OFFSET[,...], got '%s'", flag, *item);
          return FALSE;
        }
      po.partition = (gint32) partition;
      po.offset = (gint64) offset;
      for (guint i = 0; i < out->len; i++)
        if (g_array_index (out, KtPartitionOffset, i).partition == po.partition)
          {
            g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                         "%s: partition %d given twice", flag, po.partition);
            return FALSE;
          }
      g_array_append_val (out, po);
    }
  g_array_sort (out, compare_partition_offsets);
  return TRUE;
}

static gint
compare_gint32 (gconstpointer a, gconstpointer b)
{
  gint32 x = *(const gint32 *) a, y = *(const gint32 *) b;
  return (x > y) - (x < y);
}

gboolean
kt_partition_list_parse (const char *flag, const char *text, GArray *out, GError **error)
{
  g_auto(GStrv) items = g_strsplit (text, ",", -1);
  g_autoptr(GHashTable) seen = g_hash_table_new (g_direct_hash, g_direct_equal);

  for (char **item = items; *item != NULL; item++)
    {
      g_auto(GStrv) ends = g_strsplit (*item, "-", 3);
      guint64 lo, hi;

      if (g_strv_length (ends) < 1 || g_strv_length (ends) > 2
          || !g_ascii_string_to_unsigned (ends[0], 10, 0, G_MAXINT32, &lo, NULL)
          || !g_ascii_string_to_unsigned (ends[1] != NULL ? ends[1] : ends[0], 10, 0,
                                          G_MAXINT32, &hi, NULL)
          || lo > hi || hi - lo > 100000)
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                       "%s: expected partitions like 0-3,7, got '%s'", flag, *item);
          return FALSE;
        }
      for (guint64 p = lo; p <= hi; p++)
        {
          gint32 v = (gint32) p;
          if (!g_hash_table_add (seen, GINT_TO_POINTER (v)))
            {
              g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "%s: partition %d given twice",
                           flag, v);
              return FALSE;
            }
          g_array_append_val (out, v);
        }
    }
  g_array_sort (out, compare_gint32);
  return TRUE;
}

/* Kafka's own rule for topic names. */
static gboolean
check_topic_name (const char *topic, const char *more, GError **error)
{
  if (all_chars_in (topic, ".-", 249))
    return TRUE;
  g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
               "--topic: '%s' is not a valid topic name ([A-Za-z0-9._-], at most 249 "
               "characters%s)", topic, more);
  return FALSE;
}

static gboolean
check_job_name (const char *job, GError **error)
{
  if (job == NULL || kt_is_job_name (job))
    return TRUE;
  g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
               "--job: '%s' is not a valid job name (letters, digits, '.', '_', '-', at "
               "most 64 characters)", job);
  return FALSE;
}

static gboolean
check_properties (char **properties, GError **error)
{
  for (char **p = properties; p != NULL && *p != NULL; p++)
    if (!kt_kprops_check (*p, error))
      return FALSE;
  return TRUE;
}

gboolean
kt_options_kafka (KtConfig *config, const KtOptionValues *values, gboolean several,
                  GError **error)
{
  if (config->brokers == NULL || *config->brokers == '\0')
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE, "--brokers is required");
      return FALSE;
    }
  if (config->topics == NULL)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE, "--topic is required");
      return FALSE;
    }
  for (char **t = config->topics; *t != NULL; t++)
    if (!check_topic_name (*t, "", error))
      return FALSE;
  if (g_strv_length (config->topics) > 1)
    {
      if (!several)
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                       "--topic: several topics are for `run` and `status` only, not `%s`",
                       config->command);
          return FALSE;
        }
      if (!kt_option_given (values, "job"))
        {
          g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE,
                               "--job is required with several topics (one job, "
                               "offsets per topic and partition)");
          return FALSE;
        }
      for (guint i = 0; config->topics[i] != NULL; i++)
        for (guint j = 0; j < i; j++)
          if (g_str_equal (config->topics[i], config->topics[j]))
            {
              g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "--topic: '%s' given twice",
                           config->topics[i]);
              return FALSE;
            }
    }
  if (!check_job_name (config->job, error) || !check_properties (config->kafka_properties,
                                                                 error))
    return FALSE;
  config->topic = g_strdup (config->topics[0]);
  if (config->job == NULL && strlen (config->topic) > 64)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE,
                           "--job: the topic name is longer than 64 characters, "
                           "so it cannot be the job name: give --job");
      return FALSE;
    }
  if (config->job == NULL)
    config->job = g_strdup (config->topic);
  return TRUE;
}

gboolean
kt_options_db (KtConfig *config, GError **error)
{
  if (config->db.database == NULL)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE, "--db is required");
      return FALSE;
    }
  if (config->db.password_file != NULL)
    {
      char *password = kt_db_password_file_read (config->db.password_file, error);

      if (password == NULL)
        return FALSE;
      if (config->db.password != NULL)
        memset (config->db.password, 0, strlen (config->db.password));
      g_free (config->db.password);
      config->db.password = password;
    }
  if (config->db.defaults_file != NULL
      && !g_file_test (config->db.defaults_file, G_FILE_TEST_IS_REGULAR))
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "--db-defaults-file: '%s' is not a readable file", config->db.defaults_file);
      return FALSE;
    }
  return TRUE;
}

gboolean
kt_options_table (KtConfig *config, const KtOptionValues *values, GError **error)
{
  if (!kt_is_identifier (config->table))
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "--table: '%s' is not a plain identifier (letters, digits and _, "
                   "at most 64 characters)", config->table);
      return FALSE;
    }
  config->table_explicit = kt_option_given (values, "table");
  return TRUE;
}

/* The kind and how it combines with the mode and the offsets store. */
static gboolean
options_kind (KtConfig *config, GError **error)
{
  const KtJobKind *kind;

  if (config->kind == NULL)
    config->kind = g_strdup ("count");  /* replay's */
  if (config->offsets == KT_OFFSETS_KAFKA && config->mode != KT_MODE_IDEMPOTENT)
    {
      /* Kafka's offsets cannot join a MySQL transaction. */
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE,
                           "--offsets kafka needs --mode idempotent");
      return FALSE;
    }
  /* The kinds' table (kind.c) knows the kinds, and which modes each one
   * runs in. */
  kind = kt_kind_lookup (config->kind, kt_mode_names[config->mode], error);
  if (kind == NULL)
    return FALSE;
  if (config->workers == -1)
    config->workers = MIN (g_get_num_processors (), 64);
  return TRUE;
}

/* How this instance shares the topic: a consumer group or a static list. */
static gboolean
options_share (KtConfig *config, GError **error)
{
  if (config->group != NULL && config->only_partitions != NULL)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE,
                           "--group and --partitions exclude each other: a group shares "
                           "the partitions itself");
      return FALSE;
    }
  if (config->group != NULL && !all_chars_in (config->group, ".-", 200))
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "--group: '%s' is not a valid group name ([A-Za-z0-9._-])", config->group);
      return FALSE;
    }
  if (config->group != NULL && config->offsets == KT_OFFSETS_KAFKA)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE,
                           "--group needs offsets in MySQL (not --offsets kafka)");
      return FALSE;
    }
  return TRUE;
}

/* Whether @name is a pcre2 group name that is also a plain column name:
 * [A-Za-z_][A-Za-z0-9_]*, at most 32 characters (pcre2's limit). */
static gboolean
is_field_name (const char *name)
{
  return all_chars_in (name, NULL, 32) && !g_ascii_isdigit (*name);
}

/* --by or --sum (@flag): names of fields, each once (column names compare
 * without case), at most @max. */
static gboolean
check_fields (const char *flag, char **fields, guint max, GError **error)
{
  /* Columns of ktally's own in a count table (sql/counts.sql) or its
   * per-topic table (sql/idempotent.sql; `partition` was one of it before
   * schema version 4): a field of that name would be a second column. */
  static const char *const taken[] = { "log_time", "log_count", "job", "topic", "partition",
                                       "time", NULL };
  guint n = fields != NULL ? g_strv_length (fields) : 0;

  if (n > max)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "%s: at most %u fields, got %u", flag,
                   max, n);
      return FALSE;
    }
  for (guint i = 0; i < n; i++)
    {
      const char *f = fields[i];

      if (!is_field_name (f))
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                       "%s: '%s' is not a field name ([A-Za-z_][A-Za-z0-9_]*, at most 32 "
                       "characters, the name of a group of --pattern)", flag, f);
          return FALSE;
        }
      for (const char *const *t = taken; *t != NULL; t++)
        if (g_ascii_strcasecmp (f, *t) == 0)
          {
            g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                         g_str_equal (*t, "time")
                         ? "%s: '%s': the time is the bucket, the first key already"
                         : "%s: '%s' is a column ktally writes itself; rename the group",
                         flag, f);
            return FALSE;
          }
      if (g_ascii_strncasecmp (f, "sum_", 4) == 0)
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                       "%s: '%s': names starting with sum_ are the columns of --sum; "
                       "rename the group", flag, f);
          return FALSE;
        }
      for (guint j = 0; j < i; j++)
        if (g_ascii_strcasecmp (f, fields[j]) == 0)
          {
            g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                         "%s: '%s' given twice (column names do not tell case apart)", flag,
                         f);
            return FALSE;
          }
    }
  return TRUE;
}

/* --by, --sum and --max-keys. */
static gboolean
options_fields (KtConfig *config, GError **error)
{
  const KtJobKind *kind = kt_kind_lookup (config->kind, kt_mode_names[config->mode], NULL);

  if (!check_fields ("--by", config->dimensions, KT_MAX_DIMENSIONS, error)
      || !check_fields ("--sum", config->sums, KT_MAX_SUMS, error))
    return FALSE;
  for (char **s = config->sums; s != NULL && *s != NULL; s++)
    if (g_str_equal (*s, "level"))
      {
        g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE,
                             "--sum: 'level' is not a number; --sum adds up numeric "
                             "groups of --pattern");
        return FALSE;
      }
  if ((config->dimensions != NULL || config->sums != NULL) && kind != NULL && !kind->parses)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "%s: --kind %s reads no log lines",
                   config->dimensions != NULL ? "--by" : "--sum", config->kind);
      return FALSE;
    }
  return TRUE;
}

gboolean
kt_options_run (KtConfig *config, GError **error)
{
  return options_kind (config, error)
         && options_share (config, error)
         && options_fields (config, error);
}

gboolean
kt_options_job (KtConfig *config, gboolean required, const char *hint, GError **error)
{
  if (required && config->job == NULL)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "--job is required%s", hint);
      return FALSE;
    }
  return check_job_name (config->job, error);
}

gboolean
kt_options_brokers (KtConfig *config, gboolean required, GError **error)
{
  if (required && (config->brokers == NULL || *config->brokers == '\0'))
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE, "--brokers is required");
      return FALSE;
    }
  if (config->topics != NULL && g_strv_length (config->topics) > 1)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "--topic: several topics are for `run` and `status` only, not `%s`",
                   config->command);
      return FALSE;
    }
  if (config->topics != NULL && !check_topic_name (config->topics[0], "; one topic", error))
    return FALSE;
  if (!check_properties (config->kafka_properties, error))
    return FALSE;
  if (config->brokers != NULL && *config->brokers == '\0')
    g_clear_pointer (&config->brokers, g_free);
  config->topic = g_strdup (config->topics != NULL ? config->topics[0] : NULL);
  return TRUE;
}

gboolean
kt_options_execute (KtConfig *config, GError **error)
{
  if (config->dry_run && config->execute)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE,
                           "--dry-run and --execute exclude each other");
      return FALSE;
    }
  return TRUE;
}

/* ---- Parsing --------------------------------------------------------------- */

/* The options of the job's kind into @config; another kind's, given, are
 * refused. A kind that does not exist (or not in this mode) is left to
 * kt_options_run() to refuse. */
static gboolean
load_kind_options (KtConfig *config, const KtOptionValues *values, GError **error)
{
  const KtJobKind *kind = kt_kind_lookup (config->kind != NULL ? config->kind : "count",
                                          kt_mode_names[config->mode], NULL);

  for (const KtOption *const *t = kt_kind_option_tables (); *t != NULL; t++)
    {
      const KtOption *given;

      if (kind != NULL && kind->options == *t)
        {
          if (!kt_option_values_load (values, *t, config, error))
            return FALSE;
          continue;
        }
      given = kt_option_values_first_given (values, *t);
      if (given != NULL && kind != NULL
          && (kind->options == NULL || kt_option_lookup ((const KtOption *const[]) {
                kind->options, NULL }, G_MAXUINT32, given->name) == NULL))
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "--%s: not an option of --kind %s",
                       given->name, kind->kind);
          return FALSE;
        }
    }
  return TRUE;
}

KtConfig *
kt_command_options (const KtCommand *command, int argc, char **argv,
                    KtOptionValues **values, GError **error)
{
  g_autoptr(KtConfig) config = g_new0 (KtConfig, 1);
  g_autoptr(KtOptionValues) parsed = kt_option_values_new (kt_option_tables (),
                                                           kt_command_bits (command));

  if (!kt_option_values_parse (parsed, command->help, command->notes, argc, argv, error)
      || !kt_option_values_load (parsed, kt_option_table, config, error)
      || !load_kind_options (config, parsed, error))
    return NULL;
  config->command = command->name;
  *values = g_steal_pointer (&parsed);
  return g_steal_pointer (&config);
}

/* Blanks, in @message, what the command's @words hold where a mysql://
 * password stands (kt_db_uri_secrets()). A message quotes what the user
 * gave (GOption quotes a bad value whole), so a password shows as in its
 * URI, after a ':'; a longer one is blanked wherever it shows. Our own
 * text stays as it is: the placeholder "mysql://USER[:PASSWORD]@HOST"
 * in the --db messages, or a one-letter password's letter in a word. */
static void
scrub_message (char *message, char **words)
{
  for (char **w = words; *w != NULL; w++)
    {
      g_auto(GStrv) secrets = kt_db_uri_secrets (*w);

      for (char **s = secrets; *s != NULL; s++)
        for (char *at = strstr (message, *s); at != NULL; at = strstr (at + 1, *s))
          if (strlen (*s) >= 4 || (at > message && at[-1] == ':'))
            memset (at, 'x', strlen (*s));
    }
  kt_kprops_scrub (message);
}

KtConfig *
kt_config_parse (const char *command, int argc, char **argv, GError **error)
{
  const KtCommand *cmd = kt_command_find (command);
  g_autoptr(GError) local = NULL;
  g_autoptr(GPtrArray) args = g_ptr_array_new ();  /* borrowed strings */
  g_autoptr(GPtrArray) words = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GArray) lines = g_array_new (FALSE, FALSE, sizeof (guint));
  g_auto(GStrv) given = NULL;  /* the command line's words, for the file's errors */
  const char *file;
  KtConfig *config = NULL;

  for (int i = 0; i < argc; i++)
    {
      /* "-Xkey=value", as kcat and getopt take it: GOption wants the
       * value apart. */
      if (i > 0 && g_str_has_prefix (argv[i], "-X") && argv[i][2] != '\0')
        {
          g_ptr_array_add (args, (char *) "-X");
          g_ptr_array_add (args, argv[i] + 2);
        }
      else
        g_ptr_array_add (args, argv[i]);
    }
  g_ptr_array_add (args, NULL);
  file = kt_config_file_take (args);
  given = g_strdupv ((char **) args->pdata);
  if (cmd == NULL)
    g_set_error (&local, KT_ERROR, KT_ERROR_USAGE, "unknown command '%s'", command);
  else if (file == NULL
           || kt_config_file_words (file, kt_option_tables (), kt_command_bits (cmd), words,
                                    lines, &local))
    {
      /* The file's words first: the command line's come later and win. */
      for (guint i = 0; i < words->len; i++)
        g_ptr_array_insert (args, (gint) (i + 1), words->pdata[i]);
      config = cmd->parse ((int) args->len - 1, (char **) args->pdata, &local);
      /* A value from the file that does not do: its line too. */
      if (config == NULL && file != NULL && local->domain == KT_ERROR
          && local->code == KT_ERROR_USAGE)
        {
          g_autofree char *where = kt_config_file_blame (file, local->message, words, lines,
                                                         given, kt_option_tables (),
                                                         kt_command_bits (cmd));
          if (where != NULL)
            g_prefix_error (&local, "--config: %s: ", where);
        }
    }

  /* GLib quotes a bad argument back, and the argument may be a URI with a
   * password in it: no message leaves here with one. */
  if (config == NULL)
    {
      /* Every word given: --config=FILE too, which `given` no longer holds
       * (a file name that looks like a URI, found by fuzz-options). */
      g_autofree char **all = g_new0 (char *, argc + 1);

      memcpy (all, argv, sizeof (char *) * (gsize) argc);
      g_ptr_array_add (words, NULL);
      scrub_message (local->message, all);
      scrub_message (local->message, given);
      scrub_message (local->message, (char **) words->pdata);
      g_propagate_error (error, g_steal_pointer (&local));
      return NULL;
    }
  g_free (config->config_file);
  config->config_file = g_strdup (file);
  config->words = g_new0 (char *, argc + 1);
  for (int i = 0; i < argc; i++)
    config->words[i] = g_strdup (argv[i]);
  return config;
}
