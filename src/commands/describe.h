/* describe.h - a job's effective settings as a --config file. */
#pragma once
#include "cli.h"

/* The effective settings of a `run` as an INI document (what
 * `ktally config --check` prints) that reads back as a --config file.
 * Secrets are masked: the password shows as whether there is one, never
 * as itself; a secret -X property as a comment that it is set. */
char *kt_config_describe (const KtConfig *config);
