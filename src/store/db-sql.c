/* db-sql.c - SQL on a connection of the store's own (db-mysql.h): run a
 * statement, keep a SELECT's result, quote a value or a name. */
#include "db-mysql.h"

#include <string.h>

gboolean
kt_db_exec (MYSQL *conn, const char *description, const char *sql, const char *doing,
            GError **error)
{
  g_autofree char *why = NULL;

  if (mysql_real_query (conn, sql, strlen (sql)) == 0)
    return TRUE;
  why = kt_db_error_text (conn);
  g_set_error (error, KT_ERROR, kt_db_error_code (conn), "%s on %s: %s", doing,
               description, why);
  return FALSE;
}

MYSQL_RES *
kt_db_select (MYSQL *conn, const char *description, const char *sql, const char *doing,
              GError **error)
{
  MYSQL_RES *res;

  if (!kt_db_exec (conn, description, sql, doing, error))
    return NULL;
  res = mysql_store_result (conn);
  if (res == NULL)
    {
      g_autofree char *why = kt_db_error_text (conn);
      g_set_error (error, KT_ERROR, kt_db_error_code (conn), "%s on %s: %s", doing,
                   description, why);
    }
  return res;
}

void
kt_db_append_quoted (MYSQL *conn, GString *out, const char *s)
{
  gsize len = strlen (s), at;

  g_string_append_c (out, '\'');
  at = out->len;
  g_string_set_size (out, at + 2 * len + 1);
  g_string_set_size (out, at + mysql_real_escape_string (conn, out->str + at, s, len));
  g_string_append_c (out, '\'');
}

void
kt_db_append_identifier (GString *out, const char *name)
{
  g_string_append_c (out, '`');
  for (const char *p = name; *p != '\0'; p++)
    {
      if (*p == '`')
        g_string_append_c (out, '`');
      g_string_append_c (out, *p);
    }
  g_string_append_c (out, '`');
}

void
kt_db_rollback (MYSQL *conn)
{
  (void) mysql_real_query (conn, "ROLLBACK", 8);
}
