/* test-decimal.c - exact money arithmetic, without Kafka or MySQL.
 *
 * Covers kt_amount_parse (every accepted shape, every refusal with its
 * code, the order of the checks, both limits), kt_amount_format (MySQL's
 * DECIMAL(20,4) text), the round trip both ways, and kt_amount_add at and
 * across the limits against an oracle that does not use the builtins. */
#include <string.h>
#include "decimal.h"

#define TOP KT_AMOUNT_MAX
#define BOTTOM KT_AMOUNT_MIN

/* ---- kt_amount_parse ------------------------------------------------------ */

typedef struct
{
  const char *text;
  KtAmount    value;
} GoodCase;

static const GoodCase good_cases[] = {
  { "0", 0 },
  { "0.0", 0 },
  { "0.0000", 0 },
  { "-0", 0 },
  { "-0.0000", 0 },  /* MySQL never prints it, but it is zero */
  { "1", 10000 },
  { "12.5", 125000 },
  { "-12.50", -125000 },
  { "-12.5000", -125000 },
  { "1.2345", 12345 },
  { "0.0001", 1 },
  { "-0.0001", -1 },
  { "0.9999", 9999 },
  { "007.5", 75000 },   /* leading zeros change nothing */
  { "00000000000000000000000000000000000000001", 10000 },
  { "123456789", G_GINT64_CONSTANT (1234567890000) },
  /* The limits: G_MAXINT64 ten-thousandths, either sign. */
  { "922337203685477.5807", TOP },
  { "-922337203685477.5807", BOTTOM },
  { "922337203685477", G_GINT64_CONSTANT (9223372036854770000) },
  { "000922337203685477.5807", TOP },
};

static void
test_parse_good (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (good_cases); i++)
    {
      g_autoptr(GError) error = NULL;
      KtAmount v = 42;

      g_test_message ("%s", good_cases[i].text);
      g_assert_true (kt_amount_parse (good_cases[i].text, &v, &error));
      g_assert_no_error (error);
      g_assert_cmpint (v, ==, good_cases[i].value);
    }
}

typedef struct
{
  const char   *text;
  KtAmountError code;
} BadCase;

static const BadCase bad_cases[] = {
  /* Not a decimal at all. */
  { "", KT_AMOUNT_ERROR_SYNTAX },
  { "-", KT_AMOUNT_ERROR_SYNTAX },
  { "+1", KT_AMOUNT_ERROR_SYNTAX },       /* no '+': MySQL never writes one */
  { "+0.5", KT_AMOUNT_ERROR_SYNTAX },
  { ".5", KT_AMOUNT_ERROR_SYNTAX },       /* a digit before the point */
  { "-.5", KT_AMOUNT_ERROR_SYNTAX },
  { "5.", KT_AMOUNT_ERROR_SYNTAX },       /* and one after it */
  { "-5.", KT_AMOUNT_ERROR_SYNTAX },
  { ".", KT_AMOUNT_ERROR_SYNTAX },
  { "1.2.3", KT_AMOUNT_ERROR_SYNTAX },
  { " 1", KT_AMOUNT_ERROR_SYNTAX },
  { "1 ", KT_AMOUNT_ERROR_SYNTAX },
  { "1\n", KT_AMOUNT_ERROR_SYNTAX },
  { "- 1", KT_AMOUNT_ERROR_SYNTAX },
  { "1e5", KT_AMOUNT_ERROR_SYNTAX },
  { "1E5", KT_AMOUNT_ERROR_SYNTAX },
  { "1.5e-2", KT_AMOUNT_ERROR_SYNTAX },
  { "0x10", KT_AMOUNT_ERROR_SYNTAX },
  { "1,5", KT_AMOUNT_ERROR_SYNTAX },
  { "1_000", KT_AMOUNT_ERROR_SYNTAX },
  { "--1", KT_AMOUNT_ERROR_SYNTAX },
  { "-+1", KT_AMOUNT_ERROR_SYNTAX },
  { "1-", KT_AMOUNT_ERROR_SYNTAX },
  { "abc", KT_AMOUNT_ERROR_SYNTAX },
  { "NaN", KT_AMOUNT_ERROR_SYNTAX },
  { "inf", KT_AMOUNT_ERROR_SYNTAX },
  { "-Infinity", KT_AMOUNT_ERROR_SYNTAX },
  { "\xd9\xa1", KT_AMOUNT_ERROR_SYNTAX }, /* ARABIC-INDIC DIGIT ONE */
  { "\xef\xbc\x91", KT_AMOUNT_ERROR_SYNTAX }, /* FULLWIDTH DIGIT ONE */
  { "12.5\xc2\xa0", KT_AMOUNT_ERROR_SYNTAX },
  { "1.-5", KT_AMOUNT_ERROR_SYNTAX },
  /* Syntax is checked before the decimals are counted. */
  { "1.23456x", KT_AMOUNT_ERROR_SYNTAX },
  /* Too many decimals, never rounded, not even zeros. */
  { "1.23456", KT_AMOUNT_ERROR_PRECISION },
  { "0.00001", KT_AMOUNT_ERROR_PRECISION },
  { "-0.00001", KT_AMOUNT_ERROR_PRECISION },
  { "1.00000", KT_AMOUNT_ERROR_PRECISION },
  /* Decimals are checked before the magnitude. */
  { "99999999999999999999.12345", KT_AMOUNT_ERROR_PRECISION },
  /* Overflow: one past each limit, DECIMAL(20,4)'s own limit, far beyond. */
  { "922337203685477.5808", KT_AMOUNT_ERROR_OVERFLOW },
  { "-922337203685477.5808", KT_AMOUNT_ERROR_OVERFLOW },  /* G_MININT64 */
  { "922337203685478", KT_AMOUNT_ERROR_OVERFLOW },
  { "9999999999999999.9999", KT_AMOUNT_ERROR_OVERFLOW },
  { "10000000000000000", KT_AMOUNT_ERROR_OVERFLOW },
  { "18446744073709551616", KT_AMOUNT_ERROR_OVERFLOW },  /* 2^64: no wrap to 0 */
  { "1844674407370955.1616", KT_AMOUNT_ERROR_OVERFLOW },
  { "-99999999999999999999999999999999999999", KT_AMOUNT_ERROR_OVERFLOW },
};

static void
test_parse_bad (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (bad_cases); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *shown = g_strescape (bad_cases[i].text, NULL);
      KtAmount v = 42;

      g_test_message ("\"%s\"", shown);
      g_assert_false (kt_amount_parse (bad_cases[i].text, &v, &error));
      g_assert_error (error, KT_AMOUNT_ERROR, (gint) bad_cases[i].code);
      g_assert_cmpint (v, ==, 42);  /* untouched */
    }
}

/* A million digits: linear, no wrap, one verdict. */
static void
test_parse_huge (void)
{
  gsize n = 1000000;
  g_autofree char *zeros = g_malloc (n + 3);
  g_autofree char *nines = g_malloc (n + 1);
  g_autoptr(GError) error = NULL;
  KtAmount v = 0;

  memset (zeros, '0', n);
  memcpy (zeros + n, "7", 2);
  g_assert_true (kt_amount_parse (zeros, &v, NULL));
  g_assert_cmpint (v, ==, 70000);

  memset (nines, '9', n);
  nines[n] = '\0';
  g_assert_false (kt_amount_parse (nines, &v, &error));
  g_assert_error (error, KT_AMOUNT_ERROR, KT_AMOUNT_ERROR_OVERFLOW);
}

/* The ledger turns the code into a reason, but a log line gets the
 * message: it must say what was wrong. */
static void
test_parse_messages (void)
{
  static const struct { const char *text; const char *needle; } cases[] = {
    { "", "empty" },
    { "1e5", "not a decimal" },
    { "1.23456", "too many decimals" },
    { "922337203685477.5808", "overflow" },
    /* The text is quoted safely: one printable line whatever it held. */
    { "1\n\xff", "\"1\\x0a\\xff\"" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;
      KtAmount v;

      g_assert_false (kt_amount_parse (cases[i].text, &v, &error));
      g_assert_nonnull (strstr (error->message, cases[i].needle));
    }
}

/* ---- kt_amount_format ----------------------------------------------------- */

typedef struct
{
  KtAmount    value;
  const char *text;
} FormatCase;

static const FormatCase format_cases[] = {
  { 0, "0.0000" },
  { 1, "0.0001" },
  { -1, "-0.0001" },
  { 9999, "0.9999" },
  { -9999, "-0.9999" },
  { 10000, "1.0000" },
  { 125000, "12.5000" },
  { -125000, "-12.5000" },
  { 12345, "1.2345" },
  { G_GINT64_CONSTANT (1234567890000), "123456789.0000" },
  { TOP, "922337203685477.5807" },
  { BOTTOM, "-922337203685477.5807" },
  /* Outside the range, but printing must not overflow either. */
  { G_MININT64, "-922337203685477.5808" },
};

static void
test_format (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (format_cases); i++)
    {
      char buf[32];

      memset (buf, 'x', sizeof buf);
      kt_amount_format (format_cases[i].value, buf);
      g_assert_cmpstr (buf, ==, format_cases[i].text);
    }
}

/* ---- round trips ------------------------------------------------------------ */

/* What MySQL prints for DECIMAL(20,4) reads back and prints the same. */
static void
test_round_trip_text (void)
{
  static const char *const mysql_says[] = {
    "0.0000", "-12.5000", "12.5000", "0.0001", "-0.0001", "1000000.0000",
    "922337203685477.5807", "-922337203685477.5807", "42.4242",
  };

  for (guint i = 0; i < G_N_ELEMENTS (mysql_says); i++)
    {
      KtAmount v;
      char buf[32];

      g_assert_true (kt_amount_parse (mysql_says[i], &v, NULL));
      kt_amount_format (v, buf);
      g_assert_cmpstr (buf, ==, mysql_says[i]);
    }
}

/* Every amount prints as text that parses back to it: the limits, their
 * neighbours, powers of ten, and random values of every magnitude. */
static void
test_round_trip_values (void)
{
  g_autoptr(GRand) rand = g_rand_new_with_seed (20170730);
  KtAmount fixed[] = { 0, 1, -1, 9999, 10000, -10000, TOP, TOP - 1, BOTTOM, BOTTOM + 1,
                       G_GINT64_CONSTANT (1000000000000000000), -G_GINT64_CONSTANT (999999999) };

  for (guint i = 0; i < G_N_ELEMENTS (fixed) + 20000; i++)
    {
      KtAmount v, back = 0;
      char buf[32];

      if (i < G_N_ELEMENTS (fixed))
        v = fixed[i];
      else
        {
          /* Uniform bits, then a random number of them kept: small values
           * as often as huge ones. */
          guint64 bits = ((guint64) g_rand_int (rand) << 32) | g_rand_int (rand);
          bits >>= g_rand_int_range (rand, 1, 64);
          v = g_rand_boolean (rand) ? -(KtAmount) bits : (KtAmount) bits;
        }
      kt_amount_format (v, buf);
      g_assert_cmpuint (strlen (buf), <, 22);
      /* What the DECIMAL(20,4) columns hold: 16 digits, a point, 4. Every
       * amount and balance ktally writes is such a value, so none can be
       * refused by a strict sql_mode. */
      g_assert_cmpuint (strcspn (buf + (buf[0] == '-'), "."), <=, 16);
      g_assert_cmpuint (strlen (strchr (buf, '.') + 1), ==, 4);
      g_assert_true (kt_amount_parse (buf, &back, NULL));
      g_assert_cmpint (back, ==, v);
    }
}

/* ---- kt_amount_add ----------------------------------------------------------- */

typedef struct
{
  KtAmount a, b;
  gboolean ok;
  KtAmount sum;
} AddCase;

static const AddCase add_cases[] = {
  { 1, 2, TRUE, 3 },
  { 125000, -125000, TRUE, 0 },
  { -1, -1, TRUE, -2 },
  { TOP, 0, TRUE, TOP },
  { TOP, -TOP, TRUE, 0 },
  { BOTTOM, 0, TRUE, BOTTOM },
  { TOP - 1, 1, TRUE, TOP },
  { BOTTOM + 1, -1, TRUE, BOTTOM },
  { TOP, 1, FALSE, 0 },
  { 1, TOP, FALSE, 0 },
  { TOP, TOP, FALSE, 0 },
  { BOTTOM, -1, FALSE, 0 },    /* would be G_MININT64: outside the range */
  { BOTTOM, BOTTOM, FALSE, 0 },
  { G_MININT64, 0, FALSE, 0 },  /* an operand outside the range */
  { 0, G_MININT64, FALSE, 0 },
  { G_MININT64, TOP, FALSE, 0 },
};

static void
test_add (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (add_cases); i++)
    {
      const AddCase *c = &add_cases[i];
      KtAmount out = 42;

      g_test_message ("%" G_GINT64_FORMAT " + %" G_GINT64_FORMAT, c->a, c->b);
      g_assert_cmpint (kt_amount_add (c->a, c->b, &out), ==, c->ok);
      g_assert_cmpint (out, ==, c->ok ? c->sum : 42);
    }
}

/* The textbook pre-check, no builtins: it must agree everywhere. */
static void
test_add_random (void)
{
  g_autoptr(GRand) rand = g_rand_new_with_seed (42);
  guint overflows = 0;

  for (guint i = 0; i < 200000; i++)
    {
      KtAmount v[2], out = 0;
      gboolean fits;

      for (int k = 0; k < 2; k++)
        {
          guint64 bits = ((guint64) g_rand_int (rand) << 32) | g_rand_int (rand);
          /* Half of them near the top, so that overflow is common. */
          bits >>= g_rand_boolean (rand) ? 1 : g_rand_int_range (rand, 1, 64);
          v[k] = g_rand_boolean (rand) ? -(KtAmount) bits : (KtAmount) bits;
        }
      fits = !((v[1] > 0 && v[0] > TOP - v[1]) || (v[1] < 0 && v[0] < BOTTOM - v[1]));
      g_assert_cmpint (kt_amount_add (v[0], v[1], &out), ==, fits);
      if (fits)
        g_assert_cmpint (out, ==, v[0] + v[1]);
      overflows += !fits;
    }
  g_assert_cmpuint (overflows, >, 10000);
}

/* The same rule over a length: no NUL needed, a NUL inside is no digit. */
static void
test_parse_bytes (void)
{
  KtAmount a = 7;
  KtAmountError why = KT_AMOUNT_ERROR_OVERFLOW;

  g_assert_true (kt_amount_parse_bytes ("12345", 3, &a, NULL));
  g_assert_cmpint (a, ==, 1230000);
  g_assert_true (kt_amount_parse_bytes ("-0.5;", 4, &a, &why));
  g_assert_cmpint (a, ==, -5000);
  g_assert_false (kt_amount_parse_bytes ("1\0002", 3, &a, &why));
  g_assert_cmpint (why, ==, KT_AMOUNT_ERROR_SYNTAX);
  g_assert_false (kt_amount_parse_bytes ("", 0, &a, &why));
  g_assert_cmpint (why, ==, KT_AMOUNT_ERROR_SYNTAX);
  g_assert_false (kt_amount_parse_bytes ("1.00001", 7, &a, &why));
  g_assert_cmpint (why, ==, KT_AMOUNT_ERROR_PRECISION);
  g_assert_false (kt_amount_parse_bytes ("922337203685477.5808", 20, &a, &why));
  g_assert_cmpint (why, ==, KT_AMOUNT_ERROR_OVERFLOW);
  g_assert_cmpint (a, ==, -5000);  /* untouched on failure */
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/decimal/parse/good", test_parse_good);
  g_test_add_func ("/decimal/parse/bytes", test_parse_bytes);
  g_test_add_func ("/decimal/parse/refused", test_parse_bad);
  g_test_add_func ("/decimal/parse/million-digits", test_parse_huge);
  g_test_add_func ("/decimal/parse/messages", test_parse_messages);
  g_test_add_func ("/decimal/format", test_format);
  g_test_add_func ("/decimal/round-trip/mysql-text", test_round_trip_text);
  g_test_add_func ("/decimal/round-trip/values", test_round_trip_values);
  g_test_add_func ("/decimal/add/cases", test_add);
  g_test_add_func ("/decimal/add/random", test_add_random);

  return g_test_run ();
}
