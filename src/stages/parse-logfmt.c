/* parse-logfmt.c - the logfmt input: one line of key=value pairs
 * (parse-input.h).
 *
 * Takes a line, hands back the fields the job reads: the values of the
 * keys its paths name (a path's names joined with dots: `log.level` and
 * `log\.level` both name the key log.level, keys being flat). The grammar
 * is go-logfmt's: pairs separated by spaces (or tabs); a key is bytes
 * other than space, '=', '"' and control characters; `key=value` with a
 * bare value (bytes other than space, '=', '"' and controls; empty is
 * fine) or a quoted one, which is a JSON string (its escapes, valid UTF-8,
 * no NUL, no lone surrogate) followed by a space or the end; a key alone
 * is a flag (a null value). The last of a repeated key wins. Keys and
 * bare values must be valid UTF-8 without control characters; anything
 * else makes the line malformed. One pass, no allocation per line but the
 * decoding of quoted values with escapes that the job reads. */
#include "parse-input.h"

#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* A key the job reads, and which fields it is. */
typedef struct
{
  char    *key;
  gsize    len;
  KtField  value;    /* this line's, KT_JSON_ABSENT until found */
  gboolean escaped;  /* a quoted value with escapes, decoded once the line is read */
} Wanted;

typedef struct
{
  GArray      *wanted;      /* Wanted */
  guint64      first[4];    /* the first bytes of the wanted keys */
  guint64      lens;        /* their lengths (bit 63: 63 bytes or more) */
  GArray      *time, *level;  /* guint: indexes into wanted, in order */
  GArray      *maps;        /* KtLevelMap, per level key */
  guint        n_dims, n_sums;
  gboolean     dim_is_level[KT_MAX_DIMENSIONS];
  guint        dim_at[KT_MAX_DIMENSIONS], sum_at[KT_MAX_SUMS];
  GByteArray  *decoded;
} LogfmtInput;

/* The index of @names's key in self->wanted, added if new. */
static guint
want (LogfmtInput *self, GStrv names)
{
  g_autofree char *key = g_strjoinv (".", names);
  Wanted w = { NULL, strlen (key), { 0 }, FALSE };

  for (guint i = 0; i < self->wanted->len; i++)
    if (g_str_equal (g_array_index (self->wanted, Wanted, i).key, key))
      return i;
  w.key = g_steal_pointer (&key);
  self->first[(guchar) w.key[0] >> 6] |= G_GUINT64_CONSTANT (1) << ((guchar) w.key[0] & 63);
  self->lens |= G_GUINT64_CONSTANT (1) << MIN (w.len, 63);
  g_array_append_val (self->wanted, w);
  return self->wanted->len - 1;
}

static void
logfmt_close (gpointer state)
{
  LogfmtInput *self = state;

  if (self == NULL)
    return;
  for (guint i = 0; i < self->wanted->len; i++)
    g_free (g_array_index (self->wanted, Wanted, i).key);
  g_array_unref (self->wanted);
  g_array_unref (self->time);
  g_array_unref (self->level);
  g_array_unref (self->maps);
  g_byte_array_unref (self->decoded);
  g_free (self);
}

static gpointer
logfmt_open (const KtInputPaths *paths, G_GNUC_UNUSED GError **error)
{
  LogfmtInput *self = g_new0 (LogfmtInput, 1);

  self->wanted = g_array_new (FALSE, FALSE, sizeof (Wanted));
  self->time = g_array_new (FALSE, FALSE, sizeof (guint));
  self->level = g_array_new (FALSE, FALSE, sizeof (guint));
  self->maps = g_array_new (FALSE, FALSE, sizeof (KtLevelMap));
  for (guint i = 0; i < paths->time->len; i++)
    {
      guint at = want (self, paths->time->pdata[i]);

      g_array_append_val (self->time, at);
    }
  for (guint i = 0; i < paths->level->len; i++)
    {
      guint at = want (self, paths->level->pdata[i]);

      g_array_append_val (self->level, at);
      g_array_append_val (self->maps, g_array_index (paths->level_maps, KtLevelMap, i));
    }
  self->n_dims = paths->n_dims;
  for (guint i = 0; i < paths->n_dims; i++)
    if (!(self->dim_is_level[i] = paths->dim_is_level[i]))
      self->dim_at[i] = want (self, paths->dims[i]);
  self->n_sums = paths->n_sums;
  for (guint i = 0; i < paths->n_sums; i++)
    self->sum_at[i] = want (self, paths->sums[i]);
  self->decoded = g_byte_array_new ();
  return self;
}

#define ONES  G_GUINT64_CONSTANT (0x0101010101010101)
#define HIGHS G_GUINT64_CONSTANT (0x8080808080808080)

static inline guint64
has_byte (guint64 v, guchar c)
{
  guint64 x = v ^ (ONES * c);

  return (x - ONES) & ~x & HIGHS;
}

/* From @p, the first byte that ends a key or a bare value: a space or
 * below (a control), '=', '"', or above 0x7F (UTF-8 to check), or @end.
 * Sixteen bytes at a time with SSE2, then eight (where only the lowest
 * flagged byte is exact, which is the one asked for), then one. */
static inline const guchar *
token_end (const guchar *p, const guchar *end)
{
#ifdef __SSE2__
  /* Sixteen at a time where SSE2 is (every x86-64): most keys and bare
   * values end in the first word, one well-guessed branch. Signed: at or
   * below a space and above 0x7F alike. */
  const __m128i space = _mm_set1_epi8 (0x21), equals = _mm_set1_epi8 ('='),
                quote = _mm_set1_epi8 ('"');

  while (end - p >= 16)
    {
      __m128i v = _mm_loadu_si128 ((const __m128i *) (gconstpointer) p);
      guint m = (guint) _mm_movemask_epi8 (_mm_or_si128 (_mm_or_si128 (_mm_cmpeq_epi8 (v, equals),
                                                                        _mm_cmpeq_epi8 (v, quote)),
                                                          _mm_cmplt_epi8 (v, space)));

      if (m != 0)
        return p + __builtin_ctz (m);
      p += 16;
    }
#endif
  while (end - p >= 8)
    {
      guint64 v, m;

      memcpy (&v, p, 8);
      v = GUINT64_FROM_LE (v);
      m = (v & HIGHS) | ((v - ONES * 0x21) & ~v & HIGHS) | has_byte (v, '=') | has_byte (v, '"');
      if (m != 0)
        return p + (__builtin_ctzll (m) >> 3);
      p += 8;
    }
  while (p < end && *p > ' ' && *p < 0x80 && *p != '=' && *p != '"')
    p++;
  return p;
}

/* A UTF-8 character of two to four bytes at *@p (its first above 0x7F),
 * well-formed (no overlong form, no surrogate, nothing past U+10FFFF). */
static gboolean
utf8_char (const guchar **p, const guchar *end)
{
  const guchar *q = *p;
  guchar c = q[0], lo = 0x80, hi = 0xbf;
  gsize n;

  if (c >= 0xc2 && c <= 0xdf)
    n = 2;
  else if (c >= 0xe0 && c <= 0xef)
    n = 3, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
  else if (c >= 0xf0 && c <= 0xf4)
    n = 4, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
  else
    return FALSE;
  if ((gsize) (end - q) < n || q[1] < lo || q[1] > hi)
    return FALSE;
  for (gsize i = 2; i < n; i++)
    if ((q[i] & 0xc0) != 0x80)
      return FALSE;
  *p = q + n;
  return TRUE;
}

/* A key or a bare value from @p: past its bytes, at a space, the end, or
 * '=' / '"' (left for the caller); NULL with *@why at a control byte or
 * invalid UTF-8. Inlined, the place in a register: twelve of these make a
 * line. */
static inline __attribute__ ((always_inline)) const guchar *
token (const guchar *p, const guchar *end, KtMalformedWhy *why)
{
  for (;;)
    {
      p = token_end (p, end);
      if (G_LIKELY (p == end || *p == ' ' || *p == '=' || *p == '"'))
        return p;
      if (*p >= 0x80)
        {
          if (!utf8_char (&p, end))
            {
              *why = KT_WHY_UTF8;
              return NULL;
            }
          continue;
        }
      if (*p == '\t')
        return p;
      *why = *p == 0 ? KT_WHY_NUL : KT_WHY_SHAPE;
      return NULL;
    }
}

/* The wanted key of @len bytes at @key, or NULL. */
static inline Wanted *
lookup (LogfmtInput *self, const guchar *key, gsize len)
{
  if (!(self->first[key[0] >> 6] & (G_GUINT64_CONSTANT (1) << (key[0] & 63)))
      || !(self->lens & (G_GUINT64_CONSTANT (1) << MIN (len, 63))))
    return NULL;
  for (guint i = 0; i < self->wanted->len; i++)
    {
      Wanted *w = &g_array_index (self->wanted, Wanted, i);

      /* Keys are short: compared in place, no call. */
      if (w->len == len)
        {
          gsize b = 0;

          while (b < len && w->key[b] == (char) key[b])
            b++;
          if (b == len)
            return w;
        }
    }
  return NULL;
}

/* A quoted value at *@p (its '"'): a JSON string, then a space or the
 * end. Into @value (escapes as written: decoded later if read). */
static gboolean
quoted (const guchar **p, const guchar *end, KtJsonValue *value, KtMalformedWhy *why)
{
  KtJsonBad bad;
  gsize used;

  if (!kt_json_string_scan ((const char *) *p, (gsize) (end - *p), value, &used, &bad))
    {
      *why = bad == KT_JSON_BAD_SYNTAX ? KT_WHY_SHAPE : kt_input_json_why (bad);
      return FALSE;
    }
  *p += used;
  if (*p < end && **p != ' ' && **p != '\t')
    {
      *why = KT_WHY_SHAPE;
      return FALSE;
    }
  return TRUE;
}

/* The quoted values with escapes that the job reads, decoded into
 * self->decoded (after the line is read: the last of a repeated key only). */
static void
decode_escaped (LogfmtInput *self, Wanted *wanted, guint n_wanted)
{
  gsize escaped = 0, at = 0;

  for (guint i = 0; i < n_wanted; i++)
    if (wanted[i].escaped)
      escaped += wanted[i].value.len;
  if (escaped > 0)
    g_byte_array_set_size (self->decoded, (guint) escaped);
  for (guint i = 0; i < n_wanted && escaped > 0; i++)
    if (wanted[i].escaped)
      {
        KtJsonValue v = { KT_JSON_STRING, TRUE, wanted[i].value.text, wanted[i].value.len };
        char *to = (char *) self->decoded->data + at;

        wanted[i].value = (KtField) { KT_JSON_STRING, to, kt_json_unescape (&v, to) };
        at += wanted[i].value.len;
      }
}

/* The fields the job reads, from the values @wanted holds, into @out: the
 * first time and level path found, the --by and --sum fields. */
static void
hand_on (LogfmtInput *self, Wanted *wanted, KtRecordFields *out)
{
  out->time.type = out->level.type = KT_JSON_ABSENT;
  for (guint i = 0; i < self->time->len; i++)
    if (wanted[g_array_index (self->time, guint, i)].value.type != KT_JSON_ABSENT)
      {
        out->time = wanted[g_array_index (self->time, guint, i)].value;
        break;
      }
  out->time_unit = -1;
  out->level_map = KT_LEVELS_PINO;
  for (guint i = 0; i < self->level->len; i++)
    if (wanted[g_array_index (self->level, guint, i)].value.type != KT_JSON_ABSENT)
      {
        out->level = wanted[g_array_index (self->level, guint, i)].value;
        out->level_map = g_array_index (self->maps, KtLevelMap, i);
        break;
      }
  for (guint i = 0; i < self->n_dims; i++)
    if (!self->dim_is_level[i])
      out->dims[i] = wanted[self->dim_at[i]].value;
  for (guint i = 0; i < self->n_sums; i++)
    out->sums[i] = wanted[self->sum_at[i]].value;
}

static gboolean
logfmt_line (gpointer state, const char *line, gsize len, KtRecordFields *out,
             KtMalformedWhy *why)
{
  LogfmtInput *self = state;
  const guchar *p = (const guchar *) line, *end = p + len;
  Wanted *wanted = (Wanted *) (gpointer) self->wanted->data;
  guint n_wanted = self->wanted->len;

  for (guint i = 0; i < n_wanted; i++)
    wanted[i].value.type = KT_JSON_ABSENT, wanted[i].escaped = FALSE;
  for (;;)
    {
      const guchar *key;
      KtJsonValue value = { KT_JSON_NULL, FALSE, NULL, 0 };
      Wanted *w;

      while (p < end && (*p == ' ' || *p == '\t'))
        p++;
      if (p == end)
        break;
      key = p;
      if ((p = token (p, end, why)) == NULL)
        return FALSE;
      if (p == key)  /* '=' or '"' where a key starts */
        {
          *why = KT_WHY_SHAPE;
          return FALSE;
        }
      if (p < end && *p == '"')
        {
          *why = KT_WHY_SHAPE;
          return FALSE;
        }
      w = lookup (self, key, (gsize) (p - key));
      if (p < end && *p == '=')
        {
          p++;
          if (p < end && *p == '"')
            {
              if (!quoted (&p, end, &value, why))
                return FALSE;
            }
          else
            {
              const guchar *start = p;

              if ((p = token (p, end, why)) == NULL)
                return FALSE;
              if (p < end && (*p == '=' || *p == '"'))
                {
                  *why = KT_WHY_SHAPE;
                  return FALSE;
                }
              value = (KtJsonValue) { KT_JSON_STRING, FALSE, (const char *) start,
                                      (gsize) (p - start) };
            }
        }
      if (w != NULL)
        {
          /* Escaped values are decoded after the line is read (the last
           * of a repeated key only): as written until then. */
          w->value = (KtField) { value.type, value.text, value.len };
          w->escaped = value.escaped;
        }
    }

  decode_escaped (self, wanted, n_wanted);
  hand_on (self, wanted, out);
  return TRUE;
}

const KtInputClass kt_input_logfmt = {
  .input = KT_INPUT_LOGFMT,
  .open = logfmt_open,
  .close = logfmt_close,
  .line = logfmt_line,
};
