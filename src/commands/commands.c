/* commands.c - the table of ktally's commands (commands.h). */
#include "commands.h"

static const KtCommand *const table[] = {
  &kt_command_run,
  &kt_command_replay,
  &kt_command_status,
  &kt_command_audit,
  &kt_command_jobs,
  &kt_command_reset,
  &kt_command_forget,
  &kt_command_config,
  &kt_command_init_db,
  NULL,
};

const KtCommand *
kt_command_find (const char *name)
{
  for (const KtCommand *const *c = table; *c != NULL; c++)
    if (g_strcmp0 ((*c)->name, name) == 0)
      return *c;
  return NULL;
}

const KtCommand *const *
kt_commands (void)
{
  return table;
}

KtCommandBits
kt_command_bits (const KtCommand *command)
{
  return command->bit | command->also;
}
