/* db-open.c - a connection to one server of the database (db-mysql.h,
 * kt_db_open): the servers of a hosts list tried in order, a Galera node
 * outside the primary component and a read-only server skipped, the
 * session made strict and UTC, and every connection checked before use
 * (db-check.c). */
#include "db-mysql.h"

#include <errmsg.h>
#include <mysqld_error.h>
#include <string.h>
#include "mysql-autocleanups.h"
#include "log.h"

/* Every session ktally opens: a value that does not fit is an error, never
 * clamped or truncated in silence. */
#define KT_SQL_MODE "STRICT_ALL_TABLES,STRICT_TRANS_TABLES,NO_ZERO_DATE,NO_ZERO_IN_DATE," \
                    "ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION"

/* One attempt of kt_db_open() on the @i-th server; *@code: the client's
 * error number. */
static MYSQL *
open_once (const KtDbConfig *db, guint i, const char *description,
           unsigned int connect_timeout, unsigned int io_timeout, unsigned int *code,
           GError **error)
{
  g_autoptr(MYSQL) conn = mysql_init (NULL);
  KtDbHost server = kt_db_host_at (db, i);
  my_bool off = 0;

  *code = 0;

  if (conn == NULL)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_INTERNAL,
                           "cannot allocate a MySQL connection");
      return NULL;
    }
  /* Bounded waits: a server that hangs is a transient failure to report,
   * not a process stuck forever. Reconnection is ours, never silent: an
   * automatic reconnect would lose the open transaction without a word. */
  mysql_options (conn, MYSQL_OPT_CONNECT_TIMEOUT, &connect_timeout);
  mysql_options (conn, MYSQL_OPT_READ_TIMEOUT, &io_timeout);
  mysql_options (conn, MYSQL_OPT_WRITE_TIMEOUT, &io_timeout);
  mysql_options (conn, MYSQL_OPT_RECONNECT, &off);
  mysql_options (conn, MYSQL_SET_CHARSET_NAME, "utf8mb4");
  /* Where the user said: a port means TCP. The library takes "localhost"
   * for its default socket whatever the port (localhost:3307 and
   * localhost:3308 were one server, the default socket's, twice). */
  if (!kt_db_host_by_socket (db, i))
    {
      unsigned int tcp = MYSQL_PROTOCOL_TCP;
      mysql_options (conn, MYSQL_OPT_PROTOCOL, &tcp);
    }
  if (db->defaults_file != NULL)
    {
      /* The [client] group may give the password (and user, host...). */
      mysql_options (conn, MYSQL_READ_DEFAULT_FILE, db->defaults_file);
      mysql_options (conn, MYSQL_READ_DEFAULT_GROUP, "client");
    }
  if (db->ssl_mode != KT_SSL_PREFERRED)
    {
      my_bool enforce = db->ssl_mode != KT_SSL_DISABLED;
      my_bool verify = db->ssl_mode >= KT_SSL_VERIFY_CA;

      if (enforce)
        {
          mysql_ssl_set (conn, db->ssl_key, db->ssl_cert, db->ssl_ca, NULL, NULL);
          /* No silent fall back to plain text if the server has no TLS. */
          mysql_options (conn, MYSQL_OPT_SSL_ENFORCE, &enforce);
        }
      mysql_options (conn, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &verify);
    }

  if (mysql_real_connect (conn, server.host, db->user, db->password, db->database,
                          server.port, db->socket, 0) == NULL)
    {
      g_autofree char *why = kt_db_error_text (conn);

      *code = mysql_errno (conn);
      g_set_error (error, KT_ERROR,
                   kt_db_is_transient (*code) ? KT_ERROR_TRANSIENT : KT_ERROR_FATAL,
                   "cannot connect to MySQL at %s: %s", description, why);
      return NULL;
    }
  /* Whatever the client library did with ssl-mode: not encrypted, not used. */
  if (db->ssl_mode >= KT_SSL_REQUIRED && mysql_get_ssl_cipher (conn) == NULL)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_FATAL,
                   "cannot connect to MySQL at %s: ssl-mode requires TLS and the "
                   "connection is not encrypted", description);
      return NULL;
    }
  /* Whatever the server's defaults: a value that does not fit is an error,
   * never clamped or truncated in silence (a count, a name), and the times
   * ktally stamps (committed_at, NOW() in --audit-keep) are UTC, which a
   * DST change or the server's time zone cannot fold out of order. */
  if (mysql_query (conn, "SET SESSION sql_mode = '" KT_SQL_MODE "', "
                         "SESSION time_zone = '+00:00'") != 0)
    {
      g_set_error (error, KT_ERROR, kt_db_error_code (conn),
                   "cannot set sql_mode and time_zone on %s: %s", description,
                   mysql_error (conn));
      return NULL;
    }
  return g_steal_pointer (&conn);
}

/* A rotation found by a refused connection: said once, with its fields. */
static void
reread_logged (const char *description, const char *file)
{
  g_autoptr(KtLogEvent) e = kt_log_event_new ("password-reread");

  kt_log_event_string (e, "database", description);
  kt_log_event_string (e, "file", file);
  kt_log_event_emit (e, G_LOG_LEVEL_MESSAGE, "MySQL at %s refused the password; %s holds "
                     "a new one: connecting with it", description, file);
}

MYSQL *
kt_db_open_host (KtDbConfig *db, guint i, const char *description,
                 unsigned int connect_timeout, unsigned int io_timeout, unsigned int *code,
                 GError **error)
{
  g_autoptr(GError) local = NULL;
  g_autoptr(GError) reread = NULL;
  g_autofree char *fresh = NULL;
  MYSQL *conn = open_once (db, i, description, connect_timeout, io_timeout, code, &local);

  if (conn != NULL)
    return conn;
  if (*code != ER_ACCESS_DENIED_ERROR || db->password_file == NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local));
      return NULL;
    }
  /* Refused: perhaps the password was rotated under us. The file is read
   * once more (an option file, --db-defaults-file, is read by the client
   * library at every connection anyway); only a new password is tried. */
  fresh = kt_db_password_file_read (db->password_file, &reread);
  if (fresh == NULL || g_strcmp0 (fresh, db->password) == 0)
    {
      if (fresh == NULL)
        g_set_error (error, KT_ERROR, local->code, "%s (and reading the password file "
                     "again: %s)", local->message, reread->message);
      else
        g_set_error (error, KT_ERROR, local->code, "%s (read again, %s holds the same "
                     "password)", local->message, db->password_file);
      if (fresh != NULL)
        memset (fresh, 0, strlen (fresh));
      return NULL;
    }
  reread_logged (description, db->password_file);
  if (db->password != NULL)
    memset (db->password, 0, strlen (db->password));
  g_free (db->password);
  db->password = g_steal_pointer (&fresh);
  return open_once (db, i, description, connect_timeout, io_timeout, code, error);
}

/* What a server of the list is to ktally. */
typedef enum
{
  SERVER_USABLE,
  SERVER_READ_ONLY,   /* read_only ON: a replica, or a server a failover fenced */
  SERVER_NOT_READY,   /* a Galera node outside the primary component */
  SERVER_FAILED,      /* it could not say: the error tells */
  SERVER_FOREIGN,     /* another database: its identity is not this process's */
} ServerState;

static const char *const server_why[] = {
  NULL,
  "read-only (read_only=ON: a replica, or a server a failover fenced)",
  "not ready: a Galera node outside the primary component (wsrep_ready=OFF)",
};

/* Whether the server of @conn may take ktally's work. Only SHOW and SET:
 * a node that is not ready refuses the rest (1047). */
static ServerState
server_state (MYSQL *conn, const char *description, GError **error)
{
  g_autoptr(MYSQL_RES) vars = NULL;
  g_autoptr(MYSQL_RES) status = NULL;
  gboolean read_only = FALSE, wsrep = FALSE;
  MYSQL_ROW row;

  /* super_read_only is MySQL's; ktally's user may well have SUPER (or
   * READ_ONLY ADMIN), which read_only does not stop: hence the look. */
  vars = kt_db_select (conn, description, "SHOW GLOBAL VARIABLES WHERE Variable_name IN "
                       "('read_only', 'super_read_only', 'wsrep_on')",
                       "cannot read read_only and wsrep_on", error);
  if (vars == NULL)
    return SERVER_FAILED;
  while ((row = mysql_fetch_row (vars)) != NULL)
    {
      gboolean on = row[1] != NULL && g_ascii_strcasecmp (row[1], "ON") == 0;

      if (g_str_equal (row[0], "wsrep_on"))
        wsrep = on;
      else
        read_only |= on;
    }
  if (wsrep)
    {
      status = kt_db_select (conn, description, "SHOW GLOBAL STATUS LIKE 'wsrep_ready'",
                             "cannot read wsrep_ready", error);
      if (status == NULL)
        return SERVER_FAILED;
      row = mysql_fetch_row (status);
      if (row == NULL || row[1] == NULL || g_ascii_strcasecmp (row[1], "ON") != 0)
        return SERVER_NOT_READY;
      /* Causal reads: what this session reads (offsets above all) is at
       * least as new as every commit the cluster acknowledged, on any node. */
      if (!kt_db_exec (conn, description, "SET SESSION wsrep_sync_wait = 1",
                       "cannot set wsrep_sync_wait", error))
        return SERVER_FAILED;
    }
  return read_only ? SERVER_READ_ONLY : SERVER_USABLE;
}

/* A server of the list passed over (@why: what it is, or the error that
 * the connection met): one line. */
static void
skip_logged (const char *description, const char *server, ServerState state,
             unsigned int refused, const char *why, gboolean last)
{
  g_autoptr(KtLogEvent) e = kt_log_event_new ("db-skip");
  const char *next = last ? "no other server to try" : "trying the next one";

  kt_log_event_string (e, "database", description);
  kt_log_event_string (e, "server", server);
  kt_log_event_string (e, "reason", state == SERVER_READ_ONLY ? "read-only"
                                    : state == SERVER_NOT_READY ? "not-ready"
                                    : state == SERVER_FOREIGN ? "another-database"
                                    : kt_db_refused (refused) ? "refused" : "failed");
  if (state == SERVER_FAILED || state == SERVER_FOREIGN)
    kt_log_event_emit (e, G_LOG_LEVEL_WARNING, "%s: %s", why, next);
  else
    kt_log_event_emit (e, G_LOG_LEVEL_WARNING, "MySQL at %s is %s: %s", description,
                       server_why[state], next);
}

/* A skip of a list being walked, said once kt_db_open() knows the end. */
typedef struct
{
  char        *description;
  char        *server;
  ServerState  state;
  unsigned int refused;
  char        *why;
} Skip;

static void
skip_clear (gpointer data)
{
  Skip *k = data;

  g_free (k->description);
  g_free (k->server);
  g_free (k->why);
}

/* The skips of a list walked: said when a server was taken (why not the
 * ones before it) or when one may come back (a retry follows); not when
 * every server refused for good: the error that ends the command names
 * each one's reason, in one line. */
static void
skips_said (GArray *skips, gboolean said, gboolean taken)
{
  for (guint i = 0; said && i < skips->len; i++)
    {
      const Skip *k = &g_array_index (skips, Skip, i);

      skip_logged (k->description, k->server, k->state, k->refused, k->why,
                   !taken && i + 1 == skips->len);
    }
}

/* The process's first database, found on a server after the first of the
 * list was passed over: nothing tells whether that one is another
 * database's (sql/HA.md, "What it cannot tell"), so it is said, once. */
static void
first_elsewhere (const char *description)
{
  g_autoptr(KtLogEvent) e = kt_log_event_new ("db-identity");

  kt_log_event_string (e, "database", description);
  kt_log_event_string (e, "identity", kt_db_identity ());
  kt_log_event_emit (e, G_LOG_LEVEL_WARNING, "MySQL: this process works in the database of "
                     "%s (identity %s), found after the first server of the list did not "
                     "take it: from now on every server must hold that identity; if the "
                     "first holds another database, stop ktally", description,
                     kt_db_identity ());
}

/* The process's first server, taken after the first of its list did not
 * take it, holds no ktally database: ktally is about to create one there.
 * That is right when the list is one database's servers whose copy there
 * lost it (a replica promoted before the database's creation reached it),
 * and wrong when the first server, only down for a while, holds the job's
 * database and this one is an unrelated namesake: the topic would be
 * counted again there. Nothing tells the two apart; said once, so that an
 * operator can. */
static void
created_elsewhere (const char *description)
{
  static gsize said;
  g_autoptr(KtLogEvent) e = NULL;

  if (!g_once_init_enter (&said))
    return;
  e = kt_log_event_new ("db-identity");
  kt_log_event_string (e, "database", description);
  kt_log_event_emit (e, G_LOG_LEVEL_WARNING, "MySQL: this process takes %s, found after the "
                     "first server of the list did not take it, and finds no ktally database "
                     "there: it creates one, and counts the topic there from the start; if the "
                     "first server holds this job's database, stop ktally", description);
  g_once_init_leave (&said, 1);
}

/* The check of every new connection (db-check.c) as a server's state. */
static ServerState
checked (MYSQL *conn, gboolean record, const char *server, const char *description,
         GError **error)
{
  switch (kt_db_check (conn, record, server, description, error))
    {
    case KT_DB_CHECK_USABLE:
      return SERVER_USABLE;
    case KT_DB_CHECK_FOREIGN:
      return SERVER_FOREIGN;
    default:
      return SERVER_FAILED;
    }
}

/* The one server of a list of one cannot be used (@state, @local: why):
 * into @error, a state said in a line first. */
static void
alone_failed (const char *description, const char *server, ServerState state, GError *local,
              GError **error)
{
  if (state != SERVER_FAILED && state != SERVER_FOREIGN)
    {
      skip_logged (description, server, state, 0, NULL, TRUE);
      g_set_error (error, KT_ERROR, KT_ERROR_TRANSIENT, "cannot use MySQL at %s: it "
                   "is %s", description, server_why[state]);
      g_clear_error (&local);
    }
  else
    g_propagate_error (error, local);
}

/* A reader's read-only *@fallback (the @at-th server), about to be taken:
 * checked now (it passed over every writable server first). Refused, it
 * is closed and its reason appended to @why_not; FALSE only with a newer
 * schema (@error), which is the database's, said at once. */
static gboolean
fallback_checked (KtDbConfig *db, MYSQL **fallback, guint at, gboolean record,
                  GString *why_not, GError **error)
{
  g_autofree char *server = kt_db_host_text (db, at);
  g_autofree char *description = kt_db_describe_server (db, server);
  g_autoptr(GError) local = NULL;

  if (checked (*fallback, record, server, description, &local) == SERVER_USABLE)
    return TRUE;
  if (g_error_matches (local, KT_ERROR, KT_ERROR_USAGE))
    {
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  g_clear_pointer (fallback, mysql_close);
  g_string_append_printf (why_not, "%s%s", why_not->len > 0 ? "; " : "", local->message);
  return TRUE;
}

/* *@fallback (the @at-th server) taken, and said: no writable server. */
static MYSQL *
fallback_taken (KtDbConfig *db, MYSQL **fallback, guint at, guint *index)
{
  g_autoptr(KtLogEvent) e = kt_log_event_new ("db-read-only");
  g_autofree char *server = kt_db_host_text (db, at);

  kt_log_event_string (e, "server", server);
  kt_log_event_emit (e, G_LOG_LEVEL_MESSAGE, "MySQL: no writable server in the list: "
                     "reading %s, which is read-only", server);
  if (index != NULL)
    *index = at;
  return g_steal_pointer (fallback);
}

MYSQL *
kt_db_open (KtDbConfig *db, guint flags, guint *index, unsigned int connect_timeout,
            unsigned int io_timeout, GError **error)
{
  gboolean read_only_ok = (flags & KT_DB_OPEN_READ_ONLY_OK) != 0;
  gboolean record = (flags & KT_DB_OPEN_BESIDE) == 0;
  gboolean had_identity = kt_db_identity () != NULL;
  g_autoptr(GString) why_not = g_string_new (NULL);
  g_autoptr(GArray) skips = g_array_new (FALSE, TRUE, sizeof (Skip));
  g_autoptr(MYSQL) fallback = NULL;  /* the first read-only server, for a reader */
  guint fallback_at = 0;
  KtErrorCode code = KT_ERROR_FATAL;
  guint n = kt_db_hosts (db);

  g_array_set_clear_func (skips, skip_clear);
  for (guint i = 0; i < n; i++)
    {
      g_autofree char *server = kt_db_host_text (db, i);
      g_autofree char *description = kt_db_describe_server (db, server);
      g_autoptr(GError) local = NULL;
      unsigned int refused = 0;
      g_autoptr(MYSQL) conn = kt_db_open_host (db, i, description, connect_timeout, io_timeout,
                                               &refused, &local);
      ServerState state = conn != NULL ? server_state (conn, description, &local)
                                       : SERVER_FAILED;

      /* Which database it is, before anyone uses it: a server that holds
       * another is refused as one that refuses the password is. Only a
       * server about to be taken: a read-only one passed over (an old
       * primary a failover fenced, which may hold what the new one lost,
       * its creation included) must not make its identity the process's. */
      if (state == SERVER_USABLE || (state == SERVER_READ_ONLY && read_only_ok && n == 1))
        {
          ServerState which = checked (conn, record, server, description, &local);

          if (which != SERVER_USABLE)
            state = which;
          /* A schema newer than this ktally is the database's, not this
           * server's: said at once. */
          if (g_error_matches (local, KT_ERROR, KT_ERROR_USAGE))
            {
              g_propagate_error (error, g_steal_pointer (&local));
              return NULL;
            }
        }
      if (state == SERVER_USABLE || (state == SERVER_READ_ONLY && read_only_ok && n == 1))
        {
          skips_said (skips, TRUE, TRUE);
          if (!had_identity && i > 0 && kt_db_identity () != NULL)
            first_elsewhere (description);
          else if (!had_identity && i > 0 && record && state == SERVER_USABLE)
            created_elsewhere (description);
          if (index != NULL)
            *index = i;
          return g_steal_pointer (&conn);
        }
      /* A reader takes a read-only server only when no writable one is
       * there: a replica may lag, an old primary may hold what the
       * failover lost. */
      if (state == SERVER_READ_ONLY && read_only_ok)
        {
          if (fallback == NULL)
            {
              fallback = g_steal_pointer (&conn);
              fallback_at = i;
            }
          continue;
        }
      if (n == 1)
        {
          alone_failed (description, server, state, g_steal_pointer (&local), error);
          return NULL;
        }
      /* Refused (access denied, another database) is this server's answer,
       * not the list's: the next server may take us (users differ between
       * servers while a change replicates, or by mistake), and only when
       * every one refused for good is it fatal, as with one server. */
      g_array_append_val (skips, ((Skip) { g_strdup (description), g_strdup (server), state,
                                           refused,
                                           g_strdup (local != NULL ? local->message : NULL) }));
      /* One server that may come back (or be promoted) makes it worth
       * another try. */
      if ((state != SERVER_FAILED && state != SERVER_FOREIGN) || local->code != KT_ERROR_FATAL)
        code = KT_ERROR_TRANSIENT;
      g_string_append_printf (why_not, "%s%s: %s", why_not->len > 0 ? "; " : "", server,
                              state != SERVER_FAILED && state != SERVER_FOREIGN
                              ? server_why[state] : local->message);
    }
  if (fallback != NULL && !fallback_checked (db, &fallback, fallback_at, record, why_not, error))
    return NULL;
  skips_said (skips, fallback != NULL || code == KT_ERROR_TRANSIENT, fallback != NULL);
  if (fallback != NULL)
    return fallback_taken (db, &fallback, fallback_at, index);
  {
    g_autofree char *all = kt_db_describe (db);
    g_set_error (error, KT_ERROR, code, "no usable MySQL server for %s: %s", all,
                 why_not->str);
  }
  return NULL;
}
