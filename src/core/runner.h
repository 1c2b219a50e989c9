/* runner.h - one run of a job, as the scheduler holds it (core only):
 * run.c runs its batches, runner.c starts it (the database, the kind, a
 * feed per topic; Kafka, then MySQL, then the tables, each waited for
 * within --startup-timeout). */
#pragma once
#include <glib.h>
#include "feed.h"
#include "group-wait.h"
#include "kind.h"
#include "metrics.h"
#include "retry.h"
#include "run.h"

typedef struct
{
  const KtRunSetup  *setup;
  const KtRunHooks *hooks;   /* NULL: none */
  const volatile int *stop;
  KtDb            *db;       /* one connection: one transaction for every topic */
  const KtKind *kind;
  char            *member_name; /* "job-pid@host", as ktally_batches holds it */
  gboolean         member;   /* `run --group`: a member of the consumer group */
  gboolean         fixed;    /* the hooks' check narrowed the partitions: no refresh */
  GPtrArray       *feeds;    /* KtFeed, one per topic */
  KtMetrics       *metrics;  /* the run's: /livez's clock */
  guint            checked_on; /* the connection (kt_db_connections()) the tables
                              * were checked on */
  KtRunSettings    settings; /* what a reload may change (run.h) */
  KtGroupWait      waiting;  /* --group: a member without partitions says why */
  /* The commit in flight (run.c): at most one, on a thread of its own,
   * which holds @db_lock (and so the connection) until it ends. NULL:
   * none, and the scheduler's thread may use the database. */
  GThread         *committer;
  GMutex           db_lock;
  KtFlight         flight;        /* whether it is (a rebalance waits for it) */
  gint             commit_done;  /* atomic: the committer is about to end */
  /* Its outcome, read once it was joined. */
  gboolean         commit_ok;
  KtCommitResult   commit_result;
  GError          *commit_error;
  KtFeed          *commit_fenced_feed;
  gint32           commit_fenced;
  GPtrArray       *commit_again;  /* char*: deadlocks met, logged once joined */
  gint64           commit_began;  /* monotonic: it took the connection... */
  gint64           commit_ended;  /* ...and COMMIT returned */
  /* The batch that landed last: settled, and whether it committed with
   * nothing moved under it (the batch planned ahead of it may commit), or
   * what it failed with (owned; taken by the next batch). */
  gboolean         landed_clean;
  GError          *landed_error;
  gint64           compacted_at; /* --audit-keep's last fold (monotonic) */
} KtRunner;

/* Creates the database, the kind, and a feed per topic, and waits for
 * Kafka (every topic's partition list) and MySQL, within
 * --startup-timeout. Kafka first: an unknown topic must not leave tables
 * behind. Sets *@stopped when a signal came meanwhile (not a failure).
 * Clear @r with kt_runner_clear() whatever it returns. */
gboolean kt_runner_start  (KtRunner *r, const KtRunSetup *setup, const KtRunHooks *hooks,
                           const volatile int *stop, KtMetrics *metrics, gboolean *stopped,
                           GError **error);
void     kt_runner_clear  (KtRunner *r);

/* @step (a KtRetryStep of @r's) until it succeeds or --startup-timeout
 * passes, as retry.h says; @what names it in the messages. */
gboolean kt_runner_retry  (KtRunner *r, KtRetryStep step, const char *what, GError **error);

/* KtRetrySteps (@runner a KtRunner). The job's tables, checked, migrated
 * or created; before anything is created or read, a job run with other
 * settings, or a second job over a topic this table already counts, is
 * refused here (at start, and on a new connection). */
gboolean kt_runner_tables (gpointer runner, int timeout_ms, GError **error);
/* The caller's check before the first batch (a replay's ranges: one
 * topic), which then fixes the partitions. */
gboolean kt_runner_check  (gpointer runner, int timeout_ms, GError **error);

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (KtRunner, kt_runner_clear)
