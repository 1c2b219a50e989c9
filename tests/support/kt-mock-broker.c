/* kt-mock-broker.c - a standalone Kafka broker for ktally's tests and demo.
 *
 * It is librdkafka's in-process mock cluster (rdkafka_mock.h) kept alive
 * in a process of its own, so that ktally, kcat and kt-gen talk to it over
 * TCP exactly as they would to a real cluster. Test and demo
 * infrastructure only: it keeps everything in memory.
 *
 *   kt-mock-broker [--brokers N] [--topic NAME:PARTITIONS]...
 *                  [--control PATH] [--bootstrap-file PATH]
 *                  [--pid-file PATH] [--verbose]
 *   kt-mock-broker ctl [--control PATH] WORD...
 *
 * The control socket (AF_UNIX stream, one command line per connection,
 * one reply line "ok ..." or "error ...") lets a test change the cluster
 * while it runs; "help" lists the commands.
 *
 * What the mock does, measured with librdkafka 2.0.2 (Debian bookworm):
 * - Broker ids are 1..N; the bootstrap list names all N brokers, each on
 *   its own ephemeral 127.0.0.1 port.
 * - Unknown topics ARE auto-created, with 4 partitions and replicas on
 *   min(N,3) brokers, by ANY Metadata request that names them: a producer
 *   (kcat -P, kt-gen), a consumer's subscribe() or assign(), kcat -C, and
 *   kcat -L -t T. allow.auto.create.topics=false does not help: the mock's
 *   Metadata API version predates that flag (librdkafka logs a warning
 *   saying so). A Metadata request for all topics (kcat -L) creates
 *   nothing. To make a topic look absent, use "topic-error TOPIC
 *   UNKNOWN_TOPIC_OR_PART"; tests that care create topics up front.
 * - rd_kafka_mock_topic_create() on an existing topic fails with
 *   TOPIC_ALREADY_EXISTS; "create" tells "exists" with the same partition
 *   count (ok) from a different one (error).
 * - Leaders are spread over the brokers in no fixed order (kcat -L -t T
 *   shows them; "leader" pins one); "down" does not move them, so a
 *   client sees that partition's leader unreachable until "up".
 * - Start-up takes a few milliseconds; SIGTERM to exit takes ~1 s
 *   (librdkafka joins its broker threads).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include "kt-support.h"

/* Exit codes of "ctl", part of its interface for shell tests. */
enum
{
  CTL_EXIT_OK = 0,
  CTL_EXIT_ERROR_REPLY = 1,
  CTL_EXIT_NO_CONNECT = 2,
};

/* A control command line longer than this is refused, not truncated. */
#define CONTROL_LINE_MAX 4096

/* Replication factor cap: the mock accepts more, but 3 is what a real
 * deployment uses and what the mock's own auto-create picks. */
#define MAX_REPLICATION 3

static gboolean verbose = FALSE;

typedef struct
{
  rd_kafka_t *rk;                    /* owns the mock cluster's lifetime */
  rd_kafka_mock_cluster_t *mcluster;
  gchar *bootstraps;
  int broker_cnt;
  /* A second, ordinary client of the cluster for "topics"/"watermarks":
   * created on first use, touched only by the control thread. */
  rd_kafka_t *inspector;
  int listen_fd;
  gchar *control_path;
  gint stopping;                     /* atomic */
} Broker;

/* ---------------------------------------------------------------------- */
/* librdkafka glue */

static void
log_cb (const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
  /* The mock handle has no bootstrap.servers and says so now and then;
   * that noise belongs to --verbose only. */
  if (verbose)
    g_printerr ("%%%d %s %s: %s\n", level, fac, rd_kafka_name (rk), buf);
}

static void
error_cb (rd_kafka_t *rk, int err, const char *reason, void *opaque)
{
  (void) opaque;
  if (verbose)
    g_printerr ("error %s: %s: %s\n", rd_kafka_name (rk),
                rd_kafka_err2name ((rd_kafka_resp_err_t) err), reason);
}

static rd_kafka_t *
new_handle (const char *bootstraps, GError **error)
{
  g_autoptr (rd_kafka_conf_t) conf = rd_kafka_conf_new ();
  char errstr[512];
  rd_kafka_t *rk;

  rd_kafka_conf_set_log_cb (conf, log_cb);
  rd_kafka_conf_set_error_cb (conf, error_cb);
  if (bootstraps != NULL
      && !kt_support_conf_set (conf, "bootstrap.servers", bootstraps))
    {
      g_set_error (error, KT_SUPPORT_ERROR, KT_SUPPORT_FAILED,
                   "cannot configure bootstrap.servers");
      return NULL;
    }

  rk = rd_kafka_new (RD_KAFKA_PRODUCER, conf, errstr, sizeof errstr);
  if (rk == NULL)
    {
      g_set_error (error, KT_SUPPORT_ERROR, KT_SUPPORT_FAILED,
                   "rd_kafka_new: %s", errstr);
      return NULL;
    }
  conf = NULL;  /* rd_kafka_new() took it */
  return rk;
}

/* The RD_KAFKAP_* constants live in librdkafka's private
 * rdkafka_protocol.h, not in the installed headers, so the API keys are
 * spelled out here; the Kafka protocol fixes them. */
static const struct
{
  const char *name;
  gint16 key;
} api_keys[] = {
  { "Produce", 0 },
  { "Fetch", 1 },
  { "ListOffsets", 2 },
  { "Metadata", 3 },
  { "OffsetCommit", 8 },
  { "OffsetFetch", 9 },
  { "FindCoordinator", 10 },
  { "JoinGroup", 11 },
  { "Heartbeat", 12 },
  { "LeaveGroup", 13 },
  { "SyncGroup", 14 },
  { "ApiVersions", 18 },
  { "InitProducerId", 22 },
};

static gboolean
parse_api (const char *word, gint16 *key)
{
  gint64 n;

  for (gsize i = 0; i < G_N_ELEMENTS (api_keys); i++)
    if (g_ascii_strcasecmp (word, api_keys[i].name) == 0)
      {
        *key = api_keys[i].key;
        return TRUE;
      }
  /* A raw number reaches any API the table above forgot. */
  if (g_ascii_string_to_signed (word, 10, 0, G_MAXINT16, &n, NULL))
    {
      *key = (gint16) n;
      return TRUE;
    }
  return FALSE;
}

/* Error names are librdkafka's own (rd_kafka_err2name() without the
 * RD_KAFKA_RESP_ERR_ prefix), looked up in its table rather than copied,
 * so every error it knows can be injected. */
static gboolean
parse_err (const char *word, rd_kafka_resp_err_t *err)
{
  const struct rd_kafka_err_desc *descs;
  size_t cnt;
  gint64 n;

  if (g_str_has_prefix (word, "RD_KAFKA_RESP_ERR_"))
    word += strlen ("RD_KAFKA_RESP_ERR_");

  rd_kafka_get_err_descs (&descs, &cnt);
  for (size_t i = 0; i < cnt; i++)
    if (descs[i].name != NULL && g_ascii_strcasecmp (word, descs[i].name) == 0)
      {
        *err = descs[i].code;
        return TRUE;
      }
  if (g_ascii_string_to_signed (word, 10, G_MININT32, G_MAXINT32, &n, NULL))
    {
      *err = (rd_kafka_resp_err_t) n;
      return TRUE;
    }
  return FALSE;
}

static gboolean
parse_int (const char *word, gint64 min, gint64 max, gint64 *out)
{
  return g_ascii_string_to_signed (word, 10, min, max, out, NULL);
}

/* ---------------------------------------------------------------------- */
/* Cluster inspection through an ordinary client */

static rd_kafka_t *
broker_inspector (Broker *b, GError **error)
{
  if (b->inspector == NULL)
    b->inspector = new_handle (b->bootstraps, error);
  return b->inspector;
}

/* Partition count of TOPIC, 0 if the cluster has no such topic, -1 (and
 * *error) if the cluster could not be asked. Asks for all topics, because
 * a metadata request naming the topic would auto-create it. */
static int
topic_partitions (Broker *b, const char *topic, GError **error)
{
  rd_kafka_t *rk = broker_inspector (b, error);
  g_autoptr (KtSupportMetadata) md = NULL;
  rd_kafka_resp_err_t err;

  if (rk == NULL)
    return -1;
  err = rd_kafka_metadata (rk, 1, NULL, &md, 5000);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
    {
      g_set_error (error, KT_SUPPORT_ERROR, KT_SUPPORT_FAILED, "metadata: %s",
                   rd_kafka_err2name (err));
      return -1;
    }
  for (int i = 0; i < md->topic_cnt; i++)
    if (strcmp (md->topics[i].topic, topic) == 0)
      return md->topics[i].partition_cnt;
  return 0;
}

static gchar *
cmd_topics (Broker *b)
{
  g_autoptr (GError) error = NULL;
  rd_kafka_t *rk = broker_inspector (b, &error);
  g_autoptr (KtSupportMetadata) md = NULL;
  g_autoptr (GString) reply = g_string_new ("ok");
  rd_kafka_resp_err_t err;

  if (rk == NULL)
    return g_strdup_printf ("error %s", error->message);
  err = rd_kafka_metadata (rk, 1, NULL, &md, 5000);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
    return g_strdup_printf ("error metadata: %s", rd_kafka_err2name (err));
  for (int i = 0; i < md->topic_cnt; i++)
    g_string_append_printf (reply, " %s:%d", md->topics[i].topic,
                            md->topics[i].partition_cnt);
  return g_string_free (g_steal_pointer (&reply), FALSE);
}

static gchar *
cmd_watermarks (Broker *b, const char *topic)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GString) reply = g_string_new ("ok");
  int parts = topic_partitions (b, topic, &error);

  if (parts < 0)
    return g_strdup_printf ("error %s", error->message);
  if (parts == 0)
    return g_strdup_printf ("error no topic %s", topic);
  for (int p = 0; p < parts; p++)
    {
      int64_t lo = -1, hi = -1;
      rd_kafka_resp_err_t err
          = rd_kafka_query_watermark_offsets (b->inspector, topic, p, &lo,
                                              &hi, 5000);
      if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
        return g_strdup_printf ("error watermarks %s[%d]: %s", topic, p,
                                rd_kafka_err2name (err));
      g_string_append_printf (reply, " %d:%" G_GINT64_FORMAT ":%" G_GINT64_FORMAT,
                              p, (gint64) lo, (gint64) hi);
    }
  return g_string_free (g_steal_pointer (&reply), FALSE);
}

static gchar *
create_topic (Broker *b, const char *topic, int partitions, int rf)
{
  g_autoptr (GError) error = NULL;
  int have = topic_partitions (b, topic, &error);
  rd_kafka_resp_err_t err;

  if (have < 0)
    return g_strdup_printf ("error %s", error->message);
  /* The mock accepts a second create silently and keeps the old layout:
   * say which case this was, and refuse a different partition count
   * rather than pretend it took. */
  if (have == partitions)
    return g_strdup_printf ("ok exists %s %d", topic, have);
  if (have > 0)
    return g_strdup_printf ("error exists %s with %d partitions", topic,
                            have);
  err = rd_kafka_mock_topic_create (b->mcluster, topic, partitions, rf);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
    return g_strdup_printf ("error create %s: %s", topic,
                            rd_kafka_err2name (err));
  return g_strdup_printf ("ok created %s %d", topic, partitions);
}

/* ---------------------------------------------------------------------- */
/* Control commands */

static const char help_text[]
    = "ok commands: ping | help | topics | watermarks TOPIC"
      " | create TOPIC PARTITIONS"
      " | down BROKER | up BROKER | rtt BROKER MS"
      " | errors API COUNT ERR... | broker-errors BROKER API COUNT ERR [RTT_MS]"
      " | clear API | leader TOPIC PARTITION BROKER | topic-error TOPIC ERR"
      " | apiversion API MIN MAX"
      " (BROKER -1 = all brokers for down/up/rtt)";

static gchar *
reply_err (const char *what, rd_kafka_resp_err_t err)
{
  if (err == RD_KAFKA_RESP_ERR_NO_ERROR)
    return g_strdup_printf ("ok %s", what);
  return g_strdup_printf ("error %s: %s", what, rd_kafka_err2name (err));
}

static gchar *
handle_command (Broker *b, const char *line)
{
  g_auto (GStrv) raw = g_strsplit_set (line, " \t\r\n", -1);
  g_autoptr (GPtrArray) w = g_ptr_array_new ();
  const char *cmd;
  guint n;
  gint64 a, c;
  gint16 api;
  rd_kafka_resp_err_t err;

  for (char **p = raw; *p != NULL; p++)
    if (**p != '\0')
      g_ptr_array_add (w, *p);
  n = w->len;
  if (n == 0)
    return g_strdup ("error empty command");
  cmd = w->pdata[0];
#define W(i) ((const char *) w->pdata[i])

  if (strcmp (cmd, "ping") == 0 && n == 1)
    return g_strdup ("ok");
  if (strcmp (cmd, "help") == 0)
    return g_strdup (help_text);
  if (strcmp (cmd, "topics") == 0 && n == 1)
    return cmd_topics (b);
  if (strcmp (cmd, "watermarks") == 0 && n == 2)
    return cmd_watermarks (b, W (1));

  if (strcmp (cmd, "create") == 0 && n == 3)
    {
      if (!parse_int (W (2), 1, 100000, &a))
        return g_strdup_printf ("error bad partition count '%s'", W (2));
      return create_topic (b, W (1), (int) a,
                           MIN (b->broker_cnt, MAX_REPLICATION));
    }

  if ((strcmp (cmd, "down") == 0 || strcmp (cmd, "up") == 0) && n == 2)
    {
      g_autofree gchar *what = g_strdup_printf ("%s %s", cmd, W (1));
      if (!parse_int (W (1), -1, G_MAXINT32, &a))
        return g_strdup_printf ("error bad broker id '%s'", W (1));
      if (a > b->broker_cnt || a == 0)
        return g_strdup_printf ("error no broker %s (ids are 1..%d)", W (1),
                                b->broker_cnt);
      err = cmd[0] == 'd'
                ? rd_kafka_mock_broker_set_down (b->mcluster, (int32_t) a)
                : rd_kafka_mock_broker_set_up (b->mcluster, (int32_t) a);
      return reply_err (what, err);
    }

  if (strcmp (cmd, "rtt") == 0 && n == 3)
    {
      g_autofree gchar *what = g_strdup_printf ("rtt %s %s", W (1), W (2));
      if (!parse_int (W (1), -1, b->broker_cnt, &a) || a == 0)
        return g_strdup_printf ("error no broker %s (ids are 1..%d)", W (1),
                                b->broker_cnt);
      if (!parse_int (W (2), 0, 3600 * 1000, &c))
        return g_strdup_printf ("error bad rtt '%s'", W (2));
      err = rd_kafka_mock_broker_set_rtt (b->mcluster, (int32_t) a, (int) c);
      return reply_err (what, err);
    }

  /* The versions of API the brokers announce in ApiVersions: a broker
   * that no longer serves the old ones (Kafka 4.0, KIP-896). */
  if (strcmp (cmd, "apiversion") == 0 && n == 4)
    {
      g_autofree gchar *what = g_strdup_printf ("apiversion %s %s %s", W (1), W (2), W (3));
      if (!parse_api (W (1), &api))
        return g_strdup_printf ("error unknown API '%s'", W (1));
      if (!parse_int (W (2), 0, G_MAXINT16, &a) || !parse_int (W (3), a, G_MAXINT16, &c))
        return g_strdup_printf ("error bad version range %s..%s", W (2), W (3));
      err = rd_kafka_mock_set_apiversion (b->mcluster, api, (int16_t) a, (int16_t) c);
      return reply_err (what, err);
    }

  if (strcmp (cmd, "errors") == 0 && n >= 4)
    {
      g_autofree rd_kafka_resp_err_t *errs = NULL;
      guint names = n - 3;

      if (!parse_api (W (1), &api))
        return g_strdup_printf ("error unknown API '%s'", W (1));
      if (!parse_int (W (2), 1, 1000000, &c))
        return g_strdup_printf ("error bad count '%s'", W (2));
      /* One name is repeated COUNT times; several must be COUNT names,
       * returned in that order. */
      if (names != 1 && names != (guint) c)
        return g_strdup_printf ("error give 1 or %" G_GINT64_FORMAT
                                " error names, not %u", c, names);
      errs = g_new (rd_kafka_resp_err_t, c);
      for (gint64 i = 0; i < c; i++)
        {
          const char *name = W (3 + (names == 1 ? 0 : i));
          if (!parse_err (name, &errs[i]))
            return g_strdup_printf ("error unknown error name '%s'", name);
        }
      rd_kafka_mock_push_request_errors_array (b->mcluster, api, (size_t) c,
                                               errs);
      return g_strdup_printf ("ok %s x%" G_GINT64_FORMAT " queued for %s (%d)",
                              rd_kafka_err2name (errs[0]), c, W (1), api);
    }

  if (strcmp (cmd, "broker-errors") == 0 && (n == 5 || n == 6))
    {
      gint64 rtt = 0;
      if (!parse_int (W (1), 1, b->broker_cnt, &a))
        return g_strdup_printf ("error no broker %s (ids are 1..%d)", W (1),
                                b->broker_cnt);
      if (!parse_api (W (2), &api))
        return g_strdup_printf ("error unknown API '%s'", W (2));
      if (!parse_int (W (3), 1, 1000000, &c))
        return g_strdup_printf ("error bad count '%s'", W (3));
      if (!parse_err (W (4), &err))
        return g_strdup_printf ("error unknown error name '%s'", W (4));
      if (n == 6 && !parse_int (W (5), 0, 3600 * 1000, &rtt))
        return g_strdup_printf ("error bad rtt '%s'", W (5));
      /* The call is variadic in (err, rtt) pairs: push them one by one. */
      for (gint64 i = 0; i < c; i++)
        {
          rd_kafka_resp_err_t r = rd_kafka_mock_broker_push_request_error_rtts (
              b->mcluster, (int32_t) a, api, 1, err, (int) rtt);
          if (r != RD_KAFKA_RESP_ERR_NO_ERROR)
            return reply_err ("broker-errors", r);
        }
      return g_strdup_printf ("ok %s x%" G_GINT64_FORMAT " queued for %s on "
                              "broker %" G_GINT64_FORMAT,
                              rd_kafka_err2name (err), c, W (2), a);
    }

  if (strcmp (cmd, "clear") == 0 && n == 2)
    {
      if (!parse_api (W (1), &api))
        return g_strdup_printf ("error unknown API '%s'", W (1));
      rd_kafka_mock_clear_request_errors (b->mcluster, api);
      return g_strdup_printf ("ok cleared %s", W (1));
    }

  if (strcmp (cmd, "topic-error") == 0 && n == 3)
    {
      /* The only way to make a topic look absent: the mock auto-creates
       * any topic a Metadata request names. NO_ERROR clears it. */
      if (!parse_err (W (2), &err))
        return g_strdup_printf ("error unknown error name '%s'", W (2));
      rd_kafka_mock_topic_set_error (b->mcluster, W (1), err);
      return g_strdup_printf ("ok topic %s reports %s in Metadata", W (1),
                              rd_kafka_err2name (err));
    }

  if (strcmp (cmd, "leader") == 0 && n == 4)
    {
      g_autofree gchar *what
          = g_strdup_printf ("leader %s %s %s", W (1), W (2), W (3));
      if (!parse_int (W (2), 0, G_MAXINT32, &a))
        return g_strdup_printf ("error bad partition '%s'", W (2));
      /* -1 leaves the partition leaderless, which the mock allows. */
      if (!parse_int (W (3), -1, b->broker_cnt, &c) || c == 0)
        return g_strdup_printf ("error no broker %s (ids are 1..%d)", W (3),
                                b->broker_cnt);
      err = rd_kafka_mock_partition_set_leader (b->mcluster, W (1),
                                                (int32_t) a, (int32_t) c);
      return reply_err (what, err);
    }
#undef W

  return g_strdup_printf ("error unknown command or wrong arguments: %s"
                          " (try help)", cmd);
}

/* ---------------------------------------------------------------------- */
/* Control socket */

static gboolean
fill_sockaddr (const char *path, struct sockaddr_un *sun, GError **error)
{
  memset (sun, 0, sizeof *sun);
  sun->sun_family = AF_UNIX;
  if (strlen (path) >= sizeof sun->sun_path)
    {
      g_set_error (error, KT_SUPPORT_ERROR, KT_SUPPORT_FAILED,
                   "control socket path too long (max %zu bytes): %s",
                   sizeof sun->sun_path - 1, path);
      return FALSE;
    }
  strcpy (sun->sun_path, path);
  return TRUE;
}

static int
connect_control (const char *path, GError **error)
{
  struct sockaddr_un sun;
  int fd;

  if (!fill_sockaddr (path, &sun, error))
    return -1;
  fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || connect (fd, (struct sockaddr *) &sun, sizeof sun) < 0)
    {
      int saved = errno;
      g_set_error (error, KT_SUPPORT_ERROR, KT_SUPPORT_FAILED,
                   "cannot connect to %s: %s", path, g_strerror (saved));
      if (fd >= 0)
        close (fd);
      return -1;
    }
  return fd;
}

static int
listen_control (const char *path, GError **error)
{
  struct sockaddr_un sun;
  int fd;

  if (!fill_sockaddr (path, &sun, error))
    return -1;

  /* A socket file left by a killed broker would make bind() fail; one
   * that still answers belongs to a live broker, which we must not steal
   * from. */
  if (g_file_test (path, G_FILE_TEST_EXISTS))
    {
      int probe = connect_control (path, NULL);
      if (probe >= 0)
        {
          close (probe);
          g_set_error (error, KT_SUPPORT_ERROR, KT_SUPPORT_FAILED,
                       "a broker already answers on %s", path);
          return -1;
        }
      g_unlink (path);
    }

  fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || bind (fd, (struct sockaddr *) &sun, sizeof sun) < 0
      || listen (fd, 64) < 0)
    {
      int saved = errno;
      g_set_error (error, KT_SUPPORT_ERROR, KT_SUPPORT_FAILED,
                   "cannot listen on %s: %s", path, g_strerror (saved));
      if (fd >= 0)
        close (fd);
      return -1;
    }
  return fd;
}

/* Reads one line (without its newline) or up to EOF. NULL on error or
 * when the line is too long. */
static gchar *
read_line (int fd)
{
  g_autoptr (GString) buf = g_string_new (NULL);
  char chunk[512];

  while (buf->len <= CONTROL_LINE_MAX)
    {
      ssize_t got = recv (fd, chunk, sizeof chunk, 0);
      char *nl;

      if (got < 0 && errno == EINTR)
        continue;
      if (got < 0)
        return NULL;
      if (got == 0)
        return g_string_free (g_steal_pointer (&buf), FALSE);
      g_string_append_len (buf, chunk, got);
      nl = memchr (buf->str, '\n', buf->len);
      if (nl != NULL)
        {
          g_string_truncate (buf, (gsize) (nl - buf->str));
          return g_string_free (g_steal_pointer (&buf), FALSE);
        }
    }
  return NULL;
}

static void
write_all (int fd, const char *data, size_t len)
{
  while (len > 0)
    {
      ssize_t put = send (fd, data, len, MSG_NOSIGNAL);
      if (put < 0 && errno == EINTR)
        continue;
      if (put <= 0)
        return;  /* the client went away: nothing to tell it */
      data += put;
      len -= (size_t) put;
    }
}

static gpointer
control_thread (gpointer data)
{
  Broker *b = data;

  while (!g_atomic_int_get (&b->stopping))
    {
      int fd = accept4 (b->listen_fd, NULL, NULL, SOCK_CLOEXEC);
      /* A client that connects and says nothing must not wedge the only
       * control thread. */
      struct timeval tv = { .tv_sec = 10, .tv_usec = 0 };
      g_autofree gchar *line = NULL;
      g_autofree gchar *reply = NULL;

      if (fd < 0)
        {
          if (errno == EINTR || errno == ECONNABORTED)
            continue;
          if (!g_atomic_int_get (&b->stopping))
            g_printerr ("kt-mock-broker: accept: %s\n", g_strerror (errno));
          break;
        }
      setsockopt (fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      line = read_line (fd);
      reply = line != NULL ? handle_command (b, line)
                           : g_strdup ("error unreadable or overlong command");
      if (verbose)
        g_printerr ("control: %s -> %s\n", line ? line : "?", reply);
      write_all (fd, reply, strlen (reply));
      write_all (fd, "\n", 1);
      close (fd);
    }
  return NULL;
}

/* ---------------------------------------------------------------------- */
/* Client mode */

static int
run_ctl (int argc, char **argv)
{
  const char *path = g_getenv ("KT_BROKER_CTL");
  g_autoptr (GString) cmd = g_string_new (NULL);
  g_autoptr (GError) error = NULL;
  g_autofree gchar *reply = NULL;
  struct timeval tv = { .tv_sec = 60, .tv_usec = 0 };
  int i = 2, fd;

  /* Parsed by hand: command words such as "-1" (all brokers) must not be
   * taken for options. */
  if (i < argc && strcmp (argv[i], "--control") == 0 && i + 1 < argc)
    {
      path = argv[i + 1];
      i += 2;
    }
  else if (i < argc && g_str_has_prefix (argv[i], "--control="))
    {
      path = argv[i++] + strlen ("--control=");
    }
  if (i < argc && strcmp (argv[i], "--") == 0)
    i++;
  if (path == NULL || i >= argc)
    {
      g_printerr ("usage: kt-mock-broker ctl --control PATH WORD...\n"
                  "(--control defaults to $KT_BROKER_CTL)\n");
      return CTL_EXIT_NO_CONNECT;
    }
  for (; i < argc; i++)
    g_string_append_printf (cmd, "%s%s", cmd->len ? " " : "", argv[i]);
  g_string_append_c (cmd, '\n');

  fd = connect_control (path, &error);
  if (fd < 0)
    {
      g_printerr ("kt-mock-broker ctl: %s\n", error->message);
      return CTL_EXIT_NO_CONNECT;
    }
  setsockopt (fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  write_all (fd, cmd->str, cmd->len);
  shutdown (fd, SHUT_WR);
  reply = read_line (fd);
  close (fd);
  if (reply == NULL || *reply == '\0')
    {
      g_printerr ("kt-mock-broker ctl: no reply from %s\n", path);
      return CTL_EXIT_ERROR_REPLY;
    }
  printf ("%s\n", reply);
  return (strcmp (reply, "ok") == 0 || g_str_has_prefix (reply, "ok "))
             ? CTL_EXIT_OK
             : CTL_EXIT_ERROR_REPLY;
}

/* ---------------------------------------------------------------------- */
/* Server mode */

static gboolean
parse_topic_spec (const char *spec, gchar **name, int *partitions)
{
  const char *colon = strrchr (spec, ':');
  gint64 n;

  if (colon == NULL || colon == spec
      || !parse_int (colon + 1, 1, 100000, &n))
    return FALSE;
  *name = g_strndup (spec, (gsize) (colon - spec));
  *partitions = (int) n;
  return TRUE;
}

static gboolean
write_file_atomically (const char *path, const char *contents,
                       GError **error)
{
  /* g_file_set_contents() writes a temporary file and renames it, so a
   * poller never sees a half-written address. */
  return g_file_set_contents (path, contents, -1, error);
}

static int
run_server (int argc, char **argv)
{
  int opt_brokers = 3;
  g_auto (GStrv) opt_topics = NULL;
  g_autofree gchar *opt_control = NULL;
  g_autofree gchar *opt_bootstrap_file = NULL;
  g_autofree gchar *opt_pid_file = NULL;
  GOptionEntry entries[] = {
    { "brokers", 'b', 0, G_OPTION_ARG_INT, &opt_brokers,
      "Number of brokers (default 3; ids are 1..N)", "N" },
    { "topic", 't', 0, G_OPTION_ARG_STRING_ARRAY, &opt_topics,
      "Create a topic at start-up (repeatable)", "NAME:PARTITIONS" },
    { "control", 'c', 0, G_OPTION_ARG_FILENAME, &opt_control,
      "Serve control commands on this AF_UNIX socket", "PATH" },
    { "bootstrap-file", 'f', 0, G_OPTION_ARG_FILENAME, &opt_bootstrap_file,
      "Write the bootstrap address here once ready", "PATH" },
    { "pid-file", 'p', 0, G_OPTION_ARG_FILENAME, &opt_pid_file,
      "Write the process id here", "PATH" },
    { "verbose", 'v', 0, G_OPTION_ARG_NONE, &verbose,
      "Route librdkafka's logs to stderr", NULL },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr (GOptionContext) ctx
      = g_option_context_new ("- a Kafka mock cluster for tests\n\n"
                              "  or: kt-mock-broker ctl --control PATH "
                              "WORD...");
  g_autoptr (GError) error = NULL;
  g_autoptr (GThread) thread = NULL;
  g_autofree gchar *line = NULL;
  Broker b = { .listen_fd = -1 };
  sigset_t sigs;
  int sig = 0;

  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      g_printerr ("kt-mock-broker: %s\n", error->message);
      return 2;
    }
  if (argc > 1)
    {
      g_printerr ("kt-mock-broker: unexpected argument '%s'\n", argv[1]);
      return 2;
    }
  if (opt_brokers < 1 || opt_brokers > 64)
    {
      g_printerr ("kt-mock-broker: --brokers must be 1..64\n");
      return 2;
    }

  /* Block the stop signals before librdkafka starts its threads, so they
   * inherit the mask and only sigtimedwait() below ever sees them.
   * SIGPIPE is blocked too: a client hanging up must not kill us. */
  sigemptyset (&sigs);
  sigaddset (&sigs, SIGTERM);
  sigaddset (&sigs, SIGINT);
  sigaddset (&sigs, SIGHUP);
  sigaddset (&sigs, SIGPIPE);
  pthread_sigmask (SIG_BLOCK, &sigs, NULL);

  b.broker_cnt = opt_brokers;
  b.rk = new_handle (NULL, &error);
  if (b.rk == NULL)
    {
      g_printerr ("kt-mock-broker: %s\n", error->message);
      return 1;
    }
  b.mcluster = rd_kafka_mock_cluster_new (b.rk, opt_brokers);
  if (b.mcluster == NULL)
    {
      g_printerr ("kt-mock-broker: rd_kafka_mock_cluster_new failed\n");
      return 1;
    }
  b.bootstraps = g_strdup (rd_kafka_mock_cluster_bootstraps (b.mcluster));

  for (char **t = opt_topics; t != NULL && *t != NULL; t++)
    {
      g_autofree gchar *name = NULL;
      int parts;
      rd_kafka_resp_err_t err;

      if (!parse_topic_spec (*t, &name, &parts))
        {
          g_printerr ("kt-mock-broker: bad --topic '%s' (want NAME:N)\n", *t);
          return 2;
        }
      err = rd_kafka_mock_topic_create (b.mcluster, name, parts,
                                        MIN (opt_brokers, MAX_REPLICATION));
      if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
        {
          g_printerr ("kt-mock-broker: create %s: %s\n", name,
                      rd_kafka_err2name (err));
          return 1;
        }
    }

  if (opt_control != NULL)
    {
      b.control_path = g_strdup (opt_control);
      b.listen_fd = listen_control (opt_control, &error);
      if (b.listen_fd < 0)
        {
          g_printerr ("kt-mock-broker: %s\n", error->message);
          return 1;
        }
      thread = g_thread_new ("control", control_thread, &b);
    }

  if (opt_pid_file != NULL)
    {
      g_autofree gchar *pid = g_strdup_printf ("%d\n", (int) getpid ());
      if (!write_file_atomically (opt_pid_file, pid, &error))
        {
          g_printerr ("kt-mock-broker: %s\n", error->message);
          return 1;
        }
    }

  /* Ready: the bootstrap file appears last, once everything above
   * (topics, control socket) is in place, so waiting for it is enough. */
  printf ("%s\n", b.bootstraps);
  fflush (stdout);
  if (opt_bootstrap_file != NULL)
    {
      line = g_strdup_printf ("%s\n", b.bootstraps);
      if (!write_file_atomically (opt_bootstrap_file, line, &error))
        {
          g_printerr ("kt-mock-broker: %s\n", error->message);
          return 1;
        }
    }

  for (;;)
    {
      struct timespec ts = { .tv_sec = 1, .tv_nsec = 0 };
      sig = sigtimedwait (&sigs, NULL, &ts);
      if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP)
        break;
      /* The mock's own handle is never used to produce, but errors and
       * logs it raises still queue up: drain them. */
      rd_kafka_poll (b.rk, 0);
    }
  if (verbose)
    g_printerr ("kt-mock-broker: signal %d, stopping\n", sig);

  if (thread != NULL)
    {
      g_atomic_int_set (&b.stopping, 1);
      /* shutdown() wakes the accept() in the control thread. */
      shutdown (b.listen_fd, SHUT_RDWR);
      g_thread_join (g_steal_pointer (&thread));
      close (b.listen_fd);
      g_unlink (b.control_path);
    }
  if (b.inspector != NULL)
    rd_kafka_destroy (b.inspector);
  rd_kafka_mock_cluster_destroy (b.mcluster);
  rd_kafka_destroy (b.rk);
  if (opt_bootstrap_file != NULL)
    g_unlink (opt_bootstrap_file);
  if (opt_pid_file != NULL)
    g_unlink (opt_pid_file);
  g_free (b.bootstraps);
  g_free (b.control_path);
  return 0;
}

int
main (int argc, char **argv)
{
  if (argc > 1 && strcmp (argv[1], "ctl") == 0)
    return run_ctl (argc, argv);
  return run_server (argc, argv);
}
