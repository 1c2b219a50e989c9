/* anchor.c - the last record a job counted of a partition (anchor.h). */
#include "anchor.h"

#define FNV_OFFSET 0xcbf29ce484222325ULL
#define FNV_PRIME  0x100000001b3ULL

static guint64
fnv_bytes (guint64 h, const guchar *p, gsize n)
{
  for (gsize i = 0; i < n; i++)
    {
      h ^= p[i];
      h *= FNV_PRIME;
    }
  return h;
}

/* A length (or NULL: all ones), 8 bytes little-endian, then the bytes. */
static guint64
fnv_field (guint64 h, const void *bytes, gsize len)
{
  guint64 n = bytes != NULL ? (guint64) len : G_MAXUINT64;
  guchar le[8];

  for (guint i = 0; i < 8; i++)
    le[i] = (guchar) (n >> (8 * i));
  h = fnv_bytes (h, le, sizeof le);
  return bytes != NULL ? fnv_bytes (h, bytes, len) : h;
}

guint64
kt_anchor_hash (const void *key, gsize key_len, const void *value, gsize value_len)
{
  return fnv_field (fnv_field (FNV_OFFSET, key, key_len), value, value_len);
}

KtAnchorVerdict
kt_anchor_place (const KtAnchor *anchor, gint64 stored, gint64 low, gint64 high)
{
  if (!anchor->set)
    return KT_ANCHOR_NONE;
  if (anchor->offset < low)
    return KT_ANCHOR_UNSEEN;
  if (anchor->offset < high)
    return KT_ANCHOR_READ;
  /* The log ends at or before the record counted. With the stored offset
   * past that end too, it is the data-loss rule's (stop, or with
   * --on-data-loss skip read the new log from its start). Otherwise the
   * log shrank under a record the job counted: never in one log (its
   * end, the last stable offset, only grows), so it is another. */
  return stored > high ? KT_ANCHOR_UNSEEN : KT_ANCHOR_PAST_END;
}

KtAnchorVerdict
kt_anchor_compare (const KtAnchor *anchor, const KtAnchor *found)
{
  if (!found->set || found->offset != anchor->offset)
    return KT_ANCHOR_UNSEEN;
  return found->timestamp == anchor->timestamp && found->hash == anchor->hash
         ? KT_ANCHOR_SAME : KT_ANCHOR_DIFFERS;
}

char *
kt_anchor_describe (const KtAnchor *anchor)
{
  g_autoptr(GDateTime) t = NULL;
  g_autofree char *when = NULL;

  if (anchor->timestamp >= 0)
    t = g_date_time_new_from_unix_utc (anchor->timestamp / 1000);
  if (t != NULL)
    {
      g_autofree char *s = g_date_time_format (t, "%Y-%m-%dT%H:%M:%S");
      when = g_strdup_printf ("%s.%03dZ", s, (int) (anchor->timestamp % 1000));
    }
  return g_strdup_printf ("timestamp %s, hash %016" G_GINT64_MODIFIER "x",
                          when != NULL ? when : "none", anchor->hash);
}
