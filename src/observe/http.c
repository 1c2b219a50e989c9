/* http.c - the HTTP endpoint: /metrics, /livez, /readyz, /healthz and the
 * page at /.
 *
 * The server only: sockets, limits, endpoints, and the chart's cache and
 * MySQL connection. The page is drawn by page.c from copies of the
 * figures and the chart; the chart's statements are charts.c's (store).
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
 * Slow clients hold no slot for long. libmicrohttpd's idle timeout
 * resets on every byte, so a reaper thread bounds each phase of a
 * request: its headers must be in within HEADERS_DEADLINE_S of the
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
#include "charts.h"
#include "error.h"
#include "page.h"

#define MAX_CONNECTIONS     32
#define MAX_PER_IP          8
#define MHD_CONNECTIONS     (MAX_CONNECTIONS + 16)
#define IDLE_TIMEOUT_S      10
#define HEADERS_DEADLINE_S  10
/* The page's handler may wait for MySQL: DB_CONNECT_S + DB_IO_S,
 * and once more for chart_lock. */
#define ANSWER_DEADLINE_S   20
/* Request line, headers and libmicrohttpd's bookkeeping: a browser sends
 * 1-2 KiB; anything past this is answered 431 and closed. */
#define CONNECTION_MEMORY   (16 * 1024)
#define LISTEN_BACKLOG      32

/* The chart's connection: a page waits seconds at most. */
#define DB_CONNECT_S        2
#define DB_IO_S             3

/* What the chart shows for one choice of the selector: the totals, or
 * one --by field's keys. */
typedef struct
{
  gint64     at;      /* monotonic time of the last attempt; 0: none */
  GArray    *points;  /* KtChartPoint, by minute then series */
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
  KtChartConnection *conn;
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

/* Reads @dimension's view (charts.c) on the chart's connection, which is
 * opened here when there is none: the batch loop's is never used. */
static gboolean
chart_query (KtHttp *self, ChartView *view, int dimension, GError **error)
{
  if (self->conn == NULL)
    {
      self->conn = kt_chart_connect (&self->db, DB_CONNECT_S, DB_IO_S, error);
      if (self->conn == NULL)
        return FALSE;
    }
  return kt_chart_read (self->conn, self->db_description, self->table,
                        dimension >= 0 ? self->dimensions[dimension] : NULL, view->points,
                        view->keys, error);
}

/* Brings @dimension's view up to date unless its last attempt, good or
 * bad, is younger than KT_PAGE_CHART_CACHE_S: however many clients ask,
 * MySQL sees a few queries per period. Call with chart_lock held. */
static void
chart_refresh (KtHttp *self, int dimension)
{
  ChartView *view = &self->views[dimension + 1];
  g_autoptr(GError) error = NULL;

  if (view->at != 0 && g_get_monotonic_time () - view->at < KT_PAGE_CHART_CACHE_S * G_USEC_PER_SEC)
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
      g_clear_pointer (&self->conn, kt_chart_disconnect);
    }
  view->at = g_get_monotonic_time ();
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

/* The page (page.c), its chart by @dimension (an index of
 * self->dimensions, or -1 for the totals), from copies of the figures and
 * the chart taken under their locks. */
static void
render_page (KtHttp *self, GString *out, int dimension)
{
  g_auto(KtMetricsSnapshot) snap = { 0 };
  g_autoptr(GString) health = g_string_new (NULL);
  g_autoptr(GArray) chart = g_array_new (FALSE, FALSE, sizeof (KtChartPoint));
  g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  g_autofree char *chart_error = NULL;
  KtPage page = {
    .job = kt_metrics_job (self->metrics),
    .figures = &snap,
    .table = self->table,
    .dimensions = (const char *const *) self->dimensions,
    .bucket = self->bucket,
    .have_db = self->have_db,
    .dimension = dimension,
    .points = chart,
    .keys = keys,
  };

  kt_metrics_snapshot (self->metrics, &snap);
  page.healthy = kt_metrics_healthy (self->metrics, health);
  page.health = health->str;
  if (self->have_db)
    copy_chart (self, dimension, chart, keys, &chart_error);
  page.chart_error = chart_error;
  kt_page_render (&page, out);
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
  return kt_page_dimension ((const char *const *) self->dimensions,
                            MHD_lookup_connection_value (connection, MHD_GET_ARGUMENT_KIND,
                                                         "by"));
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
      self->views[i].points = g_array_new (FALSE, FALSE, sizeof (KtChartPoint));
      self->views[i].keys = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
    }
  if (db != NULL)
    {
      self->have_db = TRUE;
      kt_db_config_copy (&self->db, db);
      self->db_description = kt_db_describe (db);
      /* Not thread-safe the first time: done here, before any thread, and
       * a no-op for the sink later. */
      kt_db_library_init ();
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
  g_clear_pointer (&self->conn, kt_chart_disconnect);
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
