/* offsets.h - where each job stands: kafka_offset and the audit trail.
 *
 * The only place offsets are stored in MySQL. A commit fences each
 * partition's UPDATE on the offset its batch was planned from, in the
 * commit's own transaction, so a second writer on the same job can never
 * count a range twice; the same transaction writes the batch's audit rows
 * (ktally_batches), which `ktally audit` chains. Every function takes a
 * KtDb (connected on demand); those that say so run inside the caller's
 * open transaction. */
#pragma once
#include <glib.h>
#include "db.h"
#include "plan.h"

/* What a batch counted of one partition's range: its audit row. */
typedef struct
{
  guint64 records;
  guint64 lines;
  guint64 errors;
  guint64 malformed;
} KtRangeStats;

/* One row of ktally_batches, as `ktally audit` reads it. */
typedef struct
{
  char   *job;
  char   *topic;
  gint32  partition;
  gint64  from;
  gint64  until;
  guint64 errors;
  char   *target;
} KtBatchRow;

void     kt_batch_row_clear (KtBatchRow *row);

/* Whether kafka_offset exists (nothing is created). */
gboolean kt_offsets_present (KtDb *db, gboolean *present, GError **error);

/* Fills ->stored of each of @states with @job's offset for @topic, or -1
 * where it has no row. */
gboolean kt_offsets_load (KtDb *db, const char *job, const char *topic,
                          KtPartitionState *states, guint n_states, GError **error);

/* Creates the offset row of a partition seen for the first time. A row
 * that another writer created first is left as it is. */
gboolean kt_offsets_init (KtDb *db, const char *job, const char *topic, gint32 partition,
                          gint64 offset, GError **error);

/* In the caller's transaction: for each range that moves (until > from),
 * in partition order, UPDATE kafka_offset to until WHERE it is still from.
 * Stops at the first partition whose offset moved since (0 rows: another
 * writer committed past `from` after we planned; its counts are in, ours
 * must not be) and names it in *@fenced_partition; -1 when every row moved.
 * The caller rolls back a fenced transaction. */
gboolean kt_offsets_fence (KtDb *db, const char *job, const char *topic,
                           const GArray *ranges, gint32 *fenced_partition, GError **error);

/* In the caller's transaction: one ktally_batches row per range that
 * moves, with its stats (@stats[i] for @ranges[i]), naming @target (the
 * table the counts went to) and @member (the committer). */
gboolean kt_offsets_record (KtDb *db, const char *job, const char *topic, const char *target,
                            const char *member, const GArray *ranges,
                            const KtRangeStats *stats, GError **error);

/* kt_offsets_fence() in a transaction of its own (idempotent mode, whose
 * output was written before). */
gboolean kt_offsets_store (KtDb *db, const char *job, const char *topic,
                           const GArray *ranges, gint32 *fenced_partition, GError **error);

/* --audit-keep: folds @job's ktally_batches rows older than @keep_seconds
 * into one row per partition (the chain's start moves forward, its sums
 * stay). */
gboolean kt_offsets_compact (KtDb *db, const char *job, const char *topic,
                             gint64 keep_seconds, GError **error);

/* Every ktally_batches row (of @job, or all jobs if NULL), ordered by job,
 * topic, partition and from, into @rows (KtBatchRow, cleared by the array). */
gboolean kt_offsets_read_batches (KtDb *db, const char *job, GArray *rows, GError **error);

/* Every kafka_offset row into @offsets: "job\ttopic\tpartition" -> gint64*. */
gboolean kt_offsets_load_all (KtDb *db, GHashTable *offsets, GError **error);

/* The member that last committed each partition of @job/@topic, from the
 * audit rows: partition -> "client@host" (char*, owned by @owners). */
gboolean kt_offsets_last_committers (KtDb *db, const char *job, const char *topic,
                                     GHashTable *owners, GError **error);
