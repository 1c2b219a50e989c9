/* instant.h - a moment as users write it (--to-datetime, --from-datetime),
 * and as Kafka's record timestamps count it: milliseconds since the epoch.
 *
 * Pure: no Kafka, no MySQL. What the text may be is ISO 8601's calendar
 * date and time, YYYY-MM-DD, then 'T' (or a space), then HH:MM, optional
 * :SS and a fraction of up to 9 digits (kept to the millisecond, cut, not
 * rounded), then optionally the offset from UTC: Z, +HH:MM, +HHMM or +HH
 * (or -). A time without an offset is naive: it is read in the time zone
 * given (the commands give the local one, TZ's), and refused where that
 * zone skips it (a spring-forward gap); a time that zone has twice (the
 * hour after a fall-back) is the first of the two: the earlier instant,
 * found by the offsets from UTC, whichever the zone flags as daylight
 * time. */
#pragma once
#include <glib.h>

/* @text into *@ms. A naive time is read in @naive_zone (NULL: UTC). Bad
 * text, a date or time that does not exist, a naive time inside a gap of
 * @naive_zone: KT_ERROR_USAGE naming @flag and saying what it takes. */
gboolean kt_instant_parse (const char *flag, const char *text, GTimeZone *naive_zone,
                           gint64 *ms, GError **error);

/* @ms as ISO 8601 in UTC, to the millisecond: "2024-05-01T12:00:00.000Z".
 * New string. */
char    *kt_instant_format (gint64 ms);

/* The current time, in milliseconds since the epoch. */
gint64   kt_instant_now (void);
