/* fuzz-parse-otlp.c - libFuzzer target for --input otlp-json
 * (parse-otlp.c, parse-record.c): what fuzz-structured.h checks, and that
 * a value with a record counted is one json-glib reads, holding at least
 * that many log records under resourceLogs[].scopeLogs[].logRecords[]. */
#include <json-glib/json-glib.h>
#include "fuzz-structured.h"

/* The log records json-glib sees in a request. */
static guint
log_records (JsonNode *root)
{
  JsonObject *o;
  JsonArray *resources;
  guint n = 0;

  if (!JSON_NODE_HOLDS_OBJECT (root))
    return 0;
  o = json_node_get_object (root);
  if (!json_object_has_member (o, "resourceLogs")
      || !JSON_NODE_HOLDS_ARRAY (json_object_get_member (o, "resourceLogs")))
    return 0;
  resources = json_object_get_array_member (o, "resourceLogs");
  for (guint r = 0; r < json_array_get_length (resources); r++)
    {
      JsonNode *resource = json_array_get_element (resources, r);
      JsonNode *scopes;

      if (!JSON_NODE_HOLDS_OBJECT (resource)
          || (scopes = json_object_get_member (json_node_get_object (resource), "scopeLogs")) == NULL
          || !JSON_NODE_HOLDS_ARRAY (scopes))
        continue;
      for (guint s = 0; s < json_array_get_length (json_node_get_array (scopes)); s++)
        {
          JsonNode *scope = json_array_get_element (json_node_get_array (scopes), s);
          JsonNode *records;

          if (JSON_NODE_HOLDS_OBJECT (scope)
              && (records = json_object_get_member (json_node_get_object (scope), "logRecords")) != NULL
              && JSON_NODE_HOLDS_ARRAY (records))
            n += json_array_get_length (json_node_get_array (records));
        }
    }
  return n;
}

int
LLVMFuzzerTestOneInput (const guint8 *data, size_t size)
{
  guint64 counted = fuzz_structured (KT_INPUT_OTLP_JSON, "http.response.body.size", data, size);
  g_autoptr(JsonParser) parser = NULL;

  if (counted == 0)
    return 0;
  parser = json_parser_new ();
  g_assert_true (json_parser_load_from_data (parser, (const char *) data, (gssize) size, NULL));
  g_assert_cmpuint (log_records (json_parser_get_root (parser)), >=, counted);
  return 0;
}
