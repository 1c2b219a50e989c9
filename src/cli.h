/* cli.h - command lines -> a validated KtConfig.
 *
 * Every subcommand has its own option table. Everything is parsed and
 * checked here, up front, with errors that name the flag; the modules get
 * the struct, never argv. */
#pragma once
#include <glib.h>
#include "plan.h"
#include "db.h"
#include "sink.h"

/* Every replay's offsets are kept under a job named so; no live job may be. */
#define KT_REPLAY_JOB_PREFIX "replay."

typedef enum
{
  KT_MODE_TRANSACTIONAL,
  KT_MODE_IDEMPOTENT,
} KtMode;

typedef enum
{
  KT_KIND_COUNT,   /* per-minute ERROR counts (the default) */
  KT_KIND_LEDGER,  /* per-account balances from JSON transactions */
} KtKind;

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
  char        *command;         /* "run", "replay", "status", "audit", "init-db" */
  char        *brokers;
  char        *topic;           /* the (first) topic */
  char       **topics;          /* --topic a,b: every topic (run only) */
  char        *job;             /* default: the topic */
  KtDbConfig   db;
  KtMode       mode;
  KtKind       kind;
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
  gboolean     table_explicit;  /* --table was given */
  gboolean     json;            /* status --json */
  gint64       audit_keep;      /* seconds of ktally_batches kept whole; 0: all */
  char        *http;            /* --http ADDR:PORT, checked by kt_http_start(); NULL: off */
  char        *pattern;         /* --pattern, or NULL: the default line format */
  char        *time_format;     /* --time-format, or NULL */
  char       **levels;          /* --levels, or NULL: ERROR */
  int          bucket;          /* --bucket in minutes: 1, 5 or 60 */
  char        *group;           /* --group: share the partitions through Kafka */
  gboolean     share_table;     /* --share-table: another job may count a topic into it too */
  GArray      *only_partitions; /* --partitions: gint32, ascending; NULL: all */
  gboolean     verbose;
  gboolean     quiet;
} KtConfig;

/* Whether @name is a command kt_config_parse() knows. */
gboolean  kt_config_is_command (const char *name);

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

/* Parses a duration like "90s", "30m", "12h", "7d" (a bare number is
 * seconds) into seconds. */
gboolean  kt_duration_parse (const char *flag, const char *text, gint64 *seconds,
                             GError **error);

/* The effective settings of a `run` as an INI document (what
 * `ktally config --check` prints). Secrets are masked: the password shows
 * as whether there is one, never as itself. */
char     *kt_config_describe (const KtConfig *config);

/* Overwrites, in place, the password of any mysql:// URI among @argv, so
 * that it does not show in ps(1). Call before parsing (on a copy). */
void      kt_scrub_argv (int argc, char **argv);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (KtConfig, kt_config_free)
