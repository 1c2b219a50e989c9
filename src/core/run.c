/* run.c - the batch scheduler: plan -> read -> the job's kind -> commit.
 *
 * One batch is run_batch(), in four stages, each a function: plan_batch()
 * plans every topic's ranges from the stored offsets and the watermarks
 * (feed.c, plan.c); read_batch() reads exactly those ranges (source.c),
 * handing every record to the job's kind (kind->take); commit() runs one
 * transaction in which the kind writes every topic's output with its
 * offsets, fenced (kind.h); settle_batch() logs each topic's batch and
 * moves on. Everything else here is the
 * service around it: start-up, retries with backoff, the interval clock,
 * signals. The scheduler never asks which kind or mode it runs. The only
 * state carried from one batch to the next is in MySQL (or the consumer
 * group): each batch plans from the offsets it reads back, so a crash, a
 * restart or a second writer never needs special cases here. */
#include "run.h"

#include <stdio.h>
#include <string.h>
#include "error.h"
#include "http.h"
#include "log.h"
#include "offsets.h"
#include "runner.h"
#include "source.h"

#define BACKOFF_MAX_S      30.0
#define COMPACT_EVERY_US   (60 * G_USEC_PER_SEC)
#define KAFKA_TIMEOUT_MS   10000
#define STALL_MS           30000


/* A turn of the loop: it is alive (/livez), and the caller's newer
 * settings, if any (a reload), apply from the next batch on. TRUE when
 * there were some. */
static gboolean
turn (KtRunner *r)
{
  kt_metrics_alive (r->metrics);
  /* A reload sets the connection's credentials, and changes what the
   * batch read meanwhile was planned with: it waits until the commit in
   * flight landed (and the batch planned ahead of it is dropped). */
  if (r->committer != NULL)
    return FALSE;
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

static void land (KtRunner *r);

/* Waits between batches, reading ahead meanwhile: records that arrive
 * are pulled into each reader's carry (bounded like the pre-fetch queue),
 * so the next batch finds them in memory instead of waiting on a fetcher
 * that a full queue stopped (freshness), and a group member serves the
 * group's events (a rebalance must not wait for the next batch). Each
 * turn is one (/livez, a reload); with @interval the wait is the rest of
 * the interval, whose end a reload of --interval moves. */
static void
rest (KtRunner *r, double seconds, gboolean interval)
{
  gint64 until = g_get_monotonic_time () + (gint64) (seconds * G_USEC_PER_SEC);

  while (!*r->stop)
    {
      double was = r->settings.interval;
      gint64 left;

      /* A commit that ended lands now (its line, the metrics), not at
       * the next batch; what it failed with waits for that batch. */
      if (r->committer != NULL && g_atomic_int_get (&r->commit_done))
        land (r);
      if (turn (r) && interval)
        until += (gint64) ((r->settings.interval - was) * G_USEC_PER_SEC);
      if (r->member)
        kt_group_wait_check (&r->waiting, r->setup->spec->name, r->setup->spec->group,
                             r->feeds);
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
commit_once (KtRunner *r, KtCommitResult *result, KtFeed **fenced_feed, gint32 *fenced,
             GError **error)
{
  KtFeed *first = r->feeds->pdata[0];

  *result = KT_COMMIT_FAILED;
  for (guint i = 0; i < r->feeds->len; i++)
    ((KtFeed *) r->feeds->pdata[i])->context.audit_id = 0;
  /* The identity is the job's: one claim covers every topic. */
  if (!kt_kind_context_begin (&first->context, error))
    return FALSE;
  for (guint i = 0; i < r->feeds->len; i++)
    {
      KtFeed *f = r->feeds->pdata[i];

      if (f->flight.ranges->len == 0)
        continue;
      if (!r->kind->write (f->flight.batch, f->flight.ranges, fenced, error))
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
  if (!kt_kind_context_finish (&first->context, result, error))
    return FALSE;
  for (guint i = 0; i < r->feeds->len; i++)
    {
      ((KtFeed *) r->feeds->pdata[i])->context.claimed = TRUE;
      ((KtFeed *) r->feeds->pdata[i])->context.claimed_on = first->context.claimed_on;
    }
  return TRUE;
}

/* The batch's commit: one transaction for every topic (commit_once); a
 * deadlock or lock wait cost only this
 * transaction, rolled back: the same batch commits again (still fenced)
 * after a short pause, longer each time, with jitter so that the writers
 * drift apart. */
static gboolean
commit (KtRunner *r, KtCommitResult *result, KtFeed **fenced_feed, gint32 *fenced,
        GError **error)
{
  for (guint attempt = 1;; attempt++)
    {
      g_autoptr(GError) local = NULL;

      *fenced = -1;
      if (commit_once (r, result, fenced_feed, fenced, &local))
        return TRUE;
      /* What the scheduler's thread owns (the feeds' unknown_commit,
       * their logs) is told once this thread was joined (land()). */
      if (*result == KT_COMMIT_UNKNOWN)
        g_prefix_error (&local, "the answer to COMMIT was lost (the offsets will "
                        "tell whether it landed): ");
      if (!g_error_matches (local, KT_ERROR, KT_ERROR_CONFLICT) || attempt == 6)
        {
          g_propagate_error (error, g_steal_pointer (&local));
          return FALSE;
        }
      g_ptr_array_add (r->commit_again, g_strdup (local->message));
      g_usleep ((gulong) g_random_int_range (5000, 20000) << attempt);
    }
}

/* Connected, and on a new connection the tables checked (created) again
 * as at start: it may be to another server of the list, a replica that
 * a failover promoted without the last transactions of the old primary,
 * which can hold CREATE TABLEs too. /metrics names the server. */
static gboolean
connected (KtRunner *r, GError **error)
{
  if (!kt_db_connect (r->db, error))
    return FALSE;
  kt_metrics_set_mysql_server (r->metrics, kt_db_host (r->db));
  if (kt_db_connections (r->db) == r->checked_on)
    return TRUE;
  if (!kt_runner_tables (r, 0, error))
    return FALSE;
  r->checked_on = kt_db_connections (r->db);
  return TRUE;
}

/* The batch's first stage: every topic's ranges, from where each
 * partition stands (kt_feed_plan: the stored offsets, the watermarks, the
 * kind's say). *@idle when none has anything to read. Uses the database:
 * nothing may be in flight. */
static gboolean
plan_batch (KtRunner *r, guint64 turn_no, gint64 started, gboolean *idle, GError **error)
{
  g_assert (r->committer == NULL);
  *idle = TRUE;
  for (guint i = 0; i < r->feeds->len; i++)
    {
      KtFeed *f = r->feeds->pdata[i];
      /* Partitions added to a topic are picked up at this pace. */
      gboolean fresh = !r->fixed
                       && started - f->metadata_at >= kt_source_metadata_every_us (f->source);

      if (!kt_feed_plan (f, fresh, r->settings.max_per_partition, r->setup->run->on_data_loss,
                         turn_no, started, error))
        return FALSE;
      *idle &= f->next.ranges->len == 0;
    }
  return TRUE;
}

/* The batch's first stage while the one before commits: every topic's
 * ranges planned from that one's ends, as if it committed (kt_feed_plan_ahead:
 * no database). FALSE when one topic cannot, or nothing is new, or the
 * partition list is due: none is planned, and the caller waits for the
 * commit and plans from the database. */
static gboolean
plan_ahead (KtRunner *r, guint64 turn_no, gint64 started)
{
  gboolean any = FALSE;

  for (guint i = 0; i < r->feeds->len; i++)
    {
      KtFeed *f = r->feeds->pdata[i];

      if (f->flight.ranges->len == 0)
        continue;  /* nothing of it in flight: its plan is the database's */
      if ((!r->fixed && started - f->metadata_at >= kt_source_metadata_every_us (f->source))
          || !kt_feed_plan_ahead (f, r->settings.max_per_partition,
                                  r->setup->run->on_data_loss, turn_no, started))
        {
          for (guint j = 0; j < r->feeds->len; j++)
            kt_feed_drop (r->feeds->pdata[j]);
          return FALSE;
        }
      any = TRUE;
    }
  /* A topic with nothing in flight is planned from the database, which
   * the committer holds: only a job whose every topic is in flight goes
   * ahead. */
  for (guint i = 0; any && i < r->feeds->len; i++)
    if (((KtFeed *) r->feeds->pdata[i])->flight.ranges->len == 0)
      any = FALSE;
  if (!any)
    for (guint j = 0; j < r->feeds->len; j++)
      kt_feed_drop (r->feeds->pdata[j]);
  return any;
}

/* The second and third: every topic's ranges read, and every record taken
 * by the kind as it comes (kt_feed_read: kind->take). A cap that stopped
 * a read early moved some ranges' ends back, maybe to their start: those
 * commit nothing. While a batch commits, what its kind still holds of its
 * records (kind->held: the ledger's messages) counts against this read's
 * byte cap: the two batches share it. */
static gboolean
read_batch (KtRunner *r, GError **error)
{
  for (guint i = 0; i < r->feeds->len; i++)
    {
      KtFeed *f = r->feeds->pdata[i];
      gint64 held = 0, records = 0;
      gboolean ok;

      if (r->committer != NULL && f->flight.batch != NULL && r->kind->held != NULL)
        r->kind->held (f->flight.batch, &held, &records);
      if (held > 0 && r->settings.max_batch_bytes > 0)
        kt_source_set_max_batch_bytes (f->source, MAX (1, r->settings.max_batch_bytes - held));
      ok = kt_feed_read (f, r->stop, STALL_MS, error);
      if (held > 0 && r->settings.max_batch_bytes > 0)
        kt_source_set_max_batch_bytes (f->source, r->settings.max_batch_bytes);
      if (!ok)
        return FALSE;
    }
  return TRUE;
}

/* The last, once the commit (commit()) has an outcome: what the kind
 * stores after the output (idempotent mode: the offsets), each topic's
 * line, where its partitions stand now, and the caller's progress.
 * *@clean: committed, and no partition's offsets moved under it. */
static gboolean
settle_batch (KtRunner *r, KtCommitResult result, const KtFeed *fenced_feed, gint32 fenced,
              gboolean idle, gboolean *clean, GError **error)
{
  *clean = result == KT_COMMIT_DONE;
  for (guint i = 0; i < r->feeds->len; i++)
    {
      KtFeed *f = r->feeds->pdata[i];
      KtFeedBatch *b = &f->flight;
      guint64 now_no = f->log.batch_no;
      gint32 moved = -1;

      /* Its events carry the turn that planned it. */
      f->log.batch_no = b->turn;
      f->log.ahead_of = b->ahead_of;
      if (b->ranges->len == 0)
        kt_batch_log_idle (&f->log, b->states, b->times.started);
      else if (result == KT_COMMIT_FENCED)
        {
          /* Still where it was planned from: whoever moved it is said at
           * the next plan (a reset is news, another writer is not). */
          if (f == fenced_feed)
            kt_batch_log_fenced (&f->log, b->ranges, b->records, fenced, b->times.started);
        }
      else
        {
          if (r->kind->after != NULL
              && !r->kind->after (b->batch, b->ranges, &moved, error))
            {
              f->log.batch_no = now_no;
              f->log.ahead_of = 0;
              *clean = FALSE;
              return FALSE;
            }
          *clean &= moved < 0;
          kt_batch_log_committed (&f->log, r->kind, b->batch, b->states, b->ranges,
                                  b->losses, b->records, b->bytes,
                                  moved, f->context.audit_id, &b->times);
          /* Where this process left the offsets: past the batch, or,
           * when its store found them moved (idempotent mode), where it
           * planned from: the next plan says who moved them from there. */
          if (moved < 0)
            kt_plan_advance (b->states, b->ranges);
        }
      f->log.batch_no = now_no;
      f->log.ahead_of = 0;
      kt_feed_settled (f);
      if (r->hooks != NULL && r->hooks->progress != NULL && !idle)
        r->hooks->progress (r->hooks->data, f->context.topic, b->states, &f->log.totals);
    }
  return TRUE;
}

/* Between batches, with nothing in flight: --audit-keep folds old audit
 * rows, once a minute. */
static void
compact (KtRunner *r)
{
  if (r->committer != NULL || r->setup->run->audit_keep <= 0
      || g_get_monotonic_time () - r->compacted_at < COMPACT_EVERY_US)
    return;
  for (guint i = 0; i < r->feeds->len; i++)
    {
      g_autoptr(GError) error = NULL;
      const char *topic = ((KtFeed *) r->feeds->pdata[i])->context.topic;

      if (!kt_offsets_compact (r->db, r->setup->spec->name, topic,
                               (gint64) r->setup->run->audit_keep, &error))
        g_warning ("job %s: %s; trying again in a minute", r->setup->spec->name, error->message);
    }
  r->compacted_at = g_get_monotonic_time ();
}

/* The committer's thread: one batch's commit, holding the connection. */
static gpointer
committer (gpointer data)
{
  KtRunner *r = data;

  g_mutex_lock (&r->db_lock);
  r->commit_began = g_get_monotonic_time ();
  r->commit_fenced_feed = NULL;
  r->commit_ok = commit (r, &r->commit_result, &r->commit_fenced_feed, &r->commit_fenced,
                         &r->commit_error);
  r->commit_ended = g_get_monotonic_time ();
  g_mutex_unlock (&r->db_lock);
  kt_flight_end (&r->flight);
  g_atomic_int_set (&r->commit_done, TRUE);
  return NULL;
}

/* The next batch (read) goes to the committer. At most one commit is in
 * flight: the one before must have landed. */
static void
launch (KtRunner *r)
{
  g_assert (r->committer == NULL);
  for (guint i = 0; i < r->feeds->len; i++)
    kt_feed_launch (r->feeds->pdata[i]);
  g_clear_error (&r->commit_error);
  g_ptr_array_set_size (r->commit_again, 0);
  r->commit_ok = FALSE;
  r->commit_result = KT_COMMIT_FAILED;
  g_atomic_int_set (&r->commit_done, FALSE);
  /* Before the thread exists: a rebalance served right after this waits
   * for the commit even if the thread has not taken the connection yet. */
  kt_flight_begin (&r->flight);
  r->committer = g_thread_new ("ktally-commit", committer, r);
}

/* Waits for the commit in flight, if any, and settles it on this thread
 * (the database is the scheduler's again): r->landed_clean says whether
 * it committed with nothing moved under it, r->landed_error what it
 * failed with. */
static void
land (KtRunner *r)
{
  KtFeed *first = r->feeds->pdata[0];
  g_autoptr(GError) error = NULL;

  if (r->committer == NULL)
    return;
  g_thread_join (g_steal_pointer (&r->committer));
  r->landed_clean = FALSE;
  for (guint i = 0; i < r->commit_again->len; i++)
    {
      guint64 now_no = first->log.batch_no;

      first->log.batch_no = first->flight.turn;
      kt_batch_log_commit_again (&first->log, r->commit_again->pdata[i], i + 1, 5);
      first->log.batch_no = now_no;
    }
  if (!r->commit_ok)
    {
      if (r->commit_result == KT_COMMIT_UNKNOWN)
        {
          for (guint i = 0; i < r->feeds->len; i++)
            {
              KtFeed *f = r->feeds->pdata[i];

              g_array_set_size (f->unknown_commit, 0);
              g_array_append_vals (f->unknown_commit, f->flight.ranges->data,
                                   f->flight.ranges->len);
            }
          /* Told by the failure logged next, whichever turn that is. */
          first->log.lost_commit = TRUE;
        }
      error = g_steal_pointer (&r->commit_error);
    }
  else
    {
      for (guint i = 0; i < r->feeds->len; i++)
        {
          KtFeed *f = r->feeds->pdata[i];

          f->flight.times.committing = r->commit_began;
          f->flight.times.committed = r->commit_ended;
        }
      settle_batch (r, r->commit_result, r->commit_fenced_feed, r->commit_fenced, FALSE,
                    &r->landed_clean, &error);
    }
  for (guint i = 0; i < r->feeds->len; i++)
    kt_feed_landed (r->feeds->pdata[i]);
  if (error != NULL && r->landed_error == NULL)
    r->landed_error = g_steal_pointer (&error);
  /* Back to back, nothing else finds the database free. */
  if (r->landed_error == NULL)
    compact (r);
}

/* The failure of the batch that landed last, once: FALSE with it. */
static gboolean
landed_ok (KtRunner *r, GError **error)
{
  if (r->landed_error == NULL)
    return TRUE;
  g_propagate_error (error, g_steal_pointer (&r->landed_error));
  return FALSE;
}

static void
drop_next (KtRunner *r)
{
  for (guint i = 0; i < r->feeds->len; i++)
    kt_feed_drop (r->feeds->pdata[i]);
}

/* Whether a rebalance came since the next batch was planned: a partition
 * of it may be another member's now, or assigned again (it starts from
 * its stored offset), so none of it is written. */
static gboolean
rebalanced (KtRunner *r, GError **error)
{
  for (guint i = 0; i < r->feeds->len; i++)
    {
      KtFeed *f = r->feeds->pdata[i];

      if (f->next.ranges->len > 0 && kt_source_rebalances (f->source) != f->next.rebalances)
        {
          drop_next (r);
          g_set_error (error, KT_ERROR, KT_ERROR_REBALANCED,
                       "the group rebalanced after the batch was read; it is abandoned "
                       "(nothing was committed) and planned again");
          return TRUE;
        }
    }
  return FALSE;
}

/* One micro-batch, pipelined with the one before: plan and read it while
 * the one before commits (if that one is still in flight, and its ends
 * are all the plan needs), then let that one land, then hand this one to
 * the committer. Returns TRUE when it ran to a known end (handed over,
 * fenced, dropped, or nothing to do: *@idle), FALSE with the error
 * otherwise; FALSE only with nothing in flight. */
static gboolean
run_batch (KtRunner *r, guint64 turn_no, gboolean *idle, GError **error)
{
  gint64 started = g_get_monotonic_time ();
  gboolean ahead = FALSE;
  g_autoptr(GError) read_error = NULL;

  *idle = FALSE;
  if (r->committer != NULL && g_atomic_int_get (&r->commit_done))
    land (r);
  if (!landed_ok (r, error))
    return FALSE;
  if (r->committer != NULL)
    ahead = plan_ahead (r, turn_no, started);
  if (!ahead)
    {
      land (r);
      /* The loop's turn (the watchdog, a reload) waited for the commit:
       * it comes now, before the plan, as it does after a batch planned
       * ahead lands. Without it, back-to-back batches never turn. */
      turn (r);
      if (!landed_ok (r, error)
          || !connected (r, error)
          || !plan_batch (r, turn_no, started, idle, error))
        return FALSE;
    }
  if (!read_batch (r, &read_error))
    {
      /* The one in flight read all its records before: it lands (its
       * failure first); this one is dropped. */
      land (r);
      drop_next (r);
      if (!landed_ok (r, error))
        return FALSE;
      g_propagate_error (error, g_steal_pointer (&read_error));
      return FALSE;
    }
  if (ahead)
    {
      land (r);
      /* Planned from the ends of a batch that did not commit (failed,
       * lost, fenced, its offsets moved after it), or with settings a
       * reload has since changed: dropped whole, and planned again from
       * what the database holds. */
      if (!r->landed_clean || turn (r))
        {
          drop_next (r);
          return landed_ok (r, error);
        }
    }
  if (*idle)
    {
      gboolean clean;

      /* Nothing to commit: it lands now, through the same settling. */
      for (guint i = 0; i < r->feeds->len; i++)
        kt_feed_launch (r->feeds->pdata[i]);
      settle_batch (r, KT_COMMIT_DONE, NULL, -1, TRUE, &clean, NULL);
      for (guint i = 0; i < r->feeds->len; i++)
        kt_feed_landed (r->feeds->pdata[i]);
      return TRUE;
    }
  if (rebalanced (r, error))
    return FALSE;
  launch (r);
  return TRUE;
}

/* The metrics' word for why a batch is tried again: a failure of the
 * database drops its connection (db.h); anything else was Kafka's. */
static const char *
retry_cause (KtRunner *r, const GError *error)
{
  if (g_error_matches (error, KT_ERROR, KT_ERROR_CONFLICT))
    return "deadlock";
  return kt_db_connected (r->db) ? "kafka" : "mysql";
}

/* What a failed batch leads to: FALSE with the error when retrying cannot
 * cure it; TRUE to go on, *@failure cleared when the run should just end
 * (asked to stop), after a pause when it was transient. */
static gboolean
after_failure (KtRunner *r, GError **failure, gint64 started, double *backoff, GError **error)
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
      const char *cause = local->code == KT_ERROR_REBALANCED ? "rebalance" : "retention";

      /* Nothing was committed: plan again with what we own now, the
       * anchors checked first where the topic may have changed. */
      for (guint i = 0; local->code == KT_ERROR_OVERTAKEN && i < r->feeds->len; i++)
        {
          KtFeed *f = r->feeds->pdata[i];

          if (kt_source_changed (f->source))
            cause = "topic-changed";
          kt_feed_doubt (f);
        }
      kt_batch_log_abandoned (log, cause, local->message);
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
    {
      ((KtFeed *) r->feeds->pdata[i])->metadata_at = 0;
      kt_feed_doubt (r->feeds->pdata[i]);
    }
  rest (r, *backoff, FALSE);
  return TRUE;
}

/* Idle with --exit-when-idle (a group member only once it owns some). */
static gboolean
done_when_idle (KtRunner *r)
{
  guint owned = 0;

  for (guint i = 0; i < r->feeds->len; i++)
    owned += ((KtFeed *) r->feeds->pdata[i])->partitions->len;
  return r->setup->run->exit_when_idle && (!r->member || owned > 0);
}

/* From the tables on: prepares them, then runs batches until told to stop,
 * idle with --exit-when-idle, or a failure that retrying cannot cure. */
static gboolean
run_loop (KtRunner *r, GError **error)
{
  const KtJobSpec *spec = r->setup->spec;
  g_autofree char *topics = NULL;
  double backoff = 0;
  guint partitions = 0;

  if (r->hooks != NULL && r->hooks->check != NULL
      && !kt_runner_retry (r, kt_runner_check, "Kafka", error))
    return FALSE;
  /* MariaDB restarting meanwhile is waited for, as at start-up. */
  if (!kt_runner_retry (r, kt_runner_tables, "MySQL tables", error))
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
                      r->setup->identity->output, r->kind->kind,
                      r->kind->mode, spec->offsets == KT_OFFSETS_KAFKA, r->settings.interval);

  while (!*r->stop)
    {
      g_autoptr(GError) local = NULL;
      gint64 started = g_get_monotonic_time ();
      gboolean idle = FALSE;

      turn (r);
      for (guint i = 0; i < r->feeds->len; i++)
        ((KtFeed *) r->feeds->pdata[i])->log.batch_no++;
      if (!run_batch (r, ((KtFeed *) r->feeds->pdata[0])->log.batch_no, &idle, &local))
        {
          if (!after_failure (r, &local, started, &backoff, error))
            return FALSE;
          if (*r->stop || local == NULL)
            break;
          continue;
        }
      backoff = 0;
      compact (r);
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
  /* Asked to stop: the commit in flight ends first (its records were
   * all read); a batch read meanwhile was dropped. What that commit
   * failed with is told as any batch's failure is, and one that retrying
   * cannot cure is the run's. */
  land (r);
  drop_next (r);
  if (r->landed_error != NULL)
    {
      GError *failed = g_steal_pointer (&r->landed_error);
      double backoff = 0;
      gboolean ok = after_failure (r, &failed, g_get_monotonic_time (), &backoff, error);

      g_clear_error (&failed);
      return ok;
    }
  return TRUE;
}

gboolean
kt_run (const KtRunSetup *setup, const KtRunHooks *hooks, volatile int *stop,
        KtRangeStats *totals, GError **error)
{
  g_auto(KtRunner) r = { 0 };
  /* Declared in this order so that the server stops before the registry
   * it reads is freed. */
  g_autoptr(KtMetrics) own = hooks != NULL && hooks->metrics != NULL
                             ? NULL : kt_metrics_new (setup->spec->name, setup->run->interval);
  KtMetrics *metrics = own != NULL ? own : hooks->metrics;
  g_autoptr(KtHttp) http = NULL;
  KtRangeStats ignored;
  gboolean stopped, ok;

  kt_metrics_set_build_info (metrics, PACKAGE_VERSION, kt_source_library_version (),
                             kt_db_client_version ());
  if (totals == NULL)
    totals = &ignored;
  *totals = (KtRangeStats) { 0 };
  /* First, so that a bad --http fails before anything is touched, and
   * /healthz answers (503) while Kafka and MySQL are still awaited. */
  if (setup->health->http != NULL)
    {
      g_autoptr(KtLogEvent) e = kt_log_event_new ("http");

      http = kt_http_start (setup->health->http, metrics, setup->db, setup->chart, error);
      if (http == NULL)
        return FALSE;
      /* The port a machine needs (--http 127.0.0.1:0 takes a free one). */
      kt_log_event_string (e, "job", setup->spec->name);
      kt_log_event_int (e, "port", kt_http_port (http));
      kt_log_event_emit (e, G_LOG_LEVEL_MESSAGE, "job %s: serving /metrics, /livez, /readyz, "
                         "/healthz and / on port %u of %s", setup->spec->name,
                         kt_http_port (http), setup->health->http);
    }
  kt_metrics_set_health (metrics, setup->health->max_lag, setup->health->max_commit_age,
                         setup->health->max_stall);
  if (!kt_runner_start (&r, setup, hooks, stop, metrics, &stopped, error))
    return FALSE;
  if (stopped)
    return TRUE;
  ok = run_loop (&r, error);
  for (guint i = 0; i < r.feeds->len; i++)
    kt_range_stats_add (totals, &((KtFeed *) r.feeds->pdata[i])->log.totals);
  return ok;
}
