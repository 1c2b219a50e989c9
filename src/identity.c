/* identity.c - what a job is and what a table holds (identity.h). */
#include "identity.h"

#include <stdlib.h>
#include <string.h>
#include "autocleanups.h"
#include "db.h"
#include "error.h"
#include "kind.h"

/* One setting as stored: a text, "" where it does not apply. */
typedef struct
{
  const char *column;
  const char *flag;   /* how the user sets it, for messages */
  char       *value;
  gboolean    unrecorded_if_empty;  /* '' stored: an older ktally did not record it */
} Setting;

static void
settings_clear (Setting *settings, guint n)
{
  for (guint i = 0; i < n; i++)
    g_clear_pointer (&settings[i].value, g_free);
}

static int
compare_strings (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

/* @list sorted and joined by ",": the order a user gives is not a setting. */
static char *
sorted_list (const char *const *list)
{
  g_autofree char **copy = NULL;
  guint n;

  if (list == NULL)
    return g_strdup ("");
  n = g_strv_length ((char **) list);
  copy = g_memdup2 (list, (n + 1) * sizeof (char *));
  qsort (copy, n, sizeof (char *), compare_strings);
  return g_strjoinv (",", copy);
}

#define JOB_SETTINGS 6
#define TABLE_SETTINGS 7

static void
job_settings (const KtIdentity *id, Setting out[JOB_SETTINGS])
{
  out[0] = (Setting) { "kind", "--kind", g_strdup (id->kind), FALSE };
  out[1] = (Setting) { "mode", "--mode", g_strdup (id->mode), FALSE };
  out[2] = (Setting) { "offsets", "--offsets", g_strdup (id->offsets), FALSE };
  out[3] = (Setting) { "output", "--table", g_strdup (id->output), FALSE };
  out[4] = (Setting) { "topics", "--topic", sorted_list (id->topics), FALSE };
  /* A replay is its range too: under a --job given again with another
   * range it would resume from the first range's offsets. */
  out[5] = (Setting) { "replay_range", "--from/--until",
                       g_strdup (id->replay_range != NULL ? id->replay_range : ""), TRUE };
}

static void
table_settings (const KtIdentity *id, Setting out[TABLE_SETTINGS])
{
  out[0] = (Setting) { "holds", "--kind", g_strdup (id->holds), FALSE };
  out[1] = (Setting) { "bucket", "--bucket", g_strdup (id->bucket != NULL ? id->bucket : ""), FALSE };
  out[2] = (Setting) { "levels", "--levels", sorted_list (id->levels), FALSE };
  out[3] = (Setting) { "pattern", "--pattern", g_strdup (id->pattern != NULL ? id->pattern : ""), FALSE };
  out[4] = (Setting) { "time_format", "--time-format",
                       g_strdup (id->time_format != NULL ? id->time_format : ""), FALSE };
  out[5] = (Setting) { "dimensions", "--by", sorted_list (id->dimensions), FALSE };
  out[6] = (Setting) { "sums", "--sum", sorted_list (id->sums), FALSE };
}

/* "(the default)" for an empty stored value, else the value quoted. */
static char *
shown (const char *value)
{
  return *value == '\0' ? g_strdup ("(the default)") : g_strdup_printf ("'%s'", value);
}

/* Reads the row of @table keyed @key = @name (FOR UPDATE when @lock) and
 * compares it with @settings: *@found says whether there is one. */
static gboolean
compare_row (MYSQL *conn, const char *description, const char *table, const char *key,
             const char *name, const Setting *settings, guint n, gboolean lock,
             gboolean *found, guint *differs, char **stored, char **also, GError **error)
{
  g_autoptr(GString) sql = g_string_new ("SELECT ");
  g_autoptr(MYSQL_RES) res = NULL;
  MYSQL_ROW row;

  for (guint i = 0; i < n; i++)
    g_string_append_printf (sql, "%s, ", settings[i].column);
  g_string_append_printf (sql, "%s FROM %s WHERE %s = ",
                          g_str_equal (table, "ktally_table") ? "first_job" : "job", table, key);
  kt_db_append_quoted (conn, sql, name);
  if (lock)
    g_string_append (sql, " FOR UPDATE");
  res = kt_db_select (conn, description, sql->str, "cannot read what jobs are", error);
  if (res == NULL)
    return FALSE;
  row = mysql_fetch_row (res);
  *found = row != NULL;
  *differs = G_MAXUINT;
  for (guint i = 0; row != NULL && i < n; i++)
    if (g_strcmp0 (row[i] != NULL ? row[i] : "", settings[i].value) != 0
        && !(settings[i].unrecorded_if_empty && (row[i] == NULL || *row[i] == '\0')))
      {
        *differs = i;
        *stored = g_strdup (row[i] != NULL ? row[i] : "");
        *also = g_strdup (row[n] != NULL ? row[n] : "");
        break;
      }
  return TRUE;
}

static gboolean compare (MYSQL *conn, const char *description, const KtIdentity *id,
                         gboolean lock, gboolean *job_found, gboolean *table_found,
                         GError **error);

/* compare() under row locks, the table's row locked first (see claim). */
static gboolean
compare_locked (MYSQL *conn, const char *description, const KtIdentity *id,
                gboolean *job_found, gboolean *table_found, GError **error)
{
  g_autoptr(GString) sql = g_string_new ("SELECT name FROM ktally_table WHERE name = ");
  g_autoptr(MYSQL_RES) res = NULL;

  kt_db_append_quoted (conn, sql, id->output);
  g_string_append (sql, " FOR UPDATE");
  res = kt_db_select (conn, description, sql->str, "cannot read what jobs are", error);
  return res != NULL && compare (conn, description, id, TRUE, job_found, table_found, error);
}

/* Compares @id with its job's row and its table's row; a difference is
 * KT_ERROR_USAGE naming it. */
static gboolean
compare (MYSQL *conn, const char *description, const KtIdentity *id, gboolean lock,
         gboolean *job_found, gboolean *table_found, GError **error)
{
  Setting job[JOB_SETTINGS], table[TABLE_SETTINGS];
  g_autofree char *stored = NULL, *first_job = NULL;
  gboolean ok = TRUE;
  guint differs;

  job_settings (id, job);
  table_settings (id, table);
  if (!compare_row (conn, description, "ktally_job", "job", id->job, job, JOB_SETTINGS, lock,
                    job_found, &differs, &stored, &first_job, error))
    ok = FALSE;
  else if (differs != G_MAXUINT)
    {
      g_autofree char *was = shown (stored), *now = shown (job[differs].value);

      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "job %s was created with %s %s, and this run gives %s: a job's "
                   "settings are fixed; give another --job (and --table) for others",
                   id->job, job[differs].flag, was, now);
      ok = FALSE;
    }
  else if (!compare_row (conn, description, "ktally_table", "name", id->output, table,
                         TABLE_SETTINGS, lock, table_found, &differs, &stored, &first_job,
                         error))
    ok = FALSE;
  else if (differs != G_MAXUINT)
    {
      g_autofree char *was = shown (stored), *now = shown (table[differs].value);

      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "table %s holds rows of %s %s (first written by job %s), and this "
                   "run gives %s: mixed in one table, they would mean nothing; count "
                   "into another --table", id->output, table[differs].flag, was,
                   first_job, now);
      ok = FALSE;
    }
  settings_clear (job, JOB_SETTINGS);
  settings_clear (table, TABLE_SETTINGS);
  return ok;
}

/* Another job (not a replay) that counts one of @id's topics into @id's
 * table: KT_ERROR_USAGE naming it. */
static gboolean
check_sharing (MYSQL *conn, const char *description, const KtIdentity *id, GError **error)
{
  g_autoptr(GString) sql = g_string_new ("SELECT job, topics FROM ktally_job WHERE output = ");
  g_autoptr(MYSQL_RES) res = NULL;
  MYSQL_ROW row;

  kt_db_append_quoted (conn, sql, id->output);
  g_string_append (sql, " AND job <> ");
  kt_db_append_quoted (conn, sql, id->job);
  g_string_append (sql, " AND job NOT LIKE 'replay.%' ORDER BY job");
  res = kt_db_select (conn, description, sql->str, "cannot read what jobs are", error);
  if (res == NULL)
    return FALSE;
  while ((row = mysql_fetch_row (res)) != NULL)
    {
      g_auto(GStrv) theirs = g_strsplit (row[1], ",", -1);

      for (const char *const *t = id->topics; *t != NULL; t++)
        if (g_strv_contains ((const char *const *) theirs, *t))
          {
            g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                         "job %s already counts topic %s into table %s: a second job "
                         "would count everything twice; give another --table, or "
                         "--share-table if the two jobs read different partitions",
                         row[0], *t, id->output);
            return FALSE;
          }
    }
  return TRUE;
}

gboolean
kt_identity_check (MYSQL *conn, const char *description, const KtIdentity *id,
                   GError **error)
{
  gboolean job_found, table_found;

  return compare (conn, description, id, FALSE, &job_found, &table_found, error)
         && (id->share_table || id->replay || job_found
             || check_sharing (conn, description, id, error));
}

/* INSERT IGNORE INTO @table (@first, columns of @settings) VALUES (@key,
 * values): a row another instance made first is left as it is. */
static gboolean
insert_row (MYSQL *conn, const char *description, const char *table, const char *first,
            const char *key, const char *also_column, const char *also,
            const Setting *settings, guint n, GError **error)
{
  g_autoptr(GString) sql = g_string_new (NULL);

  g_string_printf (sql, "INSERT IGNORE INTO %s (%s", table, first);
  if (also_column != NULL)
    g_string_append_printf (sql, ", %s", also_column);
  for (guint i = 0; i < n; i++)
    g_string_append_printf (sql, ", %s", settings[i].column);
  g_string_append (sql, ") VALUES (");
  kt_db_append_quoted (conn, sql, key);
  if (also_column != NULL)
    {
      g_string_append (sql, ", ");
      kt_db_append_quoted (conn, sql, also);
    }
  for (guint i = 0; i < n; i++)
    {
      g_string_append (sql, ", ");
      kt_db_append_quoted (conn, sql, settings[i].value);
    }
  g_string_append (sql, ")");
  return kt_db_exec (conn, description, sql->str, "cannot record what the job is", error);
}

gboolean
kt_identity_claim (MYSQL *conn, const char *description, const KtIdentity *id,
                   GError **error)
{
  Setting job[JOB_SETTINGS], table[TABLE_SETTINGS];
  gboolean job_found, table_found, ok;

  job_settings (id, job);
  table_settings (id, table);
  /* The table's row first: compare() then reads it FOR UPDATE before the
   * job's, so two jobs claiming one table at once take turns here. */
  ok = insert_row (conn, description, "ktally_table", "name", id->output, "first_job", id->job,
                   table, TABLE_SETTINGS, error)
       && insert_row (conn, description, "ktally_job", "job", id->job, NULL, NULL, job,
                      JOB_SETTINGS, error);
  settings_clear (job, JOB_SETTINGS);
  settings_clear (table, TABLE_SETTINGS);
  return ok && compare_locked (conn, description, id, &job_found, &table_found, error)
         && (id->share_table || id->replay
             || check_sharing (conn, description, id, error));
}

void
kt_identity_describe (KtIdentity *id, const KtConfig *config, const KtJobKind *kind)
{
  static const char *const stores[] = { "mysql", "kafka" };
  static const char *const error_only[] = { "ERROR", NULL };

  *id = (KtIdentity) {
    .job = config->job,
    .kind = kind->kind,
    .mode = kind->mode,
    .offsets = stores[config->offsets],
    .output = kind->table != NULL ? kind->table : config->table,
    .topics = (const char *const *) config->topics,
    .replay = config->replay_from != NULL,
    .replay_range = config->replay_range,
    .share_table = config->share_table,
    .holds = kind->holds,
    .bucket = !kind->parses ? ""
              : config->bucket == 60 ? "1h" : config->bucket == 5 ? "5m" : "1m",
    .levels = !kind->parses ? NULL
              : config->levels != NULL ? (const char *const *) config->levels : error_only,
    .pattern = kind->parses ? config->pattern : NULL,
    /* The default format spelled out is the default. */
    .time_format = !kind->parses || g_strcmp0 (config->time_format, "%Y-%m-%d %H:%M:%S") == 0
                   ? NULL : config->time_format,
    .dimensions = kind->parses ? (const char *const *) config->dimensions : NULL,
    .sums = kind->parses ? (const char *const *) config->sums : NULL,
  };
}

void
kt_job_record_free (KtJobRecord *record)
{
  if (record == NULL)
    return;
  g_free (record->kind);
  g_free (record->mode);
  g_free (record->offsets);
  g_free (record->output);
  g_strfreev (record->topics);
  g_free (record);
}

/* Whether @table exists in the connection's database. */
static gboolean
has_table (MYSQL *conn, const char *description, const char *table, gboolean *exists,
           GError **error)
{
  g_autoptr(GString) sql = g_string_new ("SELECT 1 FROM information_schema.tables WHERE "
                                         "table_schema = DATABASE() AND table_name = ");
  g_autoptr(MYSQL_RES) res = NULL;

  kt_db_append_quoted (conn, sql, table);
  res = kt_db_select (conn, description, sql->str, "cannot look for the tables", error);
  if (res == NULL)
    return FALSE;
  *exists = mysql_fetch_row (res) != NULL;
  return TRUE;
}

gboolean
kt_identity_read_jobs (MYSQL *conn, const char *description, GHashTable *records,
                       GError **error)
{
  g_autoptr(MYSQL_RES) res = NULL;
  gboolean exists;
  MYSQL_ROW row;

  if (!has_table (conn, description, "ktally_job", &exists, error))
    return FALSE;
  if (!exists)
    return TRUE;
  res = kt_db_select (conn, description, "SELECT job, kind, mode, offsets, output, topics "
                      "FROM ktally_job", "cannot read what jobs are", error);
  if (res == NULL)
    return FALSE;
  while ((row = mysql_fetch_row (res)) != NULL)
    {
      KtJobRecord *r = g_new0 (KtJobRecord, 1);

      r->kind = g_strdup (row[1]);
      r->mode = g_strdup (row[2]);
      r->offsets = g_strdup (row[3]);
      r->output = g_strdup (row[4]);
      r->topics = *row[5] != '\0' ? g_strsplit (row[5], ",", -1) : g_new0 (char *, 1);
      g_hash_table_replace (records, g_strdup (row[0]), r);
    }
  return TRUE;
}

gboolean
kt_identity_other_writer (MYSQL *conn, const char *description, const char *job,
                          const char *output, gboolean lock, char **other, GError **error)
{
  g_autoptr(GString) sql = g_string_new ("SELECT name FROM ktally_table WHERE name = ");
  g_autoptr(MYSQL_RES) locked = NULL;
  g_autoptr(MYSQL_RES) res = NULL;
  gboolean exists = TRUE;
  MYSQL_ROW row;

  *other = NULL;
  if (!lock && !has_table (conn, description, "ktally_job", &exists, error))
    return FALSE;
  if (!exists)
    return TRUE;
  kt_db_append_quoted (conn, sql, output);
  g_string_append (sql, " FOR UPDATE");
  locked = lock ? kt_db_select (conn, description, sql->str, "cannot read what jobs are", error)
                : NULL;
  if (lock && locked == NULL)
    return FALSE;
  g_string_assign (sql, "SELECT job FROM ktally_job WHERE output = ");
  kt_db_append_quoted (conn, sql, output);
  g_string_append (sql, " AND job <> ");
  kt_db_append_quoted (conn, sql, job);
  g_string_append (sql, " ORDER BY job LIMIT 1");
  res = kt_db_select (conn, description, sql->str, "cannot read what jobs are", error);
  if (res == NULL)
    return FALSE;
  row = mysql_fetch_row (res);
  *other = row != NULL ? g_strdup (row[0]) : NULL;
  return TRUE;
}

gboolean
kt_identity_forget (MYSQL *conn, const char *description, const char *job, gboolean execute,
                    guint64 *rows, GError **error)
{
  g_autoptr(GString) sql = g_string_new ("SELECT COUNT(*) FROM ktally_job WHERE job = ");
  g_autoptr(MYSQL_RES) res = NULL;
  gboolean exists;
  MYSQL_ROW row;

  *rows = 0;
  if (!has_table (conn, description, "ktally_job", &exists, error))
    return FALSE;
  if (!exists)
    return TRUE;
  kt_db_append_quoted (conn, sql, job);
  res = kt_db_select (conn, description, sql->str, "cannot read what jobs are", error);
  if (res == NULL)
    return FALSE;
  row = mysql_fetch_row (res);
  *rows = row != NULL ? g_ascii_strtoull (row[0], NULL, 10) : 0;
  if (!execute)
    return TRUE;
  g_string_assign (sql, "DELETE FROM ktally_job WHERE job = ");
  kt_db_append_quoted (conn, sql, job);
  return kt_db_exec (conn, description, sql->str, "cannot delete what the job is", error);
}
