/* commands.h - ktally's commands: one file each (cmd-*.c, audit.c),
 * dispatched by name from main.c's table. Each owns its summary, its own
 * checks of the options the table gives it, and its handler. */
#pragma once
#include <glib.h>
#include "cli.h"

typedef struct _KtCommand KtCommand;

struct _KtCommand
{
  const char   *name;     /* "run" */
  const char   *summary;  /* one line for `ktally --help` */
  const char   *help;     /* what `ktally NAME --help` says before the options */
  KtCommandBits bit;      /* its rows in the option table (cli.h) */
  KtCommandBits also;     /* the rows of other commands it takes too (config: run's) */
  const KtOptionNote *notes;  /* its own words for shared options, or NULL */
  /* Its own options: their table (which fills a struct of @options_size,
   * KtConfig's `own`), or NULL. */
  const KtOption *options;
  gsize         options_size;
  /* It reports every error of its options at once, one line each, not the
   * first (config --check): the table keeps the values that do not load
   * (kt_option_values_errors()), and its check adds its own. */
  gboolean      every_error;
  /* What it checks of its options once the table loaded them (what each
   * says together with the others, what a file it names holds): FALSE
   * with KT_ERROR_USAGE and one line naming the flag. */
  gboolean  (*check)  (KtConfig *config, const KtOptionValues *values, GError **error);
  /* Runs it; *@stop is set by SIGTERM/SIGINT. */
  gboolean  (*handle) (const KtConfig *config, volatile int *stop, GError **error);
};

extern const KtCommand kt_command_run, kt_command_replay, kt_command_status,
                       kt_command_audit, kt_command_init_db, kt_command_config,
                       kt_command_jobs, kt_command_reset, kt_command_forget;

/* What `run` checks of its options once the table loaded them (`config
 * --check` checks the same): the first error, or with _every, every one
 * appended to @errors (GError *). */
gboolean  kt_run_check (KtConfig *config, const KtOptionValues *values, GError **error);
void      kt_run_check_every (KtConfig *config, const KtOptionValues *values,
                              GPtrArray *errors);

/* The command named @name, or NULL. */
const KtCommand *kt_command_find (const char *name);

/* Every command, in the order `ktally --help` lists them; NULL-terminated. */
const KtCommand *const *kt_commands (void);

/* Every table of options: cli.h's kt_option_table, each kind's own
 * (kind.h) and each command's own; NULL-terminated. */
const KtOption *const *kt_option_tables (void);

/* Parses `ktally COMMAND ARGS...` (@argv[0] is the command name), a
 * --config file's words first. --help prints and exits 0 (GLib's
 * behaviour). Fails with KT_ERROR_USAGE and one line naming the flag; the
 * message never contains a password. */
KtConfig *kt_config_parse (const char *command, int argc, char **argv, GError **error);

/* Parses @argv (@argv[0] is the command's name) for @command: GOption
 * with every row it takes, --help with its summary; loads them into a new
 * KtConfig (the job kind's into job.options, the command's own into own)
 * and has the command check them. --help prints and exits 0 (GLib's
 * way). */
KtConfig *kt_command_parse (const KtCommand *command, int argc, char **argv,
                            GError **error);

/* @errors (GError *) as one error: their messages one a line, the code
 * of the first. FALSE when there were some. */
gboolean kt_command_errors (GPtrArray *errors, GError **error);

/* The rows @command takes: its own and those of @command->also. */
KtCommandBits kt_command_bits (const KtCommand *command);

/* The handlers, for whoever calls them directly. */
gboolean kt_status  (const KtConfig *config, GError **error);
gboolean kt_init_db (const KtConfig *config, GError **error);
gboolean kt_replay  (const KtConfig *config, volatile int *stop, GError **error);
