/* positions.c - where each partition of a job stands (positions.h). */
#include "positions.h"

#include "error.h"
#include "log.h"
#include "offsets.h"
#include "source.h"

#define KAFKA_TIMEOUT_MS 10000

/* Where a replay starts or ends on @partition. */
static gint64
bound (const GArray *bounds, gint32 partition)
{
  /* By partition: a search, not a scan, since every batch of a replay of
   * thousands of partitions asks for each. */
  const KtPartitionOffset *po = kt_partition_offset_find (bounds, partition);

  g_return_val_if_fail (po != NULL, 0);
  return po->offset;
}

/* The stored offsets of @states: kafka_offset, or the consumer group's
 * committed offsets with --offsets kafka. */
static gboolean
load_stored (KtKindContext *context, KtPartitionState *s, guint n, GError **error)
{
  if (context->spec->offsets == KT_OFFSETS_KAFKA)
    return kt_source_committed (context->source, s, n, KAFKA_TIMEOUT_MS, error);
  return kt_offsets_load (context->db, context->job, context->topic, s, n, error);
}

/* "0-3,7": ascending partitions, runs folded. */
static void
append_partitions (GString *out, const GArray *ranges)
{
  for (guint i = 0; i < ranges->len;)
    {
      gint32 first = g_array_index (ranges, KtRange, i).partition, last = first;

      while (++i < ranges->len && g_array_index (ranges, KtRange, i).partition == last + 1)
        last++;
      g_string_append_printf (out, "%s%d", out->len > 0 ? "," : "", first);
      if (last > first)
        g_string_append_printf (out, "-%d", last);
    }
}

/* One line for the partitions seen for the first time (@fresh: KtRange,
 * from where each starts to its high watermark), however many there are. */
static void
report_new (KtKindContext *context, const GArray *fresh, gboolean latest)
{
  g_autoptr(KtLogEvent) e = kt_log_event_new ("new-partitions");
  g_autoptr(GString) list = g_string_new (NULL);
  gint64 backlog = 0;

  for (guint i = 0; i < fresh->len; i++)
    backlog += MAX (0, g_array_index (fresh, KtRange, i).until
                       - g_array_index (fresh, KtRange, i).from);
  append_partitions (list, fresh);
  kt_log_event_string (e, "job", context->job);
  kt_log_event_string (e, "topic", context->topic);
  kt_log_event_string (e, "partition_list", list->str);
  kt_log_event_int (e, "partitions", fresh->len);
  kt_log_event_int (e, "lag", backlog);
  kt_log_event_emit (e, G_LOG_LEVEL_MESSAGE, "job %s: %u new partition%s of %s (%s): "
                     "starting at %s %s offset%s, %" G_GINT64_FORMAT " offset%s to read",
                     context->job, fresh->len, fresh->len == 1 ? "" : "s", context->topic,
                     list->str, fresh->len == 1 ? "its" : "their", latest ? "latest" : "earliest",
                     fresh->len == 1 ? "" : "s", backlog, backlog == 1 ? "" : "s");
}

/* One partition's stored offset moved since this process's last batch
 * (@was, to @now; -1: its row is gone): by `ktally reset` or `forget`,
 * said in the log; by another writer of the job, not news. */
static gboolean
report_moved (KtKindContext *context, gint32 partition, gint64 was, gint64 now, GError **error)
{
  g_autoptr(KtLogEvent) e = NULL;
  g_autofree char *member = NULL;

  /* Only reset moves an offset back, and a forward move by reset
   * records its skip with reset's member name. */
  if (now > was && (!kt_offsets_mover (context->db, context->job, context->topic, partition,
                                       was, now, &member, error)))
    return FALSE;
  if (now > was && (member == NULL || !g_str_has_prefix (member, "reset-")))
    {
      g_debug ("job %s: %s/%d: another writer moved it from %" G_GINT64_FORMAT " to %"
               G_GINT64_FORMAT, context->job, context->topic, partition, was, now);
      return TRUE;
    }
  e = kt_log_event_new ("offsets-moved");
  kt_log_event_string (e, "job", context->job);
  kt_log_event_string (e, "topic", context->topic);
  kt_log_event_int (e, "partition", partition);
  kt_log_event_int (e, "from", was);
  if (now < 0)
    {
      kt_log_event_string (e, "by", "forget");
      kt_log_event_emit (e, G_LOG_LEVEL_WARNING, "job %s: %s/%d: its stored offset (%"
                         G_GINT64_FORMAT ") is gone while the job ran (`ktally forget`): "
                         "it starts again as a partition seen for the first time", context->job,
                         context->topic, partition, was);
      return TRUE;
    }
  kt_log_event_int (e, "to", now);
  kt_log_event_string (e, "by", "reset");
  if (member != NULL)
    kt_log_event_string (e, "member", member);
  kt_log_event_emit (e, G_LOG_LEVEL_MESSAGE, "job %s: %s/%d: its offset was moved %s from %"
                     G_GINT64_FORMAT " to %" G_GINT64_FORMAT " while the job ran, by `ktally "
                     "reset`%s%s: reading on from %" G_GINT64_FORMAT, context->job, context->topic,
                     partition, now < was ? "back" : "on", was, now, member != NULL ? " " : "",
                     member != NULL ? member : "", now);
  return TRUE;
}

/* Each of @s whose stored offset is not where @expected left it. */
static gboolean
report_moves (KtKindContext *context, const GArray *expected, const KtPartitionState *s, guint n,
              GError **error)
{
  for (guint i = 0; expected != NULL && i < expected->len; i++)
    {
      const KtPartitionState *e = &g_array_index (expected, KtPartitionState, i);

      for (guint j = 0; j < n; j++)
        if (s[j].partition == e->partition && e->stored >= 0 && s[j].stored != e->stored
            && !report_moved (context, e->partition, e->stored, s[j].stored, error))
          return FALSE;
    }
  return TRUE;
}

/* A replay: every partition of @s stands within the replay's range, and
 * its high watermark is the range's end. */
static gboolean
within_replay (KtKindContext *context, KtPartitionState *s, guint n, GError **error)
{
  const KtJobSpec *spec = context->spec;

  for (guint i = 0; i < n; i++)
    {
      gint64 from = bound (spec->replay_from, s[i].partition);
      gint64 until = bound (spec->replay_until, s[i].partition);

      /* Only a reset by a ktally that did not keep a replay within its
       * range (before schema version 7) can have moved it out: read on, it
       * would count outside the range or stop on a "data loss" whose way
       * out replay does not take. */
      if (s[i].stored >= 0 && (s[i].stored < from || s[i].stored > until))
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                       "replay %s: %s/%d stands at %" G_GINT64_FORMAT ", outside its range ["
                       "%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "] (moved by a reset?): its "
                       "table may hold counts from outside it (`ktally audit` says); "
                       "`ktally reset --to earliest --rebuild` counts the range again",
                       context->job, context->topic, s[i].partition, s[i].stored, from, until);
          return FALSE;
        }
      s[i].high = MIN (s[i].high, until);
    }
  return TRUE;
}

gboolean
kt_positions_read (KtKindContext *context, const GArray *partitions, const GArray *expected,
                   GArray *states, GError **error)
{
  KtPartitionState *s;

  g_array_set_size (states, partitions->len);
  s = (KtPartitionState *) (void *) states->data;
  for (guint i = 0; i < states->len; i++)
    s[i] = (KtPartitionState) { g_array_index (partitions, gint32, i), -1, 0, 0 };
  return load_stored (context, s, states->len, error)
         && kt_source_watermarks (context->source, s, states->len, KAFKA_TIMEOUT_MS, error)
         && report_moves (context, expected, s, states->len, error);
}

gboolean
kt_positions_settle (KtKindContext *context, GArray *states, GError **error)
{
  const KtJobSpec *spec = context->spec;
  g_autoptr(GArray) starts = g_array_new (FALSE, FALSE, sizeof (KtRange));
  g_autoptr(GArray) fresh = g_array_new (FALSE, FALSE, sizeof (KtRange));
  g_autoptr(GArray) new_partitions = g_array_new (FALSE, FALSE, sizeof (gint32));
  g_autoptr(GArray) new_offsets = g_array_new (FALSE, FALSE, sizeof (gint64));
  KtPartitionState *s = (KtPartitionState *) (void *) states->data;
  gboolean missing = FALSE, known = FALSE, latest;

  /* --start says where a job starts. Read by one process over the whole
   * topic, a partition without a stored offset beside partitions with one
   * was added to the topic since: all it holds came after the job started,
   * so it is read from its log start. A --partitions share or a --group
   * member cannot tell an added partition from one another writer of the
   * job has not stored yet: --start holds there. */
  for (guint i = 0; i < states->len; i++)
    known |= s[i].stored >= 0 && spec->partitions == NULL && spec->group == NULL;
  latest = spec->start == KT_START_LATEST && !known;
  for (guint i = 0; i < states->len; i++)
    if (s[i].stored < 0)
      {
        gint64 at = latest ? s[i].high : s[i].low;

        if (spec->replay_from != NULL)
          at = bound (spec->replay_from, s[i].partition);
        else
          {
            g_debug ("job %s: %s/%d is new: starting at its %s offset %" G_GINT64_FORMAT,
                     context->job, context->topic, s[i].partition,
                     latest ? "latest" : "earliest", at);
            g_array_append_val (fresh, ((KtRange) { .partition = s[i].partition, .from = at,
                                                      .read_from = at, .until = s[i].high }));
          }
        /* A job that holds offsets is a job: what it is goes in first,
         * wherever the offsets live (`ktally jobs` lists it from then). */
        if (!kt_kind_context_claim (context, error))
          return FALSE;
        if (spec->offsets == KT_OFFSETS_KAFKA)
          {
            /* Decided once: committed to the group before the first read.
             * Re-decided every batch, "latest" would move ahead of the
             * data forever. */
            g_array_append_val (starts, ((KtRange) { .partition = s[i].partition, .from = at,
                                                      .read_from = at, .until = at }));
            s[i].stored = at;
            continue;
          }
        missing = TRUE;
        g_array_append_val (new_partitions, s[i].partition);
        g_array_append_val (new_offsets, at);
      }
  if (!kt_offsets_init_many (context->db, context->job, context->topic,
                             (const gint32 *) (void *) new_partitions->data,
                             (const gint64 *) (void *) new_offsets->data, new_partitions->len,
                             error))
    return FALSE;
  if (fresh->len > 0)
    report_new (context, fresh, latest);
  if (!kt_source_commit (context->source, starts, error))
    return FALSE;
  if (missing
      && (!load_stored (context, s, states->len, error)
          || !kt_source_watermarks (context->source, s, states->len, KAFKA_TIMEOUT_MS, error)))
    return FALSE;

  return spec->replay_until == NULL || within_replay (context, s, states->len, error);
}

gboolean
kt_positions_assigned (KtKindContext *context, KtPartitionState *s, guint n, GError **error)
{
  const KtJobSpec *spec = context->spec;
  gboolean missing = FALSE, known = FALSE;

  if (!kt_offsets_load (context->db, context->job, context->topic, s, n, error))
    return FALSE;
  for (guint i = 0; i < n; i++)
    {
      missing |= s[i].stored < 0;
      known |= s[i].stored >= 0;  /* as in kt_positions_settle: added partitions */
    }
  if (!missing)
    return TRUE;
  if (!kt_source_watermarks (context->source, s, n, KAFKA_TIMEOUT_MS, error)
      || !kt_kind_context_claim (context, error))
    return FALSE;
  {
    g_autoptr(GArray) parts = g_array_new (FALSE, FALSE, sizeof (gint32));
    g_autoptr(GArray) offsets = g_array_new (FALSE, FALSE, sizeof (gint64));

    for (guint i = 0; i < n; i++)
      if (s[i].stored < 0)
        {
          gint64 at = spec->start == KT_START_LATEST && !known ? s[i].high : s[i].low;

          g_array_append_val (parts, s[i].partition);
          g_array_append_val (offsets, at);
        }
    if (!kt_offsets_init_many (context->db, context->job, context->topic,
                               (const gint32 *) (void *) parts->data,
                               (const gint64 *) (void *) offsets->data, parts->len, error))
      return FALSE;
  }
  return kt_offsets_load (context->db, context->job, context->topic, s, n, error);
}

gboolean
kt_positions_partitions (KtKindContext *context, GArray *partitions, int timeout_ms, GError **error)
{
  const GArray *only = context->spec->partitions;
  g_autoptr(GArray) all = g_array_new (FALSE, FALSE, sizeof (gint32));

  if (!kt_source_partitions (context->source, all, timeout_ms, error))
    return FALSE;
  g_array_set_size (partitions, 0);
  for (guint i = 0; i < all->len; i++)
    {
      gint32 p = g_array_index (all, gint32, i);
      gboolean wanted = only == NULL;

      for (guint j = 0; only != NULL && j < only->len; j++)
        wanted |= g_array_index (only, gint32, j) == p;
      if (wanted)
        g_array_append_val (partitions, p);
    }
  if (only != NULL && partitions->len < only->len)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "--partitions: topic %s has %u partitions (0-%d): some listed are not",
                   context->topic, all->len, (int) all->len - 1);
      return FALSE;
    }
  return TRUE;
}
