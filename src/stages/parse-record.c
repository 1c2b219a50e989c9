/* parse-record.c - structured records: what their fields mean.
 *
 * Takes the fields an input read (parse-input.h: json, logfmt,
 * otlp-json), hands on what every line hands on: a bucket, whether its
 * level is counted, its --by key and --sum values, or why it is
 * malformed. One set of rules for every input (parse.h): the time by
 * record-time.c, the level compared without regard to ASCII case after
 * the numeric maps, the key built as the text lines' is. */
#include "parse-private.h"

#include <string.h>
#include "error.h"
#include "field-path.h"
#include "record-time.h"

typedef struct
{
  KtTake         take;  /* first: the input calls take.record with &this */
  KtParser      *self;
  KtReducer     *reducer;
  KtKeyedCounts *keyed;
  guint64        lines, errors, malformed;
  const char   **first_bad;
  gsize         *first_bad_len;
} Take;

const char *const kt_input_names[] = { "text", "json", "logfmt", "otlp-json", NULL };

/* The name of numeric level @text (an integer: digits, maybe a '-') by
 * @map, or its decimal text as written; NULL for a number that is no
 * integer (1.5, 1e2). */
static const char *
number_level (KtLevelMap map, const char *text, gsize len, gsize *out_len)
{
  /* Both producers name six ranks alike: pino's tens, OpenTelemetry's fours. */
  static const char *const names[] = { "TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL" };
  const char *name = NULL;
  gint64 n = 0;
  gsize i = len > 0 && text[0] == '-' ? 1 : 0;

  if (i == len)
    return NULL;
  for (gsize j = i; j < len; j++)
    {
      if (!g_ascii_isdigit (text[j]))
        return NULL;
      if (n < 1000000)
        n = n * 10 + (text[j] - '0');
    }
  if (i == 0 && map == KT_LEVELS_PINO && n % 10 == 0 && n >= 10 && n <= 60)
    name = names[n / 10 - 1];
  else if (i == 0 && map == KT_LEVELS_OTEL && n == 0)
    name = "UNSPECIFIED";
  else if (i == 0 && map == KT_LEVELS_OTEL && n >= 1 && n <= 24)
    name = names[(n - 1) / 4];
  if (name == NULL)
    {
      *out_len = len;
      return text;
    }
  *out_len = strlen (name);
  return name;
}

/* How many bytes of a --by value of @len bytes are kept (parse.h). */
static gsize
cut (const guint8 *value, gsize len)
{
  gsize n = KT_DIMENSION_BYTES;

  if (len <= KT_DIMENSION_BYTES)
    return len;
  for (int back = 0; back < 3 && (value[n] & 0xC0) == 0x80; back++)
    n--;
  return (value[n] & 0xC0) == 0x80 ? KT_DIMENSION_BYTES : n;
}

/* The key and sums of a counted record into self->key and self->sums;
 * FALSE with the reason when they make it malformed. */
static gboolean
read_fields (KtParser *self, const KtRecordFields *f, const char *level, gsize level_len,
             KtMalformedWhy *why)
{
  static const char other[] = KT_OTHER_KEY;
  guint8 *k = self->key;
  gboolean all_other = self->n_dims > 0;

  for (guint i = 0; i < self->n_dims; i++)
    {
      const guint8 *value = (const guint8 *) "";
      gsize n = 0;

      if (self->dim_is_level[i])
        {
          n = cut ((const guint8 *) level, level_len);
          for (gsize b = 0; b < n; b++)
            k[1 + b] = (guint8) g_ascii_toupper (level[b]);
          value = k + 1;
        }
      else
        switch (f->dims[i].type)
          {
          case KT_JSON_STRING:
          case KT_JSON_NUMBER:
            value = (const guint8 *) f->dims[i].text;
            n = cut (value, f->dims[i].len);
            break;
          case KT_JSON_TRUE:
            value = (const guint8 *) "true", n = 4;
            break;
          case KT_JSON_FALSE:
            value = (const guint8 *) "false", n = 5;
            break;
          case KT_JSON_NULL:
          case KT_JSON_ABSENT:
            break;
          case KT_JSON_OBJECT:
          case KT_JSON_ARRAY:
          default:
            *why = KT_WHY_TYPE;
            return FALSE;
          }
      all_other &= n == sizeof other - 1 && memcmp (value, other, n) == 0;
      *k++ = (guint8) n;
      memmove (k, value, n);
      k += n;
    }
  if (all_other)
    {
      *why = KT_WHY_FIELD;
      return FALSE;
    }
  self->key_len = (gsize) (k - self->key);
  for (guint i = 0; i < self->n_sums; i++)
    if ((f->sums[i].type != KT_JSON_STRING && f->sums[i].type != KT_JSON_NUMBER)
        || !kt_amount_parse_bytes (f->sums[i].text, f->sums[i].len, &self->sums[i], NULL))
      {
        *why = KT_WHY_FIELD;
        return FALSE;
      }
  return TRUE;
}

static inline char
fold (char c)
{
  return c >= 'A' && c <= 'Z' ? (char) (c + ('a' - 'A')) : c;
}

/* Whether level name @want (NUL-terminated) is the @len bytes at @got,
 * without regard to ASCII case: in place, no copy, no length first. */
static inline gboolean
same_level (const char *want, const char *got, gsize len)
{
  for (gsize i = 0; i < len; i++)
    if (want[i] == '\0' || fold (want[i]) != fold (got[i]))
      return FALSE;
  return want[len] == '\0';
}

/* What a record of fields @f is. */
static KtLineKind
evaluate (KtParser *self, const KtRecordFields *f, gint64 *minute)
{
  const char *level;
  gsize level_len = 0;
  KtStamp stamp;
  KtMalformedWhy why;
  gint64 m = 0;

  switch (f->time.type)
    {
    case KT_JSON_ABSENT:
      return MALFORMED (self, KT_WHY_MISSING);
    case KT_JSON_STRING:
      stamp = f->time_unit >= 0 ? kt_stamp_epoch (f->time.text, f->time.len, f->time_unit, &m)
                                : kt_stamp_text (f->time.text, f->time.len, &m);
      break;
    case KT_JSON_NUMBER:
      stamp = kt_stamp_epoch (f->time.text, f->time.len, f->time_unit, &m);
      break;
    default:
      return MALFORMED (self, KT_WHY_TYPE);
    }
  if (stamp != KT_STAMP_OK)
    return MALFORMED (self, stamp == KT_STAMP_RANGE ? KT_WHY_RANGE : KT_WHY_TIME);
  /* Buckets start on the hour (and at midnight): floor, also before 1970. */
  if (self->bucket != 1)  /* two divisions saved where every minute is a bucket */
    m -= ((m % self->bucket) + self->bucket) % self->bucket;
  if (m < KT_MINUTE_MIN || m > KT_MINUTE_MAX)
    return MALFORMED (self, KT_WHY_RANGE);

  switch (f->level.type)
    {
    case KT_JSON_ABSENT:
      return MALFORMED (self, KT_WHY_MISSING);
    case KT_JSON_STRING:
      level = f->level.text;
      level_len = f->level.len;
      break;
    case KT_JSON_NUMBER:
      level = number_level (f->level_map, f->level.text, f->level.len, &level_len);
      if (level == NULL)
        return MALFORMED (self, KT_WHY_TYPE);
      break;
    default:
      return MALFORMED (self, KT_WHY_TYPE);
    }
  for (char **l = self->levels; *l != NULL; l++)
    if (same_level (*l, level, level_len))
      {
        if ((self->n_dims > 0 || self->n_sums > 0) && !read_fields (self, f, level, level_len, &why))
          return MALFORMED (self, why);
        *minute = m;
        return KT_LINE_ERROR;
      }
  return KT_LINE_OTHER;
}

KtLineKind
kt_records_line (KtParser *self, const char *line, gsize len, gint64 *minute)
{
  KtRecordFields f;
  KtMalformedWhy why;

  g_return_val_if_fail (self->input->line != NULL, KT_LINE_MALFORMED);
  if (!self->input->line (self->input_state, line, len, &f, &why))
    return MALFORMED (self, why);
  return evaluate (self, &f, minute);
}

static void
take_record (KtTake *base, const char *raw, gsize len, guint number,
             const KtRecordFields *fields, KtMalformedWhy why)
{
  Take *take = (Take *) base;
  KtParser *self = take->self;
  gint64 minute;

  take->lines++;
  switch (fields != NULL ? evaluate (self, fields, &minute) : MALFORMED (self, why))
    {
    case KT_LINE_ERROR:
      take->errors++;
      if (take->keyed != NULL)
        kt_keyed_counts_add (take->keyed, minute, self->key, self->key_len, self->sums);
      else
        kt_reducer_add (take->reducer, minute, 1);
      break;
    case KT_LINE_MALFORMED:
      if (take->malformed == 0 && take->first_bad != NULL)
        {
          *take->first_bad = raw;
          *take->first_bad_len = len;
        }
      take->malformed++;
      if (self->malformed_func != NULL)
        self->malformed_func (raw, len, number, self->why, self->malformed_data);
      break;
    case KT_LINE_OTHER:
    default:
      break;
    }
}

guint64
kt_records_value (KtParser *self, const char *value, gsize len, KtReducer *reducer,
                  KtKeyedCounts *keyed, KtParseCounts *counts, const char **first_bad,
                  gsize *first_bad_len)
{
  Take take = { { take_record }, self, reducer, keyed, 0, 0, 0, first_bad, first_bad_len };

  if (len > 0)
    self->input->value (self->input_state, value, len, &take.take);
  counts->lines += take.lines;
  counts->errors += take.errors;
  counts->malformed += take.malformed;
  return take.malformed;
}

/* ---- Opening: the paths a job reads ---------------------------------------- */

/* @text's names into @into (GStrv), or FALSE. A logfmt key holds no space,
 * '=', '"' or control character: a path naming one is refused. */
static gboolean
add_path (KtInput input, const char *flag, const char *text, GPtrArray *into, GError **error)
{
  GStrv names = kt_field_path_parse (flag, text, error);

  if (names == NULL)
    return FALSE;
  if (input == KT_INPUT_LOGFMT)
    for (guint i = 0; names[i] != NULL; i++)
      for (const char *c = names[i]; *c != '\0'; c++)
        if ((guchar) *c <= ' ' || *c == '=' || *c == '"')
          {
            g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                         "%s: '%s' can never match: a logfmt key holds no space, '=', '\"' "
                         "or control character", flag, text);
            g_strfreev (names);
            return FALSE;
          }
  g_ptr_array_add (into, names);
  return TRUE;
}

/* The numbers a level read at @names is: OpenTelemetry's where the field
 * is named as its severity number, else pino's and Bunyan's. */
static KtLevelMap
level_map (GStrv names)
{
  const char *last = names[g_strv_length (names) - 1];

  return g_str_equal (last, "severityNumber") || g_str_equal (last, "severity_number")
         || g_str_equal (last, "SeverityNumber") ? KT_LEVELS_OTEL : KT_LEVELS_PINO;
}

/* The flags a structured input refuses: those of text lines, and with
 * otlp-json, which reads a record's time and level itself, the fields. */
static gboolean
check_flags (const KtParseFormat *format, GError **error)
{
  const char *input = kt_input_names[format->input];

  if (format->pattern != NULL || format->time_format != NULL)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "%s: it reads text lines; --input %s reads "
                   "fields by path (--time-field, --level-field) and times in RFC 3339 or "
                   "epoch numbers", format->pattern != NULL ? "--pattern" : "--time-format",
                   input);
      return FALSE;
    }
  if (format->input == KT_INPUT_OTLP_JSON
      && (format->time_field != NULL || format->level_field != NULL))
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "%s: can never match with --input otlp-json, "
                   "which reads %s itself", format->time_field != NULL ? "--time-field"
                                                                       : "--level-field",
                   format->time_field != NULL
                   ? "a log record's timeUnixNano (or observedTimeUnixNano)"
                   : "a log record's severityText (or severityNumber)");
      return FALSE;
    }
  return TRUE;
}

/* json and logfmt: the paths of a record's time and level into @paths,
 * --time-field's and --level-field's or, without them, the usual names. */
static gboolean
time_level_paths (const KtParseFormat *format, KtInputPaths *paths, GError **error)
{
  static const char *const json_time[] = { "@timestamp", "timestamp", "time", "ts", "Timestamp",
                                            NULL };
  static const char *const json_level[] = { "log.level", "level", "severity", "severity_text",
                                             "SeverityText", "severity_number", "SeverityNumber",
                                             NULL };
  static const char *const logfmt_time[] = { "ts", "time", "timestamp", "@timestamp", NULL };
  static const char *const logfmt_level[] = { "level", "lvl", "severity", "log.level", NULL };
  const char *const *times = format->input == KT_INPUT_JSON ? json_time : logfmt_time;
  const char *const *levels = format->input == KT_INPUT_JSON ? json_level : logfmt_level;

  if (format->time_field != NULL)
    {
      if (!add_path (format->input, "--time-field", format->time_field, paths->time, error))
        return FALSE;
    }
  else
    for (guint i = 0; times[i] != NULL; i++)
      add_path (format->input, "", times[i], paths->time, NULL);
  if (format->level_field != NULL)
    {
      if (!add_path (format->input, "--level-field", format->level_field, paths->level, error))
        return FALSE;
    }
  else
    for (guint i = 0; levels[i] != NULL; i++)
      add_path (format->input, "", levels[i], paths->level, NULL);
  for (guint i = 0; i < paths->level->len; i++)
    {
      KtLevelMap map = level_map (paths->level->pdata[i]);

      g_array_append_val (paths->level_maps, map);
    }
  return TRUE;
}

gboolean
kt_records_open (KtParser *self, const KtParseFormat *format, GError **error)
{
  KtInputPaths *paths = &self->paths;
  GPtrArray *dims = g_ptr_array_new_with_free_func ((GDestroyNotify) g_strfreev);
  GPtrArray *sums = g_ptr_array_new_with_free_func ((GDestroyNotify) g_strfreev);
  gboolean ok = FALSE;

  paths->time = g_ptr_array_new_with_free_func ((GDestroyNotify) g_strfreev);
  paths->level = g_ptr_array_new_with_free_func ((GDestroyNotify) g_strfreev);
  paths->level_maps = g_array_new (FALSE, FALSE, sizeof (KtLevelMap));
  self->input = format->input == KT_INPUT_JSON ? &kt_input_json
                : format->input == KT_INPUT_LOGFMT ? &kt_input_logfmt : &kt_input_otlp;

  if (!check_flags (format, error)
      || (format->input != KT_INPUT_OTLP_JSON && !time_level_paths (format, paths, error)))
    goto out;
  for (const char *const *d = format->dimensions; d != NULL && *d != NULL; d++)
    {
      if (self->n_dims == KT_MAX_DIMENSIONS)
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "--by: at most %u fields",
                       KT_MAX_DIMENSIONS);
          goto out;
        }
      self->dim_is_level[self->n_dims] = paths->dim_is_level[self->n_dims]
        = g_str_equal (*d, "level");
      if (g_str_equal (*d, "level"))
        g_ptr_array_add (dims, NULL);
      else if (!add_path (format->input, "--by", *d, dims, error))
        goto out;
      self->n_dims++;
    }
  for (const char *const *m = format->sums; m != NULL && *m != NULL; m++)
    {
      if (self->n_sums == KT_MAX_SUMS)
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "--sum: at most %u fields", KT_MAX_SUMS);
          goto out;
        }
      if (g_str_equal (*m, "level"))
        {
          g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE,
                               "--sum: 'level' is not a number; --sum adds up numeric fields");
          goto out;
        }
      if (!add_path (format->input, "--sum", *m, sums, error))
        goto out;
      self->n_sums++;
    }
  paths->n_dims = self->n_dims;
  paths->n_sums = self->n_sums;
  for (guint i = 0; i < self->n_dims; i++)
    paths->dims[i] = g_steal_pointer (&dims->pdata[i]);
  for (guint i = 0; i < self->n_sums; i++)
    paths->sums[i] = g_steal_pointer (&sums->pdata[i]);
  self->input_state = self->input->open (paths, error);
  ok = self->input_state != NULL;
out:
  g_ptr_array_unref (dims);
  g_ptr_array_unref (sums);
  return ok;
}

void
kt_records_close (KtParser *self)
{
  if (self->input == NULL)
    return;
  if (self->input_state != NULL)
    self->input->close (self->input_state);
  g_clear_pointer (&self->paths.time, g_ptr_array_unref);
  g_clear_pointer (&self->paths.level, g_ptr_array_unref);
  g_clear_pointer (&self->paths.level_maps, g_array_unref);
  for (guint i = 0; i < KT_MAX_DIMENSIONS; i++)
    g_clear_pointer (&self->paths.dims[i], g_strfreev);
  for (guint i = 0; i < KT_MAX_SUMS; i++)
    g_clear_pointer (&self->paths.sums[i], g_strfreev);
}
