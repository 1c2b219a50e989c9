/* audit.h - `ktally audit`: is the offset chain whole?
 *
 * Every committed batch leaves one ktally_batches row per partition, in
 * the same transaction as its offsets. If exactly-once holds, each
 * partition's rows form one chain [a, b) [b, c) ... ending at the stored
 * offset, and the ERROR lines they recorded add up to what the tables
 * hold. */
#pragma once
#include <glib.h>
#include "cli.h"
#include "coverage.h"
#include "offsets.h"

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

/* Runs the whole audit against the database and prints the verdict on
 * stdout. Returns FALSE with KT_ERROR_AUDIT when anything is broken. */
gboolean kt_audit (const KtConfig *config, GError **error);
