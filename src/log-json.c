/* log-json.c - --log-format json: one JSON object per line,
 * {"time":"2024-05-01T12:09:08.123Z","level":"info","message":"...",
 * "event":"batch","job":"logs","batch":12,...}: time in UTC, numbers as
 * numbers. Whatever bytes a message holds (an error quoting a value), the
 * line is valid JSON: invalid UTF-8 becomes U+FFFD, controls are escaped. */
#include "log.h"

static void
append_string (GString *out, const char *text)
{
  g_autofree char *valid = g_utf8_make_valid (text, -1);

  g_string_append_c (out, '"');
  for (const char *p = valid; *p != '\0'; p++)
    switch (*p)
      {
      case '"':
        g_string_append (out, "\\\"");
        break;
      case '\\':
        g_string_append (out, "\\\\");
        break;
      case '\n':
        g_string_append (out, "\\n");
        break;
      case '\r':
        g_string_append (out, "\\r");
        break;
      case '\t':
        g_string_append (out, "\\t");
        break;
      default:
        if ((guchar) *p < 0x20)
          g_string_append_printf (out, "\\u%04x", (guchar) *p);
        else
          g_string_append_c (out, *p);
      }
  g_string_append_c (out, '"');
}

static void
json_format (const KtLogRecord *record, GString *out)
{
  g_string_append (out, "{\"time\":\"");
  kt_log_append_time (out, record->time);
  g_string_append (out, "\",\"level\":");
  append_string (out, record->level);
  g_string_append (out, ",\"message\":");
  append_string (out, record->message);
  for (guint i = 0; i < record->n_fields; i++)
    {
      const KtLogField *f = &record->fields[i];

      g_string_append_c (out, ',');
      append_string (out, f->key);
      g_string_append_c (out, ':');
      if (f->number)
        g_string_append (out, f->value);
      else
        append_string (out, f->value);
    }
  g_string_append_c (out, '}');
}

const KtLogFormat kt_log_format_json = { "json", json_format };
