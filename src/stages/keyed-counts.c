/* keyed-counts.c - a batch's rows per bucket and key (keyed-counts.h).
 *
 * Keys are interned once per batch by the limit (KtKeyLimit), which is
 * where the bound is decided; each KtKeyedCounts maps an interned key to its
 * count and sums by pointer. So the bound costs nothing more than the one
 * lookup a key needs anyway, and a key's bytes are stored once however
 * many partitions it appears in. */
#include "keyed-counts.h"

#include <string.h>

/* One interned key of one bucket. Stored ones keep their bytes right
 * after the struct; a lookup's probe points at the caller's. */
typedef struct
{
  gint64        bucket;
  guint         hash;
  guint         len;
  const guint8 *bytes;
} Key;

struct _KtKeyLimit
{
  guint       max_keys;
  GHashTable *keys;     /* Key * (owned) -> itself */
  GHashTable *per_bucket;  /* gint64 bucket in a pointer -> guint keys admitted */
};

/* A row: its key (NULL for the (other) row), its count and sums. */
typedef struct
{
  const Key *key;
  gint64     bucket;
  guint64    count;
  KtSum      sums[];
} Acc;

struct _KtKeyedCounts
{
  gint32      partition;
  guint       n_sums;
  KtKeyLimit *limit;
  GHashTable *rows;    /* const Key * -> Acc * (owned) */
  GHashTable *other;   /* gint64 bucket in a pointer -> Acc * (owned) */
  guint64     folded;
  /* The last line's bucket, key and row: a run of one key skips both
   * lookups. */
  Acc        *last;
  gint64      last_bucket;
  GByteArray *last_key;
};

G_STATIC_ASSERT (sizeof (gpointer) >= sizeof (gint64));

__extension__ typedef unsigned __int128 KtMagnitude;

/* FNV-1a over the bucket and the key: keys are short, and the hash tables
 * spread whatever comes out. */
static guint
hash_key (gint64 bucket, const guint8 *bytes, gsize len)
{
  guint32 h = 2166136261u;

  for (guint i = 0; i < sizeof bucket; i++)
    h = (h ^ (guint8) ((guint64) bucket >> (8 * i))) * 16777619u;
  for (gsize i = 0; i < len; i++)
    h = (h ^ bytes[i]) * 16777619u;
  return h;
}

static guint
key_hash (gconstpointer p)
{
  return ((const Key *) p)->hash;
}

static gboolean
key_equal (gconstpointer a, gconstpointer b)
{
  const Key *x = a, *y = b;

  return x->hash == y->hash && x->bucket == y->bucket && x->len == y->len
         && memcmp (x->bytes, y->bytes, x->len) == 0;
}

KtKeyLimit *
kt_key_limit_new (guint max_keys)
{
  KtKeyLimit *self = g_new0 (KtKeyLimit, 1);

  self->max_keys = max_keys;
  self->keys = g_hash_table_new_full (key_hash, key_equal, g_free, NULL);
  self->per_bucket = g_hash_table_new (g_direct_hash, g_direct_equal);
  return self;
}

void
kt_key_limit_free (KtKeyLimit *self)
{
  if (self == NULL)
    return;
  g_clear_pointer (&self->keys, g_hash_table_unref);
  g_clear_pointer (&self->per_bucket, g_hash_table_unref);
  g_free (self);
}

void
kt_key_limit_clear (KtKeyLimit *self)
{
  g_hash_table_remove_all (self->keys);
  g_hash_table_remove_all (self->per_bucket);
}

/* The interned key of (@bucket, @bytes), or NULL when the bucket has its
 * max_keys keys already and this is not one of them. */
static const Key *
admit (KtKeyLimit *self, gint64 bucket, const guint8 *bytes, gsize len)
{
  Key probe = { bucket, hash_key (bucket, bytes, len), (guint) len, bytes };
  gpointer slot = (gpointer) (gintptr) bucket;
  Key *key = g_hash_table_lookup (self->keys, &probe);
  guint n;

  if (key != NULL)
    return key;
  n = GPOINTER_TO_UINT (g_hash_table_lookup (self->per_bucket, slot));
  if (n >= self->max_keys)
    return NULL;
  g_hash_table_insert (self->per_bucket, slot, GUINT_TO_POINTER (n + 1));
  key = g_malloc (sizeof (Key) + len);
  *key = probe;
  memcpy (key + 1, bytes, len);
  key->bytes = (const guint8 *) (key + 1);
  g_hash_table_add (self->keys, key);
  return key;
}

KtKeyedCounts *
kt_keyed_counts_new (gint32 partition, guint n_sums, KtKeyLimit *limit)
{
  KtKeyedCounts *self = g_new0 (KtKeyedCounts, 1);

  g_return_val_if_fail (limit != NULL, NULL);
  self->partition = partition;
  self->n_sums = n_sums;
  self->limit = limit;
  self->rows = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL, g_free);
  self->other = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL, g_free);
  self->last_key = g_byte_array_new ();
  return self;
}

void
kt_keyed_counts_free (KtKeyedCounts *self)
{
  if (self == NULL)
    return;
  g_clear_pointer (&self->rows, g_hash_table_unref);
  g_clear_pointer (&self->other, g_hash_table_unref);
  g_clear_pointer (&self->last_key, g_byte_array_unref);
  g_free (self);
}

static Acc *
acc_new (KtKeyedCounts *self, const Key *key, gint64 bucket)
{
  Acc *acc = g_malloc0 (sizeof (Acc) + self->n_sums * sizeof (KtSum));

  acc->key = key;
  acc->bucket = bucket;
  return acc;
}

void
kt_keyed_counts_add (KtKeyedCounts *self, gint64 bucket, const guint8 *key, gsize key_len,
               const KtAmount *sums)
{
  Acc *acc = self->last;

  /* --sum without --by: every line has the empty key, which the parser
   * may hand over as (NULL, 0), and the last key's array has no data
   * then either: memcmp and memcpy want pointers even for no bytes. */
  if (key == NULL)
    key = (const guint8 *) "";
  if (acc == NULL || self->last_bucket != bucket || self->last_key->len != key_len
      || (key_len > 0 && memcmp (self->last_key->data, key, key_len) != 0))
    {
      const Key *interned = admit (self->limit, bucket, key, key_len);

      if (interned != NULL)
        {
          acc = g_hash_table_lookup (self->rows, interned);
          if (acc == NULL)
            {
              acc = acc_new (self, interned, bucket);
              g_hash_table_insert (self->rows, (gpointer) interned, acc);
            }
        }
      else
        {
          gpointer slot = (gpointer) (gintptr) bucket;

          acc = g_hash_table_lookup (self->other, slot);
          if (acc == NULL)
            {
              acc = acc_new (self, NULL, bucket);
              g_hash_table_insert (self->other, slot, acc);
            }
        }
      self->last = acc;
      self->last_bucket = bucket;
      g_byte_array_set_size (self->last_key, 0);
      g_byte_array_append (self->last_key, key, (guint) key_len);
    }
  acc->count++;
  if (acc->key == NULL)
    self->folded++;
  for (guint i = 0; i < self->n_sums; i++)
    acc->sums[i] += sums[i];
}

guint
kt_keyed_counts_size (KtKeyedCounts *self)
{
  return g_hash_table_size (self->rows) + g_hash_table_size (self->other);
}

guint64
kt_keyed_counts_folded (KtKeyedCounts *self)
{
  return self->folded;
}

gint
kt_keyed_row_compare (gconstpointer a, gconstpointer b)
{
  const KtKeyedRow *x = a, *y = b;
  int c;

  if (x->bucket != y->bucket)
    return x->bucket < y->bucket ? -1 : 1;
  if (x->other != y->other)
    return x->other ? 1 : -1;
  c = memcmp (x->key, y->key, MIN (x->key_len, y->key_len));
  if (c != 0)
    return c;
  return (x->key_len > y->key_len) - (x->key_len < y->key_len);
}

static void
append_rows (KtKeyedCounts *self, GHashTable *table, GArray *out)
{
  GHashTableIter iter;
  gpointer value;

  g_hash_table_iter_init (&iter, table);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      const Acc *acc = value;
      KtKeyedRow row = { self->partition, acc->bucket, acc->key == NULL,
                         acc->key != NULL ? acc->key->bytes : (const guint8 *) "",
                         acc->key != NULL ? acc->key->len : 0, acc->count, acc->sums };

      g_array_append_val (out, row);
    }
}

GArray *
kt_keyed_counts_sorted (KtKeyedCounts *self)
{
  GArray *out = g_array_sized_new (FALSE, FALSE, sizeof (KtKeyedRow), kt_keyed_counts_size (self));

  append_rows (self, self->rows, out);
  append_rows (self, self->other, out);
  g_array_sort (out, kt_keyed_row_compare);
  return out;
}

void
kt_keyed_counts_clear (KtKeyedCounts *self)
{
  g_hash_table_remove_all (self->rows);
  g_hash_table_remove_all (self->other);
  self->folded = 0;
  self->last = NULL;
  g_byte_array_set_size (self->last_key, 0);
}

void
kt_sum_format (KtSum sum, char buf[static 48])
{
  /* Through unsigned, so that the most negative value prints too. */
  KtMagnitude mag = sum < 0 ? (KtMagnitude) 0 - (KtMagnitude) sum : (KtMagnitude) sum;
  char digits[48];
  int n = 0;
  char *p = buf;

  do
    {
      digits[n++] = (char) ('0' + (int) (mag % 10));
      mag /= 10;
    }
  while (mag > 0 || n < 5);  /* at least 0.0000 */
  if (sum < 0)
    *p++ = '-';
  for (int i = n - 1; i >= 0; i--)
    {
      *p++ = digits[i];
      if (i == 4)
        *p++ = '.';
    }
  *p = '\0';
}
