/* jobs.c - the jobs a database knows (jobs.h). */
#include "jobs.h"

#include <string.h>
#include "db-rows.h"
#include "error.h"
#include "kind.h"

/* How many known names an unknown-job error lists before "...". */
#define NAMES_SHOWN 20

void
kt_known_job_free (KtKnownJob *info)
{
  if (info == NULL)
    return;
  g_free (info->name);
  kt_job_row_free (info->record);
  g_strfreev (info->topics);
  g_free (info->last_commit);
  g_free (info);
}

static gint
compare_infos (gconstpointer a, gconstpointer b)
{
  return strcmp ((*(KtKnownJob *const *) a)->name, (*(KtKnownJob *const *) b)->name);
}

static gint
compare_strings (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

/* The set @topics (and @more, NULL-terminated or NULL) as a sorted strv. */
static char **
sorted_topics (GHashTable *topics, char **more)
{
  g_autoptr(GHashTable) all = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GPtrArray) out = g_ptr_array_new ();
  GHashTableIter iter;
  gpointer key;

  if (topics != NULL)
    {
      g_hash_table_iter_init (&iter, topics);
      while (g_hash_table_iter_next (&iter, &key, NULL))
        g_hash_table_add (all, key);
    }
  for (char **t = more; t != NULL && *t != NULL; t++)
    g_hash_table_add (all, *t);
  g_hash_table_iter_init (&iter, all);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    g_ptr_array_add (out, g_strdup (key));
  g_ptr_array_sort (out, compare_strings);
  g_ptr_array_add (out, NULL);
  return (char **) g_ptr_array_free (g_steal_pointer (&out), FALSE);
}

gboolean
kt_jobs_load (KtDb *db, GPtrArray *jobs, GError **error)
{
  g_autoptr(GHashTable) records = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                         (GDestroyNotify) kt_job_row_free);
  g_autoptr(GHashTable) topics = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                        (GDestroyNotify) g_hash_table_unref);
  g_autoptr(GHashTable) commits = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                         (GDestroyNotify) kt_job_commits_free);
  g_autoptr(GHashTable) names = g_hash_table_new (g_str_hash, g_str_equal);
  GHashTableIter iter;
  gpointer key;

  if (!kt_db_connect (db, error))
    return FALSE;
  if (!kt_identity_read_jobs (db, records, error))
    return FALSE;
  if (!kt_offsets_job_topics (db, topics, error) || !kt_offsets_job_commits (db, commits, error))
    return FALSE;

  g_hash_table_iter_init (&iter, records);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    g_hash_table_add (names, key);
  g_hash_table_iter_init (&iter, topics);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    g_hash_table_add (names, key);
  g_hash_table_iter_init (&iter, names);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    {
      KtKnownJob *info = g_new0 (KtKnownJob, 1);
      KtJobCommits *c = g_hash_table_lookup (commits, key);
      g_autofree char *stolen = NULL;

      info->name = g_strdup (key);
      /* The record moves to info, its key is ours to free: @key may be
       * that very string, so only info->name from here on. */
      g_hash_table_steal_extended (records, info->name, (gpointer *) &stolen,
                                   (gpointer *) &info->record);
      info->topics = sorted_topics (g_hash_table_lookup (topics, info->name),
                                    info->record != NULL ? info->record->topics : NULL);
      info->batches = c != NULL ? c->batches : 0;
      info->last_commit = c != NULL ? g_strdup (c->last_commit) : NULL;
      g_ptr_array_add (jobs, info);
    }
  g_ptr_array_sort (jobs, compare_infos);
  return TRUE;
}

const KtKnownJob *
kt_jobs_find (const GPtrArray *jobs, const char *name)
{
  for (guint i = 0; i < jobs->len; i++)
    if (g_str_equal (((KtKnownJob *) jobs->pdata[i])->name, name))
      return jobs->pdata[i];
  return NULL;
}

const KtKnownJob *
kt_jobs_require (KtDb *db, const GPtrArray *jobs, const char *name, GError **error)
{
  const KtKnownJob *info = kt_jobs_find (jobs, name);
  g_autoptr(GString) known = g_string_new (NULL);

  if (info != NULL)
    return info;
  for (guint i = 0; i < jobs->len && i < NAMES_SHOWN; i++)
    g_string_append_printf (known, "%s%s", i ? ", " : "", ((KtKnownJob *) jobs->pdata[i])->name);
  if (jobs->len > NAMES_SHOWN)
    g_string_append_printf (known, " and %u more", jobs->len - NAMES_SHOWN);
  if (jobs->len == 0)
    g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                 "no job '%s' in %s: no job has run there yet", name, kt_db_name (db));
  else
    g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                 "no job '%s' in %s; its jobs: %s (`ktally jobs` lists them)", name,
                 kt_db_name (db), known->str);
  return NULL;
}

gboolean
kt_jobs_check (KtDb *db, const char *name, const char *const *topics, GError **error)
{
  g_autoptr(GPtrArray) jobs = g_ptr_array_new_with_free_func ((GDestroyNotify) kt_known_job_free);
  const KtKnownJob *info;

  if (!kt_jobs_load (db, jobs, error))
    return FALSE;
  info = kt_jobs_require (db, jobs, name, error);
  if (info == NULL)
    return FALSE;
  for (const char *const *t = topics; t != NULL && *t != NULL; t++)
    if (info->topics[0] != NULL && !g_strv_contains ((const char *const *) info->topics, *t))
      {
        g_autofree char *reads = g_strjoinv (", ", info->topics);

        g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                     "job %s does not read topic %s (it reads %s)", name, *t, reads);
        return FALSE;
      }
  return TRUE;
}

void
kt_forget_report_clear (KtForgetReport *report)
{
  kt_forget_count_clear (&report->offsets);
  g_clear_pointer (&report->rows_table, g_free);
}

/* Counts @table's rows of @job into *@n, deleting them when @execute. */
static gboolean
job_rows (KtDb *db, const char *table, const char *job, gboolean execute, guint64 *n,
          GError **error)
{
  g_autoptr(GString) sql = g_string_new (NULL);
  g_autoptr(GString) where = g_string_new (" WHERE job = ");
  g_autoptr(KtDbRows) res = NULL;
  g_autofree char *type = NULL;
  const char *const *row;

  *n = 0;
  if (!kt_db_table_type (db, table, &type, error))
    return FALSE;
  if (type == NULL)
    return TRUE;
  kt_db_quote (db, where, job);
  g_string_printf (sql, "SELECT COUNT(*) FROM %s%s", table, where->str);
  res = kt_db_rows_select (db, sql->str, "cannot count the job's rows", error);
  if (res == NULL)
    return FALSE;
  row = kt_db_rows_next (res);
  *n = row != NULL ? g_ascii_strtoull (row[0], NULL, 10) : 0;
  if (!execute)
    return TRUE;
  g_string_printf (sql, "DELETE FROM %s%s", table, where->str);
  return kt_db_run (db, sql->str, "cannot delete the job's rows", error);
}

gboolean
kt_jobs_forget (KtDb *db, const KtKnownJob *job, gboolean execute, KtForgetReport *report,
                GError **error)
{
  const KtKind *kind = job->record != NULL
    ? kt_kind_lookup (job->record->kind, job->record->mode, NULL) : NULL;
  KtCommitResult result;

  *report = (KtForgetReport) { .identity = 0 };
  report->records_table = kind != NULL ? kind->records : NULL;
  report->rows_table = kind != NULL ? kt_kind_rows_table (kind, job->record->output) : NULL;
  /* One transaction: a reader sees the job whole or gone, and a dry run
   * counts what an execution at that moment would remove. */
  if (!kt_db_begin (db, error))
    return FALSE;
  if (!kt_offsets_forget (db, job->name, execute, &report->offsets, error)
      || (report->records_table != NULL
          && !job_rows (db, report->records_table, job->name, execute, &report->records, error))
      || (report->rows_table != NULL
          && !job_rows (db, report->rows_table, job->name, FALSE, &report->rows, error)))
    goto fail;
  if (!kt_identity_forget (db, job->name, execute, &report->identity, error))
    {
      kt_db_abort (db);
      return FALSE;
    }
  if (!execute)
    {
      kt_db_abort (db);
      return TRUE;
    }
  return kt_db_finish (db, &result, error);

fail:
  kt_db_abort (db);
  return FALSE;
}
