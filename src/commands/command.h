/* command.h - what a command is: one file each (cmd-*.c) defines a
 * KtCommand, and the table of them (commands.c) lists them. The
 * configuration (config.c) parses a command's words against it, and main.c
 * calls its handler. */
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

/* The rows @command takes: its own and those of @command->also. */
static inline KtCommandBits
kt_command_bits (const KtCommand *command)
{
  return command->bit | command->also;
}
