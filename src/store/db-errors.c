/* db-errors.c - what a MySQL error means for the caller (db.h,
 * db-mysql.h): a failed connection or server is worth another try
 * (KT_ERROR_TRANSIENT), a deadlock or lock wait another commit
 * (KT_ERROR_CONFLICT), an access denied is that server's answer for good;
 * and the error's text, with what a missing privilege needs. */
#include "db-mysql.h"

#include <errmsg.h>
#include <mysqld_error.h>
#include <string.h>

gboolean
kt_db_is_transient (unsigned int code)
{
  switch (code)
    {
    case CR_CONNECTION_ERROR:
    case CR_CONN_HOST_ERROR:
    case CR_SERVER_GONE_ERROR:
    case CR_SERVER_LOST:
    case CR_SERVER_LOST_EXTENDED:
    case CR_COMMANDS_OUT_OF_SYNC:
    case ER_CON_COUNT_ERROR:
    case ER_SERVER_SHUTDOWN:
    case ER_LOCK_DEADLOCK:
    case ER_LOCK_WAIT_TIMEOUT:
    case ER_QUERY_INTERRUPTED:
    case ER_CONNECTION_KILLED:
    case ER_NET_READ_ERROR:
    case ER_NET_READ_INTERRUPTED:
    case ER_NET_ERROR_ON_WRITE:
    case ER_NET_WRITE_INTERRUPTED:
    case ER_UNKNOWN_COM_ERROR:  /* MariaDB answers this while it shuts down, and a
                                 * Galera node outside the primary component */
    case ER_ERROR_DURING_COMMIT:  /* Galera: the replication of a COMMIT failed */
      return TRUE;
    default:
      return FALSE;
    }
}

gboolean
kt_db_refused (unsigned int code)
{
  return code == ER_ACCESS_DENIED_ERROR || code == ER_ACCESS_DENIED_NO_PASSWORD_ERROR;
}

/* Whether @code says the user lacks a privilege (not a wrong password). */
static gboolean
is_grant_error (unsigned int code)
{
  return code == ER_DBACCESS_DENIED_ERROR || code == ER_TABLEACCESS_DENIED_ERROR
         || code == ER_COLUMNACCESS_DENIED_ERROR || code == ER_SPECIFIC_ACCESS_DENIED_ERROR;
}

/* The connection's error, and after a missing privilege ("CREATE command
 * denied to user ..."), the grants ktally needs: the server names one
 * privilege at a time, a user fixing them one by one would go round and
 * round. New string. */
char *
kt_db_error_text (MYSQL *conn)
{
  g_autofree char *grants = NULL;

  /* ktally makes its tables, never its database. */
  if (mysql_errno (conn) == ER_BAD_DB_ERROR)
    return g_strdup_printf ("%s (create it first: CREATE DATABASE; ktally creates its "
                            "tables in it)", mysql_error (conn));
  if (!is_grant_error (mysql_errno (conn)))
    return g_strdup (mysql_error (conn));
  grants = g_strjoinv (", ", (char **) kt_db_grants);
  /* To a user without a grant on a database, MySQL says "access denied"
   * whether the database exists or not. */
  if (mysql_errno (conn) == ER_DBACCESS_DENIED_ERROR)
    return g_strdup_printf ("%s: the database does not exist, or the user may not use it "
                            "(MySQL does not tell which to a user without grants on it): "
                            "create it if it is missing (CREATE DATABASE), and GRANT %s ON "
                            "it to the user", mysql_error (conn), grants);
  return g_strdup_printf ("%s (ktally needs GRANT %s ON its database; `ktally config "
                          "--check --connect` lists what is missing)", mysql_error (conn), grants);
}

KtErrorCode
kt_db_error_code (MYSQL *conn)
{
  unsigned int code = mysql_errno (conn);

  if (code == ER_LOCK_DEADLOCK || code == ER_LOCK_WAIT_TIMEOUT)
    return KT_ERROR_CONFLICT;
  return kt_db_is_transient (code) ? KT_ERROR_TRANSIENT : KT_ERROR_FATAL;
}
