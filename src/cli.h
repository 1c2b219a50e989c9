/* cli.h - the options several commands share, and KtConfig: a job's settings.
 *
 * Every command has its own option table (cmd-*.c), built from the shared
 * entries below, and its own parser, which calls the shared checks
 * (kt_options_*). Everything is parsed and checked up front, with errors
 * that name the flag; the modules get the struct, never argv. */
#pragma once
#include <glib.h>
#include "plan.h"
#include "db.h"
#include "parse.h"
#include "log.h"

/* Every replay's offsets are kept under a job named so; no live job may be. */
#define KT_REPLAY_JOB_PREFIX "replay."

/* --max-keys' default and bound (KT_MAX_DIMENSIONS, KT_MAX_SUMS: parse.h). */
#define KT_MAX_KEYS_DEFAULT 10000
#define KT_MAX_KEYS_LIMIT   10000000

typedef enum
{
  KT_MODE_TRANSACTIONAL,
  KT_MODE_IDEMPOTENT,
} KtMode;

/* --mode's words, by KtMode. */
extern const char *const kt_mode_names[];

typedef enum
{
  KT_START_EARLIEST,
  KT_START_LATEST,
} KtStart;

typedef enum
{
  KT_OFFSETS_MYSQL,  /* kafka_offset (default) */
  KT_OFFSETS_KAFKA,  /* the consumer group's committed offsets (idempotent only) */
} KtOffsetStore;

/* One partition:offset pair of --from / --until. */
typedef struct
{
  gint32 partition;
  gint64 offset;
} KtPartitionOffset;

typedef struct
{
  const char  *command;         /* the command's name (static): "run", "replay"... */
  char        *brokers;
  char        *topic;           /* the (first) topic */
  char       **topics;          /* --topic a,b: every topic (run only) */
  char        *job;             /* default: the topic */
  KtDbConfig   db;
  KtMode       mode;
  const char  *kind;            /* --kind: a name in kind.c's table (static) */
  guint        workers;         /* --kind ledger: threads applying a batch */
  double       interval;        /* seconds between batch starts; 0 = back to back */
  gint64       max_per_partition;
  gint64       max_batch_bytes;
  gboolean     exit_when_idle;
  KtStart      start;
  KtOnDataLoss on_data_loss;
  double       startup_timeout; /* seconds */
  char       **kafka_properties;  /* -X key=value, in order */
  KtOffsetStore offsets;
  char        *table;           /* the counts table: error_log, or replay's */
  GArray      *replay_from;     /* KtPartitionOffset, replay only, by partition */
  GArray      *replay_until;    /* same partitions, same order */
  char        *replay_range;    /* both as "P:FROM-UNTIL,..." (a replay's identity) */
  gboolean     table_explicit;  /* --table was given */
  gboolean     json;            /* status --json */
  gboolean     check_connect;   /* config --check --connect: reach Kafka and MySQL too */
  gint64       audit_keep;      /* seconds of ktally_batches kept whole; 0: all */
  char        *http;            /* --http ADDR:PORT, checked by kt_http_start(); NULL: off */
  char        *pattern;         /* --pattern, or NULL: the default line format */
  char        *time_format;     /* --time-format, or NULL */
  char       **levels;          /* --levels, or NULL: ERROR */
  int          bucket;          /* --bucket in minutes: 1, 5 or 60 */
  char       **dimensions;      /* --by: key columns after the bucket, or NULL */
  char       **sums;            /* --sum: a sum_FIELD column each, or NULL */
  guint        max_keys;        /* --max-keys: keys per bucket per batch with a row
                                 * of their own (KT_MAX_KEYS_DEFAULT) */
  char        *group;           /* --group: share the partitions through Kafka */
  gboolean     share_table;     /* --share-table: another job may count a topic into it too */
  GArray      *only_partitions; /* --partitions: gint32, ascending; NULL: all */
  gint64       health_max_lag;        /* /readyz: offsets behind at most; -1: no bound */
  double       health_max_commit_age; /* /readyz: seconds since a batch succeeded; 0: auto */
  double       health_max_stall;      /* /livez: seconds the batch loop may not move */
  gboolean     verbose;
  gboolean     quiet;
  /* The command's words as parsed (the --config file named in them, not
   * its contents): a reload (SIGHUP) parses them again. */
  char       **words;
  const KtLogFormat *log_format; /* --log-format (static): text, json, logfmt */
  /* reset and forget (cmd-reset.c, cmd-forget.c) */
  char        *reset_to;        /* reset --to, as given (reset.h parses it) */
  gboolean     execute;         /* --execute: apply; FALSE: a dry run */
  gboolean     rebuild;         /* reset --rebuild */
  gboolean     accept_data_loss;  /* reset --accept-data-loss */
} KtConfig;

/* /livez's bound when --health-max-stall is not given: longer than any
 * batch takes (a MySQL call waits 60 s at most, a read stalls 30 s). */
#define KT_HEALTH_MAX_STALL 120.0

/* Parses `ktally COMMAND ARGS...` (@argv[0] is the command name). --help
 * prints and exits 0 (GLib's behaviour). Fails with KT_ERROR_USAGE and one
 * line naming the flag; the message never contains a password. */
KtConfig *kt_config_parse (const char *command, int argc, char **argv,
                           GError **error);
void      kt_config_free  (KtConfig *config);  /* NULL is fine */


/* Parses "P:OFF[,P:OFF...]" for @flag into @out (KtPartitionOffset,
 * sorted by partition). A partition given twice is an error. */
gboolean  kt_partition_offsets_parse (const char *flag, const char *text,
                                      GArray *out, GError **error);

/* Parses "0-3,7" for @flag into @out (gint32, ascending, no repeats). */
gboolean  kt_partition_list_parse (const char *flag, const char *text, GArray *out,
                                   GError **error);

/* Parses a duration for @flag: digits with an optional fraction, then at
 * most one unit of ms, s, m, h, d ("500ms", "2.5", "7d"; a bare number is
 * seconds) into seconds. Anything else ("7ds", "-1", "5 s") is
 * KT_ERROR_USAGE naming @flag. */
gboolean  kt_duration_parse (const char *flag, const char *text, double *seconds,
                             GError **error);

/* Overwrites, in place, the password of any mysql:// URI among @argv, so
 * that it does not show in ps(1). Call before parsing (on a copy). */
void      kt_scrub_argv (int argc, char **argv);


/* ---- Options: what every command's GOptionEntry table is made of --------
 *
 * A command (cmd-*.c) parses its own table into a KtRawOptions, then has
 * the validators below turn what it takes into the KtConfig. */

/* Option values as GOption fills them, before validation. */
typedef struct
{
  char    *brokers, *topic, *job, *db, *mode, *start, *on_data_loss, *offsets;
  char    *table, *from, *until, *audit_keep, *password_file, *defaults_file;
  char    *group, *partitions, *kind, *config_file, *http;
  char    *pattern, *time_format, *levels, *bucket, *by, *sum;
  gint64   max_keys;   /* -1: not given */
  char    *interval, *startup_timeout;  /* durations: kt_duration_parse() */
  char    *health_max_commit_age, *health_max_stall;
  char    *log_format;
  int      workers;
  gint64   max_per_partition, max_batch_bytes, health_max_lag;
  gboolean exit_when_idle, json, verbose, quiet, share_table;
  gboolean job_given;  /* --job was on the command line */
  char   **properties;
  char    *to;         /* reset --to */
  gboolean dry_run, execute, rebuild, accept_data_loss;
} KtRawOptions;



#define KT_COMMON_ENTRIES(raw)                                                      \
  { "config", 'c', 0, G_OPTION_ARG_FILENAME, &(raw).config_file,                 \
    "Read options from this INI file first ([kafka] [mysql] [batch]; keys "      \
    "spelled like the long options); flags given here win", "FILE" },            \
  { "verbose", 'v', 0, G_OPTION_ARG_NONE, &(raw).verbose,                        \
    "Log per-partition detail and librdkafka's own messages ([log] verbose in "  \
    "a --config file: SIGHUP applies a change)", NULL },                         \
  { "quiet", 'q', 0, G_OPTION_ARG_NONE, &(raw).quiet,                            \
    "Log only warnings and errors", NULL },                                      \
  { "log-format", 0, 0, G_OPTION_ARG_STRING, &(raw).log_format,                  \
    "text (default; the journal's fields under systemd), json or logfmt: one "   \
    "object or line of key=value pairs per record, a batch's figures as fields", \
    "FORMAT" }

#define KT_DB_ENTRY(raw)                                                            \
  { "db", 0, 0, G_OPTION_ARG_STRING, &(raw).db,                                  \
    "MySQL database: mysql://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?socket=PATH]"  \
    "[&ssl-mode=required|verify-ca|verify-identity&ssl-ca=PATH...]; keep the "   \
    "password out of it (MYSQL_PWD, --db-password-file, --db-defaults-file)", "URI" }, \
  { "db-password-file", 0, 0, G_OPTION_ARG_FILENAME, &(raw).password_file,       \
    "Read the MySQL password from the first line of this file (mode 0600 or 0400)", \
    "FILE" },                                                                    \
  { "db-defaults-file", 0, 0, G_OPTION_ARG_FILENAME, &(raw).defaults_file,       \
    "A MySQL option file whose [client] group gives the password (or more)", "FILE" }

#define KT_PARSE_ENTRIES(raw)                                                       \
  { "pattern", 0, 0, G_OPTION_ARG_STRING, &(raw).pattern,                        \
    "Another log format: a pcre2 pattern with the named groups (?<time>...) "    \
    "and (?<level>...)", "REGEX" },                                              \
  { "time-format", 0, 0, G_OPTION_ARG_STRING, &(raw).time_format,                \
    "How the time group reads: strptime-style (%Y %m %d %H %M %S %b %e %T %F; "  \
    "the month, day, hour and minute at least, and without %Y the year as "      \
    "syslog's), iso8601 (offsets converted to UTC) or syslog (%b %e %H:%M:%S, "  \
    "no year: the latest that puts the line at most a day ahead); default "      \
    "%Y-%m-%d %H:%M:%S", "FORMAT" },                                             \
  { "levels", 0, 0, G_OPTION_ARG_STRING, &(raw).levels,                          \
    "The levels counted, exactly as written (default ERROR)", "A,B,..." },       \
  { "bucket", 0, 0, G_OPTION_ARG_STRING, &(raw).bucket,                          \
    "Count per 1m (default), 5m or 1h", "SIZE" },                                \
  { "by", 0, 0, G_OPTION_ARG_STRING, &(raw).by,                                  \
    "Count per bucket and these fields: 'level' or named groups of --pattern; "  \
    "each a key column of the table (VARBINARY, values cut at 255 bytes)",       \
    "FIELD,..." },                                                               \
  { "sum", 0, 0, G_OPTION_ARG_STRING, &(raw).sum,                                \
    "Also add up these numeric named groups of --pattern, exactly, in a "        \
    "sum_FIELD column each ([-]digits[.digits], at most 4 decimals; anything "   \
    "else makes the line malformed)", "FIELD,..." },                             \
  { "max-keys", 0, 0, G_OPTION_ARG_INT64, &(raw).max_keys,                       \
    "With --by: at most N keys per bucket per batch get rows of their own; the " \
    "rest are counted in one (other) row per bucket (default 10000)", "N" }

#define KT_KAFKA_ENTRIES(raw)                                                       \
  { "brokers", 'b', 0, G_OPTION_ARG_STRING, &(raw).brokers,                      \
    "Kafka bootstrap servers, host:port[,host:port...]", "LIST" },               \
  { "topic", 't', 0, G_OPTION_ARG_STRING, &(raw).topic,                          \
    "Topic to read", "NAME" },                                                   \
  { "job", 'j', 0, G_OPTION_ARG_STRING, &(raw).job,                              \
    "Job name under which offsets are stored (default: the topic)", "NAME" },    \
  { "kafka-property", 'X', 0, G_OPTION_ARG_STRING_ARRAY, &(raw).properties,    \
    "librdkafka property (repeatable), e.g. -X security.protocol=SSL; those "     \
    "exactly-once depends on (enable.auto.commit, isolation.level...) are refused", \
    "KEY=VALUE" }



/* The defaults of the options that have one. */
#define KT_RAW_OPTIONS_INIT                                                      \
  { .max_per_partition = 100000, .max_batch_bytes = 64 * 1024 * 1024,            \
    .health_max_lag = -1, .workers = -1 /* one per core */, .max_keys = -1 }

void     kt_raw_options_clear (KtRawOptions *raw);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (KtRawOptions, kt_raw_options_clear)

/* Parses @argv (@argv[0] is the command's name) with @entries, which point
 * into @raw, for @command (static); the --help text shows @summary. Sets
 * the config's command and the common options. KT_ERROR_USAGE on a bad or
 * stray argument. */
gboolean kt_options_parse   (const char *command, const char *summary,
                             const GOptionEntry *entries, int argc, char **argv,
                             KtRawOptions *raw, KtConfig *config, GError **error);

/* Each takes its options from @raw into @config, checked, or fails with
 * KT_ERROR_USAGE and one line naming the flag. kt_options_kafka():
 * @several says whether the command takes several topics (--topic a,b). */
gboolean kt_options_kafka   (KtConfig *config, KtRawOptions *raw, gboolean several,
                             GError **error);
gboolean kt_options_db      (KtConfig *config, KtRawOptions *raw, GError **error);
gboolean kt_options_run     (KtConfig *config, KtRawOptions *raw, GError **error);
gboolean kt_options_table   (KtConfig *config, KtRawOptions *raw, const char *fallback,
                             GError **error);
gboolean kt_options_job     (KtConfig *config, KtRawOptions *raw, GError **error);
gboolean kt_options_mode    (KtConfig *config, KtRawOptions *raw, GError **error);
/* --brokers (required when @required), -X, and one --topic, optional: the
 * commands that manage jobs (jobs, reset, forget) reach Kafka only for the
 * watermarks and the consumer group's offsets. */
gboolean kt_options_brokers (KtConfig *config, KtRawOptions *raw, gboolean required,
                             GError **error);
/* --startup-timeout alone (the commands that run no batch). */
gboolean kt_options_timeout (KtConfig *config, KtRawOptions *raw, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (KtConfig, kt_config_free)
