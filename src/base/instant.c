/* instant.c - moments as users write them (instant.h). */
#include "instant.h"

#include <string.h>
#include "error.h"
#include "minutes.h"

static const char TAKES[] = "an ISO 8601 date and time, YYYY-MM-DDTHH:MM[:SS[.fff]] and "
                            "optionally Z or an offset (+02:00); without one, local time";

/* @n digits at *@p into *@out, moving *@p past them. */
static gboolean
digits (const char **p, int n, int *out)
{
  *out = 0;
  for (int i = 0; i < n; i++, (*p)++)
    {
      if (!g_ascii_isdigit (**p))
        return FALSE;
      *out = *out * 10 + (**p - '0');
    }
  return TRUE;
}

static int
days_in_month (int year, int month)
{
  static const int days[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
  gboolean leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;

  return month == 2 && leap ? 29 : days[month - 1];
}

/* [+-]HH[[:]MM] or Z at @p, to the end: seconds east of UTC. */
static gboolean
parse_offset (const char *p, int *seconds)
{
  int sign, hours, minutes = 0;

  if ((p[0] == 'Z' || p[0] == 'z') && p[1] == '\0')
    {
      *seconds = 0;
      return TRUE;
    }
  if (*p != '+' && *p != '-')
    return FALSE;
  sign = *p++ == '-' ? -1 : 1;
  if (!digits (&p, 2, &hours) || hours > 23)
    return FALSE;
  if (*p == ':')
    p++;
  if (*p != '\0' && (!digits (&p, 2, &minutes) || minutes > 59))
    return FALSE;
  *seconds = sign * (hours * 3600 + minutes * 60);
  return *p == '\0';
}

/* The UTC seconds of the naive @local (seconds since the epoch as if it
 * were UTC) in @zone: FALSE where the zone skips it. Of a time the zone
 * has twice, the first: the earliest instant, i.e. the larger offset from
 * UTC. Decided by the offsets, not by the daylight flag, which says
 * nothing about order: Europe/Dublin flags its winter time as the
 * daylight one (a negative DST), and Moscow fell back in 2014 from one
 * standard time to another.
 *
 * Every interval in force within a day and a bit of @local is a
 * candidate (no zone is more than 26 hours from UTC); @local read with a
 * candidate's offset is an instant of that zone when the instant falls in
 * that same interval. */
static gboolean
naive_to_utc (GTimeZone *zone, gint64 local, gint64 *utc)
{
  const gint64 reach = 26 * 3600;
  int first = g_time_zone_find_interval (zone, G_TIME_TYPE_UNIVERSAL, local - reach);
  int last = g_time_zone_find_interval (zone, G_TIME_TYPE_UNIVERSAL, local + reach);
  gint64 best = G_MAXINT64;

  for (int i = first; i <= last; i++)
    {
      gint64 at = local - g_time_zone_get_offset (zone, i);

      if (g_time_zone_find_interval (zone, G_TIME_TYPE_UNIVERSAL, at) == i)
        best = MIN (best, at);
    }
  *utc = best;
  return best != G_MAXINT64;
}

gboolean
kt_instant_parse (const char *flag, const char *text, GTimeZone *naive_zone, gint64 *ms,
                  GError **error)
{
  const char *p = text;
  int year, month, day, hour, minute, second = 0, milli = 0, offset = 0;
  gboolean naive;
  gint64 local;

  if (p == NULL
      || !digits (&p, 4, &year) || *p++ != '-' || !digits (&p, 2, &month) || *p++ != '-'
      || !digits (&p, 2, &day) || (*p != 'T' && *p != 't' && *p != ' ')
      || (p++, !digits (&p, 2, &hour)) || *p++ != ':' || !digits (&p, 2, &minute))
    goto bad;
  if (*p == ':')
    {
      p++;
      if (!digits (&p, 2, &second))
        goto bad;
      if (*p == '.' || *p == ',')
        {
          int n = 0;

          for (p++; g_ascii_isdigit (*p); p++, n++)
            if (n < 3)
              milli = milli * 10 + (*p - '0');
          if (n == 0 || n > 9)
            goto bad;
          for (; n < 3; n++)
            milli *= 10;
        }
    }
  naive = *p == '\0';
  if (!naive && !parse_offset (p, &offset))
    goto bad;
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > days_in_month (year, month)
      || hour > 23 || minute > 59 || second > 59)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "%s: '%s' is no such date or time", flag,
                   text);
      return FALSE;
    }
  local = kt_minute_from_civil (year, month, day, hour, minute) * 60 + second;
  if (naive && naive_zone != NULL)
    {
      gint64 utc;

      if (!naive_to_utc (naive_zone, local, &utc))
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "%s: '%s' does not exist in the local "
                       "time zone (%s): the clocks skip it; give the offset from UTC",
                       flag, text, g_time_zone_get_identifier (naive_zone));
          return FALSE;
        }
      local = utc;
    }
  else
    local -= offset;
  *ms = local * 1000 + milli;
  return TRUE;

bad:
  g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "%s: expected %s, got '%s'", flag, TAKES,
               text != NULL ? text : "");
  return FALSE;
}

char *
kt_instant_format (gint64 ms)
{
  gint64 seconds = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
  gint64 minute = seconds >= 0 ? seconds / 60 : -((-seconds + 59) / 60);
  int year, month, day, of_day;

  kt_minute_to_civil (minute, &year, &month, &day, &of_day);
  return g_strdup_printf ("%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", year, month, day, of_day / 60,
                          of_day % 60, (int) (seconds - minute * 60),
                          (int) (ms - seconds * 1000));
}

gint64
kt_instant_now (void)
{
  return g_get_real_time () / 1000;
}
