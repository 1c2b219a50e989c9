/* offsets.h - where each job stands: kafka_offset and the audit trail.
 *
 * The only place offsets are stored in MySQL. A commit fences each
 * partition's UPDATE on the offset its batch was planned from, in the
 * commit's own transaction, so a second writer on the same job can never
 * count a range twice; the same transaction writes the batch's audit rows
 * (ktally_batches), which `ktally audit` chains. Every function takes a
 * KtDb (connected on demand); those that say so run inside the caller's
 * open transaction. */
#pragma once
#include <glib.h>
#include "db.h"
#include "plan.h"

/* One row of ktally_batches, as `ktally audit` reads it. */
typedef struct
{
  char   *job;
  char   *topic;
  gint32  partition;
  gint64  from;
  gint64  until;
  guint64 errors;
  char   *target;
} KtBatchRow;

void     kt_batch_row_clear (KtBatchRow *row);

/* Whether kafka_offset exists (nothing is created). */
gboolean kt_offsets_present (KtDb *db, gboolean *present, GError **error);

/* Fills ->stored of each of @states with @job's offset for @topic, or -1
 * where it has no row. */
gboolean kt_offsets_load (KtDb *db, const char *job, const char *topic,
                          KtPartitionState *states, guint n_states, GError **error);

/* Creates the offset rows of @n partitions seen for the first time (the
 * partition @partitions[i] at @offsets[i]), in one statement. A row that
 * another writer created first is left as it is. */
gboolean kt_offsets_init_many (KtDb *db, const char *job, const char *topic,
                               const gint32 *partitions, const gint64 *offsets, guint n,
                               GError **error);

/* In the caller's transaction: for each range that moves (until > from),
 * in partition order, UPDATE kafka_offset to until WHERE it is still from,
 * and the partition's anchor to the range's (anchor.h), where the read
 * set one.
 * Stops at the first partition whose offset moved since (0 rows: another
 * writer committed past `from` after we planned; its counts are in, ours
 * must not be) and names it in *@fenced_partition; -1 when every row moved.
 * The caller rolls back a fenced transaction. */
gboolean kt_offsets_fence (KtDb *db, const char *job, const char *topic,
                           const GArray *ranges, gint32 *fenced_partition, GError **error);

/* Appends ", anchor_offset = CASE `partition` WHEN ... ELSE anchor_offset
 * END, anchor_time = ..., anchor_hash = ..." to an UPDATE of a table with
 * those columns: each range's anchor, where the read set one; nothing
 * when no range has one. */
void     kt_offsets_set_anchors (GString *sql, const GArray *ranges);

/* The anchors stored in @table (kafka_offset, or a kind's table with the
 * same key and anchor columns: KtKind.anchors) for @job's partitions
 * of @topic: partition -> KtAnchor* into @anchors; partitions without one
 * are absent. */
gboolean kt_offsets_anchors (KtDb *db, const char *table, const char *job, const char *topic,
                             GHashTable *anchors, GError **error);

/* In the caller's transaction: forgets the anchors of the partitions of
 * @ranges that move (`reset`: the offsets are where the user put them,
 * in the log as it is now). */
gboolean kt_offsets_drop_anchors (KtDb *db, const char *job, const char *topic,
                                  const GArray *ranges, GError **error);

/* In the caller's transaction: one ktally_batches row per range that
 * moves, with its stats (@stats[i] for @ranges[i]), naming @target (the
 * table the counts went to) and @member (the committer). *@first_id (may
 * be NULL): the id of the first row written, which names the batch for
 * `reset --to batch:ID`; 0 when no range moved. */
gboolean kt_offsets_record (KtDb *db, const char *job, const char *topic, const char *target,
                            const char *member, const GArray *ranges,
                            const KtRangeStats *stats, gint64 *first_id, GError **error);

/* In the caller's transaction: one ktally_batches row per range that
 * moves, marked skipped (no record read, never counted: `reset` moved the
 * offset past it), so that a recount never counts it (kt_offsets_chain_after())
 * and --audit-keep never folds it into counted rows. */
gboolean kt_offsets_record_skips (KtDb *db, const char *job, const char *topic,
                                  const char *target, const char *member,
                                  const GArray *ranges, GError **error);

/* What the migration to schema version 7 marks as a skip, for a schema
 * before it: a row of no record written by a reset (reset-PID@host). */
#define KT_OFFSETS_OLD_SKIP "(record_count = 0 AND member REGEXP '^reset-[0-9]+@')"

/* kt_offsets_fence() in a transaction of its own (idempotent mode, whose
 * output was written before). */
gboolean kt_offsets_store (KtDb *db, const char *job, const char *topic,
                           const GArray *ranges, gint32 *fenced_partition, GError **error);

/* --audit-keep: folds @job's ktally_batches rows older than @keep_seconds
 * into one row per partition (the chain's start moves forward, its sums
 * stay). */
gboolean kt_offsets_compact (KtDb *db, const char *job, const char *topic,
                             gint64 keep_seconds, GError **error);

/* Every ktally_batches row (of @job, or all jobs if NULL), ordered by job,
 * topic, partition and commit (id), into @rows (KtBatchRow, cleared by the array). */
gboolean kt_offsets_read_batches (KtDb *db, const char *job, GArray *rows, GError **error);

/* Every kafka_offset row into @offsets: "job\ttopic\tpartition" -> gint64*. */
gboolean kt_offsets_load_all (KtDb *db, GHashTable *offsets, GError **error);

/* Who moved @job/@topic/@partition on from @from to @to: the member of
 * the last audit row [@from, @to) (a writer's batch, or the skip a `reset`
 * records: "reset-PID@host") into *@member (new string), or NULL when no
 * row says (a move back records none). One indexed lookup. */
gboolean kt_offsets_mover (KtDb *db, const char *job, const char *topic, gint32 partition,
                           gint64 from, gint64 to, char **member, GError **error);

/* The member that last committed each partition of @job/@topic, from the
 * audit rows: partition -> "client@host" (char*, owned by @owners). */
gboolean kt_offsets_last_committers (KtDb *db, const char *job, const char *topic,
                                     GHashTable *owners, GError **error);


/* ---- What `ktally jobs`, `reset` and `forget` read and change ------------ */

/* One kafka_offset row. */
typedef struct
{
  char   *topic;
  gint32  partition;
  gint64  offset;
} KtStoredOffset;

void     kt_stored_offset_clear (KtStoredOffset *row);

/* @job's kafka_offset rows (of @topic, or of every topic if NULL), ordered
 * by topic and partition, into @rows (KtStoredOffset, cleared by the
 * array). With @lock, in the caller's transaction, FOR UPDATE: a running
 * instance's next commit waits, and is then fenced by any change. */
gboolean kt_offsets_read_job (KtDb *db, const char *job, const char *topic, gboolean lock,
                              GArray *rows, GError **error);

/* The topics each job has rows of in kafka_offset and ktally_batches: into
 * @topics, job -> GHashTable of topic names (a set). Absent tables add
 * nothing. Reads only. */
gboolean kt_offsets_job_topics (KtDb *db, GHashTable *topics, GError **error);

/* Per job: its audit rows and the time of its last commit (UTC, to the
 * millisecond), into @last: job -> KtJobCommits*. Reads only. */
typedef struct
{
  guint64  batches;
  char    *last_commit;  /* "YYYY-MM-DD HH:MM:SS.mmm" */
} KtJobCommits;

void     kt_job_commits_free (KtJobCommits *c);
gboolean kt_offsets_job_commits (KtDb *db, GHashTable *last, GError **error);

/* The first offset @job's audit rows record per partition of @topic (where
 * its counting started): partition -> gint64* into @first. */
gboolean kt_offsets_first_counted (KtDb *db, const char *job, const char *topic,
                                   GHashTable *first, GError **error);

/* `reset --to batch:ID`: the topic of @job's audit row @id (*@topic, a new
 * string), and where each partition of that topic stood when the batch
 * that wrote the row started: its from in that batch (the rows one commit
 * wrote), or for a partition the batch did not read, the from of its next
 * batch; partitions with no batch since stay out of @starts
 * (KtPartitionOffset, by partition). No such row of @job: KT_ERROR_USAGE. */
gboolean kt_offsets_batch_starts (KtDb *db, const char *job, gint64 id, char **topic,
                                  GArray *starts, GError **error);

/* One link of a partition's audit chain. */
typedef struct
{
  gint64       from, until;
  KtRangeStats stats;
  gboolean     skipped;  /* a range `reset` moved past: never counted */
} KtAuditLink;

/* reset --rebuild of a range: the audit rows of @job's @topic/@partition
 * that end after @at, by from_offset, into @links (KtAuditLink); with @lock
 * FOR UPDATE, in the caller's transaction. Reads only. */
gboolean kt_offsets_chain_after (KtDb *db, const char *job, const char *topic, gint32 partition,
                                 gint64 at, gboolean lock, GArray *links, GError **error);

/* reset --rebuild of a range, in the caller's transaction: deletes the
 * audit rows of @job's @topic/@partition from offset @from on (their
 * counts were taken back: the chain ends at @from, where the offset goes). */
gboolean kt_offsets_drop_batches_from (KtDb *db, const char *job, const char *topic,
                                       gint32 partition, gint64 from, GError **error);

/* reset --rebuild, in the caller's transaction: deletes @job's audit rows
 * (its output is emptied with them, so the chain starts again). */
gboolean kt_offsets_drop_batches (KtDb *db, const char *job, GError **error);

/* What forget removes of a job here, and the lines its batches recorded
 * per table. */
typedef struct
{
  char    *target;
  guint64  batches;
  guint64  error_lines;
} KtForgottenTarget;

typedef struct
{
  guint64  offsets;   /* kafka_offset rows */
  guint64  batches;   /* ktally_batches rows */
  GArray  *targets;   /* KtForgottenTarget, by table name */
} KtForgetCount;

void     kt_forget_count_clear (KtForgetCount *count);

/* `ktally forget`, in the caller's transaction: counts @job's kafka_offset
 * and ktally_batches rows and what its batches recorded per table into
 * @count (which the caller clears); with @execute, also records the latter
 * in ktally_forgotten and deletes the rows. */
gboolean kt_offsets_forget (KtDb *db, const char *job, gboolean execute, KtForgetCount *count,
                            GError **error);

/* Every ktally_forgotten row, summed per job and table, into @rows
 * (KtForgottenTarget; ->target is "job\ttable"), for `ktally audit`. An
 * absent table holds none. */
gboolean kt_offsets_load_forgotten (KtDb *db, GArray *rows, GError **error);

/* Whether ktally_forgotten holds a row of job @job (when not NULL) or of
 * table @target (when not NULL): a rebuild must not delete the counts of a
 * job that was forgotten. */
gboolean kt_offsets_forgotten_in (KtDb *db, const char *job, const char *target,
                                  gboolean *found, GError **error);

/* Another job whose audit rows name @target (*@other, a new string, or
 * NULL): a table two jobs counted into cannot be emptied for one. */
gboolean kt_offsets_other_writer (KtDb *db, const char *job, const char *target,
                                  char **other, GError **error);
