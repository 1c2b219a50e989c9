/* reset.c - `ktally reset`'s plan and its writes (reset.h). */
#include "reset.h"

#include <string.h>
#include "autocleanups.h"
#include "job-spec.h"
#include "error.h"
#include "identity.h"
#include "offsets.h"
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

  *to = s->stored;
  switch (target->to)
    {
    case KT_RESET_EARLIEST:
      *to = s->low;
      return TRUE;
    case KT_RESET_LATEST:
      *to = s->high;
      return TRUE;
    case KT_RESET_OFFSETS:
    case KT_RESET_BATCH:
    default:
      break;
    }
  for (guint i = 0; list != NULL && i < list->len; i++)
    {
      const KtPartitionOffset *po = &g_array_index (list, KtPartitionOffset, i);

      if (po->partition != s->partition)
        continue;
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
    }
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
      gboolean have = FALSE;

      for (guint j = 0; j < n_states; j++)
        have |= states[j].partition == p;
      if (!have)
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

/* A move back: what the kind does with offsets it reads again. */
static gboolean
plan_back (const KtResetPolicy *policy, const char *topic, const KtPartitionState *s,
           const KtCoverage *done, KtResetMove *mv, GError **error)
{
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
                   "into %s; refused (--to earliest --rebuild empties %s and counts "
                   "everything again)", policy->job, topic, s->partition, s->stored,
                   mv->to, mv->to, s->stored, policy->output, policy->output);
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

gboolean
kt_reset_record_skips (KtDb *db, const char *job, const char *output, const char *member,
                       const GArray *moves, GError **error)
{
  for (guint i = 0; i < moves->len; i++)
    {
      const KtResetMove *m = &g_array_index (moves, KtResetMove, i);
      g_autoptr(GArray) range = g_array_new (FALSE, FALSE, sizeof (KtRange));
      KtRangeStats none = { 0 };

      /* The audit row of a move forward says where the offsets went: no
       * record was read, none counted, and the chain has no hole. */
      if (m->rebuild || m->to <= m->stored)
        continue;
      g_array_append_val (range, ((KtRange) { m->partition, m->stored, m->stored, m->to }));
      if (!kt_offsets_record (db, job, m->topic, output, member, range, &none, NULL, error))
        return FALSE;
    }
  return TRUE;
}

gboolean
kt_reset_apply (KtDb *db, const char *job, const char *output, const char *member,
                const GArray *moves, GError **error)
{
  for (guint i = 0; i < moves->len; i++)
    {
      const KtResetMove *m = &g_array_index (moves, KtResetMove, i);
      g_autoptr(GArray) range = g_array_new (FALSE, FALSE, sizeof (KtRange));
      gint32 fenced;

      if (m->to == m->stored)
        continue;
      g_array_append_val (range, ((KtRange) { m->partition, m->stored, m->stored, m->to }));
      if (!kt_offsets_fence (db, job, m->topic, range, &fenced, error))
        return FALSE;
      if (fenced >= 0)
        {
          g_set_error (error, KT_ERROR, KT_ERROR_CONFLICT,
                       "the offset of %s/%d moved from %" G_GINT64_FORMAT " while it was "
                       "locked; nothing was changed", m->topic, m->partition, m->stored);
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
  GError *local = NULL;

  if (!kt_schema_check_object (kt_db_connection (db), kt_db_name (db), table, NULL,
                               "--rebuild empties the table a job writes, and nothing else; "
                               "refused", &local))
    return kt_db_failed (db, local, error);
  return TRUE;
}

gboolean
kt_reset_rebuild (KtDb *db, const KtJobKind *kind, const char *job, const char *output,
                  gboolean execute, GError **error)
{
  g_autofree char *other = NULL;
  g_autofree char *rows = kt_kind_rows_table (kind, output);
  GError *local = NULL;
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
  if (!kt_identity_other_writer (kt_db_connection (db), kt_db_name (db), job, output, execute,
                                 &other, &local))
    return kt_db_failed (db, local, error);
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
