/* audit.c - `ktally audit`: is the chain of committed batches whole
 * (audit.h)?
 *
 * Reads only, in one consistent snapshot. The checks themselves
 * (kt_audit_chains, kt_audit_shared, kt_audit_replay_ranges) see rows,
 * not a database, so their cases are unit-tested (test-audit); kt_audit()
 * reads the rows and the tables' totals and hands the verdict on. It
 * prints nothing: the command does (cmd-audit.c). */
#include "audit.h"

#include <string.h>
#include "db-rows.h"
#include "error.h"
#include "identity.h"
#include "jobs.h"
#include "kind.h"
#include "schema.h"

/* An idempotent job's chain [@first, @last) of @rows: see kt_audit_chains(). */
static void
check_covered (const GArray *rows, guint first, guint last, const KtCoverage *covered,
               gint64 stored, GPtrArray *problems)
{
  const KtBatchRow *b = &g_array_index (rows, KtBatchRow, first);
  g_autoptr(KtCoverage) batches = kt_coverage_new ();
  g_autoptr(GArray) counted = g_array_new (FALSE, FALSE, sizeof (KtInterval));
  KtInterval twice;
  gint64 start = b->from;

  for (guint i = first; i < last; i++)
    {
      kt_coverage_add (batches, g_array_index (rows, KtBatchRow, i).from,
                       g_array_index (rows, KtBatchRow, i).until);
      start = MIN (start, g_array_index (rows, KtBatchRow, i).from);
    }
  if (kt_coverage_overlap (covered, &twice))
    g_ptr_array_add (problems, g_strdup_printf (
      "job %s, %s/%d: overlap: offsets [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT
      ") were counted twice (chunks written by an older ktally)", b->job, b->topic,
      b->partition, twice.from, twice.until));
  /* The offsets stored must not have moved past offsets no batch read:
   * from where the batches start, they cover everything below it. */
  if (stored >= 0 && kt_coverage_next_gap (batches, start) < stored)
    g_ptr_array_add (problems, g_strdup_printf (
      "job %s, %s/%d: gap: offsets from %" G_GINT64_FORMAT " are in no batch, below "
      "the stored offset %" G_GINT64_FORMAT, b->job, b->topic, b->partition,
      kt_coverage_next_gap (batches, start), stored));
  kt_coverage_within (covered, 0, G_MAXINT64, counted);
  for (guint i = 0; i < counted->len; i++)
    {
      const KtInterval *c = &g_array_index (counted, KtInterval, i);
      gint64 gap = kt_coverage_next_gap (batches, c->from);

      if (gap >= c->until && kt_coverage_contains (batches, c->from))
        continue;
      gap = kt_coverage_contains (batches, c->from) ? gap : c->from;
      g_ptr_array_add (problems, g_strdup_printf (
        "job %s, %s/%d: offsets from %" G_GINT64_FORMAT " are counted in the output "
        "but in no batch", b->job, b->topic, b->partition, gap));
    }
}

guint
kt_audit_chains (const GArray *rows, KtStoredOffsetFunc stored_offset,
                 KtCoveredFunc covered, gpointer user_data, GPtrArray *problems)
{
  guint chains = 0;

  for (guint i = 0; i < rows->len;)
    {
      const KtBatchRow *first = &g_array_index (rows, KtBatchRow, i);
      const KtCoverage *counted = covered != NULL
        ? covered (first->job, first->topic, first->partition, user_data) : NULL;
      gint64 end = first->until, stored;
      guint j = i + 1;

      if (first->until < first->from)
        g_ptr_array_add (problems, g_strdup_printf (
          "job %s, %s/%d: batch [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ") ends before it starts",
          first->job, first->topic, first->partition, first->from, first->until));
      for (; j < rows->len; j++)
        {
          const KtBatchRow *b = &g_array_index (rows, KtBatchRow, j);

          if (g_strcmp0 (b->job, first->job) != 0 || g_strcmp0 (b->topic, first->topic) != 0
              || b->partition != first->partition)
            break;
          if (counted != NULL)
            ;  /* idempotent: overlaps and gaps are checked against the output */
          else if (b->from > end)
            g_ptr_array_add (problems, g_strdup_printf (
              "job %s, %s/%d: gap: offsets [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT
              ") are in no batch", b->job, b->topic, b->partition, end, b->from));
          else if (b->from < end)
            g_ptr_array_add (problems, g_strdup_printf (
              "job %s, %s/%d: overlap: offsets [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT
              ") were committed twice", b->job, b->topic, b->partition, b->from,
              MIN (end, b->until)));
          /* A skip past the log's end (--on-data-loss skip on a recreated
           * or truncated topic) ends where the new log is read on from. */
          end = b->until < b->from ? b->until : MAX (end, b->until);
        }

      stored = stored_offset (first->job, first->topic, first->partition, user_data);
      if (counted != NULL)
        check_covered (rows, i, j, counted, stored, problems);
      else
        {
          if (stored >= 0 && stored != end)
            g_ptr_array_add (problems, g_strdup_printf (
              "job %s, %s/%d: the batches end at %" G_GINT64_FORMAT " but the stored offset is %"
              G_GINT64_FORMAT, first->job, first->topic, first->partition, end, stored));
        }
      chains++;
      i = j;
    }
  return chains;
}

/* A replay's range, parsed once. */
typedef struct
{
  GArray *from, *until;  /* KtPartitionOffset, by partition */
  gboolean ok;
} ReplayRange;

static void
replay_range_free (ReplayRange *r)
{
  g_array_unref (r->from);
  g_array_unref (r->until);
  g_free (r);
}

guint
kt_audit_replay_ranges (const GArray *rows, GHashTable *ranges, GPtrArray *problems)
{
  g_autoptr(GHashTable) parsed = g_hash_table_new_full (g_str_hash, g_str_equal, NULL,
                                                        (GDestroyNotify) replay_range_free);
  guint outside = 0;

  for (guint i = 0; i < rows->len; i++)
    {
      const KtBatchRow *b = &g_array_index (rows, KtBatchRow, i);
      const char *text = g_hash_table_lookup (ranges, b->job);
      ReplayRange *r;
      const KtPartitionOffset *f, *u;

      if (text == NULL || *text == '\0')
        continue;  /* not a replay, or its range not recorded */
      r = g_hash_table_lookup (parsed, b->job);
      if (r == NULL)
        {
          r = g_new0 (ReplayRange, 1);
          r->from = g_array_new (FALSE, FALSE, sizeof (KtPartitionOffset));
          r->until = g_array_new (FALSE, FALSE, sizeof (KtPartitionOffset));
          r->ok = kt_replay_range_parse (text, r->from, r->until, NULL);
          g_hash_table_insert (parsed, b->job, r);
        }
      if (!r->ok)
        continue;
      f = kt_partition_offset_find (r->from, b->partition);
      u = kt_partition_offset_find (r->until, b->partition);
      if (f != NULL && u != NULL && MIN (b->from, b->until) >= f->offset
          && MAX (b->from, b->until) <= u->offset)
        continue;
      outside++;
      if (f == NULL || u == NULL)
        g_ptr_array_add (problems, g_strdup_printf (
          "replay %s, %s/%d: batch [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ") of a partition "
          "its range (%s) does not name: counted outside its range", b->job, b->topic,
          b->partition, b->from, b->until, text));
      else
        g_ptr_array_add (problems, g_strdup_printf (
          "replay %s, %s/%d: batch [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ") is outside "
          "its range [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "): counted outside its range "
          "(moved by a reset of an older ktally?)", b->job, b->topic, b->partition, b->from,
          b->until, f->offset, u->offset));
    }
  return outside;
}

typedef struct
{
  GHashTable *stored;   /* "job\ttopic\tpartition" -> gint64* */
  GHashTable *covered;  /* the same -> KtCoverage* (idempotent jobs) */
} Stored;

static gboolean
is_replay (const char *job)
{
  return g_str_has_prefix (job, KT_REPLAY_JOB_PREFIX);
}

guint
kt_audit_shared (const GArray *rows, const char *job, GPtrArray *problems, GPtrArray *notes)
{
  /* "target\ttopic\tpartition" -> (job -> KtCoverage of its batches) */
  g_autoptr(GHashTable) places = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                        (GDestroyNotify) g_hash_table_unref);
  GHashTableIter iter;
  gpointer key, jobs;
  guint found = 0;

  for (guint i = 0; i < rows->len; i++)
    {
      const KtBatchRow *b = &g_array_index (rows, KtBatchRow, i);
      g_autofree char *place = g_strdup_printf ("%s\t%s\t%d", b->target, b->topic, b->partition);
      GHashTable *by_job = g_hash_table_lookup (places, place);
      KtCoverage *set;

      if (by_job == NULL)
        {
          by_job = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                          (GDestroyNotify) kt_coverage_free);
          g_hash_table_insert (places, g_steal_pointer (&place), by_job);
        }
      set = g_hash_table_lookup (by_job, b->job);
      if (set == NULL)
        g_hash_table_insert (by_job, g_strdup (b->job), set = kt_coverage_new ());
      kt_coverage_add (set, b->from, b->until);
    }

  g_hash_table_iter_init (&iter, places);
  while (g_hash_table_iter_next (&iter, &key, &jobs))
    {
      g_autoptr(GList) names = g_list_sort (g_hash_table_get_keys (jobs),
                                            (GCompareFunc) g_strcmp0);
      g_auto(GStrv) place = g_strsplit (key, "\t", 3);

      for (GList *a = names; a != NULL; a = a->next)
        for (GList *b = a->next; b != NULL; b = b->next)
          {
            g_autoptr(GArray) theirs = g_array_new (FALSE, FALSE, sizeof (KtInterval));
            g_autoptr(GArray) both = g_array_new (FALSE, FALSE, sizeof (KtInterval));

            if (job != NULL && !g_str_equal (a->data, job) && !g_str_equal (b->data, job))
              continue;
            kt_coverage_within (g_hash_table_lookup (jobs, b->data), 0, G_MAXINT64, theirs);
            for (guint i = 0; i < theirs->len && both->len == 0; i++)
              kt_coverage_within (g_hash_table_lookup (jobs, a->data),
                                  g_array_index (theirs, KtInterval, i).from,
                                  g_array_index (theirs, KtInterval, i).until, both);
            if (both->len == 0)
              continue;
            /* A replay adds its range by design (and says so): noted, not
             * a break. Two live jobs count it twice behind anyone's back. */
            g_ptr_array_add (is_replay (a->data) || is_replay (b->data) ? notes : problems,
                             g_strdup_printf (
              "%s: offsets [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ") of %s/%s were "
              "counted into it by two jobs, %s and %s", place[0],
              g_array_index (both, KtInterval, 0).from, g_array_index (both, KtInterval, 0).until,
              place[1], place[2], (const char *) a->data, (const char *) b->data));
            found++;
          }
    }
  return found;
}

static gint64
lookup_stored (const char *job, const char *topic, gint32 partition, gpointer user_data)
{
  g_autofree char *key = g_strdup_printf ("%s\t%s\t%d", job, topic, partition);
  gint64 *offset = g_hash_table_lookup (((Stored *) user_data)->stored, key);
  return offset != NULL ? *offset : -1;
}

static const KtCoverage *
lookup_covered (const char *job, const char *topic, gint32 partition, gpointer user_data)
{
  g_autofree char *key = g_strdup_printf ("%s\t%s\t%d", job, topic, partition);
  return g_hash_table_lookup (((Stored *) user_data)->covered, key);
}

/* Every ktally_coverage row (idempotent jobs) into @covered:
 * "job\ttopic\tpartition" -> KtCoverage*. None without the table. */
static gboolean
load_all_coverage (KtDb *db, GHashTable *covered, GError **error)
{
  g_autofree char *type = NULL;
  g_autoptr(KtDbRows) res = NULL;
  const char *const *row;

  if (!kt_db_table_type (db, "ktally_coverage", &type, error))
    return FALSE;
  if (type == NULL)
    return TRUE;
  res = kt_db_rows_select (db, "SELECT job, topic, `partition`, covered FROM ktally_coverage",
                           "cannot read ktally_coverage", error);
  if (res == NULL)
    return FALSE;
  while ((row = kt_db_rows_next (res)) != NULL)
    {
      g_autofree char *key = g_strdup_printf ("%s\t%s\t%s", row[0], row[1], row[2]);
      KtCoverage *set = kt_coverage_parse (row[3], key, error);

      if (set == NULL)
        return FALSE;
      g_hash_table_insert (covered, g_steal_pointer (&key), set);
    }
  return TRUE;
}

/* SUM(log_count) of @table (0 when empty). */
static gboolean
table_total (KtDb *db, const char *table, guint64 *total, GError **error)
{
  g_autofree char *sql = NULL;
  g_autoptr(KtDbRows) res = NULL;
  const char *const *row;

  g_return_val_if_fail (kt_is_identifier (table), FALSE);
  sql = g_strdup_printf ("SELECT COALESCE(SUM(log_count), 0) FROM `%s`", table);
  res = kt_db_rows_select (db, sql, "cannot sum the counts", error);
  if (res == NULL)
    return FALSE;
  row = kt_db_rows_next (res);
  *total = row != NULL && row[0] != NULL ? g_ascii_strtoull (row[0], NULL, 10) : 0;
  return TRUE;
}

/* audit --brokers: the committed offsets of the consumer group ktally-JOB
 * of each (job, topic) that has covered sets but no kafka_offset rows (an
 * idempotent job with --offsets kafka), into @stored. */
static gboolean
load_group_offsets (const KtKafkaOptions *kafka, GHashTable *covered, GHashTable *stored,
                    GError **error)
{
  g_autoptr(GHashTable) pairs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  GHashTableIter iter;
  gpointer key;

  g_hash_table_iter_init (&iter, covered);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    if (!g_hash_table_contains (stored, key))
      g_hash_table_add (pairs, g_strndup (key, strrchr (key, '\t') - (const char *) key));

  g_hash_table_iter_init (&iter, pairs);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    {
      g_auto(GStrv) parts = g_strsplit (key, "\t", 2);
      KtSourceConfig source_config = {
        .brokers = kafka->brokers, .topic = parts[1], .client_id = parts[0],
        .properties = (const char *const *) kafka->properties,
      };
      g_autoptr(KtSource) source = kt_source_new (&source_config, error);
      g_autoptr(GArray) partitions = g_array_new (FALSE, FALSE, sizeof (gint32));
      g_autoptr(GArray) states = g_array_new (FALSE, TRUE, sizeof (KtPartitionState));

      if (source == NULL || !kt_source_partitions (source, partitions, 10000, error))
        return FALSE;
      for (guint i = 0; i < partitions->len; i++)
        g_array_append_val (states, ((KtPartitionState) {
          g_array_index (partitions, gint32, i), -1, 0, 0 }));
      if (!kt_source_committed (source, (KtPartitionState *) (void *) states->data,
                                states->len, 10000, error))
        return FALSE;
      for (guint i = 0; i < states->len; i++)
        {
          const KtPartitionState *s = &g_array_index (states, KtPartitionState, i);
          gint64 *offset = g_new (gint64, 1);

          *offset = s->stored;
          g_hash_table_replace (stored, g_strdup_printf ("%s\t%s\t%d", parts[0], parts[1],
                                                         s->partition), offset);
        }
    }
  return TRUE;
}

/* Idempotent jobs: a partition whose output counted offsets that no batch
 * row at all records (its chain is empty, so kt_audit_chains() never saw
 * it). */
static void
orphan_coverage (const char *job, const GArray *rows, GHashTable *covered, GPtrArray *problems)
{
  g_autoptr(GHashTable) chained = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  GHashTableIter iter;
  gpointer key, value;

  for (guint i = 0; i < rows->len; i++)
    {
      const KtBatchRow *b = &g_array_index (rows, KtBatchRow, i);
      g_hash_table_add (chained, g_strdup_printf ("%s\t%s\t%d", b->job, b->topic, b->partition));
    }
  g_hash_table_iter_init (&iter, covered);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      g_auto(GStrv) parts = g_strsplit (key, "\t", 3);
      g_autofree char *text = NULL;

      if (g_hash_table_contains (chained, key) || kt_coverage_n_intervals (value) == 0
          || (job != NULL && !g_str_equal (parts[0], job)))
        continue;
      text = kt_coverage_format (value);
      g_ptr_array_add (problems, g_strdup_printf (
        "job %s, %s/%s: offsets %s are counted in the output but in no batch",
        parts[0], parts[1], parts[2], text));
    }
}

/* Each table the batches wrote (@targets: name -> the ERROR lines they
 * recorded) against what it holds now, into @tables (KtAuditTable). */
static void
check_totals (KtDb *db, GHashTable *targets, GArray *tables, GPtrArray *problems)
{
  GHashTableIter iter;
  gpointer key, value;

  g_hash_table_iter_init (&iter, targets);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      const KtKind *kind = kt_kind_of_table (key);
      KtAuditTable t = { g_strdup (key), NULL, *(guint64 *) value, 0, FALSE };
      g_autoptr(GError) local = NULL;

      if (kind != NULL && !g_str_equal (kind->holds, "counts"))
        {
          /* A ledger's batches carry no counts to add up: chains only. */
          t.holds = kind->holds;
          g_array_append_val (tables, t);
          continue;
        }
      if (!kt_is_identifier (key))
        {
          g_free (t.name);
          g_ptr_array_add (problems, g_strdup_printf ("a batch names the table '%s', "
                                                      "which is not a plain identifier",
                                                      (const char *) key));
          continue;
        }
      if (!table_total (db, key, &t.total, &local))
        {
          g_free (t.name);
          g_ptr_array_add (problems, g_strdup_printf ("%s: %s", (const char *) key,
                                                      local->message));
          continue;
        }
      t.summed = TRUE;
      g_array_append_val (tables, t);
      if (t.total != t.recorded)
        g_ptr_array_add (problems, g_strdup_printf (
          "%s holds %" G_GUINT64_FORMAT " ERROR lines, its batches recorded %" G_GUINT64_FORMAT,
          (const char *) key, t.total, t.recorded));
    }
}

static void
forgotten_clear (KtForgottenTarget *f)
{
  g_clear_pointer (&f->target, g_free);
}

/* A forgotten job's audit rows are gone, and what it counted stays in its
 * tables: ktally_forgotten says how much. Adds it to @targets (name -> the
 * ERROR lines recorded), one note each to @forgotten_notes. */
static gboolean
add_forgotten (KtDb *db, GHashTable *targets, GPtrArray *forgotten_notes, GError **error)
{
  g_autoptr(GArray) forgotten = g_array_new (FALSE, TRUE, sizeof (KtForgottenTarget));

  g_array_set_clear_func (forgotten, (GDestroyNotify) forgotten_clear);
  if (!kt_offsets_load_forgotten (db, forgotten, error))
    return FALSE;
  for (guint i = 0; i < forgotten->len; i++)
    {
      const KtForgottenTarget *f = &g_array_index (forgotten, KtForgottenTarget, i);
      const char *table = strchr (f->target, '\t') + 1;
      guint64 *sum = g_hash_table_lookup (targets, table);

      if (sum == NULL)
        {
          sum = g_new0 (guint64, 1);
          g_hash_table_insert (targets, g_strdup (table), sum);
        }
      *sum += f->error_lines;
      g_ptr_array_add (forgotten_notes, g_strdup_printf ("%s holds %" G_GUINT64_FORMAT " ERROR lines "
                                               "counted by job %.*s, since forgotten", table,
                                               f->error_lines,
                                               (int) (table - 1 - f->target), f->target));
    }
  return TRUE;
}

static void
table_clear (KtAuditTable *t)
{
  g_clear_pointer (&t->name, g_free);
}

void
kt_audit_report_clear (KtAuditReport *report)
{
  g_clear_pointer (&report->tables, g_array_unref);
  g_clear_pointer (&report->notes, g_ptr_array_unref);
  g_clear_pointer (&report->forgotten, g_ptr_array_unref);
  g_clear_pointer (&report->problems, g_ptr_array_unref);
}

gboolean
kt_audit (const KtAuditRequest *request, KtAuditReport *out, GError **error)
{
  g_autoptr(KtDb) db = kt_db_new (request->db);
  g_autoptr(GArray) rows = g_array_new (FALSE, FALSE, sizeof (KtBatchRow));
  g_autoptr(GArray) mine = g_array_new (FALSE, FALSE, sizeof (KtBatchRow));
  g_autoptr(GHashTable) stored = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr(GHashTable) covered = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                        (GDestroyNotify) kt_coverage_free);
  g_autoptr(GHashTable) targets = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr(GHashTable) records = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                        (GDestroyNotify) kt_job_row_free);
  Stored lookup = { stored, covered };
  const char *job = request->job;

  *out = (KtAuditReport) {
    .tables = g_array_new (FALSE, FALSE, sizeof (KtAuditTable)),
    .notes = g_ptr_array_new_with_free_func (g_free),
    .forgotten = g_ptr_array_new_with_free_func (g_free),
    .problems = g_ptr_array_new_with_free_func (g_free),
  };
  g_array_set_clear_func (out->tables, (GDestroyNotify) table_clear);
  g_array_set_clear_func (rows, (GDestroyNotify) kt_batch_row_clear);
  kt_db_allow_read_only (db);  /* reads only: a replica will do */
  /* Only reads: an older schema is read as it is, never migrated. One
   * snapshot for every read: a job that commits meanwhile must not make
   * its chain look broken (read after its offsets, or its totals after its
   * batches). */
  if (!kt_schema_readable (db, error)
      || (job != NULL && !kt_jobs_check (db, job, NULL, error))
      || !kt_db_snapshot (db, error)
      || !kt_offsets_read_batches (db, NULL, rows, error)
      || !kt_offsets_load_all (db, stored, error)
      || !load_all_coverage (db, covered, error))
    return FALSE;
  if (!kt_identity_read_jobs (db, records, error))
    return FALSE;
  if (request->kafka != NULL && request->kafka->brokers != NULL
      && !load_group_offsets (request->kafka, covered, stored, error))
    return FALSE;
  if (!add_forgotten (db, targets, out->forgotten, error))
    return FALSE;

  /* Chains of the audited job(s); totals over every job, since the sum of
   * a table is only comparable with all the batches that wrote to it. */
  for (guint i = 0; i < rows->len; i++)
    {
      const KtBatchRow *b = &g_array_index (rows, KtBatchRow, i);
      guint64 *sum = g_hash_table_lookup (targets, b->target);

      if (sum == NULL)
        {
          sum = g_new0 (guint64, 1);
          g_hash_table_insert (targets, g_strdup (b->target), sum);
        }
      *sum += b->errors;
      if (job == NULL || g_str_equal (b->job, job))
        g_array_append_vals (mine, b, 1);  /* borrowed: rows owns the strings */
    }
  out->chains = kt_audit_chains (mine, lookup_stored, lookup_covered, &lookup, out->problems);
  out->batches = mine->len;
  {
    g_autoptr(GHashTable) ranges = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
    GHashTableIter iter;
    gpointer name, record;

    g_hash_table_iter_init (&iter, records);
    while (g_hash_table_iter_next (&iter, &name, &record))
      if (is_replay (name))
        g_hash_table_insert (ranges, g_strdup (name), ((KtJobRow *) record)->replay_range);
    kt_audit_replay_ranges (mine, ranges, out->problems);
  }
  kt_audit_shared (rows, job, out->problems, out->notes);
  orphan_coverage (job, mine, covered, out->problems);
  check_totals (db, targets, out->tables, out->problems);
  g_array_set_size (mine, 0);
  kt_db_abort (db);  /* it read only */
  return TRUE;
}
