/* config-env.c - settings from the environment (config-env.h). */
#include "config-env.h"

#include <string.h>
#include "error.h"

void
kt_config_env_clear (KtConfigEnv *env)
{
  g_clear_pointer (&env->words, g_ptr_array_unref);
  g_clear_pointer (&env->names, g_ptr_array_unref);
  g_clear_pointer (&env->off, g_ptr_array_unref);
  g_clear_pointer (&env->given, g_ptr_array_unref);
  g_clear_pointer (&env->ignored, g_ptr_array_unref);
}

static void
add_word (KtConfigEnv *env, const char *variable, char *word)
{
  g_ptr_array_add (env->words, word);
  g_ptr_array_add (env->names, g_strdup (variable));
}

/* The row of @tables whose variable is @variable, for any command; and
 * through @mine, whether @command takes it. */
static const KtOption *
row_of (const KtOption *const *tables, KtCommandBits command, const char *variable,
        gboolean *mine)
{
  const KtOption *found = NULL;

  *mine = FALSE;
  for (const KtOption *const *t = tables; *t != NULL; t++)
    for (const KtOption *row = *t; row->name != NULL; row++)
      {
        g_autofree char *name = kt_option_env_name (row);

        if (name == NULL || !g_str_equal (name, variable))
          continue;
        /* The command's own row first: two rows may share a name (a kind's
         * option two kinds declare, --table of run and of replay). */
        if ((row->commands & command) != 0
            && kt_option_lookup (tables, command, row->name) == row)
          {
            *mine = TRUE;
            return row;
          }
        if (found == NULL)
          found = row;
      }
  return found;
}

/* One variable's words. */
static gboolean
take (KtConfigEnv *env, const KtOption *row, const char *variable, const char *value,
      gboolean secrets, GError **error)
{
  if (row->type == KT_OPT_SWITCH)
    {
      if (g_str_equal (value, "true") || g_str_equal (value, "1"))
        add_word (env, variable, g_strdup_printf ("--%s", row->name));
      else if (g_str_equal (value, "false") || g_str_equal (value, "0"))
        g_ptr_array_add (env->off, g_strdup (row->name));
      else
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                       "%s: expected true or false (or 1 or 0), got '%s'", variable, value);
          return FALSE;
        }
      return TRUE;
    }
  if (row->type == KT_OPT_REPEAT)
    {
      g_auto(GStrv) lines = g_strsplit (value, "\n", -1);

      for (char **l = lines; *l != NULL; l++)
        {
          g_strchomp (*l);
          if (**l == '\0')
            continue;
          if (kt_option_holds_secret (row, *l) && !secrets)
            goto secret;
          add_word (env, variable, g_strdup_printf ("--%s=%s", row->name, *l));
        }
      return TRUE;
    }
  if (kt_option_holds_secret (row, value) && !secrets)
    goto secret;
  add_word (env, variable, g_strdup_printf ("--%s=%s", row->name, value));
  return TRUE;

secret:
  /* The value is not quoted: it holds the secret. */
  g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
               "%s: holds a secret (a password, or a secret property), which ktally takes "
               "from the environment only with --env-secrets: the environment shows in "
               "`podman inspect`, /proc/PID/environ and a pod's spec. Put it in a file "
               "(--db-password-file; a Kafka secret in the --config file) instead", variable);
  return FALSE;
}

static int
compare_names (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

gboolean
kt_config_env_read (const KtOption *const *tables, KtCommandBits command, gboolean secrets,
                    KtConfigEnv *out, GError **error)
{
  g_auto(GStrv) environ = g_get_environ ();
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);

  out->words = g_ptr_array_new_with_free_func (g_free);
  out->names = g_ptr_array_new_with_free_func (g_free);
  out->off = g_ptr_array_new_with_free_func (g_free);
  out->given = g_ptr_array_new_with_free_func (g_free);
  out->ignored = g_ptr_array_new_with_free_func (g_free);
  for (char **e = environ; *e != NULL; e++)
    if (g_str_has_prefix (*e, "KTALLY_") && strchr (*e, '=') != NULL)
      g_ptr_array_add (names, g_strndup (*e, strcspn (*e, "=")));
  /* In one order whatever the environment's: the same words, the same first
   * error. */
  g_ptr_array_sort (names, compare_names);
  for (guint i = 0; i < names->len; i++)
    {
      const char *variable = names->pdata[i];
      const char *value = g_environ_getenv (environ, variable);
      gboolean mine;
      const KtOption *row = row_of (tables, command, variable, &mine);

      if (row == NULL)
        {
          g_ptr_array_add (out->ignored, g_strdup (variable));
          continue;
        }
      /* Another command's setting; and an empty value is no value (compose
       * writes ${VAR} unset as ""). */
      if (!mine || value == NULL || *value == '\0')
        continue;
      if (!take (out, row, variable, value, secrets, error))
        return FALSE;
      g_ptr_array_add (out->given, g_strdup (variable));
    }
  return TRUE;
}

const char *
kt_config_env_gives (const KtConfigEnv *env, const char *flag)
{
  const char *found = NULL;
  gsize n = strlen (flag);

  for (guint i = 0; env->words != NULL && i < env->words->len; i++)
    {
      const char *w = env->words->pdata[i];

      if (strncmp (w, "--", 2) == 0 && strncmp (w + 2, flag, n) == 0
          && (w[2 + n] == '\0' || w[2 + n] == '='))
        found = env->names->pdata[i];
    }
  return found;
}

const char *
kt_config_env_word (const KtConfigEnv *env, const char *word)
{
  for (guint i = 0; env->words != NULL && i < env->words->len; i++)
    if (g_str_equal (env->words->pdata[i], word))
      return env->names->pdata[i];
  return NULL;
}
