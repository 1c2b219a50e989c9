/* kind-count.c - per-minute counts, transactional (the default kind).
 *
 * One transaction per batch: the fenced offset UPDATEs first, in partition
 * order (a second writer on the job blocks on the first row lock right
 * there, and once the first commits, sees that `offset` moved and backs
 * off without having touched a count), then every minute of the batch
 * added to the output table, then the audit rows. */
#include "kind.h"

#include "counts.h"
#include "error.h"

/* Rows per INSERT: keeps every statement far below max_allowed_packet. */
#define UPSERT_ROWS 1000

typedef struct
{
  KtJob          *job;
  KtParser       *parser;
  KtReducer      *reducer;   /* the batch's minutes */
  GArray         *stats;     /* KtRangeStats per range */
  KtBatchSummary  summary;
} Count;

static void
count_close (gpointer data)
{
  Count *self = data;

  if (self == NULL)
    return;
  kt_parser_free (self->parser);
  kt_reducer_free (self->reducer);
  g_clear_pointer (&self->stats, g_array_unref);
  g_free (self);
}

static gpointer
count_open (KtJob *job, GError **error)
{
  Count *self = g_new0 (Count, 1);

  self->job = job;
  self->parser = kt_counts_parser (job->config, error);
  self->reducer = kt_reducer_new ();
  self->stats = g_array_new (FALSE, TRUE, sizeof (KtRangeStats));
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
  return kt_counts_prepare (self->job->db, FALSE, self->job->output, error);
}

static gboolean
count_plan (gpointer data, GArray *ranges, const GArray *states, GError **error)
{
  Count *self = data;

  (void) states;
  (void) error;
  kt_reducer_clear (self->reducer);
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

  kt_counts_take (self->parser, self->reducer, partition, offset, value, len,
                  &g_array_index (self->stats, KtRangeStats, range), &self->summary);
}

/* Every minute of the batch added to the output table, in minute order
 * (writers lock rows in one order), UPSERT_ROWS at a time. */
static gboolean
add_minutes (Count *self, GError **error)
{
  g_autoptr(GArray) rows = kt_reducer_sorted (self->reducer);
  g_autoptr(GString) sql = g_string_new (NULL);

  for (guint start = 0; start < rows->len; start += UPSERT_ROWS)
    {
      guint end = MIN (rows->len, start + UPSERT_ROWS);

      /* The name is an identifier the CLI checked: quoting it is enough. */
      g_string_printf (sql, "INSERT INTO `%s` (log_time, log_count) VALUES ",
                       self->job->output);
      for (guint i = start; i < end; i++)
        {
          const KtMinuteCount *mc = &g_array_index (rows, KtMinuteCount, i);
          char when[20];

          /* Both values are formatted from integers: nothing to escape. */
          kt_minute_format (mc->minute, when);
          g_string_append_printf (sql, "%s('%s',%" G_GUINT64_FORMAT ")",
                                  i > start ? "," : "", when, mc->count);
        }
      g_string_append (sql, " ON DUPLICATE KEY UPDATE log_count = log_count + VALUES(log_count)");
      if (!kt_db_run (self->job->db, sql->str, "cannot write the counts", error))
        return FALSE;
    }
  return TRUE;
}

static gboolean
count_write (gpointer data, const GArray *ranges, gint32 *fenced, GError **error)
{
  Count *self = data;
  KtJob *job = self->job;

  /* The fence first: a second writer waits on the offset rows, then backs
   * off before it adds a single count. */
  if (!kt_offsets_fence (job->db, job->job, job->topic, ranges, fenced, error))
    return FALSE;
  return *fenced >= 0
         || (add_minutes (self, error)
             && kt_offsets_record (job->db, job->job, job->topic, job->output, job->member,
                                   ranges, (const KtRangeStats *) (void *) self->stats->data,
                                   error));
}

static void
count_summarise (gpointer data, KtBatchSummary *out, GString *line)
{
  Count *self = data;

  *out = self->summary;
  kt_counts_line (out, kt_reducer_size (self->reducer), self->job->config->bucket, line);
}

const KtJobKind kt_kind_count = {
  .kind = "count",
  .mode = "transactional",
  .holds = "counts",
  .parses = TRUE,
  .open = count_open,
  .close = count_close,
  .prepare = count_prepare,
  .plan = count_plan,
  .take = count_take,
  .write = count_write,
  .summarise = count_summarise,
};
