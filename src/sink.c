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
#include "identity.h"
#include "ledger.h"
#include "parse.h"
#include "schema.h"

/* Rows per INSERT: keeps every statement far below max_allowed_packet. */
#define UPSERT_ROWS 1000

/* Every session's sql_mode: strict for every table, no zero dates. */

/* A migration's connection waits this long for an answer (an ALTER of a
 * big table): one hour. */
#define MIGRATION_IO_S 3600

struct _KtSink
{
  KtDbConfig db;
  char      *table;
  char      *member;
  char      *description;
  MYSQL     *conn;
  const KtIdentity *identity;  /* borrowed; NULL: nothing to claim */
  gboolean   claimed;          /* a commit of this process recorded it */
};


KtSink *
kt_sink_new (const KtDbConfig *db, const char *table)
{
  KtSink *self = g_new0 (KtSink, 1);

  self->table = g_strdup (table);
  kt_db_config_copy (&self->db, db);
  self->description = kt_db_describe (db);
  return self;
}

void
kt_sink_free (KtSink *self)
{
  if (self == NULL)
    return;
  g_clear_pointer (&self->conn, mysql_close);
  kt_db_config_clear (&self->db);
  g_free (self->table);
  g_free (self->member);
  g_free (self->description);
  g_free (self);
}

void
kt_sink_set_member (KtSink *self, const char *member)
{
  g_free (self->member);
  self->member = kt_schema_member (member);
}

const char *
kt_sink_describe (KtSink *self)
{
  return self->description;
}



/* Sets @error from the connection's last error, prefixed by what we were
 * doing. A transient failure drops the connection: whatever state it had
 * (an open transaction) dies with it, and the next call reconnects. */
static void
set_mysql_error (KtSink *self, GError **error, const char *doing)
{
  unsigned int code = mysql_errno (self->conn);
  gboolean conflict = code == ER_LOCK_DEADLOCK || code == ER_LOCK_WAIT_TIMEOUT;
  gboolean transient = kt_db_is_transient (code);

  /* A deadlock or lock wait only cost this transaction (the caller rolls
   * back): the connection is fine, and the same commit may be tried again. */
  g_set_error (error, KT_ERROR,
               conflict ? KT_ERROR_CONFLICT : transient ? KT_ERROR_TRANSIENT : KT_ERROR_FATAL,
               "%s on %s: %s", doing, self->description, mysql_error (self->conn));
  if (transient && !conflict)
    g_clear_pointer (&self->conn, mysql_close);
}


gboolean
kt_sink_connect (KtSink *self, GError **error)
{
  if (self->conn != NULL)
    return TRUE;
  self->conn = kt_db_open (&self->db, self->description, 5, 60, error);
  if (self->conn == NULL)
    return FALSE;

  /* READ COMMITTED: the fenced UPDATE reads the latest committed offset
   * either way; this only spares us InnoDB's gap locks on error_log. */
  if (mysql_query (self->conn,
                   "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED") != 0)
    {
      set_mysql_error (self, error, "cannot set the isolation level");
      g_clear_pointer (&self->conn, mysql_close);
      return FALSE;
    }
  /* At every connect, not only at start: a database that a newer ktally
   * migrated meanwhile is not written by this one. */
  if (!kt_schema_refuse_newer (self->conn, self->description, error))
    {
      g_clear_pointer (&self->conn, mysql_close);
      return FALSE;
    }
  return TRUE;
}

/* After a schema.c call failed with @local: a transient failure drops the
 * connection (the next call reconnects), as set_mysql_error() does. */
static gboolean
schema_failed (KtSink *self, GError *local, GError **error)
{
  if (g_error_matches (local, KT_ERROR, KT_ERROR_TRANSIENT))
    g_clear_pointer (&self->conn, mysql_close);
  g_propagate_error (error, local);
  return FALSE;
}

/* Creates @tables' tables where any is absent. */
static gboolean
ensure_tables (KtSink *self, KtTables tables, GError **error)
{
  gboolean complete;

  return kt_schema_complete (self->conn, self->description, tables, &complete, error)
         && (complete || kt_schema_create (self->conn, self->description, tables, error));
}

/* Brings the schema forward (schema.h), on a connection of its own: an
 * ALTER of a big table may take far longer than the sink's read timeout,
 * and the named lock lives as long as that connection. */
static gboolean
bring_forward (KtSink *self, GError **error)
{
  g_autoptr(MYSQL) conn = NULL;
  GError *local = NULL;
  int version;

  if (!kt_schema_version (self->conn, self->description, &version, &local))
    return schema_failed (self, local, error);
  if (version == KT_SCHEMA_VERSION)
    return TRUE;
  conn = kt_db_open (&self->db, self->description, 5, MIGRATION_IO_S, error);
  return conn != NULL && kt_schema_bring_forward (conn, self->description, error);
}

gboolean
kt_sink_check_schema (KtSink *self, GError **error)
{
  GError *local = NULL;

  if (!kt_sink_connect (self, error))
    return FALSE;
  if (!kt_schema_check_read_only (self->conn, self->description, &local))
    return schema_failed (self, local, error);
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

/* An INSERT of rows that this transaction found absent when it looked,
 * under locks that cannot cover a row that does not exist yet: a duplicate
 * key means another writer created the row since, so this transaction
 * decided on a stale view. That is a conflict (the caller rolls back and
 * commits again, and then sees the row), never a failure. */
static gboolean
insert_new_rows (KtSink *self, const char *sql, const char *doing, GError **error)
{
  if (mysql_real_query (self->conn, sql, strlen (sql)) == 0)
    return TRUE;
  if (mysql_errno (self->conn) != ER_DUP_ENTRY)
    {
      set_mysql_error (self, error, doing);
      return FALSE;
    }
  g_set_error (error, KT_ERROR, KT_ERROR_CONFLICT,
               "%s on %s: another writer created the same row at the same time (%s)",
               doing, self->description, mysql_error (self->conn));
  return FALSE;
}

/* Runs a SELECT and keeps its whole result (NULL, with @error, on failure). */
static MYSQL_RES *
select_rows (KtSink *self, const char *sql, const char *doing, GError **error)
{
  MYSQL_RES *res;

  if (!query (self, sql, doing, error))
    return NULL;
  res = mysql_store_result (self->conn);
  if (res == NULL)
    set_mysql_error (self, error, doing);
  return res;
}

/* Appends @s to @out as a quoted, escaped SQL string literal. */
static void
append_quoted (KtSink *self, GString *out, const char *s)
{
  kt_db_append_quoted (self->conn, out, s);
}

/* The type of @table in the database: "BASE TABLE", "VIEW", or NULL when
 * absent (then *@type is NULL and the call still succeeds). */
static gboolean
table_type (KtSink *self, const char *table, char **type, GError **error)
{
  g_autoptr(GString) sql = g_string_new ("SELECT table_type FROM information_schema.tables "
                                         "WHERE table_schema = DATABASE() AND table_name = ");
  g_autoptr(MYSQL_RES) res = NULL;
  MYSQL_ROW row;

  append_quoted (self, sql, table);
  res = select_rows (self, sql->str, "cannot look for the tables", error);
  if (res == NULL)
    return FALSE;
  row = mysql_fetch_row (res);
  *type = row != NULL ? g_strdup (row[0]) : NULL;
  return TRUE;
}


gboolean
kt_sink_prepare (KtSink *self, gboolean idempotent, GError **error)
{
  KtTables tables = idempotent ? KT_TABLES_IDEMPOTENT : KT_TABLES_COUNTS;
  g_autofree char *error_log = NULL;
  g_autofree char *target = NULL;
  gboolean is_view, complete;
  GError *local = NULL;

  if (!kt_sink_connect (self, error)
      || !table_type (self, "error_log", &error_log, error)
      || !table_type (self, self->table, &target, error))
    return FALSE;

  is_view = g_strcmp0 (error_log, "VIEW") == 0;
  /* A replay into a table of its own does not care whose error_log it is. */
  if (error_log != NULL && is_view != idempotent
      && (idempotent || g_str_equal (self->table, "error_log")))
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "%s: error_log is %s, so this database belongs to %s-mode jobs; "
                   "use another database for a %s job", self->description,
                   is_view ? "a view over idempotent chunks" : "a table",
                   is_view ? "idempotent" : "transactional",
                   idempotent ? "idempotent" : "transactional");
      return FALSE;
    }
  if (!idempotent && target != NULL && g_strcmp0 (target, "BASE TABLE") != 0)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "%s: %s is a view, not a table",
                   self->description, self->table);
      return FALSE;
    }

  /* Refused above before anything is touched; migrated first, so that the
   * tables created next (the latest .sql) join a database at their version. */
  if (!bring_forward (self, error))
    return FALSE;
  /* Whoever created them: a table of another shape is refused before
   * anything is created or a batch read, not after (exit 3), nor written
   * wrong (DATE minutes). Absent ones pass, and are created next. */
  if (!kt_schema_check_shape (self->conn, self->description, KT_TABLES_JOBS, &local)
      || !kt_schema_check_shape (self->conn, self->description, tables, &local)
      || (!idempotent && !kt_schema_check_counts_table (self->conn, self->description,
                                                         self->table, &local))
      || !ensure_tables (self, KT_TABLES_JOBS, &local)
      || !kt_schema_complete (self->conn, self->description, tables, &complete, &local))
    return schema_failed (self, local, error);
  if (!complete)
    {
      g_message ("creating ktally's %stables in %s",
                 idempotent ? "idempotent-mode " : "", self->description);
      if (!kt_schema_create (self->conn, self->description, tables, &local))
        return schema_failed (self, local, error);
    }
  if (!idempotent && target == NULL && g_strcmp0 (self->table, "error_log") != 0)
    {
      g_message ("creating table %s in %s", self->table, self->description);
      if (!kt_schema_create_counts_table (self->conn, self->description, self->table,
                                          &local))
        return schema_failed (self, local, error);
    }
  return TRUE;
}

gboolean
kt_sink_has_offsets (KtSink *self, gboolean *present, GError **error)
{
  g_autofree char *type = NULL;

  if (!kt_sink_connect (self, error) || !table_type (self, "kafka_offset", &type, error))
    return FALSE;
  *present = type != NULL;
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
  res = select_rows (self, sql->str, "cannot read kafka_offset", error);
  if (res == NULL)
    return FALSE;
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

      g_string_printf (sql, "INSERT INTO `%s` (log_time, log_count) VALUES ", self->table);
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
      if (!query (self, sql->str, "cannot write the counts", error))
        return FALSE;
    }
  return TRUE;
}

/* The fenced offset UPDATEs. Stops at the first partition whose offset
 * is no longer the range's `from` (0 rows: another writer moved it past
 * `from` after we planned; its counts are in, ours must not be) and names
 * it in *@fenced_partition; -1 when every row moved. */
static gboolean
update_offsets (KtSink *self, const char *job, const char *topic,
                const GArray *ranges, gint32 *fenced_partition, GError **error)
{
  g_autoptr(GString) sql = g_string_new (NULL);
  g_autoptr(GString) where = g_string_new (" WHERE job = ");

  append_quoted (self, where, job);
  g_string_append (where, " AND topic = ");
  append_quoted (self, where, topic);
  *fenced_partition = -1;
  for (guint i = 0; i < ranges->len; i++)
    {
      const KtRange *r = &g_array_index (ranges, KtRange, i);

      g_string_printf (sql, "UPDATE kafka_offset SET `offset` = %" G_GINT64_FORMAT "%s"
                       " AND `partition` = %d AND `offset` = %" G_GINT64_FORMAT,
                       r->until, where->str, r->partition, r->from);
      if (!query (self, sql->str, "cannot update kafka_offset", error))
        return FALSE;
      if (mysql_affected_rows (self->conn) != 1)
        {
          *fenced_partition = r->partition;
          return TRUE;
        }
    }
  return TRUE;
}

/* One ktally_batches row per range, in the caller's transaction. */
static gboolean
insert_batches (KtSink *self, const char *job, const char *topic,
                const GArray *ranges, const KtRangeStats *stats, GError **error)
{
  g_autoptr(GString) sql = g_string_new (
    "INSERT INTO ktally_batches (job, topic, `partition`, from_offset, until_offset, "
    "record_count, line_count, error_lines, malformed_lines, target, member) VALUES ");

  if (ranges->len == 0)
    return TRUE;
  for (guint i = 0; i < ranges->len; i++)
    {
      const KtRange *r = &g_array_index (ranges, KtRange, i);

      g_string_append (sql, i ? ",(" : "(");
      append_quoted (self, sql, job);
      g_string_append_c (sql, ',');
      append_quoted (self, sql, topic);
      g_string_append_printf (sql, ",%d,%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%"
                              G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT
                              ",%" G_GUINT64_FORMAT ",", r->partition, r->from, r->until,
                              stats[i].records, stats[i].lines, stats[i].errors,
                              stats[i].malformed);
      append_quoted (self, sql, self->table);
      g_string_append_c (sql, ',');
      append_quoted (self, sql, self->member != NULL ? self->member : "");
      g_string_append_c (sql, ')');
    }
  return query (self, sql->str, "cannot write ktally_batches", error);
}

gboolean
kt_sink_store_offsets (KtSink *self, const char *job, const char *topic,
                       const GArray *ranges, gint32 *fenced_partition, GError **error)
{
  *fenced_partition = -1;
  if (!kt_sink_connect (self, error)
      || !query (self, "START TRANSACTION", "cannot start a transaction", error))
    return FALSE;
  if (!update_offsets (self, job, topic, ranges, fenced_partition, error))
    {
      rollback (self);
      return FALSE;
    }
  if (*fenced_partition >= 0)
    {
      rollback (self);
      return TRUE;
    }
  return query (self, "COMMIT", "cannot commit the offsets", error);
}

/* Sends COMMIT. If the answer is lost with the connection, the server may
 * have committed or not: *@result says UNKNOWN, and the caller reads the
 * offsets back. */
void
kt_sink_set_identity (KtSink *self, const KtIdentity *identity)
{
  self->identity = identity;
  self->claimed = FALSE;
}

gboolean
kt_sink_check_identity (KtSink *self, gboolean share_table, GError **error)
{
  GError *local = NULL;

  g_return_val_if_fail (self->identity != NULL, FALSE);
  /* The database at this ktally's version, with the tables that say what
   * jobs are: nothing else is created before the comparison. */
  if (!kt_sink_connect (self, error) || !bring_forward (self, error))
    return FALSE;
  if (ensure_tables (self, KT_TABLES_JOBS, &local)
      && kt_schema_check_shape (self->conn, self->description, KT_TABLES_JOBS, &local)
      && kt_identity_check (self->conn, self->description, self->identity, share_table,
                            &local))
    return TRUE;
  return schema_failed (self, local, error);
}

/* In a commit's open transaction: the first one of this process records
 * (or, under row locks, compares once more) what the job is. */
static gboolean
claim_identity (KtSink *self, GError **error)
{
  GError *local = NULL;

  if (self->identity == NULL || self->claimed)
    return TRUE;
  if (kt_identity_claim (self->conn, self->description, self->identity, &local))
    return TRUE;
  return schema_failed (self, local, error);
}

static gboolean
finish_commit (KtSink *self, KtCommitResult *result, GError **error)
{
  if (mysql_real_query (self->conn, "COMMIT", 6) != 0)
    {
      unsigned int code = mysql_errno (self->conn);

      *result = code == CR_SERVER_LOST || code == CR_SERVER_GONE_ERROR
                || code == CR_SERVER_LOST_EXTENDED || code == ER_CONNECTION_KILLED
                ? KT_COMMIT_UNKNOWN : KT_COMMIT_FAILED;
      set_mysql_error (self, error, "cannot commit");
      if (*result == KT_COMMIT_FAILED)
        rollback (self);
      return FALSE;
    }
  *result = KT_COMMIT_DONE;
  self->claimed = TRUE;
  return TRUE;
}

gboolean
kt_sink_commit (KtSink *self, const char *job, const char *topic,
                const GArray *ranges, const KtRangeStats *stats, KtReducer *reducer,
                KtCommitResult *result, gint32 *fenced_partition, GError **error)
{
  *result = KT_COMMIT_FAILED;
  if (!kt_sink_connect (self, error))
    return FALSE;
  if (!query (self, "START TRANSACTION", "cannot start a transaction", error))
    return FALSE;

  /* Offsets first, in partition order (the plan's order): a second writer
   * on the same job blocks on the first row lock right here, and once the
   * first commits, sees that `offset` moved and backs off without having
   * touched the counts. */
  if (!update_offsets (self, job, topic, ranges, fenced_partition, error))
    {
      rollback (self);
      return FALSE;
    }
  if (*fenced_partition >= 0)
    {
      rollback (self);
      *result = KT_COMMIT_FENCED;
      return TRUE;
    }

  if (!claim_identity (self, error)
      || !upsert_counts (self, reducer, error)
      || !insert_batches (self, job, topic, ranges, stats, error))
    {
      rollback (self);
      return FALSE;
    }

  return finish_commit (self, result, error);
}

/* Appends " WHERE job = 'J' AND topic = 'T' AND `partition` IN (...)". */
static void
append_partitions_where (KtSink *self, GString *sql, const char *job, const char *topic,
                         const GArray *items, gsize stride)
{
  g_string_append (sql, " WHERE job = ");
  append_quoted (self, sql, job);
  g_string_append (sql, " AND topic = ");
  append_quoted (self, sql, topic);
  g_string_append (sql, " AND `partition` IN (");
  for (guint i = 0; i < items->len; i++)
    g_string_append_printf (sql, "%s%d", i ? "," : "",
                            *(const gint32 *) (const void *) (items->data + i * stride));
  g_string_append_c (sql, ')');
}

/* Reads the covered sets of @items' partitions (FOR UPDATE when @lock) into
 * @sets: partition -> KtCoverage*, absent where no row exists. */
static gboolean
read_coverage (KtSink *self, const char *job, const char *topic, const GArray *items,
               gsize stride, gboolean lock, GHashTable *sets, GError **error)
{
  g_autoptr(GString) sql = g_string_new ("SELECT `partition`, covered FROM ktally_coverage");
  g_autoptr(MYSQL_RES) res = NULL;
  MYSQL_ROW row;

  append_partitions_where (self, sql, job, topic, items, stride);
  if (lock)
    g_string_append (sql, " ORDER BY `partition` FOR UPDATE");
  res = select_rows (self, sql->str, "cannot read ktally_coverage", error);
  if (res == NULL)
    return FALSE;
  while ((row = mysql_fetch_row (res)) != NULL)
    {
      g_autofree char *what = g_strdup_printf ("ktally_coverage of %s/%s", topic, row[0]);
      KtCoverage *set = kt_coverage_parse (row[1], what, error);

      if (set == NULL)
        return FALSE;
      g_hash_table_replace (sets, GINT_TO_POINTER (atoi (row[0])), set);
    }
  return TRUE;
}

gboolean
kt_sink_load_coverage (KtSink *self, const char *job, const char *topic,
                       const GArray *ranges, GPtrArray *coverages, GError **error)
{
  g_autoptr(GHashTable) sets = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL,
                                                      (GDestroyNotify) kt_coverage_free);

  if (ranges->len > 0
      && (!kt_sink_connect (self, error)
          || !read_coverage (self, job, topic, ranges, sizeof (KtRange), FALSE, sets, error)))
    return FALSE;
  for (guint i = 0; i < ranges->len; i++)
    {
      gpointer key = GINT_TO_POINTER (g_array_index (ranges, KtRange, i).partition);
      KtCoverage *set = NULL;

      if (!g_hash_table_steal_extended (sets, key, NULL, (gpointer *) &set))
        set = kt_coverage_new ();
      g_ptr_array_add (coverages, set);
    }
  return TRUE;
}

static gboolean
flush_counts (KtSink *self, GString *sql, guint *rows, GError **error)
{
  *rows = 0;
  g_string_append (sql, " ON DUPLICATE KEY UPDATE log_count = log_count + VALUES(log_count)");
  return query (self, sql->str, "cannot write error_log_partition", error);
}

/* Adds every part's counts to error_log_partition, in (partition, minute)
 * order, UPSERT_ROWS at a time. */
static gboolean
add_counts (KtSink *self, const char *job, const char *topic, const GArray *parts,
            GError **error)
{
  g_autoptr(GString) sql = g_string_new (NULL);
  g_autoptr(GString) key = g_string_new (NULL);  /* 'job','topic', */
  guint rows = 0;

  append_quoted (self, key, job);
  g_string_append_c (key, ',');
  append_quoted (self, key, topic);
  g_string_append_c (key, ',');
  for (guint i = 0; i < parts->len; i++)
    {
      const KtCounted *part = &g_array_index (parts, KtCounted, i);
      g_autoptr(GArray) counts = kt_reducer_sorted (part->counts);

      for (guint j = 0; j < counts->len; j++)
        {
          const KtMinuteCount *mc = &g_array_index (counts, KtMinuteCount, j);
          char when[20];

          if (rows == 0)
            g_string_assign (sql, "INSERT INTO error_log_partition (job, topic, `partition`, "
                                  "log_time, log_count) VALUES ");
          kt_minute_format (mc->minute, when);
          g_string_append_printf (sql, "%s(%s%d,'%s',%" G_GUINT64_FORMAT ")", rows ? "," : "",
                                  key->str, part->range.partition, when, mc->count);
          if (++rows == UPSERT_ROWS && !flush_counts (self, sql, &rows, error))
            return FALSE;
        }
    }
  return rows == 0 || flush_counts (self, sql, &rows, error);
}

gboolean
kt_sink_write_counted (KtSink *self, const char *job, const char *topic,
                       const GArray *parts, gint32 *moved_partition, GError **error)
{
  g_autoptr(GHashTable) sets = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL,
                                                      (GDestroyNotify) kt_coverage_free);
  g_autoptr(GString) sql = g_string_new (NULL);

  *moved_partition = -1;
  if (parts->len == 0)
    return TRUE;
  if (!kt_sink_connect (self, error)
      || !query (self, "START TRANSACTION", "cannot start a transaction", error))
    return FALSE;

  /* 1. Lock each partition's covered set, in partition order, creating the
   *    rows of new partitions first: a row that does not exist locks
   *    nothing, and writers of one partition must queue here. */
  g_string_assign (sql, "INSERT IGNORE INTO ktally_coverage (job, topic, `partition`, covered) "
                        "VALUES ");
  for (guint i = 0; i < parts->len; i++)
    {
      g_string_append (sql, i ? ",(" : "(");
      append_quoted (self, sql, job);
      g_string_append_c (sql, ',');
      append_quoted (self, sql, topic);
      g_string_append_printf (sql, ",%d,'')", g_array_index (parts, KtCounted, i).range.partition);
    }
  if (!query (self, sql->str, "cannot write ktally_coverage", error)
      || !read_coverage (self, job, topic, parts, sizeof (KtCounted), TRUE, sets, error))
    goto fail;

  /* 2. Compare and set: a set that moved since we planned means another
   *    writer (or an earlier life of this one) counted some of our offsets. */
  for (guint i = 0; i < parts->len; i++)
    {
      const KtCounted *part = &g_array_index (parts, KtCounted, i);
      const KtCoverage *now = g_hash_table_lookup (sets,
                                                   GINT_TO_POINTER (part->range.partition));

      if (now == NULL || !kt_coverage_equal (now, part->expected))
        {
          *moved_partition = part->range.partition;
          rollback (self);
          return TRUE;
        }
    }

  /* 3. The counts, then the sets that include them, and the audit rows. */
  if (!claim_identity (self, error) || !add_counts (self, job, topic, parts, error))
    goto fail;
  {
    g_autoptr(GArray) read = g_array_new (FALSE, FALSE, sizeof (KtRange));
    g_autofree KtRangeStats *stats = g_new0 (KtRangeStats, parts->len);

    for (guint i = 0; i < parts->len; i++)
      {
        const KtCounted *part = &g_array_index (parts, KtCounted, i);
        g_array_append_val (read, part->range);
        stats[i] = *part->stats;
      }
    if (!insert_batches (self, job, topic, read, stats, error))
      goto fail;
  }
  for (guint i = 0; i < parts->len; i++)
    {
      const KtCounted *part = &g_array_index (parts, KtCounted, i);
      g_autofree char *text = kt_coverage_format (part->covered);

      g_string_assign (sql, "UPDATE ktally_coverage SET covered = ");
      append_quoted (self, sql, text);
      g_string_append (sql, " WHERE job = ");
      append_quoted (self, sql, job);
      g_string_append (sql, " AND topic = ");
      append_quoted (self, sql, topic);
      g_string_append_printf (sql, " AND `partition` = %d", part->range.partition);
      if (!query (self, sql->str, "cannot write ktally_coverage", error))
        goto fail;
    }
  /* A COMMIT whose answer is lost needs no special care here: if it
   * landed, the next plan reads the new sets and counts nothing twice. */
  if (!query (self, "COMMIT", "cannot commit the counts", error))
    return FALSE;
  self->claimed = TRUE;
  return TRUE;

fail:
  rollback (self);
  return FALSE;
}

void
kt_batch_row_clear (KtBatchRow *row)
{
  g_clear_pointer (&row->job, g_free);
  g_clear_pointer (&row->topic, g_free);
  g_clear_pointer (&row->target, g_free);
}

gboolean
kt_sink_compact_batches (KtSink *self, const char *job, const char *topic,
                         gint64 keep_seconds, GError **error)
{
  g_autoptr(GString) where = g_string_new (" WHERE job = ");
  g_autoptr(GString) sql = g_string_new (NULL);

  if (!kt_sink_connect (self, error))
    return FALSE;
  append_quoted (self, where, job);
  g_string_append (where, " AND topic = ");
  append_quoted (self, where, topic);
  g_string_append_printf (where, " AND committed_at < NOW(3) - INTERVAL %" G_GINT64_FORMAT
                          " SECOND", keep_seconds);

  /* The old rows of a partition are a prefix of its chain (commits on one
   * partition are serialised by its offset row), so folding them into one
   * row keeps the chain whole: it just starts with a longer link. */
  if (!query (self, "START TRANSACTION", "cannot start a transaction", error))
    return FALSE;
  g_string_printf (sql, "CREATE TEMPORARY TABLE IF NOT EXISTS ktally_fold AS "
                   "SELECT MIN(id) AS id, job, topic, `partition`, MIN(from_offset) AS from_offset, "
                   "MAX(until_offset) AS until_offset, SUM(record_count) AS record_count, "
                   "SUM(line_count) AS line_count, SUM(error_lines) AS error_lines, "
                   "SUM(malformed_lines) AS malformed_lines, MIN(target) AS target, "
                   "MAX(member) AS member, MAX(committed_at) AS committed_at "
                   "FROM ktally_batches%s "
                   "GROUP BY job, topic, `partition` HAVING COUNT(*) > 1 FOR UPDATE",
                   where->str);
  if (!query (self, "DROP TEMPORARY TABLE IF EXISTS ktally_fold", "cannot compact", error)
      || !query (self, sql->str, "cannot compact ktally_batches", error))
    goto fail;
  g_string_printf (sql, "DELETE b FROM ktally_batches b JOIN ktally_fold f USING "
                   "(job, topic, `partition`) WHERE b.committed_at <= f.committed_at");
  if (!query (self, sql->str, "cannot compact ktally_batches", error)
      || !query (self, "INSERT INTO ktally_batches (id, job, topic, `partition`, "
                 "from_offset, until_offset, record_count, line_count, error_lines, "
                 "malformed_lines, target, member, committed_at) SELECT id, job, topic, "
                 "`partition`, from_offset, until_offset, record_count, line_count, "
                 "error_lines, malformed_lines, target, member, committed_at FROM ktally_fold",
                 "cannot compact ktally_batches", error)
      || !query (self, "DROP TEMPORARY TABLE ktally_fold", "cannot compact", error))
    goto fail;
  return query (self, "COMMIT", "cannot commit the compaction", error);

fail:
  rollback (self);
  return FALSE;
}

gboolean
kt_sink_snapshot_begin (KtSink *self, GError **error)
{
  return kt_sink_connect (self, error)
         && query (self, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ",
                   "cannot set the isolation level", error)
         && query (self, "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY",
                   "cannot start a transaction", error);
}

void
kt_sink_snapshot_end (KtSink *self)
{
  rollback (self);  /* it read only */
}

gboolean
kt_sink_read_batches (KtSink *self, const char *job, GArray *rows, GError **error)
{
  g_autoptr(GString) sql = g_string_new (
    "SELECT job, topic, `partition`, from_offset, until_offset, error_lines, target "
    "FROM ktally_batches");
  g_autoptr(MYSQL_RES) res = NULL;
  MYSQL_ROW row;

  if (!kt_sink_connect (self, error))
    return FALSE;
  if (job != NULL)
    {
      g_string_append (sql, " WHERE job = ");
      append_quoted (self, sql, job);
    }
  g_string_append (sql, " ORDER BY job, topic, `partition`, from_offset, id");
  if (!query (self, sql->str, "cannot read ktally_batches", error))
    return FALSE;
  res = mysql_use_result (self->conn);
  if (res == NULL)
    {
      set_mysql_error (self, error, "cannot read ktally_batches");
      return FALSE;
    }
  while ((row = mysql_fetch_row (res)) != NULL)
    {
      KtBatchRow b = {
        g_strdup (row[0]), g_strdup (row[1]), atoi (row[2]),
        g_ascii_strtoll (row[3], NULL, 10), g_ascii_strtoll (row[4], NULL, 10),
        g_ascii_strtoull (row[5], NULL, 10), g_strdup (row[6]),
      };
      g_array_append_val (rows, b);
    }
  if (mysql_errno (self->conn) != 0)
    {
      set_mysql_error (self, error, "cannot read ktally_batches");
      return FALSE;
    }
  return TRUE;
}

gboolean
kt_sink_table_total (KtSink *self, const char *table, guint64 *total, GError **error)
{
  g_autofree char *sql = NULL;
  g_autoptr(MYSQL_RES) res = NULL;
  MYSQL_ROW row;

  g_return_val_if_fail (kt_is_identifier (table), FALSE);
  if (!kt_sink_connect (self, error))
    return FALSE;
  sql = g_strdup_printf ("SELECT COALESCE(SUM(log_count), 0) FROM `%s`", table);
  res = select_rows (self, sql, "cannot sum the counts", error);
  if (res == NULL)
    return FALSE;
  if ((row = mysql_fetch_row (res)) == NULL)
    {
      set_mysql_error (self, error, "cannot sum the counts");
      return FALSE;
    }
  *total = g_ascii_strtoull (row[0], NULL, 10);
  return TRUE;
}

gboolean
kt_sink_load_all_offsets (KtSink *self, GHashTable *offsets, GError **error)
{
  g_autoptr(MYSQL_RES) res = NULL;
  MYSQL_ROW row;

  if (!kt_sink_connect (self, error))
    return FALSE;
  res = select_rows (self, "SELECT job, topic, `partition`, `offset` FROM kafka_offset",
                     "cannot read kafka_offset", error);
  if (res == NULL)
    return FALSE;
  while ((row = mysql_fetch_row (res)) != NULL)
    {
      gint64 *offset = g_new (gint64, 1);
      *offset = g_ascii_strtoll (row[3], NULL, 10);
      g_hash_table_insert (offsets, g_strdup_printf ("%s\t%s\t%s", row[0], row[1], row[2]),
                           offset);
    }
  return TRUE;
}

gboolean
kt_sink_load_all_coverage (KtSink *self, GHashTable *covered, GError **error)
{
  g_autofree char *type = NULL;
  g_autoptr(MYSQL_RES) res = NULL;
  MYSQL_ROW row;

  if (!kt_sink_connect (self, error) || !table_type (self, "ktally_coverage", &type, error))
    return FALSE;
  if (type == NULL)
    return TRUE;
  res = select_rows (self, "SELECT job, topic, `partition`, covered FROM ktally_coverage",
                     "cannot read ktally_coverage", error);
  if (res == NULL)
    return FALSE;
  while ((row = mysql_fetch_row (res)) != NULL)
    {
      g_autofree char *key = g_strdup_printf ("%s\t%s\t%s", row[0], row[1], row[2]);
      KtCoverage *set = kt_coverage_parse (row[3], key, error);

      if (set == NULL)
        return FALSE;
      g_hash_table_insert (covered, g_steal_pointer (&key), set);
    }
  return TRUE;
}

gboolean
kt_sink_last_committers (KtSink *self, const char *job, const char *topic,
                         GHashTable *owners, GError **error)
{
  g_autoptr(GString) sql = g_string_new (
    "SELECT b.`partition`, b.member FROM ktally_batches b JOIN "
    "(SELECT `partition`, MAX(id) AS id FROM ktally_batches WHERE job = ");
  g_autoptr(MYSQL_RES) res = NULL;
  MYSQL_ROW row;

  if (!kt_sink_connect (self, error))
    return FALSE;
  append_quoted (self, sql, job);
  g_string_append (sql, " AND topic = ");
  append_quoted (self, sql, topic);
  g_string_append (sql, " GROUP BY `partition`) last USING (`partition`, id)");
  res = select_rows (self, sql->str, "cannot read ktally_batches", error);
  if (res == NULL)
    return FALSE;
  while ((row = mysql_fetch_row (res)) != NULL)
    g_hash_table_replace (owners, GINT_TO_POINTER (atoi (row[0])), g_strdup (row[1]));
  return TRUE;
}

gboolean
kt_sink_prepare_ledger (KtSink *self, GError **error)
{
  gboolean counts_complete, ledger_complete;
  GError *local = NULL;

  if (!kt_sink_connect (self, error) || !bring_forward (self, error))
    return FALSE;
  if (!kt_schema_check_shape (self->conn, self->description, KT_TABLES_JOBS, &local)
      || !kt_schema_check_shape (self->conn, self->description, KT_TABLES_COUNTS, &local)
      || !kt_schema_check_shape (self->conn, self->description, KT_TABLES_LEDGER, &local)
      || !ensure_tables (self, KT_TABLES_JOBS, &local)
      || !kt_schema_complete (self->conn, self->description, KT_TABLES_COUNTS,
                           &counts_complete, &local)
      || !kt_schema_complete (self->conn, self->description, KT_TABLES_LEDGER,
                              &ledger_complete, &local))
    return schema_failed (self, local, error);
  if (!counts_complete || !ledger_complete)
    {
      g_message ("creating ktally's ledger tables in %s", self->description);
      if (!kt_schema_create (self->conn, self->description, KT_TABLES_COUNTS, &local)
          || !kt_schema_create (self->conn, self->description, KT_TABLES_LEDGER, &local))
        return schema_failed (self, local, error);
    }
  return TRUE;
}

/* Appends "'a','b',..." for the strings of @items[from, to). */
static void
append_quoted_list (KtSink *self, GString *sql, GPtrArray *items, guint from, guint to)
{
  for (guint i = from; i < to; i++)
    {
      if (i > from)
        g_string_append_c (sql, ',');
      append_quoted (self, sql, items->pdata[i]);
    }
}

/* Reads (and locks) the balances of the batch's accounts, and marks the
 * txns the database already decided. IN lists go by 500. */
static gboolean
load_ledger_state (KtSink *self, KtLedgerBatch *batch, GError **error)
{
  g_autoptr(GPtrArray) accounts = kt_ledger_batch_accounts (batch);
  g_autoptr(GPtrArray) txns = kt_ledger_batch_txns (batch);
  g_autoptr(GString) sql = g_string_new (NULL);

  for (guint at = 0; at < accounts->len; at += 500)
    {
      g_autoptr(MYSQL_RES) res = NULL;
      MYSQL_ROW row;

      g_string_assign (sql, "SELECT account, balance FROM account_balance WHERE account IN (");
      append_quoted_list (self, sql, accounts, at, MIN (accounts->len, at + 500));
      /* Account order (the list is sorted): writers lock rows in one order. */
      g_string_append (sql, ") ORDER BY account FOR UPDATE");
      res = select_rows (self, sql->str, "cannot read account_balance", error);
      if (res == NULL)
        return FALSE;
      while ((row = mysql_fetch_row (res)) != NULL)
        {
          KtAmount balance;
          if (!kt_amount_parse (row[1], &balance, error)
              || !kt_ledger_batch_set_balance (batch, row[0], balance, error))
            {
              g_prefix_error (error, "account_balance of '%s': ", row[0]);
              return FALSE;
            }
        }
    }
  for (guint at = 0; at < txns->len; at += 500)
    {
      g_autoptr(MYSQL_RES) res = NULL;
      MYSQL_ROW row;

      g_string_assign (sql, "SELECT txn FROM ledger_applied WHERE txn IN (");
      append_quoted_list (self, sql, txns, at, MIN (txns->len, at + 500));
      g_string_append (sql, ") UNION ALL SELECT txn FROM ledger_rejected WHERE txn IN (");
      append_quoted_list (self, sql, txns, at, MIN (txns->len, at + 500));
      g_string_append (sql, ") LOCK IN SHARE MODE");
      res = select_rows (self, sql->str, "cannot read ledger_applied", error);
      if (res == NULL)
        return FALSE;
      while ((row = mysql_fetch_row (res)) != NULL)
        if (!kt_ledger_batch_mark_applied (batch, row[0], error))
          return FALSE;
    }
  return TRUE;
}

/* Appends the balance rows of @balances whose is_new is @is_new to @sql
 * ("(account,balance),..."), from @at; returns where it stopped. */
static guint
append_balances (KtSink *self, GString *sql, const GArray *balances, gboolean is_new,
                 guint at, guint *n_rows)
{
  for (*n_rows = 0; at < balances->len && *n_rows < UPSERT_ROWS; at++)
    {
      const KtLedgerBalance *b = &g_array_index (balances, KtLedgerBalance, at);
      char amount[32];

      if (b->is_new != is_new)
        continue;
      kt_amount_format (b->after, amount);
      g_string_append (sql, (*n_rows)++ > 0 ? ",(" : "(");
      append_quoted (self, sql, b->account);
      g_string_append_printf (sql, ",%s)", amount);
    }
  return at;
}

/* Writes the applied batch: balances, applied and rejected txns.
 *
 * The balances of accounts that had rows were read FOR UPDATE: those rows
 * are ours until COMMIT, so overwriting them is exact. An account that had
 * no row was locked by nothing (READ COMMITTED takes no gap locks), and a
 * second writer may have created it meanwhile from the same 0: a plain
 * INSERT makes that a duplicate key, hence a conflict that commits the
 * batch again, which then finds the row and locks it. The same holds for
 * txns that two writers both found undecided (one txn on two partitions).
 * Never an upsert over a row we did not lock: that lost updates. */
static gboolean
write_ledger (KtSink *self, const char *topic, KtLedgerBatch *batch, GError **error)
{
  const GArray *balances = kt_ledger_batch_balances (batch);
  const GArray *lists[2] = { kt_ledger_batch_applied (batch), kt_ledger_batch_rejected (batch) };
  g_autoptr(GString) sql = g_string_new (NULL);

  for (int is_new = 0; is_new < 2; is_new++)
    for (guint at = 0, n_rows; at < balances->len;)
      {
        g_string_assign (sql, "INSERT INTO account_balance (account, balance) VALUES ");
        at = append_balances (self, sql, balances, is_new, at, &n_rows);
        if (n_rows == 0)
          break;
        if (is_new)
          {
            if (!insert_new_rows (self, sql->str, "cannot create account_balance rows", error))
              return FALSE;
            continue;
          }
        g_string_append (sql, " ON DUPLICATE KEY UPDATE balance = VALUES(balance), "
                              "updated_at = CURRENT_TIMESTAMP(3)");
        if (!query (self, sql->str, "cannot write account_balance", error))
          return FALSE;
      }

  for (int l = 0; l < 2; l++)
    for (guint at = 0; at < lists[l]->len; at += UPSERT_ROWS)
      {
        g_string_assign (sql, l == 0
          ? "INSERT INTO ledger_applied (txn, account, amount, balance, ts, topic, `partition`, `offset`) VALUES "
          : "INSERT INTO ledger_rejected (txn, account, amount, reason, ts, topic, `partition`, `offset`) VALUES ");
        for (guint i = at; i < MIN (lists[l]->len, at + UPSERT_ROWS); i++)
          {
            const KtLedgerEntry *e = &g_array_index (lists[l], KtLedgerEntry, i);
            char amount[32], balance[32];

            kt_amount_format (e->amount, amount);
            kt_amount_format (e->balance, balance);
            g_string_append (sql, i > at ? ",(" : "(");
            append_quoted (self, sql, e->txn);
            g_string_append_c (sql, ',');
            append_quoted (self, sql, e->account);
            g_string_append_printf (sql, ",%s,", amount);
            if (l == 0)
              g_string_append (sql, balance);
            else
              append_quoted (self, sql, kt_ledger_reject_to_string (e->reason));
            g_string_append_c (sql, ',');
            append_quoted (self, sql, e->ts);
            g_string_append_c (sql, ',');
            append_quoted (self, sql, topic);
            g_string_append_printf (sql, ",%d,%" G_GINT64_FORMAT ")", e->partition, e->offset);
          }
        if (!insert_new_rows (self, sql->str, l == 0 ? "cannot write ledger_applied"
                                                     : "cannot write ledger_rejected", error))
          return FALSE;
      }
  return TRUE;
}

gboolean
kt_sink_commit_ledger (KtSink *self, const char *job, const char *topic,
                       const GArray *ranges, const KtRangeStats *stats,
                       KtLedgerBatch *batch, guint workers, KtCommitResult *result,
                       gint32 *fenced_partition, GError **error)
{
  *result = KT_COMMIT_FAILED;
  if (!kt_sink_connect (self, error)
      || !query (self, "START TRANSACTION", "cannot start a transaction", error))
    return FALSE;

  /* The fence first, exactly as for the counts: a second writer waits on
   * the offset rows, then backs off before reading a single balance. */
  if (!update_offsets (self, job, topic, ranges, fenced_partition, error))
    goto fail;
  if (*fenced_partition >= 0)
    {
      rollback (self);
      *result = KT_COMMIT_FENCED;
      return TRUE;
    }
  if (!claim_identity (self, error)
      || !load_ledger_state (self, batch, error)
      || !kt_ledger_batch_apply (batch, workers, error)
      || !write_ledger (self, topic, batch, error)
      || !insert_batches (self, job, topic, ranges, stats, error))
    goto fail;

  return finish_commit (self, result, error);

fail:
  rollback (self);
  return FALSE;
}
