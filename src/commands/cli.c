/* cli.c - ktally's option table (one row per option: cli.h), the checks
 * several commands share (kt_options_*), and the command line's dispatch
 * to a command's own parser (commands.h), a --config file's words first. */
#include "cli.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <math.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "kind.h"
#include "error.h"
#include "kprops.h"


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

/* A --db URI with a password in it. */
static gboolean
secret_db (const char *text)
{
  g_auto(GStrv) secrets = kt_db_uri_secrets (text);

  return secrets[0] != NULL;
}

/* -X KEY=VALUE of a property librdkafka keeps secret (sasl.password...). */
static gboolean
secret_property (const char *text)
{
  g_autofree char *key = g_strndup (text, strcspn (text, "="));

  return kt_kprops_is_secret (key);
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
static const char *const log_streams[] = { "stderr", "stdout", NULL };

const KtOption kt_option_table[] = {
  /* Kafka */
  { "brokers", 'b', "kafka", KT_OPT_TEXT, AT (kafka.brokers), .commands = KAFKA_CMDS | MANAGE_CMDS
    | KT_CMD_AUDIT, .metavar = "LIST", .help = "Kafka bootstrap servers, host:port[,host:port...]" },
  { "topic", 't', "kafka", KT_OPT_LIST, AT (job.topics), .commands = KAFKA_CMDS | KT_CMD_RESET,
    .flags = KT_OPT_SET, .identity = "job.topics", .metavar = "NAME[,NAME...]",
    .help = "The topic to read; run and status take several, one job over all of them" },
  { "group", 'g', "kafka", KT_OPT_TEXT, AT (job.group), .commands = KT_CMD_RUN | KT_CMD_STATUS,
    .metavar = "NAME",
    .help = "Share the topic's partitions with the other instances of this Kafka consumer "
            "group (offsets still come from MySQL only)" },
  { "partitions", 'p', "kafka", KT_OPT_CUSTOM, AT (job.partitions), .commands = KT_CMD_RUN,
    .parse = parse_partitions, .clear = clear_array, .text = text_partitions,
    .fallback_doc = "all", .metavar = "LIST",
    .help = "Read only these partitions, e.g. 0-3,7 (a static share)" },
  { "kafka-property", 'X', NULL, KT_OPT_REPEAT, AT (kafka.properties),
    .commands = KAFKA_CMDS | MANAGE_CMDS | KT_CMD_AUDIT, .flags = KT_OPT_ENV,
    .secret = secret_property, .metavar = "KEY=VALUE",
    .help = "librdkafka property (repeatable), e.g. -X security.protocol=SSL; in a config "
            "file, any other key of [kafka]. Those exactly-once depends on "
            "(enable.auto.commit, isolation.level...) are refused" },

  /* MySQL */
  { "db", 0, NULL, KT_OPT_CUSTOM, AT (db), .commands = DB_CMDS | KT_CMD_CONFIG,
    .flags = KT_OPT_ENV, .secret = secret_db, .parse = parse_db, .clear = clear_db, .text = text_db, .metavar = "URI",
    .help = "MySQL database: mysql://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?socket=PATH]"
            "[&ssl-mode=required|verify-ca|verify-identity&ssl-ca=PATH...]; keep the "
            "password out of it (MYSQL_PWD, --db-password-file, --db-defaults-file). In a "
            "config file: [mysql] uri, or the keys below" },
  { "db-password-file", 0, NULL, KT_OPT_PATH, AT (db.password_file),
    .commands = DB_CMDS | KT_CMD_CONFIG, .flags = KT_OPT_RELOAD | KT_OPT_ENV, .metavar = "FILE",
    .help = "Read the MySQL password from the first line of this file (mode 0600 or 0400); "
            "read again at every connection. In a config file: [mysql] password-file" },
  { "db-defaults-file", 0, NULL, KT_OPT_PATH, AT (db.defaults_file),
    .commands = DB_CMDS | KT_CMD_CONFIG, .flags = KT_OPT_RELOAD | KT_OPT_ENV, .metavar = "FILE",
    .help = "A MySQL option file whose [client] group gives the password (or more). In a "
            "config file: [mysql] defaults-file" },
  /* [mysql]'s keys that make up --db in a config file (config.c). */
  { "uri", 0, "mysql", KT_OPT_TEXT, 0, .commands = DB_CMDS | KT_CMD_CONFIG,
    .flags = KT_OPT_FILE_ONLY, .help = "The whole --db URI, TLS in its query; not with the "
    "keys below (a file with both is refused: one of them would be ignored)" },
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
  { "job", 'j', "batch", KT_OPT_TEXT, AT (job.name), .commands = KAFKA_CMDS | KT_CMD_RESET
    | KT_CMD_FORGET | KT_CMD_AUDIT, .fallback_doc = "the topic", .metavar = "NAME",
    .help = "The job's name: its offsets, its identity and its audit rows are stored "
            "under it" },
  { "kind", 'k', "batch", KT_OPT_TEXT, AT (job.kind), .fallback = "count",
    .commands = KT_CMD_RUN, .identity = "job.kind", .metavar = "KIND",
    .help = "count: per-minute ERROR counts; ledger: per-account balances from JSON "
            "transactions {txn, account, amount, ts}" },
  { "mode", 'm', "batch", KT_OPT_WORD, AT (job.mode), .words = modes, .fallback = "transactional",
    .commands = KT_CMD_RUN | KT_CMD_INIT_DB, .identity = "job.mode", .metavar = "MODE",
    .help = "transactional: counts and offsets in one transaction; idempotent: counts that "
            "carry the offsets they include, offsets stored after (init-db: which tables)" },
  { "offsets", 0, "batch", KT_OPT_WORD, AT (job.offsets), .words = stores, .fallback = "mysql",
    .commands = KT_CMD_RUN, .identity = "job.offsets", .metavar = "WHERE",
    .help = "Where idempotent mode keeps offsets: mysql (kafka_offset) or kafka (the "
            "consumer group ktally-JOB)" },
  { "table", 0, "batch", KT_OPT_TABLE, AT (job.table), .fallback = "error_log",
    .commands = KT_CMD_RUN, .identity = "job.output", .metavar = "NAME",
    .help = "Table the counts go to (created if absent, in the shape --by and --sum give; "
            "idempotent mode: a view NAME over the per-topic table NAME_topic)" },
  { "table", 0, NULL, KT_OPT_TABLE, AT (job.table), .fallback = "error_log_replay",
    .commands = KT_CMD_REPLAY, .identity = "job.output", .metavar = "NAME",
    .help = "Table the counts are added to (created like error_log if absent)" },
  { "share-table", 0, "batch", KT_OPT_SWITCH, AT (job.share_table), .commands = KT_CMD_RUN,
    .help = "Count into a table even though another job already counts one of these "
            "topics into it (refused otherwise: two jobs over one topic count everything "
            "twice); for jobs over different partitions" },
  { "start", 0, "batch", KT_OPT_WORD, AT (job.start), .words = starts, .fallback = "earliest",
    .commands = KT_CMD_RUN, .metavar = "WHERE",
    .help = "Where the job starts: a partition with no stored offset, when none has one "
            "(one added to the topic later starts at its log start, unless in a --partitions "
            "share or a --group; the partition list is "
            "read again every topic.metadata.refresh.interval.ms, 60 s unless -X says)" },
  { "from", 0, NULL, KT_OPT_CUSTOM, AT (job.replay_from), .commands = KT_CMD_REPLAY,
    .parse = parse_offsets, .clear = clear_array, .text = text_offsets,
    .metavar = "P:OFF[,P:OFF...]", .help = "First offset of each partition to replay (inclusive)" },
  { "until", 0, NULL, KT_OPT_CUSTOM, AT (job.replay_until), .commands = KT_CMD_REPLAY,
    .parse = parse_offsets, .clear = clear_array, .text = text_offsets,
    .metavar = "P:OFF[,P:OFF...]", .help = "End offset of each partition (exclusive)" },

  /* Batches */
  { "interval", 'i', "batch", KT_OPT_SECONDS, AT (run.interval), .fallback = "5s", .min = 0,
    .max = 86400, .commands = KT_CMD_RUN, .flags = KT_OPT_RELOAD, .metavar = "DURATION",
    .help = "From one batch start to the next, e.g. 500ms, 5 (seconds), 2m (0: back "
            "to back)" },
  { "max-per-partition", 'n', "batch", KT_OPT_INT, AT (run.max_per_partition),
    .fallback = "100000", .min = 1, .max = G_MAXINT64, .commands = JOB_CMDS,
    .flags = KT_OPT_RELOAD, .metavar = "N",
    .help = "At most this many offsets per partition per batch" },
  { "max-batch-bytes", 0, "batch", KT_OPT_INT, AT (run.max_batch_bytes), .fallback = "67108864",
    .min = 1024, .max = G_MAXINT64, .commands = KT_CMD_RUN, .flags = KT_OPT_RELOAD,
    .metavar = "BYTES", .help = "Stop reading a batch after this many bytes of values" },
  { "exit-when-idle", 0, "batch", KT_OPT_SWITCH, AT (run.exit_when_idle), .commands = KT_CMD_RUN,
    .help = "Exit 0 after the first batch that finds nothing new (backfills, tests)" },
  { "on-data-loss", 0, "batch", KT_OPT_WORD, AT (run.on_data_loss), .words = losses,
    .fallback = "fail", .commands = KT_CMD_RUN, .metavar = "WHAT",
    .help = "When retention removed offsets not yet read: fail (exit 4) or skip (continue "
            "from the log start, with a warning naming the lost range)" },
  { "startup-timeout", 0, "batch", KT_OPT_SECONDS, AT (run.startup_timeout), .fallback = "20s",
    .min = 0, .max = 3600, .commands = KAFKA_CMDS | MANAGE_CMDS,
    .flags = KT_OPT_OPEN_MIN, .metavar = "DURATION",
    .help = "How long to wait for Kafka and MySQL at start-up" },
  { "audit-keep", 0, "batch", KT_OPT_SECONDS, AT (run.audit_keep), .min = 1, .max = 1e12,
    .fallback_doc = "keep all", .commands = KT_CMD_RUN, .metavar = "DURATION",
    .help = "Keep this long of ktally_batches row by row (e.g. 7d); older rows are "
            "folded into one per partition, or per run between ranges a reset skipped" },

  /* Service */
  { "http", 0, "http", KT_OPT_TEXT, AT (health.http), .fallback_doc = "off", .commands = KT_CMD_RUN,
    .metavar = "ADDR:PORT",
    .help = "Serve /metrics (Prometheus), /livez, /readyz, /healthz and a status page on "
            "this address, e.g. 127.0.0.1:9464" },
  { "health-max-lag", 0, "http", KT_OPT_INT, AT (health.max_lag), .min = 0,
    .max = G_MAXINT64, .fallback_doc = "no bound", .commands = KT_CMD_RUN, .metavar = "N",
    .help = "/readyz: not ready while more offsets than this are not committed" },
  { "health-max-commit-age", 0, "http", KT_OPT_SECONDS, AT (health.max_commit_age),
    .min = 0, .max = 1e9, .fallback_doc = "3 intervals, at least 60s",
    .commands = KT_CMD_RUN, .metavar = "DURATION",
    .help = "/readyz: not ready when no batch has succeeded for this long" },
  { "health-max-stall", 0, "http", KT_OPT_SECONDS, AT (health.max_stall), .fallback = "120s",
    .min = 0, .max = 1e9, .commands = KT_CMD_RUN, .flags = KT_OPT_OPEN_MIN,
    .metavar = "DURATION",
    .help = "/livez: not alive when the batch loop has not moved for this long" },

  /* What one command does */
  { "json", 0, NULL, KT_OPT_SWITCH, AT (json), .commands = KT_CMD_STATUS | MANAGE_CMDS,
    .help = "Print one JSON document instead of a table" },
  { "dry-run", 'n', NULL, KT_OPT_SWITCH, AT (dry_run), .commands = KT_CMD_RESET
    | KT_CMD_FORGET, .help = "Print the plan and change nothing (the default)" },
  { "execute", 0, NULL, KT_OPT_SWITCH, AT (execute), .commands = KT_CMD_RESET | KT_CMD_FORGET,
    .help = "Apply the plan, in one transaction" },

  /* Every command */
  { "config", 'c', NULL, KT_OPT_PATH, AT (config_file), .commands = KT_CMD_ALL,
    .flags = KT_OPT_ENV, .metavar = "FILE",
    .help = "Read options from this INI file first ([kafka] [mysql] [batch] [parse] "
            "[http] [log]; keys spelled like the long options); flags given here win" },
  { "verbose", 'v', "log", KT_OPT_SWITCH, AT (log.verbose), .commands = KT_CMD_ALL,
    .flags = KT_OPT_RELOAD,
    .help = "Log per-partition detail and librdkafka's own messages" },
  { "quiet", 'q', "log", KT_OPT_SWITCH, AT (log.quiet), .commands = KT_CMD_ALL,
    .flags = KT_OPT_RELOAD, .help = "Log only warnings and errors" },
  { "log-format", 0, "log", KT_OPT_CUSTOM, AT (log.format), .words = log_formats,
    .fallback = "text", .commands = KT_CMD_ALL, .parse = parse_log_format,
    .clear = clear_log_format, .text = text_log_format, .metavar = "FORMAT",
    .help = "text (the journal's fields under systemd), json or logfmt: one object or "
            "line of key=value pairs per record, a batch's figures as fields" },
  { "log-to", 0, "log", KT_OPT_WORD, AT (log.to), .words = log_streams, .fallback = "stderr",
    .commands = KT_CMD_RUN | KT_CMD_REPLAY, .metavar = "STREAM",
    .help = "Where the records go: stderr, or stdout (a container's log stream; run and "
            "replay print nothing else there). The error that ends the process goes "
            "there too" },
  { "env-secrets", 0, NULL, KT_OPT_SWITCH, AT (env_secrets), .commands = KT_CMD_ALL,
    .help = "Take secrets from the environment too: a password in KTALLY_DB, a secret "
            "property in KTALLY_KAFKA_PROPERTY. Without it they are refused, since the "
            "environment shows in `podman inspect`, /proc/PID/environ and a pod's spec: "
            "mount a file and give --db-password-file instead" },
  KT_OPTION_END
};

/* ---- Checks ---------------------------------------------------------------- */

void
kt_config_free (KtConfig *config)
{
  if (config == NULL)
    return;
  kt_option_table_clear (kt_option_table, config);
  if (config->job.options != NULL)
    kt_option_table_clear (config->kind_options, config->job.options);
  g_free (config->job.options);
  if (config->own != NULL)
    kt_option_table_clear (config->own_options, config->own);
  g_free (config->own);
  g_free (config->job.topic);
  g_free (config->job.replay_range);
  g_free (config->job.replay_times);
  kt_db_config_clear (&config->db);
  g_strfreev (config->words);
  g_strfreev (config->env_given);
  g_strfreev (config->env_ignored);
  g_free (config);
}

gboolean
kt_is_job_name (const char *name)
{
  glong n = 0;

  if (name == NULL || *name == '\0' || !g_utf8_validate (name, -1, NULL))
    return FALSE;
  for (const char *p = name; *p != '\0'; p = g_utf8_next_char (p), n++)
    if (!kt_is_name_char (g_utf8_get_char (p), "._-"))
      return FALSE;
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

/* Kafka's own rule for topic names. */
static gboolean
check_topic_name (const char *topic, const char *more, GError **error)
{
  if (kt_is_ascii_name (topic, ".-", 249))
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
  if (config->kafka.brokers == NULL || *config->kafka.brokers == '\0')
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE, "--brokers is required");
      return FALSE;
    }
  if (config->job.topics == NULL)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE, "--topic is required");
      return FALSE;
    }
  for (char **t = config->job.topics; *t != NULL; t++)
    if (!check_topic_name (*t, "", error))
      return FALSE;
  if (g_strv_length (config->job.topics) > 1)
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
      for (guint i = 0; config->job.topics[i] != NULL; i++)
        for (guint j = 0; j < i; j++)
          if (g_str_equal (config->job.topics[i], config->job.topics[j]))
            {
              g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "--topic: '%s' given twice",
                           config->job.topics[i]);
              return FALSE;
            }
    }
  if (!check_job_name (config->job.name, error) || !check_properties (config->kafka.properties,
                                                                 error))
    return FALSE;
  config->job.topic = g_strdup (config->job.topics[0]);
  if (config->job.name == NULL && strlen (config->job.topic) > 64)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE,
                           "--job: the topic name is longer than 64 characters, "
                           "so it cannot be the job name: give --job");
      return FALSE;
    }
  if (config->job.name == NULL)
    config->job.name = g_strdup (config->job.topic);
  return TRUE;
}

/* The TLS files of --db (or [mysql] ssl-ca, ssl-cert, ssl-key): files
 * this process can read, found before a connection fails on them. */
static gboolean
check_tls_files (const KtDbConfig *db, GError **error)
{
  const char *const files[][2] = {
    { "ssl-ca", db->ssl_ca }, { "ssl-cert", db->ssl_cert }, { "ssl-key", db->ssl_key },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (files); i++)
    if (files[i][1] != NULL && g_access (files[i][1], R_OK) != 0)
      {
        int saved = errno;

        g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "--db: %s '%s': cannot read it: %s",
                     files[i][0], files[i][1], g_strerror (saved));
        return FALSE;
      }
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
  return check_tls_files (&config->db, error);
}

gboolean
kt_options_table (KtConfig *config, const KtOptionValues *values, GError **error)
{
  (void) error;  /* the row (KT_OPT_TABLE) checked the name */
  config->job.table_explicit = kt_option_given (values, "table");
  return TRUE;
}

/* The kind and how it combines with the mode and the offsets store. */
static gboolean
options_kind (KtConfig *config, GError **error)
{
  const KtJobKind *kind;

  if (config->job.kind == NULL)
    config->job.kind = g_strdup ("count");  /* replay's */
  if (config->job.offsets == KT_OFFSETS_KAFKA && config->job.mode != KT_MODE_IDEMPOTENT)
    {
      /* Kafka's offsets cannot join a MySQL transaction. */
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE,
                           "--offsets kafka needs --mode idempotent");
      return FALSE;
    }
  /* The kinds' table (kind.c) knows the kinds, and which modes each one
   * runs in. */
  kind = kt_kind_lookup (config->job.kind, kt_mode_names[config->job.mode], error);
  return kind != NULL
         && (kind->check_options == NULL || kind->check_options (config->job.options, error));
}

/* How this instance shares the topic: a consumer group or a static list. */
static gboolean
options_share (KtConfig *config, GError **error)
{
  if (config->job.group != NULL && config->job.partitions != NULL)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE,
                           "--group and --partitions exclude each other: a group shares "
                           "the partitions itself");
      return FALSE;
    }
  if (config->job.group != NULL && !kt_is_ascii_name (config->job.group, ".-", 200))
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "--group: '%s' is not a valid group name ([A-Za-z0-9._-])", config->job.group);
      return FALSE;
    }
  if (config->job.group != NULL && config->job.offsets == KT_OFFSETS_KAFKA)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE,
                           "--group needs offsets in MySQL (not --offsets kafka)");
      return FALSE;
    }
  return TRUE;
}

gboolean
kt_options_run (KtConfig *config, GError **error)
{
  return options_kind (config, error) && options_share (config, error);
}

gboolean
kt_options_job (KtConfig *config, gboolean required, const char *hint, GError **error)
{
  if (required && config->job.name == NULL)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "--job is required%s", hint);
      return FALSE;
    }
  return check_job_name (config->job.name, error);
}

gboolean
kt_options_brokers (KtConfig *config, gboolean required, GError **error)
{
  if (required && (config->kafka.brokers == NULL || *config->kafka.brokers == '\0'))
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE, "--brokers is required");
      return FALSE;
    }
  if (config->job.topics != NULL && g_strv_length (config->job.topics) > 1)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "--topic: several topics are for `run` and `status` only, not `%s`",
                   config->command);
      return FALSE;
    }
  if (config->job.topics != NULL && !check_topic_name (config->job.topics[0], "; one topic", error))
    return FALSE;
  if (!check_properties (config->kafka.properties, error))
    return FALSE;
  if (config->kafka.brokers != NULL && *config->kafka.brokers == '\0')
    g_clear_pointer (&config->kafka.brokers, g_free);
  config->job.topic = g_strdup (config->job.topics != NULL ? config->job.topics[0] : NULL);
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

/* ---- What the layers below get -------------------------------------------- */

/* The first row of @tables (taken by any command) whose identity is
 * @scope.@column, with the first such of each column, in table order,
 * appended to @out. */
static void
identity_rows (const KtOption *const *tables, const char *scope, GPtrArray *out)
{
  gsize n = strlen (scope);

  for (const KtOption *const *t = tables; *t != NULL; t++)
    for (const KtOption *row = *t; row->name != NULL; row++)
      {
        gboolean seen = FALSE;

        if (row->identity == NULL || strncmp (row->identity, scope, n) != 0
            || row->identity[n] != '.')
          continue;
        for (guint i = 0; i < out->len && !seen; i++)
          seen = g_str_equal (((const KtOption *) out->pdata[i])->identity, row->identity);
        if (!seen)
          g_ptr_array_add (out, (gpointer) row);
      }
}

/* Whether @row is one of @table's. */
static gboolean
in_table (const KtOption *table, const KtOption *row)
{
  for (const KtOption *r = table; r != NULL && r->name != NULL; r++)
    if (r == row)
      return TRUE;
  return FALSE;
}

void
kt_config_identity (const KtConfig *config, const KtJobKind *kind, KtIdentity *id)
{
  const KtOption *const main_table[] = { kt_option_table, NULL };
  g_autoptr(GPtrArray) job_rows = g_ptr_array_new ();
  g_autoptr(GPtrArray) table_rows = g_ptr_array_new ();
  const char *output = kind->table != NULL ? kind->table : config->job.table;

  kt_identity_init (id, config->job.name, output, (const char *const *) config->job.topics,
                    config->job.replay_from != NULL, config->job.share_table);
  /* ktally_job: the job's own rows; what it writes is the kind's table
   * when it has one. */
  identity_rows (main_table, "job", job_rows);
  for (guint i = 0; i < job_rows->len; i++)
    {
      const KtOption *row = job_rows->pdata[i];
      const char *column = row->identity + strlen ("job.");
      g_autofree char *flag = g_strdup_printf ("--%s", row->name);
      g_autofree char *value = g_str_equal (column, "output") ? g_strdup (output)
                               : kt_option_normal (row, config);

      kt_identity_add (id, FALSE, g_intern_string (column), g_intern_string (flag), value, row,
                       FALSE);
    }
  /* A replay is its range too: under a --job given again with another
   * range it would resume from the first range's offsets. */
  kt_identity_add (id, FALSE, "replay_times", "--from-datetime/--until-datetime",
                   config->job.replay_times, NULL, TRUE);
  kt_identity_add (id, FALSE, "replay_range", config->job.replay_times != NULL
                   ? "the offsets its --from-datetime/--until-datetime resolved to"
                   : "--from/--until", config->job.replay_range,
                   NULL, TRUE);
  /* ktally_table: what its rows are, and every kind's rows that say what
   * they mean; those of another kind than this job's are '' (not its). */
  kt_identity_add (id, TRUE, "holds", "--kind", kind->holds, NULL, FALSE);
  identity_rows (kt_kind_option_tables (), "table", table_rows);
  for (guint i = 0; i < table_rows->len; i++)
    {
      const KtOption *row = table_rows->pdata[i];
      g_autofree char *flag = g_strdup_printf ("--%s", row->name);
      g_autofree char *value = in_table (kind->options, row)
                               ? kt_option_normal (row, config->job.options) : NULL;

      kt_identity_add (id, TRUE, g_intern_string (row->identity + strlen ("table.")),
                       g_intern_string (flag), value, row, FALSE);
    }
}

void
kt_config_chart (const KtConfig *config, const KtJobKind *kind, KtHttpChart *chart,
                 GStrv *dimensions)
{
  const KtOption *const mine[] = { kind->options, NULL };
  const KtOption *by = kind->options != NULL ? kt_option_lookup (mine, G_MAXUINT32, "by") : NULL;
  const KtOption *bucket = kind->options != NULL
                           ? kt_option_lookup (mine, G_MAXUINT32, "bucket") : NULL;
  g_autofree char *by_text = by != NULL ? kt_option_text (by, config->job.options) : NULL;

  *dimensions = by_text != NULL ? g_strsplit (by_text, ",", -1) : NULL;
  *chart = (KtHttpChart) {
    .table = config->job.table,
    .dimensions = (const char *const *) *dimensions,
    .bucket = bucket != NULL ? *(const int *) ((const char *) config->job.options
                                               + bucket->offset) : 1,
  };
}

gboolean
kt_config_run (const KtConfig *config, const KtRunHooks *hooks, volatile int *stop,
               KtRunTotals *totals, GError **error)
{
  const KtJobKind *kind = kt_kind_lookup (config->job.kind, kt_mode_names[config->job.mode],
                                          error);
  g_auto(GStrv) dimensions = NULL;
  KtIdentity identity;
  KtHttpChart chart;
  gboolean ok;

  if (kind == NULL)
    return FALSE;
  kt_config_identity (config, kind, &identity);
  kt_config_chart (config, kind, &chart, &dimensions);
  ok = kt_run (&(KtRunJob) {
                 .spec = &config->job, .identity = &identity, .db = &config->db,
                 .kafka = &config->kafka, .run = &config->run, .health = &config->health,
                 .chart = &chart,
               }, hooks, stop, totals, error);
  kt_identity_clear (&identity);
  return ok;
}

