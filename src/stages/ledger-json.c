/* ledger-json.c - the ledger's strict JSON scan (ledger-json.h).
 *
 * Takes a message's bytes, hands on whether they are one RFC 8259 text
 * that json-glib will read as written (and the number of the root
 * object's members, for the duplicate check), or the first reason they
 * are not. It exists because json-glib 1.6 is lenient where money cannot
 * be (it takes comments, single quotes and a second document, lets a
 * repeated member win silently, cuts strings at "\u0000") and recurses
 * without a limit. It never builds anything, never allocates, never reads
 * past @len, and never recurses deeper than KT_LEDGER_DEPTH_MAX. */
#include "ledger-json.h"

#include <string.h>

typedef struct
{
  const char *p, *end;
  guint       depth;
  guint       top_members;  /* members of the root object, repeats included */
  KtLedgerBad why;
} Scan;

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
  for (s->p++; s->p < s->end;)
    {
      guchar c = (guchar) *s->p++;

      if (c == '"')
        return TRUE;
      if (c < 0x20)
        return scan_fail (s, KT_LEDGER_BAD_NOT_JSON);
      if (c != '\\')
        continue;
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
      if (object)
        {
          skip_space (s);
          if (s->p == s->end || *s->p != '"')
            return scan_fail (s, KT_LEDGER_BAD_NOT_JSON);
          if (!scan_string (s))
            return FALSE;
          if (s->depth == 1)
            s->top_members++;
          skip_space (s);
          if (s->p == s->end || *s->p++ != ':')
            return scan_fail (s, KT_LEDGER_BAD_NOT_JSON);
        }
      if (!scan_value (s))
        return FALSE;
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

gboolean
kt_ledger_json_scan (const char *value, gsize len, guint *top_members, KtLedgerBad *why)
{
  Scan s = { value, value + len, 0, 0, KT_LEDGER_BAD_NOT_JSON };

  /* Also refuses NUL bytes, which json-glib might otherwise take as the
   * end of the text. */
  if (len == 0 || !g_utf8_validate_len (value, len, NULL))
    {
      *why = KT_LEDGER_BAD_NOT_JSON;
      return FALSE;
    }
  if (!scan_value (&s))
    {
      *why = s.why;
      return FALSE;
    }
  skip_space (&s);
  if (s.p != s.end)
    {
      *why = KT_LEDGER_BAD_NOT_JSON;
      return FALSE;
    }
  *top_members = s.top_members;
  return TRUE;
}
