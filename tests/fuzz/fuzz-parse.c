/* fuzz-parse.c - libFuzzer target for the line parser.
 *
 * Any bytes are a Kafka record value. The parser must never crash, read
 * out of bounds or leak, and its counts must stay consistent: every ERROR
 * line lands in the reducer, and no kind outnumbers the lines. Every minute
 * handed on, in the default format and in iso8601 (hour buckets) and
 * syslog (a clock on the last day DATETIME holds), is one a DATETIME
 * column can hold. */
#include <glib.h>
#include <string.h>
#include "parse.h"
#include "reduce.h"

int LLVMFuzzerTestOneInput (const guint8 *data, size_t size);

/* 9999-12-31 12:00 UTC: next year's lines would be 10000's. */
static gint64
last_day (gpointer data)
{
  (void) data;
  return kt_minute_from_civil (9999, 12, 31, 12, 0) * 60 * G_USEC_PER_SEC;
}

/* Other formats over the same bytes: whatever they count is in range. */
static void
check_in_range (KtParser *parser, const guint8 *data, size_t size)
{
  for (size_t at = 0; at <= size;)
    {
      const guint8 *nl = memchr (data + at, '\n', size - at);
      size_t end = nl != NULL ? (size_t) (nl - data) : size;
      gint64 m = G_MININT64;

      if (kt_parser_line (parser, (const char *) data + at, end - at, &m) == KT_LINE_ERROR)
        {
          g_assert_cmpint (m, >=, KT_MINUTE_MIN);
          g_assert_cmpint (m, <=, KT_MINUTE_MAX);
        }
      at = end + 1;
    }
}

int
LLVMFuzzerTestOneInput (const guint8 *data, size_t size)
{
  static KtParser *parser, *slow, *iso, *syslog;
  g_autoptr(KtReducer) reducer = kt_reducer_new ();
  g_autoptr(GArray) minutes = NULL;
  KtParseCounts counts = { 0 };
  const char *bad = NULL;
  gsize bad_len = 0;
  guint64 malformed, sum = 0;

  if (parser == NULL)
    {
      parser = kt_parser_new (NULL);  /* once: compiling the pattern is slow */
      slow = kt_parser_new (NULL);
      kt_parser_set_shortcut (slow, FALSE);
      iso = kt_parser_new_format (&(KtParseFormat) { .time_format = "iso8601", .bucket = 60 },
                                  NULL);
      syslog = kt_parser_new_format (&(KtParseFormat) { .time_format = "syslog" }, NULL);
      kt_parser_set_clock (syslog, last_day, NULL);
    }
  check_in_range (iso, data, size);
  check_in_range (syslog, data, size);

  /* The ERROR shortcut and pcre2 alone must agree on every line. */
  for (size_t at = 0; at <= size;)
    {
      const guint8 *nl = memchr (data + at, '\n', size - at);
      size_t end = nl != NULL ? (size_t) (nl - data) : size;
      gint64 m1 = -1, m2 = -1;
      KtLineKind fast = kt_parser_line (parser, (const char *) data + at, end - at, &m1);
      KtLineKind full = kt_parser_line (slow, (const char *) data + at, end - at, &m2);

      g_assert_cmpint (fast, ==, full);
      if (fast == KT_LINE_ERROR)
        g_assert_cmpint (m1, ==, m2);
      at = end + 1;
    }

  malformed = kt_parser_value (parser, (const char *) data, size, reducer, &counts,
                               &bad, &bad_len);
  g_assert_cmpuint (malformed, ==, counts.malformed);
  g_assert_cmpuint (counts.errors + counts.malformed, <=, counts.lines);
  if (malformed > 0)
    g_assert_true (bad >= (const char *) data && bad + bad_len <= (const char *) data + size);

  minutes = kt_reducer_sorted (reducer);
  for (guint i = 0; i < minutes->len; i++)
    {
      const KtMinuteCount *mc = &g_array_index (minutes, KtMinuteCount, i);
      char text[20];

      sum += mc->count;
      g_assert_cmpint (mc->minute, >=, KT_MINUTE_MIN);
      g_assert_cmpint (mc->minute, <=, KT_MINUTE_MAX);
      /* Every counted minute is a real one, and formats back to itself. */
      kt_minute_format (mc->minute, text);
      g_assert_cmpint (text[4], ==, '-');
      g_assert_cmpint (text[19], ==, '\0');
    }
  g_assert_cmpuint (sum, ==, counts.errors);
  return 0;
}
