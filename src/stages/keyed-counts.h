/* keyed-counts.h - the rows of one batch with --by and --sum: per bucket and
 * key, a count and exact sums, at most --max-keys keys per bucket.
 *
 * The reduce stage of the count kinds when a job has dimensions or sums
 * (reduce.h is the one-counter case). The parser feeds it a bucket, a key
 * (every --by value, see parse.h) and the --sum values of each counted
 * line; the sink drains it as rows, in one order. Keys past the bound of a
 * bucket are counted in that bucket's one (other) row, so that memory
 * stays bounded whatever the cardinality of a field. It never touches
 * Kafka or MySQL. */
#pragma once
#include <glib.h>
#include "decimal.h"

/* A sum of a batch's values in ten-thousandths: a gint64 holds one value
 * (KtAmount), but millions of them can pass it. Never wraps within what a
 * batch can hold (10^38 / 2^63: ~10^19 lines of the largest value). */
__extension__ typedef __int128 KtSum;

/* The bound on keys (--max-keys), shared by every KtKeyedCounts of one
 * batch: the bound is on the batch's distinct keys per bucket, whichever
 * partitions they are in. */
typedef struct _KtKeyLimit KtKeyLimit;

/* At most @max_keys distinct keys per bucket get rows of their own. */
KtKeyLimit *kt_key_limit_new   (guint max_keys);
void        kt_key_limit_free  (KtKeyLimit *self);  /* NULL is fine */
/* Forgets every key: a new batch. Clear the KtKeyedCounts that use it too. */
void        kt_key_limit_clear (KtKeyLimit *self);

typedef struct _KtKeyedCounts KtKeyedCounts;

/* One row of a batch. */
typedef struct
{
  gint32        partition;  /* as given to kt_keyed_counts_new() */
  gint64        bucket;     /* minutes since the epoch */
  gboolean      other;      /* the (other) row of its bucket: key is empty */
  const guint8 *key;        /* the key bytes (parse.h's encoding); owned by the counts */
  gsize         key_len;
  guint64       count;
  const KtSum  *sums;       /* n_sums of them; owned by the counts */
} KtKeyedRow;

/* Rows of @partition (a label the rows carry, -1 for none) with @n_sums
 * sums each, bounded by @limit (borrowed: it must outlive the counts). */
KtKeyedCounts *kt_keyed_counts_new    (gint32 partition, guint n_sums, KtKeyLimit *limit);
void           kt_keyed_counts_free   (KtKeyedCounts *self);  /* NULL is fine */

/* Counts one line of @bucket with @key (@key_len bytes, copied) and
 * @sums (n_sums values). A key the limit refuses goes to the (other) row
 * of the bucket. Consecutive lines of one key cost one comparison. */
void           kt_keyed_counts_add    (KtKeyedCounts *self, gint64 bucket, const guint8 *key,
                                       gsize key_len, const KtAmount *sums);

/* Rows so far, (other) rows included. */
guint          kt_keyed_counts_size   (KtKeyedCounts *self);

/* Lines counted in (other) rows so far. */
guint64        kt_keyed_counts_folded (KtKeyedCounts *self);

/* Every row, by bucket, then key bytes (shorter first when one is a prefix
 * of the other), the (other) row last in its bucket: writers lock rows in
 * this one order. The array is the caller's; its pointers stay valid until
 * the counts change. */
GArray        *kt_keyed_counts_sorted (KtKeyedCounts *self);

/* kt_keyed_counts_sorted()'s order on two KtKeyedRow (the partition aside):
 * rows of one bucket and key from several KtKeyedCounts compare equal. */
gint           kt_keyed_row_compare   (gconstpointer a, gconstpointer b);

/* Forgets every row (the limit is cleared on its own). */
void           kt_keyed_counts_clear  (KtKeyedCounts *self);

/* @sum as MySQL prints a DECIMAL(38,4): "-12.5000", "0.0000". At most 42
 * bytes with the NUL. */
void           kt_sum_format          (KtSum sum, char buf[static 48]);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (KtKeyedCounts, kt_keyed_counts_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (KtKeyLimit, kt_key_limit_free)
