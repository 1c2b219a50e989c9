/* kind-count-idempotent.c - per-minute counts, idempotent (--mode idempotent).
 *
 * The counts (per topic and minute, error_log_topic, or NAME_topic for
 * run --table NAME) are added together
 * with each partition's set of offsets they include (ktally_coverage, see
 * coverage.h), in one transaction: a batch counts
 * only offsets outside the set it planned from, and adds its counts only
 * if the set is still that one (read FOR UPDATE), extending it in the same
 * transaction. The offsets are stored after, in kafka_offset or the
 * consumer group (--offsets kafka). Writing a batch twice (a crash between
 * the two, a zombie writer), or a rewind of the offsets to anywhere, counts
 * no offset twice. */
#include "kind.h"

#include <stdlib.h>
#include "coverage.h"
#include "counts.h"
#include "db-rows.h"
#include "error.h"
#include "schema.h"

/* What a batch does with one partition. */
typedef struct
{
  gint32      partition;
  KtCoverage *expected;  /* the offsets counted when the batch planned */
  KtCoverage *covered;   /* expected, plus what the batch read (at commit) */
  GArray     *skips;     /* KtInterval: the covered parts of its range */
  guint       skip_at;   /* the first skip not wholly below the last offset */
  gboolean    lost;      /* the range starts past a skipped data loss */
} Part;

/* What the kind keeps from batch to batch. */
typedef struct
{
  KtKindContext  *context;
  KtParser       *parser;
  KtCountsShape   shape;     /* of the output view */
  char           *topics;    /* the table of per-topic rows under it */
  gpointer        taking;    /* the batch whose malformed lines the parser keeps */
} Idempotent;

/* One batch. */
typedef struct
{
  Idempotent     *kind;
  const GArray   *ranges;    /* KtRange, the scheduler's */
  KtKeyLimit     *limit;     /* --max-keys over the batch, all partitions */
  GPtrArray      *parts;     /* Part per range */
  /* What the parts read outside their covered sets, all partitions
   * together: the rows are per topic, and with sparse log time nearly
   * every line is a row of its own, which a KtCounts per partition held
   * (and sorted and folded at write) once per partition that read it. */
  KtCounts       *counts;
  GArray         *stats;     /* KtRangeStats per range */
  KtBatchSummary  summary;
  KtDeadLetters  *dead;      /* --dead-letters, or NULL */
} IdemBatch;

static void
part_free (gpointer data)
{
  Part *part = data;

  kt_coverage_free (part->expected);
  kt_coverage_free (part->covered);
  g_array_unref (part->skips);
  g_free (part);
}

static void
idem_close (gpointer data)
{
  Idempotent *self = data;

  if (self == NULL)
    return;
  kt_parser_free (self->parser);
  g_free (self->topics);
  kt_counts_shape_clear (&self->shape);
  g_free (self);
}

static gpointer
idem_open (KtKindContext *context, GError **error)
{
  Idempotent *self = g_new0 (Idempotent, 1);

  self->context = context;
  self->parser = kt_counts_parser (kt_counts_options (context), error);
  kt_counts_shape (kt_counts_options (context), &self->shape);
  self->topics = g_strconcat (context->output, KT_TOPIC_SUFFIX, NULL);
  if (self->parser == NULL)
    {
      idem_close (self);
      return NULL;
    }
  return self;
}

static gboolean
idem_prepare (gpointer data, GError **error)
{
  Idempotent *self = data;
  return kt_counts_prepare_job (self->context->db, TRUE, self->context->output, &self->shape,
                                kt_counts_options (self->context)->dead_letters, error);
}

/* Appends " WHERE job = 'J' AND topic = 'T' AND `partition` IN (...)" for
 * the partitions of @ranges. */
static void
where_partitions (Idempotent *self, GString *sql, const GArray *ranges)
{
  g_string_append (sql, " WHERE job = ");
  kt_db_quote (self->context->db, sql, self->context->job);
  g_string_append (sql, " AND topic = ");
  kt_db_quote (self->context->db, sql, self->context->topic);
  g_string_append (sql, " AND `partition` IN (");
  for (guint i = 0; i < ranges->len; i++)
    g_string_append_printf (sql, "%s%d", i ? "," : "", g_array_index (ranges, KtRange, i).partition);
  g_string_append_c (sql, ')');
}

/* The covered sets of @ranges' partitions (FOR UPDATE when @lock) into
 * @sets: partition -> KtCoverage*, absent where no row exists. */
static gboolean
read_coverage (Idempotent *self, const GArray *ranges, gboolean lock, GHashTable *sets,
               GError **error)
{
  g_autoptr(GString) sql = g_string_new ("SELECT `partition`, covered FROM ktally_coverage");
  g_autoptr(KtDbRows) res = NULL;
  const char *const *row;

  where_partitions (self, sql, ranges);
  if (lock)
    g_string_append (sql, " ORDER BY `partition` FOR UPDATE");
  res = kt_db_rows_select (self->context->db, sql->str, "cannot read ktally_coverage", error);
  if (res == NULL)
    return FALSE;
  while ((row = kt_db_rows_next (res)) != NULL)
    {
      g_autofree char *what = g_strdup_printf ("ktally_coverage of %s/%s", self->context->topic,
                                               row[0]);
      KtCoverage *set = kt_coverage_parse (row[1], what, error);

      if (set == NULL)
        return FALSE;
      g_hash_table_replace (sets, GINT_TO_POINTER (atoi (row[0])), set);
    }
  return TRUE;
}

static void
idem_batch_free (gpointer data)
{
  IdemBatch *b = data;

  if (b == NULL)
    return;
  if (b->kind->taking == b)
    {
      kt_parser_set_malformed_func (b->kind->parser, NULL, NULL);
      b->kind->taking = NULL;
    }
  kt_dead_letters_free (b->dead);
  g_clear_pointer (&b->parts, g_ptr_array_unref);
  kt_counts_free (b->counts);
  kt_key_limit_free (b->limit);
  g_clear_pointer (&b->stats, g_array_unref);
  g_free (b);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (IdemBatch, idem_batch_free)

/* The part of @b that reads @partition, its index in *@at; NULL: none. */
static const Part *
find_part (const IdemBatch *b, gint32 partition, guint *at)
{
  for (guint i = 0; i < b->parts->len; i++)
    if (((const Part *) b->parts->pdata[i])->partition == partition)
      {
        *at = i;
        return b->parts->pdata[i];
      }
  return NULL;
}

/* What @prior's output covers of @partition once it commits: the set it
 * planned from and the range it read (what its write makes the set). New
 * set; NULL when @prior did not read @partition. */
static KtCoverage *
covered_after (const IdemBatch *prior, gint32 partition)
{
  guint at = 0;
  const Part *part = find_part (prior, partition, &at);
  const KtRange *rg;
  KtCoverage *set;

  if (part == NULL)
    return NULL;
  rg = &g_array_index (prior->ranges, KtRange, at);
  set = kt_coverage_copy (part->expected);
  kt_coverage_add (set, rg->read_from, rg->until);
  return set;
}

static gboolean
idem_ahead (gconstpointer data, const GArray *ranges)
{
  const IdemBatch *prior = data;
  guint at;

  /* The others' sets are the database's, which only a batch that holds the
   * connection may read. */
  for (guint i = 0; i < ranges->len; i++)
    if (find_part (prior, g_array_index (ranges, KtRange, i).partition, &at) == NULL)
      return FALSE;
  return TRUE;
}

/* A batch: each range skips what its partition's output already counted
 * (the set stored, or the one @prior leaves), and gets its Part. */
static gpointer
idem_batch_new (gpointer data, GArray *ranges, const GArray *states,
                gint64 max_per_partition, gconstpointer prior, GError **error)
{
  Idempotent *self = data;
  const KtCountOptions *options = kt_counts_options (self->context);
  g_autoptr(IdemBatch) b = g_new0 (IdemBatch, 1);
  g_autoptr(GHashTable) sets = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL,
                                                      (GDestroyNotify) kt_coverage_free);

  b->kind = self;
  b->ranges = ranges;
  b->limit = kt_key_limit_new (options->max_keys);
  b->parts = g_ptr_array_new_with_free_func (part_free);
  b->counts = kt_counts_new (options, -1, b->limit);
  b->stats = g_array_new (FALSE, TRUE, sizeof (KtRangeStats));
  g_array_set_size (b->stats, ranges->len);
  for (guint i = 0; i < ranges->len; i++)
    {
      const KtRange *rg = &g_array_index (ranges, KtRange, i);

      for (guint j = 0; j < states->len; j++)
        {
          const KtPartitionState *st = &g_array_index (states, KtPartitionState, j);

          /* --on-data-loss skip past the log's end (the topic recreated or
           * truncated): the new log's offsets are ones this job counted
           * already, so it would skip its records as counted, silently. */
          if (st->partition == rg->partition && rg->from > st->high)
            {
              g_set_error (error, KT_ERROR, KT_ERROR_DATA_LOSS,
                           "topic %s, partition %d: stored offset %" G_GINT64_FORMAT
                           " is beyond the high watermark %" G_GINT64_FORMAT " (topic recreated "
                           "or truncated?), and an idempotent job cannot go back: it would take "
                           "the new log's offsets for ones it counted; `ktally forget --job %s --execute` "
                           "and run again to count the new log from its start", self->context->topic,
                           rg->partition, rg->from, st->high, self->context->job);
              return NULL;
            }
        }
    }
  if (prior != NULL)
    for (guint i = 0; i < ranges->len; i++)
      {
        gint32 p = g_array_index (ranges, KtRange, i).partition;
        KtCoverage *set = covered_after (prior, p);

        g_return_val_if_fail (set != NULL, NULL);  /* ahead() said so */
        g_hash_table_replace (sets, GINT_TO_POINTER (p), set);
      }
  else if (ranges->len > 0
           && (!kt_db_connect (self->context->db, error)
               || !read_coverage (self, ranges, FALSE, sets, error)))
    return NULL;
  for (guint i = 0; i < ranges->len; i++)
    {
      KtRange *rg = &g_array_index (ranges, KtRange, i);
      Part *part = g_new0 (Part, 1);

      part->partition = rg->partition;
      if (!g_hash_table_steal_extended (sets, GINT_TO_POINTER (rg->partition), NULL,
                                        (gpointer *) &part->expected))
        part->expected = kt_coverage_new ();
      part->lost = rg->read_from > rg->from;  /* before skipping what is covered */
      for (guint j = 0; j < states->len; j++)
        if (g_array_index (states, KtPartitionState, j).partition == rg->partition)
          kt_plan_skip_covered (rg, part->expected,
                                g_array_index (states, KtPartitionState, j).high,
                                max_per_partition);
      part->skips = g_array_new (FALSE, FALSE, sizeof (KtInterval));
      kt_coverage_within (part->expected, rg->read_from, rg->until, part->skips);
      g_ptr_array_add (b->parts, part);
    }
  /* The parser tells this batch's dead letters from now on. */
  b->dead = kt_dead_letters_new (options, self->parser);
  self->taking = b;
  return g_steal_pointer (&b);
}

/* Whether @offset was counted before: read again, never counted again.
 * Offsets come in ascending order per partition. */
static gboolean
part_covers (Part *part, gint64 offset)
{
  while (part->skip_at < part->skips->len
         && g_array_index (part->skips, KtInterval, part->skip_at).until <= offset)
    part->skip_at++;
  return part->skip_at < part->skips->len
         && g_array_index (part->skips, KtInterval, part->skip_at).from <= offset;
}

static void
idem_take (gpointer data, guint range, gint32 partition, gint64 offset, const char *value,
           gsize len)
{
  IdemBatch *b = data;
  Part *part = b->parts->pdata[range];

  kt_dead_letters_at (b->dead, partition, offset);
  if (!part_covers (part, offset))
    kt_counts_take (b->kind->parser, b->counts, partition, offset, value, len,
                    &g_array_index (b->stats, KtRangeStats, range), &b->summary);
}

/* Adds the batch's counts to the per-topic table: one row per bucket and
 * key of the topic, whichever partitions counted it, in (bucket, key)
 * order. Only the parts written counted anything: a part that is not
 * read nothing outside its set. */
static gboolean
add_counts (IdemBatch *b, GError **error)
{
  Idempotent *self = b->kind;

  return kt_counts_upsert (self->context->db, self->topics, &self->shape, self->context->job,
                           self->context->topic, &b->counts, 1, error);
}

/* In the scheduler's transaction: for every part to write, its covered
 * set is locked and must still be what the batch planned from (else
 * *@moved is its partition, and the scheduler rolls back); then the
 * counts, the new sets and the audit rows (ranges[@write], with what each
 * counted). */
static gboolean
write_output (IdemBatch *b, const GArray *ranges, const GArray *write, gint32 *moved,
              GError **error)
{
  Idempotent *self = b->kind;
  KtKindContext *context = self->context;
  g_autoptr(GHashTable) sets = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL,
                                                      (GDestroyNotify) kt_coverage_free);
  g_autoptr(GArray) written = g_array_new (FALSE, FALSE, sizeof (KtRange));
  g_autoptr(GArray) stats = g_array_new (FALSE, FALSE, sizeof (KtRangeStats));
  g_autoptr(GString) sql = g_string_new (NULL);

  *moved = -1;
  for (guint i = 0; i < write->len; i++)
    {
      guint r = g_array_index (write, guint, i);
      g_array_append_val (written, g_array_index (ranges, KtRange, r));
      g_array_append_val (stats, g_array_index (b->stats, KtRangeStats, r));
    }
  /* 1. Lock each partition's covered set, in partition order, creating the
   *    rows of new partitions first: a row that does not exist locks
   *    nothing, and writers of one partition must queue here. */
  g_string_assign (sql, "INSERT IGNORE INTO ktally_coverage (job, topic, `partition`, covered) "
                        "VALUES ");
  for (guint i = 0; i < written->len; i++)
    {
      g_string_append (sql, i ? ",(" : "(");
      kt_db_quote (context->db, sql, context->job);
      g_string_append_c (sql, ',');
      kt_db_quote (context->db, sql, context->topic);
      g_string_append_printf (sql, ",%d,'')", g_array_index (written, KtRange, i).partition);
    }
  if (!kt_db_run (context->db, sql->str, "cannot write ktally_coverage", error)
      || !read_coverage (self, written, TRUE, sets, error))
    return FALSE;

  /* 2. Compare and set: a set that moved since we planned means another
   *    writer (or an earlier life of this one) counted some of our offsets. */
  for (guint i = 0; i < write->len; i++)
    {
      const Part *part = b->parts->pdata[g_array_index (write, guint, i)];
      const KtCoverage *now = g_hash_table_lookup (sets, GINT_TO_POINTER (part->partition));

      if (now == NULL || !kt_coverage_equal (now, part->expected))
        {
          *moved = part->partition;
          return TRUE;
        }
    }

  /* 3. The counts, the malformed lines kept (--dead-letters), then the
   *    sets that include them, and the audit rows. */
  if (!add_counts (b, error)
      || !kt_dead_letters_write (b->dead, context->db, context->job, context->topic, error)
      || !kt_offsets_record (context->db, context->job, context->topic, context->output, context->member, written,
                             (const KtRangeStats *) (void *) stats->data, &context->audit_id,
                             error))
    return FALSE;
  /* The sets in one statement, a CASE by partition (a statement each was
   * a round trip per partition and batch); with them, the anchor of the
   * last record each range read: a record the counts include (counted
   * now, or before and read again). */
  g_string_assign (sql, "UPDATE ktally_coverage SET covered = CASE `partition`");
  for (guint i = 0; i < write->len; i++)
    {
      const Part *part = b->parts->pdata[g_array_index (write, guint, i)];
      g_autofree char *text = kt_coverage_format (part->covered);

      g_string_append_printf (sql, " WHEN %d THEN ", part->partition);
      kt_db_quote (context->db, sql, text);
    }
  g_string_append (sql, " ELSE covered END");
  kt_offsets_set_anchors (sql, written);
  where_partitions (self, sql, written);
  if (!kt_db_run (context->db, sql->str, "cannot write ktally_coverage", error))
    return FALSE;
  /* A COMMIT whose answer is lost needs no special care here: if it
   * landed, the next plan reads the new sets and counts nothing twice. */
  return TRUE;
}

/* Output first (in the scheduler's transaction), then the offsets
 * (idem_after): a crash between the two leaves offsets that the next plan
 * finds covered, and skips. */
static gboolean
idem_write (gpointer data, const GArray *ranges, gint32 *fenced, GError **error)
{
  IdemBatch *b = data;
  g_autoptr(GArray) write = g_array_new (FALSE, FALSE, sizeof (guint));

  *fenced = -1;
  for (guint i = 0; i < ranges->len; i++)
    {
      const KtRange *rg = &g_array_index (ranges, KtRange, i);
      Part *part = b->parts->pdata[i];

      g_clear_pointer (&part->covered, kt_coverage_free);
      part->covered = kt_coverage_copy (part->expected);
      kt_coverage_add (part->covered, rg->read_from, rg->until);
      /* A skipped loss changes no count, but its audit row says where the
       * offsets went: the chain must not show a hole there. */
      if (!kt_coverage_equal (part->covered, part->expected) || part->lost)
        g_array_append_val (write, i);
    }
  return write->len == 0 || write_output (b, ranges, write, fenced, error);
}

static gboolean
idem_after (gpointer data, const GArray *ranges, gint32 *fenced, GError **error)
{
  KtKindContext *context = ((IdemBatch *) data)->kind->context;

  *fenced = -1;
  if (context->spec->offsets == KT_OFFSETS_KAFKA)
    return kt_source_commit (context->source, ranges, error);
  return kt_offsets_store (context->db, context->job, context->topic, ranges, fenced, error);
}

/* `ktally reset`: the covered sets of @job's partitions of @topic. */
static gboolean
idem_counted (KtDb *db, const char *job, const char *topic, GHashTable *sets, GError **error)
{
  g_autoptr(GString) sql = g_string_new ("SELECT `partition`, covered FROM ktally_coverage "
                                         "WHERE job = ");
  g_autoptr(KtDbRows) res = NULL;
  g_autofree char *type = NULL;
  const char *const *row;

  if (!kt_db_table_type (db, "ktally_coverage", &type, error))
    return FALSE;
  if (type == NULL)
    return TRUE;  /* nothing counted yet */
  kt_db_quote (db, sql, job);
  g_string_append (sql, " AND topic = ");
  kt_db_quote (db, sql, topic);
  res = kt_db_rows_select (db, sql->str, "cannot read ktally_coverage", error);
  if (res == NULL)
    return FALSE;
  while ((row = kt_db_rows_next (res)) != NULL)
    {
      g_autofree char *what = g_strdup_printf ("ktally_coverage of %s/%s", topic, row[0]);
      KtCoverage *set = kt_coverage_parse (row[1], what, error);

      if (set == NULL)
        return FALSE;
      g_hash_table_replace (sets, GINT_TO_POINTER (atoi (row[0])), set);
    }
  return TRUE;
}

static void
idem_summarise (gpointer data, KtBatchSummary *out, GString *line)
{
  IdemBatch *b = data;
  guint rows;

  *out = b->summary;
  kt_dead_letters_summarise (b->dead, out);
  rows = kt_counts_size (b->counts);
  kt_counts_summarise (b->counts, out);
  kt_counts_line (out, rows, kt_counts_options (b->kind->context)->bucket, line);
}

const KtKind kt_kind_count_idempotent = {
  .options = kt_count_option_rows,
  .options_size = sizeof (KtCountOptions),
  .check_options = kt_counts_check,
  .kind = "count",
  .mode = "idempotent",
  .holds = "counts",
  .parses = TRUE,
  .reread = KT_REREAD_SKIPS,
  .rebuilds = TRUE,
  .rows_suffix = KT_TOPIC_SUFFIX,  /* run --table NAME writes NAME_topic */
  .records = "ktally_coverage",
  .counted = idem_counted,
  .anchors = "ktally_coverage",
  .open = idem_open,
  .close = idem_close,
  .prepare = idem_prepare,
  .ahead = idem_ahead,
  .batch_new = idem_batch_new,
  .batch_free = idem_batch_free,
  .take = idem_take,
  .write = idem_write,
  .after = idem_after,
  .summarise = idem_summarise,
};
