/* decimal.c - exact money arithmetic on scaled 64-bit integers.
 *
 * The parser reads the magnitude into a guint64 with overflow checks at
 * every digit, so a string of a million digits costs a million steps and
 * never wraps; the sign is applied last, which the symmetric range makes
 * safe. */
#include "decimal.h"

#include <string.h>

G_DEFINE_QUARK (kt-amount-error-quark, kt_amount_error)

/* DECIMAL(20,4)'s own bound is wider than ours: nothing we accept can be
 * refused by the column. */
G_STATIC_ASSERT (KT_AMOUNT_MAX / KT_AMOUNT_SCALE < G_GINT64_CONSTANT (10000000000000000));

/* ASCII only: "١" (an Arabic-Indic one) is not a digit of an amount. */
static inline gboolean
is_digit (char c)
{
  return c >= '0' && c <= '9';
}

/* @text for an error message: its first 40 bytes, anything but printable
 * ASCII as \xNN, so that a log line stays one valid line. */
static char *
quote (const char *text)
{
  GString *out = g_string_new ("\"");
  gsize i;

  for (i = 0; text[i] != '\0' && i < 40; i++)
    {
      guchar c = (guchar) text[i];
      if (c >= 0x20 && c < 0x7f && c != '\\' && c != '"')
        g_string_append_c (out, (char) c);
      else
        g_string_append_printf (out, "\\x%02x", c);
    }
  g_string_append (out, text[i] != '\0' ? "...\"" : "\"");
  return g_string_free (out, FALSE);
}

/* *@mag = *@mag * 10 + @digit, unless that passes KT_AMOUNT_MAX. */
static gboolean
push_digit (guint64 *mag, int digit)
{
  return !__builtin_mul_overflow (*mag, 10u, mag)
         && !__builtin_add_overflow (*mag, (guint64) digit, mag)
         && *mag <= (guint64) KT_AMOUNT_MAX;
}

gboolean
kt_amount_parse_bytes (const char *text, gsize len, KtAmount *out, KtAmountError *why)
{
  const char *p = text, *end = text + len, *int_start, *int_end;
  const char *frac_start = NULL, *frac_end = NULL;
  guint64 mag = 0;
  gboolean fits = TRUE;
  int decimals;

  g_return_val_if_fail (text != NULL || len == 0, FALSE);
  g_return_val_if_fail (out != NULL, FALSE);

  /* Syntax first, over the whole text: "1.23456x" is not a decimal at all,
   * which says more than "too many decimals". */
  if (p < end && *p == '-')
    p++;
  int_start = p;
  while (p < end && is_digit (*p))
    p++;
  int_end = p;
  if (p < end && *p == '.')
    {
      frac_start = ++p;
      while (p < end && is_digit (*p))
        p++;
      frac_end = p;
    }
  if (p != end || int_end == int_start || (frac_start != NULL && frac_end == frac_start))
    {
      if (why != NULL)
        *why = KT_AMOUNT_ERROR_SYNTAX;
      return FALSE;
    }

  decimals = frac_start != NULL ? (int) (frac_end - frac_start) : 0;
  if (decimals > KT_AMOUNT_DECIMALS)
    {
      if (why != NULL)
        *why = KT_AMOUNT_ERROR_PRECISION;
      return FALSE;
    }

  /* The integer digits, then the decimals padded to four: one number of
   * ten-thousandths. Leading zeros add nothing and never overflow; after
   * an overflow the rest is skipped. */
  for (const char *d = int_start; d < int_end && fits; d++)
    fits = push_digit (&mag, *d - '0');
  for (int i = 0; i < KT_AMOUNT_DECIMALS && fits; i++)
    fits = push_digit (&mag, i < decimals ? frac_start[i] - '0' : 0);
  if (!fits)
    {
      if (why != NULL)
        *why = KT_AMOUNT_ERROR_OVERFLOW;
      return FALSE;
    }

  *out = *text == '-' ? -(KtAmount) mag : (KtAmount) mag;
  return TRUE;
}

gboolean
kt_amount_parse (const char *text, KtAmount *out, GError **error)
{
  g_autofree char *quoted = NULL;
  KtAmountError why = KT_AMOUNT_ERROR_SYNTAX;

  g_return_val_if_fail (text != NULL, FALSE);
  g_return_val_if_fail (out != NULL, FALSE);

  if (kt_amount_parse_bytes (text, strlen (text), out, &why))
    return TRUE;
  if (*text == '\0')
    g_set_error_literal (error, KT_AMOUNT_ERROR, KT_AMOUNT_ERROR_SYNTAX, "amount is empty");
  else if (why == KT_AMOUNT_ERROR_SYNTAX)
    g_set_error (error, KT_AMOUNT_ERROR, why, "amount %s is not a decimal ([-]digits[.digits])",
                 (quoted = quote (text)));
  else if (why == KT_AMOUNT_ERROR_PRECISION)
    {
      const char *dot = strchr (text, '.');
      g_set_error (error, KT_AMOUNT_ERROR, why, "amount %s has too many decimals (%d, at most %d)",
                   (quoted = quote (text)), (int) strlen (dot + 1), KT_AMOUNT_DECIMALS);
    }
  else
    g_set_error (error, KT_AMOUNT_ERROR, why,
                 "amount %s overflows (at most 922337203685477.5807 either way)",
                 (quoted = quote (text)));
  return FALSE;
}

gboolean
kt_amount_add (KtAmount a, KtAmount b, KtAmount *out)
{
  KtAmount sum;

  g_return_val_if_fail (out != NULL, FALSE);

  /* G_MININT64 is the one gint64 outside the range: as an operand it is
   * already an overflow, and as a sum it would be one negation away. */
  if (a < KT_AMOUNT_MIN || b < KT_AMOUNT_MIN
      || __builtin_add_overflow (a, b, &sum) || sum < KT_AMOUNT_MIN)
    return FALSE;
  *out = sum;
  return TRUE;
}

void
kt_amount_format (KtAmount a, char buf[static 32])
{
  /* Through unsigned, so even G_MININT64 (never a valid amount) prints
   * instead of overflowing on negation. */
  guint64 mag = a < 0 ? (guint64) 0 - (guint64) a : (guint64) a;

  g_snprintf (buf, 32, "%s%" G_GUINT64_FORMAT ".%04u", a < 0 ? "-" : "",
              mag / (guint64) KT_AMOUNT_SCALE, (guint) (mag % (guint64) KT_AMOUNT_SCALE));
}
