/* test-anchor.c - the anchor of a partition: its hash, where it stands
 * against a log, and the comparison with the record read there. */
#include <string.h>
#include "anchor.h"

static KtAnchor
at (gint64 offset, gint64 timestamp, guint64 hash)
{
  return (KtAnchor) { TRUE, offset, timestamp, hash };
}

/* The hash is stored in databases: its values are fixed. Computed apart
 * (FNV-1a 64 over the 8-byte little-endian lengths, all ones for NULL). */
static void
test_hash (void)
{
  static const char line[] = "2017-07-30 14:00:00 ERROR x";

  g_assert_cmphex (kt_anchor_hash (NULL, 0, line, strlen (line)), ==, 0x6f3a873ea9d6f385ULL);
  g_assert_cmphex (kt_anchor_hash ("", 0, "", 0), ==, 0x88201fb960ff6465ULL);
  g_assert_cmphex (kt_anchor_hash (NULL, 0, NULL, 0), ==, 0xd6607508f5a1e855ULL);
  g_assert_cmphex (kt_anchor_hash ("key", 3, "value", 5), ==, 0x9b55ec4bc9a57629ULL);
  g_assert_cmphex (kt_anchor_hash (NULL, 0, "", 0), ==, 0x780d5836696931ddULL);
  /* Where the key ends and the value starts is part of it. */
  g_assert_cmphex (kt_anchor_hash ("ab", 2, "c", 1), !=, kt_anchor_hash ("a", 1, "bc", 2));
}

static void
test_place (void)
{
  KtAnchor none = { 0 }, a = at (999, 1000, 7);

  g_assert_cmpint (kt_anchor_place (&none, 1000, 0, 2000), ==, KT_ANCHOR_NONE);
  /* Inside [low, high): read it. */
  g_assert_cmpint (kt_anchor_place (&a, 1000, 0, 2000), ==, KT_ANCHOR_READ);
  g_assert_cmpint (kt_anchor_place (&a, 1000, 999, 1000), ==, KT_ANCHOR_READ);
  /* Removed by retention: the log-start rule is all there is. */
  g_assert_cmpint (kt_anchor_place (&a, 1000, 1000, 2000), ==, KT_ANCHOR_UNSEEN);
  /* The log ends at or before it, the stored offset past the end too:
   * the data-loss rule's (a recreated topic shorter than the stored
   * offsets, which --on-data-loss skip may read from its start). */
  g_assert_cmpint (kt_anchor_place (&a, 1000, 0, 100), ==, KT_ANCHOR_UNSEEN);
  g_assert_cmpint (kt_anchor_place (&a, 1000, 0, 999), ==, KT_ANCHOR_UNSEEN);
  /* ...but with the stored offset inside the log (an idempotent job's
   * covered record, its offset rewound; --offsets kafka after the
   * group's offsets went with the topic): another log. */
  g_assert_cmpint (kt_anchor_place (&a, 0, 0, 100), ==, KT_ANCHOR_PAST_END);
  g_assert_cmpint (kt_anchor_place (&a, -1, 0, 999), ==, KT_ANCHOR_PAST_END);
  g_assert_cmpint (kt_anchor_place (&a, 999, 0, 999), ==, KT_ANCHOR_PAST_END);
}

static void
test_compare (void)
{
  KtAnchor a = at (999, 1000, 7), none = { 0 };
  KtAnchor same = at (999, 1000, 7), other_ts = at (999, 1001, 7), other_hash = at (999, 1000, 8);
  KtAnchor after = at (1000, 1000, 7), no_ts = at (999, -1, 7);

  g_assert_cmpint (kt_anchor_compare (&a, &same), ==, KT_ANCHOR_SAME);
  g_assert_cmpint (kt_anchor_compare (&a, &other_ts), ==, KT_ANCHOR_DIFFERS);
  g_assert_cmpint (kt_anchor_compare (&a, &other_hash), ==, KT_ANCHOR_DIFFERS);
  g_assert_cmpint (kt_anchor_compare (&a, &no_ts), ==, KT_ANCHOR_DIFFERS);
  /* A hole at its offset (compaction) or nothing read: cannot tell. */
  g_assert_cmpint (kt_anchor_compare (&a, &after), ==, KT_ANCHOR_UNSEEN);
  g_assert_cmpint (kt_anchor_compare (&a, &none), ==, KT_ANCHOR_UNSEEN);
}

static void
test_describe (void)
{
  KtAnchor a = at (5, 1512000000123, 0xabcdef), b = at (5, -1, 1);
  g_autofree char *s = kt_anchor_describe (&a);
  g_autofree char *t = kt_anchor_describe (&b);

  g_assert_cmpstr (s, ==, "timestamp 2017-11-30T00:00:00.123Z, hash 0000000000abcdef");
  g_assert_cmpstr (t, ==, "timestamp none, hash 0000000000000001");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/anchor/hash", test_hash);
  g_test_add_func ("/anchor/place", test_place);
  g_test_add_func ("/anchor/compare", test_compare);
  g_test_add_func ("/anchor/describe", test_describe);
  return g_test_run ();
}
