/* test-assignment.c - what a --group rebalance does (assignment.c's
 * kt_assignment_decide), without Kafka.
 *
 * Covers each event under each protocol: a cooperative assignment adds
 * partitions at their stored offsets and keeps the others (positions
 * forgotten), a cooperative revocation takes only the partitions named,
 * an eager revocation and any failure release everything; stored offsets
 * unknown (a placeholder at the log end, the partition sought first), one
 * stored offset missing among several, partitions named twice, revoking
 * what is not held, empty events, and deciding the same event twice; and
 * a member's assignment read from a group's description (other topics,
 * a topic twice, cut anywhere, a negative length, signed ids). Any input
 * at all: fuzz-assignment. */
#include "assignment.h"

#define END G_MININT32  /* ends a list of partitions below */
#define NONE G_MININT64 /* no stored offsets at all */

typedef struct
{
  const char *path;
  gint32      held[8];
  KtRebalance event;
  gboolean    cooperative;
  gint32      parts[8];
  gint64      stored[8];     /* for each of parts; stored[0] == NONE: NULL */
  KtAssignedPartition assign[8];  /* ends at partition END */
  gint32      unassign[8];
  gboolean    incremental;
  gboolean    unassign_all;
  KtAssignedPartition owned[8];
} DecideCase;

static const DecideCase cases[] = {
  { "/assignment/cooperative/first-assignment",
    { END }, KT_REBALANCE_ASSIGN, TRUE, { 2, 0, END }, { 500, 700 },
    { { 2, 500 }, { 0, 700 }, { END, 0 } }, { END }, TRUE, FALSE,
    { { 0, 700 }, { 2, 500 }, { END, 0 } } },
  { "/assignment/cooperative/assign-keeps-the-others",
    { 4, 1, END }, KT_REBALANCE_ASSIGN, TRUE, { 3, END }, { 30 },
    { { 3, 30 }, { END, 0 } }, { END }, TRUE, FALSE,
    { { 1, -1 }, { 3, 30 }, { 4, -1 }, { END, 0 } } },
  { "/assignment/cooperative/stored-unknown",
    { END }, KT_REBALANCE_ASSIGN, TRUE, { 0, 1, END }, { NONE },
    { { 0, -1 }, { 1, -1 }, { END, 0 } }, { END }, TRUE, FALSE,
    { { 0, -1 }, { 1, -1 }, { END, 0 } } },
  { "/assignment/cooperative/one-stored-offset-missing",
    { END }, KT_REBALANCE_ASSIGN, TRUE, { 0, 1, 2, END }, { 10, -1, 0 },
    { { 0, 10 }, { 1, -1 }, { 2, 0 }, { END, 0 } }, { END }, TRUE, FALSE,
    { { 0, 10 }, { 1, -1 }, { 2, 0 }, { END, 0 } } },
  { "/assignment/cooperative/assigned-again",
    { 5, END }, KT_REBALANCE_ASSIGN, TRUE, { 5, END }, { 42 },
    { { 5, 42 }, { END, 0 } }, { END }, TRUE, FALSE,
    { { 5, 42 }, { END, 0 } } },
  { "/assignment/cooperative/named-twice",
    { END }, KT_REBALANCE_ASSIGN, TRUE, { 7, 7, END }, { 1, 2 },
    { { 7, 1 }, { 7, 2 }, { END, 0 } }, { END }, TRUE, FALSE,
    { { 7, 2 }, { END, 0 } } },
  { "/assignment/cooperative/revoke-some",
    { 0, 1, 2, 3, END }, KT_REBALANCE_REVOKE, TRUE, { 3, 1, END }, { NONE },
    { { END, 0 } }, { 3, 1, END }, TRUE, FALSE,
    { { 0, -1 }, { 2, -1 }, { END, 0 } } },
  { "/assignment/cooperative/revoke-what-is-not-held",
    { 0, END }, KT_REBALANCE_REVOKE, TRUE, { 9, END }, { NONE },
    { { END, 0 } }, { 9, END }, TRUE, FALSE,
    { { 0, -1 }, { END, 0 } } },
  { "/assignment/cooperative/empty-revocation",
    { 0, 1, END }, KT_REBALANCE_REVOKE, TRUE, { END }, { NONE },
    { { END, 0 } }, { END }, TRUE, FALSE,
    { { 0, -1 }, { 1, -1 }, { END, 0 } } },
  { "/assignment/cooperative/failure-releases-everything",
    { 0, 1, END }, KT_REBALANCE_FAILED, TRUE, { 1, END }, { NONE },
    { { END, 0 } }, { END }, FALSE, TRUE,
    { { END, 0 } } },
  { "/assignment/eager/assign",
    { END }, KT_REBALANCE_ASSIGN, FALSE, { 1, 0, END }, { 8, 9 },
    { { 1, 8 }, { 0, 9 }, { END, 0 } }, { END }, FALSE, FALSE,
    { { 0, 9 }, { 1, 8 }, { END, 0 } } },
  { "/assignment/eager/revoke-releases-everything",
    { 0, 1, 2, END }, KT_REBALANCE_REVOKE, FALSE, { 1, END }, { NONE },
    { { END, 0 } }, { END }, FALSE, TRUE,
    { { END, 0 } } },
  { "/assignment/eager/failure",
    { 3, END }, KT_REBALANCE_FAILED, FALSE, { END }, { NONE },
    { { END, 0 } }, { END }, FALSE, TRUE,
    { { END, 0 } } },
};

static guint
count_ids (const gint32 *ids)
{
  guint n = 0;

  while (n < 8 && ids[n] != END)
    n++;
  return n;
}

static guint
count_assigned (const KtAssignedPartition *a)
{
  guint n = 0;

  while (n < 8 && a[n].partition != END)
    n++;
  return n;
}

static void
assert_assigned (const GArray *got, const KtAssignedPartition *want)
{
  g_assert_cmpuint (got->len, ==, count_assigned (want));
  for (guint i = 0; i < got->len; i++)
    {
      g_assert_cmpint (g_array_index (got, KtAssignedPartition, i).partition, ==,
                       want[i].partition);
      g_assert_cmpint (g_array_index (got, KtAssignedPartition, i).offset, ==, want[i].offset);
    }
}

static void
decide (const DecideCase *c, const GArray *held, KtAssignmentPlan *plan)
{
  kt_assignment_plan_init (plan);
  kt_assignment_decide (held, c->event, c->cooperative, c->parts,
                        c->stored[0] == NONE ? NULL : c->stored, count_ids (c->parts), plan);
}

static void
test_decide (gconstpointer data)
{
  const DecideCase *c = data;
  g_autoptr(GArray) held = g_array_new (FALSE, FALSE, sizeof (gint32));
  g_autoptr(GArray) again_held = g_array_new (FALSE, FALSE, sizeof (gint32));
  g_auto(KtAssignmentPlan) plan = { 0 };
  g_auto(KtAssignmentPlan) again = { 0 };

  g_array_append_vals (held, c->held, count_ids (c->held));
  decide (c, held, &plan);
  assert_assigned (plan.assign, c->assign);
  g_assert_cmpuint (plan.unassign->len, ==, count_ids (c->unassign));
  for (guint i = 0; i < plan.unassign->len; i++)
    g_assert_cmpint (g_array_index (plan.unassign, gint32, i), ==, c->unassign[i]);
  g_assert_cmpint (plan.incremental, ==, c->incremental);
  g_assert_cmpint (plan.unassign_all, ==, c->unassign_all);
  assert_assigned (plan.owned, c->owned);

  /* The same event again, on what it left: the same partitions, from the
   * same places. */
  for (guint i = 0; i < plan.owned->len; i++)
    g_array_append_val (again_held, g_array_index (plan.owned, KtAssignedPartition, i).partition);
  decide (c, again_held, &again);
  assert_assigned (again.owned, c->owned);
}

/* ---- a member's assignment, as the group's description carries it ---- */

/* Version 0; topic "logs": 3, 1; topic "other": 7; topic "logs" again: 0. */
static const guint8 member[] = {
  0, 0,  0, 0, 0, 3,
  0, 4, 'l', 'o', 'g', 's',  0, 0, 0, 2,  0, 0, 0, 3,  0, 0, 0, 1,
  0, 5, 'o', 't', 'h', 'e', 'r',  0, 0, 0, 1,  0, 0, 0, 7,
  0, 4, 'l', 'o', 'g', 's',  0, 0, 0, 1,  0, 0, 0, 0,
};

static GArray *
member_partitions (const guint8 *bytes, gsize size, const char *topic)
{
  GArray *parts = g_array_new (FALSE, FALSE, sizeof (gint32));

  kt_assignment_member_partitions (bytes, size, topic, parts);
  return parts;
}

static void
assert_partitions (GArray *got, const gint32 *want, guint n)
{
  g_assert_cmpuint (got->len, ==, n);
  for (guint i = 0; i < n; i++)
    g_assert_cmpint (g_array_index (got, gint32, i), ==, want[i]);
  g_array_unref (got);
}

static void
test_member (void)
{
  static const gint32 logs[] = { 3, 1, 0 }, other[] = { 7 };
  static const guint8 negative[] = { 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0, 0, 0, 1, 0, 0, 0, 9 };
  static const guint8 big_id[] = { 0, 0, 0, 0, 0, 1, 0, 1, 't', 0, 0, 0, 1, 0xff, 0xff, 0xff,
                                   0xfe };
  static const gint32 minus_two[] = { -2 };

  assert_partitions (member_partitions (member, sizeof member, "logs"), logs, 3);
  assert_partitions (member_partitions (member, sizeof member, "other"), other, 1);
  assert_partitions (member_partitions (member, sizeof member, "log"), NULL, 0);
  assert_partitions (member_partitions (member, sizeof member, ""), NULL, 0);
  assert_partitions (member_partitions (NULL, 0, "logs"), NULL, 0);
  /* Cut anywhere: what came before the cut. */
  for (gsize cut = 0; cut < sizeof member; cut++)
    {
      g_autofree guint8 *exact = g_memdup2 (member, cut);  /* ASan sees a read past it */
      guint n = cut >= 24 ? 2 : cut >= 20 ? 1 : 0;

      assert_partitions (member_partitions (exact, cut, "logs"), logs, n);
    }
  /* A negative name length stops the reading. */
  assert_partitions (member_partitions (negative, sizeof negative, ""), NULL, 0);
  /* Partition ids are signed 32 bits. */
  assert_partitions (member_partitions (big_id, sizeof big_id, "t"), minus_two, 1);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    g_test_add_data_func (cases[i].path, &cases[i], test_decide);
  g_test_add_func ("/assignment/member/partitions", test_member);
  return g_test_run ();
}
