/* fuzz-structured.h - what the structured inputs' fuzz targets share
 * (fuzz-parse-json.c, fuzz-parse-logfmt.c, fuzz-parse-otlp.c).
 *
 * Any bytes are a Kafka record value. The parser of the input must never
 * crash, read past the bytes given (libFuzzer's buffer is exactly that
 * size, ASan watches) or leak; and it must stay consistent, whatever the
 * bytes: lines = ERROR + other + malformed, each malformed record heard
 * once with a documented reason, numbered within the lines, its bytes
 * inside the value; every bucket a DATETIME holds; the same value read
 * twice counts the same; a parser with --by level and --sum counts no more
 * ERROR records than the one without, and exactly as many when its sums
 * are not read (the key of a level is never the (other) key). */
#pragma once
#include <glib.h>
#include <string.h>
#include "keyed-counts.h"
#include "parse.h"
#include "reduce.h"

int LLVMFuzzerTestOneInput (const guint8 *data, size_t size);

typedef struct
{
  const guint8 *value;
  gsize         size;
  guint64       heard;
  guint         last_number;
} Heard;

static void
heard_malformed (const char *line, gsize len, guint number, KtMalformedWhy why, gpointer data)
{
  Heard *h = data;
  const char *name = kt_malformed_why_name (why);

  h->heard++;
  g_assert_true (g_str_equal (name, "shape") || g_str_equal (name, "time")
                 || g_str_equal (name, "range") || g_str_equal (name, "field")
                 || g_str_equal (name, "json") || g_str_equal (name, "utf8")
                 || g_str_equal (name, "nul") || g_str_equal (name, "surrogate")
                 || g_str_equal (name, "depth") || g_str_equal (name, "missing")
                 || g_str_equal (name, "type"));
  g_assert_true ((const guint8 *) line >= h->value
                 && (const guint8 *) line + len <= h->value + h->size);
  g_assert_cmpuint (number, >, h->last_number);
  h->last_number = number;
}

/* Counts @data with @parser (and @keyed's parser, --by level --sum @sum)
 * and checks what fuzz-structured.h says; returns the ERROR count. */
static guint64
fuzz_structured (KtInput input, const char *sum, const guint8 *data, size_t size)
{
  static KtParser *plain[4], *keyed_parser[4], *by_level[4];
  static const char *const by[] = { "level", NULL };
  g_autoptr(KtReducer) reducer = kt_reducer_new ();
  g_autoptr(KtReducer) again = kt_reducer_new ();
  g_autoptr(KtKeyLimit) limit = kt_key_limit_new (1000);
  g_autoptr(KtKeyedCounts) keyed = kt_keyed_counts_new (-1, 1, limit);
  g_autoptr(KtKeyedCounts) levels = kt_keyed_counts_new (-1, 0, limit);
  g_autoptr(GArray) minutes = NULL;
  KtParseCounts counts = { 0 }, twice = { 0 }, with_sum = { 0 }, with_level = { 0 };
  Heard heard = { data, size, 0, 0 };
  guint64 sum_of_rows = 0;

  if (plain[input] == NULL)
    {
      const char *sums[] = { sum, NULL };
      KtParseFormat f = { .input = input, .levels = (const char *const[]) { "ERROR", "WARN", NULL } };

      plain[input] = kt_parser_new_format (&f, NULL);
      f.dimensions = by;
      by_level[input] = kt_parser_new_format (&f, NULL);
      f.sums = sums;
      keyed_parser[input] = kt_parser_new_format (&f, NULL);
      g_assert_nonnull (plain[input]);
      g_assert_nonnull (keyed_parser[input]);
    }
  kt_parser_set_malformed_func (plain[input], heard_malformed, &heard);
  kt_parser_value (plain[input], (const char *) data, size, reducer, &counts, NULL, NULL);
  kt_parser_set_malformed_func (plain[input], NULL, NULL);
  g_assert_cmpuint (heard.heard, ==, counts.malformed);
  g_assert_cmpuint (counts.lines, >=, counts.errors + counts.malformed);
  minutes = kt_reducer_sorted (reducer);
  for (guint i = 0; i < minutes->len; i++)
    {
      const KtMinuteCount *mc = &g_array_index (minutes, KtMinuteCount, i);

      g_assert_cmpint (mc->minute, >=, KT_MINUTE_MIN);
      g_assert_cmpint (mc->minute, <=, KT_MINUTE_MAX);
      sum_of_rows += mc->count;
    }
  g_assert_cmpuint (sum_of_rows, ==, counts.errors);

  kt_parser_value (plain[input], (const char *) data, size, again, &twice, NULL, NULL);
  g_assert_cmpuint (twice.lines, ==, counts.lines);
  g_assert_cmpuint (twice.errors, ==, counts.errors);
  g_assert_cmpuint (twice.malformed, ==, counts.malformed);

  kt_parser_value_keyed (by_level[input], (const char *) data, size, levels, &with_level, NULL,
                         NULL);
  g_assert_cmpuint (with_level.errors, ==, counts.errors);
  g_assert_cmpuint (with_level.lines, ==, counts.lines);
  kt_parser_value_keyed (keyed_parser[input], (const char *) data, size, keyed, &with_sum, NULL,
                         NULL);
  g_assert_cmpuint (with_sum.errors, <=, counts.errors);
  g_assert_cmpuint (with_sum.errors + with_sum.malformed, ==, counts.errors + counts.malformed);
  return counts.errors;
}
