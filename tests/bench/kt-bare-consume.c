/* kt-bare-consume.c - the Kafka-path limit for scripts/bench.
 *
 * A plain librdkafka consumer, not ktally: it assigns every partition of a
 * topic from its log start, counts records and value bytes until every
 * partition's high watermark (as it stood at start), and prints one line:
 *   records=R bytes=B lines=L partitions=P setup_s=S read_s=T
 * lines is counted only with --count-lines (a memchr per value); otherwise
 * it is -1. Tuned as measured on this machine's librdkafka 2.0.2 and its
 * mock broker: short fetch.wait.max.ms, a queued.min.messages that never
 * stops the fetcher, batch consumption with a short wait. Watermarks are
 * asked of a second handle, so they never queue behind a held Fetch.
 *
 *   kt-bare-consume --brokers B --topic T [--fetch-wait-ms 10]
 *                   [--queued-min 10000000] [--batch 4096] [--wait-ms 10]
 *                   [--count-lines] [-X KEY=VALUE]...
 *
 * Benchmark infrastructure only: never linked into ktally. */
#include <stdio.h>
#include <string.h>

#include <glib.h>
#include <librdkafka/rdkafka.h>

G_DEFINE_AUTOPTR_CLEANUP_FUNC (rd_kafka_conf_t, rd_kafka_conf_destroy)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (rd_kafka_topic_partition_list_t,
                               rd_kafka_topic_partition_list_destroy)

typedef struct
{
  gint64   high;  /* stop once offset high - 1 is seen */
  gboolean done;
} Part;

static gboolean
set (rd_kafka_conf_t *conf, const char *key, const char *value)
{
  char errstr[512];

  if (rd_kafka_conf_set (conf, key, value, errstr, sizeof errstr) == RD_KAFKA_CONF_OK)
    return TRUE;
  g_printerr ("kt-bare-consume: %s=%s: %s\n", key, value, errstr);
  return FALSE;
}

static rd_kafka_t *
new_consumer (const char *brokers, char **props, const char *fetch_wait,
              const char *queued_min)
{
  g_autoptr (rd_kafka_conf_t) conf = rd_kafka_conf_new ();
  char errstr[512];
  rd_kafka_t *rk;

  if (!set (conf, "bootstrap.servers", brokers)
      || !set (conf, "group.id", "kt-bare-consume")
      || !set (conf, "enable.auto.commit", "false")
      || !set (conf, "enable.auto.offset.store", "false")
      || !set (conf, "enable.partition.eof", "true")
      || !set (conf, "fetch.wait.max.ms", fetch_wait)
      || !set (conf, "queued.min.messages", queued_min))
    return NULL;
  for (char **p = props; p != NULL && *p != NULL; p++)
    {
      g_auto (GStrv) kv = g_strsplit (*p, "=", 2);
      if (kv[0] == NULL || kv[1] == NULL || !set (conf, kv[0], kv[1]))
        return NULL;
    }
  rk = rd_kafka_new (RD_KAFKA_CONSUMER, conf, errstr, sizeof errstr);
  if (rk == NULL)
    {
      g_printerr ("kt-bare-consume: rd_kafka_new: %s\n", errstr);
      return NULL;
    }
  conf = NULL;  /* rd_kafka_new() owns it now */
  return rk;
}

/* Partition count of @topic, asking @rk (which also caches the metadata,
 * so that a later assign() on it does not wait for a refresh). */
static int
partition_count (rd_kafka_t *rk, const char *topic)
{
  rd_kafka_topic_t *rkt = rd_kafka_topic_new (rk, topic, NULL);
  const struct rd_kafka_metadata *md = NULL;
  rd_kafka_resp_err_t err = rd_kafka_metadata (rk, 0, rkt, &md, 10000);
  int n = -1;

  if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
    g_printerr ("kt-bare-consume: metadata for %s: %s\n", topic, rd_kafka_err2str (err));
  else if (md->topic_cnt != 1 || md->topics[0].err != RD_KAFKA_RESP_ERR_NO_ERROR)
    g_printerr ("kt-bare-consume: topic %s: %s\n", topic,
                md->topic_cnt == 1 ? rd_kafka_err2str (md->topics[0].err) : "missing");
  else
    n = md->topics[0].partition_cnt;
  if (md != NULL)
    rd_kafka_metadata_destroy (md);
  rd_kafka_topic_destroy (rkt);
  return n;
}

int
main (int argc, char **argv)
{
  g_autofree char *brokers = NULL, *topic = NULL;
  g_auto (GStrv) props = NULL;
  int fetch_wait_ms = 10, batch = 4096, wait_ms = 10;
  gint64 queued_min = 10000000;
  gboolean count_lines = FALSE;
  GOptionEntry entries[] = {
    { "brokers", 'b', 0, G_OPTION_ARG_STRING, &brokers, "Bootstrap servers", "LIST" },
    { "topic", 't', 0, G_OPTION_ARG_STRING, &topic, "Topic", "NAME" },
    { "fetch-wait-ms", 0, 0, G_OPTION_ARG_INT, &fetch_wait_ms,
      "fetch.wait.max.ms (default 10)", "MS" },
    { "queued-min", 0, 0, G_OPTION_ARG_INT64, &queued_min,
      "queued.min.messages (default 10000000)", "N" },
    { "batch", 0, 0, G_OPTION_ARG_INT, &batch,
      "Messages per rd_kafka_consume_batch_queue() (default 4096)", "N" },
    { "wait-ms", 0, 0, G_OPTION_ARG_INT, &wait_ms,
      "Timeout of each batch call (default 10)", "MS" },
    { "count-lines", 0, 0, G_OPTION_ARG_NONE, &count_lines,
      "Also count lines ('\\n'-separated) in the values", NULL },
    { "kafka-property", 'X', 0, G_OPTION_ARG_STRING_ARRAY, &props,
      "Extra librdkafka property", "KEY=VALUE" },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- count a topic's records");
  g_autoptr (GError) error = NULL;
  g_autofree Part *parts = NULL;
  g_autofree rd_kafka_message_t **msgs = NULL;
  g_autofree char *fw = NULL, *qm = NULL;
  rd_kafka_topic_partition_list_t *assignment;
  rd_kafka_t *rk, *meta;
  rd_kafka_queue_t *queue;
  rd_kafka_resp_err_t err;
  gint64 t0, t1, t2, records = 0, bytes = 0, lines = 0, idle_since;
  int n_parts, remaining = 0;

  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      g_printerr ("kt-bare-consume: %s\n", error->message);
      return 2;
    }
  if (brokers == NULL || topic == NULL || batch < 1 || wait_ms < 0 || fetch_wait_ms < 0)
    {
      g_printerr ("kt-bare-consume: --brokers and --topic are required\n");
      return 2;
    }
  fw = g_strdup_printf ("%d", fetch_wait_ms);
  qm = g_strdup_printf ("%" G_GINT64_FORMAT, queued_min);

  t0 = g_get_monotonic_time ();
  meta = new_consumer (brokers, props, fw, qm);
  rk = new_consumer (brokers, props, fw, qm);
  if (meta == NULL || rk == NULL)
    return 2;
  n_parts = partition_count (rk, topic);
  if (n_parts <= 0)
    return 1;

  parts = g_new0 (Part, n_parts);
  assignment = rd_kafka_topic_partition_list_new (n_parts);
  for (int p = 0; p < n_parts; p++)
    {
      int64_t lo = 0, hi = 0;
      err = rd_kafka_query_watermark_offsets (meta, topic, p, &lo, &hi, 10000);
      if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
        {
          g_printerr ("kt-bare-consume: watermarks of %s/%d: %s\n", topic, p,
                      rd_kafka_err2str (err));
          return 1;
        }
      parts[p].high = hi;
      parts[p].done = hi <= lo;
      remaining += !parts[p].done;
      rd_kafka_topic_partition_list_add (assignment, topic, p)->offset = lo;
    }
  err = rd_kafka_assign (rk, assignment);
  rd_kafka_topic_partition_list_destroy (assignment);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
    {
      g_printerr ("kt-bare-consume: assign: %s\n", rd_kafka_err2str (err));
      return 1;
    }
  queue = rd_kafka_queue_get_consumer (rk);
  msgs = g_new (rd_kafka_message_t *, batch);

  t1 = idle_since = g_get_monotonic_time ();
  while (remaining > 0)
    {
      ssize_t n = rd_kafka_consume_batch_queue (queue, wait_ms, msgs, (size_t) batch);

      if (n < 0)
        {
          g_printerr ("kt-bare-consume: consume: %s\n",
                      rd_kafka_err2str (rd_kafka_last_error ()));
          return 1;
        }
      for (ssize_t i = 0; i < n; i++)
        {
          rd_kafka_message_t *m = msgs[i];
          Part *pt = m->partition >= 0 && m->partition < n_parts ? &parts[m->partition] : NULL;

          if (pt == NULL)
            ;
          else if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR)
            {
              records++;
              bytes += (gint64) m->len;
              if (count_lines && m->payload != NULL)
                {
                  const char *s = m->payload, *e = s + m->len;
                  lines += m->len > 0;
                  while ((s = memchr (s, '\n', (size_t) (e - s))) != NULL)
                    lines += ++s < e;
                }
              if (!pt->done && m->offset >= pt->high - 1)
                {
                  pt->done = TRUE;
                  remaining--;
                }
            }
          else if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF)
            {
              if (!pt->done && m->offset >= pt->high)
                {
                  pt->done = TRUE;
                  remaining--;
                }
            }
          else
            g_printerr ("kt-bare-consume: %s/%d: %s\n", topic, m->partition,
                        rd_kafka_message_errstr (m));
          rd_kafka_message_destroy (m);
        }
      if (n > 0)
        idle_since = g_get_monotonic_time ();
      else if (g_get_monotonic_time () - idle_since > 30 * G_USEC_PER_SEC)
        {
          g_printerr ("kt-bare-consume: no record for 30 s with %d partition(s) left\n",
                      remaining);
          return 1;
        }
    }
  t2 = g_get_monotonic_time ();

  printf ("records=%" G_GINT64_FORMAT " bytes=%" G_GINT64_FORMAT " lines=%" G_GINT64_FORMAT
          " partitions=%d setup_s=%.6f read_s=%.6f\n",
          records, bytes, count_lines ? lines : -1, n_parts,
          (double) (t1 - t0) / 1e6, (double) (t2 - t1) / 1e6);
  fflush (stdout);

  rd_kafka_queue_destroy (queue);
  rd_kafka_consumer_close (rk);
  rd_kafka_destroy (rk);
  rd_kafka_destroy (meta);
  return 0;
}
