/* kind-count.c - per-minute counts, transactional (the default kind).
 *
 * One transaction per batch: the fenced offset UPDATEs first, in partition
 * order (a second writer on the job blocks on the first row lock right
 * there, and once the first commits, sees that `offset` moved and backs
 * off without having touched a count), then every row of the batch (per
 * minute, or per bucket and key with --by) added to the output table, then
 * the audit rows. */
#include "kind.h"

#include "counts.h"
#include "error.h"

/* What the kind keeps from batch to batch. */
typedef struct
{
  KtKindContext  *context;
  KtParser       *parser;
  KtCountsShape   shape;     /* of the output table */
  gpointer        taking;    /* the batch whose malformed lines the parser keeps */
} Count;

/* One batch. */
typedef struct
{
  Count          *kind;
  KtKeyLimit     *limit;     /* --max-keys over the batch */
  KtCounts       *counts;    /* the batch's rows */
  GArray         *stats;     /* KtRangeStats per range */
  KtBatchSummary  summary;
  KtDeadLetters  *dead;      /* --dead-letters, or NULL */
} CountBatch;

static void
count_close (gpointer data)
{
  Count *self = data;

  if (self == NULL)
    return;
  kt_parser_free (self->parser);
  kt_counts_shape_clear (&self->shape);
  g_free (self);
}

static gpointer
count_open (KtKindContext *context, GError **error)
{
  Count *self = g_new0 (Count, 1);

  self->context = context;
  self->parser = kt_counts_parser (kt_counts_options (context), error);
  kt_counts_shape (kt_counts_options (context), &self->shape);
  if (self->parser == NULL)
    {
      count_close (self);
      return NULL;
    }
  return self;
}

static gboolean
count_prepare (gpointer data, GError **error)
{
  Count *self = data;
  return kt_counts_prepare_job (self->context->db, FALSE, self->context->output, &self->shape,
                                kt_counts_options (self->context)->dead_letters, error);
}

static void
count_batch_free (gpointer data)
{
  CountBatch *b = data;

  if (b == NULL)
    return;
  if (b->kind->taking == b)
    {
      kt_parser_set_malformed_func (b->kind->parser, NULL, NULL);
      b->kind->taking = NULL;
    }
  kt_dead_letters_free (b->dead);
  kt_counts_free (b->counts);
  kt_key_limit_free (b->limit);
  g_clear_pointer (&b->stats, g_array_unref);
  g_free (b);
}

static gpointer
count_batch_new (gpointer data, GArray *ranges, const GArray *states,
                 gint64 max_per_partition, gconstpointer prior, GError **error)
{
  Count *self = data;
  const KtCountOptions *options = kt_counts_options (self->context);
  CountBatch *b = g_new0 (CountBatch, 1);

  /* Every batch starts from nothing: where its ranges start is the
   * fence's (the scheduler's), not the kind's. */
  (void) states;
  (void) max_per_partition;
  (void) prior;
  (void) error;
  b->kind = self;
  b->limit = kt_key_limit_new (options->max_keys);
  b->counts = kt_counts_new (options, -1, b->limit);
  b->stats = g_array_new (FALSE, TRUE, sizeof (KtRangeStats));
  g_array_set_size (b->stats, ranges->len);
  /* The parser tells this batch's dead letters from now on. */
  b->dead = kt_dead_letters_new (options, self->parser);
  self->taking = b;
  return b;
}

static void
count_take (gpointer data, guint range, gint32 partition, gint64 offset, const char *value,
            gsize len)
{
  CountBatch *b = data;

  kt_dead_letters_at (b->dead, partition, offset);
  kt_counts_take (b->kind->parser, b->counts, partition, offset, value, len,
                  &g_array_index (b->stats, KtRangeStats, range), &b->summary);
}

static gboolean
count_write (gpointer data, const GArray *ranges, gint32 *fenced, GError **error)
{
  CountBatch *b = data;
  const Count *self = b->kind;
  KtKindContext *context = self->context;

  /* The fence first: a second writer waits on the offset rows, then backs
   * off before it adds a single count. */
  if (!kt_offsets_fence (context->db, context->job, context->topic, ranges, fenced, error))
    return FALSE;
  /* Every row of the batch added to the output table, its malformed lines
   * kept (--dead-letters), its audit rows. */
  return *fenced >= 0
         || (kt_counts_upsert (context->db, context->output, &self->shape, NULL, NULL, &b->counts, 1,
                               error)
             && kt_dead_letters_write (b->dead, context->db, context->job, context->topic, error)
             && kt_offsets_record (context->db, context->job, context->topic, context->output, context->member,
                                   ranges, (const KtRangeStats *) (void *) b->stats->data,
                                   &context->audit_id, error));
}

static gboolean
count_retract (gpointer data, gboolean execute, guint *rows, GError **error)
{
  CountBatch *b = data;
  Count *self = b->kind;
  KtKindContext *context = self->context;

  if (b->counts->keyed != NULL && kt_keyed_counts_folded (b->counts->keyed) > 0)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "read again in one pass, the range has more keys in a bucket than "
                   "--max-keys %" G_GINT64_FORMAT " gives rows of their own, so what it "
                   "counted per key cannot be told apart; refused",
                   kt_counts_options (context)->max_keys);
      return FALSE;
    }
  return kt_counts_retract (context->db, context->output, &self->shape, b->counts, execute, rows,
                            error);
}

static void
count_summarise (gpointer data, KtBatchSummary *out, GString *line)
{
  CountBatch *b = data;

  *out = b->summary;
  kt_dead_letters_summarise (b->dead, out);
  kt_counts_summarise (b->counts, out);
  kt_counts_line (out, kt_counts_size (b->counts), kt_counts_options (b->kind->context)->bucket,
                  line);
}

const KtKind kt_kind_count = {
  .options = kt_count_option_rows,
  .options_size = sizeof (KtCountOptions),
  .check_options = kt_counts_check,
  .kind = "count",
  .mode = "transactional",
  .holds = "counts",
  .parses = TRUE,
  .reread = KT_REREAD_COUNTS_TWICE,
  .rebuilds = TRUE,  /* error_log holds no job column: only when the table is the job's alone */
  .retract = count_retract,
  .anchors = "kafka_offset",
  .open = count_open,
  .close = count_close,
  .prepare = count_prepare,
  .batch_new = count_batch_new,
  .batch_free = count_batch_free,
  .take = count_take,
  .write = count_write,
  .summarise = count_summarise,
};
