/* test-page.c - the page at / (page.c), drawn from fixed data: no server,
 * no MySQL, no clock.
 *
 * Covers hostile job, table, topic, field and key names and error texts
 * (every '<' of the page opens one of the page's own elements, and each
 * hostile text shows escaped), key labels (empty, long, control
 * characters, invalid UTF-8), the stacked chart (each bar's pieces sit on
 * one another in series order, add up to the bucket's total, and the
 * tallest fits under the top line), the chart's left edge, empty data,
 * the chart's error and no database, and the ?by= selector. */
#include <string.h>
#include "page.h"

static gint64 fake_us;

static gint64
fake_clock (void)
{
  return fake_us;
}

/* A registry on a fixed clock, with two partitions and three batches. */
static KtMetrics *
figures_new (const char *job, const char *topic, const char *error)
{
  KtMetrics *m = kt_metrics_new (job, 10);
  KtBatchReport committed = { .result = KT_BATCH_COMMITTED, .duration = 0.25, .partitions = 2,
                              .records = 100, .lines_error = 7, .lines_other = 90,
                              .lines_malformed = 3 };
  KtBatchReport failed = { .result = KT_BATCH_FAILED, .duration = 1.5, .error = error };

  fake_us = G_GINT64_CONSTANT (1700000000) * G_USEC_PER_SEC;
  kt_metrics_set_clock (m, fake_clock, fake_clock);
  kt_metrics_set_process (m, NULL);
  kt_metrics_batch (m, &committed);
  kt_metrics_partition (m, topic, 0, 500, 510, 0);
  kt_metrics_partition (m, topic, 1, 400, 400, 0);
  kt_metrics_batch (m, &failed);
  kt_metrics_batch (m, &committed);
  return m;
}

static GPtrArray *
keys_new (const char *const *texts, gssize n)
{
  GPtrArray *keys = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);

  for (gssize i = 0; n < 0 ? texts[i] != NULL : i < n; i++)
    g_ptr_array_add (keys, g_bytes_new (texts[i], strlen (texts[i])));
  return keys;
}

static void
add_point (GArray *points, gint64 minute, guint series, guint64 count)
{
  KtChartPoint p = { minute, series, count };
  g_array_append_val (points, p);
}

/* Renders @page with the figures of @m. */
static char *
render (KtPage *page, KtMetrics *m)
{
  g_auto(KtMetricsSnapshot) snap = { 0 };
  GString *out = g_string_new (NULL);

  kt_metrics_snapshot (m, &snap);
  page->figures = &snap;
  kt_page_render (page, out);
  page->figures = NULL;
  g_assert_true (g_utf8_validate (out->str, (gssize) out->len, NULL));
  return g_string_free (out, FALSE);
}

/* Every '<' opens (or closes) one of the elements the page is made of. */
static void
assert_only_own_markup (const char *html)
{
  static const char *const own[] = {
    "!DOCTYPE", "html", "head", "meta", "title", "style", "body", "h1", "h2", "small", "p",
    "span", "b", "svg", "line", "text", "rect", "ul", "li", "a", "table", "tr", "th", "td",
    "div", "section", "footer", NULL
  };

  for (const char *p = strchr (html, '<'); p != NULL; p = strchr (p + 1, '<'))
    {
      const char *name = p + 1 + (p[1] == '/');
      gsize len = strcspn (name, " >/\n");
      gboolean known = FALSE;

      for (guint i = 0; own[i] != NULL && !known; i++)
        known = strlen (own[i]) == len && strncmp (own[i], name, len) == 0;
      if (!known)
        g_error ("an element the page does not make: %.40s", p);
    }
}

static void
test_hostile_names (void)
{
  static const char *const dims[] = { "host", "le<vel", NULL };
  static const char *const hostile_keys[] = { "<img src=x onerror=alert(1)>", "a&b\"c'd", NULL };
  g_autoptr(KtMetrics) m = figures_new ("<script>job</script>", "top<ic>",
                                        "cannot read <b>x</b> & \"y\"");
  g_autoptr(GArray) points = g_array_new (FALSE, FALSE, sizeof (KtChartPoint));
  g_autoptr(GPtrArray) keys = keys_new (hostile_keys, -1);
  KtPage page = {
    .job = "<script>job</script>", .healthy = FALSE, .health = "unhealthy: <i>why</i>\n",
    .table = "t<able>", .dimensions = dims, .bucket = 1, .have_db = TRUE, .dimension = 1,
    .points = points, .keys = keys,
  };
  g_autofree char *html = NULL;

  add_point (points, 1000, 0, 4);
  add_point (points, 1000, 1, 2);
  add_point (points, 1000, KT_CHART_TOP, 1);
  html = render (&page, m);
  assert_only_own_markup (html);
  g_assert_nonnull (strstr (html, "<title>ktally: &lt;script&gt;job&lt;/script&gt;</title>"));
  g_assert_nonnull (strstr (html, "unhealthy: &lt;i&gt;why&lt;/i&gt;</span>"));
  g_assert_nonnull (strstr (html, "(t&lt;able&gt;)</small>"));
  g_assert_nonnull (strstr (html, "<td class=\"l\">top&lt;ic&gt;</td>"));
  g_assert_nonnull (strstr (html, "cannot read &lt;b&gt;x&lt;/b&gt; &amp; &quot;y&quot;"));
  g_assert_nonnull (strstr (html, "&lt;img src=x onerror=alert(1)&gt;</li>"));
  g_assert_nonnull (strstr (html, "<title>1970-01-01 16:40: a&amp;b&quot;c&apos;d: 2</title>"));
  g_assert_nonnull (strstr (html, "<a href=\"/?by=le&lt;vel\" class=\"on\">by le&lt;vel</a>"));
  g_assert_nonnull (strstr (html, "per minute by le&lt;vel, the last 6 hours"));
  g_assert_nonnull (strstr (html, "class=\"status bad\""));
}

/* Key labels: "(empty)", control characters as U+FFFD, invalid UTF-8
 * made valid, at most 40 characters then an ellipsis. */
static void
test_key_labels (void)
{
  static const char *const dims[] = { "host", NULL };
  g_autofree char *long_key = g_strnfill (45, 'k');
  const char *const texts[] = { "", "a\tb\x01", "\xff\xfe", long_key };
  g_autoptr(KtMetrics) m = figures_new ("j", "t", NULL);
  g_autoptr(GArray) points = g_array_new (FALSE, FALSE, sizeof (KtChartPoint));
  g_autoptr(GPtrArray) keys = keys_new (texts, G_N_ELEMENTS (texts));
  KtPage page = {
    .job = "j", .healthy = TRUE, .health = "ok", .table = "error_log", .dimensions = dims,
    .bucket = 1, .have_db = TRUE, .dimension = 0, .points = points, .keys = keys,
  };
  g_autofree char *html = NULL;
  g_autofree char *forty = g_strnfill (40, 'k');
  g_autofree char *cut = g_strconcat (">", forty, "\xe2\x80\xa6</li>", NULL);

  add_point (points, 60, 0, 1);
  html = render (&page, m);
  assert_only_own_markup (html);
  g_assert_nonnull (strstr (html, "</span>(empty)</li>"));
  g_assert_nonnull (strstr (html, "</span>a\xef\xbf\xbd" "b\xef\xbf\xbd</li>"));
  g_assert_nonnull (strstr (html, "</span>\xef\xbf\xbd\xef\xbf\xbd</li>"));
  g_assert_nonnull (strstr (html, cut));
  g_assert_null (strstr (html, long_key));
}

/* One drawn piece of a bar. */
typedef struct
{
  double x, y, height;
  guint series;
  guint64 count;
} Piece;

static double
attribute (const char *tag, const char *name)
{
  g_autofree char *key = g_strdup_printf (" %s=\"", name);
  const char *at = strstr (tag, key);

  g_assert_nonnull (at);
  return g_ascii_strtod (at + strlen (key), NULL);
}

/* The bars of @html, in the order drawn. */
static GArray *
pieces_of (const char *html)
{
  GArray *pieces = g_array_new (FALSE, FALSE, sizeof (Piece));

  for (const char *p = strstr (html, "<rect class=\"bar"); p != NULL;
       p = strstr (p + 1, "<rect class=\"bar"))
    {
      const char *title = strstr (p, "<title>"), *end = strstr (p, "</title>");
      const char *s = strstr (p, " s");
      Piece piece = { attribute (p, "x"), attribute (p, "y"), attribute (p, "height"), 0, 0 };

      g_assert_true (title != NULL && end != NULL);
      if (s != NULL && s < title && s[2] >= '0' && s[2] <= '9')
        piece.series = (guint) (s[2] - '0');
      /* The count is the title's last field. */
      while (end > title && end[-1] >= '0' && end[-1] <= '9')
        end--;
      piece.count = g_ascii_strtoull (end, NULL, 10);
      g_array_append_val (pieces, piece);
    }
  return pieces;
}

/* The top line's label (the third y label: 0, half, top). */
static guint64
chart_top_label (const char *html)
{
  const char *p = html;

  for (int i = 0; i < 3; i++)
    {
      p = strstr (p, "class=\"ylabel\"");
      g_assert_nonnull (p);
      p++;
    }
  return g_ascii_strtoull (strchr (p, '>') + 1, NULL, 10);
}

/* Each bucket's pieces sit on one another from the axis up, in series
 * order, and are as tall together as the bucket's total on the chart's
 * scale; the tallest stays under the top line. */
static void
test_stacked_adds_up (void)
{
  static const char *const dims[] = { "host", NULL };
  static const char *const names[] = { "a", "b", "c", "d", "e", NULL };
  static const guint64 totals[] = { 37, 5, 118, 1 };
  const double axis = 192.0, plot_h = 180.0;  /* SVG_H - PAD_B; SVG_H - PAD_T - PAD_B */
  g_autoptr(KtMetrics) m = figures_new ("j", "t", NULL);
  g_autoptr(GArray) points = g_array_new (FALSE, FALSE, sizeof (KtChartPoint));
  g_autoptr(GPtrArray) keys = keys_new (names, -1);
  g_autoptr(GArray) pieces = NULL;
  KtPage page = {
    .job = "j", .healthy = TRUE, .health = "ok", .table = "error_log", .dimensions = dims,
    .bucket = 5, .have_db = TRUE, .dimension = 0, .points = points, .keys = keys,
  };
  g_autofree char *html = NULL;
  guint64 top, max = 0;
  guint at = 0;

  /* Buckets of 5 minutes; each total spread over series 0..5 unevenly. */
  for (guint b = 0; b < G_N_ELEMENTS (totals); b++)
    {
      guint64 left = totals[b];

      for (guint s = 0; s <= KT_CHART_TOP && left > 0; s++)
        {
          guint64 n = s == KT_CHART_TOP ? left : MIN (left, (guint64) (s + 1) * 3);

          add_point (points, 28000000 + 5 * b, s, n);
          left -= n;
        }
      max = MAX (max, totals[b]);
    }
  html = render (&page, m);
  assert_only_own_markup (html);
  top = chart_top_label (html);
  g_assert_cmpuint (top, >=, max);
  g_assert_cmpuint (top % 2, ==, 0);
  pieces = pieces_of (html);
  g_assert_cmpuint (pieces->len, ==, points->len);
  for (guint b = 0; b < G_N_ELEMENTS (totals); b++)
    {
      const Piece *first = &g_array_index (pieces, Piece, at);
      double below = axis;
      guint64 sum = 0;

      for (guint s = 0; at < pieces->len; at++, s++)
        {
          const Piece *piece = &g_array_index (pieces, Piece, at);

          if (piece->x != first->x)
            break;
          g_assert_cmpuint (piece->series, ==, s);
          /* Drawn with one decimal: a tenth either way per edge. */
          g_assert_cmpfloat_with_epsilon (piece->y + piece->height, below, 0.11 * (s + 1));
          g_assert_cmpfloat_with_epsilon (piece->height, plot_h * (double) piece->count
                                          / (double) top, 0.06);
          g_assert_cmpfloat (piece->y, >=, 12.0 - 0.05);
          below = piece->y;
          sum += piece->count;
        }
      g_assert_cmpuint (sum, ==, totals[b]);
      g_assert_cmpfloat_with_epsilon (axis - below, plot_h * (double) totals[b] / (double) top,
                                      0.11 * KT_CHART_TOP);
    }
  g_assert_cmpuint (at, ==, pieces->len);
}

/* The chart shows the KT_CHART_HOURS hours that end at the newest
 * bucket: an older bucket draws nothing, one that straddles the edge is
 * cut at it, and a bucket of 0 draws nothing. */
static void
test_left_edge (void)
{
  const gint64 newest = 28000000;
  g_autoptr(KtMetrics) m = figures_new ("j", "t", NULL);
  g_autoptr(GArray) points = g_array_new (FALSE, FALSE, sizeof (KtChartPoint));
  g_autoptr(GArray) pieces = NULL;
  KtPage page = {
    .job = "j", .healthy = TRUE, .health = "ok", .table = "error_log", .bucket = 60,
    .have_db = TRUE, .dimension = -1, .points = points,
  };
  g_autofree char *html = NULL;

  add_point (points, newest - KT_CHART_HOURS * 60 - 60, 0, 9);  /* wholly before */
  add_point (points, newest - KT_CHART_HOURS * 60 - 30, 0, 8);  /* straddles */
  add_point (points, newest - 120, 0, 0);                        /* empty */
  add_point (points, newest, 0, 4);
  html = render (&page, m);
  pieces = pieces_of (html);
  g_assert_cmpuint (pieces->len, ==, 2);
  g_assert_cmpuint (g_array_index (pieces, Piece, 0).count, ==, 8);
  g_assert_cmpfloat_with_epsilon (g_array_index (pieces, Piece, 0).x, 56.0, 0.01);
  g_assert_cmpuint (g_array_index (pieces, Piece, 1).count, ==, 4);
  /* No selector without --by: one bar per bucket, no series. */
  g_assert_null (strstr (html, "id=\"by\""));
  g_assert_null (strstr (html, "class=\"bar s"));
}

static void
test_empty (void)
{
  g_autoptr(KtMetrics) m = kt_metrics_new ("j", 0);
  g_autoptr(GArray) points = g_array_new (FALSE, FALSE, sizeof (KtChartPoint));
  KtPage page = {
    .job = "j", .healthy = FALSE, .health = "", .table = "error_log", .bucket = 1,
    .have_db = TRUE, .dimension = -1, .points = points,
  };
  g_autofree char *html = NULL, *no_db = NULL, *failed = NULL;

  kt_metrics_set_process (m, NULL);
  html = render (&page, m);
  assert_only_own_markup (html);
  g_assert_nonnull (strstr (html, "the table has no rows yet"));
  g_assert_null (strstr (html, "<rect"));
  g_assert_null (strstr (html, "From "));
  g_assert_nonnull (strstr (html, "No batch has reported its partitions yet."));
  g_assert_nonnull (strstr (html, "No batch has read anything yet."));
  g_assert_nonnull (strstr (html, "last commit <b>none yet</b>"));
  g_assert_null (strstr (html, "DATA LOSS"));
  g_assert_true (g_str_has_suffix (html, "</body></html>\n"));

  page.have_db = FALSE;
  no_db = render (&page, m);
  g_assert_nonnull (strstr (no_db, "No database: no chart."));
  g_assert_null (strstr (no_db, "<svg"));

  page.have_db = TRUE;
  page.chart_error = "cannot read error_log on kt@db: gone";
  failed = render (&page, m);
  g_assert_nonnull (strstr (failed, "id=\"chart-error\">The chart is unavailable: cannot read "
                                    "error_log on kt@db: gone (trying again within 5 s)."));
  g_assert_null (strstr (failed, "<svg"));
}

/* ?by=: a field of the job picks its chart, anything else the totals;
 * the selector marks the chart shown, and a field's chart has a legend. */
static void
test_by_selector (void)
{
  static const char *const dims[] = { "host", "level", NULL };
  static const char *const names[] = { "web1", NULL };
  g_autoptr(KtMetrics) m = figures_new ("j", "t", NULL);
  g_autoptr(GArray) points = g_array_new (FALSE, FALSE, sizeof (KtChartPoint));
  g_autoptr(GPtrArray) keys = keys_new (names, -1);
  KtPage page = {
    .job = "j", .healthy = TRUE, .health = "ok", .table = "error_log", .dimensions = dims,
    .bucket = 60, .have_db = TRUE, .dimension = 1, .points = points, .keys = keys,
  };
  g_autofree char *by_level = NULL, *total = NULL;

  g_assert_cmpint (kt_page_dimension (dims, "host"), ==, 0);
  g_assert_cmpint (kt_page_dimension (dims, "level"), ==, 1);
  g_assert_cmpint (kt_page_dimension (dims, "Level"), ==, -1);
  g_assert_cmpint (kt_page_dimension (dims, "levels"), ==, -1);
  g_assert_cmpint (kt_page_dimension (dims, ""), ==, -1);
  g_assert_cmpint (kt_page_dimension (dims, NULL), ==, -1);
  g_assert_cmpint (kt_page_dimension (NULL, "host"), ==, -1);

  add_point (points, 600, 0, 3);
  add_point (points, 600, KT_CHART_TOP, 2);
  by_level = render (&page, m);
  assert_only_own_markup (by_level);
  g_assert_nonnull (strstr (by_level, "<a href=\"/\">total</a> &middot; <a href=\"/?by=host\">"
                                      "by host</a> &middot; <a href=\"/?by=level\" class=\"on\">"
                                      "by level</a></p>"));
  g_assert_nonnull (strstr (by_level, "Lines counted per hour by level, the last 6 hours"));
  g_assert_nonnull (strstr (by_level, "<ul id=\"legend\"><li><span class=\"sw s0\"></span>web1"
                                      "</li><li><span class=\"sw s5\"></span>other</li></ul>"));
  g_assert_nonnull (strstr (by_level, "class=\"bar s5\""));
  g_assert_nonnull (strstr (by_level, ": other: 2</title>"));

  page.dimension = -1;
  total = render (&page, m);
  g_assert_nonnull (strstr (total, "<a href=\"/\" class=\"on\">total</a>"));
  g_assert_null (strstr (total, "id=\"legend\""));
  g_assert_null (strstr (total, "class=\"on\">by"));
  g_assert_nonnull (strstr (total, "Lines counted per hour, the last 6 hours"));
}

/* The figures: totals, the lag table with its sum, a failed batch's
 * dashes and its message. */
static void
test_figures (void)
{
  g_autoptr(KtMetrics) m = figures_new ("j", "logs", "mysql went away");
  KtPage page = { .job = "j", .healthy = TRUE, .health = "healthy\n", .table = "error_log",
                  .bucket = 1, .have_db = FALSE, .dimension = -1 };
  g_autofree char *html = render (&page, m);

  g_assert_nonnull (strstr (html, "committed batches <b>2</b></span><span>failed <b>1</b>"));
  g_assert_nonnull (strstr (html, "records <b>200</b>"));
  g_assert_nonnull (strstr (html, "class=\"status ok\">healthy</span>"));
  g_assert_nonnull (strstr (html, "<td class=\"l\">logs</td><td>0</td><td>500</td><td>10</td>"));
  g_assert_nonnull (strstr (html, "<th class=\"l\">total</th><th></th><th></th><th>10</th>"));
  g_assert_nonnull (strstr (html, "<td class=\"l\">failed</td><td>&ndash;</td>"));
  g_assert_nonnull (strstr (html, "<td class=\"msg\">mysql went away</td>"));
  g_assert_nonnull (strstr (html, "last commit <b>2023-11-14 22:13:20</b>"));
}

int
main (int argc, char **argv)
{
  /* Wall times print in the local zone: make it one. */
  g_setenv ("TZ", "UTC", TRUE);
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/page/hostile-names", test_hostile_names);
  g_test_add_func ("/page/key-labels", test_key_labels);
  g_test_add_func ("/page/stacked-adds-up", test_stacked_adds_up);
  g_test_add_func ("/page/left-edge", test_left_edge);
  g_test_add_func ("/page/empty", test_empty);
  g_test_add_func ("/page/by-selector", test_by_selector);
  g_test_add_func ("/page/figures", test_figures);
  return g_test_run ();
}
