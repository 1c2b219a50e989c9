/* run.c - the batch scheduler: plan -> read -> parse -> reduce -> commit.
 *
 * One batch is run_batch(); everything else here is the service around it:
 * start-up checks, retries with backoff, the interval clock, signals. The
 * only state carried from one batch to the next is in MySQL: each batch
 * plans from the offsets it reads back, so a crash, a restart or a second
 * writer never needs special cases here. */
#include "run.h"

#include <string.h>
#include "error.h"
#include "parse.h"
#include "reduce.h"
#include "sink.h"
#include "source.h"

#define BACKOFF_MAX_S      30.0
#define METADATA_EVERY_US  (60 * G_USEC_PER_SEC)
#define KAFKA_TIMEOUT_MS   10000
#define STALL_MS           30000
#define SAMPLE_EVERY_US    (60 * G_USEC_PER_SEC)
#define SAMPLE_BYTES       120

typedef struct
{
  const KtConfig *config;
  const volatile int *stop;
  KtSource  *source;
  KtSink    *sink;
  KtParser  *parser;
  KtReducer *reducer;
  GArray    *partitions;  /* gint32, ascending */
  gint64     metadata_at; /* monotonic time of the last partition list */
  guint64    batch_no;
  /* Set when a COMMIT's answer was lost: the next batch reads the offsets
   * back and says whether it landed. */
  GArray    *unknown_commit;
  gint64     last_sample_at;
} Runner;

/* What one batch read. */
typedef struct
{
  Runner        *runner;
  KtParseCounts  counts;
  guint64        records;
  gboolean       have_sample;
  gint32         sample_partition;
  gint64         sample_offset;
  char           sample[SAMPLE_BYTES + 1];
} BatchReading;

/* Sleeps @seconds, waking early when *stop is set. */
static void
nap (const volatile int *stop, double seconds)
{
  gint64 until = g_get_monotonic_time () + (gint64) (seconds * G_USEC_PER_SEC);

  while (!*stop)
    {
      gint64 left = until - g_get_monotonic_time ();
      if (left <= 0)
        break;
      g_usleep (MIN (left, 50000));
    }
}

static void
on_record (gint32 partition, gint64 offset, const char *value, gsize len,
           gpointer user_data)
{
  BatchReading *b = user_data;
  const char *bad = NULL;
  gsize bad_len = 0;

  b->records++;
  if (kt_parser_value (b->runner->parser, value, len, b->runner->reducer,
                       &b->counts, &bad, &bad_len) > 0
      && !b->have_sample)
    {
      b->have_sample = TRUE;
      b->sample_partition = partition;
      b->sample_offset = offset;
      memcpy (b->sample, bad, MIN (bad_len, SAMPLE_BYTES));
      b->sample[MIN (bad_len, SAMPLE_BYTES)] = '\0';
    }
}

/* Reads the stored offsets of every partition into @states, creating the
 * rows of partitions seen for the first time, then the watermarks. The
 * offsets come first: a stored offset is never ahead of the high watermark
 * asked after it, even while another writer commits. */
static gboolean
load_states (Runner *r, GArray *states, GError **error)
{
  const KtConfig *config = r->config;
  KtPartitionState *s;
  gboolean missing = FALSE;

  g_array_set_size (states, r->partitions->len);
  s = (KtPartitionState *) (void *) states->data;
  for (guint i = 0; i < states->len; i++)
    s[i] = (KtPartitionState) { g_array_index (r->partitions, gint32, i), -1, 0, 0 };

  if (!kt_sink_load_offsets (r->sink, config->job, config->topic, s, states->len, error)
      || !kt_source_watermarks (r->source, s, states->len, KAFKA_TIMEOUT_MS, error))
    return FALSE;

  for (guint i = 0; i < states->len; i++)
    if (s[i].stored < 0)
      {
        gint64 at = config->start == KT_START_LATEST ? s[i].high : s[i].low;

        missing = TRUE;
        g_message ("job %s: %s/%d is new: starting at its %s offset %" G_GINT64_FORMAT,
                   config->job, config->topic, s[i].partition,
                   config->start == KT_START_LATEST ? "latest" : "earliest", at);
        if (!kt_sink_init_offset (r->sink, config->job, config->topic,
                                  s[i].partition, at, error))
          return FALSE;
      }
  if (missing)
    return kt_sink_load_offsets (r->sink, config->job, config->topic, s, states->len, error)
           && kt_source_watermarks (r->source, s, states->len, KAFKA_TIMEOUT_MS, error);
  return TRUE;
}

/* Says whether the commit whose answer was lost landed, from the offsets
 * now stored: all at `until`, it did; all at `from`, it did not (and this
 * batch reads the range again); anything else, another writer moved on. */
static void
report_unknown_commit (Runner *r, GArray *states)
{
  guint landed = 0, not_landed = 0;

  for (guint i = 0; i < r->unknown_commit->len; i++)
    {
      const KtRange *c = &g_array_index (r->unknown_commit, KtRange, i);
      for (guint j = 0; j < states->len; j++)
        {
          const KtPartitionState *s = &g_array_index (states, KtPartitionState, j);
          if (s->partition != c->partition)
            continue;
          landed += s->stored == c->until;
          not_landed += s->stored == c->from;
        }
    }
  if (landed == r->unknown_commit->len)
    g_message ("job %s: the commit whose answer was lost did land", r->config->job);
  else if (not_landed == r->unknown_commit->len)
    g_message ("job %s: the commit whose answer was lost did not land: "
               "its ranges are read again", r->config->job);
  else
    g_message ("job %s: the commit whose answer was lost was overtaken by "
               "another writer", r->config->job);
  g_array_set_size (r->unknown_commit, 0);
}

/* One micro-batch. Returns TRUE when it ran to a known end (committed,
 * fenced, or nothing to do: *@idle), FALSE with the error otherwise. */
static gboolean
run_batch (Runner *r, gboolean *idle, GError **error)
{
  const KtConfig *config = r->config;
  g_autoptr(GArray) states = g_array_new (FALSE, TRUE, sizeof (KtPartitionState));
  g_autoptr(GArray) ranges = g_array_new (FALSE, TRUE, sizeof (KtRange));
  g_autoptr(GArray) losses = g_array_new (FALSE, TRUE, sizeof (KtDataLoss));
  BatchReading reading = { .runner = r };
  KtCommitResult result;
  gint32 fenced = -1;
  gint64 started = g_get_monotonic_time (), lag = 0;
  guint n_ranges;

  *idle = FALSE;

  /* Plan. Partitions added to the topic are picked up within a minute. */
  if (started - r->metadata_at >= METADATA_EVERY_US)
    {
      if (!kt_source_partitions (r->source, r->partitions, KAFKA_TIMEOUT_MS, error))
        return FALSE;
      r->metadata_at = started;
    }
  if (!load_states (r, states, error))
    return FALSE;
  if (r->unknown_commit->len > 0)
    report_unknown_commit (r, states);
  if (!kt_plan_make ((const KtPartitionState *) (void *) states->data, states->len,
                     config->max_per_partition, config->on_data_loss, ranges,
                     losses, error))
    {
      g_prefix_error (error, "topic %s, ", config->topic);
      return FALSE;
    }
  for (guint i = 0; i < losses->len; i++)
    {
      const KtDataLoss *l = &g_array_index (losses, KtDataLoss, i);
      g_warning ("job %s: DATA LOSS on %s/%d: offsets [%" G_GINT64_FORMAT ", %"
                 G_GINT64_FORMAT ") are gone (%" G_GINT64_FORMAT " offsets never "
                 "counted); continuing from %" G_GINT64_FORMAT " (--on-data-loss skip)",
                 config->job, config->topic, l->partition, l->from, l->until,
                 l->until - l->from, l->until);
    }
  if (ranges->len == 0)
    {
      *idle = TRUE;
      g_debug ("job %s: batch %" G_GUINT64_FORMAT ": nothing new", config->job,
               r->batch_no);
      return TRUE;
    }

  /* Read, parse, reduce: the source hands each record to on_record(). */
  kt_reducer_clear (r->reducer);
  if (!kt_source_read (r->source, ranges, on_record, &reading, r->stop, STALL_MS, error))
    return FALSE;

  /* The byte cap may have left a partition with nothing read: nothing to
   * commit for it either. */
  n_ranges = 0;
  for (guint i = 0; i < ranges->len; i++)
    {
      KtRange *rg = &g_array_index (ranges, KtRange, i);
      if (rg->until > rg->from)
        g_array_index (ranges, KtRange, n_ranges++) = *rg;
    }
  g_array_set_size (ranges, n_ranges);

  /* Commit: counts and offsets in one transaction. */
  if (!kt_sink_commit (r->sink, config->job, config->topic, ranges, r->reducer,
                       &result, &fenced, error))
    {
      if (result == KT_COMMIT_UNKNOWN)
        {
          g_array_set_size (r->unknown_commit, 0);
          g_array_append_vals (r->unknown_commit, ranges->data, ranges->len);
          g_prefix_error (error, "the answer to COMMIT was lost (the offsets will "
                          "tell whether it landed): ");
        }
      return FALSE;
    }
  if (result == KT_COMMIT_FENCED)
    {
      g_message ("job %s: batch %" G_GUINT64_FORMAT ": fenced: %s/%d was moved by "
                 "another writer; rolled back, re-planning from the stored offsets",
                 config->job, r->batch_no, config->topic, fenced);
      return TRUE;
    }

  for (guint i = 0; i < ranges->len; i++)
    {
      const KtRange *rg = &g_array_index (ranges, KtRange, i);
      for (guint j = 0; j < states->len; j++)
        if (g_array_index (states, KtPartitionState, j).partition == rg->partition)
          lag += g_array_index (states, KtPartitionState, j).high - rg->until;
    }
  for (guint j = 0; j < states->len; j++)
    {
      const KtPartitionState *s = &g_array_index (states, KtPartitionState, j);
      gboolean planned = FALSE;
      for (guint i = 0; i < ranges->len; i++)
        planned |= g_array_index (ranges, KtRange, i).partition == s->partition;
      if (!planned && s->stored >= s->low)
        lag += s->high - s->stored;
    }

  g_message ("job %s: batch %" G_GUINT64_FORMAT ": %u partitions, %" G_GUINT64_FORMAT
             " records, %" G_GUINT64_FORMAT " lines, %" G_GUINT64_FORMAT " ERROR, %"
             G_GUINT64_FORMAT " malformed, %u minutes, %.3f s, lag %" G_GINT64_FORMAT,
             config->job, r->batch_no, ranges->len, reading.records,
             reading.counts.lines, reading.counts.errors, reading.counts.malformed,
             kt_reducer_size (r->reducer),
             (double) (g_get_monotonic_time () - started) / G_USEC_PER_SEC, lag);

  if (reading.have_sample && started - r->last_sample_at >= SAMPLE_EVERY_US)
    {
      g_autofree char *escaped = g_strescape (reading.sample, NULL);
      g_message ("job %s: malformed line at %s/%d offset %" G_GINT64_FORMAT
                 ": \"%s\" (one sample a minute)", config->job, config->topic,
                 reading.sample_partition, reading.sample_offset, escaped);
      r->last_sample_at = started;
    }
  return TRUE;
}

/* Retries @what (a start-up step) until it works, fails for good, or the
 * start-up timeout passes. */
typedef gboolean (*StartupStep) (Runner *r, int timeout_ms, GError **error);

static gboolean
retry_startup (Runner *r, StartupStep step, const char *what, GError **error)
{
  gint64 deadline = g_get_monotonic_time ()
                    + (gint64) (r->config->startup_timeout * G_USEC_PER_SEC);
  double delay = 0.25;

  for (;;)
    {
      g_autoptr(GError) local = NULL;
      gint64 left_ms = (deadline - g_get_monotonic_time ()) / 1000;

      if (step (r, (int) MAX (left_ms, 100), &local))
        return TRUE;
      if (!g_error_matches (local, KT_ERROR, KT_ERROR_TRANSIENT)
          || g_get_monotonic_time () + (gint64) (delay * G_USEC_PER_SEC) >= deadline
          || *r->stop)
        {
          if (g_error_matches (local, KT_ERROR, KT_ERROR_TRANSIENT))
            g_prefix_error (&local, "%s: gave up after %g s: ", what,
                            r->config->startup_timeout);
          g_propagate_error (error, g_steal_pointer (&local));
          return FALSE;
        }
      g_debug ("%s: %s; retrying in %.2f s", what, local->message, delay);
      nap (r->stop, delay);
      delay = MIN (delay * 2, 2.0);
    }
}

static gboolean
startup_kafka (Runner *r, int timeout_ms, GError **error)
{
  if (!kt_source_partitions (r->source, r->partitions, timeout_ms, error))
    return FALSE;
  r->metadata_at = g_get_monotonic_time ();
  return TRUE;
}

static gboolean
startup_mysql (Runner *r, int timeout_ms, GError **error)
{
  (void) timeout_ms;
  return kt_sink_connect (r->sink, error);
}

static void
runner_clear (Runner *r)
{
  g_clear_pointer (&r->source, kt_source_free);
  g_clear_pointer (&r->sink, kt_sink_free);
  g_clear_pointer (&r->parser, kt_parser_free);
  g_clear_pointer (&r->reducer, kt_reducer_free);
  g_clear_pointer (&r->partitions, g_array_unref);
  g_clear_pointer (&r->unknown_commit, g_array_unref);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Runner, runner_clear)

gboolean
kt_run (const KtConfig *config, const volatile int *stop, GError **error)
{
  g_auto(Runner) r = { .config = config, .stop = stop };
  KtSourceConfig source_config = {
    .brokers = config->brokers,
    .topic = config->topic,
    .client_id = config->job,
    .properties = (const char *const *) config->kafka_properties,
    .max_batch_bytes = config->max_batch_bytes,
  };
  double backoff = 0;
  gboolean present;

  if (config->mode != KT_MODE_TRANSACTIONAL)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE,
                           "--mode: only 'transactional' is available in this version");
      return FALSE;
    }

  r.source = kt_source_new (&source_config, error);
  if (r.source == NULL)
    return FALSE;
  r.sink = kt_sink_new (&config->db);
  r.parser = kt_parser_new (error);
  if (r.parser == NULL)
    return FALSE;
  r.reducer = kt_reducer_new ();
  r.partitions = g_array_new (FALSE, FALSE, sizeof (gint32));
  r.unknown_commit = g_array_new (FALSE, FALSE, sizeof (KtRange));

  /* Kafka first: an unknown topic must not leave tables behind. */
  if (!retry_startup (&r, startup_kafka, "Kafka", error)
      || !retry_startup (&r, startup_mysql, "MySQL", error))
    {
      if (!*stop)
        return FALSE;
      g_clear_error (error);  /* asked to stop while waiting: not a failure */
      return TRUE;
    }
  if (!kt_sink_has_schema (r.sink, &present, error))
    return FALSE;
  if (!present)
    {
      g_message ("creating ktally's tables in %s", kt_sink_describe (r.sink));
      if (!kt_sink_apply_schema (r.sink, error))
        return FALSE;
    }
  g_message ("job %s: reading %s (%u partitions) into %s, %s mode, every %g s",
             config->job, config->topic, r.partitions->len, kt_sink_describe (r.sink),
             "transactional", config->interval);

  while (!*stop)
    {
      g_autoptr(GError) local = NULL;
      gint64 started = g_get_monotonic_time ();
      gboolean idle = FALSE;

      r.batch_no++;
      if (!run_batch (&r, &idle, &local))
        {
          if (g_error_matches (local, KT_ERROR, KT_ERROR_CANCELLED))
            break;
          if (!g_error_matches (local, KT_ERROR, KT_ERROR_TRANSIENT))
            {
              g_propagate_error (error, g_steal_pointer (&local));
              return FALSE;
            }
          /* Transient: the batch left nothing behind (or the offsets will
           * say what it left); plan it again after a pause. A failure
           * also invalidates the partition list. */
          backoff = backoff == 0 ? 1 : MIN (backoff * 2, BACKOFF_MAX_S);
          g_warning ("job %s: batch %" G_GUINT64_FORMAT ": %s; retrying in %g s",
                     config->job, r.batch_no, local->message, backoff);
          r.metadata_at = 0;
          nap (stop, backoff);
          continue;
        }
      backoff = 0;
      if (idle && config->exit_when_idle)
        {
          g_message ("job %s: idle: every partition is committed up to its high "
                     "watermark", config->job);
          break;
        }
      if (config->interval == 0)
        {
          /* Back to back, but an idle source is not polled in a hot loop. */
          if (idle)
            nap (stop, 0.1);
          continue;
        }
      nap (stop, config->interval - (double) (g_get_monotonic_time () - started)
                                      / G_USEC_PER_SEC);
    }
  return TRUE;
}

gboolean
kt_init_db (const KtConfig *config, GError **error)
{
  g_autoptr(KtSink) sink = kt_sink_new (&config->db);

  if (!kt_sink_apply_schema (sink, error))
    return FALSE;
  g_message ("ktally's tables are in %s", kt_sink_describe (sink));
  return TRUE;
}
