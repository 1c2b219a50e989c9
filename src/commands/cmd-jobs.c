/* cmd-jobs.c - `ktally jobs`: every job a database knows.
 *
 * Per job: what it is (ktally_job: kind, mode, where its offsets live, the
 * table it writes, its topics), its last commit (ktally_batches), and with
 * --brokers its lag (the high watermarks against its stored offsets, as
 * `ktally status` computes it). A table, or JSON (json-glib). Reads only. */
#include "command.h"

#include <stdio.h>
#include <string.h>
#include <json-glib/json-glib.h>
#include "check.h"
#include "error.h"
#include "jobs.h"
#include "json-member.h"
#include "offsets.h"
#include "retry.h"
#include "schema.h"
#include "source.h"

#define KAFKA_TIMEOUT_MS 10000

static const char SUMMARY[] =
  "Lists every job of the database: its kind, mode, where its offsets live,\n"
  "the table it writes, its topics and its last commit; with --brokers, its\n"
  "lag (records between its stored offsets and the high watermarks, over the\n"
  "partitions it stores offsets of).";

/* One job's lag, or why it is unknown. */
typedef struct
{
  gboolean known;
  gint64   lag;
  char    *why;  /* when not known */
} Lag;

static gboolean
source_partitions (gpointer data, int timeout_ms, GError **error)
{
  gpointer *args = data;
  return kt_source_partitions (args[0], args[1], timeout_ms, error);
}

/* The lag of @job on @topic, added to *@lag: per partition it stores an
 * offset of, the high watermark less that offset (or the log start where
 * that is higher), as `ktally status` says. */
static gboolean
topic_lag (const KtConfig *config, KtDb *db, const KtKnownJob *job, const char *topic,
           gint64 *lag, GError **error)
{
  static const volatile int never = 0;
  KtSourceConfig source_config = {
    .brokers = config->kafka.brokers,
    .topic = topic,
    .client_id = job->name,  /* ktally-JOB: where --offsets kafka keeps them */
    .properties = (const char *const *) config->kafka.properties,
  };
  g_autoptr(KtSource) source = kt_source_new (&source_config, error);
  g_autoptr(GArray) partitions = g_array_new (FALSE, FALSE, sizeof (gint32));
  g_autoptr(GArray) states = g_array_new (FALSE, TRUE, sizeof (KtPartitionState));
  gpointer args[] = { source, partitions };
  KtPartitionState *s;

  if (source == NULL
      || !kt_retry (&never, config->run.startup_timeout, "Kafka", source_partitions, args, error))
    return FALSE;
  g_array_set_size (states, partitions->len);
  s = (KtPartitionState *) (void *) states->data;
  for (guint i = 0; i < states->len; i++)
    s[i] = (KtPartitionState) { g_array_index (partitions, gint32, i), -1, 0, 0 };
  if (job->record != NULL && g_strcmp0 (job->record->offsets, "kafka") == 0)
    {
      if (!kt_source_committed (source, s, states->len, KAFKA_TIMEOUT_MS, error))
        return FALSE;
    }
  else if (!kt_offsets_load (db, job->name, topic, s, states->len, error))
    return FALSE;
  if (!kt_source_watermarks (source, s, states->len, KAFKA_TIMEOUT_MS, error))
    return FALSE;
  /* Only the partitions it stores an offset of: a job may read a share
   * of the topic (--partitions), and another job the rest. */
  for (guint i = 0; i < states->len; i++)
    if (s[i].stored >= 0)
      *lag += MAX (0, s[i].high - MAX (s[i].stored, s[i].low));
  return TRUE;
}

static const char *
or_dash (const char *s)
{
  return s != NULL ? s : "-";
}

static void
print_json (const GPtrArray *jobs, const Lag *lags, gboolean brokers)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *out = NULL;

  json_builder_begin_array (b);
  for (guint i = 0; i < jobs->len; i++)
    {
      const KtKnownJob *j = jobs->pdata[i];
      const KtJobRow *r = j->record;
      const char *fields[][2] = {
        { "kind", r != NULL ? r->kind : NULL }, { "mode", r != NULL ? r->mode : NULL },
        { "offsets", r != NULL ? r->offsets : NULL }, { "table", r != NULL ? r->output : NULL },
      };

      json_builder_begin_object (b);
      kt_json_member_string (b, "job", j->name);
      for (gsize f = 0; f < G_N_ELEMENTS (fields); f++)
        {
          json_builder_set_member_name (b, fields[f][0]);
          if (fields[f][1] != NULL)
            json_builder_add_string_value (b, fields[f][1]);
          else
            json_builder_add_null_value (b);
        }
      json_builder_set_member_name (b, "topics");
      json_builder_begin_array (b);
      for (char **t = j->topics; *t != NULL; t++)
        json_builder_add_string_value (b, *t);
      json_builder_end_array (b);
      kt_json_member_int (b, "batches", (gint64) j->batches);
      json_builder_set_member_name (b, "last_commit");
      if (j->last_commit != NULL)
        json_builder_add_string_value (b, j->last_commit);
      else
        json_builder_add_null_value (b);
      json_builder_set_member_name (b, "lag");
      if (lags[i].known)
        json_builder_add_int_value (b, lags[i].lag);
      else
        json_builder_add_null_value (b);
      if (brokers && !lags[i].known)
        {
          kt_json_member_string (b, "lag_unknown", lags[i].why);
        }
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  out = json_generator_to_data (gen, NULL);
  printf ("%s\n", out);
}

static void
print_table (const GPtrArray *jobs, const Lag *lags, gboolean brokers, const char *dbname)
{
  static const char *const heads[] = { "job", "kind", "mode", "offsets", "table", "topics",
                                       "last commit (UTC)", "lag" };
  enum { N_COLUMNS = G_N_ELEMENTS (heads) };
  g_autoptr(GPtrArray) cells = g_ptr_array_new_with_free_func (g_free);
  int width[N_COLUMNS];
  guint columns = brokers ? N_COLUMNS : N_COLUMNS - 1;

  if (jobs->len == 0)
    {
      printf ("no jobs in %s\n", dbname);
      return;
    }
  for (guint c = 0; c < columns; c++)
    {
      g_ptr_array_add (cells, g_strdup (heads[c]));
      width[c] = (int) strlen (heads[c]);
    }
  for (guint i = 0; i < jobs->len; i++)
    {
      const KtKnownJob *j = jobs->pdata[i];
      const KtJobRow *r = j->record;
      char *row[N_COLUMNS] = {
        g_strdup (j->name), g_strdup (or_dash (r != NULL ? r->kind : NULL)),
        g_strdup (or_dash (r != NULL ? r->mode : NULL)),
        g_strdup (or_dash (r != NULL ? r->offsets : NULL)),
        g_strdup (or_dash (r != NULL ? r->output : NULL)), g_strjoinv (",", j->topics),
        g_strdup (or_dash (j->last_commit)),
        lags[i].known ? g_strdup_printf ("%" G_GINT64_FORMAT, lags[i].lag) : g_strdup ("?"),
      };

      for (guint c = 0; c < N_COLUMNS; c++)
        {
          if (c < columns)
            {
              width[c] = MAX (width[c], (int) strlen (row[c]));
              g_ptr_array_add (cells, row[c]);
            }
          else
            g_free (row[c]);
        }
    }
  for (guint i = 0; i < cells->len; i++)
    {
      guint c = i % columns;
      printf (c + 1 < columns ? "%-*s  " : "%*s\n", c + 1 < columns ? width[c] : 0,
              (const char *) cells->pdata[i]);
    }
  if (!brokers)
    printf ("lag: unknown (give --brokers to compare the stored offsets with the high "
            "watermarks)\n");
  for (guint i = 0; brokers && i < jobs->len; i++)
    if (!lags[i].known)
      printf ("lag of %s unknown: %s\n", ((const KtKnownJob *) jobs->pdata[i])->name,
              lags[i].why);
}

static gboolean
readable (gpointer data, int timeout_ms, GError **error)
{
  (void) timeout_ms;
  return kt_schema_readable (data, error);
}

static gboolean
kt_jobs (const KtConfig *config, GError **error)
{
  static const volatile int never = 0;
  g_autoptr(KtDb) db = kt_db_new (&config->db);
  g_autoptr(GPtrArray) jobs = g_ptr_array_new_with_free_func ((GDestroyNotify) kt_known_job_free);
  g_autofree Lag *lags = NULL;

  kt_db_allow_read_only (db);  /* reads only: a replica will do */
  if (!kt_retry (&never, config->run.startup_timeout, "MySQL", readable, db, error)
      || !kt_jobs_load (db, jobs, error))
    return FALSE;
  lags = g_new0 (Lag, MAX (jobs->len, 1));
  for (guint i = 0; config->kafka.brokers != NULL && i < jobs->len; i++)
    {
      const KtKnownJob *j = jobs->pdata[i];
      g_autoptr(GError) local = NULL;

      /* A replay's work ends at its --until, which only its name holds. */
      if (g_str_has_prefix (j->name, KT_REPLAY_JOB_PREFIX))
        {
          lags[i].why = g_strdup ("a replay ends at its --until");
          continue;
        }
      lags[i].known = TRUE;
      for (char **t = j->topics; *t != NULL && lags[i].known; t++)
        if (!topic_lag (config, db, j, *t, &lags[i].lag, &local))
          {
            /* One job's topic gone (or Kafka slow) leaves the others' lag. */
            lags[i].known = FALSE;
            lags[i].why = g_strdup_printf ("topic %s: %s", *t, local->message);
          }
    }
  if (config->json)
    print_json (jobs, lags, config->kafka.brokers != NULL);
  else
    print_table (jobs, lags, config->kafka.brokers != NULL, kt_db_name (db));
  for (guint i = 0; i < jobs->len; i++)
    g_free (lags[i].why);
  return TRUE;
}

static const KtOptionNote notes[] = {
  { "brokers", "Kafka bootstrap servers: also show each job's lag" },
  { "json", "Print one JSON document (an array of jobs) instead of a table" },
  { NULL, NULL }
};

static gboolean
check (KtConfig *config, const KtOptionValues *values, GError **error)
{
  (void) values;
  return kt_check_db (config, error)
         && kt_check_brokers (config, FALSE, error);
}

static gboolean
handle (const KtConfig *config, volatile int *stop, GError **error)
{
  (void) stop;
  return kt_jobs (config, error);
}

const KtCommand kt_command_jobs = {
  .name = "jobs",
  .summary = "list every job of a database: kind, mode, table, topics, last commit, lag",
  .help = SUMMARY,
  .bit = KT_CMD_JOBS,
  .notes = notes,
  .check = check,
  .handle = handle,
};
