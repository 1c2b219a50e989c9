/* source.c - the Kafka source stage.
 *
 * Takes a plan (per-partition [read_from, until)), hands every record of it
 * to a callback, and nothing else: it stores no offsets anywhere (the sink
 * does, in MySQL, with the counts) and never uses consumer-group offsets.
 * With --group, what a rebalance does to the partitions read is
 * assignment.c's decision; the fetch nudger for librdkafka < 2.2 is
 * nudger.c. */
#include "source.h"

#include <string.h>
#include <unistd.h>
#include "assignment.h"
#include "rdkafka-autocleanups.h"
#include "error.h"
#include "kfeatures.h"
#include "kprops.h"
#include "log.h"
#include "nudger.h"

static void stream_free (gpointer data);

/* Whether this librdkafka re-checks a full pre-fetch queue on its own soon
 * (fetch.queue.backoff.ms, 2.2+); before, the nudger (nudger.h) does it. */
static gboolean
has_fetch_queue_backoff (void)
{
  return rd_kafka_version () >= 0x020200ff;
}

struct _KtSource
{
  char             *topic;
  rd_kafka_t       *rk;     /* consumes the assigned ranges */
  rd_kafka_queue_t *queue;  /* rk's consumer queue */
  rd_kafka_t       *meta;   /* metadata and watermarks, never blocked by a Fetch */
  rd_kafka_topic_t *meta_topic;
  /* For kt_source_high_watermarks() only (`status`), made on first use:
   * meta's configuration, but read_uncommitted, whose ListOffsets answers
   * the high watermark rather than the last stable offset. */
  rd_kafka_conf_t  *uncommitted_conf;
  rd_kafka_t       *uncommitted;
  rd_kafka_topic_t *uncommitted_topic;
  /* A copy of meta's configuration for the start-up feature check
   * (kfeatures.h), made once a broker has answered; NULL after it. */
  rd_kafka_conf_t  *probe_conf;
  GHashTable       *streams;  /* partition -> Stream, assigned partitions */
  gint64            max_batch_bytes;
  gint64            last_bytes;
  /* --group: the group owns the assignment; streams are made and dropped
   * by rebalances only (assignment.c decides, streams_apply does). */
  gboolean          group;
  KtAssignment     *assignment;  /* NULL without --group */
  const volatile int *stop;
  /* The pre-fetch queue's caps (queued.min.messages and
   * queued.max.messages.kbytes, as configured), and the nudger that keeps
   * librdkafka < 2.2 fetching under them (NULL on later versions). */
  gint64            queue_records;
  gint64            queue_bytes;
  KtNudger         *nudger;
  gint64            taken_records;  /* taken from the queue since the last nudge */
  gint64            taken_bytes;
  /* Records pulled past their ranges are carried in our memory, outside
   * the queue's caps: a read stops early once this many are carried, as it
   * does at the byte cap, so memory stays bounded with a skewed backlog
   * (partitions done early keep being fetched while others finish). */
  gint64            max_carried;
  /* topic.metadata.refresh.interval.ms as configured, in microseconds. */
  gint64            metadata_every_us;
  /* The last "answer larger than receive.message.max.bytes" on the
   * consuming handle (error_cb), and when it was served: librdkafka drops
   * the connection and fetches the same again, for ever. */
  gint64            oversize_at;  /* monotonic; 0: none */
  char             *oversize;     /* librdkafka's words, "Invalid response size ..." */
  /* Whether rk's main queue (error_cb's) is apart from its consumer queue:
   * with no group.id they are one, and polling it would eat records. */
  gboolean          poll_main;
  /* The last broker connection that failed, in librdkafka's words ("
   * 127.0.0.1:9092/bootstrap: Connect to ipv4#127.0.0.1:9092 failed:
   * Connection refused"), as kcat shows it: its error codes alone say only
   * "Broker transport failure". Written by librdkafka's threads (log_cb). */
  GMutex            broker_lock;
  char             *broker_failure;
  gint64            broker_failure_at;  /* monotonic */
  /* The first broker failure that retrying cannot heal (credentials
   * refused, a certificate not from the CA: kt_broker_failure_final), or
   * NULL. Kept for good: the settings it failed with do not change. */
  char             *final_failure;
  /* A refusal met while serving between batches (an ACL that does not
   * let this principal into the group): handed to the next plan. */
  GError           *refused;
  /* The brokers have listed the topic once: not knowing it later means
   * it was deleted. */
  gboolean          seen;
  /* The topic vanished under the handles once (the brokers or librdkafka
   * said so): closing them will hang (kt_source_free). Atomic. */
  gint              vanished;
  /* The topic may not be the one it was: it vanished under the handles
   * since kt_source_take_changed() last asked, or its partitions or their
   * replicas are not what the last listing said. Atomic. */
  gint              changed;
  char             *layout;  /* the last listing: "0:1,2,3;1:2,3,1;..." */
  /* --group: partitions the group assigned since kt_source_take_assigned()
   * (gint32; written and read on the consuming thread). */
  GArray           *assigned;
  /* --group: rebalances applied (assignments and revocations), on the
   * consuming thread (kt_source_rebalances()). */
  guint64           rebalances;
  /* How long a ListOffsets request waits before it is asked again
   * (list_offsets_on()), learnt from the brokers' answers. Atomic: the
   * two rounds of kt_source_watermarks() run at once. */
  gint              offsets_slice_ms;
  /* kt_source_free(): both handles closed (under broker_lock). */
  gboolean          closed;
  GCond             closed_cond;
};

/* How long kt_source_free() waits for librdkafka to close the handles:
 * milliseconds normally, a group member's LeaveGroup a round trip; less
 * once the topic vanished under the handles, when the wait is known to
 * be for ever (kt_source_free). */
#define CLOSE_WAIT_US        (10 * G_USEC_PER_SEC)
#define CLOSE_WAIT_GONE_US   (2 * G_USEC_PER_SEC)

/* The first wait of a ListOffsets request, and the longest (each next
 * wait after a time-out is twice the last, list_offsets_on()): a SIGTERM
 * waits at most that long, and at most the first while a broker is
 * failing. */
#define OFFSETS_SLICE_MS      500
#define OFFSETS_SLICE_MAX_MS  8000

/* How long a broker failure explains an error that follows it. */
#define BROKER_FAILURE_FRESH_US (60 * G_USEC_PER_SEC)

/* librdkafka logs from its own threads; GLib's logging is thread-safe.
 * Everything goes to debug: ktally reports failures itself, once, with
 * what it means for the batch, instead of raw client chatter. A broker
 * connection's failure is kept for that report (kt_source_*'s errors). */
static void
log_cb (const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
  KtSource *self = rd_kafka_opaque (rk);

  g_debug ("librdkafka[%d] %s: %s", level, fac, buf);
  /* "topic [0]: broker unavailable: fetch: Broker: Unknown topic or
   * partition": the partition's leader no longer knows it (watch_topic). */
  if (self != NULL && g_str_equal (fac, "BROKERUA")
      && strstr (buf, "Unknown topic or partition") != NULL)
    {
      g_atomic_int_set (&self->vanished, TRUE);
      g_atomic_int_set (&self->changed, TRUE);
    }
  if (self != NULL && g_str_equal (fac, "FAIL"))
    {
      /* "... failed: Connection refused (after 0ms in state CONNECT)": the
       * part in brackets is librdkafka's state machine, not the cause. */
      const char *after = strstr (buf, " (after ");

      /* Nor the thread's name in front. */
      if (g_str_has_prefix (buf, "[thrd:") && strstr (buf, "]: ") != NULL)
        buf = strstr (buf, "]: ") + 3;
      g_mutex_lock (&self->broker_lock);
      g_free (self->broker_failure);
      self->broker_failure = g_strndup (buf, after != NULL ? (gsize) (after - buf) : strlen (buf));
      self->broker_failure_at = g_get_monotonic_time ();
      if (self->final_failure == NULL && kt_broker_failure_final (self->broker_failure))
        self->final_failure = g_strdup (self->broker_failure);
      g_mutex_unlock (&self->broker_lock);
    }
}

/* ": <the last broker failure>" when @err may be one (no broker answered)
 * and one happened lately, else "". New string. */
static char *
broker_failure (KtSource *self, rd_kafka_resp_err_t err)
{
  char *out = NULL;

  if (err != RD_KAFKA_RESP_ERR__TRANSPORT && err != RD_KAFKA_RESP_ERR__TIMED_OUT
      && err != RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN && err != RD_KAFKA_RESP_ERR__RESOLVE)
    return g_strdup ("");
  g_mutex_lock (&self->broker_lock);
  if (self->broker_failure != NULL
      && g_get_monotonic_time () - self->broker_failure_at < BROKER_FAILURE_FRESH_US)
    out = g_strdup_printf (": %s", self->broker_failure);
  g_mutex_unlock (&self->broker_lock);
  return out != NULL ? out : g_strdup ("");
}

/* Has a broker failed lately (a refused or lost connection)? */
static gboolean
broker_failing (KtSource *self)
{
  gboolean failing;

  g_mutex_lock (&self->broker_lock);
  failing = self->broker_failure != NULL
            && g_get_monotonic_time () - self->broker_failure_at < BROKER_FAILURE_FRESH_US;
  g_mutex_unlock (&self->broker_lock);
  return failing;
}

/* Served by rd_kafka_poll() on the reading thread, never concurrently. */
static void
error_cb (rd_kafka_t *rk, int err, const char *reason, void *opaque)
{
  KtSource *self = opaque;
  const char *size;

  (void) rk;
  g_debug ("librdkafka error %s: %s",
           rd_kafka_err2name ((rd_kafka_resp_err_t) err), reason);
  /* Partitions of an assigned topic the metadata no longer lists. */
  if (self != NULL && (err == RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION
                       || err == RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC
                       || err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART))
    {
      g_atomic_int_set (&self->vanished, TRUE);
      g_atomic_int_set (&self->changed, TRUE);
    }
  /* A Fetch answer over receive.message.max.bytes: librdkafka has no
   * error code of its own for it (a bad message, on the connection), only
   * these words. It holds back a report identical to the last one for
   * 30 s (the size in it changes with what else the answer carries). */
  if (self != NULL && err == RD_KAFKA_RESP_ERR__BAD_MSG
      && strstr (reason, "receive.message.max.bytes") != NULL)
    {
      size = strstr (reason, "Invalid response size");
      g_free (self->oversize);
      self->oversize = g_strndup (size != NULL ? size : reason,
                                  size != NULL ? strcspn (size, ":") : strlen (reason));
      self->oversize_at = g_get_monotonic_time ();
    }
}

/* Sets one property. @flag: the option the user gave the value with (its
 * refusal is then a usage error naming it), or NULL for ktally's own. */
static gboolean
conf_set (rd_kafka_conf_t *conf, const char *key, const char *value,
          const char *flag, GError **error)
{
  char errstr[512];

  if (rd_kafka_conf_set (conf, key, value, errstr, sizeof errstr) == RD_KAFKA_CONF_OK)
    return TRUE;
  /* Never echo the value: it may be a password (sasl.password, ssl.key.password). */
  if (flag != NULL)
    g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "%s: %s", flag, errstr);
  else
    g_set_error (error, KT_ERROR, KT_ERROR_INTERNAL, "%s: %s", key, errstr);
  return FALSE;
}

static rd_kafka_conf_t *
make_conf (const KtSourceConfig *config, GError **error)
{
  g_autoptr(rd_kafka_conf_t) conf = rd_kafka_conf_new ();
  /* Defaults chosen for bounded micro-batches; -X may override these.
   * What exactness depends on (no auto-commit and no offset store,
   * partition EOF events, auto.offset.reset=error, read_committed) is
   * kprops.c's, set after -X and never overridden.
   * - pre-fetch bounded in records and in bytes, so memory stays flat
   *   with any backlog: librdkafka counts only the payload against the
   *   byte cap, and a small record costs ~450 bytes queued, so the record
   *   cap is what bounds one-line records (50,000: ~25 MB); the nudger
   *   (nudger.h) keeps the fetchers going under both;
   * - an empty Fetch held at most 50 ms (librdkafka's default is 500):
   *   the end of a range with a gap at its tail is seen only after one,
   *   and a broker that does not answer a held Fetch when data arrives
   *   (the mock does not) delays a batch's records by up to that much.
   *   Measured: 1-record batches 15 ms median instead of 19-35 with 100,
   *   idle batches no costlier;
   * - reconnects within a second;
   * - Fetch answers of at most 1 MiB, 128 KiB a partition: librdkafka's
   *   defaults (50 MiB, 1 MiB a partition) keep a whole answer of every
   *   leader in memory beside the queue. Measured on Apache Kafka, 2M
   *   one-line records over 256 partitions: peak RSS 250-290 MB with the
   *   defaults, 47-58 MB with these, CPU 0.78-0.97 s against 0.66-0.74 s,
   *   the same wall time within the noise. Kafka returns a record batch
   *   larger than both caps whole (KIP-74), so no record is too big for
   *   them; only receive.message.max.bytes bounds what is read. An answer
   *   is not held for a minimum size (fetch.min.bytes stays 1): holding
   *   it for 16 KiB saved no CPU measurably and delays a trickle's
   *   records by up to fetch.wait.max.ms. */
  static const char *const defaults[][2] = {
    { "fetch.wait.max.ms", "50" },
    { "fetch.max.bytes", "1048576" },
    { "max.partition.fetch.bytes", "131072" },
    { "queued.min.messages", "50000" },
    { "queued.max.messages.kbytes", "16384" },
    { "topic.metadata.refresh.interval.ms", "60000" },
    /* A broker back after a short outage is used again within a second,
     * not after librdkafka's default 10 s backoff. */
    { "reconnect.backoff.max.ms", "1000" },
  };

  /* The user's --brokers: a refusal is a usage error. */
  if (!conf_set (conf, "bootstrap.servers", config->brokers, "--brokers", error))
    return NULL;
  if (config->group != NULL)
    {
      /* Members tell apart in the group's description by client id. */
      g_autofree char *client = g_strdup_printf ("%s-%d", config->client_id, (int) getpid ());
      /* Cooperative rebalancing moves only the partitions that change hands,
       * but before librdkafka 2.3 its assignor aborts the process when a
       * member that never got an assignment is closed (librdkafka #4312,
       * hit here at SIGTERM): eager round-robin there. */
      const char *strategy = rd_kafka_version () >= 0x020300ff ? "cooperative-sticky"
                                                               : "roundrobin";

      if (!conf_set (conf, "client.id", client, NULL, error)
          || !conf_set (conf, "group.id", config->group, NULL, error)
          || !conf_set (conf, "partition.assignment.strategy", strategy, NULL, error))
        return NULL;
    }
  else if (config->client_id != NULL)
    {
      g_autofree char *group = g_strdup_printf ("ktally-%s", config->client_id);

      /* librdkafka's assign() and consumer queue need a group id, even though
       * ktally never joins the group nor commits to it: offsets live in MySQL. */
      if (!conf_set (conf, "client.id", config->client_id, NULL, error)
          || !conf_set (conf, "group.id", group, NULL, error))
        return NULL;
    }
  for (gsize i = 0; i < G_N_ELEMENTS (defaults); i++)
    if (!conf_set (conf, defaults[i][0], defaults[i][1], NULL, error))
      return NULL;
  /* Look at a full queue again this soon (librdkafka's default is a
   * second). */
  if (has_fetch_queue_backoff ()
      && !conf_set (conf, "fetch.queue.backoff.ms", "5", NULL, error))
    return NULL;

  /* The user's properties, then ktally's own over them. */
  if (!kt_kprops_apply (conf, config->properties, error))
    return NULL;

  rd_kafka_conf_set_log_cb (conf, log_cb);
  rd_kafka_conf_set_error_cb (conf, error_cb);
  return g_steal_pointer (&conf);
}

/* The consumer's topic debug log, where its fetcher says that a
 * partition's leader no longer knows it (log_cb): librdkafka 2.0 follows a
 * topic deleted and created again without telling the application, and
 * reads the new log on from the old offsets. A few lines a minute
 * (leaders, metadata), added to whatever -X debug asked for. */
static gboolean
watch_topic (rd_kafka_conf_t *conf, GError **error)
{
  char value[512];
  size_t size = sizeof value;
  g_autofree char *debug = NULL;

  if (rd_kafka_conf_get (conf, "debug", value, &size) != RD_KAFKA_CONF_OK)
    value[0] = '\0';
  if (strstr (value, "topic") != NULL || strstr (value, "all") != NULL)
    return TRUE;
  debug = value[0] != '\0' ? g_strconcat (value, ",topic", NULL) : g_strdup ("topic");
  return conf_set (conf, "debug", debug, NULL, error);
}

static void rebalance_cb (rd_kafka_t *rk, rd_kafka_resp_err_t err,
                         rd_kafka_topic_partition_list_t *parts, void *opaque);
static void streams_held (gpointer data, GArray *partitions);
static void streams_apply (gpointer data, const KtAssignmentPlan *plan);

/* An integer property of @conf (one librdkafka accepted), 0 if unreadable. */
static gint64
conf_get_int (rd_kafka_conf_t *conf, const char *key)
{
  char value[64];
  size_t size = sizeof value;

  if (rd_kafka_conf_get (conf, key, value, &size) != RD_KAFKA_CONF_OK)
    return 0;
  return g_ascii_strtoll (value, NULL, 10);
}

/* After a consume call: nudges the fetchers once the app has drained half
 * of what the queue may hold since the last nudge (take() counts). */
static void
maybe_nudge (KtSource *self)
{
  if (self->nudger == NULL)
    return;
  if ((self->taken_records >= self->queue_records / 2
       || self->taken_bytes >= self->queue_bytes / 2)
      && (gint64) rd_kafka_queue_length (self->queue) <= self->queue_records / 2)
    {
      self->taken_records = self->taken_bytes = 0;
      kt_nudger_poke (self->nudger);
    }
}

KtSource *
kt_source_new (const KtSourceConfig *config, GError **error)
{
  g_autoptr(KtSource) self = g_new0 (KtSource, 1);
  g_autoptr(rd_kafka_conf_t) conf = NULL;
  g_autoptr(rd_kafka_conf_t) meta_conf = NULL;
  char errstr[512];

  g_mutex_init (&self->broker_lock);
  g_cond_init (&self->closed_cond);
  self->offsets_slice_ms = OFFSETS_SLICE_MS;
  self->assigned = g_array_new (FALSE, FALSE, sizeof (gint32));
  self->topic = g_strdup (config->topic);
  self->streams = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL,
                                         stream_free);
  self->max_batch_bytes = config->max_batch_bytes > 0 ? config->max_batch_bytes
                                                      : G_MAXINT64;
  conf = make_conf (config, error);
  if (conf == NULL)
    return NULL;
  meta_conf = rd_kafka_conf_dup (conf);
  if (!watch_topic (conf, error))
    return NULL;
  self->group = config->group != NULL;
  self->stop = config->stop;
  /* error_cb's (served on rk only) and log_cb's: both handles' broker
   * failures explain their errors. */
  rd_kafka_conf_set_opaque (conf, self);
  rd_kafka_conf_set_opaque (meta_conf, self);
  self->poll_main = config->group != NULL || config->client_id != NULL;  /* make_conf */
  if (self->group)
    {
      static const KtAssignmentStreams streams = { streams_held, streams_apply };

      self->assignment = kt_assignment_new (self->topic, &streams, self, config->start_offsets,
                                            config->rebalancing, config->start_offsets_data);
      rd_kafka_conf_set_rebalance_cb (conf, rebalance_cb);
    }
  self->probe_conf = rd_kafka_conf_dup (meta_conf);
  self->uncommitted_conf = rd_kafka_conf_dup (meta_conf);
  if (!conf_set (self->uncommitted_conf, "isolation.level", "read_uncommitted", NULL, error))
    return NULL;
  /* The caps as configured (-X may have changed them): the nudger's pace. */
  self->queue_records = conf_get_int (conf, "queued.min.messages");
  self->queue_bytes = conf_get_int (conf, "queued.max.messages.kbytes") * 1024;
  self->max_carried = MAX (self->queue_records, 1000);
  /* -1 turns librdkafka's refresh off: ktally's own keeps the default's
   * pace (the defaults of make_conf). */
  self->metadata_every_us = conf_get_int (conf, "topic.metadata.refresh.interval.ms") * 1000;
  if (self->metadata_every_us <= 0)
    self->metadata_every_us = 60 * G_USEC_PER_SEC;

  self->rk = rd_kafka_new (RD_KAFKA_CONSUMER, conf, errstr, sizeof errstr);
  if (self->rk == NULL)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "cannot create the Kafka consumer: %s", errstr);
      return NULL;
    }
  conf = NULL;  /* rd_kafka_new() owns it now, but only on success */

  self->meta = rd_kafka_new (RD_KAFKA_CONSUMER, meta_conf, errstr, sizeof errstr);
  if (self->meta == NULL)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "cannot create the Kafka metadata client: %s", errstr);
      return NULL;
    }
  meta_conf = NULL;

  if (!has_fetch_queue_backoff ())
    self->nudger = kt_nudger_new (self->rk);

  self->queue = rd_kafka_queue_get_consumer (self->rk);
  if (self->queue == NULL)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_INTERNAL,
                           "librdkafka gave no consumer queue");
      return NULL;
    }
  self->meta_topic = rd_kafka_topic_new (self->meta, self->topic, NULL);
  if (self->meta_topic == NULL)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "--topic '%s': %s",
                   self->topic, rd_kafka_err2str (rd_kafka_last_error ()));
      return NULL;
    }
  return g_steal_pointer (&self);
}

/* Closes and destroys both librdkafka handles and what refers into
 * them. */
static void
close_handles (KtSource *self)
{
  g_clear_pointer (&self->nudger, kt_nudger_free);  /* it uses rk */
  g_clear_pointer (&self->queue, rd_kafka_queue_destroy);
  if (self->rk != NULL)
    {
      /* Nothing is committed to Kafka here. In a group, closing leaves it
       * (a last rebalance revokes every stream, so they must still be
       * there); otherwise it only stops the fetchers. */
      rd_kafka_consumer_close (self->rk);
    }
  /* Carried records hold references into rk: rd_kafka_destroy() would wait
   * for them forever (seen at SIGTERM with five writers fencing each
   * other, whose streams all carried records past their ranges). */
  g_clear_pointer (&self->streams, g_hash_table_unref);
  g_clear_pointer (&self->rk, rd_kafka_destroy);
  g_clear_pointer (&self->assignment, kt_assignment_free);  /* rk's rebalances used it */
  g_clear_pointer (&self->meta_topic, rd_kafka_topic_destroy);
  g_clear_pointer (&self->meta, rd_kafka_destroy);
  g_clear_pointer (&self->uncommitted_topic, rd_kafka_topic_destroy);
  g_clear_pointer (&self->uncommitted, rd_kafka_destroy);
}

static gpointer
closing_main (gpointer data)
{
  KtSource *self = data;

  close_handles (self);
  g_mutex_lock (&self->broker_lock);
  self->closed = TRUE;
  g_cond_broadcast (&self->closed_cond);
  g_mutex_unlock (&self->broker_lock);
  return NULL;
}

/* Sources whose handles librdkafka did not close in time. Never freed
 * (their closing thread may still use them), and reachable from here, so
 * that a leak checker does not report what was left on purpose. */
static GPtrArray *abandoned;
G_LOCK_DEFINE_STATIC (abandoned);

void
kt_source_free (KtSource *self)
{
  gboolean stopping, closed;
  gint64 deadline;
  GThread *thread;

  if (self == NULL)
    return;
  /* The close below revokes what the group gave, and may outlive the
   * caller (it is left behind after a deadline): the caller's rebalance
   * functions are not called from it. */
  kt_assignment_forget_caller (self->assignment);
  /* librdkafka 2.0 can wait for ever in rd_kafka_destroy(): once a topic
   * was deleted under an assigned partition, it never drops a reference
   * to that partition (its issues 4486 and 4669: fixed in later
   * releases), and destroy waits for the broker threads, which wait for
   * that reference. So the handles close on a thread of their own, and
   * the caller waits for them a bounded time, or until a SIGTERM that
   * comes meanwhile: the error that ended a run must be said, and the
   * process must end. */
  stopping = self->stop != NULL && *self->stop;
  thread = g_thread_try_new ("kt-close", closing_main, self, NULL);
  if (thread == NULL)
    close_handles (self);  /* out of threads: wait as long as it takes */
  else
    {
      deadline = g_get_monotonic_time ()
                 + (g_atomic_int_get (&self->vanished) ? CLOSE_WAIT_GONE_US : CLOSE_WAIT_US);
      g_mutex_lock (&self->broker_lock);
      while (!self->closed && g_get_monotonic_time () < deadline
             && (stopping || self->stop == NULL || !*self->stop))
        g_cond_wait_until (&self->closed_cond, &self->broker_lock,
                           MIN (deadline, g_get_monotonic_time () + 50 * G_TIME_SPAN_MILLISECOND));
      closed = self->closed;
      g_mutex_unlock (&self->broker_lock);
      if (!closed)
        {
          g_message ("the Kafka client of topic %s did not close in time (librdkafka %s can "
                     "wait for ever there once a topic was deleted under it): left behind",
                     self->topic, rd_kafka_version_str ());
          g_thread_unref (thread);
          G_LOCK (abandoned);
          if (abandoned == NULL)
            abandoned = g_ptr_array_new ();
          g_ptr_array_add (abandoned, self);
          G_UNLOCK (abandoned);
          return;
        }
      g_thread_join (thread);
    }
  g_clear_pointer (&self->probe_conf, rd_kafka_conf_destroy);
  g_clear_pointer (&self->uncommitted_conf, rd_kafka_conf_destroy);
  g_free (self->topic);
  g_free (self->layout);
  g_clear_pointer (&self->assigned, g_array_unref);
  g_free (self->oversize);
  g_free (self->broker_failure);
  g_free (self->final_failure);
  g_clear_error (&self->refused);
  g_cond_clear (&self->closed_cond);
  g_mutex_clear (&self->broker_lock);
  g_free (self);
}

static gint
compare_gint32 (gconstpointer a, gconstpointer b)
{
  gint32 x = *(const gint32 *) a, y = *(const gint32 *) b;
  return (x > y) - (x < y);
}

/* How long the first metadata request of kt_source_partitions waits before
 * the final refusals are looked at (each next one twice as long). */
#define METADATA_SLICE_MS 500

/* TRUE, with KT_ERROR_FATAL and the brokers' words, once a broker failed in
 * a way retrying cannot heal (log_cb). */
static gboolean
final_refusal (KtSource *self, GError **error)
{
  gboolean refused;

  g_mutex_lock (&self->broker_lock);
  refused = self->final_failure != NULL;
  if (refused)
    g_set_error (error, KT_ERROR, KT_ERROR_FATAL, "cannot connect to the Kafka brokers: %s "
                 "(retrying cannot help: check %s)", self->final_failure,
                 strstr (self->final_failure, "SSL handshake") != NULL
                 ? "ssl.ca.location" : "sasl.username and sasl.password");
  g_mutex_unlock (&self->broker_lock);
  return refused;
}

/* The topic's partitions and their replicas, compared with the last
 * listing's: a topic created again gets them anew (Kafka places the
 * replicas of each partition where it likes), where a leader's election
 * or a broker's restart leaves them as they were. */
static gint
by_partition_id (gconstpointer a, gconstpointer b, gpointer data)
{
  const rd_kafka_metadata_topic_t *t = data;
  gint32 x = t->partitions[*(const int *) a].id, y = t->partitions[*(const int *) b].id;

  return (x > y) - (x < y);
}

static void
note_layout (KtSource *self, const rd_kafka_metadata_topic_t *t)
{
  g_autoptr(GString) layout = g_string_new (NULL);
  g_autoptr(GArray) order = g_array_new (FALSE, FALSE, sizeof (int));

  /* By partition id: the answer's order is the broker's. */
  for (int i = 0; i < t->partition_cnt; i++)
    g_array_append_val (order, i);
  g_array_sort_with_data (order, by_partition_id, (gpointer) t);
  for (guint i = 0; i < order->len; i++)
    {
      const rd_kafka_metadata_partition_t *p = &t->partitions[g_array_index (order, int, i)];

      g_string_append_printf (layout, "%d:", p->id);
      for (int r = 0; r < p->replica_cnt; r++)
        g_string_append_printf (layout, "%s%d", r ? "," : "", p->replicas[r]);
      g_string_append_c (layout, ';');
    }
  if (self->layout != NULL && !g_str_equal (self->layout, layout->str))
    {
      g_debug ("%s: its partitions or their replicas changed: %s, were %s", self->topic,
               layout->str, self->layout);
      g_atomic_int_set (&self->changed, TRUE);
    }
  g_free (self->layout);
  self->layout = g_string_free (g_steal_pointer (&layout), FALSE);
}

gboolean
kt_source_take_changed (KtSource *self)
{
  return g_atomic_int_exchange (&self->changed, FALSE);
}

void
kt_source_take_assigned (KtSource *self, GArray *partitions)
{
  g_array_append_vals (partitions, self->assigned->data, self->assigned->len);
  g_array_set_size (self->assigned, 0);
}

guint64
kt_source_rebalances (KtSource *self)
{
  return self->rebalances;
}

gboolean
kt_source_changed (KtSource *self)
{
  return g_atomic_int_get (&self->changed);
}

gboolean
kt_source_partitions (KtSource *self, GArray *partitions, int timeout_ms,
                      GError **error)
{
  g_autoptr(KtKafkaMetadata) md = NULL;
  const rd_kafka_metadata_topic_t *t;
  rd_kafka_resp_err_t err;
  gint64 deadline;

  /* First, until a broker has answered: has librdkafka turned off a
   * feature we need? (A connection that needs SASL would fail below,
   * retried until the start-up timeout, for a reason it never names.) A
   * broker that answers takes milliseconds; one that is down costs at most
   * a second here, and the request below says why. */
  if (self->probe_conf != NULL)
    {
      gboolean judged;

      if (!kt_features_check (self->probe_conf, self->group, MIN (timeout_ms, 1000), &judged,
                              error))
        return FALSE;
      if (judged)
        g_clear_pointer (&self->probe_conf, rd_kafka_conf_destroy);
    }
  /* Asked in slices, from half a second up: a broker that refused the
   * credentials or whose certificate failed verification (log_cb) ends the
   * wait at once, not after the whole start-up timeout of retries. The
   * slice doubles after a request timed out, so that a broker slower to
   * answer than it still can. */
  deadline = g_get_monotonic_time () + (gint64) timeout_ms * 1000;
  for (int slice_ms = METADATA_SLICE_MS;;
       slice_ms = err == RD_KAFKA_RESP_ERR__TIMED_OUT ? MIN (slice_ms * 2, 60000) : slice_ms)
    {
      gint64 start = g_get_monotonic_time ();

      err = rd_kafka_metadata (self->meta, 0, self->meta_topic, &md,
                               (int) CLAMP ((deadline - start) / 1000, 1, slice_ms));
      if (err == RD_KAFKA_RESP_ERR_NO_ERROR)
        break;
      if (final_refusal (self, error))
        return FALSE;
      if (g_get_monotonic_time () >= deadline || (self->stop != NULL && *self->stop))
        break;
      /* An error at once (no broker known yet): no busy loop. */
      if (g_get_monotonic_time () - start < 50000)
        g_usleep (50000);
    }
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
    {
      g_autofree char *why = broker_failure (self, err);

      g_set_error (error, KT_ERROR, KT_ERROR_TRANSIENT,
                   "cannot get metadata for topic '%s': %s%s", self->topic,
                   rd_kafka_err2str (err), why);
      return FALSE;
    }
  if (md->topic_cnt != 1)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_TRANSIENT,
                   "metadata for topic '%s' is missing", self->topic);
      return FALSE;
    }
  t = &md->topics[0];
  if (t->err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART && self->seen)
    {
      /* It was there: deleted under the job. What the job had not read
       * of it is gone, and offsets stored for it name records of a log
       * that no longer exists. */
      g_atomic_int_set (&self->vanished, TRUE);
      g_set_error (error, KT_ERROR, KT_ERROR_DATA_LOSS,
                   "topic '%s' is gone (%s): deleted while the job ran; what it had not "
                   "read of it is lost, and its stored offsets are the deleted topic's",
                   self->topic, rd_kafka_err2str (t->err));
      return FALSE;
    }
  if (t->err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART
      || t->err == RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED
      || t->err == RD_KAFKA_RESP_ERR_TOPIC_EXCEPTION)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_FATAL, "topic '%s': %s",
                   self->topic, rd_kafka_err2str (t->err));
      return FALSE;
    }
  if (t->err != RD_KAFKA_RESP_ERR_NO_ERROR || t->partition_cnt == 0)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_TRANSIENT, "topic '%s': %s",
                   self->topic, t->err ? rd_kafka_err2str (t->err)
                                       : "no partitions yet");
      return FALSE;
    }

  self->seen = TRUE;
  g_array_set_size (partitions, 0);
  for (int i = 0; i < t->partition_cnt; i++)
    g_array_append_val (partitions, t->partitions[i].id);
  g_array_sort (partitions, compare_gint32);
  note_layout (self, t);
  return TRUE;
}

/* list_offsets_on() of at most LIST_CHUNK partitions: one call of
 * librdkafka. */
static gboolean
list_offsets_call (KtSource *self, rd_kafka_t *rk, const KtPartitionState *states,
                   guint n_states, gint64 timestamp, gint64 *offsets, int timeout_ms,
                   GError **error)
{
  g_autoptr(rd_kafka_topic_partition_list_t) list =
    rd_kafka_topic_partition_list_new ((int) MAX (n_states, 1));
  gint64 deadline = g_get_monotonic_time () + (gint64) timeout_ms * 1000;
  rd_kafka_resp_err_t err;

  if (n_states == 0)
    return TRUE;
  for (guint i = 0; i < n_states; i++)
    rd_kafka_topic_partition_list_add (list, self->topic, states[i].partition);
  /* In slices: a leader that is down makes the request wait for its
   * whole timeout, and a SIGTERM must not wait that long. Each slice asks
   * anew, so one shorter than the brokers' round trip never sees an
   * answer (with 500 ms slices, a leader 500 ms away was never heard
   * from): a slice that timed out is doubled, and the next requests start
   * from the longer one. Not while a broker is failing, though: a leader
   * that is down explains the time-out, no longer slice would hear it,
   * and a SIGTERM would wait the longest slice there. */
  for (;;)
    {
      gint64 left_ms = (deadline - g_get_monotonic_time ()) / 1000;
      gboolean failing = broker_failing (self);
      int slice_ms = failing ? OFFSETS_SLICE_MS : g_atomic_int_get (&self->offsets_slice_ms);

      /* The call writes its answers over the "timestamps": ask anew. */
      for (int i = 0; i < list->cnt; i++)
        list->elems[i].offset = timestamp;
      err = rd_kafka_offsets_for_times (rk, list, (int) CLAMP (left_ms, 1, slice_ms));
      if (err != RD_KAFKA_RESP_ERR__TIMED_OUT || left_ms <= slice_ms)
        break;
      if (!failing && !broker_failing (self))
        g_atomic_int_compare_and_exchange (&self->offsets_slice_ms, slice_ms,
                                           MIN (slice_ms * 2, OFFSETS_SLICE_MAX_MS));
      if (self->stop != NULL && *self->stop)
        {
          g_set_error_literal (error, KT_ERROR, KT_ERROR_CANCELLED,
                               "stopped while asking for the offsets");
          return FALSE;
        }
    }
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
    {
      g_autofree char *why = broker_failure (self, err);

      g_set_error (error, KT_ERROR, KT_ERROR_TRANSIENT,
                   "cannot get the offsets of %s: %s%s", self->topic,
                   rd_kafka_err2str (err), why);
      return FALSE;
    }
  for (guint i = 0; i < n_states; i++)
    {
      /* The call answers in the list as given, in its order: no search
       * (librdkafka's is a scan, a scan per partition is quadratic). */
      const rd_kafka_topic_partition_t *tp =
        (int) i < list->cnt && list->elems[i].partition == states[i].partition
        ? &list->elems[i]
        : rd_kafka_topic_partition_list_find (list, self->topic, states[i].partition);

      if (tp == NULL || tp->err != RD_KAFKA_RESP_ERR_NO_ERROR
          || (tp->offset < 0 && (timestamp < 0 || tp->offset != -1)))
        {
          g_set_error (error, KT_ERROR, KT_ERROR_TRANSIENT,
                       "cannot get the offsets of %s/%d: %s", self->topic,
                       states[i].partition,
                       tp == NULL ? "no answer" : rd_kafka_err2str (tp->err));
          return FALSE;
        }
      offsets[i] = tp->offset;
    }
  return TRUE;
}

/* librdkafka 2.0's offsets-for-times merges its answers into the list
 * given with a scan per partition (rd_kafka_topic_partition_list_update):
 * quadratic in the partitions of one call, 60% of a reset by time's CPU
 * at 1,024 of them. So a round of more partitions than this is cut into
 * calls of at most this many, in flight together: linear, one round trip. */
#define LIST_CHUNK 128

typedef struct
{
  KtSource               *self;
  rd_kafka_t             *rk;
  const KtPartitionState *states;
  guint                   n_states;
  gint64                  timestamp;
  gint64                 *offsets;
  int                     timeout_ms;
  GError                 *error;
} ListChunk;

static gpointer
list_chunk (gpointer data)
{
  ListChunk *c = data;

  return GINT_TO_POINTER (list_offsets_call (c->self, c->rk, c->states, c->n_states,
                                             c->timestamp, c->offsets, c->timeout_ms,
                                             &c->error));
}

/* One ListOffsets round for @n_states partitions at once, on @rk, one
 * request per leader (per LIST_CHUNK partitions), in parallel: @timestamp
 * is a time in milliseconds, or RD_KAFKA_OFFSET_BEGINNING /
 * RD_KAFKA_OFFSET_END; each partition's answer into @offsets (-1: no
 * record at or after that time). */
static gboolean
list_offsets_on (KtSource *self, rd_kafka_t *rk, const KtPartitionState *states,
                 guint n_states, gint64 timestamp, gint64 *offsets, int timeout_ms,
                 GError **error)
{
  guint n_chunks = (n_states + LIST_CHUNK - 1) / LIST_CHUNK;
  g_autofree ListChunk *chunks = NULL;
  g_autofree GThread **threads = NULL;
  gboolean ok = TRUE;

  if (n_chunks <= 1)
    return list_offsets_call (self, rk, states, n_states, timestamp, offsets, timeout_ms, error);
  chunks = g_new0 (ListChunk, n_chunks);
  threads = g_new0 (GThread *, n_chunks);
  for (guint c = 0; c < n_chunks; c++)
    {
      guint first = c * LIST_CHUNK;

      chunks[c] = (ListChunk) { self, rk, states + first, MIN (LIST_CHUNK, n_states - first),
                                timestamp, offsets + first, timeout_ms, NULL };
      /* The first on this thread; without a thread (out of resources),
       * the chunk waits for the join below. */
      if (c > 0)
        threads[c] = g_thread_try_new ("kt-offsets", list_chunk, &chunks[c], NULL);
    }
  for (guint c = 0; c < n_chunks; c++)
    {
      gboolean done = c == 0 || threads[c] == NULL
                      ? list_chunk (&chunks[c]) != NULL
                      : GPOINTER_TO_INT (g_thread_join (threads[c]));

      if (!done && ok)
        {
          g_propagate_error (error, g_steal_pointer (&chunks[c].error));
          ok = FALSE;
        }
      g_clear_error (&chunks[c].error);
    }
  return ok;
}

static gboolean
list_offsets (KtSource *self, const KtPartitionState *states, guint n_states,
              gint64 timestamp, gint64 *offsets, int timeout_ms, GError **error)
{
  return list_offsets_on (self, self->meta, states, n_states, timestamp, offsets, timeout_ms,
                          error);
}

gboolean
kt_source_high_watermarks (KtSource *self, const KtPartitionState *states, guint n_states,
                           gint64 *highs, int timeout_ms, GError **error)
{
  char errstr[512];

  if (self->uncommitted == NULL)
    {
      rd_kafka_conf_t *conf = rd_kafka_conf_dup (self->uncommitted_conf);

      self->uncommitted = rd_kafka_new (RD_KAFKA_CONSUMER, conf, errstr, sizeof errstr);
      if (self->uncommitted == NULL)
        {
          rd_kafka_conf_destroy (conf);
          g_set_error (error, KT_ERROR, KT_ERROR_INTERNAL,
                       "cannot create a Kafka client: %s", errstr);
          return FALSE;
        }
      self->uncommitted_topic = rd_kafka_topic_new (self->uncommitted, self->topic, NULL);
    }
  return list_offsets_on (self, self->uncommitted, states, n_states, RD_KAFKA_OFFSET_END,
                          highs, timeout_ms, error);
}

/* The log starts' round of kt_source_watermarks(), on a thread of its own. */
typedef struct
{
  KtSource               *self;
  const KtPartitionState *states;
  guint                   n_states;
  gint64                 *low;
  int                     timeout_ms;
  GError                 *error;
} LowRound;

static gpointer
low_round (gpointer data)
{
  LowRound *r = data;

  return GINT_TO_POINTER (list_offsets (r->self, r->states, r->n_states,
                                        RD_KAFKA_OFFSET_BEGINNING, r->low, r->timeout_ms,
                                        &r->error));
}

gboolean
kt_source_watermarks (KtSource *self, KtPartitionState *states, guint n_states,
                      int timeout_ms, GError **error)
{
  /* Two ListOffsets rounds for all partitions at once (the "timestamps"
   * -2 and -1 mean earliest and latest): a few milliseconds for 64
   * partitions where one watermark query per partition took 25-60. One
   * request cannot carry both (Kafka answers INVALID_REQUEST to a
   * partition named twice in a ListOffsets), so the two rounds are in
   * flight together: a batch's planning waits one round trip, not two. */
  g_autofree gint64 *low = g_new (gint64, MAX (n_states, 1));
  g_autofree gint64 *high = g_new (gint64, MAX (n_states, 1));
  LowRound round = { self, states, n_states, low, timeout_ms, NULL };
  g_autoptr(GError) high_error = NULL;
  GThread *thread;
  gboolean low_ok, high_ok;

  if (n_states == 0)
    return TRUE;
  thread = g_thread_try_new ("kt-watermarks", low_round, &round, NULL);
  high_ok = list_offsets (self, states, n_states, RD_KAFKA_OFFSET_END, high, timeout_ms,
                          &high_error);
  /* No thread (out of resources): the rounds one after the other. */
  low_ok = thread != NULL ? GPOINTER_TO_INT (g_thread_join (thread)) : low_round (&round) != NULL;
  if (!low_ok)
    {
      g_propagate_error (error, round.error);
      return FALSE;
    }
  if (!high_ok)
    {
      g_propagate_error (error, g_steal_pointer (&high_error));
      return FALSE;
    }
  for (guint i = 0; i < n_states; i++)
    {
      states[i].low = low[i];
      states[i].high = high[i];
    }
  return TRUE;
}

gboolean
kt_source_offsets_for_time (KtSource *self, const KtPartitionState *states, guint n_states,
                            gint64 ms, gint64 *offsets, int timeout_ms, GError **error)
{
  const KtPartitionState *none = NULL;
  gint64 first;

  if (!list_offsets (self, states, n_states, ms, offsets, timeout_ms, error))
    return FALSE;
  for (guint i = 0; i < n_states && none == NULL; i++)
    if (offsets[i] < 0 && states[i].high > states[i].low)
      none = &states[i];
  if (none == NULL)
    return TRUE;
  /* "No record at or after @ms" is also what a broker that cannot look
   * offsets up by time answers (librdkafka's mock cluster): a partition
   * that holds records has one at or after the epoch's start. One such
   * partition asked tells which broker this is (it answers for all). */
  if (!list_offsets (self, none, 1, 0, &first, timeout_ms, error))
    return FALSE;
  if (first < 0)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_FATAL,
                   "the brokers of %s cannot look up offsets by time: asked for the "
                   "first record at or after 1970-01-01T00:00:00Z of %s/%d, which holds [%"
                   G_GINT64_FORMAT ", %" G_GINT64_FORMAT "), they answered none (librdkafka's "
                   "mock cluster does that; Apache Kafka does not)", self->topic,
                   self->topic, none->partition, none->low, none->high);
      return FALSE;
    }
  return TRUE;
}

/* One partition as the source sees it, kept from batch to batch: once a
 * partition is assigned it stays assigned, and librdkafka keeps fetching
 * ahead while the previous batch commits. Records pulled past a range's end
 * wait in `carry` for the next batch, so consecutive batches cost no
 * re-assignment and no re-fetch (Spark's cached Kafka consumer does the
 * same). Invariant: every offset below `handed` was handed to the callback
 * (or is a gap), `carry` holds the pulled records in [handed, pulled), in
 * order, and librdkafka delivers from `pulled` on. */
typedef struct
{
  gint32   partition;
  gint64   handed;
  gint64   pulled;
  GQueue   carry;        /* rd_kafka_message_t *, owned */
  gint64   carry_bytes;
  gint64   handed_ts;    /* Kafka timestamp (ms) of the record at handed - 1; -1: none */
  /* The last record this read handed over, as the range's anchor
   * (anchor.h); unset while one may follow at once (hand_over). */
  KtAnchor last;
  /* The range of the batch being read, if any. */
  gboolean active;
  gboolean done;
  gint64   until;
} Stream;

static void
stream_drop_carry (Stream *st)
{
  rd_kafka_message_t *m;

  while ((m = g_queue_pop_head (&st->carry)) != NULL)
    rd_kafka_message_destroy (m);
  st->carry_bytes = 0;
}

static Stream *
stream_new (gint32 partition, gint64 at)
{
  Stream *st = g_new0 (Stream, 1);

  st->partition = partition;
  st->handed = st->pulled = at;
  st->handed_ts = -1;
  g_queue_init (&st->carry);
  return st;
}

static void
stream_free (gpointer data)
{
  Stream *st = data;
  stream_drop_carry (st);
  g_free (st);
}

/* Batch-wide reading state. */
typedef struct
{
  KtSource     *self;
  KtRecordFunc  func;
  gpointer      user_data;
  guint         remaining;  /* active streams not done */
  gint64        bytes;      /* handed over plus carried */
  gint64        carried;    /* records carried, over all streams */
  gint64        handed_bytes;
  guint64       handed;     /* records handed over */
  gint64        last_progress;
  /* The previous record's stream: records come in runs of one partition
   * (a message set). Reset after every consume call, which may run a
   * rebalance that frees streams. */
  Stream       *last;
} Reading;

/* Hands @m over. @more: the next record of its partition is in hand and
 * inside the range, so it is handed over right after this one: only the
 * last of such a run can be the range's last, and only its key and value
 * are hashed for the anchor (a record a run, not a hash a record). */
static void
hand_over (Reading *rd, Stream *st, const rd_kafka_message_t *m, gboolean more)
{
  rd->func (m->partition, m->offset, m->payload, m->len, rd->user_data);
  rd->handed_bytes += (gint64) m->len;
  rd->bytes += (gint64) m->len;
  rd->handed++;
  st->handed = m->offset + 1;
  st->handed_ts = rd_kafka_message_timestamp (m, NULL);
  st->last.set = !more;
  if (!more)
    {
      st->last.offset = m->offset;
      st->last.timestamp = st->handed_ts;
      st->last.hash = kt_anchor_hash (m->key, m->key_len, m->payload, m->len);
    }
}

/* A range is done once nothing below `until` is left to hand over: a record
 * at until - 1 was handed, or the stream has moved past until (later
 * records, or the end of the log) with nothing below it carried. */
static void
check_done (Reading *rd, Stream *st)
{
  rd_kafka_message_t *head;

  if (!st->active || st->done)
    return;
  head = g_queue_peek_head (&st->carry);
  if (st->handed >= st->until
      || (head != NULL && head->offset >= st->until)
      || (head == NULL && st->pulled >= st->until))
    {
      st->done = TRUE;
      rd->remaining--;
    }
}

/* Hands over the carried records of an active range that fall inside it. */
static void
drain_carry (Reading *rd, Stream *st)
{
  rd_kafka_message_t *m;

  while (!st->done && (m = g_queue_peek_head (&st->carry)) != NULL
         && m->offset < st->until)
    {
      const rd_kafka_message_t *next;

      g_queue_pop_head (&st->carry);
      next = g_queue_peek_head (&st->carry);
      st->carry_bytes -= (gint64) m->len;
      rd->bytes -= (gint64) m->len;
      rd->carried--;
      hand_over (rd, st, m, next != NULL && next->offset < st->until);
      rd_kafka_message_destroy (m);
      check_done (rd, st);
    }
  check_done (rd, st);
}

/* Takes one record or event from librdkafka (@next: the one after it in
 * hand, or NULL). Returns FALSE with @error on an offset that vanished
 * under us. */
static gboolean
take (Reading *rd, rd_kafka_message_t *m, const rd_kafka_message_t *next, GError **error)
{
  KtSource *self = rd->self;
  Stream *st = rd->last;

  self->taken_records++;
  self->taken_bytes += (gint64) m->len;

  if (st == NULL || st->partition != m->partition)
    st = rd->last = g_hash_table_lookup (self->streams, GINT_TO_POINTER (m->partition));

  if (m->err == RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED
      || m->err == RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED)
    {
      gboolean group = m->err == RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED;

      /* An ACL, not an outage: librdkafka would ask again for ever (a
       * group member waiting for an assignment that never comes). */
      g_set_error (error, KT_ERROR, KT_ERROR_FATAL, "%s '%s': %s (the brokers' ACLs do not "
                   "allow this principal to read %s)",
                   group ? "the consumer group of topic" : "topic", self->topic,
                   rd_kafka_message_errstr (m), group ? "the consumer group" : "the topic");
      rd_kafka_message_destroy (m);
      return FALSE;
    }
  if (st == NULL)
    ;  /* not a partition we assigned: drop */
  else if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF)
    {
      /* Everything below the log's end has been delivered: offsets between
       * the last record and it are gaps. */
      st->pulled = MAX (st->pulled, m->offset);
      check_done (rd, st);
    }
  else if (m->err == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET
           || m->err == RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE)
    {
      /* Retention, or a log that is not the one read (a topic created
       * again, shorter than where the reader stood): the anchors say.
       * A read fails here, and a failed batch checks them anyway; one
       * ahead of the batches (kt_source_serve) must say it. */
      if (!st->active)
        g_atomic_int_set (&self->changed, TRUE);
      g_set_error (error, KT_ERROR, KT_ERROR_OVERTAKEN,
                   "%s/%d: retention removed offset %" G_GINT64_FORMAT " while it "
                   "was being read; nothing was committed, planning again",
                   self->topic, st->partition, st->pulled);
      /* Where the fetcher stands is unknown now: start this one afresh. */
      st->handed = st->pulled = -1;
      rd_kafka_message_destroy (m);
      return FALSE;
    }
  else if (m->err == RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE)
    {
      /* librdkafka gave up growing its fetch size for this partition. */
      g_set_error (error, KT_ERROR, KT_ERROR_FATAL,
                   "cannot read %s/%d at offset %" G_GINT64_FORMAT ": a record there is "
                   "too large to fetch (%s); raise -X receive.message.max.bytes",
                   self->topic, st->partition, m->offset, rd_kafka_message_errstr (m));
      rd_kafka_message_destroy (m);
      return FALSE;
    }
  else if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR)
    /* Broker down, leader moved, ...: librdkafka retries by itself; the
     * stall timer decides when to give up on the batch. */
    g_debug ("%s/%d: %s", self->topic, m->partition, rd_kafka_message_errstr (m));
  else if (m->offset >= st->pulled)  /* anything older was pulled already */
    {
      st->pulled = m->offset + 1;
      if (st->active && !st->done && m->offset < st->until
          && g_queue_is_empty (&st->carry))
        hand_over (rd, st, m, next != NULL && next->partition == m->partition
                              && next->err == RD_KAFKA_RESP_ERR_NO_ERROR
                              && next->offset > m->offset && next->offset < st->until);
      else
        {
          /* Past the range, or a partition this batch does not read. */
          g_queue_push_tail (&st->carry, m);
          st->carry_bytes += (gint64) m->len;
          rd->bytes += (gint64) m->len;
          rd->carried++;
          m = NULL;
        }
      check_done (rd, st);
    }

  if (m != NULL)
    rd_kafka_message_destroy (m);
  return TRUE;
}

/* assign() with every stream: it replaces the whole assignment, so the
 * streams already there go on from where librdkafka stood (their carry
 * stays valid). */
static gboolean
assign_streams (KtSource *self, GError **error)
{
  g_autoptr(rd_kafka_topic_partition_list_t) all =
    rd_kafka_topic_partition_list_new ((int) g_hash_table_size (self->streams));
  g_autoptr(rd_kafka_topic_t) rkt = rd_kafka_topic_new (self->rk, self->topic, NULL);
  g_autoptr(KtKafkaMetadata) md = NULL;
  rd_kafka_resp_err_t err;
  GHashTableIter iter;
  gpointer value;

  /* Without the topic's metadata on this handle, assign() would wait for
   * the next periodic refresh (about a second). */
  err = rkt == NULL ? rd_kafka_last_error ()
                    : rd_kafka_metadata (self->rk, 0, rkt, &md, 10000);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_TRANSIENT,
                   "cannot get metadata for topic '%s': %s", self->topic,
                   rd_kafka_err2str (err));
      g_hash_table_remove_all (self->streams);
      return FALSE;
    }
  g_hash_table_iter_init (&iter, self->streams);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    rd_kafka_topic_partition_list_add (all, self->topic, ((Stream *) value)->partition)->offset =
      ((Stream *) value)->pulled;
  err = rd_kafka_assign (self->rk, all);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_TRANSIENT,
                   "cannot assign partitions of '%s': %s", self->topic,
                   rd_kafka_err2str (err));
      g_hash_table_remove_all (self->streams);
      return FALSE;
    }
  return TRUE;
}

/* Seeks the streams of @seek; NULL if it worked, else librdkafka's words. */
static char *
seek_streams (KtSource *self, rd_kafka_topic_partition_list_t *seek)
{
  /* librdkafka before 2.1 read this timeout as microseconds (fixed
   * upstream in 2.1.0): 10 s meant 10 ms, and seeks "timed out". */
  int timeout = rd_kafka_version () < 0x020100ff ? 10000 * 1000 : 10000;
  rd_kafka_error_t *e = rd_kafka_seek_partitions (self->rk, seek, timeout);
  char *why;

  for (int i = 0; e == NULL && i < seek->cnt; i++)
    if (seek->elems[i].err != RD_KAFKA_RESP_ERR_NO_ERROR)
      e = rd_kafka_error_new (seek->elems[i].err, "%s", rd_kafka_err2str (seek->elems[i].err));
  if (e == NULL)
    return NULL;
  why = g_strdup (rd_kafka_error_string (e));
  rd_kafka_error_destroy (e);
  return why;
}

/* --group: hands the member's partitions (its streams) to librdkafka
 * again, as the group assigned them: a partition whose fetch failed
 * (auto.offset.reset=error: an offset out of range) stays stopped and
 * refuses seeks, and only an assignment starts it again. Every position
 * is forgotten (the streams' are -1: the next plan seeks each); they
 * start at the log's end meanwhile, an offset that always exists. */
static void
member_reassign (KtSource *self)
{
  g_autoptr(rd_kafka_topic_partition_list_t) all =
    rd_kafka_topic_partition_list_new ((int) MAX (g_hash_table_size (self->streams), 1));
  rd_kafka_error_t *e = NULL;
  GHashTableIter iter;
  gpointer value;

  g_hash_table_iter_init (&iter, self->streams);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    rd_kafka_topic_partition_list_add (all, self->topic, ((Stream *) value)->partition)->offset =
      RD_KAFKA_OFFSET_END;
  if (all->cnt == 0)
    return;
  if (g_str_equal (rd_kafka_rebalance_protocol (self->rk), "COOPERATIVE"))
    {
      e = rd_kafka_incremental_unassign (self->rk, all);
      if (e == NULL)
        e = rd_kafka_incremental_assign (self->rk, all);
    }
  else
    {
      rd_kafka_resp_err_t err = rd_kafka_assign (self->rk, all);

      if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
        e = rd_kafka_error_new (err, "%s", rd_kafka_err2str (err));
    }
  if (e != NULL)
    {
      g_debug ("cannot assign the partitions of '%s' again: %s", self->topic,
               rd_kafka_error_string (e));
      rd_kafka_error_destroy (e);
    }
}

/* Makes librdkafka deliver every active stream from where its range starts:
 * new partitions join the assignment, streams that are elsewhere (after a
 * fence, a failed batch, a skipped data loss) seek. */
static gboolean
position_streams (KtSource *self, GArray *ranges, gboolean fresh, GError **error)
{
  g_autoptr(rd_kafka_topic_partition_list_t) seek = rd_kafka_topic_partition_list_new (4);
  g_autofree char *why = NULL;
  gboolean reassign = FALSE;

  for (guint i = 0; i < ranges->len; i++)
    {
      const KtRange *r = &g_array_index (ranges, KtRange, i);
      Stream *st = g_hash_table_lookup (self->streams, GINT_TO_POINTER (r->partition));

      if (st == NULL && self->group)
        {
          /* Planned, then taken away by the group before the read. */
          g_set_error (error, KT_ERROR, KT_ERROR_REBALANCED,
                       "%s/%d is no longer assigned to this instance", self->topic,
                       r->partition);
          return FALSE;
        }
      if (st == NULL)
        {
          st = stream_new (r->partition, r->read_from);
          g_hash_table_insert (self->streams, GINT_TO_POINTER (r->partition), st);
          reassign = TRUE;
        }
      else if (st->handed != r->read_from)
        {
          g_debug ("%s/%d: seeking from %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT,
                   self->topic, r->partition, st->handed, r->read_from);
          stream_drop_carry (st);
          st->handed = st->pulled = r->read_from;
          rd_kafka_topic_partition_list_add (seek, self->topic, r->partition)->offset =
            r->read_from;
        }
    }

  if (reassign)
    return assign_streams (self, error);
  if (seek->cnt == 0 || (why = seek_streams (self, seek)) == NULL)
    return TRUE;
  if (self->group)
    {
      /* The group owns the assignment: keep it, forget positions. */
      GHashTableIter iter;
      gpointer value;

      g_hash_table_iter_init (&iter, self->streams);
      while (g_hash_table_iter_next (&iter, NULL, &value))
        {
          stream_drop_carry (value);
          ((Stream *) value)->handed = ((Stream *) value)->pulled = -1;
        }
      /* A partition whose fetch failed (an offset gone: retention, or a
       * topic created again shorter) refuses seeks for good: its
       * partitions given to librdkafka again, the next plan seeks. */
      if (!fresh)
        {
          g_debug ("cannot seek in '%s': %s; assigning this member's partitions again",
                   self->topic, why);
          member_reassign (self);
        }
      g_set_error (error, KT_ERROR, KT_ERROR_TRANSIENT, "cannot seek in '%s': %s",
                   self->topic, why);
      return FALSE;
    }
  /* A partition whose fetch failed (an offset that retention removed)
   * refuses seeks ("Erroneous state"): assign every partition afresh, at
   * the planned offsets, and go on. */
  rd_kafka_assign (self->rk, NULL);
  g_hash_table_remove_all (self->streams);
  if (!fresh)
    {
      g_debug ("cannot seek in '%s': %s; assigning its partitions afresh", self->topic, why);
      return position_streams (self, ranges, TRUE, error);
    }
  g_set_error (error, KT_ERROR, KT_ERROR_TRANSIENT, "cannot seek in '%s': %s", self->topic, why);
  return FALSE;
}

/* Whether the read is stuck behind an answer librdkafka refuses as larger
 * than receive.message.max.bytes: one was reported lately, and no record
 * has come for OVERSIZE_GRACE_US. Retrying cannot help, so it is fatal,
 * naming where each unfinished range stands (a broker's answer carries
 * every partition it leads: the record batch is at one of these). */
#define OVERSIZE_GRACE_US   (3 * G_USEC_PER_SEC)
/* While it lasts, librdkafka reports it again within 30 s at the latest. */
#define OVERSIZE_RECENT_US  (40 * G_USEC_PER_SEC)
static gboolean
oversized (KtSource *self, const Reading *rd, const GArray *ranges, gint64 now,
           GError **error)
{
  g_autoptr(GString) where = NULL;
  guint named = 0;

  if (self->oversize_at == 0 || now - self->oversize_at > OVERSIZE_RECENT_US
      || now - rd->last_progress < OVERSIZE_GRACE_US)
    return FALSE;
  where = g_string_new (NULL);
  for (guint i = 0; i < ranges->len; i++)
    {
      const KtRange *r = &g_array_index (ranges, KtRange, i);
      const Stream *st = g_hash_table_lookup (self->streams, GINT_TO_POINTER (r->partition));

      if (st == NULL || st->done)
        continue;
      if (named++ < 4)
        g_string_append_printf (where, "%s%s/%d from offset %" G_GINT64_FORMAT,
                                named > 1 ? ", " : "", self->topic, st->partition,
                                st->pulled);
    }
  if (named > 4)
    g_string_append_printf (where, " and %u more partitions", named - 4);
  g_set_error (error, KT_ERROR, KT_ERROR_FATAL,
               "cannot read %s: a record batch there is larger than "
               "receive.message.max.bytes allows (librdkafka: %s); raise -X "
               "receive.message.max.bytes (and keep -X fetch.max.bytes, if set, at "
               "least 512 below it)", where->str, self->oversize);
  return TRUE;
}

/* Starts reading @ranges: their streams active, carried records counted
 * against the caps like fresh ones, and those inside a range handed over. */
static void
begin_reading (Reading *rd, GArray *ranges)
{
  KtSource *self = rd->self;
  GHashTableIter iter;
  gpointer value;

  g_hash_table_iter_init (&iter, self->streams);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      rd->bytes += ((Stream *) value)->carry_bytes;
      rd->carried += g_queue_get_length (&((Stream *) value)->carry);
    }
  for (guint i = 0; i < ranges->len; i++)
    {
      const KtRange *r = &g_array_index (ranges, KtRange, i);
      Stream *st = g_hash_table_lookup (self->streams, GINT_TO_POINTER (r->partition));

      st->active = TRUE;
      st->done = FALSE;
      st->until = r->until;
      st->last.set = FALSE;
      rd->remaining++;
    }
  for (guint i = 0; i < ranges->len; i++)
    drain_carry (rd, g_hash_table_lookup (self->streams,
                                          GINT_TO_POINTER (g_array_index (ranges, KtRange, i).partition)));
}

/* One call to librdkafka and what follows it; FALSE with @error when the
 * read cannot go on (stopped, a rebalance, an offset gone, an answer too
 * large, no progress for @stall_ms). */
static gboolean
read_some (Reading *rd, GArray *ranges, const volatile int *stop, int stall_ms,
           GError **error)
{
  KtSource *self = rd->self;
  rd_kafka_message_t *msgs[1024];
  guint64 handed_before = rd->handed;
  gboolean ok = TRUE;
  gint64 now;
  ssize_t n;

  if (*stop)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_CANCELLED, "stopped while reading");
      return FALSE;
    }
  /* What is queued, at once; else a wait that ends with the first record
   * to arrive, then what came with it. consume_batch returns early only
   * when the array is full, so its own wait (10 ms, as this was) was paid
   * whole whenever the batch's last records were still being fetched:
   * at the end of most batches of a steady stream, and in the freshness
   * of every record. Measured on Apache Kafka, 64 partitions, --interval
   * 0.2: the read's time blocked in librdkafka fell from 21 to 5 ms a
   * batch at 5,000 records/s, from 17 to 6 ms at 50,000. */
  n = rd_kafka_consume_batch_queue (self->queue, 0, msgs, G_N_ELEMENTS (msgs));
  if (n == 0)
    {
      msgs[0] = rd_kafka_consume_queue (self->queue, 10);
      if (msgs[0] != NULL)
        {
          ssize_t more = rd_kafka_consume_batch_queue (self->queue, 0, msgs + 1,
                                                       G_N_ELEMENTS (msgs) - 1);

          /* A failure there is seen by the next call: this record is in hand. */
          n = 1 + MAX (more, 0);
        }
    }
  rd->last = NULL;
  if (n < 0)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_TRANSIENT, "cannot consume from '%s': %s",
                   self->topic, rd_kafka_err2str (rd_kafka_last_error ()));
      return FALSE;
    }
  for (ssize_t i = 0; i < n; i++)
    {
      /* After a failure the rest of the array is still ours to free. */
      if (!ok)
        rd_kafka_message_destroy (msgs[i]);
      else
        ok = take (rd, msgs[i], i + 1 < n ? msgs[i + 1] : NULL, error);
    }
  maybe_nudge (self);
  if (self->poll_main)
    rd_kafka_poll (self->rk, 0);  /* error_cb */
  if (ok && g_atomic_int_get (&self->changed))
    {
      /* Partitions of the topic vanished under us: what comes next may be
       * another topic's log, read on from the old offsets. The next plan
       * checks the anchors first. */
      g_set_error (error, KT_ERROR, KT_ERROR_OVERTAKEN,
                   "topic %s changed while the batch was read (its partitions vanished, "
                   "or moved to other replicas): nothing was committed, planning again",
                   self->topic);
      return FALSE;
    }
  if (ok && kt_assignment_take_revoked (self->assignment))
    {
      /* Positions are unknown after a rebalance (see streams_apply). */
      g_set_error (error, KT_ERROR, KT_ERROR_REBALANCED,
                   "the group rebalanced while the batch was read; it is "
                   "abandoned (nothing was committed) and planned again");
      return FALSE;
    }
  /* One clock read per call, not per record. */
  now = g_get_monotonic_time ();
  if (rd->handed != handed_before)
    rd->last_progress = now;
  if (ok && oversized (self, rd, ranges, now, error))
    return FALSE;
  if (ok && (now - rd->last_progress) / 1000 > stall_ms)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_TRANSIENT,
                   "no record arrived from %u partition(s) of '%s' for %d s",
                   rd->remaining, self->topic, stall_ms / 1000);
      return FALSE;
    }
  return ok;
}

/* A read a cap stopped early, as an event (its fields are what tests
 * and machines read; the words are for people). */
static void
report_capped (KtSource *self, const Reading *rd)
{
  g_autoptr(KtLogEvent) e = kt_log_event_new ("read-stopped");
  gboolean bytes = rd->bytes >= self->max_batch_bytes;

  kt_log_event_string (e, "topic", self->topic);
  kt_log_event_int (e, "short", rd->remaining);
  kt_log_event_string (e, "cap", bytes ? "bytes" : "carried");
  kt_log_event_emit (e, G_LOG_LEVEL_DEBUG, "%s: read stopped early, %u range(s) short, at the %s",
                     self->topic, rd->remaining, bytes
                     ? "byte cap (--max-batch-bytes)"
                     : "bound on records carried past their ranges (queued.min.messages)");
}

gboolean
kt_source_read (KtSource *self, GArray *ranges, KtRecordFunc func,
                gpointer user_data, const volatile int *stop, int stall_ms,
                GError **error)
{
  Reading rd = { .self = self, .func = func, .user_data = user_data,
                 .last_progress = g_get_monotonic_time () };
  gboolean capped = FALSE, ok = TRUE;

  self->last_bytes = 0;
  if (!position_streams (self, ranges, FALSE, error))
    return FALSE;
  begin_reading (&rd, ranges);
  while (rd.remaining > 0 && ok && !capped)
    {
      ok = read_some (&rd, ranges, stop, stall_ms, error);
      capped = rd.bytes >= self->max_batch_bytes || rd.carried >= self->max_carried;
    }

  self->last_bytes = rd.handed_bytes;
  if (ok && capped && rd.remaining > 0)
    report_capped (self, &rd);
  for (guint i = 0; i < ranges->len; i++)
    {
      KtRange *r = &g_array_index (ranges, KtRange, i);
      Stream *st = g_hash_table_lookup (self->streams, GINT_TO_POINTER (r->partition));

      if (st == NULL)
        continue;
      if (ok && st->done)
        st->handed = MAX (st->handed, r->until);  /* the rest were gaps */
      else if (ok)
        r->until = st->handed;  /* a cap stopped us here */
      if (ok)
        r->anchor = st->last.set && st->last.offset >= r->read_from
                    && st->last.offset < r->until ? st->last : (KtAnchor) { 0 };
      st->active = FALSE;
    }
  return ok;
}

gboolean
kt_source_committed (KtSource *self, KtPartitionState *states, guint n_states,
                     int timeout_ms, GError **error)
{
  g_autoptr(rd_kafka_topic_partition_list_t) list =
    rd_kafka_topic_partition_list_new ((int) MAX (n_states, 1));
  rd_kafka_resp_err_t err;

  for (guint i = 0; i < n_states; i++)
    rd_kafka_topic_partition_list_add (list, self->topic, states[i].partition);
  err = rd_kafka_committed (self->rk, list, timeout_ms);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_TRANSIENT,
                   "cannot read the committed offsets of '%s': %s", self->topic,
                   rd_kafka_err2str (err));
      return FALSE;
    }
  for (guint i = 0; i < n_states; i++)
    {
      const rd_kafka_topic_partition_t *tp = &list->elems[i];
      if (tp->err != RD_KAFKA_RESP_ERR_NO_ERROR)
        {
          g_set_error (error, KT_ERROR, KT_ERROR_TRANSIENT,
                       "cannot read the committed offset of %s/%d: %s", self->topic,
                       tp->partition, rd_kafka_err2str (tp->err));
          return FALSE;
        }
      states[i].stored = tp->offset >= 0 ? tp->offset : -1;
    }
  return TRUE;
}

gboolean
kt_source_commit (KtSource *self, const GArray *ranges, GError **error)
{
  g_autoptr(rd_kafka_topic_partition_list_t) list =
    rd_kafka_topic_partition_list_new ((int) MAX (ranges->len, 1));
  rd_kafka_resp_err_t err;

  if (ranges->len == 0)
    return TRUE;
  for (guint i = 0; i < ranges->len; i++)
    {
      const KtRange *r = &g_array_index (ranges, KtRange, i);
      rd_kafka_topic_partition_list_add (list, self->topic, r->partition)->offset = r->until;
    }
  err = rd_kafka_commit (self->rk, list, 0 /* synchronous */);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_TRANSIENT,
                   "cannot commit offsets of '%s' to Kafka: %s", self->topic,
                   rd_kafka_err2str (err));
      return FALSE;
    }
  return TRUE;
}

/* --group (assignment.h): the partitions with a stream. */
static void
streams_held (gpointer data, GArray *partitions)
{
  KtSource *self = data;
  GHashTableIter iter;
  gpointer key;

  g_hash_table_iter_init (&iter, self->streams);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    {
      gint32 p = GPOINTER_TO_INT (key);
      g_array_append_val (partitions, p);
    }
}

static gboolean
plan_owns (const KtAssignmentPlan *plan, gint32 partition)
{
  for (guint i = 0; i < plan->owned->len; i++)
    if (g_array_index (plan->owned, KtAssignedPartition, i).partition == partition)
      return TRUE;
  return FALSE;
}

/* --group: a rebalance's @plan, from inside a consume call on this
 * thread. A newly assigned partition gets a stream at the offset stored in
 * MySQL (unknown when that cannot be read: every plan seeks first); a
 * revoked partition's stream and carried records go at once; a read in
 * progress notices (kt_assignment_take_revoked) and abandons its batch,
 * which commits nothing. */
static void
streams_apply (gpointer data, const KtAssignmentPlan *plan)
{
  KtSource *self = data;
  GHashTableIter iter;
  gpointer key, value;

  /* librdkafka 2.0 pauses every fetcher during a cooperative rebalance and
   * may resume a partition it keeps past records it had fetched but not
   * yet handed to us (measured: a retained partition skipped 89 records).
   * So no position survives a rebalance: every stream forgets where it
   * was, the read in flight is abandoned, and the next plan seeks each
   * partition to the offset stored in MySQL. */
  g_hash_table_iter_init (&iter, self->streams);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      Stream *st = value;
      stream_drop_carry (st);
      st->handed = st->pulled = -1;
      if (!plan_owns (plan, GPOINTER_TO_INT (key)))
        g_hash_table_iter_remove (&iter);
    }
  for (guint i = 0; i < plan->assign->len; i++)
    {
      const KtAssignedPartition *a = &g_array_index (plan->assign, KtAssignedPartition, i);

      g_hash_table_replace (self->streams, GINT_TO_POINTER (a->partition),
                            stream_new (a->partition, a->offset));
      g_array_append_val (self->assigned, a->partition);
    }
  self->rebalances++;
}

/* --group: Kafka's group protocol gives and takes partitions here; what it
 * means is assignment.c's. */
static void
rebalance_cb (rd_kafka_t *rk, rd_kafka_resp_err_t err,
              rd_kafka_topic_partition_list_t *parts, void *opaque)
{
  KtSource *self = opaque;

  kt_assignment_rebalance (self->assignment, rk, err, parts);
}

gboolean
kt_source_subscribe (KtSource *self, GError **error)
{
  g_autoptr(rd_kafka_topic_partition_list_t) topics = rd_kafka_topic_partition_list_new (1);
  rd_kafka_resp_err_t err;

  rd_kafka_topic_partition_list_add (topics, self->topic, RD_KAFKA_PARTITION_UA);
  err = rd_kafka_subscribe (self->rk, topics);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_FATAL, "cannot subscribe to '%s': %s",
                   self->topic, rd_kafka_err2str (err));
      return FALSE;
    }
  return TRUE;
}

void
kt_source_owned (KtSource *self, GArray *partitions, gboolean *assigned)
{
  GHashTableIter iter;
  gpointer key;

  g_array_set_size (partitions, 0);
  g_hash_table_iter_init (&iter, self->streams);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    {
      gint32 p = GPOINTER_TO_INT (key);
      g_array_append_val (partitions, p);
    }
  g_array_sort (partitions, compare_gint32);
  *assigned = kt_assignment_assigned_once (self->assignment);
}

void
kt_source_serve (KtSource *self, int timeout_ms)
{
  Reading rd = { .self = self };
  rd_kafka_message_t *msgs[256];
  GHashTableIter iter;
  gpointer value;
  ssize_t n;

  g_hash_table_iter_init (&iter, self->streams);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      rd.bytes += ((Stream *) value)->carry_bytes;
      rd.carried += g_queue_get_length (&((Stream *) value)->carry);
    }
  if (rd.bytes >= self->max_batch_bytes || rd.carried >= 2 * self->max_carried)
    {
      /* Enough carried for the next batch: events wait until it runs. */
      g_usleep ((gulong) timeout_ms * 1000);
      return;
    }
  n = rd_kafka_consume_batch_queue (self->queue, timeout_ms, msgs, G_N_ELEMENTS (msgs));
  for (ssize_t i = 0; i < n; i++)
    {
      g_autoptr(GError) failed = NULL;
      /* A vanished offset marks its stream unknown: the next plan seeks.
       * A refusal is kept for it. */
      if (!take (&rd, msgs[i], NULL, &failed) && self->refused == NULL
          && g_error_matches (failed, KT_ERROR, KT_ERROR_FATAL))
        self->refused = g_steal_pointer (&failed);
    }
  maybe_nudge (self);
  if (self->poll_main)
    rd_kafka_poll (self->rk, 0);  /* error_cb */
}

gboolean
kt_source_refused (KtSource *self, GError **error)
{
  if (self->refused == NULL)
    return TRUE;
  g_propagate_error (error, g_steal_pointer (&self->refused));
  return FALSE;
}

gboolean
kt_source_is_refused (KtSource *self)
{
  return self->refused != NULL;
}

const char *
kt_source_protocol (KtSource *self)
{
  return kt_assignment_assigned_once (self->assignment) ? rd_kafka_rebalance_protocol (self->rk)
                                                        : "NONE";
}

/* DescribeGroups of @group (its members and their assignments), or NULL
 * with KT_ERROR_TRANSIENT. */
static const struct rd_kafka_group_list *
describe_group (KtSource *self, const char *group, int timeout_ms, GError **error)
{
  const struct rd_kafka_group_list *list = NULL;
  rd_kafka_resp_err_t err = rd_kafka_list_groups (self->meta, group, &list, timeout_ms);

  if (err == RD_KAFKA_RESP_ERR_NO_ERROR)
    return list;
  g_set_error (error, KT_ERROR, KT_ERROR_TRANSIENT, "cannot describe group '%s': %s",
               group, rd_kafka_err2str (err));
  return NULL;
}

gboolean
kt_source_group_owners (KtSource *self, const char *group, GHashTable *owners,
                        int timeout_ms, GError **error)
{
  const struct rd_kafka_group_list *list = describe_group (self, group, timeout_ms, error);

  if (list == NULL)
    return FALSE;
  for (int g = 0; g < list->group_cnt; g++)
    for (int m = 0; m < list->groups[g].member_cnt; m++)
      {
        const struct rd_kafka_group_member_info *member = &list->groups[g].members[m];
        g_autoptr(GArray) parts = g_array_new (FALSE, FALSE, sizeof (gint32));

        kt_assignment_member_partitions (member->member_assignment,
                                         (gsize) member->member_assignment_size, self->topic,
                                         parts);
        for (guint i = 0; i < parts->len; i++)
          g_hash_table_replace (owners, GINT_TO_POINTER (g_array_index (parts, gint32, i)),
                                g_strdup_printf ("%s@%s", member->client_id,
                                                 member->client_host));
      }
  rd_kafka_group_list_destroy (list);
  return TRUE;
}

gboolean
kt_source_group_members (KtSource *self, const char *group, guint *members, char **state,
                         int timeout_ms, GError **error)
{
  const struct rd_kafka_group_list *list = describe_group (self, group, timeout_ms, error);
  rd_kafka_resp_err_t err;

  if (list == NULL)
    return FALSE;
  err = list->group_cnt != 1 ? RD_KAFKA_RESP_ERR_GROUP_ID_NOT_FOUND : list->groups[0].err;
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_TRANSIENT, "cannot describe group '%s': %s",
                   group, rd_kafka_err2str (err));
      rd_kafka_group_list_destroy (list);
      return FALSE;
    }
  *members = (guint) list->groups[0].member_cnt;
  *state = g_strdup (list->groups[0].state != NULL ? list->groups[0].state : "unknown");
  rd_kafka_group_list_destroy (list);
  return TRUE;
}

void
kt_source_set_max_batch_bytes (KtSource *self, gint64 max_batch_bytes)
{
  self->max_batch_bytes = max_batch_bytes > 0 ? max_batch_bytes : G_MAXINT64;
}

gint64
kt_source_unread_timestamp (KtSource *self, gint32 partition, gint64 offset)
{
  Stream *st = self->streams != NULL
               ? g_hash_table_lookup (self->streams, GINT_TO_POINTER (partition)) : NULL;
  rd_kafka_message_t *head;

  if (st == NULL)
    return -1;
  head = g_queue_peek_head (&st->carry);
  if (head != NULL && head->offset == offset)
    return rd_kafka_message_timestamp (head, NULL);
  return st->handed == offset ? st->handed_ts : -1;
}

gint64
kt_source_last_bytes (KtSource *self)
{
  return self->last_bytes;
}

gint64
kt_source_metadata_every_us (KtSource *self)
{
  return self->metadata_every_us;
}

const char *
kt_source_library_version (void)
{
  return rd_kafka_version_str ();
}
