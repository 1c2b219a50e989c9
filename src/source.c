/* source.c - the Kafka source stage.
 *
 * Takes a plan (per-partition [read_from, until)), hands every record of it
 * to a callback, and nothing else: it stores no offsets anywhere (the sink
 * does, in MySQL, with the counts) and never uses consumer-group offsets. */
#include "source.h"

#include <string.h>
#include "autocleanups.h"
#include "error.h"

struct _KtSource
{
  char             *topic;
  rd_kafka_t       *rk;     /* consumes the assigned ranges */
  rd_kafka_queue_t *queue;  /* rk's consumer queue */
  rd_kafka_t       *meta;   /* metadata and watermarks, never blocked by a Fetch */
  rd_kafka_topic_t *meta_topic;
  gint64            max_batch_bytes;
  gint64            last_bytes;
};

/* librdkafka logs from its own threads; GLib's logging is thread-safe.
 * Everything goes to debug: ktally reports failures itself, once, with
 * what it means for the batch, instead of raw client chatter. */
static void
log_cb (const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
  (void) rk;
  g_debug ("librdkafka[%d] %s: %s", level, fac, buf);
}

static void
error_cb (rd_kafka_t *rk, int err, const char *reason, void *opaque)
{
  (void) rk;
  (void) opaque;
  g_debug ("librdkafka error %s: %s",
           rd_kafka_err2name ((rd_kafka_resp_err_t) err), reason);
}

static gboolean
conf_set (rd_kafka_conf_t *conf, const char *key, const char *value,
          gboolean from_user, GError **error)
{
  char errstr[512];

  if (rd_kafka_conf_set (conf, key, value, errstr, sizeof errstr) == RD_KAFKA_CONF_OK)
    return TRUE;
  /* Never echo the value: it may be a password (sasl.password, ssl.key.password). */
  g_set_error (error, KT_ERROR, from_user ? KT_ERROR_USAGE : KT_ERROR_INTERNAL,
               "%s%s: %s", from_user ? "-X " : "", key, errstr);
  return FALSE;
}

static rd_kafka_conf_t *
make_conf (const KtSourceConfig *config, GError **error)
{
  g_autoptr(rd_kafka_conf_t) conf = rd_kafka_conf_new ();
  /* Defaults chosen for exact, bounded micro-batches; -X may override any.
   * - no auto-commit, no offset store: offsets live in MySQL only;
   * - partition EOF events: the end of a range with a gap at its tail is
   *   seen through them;
   * - auto.offset.reset=error: an offset lost to retention mid-read is an
   *   error to report, never a silent jump;
   * - pre-fetch bounded in bytes (memory stays flat with any backlog) but
   *   not in messages: librdkafka 2.0 re-checks a full queue only every
   *   second, so a count limit would stall small-message batches. */
  static const char *const defaults[][2] = {
    { "enable.auto.commit", "false" },
    { "enable.auto.offset.store", "false" },
    { "enable.partition.eof", "true" },
    { "auto.offset.reset", "error" },
    { "fetch.wait.max.ms", "100" },
    { "queued.min.messages", "10000000" },
    { "queued.max.messages.kbytes", "32768" },
    { "topic.metadata.refresh.interval.ms", "60000" },
  };

  if (!conf_set (conf, "bootstrap.servers", config->brokers, FALSE, error))
    {
      g_prefix_error (error, "--brokers: ");
      if (*error)
        (*error)->code = KT_ERROR_USAGE;
      return NULL;
    }
  if (config->client_id != NULL)
    {
      g_autofree char *group = g_strdup_printf ("ktally-%s", config->client_id);

      /* librdkafka's assign() and consumer queue need a group id, even though
       * ktally never joins the group nor commits to it: offsets live in MySQL. */
      if (!conf_set (conf, "client.id", config->client_id, FALSE, error)
          || !conf_set (conf, "group.id", group, FALSE, error))
        return NULL;
    }
  for (gsize i = 0; i < G_N_ELEMENTS (defaults); i++)
    if (!conf_set (conf, defaults[i][0], defaults[i][1], FALSE, error))
      return NULL;

  for (const char *const *p = config->properties; p != NULL && *p != NULL; p++)
    {
      const char *eq = strchr (*p, '=');
      g_autofree char *key = NULL;

      if (eq == NULL || eq == *p)
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                       "-X: expected key=value, got '%.*s'",
                       (int) (eq != NULL ? 0 : strlen (*p)), *p);
          return NULL;
        }
      key = g_strndup (*p, (gsize) (eq - *p));
      if (!conf_set (conf, key, eq + 1, TRUE, error))
        return NULL;
    }

  rd_kafka_conf_set_log_cb (conf, log_cb);
  rd_kafka_conf_set_error_cb (conf, error_cb);
  return g_steal_pointer (&conf);
}

KtSource *
kt_source_new (const KtSourceConfig *config, GError **error)
{
  g_autoptr(KtSource) self = g_new0 (KtSource, 1);
  g_autoptr(rd_kafka_conf_t) conf = NULL;
  g_autoptr(rd_kafka_conf_t) meta_conf = NULL;
  char errstr[512];

  self->topic = g_strdup (config->topic);
  self->max_batch_bytes = config->max_batch_bytes > 0 ? config->max_batch_bytes
                                                      : G_MAXINT64;
  conf = make_conf (config, error);
  if (conf == NULL)
    return NULL;
  meta_conf = rd_kafka_conf_dup (conf);

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

void
kt_source_free (KtSource *self)
{
  if (self == NULL)
    return;
  g_clear_pointer (&self->queue, rd_kafka_queue_destroy);
  if (self->rk != NULL)
    {
      /* No group and no commits: closing only stops the fetchers. */
      rd_kafka_consumer_close (self->rk);
      rd_kafka_destroy (self->rk);
    }
  g_clear_pointer (&self->meta_topic, rd_kafka_topic_destroy);
  g_clear_pointer (&self->meta, rd_kafka_destroy);
  g_free (self->topic);
  g_free (self);
}

static gint
compare_gint32 (gconstpointer a, gconstpointer b)
{
  gint32 x = *(const gint32 *) a, y = *(const gint32 *) b;
  return (x > y) - (x < y);
}

gboolean
kt_source_partitions (KtSource *self, GArray *partitions, int timeout_ms,
                      GError **error)
{
  g_autoptr(KtKafkaMetadata) md = NULL;
  const rd_kafka_metadata_topic_t *t;
  rd_kafka_resp_err_t err;

  err = rd_kafka_metadata (self->meta, 0, self->meta_topic, &md, timeout_ms);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_TRANSIENT,
                   "cannot get metadata for topic '%s': %s", self->topic,
                   rd_kafka_err2str (err));
      return FALSE;
    }
  if (md->topic_cnt != 1)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_TRANSIENT,
                   "metadata for topic '%s' is missing", self->topic);
      return FALSE;
    }
  t = &md->topics[0];
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

  g_array_set_size (partitions, 0);
  for (int i = 0; i < t->partition_cnt; i++)
    g_array_append_val (partitions, t->partitions[i].id);
  g_array_sort (partitions, compare_gint32);
  return TRUE;
}

gboolean
kt_source_watermarks (KtSource *self, KtPartitionState *states, guint n_states,
                      int timeout_ms, GError **error)
{
  for (guint i = 0; i < n_states; i++)
    {
      rd_kafka_resp_err_t err;
      int64_t low = 0, high = 0;

      err = rd_kafka_query_watermark_offsets (self->meta, self->topic,
                                              states[i].partition, &low, &high,
                                              timeout_ms);
      if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
        {
          g_set_error (error, KT_ERROR, KT_ERROR_TRANSIENT,
                       "cannot get the offsets of %s/%d: %s", self->topic,
                       states[i].partition, rd_kafka_err2str (err));
          return FALSE;
        }
      states[i].low = low;
      states[i].high = high;
    }
  return TRUE;
}

/* Per-range reading state. */
typedef struct
{
  gint32   partition;
  gint64   read_from;
  gint64   until;
  gint64   next;  /* just past the last record handed over */
  gboolean done;
} Progress;

static void
pause_partition (KtSource *self, gint32 partition)
{
  g_autoptr(rd_kafka_topic_partition_list_t) one =
    rd_kafka_topic_partition_list_new (1);

  /* Stops the fetcher from pulling records past the range's end while the
   * other partitions finish. */
  rd_kafka_topic_partition_list_add (one, self->topic, partition);
  rd_kafka_pause_partitions (self->rk, one);
}

gboolean
kt_source_read (KtSource *self, GArray *ranges, KtRecordFunc func,
                gpointer user_data, const volatile int *stop, int stall_ms,
                GError **error)
{
  g_autoptr(rd_kafka_topic_partition_list_t) list = NULL;
  g_autoptr(GHashTable) by_partition = NULL;  /* partition -> Progress */
  g_autofree Progress *progress = NULL;
  rd_kafka_message_t *msgs[1024];
  guint remaining = 0;
  gint64 bytes = 0, last_progress;
  gboolean capped = FALSE, ok = TRUE;
  rd_kafka_resp_err_t err;

  self->last_bytes = 0;
  if (ranges->len == 0)
    return TRUE;

  progress = g_new0 (Progress, ranges->len);
  by_partition = g_hash_table_new (g_direct_hash, g_direct_equal);
  list = rd_kafka_topic_partition_list_new ((int) ranges->len);
  for (guint i = 0; i < ranges->len; i++)
    {
      const KtRange *r = &g_array_index (ranges, KtRange, i);
      Progress *p = &progress[i];

      p->partition = r->partition;
      p->read_from = p->next = r->read_from;
      p->until = r->until;
      p->done = r->read_from >= r->until;
      g_hash_table_insert (by_partition, GINT_TO_POINTER (r->partition), p);
      if (!p->done)
        {
          rd_kafka_topic_partition_list_add (list, self->topic, r->partition)->offset =
            r->read_from;
          remaining++;
        }
    }
  if (remaining == 0)
    return TRUE;

  err = rd_kafka_assign (self->rk, list);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_TRANSIENT,
                   "cannot assign partitions of '%s': %s", self->topic,
                   rd_kafka_err2str (err));
      return FALSE;
    }
  /* A pause from the previous batch survives assign(). */
  rd_kafka_resume_partitions (self->rk, list);

  last_progress = g_get_monotonic_time ();
  while (remaining > 0 && ok)
    {
      ssize_t n;

      if (*stop)
        {
          g_set_error_literal (error, KT_ERROR, KT_ERROR_CANCELLED,
                               "stopped while reading");
          ok = FALSE;
          break;
        }

      /* A short wait: consume_batch returns early only when the array is
       * full, so a long timeout would be paid at the end of every batch. */
      n = rd_kafka_consume_batch_queue (self->queue, 10, msgs, G_N_ELEMENTS (msgs));
      if (n < 0)
        {
          g_set_error (error, KT_ERROR, KT_ERROR_TRANSIENT,
                       "cannot consume from '%s': %s", self->topic,
                       rd_kafka_err2str (rd_kafka_last_error ()));
          ok = FALSE;
          break;
        }

      for (ssize_t i = 0; i < n; i++)
        {
          rd_kafka_message_t *m = msgs[i];
          Progress *p = g_hash_table_lookup (by_partition,
                                             GINT_TO_POINTER (m->partition));
          gboolean was_done = p == NULL || p->done;

          if (p == NULL || p->done || capped || !ok)
            ;  /* not ours, past the end, or after the cap: drop */
          else if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF)
            {
              /* The end of the log: enough if it is at or past until (the
               * offsets before it were gaps). */
              if (m->offset >= p->until)
                p->done = TRUE;
            }
          else if (m->err == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET
                   || m->err == RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE)
            {
              g_set_error (error, KT_ERROR, KT_ERROR_TRANSIENT,
                           "%s/%d: offset %" G_GINT64_FORMAT " vanished while "
                           "being read (retention?); the batch will be planned again",
                           self->topic, p->partition, p->next);
              ok = FALSE;
            }
          else if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR)
            /* Broker down, leader moved, ...: librdkafka retries by itself;
             * the stall timer below decides when to give up on the batch. */
            g_debug ("%s/%d: %s", self->topic, m->partition, rd_kafka_message_errstr (m));
          else if (m->offset >= p->next)
            {
              if (m->offset < p->until)
                {
                  func (m->partition, m->offset, m->payload, m->len, user_data);
                  bytes += (gint64) m->len;
                  p->next = m->offset + 1;
                  last_progress = g_get_monotonic_time ();
                  if (bytes >= self->max_batch_bytes)
                    capped = TRUE;
                }
              if (m->offset >= p->until - 1)
                p->done = TRUE;
            }

          if (!was_done && p->done)
            {
              remaining--;
              pause_partition (self, p->partition);
            }
          rd_kafka_message_destroy (m);
        }

      if (capped)
        break;
      if (ok && (g_get_monotonic_time () - last_progress) / 1000 > stall_ms)
        {
          g_set_error (error, KT_ERROR, KT_ERROR_TRANSIENT,
                       "no record arrived from %u partition(s) of '%s' for %d s",
                       remaining, self->topic, stall_ms / 1000);
          ok = FALSE;
        }
    }

  /* Unassigning drops whatever was pre-fetched past the ranges: the next
   * batch starts again exactly where the sink says. */
  rd_kafka_assign (self->rk, NULL);
  self->last_bytes = bytes;
  if (!ok)
    return FALSE;

  for (guint i = 0; i < ranges->len; i++)
    {
      KtRange *r = &g_array_index (ranges, KtRange, i);
      if (!progress[i].done)  /* the byte cap stopped us here */
        r->until = progress[i].next;
    }
  return TRUE;
}

gint64
kt_source_last_bytes (KtSource *self)
{
  return self->last_bytes;
}
