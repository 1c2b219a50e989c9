/* test-ledger-json.c - the ledger's strict JSON scan and reader
 * (ledger-json.c), on their own: no json-glib, no ledger fields.
 *
 * Covers RFC 8259's grammar case by case (values, numbers, strings and
 * their escapes, objects, arrays, white space), what json-glib would take
 * and the scan must not (comments, single quotes, trailing bytes, a second
 * document, NUL, invalid UTF-8, "\u0000", lone surrogates), the depth
 * limit exactly, the root's member count (repeats included, nested members
 * not), that only the @len bytes given are read, and what the reader
 * hands on (the four members, repeated names refused). The ledger's own
 * fields and reasons are test-ledger's; any bytes at all are
 * fuzz-ledger-json's. */
#include <string.h>
#include "ledger-json.h"

typedef struct
{
  const char *text;
  gboolean    good;
  guint       members;  /* good: the root's members */
  KtLedgerBad why;      /* bad: the reason */
} ScanCase;

#define GOOD(t, n)  { t, TRUE, n, 0 }
#define BAD(t)      { t, FALSE, 0, KT_LEDGER_BAD_NOT_JSON }
#define BAD_AS(t, w) { t, FALSE, 0, KT_LEDGER_BAD_##w }

static const ScanCase cases[] = {
  /* Values at the root, and white space around them. */
  GOOD ("{}", 0), GOOD ("[]", 0), GOOD ("\"\"", 0), GOOD ("0", 0), GOOD ("true", 0),
  GOOD ("false", 0), GOOD ("null", 0), GOOD (" \t\r\n{} \t\r\n", 0),
  BAD (""), BAD (" "), BAD ("\f{}"), BAD ("{}\v"), BAD ("\xc2\xa0{}"),
  /* Numbers. */
  GOOD ("-0", 0), GOOD ("12", 0), GOOD ("1.5", 0), GOOD ("-1.5e+3", 0), GOOD ("2E-2", 0),
  GOOD ("0e0", 0), GOOD ("123456789012345678901234567890", 0),
  BAD ("01"), BAD ("-"), BAD ("1."), BAD (".5"), BAD ("1e"), BAD ("1e+"), BAD ("+1"),
  BAD ("0x1"), BAD ("NaN"), BAD ("Infinity"), BAD ("-Infinity"), BAD ("1 2"),
  /* Literals. */
  BAD ("tru"), BAD ("True"), BAD ("nul"), BAD ("nulls"), BAD ("undefined"),
  /* Strings and escapes. */
  GOOD ("\"\\\" \\\\ \\/ \\b \\f \\n \\r \\t\"", 0), GOOD ("\"\\u00e9\\u20AC\"", 0),
  GOOD ("\"caf\xc3\xa9 \xf0\x9f\x98\x80\"", 0), GOOD ("\"\\uD83D\\uDE00\"", 0),
  GOOD ("\"\\udbff\\udfff\"", 0), GOOD ("\"\\u0001\"", 0),
  BAD ("'single'"), BAD ("\"unterminated"), BAD ("\"a\\\""), BAD ("\"\\x41\""),
  BAD ("\"\\u12\""), BAD ("\"\\u12G4\""), BAD ("\"\\U0041\""), BAD ("\"tab\there\""),
  BAD ("\"line\nbreak\""), BAD ("\"\x1f\""), BAD ("\"\\"),
  BAD_AS ("\"\\u0000\"", NUL_ESCAPE), BAD_AS ("{\"a\\u0000\": 1}", NUL_ESCAPE),
  BAD_AS ("\"\\ud800\"", SURROGATE_ESCAPE), BAD_AS ("\"\\ud800x\"", SURROGATE_ESCAPE),
  BAD_AS ("\"\\udc00\"", SURROGATE_ESCAPE), BAD_AS ("\"\\ud800\\ud800\"", SURROGATE_ESCAPE),
  BAD_AS ("\"\\ud800\\u0041\"", SURROGATE_ESCAPE), BAD_AS ("\"\\ude00\\ud83d\"", SURROGATE_ESCAPE),
  BAD_AS ("\"\\ud800\\n\"", SURROGATE_ESCAPE),
  /* Invalid UTF-8 anywhere, and NUL bytes (the length says where the
   * text ends, never a NUL). */
  BAD ("\"\xff\""), BAD ("\"\xc3\""), BAD ("\"\xed\xa0\x80\""), BAD ("\xef\xbb\xbf{}"),
  /* Objects: members counted at the root only, each repeat too. */
  GOOD ("{\"a\": 1}", 1), GOOD ("{\"a\":1,\"b\":[1,{\"c\":2,\"d\":3}],\"e\":{\"f\":4}}", 3),
  GOOD ("{\"a\": 1, \"a\": 2}", 2), GOOD ("{\"t\\u0078n\": 1, \"txn\": 2}", 2),
  GOOD ("[{\"a\": 1, \"b\": 2}]", 0), GOOD ("{ \"\" : { } }", 1),
  BAD ("{\"a\"}"), BAD ("{\"a\" 1}"), BAD ("{\"a\": }"), BAD ("{\"a\": 1,}"), BAD ("{,}"),
  BAD ("{1: 2}"), BAD ("{a: 1}"), BAD ("{'a': 1}"), BAD ("{\"a\": 1"), BAD ("{\"a\": 1]"),
  /* Arrays. */
  GOOD ("[1, \"two\", [3], {\"four\": 4}, true, null]", 0),
  BAD ("[1,]"), BAD ("[,1]"), BAD ("[1 2]"), BAD ("["), BAD ("[1}"), BAD ("]"),
  /* What json-glib 1.6 would take: comments, a second document, trailing
   * bytes. */
  BAD ("{\"a\": 1} // note"), BAD ("/* note */ {}"), BAD ("{\"a\": /* one */ 1}"),
  BAD ("{\"a\": 1}{\"b\": 2}"), BAD ("{} x"), BAD ("[] ]"), BAD ("\"a\" \"b\""),
};

static void
test_cases (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      const ScanCase *c = &cases[i];
      g_autofree char *shown = g_strescape (c->text, NULL);
      guint members = G_MAXUINT;
      KtLedgerBad why = KT_LEDGER_N_BAD;
      gboolean good;

      g_test_message ("%s", shown);
      good = kt_ledger_json_scan (c->text, strlen (c->text), &members, &why);
      g_assert_cmpint (good, ==, c->good);
      if (good)
        g_assert_cmpuint (members, ==, c->members);
      else
        g_assert_cmpstr (kt_ledger_bad_to_string (why), ==, kt_ledger_bad_to_string (c->why));
    }
}

/* A NUL byte inside the length is refused, wherever it is. */
static void
test_nul_bytes (void)
{
  static const struct { const char *bytes; gsize len; } nul[] = {
    { "\0", 1 }, { "{}\0", 3 }, { "\"a\0b\"", 5 }, { "{\"a\0\": 1}", 9 }, { "[1,\0 2]", 7 },
  };

  for (guint i = 0; i < G_N_ELEMENTS (nul); i++)
    {
      guint members;
      KtLedgerBad why = KT_LEDGER_N_BAD;

      g_assert_false (kt_ledger_json_scan (nul[i].bytes, nul[i].len, &members, &why));
      g_assert_cmpint (why, ==, KT_LEDGER_BAD_NOT_JSON);
    }
}

/* Only the @len bytes given: a text whose end lies beyond them is cut,
 * and bytes after them do not count. */
static void
test_reads_only_len (void)
{
  static const struct { const char *bytes; gsize len; gboolean good; } cut[] = {
    { "[1]garbage", 3, TRUE }, { "{\"a\": 1}}}}", 8, TRUE }, { "true", 3, FALSE },
    { "\"abc\"", 4, FALSE }, { "\"\\u0041\"", 6, FALSE }, { "\"\\ud83d\\ude00\"", 8, FALSE },
    { "[1, 2]", 5, FALSE }, { "12345", 2, TRUE }, { "-1", 1, FALSE }, { "1e5", 2, FALSE },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cut); i++)
    {
      /* A copy of exactly @len bytes, so that ASan sees a read past it. */
      g_autofree char *exact = g_memdup2 (cut[i].bytes, cut[i].len);
      guint members;
      KtLedgerBad why;

      g_test_message ("%.*s", (int) cut[i].len, cut[i].bytes);
      g_assert_cmpint (kt_ledger_json_scan (exact, cut[i].len, &members, &why), ==, cut[i].good);
      g_assert_cmpint (kt_ledger_json_scan (cut[i].bytes, cut[i].len, &members, &why), ==,
                       cut[i].good);
    }
}

/* KT_LEDGER_DEPTH_MAX levels of arrays and objects are fine, one more is
 * too deep, and a million is an answer, not a stack overflow. */
static void
test_depth (void)
{
  static const gsize depths[] = { KT_LEDGER_DEPTH_MAX, KT_LEDGER_DEPTH_MAX + 1, 1000000 };

  for (guint i = 0; i < G_N_ELEMENTS (depths); i++)
    {
      gsize n = depths[i];
      gboolean fits = n <= KT_LEDGER_DEPTH_MAX;
      g_autoptr(GString) arrays = g_string_new (NULL);
      g_autoptr(GString) objects = g_string_new (NULL);
      guint members = G_MAXUINT;
      KtLedgerBad why = KT_LEDGER_N_BAD;

      for (gsize d = 0; d < n; d++)
        {
          g_string_append_c (arrays, '[');
          g_string_append (objects, d == 0 ? "{\"a\":" : "{\"b\":1,\"a\":");
        }
      g_string_append (objects, "1");
      for (gsize d = 0; d < n; d++)
        {
          g_string_append_c (arrays, ']');
          g_string_append_c (objects, '}');
        }
      g_assert_cmpint (kt_ledger_json_scan (arrays->str, arrays->len, &members, &why), ==, fits);
      if (fits)
        g_assert_cmpuint (members, ==, 0);
      else
        g_assert_cmpint (why, ==, KT_LEDGER_BAD_TOO_DEEP);
      g_assert_cmpint (kt_ledger_json_scan (objects->str, objects->len, &members, &why), ==,
                       fits);
      if (fits)
        g_assert_cmpuint (members, ==, 1);
      else
        g_assert_cmpint (why, ==, KT_LEDGER_BAD_TOO_DEEP);
    }
}

/* kt_ledger_json_read: the four members as slices, escapes as written;
 * the root an object whose names, escapes decoded, are distinct (a few
 * compared pair by pair, many sorted: both ways tried); the scan's
 * verdicts first. */
typedef struct
{
  const char *text;
  KtLedgerBad why;          /* KT_LEDGER_N_BAD: read */
  const char *members[4];   /* as written, "#" prefixing a type that is no string; NULL: absent */
} ReadCase;

#define READ(t, a, b, c, d) { t, KT_LEDGER_N_BAD, { a, b, c, d } }
#define UNREAD(t, w) { t, KT_LEDGER_BAD_##w, { NULL, NULL, NULL, NULL } }

static const ReadCase read_cases[] = {
  READ ("{\"txn\":\"T\",\"account\":\"A\",\"amount\":\"1.5\",\"ts\":\"x\"}", "T", "A", "1.5", "x"),
  READ (" { \"ts\" : \"x\" , \"n\": {\"txn\": \"no\"}, \"txn\" : \"\" } ", "", NULL, NULL, "x"),
  /* Names are matched decoded, values handed on as written. */
  READ ("{\"t\\u0078n\":\"T\\u002d1\",\"\\u0061ccount\":\"\\u00c5\"}", "T\\u002d1", "\\u00c5", NULL, NULL),
  READ ("{\"txn\":1,\"account\":null,\"amount\":[\"1\"],\"ts\":{}}", "#1", "#null", "#[\"1\"]", "#{}"),
  READ ("{\"txn\":true,\"account\":false,\"amount\":-0.5e3}", "#true", "#false", "#-0.5e3", NULL),
  READ ("{\"tx\":\"a\",\"txnx\":\"b\",\"TXN\":\"c\",\"txn \":\"d\"}", NULL, NULL, NULL, NULL),
  READ ("{}", NULL, NULL, NULL, NULL),
  /* Many members: the sorted check. */
  READ ("{\"a\":1,\"b\":2,\"c\":3,\"d\":4,\"e\":5,\"f\":6,\"g\":7,\"h\":8,\"ab\":9,\"\":0,"
        "\"txn\":\"T\"}", "T", NULL, NULL, NULL),
  /* Repeats: of the four or of any other member, written either way. */
  UNREAD ("{\"txn\":\"T\",\"txn\":\"T\"}", DUPLICATE_FIELD),
  UNREAD ("{\"a\":1,\"txn\":\"T\",\"a\":1}", DUPLICATE_FIELD),
  UNREAD ("{\"t\\u0078n\":\"T\",\"txn\":\"U\"}", DUPLICATE_FIELD),
  UNREAD ("{\"\\/\":1,\"/\":2}", DUPLICATE_FIELD),
  UNREAD ("{\"\":1,\"\":2}", DUPLICATE_FIELD),
  UNREAD ("{\"a\":1,\"b\":2,\"c\":3,\"d\":4,\"e\":5,\"f\":6,\"g\":7,\"h\":8,\"i\":9,"
          "\"\\u0065\":10}", DUPLICATE_FIELD),
  UNREAD ("{\"a\":1,\"b\":2,\"c\":3,\"d\":4,\"e\":5,\"f\":6,\"g\":7,\"h\":8,\"i\":9,"
          "\"ab\":10,\"ab\":11}", DUPLICATE_FIELD),
  /* Not repeats: nested members, and names equal only up to a prefix. */
  READ ("{\"a\":{\"a\":1,\"a\":2},\"ab\":1,\"a\\u0062c\":2}", NULL, NULL, NULL, NULL),
  /* The root is no object. */
  UNREAD ("[{\"txn\":\"T\"}]", NOT_OBJECT), UNREAD ("\"txn\"", NOT_OBJECT), UNREAD (" 1 ", NOT_OBJECT),
  /* The scan's verdicts come first: a repeat before a syntax error is not
   * JSON. */
  UNREAD ("{\"txn\":\"T\",\"txn\":\"T\"", NOT_JSON), UNREAD ("{\"txn\":\"\\u0000\"}", NUL_ESCAPE),
  UNREAD ("{\"a\":1,\"a\":\"\\udc00\"}", SURROGATE_ESCAPE),
};

static void
test_read (void)
{
  g_autoptr(KtLedgerJsonReader) reader = kt_ledger_json_reader_new ();

  for (guint i = 0; i < G_N_ELEMENTS (read_cases); i++)
    {
      const ReadCase *c = &read_cases[i];
      g_autofree char *shown = g_strescape (c->text, NULL);
      /* A copy of exactly its bytes, so that ASan sees a read past them. */
      g_autofree char *exact = g_memdup2 (c->text, strlen (c->text));
      KtJsonValue m[KT_LEDGER_N_MEMBERS];
      KtLedgerBad why = KT_LEDGER_N_BAD;
      gboolean good;

      g_test_message ("%s", shown);
      good = kt_ledger_json_read (reader, exact, strlen (c->text), m, &why);
      g_assert_cmpint (good, ==, c->why == KT_LEDGER_N_BAD);
      if (!good)
        g_assert_cmpstr (kt_ledger_bad_to_string (why), ==, kt_ledger_bad_to_string (c->why));
      for (guint k = 0; k < KT_LEDGER_N_MEMBERS; k++)
        {
          const char *want = c->members[k];

          if (want == NULL)
            {
              g_assert_cmpint (m[k].type, ==, KT_JSON_ABSENT);
              continue;
            }
          g_assert_cmpint (m[k].type == KT_JSON_STRING, ==, want[0] != '#');
          if (want[0] == '#')
            want++;
          g_assert_cmpuint (m[k].len, ==, strlen (want));
          g_assert_cmpint (memcmp (m[k].text, want, m[k].len), ==, 0);
          g_assert_cmpint (m[k].escaped, ==, m[k].type == KT_JSON_STRING
                                               && strchr (want, '\\') != NULL);
        }
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ledger-json/cases", test_cases);
  g_test_add_func ("/ledger-json/nul-bytes", test_nul_bytes);
  g_test_add_func ("/ledger-json/reads-only-len", test_reads_only_len);
  g_test_add_func ("/ledger-json/depth", test_depth);
  g_test_add_func ("/ledger-json/read", test_read);
  return g_test_run ();
}
