/* migrations.c - bringing an older database forward (migrations.h).
 *
 * Takes a connection to a database of an older schema version and runs
 * the migrations of sql/migrations/ (compiled in), in order, under a named
 * lock, each with the step its SQL cannot say (which tables to widen or
 * convert: the "between" functions below). MariaDB commits DDL statement
 * by statement, so nothing here relies on a DDL transaction: every step
 * before the version sets a state and may run again after a kill -9
 * anywhere, and whatever must happen exactly once (rewriting rows)
 * commits in one transaction with the row that records the new version.
 * It never creates a fresh database's tables (schema.c does, from the
 * latest .sql files) and never touches a newer schema. */
#include "migrations.h"
#include "schema-mysql.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include "mysql-autocleanups.h"
#include "error.h"
#include "log.h"

/* The .sql files of sql/ and sql/migrations/, embedded at build time
 * (src/store/meson.build). */
#include "schema-sql.h"

/* A migration file's statements after this line (a line of its own)
 * commit with the version. */
#define VERSION_TXN_MARK "\n-- ktally: in the version transaction\n"

/* One lock per database, server-wide: two ktally processes (or two topics
 * of one job, each with its own connection) never migrate at once. Hashed
 * to stay within the 64 characters MySQL allows a lock name. */
#define LOCK_NAME "CONCAT('ktally_schema.', LEFT(SHA2(DATABASE(), 256), 40))"
#define LOCK_TRY_S 10
#define LOCK_WAIT_S 3600

typedef struct
{
  KtMigration m;
  /* What the migration's SQL cannot say (it depends on which tables the
   * database holds), run after its DDL and before its version transaction;
   * NULL for nothing. Each step must be safe to run again. */
  gboolean  (*between) (MYSQL *conn, const char *description, GHashTable *tables,
                        GError **error);
  /* The tables @between alters, appended to @names (char *), for a dry
   * run; NULL when @between is. */
  gboolean  (*touches) (MYSQL *conn, const char *description, GHashTable *tables,
                        GPtrArray *names, GError **error);
} Migration;

static gboolean widen_counts (MYSQL *conn, const char *description, GHashTable *tables,
                              GError **error);
static gboolean narrow_counts (MYSQL *conn, const char *description, GHashTable *tables,
                               GPtrArray *names, GError **error);
static gboolean utf8_job_columns (MYSQL *conn, const char *description, GHashTable *tables,
                                  GError **error);
static gboolean ascii_job_columns (MYSQL *conn, const char *description, GHashTable *tables,
                                   GPtrArray *names, GError **error);

static const Migration migrations[] = {
  { { 2, "names-bigint-utc", kt_migration_002_sql }, widen_counts, narrow_counts },
  { { 3, "job-identity", kt_migration_003_sql }, NULL, NULL },
  { { 4, "idempotent-minutes", kt_migration_004_sql }, NULL, NULL },
  { { 5, "replay-range", kt_migration_005_sql }, NULL, NULL },
  { { 6, "utf8-names", kt_migration_006_sql }, utf8_job_columns, ascii_job_columns },
  { { 7, "replay-times-skips", kt_migration_007_sql }, NULL, NULL },
  { { 8, "input-fields", kt_migration_008_sql }, NULL, NULL },
  { { 9, "database-identity", kt_migration_009_sql }, NULL, NULL },
  { { 10, "topic-anchors", kt_migration_010_sql }, NULL, NULL },
};

G_STATIC_ASSERT (G_N_ELEMENTS (migrations) == KT_SCHEMA_VERSION - 1);

const KtMigration *
kt_migrations_get (guint i)
{
  return i < G_N_ELEMENTS (migrations) ? &migrations[i].m : NULL;
}

/* Test hook (tests/integration/144-schema-migrate-restart.sh):
 * KTALLY_TEST_MIGRATION_KILL_AFTER=K sends this process SIGKILL right after
 * the K-th step of migrating, exactly where a kill -9 between two
 * statements would leave the database. Unset, it costs a getenv. */
static void
step_done (void)
{
  static gint steps;
  const char *kill_after = g_getenv ("KTALLY_TEST_MIGRATION_KILL_AFTER");

  if (kill_after != NULL && g_atomic_int_add (&steps, 1) + 1 == atoi (kill_after))
    raise (SIGKILL);
}

gboolean
kt_migrations_statement_applies (const char *statement, GHashTable *tables, const char **sql)
{
  g_autofree char *names = NULL;
  g_auto(GStrv) list = NULL;
  gsize len;

  *sql = statement;
  if (!g_str_has_prefix (statement, KT_SCHEMA_IF_DIRECTIVE))
    return TRUE;
  statement += strlen (KT_SCHEMA_IF_DIRECTIVE);
  len = strcspn (statement, "\n");
  names = g_strndup (statement, len);
  *sql = statement + len + (statement[len] != '\0');
  list = g_strsplit_set (names, " ", -1);
  for (char **n = list; *n != NULL; n++)
    {
      char *type = strchr (*n, ':');
      const char *found;

      if (**n == '\0')
        continue;
      if (type != NULL)
        *type++ = '\0';
      found = tables != NULL ? g_hash_table_lookup (tables, *n) : NULL;
      if (found == NULL
          || (type != NULL && g_ascii_strcasecmp (type, "view") == 0
              && g_strcmp0 (found, "VIEW") != 0)
          || (type != NULL && g_ascii_strcasecmp (type, "table") == 0
              && g_strcmp0 (found, "BASE TABLE") != 0))
        return FALSE;
    }
  return TRUE;
}

/* Runs the statements of @text in order; with @tables (a migration), each
 * one whose KT_SCHEMA_IF_DIRECTIVE holds, counting each as a step. */
static gboolean
apply_sql (MYSQL *conn, const char *description, const char *text, GHashTable *tables,
           GError **error)
{
  g_autoptr(GPtrArray) statements = kt_schema_statements (text);

  for (guint i = 0; i < statements->len; i++)
    {
      const char *sql;

      if (!kt_migrations_statement_applies (statements->pdata[i], tables, &sql))
        continue;
      if (!kt_db_exec (conn, description, sql,
                 tables != NULL ? "cannot migrate ktally's tables"
                                : "cannot create ktally's tables", error))
        return FALSE;
      if (tables != NULL)
        step_done ();
    }
  return TRUE;
}

/* Schema version 6: the job column of every base table that has one in
 * ASCII (the per-topic count tables a `run --table NAME` made, besides
 * those sql/migrations/006 names) becomes utf8mb4, binary. Safe to run
 * again: a column already converted is no longer listed. */
static gboolean
ascii_job_columns (MYSQL *conn, const char *description, GHashTable *tables, GPtrArray *names,
                   GError **error)
{
  g_autoptr(MYSQL_RES) res = kt_db_select (
    conn, description,
    "SELECT c.table_name FROM information_schema.columns c "
    "JOIN information_schema.tables t ON t.table_schema = c.table_schema "
    "AND t.table_name = c.table_name AND t.table_type = 'BASE TABLE' "
    "WHERE c.table_schema = DATABASE() AND c.column_name = 'job' "
    "AND c.character_set_name = 'ascii'", "cannot read the tables' columns", error);
  MYSQL_ROW row;

  (void) tables;
  if (res == NULL)
    return FALSE;
  while ((row = mysql_fetch_row (res)) != NULL)
    g_ptr_array_add (names, g_strdup (row[0]));
  return TRUE;
}

static gboolean
utf8_job_columns (MYSQL *conn, const char *description, GHashTable *tables, GError **error)
{
  g_autoptr(GPtrArray) narrow = g_ptr_array_new_with_free_func (g_free);

  if (!ascii_job_columns (conn, description, tables, narrow, error))
    return FALSE;
  for (guint i = 0; i < narrow->len; i++)
    {
      g_autofree char *sql = g_strdup_printf (
        "ALTER TABLE `%s` MODIFY job VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin "
        "NOT NULL", (const char *) narrow->pdata[i]);

      if (!kt_db_exec (conn, description, sql, "cannot migrate a table's job column", error))
        return FALSE;
      step_done ();
    }
  return TRUE;
}

/* Version 2, between its DDL and its transaction: log_count was INT in
 * version 1, in error_log and in every replay table (created with
 * error_log's columns). Widens it in error_log and in each table a batch
 * counted into (ktally_batches.target), where that is a base table whose
 * log_count is a narrower integer: idempotent mode's error_log is a view,
 * and a table of another shape is not ours to change. */
/* The tables whose log_count is narrower than BIGINT: error_log and those
 * a batch counted into, where they are base tables. */
static gboolean
narrow_counts (MYSQL *conn, const char *description, GHashTable *tables, GPtrArray *names,
               GError **error)
{
  g_autoptr(GString) sql = g_string_new (
    "SELECT c.table_name FROM information_schema.columns c "
    "WHERE c.table_schema = DATABASE() AND c.table_name IN (SELECT t.table_name "
    "FROM information_schema.tables t WHERE t.table_schema = DATABASE() "
    "AND t.table_type = 'BASE TABLE') AND c.column_name = 'log_count' "
    "AND c.data_type IN ('tinyint', 'smallint', 'mediumint', 'int') "
    "AND c.table_name IN ('error_log'");
  g_autoptr(MYSQL_RES) res = NULL;
  MYSQL_ROW row;

  if (g_hash_table_contains (tables, "ktally_batches"))
    {
      g_autoptr(MYSQL_RES) targets = kt_db_select (conn, description,
                                                  "SELECT DISTINCT target FROM ktally_batches",
                                                  "cannot read ktally_batches", error);
      if (targets == NULL)
        return FALSE;
      /* Table names only (names.h: letters, digits, marks and _, never a
       * quote): nothing else is a table ktally wrote, and they need no
       * escaping. */
      while ((row = mysql_fetch_row (targets)) != NULL)
        if (kt_is_identifier (row[0]))
          g_string_append_printf (sql, ",'%s'", row[0]);
    }
  g_string_append_c (sql, ')');
  res = kt_db_select (conn, description, sql->str, "cannot look for the count tables", error);
  if (res == NULL)
    return FALSE;
  while ((row = mysql_fetch_row (res)) != NULL)
    g_ptr_array_add (names, g_strdup (row[0]));
  return TRUE;
}

static gboolean
widen_counts (MYSQL *conn, const char *description, GHashTable *tables, GError **error)
{
  g_autoptr(GPtrArray) narrow = g_ptr_array_new_with_free_func (g_free);

  if (!narrow_counts (conn, description, tables, narrow, error))
    return FALSE;
  for (guint i = 0; i < narrow->len; i++)
    {
      g_autofree char *alter = g_strdup_printf (
        "ALTER TABLE `%s` MODIFY log_count BIGINT NOT NULL DEFAULT 0",
        (const char *) narrow->pdata[i]);

      if (!kt_db_exec (conn, description, alter, "cannot migrate ktally's tables", error))
        return FALSE;
      step_done ();
    }
  return TRUE;
}

/* The statements after VERSION_TXN_MARK (those whose KT_SCHEMA_IF_DIRECTIVE holds)
 * and the version row, in one transaction: they happen exactly once. */
static gboolean
commit_version (MYSQL *conn, const char *description, GHashTable *tables,
                const char *text, int version, GError **error)
{
  g_autoptr(GPtrArray) statements = kt_schema_statements (text != NULL ? text : "");
  g_autofree char *insert = g_strdup_printf (
    "INSERT INTO ktally_schema (version, ktally) VALUES (%d, '%s')", version, PACKAGE_VERSION);

  if (!kt_db_exec (conn, description, "START TRANSACTION", "cannot start a transaction", error))
    return FALSE;
  for (guint i = 0; i < statements->len; i++)
    {
      const char *sql;

      /* A kind or mode the database never used has no such table. */
      if (kt_migrations_statement_applies (statements->pdata[i], tables, &sql)
          && !kt_db_exec (conn, description, sql, "cannot migrate ktally's rows", error))
        goto fail;
    }
  /* The database's identity comes with the version that has its table
   * (version.sql, applied before any migration): once, the first time. */
  if (!kt_schema_identity_create (conn, description, error)
      || !kt_db_exec (conn, description, insert, "cannot record the schema version", error)
      || !kt_db_exec (conn, description, "COMMIT", "cannot commit the schema version", error))
    goto fail;
  step_done ();
  return TRUE;

fail:
  kt_db_rollback (conn);
  return FALSE;
}

static gboolean
migrate (MYSQL *conn, const char *description, GHashTable *tables, const Migration *m,
         GError **error)
{
  const char *mark = strstr (m->m.sql, VERSION_TXN_MARK);
  g_autofree char *ddl = mark != NULL ? g_strndup (m->m.sql, mark - m->m.sql)
                                      : g_strdup (m->m.sql);
  g_autoptr(KtLogEvent) e = kt_log_event_new ("migrate");

  kt_log_event_int (e, "from", m->m.version - 1);
  kt_log_event_int (e, "to", m->m.version);
  kt_log_event_string (e, "migration", m->m.name);
  kt_log_event_emit (e, G_LOG_LEVEL_MESSAGE, "%s: migrating the schema from version %d to %d "
                     "(%s)", description, m->m.version - 1, m->m.version, m->m.name);
  if (!apply_sql (conn, description, kt_version_sql, tables, error)
      || !apply_sql (conn, description, ddl, tables, error)
      || (m->between != NULL && !m->between (conn, description, tables, error))
      || !commit_version (conn, description, tables,
                          mark != NULL ? mark + strlen (VERSION_TXN_MARK) : NULL,
                          m->m.version, error))
    {
      g_prefix_error (error, "schema version %d: ", m->m.version);
      return FALSE;
    }
  return TRUE;
}

static gboolean
bring_forward_locked (MYSQL *conn, const char *description, GError **error)
{
  g_autoptr(GHashTable) tables = kt_schema_tables (conn, description, error);
  int version;

  if (tables == NULL || !kt_schema_version_of (conn, description, tables, &version, error))
    return FALSE;
  if (version > KT_SCHEMA_VERSION)
    {
      kt_db_check_newer_error (error, description, version);
      return FALSE;
    }
  if (version == 0)
    {
      /* Fresh: the latest .sql files create the tables next, and a kill
       * -9 before they are all in is completed by kt_schema_create(). */
      g_autofree char *insert = g_strdup_printf (
        "INSERT IGNORE INTO ktally_schema (version, ktally) VALUES (%d, '%s')",
        KT_SCHEMA_VERSION, PACKAGE_VERSION);

      /* The identity with the version, in one transaction: a database
       * whose version is recorded has its identity. */
      if (!apply_sql (conn, description, kt_version_sql, NULL, error)
          || !kt_db_exec (conn, description, "START TRANSACTION", "cannot start a transaction",
                          error))
        return FALSE;
      if (kt_schema_identity_create (conn, description, error)
          && kt_db_exec (conn, description, insert, "cannot record the schema version", error)
          && kt_db_exec (conn, description, "COMMIT", "cannot commit the schema version", error))
        return TRUE;
      kt_db_rollback (conn);
      return FALSE;
    }
  for (gsize i = 0; i < G_N_ELEMENTS (migrations); i++)
    {
      if (migrations[i].m.version <= version)
        continue;
      /* What the migration before created (or dropped) counts for this one. */
      g_hash_table_unref (tables);
      tables = kt_schema_tables (conn, description, error);
      if (tables == NULL || !migrate (conn, description, tables, &migrations[i], error))
        return FALSE;
    }
  return TRUE;
}

static gboolean
take_lock (MYSQL *conn, const char *description, GError **error)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) LOCK_WAIT_S * G_USEC_PER_SEC;
  gboolean said = FALSE;

  /* The first try does not wait, so that a wait is logged when it starts. */
  for (int wait_s = 0;; wait_s = LOCK_TRY_S)
    {
      g_autofree char *sql = g_strdup_printf ("SELECT GET_LOCK(" LOCK_NAME ", %d)", wait_s);
      g_autoptr(MYSQL_RES) res = kt_db_select (conn, description, sql,
                                              "cannot lock the schema", error);
      MYSQL_ROW row;

      if (res == NULL)
        return FALSE;
      row = mysql_fetch_row (res);
      if (row != NULL && g_strcmp0 (row[0], "1") == 0)
        return TRUE;
      if (row == NULL || row[0] == NULL)
        {
          g_set_error (error, KT_ERROR, KT_ERROR_TRANSIENT,
                       "cannot lock the schema on %s: GET_LOCK failed", description);
          return FALSE;
        }
      if (g_get_monotonic_time () >= deadline)
        {
          g_set_error (error, KT_ERROR, KT_ERROR_TRANSIENT,
                       "%s: another ktally has held the schema lock for %d s (a long "
                       "migration?); try again later", description, LOCK_WAIT_S);
          return FALSE;
        }
      if (!said)
        g_message ("%s: waiting for another ktally to finish migrating the schema",
                   description);
      said = TRUE;
    }
}

/* Brings the schema of @conn's database (a connection with a long read
 * timeout) to KT_SCHEMA_VERSION under the named lock, as
 * kt_migrations_ready() says, telling @migrating (may be NULL). */
static gboolean
bring_forward (MYSQL *conn, const char *description, KtMigrationsMigrating migrating,
               gpointer data, GError **error)
{
  gboolean ok;

  if (!kt_db_check_version (conn, description, error))
    return FALSE;
  /* From the wait for the lock on: either may last. */
  if (migrating != NULL)
    migrating (TRUE, data);
  ok = take_lock (conn, description, error);
  /* Under the lock, read again: whoever held it may have migrated. */
  if (ok)
    {
      ok = bring_forward_locked (conn, description, error);
      /* Closing the connection would release it too. */
      if (mysql_query (conn, "SELECT RELEASE_LOCK(" LOCK_NAME ")") == 0)
        mysql_free_result (mysql_store_result (conn));
    }
  if (migrating != NULL)
    migrating (FALSE, data);
  return ok;
}


/* A database at KT_SCHEMA_VERSION whose identity row is missing (deleted
 * by hand, a partial restore) gets one, as a fresh one would: until then
 * no process could tell it from another. Then kt_db_identity_check(). */
static gboolean
identity_ready (KtDb *db, GError **error)
{
  g_autofree char *id = NULL;
  GError *local = NULL;

  if (!kt_db_check_identity_read (kt_db_connection (db), kt_db_name (db), &id, &local)
      || (id == NULL && !kt_schema_identity_create (kt_db_connection (db), kt_db_name (db),
                                                    &local)))
    return kt_db_failed (db, local, error);
  return kt_db_identity_check (db, error);
}

gboolean
kt_migrations_ready (KtDb *db, KtMigrationsMigrating migrating, gpointer data,
                     GError **error)
{
  g_autoptr(MYSQL) conn = NULL;
  int version;

  if (!kt_schema_connect_version (db, &version, error))
    return FALSE;
  if (version != KT_SCHEMA_VERSION)
    {
      conn = kt_db_open_long (db, error);
      if (conn == NULL || !bring_forward (conn, kt_db_name (db), migrating, data, error))
        return FALSE;
    }
  /* The identity the schema was made or migrated with, read on the
   * connection the job writes on: the process's from now on, or compared
   * with it (a server that was fresh here may have been another's). */
  return kt_schema_prepare (db, KT_TABLES_COMMON, NULL, error)
         && identity_ready (db, error);
}

/* ---- A dry run of the migrations ------------------------------------------ */

void
kt_pending_table_clear (gpointer row)
{
  KtPendingTable *t = row;

  g_clear_pointer (&t->table, g_free);
  g_clear_pointer (&t->does, g_free);
}

/* The words of @sql: identifiers (`quoted` ones unquoted), numbers and
 * single punctuation; strings ('...') dropped. */
static GPtrArray *
sql_words (const char *sql)
{
  GPtrArray *words = g_ptr_array_new_with_free_func (g_free);

  for (const char *p = sql; *p != '\0';)
    {
      if (g_ascii_isspace (*p))
        p++;
      else if (*p == '`')
        {
          const char *end = strchr (p + 1, '`');
          if (end == NULL)
            break;
          g_ptr_array_add (words, g_strndup (p + 1, (gsize) (end - p - 1)));
          p = end + 1;
        }
      else if (*p == '\'')
        {
          const char *end = p + 1;
          while (*end != '\0' && (*end != '\'' || end[-1] == '\\'))
            end++;
          p = *end != '\0' ? end + 1 : end;
        }
      else if (g_ascii_isalnum (*p) || *p == '_' || *p == '.' || *p == '@')
        {
          const char *end = p;
          while (g_ascii_isalnum (*end) || *end == '_' || *end == '.' || *end == '@')
            end++;
          g_ptr_array_add (words, g_strndup (p, (gsize) (end - p)));
          p = end;
        }
      else
        g_ptr_array_add (words, g_strndup (p++, 1));
    }
  return words;
}

static gboolean
word_is (GPtrArray *words, guint i, const char *keyword)
{
  return i < words->len && g_ascii_strcasecmp (words->pdata[i], keyword) == 0;
}

/* The name at @i, past IF [NOT] EXISTS, or NULL (a subquery, another
 * database's table); *@next: the word after it. */
static const char *
name_at (GPtrArray *words, guint i, guint *next)
{
  const char *name;

  if (word_is (words, i, "IF"))
    i += word_is (words, i + 1, "NOT") ? 3 : 2;
  *next = i + 1;
  if (i >= words->len)
    return NULL;
  name = words->pdata[i];
  if (!(g_ascii_isalpha (*name) || *name == '_') || strchr (name, '.') != NULL)
    return NULL;
  return name;
}

void
kt_migrations_statement_uses (const char *sql, GPtrArray *out)
{
  g_autoptr(GPtrArray) words = NULL;
  const char *end_of_directive;

  if (g_str_has_prefix (sql, KT_SCHEMA_IF_DIRECTIVE))
    {
      end_of_directive = strchr (sql, '\n');
      sql = end_of_directive != NULL ? end_of_directive + 1 : "";
    }
  words = sql_words (sql);
  for (guint i = 0; i < words->len; i++)
    {
      const char *does = NULL, *name;
      guint at = i + 1, next;

      if (word_is (words, i, "ALTER") && word_is (words, i + 1, "TABLE"))
        does = "alter", at = i + 2;
      else if (word_is (words, i, "CREATE"))
        {
          at = word_is (words, i + 1, "OR") ? i + 3 : i + 1;
          if (word_is (words, at, "TABLE") || word_is (words, at, "VIEW"))
            does = word_is (words, at, "VIEW") ? "create view" : "create", at++;
        }
      else if (word_is (words, i, "DROP")
               && (word_is (words, i + 1, "TABLE") || word_is (words, i + 1, "VIEW")))
        does = "drop", at = i + 2;
      else if (word_is (words, i, "INSERT"))
        {
          at = word_is (words, i + 1, "IGNORE") ? i + 2 : i + 1;
          if (word_is (words, at, "INTO"))
            does = "insert", at++;
        }
      else if (word_is (words, i, "UPDATE") && i == 0)
        does = "update";
      else if (word_is (words, i, "DELETE") && word_is (words, i + 1, "FROM"))
        does = "delete", at = i + 2;
      else if ((word_is (words, i, "FROM") || word_is (words, i, "JOIN"))
               && !word_is (words, i - 1, "DELETE") && i > 0)
        does = "read";
      if (does == NULL || (name = name_at (words, at, &next)) == NULL)
        continue;
      g_ptr_array_add (out, g_strdup_printf ("%s\t%s", does, name));
      i = next - 1;
    }
}

/* Every base table's size now: name -> gint64[2] (rows about, bytes). */
static GHashTable *
table_sizes (MYSQL *conn, const char *description, GError **error)
{
  g_autoptr(GHashTable) sizes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr(MYSQL_RES) res = kt_db_select (
    conn, description, "SELECT table_name, table_rows, data_length + index_length "
                       "FROM information_schema.tables WHERE table_schema = DATABASE() "
                       "AND table_type = 'BASE TABLE'", "cannot read the tables' sizes", error);
  MYSQL_ROW row;

  if (res == NULL)
    return NULL;
  while ((row = mysql_fetch_row (res)) != NULL)
    {
      gint64 *size = g_new (gint64, 2);

      size[0] = row[1] != NULL ? g_ascii_strtoll (row[1], NULL, 10) : 0;
      size[1] = row[2] != NULL ? g_ascii_strtoll (row[2], NULL, 10) : 0;
      g_hash_table_insert (sizes, g_strdup (row[0]), size);
    }
  return g_steal_pointer (&sizes);
}

/* @use ("does\ttable") into @m's rows in @pending, one row per table,
 * its verbs joined; @tables follows what the migration creates and drops. */
static void
add_use (GArray *pending, guint first, const Migration *m, const char *use, GHashTable *tables,
         GHashTable *sizes)
{
  g_autofree char *does = g_strndup (use, strcspn (use, "\t"));
  const char *table = use + strlen (does) + 1;
  const gint64 *size = g_hash_table_lookup (sizes, table);
  KtPendingTable row = { m->m.version, m->m.name, NULL, NULL, -1, -1 };

  /* IF EXISTS: a statement on a table the database will not hold then
   * does nothing. */
  if (!g_str_has_prefix (does, "create") && !g_hash_table_contains (tables, table))
    return;
  if (g_str_has_prefix (does, "create"))
    g_hash_table_insert (tables, g_strdup (table),
                         g_strdup (g_str_equal (does, "create view") ? "VIEW" : "BASE TABLE"));
  else if (g_str_equal (does, "drop"))
    g_hash_table_remove (tables, table);
  for (guint i = first; i < pending->len; i++)
    {
      KtPendingTable *t = &g_array_index (pending, KtPendingTable, i);
      g_auto(GStrv) verbs = NULL;

      if (!g_str_equal (t->table, table))
        continue;
      verbs = g_strsplit (t->does, ", ", -1);
      if (!g_strv_contains ((const char *const *) verbs, does))
        {
          char *more = g_strdup_printf ("%s, %s", t->does, does);
          g_free (t->does);
          t->does = more;
        }
      return;
    }
  row.table = g_strdup (table);
  row.does = g_steal_pointer (&does);
  if (size != NULL)
    {
      row.rows = size[0];
      row.bytes = size[1];
    }
  g_array_append_val (pending, row);
}

static gboolean
list_pending (MYSQL *conn, const char *description, int *version, GArray *pending,
              GError **error)
{
  g_autoptr(GHashTable) tables = kt_schema_tables (conn, description, error);
  g_autoptr(GHashTable) sizes = NULL;

  if (tables == NULL || !kt_schema_version_of (conn, description, tables, version, error))
    return FALSE;
  if (*version > KT_SCHEMA_VERSION)
    {
      kt_db_check_newer_error (error, description, *version);
      return FALSE;
    }
  if (*version == 0 || *version == KT_SCHEMA_VERSION)
    return TRUE;
  sizes = table_sizes (conn, description, error);
  if (sizes == NULL)
    return FALSE;
  for (gsize i = 0; i < G_N_ELEMENTS (migrations); i++)
    {
      const Migration *m = &migrations[i];
      g_autoptr(GPtrArray) statements = NULL;
      g_autoptr(GPtrArray) uses = g_ptr_array_new_with_free_func (g_free);
      guint first = pending->len;

      if (m->m.version <= *version)
        continue;
      statements = kt_schema_statements (m->m.sql);
      for (guint j = 0; j < statements->len; j++)
        {
          const char *sql;

          if (kt_migrations_statement_applies (statements->pdata[j], tables, &sql))
            kt_migrations_statement_uses (sql, uses);
        }
      if (m->touches != NULL)
        {
          g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);

          if (!m->touches (conn, description, tables, names, error))
            return FALSE;
          for (guint j = 0; j < names->len; j++)
            g_ptr_array_add (uses, g_strdup_printf ("alter\t%s", (char *) names->pdata[j]));
        }
      for (guint j = 0; j < uses->len; j++)
        add_use (pending, first, m, uses->pdata[j], tables, sizes);
    }
  return TRUE;
}

gboolean
kt_migrations_pending (KtDb *db, int *version, GArray *pending, GError **error)
{
  GError *local = NULL;

  return kt_db_connect (db, error)
         && (list_pending (kt_db_connection (db), kt_db_name (db), version, pending, &local)
             || kt_db_failed (db, local, error));
}
