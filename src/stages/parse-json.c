/* parse-json.c - the json input: one JSON object a line (parse-input.h).
 *
 * Takes a line, hands back the fields the job reads, found by path in one
 * pass of the shared scanner (json-scan.c): no tree. A member whose name
 * holds dots is also the path those names spell (ECS's "log.level" is
 * log, level), a repeated one's last value wins, and the line is
 * malformed if it is not one strict RFC 8259 object (its reason the
 * scanner's) nested at most KT_INPUT_DEPTH deep. */
#include "parse-input.h"

#include <string.h>

typedef struct
{
  KtJsonPaths *paths;
  GArray      *time, *level;  /* guint: the slots of the paths tried, in order */
  GArray      *maps;          /* KtLevelMap, per level slot */
  guint        n_dims, n_sums;
  gboolean     dim_is_level[KT_MAX_DIMENSIONS];
  guint        dim_slot[KT_MAX_DIMENSIONS], sum_slot[KT_MAX_SUMS];
  KtJsonValue *values;
  GByteArray  *decoded;       /* the escaped strings of the line, decoded */
} JsonInput;

KtMalformedWhy
kt_input_json_why (KtJsonBad bad)
{
  switch (bad)
    {
    case KT_JSON_BAD_UTF8:
      return KT_WHY_UTF8;
    case KT_JSON_BAD_NUL:
      return KT_WHY_NUL;
    case KT_JSON_BAD_SURROGATE:
      return KT_WHY_SURROGATE;
    case KT_JSON_BAD_DEPTH:
      return KT_WHY_DEPTH;
    case KT_JSON_BAD_SYNTAX:
    case KT_JSON_BAD_DUPLICATE:
    case KT_JSON_OK:
    default:
      return KT_WHY_JSON;
    }
}

static guint
add (JsonInput *self, GStrv names)
{
  return kt_json_paths_add (self->paths, (const char *const *) names, g_strv_length (names));
}

static void
json_close (gpointer state)
{
  JsonInput *self = state;

  if (self == NULL)
    return;
  kt_json_paths_free (self->paths);
  g_array_unref (self->time);
  g_array_unref (self->level);
  g_array_unref (self->maps);
  g_free (self->values);
  g_byte_array_unref (self->decoded);
  g_free (self);
}

static gpointer
json_open (const KtInputPaths *paths, G_GNUC_UNUSED GError **error)
{
  JsonInput *self = g_new0 (JsonInput, 1);

  self->paths = kt_json_paths_new (KT_INPUT_DEPTH, KT_JSON_DOTTED);
  self->time = g_array_new (FALSE, FALSE, sizeof (guint));
  self->level = g_array_new (FALSE, FALSE, sizeof (guint));
  self->maps = g_array_new (FALSE, FALSE, sizeof (KtLevelMap));
  for (guint i = 0; i < paths->time->len; i++)
    {
      guint slot = add (self, paths->time->pdata[i]);

      g_array_append_val (self->time, slot);
    }
  for (guint i = 0; i < paths->level->len; i++)
    {
      guint slot = add (self, paths->level->pdata[i]);

      g_array_append_val (self->level, slot);
      g_array_append_val (self->maps, g_array_index (paths->level_maps, KtLevelMap, i));
    }
  self->n_dims = paths->n_dims;
  for (guint i = 0; i < paths->n_dims; i++)
    if (!(self->dim_is_level[i] = paths->dim_is_level[i]))
      self->dim_slot[i] = add (self, paths->dims[i]);
  self->n_sums = paths->n_sums;
  for (guint i = 0; i < paths->n_sums; i++)
    self->sum_slot[i] = add (self, paths->sums[i]);
  self->values = g_new0 (KtJsonValue, MAX (kt_json_paths_slots (self->paths), 1));
  self->decoded = g_byte_array_new ();
  return self;
}

/* @v as a field; an escaped string decoded into self->decoded at *@at
 * (sized for every escaped string of the line beforehand). */
static void
field (JsonInput *self, const KtJsonValue *v, gsize *at, KtField *out)
{
  out->type = v->type;
  out->text = v->text;
  out->len = v->len;
  if (v->type == KT_JSON_STRING && v->escaped)
    {
      char *to = (char *) self->decoded->data + *at;

      out->len = kt_json_unescape (v, to);
      out->text = to;
      *at += out->len;
    }
}

/* The first of @slots found, or absent; *@which its index. */
static const KtJsonValue *
first_found (JsonInput *self, GArray *slots, guint *which)
{
  static const KtJsonValue absent = { 0 };

  for (guint i = 0; i < slots->len; i++)
    if (self->values[g_array_index (slots, guint, i)].type != KT_JSON_ABSENT)
      {
        *which = i;
        return &self->values[g_array_index (slots, guint, i)];
      }
  return &absent;
}

static gboolean
json_line (gpointer state, const char *line, gsize len, KtRecordFields *out,
           KtMalformedWhy *why)
{
  JsonInput *self = state;
  KtJsonType root;
  KtJsonBad bad;
  const KtJsonValue *time, *level;
  guint level_at = 0, ignored;
  gsize escaped = 0, at = 0;

  if (!kt_json_scan (self->paths, line, len, self->values, &root, &bad, NULL))
    {
      *why = kt_input_json_why (bad);
      return FALSE;
    }
  if (root != KT_JSON_OBJECT)
    {
      *why = KT_WHY_SHAPE;
      return FALSE;
    }
  time = first_found (self, self->time, &ignored);
  level = first_found (self, self->level, &level_at);
  /* Room for the escaped strings read, decoded (never longer). */
  escaped += time->escaped ? time->len : 0;
  escaped += level->escaped ? level->len : 0;
  for (guint i = 0; i < self->n_dims; i++)
    if (!self->dim_is_level[i] && self->values[self->dim_slot[i]].escaped)
      escaped += self->values[self->dim_slot[i]].len;
  for (guint i = 0; i < self->n_sums; i++)
    if (self->values[self->sum_slot[i]].escaped)
      escaped += self->values[self->sum_slot[i]].len;
  if (escaped > 0)
    g_byte_array_set_size (self->decoded, (guint) escaped);

  field (self, time, &at, &out->time);
  out->time_unit = -1;
  field (self, level, &at, &out->level);
  out->level_map = self->maps->len > 0 ? g_array_index (self->maps, KtLevelMap, level_at)
                                       : KT_LEVELS_PINO;
  for (guint i = 0; i < self->n_dims; i++)
    if (!self->dim_is_level[i])
      field (self, &self->values[self->dim_slot[i]], &at, &out->dims[i]);
  for (guint i = 0; i < self->n_sums; i++)
    field (self, &self->values[self->sum_slot[i]], &at, &out->sums[i]);
  return TRUE;
}

const KtInputClass kt_input_json = {
  .input = KT_INPUT_JSON,
  .open = json_open,
  .close = json_close,
  .line = json_line,
};
