/* loglevel.h - how much the log lets through: --verbose (debug lines and
 * librdkafka's own), --quiet (warnings only). Set at start and by a reload
 * (SIGHUP) while other threads log: main.c's log writer asks here. */
#pragma once
#include <glib.h>

/* Atomic: may be called from any thread, while others log. */
void     kt_log_level_set     (gboolean verbose, gboolean quiet);
gboolean kt_log_level_verbose (void);
gboolean kt_log_level_quiet   (void);
