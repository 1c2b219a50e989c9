/* reset.c - `ktally reset`'s plan and its writes (reset.h). */
#include "reset.h"

#include <string.h>
#include "job-spec.h"
#include "error.h"
#include "identity.h"
#include "offsets.h"
#include "options.h"
#include "schema.h"

gboolean
kt_reset_target_parse (const char *text, KtResetTarget *target, GError **error)
{
  guint64 id;

  *target = (KtResetTarget) { 0 };
  if (g_strcmp0 (text, "earliest") == 0)
    target->to = KT_RESET_EARLIEST;
  else if (g_strcmp0 (text, "latest") == 0)
    target->to = KT_RESET_LATEST;
  else if (g_str_has_prefix (text, "batch:"))
    {
      if (!g_ascii_string_to_unsigned (text + strlen ("batch:"), 10, 1, G_MAXINT64, &id, NULL))
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                       "--to: expected batch:ID with ID a ktally_batches id, got '%s'", text);
          return FALSE;
        }
      target->to = KT_RESET_BATCH;
      target->batch = (gint64) id;
    }
  else
    {
      target->to = KT_RESET_OFFSETS;
      target->offsets = g_array_new (FALSE, FALSE, sizeof (KtPartitionOffset));
      if (text == NULL || *text == '\0'
          || !kt_partition_offsets_parse ("--to", text, target->offsets, NULL))
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                       "--to: expected earliest, latest, PARTITION:OFFSET[,...] or batch:ID, "
                       "got '%s'", text != NULL ? text : "");
          kt_reset_target_clear (target);
          return FALSE;
        }
    }
  return TRUE;
}

void
kt_reset_target_clear (KtResetTarget *target)
{
  g_clear_pointer (&target->offsets, g_array_unref);
}

void
kt_reset_move_clear (KtResetMove *move)
{
  g_clear_pointer (&move->topic, g_free);
  g_clear_pointer (&move->skipped, g_array_unref);
  g_clear_pointer (&move->counted_already, g_array_unref);
  g_clear_pointer (&move->newly_counted, g_array_unref);
}

/* [from, until) split by @counted (NULL: nothing counted) into what it
 * covers (@in) and the rest (@out). */
static void
split (const KtCoverage *counted, gint64 from, gint64 until, GArray *in, GArray *out)
{
  g_autoptr(GArray) covered = g_array_new (FALSE, FALSE, sizeof (KtInterval));
  gint64 at = from;

  if (counted != NULL)
    kt_coverage_within (counted, from, until, covered);
  for (guint i = 0; i < covered->len; i++)
    {
      KtInterval c = g_array_index (covered, KtInterval, i);

      if (c.from > at)
        g_array_append_val (out, ((KtInterval) { at, c.from }));
      g_array_append_val (in, c);
      at = c.until;
    }
  if (at < until)
    g_array_append_val (out, ((KtInterval) { at, until }));
}

/* Where @target puts partition @s (FALSE: it stays); KT_ERROR_USAGE when
 * that leaves the log. */
static gboolean
target_offset (const KtResetTarget *target, const char *topic, const KtPartitionState *s,
               const GArray *starts, gint64 *to, GError **error)
{
  const GArray *list = target->to == KT_RESET_OFFSETS ? target->offsets : starts;
  const KtPartitionOffset *po;

  *to = s->stored;
  switch (target->to)
    {
    case KT_RESET_EARLIEST:
      *to = s->low;
      return TRUE;
    case KT_RESET_LATEST:
      *to = s->high;
      return TRUE;
    case KT_RESET_SHIFT:
      /* As Kafka's own tool does: a shift past either end stops there. */
      *to = target->shift < 0 ? s->stored - MIN (-target->shift, s->stored)
                              : s->stored + MIN (target->shift, s->high);
      *to = CLAMP (*to, s->low, s->high);
      return TRUE;
    case KT_RESET_OFFSETS:
    case KT_RESET_BATCH:
    case KT_RESET_TIME:
    default:
      break;
    }
  /* The list is by partition: a search, not a scan per partition. */
  po = kt_partition_offset_find (list, s->partition);
  if (po == NULL)
    return TRUE;
  if (po->offset > s->high)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "--to: %s/%d:%" G_GINT64_FORMAT " is beyond the high watermark %"
                   G_GINT64_FORMAT, topic, s->partition, po->offset, s->high);
      return FALSE;
    }
  if (po->offset < s->low)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "--to: %s/%d:%" G_GINT64_FORMAT " is below the log start %"
                   G_GINT64_FORMAT ": retention removed those offsets", topic,
                   s->partition, po->offset, s->low);
      return FALSE;
    }
  *to = po->offset;
  return TRUE;
}

/* --to P:OFF names partitions the job must have. */
static gboolean
named_partitions_stored (const KtResetPolicy *policy, const KtResetTarget *target,
                         const char *topic, const KtPartitionState *states, guint n_states,
                         GError **error)
{
  for (guint i = 0; target->to == KT_RESET_OFFSETS && i < target->offsets->len; i++)
    {
      gint32 p = g_array_index (target->offsets, KtPartitionOffset, i).partition;
      guint lo = 0, hi = n_states;

      /* @states are by partition: a search. */
      while (lo < hi)
        {
          guint mid = lo + (hi - lo) / 2;

          if (states[mid].partition < p)
            lo = mid + 1;
          else
            hi = mid;
        }
      if (lo == n_states || states[lo].partition != p)
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                       "--to: job %s stores no offset for %s/%d (%u partition%s of it)",
                       policy->job, topic, p, n_states, n_states == 1 ? "" : "s");
          return FALSE;
        }
    }
  return TRUE;
}

/* A rebuild goes back to the log start; refused where retention removed
 * offsets the job counted (@began: its first audited offset, or NULL),
 * unless the policy accepts the loss. */
static gboolean
plan_rebuild (const KtResetPolicy *policy, const char *topic, const KtPartitionState *s,
              const gint64 *began, KtResetMove *mv, GError **error)
{
  mv->to = s->low;
  mv->rebuild = TRUE;
  /* A replay counts its range again: from its --from, which must still be
   * there (the replay itself refuses to run otherwise). */
  if (policy->replay_from != NULL)
    {
      const KtPartitionOffset *f = kt_partition_offset_find (policy->replay_from, s->partition);

      if (f != NULL && f->offset < s->low)
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                       "--rebuild: replay %s's range of %s/%d starts at %" G_GINT64_FORMAT
                       ", and the log starts at %" G_GINT64_FORMAT " now: offsets [%"
                       G_GINT64_FORMAT ", %" G_GINT64_FORMAT ") are gone, so the replay "
                       "cannot be counted again; refused", policy->job, topic, s->partition,
                       f->offset, s->low, f->offset, s->low);
          return FALSE;
        }
      if (f != NULL)
        {
          mv->to = f->offset;
          return TRUE;
        }
    }
  if (began == NULL || *began >= s->low)
    return TRUE;
  mv->lost = (KtInterval) { *began, s->low };
  if (policy->accept_data_loss)
    return TRUE;
  g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
               "--rebuild: job %s counted %s/%d from %" G_GINT64_FORMAT
               ", and the log starts at %" G_GINT64_FORMAT " now: offsets [%"
               G_GINT64_FORMAT ", %" G_GINT64_FORMAT ") are gone, and the "
               "rebuilt %s would no longer count them; add "
               "--accept-data-loss to rebuild anyway", policy->job, topic,
               s->partition, *began, s->low, *began, s->low, policy->output);
  return FALSE;
}

/* A replay's job never leaves its range: an offset given outside it is
 * refused, any other target stops at its ends (->clamped, ->stopped). */
static gboolean
replay_bounds (const KtResetPolicy *policy, const KtResetTarget *target, const char *topic,
               const KtPartitionState *s, KtResetMove *mv, GError **error)
{
  const KtPartitionOffset *f = kt_partition_offset_find (policy->replay_from, s->partition);
  const KtPartitionOffset *u = kt_partition_offset_find (policy->replay_until, s->partition);

  if (f == NULL || u == NULL)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "replay %s stores an offset of %s/%d, which its range does not name; "
                   "refused", policy->job, topic, s->partition);
      return FALSE;
    }
  if (mv->to >= f->offset && mv->to <= u->offset)
    return TRUE;
  if (target->to == KT_RESET_OFFSETS)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "--to: %s/%d:%" G_GINT64_FORMAT " is outside replay %s's range of that "
                   "partition, [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "]: a replay counts "
                   "its range and nothing else; refused", topic, s->partition, mv->to,
                   policy->job, f->offset, u->offset);
      return FALSE;
    }
  mv->stopped = mv->to < f->offset ? "replay's --from" : "replay's --until";
  mv->to = CLAMP (mv->to, f->offset, u->offset);
  mv->clamped = TRUE;
  return TRUE;
}

/* A move back: what the kind does with offsets it reads again. */
static gboolean
plan_back (const KtResetPolicy *policy, const char *topic, const KtPartitionState *s,
           const KtCoverage *done, KtResetMove *mv, GError **error)
{
  if (policy->recount && policy->reread == KT_REREAD_COUNTS_TWICE && policy->retracts)
    {
      mv->recount = TRUE;
      return TRUE;
    }
  if (policy->recount && policy->reread == KT_REREAD_COUNTS_TWICE)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "--rebuild: job %s's kind cannot take counts back out of %s, so it "
                   "cannot recount a range; refused (--to earliest --rebuild empties it and "
                   "counts everything again)", policy->job, policy->output);
      return FALSE;
    }
  if (policy->recount && policy->reread == KT_REREAD_SKIPS)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "--rebuild: job %s is idempotent: moved back, it counts nothing twice "
                   "and nothing again (its covered sets skip what it counted); leave out "
                   "--rebuild to move it back, or give --to earliest --rebuild to empty "
                   "%s and count everything again", policy->job, policy->output);
      return FALSE;
    }
  switch (policy->reread)
    {
    case KT_REREAD_SKIPS:
      split (done, mv->to, s->stored, mv->counted_already, mv->newly_counted);
      return TRUE;
    case KT_REREAD_REFUSED:
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "job %s cannot move back (%s/%d from %" G_GINT64_FORMAT " to %"
                   G_GINT64_FORMAT "): %s", policy->job, topic, s->partition,
                   s->stored, mv->to, policy->why_no_rewind);
      return FALSE;
    case KT_REREAD_COUNTS_TWICE:
    default:
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "job %s counts offsets it reads again twice (transactional): "
                   "moving %s/%d back from %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT
                   " would count [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ") again "
                   "into %s; refused (add --rebuild to take [%" G_GINT64_FORMAT ", %"
                   G_GINT64_FORMAT ") back out of %s and count it again)", policy->job, topic,
                   s->partition, s->stored, mv->to, mv->to, s->stored, policy->output,
                   mv->to, s->stored, policy->output);
      return FALSE;
    }
}

gboolean
kt_reset_plan (const KtResetPolicy *policy, const KtResetTarget *target, const char *topic,
               const KtPartitionState *states, guint n_states, GHashTable *counted,
               GHashTable *first, const GArray *starts, GArray *moves, GError **error)
{
  if (!named_partitions_stored (policy, target, topic, states, n_states, error))
    return FALSE;
  for (guint i = 0; i < n_states; i++)
    {
      const KtPartitionState *s = &states[i];
      const KtCoverage *done = counted != NULL
        ? g_hash_table_lookup (counted, GINT_TO_POINTER (s->partition)) : NULL;
      const gint64 *began = first != NULL
        ? g_hash_table_lookup (first, GINT_TO_POINTER (s->partition)) : NULL;
      KtResetMove m = {
        .topic = g_strdup (topic), .partition = s->partition, .stored = s->stored,
        .low = s->low, .high = s->high, .to = s->stored,
        .skipped = g_array_new (FALSE, FALSE, sizeof (KtInterval)),
        .counted_already = g_array_new (FALSE, FALSE, sizeof (KtInterval)),
        .newly_counted = g_array_new (FALSE, FALSE, sizeof (KtInterval)),
      };
      KtResetMove *mv;

      /* Appended at once, so the array frees it whatever happens next. */
      g_array_append_val (moves, m);
      mv = &g_array_index (moves, KtResetMove, moves->len - 1);
      if (policy->rebuild)
        {
          if (!plan_rebuild (policy, topic, s, began, mv, error))
            return FALSE;
          continue;
        }
      if (!target_offset (target, topic, s, starts, &mv->to, error))
        return FALSE;
      mv->clamped = target->to == KT_RESET_SHIFT && mv->to - s->stored != target->shift;
      if (mv->clamped)
        mv->stopped = mv->to == s->low ? "log start" : "high watermark";
      if (policy->replay_from != NULL
          && !replay_bounds (policy, target, topic, s, mv, error))
        return FALSE;
      /* A recount counts again what the job counted: it never skips what
       * the job has not counted yet (a partition behind the moment). */
      if (policy->recount && mv->to > s->stored)
        mv->to = s->stored;
      if (mv->to > s->stored)
        split (done, s->stored, mv->to, mv->counted_already, mv->skipped);
      else if (mv->to < s->stored && !plan_back (policy, topic, s, done, mv, error))
        return FALSE;
    }
  return TRUE;
}

gboolean
kt_reset_changes (const GArray *moves)
{
  for (guint i = 0; i < moves->len; i++)
    {
      const KtResetMove *m = &g_array_index (moves, KtResetMove, i);
      if (m->to != m->stored || m->rebuild)
        return TRUE;
    }
  return FALSE;
}

/* Intervals shown per kind before "and N more". */
#define SHOWN 3

/* "[a, b), [c, d) and 3 more" */
static void
append_intervals (GString *out, const GArray *a)
{
  for (guint i = 0; i < a->len && i < SHOWN; i++)
    g_string_append_printf (out, "%s[%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ")",
                            i ? ", " : "", g_array_index (a, KtInterval, i).from,
                            g_array_index (a, KtInterval, i).until);
  if (a->len > SHOWN)
    g_string_append_printf (out, " and %u more", a->len - SHOWN);
}

char *
kt_reset_move_words (const KtResetMove *m)
{
  GString *out = g_string_new (NULL);
  const char *sep = "";

  if (m->rebuild)
    {
      g_string_append_printf (out, "rebuild: [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT
                              ") counted again, from emptied counts", m->to, m->high);
      if (m->lost.until > m->lost.from)
        g_string_append_printf (out, "; [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ") gone to "
                                "retention: no longer counted", m->lost.from, m->lost.until);
      return g_string_free (out, FALSE);
    }
  if (m->by_time)
    g_string_append_printf (out, "the moment is at %" G_GINT64_FORMAT " (%s); ", m->at,
                            kt_time_place_words (m->place));
  if (m->clamped)
    g_string_append_printf (out, "stopped at the %s; ", m->stopped);
  if (m->kept.until > m->kept.from)
    g_string_append_printf (out, "[%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ") was skipped by "
                            "an earlier reset and stays skipped (never counted): the recount "
                            "starts after it, at %" G_GINT64_FORMAT "; ", m->kept.from,
                            m->kept.until, m->kept.until);
  if (m->to == m->stored)
    return g_string_free (g_string_append (out, "stays"), FALSE);
  if (m->recount)
    {
      g_string_append_printf (out, "back: recount [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT
                              "): read again, as its audit rows recorded (%" G_GUINT64_FORMAT
                              " records, %" G_GUINT64_FORMAT " ERROR, %" G_GUINT64_FORMAT
                              " malformed), taken back out of %u row%s and counted again",
                              m->to, m->stored, m->taken.records, m->taken.errors,
                              m->taken.malformed, m->taken_rows, m->taken_rows == 1 ? "" : "s");
      if (m->by_time && m->to < m->at)
        g_string_append_printf (out, " (from %" G_GINT64_FORMAT ", where the batch holding %"
                                G_GINT64_FORMAT " started)", m->to, m->at);
      return g_string_free (out, FALSE);
    }
  g_string_append (out, m->to > m->stored ? "forward: " : "back: ");
  if (m->skipped->len > 0)
    {
      g_string_append (out, "offsets ");
      append_intervals (out, m->skipped);
      g_string_append (out, " will never be counted");
      if (m->stored < m->low)
        g_string_append_printf (out, " ([%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ") are "
                                "gone to retention already)", m->stored,
                                MIN (m->low, m->to));
      sep = "; ";
    }
  if (m->counted_already->len > 0)
    {
      g_string_append (out, sep);
      append_intervals (out, m->counted_already);
      g_string_append (out, m->to > m->stored ? " counted already"
                                              : " read again: counted already, not counted twice");
      sep = "; ";
    }
  if (m->newly_counted->len > 0)
    {
      g_string_append (out, sep);
      append_intervals (out, m->newly_counted);
      g_string_append (out, " never counted before: counted when read");
    }
  return g_string_free (out, FALSE);
}

/* The ranges [stored, to) of @moves' moves of the topic of moves[@i]
 * that go @forward (or, not @forward, every move that moves) into @ranges,
 * by topic: the moves of one topic are together in a plan. Returns the
 * index past them. */
static guint
topic_ranges (const GArray *moves, guint i, gboolean forward, GArray *ranges)
{
  const char *topic = g_array_index (moves, KtResetMove, i).topic;

  g_array_set_size (ranges, 0);
  for (; i < moves->len && g_str_equal (g_array_index (moves, KtResetMove, i).topic, topic); i++)
    {
      const KtResetMove *m = &g_array_index (moves, KtResetMove, i);

      if (m->to != m->stored && (!forward || (!m->rebuild && m->to > m->stored)))
        g_array_append_val (ranges, ((KtRange) { .partition = m->partition, .from = m->stored,
                                                 .read_from = m->stored, .until = m->to }));
    }
  return i;
}

gboolean
kt_reset_record_skips (KtDb *db, const char *job, const char *output, const char *member,
                       const GArray *moves, GError **error)
{
  g_autoptr(GArray) ranges = g_array_new (FALSE, FALSE, sizeof (KtRange));

  /* The audit row of a move forward says where the offsets went: no
   * record was read, none counted, and the chain has no hole; marked a
   * skip, so that no recount counts it. One INSERT per topic. */
  for (guint i = 0, next; i < moves->len; i = next)
    {
      next = topic_ranges (moves, i, TRUE, ranges);
      if (!kt_offsets_record_skips (db, job, g_array_index (moves, KtResetMove, i).topic, output,
                                    member, ranges, error))
        return FALSE;
    }
  return TRUE;
}

gboolean
kt_reset_apply (KtDb *db, const char *job, const char *output, const char *member,
                const GArray *moves, GError **error)
{
  g_autoptr(GArray) ranges = g_array_new (FALSE, FALSE, sizeof (KtRange));

  /* The fence of each topic's moves: two statements, whatever the number
   * of partitions. */
  for (guint i = 0, next; i < moves->len; i = next)
    {
      const char *topic = g_array_index (moves, KtResetMove, i).topic;
      gint32 fenced;

      next = topic_ranges (moves, i, FALSE, ranges);
      if (!kt_offsets_fence (db, job, topic, ranges, &fenced, error))
        return FALSE;
      /* A moved offset is where the user put it, in the log as it is now
       * (perhaps the log of a topic created again, the way out of a
       * mismatch): the anchor of the last record counted before is not
       * compared with it. The next batch stores a new one. (An idempotent
       * job's own anchors stay with what it counted: its covered offsets
       * would hide a new log's records, reset or not.) */
      if (fenced < 0 && !kt_offsets_drop_anchors (db, job, topic, ranges, error))
        return FALSE;
      if (fenced >= 0)
        {
          gint64 stored = -1;

          for (guint j = 0; j < ranges->len; j++)
            if (g_array_index (ranges, KtRange, j).partition == fenced)
              stored = g_array_index (ranges, KtRange, j).from;
          g_set_error (error, KT_ERROR, KT_ERROR_CONFLICT,
                       "the offset of %s/%d moved from %" G_GINT64_FORMAT " while it was "
                       "locked; nothing was changed", topic, fenced, stored);
          return FALSE;
        }
    }
  return kt_reset_record_skips (db, job, output, member, moves, error);
}

/* DELETE FROM @table [WHERE job = @job]. */
static gboolean
delete_rows (KtDb *db, const char *table, const char *job, GError **error)
{
  g_autoptr(GString) sql = g_string_new (NULL);

  g_return_val_if_fail (kt_is_identifier (table), FALSE);
  g_string_printf (sql, "DELETE FROM `%s`", table);
  if (job != NULL)
    {
      g_string_append (sql, " WHERE job = ");
      kt_db_quote (db, sql, job);
    }
  return kt_db_run (db, sql->str, "cannot empty the job's output", error);
}

/* Refuses @table where it is not a table (kt_schema_check_object()):
 * DELETE through a view would empty what it reads. */
static gboolean
check_table (KtDb *db, const char *table, GError **error)
{
  return kt_schema_check_object (db, table, NULL, "--rebuild empties the table a job writes, "
                                 "and nothing else; refused", error);
}

gboolean
kt_reset_rebuild (KtDb *db, const KtKind *kind, const char *job, const char *output,
                  gboolean execute, GError **error)
{
  g_autofree char *other = NULL;
  g_autofree char *rows = kt_kind_rows_table (kind, output);
  gboolean forgotten;

  if (rows != NULL)
    {
      /* Its rows are its own, unless an earlier job of the same name was
       * forgotten: its counts are under this name too, and stay. */
      if (!kt_offsets_forgotten_in (db, job, NULL, &forgotten, error))
        return FALSE;
      if (forgotten)
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                       "--rebuild: %s's rows of job %s also hold the counts of an earlier "
                       "job %s that was forgotten (ktally_forgotten), which a rebuild would "
                       "delete; refused", rows, job, job);
          return FALSE;
        }
      if (!check_table (db, rows, error)
          || (kind->records != NULL && !check_table (db, kind->records, error)))
        return FALSE;
      return !execute
             || (delete_rows (db, rows, job, error)
                 && (kind->records == NULL || delete_rows (db, kind->records, job, error))
                 && kt_offsets_drop_batches (db, job, error));
    }

  /* The whole table: only if no one else counted into it. Executed, the
   * table's identity row is locked first, as a claim would, so no job
   * starts writing it meanwhile. */
  if (!kt_identity_other_writer (db, job, output, execute, &other, error))
    return FALSE;
  if (other == NULL && !kt_offsets_other_writer (db, job, output, &other, error))
    return FALSE;
  if (other == NULL)
    {
      if (!kt_offsets_forgotten_in (db, NULL, output, &forgotten, error))
        return FALSE;
      if (forgotten)
        other = g_strdup ("a forgotten job (ktally_forgotten)");
    }
  if (other != NULL)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "--rebuild: %s also holds what %s counted, and emptying it would delete "
                   "that too; refused (a job to rebuild needs a table of its own)", output,
                   other);
      return FALSE;
    }
  if (!check_table (db, output, error))
    return FALSE;
  return !execute
         || (delete_rows (db, output, NULL, error) && kt_offsets_drop_batches (db, job, error));
}

gpointer
kt_reset_kind_options (KtDb *db, const KtKind *kind, const char *output, GError **error)
{
  const KtOption *const tables[] = { kind->options, NULL };
  g_autoptr(KtOptionValues) values = NULL;
  g_autoptr(GPtrArray) columns = g_ptr_array_new ();
  g_autoptr(GHashTable) stored = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  gpointer options = g_malloc0 (MAX (kind->options_size, 1));
  gboolean found;

  if (kind->options == NULL)
    return options;
  /* Every row's fallback first, as a run that gives none would have. */
  values = kt_option_values_new (tables, KT_CMD_ALL);
  if (!kt_option_values_load (values, kind->options, options, error))
    goto fail;
  for (const KtOption *row = kind->options; row->name != NULL; row++)
    if (row->identity != NULL && g_str_has_prefix (row->identity, "table."))
      g_ptr_array_add (columns, (gpointer) (row->identity + strlen ("table.")));
  g_ptr_array_add (columns, NULL);
  if (!kt_db_connect (db, error))
    goto fail;
  if (!kt_identity_read_table (db, output, (const char *const *) columns->pdata, stored,
                               &found, error))
    goto fail;
  if (!found)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "%s: what the rows of %s mean (its pattern, "
                   "levels, bucket...) is not recorded in ktally_table, so its counts cannot "
                   "be read again to be taken back; refused", kt_db_name (db), output);
      goto fail;
    }
  /* '' is a row's default (or a setting another kind's): its fallback. */
  for (const KtOption *row = kind->options; row->name != NULL; row++)
    {
      const char *text = row->identity != NULL && g_str_has_prefix (row->identity, "table.")
                         ? g_hash_table_lookup (stored, row->identity + strlen ("table.")) : NULL;

      if (text != NULL && *text != '\0' && !kt_option_set_text (row, text, options, error))
        {
          g_prefix_error (error, "%s's recorded settings: ", output);
          goto fail;
        }
    }
  return options;

fail:
  kt_reset_kind_options_free (kind, options);
  return NULL;
}

void
kt_reset_kind_options_free (const KtKind *kind, gpointer options)
{
  if (options == NULL)
    return;
  if (kind->options != NULL)
    kt_option_table_clear (kind->options, options);
  g_free (options);
}

/* What a recount reads of one partition: its ranges, what it found. */
typedef struct
{
  const KtKind *kind;
  gpointer         batch;     /* the kind's */
  GArray          *ranges;    /* KtRange: the audit rows that read records, merged */
  guint            at;        /* the range being read */
  guint64          records;
} Reread;

static void
reread_record (gint32 partition, gint64 offset, const char *value, gsize len, gpointer data)
{
  Reread *rr = data;

  rr->records++;
  rr->kind->take (rr->batch, rr->at, partition, offset, value, len);
}

gboolean
kt_reset_recount_chain (const char *job, KtResetMove *mv, const GArray *links, GArray *ranges,
                        KtRangeStats *recorded, GError **error)
{
  gint64 wanted = mv->to, at;
  guint first = 0;

  if (links->len == 0 || g_array_index (links, KtAuditLink, 0).from > mv->to)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "--rebuild: no audit row of job %s records what it counted of %s/%d at %"
                   G_GINT64_FORMAT " (it started counting later, or the rows were "
                   "forgotten), so what it counted there cannot be taken back; refused",
                   job, mv->topic, mv->partition, mv->to);
      return FALSE;
    }
  mv->to = g_array_index (links, KtAuditLink, 0).from;
  /* A range a reset moved past was promised never to be counted: the
   * recount starts after the last one, which stays skipped (moved back
   * over it, the job would count it). */
  for (guint i = 0; i < links->len; i++)
    if (g_array_index (links, KtAuditLink, i).skipped)
      {
        const KtAuditLink *l = &g_array_index (links, KtAuditLink, i);

        mv->kept = (KtInterval) { l->from, l->until };
        mv->to = l->until;
        first = i + 1;
      }
  if (mv->to == mv->stored)
    {
      mv->recount = FALSE;  /* nothing counted after the skip: it stays */
      return TRUE;
    }
  if (mv->to < mv->low)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "--rebuild: the batch of job %s that counted %s/%d at %" G_GINT64_FORMAT
                   " started at %" G_GINT64_FORMAT ", below the log start %" G_GINT64_FORMAT
                   ": those offsets are gone, and what it counted cannot be read again to be "
                   "taken back; refused (a later moment, or --to earliest --rebuild "
                   "--accept-data-loss)", job, mv->topic, mv->partition,
                   wanted, mv->to, mv->low);
      return FALSE;
    }
  at = mv->to;
  for (guint i = first; i < links->len; i++)
    {
      const KtAuditLink *l = &g_array_index (links, KtAuditLink, i);

      if (l->from != at)
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                       "--rebuild: the audit rows of job %s for %s/%d do not form one chain "
                       "from %" G_GINT64_FORMAT " (%s at %" G_GINT64_FORMAT "; `ktally audit` "
                       "says more), so what it counted cannot be taken back exactly; refused",
                       job, mv->topic, mv->partition, mv->to,
                       l->from > at ? "a hole" : "an overlap", at);
          return FALSE;
        }
      at = l->until;
      kt_range_stats_add (recorded, &l->stats);
      /* A range that read no record (offsets with no record left, control
       * records only) counted nothing: nothing to read again. */
      if (l->stats.records == 0)
        continue;
      if (ranges->len > 0 && g_array_index (ranges, KtRange, ranges->len - 1).until == l->from)
        g_array_index (ranges, KtRange, ranges->len - 1).until = l->until;
      else
        g_array_append_val (ranges, ((KtRange) { .partition = mv->partition, .from = l->from,
                                                 .read_from = l->from, .until = l->until }));
    }
  if (at != mv->stored)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "--rebuild: the audit rows of job %s for %s/%d end at %" G_GINT64_FORMAT
                   ", not at its stored offset %" G_GINT64_FORMAT " (`ktally audit` says "
                   "more); refused", job, mv->topic, mv->partition, at, mv->stored);
      return FALSE;
    }
  return TRUE;
}

/* A recount's batch (@rr) read again, compared with what the audit rows
 * @recorded, and taken back out of the output. */
static gboolean
recount_batch (KtKindContext *context, const KtKind *kind, Reread *rr, KtResetMove *mv,
               const KtRangeStats *recorded, gboolean execute, GError **error)
{
  static const volatile int never = 0;
  GArray *ranges = rr->ranges;
  g_autoptr(GString) line = g_string_new (NULL);
  KtBatchSummary read = { 0 };

  for (rr->at = 0; rr->at < ranges->len; rr->at++)
    {
      g_autoptr(GArray) one = g_array_new (FALSE, FALSE, sizeof (KtRange));
      KtRange want = g_array_index (ranges, KtRange, rr->at);

      /* A read stopped early by a cap goes on from where it stopped. */
      while (want.read_from < want.until)
        {
          g_array_set_size (one, 0);
          g_array_append_val (one, want);
          if (!kt_source_read (context->source, one, reread_record, rr, &never, 30000, error))
            {
              g_prefix_error (error, "--rebuild: reading %s/%d [%" G_GINT64_FORMAT ", %"
                              G_GINT64_FORMAT ") again: ", mv->topic, mv->partition,
                              want.read_from, want.until);
              return FALSE;
            }
          want.read_from = want.from = g_array_index (one, KtRange, 0).until;
        }
    }
  kind->summarise (rr->batch, &read, line);
  if (rr->records != recorded->records || read.lines != recorded->lines
      || read.counted != recorded->errors || read.malformed != recorded->malformed)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "--rebuild: read again, %s/%d [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT
                   ") holds %" G_GUINT64_FORMAT " records, %" G_GUINT64_FORMAT " lines, %"
                   G_GUINT64_FORMAT " ERROR, %" G_GUINT64_FORMAT " malformed, but job %s's "
                   "audit rows recorded %" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT ", %"
                   G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT " (%s): taking that back would "
                   "not be exact; refused", mv->topic, mv->partition, mv->to, mv->stored,
                   rr->records, read.lines, read.counted, read.malformed, context->job,
                   recorded->records, recorded->lines, recorded->errors, recorded->malformed,
                   rr->records < recorded->records
                   ? "fewer records: removed by compaction since, or the topic recreated?"
                   : rr->records > recorded->records
                   ? "more records than were counted: a range a reset skipped, folded into "
                     "counted rows by --audit-keep before schema version 7 marked skips, or "
                     "the topic recreated?"
                   : "the same records read otherwise: another ktally's parser, or the topic "
                     "recreated?");
      return FALSE;
    }
  mv->taken = *recorded;
  if (!kind->retract (rr->batch, execute, &mv->taken_rows, error))
    return FALSE;
  return !execute || kt_offsets_drop_batches_from (context->db, context->job, mv->topic,
                                                   mv->partition, mv->to, error);
}

/* One partition's recount: reads, compares, takes back. */
static gboolean
recount_move (KtKindContext *context, const KtKind *kind, gpointer self, KtResetMove *mv,
              gboolean execute, GError **error)
{
  g_autoptr(GArray) ranges = g_array_new (FALSE, FALSE, sizeof (KtRange));
  g_autoptr(GArray) states = g_array_new (FALSE, FALSE, sizeof (KtPartitionState));
  KtRangeStats recorded = { 0 };
  Reread rr = { kind, NULL, ranges, 0, 0 };
  gboolean ok;

  {
    g_autoptr(GArray) links = g_array_new (FALSE, FALSE, sizeof (KtAuditLink));

    if (!kt_offsets_chain_after (context->db, context->job, mv->topic, mv->partition, mv->to,
                                 execute, links, error)
        || !kt_reset_recount_chain (context->job, mv, links, ranges, &recorded, error))
      return FALSE;
  }
  if (!mv->recount)
    return TRUE;
  g_array_append_val (states, ((KtPartitionState) { mv->partition, mv->stored, mv->low,
                                                    mv->high }));
  rr.batch = kind->batch_new (self, ranges, states, G_MAXINT64, NULL, error);
  if (rr.batch == NULL)
    return FALSE;
  ok = recount_batch (context, kind, &rr, mv, &recorded, execute, error);
  kind->batch_free (rr.batch);
  return ok;
}

gboolean
kt_reset_recount (KtKindContext *context, const KtKind *kind, GArray *moves,
                  gboolean execute, GError **error)
{
  gpointer self = NULL;
  gboolean ok = TRUE;

  for (guint i = 0; ok && i < moves->len; i++)
    {
      KtResetMove *mv = &g_array_index (moves, KtResetMove, i);

      if (!mv->recount || !g_str_equal (mv->topic, context->topic))
        continue;
      if (self == NULL && (self = kind->open (context, error)) == NULL)
        return FALSE;
      ok = recount_move (context, kind, self, mv, execute, error);
    }
  if (self != NULL)
    kind->close (self);
  return ok;
}
