/* json-scan.h - one pass over a JSON text: is it strict RFC 8259 JSON, and
 * what do the members asked for hold?
 *
 * A caller compiles the member paths it reads once (KtJsonPaths: a tree of
 * names from the root), then scans each text: the scan checks the whole
 * text as the ledger's scan does (RFC 8259's grammar, valid UTF-8 inside
 * strings, no NUL byte or "\u0000", no lone UTF-16 surrogate escape, a
 * bound on nesting, nothing but white space around the one value) and, in
 * the same pass, hands back a slice of the text for every path found. No
 * tree, no allocation per text, no read past the length given, recursion
 * bounded by the depth given. Arrays of records (OTLP's resourceLogs[],
 * logRecords[]) are read through a path step into each element and a
 * function called at each element's end.
 *
 * Pure: base only, never sees Kafka or MySQL. Used by the structured log
 * inputs (kinds/parse-json.c, parse-otlp.c); made to take the ledger's
 * messages too (paths for txn, account, amount and ts, KT_JSON_UNIQUE, a
 * depth of 32). tests/test-json-scan.c and tests/fuzz/fuzz-json-scan.c
 * hold it to this contract. */
#pragma once
#include <glib.h>

/* What a value is; KT_JSON_ABSENT: the path was not found. */
typedef enum
{
  KT_JSON_ABSENT = 0,
  KT_JSON_NULL,
  KT_JSON_FALSE,
  KT_JSON_TRUE,
  KT_JSON_NUMBER,
  KT_JSON_STRING,
  KT_JSON_ARRAY,
  KT_JSON_OBJECT,
} KtJsonType;

/* One value found, as slices of the scanned text (valid while it is). A
 * string's @text is what lies between its quotes, escapes as written
 * (@escaped: it holds at least one; kt_json_unescape() gives its
 * characters); a number's is its digits as written; a literal's its word;
 * an array's or object's everything from its bracket to its bracket. */
typedef struct
{
  KtJsonType  type;
  gboolean    escaped;
  const char *text;
  gsize       len;
} KtJsonValue;

/* Why a text is not accepted: the first problem found. */
typedef enum
{
  KT_JSON_OK = 0,
  KT_JSON_BAD_SYNTAX,     /* not RFC 8259 JSON: a stray byte, a control character in a
                           * string, a comment, a second value, nothing at all */
  KT_JSON_BAD_UTF8,       /* invalid UTF-8 inside a string (outside one any byte
                           * above 0x7F is a syntax error) */
  KT_JSON_BAD_NUL,        /* a NUL byte or "\u0000" in a string */
  KT_JSON_BAD_SURROGATE,  /* "\ud800x", "\udc00": a surrogate escape not in a pair */
  KT_JSON_BAD_DEPTH,      /* arrays and objects nested deeper than the bound */
  KT_JSON_BAD_DUPLICATE,  /* with KT_JSON_UNIQUE: a path found twice */
} KtJsonBad;

/* "json", "utf8", "nul", "surrogate", "depth", "duplicate" ("ok" for
 * KT_JSON_OK): short words, for reasons a table keeps. */
const char *kt_json_bad_name (KtJsonBad why);

typedef enum
{
  /* A member whose name holds dots is also the path of those names: a
   * member "log.level" is found by the path log, level as a member
   * "level" of a member "log" is, as Elasticsearch reads ECS's dotted
   * names. */
  KT_JSON_DOTTED = 1 << 0,
  /* A path found twice in one text (a member named twice, or spelled both
   * ways under KT_JSON_DOTTED) makes the text bad: KT_JSON_BAD_DUPLICATE.
   * Without it, the last one found in the text wins. Within an array's
   * element (KT_JSON_EACH) each element counts on its own. */
  KT_JSON_UNIQUE = 1 << 1,
} KtJsonFlags;

/* A path step into each element of an array (the name "[]" itself is an
 * ordinary member name elsewhere: paths are arrays of names, never
 * parsed). */
extern const char KT_JSON_EACH[];

typedef struct _KtJsonPaths KtJsonPaths;

/* Paths to read from texts nested at most @max_depth deep (1 or more: the
 * root object or array is depth 1), with @flags (KtJsonFlags). */
KtJsonPaths *kt_json_paths_new  (guint max_depth, guint flags);
void         kt_json_paths_free (KtJsonPaths *self);  /* NULL is fine */

/* Adds the path of @n names from the root (decoded member names, at most
 * 255 bytes each, or KT_JSON_EACH for each element of an array) and
 * returns its slot: where kt_json_scan() puts what it holds. The same path
 * added twice is one slot. A path may lead through another: both are
 * read. */
guint        kt_json_paths_add  (KtJsonPaths *self, const char *const *names, guint n);

/* Told at the end of each element of an array: @values as they stand (the
 * slots below that element hold what it held, and were cleared at its
 * start: each element is read on its own), @element the element's value,
 * @user_data as given. */
typedef void (*KtJsonElementFunc) (const KtJsonValue *values, const KtJsonValue *element,
                                   gpointer user_data);

/* Calls @func at the end of each element of the array the path of @n names
 * leads to; its last name must be KT_JSON_EACH. One function a path. */
void         kt_json_paths_on_element (KtJsonPaths *self, const char *const *names, guint n,
                                       KtJsonElementFunc func, gpointer user_data);

/* The number of slots: how many values kt_json_scan() fills. */
guint        kt_json_paths_slots (const KtJsonPaths *self);

/* Scans the @len bytes at @text (any bytes: never read past @len) as one
 * JSON text. Fills every slot of @values (kt_json_paths_slots() of them;
 * KT_JSON_ABSENT where the path was not found) and *@root with the root
 * value's type, and returns TRUE; or returns FALSE with *@why the first
 * problem and *@at its byte offset (both may be NULL). Element functions
 * are called as their elements end, also in a text that turns out bad
 * later: a caller keeps what they hand it until the scan's verdict. */
gboolean     kt_json_scan (const KtJsonPaths *paths, const char *text, gsize len,
                           KtJsonValue *values, KtJsonType *root, KtJsonBad *why,
                           gsize *at);

/* One JSON string at the start of the @len bytes at @text (its opening
 * quote at @text[0]), checked as kt_json_scan() checks strings: FALSE with
 * *@why (KT_JSON_BAD_SYNTAX where unterminated or no string), or TRUE with
 * *@value its slice (as kt_json_scan() gives a string) and *@used the
 * bytes it took, the closing quote included. For readers of strings
 * outside a JSON text (logfmt's quoted values). */
gboolean     kt_json_string_scan (const char *text, gsize len, KtJsonValue *value, gsize *used,
                                  KtJsonBad *why);

/* The characters of a string @value the scan accepted, into @out, which
 * holds at least @value->len bytes (decoding never grows a string); returns
 * their length. Valid UTF-8 without NUL, as the scan checked. */
gsize        kt_json_unescape (const KtJsonValue *value, char *out);

/* Whether string @value (accepted by a scan) is exactly the @len bytes at
 * @s, escapes decoded. */
gboolean     kt_json_string_equal (const KtJsonValue *value, const char *s, gsize len);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (KtJsonPaths, kt_json_paths_free)
