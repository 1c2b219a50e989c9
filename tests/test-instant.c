/* test-instant.c - the moments users write (--to-datetime, --from-datetime,
 * --until-datetime): ISO 8601 with and without an offset, naive times in a
 * time zone with daylight saving (the gap refused, the repeated hour the
 * first), and everything else refused with one line naming the flag. */
#include <glib.h>
#include <string.h>
#include "error.h"
#include "instant.h"

/* 2024-05-01T12:00:00Z */
#define NOON G_GINT64_CONSTANT (1714564800000)

static gint64
parse_ok (const char *text, GTimeZone *zone)
{
  g_autoptr(GError) error = NULL;
  gint64 ms = 0;

  if (!kt_instant_parse ("--to-datetime", text, zone, &ms, &error))
    g_error ("'%s': %s", text, error->message);
  return ms;
}

static void
test_offsets (void)
{
  g_assert_cmpint (parse_ok ("2024-05-01T12:00:00Z", NULL), ==, NOON);
  g_assert_cmpint (parse_ok ("2024-05-01t12:00:00z", NULL), ==, NOON);
  g_assert_cmpint (parse_ok ("2024-05-01 12:00:00Z", NULL), ==, NOON);
  g_assert_cmpint (parse_ok ("2024-05-01T12:00Z", NULL), ==, NOON);
  g_assert_cmpint (parse_ok ("2024-05-01T14:00:00+02:00", NULL), ==, NOON);
  g_assert_cmpint (parse_ok ("2024-05-01T14:00:00+0200", NULL), ==, NOON);
  g_assert_cmpint (parse_ok ("2024-05-01T14:00:00+02", NULL), ==, NOON);
  g_assert_cmpint (parse_ok ("2024-05-01T06:30:00-05:30", NULL), ==, NOON);
  g_assert_cmpint (parse_ok ("2024-05-01T12:00:00.5Z", NULL), ==, NOON + 500);
  g_assert_cmpint (parse_ok ("2024-05-01T12:00:00.123456789Z", NULL), ==, NOON + 123);
  g_assert_cmpint (parse_ok ("2024-05-01T12:00:00,25Z", NULL), ==, NOON + 250);
  g_assert_cmpint (parse_ok ("1970-01-01T00:00:00Z", NULL), ==, 0);
  g_assert_cmpint (parse_ok ("1969-12-31T23:59:59.999Z", NULL), ==, -1);
  g_assert_cmpint (parse_ok ("2024-02-29T00:00:00Z", NULL), ==, G_GINT64_CONSTANT (1709164800000));
  /* An offset given wins over the zone naive times are read in. */
  {
    g_autoptr(GTimeZone) kolkata = g_time_zone_new_identifier ("Asia/Kolkata");

    g_assert_nonnull (kolkata);
    g_assert_cmpint (parse_ok ("2024-05-01T12:00:00Z", kolkata), ==, NOON);
  }
}

/* A naive time is read in the zone given: UTC with none. */
static void
test_naive (void)
{
  g_autoptr(GTimeZone) kolkata = g_time_zone_new_identifier ("Asia/Kolkata");
  g_autoptr(GTimeZone) berlin = g_time_zone_new_identifier ("Europe/Berlin");

  g_assert_nonnull (kolkata);
  g_assert_nonnull (berlin);
  g_assert_cmpint (parse_ok ("2024-05-01T12:00:00", NULL), ==, NOON);
  g_assert_cmpint (parse_ok ("2024-05-01T17:30:00", kolkata), ==, NOON);
  /* Summer time in Berlin: +02:00; winter: +01:00. */
  g_assert_cmpint (parse_ok ("2024-05-01T14:00", berlin), ==, NOON);
  g_assert_cmpint (parse_ok ("2024-01-15T13:00:00", berlin), ==,
                   parse_ok ("2024-01-15T12:00:00Z", NULL));
  /* 2024-10-27 02:30 happens twice in Berlin (02:00-03:00 CEST, then
   * 02:00-03:00 CET): the first, 00:30Z. */
  g_assert_cmpint (parse_ok ("2024-10-27T02:30:00", berlin), ==,
                   parse_ok ("2024-10-27T00:30:00Z", NULL));
  /* Just around the gap of 2024-03-31 (02:00 CET -> 03:00 CEST). */
  g_assert_cmpint (parse_ok ("2024-03-31T01:59:59", berlin), ==,
                   parse_ok ("2024-03-31T00:59:59Z", NULL));
  g_assert_cmpint (parse_ok ("2024-03-31T03:00:00", berlin), ==,
                   parse_ok ("2024-03-31T01:00:00Z", NULL));
}

static void
test_gap (void)
{
  g_autoptr(GTimeZone) berlin = g_time_zone_new_identifier ("Europe/Berlin");
  g_autoptr(GError) error = NULL;
  gint64 ms = 7;

  g_assert_false (kt_instant_parse ("--from-datetime", "2024-03-31T02:30:00", berlin, &ms,
                                    &error));
  g_assert_error (error, KT_ERROR, KT_ERROR_USAGE);
  g_assert_nonnull (strstr (error->message, "--from-datetime: '2024-03-31T02:30:00' does not "
                                            "exist in the local time zone"));
  g_assert_cmpint (ms, ==, 7);
  /* With its offset it is a moment like any other. */
  g_assert_cmpint (parse_ok ("2024-03-31T02:30:00+01:00", berlin), ==,
                   parse_ok ("2024-03-31T01:30:00Z", NULL));
}

/* A local time a zone has twice (the clocks went back) is the first of
 * the two, the earlier instant, decided by the offsets from UTC; one the
 * zone skips is refused. Table-driven over zones whose daylight flag does
 * not say which came first. */
typedef struct
{
  const char *zone;
  const char *local;
  const char *utc;   /* the moment it must be; NULL: refused (a gap) */
} Repeated;

static void
test_repeated_hour (void)
{
  static const Repeated cases[] = {
    /* Berlin, 2024-10-27: 03:00 CEST (+2, daylight) back to 02:00 CET (+1). */
    { "Europe/Berlin", "2024-10-27T02:30:00", "2024-10-27T00:30:00Z" },
    { "Europe/Berlin", "2024-10-27T01:59:59", "2024-10-26T23:59:59Z" },
    { "Europe/Berlin", "2024-10-27T03:00:00", "2024-10-27T02:00:00Z" },
    { "Europe/Berlin", "2024-03-31T02:30:00", NULL },
    /* Dublin, 2024-10-27: 02:00 IST (+1) back to 01:00 GMT (+0). tzdata
     * flags GMT, the winter time, as the daylight one (a negative DST):
     * a rule "daylight first" takes the second 01:30, 01:30Z. */
    { "Europe/Dublin", "2024-10-27T01:30:00", "2024-10-27T00:30:00Z" },
    { "Europe/Dublin", "2024-10-27T01:00:00", "2024-10-27T00:00:00Z" },
    { "Europe/Dublin", "2024-10-27T00:59:59", "2024-10-26T23:59:59Z" },
    { "Europe/Dublin", "2024-10-27T02:00:00", "2024-10-27T02:00:00Z" },
    { "Europe/Dublin", "2024-07-01T12:00:00", "2024-07-01T11:00:00Z" },
    { "Europe/Dublin", "2024-01-15T12:00:00", "2024-01-15T12:00:00Z" },
    { "Europe/Dublin", "2024-03-31T01:30:00", NULL },
    /* Lord Howe, 2024-04-07: 02:00 (+11) back to 01:30 (+10:30), a
     * half-hour shift. */
    { "Australia/Lord_Howe", "2024-04-07T01:45:00", "2024-04-06T14:45:00Z" },
    { "Australia/Lord_Howe", "2024-04-07T01:30:00", "2024-04-06T14:30:00Z" },
    { "Australia/Lord_Howe", "2024-04-07T01:29:59", "2024-04-06T14:29:59Z" },
    { "Australia/Lord_Howe", "2024-04-07T02:00:00", "2024-04-06T15:30:00Z" },
    /* ...and forward on 2024-10-06: 02:00 (+10:30) to 02:30 (+11). */
    { "Australia/Lord_Howe", "2024-10-06T02:15:00", NULL },
    { "Australia/Lord_Howe", "2024-10-06T02:30:00", "2024-10-05T15:30:00Z" },
    /* Moscow, 2011-03-27: 02:00 (+3) to 03:00 (+4), both standard time,
     * kept all year since; 2014-10-26: 02:00 (+4) back to 01:00 (+3),
     * standard to standard again. */
    { "Europe/Moscow", "2011-03-27T02:30:00", NULL },
    { "Europe/Moscow", "2011-03-27T03:00:00", "2011-03-26T23:00:00Z" },
    { "Europe/Moscow", "2011-03-27T01:59:59", "2011-03-26T22:59:59Z" },
    { "Europe/Moscow", "2014-10-26T01:30:00", "2014-10-25T21:30:00Z" },
    { "Europe/Moscow", "2014-10-26T01:00:00", "2014-10-25T21:00:00Z" },
    { "Europe/Moscow", "2014-10-26T02:00:00", "2014-10-25T23:00:00Z" },
    { "Europe/Moscow", "2013-01-15T12:00:00", "2013-01-15T08:00:00Z" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      const Repeated *c = &cases[i];
      g_autoptr(GTimeZone) zone = g_time_zone_new_identifier (c->zone);
      g_autoptr(GError) error = NULL;
      gint64 ms = 7;
      gboolean ok;

      g_assert_nonnull (zone);
      ok = kt_instant_parse ("--to-datetime", c->local, zone, &ms, &error);
      if (c->utc == NULL)
        {
          if (ok)
            g_error ("%s %s: read as %" G_GINT64_FORMAT ", not refused", c->zone, c->local, ms);
          g_assert_error (error, KT_ERROR, KT_ERROR_USAGE);
          g_assert_nonnull (strstr (error->message, "does not exist in the local time zone"));
          continue;
        }
      if (!ok)
        g_error ("%s %s: %s", c->zone, c->local, error->message);
      if (ms != parse_ok (c->utc, NULL))
        {
          g_autofree char *got = kt_instant_format (ms);
          g_error ("%s %s: read as %s, not %s", c->zone, c->local, got, c->utc);
        }
    }
}

static void
test_refused (void)
{
  static const char *const bad[] = {
    "", "now", "1h", "-1h", "2024-05-01", "2024-05-01T", "2024-05-01T12", "2024-05-01T12:00:",
    "2024-5-01T12:00:00", "2024-05-01T12:00:00ZZ", "2024-05-01T12:00:00+2", "2024-05-01T12:00:00+24:00",
    "2024-05-01T12:00:00+02:60", "2024-05-01T12:00:00.", "2024-05-01T12:00:00.1234567890Z",
    "2024-05-01T12:00:00 Z", " 2024-05-01T12:00:00Z", "2024-05-01T12:00:00Z ",
    "2024-05-01X12:00:00", "1714564800000", "2024-05-01T12:00:00+02:00:00",
  };
  static const char *const impossible[] = {
    "2023-02-29T00:00:00Z", "2024-13-01T00:00:00Z", "2024-00-01T00:00:00Z", "2024-04-31T00:00:00Z",
    "2024-05-01T24:00:00Z", "2024-05-01T12:60:00Z", "2024-05-01T12:00:60Z", "0000-01-01T00:00:00Z",
  };

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(GError) error = NULL;
      gint64 ms;

      g_assert_false (kt_instant_parse ("--to-datetime", bad[i], NULL, &ms, &error));
      g_assert_error (error, KT_ERROR, KT_ERROR_USAGE);
      g_assert_true (g_str_has_prefix (error->message, "--to-datetime: expected an ISO 8601 "));
      g_assert_null (strchr (error->message, '\n'));
    }
  for (guint i = 0; i < G_N_ELEMENTS (impossible); i++)
    {
      g_autoptr(GError) error = NULL;
      gint64 ms;

      g_assert_false (kt_instant_parse ("--to-datetime", impossible[i], NULL, &ms, &error));
      g_assert_error (error, KT_ERROR, KT_ERROR_USAGE);
      g_assert_nonnull (strstr (error->message, "is no such date or time"));
    }
}

static void
test_format (void)
{
  static const char *const texts[] = {
    "2024-05-01T12:00:00.000Z", "1970-01-01T00:00:00.000Z", "1969-12-31T23:59:59.999Z",
    "2024-02-29T23:59:59.001Z", "9999-12-31T23:59:59.999Z", "1000-01-01T00:00:00.000Z",
  };

  for (guint i = 0; i < G_N_ELEMENTS (texts); i++)
    {
      g_autofree char *again = kt_instant_format (parse_ok (texts[i], NULL));
      g_assert_cmpstr (again, ==, texts[i]);
    }
  {
    g_autofree char *now = kt_instant_format (kt_instant_now ());
    g_assert_true (g_str_has_suffix (now, "Z"));
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/instant/offsets", test_offsets);
  g_test_add_func ("/instant/naive", test_naive);
  g_test_add_func ("/instant/gap", test_gap);
  g_test_add_func ("/instant/repeated-hour", test_repeated_hour);
  g_test_add_func ("/instant/refused", test_refused);
  g_test_add_func ("/instant/format", test_format);
  return g_test_run ();
}
