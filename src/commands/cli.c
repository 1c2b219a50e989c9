/* cli.c - ktally's option table (one row per option: cli.h), with the
 * parsers of the values the generic types do not cover. The checks several
 * commands share are check.c; parsing a command's words is config.c. */
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
/* What a reload's summary calls the rows that make up MySQL's credentials. */
#define CREDENTIALS "the MySQL credentials"

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
    .reloads_as = CREDENTIALS,
    .help = "Read the MySQL password from the first line of this file (mode 0600 or 0400); "
            "read again at every connection. In a config file: [mysql] password-file" },
  { "db-defaults-file", 0, NULL, KT_OPT_PATH, AT (db.defaults_file),
    .commands = DB_CMDS | KT_CMD_CONFIG, .flags = KT_OPT_RELOAD | KT_OPT_ENV, .metavar = "FILE",
    .reloads_as = CREDENTIALS,
    .help = "A MySQL option file whose [client] group gives the password (or more). In a "
            "config file: [mysql] defaults-file" },
  /* [mysql]'s keys that make up --db in a config file (config-file.c). */
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
    .flags = KT_OPT_FILE_ONLY | KT_OPT_RELOAD, .help = "--db-password-file",
    .reloads_as = CREDENTIALS },
  { "defaults-file", 0, "mysql", KT_OPT_PATH, 0, .commands = DB_CMDS | KT_CMD_CONFIG,
    .flags = KT_OPT_FILE_ONLY | KT_OPT_RELOAD, .help = "--db-defaults-file",
    .reloads_as = CREDENTIALS },

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
    .help = "Read options from this INI file first ({sections}; keys spelled like the "
            "long options); flags given here win" },
  { "verbose", 'v', "log", KT_OPT_SWITCH, AT (log.verbose), .commands = KT_CMD_ALL,
    .flags = KT_OPT_RELOAD, .reloads_as = "the log level",
    .help = "Log per-partition detail and librdkafka's own messages" },
  { "quiet", 'q', "log", KT_OPT_SWITCH, AT (log.quiet), .commands = KT_CMD_ALL,
    .flags = KT_OPT_RELOAD, .reloads_as = "the log level",
    .help = "Log only warnings and errors" },
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

void
kt_scrub_argv (int argc, char **argv)
{
  for (int i = 1; i < argc; i++)
    {
      kt_db_uri_scrub (argv[i]);
      kt_kprops_scrub (argv[i]);
    }
}
