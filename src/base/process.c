/* process.c - this process's costs from /proc/self (process.h), read the
 * way Prometheus's own clients do (client_golang's procfs). */
#include "process.h"

#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* The boot time from /proc/stat's "btime", in seconds since the epoch. */
static gboolean
boot_time (gint64 *btime)
{
  g_autofree char *text = NULL;
  const char *line;

  if (!g_file_get_contents ("/proc/stat", &text, NULL, NULL))
    return FALSE;
  line = strstr (text, "\nbtime ");
  if (line == NULL)
    return FALSE;
  *btime = g_ascii_strtoll (line + strlen ("\nbtime "), NULL, 10);
  return *btime > 0;
}

/* Entries of /proc/self/fd, less the one the listing itself holds open. */
static gint64
count_fds (void)
{
  g_autoptr(GDir) dir = g_dir_open ("/proc/self/fd", 0, NULL);
  gint64 n = 0;

  if (dir == NULL)
    return 0;
  while (g_dir_read_name (dir) != NULL)
    n++;
  return MAX (n - 1, 0);
}

gboolean
kt_process_sample (KtProcessSample *out)
{
  g_autofree char *stat = NULL;
  g_auto(GStrv) fields = NULL;
  const char *after_comm;
  double ticks = (double) sysconf (_SC_CLK_TCK);
  struct rlimit limit;
  gint64 btime;

  memset (out, 0, sizeof *out);
  /* "pid (comm) state ppid ...": comm may hold spaces and parentheses, so
   * the fields are counted from the last ')'; fields[0] is field 3. */
  if (!g_file_get_contents ("/proc/self/stat", &stat, NULL, NULL)
      || (after_comm = strrchr (stat, ')')) == NULL || !boot_time (&btime) || ticks <= 0)
    return FALSE;
  fields = g_strsplit (after_comm + 2, " ", -1);
  if (g_strv_length (fields) < 22)
    return FALSE;
  out->cpu_seconds = (double) (g_ascii_strtoull (fields[11], NULL, 10)      /* utime */
                               + g_ascii_strtoull (fields[12], NULL, 10))   /* stime */
                     / ticks;
  out->start_time = (double) btime + (double) g_ascii_strtoull (fields[19], NULL, 10) / ticks;
  out->virtual_bytes = g_ascii_strtoll (fields[20], NULL, 10);
  out->resident_bytes = g_ascii_strtoll (fields[21], NULL, 10) * sysconf (_SC_PAGESIZE);
  out->open_fds = count_fds ();
  if (getrlimit (RLIMIT_NOFILE, &limit) == 0)
    out->max_fds = limit.rlim_cur == RLIM_INFINITY ? G_MAXINT64 : (gint64) limit.rlim_cur;
  return TRUE;
}
