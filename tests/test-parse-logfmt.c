/* test-parse-logfmt.c - --input logfmt (stages/parse-logfmt.c): lines in
 * the shapes their producers document (my own lines, in each one's shape:
 * go-kit's log, Logrus's TextFormatter, Go's log/slog TextHandler,
 * Prometheus and Loki, Heroku's router), read by the defaults; keys with
 * dots named by path, escaped or not; quoted values with escapes; the
 * last of a repeated key; and what go-logfmt's grammar refuses, malformed
 * with its reason. */
#include "structured.h"

static const Job logfmt = { .input = KT_INPUT_LOGFMT };

static void
test_producers (void)
{
  static const char *const lines[] = {
    /* go-kit log with its default keys. */
    "ts=2024-05-01T12:34:56.789Z caller=main.go:42 level=error msg=\"disk full\" err=\"no space\"",
    /* Logrus's TextFormatter (no TTY). */
    "time=\"2024-05-01T14:34:56+02:00\" level=error msg=\"boom\" component=api",
    /* slog's TextHandler. */
    "time=2024-05-01T14:34:56.789+02:00 level=ERROR msg=\"boom\" svc=api bytes=512",
    /* Prometheus and Loki. */
    "level=error ts=2024-05-01T12:34:56.789012345Z caller=scrape.go:1 component=\"scrape manager\"",
    /* Epoch seconds in a bare value; a tab between pairs. */
    "ts=1714566896.5\tlvl=err\tlevel=error",
  };

  for (guint i = 0; i < G_N_ELEMENTS (lines); i++)
    ASSERT_PARSED (&logfmt, lines[i], "2024-05-01 12:34 x1; | lines=1 errors=1");
  /* Heroku's router names its level at=: without --level-field, no level. */
  ASSERT_PARSED (&logfmt, "at=error code=H12 desc=\"Request timeout\" method=GET path=\"/\" "
                          "ts=1714566896",
                 "| lines=1 errors=0 M1:missing[at=error cod]");
  {
    const Job heroku = { .input = KT_INPUT_LOGFMT, .level_field = "at" };

    ASSERT_PARSED (&heroku, "at=error code=H12 desc=\"Request timeout\" ts=1714566896",
                   "2024-05-01 12:34 x1; | lines=1 errors=1");
  }
}

static void
test_fields (void)
{
  const Job by = { .input = KT_INPUT_LOGFMT, .by = "service.name,level", .sum = "bytes" };
  const Job escaped = { .input = KT_INPUT_LOGFMT, .by = "service\\.name" };

  /* A path's names joined with dots are the key, escaped or not. */
  ASSERT_PARSED (&by, "ts=1714566896 level=error service.name=api bytes=512\n"
                      "ts=1714566897 level=Error service.name=\"api\" bytes=\"0.5\"\n"
                      "ts=1714566898 level=error service.name=db bytes=x",
                 "2024-05-01 12:34 api|ERROR x2 sum=512.5000; | lines=3 errors=2 "
                 "M3:field[ts=171456689]");
  ASSERT_PARSED (&escaped, "ts=1714566896 level=error service.name=api",
                 "2024-05-01 12:34 api x1; | lines=1 errors=1");
  /* Quoted values: JSON's escapes, decoded; the last of a key wins; a
   * key alone is a flag (null: an empty --by value); key= is empty. */
  {
    const Job v = { .input = KT_INPUT_LOGFMT, .by = "v" };

    ASSERT_PARSED (&v, "ts=1714566896 level=\"err\\u006fr\" v=\"a \\\"b\\\" \\\\ \\u00e9\"\n"
                       "ts=1714566896 level=info level=error v=1 v=2\n"
                       "ts=1714566896 level=error v\n"
                       "ts=1714566896 level=error v=\n"
                       "ts=1714566896 level=error v=caf\xc3\xa9",
                   "2024-05-01 12:34  x2; 2024-05-01 12:34 2 x1; 2024-05-01 12:34 caf\xc3\xa9 x1; "
                   "2024-05-01 12:34 a \"b\" \\ \xc3\xa9 x1; | lines=5 errors=5");
  }
}

/* What go-logfmt refuses, and bytes no text may hold. */
static void
test_hostile (void)
{
  static const struct { const char *line; gssize len; const char *why; } cases[] = {
    { "ts=1714566896 level=error msg=\"unterminated", -1, "shape" },
    { "ts=1714566896 level=error msg=\"a\"b", -1, "shape" },
    { "ts=1714566896 level=error a=b=c", -1, "shape" },
    { "ts=1714566896 level=error =x", -1, "shape" },
    { "ts=1714566896 level=error a\"b=c", -1, "shape" },
    { "ts=1714566896 level=error msg=\"\\x41\"", -1, "shape" },
    { "ts=1714566896 level=error msg=\"tab\there\"", -1, "shape" },
    { "ts=1714566896 level=error msg=\"\\u0000\"", -1, "nul" },
    { "ts=1714566896 level=error msg=a\0b", 33, "nul" },
    { "ts=1714566896 level=error msg=\x01", -1, "shape" },
    { "ts=1714566896 level=error msg=\xff", -1, "utf8" },
    { "ts=1714566896 level=error msg=\"\xc3\"", -1, "utf8" },
    { "ts=1714566896 level=error msg=\"\\udc00\"", -1, "surrogate" },
    { "level=error", -1, "missing" },
    { "ts=1714566896", -1, "missing" },
    { "ts level=error", -1, "type" },
    { "ts=soon level=error", -1, "time" },
    { "ts=0999-01-01T00:00:00Z level=error", -1, "range" },
    { "hello world", -1, "missing" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *want = g_strdup_printf ("| lines=1 errors=0 M1:%s[%.12s]", cases[i].why,
                                               cases[i].line);
      g_autofree char *got = parse_as (&logfmt, cases[i].line, cases[i].len);

      g_test_message ("%s", cases[i].line);
      g_assert_cmpstr (got, ==, want);
    }
}

/* Keys and bare values are read sixteen or eight bytes at a time, then
 * one at a time near the end: each byte that ends one (a space, a tab,
 * '=', '"', a control, UTF-8) at every place across those words, in a key
 * and in a value, with the line ending right after it or going on. */
static void
test_word_edges (void)
{
  static const struct { const char *x; const char *why; } marks[] = {
    /* why: NULL, the line is counted */
    { "\xc3\xa9", NULL }, { "\xf0\x9f\x98\x80", NULL }, { "\tz", NULL }, { " z", NULL },
    { "\x01", "shape" }, { "\x7f", NULL }, { "\xff", "utf8" }, { "\xc3(", "utf8" },
    { "\xe2\x82", "utf8" }, { "=", "shape" }, { "\"", "shape" },
  };

  for (gsize n = 1; n <= 40; n++)
    {
      g_autofree char *plain = g_strnfill (n, 'v');

      for (guint m = 0; m < G_N_ELEMENTS (marks); m++)
        for (guint in_key = 0; in_key < 2; in_key++)
          for (guint last = 0; last < 2; last++)
            {
              const char *head = "ts=1714566896 level=error ";
              g_autofree char *pair = in_key ? g_strconcat (plain, marks[m].x, "=1", NULL)
                                             : g_strconcat ("k=", plain, marks[m].x, NULL);
              g_autofree char *line = last ? g_strconcat (head, pair, NULL)
                                           : g_strconcat (head, pair, " k2=2", NULL);
              g_autofree char *want = NULL;
              const char *why = marks[m].why;

              /* In a key, '=' is where it ends: a plain pair. */
              if (in_key && marks[m].x[0] == '=')
                continue;
              want = why == NULL ? g_strdup ("2024-05-01 12:34 x1; | lines=1 errors=1")
                                 : g_strdup_printf ("| lines=1 errors=0 M1:%s[%.12s]", why, line);
              ASSERT_PARSED (&logfmt, line, want);
            }
    }
}

static void
test_refused (void)
{
  const Job space = { .input = KT_INPUT_LOGFMT, .by = "a b" };
  const Job eq = { .input = KT_INPUT_LOGFMT, .level_field = "a=b" };
  g_autofree char *a = refused (&space, NULL, NULL);
  g_autofree char *b = refused (&eq, NULL, NULL);

  g_assert_true (g_str_has_prefix (a, "--by: 'a b' can never match: a logfmt key"));
  g_assert_true (g_str_has_prefix (b, "--level-field: 'a=b' can never match"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/parse-logfmt/producers", test_producers);
  g_test_add_func ("/parse-logfmt/fields", test_fields);
  g_test_add_func ("/parse-logfmt/hostile", test_hostile);
  g_test_add_func ("/parse-logfmt/refused", test_refused);
  g_test_add_func ("/parse-logfmt/word-edges", test_word_edges);
  return g_test_run ();
}
