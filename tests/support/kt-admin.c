/* kt-admin.c - topics for the tests, on any Kafka: librdkafka's Admin API.
 *
 *   kt-admin [--brokers LIST] [-X KEY=VALUE]... COMMAND ARGS...
 *
 *   create TOPIC PARTITIONS [--replication N | --replicas A,B,...]
 *          [--config KEY=VALUE]...
 *                              waits until every partition has its leader
 *                              and all its replicas in sync; --replicas
 *                              puts every partition on those brokers,
 *                              led by A (the same on every create)
 *   delete TOPIC...            waits until the cluster no longer lists them
 *   add-partitions TOPIC TOTAL waits until the new ones have leaders
 *   config TOPIC [KEY=VALUE]...  sets topic configs, keeping the others;
 *                              without any, prints the topic's own
 *                              (KEY=VALUE lines)
 *   watermarks TOPIC           one line: PARTITION:LOW:HIGH ...
 *   describe TOPIC             a line per partition: P leader=N
 *                              replicas=A,B,C isr=A,B
 *   wait-isr TOPIC [SECONDS]   until every partition's replicas are in sync
 *   topics                     one line per topic: NAME PARTITIONS
 *   acl PRINCIPAL topic|group NAME OPS  allows OPS (read,write,describe) on
 *                              that one resource to PRINCIPAL (User:NAME)
 *
 * --brokers defaults to $KT_BROKERS. Exit 0 done, 1 failed (one line on
 * stderr saying what and why), 2 bad usage. Test infrastructure only: it
 * is built with ktally but never linked into it. On librdkafka's mock
 * broker most of this works too, but tests there create topics through
 * its control socket (it knows no topic configs). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>
#include <librdkafka/rdkafka.h>

#include "kt-support.h"

enum
{
  EXIT_DONE = 0,
  EXIT_FAILED = 1,
  EXIT_USAGE = 2,
};

/* How long one command may wait for the cluster (creation, deletion,
 * leaders, ISR): a restarted broker takes ~10 s to come back. */
#define WAIT_MS 60000

G_DEFINE_AUTOPTR_CLEANUP_FUNC (rd_kafka_queue_t, rd_kafka_queue_destroy)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (rd_kafka_event_t, rd_kafka_event_destroy)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (rd_kafka_AdminOptions_t, rd_kafka_AdminOptions_destroy)

static void G_GNUC_PRINTF (1, 2)
usage_error (const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_printerr ("kt-admin: %s\n"
              "usage: kt-admin [--brokers LIST] [-X KEY=VALUE]... "
              "create|delete|add-partitions|config|watermarks|describe|wait-isr|topics|acl ARGS...\n",
              msg);
  exit (EXIT_USAGE);
}

static gboolean
parse_count (const char *text, int min, int max, int *out)
{
  char *end = NULL;
  long v = strtol (text, &end, 10);

  if (end == text || *end != '\0' || v < min || v > max)
    return FALSE;
  *out = (int) v;
  return TRUE;
}

/* ---------------------------------------------------------------------- */
/* Metadata: always for all topics, so that asking about a topic that is
 * gone never makes a broker with auto.create.topics.enable create it. */

static const rd_kafka_metadata_topic_t *
find_topic (const struct rd_kafka_metadata *md, const char *topic)
{
  for (int i = 0; i < md->topic_cnt; i++)
    if (strcmp (md->topics[i].topic, topic) == 0)
      return &md->topics[i];
  return NULL;
}

static KtSupportMetadata *
metadata (rd_kafka_t *rk, GError **error)
{
  const struct rd_kafka_metadata *md = NULL;
  rd_kafka_resp_err_t err = rd_kafka_metadata (rk, 1, NULL, &md, 10000);

  if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
    {
      g_set_error (error, KT_SUPPORT_ERROR, KT_SUPPORT_FAILED,
                   "cannot read the cluster's metadata: %s", rd_kafka_err2str (err));
      return NULL;
    }
  return (KtSupportMetadata *) md;
}

/* Whether TOPIC has @partitions partitions (0: any), each with a leader
 * and, if @in_sync, all its replicas in its ISR. */
static gboolean
topic_ready (const rd_kafka_metadata_topic_t *t, int partitions, gboolean in_sync)
{
  if (t == NULL || t->err != RD_KAFKA_RESP_ERR_NO_ERROR)
    return FALSE;
  if (partitions > 0 && t->partition_cnt != partitions)
    return FALSE;
  for (int p = 0; p < t->partition_cnt; p++)
    {
      const rd_kafka_metadata_partition_t *mp = &t->partitions[p];
      if (mp->leader < 0 || mp->err != RD_KAFKA_RESP_ERR_NO_ERROR)
        return FALSE;
      if (in_sync && mp->isr_cnt < mp->replica_cnt)
        return FALSE;
    }
  return TRUE;
}

/* The options every client of this run is made with (-X, --brokers):
 * copied for the one-broker clients of every_broker_knows(). */
static rd_kafka_conf_t *base_conf;

/* Whether each broker of the cluster, asked on its own, lists @topic with
 * @partitions partitions, each with a leader: a broker learns of a new
 * topic from the metadata log in its own time, and a client that asks it
 * too early is told the topic does not exist (kt-gen, ktally at start-up). */
static gboolean
every_broker_knows (const struct rd_kafka_metadata *md, const char *topic, int partitions)
{
  for (int b = 0; b < md->broker_cnt; b++)
    {
      g_autoptr (rd_kafka_conf_t) conf = rd_kafka_conf_dup (base_conf);
      g_autofree char *one = g_strdup_printf ("%s:%d", md->brokers[b].host, md->brokers[b].port);
      char errstr[512];
      const struct rd_kafka_metadata *its = NULL;
      gboolean knows;

      /* A client bootstrapped from one broker asks that broker first. */
      if (rd_kafka_conf_set (conf, "bootstrap.servers", one, errstr, sizeof errstr) != RD_KAFKA_CONF_OK)
        return FALSE;
      g_autoptr (rd_kafka_t) rk = rd_kafka_new (RD_KAFKA_PRODUCER, conf, errstr, sizeof errstr);
      if (rk == NULL)
        return FALSE;
      conf = NULL;  /* rd_kafka_new() owns it now */
      if (rd_kafka_metadata (rk, 1, NULL, &its, 5000) != RD_KAFKA_RESP_ERR_NO_ERROR)
        return FALSE;
      knows = topic_ready (find_topic (its, topic), partitions, FALSE);
      rd_kafka_metadata_destroy (its);
      if (!knows)
        return FALSE;
    }
  return TRUE;
}

typedef enum
{
  WAIT_READY,    /* partitions with leaders */
  WAIT_IN_SYNC,  /* ... and full ISRs */
  WAIT_GONE,
} WaitFor;

static gboolean
wait_topic (rd_kafka_t *rk, const char *topic, int partitions, WaitFor what,
            int wait_ms, GError **error)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) wait_ms * 1000;

  for (;;)
    {
      g_autoptr (GError) local = NULL;
      g_autoptr (KtSupportMetadata) md = metadata (rk, &local);
      const rd_kafka_metadata_topic_t *t = md ? find_topic (md, topic) : NULL;

      if (md != NULL)
        {
          if (what == WAIT_GONE ? t == NULL
                                : topic_ready (t, partitions, what == WAIT_IN_SYNC)
                                      && every_broker_knows (md, topic, t->partition_cnt))
            return TRUE;
        }
      if (g_get_monotonic_time () > deadline)
        {
          const char *state = what == WAIT_GONE ? "is still listed"
                              : what == WAIT_IN_SYNC
                                  ? "has no leader or not all replicas in sync on some partition"
                                  : "has no leader on some partition";
          if (local != NULL)
            g_set_error (error, KT_SUPPORT_ERROR, KT_SUPPORT_FAILED,
                         "topic %s: %s after %d s (%s)", topic, state, wait_ms / 1000,
                         local->message);
          else
            g_set_error (error, KT_SUPPORT_ERROR, KT_SUPPORT_FAILED,
                         "topic %s: %s after %d s", topic, state, wait_ms / 1000);
          return FALSE;
        }
      g_usleep (100 * 1000);
    }
}

/* ---------------------------------------------------------------------- */
/* Admin requests: one at a time, the answer awaited on a private queue. */

static rd_kafka_event_t *
admin_wait (rd_kafka_queue_t *q, rd_kafka_event_type_t type, const char *what,
            GError **error)
{
  rd_kafka_event_t *ev = rd_kafka_queue_poll (q, WAIT_MS + 5000);

  if (ev == NULL)
    {
      g_set_error (error, KT_SUPPORT_ERROR, KT_SUPPORT_FAILED, "%s: no answer", what);
      return NULL;
    }
  if (rd_kafka_event_type (ev) != type || rd_kafka_event_error (ev))
    {
      g_set_error (error, KT_SUPPORT_ERROR, KT_SUPPORT_FAILED, "%s: %s", what,
                   rd_kafka_event_error (ev) ? rd_kafka_event_error_string (ev)
                                             : "unexpected answer");
      rd_kafka_event_destroy (ev);
      return NULL;
    }
  return ev;
}

static rd_kafka_AdminOptions_t *
admin_options (rd_kafka_t *rk, rd_kafka_admin_op_t op)
{
  rd_kafka_AdminOptions_t *o = rd_kafka_AdminOptions_new (rk, op);
  char errstr[256];

  rd_kafka_AdminOptions_set_request_timeout (o, WAIT_MS, errstr, sizeof errstr);
  if (op != RD_KAFKA_ADMIN_OP_DESCRIBECONFIGS && op != RD_KAFKA_ADMIN_OP_ALTERCONFIGS)
    rd_kafka_AdminOptions_set_operation_timeout (o, WAIT_MS, errstr, sizeof errstr);
  return o;
}

/* The per-topic results of CreateTopics, DeleteTopics, CreatePartitions. */
static gboolean
check_topic_results (const rd_kafka_topic_result_t **res, size_t n, const char *what,
                     GError **error)
{
  for (size_t i = 0; i < n; i++)
    if (rd_kafka_topic_result_error (res[i]) != RD_KAFKA_RESP_ERR_NO_ERROR)
      {
        const char *msg = rd_kafka_topic_result_error_string (res[i]);
        g_set_error (error, KT_SUPPORT_ERROR, KT_SUPPORT_FAILED, "%s %s: %s (%s)", what,
                     rd_kafka_topic_result_name (res[i]),
                     msg ? msg : rd_kafka_err2str (rd_kafka_topic_result_error (res[i])),
                     rd_kafka_err2name (rd_kafka_topic_result_error (res[i])));
        return FALSE;
      }
  return TRUE;
}

/* --config KEY=VALUE: the key and value, or a usage error. */
static void
split_config (const char *kv, char **key, const char **value)
{
  const char *eq = strchr (kv, '=');

  if (eq == NULL || eq == kv)
    usage_error ("'%s' is not KEY=VALUE", kv);
  *key = g_strndup (kv, (gsize) (eq - kv));
  *value = eq + 1;
}

static gboolean
cmd_create (rd_kafka_t *rk, int argc, char **argv, GError **error)
{
  const char *topic;
  int partitions, rf = -1;
  g_autoptr (GPtrArray) configs = g_ptr_array_new ();
  g_autoptr (GArray) replicas = g_array_new (FALSE, FALSE, sizeof (int32_t));
  char errstr[512];

  if (argc < 2)
    usage_error ("create TOPIC PARTITIONS [--replication N | --replicas A,B,...] "
                 "[--config KEY=VALUE]...");
  topic = argv[0];
  if (!parse_count (argv[1], 1, 100000, &partitions))
    usage_error ("create: bad partition count '%s'", argv[1]);
  for (int i = 2; i < argc; i++)
    {
      if (strcmp (argv[i], "--replication") == 0 && i + 1 < argc)
        {
          if (!parse_count (argv[++i], 1, 100, &rf))
            usage_error ("create: bad replication factor '%s'", argv[i]);
        }
      else if (strcmp (argv[i], "--replicas") == 0 && i + 1 < argc)
        {
          g_auto (GStrv) ids = g_strsplit (argv[++i], ",", -1);
          for (char **id = ids; *id != NULL; id++)
            {
              int b;
              if (!parse_count (*id, 0, 1000000, &b))
                usage_error ("create: bad broker id '%s' in --replicas", *id);
              int32_t b32 = b;
              g_array_append_val (replicas, b32);
            }
        }
      else if (strcmp (argv[i], "--config") == 0 && i + 1 < argc)
        g_ptr_array_add (configs, argv[++i]);
      else
        usage_error ("create: unknown argument '%s'", argv[i]);
    }
  if (replicas->len > 0 && rf != -1)
    usage_error ("create: --replicas and --replication together");

  /* -1: the broker's default.replication.factor (3 on the test cluster). */
  rd_kafka_NewTopic_t *nt = rd_kafka_NewTopic_new (topic, partitions, rf, errstr, sizeof errstr);
  if (nt == NULL)
    usage_error ("create %s: %s", topic, errstr);
  for (int p = 0; replicas->len > 0 && p < partitions; p++)
    if (rd_kafka_NewTopic_set_replica_assignment (nt, p, (int32_t *) (void *) replicas->data,
                                                  replicas->len, errstr, sizeof errstr)
        != RD_KAFKA_RESP_ERR_NO_ERROR)
      usage_error ("create %s: --replicas: %s", topic, errstr);
  for (guint i = 0; i < configs->len; i++)
    {
      g_autofree char *key = NULL;
      const char *value;
      split_config (configs->pdata[i], &key, &value);
      rd_kafka_NewTopic_set_config (nt, key, value);
    }

  g_autoptr (rd_kafka_queue_t) q = rd_kafka_queue_new (rk);
  g_autoptr (rd_kafka_AdminOptions_t) o = admin_options (rk, RD_KAFKA_ADMIN_OP_CREATETOPICS);
  rd_kafka_CreateTopics (rk, &nt, 1, o, q);
  rd_kafka_NewTopic_destroy (nt);
  g_autoptr (rd_kafka_event_t) ev
      = admin_wait (q, RD_KAFKA_EVENT_CREATETOPICS_RESULT, "create", error);
  if (ev == NULL)
    return FALSE;
  size_t n;
  const rd_kafka_topic_result_t **res
      = rd_kafka_CreateTopics_result_topics (rd_kafka_event_CreateTopics_result (ev), &n);
  if (!check_topic_results (res, n, "create", error))
    return FALSE;
  /* The controller has it; producers and consumers need its leaders, and
   * a test that kills a broker next needs every replica in sync. */
  return wait_topic (rk, topic, partitions, WAIT_IN_SYNC, WAIT_MS, error);
}

static gboolean
cmd_delete (rd_kafka_t *rk, int argc, char **argv, GError **error)
{
  g_autofree rd_kafka_DeleteTopic_t **dt = g_new0 (rd_kafka_DeleteTopic_t *, MAX (argc, 1));

  if (argc < 1)
    usage_error ("delete TOPIC...");
  for (int i = 0; i < argc; i++)
    dt[i] = rd_kafka_DeleteTopic_new (argv[i]);

  g_autoptr (rd_kafka_queue_t) q = rd_kafka_queue_new (rk);
  g_autoptr (rd_kafka_AdminOptions_t) o = admin_options (rk, RD_KAFKA_ADMIN_OP_DELETETOPICS);
  rd_kafka_DeleteTopics (rk, dt, (size_t) argc, o, q);
  rd_kafka_DeleteTopic_destroy_array (dt, (size_t) argc);
  g_autoptr (rd_kafka_event_t) ev
      = admin_wait (q, RD_KAFKA_EVENT_DELETETOPICS_RESULT, "delete", error);
  if (ev == NULL)
    return FALSE;
  size_t n;
  const rd_kafka_topic_result_t **res
      = rd_kafka_DeleteTopics_result_topics (rd_kafka_event_DeleteTopics_result (ev), &n);
  if (!check_topic_results (res, n, "delete", error))
    return FALSE;
  for (int i = 0; i < argc; i++)
    if (!wait_topic (rk, argv[i], 0, WAIT_GONE, WAIT_MS, error))
      return FALSE;
  return TRUE;
}

static gboolean
cmd_add_partitions (rd_kafka_t *rk, int argc, char **argv, GError **error)
{
  int total;
  char errstr[512];

  if (argc != 2 || !parse_count (argv[1], 1, 100000, &total))
    usage_error ("add-partitions TOPIC TOTAL");
  rd_kafka_NewPartitions_t *np = rd_kafka_NewPartitions_new (argv[0], (size_t) total,
                                                             errstr, sizeof errstr);
  if (np == NULL)
    usage_error ("add-partitions %s: %s", argv[0], errstr);

  g_autoptr (rd_kafka_queue_t) q = rd_kafka_queue_new (rk);
  g_autoptr (rd_kafka_AdminOptions_t) o = admin_options (rk, RD_KAFKA_ADMIN_OP_CREATEPARTITIONS);
  rd_kafka_CreatePartitions (rk, &np, 1, o, q);
  rd_kafka_NewPartitions_destroy (np);
  g_autoptr (rd_kafka_event_t) ev
      = admin_wait (q, RD_KAFKA_EVENT_CREATEPARTITIONS_RESULT, "add-partitions", error);
  if (ev == NULL)
    return FALSE;
  size_t n;
  const rd_kafka_topic_result_t **res = rd_kafka_CreatePartitions_result_topics (
      rd_kafka_event_CreatePartitions_result (ev), &n);
  if (!check_topic_results (res, n, "add-partitions", error))
    return FALSE;
  return wait_topic (rk, argv[0], total, WAIT_READY, WAIT_MS, error);
}

static gboolean
retriable (rd_kafka_resp_err_t err)
{
  return err == RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION
         || err == RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE
         || err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART
         || err == RD_KAFKA_RESP_ERR__TRANSPORT
         || err == RD_KAFKA_RESP_ERR__TIMED_OUT;
}

/* The topic's own (dynamic) configs, name -> value. A broker that is no
 * replica of a topic created a moment ago may not know it yet: asked
 * again until it does. */
static GHashTable *
topic_configs (rd_kafka_t *rk, const char *topic, GError **error)
{
  g_autoptr (rd_kafka_queue_t) q = rd_kafka_queue_new (rk);
  g_autoptr (GHashTable) out = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;

  for (;;)
    {
      rd_kafka_ConfigResource_t *desc = rd_kafka_ConfigResource_new (RD_KAFKA_RESOURCE_TOPIC, topic);
      g_autoptr (rd_kafka_AdminOptions_t) o = admin_options (rk, RD_KAFKA_ADMIN_OP_DESCRIBECONFIGS);
      size_t nres, n;

      rd_kafka_DescribeConfigs (rk, &desc, 1, o, q);
      rd_kafka_ConfigResource_destroy (desc);
      g_autoptr (rd_kafka_event_t) ev
          = admin_wait (q, RD_KAFKA_EVENT_DESCRIBECONFIGS_RESULT, "config (describe)", error);
      if (ev == NULL)
        return NULL;
      const rd_kafka_ConfigResource_t **res = rd_kafka_DescribeConfigs_result_resources (
          rd_kafka_event_DescribeConfigs_result (ev), &nres);
      if (nres == 1 && rd_kafka_ConfigResource_error (res[0]) == RD_KAFKA_RESP_ERR_NO_ERROR)
        {
          const rd_kafka_ConfigEntry_t **entries = rd_kafka_ConfigResource_configs (res[0], &n);
          for (size_t i = 0; i < n; i++)
            if (rd_kafka_ConfigEntry_source (entries[i]) == RD_KAFKA_CONFIG_SOURCE_DYNAMIC_TOPIC_CONFIG
                && rd_kafka_ConfigEntry_value (entries[i]) != NULL)
              g_hash_table_insert (out, g_strdup (rd_kafka_ConfigEntry_name (entries[i])),
                                   g_strdup (rd_kafka_ConfigEntry_value (entries[i])));
          return g_steal_pointer (&out);
        }
      if (nres != 1 || !retriable (rd_kafka_ConfigResource_error (res[0]))
          || g_get_monotonic_time () > deadline)
        {
          g_set_error (error, KT_SUPPORT_ERROR, KT_SUPPORT_FAILED, "config %s: %s", topic,
                       nres == 1 ? rd_kafka_ConfigResource_error_string (res[0]) : "no answer");
          return NULL;
        }
      g_usleep (100 * 1000);
    }
}

static gint
compare_strings (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

/* librdkafka 2.0.2 has only the non-incremental AlterConfigs, which
 * resets every config it is not given: the topic's own configs are sent
 * along with the new ones. Returns once five describes in a row show the
 * new values: the change reaches each broker through the metadata log in
 * its own time, and a describe is answered by any of them. */
static gboolean
cmd_config (rd_kafka_t *rk, int argc, char **argv, GError **error)
{
  if (argc < 1)
    usage_error ("config TOPIC [KEY=VALUE]...");
  const char *topic = argv[0];
  g_autoptr (GHashTable) have = topic_configs (rk, topic, error);
  g_autoptr (GHashTable) want = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  GHashTableIter it;
  gpointer key, value;

  if (have == NULL)
    return FALSE;
  if (argc == 1)
    {
      g_autofree gpointer *keys = g_hash_table_get_keys_as_array (have, NULL);
      qsort (keys, g_hash_table_size (have), sizeof *keys, compare_strings);
      for (guint i = 0; i < g_hash_table_size (have); i++)
        printf ("%s=%s\n", (char *) keys[i], (char *) g_hash_table_lookup (have, keys[i]));
      return TRUE;
    }
  for (int i = 1; i < argc; i++)
    {
      char *k;
      const char *v;
      split_config (argv[i], &k, &v);
      g_hash_table_replace (want, k, (gpointer) v);
    }

  rd_kafka_ConfigResource_t *alter = rd_kafka_ConfigResource_new (RD_KAFKA_RESOURCE_TOPIC, topic);
  g_hash_table_iter_init (&it, have);
  while (g_hash_table_iter_next (&it, &key, &value))
    if (!g_hash_table_contains (want, key))
      rd_kafka_ConfigResource_set_config (alter, key, value);
  g_hash_table_iter_init (&it, want);
  while (g_hash_table_iter_next (&it, &key, &value))
    rd_kafka_ConfigResource_set_config (alter, key, value);
  g_autoptr (rd_kafka_queue_t) q = rd_kafka_queue_new (rk);
  g_autoptr (rd_kafka_AdminOptions_t) o = admin_options (rk, RD_KAFKA_ADMIN_OP_ALTERCONFIGS);
  rd_kafka_AlterConfigs (rk, &alter, 1, o, q);
  rd_kafka_ConfigResource_destroy (alter);
  g_autoptr (rd_kafka_event_t) ev = admin_wait (q, RD_KAFKA_EVENT_ALTERCONFIGS_RESULT, "config", error);
  if (ev == NULL)
    return FALSE;
  size_t nres;
  const rd_kafka_ConfigResource_t **res
      = rd_kafka_AlterConfigs_result_resources (rd_kafka_event_AlterConfigs_result (ev), &nres);
  if (nres != 1 || rd_kafka_ConfigResource_error (res[0]) != RD_KAFKA_RESP_ERR_NO_ERROR)
    {
      g_set_error (error, KT_SUPPORT_ERROR, KT_SUPPORT_FAILED, "config %s: %s", topic,
                   nres == 1 ? rd_kafka_ConfigResource_error_string (res[0]) : "no answer");
      return FALSE;
    }

  gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  for (int agreed = 0;;)
    {
      g_autoptr (GHashTable) now = topic_configs (rk, topic, error);
      gboolean all = now != NULL;
      if (now == NULL)
        return FALSE;
      g_hash_table_iter_init (&it, want);
      while (all && g_hash_table_iter_next (&it, &key, &value))
        all = g_strcmp0 (g_hash_table_lookup (now, key), value) == 0;
      agreed = all ? agreed + 1 : 0;
      if (agreed == 5)
        return TRUE;
      if (g_get_monotonic_time () > deadline)
        {
          g_set_error (error, KT_SUPPORT_ERROR, KT_SUPPORT_FAILED,
                       "config %s: the brokers still show the old values after 10 s", topic);
          return FALSE;
        }
      g_usleep (100 * 1000);
    }
}

static const rd_kafka_metadata_topic_t *
existing_topic (const struct rd_kafka_metadata *md, const char *topic, GError **error)
{
  const rd_kafka_metadata_topic_t *t = find_topic (md, topic);

  if (t == NULL || t->err != RD_KAFKA_RESP_ERR_NO_ERROR)
    {
      g_set_error (error, KT_SUPPORT_ERROR, KT_SUPPORT_FAILED, "no topic %s%s%s", topic,
                   t ? ": " : "", t ? rd_kafka_err2str (t->err) : "");
      return NULL;
    }
  return t;
}

static gboolean
cmd_watermarks (rd_kafka_t *rk, int argc, char **argv, GError **error)
{
  if (argc != 1)
    usage_error ("watermarks TOPIC");
  g_autoptr (KtSupportMetadata) md = metadata (rk, error);
  const rd_kafka_metadata_topic_t *t = md ? existing_topic (md, argv[0], error) : NULL;
  g_autoptr (GString) out = g_string_new (NULL);

  if (t == NULL)
    return FALSE;
  for (int p = 0; p < t->partition_cnt; p++)
    {
      int64_t lo = -1, hi = -1;
      gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
      rd_kafka_resp_err_t err;

      /* Right after a create or a leader change, the broker asked may not
       * know yet that it leads: ask again until the cluster agrees. */
      while ((err = rd_kafka_query_watermark_offsets (rk, argv[0], p, &lo, &hi, 10000))
                 != RD_KAFKA_RESP_ERR_NO_ERROR
             && retriable (err) && g_get_monotonic_time () < deadline)
        g_usleep (100 * 1000);
      if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
        {
          g_set_error (error, KT_SUPPORT_ERROR, KT_SUPPORT_FAILED, "watermarks of %s[%d]: %s",
                       argv[0], p, rd_kafka_err2str (err));
          return FALSE;
        }
      g_string_append_printf (out, "%s%d:%" G_GINT64_FORMAT ":%" G_GINT64_FORMAT,
                              p ? " " : "", p, (gint64) lo, (gint64) hi);
    }
  printf ("%s\n", out->str);
  return TRUE;
}

static void
append_ids (GString *s, const int32_t *ids, int n)
{
  for (int i = 0; i < n; i++)
    g_string_append_printf (s, "%s%d", i ? "," : "", ids[i]);
}

static gboolean
cmd_describe (rd_kafka_t *rk, int argc, char **argv, GError **error)
{
  if (argc != 1)
    usage_error ("describe TOPIC");
  g_autoptr (KtSupportMetadata) md = metadata (rk, error);
  const rd_kafka_metadata_topic_t *t = md ? existing_topic (md, argv[0], error) : NULL;

  if (t == NULL)
    return FALSE;
  for (int p = 0; p < t->partition_cnt; p++)
    {
      const rd_kafka_metadata_partition_t *mp = &t->partitions[p];
      g_autoptr (GString) line = g_string_new (NULL);
      g_string_printf (line, "%d leader=%d replicas=", mp->id, mp->leader);
      append_ids (line, mp->replicas, mp->replica_cnt);
      g_string_append (line, " isr=");
      append_ids (line, mp->isrs, mp->isr_cnt);
      printf ("%s\n", line->str);
    }
  return TRUE;
}

static gboolean
cmd_wait_isr (rd_kafka_t *rk, int argc, char **argv, GError **error)
{
  int seconds = WAIT_MS / 1000;

  if (argc < 1 || argc > 2 || (argc == 2 && !parse_count (argv[1], 1, 3600, &seconds)))
    usage_error ("wait-isr TOPIC [SECONDS]");
  return wait_topic (rk, argv[0], 0, WAIT_IN_SYNC, seconds * 1000, error);
}

static gboolean
cmd_topics (rd_kafka_t *rk, int argc, char **argv, GError **error)
{
  (void) argv;
  if (argc != 0)
    usage_error ("topics takes no arguments");
  g_autoptr (KtSupportMetadata) md = metadata (rk, error);
  if (md == NULL)
    return FALSE;
  for (int i = 0; i < md->topic_cnt; i++)
    printf ("%s %d\n", md->topics[i].topic, md->topics[i].partition_cnt);
  return TRUE;
}

/* acl PRINCIPAL topic|group NAME OPERATION[,OPERATION...]: allows each
 * operation (read, write, describe) on that one resource to PRINCIPAL
 * (User:NAME), from any host. */
static gboolean
cmd_acl (rd_kafka_t *rk, int argc, char **argv, GError **error)
{
  static const struct { const char *name; rd_kafka_AclOperation_t op; } ops[] = {
    { "read", RD_KAFKA_ACL_OPERATION_READ },
    { "write", RD_KAFKA_ACL_OPERATION_WRITE },
    { "describe", RD_KAFKA_ACL_OPERATION_DESCRIBE },
  };
  rd_kafka_ResourceType_t type;
  g_auto (GStrv) wanted = NULL;
  g_autoptr (GPtrArray) acls = g_ptr_array_new_with_free_func ((GDestroyNotify) rd_kafka_AclBinding_destroy);
  char errstr[512];

  if (argc != 4)
    usage_error ("acl PRINCIPAL topic|group NAME OPERATION[,OPERATION...]");
  if (strcmp (argv[1], "topic") == 0)
    type = RD_KAFKA_RESOURCE_TOPIC;
  else if (strcmp (argv[1], "group") == 0)
    type = RD_KAFKA_RESOURCE_GROUP;
  else
    usage_error ("acl: a resource is topic or group, not '%s'", argv[1]);
  wanted = g_strsplit (argv[3], ",", -1);
  for (char **w = wanted; *w != NULL; w++)
    {
      gsize i = 0;
      rd_kafka_AclBinding_t *b;

      while (i < G_N_ELEMENTS (ops) && strcmp (*w, ops[i].name) != 0)
        i++;
      if (i == G_N_ELEMENTS (ops))
        usage_error ("acl: an operation is read, write or describe, not '%s'", *w);
      b = rd_kafka_AclBinding_new (type, argv[2], RD_KAFKA_RESOURCE_PATTERN_LITERAL, argv[0],
                                   "*", ops[i].op, RD_KAFKA_ACL_PERMISSION_TYPE_ALLOW, errstr,
                                   sizeof errstr);
      if (b == NULL)
        usage_error ("acl: %s", errstr);
      g_ptr_array_add (acls, b);
    }

  g_autoptr (rd_kafka_queue_t) q = rd_kafka_queue_new (rk);
  g_autoptr (rd_kafka_AdminOptions_t) o = admin_options (rk, RD_KAFKA_ADMIN_OP_CREATEACLS);
  rd_kafka_CreateAcls (rk, (rd_kafka_AclBinding_t **) acls->pdata, acls->len, o, q);
  g_autoptr (rd_kafka_event_t) ev = admin_wait (q, RD_KAFKA_EVENT_CREATEACLS_RESULT, "acl", error);
  if (ev == NULL)
    return FALSE;
  size_t n;
  const rd_kafka_acl_result_t **res
      = rd_kafka_CreateAcls_result_acls (rd_kafka_event_CreateAcls_result (ev), &n);
  for (size_t i = 0; i < n; i++)
    {
      const rd_kafka_error_t *e = rd_kafka_acl_result_error (res[i]);
      if (e != NULL && rd_kafka_error_code (e) != RD_KAFKA_RESP_ERR_NO_ERROR)
        {
          g_set_error (error, KT_SUPPORT_ERROR, KT_SUPPORT_FAILED, "acl %s %s %s: %s", argv[0],
                       argv[1], argv[2], rd_kafka_error_string (e));
          return FALSE;
        }
    }
  return TRUE;
}

static const struct
{
  const char *name;
  gboolean (*run) (rd_kafka_t *rk, int argc, char **argv, GError **error);
} commands[] = {
  { "create", cmd_create },
  { "delete", cmd_delete },
  { "add-partitions", cmd_add_partitions },
  { "config", cmd_config },
  { "watermarks", cmd_watermarks },
  { "describe", cmd_describe },
  { "wait-isr", cmd_wait_isr },
  { "topics", cmd_topics },
  { "acl", cmd_acl },
};

int
main (int argc, char **argv)
{
  const char *brokers = g_getenv ("KT_BROKERS");
  g_autoptr (rd_kafka_conf_t) conf = rd_kafka_conf_new ();
  g_autoptr (GError) error = NULL;
  char errstr[512];
  int i = 1;

  /* Quiet: a broker that is down (a test killed it) is retried, and the
   * command's own line says what failed. */
  if (!kt_support_conf_set (conf, "log_level", "3")
      || !kt_support_conf_set (conf, "allow.auto.create.topics", "false"))
    return EXIT_FAILED;
  for (; i < argc && argv[i][0] == '-'; i++)
    {
      if (strcmp (argv[i], "--brokers") == 0 && i + 1 < argc)
        brokers = argv[++i];
      else if (strcmp (argv[i], "-X") == 0 && i + 1 < argc)
        {
          g_autofree char *key = NULL;
          const char *value;
          split_config (argv[++i], &key, &value);
          if (!kt_support_conf_set (conf, key, value))
            return EXIT_USAGE;
        }
      else
        usage_error ("unknown option '%s'", argv[i]);
    }
  if (brokers == NULL || *brokers == '\0')
    usage_error ("no brokers: give --brokers or set KT_BROKERS");
  if (i >= argc)
    usage_error ("no command");
  if (!kt_support_conf_set (conf, "bootstrap.servers", brokers))
    return EXIT_USAGE;
  base_conf = rd_kafka_conf_dup (conf);

  for (gsize c = 0; c < G_N_ELEMENTS (commands); c++)
    if (strcmp (argv[i], commands[c].name) == 0)
      {
        g_autoptr (rd_kafka_t) rk = rd_kafka_new (RD_KAFKA_PRODUCER, conf, errstr, sizeof errstr);
        if (rk == NULL)
          {
            g_printerr ("kt-admin: cannot create a Kafka client: %s\n", errstr);
            return EXIT_FAILED;
          }
        conf = NULL;  /* rd_kafka_new() owns it now */
        if (!commands[c].run (rk, argc - i - 1, argv + i + 1, &error))
          {
            g_printerr ("kt-admin: %s\n", error->message);
            return EXIT_FAILED;
          }
        return EXIT_DONE;
      }
  usage_error ("unknown command '%s'", argv[i]);
}
