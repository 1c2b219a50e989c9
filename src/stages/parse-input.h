/* parse-input.h - the structured inputs behind a KtParser: private to the
 * parse stage.
 *
 * parse.c owns the parser and what it counts; each structured input reads
 * a record's fields and hands them back, one file each: json
 * (parse-json.c: one object a line), logfmt (parse-logfmt.c: one line of
 * key=value pairs) and otlp-json (parse-otlp.c: a whole value, OTLP's
 * ExportLogsServiceRequest, each log record in it). What the fields then
 * mean (the minute, the level, the key, the sums, why a record is
 * malformed) is decided once, in parse-record.c, the same for
 * every input. An input never sees Kafka or MySQL, and never counts. */
#pragma once
#include <glib.h>
#include "json-scan.h"
#include "parse.h"

/* One field of a record: its type (KT_JSON_ABSENT: not there) and its
 * bytes, strings decoded (no quotes, no escapes), numbers as written. */
typedef struct
{
  KtJsonType  type;
  const char *text;
  gsize       len;
} KtField;

/* Which producer's numbers a numeric level is (parse.h). */
typedef enum
{
  KT_LEVELS_PINO,  /* pino and Bunyan: 10 TRACE ... 60 FATAL */
  KT_LEVELS_OTEL,  /* OpenTelemetry's severityNumber: 1-4 TRACE ... 21-24 FATAL */
} KtLevelMap;

/* What a structured record holds of what the job reads. */
typedef struct
{
  KtField    time;
  int        time_unit;   /* kt_stamp_epoch()'s unit digits for a number: -1 by size */
  KtField    level;
  KtLevelMap level_map;
  KtField    dims[KT_MAX_DIMENSIONS];  /* --by fields in order ("level": unused) */
  KtField    sums[KT_MAX_SUMS];
} KtRecordFields;

/* What a structured input reads: the paths (field-path.h's names, a
 * NULL-terminated array each) of the time and the level, each a list
 * tried in order (the first found is the field), and of --by and --sum. */
typedef struct
{
  GPtrArray *time;               /* GStrv each */
  GPtrArray *level;              /* GStrv each */
  GArray    *level_maps;         /* KtLevelMap, one per level path */
  guint      n_dims, n_sums;
  gboolean   dim_is_level[KT_MAX_DIMENSIONS];  /* --by level: the level, read as above */
  GStrv      dims[KT_MAX_DIMENSIONS];          /* NULL for level */
  GStrv      sums[KT_MAX_SUMS];
} KtInputPaths;

/* Where one value's records go (parse-record.c): @record is told of each
 * record of the value, its bytes (for the dead letters: they point into
 * the value), its number in the value (from 1) and its fields, or NULL
 * with @why when it is malformed before any field could be read. A
 * function, not a name, so that the inputs depend on nothing above them. */
typedef struct _KtTake KtTake;
struct _KtTake
{
  void (*record) (KtTake *take, const char *raw, gsize len, guint number,
                  const KtRecordFields *fields, KtMalformedWhy why);
};

/* An input: one file each. */
typedef struct
{
  KtInput  input;
  /* Its state for @paths, or NULL with KT_ERROR_USAGE. */
  gpointer (*open)  (const KtInputPaths *paths, GError **error);
  void     (*close) (gpointer state);
  /* A line input: one line's fields into @out, or FALSE with *@why. */
  gboolean (*line)  (gpointer state, const char *line, gsize len, KtRecordFields *out,
                     KtMalformedWhy *why);
  /* A value input: each record of the value to @take, in order. */
  void     (*value) (gpointer state, const char *value, gsize len, KtTake *take);
} KtInputClass;

extern const KtInputClass kt_input_json, kt_input_logfmt, kt_input_otlp;

/* The reason for a text the JSON scanner refused. */
KtMalformedWhy kt_input_json_why (KtJsonBad bad);
