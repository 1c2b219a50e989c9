/* job-spec.c - the words of a job's settings (job-spec.h). */
#include "job-spec.h"

#include <string.h>
#include "error.h"

const char *const kt_mode_names[] = { "transactional", "idempotent", NULL };

gboolean
kt_is_ascii_name (const char *s, const char *extra, gsize max_len)
{
  gsize n = 0;

  if (s == NULL || *s == '\0')
    return FALSE;
  for (const char *p = s; *p != '\0'; p++, n++)
    if (!g_ascii_isalnum (*p) && *p != '_' && (extra == NULL || strchr (extra, *p) == NULL))
      return FALSE;
  return n <= max_len;
}

static gint
compare_partition_offsets (gconstpointer a, gconstpointer b)
{
  const KtPartitionOffset *x = a, *y = b;
  return (x->partition > y->partition) - (x->partition < y->partition);
}

gboolean
kt_partition_offsets_parse (const char *flag, const char *text, GArray *out,
                            GError **error)
{
  g_auto(GStrv) items = g_strsplit (text, ",", -1);

  for (char **item = items; *item != NULL; item++)
    {
      g_auto(GStrv) pair = g_strsplit (*item, ":", 3);
      guint64 partition, offset;
      KtPartitionOffset po;

      if (g_strv_length (pair) != 2
          || !g_ascii_string_to_unsigned (pair[0], 10, 0, G_MAXINT32, &partition, NULL)
          || !g_ascii_string_to_unsigned (pair[1], 10, 0, G_MAXINT64, &offset, NULL))
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                       "%s: expected PARTITION:OFFSET[,...], got '%s'", flag, *item);
          return FALSE;
        }
      po.partition = (gint32) partition;
      po.offset = (gint64) offset;
      g_array_append_val (out, po);
    }
  /* Sorted, a partition given twice is next to itself: no search per
   * item (thousands of partitions are given this way). */
  g_array_sort (out, compare_partition_offsets);
  for (guint i = 1; i < out->len; i++)
    if (g_array_index (out, KtPartitionOffset, i).partition
        == g_array_index (out, KtPartitionOffset, i - 1).partition)
      {
        g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "%s: partition %d given twice", flag,
                     g_array_index (out, KtPartitionOffset, i).partition);
        return FALSE;
      }
  return TRUE;
}

const KtPartitionOffset *
kt_partition_offset_find (const GArray *sorted, gint32 partition)
{
  guint lo = 0, hi = sorted != NULL ? sorted->len : 0;

  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      const KtPartitionOffset *po = &g_array_index (sorted, KtPartitionOffset, mid);

      if (po->partition == partition)
        return po;
      if (po->partition < partition)
        lo = mid + 1;
      else
        hi = mid;
    }
  return NULL;
}

char *
kt_replay_range_text (const GArray *from, const GArray *until)
{
  GString *text = g_string_new (NULL);

  for (guint i = 0; i < from->len; i++)
    g_string_append_printf (text, "%s%d:%" G_GINT64_FORMAT "-%" G_GINT64_FORMAT, i ? "," : "",
                            g_array_index (from, KtPartitionOffset, i).partition,
                            g_array_index (from, KtPartitionOffset, i).offset,
                            g_array_index (until, KtPartitionOffset, i).offset);
  return g_string_free (text, FALSE);
}

gboolean
kt_replay_range_parse (const char *text, GArray *from, GArray *until, GError **error)
{
  g_auto(GStrv) items = g_strsplit (text != NULL ? text : "", ",", -1);

  for (char **item = items; *item != NULL; item++)
    {
      const char *colon = strchr (*item, ':');
      const char *dash = colon != NULL ? strchr (colon, '-') : NULL;
      g_autofree char *p = colon != NULL ? g_strndup (*item, colon - *item) : NULL;
      g_autofree char *f = dash != NULL ? g_strndup (colon + 1, dash - colon - 1) : NULL;
      guint64 partition, a, b;

      if (p == NULL || f == NULL
          || !g_ascii_string_to_unsigned (p, 10, 0, G_MAXINT32, &partition, NULL)
          || !g_ascii_string_to_unsigned (f, 10, 0, G_MAXINT64, &a, NULL)
          || !g_ascii_string_to_unsigned (dash + 1, 10, a, G_MAXINT64, &b, NULL)
          || (from->len > 0
              && g_array_index (from, KtPartitionOffset, from->len - 1).partition
                 >= (gint32) partition))
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "a replay's range '%s': expected "
                       "PARTITION:FROM-UNTIL[,...] by partition, got '%s'", text, *item);
          return FALSE;
        }
      g_array_append_val (from, ((KtPartitionOffset) { (gint32) partition, (gint64) a }));
      g_array_append_val (until, ((KtPartitionOffset) { (gint32) partition, (gint64) b }));
    }
  return TRUE;
}

static gint
compare_gint32 (gconstpointer a, gconstpointer b)
{
  gint32 x = *(const gint32 *) a, y = *(const gint32 *) b;
  return (x > y) - (x < y);
}

gboolean
kt_partition_list_parse (const char *flag, const char *text, GArray *out, GError **error)
{
  g_auto(GStrv) items = g_strsplit (text, ",", -1);
  g_autoptr(GHashTable) seen = g_hash_table_new (g_direct_hash, g_direct_equal);

  for (char **item = items; *item != NULL; item++)
    {
      g_auto(GStrv) ends = g_strsplit (*item, "-", 3);
      guint64 lo, hi;

      if (g_strv_length (ends) < 1 || g_strv_length (ends) > 2
          || !g_ascii_string_to_unsigned (ends[0], 10, 0, G_MAXINT32, &lo, NULL)
          || !g_ascii_string_to_unsigned (ends[1] != NULL ? ends[1] : ends[0], 10, 0,
                                          G_MAXINT32, &hi, NULL)
          || lo > hi || hi - lo > 100000)
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                       "%s: expected partitions like 0-3,7, got '%s'", flag, *item);
          return FALSE;
        }
      for (guint64 p = lo; p <= hi; p++)
        {
          gint32 v = (gint32) p;
          if (!g_hash_table_add (seen, GINT_TO_POINTER (v)))
            {
              g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "%s: partition %d given twice",
                           flag, v);
              return FALSE;
            }
          g_array_append_val (out, v);
        }
    }
  g_array_sort (out, compare_gint32);
  return TRUE;
}

