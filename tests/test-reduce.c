/* test-reduce.c - the reduce stage: per-minute ERROR counts.
 *
 * Covers add/get over same-minute runs and interleaved minutes (the
 * pending-minute cache must never lose or double a count), size, sorted()
 * order including negative minutes, merge, clear and reuse, and counts and
 * minute sets too large for 32 bits. */
#include "reduce.h"

typedef struct
{
  gint64  minute;
  guint64 n;
} Add;

typedef struct
{
  gint64  minute;
  guint64 count;
} Want;

typedef struct
{
  const char *path;
  Add         adds[16];
  guint       n_adds;
  Want        want[8];  /* ascending by minute: what sorted() returns */
  guint       n_want;
} AddCase;

#define M0 G_GINT64_CONSTANT (25023729)  /* 2017-07-30 14:09 */
#define M1 (M0 + 1)
#define M2 (M0 + 2)

static const AddCase add_cases[] = {
  { "/reduce/add/single", { { M0, 1 } }, 1, { { M0, 1 } }, 1 },
  { "/reduce/add/same-minute-run",
    { { M0, 1 }, { M0, 1 }, { M0, 1 }, { M0, 1 }, { M0, 1 } }, 5,
    { { M0, 5 } }, 1 },
  { "/reduce/add/interleaved",
    { { M0, 1 }, { M1, 1 }, { M0, 1 } }, 3,
    { { M0, 2 }, { M1, 1 } }, 2 },
  { "/reduce/add/interleaved-runs",
    { { M0, 1 }, { M0, 1 }, { M1, 1 }, { M0, 1 }, { M2, 1 }, { M2, 1 }, { M1, 1 },
      { M0, 1 }, { M0, 1 } }, 9,
    { { M0, 5 }, { M1, 2 }, { M2, 2 } }, 3 },
  { "/reduce/add/alternating",
    { { M0, 1 }, { M1, 1 }, { M0, 1 }, { M1, 1 }, { M0, 1 }, { M1, 1 }, { M0, 1 },
      { M1, 1 } }, 8,
    { { M0, 4 }, { M1, 4 } }, 2 },
  { "/reduce/add/n-greater-than-one",
    { { M0, 7 }, { M0, 3 }, { M1, 100 }, { M0, 5 } }, 4,
    { { M0, 15 }, { M1, 100 } }, 2 },
  { "/reduce/add/around-epoch",
    { { 1, 1 }, { -1, 2 }, { 0, 3 }, { -1, 4 }, { 0, 5 } }, 5,
    { { -1, 6 }, { 0, 8 }, { 1, 1 } }, 3 },
  /* 1000-01-01 00:00 and 9999-12-31 23:59: beyond 32 bits of difference. */
  { "/reduce/add/extreme-minutes",
    { { G_GINT64_CONSTANT (4223371679), 1 }, { G_GINT64_CONSTANT (-510170400), 2 },
      { G_GINT64_CONSTANT (4223371679), 3 } }, 3,
    { { G_GINT64_CONSTANT (-510170400), 2 }, { G_GINT64_CONSTANT (4223371679), 4 } }, 2 },
};

static void
check_sorted (KtReducer *reducer, const Want *want, guint n_want)
{
  g_autoptr(GArray) sorted = kt_reducer_sorted (reducer);

  g_assert_cmpuint (sorted->len, ==, n_want);
  for (guint i = 0; i < n_want; i++)
    {
      const KtMinuteCount *mc = &g_array_index (sorted, KtMinuteCount, i);
      g_assert_cmpint (mc->minute, ==, want[i].minute);
      g_assert_cmpuint (mc->count, ==, want[i].count);
    }
}

static void
test_add_case (gconstpointer data)
{
  const AddCase *c = data;

  /* Read back three ways, each on a fresh reducer so that one reading
   * cannot flush the cache for the next. */
  {
    g_autoptr(KtReducer) r = kt_reducer_new ();
    for (guint i = 0; i < c->n_adds; i++)
      kt_reducer_add (r, c->adds[i].minute, c->adds[i].n);
    for (guint i = 0; i < c->n_want; i++)
      g_assert_cmpuint (kt_reducer_get (r, c->want[i].minute), ==, c->want[i].count);
    /* Reading twice changes nothing. */
    for (guint i = 0; i < c->n_want; i++)
      g_assert_cmpuint (kt_reducer_get (r, c->want[i].minute), ==, c->want[i].count);
    g_assert_cmpuint (kt_reducer_get (r, M0 + 1000), ==, 0);
  }
  {
    g_autoptr(KtReducer) r = kt_reducer_new ();
    for (guint i = 0; i < c->n_adds; i++)
      kt_reducer_add (r, c->adds[i].minute, c->adds[i].n);
    g_assert_cmpuint (kt_reducer_size (r), ==, c->n_want);
    g_assert_cmpuint (kt_reducer_size (r), ==, c->n_want);
  }
  {
    g_autoptr(KtReducer) r = kt_reducer_new ();
    for (guint i = 0; i < c->n_adds; i++)
      kt_reducer_add (r, c->adds[i].minute, c->adds[i].n);
    check_sorted (r, c->want, c->n_want);
    check_sorted (r, c->want, c->n_want);
  }
}

static void
test_empty (void)
{
  g_autoptr(KtReducer) r = kt_reducer_new ();
  g_autoptr(GArray) sorted = NULL;

  g_assert_cmpuint (kt_reducer_get (r, 0), ==, 0);
  g_assert_cmpuint (kt_reducer_get (r, M0), ==, 0);
  g_assert_cmpuint (kt_reducer_size (r), ==, 0);
  sorted = kt_reducer_sorted (r);
  g_assert_cmpuint (sorted->len, ==, 0);
  kt_reducer_free (NULL);
}

/* Reading in the middle of a run must not lose or double what follows. */
static void
test_get_mid_run (void)
{
  g_autoptr(KtReducer) r = kt_reducer_new ();
  static const Want want[] = { { M0, 7 }, { M1, 2 } };

  kt_reducer_add (r, M0, 1);
  kt_reducer_add (r, M0, 1);
  kt_reducer_add (r, M0, 1);
  g_assert_cmpuint (kt_reducer_get (r, M0), ==, 3);
  kt_reducer_add (r, M0, 1);
  kt_reducer_add (r, M0, 1);
  g_assert_cmpuint (kt_reducer_get (r, M0), ==, 5);
  g_assert_cmpuint (kt_reducer_size (r), ==, 1);
  kt_reducer_add (r, M0, 1);
  kt_reducer_add (r, M1, 1);
  g_assert_cmpuint (kt_reducer_get (r, M0), ==, 6);
  g_assert_cmpuint (kt_reducer_get (r, M1), ==, 1);
  /* A read of another minute in the middle of a run. */
  kt_reducer_add (r, M1, 1);
  g_assert_cmpuint (kt_reducer_get (r, M2), ==, 0);
  kt_reducer_add (r, M0, 1);
  g_assert_cmpuint (kt_reducer_size (r), ==, 2);
  check_sorted (r, want, G_N_ELEMENTS (want));
  g_assert_cmpuint (kt_reducer_get (r, M0), ==, 7);
  g_assert_cmpuint (kt_reducer_get (r, M1), ==, 2);
  g_assert_cmpuint (kt_reducer_get (r, M2), ==, 0);
  g_assert_cmpuint (kt_reducer_size (r), ==, 2);
}

static void
test_size (void)
{
  g_autoptr(KtReducer) r = kt_reducer_new ();

  g_assert_cmpuint (kt_reducer_size (r), ==, 0);
  kt_reducer_add (r, M0, 1);  /* only in the cache so far */
  g_assert_cmpuint (kt_reducer_size (r), ==, 1);
  kt_reducer_add (r, M0, 1);
  g_assert_cmpuint (kt_reducer_size (r), ==, 1);
  kt_reducer_add (r, M1, 1);
  g_assert_cmpuint (kt_reducer_size (r), ==, 2);
  kt_reducer_add (r, M0, 1);
  g_assert_cmpuint (kt_reducer_size (r), ==, 2);
  kt_reducer_add (r, -M0, 1);
  g_assert_cmpuint (kt_reducer_size (r), ==, 3);
  kt_reducer_add (r, 0, 1);
  g_assert_cmpuint (kt_reducer_size (r), ==, 4);
}

/* Added in a scrambled order, negative minutes included: sorted() must
 * come back ascending with every count. */
static void
test_sorted (void)
{
  static const Add adds[] = {
    { 500, 1 }, { -3, 2 }, { 7, 3 }, { 0, 4 }, { -1000000, 5 }, { 7, 6 },
    { G_GINT64_CONSTANT (4223371679), 7 }, { -3, 8 }, { 1, 9 }, { -1, 10 },
    { G_GINT64_CONSTANT (-510170400), 11 }, { 500, 12 },
  };
  static const Want want[] = {
    { G_GINT64_CONSTANT (-510170400), 11 }, { -1000000, 5 }, { -3, 10 }, { -1, 10 },
    { 0, 4 }, { 1, 9 }, { 7, 9 }, { 500, 13 }, { G_GINT64_CONSTANT (4223371679), 7 },
  };
  g_autoptr(KtReducer) r = kt_reducer_new ();

  for (gsize i = 0; i < G_N_ELEMENTS (adds); i++)
    kt_reducer_add (r, adds[i].minute, adds[i].n);
  check_sorted (r, want, G_N_ELEMENTS (want));
  g_assert_cmpuint (kt_reducer_size (r), ==, G_N_ELEMENTS (want));
}

static void
test_merge (void)
{
  static const Want want_a[] = { { -2, 1 }, { M0, 5 }, { M1, 1 }, { M2, 4 } };
  static const Want want_b[] = { { -2, 1 }, { M0, 3 }, { M2, 4 } };
  g_autoptr(KtReducer) a = kt_reducer_new ();
  g_autoptr(KtReducer) b = kt_reducer_new ();
  g_autoptr(KtReducer) empty = kt_reducer_new ();

  kt_reducer_add (a, M1, 1);
  kt_reducer_add (a, M0, 2);  /* still in a's cache when b arrives */
  kt_reducer_add (b, M0, 3);
  kt_reducer_add (b, -2, 1);
  kt_reducer_add (b, M2, 4);  /* still in b's cache */

  kt_reducer_merge (a, b);
  check_sorted (a, want_a, G_N_ELEMENTS (want_a));
  /* The source is left as it was. */
  check_sorted (b, want_b, G_N_ELEMENTS (want_b));

  /* Merging an empty reducer changes nothing; merging into an empty one
   * copies. */
  kt_reducer_merge (a, empty);
  check_sorted (a, want_a, G_N_ELEMENTS (want_a));
  kt_reducer_merge (empty, b);
  check_sorted (empty, want_b, G_N_ELEMENTS (want_b));

  /* Adding after a merge continues the merged count. */
  kt_reducer_add (a, M0, 1);
  g_assert_cmpuint (kt_reducer_get (a, M0), ==, 6);
  g_assert_cmpuint (kt_reducer_size (a), ==, 4);
}

static void
test_clear_reuse (void)
{
  g_autoptr(KtReducer) r = kt_reducer_new ();
  g_autoptr(GArray) sorted = NULL;
  static const Want want[] = { { M0, 1 }, { M1, 2 } };

  /* Cleared with a count only in the cache. */
  kt_reducer_add (r, M0, 1);
  kt_reducer_add (r, M0, 1);
  kt_reducer_add (r, M0, 1);
  kt_reducer_clear (r);
  g_assert_cmpuint (kt_reducer_size (r), ==, 0);
  g_assert_cmpuint (kt_reducer_get (r, M0), ==, 0);
  kt_reducer_add (r, M0, 1);
  g_assert_cmpuint (kt_reducer_get (r, M0), ==, 1);

  /* Cleared with counts in the table and in the cache. */
  kt_reducer_add (r, M1, 5);
  kt_reducer_add (r, M2, 5);
  kt_reducer_clear (r);
  sorted = kt_reducer_sorted (r);
  g_assert_cmpuint (sorted->len, ==, 0);
  g_assert_cmpuint (kt_reducer_size (r), ==, 0);
  kt_reducer_add (r, M2, 1);
  kt_reducer_clear (r);

  kt_reducer_add (r, M0, 1);
  kt_reducer_add (r, M1, 1);
  kt_reducer_add (r, M1, 1);
  check_sorted (r, want, G_N_ELEMENTS (want));
  g_assert_cmpuint (kt_reducer_get (r, M2), ==, 0);

  /* Clearing twice, or an empty reducer, is fine. */
  kt_reducer_clear (r);
  kt_reducer_clear (r);
  g_assert_cmpuint (kt_reducer_size (r), ==, 0);
}

/* Counts beyond 32 bits. */
static void
test_large_counts (void)
{
  g_autoptr(KtReducer) r = kt_reducer_new ();
  g_autoptr(KtReducer) other = kt_reducer_new ();

  kt_reducer_add (r, M0, G_MAXUINT32);
  kt_reducer_add (r, M0, 1);
  g_assert_cmpuint (kt_reducer_get (r, M0), ==, G_GUINT64_CONSTANT (4294967296));
  kt_reducer_add (r, M1, G_GUINT64_CONSTANT (1000000000000));
  kt_reducer_add (r, M0, G_MAXUINT32);
  kt_reducer_add (r, M1, G_GUINT64_CONSTANT (1000000000000));
  g_assert_cmpuint (kt_reducer_get (r, M0), ==, G_GUINT64_CONSTANT (8589934591));
  g_assert_cmpuint (kt_reducer_get (r, M1), ==, G_GUINT64_CONSTANT (2000000000000));

  kt_reducer_add (other, M1, G_MAXUINT32);
  kt_reducer_merge (r, other);
  g_assert_cmpuint (kt_reducer_get (r, M1), ==, G_GUINT64_CONSTANT (2004294967295));
}

/* 100,000 distinct minutes, added in a scrambled order, each several
 * times and never twice in a row. */
static void
test_many_minutes (void)
{
  const guint n = 100000;
  g_autoptr(KtReducer) r = kt_reducer_new ();
  g_autoptr(GArray) sorted = NULL;
  const gint64 base = -50000;

  for (guint round = 0; round < 3; round++)
    for (guint i = 0; i < n; i++)
      {
        /* 7919 is prime and does not divide n: a permutation. */
        guint k = (guint) (((guint64) i * 7919 + round) % n);
        kt_reducer_add (r, base + k, k % 7 + 1);
      }

  g_assert_cmpuint (kt_reducer_size (r), ==, n);
  sorted = kt_reducer_sorted (r);
  g_assert_cmpuint (sorted->len, ==, n);
  for (guint k = 0; k < n; k++)
    {
      const KtMinuteCount *mc = &g_array_index (sorted, KtMinuteCount, k);
      g_assert_cmpint (mc->minute, ==, base + k);
      g_assert_cmpuint (mc->count, ==, 3 * (k % 7 + 1));
    }
  g_assert_cmpuint (kt_reducer_get (r, base - 1), ==, 0);
  g_assert_cmpuint (kt_reducer_get (r, base + n), ==, 0);
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  for (gsize i = 0; i < G_N_ELEMENTS (add_cases); i++)
    g_test_add_data_func (add_cases[i].path, &add_cases[i], test_add_case);
  g_test_add_func ("/reduce/empty", test_empty);
  g_test_add_func ("/reduce/get-mid-run", test_get_mid_run);
  g_test_add_func ("/reduce/size", test_size);
  g_test_add_func ("/reduce/sorted", test_sorted);
  g_test_add_func ("/reduce/merge", test_merge);
  g_test_add_func ("/reduce/clear-reuse", test_clear_reuse);
  g_test_add_func ("/reduce/large-counts", test_large_counts);
  g_test_add_func ("/reduce/many-minutes", test_many_minutes);

  return g_test_run ();
}
