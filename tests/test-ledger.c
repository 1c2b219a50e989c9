/* test-ledger.c - the per-account ledger, without Kafka or MySQL.
 *
 * Covers kt_ledger_parse (every field, every reason a message is bad,
 * hostile bytes: NUL, invalid UTF-8, deep nesting, huge strings, random
 * mutations), the batch's bookkeeping (distinct accounts and txns, what
 * the database may load, bad counts and the sample), the rules on a hand
 * written batch, and the central property: kt_ledger_batch_apply() with 1,
 * 2, 3, 8 or 64 workers gives exactly what a plain loop over the messages
 * in batch order gives, on random batches built so that order matters
 * (few accounts, many debits, duplicates within the batch, across
 * accounts and from the database), with no account ever decided by two
 * threads; and that kt_ledger_batch_add_all(), which parses on several
 * threads, builds exactly the batch that adding one by one builds. */
#include <string.h>
#include "error.h"
#include "ledger.h"

#define TS "2017-07-30 14:09:08"

static char *
doc (const char *txn, const char *account, const char *amount)
{
  return g_strdup_printf ("{\"txn\": \"%s\", \"account\": \"%s\", \"amount\": \"%s\", "
                          "\"ts\": \"" TS "\"}", txn, account, amount);
}

/* ---- kt_ledger_parse: good ---------------------------------------------- */

typedef struct
{
  const char *json;
  const char *txn;
  const char *account;
  KtAmount    amount;
  const char *ts;
} GoodCase;

static const GoodCase good_cases[] = {
  { "{\"txn\": \"T-123\", \"account\": \"ACC-42\", \"amount\": \"-12.50\", "
    "\"ts\": \"2017-07-30 14:09:08\"}", "T-123", "ACC-42", -125000, "2017-07-30 14:09:08" },
  /* Any member order, white space anywhere JSON allows it. */
  { " \r\n\t{ \"ts\" : \"2017-07-30 14:09:08\" , \"amount\":\"1\",\"account\":\"A\","
    "\"txn\":\"T\" } \n", "T", "A", 10000, "2017-07-30 14:09:08" },
  /* Other members are ignored, whatever they hold. */
  { "{\"txn\": \"T-1\", \"account\": \"A\", \"amount\": \"0.0001\", \"ts\": \"2017-07-30 14:09:08\", "
    "\"note\": {\"x\": [1, 2.5e3, -0, true, false, null, \"s\"]}, \"n\": 1e400}",
    "T-1", "A", 1, "2017-07-30 14:09:08" },
  /* Escapes are decoded: the key is the decoded text. */
  { "{\"txn\": \"T\\u002d1\", \"account\": \"\\u00c5rhus\", \"amount\": \"5\", "
    "\"ts\": \"2017-07-30 14:09:08\"}", "T-1", "\xc3\x85rhus", 50000, "2017-07-30 14:09:08" },
  { "{\"txn\": \"a\\/b\", \"account\": \"\xf0\x9f\x92\xb0\", \"amount\": \"5\", "
    "\"ts\": \"2017-07-30 14:09:08\"}", "a/b", "\xf0\x9f\x92\xb0", 50000, "2017-07-30 14:09:08" },
  /* The limits of DATETIME and of the calendar. */
  { "{\"txn\": \"T\", \"account\": \"A\", \"amount\": \"922337203685477.5807\", "
    "\"ts\": \"9999-12-31 23:59:59\"}", "T", "A", KT_AMOUNT_MAX, "9999-12-31 23:59:59" },
  { "{\"txn\": \"T\", \"account\": \"A\", \"amount\": \"-922337203685477.5807\", "
    "\"ts\": \"1000-01-01 00:00:00\"}", "T", "A", KT_AMOUNT_MIN, "1000-01-01 00:00:00" },
  { "{\"txn\": \"T\", \"account\": \"A\", \"amount\": \"-0\", "
    "\"ts\": \"2016-02-29 12:00:00\"}", "T", "A", 0, "2016-02-29 12:00:00" },
};

static void
test_parse_good (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (good_cases); i++)
    {
      const GoodCase *c = &good_cases[i];
      g_auto(KtLedgerMessage) msg = { 0 };
      KtLedgerBad why = KT_LEDGER_N_BAD;

      g_test_message ("%s", c->json);
      g_assert_true (kt_ledger_parse (c->json, strlen (c->json), &msg, &why));
      g_assert_cmpint (why, ==, KT_LEDGER_N_BAD);  /* untouched */
      g_assert_cmpstr (msg.txn, ==, c->txn);
      g_assert_cmpstr (msg.account, ==, c->account);
      g_assert_cmpint (msg.amount, ==, c->amount);
      g_assert_cmpstr (msg.ts, ==, c->ts);
    }
}

/* 64 characters is the limit, in characters, not bytes. */
static void
test_parse_field_limits (void)
{
  g_autoptr(GString) ascii = g_string_new (NULL);
  g_autoptr(GString) wide = g_string_new (NULL);

  for (int i = 0; i < KT_LEDGER_FIELD_MAX; i++)
    {
      g_string_append_c (ascii, 'x');
      g_string_append (wide, "\xe2\x82\xac");  /* EURO SIGN, 3 bytes */
    }
  for (int round = 0; round < 2; round++)
    {
      g_autofree char *a = doc (ascii->str, wide->str, "1");
      g_autofree char *b = doc (wide->str, ascii->str, "1");
      g_auto(KtLedgerMessage) ma = { 0 };
      g_auto(KtLedgerMessage) mb = { 0 };
      KtLedgerBad why = KT_LEDGER_N_BAD;
      gboolean fits = round == 0;

      g_assert_cmpint (kt_ledger_parse (a, strlen (a), &ma, &why), ==, fits);
      g_assert_cmpint (kt_ledger_parse (b, strlen (b), &mb, &why), ==, fits);
      if (fits)
        {
          g_assert_cmpstr (ma.txn, ==, ascii->str);
          g_assert_cmpstr (ma.account, ==, wide->str);
          g_assert_cmpstr (mb.txn, ==, wide->str);
        }
      else
        g_assert_cmpint (why, ==, KT_LEDGER_BAD_FIELD_TOO_LONG);
      /* One more character each: 65. */
      g_string_append_c (ascii, 'x');
      g_string_append (wide, "\xe2\x82\xac");
    }
}

/* ---- kt_ledger_parse: bad ------------------------------------------------- */

typedef struct
{
  const char *json;
  gsize       len;  /* 0: strlen */
  KtLedgerBad why;
} BadCase;

#define GOOD_TAIL "\"account\": \"A\", \"amount\": \"1\", \"ts\": \"" TS "\"}"

static const BadCase bad_cases[] = {
  /* Not JSON: nothing, garbage, json-glib's leniencies, more than one text. */
  { "", 0, KT_LEDGER_BAD_NOT_JSON },
  { "   \n", 0, KT_LEDGER_BAD_NOT_JSON },
  { "{", 0, KT_LEDGER_BAD_NOT_JSON },
  { "nope", 0, KT_LEDGER_BAD_NOT_JSON },
  { "2017-07-30 14:09:08 ERROR not json", 0, KT_LEDGER_BAD_NOT_JSON },
  { "{'txn': 'T', 'account': 'A', 'amount': '1', 'ts': '" TS "'}", 0, KT_LEDGER_BAD_NOT_JSON },
  { "{/* c */ \"txn\": \"T\", " GOOD_TAIL, 0, KT_LEDGER_BAD_NOT_JSON },
  { "{\"txn\": \"T\", " GOOD_TAIL " // c", 0, KT_LEDGER_BAD_NOT_JSON },
  { "{\"txn\": \"T\", \"x\": 1,}", 0, KT_LEDGER_BAD_NOT_JSON },
  { "{txn: \"T\"}", 0, KT_LEDGER_BAD_NOT_JSON },
  { "{\"txn\": \"T\", " GOOD_TAIL " x", 0, KT_LEDGER_BAD_NOT_JSON },
  { "{\"txn\": \"T\", " GOOD_TAIL "{}", 0, KT_LEDGER_BAD_NOT_JSON },
  { "{\"txn\": \"T\", " GOOD_TAIL "\n{\"txn\": \"U\", " GOOD_TAIL, 0, KT_LEDGER_BAD_NOT_JSON },
  { "{\"txn\": \"T\", \"x\": 01, " GOOD_TAIL, 0, KT_LEDGER_BAD_NOT_JSON },
  { "{\"txn\": \"T\", \"x\": .5, " GOOD_TAIL, 0, KT_LEDGER_BAD_NOT_JSON },
  { "{\"txn\": \"T\", \"x\": 1., " GOOD_TAIL, 0, KT_LEDGER_BAD_NOT_JSON },
  { "{\"txn\": \"T\", \"x\": +1, " GOOD_TAIL, 0, KT_LEDGER_BAD_NOT_JSON },
  { "{\"txn\": \"T\", \"x\": NaN, " GOOD_TAIL, 0, KT_LEDGER_BAD_NOT_JSON },
  { "{\"txn\": \"T\", \"x\": tru, " GOOD_TAIL, 0, KT_LEDGER_BAD_NOT_JSON },
  { "{\"txn\": \"T\", \"x\": \"\\x41\", " GOOD_TAIL, 0, KT_LEDGER_BAD_NOT_JSON },
  { "{\"txn\": \"T\", \"x\": \"\\u12\", " GOOD_TAIL, 0, KT_LEDGER_BAD_NOT_JSON },
  { "{\"txn\": \"T\", \"x\": \"\\ud800\\u004\", " GOOD_TAIL, 0, KT_LEDGER_BAD_NOT_JSON },
  { "{\"txn\": \"T\", \"x\": \"\\ud800\\x0041\", " GOOD_TAIL, 0, KT_LEDGER_BAD_SURROGATE_ESCAPE },
  { "{\"txn\": \"T\", \"x\": \"tab\there\", " GOOD_TAIL, 0, KT_LEDGER_BAD_NOT_JSON },
  { "{\"txn\": \"T\\", 0, KT_LEDGER_BAD_NOT_JSON },
  /* Bytes that are not UTF-8, and a NUL byte: inside a string, outside. */
  { "{\"txn\": \"T\xff\", " GOOD_TAIL, 0, KT_LEDGER_BAD_NOT_JSON },
  { "{\"txn\": \"T\xc3\", " GOOD_TAIL, 0, KT_LEDGER_BAD_NOT_JSON },
  { "{\"txn\": \"T\xed\xa0\x80\", " GOOD_TAIL, 0, KT_LEDGER_BAD_NOT_JSON },  /* CESU surrogate */
  { "{\"txn\": \"T\xc0\xaf\", " GOOD_TAIL, 0, KT_LEDGER_BAD_NOT_JSON },      /* overlong '/' */
  { "{\"txn\": \"T\0U\", " GOOD_TAIL, sizeof ("{\"txn\": \"T\0U\", " GOOD_TAIL) - 1,
    KT_LEDGER_BAD_NOT_JSON },
  { "{\"txn\": \"T\", " GOOD_TAIL "\0", sizeof ("{\"txn\": \"T\", " GOOD_TAIL) , KT_LEDGER_BAD_NOT_JSON },
  { "\0{\"txn\": \"T\", " GOOD_TAIL, sizeof ("{\"txn\": \"T\", " GOOD_TAIL), KT_LEDGER_BAD_NOT_JSON },
  /* "\u0000": valid JSON, but json-glib would cut "T-1\u0000x" to "T-1". */
  { "{\"txn\": \"T-1\\u0000x\", " GOOD_TAIL, 0, KT_LEDGER_BAD_NUL_ESCAPE },
  { "{\"txn\": \"T\", \"account\": \"A\", \"amount\": \"1\\u00002\", \"ts\": \"" TS "\"}", 0,
    KT_LEDGER_BAD_NUL_ESCAPE },
  /* Not an object. */
  { "[]", 0, KT_LEDGER_BAD_NOT_OBJECT },
  { "[{\"txn\": \"T\", " GOOD_TAIL "]", 0, KT_LEDGER_BAD_NOT_OBJECT },
  { "\"T\"", 0, KT_LEDGER_BAD_NOT_OBJECT },
  { "42", 0, KT_LEDGER_BAD_NOT_OBJECT },
  { "-12.5", 0, KT_LEDGER_BAD_NOT_OBJECT },
  { "null", 0, KT_LEDGER_BAD_NOT_OBJECT },
  { "true", 0, KT_LEDGER_BAD_NOT_OBJECT },
  /* A member twice, however it is spelt: which one would count? */
  { "{\"txn\": \"T\", \"txn\": \"U\", " GOOD_TAIL, 0, KT_LEDGER_BAD_DUPLICATE_FIELD },
  { "{\"txn\": \"T\", \"amount\": \"1000\", " GOOD_TAIL, 0, KT_LEDGER_BAD_DUPLICATE_FIELD },
  { "{\"txn\": \"T\", \"\\u0061mount\": \"1000\", " GOOD_TAIL, 0, KT_LEDGER_BAD_DUPLICATE_FIELD },
  { "{\"txn\": \"T\", \"x\": 1, \"x\": 2, " GOOD_TAIL, 0, KT_LEDGER_BAD_DUPLICATE_FIELD },
  /* Missing fields, each of them. */
  { "{}", 0, KT_LEDGER_BAD_MISSING_FIELD },
  { "{" GOOD_TAIL, 0, KT_LEDGER_BAD_MISSING_FIELD },
  { "{\"txn\": \"T\", \"amount\": \"1\", \"ts\": \"" TS "\"}", 0, KT_LEDGER_BAD_MISSING_FIELD },
  { "{\"txn\": \"T\", \"account\": \"A\", \"ts\": \"" TS "\"}", 0, KT_LEDGER_BAD_MISSING_FIELD },
  { "{\"txn\": \"T\", \"account\": \"A\", \"amount\": \"1\"}", 0, KT_LEDGER_BAD_MISSING_FIELD },
  { "{\"TXN\": \"T\", " GOOD_TAIL, 0, KT_LEDGER_BAD_MISSING_FIELD },
  { "{\"note\": {\"txn\": \"T\"}, " GOOD_TAIL, 0, KT_LEDGER_BAD_MISSING_FIELD },
  /* Wrong types: above all, an amount that is a JSON number. */
  { "{\"txn\": \"T\", \"account\": \"A\", \"amount\": -12.5, \"ts\": \"" TS "\"}", 0,
    KT_LEDGER_BAD_WRONG_TYPE },
  { "{\"txn\": \"T\", \"account\": \"A\", \"amount\": 12, \"ts\": \"" TS "\"}", 0,
    KT_LEDGER_BAD_WRONG_TYPE },
  { "{\"txn\": \"T\", \"account\": \"A\", \"amount\": null, \"ts\": \"" TS "\"}", 0,
    KT_LEDGER_BAD_WRONG_TYPE },
  { "{\"txn\": \"T\", \"account\": \"A\", \"amount\": [\"1\"], \"ts\": \"" TS "\"}", 0,
    KT_LEDGER_BAD_WRONG_TYPE },
  { "{\"txn\": \"T\", \"account\": \"A\", \"amount\": true, \"ts\": \"" TS "\"}", 0,
    KT_LEDGER_BAD_WRONG_TYPE },
  { "{\"txn\": 123, " GOOD_TAIL, 0, KT_LEDGER_BAD_WRONG_TYPE },
  { "{\"txn\": \"T\", \"account\": {\"id\": \"A\"}, \"amount\": \"1\", \"ts\": \"" TS "\"}", 0,
    KT_LEDGER_BAD_WRONG_TYPE },
  { "{\"txn\": \"T\", \"account\": \"A\", \"amount\": \"1\", \"ts\": 1501423748}", 0,
    KT_LEDGER_BAD_WRONG_TYPE },
  /* Keys: empty, control characters (C0, DEL, C1). */
  { "{\"txn\": \"\", " GOOD_TAIL, 0, KT_LEDGER_BAD_FIELD_EMPTY },
  { "{\"txn\": \"T\", \"account\": \"\", \"amount\": \"1\", \"ts\": \"" TS "\"}", 0,
    KT_LEDGER_BAD_FIELD_EMPTY },
  { "{\"txn\": \"T\\n\", " GOOD_TAIL, 0, KT_LEDGER_BAD_FIELD_CONTROL },
  { "{\"txn\": \"T\\u001b[31m\", " GOOD_TAIL, 0, KT_LEDGER_BAD_FIELD_CONTROL },
  { "{\"txn\": \"T\x7f\", " GOOD_TAIL, 0, KT_LEDGER_BAD_FIELD_CONTROL },
  { "{\"txn\": \"T\", \"account\": \"A\xc2\x85\", \"amount\": \"1\", \"ts\": \"" TS "\"}", 0,
    KT_LEDGER_BAD_FIELD_CONTROL },
  /* Amounts: each refusal of kt_amount_parse, with its own reason. */
  { "{\"txn\": \"T\", \"account\": \"A\", \"amount\": \"12,50\", \"ts\": \"" TS "\"}", 0,
    KT_LEDGER_BAD_AMOUNT_SYNTAX },
  { "{\"txn\": \"T\", \"account\": \"A\", \"amount\": \"1e3\", \"ts\": \"" TS "\"}", 0,
    KT_LEDGER_BAD_AMOUNT_SYNTAX },
  { "{\"txn\": \"T\", \"account\": \"A\", \"amount\": \"\", \"ts\": \"" TS "\"}", 0,
    KT_LEDGER_BAD_AMOUNT_SYNTAX },
  { "{\"txn\": \"T\", \"account\": \"A\", \"amount\": \" 1\", \"ts\": \"" TS "\"}", 0,
    KT_LEDGER_BAD_AMOUNT_SYNTAX },
  { "{\"txn\": \"T\", \"account\": \"A\", \"amount\": \"+1\", \"ts\": \"" TS "\"}", 0,
    KT_LEDGER_BAD_AMOUNT_SYNTAX },
  { "{\"txn\": \"T\", \"account\": \"A\", \"amount\": \"1.23456\", \"ts\": \"" TS "\"}", 0,
    KT_LEDGER_BAD_AMOUNT_DECIMALS },
  { "{\"txn\": \"T\", \"account\": \"A\", \"amount\": \"922337203685477.5808\", \"ts\": \"" TS "\"}", 0,
    KT_LEDGER_BAD_AMOUNT_OVERFLOW },
  { "{\"txn\": \"T\", \"account\": \"A\", \"amount\": \"99999999999999999999\", \"ts\": \"" TS "\"}", 0,
    KT_LEDGER_BAD_AMOUNT_OVERFLOW },
  /* Timestamps: shape, calendar, DATETIME's range. */
  { "{\"txn\": \"T\", \"account\": \"A\", \"amount\": \"1\", \"ts\": \"2017-07-30T14:09:08\"}", 0,
    KT_LEDGER_BAD_TIMESTAMP },
  { "{\"txn\": \"T\", \"account\": \"A\", \"amount\": \"1\", \"ts\": \"2017-07-30 14:09\"}", 0,
    KT_LEDGER_BAD_TIMESTAMP },
  { "{\"txn\": \"T\", \"account\": \"A\", \"amount\": \"1\", \"ts\": \"2017-07-30 14:09:08.5\"}", 0,
    KT_LEDGER_BAD_TIMESTAMP },
  { "{\"txn\": \"T\", \"account\": \"A\", \"amount\": \"1\", \"ts\": \"2017-02-29 14:09:08\"}", 0,
    KT_LEDGER_BAD_TIMESTAMP },
  { "{\"txn\": \"T\", \"account\": \"A\", \"amount\": \"1\", \"ts\": \"2017-13-01 14:09:08\"}", 0,
    KT_LEDGER_BAD_TIMESTAMP },
  { "{\"txn\": \"T\", \"account\": \"A\", \"amount\": \"1\", \"ts\": \"2017-07-30 24:00:00\"}", 0,
    KT_LEDGER_BAD_TIMESTAMP },
  { "{\"txn\": \"T\", \"account\": \"A\", \"amount\": \"1\", \"ts\": \"2017-07-30 23:59:60\"}", 0,
    KT_LEDGER_BAD_TIMESTAMP },
  { "{\"txn\": \"T\", \"account\": \"A\", \"amount\": \"1\", \"ts\": \"0999-12-31 23:59:59\"}", 0,
    KT_LEDGER_BAD_TIMESTAMP },
  { "{\"txn\": \"T\", \"account\": \"A\", \"amount\": \"1\", \"ts\": \"2017-07-3a 14:09:08\"}", 0,
    KT_LEDGER_BAD_TIMESTAMP },
  { "{\"txn\": \"T\", \"account\": \"A\", \"amount\": \"1\", \"ts\": \"2017-07-30 -1:09:08\"}", 0,
    KT_LEDGER_BAD_TIMESTAMP },
  { "{\"txn\": \"T\", \"account\": \"A\", \"amount\": \"1\", \"ts\": \"\"}", 0,
    KT_LEDGER_BAD_TIMESTAMP },
  /* The first problem wins: txn before account before amount before ts. */
  { "{\"txn\": 1, \"account\": 2, \"amount\": 3, \"ts\": 4}", 0, KT_LEDGER_BAD_WRONG_TYPE },
  { "{\"txn\": \"\", \"account\": 2}", 0, KT_LEDGER_BAD_FIELD_EMPTY },
  { "{\"txn\": \"T\", \"account\": \"A\", \"amount\": \"1.23456\", \"ts\": \"x\"}", 0,
    KT_LEDGER_BAD_AMOUNT_DECIMALS },
};

/* ---- kt_ledger_parse: what the columns hold -------------------------------- */

/* Issue 11 item 9 for the ledger, and issue 17's lone surrogates: every
 * field reaches SQL (txn, account: VARCHAR(64) utf8mb4; amount and the
 * balances: DECIMAL(20,4); ts: DATETIME), so whatever the column cannot
 * hold is a bad message, counted by its reason, never a failed batch. The
 * last value each column holds is good. */
#define TAIL_TS(ts) "\"amount\": \"1\", \"ts\": \"" ts "\"}"
#define PAIR "\\ud83d\\ude00"   /* U+1F600, 4 bytes in UTF-8 */
#define PAIR8 PAIR PAIR PAIR PAIR PAIR PAIR PAIR PAIR
#define PAIR64 PAIR8 PAIR8 PAIR8 PAIR8 PAIR8 PAIR8 PAIR8 PAIR8

typedef struct
{
  const char *json;
  gboolean    good;
  KtLedgerBad why;
  gsize       account_bytes;  /* good: the account's length in bytes */
} ColumnCase;

static const ColumnCase column_cases[] = {
  /* ts: DATETIME's range, and no leap second (log lines count one). */
  { "{\"txn\": \"T\", \"account\": \"A\", " TAIL_TS ("9999-12-31 23:59:59"), TRUE, 0, 1 },
  { "{\"txn\": \"T\", \"account\": \"A\", " TAIL_TS ("1000-01-01 00:00:00"), TRUE, 0, 1 },
  { "{\"txn\": \"T\", \"account\": \"A\", " TAIL_TS ("2016-12-31 23:59:60"), FALSE,
    KT_LEDGER_BAD_TIMESTAMP, 0 },
  { "{\"txn\": \"T\", \"account\": \"A\", " TAIL_TS ("9999-12-31 23:59:60"), FALSE,
    KT_LEDGER_BAD_TIMESTAMP, 0 },
  { "{\"txn\": \"T\", \"account\": \"A\", " TAIL_TS ("10000-01-01 00:00:00"), FALSE,
    KT_LEDGER_BAD_TIMESTAMP, 0 },
  { "{\"txn\": \"T\", \"account\": \"A\", " TAIL_TS ("0999-12-31 23:59:59"), FALSE,
    KT_LEDGER_BAD_TIMESTAMP, 0 },
  { "{\"txn\": \"T\", \"account\": \"A\", " TAIL_TS ("0000-00-00 00:00:00"), FALSE,
    KT_LEDGER_BAD_TIMESTAMP, 0 },
  { "{\"txn\": \"T\", \"account\": \"A\", " TAIL_TS ("9999-12-31 23:59:59Z"), FALSE,
    KT_LEDGER_BAD_TIMESTAMP, 0 },
  /* account: 64 characters of 4 bytes each fit, 65 do not. */
  { "{\"txn\": \"T\", \"account\": \"" PAIR64 "\", " TAIL_TS ("2017-07-30 14:09:08"), TRUE, 0, 256 },
  { "{\"txn\": \"T\", \"account\": \"" PAIR64 PAIR "\", " TAIL_TS ("2017-07-30 14:09:08"), FALSE,
    KT_LEDGER_BAD_FIELD_TOO_LONG, 0 },
  { "{\"txn\": \"" PAIR64 "x\", \"account\": \"A\", " TAIL_TS ("2017-07-30 14:09:08"), FALSE,
    KT_LEDGER_BAD_FIELD_TOO_LONG, 0 },
  /* Surrogate escapes: only a high-low pair is a character. */
  { "{\"txn\": \"T\", \"account\": \"\\ud800x\", " TAIL_TS ("2017-07-30 14:09:08"), FALSE,
    KT_LEDGER_BAD_SURROGATE_ESCAPE, 0 },
  { "{\"txn\": \"T\", \"account\": \"\\ud800\", " TAIL_TS ("2017-07-30 14:09:08"), FALSE,
    KT_LEDGER_BAD_SURROGATE_ESCAPE, 0 },
  { "{\"txn\": \"T\", \"account\": \"\\udc00\", " TAIL_TS ("2017-07-30 14:09:08"), FALSE,
    KT_LEDGER_BAD_SURROGATE_ESCAPE, 0 },
  { "{\"txn\": \"T\", \"account\": \"x\\uDFFF\", " TAIL_TS ("2017-07-30 14:09:08"), FALSE,
    KT_LEDGER_BAD_SURROGATE_ESCAPE, 0 },
  { "{\"txn\": \"T\", \"account\": \"\\ude00\\ud83d\", " TAIL_TS ("2017-07-30 14:09:08"), FALSE,
    KT_LEDGER_BAD_SURROGATE_ESCAPE, 0 },
  { "{\"txn\": \"T\", \"account\": \"\\ud800\\ud800\", " TAIL_TS ("2017-07-30 14:09:08"), FALSE,
    KT_LEDGER_BAD_SURROGATE_ESCAPE, 0 },
  { "{\"txn\": \"T\", \"account\": \"\\ud800\\u0041\", " TAIL_TS ("2017-07-30 14:09:08"), FALSE,
    KT_LEDGER_BAD_SURROGATE_ESCAPE, 0 },
  { "{\"txn\": \"T\", \"account\": \"\\ud800\\n\", " TAIL_TS ("2017-07-30 14:09:08"), FALSE,
    KT_LEDGER_BAD_SURROGATE_ESCAPE, 0 },
  { "{\"txn\": \"T\\ud800x\", \"account\": \"A\", " TAIL_TS ("2017-07-30 14:09:08"), FALSE,
    KT_LEDGER_BAD_SURROGATE_ESCAPE, 0 },
  /* Also in an ignored member or a name: json-glib would misread the text. */
  { "{\"txn\": \"T\", \"note\": \"\\udbff\", \"account\": \"A\", " TAIL_TS ("2017-07-30 14:09:08"),
    FALSE, KT_LEDGER_BAD_SURROGATE_ESCAPE, 0 },
  { "{\"\\ud800\": 1, \"txn\": \"T\", \"account\": \"A\", " TAIL_TS ("2017-07-30 14:09:08"),
    FALSE, KT_LEDGER_BAD_SURROGATE_ESCAPE, 0 },
  { "{\"txn\": \"T\", \"account\": \"\\uD83D\\uDE00\", " TAIL_TS ("2017-07-30 14:09:08"), TRUE, 0, 4 },
  { "{\"txn\": \"T\", \"account\": \"\\udbff\\udfff\", " TAIL_TS ("2017-07-30 14:09:08"), TRUE, 0, 4 },
  /* NUL, escaped or raw: a C string (and the log) would cut there. */
  { "{\"txn\": \"T\", \"account\": \"A\\u0000B\", " TAIL_TS ("2017-07-30 14:09:08"), FALSE,
    KT_LEDGER_BAD_NUL_ESCAPE, 0 },
  /* amount: the int64 bound, inside DECIMAL(20,4)'s, is the one that bites. */
  { "{\"txn\": \"T\", \"account\": \"A\", \"amount\": \"9999999999999999.9999\", \"ts\": \"" TS "\"}",
    FALSE, KT_LEDGER_BAD_AMOUNT_OVERFLOW, 0 },
  { "{\"txn\": \"T\", \"account\": \"A\", \"amount\": \"-922337203685477.5808\", \"ts\": \"" TS "\"}",
    FALSE, KT_LEDGER_BAD_AMOUNT_OVERFLOW, 0 },
  { "{\"txn\": \"T\", \"account\": \"A\", \"amount\": \"0.00001\", \"ts\": \"" TS "\"}",
    FALSE, KT_LEDGER_BAD_AMOUNT_DECIMALS, 0 },
};

static void
test_parse_columns (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (column_cases); i++)
    {
      const ColumnCase *c = &column_cases[i];
      g_auto(KtLedgerMessage) msg = { 0 };
      KtLedgerBad why = KT_LEDGER_N_BAD;

      g_test_message ("%s", c->json);
      g_assert_cmpint (kt_ledger_parse (c->json, strlen (c->json), &msg, &why), ==, c->good);
      if (c->good)
        {
          g_assert_true (g_utf8_validate (msg.account, -1, NULL));
          g_assert_true (g_utf8_validate (msg.txn, -1, NULL));
          g_assert_cmpuint (strlen (msg.account), ==, c->account_bytes);
          g_assert_cmpint (g_utf8_strlen (msg.account, -1), <=, KT_LEDGER_FIELD_MAX);
        }
      else
        g_assert_cmpstr (kt_ledger_bad_to_string (why), ==, kt_ledger_bad_to_string (c->why));
    }
}

static void
check_bad (const char *json, gsize len, KtLedgerBad want)
{
  KtLedgerMessage msg = { 0 };
  KtLedgerBad why = KT_LEDGER_N_BAD;

  g_assert_false (kt_ledger_parse (json, len, &msg, &why));
  g_assert_cmpstr (kt_ledger_bad_to_string (why), ==, kt_ledger_bad_to_string (want));
  g_assert_null (msg.txn);
  g_assert_null (msg.account);
}

static void
test_parse_bad (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (bad_cases); i++)
    {
      const BadCase *c = &bad_cases[i];
      g_autofree char *shown = g_strescape (c->json, NULL);

      g_test_message ("%s", shown);
      check_bad (c->json, c->len ? c->len : strlen (c->json), c->why);
    }
}

/* Nesting: json-glib recurses, so depth is refused before it looks. A
 * million levels must be an answer, not a crash. */
static void
test_parse_deep (void)
{
  static const gsize depths[] = { KT_LEDGER_DEPTH_MAX + 1, 1000, 1000000 };

  for (guint i = 0; i < G_N_ELEMENTS (depths); i++)
    {
      gsize n = depths[i];
      g_autoptr(GString) arrays = g_string_new (NULL);
      g_autoptr(GString) objects = g_string_new (NULL);

      for (gsize d = 0; d < n; d++)
        {
          g_string_append_c (arrays, '[');
          g_string_append (objects, "{\"a\":");
        }
      check_bad (arrays->str, arrays->len, KT_LEDGER_BAD_TOO_DEEP);
      check_bad (objects->str, objects->len, KT_LEDGER_BAD_TOO_DEEP);
      for (gsize d = 0; d < n; d++)
        g_string_append_c (arrays, ']');
      check_bad (arrays->str, arrays->len, KT_LEDGER_BAD_TOO_DEEP);
    }

  /* Exactly the limit is fine, in an ignored member. */
  {
    g_autoptr(GString) json = g_string_new ("{\"txn\": \"T\", \"deep\": ");
    g_auto(KtLedgerMessage) msg = { 0 };
    KtLedgerBad why;

    for (int d = 1; d < KT_LEDGER_DEPTH_MAX; d++)
      g_string_append_c (json, '[');
    for (int d = 1; d < KT_LEDGER_DEPTH_MAX; d++)
      g_string_append_c (json, ']');
    g_string_append (json, ", " GOOD_TAIL);
    g_assert_true (kt_ledger_parse (json->str, json->len, &msg, &why));
    g_assert_cmpstr (msg.txn, ==, "T");
  }
}

/* Huge strings: a 4 MB txn is too long (without walking it twice), a 4 MB
 * ignored member is fine. */
static void
test_parse_huge (void)
{
  gsize n = 4 * 1024 * 1024;
  g_autofree char *big = g_malloc (n + 1);
  g_autofree char *as_txn = NULL, *as_note = NULL, *as_amount = NULL;
  g_auto(KtLedgerMessage) msg = { 0 };
  KtLedgerBad why;

  memset (big, 'x', n);
  big[n] = '\0';
  as_txn = doc (big, "A", "1");
  check_bad (as_txn, strlen (as_txn), KT_LEDGER_BAD_FIELD_TOO_LONG);

  as_note = g_strdup_printf ("{\"note\": \"%s\", \"txn\": \"T\", " GOOD_TAIL, big);
  g_assert_true (kt_ledger_parse (as_note, strlen (as_note), &msg, &why));
  g_assert_cmpint (msg.amount, ==, 10000);

  memset (big, '7', n);
  as_amount = doc ("T", "A", big);
  check_bad (as_amount, strlen (as_amount), KT_LEDGER_BAD_AMOUNT_OVERFLOW);
}

/* Random damage to good documents: every answer is an answer. Under the
 * sanitizers this is where a stray read would show. */
static void
test_parse_mutations (void)
{
  g_autoptr(GRand) rand = g_rand_new_with_seed (8);
  g_autofree char *base = doc ("T-123", "ACC-42", "-12.50");
  gsize base_len = strlen (base);
  guint good = 0, bad = 0;

  for (guint i = 0; i < 20000; i++)
    {
      g_autoptr(GString) bytes = g_string_new_len (base, (gssize) base_len);
      g_auto(KtLedgerMessage) msg = { 0 };
      KtLedgerBad why = KT_LEDGER_N_BAD;
      guint edits = (guint) g_rand_int_range (rand, 1, 4);

      for (guint k = 0; k < edits && bytes->len > 0; k++)
        {
          gsize at = (gsize) g_rand_int_range (rand, 0, (gint32) bytes->len);
          char b = (char) g_rand_int_range (rand, 0, 256);

          switch (g_rand_int_range (rand, 0, 4))
            {
            case 0:
              bytes->str[at] = b;
              break;
            case 1:
              g_string_erase (bytes, (gssize) at, 1);
              break;
            case 2:
              g_string_insert_c (bytes, (gssize) at, b);
              break;
            default:
              g_string_truncate (bytes, at);
              break;
            }
        }
      if (kt_ledger_parse (bytes->str, bytes->len, &msg, &why))
        {
          g_assert_cmpuint (strlen (msg.txn), >, 0);
          g_assert_cmpuint (strlen (msg.account), >, 0);
          g_assert_cmpuint (strlen (msg.ts), ==, 19);
          good++;
        }
      else
        {
          g_assert_cmpint (why, <, KT_LEDGER_N_BAD);
          bad++;
        }
    }
  g_assert_cmpuint (good, >, 0);
  g_assert_cmpuint (bad, >, 0);
}

static void
test_reason_names (void)
{
  g_autoptr(GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);

  for (int i = 0; i < KT_LEDGER_N_BAD; i++)
    {
      const char *name = kt_ledger_bad_to_string ((KtLedgerBad) i);
      g_assert_nonnull (name);
      g_assert_false (g_hash_table_contains (seen, name));
      g_hash_table_add (seen, (gpointer) name);
    }
  g_assert_cmpstr (kt_ledger_bad_to_string (KT_LEDGER_BAD_AMOUNT_DECIMALS), ==, "too many decimals");
  g_assert_cmpstr (kt_ledger_bad_to_string (KT_LEDGER_BAD_AMOUNT_OVERFLOW), ==, "overflow");
  g_assert_cmpstr (kt_ledger_reject_to_string (KT_LEDGER_REJECT_INSUFFICIENT_FUNDS), ==,
                   "insufficient funds");
  g_assert_cmpstr (kt_ledger_reject_to_string (KT_LEDGER_REJECT_OVERFLOW), ==, "overflow");
  g_assert_cmpstr (kt_ledger_bad_to_string (KT_LEDGER_BAD_SURROGATE_ESCAPE), ==,
                   "lone surrogate escape");
}

/* ---- the batch: bookkeeping ----------------------------------------------- */

static void
add_doc (KtLedgerBatch *batch, gint32 partition, gint64 offset, const char *txn,
         const char *account, const char *amount)
{
  g_autofree char *json = doc (txn, account, amount);
  g_assert_true (kt_ledger_batch_add (batch, partition, offset, json, strlen (json)));
}

static void
test_batch_free_null (void)
{
  kt_ledger_batch_free (NULL);
  kt_ledger_batch_free (kt_ledger_batch_new ());
  {
    /* Half-used: added, loaded, never applied. */
    g_autoptr(KtLedgerBatch) batch = kt_ledger_batch_new ();
    add_doc (batch, 0, 0, "T", "A", "1");
    g_assert_true (kt_ledger_batch_set_balance (batch, "A", 5, NULL));
  }
}

static void
test_batch_empty (void)
{
  static const guint workers[] = { 1, 8 };

  for (guint i = 0; i < G_N_ELEMENTS (workers); i++)
    {
      g_autoptr(KtLedgerBatch) batch = kt_ledger_batch_new ();
      g_autoptr(GPtrArray) accounts = kt_ledger_batch_accounts (batch);
      g_autoptr(GPtrArray) txns = kt_ledger_batch_txns (batch);
      KtLedgerCounts counts;

      g_assert_cmpuint (accounts->len, ==, 0);
      g_assert_cmpuint (txns->len, ==, 0);
      g_assert_true (kt_ledger_batch_apply (batch, workers[i], NULL));
      g_assert_cmpuint (kt_ledger_batch_applied (batch)->len, ==, 0);
      g_assert_cmpuint (kt_ledger_batch_rejected (batch)->len, ==, 0);
      g_assert_cmpuint (kt_ledger_batch_balances (batch)->len, ==, 0);
      kt_ledger_batch_counts (batch, &counts);
      g_assert_cmpuint (counts.messages, ==, 0);
      g_assert_false (kt_ledger_batch_bad_sample (batch, NULL, NULL, NULL, NULL));
    }
}

static void
test_batch_keys (void)
{
  g_autoptr(KtLedgerBatch) batch = kt_ledger_batch_new ();
  g_autoptr(GPtrArray) accounts = NULL;
  g_autoptr(GPtrArray) txns = NULL;
  g_autoptr(GError) error = NULL;
  static const char *const want_accounts[] = { "ACC-1", "ACC-10", "ACC-2", "acc-1" };
  static const char *const want_txns[] = { "T-1", "T-2", "T-3" };

  add_doc (batch, 0, 0, "T-2", "ACC-2", "1");
  add_doc (batch, 1, 0, "T-1", "ACC-10", "1");
  add_doc (batch, 0, 1, "T-3", "acc-1", "1");   /* case matters: another account */
  add_doc (batch, 0, 2, "T-1", "ACC-1", "1");   /* a txn twice is listed once */
  add_doc (batch, 1, 1, "T-2", "ACC-2", "-1");
  /* A bad message's fields are not keys. */
  g_assert_false (kt_ledger_batch_add (batch, 1, 2, "{\"txn\": \"T-9\"}", 14));

  accounts = kt_ledger_batch_accounts (batch);
  g_assert_cmpuint (accounts->len, ==, G_N_ELEMENTS (want_accounts));
  for (guint i = 0; i < accounts->len; i++)
    g_assert_cmpstr (accounts->pdata[i], ==, want_accounts[i]);
  txns = kt_ledger_batch_txns (batch);
  g_assert_cmpuint (txns->len, ==, G_N_ELEMENTS (want_txns));
  for (guint i = 0; i < txns->len; i++)
    g_assert_cmpstr (txns->pdata[i], ==, want_txns[i]);

  /* The database may only answer for the batch's own keys. */
  g_assert_true (kt_ledger_batch_set_balance (batch, "ACC-1", 10000, &error));
  g_assert_no_error (error);
  g_assert_false (kt_ledger_batch_set_balance (batch, "ACC-1", 20000, &error));
  g_assert_error (error, KT_ERROR, KT_ERROR_INTERNAL);
  g_clear_error (&error);
  g_assert_false (kt_ledger_batch_set_balance (batch, "ACC-1 ", 10000, &error));
  g_assert_error (error, KT_ERROR, KT_ERROR_INTERNAL);
  g_assert_nonnull (strstr (error->message, "ACC-1 "));
  g_clear_error (&error);
  g_assert_false (kt_ledger_batch_set_balance (batch, "T-9", 10000, &error));
  g_assert_error (error, KT_ERROR, KT_ERROR_INTERNAL);
  g_clear_error (&error);

  g_assert_true (kt_ledger_batch_mark_applied (batch, "T-3", &error));
  g_assert_true (kt_ledger_batch_mark_applied (batch, "T-3", &error));
  g_assert_no_error (error);
  g_assert_false (kt_ledger_batch_mark_applied (batch, "T-9", &error));
  g_assert_error (error, KT_ERROR, KT_ERROR_INTERNAL);
}

/* Offsets go forward within a partition: anything else is the caller's
 * bug, refused without changing the batch. */
static void
test_batch_offset_order (void)
{
  g_autoptr(KtLedgerBatch) batch = kt_ledger_batch_new ();
  g_autofree char *json = doc ("T-2", "A", "1");
  KtLedgerCounts counts;

  add_doc (batch, 0, 10, "T-1", "A", "1");
  add_doc (batch, 1, 3, "T-3", "A", "1");     /* another partition: its own order */
  g_test_expect_message ("ktally", G_LOG_LEVEL_CRITICAL, "*assertion*offset*failed*");
  g_assert_false (kt_ledger_batch_add (batch, 0, 10, json, strlen (json)));
  g_test_assert_expected_messages ();
  g_test_expect_message ("ktally", G_LOG_LEVEL_CRITICAL, "*assertion*offset*failed*");
  g_assert_false (kt_ledger_batch_add (batch, 0, 9, json, strlen (json)));
  g_test_assert_expected_messages ();
  add_doc (batch, 0, 11, "T-4", "A", "1");

  kt_ledger_batch_counts (batch, &counts);
  g_assert_cmpuint (counts.messages, ==, 3);
}

static void
test_batch_bad_counts (void)
{
  g_autoptr(KtLedgerBatch) batch = kt_ledger_batch_new ();
  static const char nul_value[] = "{\"txn\": \"T\0\xff\", \"x\\\\\": 1}";
  g_autoptr(GString) long_value = g_string_new ("{\"txn\": 1, \"pad\": \"");
  const char *number = "{\"txn\": \"T-2\", \"account\": \"A\", \"amount\": -12.5, \"ts\": \"" TS "\"}";
  const char *text;
  KtLedgerCounts counts;
  KtLedgerBad why;
  gint32 partition;
  gint64 offset;

  add_doc (batch, 0, 0, "T-1", "A", "5");
  g_assert_false (kt_ledger_batch_add (batch, 3, 17, nul_value, sizeof nul_value - 1));
  g_assert_false (kt_ledger_batch_add (batch, 0, 1, number, strlen (number)));
  g_assert_false (kt_ledger_batch_add (batch, 0, 2, "", 0));
  g_assert_false (kt_ledger_batch_add (batch, 0, 3, NULL, 0));
  for (int i = 0; i < 200; i++)
    g_string_append_c (long_value, 'y');
  g_string_append (long_value, "\"}");
  g_assert_false (kt_ledger_batch_add (batch, 0, 4, long_value->str, long_value->len));
  add_doc (batch, 0, 5, "T-2", "A", "-1");  /* T-2's bad message did not claim it */

  kt_ledger_batch_counts (batch, &counts);
  g_assert_cmpuint (counts.messages, ==, 7);
  g_assert_cmpuint (counts.bad, ==, 5);
  g_assert_cmpuint (counts.bad_by_reason[KT_LEDGER_BAD_NOT_JSON], ==, 3);
  g_assert_cmpuint (counts.bad_by_reason[KT_LEDGER_BAD_WRONG_TYPE], ==, 2);
  {
    g_autofree char *reasons = kt_ledger_counts_bad_reasons (&counts);
    KtLedgerCounts none = { 0 };
    g_autofree char *empty = kt_ledger_counts_bad_reasons (&none);

    g_assert_cmpstr (reasons, ==, "3 not JSON, 2 wrong type");
    g_assert_cmpstr (empty, ==, "");
  }

  /* The sample is the first bad one, printable whatever it held. */
  g_assert_true (kt_ledger_batch_bad_sample (batch, &partition, &offset, &why, &text));
  g_assert_cmpint (partition, ==, 3);
  g_assert_cmpint (offset, ==, 17);
  g_assert_cmpint (why, ==, KT_LEDGER_BAD_NOT_JSON);
  g_assert_cmpstr (text, ==, "{\"txn\": \"T\\x00\\xff\", \"x\\\\\\\\\": 1}");

  g_assert_true (kt_ledger_batch_apply (batch, 2, NULL));
  kt_ledger_batch_counts (batch, &counts);
  g_assert_cmpuint (counts.applied, ==, 2);
  g_assert_cmpuint (counts.duplicates, ==, 0);
  g_assert_cmpuint (counts.rejected, ==, 0);
  g_assert_cmpuint (counts.bad, ==, 5);
}

static void
test_batch_sample_truncated (void)
{
  g_autoptr(KtLedgerBatch) batch = kt_ledger_batch_new ();
  g_autoptr(GString) value = g_string_new ("[");
  const char *text;

  for (int i = 0; i < 500; i++)
    g_string_append (value, "1,");
  g_string_append (value, "]");
  g_assert_false (kt_ledger_batch_add (batch, 0, 0, value->str, value->len));
  g_assert_true (kt_ledger_batch_bad_sample (batch, NULL, NULL, NULL, &text));
  g_assert_cmpuint (strlen (text), ==, 123);
  g_assert_true (g_str_has_suffix (text, ",1,1..."));
}

/* ---- the batch: the rules, by hand ---------------------------------------- */

typedef struct
{
  gint32      partition;
  gint64      offset;
  const char *txn;
  const char *account;
  const char *amount;
  /* What happens to it. */
  char        fate;      /* 'a'pplied, 'r'ejected, 'd'uplicate */
  KtLedgerReject reason;
  const char *balance;   /* after it, for applied and rejected */
} RuleStep;

#define NEAR_MAX "922337203685477.5806"

static const RuleStep rule_steps[] = {
  { 0, 10, "T-1", "ACC-A", "-30", 'a', 0, "70.0000" },
  { 0, 11, "T-2", "ACC-A", "-80", 'r', KT_LEDGER_REJECT_INSUFFICIENT_FUNDS, "70.0000" },
  { 1, 5, "T-3", "ACC-B", "5.5", 'a', 0, "5.5000" },
  /* T-1 again, for another account: the first in batch order won. */
  { 1, 6, "T-1", "ACC-B", "1", 'd', 0, NULL },
  /* A rejected txn is decided too: the same txn cannot succeed later. */
  { 0, 12, "T-2", "ACC-A", "10", 'd', 0, NULL },
  /* Decided by an earlier batch. */
  { 0, 13, "T-OLD", "ACC-A", "1", 'd', 0, NULL },
  { 1, 7, "T-4", "ACC-B", "-5.5", 'a', 0, "0.0000" },
  /* Down to exactly zero is allowed, one ten-thousandth below is not. */
  { 0, 14, "T-5", "ACC-A", "-70", 'a', 0, "0.0000" },
  { 0, 15, "T-6", "ACC-A", "-0.0001", 'r', KT_LEDGER_REJECT_INSUFFICIENT_FUNDS, "0.0000" },
  /* Overflow at the top, then the last ten-thousandth that fits. */
  { 2, 0, "T-7", "ACC-MAX", "0.0002", 'r', KT_LEDGER_REJECT_OVERFLOW, NEAR_MAX },
  { 2, 1, "T-8", "ACC-MAX", "0.0001", 'a', 0, "922337203685477.5807" },
  { 2, 2, "T-9", "ACC-MAX", "922337203685477.5807", 'r', KT_LEDGER_REJECT_OVERFLOW,
    "922337203685477.5807" },
  /* A debit from a balance the database holds negative: still refused. */
  { 2, 3, "T-10", "ACC-NEG", "-1", 'r', KT_LEDGER_REJECT_INSUFFICIENT_FUNDS, "-10.0000" },
  { 2, 4, "T-11", "ACC-NEG", "-922337203685477.5807", 'r', KT_LEDGER_REJECT_INSUFFICIENT_FUNDS,
    "-10.0000" },
  { 2, 5, "T-12", "ACC-NEG", "4", 'a', 0, "-6.0000" },
  /* A new account netting to zero is still listed; a zero amount applies. */
  { 1, 8, "T-13", "ACC-NET", "1", 'a', 0, "1.0000" },
  { 1, 9, "T-14", "ACC-NET", "-1", 'a', 0, "0.0000" },
  { 1, 10, "T-15", "ACC-ZERO", "0", 'a', 0, "0.0000" },
  /* An account whose every message is a duplicate changes nothing. */
  { 1, 11, "T-3", "ACC-DUP", "100", 'd', 0, NULL },
  /* Within one partition, the same txn twice. */
  { 0, 16, "T-16", "ACC-A", "3", 'a', 0, "3.0000" },
  { 0, 17, "T-16", "ACC-A", "3", 'd', 0, NULL },
};

typedef struct
{
  const char *account;
  const char *before;
  const char *after;
  gboolean    is_new;
} RuleBalance;

/* Ascending by account; ACC-DUP is absent. */
static const RuleBalance rule_balances[] = {
  { "ACC-A", "100.0000", "3.0000", FALSE },
  { "ACC-B", "0.0000", "0.0000", TRUE },
  { "ACC-MAX", NEAR_MAX, "922337203685477.5807", FALSE },
  { "ACC-NEG", "-10.0000", "-6.0000", FALSE },
  { "ACC-NET", "0.0000", "0.0000", TRUE },
  { "ACC-ZERO", "0.0000", "0.0000", TRUE },
};

static KtAmount
amount_of (const char *text)
{
  KtAmount v = 0;
  g_assert_true (kt_amount_parse (text, &v, NULL));
  return v;
}

static void
test_batch_rules (gconstpointer data)
{
  guint workers = GPOINTER_TO_UINT (data);
  g_autoptr(KtLedgerBatch) batch = kt_ledger_batch_new ();
  const GArray *applied, *rejected, *balances;
  guint ai = 0, ri = 0, dups = 0;
  KtLedgerCounts counts;

  for (guint i = 0; i < G_N_ELEMENTS (rule_steps); i++)
    add_doc (batch, rule_steps[i].partition, rule_steps[i].offset, rule_steps[i].txn,
             rule_steps[i].account, rule_steps[i].amount);
  g_assert_true (kt_ledger_batch_set_balance (batch, "ACC-A", amount_of ("100"), NULL));
  g_assert_true (kt_ledger_batch_set_balance (batch, "ACC-MAX", amount_of (NEAR_MAX), NULL));
  g_assert_true (kt_ledger_batch_set_balance (batch, "ACC-NEG", amount_of ("-10"), NULL));
  g_assert_true (kt_ledger_batch_mark_applied (batch, "T-OLD", NULL));
  g_assert_true (kt_ledger_batch_apply (batch, workers, NULL));

  applied = kt_ledger_batch_applied (batch);
  rejected = kt_ledger_batch_rejected (batch);
  for (guint i = 0; i < G_N_ELEMENTS (rule_steps); i++)
    {
      const RuleStep *s = &rule_steps[i];
      const KtLedgerEntry *e;
      char buf[32];

      g_test_message ("%s %s %s", s->txn, s->account, s->amount);
      if (s->fate == 'd')
        {
          dups++;
          continue;
        }
      e = s->fate == 'a' ? &g_array_index (applied, KtLedgerEntry, ai++)
                         : &g_array_index (rejected, KtLedgerEntry, ri++);
      g_assert_cmpstr (e->txn, ==, s->txn);
      g_assert_cmpstr (e->account, ==, s->account);
      g_assert_cmpint (e->amount, ==, amount_of (s->amount));
      g_assert_cmpint (e->partition, ==, s->partition);
      g_assert_cmpint (e->offset, ==, s->offset);
      g_assert_cmpstr (e->ts, ==, TS);
      g_assert_cmpint (e->reason, ==, s->reason);
      kt_amount_format (e->balance, buf);
      g_assert_cmpstr (buf, ==, s->balance);
    }
  g_assert_cmpuint (applied->len, ==, ai);
  g_assert_cmpuint (rejected->len, ==, ri);

  balances = kt_ledger_batch_balances (batch);
  g_assert_cmpuint (balances->len, ==, G_N_ELEMENTS (rule_balances));
  for (guint i = 0; i < balances->len; i++)
    {
      const KtLedgerBalance *b = &g_array_index (balances, KtLedgerBalance, i);
      char before[32], after[32];

      kt_amount_format (b->before, before);
      kt_amount_format (b->after, after);
      g_assert_cmpstr (b->account, ==, rule_balances[i].account);
      g_assert_cmpstr (before, ==, rule_balances[i].before);
      g_assert_cmpstr (after, ==, rule_balances[i].after);
      g_assert_cmpint (b->is_new, ==, rule_balances[i].is_new);
    }

  kt_ledger_batch_counts (batch, &counts);
  g_assert_cmpuint (counts.messages, ==, G_N_ELEMENTS (rule_steps));
  g_assert_cmpuint (counts.applied, ==, ai);
  g_assert_cmpuint (counts.rejected, ==, ri);
  g_assert_cmpuint (counts.duplicates, ==, dups);
  g_assert_cmpuint (counts.bad, ==, 0);
}

/* ---- the batch: against a sequential oracle -------------------------------- */

typedef struct
{
  gint32   partition;
  gint64   offset;
  char    *txn;
  char    *account;
  KtAmount amount;
  char    *json;
  gsize    len;
  KtLedgerBad bad;   /* KT_LEDGER_N_BAD: a good message */
} Msg;

static void
msg_clear (Msg *m)
{
  g_free (m->txn);
  g_free (m->account);
  g_free (m->json);
}

/* What the database holds before the batch. */
typedef struct
{
  GHashTable *balances;  /* account -> KtAmount* */
  GHashTable *decided;   /* txn set */
} Db;

static void
db_clear (Db *db)
{
  g_clear_pointer (&db->balances, g_hash_table_unref);
  g_clear_pointer (&db->decided, g_hash_table_unref);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Db, db_clear)

static void
db_init (Db *db)
{
  db->balances = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  db->decided = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
}

static void
db_set (Db *db, const char *account, KtAmount balance)
{
  g_hash_table_insert (db->balances, g_strdup (account), g_memdup2 (&balance, sizeof balance));
}

/* An amount as a producer might write it: 4 decimals, fewer, or none. */
static char *
amount_text (GRand *rand, KtAmount v)
{
  char buf[32];
  gsize len;

  kt_amount_format (v, buf);
  len = strlen (buf);
  if (g_rand_boolean (rand))
    {
      while (buf[len - 1] == '0' && buf[len - 2] != '.')
        buf[--len] = '\0';
      if (g_rand_boolean (rand) && buf[len - 1] == '0' && buf[len - 2] == '.')
        buf[len - 2] = '\0';
    }
  return g_strdup (buf);
}

/* A batch where order matters: a handful of accounts, more debits than
 * the credits cover, txns reused within the batch (often for another
 * account) and already decided in the database, bad messages among them,
 * three partitions interleaved at random. */
static GArray *
make_batch (guint32 seed, guint n, Db *db)
{
  g_autoptr(GRand) rand = g_rand_new_with_seed (seed);
  GArray *msgs = g_array_new (FALSE, TRUE, sizeof (Msg));
  static const char *const accounts[] = { "ACC-0", "ACC-1", "ACC-2", "ACC-3", "ACC-8",
                                          "ACC-16", "RICH", "NEG", "\xc3\x85rhus" };
  gint64 next_offset[3] = { 0, 1000, 5 };
  guint next_txn = 0;

  g_array_set_clear_func (msgs, (GDestroyNotify) msg_clear);
  db_init (db);
  db_set (db, "ACC-1", 50 * KT_AMOUNT_SCALE);
  db_set (db, "ACC-3", 1);
  db_set (db, "RICH", KT_AMOUNT_MAX - 500 * KT_AMOUNT_SCALE);  /* credits overflow */
  db_set (db, "NEG", -20 * KT_AMOUNT_SCALE);

  for (guint i = 0; i < n; i++)
    {
      Msg m = { 0 };
      gint32 p = g_rand_int_range (rand, 0, 3);
      guint dice = (guint) g_rand_int_range (rand, 0, 100);
      KtAmount mag = g_rand_int_range (rand, 0, 100 * KT_AMOUNT_SCALE);
      g_autofree char *amount = NULL;

      m.partition = p;
      /* Gaps in the offsets too: compacted topics and transaction
       * markers leave them. */
      m.offset = next_offset[p];
      next_offset[p] += g_rand_int_range (rand, 1, 3);
      m.account = g_strdup (accounts[g_rand_int_range (rand, 0, G_N_ELEMENTS (accounts))]);
      m.amount = g_rand_int_range (rand, 0, 100) < 55 ? -mag : mag;
      if (g_rand_int_range (rand, 0, 50) == 0)
        m.amount = g_rand_boolean (rand) ? KT_AMOUNT_MAX : KT_AMOUNT_MIN;
      if (dice < 10 && i > 0)
        {
          /* A txn seen earlier in this batch, for any account. */
          const Msg *earlier = &g_array_index (msgs, Msg, g_rand_int_range (rand, 0, (gint32) i));
          m.txn = g_strdup (earlier->txn);
        }
      else
        m.txn = g_strdup_printf ("T-%u-%u", seed, next_txn++);
      if (dice >= 10 && dice < 14)
        g_hash_table_add (db->decided, g_strdup (m.txn));

      amount = amount_text (rand, m.amount);
      m.bad = KT_LEDGER_N_BAD;
      if (dice >= 97)
        {
          /* A bad message: its txn is not claimed by it. */
          m.bad = dice == 97 ? KT_LEDGER_BAD_WRONG_TYPE : KT_LEDGER_BAD_AMOUNT_DECIMALS;
          m.json = dice == 97
            ? g_strdup_printf ("{\"txn\": \"%s\", \"account\": \"%s\", \"amount\": %s, "
                               "\"ts\": \"" TS "\"}", m.txn, m.account, amount)
            : g_strdup_printf ("{\"txn\": \"%s\", \"account\": \"%s\", \"amount\": \"1.00001\", "
                               "\"ts\": \"" TS "\"}", m.txn, m.account);
        }
      else
        m.json = doc (m.txn, m.account, amount);
      m.len = strlen (m.json);
      g_array_append_val (msgs, m);
    }
  return msgs;
}

/* The specification, as a loop: one message after the other. */
typedef struct
{
  GArray     *applied;   /* KtLedgerEntry, strings borrowed from the Msgs */
  GArray     *rejected;
  GHashTable *balances;  /* account -> KtAmount* (only accounts touched) */
  guint64     duplicates;
  guint64     bad;
} Oracle;

static void
oracle_clear (Oracle *o)
{
  g_clear_pointer (&o->applied, g_array_unref);
  g_clear_pointer (&o->rejected, g_array_unref);
  g_clear_pointer (&o->balances, g_hash_table_unref);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Oracle, oracle_clear)

static void
oracle_run (const GArray *msgs, const Db *db, Oracle *o)
{
  g_autoptr(GHashTable) balance = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, g_free);
  g_autoptr(GHashTable) decided = g_hash_table_new (g_str_hash, g_str_equal);
  GHashTableIter iter;
  gpointer key;

  o->applied = g_array_new (FALSE, FALSE, sizeof (KtLedgerEntry));
  o->rejected = g_array_new (FALSE, FALSE, sizeof (KtLedgerEntry));
  o->balances = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, g_free);
  g_hash_table_iter_init (&iter, db->decided);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    g_hash_table_add (decided, key);

  for (guint i = 0; i < msgs->len; i++)
    {
      const Msg *m = &g_array_index (msgs, Msg, i);
      KtLedgerEntry e = { m->txn, m->account, TS, m->amount, 0, m->partition, m->offset,
                          KT_LEDGER_REJECT_NONE };
      KtAmount *b;

      if (m->bad != KT_LEDGER_N_BAD)
        {
          o->bad++;
          continue;
        }
      if (g_hash_table_contains (decided, m->txn))
        {
          o->duplicates++;
          continue;
        }
      g_hash_table_add (decided, m->txn);
      b = g_hash_table_lookup (balance, m->account);
      if (b == NULL)
        {
          KtAmount *from_db = g_hash_table_lookup (db->balances, m->account);
          b = g_new0 (KtAmount, 1);
          *b = from_db != NULL ? *from_db : 0;
          g_hash_table_insert (balance, m->account, b);
        }
      /* Written without kt_amount_add, on purpose. */
      if (m->amount < 0 && *b < -m->amount)
        e.reason = KT_LEDGER_REJECT_INSUFFICIENT_FUNDS;
      else if (m->amount > 0 && *b > KT_AMOUNT_MAX - m->amount)
        e.reason = KT_LEDGER_REJECT_OVERFLOW;
      else
        {
          *b += m->amount;
          g_hash_table_insert (o->balances, m->account, g_memdup2 (b, sizeof *b));
        }
      e.balance = *b;
      g_array_append_val (e.reason == KT_LEDGER_REJECT_NONE ? o->applied : o->rejected, e);
    }
}

/* Which thread decided each account's messages, from the trace hook. */
/* GRecMutex, not GMutex: on Linux GMutex is a bare futex that
 * ThreadSanitizer cannot see, GRecMutex a pthread mutex that it can. */
typedef struct
{
  GRecMutex   lock;
  GHashTable *owner;    /* account -> GThread* */
  GHashTable *threads;  /* set of GThread* */
  guint       calls;
  gboolean    shared;   /* an account seen on two threads */
} Trace;

static void
on_trace (const char *account, gpointer user_data)
{
  Trace *t = user_data;
  GThread *self = g_thread_self ();
  GThread *owner;

  g_rec_mutex_lock (&t->lock);
  owner = g_hash_table_lookup (t->owner, account);
  if (owner == NULL)
    g_hash_table_insert (t->owner, (gpointer) account, self);
  else if (owner != self)
    t->shared = TRUE;
  g_hash_table_add (t->threads, self);
  t->calls++;
  g_rec_mutex_unlock (&t->lock);
}

static void
check_entries (const GArray *got, const GArray *want)
{
  g_assert_cmpuint (got->len, ==, want->len);
  for (guint i = 0; i < want->len; i++)
    {
      const KtLedgerEntry *g = &g_array_index (got, KtLedgerEntry, i);
      const KtLedgerEntry *w = &g_array_index (want, KtLedgerEntry, i);

      g_assert_cmpstr (g->txn, ==, w->txn);
      g_assert_cmpstr (g->account, ==, w->account);
      g_assert_cmpstr (g->ts, ==, w->ts);
      g_assert_cmpint (g->amount, ==, w->amount);
      g_assert_cmpint (g->balance, ==, w->balance);
      g_assert_cmpint (g->partition, ==, w->partition);
      g_assert_cmpint (g->offset, ==, w->offset);
      g_assert_cmpint (g->reason, ==, w->reason);
    }
}

/* Builds the batch the way the sink will: add, ask for the keys, load the
 * database's answers for exactly those, apply. */
static KtLedgerBatch *
load_and_apply (const GArray *msgs, const Db *db, guint workers, Trace *trace)
{
  g_autoptr(KtLedgerBatch) batch = kt_ledger_batch_new ();
  g_autoptr(GPtrArray) accounts = NULL;
  g_autoptr(GPtrArray) txns = NULL;
  g_autoptr(GError) error = NULL;

  for (guint i = 0; i < msgs->len; i++)
    {
      const Msg *m = &g_array_index (msgs, Msg, i);
      g_assert_cmpint (kt_ledger_batch_add (batch, m->partition, m->offset, m->json, m->len),
                       ==, m->bad == KT_LEDGER_N_BAD);
    }
  accounts = kt_ledger_batch_accounts (batch);
  for (guint i = 0; i < accounts->len; i++)
    {
      KtAmount *b = g_hash_table_lookup (db->balances, accounts->pdata[i]);
      if (b != NULL)
        g_assert_true (kt_ledger_batch_set_balance (batch, accounts->pdata[i], *b, &error));
    }
  txns = kt_ledger_batch_txns (batch);
  for (guint i = 0; i < txns->len; i++)
    if (g_hash_table_contains (db->decided, txns->pdata[i]))
      g_assert_true (kt_ledger_batch_mark_applied (batch, txns->pdata[i], &error));
  if (trace != NULL)
    kt_ledger_batch_set_trace (batch, on_trace, trace);
  g_assert_true (kt_ledger_batch_apply (batch, workers, &error));
  g_assert_no_error (error);
  return g_steal_pointer (&batch);
}

static void
check_against_oracle (guint32 seed, guint n, guint workers)
{
  g_auto(Db) db = { 0 };
  g_autoptr(GArray) msgs = make_batch (seed, n, &db);
  g_auto(Oracle) oracle = { 0 };
  g_autoptr(KtLedgerBatch) batch = NULL;
  Trace trace = { 0 };
  const GArray *balances;
  KtLedgerCounts counts;
  guint64 bad = 0;

  oracle_run (msgs, &db, &oracle);
  /* The batch must be one where order matters, or the test proves little. */
  g_assert_cmpuint (oracle.rejected->len, >, n / 20);
  g_assert_cmpuint (oracle.duplicates, >, n / 20);

  g_rec_mutex_init (&trace.lock);
  trace.owner = g_hash_table_new (g_str_hash, g_str_equal);
  trace.threads = g_hash_table_new (g_direct_hash, g_direct_equal);
  batch = load_and_apply (msgs, &db, workers, &trace);

  /* One thread per account (checked first: sharing would explain any
   * difference below), and with several workers the accounts really
   * were spread. */
  g_assert_false (trace.shared);
  g_assert_cmpuint (trace.calls, ==, oracle.applied->len + oracle.rejected->len);
  if (workers == 1)
    g_assert_cmpuint (g_hash_table_size (trace.threads), ==, 1);
  else
    g_assert_cmpuint (g_hash_table_size (trace.threads), >, 1);
  g_assert_cmpuint (g_hash_table_size (trace.threads), <=, workers);

  check_entries (kt_ledger_batch_applied (batch), oracle.applied);
  check_entries (kt_ledger_batch_rejected (batch), oracle.rejected);

  balances = kt_ledger_batch_balances (batch);
  g_assert_cmpuint (balances->len, ==, g_hash_table_size (oracle.balances));
  for (guint i = 0; i < balances->len; i++)
    {
      const KtLedgerBalance *b = &g_array_index (balances, KtLedgerBalance, i);
      KtAmount *want = g_hash_table_lookup (oracle.balances, b->account);
      KtAmount *before = g_hash_table_lookup (db.balances, b->account);

      g_assert_nonnull (want);
      g_assert_cmpint (b->after, ==, *want);
      g_assert_cmpint (b->before, ==, before != NULL ? *before : 0);
      g_assert_cmpint (b->is_new, ==, before == NULL);
      if (i > 0)
        g_assert_cmpint (strcmp (g_array_index (balances, KtLedgerBalance, i - 1).account,
                                 b->account), <, 0);
    }

  kt_ledger_batch_counts (batch, &counts);
  for (int r = 0; r < KT_LEDGER_N_BAD; r++)
    bad += counts.bad_by_reason[r];
  g_assert_cmpuint (counts.messages, ==, n);
  g_assert_cmpuint (counts.applied, ==, oracle.applied->len);
  g_assert_cmpuint (counts.rejected, ==, oracle.rejected->len);
  g_assert_cmpuint (counts.duplicates, ==, oracle.duplicates);
  g_assert_cmpuint (counts.bad, ==, oracle.bad);
  g_assert_cmpuint (bad, ==, oracle.bad);
  g_assert_cmpuint (counts.messages, ==,
                    counts.applied + counts.rejected + counts.duplicates + counts.bad);


  g_hash_table_unref (trace.owner);
  g_hash_table_unref (trace.threads);
  g_rec_mutex_clear (&trace.lock);
}

static void
test_batch_oracle (gconstpointer data)
{
  guint workers = GPOINTER_TO_UINT (data);

  for (guint32 seed = 1; seed <= 8; seed++)
    check_against_oracle (seed, 5000, workers);
}

/* Replaying a committed batch: the sink wrote the balances and recorded
 * every applied and rejected txn, so the same messages now change
 * nothing. And the same batch from the same database state gives the
 * same result however many workers run it. */
static void
test_batch_replay (void)
{
  g_auto(Db) db = { 0 };
  g_auto(Db) after = { 0 };
  g_autoptr(GArray) msgs = make_batch (99, 3000, &db);
  g_autoptr(KtLedgerBatch) first = load_and_apply (msgs, &db, 4, NULL);
  g_autoptr(KtLedgerBatch) again = load_and_apply (msgs, &db, 1, NULL);
  g_autoptr(KtLedgerBatch) replay = NULL;
  const GArray *balances = kt_ledger_batch_balances (first);
  GHashTableIter iter;
  gpointer key, value;
  KtLedgerCounts counts, first_counts;

  check_entries (kt_ledger_batch_applied (again), kt_ledger_batch_applied (first));
  check_entries (kt_ledger_batch_rejected (again), kt_ledger_batch_rejected (first));

  /* "Commit" the first batch. */
  db_init (&after);
  g_hash_table_iter_init (&iter, db.balances);
  while (g_hash_table_iter_next (&iter, &key, &value))
    db_set (&after, key, *(KtAmount *) value);
  g_hash_table_iter_init (&iter, db.decided);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    g_hash_table_add (after.decided, g_strdup (key));
  for (guint i = 0; i < balances->len; i++)
    db_set (&after, g_array_index (balances, KtLedgerBalance, i).account,
            g_array_index (balances, KtLedgerBalance, i).after);
  for (guint i = 0; i < kt_ledger_batch_applied (first)->len; i++)
    g_hash_table_add (after.decided,
                      g_strdup (g_array_index (kt_ledger_batch_applied (first), KtLedgerEntry, i).txn));
  for (guint i = 0; i < kt_ledger_batch_rejected (first)->len; i++)
    g_hash_table_add (after.decided,
                      g_strdup (g_array_index (kt_ledger_batch_rejected (first), KtLedgerEntry, i).txn));

  replay = load_and_apply (msgs, &after, 8, NULL);
  kt_ledger_batch_counts (first, &first_counts);
  kt_ledger_batch_counts (replay, &counts);
  g_assert_cmpuint (counts.applied, ==, 0);
  g_assert_cmpuint (counts.rejected, ==, 0);
  g_assert_cmpuint (kt_ledger_batch_balances (replay)->len, ==, 0);
  g_assert_cmpuint (counts.duplicates, ==, counts.messages - counts.bad);
  g_assert_cmpuint (counts.bad, ==, first_counts.bad);
}

/* kt_ledger_batch_add_all() with @workers builds the batch that
 * kt_ledger_batch_add() one message at a time builds: the same keys, the
 * same counts and reasons, the same first bad message, and, applied, the
 * same entries. The messages: make_batch()'s, with every seventh one
 * damaged at random, so that bad ones of every kind fall in every
 * worker's run. */
static void
test_batch_add_all (gconstpointer data)
{
  guint workers = GPOINTER_TO_UINT (data);
  g_auto(Db) db = { 0 };
  g_autoptr(GArray) msgs = make_batch (7, 6000, &db);
  g_autoptr(GRand) rand = g_rand_new_with_seed (70);
  g_autoptr(GArray) inputs = g_array_new (FALSE, FALSE, sizeof (KtLedgerInput));
  g_autoptr(KtLedgerBatch) one = kt_ledger_batch_new ();
  g_autoptr(KtLedgerBatch) all = kt_ledger_batch_new ();
  g_autoptr(GError) error = NULL;
  KtLedgerBatch *both[2] = { one, all };
  KtLedgerCounts counts[2];
  gint32 sample_p[2];
  gint64 sample_o[2];
  KtLedgerBad sample_why[2];
  const char *sample[2];

  for (guint i = 0; i < msgs->len; i++)
    {
      Msg *m = &g_array_index (msgs, Msg, i);
      KtLedgerInput in;

      if (i % 7 == 3)
        {
          gsize at = (gsize) g_rand_int_range (rand, 0, (gint32) m->len);

          m->json[at] = (char) g_rand_int_range (rand, 0, 256);
        }
      in = (KtLedgerInput) { m->partition, m->offset, m->json, m->len };
      /* A tombstone now and then. */
      if (i % 501 == 0)
        in.value = NULL, in.len = 0;
      g_array_append_val (inputs, in);
      kt_ledger_batch_add (one, in.partition, in.offset, in.value, in.len);
    }
  g_assert_true (kt_ledger_batch_add_all (all, (const KtLedgerInput *) (void *) inputs->data,
                                          inputs->len, workers, &error));
  g_assert_no_error (error);

  for (guint b = 0; b < 2; b++)
    {
      kt_ledger_batch_counts (both[b], &counts[b]);
      g_assert_true (kt_ledger_batch_bad_sample (both[b], &sample_p[b], &sample_o[b],
                                                 &sample_why[b], &sample[b]));
    }
  g_assert_cmpuint (counts[1].messages, ==, msgs->len);
  g_assert_cmpuint (counts[1].bad, ==, counts[0].bad);
  g_assert_cmpuint (counts[1].bad, >, msgs->len / 20);
  for (guint r = 0; r < KT_LEDGER_N_BAD; r++)
    g_assert_cmpuint (counts[1].bad_by_reason[r], ==, counts[0].bad_by_reason[r]);
  g_assert_cmpint (sample_p[1], ==, sample_p[0]);
  g_assert_cmpint (sample_o[1], ==, sample_o[0]);
  g_assert_cmpint (sample_why[1], ==, sample_why[0]);
  g_assert_cmpstr (sample[1], ==, sample[0]);

  {
    g_autoptr(GPtrArray) a0 = kt_ledger_batch_accounts (one);
    g_autoptr(GPtrArray) a1 = kt_ledger_batch_accounts (all);
    g_autoptr(GPtrArray) t0 = kt_ledger_batch_txns (one);
    g_autoptr(GPtrArray) t1 = kt_ledger_batch_txns (all);

    g_assert_cmpuint (a1->len, ==, a0->len);
    for (guint i = 0; i < a0->len; i++)
      g_assert_cmpstr (a1->pdata[i], ==, a0->pdata[i]);
    g_assert_cmpuint (t1->len, ==, t0->len);
    for (guint i = 0; i < t0->len; i++)
      g_assert_cmpstr (t1->pdata[i], ==, t0->pdata[i]);
  }

  for (guint b = 0; b < 2; b++)
    g_assert_true (kt_ledger_batch_apply (both[b], workers, &error));
  check_entries (kt_ledger_batch_applied (all), kt_ledger_batch_applied (one));
  check_entries (kt_ledger_batch_rejected (all), kt_ledger_batch_rejected (one));
  g_assert_cmpuint (kt_ledger_batch_balances (all)->len, ==,
                    kt_ledger_batch_balances (one)->len);
  g_assert_cmpuint (kt_ledger_batch_applied (all)->len, >, 0);
}

/* More workers than accounts, and one account only: still one owner. */
static void
test_batch_few_accounts (void)
{
  static const guint workers[] = { 64, 3 };

  for (guint w = 0; w < G_N_ELEMENTS (workers); w++)
    {
      g_autoptr(KtLedgerBatch) batch = kt_ledger_batch_new ();
      Trace trace = { 0 };
      const GArray *balances;

      g_rec_mutex_init (&trace.lock);
      trace.owner = g_hash_table_new (g_str_hash, g_str_equal);
      trace.threads = g_hash_table_new (g_direct_hash, g_direct_equal);
      for (guint i = 0; i < 1000; i++)
        {
          g_autofree char *txn = g_strdup_printf ("T-%u", i);
          add_doc (batch, (gint32) (i % 4), i, txn, "ONLY", i % 3 == 2 ? "-2" : "1");
        }
      kt_ledger_batch_set_trace (batch, on_trace, &trace);
      g_assert_true (kt_ledger_batch_apply (batch, workers[w], NULL));
      g_assert_false (trace.shared);
      g_assert_cmpuint (g_hash_table_size (trace.threads), ==, 1);
      balances = kt_ledger_batch_balances (batch);
      g_assert_cmpuint (balances->len, ==, 1);
      /* +1 +1 -2 per three messages, from 0: every debit just fits. */
      g_assert_cmpint (g_array_index (balances, KtLedgerBalance, 0).after, ==, 10000);
      g_assert_cmpuint (kt_ledger_batch_rejected (batch)->len, ==, 0);
      g_hash_table_unref (trace.owner);
      g_hash_table_unref (trace.threads);
      g_rec_mutex_clear (&trace.lock);
    }
}

int
main (int argc, char *argv[])
{
  static const guint workers[] = { 1, 2, 3, 8, 64 };

  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/ledger/parse/good", test_parse_good);
  g_test_add_func ("/ledger/parse/field-limits", test_parse_field_limits);
  g_test_add_func ("/ledger/parse/bad", test_parse_bad);
  g_test_add_func ("/ledger/parse/what-the-columns-hold", test_parse_columns);
  g_test_add_func ("/ledger/parse/deep-nesting", test_parse_deep);
  g_test_add_func ("/ledger/parse/huge-strings", test_parse_huge);
  g_test_add_func ("/ledger/parse/random-mutations", test_parse_mutations);
  g_test_add_func ("/ledger/parse/reason-names", test_reason_names);
  g_test_add_func ("/ledger/batch/free-null", test_batch_free_null);
  g_test_add_func ("/ledger/batch/empty", test_batch_empty);
  g_test_add_func ("/ledger/batch/keys", test_batch_keys);
  g_test_add_func ("/ledger/batch/offset-order", test_batch_offset_order);
  g_test_add_func ("/ledger/batch/bad-counts", test_batch_bad_counts);
  g_test_add_func ("/ledger/batch/sample-truncated", test_batch_sample_truncated);
  for (guint i = 0; i < G_N_ELEMENTS (workers); i++)
    {
      g_autofree char *rules = g_strdup_printf ("/ledger/batch/rules/workers-%u", workers[i]);
      g_autofree char *oracle = g_strdup_printf ("/ledger/batch/oracle/workers-%u", workers[i]);
      g_autofree char *add_all = g_strdup_printf ("/ledger/batch/add-all/workers-%u", workers[i]);

      g_test_add_data_func (rules, GUINT_TO_POINTER (workers[i]), test_batch_rules);
      g_test_add_data_func (oracle, GUINT_TO_POINTER (workers[i]), test_batch_oracle);
      g_test_add_data_func (add_all, GUINT_TO_POINTER (workers[i]), test_batch_add_all);
    }
  g_test_add_func ("/ledger/batch/replay", test_batch_replay);
  g_test_add_func ("/ledger/batch/few-accounts", test_batch_few_accounts);

  return g_test_run ();
}
