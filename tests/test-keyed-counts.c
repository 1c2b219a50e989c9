/* test-keyed-counts.c - a batch's rows per bucket and key (keyed-counts.h), without
 * Kafka or MySQL: counts and exact sums, the order rows are written in,
 * the --max-keys bound over one or several partitions' rows, and memory
 * that stays bounded with a million distinct keys. */
#include <string.h>
#include "keyed-counts.h"

/* A one-dimension key (parse.h's encoding) of @text. */
static GBytes *
key (const char *text)
{
  gsize n = strlen (text);
  guint8 *k = g_malloc (n + 1);

  k[0] = (guint8) n;
  memcpy (k + 1, text, n);
  return g_bytes_new_take (k, n + 1);
}

static void
add (KtKeyedCounts *keyed, gint64 bucket, const char *text, KtAmount sum)
{
  g_autoptr(GBytes) k = key (text);
  gsize len;
  const guint8 *data = g_bytes_get_data (k, &len);

  kt_keyed_counts_add (keyed, bucket, data, len, &sum);
}

static const KtKeyedRow *
row (GArray *rows, guint i)
{
  return &g_array_index (rows, KtKeyedRow, i);
}

static void
assert_row (const KtKeyedRow *r, gint64 bucket, const char *text, guint64 count,
            const char *sum)
{
  char got[48];

  g_assert_cmpint (r->bucket, ==, bucket);
  if (text == NULL)
    {
      g_assert_true (r->other);
      g_assert_cmpuint (r->key_len, ==, 0);
    }
  else
    {
      g_assert_false (r->other);
      g_assert_cmpmem (r->key + 1, r->key_len - 1, text, strlen (text));
    }
  g_assert_cmpuint (r->count, ==, count);
  kt_sum_format (r->sums[0], got);
  g_assert_cmpstr (got, ==, sum);
}

static void
test_counts_and_sums (void)
{
  g_autoptr(KtKeyLimit) limit = kt_key_limit_new (100);
  g_autoptr(KtKeyedCounts) keyed = kt_keyed_counts_new (-1, 1, limit);
  g_autoptr(GArray) rows = NULL;

  add (keyed, 10, "b", 15000);     /* 1.5 */
  add (keyed, 10, "b", -5000);
  add (keyed, 10, "a", 1);
  add (keyed, 9, "b", 0);
  add (keyed, 10, "b", 10000);
  add (keyed, 10, "ab", 7);
  rows = kt_keyed_counts_sorted (keyed);
  g_assert_cmpuint (kt_keyed_counts_size (keyed), ==, 4);
  g_assert_cmpuint (rows->len, ==, 4);
  g_assert_cmpuint (kt_keyed_counts_folded (keyed), ==, 0);
  /* By bucket, then the key bytes. */
  assert_row (row (rows, 0), 9, "b", 1, "0.0000");
  assert_row (row (rows, 1), 10, "a", 1, "0.0001");
  assert_row (row (rows, 2), 10, "b", 3, "2.0000");
  assert_row (row (rows, 3), 10, "ab", 1, "0.0007");
  g_assert_cmpint (row (rows, 0)->partition, ==, -1);

  g_clear_pointer (&rows, g_array_unref);
  kt_keyed_counts_clear (keyed);
  kt_key_limit_clear (limit);
  g_assert_cmpuint (kt_keyed_counts_size (keyed), ==, 0);
  add (keyed, 10, "b", 1);
  rows = kt_keyed_counts_sorted (keyed);
  assert_row (row (rows, 0), 10, "b", 1, "0.0001");
}

/* --sum without --by: no key at all, given as (NULL, 0), one row per
 * bucket (found by the history checker under UBSan: memcmp of NULL). */
static void
test_no_key (void)
{
  g_autoptr(KtKeyLimit) limit = kt_key_limit_new (1);
  g_autoptr(KtKeyedCounts) keyed = kt_keyed_counts_new (-1, 1, limit);
  g_autoptr(GArray) rows = NULL;
  KtAmount one = 10000, two = 20000;

  kt_keyed_counts_add (keyed, 10, NULL, 0, &one);
  kt_keyed_counts_add (keyed, 10, NULL, 0, &two);
  kt_keyed_counts_add (keyed, 11, NULL, 0, &two);
  kt_keyed_counts_add (keyed, 10, NULL, 0, &one);
  rows = kt_keyed_counts_sorted (keyed);
  g_assert_cmpuint (rows->len, ==, 2);
  g_assert_cmpuint (kt_keyed_counts_folded (keyed), ==, 0);
  for (guint i = 0; i < 2; i++)
    {
      g_assert_false (row (rows, i)->other);
      g_assert_cmpuint (row (rows, i)->key_len, ==, 0);
    }
  g_assert_cmpint (row (rows, 0)->bucket, ==, 10);
  g_assert_cmpuint (row (rows, 0)->count, ==, 3);
  g_assert_cmpint (row (rows, 1)->bucket, ==, 11);
  g_assert_cmpuint (row (rows, 1)->count, ==, 1);
}

/* Past max_keys distinct keys in a bucket, lines go to its (other) row,
 * last in the bucket; keys admitted before stay admitted; each bucket has
 * its own bound. */
static void
test_bound (void)
{
  g_autoptr(KtKeyLimit) limit = kt_key_limit_new (2);
  g_autoptr(KtKeyedCounts) keyed = kt_keyed_counts_new (-1, 1, limit);
  g_autoptr(GArray) rows = NULL;

  add (keyed, 1, "x", 10000);
  add (keyed, 1, "y", 10000);
  add (keyed, 1, "z", 10000);   /* third key: (other) */
  add (keyed, 1, "w", 20000);   /* fourth: (other) */
  add (keyed, 1, "x", 10000);   /* admitted before: its row */
  add (keyed, 1, "z", 10000);   /* folded before: still (other) */
  add (keyed, 2, "z", 10000);   /* another bucket: admitted */
  rows = kt_keyed_counts_sorted (keyed);
  g_assert_cmpuint (rows->len, ==, 4);
  assert_row (row (rows, 0), 1, "x", 2, "2.0000");
  assert_row (row (rows, 1), 1, "y", 1, "1.0000");
  assert_row (row (rows, 2), 1, NULL, 3, "4.0000");
  assert_row (row (rows, 3), 2, "z", 1, "1.0000");
  g_assert_cmpuint (kt_keyed_counts_folded (keyed), ==, 3);
}

/* --max-keys 1: one key a bucket, everything else (other). */
static void
test_bound_one (void)
{
  g_autoptr(KtKeyLimit) limit = kt_key_limit_new (1);
  g_autoptr(KtKeyedCounts) keyed = kt_keyed_counts_new (-1, 1, limit);
  g_autoptr(GArray) rows = NULL;

  for (int i = 0; i < 100; i++)
    {
      g_autofree char *k = g_strdup_printf ("k%d", i % 7);
      add (keyed, 5, k, 1);
    }
  rows = kt_keyed_counts_sorted (keyed);
  g_assert_cmpuint (rows->len, ==, 2);
  assert_row (row (rows, 0), 5, "k0", 15, "0.0015");
  assert_row (row (rows, 1), 5, NULL, 85, "0.0085");
}

/* Idempotent mode: one KtKeyedCounts per partition under one bound, which
 * counts the batch's distinct keys, whichever partitions they are in. */
static void
test_bound_shared (void)
{
  g_autoptr(KtKeyLimit) limit = kt_key_limit_new (2);
  g_autoptr(KtKeyedCounts) p0 = kt_keyed_counts_new (0, 1, limit);
  g_autoptr(KtKeyedCounts) p1 = kt_keyed_counts_new (1, 1, limit);
  g_autoptr(GArray) r0 = NULL, r1 = NULL;

  add (p0, 1, "a", 1);
  add (p1, 1, "a", 1);   /* the same key in another partition: one key */
  add (p1, 1, "b", 1);
  add (p0, 1, "c", 1);   /* third key of the batch's bucket: (other) */
  add (p0, 1, "b", 1);   /* admitted by partition 1: a row here too */
  r0 = kt_keyed_counts_sorted (p0);
  r1 = kt_keyed_counts_sorted (p1);
  g_assert_cmpuint (r0->len, ==, 3);
  assert_row (row (r0, 0), 1, "a", 1, "0.0001");
  assert_row (row (r0, 1), 1, "b", 1, "0.0001");
  assert_row (row (r0, 2), 1, NULL, 1, "0.0001");
  g_assert_cmpint (row (r0, 0)->partition, ==, 0);
  g_assert_cmpuint (r1->len, ==, 2);
  g_assert_cmpint (row (r1, 0)->partition, ==, 1);
  g_assert_cmpuint (kt_keyed_counts_folded (p0) + kt_keyed_counts_folded (p1), ==, 1);
}

/* Sums past a gint64 (many lines of the largest value), both ways. */
static void
test_sums_past_64_bits (void)
{
  g_autoptr(KtKeyLimit) limit = kt_key_limit_new (10);
  g_autoptr(KtKeyedCounts) keyed = kt_keyed_counts_new (-1, 1, limit);
  g_autoptr(GArray) rows = NULL;
  char text[48];

  for (int i = 0; i < 1000; i++)
    add (keyed, 1, "max", G_MAXINT64);
  for (int i = 0; i < 3; i++)
    add (keyed, 1, "min", -G_MAXINT64);
  rows = kt_keyed_counts_sorted (keyed);
  /* 1000 * 922337203685477.5807 and 3 * -922337203685477.5807. */
  kt_sum_format (row (rows, 0)->sums[0], text);
  g_assert_cmpstr (text, ==, "922337203685477580.7000");
  kt_sum_format (row (rows, 1)->sums[0], text);
  g_assert_cmpstr (text, ==, "-2767011611056432.7421");
}

static void
test_sum_format (void)
{
  static const struct
  {
    gint64      units;
    const char *text;
  } cases[] = {
    { 0, "0.0000" }, { 1, "0.0001" }, { -1, "-0.0001" }, { 10000, "1.0000" },
    { -12345678, "-1234.5678" }, { G_MAXINT64, "922337203685477.5807" },
    { -G_MAXINT64, "-922337203685477.5807" },
  };
  char text[48];
  KtSum big = (KtSum) G_MAXINT64 * G_MAXINT64;

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      kt_sum_format (cases[i].units, text);
      g_assert_cmpstr (text, ==, cases[i].text);
    }
  /* (2^63 - 1)^2 ten-thousandths: 38 digits, what DECIMAL(38,4) holds
   * at most is 34 before the point. */
  kt_sum_format (big, text);
  g_assert_cmpstr (text, ==, "8507059173023461584739690778423250.1249");
  kt_sum_format (-big, text);
  g_assert_cmpstr (text, ==, "-8507059173023461584739690778423250.1249");
}

/* A million distinct keys in one bucket under the default bound: the
 * rows (and the keys kept) stop at the bound, the rest is one row. */
static void
test_million_keys (void)
{
  g_autoptr(KtKeyLimit) limit = kt_key_limit_new (10000);
  g_autoptr(KtKeyedCounts) keyed = kt_keyed_counts_new (-1, 1, limit);
  g_autoptr(GArray) rows = NULL;
  KtSum total = 0;
  guint64 count = 0;

  for (int i = 0; i < 1000000; i++)
    {
      char k[16];
      g_snprintf (k, sizeof k, "svc-%07d", i);
      add (keyed, 1, k, 2);
    }
  g_assert_cmpuint (kt_keyed_counts_size (keyed), ==, 10001);
  g_assert_cmpuint (kt_keyed_counts_folded (keyed), ==, 990000);
  rows = kt_keyed_counts_sorted (keyed);
  for (guint i = 0; i < rows->len; i++)
    {
      count += row (rows, i)->count;
      total += row (rows, i)->sums[0];
    }
  g_assert_cmpuint (count, ==, 1000000);
  g_assert_true (total == 2000000);
  g_assert_true (row (rows, rows->len - 1)->other);
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/keyed-counts/counts-and-sums", test_counts_and_sums);
  g_test_add_func ("/keyed-counts/no-key", test_no_key);
  g_test_add_func ("/keyed-counts/bound", test_bound);
  g_test_add_func ("/keyed-counts/bound-one", test_bound_one);
  g_test_add_func ("/keyed-counts/bound-shared-by-partitions", test_bound_shared);
  g_test_add_func ("/keyed-counts/sums-past-64-bits", test_sums_past_64_bits);
  g_test_add_func ("/keyed-counts/sum-format", test_sum_format);
  g_test_add_func ("/keyed-counts/million-keys", test_million_keys);

  return g_test_run ();
}
