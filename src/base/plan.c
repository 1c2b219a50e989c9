/* plan.c - the batch planner (the scheduler's arithmetic). */
#include "plan.h"
#include "error.h"

gboolean
kt_plan_make (const KtPartitionState *states, guint n_states,
              gint64 max_per_partition, KtOnDataLoss on_data_loss,
              GArray *ranges, GArray *losses, GError **error)
{
  g_return_val_if_fail (max_per_partition > 0, FALSE);

  for (guint i = 0; i < n_states; i++)
    {
      const KtPartitionState *s = &states[i];
      KtRange r = { .partition = s->partition, .from = s->stored, .read_from = s->stored };

      if (s->stored < s->low || s->stored > s->high)
        {
          /* Below the log start: retention removed [stored, low) before we
           * read it. Beyond the high watermark: the partition was truncated
           * or the topic recreated, so what we stored no longer exists.
           * Either way the counts cannot be exact any more. */
          KtDataLoss loss = { s->partition, s->stored,
                              s->stored < s->low ? s->low : s->high };

          if (on_data_loss == KT_DATA_LOSS_FAIL)
            {
              if (s->stored < s->low)
                g_set_error (error, KT_ERROR, KT_ERROR_DATA_LOSS,
                             "partition %d: offsets [%" G_GINT64_FORMAT ", %"
                             G_GINT64_FORMAT ") were lost to retention before "
                             "they were read (stored offset %" G_GINT64_FORMAT
                             ", log start %" G_GINT64_FORMAT "); rerun with "
                             "--on-data-loss skip to continue from the log start",
                             s->partition, s->stored, s->low, s->stored, s->low);
              else
                g_set_error (error, KT_ERROR, KT_ERROR_DATA_LOSS,
                             "partition %d: stored offset %" G_GINT64_FORMAT
                             " is beyond the high watermark %" G_GINT64_FORMAT
                             " (topic recreated or truncated?); rerun with "
                             "--on-data-loss skip to continue from the log start (an "
                             "idempotent job cannot: `ktally forget` it first)",
                             s->partition, s->stored, s->high);
              return FALSE;
            }
          if (losses != NULL)
            g_array_append_val (losses, loss);
          r.read_from = s->low;
        }

      r.until = MIN (s->high, r.read_from + max_per_partition);
      /* A skipped loss moves the stored offset even when nothing is left
       * to read, so the warning is given once, not every batch. */
      if (r.until > r.read_from || r.from != r.read_from)
        g_array_append_val (ranges, r);
    }
  return TRUE;
}

gint64
kt_plan_span (const GArray *ranges)
{
  gint64 span = 0;
  for (guint i = 0; i < ranges->len; i++)
    {
      const KtRange *r = &g_array_index (ranges, KtRange, i);
      span += r->until - r->read_from;
    }
  return span;
}

void
kt_plan_skip_covered (KtRange *range, const KtCoverage *covered, gint64 high,
                      gint64 max_per_partition)
{
  gint64 first = MIN (kt_coverage_next_gap (covered, range->read_from), high);

  if (first <= range->read_from)
    return;
  range->read_from = first;
  if (range->until <= first)
    range->until = MIN (high, first + max_per_partition);
  range->until = MAX (range->until, range->read_from);
}

void
kt_plan_advance (GArray *states, const GArray *ranges)
{
  for (guint i = 0; i < ranges->len; i++)
    {
      const KtRange *r = &g_array_index (ranges, KtRange, i);

      for (guint j = 0; j < states->len; j++)
        if (g_array_index (states, KtPartitionState, j).partition == r->partition)
          g_array_index (states, KtPartitionState, j).stored = r->until;
    }
}

void
kt_range_stats_add (KtRangeStats *into, const KtRangeStats *more)
{
  into->records += more->records;
  into->lines += more->lines;
  into->errors += more->errors;
  into->malformed += more->malformed;
}
