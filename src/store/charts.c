/* charts.c - the page's chart: its statements and their rows (charts.h).
 *
 * Takes a count table (and a --by field) and hands on points and keys;
 * the page draws them, the server caches them. Never writes, never
 * spells a name into SQL but through kt_db_append_identifier(). */
#include "charts.h"

#include <string.h>
#include "db-mysql.h"
#include "mysql-autocleanups.h"
#include "error.h"
#include "job-spec.h"
#include "minutes.h"
#include "schema.h"

struct _KtChartConnection
{
  MYSQL *mysql;
};

KtChartConnection *
kt_chart_connect (KtDbConfig *db, unsigned int connect_s, unsigned int io_s, GError **error)
{
  /* A replica will do: the chart only reads. Beside the job: the job's
   * connections say which database this process works in. */
  g_autoptr(MYSQL) conn = kt_db_open (db, KT_DB_OPEN_READ_ONLY_OK | KT_DB_OPEN_BESIDE, NULL,
                                      connect_s, io_s, error);
  g_autofree char *limit = NULL;
  KtChartConnection *self;

  if (conn == NULL)
    return NULL;
  /* The server stops the query too, not only our read: MariaDB knows
   * max_statement_time (seconds), MySQL max_execution_time (ms). Neither
   * is required; the read timeout bounds our wait regardless. */
  limit = g_strdup_printf ("SET SESSION max_statement_time = %u", io_s);
  if (mysql_query (conn, limit) != 0)
    {
      g_free (limit);
      limit = g_strdup_printf ("SET SESSION max_execution_time = %u000", io_s);
      if (mysql_query (conn, limit) != 0)
        g_debug ("http: the chart's query runs without a server-side time limit: %s",
                 mysql_error (conn));
    }
  self = g_new0 (KtChartConnection, 1);
  self->mysql = g_steal_pointer (&conn);
  return self;
}

void
kt_chart_disconnect (KtChartConnection *conn)
{
  if (conn == NULL)
    return;
  g_clear_pointer (&conn->mysql, mysql_close);
  g_free (conn);
}

/* Runs @sql on @conn: its result, or NULL with @error. */
static MYSQL_RES *
chart_select (MYSQL *conn, const char *description, const char *table, const char *sql,
              GError **error)
{
  MYSQL_RES *result = NULL;

  if (mysql_query (conn, sql) != 0 || (result = mysql_store_result (conn)) == NULL)
    g_set_error (error, KT_ERROR, KT_ERROR_TRANSIENT, "cannot read %s on %s: %s", table,
                 description, mysql_error (conn));
  return result;
}

static void
append_hex (GString *sql, const char *bytes, gsize len)
{
  static const char hex[] = "0123456789ABCDEF";

  g_string_append (sql, "X'");
  for (gsize i = 0; i < len; i++)
    {
      g_string_append_c (sql, hex[(guchar) bytes[i] >> 4]);
      g_string_append_c (sql, hex[(guchar) bytes[i] & 15]);
    }
  g_string_append_c (sql, '\'');
}

char *
kt_chart_sql_newest (const char *table)
{
  GString *sql = g_string_new ("SELECT TIMESTAMPDIFF(MINUTE, '1970-01-01 00:00:00', "
                               "MAX(log_time)) FROM ");

  kt_db_append_identifier (sql, table);
  return g_string_free (sql, FALSE);
}

char *
kt_chart_sql_top (const char *table, const char *field, gint64 since)
{
  GString *sql = g_string_new ("SELECT ");
  char stamp[20];

  kt_minute_format (since, stamp);
  kt_db_append_identifier (sql, field);
  g_string_append (sql, ", SUM(log_count) AS n FROM ");
  kt_db_append_identifier (sql, table);
  g_string_append_printf (sql, " WHERE log_time > '%s' GROUP BY ", stamp);
  kt_db_append_identifier (sql, field);
  g_string_append (sql, " ORDER BY n DESC, ");
  kt_db_append_identifier (sql, field);
  g_string_append_printf (sql, " LIMIT %d", KT_CHART_TOP + 1);
  return g_string_free (sql, FALSE);
}

char *
kt_chart_sql_points (const char *table, const char *field, const GPtrArray *keys,
                     gint64 since)
{
  GString *sql = g_string_new ("SELECT TIMESTAMPDIFF(MINUTE, '1970-01-01 00:00:00', "
                               "log_time), ");
  char stamp[20];

  kt_minute_format (since, stamp);
  if (field == NULL || keys == NULL || keys->len == 0)
    g_string_append_printf (sql, "%d AS k", field != NULL ? KT_CHART_TOP : 0);
  else
    {
      g_string_append (sql, "CASE ");
      kt_db_append_identifier (sql, field);
      for (guint i = 0; i < keys->len; i++)
        {
          gsize len;
          const char *bytes = g_bytes_get_data (keys->pdata[i], &len);

          g_string_append (sql, " WHEN ");
          append_hex (sql, bytes, len);
          g_string_append_printf (sql, " THEN %u", i);
        }
      g_string_append_printf (sql, " ELSE %d END AS k", KT_CHART_TOP);
    }
  g_string_append (sql, ", SUM(log_count) FROM ");
  kt_db_append_identifier (sql, table);
  g_string_append_printf (sql, " WHERE log_time > '%s' GROUP BY log_time, k ORDER BY "
                          "log_time, k LIMIT %d", stamp,
                          KT_CHART_HOURS * 60 * (KT_CHART_TOP + 1));
  return g_string_free (sql, FALSE);
}

/* The top keys of @field after @since into @keys, the (other) row left
 * to stack with the rest. */
static gboolean
read_top (MYSQL *conn, const char *description, const char *table, const char *field,
          gint64 since, GPtrArray *keys, GError **error)
{
  g_autofree char *sql = kt_chart_sql_top (table, field, since);
  g_autoptr(MYSQL_RES) top = chart_select (conn, description, table, sql, error);
  MYSQL_ROW row;

  if (top == NULL)
    return FALSE;
  while ((row = mysql_fetch_row (top)) != NULL && keys->len < KT_CHART_TOP)
    {
      unsigned long *len = mysql_fetch_lengths (top);

      if (row[0] != NULL && !(len[0] == strlen (KT_OTHER_KEY)
                              && memcmp (row[0], KT_OTHER_KEY, len[0]) == 0))
        g_ptr_array_add (keys, g_bytes_new (row[0], len[0]));
    }
  return TRUE;
}

gboolean
kt_chart_read (KtChartConnection *chart, const char *description, const char *table,
               const char *field, GArray *points, GPtrArray *keys, GError **error)
{
  MYSQL *conn = chart->mysql;
  g_autofree char *sql = kt_chart_sql_newest (table);
  g_autoptr(MYSQL_RES) newest = NULL, result = NULL;
  gint64 since;
  MYSQL_ROW row;

  /* "Last KT_CHART_HOURS hours" of the log's own, naive time: relative
   * to the newest bucket in the table, since log_time need not be
   * anywhere near the wall clock (replayed or delayed logs, another time
   * zone). Minutes since the epoch come out as integers, whatever the
   * session time zone. */
  newest = chart_select (conn, description, table, sql, error);
  if (newest == NULL)
    return FALSE;
  row = mysql_fetch_row (newest);
  if (row == NULL || row[0] == NULL)
    return TRUE;  /* no rows yet */
  since = g_ascii_strtoll (row[0], NULL, 10) - KT_CHART_HOURS * 60;

  if (field != NULL && !read_top (conn, description, table, field, since, keys, error))
    return FALSE;

  g_free (sql);
  sql = kt_chart_sql_points (table, field, keys, since);
  result = chart_select (conn, description, table, sql, error);
  if (result == NULL)
    return FALSE;
  while ((row = mysql_fetch_row (result)) != NULL)
    {
      KtChartPoint point = {
        row[0] != NULL ? g_ascii_strtoll (row[0], NULL, 10) : 0,
        row[1] != NULL ? (guint) g_ascii_strtoull (row[1], NULL, 10) : 0,
        row[2] != NULL ? g_ascii_strtoull (row[2], NULL, 10) : 0,
      };
      g_array_append_val (points, point);
    }
  return TRUE;
}
