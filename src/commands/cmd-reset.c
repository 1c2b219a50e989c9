/* cmd-reset.c - `ktally reset`: moves a job's stored offsets, exactly once.
 *
 * Prints the plan (reset.h): per partition, the stored offset, where it
 * goes and what that means for the output. With --execute, the plan is
 * made inside one transaction that read the offsets FOR UPDATE, and
 * applied there, every UPDATE fenced on the value read: a running
 * instance's next commit is fenced and plans again from the new offsets.
 * Without it (a dry run), the same code runs every read and every check
 * of the execution, without its locks and writes, so that it refuses
 * what the execution refuses. A move that would count offsets twice is
 * refused (exit 2), whatever the flags; the job's kind says which moves
 * those are (kind.h). A job whose offsets live in Kafka's consumer group
 * has them committed there, which nothing can fence: the plan says so. */
#include "command.h"

#include <stddef.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <json-glib/json-glib.h>
#include "by-time.h"
#include "error.h"
#include "instant.h"
#include "jobs.h"
#include "kind.h"
#include "migrations.h"
#include "offsets.h"
#include "reset.h"
#include "retry.h"
#include "schema.h"
#include "source.h"

#define KAFKA_TIMEOUT_MS 10000
/* Deadlocks with a running instance's first commit (which locks in the
 * other order) are retried, the whole transaction, this many times. */
#define CONFLICT_TRIES 5
/* Intervals shown per effect before "and N more". */
#define SHOWN 3

static const char SUMMARY[] =
  "Moves a job's stored offsets: --to earliest (the log start), latest (the\n"
  "high watermark), PARTITION:OFFSET[,...] or batch:ID (where the audited\n"
  "batch ID started); --to-datetime TIME or --by-duration DURATION (the\n"
  "first record at or after that moment, per partition); --shift-by N.\n"
  "Prints the plan, per partition, and what it means; --execute applies it\n"
  "in one transaction, fenced against running instances. A move that would\n"
  "count offsets twice is refused (exit 2): moving a transactional job back\n"
  "needs --rebuild, which takes back what the job counted from there (or,\n"
  "with --to earliest, empties its table) and counts it again.";

/* reset's own options. */
typedef struct
{
  char     *to;                /* --to, as given (reset.h parses it) */
  char     *to_datetime;       /* --to-datetime, as given (instant.h parses it) */
  double    by_duration;       /* --by-duration, seconds; 0: not given */
  char     *shift_by;          /* --shift-by, as given */
  gboolean  rebuild;           /* --rebuild */
  gboolean  accept_data_loss;  /* --accept-data-loss */
} ResetOptions;

static const KtOption reset_options[] = {
  { "to", 0, NULL, KT_OPT_TEXT, offsetof (ResetOptions, to), .commands = KT_CMD_RESET, .metavar = "WHERE",
    .help = "Where to: earliest, latest, PARTITION:OFFSET[,...] or batch:ID" },
  { "to-datetime", 0, NULL, KT_OPT_TEXT, offsetof (ResetOptions, to_datetime),
    .commands = KT_CMD_RESET, .metavar = "TIME",
    .help = "Where to: each partition's first record whose Kafka timestamp is at or after "
            "TIME (ISO 8601, e.g. 2024-05-01T14:00:00+02:00; without an offset, local time), "
            "or its high watermark when none is" },
  { "by-duration", 0, NULL, KT_OPT_SECONDS, offsetof (ResetOptions, by_duration), .min = 0,
    .max = 1e11, .commands = KT_CMD_RESET, .flags = KT_OPT_OPEN_MIN, .metavar = "DURATION",
    .help = "Where to: as --to-datetime, DURATION (e.g. 1h, 90m, 2d) before now" },
  { "shift-by", 0, NULL, KT_OPT_TEXT, offsetof (ResetOptions, shift_by),
    .commands = KT_CMD_RESET, .metavar = "N",
    .help = "Where to: each partition's stored offset plus N (back when negative), stopping "
            "at the log start or the high watermark" },
  { "rebuild", 0, NULL, KT_OPT_SWITCH, offsetof (ResetOptions, rebuild), .commands = KT_CMD_RESET,
    .help = "Going back in a transactional count job: take back from its table what it "
            "counted from the new offsets on, and count that again; with --to earliest, "
            "empty its output and count everything again (the only ways back for a "
            "transactional job)" },
  { "accept-data-loss", 0, NULL, KT_OPT_SWITCH, offsetof (ResetOptions, accept_data_loss),
    .commands = KT_CMD_RESET,
    .help = "With --rebuild: rebuild although retention removed offsets the job counted" },
  KT_OPTION_END
};

static const ResetOptions *
own (const KtConfig *config)
{
  return config->own;
}

/* What the reset works on. */
typedef struct
{
  const KtConfig   *config;
  KtDb             *db;
  const KtJobInfo  *job;
  const KtJobKind  *kind;
  KtResetPolicy     policy;
  KtResetTarget     target;
  gboolean          kafka;        /* offsets in the consumer group ktally-JOB */
  char            **topics;       /* the topics reset */
  GPtrArray        *sources;      /* KtSource per topic */
  GArray           *starts;       /* batch:ID: KtPartitionOffset */
  char             *batch_topic;  /* batch:ID: its topic */
  const char       *moment;       /* --to-datetime or --by-duration: how it was given */
  gpointer          options;      /* a recount: the kind's options, as the table records */
  GArray           *replay_from;  /* a replay's job: its range (KtPartitionOffset) */
  GArray           *replay_until;
} Reset;

static void
reset_clear (Reset *r)
{
  kt_reset_target_clear (&r->target);
  g_clear_pointer (&r->topics, g_strfreev);
  g_clear_pointer (&r->sources, g_ptr_array_unref);
  g_clear_pointer (&r->starts, g_array_unref);
  g_clear_pointer (&r->batch_topic, g_free);
  g_clear_pointer (&r->replay_from, g_array_unref);
  g_clear_pointer (&r->replay_until, g_array_unref);
  if (r->kind != NULL)
    kt_reset_kind_options_free (r->kind, g_steal_pointer (&r->options));
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Reset, reset_clear)

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

/* The target of whichever of --to, --to-datetime, --by-duration and
 * --shift-by was given (check_flags() made sure it is one); *@moment says
 * how a moment was given. */
static gboolean
reset_target (const ResetOptions *o, KtResetTarget *target, const char **moment,
              GError **error)
{
  g_autoptr(GTimeZone) local = g_time_zone_new_local ();
  gint64 shift;

  *moment = NULL;
  if (o->to != NULL)
    return kt_reset_target_parse (o->to, target, error);
  *target = (KtResetTarget) { .to = KT_RESET_TIME };
  if (o->to_datetime != NULL)
    {
      *moment = "--to-datetime";
      return kt_instant_parse ("--to-datetime", o->to_datetime, local, &target->ms, error);
    }
  if (o->by_duration > 0)
    {
      *moment = "--by-duration";
      target->ms = kt_instant_now () - (gint64) (o->by_duration * 1000);
      return TRUE;
    }
  /* Offsets are below 2^63: a shift beyond 2^62 either way leaves any log. */
  if (!g_ascii_string_to_signed (o->shift_by, 10, -(G_GINT64_CONSTANT (1) << 62),
                                 G_GINT64_CONSTANT (1) << 62, &shift, NULL))
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "--shift-by: expected a whole number of "
                   "offsets (negative: back), got '%s'", o->shift_by);
      return FALSE;
    }
  *target = (KtResetTarget) { .to = KT_RESET_SHIFT, .shift = shift };
  return TRUE;
}

/* The job and its kind, the target and the policy from them. */
static gboolean
reset_job (Reset *r, const GPtrArray *jobs, GError **error)
{
  const KtConfig *config = r->config;
  const KtJobRecord *record;

  r->job = kt_jobs_require (r->db, jobs, config->job.name, error);
  if (r->job == NULL)
    return FALSE;
  record = r->job->record;
  if (record == NULL)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "job %s: what it is (its kind and mode) is not recorded yet in %s; a "
                   "commit of this ktally records it (or `ktally init-db` on an older "
                   "schema): until then, nothing to reset", config->job.name, kt_db_name (r->db));
      return FALSE;
    }
  r->kind = kt_kind_lookup (record->kind, record->mode, error);
  if (r->kind == NULL)
    {
      g_prefix_error (error, "job %s: ", config->job.name);
      return FALSE;
    }
  r->kafka = g_strcmp0 (record->offsets, "kafka") == 0;
  if (own (config)->rebuild && !r->kind->rebuilds)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "--rebuild: job %s (--kind %s) cannot be "
                   "rebuilt: %s", config->job.name, record->kind,
                   r->kind->why_no_rewind != NULL ? r->kind->why_no_rewind : "not supported");
      return FALSE;
    }
  if (!reset_target (own (config), &r->target, &r->moment, error))
    return FALSE;
  /* A replay's job counts its range, and no reset moves it out of it. */
  if (g_str_has_prefix (config->job.name, KT_REPLAY_JOB_PREFIX))
    {
      if (record->replay_range == NULL || *record->replay_range == '\0')
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "job %s is a replay whose range is not "
                       "recorded (a replay of a ktally before schema version 5): a reset "
                       "could move it outside its range; refused", config->job.name);
          return FALSE;
        }
      r->replay_from = g_array_new (FALSE, FALSE, sizeof (KtPartitionOffset));
      r->replay_until = g_array_new (FALSE, FALSE, sizeof (KtPartitionOffset));
      if (!kt_replay_range_parse (record->replay_range, r->replay_from, r->replay_until, error))
        {
          g_prefix_error (error, "job %s: ", config->job.name);
          return FALSE;
        }
    }
  r->policy = (KtResetPolicy) {
    .job = config->job.name, .output = record->output, .reread = r->kind->reread,
    .why_no_rewind = r->kind->why_no_rewind,
    .rebuild = own (config)->rebuild && r->target.to == KT_RESET_EARLIEST,
    .recount = own (config)->rebuild && r->target.to != KT_RESET_EARLIEST,
    .retracts = r->kind->retract != NULL,
    .accept_data_loss = own (config)->accept_data_loss,
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
reset_topics (Reset *r, GError **error)
{
  const KtConfig *config = r->config;

  if (r->target.to == KT_RESET_TIME)
    r->starts = g_array_new (FALSE, FALSE, sizeof (KtPartitionOffset));
  if (r->target.to == KT_RESET_BATCH)
    {
      r->starts = g_array_new (FALSE, FALSE, sizeof (KtPartitionOffset));
      if (!kt_offsets_batch_starts (r->db, config->job.name, r->target.batch, &r->batch_topic,
                                    r->starts, error))
        return FALSE;
      if (config->job.topic != NULL && !g_str_equal (config->job.topic, r->batch_topic))
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "--to batch:%" G_GINT64_FORMAT
                       " is a batch of topic %s, not of --topic %s", r->target.batch,
                       r->batch_topic, config->job.topic);
          return FALSE;
        }
      r->topics = g_strsplit (r->batch_topic, ",", 1);
    }
  else if (config->job.topic != NULL)
    {
      if (!g_strv_contains ((const char *const *) r->job->topics, config->job.topic))
        {
          g_autofree char *reads = g_strjoinv (", ", r->job->topics);
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "--topic: job %s does not read %s "
                       "(it reads %s)", config->job.name, config->job.topic, reads);
          return FALSE;
        }
      r->topics = g_strsplit (config->job.topic, ",", 1);
    }
  else
    {
      if (r->target.to == KT_RESET_OFFSETS && g_strv_length (r->job->topics) > 1)
        {
          g_autofree char *reads = g_strjoinv (", ", r->job->topics);
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "--to: job %s reads several topics "
                       "(%s): give --topic for PARTITION:OFFSET", config->job.name, reads);
          return FALSE;
        }
      r->topics = g_strdupv (r->job->topics);
    }
  return TRUE;
}

/* A source per topic, each waited for until it knows its partitions. */
static gboolean
reset_sources (Reset *r, GError **error)
{
  static const volatile int never = 0;
  const KtConfig *config = r->config;

  r->sources = g_ptr_array_new_with_free_func ((GDestroyNotify) kt_source_free);
  for (char **t = r->topics; *t != NULL; t++)
    {
      KtSourceConfig source_config = {
        .brokers = config->kafka.brokers,
        .topic = *t,
        .client_id = config->job.name,  /* ktally-JOB: where --offsets kafka keeps them */
        .properties = (const char *const *) config->kafka.properties,
      };
      KtSource *source = kt_source_new (&source_config, error);
      g_autoptr(GArray) partitions = g_array_new (FALSE, FALSE, sizeof (gint32));
      gpointer args[] = { source, partitions };

      if (source == NULL)
        return FALSE;
      g_ptr_array_add (r->sources, source);
      if (!kt_retry (&never, config->run.startup_timeout, "Kafka", source_partitions, args, error))
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
reset_open (Reset *r, const GPtrArray *jobs, GError **error)
{
  return reset_job (r, jobs, error) && reset_topics (r, error) && reset_sources (r, error);
}

/* The plan of every topic into @moves, from the stored offsets (FOR
 * UPDATE when @lock, in the caller's transaction) and the watermarks asked
 * after them. */
static gboolean
reset_plan (Reset *r, gboolean lock, GArray *moves, GError **error)
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
          if (!kt_offsets_read_job (r->db, r->config->job.name, topic, lock, rows, error))
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
          && !r->kind->counted (r->db, r->config->job.name, topic, counted, error))
        return FALSE;
      if (r->policy.rebuild
          && !kt_offsets_first_counted (r->db, r->config->job.name, topic, first, error))
        return FALSE;
      if (r->target.to == KT_RESET_TIME)
        {
          g_autofree KtTimeOffset *at = g_new0 (KtTimeOffset, MAX (states->len, 1));
          guint before = moves->len;

          if (!kt_time_offsets (source, s, states->len, r->target.ms, at, KAFKA_TIMEOUT_MS,
                                error))
            return FALSE;
          g_array_set_size (r->starts, 0);
          for (guint p = 0; p < states->len; p++)
            g_array_append_val (r->starts, ((KtPartitionOffset) { at[p].partition,
                                                                  at[p].offset }));
          if (!kt_reset_plan (&r->policy, &r->target, topic, s, states->len,
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
      if (!kt_reset_plan (&r->policy, &r->target, topic, s, states->len,
                          r->kind->counted != NULL ? counted : NULL, first, r->starts, moves,
                          error))
        return FALSE;
    }
  return TRUE;
}

/* A recount's moves (reset.h): each topic's read again, compared with its
 * audit rows, and taken back out of the output (with @execute). */
static gboolean
reset_recount (Reset *r, GArray *moves, const char *member, gboolean execute, GError **error)
{
  KtJobSpec spec = { .name = r->config->job.name, .options = r->options };

  if (!r->policy.recount)
    return TRUE;
  for (guint i = 0; r->topics[i] != NULL; i++)
    {
      KtKindContext context = {
        .spec = &spec, .job = r->config->job.name, .topic = r->topics[i],
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
        g_array_append_val (ranges, ((KtRange) { m->partition, m->stored, m->stored, m->to }));
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
reset_kafka (Reset *r, GArray *moves, const char *member, gboolean execute, GError **error)
{
  KtCommitResult result;

  if (!reset_plan (r, FALSE, moves, error))
    return FALSE;
  if (!kt_reset_changes (moves))
    return TRUE;
  if (r->policy.rebuild)
    {
      gboolean ok = kt_db_begin (r->db, error)
                    && kt_reset_rebuild (r->db, r->kind, r->config->job.name, r->policy.output,
                                         FALSE, error);
      kt_db_abort (r->db);
      if (!ok)
        return FALSE;
    }
  if (!execute)
    return TRUE;
  if (!r->policy.rebuild
      && (!kt_db_begin (r->db, error)
          || !kt_reset_record_skips (r->db, r->config->job.name, r->policy.output, member, moves,
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
          || !kt_reset_rebuild (r->db, r->kind, r->config->job.name, r->policy.output, TRUE, error)
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
reset_mysql (Reset *r, GArray *moves, const char *member, gboolean execute, GError **error)
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
                             || kt_reset_rebuild (r->db, r->kind, r->config->job.name,
                                                  r->policy.output, execute, &local);

          if (checked && !execute)
            {
              kt_db_abort (r->db);  /* a dry run: all checked, nothing written */
              return TRUE;
            }
          if (checked
              && kt_reset_apply (r->db, r->config->job.name, r->policy.output, member, moves, &local)
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
reset_run (Reset *r, GArray *moves, const char *member, gboolean execute, GError **error)
{
  return r->kafka ? reset_kafka (r, moves, member, execute, error)
                  : reset_mysql (r, moves, member, execute, error);
}

/* "[a, b), [c, d) and 3 more" */
static void
append_intervals (GString *out, const GArray *a)
{
  for (guint i = 0; i < a->len && i < SHOWN; i++)
    g_string_append_printf (out, "%s[%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ")",
                            i ? ", " : "", g_array_index (a, KtInterval, i).from,
                            g_array_index (a, KtInterval, i).until);
  if (a->len > SHOWN)
    g_string_append_printf (out, " and %u more", a->len - SHOWN);
}

/* What a move means, in words. */
static char *
effect (const KtResetMove *m)
{
  GString *out = g_string_new (NULL);
  const char *sep = "";

  if (m->rebuild)
    {
      g_string_append_printf (out, "rebuild: [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT
                              ") counted again, from emptied counts", m->to, m->high);
      if (m->lost.until > m->lost.from)
        g_string_append_printf (out, "; [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ") gone to "
                                "retention: no longer counted", m->lost.from, m->lost.until);
      return g_string_free (out, FALSE);
    }
  if (m->by_time)
    g_string_append_printf (out, "the moment is at %" G_GINT64_FORMAT " (%s); ", m->at,
                            kt_time_place_words (m->place));
  if (m->clamped)
    g_string_append_printf (out, "stopped at the %s; ", m->stopped);
  if (m->kept.until > m->kept.from)
    g_string_append_printf (out, "[%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ") was skipped by "
                            "an earlier reset and stays skipped (never counted): the recount "
                            "starts after it, at %" G_GINT64_FORMAT "; ", m->kept.from,
                            m->kept.until, m->kept.until);
  if (m->to == m->stored)
    return g_string_free (g_string_append (out, "stays"), FALSE);
  if (m->recount)
    {
      g_string_append_printf (out, "back: recount [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT
                              "): read again, as its audit rows recorded (%" G_GUINT64_FORMAT
                              " records, %" G_GUINT64_FORMAT " ERROR, %" G_GUINT64_FORMAT
                              " malformed), taken back out of %u row%s and counted again",
                              m->to, m->stored, m->taken.records, m->taken.errors,
                              m->taken.malformed, m->taken_rows, m->taken_rows == 1 ? "" : "s");
      if (m->by_time && m->to < m->at)
        g_string_append_printf (out, " (from %" G_GINT64_FORMAT ", where the batch holding %"
                                G_GINT64_FORMAT " started)", m->to, m->at);
      return g_string_free (out, FALSE);
    }
  g_string_append (out, m->to > m->stored ? "forward: " : "back: ");
  if (m->skipped->len > 0)
    {
      g_string_append (out, "offsets ");
      append_intervals (out, m->skipped);
      g_string_append (out, " will never be counted");
      if (m->stored < m->low)
        g_string_append_printf (out, " ([%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ") are "
                                "gone to retention already)", m->stored,
                                MIN (m->low, m->to));
      sep = "; ";
    }
  if (m->counted_already->len > 0)
    {
      g_string_append (out, sep);
      append_intervals (out, m->counted_already);
      g_string_append (out, m->to > m->stored ? " counted already"
                                              : " read again: counted already, not counted twice");
      sep = "; ";
    }
  if (m->newly_counted->len > 0)
    {
      g_string_append (out, sep);
      append_intervals (out, m->newly_counted);
      g_string_append (out, " never counted before: counted when read");
    }
  return g_string_free (out, FALSE);
}

static void
json_intervals (JsonBuilder *b, const char *name, const GArray *a)
{
  json_builder_set_member_name (b, name);
  json_builder_begin_array (b);
  for (guint i = 0; i < a->len; i++)
    {
      json_builder_begin_array (b);
      json_builder_add_int_value (b, g_array_index (a, KtInterval, i).from);
      json_builder_add_int_value (b, g_array_index (a, KtInterval, i).until);
      json_builder_end_array (b);
    }
  json_builder_end_array (b);
}

static void
print_json (const Reset *r, const GArray *moves, gboolean executed)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *out = NULL;
  const KtJobRecord *rec = r->job->record;

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "job");
  json_builder_add_string_value (b, r->job->name);
  json_builder_set_member_name (b, "kind");
  json_builder_add_string_value (b, rec->kind);
  json_builder_set_member_name (b, "mode");
  json_builder_add_string_value (b, rec->mode);
  json_builder_set_member_name (b, "offsets");
  json_builder_add_string_value (b, rec->offsets);
  json_builder_set_member_name (b, "table");
  json_builder_add_string_value (b, rec->output);
  json_builder_set_member_name (b, "rebuild");
  json_builder_add_boolean_value (b, r->policy.rebuild);
  json_builder_set_member_name (b, "changes");
  json_builder_add_boolean_value (b, kt_reset_changes (moves));
  json_builder_set_member_name (b, "executed");
  json_builder_add_boolean_value (b, executed);
  if (r->target.to == KT_RESET_TIME)
    {
      g_autofree char *utc = kt_instant_format (r->target.ms);

      json_builder_set_member_name (b, "moment");
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "given");
      json_builder_add_string_value (b, r->moment);
      json_builder_set_member_name (b, "utc");
      json_builder_add_string_value (b, utc);
      json_builder_set_member_name (b, "ms");
      json_builder_add_int_value (b, r->target.ms);
      json_builder_end_object (b);
    }
  json_builder_set_member_name (b, "partitions");
  json_builder_begin_array (b);
  for (guint i = 0; i < moves->len; i++)
    {
      const KtResetMove *m = &g_array_index (moves, KtResetMove, i);
      g_autofree char *what = effect (m);

      json_builder_begin_object (b);
      json_builder_set_member_name (b, "topic");
      json_builder_add_string_value (b, m->topic);
      json_builder_set_member_name (b, "partition");
      json_builder_add_int_value (b, m->partition);
      json_builder_set_member_name (b, "stored");
      json_builder_add_int_value (b, m->stored);
      json_builder_set_member_name (b, "log_start");
      json_builder_add_int_value (b, m->low);
      json_builder_set_member_name (b, "high_watermark");
      json_builder_add_int_value (b, m->high);
      json_builder_set_member_name (b, "new");
      json_builder_add_int_value (b, m->to);
      if (m->by_time)
        {
          json_builder_set_member_name (b, "at");
          json_builder_begin_object (b);
          json_builder_set_member_name (b, "offset");
          json_builder_add_int_value (b, m->at);
          json_builder_set_member_name (b, "place");
          json_builder_add_string_value (b, kt_time_place_name (m->place));
          json_builder_end_object (b);
        }
      if (r->target.to == KT_RESET_SHIFT || r->replay_from != NULL)
        {
          json_builder_set_member_name (b, "clamped");
          json_builder_add_boolean_value (b, m->clamped);
        }
      json_builder_set_member_name (b, "move");
      json_builder_add_string_value (b, m->rebuild ? "rebuild" : m->recount ? "recount"
                                        : m->to > m->stored ? "forward"
                                        : m->to < m->stored ? "back" : "stays");
      json_builder_set_member_name (b, "recount");
      if (m->recount)
        {
          json_builder_begin_object (b);
          json_builder_set_member_name (b, "records");
          json_builder_add_int_value (b, (gint64) m->taken.records);
          json_builder_set_member_name (b, "lines");
          json_builder_add_int_value (b, (gint64) m->taken.lines);
          json_builder_set_member_name (b, "errors");
          json_builder_add_int_value (b, (gint64) m->taken.errors);
          json_builder_set_member_name (b, "malformed");
          json_builder_add_int_value (b, (gint64) m->taken.malformed);
          json_builder_set_member_name (b, "rows");
          json_builder_add_int_value (b, m->taken_rows);
          json_builder_end_object (b);
        }
      else
        json_builder_add_null_value (b);
      json_intervals (b, "skipped", m->skipped);
      json_intervals (b, "counted_already", m->counted_already);
      json_intervals (b, "newly_counted", m->newly_counted);
      json_builder_set_member_name (b, "kept_skipped");
      if (m->kept.until > m->kept.from)
        {
          json_builder_begin_array (b);
          json_builder_add_int_value (b, m->kept.from);
          json_builder_add_int_value (b, m->kept.until);
          json_builder_end_array (b);
        }
      else
        json_builder_add_null_value (b);
      json_builder_set_member_name (b, "lost");
      if (m->lost.until > m->lost.from)
        {
          json_builder_begin_array (b);
          json_builder_add_int_value (b, m->lost.from);
          json_builder_add_int_value (b, m->lost.until);
          json_builder_end_array (b);
        }
      else
        json_builder_add_null_value (b);
      json_builder_set_member_name (b, "effect");
      json_builder_add_string_value (b, what);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  out = json_generator_to_data (gen, NULL);
  printf ("%s\n", out);
}

static void
print_text (const Reset *r, const GArray *moves, gboolean executed)
{
  const KtJobRecord *rec = r->job->record;
  g_autofree char *rows = kt_kind_rows_table (r->kind, rec->output);
  const char *topic = NULL;
  guint moved = 0;

  printf ("job %s: %s, %s, offsets in %s, counts into %s\n", r->job->name, rec->kind,
          rec->mode, r->kafka ? "Kafka's consumer group" : "kafka_offset", rec->output);
  if (r->target.to == KT_RESET_TIME)
    {
      g_autofree char *utc = kt_instant_format (r->target.ms);

      printf ("%s: %s; each partition goes to its first record whose timestamp is at or "
              "after it\n", r->moment, utc);
    }
  for (guint i = 0; i < moves->len; i++)
    {
      const KtResetMove *m = &g_array_index (moves, KtResetMove, i);
      g_autofree char *what = effect (m);

      if (topic == NULL || !g_str_equal (topic, m->topic))
        {
          topic = m->topic;
          printf ("topic %s\n%9s %12s %12s %14s %12s  %s\n", topic, "partition", "stored",
                  "log start", "high watermark", "new", "what it means");
        }
      moved += m->to != m->stored || m->rebuild;
      printf ("%9d %12" G_GINT64_FORMAT " %12" G_GINT64_FORMAT " %14" G_GINT64_FORMAT " %12"
              G_GINT64_FORMAT "  %s\n", m->partition, m->stored, m->low, m->high, m->to, what);
    }
  if (moves->len == 0)
    printf ("job %s stores no offsets%s%s yet: nothing to reset\n", r->job->name,
            r->config->job.topic != NULL ? " of topic " : "",
            r->config->job.topic != NULL ? r->config->job.topic : "");
  else if (moved == 0)
    printf ("nothing to change: every partition is there already\n");
  else if (!executed)
    printf ("dry run: nothing changed; run the same command with --execute to apply it\n");
  else if (r->kafka)
    printf ("done: %u partition%s committed to Kafka's consumer group ktally-%s; this is "
            "not fenced: an instance of job %s that runs commits its own offsets over them, "
            "so stop it first\n", moved, moved == 1 ? "" : "s", r->job->name, r->job->name);
  else
    printf ("done: %u partition%s moved in one transaction; an instance of job %s that runs "
            "is fenced at its next commit and goes on from the new offsets\n", moved,
            moved == 1 ? "" : "s", r->job->name);
  if (r->policy.recount && moved > 0)
    {
      guint64 errors = 0;

      for (guint i = 0; i < moves->len; i++)
        errors += g_array_index (moves, KtResetMove, i).taken.errors;
      printf ("%s %" G_GUINT64_FORMAT " ERROR line%s of those ranges out of %s, and their "
              "audit rows; job %s counts them again\n", executed ? "took" : "--execute takes",
              errors, errors == 1 ? "" : "s", rec->output, r->job->name);
    }
  if (r->policy.rebuild && moved > 0 && rows != NULL)
    printf ("%s the rows of job %s in %s%s%s, and its audit rows\n",
            executed ? "deleted" : "--execute deletes", r->job->name, rows,
            r->kind->records != NULL ? " and " : "",
            r->kind->records != NULL ? r->kind->records : "");
  else if (r->policy.rebuild && moved > 0)
    printf ("%s every row of %s (no other job writes it), and the audit rows of job %s\n",
            executed ? "deleted" : "--execute deletes", rec->output, r->job->name);
}

static gboolean
kt_reset (const KtConfig *config, GError **error)
{
  static const volatile int never = 0;
  g_autoptr(KtDb) db = kt_db_new (&config->db);
  g_autoptr(GPtrArray) jobs = g_ptr_array_new_with_free_func ((GDestroyNotify) kt_job_info_free);
  g_autoptr(GArray) moves = g_array_new (FALSE, FALSE, sizeof (KtResetMove));
  g_autofree char *me = g_strdup_printf ("reset-%d@%s", (int) getpid (), g_get_host_name ());
  g_autofree char *member = kt_schema_member (me);
  g_auto(Reset) r = { .config = config };

  g_array_set_clear_func (moves, (GDestroyNotify) kt_reset_move_clear);
  r.db = db;
  /* A dry run only reads. --execute brings an older schema forward first,
   * as every command that writes does, but not for a name that is no job:
   * a typo changes nothing. */
  if (!kt_retry (&never, config->run.startup_timeout, "MySQL", readable, db, error)
      || !kt_jobs_load (db, jobs, error)
      || kt_jobs_require (db, jobs, config->job.name, error) == NULL)
    return FALSE;
  g_ptr_array_set_size (jobs, 0);
  if (!(config->execute ? kt_migrations_ready (db, NULL, NULL, error) : kt_schema_check_ready (db, error))
      || !kt_jobs_load (db, jobs, error)
      || !reset_open (&r, jobs, error)
      || !reset_run (&r, moves, member, config->execute, error))
    return FALSE;

  if (config->json)
    print_json (&r, moves, config->execute && kt_reset_changes (moves));
  else
    print_text (&r, moves, config->execute);
  return TRUE;
}

/* The flags of a reset that go together, and where to spelled right. */
static gboolean
check_flags (KtConfig *config, GError **error)
{
  const ResetOptions *o = own (config);
  KtResetTarget target = { 0 };
  const char *moment;
  guint given = (o->to != NULL) + (o->to_datetime != NULL) + (o->by_duration > 0)
                + (o->shift_by != NULL);

  if (!kt_options_job (config, TRUE, " (`ktally jobs` lists them)", error))
    return FALSE;
  if (given != 1)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE, given == 0
                           ? "--to is required (earliest, latest, PARTITION:OFFSET[,...] or "
                             "batch:ID), or --to-datetime, --by-duration or --shift-by"
                           : "--to, --to-datetime, --by-duration and --shift-by exclude each "
                             "other: give one");
      return FALSE;
    }
  if (!reset_target (o, &target, &moment, error))
    return FALSE;
  kt_reset_target_clear (&target);
  if (!kt_options_execute (config, error))
    return FALSE;
  if (o->rebuild && g_strcmp0 (o->to, "latest") == 0)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE, "--rebuild counts again what the "
                           "job counted from where it goes back to: not with --to latest");
      return FALSE;
    }
  if (o->rebuild && g_strcmp0 (o->to, "earliest") == 0 && config->job.topics != NULL)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE, "--to earliest --rebuild empties "
                           "the job's whole output, so it rewinds every topic: leave out "
                           "--topic");
      return FALSE;
    }
  if (o->accept_data_loss && !(o->rebuild && g_strcmp0 (o->to, "earliest") == 0))
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE, "--accept-data-loss goes with "
                           "--rebuild only, of --to earliest");
      return FALSE;
    }
  return TRUE;
}

static const KtOptionNote notes[] = {
  { "brokers", "Kafka bootstrap servers (the watermarks; the consumer group of a job with "
               "--offsets kafka)" },
  { "job", "The job to reset (`ktally jobs` lists them)" },
  { "topic", "Only this topic of the job (default: every topic it reads)" },
  { "json", "Print the plan as one JSON document" },
  { NULL, NULL }
};

static gboolean
check (KtConfig *config, const KtOptionValues *values, GError **error)
{
  (void) values;
  return check_flags (config, error)
         && kt_options_db (config, error)
         && kt_options_brokers (config, TRUE, error);
}

static gboolean
handle (const KtConfig *config, volatile int *stop, GError **error)
{
  (void) stop;
  return kt_reset (config, error);
}

const KtCommand kt_command_reset = {
  .name = "reset",
  .summary = "move a job's stored offsets (--dry-run, --execute), never counting twice",
  .help = SUMMARY,
  .bit = KT_CMD_RESET,
  .notes = notes,
  .options = reset_options,
  .options_size = sizeof (ResetOptions),
  .check = check,
  .handle = handle,
};
