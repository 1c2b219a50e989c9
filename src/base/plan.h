/* plan.h - the batch planner: one fixed offset range per partition.
 *
 * Given where each partition stands (the offset stored in MySQL, the log
 * start and the high watermark from Kafka), a batch reads [from, until) of
 * every partition with something new, at most max-per-partition records
 * each. The plan is pure arithmetic: no Kafka, no MySQL, easy to test. */
#pragma once
#include <glib.h>
#include "anchor.h"
#include "coverage.h"

typedef enum
{
  KT_DATA_LOSS_FAIL,  /* default: stop with a clear error */
  KT_DATA_LOSS_SKIP,  /* continue from the log start, loudly */
} KtOnDataLoss;

/* What we know of one partition when a batch is planned. */
typedef struct
{
  gint32 partition;
  gint64 stored;  /* the next offset to read, as stored in kafka_offset */
  gint64 low;     /* log start offset */
  gint64 high;    /* high watermark */
} KtPartitionState;

/* One partition's share of a batch. The fence is always the stored offset
 * (`from`); reading may start later when a data loss is skipped. */
typedef struct
{
  gint32 partition;
  gint64 from;       /* stored offset: UPDATE ... WHERE `offset` = from */
  gint64 read_from;  /* first offset to read (from, or the log start) */
  gint64 until;      /* exclusive end: the new stored offset */
  /* Set by the read: the last record it handed over of the range (none:
   * unset), stored with until as the partition's anchor (anchor.h). */
  KtAnchor anchor;
} KtRange;

/* What the records of ranges held: one partition's range of a batch (its
 * audit row, offsets.h), or every range a run read (its totals). */
typedef struct
{
  guint64 records;
  guint64 lines;
  guint64 errors;     /* the lines counted */
  guint64 malformed;
} KtRangeStats;

/* Adds @more to @into. */
void     kt_range_stats_add (KtRangeStats *into, const KtRangeStats *more);

/* A range of offsets that retention removed before we read it. */
typedef struct
{
  gint32 partition;
  gint64 from;   /* stored offset */
  gint64 until;  /* where the data now starts (or the high watermark) */
} KtDataLoss;

/* Appends one KtRange to @ranges for each partition of @states with
 * records between its stored offset and its high watermark (none for the
 * others), each at most @max_per_partition long (> 0). A stored offset
 * below the log start or beyond the high watermark is a data loss: with
 * KT_DATA_LOSS_FAIL, fails with KT_ERROR_DATA_LOSS naming the partition and
 * the lost range; with KT_DATA_LOSS_SKIP, reads from the log start instead
 * and appends the lost range to @losses (which may then be NULL only if the
 * caller does not care). */
gboolean kt_plan_make (const KtPartitionState *states, guint n_states,
                       gint64 max_per_partition, KtOnDataLoss on_data_loss,
                       GArray *ranges, GArray *losses, GError **error);

/* Idempotent mode: fits @range to the offsets its partition's output
 * already counted (@covered, see coverage.h). Reading starts at the first
 * offset from read_from on that is not covered; when the whole range is
 * covered, the range moves on past it, at most @max_per_partition
 * uncovered offsets further (never past @high), so that a rewind over
 * counted offsets costs one batch, not one per --max-per-partition. Covered
 * offsets that are still inside the range are read but never counted. */
void     kt_plan_skip_covered (KtRange *range, const KtCoverage *covered, gint64 high,
                               gint64 max_per_partition);

/* Sum of (until - read_from) over @ranges: offsets this batch covers. */
gint64   kt_plan_span (const GArray *ranges);

/* After @ranges (KtRange) committed: each partition of @states
 * (KtPartitionState) that had a range stands at its until now. */
void     kt_plan_advance (GArray *states, const GArray *ranges);
