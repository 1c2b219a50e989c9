/* assignment.h - --group: what a rebalance does to the partitions this
 * instance reads.
 *
 * Kafka's group protocol gives and takes partitions through librdkafka's
 * rebalance callback, from inside a consume call on the reading thread.
 * What to do about it is decided by a pure function,
 * kt_assignment_decide(): the partitions held before, the event and the
 * partitions it names in, what to assign (at which offsets), what to
 * unassign, and which partitions are read after, from where, out. The
 * rest (KtAssignment) asks the offsets stored in MySQL for newly assigned
 * partitions, hands the plan to the source's streams and to librdkafka,
 * and logs it. Offsets are never taken from the group: a newly assigned
 * partition starts at the offset stored in MySQL, and no position
 * survives a rebalance (librdkafka 2.0 may resume a partition it keeps
 * past records it fetched but never delivered), so every other partition
 * is sought before it is read again. It also reads which partitions a
 * member holds from the group's description (`ktally status`). */
#pragma once
#include <glib.h>
#include <librdkafka/rdkafka.h>
#include "plan.h"

typedef enum
{
  KT_REBALANCE_ASSIGN,  /* partitions given */
  KT_REBALANCE_REVOKE,  /* partitions taken */
  KT_REBALANCE_FAILED,  /* a rebalance error: everything is released */
} KtRebalance;

/* A partition, and where reading it starts: an offset, or -1 when not
 * known (kept from before a rebalance, or its stored offset could not be
 * read): the next plan seeks it first. */
typedef struct
{
  gint32 partition;
  gint64 offset;
} KtAssignedPartition;

/* What one rebalance does. */
typedef struct
{
  /* To hand to librdkafka's assignment: incrementally added (@incremental)
   * or as the whole of it; an offset of -1 becomes the log's end, a
   * placeholder the next plan seeks away from. In the order given. */
  GArray  *assign;        /* KtAssignedPartition */
  /* To take out of librdkafka's assignment, incrementally. */
  GArray  *unassign;      /* gint32 */
  gboolean incremental;   /* cooperative: assign and unassign add and take */
  gboolean unassign_all;  /* the whole assignment goes (eager, or a failure) */
  /* After: the partitions read (a stream each), ascending, each from its
   * offset; every other stream goes, with what it carried. */
  GArray  *owned;         /* KtAssignedPartition */
} KtAssignmentPlan;

void kt_assignment_plan_init  (KtAssignmentPlan *plan);
void kt_assignment_plan_clear (KtAssignmentPlan *plan);

/* Decides one rebalance, without side effects. @held: the partitions read
 * before (gint32, any order); @event and its @n_parts partitions @parts;
 * @cooperative: the group's protocol is COOPERATIVE (else EAGER); @stored:
 * for KT_REBALANCE_ASSIGN, the offset stored for each of @parts (negative:
 * unknown), or NULL when none could be read. Fills @plan (initialised):
 *  - ASSIGN: assign @parts at their stored offsets; the partitions held
 *    stay, their positions forgotten; owned: held and @parts.
 *  - REVOKE, cooperative: unassign @parts; owned: the held ones but @parts,
 *    positions forgotten.
 *  - REVOKE, eager, and FAILED whatever the protocol: unassign everything;
 *    owned: none.
 * Deciding the same event again on the partitions it left owned gives the
 * same owned partitions. */
void kt_assignment_decide (const GArray *held, KtRebalance event, gboolean cooperative,
                           const gint32 *parts, const gint64 *stored, guint n_parts,
                           KtAssignmentPlan *plan);

/* The partitions of @topic in one member's assignment as a group's
 * description carries it (Kafka's ConsumerProtocolAssignment: a version,
 * then per topic its name and partition ids, big-endian), appended to
 * @partitions (gint32) in the order they come. Any @size bytes at @bytes
 * (NULL: none): a cut or malformed assignment gives what came before the
 * damage, and nothing past @size is read. */
void kt_assignment_member_partitions (const guint8 *bytes, gsize size, const char *topic,
                                      GArray *partitions);

/* ---- The group protocol on a librdkafka handle --------------------------- */

typedef struct _KtAssignment KtAssignment;

/* What the source does for a rebalance, on the reading thread: */
typedef struct
{
  /* the partitions it has a stream for, into @partitions (gint32); */
  void (*held)  (gpointer source, GArray *partitions);
  /* forget every stream's position and what it carried, keep a stream
   * for @plan->owned only, and start those of @plan->assign at their
   * offsets. */
  void (*apply) (gpointer source, const KtAssignmentPlan *plan);
} KtAssignmentStreams;

/* Where newly assigned partitions start: fills ->stored of each state with
 * the offset the partition must be read from (the one in kafka_offset), or
 * fails. */
typedef gboolean (*KtStartOffsetsFunc) (KtPartitionState *states, guint n,
                                        gpointer user_data, GError **error);

/* Called as a rebalance begins, before any partition changes hands. */
typedef void (*KtRebalancingFunc) (gpointer user_data);

/* For @topic's source @source (borrowed; @streams is copied); @start_offsets
 * and @rebalancing (either may be NULL) are called with @user_data. */
KtAssignment *kt_assignment_new  (const char *topic, const KtAssignmentStreams *streams,
                                  gpointer source, KtStartOffsetsFunc start_offsets,
                                  KtRebalancingFunc rebalancing, gpointer user_data);
void          kt_assignment_free (KtAssignment *self);  /* NULL is fine */

/* The rebalance callback's work (rd_kafka_conf_set_rebalance_cb): decides,
 * has the source apply the plan, then applies it to @rk's assignment and
 * logs one line. */
void          kt_assignment_rebalance (KtAssignment *self, rd_kafka_t *rk,
                                       rd_kafka_resp_err_t err,
                                       rd_kafka_topic_partition_list_t *parts);

/* Whether a rebalance happened since the last call that answered TRUE
 * (a read in flight is then abandoned). NULL: FALSE. */
gboolean      kt_assignment_take_revoked (KtAssignment *self);

/* The caller's functions are not called again (it is going away; the
 * consumer's close may still rebalance, on a thread of its own). NULL is
 * fine. */
void          kt_assignment_forget_caller (KtAssignment *self);

/* Whether any assignment has arrived yet. NULL: FALSE. */
gboolean      kt_assignment_assigned_once (KtAssignment *self);

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (KtAssignmentPlan, kt_assignment_plan_clear)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (KtAssignment, kt_assignment_free)
