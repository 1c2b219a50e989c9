/* db-grants.c - the privileges ktally needs on its database, and which of
 * them SHOW GRANTS does not give (db.h). */
#include "db.h"

#include <string.h>

const char *const kt_db_grants[] = {
  "SELECT", "INSERT", "UPDATE", "DELETE", "CREATE", "ALTER", "DROP", "CREATE VIEW",
  "CREATE TEMPORARY TABLES", NULL
};

/* A grant's database pattern (LIKE: % and _, \ escapes) against @name. */
static gboolean
like (const char *pattern, const char *name)
{
  for (;; pattern++, name++)
    {
      if (*pattern == '%')
        {
          for (const char *n = name;; n++)
            {
              if (like (pattern + 1, n))
                return TRUE;
              if (*n == '\0')
                return FALSE;
            }
        }
      if (*pattern == '\\' && pattern[1] != '\0')
        pattern++;
      else if (*pattern == '_' && *name != '\0')
        continue;
      if (*pattern != *name)
        return FALSE;
      if (*pattern == '\0')
        return TRUE;
    }
}

/* `name` without its quotes (`` inside is one `); NULL if @text is not a
 * quoted name followed by @tail. */
static char *
unquote (const char *text, const char *tail)
{
  g_autoptr(GString) out = g_string_new (NULL);
  const char *p = text;

  if (*p++ != '`')
    return NULL;
  for (; *p != '\0'; p++)
    {
      if (*p == '`' && p[1] == '`')
        g_string_append_c (out, *p++);
      else if (*p == '`')
        break;
      else
        g_string_append_c (out, *p);
    }
  if (*p != '`' || !g_str_equal (p + 1, tail))
    return NULL;
  return g_string_free (g_steal_pointer (&out), FALSE);
}

char **
kt_db_grants_missing_in (const char *const *lines, const char *database)
{
  g_autoptr(GHashTable) held = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GPtrArray) missing = g_ptr_array_new ();

  for (const char *const *l = lines; *l != NULL; l++)
    {
      const char *on = strstr (*l, " ON "), *to;
      g_autofree char *privs = NULL, *object = NULL, *db = NULL;
      g_auto(GStrv) each = NULL;
      gboolean all;

      if (!g_str_has_prefix (*l, "GRANT ") || on == NULL
          || (to = strstr (on + 4, " TO ")) == NULL)
        continue;  /* a role granted, or not a grant */
      privs = g_strndup (*l + 6, (gsize) (on - *l - 6));
      object = g_strndup (on + 4, (gsize) (to - on - 4));
      /* Global, or on a database (a pattern); tables, columns, routines
       * do not make a database-wide privilege. */
      if (!g_str_equal (object, "*.*")
          && ((db = unquote (object, ".*")) == NULL || !like (db, database)))
        continue;
      all = g_str_has_prefix (privs, "ALL");
      each = g_strsplit (privs, ", ", -1);
      for (char **p = each; *p != NULL; p++)
        if (strchr (*p, '(') == NULL)
          g_hash_table_add (held, g_strdup (*p));
      if (all)
        g_hash_table_add (held, g_strdup ("ALL"));
    }
  for (const char *const *g = kt_db_grants; *g != NULL; g++)
    if (!g_hash_table_contains (held, "ALL") && !g_hash_table_contains (held, *g))
      g_ptr_array_add (missing, g_strdup (*g));
  /* The set's keys were copies: free them. */
  {
    GHashTableIter iter;
    gpointer key;

    g_hash_table_iter_init (&iter, held);
    while (g_hash_table_iter_next (&iter, &key, NULL))
      g_free (key);
  }
  g_ptr_array_add (missing, NULL);
  return (char **) g_ptr_array_free (g_steal_pointer (&missing), FALSE);
}
