/* db.c - a database a module works in (db.h, KtDb): one connection,
 * opened on demand on a server of the list (db-open.c), dropped after a
 * failure of it; statements, rows, transactions and COMMIT's outcome. */
#include "db-mysql.h"

#include <errmsg.h>
#include <mysqld_error.h>
#include <string.h>
#include "mysql-autocleanups.h"
#include "log.h"

/* ---- KtDb ---------------------------------------------------------------- */

/* A migration's connection waits this long for an answer: one hour. */
#define LONG_IO_S 3600

struct _KtDb
{
  KtDbConfig config;
  char      *name;         /* every server: before the first connection */
  char     **names;        /* "user@host:port/database", one per server */
  char     **servers;      /* "host:port", one per server */
  guint      server;       /* of the connection, or of the last one */
  guint      connections;  /* opened so far */
  gboolean   read_only_ok;
  MYSQL     *conn;
};

KtDb *
kt_db_new (const KtDbConfig *config)
{
  KtDb *self = g_new0 (KtDb, 1);
  guint n = kt_db_hosts (config);

  kt_db_config_copy (&self->config, config);
  self->name = kt_db_describe (config);
  self->names = g_new0 (char *, n + 1);
  self->servers = g_new0 (char *, n + 1);
  for (guint i = 0; i < n; i++)
    {
      self->servers[i] = kt_db_host_text (config, i);
      self->names[i] = kt_db_describe_server (config, self->servers[i]);
    }
  return self;
}

void
kt_db_free (KtDb *self)
{
  if (self == NULL)
    return;
  g_clear_pointer (&self->conn, mysql_close);
  kt_db_config_clear (&self->config);
  g_free (self->name);
  g_strfreev (self->names);
  g_strfreev (self->servers);
  g_free (self);
}

const char *
kt_db_name (KtDb *self)
{
  return self->connections > 0 ? self->names[self->server] : self->name;
}

const char *
kt_db_host (KtDb *self)
{
  return self->connections > 0 ? self->servers[self->server] : NULL;
}

const char *
kt_db_transport (KtDb *self)
{
  const char *info = self->conn != NULL ? mysql_get_host_info (self->conn) : NULL;
  const char *via = info != NULL ? strstr (info, " via ") : NULL;

  return via != NULL ? via + strlen (" via ") : NULL;
}

const char *
kt_db_server_version (KtDb *self)
{
  return self->conn != NULL ? mysql_get_server_info (self->conn) : NULL;
}

gboolean
kt_db_connected (KtDb *self)
{
  return self->conn != NULL;
}

guint
kt_db_connections (KtDb *self)
{
  return self->connections;
}

void
kt_db_allow_read_only (KtDb *self)
{
  self->read_only_ok = TRUE;
}

const char *
kt_db_client_version (void)
{
  return mysql_get_client_info ();
}

void
kt_db_library_init (void)
{
  mysql_library_init (0, NULL, NULL);
}

void
kt_db_library_end (void)
{
  mysql_library_end ();
}

const KtDbConfig *
kt_db_config (KtDb *self)
{
  return &self->config;
}

void
kt_db_set_credentials (KtDb *self, const KtDbConfig *from)
{
  if (self->config.password != NULL)
    memset (self->config.password, 0, strlen (self->config.password));
  g_free (self->config.password);
  g_free (self->config.password_file);
  g_free (self->config.defaults_file);
  self->config.password = g_strdup (from->password);
  self->config.password_file = g_strdup (from->password_file);
  self->config.defaults_file = g_strdup (from->defaults_file);
}

MYSQL *
kt_db_connection (KtDb *self)
{
  return self->conn;
}

/* Sets @error from the connection's last error, prefixed by what we were
 * doing. A failed connection is dropped: whatever state it had (an open
 * transaction) dies with it, and the next call reconnects. A deadlock or
 * lock wait cost only the transaction (the caller rolls back): the
 * connection is fine, and the same commit may be tried again. */
static void
set_error (KtDb *self, GError **error, const char *doing)
{
  KtErrorCode code = kt_db_error_code (self->conn);
  g_autofree char *why = kt_db_error_text (self->conn);

  g_set_error (error, KT_ERROR, code, "%s on %s: %s", doing, kt_db_name (self), why);
  if (code == KT_ERROR_TRANSIENT)
    g_clear_pointer (&self->conn, mysql_close);
}

gboolean
kt_db_failed (KtDb *self, GError *local, GError **error)
{
  if (g_error_matches (local, KT_ERROR, KT_ERROR_TRANSIENT))
    g_clear_pointer (&self->conn, mysql_close);
  g_propagate_error (error, local);
  return FALSE;
}

/* A connection on another server than the last one (a failover, or the
 * first server back): one line. */
static void
moved_logged (KtDb *self, guint was)
{
  g_autoptr(KtLogEvent) e = kt_log_event_new ("db-server");

  kt_log_event_string (e, "database", self->names[self->server]);
  kt_log_event_string (e, "server", self->servers[self->server]);
  kt_log_event_string (e, "previous", self->servers[was]);
  kt_log_event_string (e, "transport", kt_db_transport (self));
  kt_log_event_emit (e, G_LOG_LEVEL_MESSAGE, "MySQL: now on %s over %s (was %s)",
                     self->names[self->server], kt_db_transport (self), self->servers[was]);
}

gboolean
kt_db_connect (KtDb *self, GError **error)
{
  guint was = self->server;

  if (self->conn != NULL)
    return TRUE;
  self->conn = kt_db_open (&self->config, self->read_only_ok ? KT_DB_OPEN_READ_ONLY_OK : 0,
                           &self->server, 5, 60, error);
  if (self->conn == NULL)
    return FALSE;
  if (self->connections++ > 0 && self->server != was)
    moved_logged (self, was);
  if (mysql_query (self->conn, "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED") != 0)
    {
      set_error (self, error, "cannot set the isolation level");
      g_clear_pointer (&self->conn, mysql_close);
      return FALSE;
    }
  /* kt_db_open() checked, at this connect as at every one, the schema's
   * version (a database a newer ktally migrated meanwhile is not written by
   * this one) and which database it is. */
  return TRUE;
}

gboolean
kt_db_identity_check (KtDb *self, GError **error)
{
  GError *local = NULL;

  if (self->conn == NULL)
    return kt_db_connect (self, error);
  switch (kt_db_check (self->conn, TRUE, self->servers[self->server], kt_db_name (self),
                       &local))
    {
    case KT_DB_CHECK_USABLE:
      return TRUE;
    case KT_DB_CHECK_FOREIGN:
      g_clear_pointer (&self->conn, mysql_close);
      g_propagate_error (error, local);
      return FALSE;
    default:
      return kt_db_failed (self, local, error);
    }
}

gboolean
kt_db_run (KtDb *self, const char *sql, const char *doing, GError **error)
{
  if (mysql_real_query (self->conn, sql, strlen (sql)) == 0)
    return TRUE;
  set_error (self, error, doing);
  return FALSE;
}

gboolean
kt_db_run_new_rows (KtDb *self, const char *sql, const char *doing, GError **error)
{
  if (mysql_real_query (self->conn, sql, strlen (sql)) == 0)
    return TRUE;
  if (mysql_errno (self->conn) != ER_DUP_ENTRY)
    {
      set_error (self, error, doing);
      return FALSE;
    }
  g_set_error (error, KT_ERROR, KT_ERROR_CONFLICT,
               "%s on %s: another writer created the same row at the same time (%s)",
               doing, kt_db_name (self), mysql_error (self->conn));
  return FALSE;
}

MYSQL_RES *
kt_db_rows (KtDb *self, const char *sql, const char *doing, GError **error)
{
  MYSQL_RES *res;

  if (!kt_db_run (self, sql, doing, error))
    return NULL;
  res = mysql_store_result (self->conn);
  if (res == NULL)
    set_error (self, error, doing);
  return res;
}

void
kt_db_quote (KtDb *self, GString *out, const char *s)
{
  kt_db_append_quoted (self->conn, out, s);
}

gboolean
kt_db_begin (KtDb *self, GError **error)
{
  return kt_db_connect (self, error)
         && kt_db_run (self, "START TRANSACTION", "cannot start a transaction", error);
}

void
kt_db_abort (KtDb *self)
{
  /* Best effort: if even this fails, the connection is gone, and a
   * transaction dies with its connection. */
  if (self->conn != NULL && mysql_real_query (self->conn, "ROLLBACK", 8) != 0)
    g_clear_pointer (&self->conn, mysql_close);
}

gboolean
kt_db_finish (KtDb *self, KtCommitResult *result, GError **error)
{
  unsigned int code;

  if (mysql_real_query (self->conn, "COMMIT", 6) == 0)
    {
      *result = KT_COMMIT_DONE;
      return TRUE;
    }
  code = mysql_errno (self->conn);
  /* Unknown: the connection died with the answer, or a Galera node left
   * the primary component while it replicated the transaction (1047, or
   * 1180 for a failed replication): the others may have committed it. A
   * certification conflict (1213) is known: no node committed it. */
  *result = code == CR_SERVER_LOST || code == CR_SERVER_GONE_ERROR
            || code == CR_SERVER_LOST_EXTENDED || code == ER_CONNECTION_KILLED
            || code == ER_UNKNOWN_COM_ERROR || code == ER_ERROR_DURING_COMMIT
            ? KT_COMMIT_UNKNOWN : KT_COMMIT_FAILED;
  set_error (self, error, "cannot commit");
  if (*result == KT_COMMIT_FAILED)
    kt_db_abort (self);
  return FALSE;
}

gboolean
kt_db_snapshot (KtDb *self, GError **error)
{
  return kt_db_connect (self, error)
         && kt_db_run (self, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ",
                       "cannot set the isolation level", error)
         && kt_db_run (self, "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY",
                       "cannot start a transaction", error);
}

gboolean
kt_db_table_type (KtDb *self, const char *table, char **type, GError **error)
{
  g_autoptr(GString) sql = g_string_new ("SELECT table_type FROM information_schema.tables "
                                         "WHERE table_schema = DATABASE() AND table_name = ");
  g_autoptr(MYSQL_RES) res = NULL;
  MYSQL_ROW row;

  if (!kt_db_connect (self, error))
    return FALSE;
  kt_db_quote (self, sql, table);
  res = kt_db_rows (self, sql->str, "cannot look for the tables", error);
  if (res == NULL)
    return FALSE;
  row = mysql_fetch_row (res);
  *type = row != NULL ? g_strdup (row[0]) : NULL;
  return TRUE;
}

gboolean
kt_db_has_column (KtDb *self, const char *table, const char *column, gboolean *has,
                  GError **error)
{
  g_autoptr(GString) sql = g_string_new ("SELECT 1 FROM information_schema.columns "
                                         "WHERE table_schema = DATABASE() AND table_name = ");
  g_autoptr(MYSQL_RES) res = NULL;

  if (!kt_db_connect (self, error))
    return FALSE;
  kt_db_quote (self, sql, table);
  g_string_append (sql, " AND column_name = ");
  kt_db_quote (self, sql, column);
  res = kt_db_rows (self, sql->str, "cannot look for the columns", error);
  if (res == NULL)
    return FALSE;
  *has = mysql_fetch_row (res) != NULL;
  return TRUE;
}

MYSQL *
kt_db_open_long (KtDb *self, GError **error)
{
  /* The server of the batch connection, not the first of the list: the
   * migration must change the database the job then writes. */
  unsigned int code;
  g_autoptr(MYSQL) conn = kt_db_open_host (&self->config, self->server, kt_db_name (self), 5,
                                           LONG_IO_S, &code, error);

  if (conn != NULL
      && kt_db_check (conn, TRUE, self->servers[self->server], kt_db_name (self), error)
         != KT_DB_CHECK_USABLE)
    return NULL;
  return g_steal_pointer (&conn);
}

char **
kt_db_grants_missing (KtDb *self, GError **error)
{
  g_autoptr(MYSQL_RES) res = NULL;
  g_autoptr(GPtrArray) lines = g_ptr_array_new_with_free_func (g_free);
  MYSQL_ROW row;

  if (!kt_db_connect (self, error))
    return NULL;
  res = kt_db_rows (self, "SHOW GRANTS", "cannot read the grants", error);
  if (res == NULL)
    return NULL;
  while ((row = mysql_fetch_row (res)) != NULL)
    if (row[0] != NULL)
      g_ptr_array_add (lines, g_strdup (row[0]));
  g_ptr_array_add (lines, NULL);
  return kt_db_grants_missing_in ((const char *const *) lines->pdata,
                                  kt_db_config (self)->database);
}
