/* progress.c - a long read's progress (progress.h). */
#include "progress.h"

/* Below this, a rate is noise (one batch that was already fetched). */
#define MEASURABLE_S 0.1

/* "42 s", "3 min 20 s", "2 h 5 min": as precise as a person needs. */
static void
append_duration (GString *out, double seconds)
{
  gint64 s = (gint64) seconds + ((double) (gint64) seconds < seconds);  /* rounded up */

  if (s < 60)
    g_string_append_printf (out, "%" G_GINT64_FORMAT " s", s);
  else if (s < 3600)
    g_string_append_printf (out, "%" G_GINT64_FORMAT " min %" G_GINT64_FORMAT " s",
                            s / 60, s % 60);
  else
    g_string_append_printf (out, "%" G_GINT64_FORMAT " h %" G_GINT64_FORMAT " min",
                            s / 3600, s % 3600 / 60);
}

void
kt_progress_append (GString *out, const char *unit, gint64 done, gint64 total, gint64 left,
                    gint64 moved, double elapsed_s)
{
  double rate;

  if (total >= 0)
    /* Rounded down: 100% only when it is. */
    g_string_append_printf (out, "%" G_GINT64_FORMAT "/%" G_GINT64_FORMAT " %s (%d%%)",
                            done, total, unit,
                            total > 0 ? (int) (100.0 * (double) done / (double) total) : 100);
  else
    g_string_append_printf (out, "%" G_GINT64_FORMAT " %s, %" G_GINT64_FORMAT " left",
                            done, unit, left);
  if (moved <= 0 || elapsed_s < MEASURABLE_S)
    return;
  rate = (double) moved / elapsed_s;
  g_string_append_printf (out, ", %.0f %s/s", rate, unit);
  if (left > 0)
    {
      g_string_append (out, ", ETA ");
      append_duration (out, (double) left / rate);
    }
}
