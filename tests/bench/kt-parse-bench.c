/* kt-parse-bench.c - the parse stage alone, beside its limit.
 *
 * Loads N log lines into memory, one value per line as ktally receives
 * them from Kafka (generated in-process by kt-gen's own generator,
 * tests/support/kt-lines.c, as kt-gen writes them with --lines-per-value
 * 1, or read from --file), then times, interleaved
 * and --repeat times each:
 *   parser  kt_parser_value() per value, as ktally's on_record() calls it;
 *   line    kt_parser_line() + kt_reducer_add() per line (no splitting);
 *   fixed   a hand-written fixed-position scan + kt_reducer_add(): checks
 *           the separators and digits at their places, validates the date,
 *           scans the level's letters and compares "ERROR". This is the
 *           parse limit: the same answers, no regex;
 *   options kt_parser_value() with the parser `ktally run` builds from its
 *           options' defaults (kt_counts_parser()): must cost what parser
 *           does (the fixed-position path), not what general does;
 *   general kt_parser_value() with the default format read through a
 *           general pattern (--pattern), what every line paid while the
 *           default options missed the fast path.
 * All five must classify every line the same way, and (for generated
 * data) their per-minute counts must equal the generator's truth; any
 * difference exits 1. One line of key=value results goes to stdout:
 *   lines= bytes= repeat= parser_ns= line_ns= fixed_ns= options_ns= general_ns=
 *   (median ns/line,
 *   thread CPU time) parser_wall_ns= ... errors= malformed= minutes= check=ok
 *
 *   kt-parse-bench [--lines N] [--seed S] [--malformed PERMILLE]
 *                  [--start "YYYY-MM-DD HH:MM:SS"] [--repeat R]
 *                  [--file FILE] [--truth FILE]
 *   kt-parse-bench --shape ecs|logfmt|otlp [--lines N] [--records-per-value K] ...
 *
 * --shape times a structured input instead: kt-gen's records of that
 * shape (kt-shapes.c: json, logfmt, an OTLP request of K records a value),
 * parsed with the options kt-gen prints for them (kt_parser_value_keyed,
 * --by and --sum as ktally runs them), beside the default text parser
 * over as many text lines (one a value), interleaved; the rows must equal
 * the generator's truth. One line: records= bytes= shape_ns= (median CPU
 * ns per record with --by and --sum) plain_ns= (per record counted as the
 * text shape counts: per minute, no --by or --sum) text_ns= (per text
 * line) ratio= (text_ns / plain_ns: the structured input's records/s over
 * the text lines/s, parsing alone) check=ok.
 *
 * --truth writes the generator's truth in kt-gen's format, so a caller
 * can check that these are the very lines kt-gen wrote to Kafka.
 * Benchmark infrastructure: links ktally's static library, never part of
 * ktally itself. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include <glib.h>

#include "kt-lines.h"
#include "kt-shapes.h"
#include "counts.h"
#include "options.h"
#include "parse.h"
#include "reduce.h"

/* ---------------------------------------------------------------------- */
/* The data: every value back to back in one buffer (as in a fetched
 * message set), with their starts. */

typedef struct
{
  GString *buf;
  GArray  *starts;  /* gsize, n_values + 1 entries */
  GArray  *truth;   /* KtLinesMinute, ascending; empty for --file */
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
  KtLines gen;

  kt_lines_init (&gen, seed, t, per_second, permille, 0);
  data_add_end (d);
  for (gint64 i = 0; i < n; i++)
    {
      gint64 at;

      if (kt_lines_next (&gen, d->buf, &at) == KT_LINES_ERROR)
        kt_lines_truth_add (d->truth, at);
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
  *minute = kt_lines_days_from_civil (year, (unsigned) month, (unsigned) day) * 1440 + hour * 60 + min;
  return KT_LINE_ERROR;
}

/* ---------------------------------------------------------------------- */

typedef enum
{
  RUN_PARSER,
  RUN_LINE,
  RUN_FIXED,
  RUN_OPTIONS,
  RUN_GENERAL,
  N_RUNS
} RunKind;

static const char *const run_names[N_RUNS] = { "parser", "line", "fixed", "options",
                                                 "general" };

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
    case RUN_OPTIONS:
    case RUN_GENERAL:
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

static gint
compare_text (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
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

/* The reducer's minutes (KtMinuteCount) against the generator's truth. */
static gboolean
same_as_truth (GArray *minutes, GArray *truth)
{
  if (minutes->len != truth->len)
    return FALSE;
  for (guint i = 0; i < minutes->len; i++)
    {
      const KtMinuteCount *x = &g_array_index (minutes, KtMinuteCount, i);
      const KtLinesMinute *y = &g_array_index (truth, KtLinesMinute, i);
      if (x->minute != y->minute || x->count != y->count)
        return FALSE;
    }
  return TRUE;
}

/* ---------------------------------------------------------------------- */
/* --shape: a structured input beside the text lines */

/* The parser of kt-gen's options for @shaped, from the count kinds'
 * option rows as `ktally run` loads them. */
static KtParser *
shaped_parser (KtShaped *shaped, gboolean plain, KtCountOptions *options, GError **error)
{
  g_auto (GStrv) given = kt_shaped_options (shaped);

  for (const KtOption *row = kt_count_option_rows; row->name != NULL; row++)
    if (row->fallback != NULL && !kt_option_set_text (row, row->fallback, options, error))
      return NULL;
  for (char **o = given; *o != NULL; o++)
    {
      const char *eq = strchr (*o, '=');
      g_autofree char *name = g_strndup (*o + 2, (gsize) (eq - *o - 2));

      if (plain && (g_str_equal (name, "by") || g_str_equal (name, "sum")))
        continue;

      for (const KtOption *row = kt_count_option_rows; row->name != NULL; row++)
        if (g_str_equal (row->name, name) && !kt_option_set_text (row, eq + 1, options, error))
          return NULL;
    }
  return kt_counts_parser (options, error);
}

/* The rows of @keyed as kt_shaped_truth_write() writes a truth. */
static char *
rows_text (KtKeyedCounts *keyed, gboolean has_sum)
{
  g_autoptr (GArray) rows = kt_keyed_counts_sorted (keyed);
  g_autoptr (GPtrArray) lines = g_ptr_array_new_with_free_func (g_free);
  GString *out = g_string_new (NULL);

  for (guint i = 0; i < rows->len; i++)
    {
      const KtKeyedRow *r = &g_array_index (rows, KtKeyedRow, i);
      GString *line = g_string_new (NULL);
      char when[20], sum[48];

      kt_minute_format (r->bucket, when);
      g_string_append (line, when);
      for (const guint8 *k = r->key; k < r->key + r->key_len; k += 1 + k[0])
        g_string_append_printf (line, "\t%.*s", k[0], k + 1);
      g_string_append_printf (line, "\t%" G_GUINT64_FORMAT, r->count);
      if (has_sum)
        {
          kt_sum_format (r->sums[0], sum);
          g_string_append_printf (line, "\t%s", sum);
        }
      g_ptr_array_add (lines, g_string_free (line, FALSE));
    }
  g_ptr_array_sort (lines, compare_text);
  for (guint i = 0; i < lines->len; i++)
    g_string_append_printf (out, "%s\n", (char *) lines->pdata[i]);
  return g_string_free (out, FALSE);
}

static int
run_shape (const char *shape, gint64 n_records, guint64 seed, guint malformed, gint64 start,
           int per_second, int repeat, int per_value)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (KtShaped) shaped = kt_shaped_new (shape, seed, start, per_second, malformed, 100,
                                               FALSE, NULL, NULL, 0, &error);
  KtCountOptions options = { 0 }, plain_options = { 0 };
  g_autoptr (KtParser) parser = NULL;
  g_autoptr (KtParser) plain = NULL;
  g_autoptr (GArray) plain_cpu = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr (KtParser) text = kt_parser_new (NULL);
  g_autoptr (KtKeyLimit) limit = kt_key_limit_new (1000000);
  g_autoptr (KtKeyedCounts) keyed = NULL;
  g_autoptr (KtReducer) reducer = kt_reducer_new ();
  g_autoptr (GArray) shape_cpu = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr (GArray) text_cpu = g_array_new (FALSE, FALSE, sizeof (double));
  g_autofree char *truth_path = NULL, *truth = NULL, *got = NULL;
  Data values = { g_string_new (NULL), g_array_new (FALSE, FALSE, sizeof (gsize)), NULL };
  Data lines = { g_string_new (NULL), g_array_new (FALSE, FALSE, sizeof (gsize)),
                 kt_lines_truth_new () };
  guint64 kinds[3] = { 0 };
  gboolean ok = TRUE;
  int fd;

  if (shaped == NULL || (parser = shaped_parser (shaped, FALSE, &options, &error)) == NULL
      || (plain = shaped_parser (shaped, TRUE, &plain_options, &error)) == NULL)
    {
      g_printerr ("kt-parse-bench: %s\n", error->message);
      return 2;
    }
  keyed = kt_keyed_counts_new (-1, options.sums != NULL ? g_strv_length (options.sums) : 0, limit);
  data_add_end (&values);
  for (gint64 r = 0; r < n_records;)
    {
      guint k = kt_shaped_per_value (shaped) ? (guint) MIN (per_value, n_records - r) : 1;

      kt_shaped_value (shaped, values.buf, k, kinds);
      data_add_end (&values);
      r += k;
    }
  generate (&lines, n_records, seed, malformed, start, per_second);
  fd = g_file_open_tmp ("kt-parse-bench-XXXXXX", &truth_path, &error);
  if (fd < 0 || !kt_shaped_truth_write (shaped, truth_path, &error)
      || !g_file_get_contents (truth_path, &truth, NULL, &error))
    {
      g_printerr ("kt-parse-bench: %s\n", error->message);
      return 1;
    }
  close (fd);
  g_unlink (truth_path);

  for (int round = 0; round < repeat; round++)
    {
      KtParseCounts counts = { 0 };
      double c0;

      kt_keyed_counts_clear (keyed);
      kt_key_limit_clear (limit);
      c0 = clock_ns (CLOCK_THREAD_CPUTIME_ID);
      for (guint i = 0; i + 1 < values.starts->len; i++)
        {
          gsize from = g_array_index (values.starts, gsize, i);

          kt_parser_value_keyed (parser, values.buf->str + from,
                                 g_array_index (values.starts, gsize, i + 1) - from, keyed,
                                 &counts, NULL, NULL);
        }
      c0 = clock_ns (CLOCK_THREAD_CPUTIME_ID) - c0;
      g_array_append_val (shape_cpu, c0);
      if (round == 0)
        {
          got = rows_text (keyed, options.sums != NULL);
          if (!g_str_equal (got, truth))
            {
              g_printerr ("kt-parse-bench: --shape %s: the rows differ from the truth\n",
                          shape);
              if (g_getenv ("KT_PARSE_BENCH_DIFF") != NULL)
                g_printerr ("--- truth\n%s--- parsed\n%s", truth, got);
              ok = FALSE;
            }
          if (counts.errors != kinds[KT_LINES_ERROR])
            {
              g_printerr ("kt-parse-bench: --shape %s: %" G_GUINT64_FORMAT " counted, the "
                          "generator %" G_GUINT64_FORMAT "\n", shape, counts.errors,
                          kinds[KT_LINES_ERROR]);
              ok = FALSE;
            }
        }

      /* The same records counted as the text shape counts lines: per
       * minute, no --by, no --sum. */
      memset (&counts, 0, sizeof counts);
      kt_reducer_clear (reducer);
      c0 = clock_ns (CLOCK_THREAD_CPUTIME_ID);
      for (guint i = 0; i + 1 < values.starts->len; i++)
        {
          gsize from = g_array_index (values.starts, gsize, i);

          kt_parser_value (plain, values.buf->str + from,
                           g_array_index (values.starts, gsize, i + 1) - from, reducer, &counts,
                           NULL, NULL);
        }
      c0 = clock_ns (CLOCK_THREAD_CPUTIME_ID) - c0;
      g_array_append_val (plain_cpu, c0);

      memset (&counts, 0, sizeof counts);
      kt_reducer_clear (reducer);
      c0 = clock_ns (CLOCK_THREAD_CPUTIME_ID);
      for (guint i = 0; i + 1 < lines.starts->len; i++)
        {
          gsize from = g_array_index (lines.starts, gsize, i);

          kt_parser_value (text, lines.buf->str + from,
                           g_array_index (lines.starts, gsize, i + 1) - from, reducer, &counts,
                           NULL, NULL);
        }
      c0 = clock_ns (CLOCK_THREAD_CPUTIME_ID) - c0;
      g_array_append_val (text_cpu, c0);
    }
  {
    double shape_ns = median (shape_cpu) / (double) n_records;
    double plain_ns = median (plain_cpu) / (double) n_records;
    double text_ns = median (text_cpu) / (double) n_records;

    printf ("shape=%s records=%" G_GINT64_FORMAT " values=%u bytes=%" G_GSIZE_FORMAT
            " text_bytes=%" G_GSIZE_FORMAT " repeat=%d shape_ns=%.2f plain_ns=%.2f "
            "text_ns=%.2f ratio=%.3f errors=%" G_GUINT64_FORMAT " check=%s\n", shape, n_records,
            values.starts->len - 1, values.buf->len, lines.buf->len, repeat, shape_ns, plain_ns,
            text_ns, text_ns / plain_ns, kinds[KT_LINES_ERROR], ok ? "ok" : "FAILED");
  }
  kt_option_table_clear (kt_count_option_rows, &options);
  kt_option_table_clear (kt_count_option_rows, &plain_options);
  g_string_free (values.buf, TRUE);
  g_array_unref (values.starts);
  g_string_free (lines.buf, TRUE);
  g_array_unref (lines.starts);
  g_array_unref (lines.truth);
  return ok ? 0 : 1;
}

int
main (int argc, char **argv)
{
  gint64 opt_lines = 2000000, opt_seed = 1;
  int opt_malformed = 20, opt_repeat = 5, opt_per_second = 0, opt_per_value = 10;
  g_autofree char *opt_start = NULL, *opt_file = NULL, *opt_truth = NULL, *opt_shape = NULL;
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
    { "shape", 0, 0, G_OPTION_ARG_STRING, &opt_shape,
      "A structured input instead: kt-gen's ecs, logfmt or otlp records", "SHAPE" },
    { "records-per-value", 0, 0, G_OPTION_ARG_INT, &opt_per_value,
      "--shape otlp: log records a request (default 10)", "K" },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- time ktally's parser");
  g_autoptr (GError) error = NULL;
  g_autoptr (KtParser) parser = NULL;
  g_autoptr (KtParser) options_parser = NULL;
  g_autoptr (KtParser) general_parser = NULL;
  KtParser *parsers[N_RUNS];
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
      || !kt_lines_parse_time (opt_start ? opt_start : "2017-07-30 14:00:00", &t))
    {
      g_printerr ("kt-parse-bench: bad --lines, --repeat, --malformed or --start\n");
      return 2;
    }
  if (opt_shape != NULL)
    return run_shape (opt_shape, opt_lines, (guint64) opt_seed, (guint) opt_malformed, t,
                      opt_per_second, opt_repeat, MAX (opt_per_value, 1));

  d.buf = g_string_sized_new ((gsize) opt_lines * 48);
  d.starts = g_array_sized_new (FALSE, FALSE, sizeof (gsize), (guint) opt_lines + 1);
  d.truth = kt_lines_truth_new ();
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
  if (opt_truth != NULL && opt_file == NULL && !kt_lines_truth_write (d.truth, opt_truth, &error))
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
  {
    KtCountOptions options = { 0 };
    KtParseFormat general = {
      .pattern = "^(?<time>[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}) "
                 "(?<level>[A-Za-z]+)(?: |\\z)" };

    for (const KtOption *row = kt_count_option_rows; row->name != NULL; row++)
      if (row->fallback != NULL)
        kt_option_set_text (row, row->fallback, &options, NULL);
    options_parser = kt_counts_parser (&options, &error);
    kt_option_table_clear (kt_count_option_rows, &options);
    if (options_parser != NULL)
      general_parser = kt_parser_new_format (&general, &error);
    if (general_parser == NULL)
      {
        g_printerr ("kt-parse-bench: %s\n", error->message);
        return 1;
      }
  }
  parsers[RUN_PARSER] = parsers[RUN_LINE] = parsers[RUN_FIXED] = parser;
  parsers[RUN_OPTIONS] = options_parser;
  parsers[RUN_GENERAL] = general_parser;
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

        run_once ((RunKind) k, &d, parsers[k], reducer, &counts, &c, &w);
        g_array_append_val (cpu[k], c);
        g_array_append_val (wall[k], w);
        minutes = kt_reducer_sorted (reducer);
        if (ref_minutes == NULL)
          {
            ref = counts;
            ref_minutes = g_steal_pointer (&minutes);
            if (opt_file == NULL && !same_as_truth (ref_minutes, d.truth))
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
