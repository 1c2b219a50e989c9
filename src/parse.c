/* parse.c - the parse stage.
 *
 * pcre2 decides the shape of a line (anchored, JIT-compiled once, one match
 * data reused, no allocation per line); fixed positions then give the
 * digits, and the calendar decides whether the date exists. A cheap check of
 * the separator bytes first rejects most garbage without running the regex. */
#include "parse.h"

#include <string.h>
#include "autocleanups.h"
#include "error.h"

/* The digits have fixed widths, so a match puts the timestamp at bytes
 * 0..18 and the level at 20..; the level ends the line or is followed by
 * one space. Levels are letters: "123" where the level should be is
 * malformed, "error" is a level (just not the one we count). */
#define LINE_PATTERN \
  "[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2} ([A-Za-z]+)(?: |\\z)"

struct _KtParser
{
  pcre2_code       *code;
  pcre2_match_data *match;
  gboolean          jit;
  gboolean          shortcut;  /* the ERROR fast path (on unless testing) */
};

KtParser *
kt_parser_new (GError **error)
{
  g_autoptr(KtParser) self = g_new0 (KtParser, 1);
  int errcode;
  PCRE2_SIZE erroffset;

  self->code = pcre2_compile ((PCRE2_SPTR) LINE_PATTERN, PCRE2_ZERO_TERMINATED,
                              PCRE2_ANCHORED | PCRE2_NO_UTF_CHECK, &errcode,
                              &erroffset, NULL);
  if (self->code == NULL)
    {
      PCRE2_UCHAR msg[256];
      pcre2_get_error_message (errcode, msg, sizeof msg);
      g_set_error (error, KT_ERROR, KT_ERROR_INTERNAL,
                   "cannot compile the line pattern at offset %zu: %s",
                   (size_t) erroffset, (const char *) msg);
      return NULL;
    }
  /* JIT is an optimisation: a CPU or build without it still parses. */
  self->jit = pcre2_jit_compile (self->code, PCRE2_JIT_COMPLETE) == 0;
  self->shortcut = TRUE;
  self->match = pcre2_match_data_create_from_pattern (self->code, NULL);
  if (self->match == NULL)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_INTERNAL,
                           "cannot allocate pcre2 match data");
      return NULL;
    }
  return g_steal_pointer (&self);
}

void
kt_parser_free (KtParser *self)
{
  if (self == NULL)
    return;
  g_clear_pointer (&self->match, pcre2_match_data_free);
  g_clear_pointer (&self->code, pcre2_code_free);
  g_free (self);
}

static inline int
digits (const char *p, int n)
{
  int v = 0;
  for (int i = 0; i < n; i++)
    v = v * 10 + (p[i] - '0');
  return v;
}

static gboolean
is_leap (int y)
{
  return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int
days_in_month (int y, int m)
{
  static const int days[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
  return m == 2 && is_leap (y) ? 29 : days[m - 1];
}

gint64
kt_minute_from_civil (int year, int month, int day, int hour, int min)
{
  /* Days from 1970-01-01 in the proleptic Gregorian calendar: eras of
   * 400 years starting on 1 March, so the leap day is the era's last. */
  gint64 y = month <= 2 ? year - 1 : year;
  gint64 era = (y >= 0 ? y : y - 399) / 400;
  gint64 yoe = y - era * 400;
  gint64 doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
  gint64 doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  gint64 days = era * 146097 + doe - 719468;

  return days * 1440 + hour * 60 + min;
}

void
kt_minute_format (gint64 minute, char buf[static 20])
{
  gint64 days = minute >= 0 ? minute / 1440 : (minute - 1439) / 1440;
  gint64 mod = minute - days * 1440;
  gint64 z = days + 719468;
  gint64 era = (z >= 0 ? z : z - 146096) / 146097;
  gint64 doe = z - era * 146097;
  gint64 yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  gint64 doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  gint64 mp = (5 * doy + 2) / 153;
  int d = (int) (doy - (153 * mp + 2) / 5 + 1);
  int m = (int) (mp < 10 ? mp + 3 : mp - 9);
  int y = (int) (yoe + era * 400 + (m <= 2));

  g_snprintf (buf, 20, "%04d-%02d-%02d %02d:%02d:00", y, m, d,
              (int) (mod / 60), (int) (mod % 60));
}

void
kt_parser_set_shortcut (KtParser *self, gboolean enabled)
{
  self->shortcut = enabled;
}

static inline gboolean
is_digit (char c)
{
  return (unsigned char) (c - '0') <= 9;
}

KtLineKind
kt_parser_line (KtParser *self, const char *line, gsize len, gint64 *minute)
{
  static const guint8 digit_at[14] = { 0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18 };
  gsize level_len;
  int year, month, day, hour, min, sec;

  /* The separators and digits sit at fixed places in every valid line:
   * most garbage is refused here without running the regex. */
  if (len < 21 || line[4] != '-' || line[7] != '-' || line[10] != ' '
      || line[13] != ':' || line[16] != ':' || line[19] != ' ')
    return KT_LINE_MALFORMED;
  for (gsize i = 0; i < sizeof digit_at; i++)
    if (!is_digit (line[digit_at[i]]))
      return KT_LINE_MALFORMED;

  /* The hot path: with the timestamp's shape known, "ERROR" followed by a
   * space or the end is exactly what LINE_PATTERN matches for an ERROR
   * line, so the counted lines skip the regex. Every other level goes
   * through pcre2; the unit tests and the fuzzer check both agree. */
  if (self->shortcut && len >= 25 && memcmp (line + 20, "ERROR", 5) == 0
      && (len == 25 || line[25] == ' '))
    level_len = 5;
  else
    {
      int rc = self->jit
        ? pcre2_jit_match (self->code, (PCRE2_SPTR) line, len, 0, 0, self->match, NULL)
        : pcre2_match (self->code, (PCRE2_SPTR) line, len, 0, PCRE2_NO_UTF_CHECK,
                       self->match, NULL);
      const PCRE2_SIZE *ov;

      if (rc < 2)
        return KT_LINE_MALFORMED;
      ov = pcre2_get_ovector_pointer (self->match);
      level_len = ov[3] - ov[2];
    }

  year = digits (line, 4);
  month = digits (line + 5, 2);
  day = digits (line + 8, 2);
  hour = digits (line + 11, 2);
  min = digits (line + 14, 2);
  sec = digits (line + 17, 2);
  /* MariaDB's DATETIME starts at year 1000; no leap seconds either. */
  if (year < 1000 || month < 1 || month > 12 || day < 1
      || day > days_in_month (year, month) || hour > 23 || min > 59 || sec > 59)
    return KT_LINE_MALFORMED;

  if (level_len != 5 || memcmp (line + 20, "ERROR", 5) != 0)
    return KT_LINE_OTHER;

  *minute = kt_minute_from_civil (year, month, day, hour, min);
  return KT_LINE_ERROR;
}

guint64
kt_parser_value (KtParser *self, const char *value, gsize len,
                 KtReducer *reducer, KtParseCounts *counts,
                 const char **first_bad, gsize *first_bad_len)
{
  const char *p = value, *end = value + len;
  guint64 malformed = 0, errors = 0, lines = 0;

  if (value == NULL)
    return 0;

  while (p < end)
    {
      const char *nl = memchr (p, '\n', (size_t) (end - p));
      const char *eol = nl != NULL ? nl : end;
      gsize n = (gsize) (eol - p);
      gint64 minute;

      if (n > 0 && p[n - 1] == '\r')
        n--;
      if (n > 0)
        {
          lines++;
          switch (kt_parser_line (self, p, n, &minute))
            {
            case KT_LINE_ERROR:
              errors++;
              kt_reducer_add (reducer, minute, 1);
              break;
            case KT_LINE_MALFORMED:
              if (malformed == 0 && first_bad != NULL)
                {
                  *first_bad = p;
                  *first_bad_len = n;
                }
              malformed++;
              break;
            case KT_LINE_OTHER:
            default:
              break;
            }
        }
      p = eol + 1;
    }

  counts->lines += lines;
  counts->errors += errors;
  counts->malformed += malformed;
  return malformed;
}
