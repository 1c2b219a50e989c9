/* config.h - a command's configuration: its words, its --config file and
 * the environment (KTALLY_*) parsed into a KtConfig (cli.h), described
 * back as a config file (describe.h), and what a reload of it changes
 * (reload.h).
 *
 * Parsing is given the table of commands and every option table as data
 * (commands.c gives its own: kt_config_parse()), and the KtConfig keeps
 * them: a reload parses the words again against the same, and describing
 * reads the command's rows from them. So the configuration never calls
 * into the table of commands, and a command that reloads (run) calls
 * nothing that reaches back to it. */
#pragma once
#include <glib.h>
#include "cli.h"
#include "command.h"
#include "kind.h"
#include "run.h"

/* Parses `ktally COMMAND ARGS...` (@argv[0] is the command name) for the
 * command of @commands named @command, with every row of @tables (the
 * command's own take effect, the others' keys are known in a --config
 * file): the file's words first, then the environment's, then the
 * command line's, which win. --help prints and exits 0 (GLib's
 * behaviour). Fails with KT_ERROR_USAGE and one line naming the flag (and
 * where its value came from); the message never contains a password.
 * Both arrays are static: the KtConfig keeps them. */
KtConfig *kt_config_parse_with (const KtCommand *const *commands,
                                const KtOption *const *tables, const char *command,
                                int argc, char **argv, GError **error);

/* @errors (GError *) as one error: their messages one a line, the code
 * of the first. FALSE when there were some. */
gboolean  kt_config_errors (GPtrArray *errors, GError **error);

/* What the database records of the job of @config, run by @kind: its
 * settings from the rows that say they are part of it (identity.h). The
 * caller clears @id. */
void     kt_config_identity (const KtConfig *config, const KtKind *kind,
                             KtIdentity *id);

/* What the page charts of the job's output: its table, bucket and --by
 * fields (*@dimensions holds them: the caller frees it after @chart). */
void     kt_config_chart    (const KtConfig *config, const KtKind *kind,
                             KtHttpChart *chart, GStrv *dimensions);

/* Runs the job of @config (run.h's kt_run(), with its identity and
 * chart made here). */
gboolean kt_config_run      (const KtConfig *config, const KtRunHooks *hooks,
                             volatile int *stop, KtRangeStats *totals, GError **error);
