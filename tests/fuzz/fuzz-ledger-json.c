/* fuzz-ledger-json.c - libFuzzer target for the ledger's strict JSON scan
 * (ledger-json.c), against json-glib as the reference.
 *
 * Any bytes are a ledger message. The scan must never crash or read past
 * the bytes it is given (libFuzzer hands them in a buffer of exactly that
 * size, ASan watches), and must keep its contract:
 *  - what it accepts is valid UTF-8 without a NUL byte, json-glib reads it,
 *    every string and member name json-glib decodes from it is valid UTF-8,
 *    the root is an object exactly when the scan counted members, and
 *    json-glib's object has at most that many (fewer: a repeated name);
 *  - it accepts nothing after the text: an accepted text followed by ']'
 *    or '}' is refused, and JSON white space around it changes nothing;
 *  - an accepted object, array, string or literal cut before its last
 *    byte is refused;
 *  - a refusal gives one of the four reasons the scan can give. */
#include <glib.h>
#include <json-glib/json-glib.h>
#include <string.h>
#include "ledger-json.h"

int LLVMFuzzerTestOneInput (const guint8 *data, size_t size);

/* json-glib's tree: every string valid UTF-8. Bounded by the scan's depth
 * limit, which json-glib's nesting equals. */
static void
check_node (JsonNode *node, guint depth)
{
  g_assert_cmpuint (depth, <=, KT_LEDGER_DEPTH_MAX);
  switch (json_node_get_node_type (node))
    {
    case JSON_NODE_OBJECT:
      {
        JsonObjectIter iter;
        const char *name;
        JsonNode *member;

        json_object_iter_init (&iter, json_node_get_object (node));
        while (json_object_iter_next (&iter, &name, &member))
          {
            g_assert_true (g_utf8_validate (name, -1, NULL));
            check_node (member, depth + 1);
          }
      }
      break;
    case JSON_NODE_ARRAY:
      {
        JsonArray *array = json_node_get_array (node);

        for (guint i = 0; i < json_array_get_length (array); i++)
          check_node (json_array_get_element (array, i), depth + 1);
      }
      break;
    case JSON_NODE_VALUE:
      if (json_node_get_value_type (node) == G_TYPE_STRING)
        g_assert_true (g_utf8_validate (json_node_get_string (node), -1, NULL));
      break;
    case JSON_NODE_NULL:
    default:
      break;
    }
}

/* Scans a copy of @text (@len bytes) framed by @before and @after, in a
 * buffer of exactly that size. */
static gboolean
scan_framed (const char *before, const char *text, gsize len, const char *after,
             guint *members)
{
  gsize a = strlen (before), b = strlen (after);
  g_autofree char *buf = g_malloc (a + len + b + 1);
  KtLedgerBad why;

  memcpy (buf, before, a);
  memcpy (buf + a, text, len);
  memcpy (buf + a + len, after, b);
  return kt_ledger_json_scan (buf, a + len + b, members, &why);
}

static void
check_accepted (const char *text, gsize len, guint members)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  JsonNode *root;
  gsize first = 0, last = len;
  guint again = G_MAXUINT;

  g_assert_null (memchr (text, '\0', len));
  g_assert_true (g_utf8_validate_len (text, len, NULL));
  if (!json_parser_load_from_data (parser, text, (gssize) len, &error))
    g_error ("the scan accepted what json-glib refuses (%s): %.*s", error->message,
             (int) MIN (len, 200), text);
  root = json_parser_get_root (parser);
  g_assert_nonnull (root);
  check_node (root, 0);
  while (first < len && strchr (" \t\n\r", text[first]) != NULL)
    first++;
  while (last > first && strchr (" \t\n\r", text[last - 1]) != NULL)
    last--;
  g_assert_cmpuint (first, <, last);
  g_assert_cmpint (JSON_NODE_HOLDS_OBJECT (root), ==, text[first] == '{');
  if (JSON_NODE_HOLDS_OBJECT (root))
    {
      guint size = json_object_get_size (json_node_get_object (root));

      g_assert_cmpuint (size, <=, members);
      g_assert_cmpint (size == 0, ==, members == 0);
    }
  else
    g_assert_cmpuint (members, ==, 0);

  /* Nothing after the text; white space around it is nothing. */
  g_assert_false (scan_framed ("", text, len, "]", &again));
  g_assert_false (scan_framed ("", text, len, "}", &again));
  g_assert_false (scan_framed ("", text, len, " x", &again));
  g_assert_true (scan_framed (" \r\n\t", text, len, "\t\n\r ", &again));
  g_assert_cmpuint (again, ==, members);

  /* A text that has a last byte of its own (not a number, which may
   * end early) is incomplete without it. */
  if (strchr ("{[\"tfn", text[first]) != NULL)
    g_assert_false (scan_framed ("", text, last - 1, "", &again));
}

int
LLVMFuzzerTestOneInput (const guint8 *data, size_t size)
{
  const char *text = (const char *) data;
  guint members = G_MAXUINT;
  KtLedgerBad why = KT_LEDGER_N_BAD;

  if (kt_ledger_json_scan (text, size, &members, &why))
    check_accepted (text, size, members);
  else
    g_assert_true (why == KT_LEDGER_BAD_NOT_JSON || why == KT_LEDGER_BAD_TOO_DEEP
                   || why == KT_LEDGER_BAD_NUL_ESCAPE
                   || why == KT_LEDGER_BAD_SURROGATE_ESCAPE);
  return 0;
}
