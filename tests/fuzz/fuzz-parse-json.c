/* fuzz-parse-json.c - libFuzzer target for --input json (parse-json.c,
 * parse-record.c): what fuzz-structured.h checks, and that a line counted
 * is one json-glib reads as an object (the input takes no more than
 * RFC 8259 JSON). */
#include <json-glib/json-glib.h>
#include "fuzz-structured.h"

int
LLVMFuzzerTestOneInput (const guint8 *data, size_t size)
{
  static KtParser *line_parser;

  if (fuzz_structured (KT_INPUT_JSON, "bytes", data, size) == 0)
    return 0;
  if (line_parser == NULL)
    line_parser = kt_parser_new_format (&(KtParseFormat) {
      .input = KT_INPUT_JSON, .levels = (const char *const[]) { "ERROR", "WARN", NULL } }, NULL);
  for (size_t at = 0; at <= size;)
    {
      const guint8 *nl = memchr (data + at, '\n', size - at);
      size_t end = nl != NULL ? (size_t) (nl - data) : size;
      gint64 m;

      if (kt_parser_line (line_parser, (const char *) data + at, end - at, &m) == KT_LINE_ERROR)
        {
          g_autoptr(JsonParser) parser = json_parser_new ();

          g_assert_true (json_parser_load_from_data (parser, (const char *) data + at,
                                                     (gssize) (end - at), NULL));
          g_assert_true (JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)));
        }
      at = end + 1;
    }
  return 0;
}
