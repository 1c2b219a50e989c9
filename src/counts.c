/* counts.c - what the count kinds share (counts.h). */
#include "counts.h"

#include <string.h>
#include "autocleanups.h"
#include "error.h"
#include "schema.h"

KtParser *
kt_counts_parser (const KtConfig *config, GError **error)
{
  KtParseFormat format = { config->pattern, config->time_format,
                           (const char *const *) config->levels, config->bucket };

  return kt_parser_new_format (&format, error);
}

gboolean
kt_counts_prepare (KtDb *db, gboolean idempotent, const char *output, GError **error)
{
  g_autofree char *error_log = NULL;
  g_autofree char *target = NULL;
  GError *local = NULL;
  gboolean is_view;

  if (!kt_db_table_type (db, "error_log", &error_log, error)
      || !kt_db_table_type (db, output, &target, error))
    return FALSE;
  is_view = g_strcmp0 (error_log, "VIEW") == 0;
  /* A replay into a table of its own does not care whose error_log it is. */
  if (error_log != NULL && is_view != idempotent
      && (idempotent || g_str_equal (output, "error_log")))
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "%s: error_log is %s, so this database belongs to %s-mode jobs; "
                   "use another database for a %s job", kt_db_name (db),
                   is_view ? "a view over idempotent counts" : "a table",
                   is_view ? "idempotent" : "transactional",
                   idempotent ? "idempotent" : "transactional");
      return FALSE;
    }
  if (!idempotent && target != NULL && g_strcmp0 (target, "BASE TABLE") != 0)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "%s: %s is a view, not a table",
                   kt_db_name (db), output);
      return FALSE;
    }
  if (!idempotent
      && !kt_schema_check_counts_table (kt_db_connection (db), kt_db_name (db), output, &local))
    return kt_db_failed (db, local, error);
  if (!kt_schema_prepare (db, idempotent ? KT_TABLES_IDEMPOTENT : KT_TABLES_COUNTS,
                          idempotent ? "idempotent-mode" : "transactional-mode", error))
    return FALSE;
  if (!idempotent && target == NULL && !g_str_equal (output, "error_log"))
    {
      g_message ("creating table %s in %s", output, kt_db_name (db));
      if (!kt_schema_create_counts_table (kt_db_connection (db), kt_db_name (db), output,
                                          &local))
        return kt_db_failed (db, local, error);
    }
  return TRUE;
}

void
kt_counts_take (KtParser *parser, KtReducer *reducer, gint32 partition, gint64 offset,
                const char *value, gsize len, KtRangeStats *stats, KtBatchSummary *summary)
{
  KtParseCounts mine = { 0 };
  const char *bad = NULL;
  gsize bad_len = 0;

  if (kt_parser_value (parser, value, len, reducer, &mine, &bad, &bad_len) > 0
      && !summary->have_sample)
    {
      summary->have_sample = TRUE;
      summary->sample_partition = partition;
      summary->sample_offset = offset;
      g_strlcpy (summary->sample_why, "malformed line", sizeof summary->sample_why);
      memcpy (summary->sample, bad, MIN (bad_len, KT_SAMPLE_BYTES));
      summary->sample[MIN (bad_len, KT_SAMPLE_BYTES)] = '\0';
    }
  summary->lines += mine.lines;
  summary->errors += mine.errors;
  summary->malformed += mine.malformed;
  stats->records++;
  stats->lines += mine.lines;
  stats->errors += mine.errors;
  stats->malformed += mine.malformed;
}

void
kt_counts_line (const KtBatchSummary *summary, guint buckets, int bucket, GString *line)
{
  g_autofree char *size = bucket == 60 ? g_strdup ("hour")
                          : bucket == 1 ? g_strdup ("minute")
                          : g_strdup_printf ("%d-minute", bucket);

  g_string_append_printf (line, "%" G_GUINT64_FORMAT " line%s, %" G_GUINT64_FORMAT " ERROR, %"
                          G_GUINT64_FORMAT " malformed, %u %s bucket%s", summary->lines,
                          summary->lines == 1 ? "" : "s", summary->errors,
                          summary->malformed, buckets, size, buckets == 1 ? "" : "s");
}
