/* test-schema.c - what schema.c decides without a database: the committer
 * name that ktally_batches.member holds (the longest job and host names
 * must fit, anything longer is cut, never an error), how an embedded
 * .sql file splits into statements, which table a view reads, which
 * names are ktally's own tables, and which tables a migration's statement
 * touches (init-db --dry-run). The migrations' own forms are
 * test-migrations'. */
#include <string.h>
#include "migrations.h"
#include "schema.h"

static void
test_member_fits (void)
{
  /* The longest member ktally makes: a 64-character job, the largest pid
   * (pid_max is at most 2^22) and a 255-character host name (DNS allows
   * 253; Kubernetes pod names are up to 63). It must be kept whole. */
  g_autofree char *job = g_strnfill (64, 'j');
  g_autofree char *host = g_strnfill (255, 'h');
  g_autofree char *member = g_strdup_printf ("%s-%d@%s", job, 4194304, host);
  g_autofree char *kept = kt_schema_member (member);

  g_assert_cmpuint (strlen (member), <=, KT_MEMBER_CHARS);
  g_assert_cmpstr (kept, ==, member);
}

static void
test_member_cut (void)
{
  g_autofree char *host = g_strnfill (1000, 'h');
  g_autofree char *member = g_strdup_printf ("job-42@%s", host);
  g_autofree char *kept = kt_schema_member (member);

  g_assert_cmpuint (strlen (kept), ==, KT_MEMBER_CHARS);
  g_assert_true (strncmp (kept, member, KT_MEMBER_CHARS) == 0);
}

static void
test_member_ascii (void)
{
  /* A host name is bytes: whatever they are, the member is printable
   * ASCII, which any column charset stores as it is. */
  g_autofree char *kept = kt_schema_member ("job-1@h\xc3\xb3st\x01\x7f\xff");

  g_assert_cmpstr (kept, ==, "job-1@h??st???");
}

/* The code's idea of the column's size is the schema's, in both modes. */
static void
test_member_column (void)
{
  static const char *const files[] = { "common.sql" };
  g_autofree char *want = g_strdup_printf ("member          VARCHAR(%d) ", KT_MEMBER_CHARS);

  for (gsize i = 0; i < G_N_ELEMENTS (files); i++)
    {
      g_autofree char *path = g_test_build_filename (G_TEST_DIST, "..", "sql", files[i], NULL);
      g_autofree char *text = NULL;
      g_autoptr(GError) error = NULL;

      g_file_get_contents (path, &text, NULL, &error);
      g_assert_no_error (error);
      g_assert_nonnull (strstr (text, want));
    }
}

typedef struct
{
  const char *path;
  const char *text;
  const char *want[4];
} StatementsCase;

static const StatementsCase statements_cases[] = {
  { "/schema/statements/comments",
    "-- a comment; with a semicolon\nCREATE TABLE a (x INT);\n\n-- another\nCREATE TABLE b (y INT);\n",
    { "CREATE TABLE a (x INT)", "CREATE TABLE b (y INT)" } },
  { "/schema/statements/multi-line",
    "ALTER TABLE IF EXISTS t\n  MODIFY a INT,\n  MODIFY b INT;\n",
    { "ALTER TABLE IF EXISTS t\nMODIFY a INT,\nMODIFY b INT" } },  /* lines stripped */
  { "/schema/statements/no-final-newline", "UPDATE t SET a = 1;",
    { "UPDATE t SET a = 1" } },
  { "/schema/statements/only-comments", "-- nothing\n\n-- at all\n", { NULL } },
  { "/schema/statements/directive-kept",
    "-- why\n-- ktally: if a b:view\nDROP TABLE IF EXISTS c;\n",
    { "-- ktally: if a b:view\nDROP TABLE IF EXISTS c" } },
};

static void
test_statements (gconstpointer data)
{
  const StatementsCase *c = data;
  g_autoptr(GPtrArray) got = kt_schema_statements (c->text);
  guint n = 0;

  while (n < G_N_ELEMENTS (c->want) && c->want[n] != NULL)
    n++;
  g_assert_cmpuint (got->len, ==, n);
  for (guint i = 0; i < n; i++)
    g_assert_cmpstr (got->pdata[i], ==, c->want[i]);
}

/* What a view reads, as MariaDB 10.11 writes its definition in
 * information_schema.views: ktally's own view reads NAME_topic alone. */
typedef struct
{
  const char *path, *definition, *db, *reads;
} ViewCase;

static const ViewCase view_cases[] = {
  { "/schema/view-reads/ours",
    "select `d`.`t_topic`.`log_time` AS `log_time`,cast(sum(`d`.`t_topic`.`log_count`) as "
    "signed) AS `log_count` from `d`.`t_topic` group by `d`.`t_topic`.`log_time`", "d",
    "t_topic" },
  { "/schema/view-reads/over-a-view",
    "select `error_log_topic`.`log_time` AS `log_time`,cast(sum(`error_log_topic`.`log_count`) "
    "as signed) AS `log_count` from `d`.`error_log_topic` group by `error_log_topic`.`log_time`",
    "d", "error_log_topic" },
  { "/schema/view-reads/another-database",
    "select `e`.`t`.`a` AS `a` from `e`.`t`", "d", "e.t" },
  { "/schema/view-reads/where",
    "select `d`.`t`.`a` AS `a` from `d`.`t` where `d`.`t`.`a` > 1", "d", "t" },
  { "/schema/view-reads/quoted-database",
    "select `d``x`.`t`.`a` AS `a` from `d``x`.`t`", "d`x", "t" },
  { "/schema/view-reads/nothing", "select 1 AS `x`", "d", NULL },
  { "/schema/view-reads/join",
    "select `d`.`t`.`a` AS `a` from (`d`.`t` join `d`.`u`)", "d", NULL },
  { "/schema/view-reads/subquery",
    "select `x`.`a` AS `a` from (select `d`.`t`.`a` AS `a` from `d`.`t`) `x`", "d", NULL },
  { "/schema/view-reads/column-named-from",
    "select `d`.`t`.`from` AS `from` from `d`.`t`", "d", "t" },
};

static void
test_view_reads (gconstpointer data)
{
  const ViewCase *c = data;
  g_autofree char *reads = kt_schema_view_reads (c->definition, c->db);

  g_assert_cmpstr (reads, ==, c->reads);
}

/* ktally's own tables are no count table's, error_log is the default one. */
static void
test_own_tables (void)
{
  static const char *const own[] = { "kafka_offset", "ktally_batches", "ktally_job",
                                     "ktally_table", "ktally_forgotten", "ktally_coverage",
                                     "error_log_topic", "account_balance", "ledger_applied",
                                     "ledger_rejected", "ktally_schema" };
  static const char *const not_own[] = { "error_log", "error_log_replay", "ktally", "hand",
                                         "foo_topic", "Kafka_offset" };

  for (gsize i = 0; i < G_N_ELEMENTS (own); i++)
    g_assert_true (kt_schema_own_table (own[i]));
  for (gsize i = 0; i < G_N_ELEMENTS (not_own); i++)
    g_assert_false (kt_schema_own_table (not_own[i]));
}

/* What a migration's statement does to which table, for init-db
 * --dry-run: one case per form the migrations use, and what must not
 * count (a string, a subquery, another database, ON DUPLICATE KEY UPDATE). */
typedef struct
{
  const char *path;
  const char *sql;
  const char *uses;  /* "does\ttable" joined by '|' */
} UsesCase;

static const UsesCase uses_cases[] = {
  { "/schema/uses/alter", "ALTER TABLE IF EXISTS kafka_offset\n  MODIFY job VARCHAR(64)",
    "alter\tkafka_offset" },
  { "/schema/uses/create", "CREATE TABLE IF NOT EXISTS `ktally_job` (job VARCHAR(64))",
    "create\tktally_job" },
  { "/schema/uses/view", "-- ktally: if error_log_chunk error_log:view\nCREATE OR REPLACE VIEW "
    "error_log AS SELECT log_time FROM error_log_partition GROUP BY log_time",
    "create view\terror_log|read\terror_log_partition" },
  { "/schema/uses/copy", "INSERT INTO error_log_topic (job) SELECT job FROM "
    "error_log_partition p JOIN ktally_coverage c ON c.job = p.job ON DUPLICATE KEY UPDATE "
    "log_count = VALUES(log_count)",
    "insert\terror_log_topic|read\terror_log_partition|read\tktally_coverage" },
  { "/schema/uses/insert-ignore", "INSERT IGNORE INTO ktally_job SELECT 'a FROM b', x FROM "
    "(SELECT job AS x FROM ktally_batches) AS t", "insert\tktally_job|read\tktally_batches" },
  { "/schema/uses/update", "UPDATE ktally_batches SET committed_at = CONVERT_TZ(committed_at, "
    "@@global.time_zone, '+00:00')", "update\tktally_batches" },
  { "/schema/uses/drop", "DROP TABLE IF EXISTS ktally_chunk", "drop\tktally_chunk" },
  { "/schema/uses/delete", "DELETE FROM ktally_schema WHERE version = 0", "delete\tktally_schema" },
  { "/schema/uses/other-db", "INSERT INTO t SELECT * FROM information_schema.tables",
    "insert\tt" },
  { "/schema/uses/none", "SET SESSION group_concat_max_len = 16777215", "" },
};

static void
test_statement_uses (gconstpointer data)
{
  const UsesCase *c = data;
  g_autoptr(GPtrArray) uses = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *joined = NULL;

  kt_migrations_statement_uses (c->sql, uses);
  g_ptr_array_add (uses, NULL);
  joined = g_strjoinv ("|", (char **) uses->pdata);
  g_assert_cmpstr (joined, ==, c->uses);
}

/* Every migration's statements name only tables the dry run can size:
 * none is left out for a form the parser does not know (each statement
 * but SET names one). */
static void
test_migrations_uses (void)
{
  for (guint i = 0; kt_migrations_get (i) != NULL; i++)
    {
      g_autoptr(GPtrArray) statements = kt_schema_statements (kt_migrations_get (i)->sql);

      for (guint j = 0; j < statements->len; j++)
        {
          g_autoptr(GPtrArray) uses = g_ptr_array_new_with_free_func (g_free);
          const char *sql = statements->pdata[j];

          kt_migrations_statement_uses (sql, uses);
          if (strstr (sql, "SET SESSION") == NULL && uses->len == 0)
            g_error ("migration %d: no table found in:\n%s", kt_migrations_get (i)->version,
                     sql);
        }
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/schema/member/longest-fits", test_member_fits);
  g_test_add_func ("/schema/member/cut-to-column", test_member_cut);
  g_test_add_func ("/schema/member/ascii", test_member_ascii);
  g_test_add_func ("/schema/member/column-size", test_member_column);
  for (gsize i = 0; i < G_N_ELEMENTS (statements_cases); i++)
    g_test_add_data_func (statements_cases[i].path, &statements_cases[i], test_statements);
  for (gsize i = 0; i < G_N_ELEMENTS (view_cases); i++)
    g_test_add_data_func (view_cases[i].path, &view_cases[i], test_view_reads);
  g_test_add_func ("/schema/own-tables", test_own_tables);
  for (gsize i = 0; i < G_N_ELEMENTS (uses_cases); i++)
    g_test_add_data_func (uses_cases[i].path, &uses_cases[i], test_statement_uses);
  g_test_add_func ("/schema/uses/every-migration", test_migrations_uses);
  return g_test_run ();
}
