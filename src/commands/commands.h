/* commands.h - the table of ktally's commands (commands.c): each is one
 * file (cmd-*.c) defining a KtCommand (command.h), with its summary, its
 * own options and checks, and its handler; main.c looks a name up here and
 * calls it. Nothing but main.c (and the man pages' and the tests'
 * programs) calls into the table: the configuration is parsed against it
 * as data (config.h), so that a command that parses its words again (a
 * reload) calls no function that reaches back to it. */
#pragma once
#include <glib.h>
#include "cli.h"
#include "command.h"

extern const KtCommand kt_command_run, kt_command_replay, kt_command_status,
                       kt_command_audit, kt_command_init_db, kt_command_config,
                       kt_command_jobs, kt_command_reset, kt_command_forget;

/* The command named @name, or NULL. */
const KtCommand *kt_command_find (const char *name);

/* Every command, in the order `ktally --help` lists them; NULL-terminated. */
const KtCommand *const *kt_commands (void);

/* Every table of options: cli.h's kt_option_table, each kind's own
 * (kind.h) and each command's own; NULL-terminated. */
const KtOption *const *kt_option_tables (void);

/* Parses `ktally COMMAND ARGS...` against this table and every option
 * table: kt_config_parse_with() (config.h). */
KtConfig *kt_config_parse (const char *command, int argc, char **argv, GError **error);

