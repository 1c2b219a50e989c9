/* test-reset.c - `ktally reset`'s plan, on offsets in memory: what each
 * move means in each kind of job, and every move that must be refused
 * (twice counted, out of the log, a partition the job does not have). */
#include <glib.h>
#include <string.h>
#include "cli.h"
#include "error.h"
#include "reset.h"

/* Three partitions: stored 100, 50 and 0; logs [0, 120), [10, 80), [0, 0). */
static const KtPartitionState STATES[] = {
  { 0, 100, 0, 120 }, { 1, 50, 10, 80 }, { 2, 0, 0, 0 },
};

static KtResetPolicy
policy (KtReread reread)
{
  return (KtResetPolicy) { .job = "j", .output = "error_log", .reread = reread,
                           .why_no_rewind = "no way back" };
}

/* Plans --to @to for @p (counted: partition 0 counted [0, 40) and
 * [60, 110) when @with_counted); NULL and *@error on a refusal. */
static GArray *
plan (const KtResetPolicy *p, const char *to, gboolean with_counted, GHashTable *first,
      const GArray *starts, GError **error)
{
  g_autoptr(GArray) moves = g_array_new (FALSE, FALSE, sizeof (KtResetMove));
  g_autoptr(GHashTable) counted = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL,
                                                         (GDestroyNotify) kt_coverage_free);
  KtResetTarget target;
  KtCoverage *c = kt_coverage_new ();
  gboolean ok;

  g_array_set_clear_func (moves, (GDestroyNotify) kt_reset_move_clear);
  kt_coverage_add (c, 0, 40);
  kt_coverage_add (c, 60, 110);
  g_hash_table_insert (counted, GINT_TO_POINTER (0), c);
  g_assert_true (kt_reset_target_parse (to, &target, NULL));
  ok = kt_reset_plan (p, &target, "t", STATES, G_N_ELEMENTS (STATES),
                      with_counted ? counted : NULL, first, starts, moves, error);
  kt_reset_target_clear (&target);
  return ok ? g_steal_pointer (&moves) : NULL;
}

static const KtResetMove *
move (const GArray *moves, guint i)
{
  return &g_array_index (moves, KtResetMove, i);
}

static void
assert_intervals (const GArray *a, const gint64 *pairs, guint n)
{
  g_assert_cmpuint (a->len, ==, n);
  for (guint i = 0; i < n; i++)
    {
      g_assert_cmpint (g_array_index (a, KtInterval, i).from, ==, pairs[2 * i]);
      g_assert_cmpint (g_array_index (a, KtInterval, i).until, ==, pairs[2 * i + 1]);
    }
}

static void
test_target_parse (void)
{
  static const char *const bad[] = { "", "nowhere", "batch:", "batch:x", "batch:0", "0:-1",
                                     "0:1,0:2", "0", "a:1", "0:1:2", "batch:-3" };
  KtResetTarget t;

  g_assert_true (kt_reset_target_parse ("earliest", &t, NULL));
  g_assert_cmpint (t.to, ==, KT_RESET_EARLIEST);
  g_assert_true (kt_reset_target_parse ("latest", &t, NULL));
  g_assert_cmpint (t.to, ==, KT_RESET_LATEST);
  g_assert_true (kt_reset_target_parse ("batch:42", &t, NULL));
  g_assert_cmpint (t.to, ==, KT_RESET_BATCH);
  g_assert_cmpint (t.batch, ==, 42);
  g_assert_true (kt_reset_target_parse ("1:7,0:3", &t, NULL));
  g_assert_cmpint (t.to, ==, KT_RESET_OFFSETS);
  g_assert_cmpuint (t.offsets->len, ==, 2);
  g_assert_cmpint (g_array_index (t.offsets, KtPartitionOffset, 0).partition, ==, 0);
  kt_reset_target_clear (&t);
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(GError) error = NULL;

      g_assert_false (kt_reset_target_parse (bad[i], &t, &error));
      g_assert_error (error, KT_ERROR, KT_ERROR_USAGE);
      g_assert_nonnull (strstr (error->message, "--to"));
      g_assert_null (t.offsets);
    }
}

/* Transactional: forward skips, back is refused naming what would count
 * twice, and a partition already there stays. */
static void
test_transactional (void)
{
  KtResetPolicy p = policy (KT_REREAD_COUNTS_TWICE);
  g_autoptr(GError) error = NULL;
  g_autoptr(GArray) latest = plan (&p, "latest", FALSE, NULL, NULL, NULL);
  g_autoptr(GArray) earliest = NULL;
  static const gint64 skip0[] = { 100, 120 }, skip1[] = { 50, 80 };

  g_assert_nonnull (latest);
  g_assert_cmpuint (latest->len, ==, 3);
  g_assert_cmpint (move (latest, 0)->to, ==, 120);
  assert_intervals (move (latest, 0)->skipped, skip0, 1);
  assert_intervals (move (latest, 1)->skipped, skip1, 1);
  g_assert_cmpuint (move (latest, 0)->counted_already->len, ==, 0);
  g_assert_cmpint (move (latest, 2)->to, ==, 0);  /* empty partition: stays */
  g_assert_true (kt_reset_changes (latest));

  earliest = plan (&p, "earliest", FALSE, NULL, NULL, &error);
  g_assert_null (earliest);
  g_assert_error (error, KT_ERROR, KT_ERROR_USAGE);
  g_assert_nonnull (strstr (error->message, "t/0 back from 100 to 0"));
  g_assert_nonnull (strstr (error->message, "[0, 100) again into error_log"));
  g_assert_nonnull (strstr (error->message, "--rebuild"));
  g_assert_null (strchr (error->message, '\n'));
}

/* --to P:OFF: only the partitions named move; out of the log, or a
 * partition the job has no offset of, is refused. */
static void
test_offsets (void)
{
  KtResetPolicy p = policy (KT_REREAD_COUNTS_TWICE);
  static const struct { const char *to; const char *says; } refused[] = {
    { "0:121", "t/0:121 is beyond the high watermark 120" },
    { "1:9", "t/1:9 is below the log start 10" },
    { "3:0", "stores no offset for t/3" },
    { "0:99", "back from 100 to 99" },
  };
  g_autoptr(GArray) moves = plan (&p, "1:80,0:100", FALSE, NULL, NULL, NULL);

  g_assert_nonnull (moves);
  g_assert_cmpint (move (moves, 0)->to, ==, 100);
  g_assert_cmpint (move (moves, 1)->to, ==, 80);
  g_assert_cmpint (move (moves, 2)->to, ==, 0);
  for (gsize i = 0; i < G_N_ELEMENTS (refused); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GArray) none = plan (&p, refused[i].to, FALSE, NULL, NULL, &error);

      g_assert_null (none);
      g_assert_error (error, KT_ERROR, KT_ERROR_USAGE);
      if (strstr (error->message, refused[i].says) == NULL)
        g_error ("--to %s: '%s' does not say '%s'", refused[i].to, error->message,
                 refused[i].says);
    }
}

/* Idempotent: back is harmless, and the plan says which offsets were
 * counted (read again, not counted twice) and which never were. */
static void
test_idempotent (void)
{
  KtResetPolicy p = policy (KT_REREAD_SKIPS);
  g_autoptr(GArray) back = plan (&p, "0:10", TRUE, NULL, NULL, NULL);
  g_autoptr(GArray) fwd = plan (&p, "0:120", TRUE, NULL, NULL, NULL);
  static const gint64 again[] = { 10, 40, 60, 100 }, fresh[] = { 40, 60 };
  static const gint64 done[] = { 100, 110 }, skip[] = { 110, 120 };

  g_assert_nonnull (back);
  g_assert_cmpint (move (back, 0)->to, ==, 10);
  assert_intervals (move (back, 0)->counted_already, again, 2);
  assert_intervals (move (back, 0)->newly_counted, fresh, 1);
  g_assert_cmpuint (move (back, 0)->skipped->len, ==, 0);
  /* Forward over offsets counted beyond the stored one (a crash between
   * the output and the offsets): those are not lost. */
  g_assert_nonnull (fwd);
  assert_intervals (move (fwd, 0)->counted_already, done, 1);
  assert_intervals (move (fwd, 0)->skipped, skip, 1);
}

static void
test_refused_kind (void)
{
  KtResetPolicy p = policy (KT_REREAD_REFUSED);
  g_autoptr(GError) error = NULL;
  g_autoptr(GArray) back = plan (&p, "earliest", FALSE, NULL, NULL, &error);
  g_autoptr(GArray) fwd = plan (&p, "latest", FALSE, NULL, NULL, NULL);

  g_assert_null (back);
  g_assert_error (error, KT_ERROR, KT_ERROR_USAGE);
  g_assert_nonnull (strstr (error->message, "cannot move back (t/0 from 100 to 0): no way back"));
  g_assert_nonnull (fwd);
}

/* --rebuild: every partition to its log start; refused where retention
 * took offsets the job counted, unless accepted. */
static void
test_rebuild (void)
{
  KtResetPolicy p = policy (KT_REREAD_COUNTS_TWICE);
  g_autoptr(GHashTable) first = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL,
                                                       g_free);
  g_autoptr(GError) error = NULL;
  g_autoptr(GArray) moves = NULL;
  g_autoptr(GArray) lossy = NULL;
  g_autoptr(GArray) accepted = NULL;

  p.rebuild = TRUE;
  g_hash_table_insert (first, GINT_TO_POINTER (0), g_memdup2 (&(gint64) { 0 }, sizeof (gint64)));
  moves = plan (&p, "earliest", FALSE, first, NULL, NULL);
  g_assert_nonnull (moves);
  for (guint i = 0; i < moves->len; i++)
    {
      g_assert_true (move (moves, i)->rebuild);
      g_assert_cmpint (move (moves, i)->to, ==, STATES[i].low);
    }
  g_assert_true (kt_reset_changes (moves));

  /* Partition 1 was counted from 5; its log starts at 10 now. */
  g_hash_table_insert (first, GINT_TO_POINTER (1), g_memdup2 (&(gint64) { 5 }, sizeof (gint64)));
  lossy = plan (&p, "earliest", FALSE, first, NULL, &error);
  g_assert_null (lossy);
  g_assert_error (error, KT_ERROR, KT_ERROR_USAGE);
  g_assert_nonnull (strstr (error->message, "[5, 10) are gone"));
  g_assert_nonnull (strstr (error->message, "--accept-data-loss"));
  p.accept_data_loss = TRUE;
  accepted = plan (&p, "earliest", FALSE, first, NULL, NULL);
  g_assert_nonnull (accepted);
  g_assert_cmpint (move (accepted, 1)->lost.from, ==, 5);
  g_assert_cmpint (move (accepted, 1)->lost.until, ==, 10);
}

/* batch:ID: the partitions of the batch's starts move; the others stay. */
static void
test_batch (void)
{
  KtResetPolicy p = policy (KT_REREAD_SKIPS);
  g_autoptr(GArray) starts = g_array_new (FALSE, FALSE, sizeof (KtPartitionOffset));
  g_autoptr(GArray) moves = NULL;

  g_array_append_val (starts, ((KtPartitionOffset) { 1, 20 }));
  moves = plan (&p, "batch:7", FALSE, NULL, starts, NULL);
  g_assert_nonnull (moves);
  g_assert_cmpint (move (moves, 0)->to, ==, 100);
  g_assert_cmpint (move (moves, 1)->to, ==, 20);
  g_assert_cmpint (move (moves, 2)->to, ==, 0);
}

static void
test_no_change (void)
{
  static const KtPartitionState at_end[] = { { 0, 120, 0, 120 } };
  KtResetPolicy p = policy (KT_REREAD_COUNTS_TWICE);
  g_autoptr(GArray) moves = g_array_new (FALSE, FALSE, sizeof (KtResetMove));
  KtResetTarget target;

  g_array_set_clear_func (moves, (GDestroyNotify) kt_reset_move_clear);
  g_assert_true (kt_reset_target_parse ("latest", &target, NULL));
  g_assert_true (kt_reset_plan (&p, &target, "t", at_end, 1, NULL, NULL, NULL, moves, NULL));
  g_assert_false (kt_reset_changes (moves));
  kt_reset_target_clear (&target);
}

/* Plans @target (not from text) for @p; NULL and *@error on a refusal. */
static GArray *
plan_target (const KtResetPolicy *p, const KtResetTarget *target, const GArray *starts,
             GError **error)
{
  g_autoptr(GArray) moves = g_array_new (FALSE, FALSE, sizeof (KtResetMove));

  g_array_set_clear_func (moves, (GDestroyNotify) kt_reset_move_clear);
  return kt_reset_plan (p, target, "t", STATES, G_N_ELEMENTS (STATES), NULL, NULL, starts,
                        moves, error)
         ? g_steal_pointer (&moves) : NULL;
}

/* --shift-by: each stored offset moved by N, stopping at the log's ends
 * (and saying so); far beyond either end it does not overflow. */
static void
test_shift (void)
{
  KtResetPolicy p = policy (KT_REREAD_SKIPS);
  static const struct { gint64 shift; gint64 to[3]; gboolean clamped[3]; } cases[] = {
    { -7, { 93, 43, 0 }, { FALSE, FALSE, TRUE } },
    { -45, { 55, 10, 0 }, { FALSE, TRUE, TRUE } },
    { 20, { 120, 70, 0 }, { FALSE, FALSE, TRUE } },
    { 25, { 120, 75, 0 }, { TRUE, FALSE, TRUE } },
    { 0, { 100, 50, 0 }, { FALSE, FALSE, FALSE } },
    { G_GINT64_CONSTANT (1) << 62, { 120, 80, 0 }, { TRUE, TRUE, TRUE } },
    { -(G_GINT64_CONSTANT (1) << 62), { 0, 10, 0 }, { TRUE, TRUE, TRUE } },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      KtResetTarget target = { .to = KT_RESET_SHIFT, .shift = cases[i].shift };
      g_autoptr(GArray) moves = plan_target (&p, &target, NULL, NULL);

      g_assert_nonnull (moves);
      for (guint j = 0; j < 3; j++)
        {
          g_assert_cmpint (move (moves, j)->to, ==, cases[i].to[j]);
          g_assert_cmpint (move (moves, j)->clamped, ==, cases[i].clamped[j]);
        }
    }
}

/* A moment, resolved per partition by the caller, goes where @starts
 * says; transactional, a move back is refused without --rebuild and a
 * recount with it (where the kind can take counts back); an idempotent
 * job's --rebuild of a range is refused, saying it needs none. */
static void
test_time_and_recount (void)
{
  KtResetTarget target = { .to = KT_RESET_TIME, .ms = 1714564800000 };
  g_autoptr(GArray) starts = g_array_new (FALSE, FALSE, sizeof (KtPartitionOffset));
  KtResetPolicy tx = policy (KT_REREAD_COUNTS_TWICE);
  KtResetPolicy idem = policy (KT_REREAD_SKIPS);
  g_autoptr(GError) error = NULL;
  g_autoptr(GArray) moves = NULL;

  g_array_append_val (starts, ((KtPartitionOffset) { 0, 60 }));
  g_array_append_val (starts, ((KtPartitionOffset) { 1, 80 }));
  g_array_append_val (starts, ((KtPartitionOffset) { 2, 0 }));
  g_assert_null (plan_target (&tx, &target, starts, &error));
  g_assert_nonnull (strstr (error->message, "add --rebuild to take [60, 100) back out of "
                                            "error_log and count it again"));
  g_clear_error (&error);

  tx.recount = TRUE;
  g_assert_null (plan_target (&tx, &target, starts, &error));  /* no retract: refused */
  g_assert_nonnull (strstr (error->message, "cannot take counts back out of error_log"));
  g_clear_error (&error);
  tx.retracts = TRUE;
  moves = plan_target (&tx, &target, starts, &error);
  g_assert_no_error (error);
  g_assert_true (move (moves, 0)->recount);
  g_assert_cmpint (move (moves, 0)->to, ==, 60);
  /* Behind the moment: a recount never skips what is not counted yet. */
  g_assert_false (move (moves, 1)->recount);
  g_assert_cmpint (move (moves, 1)->to, ==, 50);
  g_assert_cmpuint (move (moves, 1)->skipped->len, ==, 0);
  g_assert_false (move (moves, 2)->recount);  /* stays */
  g_clear_pointer (&moves, g_array_unref);

  idem.recount = TRUE;
  idem.retracts = TRUE;
  g_assert_null (plan_target (&idem, &target, starts, &error));
  g_assert_error (error, KT_ERROR, KT_ERROR_USAGE);
  g_assert_nonnull (strstr (error->message, "is idempotent: moved back, it counts nothing twice"));
}

/* Where Kafka's answer puts a moment: -1 or past what we know is the
 * high watermark; below the log start (retention since), the log start. */
static void
test_time_place (void)
{
  static const struct { KtPartitionState s; gint64 answer, offset; KtTimePlace place; } cases[] = {
    { { 0, 5, 10, 20 }, 15, 15, KT_AT_RECORD },
    { { 0, 5, 10, 20 }, 10, 10, KT_AT_RECORD },
    { { 0, 5, 10, 20 }, 3, 10, KT_AT_RECORD },
    { { 0, 5, 10, 20 }, -1, 20, KT_AT_END },
    { { 0, 5, 10, 20 }, 20, 20, KT_AT_END },
    { { 0, 5, 10, 20 }, 25, 20, KT_AT_END },
    { { 3, 0, 0, 0 }, -1, 0, KT_AT_END },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      KtTimeOffset at;

      kt_time_offset_place (&cases[i].s, cases[i].answer, &at);
      g_assert_cmpint (at.partition, ==, cases[i].s.partition);
      g_assert_cmpint (at.offset, ==, cases[i].offset);
      g_assert_cmpint (at.place, ==, cases[i].place);
    }
}

/* A moment before 1970 is before every record Kafka can hold: each
 * partition's log start (its end when empty), and Kafka is never asked
 * (the source given is NULL), since it reads negative timestamps as
 * special values: -1 was "latest", a move forward past everything. */
static void
test_time_before_1970 (void)
{
  static const KtPartitionState states[] = { { 0, 5, 10, 20 }, { 1, 0, 0, 0 }, { 2, 30, 7, 31 } };
  static const gint64 moments[] = { -1, -2, -3, -1000, -G_GINT64_CONSTANT (2592000000000),
                                    G_MININT64 / 2 };

  for (gsize m = 0; m < G_N_ELEMENTS (moments); m++)
    {
      g_autoptr(GError) error = NULL;
      KtTimeOffset at[G_N_ELEMENTS (states)];

      g_assert_true (kt_time_offsets (NULL, states, G_N_ELEMENTS (states), moments[m], at, 10,
                                      &error));
      g_assert_no_error (error);
      for (gsize i = 0; i < G_N_ELEMENTS (states); i++)
        {
          g_assert_cmpint (at[i].partition, ==, states[i].partition);
          g_assert_cmpint (at[i].offset, ==, states[i].low);
          g_assert_cmpint (at[i].place, ==, states[i].low < states[i].high ? KT_AT_RECORD
                                                                           : KT_AT_END);
        }
    }
}

/* A recount over a partition's audit chain: where it starts, what it
 * reads again, and what it refuses. A skip (a range a reset moved past)
 * stays skipped: the recount starts after the last one in its way. */
typedef struct
{
  const char *name;
  gint64      to, low, stored;
  KtAuditLink links[6];          /* until 0 ends the list */
  gboolean    ok;
  gint64      start;             /* where it goes (== stored: it stays) */
  gint64      kept_from, kept_until;
  gint64      read[4];           /* the ranges read again, [from, until) pairs, 0 0 ends */
  guint64     records;
  const char *refusal;
} ChainCase;

#define LINK(a, b, n) { a, b, { n, n, n / 2, 0 }, FALSE }
#define SKIP(a, b) { a, b, { 0, 0, 0, 0 }, TRUE }

static void
test_recount_chain (void)
{
  static const ChainCase cases[] = {
    { "no skip: from the batch holding it", 15, 0, 30,
      { LINK (10, 20, 10), LINK (20, 30, 10) }, TRUE, 10, 0, 0, { 10, 30 }, 20, NULL },
    { "inside a skip: after it", 15, 0, 30,
      { SKIP (10, 20), LINK (20, 30, 10) }, TRUE, 20, 10, 20, { 20, 30 }, 10, NULL },
    { "before a skip: after it", 5, 0, 30,
      { LINK (0, 10, 10), SKIP (10, 20), LINK (20, 30, 10) }, TRUE, 20, 10, 20, { 20, 30 }, 10,
      NULL },
    { "the last of two skips", 5, 0, 50,
      { LINK (0, 10, 10), SKIP (10, 20), LINK (20, 30, 10), SKIP (30, 40), LINK (40, 50, 5) },
      TRUE, 40, 30, 40, { 40, 50 }, 5, NULL },
    { "a skip at the end: it stays", 5, 0, 30,
      { LINK (0, 10, 10), LINK (10, 20, 10), SKIP (20, 30) }, TRUE, 30, 20, 30, { 0 }, 0, NULL },
    { "a row of no record that is no skip is read through", 5, 0, 30,
      { LINK (0, 10, 10), LINK (10, 12, 0), LINK (12, 30, 10) }, TRUE, 0, 0, 0, { 0, 10, 12, 30 },
      20, NULL },
    /* Retention took the start of the first batch, but the recount
     * starts after the skip, above the log start. */
    { "below the log start, before a skip", 5, 12, 30,
      { LINK (0, 10, 10), SKIP (10, 20), LINK (20, 30, 10) }, TRUE, 20, 10, 20, { 20, 30 }, 10,
      NULL },
    { "below the log start", 5, 3, 30,
      { LINK (0, 10, 10), LINK (10, 30, 10) }, FALSE, 0, 0, 0, { 0 }, 0, "below the log start 3" },
    { "a hole after the skip", 5, 0, 40,
      { SKIP (0, 10), LINK (10, 20, 10), LINK (25, 40, 10) }, FALSE, 0, 0, 0, { 0 }, 0,
      "a hole at 20" },
    { "no row", 5, 0, 30, { LINK (10, 30, 10) }, FALSE, 0, 0, 0, { 0 }, 0, "no audit row of job" },
    { "short of the stored offset", 5, 0, 40,
      { LINK (0, 10, 10), SKIP (10, 20), LINK (20, 30, 10) }, FALSE, 0, 0, 0, { 0 }, 0,
      "end at 30, not at its stored offset 40" },
  };

  for (gsize c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      const ChainCase *k = &cases[c];
      g_autoptr(GArray) links = g_array_new (FALSE, FALSE, sizeof (KtAuditLink));
      g_autoptr(GArray) ranges = g_array_new (FALSE, FALSE, sizeof (KtRange));
      g_autoptr(GError) error = NULL;
      KtResetMove mv = { .topic = (char *) "t", .partition = 3, .stored = k->stored,
                         .low = k->low, .high = 100, .to = k->to, .recount = TRUE };
      KtRangeStats recorded = { 0 };
      gboolean ok;
      guint n = 0;

      g_test_message ("%s", k->name);
      for (gsize i = 0; i < G_N_ELEMENTS (k->links) && k->links[i].until > 0; i++)
        g_array_append_val (links, k->links[i]);
      ok = kt_reset_recount_chain ("j", &mv, links, ranges, &recorded, &error);
      if (!k->ok)
        {
          g_assert_false (ok);
          g_assert_error (error, KT_ERROR, KT_ERROR_USAGE);
          if (strstr (error->message, k->refusal) == NULL)
            g_error ("%s: '%s' does not say '%s'", k->name, error->message, k->refusal);
          continue;
        }
      g_assert_no_error (error);
      g_assert_true (ok);
      g_assert_cmpint (mv.to, ==, k->start);
      g_assert_cmpint (mv.recount, ==, k->start < k->stored);
      g_assert_cmpint (mv.kept.from, ==, k->kept_from);
      g_assert_cmpint (mv.kept.until, ==, k->kept_until);
      g_assert_cmpuint (recorded.records, ==, k->records);
      while (n < 2 && k->read[2 * n + 1] > 0)
        n++;
      g_assert_cmpuint (ranges->len, ==, n);
      for (guint i = 0; i < n; i++)
        {
          g_assert_cmpint (g_array_index (ranges, KtRange, i).from, ==, k->read[2 * i]);
          g_assert_cmpint (g_array_index (ranges, KtRange, i).until, ==, k->read[2 * i + 1]);
        }
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/reset/target-parse", test_target_parse);
  g_test_add_func ("/reset/transactional", test_transactional);
  g_test_add_func ("/reset/offsets", test_offsets);
  g_test_add_func ("/reset/idempotent", test_idempotent);
  g_test_add_func ("/reset/refused-kind", test_refused_kind);
  g_test_add_func ("/reset/rebuild", test_rebuild);
  g_test_add_func ("/reset/batch", test_batch);
  g_test_add_func ("/reset/no-change", test_no_change);
  g_test_add_func ("/reset/shift", test_shift);
  g_test_add_func ("/reset/time-and-recount", test_time_and_recount);
  g_test_add_func ("/reset/time-place", test_time_place);
  g_test_add_func ("/reset/time-before-1970", test_time_before_1970);
  g_test_add_func ("/reset/recount-chain", test_recount_chain);
  return g_test_run ();
}
