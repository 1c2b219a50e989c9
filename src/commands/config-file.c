/* config-file.c - a configuration file in front of the command line.
 *
 * GKeyFile reads the file; what it cannot tell (where a key is) is found in
 * the text, so that a typo is reported with its line. The result is plain
 * option words, so the CLI validates a file's values exactly like flags. */
#include "config-file.h"

#include <string.h>
#include "error.h"
#include "db.h"
#include "kprops.h"

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

/* [mysql] host as the URI has it: a list (h1, h2:3307, [::1]) without
 * its spaces, and @port (may be NULL) given to each server that names
 * none. New string. */
static char *
compose_hosts (const char *host, const char *port)
{
  g_auto(GStrv) each = g_strsplit (host, ",", -1);
  g_autoptr(GString) out = g_string_new (NULL);

  for (guint i = 0; each[i] != NULL; i++)
    {
      const char *h = g_strstrip (each[i]);
      const char *close = h[0] == '[' ? strchr (h, ']') : NULL;
      gboolean has_port = h[0] == '[' ? close != NULL && close[1] == ':' : strchr (h, ':') != NULL;

      g_string_append_printf (out, "%s%s%s%s", i > 0 ? "," : "", h,
                              port != NULL && !has_port ? ":" : "",
                              port != NULL && !has_port ? port : "");
    }
  return g_string_free (g_steal_pointer (&out), FALSE);
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
  if (host != NULL)
    {
      g_autofree char *hosts = compose_hosts (host, port);
      return g_strdup_printf ("mysql://%s@%s/%s%s", user_e, hosts,
                              database != NULL ? database : "", query->str);
    }
  return g_strdup_printf ("mysql://%s@%s%s/%s%s", user_e, port != NULL ? ":" : "",
                          port != NULL ? port : "", database != NULL ? database : "",
                          query->str);
}

/* A key given twice (GKeyFile would keep the last one in silence, so an
 * edit below an old line would be lost, or the old line win after a
 * reorder): an error naming both lines. Also across two [same] headers. */
static gboolean
check_duplicates (const char *path, const char *text, GError **error)
{
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autofree char *section = g_strdup ("");

  for (guint i = 0; lines[i] != NULL; i++)
    {
      const char *l = lines[i];
      const char *eq;
      char *id;
      gpointer first;

      while (*l == ' ' || *l == '\t')
        l++;
      if (*l == '\0' || *l == '#')
        continue;
      if (*l == '[')
        {
          g_free (section);
          section = g_strndup (l + 1, strcspn (l + 1, "]"));
          continue;
        }
      eq = strchr (l, '=');
      if (eq == NULL)
        continue;  /* GKeyFile has refused the file already */
      id = g_strdup_printf ("%s\n%.*s", section, (int) (eq - l), l);
      g_strchomp (id);
      if (g_hash_table_lookup_extended (seen, id, NULL, &first))
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                       "--config: %s:%u: [%s] %s given twice (first on line %u): "
                       "delete one", path, i + 1, section, strchr (id, '\n') + 1,
                       GPOINTER_TO_UINT (first));
          g_free (id);
          return FALSE;
        }
      g_hash_table_insert (seen, id, GUINT_TO_POINTER (i + 1));
    }
  return TRUE;
}

/* @value with every ${NAME} replaced by the environment's NAME, and $${
 * by a literal ${ (a pattern may need one). NULL with @error (naming
 * nothing yet) when a name is unset or malformed. */
static char *
interpolate (const char *value, GError **error)
{
  g_autoptr(GString) out = g_string_new (NULL);
  const char *p = value;

  while (*p != '\0')
    {
      const char *name, *close, *env;
      g_autofree char *key = NULL;

      if (g_str_has_prefix (p, "$${"))
        {
          g_string_append (out, "${");
          p += 3;
          continue;
        }
      if (!g_str_has_prefix (p, "${"))
        {
          g_string_append_c (out, *p++);
          continue;
        }
      name = p + 2;
      close = strchr (name, '}');
      key = close != NULL ? g_strndup (name, (gsize) (close - name)) : NULL;
      if (key == NULL || (!g_ascii_isalpha (*key) && *key != '_')
          || key[strspn (key, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                               "0123456789_")] != '\0')
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                       "'%.*s' is not ${NAME} (letters, digits, _; write $${ for a "
                       "literal ${)", close != NULL ? (int) (close - p + 1) : (int) strlen (p), p);
          return NULL;
        }
      env = g_getenv (key);
      if (env == NULL)
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                       "${%s}: %s is not set in the environment", key, key);
          return NULL;
        }
      g_string_append (out, env);
      p = close + 1;
    }
  return g_string_free (g_steal_pointer (&out), FALSE);
}

/* Every value of @file with its ${NAME}s replaced (set back, so that the
 * readers below see the result, escapes and all). */
static gboolean
interpolate_all (GKeyFile *file, const char *path, const char *text, GError **error)
{
  g_auto(GStrv) groups = g_key_file_get_groups (file, NULL);

  for (char **g = groups; *g != NULL; g++)
    {
      g_auto(GStrv) names = g_key_file_get_keys (file, *g, NULL, NULL);

      for (char **k = names; names != NULL && *k != NULL; k++)
        {
          g_autofree char *value = g_key_file_get_string (file, *g, *k, NULL);
          g_autofree char *done = NULL;
          g_autoptr(GError) local = NULL;

          if (value == NULL || strchr (value, '$') == NULL)
            continue;
          done = interpolate (value, &local);
          if (done == NULL)
            {
              g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "--config: %s:%u: [%s] %s: %s",
                           path, line_of (text, *g, *k), *g, *k, local->message);
              return FALSE;
            }
          g_key_file_set_string (file, *g, *k, done);
        }
    }
  return TRUE;
}

/* Adds the option words for one value, remembering its line. */
static void
add_at (GPtrArray *words, GArray *lines, guint line, char *word)
{
  g_ptr_array_add (words, word);
  if (lines != NULL)
    g_array_append_val (lines, line);
}

/* A config file being turned into option words. */
typedef struct
{
  const char *path;
  const char *text;
  GKeyFile   *file;
  const KtOption *const *tables;
  KtCommandBits command;
  GPtrArray  *words;
  GArray     *lines;
} Reading;

/* A key of [kafka] that is no option of ours: a librdkafka property,
 * judged like -X (kprops.c), here already so that the error names the
 * line. */
static gboolean
kafka_property_words (Reading *r, const char *key, const char *value, guint line,
                      GError **error)
{
  g_autoptr(GError) local = NULL;

  if (!kt_kprops_check_pair (key, value, &local))
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "--config: %s:%u: [kafka] %s",
                   r->path, line, local->message);
      return FALSE;
    }
  add_at (r->words, r->lines, line, g_strdup ("-X"));
  add_at (r->words, r->lines, line, g_strdup_printf ("%s=%s", key, value));
  return TRUE;
}

/* The option words of "[@group] @key". */
static gboolean
key_words (Reading *r, const char *group, const char *key, GError **error)
{
  const KtOption *known = kt_option_lookup_key (r->tables, G_MAXUINT32, group, key);
  g_autofree char *value = g_key_file_get_string (r->file, group, key, NULL);
  guint line = line_of (r->text, group, key);
  g_autoptr(GError) local = NULL;
  gboolean on;

  /* A librdkafka property, for the commands that reach Kafka (the
   * others, init-db, take the file as it is). */
  if (known == NULL && g_str_equal (group, "kafka"))
    return kt_option_lookup (r->tables, r->command, "kafka-property") == NULL
           || kafka_property_words (r, key, value != NULL ? value : "", line, error);
  if (known == NULL)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "--config: %s:%u: unknown key '%s' in [%s]", r->path, line, key, group);
      return FALSE;
    }
  if ((known->commands & r->command) == 0 || g_str_equal (group, "mysql"))
    return TRUE;  /* another command's, or part of the URI (db_words) */
  if (known->type != KT_OPT_SWITCH)
    {
      add_at (r->words, r->lines, line,
              g_strdup_printf ("--%s=%s", key, value != NULL ? value : ""));
      return TRUE;
    }
  on = g_key_file_get_boolean (r->file, group, key, &local);
  if (local != NULL)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "--config: %s:%u: %s: expected true or false", r->path, line, key);
      return FALSE;
    }
  if (on)
    add_at (r->words, r->lines, line, g_strdup_printf ("--%s", key));
  return TRUE;
}

/* The keys of [mysql] that are parts of --db: uri says all of them at
 * once. password-file and defaults-file are options of their own. */
static const char *const uri_parts[] = {
  "host", "port", "socket", "user", "database", "ssl-mode", "ssl-ca", "ssl-cert", "ssl-key", NULL
};

/* [mysql] uri with any of uri_parts: one of the two would be dropped in
 * silence (TLS settings above all: ssl-mode = verify-identity beside a
 * uri was ignored, and the connection went unverified). Which one the user
 * meant cannot be told, so the file is refused, naming the keys. */
static gboolean
check_uri_alone (Reading *r, GError **error)
{
  g_autoptr(GString) keys = g_string_new (NULL);
  g_autoptr(GString) lines = g_string_new (NULL);
  guint uri_line = line_of (r->text, "mysql", "uri");

  g_auto(GStrv) in_order = NULL;

  if (!g_key_file_has_key (r->file, "mysql", "uri", NULL))
    return TRUE;
  in_order = g_key_file_get_keys (r->file, "mysql", NULL, NULL);
  for (char **k = in_order; *k != NULL; k++)
    if (g_strv_contains (uri_parts, *k))
      {
        g_string_append_printf (keys, "%s%s", keys->len > 0 ? ", " : "", *k);
        g_string_append_printf (lines, "%s%u", lines->len > 0 ? ", " : "",
                                line_of (r->text, "mysql", *k));
      }
  if (keys->len == 0)
    return TRUE;
  g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
               "--config: %s:%u: [mysql] uri is the whole database, and %s (line%s %s) "
               "would be ignored beside it: give the uri alone (TLS in its query: "
               "?ssl-mode=...&ssl-ca=...) or the keys without it", r->path, uri_line,
               keys->str, strchr (lines->str, ',') != NULL ? "s" : "", lines->str);
  return FALSE;
}

/* --db is made of the whole [mysql] section: an error in it names the
 * section's line (or uri's); then its files. */
static gboolean
db_words (Reading *r, GError **error)
{
  g_autofree char *uri = g_key_file_get_string (r->file, "mysql", "uri", NULL);
  gboolean alone = check_uri_alone (r, error);

  /* Refused, the uri still gives its words, so that a check reporting
   * every error does not add "--db is required" to this one. */
  if (uri != NULL)
    add_at (r->words, r->lines, line_of (r->text, "mysql", "uri"),
            g_strdup_printf ("--db=%s", uri));
  else if ((uri = compose_uri (r->file)) != NULL)
    add_at (r->words, r->lines, line_of (r->text, "mysql", NULL),
            g_strdup_printf ("--db=%s", uri));
  for (const char *const *k = (const char *const[]) { "password-file", "defaults-file", NULL };
       *k != NULL; k++)
    {
      g_autofree char *v = g_key_file_get_string (r->file, "mysql", *k, NULL);
      if (v != NULL)
        add_at (r->words, r->lines, line_of (r->text, "mysql", *k),
                g_strdup_printf ("--db-%s=%s", *k, v));
    }
  return alone;
}

gboolean
kt_config_file_words (const char *path, const KtOption *const *tables,
                      KtCommandBits command, GPtrArray *words, GArray *lines, GPtrArray *every,
                      GError **error)
{
  g_autoptr(GKeyFile) file = g_key_file_new ();
  g_autoptr(GError) local = NULL;
  g_autofree char *text = NULL;
  g_auto(GStrv) groups = NULL;
  g_auto(GStrv) sections = kt_option_sections (tables);
  Reading r = { path, NULL, file, tables, command, words, lines };

  if (!g_file_get_contents (path, &text, NULL, &local)
      || !g_key_file_load_from_data (file, text, (gsize) -1, G_KEY_FILE_NONE, &local))
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "--config: %s: %s", path, local->message);
      return FALSE;
    }
  if (!check_duplicates (path, text, error) || !interpolate_all (file, path, text, error))
    return FALSE;
  r.text = text;

  groups = g_key_file_get_groups (file, NULL);
  for (char **g = groups; *g != NULL; g++)
    {
      g_auto(GStrv) names = NULL;

      if (!g_strv_contains ((const char *const *) sections, *g))
        {
          g_autofree char *known = g_strjoinv (", ", sections);
          GError *bad = g_error_new (KT_ERROR, KT_ERROR_USAGE,
                                     "--config: %s:%u: unknown section [%s] (known: %s)",
                                     path, line_of (text, *g, NULL), *g, known);

          if (every == NULL)
            {
              g_propagate_error (error, bad);
              return FALSE;
            }
          g_ptr_array_add (every, bad);
          continue;
        }
      names = g_key_file_get_keys (file, *g, NULL, NULL);
      for (char **k = names; *k != NULL; k++)
        {
          GError *bad = NULL;

          if (key_words (&r, *g, *k, &bad))
            continue;
          if (every == NULL)
            {
              g_propagate_error (error, bad);
              return FALSE;
            }
          g_ptr_array_add (every, bad);
        }
    }
  if (!db_words (&r, &local))
    {
      if (every == NULL)
        {
          g_propagate_error (error, g_steal_pointer (&local));
          return FALSE;
        }
      g_ptr_array_add (every, g_steal_pointer (&local));
    }
  return TRUE;
}

/* The option an error message is about: the first "--flag" in it (our
 * messages start with it; GOption's end with "for --flag"), or NULL. */
static char *
flag_of (const char *message)
{
  for (const char *p = message; (p = strstr (p, "--")) != NULL; p += 2)
    if (p == message || p[-1] == ' ' || p[-1] == '\'')
      {
        gsize n = strspn (p + 2, "abcdefghijklmnopqrstuvwxyz-");
        if (n > 0)
          return g_strndup (p + 2, n);
      }
  return NULL;
}

/* Whether @word (a command-line word) gives option @flag, whose short
 * name is @letter (0: none): --flag, --flag=..., or -x in a cluster. */
static gboolean
gives (const char *word, const char *flag, char letter)
{
  gsize n = strlen (flag);

  if (g_str_has_prefix (word, "--"))
    return strncmp (word + 2, flag, n) == 0 && (word[2 + n] == '\0' || word[2 + n] == '=');
  return letter != 0 && word[0] == '-' && strchr (word + 1, letter) != NULL;
}

/* The value @message quotes ('...' or GOption's “...”), or NULL. */
static char *
quoted_of (const char *message)
{
  static const char *const quotes[][2] = { { "\xe2\x80\x9c", "\xe2\x80\x9d" }, { "'", "'" } };

  for (gsize i = 0; i < G_N_ELEMENTS (quotes); i++)
    {
      const char *open = strstr (message, quotes[i][0]), *close;

      if (open == NULL)
        continue;
      open += strlen (quotes[i][0]);
      close = g_strrstr (open, quotes[i][1]);
      if (close != NULL)
        return g_strndup (open, (gsize) (close - open));
    }
  return NULL;
}

char *
kt_config_file_blame (const char *path, const char *message, GPtrArray *words,
                      GArray *lines, const KtConfigEnv *env, char **given,
                      const KtOption *const *tables, KtCommandBits command)
{
  g_autofree char *flag = flag_of (message);
  g_autofree char *quoted = quoted_of (message);
  g_autofree char *word = NULL;
  const KtOption *row;
  const char *variable;
  char letter = 0;
  guint line = 0;

  if (flag == NULL)
    return NULL;
  row = kt_option_lookup (tables, command, flag);
  if (row != NULL)
    letter = row->letter;
  /* The value the message quotes, where it came from: the file's (GOption
   * stops at the first bad value, the file's too when the command line
   * gives another), then the environment's. Else the command line's, when
   * it gives the flag (it wins, so the value in error is its own), else the
   * environment's, else the file's last word for the flag. */
  word = g_strdup_printf ("--%s=%s", flag, quoted != NULL ? quoted : "");
  for (guint i = 0; quoted != NULL && i < words->len; i++)
    if (g_str_equal (words->pdata[i], word))
      line = g_array_index (lines, guint, i);
  if (line > 0)
    return g_strdup_printf ("--config: %s:%u", path, line);
  if (quoted != NULL && (variable = kt_config_env_word (env, word)) != NULL)
    return g_strdup (variable);
  for (char **w = given; *w != NULL; w++)
    if (gives (*w, flag, letter))
      return NULL;
  if ((variable = kt_config_env_gives (env, flag)) != NULL)
    return g_strdup (variable);
  for (guint i = 0; i < words->len; i++)
    if (gives (words->pdata[i], flag, 0))
      line = g_array_index (lines, guint, i);
  return line > 0 ? g_strdup_printf ("--config: %s:%u", path, line) : NULL;
}

gboolean
kt_config_file_check_db (const char *path, GPtrArray *words, GArray *lines, char **given,
                         const KtDbConfig *used, GError **error)
{
  static const char *const modes[] = { "preferred", "disabled", "required", "verify-ca",
                                       "verify-identity" };
  const char *file_uri = NULL;
  guint line = 0;
  gboolean on_command_line = FALSE;
  KtDbConfig file = { 0 };
  g_autoptr(GString) asks = g_string_new (NULL);

  for (char **w = given; w != NULL && *w != NULL; w++)
    on_command_line |= gives (*w, "db", 0);
  for (guint i = 0; i < words->len; i++)
    if (g_str_has_prefix (words->pdata[i], "--db="))
      {
        file_uri = (const char *) words->pdata[i] + strlen ("--db=");
        line = g_array_index (lines, guint, i);
      }
  /* The command line's --db says its own TLS: it was asked for. */
  if (!on_command_line || file_uri == NULL || used->tls_given
      || !kt_db_uri_parse (file_uri, &file, NULL))
    return TRUE;
  if (file.ssl_mode >= KT_SSL_REQUIRED)
    g_string_append_printf (asks, "ssl-mode %s", modes[file.ssl_mode]);
  if (file.ssl_ca != NULL || file.ssl_cert != NULL || file.ssl_key != NULL)
    g_string_append_printf (asks, "%sssl-%s", asks->len > 0 ? ", " : "",
                            file.ssl_ca != NULL ? "ca" : file.ssl_cert != NULL ? "cert" : "key");
  kt_db_config_clear (&file);
  if (asks->len == 0)
    return TRUE;
  g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
               "--db: given on the command line, it replaces the database of %s:%u, and "
               "with it the file's TLS (%s), which it does not say: name ssl-mode in --db's "
               "query (?ssl-mode=...), or leave the database to the file", path, line,
               asks->str);
  return FALSE;
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
