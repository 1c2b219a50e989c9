/* offsets.c - kafka_offset and the audit trail (offsets.h). */
#include "offsets.h"

#include <stdlib.h>
#include "db-mysql.h"
#include "mysql-autocleanups.h"
#include "job-spec.h"
#include "error.h"
#include "names.h"

void
kt_batch_row_clear (KtBatchRow *row)
{
  g_clear_pointer (&row->job, g_free);
  g_clear_pointer (&row->topic, g_free);
  g_clear_pointer (&row->target, g_free);
}

gboolean
kt_offsets_present (KtDb *db, gboolean *present, GError **error)
{
  g_autofree char *type = NULL;

  if (!kt_db_table_type (db, "kafka_offset", &type, error))
    return FALSE;
  *present = type != NULL;
  return TRUE;
}

/* Appends " WHERE job = 'J' AND topic = 'T'". */
static void
where_job (KtDb *db, GString *sql, const char *job, const char *topic)
{
  g_string_append (sql, " WHERE job = ");
  kt_db_quote (db, sql, job);
  g_string_append (sql, " AND topic = ");
  kt_db_quote (db, sql, topic);
}

gboolean
kt_offsets_load (KtDb *db, const char *job, const char *topic, KtPartitionState *states,
                 guint n_states, GError **error)
{
  g_autoptr(GString) sql = g_string_new ("SELECT `partition`, `offset` FROM kafka_offset");
  g_autoptr(GHashTable) stored = g_hash_table_new_full (g_direct_hash, g_direct_equal,
                                                        NULL, g_free);
  g_autoptr(MYSQL_RES) res = NULL;
  MYSQL_ROW row;

  if (!kt_db_connect (db, error))
    return FALSE;
  where_job (db, sql, job, topic);
  res = kt_db_rows (db, sql->str, "cannot read kafka_offset", error);
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
kt_offsets_init_many (KtDb *db, const char *job, const char *topic, const gint32 *partitions,
                      const gint64 *offsets, guint n, GError **error)
{
  g_autoptr(GString) sql = g_string_new (
    "INSERT IGNORE INTO kafka_offset (job, topic, `partition`, `offset`) VALUES ");
  g_autoptr(GString) quoted = g_string_new (NULL);

  if (n == 0)
    return TRUE;
  if (!kt_db_connect (db, error))
    return FALSE;
  /* IGNORE: two writers starting together both try; the first one wins
   * and both then plan from the same stored row. One statement for all
   * the new partitions: a commit each cost ~0.8 ms, 200 ms before a
   * 256-partition job's first batch. */
  kt_db_quote (db, quoted, job);
  g_string_append_c (quoted, ',');
  kt_db_quote (db, quoted, topic);
  for (guint i = 0; i < n; i++)
    g_string_append_printf (sql, "%s(%s,%d,%" G_GINT64_FORMAT ")", i > 0 ? "," : "",
                            quoted->str, partitions[i], offsets[i]);
  return kt_db_run (db, sql->str, "cannot create a kafka_offset row", error);
}

/* Appends "(job, topic, `partition`) IN (('j','t',0),...)" for the ranges
 * that move; returns how many. The rows are named by their whole key, so
 * InnoDB locks only these (a scan of the job's rows would lock the
 * partitions of other writers of the job). */
static guint
append_keys (KtDb *db, GString *sql, const char *job, const char *topic, const GArray *ranges)
{
  g_autoptr(GString) quoted = g_string_new (NULL);
  guint n = 0;

  kt_db_quote (db, quoted, job);
  g_string_append_c (quoted, ',');
  kt_db_quote (db, quoted, topic);
  g_string_append (sql, "(job, topic, `partition`) IN (");
  for (guint i = 0; i < ranges->len; i++)
    {
      const KtRange *r = &g_array_index (ranges, KtRange, i);

      /* A range a cap left empty moves nothing. */
      if (r->until != r->from)
        g_string_append_printf (sql, "%s(%s,%d)", n++ ? "," : "", quoted->str, r->partition);
    }
  g_string_append_c (sql, ')');
  return n;
}

/* Two statements for every partition of the batch, not two per partition
 * (a round trip each cost 256 per batch at 256 partitions): the rows
 * locked and read, compared here with where the batch started, then moved
 * together. */
gboolean
kt_offsets_fence (KtDb *db, const char *job, const char *topic, const GArray *ranges,
                  gint32 *fenced_partition, GError **error)
{
  g_autoptr(GString) sql = g_string_new ("SELECT `partition`, `offset` FROM kafka_offset WHERE ");
  g_autoptr(GHashTable) now = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL,
                                                     g_free);
  g_autoptr(MYSQL_RES) res = NULL;
  MYSQL_ROW row;

  *fenced_partition = -1;
  if (append_keys (db, sql, job, topic, ranges) == 0)
    return TRUE;
  g_string_append (sql, " ORDER BY `partition` FOR UPDATE");
  res = kt_db_rows (db, sql->str, "cannot read kafka_offset", error);
  if (res == NULL)
    return FALSE;
  while ((row = mysql_fetch_row (res)) != NULL)
    {
      gint64 *offset = g_new (gint64, 1);
      *offset = g_ascii_strtoll (row[1], NULL, 10);
      g_hash_table_insert (now, GINT_TO_POINTER (atoi (row[0])), offset);
    }
  /* The fence: every partition still where this batch found it. */
  for (guint i = 0; i < ranges->len; i++)
    {
      const KtRange *r = &g_array_index (ranges, KtRange, i);
      const gint64 *at = g_hash_table_lookup (now, GINT_TO_POINTER (r->partition));

      if (r->until != r->from && (at == NULL || *at != r->from))
        {
          *fenced_partition = r->partition;
          return TRUE;
        }
    }
  g_string_assign (sql, "UPDATE kafka_offset SET `offset` = CASE `partition`");
  for (guint i = 0; i < ranges->len; i++)
    {
      const KtRange *r = &g_array_index (ranges, KtRange, i);
      if (r->until != r->from)
        g_string_append_printf (sql, " WHEN %d THEN %" G_GINT64_FORMAT, r->partition, r->until);
    }
  g_string_append (sql, " END");
  kt_offsets_set_anchors (sql, ranges);
  g_string_append (sql, " WHERE ");
  append_keys (db, sql, job, topic, ranges);
  return kt_db_run (db, sql->str, "cannot update kafka_offset", error);
}

void
kt_offsets_set_anchors (GString *sql, const GArray *ranges)
{
  static const char *const columns[] = { "anchor_offset", "anchor_time", "anchor_hash" };
  gboolean any = FALSE;

  for (guint i = 0; i < ranges->len; i++)
    any |= g_array_index (ranges, KtRange, i).anchor.set;
  if (!any)
    return;
  /* One CASE a column; a partition whose range read no record (holes
   * only, or a cap left it empty) keeps the anchor it had. */
  for (guint c = 0; c < G_N_ELEMENTS (columns); c++)
    {
      g_string_append_printf (sql, ", %s = CASE `partition`", columns[c]);
      for (guint i = 0; i < ranges->len; i++)
        {
          const KtRange *r = &g_array_index (ranges, KtRange, i);

          if (!r->anchor.set)
            continue;
          g_string_append_printf (sql, " WHEN %d THEN ", r->partition);
          if (c == 0)
            g_string_append_printf (sql, "%" G_GINT64_FORMAT, r->anchor.offset);
          else if (c == 1)
            g_string_append_printf (sql, "%" G_GINT64_FORMAT, r->anchor.timestamp);
          else
            g_string_append_printf (sql, "%" G_GUINT64_FORMAT, r->anchor.hash);
        }
      g_string_append_printf (sql, " ELSE %s END", columns[c]);
    }
}

gboolean
kt_offsets_anchors (KtDb *db, const char *table, const char *job, const char *topic,
                    GHashTable *anchors, GError **error)
{
  g_autoptr(GString) sql = g_string_new (NULL);
  g_autoptr(MYSQL_RES) res = NULL;
  MYSQL_ROW row;

  g_return_val_if_fail (kt_is_identifier (table), FALSE);
  if (!kt_db_connect (db, error))
    return FALSE;
  g_string_printf (sql, "SELECT `partition`, anchor_offset, anchor_time, anchor_hash FROM `%s`",
                   table);
  where_job (db, sql, job, topic);
  g_string_append (sql, " AND anchor_offset IS NOT NULL");
  res = kt_db_rows (db, sql->str, "cannot read the anchors", error);
  if (res == NULL)
    return FALSE;
  while ((row = mysql_fetch_row (res)) != NULL)
    {
      KtAnchor *a = g_new (KtAnchor, 1);

      *a = (KtAnchor) { TRUE, g_ascii_strtoll (row[1], NULL, 10),
                        row[2] != NULL ? g_ascii_strtoll (row[2], NULL, 10) : -1,
                        row[3] != NULL ? g_ascii_strtoull (row[3], NULL, 10) : 0 };
      g_hash_table_replace (anchors, GINT_TO_POINTER (atoi (row[0])), a);
    }
  return TRUE;
}

gboolean
kt_offsets_drop_anchors (KtDb *db, const char *job, const char *topic, const GArray *ranges,
                         GError **error)
{
  g_autoptr(GString) sql = g_string_new ("UPDATE kafka_offset SET anchor_offset = NULL, "
                                         "anchor_time = NULL, anchor_hash = NULL WHERE ");

  if (append_keys (db, sql, job, topic, ranges) == 0)
    return TRUE;
  return kt_db_run (db, sql->str, "cannot update kafka_offset", error);
}

/* kt_offsets_record(), and with @skipped kt_offsets_record_skips() (@stats
 * NULL: none read). */
static gboolean
record_rows (KtDb *db, const char *job, const char *topic, const char *target,
             const char *member, const GArray *ranges, const KtRangeStats *stats,
             gboolean skipped, gint64 *first_id, GError **error)
{
  g_autoptr(GString) sql = g_string_new (
    "INSERT INTO ktally_batches (job, topic, `partition`, from_offset, until_offset, "
    "record_count, line_count, error_lines, malformed_lines, skipped, target, member) VALUES ");
  guint rows = 0;

  for (guint i = 0; i < ranges->len; i++)
    {
      const KtRange *r = &g_array_index (ranges, KtRange, i);
      KtRangeStats none = { 0 };
      const KtRangeStats *st = stats != NULL ? &stats[i] : &none;

      if (r->until == r->from)
        continue;
      g_string_append (sql, rows++ ? ",(" : "(");
      kt_db_quote (db, sql, job);
      g_string_append_c (sql, ',');
      kt_db_quote (db, sql, topic);
      g_string_append_printf (sql, ",%d,%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%"
                              G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT
                              ",%" G_GUINT64_FORMAT ",%d,", r->partition, r->from, r->until,
                              st->records, st->lines, st->errors, st->malformed, skipped);
      kt_db_quote (db, sql, target);
      g_string_append_c (sql, ',');
      kt_db_quote (db, sql, member != NULL ? member : "");
      g_string_append_c (sql, ')');
    }
  if (first_id != NULL)
    *first_id = 0;
  if (rows == 0)
    return TRUE;
  if (!kt_db_run (db, sql->str, "cannot write ktally_batches", error))
    return FALSE;
  /* One INSERT of many rows: LAST_INSERT_ID() is its first row's id. */
  if (first_id != NULL)
    *first_id = (gint64) mysql_insert_id (kt_db_connection (db));
  return TRUE;
}

gboolean
kt_offsets_record (KtDb *db, const char *job, const char *topic, const char *target,
                   const char *member, const GArray *ranges, const KtRangeStats *stats,
                   gint64 *first_id, GError **error)
{
  return record_rows (db, job, topic, target, member, ranges, stats, FALSE, first_id, error);
}

gboolean
kt_offsets_record_skips (KtDb *db, const char *job, const char *topic, const char *target,
                         const char *member, const GArray *ranges, GError **error)
{
  return record_rows (db, job, topic, target, member, ranges, NULL, TRUE, NULL, error);
}

gboolean
kt_offsets_store (KtDb *db, const char *job, const char *topic, const GArray *ranges,
                  gint32 *fenced_partition, GError **error)
{
  KtCommitResult result;

  *fenced_partition = -1;
  if (!kt_db_begin (db, error))
    return FALSE;
  if (!kt_offsets_fence (db, job, topic, ranges, fenced_partition, error))
    {
      kt_db_abort (db);
      return FALSE;
    }
  if (*fenced_partition >= 0)
    {
      kt_db_abort (db);
      return TRUE;
    }
  /* Lost answer or not: the next plan reads the offsets back. */
  return kt_db_finish (db, &result, error);
}

gboolean
kt_offsets_compact (KtDb *db, const char *job, const char *topic,
                         gint64 keep_seconds, GError **error)
{
  g_autoptr(GString) where = g_string_new (" WHERE job = ");
  g_autoptr(GString) sql = g_string_new (NULL);
  g_autoptr(MYSQL_RES) locked = NULL;

  if (!kt_db_connect (db, error))
    return FALSE;
  kt_db_quote (db, where, job);
  g_string_append (where, " AND topic = ");
  kt_db_quote (db, where, topic);
  /* One cutoff for the statements below, which lock and then fold. */
  g_string_append (where, " AND committed_at < @kt_fold_cutoff");
  g_string_printf (sql, "SET @kt_fold_cutoff = NOW(3) - INTERVAL %" G_GINT64_FORMAT " SECOND",
                   keep_seconds);

  /* The old rows of a partition are a prefix of its chain (commits on one
   * partition are serialised by its offset row, so its ids and times are
   * in chain order), so folding them into one row keeps the chain whole:
   * it just starts with a longer link. A skip (a range a reset moved past)
   * is never folded: a recount must still see where it is, and a folded
   * row must hold only what was counted, so that reading its range again
   * gives what it recorded. So a partition's old rows fold into one row
   * per run between skips (`run`: the skips up to the row), each skip
   * staying as it is. A run with a skip past the log's end (a row ending
   * below its start) goes back down: its link runs from its first row's
   * start to its last row's end, in commit order, not from the lowest
   * offset to the highest. */
  if (!kt_db_run (db, sql->str, "cannot compact", error)
      || !kt_db_run (db, "START TRANSACTION", "cannot start a transaction", error))
    return FALSE;
  g_string_printf (sql, "SELECT COUNT(*) FROM ktally_batches%s FOR UPDATE", where->str);
  locked = kt_db_rows (db, sql->str, "cannot compact ktally_batches", error);
  if (locked == NULL)
    goto fail;
  g_string_printf (sql, "CREATE TEMPORARY TABLE IF NOT EXISTS ktally_fold AS "
                   "SELECT MIN(id) AS id, MAX(id) AS last_id, job, topic, `partition`, "
                   "IF(SUM(until_offset < from_offset) > 0, CAST(SUBSTRING_INDEX(GROUP_CONCAT("
                   "from_offset ORDER BY id), ',', 1) AS SIGNED), MIN(from_offset)) AS from_offset, "
                   "IF(SUM(until_offset < from_offset) > 0, CAST(SUBSTRING_INDEX(GROUP_CONCAT("
                   "until_offset ORDER BY id DESC), ',', 1) AS SIGNED), MAX(until_offset)) "
                   "AS until_offset, SUM(record_count) AS record_count, "
                   "SUM(line_count) AS line_count, SUM(error_lines) AS error_lines, "
                   "SUM(malformed_lines) AS malformed_lines, MIN(target) AS target, "
                   "MAX(member) AS member, MAX(committed_at) AS committed_at "
                   "FROM (SELECT *, SUM(skipped) OVER (PARTITION BY `partition` ORDER BY id) "
                   "AS run FROM ktally_batches%s) old WHERE NOT skipped "
                   "GROUP BY job, topic, `partition`, run HAVING COUNT(*) > 1",
                   where->str);
  if (!kt_db_run (db, "DROP TEMPORARY TABLE IF EXISTS ktally_fold", "cannot compact", error)
      || !kt_db_run (db, sql->str, "cannot compact ktally_batches", error))
    goto fail;
  /* A run's rows are the partition's rows from its first id to its last:
   * none of another run, nor a newer row, has an id between. */
  g_string_printf (sql, "DELETE b FROM ktally_batches b JOIN ktally_fold f USING "
                   "(job, topic, `partition`) WHERE b.id BETWEEN f.id AND f.last_id");
  if (!kt_db_run (db, sql->str, "cannot compact ktally_batches", error)
      || !kt_db_run (db, "INSERT INTO ktally_batches (id, job, topic, `partition`, "
                 "from_offset, until_offset, record_count, line_count, error_lines, "
                 "malformed_lines, target, member, committed_at) SELECT id, job, topic, "
                 "`partition`, from_offset, until_offset, record_count, line_count, "
                 "error_lines, malformed_lines, target, member, committed_at FROM ktally_fold",
                 "cannot compact ktally_batches", error)
      || !kt_db_run (db, "DROP TEMPORARY TABLE ktally_fold", "cannot compact", error))
    goto fail;
  return kt_db_run (db, "COMMIT", "cannot commit the compaction", error);

fail:
  kt_db_abort (db);
  return FALSE;
}

gboolean
kt_offsets_read_batches (KtDb *db, const char *job, GArray *rows, GError **error)
{
  g_autoptr(GString) sql = g_string_new (
    "SELECT job, topic, `partition`, from_offset, until_offset, error_lines, target "
    "FROM ktally_batches");
  g_autoptr(MYSQL_RES) res = NULL;
  MYSQL_ROW row;

  if (!kt_db_connect (db, error))
    return FALSE;
  if (job != NULL)
    {
      g_string_append (sql, " WHERE job = ");
      kt_db_quote (db, sql, job);
    }
  /* Commit order: a partition's chain is the order its batches committed
   * in, which is the order of their offsets except after a skip past the
   * log's end (a recreated topic), where the chain goes on lower. */
  g_string_append (sql, " ORDER BY job, topic, `partition`, id");
  if (!kt_db_run (db, sql->str, "cannot read ktally_batches", error))
    return FALSE;
  res = mysql_use_result (kt_db_connection (db));
  if (res == NULL)
    {
      g_set_error (error, KT_ERROR, kt_db_error_code (kt_db_connection (db)),
                   "cannot read ktally_batches on %s: %s", kt_db_name (db),
                   mysql_error (kt_db_connection (db)));
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
  if (mysql_errno (kt_db_connection (db)) != 0)
    {
      g_set_error (error, KT_ERROR, kt_db_error_code (kt_db_connection (db)),
                   "cannot read ktally_batches on %s: %s", kt_db_name (db),
                   mysql_error (kt_db_connection (db)));
      return FALSE;
    }
  return TRUE;
}

gboolean
kt_offsets_load_all (KtDb *db, GHashTable *offsets, GError **error)
{
  g_autoptr(MYSQL_RES) res = NULL;
  MYSQL_ROW row;

  if (!kt_db_connect (db, error))
    return FALSE;
  res = kt_db_rows (db, "SELECT job, topic, `partition`, `offset` FROM kafka_offset",
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
kt_offsets_mover (KtDb *db, const char *job, const char *topic, gint32 partition, gint64 from,
                  gint64 to, char **member, GError **error)
{
  g_autoptr(GString) sql = g_string_new ("SELECT member FROM ktally_batches");
  g_autoptr(MYSQL_RES) res = NULL;
  MYSQL_ROW row;

  *member = NULL;
  where_job (db, sql, job, topic);
  /* by_chain's whole prefix: (job, topic, partition, from_offset). */
  g_string_append_printf (sql, " AND `partition` = %d AND from_offset = %" G_GINT64_FORMAT
                          " AND until_offset = %" G_GINT64_FORMAT " ORDER BY id DESC LIMIT 1",
                          partition, from, to);
  res = kt_db_rows (db, sql->str, "cannot read ktally_batches", error);
  if (res == NULL)
    return FALSE;
  row = mysql_fetch_row (res);
  if (row != NULL && row[0] != NULL)
    *member = g_strdup (row[0]);
  return TRUE;
}

gboolean
kt_offsets_last_committers (KtDb *db, const char *job, const char *topic,
                         GHashTable *owners, GError **error)
{
  g_autoptr(GString) sql = g_string_new (
    "SELECT b.`partition`, b.member FROM ktally_batches b JOIN "
    "(SELECT `partition`, MAX(id) AS id FROM ktally_batches WHERE job = ");
  g_autoptr(MYSQL_RES) res = NULL;
  MYSQL_ROW row;

  if (!kt_db_connect (db, error))
    return FALSE;
  kt_db_quote (db, sql, job);
  g_string_append (sql, " AND topic = ");
  kt_db_quote (db, sql, topic);
  g_string_append (sql, " GROUP BY `partition`) last USING (`partition`, id)");
  res = kt_db_rows (db, sql->str, "cannot read ktally_batches", error);
  if (res == NULL)
    return FALSE;
  while ((row = mysql_fetch_row (res)) != NULL)
    g_hash_table_replace (owners, GINT_TO_POINTER (atoi (row[0])), g_strdup (row[1]));
  return TRUE;
}

/* ---- jobs, reset, forget ---------------------------------------------- */

/* Whether @table exists (read-only commands meet older schemas). */
static gboolean
table_exists (KtDb *db, const char *table, gboolean *exists, GError **error)
{
  g_autofree char *type = NULL;

  if (!kt_db_table_type (db, table, &type, error))
    return FALSE;
  *exists = type != NULL;
  return TRUE;
}

void
kt_stored_offset_clear (KtStoredOffset *row)
{
  g_clear_pointer (&row->topic, g_free);
}

gboolean
kt_offsets_read_job (KtDb *db, const char *job, const char *topic, gboolean lock,
                     GArray *rows, GError **error)
{
  g_autoptr(GString) sql = g_string_new ("SELECT topic, `partition`, `offset` FROM "
                                         "kafka_offset WHERE job = ");
  g_autoptr(MYSQL_RES) res = NULL;
  gboolean exists;
  MYSQL_ROW row;

  if (!kt_db_connect (db, error) || !table_exists (db, "kafka_offset", &exists, error))
    return FALSE;
  if (!exists)
    return TRUE;
  kt_db_quote (db, sql, job);
  if (topic != NULL)
    {
      g_string_append (sql, " AND topic = ");
      kt_db_quote (db, sql, topic);
    }
  g_string_append (sql, " ORDER BY topic, `partition`");
  if (lock)
    g_string_append (sql, " FOR UPDATE");
  res = kt_db_rows (db, sql->str, "cannot read kafka_offset", error);
  if (res == NULL)
    return FALSE;
  while ((row = mysql_fetch_row (res)) != NULL)
    {
      KtStoredOffset o = { g_strdup (row[0]), atoi (row[1]), g_ascii_strtoll (row[2], NULL, 10) };
      g_array_append_val (rows, o);
    }
  return TRUE;
}

/* Adds "job -> {topic}" pairs of @sql's two columns to @topics. */
static gboolean
add_pairs (KtDb *db, const char *sql, GHashTable *topics, GError **error)
{
  g_autoptr(MYSQL_RES) res = kt_db_rows (db, sql, "cannot read the jobs", error);
  MYSQL_ROW row;

  if (res == NULL)
    return FALSE;
  while ((row = mysql_fetch_row (res)) != NULL)
    {
      GHashTable *set = g_hash_table_lookup (topics, row[0]);

      if (set == NULL)
        {
          set = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
          g_hash_table_insert (topics, g_strdup (row[0]), set);
        }
      g_hash_table_add (set, g_strdup (row[1]));
    }
  return TRUE;
}

gboolean
kt_offsets_job_topics (KtDb *db, GHashTable *topics, GError **error)
{
  gboolean offsets, batches;

  if (!kt_db_connect (db, error)
      || !table_exists (db, "kafka_offset", &offsets, error)
      || !table_exists (db, "ktally_batches", &batches, error))
    return FALSE;
  return (!offsets || add_pairs (db, "SELECT DISTINCT job, topic FROM kafka_offset",
                                 topics, error))
         && (!batches || add_pairs (db, "SELECT DISTINCT job, topic FROM ktally_batches",
                                    topics, error));
}

void
kt_job_commits_free (KtJobCommits *c)
{
  if (c == NULL)
    return;
  g_free (c->last_commit);
  g_free (c);
}

gboolean
kt_offsets_job_commits (KtDb *db, GHashTable *last, GError **error)
{
  g_autoptr(MYSQL_RES) res = NULL;
  gboolean exists;
  MYSQL_ROW row;

  if (!kt_db_connect (db, error) || !table_exists (db, "ktally_batches", &exists, error))
    return FALSE;
  if (!exists)
    return TRUE;
  res = kt_db_rows (db, "SELECT job, COUNT(*), CAST(MAX(committed_at) AS CHAR) "
                    "FROM ktally_batches GROUP BY job", "cannot read ktally_batches", error);
  if (res == NULL)
    return FALSE;
  while ((row = mysql_fetch_row (res)) != NULL)
    {
      KtJobCommits *c = g_new0 (KtJobCommits, 1);

      c->batches = g_ascii_strtoull (row[1], NULL, 10);
      c->last_commit = g_strdup (row[2]);
      g_hash_table_replace (last, g_strdup (row[0]), c);
    }
  return TRUE;
}

gboolean
kt_offsets_first_counted (KtDb *db, const char *job, const char *topic, GHashTable *first,
                          GError **error)
{
  g_autoptr(GString) sql = g_string_new ("SELECT `partition`, MIN(from_offset) FROM "
                                         "ktally_batches");
  g_autoptr(MYSQL_RES) res = NULL;
  MYSQL_ROW row;

  if (!kt_db_connect (db, error))
    return FALSE;
  where_job (db, sql, job, topic);
  g_string_append (sql, " GROUP BY `partition`");
  res = kt_db_rows (db, sql->str, "cannot read ktally_batches", error);
  if (res == NULL)
    return FALSE;
  while ((row = mysql_fetch_row (res)) != NULL)
    {
      gint64 *from = g_new (gint64, 1);

      *from = g_ascii_strtoll (row[1], NULL, 10);
      g_hash_table_replace (first, GINT_TO_POINTER (atoi (row[0])), from);
    }
  return TRUE;
}

gboolean
kt_offsets_batch_starts (KtDb *db, const char *job, gint64 id, char **topic, GArray *starts,
                         GError **error)
{
  g_autoptr(GString) sql = g_string_new (NULL);
  g_autoptr(MYSQL_RES) res = NULL;
  g_autoptr(MYSQL_RES) first = NULL;
  MYSQL_ROW row;

  if (!kt_db_connect (db, error))
    return FALSE;
  /* The rows one commit wrote share its member and its committed_at (one
   * INSERT: one timestamp); the batch starts at the first of them. */
  g_string_printf (sql, "SELECT b.topic, MIN(o.id) FROM ktally_batches b JOIN ktally_batches o "
                   "ON o.job = b.job AND o.topic = b.topic AND o.member = b.member "
                   "AND o.committed_at = b.committed_at WHERE b.id = %" G_GINT64_FORMAT
                   " AND b.job = ", id);
  kt_db_quote (db, sql, job);
  g_string_append (sql, " GROUP BY b.topic");
  first = kt_db_rows (db, sql->str, "cannot read ktally_batches", error);
  if (first == NULL)
    return FALSE;
  row = mysql_fetch_row (first);
  if (row == NULL)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "--to batch:%" G_GINT64_FORMAT ": job %s has no audited batch of that id "
                   "(ktally_batches.id; --audit-keep folds old ones into the first)", id, job);
      return FALSE;
    }
  *topic = g_strdup (row[0]);
  /* Per partition, its first row from the batch on: the batch's own, or
   * the next one to read it. */
  g_string_assign (sql, "SELECT b.`partition`, b.from_offset FROM ktally_batches b JOIN "
                        "(SELECT `partition`, MIN(id) AS id FROM ktally_batches");
  where_job (db, sql, job, *topic);
  g_string_append_printf (sql, " AND id >= %s GROUP BY `partition`) f USING (`partition`, id) "
                          "ORDER BY b.`partition`", row[1]);
  res = kt_db_rows (db, sql->str, "cannot read ktally_batches", error);
  if (res == NULL)
    return FALSE;
  while ((row = mysql_fetch_row (res)) != NULL)
    {
      KtPartitionOffset po = { atoi (row[0]), g_ascii_strtoll (row[1], NULL, 10) };
      g_array_append_val (starts, po);
    }
  return TRUE;
}

gboolean
kt_offsets_drop_batches (KtDb *db, const char *job, GError **error)
{
  g_autoptr(GString) sql = g_string_new ("DELETE FROM ktally_batches WHERE job = ");

  kt_db_quote (db, sql, job);
  return kt_db_run (db, sql->str, "cannot delete the job's audit rows", error);
}

/* " WHERE job = 'J' AND topic = 'T' AND `partition` = P" */
static void
where_partition (KtDb *db, GString *sql, const char *job, const char *topic, gint32 partition)
{
  g_string_append (sql, " WHERE job = ");
  kt_db_quote (db, sql, job);
  g_string_append (sql, " AND topic = ");
  kt_db_quote (db, sql, topic);
  g_string_append_printf (sql, " AND `partition` = %d", partition);
}

gboolean
kt_offsets_chain_after (KtDb *db, const char *job, const char *topic, gint32 partition,
                        gint64 at, gboolean lock, GArray *links, GError **error)
{
  g_autoptr(GString) sql = g_string_new ("SELECT from_offset, until_offset, record_count, "
                                         "line_count, error_lines, malformed_lines, ");
  g_autoptr(MYSQL_RES) res = NULL;
  gboolean marked;
  MYSQL_ROW row;

  /* A schema before version 7 (a dry run reads it as it is) does not mark
   * skips: what its migration marks, a reset's row. */
  if (!kt_db_has_column (db, "ktally_batches", "skipped", &marked, error))
    return FALSE;
  g_string_append (sql, marked ? "skipped" : KT_OFFSETS_OLD_SKIP);
  g_string_append (sql, " FROM ktally_batches");
  where_partition (db, sql, job, topic, partition);
  g_string_append_printf (sql, " AND until_offset > %" G_GINT64_FORMAT
                          " ORDER BY from_offset, id%s", at, lock ? " FOR UPDATE" : "");
  res = kt_db_rows (db, sql->str, "cannot read the job's audit rows", error);
  if (res == NULL)
    return FALSE;
  while ((row = mysql_fetch_row (res)) != NULL)
    {
      KtAuditLink link = {
        g_ascii_strtoll (row[0], NULL, 10), g_ascii_strtoll (row[1], NULL, 10),
        { g_ascii_strtoull (row[2], NULL, 10), g_ascii_strtoull (row[3], NULL, 10),
          g_ascii_strtoull (row[4], NULL, 10), g_ascii_strtoull (row[5], NULL, 10) },
        g_strcmp0 (row[6], "0") != 0 && row[6] != NULL,
      };

      g_array_append_val (links, link);
    }
  return TRUE;
}

gboolean
kt_offsets_drop_batches_from (KtDb *db, const char *job, const char *topic, gint32 partition,
                              gint64 from, GError **error)
{
  g_autoptr(GString) sql = g_string_new ("DELETE FROM ktally_batches");

  where_partition (db, sql, job, topic, partition);
  g_string_append_printf (sql, " AND from_offset >= %" G_GINT64_FORMAT, from);
  return kt_db_run (db, sql->str, "cannot delete the job's audit rows", error);
}

void
kt_forget_count_clear (KtForgetCount *count)
{
  if (count->targets != NULL)
    for (guint i = 0; i < count->targets->len; i++)
      g_free (g_array_index (count->targets, KtForgottenTarget, i).target);
  g_clear_pointer (&count->targets, g_array_unref);
}

/* SELECT COUNT(*) of @table's rows of @job. */
static gboolean
count_rows (KtDb *db, const char *table, const char *job, guint64 *n, GError **error)
{
  g_autoptr(GString) sql = g_string_new (NULL);
  g_autoptr(MYSQL_RES) res = NULL;
  MYSQL_ROW row;

  g_string_printf (sql, "SELECT COUNT(*) FROM %s WHERE job = ", table);
  kt_db_quote (db, sql, job);
  res = kt_db_rows (db, sql->str, "cannot count the job's rows", error);
  if (res == NULL)
    return FALSE;
  row = mysql_fetch_row (res);
  *n = row != NULL ? g_ascii_strtoull (row[0], NULL, 10) : 0;
  return TRUE;
}

gboolean
kt_offsets_forget (KtDb *db, const char *job, gboolean execute, KtForgetCount *count,
                   GError **error)
{
  g_autoptr(GString) sql = g_string_new (NULL);
  g_autoptr(GString) quoted = g_string_new (NULL);
  g_autoptr(MYSQL_RES) res = NULL;
  gboolean offsets, batches;
  MYSQL_ROW row;

  count->targets = g_array_new (FALSE, TRUE, sizeof (KtForgottenTarget));
  if (!kt_db_connect (db, error)
      || !table_exists (db, "kafka_offset", &offsets, error)
      || !table_exists (db, "ktally_batches", &batches, error))
    return FALSE;
  kt_db_quote (db, quoted, job);
  if (offsets && !count_rows (db, "kafka_offset", job, &count->offsets, error))
    return FALSE;
  if (batches)
    {
      g_string_printf (sql, "SELECT target, COUNT(*), COALESCE(SUM(error_lines), 0) FROM "
                       "ktally_batches WHERE job = %s GROUP BY target ORDER BY target",
                       quoted->str);
      res = kt_db_rows (db, sql->str, "cannot read ktally_batches", error);
      if (res == NULL)
        return FALSE;
      while ((row = mysql_fetch_row (res)) != NULL)
        {
          KtForgottenTarget t = { g_strdup (row[0]), g_ascii_strtoull (row[1], NULL, 10),
                                  g_ascii_strtoull (row[2], NULL, 10) };
          count->batches += t.batches;
          g_array_append_val (count->targets, t);
        }
    }
  if (!execute)
    return TRUE;
  /* What the batches recorded goes on being accounted for: the rows they
   * counted into stay. */
  if (batches)
    {
      g_string_printf (sql, "INSERT INTO ktally_forgotten (job, target, batches, error_lines) "
                       "SELECT job, target, COUNT(*), COALESCE(SUM(error_lines), 0) FROM "
                       "ktally_batches WHERE job = %s GROUP BY job, target", quoted->str);
      if (!kt_db_run (db, sql->str, "cannot write ktally_forgotten", error))
        return FALSE;
      g_string_printf (sql, "DELETE FROM ktally_batches WHERE job = %s", quoted->str);
      if (!kt_db_run (db, sql->str, "cannot delete the job's audit rows", error))
        return FALSE;
    }
  g_string_printf (sql, "DELETE FROM kafka_offset WHERE job = %s", quoted->str);
  return !offsets || kt_db_run (db, sql->str, "cannot delete the job's offsets", error);
}

gboolean
kt_offsets_load_forgotten (KtDb *db, GArray *rows, GError **error)
{
  g_autoptr(MYSQL_RES) res = NULL;
  gboolean exists;
  MYSQL_ROW row;

  if (!kt_db_connect (db, error) || !table_exists (db, "ktally_forgotten", &exists, error))
    return FALSE;
  if (!exists)
    return TRUE;
  res = kt_db_rows (db, "SELECT job, target, SUM(batches), SUM(error_lines) FROM "
                    "ktally_forgotten GROUP BY job, target ORDER BY job, target",
                    "cannot read ktally_forgotten", error);
  if (res == NULL)
    return FALSE;
  while ((row = mysql_fetch_row (res)) != NULL)
    {
      KtForgottenTarget t = { g_strdup_printf ("%s\t%s", row[0], row[1]),
                              g_ascii_strtoull (row[2], NULL, 10),
                              g_ascii_strtoull (row[3], NULL, 10) };
      g_array_append_val (rows, t);
    }
  return TRUE;
}

gboolean
kt_offsets_forgotten_in (KtDb *db, const char *job, const char *target, gboolean *found,
                         GError **error)
{
  g_autoptr(GString) sql = g_string_new ("SELECT 1 FROM ktally_forgotten WHERE ");
  g_autoptr(MYSQL_RES) res = NULL;
  gboolean exists;

  *found = FALSE;
  if (!kt_db_connect (db, error) || !table_exists (db, "ktally_forgotten", &exists, error))
    return FALSE;
  if (!exists)
    return TRUE;
  g_string_append (sql, job != NULL ? "job = " : "target = ");
  kt_db_quote (db, sql, job != NULL ? job : target);
  g_string_append (sql, " LIMIT 1");
  res = kt_db_rows (db, sql->str, "cannot read ktally_forgotten", error);
  if (res == NULL)
    return FALSE;
  *found = mysql_fetch_row (res) != NULL;
  return TRUE;
}

gboolean
kt_offsets_other_writer (KtDb *db, const char *job, const char *target, char **other,
                         GError **error)
{
  g_autoptr(GString) sql = g_string_new ("SELECT job FROM ktally_batches WHERE target = ");
  g_autoptr(MYSQL_RES) res = NULL;
  MYSQL_ROW row;

  *other = NULL;
  if (!kt_db_connect (db, error))
    return FALSE;
  kt_db_quote (db, sql, target);
  g_string_append (sql, " AND job <> ");
  kt_db_quote (db, sql, job);
  g_string_append (sql, " ORDER BY job LIMIT 1");
  res = kt_db_rows (db, sql->str, "cannot read ktally_batches", error);
  if (res == NULL)
    return FALSE;
  row = mysql_fetch_row (res);
  *other = row != NULL ? g_strdup (row[0]) : NULL;
  return TRUE;
}
