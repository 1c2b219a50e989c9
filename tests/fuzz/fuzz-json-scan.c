/* fuzz-json-scan.c - libFuzzer target for the shared JSON scanner
 * (json-scan.c), against the ledger's strict scan and json-glib.
 *
 * Any bytes are a text. The scanner must never crash or read past the
 * bytes it is given (libFuzzer hands them in a buffer of exactly that
 * size, ASan watches), and must keep its contract:
 *  - its verdict is the ledger's strict scan's (the same grammar and
 *    bound), and a refusal gives one of its reasons;
 *  - what it accepts json-glib reads, and every path it was asked for
 *    holds what json-glib's tree holds there: the same type, a string's
 *    characters the same once decoded, an array's elements each heard
 *    once, in order. Where an object on the way repeats a name the two
 *    differ by design (json-glib keeps the last member whole; the scan
 *    keeps the last value found for each path), so those paths are
 *    compared only where the objects on their way repeat no name (the
 *    ledger's scan counts members with repeats, json-glib without);
 *  - an accepted text cut before its own last byte is refused, and one
 *    with a ']' after it too;
 *  - with KT_JSON_DOTTED and KT_JSON_UNIQUE the verdict is the same, but
 *    for a refusal as a duplicate. */
#include <glib.h>
#include <json-glib/json-glib.h>
#include <string.h>
#include "json-scan.h"
#include "ledger-json.h"

int LLVMFuzzerTestOneInput (const guint8 *data, size_t size);

/* Paths over the names the seed corpus uses. */
static const char *const path_a[] = { "a" };
static const char *const path_ab[] = { "a", "b" };
static const char *const path_b[] = { "b" };
static const char *const path_aa[] = { "a", "a" };
static const char *const path_empty[] = { "" };
static const char *const path_dot[] = { "a.b" };
static const char *const path_each[] = { "a", KT_JSON_EACH };
static const char *const path_each_b[] = { "a", KT_JSON_EACH, "b" };

static const struct
{
  const char *const *names;
  guint              n;
} paths_read[] = {
  { path_a, 1 }, { path_ab, 2 }, { path_b, 1 }, { path_aa, 2 }, { path_empty, 1 },
  { path_dot, 1 },
};

/* The elements of a[] as heard, in order: whether each had a b. A
 * repeated "a" is heard twice over; json-glib keeps the last, whose
 * elements are the last heard. */
static void
on_element (const KtJsonValue *values, G_GNUC_UNUSED const KtJsonValue *element,
            gpointer data)
{
  GArray *heard = data;
  gboolean with_b = values[G_N_ELEMENTS (paths_read)].type != KT_JSON_ABSENT;

  g_array_append_val (heard, with_b);
}

/* json-glib's node at a path (objects only), or NULL. */
static JsonNode *
node_at (JsonNode *root, const char *const *names, guint n)
{
  JsonNode *node = root;

  for (guint i = 0; i < n && node != NULL; i++)
    node = JSON_NODE_HOLDS_OBJECT (node)
           ? json_object_get_member (json_node_get_object (node), names[i]) : NULL;
  return node;
}

static void
check_value (const KtJsonValue *v, JsonNode *node)
{
  if (node == NULL)
    {
      g_assert_cmpint (v->type, ==, KT_JSON_ABSENT);
      return;
    }
  switch (json_node_get_node_type (node))
    {
    case JSON_NODE_OBJECT:
      g_assert_cmpint (v->type, ==, KT_JSON_OBJECT);
      break;
    case JSON_NODE_ARRAY:
      g_assert_cmpint (v->type, ==, KT_JSON_ARRAY);
      break;
    case JSON_NODE_NULL:
      g_assert_cmpint (v->type, ==, KT_JSON_NULL);
      break;
    case JSON_NODE_VALUE:
    default:
      if (json_node_get_value_type (node) == G_TYPE_STRING)
        {
          const char *want = json_node_get_string (node);

          g_assert_cmpint (v->type, ==, KT_JSON_STRING);
          g_assert_true (kt_json_string_equal (v, want, strlen (want)));
        }
      else if (json_node_get_value_type (node) == G_TYPE_BOOLEAN)
        g_assert_cmpint (v->type, ==, json_node_get_boolean (node) ? KT_JSON_TRUE
                                                                   : KT_JSON_FALSE);
      else
        g_assert_cmpint (v->type, ==, KT_JSON_NUMBER);
      break;
    }
}

int
LLVMFuzzerTestOneInput (const guint8 *data, size_t size)
{
  static KtJsonPaths *paths, *dotted;
  static GArray *heard;
  const char *text = (const char *) data;
  KtJsonValue values[G_N_ELEMENTS (paths_read) + 2];
  g_autoptr(JsonParser) parser = NULL;
  guint members;
  KtLedgerBad lwhy;
  KtJsonBad why = KT_JSON_OK;
  KtJsonType root;
  gboolean ok;
  JsonNode *tree, *a;

  if (paths == NULL)
    {
      paths = kt_json_paths_new (32, 0);
      for (guint i = 0; i < G_N_ELEMENTS (paths_read); i++)
        g_assert_cmpuint (kt_json_paths_add (paths, paths_read[i].names, paths_read[i].n), ==, i);
      kt_json_paths_add (paths, path_each_b, 3);
      dotted = kt_json_paths_new (32, KT_JSON_DOTTED | KT_JSON_UNIQUE);
      for (guint i = 0; i < G_N_ELEMENTS (paths_read); i++)
        kt_json_paths_add (dotted, paths_read[i].names, paths_read[i].n);
      kt_json_paths_add (dotted, path_each_b, 3);
      heard = g_array_new (FALSE, FALSE, sizeof (gboolean));
      kt_json_paths_on_element (paths, path_each, 2, on_element, heard);
    }
  g_array_set_size (heard, 0);
  ok = kt_json_scan (paths, text, size, values, &root, &why, NULL);
  g_assert_cmpint (ok, ==, kt_ledger_json_scan (text, size, &members, &lwhy));
  {
    KtJsonValue dvalues[G_N_ELEMENTS (paths_read) + 2];
    KtJsonBad dwhy;

    if (kt_json_scan (dotted, text, size, dvalues, NULL, &dwhy, NULL) != ok)
      g_assert_true (ok && dwhy == KT_JSON_BAD_DUPLICATE);
  }
  if (!ok)
    {
      g_assert_true (why == KT_JSON_BAD_SYNTAX || why == KT_JSON_BAD_UTF8
                     || why == KT_JSON_BAD_NUL || why == KT_JSON_BAD_SURROGATE
                     || why == KT_JSON_BAD_DEPTH);
      return 0;
    }

  parser = json_parser_new ();
  g_assert_true (json_parser_load_from_data (parser, text, (gssize) size, NULL));
  tree = json_parser_get_root (parser);
  g_assert_nonnull (tree);
  if (JSON_NODE_HOLDS_OBJECT (tree) && json_object_get_size (json_node_get_object (tree)) != members)
    return 0;
  a = node_at (tree, path_a, 1);
  for (guint i = 0; i < G_N_ELEMENTS (paths_read); i++)
    {
      if (paths_read[i].n == 2 && a != NULL && JSON_NODE_HOLDS_OBJECT (a))
        {
          guint a_members;

          g_assert_true (kt_ledger_json_scan (values[0].text, values[0].len, &a_members, &lwhy));
          if (a_members != json_object_get_size (json_node_get_object (a)))
            continue;
        }
      check_value (&values[i], node_at (tree, paths_read[i].names, paths_read[i].n));
    }
  if (a != NULL && JSON_NODE_HOLDS_ARRAY (a))
    {
      JsonArray *array = json_node_get_array (a);
      guint n = json_array_get_length (array);

      g_assert_cmpuint (heard->len, >=, n);
      for (guint i = 0; i < n; i++)
        g_assert_cmpint (g_array_index (heard, gboolean, heard->len - n + i), ==,
                         node_at (json_array_get_element (array, i), path_b, 1) != NULL);
    }

  /* Nothing after the text; cut before its own last byte it is no text. */
  {
    g_autofree char *more = g_malloc (size + 1);
    gsize last = size;

    memcpy (more, text, size);
    more[size] = ']';
    g_assert_false (kt_json_scan (paths, more, size + 1, values, NULL, NULL, NULL));
    while (last > 0 && strchr (" \t\n\r", text[last - 1]) != NULL)
      last--;
    if (last > 0 && strchr ("}]\"el", text[last - 1]) != NULL)
      g_assert_false (kt_json_scan (paths, text, last - 1, values, NULL, NULL, NULL));
  }
  return 0;
}
