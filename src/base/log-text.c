/* log-text.c - --log-format text (the default): one line per record for
 * people, "2024-05-01 14:09:08.123 ktally info: job logs: batch 12: ...",
 * in local time. The fields are not repeated: the message says it all. */
#include "log.h"

static void
text_format (const KtLogRecord *record, GString *out)
{
  g_autoptr(GDateTime) at = g_date_time_new_from_unix_local (record->time / G_USEC_PER_SEC);
  g_autofree char *stamp = NULL;
  const char *tag = record->level;

  /* The error that ends the process reads as every Unix tool's does, and
   * as scripts have always matched it. */
  if (g_str_equal (record->level, "error"))
    {
      g_string_append_printf (out, "ktally: %s", record->message);
      return;
    }
  if (g_str_equal (tag, "critical"))
    tag = "BUG";
  stamp = g_date_time_format (at, "%Y-%m-%d %H:%M:%S");
  g_string_append_printf (out, "%s.%03d ktally %s: %s", stamp,
                          (int) (record->time % G_USEC_PER_SEC / 1000), tag, record->message);
}

const KtLogFormat kt_log_format_text = { "text", text_format };
