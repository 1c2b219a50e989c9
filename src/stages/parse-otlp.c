/* parse-otlp.c - the otlp-json input: OTLP's logs in JSON, as the
 * OpenTelemetry Collector's Kafka exporter writes them with
 * encoding otlp_json (parse-input.h).
 *
 * Takes a whole Kafka value, one ExportLogsServiceRequest:
 * {"resourceLogs": [{"resource": {"attributes": [...]}, "scopeLogs":
 * [{"scope": {...}, "logRecords": [{...}, ...]}]}]}, and hands each log
 * record to the parser, in document order, numbered from 1: its time
 * (timeUnixNano, or observedTimeUnixNano where that is absent or 0;
 * nanoseconds as a string or a number), its level (severityText, or where
 * that is absent or empty severityNumber, a number or its enum name
 * SEVERITY_NUMBER_ERROR...; neither: UNSPECIFIED), and the attributes the
 * job reads by key: the log record's own, else its resource's
 * (`service.name`). One pass of the shared scanner with a function at the
 * end of each array element; records are kept (as slices of the value)
 * until the whole value is known to be one strict JSON text of this
 * shape, since one bad byte anywhere makes all of it malformed, once.
 * The Collector's otlp_proto encoding (protobuf) is not read. */
#include "parse-input.h"

#include <string.h>

/* The AnyValue members an attribute's value may hold. */
static const char *const any_names[] = { "stringValue", "intValue", "doubleValue", "boolValue",
                                         "bytesValue", "arrayValue", "kvlistValue" };
#define N_ANY G_N_ELEMENTS (any_names)

/* Where an attribute list's slots are. */
typedef struct
{
  guint key;
  guint any[N_ANY];
} AttrSlots;

/* One log record, as slices of the value. */
typedef struct
{
  KtJsonValue element;
  KtJsonValue time, observed, text, number;
  guint       attrs;  /* its first attribute value in self->attrs */
} Record;

typedef struct
{
  KtJsonPaths *paths;
  guint        n_dims, n_sums;
  gboolean     dim_is_level[KT_MAX_DIMENSIONS];
  guint        dim_at[KT_MAX_DIMENSIONS], sum_at[KT_MAX_SUMS];  /* into keys */
  GPtrArray   *keys;      /* the attribute keys read (char *) */
  /* Slots. */
  guint        resource_logs, scope_logs, log_records, time, observed, text, number;
  AttrSlots    resource_attr, record_attr;
  /* What one value held, in document order. */
  GArray      *records;   /* Record */
  GArray      *attrs;     /* KtJsonValue: keys->len per record */
  KtJsonValue *record_now, *resource_now;  /* the attributes of the element being read */
  guint        resource_first;  /* the first record of the resource being read */
  gboolean     misshapen;  /* a container of the request's shape of another type */
  GByteArray  *decoded;
  KtJsonValue *values;    /* the scan's slots, reused for every value */
} OtlpInput;

/* The attribute value an element of @slots holds, into @out if its key is
 * one of self->keys. */
static void
take_attribute (OtlpInput *self, const KtJsonValue *values, const AttrSlots *slots,
                KtJsonValue *out)
{
  const KtJsonValue *key = &values[slots->key];

  if (key->type != KT_JSON_STRING)
    return;
  for (guint i = 0; i < self->keys->len; i++)
    {
      const char *want = self->keys->pdata[i];

      if (kt_json_string_equal (key, want, strlen (want)))
        {
          /* The last of a repeated key wins; an AnyValue of none of its
           * members is null. */
          out[i] = (KtJsonValue) { KT_JSON_NULL, FALSE, "", 0 };
          for (guint a = 0; a < N_ANY; a++)
            if (values[slots->any[a]].type != KT_JSON_ABSENT)
              {
                out[i] = values[slots->any[a]];
                /* An array or a list of key-values is no key and no sum. */
                if (a >= 5)
                  out[i].type = KT_JSON_OBJECT;
              }
        }
    }
}

static void
on_record_attribute (const KtJsonValue *values, G_GNUC_UNUSED const KtJsonValue *element,
                     gpointer data)
{
  OtlpInput *self = data;

  take_attribute (self, values, &self->record_attr, self->record_now);
}

static void
on_resource_attribute (const KtJsonValue *values, G_GNUC_UNUSED const KtJsonValue *element,
                       gpointer data)
{
  OtlpInput *self = data;

  take_attribute (self, values, &self->resource_attr, self->resource_now);
}

static void
on_record (const KtJsonValue *values, const KtJsonValue *element, gpointer data)
{
  OtlpInput *self = data;
  Record r = { *element, values[self->time], values[self->observed], values[self->text],
               values[self->number], self->attrs->len };

  g_array_append_val (self->records, r);
  g_array_append_vals (self->attrs, self->record_now, self->keys->len);
  memset (self->record_now, 0, self->keys->len * sizeof (KtJsonValue));
}

static gboolean
array_or_absent (const KtJsonValue *v)
{
  return v->type == KT_JSON_ABSENT || v->type == KT_JSON_ARRAY;
}

static void
on_scope (const KtJsonValue *values, const KtJsonValue *element, gpointer data)
{
  OtlpInput *self = data;

  if (element->type != KT_JSON_OBJECT || !array_or_absent (&values[self->log_records]))
    self->misshapen = TRUE;
}

/* A resource ends: its attributes go to its records that lack them. */
static void
on_resource (const KtJsonValue *values, const KtJsonValue *element, gpointer data)
{
  OtlpInput *self = data;
  guint n = self->keys->len;

  if (element->type != KT_JSON_OBJECT || !array_or_absent (&values[self->scope_logs]))
    self->misshapen = TRUE;
  for (guint r = self->resource_first; n > 0 && r < self->records->len; r++)
    {
      KtJsonValue *attrs = &g_array_index (self->attrs, KtJsonValue,
                                           g_array_index (self->records, Record, r).attrs);

      for (guint i = 0; i < n; i++)
        if (attrs[i].type == KT_JSON_ABSENT)
          attrs[i] = self->resource_now[i];
    }
  memset (self->resource_now, 0, n * sizeof (KtJsonValue));
  self->resource_first = self->records->len;
}

static guint
add (OtlpInput *self, const char *const *names, guint n)
{
  return kt_json_paths_add (self->paths, names, n);
}

/* The slots of an attribute list at @names (@n of them, the last
 * KT_JSON_EACH), and @func at each attribute's end. */
static void
add_attributes (OtlpInput *self, const char **names, guint n, AttrSlots *slots,
                KtJsonElementFunc func)
{
  names[n] = "key";
  slots->key = add (self, names, n + 1);
  names[n] = "value";
  for (guint a = 0; a < N_ANY; a++)
    {
      names[n + 1] = any_names[a];
      slots->any[a] = add (self, names, n + 2);
    }
  kt_json_paths_on_element (self->paths, names, n, func, self);
}

static guint
want_key (OtlpInput *self, GStrv names)
{
  g_autofree char *key = g_strjoinv (".", names);

  for (guint i = 0; i < self->keys->len; i++)
    if (g_str_equal (self->keys->pdata[i], key))
      return i;
  g_ptr_array_add (self->keys, g_steal_pointer (&key));
  return self->keys->len - 1;
}

static void
otlp_close (gpointer state)
{
  OtlpInput *self = state;

  if (self == NULL)
    return;
  kt_json_paths_free (self->paths);
  g_ptr_array_unref (self->keys);
  g_array_unref (self->records);
  g_array_unref (self->attrs);
  g_free (self->record_now);
  g_free (self->values);
  g_free (self->resource_now);
  g_byte_array_unref (self->decoded);
  g_free (self);
}

static gpointer
otlp_open (const KtInputPaths *paths, G_GNUC_UNUSED GError **error)
{
  OtlpInput *self = g_new0 (OtlpInput, 1);
  const char *p[12] = { "resourceLogs", KT_JSON_EACH, "scopeLogs", KT_JSON_EACH, "logRecords",
                        KT_JSON_EACH };
  const char *r[8] = { "resourceLogs", KT_JSON_EACH, "resource", "attributes", KT_JSON_EACH };

  self->paths = kt_json_paths_new (KT_INPUT_DEPTH, 0);
  self->keys = g_ptr_array_new_with_free_func (g_free);
  self->n_dims = paths->n_dims;
  for (guint i = 0; i < paths->n_dims; i++)
    if (!(self->dim_is_level[i] = paths->dim_is_level[i]))
      self->dim_at[i] = want_key (self, paths->dims[i]);
  self->n_sums = paths->n_sums;
  for (guint i = 0; i < paths->n_sums; i++)
    self->sum_at[i] = want_key (self, paths->sums[i]);

  self->resource_logs = add (self, p, 1);
  self->scope_logs = add (self, p, 3);
  self->log_records = add (self, p, 5);
  p[6] = "timeUnixNano";
  self->time = add (self, p, 7);
  p[6] = "observedTimeUnixNano";
  self->observed = add (self, p, 7);
  p[6] = "severityText";
  self->text = add (self, p, 7);
  p[6] = "severityNumber";
  self->number = add (self, p, 7);
  if (self->keys->len > 0)
    {
      p[6] = "attributes";
      p[7] = KT_JSON_EACH;
      add_attributes (self, p, 8, &self->record_attr, on_record_attribute);
      add_attributes (self, r, 5, &self->resource_attr, on_resource_attribute);
    }
  kt_json_paths_on_element (self->paths, p, 6, on_record, self);
  kt_json_paths_on_element (self->paths, p, 4, on_scope, self);
  kt_json_paths_on_element (self->paths, p, 2, on_resource, self);

  self->records = g_array_new (FALSE, FALSE, sizeof (Record));
  self->attrs = g_array_new (FALSE, FALSE, sizeof (KtJsonValue));
  self->record_now = g_new0 (KtJsonValue, MAX (self->keys->len, 1));
  self->resource_now = g_new0 (KtJsonValue, MAX (self->keys->len, 1));
  self->decoded = g_byte_array_new ();
  self->values = g_new0 (KtJsonValue, MAX (kt_json_paths_slots (self->paths), 1));
  return self;
}

/* @v as a field, an escaped string decoded at *@at of self->decoded. */
static void
field (OtlpInput *self, const KtJsonValue *v, gsize *at, KtField *out)
{
  *out = (KtField) { v->type, v->text, v->len };
  if (v->type == KT_JSON_STRING && v->escaped)
    {
      char *to = (char *) self->decoded->data + *at;

      out->len = kt_json_unescape (v, to);
      out->text = to;
      *at += out->len;
    }
}

/* Whether @v is OTLP's zero (or absent): proto3 writes no default, and a
 * time of 0 is "unknown". */
static gboolean
is_zero (const KtJsonValue *v)
{
  return v->type == KT_JSON_ABSENT
         || ((v->type == KT_JSON_STRING || v->type == KT_JSON_NUMBER) && v->len == 1
             && v->text[0] == '0');
}

/* severityNumber's enum name (SEVERITY_NUMBER_ERROR3), escapes decoded,
 * as its level's name (ERROR), or NULL. */
static const char *
severity_name (const KtJsonValue *v, gsize *len)
{
  static const char prefix[] = "SEVERITY_NUMBER_";
  static const char *const names[] = { "UNSPECIFIED", "TRACE", "DEBUG", "INFO", "WARN",
                                       "ERROR", "FATAL" };
  gsize n = sizeof prefix - 1, text_len;
  char text[64];

  /* The longest name is 28 bytes; escaped, at most six times that. */
  if (v->len > 6 * 28 || (!v->escaped && v->len > sizeof text))
    return NULL;
  if (v->escaped)
    {
      char decoded[6 * 28];

      text_len = kt_json_unescape (v, decoded);
      if (text_len > sizeof text)
        return NULL;
      memcpy (text, decoded, text_len);
    }
  else
    memcpy (text, v->text, text_len = v->len);
  if (text_len <= n || memcmp (text, prefix, n) != 0)
    return NULL;
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      gsize l = strlen (names[i]);

      if (text_len - n >= l && memcmp (text + n, names[i], l) == 0
          && (text_len - n == l
              || (i > 0 && text_len - n == l + 1 && text[n + l] >= '2' && text[n + l] <= '4')))
        {
          *len = l;
          return names[i];
        }
    }
  return NULL;
}

static void
take_record (OtlpInput *self, const Record *r, guint number, KtTake *take)
{
  /* No key read: no attribute kept (and no array to point into). */
  const KtJsonValue *attrs = self->keys->len > 0
                             ? &g_array_index (self->attrs, KtJsonValue, r->attrs) : NULL;
  const KtJsonValue *time = is_zero (&r->time) ? &r->observed : &r->time;
  KtRecordFields f = { 0 };
  gsize escaped = 0, at = 0;

  if (r->element.type != KT_JSON_OBJECT)
    {
      take->record (take, r->element.text, r->element.len, number, NULL, KT_WHY_TYPE);
      return;
    }
  for (guint i = 0; i < self->keys->len; i++)
    escaped += attrs[i].escaped ? attrs[i].len : 0;
  escaped += r->text.escaped ? r->text.len : 0;
  escaped += time->escaped ? time->len : 0;  /* a time string may hold escapes too */
  if (escaped > 0)
    g_byte_array_set_size (self->decoded, (guint) escaped);

  if (!is_zero (time))
    field (self, time, &at, &f.time);
  f.time_unit = 9;
  f.level_map = KT_LEVELS_OTEL;
  if (r->text.type == KT_JSON_STRING && r->text.len > 0)
    field (self, &r->text, &at, &f.level);
  else if (r->text.type != KT_JSON_ABSENT && r->text.type != KT_JSON_STRING)
    f.level = (KtField) { KT_JSON_OBJECT, r->text.text, r->text.len };  /* no level: "type" */
  else if (r->number.type == KT_JSON_STRING)
    {
      gsize len = 0;
      const char *name = severity_name (&r->number, &len);

      f.level = name != NULL ? (KtField) { KT_JSON_STRING, name, len }
                             : (KtField) { KT_JSON_OBJECT, r->number.text, r->number.len };
    }
  else if (r->number.type == KT_JSON_ABSENT)
    f.level = (KtField) { KT_JSON_NUMBER, "0", 1 };
  else
    f.level = (KtField) { r->number.type, r->number.text, r->number.len };
  for (guint i = 0; i < self->n_dims; i++)
    if (!self->dim_is_level[i])
      field (self, &attrs[self->dim_at[i]], &at, &f.dims[i]);
  for (guint i = 0; i < self->n_sums; i++)
    field (self, &attrs[self->sum_at[i]], &at, &f.sums[i]);
  take->record (take, r->element.text, r->element.len, number, &f, 0);
}

static void
otlp_value (gpointer state, const char *value, gsize len, KtTake *take)
{
  OtlpInput *self = state;
  KtJsonValue *values = self->values;
  KtJsonType root;
  KtJsonBad bad;

  g_array_set_size (self->records, 0);
  g_array_set_size (self->attrs, 0);
  memset (self->record_now, 0, self->keys->len * sizeof (KtJsonValue));
  memset (self->resource_now, 0, self->keys->len * sizeof (KtJsonValue));
  self->resource_first = 0;
  self->misshapen = FALSE;
  if (!kt_json_scan (self->paths, value, len, values, &root, &bad, NULL))
    {
      take->record (take, value, len, 1, NULL, kt_input_json_why (bad));
      return;
    }
  if (root != KT_JSON_OBJECT)
    {
      take->record (take, value, len, 1, NULL, KT_WHY_SHAPE);
      return;
    }
  if (self->misshapen || !array_or_absent (&values[self->resource_logs]))
    {
      take->record (take, value, len, 1, NULL, KT_WHY_TYPE);
      return;
    }
  for (guint i = 0; i < self->records->len; i++)
    take_record (self, &g_array_index (self->records, Record, i), i + 1, take);
}

const KtInputClass kt_input_otlp = {
  .input = KT_INPUT_OTLP_JSON,
  .open = otlp_open,
  .close = otlp_close,
  .value = otlp_value,
};
