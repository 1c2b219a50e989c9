/* anchors.c - which topic is this? (anchors.h) */
#include "anchors.h"

#include "error.h"
#include "log.h"
#include "offsets.h"
#include "source.h"

/* As a batch's read: a leader that sends nothing for this long is a
 * transient failure, retried. */
#define STALL_MS 30000

static void
ignore_record (gint32 partition, gint64 offset, const char *value, gsize len,
               gpointer user_data)
{
  (void) partition, (void) offset, (void) value, (void) len, (void) user_data;
}

/* The way out of a mismatch, for the end of its line. New string. */
static char *
way_out (const KtKindContext *context, const KtKind *kind)
{
  g_autofree char *rebuild = kind->rebuilds
    ? g_strdup_printf (", or `ktally reset --job %s --to earliest --rebuild --execute` recounts "
                       "the job from the new log alone (the old log's counts go)", context->job)
    : g_strdup ("");

  return g_strdup_printf ("`ktally forget --job %s --execute` and a new run count the new log "
                          "from its start (what the job counted of the old log stays)%s",
                          context->job, rebuild);
}

static gboolean
mismatch (const KtKindContext *context, const KtKind *kind, const KtPartitionState *s,
          const KtAnchor *counted, const KtAnchor *found, GError **error)
{
  g_autofree char *was = kt_anchor_describe (counted);
  g_autofree char *now = found != NULL ? kt_anchor_describe (found) : NULL;
  g_autofree char *out = way_out (context, kind);
  g_autofree char *stored = s->stored >= 0
    ? g_strdup_printf ("its stored offset %" G_GINT64_FORMAT " is", s->stored)
    : g_strdup ("its stored offsets are");

  if (found != NULL)
    g_set_error (error, KT_ERROR, KT_ERROR_DATA_LOSS,
                 "topic %s, partition %d: the record at offset %" G_GINT64_FORMAT " is not the "
                 "one job %s counted there (%s; it counted %s): the topic was deleted and "
                 "created again (or truncated), and %s the old log's; %s", context->topic,
                 s->partition, counted->offset, context->job, now, was, stored, out);
  else
    g_set_error (error, KT_ERROR, KT_ERROR_DATA_LOSS,
                 "topic %s, partition %d: the log now ends at %" G_GINT64_FORMAT ", before the "
                 "record job %s counted at offset %" G_GINT64_FORMAT " (%s): the topic was "
                 "deleted and created again (or truncated), and %s the old log's; %s",
                 context->topic, s->partition, s->high, context->job, counted->offset, was, stored,
                 out);
  return FALSE;
}

static gboolean
wanted (const GArray *partitions, gint32 partition)
{
  for (guint i = 0; i < partitions->len; i++)
    if (g_array_index (partitions, gint32, i) == partition)
      return TRUE;
  return FALSE;
}

gboolean
kt_anchors_check (KtKindContext *context, const KtKind *kind, const GArray *states,
                  const GArray *partitions, const volatile int *stop, GError **error)
{
  g_autoptr(GHashTable) anchors = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL,
                                                         g_free);
  g_autoptr(GArray) ranges = g_array_new (FALSE, TRUE, sizeof (KtRange));
  g_autoptr(KtLogEvent) e = NULL;
  gint64 started = g_get_monotonic_time ();
  guint unseen = 0, checked = 0, same = 0;

  if (partitions->len == 0)
    return TRUE;
  if (!kt_offsets_anchors (context->db, kind->anchors, context->job, context->topic, anchors,
                           error))
    return FALSE;
  for (guint i = 0; i < states->len; i++)
    {
      const KtPartitionState *s = &g_array_index (states, KtPartitionState, i);
      const KtAnchor *a = g_hash_table_lookup (anchors, GINT_TO_POINTER (s->partition));

      if (a == NULL || !wanted (partitions, s->partition))
        continue;
      checked++;
      switch (kt_anchor_place (a, s->stored, s->low, s->high))
        {
        case KT_ANCHOR_READ:
          g_array_append_val (ranges, ((KtRange) { .partition = s->partition,
                                                   .from = a->offset, .read_from = a->offset,
                                                   .until = a->offset + 1 }));
          break;
        case KT_ANCHOR_PAST_END:
          return mismatch (context, kind, s, a, NULL, error);
        default:
          unseen++;
          g_debug ("job %s: %s/%d: the record counted last (offset %" G_GINT64_FORMAT
                   ") is not in the readable log [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT
                   "): not compared", context->job, context->topic, s->partition, a->offset, s->low,
                   s->high);
          break;
        }
    }
  /* One read for all: each partition's record at its anchor's offset. */
  if (ranges->len > 0
      && !kt_source_read (context->source, ranges, ignore_record, NULL, stop, STALL_MS, error))
    return FALSE;
  for (guint i = 0; i < ranges->len; i++)
    {
      const KtRange *r = &g_array_index (ranges, KtRange, i);
      const KtAnchor *a = g_hash_table_lookup (anchors, GINT_TO_POINTER (r->partition));
      const KtPartitionState *s = NULL;

      for (guint j = 0; j < states->len; j++)
        if (g_array_index (states, KtPartitionState, j).partition == r->partition)
          s = &g_array_index (states, KtPartitionState, j);
      switch (kt_anchor_compare (a, &r->anchor))
        {
        case KT_ANCHOR_DIFFERS:
          return mismatch (context, kind, s, a, &r->anchor, error);
        case KT_ANCHOR_UNSEEN:
          unseen++;
          g_debug ("job %s: %s/%d: no record at offset %" G_GINT64_FORMAT " now (compacted "
                   "away?): the record counted last is not compared", context->job, context->topic,
                   r->partition, a->offset);
          break;
        default:
          same++;
          break;
        }
    }
  e = kt_log_event_new ("anchors");
  kt_log_event_string (e, "job", context->job);
  kt_log_event_string (e, "topic", context->topic);
  kt_log_event_int (e, "partitions", checked);
  kt_log_event_int (e, "read", ranges->len);
  kt_log_event_int (e, "unseen", unseen);
  kt_log_event_double (e, "seconds", (double) (g_get_monotonic_time () - started) / G_USEC_PER_SEC,
                       3);
  kt_log_event_int (e, "same", same);
  kt_log_event_emit (e, G_LOG_LEVEL_DEBUG, "job %s: %s: the record counted last is where it "
                     "was in %u of %u partition%s (%u not readable: removed, or a hole), "
                     "%.3f s", context->job, context->topic, same, checked, checked == 1 ? "" : "s",
                     unseen, (double) (g_get_monotonic_time () - started) / G_USEC_PER_SEC);
  return TRUE;
}
