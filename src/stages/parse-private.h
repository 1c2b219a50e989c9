/* parse-private.h - the parser's insides, shared by the parse stage's own
 * files: parse.c (text lines, what a value holds) and parse-record.c
 * (structured records). Nothing outside src/stages/ includes it. */
#pragma once
#include <glib.h>
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include "parse.h"
#include "parse-input.h"

G_DEFINE_AUTOPTR_CLEANUP_FUNC (pcre2_code, pcre2_code_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (pcre2_match_data, pcre2_match_data_free)

typedef enum
{
  TIME_STRPTIME,
  TIME_ISO8601,
  TIME_SYSLOG,
} TimeKind;

struct _KtParser
{
  pcre2_code       *code;
  pcre2_match_data *match;
  gboolean          jit;
  gboolean          shortcut;  /* the ERROR fast path (on unless testing) */
  /* The last valid timestamp and its minute: log lines come in time order,
   * so most lines repeat the previous one's and skip the calendar. */
  char              last_ts[19];
  gint64            last_minute;
  gboolean          have_last;
  /* Another format (custom is FALSE for the default one). */
  gboolean          custom;
  guint32           time_group, level_group;
  TimeKind          time_kind;
  char             *time_format;
  gboolean          no_year;      /* time_format has no %Y: the syslog rule dates lines */
  GStrv             levels;
  int               bucket;
  KtClockFunc       clock;        /* dates syslog lines; NULL: g_get_real_time */
  gpointer          clock_data;
  /* --by and --sum: their groups, and what the last counted line held. */
  guint             n_dims, n_sums;
  guint32           dim_group[KT_MAX_DIMENSIONS];
  guint32           sum_group[KT_MAX_SUMS];
  guint8            key[KT_MAX_DIMENSIONS * (KT_DIMENSION_BYTES + 1)];
  gsize             key_len;
  KtAmount          sums[KT_MAX_SUMS];
  /* A structured input (--input json, logfmt, otlp-json), or NULL: text
   * lines; its state, what it reads, and which --by field is the level. */
  const KtInputClass *input;
  gpointer          input_state;
  KtInputPaths      paths;
  gboolean          dim_is_level[KT_MAX_DIMENSIONS];
  /* Why the last malformed line was, and who hears of each one. */
  KtMalformedWhy    why;
  KtMalformedFunc   malformed_func;
  gpointer          malformed_data;
};

/* A malformed line, and why (kt_parser_why()). */
#define MALFORMED(self, w) ((self)->why = (w), KT_LINE_MALFORMED)

/* parse-record.c: a parser of @format's structured input (--by and --sum
 * paths, --levels, --bucket taken as the text parser takes them), its
 * refusals KT_ERROR_USAGE naming the option; and its end. */
gboolean   kt_records_open  (KtParser *self, const KtParseFormat *format, GError **error);
void       kt_records_close (KtParser *self);

/* One line of a line input, as kt_parser_line(). */
KtLineKind kt_records_line  (KtParser *self, const char *line, gsize len, gint64 *minute);

/* A whole value of a value input, as kt_parser_value() counts one. */
guint64    kt_records_value (KtParser *self, const char *value, gsize len, KtReducer *reducer,
                             KtKeyedCounts *keyed, KtParseCounts *counts,
                             const char **first_bad, gsize *first_bad_len);
