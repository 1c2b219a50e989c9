/* fuzz-parse.c - libFuzzer target for the line parser.
 *
 * Any bytes are a Kafka record value. The parser must never crash, read
 * out of bounds or leak, and its counts must stay consistent: every ERROR
 * line lands in the reducer, and no kind outnumbers the lines. */
#include <glib.h>
#include <string.h>
#include "parse.h"
#include "reduce.h"

int LLVMFuzzerTestOneInput (const guint8 *data, size_t size);

int
LLVMFuzzerTestOneInput (const guint8 *data, size_t size)
{
  static KtParser *parser, *slow;
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
    }

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
      /* Every counted minute is a real one, and formats back to itself. */
      kt_minute_format (mc->minute, text);
      g_assert_cmpint (text[4], ==, '-');
      g_assert_cmpint (text[19], ==, '\0');
    }
  g_assert_cmpuint (sum, ==, counts.errors);
  return 0;
}
