/* options.c - the option table's machinery (options.h): GOption entries
 * from rows, values from text, text from values, help from rows. It knows
 * no option by name: the rows do. */
#include "options.h"

#include "names.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include "error.h"
#include "names.h"

/* What GOption fills in for one row. */
typedef struct
{
  const KtOption *row;
  GPtrArray      *texts;  /* every value given, in order, bytes; NULL: not given */
  gboolean        on;     /* KT_OPT_SWITCH */
} Slot;

struct _KtOptionValues
{
  KtCommandBits command;
  const KtOption *const *tables;  /* every table (static) */
  GPtrArray    *rows;   /* const KtOption *, in table order */
  Slot         *slots;  /* one per row */
  GPtrArray    *errors; /* GError *, kt_option_values_collect()'s; NULL: stop at the first */
};

KtOptionValues *
kt_option_values_new (const KtOption *const *tables, KtCommandBits command)
{
  KtOptionValues *self = g_new0 (KtOptionValues, 1);

  self->command = command;
  self->tables = tables;
  self->rows = g_ptr_array_new ();
  for (const KtOption *const *t = tables; *t != NULL; t++)
    for (const KtOption *row = *t; row->name != NULL; row++)
      {
        gboolean seen = FALSE;

        if ((row->commands & command) == 0 || (row->flags & KT_OPT_FILE_ONLY))
          continue;
        for (guint i = 0; i < self->rows->len && !seen; i++)
          seen = g_str_equal (((const KtOption *) self->rows->pdata[i])->name, row->name);
        if (!seen)
          g_ptr_array_add (self->rows, (gpointer) row);
      }
  self->slots = g_new0 (Slot, self->rows->len);
  for (guint i = 0; i < self->rows->len; i++)
    self->slots[i].row = self->rows->pdata[i];
  return self;
}

void
kt_option_values_free (KtOptionValues *self)
{
  if (self == NULL)
    return;
  for (guint i = 0; i < self->rows->len; i++)
    g_clear_pointer (&self->slots[i].texts, g_ptr_array_unref);
  g_free (self->slots);
  g_ptr_array_unref (self->rows);
  g_clear_pointer (&self->errors, g_ptr_array_unref);
  g_free (self);
}

const KtOption *const *
kt_option_values_rows (const KtOptionValues *self, guint *n)
{
  *n = self->rows->len;
  return (const KtOption *const *) self->rows->pdata;
}

static Slot *
slot_of (const KtOptionValues *self, const char *name)
{
  for (guint i = 0; i < self->rows->len; i++)
    if (g_str_equal (self->slots[i].row->name, name))
      return &self->slots[i];
  return NULL;
}

gboolean
kt_option_given (const KtOptionValues *self, const char *name)
{
  Slot *s = slot_of (self, name);

  return s != NULL && (s->texts != NULL || s->on);
}

/* ---- Help ------------------------------------------------------------------ */

static const char *
note_for (const KtOptionNote *notes, const char *name)
{
  for (const KtOptionNote *n = notes; n != NULL && n->name != NULL; n++)
    if (g_str_equal (n->name, name))
      return n->help;
  return NULL;
}

/* "5", "0.5", "1e+12": a bound as people read it. */
static void
append_number (GString *out, double v, gboolean seconds)
{
  char text[G_ASCII_DTOSTR_BUF_SIZE];

  g_string_append (out, g_ascii_formatd (text, sizeof text, "%.15g", v));
  if (seconds)
    g_string_append (out, "s");
}

/* "a, b or c" */
static void
append_words (GString *out, const char *const *words)
{
  for (guint i = 0; words[i] != NULL; i++)
    g_string_append_printf (out, "%s%s", i == 0 ? "" : words[i + 1] == NULL ? " or " : ", ",
                            words[i]);
}

/* "[kafka] [mysql] ...": the config file's sections of @tables. */
static char *
sections_text (const KtOption *const *tables)
{
  g_auto(GStrv) sections = kt_option_sections (tables);
  GString *out = g_string_new (NULL);

  for (char **s = sections; *s != NULL; s++)
    g_string_append_printf (out, "%s[%s]", s == sections ? "" : " ", *s);
  return g_string_free (out, FALSE);
}

char *
kt_option_help (const KtOption *const *tables, const KtOption *row, const KtOptionNote *notes)
{
  const char *help = note_for (notes, row->name);
  GString *out = g_string_new (help != NULL ? help : row->help);
  const char *at = tables != NULL ? strstr (out->str, "{sections}") : NULL;
  gboolean bounded = (row->type == KT_OPT_INT || row->type == KT_OPT_SECONDS)
                     && (row->min != 0 || row->max != 0);
  const char *fallback = row->fallback_doc != NULL ? row->fallback_doc : row->fallback;
  gboolean any = FALSE;

  if (at != NULL)
    {
      g_autofree char *sections = sections_text (tables);
      gsize pos = (gsize) (at - out->str);

      g_string_erase (out, (gssize) pos, strlen ("{sections}"));
      g_string_insert (out, (gssize) pos, sections);
    }
  if (row->type == KT_OPT_WORD || row->type == KT_OPT_TABLE || bounded || fallback != NULL)
    g_string_append (out, " (");
  if (row->type == KT_OPT_WORD)
    {
      append_words (out, row->words);
      any = TRUE;
    }
  if (row->type == KT_OPT_TABLE)
    {
      g_string_append (out, "a table name: " KT_TABLE_NAME_RULE);
      any = TRUE;
    }
  if (bounded)
    {
      /* A bound no one reaches (2^63, a billion seconds) is no bound. */
      gboolean open_max = row->max >= 1e9;

      g_string_append (out, any ? "; " : "");
      g_string_append (out, row->flags & KT_OPT_OPEN_MIN ? "more than "
                            : open_max ? "at least " : "");
      append_number (out, row->min, row->type == KT_OPT_SECONDS);
      if (!open_max)
        {
          g_string_append (out, row->flags & KT_OPT_OPEN_MIN ? ", at most " : " to ");
          append_number (out, row->max, row->type == KT_OPT_SECONDS);
        }
      any = TRUE;
    }
  if (fallback != NULL)
    g_string_append_printf (out, "%sdefault: %s", any ? "; " : "", fallback);
  if (row->type == KT_OPT_WORD || row->type == KT_OPT_TABLE || bounded || fallback != NULL)
    g_string_append (out, ")");
  return g_string_free (out, FALSE);
}

/* ---- GOption ---------------------------------------------------------------- */

/* GOption's callback for every option with a value: each value is kept,
 * so that kt_option_values_load() checks all of them (a config file's bad
 * value is refused even when the command line gives another). */
static gboolean
take_value (const char *name, const char *value, gpointer data, GError **error)
{
  KtOptionValues *self = data;

  (void) error;
  for (guint i = 0; i < self->rows->len; i++)
    {
      Slot *s = &self->slots[i];

      if (name[1] == '-' ? g_str_equal (name + 2, s->row->name)
                         : name[1] == s->row->letter && name[2] == '\0')
        {
          if (s->texts == NULL)
            s->texts = g_ptr_array_new_with_free_func (g_free);
          g_ptr_array_add (s->texts, g_strdup (value));
          return TRUE;
        }
    }
  g_assert_not_reached ();
}

char *
kt_option_reloadable (const KtOption *const *tables, KtCommandBits command)
{
  g_autoptr(GPtrArray) words = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) flags = g_ptr_array_new_with_free_func (g_free);
  GString *out = g_string_new (NULL);

  for (const KtOption *const *t = tables; *t != NULL; t++)
    for (const KtOption *row = *t; row->name != NULL; row++)
      {
        if (!(row->flags & KT_OPT_RELOAD) || (row->commands & command) == 0)
          continue;
        if (row->reloads_as == NULL)
          g_ptr_array_add (flags, g_strdup_printf ("--%s", row->name));
        else if (!g_ptr_array_find_with_equal_func (words, row->reloads_as, g_str_equal, NULL))
          g_ptr_array_add (words, g_strdup (row->reloads_as));
      }
  g_ptr_array_extend_and_steal (words, g_steal_pointer (&flags));
  for (guint i = 0; i < words->len; i++)
    g_string_append_printf (out, "%s%s", i == 0 ? "" : i + 1 == words->len ? " and " : ", ",
                            (const char *) words->pdata[i]);
  return g_string_free (out, FALSE);
}

/* @summary with "{reloadable}" spelled out (kt_option_reloadable()), its
 * paragraph filled again to lines of at most 70 columns, as the
 * summaries are written. New string. */
static char *
summary_text (const char *summary, const KtOption *const *tables, KtCommandBits command)
{
  const char *at = summary != NULL ? strstr (summary, "{reloadable}") : NULL;
  const char *start, *end;
  g_autofree char *list = NULL, *paragraph = NULL;
  g_auto(GStrv) words = NULL;
  GString *out;
  gsize column = 0;

  if (at == NULL)
    return g_strdup (summary);
  start = g_strrstr_len (summary, at - summary, "\n\n");
  start = start != NULL ? start + 2 : summary;
  end = strstr (at, "\n\n");
  end = end != NULL ? end : at + strlen (at);
  list = kt_option_reloadable (tables, command);
  paragraph = g_strdup_printf ("%.*s%s%.*s", (int) (at - start), start, list,
                               (int) (end - at - strlen ("{reloadable}")),
                               at + strlen ("{reloadable}"));
  g_strdelimit (paragraph, "\n", ' ');
  words = g_strsplit (paragraph, " ", -1);
  out = g_string_new_len (summary, start - summary);
  for (char **w = words; *w != NULL; w++)
    {
      if (**w == '\0')
        continue;
      if (column > 0 && column + 1 + strlen (*w) > 70)
        {
          g_string_append_c (out, '\n');
          column = 0;
        }
      else if (column > 0)
        {
          g_string_append_c (out, ' ');
          column++;
        }
      g_string_append (out, *w);
      column += strlen (*w);
    }
  g_string_append (out, end);
  return g_string_free (out, FALSE);
}

gboolean
kt_option_values_parse (KtOptionValues *self, const char *summary, const KtOptionNote *notes,
                        int argc, char **argv, GError **error)
{
  g_autoptr(GOptionContext) context = g_option_context_new (NULL);
  g_autoptr(GPtrArray) helps = g_ptr_array_new_with_free_func (g_free);
  g_autofree GOptionEntry *entries = g_new0 (GOptionEntry, self->rows->len + 1);
  GOptionGroup *group = g_option_group_new (NULL, NULL, NULL, self, NULL);
  g_autoptr(GError) local = NULL;
  g_autofree char *expanded = summary_text (summary, self->tables, self->command);
  guint n = 0;

  for (guint i = 0; i < self->rows->len; i++)
    {
      Slot *s = &self->slots[i];
      GOptionEntry *e = &entries[n++];

      e->long_name = s->row->name;
      e->short_name = s->row->letter;
      e->arg_description = s->row->type == KT_OPT_SWITCH ? NULL : s->row->metavar;
      e->description = kt_option_help (self->tables, s->row, notes);
      g_ptr_array_add (helps, (gpointer) e->description);
      if (s->row->type == KT_OPT_SWITCH)
        {
          e->arg = G_OPTION_ARG_NONE;
          e->arg_data = &s->on;
          continue;
        }
      /* FILENAME: the bytes as given, never converted through the
       * locale's charset (kt_option_utf8() judges them, naming the
       * option). */
      e->arg = G_OPTION_ARG_CALLBACK;
      e->flags = G_OPTION_FLAG_FILENAME;
      /* GOption stores the callback in a data pointer. */
      G_STATIC_ASSERT (sizeof (GOptionArgFunc) == sizeof (gpointer));
      memcpy (&e->arg_data, &(GOptionArgFunc) { take_value }, sizeof (gpointer));
    }

  g_option_context_set_summary (context, expanded);
  g_option_group_add_entries (group, entries);
  g_option_context_set_main_group (context, group);
  if (!g_option_context_parse (context, &argc, &argv, &local))
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "%s", local->message);
      return FALSE;
    }
  if (argc > 1)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "unexpected argument '%s'", argv[1]);
      return FALSE;
    }
  return TRUE;
}

/* ---- Values from text -------------------------------------------------------- */

char *
kt_option_utf8 (const char *flag, const char *bytes, GError **error)
{
  const char *charset = NULL;
  g_autoptr(GError) local = NULL;
  char *converted;

  if (g_utf8_validate (bytes, -1, NULL))
    return g_strdup (bytes);
  if (!g_get_charset (&charset))
    {
      converted = g_convert (bytes, -1, "UTF-8", charset, NULL, NULL, &local);
      if (converted != NULL && g_utf8_validate (converted, -1, NULL))
        return converted;
      g_free (converted);
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "%s: the value is neither UTF-8 nor valid in the locale's character "
                   "set (%s)", flag, charset);
      return NULL;
    }
  g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "%s: the value is not valid UTF-8", flag);
  return NULL;
}

/* Digits, an optional fraction, then at most one unit: no sign, no
 * exponent, no blanks, nothing after the unit ("7ds" is not 7 days). */
static gboolean
parse_seconds (const char *text, double *seconds)
{
  /* "ms" before "m": each unit is compared whole. */
  static const struct { const char *unit; double seconds; } units[] = {
    { "ms", 0.001 }, { "s", 1 }, { "m", 60 }, { "h", 3600 }, { "d", 86400 },
  };
  const char *p = text;
  double value;
  char *end;

  if (!g_ascii_isdigit (*p))
    return FALSE;
  while (g_ascii_isdigit (*p))
    p++;
  if (*p == '.' && !g_ascii_isdigit (*++p))
    return FALSE;
  while (g_ascii_isdigit (*p))
    p++;
  value = g_ascii_strtod (text, &end);
  if (end != p || !isfinite (value))
    return FALSE;
  if (*p != '\0')
    {
      gsize i = 0;

      while (i < G_N_ELEMENTS (units) && !g_str_equal (p, units[i].unit))
        i++;
      if (i == G_N_ELEMENTS (units))
        return FALSE;
      value *= units[i].seconds;
    }
  *seconds = value;
  return value <= 1e12;
}

gboolean
kt_duration_parse (const char *flag, const char *text, double *seconds, GError **error)
{
  if (parse_seconds (text, seconds))
    return TRUE;
  g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
               "%s: expected a duration like 500ms, 5s, 2m, 12h or 7d (a bare number "
               "is seconds), got '%s'", flag, text);
  return FALSE;
}

/* @v within @row's bounds, or KT_ERROR_USAGE quoting @text. */
static gboolean
check_bounds (const KtOption *row, const char *flag, const char *text, double v,
              GError **error)
{
  g_autoptr(GString) range = g_string_new (NULL);
  gboolean seconds = row->type == KT_OPT_SECONDS;

  if (row->min == 0 && row->max == 0)
    return TRUE;
  if (v > row->min && v <= row->max)
    return TRUE;
  if (v == row->min && !(row->flags & KT_OPT_OPEN_MIN))
    return TRUE;
  if (row->flags & KT_OPT_OPEN_MIN)
    g_string_append (range, "more than ");
  append_number (range, row->min, FALSE);
  g_string_append (range, row->flags & KT_OPT_OPEN_MIN ? " and at most " : " and ");
  append_number (range, row->max, FALSE);
  if (seconds)
    g_string_append (range, " seconds");
  g_set_error (error, KT_ERROR, KT_ERROR_USAGE, seconds ? "%s: '%s' is not between %s"
               : "%s: %s is not between %s", flag, text, range->str);
  return FALSE;
}

static gboolean
parse_int (const KtOption *row, const char *flag, const char *text, gint64 *out,
           GError **error)
{
  gint64 v;
  char *end;

  errno = 0;
  v = g_ascii_strtoll (text, &end, 10);
  if (*text == '\0' || *end != '\0' || errno != 0 || g_ascii_isspace (*text))
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "%s: expected a whole number, got '%s'",
                   flag, text);
      return FALSE;
    }
  if (!check_bounds (row, flag, text, (double) v, error))
    return FALSE;
  *out = v;
  return TRUE;
}

static gboolean
parse_word (const KtOption *row, const char *flag, const char *text, int *out,
            GError **error)
{
  g_autoptr(GString) words = g_string_new (NULL);

  for (int i = 0; row->words[i] != NULL; i++)
    if (g_str_equal (row->words[i], text))
      {
        *out = row->values != NULL ? row->values[i] : i;
        return TRUE;
      }
  for (int i = 0; row->words[i] != NULL; i++)
    g_string_append_printf (words, "%s%s", i ? "|" : "", row->words[i]);
  g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "%s: expected %s, got '%s'", flag,
               words->str, text);
  return FALSE;
}

static gboolean
parse_list (const char *flag, const char *text, char ***out, GError **error)
{
  g_auto(GStrv) items = g_strsplit (text, ",", -1);

  for (char **i = items; *i != NULL; i++)
    if (**i == '\0')
      {
        g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "%s: an empty item in the list '%s'",
                     flag, text);
        return FALSE;
      }
  if (items[0] == NULL)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "%s: an empty list", flag);
      return FALSE;
    }
  *out = g_steal_pointer (&items);
  return TRUE;
}

/* Clears @row's field in @target to its unset value. */
static void
field_clear (const KtOption *row, gpointer target)
{
  gpointer field = (char *) target + row->offset;

  switch (row->type)
    {
    case KT_OPT_TEXT:
    case KT_OPT_TABLE:
    case KT_OPT_PATH:
      g_clear_pointer ((char **) field, g_free);
      break;
    case KT_OPT_LIST:
    case KT_OPT_REPEAT:
      g_clear_pointer ((char ***) field, g_strfreev);
      break;
    case KT_OPT_INT:
      *(gint64 *) field = -1;
      break;
    case KT_OPT_SECONDS:
      *(double *) field = 0;
      break;
    case KT_OPT_SWITCH:
      *(gboolean *) field = FALSE;
      break;
    case KT_OPT_WORD:
      *(int *) field = 0;
      break;
    case KT_OPT_CUSTOM:
      row->clear (field);
      break;
    }
}

/* @text (UTF-8 already, unless a path) into @row's field. */
static gboolean
field_set (const KtOption *row, const char *flag, const char *text, gpointer target,
           GError **error)
{
  gpointer field = (char *) target + row->offset;
  double seconds;

  field_clear (row, target);
  switch (row->type)
    {
    case KT_OPT_TEXT:
    case KT_OPT_PATH:
      *(char **) field = g_strdup (text);
      return TRUE;
    case KT_OPT_TABLE:
      if (!kt_table_name_check (flag, text, NULL, error))
        return FALSE;
      *(char **) field = g_strdup (text);
      return TRUE;
    case KT_OPT_INT:
      return parse_int (row, flag, text, (gint64 *) field, error);
    case KT_OPT_SECONDS:
      if (!kt_duration_parse (flag, text, &seconds, error)
          || !check_bounds (row, flag, text, seconds, error))
        return FALSE;
      *(double *) field = seconds;
      return TRUE;
    case KT_OPT_WORD:
      return parse_word (row, flag, text, (int *) field, error);
    case KT_OPT_LIST:
      return parse_list (flag, text, (char ***) field, error);
    case KT_OPT_CUSTOM:
      return row->parse (flag, text, field, error);
    case KT_OPT_SWITCH:
    case KT_OPT_REPEAT:
      break;
    }
  g_assert_not_reached ();
}

/* One row's values from its slot (each checked, the last one kept), or
 * its fallback, into @target. */
static gboolean
load_row (const Slot *s, gpointer target, GError **error)
{
  const KtOption *row = s->row;
  g_autofree char *flag = g_strdup_printf ("--%s", row->name);
  char ***list = (char ***) ((char *) target + row->offset);

  if (row->type == KT_OPT_SWITCH)
    {
      *(gboolean *) ((char *) target + row->offset) = s->on;
      return TRUE;
    }
  field_clear (row, target);
  if (s->texts == NULL)
    return row->fallback == NULL || field_set (row, flag, row->fallback, target, error);
  for (guint i = 0; i < s->texts->len; i++)
    {
      const char *text = s->texts->pdata[i];
      g_autofree char *utf8 = NULL;

      if (row->type != KT_OPT_PATH && (utf8 = kt_option_utf8 (flag, text, error)) == NULL)
        return FALSE;
      if (row->type == KT_OPT_REPEAT)
        {
          guint n = *list != NULL ? g_strv_length (*list) : 0;

          *list = g_renew (char *, *list, n + 2);
          (*list)[n] = g_steal_pointer (&utf8);
          (*list)[n + 1] = NULL;
        }
      else if (!field_set (row, flag, utf8 != NULL ? utf8 : text, target, error))
        return FALSE;
    }
  return TRUE;
}

/* A row given without the option it needs. */
static gboolean
check_needs (const KtOptionValues *self, const Slot *s, GError **error)
{
  if (s->row->needs == NULL || !kt_option_given (self, s->row->name)
      || kt_option_given (self, s->row->needs))
    return TRUE;
  g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "--%s needs --%s", s->row->name,
               s->row->needs);
  return FALSE;
}

void
kt_option_values_collect (KtOptionValues *self)
{
  if (self->errors == NULL)
    self->errors = g_ptr_array_new_with_free_func ((GDestroyNotify) g_error_free);
}

GPtrArray *
kt_option_values_errors (const KtOptionValues *self)
{
  return self->errors;
}

gboolean
kt_option_values_load (const KtOptionValues *self, const KtOption *table, gpointer target,
                       GError **error)
{
  for (const KtOption *row = table; row->name != NULL; row++)
    for (guint i = 0; i < self->rows->len; i++)
      {
        GError *local = NULL;

        if (self->slots[i].row != row
            || (check_needs (self, &self->slots[i], &local)
                && load_row (&self->slots[i], target, &local)))
          continue;
        if (self->errors == NULL)
          {
            g_propagate_error (error, local);
            return FALSE;
          }
        g_ptr_array_add (self->errors, local);
        /* Left as if not given: the later checks see a usable value. */
        field_clear (row, target);
        if (row->fallback != NULL && row->type != KT_OPT_SWITCH)
          field_set (row, "", row->fallback, target, NULL);
      }
  return TRUE;
}

gboolean
kt_option_set_text (const KtOption *row, const char *text, gpointer target, GError **error)
{
  g_autofree char *flag = g_strdup_printf ("--%s", row->name);

  return field_set (row, flag, text, target, error);
}

const KtOption *
kt_option_values_first_given (const KtOptionValues *self, const KtOption *table)
{
  for (guint i = 0; i < self->rows->len; i++)
    for (const KtOption *row = table; row->name != NULL; row++)
      if (g_str_equal (row->name, self->slots[i].row->name)
          && kt_option_given (self, row->name))
        return row;
  return NULL;
}

void
kt_option_table_clear (const KtOption *table, gpointer target)
{
  for (const KtOption *row = table; row->name != NULL; row++)
    if (!(row->flags & KT_OPT_FILE_ONLY))
      field_clear (row, target);
}

/* ---- Text from values -------------------------------------------------------- */

char *
kt_option_text (const KtOption *row, gconstpointer target)
{
  gconstpointer field = (const char *) target + row->offset;
  char number[G_ASCII_DTOSTR_BUF_SIZE];

  switch (row->type)
    {
    case KT_OPT_TEXT:
    case KT_OPT_TABLE:
    case KT_OPT_PATH:
      return g_strdup (*(char *const *) field);
    case KT_OPT_INT:
      return *(const gint64 *) field == -1 && row->fallback == NULL
             ? NULL : g_strdup_printf ("%" G_GINT64_FORMAT, *(const gint64 *) field);
    case KT_OPT_SECONDS:
      if (*(const double *) field == 0 && row->fallback == NULL)
        return NULL;
      return g_strdup (g_ascii_formatd (number, sizeof number, "%.15g", *(const double *) field));
    case KT_OPT_SWITCH:
      return g_strdup (*(const gboolean *) field ? "true" : "false");
    case KT_OPT_WORD:
      for (int i = 0; row->words[i] != NULL; i++)
        if ((row->values != NULL ? row->values[i] : i) == *(const int *) field)
          return g_strdup (row->words[i]);
      return NULL;
    case KT_OPT_LIST:
      return *(char **const *) field != NULL ? g_strjoinv (",", *(char **const *) field) : NULL;
    case KT_OPT_REPEAT:
      return *(char **const *) field != NULL ? g_strjoinv ("\n", *(char **const *) field) : NULL;
    case KT_OPT_CUSTOM:
      return row->text (field);
    }
  g_assert_not_reached ();
}

static int
compare_strings (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

/* A list's text sorted, each item once. */
static char *
sorted_set (const char *text)
{
  g_auto(GStrv) items = g_strsplit (text, ",", -1);
  guint n = g_strv_length (items), kept = 0;

  qsort (items, n, sizeof (char *), compare_strings);
  for (guint i = 0; i < n; i++)
    if (kept == 0 || strcmp (items[kept - 1], items[i]) != 0)
      items[kept++] = items[i];
    else
      g_free (items[i]);
  items[kept] = NULL;
  return g_strjoinv (",", items);
}

char *
kt_option_normal_text (const KtOption *row, const char *text)
{
  if (text == NULL || *text == '\0')
    return g_strdup ("");
  if (row->normal != NULL)
    return row->normal (text);
  if (row->flags & KT_OPT_SET)
    return sorted_set (text);
  return g_strdup (text);
}

char *
kt_option_normal (const KtOption *row, gconstpointer target)
{
  g_autofree char *text = kt_option_text (row, target);

  return kt_option_normal_text (row, text);
}

/* Whether the option @row needs (in @table) has a value in @target. */
static gboolean
needed_set (const KtOption *table, const KtOption *row, gconstpointer target)
{
  g_autofree char *text = NULL;

  if (row->needs == NULL)
    return TRUE;
  for (const KtOption *r = table; r->name != NULL; r++)
    if (g_str_equal (r->name, row->needs))
      {
        text = kt_option_text (r, target);
        return text != NULL;
      }
  return TRUE;
}

void
kt_option_table_describe (const KtOption *table, KtCommandBits command, const char *section,
                          gconstpointer target, GKeyFile *file)
{
  for (const KtOption *row = table; row->name != NULL; row++)
    {
      g_autofree char *text = NULL;
      g_auto(GStrv) parts = NULL;
      g_autofree char *escaped = NULL;

      if ((row->commands & command) == 0 || g_strcmp0 (row->section, section) != 0
          || (row->flags & KT_OPT_FILE_ONLY))
        continue;
      text = kt_option_text (row, target);
      if (text == NULL || !needed_set (table, row, target))
        continue;
      if (row->flags & KT_OPT_SECRET)
        {
          g_autofree char *comment = g_strdup_printf (" %s: (set, hidden)", row->name);
          g_key_file_set_comment (file, row->section, NULL, comment, NULL);
          continue;
        }
      /* A literal "${" would read back as a variable (config-file.h). */
      parts = g_strsplit (text, "${", -1);
      escaped = g_strjoinv ("$${", parts);
      g_key_file_set_string (file, row->section, row->name, escaped);
    }
}

GStrv
kt_option_sections (const KtOption *const *tables)
{
  g_autoptr(GStrvBuilder) out = g_strv_builder_new ();
  g_autoptr(GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);

  for (const KtOption *const *t = tables; *t != NULL; t++)
    for (const KtOption *row = *t; row->name != NULL; row++)
      if (row->section != NULL && g_hash_table_add (seen, (gpointer) row->section))
        g_strv_builder_add (out, row->section);
  return g_strv_builder_end (out);
}

const KtOption *
kt_option_lookup (const KtOption *const *tables, KtCommandBits command, const char *name)
{
  for (const KtOption *const *t = tables; *t != NULL; t++)
    for (const KtOption *row = *t; row->name != NULL; row++)
      if ((row->commands & command) != 0 && g_str_equal (row->name, name))
        return row;
  return NULL;
}

const KtOption *
kt_option_lookup_key (const KtOption *const *tables, KtCommandBits command,
                      const char *section, const char *key)
{
  for (const KtOption *const *t = tables; *t != NULL; t++)
    for (const KtOption *row = *t; row->name != NULL; row++)
      if ((row->commands & command) != 0 && g_strcmp0 (row->section, section) == 0
          && g_str_equal (row->name, key))
        return row;
  return NULL;
}

/* ---- The environment ---------------------------------------------------------- */

char *
kt_option_env_name (const KtOption *row)
{
  char *name;

  if ((row->flags & KT_OPT_FILE_ONLY)
      || (row->section == NULL && !(row->flags & KT_OPT_ENV)))
    return NULL;
  name = g_strdup_printf ("KTALLY_%s", row->name);
  for (char *p = name; *p != '\0'; p++)
    *p = *p == '-' ? '_' : g_ascii_toupper (*p);
  return name;
}

gboolean
kt_option_holds_secret (const KtOption *row, const char *text)
{
  if (row->flags & KT_OPT_SECRET)
    return TRUE;
  return row->secret != NULL && text != NULL && row->secret (text);
}

/* ---- man(7) ------------------------------------------------------------------ */

/* @text with man(7)'s specials escaped: backslashes, a leading dot or
 * quote, and '-' as the minus it is in option names. */
static void
append_roff (GString *out, const char *text)
{
  if (*text == '.' || *text == '\'')
    g_string_append (out, "\\&");
  for (const char *p = text; *p != '\0'; p++)
    if (*p == '\\')
      g_string_append (out, "\\e");
    else if (*p == '-')
      g_string_append (out, "\\-");
    else
      g_string_append_c (out, *p);
}

/* "Environment: KTALLY_NAME." after an option's or a key's paragraph, when
 * it has one. */
static void
man_env (GString *out, const KtOption *row, const char *env)
{
  if (env == NULL)
    return;
  g_string_append (out, "Environment: \\fB");
  append_roff (out, env);
  g_string_append (out, "\\fR");
  if (row->type == KT_OPT_REPEAT)
    g_string_append (out, ", one value a line");
  if (row->type == KT_OPT_SWITCH)
    g_string_append (out, "=\\fBtrue\\fR|\\fBfalse\\fR");
  if (row->secret != NULL || (row->flags & KT_OPT_SECRET))
    g_string_append (out, " (a secret in it only with \\fB\\-\\-env\\-secrets\\fR)");
  g_string_append (out, ".\n");
}

/* One option as a .TP paragraph of a command's OPTIONS. */
static void
man_row (GString *out, const KtOption *const *tables, const KtOption *row,
         const KtOptionNote *notes)
{
  g_autofree char *help = kt_option_help (tables, row, notes);
  g_autofree char *env = kt_option_env_name (row);

  g_string_append (out, ".TP\n");
  if (row->letter != 0)
    g_string_append_printf (out, "\\fB\\-%c\\fR, ", row->letter);
  g_string_append (out, "\\fB\\-\\-");
  append_roff (out, row->name);
  g_string_append (out, "\\fR");
  if (row->type != KT_OPT_SWITCH && row->metavar != NULL)
    {
      g_string_append (out, "=\\fI");
      append_roff (out, row->metavar);
      g_string_append (out, "\\fR");
    }
  g_string_append (out, "\n");
  append_roff (out, help);
  g_string_append (out, g_str_has_suffix (help, ".") ? "\n" : ".\n");
  if (row->section != NULL)
    {
      g_string_append (out, "Config file: [");
      append_roff (out, row->section);
      g_string_append (out, "] ");
      append_roff (out, row->name);
      g_string_append (out, row->flags & KT_OPT_RELOAD ? "; SIGHUP applies a change.\n"
                                                       : ".\n");
    }
  else if (row->flags & KT_OPT_RELOAD)
    g_string_append (out, "SIGHUP applies a change.\n");
  man_env (out, row, env);
}

void
kt_option_man_rows (GString *out, const KtOption *const *tables, const KtOption *const *rows,
                    const KtOptionNote *notes)
{
  for (const KtOption *const *r = rows; *r != NULL; r++)
    if (!((*r)->flags & KT_OPT_FILE_ONLY))
      man_row (out, tables, *r, notes);
}

void
kt_option_man (GString *out, const KtOptionValues *self, const KtOptionNote *notes)
{
  g_ptr_array_add (self->rows, NULL);
  kt_option_man_rows (out, self->tables, (const KtOption *const *) self->rows->pdata, notes);
  g_ptr_array_set_size (self->rows, self->rows->len - 1);
}

void
kt_option_man_key (GString *out, const KtOption *row, const char *commands)
{
  g_autofree char *help = kt_option_help (NULL, row, NULL);
  g_autofree char *env = kt_option_env_name (row);

  g_string_append (out, ".TP\n\\fB");
  append_roff (out, row->name);
  g_string_append (out, "\\fR");
  if (row->type == KT_OPT_SWITCH)
    g_string_append (out, " = \\fBtrue\\fR|\\fBfalse\\fR");
  else if (row->metavar != NULL)
    {
      g_string_append (out, " = \\fI");
      append_roff (out, row->metavar);
      g_string_append (out, "\\fR");
    }
  g_string_append (out, "\n");
  append_roff (out, help);
  g_string_append (out, g_str_has_suffix (help, ".") ? "\n" : ".\n");
  if (!(row->flags & KT_OPT_FILE_ONLY))
    {
      g_string_append (out, "As \\fB\\-\\-");
      append_roff (out, row->name);
      g_string_append (out, "\\fR. ");
    }
  g_string_append (out, "Read by ");
  append_roff (out, commands);
  g_string_append (out, row->flags & KT_OPT_RELOAD ? "; SIGHUP applies a change.\n" : ".\n");
  man_env (out, row, env);
}
