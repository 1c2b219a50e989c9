/* counts.h - what the two count kinds share (kind-count.c,
 * kind-count-idempotent.c): their tables, reading a record into counts,
 * writing them, and their part of a batch's log line.
 *
 * A count table holds a row per bucket (and, with --by, per key) with its
 * count (and, with --sum, exact sums). Without --by and --sum the batch's
 * rows are a KtReducer's minutes (the fast path), with them a KtKeyedCounts'
 * rows; a kind holds either through KtCounts and never asks which. */
#pragma once
#include <glib.h>
#include "job-spec.h"
#include "db.h"
#include "keyed-counts.h"
#include "kind.h"
#include "offsets.h"
#include "parse.h"
#include "reduce.h"
#include "schema.h"

/* The count kinds' own options: how lines read and what they count. */
typedef struct
{
  int     input;        /* --input: KtInput, text lines or structured records */
  char   *time_field;   /* --time-field: the time's path, or NULL: the input's defaults */
  char   *level_field;  /* --level-field: the level's path, or NULL: the input's defaults */
  char   *pattern;      /* --pattern, or NULL: the default line */
  char   *time_format;  /* --time-format, or NULL: the default */
  char  **levels;       /* --levels */
  int     bucket;       /* --bucket in minutes: 1, 5 or 60 */
  char  **dimensions;   /* --by: fields (paths of a structured input), a key column each
                         * after the bucket (kt_field_column()), or NULL */
  char  **sums;         /* --sum: fields, a sum_COLUMN column each, or NULL */
  gint64  max_keys;     /* --max-keys: keys per bucket per batch with a row of their own */
  char   *dead_letters;      /* --dead-letters: the table of malformed lines, or NULL */
  gint64  dead_letters_max;  /* --dead-letters-max: malformed lines kept per batch */
} KtCountOptions;

/* Their rows, filling a KtCountOptions (kind.h). */
extern const KtOption kt_count_option_rows[];

/* The count kinds' options of @context's job (its spec's). */
static inline const KtCountOptions *
kt_counts_options (const KtKindContext *context)
{
  return context->spec->options;
}

/* Checks what the count kinds' options say together (fields of --by and
 * --sum: names of columns, each once): KT_ERROR_USAGE naming the option. */
gboolean  kt_counts_check (gconstpointer options, GError **error);

/* The parser of the job's --pattern, --time-format, --levels, --bucket,
 * --by and --sum. */
KtParser *kt_counts_parser (const KtCountOptions *options, GError **error);

/* The shape of the count table of @options: the columns its --by and
 * --sum fields give (kt_field_column()), in new arrays that
 * kt_counts_shape_clear() frees. */
void      kt_counts_shape  (const KtCountOptions *options, KtCountsShape *out);
void      kt_counts_shape_clear (KtCountsShape *shape);

/* The count table @output in @shape: a table (transactional), or a view
 * over @output + KT_TOPIC_SUFFIX (@idempotent, with the covered sets).
 * A plain error_log is the one sql/counts.sql (sql/idempotent.sql)
 * creates; a job of another table leaves error_log alone. One database
 * holds one mode: an error_log of the other is refused (KT_ERROR_USAGE),
 * and so is, before anything is created, whatever is not what the job
 * writes (kt_schema_check_object(): a view or a sequence where its table
 * must be, a table or a view over anything else where its view must be),
 * a table of another shape, also one another job made in its shape while
 * this one created it, and a name of ktally's own tables
 * (kt_schema_own_table()) unless an older ktally made a count table there. */
gboolean  kt_counts_prepare (KtDb *db, gboolean idempotent, const char *output,
                             const KtCountsShape *shape, GError **error);

/* A count kind's tables: kt_counts_prepare(), and the dead-letter table
 * @dead_letters (or NULL), which is checked before anything is created and
 * created after the counts' (kt_dead_letters_prepare()). */
gboolean  kt_counts_prepare_job (KtDb *db, gboolean idempotent, const char *output,
                                 const KtCountsShape *shape, const char *dead_letters,
                                 GError **error);

/* One batch's rows. */
typedef struct
{
  gint32     partition;  /* the rows' partition, or -1: all of the batch's */
  KtReducer *minutes;    /* without --by and --sum; else NULL */
  KtKeyedCounts *keyed;     /* with them; else NULL */
} KtCounts;

/* Rows for a job of @config: @limit is the batch's --max-keys bound,
 * borrowed (shared by every KtCounts of the batch; NULL without --by). */
KtCounts *kt_counts_new   (const KtCountOptions *options, gint32 partition,
                             KtKeyLimit *limit);
void      kt_counts_free  (KtCounts *self);  /* NULL is fine */
void      kt_counts_clear (KtCounts *self);
/* Rows so far. */
guint     kt_counts_size  (KtCounts *self);

/* Parses one record into @counts, adding what it read to @stats (the
 * audit row) and @summary, whose sample keeps the first malformed line. */
void      kt_counts_take (KtParser *parser, KtCounts *counts, gint32 partition,
                          gint64 offset, const char *value, gsize len,
                          KtRangeStats *stats, KtBatchSummary *summary);

/* Adds the rows of @parts (KtCounts *, @n of them), the rows of one bucket
 * and key added up across them, to @table, in (bucket, key) order
 * (writers lock rows in one order), a thousand rows a statement: as they
 * are (@job NULL: a transactional table of @shape), or as rows of @job and
 * @topic (an idempotent NAME_topic table, schema version 4). */
gboolean  kt_counts_upsert (KtDb *db, const char *table, const KtCountsShape *shape,
                            const char *job, const char *topic, KtCounts *const *parts,
                            guint n, GError **error);

/* reset --rebuild of a range, in the caller's transaction: takes the rows
 * of @counts (what re-reading the range counted, unbounded by
 * --max-keys) back out of the transactional count table @table of
 * @shape: each row lowered by them, and deleted where its count reaches 0.
 * Refused with KT_ERROR_USAGE, before anything is written, where a row is
 * missing or holds less than that, or reaching 0 holds other sums (the
 * table is not what the job counted: edited, or counted by another
 * parser), and where a bucket touched has an (other) row (which keys it
 * folded depended on the batches that counted them). Without @execute,
 * the same reads and checks, no lock, no write. *@rows: the rows it
 * lowers. */
gboolean  kt_counts_retract (KtDb *db, const char *table, const KtCountsShape *shape,
                             KtCounts *counts, gboolean execute, guint *rows,
                             GError **error);

/* --dead-letters: a batch's malformed lines (at most --dead-letters-max,
 * the rest counted), written into their table in the batch's own
 * transaction. A line is its place, (topic, partition, offset, line_no):
 * written again (a batch retried, a replay, a rebuild, another job over
 * the topic reading it too), it is left as it is, so the table holds each
 * malformed line of what was committed once. */
typedef struct _KtDeadLetters KtDeadLetters;

/* The lines of @parser's values, into table @table (NULL: the option is
 * not given: returns NULL). */
KtDeadLetters *kt_dead_letters_new   (const KtCountOptions *options, KtParser *parser);
void           kt_dead_letters_free  (KtDeadLetters *self);  /* NULL is fine */
/* A new batch. */
void           kt_dead_letters_clear (KtDeadLetters *self);  /* NULL is fine */
/* The record whose value the parser reads next. */
void           kt_dead_letters_at    (KtDeadLetters *self, gint32 partition, gint64 offset);
/* The table, checked (a table of dead-letters.sql's shape, not a view, not
 * one of ktally's own names nor the job's @output) and, with @create,
 * created if absent: a kind checks it before it creates anything, and
 * creates it after its own tables. KT_ERROR_USAGE naming --dead-letters. */
gboolean       kt_dead_letters_prepare (KtDb *db, const char *table, const char *output,
                                        gboolean create, GError **error);
/* In the caller's transaction: the lines kept, as rows of @job and @topic
 * (in key order: writers lock in one order). May run again for the same
 * batch (a commit retried). */
gboolean       kt_dead_letters_write (KtDeadLetters *self, KtDb *db, const char *job,
                                      const char *topic, GError **error);
/* Into @summary: the lines kept and those past the bound. */
void           kt_dead_letters_summarise (KtDeadLetters *self, KtBatchSummary *summary);

/* Into @summary: whether @counts fold keys past --max-keys into (other)
 * rows (--by, --sum), and how many lines they folded (added). */
void      kt_counts_summarise (const KtCounts *counts, KtBatchSummary *summary);

/* "L lines, E ERROR, M malformed, K minute buckets" (@rows of them;
 * @bucket: --bucket in minutes, which names the buckets: "5-minute",
 * "hour"), or with --by or --sum "K rows" (of buckets and keys); and the
 * lines counted as (other) past --max-keys. */
void      kt_counts_line (const KtBatchSummary *summary, guint rows, int bucket,
                          GString *line);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (KtDeadLetters, kt_dead_letters_free)

G_DEFINE_AUTOPTR_CLEANUP_FUNC (KtCounts, kt_counts_free)
