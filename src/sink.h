/* sink.h - the MySQL sink: counts and offsets, in one transaction.
 *
 * The sink is the only place offsets are stored. A batch's per-minute
 * counts and its kafka_offset updates commit together or not at all, and
 * every offset update is fenced on the offset the batch was planned from,
 * so a second writer on the same job can never count a range twice. */
#pragma once
#include <glib.h>
#include <mysql.h>
#include "coverage.h"
#include "db.h"
#include "identity.h"
#include "error.h"
#include "plan.h"
#include "reduce.h"

typedef struct _KtSink KtSink;


/* What a batch read of one partition's range [from, until): recorded in
 * ktally_batches with the offsets, for `ktally audit`. */
typedef struct
{
  guint64 records;
  guint64 lines;
  guint64 errors;
  guint64 malformed;
} KtRangeStats;

/* Idempotent mode: one partition's share of a batch's output. */
typedef struct
{
  KtRange             range;     /* read [read_from, until); audited [from, until) */
  const KtRangeStats *stats;     /* what it counted: its audit row */
  const KtCoverage   *expected;  /* the offsets counted when the batch planned */
  const KtCoverage   *covered;   /* expected, plus every offset the batch read */
  KtReducer          *counts;    /* what it read outside expected */
} KtCounted;

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

void kt_batch_row_clear (KtBatchRow *row);

typedef enum
{
  KT_COMMIT_DONE,     /* counts and offsets are in */
  KT_COMMIT_FENCED,   /* another writer moved an offset first: rolled back */
  KT_COMMIT_FAILED,   /* failed before COMMIT: nothing was written */
  KT_COMMIT_UNKNOWN,  /* the connection died during COMMIT: read it back */
} KtCommitResult;




/* Copies @db; does not connect yet. Counts go to @table (an identifier the
 * CLI checked; error_log unless replaying). */
KtSink  *kt_sink_new  (const KtDbConfig *db, const char *table);
void     kt_sink_free (KtSink *self);  /* NULL is fine */

/* Connects unless connected. Access denied, unknown database:
 * KT_ERROR_FATAL; server unreachable or gone: KT_ERROR_TRANSIENT; a
 * schema version newer than this ktally's: KT_ERROR_USAGE. Every other
 * call connects on demand and drops the connection after a transient
 * failure, so the next call starts afresh. */
gboolean kt_sink_connect (KtSink *self, GError **error);

/* What the job is (borrowed; it outlives the sink): its first commit
 * records it, in the commit's transaction, and fails with KT_ERROR_USAGE
 * (nothing written) if the database knows the job or its table otherwise. */
void     kt_sink_set_identity (KtSink *self, const KtIdentity *identity);

/* At start-up, before any table of the job's kind is created: brings the
 * schema forward, makes sure the tables of jobs exist, and compares the
 * identity with what the database recorded (see kt_identity_check()). */
gboolean kt_sink_check_identity (KtSink *self, gboolean share_table, GError **error);

/* Names this writer in the audit rows it commits ("job-pid@host"), as
 * kt_schema_member() makes it fit ktally_batches.member. */
void     kt_sink_set_member (KtSink *self, const char *member);

/* The member that last committed each partition of @job/@topic, from the
 * audit rows: partition -> "client@host" (char*, owned by @owners). */
gboolean kt_sink_last_committers (KtSink *self, const char *job, const char *topic,
                                  GHashTable *owners, GError **error);

/* Makes sure the tables of @idempotent's mode exist, creating what is
 * absent: sql/schema.sql (error_log, kafka_offset) or sql/idempotent.sql
 * (chunk tables, error_log as a view over them); the sink's table, if not
 * error_log, is created with error_log's columns. A database whose
 * error_log belongs to the other mode is refused (KT_ERROR_USAGE): one
 * mode per database. Before creating anything, an older schema is
 * migrated (kt_schema_bring_forward(): all its ktally tables, whatever
 * their kind and mode) and a newer one refused (KT_ERROR_USAGE). */
gboolean kt_sink_prepare (KtSink *self, gboolean idempotent, GError **error);

/* --kind ledger: makes sure kafka_offset, ktally_batches and the ledger's
 * tables (sql/ledger.sql) exist, migrating first as kt_sink_prepare(). */
gboolean kt_sink_prepare_ledger (KtSink *self, GError **error);

/* For the commands that only read (status, audit): connects and checks
 * the schema version, altering nothing (kt_schema_check_read_only()): a
 * newer one is refused (KT_ERROR_USAGE), an older readable one is read as
 * it is, with one log line naming what brings it forward. */
gboolean kt_sink_check_schema (KtSink *self, GError **error);

/* Whether kafka_offset exists (nothing is created). */
gboolean kt_sink_has_offsets (KtSink *self, gboolean *present, GError **error);

/* Fills ->stored of each of @states with @job's offset for @topic, or -1
 * where it has no row. */
gboolean kt_sink_load_offsets (KtSink *self, const char *job, const char *topic,
                               KtPartitionState *states, guint n_states,
                               GError **error);

/* Creates the offset row of a partition seen for the first time. A row
 * that another writer created first is left as it is. */
gboolean kt_sink_init_offset (KtSink *self, const char *job, const char *topic,
                              gint32 partition, gint64 offset, GError **error);

/* One transaction: for each range, UPDATE kafka_offset to until WHERE it is
 * still from (in partition order), then upsert every minute of @reducer
 * adding to log_count (in minute order). Sets *@result; on
 * KT_COMMIT_FENCED, *@fenced_partition names the first partition whose
 * offset had moved. Returns FALSE with *@result FAILED (nothing written) or
 * UNKNOWN (COMMIT was sent and its answer lost: the caller reads the
 * offsets back to learn which, never guesses). */
gboolean kt_sink_commit (KtSink *self, const char *job, const char *topic,
                         const GArray *ranges, const KtRangeStats *stats,
                         KtReducer *reducer, KtCommitResult *result,
                         gint32 *fenced_partition, GError **error);

/* --kind ledger, in ONE transaction: the fenced offset UPDATEs first (as
 * kt_sink_commit()), then the balances of the batch's accounts are read
 * and locked (SELECT ... FOR UPDATE, in account order) and the batch's
 * txns looked up in ledger_applied and ledger_rejected; the batch is
 * applied (kt_ledger_batch_apply() with @workers threads) and the new
 * balances, applied and rejected txns and audit rows written. Same
 * results as kt_sink_commit(). @batch is spent either way. */
struct _KtLedgerBatch;
gboolean kt_sink_commit_ledger (KtSink *self, const char *job, const char *topic,
                                const GArray *ranges, const KtRangeStats *stats,
                                struct _KtLedgerBatch *batch, guint workers,
                                KtCommitResult *result, gint32 *fenced_partition,
                                GError **error);

/* Idempotent mode: the covered set of each range's partition (an empty
 * set where none is stored), into @coverages (KtCoverage*, one per range, in
 * order; the array owns them). */
gboolean kt_sink_load_coverage (KtSink *self, const char *job, const char *topic,
                                const GArray *ranges, GPtrArray *coverages,
                                GError **error);

/* Idempotent output, in one transaction of its own: if every one of @parts
 * (KtCounted, ascending partitions) still finds its partition's covered set
 * exactly as expected (read under a row lock), adds their counts, stores
 * their covered sets and writes their audit rows (ktally_batches: the
 * range the offsets move over, and what it counted). Adding is exact because the set moves
 * with the counts: a late, repeated or concurrent write finds the set
 * changed. If any partition's set changed, nothing is written and
 * *@moved_partition names it (else -1): the batch is planned again. */
gboolean kt_sink_write_counted (KtSink *self, const char *job, const char *topic,
                                const GArray *parts, gint32 *moved_partition,
                                GError **error);

/* Idempotent mode's offset commit, after the output (which carries the
 * audit rows): the fenced UPDATEs of kt_sink_commit(), alone.
 * *@fenced_partition is the first partition whose offset had moved, or -1. */
gboolean kt_sink_store_offsets (KtSink *self, const char *job, const char *topic,
                                const GArray *ranges, gint32 *fenced_partition,
                                GError **error);

/* --audit-keep: folds @job's ktally_batches rows older than @keep_seconds
 * into one row per partition (the chain's start moves forward, its sums
 * stay). */
gboolean kt_sink_compact_batches (KtSink *self, const char *job, const char *topic,
                                  gint64 keep_seconds, GError **error);

/* Starts a read-only REPEATABLE READ transaction with a consistent
 * snapshot: every read until kt_sink_snapshot_end() sees the database as
 * of one instant, so batches, offsets and totals read one after the other
 * agree even while jobs commit (`ktally audit`). */
gboolean kt_sink_snapshot_begin (KtSink *self, GError **error);
void     kt_sink_snapshot_end   (KtSink *self);

/* Every ktally_batches row (of @job, or all jobs if NULL), ordered by job,
 * topic, partition and from, into @rows (KtBatchRow, cleared by the array). */
gboolean kt_sink_read_batches (KtSink *self, const char *job, GArray *rows,
                               GError **error);

/* Every kafka_offset row into @offsets: "job\ttopic\tpartition" -> gint64*. */
gboolean kt_sink_load_all_offsets (KtSink *self, GHashTable *offsets, GError **error);

/* Every ktally_coverage row (idempotent jobs) into @covered:
 * "job\ttopic\tpartition" -> KtCoverage*. None without the table. */
gboolean kt_sink_load_all_coverage (KtSink *self, GHashTable *covered, GError **error);

/* SUM(log_count) of @table (0 when empty). */
gboolean kt_sink_table_total (KtSink *self, const char *table, guint64 *total,
                              GError **error);

/* "user@host:port/database" for messages: never the password. */
const char *kt_sink_describe (KtSink *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (KtSink, kt_sink_free)
