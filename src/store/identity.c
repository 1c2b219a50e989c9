/* identity.c - what a job is and what a table holds (identity.h). */
#include "identity.h"

#include <stdlib.h>
#include <string.h>
#include "db-mysql.h"
#include "mysql-autocleanups.h"
#include "db.h"
#include "error.h"

typedef KtIdentitySetting Setting;

void
kt_identity_init (KtIdentity *id, const char *job, const char *output,
                  const char *const *topics, gboolean replay, gboolean share_table)
{
  *id = (KtIdentity) {
    .job = g_strdup (job),
    .output = g_strdup (output),
    .topics = g_strdupv ((char **) topics),
    .replay = replay,
    .share_table = share_table,
    .job_settings = g_array_new (FALSE, TRUE, sizeof (Setting)),
    .table_settings = g_array_new (FALSE, TRUE, sizeof (Setting)),
  };
}

void
kt_identity_add (KtIdentity *id, gboolean table, const char *column, const char *flag,
                 const char *value, const KtOption *row, gboolean unrecorded_if_empty)
{
  Setting s = { column, flag, g_strdup (value != NULL ? value : ""), unrecorded_if_empty,
                row };

  g_array_append_val (table ? id->table_settings : id->job_settings, s);
}

static void
settings_free (GArray *settings)
{
  for (guint i = 0; settings != NULL && i < settings->len; i++)
    g_free (g_array_index (settings, Setting, i).value);
  if (settings != NULL)
    g_array_unref (settings);
}

void
kt_identity_clear (KtIdentity *id)
{
  g_free (id->job);
  g_free (id->output);
  g_strfreev (id->topics);
  settings_free (id->job_settings);
  settings_free (id->table_settings);
  *id = (KtIdentity) { 0 };
}

const char *
kt_identity_value (const KtIdentity *id, const char *column)
{
  for (int pass = 0; pass < 2; pass++)
    {
      GArray *a = pass == 0 ? id->job_settings : id->table_settings;

      for (guint i = 0; i < a->len; i++)
        if (g_str_equal (g_array_index (a, Setting, i).column, column))
          return g_array_index (a, Setting, i).value;
    }
  return NULL;
}

/* Whether the stored @value means what @s says. */
static gboolean
same (const Setting *s, const char *stored)
{
  g_autofree char *normal = NULL;

  if (stored == NULL)
    stored = "";
  if (s->unrecorded_if_empty && *stored == '\0')
    return TRUE;
  normal = s->row != NULL ? kt_option_normal_text (s->row, stored) : g_strdup (stored);
  return g_str_equal (normal, s->value);
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
    if (!same (&settings[i], row[i]))
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
  const Setting *job = (const Setting *) (void *) id->job_settings->data;
  const Setting *table = (const Setting *) (void *) id->table_settings->data;
  g_autofree char *stored = NULL, *first_job = NULL;
  gboolean ok = TRUE;
  guint differs;

  if (!compare_row (conn, description, "ktally_job", "job", id->job, job,
                    id->job_settings->len, lock,
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
                         id->table_settings->len, lock, table_found, &differs, &stored,
                         &first_job, error))
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

      for (char **t = id->topics; *t != NULL; t++)
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

static gboolean
identity_check (MYSQL *conn, const char *description, const KtIdentity *id,
                GError **error)
{
  gboolean job_found, table_found;

  return compare (conn, description, id, FALSE, &job_found, &table_found, error)
         && (id->share_table || id->replay || job_found
             || check_sharing (conn, description, id, error));
}

gboolean
kt_identity_check (KtDb *db, const KtIdentity *id, GError **error)
{
  GError *local = NULL;

  return kt_db_connect (db, error)
         && (identity_check (kt_db_connection (db), kt_db_name (db), id, &local)
             || kt_db_failed (db, local, error));
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

static gboolean
identity_claim (MYSQL *conn, const char *description, const KtIdentity *id,
                GError **error)
{
  const Setting *job = (const Setting *) (void *) id->job_settings->data;
  const Setting *table = (const Setting *) (void *) id->table_settings->data;
  gboolean job_found, table_found, ok;

  /* The table's row first: compare() then reads it FOR UPDATE before the
   * job's, so two jobs claiming one table at once take turns here. */
  ok = insert_row (conn, description, "ktally_table", "name", id->output, "first_job", id->job,
                   table, id->table_settings->len, error)
       && insert_row (conn, description, "ktally_job", "job", id->job, NULL, NULL, job,
                      id->job_settings->len, error);
  return ok && compare_locked (conn, description, id, &job_found, &table_found, error)
         && (id->share_table || id->replay
             || check_sharing (conn, description, id, error));
}

gboolean
kt_identity_claim (KtDb *db, const KtIdentity *id, GError **error)
{
  GError *local = NULL;

  return kt_db_connect (db, error)
         && (identity_claim (kt_db_connection (db), kt_db_name (db), id, &local)
             || kt_db_failed (db, local, error));
}

void
kt_job_row_free (KtJobRow *record)
{
  if (record == NULL)
    return;
  g_free (record->kind);
  g_free (record->mode);
  g_free (record->offsets);
  g_free (record->output);
  g_strfreev (record->topics);
  g_free (record->replay_range);
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

/* Whether ktally_job has @column: a schema older than the version that
 * added it is read as it is (status, audit and dry runs never migrate). */
static gboolean
job_has_column (MYSQL *conn, const char *description, const char *column, gboolean *has,
                GError **error)
{
  g_autoptr(GString) sql = g_string_new ("SELECT 1 FROM information_schema.columns WHERE "
                                         "table_schema = DATABASE() AND table_name = "
                                         "'ktally_job' AND column_name = ");
  g_autoptr(MYSQL_RES) res = NULL;

  kt_db_append_quoted (conn, sql, column);
  res = kt_db_select (conn, description, sql->str, "cannot look for the columns", error);
  if (res == NULL)
    return FALSE;
  *has = mysql_fetch_row (res) != NULL;
  return TRUE;
}

static gboolean
read_jobs (MYSQL *conn, const char *description, GHashTable *records,
           GError **error)
{
  g_autoptr(MYSQL_RES) res = NULL;
  gboolean exists, ranged;
  MYSQL_ROW row;

  if (!has_table (conn, description, "ktally_job", &exists, error))
    return FALSE;
  if (!exists)
    return TRUE;
  if (!job_has_column (conn, description, "replay_range", &ranged, error))
    return FALSE;
  res = kt_db_select (conn, description, ranged
                      ? "SELECT job, kind, mode, offsets, output, topics, replay_range "
                        "FROM ktally_job"
                      : "SELECT job, kind, mode, offsets, output, topics, '' FROM ktally_job",
                      "cannot read what jobs are", error);
  if (res == NULL)
    return FALSE;
  while ((row = mysql_fetch_row (res)) != NULL)
    {
      KtJobRow *r = g_new0 (KtJobRow, 1);

      r->kind = g_strdup (row[1]);
      r->mode = g_strdup (row[2]);
      r->offsets = g_strdup (row[3]);
      r->output = g_strdup (row[4]);
      r->topics = *row[5] != '\0' ? g_strsplit (row[5], ",", -1) : g_new0 (char *, 1);
      r->replay_range = g_strdup (row[6]);
      g_hash_table_replace (records, g_strdup (row[0]), r);
    }
  return TRUE;
}

static gboolean
read_replay (MYSQL *conn, const char *description, const char *job, char **range, char **times,
             GError **error)
{
  g_autoptr(GString) sql = g_string_new ("SELECT replay_range, replay_times FROM ktally_job "
                                         "WHERE job = ");
  g_autoptr(MYSQL_RES) res = NULL;
  gboolean exists;
  MYSQL_ROW row;

  *range = *times = NULL;
  if (!has_table (conn, description, "ktally_job", &exists, error)
      || (exists && !job_has_column (conn, description, "replay_times", &exists, error)))
    return FALSE;
  if (!exists)
    return TRUE;
  kt_db_append_quoted (conn, sql, job);
  res = kt_db_select (conn, description, sql->str, "cannot read what jobs are", error);
  if (res == NULL)
    return FALSE;
  row = mysql_fetch_row (res);
  if (row != NULL)
    {
      *range = g_strdup (row[0] != NULL ? row[0] : "");
      *times = g_strdup (row[1] != NULL ? row[1] : "");
    }
  return TRUE;
}

gboolean
kt_identity_read_replay (KtDb *db, const char *job, char **range, char **times, GError **error)
{
  GError *local = NULL;

  return kt_db_connect (db, error)
         && (read_replay (kt_db_connection (db), kt_db_name (db), job, range, times, &local)
             || kt_db_failed (db, local, error));
}

gboolean
kt_identity_read_jobs (KtDb *db, GHashTable *records, GError **error)
{
  GError *local = NULL;

  return kt_db_connect (db, error)
         && (read_jobs (kt_db_connection (db), kt_db_name (db), records, &local)
             || kt_db_failed (db, local, error));
}

static gboolean
read_table (MYSQL *conn, const char *description, const char *name,
            const char *const *columns, GHashTable *values, gboolean *found,
            GError **error)
{
  g_autoptr(GString) sql = g_string_new ("SELECT 1");
  g_autoptr(MYSQL_RES) res = NULL;
  gboolean exists;
  MYSQL_ROW row;

  *found = FALSE;
  if (!has_table (conn, description, "ktally_table", &exists, error))
    return FALSE;
  if (!exists)
    return TRUE;
  /* The columns are the option rows' identities: identifiers of ours. */
  for (guint i = 0; columns[i] != NULL; i++)
    g_string_append_printf (sql, ", `%s`", columns[i]);
  g_string_append (sql, " FROM ktally_table WHERE name = ");
  kt_db_append_quoted (conn, sql, name);
  res = kt_db_select (conn, description, sql->str, "cannot read what the table holds", error);
  if (res == NULL)
    return FALSE;
  row = mysql_fetch_row (res);
  *found = row != NULL;
  for (guint i = 0; row != NULL && columns[i] != NULL; i++)
    g_hash_table_replace (values, g_strdup (columns[i]),
                          g_strdup (row[i + 1] != NULL ? row[i + 1] : ""));
  return TRUE;
}

gboolean
kt_identity_read_table (KtDb *db, const char *name, const char *const *columns,
                        GHashTable *values, gboolean *found, GError **error)
{
  GError *local = NULL;

  return kt_db_connect (db, error)
         && (read_table (kt_db_connection (db), kt_db_name (db),
                        name, columns, values, found, &local)
             || kt_db_failed (db, local, error));
}

static gboolean
other_writer (MYSQL *conn, const char *description, const char *job,
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
kt_identity_other_writer (KtDb *db, const char *job, const char *output, gboolean lock,
                          char **other, GError **error)
{
  GError *local = NULL;

  return kt_db_connect (db, error)
         && (other_writer (kt_db_connection (db), kt_db_name (db),
                          job, output, lock, other, &local)
             || kt_db_failed (db, local, error));
}

static gboolean
forget (MYSQL *conn, const char *description, const char *job, gboolean execute,
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

gboolean
kt_identity_forget (KtDb *db, const char *job, gboolean execute, guint64 *rows,
                    GError **error)
{
  GError *local = NULL;

  return kt_db_connect (db, error)
         && (forget (kt_db_connection (db), kt_db_name (db), job, execute, rows, &local)
             || kt_db_failed (db, local, error));
}
