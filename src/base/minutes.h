/* minutes.h - a line's time as ktally keeps it: whole minutes since
 * 1970-01-01 00:00 (naive: no time zone), to and from the civil date
 * (proleptic Gregorian). Pure arithmetic. */
#pragma once
#include <glib.h>

/* Minutes since 1970-01-01 00:00 for a valid civil date and time (any
 * year 0..9999, proleptic Gregorian); the inverse of kt_minute_format(). */
gint64     kt_minute_from_civil (int year, int month, int day, int hour, int min);

/* Writes "YYYY-MM-DD HH:MM:00" (20 bytes with the NUL) into @buf, for
 * @minute in KT_MINUTE_MIN..KT_MINUTE_MAX (4-digit years: anything else
 * would not fit, and is a bug of the caller). */
void       kt_minute_format (gint64 minute, char buf[static 20]);

/* The civil date of @minute, and the minutes since its midnight. */
void       kt_minute_to_civil (gint64 minute, int *year, int *month, int *day, int *of_day);
