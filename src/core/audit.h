/* audit.h - `ktally audit`: is the offset chain whole?
 *
 * Every committed batch leaves one ktally_batches row per partition, in
 * the same transaction as its offsets. If exactly-once holds, each
 * partition's rows form one chain [a, b) [b, c) ... ending at the stored
 * offset, and the ERROR lines they recorded add up to what the tables
 * hold. */
#pragma once
#include <glib.h>
#include "coverage.h"
#include "db.h"
#include "offsets.h"
#include "source.h"

/* One verdict for a set of rows (KtBatchRow, ordered by job, topic,
 * partition, commit). @stored_offset(job, topic, partition) gives the
 * offset stored for the partition (-1 if none); @covered(job, topic,
 * partition) the offsets an idempotent job's output counted (NULL for a
 * transactional job). A transactional chain must be one unbroken chain up
 * to the stored offset (a row that ends below its start, the skip past
 * the log's end of a recreated topic, goes on from its end). An
 * idempotent job's batches may overlap (a rewind reads counted offsets again, and counts none of them twice), so its check
 * is that every covered offset is in some batch, that the covered set
 * holds nothing twice, and that the batches leave no hole below the stored
 * offset (when one is known). Appends one line per problem to @problems; returns
 * the number of chains checked. Pure: no database, easy to test. */
typedef gint64 (*KtStoredOffsetFunc) (const char *job, const char *topic,
                                      gint32 partition, gpointer user_data);
typedef const KtCoverage *(*KtCoveredFunc) (const char *job, const char *topic,
                                            gint32 partition, gpointer user_data);

guint    kt_audit_chains (const GArray *rows, KtStoredOffsetFunc stored_offset,
                          KtCoveredFunc covered, gpointer user_data,
                          GPtrArray *problems);

/* Ranges of one topic's partition counted into one table by two jobs
 * (KtBatchRow, any order): each pair is a double count. Only pairs with
 * @job in them, unless @job is NULL. Appends one line per pair of jobs and
 * place to @problems, or to @notes when one of the two is a replay (which
 * adds its range by design); returns how many. Pure. */
guint    kt_audit_shared (const GArray *rows, const char *job, GPtrArray *problems,
                          GPtrArray *notes);

/* Rows of a replay counted outside its range (a reset of a ktally that
 * did not keep replays in their ranges moved one out): @ranges maps a
 * replay's job to its recorded range, "P:FROM-UNTIL,..." (other jobs, and
 * "" where not recorded, are not checked). Appends one line per row
 * outside to @problems; returns how many. Pure. */
guint    kt_audit_replay_ranges (const GArray *rows, GHashTable *ranges, GPtrArray *problems);

/* What `ktally audit` asks (the caller's: borrowed). */
typedef struct
{
  const KtDbConfig     *db;
  const KtKafkaOptions *kafka;  /* NULL or without brokers: the chains of jobs whose
                                 * offsets live in Kafka end where their batches do */
  const char           *job;    /* only this job's chains; NULL: every job's */
} KtAuditRequest;

/* One table the batches wrote. */
typedef struct
{
  char       *name;
  const char *holds;     /* what its kind's rows are when not counts ("balances"): its
                          * chains only, no totals; NULL: a count table */
  guint64     recorded;  /* the ERROR lines its batches (and forgotten jobs) recorded */
  guint64     total;     /* ...and what it holds now */
  gboolean    summed;    /* @total was read */
} KtAuditTable;

/* The verdict. */
typedef struct
{
  guint      chains;     /* the partition chains checked */
  guint      batches;    /* the batches in them */
  GArray    *tables;     /* KtAuditTable, every table the batches wrote */
  GPtrArray *notes;      /* double counts by a replay (which adds its range by design) */
  GPtrArray *forgotten;  /* what forgotten jobs left counted in their tables */
  GPtrArray *problems;   /* one line per break: none when exactly-once held */
} KtAuditReport;

void     kt_audit_report_clear (KtAuditReport *report);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (KtAuditReport, kt_audit_report_clear)

/* The whole audit against the database, in one consistent snapshot
 * (reads only, a replica will do; an older schema is read as it is): the
 * chains of the job(s) asked, each table's totals against every batch
 * that wrote it, into @report (clear it after). FALSE with @error only
 * when it cannot read: broken chains are problems of the report. */
gboolean kt_audit (const KtAuditRequest *request, KtAuditReport *report, GError **error);
