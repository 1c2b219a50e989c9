/* plan.h - the batch planner: one fixed offset range per partition.
 *
 * Given where each partition stands (the offset stored in MySQL, the log
 * start and the high watermark from Kafka), a batch reads [from, until) of
 * every partition with something new, at most max-per-partition records
 * each. The plan is pure arithmetic: no Kafka, no MySQL, easy to test. */
#pragma once
#include <glib.h>

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
} KtRange;

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

/* Idempotent mode: partitions are cut into aligned chunks, and a chunk's
 * counts are always rewritten from its start, so each range is moved back
 * to re-read the open chunk: read_from becomes the start of the chunk row
 * @open_start (the row nearest below `from` in from's aligned chunk, -1 for
 * none; @open_until is where that row ends). Where retention already
 * removed that row's head (below @low), it cannot be re-read: reading goes
 * on from where the row ends, as a new chunk. With no row, from stays. */
void     kt_plan_reread_chunk (KtRange *range, gint64 open_start, gint64 open_until,
                               gint64 low);

/* Idempotent mode: the chunks [start, until) that @range covers: the first
 * starts at read_from, the others at multiples of @chunk_size, each ending
 * at the next multiple or at the range's until. Appends to @bounds pairs of
 * gint64 (start, until). */
void     kt_plan_chunks (const KtRange *range, gint64 chunk_size, GArray *bounds);

/* Sum of (until - read_from) over @ranges: offsets this batch covers. */
gint64   kt_plan_span (const GArray *ranges);
