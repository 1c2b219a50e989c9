/* anchors.h - which topic is this? A job's anchors against the log.
 *
 * Each partition's anchor (anchor.h) is the last record the job counted
 * of it, stored with its offsets (or an idempotent job's counts, the
 * kind's `anchors` table). Before a job reads on from its stored offsets
 * it reads the record at each anchor's offset, one Fetch per partition
 * in all (they go together), and stops when another record is there: the
 * topic was deleted and created again (or truncated), and its stored
 * offsets name records of a log that is gone. The feed (feed.c) asks
 * when a job starts, when the group assigns it a partition, and when the
 * topic may have changed under it. */
#pragma once
#include <glib.h>
#include "kind.h"

/* Checks the anchors of the partitions @partitions (gint32) of @states
 * (KtPartitionState: stored offsets and the readable log, as planned).
 * An anchor whose record is not in the readable log (below the log
 * start: retention or compaction removed it; or a hole at its offset) is
 * passed over: the log-start rule is all there is. Fails with
 * KT_ERROR_DATA_LOSS, one line naming the partition, the offset, both
 * records and the way out (`ktally reset` or `ktally forget`, as @kind
 * allows), when another record is there or the log ends before it; with
 * the source's or the database's errors otherwise. */
gboolean kt_anchors_check (KtKindContext *context, const KtKind *kind, const GArray *states,
                           const GArray *partitions, const volatile int *stop,
                           GError **error);
