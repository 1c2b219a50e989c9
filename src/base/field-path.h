/* field-path.h - a field of a structured log record named by its path, as
 * --time-field, --level-field, --by and --sum take it.
 *
 * A path is names separated by dots: `service.name` is the member name
 * of the member service. A backslash makes the next character part of the
 * name: `log\.level` is one member named "log.level" (ECS's and OTel's
 * dotted names), `a\\b` a name holding a backslash. A name is never empty
 * (no leading, trailing or double dot). Two spellings of one path (a
 * backslash before a character that needs none) have one normal form,
 * with only the backslashes needed. What a path finds in each input (a
 * member nested or dotted, a logfmt key, an OTLP attribute) is the
 * input's (stages/parse.h). Pure: text in, text out. */
#pragma once
#include <glib.h>

/* At most this many names, each at most KT_FIELD_NAME_BYTES, at most
 * KT_FIELD_PATH_BYTES in all: what the JSON scanner compares. */
#define KT_FIELD_PATH_NAMES 16
#define KT_FIELD_NAME_BYTES 255
#define KT_FIELD_PATH_BYTES 600

/* The names of path @text, or NULL with KT_ERROR_USAGE naming @flag and
 * saying what a path is. */
GStrv  kt_field_path_parse  (const char *flag, const char *text, GError **error);

/* The normal form of @text: its names, '.' and '\' escaped, joined with
 * dots. A text that is no path is its own normal form. New string. */
char  *kt_field_path_normal (const char *text);

/* The names of path @text joined with dots, no escapes: the one key a
 * flat record (a logfmt line, OTLP's attributes) names by it; NULL when
 * @text is no path. New string. */
char  *kt_field_path_key    (const char *text);

/* The column a --by or --sum field @text names in a count table: its key
 * (above) with every byte but [A-Za-z0-9_] made '_', and '_' before a
 * leading digit: `service.name` is service_name, `@timestamp` _timestamp;
 * a name of a --pattern group is itself. New string (@text itself when it
 * is no path). */
char  *kt_field_column      (const char *text);
