/* fuzz-options.c - libFuzzer target for the URI and option parsers.
 *
 * The input is split on NUL bytes into command-line words for `ktally
 * run` (and `replay`), and parsed whole as a --db URI. Nothing may crash,
 * leak, or quote a mysql:// password or a secret -X value back in an
 * error message. */
#include <glib.h>
#include <string.h>
#include "cli.h"
#include "commands.h"
#include "kprops.h"

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

static char *parse_error (const char *command, char **words);

/* If words[@i] is a -X property (after "-X", "--kafka-property" or a
 * short cluster ending in X, or as "-Xk=v" or "--kafka-property=k=v")
 * whose key is a secret, its value; else NULL. */
static const char *
secret_value (char **words, guint i)
{
  const char *w = words[i], *prev = i > 0 ? words[i - 1] : "", *eq;
  g_autofree char *key = NULL;

  if (g_str_has_prefix (w, "--kafka-property="))
    w += strlen ("--kafka-property=");
  else if (g_str_has_prefix (w, "-X"))
    w += 2;
  else if (!(g_str_equal (prev, "--kafka-property")
             || (prev[0] == '-' && prev[1] != '-' && g_str_has_suffix (prev, "X"))))
    return NULL;
  eq = strchr (w, '=');
  if (eq == NULL)
    return NULL;
  key = g_strndup (w, (gsize) (eq - w));
  return kt_kprops_is_secret (key) ? eq + 1 : NULL;
}

/* No secret -X value, in any spelling, is quoted back in @message: where
 * it shows, parsing again with that value replaced must not show it too
 * (then it is the message's own text, or another word's). */
static void
check_kafka_secrets (const char *command, char **words, const char *message)
{
  for (guint i = 0; words[i] != NULL; i++)
    {
      const char *value = secret_value (words, i);
      g_auto(GStrv) other = NULL;
      g_autofree char *again = NULL;

      if (value == NULL || strlen (value) < 4 || strstr (message, value) == NULL)
        continue;
      other = g_strdupv (words);
      memset (other[i] + (value - words[i]), '\x7f', strlen (value));
      again = parse_error (command, other);
      g_assert_true (again != NULL && strstr (again, value) != NULL);
    }
}

/* The message of parsing @words, or NULL if they parse. */
static char *
parse_error (const char *command, char **words)
{
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) copy = g_strdupv (words);
  g_autofree char **argv = g_memdup2 (copy, sizeof (char *) * (g_strv_length (copy) + 1));
  g_autoptr(KtConfig) config = kt_config_parse (command, (int) g_strv_length (argv), argv,
                                                &error);

  return config == NULL ? g_strdup (error->message) : NULL;
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
  if (error != NULL)
    check_kafka_secrets (command, words, error->message);
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
  /* The commands that manage jobs (#16) quote --to and --job back. */
  for (const char *const *c = (const char *const[]) { "reset", "forget", "jobs", NULL };
       *c != NULL; c++)
    {
      g_free (words->pdata[0]);
      words->pdata[0] = g_strdup (*c);
      check (*c, (char **) words->pdata, text);
    }
  return 0;
}
