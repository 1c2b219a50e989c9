/* reduce.c - the reduce stage: minute -> ERROR count, one batch at a time.
 *
 * Keys are minutes since the epoch stored directly in the pointer (no
 * allocation per key); values are counts stored the same way. */
#include "reduce.h"

G_STATIC_ASSERT (sizeof (gpointer) >= sizeof (gint64));

struct _KtReducer
{
  GHashTable *counts;  /* gintptr minute -> guintptr count */
  /* The minute being counted right now, not yet in the table. Log lines
   * arrive roughly in time order, so this saves a lookup per line. */
  gboolean    pending;
  gint64      pending_minute;
  guint64     pending_count;
};

KtReducer *
kt_reducer_new (void)
{
  KtReducer *self = g_new0 (KtReducer, 1);
  self->counts = g_hash_table_new (g_direct_hash, g_direct_equal);
  return self;
}

void
kt_reducer_free (KtReducer *self)
{
  if (self == NULL)
    return;
  g_clear_pointer (&self->counts, g_hash_table_unref);
  g_free (self);
}

static void
flush_pending (KtReducer *self)
{
  gpointer key, old;

  if (!self->pending)
    return;
  key = (gpointer) (gintptr) self->pending_minute;
  old = g_hash_table_lookup (self->counts, key);
  g_hash_table_insert (self->counts, key,
                       (gpointer) ((guintptr) old + (guintptr) self->pending_count));
  self->pending = FALSE;
  self->pending_count = 0;
}

void
kt_reducer_add (KtReducer *self, gint64 minute, guint64 n)
{
  if (self->pending && self->pending_minute == minute)
    {
      self->pending_count += n;
      return;
    }
  flush_pending (self);
  self->pending = TRUE;
  self->pending_minute = minute;
  self->pending_count = n;
}

guint64
kt_reducer_get (KtReducer *self, gint64 minute)
{
  flush_pending (self);
  return (guintptr) g_hash_table_lookup (self->counts, (gpointer) (gintptr) minute);
}

guint
kt_reducer_size (KtReducer *self)
{
  flush_pending (self);
  return g_hash_table_size (self->counts);
}

static gint
compare_minutes (gconstpointer a, gconstpointer b)
{
  const KtMinuteCount *x = a, *y = b;
  return (x->minute > y->minute) - (x->minute < y->minute);
}

GArray *
kt_reducer_sorted (KtReducer *self)
{
  GHashTableIter iter;
  gpointer key, value;
  GArray *out;

  flush_pending (self);
  out = g_array_sized_new (FALSE, FALSE, sizeof (KtMinuteCount),
                           g_hash_table_size (self->counts));
  g_hash_table_iter_init (&iter, self->counts);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      KtMinuteCount mc = { (gint64) (gintptr) key, (guint64) (guintptr) value };
      g_array_append_val (out, mc);
    }
  g_array_sort (out, compare_minutes);
  return out;
}

void
kt_reducer_merge (KtReducer *self, KtReducer *other)
{
  GHashTableIter iter;
  gpointer key, value;

  flush_pending (other);
  g_hash_table_iter_init (&iter, other->counts);
  while (g_hash_table_iter_next (&iter, &key, &value))
    kt_reducer_add (self, (gint64) (gintptr) key, (guint64) (guintptr) value);
}

void
kt_reducer_clear (KtReducer *self)
{
  self->pending = FALSE;
  self->pending_count = 0;
  g_hash_table_remove_all (self->counts);
}
