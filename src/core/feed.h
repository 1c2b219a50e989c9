/* feed.h - one topic of a job, as the scheduler (run.c) reads it.
 *
 * A job reads one or several topics, and commits all of them in one
 * transaction. A feed is one topic's part: its Kafka reader (source.h),
 * the job kind's state for it (kind.h), the partitions this instance
 * reads, and the batch in flight: where each partition stood, the ranges
 * planned, what was read. The scheduler plans and reads every feed, then
 * has the kind write each one's output in its transaction. */
#pragma once
#include <glib.h>
#include "batchlog.h"
#include "kind-context.h"
#include "kind.h"
#include "run-setup.h"
#include "source.h"

/* One batch of a feed: where every partition stood, the ranges planned,
 * the kind's batch and what was read. A feed has two: the one being
 * planned and read (next) and the one whose commit is in flight (flight). */
typedef struct
{
  GArray          *states;       /* KtPartitionState */
  GArray          *ranges;       /* KtRange */
  GArray          *losses;       /* KtDataLoss */
  gpointer         batch;        /* the kind's (kind.h), NULL without ranges */
  guint            last_range;
  guint64          records;
  gint64           bytes;        /* value bytes read (kt_source_last_bytes()) */
  guint64          turn;         /* the loop's turn that planned it (KtBatchLog.batch_no) */
  KtBatchTimes     times;        /* its stages' ends (started: its plan began) */
  /* The source's rebalances (kt_source_rebalances()) when it was planned:
   * another count before it commits means a partition may have changed
   * hands under it, and it is dropped. */
  guint64          rebalances;
  /* Planned from the ends and memory of the batch in flight then
   * (kt_feed_plan_ahead), not from the database: that one's turn, and it
   * may commit only after that one committed. 0: planned from the
   * database. */
  guint64          ahead_of;
} KtFeedBatch;

/* Whether a commit is in flight, for the one thing that cannot wait for
 * it to land: a rebalance, served from inside a read or a rest, waits for
 * it to end before it gives partitions away (kt_flight_wait). */
typedef struct
{
  GMutex   lock;
  GCond    ended;
  gboolean flying;
} KtFlight;

void kt_flight_init  (KtFlight *self);
void kt_flight_clear (KtFlight *self);
void kt_flight_begin (KtFlight *self);  /* before the committer starts */
void kt_flight_end   (KtFlight *self);  /* by the committer, once COMMIT returned */
void kt_flight_wait  (KtFlight *self);

typedef struct
{
  KtSource        *source;
  const KtKind *kind;
  gpointer         state;        /* the kind's, for this topic */
  KtKindContext            context;          /* what the kind works with */
  gboolean         member;       /* --group: the group assigns the partitions */
  GArray          *partitions;   /* gint32, ascending */
  gint64           metadata_at;  /* monotonic time of the last partition list; 0: never */
  /* Set when a COMMIT's answer was lost: the next plan reads the offsets
   * back and says whether it landed. */
  GArray          *unknown_commit;
  KtBatchLog       log;          /* its lines, metrics and totals */
  /* Where each partition stood after this process's last batch that
   * ended knowing where (committed, idle or fenced: KtPartitionState);
   * empty after a failure. The next plan tells a reset or a forget apart. */
  GArray          *expected;
  /* Which topic is this (anchors.h): the partitions whose anchors were
   * checked since the last doubt (a set), and whether there is one (at
   * start, after a failure, when the topic may have changed). */
  GHashTable      *verified;
  gboolean         doubt;
  const volatile int *stop;
  /* The runner's: whoever uses the database while a commit may be in
   * flight takes it (the group's assignments, read by the source's
   * rebalance callback during a read). */
  GMutex          *db_lock;
  KtFlight        *flight_gate;  /* the runner's: a rebalance waits on it */
  KtFeedBatch      next;         /* being planned and read (scheduler's thread) */
  KtFeedBatch      flight;       /* being committed (the committer's), or done */
} KtFeed;

/* @topic's feed of @job, run by @kind, written through @db; @job and
 * @member (the committer's name) outlive it. Creates the reader and the
 * kind's state; contacts nobody. */
KtFeed  *kt_feed_new   (const KtRunSetup *setup, const char *topic, const KtKind *kind,
                        KtDb *db, const char *member, KtMetrics *metrics, gboolean quiet,
                        const volatile int *stop, GError **error);
void     kt_feed_free  (KtFeed *self);

/* At start-up: the topic exists (an unknown topic is KT_ERROR_FATAL, in
 * a group too), and its partitions are listed, or subscribed to with
 * --group (none until the group assigns some). Done once. */
gboolean kt_feed_start (KtFeed *self, int timeout_ms, GError **error);

/* Plans the feed's share of a batch: its partitions (refreshed when
 * @refresh, or a member's assignment), where each stands, the anchors of
 * those not checked since the last doubt (KT_ERROR_DATA_LOSS when one is
 * not the record counted: anchors.h), the ranges, which the kind may then
 * move (idempotent mode skips what it counted). */
gboolean kt_feed_plan  (KtFeed *self, gboolean refresh, gint64 max_per_partition,
                        KtOnDataLoss on_data_loss, guint64 turn, gint64 started,
                        GError **error);

/* Plans the next batch from the ends of the batch in flight (flight),
 * as if it committed, without the database: the stored offsets are
 * flight's planned ends, the watermarks Kafka's, the kind's state for the
 * partitions from flight's batch in memory (kind->ahead()). FALSE when it
 * cannot (nothing to read, a doubt about the topic, a rebalance since
 * flight was planned, a COMMIT's answer lost, a log gone back, a data
 * loss, partitions to list, a replay's end, the kind cannot): the caller
 * then waits for flight's commit and plans from the database. Never
 * fails otherwise; touches no database. */
gboolean kt_feed_plan_ahead (KtFeed *self, gint64 max_per_partition, KtOnDataLoss on_data_loss,
                             guint64 turn, gint64 started);

/* Drops the next batch unwritten (its kind's batch freed): its plan was
 * made on what did not hold. */
void     kt_feed_drop (KtFeed *self);

/* The next batch becomes the one in flight; the one that was (settled)
 * is cleared to be planned into. */
void     kt_feed_launch (KtFeed *self);

/* The batch in flight is settled: its kind's batch freed. */
void     kt_feed_landed (KtFeed *self);

/* The topic may not be the one its anchors were checked against (a
 * batch failed): the next plan checks them all before it reads. */
void     kt_feed_doubt (KtFeed *self);

/* The batch ended knowing where every partition stands (committed, idle,
 * fenced): the next plan compares the stored offsets with that. */
void     kt_feed_settled (KtFeed *self);

/* Reads the next batch's ranges, every record to the kind. */
gboolean kt_feed_read  (KtFeed *self, const volatile int *stop, int stall_ms, GError **error);
