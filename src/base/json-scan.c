/* json-scan.c - one pass over a JSON text (json-scan.h).
 *
 * Takes a text's bytes and a compiled tree of member paths; hands on a
 * verdict (strict RFC 8259, as ledger-json.c's scan) and, from the same
 * pass, a slice of the text for every path found. It never builds a tree,
 * never allocates while scanning, never reads past the length given, and
 * never recurses deeper than the paths' bound.
 *
 * Speed: most bytes of a log record are inside strings (its message), so
 * strings are scanned sixteen bytes at a time (SSE2; eight without it)
 * while none of them is a quote, a backslash, a control character or a
 * non-ASCII byte; members nobody asked for are checked and skipped
 * without a name lookup, in a loop that keeps its place in a register.
 * What is left is a branch or two a token that no predictor guesses
 * (where a string ends, what type a value is): ~1 ns a byte. */
#include "json-scan.h"

#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define NONE G_MAXUINT

/* The longest member name compared once its escapes are decoded: a name
 * of escapes decodes to at least a sixth of its length, and paths are
 * shorter than a sixth of this (kt_json_paths_add()). */
#define NAME_BUF 4096
#define PATH_MAX_BYTES (NAME_BUF / 6)

const char KT_JSON_EACH[] = "[]";

typedef struct
{
  char             *name;   /* decoded; NULL: each element of an array */
  guint             len;
  guint             child;  /* the first named child, or NONE */
  guint             next;   /* the next named sibling, or NONE */
  guint             each;   /* the child stepping into each element, or NONE */
  guint             slot;   /* a path ends here: its slot; or NONE */
  guint             depth;  /* names from the root */
  GArray           *below;  /* an each node: the slots under it (guint) */
  /* The first bytes of the named children's names: a member name that
   * starts with none of them leads nowhere (with dots or not), which is
   * most members of a record. all: a child named "" (no first byte). */
  guint64           first[4];
  gboolean          all;
  /* The lengths of those names: bit n for a name of n bytes (63 for any
   * of 63 or more), so that a member name of another length, with no dot
   * where one of them ends, is passed over without comparing. */
  guint64           lens;
  GArray           *kids;   /* the named children, side by side, shortest first: Kid */
  guint64           hashes;    /* bit name_hash() of each named child */
  guint             from[65];  /* kids of length n (63: of 63 or more) are
                                * [from[n], from[n + 1]) */
  KtJsonElementFunc func;   /* an each node: told at each element's end */
  gpointer          data;
} Node;

/* A named child, as the scan compares it: its length, its first eight
 * bytes (zero-padded) and its node. */
typedef struct
{
  guint   len;
  guint   node;
  guint64 prefix;
  guint64 prefix2;  /* bytes 8 to 15, zero-padded: most names end there */
} Kid;

/* Which of 64 bits stands for a name of @len bytes at @p: a member name
 * whose bit no child has is none of them, without a comparison. */
static inline guint
name_hash (const char *p, gsize len)
{
  return len == 0 ? 0 : (guint) ((len * 7 + (guchar) p[0] * 3 + (guchar) p[len - 1]) & 63);
}

/* The first min(@len, 8) bytes at @p, zero-padded, byte i at bits 8i
 * (built in registers: a copy through memory of a varying length would
 * stall the load after it). */
static inline guint64
prefix8 (const char *p, gsize len)
{
  guint64 v = 0;

  if (len >= 8)
    {
      memcpy (&v, p, 8);
      return GUINT64_FROM_LE (v);
    }
  for (gsize i = 0; i < len; i++)
    v |= (guint64) (guchar) p[i] << (8 * i);
  return v;
}

/* The first @n bytes of a prefix8() value. */
static inline guint64
prefix_mask (guint64 v, gsize n)
{
  return n >= 8 ? v : v & ((G_GUINT64_CONSTANT (1) << (8 * n)) - 1);
}

struct _KtJsonPaths
{
  GArray *nodes;  /* Node; [0] is the root */
  guint   slots;
  guint   max_depth;
  guint   flags;
};

const char *
kt_json_bad_name (KtJsonBad why)
{
  static const char *const names[] = { "ok", "json", "utf8", "nul", "surrogate", "depth",
                                       "duplicate" };

  return (guint) why < G_N_ELEMENTS (names) ? names[why] : "?";
}

static Node *
node_at (const KtJsonPaths *self, guint i)
{
  return &g_array_index (self->nodes, Node, i);
}

KtJsonPaths *
kt_json_paths_new (guint max_depth, guint flags)
{
  KtJsonPaths *self = g_new0 (KtJsonPaths, 1);
  Node root = { .child = NONE, .next = NONE, .each = NONE, .slot = NONE };

  g_return_val_if_fail (max_depth >= 1, NULL);
  self->nodes = g_array_new (FALSE, FALSE, sizeof (Node));
  g_array_append_val (self->nodes, root);
  self->max_depth = max_depth;
  self->flags = flags;
  return self;
}

void
kt_json_paths_free (KtJsonPaths *self)
{
  if (self == NULL)
    return;
  for (guint i = 0; i < self->nodes->len; i++)
    {
      g_free (node_at (self, i)->name);
      if (node_at (self, i)->kids != NULL)
        g_array_unref (node_at (self, i)->kids);
      if (node_at (self, i)->below != NULL)
        g_array_unref (node_at (self, i)->below);
    }
  g_array_unref (self->nodes);
  g_free (self);
}

/* The child of node @at for @name (KT_JSON_EACH or a member name), made if
 * absent. */
static guint
child_of (KtJsonPaths *self, guint at, const char *name)
{
  gboolean each = name == KT_JSON_EACH;
  Node fresh = { .child = NONE, .next = NONE, .each = NONE, .slot = NONE,
                 .depth = node_at (self, at)->depth + 1 };
  guint i;

  if (each && node_at (self, at)->each != NONE)
    return node_at (self, at)->each;
  for (i = node_at (self, at)->child; !each && i != NONE; i = node_at (self, i)->next)
    if (g_str_equal (node_at (self, i)->name, name))
      return i;
  i = self->nodes->len;
  if (each)
    fresh.below = g_array_new (FALSE, FALSE, sizeof (guint));
  else
    {
      gsize len = strlen (name);
      Kid kid = { (guint) len, i, prefix8 (name, len),
                  len > 8 ? prefix8 (name + 8, MIN (len - 8, 8)) : 0 };
      Node *parent = node_at (self, at);
      guint k = 0;

      if (parent->kids == NULL)
        parent->kids = g_array_new (FALSE, FALSE, sizeof (Kid));
      while (k < parent->kids->len && g_array_index (parent->kids, Kid, k).len <= kid.len)
        k++;
      g_array_insert_val (parent->kids, k, kid);
      for (guint n = 0, j = 0; n <= 64; n++)
        {
          while (j < parent->kids->len && MIN (g_array_index (parent->kids, Kid, j).len, 63) < n)
            j++;
          parent->from[n] = j;
        }
      fresh.name = g_strdup (name);
      fresh.len = (guint) strlen (name);
      fresh.next = node_at (self, at)->child;
      node_at (self, at)->lens |= G_GUINT64_CONSTANT (1) << MIN (fresh.len, 63);
      node_at (self, at)->hashes |= G_GUINT64_CONSTANT (1) << name_hash (name, fresh.len);
      if (fresh.len == 0)
        node_at (self, at)->all = TRUE;
      else
        node_at (self, at)->first[(guchar) name[0] >> 6] |= G_GUINT64_CONSTANT (1)
                                                            << ((guchar) name[0] & 63);
    }
  g_array_append_val (self->nodes, fresh);
  if (each)
    node_at (self, at)->each = i;
  else
    node_at (self, at)->child = i;
  return i;
}

/* The node of the path of @n names, made as needed; *@parents: the nodes
 * on the way (n + 1 of them, the root first). */
static guint
path_node (KtJsonPaths *self, const char *const *names, guint n, guint *parents)
{
  guint at = 0;
  gsize total = 0;

  parents[0] = 0;
  for (guint i = 0; i < n; i++)
    {
      g_return_val_if_fail (names[i] == KT_JSON_EACH || strlen (names[i]) <= 255, NONE);
      total += names[i] == KT_JSON_EACH ? 0 : strlen (names[i]) + 1;
      at = child_of (self, at, names[i]);
      parents[i + 1] = at;
    }
  g_return_val_if_fail (total <= PATH_MAX_BYTES, NONE);
  return at;
}

guint
kt_json_paths_add (KtJsonPaths *self, const char *const *names, guint n)
{
  g_autofree guint *parents = g_new (guint, n + 1);
  guint at = path_node (self, names, n, parents);
  guint slot;

  g_return_val_if_fail (at != NONE, 0);
  if (node_at (self, at)->slot != NONE)
    return node_at (self, at)->slot;
  slot = node_at (self, at)->slot = self->slots++;
  /* Every element above it reads it anew. */
  for (guint i = 1; i <= n; i++)
    if (node_at (self, parents[i])->below != NULL)
      g_array_append_val (node_at (self, parents[i])->below, slot);
  return slot;
}

void
kt_json_paths_on_element (KtJsonPaths *self, const char *const *names, guint n,
                          KtJsonElementFunc func, gpointer user_data)
{
  g_autofree guint *parents = g_new (guint, n + 1);
  guint at;

  g_return_if_fail (n > 0 && names[n - 1] == KT_JSON_EACH);
  at = path_node (self, names, n, parents);
  g_return_if_fail (at != NONE);
  node_at (self, at)->func = func;
  node_at (self, at)->data = user_data;
}

guint
kt_json_paths_slots (const KtJsonPaths *self)
{
  return self->slots;
}

/* ---- The scan ------------------------------------------------------------ */

typedef struct
{
  const guchar      *p, *end, *start;
  const KtJsonPaths *paths;
  const Node        *nodes;
  KtJsonValue       *values;
  guint              depth;
  KtJsonBad          why;
  const guchar      *bad_at;
  char               name[NAME_BUF];
} Scan;

static gboolean
fail (Scan *s, KtJsonBad why)
{
  s->why = why;
  s->bad_at = s->p;
  return FALSE;
}

static inline void
skip_space (Scan *s)
{
  /* Compact JSON has none: one comparison decides. */
  if (G_LIKELY (s->p < s->end && *s->p > ' '))
    return;
  while (s->p < s->end && (*s->p == ' ' || *s->p == '\n' || *s->p == '\r' || *s->p == '\t'))
    s->p++;
}

#define ONES  G_GUINT64_CONSTANT (0x0101010101010101)
#define HIGHS G_GUINT64_CONSTANT (0x8080808080808080)

/* The bytes of @v (byte i at bits 8i) that end a run of plain string
 * bytes: a quote, a backslash, below 0x20 or above 0x7F. Only the lowest
 * set bit is exact (borrows may flag bytes above it), and it is all that
 * is asked: where the first such byte is. */
static inline guint64
special8 (guint64 v)
{
  guint64 quote = v ^ (ONES * '"'), slash = v ^ (ONES * '\\');

  return (v & HIGHS) | ((v - ONES * 0x20) & ~v & HIGHS) | ((quote - ONES) & ~quote & HIGHS)
         | ((slash - ONES) & ~slash & HIGHS);
}

static inline gboolean
plain_byte (guchar c)
{
  return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

/* The first byte from @p on that is not a plain string byte, or @end;
 * with @dot, whether a '.' comes before it into *@dot (left alone
 * otherwise). Sixteen bytes at a time where SSE2 is (every x86-64), else
 * eight, then one at a time: a string's end costs one hard-to-guess branch
 * a word, and most keys and values of a record fit in one of sixteen. */
static inline __attribute__ ((always_inline)) const guchar *
plain_run (const guchar *p, const guchar *end, gboolean *dot)
{
#ifdef __SSE2__
  const __m128i quote = _mm_set1_epi8 ('"'), slash = _mm_set1_epi8 ('\\'),
                space = _mm_set1_epi8 (0x20), dots = _mm_set1_epi8 ('.');

  while (end - p >= 16)
    {
      __m128i v = _mm_loadu_si128 ((const __m128i *) (gconstpointer) p);
      /* Signed: below 0x20 and above 0x7F alike. */
      guint m = (guint) _mm_movemask_epi8 (_mm_or_si128 (_mm_or_si128 (_mm_cmpeq_epi8 (v, quote),
                                                                        _mm_cmpeq_epi8 (v, slash)),
                                                          _mm_cmplt_epi8 (v, space)));

      if (dot != NULL)
        {
          guint d = (guint) _mm_movemask_epi8 (_mm_cmpeq_epi8 (v, dots));

          if (d & (m != 0 ? (m & -m) - 1 : 0xffffu))
            *dot = TRUE;
        }
      if (m != 0)
        return p + __builtin_ctz (m);
      p += 16;
    }
#endif
  while (end - p >= 8)
    {
      guint64 v, m, d = 0;

      memcpy (&v, p, 8);
      v = GUINT64_FROM_LE (v);
      m = special8 (v);
      if (dot != NULL)
        {
          guint64 x = v ^ (ONES * '.');

          d = (x - ONES) & ~x & HIGHS;
        }
      if (m != 0)
        {
          /* A dot before the first special byte: both lowest bits are
           * exact. */
          if (dot != NULL && d != 0 && (d & -d) < (m & -m))
            *dot = TRUE;
          return p + (__builtin_ctzll (m) >> 3);
        }
      if (dot != NULL && d != 0)
        *dot = TRUE;
      p += 8;
    }
  while (p < end && plain_byte (*p))
    {
      if (dot != NULL && *p == '.')
        *dot = TRUE;
      p++;
    }
  return p;
}

static gboolean
hex4 (Scan *s, guint *out)
{
  guint v = 0;

  if (s->end - s->p < 4)
    return fail (s, KT_JSON_BAD_SYNTAX);
  for (int i = 0; i < 4; i++, s->p++)
    {
      if (!g_ascii_isxdigit (*s->p))
        return fail (s, KT_JSON_BAD_SYNTAX);
      v = v * 16 + (guint) g_ascii_xdigit_value (*s->p);
    }
  *out = v;
  return TRUE;
}

/* The escape after a backslash, s->p at the byte after it. Decoded, a
 * string must be valid UTF-8 without NUL, as it is where written raw. */
static gboolean
escape (Scan *s)
{
  guint v, low;

  if (s->p == s->end)
    return fail (s, KT_JSON_BAD_SYNTAX);
  switch (*s->p++)
    {
    case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
      return TRUE;
    case 'u':
      if (!hex4 (s, &v))
        return FALSE;
      if (v == 0)
        return fail (s, KT_JSON_BAD_NUL);
      /* A surrogate names a character only as a pair, high then at once an
       * escaped low one: RFC 8259's grammar lets a lone one pass, but it
       * decodes to no character (invalid UTF-8 in a key, a column). */
      if (v >= 0xdc00 && v <= 0xdfff)
        return fail (s, KT_JSON_BAD_SURROGATE);
      if (v < 0xd800 || v > 0xdbff)
        return TRUE;
      if (s->end - s->p < 2 || s->p[0] != '\\' || s->p[1] != 'u')
        return fail (s, KT_JSON_BAD_SURROGATE);
      s->p += 2;
      if (!hex4 (s, &low))
        return FALSE;
      if (low < 0xdc00 || low > 0xdfff)
        return fail (s, KT_JSON_BAD_SURROGATE);
      return TRUE;
    default:
      s->p--;
      return fail (s, KT_JSON_BAD_SYNTAX);
    }
}

/* One UTF-8 character of two to four bytes at s->p (its first byte is
 * above 0x7F): Unicode's table of well-formed sequences, so no overlong
 * form, no surrogate, nothing above U+10FFFF. */
static gboolean
utf8_char (Scan *s)
{
  const guchar *p = s->p;
  gsize left = (gsize) (s->end - p);
  guchar c = p[0], lo = 0x80, hi = 0xbf;
  guint n;

  if (c >= 0xc2 && c <= 0xdf)
    n = 2;
  else if (c >= 0xe0 && c <= 0xef)
    {
      n = 3;
      if (c == 0xe0)
        lo = 0xa0;
      else if (c == 0xed)
        hi = 0x9f;
    }
  else if (c >= 0xf0 && c <= 0xf4)
    {
      n = 4;
      if (c == 0xf0)
        lo = 0x90;
      else if (c == 0xf4)
        hi = 0x8f;
    }
  else
    return fail (s, KT_JSON_BAD_UTF8);
  if (left < n || p[1] < lo || p[1] > hi)
    return fail (s, KT_JSON_BAD_UTF8);
  for (guint i = 2; i < n; i++)
    if ((p[i] & 0xc0) != 0x80)
      return fail (s, KT_JSON_BAD_UTF8);
  s->p += n;
  return TRUE;
}

/* At a '"': the string, into @out; with @dot (a member name the paths may
 * match), whether it holds a '.' into *@dot, from the same words.
 * Inlined: callers that only skip drop the stores and the dots. */
static inline __attribute__ ((always_inline)) gboolean
scan_string_dot (Scan *s, KtJsonValue *out, gboolean *dot)
{
  const guchar *text = ++s->p, *p = text, *end = s->end;
  gboolean escaped = FALSE;

  for (;;)
    {
      p = plain_run (p, end, dot);
      if (p == end)
        {
          s->p = p;
          return fail (s, KT_JSON_BAD_SYNTAX);  /* unterminated */
        }
      s->p = p;
      switch (*p)
        {
        case '"':
          *out = (KtJsonValue) { KT_JSON_STRING, escaped, (const char *) text,
                                 (gsize) (p - text) };
          s->p = p + 1;
          return TRUE;
        case '\\':
          escaped = TRUE;
          s->p++;
          if (!escape (s))
            return FALSE;
          break;
        default:
          if (*p >= 0x80)
            {
              if (!utf8_char (s))
                return FALSE;
            }
          else
            return fail (s, *p == 0 ? KT_JSON_BAD_NUL : KT_JSON_BAD_SYNTAX);
          break;
        }
      p = s->p;
    }
}

static inline __attribute__ ((always_inline)) gboolean
scan_string (Scan *s, KtJsonValue *out)
{
  return scan_string_dot (s, out, NULL);
}

static gboolean
digits (Scan *s)
{
  const guchar *start = s->p;

  while (s->p < s->end && g_ascii_isdigit (*s->p))
    s->p++;
  return s->p > start || fail (s, KT_JSON_BAD_SYNTAX);
}

/* -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static gboolean
scan_number (Scan *s, KtJsonValue *out)
{
  const guchar *start = s->p;

  if (*s->p == '-')
    s->p++;
  if (s->p < s->end && *s->p == '0')
    s->p++;
  else if (!digits (s))
    return FALSE;
  if (s->p < s->end && *s->p == '.')
    {
      s->p++;
      if (!digits (s))
        return FALSE;
    }
  if (s->p < s->end && (*s->p == 'e' || *s->p == 'E'))
    {
      s->p++;
      if (s->p < s->end && (*s->p == '+' || *s->p == '-'))
        s->p++;
      if (!digits (s))
        return FALSE;
    }
  *out = (KtJsonValue) { KT_JSON_NUMBER, FALSE, (const char *) start, (gsize) (s->p - start) };
  return TRUE;
}

static gboolean
scan_literal (Scan *s, const char *word, gsize n, KtJsonType type, KtJsonValue *out)
{
  if ((gsize) (s->end - s->p) < n || memcmp (s->p, word, n) != 0)
    return fail (s, KT_JSON_BAD_SYNTAX);
  *out = (KtJsonValue) { type, FALSE, (const char *) s->p, n };
  s->p += n;
  return TRUE;
}

/* ---- Values no path reads: checked, then passed over --------------------- */

/* The skipper keeps its place in a local pointer (a register) rather than
 * in s->p, and walks nested containers in a loop: most of a record's
 * members are read by no path, so this is where most bytes go. Its
 * verdicts and their offsets are exactly those of the readers above: the
 * rare cases (an escape other than the two-byte ones, a non-ASCII byte)
 * are handed to escape() and utf8_char(). */

static const guchar *
fail_at (Scan *s, const guchar *p, KtJsonBad why)
{
  s->p = p;
  fail (s, why);
  return NULL;
}

static inline const guchar *
skip_space_p (const guchar *p, const guchar *end)
{
  while (p < end && *p <= ' ' && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
    p++;
  return p;
}

/* At a '"': past the string, or NULL. */
static inline __attribute__ ((always_inline)) const guchar *
skip_string_p (Scan *s, const guchar *p)
{
  const guchar *end = s->end;

  p++;
  for (;;)
    {
      p = plain_run (p, end, NULL);
      if (p == end)
        return fail_at (s, p, KT_JSON_BAD_SYNTAX);  /* unterminated */
      if (*p == '"')
        return p + 1;
      if (*p == '\\')
        {
          /* The two-byte escapes here; \u and the bad ones by escape(). */
          if (end - p >= 2 && p[1] != 'u'
              && (p[1] == '"' || p[1] == '\\' || p[1] == '/' || p[1] == 'b' || p[1] == 'f'
                  || p[1] == 'n' || p[1] == 'r' || p[1] == 't'))
            {
              p += 2;
              continue;
            }
          s->p = p + 1;
          if (!escape (s))
            return NULL;
        }
      else if (*p >= 0x80)
        {
          s->p = p;
          if (!utf8_char (s))
            return NULL;
        }
      else
        return fail_at (s, p, *p == 0 ? KT_JSON_BAD_NUL : KT_JSON_BAD_SYNTAX);
      p = s->p;
    }
}

static inline gboolean
is_digit (guchar c)
{
  return (guchar) (c - '0') <= 9;  /* no table, no call */
}

/* At a '-' or a digit: past the number, or NULL (scan_number()'s
 * grammar). */
static inline const guchar *
skip_number_p (Scan *s, const guchar *p)
{
  const guchar *end = s->end, *from;

  if (*p == '-')
    p++;
  if (p < end && *p == '0')
    p++;
  else
    {
      for (from = p; p < end && is_digit (*p); p++)
        ;
      if (p == from)
        return fail_at (s, p, KT_JSON_BAD_SYNTAX);
    }
  if (p < end && *p == '.')
    {
      for (from = ++p; p < end && is_digit (*p); p++)
        ;
      if (p == from)
        return fail_at (s, p, KT_JSON_BAD_SYNTAX);
    }
  if (p < end && (*p == 'e' || *p == 'E'))
    {
      p++;
      if (p < end && (*p == '+' || *p == '-'))
        p++;
      for (from = p; p < end && is_digit (*p); p++)
        ;
      if (p == from)
        return fail_at (s, p, KT_JSON_BAD_SYNTAX);
    }
  return p;
}

static inline const guchar *
skip_literal_p (Scan *s, const guchar *p, const char *word, gsize n)
{
  if ((gsize) (s->end - p) < n || memcmp (p, word, n) != 0)
    return fail_at (s, p, KT_JSON_BAD_SYNTAX);
  return p + n;
}

/* Nesting a call walks in its loop (a bit each: object or array); deeper
 * containers are a call of their own, so any depth bound works. */
#define SKIP_LEVELS 64

/* At a '{' or '[' no path reads: past it, or NULL. The depth is checked on
 * the way in, so the recursion is bounded by the paths' max_depth (over
 * SKIP_LEVELS) whatever the text. */
static const guchar *
skip_container_p (Scan *s, const guchar *p)
{
  const guchar *end = s->end;
  guint64 objects = 0;  /* bit 0: the innermost open container is an object */
  guint level = 0;      /* containers this call has open */

open:
  if (++s->depth > s->paths->max_depth)
    return fail_at (s, p, KT_JSON_BAD_DEPTH);
  objects = (objects << 1) | (*p == '{');
  level++;
  p = skip_space_p (p + 1, end);
  if (p < end && *p == ((objects & 1) ? '}' : ']'))
    {
      p++;
      goto close;
    }
element:
  if (objects & 1)
    {
      if (p == end || *p != '"')
        return fail_at (s, p, KT_JSON_BAD_SYNTAX);
      if ((p = skip_string_p (s, p)) == NULL)
        return NULL;
      p = skip_space_p (p, end);
      if (p == end || *p != ':')
        return fail_at (s, p, KT_JSON_BAD_SYNTAX);
      p = skip_space_p (p + 1, end);
    }
  if (p == end)
    return fail_at (s, p, KT_JSON_BAD_SYNTAX);
  switch (*p)
    {
    case '"':
      p = skip_string_p (s, p);
      break;
    case '{':
    case '[':
      if (level < SKIP_LEVELS)
        goto open;
      p = skip_container_p (s, p);
      break;
    case 't':
      p = skip_literal_p (s, p, "true", 4);
      break;
    case 'f':
      p = skip_literal_p (s, p, "false", 5);
      break;
    case 'n':
      p = skip_literal_p (s, p, "null", 4);
      break;
    default:
      if (*p != '-' && !g_ascii_isdigit (*p))
        return fail_at (s, p, KT_JSON_BAD_SYNTAX);
      p = skip_number_p (s, p);
      break;
    }
  if (p == NULL)
    return NULL;
next:
  p = skip_space_p (p, end);
  if (p == end)
    return fail_at (s, p, KT_JSON_BAD_SYNTAX);
  if (*p == ',')
    {
      p = skip_space_p (p + 1, end);
      goto element;
    }
  if (*p != ((objects & 1) ? '}' : ']'))
    return fail_at (s, p, KT_JSON_BAD_SYNTAX);
  p++;
close:
  s->depth--;
  objects >>= 1;
  if (--level > 0)
    goto next;
  return p;
}

/* The value at s->p (white space before it skipped), checked and passed
 * over. */
static gboolean
skip_value (Scan *s)
{
  const guchar *p = s->p;

  if (p == s->end)
    return fail (s, KT_JSON_BAD_SYNTAX);
  switch (*p)
    {
    case '"':
      p = skip_string_p (s, p);
      break;
    case '{':
    case '[':
      p = skip_container_p (s, p);
      break;
    case 't':
      p = skip_literal_p (s, p, "true", 4);
      break;
    case 'f':
      p = skip_literal_p (s, p, "false", 5);
      break;
    case 'n':
      p = skip_literal_p (s, p, "null", 4);
      break;
    default:
      if (*p != '-' && !g_ascii_isdigit (*p))
        return fail (s, KT_JSON_BAD_SYNTAX);
      p = skip_number_p (s, p);
      break;
    }
  if (p == NULL)
    return FALSE;
  s->p = p;
  return TRUE;
}

/* The nodes a value is read as: usually one or none; more only where
 * KT_JSON_DOTTED lets one member name lead to several paths (a path
 * "log.level" with its dot escaped beside the path log, level). Routes
 * past the first SET_MAX are not followed: that many paths to one member
 * is no job's. */
#define SET_MAX 8

typedef struct
{
  guint n;
  guint node[SET_MAX];
} Set;

static void
set_add (Set *set, guint node)
{
  for (guint i = 0; i < set->n; i++)
    if (set->node[i] == node)
      return;
  if (set->n < SET_MAX)
    set->node[set->n++] = node;
}

/* Adds to @out the children of @node that member name @name (decoded,
 * @len bytes) leads to; under KT_JSON_DOTTED a name with dots may lead
 * through several names at once. */
static void match_name (const Scan *s, guint node, const char *name, gsize len, gboolean dot,
                        Set *out);

/* Adds the children of @n named exactly @len bytes of @name (@prefix its
 * prefix8()): the whole name, or the part before a dot. */
static inline void
match_length (const Scan *s, const Node *n, const char *name, gsize len, guint64 prefix,
              gsize kl, Set *out)
{
  const Kid *kids = (const Kid *) (gconstpointer) n->kids->data;
  guint64 want = prefix_mask (prefix, kl);
  guint bucket = (guint) MIN (kl, 63);

  for (guint k = n->from[bucket]; k < n->from[bucket + 1]; k++)
    if (kids[k].len == kl && kids[k].prefix == want
        && (kl <= 8 || (kids[k].prefix2 == prefix8 (name + 8, MIN (kl - 8, 8))
                        && (kl <= 16
                            || memcmp (s->nodes[kids[k].node].name + 16, name + 16, kl - 16) == 0))))
      {
        if (kl == len)
          set_add (out, kids[k].node);
        else
          match_name (s, kids[k].node, name + kl + 1, len - kl - 1, TRUE, out);
      }
}

/* Adds to @out the children of @node that member name @name (decoded,
 * @len bytes) leads to; under KT_JSON_DOTTED a name with dots may lead
 * through several names at once. */
static void
match_name (const Scan *s, guint node, const char *name, gsize len, gboolean dot, Set *out)
{
  const Node *n = &s->nodes[node];
  guchar first = len > 0 ? (guchar) name[0] : 0;
  guint64 prefix, shorter;

  if (!n->all && (len == 0 || !(n->first[first >> 6] & (G_GUINT64_CONSTANT (1) << (first & 63)))))
    return;
  prefix = prefix8 (name, len);
  if ((n->hashes & (G_GUINT64_CONSTANT (1) << name_hash (name, len)))
      && (n->lens & (G_GUINT64_CONSTANT (1) << MIN (len, 63))))
    match_length (s, n, name, len, prefix, len, out);
  if (!dot || !(s->paths->flags & KT_JSON_DOTTED))
    return;
  /* The names shorter than this one that end where it has a dot. */
  shorter = n->lens & ((G_GUINT64_CONSTANT (1) << MIN (len, 63)) - 1);
  while (shorter != 0)
    {
      gsize kl = (gsize) __builtin_ctzll (shorter);

      shorter &= shorter - 1;
      if (name[kl] == '.')
        match_length (s, n, name, len, prefix, kl, out);
    }
  /* Names of 63 bytes or more share one bit: each looked at. */
  if (len > 63 && (n->lens >> 63))
    for (gsize kl = 63; kl < len; kl++)
      if (name[kl] == '.')
        match_length (s, n, name, len, prefix, kl, out);
}

/* The children of @set for member name @name as the scan found it. */
static void
match_member (Scan *s, const Set *set, const KtJsonValue *name, gboolean dot, Set *out)
{
  const char *text = name->text;
  gsize len = name->len;

  out->n = 0;
  if (name->escaped)
    {
      /* Longer than any path could be once decoded? Then it is none. A
       * dot may be escaped: looked for after decoding. */
      if (name->len > sizeof s->name)
        return;
      len = kt_json_unescape (name, s->name);
      text = s->name;
      dot = memchr (text, '.', len) != NULL;
    }
  for (guint i = 0; i < set->n; i++)
    match_name (s, set->node[i], text, len, dot, out);
}

static gboolean scan_value (Scan *s, const Set *set, KtJsonValue *out);

/* Puts @value in the slot of each node of @set that has one. */
static inline gboolean
record (Scan *s, const Set *set, const KtJsonValue *value)
{
  for (guint i = 0; i < set->n; i++)
    {
      guint slot = s->nodes[set->node[i]].slot;

      if (slot == NONE)
        continue;
      if ((s->paths->flags & KT_JSON_UNIQUE) && s->values[slot].type != KT_JSON_ABSENT)
        return fail (s, KT_JSON_BAD_DUPLICATE);
      /* Member by member: the value was just stored that way, and one
       * wide load of it would wait for the stores to retire. */
      s->values[slot].type = value->type;
      s->values[slot].escaped = value->escaped;
      s->values[slot].text = value->text;
      s->values[slot].len = value->len;
    }
  return TRUE;
}

/* The nodes of @set with named children (@object) or an each child,
 * those children for the latter, into @out. */
static void
container_set (const Scan *s, const Set *set, gboolean object, Set *out)
{
  out->n = 0;
  for (guint i = 0; i < set->n; i++)
    {
      const Node *n = &s->nodes[set->node[i]];

      if (object && n->child != NONE)
        out->node[out->n++] = set->node[i];
      else if (!object && n->each != NONE)
        out->node[out->n++] = n->each;
    }
}

/* At a '{' or '[' that paths read below (@set: the nodes whose children
 * its members or elements are, container_set()). The depth is checked on
 * the way in, as skip_container() does. */
static gboolean
scan_container (Scan *s, const Set *set, KtJsonValue *out)
{
  const guchar *start = s->p;
  gboolean object = *s->p == '{';
  guchar close = object ? '}' : ']';
  /* The caller's set, by pointer: a copy would be stored in pieces and
   * loaded whole, a stall on every container. */
  const Set *here = set;
  Set next;
  KtJsonValue ignored;

  if (++s->depth > s->paths->max_depth)
    return fail (s, KT_JSON_BAD_DEPTH);
  s->p++;
  skip_space (s);
  if (s->p < s->end && *s->p == close)
    s->p++;
  else
    for (;;)
      {
        if (object)
          {
            KtJsonValue name;
            gboolean dot = FALSE;

            if (s->p == s->end || *s->p != '"')
              return fail (s, KT_JSON_BAD_SYNTAX);
            if (!scan_string_dot (s, &name, &dot))
              return FALSE;
            next.n = 0;
            /* Most members lead nowhere: their first byte says so here,
             * before any call (a name with escapes is decoded first). */
            if (here->n == 1 && !name.escaped)
              {
                const Node *n = &s->nodes[here->node[0]];
                guchar first = name.len > 0 ? (guchar) name.text[0] : 0;

                if (n->all || (name.len > 0
                               && (n->first[first >> 6] & (G_GUINT64_CONSTANT (1) << (first & 63)))))
                  match_member (s, here, &name, dot, &next);
              }
            else if (here->n > 0)
              match_member (s, here, &name, dot, &next);
            skip_space (s);
            if (s->p == s->end || *s->p != ':')
              return fail (s, KT_JSON_BAD_SYNTAX);
            s->p++;
            skip_space (s);
            if (here->n > 0 && next.n > 0)
              {
                if (!scan_value (s, &next, &ignored))
                  return FALSE;
              }
            else if (s->p < s->end && *s->p == '"')
              {
                /* Most members no path reads are strings: passed over here. */
                const guchar *p = skip_string_p (s, s->p);

                if (p == NULL)
                  return FALSE;
                s->p = p;
              }
            else if (!skip_value (s))
              return FALSE;
          }
        else if (here->n > 0)
          {
            KtJsonValue element;

            for (guint e = 0; e < here->n; e++)
              {
                const Node *each = &s->nodes[here->node[e]];

                for (guint i = 0; i < each->below->len; i++)
                  s->values[g_array_index (each->below, guint, i)].type = KT_JSON_ABSENT;
              }
            if (!scan_value (s, here, &element))
              return FALSE;
            for (guint e = 0; e < here->n; e++)
              {
                const Node *each = &s->nodes[here->node[e]];

                if (each->func != NULL)
                  each->func (s->values, &element, each->data);
              }
          }
        else if (!skip_value (s))
          return FALSE;
        skip_space (s);
        if (s->p == s->end)
          return fail (s, KT_JSON_BAD_SYNTAX);
        if (*s->p == ',')
          {
            s->p++;
            skip_space (s);
            continue;
          }
        if (*s->p != close)
          return fail (s, KT_JSON_BAD_SYNTAX);
        s->p++;
        break;
      }
  s->depth--;
  *out = (KtJsonValue) { object ? KT_JSON_OBJECT : KT_JSON_ARRAY, FALSE, (const char *) start,
                         (gsize) (s->p - start) };
  return TRUE;
}

/* The value at s->p (white space before it already skipped), read as the
 * paths of @set (empty: no path reads it) into @out. */
static gboolean
scan_value (Scan *s, const Set *set, KtJsonValue *out)
{
  gboolean ok;

  if (s->p == s->end)
    return fail (s, KT_JSON_BAD_SYNTAX);
  switch (*s->p)
    {
    case '"':
      ok = scan_string (s, out);
      break;
    case '{':
    case '[':
      {
        Set below;

        container_set (s, set, *s->p == '{', &below);
        if (below.n > 0)
          ok = scan_container (s, &below, out);
        else
          {
            const guchar *start = s->p;

            ok = skip_value (s);
            *out = (KtJsonValue) { *start == '{' ? KT_JSON_OBJECT : KT_JSON_ARRAY, FALSE,
                                   (const char *) start, (gsize) (s->p - start) };
          }
      }
      break;
    case 't':
      ok = scan_literal (s, "true", 4, KT_JSON_TRUE, out);
      break;
    case 'f':
      ok = scan_literal (s, "false", 5, KT_JSON_FALSE, out);
      break;
    case 'n':
      ok = scan_literal (s, "null", 4, KT_JSON_NULL, out);
      break;
    default:
      if (*s->p != '-' && !g_ascii_isdigit (*s->p))
        return fail (s, KT_JSON_BAD_SYNTAX);
      ok = scan_number (s, out);
      break;
    }
  return ok && (set->n == 0 || record (s, set, out));
}

gboolean
kt_json_scan (const KtJsonPaths *paths, const char *text, gsize len, KtJsonValue *values,
              KtJsonType *root, KtJsonBad *why, gsize *at)
{
  Scan scan, *s = &scan;
  const Set root_set = { 1, { 0 } };
  KtJsonValue value = { 0 };
  gboolean ok;

  g_return_val_if_fail (text != NULL || len == 0, FALSE);
  s->p = s->start = (const guchar *) (text != NULL ? text : "");
  s->end = s->p + len;
  s->paths = paths;
  s->nodes = (const Node *) (gconstpointer) paths->nodes->data;
  s->values = values;
  s->depth = 0;
  s->why = KT_JSON_OK;
  s->bad_at = NULL;
  /* A loop, not memset: a dozen slots, and no call. */
  for (guint i = 0; i < paths->slots; i++)
    values[i] = (KtJsonValue) { 0 };

  skip_space (s);
  ok = scan_value (s, &root_set, &value);
  if (ok)
    {
      skip_space (s);
      if (s->p != s->end)
        ok = fail (s, KT_JSON_BAD_SYNTAX);
    }
  if (root != NULL)
    *root = ok ? value.type : KT_JSON_ABSENT;
  if (why != NULL)
    *why = ok ? KT_JSON_OK : s->why;
  if (at != NULL)
    *at = ok ? 0 : (gsize) (s->bad_at - s->start);
  return ok;
}

gboolean
kt_json_string_scan (const char *text, gsize len, KtJsonValue *value, gsize *used,
                     KtJsonBad *why)
{
  Scan s;

  s.p = s.start = (const guchar *) text;
  s.end = s.p + len;
  s.why = KT_JSON_OK;
  if (len == 0 || text[0] != '"')
    {
      *why = KT_JSON_BAD_SYNTAX;
      return FALSE;
    }
  if (!scan_string (&s, value))
    {
      *why = s.why;
      return FALSE;
    }
  *used = (gsize) (s.p - s.start);
  return TRUE;
}

/* ---- Strings ------------------------------------------------------------- */

static guint
hex_at (const char *p)
{
  guint v = 0;

  for (int i = 0; i < 4; i++)
    v = v * 16 + (guint) g_ascii_xdigit_value (p[i]);
  return v;
}

gsize
kt_json_unescape (const KtJsonValue *value, char *out)
{
  const char *p = value->text, *end = value->text + value->len;
  char *o = out;

  if (!value->escaped)
    {
      memcpy (out, value->text, value->len);
      return value->len;
    }
  while (p < end)
    {
      const char *slash = memchr (p, '\\', (size_t) (end - p));
      gsize plain = (gsize) ((slash != NULL ? slash : end) - p);
      gunichar c;

      memcpy (o, p, plain);
      o += plain;
      p += plain;
      if (p == end)
        break;
      p++;
      switch (*p++)
        {
        case 'b': *o++ = '\b'; continue;
        case 'f': *o++ = '\f'; continue;
        case 'n': *o++ = '\n'; continue;
        case 'r': *o++ = '\r'; continue;
        case 't': *o++ = '\t'; continue;
        case 'u': break;
        default: *o++ = p[-1]; continue;  /* " \ / */
        }
      c = hex_at (p);
      p += 4;
      if (c >= 0xd800 && c <= 0xdbff)
        {
          c = 0x10000 + ((c - 0xd800) << 10) + (hex_at (p + 2) - 0xdc00);
          p += 6;
        }
      o += g_unichar_to_utf8 (c, o);
    }
  return (gsize) (o - out);
}

gboolean
kt_json_string_equal (const KtJsonValue *value, const char *s, gsize len)
{
  char buf[256];
  g_autofree char *big = NULL;
  char *out;

  if (value->type != KT_JSON_STRING)
    return FALSE;
  if (!value->escaped)
    return value->len == len && memcmp (value->text, s, len) == 0;
  /* Decoded, it is at least a sixth of its length. */
  if (value->len > 6 * len + 6)
    return FALSE;
  out = value->len <= sizeof buf ? buf : (big = g_malloc (value->len));
  return kt_json_unescape (value, out) == len && memcmp (out, s, len) == 0;
}
