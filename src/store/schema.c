/* schema.c - ktally's tables: creating them, their shapes, their version.
 *
 * Takes a connection and makes the database hold the tables this ktally
 * writes, the latest ones (the .sql files of sql/, compiled in), checking
 * any that exist for the shape ktally writes; reads the schema version
 * and refuses a newer one. Bringing an older database forward is
 * migrations.c's. Never alters a table that exists: it creates what is
 * absent (every statement CREATE ... IF NOT EXISTS) or refuses. */
#include "schema.h"
#include "schema-mysql.h"

#include <mysqld_error.h>
#include <stdlib.h>
#include <string.h>
#include "mysql-autocleanups.h"
#include "error.h"
#include "db.h"
#include "log.h"

/* The .sql files of sql/ and sql/migrations/, embedded at build time
 * (src/store/meson.build). */
#include "schema-sql.h"

/* Where one of ktally's own tables is something else. */
#define OWN_TABLE_HINT \
  "ktally writes a table of its own by that name (another program's? use another database)"

static const char *
tables_sql (KtTables tables)
{
  switch (tables)
    {
    case KT_TABLES_COMMON:
      return kt_common_sql;
    case KT_TABLES_COUNTS:
      return kt_counts_sql;
    case KT_TABLES_IDEMPOTENT:
      return kt_idempotent_sql;
    case KT_TABLES_LEDGER:
      return kt_ledger_sql;
    default:
      g_assert_not_reached ();
    }
}

GPtrArray *
kt_schema_statements (const char *text)
{
  g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func (g_free);
  g_auto(GStrv) statements = g_strsplit (text, ";\n", -1);

  for (char **s = statements; *s != NULL; s++)
    {
      g_autoptr(GString) sql = g_string_new (NULL);
      g_auto(GStrv) lines = g_strsplit (*s, "\n", -1);

      for (char **l = lines; *l != NULL; l++)
        if ((!g_str_has_prefix (g_strstrip (*l), "--")
             || g_str_has_prefix (*l, KT_SCHEMA_IF_DIRECTIVE))
            && **l != '\0')
          g_string_append_printf (sql, "%s\n", *l);
      /* The last statement of a file keeps its ';' (no newline after it). */
      while (sql->len > 0 && (sql->str[sql->len - 1] == '\n' || sql->str[sql->len - 1] == ';'))
        g_string_truncate (sql, sql->len - 1);
      if (sql->len > 0)
        g_ptr_array_add (out, g_string_free (g_steal_pointer (&sql), FALSE));
    }
  return g_steal_pointer (&out);
}

/* The names that an embedded .sql file creates ("CREATE TABLE|VIEW IF NOT
 * EXISTS name"), appended to @names. */
static void
created_names (const char *text, GPtrArray *names)
{
  static const char *const creates[] = { "CREATE TABLE IF NOT EXISTS ",
                                         "CREATE VIEW IF NOT EXISTS " };

  for (gsize c = 0; c < G_N_ELEMENTS (creates); c++)
    for (const char *p = strstr (text, creates[c]); p != NULL; p = strstr (p, creates[c]))
      {
        p += strlen (creates[c]);
        g_ptr_array_add (names, g_strndup (p, strcspn (p, " (\n")));
      }
}

/* The names of ktally's own tables (kt_schema_own_table()). */
static GPtrArray *
own_tables (void)
{
  static const char *const texts[] = { kt_common_sql, kt_idempotent_sql, kt_ledger_sql,
                                       kt_version_sql };
  GPtrArray *names = g_ptr_array_new_with_free_func (g_free);

  for (gsize i = 0; i < G_N_ELEMENTS (texts); i++)
    created_names (texts[i], names);
  for (guint i = names->len; i-- > 0;)
    if (g_str_equal (names->pdata[i], "error_log"))
      g_ptr_array_remove_index (names, i);
  return names;
}

gboolean
kt_schema_own_table (const char *name)
{
  g_autoptr(GPtrArray) names = own_tables ();

  for (guint i = 0; i < names->len; i++)
    if (g_str_equal (names->pdata[i], name))
      return TRUE;
  return FALSE;
}

/* Refuses a view or a sequence named like one of ktally's own tables,
 * before a migration or a fresh schema writes anything: an older schema
 * holds them as tables too. Not error_log_topic: the default idempotent
 * job's counts, which its job checks (an older ktally let a job's view
 * take that name). */
static gboolean check_object (MYSQL *conn, const char *description, const char *name,
                              const char *over, const char *hint, GError **error);

static gboolean
check_own_objects (MYSQL *conn, const char *description, GError **error)
{
  g_autoptr(GPtrArray) names = own_tables ();
  g_autoptr(GString) sql = g_string_new ("SELECT table_name FROM information_schema.tables "
                                         "WHERE table_schema = DATABASE() AND table_type NOT IN "
                                         "('BASE TABLE', 'SYSTEM VERSIONED') AND table_name IN (");
  g_autoptr(MYSQL_RES) res = NULL;
  MYSQL_ROW row;

  /* Names from our own .sql files: [a-z_], nothing to escape. */
  for (guint i = 0; i < names->len; i++)
    if (!g_str_equal (names->pdata[i], "error_log" KT_TOPIC_SUFFIX))
      g_string_append_printf (sql, "'%s',", (const char *) names->pdata[i]);
  sql->str[sql->len - 1] = ')';
  res = kt_db_select (conn, description, sql->str, "cannot look for the tables", error);
  if (res == NULL)
    return FALSE;
  row = mysql_fetch_row (res);
  return row == NULL
         || check_object (conn, description, row[0], NULL, OWN_TABLE_HINT, error);
}

/* kt_schema_complete() but for the names in @except. */
static gboolean
complete_except (MYSQL *conn, const char *description, KtTables tables,
                 const char *const *except, gboolean *complete, GError **error)
{
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GString) sql = g_string_new ("SELECT COUNT(*) FROM information_schema.tables "
                                         "WHERE table_schema = DATABASE() AND table_name IN (");
  g_autoptr(MYSQL_RES) res = NULL;
  MYSQL_ROW row;

  created_names (tables_sql (tables), names);
  for (guint i = names->len; i-- > 0;)
    if (except != NULL && g_strv_contains (except, names->pdata[i]))
      g_ptr_array_remove_index (names, i);
  if (names->len == 0)
    {
      *complete = TRUE;
      return TRUE;
    }
  /* Names from our own .sql files: [a-z_], nothing to escape. */
  for (guint i = 0; i < names->len; i++)
    g_string_append_printf (sql, "%s'%s'", i ? "," : "", (const char *) names->pdata[i]);
  g_string_append_c (sql, ')');
  res = kt_db_select (conn, description, sql->str, "cannot look for the tables", error);
  if (res == NULL)
    return FALSE;
  row = mysql_fetch_row (res);
  *complete = row != NULL && row[0] != NULL
              && g_ascii_strtoull (row[0], NULL, 10) == names->len;
  return TRUE;
}

gboolean
kt_schema_complete (MYSQL *conn, const char *description, KtTables tables,
                    gboolean *complete, GError **error)
{
  return complete_except (conn, description, tables, NULL, complete, error);
}

/* kt_schema_create() but for the statements that create a name in @except
 * (NULL: none). */
static gboolean
create_except (MYSQL *conn, const char *description, KtTables tables,
               const char *const *except, GError **error)
{
  g_autoptr(GPtrArray) statements = kt_schema_statements (tables_sql (tables));

  for (guint i = 0; i < statements->len; i++)
    {
      g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);

      created_names (statements->pdata[i], names);
      if (except != NULL && names->len > 0 && g_strv_contains (except, names->pdata[0]))
        continue;
      if (!kt_db_exec (conn, description, statements->pdata[i],
                       "cannot create ktally's tables", error))
        return FALSE;
    }
  return TRUE;
}

gboolean
kt_schema_create (MYSQL *conn, const char *description, KtTables tables, GError **error)
{
  return create_except (conn, description, tables, NULL, error);
}

/* One column a CREATE TABLE of ktally's .sql files declares. */
typedef struct
{
  char    *name;
  char    *type;   /* as information_schema's DATA_TYPE says it: "bigint" */
  gboolean key;    /* part of the primary key */
} Column;

static void
column_free (gpointer data)
{
  Column *c = data;
  g_free (c->name);
  g_free (c->type);
  g_free (c);
}

/* The columns of each CREATE TABLE of @text: table name -> GPtrArray of
 * Column. A column line is "name TYPE[(...)] ..."; "PRIMARY KEY (a, b)" or
 * an inline PRIMARY KEY marks the key. */
static GHashTable *
declared_tables (const char *text)
{
  static const char create[] = "CREATE TABLE IF NOT EXISTS ";
  GHashTable *tables = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                              (GDestroyNotify) g_ptr_array_unref);

  for (const char *p = strstr (text, create); p != NULL; p = strstr (p, create))
    {
      const char *end;
      g_autofree char *body = NULL;
      g_auto(GStrv) lines = NULL;
      GPtrArray *columns = g_ptr_array_new_with_free_func (column_free);

      p += strlen (create);
      g_hash_table_insert (tables, g_strndup (p, strcspn (p, " (\n")), columns);
      p = strchr (p, '(');
      end = p != NULL ? strstr (p, "\n)") : NULL;
      if (end == NULL)
        break;
      body = g_strndup (p + 1, end - p - 1);
      lines = g_strsplit (body, "\n", -1);
      for (char **l = lines; *l != NULL; l++)
        {
          g_autofree char *line = g_strstrip (g_strdup (*l));
          g_auto(GStrv) all = g_strsplit_set (line, " \t", -1);
          g_autofree char *name = NULL;
          const char *words[2] = { NULL, NULL };
          guint n = 0;

          /* The first two words: runs of blanks align the columns. */
          for (char **w = all; *w != NULL && n < 2; w++)
            if (**w != '\0')
              words[n++] = *w;

          if (*line == '\0' || g_str_has_prefix (line, "--") || g_str_has_prefix (line, "KEY ")
              || g_str_has_prefix (line, "UNIQUE "))
            continue;
          if (g_str_has_prefix (line, "PRIMARY KEY"))
            {
              g_auto(GStrv) keys = g_strsplit_set (strchr (line, '('), "(), `", -1);
              for (char **k = keys; *k != NULL; k++)
                for (guint i = 0; **k != '\0' && i < columns->len; i++)
                  if (g_str_equal (((Column *) columns->pdata[i])->name, *k))
                    ((Column *) columns->pdata[i])->key = TRUE;
              continue;
            }
          if (words[0] == NULL || words[1] == NULL)
            continue;
          name = g_strdup (words[0]);
          g_strdelimit (name, "`", ' ');
          {
            Column *c = g_new0 (Column, 1);
            c->name = g_strdup (g_strstrip (name));
            c->type = g_ascii_strdown (words[1], strcspn (words[1], "(,"));
            c->key = strstr (line, "PRIMARY KEY") != NULL;
            g_ptr_array_add (columns, c);
          }
        }
    }
  return tables;
}

char *
kt_schema_view_reads (const char *definition, const char *db)
{
  const char *from = strstr (definition, " from ");
  g_autofree char *ours = NULL;
  const char *p, *end;

  if (from == NULL || strstr (from + 1, " from ") != NULL || strstr (from, " join ") != NULL)
    return NULL;
  p = from + strlen (" from ");
  end = strstr (p, " group by ");
  if (end == NULL)
    end = strstr (p, " where ");
  if (end == NULL)
    end = p + strlen (p);
  /* `db`.`t`, each with its backquotes doubled inside. */
  {
    g_autofree char *text = g_strndup (p, end - p);
    g_autoptr(GString) name = g_string_new (NULL);
    g_autoptr(GPtrArray) parts = g_ptr_array_new_with_free_func (g_free);
    const char *q = text;

    while (*q == '`')
      {
        g_string_truncate (name, 0);
        for (q++; *q != '\0' && !(q[0] == '`' && q[1] != '`'); q++)
          {
            if (q[0] == '`')
              q++;
            g_string_append_c (name, *q);
          }
        if (*q != '`')
          return NULL;
        g_ptr_array_add (parts, g_strdup (name->str));
        q++;
        if (*q == '.')
          q++;
      }
    if (*q != '\0' || parts->len != 2)
      return NULL;
    ours = g_str_equal (parts->pdata[0], db)
             ? g_strdup (parts->pdata[1])
             : g_strdup_printf ("%s.%s", (char *) parts->pdata[0], (char *) parts->pdata[1]);
  }
  return g_steal_pointer (&ours);
}

static gboolean
check_object (MYSQL *conn, const char *description, const char *name,
              const char *over, const char *hint, GError **error)
{
  g_autoptr(GString) sql = g_string_new (
    "SELECT t.table_type, v.view_definition, DATABASE() FROM information_schema.tables t "
    "LEFT JOIN information_schema.views v ON v.table_schema = DATABASE() AND v.table_name = ");
  g_autoptr(MYSQL_RES) res = NULL;
  g_autofree char *reads = NULL;
  g_autofree char *is = NULL;
  const char *type;
  MYSQL_ROW row;

  /* Constants on both sides (see select_columns). */
  kt_db_append_quoted (conn, sql, name);
  g_string_append (sql, " WHERE t.table_schema = DATABASE() AND t.table_name = ");
  kt_db_append_quoted (conn, sql, name);
  res = kt_db_select (conn, description, sql->str, "cannot look for the tables", error);
  if (res == NULL)
    return FALSE;
  row = mysql_fetch_row (res);
  if (row == NULL || row[0] == NULL)
    return TRUE;
  type = row[0];
  /* A system-versioned table is a base table that keeps its history. */
  if (g_str_equal (type, "BASE TABLE") || g_str_equal (type, "SYSTEM VERSIONED"))
    {
      if (over == NULL)
        return TRUE;
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "%s: %s is a table: %s",
                   description, name, hint);
      return FALSE;
    }
  if (!g_str_equal (type, "VIEW"))
    {
      g_autofree char *lower = g_ascii_strdown (type, -1);

      g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "%s: %s is %s %s, not a %s: %s", description,
                   name, strchr ("aeiou", lower[0]) != NULL ? "an" : "a", lower,
                   over == NULL ? "table" : "view", hint);
      return FALSE;
    }
  reads = row[1] != NULL && row[2] != NULL ? kt_schema_view_reads (row[1], row[2]) : NULL;
  if (over != NULL && g_strcmp0 (reads, over) == 0)
    return TRUE;
  is = reads != NULL ? g_strdup_printf (" over %s", reads) : g_strdup ("");
  if (over == NULL)
    g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "%s: %s is a view%s, not a table: %s",
                 description, name, is, hint);
  else
    g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "%s: %s is a view%s, not ktally's view "
                 "over %s: %s", description, name, reads != NULL ? is : " of its own", over,
                 hint);
  return FALSE;
}

gboolean
kt_schema_check_object (KtDb *db, const char *name, const char *over, const char *hint,
                        GError **error)
{
  GError *local = NULL;

  return kt_db_connect (db, error)
         && (check_object (kt_db_connection (db), kt_db_name (db),
                          name, over, hint, &local)
             || kt_db_failed (db, local, error));
}

/* @table's columns in this database (SELECT c.@what...), none when it is
 * absent or a view. Constants on both sides, no join on columns: MariaDB
 * then opens only this table's definition; joined on columns, it read
 * every table of every database (170 ms a query beside 1,000 databases). */
static MYSQL_RES *
select_columns (MYSQL *conn, const char *description, const char *what, const char *table,
                GError **error)
{
  g_autoptr(GString) sql = g_string_new (NULL);

  g_string_printf (sql, "SELECT %s FROM information_schema.columns c "
                        "JOIN information_schema.tables t ON t.table_schema = DATABASE() "
                        "AND t.table_name = ", what);
  kt_db_append_quoted (conn, sql, table);
  g_string_append (sql, " WHERE t.table_type IN ('BASE TABLE', 'SYSTEM VERSIONED') "
                        "AND c.table_schema = DATABASE() AND c.table_name = ");
  kt_db_append_quoted (conn, sql, table);
  return kt_db_select (conn, description, sql->str, "cannot read the tables' columns", error);
}

/* Compares @table in the database with @columns (declared): a view or a
 * sequence of that name, a column missing, of another type, or in or out
 * of the primary key is KT_ERROR_USAGE naming it. An absent table passes. */
static gboolean
check_columns (MYSQL *conn, const char *description, const char *table,
               GPtrArray *columns, const char *flag, GError **error)
{
  g_autoptr(GHashTable) found = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                       (GDestroyNotify) g_strfreev);
  g_autoptr(MYSQL_RES) res = NULL;
  MYSQL_ROW row;

  if (flag == NULL
      && !check_object (conn, description, table, NULL, OWN_TABLE_HINT, error))
    return FALSE;
  res = select_columns (conn, description, "c.column_name, c.data_type, c.column_key", table,
                        error);
  if (res == NULL)
    return FALSE;
  while ((row = mysql_fetch_row (res)) != NULL)
    g_hash_table_insert (found, g_ascii_strdown (row[0], -1),
                         g_strsplit (row[1] != NULL ? row[1] : "", " ", 2));
  if (g_hash_table_size (found) == 0)
    return TRUE;
  mysql_data_seek (res, 0);
  for (guint i = 0; i < columns->len; i++)
    {
      const Column *c = columns->pdata[i];
      char **have = g_hash_table_lookup (found, c->name);
      const char *why = NULL;
      g_autofree char *type = NULL;

      if (have == NULL)
        why = "is missing";
      else if (!g_str_equal (have[0], c->type))
        why = type = g_strdup_printf ("is %s, not %s", have[0], c->type);
      if (why != NULL)
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                       "%s: table %s is not the shape ktally writes: column %s %s (another "
                       "program's table? use another database%s%s)", description, table,
                       c->name, why, g_str_equal (table, "error_log") ? "" : " or ",
                       g_str_equal (table, "error_log") ? "" : flag != NULL ? flag : "--table");
          return FALSE;
        }
    }
  while ((row = mysql_fetch_row (res)) != NULL)
    {
      gboolean key = g_strcmp0 (row[2], "PRI") == 0, want = FALSE;

      for (guint i = 0; i < columns->len; i++)
        if (g_ascii_strcasecmp (((Column *) columns->pdata[i])->name, row[0]) == 0)
          want = ((Column *) columns->pdata[i])->key;
      if (key != want)
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                       "%s: table %s is not the shape ktally writes: column %s is %sin its "
                       "primary key (another program's table? use another database%s%s)",
                       description, table, row[0], key ? "" : "not ",
                       g_str_equal (table, "error_log") ? "" : " or ",
                       g_str_equal (table, "error_log") ? "" : flag != NULL ? flag : "--table");
          return FALSE;
        }
    }
  return TRUE;
}

static gboolean
check_shape_except (MYSQL *conn, const char *description, KtTables tables,
                    const char *const *except, GError **error)
{
  g_autoptr(GHashTable) declared = declared_tables (tables_sql (tables));
  GHashTableIter iter;
  gpointer name, columns;

  g_hash_table_iter_init (&iter, declared);
  while (g_hash_table_iter_next (&iter, &name, &columns))
    if ((except == NULL || !g_strv_contains (except, name))
        && !check_columns (conn, description, name, columns, NULL, error))
      return FALSE;
  return TRUE;
}

gboolean
kt_schema_check_shape (MYSQL *conn, const char *description, KtTables tables,
                       GError **error)
{
  return check_shape_except (conn, description, tables, NULL, error);
}

/* One column a count table of some shape must have. */
typedef struct
{
  char       *name;
  const char *type;     /* DATA_TYPE */
  const char *sql;      /* how the column is declared, for messages */
  gboolean    key;
  gboolean    shaped;   /* a --by or --sum column (else one of every count table) */
} CountColumn;

static void
count_columns_clear (GArray *columns)
{
  for (guint i = 0; i < columns->len; i++)
    g_free (g_array_index (columns, CountColumn, i).name);
}

/* The columns of @shape, in table order (the per-topic ones first). */
static GArray *
count_columns (const KtCountsShape *shape, gboolean per_topic)
{
  GArray *out = g_array_new (FALSE, FALSE, sizeof (CountColumn));

#define ADD(n, t, q, k, s) g_array_append_val (out, ((CountColumn) { (n), (t), (q), (k), (s) }))
  if (per_topic)
    {
      ADD (g_strdup ("job"), "varchar", "VARCHAR(64)", TRUE, FALSE);
      ADD (g_strdup ("topic"), "varchar", "VARCHAR(249)", TRUE, FALSE);
    }
  ADD (g_strdup ("log_time"), "datetime", "DATETIME", TRUE, FALSE);
  for (const char *const *d = shape->dimensions; d != NULL && *d != NULL; d++)
    ADD (g_strdup (*d), "varbinary", KT_DIMENSION_SQL, TRUE, TRUE);
  ADD (g_strdup ("log_count"), "bigint", "BIGINT", FALSE, FALSE);
  for (const char *const *m = shape->sums; m != NULL && *m != NULL; m++)
    ADD (g_strdup_printf ("sum_%s", *m), "decimal", KT_SUM_SQL, FALSE, TRUE);
#undef ADD
  return out;
}

static const CountColumn *
find_count_column (GArray *columns, const char *name)
{
  for (guint i = 0; i < columns->len; i++)
    if (g_ascii_strcasecmp (g_array_index (columns, CountColumn, i).name, name) == 0)
      return &g_array_index (columns, CountColumn, i);
  return NULL;
}

static gboolean
shape_error (GError **error, const char *description, const char *table, const char *column,
             const char *why, gboolean shaped)
{
  g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
               "%s: table %s is not the shape ktally writes: column %s %s (%s)", description,
               table, column, why,
               shaped ? "its rows are counted by other --by or --sum fields than this "
                        "job's: count into another --table"
                      : "another program's table? use another database or --table");
  return FALSE;
}

/* How the column @row (name, type, key, length, precision, scale) differs
 * from @c, or NULL; *@keys: in the primary key or out of it wrongly. */
static char *
column_difference (MYSQL_ROW row, const CountColumn *c, gboolean *keys)
{
  gboolean key = g_strcmp0 (row[2], "PRI") == 0;
  guint64 length = row[3] != NULL ? g_ascii_strtoull (row[3], NULL, 10) : 0;
  guint64 precision = row[4] != NULL ? g_ascii_strtoull (row[4], NULL, 10) : 0;
  guint64 scale = row[5] != NULL ? g_ascii_strtoull (row[5], NULL, 10) : 0;

  if (g_strcmp0 (row[1], c->type) != 0)
    return g_strdup_printf ("is %s, not %s", row[1], c->type);
  if (g_str_equal (c->type, "varbinary") && length < 255)
    return g_strdup_printf ("is varbinary(%" G_GUINT64_FORMAT "), shorter than %s", length,
                            KT_DIMENSION_SQL);
  if (g_str_equal (c->type, "decimal") && (precision < 38 || scale != 4))
    return g_strdup_printf ("is decimal(%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT "), not %s",
                            precision, scale, KT_SUM_SQL);
  if (key != c->key)
    {
      *keys = TRUE;
      return g_strdup_printf ("is %sin its primary key", key ? "" : "not ");
    }
  return NULL;
}

static gboolean
check_counts_table (MYSQL *conn, const char *description, const char *table,
                    const KtCountsShape *shape, gboolean per_topic,
                    GError **error)
{
  g_autoptr(GArray) want = count_columns (shape, per_topic);
  g_autoptr(MYSQL_RES) res = NULL;
  gboolean ok = TRUE;
  MYSQL_ROW row;

  res = select_columns (conn, description, "c.column_name, c.data_type, c.column_key, "
                        "c.character_maximum_length, c.numeric_precision, c.numeric_scale",
                        table, error);
  if (res == NULL)
    {
      count_columns_clear (want);
      return FALSE;
    }
  if (mysql_num_rows (res) == 0)
    {
      count_columns_clear (want);
      return TRUE;
    }
  /* The table's own columns: a key column no shape column is, or a sum
   * the shape lacks, means rows of other fields. */
  while (ok && (row = mysql_fetch_row (res)) != NULL)
    {
      const CountColumn *c = find_count_column (want, row[0]);
      gboolean key = g_strcmp0 (row[2], "PRI") == 0;

      if (c == NULL && key)
        ok = shape_error (error, description, table, row[0],
                          "is in its primary key, and this job's --by does not list it", TRUE);
      else if (c == NULL && g_ascii_strncasecmp (row[0], "sum_", 4) == 0)
        ok = shape_error (error, description, table, row[0],
                          "is a sum, and this job's --sum does not list it", TRUE);
    }
  for (guint i = 0; ok && i < want->len; i++)
    {
      const CountColumn *c = &g_array_index (want, CountColumn, i);
      g_autofree char *why = NULL;
      gboolean found = FALSE, keys = FALSE;

      mysql_data_seek (res, 0);
      while ((row = mysql_fetch_row (res)) != NULL && !found)
        if (g_ascii_strcasecmp (row[0], c->name) == 0)
          {
            found = TRUE;
            why = column_difference (row, c, &keys);
          }
      if (!found)
        why = g_strdup ("is missing");
      /* A key column missing or out of the key: rows of other fields. A
       * type of its own: whoever made the table did not mean ktally's. */
      if (why != NULL)
        ok = shape_error (error, description, table, c->name, why, c->shaped && (!found || keys));
    }
  count_columns_clear (want);
  return ok;
}

gboolean
kt_schema_check_counts_table (KtDb *db, const char *table, const KtCountsShape *shape,
                              gboolean per_topic, GError **error)
{
  GError *local = NULL;

  return kt_db_connect (db, error)
         && (check_counts_table (kt_db_connection (db), kt_db_name (db),
                                table, shape, per_topic, &local)
             || kt_db_failed (db, local, error));
}

static gboolean
check_counts_view (MYSQL *conn, const char *description, const char *view,
                   const KtCountsShape *shape, GError **error)
{
  g_autoptr(GString) sql = g_string_new (
    "SELECT c.column_name FROM information_schema.columns c "
    "JOIN information_schema.tables t ON t.table_schema = DATABASE() AND t.table_name = ");
  g_autoptr(GArray) want = count_columns (shape, FALSE);
  g_autoptr(MYSQL_RES) res = NULL;
  gboolean ok = TRUE;
  MYSQL_ROW row;
  guint found = 0;

  /* Constants on both sides (see check_columns). */
  kt_db_append_quoted (conn, sql, view);
  g_string_append (sql, " WHERE t.table_type = 'VIEW' AND c.table_schema = DATABASE() "
                        "AND c.table_name = ");
  kt_db_append_quoted (conn, sql, view);
  res = kt_db_select (conn, description, sql->str, "cannot read the tables' columns", error);
  while (ok && res != NULL && (row = mysql_fetch_row (res)) != NULL)
    {
      if (find_count_column (want, row[0]) != NULL)
        found++;
      else
        ok = shape_error (error, description, view, row[0],
                          "is a column of this view that this job's --by and --sum do not "
                          "give", TRUE);
    }
  if (ok && res != NULL && mysql_num_rows (res) > 0 && found < want->len)
    for (guint i = 0; ok && i < want->len; i++)
      {
        const char *name = g_array_index (want, CountColumn, i).name;
        gboolean there = FALSE;

        mysql_data_seek (res, 0);
        while ((row = mysql_fetch_row (res)) != NULL)
          there |= g_ascii_strcasecmp (row[0], name) == 0;
        if (!there)
          ok = shape_error (error, description, view, name, "is missing", TRUE);
      }
  count_columns_clear (want);
  return res != NULL && ok;
}

gboolean
kt_schema_check_counts_view (KtDb *db, const char *view, const KtCountsShape *shape,
                             GError **error)
{
  GError *local = NULL;

  return kt_db_connect (db, error)
         && (check_counts_view (kt_db_connection (db), kt_db_name (db),
                               view, shape, &local)
             || kt_db_failed (db, local, error));
}

/* "name TYPE NOT NULL[ DEFAULT 0],\n" of each column of @shape. */
static void
append_column_defs (GString *sql, GArray *columns)
{
  for (guint i = 0; i < columns->len; i++)
    {
      const CountColumn *c = &g_array_index (columns, CountColumn, i);
      const char *tail = "";

      /* A job's name may be UTF-8, a topic's is ASCII (Kafka's rule). */
      if (g_str_equal (c->type, "varchar"))
        tail = g_str_equal (c->name, "job") ? " CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"
                                            : " CHARACTER SET ascii COLLATE ascii_bin";
      g_string_append_printf (sql, "  `%s` %s%s NOT NULL%s,\n", c->name, c->sql, tail,
                              g_str_equal (c->type, "decimal") ? " DEFAULT 0" : "");
    }
}

static void
append_key (GString *sql, GArray *columns)
{
  gboolean first = TRUE;

  g_string_append (sql, "  PRIMARY KEY (");
  for (guint i = 0; i < columns->len; i++)
    if (g_array_index (columns, CountColumn, i).key)
      {
        g_string_append_printf (sql, "%s`%s`", first ? "" : ", ",
                                g_array_index (columns, CountColumn, i).name);
        first = FALSE;
      }
  g_string_append (sql, ")");
}

static gboolean
plain_shape (const KtCountsShape *shape)
{
  return shape->dimensions == NULL && shape->sums == NULL;
}

static gboolean
create_counts_table (MYSQL *conn, const char *description, const char *table,
                     const KtCountsShape *shape, GError **error)
{
  g_autoptr(GString) sql = g_string_new (NULL);
  g_autoptr(GArray) columns = NULL;
  gboolean ok;

  g_return_val_if_fail (kt_is_identifier (table), FALSE);
  /* The name is a table name the CLI checked (names.h), and the fields
   * are identifiers too: quoting them is enough. */
  if (plain_shape (shape))
    {
      /* Exactly error_log's columns and types (sql/counts.sql). */
      g_string_printf (sql, "CREATE TABLE IF NOT EXISTS `%s` (log_time DATETIME PRIMARY KEY, "
                       "log_count BIGINT NOT NULL DEFAULT 0) ENGINE = InnoDB", table);
      return kt_db_exec (conn, description, sql->str, "cannot create the table", error);
    }
  columns = count_columns (shape, FALSE);
  g_string_printf (sql, "CREATE TABLE IF NOT EXISTS `%s` (\n", table);
  append_column_defs (sql, columns);
  append_key (sql, columns);
  g_string_append (sql, "\n) ENGINE = InnoDB");
  /* log_count has its default, as in error_log. */
  {
    char *at = strstr (sql->str, "`log_count` BIGINT NOT NULL");
    g_string_insert (sql, at - sql->str + strlen ("`log_count` BIGINT NOT NULL"), " DEFAULT 0");
  }
  ok = kt_db_exec (conn, description, sql->str, "cannot create the table", error);
  count_columns_clear (columns);
  return ok;
}

gboolean
kt_schema_create_counts_table (KtDb *db, const char *table, const KtCountsShape *shape,
                               GError **error)
{
  GError *local = NULL;

  return kt_db_connect (db, error)
         && (create_counts_table (kt_db_connection (db), kt_db_name (db),
                                 table, shape, &local)
             || kt_db_failed (db, local, error));
}

/* sql/dead-letters.sql's table is named this there. */
#define DEAD_LETTERS_NAME "dead_letters"

static gboolean
create_dead_letters (MYSQL *conn, const char *description, const char *table,
                     GError **error)
{
  static const char create[] = "CREATE TABLE IF NOT EXISTS " DEAD_LETTERS_NAME " (";
  g_autoptr(GPtrArray) statements = kt_schema_statements (kt_dead_letters_sql);
  g_autoptr(GString) sql = NULL;

  g_return_val_if_fail (kt_is_identifier (table), FALSE);
  for (guint i = 0; i < statements->len; i++)
    if (g_str_has_prefix (statements->pdata[i], create))
      {
        sql = g_string_new (statements->pdata[i]);
        g_string_erase (sql, 0, strlen (create));
        g_string_prepend (sql, "` (");
        g_string_prepend (sql, table);
        g_string_prepend (sql, "CREATE TABLE IF NOT EXISTS `");
      }
  g_return_val_if_fail (sql != NULL, FALSE);
  return kt_db_exec (conn, description, sql->str, "cannot create the dead-letter table", error);
}

gboolean
kt_schema_create_dead_letters (KtDb *db, const char *table, GError **error)
{
  GError *local = NULL;

  return kt_db_connect (db, error)
         && (create_dead_letters (kt_db_connection (db), kt_db_name (db), table, &local)
             || kt_db_failed (db, local, error));
}

static gboolean
check_dead_letters (MYSQL *conn, const char *description, const char *table,
                    GError **error)
{
  g_autoptr(GHashTable) declared = declared_tables (kt_dead_letters_sql);
  GPtrArray *columns = g_hash_table_lookup (declared, DEAD_LETTERS_NAME);

  g_return_val_if_fail (columns != NULL, FALSE);
  return check_object (conn, description, table, NULL, "a dead-letter table is a "
                       "table ktally writes rows to; give another --dead-letters", error)
         && check_columns (conn, description, table, columns, "--dead-letters", error);
}

gboolean
kt_schema_check_dead_letters (KtDb *db, const char *table, GError **error)
{
  GError *local = NULL;

  return kt_db_connect (db, error)
         && (check_dead_letters (kt_db_connection (db), kt_db_name (db), table, &local)
             || kt_db_failed (db, local, error));
}

static gboolean
create_counts_topics (MYSQL *conn, const char *description, const char *view,
                      const KtCountsShape *shape, GError **error)
{
  g_autoptr(GString) sql = g_string_new (NULL);
  g_autoptr(GArray) columns = count_columns (shape, TRUE);
  g_autofree char *table = g_strconcat (view, KT_TOPIC_SUFFIX, NULL);
  gboolean ok;

  g_return_val_if_fail (kt_is_identifier (table), FALSE);
  g_string_printf (sql, "CREATE TABLE IF NOT EXISTS `%s` (\n", table);
  append_column_defs (sql, columns);
  append_key (sql, columns);
  g_string_append (sql, ",\n  KEY by_time (log_time)\n) ENGINE = InnoDB");
  ok = kt_db_exec (conn, description, sql->str, "cannot create the table", error);

  /* The sums exactly as added up; the counts as a signed integer, as in
   * sql/idempotent.sql's error_log. */
  g_string_printf (sql, "CREATE VIEW IF NOT EXISTS `%s` AS SELECT log_time", view);
  for (const char *const *d = shape->dimensions; d != NULL && *d != NULL; d++)
    g_string_append_printf (sql, ", `%s`", *d);
  g_string_append (sql, ", CAST(SUM(log_count) AS SIGNED) AS log_count");
  for (const char *const *m = shape->sums; m != NULL && *m != NULL; m++)
    g_string_append_printf (sql, ", SUM(`sum_%s`) AS `sum_%s`", *m, *m);
  g_string_append_printf (sql, " FROM `%s` GROUP BY log_time", table);
  for (const char *const *d = shape->dimensions; d != NULL && *d != NULL; d++)
    g_string_append_printf (sql, ", `%s`", *d);
  ok = ok && kt_db_exec (conn, description, sql->str, "cannot create the view", error);
  count_columns_clear (columns);
  return ok;
}

gboolean
kt_schema_create_counts_topics (KtDb *db, const char *view, const KtCountsShape *shape,
                                GError **error)
{
  GError *local = NULL;

  return kt_db_connect (db, error)
         && (create_counts_topics (kt_db_connection (db), kt_db_name (db),
                                  view, shape, &local)
             || kt_db_failed (db, local, error));
}

GHashTable *
kt_schema_tables (MYSQL *conn, const char *description, GError **error)
{
  g_autoptr(GHashTable) tables = g_hash_table_new_full (g_str_hash, g_str_equal,
                                                        g_free, g_free);
  g_autoptr(MYSQL_RES) res = kt_db_select (
    conn, description, "SELECT table_name, table_type FROM information_schema.tables "
                       "WHERE table_schema = DATABASE()", "cannot look for the tables", error);
  MYSQL_ROW row;

  if (res == NULL)
    return NULL;
  while ((row = mysql_fetch_row (res)) != NULL)
    g_hash_table_insert (tables, g_strdup (row[0]), g_strdup (row[1]));
  return g_steal_pointer (&tables);
}

gboolean
kt_schema_version_of (MYSQL *conn, const char *description, GHashTable *tables, int *version,
                      GError **error)
{
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);

  if (g_hash_table_contains (tables, "ktally_schema"))
    {
      g_autoptr(MYSQL_RES) res = kt_db_select (conn, description,
                                              "SELECT MAX(version) FROM ktally_schema",
                                              "cannot read the schema version", error);
      MYSQL_ROW row;

      if (res == NULL)
        return FALSE;
      row = mysql_fetch_row (res);
      /* Empty: cut short between creating ktally_schema and its first row;
       * the other tables tell which version it was. */
      if (row != NULL && row[0] != NULL)
        {
          *version = atoi (row[0]);
          return TRUE;
        }
    }
  /* No version kept: version 1 if it holds a table only ktally creates.
   * Not error_log or account_balance alone: names another program may use
   * too, whose table must be refused for its shape, never migrated. */
  created_names (kt_common_sql, names);
  created_names (kt_counts_sql, names);
  created_names (kt_idempotent_sql, names);
  created_names (kt_ledger_sql, names);
  *version = 0;
  for (guint i = 0; i < names->len; i++)
    if (g_hash_table_contains (tables, names->pdata[i])
        && !g_str_equal (names->pdata[i], "error_log")
        && !g_str_equal (names->pdata[i], "account_balance"))
      *version = 1;
  return TRUE;
}

gboolean
kt_schema_version (MYSQL *conn, const char *description, int *version, GError **error)
{
  g_autoptr(GHashTable) tables = kt_schema_tables (conn, description, error);

  return tables != NULL && kt_schema_version_of (conn, description, tables, version, error);
}

gboolean
kt_schema_check_read_only (MYSQL *conn, const char *description, GError **error)
{
  int version;

  if (!kt_schema_version (conn, description, &version, error))
    return FALSE;
  if (version > KT_SCHEMA_VERSION)
    {
      kt_db_check_newer_error (error, description, version);
      return FALSE;
    }
  if (version > 0 && version < KT_SCHEMA_READABLE)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "%s: schema version %d is older than this ktally reads (%d): "
                   "run `ktally init-db` to migrate it", description, version,
                   KT_SCHEMA_READABLE);
      return FALSE;
    }
  if (version > 0 && version < KT_SCHEMA_VERSION)
    {
      g_autoptr(KtLogEvent) e = kt_log_event_new ("schema-older");

      kt_log_event_int (e, "version", version);
      kt_log_event_int (e, "latest", KT_SCHEMA_VERSION);
      kt_log_event_emit (e, G_LOG_LEVEL_MESSAGE, "%s: schema version %d is older than this "
                         "ktally's (%d): read as it is, not migrated; `ktally init-db` or the "
                         "next `ktally run` brings it forward", description, version,
                         KT_SCHEMA_VERSION);
    }
  return TRUE;
}

char *
kt_schema_member (const char *member)
{
  GString *out = g_string_sized_new (MIN (strlen (member), KT_MEMBER_CHARS));

  for (const char *p = member; *p != '\0' && out->len < KT_MEMBER_CHARS; p++)
    g_string_append_c (out, (guchar) *p >= 0x20 && (guchar) *p < 0x7f ? *p : '?');
  return g_string_free (out, FALSE);
}

/* ---- KtDb ---------------------------------------------------------------- */

gboolean
kt_schema_connect_version (KtDb *db, int *version, GError **error)
{
  GError *local = NULL;

  if (!kt_db_connect (db, error))
    return FALSE;
  if (!check_own_objects (kt_db_connection (db), kt_db_name (db), &local)
      || !kt_schema_version (kt_db_connection (db), kt_db_name (db), version, &local))
    return kt_db_failed (db, local, error);
  return TRUE;
}

gboolean
kt_schema_check_ready (KtDb *db, GError **error)
{
  GError *local = NULL;
  int version;

  if (!kt_schema_connect_version (db, &version, error))
    return FALSE;
  if (version > KT_SCHEMA_VERSION)
    {
      kt_db_check_newer_error (error, kt_db_name (db), version);
      return FALSE;
    }
  /* An older schema is migrated first: the latest shapes are not its. */
  if (version == KT_SCHEMA_VERSION
      && !kt_schema_check_shape (kt_db_connection (db), kt_db_name (db), KT_TABLES_COMMON,
                                 &local))
    return kt_db_failed (db, local, error);
  return TRUE;
}

gboolean
kt_schema_prepare (KtDb *db, KtTables tables, const char *what, GError **error)
{
  return kt_schema_prepare_except (db, tables, what, NULL, error);
}

gboolean
kt_schema_prepare_except (KtDb *db, KtTables tables, const char *what,
                          const char *const *except, GError **error)
{
  GError *local = NULL;
  gboolean complete;

  if (!kt_db_connect (db, error))
    return FALSE;
  /* Whoever created them: a table of another shape is refused before
   * anything is created or a batch read, not after (exit 3), nor written
   * wrong (DATE minutes). Absent ones pass, and are created next. */
  if (!check_shape_except (kt_db_connection (db), kt_db_name (db), tables, except, &local)
      || !complete_except (kt_db_connection (db), kt_db_name (db), tables, except, &complete,
                           &local))
    return kt_db_failed (db, local, error);
  if (complete)
    return TRUE;
  if (what != NULL)
    g_message ("creating ktally's %s tables in %s", what, kt_db_name (db));
  if (!(except != NULL
        ? create_except (kt_db_connection (db), kt_db_name (db), tables, except, &local)
        : kt_schema_create (kt_db_connection (db), kt_db_name (db), tables, &local)))
    return kt_db_failed (db, local, error);
  return TRUE;
}

gboolean
kt_schema_readable (KtDb *db, GError **error)
{
  GError *local = NULL;

  if (!kt_db_connect (db, error))
    return FALSE;
  if (!kt_schema_check_read_only (kt_db_connection (db), kt_db_name (db), &local))
    return kt_db_failed (db, local, error);
  return TRUE;
}

gboolean
kt_schema_identity_create (MYSQL *conn, const char *description, GError **error)
{
  /* Drawn here, a literal in the statement: the server's UUID() would be
   * drawn again by a replica that applies statements. */
  g_autofree char *id = g_uuid_string_random ();
  g_autofree char *sql = g_strdup_printf (
    "INSERT IGNORE INTO ktally_database (one, id) VALUES (1, '%s')", id);

  return kt_db_exec (conn, description, sql, "cannot record the database's identity", error);
}

