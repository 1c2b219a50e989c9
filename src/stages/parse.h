/* parse.h - the parse stage: log line -> minute + level.
 *
 * Text lines (--input text, the default): a line is
 * `YYYY-MM-DD HH:MM:SS LEVEL[ message]` from its first byte.
 * Only LEVEL exactly "ERROR" counts. Anything that does not match, or names
 * a date or time that does not exist, is malformed: counted, never fatal.
 * Second 60 (a leap second) exists and counts in its minute, as strptime's
 * %S has it. A line whose bucket (after any time zone conversion and the
 * truncation to --bucket) falls outside what a DATETIME column holds,
 * KT_MINUTE_MIN..KT_MINUTE_MAX, is malformed too: the sink could not
 * write it, and one such line must never fail a batch for ever.
 *
 * Structured records (--input json, logfmt, otlp-json) name their fields
 * by path (field-path.h): json reads one JSON object a line, logfmt one
 * line of key=value pairs, otlp-json a whole value (OTLP's
 * ExportLogsServiceRequest), each log record in it one record (what the
 * counts call a line). A record's time is RFC 3339 or an epoch number
 * (record-time.h), its minute the UTC one; its level compares with
 * --levels without regard to ASCII case, a numeric level first named by
 * its producer's numbers: pino's and Bunyan's 10 TRACE, 20 DEBUG, 30 INFO,
 * 40 WARN, 50 ERROR, 60 FATAL, or, read from OTLP's severityNumber or a
 * json field named severityNumber, severity_number or SeverityNumber,
 * OpenTelemetry's 1-4 TRACE, 5-8 DEBUG, 9-12 INFO, 13-16 WARN, 17-20
 * ERROR, 21-24 FATAL, 0 UNSPECIFIED; any other integer is its decimal
 * text. A record without a time or a level, with one of the wrong type
 * (a time neither string nor number, a level neither string nor integer),
 * with a time that is no time, or that is not the input's shape (not one
 * strict RFC 8259 object: invalid UTF-8, a NUL or "\u0000", a lone
 * surrogate escape, nesting past KT_INPUT_DEPTH) is malformed, with its
 * reason. Of several values found for one path (a member named twice, an
 * object on its way named twice, nested and dotted spellings), the last
 * in the text wins.
 * The parser never sees Kafka or MySQL. */
#pragma once
#include <glib.h>
#include "decimal.h"
#include "job-spec.h"
#include "keyed-counts.h"
#include "minutes.h"
#include "reduce.h"

/* --by and --sum: at most this many fields each. The key columns must fit
 * InnoDB's 3072-byte primary key, KT_DIMENSION_BYTES each, beside the
 * bucket (and, in idempotent mode, the job, topic and partition). */
#define KT_MAX_DIMENSIONS 8
#define KT_MAX_SUMS       8

/* The longest value a --by field keeps (its column is VARBINARY(255)). A
 * longer one is cut to its first 255 bytes, or fewer so as not to split a
 * UTF-8 character: when the first byte left out is a continuation byte
 * (10xxxxxx), the cut moves back to the start of that character, at most
 * 3 bytes (a longer run of continuation bytes is no character: cut at 255
 * bytes). Cut values count as one key. */
#define KT_DIMENSION_BYTES 255

/* KT_OTHER_KEY (job-spec.h): a counted line whose every --by value is
 * exactly it is malformed, so that the row only ever holds what was folded. */

typedef struct _KtParser KtParser;

/* What a record value holds (--input). */
typedef enum
{
  KT_INPUT_TEXT,       /* log lines, read by a pattern */
  KT_INPUT_JSON,       /* one JSON object a line */
  KT_INPUT_LOGFMT,     /* one line of key=value pairs */
  KT_INPUT_OTLP_JSON,  /* OTLP's logs in JSON, a request a value */
} KtInput;

/* --input's words, by KtInput. */
extern const char *const kt_input_names[];

/* JSON records (json, otlp-json) nested deeper than this (objects and
 * arrays, the root one 1) are malformed: OTLP's own shape takes 9 to an
 * attribute's value, ECS records fewer. */
#define KT_INPUT_DEPTH 64

/* MariaDB's DATETIME range as minutes since 1970-01-01 00:00:
 * 1000-01-01 00:00 and 9999-12-31 23:59. Every minute the parser hands on
 * lies within them (test-parse checks these against kt_minute_from_civil). */
#define KT_MINUTE_MIN G_GINT64_CONSTANT (-510170400)
#define KT_MINUTE_MAX G_GINT64_CONSTANT (4223371679)

/* The current time in microseconds since the epoch (UTC), as
 * g_get_real_time() gives it. */
typedef gint64 (*KtClockFunc) (gpointer user_data);

typedef enum
{
  KT_LINE_OTHER,      /* a well-formed line of another level */
  KT_LINE_ERROR,      /* a well-formed ERROR line: *minute is set */
  KT_LINE_MALFORMED,  /* does not parse, or no such date/time */
} KtLineKind;

/* Why a line is malformed: what a dead-letter table says of it. */
typedef enum
{
  KT_WHY_SHAPE,  /* "shape": not the format's line (the default one's, --pattern's) */
  KT_WHY_TIME,   /* "time": a date or time that does not exist, or that
                  * --time-format does not read */
  KT_WHY_RANGE,  /* "range": its bucket is outside what a DATETIME holds */
  KT_WHY_FIELD,  /* "field": a counted line whose --by values are all the (other)
                  * key, or whose --sum value is no number */
  /* Structured inputs only. */
  KT_WHY_JSON,       /* "json": not RFC 8259 JSON */
  KT_WHY_UTF8,       /* "utf8": invalid UTF-8 in a string (a logfmt key or value) */
  KT_WHY_NUL,        /* "nul": a NUL byte or "\u0000" in a string */
  KT_WHY_SURROGATE,  /* "surrogate": a lone UTF-16 surrogate escape */
  KT_WHY_DEPTH,      /* "depth": nested deeper than KT_INPUT_DEPTH */
  KT_WHY_MISSING,    /* "missing": no time or no level */
  KT_WHY_TYPE,       /* "type": a time, a level or a --by value of the wrong type, or
                      * an OTLP request whose parts are */
} KtMalformedWhy;

/* "shape", "time", "range", "field", "json", "utf8", "nul", "surrogate",
 * "depth", "missing", "type". */
const char *kt_malformed_why_name (KtMalformedWhy why);

/* Told of each malformed line kt_parser_value() and
 * kt_parser_value_keyed() meet, in order: its bytes (no '\n', one
 * trailing '\r' stripped; they point into the value), its number among
 * the value's lines (from 1, counting every '\n', so empty lines too: the
 * Nth line of the value as `sed -n Np` prints it) and why. */
typedef void (*KtMalformedFunc) (const char *line, gsize len, guint number,
                                 KtMalformedWhy why, gpointer user_data);

/* What one or more values held. Lines = errors + others + malformed. */
typedef struct
{
  guint64 lines;
  guint64 errors;
  guint64 malformed;
} KtParseCounts;

/* Any log format: what --input, --pattern, --time-format, --levels and
 * --bucket say. All NULL/0: the default format above. */
typedef struct
{
  const char        *pattern;      /* pcre2 with named groups `time` and `level` */
  const char        *time_format;  /* strptime-style, or "iso8601" / "syslog" */
  const char *const *levels;       /* the levels counted; NULL: {"ERROR"} */
  int                bucket;       /* minutes per bucket: 1 (default), 5, 60 */
  /* --by: "level" or named groups of the pattern, read from every counted
   * line into its key; NULL: none. */
  const char *const *dimensions;
  /* --sum: named groups of the pattern, each [-]digits[.digits] with at
   * most 4 decimals and at most 922337203685477.5807 either way
   * (decimal.h); a counted line with a group unset, empty or anything else
   * is malformed. NULL: none. Structured inputs: --by and --sum are field
   * paths, and "level" in --by is the record's level (ASCII upper case). */
  const char *const *sums;
  /* Structured inputs: the paths of the time and the level (field-path.h),
   * or NULL: the input's defaults, the first found of (json) @timestamp,
   * timestamp, time, ts, Timestamp and log.level, level, severity,
   * severity_text, SeverityText, severity_number, SeverityNumber; (logfmt)
   * ts, time, timestamp, @timestamp and level, lvl, severity, log.level.
   * otlp-json takes neither. */
  const char        *time_field;
  const char        *level_field;
  KtInput            input;        /* text (0, the default) or a structured input */
} KtParseFormat;

/* Compiles the pattern once, with JIT where the CPU allows it. Fails only
 * if pcre2 itself does (out of memory, a broken build). */
KtParser  *kt_parser_new   (GError **error);

/* The same for another format. A pattern that does not compile or lacks a
 * `time` or `level` group, or a time format with an unknown conversion or
 * that cannot place a line in time (no conversion at all, as "ISO8601";
 * no month, day, hour or minute), fails with KT_ERROR_USAGE naming the
 * option. Time formats take %Y %m %d %H %M %S %b (Jan..Dec) %e (day,
 * space padded) %T (%H:%M:%S) %F (%Y-%m-%d) %% and literal characters;
 * one without a year (%Y or %F) is dated by the syslog rule below, as
 * "syslog" is. "iso8601" is
 * YYYY-MM-DDTHH:MM:SS[.fraction](Z|+hh:mm|-hh:mm)? and converts an offset
 * to UTC; naive times are kept as written. "syslog" is "%b %e %H:%M:%S"
 * with no year, decided per line from the clock (kt_parser_set_clock()):
 * of next year, this year and last year (UTC), the latest in which the
 * date exists and which puts the line at most one day (1440 minutes)
 * after the current minute. A December line read in January is last
 * year's, a January line read on 31 December (a producer east of UTC) is
 * next year's, "Feb 29" goes to the latest leap year of the three that
 * is not ahead; none (a "Feb 29" read in January of a leap year) is
 * malformed. The day of slack covers producers' local time zones. */
KtParser  *kt_parser_new_format (const KtParseFormat *format, GError **error);
void       kt_parser_free  (KtParser *self);  /* NULL is fine */

/* @format with %F and %T spelled out (%Y-%m-%d, %H:%M:%S): two formats
 * that read the same lines the same way have one normal form. The
 * presets ("iso8601", "syslog") are their own. New string. */
char      *kt_parser_time_format_normal (const char *format);

/* Classifies one line of @len bytes (no '\n'; a trailing '\r' is part of
 * it here). Bytes after the level are opaque: NUL, invalid UTF-8, any
 * length. Not thread-safe: one parser per thread (it owns match data).
 * otlp-json reads whole values, not lines: see kt_parser_value(). */
KtLineKind kt_parser_line  (KtParser *self, const char *line, gsize len,
                            gint64 *minute);

/* The clock that dates syslog lines; NULL (the default) is
 * g_get_real_time(). Read once per syslog line, never by other formats.
 * Tests use it to stand on either side of New Year. */
void       kt_parser_set_clock (KtParser *self, KtClockFunc clock, gpointer user_data);

/* Who hears of each malformed line (NULL: nobody, the default). */
void       kt_parser_set_malformed_func (KtParser *self, KtMalformedFunc func,
                                         gpointer user_data);

/* Why the last line kt_parser_line() found malformed was. */
KtMalformedWhy kt_parser_why (KtParser *self);

/* Whether @self reads the default line format by its fixed positions and
 * the ERROR shortcut (what the default options, spelled out or not, give)
 * rather than through a general pattern. */
gboolean   kt_parser_fast_path    (const KtParser *self);

/* pcre2's version, "10.42 2022-12-11". New string. */
char      *kt_parser_library_version (void);

/* Tests only: with @enabled FALSE, every line goes through pcre2 (no ERROR
 * shortcut), so that both paths can be compared. */
void       kt_parser_set_shortcut (KtParser *self, gboolean enabled);

/* Splits @value on '\n' (one trailing '\r' per line is stripped; empty lines,
 * including the one after a final '\n', are not lines; otlp-json: each log
 * record of the value is a line, numbered from 1 in document order, and a
 * value that is not one request is one malformed line), counts ERROR lines
 * into @reducer and adds to @counts. NULL or empty values hold no lines.
 * Returns the number of malformed lines and, if @first_bad is not NULL and
 * there was one, points it (and @first_bad_len) at the first inside @value. */
guint64    kt_parser_value (KtParser *self, const char *value, gsize len,
                            KtReducer *reducer, KtParseCounts *counts,
                            const char **first_bad, gsize *first_bad_len);

/* Whether the parser reads --by or --sum fields: then every value goes
 * through kt_parser_value_keyed(), never kt_parser_value(). */
gboolean   kt_parser_has_fields (KtParser *self);

/* kt_parser_value() for a parser with fields: each counted line goes to
 * @keyed with its bucket, its key and its sums. A line's key is, for
 * each --by field in order, one byte giving the length of its value (0 to
 * KT_DIMENSION_BYTES; a group that matched nothing or took no part is the
 * empty value) and the value's bytes, cut as KT_DIMENSION_BYTES says. */
guint64    kt_parser_value_keyed (KtParser *self, const char *value, gsize len,
                                   KtKeyedCounts *keyed, KtParseCounts *counts,
                                   const char **first_bad, gsize *first_bad_len);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (KtParser, kt_parser_free)
