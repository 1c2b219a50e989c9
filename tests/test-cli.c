/* test-cli.c - command lines -> KtConfig, without Kafka or MySQL.
 *
 * Covers kt_config_parse (defaults, every option of `run`, `init-db`,
 * usage errors that name the flag and never show a password),
 * kt_db_uri_parse (fields, percent-encoding, sockets, MYSQL_PWD, errors
 * without the password), kt_is_identifier and kt_scrub_argv. */
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>
#include "cli.h"
#include "commands.h"
#include "counts.h"

/* The count kinds' options of a parsed config. */
#define COUNTS(config) ((const KtCountOptions *) (config)->job.options)
#include "describe.h"
#include "error.h"

#define PW "s3cr3tPW"

#define C10 "aaaaaaaaaa"
#define C50 C10 C10 C10 C10 C10
#define C64 C50 C10 "bbbb"
#define C65 C64 "c"
#define CJK1 "\xe4\xb8\xad"  /* one CJK character: 5 bytes of a MariaDB file name */
#define CJK5 CJK1 CJK1 CJK1 CJK1 CJK1
#define CJK10 CJK5 CJK5
#define CJK46 CJK10 CJK10 CJK10 CJK10 CJK5 CJK1
#define CJK49 CJK46 CJK1 CJK1 CJK1
#define CJK50 CJK10 CJK10 CJK10 CJK10 CJK10
#define CJK51 CJK50 CJK1
#define C249 C50 C50 C50 C50 C10 C10 C10 C10 "ddddddddd"
#define C250 C249 "e"

#define KAFKA "--brokers", "b:9092", "--topic", "logs"
#define DB "--db", "mysql://u:p@h:3307/db"

/* kt_config_parse rearranges the argv it is given (GOption drops what it
 * parsed) and does not free what it drops: parse a shallow copy of an
 * owned copy, and free the owned copy. */
static KtConfig *
parse_args (const char *const *args, GError **error)
{
  g_auto(GStrv) owned = g_strdupv ((char **) args);
  int argc = (int) g_strv_length (owned);
  g_autofree char **argv = g_memdup2 (owned, (gsize) (argc + 1) * sizeof (char *));

  return kt_config_parse (args[0], argc, argv, error);
}

static const char *
mode_name (KtMode mode)
{
  switch (mode)
    {
    case KT_MODE_TRANSACTIONAL: return "transactional";
    case KT_MODE_IDEMPOTENT: return "idempotent";
    default: return "?";
    }
}

/* Every field of @config as "key=value", so that a case states what it
 * changes and everything else must be the default. */
static GHashTable *
dump_config (const KtConfig *c)
{
  GHashTable *h = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, g_free);

#define PUT(key, ...) g_hash_table_insert (h, (gpointer) key, g_strdup_printf (__VA_ARGS__))
  PUT ("command", "%s", c->command != NULL ? c->command : "(null)");
  PUT ("brokers", "%s", c->kafka.brokers != NULL ? c->kafka.brokers : "(null)");
  PUT ("topic", "%s", c->job.topic != NULL ? c->job.topic : "(null)");
  PUT ("job", "%s", c->job.name != NULL ? c->job.name : "(null)");
  PUT ("mode", "%s", mode_name (c->job.mode));
  PUT ("interval", "%g", c->run.interval);
  PUT ("max_per_partition", "%" G_GINT64_FORMAT, c->run.max_per_partition);
  PUT ("max_batch_bytes", "%" G_GINT64_FORMAT, c->run.max_batch_bytes);
  PUT ("exit_when_idle", "%d", c->run.exit_when_idle);
  PUT ("start", "%s", c->job.start == KT_START_EARLIEST ? "earliest"
                      : c->job.start == KT_START_LATEST ? "latest" : "?");
  PUT ("on_data_loss", "%s", c->run.on_data_loss == KT_DATA_LOSS_FAIL ? "fail"
                             : c->run.on_data_loss == KT_DATA_LOSS_SKIP ? "skip" : "?");
  PUT ("startup_timeout", "%g", c->run.startup_timeout);
  g_hash_table_insert (h, (gpointer) "kafka_properties",
                       c->kafka.properties != NULL
                         ? g_strjoinv ("|", c->kafka.properties) : g_strdup (""));
  PUT ("verbose", "%d", c->log.verbose);
  PUT ("quiet", "%d", c->log.quiet);
  PUT ("db.user", "%s", c->db.user != NULL ? c->db.user : "(null)");
  PUT ("db.password", "%s", c->db.password != NULL ? c->db.password : "(null)");
  PUT ("db.host", "%s", c->db.host != NULL ? c->db.host : "(null)");
  PUT ("db.port", "%u", c->db.port);
  PUT ("db.database", "%s", c->db.database != NULL ? c->db.database : "(null)");
  PUT ("db.socket", "%s", c->db.socket != NULL ? c->db.socket : "(null)");
  g_hash_table_insert (h, (gpointer) "db.servers", kt_db_describe (&c->db));
#undef PUT
  return h;
}

/* What `run` with KAFKA and DB and nothing else must give. */
static const char *const run_defaults[] = {
  "command=run",
  "brokers=b:9092",
  "topic=logs",
  "job=logs",
  "mode=transactional",
  "interval=5",
  "max_per_partition=100000",
  "max_batch_bytes=67108864",
  "exit_when_idle=0",
  "start=earliest",
  "on_data_loss=fail",
  "startup_timeout=20",
  "kafka_properties=",
  "verbose=0",
  "quiet=0",
  "db.user=u",
  "db.password=p",
  "db.host=h",
  "db.port=3307",
  "db.database=db",
  "db.socket=(null)",
  "db.servers=u@h:3307/db",
  NULL
};

typedef struct
{
  const char *path;
  const char *args[24];
  const char *changed[16];  /* "key=value" that differ from run_defaults */
} RunCase;

static const RunCase run_cases[] = {
  { "/cli/run/defaults", { "run", KAFKA, DB, NULL }, { NULL } },
  { "/cli/run/defaults-any-order", { "run", DB, "--topic", "logs", "--brokers", "b:9092",
                                     NULL }, { NULL } },
  { "/cli/run/short-options", { "run", "-b", "b:9092", "-t", "logs", DB, NULL }, { NULL } },
  { "/cli/run/interval-zero", { "run", KAFKA, DB, "--interval", "0", NULL },
    { "interval=0", NULL } },
  { "/cli/run/interval-fraction", { "run", KAFKA, DB, "--interval=2.5", NULL },
    { "interval=2.5", NULL } },
  { "/cli/run/interval-short", { "run", KAFKA, DB, "-i", "60", NULL },
    { "interval=60", NULL } },
  { "/cli/run/max-per-partition", { "run", KAFKA, DB, "--max-per-partition", "500", NULL },
    { "max_per_partition=500", NULL } },
  { "/cli/run/max-per-partition-one", { "run", KAFKA, DB, "-n", "1", NULL },
    { "max_per_partition=1", NULL } },
  { "/cli/run/max-batch-bytes", { "run", KAFKA, DB, "--max-batch-bytes", "1048576", NULL },
    { "max_batch_bytes=1048576", NULL } },
  { "/cli/run/start-latest", { "run", KAFKA, DB, "--start", "latest", NULL },
    { "start=latest", NULL } },
  { "/cli/run/start-earliest", { "run", KAFKA, DB, "--start=earliest", NULL }, { NULL } },
  { "/cli/run/on-data-loss-skip", { "run", KAFKA, DB, "--on-data-loss", "skip", NULL },
    { "on_data_loss=skip", NULL } },
  { "/cli/run/on-data-loss-fail", { "run", KAFKA, DB, "--on-data-loss", "fail", NULL },
    { NULL } },
  { "/cli/run/mode-idempotent", { "run", KAFKA, DB, "--mode", "idempotent", NULL },
    { "mode=idempotent", NULL } },
  { "/cli/run/mode-transactional", { "run", KAFKA, DB, "-m", "transactional", NULL },
    { NULL } },
  { "/cli/run/job", { "run", KAFKA, DB, "--job", "nightly_backfill-2.0", NULL },
    { "job=nightly_backfill-2.0", NULL } },
  { "/cli/run/job-short", { "run", KAFKA, DB, "-j", "j1", NULL }, { "job=j1", NULL } },
  { "/cli/run/startup-timeout", { "run", KAFKA, DB, "--startup-timeout", "3.5", NULL },
    { "startup_timeout=3.5", NULL } },
  { "/cli/run/exit-when-idle", { "run", KAFKA, DB, "--exit-when-idle", NULL },
    { "exit_when_idle=1", NULL } },
  { "/cli/run/verbose", { "run", KAFKA, DB, "-v", NULL }, { "verbose=1", NULL } },
  { "/cli/run/quiet", { "run", KAFKA, DB, "--quiet", NULL }, { "quiet=1", NULL } },
  { "/cli/run/kafka-properties-in-order",
    { "run", KAFKA, DB, "-X", "client.rack=b", "-X", "security.protocol=SSL",
      "--kafka-property", "sasl.oauthbearer.config=d=e", "-X", "client.rack=z", NULL },
    { "kafka_properties=client.rack=b|security.protocol=SSL|sasl.oauthbearer.config=d=e|"
      "client.rack=z", NULL } },
  /* Every spelling of -X, kcat's attached "-Xkey=value" too. */
  { "/cli/run/kafka-properties-spellings",
    { "run", KAFKA, DB, "-Xclient.rack=a", "--kafka-property=fetch.wait.max.ms=7",
      "-vX", "check.crcs=true", NULL },
    { "kafka_properties=client.rack=a|fetch.wait.max.ms=7|check.crcs=true", "verbose=1",
      NULL } },
  { "/cli/run/topic-dots-dashes", { "run", "--brokers", "b:9092", "--topic", "app.logs-v2_x",
                                    DB, NULL },
    { "topic=app.logs-v2_x", "job=app.logs-v2_x", NULL } },
  { "/cli/run/topic-249-chars", { "run", "--brokers", "b:9092", "--topic", C249,
                                  "--job", "j", DB, NULL },
    { "topic=" C249, "job=j", NULL } },
  { "/cli/run/everything",
    { "run", "-b", "k1:9092,k2:9092", "-t", "t", "-j", "J", "--db",
      "mysql://kt:pw@127.0.0.1/ktally?socket=/run/mysqld/mysqld.sock", "-m", "idempotent",
      "-i", "0", "-n", "7", "--start", "latest", NULL },
    { "brokers=k1:9092,k2:9092", "topic=t", "job=J", "mode=idempotent", "interval=0",
      "max_per_partition=7", "start=latest", "db.user=kt", "db.password=pw",
      "db.host=127.0.0.1", "db.port=0", "db.database=ktally",
      "db.socket=/run/mysqld/mysqld.sock", "db.servers=kt@/run/mysqld/mysqld.sock/ktally",
      NULL } },
};

static void
test_run_case (gconstpointer data)
{
  const RunCase *c = data;
  g_autoptr(GError) error = NULL;
  g_autoptr(KtConfig) config = parse_args (c->args, &error);
  g_autoptr(GHashTable) got = NULL;
  g_autoptr(GHashTable) want = g_hash_table_new (g_str_hash, g_str_equal);
  GHashTableIter iter;
  gpointer key, value;
  g_auto(GStrv) split = NULL;

  g_assert_no_error (error);
  g_assert_nonnull (config);
  got = dump_config (config);

  /* Defaults, then this case's changes over them. */
  split = g_new0 (char *, G_N_ELEMENTS (run_defaults) + G_N_ELEMENTS (c->changed) + 1);
  {
    guint n = 0;
    for (guint i = 0; run_defaults[i] != NULL; i++)
      split[n++] = g_strdup (run_defaults[i]);
    for (guint i = 0; i < G_N_ELEMENTS (c->changed) && c->changed[i] != NULL; i++)
      split[n++] = g_strdup (c->changed[i]);
  }
  for (guint i = 0; split[i] != NULL; i++)
    {
      char *eq = strchr (split[i], '=');
      g_assert_nonnull (eq);
      *eq = '\0';
      g_hash_table_insert (want, split[i], eq + 1);
    }

  g_assert_cmpuint (g_hash_table_size (got), ==, g_hash_table_size (want));
  g_hash_table_iter_init (&iter, want);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      g_test_message ("%s", (const char *) key);
      g_assert_cmpstr (g_hash_table_lookup (got, key), ==, value);
    }
}

static void
test_init_db (void)
{
  static const char *const args[] = { "init-db", "--db", "mysql://u:p@h:3307/db", NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(KtConfig) config = parse_args (args, &error);

  g_assert_no_error (error);
  g_assert_nonnull (config);
  g_assert_cmpstr (config->command, ==, "init-db");
  g_assert_cmpstr (config->db.user, ==, "u");
  g_assert_cmpstr (config->db.password, ==, "p");
  g_assert_cmpstr (config->db.host, ==, "h");
  g_assert_cmpuint (config->db.port, ==, 3307);
  g_assert_cmpstr (config->db.database, ==, "db");
  g_assert_null (config->db.socket);
  g_assert_null (config->kafka.brokers);
  g_assert_null (config->job.topic);
}

typedef struct
{
  const char *path;
  const char *args[24];
  const char *needle;  /* the message must name this (the flag, mostly) */
} BadCase;

static const BadCase bad_cases[] = {
  { "/cli/run/error/interval-negative", { "run", KAFKA, DB, "--interval", "-1", NULL },
    "--interval" },
  { "/cli/run/error/interval-not-a-number", { "run", KAFKA, DB, "--interval", "soon", NULL },
    "--interval" },
  { "/cli/run/error/max-per-partition-zero",
    { "run", KAFKA, DB, "--max-per-partition", "0", NULL }, "--max-per-partition" },
  { "/cli/run/error/max-per-partition-negative",
    { "run", KAFKA, DB, "--max-per-partition=-5", NULL }, "--max-per-partition" },
  { "/cli/run/error/mode-bogus", { "run", KAFKA, DB, "--mode", "bogus", NULL }, "--mode" },
  { "/cli/run/error/start-bogus", { "run", KAFKA, DB, "--start", "middle", NULL },
    "--start" },
  { "/cli/run/error/on-data-loss-bogus", { "run", KAFKA, DB, "--on-data-loss", "ignore",
                                           NULL }, "--on-data-loss" },
  { "/cli/run/error/x-without-equals",
    { "run", KAFKA, DB, "-X", "client.rack=b", "-X", "ab", NULL },
    "-X" },
  { "/cli/run/error/x-without-key", { "run", KAFKA, DB, "-X", "=b", NULL }, "-X" },
  { "/cli/run/error/x-unknown-property", { "run", KAFKA, DB, "-X", "no.such.thing=1", NULL },
    "-X no.such.thing: No such configuration property" },
  { "/cli/run/error/x-bad-value", { "run", KAFKA, DB, "-X", "fetch.wait.max.ms=soon", NULL },
    "-X fetch.wait.max.ms: Invalid value" },
  /* What exactly-once depends on is ktally's (issue 17 item 4, issue 11's
   * hardening): refused in every command and spelling, naming the key. */
  { "/cli/run/error/x-enable-auto-commit",
    { "run", KAFKA, DB, "-X", "enable.auto.commit=true", NULL },
    "-X enable.auto.commit: refused: exactly-once depends on" },
  { "/cli/run/error/x-enable-auto-commit-same-value",
    { "run", KAFKA, DB, "-X", "enable.auto.commit=false", NULL }, "-X enable.auto.commit: refused" },
  { "/cli/run/error/x-enable-auto-offset-store",
    { "run", KAFKA, DB, "--kafka-property=enable.auto.offset.store=true", NULL },
    "-X enable.auto.offset.store: refused" },
  { "/cli/run/error/x-legacy-auto-commit",
    { "run", KAFKA, DB, "-X", "auto.commit.enable=true", NULL }, "-X auto.commit.enable: refused" },
  { "/cli/run/error/x-group-id", { "run", KAFKA, DB, "-Xgroup.id=mine", NULL },
    "-X group.id: refused: give --group" },
  { "/cli/run/error/x-auto-offset-reset",
    { "run", KAFKA, DB, "-X", "auto.offset.reset=earliest", NULL }, "-X auto.offset.reset: refused" },
  { "/cli/run/error/x-topic-auto-offset-reset",
    { "run", KAFKA, DB, "-X", "topic.auto.offset.reset=latest", NULL },
    "-X topic.auto.offset.reset: refused" },
  { "/cli/run/error/x-partition-eof",
    { "run", KAFKA, DB, "-X", "enable.partition.eof=false", NULL }, "-X enable.partition.eof: refused" },
  { "/cli/run/error/x-isolation-level",
    { "run", KAFKA, DB, "-X", "isolation.level=read_uncommitted", NULL },
    "-X isolation.level: refused" },
  { "/cli/run/error/x-bootstrap-servers",
    { "run", KAFKA, DB, "-X", "bootstrap.servers=elsewhere:9092", NULL },
    "-X bootstrap.servers: refused: give --brokers" },
  { "/cli/run/error/x-metadata-broker-list",
    { "run", KAFKA, DB, "-X", "metadata.broker.list=elsewhere:9092", NULL },
    "-X metadata.broker.list: refused" },
  { "/cli/run/error/x-offset-store-method",
    { "run", KAFKA, DB, "-X", "offset.store.method=file", NULL }, "-X offset.store.method: refused" },
  { "/cli/replay/error/x-enable-auto-commit",
    { "replay", KAFKA, DB, "--from", "0:0", "--until", "0:1", "-X", "enable.auto.commit=true",
      NULL }, "-X enable.auto.commit: refused" },
  { "/cli/status/error/x-isolation-level",
    { "status", KAFKA, DB, "-X", "isolation.level=read_uncommitted", NULL },
    "-X isolation.level: refused" },
  { "/cli/run/error/unknown-option", { "run", KAFKA, DB, "--bogus", NULL }, "--bogus" },
  { "/cli/run/error/stray-argument", { "run", KAFKA, DB, "extra", NULL }, "extra" },
  { "/cli/run/error/missing-brokers", { "run", "--topic", "logs", DB, NULL }, "--brokers" },
  { "/cli/run/error/empty-brokers", { "run", "--brokers=", "--topic", "logs", DB, NULL },
    "--brokers" },
  { "/cli/run/error/missing-topic", { "run", "--brokers", "b:9092", DB, NULL }, "--topic" },
  { "/cli/run/error/missing-db", { "run", KAFKA, NULL }, "--db" },
  { "/cli/run/error/bad-db", { "run", KAFKA, "--db", "mysql://u@h/d-b", NULL }, "--db" },
  { "/cli/run/error/topic-empty", { "run", "--brokers", "b:9092", "--topic", "", DB, NULL },
    "--topic" },
  { "/cli/run/error/topic-space", { "run", "--brokers", "b:9092", "--topic", "my logs", DB,
                                    NULL }, "--topic" },
  { "/cli/run/error/topic-slash", { "run", "--brokers", "b:9092", "--topic", "a/b", DB,
                                    NULL }, "--topic" },
  { "/cli/run/error/topic-250-chars", { "run", "--brokers", "b:9092", "--topic", C250,
                                        "--job", "j", DB, NULL }, "--topic" },
  { "/cli/run/error/job-quote", { "run", KAFKA, DB, "--job", "it's", NULL }, "--job" },
  { "/cli/run/error/job-backquote", { "run", KAFKA, DB, "--job", "a`b", NULL }, "--job" },
  { "/cli/init-db/error/missing-db", { "init-db", NULL }, "--db" },
  { "/cli/init-db/error/bad-db", { "init-db", "--db", "postgres://u@h/db", NULL }, "--db" },
  { "/cli/init-db/error/brokers-unknown", { "init-db", "--brokers", "b:9092", DB, NULL },
    "--brokers" },
  { "/cli/error/unknown-command", { "bogus", KAFKA, DB, NULL }, "bogus" },
  /* --by, --sum, --max-keys, run --table (#14). */
  { "/cli/run/error/by-log-time", { "run", KAFKA, DB, "--by", "log_time", NULL },
    "--by: 'log_time' is a column ktally writes itself" },
  { "/cli/run/error/by-log-count-case", { "run", KAFKA, DB, "--by", "LOG_COUNT", NULL },
    "--by: 'LOG_COUNT' is a column ktally writes itself" },
  { "/cli/run/error/by-partition", { "run", KAFKA, DB, "--by", "partition", NULL },
    "--by: 'partition' is a column" },
  { "/cli/run/error/by-time", { "run", KAFKA, DB, "--by", "time", NULL },
    "--by: 'time': the time is the bucket" },
  { "/cli/run/error/by-sum-prefix", { "run", KAFKA, DB, "--by", "sum_bytes", NULL },
    "--by: 'sum_bytes': names starting with sum_" },
  { "/cli/run/error/by-twice-in-two-cases", { "run", KAFKA, DB, "--by", "svc,SVC", NULL },
    "--by: 'SVC' given twice" },
  { "/cli/run/error/by-empty", { "run", KAFKA, DB, "--by", "svc,,host", NULL },
    "--by: an empty item in the list" },
  { "/cli/run/error/by-not-a-name", { "run", KAFKA, DB, "--by", "my-svc", NULL },
    "--by: 'my-svc' is not a field name" },
  { "/cli/run/error/by-digit-first", { "run", KAFKA, DB, "--by", "1svc", NULL },
    "--by: '1svc' is not a field name" },
  { "/cli/run/error/by-33-characters", { "run", KAFKA, DB, "--by",
                                          "abcdefghijklmnopqrstuvwxyz0123456", NULL },
    "is not a field name" },
  { "/cli/run/error/by-nine", { "run", KAFKA, DB, "--by", "a,b,c,d,e,f,g,h,i", NULL },
    "--by: at most 8 fields, got 9" },
  { "/cli/run/error/sum-level", { "run", KAFKA, DB, "--sum", "level", NULL },
    "--sum: 'level' is not a number" },
  { "/cli/run/error/sum-twice", { "run", KAFKA, DB, "--sum", "b,b", NULL },
    "--sum: 'b' given twice" },
  { "/cli/run/error/max-keys-without-by", { "run", KAFKA, DB, "--max-keys", "5", NULL },
    "--max-keys needs --by" },
  { "/cli/run/error/max-keys-zero", { "run", KAFKA, DB, "--by", "level", "--max-keys", "0",
                                       NULL }, "--max-keys: 0 is not between 1 and" },
  { "/cli/run/error/max-keys-huge", { "run", KAFKA, DB, "--by", "level", "--max-keys",
                                       "10000001", NULL }, "--max-keys: 10000001" },
  /* -1 is a number like any other: once "not given" for these three, it
   * was accepted as their default where 0 and -2 were refused. */
  { "/cli/run/error/max-keys-minus-one", { "run", KAFKA, DB, "--by", "level", "--max-keys",
                                            "-1", NULL }, "--max-keys: -1 is not between 1" },
  { "/cli/run/error/max-keys-minus-one-without-by", { "run", KAFKA, DB, "--max-keys", "-1",
                                                       NULL }, "--max-keys needs --by" },
  { "/cli/run/error/workers-minus-one", { "run", KAFKA, DB, "--kind", "ledger", "--workers",
                                           "-1", NULL }, "--workers: -1 is not between 1 and 64" },
  { "/cli/run/error/health-max-lag-minus-one", { "run", KAFKA, DB, "--health-max-lag", "-1",
                                                  NULL }, "--health-max-lag: -1 is not between 0" },
  { "/cli/run/error/workers-count", { "run", KAFKA, DB, "--workers", "2", NULL },
    "--workers: not an option of --kind count" },
  { "/cli/run/error/by-ledger", { "run", KAFKA, DB, "--kind", "ledger", "--by", "level", NULL },
    "--by: not an option of --kind ledger" },
  { "/cli/run/error/table-not-identifier", { "run", KAFKA, DB, "--table", "a-b", NULL },
    "--table: 'a-b' is not a table name (1 to 64 characters" },
  /* One rule for every table a job names, derived ones included: MariaDB's
   * file names take 250 bytes, a CJK character 5 of them (51 were taken,
   * and the run failed at CREATE TABLE with exit 3). */
  { "/cli/run/error/table-file-bytes", { "run", KAFKA, DB, "--table", CJK51, NULL },
    "--table: '" CJK51 "' is not a table name" },
  { "/cli/run/error/dead-letters-not-identifier",
    { "run", KAFKA, DB, "--dead-letters", "d-l", NULL },
    "--dead-letters: 'd-l' is not a table name" },
  { "/cli/run/error/dead-letters-file-bytes",
    { "run", KAFKA, DB, "--dead-letters", CJK51, NULL },
    "--dead-letters: '" CJK51 "' is not a table name" },
  { "/cli/run/error/table-topic-file-bytes",
    { "run", KAFKA, DB, "--mode", "idempotent", "--table", CJK49, NULL },
    "--table: '" CJK49 "' is too long here, where ktally also writes " CJK49 "_topic" },
  { "/cli/replay/error/table-file-bytes",
    { "replay", KAFKA, DB, "--from", "0:0", "--until", "0:1", "--table", CJK51, NULL },
    "--table: '" CJK51 "' is not a table name" },
  { "/cli/run/error/table-too-long-idempotent",
    { "run", KAFKA, DB, "--mode", "idempotent", "--table", C64, NULL },
    "is too long here, where ktally also writes " C64 "_topic" },
  { "/cli/replay/error/by-log-time",
    { "replay", KAFKA, DB, "--from", "0:0", "--until", "0:1", "--by", "log_time", NULL },
    "--by: 'log_time'" },
};

/* --by, --sum and --max-keys reach the config as given; --table too. */
static void
test_fields (void)
{
  /* The fields are groups of the pattern: the parser is checked with the
   * options (config --check refuses what run refuses). */
  static const char *const args[] = { "run", KAFKA, DB, "--pattern",
                                      "^(?<time>\\S+ \\S+) (?<level>\\S+) (?<service>\\S+) "
                                      "(?<bytes>\\d+) (?<latency_ms>\\d+)$", "--by",
                                      "service,level", "--sum", "bytes,latency_ms",
                                      "--max-keys", "3", "--table", "by_svc", NULL };
  static const char *const plain[] = { "run", KAFKA, DB, NULL };
  static const char *const idem[] = { "run", KAFKA, DB, "--mode", "idempotent", "--table",
                                      C50 "12345678", "--pattern",
                                      "^(?<time>\\S+ \\S+) (?<level>\\S+) (?<Select>\\S+)",
                                      "--by", "Select", NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(KtConfig) c = parse_args (args, &error);
  g_autoptr(KtConfig) d = NULL, e = NULL;

  g_assert_no_error (error);
  g_assert_cmpuint (g_strv_length (COUNTS (c)->dimensions), ==, 2);
  g_assert_cmpstr (COUNTS (c)->dimensions[0], ==, "service");
  g_assert_cmpstr (COUNTS (c)->dimensions[1], ==, "level");
  g_assert_cmpstr (COUNTS (c)->sums[1], ==, "latency_ms");
  g_assert_cmpuint (COUNTS (c)->max_keys, ==, 3);
  g_assert_cmpstr (c->job.table, ==, "by_svc");
  d = parse_args (plain, &error);
  g_assert_no_error (error);
  g_assert_null (COUNTS (d)->dimensions);
  g_assert_null (COUNTS (d)->sums);
  g_assert_cmpuint (COUNTS (d)->max_keys, ==, 10000);
  g_assert_cmpstr (d->job.table, ==, "error_log");
  /* 58 characters leave room for _topic; a field named like an SQL
   * keyword is a column like any other (always quoted). */
  e = parse_args (idem, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (COUNTS (e)->dimensions[0], ==, "Select");
}

static void
test_bad_case (gconstpointer data)
{
  const BadCase *c = data;
  g_autoptr(GError) error = NULL;
  g_autoptr(KtConfig) config = parse_args (c->args, &error);

  g_assert_null (config);
  g_assert_error (error, KT_ERROR, KT_ERROR_USAGE);
  g_test_message ("message: %s", error->message);
  g_assert_nonnull (strstr (error->message, c->needle));
  /* One line. */
  g_assert_null (strchr (error->message, '\n'));
}

/* cli.h: "the message never contains a password", whatever was wrong. */
typedef struct
{
  const char *path;
  const char *args[24];
} SecretCase;

static const SecretCase secret_cases[] = {
  { "/cli/run/error-hides-password/bad-database",
    { "run", KAFKA, "--db", "mysql://u:" PW "@h/d-b", NULL } },
  { "/cli/run/error-hides-password/bad-scheme",
    { "run", KAFKA, "--db=postgres://u:" PW "@h/db", NULL } },
  { "/cli/run/error-hides-password/missing-brokers",
    { "run", "--topic", "logs", "--db", "mysql://u:" PW "@h/db", NULL } },
  { "/cli/run/error-hides-password/bad-option-value",
    { "run", KAFKA, "--db", "mysql://u:" PW "@h/db", "--mode", "x", NULL } },
  { "/cli/run/error-hides-password/x-without-equals",
    { "run", KAFKA, "--db", "mysql://u:" PW "@h/db", "-X", PW, NULL } },
  /* A Kafka secret quoted back by GOption, or refused by librdkafka. */
  { "/cli/run/error-hides-password/x-misspelt-cluster",
    { "run", KAFKA, DB, "-vXsasl.password=" PW, "--topic", "t", NULL } },
  { "/cli/run/error-hides-password/x-misspelt-long",
    { "run", KAFKA, DB, "--kafka-propertysasl.password=" PW, NULL } },
  { "/cli/run/error-hides-password/x-stray-secret",
    { "run", KAFKA, DB, "ssl.key.password=" PW, NULL } },
  { "/cli/run/error-hides-password/x-secret-bad-value",
    { "run", KAFKA, DB, "-X", "ssl.key.password", "-X", "sasl.password=" PW, "-X", "a", NULL } },
  { "/cli/run/error-hides-password/stray-uri",
    { "run", KAFKA, DB, "mysql://u:" PW "@h/db", NULL } },
  { "/cli/run/error-hides-password/misspelt-db-option",
    { "run", KAFKA, "--dbx=mysql://u:" PW "@h/db", DB, NULL } },
  { "/cli/init-db/error-hides-password/bad-database",
    { "init-db", "--db", "mysql://u:" PW "@h/a;drop", NULL } },
  /* An unencoded '@' in the password: GUri would make the rest of it the
   * host, which later messages name (issue 16). */
  { "/cli/run/error-hides-password/unencoded-at",
    { "run", KAFKA, "--db", "mysql://u:" PW "@" PW "@h/db", NULL } },
  { "/cli/run/error-hides-password/quoted-duration",
    { "run", KAFKA, DB, "--interval", "mysql://u:" PW "@h/db", NULL } },
};

static void
test_secret_case (gconstpointer data)
{
  const SecretCase *c = data;
  g_autoptr(GError) error = NULL;
  g_autoptr(KtConfig) config = parse_args (c->args, &error);

  g_assert_null (config);
  g_assert_error (error, KT_ERROR, KT_ERROR_USAGE);
  g_test_message ("message: %s", error->message);
  g_assert_null (strstr (error->message, PW));
}

/* ---- kt_db_uri_parse --------------------------------------------------- */

typedef struct
{
  const char *path;
  const char *uri;
  const char *user, *password, *host;
  guint       port;
  const char *database, *socket;
} UriCase;

static const UriCase uri_cases[] = {
  { "/cli/uri/full", "mysql://u:p@h:3307/db", "u", "p", "h", 3307, "db", NULL },
  { "/cli/uri/no-port", "mysql://u:p@h/db", "u", "p", "h", 0, "db", NULL },
  { "/cli/uri/no-password", "mysql://u@h:3306/db", "u", NULL, "h", 3306, "db", NULL },
  { "/cli/uri/percent-encoded-password", "mysql://u:p%40ss@h/db", "u", "p@ss", "h", 0,
    "db", NULL },
  { "/cli/uri/percent-encoded-specials", "mysql://u:a%3Ab%2Fc%3F%23%25@h/db", "u",
    "a:b/c?#%", "h", 0, "db", NULL },
  { "/cli/uri/ip-address", "mysql://kt:pw@127.0.0.1:3306/ktally_1", "kt", "pw",
    "127.0.0.1", 3306, "ktally_1", NULL },
  { "/cli/uri/socket-with-host", "mysql://u:p@h/db?socket=/tmp/x.sock", "u", "p", "h", 0,
    "db", "/tmp/x.sock" },
  { "/cli/uri/socket-without-host", "mysql://root@/db?socket=/tmp/s", "root", NULL, NULL,
    0, "db", "/tmp/s" },
  { "/cli/uri/database-64-chars", "mysql://u:p@h/" C64, "u", "p", "h", 0, C64, NULL },
  { "/cli/uri/database-digits-underscore", "mysql://u:p@h/_01_Ab", "u", "p", "h", 0,
    "_01_Ab", NULL },
};

static void
test_uri_case (gconstpointer data)
{
  const UriCase *c = data;
  g_autoptr(GError) error = NULL;
  KtDbConfig db;

  g_unsetenv ("MYSQL_PWD");
  g_assert_true (kt_db_uri_parse (c->uri, &db, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (db.user, ==, c->user);
  g_assert_cmpstr (db.password, ==, c->password);
  g_assert_cmpstr (db.host, ==, c->host);
  g_assert_cmpuint (db.port, ==, c->port);
  g_assert_cmpstr (db.database, ==, c->database);
  g_assert_cmpstr (db.socket, ==, c->socket);
  kt_db_config_clear (&db);
  g_assert_null (db.user);
  g_assert_null (db.password);
  g_assert_null (db.database);
}

typedef struct
{
  const char *path;
  const char *uri;
} BadUriCase;

/* Every one carries the password, which must not show in the message. */
static const BadUriCase bad_uri_cases[] = {
  { "/cli/uri/error/wrong-scheme", "postgres://u:" PW "@h/db" },
  { "/cli/uri/error/no-scheme", "u:" PW "@h/db" },
  { "/cli/uri/error/no-user", "mysql://:" PW "@h/db" },
  { "/cli/uri/error/no-database", "mysql://u:" PW "@h/" },
  { "/cli/uri/error/no-path", "mysql://u:" PW "@h" },
  { "/cli/uri/error/database-dash", "mysql://u:" PW "@h/d-b" },
  { "/cli/uri/error/database-semicolon", "mysql://u:" PW "@h/a;drop" },
  { "/cli/uri/error/database-65-chars", "mysql://u:" PW "@h/" C65 },
  { "/cli/uri/error/database-subpath", "mysql://u:" PW "@h/db/x" },
  { "/cli/uri/error/unknown-parameter", "mysql://u:" PW "@h/db?ssl=1" },
  { "/cli/uri/error/relative-socket", "mysql://u:" PW "@h/db?socket=tmp/x.sock" },
  { "/cli/uri/error/relative-socket-no-host", "mysql://u:" PW "@/db?socket=tmp/x.sock" },
  { "/cli/uri/error/no-host", "mysql://u:" PW "@/db" },
  { "/cli/uri/error/bad-port", "mysql://u:" PW "@h:port/db" },
  /* A '/' the user forgot to encode ends the authority early: what GLib
   * then takes for the database is the rest of the password. */
  { "/cli/uri/error/password-with-slash", "mysql://u:99/" PW "@h/db" },
};

static void
test_bad_uri_case (gconstpointer data)
{
  const BadUriCase *c = data;
  g_autoptr(GError) error = NULL;
  KtDbConfig db;

  g_unsetenv ("MYSQL_PWD");
  g_assert_false (kt_db_uri_parse (c->uri, &db, &error));
  g_assert_error (error, KT_ERROR, KT_ERROR_USAGE);
  g_test_message ("message: %s", error->message);
  g_assert_true (g_str_has_prefix (error->message, "--db"));
  g_assert_null (strstr (error->message, PW));
  kt_db_config_clear (&db);
}

static void
test_uri_mysql_pwd (void)
{
  g_autoptr(GError) error = NULL;
  KtDbConfig db;

  g_assert_true (g_setenv ("MYSQL_PWD", "from-env", TRUE));

  g_assert_true (kt_db_uri_parse ("mysql://u@h/db", &db, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (db.password, ==, "from-env");
  kt_db_config_clear (&db);

  /* The URI's password wins. */
  g_assert_true (kt_db_uri_parse ("mysql://u:from-uri@h/db", &db, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (db.password, ==, "from-uri");
  kt_db_config_clear (&db);

  /* Also through the command line. */
  {
    static const char *const args[] = { "init-db", "--db", "mysql://u@h/db", NULL };
    g_autoptr(KtConfig) config = parse_args (args, &error);

    g_assert_no_error (error);
    g_assert_nonnull (config);
    g_assert_cmpstr (config->db.password, ==, "from-env");
  }

  g_unsetenv ("MYSQL_PWD");
  g_assert_true (kt_db_uri_parse ("mysql://u@h/db", &db, &error));
  g_assert_no_error (error);
  g_assert_null (db.password);
  kt_db_config_clear (&db);
}

/* ---- kt_is_identifier -------------------------------------------------- */

static void
test_identifier (void)
{
  static const struct
  {
    const char *name;
    gboolean    ok;
  } cases[] = {
    { "a", TRUE },
    { "Z", TRUE },
    { "_", TRUE },
    { "0", TRUE },
    { "error_log", TRUE },
    { "ktally_1", TRUE },
    { "ABC_def_123", TRUE },
    { C64, TRUE },
    { "", FALSE },
    { C65, FALSE },
    { "d-b", FALSE },
    { "a.b", FALSE },
    { "a b", FALSE },
    { " a", FALSE },
    { "a ", FALSE },
    { "a`b", FALSE },
    { "`", FALSE },
    { "a'b", FALSE },
    { "a\"b", FALSE },
    { "a;drop", FALSE },
    { "a\tb", FALSE },
    { "a\nb", FALSE },
    { "a/b", FALSE },
    { "a$b", FALSE },
    /* Names may be UTF-8: letters, digits and marks of the BMP. */
    { "caf\xc3\xa9", TRUE },         /* é */
    { "\xc3\xa9", TRUE },
    { "\xe6\x97\xa5\xe5\xbf\x97", TRUE },  /* 日志 */
    { "\xf0\x9f\x98\x80", FALSE },   /* an emoji: beyond U+FFFF */
    { "a\xc2\xa0" "b", FALSE },     /* a no-break space */
    { "a\xe2\x80\x8b", FALSE },      /* zero-width space */
    { "\xff", FALSE },
    /* MariaDB's file names: 250 bytes, 5 for each character beyond ASCII. */
    { CJK50, TRUE },
    { CJK51, FALSE },
    { CJK46 "aaaaaaaaaaaaaaaaaa", TRUE },      /* 230 + 18 bytes */
    { CJK46 "\xe4\xb8\xad" "aaaaaaaaaaaaaaaaa", FALSE },  /* 235 + 17 */
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      /* Escaped: a TAP line must be valid UTF-8 ("\xff" is a case). */
      g_autofree char *shown = g_strescape (cases[i].name, NULL);

      g_test_message ("'%s'", shown);
      g_assert_cmpint (kt_is_identifier (cases[i].name), ==, cases[i].ok);
    }
}

/* ---- --db-password-file ------------------------------------------------ */

/* Like ssh with a key: a password file group or others may read or write
 * is refused, and so is one without a password (issue 11 item 13), from
 * the flag and from a config file's password-file. */
static void
test_password_file (void)
{
  static const struct
  {
    const char *contents;
    int         mode;
    const char *password;  /* or NULL: refused, the message says this */
    const char *needle;
  } cases[] = {
    { PW "\n", 0600, PW, NULL },
    { PW, 0400, PW, NULL },
    { PW "\r\nsecond line\n", 0600, PW, NULL },
    { PW "\n", 0644, NULL, "is readable or writable by group or others (mode 0644)" },
    { PW "\n", 0640, NULL, "(mode 0640)" },  /* taken when root owns it: below */
    { PW "\n", 0660, NULL, "(mode 0660)" },
    { PW "\n", 0440, NULL, "(mode 0440)" },
    { PW "\n", 0604, NULL, "(mode 0604)" },
    { PW "\n", 0620, NULL, "(mode 0620)" },
    { PW "\n", 0602, NULL, "(mode 0602)" },
    { "", 0600, NULL, "is empty: no password" },
    { "\n" PW "\n", 0600, NULL, "is empty: no password" },
  };
  g_autofree char *dir = g_dir_make_tmp ("kt-test-cli-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "pw", NULL);
  g_autofree char *conf = g_build_filename (dir, "ktally.conf", NULL);

  g_assert_nonnull (dir);
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      const char *args[] = { "run", KAFKA, "--db", "mysql://u@h/db", "--db-password-file",
                             path, NULL };
      const char *by_file[] = { "run", KAFKA, "--db", "mysql://u@h/db", "--config", conf, NULL };
      g_autofree char *ini = g_strdup_printf ("[mysql]\npassword-file = %s\n", path);

      g_assert_true (g_file_set_contents (path, cases[i].contents, -1, NULL));
      g_assert_cmpint (g_chmod (path, cases[i].mode), ==, 0);
      /* Not root's (root's may give its group read access: below). */
      if (geteuid () == 0)
        g_assert_cmpint (chown (path, 65534, 65534), ==, 0);
      g_assert_true (g_file_set_contents (conf, ini, -1, NULL));
      for (int how = 0; how < 2; how++)
        {
          g_autoptr(GError) error = NULL;
          g_autoptr(KtConfig) config = parse_args (how == 0 ? args : by_file, &error);

          g_test_message ("case %" G_GSIZE_FORMAT ", %s", i, how == 0 ? "flag" : "file");
          if (cases[i].password != NULL)
            {
              g_assert_no_error (error);
              g_assert_cmpstr (config->db.password, ==, cases[i].password);
              continue;
            }
          g_assert_null (config);
          g_assert_error (error, KT_ERROR, KT_ERROR_USAGE);
          g_test_message ("message: %s", error->message);
          /* From the file, its line comes first. */
          if (how == 0)
            g_assert_true (g_str_has_prefix (error->message, "--db-password-file: "));
          else
            {
              g_autofree char *where = g_strdup_printf ("--config: %s:2: --db-password-file: ",
                                                        conf);
              g_assert_true (g_str_has_prefix (error->message, where));
            }
          g_assert_nonnull (strstr (error->message, cases[i].needle));
          g_assert_null (strstr (error->message, PW));
        }
    }
  /* Root's file, its group given read access (a Kubernetes Secret mounted
   * for the pod's fsGroup: root:GROUP 0440): taken, as PostgreSQL takes a
   * key file; group write never. Only root can make one. */
  if (geteuid () == 0)
    {
      static const int modes[] = { 0440, 0640, 0460, 0444 };

      for (gsize i = 0; i < G_N_ELEMENTS (modes); i++)
        {
          const char *args[] = { "run", KAFKA, "--db", "mysql://u@h/db", "--db-password-file",
                                 path, NULL };
          g_autoptr(GError) error = NULL;
          g_autoptr(KtConfig) config = NULL;

          g_assert_true (g_file_set_contents (path, PW "\n", -1, NULL));
          g_assert_cmpint (chown (path, 0, 65534), ==, 0);
          g_assert_cmpint (g_chmod (path, modes[i]), ==, 0);
          config = parse_args (args, &error);
          g_test_message ("root:65534 %04o", modes[i]);
          if (modes[i] == 0440 || modes[i] == 0640)
            {
              g_assert_no_error (error);
              g_assert_cmpstr (config->db.password, ==, PW);
            }
          else
            g_assert_error (error, KT_ERROR, KT_ERROR_USAGE);
        }
    }
  {
    g_autofree char *missing = g_build_filename (dir, "nope", NULL);
    const char *args[] = { "run", KAFKA, "--db", "mysql://u@h/db", "--db-password-file",
                           missing, NULL };
    g_autoptr(GError) error = NULL;
    g_autoptr(KtConfig) config = parse_args (args, &error);
    g_assert_error (error, KT_ERROR, KT_ERROR_USAGE);
    g_assert_nonnull (strstr (error->message, "No such file"));
  }
  g_remove (path);
  g_remove (conf);
  g_rmdir (dir);
}

/* ---- kt_scrub_argv ----------------------------------------------------- */

static void
test_scrub (void)
{
  static const struct
  {
    const char *in[10];
    const char *out[10];
  } cases[] = {
    { { "ktally", "run", "--db=mysql://u:secret@h/d", "mysql://u:secret@h/d", "--topic",
        "logs", NULL },
      { "ktally", "run", "--db=mysql://u:xxxxxx@h/d", "mysql://u:xxxxxx@h/d", "--topic",
        "logs", NULL } },
    { { "ktally", "init-db", "--db", "mysql://kt:p%40ss@h:3307/db", NULL },
      { "ktally", "init-db", "--db", "mysql://kt:xxxxxx@h:3307/db", NULL } },
    /* Kafka secrets (issue 11 item 13), in every spelling of -X. */
    { { "ktally", "run", "--db", "mysql://u@h:3306/d", "-X", "sasl.password=secret", NULL },
      { "ktally", "run", "--db", "mysql://u@h:3306/d", "-X", "sasl.password=xxxxxx", NULL } },
    { { "ktally", "run", "-Xssl.key.password=secret", "-vXsasl.password=se=c ret", NULL },
      { "ktally", "run", "-Xssl.key.password=xxxxxx", "-vXsasl.password=xxxxxxxx", NULL } },
    { { "ktally", "run", "--kafka-property=sasl.oauthbearer.config=principal=x", "-X",
        "ssl.keystore.password=pw", NULL },
      { "ktally", "run", "--kafka-property=sasl.oauthbearer.config=xxxxxxxxxxx", "-X",
        "ssl.keystore.password=xx", NULL } },
    { { "ktally", "run", "--kafka-property", "SSL.KEY.PEM=-----BEGIN", "-X",
        "sasl.oauthbearer.client.secret=s", "-X", "security.protocol=SSL", NULL },
      { "ktally", "run", "--kafka-property", "SSL.KEY.PEM=xxxxxxxxxx", "-X",
        "sasl.oauthbearer.client.secret=x", "-X", "security.protocol=SSL", NULL } },
    { { "ktally", "--db=mysql://u@h/d", "mysql://root@/db?socket=/tmp/a:b", NULL },
      { "ktally", "--db=mysql://u@h/d", "mysql://root@/db?socket=/tmp/a:b", NULL } },
    { { "ktally", "run", "-b", "h:9092", "--topic", "mysql", NULL },
      { "ktally", "run", "-b", "h:9092", "--topic", "mysql", NULL } },
    /* GUri finds the password exactly in a well-formed URI; one that is
     * not is blanked from ':' to the last '@'. */
    { { "ktally", "--db", "mysql://u:pw@h/d?socket=/tmp/a@b", "mysql://u:p@s s@h/d", NULL },
      { "ktally", "--db", "mysql://u:xx@h/d?socket=/tmp/a@b", "mysql://u:xxxxx@h/d", NULL } },
    { { "ktally", "--db=mysql://u:pa/ss@h/d", NULL },
      { "ktally", "--db=mysql://u:xxxxx@h/d", NULL } },
    /* Well-formed for GUri with no password at all ("user:" is a host and
     * an empty port), yet an '@' follows: untrusted, blanked (found by
     * fuzz-options in a word that is not even a --db). */
    { { "ktally", "run", "mymysql://user:/x:pa/bpas@ss1", NULL },
      { "ktally", "run", "mymysql://user:xxxxxxxxxx@ss1", NULL } },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_auto(GStrv) argv = g_strdupv ((char **) cases[i].in);
      int argc = (int) g_strv_length (argv);

      kt_scrub_argv (argc, argv);
      for (int k = 0; k < argc; k++)
        g_assert_cmpstr (argv[k], ==, cases[i].out[k]);
      g_assert_null (argv[argc]);
    }
}

/* A replay's job: from the range as parsed and the whole table name, in
 * its own namespace whatever --job says. */
static char *
replay_job_of (const char *topic, const char *from, const char *until, const char *table,
               const char *job)
{
  const char *args[16] = { "replay", "--brokers", "b:9092", "--topic", topic, DB,
                           "--from", from, "--until", until };
  int n = 11;  /* the elements above */
  g_autoptr(GError) error = NULL;
  g_autoptr(KtConfig) config = NULL;

  if (table != NULL)
    {
      args[n++] = "--table";
      args[n++] = table;
    }
  if (job != NULL)
    {
      args[n++] = "--job";
      args[n++] = job;
    }
  config = parse_args (args, &error);
  g_assert_no_error (error);
  return g_strdup (config->job.name);
}

static char *
replay_job (const char *from, const char *until, const char *table, const char *job)
{
  return replay_job_of ("logs", from, until, table, job);
}

static void
test_replay_job (void)
{
  g_autofree char *a = replay_job ("0:0,1:0", "0:10,1:20", NULL, NULL);
  g_autofree char *b = replay_job ("1:0,0:0", "1:20,0:10", NULL, NULL);
  g_autofree char *c = replay_job ("0:00,1:0", "0:010,1:20", NULL, NULL);
  g_autofree char *d = replay_job ("0:0,1:0", "0:10,1:21", NULL, NULL);
  g_autofree char *e = replay_job ("0:0", "0:10", "t" C50 "_a", NULL);
  g_autofree char *f = replay_job ("0:0", "0:10", "t" C50 "_b", NULL);
  g_autofree char *g = replay_job ("0:0", "0:10", NULL, "logs");
  /* The same range of another topic, or of one named in another case
   * (found by the history checker: the second replay was refused as a
   * change of the first one's topic). */
  g_autofree char *h = replay_job_of ("other", "0:0,1:0", "0:10,1:20", NULL, NULL);
  g_autofree char *i = replay_job_of ("LOGS", "0:0,1:0", "0:10,1:20", NULL, NULL);
  const char *live[] = { "run", KAFKA, DB, "--job", "replay.x", NULL };
  const char *topic[] = { "run", "--brokers", "b:9092", "--topic", "replay.t", DB, NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(KtConfig) refused = NULL;

  g_assert_true (g_str_has_prefix (a, "replay.error_log_replay."));
  g_assert_cmpstr (a, ==, b);
  g_assert_cmpstr (a, ==, c);
  g_assert_cmpstr (a, !=, d);
  g_assert_cmpstr (e, !=, f);
  g_assert_cmpuint (strlen (e), <=, 64);
  g_assert_cmpstr (g, ==, "replay.logs");
  g_assert_cmpstr (a, !=, h);
  g_assert_cmpstr (a, !=, i);
  g_assert_cmpstr (h, !=, i);

  refused = parse_args (live, &error);
  g_assert_null (refused);
  g_assert_error (error, KT_ERROR, KT_ERROR_USAGE);
  g_clear_error (&error);
  refused = parse_args (topic, &error);
  g_assert_null (refused);
  g_assert_error (error, KT_ERROR, KT_ERROR_USAGE);
  g_assert_nonnull (strstr (error->message, "give --job"));
}

/* ---- durations: one parser for --interval, --startup-timeout, --audit-keep */

static void
test_duration (void)
{
  static const struct
  {
    const char *text;
    double      seconds;  /* < 0: refused */
  } cases[] = {
    { "0", 0 }, { "5", 5 }, { "2.5", 2.5 }, { "500ms", 0.5 }, { "5s", 5 }, { "2m", 120 },
    { "12h", 43200 }, { "7d", 604800 }, { "0.25s", 0.25 }, { "1.5m", 90 }, { "007", 7 },
    /* "7ds" read as 7 days before (issue 16); the rest were never durations. */
    { "7ds", -1 }, { "7sd", -1 }, { "5 s", -1 }, { " 5", -1 }, { "5 ", -1 }, { "-1", -1 },
    { "+1", -1 }, { "1e3", -1 }, { ".5", -1 }, { "5.", -1 }, { "5x", -1 }, { "ms", -1 },
    { "", -1 }, { "5M", -1 }, { "5msm", -1 }, { "inf", -1 }, { "nan", -1 }, { "0x10", -1 },
    { "99999999999999999999d", -1 },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;
      double v = -42;
      gboolean ok = kt_duration_parse ("--flag", cases[i].text, &v, &error);

      g_test_message ("'%s'", cases[i].text);
      if (cases[i].seconds >= 0)
        {
          g_assert_no_error (error);
          g_assert_cmpfloat_with_epsilon (v, cases[i].seconds, 1e-9);
          continue;
        }
      g_assert_false (ok);
      g_assert_error (error, KT_ERROR, KT_ERROR_USAGE);
      g_assert_true (g_str_has_prefix (error->message, "--flag: expected a duration"));
    }
}

/* Each duration option takes the same words, on the command line and in
 * a config file (where `interval = 5s` was GLib's "Cannot parse double
 * value" before, issue 16). */
static void
test_duration_options (void)
{
  static const struct
  {
    const char *flag, *value, *key, *want;
  } cases[] = {
    { "--interval", "500ms", "interval", "interval=0.5" },
    { "--interval", "5s", "interval", "interval=5" },
    { "--startup-timeout", "2m", "startup_timeout", "startup_timeout=120" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      const char *args[] = { "run", KAFKA, DB, cases[i].flag, cases[i].value, NULL };
      g_autoptr(GError) error = NULL;
      g_autoptr(KtConfig) config = parse_args (args, &error);
      g_autoptr(GHashTable) dump = NULL;
      g_autofree char *got = NULL;

      g_assert_no_error (error);
      dump = dump_config (config);
      got = g_strdup_printf ("%s=%s", cases[i].key,
                             (char *) g_hash_table_lookup (dump, cases[i].key));
      g_assert_cmpstr (got, ==, cases[i].want);
    }
  {
    const char *args[] = { "run", KAFKA, DB, "--audit-keep", "7d", NULL };
    const char *bad[] = { "run", KAFKA, DB, "--audit-keep", "7ds", NULL };
    const char *small[] = { "run", KAFKA, DB, "--audit-keep", "500ms", NULL };
    g_autoptr(GError) error = NULL;
    g_autoptr(KtConfig) config = parse_args (args, &error);

    g_assert_no_error (error);
    g_assert_cmpint (config->run.audit_keep, ==, 604800);
    g_assert_null (parse_args (bad, &error));
    g_assert_error (error, KT_ERROR, KT_ERROR_USAGE);
    g_assert_nonnull (strstr (error->message, "--audit-keep: expected a duration"));
    g_clear_error (&error);
    g_assert_null (parse_args (small, &error));
    g_assert_error (error, KT_ERROR, KT_ERROR_USAGE);
    g_assert_nonnull (strstr (error->message, "--audit-keep: '500ms' is not between 1"));
  }
}

/* ---- config files: ${VAR}, a key given twice, the line of a bad value -- */

typedef struct
{
  const char *path;
  const char *ini;       /* after "[kafka]\nbrokers = b:9092\ntopic = logs\n" */
  const char *extra[4];  /* command-line words after --config FILE */
  const char *needle;    /* NULL: parses; else the error contains this */
  const char *want;      /* when it parses: this "key=value" of dump_config */
} FileCase;

static const FileCase file_cases[] = {
  { "/cli/config-file/interval-units", "[mysql]\nuri = mysql://u@h/db\n[batch]\ninterval = 5s\n",
    { NULL }, NULL, "interval=5" },
  { "/cli/config-file/interval-ms", "[mysql]\nuri = mysql://u@h/db\n[batch]\ninterval = 250ms\n",
    { NULL }, NULL, "interval=0.25" },
  { "/cli/config-file/interval-bad-names-line",
    "[mysql]\nuri = mysql://u@h/db\n[batch]\n\ninterval = 5x\n", { NULL },
    "ktally.conf:8: --interval: expected a duration", NULL },
  { "/cli/config-file/interval-out-of-range-names-line",
    "[mysql]\nuri = mysql://u@h/db\n[batch]\ninterval = 2d\n", { NULL },
    "ktally.conf:7: --interval: '2d' is not between 0 and 86400", NULL },
  { "/cli/config-file/integer-names-line",
    "[mysql]\nuri = mysql://u@h/db\n[batch]\nmax-per-partition = 10k\n", { NULL },
    "ktally.conf:7: --max-per-partition: expected a whole number, got '10k'", NULL },
  /* The file's bad value, though the command line gives another: GOption
   * stops at it, and the line says where it is. */
  { "/cli/config-file/integer-names-line-overridden",
    "[mysql]\nuri = mysql://u@h/db\n[batch]\nmax-per-partition = 10k\n", { "-n", "5", NULL },
    "ktally.conf:7: --max-per-partition: expected a whole number, got '10k'", NULL },
  { "/cli/config-file/flag-wins-no-line",
    "[mysql]\nuri = mysql://u@h/db\n[batch]\ninterval = 5\n", { "--interval", "5x", NULL },
    "--interval: expected a duration", NULL },
  /* [mysql] host as a list; port for the servers that name none. */
  { "/cli/config-file/hosts-list",
    "[mysql]\nhost = h1, h2:3307,[::1]\nport = 3310\nuser = u\ndatabase = d\n", { NULL },
    NULL, "db.servers=u@h1:3310,h2:3307,[::1]:3310/d" },
  { "/cli/config-file/hosts-list-no-port",
    "[mysql]\nhost = h1,h2\nuser = u\ndatabase = d\n", { NULL },
    NULL, "db.servers=u@h1:3306,h2:3306/d" },
  { "/cli/config-file/uri-list",
    "[mysql]\nuri = mysql://u@h1:1,h2:2/d\n", { NULL }, NULL, "db.servers=u@h1:1,h2:2/d" },
  { "/cli/config-file/hosts-list-bad-names-line",
    "[mysql]\nhost = h1,,h2\nuser = u\ndatabase = d\n", { NULL },
    "ktally.conf:4: --db: server 2 of the list is empty", NULL },
  /* [mysql] uri beside a key it would override: refused, naming the keys
   * (ssl-mode verify-identity was ignored, the connection unverified). */
  { "/cli/config-file/uri-with-tls-key",
    "[mysql]\nuri = mysql://u@h/db\nssl-mode = verify-identity\n", { NULL },
    "ktally.conf:5: [mysql] uri is the whole database, and ssl-mode (line 6) would be "
    "ignored", NULL },
  { "/cli/config-file/uri-with-keys",
    "[mysql]\nhost = h2\nuri = mysql://u@h/db\ndatabase = d2\nssl-ca = /ca.pem\n", { NULL },
    "ktally.conf:6: [mysql] uri is the whole database, and host, database, ssl-ca "
    "(lines 5, 7, 8)", NULL },
  { "/cli/config-file/uri-with-keys-flag-too",
    "[mysql]\nuri = mysql://u@h/db\nssl-mode = required\n",
    { "--db", "mysql://u@h/db?ssl-mode=required", NULL },
    "[mysql] uri is the whole database, and ssl-mode", NULL },
  /* --db on the command line wins over the file's database, but not by
   * dropping the file's TLS in silence. */
  { "/cli/config-file/db-flag-drops-file-tls",
    "[mysql]\nhost = h\nuser = u\ndatabase = d\nssl-mode = verify-identity\n",
    { "--db", "mysql://u@h2/d2", NULL },
    "--db: given on the command line, it replaces the database of ", NULL },
  { "/cli/config-file/db-flag-drops-uri-tls",
    "[mysql]\nuri = mysql://u@h/d?ssl-mode=required\n", { "--db", "mysql://u@h2/d2", NULL },
    "the file's TLS (ssl-mode required)", NULL },
  { "/cli/config-file/db-flag-own-tls",
    "[mysql]\nhost = h\nuser = u\ndatabase = d\nssl-mode = verify-identity\n",
    { "--db", "mysql://u@h2/d2?ssl-mode=disabled", NULL }, NULL, "db.servers=u@h2:3306/d2" },
  { "/cli/config-file/db-flag-no-file-tls",
    "[mysql]\nhost = h\nuser = u\ndatabase = d\nssl-mode = preferred\n",
    { "--db", "mysql://u@h2/d2", NULL }, NULL, "db.servers=u@h2:3306/d2" },
  { "/cli/config-file/db-names-section-line",
    "\n[mysql]\nhost = h\nuser = u\ndatabase = d-b\n", { NULL },
    "ktally.conf:5: --db: database name 'd-b'", NULL },
  { "/cli/config-file/duplicate-key",
    "[batch]\ninterval = 5\nmax-per-partition = 3\n[mysql]\nuri = mysql://u@h/db\n"
    "[batch]\ninterval = 6\n", { NULL },
    "ktally.conf:10: [batch] interval given twice (first on line 5)", NULL },
  { "/cli/config-file/duplicate-key-same-section",
    "[mysql]\nuri = mysql://u@h/db\nuri = mysql://u@h/db\n", { NULL },
    "ktally.conf:6: [mysql] uri given twice (first on line 5)", NULL },
  { "/cli/config-file/duplicate-kafka-property",
    "security.protocol = plaintext\n[mysql]\nuri = mysql://u@h/db\n[kafka]\n"
    "security.protocol=ssl\n", { NULL },
    "ktally.conf:8: [kafka] security.protocol given twice (first on line 4)", NULL },
  { "/cli/config-file/env", "[mysql]\nuri = mysql://${KT_TEST_USER}@h/${KT_TEST_DB}\n",
    { NULL }, NULL, "db.database=logs_db" },
  { "/cli/config-file/env-user", "[mysql]\nuri = mysql://${KT_TEST_USER}@h/${KT_TEST_DB}\n",
    { NULL }, NULL, "db.user=kt" },
  { "/cli/config-file/env-literal", "[mysql]\nuri = mysql://u@h/db\n[batch]\n"
    "job = a$${KT_TEST_USER}\n", { NULL }, "ktally.conf:7: --job: 'a${KT_TEST_USER}'", NULL },
  { "/cli/config-file/env-unset", "[mysql]\nuri = mysql://u@h/db\n[batch]\n"
    "job = ${KT_TEST_UNSET}\n", { NULL },
    "ktally.conf:7: [batch] job: ${KT_TEST_UNSET}: KT_TEST_UNSET is not set", NULL },
  { "/cli/config-file/env-malformed", "[mysql]\nuri = mysql://u@h/db\n[batch]\n"
    "job = ${KT TEST}\n", { NULL }, "ktally.conf:7: [batch] job: '${KT TEST}' is not ${NAME}",
    NULL },
  { "/cli/config-file/env-unclosed", "[mysql]\nuri = mysql://u@h/db\n[batch]\n"
    "job = ${KT_TEST_USER\n", { NULL }, "ktally.conf:7: [batch] job: '${KT_TEST_USER' is not",
    NULL },
  { "/cli/config-file/env-dollar-alone", "[mysql]\nuri = mysql://u@h/db\n[parse]\n"
    "pattern = ^(?<time>\\\\S+ \\\\S+) (?<level>[A-Z]+)$\n", { NULL }, NULL, "interval=5" },
  { "/cli/config-file/log-verbose", "[mysql]\nuri = mysql://u@h/db\n[log]\nverbose = true\n",
    { NULL }, NULL, "verbose=1" },
  { "/cli/config-file/log-quiet-false", "[mysql]\nuri = mysql://u@h/db\n[log]\nquiet = false\n",
    { NULL }, NULL, "quiet=0" },
};

static void
test_file_case (gconstpointer data)
{
  const FileCase *c = data;
  g_autofree char *dir = g_dir_make_tmp ("kt-test-cli-XXXXXX", NULL);
  g_autofree char *conf = g_build_filename (dir, "ktally.conf", NULL);
  g_autofree char *ini = g_strdup_printf ("[kafka]\nbrokers = b:9092\ntopic = logs\n%s", c->ini);
  const char *args[12] = { "run", "--config", conf };
  g_autoptr(GError) error = NULL;
  g_autoptr(KtConfig) config = NULL;
  int n = 3;

  for (int i = 0; c->extra[i] != NULL; i++)
    args[n++] = c->extra[i];
  g_setenv ("KT_TEST_USER", "kt", TRUE);
  g_setenv ("KT_TEST_DB", "logs_db", TRUE);
  g_unsetenv ("KT_TEST_UNSET");
  g_assert_true (g_file_set_contents (conf, ini, -1, NULL));
  config = parse_args (args, &error);
  g_remove (conf);
  g_rmdir (dir);
  if (c->needle == NULL)
    {
      g_autoptr(GHashTable) dump = NULL;
      g_auto(GStrv) kv = g_strsplit (c->want, "=", 2);

      g_assert_no_error (error);
      dump = dump_config (config);
      g_assert_cmpstr (g_hash_table_lookup (dump, kv[0]), ==, kv[1]);
      return;
    }
  g_assert_null (config);
  g_assert_error (error, KT_ERROR, KT_ERROR_USAGE);
  g_test_message ("message: %s", error->message);
  g_assert_nonnull (strstr (error->message, c->needle));
  g_assert_true (c->extra[0] != NULL || g_str_has_prefix (error->message, "--config: "));
}

/* A librdkafka property in [kafka] goes to the commands that reach Kafka,
 * audit's --brokers included, and is no error for init-db, which does not
 * (both exited 2 "Unknown option -X"). */
static void
test_file_kafka_property (void)
{
  g_autofree char *dir = g_dir_make_tmp ("kt-test-cli-XXXXXX", NULL);
  g_autofree char *conf = g_build_filename (dir, "ktally.conf", NULL);
  const char *audit[] = { "audit", "--config", conf, NULL };
  const char *init_db[] = { "init-db", "--config", conf, NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(KtConfig) a = NULL;
  g_autoptr(KtConfig) i = NULL;

  g_assert_true (g_file_set_contents (conf, "[kafka]\nbrokers = b:9092\n"
                                      "security.protocol = SSL\n[mysql]\n"
                                      "uri = mysql://u@h/db\n", -1, NULL));
  a = parse_args (audit, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (a->kafka.properties[0], ==, "security.protocol=SSL");
  i = parse_args (init_db, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (i->db.database, ==, "db");
  g_remove (conf);
  g_rmdir (dir);
}

/* What config --check prints reads back, a literal ${ included. */
static void
test_describe_reads_back (void)
{
  g_autofree char *dir = g_dir_make_tmp ("kt-test-cli-XXXXXX", NULL);
  g_autofree char *conf = g_build_filename (dir, "ktally.conf", NULL);
  const char *args[] = { "run", KAFKA, "--db", "mysql://u@h/db", "--job", "j", "--pattern",
                         "^(?<time>\\S+ \\S+) (?<level>[A-Z]+)${x}$", "--interval", "300ms",
                         "--http", "127.0.0.1:0", "--health-max-lag", "5",
                         "--health-max-commit-age", "2m", "-v", NULL };
  const char *again[] = { "run", "--config", conf, NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(KtConfig) config = parse_args (args, &error);
  g_autoptr(KtConfig) back = NULL;
  g_autofree char *text = NULL, *text2 = NULL;

  g_assert_no_error (error);
  text = kt_config_describe (config);
  g_assert_nonnull (strstr (text, "[http]\nhttp = 127.0.0.1:0\nhealth-max-lag = 5\n"
                                  "health-max-commit-age = 120\n"));
  g_assert_nonnull (strstr (text, "[log]\nverbose = true"));
  /* Not GKeyFile's "0.29999999999999999". */
  g_assert_nonnull (strstr (text, "\ninterval = 0.3\n"));
  g_assert_true (g_file_set_contents (conf, text, -1, NULL));
  back = parse_args (again, &error);
  g_remove (conf);
  g_rmdir (dir);
  g_assert_no_error (error);
  g_assert_cmpstr (COUNTS (back)->pattern, ==, COUNTS (config)->pattern);
  g_assert_cmpfloat (back->run.interval, ==, 0.3);
  g_assert_cmpint (back->health.max_lag, ==, 5);
  g_assert_true (back->log.verbose);
  text2 = kt_config_describe (back);
  g_assert_cmpstr (text, ==, text2);
}

/* A hosts list is written back as [mysql] host, each server with its
 * port, and reads back the same. */
static void
test_describe_hosts_list (void)
{
  g_autofree char *dir = g_dir_make_tmp ("kt-test-cli-XXXXXX", NULL);
  g_autofree char *conf = g_build_filename (dir, "ktally.conf", NULL);
  const char *args[] = { "run", KAFKA, "--db", "mysql://u@h1,[::1]:3307/db", NULL };
  const char *again[] = { "run", "--config", conf, NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(KtConfig) config = parse_args (args, &error);
  g_autoptr(KtConfig) back = NULL;
  g_autofree char *text = NULL, *text2 = NULL, *servers = NULL;

  g_assert_no_error (error);
  text = kt_config_describe (config);
  g_assert_nonnull (strstr (text, "\nhost = h1:3306, [::1]:3307\n"));
  g_assert_null (strstr (text, "\nport ="));
  g_assert_true (g_file_set_contents (conf, text, -1, NULL));
  back = parse_args (again, &error);
  g_remove (conf);
  g_rmdir (dir);
  g_assert_no_error (error);
  servers = kt_db_describe (&back->db);
  g_assert_cmpstr (servers, ==, "u@h1:3306,[::1]:3307/db");
  text2 = kt_config_describe (back);
  g_assert_cmpstr (text, ==, text2);
}

/* The --db messages show their placeholder whole: the scrubber blanked
 * "mysql://USER[:PASSWORD]@HOST" to "USER[:xxxxxxxxx@HOST" in every one
 * (issue 16); a password the user gave is still blanked where it is
 * quoted. */
static void
test_placeholder_not_scrubbed (void)
{
  const char *bad[] = { "run", KAFKA, "--db", "postgres://u:" PW "@h/db", NULL };
  const char *quoted[] = { "run", KAFKA, DB, "--interval", "mysql://u:" PW "@h/db", NULL };
  const char *short_pw[] = { "run", KAFKA, "--db", "mysql://u:p@h/d-b", "--job", "pp", NULL };
  g_autoptr(GError) error = NULL;

  g_assert_null (parse_args (bad, &error));
  g_assert_nonnull (strstr (error->message, "expected mysql://USER[:PASSWORD]@HOST[:PORT]/DATABASE"));
  g_assert_null (strstr (error->message, PW));
  g_clear_error (&error);
  g_assert_null (parse_args (quoted, &error));
  g_assert_nonnull (strstr (error->message, "got 'mysql://u:xxxxxxxx@h/db'"));
  g_clear_error (&error);
  /* A one-letter password is blanked where it stands in its URI only. */
  g_assert_null (parse_args (short_pw, &error));
  g_assert_nonnull (strstr (error->message, "database name 'd-b' is not a name ktally takes"));
}

static void
test_uri_secrets (void)
{
  static const struct
  {
    const char *word;
    const char *secrets;  /* joined by | */
  } cases[] = {
    { "--db=mysql://u:secret@h/d", "secret" },
    { "mysql://u:se%40cret@h:3307/d?socket=/tmp/a@b", "se%40cret" },
    { "mysql://u:p@ss@h/d", "p@ss|p" },
    { "mysql://u:pa/ss@h/d", "pa/ss" },
    { "mysql://u@h:3306/d", "" },
    { "mysql://USER[:PASSWORD]@HOST[:PORT]/DATABASE", "PASSWORD]" },
    { "no uri at all", "" },
    { "mysql://a:b@h/d mysql://c:dd@h/d", "b|dd" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_auto(GStrv) got = kt_db_uri_secrets (cases[i].word);
      g_autofree char *joined = g_strjoinv ("|", got);

      g_test_message ("'%s'", cases[i].word);
      g_assert_cmpstr (joined, ==, cases[i].secrets);
    }
}

/* ---- the grants `config --check --connect` reads from SHOW GRANTS ----- */

static void
test_grants (void)
{
  static const struct
  {
    const char *lines[5];
    const char *database;
    const char *missing;  /* joined by ", " */
  } cases[] = {
    { { "GRANT ALL PRIVILEGES ON *.* TO `kt`@`%` WITH GRANT OPTION", NULL }, "logs", "" },
    { { "GRANT USAGE ON *.* TO `kt`@`%`", "GRANT ALL PRIVILEGES ON `logs`.* TO `kt`@`%`",
        NULL }, "logs", "" },
    { { "GRANT USAGE ON *.* TO `kt`@`%` IDENTIFIED BY PASSWORD '*D82'",
        "GRANT SELECT, INSERT ON `g1`.* TO `lim`@`%`", NULL }, "g1",
      "UPDATE, DELETE, CREATE, ALTER, DROP, CREATE VIEW, CREATE TEMPORARY TABLES" },
    { { "GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, ALTER, DROP, CREATE VIEW, "
        "CREATE TEMPORARY TABLES ON `logs`.* TO `kt`@`localhost`", NULL }, "logs", "" },
    /* Another database's grants, a pattern, a table, columns, a role. */
    { { "GRANT ALL PRIVILEGES ON `other`.* TO `kt`@`%`", NULL }, "logs",
      "SELECT, INSERT, UPDATE, DELETE, CREATE, ALTER, DROP, CREATE VIEW, "
      "CREATE TEMPORARY TABLES" },
    { { "GRANT ALL PRIVILEGES ON `log\\_%`.* TO `kt`@`%`", NULL }, "log_2024", "" },
    { { "GRANT ALL PRIVILEGES ON `log\\_%`.* TO `kt`@`%`", NULL }, "logx2024",
      "SELECT, INSERT, UPDATE, DELETE, CREATE, ALTER, DROP, CREATE VIEW, "
      "CREATE TEMPORARY TABLES" },
    { { "GRANT ALL PRIVILEGES ON `lo_s`.* TO `kt`@`%`", NULL }, "logs", "" },
    { { "GRANT ALL PRIVILEGES ON `logs`.`error_log` TO `kt`@`%`",
        "GRANT SELECT (`a`, `b`), INSERT ON `logs`.* TO `kt`@`%`", "GRANT `r` TO `kt`@`%`",
        NULL }, "logs",
      "SELECT, UPDATE, DELETE, CREATE, ALTER, DROP, CREATE VIEW, CREATE TEMPORARY TABLES" },
    { { "GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, ALTER, DROP, CREATE VIEW, "
        "CREATE TEMPORARY TABLES ON `we``ird`.* TO `kt`@`%`", NULL }, "we`ird", "" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_auto(GStrv) missing = kt_db_grants_missing_in (cases[i].lines, cases[i].database);
      g_autofree char *joined = g_strjoinv (", ", missing);

      g_test_message ("case %" G_GSIZE_FORMAT, i);
      g_assert_cmpstr (joined, ==, cases[i].missing);
    }
}

/* A replay's range as ktally_job.replay_range stores it: text and back,
 * what is refused, and the search by partition. */
static void
test_replay_range_text (void)
{
  static const char *const bad[] = {
    "0:5", "0:5-", "0:-5", ":1-2", "x:1-2", "0:2-1", "1:0-1,0:0-1", "0:0-1,0:1-2", "0:1-2,",
  };
  g_autoptr(GArray) from = g_array_new (FALSE, FALSE, sizeof (KtPartitionOffset));
  g_autoptr(GArray) until = g_array_new (FALSE, FALSE, sizeof (KtPartitionOffset));
  g_autofree char *again = NULL;

  g_assert_true (kt_replay_range_parse ("0:10-20,3:0-0,7:5-9223372036854775807", from, until,
                                        NULL));
  g_assert_cmpuint (from->len, ==, 3);
  again = kt_replay_range_text (from, until);
  g_assert_cmpstr (again, ==, "0:10-20,3:0-0,7:5-9223372036854775807");
  g_assert_cmpint (kt_partition_offset_find (from, 3)->offset, ==, 0);
  g_assert_cmpint (kt_partition_offset_find (until, 7)->offset, ==, G_MAXINT64);
  g_assert_cmpint (kt_partition_offset_find (until, 0)->offset, ==, 20);
  g_assert_null (kt_partition_offset_find (from, 1));
  g_assert_null (kt_partition_offset_find (from, 8));
  g_assert_null (kt_partition_offset_find (NULL, 0));
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(GError) error = NULL;

      g_array_set_size (from, 0);
      g_array_set_size (until, 0);
      g_assert_false (kt_replay_range_parse (bad[i], from, until, &error));
      g_assert_error (error, KT_ERROR, KT_ERROR_USAGE);
    }
  /* --from's pairs: sorted, a partition given twice refused (next to
   * itself once sorted). */
  g_array_set_size (from, 0);
  g_assert_true (kt_partition_offsets_parse ("--from", "5:1,0:2,3:3", from, NULL));
  g_assert_cmpint (g_array_index (from, KtPartitionOffset, 0).partition, ==, 0);
  g_assert_cmpint (g_array_index (from, KtPartitionOffset, 2).partition, ==, 5);
  {
    g_autoptr(GError) error = NULL;

    g_array_set_size (from, 0);
    g_assert_false (kt_partition_offsets_parse ("--from", "5:1,0:2,5:3", from, &error));
    g_assert_error (error, KT_ERROR, KT_ERROR_USAGE);
    g_assert_nonnull (strstr (error->message, "--from: partition 5 given twice"));
  }
}

/* ---- Settings from the environment -------------------------------------- */

/* Sets the environment's KTALLY_ variables to @pairs (NAME, VALUE, ...,
 * NULL), after unsetting every other one. */
static void
set_env (const char *const *pairs)
{
  g_auto(GStrv) environ = g_get_environ ();

  for (char **e = environ; *e != NULL; e++)
    if (g_str_has_prefix (*e, "KTALLY_"))
      {
        g_autofree char *name = g_strndup (*e, strcspn (*e, "="));
        g_unsetenv (name);
      }
  for (const char *const *p = pairs; p != NULL && *p != NULL; p += 2)
    g_setenv (p[0], p[1], TRUE);
}

/* One order for every setting: flag > environment > file > default; a
 * false from the environment turns off the file's switch; KTALLY_CONFIG
 * names the file; a repeatable option takes one value a line. */
static void
test_env_precedence (void)
{
  g_autofree char *dir = g_dir_make_tmp ("kt-test-cli-XXXXXX", NULL);
  g_autofree char *conf = g_build_filename (dir, "ktally.conf", NULL);
  static const char ini[] = "[kafka]\nbrokers = file:9092\ntopic = logs\n"
                            "[batch]\ninterval = 7\nmax-per-partition = 70\n"
                            "exit-when-idle = true\n[log]\nverbose = true\n";

  g_assert_true (g_file_set_contents (conf, ini, -1, NULL));
  {
    /* The default, the file, the environment, the flag: each wins over the
     * one before. */
    const char *env[] = { "KTALLY_CONFIG", conf, "KTALLY_INTERVAL", "3",
                          "KTALLY_MAX_PER_PARTITION", "30", "KTALLY_BROKERS", "env:9092",
                          "KTALLY_EXIT_WHEN_IDLE", "false", "KTALLY_QUIET", "1",
                          "KTALLY_KAFKA_PROPERTY", "client.rack=r1\n\nsocket.nagle.disable=true\n",
                          NULL };
    const char *args[] = { "run", "--db", "mysql://u@h/db", "--interval", "9", NULL };
    g_autoptr(GError) error = NULL;
    g_autoptr(KtConfig) config = NULL;
    g_autofree char *props = NULL;

    set_env (env);
    config = parse_args (args, &error);
    g_assert_no_error (error);
    g_assert_cmpfloat (config->run.interval, ==, 9);          /* the flag's */
    g_assert_cmpint (config->run.max_per_partition, ==, 30);  /* the environment's */
    g_assert_cmpstr (config->kafka.brokers, ==, "env:9092");
    g_assert_cmpstr (config->job.topics[0], ==, "logs");      /* the file's */
    g_assert_cmpint (config->run.max_batch_bytes, ==, 67108864);  /* the default */
    g_assert_false (config->run.exit_when_idle);              /* false beat the file's true */
    g_assert_true (config->log.verbose);
    g_assert_true (config->log.quiet);
    props = g_strjoinv (" ", config->kafka.properties);
    g_assert_cmpstr (props, ==, "client.rack=r1 socket.nagle.disable=true");
    g_assert_cmpstr (config->config_file, ==, conf);
    g_assert_nonnull (config->env_given);
    g_assert_true (g_strv_contains ((const char *const *) config->env_given, "KTALLY_INTERVAL"));
    g_assert_null (config->env_ignored);
  }
  {
    /* The command line's --config wins over KTALLY_CONFIG's. */
    const char *env[] = { "KTALLY_CONFIG", "/nonexistent/ktally.conf", NULL };
    const char *args[] = { "run", "--db", "mysql://u@h/db", "--config", conf, NULL };
    g_autoptr(GError) error = NULL;
    g_autoptr(KtConfig) config = NULL;

    set_env (env);
    config = parse_args (args, &error);
    g_assert_no_error (error);
    g_assert_cmpfloat (config->run.interval, ==, 7);
  }
  set_env (NULL);
  g_remove (conf);
  g_rmdir (dir);
}

/* A bad value from the environment names its variable; a variable of
 * another command's setting, or of none, is left alone (a platform's own:
 * KTALLY_SERVICE_HOST) and listed; an empty one gives nothing. */
static void
test_env_errors (void)
{
  static const struct
  {
    const char *name, *value;
    const char *command;
    const char *error;  /* the message's start, or NULL: parses */
  } cases[] = {
    { "KTALLY_INTERVAL", "5 s", "run", "KTALLY_INTERVAL: --interval: expected a duration" },
    { "KTALLY_MODE", "sometimes", "run", "KTALLY_MODE: --mode: expected transactional|idempotent" },
    { "KTALLY_VERBOSE", "yes please", "run", "KTALLY_VERBOSE: expected true or false" },
    { "KTALLY_GROUP", "a b", "run", "KTALLY_GROUP: --group: 'a b' is not a valid group name" },
    { "KTALLY_INTERVAL", "5 s", "status", NULL },   /* not status's */
    { "KTALLY_INTERVAL", "", "run", NULL },         /* empty: nothing */
    { "KTALLY_SERVICE_HOST", "10.0.0.1", "run", NULL },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      const char *env[] = { cases[i].name, cases[i].value, NULL };
      const char *args[] = { cases[i].command, KAFKA, "--db", "mysql://u@h/db", NULL };
      g_autoptr(GError) error = NULL;
      g_autoptr(KtConfig) config = NULL;

      g_test_message ("case %" G_GSIZE_FORMAT ": %s=%s", i, cases[i].name, cases[i].value);
      set_env (env);
      config = parse_args (args, &error);
      if (cases[i].error == NULL)
        {
          g_assert_no_error (error);
          if (g_str_equal (cases[i].name, "KTALLY_SERVICE_HOST"))
            g_assert_true (g_strv_contains ((const char *const *) config->env_ignored,
                                            "KTALLY_SERVICE_HOST"));
          continue;
        }
      g_assert_error (error, KT_ERROR, KT_ERROR_USAGE);
      g_test_message ("message: %s", error->message);
      g_assert_true (g_str_has_prefix (error->message, cases[i].error));
    }
  set_env (NULL);
}

/* A secret from the environment is refused, never quoted, unless the
 * command line says --env-secrets; the file and the flag are unchanged. */
static void
test_env_secrets (void)
{
  static const char *const cases[][2] = {
    { "KTALLY_DB", "mysql://u:" PW "@h/db" },
    { "KTALLY_KAFKA_PROPERTY", "client.rack=r1\nsasl.password=" PW },
    { "KTALLY_KAFKA_PROPERTY", "ssl.key.password=" PW },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    for (int opted = 0; opted < 2; opted++)
      {
        const char *env[] = { cases[i][0], cases[i][1], NULL };
        gboolean db = g_str_equal (cases[i][0], "KTALLY_DB");
        g_autoptr(GPtrArray) args = g_ptr_array_new ();
        g_autoptr(GError) error = NULL;
        g_autoptr(KtConfig) config = NULL;

        g_test_message ("case %" G_GSIZE_FORMAT ", --env-secrets %s", i, opted ? "given" : "not");
        set_env (env);
        for (const char *const *w = (const char *const[]) { "run", KAFKA, NULL }; *w; w++)
          g_ptr_array_add (args, (gpointer) *w);
        if (!db)  /* --db from the flag, the secret from KTALLY_KAFKA_PROPERTY */
          {
            g_ptr_array_add (args, (gpointer) "--db");
            g_ptr_array_add (args, (gpointer) "mysql://u@h/db");
          }
        if (opted)
          g_ptr_array_add (args, (gpointer) "--env-secrets");
        g_ptr_array_add (args, NULL);
        config = parse_args ((const char *const *) args->pdata, &error);
        if (opted)
          {
            g_assert_no_error (error);
            if (db)
              g_assert_cmpstr (config->db.password, ==, PW);
            continue;
          }
        g_assert_error (error, KT_ERROR, KT_ERROR_USAGE);
        g_test_message ("message: %s", error->message);
        g_assert_true (g_str_has_prefix (error->message, cases[i][0]));
        g_assert_nonnull (strstr (error->message, "--env-secrets"));
        g_assert_null (strstr (error->message, PW));
      }
  set_env (NULL);
}

/* Every setting has its variable, made from its name, and no two rows a
 * command takes share one (the man page lists them from the same rows). */
static void
test_env_names (void)
{
  for (const KtCommand *const *c = kt_commands (); *c != NULL; c++)
    {
      g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
      g_autoptr(KtOptionValues) values = kt_option_values_new (kt_option_tables (),
                                                               kt_command_bits (*c));
      guint n;
      const KtOption *const *rows = kt_option_values_rows (values, &n);

      for (guint i = 0; i < n; i++)
        {
          char *name = kt_option_env_name (rows[i]);

          if (rows[i]->section != NULL)
            g_assert_nonnull (name);
          if (name == NULL)
            continue;
          g_assert_true (g_str_has_prefix (name, "KTALLY_"));
          g_assert_true (g_hash_table_add (seen, name));
        }
    }
  {
    const KtOption *row = kt_option_lookup (kt_option_tables (), KT_CMD_RUN,
                                            "max-per-partition");
    g_autofree char *name = kt_option_env_name (row);
    g_assert_cmpstr (name, ==, "KTALLY_MAX_PER_PARTITION");
    row = kt_option_lookup (kt_option_tables (), KT_CMD_RESET, "execute");
    g_assert_null (kt_option_env_name (row));
  }
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  /* The developer's own MYSQL_PWD must not leak into the expectations,
   * nor the KTALLY_ settings of the environment. */
  g_unsetenv ("MYSQL_PWD");
  set_env (NULL);

  for (gsize i = 0; i < G_N_ELEMENTS (run_cases); i++)
    g_test_add_data_func (run_cases[i].path, &run_cases[i], test_run_case);
  g_test_add_func ("/cli/init-db/db-only", test_init_db);
  g_test_add_func ("/cli/env/precedence", test_env_precedence);
  g_test_add_func ("/cli/env/errors", test_env_errors);
  g_test_add_func ("/cli/env/secrets", test_env_secrets);
  g_test_add_func ("/cli/env/names", test_env_names);
  g_test_add_func ("/cli/config-file/kafka-property-audit-init-db", test_file_kafka_property);
  for (gsize i = 0; i < G_N_ELEMENTS (bad_cases); i++)
    g_test_add_data_func (bad_cases[i].path, &bad_cases[i], test_bad_case);
  for (gsize i = 0; i < G_N_ELEMENTS (secret_cases); i++)
    g_test_add_data_func (secret_cases[i].path, &secret_cases[i], test_secret_case);
  for (gsize i = 0; i < G_N_ELEMENTS (uri_cases); i++)
    g_test_add_data_func (uri_cases[i].path, &uri_cases[i], test_uri_case);
  for (gsize i = 0; i < G_N_ELEMENTS (bad_uri_cases); i++)
    g_test_add_data_func (bad_uri_cases[i].path, &bad_uri_cases[i], test_bad_uri_case);
  g_test_add_func ("/cli/uri/mysql-pwd", test_uri_mysql_pwd);
  g_test_add_func ("/cli/identifier", test_identifier);
  g_test_add_func ("/cli/scrub-argv", test_scrub);
  g_test_add_func ("/cli/replay/job", test_replay_job);
  g_test_add_func ("/cli/replay/range-text", test_replay_range_text);
  g_test_add_func ("/cli/db-password-file", test_password_file);
  g_test_add_func ("/cli/duration", test_duration);
  g_test_add_func ("/cli/duration/options", test_duration_options);
  for (gsize i = 0; i < G_N_ELEMENTS (file_cases); i++)
    g_test_add_data_func (file_cases[i].path, &file_cases[i], test_file_case);
  g_test_add_func ("/cli/config-file/describe-reads-back", test_describe_reads_back);
  g_test_add_func ("/cli/config-file/describe-hosts-list", test_describe_hosts_list);
  g_test_add_func ("/cli/error/placeholder-not-scrubbed", test_placeholder_not_scrubbed);
  g_test_add_func ("/cli/uri/secrets", test_uri_secrets);
  g_test_add_func ("/cli/grants", test_grants);
  g_test_add_func ("/cli/run/fields", test_fields);

  return g_test_run ();
}
