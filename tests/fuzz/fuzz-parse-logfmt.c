/* fuzz-parse-logfmt.c - libFuzzer target for --input logfmt
 * (parse-logfmt.c, parse-record.c): what fuzz-structured.h checks, and
 * that a line counted holds no NUL and is valid UTF-8 (go-logfmt's
 * grammar, and the keys and values the job reads are text). */
#include "fuzz-structured.h"

int
LLVMFuzzerTestOneInput (const guint8 *data, size_t size)
{
  static KtParser *line_parser;

  if (fuzz_structured (KT_INPUT_LOGFMT, "bytes", data, size) == 0)
    return 0;
  if (line_parser == NULL)
    line_parser = kt_parser_new_format (&(KtParseFormat) {
      .input = KT_INPUT_LOGFMT, .levels = (const char *const[]) { "ERROR", "WARN", NULL } }, NULL);
  for (size_t at = 0; at <= size;)
    {
      const guint8 *nl = memchr (data + at, '\n', size - at);
      size_t end = nl != NULL ? (size_t) (nl - data) : size;
      gint64 m;

      if (kt_parser_line (line_parser, (const char *) data + at, end - at, &m) == KT_LINE_ERROR)
        {
          g_assert_null (memchr (data + at, '\0', end - at));
          g_assert_true (g_utf8_validate_len ((const char *) data + at, end - at, NULL));
        }
      at = end + 1;
    }
  return 0;
}
