/* minutes.c - minutes since 1970 and civil dates (minutes.h). */
#include "minutes.h"

gint64
kt_minute_from_civil (int year, int month, int day, int hour, int min)
{
  /* Days from 1970-01-01 in the proleptic Gregorian calendar: eras of
   * 400 years starting on 1 March, so the leap day is the era's last. */
  gint64 y = month <= 2 ? year - 1 : year;
  gint64 era = (y >= 0 ? y : y - 399) / 400;
  gint64 yoe = y - era * 400;
  gint64 doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
  gint64 doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  gint64 days = era * 146097 + doe - 719468;

  return days * 1440 + hour * 60 + min;
}

void
kt_minute_to_civil (gint64 minute, int *year, int *month, int *day, int *of_day)
{
  gint64 days = minute >= 0 ? minute / 1440 : (minute - 1439) / 1440;
  gint64 z = days + 719468;
  gint64 era = (z >= 0 ? z : z - 146096) / 146097;
  gint64 doe = z - era * 146097;
  gint64 yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  gint64 doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  gint64 mp = (5 * doy + 2) / 153;

  *day = (int) (doy - (153 * mp + 2) / 5 + 1);
  *month = (int) (mp < 10 ? mp + 3 : mp - 9);
  *year = (int) (yoe + era * 400 + (*month <= 2));
  *of_day = (int) (minute - days * 1440);
}

void
kt_minute_format (gint64 minute, char buf[static 20])
{
  int y, m, d, mod;

  kt_minute_to_civil (minute, &y, &m, &d, &mod);
  g_snprintf (buf, 20, "%04d-%02d-%02d %02d:%02d:00", y, m, d, mod / 60, mod % 60);
}
