/* page.c - the page at /, as HTML with an inline SVG chart (page.h).
 *
 * Takes a KtPage (figures and chart rows copied out by the server) and
 * appends the document; pure, so that tests/test-page.c can check it on
 * fixed data. No script, no external asset: the server's
 * Content-Security-Policy allows inline style only. Never reads the
 * registry, MySQL or the clock itself, and never puts a name or a key
 * into the page unescaped. */
#include "page.h"

#include "minutes.h"

/* The page reloads itself this often (seconds). */
#define PAGE_REFRESH_S 5

/* Numbers in SVG attributes: never a decimal comma. */
static void
append_num (GString *out, double v)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  g_string_append (out, g_ascii_formatd (buf, sizeof buf, "%.1f", v));
}

static void
append_escaped (GString *out, const char *text)
{
  g_autofree char *escaped = g_markup_escape_text (text, -1);
  g_string_append (out, escaped);
}

static void
append_wall_time (GString *out, gint64 usec, const char *format)
{
  g_autoptr(GDateTime) t = g_date_time_new_from_unix_local (usec / G_USEC_PER_SEC);
  g_autofree char *s = t != NULL ? g_date_time_format (t, format) : NULL;

  g_string_append (out, s != NULL ? s : "?");
}

/* The chart's top line: a round number at least @v, and even, so that
 * the middle line has a whole label. Steps of at most a third keep the
 * bars from shrinking to half the height. */
static guint64
nice_ceiling (guint64 v)
{
  static const guint64 steps[] = { 10, 12, 16, 20, 24, 30, 40, 50, 60, 80, 100 };
  guint64 p = 1;

  if (v <= 10)
    return MAX (2, v + v % 2);
  while (v / p >= 100)
    p *= 10;
  for (guint i = 0; i < G_N_ELEMENTS (steps); i++)
    if (steps[i] * p >= v)
      return steps[i] * p;
  return 100 * p;
}

#define SVG_W   960
#define SVG_H   220
#define PAD_L   56
#define PAD_R   12
#define PAD_T   12
#define PAD_B   28
#define SLOTS   (KT_CHART_HOURS * 60)

/* @key as the page shows it: valid UTF-8, control characters as U+FFFD,
 * at most 40 characters (then an ellipsis), "(empty)" for the empty
 * value. Not yet escaped for HTML. */
static char *
key_label (GBytes *key)
{
  gsize len;
  const char *bytes = g_bytes_get_data (key, &len);
  g_autofree char *valid = g_utf8_make_valid (bytes != NULL ? bytes : "", (gssize) len);
  GString *out = g_string_new (NULL);
  guint n = 0;

  if (len == 0)
    return g_string_free (g_string_assign (out, "(empty)"), FALSE);
  /* Made valid, a NUL byte is U+FFFD already: no NUL inside. */
  for (const char *p = valid; *p != '\0'; p = g_utf8_next_char (p))
    {
      gunichar c = g_utf8_get_char (p);

      if (n++ == 40)
        {
          g_string_append (out, "\xe2\x80\xa6");
          break;
        }
      g_string_append_unichar (out, g_unichar_iscntrl (c) ? 0xFFFD : c);
    }
  return g_string_free (out, FALSE);
}

/* The chart's scale: the tallest stack (the points of a bucket are
 * consecutive), rounded up. */
static guint64
chart_top (const GArray *points)
{
  gint64 minute = G_MININT64;
  guint64 max = 1, total = 0;

  for (guint i = 0; i < points->len; i++)
    {
      const KtChartPoint *p = &g_array_index (points, KtChartPoint, i);

      if (p->minute != minute)
        total = 0;
      minute = p->minute;
      total += p->count;
      max = MAX (max, total);
    }
  return nice_ceiling (max);
}

/* Grid and y labels (0, half, @top), and hour ticks in the log's time. */
static void
append_grid (GString *out, guint64 top, gint64 start, gint64 newest)
{
  const double plot_w = SVG_W - PAD_L - PAD_R, plot_h = SVG_H - PAD_T - PAD_B;
  const double slot = plot_w / SLOTS;
  char stamp[20];

  for (int k = 0; k <= 2; k++)
    {
      double y = PAD_T + plot_h - plot_h * k / 2;
      g_string_append_printf (out, "<line class=\"grid\" x1=\"%d\" x2=\"%d\" y1=\"", PAD_L,
                              SVG_W - PAD_R);
      append_num (out, y);
      g_string_append (out, "\" y2=\"");
      append_num (out, y);
      g_string_append_printf (out, "\"/><text class=\"ylabel\" x=\"%d\" y=\"", PAD_L - 6);
      append_num (out, y + 4);
      g_string_append_printf (out, "\">%" G_GUINT64_FORMAT "</text>\n", top * (guint64) k / 2);
    }
  for (gint64 m = start; m <= newest; m++)
    if (m % 60 == 0)
      {
        double x = PAD_L + (double) (m - start) * slot;
        kt_minute_format (m, stamp);
        g_string_append (out, "<line class=\"tick\" x1=\"");
        append_num (out, x);
        g_string_append (out, "\" x2=\"");
        append_num (out, x);
        g_string_append_printf (out, "\" y1=\"%d\" y2=\"%d\"/><text class=\"xlabel\" x=\"",
                                PAD_T, SVG_H - PAD_B + 4);
        append_num (out, x);
        g_string_append_printf (out, "\" y=\"%d\">%.5s</text>\n", SVG_H - PAD_B + 18,
                                stamp + 11);
      }
}

/* One bar: @p's count, @b above the axis (what the stack has below it),
 * @h tall, with a tooltip. A bucket's bar spans its minutes (a 1h
 * bucket, an hour of slots), cut at the chart's left edge (@start). */
static void
append_bar (GString *out, const KtChartPoint *p, const GPtrArray *keys, int bucket, gint64 start,
            double b, double h)
{
  const double plot_w = SVG_W - PAD_L - PAD_R, plot_h = SVG_H - PAD_T - PAD_B;
  const double slot = plot_w / SLOTS;
  gint64 from = MAX (p->minute, start);
  double width = (double) MIN (bucket, p->minute + bucket - from) * slot;
  char stamp[20];

  kt_minute_format (p->minute, stamp);
  if (keys == NULL)
    g_string_append (out, "<rect class=\"bar\" x=\"");
  else
    g_string_append_printf (out, "<rect class=\"bar s%u\" x=\"", MIN (p->series, KT_CHART_TOP));
  append_num (out, PAD_L + (double) (from - start) * slot);
  g_string_append (out, "\" y=\"");
  append_num (out, PAD_T + plot_h - b - h);
  g_string_append (out, "\" width=\"");
  append_num (out, MAX (width - 0.4, 1.0));
  g_string_append (out, "\" height=\"");
  append_num (out, h);
  g_string_append_printf (out, "\"><title>%.16s: ", stamp);
  if (keys != NULL && p->series < keys->len)
    {
      g_autofree char *label = key_label (keys->pdata[p->series]);
      append_escaped (out, label);
      g_string_append (out, ": ");
    }
  else if (keys != NULL)
    g_string_append (out, "other: ");
  g_string_append_printf (out, "%" G_GUINT64_FORMAT "</title></rect>\n", p->count);
}

/* Bars of the lines counted per bucket over the KT_CHART_HOURS hours that
 * end at the newest bucket; a bucket without a row had none. With @keys
 * (a --by field's view), each bar stacks its keys' counts (series 0 at
 * the bottom) and the rest on top; @keys NULL: one bar per bucket. */
static void
append_chart (GString *out, const GArray *points, const GPtrArray *keys, int bucket)
{
  const double plot_h = SVG_H - PAD_T - PAD_B;
  gint64 newest, start, minute = G_MININT64;
  guint64 top, base = 0;

  g_string_append_printf (out, "<svg id=\"errors-chart\" xmlns=\"http://www.w3.org/2000/svg\" "
                          "viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\" "
                          "aria-label=\"lines counted per bucket\">\n",
                          SVG_W, SVG_H, SVG_W, SVG_H);
  if (points->len == 0)
    {
      g_string_append_printf (out, "<text x=\"%d\" y=\"%d\" class=\"empty\">the table has "
                              "no rows yet</text>\n</svg>\n", SVG_W / 2, SVG_H / 2);
      return;
    }
  newest = g_array_index (points, KtChartPoint, points->len - 1).minute;
  start = newest - SLOTS + 1;
  top = chart_top (points);
  append_grid (out, top, start, newest);
  for (guint i = 0; i < points->len; i++)
    {
      const KtChartPoint *p = &g_array_index (points, KtChartPoint, i);

      if (p->minute != minute)
        base = 0;
      minute = p->minute;
      /* Cut at the chart's left edge; empty rows draw nothing. */
      if (p->minute + bucket > start && p->count > 0)
        append_bar (out, p, keys, bucket, start, plot_h * (double) base / (double) top,
                    plot_h * (double) p->count / (double) top);
      base += p->count;
    }
  g_string_append_printf (out, "<line class=\"axis\" x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\"/>\n",
                          PAD_L, SVG_W - PAD_R, SVG_H - PAD_B, SVG_H - PAD_B);
  g_string_append (out, "</svg>\n");
}

/* The selector (links, no script: ?by=FIELD) and, for a field, the legend. */
static void
append_selector (const KtPage *page, GString *out)
{
  const GPtrArray *keys = page->keys;

  g_string_append_printf (out, "<p id=\"by\">Chart: <a href=\"/\"%s>total</a>",
                          page->dimension < 0 ? " class=\"on\"" : "");
  /* Field names are [A-Za-z_][A-Za-z0-9_]* (counts.c): escaped all the
   * same, so that the page holds whatever it is given. */
  for (guint i = 0; page->dimensions[i] != NULL; i++)
    {
      g_string_append (out, " &middot; <a href=\"/?by=");
      append_escaped (out, page->dimensions[i]);
      g_string_append_printf (out, "\"%s>by ", (int) i == page->dimension ? " class=\"on\"" : "");
      append_escaped (out, page->dimensions[i]);
      g_string_append (out, "</a>");
    }
  g_string_append (out, "</p>\n");
  if (page->dimension < 0)
    return;
  g_string_append (out, "<ul id=\"legend\">");
  for (guint i = 0; i < keys->len; i++)
    {
      g_autofree char *label = key_label (keys->pdata[i]);

      g_string_append_printf (out, "<li><span class=\"sw s%u\"></span>", i);
      append_escaped (out, label);
      g_string_append (out, "</li>");
    }
  g_string_append_printf (out, "<li><span class=\"sw s%d\"></span>other</li></ul>\n", KT_CHART_TOP);
}

static const char page_style[] =
  "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em 2em;color:#222;background:#fafafa}"
  "h1{font-size:1.5em;margin:0 0 .3em}h1 small{font-weight:normal;color:#666}"
  "h2{font-size:1.1em;margin:1.2em 0 .4em}h2 small{font-weight:normal;color:#666;font-size:.8em}"
  ".status{display:inline-block;padding:.3em .8em;border-radius:4px;color:#fff}"
  ".ok{background:#2e7d32}.bad{background:#c62828}"
  ".totals span{margin-right:1.5em}.totals b{font-variant-numeric:tabular-nums}"
  "table{border-collapse:collapse;background:#fff}"
  "th,td{padding:.2em .6em;border-bottom:1px solid #ddd;text-align:right;white-space:nowrap}"
  "td.msg{white-space:normal;max-width:26em;text-align:left;font-size:12px}"
  ".tables{display:flex;flex-wrap:wrap;gap:0 2.5em;align-items:flex-start}"
  "th{background:#eee}td.l,th.l{text-align:left}"
  "tr.failed td{color:#c62828}tr.fenced td{color:#b26a00}"
  "svg{background:#fff;border:1px solid #ddd;max-width:100%;height:auto}"
  ".bar{fill:#c62828}.grid{stroke:#e4e4e4}.tick{stroke:#ccc}.axis{stroke:#888}"
  ".s0{fill:#c62828;background:#c62828}.s1{fill:#1565c0;background:#1565c0}"
  ".s2{fill:#2e7d32;background:#2e7d32}.s3{fill:#ef6c00;background:#ef6c00}"
  ".s4{fill:#6a1b9a;background:#6a1b9a}.s5{fill:#9e9e9e;background:#9e9e9e}"
  "#by a{margin:0 .2em}#by a.on{font-weight:bold;color:#222;text-decoration:none}"
  "#legend{list-style:none;padding:0;margin:.3em 0}#legend li{display:inline-block;"
  "margin-right:1.2em}.sw{display:inline-block;width:.8em;height:.8em;margin-right:.3em}"
  ".ylabel{font-size:11px;text-anchor:end;fill:#555}"
  ".xlabel{font-size:11px;text-anchor:middle;fill:#555}"
  ".empty{font-size:14px;text-anchor:middle;fill:#888}"
  ".note{color:#555;max-width:60em}footer{margin-top:2em;color:#777}";

static void
append_lag_table (GString *out, const GArray *partitions)
{
  gint64 total = 0;

  if (partitions->len == 0)
    {
      g_string_append (out, "<p id=\"lag\">No batch has reported its partitions yet.</p>\n");
      return;
    }
  g_string_append (out, "<table id=\"lag\">\n<tr><th class=\"l\">Topic</th><th>Partition</th>"
                        "<th>Stored offset</th><th>Lag</th></tr>\n");
  for (guint i = 0; i < partitions->len; i++)
    {
      const KtPartitionRow *p = &g_array_index (partitions, KtPartitionRow, i);

      total += p->lag;
      g_string_append (out, "<tr title=\"as of ");
      append_wall_time (out, p->updated, "%Y-%m-%d %H:%M:%S");
      g_string_append (out, "\"><td class=\"l\">");
      append_escaped (out, p->topic);
      g_string_append_printf (out, "</td><td>%d</td><td>%" G_GINT64_FORMAT "</td><td>%"
                              G_GINT64_FORMAT "</td></tr>\n", p->partition, p->offset, p->lag);
    }
  g_string_append_printf (out, "<tr><th class=\"l\">total</th><th></th><th></th><th>%"
                          G_GINT64_FORMAT "</th></tr>\n</table>\n", total);
}

static void
append_batches_table (GString *out, const GArray *recent)
{
  if (recent->len == 0)
    {
      g_string_append (out, "<p id=\"batches\">No batch has read anything yet.</p>\n");
      return;
    }
  g_string_append (out, "<table id=\"batches\">\n<tr><th class=\"l\">Finished</th>"
                        "<th class=\"l\">Result</th><th>Partitions</th><th>Records</th>"
                        "<th>ERROR</th><th>Other</th><th>Malformed</th>"
                        "<th>Seconds</th><th class=\"l\">Error</th></tr>\n");
  for (guint i = 0; i < recent->len; i++)
    {
      const KtRecentBatch *b = &g_array_index (recent, KtRecentBatch, i);
      const char *result = kt_batch_result_name (b->result);
      char duration[G_ASCII_DTOSTR_BUF_SIZE];

      g_string_append_printf (out, "<tr class=\"%s\"><td class=\"l\">", result);
      append_wall_time (out, b->finished, "%m-%d %H:%M:%S");
      g_string_append_printf (out, "</td><td class=\"l\">%s</td>", result);
      /* A failed batch's counts are not known (nor kept): dashes, not 0. */
      if (b->result == KT_BATCH_FAILED)
        g_string_append (out, "<td>&ndash;</td><td>&ndash;</td><td>&ndash;</td><td>&ndash;</td>"
                              "<td>&ndash;</td>");
      else
        g_string_append_printf (out, "<td>%u</td><td>%" G_GUINT64_FORMAT "</td><td>%"
                                G_GUINT64_FORMAT "</td><td>%" G_GUINT64_FORMAT "</td><td>%"
                                G_GUINT64_FORMAT "</td>", b->partitions, b->records,
                                b->lines_error, b->lines_other, b->lines_malformed);
      g_string_append_printf (out, "<td>%s</td><td class=\"msg\">",
                              g_ascii_formatd (duration, sizeof duration, "%.3f", b->duration));
      append_escaped (out, b->error);
      g_string_append (out, "</td></tr>\n");
    }
  g_string_append (out, "</table>\n");
}

/* From the doctype to the health badge. */
static void
append_page_head (const KtPage *page, GString *out)
{
  g_autofree char *health = g_strchomp (g_strdup (page->health != NULL ? page->health : ""));

  g_string_append_printf (out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                          "<meta http-equiv=\"refresh\" content=\"%d\">\n<title>ktally: ",
                          PAGE_REFRESH_S);
  append_escaped (out, page->job);
  g_string_append_printf (out, "</title>\n<style>%s</style></head>\n<body>\n<h1>ktally "
                          "<small>job ", page_style);
  append_escaped (out, page->job);
  g_string_append_printf (out, "</small></h1>\n<p><span id=\"health\" class=\"status %s\">",
                          page->healthy ? "ok" : "bad");
  append_escaped (out, health);
  g_string_append (out, "</span></p>\n");
}

/* The line of totals under the badge. */
static void
append_totals (GString *out, const KtMetricsSnapshot *snap)
{
  g_string_append_printf (out, "<p class=\"totals\"><span>committed batches <b>%"
                          G_GUINT64_FORMAT "</b></span><span>failed <b>%" G_GUINT64_FORMAT
                          "</b></span><span>fenced <b>%" G_GUINT64_FORMAT "</b></span>"
                          "<span>records <b>%" G_GUINT64_FORMAT "</b></span><span>ERROR "
                          "lines <b>%" G_GUINT64_FORMAT "</b></span><span>malformed <b>%"
                          G_GUINT64_FORMAT "</b></span><span>last commit <b>",
                          snap->batches[KT_BATCH_COMMITTED], snap->batches[KT_BATCH_FAILED],
                          snap->batches[KT_BATCH_FENCED], snap->records, snap->lines_error,
                          snap->lines_malformed);
  if (snap->last_commit != 0)
    append_wall_time (out, snap->last_commit, "%Y-%m-%d %H:%M:%S");
  else
    g_string_append (out, "none yet");
  g_string_append (out, "</b></span>");
  if (snap->data_loss_events > 0)
    g_string_append_printf (out, "<span>DATA LOSS <b>%" G_GUINT64_FORMAT " offsets</b></span>",
                            snap->data_lost_offsets);
  g_string_append (out, "</p>\n");
}

/* The chart (or why there is none) and the note on its times. */
static void
append_chart_body (const KtPage *page, GString *out)
{
  const GArray *chart = page->points;
  char from[20], until[20];
  gint64 newest;

  if (!page->have_db)
    {
      g_string_append (out, "<p class=\"note\">No database: no chart.</p>\n");
      return;
    }
  if (page->chart_error != NULL)
    {
      g_string_append (out, "<p class=\"note\" id=\"chart-error\">The chart is unavailable: ");
      append_escaped (out, page->chart_error);
      g_string_append_printf (out, " (trying again within %d s).</p>\n", KT_PAGE_CHART_CACHE_S);
      return;
    }
  append_chart (out, chart, page->dimension >= 0 ? page->keys : NULL, page->bucket);
  if (chart->len == 0)
    return;
  newest = g_array_index (chart, KtChartPoint, chart->len - 1).minute;
  kt_minute_format (newest - SLOTS + 1, from);
  kt_minute_format (newest, until);
  g_string_append_printf (out, "<p class=\"note\">From %.16s to %.16s. Times are the "
                          "log lines' own timestamps (naive, no time zone), as stored "
                          "in the table: the chart ends at the newest bucket in the "
                          "table, not at the current time. Read every %d s at most.</p>\n",
                          from, until, KT_PAGE_CHART_CACHE_S);
}

/* The chart's heading, the selector with --by, and the chart. */
static void
append_chart_section (const KtPage *page, GString *out)
{
  static const char *const buckets[] = { "minute", "5 minutes", "hour" };

  g_string_append_printf (out, "<h2>Lines counted per %s",
                          buckets[page->bucket == 60 ? 2 : page->bucket == 5 ? 1 : 0]);
  if (page->dimension >= 0)
    {
      g_string_append (out, " by ");
      append_escaped (out, page->dimensions[page->dimension]);
    }
  g_string_append_printf (out, ", the last %d hours of the log <small>(", KT_CHART_HOURS);
  append_escaped (out, page->table);
  g_string_append (out, ")</small></h2>\n");
  if (page->have_db && page->dimensions != NULL)
    append_selector (page, out);
  append_chart_body (page, out);
}

void
kt_page_render (const KtPage *page, GString *out)
{
  const KtMetricsSnapshot *snap = page->figures;

  append_page_head (page, out);
  append_totals (out, snap);
  append_chart_section (page, out);
  g_string_append (out, "<div class=\"tables\"><section><h2>Partitions</h2>\n");
  append_lag_table (out, snap->partitions);
  g_string_append_printf (out, "</section><section><h2>Last batches <small>(the last %d that "
                          "read something, newest first; local time)</small></h2>\n",
                          KT_METRICS_RECENT);
  append_batches_table (out, snap->recent);
  g_string_append (out, "</section></div>\n");
  g_string_append_printf (out, "<footer>ktally %s &middot; <a href=\"/metrics\">/metrics</a> "
                          "&middot; <a href=\"/livez\">/livez</a> &middot; <a href=\"/readyz\">/readyz</a> "
                          "&middot; <a href=\"/healthz\">/healthz</a> &middot; this page "
                          "reloads every %d s</footer>\n</body></html>\n",
                          PACKAGE_VERSION, PAGE_REFRESH_S);
}


int
kt_page_dimension (const char *const *dimensions, const char *by)
{
  for (guint i = 0; by != NULL && dimensions != NULL && dimensions[i] != NULL; i++)
    if (g_str_equal (by, dimensions[i]))
      return (int) i;
  return -1;
}
