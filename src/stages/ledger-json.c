/* ledger-json.c - the ledger's strict JSON scan and reader (ledger-json.h).
 *
 * Takes a message's bytes, hands on whether they are one RFC 8259 text
 * that json-glib would read as written (and the number of the root
 * object's members), or the first reason they are not; the reader hands
 * on, from the same pass, the four members a ledger message is read for,
 * as slices of the text, and refuses a root member named twice. The scan
 * exists because json-glib 1.6 is lenient where money cannot be (it takes
 * comments, single quotes and a second document, lets a repeated member
 * win silently, cuts strings at "\u0000") and recurses without a limit;
 * the reader because a json-glib tree per message (a GObject, a node and
 * a copy per member) was most of the ledger's CPU. The scan never builds
 * anything, never reads past @len, and never recurses deeper than
 * KT_LEDGER_DEPTH_MAX; only the reader allocates, in buffers it keeps
 * from message to message. */
#include "ledger-json.h"

#include <stdlib.h>
#include <string.h>

/* A member name of the root object: @len bytes at @at, in the text or, when
 * it holds escapes, decoded in the reader's buffer. */
typedef struct
{
  gsize    at;
  gsize    len;
  gboolean decoded;
} Name;

struct _KtLedgerJsonReader
{
  GArray     *names;    /* Name, the root object's members in text order */
  GByteArray *decoded;  /* the escaped names, decoded */
};

typedef struct
{
  const char *p, *end, *start;
  guint       depth;
  guint       top_members;  /* members of the root object, repeats included */
  KtLedgerBad why;
  gboolean    escaped;      /* the last string scanned held an escape */
  /* Reading (kt_ledger_json_read): NULL for the scan alone. */
  KtLedgerJsonReader *reader;
  KtJsonValue        *members;
} Scan;

static const char *const member_names[KT_LEDGER_N_MEMBERS] = {
  [KT_LEDGER_TXN] = "txn", [KT_LEDGER_ACCOUNT] = "account", [KT_LEDGER_AMOUNT] = "amount",
  [KT_LEDGER_TS] = "ts",
};

static gboolean scan_value (Scan *s);

static gboolean
scan_fail (Scan *s, KtLedgerBad why)
{
  s->why = why;
  return FALSE;
}

static void
skip_space (Scan *s)
{
  while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
    s->p++;
}

/* Four hex digits of a \u escape, at s->p. */
static gboolean
scan_hex4 (Scan *s, guint *out)
{
  guint v = 0;

  if (s->end - s->p < 4)
    return scan_fail (s, KT_LEDGER_BAD_NOT_JSON);
  for (int i = 0; i < 4; i++, s->p++)
    {
      if (!g_ascii_isxdigit (*s->p))
        return scan_fail (s, KT_LEDGER_BAD_NOT_JSON);
      v = v * 16 + (guint) g_ascii_xdigit_value (*s->p);
    }
  *out = v;
  return TRUE;
}

/* At a '"'. UTF-8 was validated for the whole value already; escapes are
 * checked here, so that the decoded string is valid UTF-8 too. */
static gboolean
scan_string (Scan *s)
{
  s->escaped = FALSE;
  for (s->p++; s->p < s->end;)
    {
      guchar c = (guchar) *s->p++;

      if (c == '"')
        return TRUE;
      if (c < 0x20)
        return scan_fail (s, KT_LEDGER_BAD_NOT_JSON);
      if (c != '\\')
        continue;
      s->escaped = TRUE;
      if (s->p == s->end)
        break;
      switch (*s->p++)
        {
        case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
          break;
        case 'u':
          {
            guint v, low;

            if (!scan_hex4 (s, &v))
              return FALSE;
            if (v == 0)
              return scan_fail (s, KT_LEDGER_BAD_NUL_ESCAPE);
            /* UTF-16 surrogates name a character only as a pair: a high
             * one, then at once an escaped low one. RFC 8259 lets a lone
             * one pass its grammar, but it is no character: json-glib 1.6
             * turns "\ud800x" into invalid UTF-8 (and eats the x), which
             * a utf8mb4 column refuses, failing the batch for ever. */
            if (v >= 0xdc00 && v <= 0xdfff)
              return scan_fail (s, KT_LEDGER_BAD_SURROGATE_ESCAPE);
            if (v >= 0xd800 && v <= 0xdbff)
              {
                if (s->end - s->p < 2 || s->p[0] != '\\' || s->p[1] != 'u')
                  return scan_fail (s, KT_LEDGER_BAD_SURROGATE_ESCAPE);
                s->p += 2;
                if (!scan_hex4 (s, &low))
                  return FALSE;
                if (low < 0xdc00 || low > 0xdfff)
                  return scan_fail (s, KT_LEDGER_BAD_SURROGATE_ESCAPE);
              }
          }
          break;
        default:
          return scan_fail (s, KT_LEDGER_BAD_NOT_JSON);
        }
    }
  return scan_fail (s, KT_LEDGER_BAD_NOT_JSON);  /* unterminated */
}

static gboolean
scan_digits (Scan *s)
{
  const char *start = s->p;

  while (s->p < s->end && g_ascii_isdigit (*s->p))
    s->p++;
  return s->p > start || scan_fail (s, KT_LEDGER_BAD_NOT_JSON);
}

/* -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static gboolean
scan_number (Scan *s)
{
  if (*s->p == '-')
    s->p++;
  if (s->p < s->end && *s->p == '0')
    s->p++;
  else if (!scan_digits (s))
    return FALSE;
  if (s->p < s->end && *s->p == '.')
    {
      s->p++;
      if (!scan_digits (s))
        return FALSE;
    }
  if (s->p < s->end && (*s->p == 'e' || *s->p == 'E'))
    {
      s->p++;
      if (s->p < s->end && (*s->p == '+' || *s->p == '-'))
        s->p++;
      if (!scan_digits (s))
        return FALSE;
    }
  return TRUE;
}

static gboolean
scan_literal (Scan *s, const char *word)
{
  gsize n = strlen (word);

  if ((gsize) (s->end - s->p) < n || memcmp (s->p, word, n) != 0)
    return scan_fail (s, KT_LEDGER_BAD_NOT_JSON);
  s->p += n;
  return TRUE;
}

/* Keeps the name of a member of the root object (@len bytes at @name, as
 * written) for the duplicate check, and returns which of the four it is,
 * or -1. */
static int
root_member (Scan *s, const char *name, gsize len)
{
  KtLedgerJsonReader *r = s->reader;
  Name n = { (gsize) (name - s->start), len, FALSE };
  const char *text = name;

  if (s->escaped)
    {
      KtJsonValue v = { KT_JSON_STRING, TRUE, name, len };
      guint at = r->decoded->len;

      /* Decoding never grows a string. */
      g_byte_array_set_size (r->decoded, at + (guint) len);
      n.len = kt_json_unescape (&v, (char *) r->decoded->data + at);
      g_byte_array_set_size (r->decoded, at + (guint) n.len);
      n.at = at;
      n.decoded = TRUE;
      text = (const char *) r->decoded->data + at;
    }
  g_array_append_val (r->names, n);
  for (int i = 0; i < KT_LEDGER_N_MEMBERS; i++)
    if (strlen (member_names[i]) == n.len && memcmp (member_names[i], text, n.len) == 0)
      return i;
  return -1;
}

/* The value scanned from @start to s->p, as json-scan.h hands values on:
 * what the ledger reads of it is its type and a string's slice. */
static KtJsonValue
value_at (const Scan *s, const char *start)
{
  KtJsonValue v = { KT_JSON_NUMBER, FALSE, start, (gsize) (s->p - start) };

  switch (*start)
    {
    case '"':
      v = (KtJsonValue) { KT_JSON_STRING, s->escaped, start + 1, v.len - 2 };
      break;
    case '{':
      v.type = KT_JSON_OBJECT;
      break;
    case '[':
      v.type = KT_JSON_ARRAY;
      break;
    case 't':
      v.type = KT_JSON_TRUE;
      break;
    case 'f':
      v.type = KT_JSON_FALSE;
      break;
    case 'n':
      v.type = KT_JSON_NULL;
      break;
    default:
      break;
    }
  return v;
}

/* At a '{' or '['. Depth is checked on the way in, so recursion here is
 * bounded by KT_LEDGER_DEPTH_MAX whatever the input. */
static gboolean
scan_container (Scan *s)
{
  gboolean object = *s->p == '{';
  char close = object ? '}' : ']';

  if (++s->depth > KT_LEDGER_DEPTH_MAX)
    return scan_fail (s, KT_LEDGER_BAD_TOO_DEEP);
  s->p++;
  skip_space (s);
  if (s->p < s->end && *s->p == close)
    {
      s->p++;
      s->depth--;
      return TRUE;
    }
  for (;;)
    {
      int member = -1;
      const char *value;

      if (object)
        {
          const char *name;

          skip_space (s);
          if (s->p == s->end || *s->p != '"')
            return scan_fail (s, KT_LEDGER_BAD_NOT_JSON);
          name = s->p + 1;
          if (!scan_string (s))
            return FALSE;
          if (s->depth == 1)
            {
              s->top_members++;
              if (s->reader != NULL)
                member = root_member (s, name, (gsize) (s->p - 1 - name));
            }
          skip_space (s);
          if (s->p == s->end || *s->p++ != ':')
            return scan_fail (s, KT_LEDGER_BAD_NOT_JSON);
        }
      skip_space (s);
      value = s->p;
      if (!scan_value (s))
        return FALSE;
      if (member >= 0)
        s->members[member] = value_at (s, value);
      skip_space (s);
      if (s->p == s->end)
        return scan_fail (s, KT_LEDGER_BAD_NOT_JSON);
      if (*s->p == ',')
        {
          s->p++;
          continue;
        }
      if (*s->p++ != close)
        return scan_fail (s, KT_LEDGER_BAD_NOT_JSON);
      s->depth--;
      return TRUE;
    }
}

static gboolean
scan_value (Scan *s)
{
  skip_space (s);
  if (s->p == s->end)
    return scan_fail (s, KT_LEDGER_BAD_NOT_JSON);
  switch (*s->p)
    {
    case '{':
    case '[':
      return scan_container (s);
    case '"':
      return scan_string (s);
    case 't':
      return scan_literal (s, "true");
    case 'f':
      return scan_literal (s, "false");
    case 'n':
      return scan_literal (s, "null");
    default:
      if (*s->p == '-' || g_ascii_isdigit (*s->p))
        return scan_number (s);
      return scan_fail (s, KT_LEDGER_BAD_NOT_JSON);
    }
}

/* The whole text: one value, white space around it. */
static gboolean
scan_text (Scan *s, const char *value, gsize len, KtLedgerBad *why)
{
  s->p = s->start = value;
  s->end = value + len;
  /* Also refuses NUL bytes, which json-glib might otherwise take as the
   * end of the text. */
  if (len == 0 || !g_utf8_validate_len (value, len, NULL))
    {
      *why = KT_LEDGER_BAD_NOT_JSON;
      return FALSE;
    }
  if (!scan_value (s))
    {
      *why = s->why;
      return FALSE;
    }
  skip_space (s);
  if (s->p != s->end)
    {
      *why = KT_LEDGER_BAD_NOT_JSON;
      return FALSE;
    }
  return TRUE;
}

gboolean
kt_ledger_json_scan (const char *value, gsize len, guint *top_members, KtLedgerBad *why)
{
  Scan s = { .why = KT_LEDGER_BAD_NOT_JSON };

  if (!scan_text (&s, value, len, why))
    return FALSE;
  *top_members = s.top_members;
  return TRUE;
}

KtLedgerJsonReader *
kt_ledger_json_reader_new (void)
{
  KtLedgerJsonReader *self = g_new0 (KtLedgerJsonReader, 1);

  self->names = g_array_sized_new (FALSE, FALSE, sizeof (Name), 8);
  self->decoded = g_byte_array_new ();
  return self;
}

void
kt_ledger_json_reader_free (KtLedgerJsonReader *self)
{
  if (self == NULL)
    return;
  g_array_unref (self->names);
  g_byte_array_unref (self->decoded);
  g_free (self);
}

typedef struct
{
  const KtLedgerJsonReader *reader;
  const char               *text;
} NameSource;

static const char *
name_text (const NameSource *src, const Name *n)
{
  return n->decoded ? (const char *) src->reader->decoded->data + n->at : src->text + n->at;
}

static gint
compare_names (gconstpointer a, gconstpointer b, gpointer data)
{
  const Name *x = a, *y = b;
  int c = memcmp (name_text (data, x), name_text (data, y), MIN (x->len, y->len));

  return c != 0 ? c : (x->len > y->len) - (x->len < y->len);
}

/* Whether a name of the root object comes twice, escapes decoded (as
 * json-glib compares them: "\u0074xn" is "txn"). A message's few members
 * are compared pair by pair; a text of many is sorted first, so that no
 * text costs more than n log n comparisons. */
static gboolean
repeated_name (KtLedgerJsonReader *self, const char *text)
{
  NameSource src = { self, text };
  Name *names = (Name *) (void *) self->names->data;
  guint n = self->names->len;

  if (n <= 8)
    {
      for (guint i = 0; i < n; i++)
        for (guint j = i + 1; j < n; j++)
          if (compare_names (&names[i], &names[j], &src) == 0)
            return TRUE;
      return FALSE;
    }
  g_array_sort_with_data (self->names, compare_names, &src);
  names = (Name *) (void *) self->names->data;
  for (guint i = 1; i < n; i++)
    if (compare_names (&names[i - 1], &names[i], &src) == 0)
      return TRUE;
  return FALSE;
}

gboolean
kt_ledger_json_read (KtLedgerJsonReader *self, const char *value, gsize len,
                     KtJsonValue *members, KtLedgerBad *why)
{
  Scan s = { .why = KT_LEDGER_BAD_NOT_JSON, .reader = self, .members = members };
  const char *first = value;

  g_array_set_size (self->names, 0);
  g_byte_array_set_size (self->decoded, 0);
  memset (members, 0, KT_LEDGER_N_MEMBERS * sizeof *members);
  if (!scan_text (&s, value, len, why))
    goto bad;
  while (*first == ' ' || *first == '\t' || *first == '\n' || *first == '\r')
    first++;
  if (*first != '{')
    {
      *why = KT_LEDGER_BAD_NOT_OBJECT;
      goto bad;
    }
  if (repeated_name (self, value))
    {
      *why = KT_LEDGER_BAD_DUPLICATE_FIELD;
      goto bad;
    }
  return TRUE;

bad:
  memset (members, 0, KT_LEDGER_N_MEMBERS * sizeof *members);
  return FALSE;
}
