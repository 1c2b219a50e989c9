/* log-logfmt.c - --log-format logfmt: one line of key=value pairs per
 * record, time=2024-05-01T12:09:08.123Z level=info msg="job logs: ..."
 * event=batch job=logs batch=12 ..., as Heroku's logfmt, Go's slog and
 * Loki's parser write and read them. A value is quoted when it is empty
 * or holds a space, '=', '"', a backslash or a control character. */
#include "log.h"

static gboolean
needs_quotes (const char *value)
{
  if (*value == '\0')
    return TRUE;
  for (const char *p = value; *p != '\0'; p++)
    if ((guchar) *p <= ' ' || *p == '=' || *p == '"' || *p == '\\' || *p == 0x7f)
      return TRUE;
  return FALSE;
}

/* "key=value", after a space unless it is the @first pair. */
static void
append_pair (GString *out, gboolean first, const char *key, const char *value)
{
  g_autofree char *valid = g_utf8_make_valid (value, -1);

  g_string_append_printf (out, "%s%s=", first ? "" : " ", key);
  if (!needs_quotes (valid))
    {
      g_string_append (out, valid);
      return;
    }
  kt_log_append_quoted (out, valid);
}

static void
logfmt_format (const KtLogRecord *record, GString *out)
{
  g_autoptr(GString) time = g_string_new (NULL);

  kt_log_append_time (time, record->time);
  append_pair (out, TRUE, "time", time->str);
  append_pair (out, FALSE, "level", record->level);
  append_pair (out, FALSE, "msg", record->message);
  for (guint i = 0; i < record->n_fields; i++)
    append_pair (out, FALSE, record->fields[i].key, record->fields[i].value);
}

const KtLogFormat kt_log_format_logfmt = { "logfmt", logfmt_format };
