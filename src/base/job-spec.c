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
      for (guint i = 0; i < out->len; i++)
        if (g_array_index (out, KtPartitionOffset, i).partition == po.partition)
          {
            g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                         "%s: partition %d given twice", flag, po.partition);
            return FALSE;
          }
      g_array_append_val (out, po);
    }
  g_array_sort (out, compare_partition_offsets);
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

