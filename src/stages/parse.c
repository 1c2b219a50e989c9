/* parse.c - the parse stage.
 *
 * pcre2 decides the shape of a line (anchored, JIT-compiled once, one match
 * data reused, no allocation per line); fixed positions then give the
 * digits, and the calendar decides whether the date exists. A cheap check of
 * the separator bytes first rejects most garbage without running the regex. */
#include "parse.h"

#include <string.h>
#include "error.h"
#include "parse-private.h"


/* The digits have fixed widths, so a match puts the timestamp at bytes
 * 0..18 and the level at 20..; the level ends the line or is followed by
 * one space. Levels are letters: "123" where the level should be is
 * malformed, "error" is a level (just not the one we count). */
#define LINE_PATTERN \
  "[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2} ([A-Za-z]+)(?: |\\z)"


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

char *
kt_parser_library_version (void)
{
  char version[64] = "";

  pcre2_config (PCRE2_CONFIG_VERSION, version);
  return g_strdup (version);
}

void
kt_parser_free (KtParser *self)
{
  if (self == NULL)
    return;
  g_clear_pointer (&self->match, pcre2_match_data_free);
  g_clear_pointer (&self->code, pcre2_code_free);
  g_free (self->time_format);
  g_strfreev (self->levels);
  kt_records_close (self);
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

gboolean
kt_parser_fast_path (const KtParser *self)
{
  return !self->custom && self->shortcut;
}

void
kt_parser_set_shortcut (KtParser *self, gboolean enabled)
{
  self->shortcut = enabled;
}

void
kt_parser_set_clock (KtParser *self, KtClockFunc clock, gpointer user_data)
{
  self->clock = clock;
  self->clock_data = user_data;
}

static inline gboolean
is_digit (char c)
{
  return (unsigned char) (c - '0') <= 9;
}

static KtLineKind custom_line (KtParser *self, const char *line, gsize len,
                               gint64 *minute);

KtLineKind
kt_parser_line (KtParser *self, const char *line, gsize len, gint64 *minute)
{
  static const guint8 digit_at[14] = { 0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18 };
  gboolean known;
  gsize level_len;
  int year, month, day, hour, min, sec;

  if (self->custom)
    return custom_line (self, line, len, minute);

  /* The separators and digits sit at fixed places in every valid line:
   * most garbage is refused here without running the regex. */
  if (len < 21 || line[4] != '-' || line[7] != '-' || line[10] != ' '
      || line[13] != ':' || line[16] != ':' || line[19] != ' ')
    return MALFORMED (self, KT_WHY_SHAPE);
  known = self->have_last && memcmp (line, self->last_ts, sizeof self->last_ts) == 0;
  if (!known)
    for (gsize i = 0; i < sizeof digit_at; i++)
      if (!is_digit (line[digit_at[i]]))
        return MALFORMED (self, KT_WHY_SHAPE);

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
        return MALFORMED (self, KT_WHY_SHAPE);
      ov = pcre2_get_ovector_pointer (self->match);
      level_len = ov[3] - ov[2];
    }

  if (!known)
    {
      year = digits (line, 4);
      month = digits (line + 5, 2);
      day = digits (line + 8, 2);
      hour = digits (line + 11, 2);
      min = digits (line + 14, 2);
      sec = digits (line + 17, 2);
      /* Four digits from 1000 are within DATETIME's range, and with no
       * conversion and 1-minute buckets so is the minute: the range check
       * of the other formats is this `year < 1000`, paid once per new
       * timestamp. Second 60 is a leap second: it counts in its minute. */
      if (year < 1000 || month < 1 || month > 12 || day < 1
          || day > days_in_month (year, month) || hour > 23 || min > 59 || sec > 60)
        return MALFORMED (self, year < 1000 ? KT_WHY_RANGE : KT_WHY_TIME);
      memcpy (self->last_ts, line, sizeof self->last_ts);
      self->last_minute = kt_minute_from_civil (year, month, day, hour, min);
      self->have_last = TRUE;
    }

  if (level_len != 5 || memcmp (line + 20, "ERROR", 5) != 0)
    return KT_LINE_OTHER;

  *minute = self->last_minute;
  return KT_LINE_ERROR;
}

/* The lines of @value into @reducer, or with @keyed (a parser with
 * fields) into those. */
static guint64
parse_value (KtParser *self, const char *value, gsize len, KtReducer *reducer,
             KtKeyedCounts *keyed, KtParseCounts *counts, const char **first_bad,
             gsize *first_bad_len)
{
  const char *p = value, *end = value + len;
  guint64 malformed = 0, errors = 0, lines = 0;

  if (value == NULL)
    return 0;
  if (self->input != NULL && self->input->value != NULL)
    return kt_records_value (self, value, len, reducer, keyed, counts, first_bad, first_bad_len);

  for (guint number = 1; p < end; number++)
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
              if (keyed != NULL)
                kt_keyed_counts_add (keyed, minute, self->key, self->key_len, self->sums);
              else
                kt_reducer_add (reducer, minute, 1);
              break;
            case KT_LINE_MALFORMED:
              if (malformed == 0 && first_bad != NULL)
                {
                  *first_bad = p;
                  *first_bad_len = n;
                }
              malformed++;
              if (self->malformed_func != NULL)
                self->malformed_func (p, n, number, self->why, self->malformed_data);
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

guint64
kt_parser_value (KtParser *self, const char *value, gsize len,
                 KtReducer *reducer, KtParseCounts *counts,
                 const char **first_bad, gsize *first_bad_len)
{
  g_return_val_if_fail (!kt_parser_has_fields (self), 0);
  return parse_value (self, value, len, reducer, NULL, counts, first_bad, first_bad_len);
}

guint64
kt_parser_value_keyed (KtParser *self, const char *value, gsize len, KtKeyedCounts *keyed,
                        KtParseCounts *counts, const char **first_bad, gsize *first_bad_len)
{
  g_return_val_if_fail (keyed != NULL, 0);
  return parse_value (self, value, len, NULL, keyed, counts, first_bad, first_bad_len);
}

void
kt_parser_set_malformed_func (KtParser *self, KtMalformedFunc func, gpointer user_data)
{
  self->malformed_func = func;
  self->malformed_data = user_data;
}

KtMalformedWhy
kt_parser_why (KtParser *self)
{
  return self->why;
}

const char *
kt_malformed_why_name (KtMalformedWhy why)
{
  static const char *const names[] = { "shape", "time", "range", "field", "json", "utf8",
                                       "nul", "surrogate", "depth", "missing", "type" };

  return (guint) why < G_N_ELEMENTS (names) ? names[why] : "?";
}

gboolean
kt_parser_has_fields (KtParser *self)
{
  return self->n_dims > 0 || self->n_sums > 0;
}

/* ---------------------------------------------------------------------- */
/* Other formats: --pattern, --time-format, --levels, --bucket */

static const char *const month_names[12] = {
  "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"
};

/* Reads exactly @n digits (or, with @space_pad, a space then n-1 digits). */
static gboolean
take_number (const char **p, const char *end, int n, gboolean space_pad, int *out)
{
  int v = 0;

  for (int i = 0; i < n; i++)
    {
      char c = *p + i < end ? (*p)[i] : '\0';
      if (i == 0 && space_pad && c == ' ')
        continue;
      if (!is_digit (c))
        return FALSE;
      v = v * 10 + (c - '0');
    }
  *p += n;
  *out = v;
  return TRUE;
}

/* Checks a strptime-style format once, at start: only known conversions,
 * and enough of them to place a line in time: the month, the day, the
 * hour and the minute. *@no_year: it gives no year, which the syslog
 * rule then decides per line (syslog_minute()). A format that places
 * nothing would make every line malformed, or count every line into one
 * minute of 1970. */
static gboolean
check_format (const char *format, gboolean *no_year, GError **error)
{
  static const char *const presets[] = { "iso8601", "syslog" };
  gboolean year = FALSE, month = FALSE, day = FALSE, hour = FALSE, minute = FALSE;
  g_autoptr(GString) missing = g_string_new (NULL);

  for (const char *f = format; *f != '\0'; f++)
    {
      if (*f != '%')
        continue;
      if (strchr ("YmdHMSbeTF%", f[1] == '\0' ? '?' : f[1]) == NULL)
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                       "--time-format: unknown conversion '%%%c' (known: %%Y %%m %%d "
                       "%%H %%M %%S %%b %%e %%T %%F %%%%)", f[1] ? f[1] : ' ');
          return FALSE;
        }
      f++;
      year |= *f == 'Y' || *f == 'F';
      month |= *f == 'm' || *f == 'b' || *f == 'F';
      day |= *f == 'd' || *f == 'e' || *f == 'F';
      hour |= *f == 'H' || *f == 'T';
      minute |= *f == 'M' || *f == 'T';
    }
  if (!year && !month && !day && !hour && !minute)
    {
      for (gsize i = 0; i < G_N_ELEMENTS (presets); i++)
        if (g_ascii_strcasecmp (format, presets[i]) == 0)
          {
            g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                         "--time-format: '%s' is no format (it has no conversion): the "
                         "preset is spelled %s", format, presets[i]);
            return FALSE;
          }
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "--time-format: '%s' has no conversion, so it reads no time: give a "
                   "strptime-style format (e.g. %%Y-%%m-%%d %%H:%%M:%%S) or a preset "
                   "(iso8601, syslog)", format);
      return FALSE;
    }
  if (!month)
    g_string_append (missing, ", no month (%m or %b)");
  if (!day)
    g_string_append (missing, ", no day (%d or %e)");
  if (!hour)
    g_string_append (missing, ", no hour (%H)");
  if (!minute)
    g_string_append (missing, ", no minute (%M)");
  if (missing->len > 0)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "--time-format: '%s' cannot place a line in time: it gives %s (%%F gives "
                   "the date, %%T the time; without %%Y the syslog rule decides the year)",
                   format, missing->str + 2);
      return FALSE;
    }
  *no_year = !year;
  return TRUE;
}

/* The regular expression of what a strptime-style @format (already
 * checked) reads, for the default line shape without --pattern: the time
 * group matches exactly the text the format can parse. */
static char *
format_regex (const char *format)
{
  GString *re = g_string_new (NULL);

  for (const char *f = format; *f != '\0'; f++)
    {
      if (*f != '%')
        {
          if (!g_ascii_isalnum (*f))
            g_string_append_c (re, '\\');
          g_string_append_c (re, *f);
          continue;
        }
      switch (*++f)
        {
        case 'Y': g_string_append (re, "[0-9]{4}"); break;
        case 'm': case 'd': case 'H': case 'M': case 'S':
          g_string_append (re, "[0-9]{2}");
          break;
        case 'e': g_string_append (re, "[ 0-9][0-9]"); break;
        case 'b': g_string_append (re, "[A-Z][a-z]{2}"); break;
        case 'T': g_string_append (re, "[0-9]{2}:[0-9]{2}:[0-9]{2}"); break;
        case 'F': g_string_append (re, "[0-9]{4}-[0-9]{2}-[0-9]{2}"); break;
        default: g_string_append (re, "%"); break;  /* %% */
        }
    }
  return g_string_free (re, FALSE);
}

/* The text of the (?<level>...) group of @pattern, or NULL if it cannot be
 * told (then nothing is checked against it). */
static char *
level_group_source (const char *pattern)
{
  static const char *const openers[] = { "(?<level>", "(?P<level>", "(?'level'" };
  const char *start = NULL, *p;
  int depth = 1;
  gboolean in_class = FALSE;

  for (gsize i = 0; i < G_N_ELEMENTS (openers) && start == NULL; i++)
    if ((p = strstr (pattern, openers[i])) != NULL)
      start = p + strlen (openers[i]);
  if (start == NULL)
    return NULL;
  for (p = start; *p != '\0'; p++)
    {
      if (*p == '\\')
        {
          if (*++p == '\0')
            return NULL;
        }
      else if (in_class)
        in_class = *p != ']';
      else if (*p == '[')
        {
          in_class = TRUE;
          if (p[1] == '^')
            p++;
          if (p[1] == ']')
            p++;  /* a leading ']' is a member */
        }
      else if (*p == '(')
        depth++;
      else if (*p == ')' && --depth == 0)
        return g_strndup (start, (gsize) (p - start));
    }
  return NULL;
}

/* Each of @levels must be something the level group can match: a level it
 * cannot ("ERROR, FATAL" gives " FATAL") would count nothing, silently. */
static gboolean
check_levels (const char *pattern, char **levels, GError **error)
{
  g_autofree char *group = level_group_source (pattern);
  g_autofree char *whole = NULL;
  pcre2_code *code;
  pcre2_match_data *match;
  gboolean ok = TRUE;
  int errcode;
  PCRE2_SIZE erroffset;

  if (group == NULL)
    return TRUE;
  whole = g_strdup_printf ("\\A(?:%s)\\z", group);
  code = pcre2_compile ((PCRE2_SPTR) whole, PCRE2_ZERO_TERMINATED, 0, &errcode, &erroffset,
                        NULL);
  if (code == NULL)
    return TRUE;  /* it leans on the rest of the pattern (a back reference) */
  match = pcre2_match_data_create_from_pattern (code, NULL);
  for (char **l = levels; ok && *l != NULL; l++)
    if (pcre2_match (code, (PCRE2_SPTR) *l, strlen (*l), 0, 0, match, NULL) < 0)
      {
        g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                     "--levels: '%s' can never be read as a level: the pattern's level "
                     "group is (?<level>%s)%s", *l, group,
                     strchr (*l, ' ') != NULL ? " (no spaces around the commas)" : "");
        ok = FALSE;
      }
  pcre2_match_data_free (match);
  pcre2_code_free (code);
  return ok;
}

/* Parses @text (exactly, to its end) with a strptime-style @format into
 * the fields it names, leaving the others as they are (%T and %F recurse). */
static gboolean
parse_fields (const char *format, const char *text, gsize len, int *y, int *mo,
              int *d, int *h, int *mi, int *s)
{
  const char *p = text, *end = text + len;

  for (const char *f = format; *f != '\0'; f++)
    {
      if (*f != '%')
        {
          if (p >= end || *p != *f)
            return FALSE;
          p++;
          continue;
        }
      switch (*++f)
        {
        case 'Y': if (!take_number (&p, end, 4, FALSE, y)) return FALSE; break;
        case 'm': if (!take_number (&p, end, 2, FALSE, mo)) return FALSE; break;
        case 'd': if (!take_number (&p, end, 2, FALSE, d)) return FALSE; break;
        case 'e': if (!take_number (&p, end, 2, TRUE, d)) return FALSE; break;
        case 'H': if (!take_number (&p, end, 2, FALSE, h)) return FALSE; break;
        case 'M': if (!take_number (&p, end, 2, FALSE, mi)) return FALSE; break;
        case 'S': if (!take_number (&p, end, 2, FALSE, s)) return FALSE; break;
        case 'T':
          if (!parse_fields ("%H:%M:%S", p, MIN ((gsize) (end - p), 8), y, mo, d, h, mi, s))
            return FALSE;
          p += 8;
          break;
        case 'F':
          if (!parse_fields ("%Y-%m-%d", p, MIN ((gsize) (end - p), 10), y, mo, d, h, mi, s))
            return FALSE;
          p += 10;
          break;
        case 'b':
          {
            int m = 0;
            while (m < 12 && !(end - p >= 3 && memcmp (p, month_names[m], 3) == 0))
              m++;
            if (m == 12)
              return FALSE;
            *mo = m + 1;
            p += 3;
          }
          break;
        case '%':
          if (p >= end || *p != '%')
            return FALSE;
          p++;
          break;
        default:
          return FALSE;
        }
    }
  return p == end;
}

/* The same, every field not in @format at its default (1970-01-01 00:00:00). */
static gboolean
parse_with_format (const char *format, const char *text, gsize len, int *y, int *mo,
                   int *d, int *h, int *mi, int *s)
{
  *y = 1970, *mo = 1, *d = 1, *h = 0, *mi = 0, *s = 0;
  return parse_fields (format, text, len, y, mo, d, h, mi, s);
}

/* A date and time that exist (second 60 included, as strptime's %S has
 * it). Any year 0..9999 here: whether the minute fits DATETIME is decided
 * on the bucket, after a time zone conversion. */
static gboolean
valid_civil (int y, int mo, int d, int h, int mi, int s)
{
  return y >= 0 && mo >= 1 && mo <= 12 && d >= 1 && d <= days_in_month (y, mo)
         && h >= 0 && h <= 23 && mi >= 0 && mi <= 59 && s >= 0 && s <= 60;
}

/* The syslog rule (see parse.h): of next year, this year and last year,
 * the latest in which the date exists and which puts the line at most a
 * day after the clock's minute. */
static gboolean
syslog_minute (KtParser *self, int mo, int d, int h, int mi, int s, gint64 *out)
{
  gint64 usec = self->clock != NULL ? self->clock (self->clock_data) : g_get_real_time ();
  gint64 now = usec >= 0 ? usec / (G_USEC_PER_SEC * 60)
                         : (usec - (G_USEC_PER_SEC * 60 - 1)) / (G_USEC_PER_SEC * 60);
  int year, month, day, of_day;

  kt_minute_to_civil (now, &year, &month, &day, &of_day);
  for (int y = year + 1; y >= year - 1; y--)
    if (valid_civil (y, mo, d, h, mi, s))
      {
        gint64 m = kt_minute_from_civil (y, mo, d, h, mi);
        if (m <= now + 1440)
          {
            *out = m;
            return TRUE;
          }
      }
  return FALSE;
}

/* ISO 8601: YYYY-MM-DDTHH:MM:SS[.fraction](Z|+hh:mm|-hh:mm)?, to UTC. */
static gboolean
parse_iso8601 (const char *text, gsize len, gint64 *minute)
{
  const char *p = text + 19, *end = text + len;
  int y, mo, d, h, mi, s, offset = 0;

  if (len < 19 || !parse_with_format ("%Y-%m-%dT%H:%M:%S", text, 19, &y, &mo, &d, &h, &mi, &s)
      || !valid_civil (y, mo, d, h, mi, s))
    return FALSE;
  if (p < end && *p == '.')
    {
      if (++p >= end || !is_digit (*p))
        return FALSE;
      while (p < end && is_digit (*p))
        p++;
    }
  if (p < end && *p == 'Z')
    p++;
  else if (p < end && (*p == '+' || *p == '-'))
    {
      int oh, om, sign = *p == '-' ? -1 : 1;
      p++;
      if (!take_number (&p, end, 2, FALSE, &oh) || p >= end || *p++ != ':'
          || !take_number (&p, end, 2, FALSE, &om) || oh > 23 || om > 59)
        return FALSE;
      offset = sign * (oh * 60 + om);
    }
  if (p != end)
    return FALSE;
  /* Local time minus its offset is UTC. */
  *minute = kt_minute_from_civil (y, mo, d, h, mi) - offset;
  return TRUE;
}

/* How many bytes of a --by value of @len bytes are kept (parse.h). */
static gsize
dimension_cut (const guint8 *value, gsize len)
{
  gsize n = KT_DIMENSION_BYTES;

  if (len <= KT_DIMENSION_BYTES)
    return len;
  for (int back = 0; back < 3 && (value[n] & 0xC0) == 0x80; back++)
    n--;
  return (value[n] & 0xC0) == 0x80 ? KT_DIMENSION_BYTES : n;
}

/* The --by key and the --sum values of a counted line, from its match
 * (@ov): FALSE when the line is malformed for them. */
static gboolean
read_fields (KtParser *self, const char *line, const PCRE2_SIZE *ov)
{
  static const char other[] = KT_OTHER_KEY;
  guint8 *k = self->key;
  gboolean all_other = self->n_dims > 0;

  for (guint i = 0; i < self->n_dims; i++)
    {
      PCRE2_SIZE from = ov[2 * self->dim_group[i]], until = ov[2 * self->dim_group[i] + 1];
      const guint8 *value = (const guint8 *) line + (from != PCRE2_UNSET ? from : 0);
      gsize n = from != PCRE2_UNSET ? dimension_cut (value, until - from) : 0;

      all_other &= n == sizeof other - 1 && memcmp (value, other, n) == 0;
      *k++ = (guint8) n;
      memcpy (k, value, n);
      k += n;
    }
  if (all_other)
    return FALSE;
  self->key_len = (gsize) (k - self->key);
  for (guint i = 0; i < self->n_sums; i++)
    {
      PCRE2_SIZE from = ov[2 * self->sum_group[i]], until = ov[2 * self->sum_group[i] + 1];

      if (from == PCRE2_UNSET
          || !kt_amount_parse_bytes (line + from, until - from, &self->sums[i], NULL))
        return FALSE;
    }
  return TRUE;
}

static KtLineKind
custom_line (KtParser *self, const char *line, gsize len, gint64 *minute)
{
  const PCRE2_SIZE *ov;
  const char *time, *level;
  gsize time_len, level_len;
  int rc, y, mo, d, h, mi, s;
  gint64 m;

  if (self->input != NULL)
    return kt_records_line (self, line, len, minute);

  rc = self->jit
    ? pcre2_jit_match (self->code, (PCRE2_SPTR) line, len, 0, 0, self->match, NULL)
    : pcre2_match (self->code, (PCRE2_SPTR) line, len, 0, 0, self->match, NULL);
  if (rc < 0)
    return MALFORMED (self, KT_WHY_SHAPE);
  ov = pcre2_get_ovector_pointer (self->match);
  if (ov[2 * self->time_group] == PCRE2_UNSET || ov[2 * self->level_group] == PCRE2_UNSET)
    return MALFORMED (self, KT_WHY_SHAPE);
  time = line + ov[2 * self->time_group];
  time_len = ov[2 * self->time_group + 1] - ov[2 * self->time_group];
  level = line + ov[2 * self->level_group];
  level_len = ov[2 * self->level_group + 1] - ov[2 * self->level_group];

  switch (self->time_kind)
    {
    case TIME_ISO8601:
      if (!parse_iso8601 (time, time_len, &m))
        return MALFORMED (self, KT_WHY_TIME);
      break;
    case TIME_SYSLOG:
      if (!parse_with_format ("%b %e %H:%M:%S", time, time_len, &y, &mo, &d, &h, &mi, &s)
          || !syslog_minute (self, mo, d, h, mi, s, &m))
        return MALFORMED (self, KT_WHY_TIME);
      break;
    case TIME_STRPTIME:
    default:
      if (!parse_with_format (self->time_format, time, time_len, &y, &mo, &d, &h, &mi, &s))
        return MALFORMED (self, KT_WHY_TIME);
      if (self->no_year)
        {
          if (!syslog_minute (self, mo, d, h, mi, s, &m))
            return MALFORMED (self, KT_WHY_TIME);
          break;
        }
      if (!valid_civil (y, mo, d, h, mi, s))
        return MALFORMED (self, KT_WHY_TIME);
      m = kt_minute_from_civil (y, mo, d, h, mi);
      break;
    }

  /* Buckets start on the hour (and at midnight): floor, also before 1970.
   * A bucket DATETIME cannot hold makes the line malformed whatever its
   * level, like a date that does not exist. */
  m -= ((m % self->bucket) + self->bucket) % self->bucket;
  if (m < KT_MINUTE_MIN || m > KT_MINUTE_MAX)
    return MALFORMED (self, KT_WHY_RANGE);

  for (char **l = self->levels; *l != NULL; l++)
    if (strlen (*l) == level_len && memcmp (*l, level, level_len) == 0)
      {
        if ((self->n_dims > 0 || self->n_sums > 0) && !read_fields (self, line, ov))
          return MALFORMED (self, KT_WHY_FIELD);
        *minute = m;
        return KT_LINE_ERROR;
      }
  return KT_LINE_OTHER;
}

/* The group number of each of @names (--by or --sum: @flag) into @groups,
 * their number into *@n. "level" is the level group (for --by only). */
static gboolean
find_fields (KtParser *self, const char *flag, const char *const *names, gboolean pattern,
             guint max, guint32 *groups, guint *n, GError **error)
{
  *n = 0;
  for (const char *const *name = names; name != NULL && *name != NULL; name++)
    {
      int group = pcre2_substring_number_from_name (self->code, (PCRE2_SPTR) *name);

      if (*n == max)
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "%s: at most %u fields", flag, max);
          return FALSE;
        }
      if (g_str_equal (*name, "level") && g_str_equal (flag, "--sum"))
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                       "%s: 'level' is not a number: --sum adds up numeric groups", flag);
          return FALSE;
        }
      if (group == PCRE2_ERROR_NOUNIQUESUBSTRING)
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                       "%s: '%s' names more than one group of the pattern", flag, *name);
          return FALSE;
        }
      if (group <= 0)
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                       "%s: the pattern has no group (?<%s>...)%s", flag, *name,
                       pattern ? "" : " (without --pattern, a line has only 'level')");
          return FALSE;
        }
      groups[(*n)++] = (guint32) group;
    }
  return TRUE;
}

/* --time-format into @self: the default, iso8601, syslog or a checked
 * strptime-style format. */
static gboolean
set_time_format (KtParser *self, const char *time_format, GError **error)
{
  if (time_format == NULL || g_str_equal (time_format, "%Y-%m-%d %H:%M:%S"))
    self->time_format = g_strdup ("%Y-%m-%d %H:%M:%S");
  else if (g_str_equal (time_format, "iso8601"))
    self->time_kind = TIME_ISO8601;
  else if (g_str_equal (time_format, "syslog"))
    self->time_kind = TIME_SYSLOG;
  else if (!check_format (time_format, &self->no_year, error))
    return FALSE;
  else
    self->time_format = g_strdup (time_format);
  return TRUE;
}

/* @pattern compiled into @self (@anchored: the default line shape, which
 * starts at the line's start), with its time and level groups found. */
static gboolean
compile_pattern (KtParser *self, const char *pattern, gboolean anchored, GError **error)
{
  int errcode, group;
  PCRE2_SIZE erroffset;

  self->code = pcre2_compile ((PCRE2_SPTR) pattern, PCRE2_ZERO_TERMINATED,
                              anchored ? PCRE2_ANCHORED : 0, &errcode, &erroffset, NULL);
  if (self->code == NULL)
    {
      PCRE2_UCHAR msg[256];
      pcre2_get_error_message (errcode, msg, sizeof msg);
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "--pattern: at offset %zu: %s",
                   (size_t) erroffset, (const char *) msg);
      return FALSE;
    }
  group = pcre2_substring_number_from_name (self->code, (PCRE2_SPTR) "time");
  self->time_group = group > 0 ? (guint32) group : 0;
  group = pcre2_substring_number_from_name (self->code, (PCRE2_SPTR) "level");
  self->level_group = group > 0 ? (guint32) group : 0;
  if (self->time_group == 0 || self->level_group == 0)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE,
                           "--pattern: needs the named groups (?<time>...) and (?<level>...)");
      return FALSE;
    }
  return TRUE;
}

/* Whether @format is the default one, whether its fields are unset or
 * spell out the defaults (the options' own fallbacks give --levels ERROR
 * and --bucket 1m): such a parser takes kt_parser_new()'s fixed-position
 * path and the ERROR shortcut, several times faster than the general
 * pattern with the same results. */
static gboolean
is_default_format (const KtParseFormat *format)
{
  g_autofree char *time_format = format->time_format != NULL
    ? kt_parser_time_format_normal (format->time_format) : NULL;

  return format->pattern == NULL
    && (time_format == NULL || g_str_equal (time_format, "%Y-%m-%d %H:%M:%S"))
    && (format->levels == NULL
        || (format->levels[0] != NULL && g_str_equal (format->levels[0], "ERROR")
            && format->levels[1] == NULL))
    && format->bucket <= 1
    && (format->dimensions == NULL || format->dimensions[0] == NULL)
    && (format->sums == NULL || format->sums[0] == NULL);
}

KtParser *
kt_parser_new_format (const KtParseFormat *format, GError **error)
{
  static const char *const error_only[] = { "ERROR", NULL };
  g_autoptr(KtParser) self = NULL;
  g_autofree char *default_pattern = NULL;
  const char *pattern = format->pattern;

  if (format->input == KT_INPUT_TEXT && (format->time_field != NULL || format->level_field != NULL))
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "%s: text lines have no fields by path: "
                   "--pattern's groups time and level read them (give --input json or "
                   "logfmt for records of fields)",
                   format->time_field != NULL ? "--time-field" : "--level-field");
      return NULL;
    }
  if (format->input == KT_INPUT_TEXT && is_default_format (format))
    return kt_parser_new (error);
  if (format->bucket != 0 && format->bucket != 1 && format->bucket != 5 && format->bucket != 60)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE, "--bucket: expected 1m, 5m or 1h");
      return NULL;
    }

  self = g_new0 (KtParser, 1);
  self->custom = TRUE;
  self->bucket = format->bucket > 0 ? format->bucket : 1;
  self->levels = g_strdupv ((char **) (format->levels != NULL ? format->levels : error_only));
  if (format->input != KT_INPUT_TEXT)
    return kt_records_open (self, format, error) ? g_steal_pointer (&self) : NULL;
  if (!set_time_format (self, format->time_format, error))
    return NULL;

  /* Without --pattern: the default line shape, with this time and levels;
   * the time group is what the time format reads, whatever it is. */
  if (pattern == NULL)
    {
      g_autofree char *time_re = self->time_kind == TIME_ISO8601
        ? g_strdup ("\\S+")
        : self->time_kind == TIME_SYSLOG
          ? g_strdup ("[A-Z][a-z]{2} [ 0-9][0-9] [0-9]{2}:[0-9]{2}:[0-9]{2}")
          : format_regex (self->time_format);

      default_pattern = g_strdup_printf ("(?<time>%s) (?<level>[A-Za-z]+)(?: |\\z)", time_re);
      pattern = default_pattern;
    }
  if (!check_levels (pattern, self->levels, error)
      || !compile_pattern (self, pattern, format->pattern == NULL, error))
    return NULL;
  if (!find_fields (self, "--by", format->dimensions, format->pattern != NULL,
                    KT_MAX_DIMENSIONS, self->dim_group, &self->n_dims, error)
      || !find_fields (self, "--sum", format->sums, format->pattern != NULL, KT_MAX_SUMS,
                       self->sum_group, &self->n_sums, error))
    return NULL;
  self->jit = pcre2_jit_compile (self->code, PCRE2_JIT_COMPLETE) == 0;
  self->match = pcre2_match_data_create_from_pattern (self->code, NULL);
  if (self->match == NULL)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_INTERNAL, "cannot allocate pcre2 match data");
      return NULL;
    }
  return g_steal_pointer (&self);
}

char *
kt_parser_time_format_normal (const char *format)
{
  GString *out = g_string_new (NULL);

  for (const char *p = format; *p != '\0'; p++)
    if (p[0] == '%' && p[1] == 'F')
      g_string_append (out, "%Y-%m-%d"), p++;
    else if (p[0] == '%' && p[1] == 'T')
      g_string_append (out, "%H:%M:%S"), p++;
    else if (p[0] == '%' && p[1] != '\0')
      g_string_append_len (out, p++, 2);
    else
      g_string_append_c (out, *p);
  return g_string_free (out, FALSE);
}
