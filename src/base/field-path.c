/* field-path.c - fields named by their path (field-path.h). */
#include "field-path.h"

#include <string.h>
#include "error.h"

static const char WHAT[] = "a path is names separated by dots (service.name), a backslash "
                           "making the next character part of a name (log\\.level)";

GStrv
kt_field_path_parse (const char *flag, const char *text, GError **error)
{
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GString) name = g_string_new (NULL);
  const char *why = NULL;

  for (const char *p = text;; p++)
    {
      if (*p == '\\')
        {
          if (p[1] == '\0')
            {
              why = "it ends with a lone backslash";
              break;
            }
          g_string_append_c (name, *++p);
          continue;
        }
      if (*p != '.' && *p != '\0')
        {
          g_string_append_c (name, *p);
          continue;
        }
      if (name->len == 0)
        {
          why = *text == '\0' ? "it is empty" : "a name in it is empty";
          break;
        }
      if (name->len > KT_FIELD_NAME_BYTES)
        {
          why = "a name in it is longer than 255 bytes";
          break;
        }
      g_ptr_array_add (names, g_strndup (name->str, name->len));
      g_string_truncate (name, 0);
      if (*p == '\0')
        break;
    }
  if (why == NULL && names->len > KT_FIELD_PATH_NAMES)
    why = "it has more than 16 names";
  if (why == NULL && strlen (text) > KT_FIELD_PATH_BYTES)
    why = "it is longer than 600 bytes";
  if (why != NULL)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "%s: '%s' is no field path: %s (%s)", flag,
                   text, why, WHAT);
      return NULL;
    }
  g_ptr_array_add (names, NULL);
  return (GStrv) g_ptr_array_steal (names, NULL);
}

char *
kt_field_path_normal (const char *text)
{
  g_auto(GStrv) names = kt_field_path_parse ("", text, NULL);
  GString *out;

  if (names == NULL)
    return g_strdup (text);
  out = g_string_new (NULL);
  for (guint i = 0; names[i] != NULL; i++)
    {
      if (i > 0)
        g_string_append_c (out, '.');
      for (const char *c = names[i]; *c != '\0'; c++)
        {
          if (*c == '.' || *c == '\\')
            g_string_append_c (out, '\\');
          g_string_append_c (out, *c);
        }
    }
  return g_string_free (out, FALSE);
}

char *
kt_field_path_key (const char *text)
{
  g_auto(GStrv) names = kt_field_path_parse ("", text, NULL);

  return names != NULL ? g_strjoinv (".", names) : NULL;
}

char *
kt_field_column (const char *text)
{
  g_autofree char *key = kt_field_path_key (text);
  GString *out;

  if (key == NULL)
    return g_strdup (text);
  out = g_string_new (g_ascii_isdigit (*key) ? "_" : "");
  for (const char *c = key; *c != '\0'; c++)
    g_string_append_c (out, g_ascii_isalnum (*c) || *c == '_' ? *c : '_');
  return g_string_free (out, FALSE);
}
