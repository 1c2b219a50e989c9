/* fuzz-options.c - libFuzzer target for the URI and option parsers.
 *
 * The input is split on NUL bytes into command-line words for `ktally
 * run` (and `replay`), and parsed whole as a --db URI. Nothing may crash,
 * leak, or quote a mysql:// password back in an error message. */
#include <glib.h>
#include <string.h>
#include "cli.h"

int LLVMFuzzerTestOneInput (const guint8 *data, size_t size);

/* GOption prints --help and exits: not a finding, keep it out. */
static gboolean
asks_for_help (const char *word)
{
  if (g_str_has_prefix (word, "--"))
    return g_str_has_prefix (word, "--help");
  return word[0] == '-' && (strchr (word, 'h') != NULL || strchr (word, '?') != NULL);
}

/* "mysql://USER:PASSWORD@" as it stands first in @text, if it has a
 * password of 3 or more characters (shorter ones recur by chance). */
static char *
password_in (const char *text)
{
  const char *uri = strstr (text, "mysql://"), *colon, *at;

  if (uri == NULL)
    return NULL;
  colon = strchr (uri + 8, ':');
  at = strchr (uri + 8, '@');
  if (colon == NULL || at == NULL || colon > at || at - colon < 4)
    return NULL;
  return g_strndup (uri, (gsize) (at - uri + 1));
}

static void
check (const char *command, char **words, const char *all)
{
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) copy = g_strdupv (words);
  g_autofree char **argv = g_memdup2 (copy, sizeof (char *) * (g_strv_length (copy) + 1));
  g_autoptr(KtConfig) config = kt_config_parse (command, (int) g_strv_length (argv), argv,
                                                &error);
  g_autofree char *password = password_in (all);

  g_assert_true ((config == NULL) == (error != NULL));
  if (error != NULL && password != NULL)
    g_assert_null (strstr (error->message, password));
}

int
LLVMFuzzerTestOneInput (const guint8 *data, size_t size)
{
  g_autofree char *text = g_strndup ((const char *) data, size);  /* up to a NUL */
  g_autoptr(GPtrArray) words = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GError) error = NULL;
  KtDbConfig db;

  if (kt_db_uri_parse (text, &db, &error))
    kt_db_config_clear (&db);

  g_ptr_array_add (words, g_strdup ("run"));
  for (size_t at = 0; at < size && words->len < 64;)
    {
      const guint8 *nul = memchr (data + at, '\0', size - at);
      size_t end = nul != NULL ? (size_t) (nul - data) : size;
      char *word = g_strndup ((const char *) data + at, end - at);

      if (asks_for_help (word))
        {
          g_free (word);
          return 0;
        }
      g_ptr_array_add (words, word);
      at = end + 1;
    }
  g_ptr_array_add (words, NULL);
  check ("run", (char **) words->pdata, text);
  g_free (words->pdata[0]);
  words->pdata[0] = g_strdup ("replay");
  check ("replay", (char **) words->pdata, text);
  return 0;
}
