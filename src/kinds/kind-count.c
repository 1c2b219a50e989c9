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

typedef struct
{
  KtKindContext  *context;
  KtParser       *parser;
  KtCountsShape   shape;     /* of the output table */
  KtKeyLimit     *limit;     /* --max-keys over the batch */
  KtCounts       *counts;    /* the batch's rows */
  GArray         *stats;     /* KtRangeStats per range */
  KtBatchSummary  summary;
  KtDeadLetters  *dead;      /* --dead-letters, or NULL */
} Count;

static void
count_close (gpointer data)
{
  Count *self = data;

  if (self == NULL)
    return;
  kt_dead_letters_free (self->dead);
  kt_parser_free (self->parser);
  kt_counts_free (self->counts);
  kt_counts_shape_clear (&self->shape);
  kt_key_limit_free (self->limit);
  g_clear_pointer (&self->stats, g_array_unref);
  g_free (self);
}

static gpointer
count_open (KtKindContext *context, GError **error)
{
  Count *self = g_new0 (Count, 1);

  self->context = context;
  self->parser = kt_counts_parser (kt_counts_options (context), error);
  kt_counts_shape (kt_counts_options (context), &self->shape);
  self->limit = kt_key_limit_new (kt_counts_options (context)->max_keys);
  self->counts = kt_counts_new (kt_counts_options (context), -1, self->limit);
  self->stats = g_array_new (FALSE, TRUE, sizeof (KtRangeStats));
  if (self->parser == NULL)
    {
      count_close (self);
      return NULL;
    }
  self->dead = kt_dead_letters_new (kt_counts_options (context), self->parser);
  return self;
}

static gboolean
count_prepare (gpointer data, GError **error)
{
  Count *self = data;
  return kt_counts_prepare_job (self->context->db, FALSE, self->context->output, &self->shape,
                                kt_counts_options (self->context)->dead_letters, error);
}

static gboolean
count_plan (gpointer data, GArray *ranges, const GArray *states,
            gint64 max_per_partition, GError **error)
{
  (void) max_per_partition;
  Count *self = data;

  (void) states;
  (void) error;
  kt_counts_clear (self->counts);
  kt_dead_letters_clear (self->dead);
  kt_key_limit_clear (self->limit);
  g_array_set_size (self->stats, 0);
  g_array_set_size (self->stats, ranges->len);
  self->summary = (KtBatchSummary) { 0 };
  return TRUE;
}

static void
count_take (gpointer data, guint range, gint32 partition, gint64 offset, const char *value,
            gsize len)
{
  Count *self = data;

  kt_dead_letters_at (self->dead, partition, offset);
  kt_counts_take (self->parser, self->counts, partition, offset, value, len,
                  &g_array_index (self->stats, KtRangeStats, range), &self->summary);
}

static gboolean
count_write (gpointer data, const GArray *ranges, gint32 *fenced, GError **error)
{
  Count *self = data;
  KtKindContext *context = self->context;

  /* The fence first: a second writer waits on the offset rows, then backs
   * off before it adds a single count. */
  if (!kt_offsets_fence (context->db, context->job, context->topic, ranges, fenced, error))
    return FALSE;
  /* Every row of the batch added to the output table, its malformed lines
   * kept (--dead-letters), its audit rows. */
  return *fenced >= 0
         || (kt_counts_upsert (context->db, context->output, &self->shape, NULL, NULL, &self->counts, 1,
                               error)
             && kt_dead_letters_write (self->dead, context->db, context->job, context->topic, error)
             && kt_offsets_record (context->db, context->job, context->topic, context->output, context->member,
                                   ranges, (const KtRangeStats *) (void *) self->stats->data,
                                   &context->audit_id, error));
}

static gboolean
count_retract (gpointer data, gboolean execute, guint *rows, GError **error)
{
  Count *self = data;
  KtKindContext *context = self->context;

  if (self->counts->keyed != NULL && kt_keyed_counts_folded (self->counts->keyed) > 0)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "read again in one pass, the range has more keys in a bucket than "
                   "--max-keys %" G_GINT64_FORMAT " gives rows of their own, so what it "
                   "counted per key cannot be told apart; refused",
                   kt_counts_options (context)->max_keys);
      return FALSE;
    }
  return kt_counts_retract (context->db, context->output, &self->shape, self->counts, execute, rows,
                            error);
}

static void
count_summarise (gpointer data, KtBatchSummary *out, GString *line)
{
  Count *self = data;

  *out = self->summary;
  kt_dead_letters_summarise (self->dead, out);
  kt_counts_summarise (self->counts, out);
  kt_counts_line (out, kt_counts_size (self->counts), kt_counts_options (self->context)->bucket, line);
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
  .plan = count_plan,
  .take = count_take,
  .write = count_write,
  .summarise = count_summarise,
};
