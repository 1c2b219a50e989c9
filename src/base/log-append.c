/* log-append.c - what the log formats (log-text.c, log-json.c,
 * log-logfmt.c) write a record's time and its strings with (log.h).
 *
 * A file of its own, not part of log.c: log.c picks a format from their
 * table, and the formats call these, so that neither calls the other back. */
#include "log.h"

void
kt_log_append_time (GString *out, gint64 time)
{
  g_autoptr(GDateTime) at = g_date_time_new_from_unix_utc (time / G_USEC_PER_SEC);
  g_autofree char *stamp = g_date_time_format (at, "%Y-%m-%dT%H:%M:%S");

  g_string_append_printf (out, "%s.%03dZ", stamp, (int) (time % G_USEC_PER_SEC / 1000));
}

void
kt_log_append_quoted (GString *out, const char *text)
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
        if ((guchar) *p < 0x20 || *p == 0x7f)
          g_string_append_printf (out, "\\u%04x", (guchar) *p);
        else
          g_string_append_c (out, *p);
      }
  g_string_append_c (out, '"');
}
