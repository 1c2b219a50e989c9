/* cli.h - ktally's option table and KtConfig, the settings it fills.
 *
 * Every option is one row of kt_option_table (cli.c): names, config-file
 * key, type, default, bounds, which commands take it, whether a reload
 * applies it, help. A command (cmd-*.c) parses its words with
 * kt_command_options(), which loads every row it takes into a KtConfig,
 * then checks what is its own (kt_options_* below hold the checks several
 * commands share). Everything is parsed and checked up front, with errors
 * that name the flag; the modules get the struct, never argv. */
#pragma once
#include <glib.h>
#include "plan.h"
#include "db.h"
#include "parse.h"
#include "log.h"
#include "options.h"

/* Every replay's offsets are kept under a job named so; no live job may be. */
#define KT_REPLAY_JOB_PREFIX "replay."

/* The commands, one bit each, for the rows' `commands`. */
enum
{
  KT_CMD_RUN     = 1 << 0,
  KT_CMD_REPLAY  = 1 << 1,
  KT_CMD_STATUS  = 1 << 2,
  KT_CMD_AUDIT   = 1 << 3,
  KT_CMD_JOBS    = 1 << 4,
  KT_CMD_RESET   = 1 << 5,
  KT_CMD_FORGET  = 1 << 6,
  KT_CMD_CONFIG  = 1 << 7,
  KT_CMD_INIT_DB = 1 << 8,
  KT_CMD_ALL     = (1 << 9) - 1,
};

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
  char       **topics;          /* --topic a,b: every topic (run and status) */
  char        *job;             /* default: the topic */
  KtDbConfig   db;
  KtMode       mode;
  char        *kind;            /* --kind: a name in kind.c's table */
  gint64       workers;         /* --kind ledger: threads applying a batch */
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
  gboolean     json;            /* --json */
  gboolean     check;           /* config --check */
  gboolean     check_connect;   /* config --check --connect: reach Kafka and MySQL too */
  double       audit_keep;      /* seconds of ktally_batches kept whole; 0: all */
  char        *http;            /* --http ADDR:PORT, checked by kt_http_start(); NULL: off */
  char        *pattern;         /* --pattern, or NULL: the default line format */
  char        *time_format;     /* --time-format, or NULL */
  char       **levels;          /* --levels (ERROR) */
  int          bucket;          /* --bucket in minutes: 1, 5 or 60 */
  char       **dimensions;      /* --by: key columns after the bucket, or NULL */
  char       **sums;            /* --sum: a sum_FIELD column each, or NULL */
  gint64       max_keys;        /* --max-keys: keys per bucket per batch with a row
                                 * of their own */
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
  char        *config_file;     /* --config, as given */
  /* reset and forget (cmd-reset.c, cmd-forget.c) */
  char        *reset_to;        /* reset --to, as given (reset.h parses it) */
  gboolean     dry_run;         /* --dry-run (the default) */
  gboolean     execute;         /* --execute: apply; FALSE: a dry run */
  gboolean     rebuild;         /* reset --rebuild */
  gboolean     accept_data_loss;  /* reset --accept-data-loss */
} KtConfig;

/* Every option ktally has: one row each (cli.c). */
extern const KtOption kt_option_table[];

/* Every table of options: kt_option_table, then each kind's own
 * (kind.h); NULL-terminated. */
const KtOption *const *kt_option_tables (void);

/* Parses `ktally COMMAND ARGS...` (@argv[0] is the command name), a
 * --config file's words first. --help prints and exits 0 (GLib's
 * behaviour). Fails with KT_ERROR_USAGE and one line naming the flag; the
 * message never contains a password. */
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

/* Overwrites, in place, the password of any mysql:// URI among @argv, so
 * that it does not show in ps(1). Call before parsing (on a copy). */
void      kt_scrub_argv (int argc, char **argv);

/* Whether @name is a job's name: [A-Za-z0-9._-] or any character beyond
 * ASCII (of the Basic Multilingual Plane: MySQL's), 1 to 64 characters. */
gboolean  kt_is_job_name (const char *name);


/* ---- What the commands share ---------------------------------------------- */

struct _KtCommand;

/* Parses @argv (@argv[0] is the command's name) for @command: GOption
 * with every row it takes, --help with its summary; loads them into a new
 * KtConfig, and the options every command has (--log-format...). The
 * given options stay in *@values for the command's own checks. */
KtConfig *kt_command_options (const struct _KtCommand *command, int argc, char **argv,
                              KtOptionValues **values, GError **error);

/* Each checks options of @config, or fails with KT_ERROR_USAGE and one
 * line naming the flag. kt_options_kafka(): --brokers and --topic
 * required; @several says whether the command takes several topics
 * (--topic a,b); --job defaults to the topic. */
gboolean kt_options_kafka   (KtConfig *config, const KtOptionValues *values,
                             gboolean several, GError **error);
/* --db required, and its password file read. */
gboolean kt_options_db      (KtConfig *config, GError **error);
/* What run and replay share: the kind, the mode, the fields of --by... */
gboolean kt_options_run     (KtConfig *config, GError **error);
/* --table: a name of ktally's rules (or @fallback's default). */
gboolean kt_options_table   (KtConfig *config, const KtOptionValues *values, GError **error);
/* --job: required when @required; of the rules of job names. */
gboolean kt_options_job     (KtConfig *config, gboolean required, const char *hint,
                             GError **error);
/* --brokers (required when @required), -X, and one --topic, optional: the
 * commands that manage jobs (jobs, reset, forget) reach Kafka only for the
 * watermarks and the consumer group's offsets. */
gboolean kt_options_brokers (KtConfig *config, gboolean required, GError **error);
/* --dry-run and --execute exclude each other. */
gboolean kt_options_execute (KtConfig *config, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (KtConfig, kt_config_free)
