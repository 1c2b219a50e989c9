/* assignment.c - --group: what a rebalance does (assignment.h).
 *
 * Takes librdkafka's rebalance events for one topic, hands the source a
 * plan for its streams and librdkafka the assignment calls. The decision
 * (kt_assignment_decide) and the reading of a member's assignment bytes
 * are pure and unit-tested (tests/test-assignment.c,
 * tests/fuzz/fuzz-assignment.c); the rest asks MySQL's offsets through the
 * caller's hook, applies and logs. It never reads records, never takes an
 * offset from the group, and never keeps a position across a rebalance. */
#include "assignment.h"

#include <string.h>
#include "rdkafka-autocleanups.h"

struct _KtAssignment
{
  char               *topic;
  KtAssignmentStreams streams;
  gpointer            source;  /* borrowed */
  KtStartOffsetsFunc  start_offsets;
  KtRebalancingFunc   rebalancing;
  gpointer            start_offsets_data;
  gboolean            assigned_once;
  gboolean            revoked;  /* a rebalance happened since last looked */
};

void
kt_assignment_plan_init (KtAssignmentPlan *plan)
{
  plan->assign = g_array_new (FALSE, FALSE, sizeof (KtAssignedPartition));
  plan->unassign = g_array_new (FALSE, FALSE, sizeof (gint32));
  plan->owned = g_array_new (FALSE, FALSE, sizeof (KtAssignedPartition));
  plan->incremental = plan->unassign_all = FALSE;
}

void
kt_assignment_plan_clear (KtAssignmentPlan *plan)
{
  g_clear_pointer (&plan->assign, g_array_unref);
  g_clear_pointer (&plan->unassign, g_array_unref);
  g_clear_pointer (&plan->owned, g_array_unref);
}

static gint
compare_assigned (gconstpointer a, gconstpointer b)
{
  gint32 x = ((const KtAssignedPartition *) a)->partition;
  gint32 y = ((const KtAssignedPartition *) b)->partition;

  return (x > y) - (x < y);
}

static gboolean
contains (const gint32 *parts, guint n_parts, gint32 partition)
{
  for (guint i = 0; i < n_parts; i++)
    if (parts[i] == partition)
      return TRUE;
  return FALSE;
}

/* @owned's entries, ascending, one per partition: of two, the later one. */
static void
sort_unique (GArray *owned)
{
  guint kept = 0;

  /* Stable, so that the later of two equal entries stays last. */
  g_array_sort (owned, compare_assigned);
  for (guint i = 0; i < owned->len; i++)
    {
      KtAssignedPartition *a = &g_array_index (owned, KtAssignedPartition, i);

      if (kept > 0 && g_array_index (owned, KtAssignedPartition, kept - 1).partition
                      == a->partition)
        g_array_index (owned, KtAssignedPartition, kept - 1) = *a;
      else
        g_array_index (owned, KtAssignedPartition, kept++) = *a;
    }
  g_array_set_size (owned, kept);
}

void
kt_assignment_decide (const GArray *held, KtRebalance event, gboolean cooperative,
                      const gint32 *parts, const gint64 *stored, guint n_parts,
                      KtAssignmentPlan *plan)
{
  g_return_if_fail (plan->assign != NULL && plan->assign->len == 0);

  plan->incremental = cooperative && event != KT_REBALANCE_FAILED;
  plan->unassign_all = event != KT_REBALANCE_ASSIGN && !plan->incremental;
  /* No position survives a rebalance: what is kept is sought again. */
  if (!plan->unassign_all)
    for (guint i = 0; i < held->len; i++)
      {
        gint32 p = g_array_index (held, gint32, i);
        KtAssignedPartition kept = { p, -1 };

        if (event == KT_REBALANCE_ASSIGN || !contains (parts, n_parts, p))
          g_array_append_val (plan->owned, kept);
      }
  for (guint i = 0; i < n_parts; i++)
    {
      if (event == KT_REBALANCE_ASSIGN)
        {
          /* A newly assigned partition starts at the offset stored in
           * MySQL, never at the group's committed one. */
          KtAssignedPartition a = { parts[i], stored != NULL && stored[i] >= 0 ? stored[i] : -1 };

          g_array_append_val (plan->assign, a);
          g_array_append_val (plan->owned, a);
        }
      else if (plan->incremental)
        g_array_append_val (plan->unassign, parts[i]);
    }
  sort_unique (plan->owned);
}

KtAssignment *
kt_assignment_new (const char *topic, const KtAssignmentStreams *streams, gpointer source,
                   KtStartOffsetsFunc start_offsets, KtRebalancingFunc rebalancing,
                   gpointer user_data)
{
  KtAssignment *self = g_new0 (KtAssignment, 1);

  self->topic = g_strdup (topic);
  self->streams = *streams;
  self->source = source;
  self->start_offsets = start_offsets;
  self->rebalancing = rebalancing;
  self->start_offsets_data = user_data;
  return self;
}

void
kt_assignment_free (KtAssignment *self)
{
  if (self == NULL)
    return;
  g_free (self->topic);
  g_free (self);
}

/* The offsets stored in MySQL for @parts (a new array), or NULL when they
 * cannot be read: then these partitions start nowhere (unread by this
 * member until a plan seeks them). */
static gint64 *
stored_offsets (KtAssignment *self, const rd_kafka_topic_partition_list_t *parts)
{
  g_autofree KtPartitionState *states = g_new0 (KtPartitionState, MAX (parts->cnt, 1));
  g_autoptr(GError) local = NULL;
  gint64 *stored;

  for (int i = 0; i < parts->cnt; i++)
    states[i].partition = parts->elems[i].partition;
  if (self->start_offsets == NULL
      || !self->start_offsets (states, (guint) parts->cnt, self->start_offsets_data, &local))
    {
      g_warning ("group: cannot read the stored offsets of the assigned partitions: "
                 "%s; they will be sought before reading",
                 local != NULL ? local->message : "no lookup");
      return NULL;
    }
  stored = g_new (gint64, MAX (parts->cnt, 1));
  for (int i = 0; i < parts->cnt; i++)
    stored[i] = states[i].stored;
  return stored;
}

/* @plan's calls to librdkafka for @event; the error of the one that
 * failed, or NULL. */
static rd_kafka_error_t *
apply_to_handle (rd_kafka_t *rk, KtRebalance event, const KtAssignmentPlan *plan,
                 const char *topic)
{
  g_autoptr(rd_kafka_topic_partition_list_t) list =
    rd_kafka_topic_partition_list_new ((int) MAX (plan->assign->len + plan->unassign->len, 1));

  if (plan->unassign_all)
    {
      rd_kafka_assign (rk, NULL);
      return NULL;
    }
  for (guint i = 0; i < plan->assign->len; i++)
    {
      const KtAssignedPartition *a = &g_array_index (plan->assign, KtAssignedPartition, i);

      rd_kafka_topic_partition_list_add (list, topic, a->partition)->offset =
        a->offset >= 0 ? a->offset : RD_KAFKA_OFFSET_END;
    }
  for (guint i = 0; i < plan->unassign->len; i++)
    rd_kafka_topic_partition_list_add (list, topic, g_array_index (plan->unassign, gint32, i));
  if (event != KT_REBALANCE_ASSIGN)
    return rd_kafka_incremental_unassign (rk, list);
  if (plan->incremental)
    return rd_kafka_incremental_assign (rk, list);
  rd_kafka_assign (rk, list);
  return NULL;
}

void
kt_assignment_rebalance (KtAssignment *self, rd_kafka_t *rk, rd_kafka_resp_err_t err,
                         rd_kafka_topic_partition_list_t *parts)
{
  gboolean cooperative = g_strcmp0 (rd_kafka_rebalance_protocol (rk), "COOPERATIVE") == 0;
  KtRebalance event = err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS ? KT_REBALANCE_ASSIGN
                      : err == RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS ? KT_REBALANCE_REVOKE
                      : KT_REBALANCE_FAILED;
  g_autoptr(GString) list = g_string_new (NULL);
  g_autoptr(GArray) held = g_array_new (FALSE, FALSE, sizeof (gint32));
  g_autofree gint32 *ids = g_new (gint32, MAX (parts->cnt, 1));
  g_autofree gint64 *stored = NULL;
  g_auto(KtAssignmentPlan) plan = { 0 };
  rd_kafka_error_t *e;

  for (int i = 0; i < parts->cnt; i++)
    {
      ids[i] = parts->elems[i].partition;
      g_string_append_printf (list, "%s%d", i ? "," : "", parts->elems[i].partition);
    }
  /* The owner of the partitions may still be writing what it read of
   * them (a commit in flight): that ends first. */
  if (self->rebalancing != NULL)
    self->rebalancing (self->start_offsets_data);
  if (event == KT_REBALANCE_FAILED)
    g_warning ("group: rebalance error: %s; releasing every partition", rd_kafka_err2str (err));
  if (event == KT_REBALANCE_ASSIGN)
    stored = stored_offsets (self, parts);
  self->streams.held (self->source, held);
  kt_assignment_plan_init (&plan);
  kt_assignment_decide (held, event, cooperative, ids, stored, (guint) parts->cnt, &plan);
  self->streams.apply (self->source, &plan);
  self->revoked = TRUE;
  e = apply_to_handle (rk, event, &plan, self->topic);
  if (event == KT_REBALANCE_ASSIGN)
    {
      self->assigned_once = TRUE;
      g_message ("group: assigned %s/[%s] (%s rebalancing)", self->topic,
                 list->str, cooperative ? "cooperative" : "eager");
    }
  else
    g_message ("group: revoked %s/[%s]", self->topic, list->str);
  if (e != NULL)
    {
      g_warning ("group: cannot apply the assignment: %s", rd_kafka_error_string (e));
      rd_kafka_error_destroy (e);
    }
}

gboolean
kt_assignment_take_revoked (KtAssignment *self)
{
  if (self == NULL || !self->revoked)
    return FALSE;
  self->revoked = FALSE;
  return TRUE;
}

void
kt_assignment_forget_caller (KtAssignment *self)
{
  if (self == NULL)
    return;
  self->start_offsets = NULL;
  self->rebalancing = NULL;
}

gboolean
kt_assignment_assigned_once (KtAssignment *self)
{
  return self != NULL && self->assigned_once;
}

/* Reads a big-endian integer of @size bytes at *@p, if it is there. */
static gboolean
read_be (const guint8 **p, const guint8 *end, gsize size, gint64 *out)
{
  gint64 v = 0;

  if ((gsize) (end - *p) < size)
    return FALSE;
  for (gsize i = 0; i < size; i++)
    v = (v << 8) | (*p)[i];
  if (size == 2)
    v = (gint16) v;
  else if (size == 4)
    v = (gint32) v;
  *p += size;
  *out = v;
  return TRUE;
}

void
kt_assignment_member_partitions (const guint8 *bytes, gsize size, const char *topic,
                                 GArray *partitions)
{
  const guint8 *p = bytes, *end;
  gint64 version, n_topics, len, n_parts, part;

  if (p == NULL)
    return;
  /* Kafka's ConsumerProtocolAssignment: version, then per topic its
   * name and partition ids, all big-endian. */
  end = p + size;
  if (!read_be (&p, end, 2, &version) || !read_be (&p, end, 4, &n_topics))
    return;
  for (gint64 t = 0; t < n_topics; t++)
    {
      gboolean ours;

      if (!read_be (&p, end, 2, &len) || len < 0 || end - p < len)
        break;
      ours = (gsize) len == strlen (topic) && memcmp (p, topic, (gsize) len) == 0;
      p += len;
      if (!read_be (&p, end, 4, &n_parts))
        break;
      for (gint64 i = 0; i < n_parts && read_be (&p, end, 4, &part); i++)
        if (ours)
          {
            gint32 id = (gint32) part;
            g_array_append_val (partitions, id);
          }
    }
}
