/* kt-lines.c - kt-gen's line generator, shared (see kt-lines.h).
 *
 * Moved here from kt-gen.c call for call: every PRNG draw happens in the
 * order it always did, so a seed still gives the lines it gave before,
 * and the truths recorded with older builds stay valid. */
#include "kt-lines.h"

#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------------- */
/* Deterministic randomness */

/* splitmix64: tiny, fast and specified bit for bit, so a seed means the
 * same data everywhere (rand() differs between C libraries). */
static inline guint64
prng_next (guint64 *state)
{
  guint64 z = (*state += G_GUINT64_CONSTANT (0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * G_GUINT64_CONSTANT (0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * G_GUINT64_CONSTANT (0x94d049bb133111eb);
  return z ^ (z >> 31);
}

/* Uniform in [0, n): the bias of a plain modulo is below 2^-50 for the
 * small n used here, and a plain modulo keeps the stream easy to port. */
static inline guint
prng_below (guint64 *state, guint n)
{
  return (guint) (prng_next (state) % n);
}

/* ---------------------------------------------------------------------- */
/* Calendar arithmetic on a proleptic Gregorian UTC clock */

/* Howard Hinnant's days_from_civil / civil_from_days: exact, no time zone
 * or locale involved, and far faster than strftime per line. */
gint64
kt_lines_days_from_civil (gint64 y, unsigned m, unsigned d)
{
  y -= m <= 2;
  gint64 era = (y >= 0 ? y : y - 399) / 400;
  unsigned yoe = (unsigned) (y - era * 400);
  unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + (gint64) doe - 719468;
}

static void
civil_from_days (gint64 z, int *y, int *m, int *d)
{
  z += 719468;
  gint64 era = (z >= 0 ? z : z - 146096) / 146097;
  unsigned doe = (unsigned) (z - era * 146097);
  unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  unsigned mp = (5 * doy + 2) / 153;
  *d = (int) (doy - (153 * mp + 2) / 5 + 1);
  *m = (int) (mp < 10 ? mp + 3 : mp - 9);
  *y = (int) ((gint64) yoe + era * 400 + (*m <= 2));
}

typedef struct
{
  char date[11];  /* YYYY-MM-DD */
  char time[9];   /* HH:MM:SS */
} Stamp;

static void
stamp_from_seconds (gint64 t, Stamp *s)
{
  gint64 days = t >= 0 ? t / 86400 : (t - 86399) / 86400;
  int secs = (int) (t - days * 86400);
  int y, m, d;

  civil_from_days (days, &y, &m, &d);
  g_snprintf (s->date, sizeof s->date, "%04d-%02d-%02d", y, m, d);
  g_snprintf (s->time, sizeof s->time, "%02d:%02d:%02d", secs / 3600,
              secs / 60 % 60, secs % 60);
}

void
kt_lines_format_time (gint64 t, char out[static 20])
{
  Stamp s;

  stamp_from_seconds (t, &s);
  g_snprintf (out, 20, "%s %s", s.date, s.time);
}

gboolean
kt_lines_parse_time (const char *text, gint64 *out)
{
  int y, mo, d, h, mi, s, len = 0;
  char again[20];

  if (sscanf (text, "%4d-%2d-%2d %2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &s,
              &len) != 6
      || text[len] != '\0' || y < 1000 || mo < 1 || mo > 12 || d < 1
      || h > 23 || mi > 59 || s > 59)
    return FALSE;
  *out = kt_lines_days_from_civil (y, (unsigned) mo, (unsigned) d) * 86400
         + h * 3600 + mi * 60 + s;
  /* Round-trip to refuse dates like 2017-02-30. */
  kt_lines_format_time (*out, again);
  return strcmp (again, text) == 0;
}

/* ---------------------------------------------------------------------- */
/* The lines */

/* Levels of well-formed lines, weights in per cent: ERROR ~30%. */
static const struct
{
  const char *level;
  guint weight;
} levels[] = {
  { "ERROR", 30 }, { "INFO", 30 }, { "WARN", 17 }, { "DEBUG", 13 },
  { "error", 5 },  { "ERRORS", 5 },
};

static const char *const words[] = {
  "disk",    "quota",   "exceeded", "request", "timeout", "user",
  "session", "expired", "retry",    "cache",   "miss",    "payment",
  "ERROR",   "failed",  "ok",       "queue",   "full",    "db",
};

/* Appends a message of 1-4 words and a number. Words include "ERROR" so
 * that only the level field decides what counts. */
static void
append_message (GString *out, guint64 *rng)
{
  guint nwords = 1 + prng_below (rng, 4);

  for (guint i = 0; i < nwords; i++)
    {
      if (i > 0)
        g_string_append_c (out, ' ');
      g_string_append (out, words[prng_below (rng, G_N_ELEMENTS (words))]);
    }
  g_string_append_printf (out, " %u", prng_below (rng, 100000));
}

/* Appends one malformed line. Those with a readable date use the current
 * clock, so that a parser that wrongly accepts them corrupts a real
 * minute's count. */
static void
append_malformed (GString *out, const Stamp *s, guint64 *rng)
{
  switch (prng_below (rng, 8))
    {
    case 0: /* missing level */
      g_string_append_printf (out, "%s %s", s->date, s->time);
      break;
    case 1: /* impossible date */
      g_string_append_printf (out, "%.4s-02-30 %s ERROR bad date", s->date,
                              s->time);
      break;
    case 2: /* impossible time */
      g_string_append_printf (out, "%s 25:61:00 ERROR bad time", s->date);
      break;
    case 3: /* 24:00:00 is not a time of day here */
      g_string_append_printf (out, "%s 24:00:00 ERROR bad time", s->date);
      break;
    case 4: /* leading blank */
      g_string_append_printf (out, " %s %s ERROR leading blank", s->date,
                              s->time);
      break;
    case 5: /* two spaces before the level */
      g_string_append_printf (out, "%s %s  ERROR two spaces", s->date,
                              s->time);
      break;
    case 6: /* garbage */
      g_string_append (out, "hello world");
      break;
    default: /* a number as the level */
      g_string_append_printf (out, "%s %s 123 x", s->date, s->time);
      break;
    }
}

KtLinesKind
kt_lines_append (KtLines *self, GString *out, gint64 t)
{
  gsize start = out->len;
  Stamp s;
  guint pick;
  gsize i;

  stamp_from_seconds (t, &s);
  if (prng_below (&self->rng, 1000) < self->malformed)
    {
      append_malformed (out, &s, &self->rng);
      return KT_LINES_MALFORMED;
    }
  pick = prng_below (&self->rng, 100);
  for (i = 0; i + 1 < G_N_ELEMENTS (levels) && pick >= levels[i].weight; i++)
    pick -= levels[i].weight;
  g_string_append_printf (out, "%s %s %s ", s.date, s.time, levels[i].level);
  append_message (out, &self->rng);
  /* Longer lines (multi-line records of ~1 KB): more words, drawn only
   * when asked for, so that the unpadded stream stays what it was. */
  while (out->len - start < self->min_bytes)
    {
      g_string_append_c (out, ' ');
      g_string_append (out, words[prng_below (&self->rng, G_N_ELEMENTS (words))]);
    }
  return i == 0 ? KT_LINES_ERROR : KT_LINES_OTHER;
}

void
kt_lines_init (KtLines *self, guint64 seed, gint64 start, int per_second,
               guint malformed_permille, guint min_bytes)
{
  memset (self, 0, sizeof *self);
  self->rng = seed;
  self->t = start;
  self->per_second = per_second;
  self->malformed = malformed_permille;
  self->min_bytes = min_bytes;
}

KtLinesKind
kt_lines_next (KtLines *self, GString *out, gint64 *t)
{
  KtLinesKind kind = kt_lines_append (self, out, self->t);

  if (t != NULL)
    *t = self->t;
  /* A busy service logs thousands of lines a second; the default (0-3 s
   * apart) spreads a few million lines over weeks. */
  if (self->per_second <= 0)
    self->t += prng_below (&self->rng, 4);
  else if (++self->in_second == self->per_second)
    {
      self->t++;
      self->in_second = 0;
    }
  return kind;
}

/* ---------------------------------------------------------------------- */
/* Truth */

GArray *
kt_lines_truth_new (void)
{
  return g_array_new (FALSE, FALSE, sizeof (KtLinesMinute));
}

void
kt_lines_truth_add (GArray *truth, gint64 t)
{
  gint64 minute = (t - (((t % 60) + 60) % 60)) / 60;

  if (truth->len == 0
      || g_array_index (truth, KtLinesMinute, truth->len - 1).minute != minute)
    {
      KtLinesMinute mc = { minute, 0 };

      /* Time never goes back within one stream: an older minute here is
       * a caller's bug that would write an unsorted truth. */
      g_return_if_fail (truth->len == 0
                        || g_array_index (truth, KtLinesMinute, truth->len - 1).minute < minute);
      g_array_append_val (truth, mc);
    }
  g_array_index (truth, KtLinesMinute, truth->len - 1).count++;
}

gboolean
kt_lines_truth_write (GArray *truth, const char *path, GError **error)
{
  g_autoptr (GString) out = g_string_sized_new (truth->len * 24 + 1);

  for (guint i = 0; i < truth->len; i++)
    {
      const KtLinesMinute *mc = &g_array_index (truth, KtLinesMinute, i);
      char stamp[20];

      kt_lines_format_time (mc->minute * 60, stamp);
      g_string_append_printf (out, "%s\t%" G_GUINT64_FORMAT "\n", stamp, mc->count);
    }
  return g_file_set_contents (path, out->str, (gssize) out->len, error);
}
