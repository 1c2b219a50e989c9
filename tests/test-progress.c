/* test-progress.c - the progress line of `replay` and `run
 * --exit-when-idle` on a terminal.
 *
 * Every case is a row: what is done, the total (or none), what is left,
 * what this process moved and in how long, and the line. The opening
 * report (nothing moved yet, or too soon to tell) has no rate and no ETA:
 * replay used to say "0 offsets/s, ETA 0 s" there. */
#include "progress.h"

typedef struct
{
  const char *path;
  gint64      done, total, left, moved;
  double      elapsed;
  const char *line;
} ProgressCase;

static const ProgressCase cases[] = {
  { "/progress/opening", 0, 80000, 80000, 0, 0.0, "0/80000 offsets (0%)" },
  { "/progress/opening-later", 0, 80000, 80000, 0, 3.2, "0/80000 offsets (0%)" },
  { "/progress/too-soon", 10000, 80000, 70000, 10000, 0.05, "10000/80000 offsets (12%)" },
  { "/progress/rate-eta", 20000, 80000, 60000, 20000, 2.0,
    "20000/80000 offsets (25%), 10000 offsets/s, ETA 6 s" },
  { "/progress/eta-rounds-up", 20000, 80000, 60001, 20000, 2.0,
    "20000/80000 offsets (25%), 10000 offsets/s, ETA 7 s" },
  { "/progress/minutes", 1000, 200000, 199000, 1000, 1.0,
    "1000/200000 offsets (0%), 1000 offsets/s, ETA 3 min 19 s" },
  { "/progress/hours", 1, 100000, 99999, 1, 1.0,
    "1/100000 offsets (0%), 1 offsets/s, ETA 27 h 46 min" },
  { "/progress/done", 80000, 80000, 0, 80000, 4.0,
    "80000/80000 offsets (100%), 20000 offsets/s" },
  { "/progress/never-rounds-to-100", 79999, 80000, 1, 79999, 4.0,
    "79999/80000 offsets (99%), 20000 offsets/s, ETA 1 s" },
  { "/progress/empty-range", 0, 0, 0, 0, 1.0, "0/0 offsets (100%)" },
  /* A resumed replay: most was done by an earlier run; the rate is this one's. */
  { "/progress/resumed", 70000, 80000, 10000, 5000, 1.0,
    "70000/80000 offsets (87%), 5000 offsets/s, ETA 2 s" },
  /* run --exit-when-idle: no total, the lag is what is left. */
  { "/progress/run", 300000, -1, 100000, 300000, 1.5,
    "300000 records, 100000 left, 200000 records/s, ETA 1 s" },
  { "/progress/run-opening", 0, -1, 100000, 0, 0.0, "0 records, 100000 left" },
};

static void
test_case (gconstpointer data)
{
  const ProgressCase *c = data;
  g_autoptr(GString) out = g_string_new (NULL);

  kt_progress_append (out, c->total >= 0 ? "offsets" : "records", c->done, c->total, c->left,
                      c->moved, c->elapsed);
  g_assert_cmpstr (out->str, ==, c->line);
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    g_test_add_data_func (cases[i].path, &cases[i], test_case);
  return g_test_run ();
}
