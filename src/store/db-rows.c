/* db-rows.c - a SELECT's rows, for code above the store (db-rows.h).
 *
 * A thin hold on the client library's stored result: the whole result is
 * fetched when the statement runs (mysql_store_result), so reading a row
 * never fails and never waits. */
#include "db-rows.h"

#include "db-mysql.h"
#include "mysql-autocleanups.h"

struct _KtDbRows
{
  MYSQL_RES *result;
};

KtDbRows *
kt_db_rows_select (KtDb *db, const char *sql, const char *doing, GError **error)
{
  MYSQL_RES *result = kt_db_rows (db, sql, doing, error);
  KtDbRows *self;

  if (result == NULL)
    return NULL;
  self = g_new0 (KtDbRows, 1);
  self->result = result;
  return self;
}

const char *const *
kt_db_rows_next (KtDbRows *self)
{
  return (const char *const *) mysql_fetch_row (self->result);
}

const unsigned long *
kt_db_rows_lengths (KtDbRows *self)
{
  return mysql_fetch_lengths (self->result);
}

void
kt_db_rows_free (KtDbRows *self)
{
  if (self == NULL)
    return;
  g_clear_pointer (&self->result, mysql_free_result);
  g_free (self);
}
