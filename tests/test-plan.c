/* test-plan.c - the batch planner: per-partition offset ranges.
 *
 * Covers kt_plan_make (from = stored, until = min(high, stored + max),
 * caught-up and empty partitions skipped, input order kept, data loss below
 * the log start and beyond the high watermark, failed or skipped) and
 * kt_plan_span. Every case is a row: states in, ranges and losses out. */
#include <string.h>
#include "error.h"
#include "plan.h"

#define MAX_ROWS 6

typedef struct
{
  const char       *path;
  KtPartitionState  states[MAX_ROWS];
  guint             n_states;
  gint64            max_per_partition;
  KtOnDataLoss      on_data_loss;
  KtRange           ranges[MAX_ROWS];  /* when it succeeds */
  guint             n_ranges;
  KtDataLoss        losses[MAX_ROWS];
  guint             n_losses;
  gint64            span;
  /* When it fails: KT_ERROR_DATA_LOSS, with each of these in the message. */
  const char       *needles[5];
} PlanCase;

#define S(p, stored, low, high) { p, stored, low, high }
#define R(p, from_, read_from_, until_) \
  { .partition = p, .from = from_, .read_from = read_from_, .until = until_ }
#define L(p, from, until) { p, from, until }

static const PlanCase cases[] = {
  { "/plan/basic", { S (0, 10, 0, 50) }, 1, 100, KT_DATA_LOSS_FAIL,
    { R (0, 10, 10, 50) }, 1, { { 0 } }, 0, 40, { NULL } },
  { "/plan/from-zero", { S (0, 0, 0, 7) }, 1, 100, KT_DATA_LOSS_FAIL,
    { R (0, 0, 0, 7) }, 1, { { 0 } }, 0, 7, { NULL } },
  { "/plan/rate-cap", { S (0, 10, 0, 500) }, 1, 100, KT_DATA_LOSS_FAIL,
    { R (0, 10, 10, 110) }, 1, { { 0 } }, 0, 100, { NULL } },
  { "/plan/rate-cap-exact", { S (0, 0, 0, 100) }, 1, 100, KT_DATA_LOSS_FAIL,
    { R (0, 0, 0, 100) }, 1, { { 0 } }, 0, 100, { NULL } },
  { "/plan/rate-cap-one", { S (2, 41, 0, 500) }, 1, 1, KT_DATA_LOSS_FAIL,
    { R (2, 41, 41, 42) }, 1, { { 0 } }, 0, 1, { NULL } },
  { "/plan/caught-up-skipped", { S (0, 50, 0, 50) }, 1, 100, KT_DATA_LOSS_FAIL,
    { { 0 } }, 0, { { 0 } }, 0, 0, { NULL } },
  { "/plan/empty-partition", { S (0, 0, 0, 0) }, 1, 100, KT_DATA_LOSS_FAIL,
    { { 0 } }, 0, { { 0 } }, 0, 0, { NULL } },
  { "/plan/no-partitions", { { 0 } }, 0, 100, KT_DATA_LOSS_FAIL,
    { { 0 } }, 0, { { 0 } }, 0, 0, { NULL } },
  { "/plan/large-offsets",
    { S (0, G_GINT64_CONSTANT (9000000000000), G_GINT64_CONSTANT (8000000000000),
         G_GINT64_CONSTANT (9000000000123)) }, 1, 100000, KT_DATA_LOSS_FAIL,
    { R (0, G_GINT64_CONSTANT (9000000000000), G_GINT64_CONSTANT (9000000000000),
         G_GINT64_CONSTANT (9000000000123)) }, 1, { { 0 } }, 0, 123, { NULL } },
  /* Input order, not partition order; caught-up partitions drop out. */
  { "/plan/several-keep-order",
    { S (2, 5, 0, 8), S (0, 7, 7, 7), S (1, 0, 0, 300), S (5, 100, 0, 150),
      S (4, 0, 0, 0), S (3, 20, 20, 21) }, 6, 100, KT_DATA_LOSS_FAIL,
    { R (2, 5, 5, 8), R (1, 0, 0, 100), R (5, 100, 100, 150), R (3, 20, 20, 21) }, 4,
    { { 0 } }, 0, 154, { NULL } },
  /* Retention ran but we are past it: no loss. stored == low is the edge. */
  { "/plan/retention-behind-us", { S (0, 500, 400, 600) }, 1, 1000, KT_DATA_LOSS_FAIL,
    { R (0, 500, 500, 600) }, 1, { { 0 } }, 0, 100, { NULL } },
  { "/plan/stored-equals-low", { S (0, 30, 30, 60) }, 1, 1000, KT_DATA_LOSS_FAIL,
    { R (0, 30, 30, 60) }, 1, { { 0 } }, 0, 30, { NULL } },
  /* Ranges are offsets, not record counts: a compacted partition with
   * gaps still plans stored..stored+max, however few records that holds. */
  { "/plan/gaps-irrelevant", { S (0, 1000, 0, 1000000) }, 1, 100, KT_DATA_LOSS_FAIL,
    { R (0, 1000, 1000, 1100) }, 1, { { 0 } }, 0, 100, { NULL } },

  /* Data loss below the log start. */
  { "/plan/data-loss/fails-by-default", { S (7, 1234, 5678, 9000) }, 1, 100,
    KT_DATA_LOSS_FAIL, { { 0 } }, 0, { { 0 } }, 0, 0,
    { "partition 7", "1234", "5678", NULL } },
  { "/plan/data-loss/fails-among-others",
    { S (0, 0, 0, 10), S (9, 3333, 4444, 5000), S (2, 0, 0, 10) }, 3, 100,
    KT_DATA_LOSS_FAIL, { { 0 } }, 0, { { 0 } }, 0, 0,
    { "partition 9", "3333", "4444", NULL } },
  { "/plan/data-loss/skip", { S (4, 10, 30, 80) }, 1, 100, KT_DATA_LOSS_SKIP,
    { R (4, 10, 30, 80) }, 1, { L (4, 10, 30) }, 1, 50, { NULL } },
  { "/plan/data-loss/skip-capped", { S (4, 10, 30, 500) }, 1, 100, KT_DATA_LOSS_SKIP,
    { R (4, 10, 30, 130) }, 1, { L (4, 10, 30) }, 1, 100, { NULL } },
  /* Everything lost, nothing left: the offset must still move to low. */
  { "/plan/data-loss/skip-nothing-left", { S (4, 10, 40, 40) }, 1, 100, KT_DATA_LOSS_SKIP,
    { R (4, 10, 40, 40) }, 1, { L (4, 10, 40) }, 1, 0, { NULL } },
  { "/plan/data-loss/skip-several",
    { S (1, 0, 5, 6), S (2, 3, 0, 9), S (0, 2, 9, 9), S (3, 9, 9, 9) }, 4, 100,
    KT_DATA_LOSS_SKIP,
    { R (1, 0, 5, 6), R (2, 3, 3, 9), R (0, 2, 9, 9) }, 3,
    { L (1, 0, 5), L (0, 2, 9) }, 2, 7, { NULL } },
  /* Skip mode plans normal partitions normally. */
  { "/plan/data-loss/skip-no-loss", { S (0, 10, 0, 50) }, 1, 100, KT_DATA_LOSS_SKIP,
    { R (0, 10, 10, 50) }, 1, { { 0 } }, 0, 40, { NULL } },

  /* Data loss beyond the high watermark: topic recreated or truncated. */
  { "/plan/data-loss/beyond-high-fails", { S (3, 900, 0, 450) }, 1, 100,
    KT_DATA_LOSS_FAIL, { { 0 } }, 0, { { 0 } }, 0, 0,
    { "partition 3", "900", "450", "beyond the high watermark", NULL } },
  { "/plan/data-loss/beyond-high-empty-fails", { S (3, 900, 0, 0) }, 1, 100,
    KT_DATA_LOSS_FAIL, { { 0 } }, 0, { { 0 } }, 0, 0,
    { "partition 3", "900", "beyond the high watermark", NULL } },
  { "/plan/data-loss/beyond-high-skip", { S (6, 90, 0, 50) }, 1, 100, KT_DATA_LOSS_SKIP,
    { R (6, 90, 0, 50) }, 1, { L (6, 90, 50) }, 1, 50, { NULL } },
  { "/plan/data-loss/beyond-high-skip-empty", { S (6, 90, 0, 0) }, 1, 100,
    KT_DATA_LOSS_SKIP, { R (6, 90, 0, 0) }, 1, { L (6, 90, 0) }, 1, 0, { NULL } },
};

static void
test_plan_case (gconstpointer data)
{
  const PlanCase *c = data;
  g_autoptr(GArray) ranges = g_array_new (FALSE, FALSE, sizeof (KtRange));
  g_autoptr(GArray) losses = g_array_new (FALSE, FALSE, sizeof (KtDataLoss));
  g_autoptr(GError) error = NULL;
  gboolean ok;

  ok = kt_plan_make (c->states, c->n_states, c->max_per_partition, c->on_data_loss,
                     ranges, losses, &error);

  if (c->needles[0] != NULL)
    {
      g_assert_false (ok);
      g_assert_error (error, KT_ERROR, KT_ERROR_DATA_LOSS);
      g_test_message ("message: %s", error->message);
      for (guint i = 0; c->needles[i] != NULL; i++)
        g_assert_nonnull (strstr (error->message, c->needles[i]));
      g_assert_cmpuint (losses->len, ==, 0);
      return;
    }

  g_assert_no_error (error);
  g_assert_true (ok);
  g_assert_cmpuint (ranges->len, ==, c->n_ranges);
  for (guint i = 0; i < c->n_ranges; i++)
    {
      const KtRange *r = &g_array_index (ranges, KtRange, i);
      g_assert_cmpint (r->partition, ==, c->ranges[i].partition);
      g_assert_cmpint (r->from, ==, c->ranges[i].from);
      g_assert_cmpint (r->read_from, ==, c->ranges[i].read_from);
      g_assert_cmpint (r->until, ==, c->ranges[i].until);
      g_assert_cmpint (r->until - r->read_from, <=, c->max_per_partition);
    }
  g_assert_cmpuint (losses->len, ==, c->n_losses);
  for (guint i = 0; i < c->n_losses; i++)
    {
      const KtDataLoss *l = &g_array_index (losses, KtDataLoss, i);
      g_assert_cmpint (l->partition, ==, c->losses[i].partition);
      g_assert_cmpint (l->from, ==, c->losses[i].from);
      g_assert_cmpint (l->until, ==, c->losses[i].until);
    }
  g_assert_cmpint (kt_plan_span (ranges), ==, c->span);

  /* losses may be NULL: the same ranges come out. */
  {
    g_autoptr(GArray) again = g_array_new (FALSE, FALSE, sizeof (KtRange));

    g_assert_true (kt_plan_make (c->states, c->n_states, c->max_per_partition,
                                 c->on_data_loss, again, NULL, &error));
    g_assert_no_error (error);
    g_assert_cmpuint (again->len, ==, ranges->len);
    /* An empty GArray's data may be NULL, which memcmp must not see. */
    if (ranges->len > 0)
      g_assert_cmpint (memcmp (again->data, ranges->data, ranges->len * sizeof (KtRange)),
                       ==, 0);
  }
}

/* Ranges are appended: what the array held before stays first. */
static void
test_plan_appends (void)
{
  static const KtPartitionState states[] = { S (1, 0, 0, 5) };
  g_autoptr(GArray) ranges = g_array_new (FALSE, FALSE, sizeof (KtRange));
  g_autoptr(GError) error = NULL;
  KtRange first = R (9, 1, 1, 3);
  const KtRange *r;

  g_array_append_val (ranges, first);
  g_assert_true (kt_plan_make (states, 1, 100, KT_DATA_LOSS_FAIL, ranges, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (ranges->len, ==, 2);
  r = &g_array_index (ranges, KtRange, 0);
  g_assert_cmpint (r->partition, ==, 9);
  r = &g_array_index (ranges, KtRange, 1);
  g_assert_cmpint (r->partition, ==, 1);
  g_assert_cmpint (r->until, ==, 5);
  g_assert_cmpint (kt_plan_span (ranges), ==, 7);
}

/* span counts from read_from, not from the fence. */
static void
test_span (void)
{
  static const KtRange rows[] = {
    R (0, 10, 10, 20), R (1, 0, 100, 150), R (2, 5, 5, 5), R (3, 7, 40, 40),
  };
  g_autoptr(GArray) ranges = g_array_new (FALSE, FALSE, sizeof (KtRange));

  g_assert_cmpint (kt_plan_span (ranges), ==, 0);
  g_array_append_vals (ranges, rows, G_N_ELEMENTS (rows));
  g_assert_cmpint (kt_plan_span (ranges), ==, 60);
}

static void
test_default_is_fail (void)
{
  g_assert_cmpint (KT_DATA_LOSS_FAIL, ==, 0);
}

/* Idempotent mode: a range skips what its partition already counted. */
static void
test_skip_covered (void)
{
  static const struct
  {
    const char *name;
    const char *covered;
    gint64 from, read_from, until, high;
    gint64 want_read_from, want_until;
  } cases[] = {
    { "nothing counted", "", 100, 100, 200, 500, 100, 200 },
    { "counted up to from", "0-100", 100, 100, 200, 500, 100, 200 },
    { "output ahead of the offsets", "0-150", 100, 100, 200, 500, 150, 200 },
    { "a rewind to 0 over counted offsets", "0-400", 0, 0, 100, 500, 400, 500 },
    { "rewound, more budget than left", "0-400", 0, 0, 100, 450, 400, 450 },
    { "a rewind below the first counted offset", "12345-13345", 0, 0, 5000, 13345, 0, 5000 },
    { "a rewind into the middle", "0-20000", 7777, 7777, 8777, 30000, 20000, 21000 },
    { "a gap left by a skip ahead", "0-100,300-400", 50, 50, 150, 500, 100, 150 },
    { "all covered to the end", "0-500", 200, 200, 300, 500, 500, 500 },
    { "counted past the high watermark", "0-900", 200, 200, 300, 500, 500, 500 },
    { "a skipped data loss reads from the log start", "0-100", 100, 3000, 3100, 5000, 3000, 3100 },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(KtCoverage) covered = kt_coverage_parse (cases[i].covered, "test", &error);
      KtRange r = { .partition = 0, .from = cases[i].from, .read_from = cases[i].read_from,
                    .until = cases[i].until };

      g_test_message ("%s", cases[i].name);
      g_assert_no_error (error);
      kt_plan_skip_covered (&r, covered, cases[i].high, 1000);
      g_assert_cmpint (r.from, ==, cases[i].from);  /* the fence never moves */
      g_assert_cmpint (r.read_from, ==, cases[i].want_read_from);
      g_assert_cmpint (r.until, ==, cases[i].want_until);
    }
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    g_test_add_data_func (cases[i].path, &cases[i], test_plan_case);
  g_test_add_func ("/plan/appends", test_plan_appends);
  g_test_add_func ("/plan/span", test_span);
  g_test_add_func ("/plan/data-loss/default-is-fail", test_default_is_fail);

  g_test_add_func ("/plan/idempotent/skip-covered", test_skip_covered);
  return g_test_run ();
}
