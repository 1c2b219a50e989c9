/* structured.h - what the structured-input unit tests share: a job's
 * settings in, what the parser made of a value out, as one line of text
 * that a test compares. Included by test-parse-json.c, test-parse-logfmt.c
 * and test-parse-otlp.c. */
#pragma once
#include <string.h>
#include "error.h"
#include "keyed-counts.h"
#include "minutes.h"
#include "parse.h"
#include "reduce.h"

typedef struct
{
  KtInput     input;
  const char *levels;       /* "A,B" or NULL: ERROR */
  const char *by;           /* "a,b" or NULL */
  const char *sum;
  const char *time_field;
  const char *level_field;
  int         bucket;
} Job;

static void
heard_malformed (const char *line, gsize len, guint number, KtMalformedWhy why, gpointer data)
{
  GString *out = data;

  g_string_append_printf (out, " M%u:%s", number, kt_malformed_why_name (why));
  /* Its bytes are the record's: the first few, to tell which. */
  g_string_append_printf (out, "[%.*s]", (int) MIN (len, 12), line);
}

/* The rows @job's parser counts from @value (@len, -1: strlen), then the
 * malformed records: "2024-05-01 12:34 x3; 2024-05-01 12:35 api|ERROR x1
 * sum=512.0000; | lines=5 errors=4 M2:json[{...]". */
static char *
parse_as (const Job *job, const char *value, gssize len)
{
  g_auto(GStrv) levels = job->levels != NULL ? g_strsplit (job->levels, ",", -1) : NULL;
  g_auto(GStrv) by = job->by != NULL ? g_strsplit (job->by, ",", -1) : NULL;
  g_auto(GStrv) sum = job->sum != NULL ? g_strsplit (job->sum, ",", -1) : NULL;
  KtParseFormat format = {
    .levels = (const char *const *) levels, .bucket = job->bucket,
    .dimensions = (const char *const *) by, .sums = (const char *const *) sum,
    .time_field = job->time_field, .level_field = job->level_field, .input = job->input,
  };
  g_autoptr(GError) error = NULL;
  g_autoptr(KtParser) parser = kt_parser_new_format (&format, &error);
  g_autoptr(GString) out = g_string_new (NULL);
  g_autoptr(GString) bad = g_string_new (NULL);
  g_autofree char *copy = NULL;
  KtParseCounts counts = { 0 };
  gsize n = len < 0 ? strlen (value) : (gsize) len;

  g_assert_no_error (error);
  copy = g_memdup2 (value, n);  /* exactly its bytes: ASan sees a read past them */
  kt_parser_set_malformed_func (parser, heard_malformed, bad);
  if (kt_parser_has_fields (parser))
    {
      g_autoptr(KtKeyLimit) limit = kt_key_limit_new (1000);
      g_autoptr(KtKeyedCounts) keyed = kt_keyed_counts_new (-1, sum != NULL ? g_strv_length (sum) : 0,
                                                            limit);
      g_autoptr(GArray) rows = NULL;

      kt_parser_value_keyed (parser, copy, n, keyed, &counts, NULL, NULL);
      rows = kt_keyed_counts_sorted (keyed);
      for (guint i = 0; i < rows->len; i++)
        {
          const KtKeyedRow *r = &g_array_index (rows, KtKeyedRow, i);
          char when[20];

          kt_minute_format (r->bucket, when);
          g_string_append_printf (out, "%.16s ", when);
          for (const guint8 *k = r->key; k < r->key + r->key_len; k += 1 + k[0])
            g_string_append_printf (out, "%s%.*s", k == r->key ? "" : "|", k[0], k + 1);
          g_string_append_printf (out, " x%" G_GUINT64_FORMAT, r->count);
          for (guint s = 0; sum != NULL && s < g_strv_length (sum); s++)
            {
              char text[48];

              kt_sum_format (r->sums[s], text);
              g_string_append_printf (out, " sum=%s", text);
            }
          g_string_append (out, "; ");
        }
    }
  else
    {
      g_autoptr(KtReducer) reducer = kt_reducer_new ();
      g_autoptr(GArray) rows = NULL;

      kt_parser_value (parser, copy, n, reducer, &counts, NULL, NULL);
      rows = kt_reducer_sorted (reducer);
      for (guint i = 0; i < rows->len; i++)
        {
          const KtMinuteCount *mc = &g_array_index (rows, KtMinuteCount, i);
          char when[20];

          kt_minute_format (mc->minute, when);
          g_string_append_printf (out, "%.16s x%" G_GUINT64_FORMAT "; ", when, mc->count);
        }
    }
  g_assert_cmpuint (counts.lines, >=, counts.errors + counts.malformed);
  g_string_append_printf (out, "| lines=%" G_GUINT64_FORMAT " errors=%" G_GUINT64_FORMAT "%s",
                          counts.lines, counts.errors, bad->str);
  return g_string_free (g_steal_pointer (&out), FALSE);
}

/* Asserts what @job makes of @value. */
#define ASSERT_PARSED(job, value, want) \
  G_STMT_START { \
    g_autofree char *got_ = parse_as ((job), (value), -1); \
    g_test_message ("%s", (value)); \
    g_assert_cmpstr (got_, ==, (want)); \
  } G_STMT_END

/* The first line of the error a job's settings get. */
static char *
refused (const Job *job, const char *pattern, const char *time_format)
{
  g_auto(GStrv) by = job->by != NULL ? g_strsplit (job->by, ",", -1) : NULL;
  g_auto(GStrv) sum = job->sum != NULL ? g_strsplit (job->sum, ",", -1) : NULL;
  KtParseFormat format = {
    .pattern = pattern, .time_format = time_format,
    .dimensions = (const char *const *) by, .sums = (const char *const *) sum,
    .time_field = job->time_field, .level_field = job->level_field, .input = job->input,
  };
  g_autoptr(GError) error = NULL;
  g_autoptr(KtParser) parser = kt_parser_new_format (&format, &error);

  g_assert_null (parser);
  g_assert_error (error, KT_ERROR, KT_ERROR_USAGE);
  return g_strdup (error->message);
}
