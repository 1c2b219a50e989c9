/* test-migrations.c - what migrations.c decides without a database: that
 * every migration is written in the restart-safe forms it relies on, and
 * which statements of a migration run in a database holding which tables
 * (the "-- ktally: if" lines). The migrations themselves run against
 * MariaDB in tests/integration/14x. */
#include <string.h>
#include "migrations.h"

/* A statement without its "-- ktally: if ..." line. */
static const char *
without_directive (const char *st)
{
  if (g_str_has_prefix (st, "-- ktally: if "))
    {
      st = strchr (st, '\n');
      g_assert_nonnull (st);
      st++;
    }
  return st;
}

/* Whether every assignment after ON DUPLICATE KEY UPDATE is "c = VALUES(c)":
 * the INSERT sets rows, so running it twice is running it once. */
static gboolean
sets_rows (const char *st)
{
  const char *update = strstr (st, "ON DUPLICATE KEY UPDATE ");
  g_auto(GStrv) parts = NULL;

  if (update == NULL)
    return FALSE;
  parts = g_strsplit (update + strlen ("ON DUPLICATE KEY UPDATE "), ",", -1);
  for (char **p = parts; *p != NULL; p++)
    {
      g_auto(GStrv) sides = g_strsplit (g_strstrip (*p), " = ", 2);
      g_autofree char *want = NULL;

      if (g_strv_length (sides) != 2)
        return FALSE;
      want = g_strdup_printf ("VALUES(%s)", sides[0]);
      if (!g_str_equal (g_strstrip (sides[1]), want))
        return FALSE;
    }
  return TRUE;
}

/* Every migration, in order, ends at KT_SCHEMA_VERSION, and says only
 * what is safe after a kill -9 (src/store/migrations.c): before the version
 * transaction, statements that set a state (ALTER TABLE IF EXISTS ...
 * MODIFY, CREATE ... IF NOT EXISTS, CREATE OR REPLACE VIEW, DROP ... IF
 * EXISTS, SET SESSION, INSERT that sets rows); in it, UPDATEs. */
static void
test_migrations (void)
{
  int version = 1;
  guint i;

  for (i = 0; kt_migrations_get (i) != NULL; i++)
    {
      const KtMigration *m = kt_migrations_get (i);
      const char *mark = strstr (m->sql, "\n-- ktally: in the version transaction\n");
      g_autofree char *ddl = NULL;
      g_autoptr(GPtrArray) before = NULL, after = NULL;
      g_auto(GStrv) lines = g_strsplit (m->sql, "\n", -1);

      g_assert_cmpint (m->version, ==, ++version);
      g_assert_nonnull (m->name);
      g_assert_nonnull (mark);
      /* Statements end with ';' at the end of a line: so must no comment. */
      for (char **l = lines; *l != NULL; l++)
        if (g_str_has_prefix (*l, "--"))
          g_assert_false (g_str_has_suffix (*l, ";"));
      ddl = g_strndup (m->sql, mark - m->sql);
      before = kt_schema_statements (ddl);
      after = kt_schema_statements (mark + 1);
      g_assert_cmpuint (before->len, >, 0);
      for (guint s = 0; s < before->len; s++)
        {
          const char *st = without_directive (before->pdata[s]);

          if (g_str_has_prefix (st, "ALTER TABLE IF EXISTS "))
            {
              /* MODIFY, ADD ... IF NOT EXISTS, DROP ... IF EXISTS: never a
               * rename, which cannot run twice. */
              if (strstr (st, " ADD ") != NULL)
                g_assert_nonnull (strstr (st, "IF NOT EXISTS"));
              if (strstr (st, " DROP ") != NULL)
                g_assert_nonnull (strstr (st, "IF EXISTS"));
              g_assert_null (strstr (st, " CHANGE "));
              g_assert_null (strstr (st, " RENAME "));
            }
          else if (g_str_has_prefix (st, "INSERT INTO "))
            g_assert_true (sets_rows (st));
          else
            g_assert_true (g_str_has_prefix (st, "CREATE TABLE IF NOT EXISTS ")
                           || g_str_has_prefix (st, "CREATE OR REPLACE VIEW ")
                           || g_str_has_prefix (st, "DROP TABLE IF EXISTS ")
                           || g_str_has_prefix (st, "SET SESSION "));
        }
      /* In the version transaction: rows rewritten or added once. */
      for (guint s = 0; s < after->len; s++)
        g_assert_true (g_str_has_prefix (without_directive (after->pdata[s]), "UPDATE ")
                       || g_str_has_prefix (without_directive (after->pdata[s]),
                                            "INSERT IGNORE INTO "));
    }
  g_assert_cmpuint (i, ==, KT_SCHEMA_VERSION - 1);
  g_assert_cmpint (version, ==, KT_SCHEMA_VERSION);
  g_assert_cmpint (KT_SCHEMA_READABLE, >=, 1);
  g_assert_cmpint (KT_SCHEMA_READABLE, <=, KT_SCHEMA_VERSION);
}

typedef struct
{
  const char *statement;
  gboolean    applies;
  const char *sql;  /* what runs */
} DirectiveCase;

/* The tables of a database that used idempotent mode once: error_log is
 * a view there, error_log_topic a table. */
static const DirectiveCase directive_cases[] = {
  { "UPDATE t SET a = 1", TRUE, "UPDATE t SET a = 1" },
  { "-- ktally: if kafka_offset\nUPDATE t SET a = 1", TRUE, "UPDATE t SET a = 1" },
  { "-- ktally: if ledger_applied\nDROP TABLE IF EXISTS x", FALSE, "DROP TABLE IF EXISTS x" },
  { "-- ktally: if kafka_offset error_log_topic\nSELECT 1", TRUE, "SELECT 1" },
  { "-- ktally: if kafka_offset ledger_applied\nSELECT 1", FALSE, "SELECT 1" },
  { "-- ktally: if error_log:view\nSELECT 1", TRUE, "SELECT 1" },
  { "-- ktally: if error_log:table\nSELECT 1", FALSE, "SELECT 1" },
  { "-- ktally: if error_log_topic:TABLE\nSELECT 1", TRUE, "SELECT 1" },
  { "-- ktally: if error_log_topic:view\nSELECT 1", FALSE, "SELECT 1" },
  { "-- ktally: if  kafka_offset  \nSELECT 1", TRUE, "SELECT 1" },
  { "-- ktally: if Kafka_Offset\nSELECT 1", FALSE, "SELECT 1" },
  { "-- ktally: if \nSELECT 1", TRUE, "SELECT 1" },
};

static void
test_directives (void)
{
  g_autoptr(GHashTable) tables = g_hash_table_new (g_str_hash, g_str_equal);

  g_hash_table_insert (tables, "kafka_offset", "BASE TABLE");
  g_hash_table_insert (tables, "error_log", "VIEW");
  g_hash_table_insert (tables, "error_log_topic", "BASE TABLE");
  for (guint i = 0; i < G_N_ELEMENTS (directive_cases); i++)
    {
      const DirectiveCase *c = &directive_cases[i];
      const char *sql = NULL;

      g_test_message ("%s", c->statement);
      g_assert_cmpint (kt_migrations_statement_applies (c->statement, tables, &sql), ==,
                       c->applies);
      g_assert_cmpstr (sql, ==, c->sql);
    }
  /* No tables known: only a statement without a directive runs. */
  {
    const char *sql = NULL;

    g_assert_true (kt_migrations_statement_applies ("SELECT 1", NULL, &sql));
    g_assert_false (kt_migrations_statement_applies ("-- ktally: if kafka_offset\nSELECT 1",
                                                     NULL, &sql));
  }
}

/* Every directive in a migration names tables the same way the code reads
 * them: NAME, NAME:view or NAME:table, with a statement after it. */
static void
test_directives_in_migrations (void)
{
  guint seen = 0;

  for (guint i = 0; kt_migrations_get (i) != NULL; i++)
    {
      g_autoptr(GPtrArray) statements = kt_schema_statements (kt_migrations_get (i)->sql);

      for (guint s = 0; s < statements->len; s++)
        {
          const char *st = statements->pdata[s], *sql = NULL;
          g_autofree char *line = NULL;
          g_auto(GStrv) names = NULL;

          if (!g_str_has_prefix (st, KT_SCHEMA_IF_DIRECTIVE))
            continue;
          seen++;
          line = g_strndup (st + strlen (KT_SCHEMA_IF_DIRECTIVE),
                            strcspn (st + strlen (KT_SCHEMA_IF_DIRECTIVE), "\n"));
          names = g_strsplit (line, " ", -1);
          for (char **n = names; *n != NULL; n++)
            {
              const char *type = strchr (*n, ':');

              g_assert_true (**n != '\0');
              g_assert_true (type == NULL || g_str_equal (type, ":view")
                             || g_str_equal (type, ":table"));
            }
          kt_migrations_statement_applies (st, NULL, &sql);
          g_assert_true (*sql != '\0' && !g_str_has_prefix (sql, "--"));
        }
    }
  g_assert_cmpuint (seen, >, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/migrations/restart-safe-forms", test_migrations);
  g_test_add_func ("/migrations/directives", test_directives);
  g_test_add_func ("/migrations/directives-as-written", test_directives_in_migrations);
  return g_test_run ();
}
