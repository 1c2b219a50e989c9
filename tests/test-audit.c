/* test-audit.c - the chain check of `ktally audit`, on rows in memory:
 * whole chains, gaps, overlaps, a chain that stops short of the stored
 * offset, and jobs, topics and partitions kept apart. */
#include <glib.h>
#include <string.h>
#include "audit.h"

typedef struct
{
  const char *job;
  gint32      partition;
  gint64      from, until;
} Row;

static gint64
stored_table (const char *job, const char *topic, gint32 partition, gpointer user_data)
{
  const gint64 *stored = user_data;  /* per partition; job "other" has none */
  (void) topic;
  return g_str_equal (job, "other") ? -1 : stored[partition];
}

static guint
check (const Row *rows, gsize n, const gint64 *stored, GPtrArray *problems)
{
  g_autoptr(GArray) array = g_array_new (FALSE, FALSE, sizeof (KtBatchRow));

  for (gsize i = 0; i < n; i++)
    {
      KtBatchRow b = { (char *) rows[i].job, (char *) "t", rows[i].partition,
                       rows[i].from, rows[i].until, 1, (char *) "error_log" };
      g_array_append_val (array, b);
    }
  return kt_audit_chains (array, stored_table, NULL, (gpointer) stored, problems);
}

static void
test_whole (void)
{
  static const Row rows[] = {
    { "j", 0, 0, 10 }, { "j", 0, 10, 25 }, { "j", 0, 25, 26 },
    { "j", 1, 5, 7 }, { "j", 1, 7, 100 },
  };
  static const gint64 stored[] = { 26, 100 };
  g_autoptr(GPtrArray) problems = g_ptr_array_new_with_free_func (g_free);

  g_assert_cmpuint (check (rows, G_N_ELEMENTS (rows), stored, problems), ==, 2);
  g_assert_cmpuint (problems->len, ==, 0);
}

static void
test_gap (void)
{
  static const Row rows[] = { { "j", 0, 0, 10 }, { "j", 0, 12, 20 } };
  static const gint64 stored[] = { 20 };
  g_autoptr(GPtrArray) problems = g_ptr_array_new_with_free_func (g_free);

  check (rows, G_N_ELEMENTS (rows), stored, problems);
  g_assert_cmpuint (problems->len, ==, 1);
  g_assert_nonnull (strstr (problems->pdata[0], "gap: offsets [10, 12)"));
}

/* --on-data-loss skip on a recreated topic: the row [1000, 100) moves the
 * stored offset back to the new log's end; the chain goes on from there,
 * rows in commit order. */
static void
test_skip_past_end (void)
{
  static const Row rows[] = {
    { "j", 0, 0, 600 }, { "j", 0, 600, 1000 }, { "j", 0, 1000, 100 }, { "j", 0, 100, 150 },
  };
  static const Row gap[] = { { "j", 0, 0, 1000 }, { "j", 0, 1000, 100 }, { "j", 0, 120, 150 } };
  static const gint64 stored[] = { 150 };
  g_autoptr(GPtrArray) problems = g_ptr_array_new_with_free_func (g_free);

  check (rows, G_N_ELEMENTS (rows), stored, problems);
  g_assert_cmpuint (problems->len, ==, 0);
  check (gap, G_N_ELEMENTS (gap), stored, problems);
  g_assert_cmpuint (problems->len, ==, 1);
  g_assert_nonnull (strstr (problems->pdata[0], "gap: offsets [100, 120)"));
}

static void
test_overlap (void)
{
  static const Row rows[] = { { "j", 0, 0, 10 }, { "j", 0, 5, 20 } };
  static const gint64 stored[] = { 20 };
  g_autoptr(GPtrArray) problems = g_ptr_array_new_with_free_func (g_free);

  check (rows, G_N_ELEMENTS (rows), stored, problems);
  g_assert_cmpuint (problems->len, ==, 1);
  g_assert_nonnull (strstr (problems->pdata[0], "overlap: offsets [5, 10)"));
}

static void
test_short_of_stored (void)
{
  static const Row rows[] = { { "j", 0, 0, 10 } };
  static const gint64 stored[] = { 15 };
  g_autoptr(GPtrArray) problems = g_ptr_array_new_with_free_func (g_free);

  check (rows, G_N_ELEMENTS (rows), stored, problems);
  g_assert_cmpuint (problems->len, ==, 1);
  g_assert_nonnull (strstr (problems->pdata[0], "end at 10 but the stored offset is 15"));
}

static void
test_jobs_apart (void)
{
  /* Job "other" (offsets kept in Kafka: none stored) restarts at 0: not an
   * overlap with job j, and its end is not checked. */
  static const Row rows[] = { { "j", 0, 0, 10 }, { "other", 0, 0, 4 } };
  static const gint64 stored[] = { 10 };
  g_autoptr(GPtrArray) problems = g_ptr_array_new_with_free_func (g_free);

  /* The caller orders rows by job: "j" < "other". */
  g_assert_cmpuint (check (rows, G_N_ELEMENTS (rows), stored, problems), ==, 2);
  g_assert_cmpuint (problems->len, ==, 0);
}

/* Idempotent jobs: batches may overlap (rewinds); every covered offset must
 * be in some batch, and the covered set must hold nothing twice. */
typedef struct
{
  const KtCoverage *covered;
  const gint64     *stored;
} Stored;

static const KtCoverage *
covered_table (const char *job, const char *topic, gint32 partition, gpointer user_data)
{
  (void) topic;
  (void) partition;
  return g_str_equal (job, "idem") ? ((Stored *) user_data)->covered : NULL;
}

static gint64
stored_case (const char *job, const char *topic, gint32 partition, gpointer user_data)
{
  (void) job;
  (void) topic;
  (void) partition;
  return *((Stored *) user_data)->stored;
}

static void
test_idempotent (void)
{
  static const struct
  {
    const char *name, *covered;
    Row rows[4];
    const char *problem;  /* NULL: none */
    gint64 stored;        /* -1: unknown (offsets in Kafka) */
  } cases[] = {
    { "stored at the end", "0-30", { { "idem", 0, 0, 10 }, { "idem", 0, 10, 30 } }, NULL, 30 },
    { "stored behind the output", "0-30", { { "idem", 0, 0, 30 } }, NULL, 20 },
    { "stored past every batch", "0-30", { { "idem", 0, 0, 30 } },
      "gap: offsets from 30 are in no batch, below the stored offset 40", 40 },
    { "stored past a hole", "0-10,20-30", { { "idem", 0, 0, 10 }, { "idem", 0, 20, 30 } },
      "gap: offsets from 10 are in no batch", 30 },
    { "one chain", "0-30", { { "idem", 0, 0, 10 }, { "idem", 0, 10, 30 } }, NULL, -1 },
    { "a rewind overlaps", "0-30", { { "idem", 0, 0, 20 }, { "idem", 0, 5, 30 } }, NULL, 30 },
    { "a skip ahead leaves a gap", "0-10,20-30",
      { { "idem", 0, 0, 10 }, { "idem", 0, 20, 30 } }, NULL, -1 },
    { "counted, in no batch", "0-40", { { "idem", 0, 0, 10 }, { "idem", 0, 20, 40 } },
      "offsets from 10 are counted in the output but in no batch", -1 },
    { "counted before the first batch", "0-40", { { "idem", 0, 10, 40 } },
      "offsets from 0 are counted", -1 },
    { "an older ktally counted twice", "0-30,20-40", { { "idem", 0, 0, 40 } },
      "overlap: offsets [20, 30) were counted twice", -1 },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GPtrArray) problems = g_ptr_array_new_with_free_func (g_free);
      g_autoptr(GArray) array = g_array_new (FALSE, FALSE, sizeof (KtBatchRow));
      g_autoptr(KtCoverage) covered = kt_coverage_parse (cases[i].covered, "test", NULL);

      g_test_message ("%s", cases[i].name);
      for (gsize j = 0; j < G_N_ELEMENTS (cases[i].rows) && cases[i].rows[j].job; j++)
        {
          KtBatchRow b = { (char *) cases[i].rows[j].job, (char *) "t", 0,
                           cases[i].rows[j].from, cases[i].rows[j].until, 1,
                           (char *) "error_log" };
          g_array_append_val (array, b);
        }
      Stored lookup = { covered, &cases[i].stored };

      g_assert_cmpuint (kt_audit_chains (array, stored_case, covered_table, &lookup, problems),
                        ==, 1);
      if (cases[i].problem == NULL)
        g_assert_cmpuint (problems->len, ==, 0);
      else
        {
          g_assert_cmpuint (problems->len, ==, 1);
          g_assert_nonnull (strstr (problems->pdata[0], cases[i].problem));
        }
    }
}

/* Two jobs that counted one range of a topic into one table. */
static void
test_shared (void)
{
  static const struct
  {
    const char *job, *topic, *target;
    gint64 from, until;
  } rows[] = {
    { "a", "t", "error_log", 0, 100 },
    { "b", "t", "error_log", 50, 150 },      /* overlaps a */
    { "c", "t", "other", 0, 100 },           /* another table */
    { "d", "u", "error_log", 0, 100 },       /* another topic */
    { "e", "t", "error_log", 150, 200 },     /* after a and b: fine */
  };
  g_autoptr(GArray) array = g_array_new (FALSE, FALSE, sizeof (KtBatchRow));
  g_autoptr(GPtrArray) problems = g_ptr_array_new_with_free_func (g_free);

  for (gsize i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      KtBatchRow b = { (char *) rows[i].job, (char *) rows[i].topic, 0, rows[i].from,
                       rows[i].until, 1, (char *) rows[i].target };
      g_array_append_val (array, b);
    }
  g_autoptr(GPtrArray) notes = g_ptr_array_new_with_free_func (g_free);
  KtBatchRow replay = { (char *) "replay.x", (char *) "t", 0, 180, 190, 1, (char *) "error_log" };

  g_assert_cmpuint (kt_audit_shared (array, NULL, problems, notes), ==, 1);
  g_assert_nonnull (strstr (problems->pdata[0],
                            "error_log: offsets [50, 100) of t/0 were counted into it by two "
                            "jobs, a and b"));
  g_assert_cmpuint (notes->len, ==, 0);
  g_ptr_array_set_size (problems, 0);
  g_assert_cmpuint (kt_audit_shared (array, "e", problems, notes), ==, 0);
  g_assert_cmpuint (kt_audit_shared (array, "b", problems, notes), ==, 1);
  /* A replay into the table over e's range: noted, not a break. */
  g_ptr_array_set_size (problems, 0);
  g_array_append_val (array, replay);
  g_assert_cmpuint (kt_audit_shared (array, "replay.x", problems, notes), ==, 1);
  g_assert_cmpuint (problems->len, ==, 0);
  g_assert_nonnull (strstr (notes->pdata[0], "[180, 190) of t/0"));
}

/* A replay's batches must lie within its recorded range: a reset of an
 * older ktally could move a replay below its --from or past its --until,
 * and the replay then counted records outside it. */
static void
test_replay_range (void)
{
  static const Row rows[] = {
    { "replay.a", 0, 10, 15 }, { "replay.a", 0, 15, 20 },   /* within 0:10-20 */
    { "replay.a", 1, 0, 5 },                                /* below 1:5-9 */
    { "replay.a", 1, 5, 9 },
    { "replay.b", 0, 0, 30 },                               /* past 0:0-20 */
    { "replay.b", 2, 0, 1 },                                /* a partition not in it */
    { "replay.old", 0, 0, 99 },                             /* its range not recorded */
    { "live", 0, 0, 99 },                                   /* not a replay */
  };
  g_autoptr(GArray) array = g_array_new (FALSE, FALSE, sizeof (KtBatchRow));
  g_autoptr(GPtrArray) problems = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GHashTable) ranges = g_hash_table_new (g_str_hash, g_str_equal);

  for (gsize i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      KtBatchRow b = { (char *) rows[i].job, (char *) "t", rows[i].partition, rows[i].from,
                       rows[i].until, 1, (char *) "rp" };
      g_array_append_val (array, b);
    }
  g_hash_table_insert (ranges, (gpointer) "replay.a", (gpointer) "0:10-20,1:5-9");
  g_hash_table_insert (ranges, (gpointer) "replay.b", (gpointer) "0:0-20,1:0-0");
  g_hash_table_insert (ranges, (gpointer) "replay.old", (gpointer) "");
  g_assert_cmpuint (kt_audit_replay_ranges (array, ranges, problems), ==, 3);
  g_assert_cmpuint (problems->len, ==, 3);
  g_assert_nonnull (strstr (problems->pdata[0], "replay replay.a, t/1: batch [0, 5) is outside "
                                                "its range [5, 9)"));
  g_assert_nonnull (strstr (problems->pdata[1], "replay replay.b, t/0: batch [0, 30) is outside "
                                                "its range [0, 20)"));
  g_assert_nonnull (strstr (problems->pdata[2], "replay replay.b, t/2: batch [0, 1) of a "
                                                "partition its range (0:0-20,1:0-0) does not name"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/audit/whole", test_whole);
  g_test_add_func ("/audit/gap", test_gap);
  g_test_add_func ("/audit/overlap", test_overlap);
  g_test_add_func ("/audit/skip-past-end", test_skip_past_end);
  g_test_add_func ("/audit/short-of-stored", test_short_of_stored);
  g_test_add_func ("/audit/jobs-apart", test_jobs_apart);
  g_test_add_func ("/audit/idempotent", test_idempotent);
  g_test_add_func ("/audit/shared", test_shared);
  g_test_add_func ("/audit/replay-range", test_replay_range);
  return g_test_run ();
}
