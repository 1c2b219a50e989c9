/* log-json.c - --log-format json: one JSON object per line,
 * {"time":"2024-05-01T12:09:08.123Z","level":"info","message":"...",
 * "event":"batch","job":"logs","batch":12,...}: time in UTC, numbers as
 * numbers, structured fields (KtLogField.json) as they are. Whatever bytes a message holds (an error quoting a value), the
 * line is valid JSON: invalid UTF-8 becomes U+FFFD, controls are escaped. */
#include "log.h"

static void
json_format (const KtLogRecord *record, GString *out)
{
  g_string_append (out, "{\"time\":\"");
  kt_log_append_time (out, record->time);
  g_string_append (out, "\",\"level\":");
  kt_log_append_quoted (out, record->level);
  g_string_append (out, ",\"message\":");
  kt_log_append_quoted (out, record->message);
  for (guint i = 0; i < record->n_fields; i++)
    {
      const KtLogField *f = &record->fields[i];

      g_string_append_c (out, ',');
      kt_log_append_quoted (out, f->key);
      g_string_append_c (out, ':');
      if (f->number || f->json)
        g_string_append (out, f->value);
      else
        kt_log_append_quoted (out, f->value);
    }
  g_string_append_c (out, '}');
}

const KtLogFormat kt_log_format_json = { "json", json_format };
