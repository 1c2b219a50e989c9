/* cmd-forget.c - `ktally forget`: removes a job from its database.
 *
 * In one transaction (jobs.h): its offsets, its audit rows, its kind's own
 * records (idempotent mode's covered sets) and what it is. Its output
 * stays, and the output says so: what its batches recorded per table goes
 * to ktally_forgotten, so that `ktally audit` still adds up. A job whose
 * offsets live in Kafka is forgotten only once its consumer group is gone
 * (checked with --brokers): a job of that name again would go on from them.
 * Without --execute, a dry run: it counts what would go and changes
 * nothing. */
#include "command.h"

#include <stdio.h>
#include <string.h>
#include "check.h"
#include "error.h"
#include "jobs.h"
#include "migrations.h"
#include "retry.h"
#include "schema.h"
#include "source.h"

#define KAFKA_TIMEOUT_MS 10000
/* A commit younger than this: an instance of the job probably runs. */
#define RECENT_S 300

static const char SUMMARY[] =
  "Removes a job from the database: its stored offsets, its audit rows, its\n"
  "covered offsets (idempotent mode) and what it is (ktally_job), in one\n"
  "transaction. What it counted stays in its table. Stop every instance of\n"
  "the job first: one that runs would start the job again, afresh. A job with\n"
  "--offsets kafka needs --brokers, and its consumer group deleted first.";

static gboolean
readable (gpointer data, int timeout_ms, GError **error)
{
  (void) timeout_ms;
  return kt_schema_readable (data, error);
}

/* Seconds since @when ("YYYY-MM-DD HH:MM:SS.mmm", UTC), or -1. */
static gint64
age_of (const char *when)
{
  g_autofree char *iso = NULL;
  g_autoptr(GDateTime) then = NULL;
  g_autoptr(GDateTime) now = g_date_time_new_now_utc ();

  if (when == NULL || strlen (when) < 19)
    return -1;
  iso = g_strdup_printf ("%.10sT%sZ", when, when + 11);
  then = g_date_time_new_from_iso8601 (iso, NULL);
  return then != NULL ? g_date_time_difference (now, then) / G_USEC_PER_SEC : -1;
}

/* Whether the consumer group ktally-JOB holds no offset of @job's topics
 * any more; KT_ERROR_USAGE saying how to delete it otherwise. */
static gboolean
group_empty (const KtConfig *config, const KtKnownJob *job, GError **error)
{
  for (char **t = job->topics; *t != NULL; t++)
    {
      KtSourceConfig source_config = {
        .brokers = config->kafka.brokers, .topic = *t, .client_id = job->name,
        .properties = (const char *const *) config->kafka.properties,
      };
      g_autoptr(KtSource) source = kt_source_new (&source_config, error);
      g_autoptr(GArray) partitions = g_array_new (FALSE, FALSE, sizeof (gint32));
      g_autoptr(GArray) states = g_array_new (FALSE, TRUE, sizeof (KtPartitionState));

      if (source == NULL || !kt_source_partitions (source, partitions, KAFKA_TIMEOUT_MS, error))
        return FALSE;
      for (guint i = 0; i < partitions->len; i++)
        g_array_append_val (states, ((KtPartitionState) {
          g_array_index (partitions, gint32, i), -1, 0, 0 }));
      if (!kt_source_committed (source, (KtPartitionState *) (void *) states->data, states->len,
                                KAFKA_TIMEOUT_MS, error))
        return FALSE;
      for (guint i = 0; i < states->len; i++)
        if (g_array_index (states, KtPartitionState, i).stored >= 0)
          {
            g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                         "job %s keeps its offsets in Kafka's consumer group ktally-%s, which "
                         "still holds offsets of %s: delete the group first "
                         "(kafka-consumer-groups.sh --delete --group ktally-%s), or a job "
                         "named %s again would go on from them; nothing changed", job->name,
                         job->name, *t, job->name, job->name);
            return FALSE;
          }
    }
  return TRUE;
}

static void
print_report (const KtKnownJob *job, const KtForgetReport *report, gboolean kafka,
              gboolean executed)
{
  const KtJobRow *rec = job->record;
  g_autofree char *topics = g_strjoinv (", ", job->topics);
  const KtForgetCount *c = &report->offsets;
  const char *output = rec != NULL ? rec->output : NULL;
  gint64 age = age_of (job->last_commit);

  if (rec != NULL)
    printf ("job %s: %s, %s, offsets in %s, counts into %s; topics %s\n", job->name, rec->kind,
            rec->mode, kafka ? "Kafka's consumer group" : "kafka_offset", rec->output, topics);
  else
    printf ("job %s: topics %s (what it is was never recorded)\n", job->name, topics);
  printf ("%s:\n", executed ? "removed" : "forget removes");
  printf ("  %-16s %8" G_GUINT64_FORMAT " row%s: where it stands\n", "kafka_offset", c->offsets,
          c->offsets == 1 ? "" : "s");
  printf ("  %-16s %8" G_GUINT64_FORMAT " row%s: its audit trail\n", "ktally_batches",
          c->batches, c->batches == 1 ? "" : "s");
  if (report->records_table != NULL)
    printf ("  %-16s %8" G_GUINT64_FORMAT " row%s: the offsets its counts include\n",
            report->records_table, report->records, report->records == 1 ? "" : "s");
  printf ("  %-16s %8" G_GUINT64_FORMAT " row%s: what it is\n", "ktally_job", report->identity,
          report->identity == 1 ? "" : "s");
  printf ("stays:\n");
  for (guint i = 0; i < c->targets->len; i++)
    {
      const KtForgottenTarget *t = &g_array_index (c->targets, KtForgottenTarget, i);
      printf ("  %s: what the job counted into it (its batches recorded %" G_GUINT64_FORMAT
              " ERROR lines; ktally_forgotten keeps the figure for `ktally audit`)\n",
              t->target, t->error_lines);
    }
  if (c->targets->len == 0 && output != NULL)
    printf ("  %s: the job's batches recorded nothing there\n", output);
  if (report->rows_table != NULL)
    printf ("  %s: its %" G_GUINT64_FORMAT " row%s (job %s), in the sums of %s\n",
            report->rows_table, report->rows, report->rows == 1 ? "" : "s", job->name,
            output != NULL ? output : "its view");
  printf ("a job named %s that runs again is a new job: it starts at its --start and counts "
          "into %s again\n", job->name, output != NULL ? output : "its table");
  if (age >= 0 && age < RECENT_S)
    printf ("warning: job %s committed %" G_GINT64_FORMAT " s ago: stop every instance of it "
            "first, or one that runs starts it again%s\n", job->name, age,
            executed ? "" : " (forget does not stop them)");
  if (!executed)
    printf ("dry run: nothing changed; run the same command with --execute to apply it\n");
  else
    printf ("done: job %s is forgotten\n", job->name);
}

static gboolean
kt_forget (const KtConfig *config, GError **error)
{
  static const volatile int never = 0;
  g_autoptr(KtDb) db = kt_db_new (&config->db);
  g_autoptr(GPtrArray) jobs = g_ptr_array_new_with_free_func ((GDestroyNotify) kt_known_job_free);
  g_auto(KtForgetReport) report = { .identity = 0 };
  const KtKnownJob *job;
  gboolean kafka;

  if (!kt_retry (&never, config->run.startup_timeout, "MySQL", readable, db, error)
      || !kt_jobs_load (db, jobs, error))
    return FALSE;
  job = kt_jobs_require (db, jobs, config->job.name, error);
  if (job == NULL)
    return FALSE;
  kafka = job->record != NULL && g_strcmp0 (job->record->offsets, "kafka") == 0;
  if (kafka && config->kafka.brokers == NULL)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "job %s keeps its offsets in Kafka's "
                   "consumer group ktally-%s: give --brokers, so that forget can check the group "
                   "was deleted (a job named %s again would go on from its offsets)", job->name,
                   job->name, job->name);
      return FALSE;
    }
  /* ktally does not delete the group itself: librdkafka 2.0 aborts when
   * a broker lacks DeleteGroups (librdkafka #3663), as the test broker
   * does. The operator deletes it; until then the job is not forgotten. */
  if (kafka && !group_empty (config, job, error))
    return FALSE;
  /* Writes: an older schema is brought forward first (and gets
   * ktally_forgotten); a dry run refuses what that refuses. */
  if (!(config->execute ? kt_migrations_ready (db, NULL, NULL, error) : kt_schema_check_ready (db, error)))
    return FALSE;
  if (!kt_jobs_forget (db, job, config->execute, &report, error))
    return FALSE;
  print_report (job, &report, kafka, config->execute);
  return TRUE;
}

static const KtOptionNote notes[] = {
  { "job", "The job to forget (`ktally jobs` lists them)" },
  { "brokers", "Kafka bootstrap servers: needed for a job with --offsets kafka, to check "
               "that its consumer group was deleted" },
  { "dry-run", "Say what would be removed and change nothing (the default)" },
  { "execute", "Remove it, in one transaction" },
  { NULL, NULL }
};

static gboolean
check (KtConfig *config, const KtOptionValues *values, GError **error)
{
  (void) values;
  return kt_check_job (config, TRUE, " (`ktally jobs` lists them)", error)
         && kt_check_execute (config, error)
         && kt_check_db (config, error)
         && kt_check_brokers (config, FALSE, error);
}

static gboolean
handle (const KtConfig *config, volatile int *stop, GError **error)
{
  (void) stop;
  return kt_forget (config, error);
}

const KtCommand kt_command_forget = {
  .name = "forget",
  .summary = "remove a job's offsets, audit rows and identity (--dry-run, --execute)",
  .help = SUMMARY,
  .bit = KT_CMD_FORGET,
  .notes = notes,
  .check = check,
  .handle = handle,
};
