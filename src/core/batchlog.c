/* batchlog.c - the log lines and metrics of a runner's batches (batchlog.h).
 *
 * Each line a machine may want to read is a KtLogEvent (log.h): the text
 * people read, plus its figures as fields (event, job, batch, records...),
 * which --log-format json and logfmt write and journald keeps. */
#include "batchlog.h"

#include "log.h"

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

/* Each partition's offset and lag after the batch into the metrics, and
 * where some is left, when its oldest record was written (the lag in
 * time); returns the lag of them all. */
static gint64
report_partitions (KtBatchLog *log, const GArray *states, const GArray *ranges)
{
  gint64 lag = 0;

  for (guint j = 0; j < states->len; j++)
    {
      const KtPartitionState *s = &g_array_index (states, KtPartitionState, j);
      gint64 at = after_batch (s, ranges);

      gint64 unread = s->high > at && log->source != NULL
                      ? kt_source_unread_timestamp (log->source, s->partition, at) : 0;

      kt_metrics_partition (log->metrics, log->topic, s->partition, at, s->high,
                            MAX (unread, 0));
      lag += MAX (0, s->high - at);
    }
  return lag;
}

static double
since (gint64 started)
{
  return (double) (g_get_monotonic_time () - started) / G_USEC_PER_SEC;
}

/* An event of this runner's batch: its job, topic and turn of the loop
 * (every batch tried, idle and failed ones too: not what names a
 * committed batch, its audit id). */
static KtLogEvent *
batch_event (KtBatchLog *log, const char *event)
{
  KtLogEvent *e = kt_log_event_new (event);

  kt_log_event_string (e, "job", log->job);
  kt_log_event_string (e, "topic", log->topic);
  kt_log_event_int (e, "turn", (gint64) log->batch_no);
  return e;
}

void
kt_batch_log_start (KtBatchLog *log, const char *topics, guint partitions,
                    const char *database, const char *transport, const char *table,
                    const char *kind, const char *mode, gboolean offsets_in_kafka,
                    double interval)
{
  g_autoptr(KtLogEvent) e = kt_log_event_new ("start");

  kt_log_event_string (e, "job", log->job);
  kt_log_event_string (e, "topic", topics);
  kt_log_event_int (e, "partitions", partitions);
  kt_log_event_string (e, "database", database);  /* of a hosts list: the server in use */
  kt_log_event_string (e, "transport", transport);
  kt_log_event_string (e, "table", table);
  kt_log_event_string (e, "kind", kind);
  kt_log_event_string (e, "mode", mode);
  kt_log_event_double (e, "interval", interval, 3);
  kt_log_event_emit (e, G_LOG_LEVEL_MESSAGE, "job %s: reading %s (%u partition%s) into %s.%s "
                     "(over %s), %s %s%s, every %g s", log->job, topics, partitions,
                     partitions == 1 ? "" : "s", database, table,
                     transport != NULL ? transport : "?", kind, mode,
                     offsets_in_kafka ? " with offsets in Kafka" : "", interval);
}

/* A batch that ran to a known end after failed ones: the outage is over. */
static void
report_back (KtBatchLog *log)
{
  g_autoptr(KtLogEvent) e = NULL;
  double seconds;

  if (log->outage_since == 0)
    return;
  seconds = since (log->outage_since);
  e = batch_event (log, "recovered");
  /* The field in the retry events' spelling, the text in people's. */
  kt_log_event_string (e, "cause", log->outage_cause);
  kt_log_event_double (e, "duration", seconds, 3);
  kt_log_event_int (e, "failed", log->outage_failures);
  kt_log_event_emit (e, G_LOG_LEVEL_MESSAGE, "job %s: %s back after %.1f s (%u failed "
                     "batch%s)", log->job,
                     g_str_equal (log->outage_cause, "kafka") ? "Kafka" : "MySQL", seconds,
                     log->outage_failures, log->outage_failures == 1 ? "" : "es");
  log->outage_since = 0;
  log->outage_failures = 0;
}

void
kt_batch_log_failed (KtBatchLog *log, const char *cause, const char *message, double backoff,
                     gint64 started)
{
  g_autoptr(KtLogEvent) e = batch_event (log, "retry");

  kt_metrics_batch (log->metrics, &(KtBatchReport) {
    .result = KT_BATCH_FAILED, .error = message, .duration = since (started) });
  kt_metrics_retry (log->metrics, cause);
  /* An outage is of a service (a deadlock is not one): its end is said. */
  if (log->outage_since == 0 && (g_str_equal (cause, "mysql") || g_str_equal (cause, "kafka")))
    {
      log->outage_since = started;
      log->outage_cause = g_str_equal (cause, "kafka") ? "kafka" : "mysql";
    }
  if (log->outage_since != 0)
    log->outage_failures++;
  kt_log_event_string (e, "cause", cause);
  kt_log_event_double (e, "backoff", backoff, 3);
  /* Whether it landed is said by the next batch (kt_batch_log_unknown). */
  kt_log_event_int (e, "lost_commit", log->lost_commit);
  log->lost_commit = FALSE;
  kt_log_event_emit (e, G_LOG_LEVEL_WARNING, "job %s: %s; retrying in %g s", log->job, message,
                     backoff);
}

void
kt_batch_log_abandoned (KtBatchLog *log, const char *cause, const char *message)
{
  g_autoptr(KtLogEvent) e = batch_event (log, "abandoned");

  kt_metrics_retry (log->metrics, cause);
  kt_log_event_string (e, "cause", cause);
  kt_log_event_emit (e, G_LOG_LEVEL_MESSAGE, "job %s: %s", log->job, message);
}

void
kt_batch_log_commit_again (KtBatchLog *log, const char *message, guint attempt,
                           guint attempts)
{
  g_autoptr(KtLogEvent) e = batch_event (log, "commit-again");

  log->retried++;
  kt_metrics_retry (log->metrics, "deadlock");
  kt_log_event_int (e, "attempt", attempt);
  kt_log_event_emit (e, G_LOG_LEVEL_MESSAGE, "job %s: %s; committing again (%u/%u)", log->job,
                     message, attempt, attempts);
}

void
kt_batch_log_idle (KtBatchLog *log, const GArray *states, gint64 started)
{
  g_autoptr(GArray) none = g_array_new (FALSE, FALSE, sizeof (KtRange));

  kt_metrics_batch (log->metrics, &(KtBatchReport) { .result = KT_BATCH_IDLE,
                                                      .duration = since (started) });
  report_partitions (log, states, none);
  report_back (log);
  g_debug ("job %s: turn %" G_GUINT64_FORMAT ": nothing new", log->job, log->batch_no);
}

void
kt_batch_log_fenced (KtBatchLog *log, const GArray *ranges, guint64 records,
                     gint32 partition, gint64 started)
{
  g_autoptr(KtLogEvent) e = batch_event (log, "fenced");

  log->fenced++;
  report_back (log);
  kt_log_event_int (e, "partition", partition);
  kt_log_event_int (e, "records", (gint64) records);
  if (log->ahead_of > 0)
    kt_log_event_int (e, "ahead_of", (gint64) log->ahead_of);
  kt_log_event_emit (e, G_LOG_LEVEL_MESSAGE, "job %s: fenced: %s/%d was moved by another "
                     "writer; rolled back, re-planning from the stored offsets", log->job,
                     log->topic, partition);
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
      g_autoptr(KtLogEvent) e = batch_event (log, "data-loss");

      kt_log_event_int (e, "partition", l->partition);
      kt_log_event_int (e, "from", l->from);
      kt_log_event_int (e, "until", l->until);
      kt_log_event_int (e, "offsets", MAX (0, l->until - l->from));
      if (l->until < l->from)
        {
          /* Past the log's end: no count of what is gone, only that the
           * log is not the one the stored offset was in. */
          kt_log_event_emit (e, G_LOG_LEVEL_WARNING, "job %s: DATA LOSS on %s/%d: the stored "
                             "offset %" G_GINT64_FORMAT " is beyond the log's end %"
                             G_GINT64_FORMAT " (topic recreated or truncated?): continuing "
                             "from the log start (--on-data-loss skip)", log->job, log->topic,
                             l->partition, l->from, l->until);
          continue;
        }
      kt_log_event_emit (e, G_LOG_LEVEL_WARNING, "job %s: DATA LOSS on %s/%d: offsets [%"
                         G_GINT64_FORMAT ", %" G_GINT64_FORMAT ") are gone (%" G_GINT64_FORMAT
                         " offsets never counted); continuing from %" G_GINT64_FORMAT
                         " (--on-data-loss skip)", log->job, log->topic, l->partition,
                         l->from, l->until, l->until - l->from, l->until);
      kt_metrics_data_loss (log->metrics, l->until - l->from);
    }
}

/* Lines the kind folded into catch-all rows: the batch line says how
 * many each time (@summary's of this batch), the warning once a minute. */
static void
report_folded (KtBatchLog *log, const KtBatchSummary *summary, gint64 started)
{
  g_autoptr(KtLogEvent) e = NULL;

  log->folded += summary->folded;
  if (log->folded == 0 || started - log->last_folded_at < 60 * G_USEC_PER_SEC)
    return;
  e = batch_event (log, "folded");
  kt_log_event_int (e, "lines", (gint64) log->folded);
  kt_log_event_emit (e, G_LOG_LEVEL_WARNING, "job %s: %" G_GUINT64_FORMAT " lines counted "
                     "as %s since the last such warning: %s (one warning a minute)",
                     log->job, log->folded, summary->folded_into, summary->folded_why);
  log->folded = 0;
  log->last_folded_at = started;
}

/* Seconds from @from to @to, 0 when either is unknown. */
static double
stage (gint64 from, gint64 to)
{
  return from > 0 && to >= from ? (double) (to - from) / G_USEC_PER_SEC : 0;
}

void
kt_batch_log_committed (KtBatchLog *log, const KtKind *kind, gpointer batch,
                        const GArray *states, const GArray *ranges, const GArray *losses,
                        guint64 records, gint64 bytes, gint32 moved, gint64 audit_id,
                        const KtBatchTimes *times)
{
  gint64 started = times->started;
  g_autoptr(GString) line = g_string_new (NULL);
  g_autoptr(KtLogEvent) e = batch_event (log, "batch");
  KtBatchSummary summary = { 0 };
  double duration;
  gint64 lag;

  report_back (log);
  if (moved >= 0)
    {
      g_autoptr(KtLogEvent) m = batch_event (log, "moved");

      log->fenced++;
      kt_log_event_int (m, "batch", audit_id);
      kt_log_event_int (m, "partition", moved);
      kt_log_event_emit (m, G_LOG_LEVEL_MESSAGE, "job %s: batch %" G_GINT64_FORMAT ": %s/%d "
                         "was moved by another writer: its output stands (idempotent), its "
                         "offsets are theirs", log->job, audit_id, log->topic, moved);
    }
  /* A skipped loss is part of what this batch committed: reported once,
   * here, and not by a batch that failed or was fenced off. */
  report_losses (log, losses);

  g_string_printf (line, "job %s: batch %" G_GINT64_FORMAT ": %u partition%s, %"
                   G_GUINT64_FORMAT " record%s, ", log->job, audit_id, ranges->len,
                   ranges->len == 1 ? "" : "s", records, records == 1 ? "" : "s");
  kind->summarise (batch, &summary, line);
  duration = since (started);
  kt_metrics_batch (log->metrics, &(KtBatchReport) {
    .result = moved >= 0 ? KT_BATCH_FENCED : KT_BATCH_COMMITTED, .duration = duration,
    .partitions = ranges->len, .records = records, .bytes = (guint64) MAX (bytes, 0),
    .lines_error = summary.counted, .lines_malformed = summary.malformed,
    .lines_other = summary.lines - summary.counted - summary.malformed,
    .lines_folded = summary.folded, .dead_kept = summary.kept,
    .dead_dropped = summary.dropped });
  lag = report_partitions (log, states, ranges);
  g_string_append_printf (line, ", %.3f s, lag %" G_GINT64_FORMAT, duration, lag);
  if (log->fenced > 0 || log->retried > 0)
    g_string_append_printf (line, " (so far %" G_GUINT64_FORMAT " fenced, %" G_GUINT64_FORMAT
                            " commits retried after a deadlock)", log->fenced, log->retried);
  kt_log_event_int (e, "batch", audit_id);
  if (log->ahead_of > 0)
    kt_log_event_int (e, "ahead_of", (gint64) log->ahead_of);
  kt_log_event_int (e, "partitions", ranges->len);
  kt_log_event_int (e, "records", (gint64) records);
  kt_log_event_int (e, "bytes", bytes);
  kt_log_event_int (e, "lines", (gint64) summary.lines);
  kt_log_event_int (e, "errors", (gint64) summary.counted);
  kt_log_event_int (e, "malformed", (gint64) summary.malformed);
  if (summary.folds || summary.folded > 0)
    kt_log_event_int (e, "folded", (gint64) summary.folded);
  if (summary.kept_in != NULL)
    {
      kt_log_event_int (e, "dead_letters", (gint64) summary.kept);
      kt_log_event_int (e, "dead_letters_dropped", (gint64) summary.dropped);
    }
  kt_log_event_double (e, "duration", duration, 3);
  /* The stages' shares of it (a structured log's fields only): planning,
   * reading, waiting for the batch before to land, committing. */
  kt_log_event_double (e, "plan", stage (times->started, times->planned), 3);
  kt_log_event_double (e, "read", stage (times->planned, times->read), 3);
  kt_log_event_double (e, "wait", stage (times->read, times->committing), 3);
  kt_log_event_double (e, "commit", stage (times->committing, times->committed), 3);
  kt_log_event_int (e, "lag", lag);
  kt_log_event_emit (e, log->quiet ? G_LOG_LEVEL_DEBUG : G_LOG_LEVEL_MESSAGE, "%s", line->str);
  log->totals.records += records;
  log->totals.lines += summary.lines;
  log->totals.errors += summary.counted;
  log->totals.malformed += summary.malformed;

  report_folded (log, &summary, started);
  if (summary.have_sample && started - log->last_sample_at >= 60 * G_USEC_PER_SEC)
    {
      g_autofree char *escaped = g_strescape (summary.sample, NULL);
      g_autoptr(KtLogEvent) sample = batch_event (log, "sample");

      kt_log_event_string (sample, "what", summary.sample_why);
      kt_log_event_int (sample, "partition", summary.sample_partition);
      kt_log_event_int (sample, "offset", summary.sample_offset);
      kt_log_event_emit (sample, G_LOG_LEVEL_MESSAGE, "job %s: %s at %s/%d offset %"
                         G_GINT64_FORMAT "%s%s%s: \"%s\" (one sample a minute)", log->job,
                         summary.sample_why, log->topic, summary.sample_partition,
                         summary.sample_offset, *summary.sample_reason ? " (" : "",
                         summary.sample_reason, *summary.sample_reason ? ")" : "", escaped);
      log->last_sample_at = started;
    }
}

/* All at `until`, it did; all at `from`, it did not (and this batch reads
 * the range again); anything else, another writer moved on. */
void
kt_batch_log_unknown (KtBatchLog *log, GArray *ranges, const GArray *states)
{
  g_autoptr(KtLogEvent) e = batch_event (log, "lost-commit");
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
    {
      kt_log_event_string (e, "outcome", "landed");
      kt_log_event_emit (e, G_LOG_LEVEL_MESSAGE, "job %s: the commit whose answer was lost "
                         "did land", log->job);
    }
  else if (not_landed == ranges->len)
    {
      kt_log_event_string (e, "outcome", "not-landed");
      kt_log_event_emit (e, G_LOG_LEVEL_MESSAGE, "job %s: the commit whose answer was lost "
                         "did not land: its ranges are read again", log->job);
    }
  else
    {
      kt_log_event_string (e, "outcome", "overtaken");
      kt_log_event_emit (e, G_LOG_LEVEL_MESSAGE, "job %s: the commit whose answer was lost "
                         "was overtaken by another writer", log->job);
    }
  g_array_set_size (ranges, 0);
}
