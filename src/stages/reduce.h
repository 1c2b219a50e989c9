/* reduce.h - per-minute ERROR counts for one batch.
 *
 * The parser feeds it, the sink drains it. It never touches Kafka or
 * MySQL, which keeps it trivial to test. */
#pragma once
#include <glib.h>

typedef struct _KtReducer KtReducer;

typedef struct
{
  gint64  minute;  /* minutes since 1970-01-01 00:00 of the naive timestamp */
  guint64 count;
} KtMinuteCount;

KtReducer *kt_reducer_new   (void);
void       kt_reducer_free  (KtReducer *self);  /* NULL is fine */

/* Counts @n ERROR lines in @minute. Consecutive lines of one minute (the
 * usual case) cost no hash lookup: the last minute is kept aside. */
void       kt_reducer_add   (KtReducer *self, gint64 minute, guint64 n);
guint64    kt_reducer_get   (KtReducer *self, gint64 minute);

/* Number of distinct minutes counted so far. */
guint      kt_reducer_size  (KtReducer *self);

/* Every (minute, count) pair, ascending by minute: the sink writes them in
 * this order so that concurrent writers lock rows in one order. The caller
 * owns the array. */
GArray    *kt_reducer_sorted (KtReducer *self);

/* Adds every count of @other into @self. */
void       kt_reducer_merge (KtReducer *self, KtReducer *other);

void       kt_reducer_clear (KtReducer *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (KtReducer, kt_reducer_free)
