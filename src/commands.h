/* commands.h - ktally's commands: one file each (cmd-*.c, audit.c),
 * dispatched by name from main.c's table. Each owns its option table,
 * its validation and its handler. */
#pragma once
#include <glib.h>
#include "cli.h"

typedef struct
{
  const char *name;     /* "run" */
  const char *summary;  /* one line for `ktally --help` */
  const char *keys_of;  /* whose keys it takes from a --config file; NULL: its own */
  /* @argv[0] is the command's name; --help prints and exits 0 (GLib's way). */
  KtConfig *(*parse)  (int argc, char **argv, GError **error);
  /* Runs it; *@stop is set by SIGTERM/SIGINT. */
  gboolean  (*handle) (const KtConfig *config, volatile int *stop, GError **error);
} KtCommand;

extern const KtCommand kt_command_run, kt_command_replay, kt_command_status,
                       kt_command_audit, kt_command_init_db, kt_command_config,
                       kt_command_jobs, kt_command_reset, kt_command_forget;

/* `run`'s options into a config (`config --check` checks the same). */
KtConfig *kt_run_parse (int argc, char **argv, GError **error);

/* The command named @name, or NULL. */
const KtCommand *kt_command_find (const char *name);

/* Every command, in the order `ktally --help` lists them; NULL-terminated. */
const KtCommand *const *kt_commands (void);

/* The handlers, for whoever calls them directly. */
gboolean kt_status  (const KtConfig *config, GError **error);
gboolean kt_init_db (const KtConfig *config, GError **error);
gboolean kt_replay  (const KtConfig *config, volatile int *stop, GError **error);
