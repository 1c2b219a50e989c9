/* batchlog.c - the log lines and metrics of a runner's batches (batchlog.h). */
#include "batchlog.h"

/* Where @s stands after a batch of @ranges: the end of its range, or its
 * stored offset (never below the log start). */
static gint64
after_batch (const KtPartitionState *s, const GArray *ranges)
{
  gint64 at = MAX (s->stored, s->low);

  for (guint i = 0; i < ranges->len; i++)
    if (g_array_index (ranges, KtRange, i).partition == s->partition)
      at = g_array_index (ranges, KtRange, i).until;
  return at;
}

/* Each partition's offset and lag after the batch into the metrics;
 * returns the lag of them all. */
static gint64
report_partitions (KtBatchLog *log, const GArray *states, const GArray *ranges)
{
  gint64 lag = 0;

  for (guint j = 0; j < states->len; j++)
    {
      const KtPartitionState *s = &g_array_index (states, KtPartitionState, j);
      gint64 at = after_batch (s, ranges);

      kt_metrics_partition (log->metrics, log->topic, s->partition, at, MAX (0, s->high - at));
      lag += MAX (0, s->high - at);
    }
  return lag;
}

static double
since (gint64 started)
{
  return (double) (g_get_monotonic_time () - started) / G_USEC_PER_SEC;
}

void
kt_batch_log_idle (KtBatchLog *log, const GArray *states, gint64 started)
{
  g_autoptr(GArray) none = g_array_new (FALSE, FALSE, sizeof (KtRange));

  kt_metrics_batch (log->metrics, &(KtBatchReport) { .result = KT_BATCH_IDLE,
                                                      .duration = since (started) });
  report_partitions (log, states, none);
  g_debug ("job %s: batch %" G_GUINT64_FORMAT ": nothing new", log->job, log->batch_no);
}

void
kt_batch_log_fenced (KtBatchLog *log, const GArray *ranges, guint64 records,
                     gint32 partition, gint64 started)
{
  log->fenced++;
  g_message ("job %s: batch %" G_GUINT64_FORMAT ": fenced: %s/%d was moved by another "
             "writer; rolled back, re-planning from the stored offsets", log->job,
             log->batch_no, log->topic, partition);
  kt_metrics_batch (log->metrics, &(KtBatchReport) {
    .result = KT_BATCH_FENCED, .partitions = ranges->len, .records = records,
    .duration = since (started) });
}

/* --on-data-loss skip: the ranges a committed batch skipped. */
static void
report_losses (KtBatchLog *log, const GArray *losses)
{
  for (guint i = 0; i < losses->len; i++)
    {
      const KtDataLoss *l = &g_array_index (losses, KtDataLoss, i);
      g_warning ("job %s: DATA LOSS on %s/%d: offsets [%" G_GINT64_FORMAT ", %"
                 G_GINT64_FORMAT ") are gone (%" G_GINT64_FORMAT " offsets never "
                 "counted); continuing from %" G_GINT64_FORMAT " (--on-data-loss skip)",
                 log->job, log->topic, l->partition, l->from, l->until,
                 l->until - l->from, l->until);
      kt_metrics_data_loss (log->metrics, l->until - l->from);
    }
}

void
kt_batch_log_committed (KtBatchLog *log, const KtJobKind *kind, gpointer state,
                        const GArray *states, const GArray *ranges, const GArray *losses,
                        guint64 records, gint32 moved, gint64 started)
{
  g_autoptr(GString) line = g_string_new (NULL);
  KtBatchSummary summary = { 0 };
  gint64 lag;

  if (moved >= 0)
    {
      log->fenced++;
      g_message ("job %s: batch %" G_GUINT64_FORMAT ": %s/%d was moved by another "
                 "writer: its output stands (idempotent), its offsets are theirs",
                 log->job, log->batch_no, log->topic, moved);
    }
  /* A skipped loss is part of what this batch committed: reported once,
   * here, and not by a batch that failed or was fenced off. */
  report_losses (log, losses);

  g_string_printf (line, "job %s: batch %" G_GUINT64_FORMAT ": %u partitions, %"
                   G_GUINT64_FORMAT " records, ", log->job, log->batch_no, ranges->len,
                   records);
  kind->summarise (state, &summary, line);
  kt_metrics_batch (log->metrics, &(KtBatchReport) {
    .result = moved >= 0 ? KT_BATCH_FENCED : KT_BATCH_COMMITTED, .duration = since (started),
    .partitions = ranges->len, .records = records,
    .lines_error = summary.errors, .lines_malformed = summary.malformed,
    .lines_other = summary.lines - summary.errors - summary.malformed,
    .lines_folded = summary.folded });
  lag = report_partitions (log, states, ranges);
  g_string_append_printf (line, ", %.3f s, lag %" G_GINT64_FORMAT, since (started), lag);
  if (log->fenced > 0 || log->retried > 0)
    g_string_append_printf (line, " (so far %" G_GUINT64_FORMAT " fenced, %" G_GUINT64_FORMAT
                            " commits retried after a deadlock)", log->fenced, log->retried);
  g_log (G_LOG_DOMAIN, log->quiet ? G_LOG_LEVEL_DEBUG : G_LOG_LEVEL_MESSAGE, "%s", line->str);
  log->totals.records += records;
  log->totals.lines += summary.lines;
  log->totals.errors += summary.errors;
  log->totals.malformed += summary.malformed;

  /* Keys past --max-keys: the batch line says how many lines each time,
   * the warning once a minute. */
  log->folded += summary.folded;
  if (log->folded > 0 && started - log->last_folded_at >= 60 * G_USEC_PER_SEC)
    {
      g_warning ("job %s: %" G_GUINT64_FORMAT " lines counted as (other) since the last "
                 "such warning: their keys came past --max-keys in their bucket and "
                 "batch (one warning a minute)", log->job, log->folded);
      log->folded = 0;
      log->last_folded_at = started;
    }
  if (summary.have_sample && started - log->last_sample_at >= 60 * G_USEC_PER_SEC)
    {
      g_autofree char *escaped = g_strescape (summary.sample, NULL);
      g_message ("job %s: %s at %s/%d offset %" G_GINT64_FORMAT "%s%s%s: \"%s\" (one sample "
                 "a minute)", log->job, summary.sample_why, log->topic,
                 summary.sample_partition, summary.sample_offset,
                 *summary.sample_reason ? " (" : "", summary.sample_reason,
                 *summary.sample_reason ? ")" : "", escaped);
      log->last_sample_at = started;
    }
}

/* All at `until`, it did; all at `from`, it did not (and this batch reads
 * the range again); anything else, another writer moved on. */
void
kt_batch_log_unknown (KtBatchLog *log, GArray *ranges, const GArray *states)
{
  guint landed = 0, not_landed = 0;

  for (guint i = 0; i < ranges->len; i++)
    {
      const KtRange *c = &g_array_index (ranges, KtRange, i);
      for (guint j = 0; j < states->len; j++)
        {
          const KtPartitionState *s = &g_array_index (states, KtPartitionState, j);
          if (s->partition != c->partition)
            continue;
          landed += s->stored == c->until;
          not_landed += s->stored == c->from;
        }
    }
  if (landed == ranges->len)
    g_message ("job %s: the commit whose answer was lost did land", log->job);
  else if (not_landed == ranges->len)
    g_message ("job %s: the commit whose answer was lost did not land: "
               "its ranges are read again", log->job);
  else
    g_message ("job %s: the commit whose answer was lost was overtaken by "
               "another writer", log->job);
  g_array_set_size (ranges, 0);
}
