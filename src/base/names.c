/* names.c - the names ktally gives MySQL objects (names.h). */
#include "names.h"

#include <string.h>
#include "error.h"

gboolean
kt_is_name_char (gunichar c, const char *ascii)
{
  /* Beyond ASCII, letters, digits and combining marks only (no space,
   * control or invisible character). */
  if (c < 0x80)
    return g_ascii_isalnum (c) || strchr (ascii, (int) c) != NULL;
  return c <= 0xFFFF && (g_unichar_isalnum (c) || g_unichar_ismark (c));
}

gsize
kt_name_file_bytes (const char *name)
{
  gsize bytes = 0;

  for (const char *p = name; *p != '\0'; p = g_utf8_next_char (p))
    bytes += g_ascii_isalnum (*p) || *p == '_' ? 1 : 5;
  return bytes;
}

gboolean
kt_is_identifier (const char *name)
{
  glong n = 0;

  if (name == NULL || *name == '\0' || !g_utf8_validate (name, -1, NULL))
    return FALSE;
  for (const char *p = name; *p != '\0'; p = g_utf8_next_char (p), n++)
    if (!kt_is_name_char (g_utf8_get_char (p), "_"))
      return FALSE;
  return n <= 64 && kt_name_file_bytes (name) <= KT_NAME_FILE_BYTES;
}

gboolean
kt_table_name_check (const char *flag, const char *name, const char *suffix, GError **error)
{
  g_autofree char *whole = g_strconcat (name, suffix, NULL);

  if (kt_is_identifier (name) && kt_is_identifier (whole))
    return TRUE;
  if (!kt_is_identifier (name))
    g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "%s: '%s' is not a table name (%s)", flag,
                 name, KT_TABLE_NAME_RULE);
  else
    g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "%s: '%s' is too long here, where ktally "
                 "also writes %s: a table name is %s", flag, name, whole, KT_TABLE_NAME_RULE);
  return FALSE;
}
