/* http.c - the HTTP endpoint: /metrics, /livez, /readyz, /healthz and the
 * page at /.
 *
 * Built on libmicrohttpd rather than libsoup: every limit a hostile client
 * calls for is one of its options (total and per-IP connection limits, an
 * idle timeout, a per-connection memory cap that bounds the request line
 * and headers, answered with 431), it accepts a socket we bound ourselves
 * (so a busy port is an errno to report, not a NULL), and it runs its own
 * threads. libsoup 3 has no connection or header limits to set and needs a
 * GMainContext thread of ours to drive it; its client side, cookies and
 * TLS stack are nothing a loopback metrics port uses.
 *
 * One thread per connection: the page's handler may wait on MySQL (within
 * the timeouts below), and that must not hold up a /metrics scrape on
 * another connection. The batch loop is never involved: handlers read the
 * KtMetrics registry, which copies out under its lock, and send after.
 *
 * Slow clients hold no slot for long (issue 11 item 14). libmicrohttpd's
 * idle timeout resets on every byte, so a reaper thread bounds each phase
 * of a request: its headers must be in within HEADERS_DEADLINE_S of the
 * connection's start or of the previous answer, and the answer must be
 * sent within ANSWER_DEADLINE_S of the headers. A request body is never
 * read: GET and HEAD with one get 413, other methods 405, and the
 * connection is closed. And a newcomer is never turned away for want of a
 * slot: past MAX_PER_IP connections from its address, or MAX_CONNECTIONS
 * in all, the oldest connection (still sending its headers, by
 * preference) is cut to make room, so a trickling crowd cannot lock a
 * scraper out, even one on its own address (127.0.0.1); a scrape takes
 * milliseconds, the crowd's requests seconds. libmicrohttpd's own limit
 * (MHD_CONNECTIONS) leaves headroom for the connections being cut. */
#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "autocleanups.h"
#include "error.h"
#include "minutes.h"
#include "schema.h"

#define MAX_CONNECTIONS     32
#define MAX_PER_IP          8
#define MHD_CONNECTIONS     (MAX_CONNECTIONS + 16)
#define IDLE_TIMEOUT_S      10
#define HEADERS_DEADLINE_S  10
/* The page's handler may wait for MySQL: MYSQL_CONNECT_S + MYSQL_IO_S,
 * and once more for chart_lock. */
#define ANSWER_DEADLINE_S   20
/* Request line, headers and libmicrohttpd's bookkeeping: a browser sends
 * 1-2 KiB; anything past this is answered 431 and closed. */
#define CONNECTION_MEMORY   (16 * 1024)
#define LISTEN_BACKLOG      32

#define CHART_HOURS         6
#define CHART_CACHE_S       5
#define MYSQL_CONNECT_S     2
#define MYSQL_IO_S          3
#define PAGE_REFRESH_S      5

/* With --by, the chart stacks this many keys of the chosen field (the
 * most lines in the window first) and the rest as one "other" series. */
#define CHART_TOP           5

/* One stacked piece of a bar. */
typedef struct
{
  gint64  minute;   /* the bucket's first minute, since the epoch */
  guint   series;   /* 0..CHART_TOP-1: the keys, in order; CHART_TOP: the rest */
  guint64 count;
} ChartPoint;

/* What the chart shows for one choice of the selector: the totals, or
 * one --by field's keys. */
typedef struct
{
  gint64     at;      /* monotonic time of the last attempt; 0: none */
  GArray    *points;  /* ChartPoint, by minute then series */
  GPtrArray *keys;    /* the keys of series 0.. as bytes (GBytes *) */
  char      *error;   /* the last attempt failed: why */
} ChartView;

/* One open connection, for the deadlines and the room for newcomers. */
typedef struct
{
  int      fd;
  char     address[INET6_ADDRSTRLEN];  /* the client's, numeric */
  gint64   since;  /* monotonic: accepted, the previous answer sent, or
                    * (busy) the headers in */
  gboolean busy;   /* headers in, the answer not yet sent */
  gboolean cut;    /* shut down by us; libmicrohttpd has yet to close it */
} Client;

struct _KtHttp
{
  struct MHD_Daemon *daemon;
  KtMetrics  *metrics;  /* borrowed */
  guint16     port;

  GMutex      clients_lock;
  GHashTable *clients;  /* Client *, owned */
  GCond       reaper_wake;
  gboolean    stopping;
  GThread    *reaper;

  /* The chart, under chart_lock: one query at a time, whoever asks. */
  gboolean    have_db;
  KtDbConfig  db;
  char       *db_description;
  GMutex      chart_lock;
  MYSQL      *conn;
  char       *table;       /* what the chart reads: the job's count table */
  GStrv       dimensions;  /* its --by fields, or NULL */
  int         bucket;      /* its bucket, in minutes */
  guint       n_views;     /* 1 + the number of dimensions */
  ChartView  *views;       /* [0]: the totals; [1 + i]: by dimensions[i] */
};

/* Parses "A.B.C.D:PORT" or "[V6]:PORT" into @addr. */
static gboolean
parse_listen (const char *text, struct sockaddr_storage *addr, socklen_t *len,
              GError **error)
{
  const char *colon = strrchr (text, ':');
  g_autofree char *host = NULL;
  guint64 port = 0;

  memset (addr, 0, sizeof *addr);
  if (colon == NULL || colon[1] == '\0'
      || !g_ascii_string_to_unsigned (colon + 1, 10, 0, 65535, &port, NULL))
    goto bad;
  host = g_strndup (text, (gsize) (colon - text));
  if (host[0] == '[' && host[strlen (host) - 1] == ']')
    {
      struct sockaddr_in6 *a6 = (struct sockaddr_in6 *) (void *) addr;

      host[strlen (host) - 1] = '\0';
      if (inet_pton (AF_INET6, host + 1, &a6->sin6_addr) != 1)
        goto bad;
      a6->sin6_family = AF_INET6;
      a6->sin6_port = htons ((guint16) port);
      *len = sizeof *a6;
    }
  else
    {
      struct sockaddr_in *a4 = (struct sockaddr_in *) (void *) addr;

      if (inet_pton (AF_INET, host, &a4->sin_addr) != 1)
        goto bad;
      a4->sin_family = AF_INET;
      a4->sin_port = htons ((guint16) port);
      *len = sizeof *a4;
    }
  return TRUE;

bad:
  g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
               "--http: expected ADDRESS:PORT with a numeric address, like "
               "127.0.0.1:9464 or [::1]:9464, got '%s'", text);
  return FALSE;
}

/* A bound, listening socket, or -1 with @error. Bound here rather than by
 * libmicrohttpd so that "in use" reaches the user as such. */
static int
listen_on (const char *text, guint16 *port, GError **error)
{
  struct sockaddr_storage addr;
  socklen_t len = 0;
  int fd, on = 1;

  if (!parse_listen (text, &addr, &len, error))
    return -1;
  fd = socket (addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "--http %s: cannot create a "
                   "socket: %s", text, g_strerror (errno));
      return -1;
    }
  /* A restart must not wait for the last run's TIME_WAIT connections. An
   * IPv6 address means that address only, not IPv4 too. */
  setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  if (addr.ss_family == AF_INET6)
    setsockopt (fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on);
  if (bind (fd, (struct sockaddr *) &addr, len) != 0
      || listen (fd, LISTEN_BACKLOG) != 0)
    {
      int saved = errno;
      close (fd);
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "--http %s: cannot listen: %s",
                   text, g_strerror (saved));
      return -1;
    }
  len = sizeof addr;
  getsockname (fd, (struct sockaddr *) &addr, &len);
  *port = ntohs (addr.ss_family == AF_INET6
                 ? ((struct sockaddr_in6 *) (void *) &addr)->sin6_port
                 : ((struct sockaddr_in *) (void *) &addr)->sin_port);
  return fd;
}

/* The sink's connection options (sink.c), with short timeouts: a page
 * waits seconds at most, and the batch loop's connection is never used. */
static gboolean
chart_connect (KtHttp *self, GError **error)
{
  g_autoptr(MYSQL) conn = kt_db_open (&self->db, TRUE, NULL, MYSQL_CONNECT_S,
                                      MYSQL_IO_S, error);

  if (conn == NULL)
    return FALSE;
  /* The server stops the query too, not only our read: MariaDB knows
   * max_statement_time (seconds), MySQL max_execution_time (ms). Neither
   * is required; the read timeout bounds our wait regardless. */
  if (mysql_query (conn, "SET SESSION max_statement_time = " G_STRINGIFY (MYSQL_IO_S)) != 0
      && mysql_query (conn, "SET SESSION max_execution_time = "
                            G_STRINGIFY (MYSQL_IO_S) "000") != 0)
    g_debug ("http: the chart's query runs without a server-side time limit: %s",
             mysql_error (conn));
  self->conn = g_steal_pointer (&conn);
  return TRUE;
}

/* Runs @sql on the chart's connection: its result, or NULL with @error. */
static MYSQL_RES *
chart_select (KtHttp *self, const char *sql, GError **error)
{
  MYSQL_RES *result = NULL;

  if (self->conn == NULL && !chart_connect (self, error))
    return NULL;
  if (mysql_query (self->conn, sql) != 0 || (result = mysql_store_result (self->conn)) == NULL)
    g_set_error (error, KT_ERROR, KT_ERROR_TRANSIENT, "cannot read %s on %s: %s", self->table,
                 self->db_description, mysql_error (self->conn));
  return result;
}

static void
append_hex (GString *sql, const char *bytes, gsize len)
{
  static const char hex[] = "0123456789ABCDEF";

  g_string_append (sql, "X'");
  for (gsize i = 0; i < len; i++)
    {
      g_string_append_c (sql, hex[(guchar) bytes[i] >> 4]);
      g_string_append_c (sql, hex[(guchar) bytes[i] & 15]);
    }
  g_string_append_c (sql, '\'');
}

/* The rows of @view (@dimension: -1 for the totals) over the CHART_HOURS
 * hours that end at the newest bucket in the table. The table and field
 * names are identifiers the CLI checked; keys go back as hex literals. */
static gboolean
chart_query (KtHttp *self, ChartView *view, int dimension, GError **error)
{
  g_autoptr(GString) sql = g_string_new (NULL);
  g_autoptr(MYSQL_RES) newest = NULL, top = NULL, result = NULL;
  const char *field = dimension >= 0 ? self->dimensions[dimension] : NULL;
  char since[20];
  MYSQL_ROW row;

  /* "Last CHART_HOURS hours" of the log's own, naive time: relative to
   * the newest bucket in the table, since log_time need not be anywhere
   * near the wall clock (replayed or delayed logs, another time zone).
   * Minutes since the epoch come out as integers, whatever the session
   * time zone. */
  g_string_printf (sql, "SELECT TIMESTAMPDIFF(MINUTE, '1970-01-01 00:00:00', MAX(log_time)) "
                   "FROM `%s`", self->table);
  newest = chart_select (self, sql->str, error);
  if (newest == NULL)
    return FALSE;
  row = mysql_fetch_row (newest);
  if (row == NULL || row[0] == NULL)
    return TRUE;  /* no rows yet */
  kt_minute_format (g_ascii_strtoll (row[0], NULL, 10) - CHART_HOURS * 60, since);

  if (field != NULL)
    {
      g_string_printf (sql, "SELECT `%s`, SUM(log_count) AS n FROM `%s` WHERE log_time > '%s' "
                       "GROUP BY `%s` ORDER BY n DESC, `%s` LIMIT %d", field, self->table,
                       since, field, field, CHART_TOP + 1);
      top = chart_select (self, sql->str, error);
      if (top == NULL)
        return FALSE;
      while ((row = mysql_fetch_row (top)) != NULL && view->keys->len < CHART_TOP)
        {
          unsigned long *len = mysql_fetch_lengths (top);

          /* The (other) row stacks with the rest. */
          if (row[0] != NULL && !(len[0] == strlen (KT_OTHER_KEY)
                                  && memcmp (row[0], KT_OTHER_KEY, len[0]) == 0))
            g_ptr_array_add (view->keys, g_bytes_new (row[0], len[0]));
        }
    }

  g_string_printf (sql, "SELECT TIMESTAMPDIFF(MINUTE, '1970-01-01 00:00:00', log_time), ");
  if (view->keys->len == 0)
    g_string_append_printf (sql, "%d AS k", field != NULL ? CHART_TOP : 0);
  else
    {
      g_string_append_printf (sql, "CASE `%s`", field);
      for (guint i = 0; i < view->keys->len; i++)
        {
          gsize len;
          const char *bytes = g_bytes_get_data (view->keys->pdata[i], &len);

          g_string_append (sql, " WHEN ");
          append_hex (sql, bytes, len);
          g_string_append_printf (sql, " THEN %u", i);
        }
      g_string_append_printf (sql, " ELSE %d END AS k", CHART_TOP);
    }
  g_string_append_printf (sql, ", SUM(log_count) FROM `%s` WHERE log_time > '%s' GROUP BY "
                          "log_time, k ORDER BY log_time, k LIMIT %d", self->table, since,
                          CHART_HOURS * 60 * (CHART_TOP + 1));
  result = chart_select (self, sql->str, error);
  if (result == NULL)
    return FALSE;
  while ((row = mysql_fetch_row (result)) != NULL)
    {
      ChartPoint point = {
        row[0] != NULL ? g_ascii_strtoll (row[0], NULL, 10) : 0,
        row[1] != NULL ? (guint) g_ascii_strtoull (row[1], NULL, 10) : 0,
        row[2] != NULL ? g_ascii_strtoull (row[2], NULL, 10) : 0,
      };
      g_array_append_val (view->points, point);
    }
  return TRUE;
}

/* Brings @dimension's view up to date unless its last attempt, good or
 * bad, is younger than CHART_CACHE_S: however many clients ask, MySQL
 * sees a few queries per period. Call with chart_lock held. */
static void
chart_refresh (KtHttp *self, int dimension)
{
  ChartView *view = &self->views[dimension + 1];
  g_autoptr(GError) error = NULL;

  if (view->at != 0 && g_get_monotonic_time () - view->at < CHART_CACHE_S * G_USEC_PER_SEC)
    return;
  g_clear_pointer (&view->error, g_free);
  g_array_set_size (view->points, 0);
  g_ptr_array_set_size (view->keys, 0);
  if (!chart_query (self, view, dimension, &error))
    {
      g_debug ("http: %s", error->message);
      view->error = g_strdup (error->message);
      g_array_set_size (view->points, 0);
      g_ptr_array_set_size (view->keys, 0);
      /* Whatever state it was in, the next attempt starts afresh. */
      g_clear_pointer (&self->conn, mysql_close);
    }
  view->at = g_get_monotonic_time ();
}

/* ---- the page ------------------------------------------------------------ */

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
#define SLOTS   (CHART_HOURS * 60)

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
      const ChartPoint *p = &g_array_index (points, ChartPoint, i);

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
append_bar (GString *out, const ChartPoint *p, const GPtrArray *keys, int bucket, gint64 start,
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
    g_string_append_printf (out, "<rect class=\"bar s%u\" x=\"", MIN (p->series, CHART_TOP));
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

/* Bars of the lines counted per bucket over the CHART_HOURS hours that
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
  newest = g_array_index (points, ChartPoint, points->len - 1).minute;
  start = newest - SLOTS + 1;
  top = chart_top (points);
  append_grid (out, top, start, newest);
  for (guint i = 0; i < points->len; i++)
    {
      const ChartPoint *p = &g_array_index (points, ChartPoint, i);

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
append_selector (KtHttp *self, GString *out, int dimension, const GPtrArray *keys)
{
  g_string_append_printf (out, "<p id=\"by\">Chart: <a href=\"/\"%s>total</a>",
                          dimension < 0 ? " class=\"on\"" : "");
  for (guint i = 0; self->dimensions[i] != NULL; i++)
    g_string_append_printf (out, " &middot; <a href=\"/?by=%s\"%s>by %s</a>",
                            self->dimensions[i], (int) i == dimension ? " class=\"on\"" : "",
                            self->dimensions[i]);
  g_string_append (out, "</p>\n");
  if (dimension < 0)
    return;
  g_string_append (out, "<ul id=\"legend\">");
  for (guint i = 0; i < keys->len; i++)
    {
      g_autofree char *label = key_label (keys->pdata[i]);

      g_string_append_printf (out, "<li><span class=\"sw s%u\"></span>", i);
      append_escaped (out, label);
      g_string_append (out, "</li>");
    }
  g_string_append_printf (out, "<li><span class=\"sw s%d\"></span>other</li></ul>\n", CHART_TOP);
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

/* Copies the chart of @dimension (refreshed when stale) and its keys out
 * of the cache, so that the page is written without the lock. */
static void
copy_chart (KtHttp *self, int dimension, GArray *chart, GPtrArray *keys, char **error)
{
  const ChartView *view = &self->views[dimension + 1];

  g_mutex_lock (&self->chart_lock);
  chart_refresh (self, dimension);
  g_array_append_vals (chart, view->points->data, view->points->len);
  for (guint i = 0; i < view->keys->len; i++)
    g_ptr_array_add (keys, g_bytes_ref (view->keys->pdata[i]));
  *error = g_strdup (view->error);
  g_mutex_unlock (&self->chart_lock);
}

/* From the doctype to the health badge. */
static void
append_page_head (KtHttp *self, GString *out)
{
  g_autoptr(GString) health = g_string_new (NULL);
  gboolean healthy = kt_metrics_healthy (self->metrics, health);

  g_string_append_printf (out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                          "<meta http-equiv=\"refresh\" content=\"%d\">\n<title>ktally: ",
                          PAGE_REFRESH_S);
  append_escaped (out, kt_metrics_job (self->metrics));
  g_string_append_printf (out, "</title>\n<style>%s</style></head>\n<body>\n<h1>ktally "
                          "<small>job ", page_style);
  append_escaped (out, kt_metrics_job (self->metrics));
  g_string_append_printf (out, "</small></h1>\n<p><span id=\"health\" class=\"status %s\">",
                          healthy ? "ok" : "bad");
  g_strchomp (health->str);
  append_escaped (out, health->str);
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
append_chart_body (KtHttp *self, GString *out, int dimension, GArray *chart, GPtrArray *keys,
                   const char *chart_error)
{
  char from[20], until[20];
  gint64 newest;

  if (!self->have_db)
    {
      g_string_append (out, "<p class=\"note\">No database: no chart.</p>\n");
      return;
    }
  if (chart_error != NULL)
    {
      g_string_append (out, "<p class=\"note\" id=\"chart-error\">The chart is unavailable: ");
      append_escaped (out, chart_error);
      g_string_append_printf (out, " (trying again within %d s).</p>\n", CHART_CACHE_S);
      return;
    }
  append_chart (out, chart, dimension >= 0 ? keys : NULL, self->bucket);
  if (chart->len == 0)
    return;
  newest = g_array_index (chart, ChartPoint, chart->len - 1).minute;
  kt_minute_format (newest - SLOTS + 1, from);
  kt_minute_format (newest, until);
  g_string_append_printf (out, "<p class=\"note\">From %.16s to %.16s. Times are the "
                          "log lines' own timestamps (naive, no time zone), as stored "
                          "in the table: the chart ends at the newest bucket in the "
                          "table, not at the current time. Read every %d s at most.</p>\n",
                          from, until, CHART_CACHE_S);
}

/* The chart's heading, the selector with --by, and the chart. */
static void
append_chart_section (KtHttp *self, GString *out, int dimension)
{
  static const char *const buckets[] = { "minute", "5 minutes", "hour" };
  g_autoptr(GArray) chart = g_array_new (FALSE, FALSE, sizeof (ChartPoint));
  g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  g_autofree char *chart_error = NULL;

  if (self->have_db)
    copy_chart (self, dimension, chart, keys, &chart_error);
  g_string_append_printf (out, "<h2>Lines counted per %s%s%s, the last %d hours of the log "
                          "<small>(",
                          buckets[self->bucket == 60 ? 2 : self->bucket == 5 ? 1 : 0],
                          dimension >= 0 ? " by " : "",
                          dimension >= 0 ? self->dimensions[dimension] : "", CHART_HOURS);
  append_escaped (out, self->table);
  g_string_append (out, ")</small></h2>\n");
  if (self->have_db && self->dimensions != NULL)
    append_selector (self, out, dimension, keys);
  append_chart_body (self, out, dimension, chart, keys, chart_error);
}

/* The page, its chart by @dimension (an index of self->dimensions, or -1
 * for the totals). */
static void
render_page (KtHttp *self, GString *out, int dimension)
{
  g_auto(KtMetricsSnapshot) snap = { 0 };

  kt_metrics_snapshot (self->metrics, &snap);
  append_page_head (self, out);
  append_totals (out, &snap);
  append_chart_section (self, out, dimension);
  g_string_append (out, "<div class=\"tables\"><section><h2>Partitions</h2>\n");
  append_lag_table (out, snap.partitions);
  g_string_append_printf (out, "</section><section><h2>Last batches <small>(the last %d that "
                          "read something, newest first; local time)</small></h2>\n",
                          KT_METRICS_RECENT);
  append_batches_table (out, snap.recent);
  g_string_append (out, "</section></div>\n");
  g_string_append_printf (out, "<footer>ktally %s &middot; <a href=\"/metrics\">/metrics</a> "
                          "&middot; <a href=\"/livez\">/livez</a> &middot; <a href=\"/readyz\">/readyz</a> "
                          "&middot; <a href=\"/healthz\">/healthz</a> &middot; this page "
                          "reloads every %d s</footer>\n</body></html>\n",
                          PACKAGE_VERSION, PAGE_REFRESH_S);
}

/* ---- requests ------------------------------------------------------------ */

static Client *
client_of (struct MHD_Connection *connection)
{
  const union MHD_ConnectionInfo *info =
    MHD_get_connection_info (connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  return info != NULL ? info->socket_context : NULL;
}

/* Queues @body (consumed) with @status and the headers every answer has. */
static enum MHD_Result
respond (struct MHD_Connection *connection, unsigned int status, const char *type,
         GString *body)
{
  gsize len = body->len;
  struct MHD_Response *response =
    MHD_create_response_from_buffer_with_free_callback (len, g_string_free (body, FALSE),
                                                        g_free);
  enum MHD_Result ret;

  MHD_add_response_header (response, MHD_HTTP_HEADER_CONTENT_TYPE, type);
  MHD_add_response_header (response, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
  MHD_add_response_header (response, "X-Content-Type-Options", "nosniff");
  /* The page has no script, no external asset, and is nobody's frame. */
  MHD_add_response_header (response, "Content-Security-Policy",
                           "default-src 'none'; style-src 'unsafe-inline'; "
                           "frame-ancestors 'none'");
  if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
    MHD_add_response_header (response, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
  /* Refused before its body: the connection cannot be reused. */
  if (status == MHD_HTTP_METHOD_NOT_ALLOWED || status == MHD_HTTP_CONTENT_TOO_LARGE)
    MHD_add_response_header (response, MHD_HTTP_HEADER_CONNECTION, "close");
  ret = MHD_queue_response (connection, status, response);
  MHD_destroy_response (response);
  return ret;
}

/* The chart ?by= asks for: an index of self->dimensions, or -1 (the
 * totals) for anything but a field of the job. */
static int
page_dimension (KtHttp *self, struct MHD_Connection *connection)
{
  const char *by = MHD_lookup_connection_value (connection, MHD_GET_ARGUMENT_KIND, "by");

  for (guint i = 0; by != NULL && self->dimensions != NULL && self->dimensions[i] != NULL; i++)
    if (g_str_equal (by, self->dimensions[i]))
      return (int) i;
  return -1;
}

/* The first call for a request: its headers are in. Answers at once (and
 * so closes) a request that has or announces a body; MHD_YES to go on. */
static enum MHD_Result
on_headers (KtHttp *self, Client *client, struct MHD_Connection *connection,
            const char *url, const char *method)
{
  GString *body;
  unsigned int status;
  const char *length = MHD_lookup_connection_value (connection, MHD_HEADER_KIND,
                                                    MHD_HTTP_HEADER_CONTENT_LENGTH);

  /* The answer's deadline starts now. */
  if (client != NULL)
    {
      g_mutex_lock (&self->clients_lock);
      client->busy = TRUE;
      client->since = g_get_monotonic_time ();
      g_mutex_unlock (&self->clients_lock);
    }
  /* A body is never read, so that it cannot be trickled for ever:
   * another method is refused at once (405), and so is a GET or HEAD
   * that announces one (413). An answer on this first call makes
   * libmicrohttpd close the connection, as it cannot know that the
   * request is complete. GET and HEAD without a body are answered on
   * the next call, so that scrapers keep their connection alive. */
  if (!g_str_equal (method, MHD_HTTP_METHOD_GET) && !g_str_equal (method, MHD_HTTP_METHOD_HEAD))
    {
      body = g_string_new ("method not allowed: only GET and HEAD\n");
      status = MHD_HTTP_METHOD_NOT_ALLOWED;
    }
  else if ((length != NULL && !g_str_equal (length, "0"))
           || MHD_lookup_connection_value (connection, MHD_HEADER_KIND,
                                           MHD_HTTP_HEADER_TRANSFER_ENCODING) != NULL)
    {
      body = g_string_new ("a GET or HEAD request has no body\n");
      status = MHD_HTTP_CONTENT_TOO_LARGE;
    }
  else
    return MHD_YES;
  g_debug ("http: %s %s: %u", method, url, status);
  return respond (connection, status, "text/plain; charset=utf-8", body);
}

/* GET or HEAD of @url: the endpoint's answer. */
static enum MHD_Result
answer (KtHttp *self, struct MHD_Connection *connection, const char *url, const char *method)
{
  GString *body;
  unsigned int status = MHD_HTTP_OK;
  const char *type = "text/plain; charset=utf-8";

  body = g_string_new (NULL);
  if (g_str_equal (url, "/metrics"))
    {
      type = "text/plain; version=0.0.4; charset=utf-8";
      kt_metrics_render (self->metrics, body);
    }
  else if (g_str_equal (url, "/healthz"))
    {
      if (!kt_metrics_healthy (self->metrics, body))
        status = MHD_HTTP_SERVICE_UNAVAILABLE;
    }
  else if (g_str_equal (url, "/livez"))
    {
      /* For a liveness probe: only a hung loop is unlive; an outage of
       * Kafka or MySQL, which a restart would not cure, is not. */
      if (!kt_metrics_live (self->metrics, body))
        status = MHD_HTTP_SERVICE_UNAVAILABLE;
    }
  else if (g_str_equal (url, "/readyz"))
    {
      /* For a readiness probe and alerts: committing, within the bounds. */
      if (!kt_metrics_ready (self->metrics, body))
        status = MHD_HTTP_SERVICE_UNAVAILABLE;
    }
  else if (g_str_equal (url, "/"))
    {
      type = "text/html; charset=utf-8";
      render_page (self, body, page_dimension (self, connection));
    }
  else
    {
      status = MHD_HTTP_NOT_FOUND;
      g_string_append (body, "not found: try /, /metrics, /livez, /readyz or /healthz\n");
    }
  g_debug ("http: %s %s: %u", method, url, status);
  return respond (connection, status, type, body);
}

static enum MHD_Result
on_request (void *cls, struct MHD_Connection *connection, const char *url,
            const char *method, const char *version, const char *upload_data,
            size_t *upload_data_size, void **req_cls)
{
  KtHttp *self = cls;

  (void) version;
  (void) upload_data;
  if (*req_cls == NULL)
    {
      *req_cls = self;
      return on_headers (self, client_of (connection), connection, url, method);
    }
  if (*upload_data_size != 0)
    {
      /* Not announced, yet there: nothing is read, the connection goes. */
      g_debug ("http: %s %s with an unannounced body: closed", method, url);
      return MHD_NO;
    }
  return answer (self, connection, url, method);
}

static void
on_completed (void *cls, struct MHD_Connection *connection, void **req_cls,
              enum MHD_RequestTerminationCode code)
{
  KtHttp *self = cls;
  Client *client = client_of (connection);

  (void) req_cls;
  (void) code;
  if (client == NULL)
    return;
  /* Keep-alive: the next request has its own deadline from now. */
  g_mutex_lock (&self->clients_lock);
  client->busy = FALSE;
  client->since = g_get_monotonic_time ();
  g_mutex_unlock (&self->clients_lock);
}

/* @addr's host part into @out, numeric. */
static void
numeric_address (const struct sockaddr *addr, char out[INET6_ADDRSTRLEN])
{
  const void *host = addr->sa_family == AF_INET6
    ? (const void *) &((const struct sockaddr_in6 *) (const void *) addr)->sin6_addr
    : (const void *) &((const struct sockaddr_in *) (const void *) addr)->sin_addr;

  if (inet_ntop (addr->sa_family, host, out, INET6_ADDRSTRLEN) == NULL)
    out[0] = '\0';
}

/* Cuts @client: shutdown(), never close(): the descriptor stays
 * libmicrohttpd's, which sees end of file and cleans up in its own thread
 * (and calls on_connection, which drops the entry). Call with
 * clients_lock held. */
static void
cut (Client *client, const char *why)
{
  if (client->fd >= 0)
    shutdown (client->fd, SHUT_RDWR);
  client->cut = TRUE;
  g_debug ("http: cut a connection from %s: %s", client->address, why);
}

/* The connection to cut to make room: among the live ones other than
 * @newcomer (from @address only, unless NULL), the one sending its
 * headers the longest, or failing that the one answered the longest.
 * NULL if there are at most @limit. Call with clients_lock held. */
static Client *
victim (KtHttp *self, const Client *newcomer, const char *address, guint limit)
{
  GHashTableIter iter;
  gpointer key;
  Client *oldest = NULL;
  guint live = 0;

  g_hash_table_iter_init (&iter, self->clients);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    {
      Client *c = key;

      if (c->cut || (address != NULL && !g_str_equal (c->address, address)))
        continue;
      live++;
      if (c != newcomer
          && (oldest == NULL || (oldest->busy && !c->busy)
              || (oldest->busy == c->busy && c->since < oldest->since)))
        oldest = c;
    }
  return live > limit ? oldest : NULL;
}

/* A newcomer is never refused: past the per-address or the total limit,
 * an older connection is cut instead. Call with clients_lock held. */
static void
make_room (KtHttp *self, Client *newcomer)
{
  Client *c;

  while ((c = victim (self, newcomer, newcomer->address, MAX_PER_IP)) != NULL)
    cut (c, "room for a newer connection from the same address");
  while ((c = victim (self, newcomer, NULL, MAX_CONNECTIONS)) != NULL)
    cut (c, "room for a newer connection");
}

static void
on_connection (void *cls, struct MHD_Connection *connection, void **socket_context,
               enum MHD_ConnectionNotificationCode code)
{
  KtHttp *self = cls;

  if (code == MHD_CONNECTION_NOTIFY_STARTED)
    {
      const union MHD_ConnectionInfo *info =
        MHD_get_connection_info (connection, MHD_CONNECTION_INFO_CONNECTION_FD);
      const union MHD_ConnectionInfo *peer =
        MHD_get_connection_info (connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
      Client *client = g_new0 (Client, 1);

      client->fd = info != NULL ? info->connect_fd : -1;
      client->since = g_get_monotonic_time ();
      if (peer != NULL && peer->client_addr != NULL)
        numeric_address (peer->client_addr, client->address);
      g_mutex_lock (&self->clients_lock);
      g_hash_table_add (self->clients, client);
      make_room (self, client);
      g_mutex_unlock (&self->clients_lock);
      *socket_context = client;
    }
  else if (*socket_context != NULL)
    {
      /* libmicrohttpd closes the descriptor only after this returns: once
       * the entry is gone under the lock, the reaper cannot touch it. */
      g_mutex_lock (&self->clients_lock);
      g_hash_table_remove (self->clients, *socket_context);
      g_mutex_unlock (&self->clients_lock);
      *socket_context = NULL;
    }
}

/* Cuts connections whose headers or answer are overdue. */
static gpointer
reaper_main (gpointer data)
{
  KtHttp *self = data;

  g_mutex_lock (&self->clients_lock);
  while (!self->stopping)
    {
      gint64 now = g_get_monotonic_time ();
      GHashTableIter iter;
      gpointer key;

      g_hash_table_iter_init (&iter, self->clients);
      while (g_hash_table_iter_next (&iter, &key, NULL))
        {
          Client *client = key;
          gint64 deadline = client->busy ? ANSWER_DEADLINE_S : HEADERS_DEADLINE_S;

          if (!client->cut && now - client->since > deadline * G_USEC_PER_SEC)
            cut (client, client->busy ? "its answer took longer than "
                                        G_STRINGIFY (ANSWER_DEADLINE_S) " s"
                                      : "no complete request within "
                                        G_STRINGIFY (HEADERS_DEADLINE_S) " s");
        }
      g_cond_wait_until (&self->reaper_wake, &self->clients_lock, now + G_USEC_PER_SEC);
    }
  g_mutex_unlock (&self->clients_lock);
  return NULL;
}

static void G_GNUC_PRINTF (2, 0)
on_mhd_log (void *cls, const char *format, va_list args)
{
  g_autofree char *message = g_strdup_vprintf (format, args);

  (void) cls;
  g_debug ("http: %s", g_strchomp (message));
}

KtHttp *
kt_http_start (const char *listen_addr, KtMetrics *metrics, const KtDbConfig *db,
               const KtHttpChart *chart, GError **error)
{
  g_autoptr(KtHttp) self = NULL;
  unsigned int flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD
                       | MHD_USE_POLL | MHD_USE_ERROR_LOG;
  int fd;

  g_return_val_if_fail (listen_addr != NULL && metrics != NULL, NULL);

  self = g_new0 (KtHttp, 1);
  self->metrics = metrics;
  g_mutex_init (&self->clients_lock);
  g_cond_init (&self->reaper_wake);
  g_mutex_init (&self->chart_lock);
  self->clients = g_hash_table_new_full (g_direct_hash, g_direct_equal, g_free, NULL);
  self->table = g_strdup (chart != NULL && chart->table != NULL ? chart->table : "error_log");
  self->dimensions = chart != NULL ? g_strdupv ((char **) chart->dimensions) : NULL;
  self->bucket = chart != NULL && chart->bucket > 0 ? chart->bucket : 1;
  self->n_views = 1 + (self->dimensions != NULL ? g_strv_length (self->dimensions) : 0);
  self->views = g_new0 (ChartView, self->n_views);
  for (guint i = 0; i < self->n_views; i++)
    {
      self->views[i].points = g_array_new (FALSE, FALSE, sizeof (ChartPoint));
      self->views[i].keys = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
    }
  if (db != NULL)
    {
      self->have_db = TRUE;
      kt_db_config_copy (&self->db, db);
      self->db_description = kt_db_describe (db);
      /* Not thread-safe the first time: done here, before any thread, and
       * a no-op for the sink later. */
      mysql_library_init (0, NULL, NULL);
    }

  fd = listen_on (listen_addr, &self->port, error);
  if (fd < 0)
    return NULL;
  if (strchr (listen_addr, '[') != NULL)
    flags |= MHD_USE_IPv6;
  self->daemon = MHD_start_daemon (flags, 0, NULL, NULL, on_request, self,
                                   MHD_OPTION_LISTEN_SOCKET, (MHD_socket) fd,
                                   MHD_OPTION_CONNECTION_LIMIT, (unsigned int) MHD_CONNECTIONS,
                                   MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int) IDLE_TIMEOUT_S,
                                   MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t) CONNECTION_MEMORY,
                                   MHD_OPTION_NOTIFY_CONNECTION, on_connection, self,
                                   MHD_OPTION_NOTIFY_COMPLETED, on_completed, self,
                                   MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, self,
                                   MHD_OPTION_END);
  if (self->daemon == NULL)
    {
      close (fd);
      g_set_error (error, KT_ERROR, KT_ERROR_INTERNAL,
                   "--http %s: cannot start the HTTP server (libmicrohttpd refused)",
                   listen_addr);
      return NULL;
    }
  self->reaper = g_thread_new ("kt-http-reaper", reaper_main, self);
  return g_steal_pointer (&self);
}

guint16
kt_http_port (KtHttp *self)
{
  return self->port;
}

void
kt_http_stop (KtHttp *self)
{
  if (self == NULL)
    return;
  /* The daemon first: it closes the listening socket and every connection
   * and joins their threads, so nothing calls back into us after. */
  g_clear_pointer (&self->daemon, MHD_stop_daemon);
  if (self->reaper != NULL)
    {
      g_mutex_lock (&self->clients_lock);
      self->stopping = TRUE;
      g_cond_signal (&self->reaper_wake);
      g_mutex_unlock (&self->clients_lock);
      g_thread_join (g_steal_pointer (&self->reaper));
    }
  g_clear_pointer (&self->conn, mysql_close);
  g_clear_pointer (&self->clients, g_hash_table_unref);
  for (guint i = 0; self->views != NULL && i < self->n_views; i++)
    {
      g_array_unref (self->views[i].points);
      g_ptr_array_unref (self->views[i].keys);
      g_free (self->views[i].error);
    }
  g_free (self->views);
  g_free (self->table);
  g_strfreev (self->dimensions);
  if (self->have_db)
    kt_db_config_clear (&self->db);
  g_free (self->db_description);
  g_mutex_clear (&self->clients_lock);
  g_cond_clear (&self->reaper_wake);
  g_mutex_clear (&self->chart_lock);
  g_free (self);
}
