/* job-spec.h - what a job is: the settings that define it, as the kinds,
 * the store and the scheduler see them (never the command line's whole
 * configuration, which only the commands hold).
 *
 * The option table fills a KtJobSpec (commands/cli.c); the job's kind
 * fills `options` with its own (kinds/kind.h). Everything here is part of
 * what the database records of a job (store/identity.h), or of where and
 * how it reads. */
#pragma once
#include <glib.h>

/* Every replay's offsets are kept under a job named so; no live job may be. */
#define KT_REPLAY_JOB_PREFIX "replay."

/* What the (other) row of a bucket holds in every key column of a count
 * table: keys past --max-keys (the parser refuses lines whose every key
 * is it, the store writes and charts it). */
#define KT_OTHER_KEY "(other)"

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

/* One partition:offset pair (replay's --from and --until, reset's --to). */
typedef struct
{
  gint32 partition;
  gint64 offset;
} KtPartitionOffset;

/* Whether @s is 1 to @max_len of [A-Za-z0-9_] and the characters of
 * @extra (may be NULL): Kafka's topic and group names (".-"), fields. */
gboolean kt_is_ascii_name (const char *s, const char *extra, gsize max_len);

/* Parses "P:OFF[,P:OFF...]" for @flag into @out (KtPartitionOffset,
 * sorted by partition). A partition given twice is an error. */
gboolean kt_partition_offsets_parse (const char *flag, const char *text, GArray *out,
                                     GError **error);

/* The pair of @sorted (KtPartitionOffset, by partition) of @partition, or
 * NULL: a binary search. */
const KtPartitionOffset *kt_partition_offset_find (const GArray *sorted, gint32 partition);

/* A replay's range, "P:FROM-UNTIL,..." of @from and @until (the same
 * partitions, by partition, offsets as numbers): one text for every
 * spelling of one range, as ktally_job.replay_range stores it. New string. */
char    *kt_replay_range_text (const GArray *from, const GArray *until);
/* The reverse, appended to @from and @until. KT_ERROR_USAGE naming the
 * text where it is not one (partitions not ascending, FROM after UNTIL). */
gboolean kt_replay_range_parse (const char *text, GArray *from, GArray *until, GError **error);

/* Parses "0-3,7" for @flag into @out (gint32, ascending, no repeats). */
gboolean kt_partition_list_parse (const char *flag, const char *text, GArray *out,
                                  GError **error);

typedef struct
{
  char          *name;            /* --job (default: the topic) */
  char         **topics;          /* --topic: every topic the job reads */
  char          *topic;           /* the first of them */
  char          *kind;            /* --kind: a name of kinds/kind.c's table */
  KtMode         mode;
  KtOffsetStore  offsets;
  char          *table;           /* --table: the counts' table (a kind with a table
                                   * of its own writes that instead) */
  gboolean       table_explicit;  /* --table was given */
  gboolean       share_table;     /* another job may count one of its topics there too */
  KtStart        start;           /* where a partition with no stored offset starts */
  char          *group;           /* --group: the partitions shared through Kafka */
  GArray        *partitions;      /* --partitions: gint32, ascending; NULL: all */
  /* A replay (`ktally replay`): fixed ends, KtPartitionOffset by
   * partition, and both as "P:FROM-UNTIL,..." (its identity); else NULL. */
  GArray        *replay_from;
  GArray        *replay_until;
  char          *replay_range;
  /* A replay given by time: the moments asked for, "FROM/UNTIL" in UTC to
   * the millisecond, UNTIL ".." for each partition's end (its identity
   * too: a rerun takes the range they resolved to the first time); NULL
   * for a replay given by offsets. */
  char          *replay_times;
  /* The kind's own options (kinds/kind.h), loaded by its table; owned by
   * whoever filled the spec. */
  gpointer       options;
} KtJobSpec;
