/* kt-parse-bench.c - the parse stage alone, beside its limit.
 *
 * Loads N log lines into memory, one value per line as ktally receives
 * them from Kafka (generated in-process exactly as kt-gen generates them
 * with --lines-per-value 1, or read from --file), then times, interleaved
 * and --repeat times each:
 *   parser  kt_parser_value() per value, as ktally's on_record() calls it;
 *   line    kt_parser_line() + kt_reducer_add() per line (no splitting);
 *   fixed   a hand-written fixed-position scan + kt_reducer_add(): checks
 *           the separators and digits at their places, validates the date,
 *           scans the level's letters and compares "ERROR". This is the
 *           parse limit: the same answers, no regex.
 * All three must classify every line the same way, and (for generated
 * data) their per-minute counts must equal the generator's truth; any
 * difference exits 1. One line of key=value results goes to stdout:
 *   lines= bytes= repeat= parser_ns= line_ns= fixed_ns= (median ns/line,
 *   thread CPU time) parser_wall_ns= ... errors= malformed= minutes= check=ok
 *
 *   kt-parse-bench [--lines N] [--seed S] [--malformed PERMILLE]
 *                  [--start "YYYY-MM-DD HH:MM:SS"] [--repeat R]
 *                  [--file FILE] [--truth FILE]
 *
 * --truth writes the generator's truth in kt-gen's format, so a caller
 * can check that these are the very lines kt-gen wrote to Kafka.
 * Benchmark infrastructure: links ktally's static library, never part of
 * ktally itself. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <glib.h>

#include "parse.h"
#include "reduce.h"

/* ---------------------------------------------------------------------- */
/* The generator: a copy of kt-gen's (tests/support/kt-gen.c), call for
 * call, so that the same seed gives the same lines. scripts/bench checks
 * that with --truth against kt-gen's own. */

static inline guint64
prng_next (guint64 *state)
{
  guint64 z = (*state += G_GUINT64_CONSTANT (0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * G_GUINT64_CONSTANT (0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * G_GUINT64_CONSTANT (0x94d049bb133111eb);
  return z ^ (z >> 31);
}

static inline guint
prng_below (guint64 *state, guint n)
{
  return (guint) (prng_next (state) % n);
}

static gint64
days_from_civil (gint64 y, unsigned m, unsigned d)
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
  char date[11];
  char time[9];
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

static gboolean
parse_start (const char *text, gint64 *out)
{
  int y, mo, d, h, mi, s, len = 0;

  if (sscanf (text, "%4d-%2d-%2d %2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &s, &len) != 6
      || text[len] != '\0' || y < 1000 || mo < 1 || mo > 12 || d < 1 || h > 23
      || mi > 59 || s > 59)
    return FALSE;
  *out = days_from_civil (y, (unsigned) mo, (unsigned) d) * 86400 + h * 3600 + mi * 60 + s;
  return TRUE;
}

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

static void
append_malformed (GString *out, const Stamp *s, guint64 *rng)
{
  switch (prng_below (rng, 8))
    {
    case 0:
      g_string_append_printf (out, "%s %s", s->date, s->time);
      break;
    case 1:
      g_string_append_printf (out, "%.4s-02-30 %s ERROR bad date", s->date, s->time);
      break;
    case 2:
      g_string_append_printf (out, "%s 25:61:00 ERROR bad time", s->date);
      break;
    case 3:
      g_string_append_printf (out, "%s 24:00:00 ERROR bad time", s->date);
      break;
    case 4:
      g_string_append_printf (out, " %s %s ERROR leading blank", s->date, s->time);
      break;
    case 5:
      g_string_append_printf (out, "%s %s  ERROR two spaces", s->date, s->time);
      break;
    case 6:
      g_string_append (out, "hello world");
      break;
    default:
      g_string_append_printf (out, "%s %s 123 x", s->date, s->time);
      break;
    }
}

/* Appends one line; TRUE if it is a counted ERROR line. */
static gboolean
append_line (GString *out, gint64 t, guint permille, guint64 *rng)
{
  Stamp s;
  guint pick;
  gsize i;

  stamp_from_seconds (t, &s);
  if (prng_below (rng, 1000) < permille)
    {
      append_malformed (out, &s, rng);
      return FALSE;
    }
  pick = prng_below (rng, 100);
  for (i = 0; i + 1 < G_N_ELEMENTS (levels) && pick >= levels[i].weight; i++)
    pick -= levels[i].weight;
  g_string_append_printf (out, "%s %s %s ", s.date, s.time, levels[i].level);
  append_message (out, rng);
  return i == 0;
}

/* ---------------------------------------------------------------------- */
/* The data: every value back to back in one buffer (as in a fetched
 * message set), with their starts. */

typedef struct
{
  GString *buf;
  GArray  *starts;  /* gsize, n_values + 1 entries */
  GArray  *truth;   /* KtMinuteCount, ascending; empty for --file */
} Data;

static void
data_add_end (Data *d)
{
  gsize at = d->buf->len;
  g_array_append_val (d->starts, at);
}

static void
generate (Data *d, gint64 n, guint64 seed, guint permille, gint64 t, int per_second)
{
  guint64 rng = seed;
  int in_second = 0;

  data_add_end (d);
  for (gint64 i = 0; i < n; i++)
    {
      if (append_line (d->buf, t, permille, &rng))
        {
          gint64 minute = (t - (((t % 60) + 60) % 60)) / 60;
          KtMinuteCount *last = d->truth->len
                                  ? &g_array_index (d->truth, KtMinuteCount, d->truth->len - 1)
                                  : NULL;
          if (last == NULL || last->minute != minute)
            {
              KtMinuteCount mc = { minute, 0 };
              g_array_append_val (d->truth, mc);
              last = &g_array_index (d->truth, KtMinuteCount, d->truth->len - 1);
            }
          last->count++;
        }
      if (per_second <= 0)  /* as kt-gen's --per-second */
        t += prng_below (&rng, 4);
      else if (++in_second == per_second)
        {
          t++;
          in_second = 0;
        }
      data_add_end (d);
    }
}

static gboolean
load_file (Data *d, const char *path, GError **error)
{
  g_autofree char *text = NULL;
  gsize len;
  const char *p, *end;

  if (!g_file_get_contents (path, &text, &len, error))
    return FALSE;
  data_add_end (d);
  for (p = text, end = text + len; p < end;)
    {
      const char *nl = memchr (p, '\n', (size_t) (end - p));
      const char *eol = nl ? nl : end;
      if (eol > p)
        {
          g_string_append_len (d->buf, p, eol - p);
          data_add_end (d);
        }
      p = eol + 1;
    }
  return TRUE;
}

static gboolean
write_truth (const char *path, GArray *truth, GError **error)
{
  g_autoptr (GString) out = g_string_new (NULL);

  for (guint i = 0; i < truth->len; i++)
    {
      const KtMinuteCount *mc = &g_array_index (truth, KtMinuteCount, i);
      Stamp s;
      stamp_from_seconds (mc->minute * 60, &s);
      g_string_append_printf (out, "%s %s\t%" G_GUINT64_FORMAT "\n", s.date, s.time, mc->count);
    }
  return g_file_set_contents (path, out->str, (gssize) out->len, error);
}

/* ---------------------------------------------------------------------- */
/* The fixed-position scan: what kt_parser_line() decides, without pcre2. */

static inline gboolean
is_digit (char c)
{
  return (unsigned char) (c - '0') <= 9;
}

static inline int
d2 (const char *p)
{
  return (p[0] - '0') * 10 + (p[1] - '0');
}

static inline gboolean
is_letter (char c)
{
  return (unsigned char) ((c | 0x20) - 'a') < 26;
}

static KtLineKind
fixed_line (const char *s, gsize n, gint64 *minute)
{
  static const guint8 digit_at[14] = { 0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18 };
  static const guint8 mdays[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
  int year, month, day, hour, min, sec, dim;
  gsize i;

  if (n < 21 || s[4] != '-' || s[7] != '-' || s[10] != ' ' || s[13] != ':'
      || s[16] != ':' || s[19] != ' ')
    return KT_LINE_MALFORMED;
  for (i = 0; i < sizeof digit_at; i++)
    if (!is_digit (s[digit_at[i]]))
      return KT_LINE_MALFORMED;
  /* The level: one or more ASCII letters, then a space or the end. */
  for (i = 20; i < n && is_letter (s[i]); i++)
    ;
  if (i == 20 || (i < n && s[i] != ' '))
    return KT_LINE_MALFORMED;

  year = d2 (s) * 100 + d2 (s + 2);
  month = d2 (s + 5);
  day = d2 (s + 8);
  hour = d2 (s + 11);
  min = d2 (s + 14);
  sec = d2 (s + 17);
  if (year < 1000 || month < 1 || month > 12 || day < 1 || hour > 23 || min > 59 || sec > 60)
    return KT_LINE_MALFORMED;
  dim = mdays[month - 1];
  if (month == 2 && ((year % 4 == 0 && year % 100 != 0) || year % 400 == 0))
    dim = 29;
  if (day > dim)
    return KT_LINE_MALFORMED;

  if (i - 20 != 5 || memcmp (s + 20, "ERROR", 5) != 0)
    return KT_LINE_OTHER;
  *minute = days_from_civil (year, (unsigned) month, (unsigned) day) * 1440 + hour * 60 + min;
  return KT_LINE_ERROR;
}

/* ---------------------------------------------------------------------- */

typedef enum
{
  RUN_PARSER,
  RUN_LINE,
  RUN_FIXED,
  N_RUNS
} RunKind;

static const char *const run_names[N_RUNS] = { "parser", "line", "fixed" };

static double
clock_ns (clockid_t id)
{
  struct timespec ts;
  clock_gettime (id, &ts);
  return (double) ts.tv_sec * 1e9 + (double) ts.tv_nsec;
}

/* One timed pass over every value. */
static void
run_once (RunKind kind, const Data *d, KtParser *parser, KtReducer *reducer,
          KtParseCounts *counts, double *cpu_ns, double *wall_ns)
{
  const char *buf = d->buf->str;
  const gsize *starts = (const gsize *) (void *) d->starts->data;
  guint n = d->starts->len - 1;
  double c0, w0;

  memset (counts, 0, sizeof *counts);
  kt_reducer_clear (reducer);
  w0 = clock_ns (CLOCK_MONOTONIC);
  c0 = clock_ns (CLOCK_THREAD_CPUTIME_ID);
  switch (kind)
    {
    case RUN_PARSER:
      for (guint i = 0; i < n; i++)
        {
          const char *bad = NULL;
          gsize bad_len = 0;
          kt_parser_value (parser, buf + starts[i], starts[i + 1] - starts[i], reducer,
                           counts, &bad, &bad_len);
        }
      break;
    case RUN_LINE:
    case RUN_FIXED:
      for (guint i = 0; i < n; i++)
        {
          gint64 minute = 0;
          KtLineKind k = kind == RUN_LINE
                           ? kt_parser_line (parser, buf + starts[i], starts[i + 1] - starts[i], &minute)
                           : fixed_line (buf + starts[i], starts[i + 1] - starts[i], &minute);
          counts->lines++;
          if (k == KT_LINE_ERROR)
            {
              counts->errors++;
              kt_reducer_add (reducer, minute, 1);
            }
          else if (k == KT_LINE_MALFORMED)
            counts->malformed++;
        }
      break;
    case N_RUNS:
    default:
      g_assert_not_reached ();
    }
  *cpu_ns = clock_ns (CLOCK_THREAD_CPUTIME_ID) - c0;
  *wall_ns = clock_ns (CLOCK_MONOTONIC) - w0;
}

static int
cmp_double (gconstpointer a, gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

static double
median (GArray *v)
{
  g_array_sort (v, cmp_double);
  if (v->len == 0)
    return 0;
  if (v->len % 2)
    return g_array_index (v, double, v->len / 2);
  return (g_array_index (v, double, v->len / 2 - 1) + g_array_index (v, double, v->len / 2)) / 2;
}

static gboolean
same_minutes (GArray *a, GArray *b)
{
  if (a->len != b->len)
    return FALSE;
  for (guint i = 0; i < a->len; i++)
    {
      const KtMinuteCount *x = &g_array_index (a, KtMinuteCount, i);
      const KtMinuteCount *y = &g_array_index (b, KtMinuteCount, i);
      if (x->minute != y->minute || x->count != y->count)
        return FALSE;
    }
  return TRUE;
}

int
main (int argc, char **argv)
{
  gint64 opt_lines = 2000000, opt_seed = 1;
  int opt_malformed = 20, opt_repeat = 5, opt_per_second = 0;
  g_autofree char *opt_start = NULL, *opt_file = NULL, *opt_truth = NULL;
  GOptionEntry entries[] = {
    { "lines", 'n', 0, G_OPTION_ARG_INT64, &opt_lines, "Lines to generate (default 2000000)", "N" },
    { "seed", 's', 0, G_OPTION_ARG_INT64, &opt_seed, "kt-gen's --seed (default 1)", "S" },
    { "malformed", 'm', 0, G_OPTION_ARG_INT, &opt_malformed,
      "kt-gen's --malformed (default 20)", "PERMILLE" },
    { "per-second", 0, 0, G_OPTION_ARG_INT, &opt_per_second,
      "kt-gen's --per-second (default 0)", "N" },
    { "start", 0, 0, G_OPTION_ARG_STRING, &opt_start, "kt-gen's --start", "TIME" },
    { "repeat", 'r', 0, G_OPTION_ARG_INT, &opt_repeat, "Passes of each kind (default 5)", "R" },
    { "file", 'f', 0, G_OPTION_ARG_FILENAME, &opt_file,
      "Read lines from FILE instead of generating them", "FILE" },
    { "truth", 'T', 0, G_OPTION_ARG_FILENAME, &opt_truth,
      "Write the generator's truth here (kt-gen's format)", "FILE" },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- time ktally's parser");
  g_autoptr (GError) error = NULL;
  g_autoptr (KtParser) parser = NULL;
  g_autoptr (KtReducer) reducer = kt_reducer_new ();
  GArray *cpu[N_RUNS], *wall[N_RUNS];
  g_autoptr (GArray) ref_minutes = NULL;
  KtParseCounts ref = { 0 }, counts;
  Data d;
  gint64 t;
  guint n;
  gboolean ok = TRUE;

  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      g_printerr ("kt-parse-bench: %s\n", error->message);
      return 2;
    }
  if (opt_lines < 1 || opt_repeat < 1 || opt_malformed < 0 || opt_malformed > 1000
      || !parse_start (opt_start ? opt_start : "2017-07-30 14:00:00", &t))
    {
      g_printerr ("kt-parse-bench: bad --lines, --repeat, --malformed or --start\n");
      return 2;
    }

  d.buf = g_string_sized_new ((gsize) opt_lines * 48);
  d.starts = g_array_sized_new (FALSE, FALSE, sizeof (gsize), (guint) opt_lines + 1);
  d.truth = g_array_new (FALSE, FALSE, sizeof (KtMinuteCount));
  if (opt_file != NULL)
    {
      if (!load_file (&d, opt_file, &error))
        {
          g_printerr ("kt-parse-bench: %s\n", error->message);
          return 1;
        }
    }
  else
    generate (&d, opt_lines, (guint64) opt_seed, (guint) opt_malformed, t, opt_per_second);
  if (opt_truth != NULL && opt_file == NULL && !write_truth (opt_truth, d.truth, &error))
    {
      g_printerr ("kt-parse-bench: %s\n", error->message);
      return 1;
    }
  n = d.starts->len - 1;

  parser = kt_parser_new (&error);
  if (parser == NULL)
    {
      g_printerr ("kt-parse-bench: %s\n", error->message);
      return 1;
    }
  for (int k = 0; k < N_RUNS; k++)
    {
      cpu[k] = g_array_new (FALSE, FALSE, sizeof (double));
      wall[k] = g_array_new (FALSE, FALSE, sizeof (double));
    }

  /* Interleaved, so that a noisy neighbour hurts all three alike; every
   * pass is checked against the first parser pass (and the truth). */
  for (int r = 0; r < opt_repeat; r++)
    for (int k = 0; k < N_RUNS; k++)
      {
        double c, w;
        g_autoptr (GArray) minutes = NULL;

        run_once ((RunKind) k, &d, parser, reducer, &counts, &c, &w);
        g_array_append_val (cpu[k], c);
        g_array_append_val (wall[k], w);
        minutes = kt_reducer_sorted (reducer);
        if (ref_minutes == NULL)
          {
            ref = counts;
            ref_minutes = g_steal_pointer (&minutes);
            if (opt_file == NULL && !same_minutes (ref_minutes, d.truth))
              {
                g_printerr ("kt-parse-bench: the parser's counts differ from the truth "
                            "(%u vs %u minutes)\n", ref_minutes->len, d.truth->len);
                ok = FALSE;
              }
          }
        else if (counts.lines != ref.lines || counts.errors != ref.errors
                 || counts.malformed != ref.malformed || !same_minutes (minutes, ref_minutes))
          {
            g_printerr ("kt-parse-bench: %s disagrees with the parser: %" G_GUINT64_FORMAT
                        " lines, %" G_GUINT64_FORMAT " ERROR, %" G_GUINT64_FORMAT
                        " malformed vs %" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT ", %"
                        G_GUINT64_FORMAT "\n", run_names[k], counts.lines, counts.errors,
                        counts.malformed, ref.lines, ref.errors, ref.malformed);
            ok = FALSE;
          }
      }

  printf ("lines=%u bytes=%" G_GSIZE_FORMAT " repeat=%d", n, d.buf->len, opt_repeat);
  for (int k = 0; k < N_RUNS; k++)
    printf (" %s_ns=%.2f", run_names[k], median (cpu[k]) / n);
  for (int k = 0; k < N_RUNS; k++)
    printf (" %s_wall_ns=%.2f", run_names[k], median (wall[k]) / n);
  printf (" errors=%" G_GUINT64_FORMAT " malformed=%" G_GUINT64_FORMAT " minutes=%u check=%s\n",
          ref.errors, ref.malformed, ref_minutes ? ref_minutes->len : 0, ok ? "ok" : "FAILED");

  for (int k = 0; k < N_RUNS; k++)
    {
      g_array_unref (cpu[k]);
      g_array_unref (wall[k]);
    }
  g_string_free (d.buf, TRUE);
  g_array_unref (d.starts);
  g_array_unref (d.truth);
  return ok ? 0 : 1;
}
