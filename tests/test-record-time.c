/* test-record-time.c - a structured record's time to its UTC minute
 * (stages/record-time.c): RFC 3339 in every spelling producers use, epoch
 * numbers in each unit and notation, the rule for an ambiguous size, the
 * edges of each unit, floors before 1970, and what is refused. */
#include <string.h>
#include "minutes.h"
#include "record-time.h"

typedef struct
{
  const char *text;
  KtStamp     want;
  const char *minute;  /* "YYYY-MM-DD HH:MM" (UTC) when OK */
} Case;

static const Case text_cases[] = {
  /* RFC 3339: any fraction, any offset, T, t or a space. */
  { "2024-05-01T12:34:56Z", KT_STAMP_OK, "2024-05-01 12:34" },
  { "2024-05-01T12:34:56.123Z", KT_STAMP_OK, "2024-05-01 12:34" },            /* Logstash, Bunyan */
  { "2024-05-01T12:34:56.123456789Z", KT_STAMP_OK, "2024-05-01 12:34" },      /* Vector */
  { "2024-05-01T12:34:56.1234567890123Z", KT_STAMP_OK, "2024-05-01 12:34" },
  { "2024-05-01T14:34:56+02:00", KT_STAMP_OK, "2024-05-01 12:34" },           /* Logrus, slog */
  { "2024-05-01T14:34:56.5+0200", KT_STAMP_OK, "2024-05-01 12:34" },          /* Zap's ISO 8601 */
  { "2024-05-01T14:34:56+02", KT_STAMP_OK, "2024-05-01 12:34" },
  { "2024-05-01T07:04:56-05:30", KT_STAMP_OK, "2024-05-01 12:34" },
  { "2024-05-01t12:34:56z", KT_STAMP_OK, "2024-05-01 12:34" },
  { "2024-05-01 12:34:56,789", KT_STAMP_OK, "2024-05-01 12:34" },             /* Python's asctime: UTC */
  { "2024-05-01T00:30:00+01:00", KT_STAMP_OK, "2024-04-30 23:30" },           /* the day before */
  { "2024-12-31T23:59:60Z", KT_STAMP_OK, "2024-12-31 23:59" },                /* leap second */
  { "2024-02-29T00:00:00Z", KT_STAMP_OK, "2024-02-29 00:00" },
  { "0999-01-01T00:00:00Z", KT_STAMP_OK, "0999-01-01 00:00" },                /* range: the bucket's */
  { "2023-02-29T00:00:00Z", KT_STAMP_BAD, NULL },
  { "2024-05-01T24:00:00Z", KT_STAMP_BAD, NULL },
  { "2024-05-01T12:34Z", KT_STAMP_BAD, NULL },
  { "2024-05-01T12:34:56.Z", KT_STAMP_BAD, NULL },
  { "2024-05-01T12:34:56+24:00", KT_STAMP_BAD, NULL },
  { "2024-05-01T12:34:56 Z", KT_STAMP_BAD, NULL },
  { "2024-05-01", KT_STAMP_BAD, NULL },
  { "2024-5-01T12:34:56Z", KT_STAMP_BAD, NULL },
  { "", KT_STAMP_BAD, NULL },
  { "yesterday", KT_STAMP_BAD, NULL },
  /* Epoch numbers in strings: the size decides the unit. */
  { "1714566896", KT_STAMP_OK, "2024-05-01 12:34" },                           /* seconds */
  { "1714566896.999", KT_STAMP_OK, "2024-05-01 12:34" },
  { "1714566896123", KT_STAMP_OK, "2024-05-01 12:34" },                        /* ms: pino */
  { "1714566896123456", KT_STAMP_OK, "2024-05-01 12:34" },                     /* µs */
  { "1714566896123456789", KT_STAMP_OK, "2024-05-01 12:34" },                  /* ns */
  { "1.714566896e9", KT_STAMP_OK, "2024-05-01 12:34" },
  { "1714566896E+3", KT_STAMP_OK, "2024-05-01 12:34" },                        /* 13 digits: ms */
  { "0", KT_STAMP_OK, "1970-01-01 00:00" },
  { "-0.5", KT_STAMP_OK, "1969-12-31 23:59" },                                 /* floors */
  { "-60", KT_STAMP_OK, "1969-12-31 23:59" },
  { "-60.000001", KT_STAMP_OK, "1969-12-31 23:58" },
  { "99999999999", KT_STAMP_OK, "5138-11-16 09:46" },                          /* 11 digits: s */
  { "100000000000", KT_STAMP_OK, "1973-03-03 09:46" },                         /* 12: ms */
  { "86400000", KT_STAMP_OK, "1972-09-27 00:00" },                             /* 1970-01-02 in ms, read as s */
  { "99999999999999999999", KT_STAMP_OK, "5138-11-16 09:46" },                 /* 20 digits: ns */
  { "100000000000000000000", KT_STAMP_RANGE, NULL },
  { "1e400", KT_STAMP_RANGE, NULL },
  { "1e-400", KT_STAMP_OK, "1970-01-01 00:00" },
  { "0e999999999999999999999", KT_STAMP_OK, "1970-01-01 00:00" },
  { "+1714566896", KT_STAMP_BAD, NULL },
  { "01714566896", KT_STAMP_BAD, NULL },
  { "1714566896.", KT_STAMP_BAD, NULL },
  { "0x10", KT_STAMP_BAD, NULL },
  { "1714566896 ", KT_STAMP_BAD, NULL },
  { "NaN", KT_STAMP_BAD, NULL },
};

static void
check (const char *text, KtStamp got, gint64 minute, KtStamp want, const char *want_minute)
{
  char buf[20];

  g_test_message ("%s", text);
  g_assert_cmpint (got, ==, want);
  if (want != KT_STAMP_OK)
    return;
  if (minute < G_GINT64_CONSTANT (-510170400))
    {
      /* Before DATETIME's years: compare by the civil date. */
      int y, mo, d, of_day;

      kt_minute_to_civil (minute, &y, &mo, &d, &of_day);
      g_snprintf (buf, sizeof buf, "%04d-%02d-%02d %02d:%02d:00", y, mo, d, of_day / 60, of_day % 60);
    }
  else
    kt_minute_format (minute, buf);
  g_assert_cmpmem (buf, 16, want_minute, 16);
}

static void
test_text (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (text_cases); i++)
    {
      const Case *c = &text_cases[i];
      g_autofree char *copy = g_strdup (c->text);  /* exactly its bytes: ASan */
      gint64 m = G_MININT64;
      KtStamp got = kt_stamp_text (copy, strlen (copy), &m);

      check (c->text, got, m, c->want, c->minute);
    }
}

/* A known unit (OTLP's nanoseconds) overrides the size. */
static void
test_unit (void)
{
  static const Case ns[] = {
    { "1714566896123456789", KT_STAMP_OK, "2024-05-01 12:34" },
    { "86400000000000", KT_STAMP_OK, "1970-01-02 00:00" },  /* 14 digits, still ns */
    { "1", KT_STAMP_OK, "1970-01-01 00:00" },
    { "18446744073709551615", KT_STAMP_OK, "2554-07-21 23:34" },  /* uint64's largest */
    { "1000000000000000000000", KT_STAMP_RANGE, NULL },
  };
  gint64 m = 0;
  KtStamp got;

  for (guint i = 0; i < G_N_ELEMENTS (ns); i++)
    {
      got = kt_stamp_epoch (ns[i].text, strlen (ns[i].text), 9, &m);
      check (ns[i].text, got, m, ns[i].want, ns[i].minute);
    }
  g_assert_cmpint (kt_stamp_epoch ("1714566896", 10, 0, &m), ==, KT_STAMP_OK);
  got = kt_stamp_epoch ("1714566896123", 13, 0, &m);
  check ("1714566896123 s", got, m, KT_STAMP_RANGE, NULL);
  got = kt_stamp_epoch ("1714566896123", 13, 3, &m);
  check ("1714566896123 ms", got, m, KT_STAMP_OK, "2024-05-01 12:34");
}

/* Every second of a day around 1970 in each unit and notation lands in
 * the minute a plain division gives. */
static void
test_exact (void)
{
  for (gint64 s = -90000; s <= 90000; s += 7)
    {
      gint64 want = s >= 0 ? s / 60 : -((-s + 59) / 60), m;
      g_autofree char *sec = g_strdup_printf ("%" G_GINT64_FORMAT ".999", s);
      g_autofree char *sci = g_strdup_printf ("%" G_GINT64_FORMAT "e0", s);

      g_assert_cmpint (kt_stamp_epoch (sec, strlen (sec), 0, &m), ==, KT_STAMP_OK);
      /* "s.999" is s + 0.999 above 0, s - 0.999 below: the minute before
       * where s starts one. */
      g_assert_cmpint (m, ==, s >= 0 || s % 60 != 0 ? want : want - 1);
      g_assert_cmpint (kt_stamp_epoch (sci, strlen (sci), 0, &m), ==, KT_STAMP_OK);
      g_assert_cmpint (m, ==, want);
    }
}

/* Plain epoch numbers (digits, maybe a fraction) are read by a quick
 * path: the same verdict and minute as the general reading, which the
 * same number with an exponent of zero takes, for every size and unit. */
static void
test_quick_same (void)
{
  static const char digits[] = "17145668961234567890123";
  static const char *const fractions[] = { "", ".5", ".000", ".999999999999" };

  for (gsize n = 1; n < sizeof digits; n++)
    for (guint f = 0; f < G_N_ELEMENTS (fractions); f++)
      for (int unit = -1; unit <= 20; unit++)
        {
          g_autofree char *head = g_strndup (digits, n);
          g_autofree char *text = g_strconcat (head, fractions[f], NULL);
          g_autofree char *general = g_strconcat (text, "e0", NULL);
          gint64 m1 = 1, m2 = 2;
          KtStamp a = kt_stamp_epoch (text, strlen (text), unit, &m1);
          KtStamp b = kt_stamp_epoch (general, strlen (general), unit, &m2);

          g_test_message ("%s unit %d", text, unit);
          g_assert_cmpint (a, ==, b);
          if (a == KT_STAMP_OK)
            g_assert_cmpint (m1, ==, m2);
        }
}

/* The date and time are read at fixed places: any other byte at any of
 * them is refused, as the general reading refuses it. */
static void
test_fixed_places (void)
{
  static const char good[] = "2024-05-01T12:34:56.5+02:00";
  static const char others[] = { 'x', '/', ':', '-', ' ', '\0', (char) 0xc3, '9' };
  gint64 m;

  g_assert_cmpint (kt_stamp_text (good, strlen (good), &m), ==, KT_STAMP_OK);
  for (gsize at = 0; at < 19; at++)
    for (guint o = 0; o < G_N_ELEMENTS (others); o++)
      {
        g_autofree char *text = g_strdup (good);
        KtStamp want;

        if (text[at] == others[o] || (at == 10 && others[o] == ' '))
          continue;
        text[at] = others[o];
        /* A digit where a digit stands stays a date (one maybe out of
         * range); anything else is no RFC 3339 time. */
        want = others[o] == '9' && g_ascii_isdigit (good[at]) ? KT_STAMP_OK : KT_STAMP_BAD;
        if (want == KT_STAMP_OK && (at == 5 || at == 8 || at == 11 || at == 14 || at == 17))
          want = KT_STAMP_BAD;  /* month 95, day 91, hour 92, minute 94, second 96 */
        g_test_message ("%d: %s", (int) at, text);
        g_assert_cmpint (kt_stamp_text (text, 19 + strlen (good + 19), &m), ==, want);
      }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/record-time/text", test_text);
  g_test_add_func ("/record-time/unit", test_unit);
  g_test_add_func ("/record-time/exact", test_exact);
  g_test_add_func ("/record-time/quick-same", test_quick_same);
  g_test_add_func ("/record-time/fixed-places", test_fixed_places);
  return g_test_run ();
}
