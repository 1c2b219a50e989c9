/* commands.c - the table of ktally's commands (commands.h): who they
 * are, every table of options they take, and parsing by a command's name
 * against them. */
#include "commands.h"

#include "config.h"
#include "kind.h"

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

const KtOption *const *
kt_option_tables (void)
{
  static const KtOption **tables;

  if (g_once_init_enter (&tables))
    {
      const KtOption *const *kinds = kt_kind_option_tables ();
      GPtrArray *all = g_ptr_array_new ();

      g_ptr_array_add (all, (gpointer) kt_option_table);
      for (guint i = 0; kinds[i] != NULL; i++)
        g_ptr_array_add (all, (gpointer) kinds[i]);
      for (const KtCommand *const *c = kt_commands (); *c != NULL; c++)
        if ((*c)->options != NULL)
          g_ptr_array_add (all, (gpointer) (*c)->options);
      g_ptr_array_add (all, NULL);
      g_once_init_leave (&tables, (const KtOption **) g_ptr_array_free (all, FALSE));
    }
  return tables;
}

KtConfig *
kt_config_parse (const char *command, int argc, char **argv, GError **error)
{
  return kt_config_parse_with (table, kt_option_tables (), command, argc, argv, error);
}
