/* sink.c - the MySQL sink stage.
 *
 * Takes a batch's ranges and reduced counts and commits both in ONE
 * transaction, offsets first: an UPDATE fenced with `offset` = from decides
 * at once whether this writer still owns the range, before any count is
 * touched. Every value is escaped; nothing from outside is pasted raw. */
#include "sink.h"

#include <errmsg.h>
#include <mysqld_error.h>
#include <string.h>
#include "autocleanups.h"
#include "error.h"
#include "parse.h"

/* sql/schema.sql, embedded at build time (see src/meson.build). */
#include "schema-sql.h"

/* Rows per INSERT: keeps every statement far below max_allowed_packet. */
#define UPSERT_ROWS 1000

struct _KtSink
{
  KtDbConfig db;
  char      *description;
  MYSQL     *conn;
};

KtSink *
kt_sink_new (const KtDbConfig *db)
{
  KtSink *self = g_new0 (KtSink, 1);

  self->db.host = g_strdup (db->host);
  self->db.port = db->port;
  self->db.user = g_strdup (db->user);
  self->db.password = g_strdup (db->password);
  self->db.database = g_strdup (db->database);
  self->db.socket = g_strdup (db->socket);
  if (db->socket != NULL)
    self->description = g_strdup_printf ("%s@%s/%s", db->user, db->socket, db->database);
  else
    self->description = g_strdup_printf ("%s@%s:%u/%s", db->user, db->host,
                                         db->port ? db->port : 3306, db->database);
  return self;
}

void
kt_sink_free (KtSink *self)
{
  if (self == NULL)
    return;
  g_clear_pointer (&self->conn, mysql_close);
  if (self->db.password != NULL)
    memset (self->db.password, 0, strlen (self->db.password));
  g_free (self->db.host);
  g_free (self->db.user);
  g_free (self->db.password);
  g_free (self->db.database);
  g_free (self->db.socket);
  g_free (self->description);
  g_free (self);
}

const char *
kt_sink_describe (KtSink *self)
{
  return self->description;
}

static gboolean
is_transient (unsigned int code)
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
    case ER_UNKNOWN_COM_ERROR:  /* MariaDB answers this while it shuts down */
      return TRUE;
    default:
      return FALSE;
    }
}

/* Sets @error from the connection's last error, prefixed by what we were
 * doing. A transient failure drops the connection: whatever state it had
 * (an open transaction) dies with it, and the next call reconnects. */
static void
set_mysql_error (KtSink *self, GError **error, const char *doing)
{
  unsigned int code = mysql_errno (self->conn);
  gboolean transient = is_transient (code);

  g_set_error (error, KT_ERROR, transient ? KT_ERROR_TRANSIENT : KT_ERROR_FATAL,
               "%s on %s: %s", doing, self->description, mysql_error (self->conn));
  if (transient)
    g_clear_pointer (&self->conn, mysql_close);
}

gboolean
kt_sink_connect (KtSink *self, GError **error)
{
  g_autoptr(MYSQL) conn = NULL;
  unsigned int connect_timeout = 5, rw_timeout = 60;
  my_bool off = 0;

  if (self->conn != NULL)
    return TRUE;

  conn = mysql_init (NULL);
  if (conn == NULL)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_INTERNAL,
                           "cannot allocate a MySQL connection");
      return FALSE;
    }
  /* Bounded waits: a server that hangs is a transient failure to report,
   * not a process stuck forever. Reconnection is ours, never silent: an
   * automatic reconnect would lose the open transaction without a word. */
  mysql_options (conn, MYSQL_OPT_CONNECT_TIMEOUT, &connect_timeout);
  mysql_options (conn, MYSQL_OPT_READ_TIMEOUT, &rw_timeout);
  mysql_options (conn, MYSQL_OPT_WRITE_TIMEOUT, &rw_timeout);
  mysql_options (conn, MYSQL_OPT_RECONNECT, &off);
  mysql_options (conn, MYSQL_SET_CHARSET_NAME, "utf8mb4");

  if (mysql_real_connect (conn, self->db.host, self->db.user, self->db.password,
                          self->db.database, self->db.port, self->db.socket,
                          0) == NULL)
    {
      unsigned int code = mysql_errno (conn);
      g_set_error (error, KT_ERROR,
                   is_transient (code) ? KT_ERROR_TRANSIENT : KT_ERROR_FATAL,
                   "cannot connect to MySQL at %s: %s", self->description,
                   mysql_error (conn));
      return FALSE;
    }
  self->conn = g_steal_pointer (&conn);

  /* READ COMMITTED: the fenced UPDATE reads the latest committed offset
   * either way; this only spares us InnoDB's gap locks on error_log. */
  if (mysql_query (self->conn,
                   "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED") != 0)
    {
      set_mysql_error (self, error, "cannot set the isolation level");
      g_clear_pointer (&self->conn, mysql_close);
      return FALSE;
    }
  return TRUE;
}

static gboolean
query (KtSink *self, const char *sql, const char *doing, GError **error)
{
  if (mysql_real_query (self->conn, sql, strlen (sql)) != 0)
    {
      set_mysql_error (self, error, doing);
      return FALSE;
    }
  return TRUE;
}

/* Appends @s to @out as a quoted, escaped SQL string literal. */
static void
append_quoted (KtSink *self, GString *out, const char *s)
{
  gsize len = strlen (s), at;

  g_string_append_c (out, '\'');
  at = out->len;
  g_string_set_size (out, at + 2 * len + 1);
  g_string_set_size (out, at + mysql_real_escape_string (self->conn, out->str + at,
                                                         s, len));
  g_string_append_c (out, '\'');
}

gboolean
kt_sink_has_schema (KtSink *self, gboolean *present, GError **error)
{
  g_autoptr(MYSQL_RES) res = NULL;
  MYSQL_ROW row;

  if (!kt_sink_connect (self, error))
    return FALSE;
  if (!query (self, "SELECT COUNT(*) FROM information_schema.tables "
                    "WHERE table_schema = DATABASE() "
                    "AND table_name IN ('error_log', 'kafka_offset')",
              "cannot look for the tables", error))
    return FALSE;
  res = mysql_store_result (self->conn);
  if (res == NULL || (row = mysql_fetch_row (res)) == NULL)
    {
      set_mysql_error (self, error, "cannot look for the tables");
      return FALSE;
    }
  *present = g_strcmp0 (row[0], "2") == 0;
  return TRUE;
}

gboolean
kt_sink_apply_schema (KtSink *self, GError **error)
{
  g_auto(GStrv) statements = NULL;

  if (!kt_sink_connect (self, error))
    return FALSE;
  /* schema.sql ends each statement with ';' at the end of a line. */
  statements = g_strsplit (kt_schema_sql, ";\n", -1);
  for (char **s = statements; *s != NULL; s++)
    {
      g_autoptr(GString) sql = g_string_new (NULL);
      g_auto(GStrv) lines = g_strsplit (*s, "\n", -1);

      for (char **l = lines; *l != NULL; l++)
        if (!g_str_has_prefix (g_strstrip (*l), "--") && **l != '\0')
          g_string_append_printf (sql, "%s\n", *l);
      if (sql->len == 0)
        continue;
      if (!query (self, sql->str, "cannot apply the schema", error))
        return FALSE;
    }
  return TRUE;
}

gboolean
kt_sink_load_offsets (KtSink *self, const char *job, const char *topic,
                      KtPartitionState *states, guint n_states, GError **error)
{
  g_autoptr(GString) sql = g_string_new (NULL);
  g_autoptr(GHashTable) stored = g_hash_table_new_full (g_direct_hash, g_direct_equal,
                                                        NULL, g_free);
  g_autoptr(MYSQL_RES) res = NULL;
  MYSQL_ROW row;

  if (!kt_sink_connect (self, error))
    return FALSE;
  g_string_append (sql, "SELECT `partition`, `offset` FROM kafka_offset WHERE job = ");
  append_quoted (self, sql, job);
  g_string_append (sql, " AND topic = ");
  append_quoted (self, sql, topic);
  if (!query (self, sql->str, "cannot read kafka_offset", error))
    return FALSE;
  res = mysql_store_result (self->conn);
  if (res == NULL)
    {
      set_mysql_error (self, error, "cannot read kafka_offset");
      return FALSE;
    }
  while ((row = mysql_fetch_row (res)) != NULL)
    {
      gint64 *offset = g_new (gint64, 1);
      *offset = g_ascii_strtoll (row[1], NULL, 10);
      g_hash_table_insert (stored, GINT_TO_POINTER (atoi (row[0])), offset);
    }
  for (guint i = 0; i < n_states; i++)
    {
      gint64 *offset = g_hash_table_lookup (stored, GINT_TO_POINTER (states[i].partition));
      states[i].stored = offset != NULL ? *offset : -1;
    }
  return TRUE;
}

gboolean
kt_sink_init_offset (KtSink *self, const char *job, const char *topic,
                     gint32 partition, gint64 offset, GError **error)
{
  g_autoptr(GString) sql = g_string_new (NULL);

  if (!kt_sink_connect (self, error))
    return FALSE;
  /* IGNORE: two writers starting together both try; the first one wins
   * and both then plan from the same stored row. */
  g_string_append (sql, "INSERT IGNORE INTO kafka_offset (job, topic, `partition`, `offset`) VALUES (");
  append_quoted (self, sql, job);
  g_string_append_c (sql, ',');
  append_quoted (self, sql, topic);
  g_string_append_printf (sql, ",%d,%" G_GINT64_FORMAT ")", partition, offset);
  return query (self, sql->str, "cannot create a kafka_offset row", error);
}

static void
rollback (KtSink *self)
{
  /* Best effort: if even this fails, the connection is gone, and a
   * transaction dies with its connection. */
  if (self->conn != NULL && mysql_real_query (self->conn, "ROLLBACK", 8) != 0)
    g_clear_pointer (&self->conn, mysql_close);
}

static gboolean
upsert_counts (KtSink *self, KtReducer *reducer, GError **error)
{
  g_autoptr(GArray) rows = kt_reducer_sorted (reducer);
  g_autoptr(GString) sql = g_string_new (NULL);

  for (guint start = 0; start < rows->len; start += UPSERT_ROWS)
    {
      guint end = MIN (rows->len, start + UPSERT_ROWS);

      g_string_assign (sql, "INSERT INTO error_log (log_time, log_count) VALUES ");
      for (guint i = start; i < end; i++)
        {
          const KtMinuteCount *mc = &g_array_index (rows, KtMinuteCount, i);
          char when[20];

          /* Both values are formatted from integers: nothing to escape. */
          kt_minute_format (mc->minute, when);
          g_string_append_printf (sql, "%s('%s',%" G_GUINT64_FORMAT ")",
                                  i > start ? "," : "", when, mc->count);
        }
      g_string_append (sql, " ON DUPLICATE KEY UPDATE log_count = log_count + VALUES(log_count)");
      if (!query (self, sql->str, "cannot write error_log", error))
        return FALSE;
    }
  return TRUE;
}

gboolean
kt_sink_commit (KtSink *self, const char *job, const char *topic,
                const GArray *ranges, KtReducer *reducer,
                KtCommitResult *result, gint32 *fenced_partition, GError **error)
{
  g_autoptr(GString) sql = g_string_new (NULL);
  g_autoptr(GString) where = g_string_new (NULL);

  *result = KT_COMMIT_FAILED;
  if (!kt_sink_connect (self, error))
    return FALSE;
  if (!query (self, "START TRANSACTION", "cannot start a transaction", error))
    return FALSE;

  g_string_append (where, " WHERE job = ");
  append_quoted (self, where, job);
  g_string_append (where, " AND topic = ");
  append_quoted (self, where, topic);

  /* Offsets first, in partition order (the plan's order): a second writer
   * on the same job blocks on the first row lock right here, and once the
   * first commits, sees that `offset` moved and backs off without having
   * touched error_log. */
  for (guint i = 0; i < ranges->len; i++)
    {
      const KtRange *r = &g_array_index (ranges, KtRange, i);

      g_string_printf (sql, "UPDATE kafka_offset SET `offset` = %" G_GINT64_FORMAT "%s"
                       " AND `partition` = %d AND `offset` = %" G_GINT64_FORMAT,
                       r->until, where->str, r->partition, r->from);
      if (!query (self, sql->str, "cannot update kafka_offset", error))
        {
          rollback (self);
          return FALSE;
        }
      if (mysql_affected_rows (self->conn) != 1)
        {
          /* 0 rows: another writer moved this partition past `from` after
           * we planned. Its counts are in; ours must not be. */
          rollback (self);
          *result = KT_COMMIT_FENCED;
          *fenced_partition = r->partition;
          return TRUE;
        }
    }

  if (!upsert_counts (self, reducer, error))
    {
      rollback (self);
      return FALSE;
    }

  if (mysql_real_query (self->conn, "COMMIT", 6) != 0)
    {
      unsigned int code = mysql_errno (self->conn);
      /* Lost while committing: the server may have committed or not. */
      if (code == CR_SERVER_LOST || code == CR_SERVER_GONE_ERROR
          || code == CR_SERVER_LOST_EXTENDED || code == ER_CONNECTION_KILLED)
        *result = KT_COMMIT_UNKNOWN;
      set_mysql_error (self, error, "cannot commit");
      if (*result == KT_COMMIT_FAILED)
        rollback (self);
      return FALSE;
    }
  *result = KT_COMMIT_DONE;
  return TRUE;
}
