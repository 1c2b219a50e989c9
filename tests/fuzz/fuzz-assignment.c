/* fuzz-assignment.c - libFuzzer target for the --group rebalance decision
 * (assignment.c's kt_assignment_decide).
 *
 * The bytes are a protocol (cooperative or eager) and a sequence of
 * rebalances, played the way librdkafka plays them (a cooperative
 * assignment names new partitions only and a revocation held ones; an
 * eager assignment follows the revocation of everything; a failure may
 * come any time), interleaved with decisions on arbitrary input
 * (partitions held and named in any order, twice, negative; offsets
 * unknown or missing). Every decision must keep the contract:
 *  - it never assigns a partition the event does not name, each at its
 *    stored offset or -1 (unknown), and assigns nothing on a revocation;
 *  - it never drops a partition it keeps: the partitions read after are
 *    exactly held + named (assignment), held - named (cooperative
 *    revocation) or none (eager revocation, failure), ascending, once;
 *  - no position survives: a partition read after starts at -1 unless the
 *    event assigned it at a known stored offset;
 *  - deciding the same event again on what it left gives the same;
 * and, played as librdkafka plays them, the partitions read are always
 * exactly librdkafka's assignment. The same bytes, read as a member's
 * assignment from a group's description, are read in bounds, and cut,
 * give a prefix of what they give whole. */
#include <glib.h>
#include <string.h>
#include "assignment.h"

int LLVMFuzzerTestOneInput (const guint8 *data, size_t size);

typedef struct
{
  const guint8 *p, *end;
} Input;

static guint
next (Input *in)
{
  return in->p < in->end ? *in->p++ : 0;
}

static gboolean
has (const gint32 *ids, guint n, gint32 id)
{
  for (guint i = 0; i < n; i++)
    if (ids[i] == id)
      return TRUE;
  return FALSE;
}

static gboolean
in_array (const GArray *ids, gint32 id)
{
  return has ((const gint32 *) (const void *) ids->data, ids->len, id);
}

/* The contract of one decision. */
static void
check (const GArray *held, KtRebalance event, gboolean cooperative, const gint32 *parts,
       const gint64 *stored, guint n, const KtAssignmentPlan *plan)
{
  g_autoptr(GArray) owned_ids = g_array_new (FALSE, FALSE, sizeof (gint32));
  g_auto(KtAssignmentPlan) again = { 0 };
  gboolean release = event == KT_REBALANCE_FAILED || (event == KT_REBALANCE_REVOKE && !cooperative);

  g_assert_cmpint (plan->unassign_all, ==, release);
  g_assert_cmpint (plan->incremental, ==, cooperative && event != KT_REBALANCE_FAILED);
  if (event == KT_REBALANCE_ASSIGN)
    {
      g_assert_cmpuint (plan->assign->len, ==, n);
      for (guint i = 0; i < n; i++)
        {
          const KtAssignedPartition *a = &g_array_index (plan->assign, KtAssignedPartition, i);

          g_assert_cmpint (a->partition, ==, parts[i]);
          g_assert_cmpint (a->offset, ==, stored != NULL && stored[i] >= 0 ? stored[i] : -1);
        }
      g_assert_cmpuint (plan->unassign->len, ==, 0);
    }
  else
    {
      g_assert_cmpuint (plan->assign->len, ==, 0);
      g_assert_cmpuint (plan->unassign->len, ==, release ? 0 : n);
      for (guint i = 0; i < plan->unassign->len; i++)
        g_assert_cmpint (g_array_index (plan->unassign, gint32, i), ==, parts[i]);
    }

  /* Owned: ascending, once each, exactly what the event leaves. */
  for (guint i = 0; i < plan->owned->len; i++)
    {
      const KtAssignedPartition *o = &g_array_index (plan->owned, KtAssignedPartition, i);
      gint64 want = -1;

      if (i > 0)
        g_assert_cmpint (g_array_index (plan->owned, KtAssignedPartition, i - 1).partition, <,
                         o->partition);
      g_assert_false (release);
      if (event == KT_REBALANCE_ASSIGN)
        g_assert_true (in_array (held, o->partition) || has (parts, n, o->partition));
      else
        g_assert_true (in_array (held, o->partition) && !has (parts, n, o->partition));
      /* Its position: the stored offset of its last mention, if known. */
      for (guint k = 0; event == KT_REBALANCE_ASSIGN && k < n; k++)
        if (parts[k] == o->partition)
          want = stored != NULL && stored[k] >= 0 ? stored[k] : -1;
      g_assert_cmpint (o->offset, ==, want);
      g_array_append_val (owned_ids, o->partition);
    }
  if (!release)
    {
      /* Nothing kept is dropped, nothing named is missing. */
      for (guint i = 0; i < held->len; i++)
        if (event == KT_REBALANCE_ASSIGN || !has (parts, n, g_array_index (held, gint32, i)))
          g_assert_true (in_array (owned_ids, g_array_index (held, gint32, i)));
      for (guint i = 0; event == KT_REBALANCE_ASSIGN && i < n; i++)
        g_assert_true (in_array (owned_ids, parts[i]));
    }

  /* Idempotent. */
  kt_assignment_plan_init (&again);
  kt_assignment_decide (owned_ids, event, cooperative, parts, stored, n, &again);
  g_assert_cmpuint (again.owned->len, ==, plan->owned->len);
  g_assert_true (plan->owned->len == 0
                 || memcmp (again.owned->data, plan->owned->data,
                            plan->owned->len * sizeof (KtAssignedPartition)) == 0);
}

/* Decides, checks, and hands back the plan's owned partitions as @held. */
static void
decide (GArray *held, KtRebalance event, gboolean cooperative, const gint32 *parts,
        const gint64 *stored, guint n, KtAssignmentPlan *plan)
{
  kt_assignment_plan_init (plan);
  kt_assignment_decide (held, event, cooperative, parts, stored, n, plan);
  check (held, event, cooperative, parts, stored, n, plan);
}

/* Offsets for @n partitions from the input: some unknown, sometimes none. */
static gint64 *
stored_from (Input *in, guint n)
{
  gint64 *stored;

  if (next (in) % 5 == 0)
    return NULL;
  stored = g_new (gint64, MAX (n, 1));
  for (guint i = 0; i < n; i++)
    {
      guint b = next (in);
      stored[i] = b >= 200 ? -(gint64) (b - 199) : (gint64) b * 1000;
    }
  return stored;
}

/* One event as librdkafka would send it, on the model: @assignment is
 * librdkafka's assignment (a bit per partition 0..15), @held the source's
 * streams. */
static void
play (Input *in, gboolean cooperative, guint *assignment, GArray *held)
{
  guint kind = next (in) % 3, mask = next (in) | (next (in) << 8);
  KtRebalance event = kind == 0 ? KT_REBALANCE_ASSIGN
                      : kind == 1 ? KT_REBALANCE_REVOKE : KT_REBALANCE_FAILED;
  g_autofree gint64 *stored = NULL;
  g_auto(KtAssignmentPlan) plan = { 0 };
  gint32 parts[16];
  guint n = 0;

  if (event == KT_REBALANCE_ASSIGN && !cooperative && *assignment != 0)
    {
      /* Eager: everything is revoked before anything is assigned. */
      for (gint32 p = 0; p < 16; p++)
        if (*assignment & (1u << p))
          parts[n++] = p;
      decide (held, KT_REBALANCE_REVOKE, FALSE, parts, NULL, n, &plan);
      *assignment = 0;
      g_array_set_size (held, 0);
      kt_assignment_plan_clear (&plan);
      n = 0;
    }
  if (event == KT_REBALANCE_ASSIGN)
    mask &= ~*assignment;  /* new partitions only */
  else if (event == KT_REBALANCE_REVOKE)
    mask = cooperative ? mask & *assignment : *assignment;
  for (gint32 p = 0; p < 16; p++)
    if (mask & (1u << p))
      parts[n++] = p;
  if (event == KT_REBALANCE_ASSIGN)
    stored = stored_from (in, n);
  decide (held, event, cooperative, parts, stored, n, &plan);

  /* librdkafka's assignment after the plan's calls. */
  if (plan.unassign_all)
    *assignment = 0;
  else if (!plan.incremental)
    *assignment = 0;
  for (guint i = 0; i < plan.assign->len; i++)
    *assignment |= 1u << g_array_index (plan.assign, KtAssignedPartition, i).partition;
  for (guint i = 0; i < plan.unassign->len; i++)
    *assignment &= ~(1u << g_array_index (plan.unassign, gint32, i));

  /* The source's streams: exactly librdkafka's assignment. */
  g_array_set_size (held, 0);
  for (guint i = 0; i < plan.owned->len; i++)
    {
      gint32 p = g_array_index (plan.owned, KtAssignedPartition, i).partition;

      g_assert_true (*assignment & (1u << p));
      g_array_append_val (held, p);
    }
  g_assert_cmpuint ((guint) held->len, ==, (guint) __builtin_popcount (*assignment));
}

/* Any partitions held and named, in any order, twice, negative. */
static void
anything (Input *in, gboolean cooperative)
{
  g_autoptr(GArray) held = g_array_new (FALSE, FALSE, sizeof (gint32));
  guint n_held = next (in) % 9, n = next (in) % 9;
  KtRebalance event = (KtRebalance) (next (in) % 3);
  g_autofree gint64 *stored = NULL;
  g_auto(KtAssignmentPlan) plan = { 0 };
  gint32 parts[8];

  for (guint i = 0; i < n_held; i++)
    {
      gint32 p = (gint32) (gint8) next (in);

      if (!in_array (held, p))  /* the source holds a stream per partition */
        g_array_append_val (held, p);
    }
  for (guint i = 0; i < n; i++)
    parts[i] = (gint32) (gint8) next (in);
  if (event == KT_REBALANCE_ASSIGN)
    stored = stored_from (in, n);
  decide (held, event, cooperative, parts, stored, n, &plan);
}

/* The input as a member's assignment bytes: read in bounds (ASan sees a
 * read past @size), and a cut one gives what the whole gives, up to the
 * cut. */
static void
member (const guint8 *data, size_t size)
{
  g_autoptr(GArray) all = g_array_new (FALSE, FALSE, sizeof (gint32));
  g_autoptr(GArray) cut = g_array_new (FALSE, FALSE, sizeof (gint32));
  const char *topic = size > 0 && data[0] % 2 ? "" : "t";

  kt_assignment_member_partitions (data, size, topic, all);
  kt_assignment_member_partitions (data, size / 2, topic, cut);
  g_assert_cmpuint (cut->len, <=, all->len);
  g_assert_true (cut->len == 0
                 || memcmp (cut->data, all->data, cut->len * sizeof (gint32)) == 0);
}

int
LLVMFuzzerTestOneInput (const guint8 *data, size_t size)
{
  Input in = { data, data + size };
  gboolean cooperative = next (&in) & 1;
  g_autoptr(GArray) held = g_array_new (FALSE, FALSE, sizeof (gint32));
  guint assignment = 0;

  member (data, size);
  while (in.p < in.end)
    {
      if (next (&in) % 4 == 3)
        anything (&in, cooperative);
      else
        play (&in, cooperative, &assignment, held);
    }
  return 0;
}
