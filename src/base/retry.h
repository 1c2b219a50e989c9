/* retry.h - waiting that a signal can cut short, and start-up steps tried
 * again until they work or a deadline passes. Used by the scheduler and by
 * every command that waits for Kafka or MySQL. */
#pragma once
#include <glib.h>

/* Sleeps @seconds, waking early (within 50 ms) when *@stop is set. */
void kt_nap (const volatile int *stop, double seconds);

/* A step of start-up: tried until it works, fails for good (not
 * KT_ERROR_TRANSIENT), or @timeout_s passes (its budget in @timeout_ms). */
typedef gboolean (*KtRetryStep) (gpointer data, int timeout_ms, GError **error);

/* Runs @step until it succeeds (TRUE), fails with an error other than
 * KT_ERROR_TRANSIENT, *@stop is set, or @timeout_s runs out (FALSE; a
 * transient error is then prefixed "@what: gave up after N s: "). Pauses
 * from 0.25 s, doubling up to 2 s, between tries. */
gboolean kt_retry (const volatile int *stop, double timeout_s, const char *what,
                   KtRetryStep step, gpointer data, GError **error);
