/* test-schema.c - what schema.c decides without a database: the committer
 * name that ktally_batches.member holds (the longest job and host names
 * must fit, anything longer is cut, never an error) and how an embedded
 * .sql file splits into statements. The migrations' own forms are
 * test-migrations'. */
#include <string.h>
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
  return g_test_run ();
}
