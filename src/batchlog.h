/* batchlog.h - what a runner tells about its batches: one log line per
 * batch, the metrics, the losses it skipped, and a sample of what it could
 * not read, once a minute. Kept apart from the scheduler so that run.c is
 * the loop and nothing else. */
#pragma once
#include <glib.h>
#include "kind.h"
#include "metrics.h"
#include "plan.h"
#include "run.h"

typedef struct
{
  const char *job;
  const char *topic;
  KtMetrics  *metrics;          /* borrowed */
  gboolean    quiet;            /* the batch line at debug level (a replay shows progress) */
  guint64     batch_no;
  guint64     fenced;           /* batches fenced off by another writer */
  guint64     retried;          /* commits tried again after a deadlock */
  gint64      last_sample_at;
  guint64     folded;           /* lines counted as (other) not yet warned of */
  gint64      last_folded_at;
  KtRunTotals totals;
} KtBatchLog;

/* The batch after one whose COMMIT's answer was lost (@ranges, KtRange):
 * says whether it landed, from the offsets now stored (@states). */
void kt_batch_log_unknown   (KtBatchLog *log, GArray *ranges, const GArray *states);

/* A batch that found nothing new. */
void kt_batch_log_idle      (KtBatchLog *log, const GArray *states, gint64 started);

/* A batch another writer fenced off: rolled back whole. */
void kt_batch_log_fenced    (KtBatchLog *log, const GArray *ranges, guint64 records,
                             gint32 partition, gint64 started);

/* A batch that committed (@moved: a partition whose offsets another writer
 * moved while its output stood, or -1): the losses it skipped, its line
 * (with the kind's part, from @kind's summarise), its figures. */
void kt_batch_log_committed (KtBatchLog *log, const KtJobKind *kind, gpointer state,
                             const GArray *states, const GArray *ranges,
                             const GArray *losses, guint64 records, gint32 moved,
                             gint64 started);
