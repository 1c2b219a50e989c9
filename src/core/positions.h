/* positions.h - where each partition of a job stands before a batch.
 *
 * The planner's input (plan.h): each partition's stored offset (in
 * kafka_offset, or the consumer group's with --offsets kafka), log start
 * and high watermark. A partition seen for the first time starts at
 * --start (earliest or latest, decided once and stored before anything is
 * read), or a replay's --from; a replay's partitions end at its --until. */
#pragma once
#include <glib.h>
#include "kind-context.h"
#include "plan.h"

/* Fills @states (KtPartitionState) for @partitions (gint32): the stored
 * offsets first (-1: none), then the watermarks, so that a stored offset
 * is never ahead of the high watermark asked after it, even while another
 * writer commits. @expected (KtPartitionState, may be NULL or empty):
 * where each partition stood after this process's last batch; a stored
 * offset that `ktally reset` moved since, or one `ktally forget` removed,
 * is said in the log (an offsets-moved event), where another writer's
 * batch is not news. Creates and commits nothing (the anchors are checked
 * against this, before: anchors.h). Failures are the source's or the
 * database's. */
gboolean kt_positions_read   (KtKindContext *context, const GArray *partitions,
                              const GArray *expected, GArray *states, GError **error);

/* After kt_positions_read(): the partitions of @states without a stored
 * offset get one at --start (a row, or committed to the consumer group),
 * read back; a replay's partitions end at its --until. */
gboolean kt_positions_settle (KtKindContext *context, GArray *states, GError **error);

/* --group: where the partitions the group just assigned start: their
 * stored offsets in ->stored of @states (rows created, as above, for new
 * ones). */
gboolean kt_positions_assigned (KtKindContext *context, KtPartitionState *states, guint n,
                                GError **error);

/* The partitions of job->topic this instance reads, ascending, into
 * @partitions (gint32): all of them, or only the --partitions ones (one
 * that the topic does not have is KT_ERROR_USAGE). Fresh from the
 * metadata; failures are the source's. */
gboolean kt_positions_partitions (KtKindContext *context, GArray *partitions, int timeout_ms,
                                  GError **error);
