/* test-charts.c - the chart's statements (charts.c) as text, and the
 * identifier quoting they go through (db.c): no server.
 *
 * Covers the exact statements for an ordinary table and field (what the
 * page has always sent), hostile table and field names (backticks,
 * quotes, semicolons, comments: each stays inside one quoted identifier,
 * read back by a small tokenizer), keys of any bytes as hex literals,
 * and the totals without keys. */
#include <string.h>
#include "charts.h"

static char *
identifier (const char *name)
{
  GString *out = g_string_new (NULL);
  kt_db_append_identifier (out, name);
  return g_string_free (out, FALSE);
}

static void
test_identifier (void)
{
  static const struct { const char *name, *quoted; } cases[] = {
    { "error_log", "`error_log`" },
    { "", "``" },
    { "`", "````" },
    { "a`b", "`a``b`" },
    { "x`; DROP TABLE t; -- ", "`x``; DROP TABLE t; -- `" },
    { "'\"\\", "`'\"\\`" },
    { "z\xc3\xa4hler", "`z\xc3\xa4hler`" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *quoted = identifier (cases[i].name);
      g_assert_cmpstr (quoted, ==, cases[i].quoted);
    }
}

/* The statements for an ordinary name, byte for byte what the page sent
 * before its queries moved here. */
static void
test_plain (void)
{
  static const char *const names[] = { "web1", "" };
  g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  g_autofree char *newest = kt_chart_sql_newest ("error_log");
  g_autofree char *top = kt_chart_sql_top ("error_log", "host", 60);
  g_autofree char *totals = kt_chart_sql_points ("error_log", NULL, NULL, 60);
  g_autofree char *no_keys = kt_chart_sql_points ("error_log", "host", keys, 60);
  g_autofree char *by = NULL;

  g_assert_cmpstr (newest, ==, "SELECT TIMESTAMPDIFF(MINUTE, '1970-01-01 00:00:00', "
                               "MAX(log_time)) FROM `error_log`");
  g_assert_cmpstr (top, ==, "SELECT `host`, SUM(log_count) AS n FROM `error_log` WHERE "
                            "log_time > '1970-01-01 01:00:00' GROUP BY `host` ORDER BY n "
                            "DESC, `host` LIMIT 6");
  g_assert_cmpstr (totals, ==, "SELECT TIMESTAMPDIFF(MINUTE, '1970-01-01 00:00:00', log_time), "
                               "0 AS k, SUM(log_count) FROM `error_log` WHERE log_time > "
                               "'1970-01-01 01:00:00' GROUP BY log_time, k ORDER BY log_time, k "
                               "LIMIT 2160");
  /* A field whose keys are all (other): everything is the rest. */
  g_assert_cmpstr (no_keys, ==, "SELECT TIMESTAMPDIFF(MINUTE, '1970-01-01 00:00:00', log_time), "
                                "5 AS k, SUM(log_count) FROM `error_log` WHERE log_time > "
                                "'1970-01-01 01:00:00' GROUP BY log_time, k ORDER BY log_time, k "
                                "LIMIT 2160");
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    g_ptr_array_add (keys, g_bytes_new (names[i], strlen (names[i])));
  by = kt_chart_sql_points ("error_log", "host", keys, 60);
  g_assert_cmpstr (by, ==, "SELECT TIMESTAMPDIFF(MINUTE, '1970-01-01 00:00:00', log_time), "
                           "CASE `host` WHEN X'77656231' THEN 0 WHEN X'' THEN 1 ELSE 5 END AS k, "
                           "SUM(log_count) FROM `error_log` WHERE log_time > "
                           "'1970-01-01 01:00:00' GROUP BY log_time, k ORDER BY log_time, k "
                           "LIMIT 2160");
}

/* Splits @sql into the identifiers it quotes (decoded) and the text
 * around them, where every quoted identifier is replaced by `?`. */
static char *
tokenize (const char *sql, GPtrArray *identifiers)
{
  GString *shape = g_string_new (NULL);

  for (const char *p = sql; *p != '\0'; p++)
    {
      GString *name;

      if (*p != '`')
        {
          g_string_append_c (shape, *p);
          continue;
        }
      name = g_string_new (NULL);
      for (p++; *p != '\0'; p++)
        {
          if (*p == '`' && p[1] == '`')
            g_string_append_c (name, *p++);
          else if (*p == '`')
            break;
          else
            g_string_append_c (name, *p);
        }
      g_assert_cmpint (*p, ==, '`');  /* every identifier is closed */
      g_ptr_array_add (identifiers, g_string_free (name, FALSE));
      g_string_append (shape, "`?`");
    }
  return g_string_free (shape, FALSE);
}

/* Whatever a table or a field is called, each statement has the shape of
 * the ordinary one, and its quoted identifiers read back as the names. */
static void
test_hostile (void)
{
  static const char *const hostile[] = {
    "t`; DROP TABLE kafka_offset; -- ", "``", "a'b\"c", "x` WHERE 1=1 UNION SELECT 1,2,3 #",
    "\\`", "/*", "\xe4\xb8\xad\xe6\x96\x87",
  };
  g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  g_autofree char *plain_newest = kt_chart_sql_newest ("T");
  g_autofree char *plain_top = kt_chart_sql_top ("T", "F", 1000);
  g_autofree char *plain_points = NULL;

  g_ptr_array_add (keys, g_bytes_new ("'; --`\0x", 8));
  plain_points = kt_chart_sql_points ("T", "F", keys, 1000);
  g_assert_nonnull (strstr (plain_points, "WHEN X'273B202D2D600078' THEN 0"));
  for (guint t = 0; t < G_N_ELEMENTS (hostile); t++)
    for (guint f = 0; f < G_N_ELEMENTS (hostile); f++)
      {
        const char *table = hostile[t], *field = hostile[f];
        char *sql[3] = {
          kt_chart_sql_newest (table), kt_chart_sql_top (table, field, 1000),
          kt_chart_sql_points (table, field, keys, 1000),
        };
        const char *plain[3] = { plain_newest, plain_top, plain_points };
        const char *expect[3][5] = {
          { table }, { field, table, field, field }, { field, table },
        };

        for (guint s = 0; s < 3; s++)
          {
            g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
            g_autoptr(GPtrArray) plain_names = g_ptr_array_new_with_free_func (g_free);
            g_autofree char *shape = tokenize (sql[s], names);
            g_autofree char *plain_shape = tokenize (plain[s], plain_names);

            g_assert_cmpstr (shape, ==, plain_shape);
            for (guint i = 0; i < names->len; i++)
              g_assert_cmpstr (names->pdata[i], ==, expect[s][i]);
            g_assert_null (expect[s][names->len]);
          }
        for (guint s = 0; s < 3; s++)
          g_free (sql[s]);
      }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/charts/identifier", test_identifier);
  g_test_add_func ("/charts/plain", test_plain);
  g_test_add_func ("/charts/hostile", test_hostile);
  return g_test_run ();
}
