/* run.h - the batch scheduler: `ktally run` (and `replay`) as a service.
 *
 * Every --interval seconds: plan a batch from the stored offsets and
 * Kafka's watermarks, read it, hand it to the job's kind (kind.h), which
 * commits its output with the offsets, fenced. */
#pragma once
#include <glib.h>
#include "batchlog.h"
#include "migrations.h"
#include "run-setup.h"



/* What may change while a job runs (a reload, SIGHUP): the scheduler
 * holds its own copy and applies a newer one between batches. */
typedef struct
{
  KT_RUN_RELOADABLE (KT_RUN_FIELD)  /* run-setup.h */
  KtDbConfig db;                 /* its credentials (password, its file, an option
                                  * file) are used from the next connection; where
                                  * the database is stays the running one's */
  guint      generation;         /* which settings these are: 0 at start, then each reload's */
} KtRunSettings;

/* The settings of @options and @db (generation 0) into @out, which the
 * caller clears. */
void kt_run_settings_init  (KtRunSettings *out, const KtRunOptions *options,
                            const KtDbConfig *db);
void kt_run_settings_clear (KtRunSettings *settings);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (KtRunSettings, kt_run_settings_clear)

/* What a caller adds to a run (a replay: its ranges checked before the
 * first batch, and its progress shown after each; `run` on a terminal:
 * its progress; both: a reload). With several topics, progress is called
 * for each topic after each batch, on the caller's thread. */
typedef struct
{
  /* Before the first batch, once Kafka answers: may refuse the run, and
   * may narrow @partitions (gint32), which then stay as they are. */
  gboolean (*check)    (gpointer data, KtSource *source, GArray *partitions,
                        int timeout_ms, GError **error);
  /* Once the tables are ready, before the first batch. */
  void     (*ready)    (gpointer data);
  /* After each committed or fenced batch of @topic: where every partition
   * stands now (KtPartitionState: ->stored is the next offset to read),
   * and what the topic's feed read and counted so far. */
  void     (*progress) (gpointer data, const char *topic, const GArray *states,
                        const KtRangeStats *totals);
  /* At every turn of the loop: between batches, and about once a second
   * while the scheduler waits (the interval, a backoff). The loop is
   * alive (a watchdog); TRUE after replacing *@settings (its own copy; the
   * generation says which it holds) with newer ones (a reload), used from
   * then on (a shorter --interval ends the wait early). */
  gboolean (*turn)     (gpointer data, KtRunSettings *settings);
  /* While the schema is migrated at start (migrations.h): told when a
   * migration starts and when it ends. */
  KtMigrationsMigrating migrating;
  gpointer   data;
  gboolean   quiet;  /* the batch lines at debug level (progress says enough) */
  /* The registry the run reports to (/metrics): the caller's, which
   * outlives the run and may report into it too (a reload); NULL: the run
   * makes its own. */
  KtMetrics *metrics;
} KtRunHooks;

/* Runs @job until *@stop is set (returns TRUE: the batch in
 * flight was either committed whole or abandoned whole), until idle with
 * --exit-when-idle (TRUE), or until a failure that retrying cannot cure
 * (FALSE; the error's code gives the exit status). A replay
 * (spec->replay_from/until) reads fixed ranges and ends when they are
 * done. Transient failures are logged and retried with exponential
 * backoff, capped at 30 s. @hooks may be NULL. A job of several topics is one job: when one
 * topic's runner fails for good, it sets *@stop, the others finish their
 * batch in flight, and the failure is returned. @totals (may be NULL): what
 * the run read and counted. */
gboolean kt_run (const KtRunSetup *setup, const KtRunHooks *hooks, volatile int *stop,
                 KtRangeStats *totals, GError **error);
