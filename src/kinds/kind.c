/* kind.c - the job kinds, by --kind and --mode (kind.h). */
#include "kind.h"

#include "error.h"

static const KtKind *const kinds[] = {
  &kt_kind_count,             /* the default */
  &kt_kind_count_idempotent,
  &kt_kind_ledger,
};

const KtKind *
kt_kind_lookup (const char *kind, const char *mode, GError **error)
{
  g_autoptr(GString) modes = g_string_new (NULL);
  g_autoptr(GString) names = g_string_new (NULL);

  for (gsize i = 0; i < G_N_ELEMENTS (kinds); i++)
    {
      if (g_str_equal (kinds[i]->kind, kind) && g_str_equal (kinds[i]->mode, mode))
        return kinds[i];
      if (g_str_equal (kinds[i]->kind, kind))
        g_string_append_printf (modes, "%s%s", modes->len ? " or " : "", kinds[i]->mode);
      /* Each kind once: its modes are listed next to each other. */
      if (i == 0 || !g_str_equal (kinds[i - 1]->kind, kinds[i]->kind))
        g_string_append_printf (names, "%s%s", names->len ? "|" : "", kinds[i]->kind);
    }
  if (modes->len > 0)
    g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                 "--kind %s runs in --mode %s only (not %s)", kind, modes->str, mode);
  else
    g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "--kind: expected %s, got '%s'",
                 names->str, kind);
  return NULL;
}

char *
kt_kind_rows_table (const KtKind *kind, const char *output)
{
  return kind->rows_suffix != NULL ? g_strconcat (output, kind->rows_suffix, NULL) : NULL;
}

const KtKind *
kt_kind_of_table (const char *table)
{
  for (gsize i = 0; i < G_N_ELEMENTS (kinds); i++)
    if (kinds[i]->table != NULL && g_str_equal (kinds[i]->table, table))
      return kinds[i];
  return NULL;
}

const KtOption *const *
kt_kind_option_tables (void)
{
  static const KtOption **tables;

  if (g_once_init_enter (&tables))
    {
      const KtOption **all = g_new0 (const KtOption *, G_N_ELEMENTS (kinds) + 1);
      guint n = 0;

      for (gsize i = 0; i < G_N_ELEMENTS (kinds); i++)
        {
          gboolean seen = kinds[i]->options == NULL;

          for (guint j = 0; j < n && !seen; j++)
            seen = all[j] == kinds[i]->options;
          if (!seen)
            all[n++] = kinds[i]->options;
        }
      g_once_init_leave (&tables, all);
    }
  return tables;
}
