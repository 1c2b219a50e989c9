/* batchlog.h - what a runner tells about its batches: one log line per
 * batch, the metrics, the losses it skipped, and a sample of what it could
 * not read, once a minute. Kept apart from the scheduler so that run.c is
 * the loop and nothing else. */
#pragma once
#include <glib.h>
#include "kind.h"
#include "metrics.h"
#include "plan.h"
#include "source.h"

typedef struct
{
  const char *job;
  const char *topic;
  KtMetrics  *metrics;          /* borrowed */
  KtSource   *source;           /* borrowed: when the next records to read were written */
  gboolean    quiet;            /* the batch line at debug level (a replay shows progress) */
  guint64     batch_no;         /* the loop's turns: every batch tried, idle and failed
                                 * ones too (the events' "turn"); a committed batch
                                 * is named by its audit id (its "batch") */
  guint64     fenced;           /* batches fenced off by another writer */
  guint64     retried;          /* commits tried again after a deadlock */
  gint64      last_sample_at;
  guint64     folded;           /* lines counted as (other) not yet warned of */
  gint64      last_folded_at;
  KtRangeStats totals;
  /* Failed batches in a row: since when (monotonic; 0: none), why (the
   * metrics' word: "mysql", "kafka"), how many. The next success says it
   * is over. */
  gint64      outage_since;
  const char *outage_cause;
  guint       outage_failures;
  gboolean    lost_commit;      /* the failure told next lost its COMMIT's answer */
  /* The batch being told was planned while the one of this turn
   * committed (its events' "ahead_of"), or 0: from the database. */
  guint64     ahead_of;
} KtBatchLog;

/* The runner starts its batches: @partitions of @topics ("a,b") into
 * @database.@table, reached over @transport (kt_db_transport()), as @kind in
 * @mode, every @interval seconds. */
void kt_batch_log_start     (KtBatchLog *log, const char *topics, guint partitions,
                             const char *database, const char *transport, const char *table,
                             const char *kind, const char *mode, gboolean offsets_in_kafka,
                             double interval);

/* The batch after one whose COMMIT's answer was lost (@ranges, KtRange):
 * says whether it landed, from the offsets now stored (@states). */
void kt_batch_log_unknown   (KtBatchLog *log, GArray *ranges, const GArray *states);

/* A batch that failed for a reason retrying may cure (@cause: the metrics'
 * word, "mysql", "kafka", "deadlock"; @message what happened), tried again
 * after @backoff seconds. */
void kt_batch_log_failed    (KtBatchLog *log, const char *cause, const char *message,
                             double backoff, gint64 started);

/* A commit that met a deadlock (@message), committed again: attempt
 * @attempt of @attempts. */
void kt_batch_log_commit_again (KtBatchLog *log, const char *message, guint attempt,
                                guint attempts);

/* A batch abandoned whole, nothing committed, to be planned again at
 * once: @cause ("rebalance", "retention") is the metrics' word, @message
 * what happened. */
void kt_batch_log_abandoned (KtBatchLog *log, const char *cause, const char *message);

/* A batch that found nothing new. */
void kt_batch_log_idle      (KtBatchLog *log, const GArray *states, gint64 started);

/* A batch another writer fenced off: rolled back whole. */
void kt_batch_log_fenced    (KtBatchLog *log, const GArray *ranges, guint64 records,
                             gint32 partition, gint64 started);

/* A batch that committed (@moved: a partition whose offsets another writer
 * moved while its output stood, or -1): the losses it skipped, its line
 * (with the kind's part, from @kind's summarise of @batch), its figures. @bytes:
 * the bytes of record values it read; @audit_id: the first ktally_batches
 * id it wrote (what `reset --to batch:ID` takes), which names it. */
/* Where a committed batch's time went (monotonic microseconds): its plan
 * began, its ranges were known, its last record was taken, its commit
 * began (after the batch before it landed) and COMMIT returned. */
typedef struct
{
  gint64 started;
  gint64 planned;
  gint64 read;
  gint64 committing;
  gint64 committed;
} KtBatchTimes;

void kt_batch_log_committed (KtBatchLog *log, const KtKind *kind, gpointer batch,
                             const GArray *states, const GArray *ranges,
                             const GArray *losses, guint64 records, gint64 bytes,
                             gint32 moved, gint64 audit_id, const KtBatchTimes *times);
