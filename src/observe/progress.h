/* progress.h - a long read's progress, for a person at a terminal.
 *
 * `replay` and `run --exit-when-idle` show it as the status line (log.h):
 * what is done, what is left, and, once it can be measured, the rate and
 * the time left. Pure formatting: the caller measures. */
#pragma once
#include <glib.h>

/* Appends "D/T UNIT (P%)" when @total >= 0, else "D UNIT, L left"; then,
 * once the rate is measurable (@moved > 0 over at least 0.1 s), ", R
 * UNIT/s" and, while something is left, ", ETA 1 min 40 s". Never "0
 * UNIT/s", never an ETA of nothing. @moved: what this process did in
 * @elapsed_s (a resumed replay's @done includes what an earlier one did). */
void kt_progress_append (GString *out, const char *unit, gint64 done, gint64 total,
                         gint64 left, gint64 moved, double elapsed_s);
