/* cmd-config.c - `ktally config --check [--config FILE] [run options]`:
 * the effective settings of that `run`, as a config file that reads back
 * (secrets only as comments), or its first error. Touches nothing. */
#include "commands.h"

#include <stdio.h>
#include "error.h"

static KtConfig *
parse (int argc, char **argv, GError **error)
{
  g_autofree char **args = g_new0 (char *, argc + 1);
  gboolean check = FALSE;
  int n = 0;

  /* --check anywhere (a --config file's options come before it). */
  for (int i = 0; i < argc; i++)
    if (i > 0 && !check && g_strcmp0 (argv[i], "--check") == 0)
      check = TRUE;
    else
      args[n++] = argv[i];
  if (!check)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE,
                           "config: expected 'ktally config --check [--config FILE] "
                           "[run options]'");
      return NULL;
    }
  return kt_run_parse (n, args, error);
}

static gboolean
handle (const KtConfig *config, volatile int *stop, GError **error)
{
  g_autofree char *text = kt_config_describe (config);

  (void) stop;
  (void) error;
  fputs (text, stdout);
  return TRUE;
}

const KtCommand kt_command_config = {
  "config", "--check [--config FILE] [run options]: the effective settings", "run", parse,
  handle,
};
