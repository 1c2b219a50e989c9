/* decimal.h - exact money: amounts as scaled 64-bit integers.
 *
 * The ledger's amounts and balances are DECIMAL(20,4) in MySQL. Here they
 * are a gint64 counting ten-thousandths (1.0000 == 10000), so adding two of
 * them is exact and overflow is detected, never wrapped. Text in is the
 * plain decimal that JSON producers and MySQL both write; text out is what
 * MySQL prints for DECIMAL(20,4), so a test can compare our string with a
 * SELECT's. No floating point anywhere. */
#pragma once
#include <glib.h>

typedef gint64 KtAmount;

#define KT_AMOUNT_DECIMALS 4
#define KT_AMOUNT_SCALE    G_GINT64_CONSTANT (10000)  /* 1.0000 */

/* The largest magnitude: G_MAXINT64 ten-thousandths, 922337203685477.5807.
 * DECIMAL(20,4) goes to 9999999999999999.9999, further than a gint64 can,
 * so int64 is the bound that bites and anything in range fits the column.
 * The range is symmetric (-G_MAXINT64, not G_MININT64) so that negating or
 * printing an amount can never overflow. */
#define KT_AMOUNT_MAX G_MAXINT64
#define KT_AMOUNT_MIN (-G_MAXINT64)

/* Why a text is not an amount: the ledger counts bad messages by this. */
#define KT_AMOUNT_ERROR (kt_amount_error_quark ())

typedef enum
{
  KT_AMOUNT_ERROR_SYNTAX,     /* not [-]digits[.digits]: empty, "1e3", ".5", "+1" */
  KT_AMOUNT_ERROR_PRECISION,  /* more than 4 decimals, even if they are zeros */
  KT_AMOUNT_ERROR_OVERFLOW,   /* magnitude beyond KT_AMOUNT_MAX */
} KtAmountError;

GQuark   kt_amount_error_quark (void);

/* Parses @text, all of it: an optional '-', one or more ASCII digits
 * (leading zeros allowed), optionally '.' and 1 to 4 digits. Refused, with
 * a KT_AMOUNT_ERROR code checked in this order: anything else
 * (SYNTAX: empty, a leading '+', spaces, an exponent, ".5", "5."), more
 * than 4 decimals (PRECISION: never rounded, money does not round
 * silently), a magnitude beyond KT_AMOUNT_MAX (OVERFLOW). "-0" is 0.
 * *@out is set only on success. */
gboolean kt_amount_parse  (const char *text, KtAmount *out, GError **error);

/* The same rule over @len bytes (no NUL needed, a NUL inside is SYNTAX),
 * without a GError: for a hot path that only needs to know whether (the
 * count kinds' --sum fields). Returns the KtAmountError code through
 * *@why (may be NULL) when it fails. */
gboolean kt_amount_parse_bytes (const char *text, gsize len, KtAmount *out,
                                KtAmountError *why);

/* *@out = @a + @b, or FALSE (and *@out untouched) if the sum, or either
 * operand, is outside [KT_AMOUNT_MIN, KT_AMOUNT_MAX]. Never wraps. */
gboolean kt_amount_add    (KtAmount a, KtAmount b, KtAmount *out);

/* Writes @a as MySQL prints a DECIMAL(20,4): "-12.5000", "0.0000", always
 * 4 decimals, no '+', no leading zeros. kt_amount_parse() reads it back
 * to @a. At most 22 bytes with the NUL. */
void     kt_amount_format (KtAmount a, char buf[static 32]);
