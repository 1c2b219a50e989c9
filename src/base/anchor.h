/* anchor.h - which record a job counted last on a partition: its anchor.
 *
 * A stored offset says where a job stands in a partition's log, but not
 * in which log: a topic deleted and created again under the same name
 * starts its offsets again, and once its log has grown past the stored
 * offsets they name records the job never saw. The anchor is the last
 * record a batch counted of a partition: its offset, its Kafka timestamp
 * and a hash of its key and value. The source takes it from the records
 * it hands over (source.c), the kinds store it with the offsets, in the
 * batch's transaction (offsets.c; an idempotent job's with its covered
 * offsets), and the scheduler compares it with the record at that offset
 * before it reads on (core/anchors.c). Pure: no Kafka, no MySQL. */
#pragma once
#include <glib.h>

typedef struct
{
  gboolean set;        /* FALSE: no record (zeroed: none) */
  gint64   offset;
  gint64   timestamp;  /* Kafka's, in ms since the epoch; -1: the record has none */
  guint64  hash;       /* kt_anchor_hash() of its key and value */
} KtAnchor;

/* FNV-1a (64-bit) over the key's length and bytes, then the value's: a
 * length is 8 bytes, little-endian, all ones for NULL (a tombstone's
 * value, a record without a key), so NULL and empty differ. Stored in
 * databases: it never changes. */
guint64  kt_anchor_hash (const void *key, gsize key_len, const void *value, gsize value_len);

/* Where a stored anchor stands against the log as it is now. */
typedef enum
{
  KT_ANCHOR_NONE,      /* none stored */
  KT_ANCHOR_UNSEEN,    /* its record cannot be read: below the log start (retention),
                        * or a hole now (compaction), or the stored offset itself is
                        * past the log's end (the data-loss rule decides there) */
  KT_ANCHOR_READ,      /* inside the readable log: read the record at its offset */
  KT_ANCHOR_SAME,      /* that record is the one counted */
  KT_ANCHOR_DIFFERS,   /* another record is at its offset */
  KT_ANCHOR_PAST_END,  /* the readable log ends at or before it, though the stored
                        * offset is not past that end: it is not the log counted */
} KtAnchorVerdict;

/* Before reading: @anchor (may be unset) against a partition whose stored
 * offset is @stored (-1: none) and whose readable log is [@low, @high):
 * NONE, UNSEEN, PAST_END, or READ. */
KtAnchorVerdict kt_anchor_place   (const KtAnchor *anchor, gint64 stored, gint64 low,
                                   gint64 high);

/* After reading [anchor->offset, anchor->offset + 1): @found, the record
 * read there (unset: none, a hole): SAME, DIFFERS or UNSEEN. */
KtAnchorVerdict kt_anchor_compare (const KtAnchor *anchor, const KtAnchor *found);

/* "timestamp 2026-12-07T16:51:43.785Z, hash 4f2a...": for messages. New
 * string. */
char    *kt_anchor_describe (const KtAnchor *anchor);
