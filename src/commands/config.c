/* config.c - a command's configuration (config.h): the command line, the
 * --config file (config-file.c) and the environment (config-env.c) parsed
 * into one KtConfig, in that order of precedence, with errors that name
 * where a value came from and never quote a password. */
#include "config.h"

#include <string.h>
#include "config-env.h"
#include "config-file.h"
#include "error.h"
#include "field-path.h"
#include "kind.h"
#include "kprops.h"

/* The options of the job's kind into @config; another kind's, given, are
 * refused. A kind that does not exist (or not in this mode) is left to
 * kt_check_run() to refuse. */
static gboolean
load_kind_options (KtConfig *config, const KtOptionValues *values, GError **error)
{
  const KtKind *kind = kt_kind_lookup (config->job.kind != NULL ? config->job.kind : "count",
                                       kt_mode_names[config->job.mode], NULL);

  for (const KtOption *const *t = kt_kind_option_tables (); *t != NULL; t++)
    {
      const KtOption *given;

      if (kind != NULL && kind->options == *t)
        {
          config->kind_options = *t;
          config->job.options = g_malloc0 (kind->options_size);
          if (!kt_option_values_load (values, *t, config->job.options, error))
            return FALSE;
          continue;
        }
      given = kt_option_values_first_given (values, *t);
      if (given != NULL && kind != NULL
          && (kind->options == NULL || kt_option_lookup ((const KtOption *const[]) {
                kind->options, NULL }, G_MAXUINT32, given->name) == NULL))
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "--%s: not an option of --kind %s",
                       given->name, kind->kind);
          return FALSE;
        }
    }
  return TRUE;
}

/* Parses @argv (@argv[0] is the command's name) for @command: GOption
 * with every row it takes (of @tables), --help with its summary; loads
 * them into a new KtConfig (the job kind's into job.options, the
 * command's own into own) and has the command check them. --help prints
 * and exits 0 (GLib's way). */
static KtConfig *
command_parse (const KtCommand *command, const KtOption *const *tables, int argc, char **argv,
               GError **error)
{
  g_autoptr(KtConfig) config = g_new0 (KtConfig, 1);
  g_autoptr(KtOptionValues) parsed = kt_option_values_new (tables, kt_command_bits (command));

  config->command = command->name;
  config->cmd = command;
  if (command->every_error)
    kt_option_values_collect (parsed);
  if (command->options != NULL)
    {
      config->own = g_malloc0 (command->options_size);
      config->own_options = command->options;
    }
  if (!kt_option_values_parse (parsed, command->help, command->notes, argc, argv, error)
      || !kt_option_values_load (parsed, kt_option_table, config, error)
      || !load_kind_options (config, parsed, error)
      || (command->options != NULL
          && !kt_option_values_load (parsed, command->options, config->own, error))
      || !command->check (config, parsed, error))
    return NULL;
  return g_steal_pointer (&config);
}

gboolean
kt_config_errors (GPtrArray *errors, GError **error)
{
  g_autoptr(GString) all = NULL;

  if (errors == NULL || errors->len == 0)
    return TRUE;
  all = g_string_new (NULL);
  for (guint i = 0; i < errors->len; i++)
    g_string_append_printf (all, "%s%s", i > 0 ? "\n" : "",
                            ((GError *) errors->pdata[i])->message);
  g_set_error_literal (error, KT_ERROR, ((GError *) errors->pdata[0])->code, all->str);
  return FALSE;
}

/* Blanks, in @message, what the command's @words hold where a mysql://
 * password stands (kt_db_uri_secrets()). A message quotes what the user
 * gave (GOption quotes a bad value whole), so a password shows as in its
 * URI, after a ':'; a longer one is blanked wherever it shows. Our own
 * text stays as it is: the placeholder "mysql://USER[:PASSWORD]@HOST"
 * in the --db messages, or a one-letter password's letter in a word. */
static void
scrub_message (char *message, char **words)
{
  for (char **w = words; *w != NULL; w++)
    {
      g_auto(GStrv) secrets = kt_db_uri_secrets (*w);

      for (char **s = secrets; *s != NULL; s++)
        for (char *at = strstr (message, *s); at != NULL; at = strstr (at + 1, *s))
          if (strlen (*s) >= 4 || (at > message && at[-1] == ':'))
            memset (at, 'x', strlen (*s));
    }
  kt_kprops_scrub (message);
}

/* Whether the command line opts in to secrets from the environment. */
static gboolean
env_secrets_given (GPtrArray *args)
{
  for (guint i = 1; i < args->len && args->pdata[i] != NULL; i++)
    if (g_str_equal (args->pdata[i], "--env-secrets"))
      return TRUE;
  return FALSE;
}

/* The environment's --config (KTALLY_CONFIG): out of its words, as the
 * command line's is out of argv; returned when the command line names no
 * file. New string or NULL. */
static char *
env_config_take (KtConfigEnv *env, const char *file)
{
  char *path = NULL;

  for (guint i = 0; i < env->words->len;)
    if (g_str_has_prefix (env->words->pdata[i], "--config="))
      {
        g_free (path);
        path = g_strdup ((char *) env->words->pdata[i] + strlen ("--config="));
        g_ptr_array_remove_index (env->words, i);
        g_ptr_array_remove_index (env->names, i);
      }
    else
      i++;
  if (file != NULL)
    g_clear_pointer (&path, g_free);
  return path;
}

/* The file's words for the switches the environment turns off: the
 * environment wins over the file, also for a "false". */
static void
env_switches_off (const KtConfigEnv *env, GPtrArray *words, GArray *lines)
{
  for (guint o = 0; o < env->off->len; o++)
    {
      g_autofree char *word = g_strdup_printf ("--%s", (char *) env->off->pdata[o]);

      for (guint i = 0; i < words->len;)
        if (g_str_equal (words->pdata[i], word))
          {
            g_ptr_array_remove_index (words, i);
            g_array_remove_index (lines, i);
          }
        else
          i++;
    }
}

static char **
strv_of (GPtrArray *names)
{
  char **out = g_new0 (char *, names->len + 1);

  for (guint i = 0; i < names->len; i++)
    out[i] = g_strdup (names->pdata[i]);
  return out;
}

/* The command of @commands named @name, or NULL. */
static const KtCommand *
command_find (const KtCommand *const *commands, const char *name)
{
  for (const KtCommand *const *c = commands; *c != NULL; c++)
    if (g_strcmp0 ((*c)->name, name) == 0)
      return *c;
  return NULL;
}

/* @argv into @args (borrowed strings, NULL-terminated), "-Xkey=value"
 * taken apart as kcat and getopt take it: GOption wants the value apart. */
static void
split_words (int argc, char **argv, GPtrArray *args)
{
  for (int i = 0; i < argc; i++)
    if (i > 0 && g_str_has_prefix (argv[i], "-X") && argv[i][2] != '\0')
      {
        g_ptr_array_add (args, (char *) "-X");
        g_ptr_array_add (args, argv[i] + 2);
      }
    else
      g_ptr_array_add (args, argv[i]);
  g_ptr_array_add (args, NULL);
}

/* --db of @config against the file's [mysql] section: the command line's
 * words (@given) and the environment's replace the file's. */
static gboolean
check_file_db (const char *file, GPtrArray *words, GArray *lines, char **given,
               const KtConfigEnv *env, KtConfig *config, GError **error)
{
  g_autoptr(GPtrArray) over = g_ptr_array_new ();

  for (char **w = given; *w != NULL; w++)
    g_ptr_array_add (over, *w);
  for (guint i = 0; i < env->words->len; i++)
    g_ptr_array_add (over, env->words->pdata[i]);
  g_ptr_array_add (over, NULL);
  return kt_config_file_check_db (file, words, lines, (char **) over->pdata, &config->db,
                                  error);
}

/* A value from the file or the environment that does not do: each line of
 * @local's message with where it came from, into @errors. */
static void
blame (const char *file, GPtrArray *words, GArray *lines, KtConfigEnv *env, char **given,
       const KtOption *const *tables, KtCommandBits bits, const GError *local,
       GPtrArray *errors)
{
  g_auto(GStrv) each = g_strsplit (local->message, "\n", -1);

  for (char **m = each; *m != NULL; m++)
    {
      g_autofree char *where = kt_config_file_blame (file, *m, words, lines, env, given,
                                                     tables, bits);
      g_ptr_array_add (errors, where != NULL
                       ? g_error_new (KT_ERROR, KT_ERROR_USAGE, "%s: %s", where, *m)
                       : g_error_new_literal (KT_ERROR, KT_ERROR_USAGE, *m));
    }
}

/* GLib quotes a bad argument back, and the argument may be a URI with a
 * password in it: no message leaves with one. Blanks them in @message,
 * from every word given: argv (--config=FILE too, which @given no longer
 * holds: a file name that looks like a URI, found by fuzz-options), the
 * file's and the environment's. */
static void
scrub_all (char *message, int argc, char **argv, char **given, GPtrArray *words,
           KtConfigEnv *env)
{
  g_autofree char **all = g_new0 (char *, argc + 1);

  memcpy (all, argv, sizeof (char *) * (gsize) argc);
  g_ptr_array_add (words, NULL);
  scrub_message (message, all);
  scrub_message (message, given);
  scrub_message (message, (char **) words->pdata);
  if (env->words != NULL)
    {
      g_ptr_array_add (env->words, NULL);
      scrub_message (message, (char **) env->words->pdata);
    }
}

KtConfig *
kt_config_parse_with (const KtCommand *const *commands, const KtOption *const *tables,
                      const char *command, int argc, char **argv, GError **error)
{
  const KtCommand *cmd = command_find (commands, command);
  g_autoptr(GError) local = NULL;
  g_autoptr(GPtrArray) args = g_ptr_array_new ();  /* borrowed strings */
  g_autoptr(GPtrArray) words = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GArray) lines = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autoptr(GPtrArray) file_errors = g_ptr_array_new_with_free_func ((GDestroyNotify) g_error_free);
  g_auto(GStrv) given = NULL;  /* the command line's words, for the file's errors */
  KtConfigEnv env = { 0 };
  g_autofree char *env_file = NULL;
  gboolean read = FALSE;  /* the environment and the file read: parse */
  const char *file;
  KtConfig *config = NULL;

  split_words (argc, argv, args);
  file = kt_config_file_take (args);
  given = g_strdupv ((char **) args->pdata);
  if (cmd == NULL)
    g_set_error (&local, KT_ERROR, KT_ERROR_USAGE, "unknown command '%s'", command);
  else if (kt_config_env_read (tables, kt_command_bits (cmd),
                               env_secrets_given (args), &env, &local))
    {
      env_file = env_config_take (&env, file);
      if (file == NULL)
        file = env_file;
      read = file == NULL
             || kt_config_file_words (file, tables, kt_command_bits (cmd), words,
                                      lines, cmd->every_error ? file_errors : NULL, &local);
    }
  if (read)
    {
      env_switches_off (&env, words, lines);
      /* The file's words first, then the environment's: the command line's
       * come last and win, and the environment's win over the file's. */
      for (guint i = 0; i < words->len; i++)
        g_ptr_array_insert (args, (gint) (i + 1), words->pdata[i]);
      for (guint i = 0; i < env.words->len; i++)
        g_ptr_array_insert (args, (gint) (words->len + i + 1), env.words->pdata[i]);
      config = command_parse (cmd, tables, (int) args->len - 1, (char **) args->pdata,
                              &local);
      /* The environment's --db replaces the file's like the command line's. */
      if (config != NULL && file != NULL
          && !check_file_db (file, words, lines, given, &env, config, &local))
        g_clear_pointer (&config, kt_config_free);
      /* A value from the file or the environment that does not do: where
       * it came from too (each one's, when the command says every error,
       * one a line). */
      if (config == NULL && (file != NULL || env.words->len > 0) && local->domain == KT_ERROR
          && local->code == KT_ERROR_USAGE)
        {
          blame (file, words, lines, &env, given, tables, kt_command_bits (cmd), local,
                 file_errors);
          g_clear_error (&local);
        }
      /* The file's errors, then the values': all of them, or none. */
      if (file_errors->len > 0)
        {
          g_clear_pointer (&config, kt_config_free);
          g_clear_error (&local);
          kt_config_errors (file_errors, &local);
        }
    }

  if (config == NULL)
    {
      scrub_all (local->message, argc, argv, given, words, &env);
      kt_config_env_clear (&env);
      g_propagate_error (error, g_steal_pointer (&local));
      return NULL;
    }
  config->commands = commands;
  config->tables = tables;
  g_free (config->config_file);
  config->config_file = g_strdup (file);
  config->words = g_new0 (char *, argc + 1);
  for (int i = 0; i < argc; i++)
    config->words[i] = g_strdup (argv[i]);
  config->env_given = env.given->len > 0 ? strv_of (env.given) : NULL;
  config->env_ignored = env.ignored->len > 0 ? strv_of (env.ignored) : NULL;
  kt_config_env_clear (&env);
  return config;
}

void
kt_config_free (KtConfig *config)
{
  if (config == NULL)
    return;
  kt_option_table_clear (kt_option_table, config);
  if (config->job.options != NULL)
    kt_option_table_clear (config->kind_options, config->job.options);
  g_free (config->job.options);
  if (config->own != NULL)
    kt_option_table_clear (config->own_options, config->own);
  g_free (config->own);
  g_free (config->job.topic);
  g_free (config->job.replay_range);
  g_free (config->job.replay_times);
  kt_db_config_clear (&config->db);
  g_strfreev (config->words);
  g_strfreev (config->env_given);
  g_strfreev (config->env_ignored);
  g_free (config);
}

/* ---- What the layers below get of a configuration ------------------------ */

/* The first row of @tables (taken by any command) whose identity is
 * @scope.@column, with the first such of each column, in table order,
 * appended to @out. */
static void
identity_rows (const KtOption *const *tables, const char *scope, GPtrArray *out)
{
  gsize n = strlen (scope);

  for (const KtOption *const *t = tables; *t != NULL; t++)
    for (const KtOption *row = *t; row->name != NULL; row++)
      {
        gboolean seen = FALSE;

        if (row->identity == NULL || strncmp (row->identity, scope, n) != 0
            || row->identity[n] != '.')
          continue;
        for (guint i = 0; i < out->len && !seen; i++)
          seen = g_str_equal (((const KtOption *) out->pdata[i])->identity, row->identity);
        if (!seen)
          g_ptr_array_add (out, (gpointer) row);
      }
}

/* Whether @row is one of @table's. */
static gboolean
in_table (const KtOption *table, const KtOption *row)
{
  for (const KtOption *r = table; r != NULL && r->name != NULL; r++)
    if (r == row)
      return TRUE;
  return FALSE;
}

void
kt_config_identity (const KtConfig *config, const KtKind *kind, KtIdentity *id)
{
  const KtOption *const main_table[] = { kt_option_table, NULL };
  g_autoptr(GPtrArray) job_rows = g_ptr_array_new ();
  g_autoptr(GPtrArray) table_rows = g_ptr_array_new ();
  const char *output = kind->table != NULL ? kind->table : config->job.table;

  kt_identity_init (id, config->job.name, output, (const char *const *) config->job.topics,
                    config->job.replay_from != NULL, config->job.share_table);
  /* ktally_job: the job's own rows; what it writes is the kind's table
   * when it has one. */
  identity_rows (main_table, "job", job_rows);
  for (guint i = 0; i < job_rows->len; i++)
    {
      const KtOption *row = job_rows->pdata[i];
      const char *column = row->identity + strlen ("job.");
      g_autofree char *flag = g_strdup_printf ("--%s", row->name);
      g_autofree char *value = g_str_equal (column, "output") ? g_strdup (output)
                               : kt_option_normal (row, config);

      kt_identity_add (id, FALSE, g_intern_string (column), g_intern_string (flag), value, row,
                       FALSE);
    }
  /* A replay is its range too: under a --job given again with another
   * range it would resume from the first range's offsets. */
  kt_identity_add (id, FALSE, "replay_times", "--from-datetime/--until-datetime",
                   config->job.replay_times, NULL, TRUE);
  kt_identity_add (id, FALSE, "replay_range", config->job.replay_times != NULL
                   ? "the offsets its --from-datetime/--until-datetime resolved to"
                   : "--from/--until", config->job.replay_range,
                   NULL, TRUE);
  /* ktally_table: what its rows are, and every kind's rows that say what
   * they mean; those of another kind than this job's are '' (not its). */
  kt_identity_add (id, TRUE, "holds", "--kind", kind->holds, NULL, FALSE);
  identity_rows (kt_kind_option_tables (), "table", table_rows);
  for (guint i = 0; i < table_rows->len; i++)
    {
      const KtOption *row = table_rows->pdata[i];
      g_autofree char *flag = g_strdup_printf ("--%s", row->name);
      g_autofree char *value = in_table (kind->options, row)
                               ? kt_option_normal (row, config->job.options) : NULL;

      kt_identity_add (id, TRUE, g_intern_string (row->identity + strlen ("table.")),
                       g_intern_string (flag), value, row, FALSE);
    }
}

void
kt_config_chart (const KtConfig *config, const KtKind *kind, KtHttpChart *chart,
                 GStrv *dimensions)
{
  const KtOption *const mine[] = { kind->options, NULL };
  const KtOption *by = kind->options != NULL ? kt_option_lookup (mine, G_MAXUINT32, "by") : NULL;
  const KtOption *bucket = kind->options != NULL
                           ? kt_option_lookup (mine, G_MAXUINT32, "bucket") : NULL;
  g_autofree char *by_text = by != NULL ? kt_option_text (by, config->job.options) : NULL;

  *dimensions = by_text != NULL ? g_strsplit (by_text, ",", -1) : NULL;
  /* The chart reads columns: a path's is its own (service.name -> service_name). */
  for (guint i = 0; *dimensions != NULL && (*dimensions)[i] != NULL; i++)
    {
      char *column = kt_field_column ((*dimensions)[i]);

      g_free ((*dimensions)[i]);
      (*dimensions)[i] = column;
    }
  *chart = (KtHttpChart) {
    .table = config->job.table,
    .dimensions = (const char *const *) *dimensions,
    .bucket = bucket != NULL ? *(const int *) ((const char *) config->job.options
                                               + bucket->offset) : 1,
  };
}

gboolean
kt_config_run (const KtConfig *config, const KtRunHooks *hooks, volatile int *stop,
               KtRangeStats *totals, GError **error)
{
  const KtKind *kind = kt_kind_lookup (config->job.kind, kt_mode_names[config->job.mode],
                                       error);
  g_auto(GStrv) dimensions = NULL;
  KtIdentity identity;
  KtHttpChart chart;
  gboolean ok;

  if (kind == NULL)
    return FALSE;
  kt_config_identity (config, kind, &identity);
  kt_config_chart (config, kind, &chart, &dimensions);
  ok = kt_run (&(KtRunSetup) {
                 .spec = &config->job, .identity = &identity, .db = &config->db,
                 .kafka = &config->kafka, .run = &config->run, .health = &config->health,
                 .chart = &chart,
               }, hooks, stop, totals, error);
  kt_identity_clear (&identity);
  return ok;
}
