/* run.c - the batch scheduler: plan -> read -> the job's kind -> commit.
 *
 * One batch is run_batch(): plan each partition's range from its stored
 * offset and the watermarks (plan.c), read exactly those ranges (source.c),
 * hand every record to the job's kind, and have the kind commit its output
 * with the offsets, fenced (kind.h). Everything else here is the service
 * around it: start-up, retries with backoff, the interval clock, signals,
 * several topics. The scheduler never asks which kind or mode it runs. The
 * only state carried from one batch to the next is in MySQL (or the
 * consumer group): each batch plans from the offsets it reads back, so a
 * crash, a restart or a second writer never needs special cases here. */
#include "run.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "error.h"
#include "http.h"
#include "identity.h"
#include "kind.h"
#include "metrics.h"
#include "offsets.h"
#include "batchlog.h"
#include "positions.h"
#include "retry.h"
#include "schema.h"
#include "source.h"

#define BACKOFF_MAX_S      30.0
#define METADATA_EVERY_US  (60 * G_USEC_PER_SEC)
#define KAFKA_TIMEOUT_MS   10000
#define STALL_MS           30000

typedef struct
{
  const KtConfig *config;
  const KtRunHooks *hooks;   /* NULL: none */
  const volatile int *stop;
  KtSource     *source;
  KtDb         *db;
  const KtJobKind *kind;
  gpointer      state;       /* the kind's, for this runner */
  KtJob         job;         /* what the kind works with */
  KtIdentity    identity;    /* what the job is: its strings are the config's, or static */
  char         *member_name; /* "job-pid@host", as ktally_batches holds it */
  gboolean      member;      /* `run --group`: a member of the consumer group */
  GArray       *partitions;  /* gint32, ascending */
  gboolean      fixed;       /* the hooks' check narrowed them: no refresh */
  gint64        metadata_at; /* monotonic time of the last partition list */
  /* Set when a COMMIT's answer was lost: the next batch reads the offsets
   * back and says whether it landed. */
  GArray       *unknown_commit;
  KtBatchLog    log;         /* its lines, metrics and totals */
} Runner;

/* What one batch read. */
typedef struct
{
  Runner       *runner;
  const GArray *ranges;
  guint         last_range;
  guint64       records;
} BatchReading;

/* Waits between batches. A group member keeps serving the group's
 * events meanwhile (a rebalance must not wait for the next batch). */
static void
rest (Runner *r, double seconds)
{
  gint64 until = g_get_monotonic_time () + (gint64) (seconds * G_USEC_PER_SEC);

  if (!r->member)
    {
      kt_nap (r->stop, seconds);
      return;
    }
  while (!*r->stop)
    {
      gint64 left = until - g_get_monotonic_time ();
      if (left <= 0)
        break;
      kt_source_serve (r->source, (int) MIN (left / 1000 + 1, 50));
    }
}

static void
on_record (gint32 partition, gint64 offset, const char *value, gsize len,
           gpointer user_data)
{
  BatchReading *b = user_data;

  b->records++;
  /* Records come in runs of one partition. */
  if (g_array_index (b->ranges, KtRange, b->last_range).partition != partition)
    for (guint i = 0; i < b->ranges->len; i++)
      if (g_array_index (b->ranges, KtRange, i).partition == partition)
        b->last_range = i;
  b->runner->kind->take (b->runner->state, b->last_range, partition, offset, value, len);
}

/* The partitions this instance reads: its group assignment, or the
 * topic's (only the --partitions ones), fresh from the metadata. */
static gboolean
refresh_partitions (Runner *r, int timeout_ms, GError **error)
{
  const GArray *only = r->config->only_partitions;
  g_autoptr(GArray) all = g_array_new (FALSE, FALSE, sizeof (gint32));
  gboolean assigned;

  if (r->member)
    {
      kt_source_owned (r->source, r->partitions, &assigned);
      return TRUE;
    }
  if (!kt_source_partitions (r->source, all, timeout_ms, error))
    return FALSE;
  r->metadata_at = g_get_monotonic_time ();
  g_array_set_size (r->partitions, 0);
  for (guint i = 0; i < all->len; i++)
    {
      gint32 p = g_array_index (all, gint32, i);
      gboolean wanted = only == NULL;

      for (guint j = 0; only != NULL && j < only->len; j++)
        wanted |= g_array_index (only, gint32, j) == p;
      if (wanted)
        g_array_append_val (r->partitions, p);
    }
  if (only != NULL && r->partitions->len < only->len)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "--partitions: topic %s has %u partitions (0-%d): some listed are not",
                   r->config->topic, all->len, (int) all->len - 1);
      return FALSE;
    }
  return TRUE;
}

/* --group: the source asks where newly assigned partitions start. */
static gboolean
group_start_offsets (KtPartitionState *s, guint n, gpointer user_data, GError **error)
{
  return kt_positions_assigned (&((Runner *) user_data)->job, s, n, error);
}

/* Commits the batch read through the kind; a deadlock or lock wait cost
 * only this transaction, rolled back: the same batch commits again (still
 * fenced) after a short pause, longer each time, with jitter so that the
 * writers drift apart. */
static gboolean
commit (Runner *r, const GArray *ranges, KtCommitResult *result, gint32 *fenced,
        GError **error)
{
  for (guint attempt = 1;; attempt++)
    {
      g_autoptr(GError) local = NULL;

      *fenced = -1;
      if (r->kind->commit (r->state, ranges, result, fenced, &local))
        return TRUE;
      if (*result == KT_COMMIT_UNKNOWN)
        {
          g_array_set_size (r->unknown_commit, 0);
          g_array_append_vals (r->unknown_commit, ranges->data, ranges->len);
          g_prefix_error (&local, "the answer to COMMIT was lost (the offsets will "
                          "tell whether it landed): ");
        }
      if (!g_error_matches (local, KT_ERROR, KT_ERROR_CONFLICT) || attempt == 6)
        {
          g_propagate_error (error, g_steal_pointer (&local));
          return FALSE;
        }
      r->log.retried++;
      kt_metrics_retry (r->log.metrics, "deadlock");
      g_message ("job %s: batch %" G_GUINT64_FORMAT ": %s; committing again (%u/5)",
                 r->config->job, r->log.batch_no, local->message, attempt);
      g_usleep ((gulong) g_random_int_range (5000, 20000) << attempt);
    }
}

/* One micro-batch. Returns TRUE when it ran to a known end (committed,
 * fenced, or nothing to do: *@idle), FALSE with the error otherwise. */
static gboolean
run_batch (Runner *r, gboolean *idle, GError **error)
{
  const KtConfig *config = r->config;
  g_autoptr(GArray) states = g_array_new (FALSE, TRUE, sizeof (KtPartitionState));
  g_autoptr(GArray) ranges = g_array_new (FALSE, TRUE, sizeof (KtRange));
  g_autoptr(GArray) losses = g_array_new (FALSE, TRUE, sizeof (KtDataLoss));
  BatchReading reading = { .runner = r, .ranges = ranges };
  KtCommitResult result = KT_COMMIT_DONE;
  gint32 fenced = -1;
  gint64 started = g_get_monotonic_time ();

  *idle = FALSE;

  /* Plan. Partitions added to the topic are picked up within a minute;
   * a group member plans what the group gave it. */
  if (!r->fixed && (r->member || started - r->metadata_at >= METADATA_EVERY_US)
      && !refresh_partitions (r, KAFKA_TIMEOUT_MS, error))
    return FALSE;
  if (!kt_positions_load (&r->job, r->partitions, states, error))
    return FALSE;
  if (r->unknown_commit->len > 0)
    kt_batch_log_unknown (&r->log, r->unknown_commit, states);
  if (!kt_plan_make ((const KtPartitionState *) (void *) states->data, states->len,
                     config->max_per_partition, config->on_data_loss, ranges,
                     losses, error))
    {
      g_prefix_error (error, "topic %s, ", config->topic);
      return FALSE;
    }
  if (ranges->len == 0)
    {
      *idle = TRUE;
      kt_batch_log_idle (&r->log, states, started);
      return TRUE;
    }

  /* The kind may move the ranges (idempotent mode skips what it counted);
   * then read, every record to the kind; then commit. A cap that stopped
   * the read early moved some ranges' ends back, maybe to their start:
   * those commit nothing. */
  if (!r->kind->plan (r->state, ranges, states, error)
      || !kt_source_read (r->source, ranges, on_record, &reading, r->stop, STALL_MS, error)
      || !commit (r, ranges, &result, &fenced, error))
    return FALSE;

  if (result == KT_COMMIT_FENCED)
    kt_batch_log_fenced (&r->log, ranges, reading.records, fenced, started);
  else
    kt_batch_log_committed (&r->log, r->kind, r->state, states, ranges, losses,
                            reading.records, fenced, started);
  if (r->hooks != NULL && r->hooks->progress != NULL)
    r->hooks->progress (r->hooks->data, states);
  return TRUE;
}

static gboolean
retry_startup (Runner *r, KtRetryStep step, const char *what, GError **error)
{
  return kt_retry (r->stop, r->config->startup_timeout, what, step, r, error);
}

static gboolean
startup_kafka (gpointer data, int timeout_ms, GError **error)
{
  Runner *r = data;

  /* Also in a group: an unknown topic is an error before anything else. */
  if (!kt_source_partitions (r->source, r->partitions, timeout_ms, error))
    return FALSE;
  r->metadata_at = g_get_monotonic_time ();
  if (r->member)
    {
      g_array_set_size (r->partitions, 0);  /* until the group assigns some */
      return kt_source_subscribe (r->source, error);
    }
  return refresh_partitions (r, timeout_ms, error);
}

static gboolean
startup_mysql (gpointer data, int timeout_ms, GError **error)
{
  Runner *r = data;

  (void) timeout_ms;
  return kt_db_connect (r->db, error);
}

/* The job's tables, checked, migrated or created. Before anything is
 * created or read: a job run with other settings, or a second job over a
 * topic this table already counts, is refused here. */
static gboolean
startup_tables (gpointer data, int timeout_ms, GError **error)
{
  Runner *r = data;
  GError *local = NULL;

  (void) timeout_ms;
  if (!kt_schema_ready (r->db, error))
    return FALSE;
  if (!kt_identity_check (kt_db_connection (r->db), kt_db_name (r->db), &r->identity, &local))
    return kt_db_failed (r->db, local, error);
  return r->kind->prepare (r->state, error);
}

/* The caller's check before the first batch (a replay's ranges). */
static gboolean
check_hook (gpointer data, int timeout_ms, GError **error)
{
  Runner *r = data;

  r->fixed = r->hooks->check (r->hooks->data, r->source, r->partitions, timeout_ms, error);
  return r->fixed;
}

static void
runner_clear (Runner *r)
{
  if (r->state != NULL)
    r->kind->close (g_steal_pointer (&r->state));
  g_clear_pointer (&r->source, kt_source_free);
  g_clear_pointer (&r->db, kt_db_free);
  g_clear_pointer (&r->member_name, g_free);
  g_clear_pointer (&r->partitions, g_array_unref);
  g_clear_pointer (&r->unknown_commit, g_array_unref);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Runner, runner_clear)

/* Creates the source, the database and the kind's state, and waits for
 * Kafka (the partition list) and MySQL, within --startup-timeout. Kafka
 * first: an unknown topic must not leave tables behind. Sets *@stopped when
 * a signal came meanwhile. */
static gboolean
runner_start (Runner *r, const KtConfig *config, const KtRunHooks *hooks,
              const volatile int *stop, KtMetrics *metrics, gboolean *stopped, GError **error)
{
  KtSourceConfig source_config = {
    .brokers = config->brokers,
    .topic = config->topic,
    .client_id = config->job,
    .properties = (const char *const *) config->kafka_properties,
    .max_batch_bytes = config->max_batch_bytes,
    .start_offsets = group_start_offsets,
    .start_offsets_data = r,
    .stop = stop,
  };
  g_autofree char *member = g_strdup_printf ("%s-%d@%s", config->job, (int) getpid (),
                                             g_get_host_name ());

  r->config = config;
  r->hooks = hooks;
  r->stop = stop;
  r->log = (KtBatchLog) { .job = config->job, .topic = config->topic, .metrics = metrics,
                          .quiet = hooks != NULL && hooks->quiet };
  r->member = config->group != NULL;
  source_config.group = config->group;
  r->partitions = g_array_new (FALSE, FALSE, sizeof (gint32));
  r->unknown_commit = g_array_new (FALSE, FALSE, sizeof (KtRange));
  *stopped = FALSE;
  r->kind = kt_kind_lookup (config->kind, kt_mode_names[config->mode], error);
  if (r->kind == NULL)
    return FALSE;
  r->source = kt_source_new (&source_config, error);
  if (r->source == NULL)
    return FALSE;
  r->db = kt_db_new (&config->db);
  r->member_name = kt_schema_member (member);
  kt_identity_describe (&r->identity, config, r->kind);
  r->job = (KtJob) {
    .config = config, .job = config->job, .topic = config->topic,
    .output = r->identity.output, .member = r->member_name, .db = r->db,
    .source = r->source, .identity = &r->identity,
  };
  r->state = r->kind->open (&r->job, error);
  if (r->state == NULL)
    return FALSE;

  if (!retry_startup (r, startup_kafka, "Kafka", error)
      || !retry_startup (r, startup_mysql, "MySQL", error))
    {
      if (!*stop)
        return FALSE;
      g_clear_error (error);  /* asked to stop while waiting: not a failure */
      *stopped = TRUE;
    }
  return TRUE;
}

/* The metrics' word for why a batch is tried again: a failure of the
 * database drops its connection (db.h); anything else was Kafka's. */
static const char *
retry_cause (Runner *r, const GError *error)
{
  if (g_error_matches (error, KT_ERROR, KT_ERROR_CONFLICT))
    return "deadlock";
  return kt_db_connection (r->db) == NULL ? "mysql" : "kafka";
}

/* What a failed batch leads to: FALSE with the error when retrying cannot
 * cure it; TRUE to go on, *@failure cleared when the run should just end
 * (asked to stop), after a pause when it was transient. */
static gboolean
after_failure (Runner *r, GError **failure, gint64 started, double *backoff, GError **error)
{
  GError *local = *failure;

  if (g_error_matches (local, KT_ERROR, KT_ERROR_CANCELLED))
    {
      g_clear_error (failure);
      return TRUE;
    }
  if (g_error_matches (local, KT_ERROR, KT_ERROR_REBALANCED)
      || g_error_matches (local, KT_ERROR, KT_ERROR_OVERTAKEN))
    {
      kt_metrics_retry (r->log.metrics, local->code == KT_ERROR_REBALANCED
                                        ? "rebalance" : "retention");
      /* Nothing was committed: plan again with what we own now. */
      g_message ("job %s: batch %" G_GUINT64_FORMAT ": %s", r->config->job,
                 r->log.batch_no, local->message);
      return TRUE;
    }
  if (!g_error_matches (local, KT_ERROR, KT_ERROR_TRANSIENT)
      && !g_error_matches (local, KT_ERROR, KT_ERROR_CONFLICT))
    {
      g_propagate_error (error, g_steal_pointer (failure));
      return FALSE;
    }
  /* Transient: the batch left nothing behind (or the offsets will say
   * what it left); plan it again after a pause. A failure also
   * invalidates the partition list. */
  kt_metrics_batch (r->log.metrics, &(KtBatchReport) {
    .result = KT_BATCH_FAILED, .error = local->message,
    .duration = (double) (g_get_monotonic_time () - started) / G_USEC_PER_SEC });
  kt_metrics_retry (r->log.metrics, retry_cause (r, local));
  *backoff = *backoff == 0 ? 1 : MIN (*backoff * 2, BACKOFF_MAX_S);
  g_warning ("job %s: batch %" G_GUINT64_FORMAT ": %s; retrying in %g s",
             r->config->job, r->log.batch_no, local->message, *backoff);
  r->metadata_at = 0;
  rest (r, *backoff);
  return TRUE;
}

/* From the tables on: prepares them, then runs batches until told to stop,
 * idle with --exit-when-idle, or a failure that retrying cannot cure. */
static gboolean
run_loop (Runner *r, GError **error)
{
  const KtConfig *config = r->config;
  double backoff = 0;
  gint64 compacted_at = 0;

  if (r->hooks != NULL && r->hooks->check != NULL
      && !retry_startup (r, check_hook, "Kafka", error))
    return FALSE;
  /* MariaDB restarting meanwhile is waited for, as at start-up. */
  if (!retry_startup (r, startup_tables, "MySQL tables", error))
    return FALSE;
  if (r->hooks != NULL && r->hooks->ready != NULL)
    r->hooks->ready (r->hooks->data);
  g_message ("job %s: reading %s (%u partitions) into %s.%s, %s %s%s, every %g s",
             config->job, config->topic, r->partitions->len, kt_db_name (r->db),
             r->identity.output, r->kind->kind, r->kind->mode,
             config->offsets == KT_OFFSETS_KAFKA ? " with offsets in Kafka" : "",
             config->interval);

  while (!*r->stop)
    {
      g_autoptr(GError) local = NULL;
      gint64 started = g_get_monotonic_time ();
      gboolean idle = FALSE;

      r->log.batch_no++;
      if (!run_batch (r, &idle, &local))
        {
          if (!after_failure (r, &local, started, &backoff, error))
            return FALSE;
          if (*r->stop || local == NULL)
            break;
          continue;
        }
      backoff = 0;
      if (config->audit_keep > 0
          && g_get_monotonic_time () - compacted_at >= METADATA_EVERY_US)
        {
          g_autoptr(GError) compact_error = NULL;
          if (!kt_offsets_compact (r->db, config->job, config->topic, config->audit_keep,
                                   &compact_error))
            g_warning ("job %s: %s; trying again in a minute", config->job,
                       compact_error->message);
          compacted_at = g_get_monotonic_time ();
        }
      if (idle && config->exit_when_idle && (!r->member || r->partitions->len > 0))
        {
          if (!r->log.quiet)
            g_message ("job %s: idle: every partition is committed up to its high "
                       "watermark", config->job);
          break;
        }
      if (config->interval == 0)
        {
          /* Back to back, but an idle source is not polled in a hot loop. */
          if (idle)
            rest (r, 0.1);
          continue;
        }
      rest (r, config->interval - (double) (g_get_monotonic_time () - started)
                                     / G_USEC_PER_SEC);
    }
  return TRUE;
}

typedef struct
{
  Runner    runner;
  KtConfig  config;   /* a shallow copy: its own topic, the rest shared */
  GThread  *thread;
  GError   *error;
  gboolean  ok;
  volatile int *stop; /* the job's: set when this topic fails */
} TopicRun;

static gpointer
topic_thread (gpointer data)
{
  TopicRun *t = data;

  t->ok = run_loop (&t->runner, &t->error);
  /* One topic that cannot go on stops the job, at once: the others must
   * not run on as if it were whole (a silent, partial job). */
  if (!t->ok)
    *t->stop = 1;
  return NULL;
}

/* --topic a,b: one runner per topic, each its own batches and transactions
 * under the same job (offsets per topic and partition), on a thread each.
 * All of them reach Kafka and MySQL before any creates a table, so an
 * unknown topic leaves nothing behind. */
static gboolean
run_topics (const KtConfig *config, volatile int *stop, KtMetrics *metrics,
            KtRunTotals *totals, GError **error)
{
  guint n = g_strv_length (config->topics);
  g_autofree TopicRun *runs = g_new0 (TopicRun, n);
  gboolean ok = TRUE, stopped = FALSE;
  guint started = 0;

  for (guint i = 0; i < n && ok; i++)
    {
      gboolean s;

      runs[i].config = *config;
      runs[i].config.topic = config->topics[i];
      runs[i].stop = stop;
      ok = runner_start (&runs[i].runner, &runs[i].config, NULL, stop, metrics, &s, error);
      stopped |= s;
      started = i + 1;
    }
  if (ok && !stopped)
    {
      for (guint i = 0; i < n; i++)
        runs[i].thread = g_thread_new ("ktally-topic", topic_thread, &runs[i]);
      for (guint i = 0; i < n; i++)
        {
          g_thread_join (runs[i].thread);
          if (!runs[i].ok && ok)
            {
              g_propagate_prefixed_error (error, g_steal_pointer (&runs[i].error),
                                          "topic %s: ", config->topics[i]);
              ok = FALSE;
            }
          g_clear_error (&runs[i].error);
          totals->records += runs[i].runner.log.totals.records;
          totals->lines += runs[i].runner.log.totals.lines;
          totals->errors += runs[i].runner.log.totals.errors;
          totals->malformed += runs[i].runner.log.totals.malformed;
        }
    }
  for (guint i = 0; i < started; i++)
    runner_clear (&runs[i].runner);
  return ok;
}

gboolean
kt_run (const KtConfig *config, const KtRunHooks *hooks, volatile int *stop,
        KtRunTotals *totals, GError **error)
{
  g_auto(Runner) r = { 0 };
  /* Declared in this order so that the server stops before the registry
   * it reads is freed. */
  g_autoptr(KtMetrics) metrics = kt_metrics_new (config->job, config->interval);
  g_autoptr(KtHttp) http = NULL;
  KtRunTotals ignored;
  gboolean stopped, ok;

  if (totals == NULL)
    totals = &ignored;
  *totals = (KtRunTotals) { 0 };
  /* First, so that a bad --http fails before anything is touched, and
   * /healthz answers (503) while Kafka and MySQL are still awaited. */
  if (config->http != NULL)
    {
      KtHttpChart chart = { config->table, (const char *const *) config->dimensions,
                            config->bucket };

      http = kt_http_start (config->http, metrics, &config->db, &chart, error);
      if (http == NULL)
        return FALSE;
      g_message ("job %s: serving /metrics, /healthz and / on port %u of %s", config->job,
                 kt_http_port (http), config->http);
    }
  if (config->topics != NULL && g_strv_length (config->topics) > 1)
    return run_topics (config, stop, metrics, totals, error);
  if (!runner_start (&r, config, hooks, stop, metrics, &stopped, error))
    return FALSE;
  if (stopped)
    return TRUE;
  ok = run_loop (&r, error);
  *totals = r.log.totals;
  return ok;
}
