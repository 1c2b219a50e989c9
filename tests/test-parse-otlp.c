/* test-parse-otlp.c - --input otlp-json (stages/parse-otlp.c): requests
 * in the shape OTLP/JSON documents and the Collector's Kafka exporter
 * writes (encoding otlp_json; my own requests): each log record counted
 * once across resources and scopes, its time from timeUnixNano or
 * observedTimeUnixNano, its level from severityText or severityNumber
 * (a number or its enum name), --by and --sum on the record's attributes
 * or its resource's (service.name), and a request that is not one of
 * this shape malformed once, a bad record by its number. */
#include "structured.h"

static const Job otlp = { .input = KT_INPUT_OTLP_JSON };
static const Job by = { .input = KT_INPUT_OTLP_JSON, .by = "service.name,level",
                        .sum = "http.response.body.size", .levels = "ERROR,WARN" };

/* Two resources, three scopes, five records; the resource's attributes
 * after its scopeLogs in the second (member order is free). */
static const char request[] =
  "{\"resourceLogs\":["
  "{\"resource\":{\"attributes\":[{\"key\":\"service.name\",\"value\":{\"stringValue\":\"api\"}},"
  "{\"key\":\"host.name\",\"value\":{\"stringValue\":\"h1\"}}]},"
  "\"scopeLogs\":[{\"scope\":{\"name\":\"net/http\",\"version\":\"1.0\"},\"logRecords\":["
  "{\"timeUnixNano\":\"1714566896123456789\",\"observedTimeUnixNano\":\"1714566897000000000\","
  "\"severityNumber\":17,\"severityText\":\"ERROR\",\"body\":{\"stringValue\":\"boom\"},"
  "\"attributes\":[{\"key\":\"http.response.body.size\",\"value\":{\"intValue\":\"512\"}}],"
  "\"traceId\":\"5b8efff798038103d269b633813fc60c\",\"spanId\":\"eee19b7ec3c1b174\"},"
  "{\"timeUnixNano\":\"0\",\"observedTimeUnixNano\":\"1714566956000000000\",\"severityNumber\":13,"
  "\"attributes\":[{\"key\":\"http.response.body.size\",\"value\":{\"intValue\":7}}]}]},"
  "{\"scope\":{\"name\":\"db\"},\"logRecords\":[{\"timeUnixNano\":1714566896000000000,"
  "\"severityText\":\"Info\",\"severityNumber\":9}]}]},"
  "{\"scopeLogs\":[{\"logRecords\":["
  "{\"timeUnixNano\":\"1714566896000000000\",\"severityNumber\":\"SEVERITY_NUMBER_ERROR2\","
  "\"attributes\":[{\"key\":\"service.name\",\"value\":{\"stringValue\":\"override\"}},"
  "{\"key\":\"http.response.body.size\",\"value\":{\"doubleValue\":0.5}}]},"
  "{\"observedTimeUnixNano\":\"1714566896000000000\",\"severityText\":\"error\","
  "\"attributes\":[{\"key\":\"http.response.body.size\",\"value\":{\"stringValue\":\"1\"}}]}]}],"
  "\"resource\":{\"attributes\":[{\"key\":\"service.name\",\"value\":{\"stringValue\":\"db\"}}],"
  "\"droppedAttributesCount\":0}}]}";

static void
test_request (void)
{
  ASSERT_PARSED (&otlp, request, "2024-05-01 12:34 x3; | lines=5 errors=3");
  ASSERT_PARSED (&by, request, "2024-05-01 12:34 db|ERROR x1 sum=1.0000; "
                               "2024-05-01 12:34 api|ERROR x1 sum=512.0000; "
                               "2024-05-01 12:34 override|ERROR x1 sum=0.5000; "
                               "2024-05-01 12:35 api|WARN x1 sum=7.0000; | lines=5 errors=4");
}

/* Levels: severityText first (any case), then severityNumber by
 * OpenTelemetry's ranges, its enum name, else UNSPECIFIED. */
static void
test_levels (void)
{
  const Job all = { .input = KT_INPUT_OTLP_JSON, .by = "level",
                    .levels = "ERROR,FATAL,UNSPECIFIED,INFO,Oops,25" };

  ASSERT_PARSED (&all, "{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":["
                       "{\"timeUnixNano\":\"1714566896000000000\",\"severityNumber\":20},"
                       "{\"timeUnixNano\":\"1714566896000000000\",\"severityNumber\":21},"
                       "{\"timeUnixNano\":\"1714566896000000000\"},"
                       "{\"timeUnixNano\":\"1714566896000000000\",\"severityNumber\":0},"
                       "{\"timeUnixNano\":\"1714566896000000000\",\"severityText\":\"\","
                       "\"severityNumber\":\"SEVERITY_NUMBER_INFO4\"},"
                       "{\"timeUnixNano\":\"1714566896000000000\",\"severityText\":\"oops\"},"
                       "{\"timeUnixNano\":\"1714566896000000000\",\"severityNumber\":25},"
                       "{\"timeUnixNano\":\"1714566896000000000\",\"severityNumber\":\"LOUD\"},"
                       "{\"timeUnixNano\":\"1714566896000000000\",\"severityText\":3}"
                       "]}]}]}",
                 "2024-05-01 12:34 25 x1; 2024-05-01 12:34 INFO x1; 2024-05-01 12:34 OOPS x1; "
                 "2024-05-01 12:34 ERROR x1; 2024-05-01 12:34 FATAL x1; "
                 "2024-05-01 12:34 UNSPECIFIED x2; | lines=9 errors=7 "
                 "M8:type[{\"timeUnixNa] M9:type[{\"timeUnixNa]");
}

/* A bad record is one malformed line (its number, its own bytes); a
 * request that is not one strict JSON text of this shape is one
 * malformed line, and none of its records counts. */
static void
test_hostile (void)
{
  static const struct { const char *value; const char *want; } cases[] = {
    { "{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{\"severityNumber\":17},"
      "{\"timeUnixNano\":\"1714566896000000000\",\"severityNumber\":17},3,"
      "{\"timeUnixNano\":true,\"severityNumber\":17},"
      "{\"timeUnixNano\":\"99999999999999999999999\",\"severityNumber\":17}]}]}]}",
      "2024-05-01 12:34 x1; | lines=5 errors=1 M1:missing[{\"severityNu] M3:type[3] "
      "M4:type[{\"timeUnixNa] M5:range[{\"timeUnixNa]" },
    { "{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{\"timeUnixNano\":\"1714566896000000000\","
      "\"severityNumber\":17}]}]}]", "| lines=1 errors=0 M1:json[{\"resourceLo]" },
    { "{\"resourceLogs\":{}}", "| lines=1 errors=0 M1:type[{\"resourceLo]" },
    { "{\"resourceLogs\":[{\"scopeLogs\":{}}]}", "| lines=1 errors=0 M1:type[{\"resourceLo]" },
    { "{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":\"x\"}]}]}",
      "| lines=1 errors=0 M1:type[{\"resourceLo]" },
    { "{\"resourceLogs\":[7]}", "| lines=1 errors=0 M1:type[{\"resourceLo]" },
    { "[]", "| lines=1 errors=0 M1:shape[[]]" },
    { "{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{\"timeUnixNano\":\"1714566896000000000\","
      "\"severityNumber\":17,\"body\":{\"stringValue\":\"\\u0000\"}}]}]}]}",
      "| lines=1 errors=0 M1:nul[{\"resourceLo]" },
    /* A time string with escapes, decoded (read as a time: malformed). */
    { "{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{\"timeUnixNano\":"
      "\"\\u00317145668960000000\\n\\n\\n\\n\\n\\n\\n\\n\",\"severityNumber\":17},"
      "{\"timeUnixNano\":\"\\u0031714566896000000000\",\"severityNumber\":17}]}]}]}",
      "2024-05-01 12:34 x1; | lines=2 errors=1 M1:time[{\"timeUnixNa]" },
    /* Nothing to count is no line. */
    { "{}", "| lines=0 errors=0" },
    { "{\"resourceLogs\":[]}", "| lines=0 errors=0" },
    { "{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[]}]}]}", "| lines=0 errors=0" },
    /* The protobuf encoding (otlp_proto) is no JSON. */
    { "\x0a\x2a\x12\x28\x0a\x26", "| lines=1 errors=0 M1:json[\n*\x12(\n&]" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    ASSERT_PARSED (&otlp, cases[i].value, cases[i].want);
}

static void
test_refused (void)
{
  const Job time = { .input = KT_INPUT_OTLP_JSON, .time_field = "timeUnixNano" };
  const Job level = { .input = KT_INPUT_OTLP_JSON, .level_field = "severityText" };
  g_autofree char *a = refused (&time, NULL, NULL);
  g_autofree char *b = refused (&level, NULL, NULL);

  g_assert_true (g_str_has_prefix (a, "--time-field: can never match with --input otlp-json"));
  g_assert_true (g_str_has_prefix (b, "--level-field: can never match with --input otlp-json"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/parse-otlp/request", test_request);
  g_test_add_func ("/parse-otlp/levels", test_levels);
  g_test_add_func ("/parse-otlp/hostile", test_hostile);
  g_test_add_func ("/parse-otlp/refused", test_refused);
  return g_test_run ();
}
