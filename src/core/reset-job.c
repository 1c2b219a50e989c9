/* reset-job.c - `ktally reset` of one job (reset.h, KtResetJob): from
 * what was asked to the plan, executed or a dry run.
 *
 * It reads the job and its kind from the database, checks what the kind
 * allows, opens a source per topic, and plans each topic from the stored
 * offsets and the watermarks asked after them (reset.c, kt_reset_plan).
 * With --execute, the plan is made inside one transaction that read the
 * offsets FOR UPDATE, and applied there, every UPDATE fenced on the value
 * read: a running instance's next commit is fenced and plans again from
 * the new offsets. Without it (a dry run), the same code runs every read
 * and every check of the execution, without its locks and writes, so
 * that it refuses what the execution refuses. A job whose offsets live
 * in Kafka's consumer group has them committed there, which nothing can
 * fence. It prints nothing: the command does (cmd-reset.c). */
#include "reset.h"

#include <unistd.h>
#include "error.h"
#include "migrations.h"
#include "retry.h"
#include "schema.h"

#define KAFKA_TIMEOUT_MS 10000
/* Deadlocks with a running instance's first commit (which locks in the
 * other order) are retried, the whole transaction, this many times. */
#define CONFLICT_TRIES 5

static gboolean
source_partitions (gpointer data, int timeout_ms, GError **error)
{
  gpointer *args = data;
  return kt_source_partitions (args[0], args[1], timeout_ms, error);
}

static gboolean
readable (gpointer data, int timeout_ms, GError **error)
{
  (void) timeout_ms;
  return kt_schema_readable (data, error);
}

/* The job and its kind, the target and the policy from them. */
static gboolean
read_job (KtResetJob *r, const GPtrArray *jobs, GError **error)
{
  const KtResetRequest *q = r->request;
  const KtJobRow *record;

  r->job = kt_jobs_require (r->db, jobs, q->job, error);
  if (r->job == NULL)
    return FALSE;
  record = r->job->record;
  if (record == NULL)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "job %s: what it is (its kind and mode) is not recorded yet in %s; a "
                   "commit of this ktally records it (or `ktally init-db` on an older "
                   "schema): until then, nothing to reset", q->job, kt_db_name (r->db));
      return FALSE;
    }
  r->kind = kt_kind_lookup (record->kind, record->mode, error);
  if (r->kind == NULL)
    {
      g_prefix_error (error, "job %s: ", q->job);
      return FALSE;
    }
  r->kafka = g_strcmp0 (record->offsets, "kafka") == 0;
  if (q->rebuild && !r->kind->rebuilds)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "--rebuild: job %s (--kind %s) cannot be "
                   "rebuilt: %s", q->job, record->kind,
                   r->kind->why_no_rewind != NULL ? r->kind->why_no_rewind : "not supported");
      return FALSE;
    }
  /* A replay's job counts its range, and no reset moves it out of it. */
  if (g_str_has_prefix (q->job, KT_REPLAY_JOB_PREFIX))
    {
      if (record->replay_range == NULL || *record->replay_range == '\0')
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "job %s is a replay whose range is not "
                       "recorded (a replay of a ktally before schema version 5): a reset "
                       "could move it outside its range; refused", q->job);
          return FALSE;
        }
      r->replay_from = g_array_new (FALSE, FALSE, sizeof (KtPartitionOffset));
      r->replay_until = g_array_new (FALSE, FALSE, sizeof (KtPartitionOffset));
      if (!kt_replay_range_parse (record->replay_range, r->replay_from, r->replay_until, error))
        {
          g_prefix_error (error, "job %s: ", q->job);
          return FALSE;
        }
    }
  r->policy = (KtResetPolicy) {
    .job = q->job, .output = record->output, .reread = r->kind->reread,
    .why_no_rewind = r->kind->why_no_rewind,
    .rebuild = q->rebuild && q->target->to == KT_RESET_EARLIEST,
    .recount = q->rebuild && q->target->to != KT_RESET_EARLIEST,
    .retracts = r->kind->retract != NULL,
    .accept_data_loss = q->accept_data_loss,
    .replay_from = r->replay_from, .replay_until = r->replay_until,
  };
  /* A recount reads the job's records again as the job did: with the
   * settings its table's identity recorded. */
  if (r->policy.recount && r->policy.retracts && r->policy.reread == KT_REREAD_COUNTS_TWICE)
    {
      r->options = kt_reset_kind_options (r->db, r->kind, record->output, error);
      if (r->options == NULL)
        return FALSE;
    }
  return TRUE;
}

/* Which topics: the batch's, --topic, or all of the job's. */
static gboolean
reset_topics (KtResetJob *r, GError **error)
{
  const KtResetRequest *q = r->request;

  if (q->target->to == KT_RESET_TIME)
    r->starts = g_array_new (FALSE, FALSE, sizeof (KtPartitionOffset));
  if (q->target->to == KT_RESET_BATCH)
    {
      r->starts = g_array_new (FALSE, FALSE, sizeof (KtPartitionOffset));
      if (!kt_offsets_batch_starts (r->db, q->job, q->target->batch, &r->batch_topic,
                                    r->starts, error))
        return FALSE;
      if (q->topic != NULL && !g_str_equal (q->topic, r->batch_topic))
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "--to batch:%" G_GINT64_FORMAT
                       " is a batch of topic %s, not of --topic %s", q->target->batch,
                       r->batch_topic, q->topic);
          return FALSE;
        }
      r->topics = g_strsplit (r->batch_topic, ",", 1);
    }
  else if (q->topic != NULL)
    {
      if (!g_strv_contains ((const char *const *) r->job->topics, q->topic))
        {
          g_autofree char *reads = g_strjoinv (", ", r->job->topics);
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "--topic: job %s does not read %s "
                       "(it reads %s)", q->job, q->topic, reads);
          return FALSE;
        }
      r->topics = g_strsplit (q->topic, ",", 1);
    }
  else
    {
      if (q->target->to == KT_RESET_OFFSETS && g_strv_length (r->job->topics) > 1)
        {
          g_autofree char *reads = g_strjoinv (", ", r->job->topics);
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "--to: job %s reads several topics "
                       "(%s): give --topic for PARTITION:OFFSET", q->job, reads);
          return FALSE;
        }
      r->topics = g_strdupv (r->job->topics);
    }
  return TRUE;
}

/* A source per topic, each waited for until it knows its partitions. */
static gboolean
reset_sources (KtResetJob *r, GError **error)
{
  static const volatile int never = 0;
  const KtResetRequest *q = r->request;

  r->sources = g_ptr_array_new_with_free_func ((GDestroyNotify) kt_source_free);
  for (char **t = r->topics; *t != NULL; t++)
    {
      KtSourceConfig source_config = {
        .brokers = q->kafka->brokers,
        .topic = *t,
        .client_id = q->job,  /* ktally-JOB: where --offsets kafka keeps them */
        .properties = (const char *const *) q->kafka->properties,
      };
      KtSource *source = kt_source_new (&source_config, error);
      g_autoptr(GArray) partitions = g_array_new (FALSE, FALSE, sizeof (gint32));
      gpointer args[] = { source, partitions };

      if (source == NULL)
        return FALSE;
      g_ptr_array_add (r->sources, source);
      if (!kt_retry (&never, q->startup_timeout, "Kafka", source_partitions, args, error))
        {
          g_prefix_error (error, "topic %s: ", *t);
          return FALSE;
        }
    }
  return TRUE;
}

/* The job, its kind, the topics and their sources: everything but the
 * offsets, which the plan reads. */
static gboolean
reset_open (KtResetJob *r, const GPtrArray *jobs, GError **error)
{
  return read_job (r, jobs, error) && reset_topics (r, error) && reset_sources (r, error);
}

/* The plan of every topic into @moves, from the stored offsets (FOR
 * UPDATE when @lock, in the caller's transaction) and the watermarks asked
 * after them. */
static gboolean
reset_plan (KtResetJob *r, gboolean lock, GArray *moves, GError **error)
{
  for (guint i = 0; r->topics[i] != NULL; i++)
    {
      const char *topic = r->topics[i];
      KtSource *source = r->sources->pdata[i];
      g_autoptr(GArray) states = g_array_new (FALSE, TRUE, sizeof (KtPartitionState));
      g_autoptr(GHashTable) counted = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL,
                                                             (GDestroyNotify) kt_coverage_free);
      g_autoptr(GHashTable) first = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL,
                                                           g_free);
      KtPartitionState *s;

      if (r->kafka)
        {
          g_autoptr(GArray) partitions = g_array_new (FALSE, FALSE, sizeof (gint32));
          g_autoptr(GArray) all = g_array_new (FALSE, TRUE, sizeof (KtPartitionState));

          if (!kt_source_partitions (source, partitions, KAFKA_TIMEOUT_MS, error))
            return FALSE;
          g_array_set_size (all, partitions->len);
          for (guint p = 0; p < partitions->len; p++)
            g_array_index (all, KtPartitionState, p) =
              (KtPartitionState) { g_array_index (partitions, gint32, p), -1, 0, 0 };
          if (!kt_source_committed (source, (KtPartitionState *) (void *) all->data, all->len,
                                    KAFKA_TIMEOUT_MS, error))
            return FALSE;
          /* A partition the group has no offset of: nothing to move. */
          for (guint p = 0; p < all->len; p++)
            if (g_array_index (all, KtPartitionState, p).stored >= 0)
              g_array_append_val (states, g_array_index (all, KtPartitionState, p));
        }
      else
        {
          g_autoptr(GArray) rows = g_array_new (FALSE, FALSE, sizeof (KtStoredOffset));

          g_array_set_clear_func (rows, (GDestroyNotify) kt_stored_offset_clear);
          if (!kt_offsets_read_job (r->db, r->request->job, topic, lock, rows, error))
            return FALSE;
          for (guint p = 0; p < rows->len; p++)
            {
              const KtStoredOffset *o = &g_array_index (rows, KtStoredOffset, p);
              g_array_append_val (states, ((KtPartitionState) { o->partition, o->offset, 0, 0 }));
            }
        }
      s = (KtPartitionState *) (void *) states->data;
      if (states->len > 0
          && !kt_source_watermarks (source, s, states->len, KAFKA_TIMEOUT_MS, error))
        return FALSE;
      if (r->kind->counted != NULL
          && !r->kind->counted (r->db, r->request->job, topic, counted, error))
        return FALSE;
      if (r->policy.rebuild
          && !kt_offsets_first_counted (r->db, r->request->job, topic, first, error))
        return FALSE;
      if (r->request->target->to == KT_RESET_TIME)
        {
          g_autofree KtTimeOffset *at = g_new0 (KtTimeOffset, MAX (states->len, 1));
          guint before = moves->len;

          if (!kt_time_offsets (source, s, states->len, r->request->target->ms, at,
                                KAFKA_TIMEOUT_MS, error))
            return FALSE;
          g_array_set_size (r->starts, 0);
          for (guint p = 0; p < states->len; p++)
            g_array_append_val (r->starts, ((KtPartitionOffset) { at[p].partition,
                                                                  at[p].offset }));
          if (!kt_reset_plan (&r->policy, r->request->target, topic, s, states->len,
                              r->kind->counted != NULL ? counted : NULL, first, r->starts,
                              moves, error))
            return FALSE;
          for (guint m = before; m < moves->len; m++)
            {
              KtResetMove *mv = &g_array_index (moves, KtResetMove, m);

              mv->by_time = TRUE;
              mv->place = at[m - before].place;
              mv->at = at[m - before].offset;
            }
          continue;
        }
      if (!kt_reset_plan (&r->policy, r->request->target, topic, s, states->len,
                          r->kind->counted != NULL ? counted : NULL, first, r->starts, moves,
                          error))
        return FALSE;
    }
  return TRUE;
}

/* A recount's moves (reset.h): each topic's read again, compared with its
 * audit rows, and taken back out of the output (with @execute). */
static gboolean
reset_recount (KtResetJob *r, GArray *moves, const char *member, gboolean execute,
               GError **error)
{
  /* Read only: the spec borrows the name. */
  KtJobSpec spec = { .name = (char *) r->request->job, .options = r->options };

  if (!r->policy.recount)
    return TRUE;
  for (guint i = 0; r->topics[i] != NULL; i++)
    {
      KtKindContext context = {
        .spec = &spec, .job = r->request->job, .topic = r->topics[i],
        .output = r->job->record->output, .member = member, .db = r->db,
        .source = r->sources->pdata[i],
      };

      if (!kt_reset_recount (&context, r->kind, moves, execute, error))
        return FALSE;
    }
  return TRUE;
}

/* The ranges a plan moves @topic's partitions to, for a commit to Kafka. */
static GArray *
kafka_ranges (const GArray *moves, const char *topic)
{
  GArray *ranges = g_array_new (FALSE, FALSE, sizeof (KtRange));

  for (guint i = 0; i < moves->len; i++)
    {
      const KtResetMove *m = &g_array_index (moves, KtResetMove, i);
      if (g_str_equal (m->topic, topic) && m->to != m->stored)
        g_array_append_val (ranges, ((KtRange) { .partition = m->partition, .from = m->stored,
                                                 .read_from = m->stored, .until = m->to }));
    }
  return ranges;
}

/* The job's offsets are in Kafka: the group's commit cannot join a MySQL
 * transaction. Every check first, in a transaction that writes nothing
 * (a dry run ends there). Going back (a rebuild), the offsets move
 * next: if the MySQL part then fails, the counts and covered sets are
 * still there, and reading again counts nothing twice. Going forward, the
 * audit rows of the skipped ranges go first: if the commit then fails,
 * they only say more than happened. */
static gboolean
reset_kafka (KtResetJob *r, GArray *moves, const char *member, gboolean execute,
             GError **error)
{
  KtCommitResult result;

  if (!reset_plan (r, FALSE, moves, error))
    return FALSE;
  if (!kt_reset_changes (moves))
    return TRUE;
  if (r->policy.rebuild)
    {
      gboolean ok = kt_db_begin (r->db, error)
                    && kt_reset_rebuild (r->db, r->kind, r->request->job, r->policy.output,
                                         FALSE, error);
      kt_db_abort (r->db);
      if (!ok)
        return FALSE;
    }
  if (!execute)
    return TRUE;
  if (!r->policy.rebuild
      && (!kt_db_begin (r->db, error)
          || !kt_reset_record_skips (r->db, r->request->job, r->policy.output, member, moves,
                                     error)
          || !kt_db_finish (r->db, &result, error)))
    {
      kt_db_abort (r->db);
      return FALSE;
    }
  for (guint i = 0; r->topics[i] != NULL; i++)
    {
      g_autoptr(GArray) ranges = kafka_ranges (moves, r->topics[i]);
      if (!kt_source_commit (r->sources->pdata[i], ranges, error))
        return FALSE;
    }
  if (r->policy.rebuild
      && (!kt_db_begin (r->db, error)
          || !kt_reset_rebuild (r->db, r->kind, r->request->job, r->policy.output, TRUE, error)
          || !kt_db_finish (r->db, &result, error)))
    {
      kt_db_abort (r->db);
      return FALSE;
    }
  return TRUE;
}

/* One transaction: the offsets read (FOR UPDATE when @execute), the plan
 * made from them, the rebuild's checks and deletes, the fenced UPDATEs
 * and the audit rows, COMMIT. Without @execute, the same reads and checks
 * in the same order, no lock and no write, and a rollback. */
static gboolean
reset_mysql (KtResetJob *r, GArray *moves, const char *member, gboolean execute,
             GError **error)
{
  for (guint attempt = 1;; attempt++)
    {
      g_autoptr(GError) local = NULL;
      KtCommitResult result = KT_COMMIT_FAILED;

      g_array_set_size (moves, 0);
      /* A dry run reads without locks, in one consistent snapshot: the
       * offsets and the audit rows a recount compares agree even while
       * the job commits (sessions are READ COMMITTED). */
      if ((execute ? kt_db_begin (r->db, &local) : kt_db_snapshot (r->db, &local))
          && reset_plan (r, execute, moves, &local)
          && reset_recount (r, moves, member, execute, &local))
        {
          if (!kt_reset_changes (moves))
            {
              kt_db_abort (r->db);
              return TRUE;
            }
          gboolean checked = !r->policy.rebuild
                             || kt_reset_rebuild (r->db, r->kind, r->request->job,
                                                  r->policy.output, execute, &local);

          if (checked && !execute)
            {
              kt_db_abort (r->db);  /* a dry run: all checked, nothing written */
              return TRUE;
            }
          if (checked
              && kt_reset_apply (r->db, r->request->job, r->policy.output, member, moves, &local)
              && kt_db_finish (r->db, &result, &local))
            return TRUE;
          if (result == KT_COMMIT_UNKNOWN)
            g_prefix_error (&local, "the answer to COMMIT was lost (`ktally status` shows "
                            "whether the offsets moved): ");
        }
      kt_db_abort (r->db);
      if (!g_error_matches (local, KT_ERROR, KT_ERROR_CONFLICT) || attempt == CONFLICT_TRIES)
        {
          g_propagate_error (error, g_steal_pointer (&local));
          return FALSE;
        }
      g_usleep ((gulong) g_random_int_range (20000, 100000));
    }
}

/* The reset, executed or a dry run: one path, so that a dry run refuses
 * whatever an execution refuses, with the same message and exit status;
 * it is the execution without the writes. */
static gboolean
reset_run (KtResetJob *r, GArray *moves, const char *member, gboolean execute,
           GError **error)
{
  return r->kafka ? reset_kafka (r, moves, member, execute, error)
                  : reset_mysql (r, moves, member, execute, error);
}

void
kt_reset_job_clear (KtResetJob *r)
{
  g_clear_pointer (&r->topics, g_strfreev);
  g_clear_pointer (&r->sources, g_ptr_array_unref);
  g_clear_pointer (&r->starts, g_array_unref);
  g_clear_pointer (&r->batch_topic, g_free);
  g_clear_pointer (&r->replay_from, g_array_unref);
  g_clear_pointer (&r->replay_until, g_array_unref);
  if (r->kind != NULL)
    kt_reset_kind_options_free (r->kind, g_steal_pointer (&r->options));
  r->job = NULL;
  g_clear_pointer (&r->jobs, g_ptr_array_unref);
  g_clear_pointer (&r->db, kt_db_free);
}

gboolean
kt_reset_job (const KtResetRequest *request, KtResetJob *r, GArray *moves, GError **error)
{
  static const volatile int never = 0;
  g_autofree char *me = g_strdup_printf ("reset-%d@%s", (int) getpid (), g_get_host_name ());
  g_autofree char *member = kt_schema_member (me);

  *r = (KtResetJob) { .request = request };
  r->db = kt_db_new (request->db);
  r->jobs = g_ptr_array_new_with_free_func ((GDestroyNotify) kt_known_job_free);
  /* A dry run only reads. --execute brings an older schema forward first,
   * as every command that writes does, but not for a name that is no job:
   * a typo changes nothing. */
  if (!kt_retry (&never, request->startup_timeout, "MySQL", readable, r->db, error)
      || !kt_jobs_load (r->db, r->jobs, error)
      || kt_jobs_require (r->db, r->jobs, request->job, error) == NULL)
    return FALSE;
  g_ptr_array_set_size (r->jobs, 0);
  return (request->execute ? kt_migrations_ready (r->db, NULL, NULL, error)
                           : kt_schema_check_ready (r->db, error))
         && kt_jobs_load (r->db, r->jobs, error)
         && reset_open (r, r->jobs, error)
         && reset_run (r, moves, member, request->execute, error);
}
