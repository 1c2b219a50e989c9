/* ktally-man.c - fills a man page template (src/man/PAGE.in) from the option
 * table at build time, so that the pages cannot drift from the code:
 *
 *   ktally-man PAGE TEMPLATE OUTPUT
 *
 * PAGE is "ktally" (the options every command takes), "ktally-COMMAND"
 * (that command's synopsis and options) or "ktally.conf" (every section
 * and key of a config file). A line of the template that is exactly
 * @SYNOPSIS@, @OPTIONS@, @KEYS@ or @ENVIRONMENT@ (every KTALLY_ variable)
 * is replaced; @VERSION@ and @TABLE_NAME_RULE@ (names.h) anywhere. Build
 * tool only: never installed. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "names.h"

/* The options of @command (NULL: those every command takes) as .TP
 * paragraphs. */
static void
options (GString *out, const KtCommand *command)
{
  g_autoptr(KtOptionValues) values = NULL;

  if (command != NULL)
    {
      values = kt_option_values_new (kt_option_tables (), kt_command_bits (command));
      kt_option_man (out, values, command->notes);
      return;
    }
  {
    g_autoptr(GPtrArray) every = g_ptr_array_new ();

    /* Only the rows every command has. */
    for (const KtOption *row = kt_option_table; row->name != NULL; row++)
      if ((row->commands & KT_CMD_ALL) == KT_CMD_ALL)
        g_ptr_array_add (every, (gpointer) row);
    g_ptr_array_add (every, NULL);
    kt_option_man_rows (out, kt_option_tables (), (const KtOption *const *) every->pdata, NULL);
  }
}

static void
synopsis (GString *out, const KtCommand *command)
{
  if (command == NULL)
    {
      g_string_append (out, ".B ktally\n.I COMMAND\n[\\fIOPTION\\fR...]\n.br\n"
                            ".B ktally\n.BR \\-\\-help \" | \" \\-\\-version\n");
      return;
    }
  g_string_append_printf (out, ".B ktally %s\n[\\fIOPTION\\fR...]\n", command->name);
}

/* The commands that take @row, for ktally.conf(5): "run, replay". */
static char *
takers (const KtOption *row)
{
  GString *out = g_string_new (NULL);

  if ((row->commands & KT_CMD_ALL) == KT_CMD_ALL)
    {
      g_string_append (out, "every command");
      return g_string_free (out, FALSE);
    }
  for (const KtCommand *const *c = kt_commands (); *c != NULL; c++)
    if ((row->commands & (*c)->bit) != 0)
      g_string_append_printf (out, "%s%s", out->len ? ", " : "", (*c)->name);
  return g_string_free (out, FALSE);
}

/* Every section's keys, in the table's order, each once. */
static void
keys (GString *out)
{
  g_auto(GStrv) sections = kt_option_sections (kt_option_tables ());
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  for (char **s = sections; *s != NULL; s++)
    {
      g_string_append_printf (out, ".SS [%s]\n", *s);
      for (const KtOption *const *t = kt_option_tables (); *t != NULL; t++)
        for (const KtOption *row = *t; row->name != NULL; row++)
          {
            g_autofree char *who = NULL;

            if (g_strcmp0 (row->section, *s) != 0
                || !g_hash_table_add (seen, g_strdup_printf ("%s %s", *s, row->name)))
              continue;
            who = takers (row);
            kt_option_man_key (out, row, who);
          }
      if (g_str_equal (*s, "kafka"))
        g_string_append (out, ".TP\n\\fIany other key\\fR\n"
                              "A librdkafka property, passed as \\fB\\-X\\fR "
                              "\\fIkey\\fB=\\fIvalue\\fR (and refused like it when "
                              "exactly-once depends on it).\n");
    }
}

/* Every setting's variable, once each, as .TP paragraphs naming its option
 * and the commands that read it. */
static void
environment (GString *out)
{
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  for (const KtOption *const *t = kt_option_tables (); *t != NULL; t++)
    for (const KtOption *row = *t; row->name != NULL; row++)
      {
        char *name = kt_option_env_name (row);
        g_autofree char *who = NULL;

        if (name == NULL || !g_hash_table_add (seen, name))
          continue;
        who = takers (row);
        g_string_append_printf (out, ".TP\n.B %s\n", name);
        g_string_append (out, "\\fB\\-\\-");
        for (const char *p = row->name; *p != '\0'; p++)
          g_string_append (out, *p == '-' ? "\\-" : (char[]) { *p, '\0' });
        g_string_append_printf (out, "\\fR (%s)\n", who);
      }
}

int
main (int argc, char **argv)
{
  g_autofree char *text = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GString) out = g_string_new (NULL);
  g_auto(GStrv) lines = NULL;
  const KtCommand *command = NULL;
  const char *page;

  if (argc != 4)
    {
      fprintf (stderr, "usage: ktally-man PAGE TEMPLATE OUTPUT\n");
      return 2;
    }
  page = argv[1];
  if (g_str_has_prefix (page, "ktally-")
      && (command = kt_command_find (page + strlen ("ktally-"))) == NULL)
    {
      fprintf (stderr, "ktally-man: no command %s\n", page + strlen ("ktally-"));
      return 2;
    }
  if (!g_file_get_contents (argv[2], &text, NULL, &error))
    {
      fprintf (stderr, "ktally-man: %s\n", error->message);
      return 1;
    }
  lines = g_strsplit (text, "\n", -1);
  for (char **l = lines; *l != NULL; l++)
    {
      g_auto(GStrv) parts = NULL;
      g_autofree char *line = NULL;

      if (g_str_equal (*l, "@SYNOPSIS@"))
        synopsis (out, command);
      else if (g_str_equal (*l, "@OPTIONS@"))
        options (out, command);
      else if (g_str_equal (*l, "@KEYS@"))
        keys (out);
      else if (g_str_equal (*l, "@ENVIRONMENT@"))
        environment (out);
      else
        {
          g_auto(GStrv) rule = NULL;
          g_autofree char *ruled = NULL;

          parts = g_strsplit (*l, "@VERSION@", -1);
          line = g_strjoinv (PACKAGE_VERSION, parts);
          /* The one rule of table names, as the option table states it. */
          rule = g_strsplit (line, "@TABLE_NAME_RULE@", -1);
          ruled = g_strjoinv (KT_TABLE_NAME_RULE, rule);
          g_string_append (out, ruled);
          if (l[1] != NULL)
            g_string_append_c (out, '\n');
        }
    }
  if (!g_file_set_contents (argv[3], out->str, (gssize) out->len, &error))
    {
      fprintf (stderr, "ktally-man: %s\n", error->message);
      return 1;
    }
  return 0;
}
