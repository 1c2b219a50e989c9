/* reset.h - `ktally reset`: moving a job's stored offsets, exactly once.
 *
 * A plan says, per partition, where the stored offset stands, where it
 * goes and what that means for the output: which offsets will never be
 * counted (a move forward), which are read again and counted already (a
 * move back in a kind that knows what it counted), which are counted
 * again from an emptied output (--rebuild). A move that would count an
 * offset twice is refused, naming it. The plan itself is pure arithmetic
 * (kt_reset_plan), so its rules are unit-tested; applying it
 * (kt_reset_apply, kt_reset_rebuild) runs inside the caller's transaction,
 * which read the stored offsets FOR UPDATE: every UPDATE is fenced on the
 * value read there, so a running instance's next commit is fenced, never
 * doubled. */
#pragma once
#include <glib.h>
#include "by-time.h"
#include "coverage.h"
#include "db.h"
#include "jobs.h"
#include "kind.h"
#include "offsets.h"
#include "plan.h"
#include "source.h"

typedef enum
{
  KT_RESET_EARLIEST,  /* the log start */
  KT_RESET_LATEST,    /* the high watermark */
  KT_RESET_OFFSETS,   /* P:OFF[,P:OFF...] */
  KT_RESET_BATCH,     /* batch:ID: where an audited batch started */
  KT_RESET_TIME,      /* --to-datetime, --by-duration: the first record at or after a
                       * moment (by-time.h), resolved per partition by the caller */
  KT_RESET_SHIFT,     /* --shift-by N: the stored offset + N, within the log */
} KtResetTo;

typedef struct
{
  KtResetTo  to;
  GArray    *offsets;  /* KT_RESET_OFFSETS: KtPartitionOffset, by partition */
  gint64     batch;    /* KT_RESET_BATCH: a ktally_batches id */
  gint64     ms;       /* KT_RESET_TIME: the moment, milliseconds since the epoch */
  gint64     shift;    /* KT_RESET_SHIFT */
} KtResetTarget;

/* Parses --to: earliest, latest, P:OFF[,P:OFF...] or batch:ID.
 * KT_ERROR_USAGE naming the flag. */
gboolean kt_reset_target_parse (const char *text, KtResetTarget *target, GError **error);
void     kt_reset_target_clear (KtResetTarget *target);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (KtResetTarget, kt_reset_target_clear)

/* What a reset may do to one job: its kind's answer, and the user's flags. */
typedef struct
{
  const char *job;
  const char *output;           /* the table it writes, for messages */
  KtReread    reread;           /* its kind's (kind.h) */
  const char *why_no_rewind;    /* its kind's, with KT_REREAD_REFUSED */
  gboolean    rebuild;          /* --to earliest --rebuild: every partition to its log
                                 * start, output emptied */
  gboolean    recount;          /* --rebuild with another target: a move back takes what
                                 * the job counted from there back out, and counts it again;
                                 * a partition behind the target stays */
  gboolean    retracts;         /* its kind can take counts back (kind.h's retract) */
  gboolean    accept_data_loss; /* --accept-data-loss: rebuild although retention took
                                 * offsets the job had counted */
  /* A replay's job: its range, KtPartitionOffset by partition; every move
   * stays within [from, until] of each partition (a rebuild goes back to
   * from, not to the log start). NULL for other jobs. */
  const GArray *replay_from;
  const GArray *replay_until;
} KtResetPolicy;

/* One partition of a plan. */
typedef struct
{
  char     *topic;
  gint32    partition;
  gint64    stored;           /* where it stands */
  gint64    low, high;        /* the log start and the high watermark */
  gint64    to;               /* where it goes; == stored: it stays */
  gboolean  rebuild;          /* [to, high) counted again into an emptied output */
  GArray   *skipped;          /* KtInterval: moved past, never counted */
  GArray   *counted_already;  /* KtInterval: counted before (moved past, or read
                               * again and not counted again) */
  GArray   *newly_counted;    /* KtInterval: moved back over offsets never counted:
                               * counted when read */
  KtInterval lost;            /* rebuild: counted before, gone to retention since:
                               * not counted again (empty when from == until) */
  gboolean  by_time;          /* KT_RESET_TIME: where the moment fell */
  KtTimePlace place;
  gint64    at;               /* ...its offset (to, unless a recount moved it back) */
  gboolean  clamped;          /* KT_RESET_SHIFT: stored + N left the log; a replay's job:
                               * the target left its range; to is the end it stopped at */
  const char *stopped;        /* ...which end: "log start", "replay's --until"... */
  gboolean  recount;          /* back, with policy->recount: [to, stored) taken back out of
                               * the output (kt_reset_recount()) and counted again */
  KtRangeStats taken;         /* ...what its audit rows recorded, matched by reading it again */
  guint     taken_rows;       /* ...the output rows that lowers */
  KtInterval kept;            /* ...a range an earlier reset skipped, which stays skipped:
                               * the recount starts after it (empty: none) */
} KtResetMove;

void     kt_reset_move_clear (KtResetMove *move);

/* Plans @topic's moves for @policy and @target into @moves (KtResetMove,
 * appended; give the array kt_reset_move_clear), one per state of
 * @states (partition, stored, low, high: the job's stored offsets and the
 * watermarks read after them). @counted: partition -> KtCoverage*, the
 * offsets a KT_REREAD_SKIPS kind's output counted (NULL otherwise);
 * @first: partition -> gint64*, the first offset the job's audit rows
 * record (rebuild's data-loss check; may be NULL); @starts: for
 * KT_RESET_BATCH, KtPartitionOffset. KT_ERROR_USAGE, one line, when a move
 * would count offsets twice, is refused by the kind, or leaves the log
 * (beyond the high watermark, below the log start). KT_RESET_TIME takes
 * @starts too: every partition's offset at the moment, within the log
 * (by-time.h); KT_RESET_SHIFT moves every partition by target->shift,
 * stopping at the log's ends (->clamped). */
gboolean kt_reset_plan (const KtResetPolicy *policy, const KtResetTarget *target,
                        const char *topic, const KtPartitionState *states, guint n_states,
                        GHashTable *counted, GHashTable *first, const GArray *starts,
                        GArray *moves, GError **error);

/* Whether any move of @moves changes something. */
gboolean kt_reset_changes (const GArray *moves);

/* What @move means for the output, in words, for people ("forward:
 * offsets [a, b) will never be counted", "back: recount [a, b): ..."); a
 * few intervals of each kind, then "and N more". New string. */
char    *kt_reset_move_words (const KtResetMove *move);

/* In the caller's transaction, which read @job's offsets FOR UPDATE: each
 * move's UPDATE fenced on the stored offset it read, and for each move
 * forward an audit row of the skipped range (no records, committed by
 * @member into @output), so that `ktally audit` sees where the offsets
 * went. KT_ERROR_CONFLICT if a row moved meanwhile (it cannot, locked). */
gboolean kt_reset_apply (KtDb *db, const char *job, const char *output, const char *member,
                         const GArray *moves, GError **error);

/* The audit rows of kt_reset_apply() alone (offsets that live in Kafka). */
gboolean kt_reset_record_skips (KtDb *db, const char *job, const char *output,
                                const char *member, const GArray *moves, GError **error);

/* The options of @kind (a new struct of kind->options_size, to free with
 * kt_reset_kind_options_free()) that made what table @output holds: the
 * fallbacks of its rows, then what ktally_table recorded for those that
 * are part of the table's identity. KT_ERROR_USAGE when nothing is
 * recorded (a schema older than version 3, or no commit yet). */
gpointer kt_reset_kind_options (KtDb *db, const KtKind *kind, const char *output,
                                GError **error);
void     kt_reset_kind_options_free (const KtKind *kind, gpointer options);

/* reset --rebuild of a range, in the caller's transaction (which read the
 * offsets FOR UPDATE when @execute): for each move of @moves marked
 * recount of @context's topic, the job's audit rows from its `to` on,
 * which must form one chain up to the stored offset. `to` moves back to
 * the start of the batch that holds it (the chain stays whole); the
 * ranges those rows counted are read again from @context->source and
 * counted by @kind (as @context's options say), and must give what the
 * rows recorded (records, lines, ERROR and malformed lines); then the kind
 * takes those counts back out of the output (retract) and, with
 * @execute, the rows are deleted: with the offsets moved back
 * (kt_reset_apply()), the job counts [to, stored) again, and the output
 * holds it once. Without @execute, every read and check, no write.
 * KT_ERROR_USAGE, naming the partition, where it cannot be exact: a batch
 * that starts below the log start, a chain with a hole, a re-read that
 * differs from the audit rows (compaction removed records, the parser
 * changed), an output that does not hold what is to be taken back. */
gboolean kt_reset_recount (KtKindContext *context, const KtKind *kind, GArray *moves,
                           gboolean execute, GError **error);

/* The pure part of kt_reset_recount() for one move: @links is the job's
 * audit chain of mv's partition (KtAuditLink, the rows that end after
 * mv->to, by from). mv->to moves back to the start of the batch that holds
 * it, or forward past the last skip of the chain (a range a reset moved
 * past, never counted, which a recount never counts: mv->kept), and when
 * that is the stored offset there is nothing to recount (mv->recount
 * cleared: it stays). Appends to @ranges the ranges to read again (those
 * whose rows read records, merged) and adds to @recorded what those rows
 * recorded. KT_ERROR_USAGE, naming the partition: no audit row at mv->to,
 * a start below the log start, a chain with a hole or an overlap, or one
 * that does not end at mv->stored. */
gboolean kt_reset_recount_chain (const char *job, KtResetMove *mv, const GArray *links,
                                 GArray *ranges, KtRangeStats *recorded, GError **error);

/* reset --rebuild, in the caller's transaction: empties what @job wrote
 * (its rows of @kind's table of rows by job and its records; or the whole
 * @output table) and its audit rows. Refused with KT_ERROR_USAGE, before
 * anything is deleted: the whole table when another job, a replay or a
 * forgotten job counted into it too; its rows when an earlier job of its
 * name was forgotten (they hold its counts too); a table that is not one
 * (a view). Without @execute (a dry run), every check in the same order,
 * and no write, no lock: a dry run refuses what an execution refuses. */
gboolean kt_reset_rebuild (KtDb *db, const KtKind *kind, const char *job,
                           const char *output, gboolean execute, GError **error);

/* ---- A reset of one job, from what was asked to its moves --------------- */

/* What `ktally reset` asks (the caller's: borrowed). */
typedef struct
{
  const KtDbConfig     *db;
  const KtKafkaOptions *kafka;     /* the brokers: watermarks, the consumer group */
  double                startup_timeout;  /* how long MySQL and Kafka are waited for */
  const char           *job;
  const char           *topic;     /* only this topic of the job; NULL: every one */
  const KtResetTarget  *target;
  const char           *moment;    /* KT_RESET_TIME: the flag that gave it, for messages */
  gboolean              rebuild;   /* --rebuild */
  gboolean              accept_data_loss;
  gboolean              execute;   /* --execute; FALSE: a dry run */
} KtResetRequest;

/* A reset of one job: what kt_reset_job() found, for the caller to print
 * with the moves. Clear it with kt_reset_job_clear(). */
typedef struct
{
  const KtResetRequest *request;
  const KtKnownJob     *job;       /* the job, as the database records it */
  const KtKind         *kind;      /* its kind */
  gboolean              kafka;     /* its offsets are in the consumer group ktally-JOB */
  KtResetPolicy         policy;    /* what the reset may do (from the kind and the flags) */
  GArray               *replay_from;   /* a replay's job: its range, else NULL */
  GArray               *replay_until;
  /* The reset's own. */
  KtDb                 *db;
  GPtrArray            *jobs;      /* KtKnownJob: every job of the database */
  char                **topics;    /* the topics reset */
  GPtrArray            *sources;   /* KtSource per topic */
  GArray               *starts;    /* batch:ID, a moment: KtPartitionOffset */
  char                 *batch_topic;  /* batch:ID: its topic */
  gpointer              options;   /* a recount: the kind's options, as the table records */
} KtResetJob;

/* The reset @request asks, executed or a dry run: one path, so that a dry
 * run refuses whatever an execution refuses, with the same message and
 * exit status; it is the execution without the writes. Waits for MySQL
 * and each topic's partitions up to request->startup_timeout. Into @r
 * what it found and into @moves (KtResetMove; give the array
 * kt_reset_move_clear) the plan, executed when request->execute. A name
 * that is no job is refused (naming the jobs there are) before anything
 * is migrated or written. */
gboolean kt_reset_job       (const KtResetRequest *request, KtResetJob *r, GArray *moves,
                             GError **error);
void     kt_reset_job_clear (KtResetJob *r);

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (KtResetJob, kt_reset_job_clear)
