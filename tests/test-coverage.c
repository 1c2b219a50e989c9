/* test-coverage.c - the offsets an idempotent job counted. */
#include <glib.h>
#include "coverage.h"
#include "error.h"

static KtCoverage *
parse (const char *text)
{
  g_autoptr(GError) error = NULL;
  KtCoverage *c = kt_coverage_parse (text, "test", &error);
  g_assert_no_error (error);
  return c;
}

static void
assert_text (const KtCoverage *c, const char *want)
{
  g_autofree char *text = kt_coverage_format (c);
  g_assert_cmpstr (text, ==, want);
}

static void
test_parse_format (void)
{
  static const char *const good[] = { "", "0-1", "0-100,250-400", "5-10,10-20",
                                      "9223372036854775806-9223372036854775807" };
  static const char *const bad[] = { "x", "5", "5-5", "10-5", "-1-5", "0-10,5-20x",
                                     "20-30,0-10", "0-10,", ",0-10", "0-10-20", "1 -2" };

  for (gsize i = 0; i < G_N_ELEMENTS (good); i++)
    {
      g_autoptr(KtCoverage) c = parse (good[i]);
      assert_text (c, good[i]);
    }
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(KtCoverage) c = kt_coverage_parse (bad[i], "ktally_coverage of t/0", &error);

      g_test_message ("'%s'", bad[i]);
      g_assert_null (c);
      g_assert_error (error, KT_ERROR, KT_ERROR_FATAL);
      g_assert_true (g_str_has_prefix (error->message, "ktally_coverage of t/0: "));
    }
}

static void
test_add (void)
{
  static const struct
  {
    const char *before;
    gint64 from, until;
    const char *after;
  } cases[] = {
    { "", 0, 100, "0-100" },
    { "0-100", 100, 200, "0-200" },          /* an append touches: one interval */
    { "0-100", 150, 200, "0-100,150-200" },  /* a skip ahead leaves a gap */
    { "100-200", 0, 100, "0-200" },          /* a rewind below the start */
    { "100-200", 0, 50, "0-50,100-200" },
    { "0-100,150-200", 50, 175, "0-200" },   /* fills the gap over both */
    { "0-100,150-200,300-400", 90, 310, "0-400" },
    { "0-100,150-200,300-400", 210, 290, "0-100,150-200,210-290,300-400" },
    { "0-100", 20, 30, "0-100" },            /* inside: nothing changes */
    { "0-100", 40, 40, "0-100" },            /* empty: nothing */
    { "0-100,50-60,200-300", 100, 150, "0-150,200-300" },  /* an old overlap folds */
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(KtCoverage) c = parse (cases[i].before);
      kt_coverage_add (c, cases[i].from, cases[i].until);
      assert_text (c, cases[i].after);
    }
}

/* Two empty sets are equal, and compare without reading their (NULL)
 * storage: UBSan's report made 80-idempotent fail under the sanitizers. */
static void
test_equal (void)
{
  g_autoptr(KtCoverage) a = kt_coverage_new ();
  g_autoptr(KtCoverage) b = kt_coverage_new ();

  g_assert_true (kt_coverage_equal (a, b));
  kt_coverage_add (a, 0, 10);
  g_assert_false (kt_coverage_equal (a, b));
  kt_coverage_add (b, 0, 5);
  g_assert_false (kt_coverage_equal (a, b));
  kt_coverage_add (b, 5, 10);
  g_assert_true (kt_coverage_equal (a, b));
}

static void
test_queries (void)
{
  g_autoptr(KtCoverage) c = parse ("10-20,30-40");
  g_autoptr(KtCoverage) legacy = parse ("0-100,50-150,200-210");
  g_autoptr(GArray) within = g_array_new (FALSE, FALSE, sizeof (KtInterval));
  KtInterval overlap;

  g_assert_cmpint (kt_coverage_next_gap (c, 0), ==, 0);
  g_assert_cmpint (kt_coverage_next_gap (c, 10), ==, 20);
  g_assert_cmpint (kt_coverage_next_gap (c, 19), ==, 20);
  g_assert_cmpint (kt_coverage_next_gap (c, 20), ==, 20);
  g_assert_cmpint (kt_coverage_next_gap (legacy, 60), ==, 150);
  g_assert_true (kt_coverage_contains (c, 35));
  g_assert_false (kt_coverage_contains (c, 40));
  g_assert_false (kt_coverage_contains (c, 9));

  kt_coverage_within (c, 15, 35, within);
  g_assert_cmpuint (within->len, ==, 2);
  g_assert_cmpint (g_array_index (within, KtInterval, 0).from, ==, 15);
  g_assert_cmpint (g_array_index (within, KtInterval, 0).until, ==, 20);
  g_assert_cmpint (g_array_index (within, KtInterval, 1).from, ==, 30);
  g_assert_cmpint (g_array_index (within, KtInterval, 1).until, ==, 35);

  g_assert_cmpint (kt_coverage_count (c, 0, 100), ==, 20);
  g_assert_cmpint (kt_coverage_count (c, 15, 31), ==, 6);
  g_assert_cmpint (kt_coverage_count (legacy, 0, 1000), ==, 160);

  g_assert_false (kt_coverage_overlap (c, &overlap));
  g_assert_true (kt_coverage_overlap (legacy, &overlap));
  g_assert_cmpint (overlap.from, ==, 50);
  g_assert_cmpint (overlap.until, ==, 100);
}

/* A batch's write, replayed in any order against a model: whatever the
 * rewinds, each offset ends up counted once. */
static void
test_random_rewinds (void)
{
  for (guint round = 0; round < 200; round++)
    {
      g_autoptr(KtCoverage) c = kt_coverage_new ();
      guint8 counted[1000] = { 0 };
      GRand *rand = g_rand_new_with_seed (round);

      for (int step = 0; step < 50; step++)
        {
          gint64 from = g_rand_int_range (rand, 0, 1000);
          gint64 length = g_rand_int_range (rand, 0, 200);
          gint64 until = MIN (1000, from + length);

          /* A batch reads [from, until) and counts what is not covered. */
          for (gint64 o = from; o < until; o++)
            if (!kt_coverage_contains (c, o))
              counted[o]++;
          kt_coverage_add (c, from, until);
          for (gint64 o = 0; o < 1000; o++)
            {
              g_assert_cmpint (counted[o], <=, 1);
              g_assert_cmpint (kt_coverage_contains (c, o), ==, counted[o] == 1);
            }
        }
      g_rand_free (rand);
    }
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/coverage/parse-format", test_parse_format);
  g_test_add_func ("/coverage/add", test_add);
  g_test_add_func ("/coverage/equal", test_equal);
  g_test_add_func ("/coverage/queries", test_queries);
  g_test_add_func ("/coverage/random-rewinds", test_random_rewinds);
  return g_test_run ();
}
