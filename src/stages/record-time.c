/* record-time.c - a structured record's time to its UTC minute
 * (record-time.h). Decimal arithmetic on the digits as written: exact
 * whatever the fraction or exponent. */
#include "record-time.h"

#include <string.h>
#include "minutes.h"

static inline gboolean
is_digit (char c)
{
  return (unsigned char) (c - '0') <= 9;
}

static gboolean
take (const char **p, const char *end, int n, int *out)
{
  int v = 0;

  if (end - *p < n)
    return FALSE;
  for (int i = 0; i < n; i++)
    {
      if (!is_digit ((*p)[i]))
        return FALSE;
      v = v * 10 + ((*p)[i] - '0');
    }
  *p += n;
  *out = v;
  return TRUE;
}

static gboolean
is_leap (int y)
{
  return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* Floor division by 60, also below 0. */
static gint64
floor_minute (gint64 seconds)
{
  return seconds >= 0 ? seconds / 60 : -((-seconds + 59) / 60);
}

static KtStamp
rfc3339 (const char *p, const char *end, gint64 *minute)
{
  static const int days[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
  int y, mo, d, h, mi, s, offset = 0;

  /* The date and time at their fixed places, checked in one go; the
   * general reading below where anything differs (it then refuses). */
  if (end - p >= 19 && p[4] == '-' && p[7] == '-' && (p[10] == 'T' || p[10] == 't' || p[10] == ' ')
      && p[13] == ':' && p[16] == ':')
    {
      static const guint8 at[14] = { 0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18 };
      int v[14];
      gboolean digits = TRUE;

      for (int i = 0; i < 14; i++)
        {
          v[i] = p[at[i]] - '0';
          digits &= (unsigned) v[i] <= 9;
        }
      if (digits)
        {
          y = v[0] * 1000 + v[1] * 100 + v[2] * 10 + v[3];
          mo = v[4] * 10 + v[5];
          d = v[6] * 10 + v[7];
          h = v[8] * 10 + v[9];
          mi = v[10] * 10 + v[11];
          s = v[12] * 10 + v[13];
          p += 19;
          goto checked;
        }
    }
  if (!take (&p, end, 4, &y) || p == end || *p++ != '-' || !take (&p, end, 2, &mo)
      || p == end || *p++ != '-' || !take (&p, end, 2, &d) || p == end
      || (*p != 'T' && *p != 't' && *p != ' '))
    return KT_STAMP_BAD;
  p++;
  if (!take (&p, end, 2, &h) || p == end || *p++ != ':' || !take (&p, end, 2, &mi) || p == end
      || *p++ != ':' || !take (&p, end, 2, &s))
    return KT_STAMP_BAD;
checked:
  if (mo < 1 || mo > 12 || d < 1 || d > (mo == 2 && is_leap (y) ? 29 : days[mo - 1]) || h > 23
      || mi > 59 || s > 60)
    return KT_STAMP_BAD;
  if (p < end && (*p == '.' || *p == ','))
    {
      const char *digits = ++p;

      while (p < end && is_digit (*p))
        p++;
      if (p == digits)
        return KT_STAMP_BAD;
    }
  if (p < end && (*p == 'Z' || *p == 'z'))
    p++;
  else if (p < end && (*p == '+' || *p == '-'))
    {
      int sign = *p++ == '-' ? -1 : 1, oh, om = 0;

      if (!take (&p, end, 2, &oh) || oh > 23)
        return KT_STAMP_BAD;
      if (p < end && *p == ':')
        p++;
      if (p < end && (!take (&p, end, 2, &om) || om > 59))
        return KT_STAMP_BAD;
      offset = sign * (oh * 60 + om);
    }
  if (p != end)
    return KT_STAMP_BAD;
  /* Local time minus its offset is UTC; second 60 stays in its minute. */
  *minute = kt_minute_from_civil (y, mo, d, h, mi) - offset;
  return KT_STAMP_OK;
}

/* The usual epoch number, quickly: a positive integer of at most 19
 * digits (no leading zero), maybe with a fraction, no exponent. FALSE for
 * anything else, which the general reading below decides; where TRUE, its
 * verdict is the general one's (floor of a positive number: the fraction
 * and the digits below the unit drop). */
static gboolean
epoch_plain (const char *text, gsize len, int unit_digits, gint64 *minute, KtStamp *stamp)
{
  static const guint64 tens[] = { 1, 10, 100, 1000, 10000, 100000, 1000000, 10000000,
                                  100000000, 1000000000, G_GUINT64_CONSTANT (10000000000),
                                  G_GUINT64_CONSTANT (100000000000),
                                  G_GUINT64_CONSTANT (1000000000000),
                                  G_GUINT64_CONSTANT (10000000000000),
                                  G_GUINT64_CONSTANT (100000000000000),
                                  G_GUINT64_CONSTANT (1000000000000000),
                                  G_GUINT64_CONSTANT (10000000000000000),
                                  G_GUINT64_CONSTANT (100000000000000000),
                                  G_GUINT64_CONSTANT (1000000000000000000) };
  guint64 n = 0;
  gsize i = 0, digits;
  int unit;

  if (len == 0 || len > 40 || text[0] == '0')
    return FALSE;
  while (i < len && is_digit (text[i]) && i < 19)
    n = n * 10 + (guint64) (text[i++] - '0');
  digits = i;
  if (digits == 0 || (i < len && is_digit (text[i])))
    return FALSE;
  if (i < len)
    {
      if (text[i] != '.' || i + 1 == len)
        return FALSE;
      for (i++; i < len; i++)
        if (!is_digit (text[i]))
          return FALSE;
    }
  unit = unit_digits >= 0 ? unit_digits
         : digits <= 11 ? 0 : digits <= 14 ? 3 : digits <= 17 ? 6 : 9;
  if (unit > 18)
    return FALSE;
  /* More than 11 digits of whole seconds: out of range, as below. */
  if ((gint64) digits - unit > 11)
    {
      *stamp = KT_STAMP_RANGE;
      return TRUE;
    }
  /* The usual units by constants (multiplications, not divisions). */
  switch (unit)
    {
    case 0: n /= 60; break;
    case 3: n /= 60 * G_GUINT64_CONSTANT (1000); break;
    case 6: n /= 60 * G_GUINT64_CONSTANT (1000000); break;
    case 9: n /= 60 * G_GUINT64_CONSTANT (1000000000); break;
    default: n = n / tens[unit] / 60; break;
    }
  *minute = (gint64) n;
  *stamp = KT_STAMP_OK;
  return TRUE;
}

KtStamp
kt_stamp_epoch (const char *text, gsize len, int unit_digits, gint64 *minute)
{
  const char *p = text, *end = text + len, *int_start, *int_end, *frac_start = NULL,
             *frac_end = NULL;
  gboolean negative = FALSE, rest = FALSE;
  gint64 exponent = 0, point, keep, seconds = 0, at = 0;
  int unit;
  KtStamp quick;

  if (epoch_plain (text, len, unit_digits, minute, &quick))
    return quick;
  /* RFC 8259's number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
  if (p < end && *p == '-')
    negative = TRUE, p++;
  int_start = p;
  if (p < end && *p == '0')
    p++;
  else
    while (p < end && is_digit (*p))
      p++;
  int_end = p;
  if (int_end == int_start)
    return KT_STAMP_BAD;
  if (p < end && *p == '.')
    {
      frac_start = ++p;
      while (p < end && is_digit (*p))
        p++;
      frac_end = p;
      if (frac_end == frac_start)
        return KT_STAMP_BAD;
    }
  if (p < end && (*p == 'e' || *p == 'E'))
    {
      int sign = 1;
      const char *digits;

      p++;
      if (p < end && (*p == '+' || *p == '-'))
        sign = *p++ == '-' ? -1 : 1;
      digits = p;
      while (p < end && is_digit (*p))
        {
          /* Saturated: beyond any digit count a text could hold. */
          if (exponent < G_GINT64_CONSTANT (1) << 40)
            exponent = exponent * 10 + (*p - '0');
          p++;
        }
      if (p == digits)
        return KT_STAMP_BAD;
      exponent *= sign;
    }
  if (p != end)
    return KT_STAMP_BAD;

  /* The digits as one sequence (integer, then fraction) without its
   * leading zeros; the point after its first `point` digits. */
  while (int_start < int_end && *int_start == '0')
    int_start++;
  point = (int_end - int_start) + exponent;
  if (int_start == int_end && frac_start != NULL)
    while (frac_start < frac_end && *frac_start == '0')
      frac_start++, point--;
  if (int_start == int_end && (frac_start == NULL || frac_start == frac_end))
    {
      *minute = 0;  /* zero, however written */
      return KT_STAMP_OK;
    }
  /* point digits before the point: the unit by their number. */
  if (unit_digits >= 0)
    unit = unit_digits;
  else if (point <= 11)
    unit = 0;
  else if (point <= 14)
    unit = 3;
  else if (point <= 17)
    unit = 6;
  else if (point <= 20)
    unit = 9;
  else
    return KT_STAMP_RANGE;
  keep = point - unit;  /* digits of whole seconds */
  if (keep > 11)
    return KT_STAMP_RANGE;
  for (int part = 0; part < 2; part++)
    {
      const char *from = part == 0 ? int_start : frac_start, *to = part == 0 ? int_end : frac_end;

      for (const char *c = from; c != NULL && c < to; c++, at++)
        if (at < keep)
          seconds = seconds * 10 + (*c - '0');
        else if (*c != '0')
          rest = TRUE;
    }
  for (; at < keep; at++)
    seconds *= 10;
  *minute = floor_minute (negative ? -(seconds + (rest ? 1 : 0)) : seconds);
  return KT_STAMP_OK;
}

KtStamp
kt_stamp_text (const char *text, gsize len, gint64 *minute)
{
  /* A date starts with four digits and a dash; a number never has one
   * there. */
  if (len >= 5 && text[4] == '-')
    return rfc3339 (text, text + len, minute);
  return kt_stamp_epoch (text, len, -1, minute);
}
