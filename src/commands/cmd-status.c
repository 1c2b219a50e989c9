/* cmd-status.c - `ktally status`: where every partition of a job stands.
 *
 * Per partition: the stored offset (kafka_offset, or the consumer group's
 * with --offsets kafka), the log start, the last stable offset (where a
 * job's reading ends: it reads committed records only), the high
 * watermark (the log's end, open transactions included), the lag and any
 * data lost to retention, as a table or JSON (json-glib). Reads only. */
#include "command.h"

#include <stdio.h>
#include <json-glib/json-glib.h>
#include "check.h"
#include "error.h"
#include "jobs.h"
#include "json-member.h"
#include "offsets.h"
#include "retry.h"
#include "run.h"
#include "schema.h"
#include "source.h"

#define KAFKA_TIMEOUT_MS 10000
/* What `ktally status --help` says before the options. */
static const char SUMMARY[] =
  "Shows, per partition, the job's stored offset, the log start, the last\n"
  "stable offset (where reading committed records ends), the high watermark\n"
  "(the log's end, open transactions included), the lag, and whether data\n"
  "was lost to retention. --job alone shows every topic the job reads.";

/* One partition of `ktally status`: its lag and what was lost. */
typedef struct
{
  const KtPartitionState *s;  /* ->high: the last stable offset */
  gint64   high_watermark;
  gboolean lost;
  gint64   lost_n;
  gint64   lag;
  const char *owner;
} StatusRow;

static StatusRow
status_row (const KtPartitionState *s, gint64 high_watermark, GHashTable *owners)
{
  StatusRow row = { s, high_watermark,
                    s->stored >= 0 && (s->stored < s->low || s->stored > s->high), 0, 0,
                    g_hash_table_lookup (owners, GINT_TO_POINTER (s->partition)) };

  if (row.lost)
    row.lost_n = s->stored < s->low ? s->low - s->stored : s->stored - s->high;
  /* Without a stored offset, everything readable is still to do; an
   * open transaction's records are not readable yet. */
  row.lag = MAX (0, s->stored < 0 ? s->high - s->low : s->high - MAX (s->stored, s->low));
  return row;
}

/* `status --json`: one topic's document, built by json-glib (names are
 * escaped). @kafka: the offsets shown are the consumer group's. */
static JsonNode *
status_json (const KtConfig *config, const char *database, const GArray *states,
             const gint64 *highs, GHashTable *owners, gboolean kafka)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  gint64 t_stored = 0, t_stable = 0, t_high = 0, t_lag = 0, t_lost = 0;

  json_builder_begin_object (b);
  kt_json_member_string (b, "job", config->job.name);
  kt_json_member_string (b, "topic", config->job.topic);
  kt_json_member_string (b, "offsets", kafka ? "kafka" : "mysql");
  /* The server read, of a hosts list: the one in use. */
  kt_json_member_string (b, "database", database);
  json_builder_set_member_name (b, "partitions");
  json_builder_begin_array (b);
  for (guint i = 0; i < states->len; i++)
    {
      StatusRow row = status_row (&g_array_index (states, KtPartitionState, i), highs[i],
                                  owners);

      t_stored += MAX (row.s->stored, 0);
      t_stable += row.s->high;
      t_high += row.high_watermark;
      t_lag += row.lag;
      t_lost += row.lost_n;
      json_builder_begin_object (b);
      kt_json_member_int (b, "partition", row.s->partition);
      json_builder_set_member_name (b, "stored");
      if (row.s->stored >= 0)
        json_builder_add_int_value (b, row.s->stored);
      else
        json_builder_add_null_value (b);
      kt_json_member_int (b, "log_start", row.s->low);
      kt_json_member_int (b, "last_stable_offset", row.s->high);
      kt_json_member_int (b, "high_watermark", row.high_watermark);
      kt_json_member_int (b, "lag", row.lag);
      kt_json_member_bool (b, "data_lost", row.lost);
      kt_json_member_int (b, "lost_offsets", row.lost_n);
      if (config->job.group != NULL)
        {
          json_builder_set_member_name (b, "owner");
          if (row.owner != NULL)
            json_builder_add_string_value (b, row.owner);
          else
            json_builder_add_null_value (b);
        }
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_set_member_name (b, "totals");
  json_builder_begin_object (b);
  kt_json_member_int (b, "partitions", states->len);
  kt_json_member_int (b, "stored", t_stored);
  kt_json_member_int (b, "last_stable_offset", t_stable);
  kt_json_member_int (b, "high_watermark", t_high);
  kt_json_member_int (b, "lag", t_lag);
  kt_json_member_int (b, "lost_offsets", t_lost);
  json_builder_end_object (b);
  json_builder_end_object (b);
  return json_builder_get_root (b);
}

/* `status` as a table for people, one topic, appended to @out. */
static void
status_table (const KtConfig *config, const char *database, const GArray *states,
              const gint64 *highs, GHashTable *owners, const char *owner_kind, gboolean kafka,
              GString *out)
{
  gint64 t_stored = 0, t_stable = 0, t_high = 0, t_lag = 0, t_lost = 0;
  const char *sep = config->job.group != NULL ? "  " : "";

  g_string_append_printf (out, "job %s, topic %s, database %s%s%s%s%s\n"
                          "%9s %12s %12s %12s %14s %12s  %-22s%s%s\n",
                          config->job.name, config->job.topic, database,
                          config->job.group != NULL ? ", group " : "",
                          config->job.group != NULL ? config->job.group : "",
                          kafka ? ", offsets in Kafka's consumer group ktally-" : "",
                          kafka ? config->job.name : "", "partition",
                          "stored", "log start", "last stable", "high watermark", "lag",
                          "data lost", sep,
                          config->job.group != NULL ? owner_kind : "");
  for (guint i = 0; i < states->len; i++)
    {
      StatusRow row = status_row (&g_array_index (states, KtPartitionState, i), highs[i],
                                  owners);
      const KtPartitionState *s = row.s;
      g_autofree char *stored = s->stored >= 0
        ? g_strdup_printf ("%" G_GINT64_FORMAT, s->stored) : g_strdup ("-");
      g_autofree char *what = !row.lost ? g_strdup ("-")
        : s->stored < s->low
          ? g_strdup_printf ("YES: [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ") gone",
                             s->stored, s->low)
          : g_strdup_printf ("YES: stored offset beyond the end");

      t_stored += MAX (s->stored, 0);
      t_stable += s->high;
      t_high += row.high_watermark;
      t_lag += row.lag;
      t_lost += row.lost_n;
      g_string_append_printf (out, "%9d %12s %12" G_GINT64_FORMAT " %12" G_GINT64_FORMAT
                              " %14" G_GINT64_FORMAT " %12" G_GINT64_FORMAT "  %-22s%s%s\n",
                              s->partition, stored, s->low, s->high, row.high_watermark,
                              row.lag, what, sep,
                              config->job.group != NULL ? (row.owner != NULL ? row.owner : "-") : "");
    }
  g_string_append_printf (out, "%9s %12" G_GINT64_FORMAT " %12s %12" G_GINT64_FORMAT
                          " %14" G_GINT64_FORMAT " %12" G_GINT64_FORMAT "  %s\n", "total",
                          t_stored, "", t_stable, t_high, t_lag, t_lost > 0 ? "YES" : "-");
}

/* What status reads one topic through. */
typedef struct
{
  const KtConfig *config;
  KtSource       *source;
  GArray         *partitions;  /* gint32 */
} StatusTopic;

static gboolean
status_partitions (gpointer data, int timeout_ms, GError **error)
{
  StatusTopic *t = data;
  return kt_source_partitions (t->source, t->partitions, timeout_ms, error);
}

/* One topic of `ktally status`, into @json (when --json) or @text. Reads
 * only: creates nothing, joins no group. */
static gboolean
status_topic (const KtConfig *config, KtDb *db, gboolean present, JsonArray *json,
              GString *text, GError **error)
{
  static const volatile int never = 0;
  KtSourceConfig source_config = {
    .brokers = config->kafka.brokers,
    .topic = config->job.topic,
    .client_id = config->job.name,  /* ktally-JOB: where --offsets kafka keeps them */
    .properties = (const char *const *) config->kafka.properties,
  };
  g_autoptr(KtSource) source = kt_source_new (&source_config, error);
  g_autoptr(GArray) partitions = g_array_new (FALSE, FALSE, sizeof (gint32));
  g_autoptr(GArray) states = g_array_new (FALSE, TRUE, sizeof (KtPartitionState));
  g_autofree gint64 *highs = NULL;
  g_autoptr(GHashTable) owners = g_hash_table_new_full (g_direct_hash, g_direct_equal,
                                                        NULL, g_free);
  StatusTopic t = { config, source, partitions };
  const char *owner_kind = "owner";
  gboolean kafka = FALSE;
  KtPartitionState *s;

  if (source == NULL
      || !kt_retry (&never, config->run.startup_timeout, "Kafka", status_partitions, &t, error))
    return FALSE;
  g_array_set_size (states, partitions->len);
  s = (KtPartitionState *) (void *) states->data;
  for (guint i = 0; i < states->len; i++)
    s[i] = (KtPartitionState) { g_array_index (partitions, gint32, i), -1, 0, 0 };
  /* Nothing is created: a job that never ran has no offsets to show. */
  if (present && !kt_offsets_load (db, config->job.name, config->job.topic, s, states->len, error))
    return FALSE;
  /* No offsets in MySQL: perhaps an idempotent job that keeps them in
   * Kafka (--offsets kafka), in its consumer group ktally-JOB. */
  kafka = TRUE;
  for (guint i = 0; i < states->len; i++)
    kafka &= s[i].stored < 0;
  if (kafka)
    {
      if (!kt_source_committed (source, s, states->len, KAFKA_TIMEOUT_MS, error))
        return FALSE;
      kafka = FALSE;
      for (guint i = 0; i < states->len; i++)
        kafka |= s[i].stored >= 0;
    }
  highs = g_new0 (gint64, MAX (states->len, 1));
  /* The high watermarks after the last stable offsets: never below them. */
  if (!kt_source_watermarks (source, s, states->len, KAFKA_TIMEOUT_MS, error)
      || !kt_source_high_watermarks (source, s, states->len, highs, KAFKA_TIMEOUT_MS, error))
    return FALSE;

  if (config->job.group != NULL)
    {
      g_autoptr(GError) local = NULL;

      /* The group's own description; brokers without DescribeGroups (the
       * test broker) leave the audit trail's last committer per partition. */
      if (!kt_source_group_owners (source, config->job.group, owners, KAFKA_TIMEOUT_MS, &local))
        {
          g_info ("%s; showing each partition's last committer instead", local->message);
          owner_kind = "last committer";
          if (present && !kt_offsets_last_committers (db, config->job.name, config->job.topic,
                                                      owners, error))
            return FALSE;
        }
    }
  if (json != NULL)
    json_array_add_element (json, status_json (config, kt_db_name (db), states, highs, owners,
                                               kafka));
  else
    status_table (config, kt_db_name (db), states, highs, owners, owner_kind, kafka, text);
  return TRUE;
}

static gboolean
status_database (gpointer data, int timeout_ms, GError **error)
{
  (void) timeout_ms;
  return kt_schema_readable (data, error);
}

/* --job without --topic: the topics the job reads, as the database knows
 * them, into @config's copy (@topics owns them). */
static gboolean
job_topics (KtDb *db, KtConfig *config, GStrv *topics, GError **error)
{
  g_autoptr(GPtrArray) jobs = g_ptr_array_new_with_free_func ((GDestroyNotify) kt_known_job_free);
  const KtKnownJob *info;

  if (!kt_jobs_load (db, jobs, error)
      || (info = kt_jobs_require (db, jobs, config->job.name, error)) == NULL)
    return FALSE;
  if (info->topics == NULL || info->topics[0] == NULL)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "job %s has no topic recorded in %s: "
                   "give --topic", config->job.name, kt_db_name (db));
      return FALSE;
    }
  *topics = g_strdupv (info->topics);
  config->job.topics = *topics;
  config->job.topic = (*topics)[0];
  return TRUE;
}

static gboolean
show_status (const KtConfig *given, GError **error)
{
  static const volatile int never = 0;
  g_autoptr(JsonArray) docs = given->json ? json_array_new () : NULL;
  g_autoptr(GString) text = g_string_new (NULL);
  g_autoptr(KtDb) db = kt_db_new (&given->db);
  g_auto(GStrv) topics = NULL;
  KtConfig copy = *given;  /* shallow: the job's topics, when --topic is not given */
  const KtConfig *config = &copy;
  gboolean present;

  kt_db_allow_read_only (db);  /* reads only: a replica will do */
  /* A mistyped --job (or a topic of none) is not a new job with
   * everything to do: it is refused, naming the jobs there are. */
  if (!kt_retry (&never, config->run.startup_timeout, "MySQL", status_database, db, error)
      || (copy.job.topics == NULL && !job_topics (db, &copy, &topics, error))
      || !kt_jobs_check (db, config->job.name, (const char *const *) config->job.topics, error)
      || !kt_offsets_present (db, &present, error))
    return FALSE;
  for (char **topic = config->job.topics; *topic != NULL; topic++)
    {
      KtConfig one = *config;  /* a shallow copy: its own topic */

      one.job.topic = *topic;
      if (topic != config->job.topics && docs == NULL)
        g_string_append_c (text, '\n');
      if (!status_topic (&one, db, present, docs, text, error))
        {
          if (config->job.topics[1] != NULL)
            g_prefix_error (error, "topic %s: ", *topic);
          return FALSE;
        }
    }
  if (docs != NULL)
    {
      g_autoptr(JsonGenerator) gen = json_generator_new ();
      g_autoptr(JsonNode) root = NULL;
      g_autofree char *out = NULL;

      /* One topic: its document, as always; several: an array of them. */
      if (json_array_get_length (docs) == 1)
        root = json_node_copy (json_array_get_element (docs, 0));
      else
        {
          root = json_node_new (JSON_NODE_ARRAY);
          json_node_set_array (root, docs);
        }
      json_generator_set_root (gen, root);
      out = json_generator_to_data (gen, NULL);
      g_string_append_printf (text, "%s\n", out);
    }
  fputs (text->str, stdout);
  return TRUE;
}

static gboolean
check (KtConfig *config, const KtOptionValues *values, GError **error)
{
  /* --job alone: the job knows its topics (kt_status reads them). */
  if (config->job.topics == NULL && kt_option_given (values, "job")
      ? !kt_check_job (config, TRUE, "", error) || !kt_check_brokers (config, TRUE, error)
      : !kt_check_kafka (config, values, TRUE, error))
    return FALSE;
  if (!kt_check_db (config, error))
    return FALSE;
  config->job.table = g_strdup ("error_log");
  return TRUE;
}

static gboolean
handle (const KtConfig *config, volatile int *stop, GError **error)
{
  (void) stop;
  return show_status (config, error);
}

const KtCommand kt_command_status = {
  .name = "status",
  .summary = "show where every partition stands: offsets, lag, data loss",
  .help = SUMMARY,
  .bit = KT_CMD_STATUS,
  .check = check,
  .handle = handle,
};
