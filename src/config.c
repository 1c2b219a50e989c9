/* config.c - a configuration file in front of the command line.
 *
 * GKeyFile reads the file; what it cannot tell (where a key is) is found in
 * the text, so that a typo is reported with its line. The result is plain
 * option words, so the CLI validates a file's values exactly like flags. */
#include "config.h"

#include <string.h>
#include "error.h"
#include "kprops.h"

/* Keys each section may hold, and which commands take them. */
typedef struct
{
  const char *section;
  const char *key;
  const char *commands;  /* space-separated */
} Key;

#define RUN_REPLAY_STATUS "run replay status"
/* The commands that manage jobs take the cluster and the job, not the
 * topic: a reset or forget acts on every topic of the job unless told. */
#define MANAGE "jobs reset forget"

static const Key keys[] = {
  { "kafka", "brokers", RUN_REPLAY_STATUS " " MANAGE },
  { "kafka", "topic", RUN_REPLAY_STATUS },
  { "kafka", "group", "run status" },
  { "kafka", "partitions", "run" },
  { "mysql", "uri", RUN_REPLAY_STATUS },
  { "mysql", "host", RUN_REPLAY_STATUS },
  { "mysql", "port", RUN_REPLAY_STATUS },
  { "mysql", "socket", RUN_REPLAY_STATUS },
  { "mysql", "user", RUN_REPLAY_STATUS },
  { "mysql", "database", RUN_REPLAY_STATUS },
  { "mysql", "ssl-mode", RUN_REPLAY_STATUS },
  { "mysql", "ssl-ca", RUN_REPLAY_STATUS },
  { "mysql", "ssl-cert", RUN_REPLAY_STATUS },
  { "mysql", "ssl-key", RUN_REPLAY_STATUS },
  { "mysql", "password-file", RUN_REPLAY_STATUS },
  { "mysql", "defaults-file", RUN_REPLAY_STATUS },
  { "batch", "job", RUN_REPLAY_STATUS " reset forget" },
  { "batch", "mode", "run" },
  { "batch", "kind", "run" },
  { "batch", "workers", "run" },
  { "batch", "interval", "run" },
  { "batch", "max-per-partition", "run replay" },
  { "batch", "max-batch-bytes", "run" },
  { "batch", "start", "run" },
  { "batch", "on-data-loss", "run" },
  { "batch", "offsets", "run" },
  { "batch", "audit-keep", "run" },
  { "http", "http", "run" },
  { "batch", "startup-timeout", RUN_REPLAY_STATUS " " MANAGE },
  { "batch", "exit-when-idle", "run" },
  { "batch", "share-table", "run" },
  { "batch", "table", "run" },
  { "parse", "pattern", "run replay" },
  { "parse", "time-format", "run replay" },
  { "parse", "levels", "run replay" },
  { "parse", "bucket", "run replay" },
  { "parse", "by", "run replay" },
  { "parse", "sum", "run replay" },
  { "parse", "max-keys", "run replay" },
  { "log", "log-format", "run replay status init-db audit " MANAGE },
};

static const char *const sections[] = { "kafka", "mysql", "batch", "parse", "http", "log",
                                        NULL };

/* The 1-based line of @key in [@section] of @text, or 0. */
static guint
line_of (const char *text, const char *section, const char *key)
{
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
  gboolean inside = FALSE;

  for (guint i = 0; lines[i] != NULL; i++)
    {
      const char *l = lines[i];
      gsize n;

      while (*l == ' ' || *l == '\t')
        l++;
      if (*l == '[')
        {
          inside = strncmp (l + 1, section, strlen (section)) == 0
                   && l[1 + strlen (section)] == ']';
          if (key == NULL && inside)
            return i + 1;
          continue;
        }
      n = strlen (key != NULL ? key : "");
      if (inside && key != NULL && strncmp (l, key, n) == 0
          && (l[n] == '=' || l[n] == ' ' || l[n] == '\t'))
        return i + 1;
    }
  return 0;
}

static const Key *
find_key (const char *section, const char *key)
{
  for (gsize i = 0; i < G_N_ELEMENTS (keys); i++)
    if (g_str_equal (keys[i].section, section) && g_str_equal (keys[i].key, key))
      return &keys[i];
  return NULL;
}

static gboolean
takes (const Key *k, const char *command)
{
  g_auto(GStrv) commands = g_strsplit (k->commands, " ", -1);
  return g_strv_contains ((const char *const *) commands, command);
}

static void
add (GPtrArray *words, const char *flag, const char *value)
{
  g_ptr_array_add (words, g_strdup_printf ("--%s=%s", flag, value));
}

/* [mysql] host/port/... into a URI, unless [mysql] uri is there. The user
 * and database are escaped as URI parts; the CLI checks them again. */
static char *
compose_uri (GKeyFile *file)
{
  g_autofree char *host = g_key_file_get_string (file, "mysql", "host", NULL);
  g_autofree char *port = g_key_file_get_string (file, "mysql", "port", NULL);
  g_autofree char *user = g_key_file_get_string (file, "mysql", "user", NULL);
  g_autofree char *database = g_key_file_get_string (file, "mysql", "database", NULL);
  g_autoptr(GString) query = g_string_new (NULL);
  static const char *const params[] = { "socket", "ssl-mode", "ssl-ca", "ssl-cert", "ssl-key" };
  g_autofree char *user_e = NULL;

  if (host == NULL && user == NULL && database == NULL
      && !g_key_file_has_key (file, "mysql", "socket", NULL))
    return NULL;
  for (gsize i = 0; i < G_N_ELEMENTS (params); i++)
    {
      g_autofree char *v = g_key_file_get_string (file, "mysql", params[i], NULL);
      g_autofree char *e = NULL;
      if (v == NULL)
        continue;
      e = g_uri_escape_string (v, "/", FALSE);
      g_string_append_printf (query, "%s%s=%s", query->len ? "&" : "?", params[i], e);
    }
  user_e = g_uri_escape_string (user != NULL ? user : "", NULL, FALSE);
  return g_strdup_printf ("mysql://%s@%s%s%s/%s%s", user_e, host != NULL ? host : "",
                          port != NULL ? ":" : "", port != NULL ? port : "",
                          database != NULL ? database : "", query->str);
}

gboolean
kt_config_file_words (const char *path, const char *command, GPtrArray *words,
                      GError **error)
{
  g_autoptr(GKeyFile) file = g_key_file_new ();
  g_autoptr(GError) local = NULL;
  g_autofree char *text = NULL;
  g_auto(GStrv) groups = NULL;
  g_autofree char *uri = NULL;

  if (!g_file_get_contents (path, &text, NULL, &local)
      || !g_key_file_load_from_data (file, text, (gsize) -1, G_KEY_FILE_NONE, &local))
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "--config: %s: %s", path, local->message);
      return FALSE;
    }

  groups = g_key_file_get_groups (file, NULL);
  for (char **g = groups; *g != NULL; g++)
    {
      g_auto(GStrv) names = NULL;

      if (!g_strv_contains (sections, *g))
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                       "--config: %s:%u: unknown section [%s] (known: kafka, mysql, "
                       "batch, parse, http, log)", path, line_of (text, *g, NULL), *g);
          return FALSE;
        }
      names = g_key_file_get_keys (file, *g, NULL, NULL);
      for (char **k = names; *k != NULL; k++)
        {
          const Key *known = find_key (*g, *k);
          g_autofree char *value = g_key_file_get_string (file, *g, *k, NULL);

          if (known == NULL && g_str_equal (*g, "kafka"))
            {
              /* A librdkafka property: judged like -X (kprops.c), here
               * already so that the error names the line. */
              if (!kt_kprops_check_pair (*k, value != NULL ? value : "", &local))
                {
                  g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "--config: %s:%u: [kafka] %s",
                               path, line_of (text, *g, *k), local->message);
                  return FALSE;
                }
              g_ptr_array_add (words, g_strdup ("-X"));
              g_ptr_array_add (words, g_strdup_printf ("%s=%s", *k, value != NULL ? value : ""));
              continue;
            }
          if (known == NULL)
            {
              g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                           "--config: %s:%u: unknown key '%s' in [%s]", path,
                           line_of (text, *g, *k), *k, *g);
              return FALSE;
            }
          if (!takes (known, command) || g_str_equal (*g, "mysql"))
            continue;  /* another command's, or part of the URI (below) */
          if (g_str_equal (*k, "exit-when-idle") || g_str_equal (*k, "share-table"))
            {
              /* A switch: true gives the flag, false leaves it off. */
              gboolean on = g_key_file_get_boolean (file, *g, *k, &local);
              if (local != NULL)
                {
                  g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                               "--config: %s:%u: %s: expected true or false",
                               path, line_of (text, *g, *k), *k);
                  return FALSE;
                }
              if (on)
                g_ptr_array_add (words, g_strdup_printf ("--%s", *k));
              continue;
            }
          add (words, *k, value != NULL ? value : "");
        }
    }

  uri = g_key_file_get_string (file, "mysql", "uri", NULL);
  if (uri == NULL)
    uri = compose_uri (file);
  if (uri != NULL)
    add (words, "db", uri);
  for (const char *const *k = (const char *const[]) { "password-file", "defaults-file", NULL };
       *k != NULL; k++)
    {
      g_autofree char *v = g_key_file_get_string (file, "mysql", *k, NULL);
      if (v != NULL)
        {
          g_autofree char *flag = g_strdup_printf ("db-%s", *k);
          add (words, flag, v);
        }
    }
  return TRUE;
}

const char *
kt_config_file_take (GPtrArray *argv)
{
  const char *path = NULL;

  for (guint i = 1; i + 1 < argv->len;)
    {
      const char *a = argv->pdata[i];

      if (g_str_equal (a, "--config") && argv->pdata[i + 1] != NULL)
        {
          path = argv->pdata[i + 1];
          g_ptr_array_remove_range (argv, i, 2);
        }
      else if (g_str_has_prefix (a, "--config="))
        {
          path = a + strlen ("--config=");
          g_ptr_array_remove_index (argv, i);
        }
      else
        i++;
    }
  return path;
}
