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
#include "coverage.h"
#include "db.h"
#include "kind.h"
#include "plan.h"

typedef enum
{
  KT_RESET_EARLIEST,  /* the log start */
  KT_RESET_LATEST,    /* the high watermark */
  KT_RESET_OFFSETS,   /* P:OFF[,P:OFF...] */
  KT_RESET_BATCH,     /* batch:ID: where an audited batch started */
} KtResetTo;

typedef struct
{
  KtResetTo  to;
  GArray    *offsets;  /* KT_RESET_OFFSETS: KtPartitionOffset, by partition */
  gint64     batch;    /* KT_RESET_BATCH: a ktally_batches id */
} KtResetTarget;

/* Parses --to: earliest, latest, P:OFF[,P:OFF...] or batch:ID.
 * KT_ERROR_USAGE naming the flag. */
gboolean kt_reset_target_parse (const char *text, KtResetTarget *target, GError **error);
void     kt_reset_target_clear (KtResetTarget *target);

/* What a reset may do to one job: its kind's answer, and the user's flags. */
typedef struct
{
  const char *job;
  const char *output;           /* the table it writes, for messages */
  KtReread    reread;           /* its kind's (kind.h) */
  const char *why_no_rewind;    /* its kind's, with KT_REREAD_REFUSED */
  gboolean    rebuild;          /* --rebuild: every partition to its log start, output emptied */
  gboolean    accept_data_loss; /* --accept-data-loss: rebuild although retention took
                                 * offsets the job had counted */
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
 * (beyond the high watermark, below the log start). */
gboolean kt_reset_plan (const KtResetPolicy *policy, const KtResetTarget *target,
                        const char *topic, const KtPartitionState *states, guint n_states,
                        GHashTable *counted, GHashTable *first, const GArray *starts,
                        GArray *moves, GError **error);

/* Whether any move of @moves changes something. */
gboolean kt_reset_changes (const GArray *moves);

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

/* reset --rebuild, in the caller's transaction: empties what @job wrote
 * (its rows of @kind's table of rows by job and its records; or the whole
 * @output table) and its audit rows. Refused with KT_ERROR_USAGE, before
 * anything is deleted: the whole table when another job, a replay or a
 * forgotten job counted into it too; its rows when an earlier job of its
 * name was forgotten (they hold its counts too); a table that is not one
 * (a view). Without @execute (a dry run), every check in the same order,
 * and no write, no lock: a dry run refuses what an execution refuses. */
gboolean kt_reset_rebuild (KtDb *db, const KtJobKind *kind, const char *job,
                           const char *output, gboolean execute, GError **error);
