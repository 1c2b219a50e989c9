/* by-time.c - where a moment falls in each partition (by-time.h). */
#include "by-time.h"

void
kt_time_offset_place (const KtPartitionState *s, gint64 answer, KtTimeOffset *out)
{
  out->partition = s->partition;
  if (answer < 0 || answer >= s->high)
    {
      out->offset = s->high;
      out->place = KT_AT_END;
      return;
    }
  /* Retention may have moved the log start past the record a broker
   * found a moment ago: the first one still there. */
  out->offset = MAX (answer, s->low);
  out->place = KT_AT_RECORD;
}

gboolean
kt_time_offsets (KtSource *source, const KtPartitionState *states, guint n_states, gint64 ms,
                 KtTimeOffset *out, int timeout_ms, GError **error)
{
  g_autofree gint64 *answers = g_new (gint64, MAX (n_states, 1));

  /* Kafka's timestamps count from 1970 (a record has none below 0), and
   * ListOffsets reads a negative "timestamp" as a special value: -1 the
   * end, -2 the start, others refused by the broker ("API version not
   * supported"). A moment before 1970 is before every record: each
   * partition's first record still there, without asking. */
  if (ms < 0)
    {
      for (guint i = 0; i < n_states; i++)
        kt_time_offset_place (&states[i], states[i].low, &out[i]);
      return TRUE;
    }
  if (!kt_source_offsets_for_time (source, states, n_states, ms, answers, timeout_ms, error))
    return FALSE;
  for (guint i = 0; i < n_states; i++)
    kt_time_offset_place (&states[i], answers[i], &out[i]);
  return TRUE;
}

const char *
kt_time_place_words (KtTimePlace place)
{
  return place == KT_AT_RECORD ? "the first record at or after it"
                               : "no record at or after it: the high watermark";
}

const char *
kt_time_place_name (KtTimePlace place)
{
  return place == KT_AT_RECORD ? "record" : "end";
}
