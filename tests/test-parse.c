/* test-parse.c - the parse stage, without Kafka or MySQL.
 *
 * Covers kt_parser_line (shape, levels, calendar, opaque message bytes),
 * kt_parser_value (splitting on '\n', CRLF, empty lines, NUL bytes, counts,
 * first_bad, what reaches the reducer) and the minute arithmetic
 * (kt_minute_from_civil and kt_minute_format, both ways, 1000..9999). */
#include <stdio.h>
#include <string.h>
#include "counts.h"
#include "error.h"
#include "options.h"
#include "parse.h"

/* ---- kt_parser_line ---------------------------------------------------- */

typedef struct
{
  const char *line;
  gsize       len;   /* 0: strlen (line) */
  KtLineKind  kind;
  /* For KT_LINE_ERROR: the civil minute the line must map to. */
  int         year, month, day, hour, min;
} LineCase;

static const LineCase valid_cases[] = {
  { "2017-07-30 14:09:08 ERROR msg", 0, KT_LINE_ERROR, 2017, 7, 30, 14, 9 },
  { "2017-07-30 14:09:08 ERROR", 0, KT_LINE_ERROR, 2017, 7, 30, 14, 9 },
  { "2017-07-30 14:09:08 ERROR ", 0, KT_LINE_ERROR, 2017, 7, 30, 14, 9 },
  { "2017-07-30 14:09:59 ERROR two  spaces  inside", 0, KT_LINE_ERROR, 2017, 7, 30, 14, 9 },
  { "2017-07-30 14:09:08 INFO msg", 0, KT_LINE_OTHER, 0, 0, 0, 0, 0 },
  { "2017-07-30 14:09:08 WARN", 0, KT_LINE_OTHER, 0, 0, 0, 0, 0 },
  /* Boundaries of the day and of MariaDB's DATETIME. */
  { "2017-07-30 23:59:59 ERROR x", 0, KT_LINE_ERROR, 2017, 7, 30, 23, 59 },
  { "2017-07-30 00:00:00 ERROR x", 0, KT_LINE_ERROR, 2017, 7, 30, 0, 0 },
  { "9999-12-31 23:59:59 ERROR x", 0, KT_LINE_ERROR, 9999, 12, 31, 23, 59 },
  { "1000-01-01 00:00:00 ERROR x", 0, KT_LINE_ERROR, 1000, 1, 1, 0, 0 },
  { "1970-01-01 00:00:00 ERROR x", 0, KT_LINE_ERROR, 1970, 1, 1, 0, 0 },
  { "1969-12-31 23:59:59 ERROR x", 0, KT_LINE_ERROR, 1969, 12, 31, 23, 59 },
  /* Leap days that exist. */
  { "2016-02-29 12:00:00 ERROR x", 0, KT_LINE_ERROR, 2016, 2, 29, 12, 0 },
  { "2000-02-29 12:34:56 ERROR x", 0, KT_LINE_ERROR, 2000, 2, 29, 12, 34 },
  { "2017-12-31 23:59:59 ERROR x", 0, KT_LINE_ERROR, 2017, 12, 31, 23, 59 },
  { "2017-04-30 10:00:00 ERROR x", 0, KT_LINE_ERROR, 2017, 4, 30, 10, 0 },
  { "2017-02-28 10:00:00 ERROR x", 0, KT_LINE_ERROR, 2017, 2, 28, 10, 0 },
  /* A leap second counts in its minute, as strptime's %S reads it. */
  { "2016-12-31 23:59:60 ERROR leap", 0, KT_LINE_ERROR, 2016, 12, 31, 23, 59 },
  { "2017-07-30 14:09:60 ERROR", 0, KT_LINE_ERROR, 2017, 7, 30, 14, 9 },
  { "9999-12-31 23:59:60 ERROR x", 0, KT_LINE_ERROR, 9999, 12, 31, 23, 59 },
  { "2016-12-31 23:59:60 INFO leap", 0, KT_LINE_OTHER, 0, 0, 0, 0, 0 },
};

/* The level is case-sensitive and exact. */
static const LineCase level_cases[] = {
  { "2017-07-30 14:09:08 error msg", 0, KT_LINE_OTHER, 0, 0, 0, 0, 0 },
  { "2017-07-30 14:09:08 ERRORS msg", 0, KT_LINE_OTHER, 0, 0, 0, 0, 0 },
  { "2017-07-30 14:09:08 Error msg", 0, KT_LINE_OTHER, 0, 0, 0, 0, 0 },
  { "2017-07-30 14:09:08 error", 0, KT_LINE_OTHER, 0, 0, 0, 0, 0 },
  { "2017-07-30 14:09:08 ERRORS", 0, KT_LINE_OTHER, 0, 0, 0, 0, 0 },
  { "2017-07-30 14:09:08 ERRO msg", 0, KT_LINE_OTHER, 0, 0, 0, 0, 0 },
  { "2017-07-30 14:09:08 123 x", 0, KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
  { "2017-07-30 14:09:08 ERROR1 x", 0, KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
  { "2017-07-30 14:09:08 ERROR:x", 0, KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
  { "2017-07-30 14:09:08 ERROR\tx", 0, KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
  { "2017-07-30 14:09:08 ERROR\r", 0, KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
};

static const LineCase shape_cases[] = {
  { "", 0, KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
  { "2017-07-30 14:09:08", 0, KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
  { "2017-07-30 14:09:08 ", 0, KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
  { " 2017-07-30 14:09:08 ERROR x", 0, KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
  { "2017-07-30 14:09:08  ERROR x", 0, KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
  { "2017-07-30 14:09:08\tERROR x", 0, KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
  { "2017-07-30\t14:09:08 ERROR x", 0, KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
  { "2017-0a-30 14:09:08 ERROR x", 0, KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
  { "2017-07-3x 14:09:08 ERROR x", 0, KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
  { "2O17-07-30 14:09:08 ERROR x", 0, KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
  { "2017-07-30 1a:09:08 ERROR x", 0, KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
  { "2017-07-30 14:09:0. ERROR x", 0, KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
  { "2017-07-30 14:09:-8 ERROR x", 0, KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
  { "2017/07/30 14:09:08 ERROR x", 0, KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
  { "2017-07-30T14:09:08 ERROR x", 0, KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
  { "17-07-30 14:09:08 ERROR x", 0, KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
  { "2017-7-30 14:09:08 ERROR x", 0, KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
  { "ERROR 2017-07-30 14:09:08 x", 0, KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
};

/* Well-formed digits, but no such date or time. */
static const LineCase bad_date_cases[] = {
  { "2017-02-29 10:00:00 ERROR x", 0, KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
  { "2017-02-30 10:00:00 ERROR x", 0, KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
  { "2017-04-31 10:00:00 ERROR x", 0, KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
  { "2017-06-31 10:00:00 ERROR x", 0, KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
  { "2017-01-32 10:00:00 ERROR x", 0, KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
  { "2017-13-01 10:00:00 ERROR x", 0, KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
  { "2017-00-10 10:00:00 ERROR x", 0, KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
  { "2017-01-00 10:00:00 ERROR x", 0, KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
  { "2017-99-99 10:00:00 ERROR x", 0, KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
  { "2017-07-30 24:00:00 ERROR x", 0, KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
  { "2017-07-30 25:61:00 ERROR x", 0, KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
  { "2017-07-30 23:60:00 ERROR x", 0, KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
  { "2017-07-30 23:59:61 ERROR x", 0, KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
  { "2017-07-30 23:59:99 ERROR x", 0, KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
  { "0999-12-31 23:59:59 ERROR x", 0, KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
  { "0000-01-01 00:00:00 ERROR x", 0, KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
  /* Leap days that do not exist: centuries not divisible by 400. */
  { "1900-02-29 10:00:00 ERROR x", 0, KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
  { "2100-02-29 10:00:00 ERROR x", 0, KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
  /* Also for other levels: a bad date is malformed, not OTHER. */
  { "2017-02-29 10:00:00 INFO x", 0, KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
};

static void
check_line_cases (const LineCase *cases, gsize n)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(KtParser) parser = kt_parser_new (&error);

  g_assert_no_error (error);
  g_assert_nonnull (parser);

  for (gsize i = 0; i < n; i++)
    {
      const LineCase *c = &cases[i];
      gsize len = c->len != 0 ? c->len : strlen (c->line);
      gint64 minute = G_MININT64;
      KtLineKind kind;

      g_test_message ("line %" G_GSIZE_FORMAT ": '%s'", i, c->line);
      kind = kt_parser_line (parser, c->line, len, &minute);
      g_assert_cmpint (kind, ==, c->kind);
      if (c->kind == KT_LINE_ERROR)
        g_assert_cmpint (minute, ==, kt_minute_from_civil (c->year, c->month, c->day,
                                                             c->hour, c->min));
    }
}

static void
test_line_valid (void)
{
  check_line_cases (valid_cases, G_N_ELEMENTS (valid_cases));
}

static void
test_line_level (void)
{
  check_line_cases (level_cases, G_N_ELEMENTS (level_cases));
}

static void
test_line_shape (void)
{
  check_line_cases (shape_cases, G_N_ELEMENTS (shape_cases));
}

static void
test_line_bad_date (void)
{
  check_line_cases (bad_date_cases, G_N_ELEMENTS (bad_date_cases));
}

/* Every prefix of a valid ERROR line. Cut inside the timestamp or right
 * after it, the line is malformed; cut inside the level, what is left is a
 * well-formed line of another level ("E", "ER", ...), never ERROR. */
static void
test_line_truncated (void)
{
  static const char full[] = "2017-07-30 14:09:08 ERROR msg";
  g_autoptr(GError) error = NULL;
  g_autoptr(KtParser) parser = kt_parser_new (&error);

  g_assert_no_error (error);
  for (gsize n = 0; n <= strlen (full); n++)
    {
      /* A copy of exactly n bytes, so that nothing past it can be read
       * by accident (ASan would see it). */
      g_autofree char *cut = g_memdup2 (full, n == 0 ? 1 : n);
      gint64 minute = 0;
      KtLineKind want;

      if (n <= 20)
        want = KT_LINE_MALFORMED;
      else if (n < 25)
        want = KT_LINE_OTHER;
      else
        want = KT_LINE_ERROR;
      g_test_message ("prefix of %" G_GSIZE_FORMAT " bytes", n);
      g_assert_cmpint (kt_parser_line (parser, cut, n, &minute), ==, want);
      if (want == KT_LINE_ERROR)
        g_assert_cmpint (minute, ==, kt_minute_from_civil (2017, 7, 30, 14, 9));
    }
}

/* Bytes after "ERROR " are opaque: invalid UTF-8, NUL, any length. */
static void
test_line_opaque_message (void)
{
  static const struct
  {
    const char *bytes;
    gsize       len;
  } cases[] = {
#define BYTES(s) { s, sizeof (s) - 1 }
    BYTES ("2017-07-30 14:09:08 ERROR \xff\xfe"),
    BYTES ("2017-07-30 14:09:08 ERROR \xc3\x28 \xed\xa0\x80 \xf8\x88\x80\x80\x80"),
    BYTES ("2017-07-30 14:09:08 ERROR a\0b"),
    BYTES ("2017-07-30 14:09:08 ERROR \0"),
    BYTES ("2017-07-30 14:09:08 ERROR \0\0\0"),
    BYTES ("2017-07-30 14:09:08 ERROR \r\r"),
#undef BYTES
  };
  g_autoptr(GError) error = NULL;
  g_autoptr(KtParser) parser = kt_parser_new (&error);
  const gint64 want = kt_minute_from_civil (2017, 7, 30, 14, 9);

  g_assert_no_error (error);
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      gint64 minute = 0;

      g_test_message ("case %" G_GSIZE_FORMAT, i);
      g_assert_cmpint (kt_parser_line (parser, cases[i].bytes, cases[i].len, &minute),
                       ==, KT_LINE_ERROR);
      g_assert_cmpint (minute, ==, want);
    }
}

static void
test_line_huge_message (void)
{
  static const char head[] = "2017-07-30 14:09:08 ERROR ";
  const gsize body = 1024 * 1024;
  const gsize len = strlen (head) + body;
  g_autoptr(GError) error = NULL;
  g_autoptr(KtParser) parser = kt_parser_new (&error);
  g_autofree char *line = g_malloc (len);
  gint64 minute = 0;
  KtParseCounts counts = { 0, 0, 0 };
  g_autoptr(KtReducer) reducer = kt_reducer_new ();

  g_assert_no_error (error);
  memcpy (line, head, strlen (head));
  /* Every byte value but '\n', NUL and invalid UTF-8 included. */
  for (gsize i = 0; i < body; i++)
    {
      char c = (char) (i % 256);
      line[strlen (head) + i] = c == '\n' ? 'x' : c;
    }

  g_assert_cmpint (kt_parser_line (parser, line, len, &minute), ==, KT_LINE_ERROR);
  g_assert_cmpint (minute, ==, kt_minute_from_civil (2017, 7, 30, 14, 9));

  g_assert_cmpuint (kt_parser_value (parser, line, len, reducer, &counts, NULL, NULL),
                    ==, 0);
  g_assert_cmpuint (counts.lines, ==, 1);
  g_assert_cmpuint (counts.errors, ==, 1);
  g_assert_cmpuint (counts.malformed, ==, 0);
  g_assert_cmpuint (kt_reducer_get (reducer, minute), ==, 1);
}

/* ---- kt_parser_value --------------------------------------------------- */

static void
test_value_null_and_empty (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(KtParser) parser = kt_parser_new (&error);
  g_autoptr(KtReducer) reducer = kt_reducer_new ();
  KtParseCounts counts = { 0, 0, 0 };
  const char *bad = NULL;
  gsize bad_len = 0;

  g_assert_no_error (error);
  g_assert_cmpuint (kt_parser_value (parser, NULL, 0, reducer, &counts, &bad, &bad_len),
                    ==, 0);
  g_assert_cmpuint (kt_parser_value (parser, "", 0, reducer, &counts, &bad, &bad_len),
                    ==, 0);
  /* A non-empty buffer with an explicit length of 0 is empty too. */
  g_assert_cmpuint (kt_parser_value (parser, "garbage", 0, reducer, &counts, &bad,
                                     &bad_len), ==, 0);
  g_assert_cmpuint (counts.lines, ==, 0);
  g_assert_cmpuint (counts.errors, ==, 0);
  g_assert_cmpuint (counts.malformed, ==, 0);
  g_assert_null (bad);
  g_assert_cmpuint (bad_len, ==, 0);
  g_assert_cmpuint (kt_reducer_size (reducer), ==, 0);
}

#define L1 "2017-07-30 14:09:08 ERROR one"
#define L2 "2017-07-30 14:10:00 ERROR two"
#define LI "2017-07-30 14:09:30 INFO three"

typedef struct
{
  const char *what;
  const char *value;
  gsize       len;  /* 0: strlen (value) */
  guint64     lines, errors, malformed;
} ValueCase;

static const ValueCase value_cases[] = {
  { "one line", L1, 0, 1, 1, 0 },
  { "two garbage lines", "a\nb", 0, 2, 0, 2 },
  { "two lines", L1 "\n" L2, 0, 2, 2, 0 },
  { "final newline adds no line", L1 "\n", 0, 1, 1, 0 },
  { "final newlines add no line", L1 "\n\n\n", 0, 1, 1, 0 },
  { "empty lines in the middle", L1 "\n\n\n" L2, 0, 2, 2, 0 },
  { "leading empty lines", "\n\n" L1, 0, 1, 1, 0 },
  { "only newlines", "\n\n\n", 0, 0, 0, 0 },
  { "crlf", L1 "\r\n" L2 "\r\n", 0, 2, 2, 0 },
  { "crlf, level ends the line", "2017-07-30 14:09:08 ERROR\r\n", 0, 1, 1, 0 },
  { "cr at the very end", "2017-07-30 14:09:08 ERROR\r", 0, 1, 1, 0 },
  { "message ends in cr", "2017-07-30 14:09:08 ERROR x\r", 0, 1, 1, 0 },
  { "only one cr is stripped", "2017-07-30 14:09:08 ERROR\r\r", 0, 1, 0, 1 },
  { "only one cr is stripped, crlf", "2017-07-30 14:09:08 ERROR\r\r\n", 0, 1, 0, 1 },
  { "message keeps inner cr", "2017-07-30 14:09:08 ERROR a\rb\r\n", 0, 1, 1, 0 },
  { "crlf empty lines", L1 "\r\n\r\n" L2, 0, 2, 2, 0 },
  { "mixed levels", L1 "\n" LI "\nbad\n" L2 "\n", 0, 4, 2, 1 },
  { "lowercase level", "2017-07-30 14:09:08 error x\n", 0, 1, 0, 0 },
  { "nul never ends a line", L1 "\0b\n" L2, sizeof (L1 "\0b\n" L2) - 1, 2, 2, 0 },
  { "nul-only line", "\0\n" L1, sizeof ("\0\n" L1) - 1, 2, 1, 1 },
};

static void
test_value_lines (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(KtParser) parser = kt_parser_new (&error);

  g_assert_no_error (error);
  for (gsize i = 0; i < G_N_ELEMENTS (value_cases); i++)
    {
      const ValueCase *c = &value_cases[i];
      g_autoptr(KtReducer) reducer = kt_reducer_new ();
      KtParseCounts counts = { 0, 0, 0 };
      gsize len = c->len != 0 ? c->len : strlen (c->value);
      guint64 bad;

      g_test_message ("case '%s'", c->what);
      bad = kt_parser_value (parser, c->value, len, reducer, &counts, NULL, NULL);
      g_assert_cmpuint (bad, ==, c->malformed);
      g_assert_cmpuint (counts.lines, ==, c->lines);
      g_assert_cmpuint (counts.errors, ==, c->errors);
      g_assert_cmpuint (counts.malformed, ==, c->malformed);
    }
}

/* The example of the spec: two ERROR lines in two minutes, a NUL inside. */
static void
test_value_nul_inside (void)
{
  static const char value[] = "2017-07-30 14:09:08 ERROR a\0b\n"
                              "2017-07-30 14:10:00 ERROR c";
  g_autoptr(GError) error = NULL;
  g_autoptr(KtParser) parser = kt_parser_new (&error);
  g_autoptr(KtReducer) reducer = kt_reducer_new ();
  KtParseCounts counts = { 0, 0, 0 };

  g_assert_no_error (error);
  g_assert_cmpuint (kt_parser_value (parser, value, sizeof value - 1, reducer, &counts,
                                     NULL, NULL), ==, 0);
  g_assert_cmpuint (counts.lines, ==, 2);
  g_assert_cmpuint (counts.errors, ==, 2);
  g_assert_cmpuint (counts.malformed, ==, 0);
  g_assert_cmpuint (kt_reducer_size (reducer), ==, 2);
  g_assert_cmpuint (kt_reducer_get (reducer, kt_minute_from_civil (2017, 7, 30, 14, 9)),
                    ==, 1);
  g_assert_cmpuint (kt_reducer_get (reducer, kt_minute_from_civil (2017, 7, 30, 14, 10)),
                    ==, 1);
}

/* 10,000 lines, 100 per minute over 100 minutes; of every 5 lines 3 are
 * ERROR, 1 INFO, 1 malformed. */
static void
test_value_many_lines (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(KtParser) parser = kt_parser_new (&error);
  g_autoptr(KtReducer) reducer = kt_reducer_new ();
  g_autoptr(GString) value = g_string_new (NULL);
  g_autoptr(GArray) sorted = NULL;
  KtParseCounts counts = { 0, 0, 0 };
  const gint64 base = kt_minute_from_civil (2017, 7, 30, 0, 0);

  g_assert_no_error (error);
  for (int i = 0; i < 10000; i++)
    {
      int minute = i / 100, sec = i % 60;

      switch (i % 5)
        {
        case 0: case 1: case 2:
          g_string_append_printf (value, "2017-07-30 %02d:%02d:%02d ERROR line %d\n",
                                  minute / 60, minute % 60, sec, i);
          break;
        case 3:
          g_string_append_printf (value, "2017-07-30 %02d:%02d:%02d INFO line %d\n",
                                  minute / 60, minute % 60, sec, i);
          break;
        default:
          g_string_append_printf (value, "2017-07-30 %02d:%02d:%02d  ERROR bad %d\n",
                                  minute / 60, minute % 60, sec, i);
          break;
        }
    }

  g_assert_cmpuint (kt_parser_value (parser, value->str, value->len, reducer, &counts,
                                     NULL, NULL), ==, 2000);
  g_assert_cmpuint (counts.lines, ==, 10000);
  g_assert_cmpuint (counts.errors, ==, 6000);
  g_assert_cmpuint (counts.malformed, ==, 2000);
  g_assert_cmpuint (kt_reducer_size (reducer), ==, 100);

  sorted = kt_reducer_sorted (reducer);
  g_assert_cmpuint (sorted->len, ==, 100);
  for (guint m = 0; m < 100; m++)
    {
      const KtMinuteCount *mc = &g_array_index (sorted, KtMinuteCount, m);
      g_assert_cmpint (mc->minute, ==, base + m);
      g_assert_cmpuint (mc->count, ==, 60);
    }
}

static void
test_value_first_bad (void)
{
  static const struct
  {
    const char *value;
    gsize       bad_offset;
    gsize       bad_len;
    guint64     malformed;
  } cases[] = {
    { "BAD1\n" L1 "\nBAD22", 0, 4, 2 },
    { L1 "\nBAD1\n" L2 "\nBAD22\n", sizeof (L1), 4, 2 },
    { L1 "\r\nBAD1\r\n" L2 "\r\nBAD22\r\n", sizeof (L1) + 1, 4, 2 },
    { L1 "\n\n2017-07-30 14:09:08  ERROR x", sizeof (L1) + 1, 28, 1 },
    { L1 "\n" L2 "\nx", 2 * sizeof (L1), 1, 1 },
  };
  g_autoptr(GError) error = NULL;
  g_autoptr(KtParser) parser = kt_parser_new (&error);

  g_assert_no_error (error);
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(KtReducer) reducer = kt_reducer_new ();
      KtParseCounts counts = { 0, 0, 0 };
      const char *value = cases[i].value;
      const char *bad = NULL;
      gsize bad_len = 0;

      g_test_message ("case %" G_GSIZE_FORMAT, i);
      g_assert_cmpuint (kt_parser_value (parser, value, strlen (value), reducer, &counts,
                                         &bad, &bad_len), ==, cases[i].malformed);
      g_assert_true (bad == value + cases[i].bad_offset);
      g_assert_cmpuint (bad_len, ==, cases[i].bad_len);
      g_assert_cmpuint (counts.malformed, ==, cases[i].malformed);

      /* NULL first_bad is allowed. */
      g_assert_cmpuint (kt_parser_value (parser, value, strlen (value), reducer, &counts,
                                         NULL, NULL), ==, cases[i].malformed);
    }
}

static void
test_value_no_bad_leaves_first_bad (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(KtParser) parser = kt_parser_new (&error);
  g_autoptr(KtReducer) reducer = kt_reducer_new ();
  KtParseCounts counts = { 0, 0, 0 };
  const char *bad = NULL;
  gsize bad_len = 0;

  g_assert_no_error (error);
  g_assert_cmpuint (kt_parser_value (parser, L1 "\n" LI, strlen (L1 "\n" LI), reducer,
                                     &counts, &bad, &bad_len), ==, 0);
  g_assert_null (bad);
  g_assert_cmpuint (bad_len, ==, 0);
}

/* Counts add up over calls; the return value is this call's malformed. */
static void
test_value_accumulates (void)
{
  static const char a[] = L1 "\nbad\n" LI "\n";
  static const char b[] = L1 "\n" L1 "\n" L2 "\nbad\nbad\n";
  g_autoptr(GError) error = NULL;
  g_autoptr(KtParser) parser = kt_parser_new (&error);
  g_autoptr(KtReducer) reducer = kt_reducer_new ();
  KtParseCounts counts = { 0, 0, 0 };

  g_assert_no_error (error);
  g_assert_cmpuint (kt_parser_value (parser, a, strlen (a), reducer, &counts, NULL, NULL),
                    ==, 1);
  g_assert_cmpuint (counts.lines, ==, 3);
  g_assert_cmpuint (counts.errors, ==, 1);
  g_assert_cmpuint (counts.malformed, ==, 1);

  g_assert_cmpuint (kt_parser_value (parser, b, strlen (b), reducer, &counts, NULL, NULL),
                    ==, 2);
  g_assert_cmpuint (counts.lines, ==, 8);
  g_assert_cmpuint (counts.errors, ==, 4);
  g_assert_cmpuint (counts.malformed, ==, 3);

  g_assert_cmpuint (kt_reducer_get (reducer, kt_minute_from_civil (2017, 7, 30, 14, 9)),
                    ==, 3);
  g_assert_cmpuint (kt_reducer_get (reducer, kt_minute_from_civil (2017, 7, 30, 14, 10)),
                    ==, 1);
  g_assert_cmpuint (kt_reducer_size (reducer), ==, 2);
}

/* Only ERROR lines reach the reducer, each in its own minute. */
static void
test_value_reducer_per_minute (void)
{
  static const char value[] =
    "2017-07-30 14:09:00 ERROR a\n"
    "2017-07-30 14:09:59 ERROR b\n"
    "2017-07-30 14:10:00 ERROR c\n"
    "2017-07-30 14:09:30 ERROR late\n"
    "2017-07-30 14:11:00 INFO not counted\n"
    "2017-07-30 14:12:00 error not counted\n"
    "1969-12-31 23:59:59 ERROR before the epoch\n"
    "2016-02-29 00:00:00 ERROR leap\n"
    "2017-07-30 14:10:01 ERROR d\n";
  static const struct
  {
    int     y, mo, d, h, mi;
    guint64 count;
  } want[] = {
    { 1969, 12, 31, 23, 59, 1 },
    { 2016, 2, 29, 0, 0, 1 },
    { 2017, 7, 30, 14, 9, 3 },
    { 2017, 7, 30, 14, 10, 2 },
  };
  g_autoptr(GError) error = NULL;
  g_autoptr(KtParser) parser = kt_parser_new (&error);
  g_autoptr(KtReducer) reducer = kt_reducer_new ();
  g_autoptr(GArray) sorted = NULL;
  KtParseCounts counts = { 0, 0, 0 };

  g_assert_no_error (error);
  g_assert_cmpuint (kt_parser_value (parser, value, strlen (value), reducer, &counts,
                                     NULL, NULL), ==, 0);
  g_assert_cmpuint (counts.lines, ==, 9);
  g_assert_cmpuint (counts.errors, ==, 7);

  sorted = kt_reducer_sorted (reducer);
  g_assert_cmpuint (sorted->len, ==, G_N_ELEMENTS (want));
  for (guint i = 0; i < sorted->len; i++)
    {
      const KtMinuteCount *mc = &g_array_index (sorted, KtMinuteCount, i);
      g_assert_cmpint (mc->minute, ==, kt_minute_from_civil (want[i].y, want[i].mo,
                                                             want[i].d, want[i].h,
                                                             want[i].mi));
      g_assert_cmpuint (mc->count, ==, want[i].count);
    }
  g_assert_cmpuint (kt_reducer_get (reducer, kt_minute_from_civil (2017, 7, 30, 14, 11)),
                    ==, 0);
  g_assert_cmpuint (kt_reducer_get (reducer, kt_minute_from_civil (2017, 7, 30, 14, 12)),
                    ==, 0);
}

/* ---- minutes ----------------------------------------------------------- */

/* Values computed independently (Python's datetime). */
static void
test_minute_known (void)
{
  static const struct
  {
    int         y, mo, d, h, mi;
    gint64      minute;
    const char *text;
  } cases[] = {
    { 1970, 1, 1, 0, 0, 0, "1970-01-01 00:00:00" },
    { 1970, 1, 1, 0, 1, 1, "1970-01-01 00:01:00" },
    { 1969, 12, 31, 23, 59, -1, "1969-12-31 23:59:00" },
    { 1969, 12, 31, 0, 0, -1440, "1969-12-31 00:00:00" },
    { 2017, 7, 30, 14, 9, 25023729, "2017-07-30 14:09:00" },
    { 2000, 2, 29, 12, 34, 15863794, "2000-02-29 12:34:00" },
    { 1900, 3, 1, 0, 0, -36731520, "1900-03-01 00:00:00" },
    { 1000, 1, 1, 0, 0, -510170400, "1000-01-01 00:00:00" },
    { 9999, 12, 31, 23, 59, G_GINT64_CONSTANT (4223371679), "9999-12-31 23:59:00" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      char buf[20];

      g_assert_cmpint (kt_minute_from_civil (cases[i].y, cases[i].mo, cases[i].d,
                                             cases[i].h, cases[i].mi),
                       ==, cases[i].minute);
      memset (buf, '#', sizeof buf);
      kt_minute_format (cases[i].minute, buf);
      g_assert_cmpstr (buf, ==, cases[i].text);
    }
}

static gboolean
leap (int y)
{
  return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int
month_days (int y, int m)
{
  static const int days[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
  return m == 2 && leap (y) ? 29 : days[m - 1];
}

/* Every day from 1000-01-01 to 9999-12-31: consecutive days are 1440
 * minutes apart, and (with a stride) format inverts from_civil and the
 * parser agrees with both. */
static void
test_minute_round_trip (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(KtParser) parser = kt_parser_new (&error);
  gint64 prev = kt_minute_from_civil (1000, 1, 1, 0, 0) - 1440;
  guint64 n = 0, checked = 0, leap_days = 0;

  g_assert_no_error (error);
  for (int y = 1000; y <= 9999; y++)
    for (int m = 1; m <= 12; m++)
      for (int d = 1; d <= month_days (y, m); d++, n++)
        {
          gint64 midnight = kt_minute_from_civil (y, m, d, 0, 0);

          g_assert_cmpint (midnight - prev, ==, 1440);
          prev = midnight;

          if (m == 2 && d == 29)
            leap_days++;
          if (n % 17 == 0 || (m == 2 && d == 29) || (m == 12 && d == 31)
              || (m == 1 && d == 1))
            {
              int h = (int) (n % 24), mi = (int) (n % 60);
              gint64 minute = kt_minute_from_civil (y, m, d, h, mi);
              g_autofree char *want = g_strdup_printf ("%04d-%02d-%02d %02d:%02d:00",
                                                       y, m, d, h, mi);
              g_autofree char *line = NULL;
              char buf[20];
              gint64 parsed = 0;

              g_assert_cmpint (minute, ==, midnight + h * 60 + mi);
              kt_minute_format (minute, buf);
              g_assert_cmpstr (buf, ==, want);

              line = g_strdup_printf ("%s ERROR x", buf);
              g_assert_cmpint (kt_parser_line (parser, line, strlen (line), &parsed),
                               ==, KT_LINE_ERROR);
              g_assert_cmpint (parsed, ==, minute);
              checked++;
            }
        }
  /* 9000 years of the proleptic Gregorian calendar. */
  g_assert_cmpuint (n, ==, 3287182);
  g_assert_cmpuint (leap_days, ==, 2182);
  g_assert_cmpuint (checked, >, 190000);
  g_assert_cmpint (prev, ==, kt_minute_from_civil (9999, 12, 31, 0, 0));
}

/* Every minute of the day around the epoch formats back to itself. */
static void
test_minute_around_epoch (void)
{
  for (gint64 minute = -3 * 1440; minute < 3 * 1440; minute++)
    {
      char buf[20];
      int y, mo, d, h, mi;

      kt_minute_format (minute, buf);
      g_assert_cmpint (sscanf (buf, "%4d-%2d-%2d %2d:%2d:00", &y, &mo, &d, &h, &mi),
                       ==, 5);
      g_assert_cmpint (kt_minute_from_civil (y, mo, d, h, mi), ==, minute);
      g_assert_cmpint (strlen (buf), ==, 19);
    }
}

/* A 16 MB value: one ERROR line whose message is 16 MB of bytes with NULs
 * and newline-free garbage, then an INFO line. */
static void
test_value_16mb (void)
{
  g_autoptr(KtParser) parser = kt_parser_new (NULL);
  g_autoptr(KtReducer) reducer = kt_reducer_new ();
  const char *head = "2017-07-30 14:03:00 ERROR ";
  const char *tail = "\n2017-07-30 14:04:00 INFO done";
  gsize body = 16 * 1024 * 1024, n = strlen (head) + body + strlen (tail);
  g_autofree char *value = g_malloc (n);
  KtParseCounts counts = { 0 };

  memcpy (value, head, strlen (head));
  for (gsize i = 0; i < body; i++)
    value[strlen (head) + i] = (char) (i % 7 == 0 ? '\0' : 'a' + i % 26);
  memcpy (value + strlen (head) + body, tail, strlen (tail));

  g_assert_cmpuint (kt_parser_value (parser, value, n, reducer, &counts, NULL, NULL), ==, 0);
  g_assert_cmpuint (counts.lines, ==, 2);
  g_assert_cmpuint (counts.errors, ==, 1);
  g_assert_cmpuint (kt_reducer_get (reducer, kt_minute_from_civil (2017, 7, 30, 14, 3)), ==, 1);
}

/* The ERROR shortcut is an exact stand-in for pcre2: over generated lines
 * of every shape (and every prefix of them), both paths agree. */
static void
test_line_shortcut_agrees (void)
{
  g_autoptr(KtParser) fast = kt_parser_new (NULL);
  g_autoptr(KtParser) slow = kt_parser_new (NULL);
  static const char *const tails[] = {
    "ERROR", "ERROR ", "ERROR x", "ERRORS", "ERROR\t", "ERROR1", "ERRO", "error",
    "INFO x", "WARN", " ERROR", "ERROR\r", "ERROR \xff\x00z", "E", "",
  };
  static const char *const heads[] = {
    "2017-07-30 14:09:08 ", "2016-02-29 23:59:59 ", "2017-02-29 10:00:00 ",
    "2017-07-30 24:00:00 ", "0999-01-01 00:00:00 ", "2017-07-30 14:09:08", "2017-07-3a 14:09:08 ",
    "2016-12-31 23:59:60 ", "2016-12-31 23:59:61 ", "9999-12-31 23:59:59 ",
  };
  guint checked = 0;

  kt_parser_set_shortcut (slow, FALSE);
  for (gsize h = 0; h < G_N_ELEMENTS (heads); h++)
    for (gsize t = 0; t < G_N_ELEMENTS (tails); t++)
      {
        g_autofree char *line = g_strconcat (heads[h], tails[t], NULL);
        gsize full = strlen (line) + (strstr (tails[t], "\xff") ? 3 : 0);

        for (gsize len = 0; len <= full; len++)
          {
            gint64 m1 = -1, m2 = -1;
            KtLineKind a = kt_parser_line (fast, line, MIN (len, strlen (line)), &m1);
            KtLineKind b = kt_parser_line (slow, line, MIN (len, strlen (line)), &m2);

            g_assert_cmpint (a, ==, b);
            if (a == KT_LINE_ERROR)
              g_assert_cmpint (m1, ==, m2);
            checked++;
          }
      }
  g_assert_cmpuint (checked, >, 1000);
}

/* The default options take the fixed-position path with the ERROR
 * shortcut, not the general pattern: the options' own defaults (--levels
 * ERROR, --bucket 1m), the default format spelled out, and a KtParseFormat
 * of all NULL. Anything else (another level set, a bucket, --by) is a
 * format of its own. */
static void
test_format_default_fast (void)
{
  KtCountOptions options = { 0 };
  static const char *const error_only[] = { "ERROR", NULL };
  static const char *const two[] = { "ERROR", "WARN", NULL };
  KtParseFormat all_null = { 0 };
  KtParseFormat spelled = { .time_format = "%Y-%m-%d %H:%M:%S", .levels = error_only,
                            .bucket = 1 };
  KtParseFormat iso_spelled = { .time_format = "%F %T", .levels = error_only };
  KtParseFormat levels = { .levels = two };
  KtParseFormat hourly = { .levels = error_only, .bucket = 60 };
  KtParseFormat syslog = { .time_format = "syslog" };

  for (const KtOption *row = kt_count_option_rows; row->name != NULL; row++)
    if (row->fallback != NULL)
      g_assert_true (kt_option_set_text (row, row->fallback, &options, NULL));
  {
    g_autoptr(GError) error = NULL;
    g_autoptr(KtParser) parser = kt_counts_parser (&options, &error);

    g_assert_no_error (error);
    g_assert_true (kt_parser_fast_path (parser));
  }
  kt_option_table_clear (kt_count_option_rows, &options);

  {
    const KtParseFormat *fast[] = { &all_null, &spelled, &iso_spelled };
    const KtParseFormat *slow[] = { &levels, &hourly, &syslog };

    for (gsize i = 0; i < G_N_ELEMENTS (fast); i++)
      {
        g_autoptr(KtParser) parser = kt_parser_new_format (fast[i], NULL);
        gint64 minute = 0;

        g_assert_nonnull (parser);
        g_assert_true (kt_parser_fast_path (parser));
        g_assert_cmpint (kt_parser_line (parser, "2017-07-30 14:09:08 ERROR x", 27, &minute),
                         ==, KT_LINE_ERROR);
        g_assert_cmpint (minute, ==, kt_minute_from_civil (2017, 7, 30, 14, 9));
      }
    for (gsize i = 0; i < G_N_ELEMENTS (slow); i++)
      {
        g_autoptr(KtParser) parser = kt_parser_new_format (slow[i], NULL);

        g_assert_nonnull (parser);
        g_assert_false (kt_parser_fast_path (parser));
      }
  }
}

/* Other formats: ISO 8601 offsets to UTC, strptime-style times, levels
 * sets, buckets floored (also before 1970), bad options refused. */
static void
test_format_iso8601 (void)
{
  KtParseFormat format = { .time_format = "iso8601" };
  g_autoptr(GError) error = NULL;
  g_autoptr(KtParser) parser = kt_parser_new_format (&format, &error);
  static const struct { const char *line; KtLineKind kind; int y, mo, d, h, mi; } cases[] = {
    { "2017-07-30T14:09:08Z ERROR x", KT_LINE_ERROR, 2017, 7, 30, 14, 9 },
    { "2017-07-30T14:09:08.5+02:00 ERROR", KT_LINE_ERROR, 2017, 7, 30, 12, 9 },
    { "2017-07-30T00:10:00+00:30 ERROR", KT_LINE_ERROR, 2017, 7, 29, 23, 40 },
    { "2016-12-31T23:59:00-00:01 ERROR", KT_LINE_ERROR, 2017, 1, 1, 0, 0 },
    { "2017-07-30T14:09:08 ERROR", KT_LINE_ERROR, 2017, 7, 30, 14, 9 },
    { "2017-07-30T14:09:08Z INFO", KT_LINE_OTHER, 0, 0, 0, 0, 0 },
    { "2017-07-30T14:09:08+24:00 ERROR", KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
    { "2017-07-30T14:09:08. ERROR", KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
    { "2017-07-30 14:09:08 ERROR", KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
    { "2017-02-29T14:09:08Z ERROR", KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
  };

  g_assert_no_error (error);
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      gint64 minute = -1;
      g_test_message ("%s", cases[i].line);
      g_assert_cmpint (kt_parser_line (parser, cases[i].line, strlen (cases[i].line), &minute),
                       ==, cases[i].kind);
      if (cases[i].kind == KT_LINE_ERROR)
        g_assert_cmpint (minute, ==, kt_minute_from_civil (cases[i].y, cases[i].mo, cases[i].d,
                                                           cases[i].h, cases[i].mi));
    }
}

static void
test_format_custom (void)
{
  static const char *const levels[] = { "ERROR", "FATAL", NULL };
  KtParseFormat format = { "^<(?<level>\\w+)> (?<time>[^|]+)\\|", "%d.%m.%Y %T", levels, 60, NULL, NULL,
                           NULL, NULL, KT_INPUT_TEXT };
  g_autoptr(GError) error = NULL;
  g_autoptr(KtParser) parser = kt_parser_new_format (&format, &error);
  gint64 minute;

  g_assert_no_error (error);
  g_assert_cmpint (kt_parser_line (parser, "<FATAL> 30.07.2017 14:59:59| x", 31, &minute), ==,
                   KT_LINE_ERROR);
  g_assert_cmpint (minute, ==, kt_minute_from_civil (2017, 7, 30, 14, 0));
  g_assert_cmpint (kt_parser_line (parser, "<WARN> 30.07.2017 14:59:59| x", 30, &minute), ==,
                   KT_LINE_OTHER);
  g_assert_cmpint (kt_parser_line (parser, "<ERROR> 30.07.2017 14:59| x", 26, &minute), ==,
                   KT_LINE_MALFORMED);
  /* An hour bucket before 1970 floors, it does not round toward zero. */
  g_assert_cmpint (kt_parser_line (parser, "<ERROR> 31.12.1969 23:30:00|", 28, &minute), ==,
                   KT_LINE_ERROR);
  g_assert_cmpint (minute, ==, kt_minute_from_civil (1969, 12, 31, 23, 0));
}

/* ---- what DATETIME can hold ------------------------------------------- */

/* The bounds are the minutes of 1000-01-01 00:00 and 9999-12-31 23:59. */
static void
test_minute_datetime_bounds (void)
{
  char buf[20];

  g_assert_cmpint (KT_MINUTE_MIN, ==, kt_minute_from_civil (1000, 1, 1, 0, 0));
  g_assert_cmpint (KT_MINUTE_MAX, ==, kt_minute_from_civil (9999, 12, 31, 23, 59));
  kt_minute_format (KT_MINUTE_MIN, buf);
  g_assert_cmpstr (buf, ==, "1000-01-01 00:00:00");
  kt_minute_format (KT_MINUTE_MAX, buf);
  g_assert_cmpstr (buf, ==, "9999-12-31 23:59:00");
}

/* A fixed clock for kt_parser_set_clock(): microseconds in *data. */
static gint64
fixed_clock (gpointer data)
{
  return *(const gint64 *) data;
}

static gint64
usec_at (int y, int mo, int d, int h, int mi)
{
  return kt_minute_from_civil (y, mo, d, h, mi) * 60 * G_USEC_PER_SEC;
}

#define CUSTOM_PATTERN "^(?<time>\\S+ \\S+) (?<level>[A-Z]+)(?: |\\z)"

/* The poison pill (one line whose bucket MySQL refuses stopped its job
 * for ever) and its family: a line whose bucket, after the time zone
 * conversion and the truncation, is outside 1000-01-01 00:00 ..
 * 9999-12-31 23:59 is malformed, in every format, whatever its level; the
 * last bucket inside either bound is counted. */
static void
test_format_datetime_range (void)
{
  static const struct
  {
    const char *time_format;  /* NULL: the default format */
    const char *pattern;
    int         bucket;
    int         clock[5];     /* syslog: the clock's civil minute */
    const char *line;
    KtLineKind  kind;
    int         y, mo, d, h, mi;
  } cases[] = {
    /* iso8601: the offset moves the minute past either end. */
    { "iso8601", NULL, 1, { 0 }, "9999-12-31T23:59:59-01:00 ERROR poison", KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
    { "iso8601", NULL, 1, { 0 }, "9999-12-31T23:59:59-01:00 INFO poison", KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
    { "iso8601", NULL, 1, { 0 }, "9999-12-31T23:30:00-00:30 ERROR", KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
    { "iso8601", NULL, 1, { 0 }, "9999-12-31T23:29:00-00:30 ERROR", KT_LINE_ERROR, 9999, 12, 31, 23, 59 },
    { "iso8601", NULL, 1, { 0 }, "9999-12-31T23:59:59Z ERROR", KT_LINE_ERROR, 9999, 12, 31, 23, 59 },
    { "iso8601", NULL, 1, { 0 }, "9999-12-31T23:59:60.999Z ERROR", KT_LINE_ERROR, 9999, 12, 31, 23, 59 },
    { "iso8601", NULL, 1, { 0 }, "9999-12-31T23:59:59+14:00 ERROR", KT_LINE_ERROR, 9999, 12, 31, 9, 59 },
    { "iso8601", NULL, 1, { 0 }, "1000-01-01T00:00:00+00:01 ERROR", KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
    { "iso8601", NULL, 1, { 0 }, "1000-01-01T00:00:00Z ERROR", KT_LINE_ERROR, 1000, 1, 1, 0, 0 },
    { "iso8601", NULL, 1, { 0 }, "1000-01-01T00:00:59-00:00 ERROR", KT_LINE_ERROR, 1000, 1, 1, 0, 0 },
    /* The bucket decides, not the local year. */
    { "iso8601", NULL, 1, { 0 }, "0999-12-31T23:30:00-01:00 ERROR", KT_LINE_ERROR, 1000, 1, 1, 0, 30 },
    { "iso8601", NULL, 1, { 0 }, "0000-01-01T00:00:00Z ERROR", KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
    { "iso8601", NULL, 60, { 0 }, "1000-01-01T00:59:00+00:30 ERROR", KT_LINE_ERROR, 1000, 1, 1, 0, 0 },
    { "iso8601", NULL, 60, { 0 }, "1000-01-01T00:29:00+00:30 ERROR", KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
    { "iso8601", NULL, 5, { 0 }, "9999-12-31T23:59:59Z ERROR", KT_LINE_ERROR, 9999, 12, 31, 23, 55 },
    { "iso8601", NULL, 60, { 0 }, "9999-12-31T23:59:59-00:59 ERROR", KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
    /* strptime-style: no conversion, the year's digits decide. */
    { NULL, NULL, 5, { 0 }, "0999-12-31 23:59:59 ERROR", KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
    { NULL, NULL, 5, { 0 }, "1000-01-01 00:04:59 ERROR", KT_LINE_ERROR, 1000, 1, 1, 0, 0 },
    { NULL, NULL, 60, { 0 }, "9999-12-31 23:59:60 ERROR", KT_LINE_ERROR, 9999, 12, 31, 23, 0 },
    { "%d.%m.%Y %T", CUSTOM_PATTERN, 1, { 0 }, "31.12.0999 23:59:59 ERROR", KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
    { "%d.%m.%Y %T", CUSTOM_PATTERN, 1, { 0 }, "00.01.1000 00:00:00 ERROR", KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
    { "%d.%m.%Y %T", CUSTOM_PATTERN, 1, { 0 }, "01.01.1000 00:00:00 ERROR", KT_LINE_ERROR, 1000, 1, 1, 0, 0 },
    { "%d.%m.%Y %T", CUSTOM_PATTERN, 1, { 0 }, "31.12.9999 23:59:60 ERROR", KT_LINE_ERROR, 9999, 12, 31, 23, 59 },
    /* syslog: the year comes from the clock, and can be 10000 or 999. */
    { "syslog", NULL, 1, { 9999, 12, 31, 12, 0 }, "Dec 31 23:59:59 ERROR", KT_LINE_ERROR, 9999, 12, 31, 23, 59 },
    { "syslog", NULL, 1, { 9999, 12, 31, 12, 0 }, "Jan  1 00:00:00 ERROR", KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
    { "syslog", NULL, 1, { 1000, 1, 1, 6, 0 }, "Jan  1 00:00:00 ERROR", KT_LINE_ERROR, 1000, 1, 1, 0, 0 },
    { "syslog", NULL, 1, { 1000, 1, 1, 6, 0 }, "Dec 31 23:59:59 ERROR", KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      KtParseFormat format = { cases[i].pattern, cases[i].time_format, NULL, cases[i].bucket, NULL,
                               NULL, NULL, NULL, KT_INPUT_TEXT };
      g_autoptr(GError) error = NULL;
      g_autoptr(KtParser) parser = NULL;
      gint64 now = usec_at (cases[i].clock[0], cases[i].clock[1], cases[i].clock[2],
                            cases[i].clock[3], cases[i].clock[4]);
      gint64 minute = G_MININT64;

      g_test_message ("%s (%s, bucket %d)", cases[i].line,
                      cases[i].time_format ? cases[i].time_format : "default", cases[i].bucket);
      parser = kt_parser_new_format (&format, &error);
      g_assert_no_error (error);
      if (cases[i].clock[0] != 0)
        kt_parser_set_clock (parser, fixed_clock, &now);
      g_assert_cmpint (kt_parser_line (parser, cases[i].line, strlen (cases[i].line), &minute),
                       ==, cases[i].kind);
      if (cases[i].kind == KT_LINE_ERROR)
        g_assert_cmpint (minute, ==, kt_minute_from_civil (cases[i].y, cases[i].mo, cases[i].d,
                                                           cases[i].h, cases[i].mi));
    }
}

/* The poison pill between good lines of one value: the good ones count,
 * the bad one is malformed and is the sample. */
static void
test_value_poison_pill (void)
{
  KtParseFormat format = { .time_format = "iso8601" };
  g_autoptr(KtParser) parser = kt_parser_new_format (&format, NULL);
  g_autoptr(KtReducer) reducer = kt_reducer_new ();
  const char *value = "2017-07-30T14:09:08Z ERROR a\n"
                      "9999-12-31T23:59:59-01:00 ERROR poison\n"
                      "2017-07-30T14:09:30+00:00 ERROR b\n";
  KtParseCounts counts = { 0 };
  const char *bad = NULL;
  gsize bad_len = 0;

  g_assert_cmpuint (kt_parser_value (parser, value, strlen (value), reducer, &counts,
                                     &bad, &bad_len), ==, 1);
  g_assert_cmpuint (counts.lines, ==, 3);
  g_assert_cmpuint (counts.errors, ==, 2);
  g_assert_cmpuint (kt_reducer_get (reducer, kt_minute_from_civil (2017, 7, 30, 14, 9)), ==, 2);
  g_assert_cmpint (bad_len, ==, strlen ("9999-12-31T23:59:59-01:00 ERROR poison"));
  g_assert_true (strncmp (bad, "9999-12-31T23:59:59-01:00", 25) == 0);
}

/* Leap seconds in every format: second 60 counts in its minute, 61 does
 * not exist. */
static void
test_format_leap_second (void)
{
  static const struct
  {
    const char *time_format;
    const char *line;
    KtLineKind  kind;
  } cases[] = {
    { "iso8601", "2016-12-31T23:59:60Z ERROR", KT_LINE_ERROR },
    { "iso8601", "2017-01-01T00:59:60+01:00 ERROR", KT_LINE_ERROR },
    { "iso8601", "2016-12-31T23:59:61Z ERROR", KT_LINE_MALFORMED },
    { "%Y-%m-%d %H:%M:%S", "2016-12-31 23:59:60 ERROR", KT_LINE_ERROR },
    { "%Y-%m-%d %H:%M:%S", "2016-12-31 23:59:61 ERROR", KT_LINE_MALFORMED },
    { "syslog", "Dec 31 23:59:60 ERROR", KT_LINE_ERROR },
    { "syslog", "Dec 31 23:59:61 ERROR", KT_LINE_MALFORMED },
  };
  gint64 now = usec_at (2017, 1, 1, 0, 0) + 30 * G_USEC_PER_SEC;

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      KtParseFormat format = { NULL, cases[i].time_format, NULL, 1, NULL, NULL, NULL, NULL,
                               KT_INPUT_TEXT };
      g_autoptr(KtParser) parser = kt_parser_new_format (&format, NULL);
      gint64 minute = 0;

      g_test_message ("%s: %s", cases[i].time_format, cases[i].line);
      kt_parser_set_clock (parser, fixed_clock, &now);
      g_assert_cmpint (kt_parser_line (parser, cases[i].line, strlen (cases[i].line), &minute),
                       ==, cases[i].kind);
      if (cases[i].kind == KT_LINE_ERROR)
        g_assert_cmpint (minute, ==, kt_minute_from_civil (2016, 12, 31, 23, 59));
    }
}

/* ---- the syslog year ---------------------------------------------------- */

/* Issue 11 item 10: the year is decided per line against the clock. */
static void
test_format_syslog_year (void)
{
  static const struct
  {
    int         clock[5];   /* UTC, civil */
    const char *line;
    KtLineKind  kind;
    int         y, mo, d, h, mi;
  } cases[] = {
    /* Across New Year: the old year's last lines, the new year's first. */
    { { 2025, 1, 1, 0, 5 }, "Dec 31 23:59:59 ERROR", KT_LINE_ERROR, 2024, 12, 31, 23, 59 },
    { { 2025, 1, 1, 0, 5 }, "Dec 31 00:00:00 ERROR", KT_LINE_ERROR, 2024, 12, 31, 0, 0 },
    { { 2025, 1, 1, 0, 5 }, "Jan  1 00:04:00 ERROR", KT_LINE_ERROR, 2025, 1, 1, 0, 4 },
    { { 2025, 1, 2, 9, 0 }, "Dec 31 23:00:00 ERROR", KT_LINE_ERROR, 2024, 12, 31, 23, 0 },
    /* A producer east of UTC is in the new year before the clock. */
    { { 2024, 12, 31, 23, 50 }, "Jan  1 08:49:00 ERROR", KT_LINE_ERROR, 2025, 1, 1, 8, 49 },
    { { 2024, 12, 31, 23, 50 }, "Dec 31 23:49:00 ERROR", KT_LINE_ERROR, 2024, 12, 31, 23, 49 },
    /* One day of slack, then it is last year's line. */
    { { 2025, 6, 15, 12, 0 }, "Jun 16 12:00:00 ERROR", KT_LINE_ERROR, 2025, 6, 16, 12, 0 },
    { { 2025, 6, 15, 12, 0 }, "Jun 16 12:01:00 ERROR", KT_LINE_ERROR, 2024, 6, 16, 12, 1 },
    { { 2024, 12, 30, 12, 0 }, "Jan  1 00:00:00 ERROR", KT_LINE_ERROR, 2024, 1, 1, 0, 0 },
    /* Feb 29 of a leap year, read in the next (non-leap) year's January
     * and March, and around the day itself. */
    { { 2025, 1, 15, 10, 0 }, "Feb 29 12:00:00 ERROR", KT_LINE_ERROR, 2024, 2, 29, 12, 0 },
    { { 2025, 3, 1, 0, 0 }, "Feb 29 12:00:00 ERROR", KT_LINE_ERROR, 2024, 2, 29, 12, 0 },
    { { 2025, 3, 15, 0, 0 }, "Feb 28 12:00:00 ERROR", KT_LINE_ERROR, 2025, 2, 28, 12, 0 },
    { { 2024, 2, 28, 13, 0 }, "Feb 29 12:00:00 ERROR", KT_LINE_ERROR, 2024, 2, 29, 12, 0 },
    { { 2024, 3, 1, 0, 0 }, "Feb 29 23:59:59 ERROR", KT_LINE_ERROR, 2024, 2, 29, 23, 59 },
    { { 2028, 12, 31, 20, 0 }, "Feb 29 12:00:00 ERROR", KT_LINE_ERROR, 2028, 2, 29, 12, 0 },
    /* No year of the three has it in the past: malformed. */
    { { 2024, 1, 15, 10, 0 }, "Feb 29 12:00:00 ERROR", KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
    { { 2025, 1, 15, 10, 0 }, "Feb 30 12:00:00 ERROR", KT_LINE_MALFORMED, 0, 0, 0, 0, 0 },
    { { 2025, 1, 15, 10, 0 }, "Feb 29 12:00:00 INFO", KT_LINE_OTHER, 0, 0, 0, 0, 0 },
  };

  /* The preset, and the same shape as a format of its own: a format
   * without a year takes the preset's rule (before, the year 1970). */
  static const char *const formats[] = { "syslog", "%b %e %H:%M:%S" };

  for (gsize f = 0; f < G_N_ELEMENTS (formats); f++)
    for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
      {
        KtParseFormat format = { .time_format = formats[f] };
        g_autoptr(GError) error = NULL;
        g_autoptr(KtParser) parser = kt_parser_new_format (&format, &error);
        gint64 now = usec_at (cases[i].clock[0], cases[i].clock[1], cases[i].clock[2],
                              cases[i].clock[3], cases[i].clock[4]);
        gint64 minute = 0;

        g_test_message ("%s, %04d-%02d-%02d %02d:%02d: %s", formats[f], cases[i].clock[0],
                        cases[i].clock[1], cases[i].clock[2], cases[i].clock[3],
                        cases[i].clock[4], cases[i].line);
        g_assert_no_error (error);
        kt_parser_set_clock (parser, fixed_clock, &now);
        g_assert_cmpint (kt_parser_line (parser, cases[i].line, strlen (cases[i].line),
                                         &minute), ==, cases[i].kind);
        if (cases[i].kind == KT_LINE_ERROR)
          g_assert_cmpint (minute, ==, kt_minute_from_civil (cases[i].y, cases[i].mo, cases[i].d,
                                                             cases[i].h, cases[i].mi));
      }
}

/* Any format without a year is dated as syslog lines are: "%d.%m %H:%M"
 * read on 2025-01-02 puts "31.12 23:30" in 2024. */
static void
test_format_no_year (void)
{
  KtParseFormat format = { .time_format = "%d.%m %H:%M" };
  g_autoptr(GError) error = NULL;
  g_autoptr(KtParser) parser = kt_parser_new_format (&format, &error);
  gint64 now = usec_at (2025, 1, 2, 9, 0), minute = 0;

  g_assert_no_error (error);
  kt_parser_set_clock (parser, fixed_clock, &now);
  g_assert_cmpint (kt_parser_line (parser, "31.12 23:30 ERROR", 17, &minute), ==, KT_LINE_ERROR);
  g_assert_cmpint (minute, ==, kt_minute_from_civil (2024, 12, 31, 23, 30));
  g_assert_cmpint (kt_parser_line (parser, "02.01 08:59 ERROR", 17, &minute), ==, KT_LINE_ERROR);
  g_assert_cmpint (minute, ==, kt_minute_from_civil (2025, 1, 2, 8, 59));
  g_assert_cmpint (kt_parser_line (parser, "30.02 08:59 ERROR", 17, &minute), ==,
                   KT_LINE_MALFORMED);
}

/* A time format that cannot place a line in time is refused at start,
 * naming what it lacks: before, "%H:%M:%S" counted every line into
 * 1970-01-01 and "ISO8601" (a preset in capitals, no conversion) made
 * every line malformed. */
static void
test_format_cannot_place (void)
{
  static const struct
  {
    const char *time_format, *says;
  } cases[] = {
    { "ISO8601", "'ISO8601' is no format (it has no conversion): the preset is spelled iso8601" },
    { "Syslog", "the preset is spelled syslog" },
    { "%%", "'%%' has no conversion, so it reads no time" },
    { "today", "'today' has no conversion" },
    { "", "'' has no conversion" },
    { "%H:%M:%S", "cannot place a line in time: it gives no month (%m or %b), no day (%d or %e)" },
    { "%T", "it gives no month (%m or %b), no day (%d or %e) (" },
    { "%Y %H:%M", "it gives no month (%m or %b), no day (%d or %e) (" },
    { "%b %H:%M", "it gives no day (%d or %e) (" },
    { "%F", "it gives no hour (%H), no minute (%M) (" },
    { "%F %H", "it gives no minute (%M) (" },
    { "%Y-%m %H:%M", "it gives no day (%d or %e)" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      KtParseFormat format = { .time_format = cases[i].time_format };
      g_autoptr(GError) error = NULL;
      g_autoptr(KtParser) parser = kt_parser_new_format (&format, &error);

      g_test_message ("%s", cases[i].time_format);
      g_assert_null (parser);
      g_assert_error (error, KT_ERROR, KT_ERROR_USAGE);
      g_assert_true (g_str_has_prefix (error->message, "--time-format: "));
      if (strstr (error->message, cases[i].says) == NULL)
        g_error ("'%s' says '%s', not '%s'", cases[i].time_format, error->message,
                 cases[i].says);
    }
}

/* One long-running parser while the clock passes New Year: every line is
 * dated by the clock of its own reading, not of the parser's start. */
static void
test_format_syslog_new_year (void)
{
  KtParseFormat format = { .time_format = "syslog" };
  g_autoptr(KtParser) parser = kt_parser_new_format (&format, NULL);
  gint64 now = usec_at (2023, 12, 31, 23, 58), minute = 0;

  kt_parser_set_clock (parser, fixed_clock, &now);
  g_assert_cmpint (kt_parser_line (parser, "Dec 31 23:57:10 ERROR", 21, &minute), ==, KT_LINE_ERROR);
  g_assert_cmpint (minute, ==, kt_minute_from_civil (2023, 12, 31, 23, 57));
  now = usec_at (2024, 1, 1, 0, 1);
  g_assert_cmpint (kt_parser_line (parser, "Dec 31 23:59:59 ERROR", 21, &minute), ==, KT_LINE_ERROR);
  g_assert_cmpint (minute, ==, kt_minute_from_civil (2023, 12, 31, 23, 59));
  g_assert_cmpint (kt_parser_line (parser, "Jan  1 00:00:30 ERROR", 21, &minute), ==, KT_LINE_ERROR);
  g_assert_cmpint (minute, ==, kt_minute_from_civil (2024, 1, 1, 0, 0));
  /* 2024 is a leap year: its Feb 29 exists, read in March... */
  now = usec_at (2024, 3, 1, 8, 0);
  g_assert_cmpint (kt_parser_line (parser, "Feb 29 23:00:00 ERROR", 21, &minute), ==, KT_LINE_ERROR);
  g_assert_cmpint (minute, ==, kt_minute_from_civil (2024, 2, 29, 23, 0));
  /* ...and still next January, when the clock's year has none. */
  now = usec_at (2025, 1, 10, 8, 0);
  g_assert_cmpint (kt_parser_line (parser, "Feb 29 23:00:00 ERROR", 21, &minute), ==, KT_LINE_ERROR);
  g_assert_cmpint (minute, ==, kt_minute_from_civil (2024, 2, 29, 23, 0));
  /* Without a clock of its own, the real one (this year or the last). */
  kt_parser_set_clock (parser, NULL, NULL);
  g_assert_cmpint (kt_parser_line (parser, "Jan  1 00:00:00 ERROR", 21, &minute), ==, KT_LINE_ERROR);
  g_assert_cmpint (minute, <=, g_get_real_time () / G_USEC_PER_SEC / 60 + 1440);
  g_assert_cmpint (minute, >, g_get_real_time () / G_USEC_PER_SEC / 60 - 367 * 1440);
}

static void
test_format_refused (void)
{
  static const KtParseFormat bad[] = {
    { "(?<time>x", NULL, NULL, 0, NULL, NULL, NULL, NULL, KT_INPUT_TEXT },
    { "(?<t>\\S+) (?<level>\\w+)", NULL, NULL, 0, NULL, NULL, NULL, NULL, KT_INPUT_TEXT },
    { NULL, "%Y-%q", NULL, 0, NULL, NULL, NULL, NULL, KT_INPUT_TEXT },
    { NULL, NULL, NULL, 7, NULL, NULL, NULL, NULL, KT_INPUT_TEXT },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(KtParser) parser = kt_parser_new_format (&bad[i], &error);
      g_assert_null (parser);
      g_assert_error (error, KT_ERROR, KT_ERROR_USAGE);
    }
}

/* --time-format without --pattern: the default line shape reads exactly
 * what the format reads (before, the time group stayed YYYY-MM-DD
 * HH:MM:SS, and every line of another format was malformed). */
static void
test_format_time_only (void)
{
  static const struct
  {
    const char *time_format, *line;
    int y, mo, d, h, mi;
  } cases[] = {
    { "%d/%m/%Y %H:%M:%S", "30/07/2017 14:09:08 ERROR x", 2017, 7, 30, 14, 9 },
    { "%Y-%m-%d %H:%M", "2017-07-30 14:09 ERROR x", 2017, 7, 30, 14, 9 },
    { "%b %e %Y %T", "Jul  3 2017 14:09:08 ERROR", 2017, 7, 3, 14, 9 },
    { "[%F %T]", "[2017-07-30 14:09:08] ERROR x", 2017, 7, 30, 14, 9 },
    { "%Y.%m.%d+%H%%%M", "2017.07.30+14%09 ERROR x", 2017, 7, 30, 14, 9 },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      KtParseFormat format = { NULL, cases[i].time_format, NULL, 1, NULL, NULL, NULL, NULL,
                               KT_INPUT_TEXT };
      g_autoptr(GError) error = NULL;
      g_autoptr(KtParser) parser = kt_parser_new_format (&format, &error);
      gint64 minute = 0;

      g_test_message ("%s", cases[i].time_format);
      g_assert_no_error (error);
      g_assert_cmpint (kt_parser_line (parser, cases[i].line, strlen (cases[i].line), &minute),
                       ==, KT_LINE_ERROR);
      g_assert_cmpint (minute, ==, kt_minute_from_civil (cases[i].y, cases[i].mo, cases[i].d,
                                                         cases[i].h, cases[i].mi));
      /* The old shape is now another format's: malformed. */
      g_assert_cmpint (kt_parser_line (parser, "2017-07-30 14:09:08 ERROR x", 27, &minute), ==,
                       KT_LINE_MALFORMED);
    }
}

/* A level the level group can never match is refused, not counted as 0. */
static void
test_format_levels_refused (void)
{
  static const char *const spaced[] = { "ERROR", " FATAL", NULL };
  static const char *const lower[] = { "error", NULL };
  static const char *const upper[] = { "ERROR", "E]R", NULL };
  static const struct
  {
    const char *pattern;
    const char *const *levels;
    const char *complaint;  /* NULL: accepted */
  } cases[] = {
    { NULL, spaced, "no spaces around the commas" },
    { "^(?<time>\\S+ \\S+) (?<level>[A-Z]+)", lower, "'error' can never be read" },
    { "^(?<time>\\S+ \\S+) (?<level>[A-Z]+)", upper, "'E]R'" },
    { "^(?<time>\\S+ \\S+) (?<level>[]A-Z]+)", upper, NULL },
    { "^(?<time>\\S+ \\S+) (?<level>(?:ERR|WARN)OR|E\\]R)", upper, NULL },
    { "^(?<time>\\S+ \\S+) (?P<level>\\w+)", lower, NULL },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      KtParseFormat format = { cases[i].pattern, NULL, cases[i].levels, 1, NULL, NULL, NULL, NULL,
                               KT_INPUT_TEXT };
      g_autoptr(GError) error = NULL;
      g_autoptr(KtParser) parser = kt_parser_new_format (&format, &error);

      g_test_message ("%s", cases[i].pattern ? cases[i].pattern : "(default)");
      if (cases[i].complaint == NULL)
        {
          g_assert_no_error (error);
          g_assert_nonnull (parser);
          continue;
        }
      g_assert_null (parser);
      g_assert_error (error, KT_ERROR, KT_ERROR_USAGE);
      g_assert_nonnull (strstr (error->message, cases[i].complaint));
    }
}


/* ---- --by and --sum: the fields of a counted line ---------------------- */

#define FIELDS_PATTERN \
  "^(?<time>\\S+ \\S+) (?<level>[A-Z]+) svc=(?<service>[^;]*);(?: st=(?<status>[^;]*);)? " \
  "bytes=(?<bytes>[^;]*);"

/* Parses @value with --by @by and --sum @sum (comma-separated, NULL:
 * none) and the levels ERROR and WARN; the rows and the counts. */
static GArray *
parse_fields (const char *value, gsize len, const char *by, const char *sum, int bucket,
              KtParseCounts *counts, KtKeyLimit *limit, KtKeyedCounts **keyed_out)
{
  static const char *const levels[] = { "ERROR", "WARN", NULL };
  g_auto(GStrv) dims = by != NULL ? g_strsplit (by, ",", -1) : NULL;
  g_auto(GStrv) sums = sum != NULL ? g_strsplit (sum, ",", -1) : NULL;
  KtParseFormat format = { FIELDS_PATTERN, NULL, levels, bucket, (const char *const *) dims,
                           (const char *const *) sums, NULL, NULL, KT_INPUT_TEXT };
  g_autoptr(GError) error = NULL;
  g_autoptr(KtParser) parser = kt_parser_new_format (&format, &error);
  KtKeyedCounts *keyed;

  g_assert_no_error (error);
  g_assert_true (kt_parser_has_fields (parser));
  keyed = kt_keyed_counts_new (-1, sums != NULL ? g_strv_length (sums) : 0, limit);
  kt_parser_value_keyed (parser, value, len, keyed, counts, NULL, NULL);
  *keyed_out = keyed;
  return kt_keyed_counts_sorted (keyed);
}

/* The @i-th value of a key (parse.h's encoding), as a new GBytes. */
static GBytes *
key_value (const KtKeyedRow *row, guint i)
{
  const guint8 *k = row->key;

  for (guint j = 0; j < i; j++)
    k += 1 + k[0];
  g_assert_true (k < row->key + row->key_len);
  return g_bytes_new (k + 1, k[0]);
}

static void
assert_value (const KtKeyedRow *row, guint i, const char *want, gsize want_len)
{
  g_autoptr(GBytes) got = key_value (row, i);
  gsize len;
  const char *data = g_bytes_get_data (got, &len);

  g_assert_cmpmem (data, len, want, want_len);
}

static void
test_fields_read (void)
{
  g_autoptr(KtKeyLimit) limit = kt_key_limit_new (100);
  g_autoptr(KtKeyedCounts) keyed = NULL;
  KtParseCounts counts = { 0 };
  const char value[] =
    "2017-07-30 14:09:08 ERROR svc=auth; st=500; bytes=10;\n"
    "2017-07-30 14:09:09 WARN svc=auth; st=500; bytes=5.25;\n"
    "2017-07-30 14:09:10 ERROR svc=; st=; bytes=0;\n"          /* empty values */
    "2017-07-30 14:09:11 ERROR svc=pay; bytes=-1.5;\n"        /* status unset: empty */
    "2017-07-30 14:09:12 INFO svc=pay; st=200; bytes=x;\n"    /* not counted: no sum read */
    "2017-07-30 14:10:00 ERROR svc=Auth; st=500; bytes=1;\n"  /* case is a key of its own */
    "2017-07-30 14:10:00 ERROR svc=auth ; st=500; bytes=1;\n"; /* and so is a trailing space */
  g_autoptr(GArray) rows = parse_fields (value, sizeof value - 1, "service,status", "bytes", 1,
                                         &counts, limit, &keyed);
  char sum[48];

  g_assert_cmpuint (counts.lines, ==, 7);
  g_assert_cmpuint (counts.errors, ==, 6);
  g_assert_cmpuint (counts.malformed, ==, 0);
  g_assert_cmpuint (rows->len, ==, 5);
  /* In the order of the key bytes (each value after its length): 14:09:
   * '' '', 'pay' '', 'auth' '500'; 14:10: 'Auth', 'auth '. */
  assert_value (&g_array_index (rows, KtKeyedRow, 0), 0, "", 0);
  assert_value (&g_array_index (rows, KtKeyedRow, 0), 1, "", 0);
  assert_value (&g_array_index (rows, KtKeyedRow, 2), 0, "auth", 4);
  assert_value (&g_array_index (rows, KtKeyedRow, 2), 1, "500", 3);
  g_assert_cmpuint (g_array_index (rows, KtKeyedRow, 2).count, ==, 2);
  kt_sum_format (g_array_index (rows, KtKeyedRow, 2).sums[0], sum);
  g_assert_cmpstr (sum, ==, "15.2500");
  assert_value (&g_array_index (rows, KtKeyedRow, 1), 0, "pay", 3);
  assert_value (&g_array_index (rows, KtKeyedRow, 1), 1, "", 0);
  kt_sum_format (g_array_index (rows, KtKeyedRow, 1).sums[0], sum);
  g_assert_cmpstr (sum, ==, "-1.5000");
  g_assert_cmpint (g_array_index (rows, KtKeyedRow, 3).bucket, ==,
                   kt_minute_from_civil (2017, 7, 30, 14, 10));
  assert_value (&g_array_index (rows, KtKeyedRow, 3), 0, "Auth", 4);
  assert_value (&g_array_index (rows, KtKeyedRow, 4), 0, "auth ", 5);
}

/* The cut at KT_DIMENSION_BYTES: never inside a UTF-8 character, at most
 * three bytes back, and at 255 bytes where no character starts there. */
static void
test_fields_cut (void)
{
  static const struct
  {
    const char *before;  /* bytes 250.. of the value; 250 'a's come first */
    gsize       kept;    /* bytes kept in all */
  } cases[] = {
    { "bbbbb", 255 },                              /* exactly 255 */
    { "bbbbbb", 255 },                             /* 256: cut */
    { "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", 255 },
    { "bbbb\xc3\xa9x", 254 },                      /* é at 254-255: left out whole */
    { "bbbbb\xc3\xa9", 255 },                      /* é at 255-256 */
    { "bbb\xe2\x82\xacx", 253 },                   /* € at 253-255 */
    { "bb\xf0\x9f\x98\x80x", 252 },                /* 😀 at 252-255 */
    { "b\xf0\x9f\x98\x80x", 255 },                 /* 😀 at 251-254: whole, then cut */
    { "bb\x80\x80\x80\x80\x80x", 255 },            /* continuation bytes only: bytes */
    { "bbbb\xff\xfe\xfd", 255 },                   /* invalid UTF-8: bytes */
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(KtKeyLimit) limit = kt_key_limit_new (100);
      g_autoptr(KtKeyedCounts) keyed = NULL;
      g_autofree char *filler = g_strnfill (250, 'a');
      g_autofree char *svc = g_strconcat (filler, cases[i].before, NULL);
      g_autofree char *value = g_strdup_printf ("2017-07-30 14:09:08 ERROR svc=%s; bytes=1;", svc);
      KtParseCounts counts = { 0 };
      g_autoptr(GArray) rows = parse_fields (value, strlen (value), "service", NULL, 1, &counts,
                                             limit, &keyed);

      g_test_message ("case %" G_GSIZE_FORMAT, i);
      g_assert_cmpuint (rows->len, ==, 1);
      assert_value (&g_array_index (rows, KtKeyedRow, 0), 0, svc, cases[i].kept);
    }
}

/* What makes a counted line malformed for its fields, and what does not. */
static void
test_fields_malformed (void)
{
  static const struct
  {
    const char *line;
    KtLineKind  kind;
    const char *sum;   /* for ERROR lines: the sum read */
  } cases[] = {
    { "2017-07-30 14:09:08 ERROR svc=a; bytes=0;", KT_LINE_ERROR, "0.0000" },
    { "2017-07-30 14:09:08 ERROR svc=a; bytes=-0;", KT_LINE_ERROR, "0.0000" },
    { "2017-07-30 14:09:08 ERROR svc=a; bytes=12.3456;", KT_LINE_ERROR, "12.3456" },
    { "2017-07-30 14:09:08 ERROR svc=a; bytes=0000000000000000000000000007;", KT_LINE_ERROR,
      "7.0000" },
    { "2017-07-30 14:09:08 ERROR svc=a; bytes=922337203685477.5807;", KT_LINE_ERROR,
      "922337203685477.5807" },
    { "2017-07-30 14:09:08 ERROR svc=a; bytes=-922337203685477.5807;", KT_LINE_ERROR,
      "-922337203685477.5807" },
    /* Past the 64-bit bound, BIGINT's and DECIMAL(20,4)'s alike. */
    { "2017-07-30 14:09:08 ERROR svc=a; bytes=922337203685477.5808;", KT_LINE_MALFORMED, NULL },
    { "2017-07-30 14:09:08 ERROR svc=a; bytes=9223372036854775808;", KT_LINE_MALFORMED, NULL },
    { "2017-07-30 14:09:08 ERROR svc=a; bytes=99999999999999999999999999999999999999999;",
      KT_LINE_MALFORMED, NULL },
    { "2017-07-30 14:09:08 ERROR svc=a; bytes=12.34567;", KT_LINE_MALFORMED, NULL },
    { "2017-07-30 14:09:08 ERROR svc=a; bytes=1e3;", KT_LINE_MALFORMED, NULL },
    { "2017-07-30 14:09:08 ERROR svc=a; bytes=+1;", KT_LINE_MALFORMED, NULL },
    { "2017-07-30 14:09:08 ERROR svc=a; bytes=.5;", KT_LINE_MALFORMED, NULL },
    { "2017-07-30 14:09:08 ERROR svc=a; bytes=5.;", KT_LINE_MALFORMED, NULL },
    { "2017-07-30 14:09:08 ERROR svc=a; bytes=;", KT_LINE_MALFORMED, NULL },
    { "2017-07-30 14:09:08 ERROR svc=a; bytes= 1;", KT_LINE_MALFORMED, NULL },
    { "2017-07-30 14:09:08 ERROR svc=a; bytes=NaN;", KT_LINE_MALFORMED, NULL },
    { "2017-07-30 14:09:08 ERROR svc=a; bytes=\xd9\xa1;", KT_LINE_MALFORMED, NULL },
    /* A line of a level not counted is OTHER whatever its fields hold. */
    { "2017-07-30 14:09:08 INFO svc=a; bytes=1e3;", KT_LINE_OTHER, NULL },
    /* Every key '(other)': only folded lines may be counted there. */
    { "2017-07-30 14:09:08 ERROR svc=(other); st=(other); bytes=1;", KT_LINE_MALFORMED, NULL },
    { "2017-07-30 14:09:08 ERROR svc=(other); st=500; bytes=1;", KT_LINE_ERROR, "1.0000" },
    { "2017-07-30 14:09:08 ERROR svc=(other) ; st=(other); bytes=1;", KT_LINE_ERROR, "1.0000" },
  };
  static const char *const levels[] = { "ERROR", "WARN", NULL };
  static const char *const by[] = { "service", "status", NULL };
  static const char *const sums[] = { "bytes", NULL };
  KtParseFormat format = { FIELDS_PATTERN, NULL, levels, 1, by, sums, NULL, NULL, KT_INPUT_TEXT };
  g_autoptr(GError) error = NULL;
  g_autoptr(KtParser) parser = kt_parser_new_format (&format, &error);

  g_assert_no_error (error);
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(KtKeyLimit) limit = kt_key_limit_new (10);
      g_autoptr(KtKeyedCounts) keyed = kt_keyed_counts_new (-1, 1, limit);
      g_autoptr(GArray) rows = NULL;
      KtParseCounts counts = { 0 };
      gint64 minute;

      g_test_message ("%s", cases[i].line);
      g_assert_cmpint (kt_parser_line (parser, cases[i].line, strlen (cases[i].line), &minute),
                       ==, cases[i].kind);
      kt_parser_value_keyed (parser, cases[i].line, strlen (cases[i].line), keyed, &counts,
                              NULL, NULL);
      rows = kt_keyed_counts_sorted (keyed);
      g_assert_cmpuint (rows->len, ==, cases[i].kind == KT_LINE_ERROR);
      g_assert_cmpuint (counts.malformed, ==, cases[i].kind == KT_LINE_MALFORMED);
      if (cases[i].sum != NULL)
        {
          char sum[48];
          kt_sum_format (g_array_index (rows, KtKeyedRow, 0).sums[0], sum);
          g_assert_cmpstr (sum, ==, cases[i].sum);
        }
    }
}

/* Any bytes are a key: NUL, invalid UTF-8, control characters; a 10 MB
 * line keeps 255 bytes of its 10 MB value; --bucket 1h buckets the keys. */
static void
test_fields_hostile (void)
{
  g_autoptr(KtKeyLimit) limit = kt_key_limit_new (100);
  g_autoptr(KtKeyedCounts) keyed = NULL;
  g_autoptr(GString) value = g_string_new (NULL);
  g_autoptr(GArray) rows = NULL;
  KtParseCounts counts = { 0 };

  g_string_append_len (value, "2017-07-30 14:09:08 ERROR svc=a\0b; bytes=1;\n", 44);
  g_string_append (value, "2017-07-30 14:59:59 ERROR svc=\xff\xfe\x01\x7f; bytes=2;\n");
  g_string_append (value, "2017-07-30 14:00:00 ERROR svc=");
  for (int i = 0; i < 10 * 1024 * 1024; i++)
    g_string_append_c (value, (char) ('a' + i % 26));
  g_string_append_len (value, "; bytes=3;\n2017-07-30 15:00:00 ERROR svc=a\0b; bytes=4;", 54);
  rows = parse_fields (value->str, value->len, "service", "bytes", 60, &counts, limit, &keyed);
  g_assert_cmpuint (counts.lines, ==, 4);
  g_assert_cmpuint (counts.errors, ==, 4);
  g_assert_cmpuint (rows->len, ==, 4);
  /* 14:00: "a\0b", "\xff\xfe\x01\x7f", "abc...z" cut at 255 (the order of the
   * key bytes, each value after its length); 15:00: "a\0b". */
  assert_value (&g_array_index (rows, KtKeyedRow, 0), 0, "a\0b", 3);
  g_assert_cmpint (g_array_index (rows, KtKeyedRow, 0).bucket, ==,
                   kt_minute_from_civil (2017, 7, 30, 14, 0));
  g_assert_cmpuint (g_array_index (rows, KtKeyedRow, 2).key_len, ==, 256);
  assert_value (&g_array_index (rows, KtKeyedRow, 2), 0,
                "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz"
                "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz"
                "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz"
                "abcdefghijklmnopqrstu", 255);
  assert_value (&g_array_index (rows, KtKeyedRow, 1), 0, "\xff\xfe\x01\x7f", 4);
  g_assert_cmpint (g_array_index (rows, KtKeyedRow, 3).bucket, ==,
                   kt_minute_from_civil (2017, 7, 30, 15, 0));
}

/* A field that is no group of the pattern is refused at start, naming
 * the flag; "level" is a field of every pattern (for --by only). */
static void
test_fields_refused (void)
{
  static const struct
  {
    const char *pattern;
    const char *by, *sum;
    const char *complaint;  /* NULL: accepted */
  } cases[] = {
    { NULL, "level", NULL, NULL },
    { NULL, "service", NULL, "--by: the pattern has no group (?<service>...) (without --pattern" },
    { FIELDS_PATTERN, "service,status,level", "bytes", NULL },
    { FIELDS_PATTERN, "nope", NULL, "--by: the pattern has no group (?<nope>...)" },
    { FIELDS_PATTERN, NULL, "nope", "--sum: the pattern has no group (?<nope>...)" },
    { FIELDS_PATTERN, NULL, "level", "--sum: 'level' is not a number" },
    { "(?J)^(?<time>\\S+ \\S+) (?<level>\\w+) (?:(?<x>a)|(?<x>b))", "x", NULL,
      "--by: 'x' names more than one group" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_auto(GStrv) by = cases[i].by != NULL ? g_strsplit (cases[i].by, ",", -1) : NULL;
      g_auto(GStrv) sum = cases[i].sum != NULL ? g_strsplit (cases[i].sum, ",", -1) : NULL;
      KtParseFormat format = { cases[i].pattern, NULL, NULL, 1, (const char *const *) by,
                               (const char *const *) sum, NULL, NULL, KT_INPUT_TEXT };
      g_autoptr(GError) error = NULL;
      g_autoptr(KtParser) parser = kt_parser_new_format (&format, &error);

      g_test_message ("%s / %s / %s", cases[i].pattern, cases[i].by, cases[i].sum);
      if (cases[i].complaint == NULL)
        {
          g_assert_no_error (error);
          g_assert_true (kt_parser_has_fields (parser));
          continue;
        }
      g_assert_null (parser);
      g_assert_error (error, KT_ERROR, KT_ERROR_USAGE);
      g_assert_nonnull (strstr (error->message, cases[i].complaint));
    }
}

/* --by level without --pattern: the default line, each level its row. */
static void
test_fields_level (void)
{
  static const char *const levels[] = { "ERROR", "FATAL", NULL };
  static const char *const by[] = { "level", NULL };
  KtParseFormat format = { NULL, NULL, levels, 1, by, NULL, NULL, NULL, KT_INPUT_TEXT };
  g_autoptr(GError) error = NULL;
  g_autoptr(KtParser) parser = kt_parser_new_format (&format, &error);
  g_autoptr(KtKeyLimit) limit = kt_key_limit_new (10);
  g_autoptr(KtKeyedCounts) keyed = kt_keyed_counts_new (-1, 0, limit);
  g_autoptr(GArray) rows = NULL;
  KtParseCounts counts = { 0 };
  const char value[] = "2017-07-30 14:09:08 ERROR a\n2017-07-30 14:09:09 FATAL b\n"
                       "2017-07-30 14:09:10 ERROR c\n2017-07-30 14:09:11 INFO d\n";

  g_assert_no_error (error);
  kt_parser_value_keyed (parser, value, sizeof value - 1, keyed, &counts, NULL, NULL);
  rows = kt_keyed_counts_sorted (keyed);
  g_assert_cmpuint (rows->len, ==, 2);
  assert_value (&g_array_index (rows, KtKeyedRow, 0), 0, "ERROR", 5);
  g_assert_cmpuint (g_array_index (rows, KtKeyedRow, 0).count, ==, 2);
  assert_value (&g_array_index (rows, KtKeyedRow, 1), 0, "FATAL", 5);
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/parse/line/valid", test_line_valid);
  g_test_add_func ("/parse/line/level-exact", test_line_level);
  g_test_add_func ("/parse/line/bad-shape", test_line_shape);
  g_test_add_func ("/parse/line/bad-date", test_line_bad_date);
  g_test_add_func ("/parse/line/truncated", test_line_truncated);
  g_test_add_func ("/parse/line/opaque-message", test_line_opaque_message);
  g_test_add_func ("/parse/line/huge-message", test_line_huge_message);
  g_test_add_func ("/parse/value/16mb", test_value_16mb);
  g_test_add_func ("/parse/line/shortcut-agrees", test_line_shortcut_agrees);
  g_test_add_func ("/parse/format/default-fast", test_format_default_fast);
  g_test_add_func ("/parse/format/iso8601", test_format_iso8601);
  g_test_add_func ("/parse/format/custom", test_format_custom);
  g_test_add_func ("/parse/format/refused", test_format_refused);
  g_test_add_func ("/parse/format/time-only", test_format_time_only);
  g_test_add_func ("/parse/format/levels-refused", test_format_levels_refused);
  g_test_add_func ("/parse/format/datetime-range", test_format_datetime_range);
  g_test_add_func ("/parse/format/leap-second", test_format_leap_second);
  g_test_add_func ("/parse/format/syslog-year", test_format_syslog_year);
  g_test_add_func ("/parse/format/no-year", test_format_no_year);
  g_test_add_func ("/parse/format/cannot-place", test_format_cannot_place);
  g_test_add_func ("/parse/format/syslog-new-year", test_format_syslog_new_year);
  g_test_add_func ("/parse/value/poison-pill", test_value_poison_pill);
  g_test_add_func ("/parse/minute/datetime-bounds", test_minute_datetime_bounds);
  g_test_add_func ("/parse/value/null-and-empty", test_value_null_and_empty);
  g_test_add_func ("/parse/value/lines", test_value_lines);
  g_test_add_func ("/parse/value/nul-inside", test_value_nul_inside);
  g_test_add_func ("/parse/value/many-lines", test_value_many_lines);
  g_test_add_func ("/parse/value/first-bad", test_value_first_bad);
  g_test_add_func ("/parse/value/no-bad-no-first-bad", test_value_no_bad_leaves_first_bad);
  g_test_add_func ("/parse/value/accumulates", test_value_accumulates);
  g_test_add_func ("/parse/value/reducer-per-minute", test_value_reducer_per_minute);
  g_test_add_func ("/parse/minute/known", test_minute_known);
  g_test_add_func ("/parse/minute/round-trip", test_minute_round_trip);
  g_test_add_func ("/parse/minute/around-epoch", test_minute_around_epoch);
  g_test_add_func ("/parse/fields/read", test_fields_read);
  g_test_add_func ("/parse/fields/cut-at-255-bytes", test_fields_cut);
  g_test_add_func ("/parse/fields/malformed", test_fields_malformed);
  g_test_add_func ("/parse/fields/hostile", test_fields_hostile);
  g_test_add_func ("/parse/fields/refused", test_fields_refused);
  g_test_add_func ("/parse/fields/level", test_fields_level);

  return g_test_run ();
}
