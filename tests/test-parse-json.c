/* test-parse-json.c - --input json (stages/parse-json.c, parse-record.c):
 * records written in the shapes their producers document (my own
 * records, in each one's shape: Fluent Bit's Kafka output, ECS loggers
 * and Filebeat, Logstash, Bunyan, pino, Zap, Logrus, slog, OpenTelemetry's
 * field names), read by the defaults without a flag; --time-field,
 * --level-field, --by and --sum by path; the numeric level maps; and each
 * hostile record malformed with its reason, never counted. */
#include "structured.h"

static const Job json = { .input = KT_INPUT_JSON };

/* Each producer's shape, read with no flag: the one record counts in
 * 2024-05-01 12:34 (UTC). */
static void
test_producers (void)
{
  static const char *const records[] = {
    /* Fluent Bit's Kafka output: timestamp_key @timestamp, a double. */
    "{\"@timestamp\":1714566896.123456,\"log\":\"boom\",\"stream\":\"stderr\",\"level\":\"error\","
    "\"kubernetes\":{\"namespace_name\":\"shop\",\"pod_name\":\"api-7d9\"}}",
    /* An ECS logger: dotted names, flat. */
    "{\"@timestamp\":\"2024-05-01T12:34:56.789Z\",\"log.level\":\"error\",\"message\":\"boom\","
    "\"ecs.version\":\"1.6.0\",\"service.name\":\"api\"}",
    /* Filebeat's ECS document: the same names, nested. */
    "{\"@timestamp\":\"2024-05-01T12:34:56.789Z\",\"log\":{\"level\":\"ERROR\",\"logger\":\"x\"},"
    "\"service\":{\"name\":\"api\"}}",
    /* Logstash's json (logstash-logback-encoder). */
    "{\"@timestamp\":\"2024-05-01T14:34:56.789+02:00\",\"@version\":\"1\",\"message\":\"boom\","
    "\"logger_name\":\"com.example.Api\",\"thread_name\":\"main\",\"level\":\"ERROR\","
    "\"level_value\":40000}",
    /* Bunyan: level 50, time RFC 3339. */
    "{\"name\":\"api\",\"hostname\":\"h1\",\"pid\":42,\"level\":50,\"msg\":\"boom\","
    "\"time\":\"2024-05-01T12:34:56.789Z\",\"v\":0}",
    /* pino: level 50, time in epoch milliseconds. */
    "{\"level\":50,\"time\":1714566896789,\"pid\":42,\"hostname\":\"h1\",\"msg\":\"boom\"}",
    /* Zap's production encoder: ts in epoch seconds, a float. */
    "{\"level\":\"error\",\"ts\":1714566896.7891235,\"caller\":\"api/main.go:42\",\"msg\":\"boom\","
    "\"stacktrace\":\"main.main\\n\\t/src/main.go:42\"}",
    /* Zap's development encoder: ISO 8601 with an offset without colon. */
    "{\"level\":\"error\",\"ts\":\"2024-05-01T14:34:56.789+0200\",\"msg\":\"boom\"}",
    /* Logrus's JSONFormatter. */
    "{\"level\":\"error\",\"msg\":\"boom\",\"time\":\"2024-05-01T14:34:56+02:00\"}",
    /* Go's log/slog JSONHandler. */
    "{\"time\":\"2024-05-01T14:34:56.789123+02:00\",\"level\":\"ERROR\",\"msg\":\"boom\","
    "\"svc\":\"api\"}",
    /* A GCP-style logger: severity. */
    "{\"severity\":\"ERROR\",\"timestamp\":\"2024-05-01T12:34:56.789Z\",\"message\":\"boom\"}",
    /* OpenTelemetry's field names, as a Collector's json exporter or
     * Vector write them. */
    "{\"timestamp\":\"2024-05-01T12:34:56.789Z\",\"severity_text\":\"Error\",\"body\":\"boom\"}",
    "{\"Timestamp\":\"1714566896789000000\",\"SeverityNumber\":17,\"Body\":\"boom\"}",
    "{\"timestamp\":1714566896789000000,\"severity_number\":18,\"body\":\"boom\"}",
  };

  for (guint i = 0; i < G_N_ELEMENTS (records); i++)
    ASSERT_PARSED (&json, records[i], "2024-05-01 12:34 x1; | lines=1 errors=1");
}

/* The same records of other levels count nothing; the first of the
 * default paths found is the field. */
static void
test_levels (void)
{
  ASSERT_PARSED (&json, "{\"level\":30,\"time\":1714566896789}", "| lines=1 errors=0");
  ASSERT_PARSED (&json, "{\"level\":60,\"time\":1714566896789}", "| lines=1 errors=0");
  ASSERT_PARSED (&json, "{\"level\":\"errors\",\"time\":1714566896}", "| lines=1 errors=0");
  ASSERT_PARSED (&json, "{\"level\":\"info\",\"log.level\":\"error\",\"ts\":1714566896}",
                 "2024-05-01 12:34 x1; | lines=1 errors=1");
  ASSERT_PARSED (&json, "{\"severity\":\"error\",\"level\":\"info\",\"ts\":1714566896}",
                 "| lines=1 errors=0");
  /* 17 is pino's nothing (its text) but OpenTelemetry's ERROR. */
  ASSERT_PARSED (&json, "{\"level\":17,\"ts\":1714566896}", "| lines=1 errors=0");
  ASSERT_PARSED (&json, "{\"severity_number\":17,\"ts\":1714566896}",
                 "2024-05-01 12:34 x1; | lines=1 errors=1");
  ASSERT_PARSED (&json, "{\"SeverityNumber\":21,\"ts\":1714566896}", "| lines=1 errors=0");
  {
    const Job fatal = { .input = KT_INPUT_JSON, .levels = "FATAL,WARN,35,UNSPECIFIED" };

    ASSERT_PARSED (&fatal, "{\"level\":60,\"ts\":1714566896}\n{\"level\":40,\"ts\":1714566896}\n"
                   "{\"level\":35,\"ts\":1714566896}\n{\"level\":\"Warn\",\"ts\":1714566896}\n"
                   "{\"severity_number\":24,\"ts\":1714566896}\n"
                   "{\"severity_number\":0,\"ts\":1714566896}\n"
                   "{\"level\":\"WARNING\",\"ts\":1714566896}",
                   "2024-05-01 12:34 x6; | lines=7 errors=6");
  }
}

/* --time-field, --level-field, --by and --sum by path; a path escaped. */
static void
test_paths (void)
{
  const Job by = { .input = KT_INPUT_JSON, .by = "service.name,level", .sum = "http.response.bytes" };
  const Job flat = { .input = KT_INPUT_JSON, .by = "service\\.name", .levels = "ERROR,WARN" };
  const Job fields = { .input = KT_INPUT_JSON, .time_field = "event.created", .level_field = "event.severity",
                       .levels = "3" };
  static const char two[] =
    "{\"@timestamp\":\"2024-05-01T12:34:56Z\",\"log\":{\"level\":\"error\"},\"service\":{\"name\":"
    "\"api\"},\"http\":{\"response\":{\"bytes\":512}}}\n"
    "{\"@timestamp\":\"2024-05-01T12:34:59Z\",\"log.level\":\"ERROR\",\"service.name\":\"api\","
    "\"http.response.bytes\":\"100.5\"}\n"
    "{\"@timestamp\":\"2024-05-01T12:35:00Z\",\"log.level\":\"Error\",\"service\":{\"name\":"
    "\"db\"},\"http\":{\"response\":{\"bytes\":-12}}}\n";

  ASSERT_PARSED (&by, two, "2024-05-01 12:34 api|ERROR x2 sum=612.5000; "
                           "2024-05-01 12:35 db|ERROR x1 sum=-12.0000; | lines=3 errors=3");
  /* Escaped, the dot is the member's: only the flat name. */
  ASSERT_PARSED (&flat, "{\"ts\":1714566896,\"level\":\"warn\",\"service.name\":\"a\"}\n"
                        "{\"ts\":1714566896,\"level\":\"warn\",\"service\":{\"name\":\"b\"}}",
                 "2024-05-01 12:34  x1; 2024-05-01 12:34 a x1; | lines=2 errors=2");
  ASSERT_PARSED (&fields, "{\"event\":{\"created\":\"2024-05-01T12:34:56Z\",\"severity\":3},"
                          "\"@timestamp\":\"2030-01-01T00:00:00Z\"}",
                 "2024-05-01 12:34 x1; | lines=1 errors=1");
  /* --by values of every type: a string, a number as written, true,
   * false, null and absent (empty); an object or an array: malformed. */
  {
    const Job types = { .input = KT_INPUT_JSON, .by = "v" };

    ASSERT_PARSED (&types, "{\"ts\":1714566896,\"level\":\"error\",\"v\":\"s\\u00e9\"}\n"
                           "{\"ts\":1714566896,\"level\":\"error\",\"v\":1.50}\n"
                           "{\"ts\":1714566896,\"level\":\"error\",\"v\":true}\n"
                           "{\"ts\":1714566896,\"level\":\"error\",\"v\":false}\n"
                           "{\"ts\":1714566896,\"level\":\"error\",\"v\":null}\n"
                           "{\"ts\":1714566896,\"level\":\"error\"}\n"
                           "{\"ts\":1714566896,\"level\":\"error\",\"v\":{}}\n"
                           "{\"ts\":1714566896,\"level\":\"error\",\"v\":[1]}\n"
                           "{\"ts\":1714566896,\"level\":\"info\",\"v\":[1]}",
                   "2024-05-01 12:34  x2; 2024-05-01 12:34 s\xc3\xa9 x1; 2024-05-01 12:34 1.50 x1; "
                   "2024-05-01 12:34 true x1; 2024-05-01 12:34 false x1; | lines=9 errors=6 "
                   "M7:type[{\"ts\":171456] M8:type[{\"ts\":171456]");
  }
  /* --sum: a number or a string of one, 4 decimals at most. */
  {
    const Job sums = { .input = KT_INPUT_JSON, .sum = "n" };

    ASSERT_PARSED (&sums, "{\"ts\":1714566896,\"level\":\"error\",\"n\":2}\n"
                          "{\"ts\":1714566896,\"level\":\"error\",\"n\":\"0.25\"}\n"
                          "{\"ts\":1714566896,\"level\":\"error\",\"n\":1e3}\n"
                          "{\"ts\":1714566896,\"level\":\"error\",\"n\":0.00001}\n"
                          "{\"ts\":1714566896,\"level\":\"error\",\"n\":true}\n"
                          "{\"ts\":1714566896,\"level\":\"error\"}",
                   "2024-05-01 12:34  x2 sum=2.2500; | lines=6 errors=2 M3:field[{\"ts\":171456] "
                   "M4:field[{\"ts\":171456] M5:field[{\"ts\":171456] M6:field[{\"ts\":171456]");
  }
}

/* Hostile records: each malformed with its reason, never counted, never
 * fatal; the good ones around them count. */
static void
test_hostile (void)
{
  static const struct { const char *record; gssize len; const char *why; } cases[] = {
    { "{\"ts\":1714566896,\"level\":\"error\"", -1, "json" },
    { "{\"ts\":1714566896,\"level\":\"error\"} {}", -1, "json" },
    { "{'ts':1714566896}", -1, "json" },
    { "{\"ts\":1714566896,\"level\":\"error\",}", -1, "json" },
    { "[{\"ts\":1714566896,\"level\":\"error\"}]", -1, "shape" },
    { "\"error\"", -1, "shape" },
    { "{\"level\":\"error\"}", -1, "missing" },
    { "{\"ts\":1714566896}", -1, "missing" },
    { "{\"ts\":{\"s\":1},\"level\":\"error\"}", -1, "type" },
    { "{\"ts\":true,\"level\":\"error\"}", -1, "type" },
    { "{\"ts\":1714566896,\"level\":true}", -1, "type" },
    { "{\"ts\":1714566896,\"level\":50.5}", -1, "type" },
    { "{\"ts\":1714566896,\"level\":null}", -1, "type" },
    { "{\"ts\":\"yesterday\",\"level\":\"error\"}", -1, "time" },
    { "{\"ts\":\"2024-02-30T00:00:00Z\",\"level\":\"error\"}", -1, "time" },
    { "{\"ts\":\"0999-12-31T23:59:59Z\",\"level\":\"error\"}", -1, "range" },
    { "{\"ts\":\"10000-01-01T00:00:00Z\",\"level\":\"error\"}", -1, "time" },
    { "{\"ts\":1e30,\"level\":\"error\"}", -1, "range" },
    { "{\"ts\":-99999999999,\"level\":\"error\"}", -1, "range" },
    { "{\"ts\":1714566896,\"level\":\"error\",\"msg\":\"a\\u0000b\"}", -1, "nul" },
    { "{\"ts\":1714566896,\"level\":\"error\",\"msg\":\"a\0b\"}", 45, "nul" },
    { "{\"ts\":1714566896,\"level\":\"error\",\"msg\":\"\xff\"}", -1, "utf8" },
    { "{\"ts\":1714566896,\"level\":\"error\",\"msg\":\"\xed\xa0\x80\"}", -1, "utf8" },
    { "{\"ts\":1714566896,\"level\":\"error\",\"msg\":\"\\ud800\"}", -1, "surrogate" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *want = g_strdup_printf ("| lines=1 errors=0 M1:%s[%.12s]", cases[i].why,
                                               cases[i].record);
      g_autofree char *got = parse_as (&json, cases[i].record, cases[i].len);

      g_test_message ("%s", cases[i].record);
      g_assert_cmpstr (got, ==, want);
    }
}

/* Nesting: 64 deep reads, 65 is malformed; a 4 MB record reads like a
 * small one (valid: counted; one byte wrong at its end: malformed). */
static void
test_deep_and_large (void)
{
  g_autoptr(GString) deep = g_string_new ("{\"ts\":1714566896,\"level\":\"error\",\"x\":");
  g_autoptr(GString) big = g_string_new ("{\"ts\":1714566896,\"level\":\"error\",\"msg\":\"");
  g_autofree char *got = NULL;

  for (int i = 0; i < 63; i++)
    g_string_append_c (deep, '[');
  g_string_append_c (deep, '1');
  for (int i = 0; i < 63; i++)
    g_string_append_c (deep, ']');
  g_string_append_c (deep, '}');
  got = parse_as (&json, deep->str, (gssize) deep->len);
  g_assert_cmpstr (got, ==, "2024-05-01 12:34 x1; | lines=1 errors=1");  /* the object and 63 arrays */
  g_clear_pointer (&got, g_free);
  g_string_insert_c (deep, 38, '[');
  g_string_insert_c (deep, (gssize) deep->len - 1, ']');
  got = parse_as (&json, deep->str, (gssize) deep->len);
  g_assert_cmpstr (got, ==, "| lines=1 errors=0 M1:depth[{\"ts\":171456]");
  g_clear_pointer (&got, g_free);

  while (big->len < 4 * 1024 * 1024)
    g_string_append (big, "caf\xc3\xa9 \\\"quoted\\\" and plain bytes, ");
  g_string_append (big, "\"}");
  got = parse_as (&json, big->str, (gssize) big->len);
  g_assert_cmpstr (got, ==, "2024-05-01 12:34 x1; | lines=1 errors=1");
  g_clear_pointer (&got, g_free);
  big->str[big->len - 1] = ']';
  got = parse_as (&json, big->str, (gssize) big->len);
  g_assert_cmpstr (got, ==, "| lines=1 errors=0 M1:json[{\"ts\":171456]");
}

/* A member named twice: the last wins (the level, a --by field, the time),
 * also between the nested and the dotted spelling. */
static void
test_repeated (void)
{
  const Job by = { .input = KT_INPUT_JSON, .by = "svc" };

  ASSERT_PARSED (&json, "{\"ts\":1714566896,\"level\":\"error\",\"level\":\"info\"}",
                 "| lines=1 errors=0");
  ASSERT_PARSED (&json, "{\"ts\":1714566896,\"level\":\"info\",\"level\":\"error\"}",
                 "2024-05-01 12:34 x1; | lines=1 errors=1");
  ASSERT_PARSED (&json, "{\"ts\":1,\"level\":\"error\",\"ts\":1714566896}",
                 "2024-05-01 12:34 x1; | lines=1 errors=1");
  ASSERT_PARSED (&json, "{\"ts\":1714566896,\"log\":{\"level\":\"info\"},\"log.level\":\"error\"}",
                 "2024-05-01 12:34 x1; | lines=1 errors=1");
  ASSERT_PARSED (&by, "{\"ts\":1714566896,\"level\":\"error\",\"svc\":\"a\",\"svc\":\"b\"}",
                 "2024-05-01 12:34 b x1; | lines=1 errors=1");
}

/* Lines: several records a value, CRLF, empty lines, numbers as text's. */
static void
test_lines (void)
{
  ASSERT_PARSED (&json, "{\"ts\":1714566896,\"level\":\"error\"}\r\n\n"
                        "not json\n{\"ts\":1714566956,\"level\":\"error\"}\n",
                 "2024-05-01 12:34 x1; 2024-05-01 12:35 x1; | lines=3 errors=2 M3:json[not json]");
}

/* Settings that could never match, refused before anything runs. */
static void
test_refused (void)
{
  const Job no_path = { .input = KT_INPUT_JSON, .time_field = "a..b" };
  const Job sum_level = { .input = KT_INPUT_JSON, .sum = "level" };
  const Job text_field = { .input = KT_INPUT_TEXT, .level_field = "level" };
  g_autofree char *a = refused (&json, "(?<time>\\S+) (?<level>\\w+)", NULL);
  g_autofree char *b = refused (&json, NULL, "iso8601");
  g_autofree char *c = refused (&no_path, NULL, NULL);
  g_autofree char *d = refused (&sum_level, NULL, NULL);
  g_autofree char *e = refused (&text_field, NULL, NULL);

  g_assert_true (g_str_has_prefix (a, "--pattern: it reads text lines; --input json"));
  g_assert_true (g_str_has_prefix (b, "--time-format: it reads text lines"));
  g_assert_true (g_str_has_prefix (c, "--time-field: 'a..b' is no field path"));
  g_assert_true (g_str_has_prefix (d, "--sum: 'level' is not a number"));
  g_assert_true (g_str_has_prefix (e, "--level-field: text lines have no fields by path"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/parse-json/producers", test_producers);
  g_test_add_func ("/parse-json/levels", test_levels);
  g_test_add_func ("/parse-json/paths", test_paths);
  g_test_add_func ("/parse-json/hostile", test_hostile);
  g_test_add_func ("/parse-json/deep-and-large", test_deep_and_large);
  g_test_add_func ("/parse-json/repeated", test_repeated);
  g_test_add_func ("/parse-json/lines", test_lines);
  g_test_add_func ("/parse-json/refused", test_refused);
  return g_test_run ();
}
