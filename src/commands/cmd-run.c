/* cmd-run.c - `ktally run`: the job as a long-lived service (run.h), which
 * SIGHUP reloads (reload.h) and systemd supervises (notify.h). */
#include "cmd-run.h"

#include <string.h>
#include "check.h"
#include "command.h"
#include "config.h"
#include "migrations.h"
#include "schema.h"
#include "error.h"
#include "log.h"
#include "metrics.h"
#include "notify.h"
#include "progress.h"
#include "reload.h"
#include "run.h"

/* What `ktally run --help` says before the options. */
static const char SUMMARY[] =
  "Reads log lines from a Kafka topic in micro-batches and keeps exact\n"
  "per-minute ERROR counts in MySQL (table error_log, or --table), exactly\n"
  "once: each batch's counts and offsets commit in one transaction. --by\n"
  "and --sum count per bucket and fields of the line, and add up numbers.\n\n"
  "Exit status: 0 stopped by SIGTERM/SIGINT or idle with --exit-when-idle,\n"
  "1 internal error, 2 usage or configuration error, 3 Kafka or MySQL\n"
  "refused us (unreachable at start-up, access denied, unknown topic or\n"
  "database), 4 data lost to retention (see --on-data-loss).\n\n"
  "SIGHUP reads the --config file and the password file again: {reloadable}\n"
  "change between batches; the rest is logged as needing a restart.";

/* A kind that writes rows keyed by job into NAME + a suffix (idempotent
 * mode's NAME_topic, under its view NAME) needs that name to be a table
 * name too. */
static gboolean
check_table_name (const KtConfig *config, GError **error)
{
  const KtKind *kind = kt_kind_lookup (config->job.kind, kt_mode_names[config->job.mode],
                                       NULL);

  return kind == NULL || kind->rows_suffix == NULL
         || kt_table_name_check ("--table", config->job.table, kind->rows_suffix, error);
}

/* "replay." names belong to `ktally replay` (cmd-replay.c): a live job
 * under one could move a replay's offsets, or a replay a live job's. */
static gboolean
check_job_name (const KtConfig *config, const KtOptionValues *values, GError **error)
{
  if (!g_str_has_prefix (config->job.name, KT_REPLAY_JOB_PREFIX))
    return TRUE;
  g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
               "--job: '%s': names starting with '%s' belong to `ktally replay`%s",
               config->job.name, KT_REPLAY_JOB_PREFIX,
               kt_option_given (values, "job")
               ? "" : " (the job is named after the topic: give --job)");
  return FALSE;
}

typedef gboolean (*Check) (KtConfig *config, const KtOptionValues *values, GError **error);

/* The checks of run's options, in the order they always ran. */
static gboolean
check_kafka (KtConfig *config, const KtOptionValues *values, GError **error)
{
  return kt_check_kafka (config, values, TRUE, error);
}

static gboolean
check_db (KtConfig *config, const KtOptionValues *values, GError **error)
{
  (void) values;
  return kt_check_db (config, error);
}

static gboolean
check_run (KtConfig *config, const KtOptionValues *values, GError **error)
{
  (void) values;
  return kt_check_run (config, error);
}

static gboolean
check_table (KtConfig *config, const KtOptionValues *values, GError **error)
{
  return kt_check_table (config, values, error) && check_table_name (config, error);
}

static gboolean
check_replay_name (KtConfig *config, const KtOptionValues *values, GError **error)
{
  return check_job_name (config, values, error);
}

/* @check, its error appended to @errors; TRUE when it passed. */
static gboolean
kept (Check check, KtConfig *config, const KtOptionValues *values, GPtrArray *errors)
{
  GError *local = NULL;

  if (check (config, values, &local))
    return TRUE;
  g_ptr_array_add (errors, local);
  return FALSE;
}

void
kt_command_run_check_every (KtConfig *config, const KtOptionValues *values, GPtrArray *errors)
{
  /* Independent of each other but for the job's name and table, which
   * the Kafka options settle (the name defaults to the topic). */
  gboolean kafka = kept (check_kafka, config, values, errors);

  kept (check_db, config, values, errors);
  kept (check_run, config, values, errors);
  if (kafka)
    {
      kept (check_table, config, values, errors);
      kept (check_replay_name, config, values, errors);
    }
}

gboolean
kt_command_run_check (KtConfig *config, const KtOptionValues *values, GError **error)
{
  g_autoptr(GPtrArray) errors = g_ptr_array_new_with_free_func ((GDestroyNotify) g_error_free);

  kt_command_run_check_every (config, values, errors);
  if (errors->len == 0)
    return TRUE;
  /* The first, as the checks come in the order they always did. */
  g_propagate_error (error, g_ptr_array_steal_index (errors, 0));
  return FALSE;
}



/* The job as a service: under systemd it tells readiness, its lag and
 * that its loop is alive (notify.h); SIGHUP reloads it (reload.h); a
 * backfill (--exit-when-idle) watched on a terminal shows one status line
 * of records read, lag, rate and time left over every topic of the job
 * instead of the batch lines. */
typedef struct
{
  const KtConfig     *config;
  const volatile int *stop;
  GHashTable         *topics;    /* topic -> Seen */
  gint64              ready_at;  /* monotonic: the first batch's start */
  gboolean            watched;
  KtReload           *reload;    /* SIGHUP's */
  KtNotify           *notify;    /* systemd's */
} Service;

typedef struct
{
  guint64 records;
  gint64  lag;
} Seen;

static void
service_ready (gpointer data)
{
  Service *s = data;
  g_autofree char *status = g_strdup_printf ("job %s: running", s->config->job.name);

  if (s->ready_at == 0)
    s->ready_at = g_get_monotonic_time ();
  /* Kafka, MySQL and the tables answered. */
  kt_notify_ready (s->notify, status);
}

/* @topic's lag and records from @states and @totals into @s; the job's
 * sums into *@records and *@lag. */
static void
service_add_up (Service *s, const char *topic, const GArray *states,
                const KtRangeStats *totals, guint64 *records, gint64 *lag)
{
  Seen *seen = g_hash_table_lookup (s->topics, topic);
  GHashTableIter iter;
  gpointer value;

  if (seen == NULL)
    {
      seen = g_new0 (Seen, 1);
      g_hash_table_insert (s->topics, g_strdup (topic), seen);
    }
  seen->records = totals->records;
  seen->lag = 0;
  for (guint i = 0; i < states->len; i++)
    {
      const KtPartitionState *p = &g_array_index (states, KtPartitionState, i);
      seen->lag += MAX (0, p->high - MAX (p->stored, p->low));
    }
  *records = 0;
  *lag = 0;
  g_hash_table_iter_init (&iter, s->topics);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      *records += ((Seen *) value)->records;
      *lag += ((Seen *) value)->lag;
    }
}

static void
service_progress (gpointer data, const char *topic, const GArray *states,
                  const KtRangeStats *totals)
{
  Service *s = data;
  g_autoptr(GString) line = g_string_new (NULL);
  guint64 records;
  gint64 lag;

  service_add_up (s, topic, states, totals, &records, &lag);
  g_string_printf (line, "job %s: ", s->config->job.name);
  if (kt_notify_enabled (s->notify))
    {
      g_autofree char *status = g_strdup_printf ("job %s: lag %" G_GINT64_FORMAT ", %"
                                                 G_GUINT64_FORMAT " records read",
                                                 s->config->job.name, lag, records);
      kt_notify_status (s->notify, status);
    }
  if (!s->watched)
    return;
  kt_progress_append (line, "records", (gint64) records, -1, lag, (gint64) records,
                      (double) (g_get_monotonic_time () - s->ready_at) / G_USEC_PER_SEC);
  kt_log_status (line->str);
}

/* The schema is being migrated at start (or another instance's migration
 * waited for): systemd's start timeout is pushed back meanwhile, from a
 * thread of notify's, since an ALTER TABLE blocks this one. */
static void
service_migrating (gboolean migrating, gpointer data)
{
  Service *s = data;

  if (!migrating)
    {
      kt_notify_extend_end (s->notify);
      return;
    }
  {
    g_autofree char *status = g_strdup_printf ("job %s: migrating the database's schema",
                                               s->config->job.name);
    kt_notify_status (s->notify, status);
  }
  kt_notify_extend_begin (s->notify, KT_NOTIFY_EXTEND_US);
}

/* Every turn of the loop: the watchdog fed, SIGTERM told, and SIGHUP's
 * settings handed over. */
static gboolean
service_turn (gpointer data, KtRunSettings *settings)
{
  Service *s = data;
  gboolean reloaded = FALSE;
  gboolean newer;

  kt_notify_alive (s->notify);
  if (*s->stop)
    kt_notify_stopping (s->notify);
  newer = kt_reload_poll (s->reload, settings, &reloaded);
  /* Every SIGHUP done is a reload for systemd, whether it changed anything. */
  if (reloaded)
    kt_notify_reloaded (s->notify);
  return newer;
}

/* What the run did, in one line (and its fields), as it ends well: @event
 * "done" (idle with --exit-when-idle) or "stopped" (SIGTERM or SIGINT: the
 * batch in flight committed whole or was abandoned whole). */
static void
report_end (const KtConfig *config, const char *event, const KtRangeStats *totals,
            gint64 started)
{
  g_autoptr(KtLogEvent) e = kt_log_event_new (event);
  double seconds = (double) (g_get_monotonic_time () - started) / G_USEC_PER_SEC;

  kt_log_event_string (e, "job", config->job.name);
  kt_log_event_int (e, "records", (gint64) totals->records);
  kt_log_event_int (e, "lines", (gint64) totals->lines);
  kt_log_event_int (e, "errors", (gint64) totals->errors);
  kt_log_event_int (e, "malformed", (gint64) totals->malformed);
  kt_log_event_double (e, "duration", seconds, 3);
  kt_log_event_emit (e, G_LOG_LEVEL_MESSAGE, "job %s: %s: %" G_GUINT64_FORMAT " record%s, %"
                     G_GUINT64_FORMAT " line%s, %" G_GUINT64_FORMAT " ERROR, %" G_GUINT64_FORMAT
                     " malformed in %.1f s%s", config->job.name, event, totals->records,
                     totals->records == 1 ? "" : "s", totals->lines,
                     totals->lines == 1 ? "" : "s", totals->errors, totals->malformed, seconds,
                     g_str_equal (event, "stopped")
                     ? " (the batch in flight committed whole or not at all)" : "");
}

static gboolean
handle (const KtConfig *config, volatile int *stop, GError **error)
{
  /* The registry outlives the run: a reload reports into it too. */
  g_autoptr(KtMetrics) metrics = kt_metrics_new (config->job.name, config->run.interval);
  g_autoptr(KtReload) reload = kt_reload_new (config);
  g_autoptr(KtNotify) notify = kt_notify_new ();
  Service service = { config, stop, NULL, 0, config->run.exit_when_idle && kt_log_interactive (),
                      reload, notify };
  /* Watched, the status line stands for the batch lines. */
  KtRunHooks hooks = { .ready = service_ready, .progress = service_progress,
                       .turn = service_turn, .migrating = service_migrating,
                       .data = &service, .quiet = service.watched, .metrics = metrics };
  gint64 started = g_get_monotonic_time ();
  KtRangeStats totals;
  gboolean ok;

  service.topics = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  kt_reload_set_metrics (reload, metrics);
  ok = kt_config_run (config, &hooks, stop, &totals, error);
  kt_notify_stopping (notify);
  kt_log_status_done ();
  if (ok && *stop)
    report_end (config, "stopped", &totals, started);
  else if (ok && config->run.exit_when_idle)
    report_end (config, "done", &totals, started);
  g_hash_table_unref (service.topics);
  return ok;
}

const KtCommand kt_command_run = {
  .name = "run",
  .summary = "read the topic in micro-batches, forever (or until idle)",
  .help = SUMMARY,
  .bit = KT_CMD_RUN,
  .check = kt_command_run_check,
  .handle = handle,
};
