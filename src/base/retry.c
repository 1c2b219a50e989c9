/* retry.c - see retry.h. */
#include "retry.h"

#include "error.h"

void
kt_retry_nap (const volatile int *stop, double seconds)
{
  gint64 until = g_get_monotonic_time () + (gint64) (seconds * G_USEC_PER_SEC);

  while (!*stop)
    {
      gint64 left = until - g_get_monotonic_time ();
      if (left <= 0)
        break;
      g_usleep (MIN (left, 50000));
    }
}

gboolean
kt_retry_again (const GError *error, guint conflicts)
{
  if (g_error_matches (error, KT_ERROR, KT_ERROR_TRANSIENT))
    return TRUE;
  return g_error_matches (error, KT_ERROR, KT_ERROR_CONFLICT)
         && conflicts < KT_RETRY_CONFLICTS;
}

gboolean
kt_retry (const volatile int *stop, double timeout_s, const char *what,
          KtRetryStep step, gpointer data, GError **error)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) (timeout_s * G_USEC_PER_SEC);
  double delay = 0.25;
  guint conflicts = 0;

  for (;;)
    {
      g_autoptr(GError) local = NULL;
      gint64 left_ms = (deadline - g_get_monotonic_time ()) / 1000;

      if (step (data, (int) MAX (left_ms, 100), &local))
        return TRUE;
      /* A lock conflict (a Galera certification conflict, a lock wait
       * timed out) cost only the statement or transaction it hit: two
       * writers starting at once create the same tables and register the
       * same job, and the one that lost tries again. Bounded apart from
       * the deadline: conflicts that never stop are a defect to report. */
      if (g_error_matches (local, KT_ERROR, KT_ERROR_CONFLICT))
        conflicts++;
      if (!kt_retry_again (local, conflicts)
          || g_get_monotonic_time () + (gint64) (delay * G_USEC_PER_SEC) >= deadline
          || *stop)
        {
          if (g_error_matches (local, KT_ERROR, KT_ERROR_TRANSIENT))
            g_prefix_error (&local, "%s: gave up after %g s: ", what, timeout_s);
          else if (g_error_matches (local, KT_ERROR, KT_ERROR_CONFLICT))
            g_prefix_error (&local, "%s: gave up after %u lock conflicts: ", what, conflicts);
          g_propagate_error (error, g_steal_pointer (&local));
          return FALSE;
        }
      g_debug ("%s: %s; retrying in %.2f s", what, local->message, delay);
      kt_retry_nap (stop, delay);
      delay = MIN (delay * 2, 2.0);
    }
}
