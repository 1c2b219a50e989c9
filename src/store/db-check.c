/* db-check.c - what every new connection is checked for before anyone
 * uses it (db-mysql.h, kt_db_check): that its database's schema is not
 * newer than this ktally's (a database a newer ktally migrated is never
 * written by this one), and that it is the process's database (its
 * identity, ktally_database, the one the first connection saw). Called by
 * kt_db_open() directly: a check of the store's own, not a hook. */
#include "db-mysql.h"

#include <mysqld_error.h>
#include <stdlib.h>
#include <string.h>
#include "mysql-autocleanups.h"
#include "schema.h"

/* The identity of the database this process works in: the first one a
 * connection of it saw (any thread: the page's chart has connections of
 * its own), and the server it was seen on. */
static GMutex identity_lock;
static char  *identity_seen;
static char  *identity_seen_on;

/* Compares @seen (NULL: the server holds none) of @server with the
 * process's identity, recording it (with @record) if the process has none
 * yet. FALSE with @error naming both when they differ. */
static gboolean
identity_compare (const char *seen, gboolean record, const char *server,
                  const char *description, GError **error)
{
  gboolean same = TRUE;

  g_mutex_lock (&identity_lock);
  if (identity_seen == NULL && seen != NULL && record)
    {
      identity_seen = g_strdup (seen);
      identity_seen_on = g_strdup (server);
    }
  else if (identity_seen != NULL && g_strcmp0 (seen, identity_seen) != 0)
    {
      g_autofree char *its = seen != NULL
        ? g_strdup_printf ("its identity is %s", seen)
        : g_strdup ("it holds no ktally identity (no ktally tables, or an older schema: a "
                    "replica promoted before the database's creation reached it? restart "
                    "ktally to start there anew)");

      g_set_error (error, KT_ERROR, KT_ERROR_FATAL,
                   "MySQL at %s is another database than this process's: %s, not %s "
                   "(first seen on %s); refusing it: the servers of a hosts list must be "
                   "one database's (a Galera cluster, a primary and its replicas)",
                   description, its, identity_seen, identity_seen_on);
      same = FALSE;
    }
  g_mutex_unlock (&identity_lock);
  return same;
}

const char *
kt_db_identity (void)
{
  const char *id;

  g_mutex_lock (&identity_lock);
  id = identity_seen;
  g_mutex_unlock (&identity_lock);
  return id;
}

void
kt_db_identity_forget (void)
{
  g_mutex_lock (&identity_lock);
  g_clear_pointer (&identity_seen, g_free);
  g_clear_pointer (&identity_seen_on, g_free);
  g_mutex_unlock (&identity_lock);
}

void
kt_db_check_newer_error (GError **error, const char *description, int version)
{
  g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
               "%s: schema version %d is newer than this ktally (%d): upgrade ktally",
               description, version, KT_SCHEMA_VERSION);
}

gboolean
kt_db_check_version (MYSQL *conn, const char *description, GError **error)
{
  static const char sql[] = "SELECT MAX(version) FROM ktally_schema";
  g_autoptr(MYSQL_RES) res = NULL;
  MYSQL_ROW row;

  if (mysql_real_query (conn, sql, strlen (sql)) != 0)
    {
      if (mysql_errno (conn) == ER_NO_SUCH_TABLE)
        return TRUE;  /* version 0 or 1: older is never refused */
      g_set_error (error, KT_ERROR, kt_db_error_code (conn),
                   "cannot read the schema version on %s: %s", description,
                   mysql_error (conn));
      return FALSE;
    }
  res = mysql_store_result (conn);
  if (res == NULL)
    {
      g_set_error (error, KT_ERROR, kt_db_error_code (conn),
                   "cannot read the schema version on %s: %s", description,
                   mysql_error (conn));
      return FALSE;
    }
  row = mysql_fetch_row (res);
  if (row != NULL && row[0] != NULL && atoi (row[0]) > KT_SCHEMA_VERSION)
    {
      kt_db_check_newer_error (error, description, atoi (row[0]));
      return FALSE;
    }
  return TRUE;
}

gboolean
kt_db_check_identity_read (MYSQL *conn, const char *description, char **identity,
                           GError **error)
{
  static const char sql[] = "SELECT id FROM ktally_database";
  g_autoptr(MYSQL_RES) res = NULL;
  MYSQL_ROW row;

  *identity = NULL;
  if (mysql_real_query (conn, sql, strlen (sql)) != 0)
    {
      if (mysql_errno (conn) == ER_NO_SUCH_TABLE)
        return TRUE;  /* no ktally tables yet, or a schema older than version 9 */
      g_set_error (error, KT_ERROR, kt_db_error_code (conn),
                   "cannot read the database's identity on %s: %s", description,
                   mysql_error (conn));
      return FALSE;
    }
  res = mysql_store_result (conn);
  if (res == NULL)
    {
      g_set_error (error, KT_ERROR, kt_db_error_code (conn),
                   "cannot read the database's identity on %s: %s", description,
                   mysql_error (conn));
      return FALSE;
    }
  row = mysql_fetch_row (res);
  if (row != NULL && row[0] != NULL)
    *identity = g_strdup (row[0]);
  return TRUE;
}

KtDbCheck
kt_db_check (MYSQL *conn, gboolean record, const char *server, const char *description,
             GError **error)
{
  g_autofree char *seen = NULL;

  if (!kt_db_check_version (conn, description, error)
      || !kt_db_check_identity_read (conn, description, &seen, error))
    return KT_DB_CHECK_FAILED;
  return identity_compare (seen, record, server, description, error)
         ? KT_DB_CHECK_USABLE : KT_DB_CHECK_FOREIGN;
}
