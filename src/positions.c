/* positions.c - where each partition of a job stands (positions.h). */
#include "positions.h"

#include "error.h"
#include "offsets.h"
#include "source.h"

#define KAFKA_TIMEOUT_MS 10000

/* Where a replay starts or ends on @partition. */
static gint64
bound (const GArray *bounds, gint32 partition)
{
  for (guint i = 0; i < bounds->len; i++)
    if (g_array_index (bounds, KtPartitionOffset, i).partition == partition)
      return g_array_index (bounds, KtPartitionOffset, i).offset;
  g_return_val_if_reached (0);
}

/* The stored offsets of @states: kafka_offset, or the consumer group's
 * committed offsets with --offsets kafka. */
static gboolean
load_stored (KtJob *job, KtPartitionState *s, guint n, GError **error)
{
  if (job->config->offsets == KT_OFFSETS_KAFKA)
    return kt_source_committed (job->source, s, n, KAFKA_TIMEOUT_MS, error);
  return kt_offsets_load (job->db, job->job, job->topic, s, n, error);
}

gboolean
kt_positions_load (KtJob *job, const GArray *partitions, GArray *states, GError **error)
{
  const KtConfig *config = job->config;
  g_autoptr(GArray) starts = g_array_new (FALSE, FALSE, sizeof (KtRange));
  KtPartitionState *s;
  gboolean missing = FALSE;

  g_array_set_size (states, partitions->len);
  s = (KtPartitionState *) (void *) states->data;
  for (guint i = 0; i < states->len; i++)
    s[i] = (KtPartitionState) { g_array_index (partitions, gint32, i), -1, 0, 0 };

  if (!load_stored (job, s, states->len, error)
      || !kt_source_watermarks (job->source, s, states->len, KAFKA_TIMEOUT_MS, error))
    return FALSE;

  for (guint i = 0; i < states->len; i++)
    if (s[i].stored < 0)
      {
        gint64 at = config->start == KT_START_LATEST ? s[i].high : s[i].low;

        if (config->replay_from != NULL)
          at = bound (config->replay_from, s[i].partition);
        else
          g_message ("job %s: %s/%d is new: starting at its %s offset %" G_GINT64_FORMAT,
                     job->job, job->topic, s[i].partition,
                     config->start == KT_START_LATEST ? "latest" : "earliest", at);
        if (config->offsets == KT_OFFSETS_KAFKA)
          {
            /* Decided once: committed to the group before the first read.
             * Re-decided every batch, "latest" would move ahead of the
             * data forever. */
            g_array_append_val (starts, ((KtRange) { s[i].partition, at, at, at }));
            s[i].stored = at;
            continue;
          }
        missing = TRUE;
        /* A job that holds offsets is a job: what it is goes in first. */
        if (!kt_job_claim (job, error)
            || !kt_offsets_init (job->db, job->job, job->topic, s[i].partition, at, error))
          return FALSE;
      }
  if (!kt_source_commit (job->source, starts, error))
    return FALSE;
  if (missing
      && (!load_stored (job, s, states->len, error)
          || !kt_source_watermarks (job->source, s, states->len, KAFKA_TIMEOUT_MS, error)))
    return FALSE;

  if (config->replay_until != NULL)
    for (guint i = 0; i < states->len; i++)
      s[i].high = MIN (s[i].high, bound (config->replay_until, s[i].partition));
  return TRUE;
}

gboolean
kt_positions_assigned (KtJob *job, KtPartitionState *s, guint n, GError **error)
{
  const KtConfig *config = job->config;
  gboolean missing = FALSE;

  if (!kt_offsets_load (job->db, job->job, job->topic, s, n, error))
    return FALSE;
  for (guint i = 0; i < n; i++)
    missing |= s[i].stored < 0;
  if (!missing)
    return TRUE;
  if (!kt_source_watermarks (job->source, s, n, KAFKA_TIMEOUT_MS, error)
      || !kt_job_claim (job, error))
    return FALSE;
  for (guint i = 0; i < n; i++)
    if (s[i].stored < 0
        && !kt_offsets_init (job->db, job->job, job->topic, s[i].partition,
                             config->start == KT_START_LATEST ? s[i].high : s[i].low, error))
      return FALSE;
  return kt_offsets_load (job->db, job->job, job->topic, s, n, error);
}

gboolean
kt_positions_partitions (KtJob *job, GArray *partitions, int timeout_ms, GError **error)
{
  const GArray *only = job->config->only_partitions;
  g_autoptr(GArray) all = g_array_new (FALSE, FALSE, sizeof (gint32));

  if (!kt_source_partitions (job->source, all, timeout_ms, error))
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
                   job->topic, all->len, (int) all->len - 1);
      return FALSE;
    }
  return TRUE;
}
