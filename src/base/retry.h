/* retry.h - waiting that a signal can cut short, and start-up steps tried
 * again until they work or a deadline passes. Used by the scheduler and by
 * every command that waits for Kafka or MySQL. */
#pragma once
#include <glib.h>

/* Sleeps @seconds, waking early (within 50 ms) when *@stop is set. */
void kt_retry_nap (const volatile int *stop, double seconds);

/* A step of start-up: tried until it works, fails for good (not
 * KT_ERROR_TRANSIENT, or KT_ERROR_CONFLICT more than KT_RETRY_CONFLICTS
 * times), or @timeout_s passes (its budget in @timeout_ms). */
typedef gboolean (*KtRetryStep) (gpointer data, int timeout_ms, GError **error);

/* How many lock conflicts (KT_ERROR_CONFLICT: deadlock 1213, which is
 * also Galera's certification conflict, or lock wait timeout 1205) one
 * kt_retry() takes before it gives up. */
#define KT_RETRY_CONFLICTS 8

/* Whether kt_retry() tries again after @error, the @conflicts-th lock
 * conflict so far (counting this one): always after a transient error,
 * after a conflict while @conflicts <= KT_RETRY_CONFLICTS - 1, never
 * after anything else. */
gboolean kt_retry_again (const GError *error, guint conflicts);

/* Runs @step until it succeeds (TRUE), fails with an error other than
 * KT_ERROR_TRANSIENT or a lock conflict, conflicts KT_RETRY_CONFLICTS
 * times, *@stop is set, or @timeout_s runs out (FALSE; a transient error
 * is then prefixed "@what: gave up after N s: ", a conflict "@what: gave
 * up after N lock conflicts: "). Pauses from 0.25 s, doubling up to 2 s,
 * between tries. */
gboolean kt_retry (const volatile int *stop, double timeout_s, const char *what,
                   KtRetryStep step, gpointer data, GError **error);
