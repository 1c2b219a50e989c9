/* kt-shapes.h - kt-gen's log analytics lines (--shape), with the truth
 * per (bucket, key) and the exact sums.
 *
 * Three shapes, each with the fields `ktally run --by/--sum` reads and the
 * ktally options that read them (kt_shaped_options(), `kt-gen --shape S
 * --print-options`), so a test takes the options and the truth from one
 * place:
 *   access  nginx's combined format and a service at the end:
 *           10.0.3.7 - - [30/Jul/2017:14:09:08 +0000] "GET /v1/items HTTP/1.1"
 *           503 1234 "-" "curl/7.88" "svc-12"
 *           fields service, status (by), bytes (sum); the level is the
 *           status class (4,5 by default: failed requests)
 *   syslog  Jul 30 14:09:08 web-03 app[123]: ERROR disk full
 *           fields host, level (by); --time-format syslog, no year: the
 *           clock starts two days ago unless --start says otherwise
 *   json    {"ts":"2017-07-30T16:09:08.123+02:00","level":"ERROR",
 *           "service":"auth","latency_ms":12.5,"msg":"..."}
 *           fields level, service (by), latency_ms (sum); iso8601 with
 *           offsets (the truth is in UTC), --bucket 5m by default
 *   ecs     --input json: records as Fluent Bit forwards them and ECS
 *           loggers (and pino) write them: {"@timestamp":"...","log":
 *           {"level":"error"},"service":{"name":"api"},"http":{"response":
 *           {"bytes":512}},...}, nested or with dotted names, times in RFC
 *           3339 or epoch numbers, levels in any case or pino's numbers;
 *           fields service.name, level (by), http.response.bytes (sum)
 *   logfmt  --input logfmt: ts=... level=error svc=api bytes=512 msg="..."
 *           in any key order; fields svc, level (by), bytes (sum)
 *   otlp    --input otlp-json: each Kafka value one OTLP request of the
 *           value's records (--lines-per-value) over one or two resources,
 *           service.name a resource attribute (now and then a record's
 *           own); fields service.name, level (by), http.response.body.size
 *           (sum)
 * The structured shapes' bad records are bad in the ways hostile input
 * is (cut short, a NUL or a lone surrogate escaped, invalid UTF-8, nested
 * 71 deep, no time, a level of the wrong type, go-logfmt's refusals; for
 * otlp also a whole request cut short, with a NUL, or of the wrong shape,
 * none of whose records counts).
 * Values include UTF-8 (every fifth key) and the empty one (key 0), and
 * --malformed per thousand lines are bad: lines no pattern reads, and
 * sums that are no number ("-", "1e3", five decimals, past the 64-bit
 * bound), which are malformed only on a counted line. The truth is
 * independent of ktally: values are drawn as numbers and then printed.
 * Test infrastructure: never linked into ktally. */
#pragma once
#include <glib.h>
#include "kt-lines.h"

typedef struct _KtShaped KtShaped;

/* A stream of @shape's lines from log time @start (seconds; for syslog,
 * 0 means two days ago), the clock advancing one second every
 * @per_second lines (<= 0: 0-3 s a line). @keys distinct services (or
 * hosts), each line's drawn at random or, with @cycle, line i's is
 * i % @keys. The truth is per bucket of @bucket minutes and the fields
 * of @by (comma-separated, NULL: the shape's), counting the levels of
 * @levels (NULL: the shape's). NULL with @error on a bad argument. */
KtShaped    *kt_shaped_new     (const char *shape, guint64 seed, gint64 start, int per_second,
                                guint malformed_permille, guint keys, gboolean cycle,
                                const char *by, const char *levels, int bucket,
                                GError **error);
void         kt_shaped_free    (KtShaped *self);

/* Appends the next line to @out (no newline) and adds it to the truth. */
KtLinesKind  kt_shaped_next    (KtShaped *self, GString *out);

/* Whether a value is one request of records (otlp), not lines. */
gboolean     kt_shaped_per_value (KtShaped *self);

/* Appends one Kafka value of @n records to @out: @n lines joined by '\n',
 * or one request of @n log records; adds them to the truth, and each to
 * @kinds[KtLinesKind]. */
void         kt_shaped_value   (KtShaped *self, GString *out, guint n, guint64 *kinds);

/* The `ktally run` options this truth is for: --input or --pattern and
 * --time-format, --levels, --bucket, --by and --sum. A new
 * NULL-terminated array. */
char       **kt_shaped_options (KtShaped *self);

/* Writes the truth: one line per (bucket, key),
 * "YYYY-MM-DD HH:MM:00<TAB>value...<TAB>COUNT[<TAB>SUM]", the values in
 * --by's order, the sum as MySQL prints DECIMAL(38,4), sorted bytewise
 * (LC_ALL=C sort), as `mariadb -N -B` prints the table's columns in that
 * order piped through it. */
gboolean     kt_shaped_truth_write (KtShaped *self, const char *path, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (KtShaped, kt_shaped_free)
