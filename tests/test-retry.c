/* test-retry.c - start-up steps tried again: which failures, how often.
 *
 * Two writers of a job starting at once on Galera create the same tables
 * and register the same job: the loser's statement fails with a
 * certification conflict (1213, ER_LOCK_DEADLOCK) or, on one server, a
 * lock wait timeout (1205). Start-up used to end there (exit 3) although
 * trying the step again succeeds. Red without the conflict case in
 * kt_retry_again(): /retry/conflict-then-works gives up at once. */
#include "error.h"
#include "retry.h"

typedef struct
{
  guint       fails;   /* how many tries fail before one works */
  KtErrorCode code;    /* what they fail with */
  guint       tries;
} Step;

static gboolean
step (gpointer data, int timeout_ms, GError **error)
{
  Step *s = data;

  (void) timeout_ms;
  if (s->tries++ < s->fails)
    {
      g_set_error (error, KT_ERROR, s->code, "Deadlock found when trying to get lock");
      return FALSE;
    }
  return TRUE;
}

static const volatile int never = 0;

static void
test_conflict_then_works (void)
{
  Step s = { 3, KT_ERROR_CONFLICT, 0 };
  g_autoptr(GError) error = NULL;

  g_assert_true (kt_retry (&never, 30, "MySQL tables", step, &s, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (s.tries, ==, 4);
}

static void
test_conflict_bounded (void)
{
  g_autoptr(GError) error = g_error_new_literal (KT_ERROR, KT_ERROR_CONFLICT, "1213");

  /* The decision, not the loop: the pauses double up to 2 s, and eight
   * conflicts in a row would cost this test about 10 s. */
  for (guint n = 1; n < KT_RETRY_CONFLICTS; n++)
    g_assert_true (kt_retry_again (error, n));
  g_assert_false (kt_retry_again (error, KT_RETRY_CONFLICTS));
}

static void
test_transient_always (void)
{
  g_autoptr(GError) error = g_error_new_literal (KT_ERROR, KT_ERROR_TRANSIENT, "gone away");

  g_assert_true (kt_retry_again (error, 0));
  g_assert_true (kt_retry_again (error, 1000));
}

static void
test_fatal_never (void)
{
  Step s = { 1, KT_ERROR_FATAL, 0 };
  g_autoptr(GError) error = NULL;

  g_assert_false (kt_retry (&never, 30, "MySQL tables", step, &s, &error));
  g_assert_error (error, KT_ERROR, KT_ERROR_FATAL);
  g_assert_cmpuint (s.tries, ==, 1);
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/retry/conflict-then-works", test_conflict_then_works);
  g_test_add_func ("/retry/conflict-bounded", test_conflict_bounded);
  g_test_add_func ("/retry/transient-always", test_transient_always);
  g_test_add_func ("/retry/fatal-never", test_fatal_never);
  return g_test_run ();
}
