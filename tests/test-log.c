/* test-log.c - the log formats: what one record looks like in text, json
 * and logfmt, whatever bytes its message holds.
 *
 * Covers the format table (names, a refusal naming them all), the exit
 * error's one line in text, JSON that json-glib reads back with numbers as
 * numbers (controls, quotes, invalid UTF-8, an empty message), and logfmt
 * quoting (spaces, '=', quotes, backslashes, newlines, empty values). */
#include <string.h>
#include <json-glib/json-glib.h>
#include "error.h"
#include "log.h"

/* 2017-07-30T14:09:08.123Z */
#define T0 (G_GINT64_CONSTANT (1501423748) * G_USEC_PER_SEC + 123456)

static const KtLogField batch_fields[] = {
  { "event", "batch", FALSE, FALSE },
  { "job", "logs", FALSE, FALSE },
  { "batch", "12", TRUE, FALSE },
  { "records", "100000", TRUE, FALSE },
  { "duration", "0.112", TRUE, FALSE },
};

static char *
format (const KtLogFormat *f, const char *level, const char *message,
        const KtLogField *fields, guint n)
{
  KtLogRecord record = { T0, level, message, fields, n };
  GString *out = g_string_new (NULL);

  f->format (&record, out);
  return g_string_free (out, FALSE);
}

static void
test_lookup (void)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (kt_log_format_lookup ("text", NULL) == &kt_log_format_text);
  g_assert_true (kt_log_format_lookup ("json", NULL) == &kt_log_format_json);
  g_assert_true (kt_log_format_lookup ("logfmt", NULL) == &kt_log_format_logfmt);
  g_assert_null (kt_log_format_lookup ("JSON", &error));
  g_assert_error (error, KT_ERROR, KT_ERROR_USAGE);
  g_assert_nonnull (strstr (error->message, "--log-format: 'JSON'"));
  g_assert_nonnull (strstr (error->message, "text, json or logfmt"));
}

static void
test_text (void)
{
  g_autofree char *info = format (&kt_log_format_text, "info", "job logs: batch 12",
                                  batch_fields, G_N_ELEMENTS (batch_fields));
  g_autofree char *bug = format (&kt_log_format_text, "critical", "oops", NULL, 0);
  g_autofree char *exit_line = format (&kt_log_format_text, "error",
                                       "cannot connect to MySQL", NULL, 0);

  /* Local time: only the shape and the milliseconds are fixed. */
  g_assert_true (g_regex_match_simple ("^\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d\\.123 "
                                       "ktally info: job logs: batch 12$", info, 0, 0));
  g_assert_true (g_str_has_suffix (bug, " ktally BUG: oops"));
  g_assert_cmpstr (exit_line, ==, "ktally: cannot connect to MySQL");
}

/* Parses @text as one JSON object, or fails the test. */
static JsonObject *
parse_object (const char *text)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;

  g_assert_null (strchr (text, '\n'));
  json_parser_load_from_data (parser, text, -1, &error);
  g_assert_no_error (error);
  g_assert_cmpint (json_node_get_node_type (json_parser_get_root (parser)), ==, JSON_NODE_OBJECT);
  return json_object_ref (json_node_get_object (json_parser_get_root (parser)));
}

static void
test_json_fields (void)
{
  g_autofree char *text = format (&kt_log_format_json, "info", "job logs: batch 12",
                                  batch_fields, G_N_ELEMENTS (batch_fields));
  g_autoptr(JsonObject) o = parse_object (text);

  g_assert_cmpstr (text, ==, "{\"time\":\"2017-07-30T14:09:08.123Z\",\"level\":\"info\","
                   "\"message\":\"job logs: batch 12\",\"event\":\"batch\",\"job\":\"logs\","
                   "\"batch\":12,\"records\":100000,\"duration\":0.112}");
  g_assert_cmpint (json_node_get_value_type (json_object_get_member (o, "records")), ==,
                   G_TYPE_INT64);
  g_assert_cmpint (json_object_get_int_member (o, "records"), ==, 100000);
  g_assert_cmpfloat (json_object_get_double_member (o, "duration"), ==, 0.112);
  g_assert_cmpstr (json_object_get_string_member (o, "job"), ==, "logs");
}

/* A structured field (what a reload changed): the json format embeds it,
 * logfmt quotes it as a string. */
static void
test_structured (void)
{
  static const char changes[] = "[{\"setting\":\"interval\",\"from\":\"5\",\"to\":\"0.25\"}]";
  KtLogField field = { "applied", changes, FALSE, TRUE };
  g_autofree char *json = format (&kt_log_format_json, "info", "m", &field, 1);
  g_autofree char *logfmt = format (&kt_log_format_logfmt, "info", "m", &field, 1);
  g_autoptr(JsonObject) o = parse_object (json);
  JsonArray *applied;

  g_assert_cmpint (json_node_get_node_type (json_object_get_member (o, "applied")), ==,
                   JSON_NODE_ARRAY);
  applied = json_object_get_array_member (o, "applied");
  g_assert_cmpuint (json_array_get_length (applied), ==, 1);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (applied, 0),
                                                  "to"), ==, "0.25");
  g_assert_true (g_str_has_suffix (logfmt, " applied=\"[{\\\"setting\\\":\\\"interval\\\","
                                           "\\\"from\\\":\\\"5\\\",\\\"to\\\":\\\"0.25\\\"}]\""));
}

typedef struct
{
  const char *path;
  const char *message;   /* as logged */
  const char *read_back; /* what a JSON reader gets */
} JsonCase;

static const JsonCase json_cases[] = {
  { "/log/json/quotes", "a \"b\" \\c", "a \"b\" \\c" },
  { "/log/json/controls", "tab\tnl\ncr\rbell\a\x1f", "tab\tnl\ncr\rbell\a\x1f" },
  { "/log/json/invalid-utf8", "bad \xff\xfe end", "bad \xef\xbf\xbd\xef\xbf\xbd end" },
  { "/log/json/cut-utf8", "cut \xe2\x82", "cut \xef\xbf\xbd\xef\xbf\xbd" },
  { "/log/json/utf8", "caf\xc3\xa9 \xe2\x82\xac", "caf\xc3\xa9 \xe2\x82\xac" },
  { "/log/json/empty", "", "" },
};

static void
test_json_case (gconstpointer data)
{
  const JsonCase *c = data;
  KtLogField field = { "sample", c->message, FALSE, FALSE };
  g_autofree char *text = format (&kt_log_format_json, "warning", c->message, &field, 1);
  g_autoptr(JsonObject) o = parse_object (text);

  g_assert_cmpstr (json_object_get_string_member (o, "message"), ==, c->read_back);
  g_assert_cmpstr (json_object_get_string_member (o, "sample"), ==, c->read_back);
  g_assert_cmpstr (json_object_get_string_member (o, "level"), ==, "warning");
}

typedef struct
{
  const char *path;
  const char *value;
  const char *written;
} LogfmtCase;

static const LogfmtCase logfmt_cases[] = {
  { "/log/logfmt/bare", "logs", "logs" },
  { "/log/logfmt/space", "a b", "\"a b\"" },
  { "/log/logfmt/equals", "a=b", "\"a=b\"" },
  { "/log/logfmt/quote", "say \"hi\"", "\"say \\\"hi\\\"\"" },
  { "/log/logfmt/backslash", "C:\\x", "\"C:\\\\x\"" },
  { "/log/logfmt/newline", "a\nb\tc", "\"a\\nb\\tc\"" },
  { "/log/logfmt/control", "a\x01", "\"a\\u0001\"" },
  { "/log/logfmt/empty", "", "\"\"" },
  { "/log/logfmt/invalid-utf8", "x\xff", "x\xef\xbf\xbd" },
};

static void
test_logfmt_case (gconstpointer data)
{
  const LogfmtCase *c = data;
  KtLogField field = { "v", c->value, FALSE, FALSE };
  g_autofree char *text = format (&kt_log_format_logfmt, "info", "m", &field, 1);
  g_autofree char *want = g_strdup_printf ("time=2017-07-30T14:09:08.123Z level=info msg=m v=%s",
                                           c->written);

  g_assert_cmpstr (text, ==, want);
}

static void
test_logfmt_fields (void)
{
  g_autofree char *text = format (&kt_log_format_logfmt, "error", "cannot connect: refused",
                                  batch_fields, 3);

  g_assert_cmpstr (text, ==, "time=2017-07-30T14:09:08.123Z level=error "
                   "msg=\"cannot connect: refused\" event=batch job=logs batch=12");
}

/* The whole path, in a subprocess whose stderr is captured: events and
 * GLib's records through the writer, --verbose and --quiet, the exit. */
static void
test_writer (void)
{
  if (g_test_subprocess ())
    {
      g_autoptr(KtLogEvent) e = kt_log_event_new ("batch");

      g_log_set_always_fatal (G_LOG_FATAL_MASK);  /* GTest makes warnings fatal */
      kt_log_init ();
      kt_log_configure (&kt_log_format_json, FALSE, FALSE, KT_LOG_TO_STDERR);
      kt_log_event_string (e, "job", "j");
      kt_log_event_int (e, "lag", -7);
      /* Never a locale's decimal comma; NaN is no JSON number. */
      kt_log_event_double (e, "duration", 1.5, 3);
      kt_log_event_double (e, "nan", 0.0 / 0.0, 1);
      kt_log_event_emit (e, G_LOG_LEVEL_MESSAGE, "job %s: batch %d", "j", 3);
      kt_log_event_emit (e, G_LOG_LEVEL_DEBUG, "not without --verbose");
      g_message ("plain %s", "message");
      g_debug ("not without --verbose either");
      kt_log_configure (&kt_log_format_logfmt, FALSE, TRUE, KT_LOG_TO_STDERR);
      g_message ("not with --quiet");
      g_warning ("a warning");
      kt_log_exit (3, "cannot connect");
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
  g_test_trap_assert_stderr (
    "{\"time\":\"*Z\",\"level\":\"info\",\"message\":\"job j: batch 3\","
    "\"event\":\"batch\",\"job\":\"j\",\"lag\":-7,\"duration\":1.500,\"nan\":0.0}\n"
    "{\"time\":\"*\",\"level\":\"info\",\"message\":\"plain message\"}\n"
    "time=* level=warning msg=\"a warning\"\n"
    "time=* level=error msg=\"cannot connect\" event=exit exit_status=3\n");
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/log/lookup", test_lookup);
  g_test_add_func ("/log/text", test_text);
  g_test_add_func ("/log/json/fields", test_json_fields);
  g_test_add_func ("/log/json/structured", test_structured);
  for (gsize i = 0; i < G_N_ELEMENTS (json_cases); i++)
    g_test_add_data_func (json_cases[i].path, &json_cases[i], test_json_case);
  for (gsize i = 0; i < G_N_ELEMENTS (logfmt_cases); i++)
    g_test_add_data_func (logfmt_cases[i].path, &logfmt_cases[i], test_logfmt_case);
  g_test_add_func ("/log/logfmt/fields", test_logfmt_fields);
  g_test_add_func ("/log/writer", test_writer);
  return g_test_run ();
}
