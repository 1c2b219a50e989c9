/* cmd-run.h - what `ktally run` checks of its options, which `ktally
 * config --check` checks the same way (cmd-config.c). */
#pragma once
#include <glib.h>
#include "cli.h"

/* What `run` checks of its options once the table loaded them: the first
 * error, or with _every, every one appended to @errors (GError *). */
gboolean  kt_command_run_check (KtConfig *config, const KtOptionValues *values, GError **error);
void      kt_command_run_check_every (KtConfig *config, const KtOptionValues *values,
                                      GPtrArray *errors);
