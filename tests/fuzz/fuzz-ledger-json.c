/* fuzz-ledger-json.c - libFuzzer target for the ledger's strict JSON scan
 * (ledger-json.c) and its reading of a message (ledger.c's
 * kt_ledger_parse, through kt_ledger_json_read), against json-glib as the
 * reference.
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
 *  - a refusal gives one of the four reasons the scan can give;
 *  - kt_ledger_parse() gives exactly what the ledger gave when json-glib
 *    built a tree after the scan (reference_parse below, that code as it
 *    was): the same verdict, the same reason, the same four fields. */
#include <glib.h>
#include <json-glib/json-glib.h>
#include <string.h>
#include "decimal.h"
#include "ledger-json.h"
#include "ledger.h"

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

/* ---- The reference: the ledger's reading through json-glib's tree ------ */

typedef struct
{
  char     *txn, *account, *ts;
  KtAmount  amount;
} RefFields;

static gboolean
ref_string (JsonObject *obj, const char *name, const char **out, KtLedgerBad *why)
{
  JsonNode *node = json_object_get_member (obj, name);

  if (node == NULL)
    {
      *why = KT_LEDGER_BAD_MISSING_FIELD;
      return FALSE;
    }
  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    {
      *why = KT_LEDGER_BAD_WRONG_TYPE;
      return FALSE;
    }
  *out = json_node_get_string (node);
  return TRUE;
}

static gboolean
ref_key (const char *text, KtLedgerBad *why)
{
  if (*text == '\0')
    *why = KT_LEDGER_BAD_FIELD_EMPTY;
  else if (!g_utf8_validate (text, -1, NULL))
    *why = KT_LEDGER_BAD_NOT_JSON;
  else if (strlen (text) > 4 * KT_LEDGER_FIELD_MAX
           || g_utf8_strlen (text, -1) > KT_LEDGER_FIELD_MAX)
    *why = KT_LEDGER_BAD_FIELD_TOO_LONG;
  else
    {
      for (const char *p = text; *p != '\0'; p = g_utf8_next_char (p))
        if (g_unichar_iscntrl (g_utf8_get_char (p)))
          {
            *why = KT_LEDGER_BAD_FIELD_CONTROL;
            return FALSE;
          }
      return TRUE;
    }
  return FALSE;
}

static int
ref_digits (const char *p, int n)
{
  int v = 0;

  for (int i = 0; i < n; i++)
    {
      if (!g_ascii_isdigit (p[i]))
        return -1;
      v = v * 10 + (p[i] - '0');
    }
  return v;
}

static gboolean
ref_ts (const char *ts)
{
  int year, month, day, h, m, sec;

  if (strlen (ts) != 19 || ts[4] != '-' || ts[7] != '-' || ts[10] != ' '
      || ts[13] != ':' || ts[16] != ':')
    return FALSE;
  year = ref_digits (ts, 4);
  month = ref_digits (ts + 5, 2);
  day = ref_digits (ts + 8, 2);
  h = ref_digits (ts + 11, 2);
  m = ref_digits (ts + 14, 2);
  sec = ref_digits (ts + 17, 2);
  if (year < 1000 || month < 1 || month > 12 || day < 1
      || day > g_date_get_days_in_month ((GDateMonth) month, (GDateYear) year))
    return FALSE;
  return h >= 0 && h <= 23 && m >= 0 && m <= 59 && sec >= 0 && sec <= 59;
}

static gboolean
reference_parse (const char *value, gsize len, RefFields *out, KtLedgerBad *why)
{
  g_autoptr(JsonParser) parser = json_parser_new_immutable ();
  g_autoptr(GError) local = NULL;
  JsonNode *root;
  JsonObject *obj;
  const char *txn, *account, *amount, *ts;
  guint members = 0;

  if (!kt_ledger_json_scan (value, len, &members, why))
    return FALSE;
  if (!json_parser_load_from_data (parser, value, (gssize) len, &local))
    {
      *why = KT_LEDGER_BAD_NOT_JSON;
      return FALSE;
    }
  root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    {
      *why = KT_LEDGER_BAD_NOT_OBJECT;
      return FALSE;
    }
  obj = json_node_get_object (root);
  if (json_object_get_size (obj) != members)
    {
      *why = KT_LEDGER_BAD_DUPLICATE_FIELD;
      return FALSE;
    }
  if (!ref_string (obj, "txn", &txn, why) || !ref_key (txn, why)
      || !ref_string (obj, "account", &account, why) || !ref_key (account, why)
      || !ref_string (obj, "amount", &amount, why))
    return FALSE;
  if (!kt_amount_parse (amount, &out->amount, &local))
    {
      switch ((KtAmountError) local->code)
        {
        case KT_AMOUNT_ERROR_PRECISION:
          *why = KT_LEDGER_BAD_AMOUNT_DECIMALS;
          break;
        case KT_AMOUNT_ERROR_OVERFLOW:
          *why = KT_LEDGER_BAD_AMOUNT_OVERFLOW;
          break;
        case KT_AMOUNT_ERROR_SYNTAX:
        default:
          *why = KT_LEDGER_BAD_AMOUNT_SYNTAX;
          break;
        }
      return FALSE;
    }
  if (!ref_string (obj, "ts", &ts, why))
    return FALSE;
  if (!ref_ts (ts))
    {
      *why = KT_LEDGER_BAD_TIMESTAMP;
      return FALSE;
    }
  out->txn = g_strdup (txn);
  out->account = g_strdup (account);
  out->ts = g_strdup (ts);
  return TRUE;
}

/* kt_ledger_parse() against the reference, on the same bytes. */
static void
check_parse (const char *text, gsize len)
{
  RefFields ref = { 0 };
  g_auto(KtLedgerMessage) msg = { 0 };
  KtLedgerBad ref_why = KT_LEDGER_N_BAD, why = KT_LEDGER_N_BAD;
  gboolean ref_good = reference_parse (text, len, &ref, &ref_why);
  gboolean good = kt_ledger_parse (text, len, &msg, &why);

  if (good != ref_good || (!good && why != ref_why))
    g_error ("kt_ledger_parse: %s (%s), json-glib's reading: %s (%s): %.*s",
             good ? "good" : "bad", good ? "" : kt_ledger_bad_to_string (why),
             ref_good ? "good" : "bad", ref_good ? "" : kt_ledger_bad_to_string (ref_why),
             (int) MIN (len, 200), text);
  if (good)
    {
      g_assert_cmpstr (msg.txn, ==, ref.txn);
      g_assert_cmpstr (msg.account, ==, ref.account);
      g_assert_cmpstr (msg.ts, ==, ref.ts);
      g_assert_cmpint (msg.amount, ==, ref.amount);
    }
  g_free (ref.txn);
  g_free (ref.account);
  g_free (ref.ts);
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
  check_parse (text, size);
  return 0;
}
