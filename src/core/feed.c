/* feed.c - one topic of a job (feed.h). */
#include "feed.h"

#include "anchors.h"
#include "positions.h"

/* --group: the source asks where newly assigned partitions start. */
static gboolean
group_start_offsets (KtPartitionState *s, guint n, gpointer user_data, GError **error)
{
  KtFeed *f = user_data;
  gboolean ok;

  /* Called from inside a read, which may run while a commit is in
   * flight on the same connection: wait for it. */
  g_mutex_lock (f->db_lock);
  ok = kt_positions_assigned (&f->context, s, n, error);
  g_mutex_unlock (f->db_lock);
  return ok;
}

/* A rebalance begins: the commit in flight ends before any partition
 * changes hands, so that a partition given away was written by that batch
 * (or not at all) before its next owner reads where it stands. */
static void
group_rebalancing (gpointer user_data)
{
  KtFeed *f = user_data;

  if (f->flight_gate != NULL)
    kt_flight_wait (f->flight_gate);
}

void
kt_flight_init (KtFlight *self)
{
  g_mutex_init (&self->lock);
  g_cond_init (&self->ended);
  self->flying = FALSE;
}

void
kt_flight_clear (KtFlight *self)
{
  g_mutex_clear (&self->lock);
  g_cond_clear (&self->ended);
}

void
kt_flight_begin (KtFlight *self)
{
  g_mutex_lock (&self->lock);
  self->flying = TRUE;
  g_mutex_unlock (&self->lock);
}

void
kt_flight_end (KtFlight *self)
{
  g_mutex_lock (&self->lock);
  self->flying = FALSE;
  g_cond_broadcast (&self->ended);
  g_mutex_unlock (&self->lock);
}

void
kt_flight_wait (KtFlight *self)
{
  g_mutex_lock (&self->lock);
  while (self->flying)
    g_cond_wait (&self->ended, &self->lock);
  g_mutex_unlock (&self->lock);
}

static void
batch_init (KtFeedBatch *b)
{
  b->states = g_array_new (FALSE, TRUE, sizeof (KtPartitionState));
  b->ranges = g_array_new (FALSE, TRUE, sizeof (KtRange));
  b->losses = g_array_new (FALSE, TRUE, sizeof (KtDataLoss));
}

/* Empties @b (its kind's batch freed) to be planned into again. */
static void
batch_reset (KtFeed *f, KtFeedBatch *b)
{
  if (b->batch != NULL)
    f->kind->batch_free (g_steal_pointer (&b->batch));
  if (b->ranges == NULL)
    return;
  g_array_set_size (b->ranges, 0);
  g_array_set_size (b->losses, 0);
  b->records = 0;
  b->bytes = 0;
  b->last_range = 0;
  b->ahead_of = 0;
}

static void
batch_clear (KtFeed *f, KtFeedBatch *b)
{
  batch_reset (f, b);
  g_clear_pointer (&b->states, g_array_unref);
  g_clear_pointer (&b->ranges, g_array_unref);
  g_clear_pointer (&b->losses, g_array_unref);
}

KtFeed *
kt_feed_new (const KtRunSetup *setup, const char *topic, const KtKind *kind, KtDb *db,
             const char *member, KtMetrics *metrics, gboolean quiet,
             const volatile int *stop, GError **error)
{
  const KtJobSpec *spec = setup->spec;
  KtFeed *f = g_new0 (KtFeed, 1);
  KtSourceConfig source_config = {
    .brokers = setup->kafka->brokers,
    .topic = topic,
    .client_id = spec->name,
    .properties = (const char *const *) setup->kafka->properties,
    .max_batch_bytes = setup->run->max_batch_bytes,
    .group = spec->group,
    .start_offsets = group_start_offsets,
    .rebalancing = group_rebalancing,
    .start_offsets_data = f,
    .stop = stop,
  };

  f->kind = kind;
  f->member = spec->group != NULL;
  f->stop = stop;
  f->doubt = TRUE;  /* a job's start: every anchor is checked */
  f->verified = g_hash_table_new (g_direct_hash, g_direct_equal);
  f->partitions = g_array_new (FALSE, FALSE, sizeof (gint32));
  f->unknown_commit = g_array_new (FALSE, FALSE, sizeof (KtRange));
  f->expected = g_array_new (FALSE, TRUE, sizeof (KtPartitionState));
  batch_init (&f->next);
  batch_init (&f->flight);
  f->log = (KtBatchLog) { .job = spec->name, .topic = topic, .metrics = metrics,
                          .quiet = quiet };
  f->source = kt_source_new (&source_config, error);
  f->log.source = f->source;
  f->context = (KtKindContext) {
    .spec = spec, .job = spec->name, .topic = topic, .output = setup->identity->output,
    .member = member, .db = db, .source = f->source, .identity = setup->identity,
  };
  if (f->source == NULL || (f->state = kind->open (&f->context, error)) == NULL)
    {
      kt_feed_free (f);
      return NULL;
    }
  return f;
}

void
kt_feed_free (KtFeed *f)
{
  if (f == NULL)
    return;
  /* next first: it may have been made from flight. */
  batch_clear (f, &f->next);
  batch_clear (f, &f->flight);
  if (f->state != NULL)
    f->kind->close (g_steal_pointer (&f->state));
  g_clear_pointer (&f->source, kt_source_free);
  g_clear_pointer (&f->partitions, g_array_unref);
  g_clear_pointer (&f->unknown_commit, g_array_unref);
  g_clear_pointer (&f->expected, g_array_unref);
  g_clear_pointer (&f->verified, g_hash_table_unref);
  g_free (f);
}

/* The partitions this instance reads: its group assignment, or the
 * topic's (only the --partitions ones), fresh from the metadata. */
static gboolean
refresh (KtFeed *f, gboolean fresh, int timeout_ms, GError **error)
{
  gboolean assigned;

  if (f->member)
    {
      g_autoptr(GArray) all = g_array_new (FALSE, FALSE, sizeof (gint32));

      /* The group assigns the partitions; the metadata still says whether
       * the topic is there (a member of a deleted topic's group keeps its
       * partitions, and would wait for their watermarks for ever). */
      if (fresh)
        {
          if (!kt_source_partitions (f->source, all, timeout_ms, error))
            return FALSE;
          f->metadata_at = g_get_monotonic_time ();
        }
      kt_source_owned (f->source, f->partitions, &assigned);
      return TRUE;
    }
  if (!kt_positions_partitions (&f->context, f->partitions, timeout_ms, error))
    return FALSE;
  f->metadata_at = g_get_monotonic_time ();
  return TRUE;
}

gboolean
kt_feed_start (KtFeed *f, int timeout_ms, GError **error)
{
  if (f->metadata_at > 0)
    return TRUE;  /* it answered in an earlier try */
  if (!f->member)
    return refresh (f, TRUE, timeout_ms, error);
  if (!kt_source_partitions (f->source, f->partitions, timeout_ms, error))
    return FALSE;
  g_array_set_size (f->partitions, 0);  /* until the group assigns some */
  if (!kt_source_subscribe (f->source, error))
    return FALSE;
  f->metadata_at = g_get_monotonic_time ();
  return TRUE;
}

/* Whether a partition's log went back since this process's last batch:
 * its log start or its end below what they were (only a new log, or
 * one truncated, does that). */
static gboolean
went_back (const KtFeed *f)
{
  /* Both by partition (f->partitions is ascending): one walk, every batch. */
  for (guint i = 0, j = 0; i < f->expected->len && j < f->next.states->len;)
    {
      const KtPartitionState *was = &g_array_index (f->expected, KtPartitionState, i);
      const KtPartitionState *now = &g_array_index (f->next.states, KtPartitionState, j);

      if (was->partition < now->partition)
        i++;
      else if (was->partition > now->partition)
        j++;
      else if (now->low < was->low || now->high < was->high)
        return TRUE;
      else
        i++, j++;
    }
  return FALSE;
}

/* Which topic is this? The anchors of the partitions not checked since
 * the last doubt: every one at start, after a failed batch, when the
 * topic changed under the reader (its partitions vanished, or were
 * listed with other replicas) or a log went back; otherwise those the
 * group has just assigned (or that were added). */
static gboolean
check_anchors (KtFeed *f, GError **error)
{
  g_autoptr(GArray) todo = g_array_new (FALSE, FALSE, sizeof (gint32));
  g_autoptr(GHashTable) verified = g_hash_table_new (g_direct_hash, g_direct_equal);
  g_autoptr(GArray) assigned = g_array_new (FALSE, FALSE, sizeof (gint32));

  if (kt_source_take_changed (f->source) || went_back (f))
    f->doubt = TRUE;
  if (f->doubt)
    g_hash_table_remove_all (f->verified);
  /* Assigned (again) since: perhaps the partitions of a topic created
   * again under the group's subscription. */
  kt_source_take_assigned (f->source, assigned);
  for (guint i = 0; i < assigned->len; i++)
    g_hash_table_remove (f->verified, GINT_TO_POINTER (g_array_index (assigned, gint32, i)));
  for (guint i = 0; i < f->next.states->len; i++)
    {
      gint32 p = g_array_index (f->next.states, KtPartitionState, i).partition;

      if (!g_hash_table_contains (f->verified, GINT_TO_POINTER (p)))
        g_array_append_val (todo, p);
      g_hash_table_add (verified, GINT_TO_POINTER (p));
    }
  if (!kt_anchors_check (&f->context, f->kind, f->next.states, todo, f->stop, error))
    return FALSE;
  /* Those read now and still: a partition the group took away is
   * checked again when it comes back. */
  g_hash_table_unref (f->verified);
  f->verified = g_steal_pointer (&verified);
  f->doubt = FALSE;
  return TRUE;
}

void
kt_feed_doubt (KtFeed *f)
{
  f->doubt = TRUE;
}

gboolean
kt_feed_plan (KtFeed *f, gboolean fresh, gint64 max_per_partition, KtOnDataLoss on_data_loss,
              guint64 turn, gint64 started, GError **error)
{
  KtFeedBatch *b = &f->next;

  batch_reset (f, b);
  b->turn = turn;
  b->times = (KtBatchTimes) { .started = started };
  if (!kt_source_refused (f->source, error)
      || ((fresh || f->member) && !refresh (f, fresh, 10000, error)))
    return FALSE;
  /* Before the positions: a rebalance after this count drops the batch. */
  b->rebalances = kt_source_rebalances (f->source);
  /* The anchors before anything is created or committed: a job that
   * stops there leaves nothing behind. */
  if (!kt_positions_read (&f->context, f->partitions, f->expected, b->states, error)
      || !check_anchors (f, error)
      || !kt_positions_settle (&f->context, b->states, error))
    {
      g_array_set_size (f->expected, 0);
      return FALSE;
    }
  /* Used once: a batch that fails before it settles leaves nothing known. */
  g_array_set_size (f->expected, 0);
  if (f->unknown_commit->len > 0)
    kt_batch_log_unknown (&f->log, f->unknown_commit, b->states);
  if (!kt_plan_make ((const KtPartitionState *) (void *) b->states->data, b->states->len,
                     max_per_partition, on_data_loss, b->ranges, b->losses, error))
    {
      g_prefix_error (error, "topic %s, ", f->context.topic);
      return FALSE;
    }
  b->times.planned = g_get_monotonic_time ();
  if (b->ranges->len == 0)
    return TRUE;
  b->batch = f->kind->batch_new (f->state, b->ranges, b->states, max_per_partition, NULL, error);
  return b->batch != NULL;
}

gboolean
kt_feed_plan_ahead (KtFeed *f, gint64 max_per_partition, KtOnDataLoss on_data_loss,
                    guint64 turn, gint64 started)
{
  KtFeedBatch *b = &f->next;
  const KtFeedBatch *prior = &f->flight;
  g_autoptr(GError) error = NULL;

  batch_reset (f, b);
  /* What only the database or a check of the anchors can say: a doubt
   * about the topic, partitions the group moved since the prior was
   * planned (a partition assigned meanwhile starts from its stored
   * offset), a COMMIT whose answer may be lost, a replay's end. */
  if (prior->batch == NULL || f->doubt || kt_source_changed (f->source)
      || kt_source_is_refused (f->source)
      || kt_source_rebalances (f->source) != prior->rebalances
      || f->unknown_commit->len > 0 || f->context.spec->replay_until != NULL)
    return FALSE;
  b->turn = turn;
  b->times = (KtBatchTimes) { .started = started };
  b->rebalances = prior->rebalances;
  /* Where the prior leaves every partition if it commits. */
  g_array_set_size (b->states, 0);
  g_array_append_vals (b->states, prior->states->data, prior->states->len);
  kt_plan_advance (b->states, prior->ranges);
  if (!kt_source_watermarks (f->source, (KtPartitionState *) (void *) b->states->data,
                             b->states->len, 10000, &error))
    return FALSE;
  for (guint i = 0; i < b->states->len; i++)
    {
      const KtPartitionState *was = &g_array_index (prior->states, KtPartitionState, i);
      const KtPartitionState *now = &g_array_index (b->states, KtPartitionState, i);

      /* A log gone back: the anchors are checked first (from the database). */
      if (now->low < was->low || now->high < was->high)
        return FALSE;
    }
  /* A data loss is planned from the database, where it is recorded. */
  if (!kt_plan_make ((const KtPartitionState *) (void *) b->states->data, b->states->len,
                     max_per_partition, on_data_loss, b->ranges, b->losses, &error)
      || b->losses->len > 0 || b->ranges->len == 0
      || (f->kind->ahead != NULL && !f->kind->ahead (prior->batch, b->ranges)))
    {
      batch_reset (f, b);
      return FALSE;
    }
  b->batch = f->kind->batch_new (f->state, b->ranges, b->states, max_per_partition,
                                 prior->batch, &error);
  if (b->batch == NULL)
    {
      batch_reset (f, b);
      return FALSE;
    }
  b->ahead_of = prior->turn;
  b->times.planned = g_get_monotonic_time ();
  /* As a plan from the database uses it: a batch that fails before it
   * settles leaves nothing known. */
  g_array_set_size (f->expected, 0);
  return TRUE;
}

void
kt_feed_drop (KtFeed *f)
{
  batch_reset (f, &f->next);
}

void
kt_feed_launch (KtFeed *f)
{
  KtFeedBatch was = f->flight;

  g_assert (was.batch == NULL);  /* landed: settled and freed */
  f->flight = f->next;
  f->next = was;
  batch_reset (f, &f->next);
}

void
kt_feed_landed (KtFeed *f)
{
  batch_reset (f, &f->flight);
}

void
kt_feed_settled (KtFeed *f)
{
  g_array_set_size (f->expected, 0);
  g_array_append_vals (f->expected, f->flight.states->data, f->flight.states->len);
}

static void
on_record (gint32 partition, gint64 offset, const char *value, gsize len,
           gpointer user_data)
{
  KtFeed *f = user_data;
  KtFeedBatch *b = &f->next;

  b->records++;
  /* Records come in runs of one partition. */
  if (g_array_index (b->ranges, KtRange, b->last_range).partition != partition)
    for (guint i = 0; i < b->ranges->len; i++)
      if (g_array_index (b->ranges, KtRange, i).partition == partition)
        b->last_range = i;
  f->kind->take (b->batch, b->last_range, partition, offset, value, len);
}

gboolean
kt_feed_read (KtFeed *f, const volatile int *stop, int stall_ms, GError **error)
{
  if (f->next.ranges->len == 0)
    return TRUE;
  if (!kt_source_read (f->source, f->next.ranges, on_record, f, stop, stall_ms, error))
    return FALSE;
  f->next.bytes = kt_source_last_bytes (f->source);
  f->next.times.read = g_get_monotonic_time ();
  return TRUE;
}
