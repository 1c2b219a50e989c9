/* process.h - what the process itself costs, for /metrics: the standard
 * process_* series every Prometheus client exports (CPU, memory, file
 * descriptors, start time), read from /proc/self. */
#pragma once
#include <glib.h>

typedef struct
{
  double cpu_seconds;     /* user + system, since the start */
  gint64 resident_bytes;
  gint64 virtual_bytes;
  gint64 open_fds;
  gint64 max_fds;         /* the soft limit (RLIMIT_NOFILE) */
  double start_time;      /* seconds since the epoch */
} KtProcessSample;

/* Fills @out for this process; FALSE (and @out zeroed) when /proc cannot
 * be read (not Linux, or hidden by a sandbox). Reads a few small files:
 * never call it under a lock the batch loop takes. */
gboolean kt_process_sample (KtProcessSample *out);
