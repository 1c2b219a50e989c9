/* run.c - the batch scheduler: plan -> read -> the job's kind -> commit.
 *
 * One batch is run_batch(): for every topic of the job, plan each
 * partition's range from its stored offset and the watermarks (plan.c)
 * and read exactly those ranges (source.c), handing every record to the
 * job's kind; then one transaction in which the kind writes every topic's
 * output with its offsets, fenced (kind.h). Everything else here is the
 * service around it: start-up, retries with backoff, the interval clock,
 * signals. The scheduler never asks which kind or mode it runs. The only
 * state carried from one batch to the next is in MySQL (or the consumer
 * group): each batch plans from the offsets it reads back, so a crash, a
 * restart or a second writer never needs special cases here. */
#include "run.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "error.h"
#include "feed.h"
#include "http.h"
#include "identity.h"
#include "kind.h"
#include "log.h"
#include "metrics.h"
#include "migrations.h"
#include "offsets.h"
#include "positions.h"
#include "retry.h"
#include "schema.h"
#include "source.h"

#define BACKOFF_MAX_S      30.0
#define COMPACT_EVERY_US   (60 * G_USEC_PER_SEC)
#define KAFKA_TIMEOUT_MS   10000
#define STALL_MS           30000
/* --group: a member with no partition says why it waits after this long,
 * then again at this pace (a standby member must not flood the log). */
#define WAITING_FIRST_US   (5 * G_USEC_PER_SEC)
#define WAITING_EVERY_US   (30 * G_USEC_PER_SEC)

typedef struct
{
  const KtRunJob  *job;
  const KtRunHooks *hooks;   /* NULL: none */
  const volatile int *stop;
  KtDb            *db;       /* one connection: one transaction for every topic */
  const KtJobKind *kind;
  char            *member_name; /* "job-pid@host", as ktally_batches holds it */
  gboolean         member;   /* `run --group`: a member of the consumer group */
  gboolean         fixed;    /* the hooks' check narrowed the partitions: no refresh */
  GPtrArray       *feeds;    /* KtFeed, one per topic */
  KtMetrics       *metrics;  /* the run's: /livez's clock */
  guint            checked_on; /* the connection (kt_db_connections()) the tables
                              * were checked on */
  KtRunSettings    settings; /* what a reload may change (run.h) */
  /* --group: since when no topic of the job has a partition assigned (0:
   * some has), and when the wait was last logged (0: not yet). */
  gint64           waiting_since;
  gint64           waiting_said;
} Runner;

void
kt_run_settings_init (KtRunSettings *out, const KtRunOptions *options, const KtDbConfig *db)
{
  *out = (KtRunSettings) {
    .interval = options->interval,
    .max_per_partition = options->max_per_partition,
    .max_batch_bytes = options->max_batch_bytes,
  };
  kt_db_config_copy (&out->db, db);
}

void
kt_run_settings_clear (KtRunSettings *settings)
{
  kt_db_config_clear (&settings->db);
}

/* A turn of the loop: it is alive (/livez), and the caller's newer
 * settings, if any (a reload), apply from the next batch on. TRUE when
 * there were some. */
static gboolean
turn (Runner *r)
{
  kt_metrics_alive (r->metrics);
  if (r->hooks == NULL || r->hooks->turn == NULL
      || !r->hooks->turn (r->hooks->data, &r->settings))
    return FALSE;
  for (guint i = 0; i < r->feeds->len; i++)
    kt_source_set_max_batch_bytes (((KtFeed *) r->feeds->pdata[i])->source,
                                   r->settings.max_batch_bytes);
  kt_db_set_credentials (r->db, &r->settings.db);
  kt_metrics_set_interval (r->metrics, r->settings.interval);
  return TRUE;
}

/* --group: one group-waiting record about a member that holds no
 * partition, and why: what the group answered (no assignment at all yet:
 * the member cannot join or the group is still rebalancing; an empty one:
 * more members than partitions), how many members it has and how many
 * partitions each topic has, where the brokers say. */
static void
log_group_waiting (Runner *r, gint64 now)
{
  const char *group = r->job->spec->group;
  KtFeed *first = r->feeds->pdata[0];
  g_autoptr(KtLogEvent) e = kt_log_event_new ("group-waiting");
  g_autoptr(GString) topics = g_string_new (NULL);
  g_autoptr(GString) counts = g_string_new (NULL);
  g_autoptr(GString) why = g_string_new (NULL);
  g_autoptr(GArray) parts = g_array_new (FALSE, FALSE, sizeof (gint32));
  g_autoptr(GError) no_members = NULL;
  g_autofree char *state = NULL;
  gboolean assigned = FALSE;
  guint members = 0;
  gint64 partitions = 0;
  double waited = (double) (now - r->waiting_since) / G_USEC_PER_SEC;

  for (guint i = 0; i < r->feeds->len; i++)
    {
      KtFeed *f = r->feeds->pdata[i];
      g_autoptr(GError) ignored = NULL;
      gboolean once;

      kt_source_owned (f->source, parts, &once);
      assigned |= once;
      g_string_append_printf (topics, "%s%s", i ? "," : "", f->job.topic);
      /* Asked now: partitions added since start-up count. */
      if (partitions >= 0 && kt_source_partitions (f->source, parts, 2000, &ignored))
        {
          partitions += parts->len;
          g_string_append_printf (counts, "%s%s has %u partition%s", i ? ", " : "",
                                  f->job.topic, parts->len, parts->len == 1 ? "" : "s");
        }
      else
        partitions = -1;
    }
  if (!kt_source_group_members (first->source, group, &members, &state, 2000, &no_members))
    members = 0;

  kt_log_event_string (e, "job", r->job->spec->name);
  kt_log_event_string (e, "group", group);
  kt_log_event_string (e, "topic", topics->str);
  kt_log_event_double (e, "waited", waited, 1);
  kt_log_event_string (e, "reason", assigned ? "none-assigned" : "no-assignment-yet");
  if (no_members == NULL)
    {
      kt_log_event_int (e, "members", members);
      kt_log_event_string (e, "group_state", state);
    }
  if (partitions >= 0)
    kt_log_event_int (e, "partitions", partitions);

  g_string_append (why, assigned
                   ? "the group assigned no partition to this member"
                   : "no assignment has come from the group yet (joining or rebalancing)");
  if (no_members == NULL)
    g_string_append_printf (why, "; the group is %s with %u member%s", state, members,
                            members == 1 ? "" : "s");
  else
    g_string_append_printf (why, "; members unknown (%s)", no_members->message);
  if (partitions >= 0)
    g_string_append_printf (why, "; %s", counts->str);
  if (assigned && no_members == NULL && partitions >= 0 && members > partitions)
    g_string_append (why, ": a member beyond the partition count waits until another leaves");
  /* A standby member is by design; a member that never got any answer
   * from the group may be stuck (a coordinator it cannot reach). */
  kt_log_event_emit (e, assigned ? G_LOG_LEVEL_MESSAGE : G_LOG_LEVEL_WARNING,
                     "job %s: waiting in group %s for %.0f s with no partition of %s: %s",
                     r->job->spec->name, group, waited, topics->str, why->str);
}

/* --group: whether the member holds a partition now; after
 * WAITING_FIRST_US without one, says so every WAITING_EVERY_US. */
static void
group_waiting (Runner *r)
{
  g_autoptr(GArray) parts = NULL;
  gint64 now;

  if (!r->member)
    return;
  parts = g_array_new (FALSE, FALSE, sizeof (gint32));
  for (guint i = 0; i < r->feeds->len; i++)
    {
      gboolean once;

      kt_source_owned (((KtFeed *) r->feeds->pdata[i])->source, parts, &once);
      if (parts->len > 0)
        {
          r->waiting_since = 0;
          r->waiting_said = 0;
          return;
        }
    }
  now = g_get_monotonic_time ();
  if (r->waiting_since == 0)
    r->waiting_since = now;
  if (now - r->waiting_since < WAITING_FIRST_US
      || (r->waiting_said != 0 && now - r->waiting_said < WAITING_EVERY_US))
    return;
  log_group_waiting (r, now);
  r->waiting_said = g_get_monotonic_time ();
}

/* Waits between batches, reading ahead meanwhile: records that arrive
 * are pulled into each reader's carry (bounded like the pre-fetch queue),
 * so the next batch finds them in memory instead of waiting on a fetcher
 * that a full queue stopped (freshness), and a group member serves the
 * group's events (a rebalance must not wait for the next batch). Each
 * turn is one (/livez, a reload); with @interval the wait is the rest of
 * the interval, whose end a reload of --interval moves. */
static void
rest (Runner *r, double seconds, gboolean interval)
{
  gint64 until = g_get_monotonic_time () + (gint64) (seconds * G_USEC_PER_SEC);

  while (!*r->stop)
    {
      double was = r->settings.interval;
      gint64 left;

      if (turn (r) && interval)
        until += (gint64) ((r->settings.interval - was) * G_USEC_PER_SEC);
      group_waiting (r);
      left = until - g_get_monotonic_time ();
      if (left <= 0)
        break;
      for (guint i = 0; i < r->feeds->len; i++)
        {
          KtSource *source = ((KtFeed *) r->feeds->pdata[i])->source;

          kt_source_serve (source, (int) MIN (left / 1000 + 1, 50 / r->feeds->len + 1));
          /* Refused for good (an ACL): the next plan says so, now. */
          if (kt_source_is_refused (source))
            return;
        }
    }
}

/* One transaction: every topic's output and offsets, written by the kind;
 * rolled back whole when one partition was fenced (*@fenced_feed: its
 * topic, *@fenced its partition). */
static gboolean
commit_once (Runner *r, KtCommitResult *result, KtFeed **fenced_feed, gint32 *fenced,
             GError **error)
{
  KtFeed *first = r->feeds->pdata[0];

  *result = KT_COMMIT_FAILED;
  for (guint i = 0; i < r->feeds->len; i++)
    ((KtFeed *) r->feeds->pdata[i])->job.audit_id = 0;
  /* The identity is the job's: one claim covers every topic. */
  if (!kt_kind_context_begin (&first->job, error))
    return FALSE;
  for (guint i = 0; i < r->feeds->len; i++)
    {
      KtFeed *f = r->feeds->pdata[i];

      if (f->ranges->len == 0)
        continue;
      if (!r->kind->write (f->state, f->ranges, fenced, error))
        {
          kt_db_abort (r->db);
          return FALSE;
        }
      if (*fenced >= 0)
        {
          kt_db_abort (r->db);
          *fenced_feed = f;
          *result = KT_COMMIT_FENCED;
          return TRUE;
        }
    }
  if (!kt_kind_context_finish (&first->job, result, error))
    return FALSE;
  for (guint i = 0; i < r->feeds->len; i++)
    {
      ((KtFeed *) r->feeds->pdata[i])->job.claimed = TRUE;
      ((KtFeed *) r->feeds->pdata[i])->job.claimed_on = first->job.claimed_on;
    }
  return TRUE;
}

/* Commits the batch read; a deadlock or lock wait cost only this
 * transaction, rolled back: the same batch commits again (still fenced)
 * after a short pause, longer each time, with jitter so that the writers
 * drift apart. */
static gboolean
commit (Runner *r, KtCommitResult *result, KtFeed **fenced_feed, gint32 *fenced,
        GError **error)
{
  KtFeed *first = r->feeds->pdata[0];

  for (guint attempt = 1;; attempt++)
    {
      g_autoptr(GError) local = NULL;

      *fenced = -1;
      if (commit_once (r, result, fenced_feed, fenced, &local))
        return TRUE;
      if (*result == KT_COMMIT_UNKNOWN)
        {
          for (guint i = 0; i < r->feeds->len; i++)
            {
              KtFeed *f = r->feeds->pdata[i];
              g_array_set_size (f->unknown_commit, 0);
              g_array_append_vals (f->unknown_commit, f->ranges->data, f->ranges->len);
            }
          g_prefix_error (&local, "the answer to COMMIT was lost (the offsets will "
                          "tell whether it landed): ");
          first->log.lost_commit = first->log.batch_no;
        }
      if (!g_error_matches (local, KT_ERROR, KT_ERROR_CONFLICT) || attempt == 6)
        {
          g_propagate_error (error, g_steal_pointer (&local));
          return FALSE;
        }
      kt_batch_log_commit_again (&first->log, local->message, attempt, 5);
      g_usleep ((gulong) g_random_int_range (5000, 20000) << attempt);
    }
}

static gboolean startup_tables (gpointer data, int timeout_ms, GError **error);

/* Connected, and on a new connection the tables checked (created) again
 * as at start: it may be to another server of the list, a replica that
 * a failover promoted without the last transactions of the old primary,
 * which can hold CREATE TABLEs too. /metrics names the server. */
static gboolean
connected (Runner *r, GError **error)
{
  if (!kt_db_connect (r->db, error))
    return FALSE;
  kt_metrics_set_mysql_server (r->metrics, kt_db_host (r->db));
  if (kt_db_connections (r->db) == r->checked_on)
    return TRUE;
  if (!startup_tables (r, 0, error))
    return FALSE;
  r->checked_on = kt_db_connections (r->db);
  return TRUE;
}

/* One micro-batch. Returns TRUE when it ran to a known end (committed,
 * fenced, or nothing to do: *@idle), FALSE with the error otherwise. */
static gboolean
run_batch (Runner *r, gboolean *idle, GError **error)
{
  KtCommitResult result = KT_COMMIT_DONE;
  KtFeed *fenced_feed = NULL;
  gint32 fenced = -1;
  gint64 started = g_get_monotonic_time ();

  if (!connected (r, error))
    return FALSE;

  /* Plan every topic, then read every topic's ranges, every record to the
   * kind. A cap that stopped a read early moved some ranges' ends back,
   * maybe to their start: those commit nothing. */
  *idle = TRUE;
  for (guint i = 0; i < r->feeds->len; i++)
    {
      KtFeed *f = r->feeds->pdata[i];
      /* Partitions added to a topic are picked up at this pace. */
      gboolean fresh = !r->fixed
                       && started - f->metadata_at >= kt_source_metadata_every_us (f->source);

      if (!kt_feed_plan (f, fresh, r->settings.max_per_partition, r->job->run->on_data_loss,
                         error))
        return FALSE;
      *idle &= f->ranges->len == 0;
    }
  for (guint i = 0; i < r->feeds->len; i++)
    if (!kt_feed_read (r->feeds->pdata[i], r->stop, STALL_MS, error))
      return FALSE;
  if (!*idle && !commit (r, &result, &fenced_feed, &fenced, error))
    return FALSE;

  /* After the output: what the kind stores next (idempotent mode: the
   * offsets); then each topic's line. */
  for (guint i = 0; i < r->feeds->len; i++)
    {
      KtFeed *f = r->feeds->pdata[i];
      gint32 moved = -1;

      if (f->ranges->len == 0)
        kt_batch_log_idle (&f->log, f->states, started);
      else if (result == KT_COMMIT_FENCED)
        {
          /* Still where it was planned from: whoever moved it is said at
           * the next plan (a reset is news, another writer is not). */
          if (f == fenced_feed)
            kt_batch_log_fenced (&f->log, f->ranges, f->records, fenced, started);
        }
      else
        {
          if (r->kind->after != NULL
              && !r->kind->after (f->state, f->ranges, &moved, error))
            return FALSE;
          kt_batch_log_committed (&f->log, r->kind, f->state, f->states, f->ranges,
                                  f->losses, f->records, kt_source_last_bytes (f->source),
                                  moved, f->job.audit_id, started);
          kt_plan_advance (f->states, f->ranges);
        }
      kt_feed_settled (f);
      if (r->hooks != NULL && r->hooks->progress != NULL && !*idle)
        r->hooks->progress (r->hooks->data, f->job.topic, f->states, &f->log.totals);
    }
  return TRUE;
}

static gboolean
retry_startup (Runner *r, KtRetryStep step, const char *what, GError **error)
{
  return kt_retry (r->stop, r->job->run->startup_timeout, what, step, r, error);
}

/* Every topic is known (an unknown one is an error before anything else,
 * also in a group), and its partitions listed or subscribed to. */
static gboolean
startup_kafka (gpointer data, int timeout_ms, GError **error)
{
  Runner *r = data;

  kt_metrics_alive (r->metrics);  /* each try of start-up: alive while it waits */
  for (guint i = 0; i < r->feeds->len; i++)
    if (!kt_feed_start (r->feeds->pdata[i], timeout_ms, error))
      return FALSE;
  return TRUE;
}

static gboolean
startup_mysql (gpointer data, int timeout_ms, GError **error)
{
  Runner *r = data;

  (void) timeout_ms;
  kt_metrics_alive (r->metrics);
  return kt_db_connect (r->db, error);
}

/* The job's tables, checked, migrated or created. Before anything is
 * created or read: a job run with other settings, or a second job over a
 * topic this table already counts, is refused here. */
static gboolean
startup_tables (gpointer data, int timeout_ms, GError **error)
{
  Runner *r = data;

  (void) timeout_ms;
  kt_metrics_alive (r->metrics);
  if (!kt_migrations_ready (r->db, r->hooks != NULL ? r->hooks->migrating : NULL,
                           r->hooks != NULL ? r->hooks->data : NULL, error))
    return FALSE;
  kt_metrics_schema_version (r->metrics, KT_SCHEMA_VERSION);
  if (!kt_identity_check (r->db, r->job->identity, error))
    return FALSE;
  for (guint i = 0; i < r->feeds->len; i++)
    if (!r->kind->prepare (((KtFeed *) r->feeds->pdata[i])->state, error))
      return FALSE;
  return TRUE;
}

/* The caller's check before the first batch (a replay's ranges: one topic). */
static gboolean
check_hook (gpointer data, int timeout_ms, GError **error)
{
  Runner *r = data;
  KtFeed *f = r->feeds->pdata[0];

  r->fixed = r->hooks->check (r->hooks->data, f->source, f->partitions, timeout_ms, error);
  return r->fixed;
}

static void
runner_clear (Runner *r)
{
  /* The kinds' states first: they may hold statements of the connection. */
  g_clear_pointer (&r->feeds, g_ptr_array_unref);
  g_clear_pointer (&r->db, kt_db_free);
  g_clear_pointer (&r->member_name, g_free);
  kt_run_settings_clear (&r->settings);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Runner, runner_clear)

/* Creates the database, the kind, and a reader per topic, and waits for
 * Kafka (every topic's partition list) and MySQL, within
 * --startup-timeout. Kafka first: an unknown topic must not leave tables
 * behind. Sets *@stopped when a signal came meanwhile. */
static gboolean
runner_start (Runner *r, const KtRunJob *job, const KtRunHooks *hooks,
              const volatile int *stop, KtMetrics *metrics, gboolean *stopped, GError **error)
{
  const KtJobSpec *spec = job->spec;
  g_autofree char *member = g_strdup_printf ("%s-%d@%s", spec->name, (int) getpid (),
                                             g_get_host_name ());

  r->job = job;
  r->hooks = hooks;
  r->stop = stop;
  r->metrics = metrics;
  kt_run_settings_init (&r->settings, job->run, job->db);
  r->member = spec->group != NULL;
  r->feeds = g_ptr_array_new_with_free_func ((GDestroyNotify) kt_feed_free);
  *stopped = FALSE;
  r->kind = kt_kind_lookup (spec->kind, kt_mode_names[spec->mode], error);
  if (r->kind == NULL)
    return FALSE;
  r->db = kt_db_new (job->db);
  r->member_name = kt_schema_member (member);
  for (guint i = 0; spec->topics[i] != NULL; i++)
    {
      KtFeed *f = kt_feed_new (job, spec->topics[i], r->kind, r->db, r->member_name, metrics,
                               hooks != NULL && hooks->quiet, stop, error);
      if (f == NULL)
        return FALSE;
      g_ptr_array_add (r->feeds, f);
    }

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
  return kt_db_connected (r->db) ? "kafka" : "mysql";
}

/* What a failed batch leads to: FALSE with the error when retrying cannot
 * cure it; TRUE to go on, *@failure cleared when the run should just end
 * (asked to stop), after a pause when it was transient. */
static gboolean
after_failure (Runner *r, GError **failure, gint64 started, double *backoff, GError **error)
{
  GError *local = *failure;
  KtBatchLog *log = &((KtFeed *) r->feeds->pdata[0])->log;

  if (g_error_matches (local, KT_ERROR, KT_ERROR_CANCELLED))
    {
      g_clear_error (failure);
      return TRUE;
    }
  if (g_error_matches (local, KT_ERROR, KT_ERROR_REBALANCED)
      || g_error_matches (local, KT_ERROR, KT_ERROR_OVERTAKEN))
    {
      /* Nothing was committed: plan again with what we own now. */
      kt_batch_log_abandoned (log, local->code == KT_ERROR_REBALANCED
                                   ? "rebalance" : "retention", local->message);
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
   * invalidates the partition lists. */
  *backoff = *backoff == 0 ? 1 : MIN (*backoff * 2, BACKOFF_MAX_S);
  kt_batch_log_failed (log, retry_cause (r, local), local->message, *backoff, started);
  for (guint i = 0; i < r->feeds->len; i++)
    ((KtFeed *) r->feeds->pdata[i])->metadata_at = 0;
  rest (r, *backoff, FALSE);
  return TRUE;
}

/* Between batches: --audit-keep folds old audit rows, once a minute. */
static void
compact (Runner *r, gint64 *compacted_at)
{
  if (r->job->run->audit_keep <= 0
      || g_get_monotonic_time () - *compacted_at < COMPACT_EVERY_US)
    return;
  for (guint i = 0; i < r->feeds->len; i++)
    {
      g_autoptr(GError) error = NULL;
      const char *topic = ((KtFeed *) r->feeds->pdata[i])->job.topic;

      if (!kt_offsets_compact (r->db, r->job->spec->name, topic,
                               (gint64) r->job->run->audit_keep, &error))
        g_warning ("job %s: %s; trying again in a minute", r->job->spec->name, error->message);
    }
  *compacted_at = g_get_monotonic_time ();
}

/* Idle with --exit-when-idle (a group member only once it owns some). */
static gboolean
done_when_idle (Runner *r)
{
  guint owned = 0;

  for (guint i = 0; i < r->feeds->len; i++)
    owned += ((KtFeed *) r->feeds->pdata[i])->partitions->len;
  return r->job->run->exit_when_idle && (!r->member || owned > 0);
}

/* From the tables on: prepares them, then runs batches until told to stop,
 * idle with --exit-when-idle, or a failure that retrying cannot cure. */
static gboolean
run_loop (Runner *r, GError **error)
{
  const KtJobSpec *spec = r->job->spec;
  g_autofree char *topics = NULL;
  double backoff = 0;
  gint64 compacted_at = 0;
  guint partitions = 0;

  if (r->hooks != NULL && r->hooks->check != NULL
      && !retry_startup (r, check_hook, "Kafka", error))
    return FALSE;
  /* MariaDB restarting meanwhile is waited for, as at start-up. */
  if (!retry_startup (r, startup_tables, "MySQL tables", error))
    return FALSE;
  r->checked_on = kt_db_connections (r->db);
  kt_metrics_set_mysql_server (r->metrics, kt_db_host (r->db));
  if (r->hooks != NULL && r->hooks->ready != NULL)
    r->hooks->ready (r->hooks->data);
  for (guint i = 0; i < r->feeds->len; i++)
    partitions += ((KtFeed *) r->feeds->pdata[i])->partitions->len;
  topics = g_strjoinv (",", spec->topics);
  kt_batch_log_start (&((KtFeed *) r->feeds->pdata[0])->log, topics, partitions,
                      kt_db_name (r->db), kt_db_transport (r->db),
                      r->job->identity->output, r->kind->kind,
                      r->kind->mode, spec->offsets == KT_OFFSETS_KAFKA, r->settings.interval);

  while (!*r->stop)
    {
      g_autoptr(GError) local = NULL;
      gint64 started = g_get_monotonic_time ();
      gboolean idle = FALSE;

      turn (r);
      for (guint i = 0; i < r->feeds->len; i++)
        ((KtFeed *) r->feeds->pdata[i])->log.batch_no++;
      if (!run_batch (r, &idle, &local))
        {
          if (!after_failure (r, &local, started, &backoff, error))
            return FALSE;
          if (*r->stop || local == NULL)
            break;
          continue;
        }
      backoff = 0;
      compact (r, &compacted_at);
      if (idle && done_when_idle (r))
        {
          if (r->hooks == NULL || !r->hooks->quiet)
            g_message ("job %s: idle: every partition is committed up to its high "
                       "watermark", spec->name);
          break;
        }
      if (r->settings.interval == 0)
        {
          /* Back to back, but an idle source is not polled in a hot loop. */
          if (idle)
            rest (r, 0.1, FALSE);
          continue;
        }
      rest (r, r->settings.interval - (double) (g_get_monotonic_time () - started)
                                          / G_USEC_PER_SEC, TRUE);
    }
  return TRUE;
}

gboolean
kt_run (const KtRunJob *job, const KtRunHooks *hooks, volatile int *stop,
        KtRunTotals *totals, GError **error)
{
  g_auto(Runner) r = { 0 };
  /* Declared in this order so that the server stops before the registry
   * it reads is freed. */
  g_autoptr(KtMetrics) own = hooks != NULL && hooks->metrics != NULL
                             ? NULL : kt_metrics_new (job->spec->name, job->run->interval);
  KtMetrics *metrics = own != NULL ? own : hooks->metrics;
  g_autoptr(KtHttp) http = NULL;
  KtRunTotals ignored;
  gboolean stopped, ok;

  kt_metrics_set_build_info (metrics, PACKAGE_VERSION, kt_source_library_version (),
                             kt_db_client_version ());
  if (totals == NULL)
    totals = &ignored;
  *totals = (KtRunTotals) { 0 };
  /* First, so that a bad --http fails before anything is touched, and
   * /healthz answers (503) while Kafka and MySQL are still awaited. */
  if (job->health->http != NULL)
    {
      g_autoptr(KtLogEvent) e = kt_log_event_new ("http");

      http = kt_http_start (job->health->http, metrics, job->db, job->chart, error);
      if (http == NULL)
        return FALSE;
      /* The port a machine needs (--http 127.0.0.1:0 takes a free one). */
      kt_log_event_string (e, "job", job->spec->name);
      kt_log_event_int (e, "port", kt_http_port (http));
      kt_log_event_emit (e, G_LOG_LEVEL_MESSAGE, "job %s: serving /metrics, /livez, /readyz, "
                         "/healthz and / on port %u of %s", job->spec->name,
                         kt_http_port (http), job->health->http);
    }
  kt_metrics_set_health (metrics, job->health->max_lag, job->health->max_commit_age,
                         job->health->max_stall);
  if (!runner_start (&r, job, hooks, stop, metrics, &stopped, error))
    return FALSE;
  if (stopped)
    return TRUE;
  ok = run_loop (&r, error);
  for (guint i = 0; i < r.feeds->len; i++)
    {
      const KtRunTotals *t = &((KtFeed *) r.feeds->pdata[i])->log.totals;
      totals->records += t->records;
      totals->lines += t->lines;
      totals->errors += t->errors;
      totals->malformed += t->malformed;
    }
  return ok;
}
