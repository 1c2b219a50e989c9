/* loglevel.c - see loglevel.h. */
#include "loglevel.h"

static gint verbose_flag;
static gint quiet_flag;

void
kt_log_level_set (gboolean verbose, gboolean quiet)
{
  g_atomic_int_set (&verbose_flag, verbose ? 1 : 0);
  g_atomic_int_set (&quiet_flag, quiet ? 1 : 0);
}

gboolean
kt_log_level_verbose (void)
{
  return g_atomic_int_get (&verbose_flag) != 0;
}

gboolean
kt_log_level_quiet (void)
{
  return g_atomic_int_get (&quiet_flag) != 0;
}
