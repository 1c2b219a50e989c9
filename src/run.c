/* run.c - the batch scheduler: plan -> read -> parse -> reduce -> commit.
 *
 * One batch is run_batch(); everything else here is the service around it:
 * start-up checks, retries with backoff, the interval clock, signals. The
 * only state carried from one batch to the next is in MySQL: each batch
 * plans from the offsets it reads back, so a crash, a restart or a second
 * writer never needs special cases here. */
#include "run.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <json-glib/json-glib.h>
#include "error.h"
#include "http.h"
#include "ledger.h"
#include "metrics.h"
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
  gboolean   idempotent;
  gboolean   replay;
  gboolean   member;      /* `run --group`: a member of the consumer group */
  gboolean   ledger;      /* --kind ledger */
  /* --kind ledger: the batch's records, per range, in offset order. They
   * are handed to the ledger partition by partition, so that a batch is
   * applied in (partition, offset) order whatever order they came in. */
  GPtrArray *records;     /* of GPtrArray of LedgerRecord, one per range */
  GArray    *partitions;  /* gint32, ascending (replay: the listed ones) */
  GHashTable *parts;      /* idempotent: partition -> Part, per batch */
  gint64     metadata_at; /* monotonic time of the last partition list */
  guint64    batch_no;
  /* Set when a COMMIT's answer was lost: the next batch reads the offsets
   * back and says whether it landed. */
  GArray    *unknown_commit;
  gint64     last_sample_at;
  KtLedgerCounts ledger_counts;
  guint64    fenced;   /* batches fenced off by another writer */
  guint64    retried;  /* commits tried again after a deadlock */
  KtMetrics *metrics;  /* borrowed from kt_run(); shared by every topic's runner */
  KtIdentity identity; /* what the job is: its strings are the config's, or static */
  /* Totals over the whole run, for replay's progress and summary. */
  gint64     started;
  guint64    total_records;
  KtParseCounts total;
} Runner;

typedef struct
{
  gint64  offset;
  GBytes *value;  /* NULL: a tombstone */
} LedgerRecord;

static void
ledger_record_free (gpointer data)
{
  LedgerRecord *rec = data;
  g_clear_pointer (&rec->value, g_bytes_unref);
  g_free (rec);
}

/* Idempotent mode: what a batch does with one partition. */
typedef struct
{
  KtCoverage *expected;  /* the offsets counted when the batch planned */
  KtReducer  *counts;    /* what it reads outside them */
  GArray     *skips;     /* KtInterval: the covered parts of its range */
  guint       skip_at;   /* the first skip not wholly below the last offset */
  gboolean    lost;      /* the range starts past a skipped data loss */
} Part;

static void
part_free (gpointer data)
{
  Part *part = data;
  kt_coverage_free (part->expected);
  kt_reducer_free (part->counts);
  g_array_unref (part->skips);
  g_free (part);
}

/* Whether @offset was counted before: read again, never counted again.
 * Offsets come in ascending order per partition. */
static gboolean
part_covers (Part *part, gint64 offset)
{
  while (part->skip_at < part->skips->len
         && g_array_index (part->skips, KtInterval, part->skip_at).until <= offset)
    part->skip_at++;
  return part->skip_at < part->skips->len
         && g_array_index (part->skips, KtInterval, part->skip_at).from <= offset;
}

/* What one batch read. */
typedef struct
{
  Runner        *runner;
  const GArray  *ranges;
  Part          *part;        /* idempotent: the last record's (records come in runs) */
  gint32         part_partition;
  KtRangeStats  *stats;       /* per range, for ktally_batches */
  guint          last_range;
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

/* Waits between batches. A group member keeps serving the group's
 * events meanwhile (a rebalance must not wait for the next batch). */
static void
rest (Runner *r, double seconds)
{
  gint64 until = g_get_monotonic_time () + (gint64) (seconds * G_USEC_PER_SEC);

  if (!r->member)
    {
      nap (r->stop, seconds);
      return;
    }
  while (!*r->stop)
    {
      gint64 left = until - g_get_monotonic_time ();
      if (left <= 0)
        break;
      kt_source_serve (r->source, (int) MIN (left / 1000 + 1, 50));
    }
}

static void
on_record (gint32 partition, gint64 offset, const char *value, gsize len,
           gpointer user_data)
{
  BatchReading *b = user_data;
  KtReducer *counts = b->runner->reducer;
  KtParseCounts mine = { 0 };
  const char *bad = NULL;
  gsize bad_len = 0;

  b->records++;
  if (g_array_index (b->ranges, KtRange, b->last_range).partition != partition)
    for (guint i = 0; i < b->ranges->len; i++)
      if (g_array_index (b->ranges, KtRange, i).partition == partition)
        b->last_range = i;

  if (b->runner->ledger)
    {
      LedgerRecord *rec = g_new0 (LedgerRecord, 1);

      rec->offset = offset;
      rec->value = value != NULL ? g_bytes_new (value, len) : NULL;
      g_ptr_array_add (b->runner->records->pdata[b->last_range], rec);
      b->stats[b->last_range].records++;
      b->stats[b->last_range].lines++;
      return;
    }
  if (b->runner->idempotent)
    {
      if (partition != b->part_partition)
        {
          b->part = g_hash_table_lookup (b->runner->parts, GINT_TO_POINTER (partition));
          b->part_partition = partition;
        }
      if (part_covers (b->part, offset))
        return;
      counts = b->part->counts;
    }
  if (kt_parser_value (b->runner->parser, value, len, counts, &mine, &bad, &bad_len) > 0
      && !b->have_sample)
    {
      b->have_sample = TRUE;
      b->sample_partition = partition;
      b->sample_offset = offset;
      memcpy (b->sample, bad, MIN (bad_len, SAMPLE_BYTES));
      b->sample[MIN (bad_len, SAMPLE_BYTES)] = '\0';
    }
  b->counts.lines += mine.lines;
  b->counts.errors += mine.errors;
  b->counts.malformed += mine.malformed;

  /* The audit trail: what this batch counted (idempotent mode reads
   * covered offsets again but never counts them). */
  {
    KtRangeStats *st = &b->stats[b->last_range];
    st->records++;
    st->lines += mine.lines;
    st->errors += mine.errors;
    st->malformed += mine.malformed;
  }
}

/* The partitions this instance reads: its group assignment, or the
 * topic's (only the --partitions ones), fresh from the metadata. */
static gboolean
refresh_partitions (Runner *r, int timeout_ms, GError **error)
{
  const GArray *only = r->config->only_partitions;
  g_autoptr(GArray) all = g_array_new (FALSE, FALSE, sizeof (gint32));
  gboolean assigned;

  if (r->member)
    {
      kt_source_owned (r->source, r->partitions, &assigned);
      return TRUE;
    }
  if (!kt_source_partitions (r->source, all, timeout_ms, error))
    return FALSE;
  r->metadata_at = g_get_monotonic_time ();
  g_array_set_size (r->partitions, 0);
  for (guint i = 0; i < all->len; i++)
    {
      gint32 p = g_array_index (all, gint32, i);
      gboolean wanted = only == NULL;

      for (guint j = 0; only != NULL && j < only->len; j++)
        wanted |= g_array_index (only, gint32, j) == p;
      if (wanted)
        g_array_append_val (r->partitions, p);
    }
  if (only != NULL && r->partitions->len < only->len)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "--partitions: topic %s has %u partitions (0-%d): some listed are not",
                   r->config->topic, all->len, (int) all->len - 1);
      return FALSE;
    }
  return TRUE;
}

/* Where a replay starts and ends on @partition. */
static const KtPartitionOffset *
replay_bound (const GArray *bounds, gint32 partition)
{
  for (guint i = 0; i < bounds->len; i++)
    if (g_array_index (bounds, KtPartitionOffset, i).partition == partition)
      return &g_array_index (bounds, KtPartitionOffset, i);
  return NULL;
}

/* The stored offsets of @states: kafka_offset, or the consumer group's
 * committed offsets with --offsets kafka. */
static gboolean
load_offsets (Runner *r, KtPartitionState *s, guint n, GError **error)
{
  if (r->config->offsets == KT_OFFSETS_KAFKA)
    return kt_source_committed (r->source, s, n, KAFKA_TIMEOUT_MS, error);
  return kt_sink_load_offsets (r->sink, r->config->job, r->config->topic, s, n, error);
}

/* Reads the stored offsets of every partition into @states, creating the
 * rows of partitions seen for the first time, then the watermarks. The
 * offsets come first: a stored offset is never ahead of the high watermark
 * asked after it, even while another writer commits. A replay sees only
 * its partitions, each ending at its --until. */
static gboolean
load_states (Runner *r, GArray *states, GError **error)
{
  const KtConfig *config = r->config;
  g_autoptr(GArray) starts = g_array_new (FALSE, FALSE, sizeof (KtRange));
  KtPartitionState *s;
  gboolean missing = FALSE;

  g_array_set_size (states, r->partitions->len);
  s = (KtPartitionState *) (void *) states->data;
  for (guint i = 0; i < states->len; i++)
    s[i] = (KtPartitionState) { g_array_index (r->partitions, gint32, i), -1, 0, 0 };

  if (!load_offsets (r, s, states->len, error)
      || !kt_source_watermarks (r->source, s, states->len, KAFKA_TIMEOUT_MS, error))
    return FALSE;

  for (guint i = 0; i < states->len; i++)
    if (s[i].stored < 0)
      {
        gint64 at = config->start == KT_START_LATEST ? s[i].high : s[i].low;

        if (r->replay)
          at = replay_bound (config->replay_from, s[i].partition)->offset;
        else
          g_message ("job %s: %s/%d is new: starting at its %s offset %" G_GINT64_FORMAT,
                     config->job, config->topic, s[i].partition,
                     config->start == KT_START_LATEST ? "latest" : "earliest", at);
        if (config->offsets == KT_OFFSETS_KAFKA)
          {
            /* Decided once: committed to the group before the first read.
             * Re-decided every batch, "latest" would move ahead of the
             * data forever. */
            g_array_append_val (starts, ((KtRange) { s[i].partition, at, at, at }));
            s[i].stored = at;
            continue;
          }
        missing = TRUE;
        if (!kt_sink_init_offset (r->sink, config->job, config->topic,
                                  s[i].partition, at, error))
          return FALSE;
      }
  if (!kt_source_commit (r->source, starts, error))
    return FALSE;
  if (missing
      && (!load_offsets (r, s, states->len, error)
          || !kt_source_watermarks (r->source, s, states->len, KAFKA_TIMEOUT_MS, error)))
    return FALSE;

  if (r->replay)
    for (guint i = 0; i < states->len; i++)
      s[i].high = MIN (s[i].high, replay_bound (config->replay_until, s[i].partition)->offset);
  return TRUE;
}

/* --group: where the partitions the group just assigned start: their
 * stored offsets (rows created, as in load_states(), for new ones). */
static gboolean
group_start_offsets (KtPartitionState *s, guint n, gpointer user_data, GError **error)
{
  Runner *r = user_data;
  const KtConfig *config = r->config;
  gboolean missing = FALSE;

  if (!kt_sink_load_offsets (r->sink, config->job, config->topic, s, n, error))
    return FALSE;
  for (guint i = 0; i < n; i++)
    missing |= s[i].stored < 0;
  if (!missing)
    return TRUE;
  if (!kt_source_watermarks (r->source, s, n, KAFKA_TIMEOUT_MS, error))
    return FALSE;
  for (guint i = 0; i < n; i++)
    if (s[i].stored < 0
        && !kt_sink_init_offset (r->sink, config->job, config->topic, s[i].partition,
                                 config->start == KT_START_LATEST ? s[i].high : s[i].low,
                                 error))
      return FALSE;
  return kt_sink_load_offsets (r->sink, config->job, config->topic, s, n, error);
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

/* Idempotent mode, before reading: each range skips what its partition's
 * output already counted (see coverage.h), and gets its Part. */
static gboolean
plan_coverage (Runner *r, GArray *ranges, const GArray *states, GError **error)
{
  g_autoptr(GPtrArray) sets = g_ptr_array_new_with_free_func ((GDestroyNotify) kt_coverage_free);

  if (!kt_sink_load_coverage (r->sink, r->config->job, r->config->topic, ranges, sets, error))
    return FALSE;
  for (guint i = 0; i < ranges->len; i++)
    {
      KtRange *rg = &g_array_index (ranges, KtRange, i);
      Part *part = g_new0 (Part, 1);

      part->lost = rg->read_from > rg->from;  /* before skipping what is covered */
      for (guint j = 0; j < states->len; j++)
        if (g_array_index (states, KtPartitionState, j).partition == rg->partition)
          kt_plan_skip_covered (rg, sets->pdata[i],
                                g_array_index (states, KtPartitionState, j).high,
                                r->config->max_per_partition);
      part->expected = g_steal_pointer (&sets->pdata[i]);
      part->counts = kt_reducer_new ();
      part->skips = g_array_new (FALSE, FALSE, sizeof (KtInterval));
      kt_coverage_within (part->expected, rg->read_from, rg->until, part->skips);
      g_hash_table_replace (r->parts, GINT_TO_POINTER (rg->partition), part);
    }
  return TRUE;
}

/* Idempotent mode: adds what each range counted to its partition's output
 * along with the offsets it read, then stores the offsets. The output
 * comes first: a crash between the two leaves offsets the next plan finds
 * covered, and skips. */
static gboolean
commit_idempotent (Runner *r, const GArray *ranges, const KtRangeStats *stats,
                   KtCommitResult *result, gint32 *fenced, GError **error)
{
  const KtConfig *config = r->config;
  g_autoptr(GArray) parts = g_array_new (FALSE, FALSE, sizeof (KtCounted));
  g_autoptr(GPtrArray) covered = g_ptr_array_new_with_free_func ((GDestroyNotify) kt_coverage_free);

  for (guint i = 0; i < ranges->len; i++)
    {
      const KtRange *rg = &g_array_index (ranges, KtRange, i);
      Part *part = g_hash_table_lookup (r->parts, GINT_TO_POINTER (rg->partition));
      KtCoverage *now = kt_coverage_copy (part->expected);

      kt_coverage_add (now, rg->read_from, rg->until);
      g_ptr_array_add (covered, now);
      /* A skipped loss changes no count, but its audit row says where the
       * offsets went: the chain must not show a hole there. */
      if (!kt_coverage_equal (now, part->expected) || part->lost)
        g_array_append_val (parts, ((KtCounted) { *rg, &stats[i], part->expected, now,
                                                  part->counts }));
    }
  if (!kt_sink_write_counted (r->sink, config->job, config->topic, parts, fenced, error))
    return FALSE;
  if (*fenced >= 0)
    {
      *result = KT_COMMIT_FENCED;
      return TRUE;
    }
  if (config->offsets == KT_OFFSETS_KAFKA
      && !kt_source_commit (r->source, ranges, error))
    return FALSE;
  return config->offsets == KT_OFFSETS_KAFKA
         || kt_sink_store_offsets (r->sink, config->job, config->topic, ranges, fenced,
                                   error);
}

/* --kind ledger: a fresh ledger batch (a commit may be tried again after a
 * deadlock, and applying spends a batch) fed the records in (partition,
 * offset) order, committed with the offsets in one transaction. */
static gboolean
commit_ledger (Runner *r, const GArray *ranges, const KtRangeStats *stats,
               KtCommitResult *result, gint32 *fenced, GError **error)
{
  const KtConfig *config = r->config;
  g_autoptr(KtLedgerBatch) batch = kt_ledger_batch_new ();
  KtLedgerCounts counts;

  for (guint i = 0; i < ranges->len; i++)
    {
      GPtrArray *records = r->records->pdata[i];
      for (guint j = 0; j < records->len; j++)
        {
          const LedgerRecord *rec = records->pdata[j];
          gsize len = 0;
          const char *value = rec->value != NULL ? g_bytes_get_data (rec->value, &len) : NULL;

          kt_ledger_batch_add (batch, g_array_index (ranges, KtRange, i).partition,
                               rec->offset, value, len);
        }
    }
  if (!kt_sink_commit_ledger (r->sink, config->job, config->topic, ranges, stats, batch,
                              config->workers, result, fenced, error))
    return FALSE;

  kt_ledger_batch_counts (batch, &counts);
  r->ledger_counts.messages += counts.messages;
  if (*result == KT_COMMIT_DONE)
    {
      const char *text;
      gint32 partition;
      gint64 offset;
      KtLedgerBad why;

      g_message ("job %s: batch %" G_GUINT64_FORMAT ": ledger: %" G_GUINT64_FORMAT
                 " messages, %" G_GUINT64_FORMAT " applied, %" G_GUINT64_FORMAT
                 " duplicates skipped, %" G_GUINT64_FORMAT " rejected, %" G_GUINT64_FORMAT
                 " bad, %u accounts changed (%u workers)", config->job, r->batch_no,
                 counts.messages, counts.applied, counts.duplicates, counts.rejected,
                 counts.bad, kt_ledger_batch_balances (batch)->len, config->workers);
      if (counts.bad > 0 && kt_ledger_batch_bad_sample (batch, &partition, &offset, &why, &text))
        {
          g_autofree char *escaped = g_strescape (text, NULL);
          g_autofree char *reasons = kt_ledger_counts_bad_reasons (&counts);
          g_message ("job %s: bad ledger message at %s/%d offset %" G_GINT64_FORMAT
                     " (%s): \"%.120s\"", config->job, config->topic, partition, offset,
                     kt_ledger_bad_to_string (why), escaped);
          g_message ("job %s: bad ledger messages by reason: %s", config->job, reasons);
        }
    }
  return TRUE;
}

/* Commits the batch read: counts and offsets in one transaction, or
 * (idempotent) the chunks, then the offsets. */
static gboolean
commit (Runner *r, const GArray *ranges, const KtRangeStats *stats,
        KtCommitResult *result, gint32 *fenced, GError **error)
{
  const KtConfig *config = r->config;

  *result = KT_COMMIT_DONE;
  if (r->idempotent)
    return commit_idempotent (r, ranges, stats, result, fenced, error);
  if (r->ledger)
    return commit_ledger (r, ranges, stats, result, fenced, error);
  if (kt_sink_commit (r->sink, config->job, config->topic, ranges, stats, r->reducer,
                      result, fenced, error))
    return TRUE;
  if (*result == KT_COMMIT_UNKNOWN)
    {
      g_array_set_size (r->unknown_commit, 0);
      g_array_append_vals (r->unknown_commit, ranges->data, ranges->len);
      g_prefix_error (error, "the answer to COMMIT was lost (the offsets will "
                      "tell whether it landed): ");
    }
  return FALSE;
}

/* The (partition,) minute rows a batch adds to. */
static guint
batch_minutes (Runner *r)
{
  GHashTableIter iter;
  gpointer value;
  guint n = 0;

  if (!r->idempotent)
    return kt_reducer_size (r->reducer);
  g_hash_table_iter_init (&iter, r->parts);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    n += kt_reducer_size (((Part *) value)->counts);
  return n;
}

static gint64
lag_after (const GArray *states, const GArray *ranges)
{
  gint64 lag = 0;

  for (guint j = 0; j < states->len; j++)
    {
      const KtPartitionState *s = &g_array_index (states, KtPartitionState, j);
      gint64 at = MAX (s->stored, s->low);

      for (guint i = 0; i < ranges->len; i++)
        if (g_array_index (ranges, KtRange, i).partition == s->partition)
          at = g_array_index (ranges, KtRange, i).until;
      lag += MAX (0, s->high - at);
    }
  return lag;
}

/* Each partition's stored offset and lag after a successful batch, for
 * the metrics (the same arithmetic as lag_after()). */
static void
report_partitions (Runner *r, const GArray *states, const GArray *ranges)
{
  for (guint j = 0; j < states->len; j++)
    {
      const KtPartitionState *s = &g_array_index (states, KtPartitionState, j);
      gint64 at = MAX (s->stored, s->low);

      for (guint i = 0; i < ranges->len; i++)
        if (g_array_index (ranges, KtRange, i).partition == s->partition)
          at = g_array_index (ranges, KtRange, i).until;
      kt_metrics_partition (r->metrics, r->config->topic, s->partition, at,
                            MAX (0, s->high - at));
    }
}

/* --on-data-loss skip: the ranges a committed batch skipped. */
static void
report_losses (Runner *r, const GArray *losses)
{
  for (guint i = 0; i < losses->len; i++)
    {
      const KtDataLoss *l = &g_array_index (losses, KtDataLoss, i);
      g_warning ("job %s: DATA LOSS on %s/%d: offsets [%" G_GINT64_FORMAT ", %"
                 G_GINT64_FORMAT ") are gone (%" G_GINT64_FORMAT " offsets never "
                 "counted); continuing from %" G_GINT64_FORMAT " (--on-data-loss skip)",
                 r->config->job, r->config->topic, l->partition, l->from, l->until,
                 l->until - l->from, l->until);
      kt_metrics_data_loss (r->metrics, l->until - l->from);
    }
}

/* Replay on a terminal: offsets done of the total, rate, time left. */
static void
show_progress (Runner *r, const GArray *states, gint64 started)
{
  gint64 total = 0, left = 0;
  double elapsed = (double) (g_get_monotonic_time () - started) / G_USEC_PER_SEC;
  double rate;

  for (guint i = 0; i < r->config->replay_from->len; i++)
    total += g_array_index (r->config->replay_until, KtPartitionOffset, i).offset
             - g_array_index (r->config->replay_from, KtPartitionOffset, i).offset;
  for (guint j = 0; j < states->len; j++)
    {
      const KtPartitionState *s = &g_array_index (states, KtPartitionState, j);
      left += MAX (0, s->high - MAX (s->stored, s->low));
    }
  rate = elapsed > 0 ? (double) (total - left) / elapsed : 0;
  fprintf (stderr, "\rreplay: %" G_GINT64_FORMAT "/%" G_GINT64_FORMAT " offsets (%.0f%%), "
           "%.0f offsets/s, ETA %.0f s   ", total - left, total,
           total > 0 ? 100.0 * (double) (total - left) / (double) total : 100.0,
           rate, rate > 0 ? (double) left / rate : 0.0);
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
  BatchReading reading = { .runner = r, .ranges = ranges, .part_partition = -1 };
  g_autofree KtRangeStats *stats = NULL;
  g_autoptr(GString) conflicts = g_string_new (NULL);
  KtCommitResult result = KT_COMMIT_DONE;
  gint32 fenced = -1;
  gint64 started = g_get_monotonic_time ();
  guint n_ranges;

  *idle = FALSE;

  /* Plan. Partitions added to the topic are picked up within a minute;
   * a group member plans what the group gave it. */
  if (!r->replay && (r->member || started - r->metadata_at >= METADATA_EVERY_US)
      && !refresh_partitions (r, KAFKA_TIMEOUT_MS, error))
    return FALSE;
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
  if (ranges->len == 0)
    {
      *idle = TRUE;
      kt_metrics_batch (r->metrics, &(KtBatchReport) {
        .result = KT_BATCH_IDLE,
        .duration = (double) (g_get_monotonic_time () - started) / G_USEC_PER_SEC });
      report_partitions (r, states, ranges);
      g_debug ("job %s: batch %" G_GUINT64_FORMAT ": nothing new", config->job,
               r->batch_no);
      return TRUE;
    }
  g_hash_table_remove_all (r->parts);
  if (r->idempotent && !plan_coverage (r, ranges, states, error))
    return FALSE;

  /* Read, parse, reduce: the source hands each record to on_record(). */
  stats = g_new0 (KtRangeStats, ranges->len);
  reading.stats = stats;
  if (r->ledger)
    {
      g_ptr_array_set_size (r->records, 0);
      for (guint i = 0; i < ranges->len; i++)
        g_ptr_array_add (r->records, g_ptr_array_new_with_free_func (ledger_record_free));
    }
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
        {
          stats[n_ranges] = stats[i];
          if (r->ledger)
            {
              gpointer kept = r->records->pdata[i];
              r->records->pdata[i] = r->records->pdata[n_ranges];
              r->records->pdata[n_ranges] = kept;
            }
          g_array_index (ranges, KtRange, n_ranges++) = *rg;
        }
    }
  g_array_set_size (ranges, n_ranges);
  if (r->ledger)
    g_ptr_array_set_size (r->records, n_ranges);

  /* Commit: counts and offsets in one transaction, or (idempotent) the
   * chunks, then the offsets. */
  for (guint attempt = 1;; attempt++)
    {
      g_autoptr(GError) local = NULL;

      if (commit (r, ranges, stats, &result, &fenced, &local))
        break;
      /* A deadlock or lock wait cost only this transaction, rolled back:
       * the same batch commits again (still fenced) after a short pause,
       * longer each time, with jitter so that the writers drift apart. */
      if (!g_error_matches (local, KT_ERROR, KT_ERROR_CONFLICT) || attempt == 6)
        {
          g_propagate_error (error, g_steal_pointer (&local));
          return FALSE;
        }
      r->retried++;
      kt_metrics_retry (r->metrics, "deadlock");
      g_message ("job %s: batch %" G_GUINT64_FORMAT ": %s; committing again (%u/5)",
                 config->job, r->batch_no, local->message, attempt);
      g_usleep ((gulong) g_random_int_range (5000, 20000) << attempt);
    }
  if (result == KT_COMMIT_FENCED || fenced >= 0)
    r->fenced++;
  if (r->idempotent && result != KT_COMMIT_FENCED && fenced >= 0)
    g_message ("job %s: batch %" G_GUINT64_FORMAT ": %s/%d was moved by another "
               "writer: its output stands (idempotent), its offsets are theirs",
               config->job, r->batch_no, config->topic, fenced);
  else if (result == KT_COMMIT_FENCED)
    {
      g_message ("job %s: batch %" G_GUINT64_FORMAT ": fenced: %s/%d was moved by "
                 "another writer; rolled back, re-planning from the stored offsets",
                 config->job, r->batch_no, config->topic, fenced);
      kt_metrics_batch (r->metrics, &(KtBatchReport) {
        .result = KT_BATCH_FENCED, .partitions = ranges->len, .records = reading.records,
        .duration = (double) (g_get_monotonic_time () - started) / G_USEC_PER_SEC });
      return TRUE;
    }

  /* A skipped loss is part of what this batch committed: reported once,
   * here, and not by a batch that failed or was fenced off. */
  report_losses (r, losses);
  kt_metrics_batch (r->metrics, &(KtBatchReport) {
    .result = fenced >= 0 ? KT_BATCH_FENCED : KT_BATCH_COMMITTED,
    .duration = (double) (g_get_monotonic_time () - started) / G_USEC_PER_SEC,
    .partitions = ranges->len, .records = reading.records,
    .lines_error = reading.counts.errors, .lines_malformed = reading.counts.malformed,
    .lines_other = reading.counts.lines - reading.counts.errors - reading.counts.malformed });
  report_partitions (r, states, ranges);

  if (r->fenced > 0 || r->retried > 0)
    g_string_printf (conflicts, " (so far %" G_GUINT64_FORMAT " fenced, %" G_GUINT64_FORMAT
                     " commits retried after a deadlock)", r->fenced, r->retried);
  r->total_records += reading.records;
  r->total.lines += reading.counts.lines;
  r->total.errors += reading.counts.errors;
  r->total.malformed += reading.counts.malformed;
  if (r->replay && isatty (STDERR_FILENO))
    show_progress (r, states, r->started);
  /* (A ledger batch logged its own line, with its own figures.) */
  g_log (G_LOG_DOMAIN, r->replay || r->ledger ? G_LOG_LEVEL_DEBUG : G_LOG_LEVEL_MESSAGE,
         "job %s: batch %" G_GUINT64_FORMAT ": %u partitions, %" G_GUINT64_FORMAT
         " records, %" G_GUINT64_FORMAT " lines, %" G_GUINT64_FORMAT " ERROR, %"
         G_GUINT64_FORMAT " malformed, %u %s, %.3f s, lag %" G_GINT64_FORMAT "%s",
         config->job, r->batch_no, ranges->len, reading.records,
         reading.counts.lines, reading.counts.errors, reading.counts.malformed,
         batch_minutes (r), "minutes",
         (double) (g_get_monotonic_time () - started) / G_USEC_PER_SEC,
         lag_after (states, ranges), conflicts->str);

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
  /* Also in a group: an unknown topic is an error before anything else. */
  if (!kt_source_partitions (r->source, r->partitions, timeout_ms, error))
    return FALSE;
  r->metadata_at = g_get_monotonic_time ();
  if (r->member)
    {
      g_array_set_size (r->partitions, 0);  /* until the group assigns some */
      return kt_source_subscribe (r->source, error);
    }
  return refresh_partitions (r, timeout_ms, error);
}

static gboolean
startup_mysql (Runner *r, int timeout_ms, GError **error)
{
  (void) timeout_ms;
  return kt_sink_connect (r->sink, error);
}

/* The job's tables, checked, migrated or created. Before anything is
 * created or read: a job run with other settings, or a second job over a
 * topic this table already counts, is refused here. */
static gboolean
startup_tables (Runner *r, int timeout_ms, GError **error)
{
  (void) timeout_ms;
  return kt_sink_check_identity (r->sink, r->config->share_table, error)
         && (r->ledger ? kt_sink_prepare_ledger (r->sink, error)
                       : kt_sink_prepare (r->sink, r->idempotent, error));
}

static void
runner_clear (Runner *r)
{
  g_clear_pointer (&r->source, kt_source_free);
  g_clear_pointer (&r->sink, kt_sink_free);
  g_clear_pointer (&r->parser, kt_parser_free);
  g_clear_pointer (&r->reducer, kt_reducer_free);
  g_clear_pointer (&r->parts, g_hash_table_unref);
  g_clear_pointer (&r->records, g_ptr_array_unref);
  g_clear_pointer (&r->partitions, g_array_unref);
  g_clear_pointer (&r->unknown_commit, g_array_unref);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Runner, runner_clear)

/* What the job is, from its settings (identity.h). */
static void
describe_identity (const KtConfig *config, KtIdentity *id)
{
  static const char *const modes[] = { "transactional", "idempotent" };
  static const char *const stores[] = { "mysql", "kafka" };
  static const char *const error_only[] = { "ERROR", NULL };
  gboolean ledger = config->kind == KT_KIND_LEDGER;

  *id = (KtIdentity) {
    .job = config->job,
    .kind = ledger ? "ledger" : "count",
    .mode = modes[config->mode],
    .offsets = stores[config->offsets],
    .output = ledger ? "account_balance" : config->table,
    .topics = (const char *const *) config->topics,
    .replay = config->replay_from != NULL,
    .holds = ledger ? "balances" : "counts",
    .bucket = ledger ? "" : config->bucket == 60 ? "1h" : config->bucket == 5 ? "5m" : "1m",
    .levels = ledger ? NULL : config->levels != NULL ? (const char *const *) config->levels
                                                     : error_only,
    .pattern = ledger ? NULL : config->pattern,
    /* The default format spelled out is the default. */
    .time_format = ledger || g_strcmp0 (config->time_format, "%Y-%m-%d %H:%M:%S") == 0
                   ? NULL : config->time_format,
    .dimensions = "",
    .sums = "",
  };
}

/* Creates the source and sink and waits for Kafka (the partition list)
 * and MySQL, within --startup-timeout. Kafka first: an unknown topic must
 * not leave tables behind. Sets *@stopped when a signal came meanwhile. */
static gboolean
runner_start (Runner *r, const KtConfig *config, const volatile int *stop,
              gboolean *stopped, GError **error)
{
  KtSourceConfig source_config = {
    .brokers = config->brokers,
    .topic = config->topic,
    .client_id = config->job,
    .properties = (const char *const *) config->kafka_properties,
    .max_batch_bytes = config->max_batch_bytes,
  };

  r->config = config;
  /* `status --group` only looks at the group: it must not join it. */
  r->member = config->group != NULL && g_str_equal (config->command, "run");
  source_config.group = r->member ? config->group : NULL;
  source_config.start_offsets = group_start_offsets;
  source_config.stop = stop;
  source_config.start_offsets_data = r;
  r->stop = stop;
  r->idempotent = config->mode == KT_MODE_IDEMPOTENT;
  r->ledger = config->kind == KT_KIND_LEDGER;
  r->records = g_ptr_array_new_with_free_func ((GDestroyNotify) g_ptr_array_unref);
  r->replay = config->replay_from != NULL;
  r->started = g_get_monotonic_time ();
  *stopped = FALSE;
  r->source = kt_source_new (&source_config, error);
  if (r->source == NULL)
    return FALSE;
  /* A ledger's audit rows name its balances table. */
  r->sink = kt_sink_new (&config->db, config->kind == KT_KIND_LEDGER ? "account_balance"
                                                                     : config->table);
  describe_identity (config, &r->identity);
  kt_sink_set_identity (r->sink, &r->identity);
  {
    g_autofree char *member = g_strdup_printf ("%s-%d@%s", config->job, (int) getpid (),
                                               g_get_host_name ());
    kt_sink_set_member (r->sink, member);
  }
  {
    KtParseFormat format = { config->pattern, config->time_format,
                             (const char *const *) config->levels,
                             config->bucket };
    r->parser = kt_parser_new_format (&format, error);
  }
  if (r->parser == NULL)
    return FALSE;
  r->reducer = kt_reducer_new ();
  r->parts = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL, part_free);
  r->partitions = g_array_new (FALSE, FALSE, sizeof (gint32));
  r->unknown_commit = g_array_new (FALSE, FALSE, sizeof (KtRange));

  if (!retry_startup (r, startup_kafka, "Kafka", error)
      || !retry_startup (r, startup_mysql, "MySQL", error))
    {
      if (!*stop)
        return FALSE;
      g_clear_error (error);  /* asked to stop while waiting: not a failure */
      *stopped = TRUE;
    }
  return TRUE;
}

/* Replay: every listed partition exists and [from, until) is readable now,
 * before anything is written. Narrows r->partitions to the listed ones. */
static gboolean
check_replay (Runner *r, int timeout_ms, GError **error)
{
  const KtConfig *config = r->config;
  g_autoptr(GArray) states = g_array_new (FALSE, TRUE, sizeof (KtPartitionState));

  for (guint i = 0; i < config->replay_from->len; i++)
    {
      const KtPartitionOffset *f = &g_array_index (config->replay_from, KtPartitionOffset, i);
      gboolean known = FALSE;
      KtPartitionState s = { f->partition, -1, 0, 0 };

      for (guint j = 0; j < r->partitions->len; j++)
        known |= g_array_index (r->partitions, gint32, j) == f->partition;
      if (!known)
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                       "--from: topic %s has no partition %d (it has %u)",
                       config->topic, f->partition, r->partitions->len);
          return FALSE;
        }
      g_array_append_val (states, s);
    }
  if (!kt_source_watermarks (r->source, (KtPartitionState *) (void *) states->data,
                             states->len, timeout_ms, error))
    return FALSE;

  g_array_set_size (r->partitions, 0);
  for (guint i = 0; i < states->len; i++)
    {
      const KtPartitionState *s = &g_array_index (states, KtPartitionState, i);
      gint64 from = g_array_index (config->replay_from, KtPartitionOffset, i).offset;
      gint64 until = g_array_index (config->replay_until, KtPartitionOffset, i).offset;

      if (until > s->high)
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                       "--until: partition %d ends at %" G_GINT64_FORMAT
                       " (its high watermark), not %" G_GINT64_FORMAT,
                       s->partition, s->high, until);
          return FALSE;
        }
      if (from < s->low && from < until)
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                       "--from: partition %d starts at %" G_GINT64_FORMAT " now: "
                       "offsets [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ") were "
                       "lost to retention", s->partition, s->low, from, s->low);
          return FALSE;
        }
      g_array_append_val (r->partitions, s->partition);
    }
  return TRUE;
}

/* The metrics' word for why a batch is tried again. Every sink message
 * names the database (kt_sink_describe()); the rest come from Kafka. */
static const char *
retry_cause (Runner *r, const GError *error)
{
  if (g_error_matches (error, KT_ERROR, KT_ERROR_CONFLICT))
    return "deadlock";
  if (strstr (error->message, kt_sink_describe (r->sink)) != NULL)
    return "mysql";
  return "kafka";
}

/* From the tables on: prepares them, then runs batches until told to stop,
 * idle with --exit-when-idle, or a failure that retrying cannot cure. */
static gboolean
run_loop (Runner *r, GError **error)
{
  const KtConfig *config = r->config;
  double backoff = 0;
  gint64 compacted_at = 0;

  if (r->replay && !retry_startup (r, check_replay, "Kafka", error))
    return FALSE;
  /* MariaDB restarting meanwhile is waited for, as at start-up. */
  if (!retry_startup (r, startup_tables, "MySQL tables", error))
    return FALSE;
  if (r->replay && g_str_equal (config->table, "error_log"))
    g_warning ("replaying into the live error_log: these counts are ADDED to it");

  g_message ("job %s: reading %s (%u partitions) into %s.%s, %s mode%s, every %g s",
             config->job, config->topic, r->partitions->len, kt_sink_describe (r->sink),
             config->table, r->idempotent ? "idempotent" : "transactional",
             config->offsets == KT_OFFSETS_KAFKA ? " with offsets in Kafka" : "",
             config->interval);

  while (!*r->stop)
    {
      g_autoptr(GError) local = NULL;
      gint64 started = g_get_monotonic_time ();
      gboolean idle = FALSE;

      r->batch_no++;
      if (!run_batch (r, &idle, &local))
        {
          if (g_error_matches (local, KT_ERROR, KT_ERROR_CANCELLED))
            break;
          if (g_error_matches (local, KT_ERROR, KT_ERROR_REBALANCED)
              || g_error_matches (local, KT_ERROR, KT_ERROR_OVERTAKEN))
            {
              kt_metrics_retry (r->metrics, local->code == KT_ERROR_REBALANCED
                                            ? "rebalance" : "retention");
              /* Nothing was committed: plan again with what we own now. */
              g_message ("job %s: batch %" G_GUINT64_FORMAT ": %s", config->job,
                         r->batch_no, local->message);
              continue;
            }
          if (!g_error_matches (local, KT_ERROR, KT_ERROR_TRANSIENT)
              && !g_error_matches (local, KT_ERROR, KT_ERROR_CONFLICT))
            {
              g_propagate_error (error, g_steal_pointer (&local));
              return FALSE;
            }
          /* Transient: the batch left nothing behind (or the offsets will
           * say what it left); plan it again after a pause. A failure
           * also invalidates the partition list. */
          kt_metrics_batch (r->metrics, &(KtBatchReport) {
            .result = KT_BATCH_FAILED, .error = local->message,
            .duration = (double) (g_get_monotonic_time () - started) / G_USEC_PER_SEC });
          kt_metrics_retry (r->metrics, retry_cause (r, local));
          backoff = backoff == 0 ? 1 : MIN (backoff * 2, BACKOFF_MAX_S);
          g_warning ("job %s: batch %" G_GUINT64_FORMAT ": %s; retrying in %g s",
                     config->job, r->batch_no, local->message, backoff);
          r->metadata_at = 0;
          rest (r, backoff);
          continue;
        }
      backoff = 0;
      if (config->audit_keep > 0
          && g_get_monotonic_time () - compacted_at >= METADATA_EVERY_US)
        {
          g_autoptr(GError) compact_error = NULL;
          if (!kt_sink_compact_batches (r->sink, config->job, config->topic,
                                        config->audit_keep, &compact_error))
            g_warning ("job %s: %s; trying again in a minute", config->job,
                       compact_error->message);
          compacted_at = g_get_monotonic_time ();
        }
      if (idle && config->exit_when_idle
          && (!r->member || r->partitions->len > 0))
        {
          if (r->replay)
            {
              if (isatty (STDERR_FILENO))
                fputc ('\n', stderr);
              g_message ("replay %s: done: %" G_GUINT64_FORMAT " records, %"
                         G_GUINT64_FORMAT " lines, %" G_GUINT64_FORMAT " ERROR, %"
                         G_GUINT64_FORMAT " malformed added to %s in %.1f s",
                         config->job, r->total_records, r->total.lines, r->total.errors,
                         r->total.malformed, config->table,
                         (double) (g_get_monotonic_time () - r->started) / G_USEC_PER_SEC);
            }
          else
            g_message ("job %s: idle: every partition is committed up to its high "
                       "watermark", config->job);
          break;
        }
      if (config->interval == 0)
        {
          /* Back to back, but an idle source is not polled in a hot loop. */
          if (idle)
            rest (r, 0.1);
          continue;
        }
      rest (r, config->interval - (double) (g_get_monotonic_time () - started)
                                     / G_USEC_PER_SEC);
    }
  return TRUE;
}

typedef struct
{
  Runner    runner;
  KtConfig  config;   /* a shallow copy: its own topic, the rest shared */
  GThread  *thread;
  GError   *error;
  gboolean  ok;
  volatile int *stop; /* the job's: set when this topic fails */
} TopicRun;

static gpointer
topic_thread (gpointer data)
{
  TopicRun *t = data;

  t->ok = run_loop (&t->runner, &t->error);
  /* One topic that cannot go on stops the job, at once: the others must
   * not run on as if it were whole (a silent, partial job). */
  if (!t->ok)
    *t->stop = 1;
  return NULL;
}

/* --topic a,b: one runner per topic, each its own batches and transactions
 * under the same job (offsets per topic and partition), on a thread each.
 * All of them reach Kafka and MySQL before any creates a table, so an
 * unknown topic leaves nothing behind. */
static gboolean
run_topics (const KtConfig *config, volatile int *stop, KtMetrics *metrics,
            GError **error)
{
  guint n = g_strv_length (config->topics);
  g_autofree TopicRun *runs = g_new0 (TopicRun, n);
  gboolean ok = TRUE, stopped = FALSE;
  guint started = 0;

  for (guint i = 0; i < n && ok; i++)
    {
      gboolean s;

      runs[i].config = *config;
      runs[i].config.topic = config->topics[i];
      runs[i].runner.metrics = metrics;
      runs[i].stop = stop;
      ok = runner_start (&runs[i].runner, &runs[i].config, stop, &s, error);
      stopped |= s;
      started = i + 1;
    }
  if (ok && !stopped)
    {
      for (guint i = 0; i < n; i++)
        runs[i].thread = g_thread_new ("ktally-topic", topic_thread, &runs[i]);
      for (guint i = 0; i < n; i++)
        {
          g_thread_join (runs[i].thread);
          if (!runs[i].ok && ok)
            {
              g_propagate_prefixed_error (error, g_steal_pointer (&runs[i].error),
                                          "topic %s: ", config->topics[i]);
              ok = FALSE;
            }
          g_clear_error (&runs[i].error);
        }
    }
  for (guint i = 0; i < started; i++)
    runner_clear (&runs[i].runner);
  return ok;
}

gboolean
kt_run (const KtConfig *config, volatile int *stop, GError **error)
{
  g_auto(Runner) r = { 0 };
  /* Declared in this order so that the server stops before the registry
   * it reads is freed. */
  g_autoptr(KtMetrics) metrics = kt_metrics_new (config->job, config->interval);
  g_autoptr(KtHttp) http = NULL;
  gboolean stopped;

  /* First, so that a bad --http fails before anything is touched, and
   * /healthz answers (503) while Kafka and MySQL are still awaited. */
  if (config->http != NULL)
    {
      http = kt_http_start (config->http, metrics, &config->db, error);
      if (http == NULL)
        return FALSE;
      g_message ("job %s: serving /metrics, /healthz and / on port %u of %s", config->job,
                 kt_http_port (http), config->http);
    }
  if (config->topics != NULL && g_strv_length (config->topics) > 1)
    return run_topics (config, stop, metrics, error);
  r.metrics = metrics;
  if (!runner_start (&r, config, stop, &stopped, error))
    return FALSE;
  if (stopped)
    return TRUE;
  return run_loop (&r, error);
}

/* One partition of `ktally status`: its lag and what was lost. */
typedef struct
{
  const KtPartitionState *s;
  gboolean lost;
  gint64   lost_n;
  gint64   lag;
  const char *owner;
} StatusRow;

static StatusRow
status_row (const KtPartitionState *s, GHashTable *owners)
{
  StatusRow row = { s, s->stored >= 0 && (s->stored < s->low || s->stored > s->high), 0, 0,
                    g_hash_table_lookup (owners, GINT_TO_POINTER (s->partition)) };

  if (row.lost)
    row.lost_n = s->stored < s->low ? s->low - s->stored : s->stored - s->high;
  /* Without a stored offset, everything readable is still to do. */
  row.lag = MAX (0, s->stored < 0 ? s->high - s->low : s->high - MAX (s->stored, s->low));
  return row;
}

/* `status --json`: one topic's document, built by json-glib (names are
 * escaped). @kafka: the offsets shown are the consumer group's. */
static JsonNode *
status_json (const KtConfig *config, const GArray *states, GHashTable *owners, gboolean kafka)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  gint64 t_stored = 0, t_high = 0, t_lag = 0, t_lost = 0;

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "job");
  json_builder_add_string_value (b, config->job);
  json_builder_set_member_name (b, "topic");
  json_builder_add_string_value (b, config->topic);
  json_builder_set_member_name (b, "offsets");
  json_builder_add_string_value (b, kafka ? "kafka" : "mysql");
  json_builder_set_member_name (b, "partitions");
  json_builder_begin_array (b);
  for (guint i = 0; i < states->len; i++)
    {
      StatusRow row = status_row (&g_array_index (states, KtPartitionState, i), owners);

      t_stored += MAX (row.s->stored, 0);
      t_high += row.s->high;
      t_lag += row.lag;
      t_lost += row.lost_n;
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "partition");
      json_builder_add_int_value (b, row.s->partition);
      json_builder_set_member_name (b, "stored");
      if (row.s->stored >= 0)
        json_builder_add_int_value (b, row.s->stored);
      else
        json_builder_add_null_value (b);
      json_builder_set_member_name (b, "log_start");
      json_builder_add_int_value (b, row.s->low);
      json_builder_set_member_name (b, "high_watermark");
      json_builder_add_int_value (b, row.s->high);
      json_builder_set_member_name (b, "lag");
      json_builder_add_int_value (b, row.lag);
      json_builder_set_member_name (b, "data_lost");
      json_builder_add_boolean_value (b, row.lost);
      json_builder_set_member_name (b, "lost_offsets");
      json_builder_add_int_value (b, row.lost_n);
      if (config->group != NULL)
        {
          json_builder_set_member_name (b, "owner");
          if (row.owner != NULL)
            json_builder_add_string_value (b, row.owner);
          else
            json_builder_add_null_value (b);
        }
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_set_member_name (b, "totals");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "partitions");
  json_builder_add_int_value (b, states->len);
  json_builder_set_member_name (b, "stored");
  json_builder_add_int_value (b, t_stored);
  json_builder_set_member_name (b, "high_watermark");
  json_builder_add_int_value (b, t_high);
  json_builder_set_member_name (b, "lag");
  json_builder_add_int_value (b, t_lag);
  json_builder_set_member_name (b, "lost_offsets");
  json_builder_add_int_value (b, t_lost);
  json_builder_end_object (b);
  json_builder_end_object (b);
  return json_builder_get_root (b);
}

/* `status` as a table for people, one topic, appended to @out. */
static void
status_table (const KtConfig *config, const GArray *states, GHashTable *owners,
              const char *owner_kind, gboolean kafka, GString *out)
{
  gint64 t_stored = 0, t_high = 0, t_lag = 0, t_lost = 0;
  const char *sep = config->group != NULL ? "  " : "";

  g_string_append_printf (out, "job %s, topic %s%s%s%s%s\n%9s %12s %12s %14s %12s  %-22s%s%s\n",
                          config->job, config->topic,
                          config->group != NULL ? ", group " : "",
                          config->group != NULL ? config->group : "",
                          kafka ? ", offsets in Kafka's consumer group ktally-" : "",
                          kafka ? config->job : "", "partition",
                          "stored", "log start", "high watermark", "lag", "data lost", sep,
                          config->group != NULL ? owner_kind : "");
  for (guint i = 0; i < states->len; i++)
    {
      StatusRow row = status_row (&g_array_index (states, KtPartitionState, i), owners);
      const KtPartitionState *s = row.s;
      g_autofree char *stored = s->stored >= 0
        ? g_strdup_printf ("%" G_GINT64_FORMAT, s->stored) : g_strdup ("-");
      g_autofree char *what = !row.lost ? g_strdup ("-")
        : s->stored < s->low
          ? g_strdup_printf ("YES: [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ") gone",
                             s->stored, s->low)
          : g_strdup_printf ("YES: stored offset beyond the end");

      t_stored += MAX (s->stored, 0);
      t_high += s->high;
      t_lag += row.lag;
      t_lost += row.lost_n;
      g_string_append_printf (out, "%9d %12s %12" G_GINT64_FORMAT " %14" G_GINT64_FORMAT
                              " %12" G_GINT64_FORMAT "  %-22s%s%s\n", s->partition, stored,
                              s->low, s->high, row.lag, what, sep,
                              config->group != NULL ? (row.owner != NULL ? row.owner : "-") : "");
    }
  g_string_append_printf (out, "%9s %12" G_GINT64_FORMAT " %12s %14" G_GINT64_FORMAT
                          " %12" G_GINT64_FORMAT "  %s\n", "total", t_stored, "",
                          t_high, t_lag, t_lost > 0 ? "YES" : "-");
}

/* One topic of `ktally status`, into @json (when --json) or @text. */
static gboolean
status_topic (const KtConfig *config, JsonArray *json, GString *text, GError **error)
{
  g_auto(Runner) r = { 0 };
  g_autoptr(GArray) states = g_array_new (FALSE, TRUE, sizeof (KtPartitionState));
  g_autoptr(GHashTable) owners = g_hash_table_new_full (g_direct_hash, g_direct_equal,
                                                        NULL, g_free);
  static const volatile int never = 0;
  const char *owner_kind = "owner";
  gboolean stopped, present, kafka = FALSE;
  KtPartitionState *s;

  /* Only reads: an older schema is read as it is, never migrated. */
  if (!runner_start (&r, config, &never, &stopped, error)
      || !kt_sink_check_schema (r.sink, error)
      || !kt_sink_has_offsets (r.sink, &present, error))
    return FALSE;

  g_array_set_size (states, r.partitions->len);
  s = (KtPartitionState *) (void *) states->data;
  for (guint i = 0; i < states->len; i++)
    s[i] = (KtPartitionState) { g_array_index (r.partitions, gint32, i), -1, 0, 0 };
  /* Nothing is created: a job that never ran has no offsets to show. */
  if (present && !kt_sink_load_offsets (r.sink, config->job, config->topic, s, states->len,
                                        error))
    return FALSE;
  /* No offsets in MySQL: perhaps an idempotent job that keeps them in
   * Kafka (--offsets kafka), in its consumer group ktally-JOB. */
  kafka = TRUE;
  for (guint i = 0; i < states->len; i++)
    kafka &= s[i].stored < 0;
  if (kafka)
    {
      if (!kt_source_committed (r.source, s, states->len, KAFKA_TIMEOUT_MS, error))
        return FALSE;
      kafka = FALSE;
      for (guint i = 0; i < states->len; i++)
        kafka |= s[i].stored >= 0;
    }
  if (!kt_source_watermarks (r.source, s, states->len, KAFKA_TIMEOUT_MS, error))
    return FALSE;

  if (config->group != NULL)
    {
      g_autoptr(GError) local = NULL;

      /* The group's own description; brokers without DescribeGroups (the
       * test broker) leave the audit trail's last committer per partition. */
      if (!kt_source_group_owners (r.source, config->group, owners, KAFKA_TIMEOUT_MS, &local))
        {
          g_info ("%s; showing each partition's last committer instead", local->message);
          owner_kind = "last committer";
          if (present && !kt_sink_last_committers (r.sink, config->job, config->topic,
                                                   owners, error))
            return FALSE;
        }
    }
  if (json != NULL)
    json_array_add_element (json, status_json (config, states, owners, kafka));
  else
    status_table (config, states, owners, owner_kind, kafka, text);
  return TRUE;
}

gboolean
kt_status (const KtConfig *config, GError **error)
{
  g_autoptr(JsonArray) docs = config->json ? json_array_new () : NULL;
  g_autoptr(GString) text = g_string_new (NULL);

  for (char **topic = config->topics; *topic != NULL; topic++)
    {
      KtConfig one = *config;  /* a shallow copy: its own topic */

      one.topic = *topic;
      if (topic != config->topics && docs == NULL)
        g_string_append_c (text, '\n');
      if (!status_topic (&one, docs, text, error))
        {
          if (config->topics[1] != NULL)
            g_prefix_error (error, "topic %s: ", *topic);
          return FALSE;
        }
    }
  if (docs != NULL)
    {
      g_autoptr(JsonGenerator) gen = json_generator_new ();
      g_autoptr(JsonNode) root = NULL;
      g_autofree char *out = NULL;

      /* One topic: its document, as always; several: an array of them. */
      if (json_array_get_length (docs) == 1)
        root = json_node_copy (json_array_get_element (docs, 0));
      else
        {
          root = json_node_new (JSON_NODE_ARRAY);
          json_node_set_array (root, docs);
        }
      json_generator_set_root (gen, root);
      out = json_generator_to_data (gen, NULL);
      g_string_append_printf (text, "%s\n", out);
    }
  fputs (text->str, stdout);
  return TRUE;
}

gboolean
kt_init_db (const KtConfig *config, GError **error)
{
  g_autoptr(KtSink) sink = kt_sink_new (&config->db, "error_log");

  if (!kt_sink_prepare (sink, config->mode == KT_MODE_IDEMPOTENT, error))
    return FALSE;
  g_message ("ktally's %s tables are in %s",
             config->mode == KT_MODE_IDEMPOTENT ? "idempotent-mode" : "transactional-mode",
             kt_sink_describe (sink));
  return TRUE;
}
