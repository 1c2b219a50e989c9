/* record-time.h - a structured log record's own time, as its producer
 * wrote it, to the UTC minute it falls in, exactly.
 *
 * Text: RFC 3339, YYYY-MM-DD, then 'T', 't' or a space, then HH:MM:SS
 * (second 60, a leap second, counts in its minute), then optionally a
 * fraction of any length after '.' or ',' (never rounded: it only decides
 * the minute of a time before 1970), then optionally the offset: 'Z', 'z',
 * +HH:MM, +HHMM or +HH (or -), hours up to 23; without one the time is
 * UTC. Or the text of an epoch number, read as a number is.
 *
 * Numbers: epoch time in RFC 8259's syntax (-?digits, .digits, e+N), read
 * in decimal, never through a double. Its unit is decided by the size of
 * its integer part: up to 11 digits (below 10^11, a date before the year
 * 5138) seconds; 12-14 digits milliseconds; 15-17 microseconds; 18-20
 * nanoseconds; more is out of range. So 1714564800, 1714564800.5,
 * 1714564800500, "1714564800500000" and 1.7145648e9 name moments of
 * 2024-05-01; a time before 1973-03-03 written in milliseconds (or finer)
 * is read as seconds, and one after 5138 in seconds as milliseconds: write
 * those in RFC 3339. A caller that knows the unit (OTLP's
 * timeUnixNano) gives it. Pure arithmetic. */
#pragma once
#include <glib.h>

typedef enum
{
  KT_STAMP_OK,
  KT_STAMP_BAD,    /* not a time in any of these forms, or no such date */
  KT_STAMP_RANGE,  /* a number too large for any unit (more than 11 digits of seconds) */
} KtStamp;

/* The @len bytes at @text (no quotes) as RFC 3339 or an epoch number. */
KtStamp kt_stamp_text  (const char *text, gsize len, gint64 *minute);

/* The @len bytes at @text as an epoch number: @unit_digits 0 (seconds),
 * 3, 6 or 9 (nanoseconds), or -1: by its size, as above. */
KtStamp kt_stamp_epoch (const char *text, gsize len, int unit_digits, gint64 *minute);
