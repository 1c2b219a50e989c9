/* test-json-scan.c - the shared JSON scanner (json-scan.c) on its own.
 *
 * Covers RFC 8259's grammar case by case, each reason a text is refused
 * for (and where), the depth bound exactly, that only the @len bytes given
 * are read, and the members it hands back: found by path in one pass,
 * their types and slices, names and strings with escapes, names with dots
 * (KT_JSON_DOTTED), the last of a repeated member (or a refusal under
 * KT_JSON_UNIQUE), a path through another, arrays read element by element
 * (KT_JSON_EACH), and that its verdict is the ledger's strict scan's on
 * every case (the ledger will move to it). Any bytes at all are
 * fuzz-json-scan's. */
#include <json-glib/json-glib.h>
#include <string.h>
#include "json-scan.h"
#include "ledger-json.h"

typedef struct
{
  const char *text;
  KtJsonBad   why;  /* KT_JSON_OK: accepted */
  gsize       len;  /* 0: strlen (text) */
} GrammarCase;

#define GOOD(t)      { t, KT_JSON_OK, 0 }
#define BAD(t)       { t, KT_JSON_BAD_SYNTAX, 0 }
#define BAD_AS(t, w) { t, KT_JSON_BAD_##w, 0 }
/* Texts holding a NUL byte: their length is the literal's. */
#define BAD_NUL(t, w) { t, KT_JSON_BAD_##w, sizeof t - 1 }

static const GrammarCase grammar[] = {
  /* Values at the root, and white space around them. */
  GOOD ("{}"), GOOD ("[]"), GOOD ("\"\""), GOOD ("0"), GOOD ("true"), GOOD ("false"),
  GOOD ("null"), GOOD (" \t\r\n{} \t\r\n"),
  BAD (""), BAD (" "), BAD ("\f{}"), BAD ("{}\v"), BAD ("\xc2\xa0{}"), BAD ("\xef\xbb\xbf{}"),
  /* Numbers. */
  GOOD ("-0"), GOOD ("12"), GOOD ("1.5"), GOOD ("-1.5e+3"), GOOD ("2E-2"), GOOD ("0e0"),
  GOOD ("123456789012345678901234567890"), GOOD ("[0,-0.0,1e999]"),
  BAD ("01"), BAD ("-"), BAD ("1."), BAD (".5"), BAD ("1e"), BAD ("1e+"), BAD ("+1"),
  BAD ("0x1"), BAD ("NaN"), BAD ("Infinity"), BAD ("-Infinity"), BAD ("1 2"), BAD ("-01"),
  BAD ("1.e3"),
  /* Literals. */
  BAD ("tru"), BAD ("True"), BAD ("nul"), BAD ("nulls"), BAD ("undefined"), BAD ("[true1]"),
  /* Strings and escapes. */
  GOOD ("\"\\\" \\\\ \\/ \\b \\f \\n \\r \\t\""), GOOD ("\"\\u00e9\\u20AC\""),
  GOOD ("\"caf\xc3\xa9 \xf0\x9f\x98\x80 \xe2\x82\xac \xf4\x8f\xbf\xbf \xee\x80\x80\""),
  GOOD ("\"\\uD83D\\uDE00\""), GOOD ("\"\\udbff\\udfff\""), GOOD ("\"\\u0001\""),
  GOOD ("\"\x7f\""), GOOD ("\"a long string of plain bytes, more than eight at a time\""),
  BAD ("'single'"), BAD ("\"unterminated"), BAD ("\"a\\\""), BAD ("\"\\x41\""),
  BAD ("\"\\u12\""), BAD ("\"\\u12G4\""), BAD ("\"\\U0041\""), BAD ("\"tab\there\""),
  BAD ("\"line\nbreak\""), BAD ("\"\x1f\""), BAD ("\"\\"), BAD ("\"\\'\""),
  BAD ("\"0123456789abcdef\x01\""),
  BAD_AS ("\"\\u0000\"", NUL), BAD_AS ("{\"a\\u0000\": 1}", NUL),
  BAD_AS ("\"\\ud800\"", SURROGATE), BAD_AS ("\"\\ud800x\"", SURROGATE),
  BAD_AS ("\"\\udc00\"", SURROGATE), BAD_AS ("\"\\ud800\\ud800\"", SURROGATE),
  BAD_AS ("\"\\ud800\\u0041\"", SURROGATE), BAD_AS ("\"\\ude00\\ud83d\"", SURROGATE),
  BAD_AS ("\"\\ud800\\n\"", SURROGATE),
  /* Invalid UTF-8 in strings: stray continuation bytes, cut sequences,
   * overlong forms, surrogates, beyond U+10FFFF, bytes never used. */
  BAD_AS ("\"\xff\"", UTF8), BAD_AS ("\"\xc3\"", UTF8), BAD_AS ("\"\xed\xa0\x80\"", UTF8),
  BAD_AS ("\"\x80\"", UTF8), BAD_AS ("\"\xc0\xaf\"", UTF8), BAD_AS ("\"\xc1\xbf\"", UTF8),
  BAD_AS ("\"\xe0\x80\xaf\"", UTF8), BAD_AS ("\"\xf0\x80\x80\xaf\"", UTF8),
  BAD_AS ("\"\xf4\x90\x80\x80\"", UTF8), BAD_AS ("\"\xf5\x80\x80\x80\"", UTF8),
  BAD_AS ("\"\xe2\x82\"", UTF8), BAD_AS ("\"\xe2\x82x\"", UTF8),
  BAD_AS ("\"0123456789\xfe\"", UTF8),
  /* A NUL byte: in a string it is its own reason; elsewhere a stray byte. */
  BAD_NUL ("\"a\0b\"", NUL), BAD_NUL ("{\0}", SYNTAX),
  /* Objects. */
  GOOD ("{\"a\": 1}"), GOOD ("{\"a\":1,\"b\":[1,{\"c\":2,\"d\":3}],\"e\":{\"f\":4}}"),
  GOOD ("{\"a\": 1, \"a\": 2}"), GOOD ("{ \"\" : { } }"),
  BAD ("{\"a\"}"), BAD ("{\"a\" 1}"), BAD ("{\"a\": }"), BAD ("{\"a\": 1,}"), BAD ("{,}"),
  BAD ("{1: 2}"), BAD ("{a: 1}"), BAD ("{'a': 1}"), BAD ("{\"a\": 1"), BAD ("{\"a\": 1]"),
  BAD ("{\"a\" : 1 \"b\": 2}"),
  /* Arrays. */
  GOOD ("[1, \"two\", [3], {\"four\": 4}, true, null]"),
  BAD ("[1,]"), BAD ("[,1]"), BAD ("[1 2]"), BAD ("["), BAD ("[1}"), BAD ("]"),
  /* What lenient readers take: comments, a second document, trailing
   * bytes. */
  BAD ("{\"a\": 1} // note"), BAD ("/* note */ {}"), BAD ("{\"a\": /* one */ 1}"),
  BAD ("{\"a\": 1}{\"b\": 2}"), BAD ("{} x"), BAD ("[] ]"), BAD ("\"a\" \"b\""),
};

/* Scans a copy of @text in a buffer of exactly @len bytes (ASan sees any
 * read past it). */
static gboolean
scan_exact (const KtJsonPaths *paths, const char *text, gsize len, KtJsonValue *values,
            KtJsonType *root, KtJsonBad *why, gsize *at)
{
  g_autofree char *copy = g_memdup2 (text, len);

  return kt_json_scan (paths, copy, len, values, root, why, at);
}

static void
test_grammar (void)
{
  g_autoptr(KtJsonPaths) paths = kt_json_paths_new (32, 0);

  for (guint i = 0; i < G_N_ELEMENTS (grammar); i++)
    {
      const GrammarCase *c = &grammar[i];
      gsize len = c->len > 0 ? c->len : strlen (c->text);
      g_autofree char *shown = g_strescape (c->text, NULL);
      KtJsonBad why = KT_JSON_OK;
      KtJsonType root = KT_JSON_NULL;
      gboolean ok;

      g_test_message ("%s", shown);
      ok = scan_exact (paths, c->text, len, NULL, &root, &why, NULL);
      g_assert_cmpint (ok, ==, c->why == KT_JSON_OK);
      g_assert_cmpint (why, ==, c->why);
      g_assert_cmpint (root == KT_JSON_ABSENT, ==, !ok);
    }
}

/* Every case's verdict is the ledger's strict scan's: same grammar, same
 * bound (32). */
static void
test_same_as_ledger (void)
{
  g_autoptr(KtJsonPaths) paths = kt_json_paths_new (32, 0);

  for (guint i = 0; i < G_N_ELEMENTS (grammar); i++)
    {
      const char *t = grammar[i].text;
      gsize len = grammar[i].len > 0 ? grammar[i].len : strlen (t);
      guint members;
      KtLedgerBad lwhy;
      KtJsonBad why;

      g_assert_cmpint (scan_exact (paths, t, len, NULL, NULL, &why, NULL), ==,
                       kt_ledger_json_scan (t, len, &members, &lwhy));
    }
}

static void
test_reason_at (void)
{
  g_autoptr(KtJsonPaths) paths = kt_json_paths_new (8, 0);
  static const struct { const char *text; KtJsonBad why; gsize at; } cases[] = {
    { "{\"a\": 1,}", KT_JSON_BAD_SYNTAX, 8 },
    { "{\"a\": \"x\\u0000\"}", KT_JSON_BAD_NUL, 14 },
    { "[\"\xff\"]", KT_JSON_BAD_UTF8, 2 },
    { "[[[[[[[[[1]]]]]]]]]", KT_JSON_BAD_DEPTH, 8 },
    { "{\"a\": tru}", KT_JSON_BAD_SYNTAX, 6 },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      KtJsonBad why;
      gsize at = 0;

      g_assert_false (kt_json_scan (paths, cases[i].text, strlen (cases[i].text), NULL, NULL,
                                    &why, &at));
      g_assert_cmpint (why, ==, cases[i].why);
      g_assert_cmpuint (at, ==, cases[i].at);
    }
  g_assert_cmpstr (kt_json_bad_name (KT_JSON_BAD_SYNTAX), ==, "json");
  g_assert_cmpstr (kt_json_bad_name (KT_JSON_BAD_SURROGATE), ==, "surrogate");
}

/* Strings are read sixteen or eight bytes at a time, then one at a time
 * near the end: each kind of byte that ends a run of plain bytes (an
 * escape, a control, UTF-8, the closing quote), and a dot in a member
 * name, at every place across those words, in a string no path reads, one
 * a path reads and a member name; and texts that end inside a string (cut
 * UTF-8, a lone backslash, no closing quote) at every length. Each case:
 * the verdict, the reason and where. */
static void
test_word_edges (void)
{
  static const struct { const char *x; KtJsonBad why; gsize at; } marks[] = {
    /* x after n plain bytes; at: the offset of the problem from x's start */
    { "\\\"", KT_JSON_OK, 0 }, { "\\n", KT_JSON_OK, 0 }, { "\\/", KT_JSON_OK, 0 },
    { "\\u00e9", KT_JSON_OK, 0 }, { "\\uD83D\\uDE00", KT_JSON_OK, 0 },
    { "\xc3\xa9", KT_JSON_OK, 0 }, { "\xf0\x9f\x98\x80", KT_JSON_OK, 0 }, { "\x7f", KT_JSON_OK, 0 },
    { "\x01", KT_JSON_BAD_SYNTAX, 0 }, { "\x1f", KT_JSON_BAD_SYNTAX, 0 },
    { "\\x", KT_JSON_BAD_SYNTAX, 1 }, { "\\u00G0", KT_JSON_BAD_SYNTAX, 4 },
    { "\\u0000", KT_JSON_BAD_NUL, 6 }, { "\\udc00", KT_JSON_BAD_SURROGATE, 6 },
    { "\xc3(", KT_JSON_BAD_UTF8, 0 }, { "\xff", KT_JSON_BAD_UTF8, 0 },
    { "\xed\xa0\x80", KT_JSON_BAD_UTF8, 0 },
  };
  const char *const a[] = { "a" };
  g_autoptr(KtJsonPaths) none = kt_json_paths_new (8, 0);
  g_autoptr(KtJsonPaths) read = kt_json_paths_new (8, 0);
  g_autoptr(KtJsonPaths) dotted = kt_json_paths_new (8, KT_JSON_DOTTED);
  KtJsonValue values[2];

  kt_json_paths_add (read, a, 1);
  kt_json_paths_add (dotted, a, 1);
  for (gsize n = 0; n <= 40; n++)
    {
      g_autofree char *plain = g_strnfill (n, 'p');

      for (guint m = 0; m < G_N_ELEMENTS (marks); m++)
        for (guint where = 0; where < 3; where++)
          {
            /* 0: a string no path reads; 1: one the path "a" reads; 2: a
             * member name, with more plain bytes after the mark. */
            const char *head = where == 0 ? "[\"" : where == 1 ? "{\"a\":\"" : "{\"";
            const char *tail = where == 0 ? "\"]" : where == 1 ? "\"}" : "tail\":1}";
            g_autofree char *text = g_strconcat (head, plain, marks[m].x, tail, NULL);
            KtJsonBad why = KT_JSON_OK;
            gsize at = 0;
            gboolean ok = scan_exact (where == 0 ? none : where == 1 ? read : dotted, text,
                                      strlen (text), values, NULL, &why, &at);

            g_test_message ("%s", text);
            g_assert_cmpint (ok, ==, marks[m].why == KT_JSON_OK);
            g_assert_cmpint (why, ==, marks[m].why);
            if (!ok)
              g_assert_cmpuint (at, ==, strlen (head) + n + marks[m].at);
            if (ok && where == 1)
              g_assert_cmpuint (values[0].len, ==, n + strlen (marks[m].x));
          }

      /* A dot in a member name at every place across the words, as
       * written and after an escape: the name is the path of its parts. */
      {
        g_autofree char *first = g_strconcat (plain, "q", NULL);
        g_autofree char *first_esc = g_strconcat (plain, "A", NULL);
        const char *const p1[] = { first, "b" }, *const p2[] = { first_esc, "b" };
        g_autoptr(KtJsonPaths) paths = kt_json_paths_new (8, KT_JSON_DOTTED);
        g_autofree char *t1 = g_strdup_printf ("{\"%s.b\":1}", first);
        g_autofree char *t2 = g_strdup_printf ("{\"%s\\u0041.b\":2}", plain);
        guint s1 = kt_json_paths_add (paths, p1, 2), s2 = kt_json_paths_add (paths, p2, 2);

        g_assert_true (scan_exact (paths, t1, strlen (t1), values, NULL, NULL, NULL));
        g_assert_cmpint (values[s1].type, ==, KT_JSON_NUMBER);
        g_assert_cmpint (values[s2].type, ==, KT_JSON_ABSENT);
        g_assert_true (scan_exact (paths, t2, strlen (t2), values, NULL, NULL, NULL));
        g_assert_cmpint (values[s1].type, ==, KT_JSON_ABSENT);
        g_assert_cmpint (values[s2].type, ==, KT_JSON_NUMBER);
      }

      /* Texts cut inside a string, in a buffer of exactly their length:
       * the problem is where the cut sequence starts, or the end. */
      {
        /* at: from the cut sequence's start, or -1: the end */
        static const struct { const char *x; KtJsonBad why; int at; } cuts[] = {
          { "", KT_JSON_BAD_SYNTAX, -1 }, { "\\", KT_JSON_BAD_SYNTAX, -1 },
          { "\\u00", KT_JSON_BAD_SYNTAX, 2 }, { "\xe2\x82", KT_JSON_BAD_UTF8, 0 },
          { "\xc3", KT_JSON_BAD_UTF8, 0 }, { "\xf0\x9f\x98", KT_JSON_BAD_UTF8, 0 },
        };

        for (guint c = 0; c < G_N_ELEMENTS (cuts); c++)
          for (guint where = 0; where < 2; where++)
            {
              g_autofree char *text = g_strconcat (where == 0 ? "[\"" : "{\"a\":\"", plain,
                                                   cuts[c].x, NULL);
              gsize head = where == 0 ? 2 : 6, len = strlen (text);
              KtJsonBad why;
              gsize at = 0;

              g_assert_false (scan_exact (where == 0 ? none : read, text, len, values, NULL, &why,
                                          &at));
              g_assert_cmpint (why, ==, cuts[c].why);
              g_assert_cmpuint (at, ==, (cuts[c].at < 0 ? len : head + n + (gsize) cuts[c].at));
            }
      }
    }
}

/* Nesting deeper than a skipped container walks in one loop (64): the
 * bound exactly, whatever it is, in containers no path reads. */
static void
test_deep_skip (void)
{
  for (guint bound = 60; bound <= 200; bound += 7)
    {
      g_autoptr(KtJsonPaths) paths = kt_json_paths_new (bound, 0);
      const char *const a[] = { "a" };
      g_autoptr(GString) text = g_string_new ("{\"a\":1,\"b\":");
      KtJsonValue values[1];
      KtJsonBad why;
      gsize at = 0;

      kt_json_paths_add (paths, a, 1);
      /* The root is one level: bound - 1 more, objects and arrays mixed. */
      for (guint i = 1; i < bound; i++)
        g_string_append (text, i % 3 == 0 ? "{\"k\":" : "[0,");
      g_string_append (text, "\"x\"");
      for (guint i = bound - 1; i >= 1; i--)
        g_string_append (text, i % 3 == 0 ? "}" : ",1]");
      g_string_append_c (text, '}');
      g_assert_true (scan_exact (paths, text->str, text->len, values, NULL, &why, NULL));
      g_assert_cmpint (values[0].type, ==, KT_JSON_NUMBER);
      /* One more level, at the innermost: refused there. */
      g_string_insert (text, strstr (text->str, "\"x\"") - text->str, "[");
      g_string_insert (text, strstr (text->str, "\"x\"") - text->str + 3, "]");
      g_assert_false (scan_exact (paths, text->str, text->len, values, NULL, &why, &at));
      g_assert_cmpint (why, ==, KT_JSON_BAD_DEPTH);
      g_assert_cmpuint (at, ==, (gsize) (strstr (text->str, "\"x\"") - text->str - 1));
    }
}

/* The bound exactly: @depth nested arrays (or objects) pass, one more is
 * refused. */
static void
test_depth (void)
{
  for (guint bound = 1; bound <= 64; bound *= 2)
    {
      g_autoptr(KtJsonPaths) paths = kt_json_paths_new (bound, 0);
      g_autoptr(GString) arrays = g_string_new (NULL);
      g_autoptr(GString) objects = g_string_new (NULL);
      KtJsonBad why;

      for (guint i = 0; i < bound; i++)
        g_string_prepend_c (arrays, '['), g_string_append_c (arrays, ']');
      for (guint i = 0; i < bound; i++)
        g_string_prepend (objects, "{\"a\":"), g_string_append_c (objects, '}');
      g_string_insert (objects, objects->len - bound, "1");
      g_assert_true (kt_json_scan (paths, arrays->str, arrays->len, NULL, NULL, &why, NULL));
      g_assert_true (kt_json_scan (paths, objects->str, objects->len, NULL, NULL, &why, NULL));
      g_string_prepend_c (arrays, '['), g_string_append_c (arrays, ']');
      g_string_prepend (objects, "{\"a\":"), g_string_append_c (objects, '}');
      g_assert_false (kt_json_scan (paths, arrays->str, arrays->len, NULL, NULL, &why, NULL));
      g_assert_cmpint (why, ==, KT_JSON_BAD_DEPTH);
      g_assert_false (kt_json_scan (paths, objects->str, objects->len, NULL, NULL, &why, NULL));
      g_assert_cmpint (why, ==, KT_JSON_BAD_DEPTH);
    }
  /* A deep text is refused at the bound, not after a recursion as deep as
   * the text: a million brackets. */
  {
    g_autoptr(KtJsonPaths) paths = kt_json_paths_new (64, 0);
    gsize n = 1000000;
    g_autofree char *deep = g_malloc (n);
    KtJsonBad why;

    memset (deep, '[', n);
    g_assert_false (kt_json_scan (paths, deep, n, NULL, NULL, &why, NULL));
    g_assert_cmpint (why, ==, KT_JSON_BAD_DEPTH);
  }
}

/* Cut anywhere, a text that ends with its own last byte is refused; only
 * the bytes given are read (each prefix in a buffer of its size). */
static void
test_prefixes (void)
{
  static const char text[] =
    "{\"@timestamp\":\"2024-05-01T12:00:00.5Z\",\"log\":{\"level\":\"error\"},"
    "\"m\":\"caf\xc3\xa9 \\u00e9\\ud83d\\ude00\",\"n\":[1,-2.5e3,true,false,null]}";
  g_autoptr(KtJsonPaths) paths = kt_json_paths_new (8, 0);
  const char *const level[] = { "log", "level" };
  KtJsonValue values[1];

  kt_json_paths_add (paths, level, 2);
  for (gsize n = 0; n < sizeof text - 1; n++)
    g_assert_false (scan_exact (paths, text, n, values, NULL, NULL, NULL));
  g_assert_true (scan_exact (paths, text, sizeof text - 1, values, NULL, NULL, NULL));
}

/* Paths: found in one pass, their types and slices. */
static void
test_paths (void)
{
  static const char text[] =
    "{\"time\": 1714564800.25, \"level\": \"error\", \"service\": {\"name\": \"api\","
    " \"tags\": [\"a\", {\"name\": \"not this\"}]}, \"ok\": true, \"nothing\": null,"
    " \"deep\": {\"x\": {\"y\": [1, 2]}}, \"n\": -0, \"f\": false}";
  g_autoptr(KtJsonPaths) paths = kt_json_paths_new (8, 0);
  const char *const p_time[] = { "time" }, *const p_level[] = { "level" };
  const char *const p_name[] = { "service", "name" }, *const p_tags[] = { "service", "tags" };
  const char *const p_ok[] = { "ok" }, *const p_null[] = { "nothing" };
  const char *const p_y[] = { "deep", "x", "y" }, *const p_deep[] = { "deep" };
  const char *const p_missing[] = { "service", "missing" }, *const p_under[] = { "ok", "x" };
  const char *const p_n[] = { "n" }, *const p_f[] = { "f" };
  const char *const p_through[] = { "service", "tags", "name" };
  guint s_time = kt_json_paths_add (paths, p_time, 1);
  guint s_level = kt_json_paths_add (paths, p_level, 1);
  guint s_name = kt_json_paths_add (paths, p_name, 2);
  guint s_tags = kt_json_paths_add (paths, p_tags, 2);
  guint s_ok = kt_json_paths_add (paths, p_ok, 1);
  guint s_null = kt_json_paths_add (paths, p_null, 1);
  guint s_y = kt_json_paths_add (paths, p_y, 3);
  guint s_deep = kt_json_paths_add (paths, p_deep, 1);
  guint s_missing = kt_json_paths_add (paths, p_missing, 2);
  guint s_under = kt_json_paths_add (paths, p_under, 2);
  guint s_n = kt_json_paths_add (paths, p_n, 1);
  guint s_f = kt_json_paths_add (paths, p_f, 1);
  guint s_through = kt_json_paths_add (paths, p_through, 3);
  KtJsonValue v[16];
  KtJsonType root;

  g_assert_cmpuint (kt_json_paths_add (paths, p_name, 2), ==, s_name);
  g_assert_cmpuint (kt_json_paths_slots (paths), ==, 13);
  g_assert_true (kt_json_scan (paths, text, strlen (text), v, &root, NULL, NULL));
  g_assert_cmpint (root, ==, KT_JSON_OBJECT);
#define SLICE(slot, t, s) \
  G_STMT_START { \
    g_assert_cmpint (v[slot].type, ==, t); \
    g_assert_cmpmem (v[slot].text, v[slot].len, s, strlen (s)); \
  } G_STMT_END
  SLICE (s_time, KT_JSON_NUMBER, "1714564800.25");
  SLICE (s_level, KT_JSON_STRING, "error");
  SLICE (s_name, KT_JSON_STRING, "api");
  SLICE (s_tags, KT_JSON_ARRAY, "[\"a\", {\"name\": \"not this\"}]");
  SLICE (s_ok, KT_JSON_TRUE, "true");
  SLICE (s_null, KT_JSON_NULL, "null");
  SLICE (s_y, KT_JSON_ARRAY, "[1, 2]");
  SLICE (s_deep, KT_JSON_OBJECT, "{\"x\": {\"y\": [1, 2]}}");
  SLICE (s_n, KT_JSON_NUMBER, "-0");
  SLICE (s_f, KT_JSON_FALSE, "false");
  g_assert_cmpint (v[s_missing].type, ==, KT_JSON_ABSENT);
  g_assert_cmpint (v[s_under].type, ==, KT_JSON_ABSENT);    /* true has no members */
  g_assert_cmpint (v[s_through].type, ==, KT_JSON_ABSENT);  /* names never step into arrays */
  g_assert_false (v[s_level].escaped);
#undef SLICE
}

/* Names and strings with escapes; kt_json_unescape() against json-glib. */
static void
test_escapes (void)
{
  static const char text[] =
    "{\"le\\u0076el\": \"\\u0045RROR\", \"msg\": \"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t"
    "\\u00e9\\u20ac\\ud83d\\ude00 caf\xc3\xa9\", \"\\\"q\\\"\": 1}";
  g_autoptr(KtJsonPaths) paths = kt_json_paths_new (8, 0);
  const char *const p_level[] = { "level" }, *const p_msg[] = { "msg" };
  const char *const p_q[] = { "\"q\"" };
  guint s_level = kt_json_paths_add (paths, p_level, 1);
  guint s_msg = kt_json_paths_add (paths, p_msg, 1);
  guint s_q = kt_json_paths_add (paths, p_q, 1);
  g_autoptr(JsonParser) parser = json_parser_new ();
  KtJsonValue v[3];
  char out[256];
  gsize n;

  g_assert_true (kt_json_scan (paths, text, strlen (text), v, NULL, NULL, NULL));
  g_assert_true (v[s_level].escaped);
  g_assert_true (kt_json_string_equal (&v[s_level], "ERROR", 5));
  g_assert_false (kt_json_string_equal (&v[s_level], "ERRO", 4));
  g_assert_false (kt_json_string_equal (&v[s_level], "error", 5));
  g_assert_cmpint (v[s_q].type, ==, KT_JSON_NUMBER);
  g_assert_true (json_parser_load_from_data (parser, text, -1, NULL));
  n = kt_json_unescape (&v[s_msg], out);
  g_assert_cmpuint (n, <=, v[s_msg].len);
  g_assert_cmpmem (out, n, json_object_get_string_member (
                     json_node_get_object (json_parser_get_root (parser)), "msg"),
                   strlen (json_object_get_string_member (
                     json_node_get_object (json_parser_get_root (parser)), "msg")));
  g_assert_true (g_utf8_validate_len (out, n, NULL));
}

/* KT_JSON_DOTTED: "log.level" is the path log, level as {"log":
 * {"level"}} is; without it, only the nested member. A path whose name
 * holds a dot is found by that name alone either way. */
static void
test_dotted (void)
{
  const char *const p_level[] = { "log", "level" }, *const p_flat[] = { "log.level" };
  const char *const p_abc[] = { "a", "b", "c" };
  static const struct { const char *text; const char *nested; const char *flat; const char *abc; }
  cases[] = {
    { "{\"log\": {\"level\": \"nested\"}}", "nested", NULL, NULL },
    { "{\"log.level\": \"flat\"}", "flat", "flat", NULL },
    { "{\"l\\u006fg.level\": \"escaped\"}", "escaped", "escaped", NULL },
    { "{\"a.b.c\": \"1\"}", NULL, NULL, "1" },
    { "{\"a\": {\"b.c\": \"2\"}}", NULL, NULL, "2" },
    { "{\"a.b\": {\"c\": \"3\"}}", NULL, NULL, "3" },
    { "{\"a\": {\"b\": {\"c\": \"4\"}}}", NULL, NULL, "4" },
    { "{\"a.\": {\"b.c\": \"5\"}, \"a.b.\": {\"c\": \"6\"}, \".a.b.c\": \"7\"}", NULL, NULL, NULL },
    /* Both spellings: the last one in the text. */
    { "{\"log.level\": \"flat\", \"log\": {\"level\": \"nested\"}}", "nested", "flat", NULL },
    { "{\"log\": {\"level\": \"nested\"}, \"log.level\": \"flat\"}", "flat", "flat", NULL },
  };

  for (int dotted = 0; dotted < 2; dotted++)
    {
      g_autoptr(KtJsonPaths) paths = kt_json_paths_new (8, dotted ? KT_JSON_DOTTED : 0);
      guint s_level = kt_json_paths_add (paths, p_level, 2);
      guint s_flat = kt_json_paths_add (paths, p_flat, 1);
      guint s_abc = kt_json_paths_add (paths, p_abc, 3);

      for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
        {
          KtJsonValue v[3];
          const char *want[3];

          want[s_level] = cases[i].nested;
          want[s_flat] = cases[i].flat;
          want[s_abc] = cases[i].abc;
          if (!dotted)
            {
              /* Only what is nested, name by name. */
              want[s_level] = strstr (cases[i].text, "\"log\"") != NULL ? "nested" : NULL;
              want[s_abc] = g_str_equal (cases[i].abc ? cases[i].abc : "", "4") ? "4" : NULL;
            }
          g_test_message ("%s dotted=%d", cases[i].text, dotted);
          g_assert_true (kt_json_scan (paths, cases[i].text, strlen (cases[i].text), v, NULL,
                                       NULL, NULL));
          for (guint s = 0; s < 3; s++)
            if (want[s] == NULL)
              g_assert_cmpint (v[s].type, ==, KT_JSON_ABSENT);
            else
              g_assert_true (kt_json_string_equal (&v[s], want[s], strlen (want[s])));
        }
    }
}

/* A repeated member: the last wins; under KT_JSON_UNIQUE the text is
 * refused, but only for a path read (other repeats change nothing read). */
static void
test_repeats (void)
{
  static const char text[] = "{\"level\": \"info\", \"x\": 1, \"x\": 2, \"level\": \"error\"}";
  static const char other[] = "{\"level\": \"info\", \"x\": 1, \"x\": 2}";
  const char *const p_level[] = { "level" };
  g_autoptr(KtJsonPaths) last = kt_json_paths_new (8, 0);
  g_autoptr(KtJsonPaths) unique = kt_json_paths_new (8, KT_JSON_UNIQUE);
  KtJsonValue v[1];
  KtJsonBad why;
  gsize at;

  kt_json_paths_add (last, p_level, 1);
  kt_json_paths_add (unique, p_level, 1);
  g_assert_true (kt_json_scan (last, text, strlen (text), v, NULL, NULL, NULL));
  g_assert_true (kt_json_string_equal (&v[0], "error", 5));
  g_assert_false (kt_json_scan (unique, text, strlen (text), v, NULL, &why, &at));
  g_assert_cmpint (why, ==, KT_JSON_BAD_DUPLICATE);
  g_assert_cmpstr (text + at, ==, "}");
  g_assert_true (kt_json_scan (unique, other, strlen (other), v, NULL, &why, NULL));
  g_assert_true (kt_json_string_equal (&v[0], "info", 4));
}

/* Arrays element by element: each element's slots are its own, cleared
 * at its start; the function hears each at its end, nested ones first. */
typedef struct
{
  guint    key, str, num, outer_name;
  GString *heard;
} Heard;

static void
on_attribute (const KtJsonValue *values, const KtJsonValue *element, gpointer data)
{
  Heard *h = data;
  char buf[64];

  g_string_append_printf (h->heard, "attr(");
  if (values[h->key].type == KT_JSON_STRING)
    g_string_append_len (h->heard, buf, (gssize) kt_json_unescape (&values[h->key], buf));
  g_string_append_c (h->heard, '=');
  if (values[h->str].type != KT_JSON_ABSENT)
    g_string_append_len (h->heard, values[h->str].text, (gssize) values[h->str].len);
  if (values[h->num].type != KT_JSON_ABSENT)
    g_string_append_len (h->heard, values[h->num].text, (gssize) values[h->num].len);
  g_string_append_printf (h->heard, " %s) ", element->type == KT_JSON_OBJECT ? "obj" : "other");
}

static void
on_record (G_GNUC_UNUSED const KtJsonValue *values, const KtJsonValue *element, gpointer data)
{
  Heard *h = data;

  g_string_append_printf (h->heard, "record[%.*s] ", (int) element->len, element->text);
}

static void
test_each (void)
{
  static const char text[] =
    "{\"records\": [{\"attributes\": [{\"key\": \"a\", \"value\": {\"s\": \"x\"}},"
    " {\"value\": {\"n\": 5}, \"key\": \"b\\u0062\"}, 7]}, {}, 3, {\"attributes\": "
    "[{\"key\": \"c\"}]}], \"name\": \"outer\"}";
  const char *const p_each[] = { "records", KT_JSON_EACH, "attributes", KT_JSON_EACH };
  const char *const p_key[] = { "records", KT_JSON_EACH, "attributes", KT_JSON_EACH, "key" };
  const char *const p_str[] = { "records", KT_JSON_EACH, "attributes", KT_JSON_EACH, "value", "s" };
  const char *const p_num[] = { "records", KT_JSON_EACH, "attributes", KT_JSON_EACH, "value", "n" };
  const char *const p_records[] = { "records", KT_JSON_EACH };
  const char *const p_name[] = { "name" };
  g_autoptr(KtJsonPaths) paths = kt_json_paths_new (8, KT_JSON_UNIQUE);
  Heard h = { 0 };
  KtJsonValue v[8];

  h.key = kt_json_paths_add (paths, p_key, 5);
  h.str = kt_json_paths_add (paths, p_str, 6);
  h.num = kt_json_paths_add (paths, p_num, 6);
  h.outer_name = kt_json_paths_add (paths, p_name, 1);
  h.heard = g_string_new (NULL);
  kt_json_paths_on_element (paths, p_each, 4, on_attribute, &h);
  kt_json_paths_on_element (paths, p_records, 2, on_record, &h);
  g_assert_true (kt_json_scan (paths, text, strlen (text), v, NULL, NULL, NULL));
  g_assert_cmpstr (h.heard->str, ==,
                   "attr(a=x obj) attr(bb=5 obj) attr(= other) record[{\"attributes\": "
                   "[{\"key\": \"a\", \"value\": {\"s\": \"x\"}}, {\"value\": {\"n\": 5}, "
                   "\"key\": \"b\\u0062\"}, 7]}] record[{}] record[3] attr(c= obj) "
                   "record[{\"attributes\": [{\"key\": \"c\"}]}] ");
  g_assert_true (kt_json_string_equal (&v[h.outer_name], "outer", 5));
  g_string_free (h.heard, TRUE);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/json-scan/grammar", test_grammar);
  g_test_add_func ("/json-scan/same-as-ledger", test_same_as_ledger);
  g_test_add_func ("/json-scan/reason-at", test_reason_at);
  g_test_add_func ("/json-scan/depth", test_depth);
  g_test_add_func ("/json-scan/word-edges", test_word_edges);
  g_test_add_func ("/json-scan/deep-skip", test_deep_skip);
  g_test_add_func ("/json-scan/prefixes", test_prefixes);
  g_test_add_func ("/json-scan/paths", test_paths);
  g_test_add_func ("/json-scan/escapes", test_escapes);
  g_test_add_func ("/json-scan/dotted", test_dotted);
  g_test_add_func ("/json-scan/repeats", test_repeats);
  g_test_add_func ("/json-scan/each", test_each);
  return g_test_run ();
}
