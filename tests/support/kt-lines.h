/* kt-lines.h - kt-gen's log lines, for every program that needs them.
 *
 * One generator, linked into kt-gen (which writes the lines to Kafka),
 * kt-parse-bench (which parses them in memory) and kt-freshness (which
 * writes them at a steady rate): the same seed gives the same lines, bit
 * for bit, in all of them, on every machine (own PRNG, no rand(), no
 * locale or time zone). Lines are "YYYY-MM-DD HH:MM:SS LEVEL message";
 * about 30% are ERROR, a few per cent are near misses ("error",
 * "ERRORS") and --malformed per thousand are malformed in one of eight
 * ways. Times are naive seconds since 1970-01-01 00:00:00 on a proleptic
 * Gregorian clock. Test and benchmark infrastructure: never linked into
 * ktally. */
#pragma once
#include <glib.h>

typedef enum
{
  KT_LINES_ERROR,      /* well-formed, level exactly "ERROR": counted */
  KT_LINES_OTHER,      /* well-formed, another level */
  KT_LINES_MALFORMED,  /* never counted */
} KtLinesKind;

/* A stream of lines: the PRNG and the log clock. Plain data, no free. */
typedef struct
{
  guint64 rng;
  gint64  t;           /* log time of the next line, seconds */
  int     per_second;  /* > 0: the clock advances one second every N lines;
                        * <= 0: 0-3 s after every line (kt-gen's default) */
  int     in_second;
  guint   malformed;   /* per thousand */
  guint   min_bytes;   /* pad well-formed lines to at least this (0: no) */
} KtLines;

/* Starts a stream at log time @start. @min_bytes 0 gives kt-gen's
 * historical stream; padding draws more random words, so it changes the
 * lines after the first padded one (but stays deterministic). */
void        kt_lines_init     (KtLines *self, guint64 seed, gint64 start,
                               int per_second, guint malformed_permille,
                               guint min_bytes);

/* Appends the next line to @out (no newline), stores its log time in @t
 * (may be NULL) and advances the clock. */
KtLinesKind kt_lines_next   (KtLines *self, GString *out, gint64 *t);

/* Appends one line stamped @t, drawing from @self's PRNG but leaving its
 * clock alone: for callers that choose each line's time themselves. */
KtLinesKind kt_lines_append (KtLines *self, GString *out, gint64 t);

/* "YYYY-MM-DD HH:MM:SS" -> seconds; FALSE unless it is a real date and
 * time (2017-02-30 is refused). */
gboolean    kt_lines_parse_time (const char *text, gint64 *out);

/* Seconds -> "YYYY-MM-DD HH:MM:SS" (20 bytes with the NUL). */
void        kt_lines_format_time (gint64 t, char out[static 20]);

/* Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm):
 * exact for any date, and cheap enough to call per line. */
gint64      kt_lines_days_from_civil (gint64 y, unsigned m, unsigned d);

/* The exact truth: ERROR lines per minute, in kt-gen's --truth format.
 * Minutes must be added in ascending order (or repeated); a GArray of
 * KtLinesMinute is all it needs. */
typedef struct
{
  gint64  minute;  /* minutes since the epoch */
  guint64 count;
} KtLinesMinute;

GArray     *kt_lines_truth_new   (void);
/* Counts one ERROR line at log time @t (seconds). */
void        kt_lines_truth_add   (GArray *truth, gint64 t);
/* Writes "YYYY-MM-DD HH:MM:00<TAB>COUNT" lines, as `mariadb -N -B` prints
 * error_log ordered by time. */
gboolean    kt_lines_truth_write (GArray *truth, const char *path, GError **error);
