/* by-time.h - where a moment falls in each partition of a topic: the
 * offsets that `reset --to-datetime/--by-duration` moves to and that
 * `replay --from-datetime/--until-datetime/--last` reads between.
 *
 * Kafka answers, per partition, the earliest offset whose record's
 * timestamp is at or after the moment (source.h). Where it answers none
 * (the moment is after the last record, or the partition is empty) the
 * offset is the high watermark, which under read_committed is the last
 * stable offset: the end of what ktally may read now. A moment before the
 * log start falls on the first record still there, and so does a moment
 * before 1970, which is never asked of Kafka (it reads negative
 * timestamps as special values). Timestamps out of
 * order (CreateTime, set by producers) make the answer the first record
 * at or after the moment: later records with earlier timestamps come
 * after it, earlier records with later ones before it. */
#pragma once
#include <glib.h>
#include "plan.h"
#include "source.h"

typedef enum
{
  KT_AT_RECORD,  /* the first record at or after the moment */
  KT_AT_END,     /* no record at or after it: the high watermark */
} KtTimePlace;

typedef struct
{
  gint32      partition;
  gint64      offset;
  KtTimePlace place;
} KtTimeOffset;

/* Kafka's @answer (-1: none) for partition @s as an offset within [low,
 * high], and what it is. Pure. */
void     kt_time_offset_place (const KtPartitionState *s, gint64 answer, KtTimeOffset *out);

/* The offsets of @ms in each of @states (low and high known) into @out
 * (@n_states of them), asked of @source; @ms before 1970 (negative): each
 * log start, and @source is not used. Errors as
 * kt_source_offsets_for_time(). */
gboolean kt_time_offsets (KtSource *source, const KtPartitionState *states, guint n_states,
                          gint64 ms, KtTimeOffset *out, int timeout_ms, GError **error);

/* "no record at or after it: the high watermark" and the like. */
const char *kt_time_place_words (KtTimePlace place);
/* "record", "end": for --json. */
const char *kt_time_place_name (KtTimePlace place);
