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
      KtRange r = { s->partition, s->stored, s->stored, 0 };

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
                             "--on-data-loss skip to continue from the log start",
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
kt_plan_reread_chunk (KtRange *range, gint64 open_start, gint64 open_until,
                      gint64 low)
{
  if (range->read_from != range->from)
    return;  /* a skipped data loss: reading starts at the log start */
  if (open_start >= 0 && open_start >= low)
    range->read_from = open_start;  /* rewrite the open chunk from its start */
  else if (open_start >= 0)
    /* Its head is gone: keep the row, start a new chunk where it ends
     * (past `from` when the output landed but the offsets did not). */
    range->read_from = MAX (range->from, open_until);
  /* else: nothing of this chunk was ever written (a first batch, --start
   * latest): it starts at from. */

  if (range->read_from > range->until)
    range->until = range->read_from;
}

void
kt_plan_chunks (const KtRange *range, gint64 chunk_size, GArray *bounds)
{
  for (gint64 start = range->read_from; start < range->until;)
    {
      gint64 next = MIN (range->until, start - start % chunk_size + chunk_size);
      g_array_append_val (bounds, start);
      g_array_append_val (bounds, next);
      start = next;
    }
}
