/* kt-shapes.c - kt-gen's --shape lines and their truth (kt-shapes.h).
 *
 * Every value is drawn first and printed second (a sum as a number of
 * ten-thousandths, then as text), so the truth never parses what it
 * wrote: it is a second, independent reading of the same draw. */
#include "kt-shapes.h"

#include <stdio.h>
#include <string.h>

typedef enum
{
  SHAPE_ACCESS,
  SHAPE_SYSLOG,
  SHAPE_JSON,
  SHAPE_ECS,     /* --input json: Fluent Bit's and ECS loggers' records */
  SHAPE_LOGFMT,  /* --input logfmt */
  SHAPE_OTLP,    /* --input otlp-json: a request a value */
} Shape;

static const char *const shape_names[] = { "access", "syslog", "json", "ecs", "logfmt", "otlp",
                                           NULL };
/* The fields each shape's lines have for --by, and its sum (or NULL). */
static const char *const shape_fields[][3] = {
  { "service", "status", NULL },
  { "host", "level", NULL },
  { "level", "service", NULL },
  { "service.name", "level", NULL },
  { "svc", "level", NULL },
  { "service.name", "level", NULL },
};
static const char *const shape_sum[] = { "bytes", NULL, "latency_ms", "http.response.bytes",
                                         "bytes", "http.response.body.size" };
static const char *const shape_by[] = { "service,status", "host,level", "level,service",
                                        "service.name,level", "svc,level",
                                        "service.name,level" };
static const char *const shape_levels[] = { "4,5", "ERROR,WARN", "ERROR,WARN", "ERROR,WARN",
                                            "ERROR,WARN", "ERROR,WARN" };
static const int shape_bucket[] = { 1, 1, 5, 1, 1, 1 };
static const char *const shape_input[] = { NULL, NULL, NULL, "json", "logfmt", "otlp-json" };

/* The ktally options that read each shape. */
static const char *const shape_pattern[] = {
  "^\\S+ \\S+ \\S+ \\[(?<time>[^\\]]+)\\] \"[^\"]*\" (?<status>(?<level>[1-5])[0-9]{2}) "
  "(?<bytes>\\S+) \"[^\"]*\" \"[^\"]*\" \"(?<service>[^\"]*)\"$",
  "^(?<time>[A-Z][a-z]{2} [ 0-9][0-9] [0-9]{2}:[0-9]{2}:[0-9]{2}) (?<host>\\S+) [^:]*: "
  "(?<level>[A-Z]+)(?: |$)",
  "^\\{\"ts\":\"(?<time>[^\"]*)\",\"level\":\"(?<level>[A-Z]+)\",\"service\":"
  "\"(?<service>[^\"]*)\",\"latency_ms\":(?<latency_ms>[^,}]*),",
};
static const char *const shape_time_format[] = { "%d/%b/%Y:%H:%M:%S +0000", "syslog",
                                                 "iso8601" };

static const char *const months[12] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                         "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };

typedef struct
{
  guint64 count;
  gint64  sum;  /* ten-thousandths */
} Row;

struct _KtShaped
{
  Shape       shape;
  guint64     rng;
  gint64      t;
  int         per_second, in_second;
  guint       malformed, keys;
  gboolean    cycle;
  guint64     n;
  GStrv       by;
  GStrv       levels;
  int         bucket;
  GHashTable *truth;  /* "YYYY-MM-DD HH:MM:00\tv...": Row * */
};

/* What one line holds, as drawn. */
typedef struct
{
  char     level[8];
  char     status[4];
  char     service[48];
  char     host[48];
  gint64   sum;       /* ten-thousandths */
  char     sum_text[48];
  gboolean sum_ok;    /* sum_text is a number ktally reads as sum */
} Fields;

/* splitmix64, as kt-lines.c: a seed means the same lines everywhere. */
static guint64
next (KtShaped *self)
{
  guint64 z = (self->rng += G_GUINT64_CONSTANT (0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * G_GUINT64_CONSTANT (0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * G_GUINT64_CONSTANT (0x94d049bb133111eb);
  return z ^ (z >> 31);
}

static guint
below (KtShaped *self, guint n)
{
  return (guint) (next (self) % n);
}

KtShaped *
kt_shaped_new (const char *shape, guint64 seed, gint64 start, int per_second,
               guint malformed_permille, guint keys, gboolean cycle, const char *by,
               const char *levels, int bucket, GError **error)
{
  g_autoptr(KtShaped) self = g_new0 (KtShaped, 1);
  int s = -1;

  for (int i = 0; shape_names[i] != NULL; i++)
    if (g_strcmp0 (shape, shape_names[i]) == 0)
      s = i;
  if (s < 0)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--shape: expected access, syslog, json, ecs, logfmt or otlp, got '%s'",
                   shape);
      return NULL;
    }
  self->shape = (Shape) s;
  self->rng = seed;
  self->t = start;
  if (start == 0 && self->shape == SHAPE_SYSLOG)
    {
      /* No year in the line: recent enough that ktally's rule (the
       * latest year that puts the line at most a day ahead) is the year
       * the line was drawn in. */
      gint64 now = g_get_real_time () / G_USEC_PER_SEC;
      self->t = (now - 2 * 86400) / 60 * 60;
    }
  self->per_second = per_second;
  self->malformed = malformed_permille;
  self->keys = MAX (keys, 1);
  self->cycle = cycle;
  self->by = g_strsplit (by != NULL ? by : shape_by[s], ",", -1);
  self->levels = g_strsplit (levels != NULL ? levels : shape_levels[s], ",", -1);
  self->bucket = bucket > 0 ? bucket : shape_bucket[s];
  self->truth = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  for (char **f = self->by; *f != NULL; f++)
    if (!g_strv_contains (shape_fields[s], *f))
      {
        g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                     "--by: shape %s has no field '%s'", shape, *f);
        return NULL;
      }
  if (self->bucket != 1 && self->bucket != 5 && self->bucket != 60)
    {
      g_set_error_literal (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                           "--bucket: 1, 5 or 60 minutes");
      return NULL;
    }
  return g_steal_pointer (&self);
}

void
kt_shaped_free (KtShaped *self)
{
  if (self == NULL)
    return;
  g_strfreev (self->by);
  g_strfreev (self->levels);
  g_clear_pointer (&self->truth, g_hash_table_unref);
  g_free (self);
}

/* Key @i's name: "" for 0, UTF-8 for every fifth. */
static void
key_name (KtShaped *self, guint i, const char *prefix, char *out, gsize size)
{
  if (i == 0 && self->shape != SHAPE_SYSLOG)  /* syslog's host is \S+ */
    g_strlcpy (out, "", size);
  else if (i % 5 == 1)
    g_snprintf (out, size, "%s-\xc3\xa9t\xc3\xa9-%u", prefix, i);
  else
    g_snprintf (out, size, "%s-%u", prefix, i);
}

/* @units ten-thousandths as a decimal with @decimals (0-4) digits after
 * the point: exact when @units is a multiple of 10^(4 - decimals). */
static void
format_units (gint64 units, int decimals, char *out, gsize size)
{
  static const gint64 scale[] = { 10000, 1000, 100, 10, 1 };
  guint64 mag = units < 0 ? (guint64) -units : (guint64) units;

  if (decimals == 0)
    g_snprintf (out, size, "%s%" G_GUINT64_FORMAT, units < 0 ? "-" : "", mag / 10000);
  else
    g_snprintf (out, size, "%s%" G_GUINT64_FORMAT ".%0*" G_GUINT64_FORMAT, units < 0 ? "-" : "",
                mag / 10000, decimals, (mag % 10000) / (guint64) scale[decimals]);
}

/* A sum: a number (drawn as units, printed exactly) or, with @bad, text
 * that is no number ktally reads. */
static void
draw_sum (KtShaped *self, Fields *f, gboolean bad, gboolean negative_ok)
{
  /* The last, empty, only where the pattern takes an empty value (json):
   * access's \S+ would not match at all, whatever the level. */
  static const char *const bads[] = { "-", "1e3", "12.34567", "922337203685477.5808",
                                      "99999999999999999999", "+5", ".5", "5.", "" };
  int decimals;

  if (bad)
    {
      guint n = G_N_ELEMENTS (bads) - (self->shape == SHAPE_ACCESS);

      g_strlcpy (f->sum_text, bads[below (self, n)], sizeof f->sum_text);
      f->sum_ok = FALSE;
      return;
    }
  decimals = self->shape == SHAPE_ACCESS ? 0 : (int) below (self, 5);
  /* Bytes: up to 50,000; latency: up to 300 ms, in steps its decimals
   * can print. */
  if (self->shape == SHAPE_ACCESS)
    f->sum = (gint64) below (self, 50001) * 10000;
  else
    {
      static const gint64 step[] = { 10000, 1000, 100, 10, 1 };
      f->sum = (gint64) below (self, (guint) (3000000 / step[decimals]) + 1) * step[decimals];
    }
  if (negative_ok && below (self, 50) == 0)
    f->sum = -f->sum;
  format_units (f->sum, decimals, f->sum_text, sizeof f->sum_text);
  f->sum_ok = TRUE;
}

static const char *
weighted (KtShaped *self, const char *const *names, const guint *weights)
{
  guint total = 0, x;

  for (guint i = 0; names[i] != NULL; i++)
    total += weights[i];
  x = below (self, total);
  for (guint i = 0; names[i] != NULL; i++)
    {
      if (x < weights[i])
        return names[i];
      x -= weights[i];
    }
  return names[0];
}

static const char *
field_value (const Fields *f, const char *name)
{
  if (g_str_equal (name, "service") || g_str_equal (name, "service.name")
      || g_str_equal (name, "svc"))
    return f->service;
  if (g_str_equal (name, "status"))
    return f->status;
  if (g_str_equal (name, "host"))
    return f->host;
  return f->level;
}

/* Counts a line of @t (UTC seconds) with @f in the truth. */
static void
truth_add (KtShaped *self, gint64 t, const Fields *f)
{
  gint64 minute = t >= 0 ? t / 60 : (t - 59) / 60;
  g_autoptr(GString) key = g_string_new (NULL);
  char stamp[20];
  Row *row;

  minute -= ((minute % self->bucket) + self->bucket) % self->bucket;
  kt_lines_format_time (minute * 60, stamp);
  g_string_append (key, stamp);
  for (char **b = self->by; *b != NULL; b++)
    g_string_append_printf (key, "\t%s", field_value (f, *b));
  row = g_hash_table_lookup (self->truth, key->str);
  if (row == NULL)
    {
      row = g_new0 (Row, 1);
      g_hash_table_insert (self->truth, g_strdup (key->str), row);
    }
  row->count++;
  row->sum += f->sum;
}

/* The civil fields of @t (seconds). */
static void
civil (gint64 t, int *y, int *mo, int *d, int *h, int *mi, int *s)
{
  char stamp[20];

  kt_lines_format_time (t, stamp);
  sscanf (stamp, "%d-%d-%d %d:%d:%d", y, mo, d, h, mi, s);
}

/* The levels of syslog and JSON lines, drawn with these weights. */
static const char *const line_levels[] = { "ERROR", "WARN", "INFO", "DEBUG", NULL };
static const guint level_weights[] = { 20, 15, 50, 15 };

/* An nginx-style access line into @out and @f; @bad: unreadable (@how
 * 0) or a bad sum (1). */
static void
access_line (KtShaped *self, Fields *f, guint key, gboolean bad, guint how, GString *out)
{
  static const char *const statuses[] = { "200", "204", "301", "404", "429", "500", "502",
                                          "503", NULL };
  static const guint status_weights[] = { 55, 5, 5, 12, 3, 8, 5, 7 };
  int y, mo, d, h, mi, s;

  g_strlcpy (f->status, weighted (self, statuses, status_weights), sizeof f->status);
  f->level[0] = f->status[0];
  key_name (self, key, "svc", f->service, sizeof f->service);
  draw_sum (self, f, bad && how == 1, FALSE);
  civil (self->t, &y, &mo, &d, &h, &mi, &s);
  g_string_append_printf (out, "10.%u.%u.%u - - [%02d/%s/%04d:%02d:%02d:%02d +0000] "
                          "\"GET /v1/items/%u HTTP/1.1\" %s %s \"-\" \"curl/7.88\" \"%s\"",
                          below (self, 256), below (self, 256), below (self, 256),
                          bad && how == 0 ? 31 : d, months[bad && how == 0 ? 1 : mo - 1],
                          y, h, mi, s, below (self, 1000), f->status, f->sum_text,
                          f->service);
}

/* A syslog line; @bad: no level, which no pattern reads. */
static void
syslog_line (KtShaped *self, Fields *f, guint key, gboolean bad, GString *out)
{
  int y, mo, d, h, mi, s;

  g_strlcpy (f->level, weighted (self, line_levels, level_weights), sizeof f->level);
  key_name (self, key, "web", f->host, sizeof f->host);
  civil (self->t, &y, &mo, &d, &h, &mi, &s);
  if (bad)
    g_string_append_printf (out, "%s %2d %02d:%02d:%02d %s app[%u]:", months[mo - 1], d, h,
                            mi, s, f->host, below (self, 30000));
  else
    g_string_append_printf (out, "%s %2d %02d:%02d:%02d %s app[%u]: %s disk %u%% full",
                            months[mo - 1], d, h, mi, s, f->host, below (self, 30000),
                            f->level, below (self, 101));
}

/* A JSON-ish line with an iso8601 time in some zone; @bad as for access. */
static void
json_line (KtShaped *self, Fields *f, guint key, gboolean bad, guint how, GString *out)
{
  static const char *const offsets[] = { "Z", "+00:00", "+02:00", "-05:30", "+14:00", "", NULL };
  static const guint offset_weights[] = { 3, 1, 3, 2, 1, 1 };
  static const char *const fractions[] = { "", ".5", ".123", ".123456" };
  const char *zone = weighted (self, offsets, offset_weights);
  int offset = 0, y, mo, d, h, mi, s;

  if (zone[0] == '+' || zone[0] == '-')
    offset = (zone[0] == '-' ? -1 : 1) * ((zone[1] - '0') * 600 + (zone[2] - '0') * 60
                                          + (zone[4] - '0') * 10 + (zone[5] - '0'));
  g_strlcpy (f->level, weighted (self, line_levels, level_weights), sizeof f->level);
  key_name (self, key, "svc", f->service, sizeof f->service);
  draw_sum (self, f, bad && how == 1, TRUE);
  /* The line shows local time; the truth is UTC. */
  civil (self->t + offset * 60, &y, &mo, &d, &h, &mi, &s);
  g_string_append_printf (out, "{\"ts\":\"%04d-%02d-%02dT%02d:%02d:%02d%s%s\",\"level\":"
                          "\"%s\",\"service\":\"%s\",\"latency_ms\":%s,\"msg\":\"x%u\"}",
                          y, bad && how == 0 ? 13 : mo, d, h, mi, s,
                          fractions[below (self, 4)], zone, f->level, f->service,
                          f->sum_text, below (self, 1000));
}

/* ---- The structured inputs' shapes ------------------------------------ */

/* The levels of structured records, and how a producer may write each:
 * names in any case, pino's numbers, OpenTelemetry's severity numbers. */
static const char *const record_levels[] = { "ERROR", "WARN", "INFO", "DEBUG", NULL };
static const guint record_weights[] = { 20, 15, 50, 15 };
static const int pino_number[] = { 50, 40, 30, 20 };
static const int otel_number[] = { 17, 13, 9, 5 };

static guint
level_index (const char *level)
{
  for (guint i = 0; record_levels[i] != NULL; i++)
    if (g_str_equal (record_levels[i], level))
      return i;
  return 0;
}

/* @level as a producer writes it: ERROR, error or Error. */
static void
append_level_name (KtShaped *self, GString *out, const char *level)
{
  switch (below (self, 3))
    {
    case 0:
      g_string_append (out, level);
      break;
    case 1:
      for (const char *c = level; *c != '\0'; c++)
        g_string_append_c (out, g_ascii_tolower (*c));
      break;
    default:
      g_string_append_c (out, *level);
      for (const char *c = level + 1; *c != '\0'; c++)
        g_string_append_c (out, g_ascii_tolower (*c));
      break;
    }
}

/* @t (UTC seconds) as a producer writes a time: RFC 3339 in some zone
 * with some fraction (quoted), or an epoch number in seconds (with a
 * fraction), milliseconds or nanoseconds, bare (@quote_numbers: in a
 * JSON string half the time). Every form names a moment of second @t. */
static void
append_time (KtShaped *self, GString *out, gint64 t, gboolean json)
{
  static const char *const offsets[] = { "Z", "+00:00", "+02:00", "-05:30", "+0530", "z", NULL };
  static const guint offset_weights[] = { 4, 1, 3, 2, 1, 1 };
  static const char *const fractions[] = { "", ".5", ".123", ".123456789", ",25" };
  guint form = below (self, 5);
  const char *quote = json ? "\"" : "";

  if (form <= 1)
    {
      const char *zone = weighted (self, offsets, offset_weights);
      int offset = 0, y, mo, d, h, mi, sec;
      const char *fraction = fractions[below (self, json ? 4 : 5)];

      if (zone[0] == '+' || zone[0] == '-')
        offset = (zone[0] == '-' ? -1 : 1)
                 * ((zone[1] - '0') * 600 + (zone[2] - '0') * 60
                    + (zone[zone[3] == ':' ? 4 : 3] - '0') * 10 + (zone[zone[3] == ':' ? 5 : 4] - '0'));
      civil (t + offset * 60, &y, &mo, &d, &h, &mi, &sec);
      /* logfmt's bare values take no space: T, never the space. */
      g_string_append_printf (out, "%s%04d-%02d-%02dT%02d:%02d:%02d%s%s%s", quote, y, mo, d, h, mi,
                              sec, fraction, zone, quote);
      return;
    }
  if (json && below (self, 2) == 0)
    quote = "\"";
  else
    quote = "";
  if (form == 2)
    g_string_append_printf (out, "%s%" G_GINT64_FORMAT ".%06u%s", quote, t, below (self, 1000000),
                            quote);
  else if (form == 3)
    g_string_append_printf (out, "%s%" G_GINT64_FORMAT "%03u%s", quote, t, below (self, 1000),
                            quote);
  else
    g_string_append_printf (out, "%s%" G_GINT64_FORMAT "%09u%s", quote, t, below (self, 1000000000),
                            quote);
}

/* A JSON string of @text (key names hold only letters, digits, '-' and
 * UTF-8), sometimes with its characters escaped (\u00e9 for é): the
 * reader must decode to the same key. */
static void
append_json_string (KtShaped *self, GString *out, const char *text)
{
  gboolean escape = below (self, 4) == 0;

  g_string_append_c (out, '"');
  for (const char *c = text; *c != '\0';)
    {
      gunichar u = g_utf8_get_char (c);

      if (escape && (u >= 0x80 || u == 's'))
        g_string_append_printf (out, "\\u%04x", u);
      else
        g_string_append_unichar (out, u);
      c = g_utf8_next_char (c);
    }
  g_string_append_c (out, '"');
}

/* One of the ways a JSON record can be bad, whatever its level. */
static void
append_bad_json (KtShaped *self, GString *out, gint64 t)
{
  switch (below (self, 8))
    {
    case 0: /* cut short */
      g_string_append_printf (out, "{\"@timestamp\":%" G_GINT64_FORMAT ",\"level\":\"error\"", t);
      break;
    case 1: /* NUL escaped */
      g_string_append_printf (out, "{\"ts\":%" G_GINT64_FORMAT ",\"level\":\"error\",\"msg\":"
                              "\"a\\u0000b\"}", t);
      break;
    case 2: /* invalid UTF-8 */
      g_string_append_printf (out, "{\"ts\":%" G_GINT64_FORMAT ",\"level\":\"error\",\"msg\":"
                              "\"\xc3\x28\"}", t);
      break;
    case 3: /* a lone surrogate */
      g_string_append_printf (out, "{\"ts\":%" G_GINT64_FORMAT ",\"level\":\"error\",\"msg\":"
                              "\"\\udc01\"}", t);
      break;
    case 4: /* nested past the bound */
      g_string_append_printf (out, "{\"ts\":%" G_GINT64_FORMAT ",\"level\":\"error\",\"x\":", t);
      for (int i = 0; i < 70; i++)
        g_string_append_c (out, '[');
      for (int i = 0; i < 70; i++)
        g_string_append_c (out, ']');
      g_string_append_c (out, '}');
      break;
    case 5: /* no time */
      g_string_append (out, "{\"level\":\"error\",\"msg\":\"no time\"}");
      break;
    case 6: /* a level of the wrong type */
      g_string_append_printf (out, "{\"ts\":%" G_GINT64_FORMAT ",\"level\":true}", t);
      break;
    default: /* two documents */
      g_string_append_printf (out, "{\"ts\":%" G_GINT64_FORMAT ",\"level\":\"error\"}{}", t);
      break;
    }
}

/* A record as Fluent Bit forwards it or an ECS logger writes it: time,
 * level, service and bytes nested or with dotted names, in any member
 * order, a repeated level now and then (the last wins). */
static void
ecs_line (KtShaped *self, Fields *f, guint key, gboolean bad, guint how, GString *out)
{
  gboolean dotted = below (self, 2) == 0, pino = below (self, 5) == 0;
  guint idx;

  g_strlcpy (f->level, weighted (self, record_levels, record_weights), sizeof f->level);
  idx = level_index (f->level);
  key_name (self, key, "svc", f->service, sizeof f->service);
  draw_sum (self, f, bad && how == 1, TRUE);
  if (bad && how == 0)
    {
      append_bad_json (self, out, self->t);
      return;
    }
  g_string_append_c (out, '{');
  if (below (self, 6) == 0)
    g_string_append (out, "\"level\":\"debug\",");  /* repeated below: the last wins */
  if (pino)
    {
      /* pino: level 50, time in milliseconds. */
      g_string_append_printf (out, "\"level\":%d,\"time\":%" G_GINT64_FORMAT "%03u,",
                              pino_number[idx], self->t, below (self, 1000));
    }
  else
    {
      g_string_append (out, below (self, 2) == 0 ? "\"@timestamp\":" : "\"timestamp\":");
      append_time (self, out, self->t, TRUE);
      g_string_append (out, dotted ? ",\"log.level\":\"" : ",\"log\":{\"logger\":\"app\",\"level\":\"");
      append_level_name (self, out, f->level);
      g_string_append (out, dotted ? "\"," : "\"},");
    }
  g_string_append_printf (out, "\"message\":\"request %u \\\"done\\\"\",", below (self, 1000));
  g_string_append (out, dotted ? "\"service.name\":" : "\"service\":{\"name\":");
  append_json_string (self, out, f->service);
  g_string_append (out, dotted ? "," : "},");
  g_string_append (out, dotted ? "\"http.response.bytes\":" : "\"http\":{\"response\":{\"bytes\":");
  if (!f->sum_ok || below (self, 3) == 0)
    g_string_append_printf (out, "\"%s\"", f->sum_text);
  else
    g_string_append (out, f->sum_text);
  g_string_append (out, dotted ? "" : "}}");
  g_string_append_printf (out, ",\"kubernetes\":{\"pod_name\":\"api-%u\",\"labels\":{\"app\":\"x\"}}}",
                          below (self, 10));
}

/* A logfmt line, go-kit's or slog's keys in any order; service values
 * quoted where they hold UTF-8, or at random. */
static void
logfmt_line (KtShaped *self, Fields *f, guint key, gboolean bad, guint how, GString *out)
{
  guint order = below (self, 3);

  g_strlcpy (f->level, weighted (self, record_levels, record_weights), sizeof f->level);
  key_name (self, key, "svc", f->service, sizeof f->service);
  draw_sum (self, f, bad && how == 1, TRUE);
  if (bad && how == 0)
    {
      static const char *const bads[] = { "level=error msg=\"unterminated", "=error",
                                          "level=error msg=\"\\u0000\"", "level=error a\"b=1",
                                          "level=error msg=\xff", "level=error k=v=w",
                                          "msg=\"no level\"" };

      g_string_append_printf (out, "ts=%" G_GINT64_FORMAT " %s", self->t,
                              bads[below (self, G_N_ELEMENTS (bads))]);
      return;
    }
  for (guint part = 0; part < 4; part++)
    {
      if (part > 0)
        g_string_append_c (out, ' ');
      switch ((part + order) % 4)
        {
        case 0:
          g_string_append (out, below (self, 2) == 0 ? "ts=" : "time=");
          append_time (self, out, self->t, FALSE);
          break;
        case 1:
          g_string_append (out, "level=");
          append_level_name (self, out, f->level);
          break;
        case 2:
          if (f->service[0] == '\0')
            g_string_append (out, below (self, 2) == 0 ? "svc=" : "svc=\"\"");
          else if (below (self, 2) == 0)
            g_string_append_printf (out, "svc=\"%s\"", f->service);
          else
            g_string_append_printf (out, "svc=%s", f->service);
          break;
        default:
          g_string_append_printf (out, "bytes=%s msg=\"request %u \\\"done\\\"\"", f->sum_text,
                                  below (self, 1000));
          break;
        }
    }
}

/* One OTLP log record of @f into @out, at log time @t. */
static void
otlp_record (KtShaped *self, const Fields *f, gint64 t, GString *out, gboolean override)
{
  guint idx = level_index (f->level);
  guint level_form = below (self, 3);

  g_string_append (out, "{");
  if (below (self, 6) == 0)
    g_string_append_printf (out, "\"timeUnixNano\":\"0\",\"observedTimeUnixNano\":\"%"
                            G_GINT64_FORMAT "%09u\",", t, below (self, 1000000000));
  else if (below (self, 4) == 0)
    g_string_append_printf (out, "\"timeUnixNano\":%" G_GINT64_FORMAT "%09u,", t,
                            below (self, 1000000000));
  else
    g_string_append_printf (out, "\"timeUnixNano\":\"%" G_GINT64_FORMAT "%09u\",", t,
                            below (self, 1000000000));
  if (level_form == 0)
    {
      g_string_append (out, "\"severityText\":\"");
      append_level_name (self, out, f->level);
      g_string_append_printf (out, "\",\"severityNumber\":%d,", otel_number[idx]);
    }
  else if (level_form == 1)
    g_string_append_printf (out, "\"severityNumber\":%d,", otel_number[idx] + (int) below (self, 4));
  else
    g_string_append_printf (out, "\"severityNumber\":\"SEVERITY_NUMBER_%s%s\",", f->level,
                            below (self, 2) == 0 ? "" : "3");
  g_string_append_printf (out, "\"body\":{\"stringValue\":\"request %u\"},\"attributes\":[",
                          below (self, 1000));
  if (override)
    {
      g_string_append (out, "{\"key\":\"service.name\",\"value\":{\"stringValue\":");
      append_json_string (self, out, f->service);
      g_string_append (out, "}},");
    }
  g_string_append (out, "{\"key\":\"http.response.body.size\",\"value\":");
  if (!f->sum_ok)
    g_string_append_printf (out, "{\"stringValue\":\"%s\"}", f->sum_text);
  else if (strchr (f->sum_text, '.') == NULL && below (self, 2) == 0)
    g_string_append_printf (out, "{\"intValue\":\"%s\"}", f->sum_text);
  else if (strchr (f->sum_text, '.') == NULL)
    g_string_append_printf (out, "{\"intValue\":%s}", f->sum_text);
  else
    g_string_append_printf (out, "{\"doubleValue\":%s}", f->sum_text);
  g_string_append_printf (out, "},{\"key\":\"thread.id\",\"value\":{\"intValue\":%u}}],"
                          "\"traceId\":\"5b8efff798038103d269b633813fc60c\",\"spanId\":"
                          "\"eee19b7ec3c1b174\"}", below (self, 100));
}

/* A pending truth row: a counted record's time and fields, added only
 * once its request is known to be good. */
typedef struct
{
  gint64 t;
  Fields f;
} Pending;

/* One OTLP request of @n log records into @out, its records counted into
 * @kinds (by KtLinesKind); one in twenty is bad as a whole (cut short,
 * a NUL escape, resourceLogs not an array), and none of its records
 * counts. */
static void
otlp_value (KtShaped *self, GString *out, guint n, guint64 *all_kinds)
{
  g_autoptr(GArray) pending = g_array_new (FALSE, FALSE, sizeof (Pending));
  guint64 kinds[3] = { 0 };
  guint resources = 1 + below (self, 2), at = 0;
  gboolean whole_bad = below (self, 1000) < self->malformed * 2;
  gsize start = out->len;

  g_string_append (out, "{\"resourceLogs\":[");
  for (guint r = 0; r < resources; r++)
    {
      guint key = self->cycle ? (guint) (self->n % self->keys) : below (self, self->keys);
      guint here = r + 1 == resources ? n - at : below (self, n - at + 1);
      char service[48];
      gboolean resource_last = below (self, 2) == 0;

      key_name (self, key, "svc", service, sizeof service);
      if (r > 0)
        g_string_append_c (out, ',');
      g_string_append_c (out, '{');
      if (!resource_last)
        {
          g_string_append (out, "\"resource\":{\"attributes\":[{\"key\":\"service.name\",\"value\":"
                                "{\"stringValue\":");
          append_json_string (self, out, service);
          g_string_append (out, "}}]},");
        }
      g_string_append (out, "\"scopeLogs\":[{\"scope\":{\"name\":\"app\"},\"logRecords\":[");
      for (guint i = 0; i < here; i++, at++)
        {
          Fields f = { 0 };
          gboolean bad = below (self, 1000) < self->malformed;
          guint how = bad ? below (self, 2) : 0;
          gboolean override = below (self, 10) == 0;
          gboolean counted;

          self->n++;
          g_strlcpy (f.level, weighted (self, record_levels, record_weights), sizeof f.level);
          if (override)
            key_name (self, below (self, self->keys), "svc", f.service, sizeof f.service);
          else
            g_strlcpy (f.service, service, sizeof f.service);
          draw_sum (self, &f, bad && how == 1, TRUE);
          if (i > 0)
            g_string_append_c (out, ',');
          if (bad && how == 0)
            {
              /* A record of its own wrong: no time at all, or no object. */
              if (below (self, 2) == 0)
                g_string_append (out, "{\"severityNumber\":17,\"body\":{\"stringValue\":\"x\"}}");
              else
                g_string_append (out, "17");
              kinds[KT_LINES_MALFORMED]++;
            }
          else
            {
              otlp_record (self, &f, self->t, out, override);
              counted = g_strv_contains ((const char *const *) self->levels, f.level);
              if (!counted)
                kinds[KT_LINES_OTHER]++;
              else if (!f.sum_ok)
                kinds[KT_LINES_MALFORMED]++;
              else
                {
                  Pending p = { self->t, f };

                  kinds[KT_LINES_ERROR]++;
                  g_array_append_val (pending, p);
                }
            }
          if (self->per_second <= 0)
            self->t += below (self, 4);
          else if (++self->in_second == self->per_second)
            {
              self->t++;
              self->in_second = 0;
            }
        }
      g_string_append (out, "]}]");
      if (resource_last)
        {
          g_string_append (out, ",\"resource\":{\"attributes\":[{\"key\":\"service.name\","
                                "\"value\":{\"stringValue\":");
          append_json_string (self, out, service);
          g_string_append (out, "}}]}");
        }
      g_string_append_c (out, '}');
    }
  g_string_append (out, "]}");
  if (whole_bad)
    {
      switch (below (self, 3))
        {
        case 0:
          g_string_truncate (out, start + (out->len - start) / 2);
          break;
        case 1:
          g_string_insert (out, (gssize) start + 1, "\"note\":\"\\u0000\",");
          break;
        default:
          g_string_truncate (out, start);
          g_string_append (out, "{\"resourceLogs\":{\"scopeLogs\":[]}}");
          break;
        }
      /* The reader sees one malformed request, none of its records. */
      all_kinds[KT_LINES_MALFORMED]++;
      return;
    }
  for (guint k = 0; k < 3; k++)
    all_kinds[k] += kinds[k];
  for (guint i = 0; i < pending->len; i++)
    truth_add (self, g_array_index (pending, Pending, i).t, &g_array_index (pending, Pending, i).f);
}

gboolean
kt_shaped_per_value (KtShaped *self)
{
  return self->shape == SHAPE_OTLP;
}

void
kt_shaped_value (KtShaped *self, GString *out, guint n, guint64 *kinds)
{
  if (self->shape == SHAPE_OTLP)
    {
      otlp_value (self, out, n, kinds);
      return;
    }
  for (guint i = 0; i < n; i++)
    {
      if (i > 0)
        g_string_append_c (out, '\n');
      kinds[kt_shaped_next (self, out)]++;
    }
}

KtLinesKind
kt_shaped_next (KtShaped *self, GString *out)
{
  Fields f = { 0 };
  guint key = self->cycle ? (guint) (self->n % self->keys) : below (self, self->keys);
  gboolean bad = below (self, 1000) < self->malformed;
  /* A bad line is unreadable (0) or has a bad sum (1), if the shape has one. */
  guint how = bad ? below (self, shape_sum[self->shape] != NULL ? 2 : 1) : 0;
  gboolean counted;
  KtLinesKind kind;

  self->n++;
  f.sum_ok = TRUE;
  g_return_val_if_fail (self->shape != SHAPE_OTLP, KT_LINES_MALFORMED);
  if (self->shape == SHAPE_ACCESS)
    access_line (self, &f, key, bad, how, out);
  else if (self->shape == SHAPE_SYSLOG)
    syslog_line (self, &f, key, bad, out);
  else if (self->shape == SHAPE_ECS)
    ecs_line (self, &f, key, bad, how, out);
  else if (self->shape == SHAPE_LOGFMT)
    logfmt_line (self, &f, key, bad, how, out);
  else
    json_line (self, &f, key, bad, how, out);

  counted = g_strv_contains ((const char *const *) self->levels, f.level);
  if (bad && how == 0)
    kind = KT_LINES_MALFORMED;
  else if (!counted)
    kind = KT_LINES_OTHER;
  else if (!f.sum_ok)
    kind = KT_LINES_MALFORMED;
  else
    {
      kind = KT_LINES_ERROR;
      truth_add (self, self->t, &f);
    }

  if (self->per_second <= 0)
    self->t += below (self, 4);
  else if (++self->in_second == self->per_second)
    {
      self->t++;
      self->in_second = 0;
    }
  return kind;
}

char **
kt_shaped_options (KtShaped *self)
{
  GPtrArray *out = g_ptr_array_new ();
  g_autofree char *levels = g_strjoinv (",", self->levels);
  g_autofree char *by = g_strjoinv (",", self->by);

  if (shape_input[self->shape] != NULL)
    g_ptr_array_add (out, g_strdup_printf ("--input=%s", shape_input[self->shape]));
  else
    {
      g_ptr_array_add (out, g_strdup_printf ("--pattern=%s", shape_pattern[self->shape]));
      g_ptr_array_add (out, g_strdup_printf ("--time-format=%s", shape_time_format[self->shape]));
    }
  g_ptr_array_add (out, g_strdup_printf ("--levels=%s", levels));
  g_ptr_array_add (out, g_strdup_printf ("--bucket=%s", self->bucket == 60 ? "1h"
                                                        : self->bucket == 5 ? "5m" : "1m"));
  if (*by != '\0')
    g_ptr_array_add (out, g_strdup_printf ("--by=%s", by));
  if (shape_sum[self->shape] != NULL)
    g_ptr_array_add (out, g_strdup_printf ("--sum=%s", shape_sum[self->shape]));
  g_ptr_array_add (out, NULL);
  return (char **) g_ptr_array_free (out, FALSE);
}

static gint
compare_lines (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

gboolean
kt_shaped_truth_write (KtShaped *self, const char *path, GError **error)
{
  g_autoptr(GPtrArray) lines = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GString) text = g_string_new (NULL);
  GHashTableIter iter;
  gpointer key, value;

  g_hash_table_iter_init (&iter, self->truth);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      const Row *row = value;
      GString *line = g_string_new (key);

      g_string_append_printf (line, "\t%" G_GUINT64_FORMAT, row->count);
      if (shape_sum[self->shape] != NULL)
        {
          char sum[48];
          format_units (row->sum, 4, sum, sizeof sum);
          g_string_append_printf (line, "\t%s", sum);
        }
      g_ptr_array_add (lines, g_string_free (line, FALSE));
    }
  g_ptr_array_sort (lines, compare_lines);
  for (guint i = 0; i < lines->len; i++)
    g_string_append_printf (text, "%s\n", (const char *) lines->pdata[i]);
  return g_file_set_contents (path, text->str, (gssize) text->len, error);
}
