/* ledger-bad.h - why a ledger message is bad (counted per batch, never
 * fatal): the verdicts of the strict JSON scan (ledger-json.h) and of the
 * ledger's own reading of a message (ledger.h), which both hand them on.
 * A header of its own so that the scan needs nothing of the ledger. */
#pragma once
#include <glib.h>

/* Objects and arrays nested deeper than this are refused unparsed:
 * json-glib's parser recurses and would overflow the stack. */
#define KT_LEDGER_DEPTH_MAX 32

/* Why a message is bad: counted per batch, never fatal. */
typedef enum
{
  KT_LEDGER_BAD_NOT_JSON,        /* not RFC 8259 JSON: invalid UTF-8, a NUL byte,
                                    comments, trailing bytes, a second document */
  KT_LEDGER_BAD_TOO_DEEP,        /* nested beyond KT_LEDGER_DEPTH_MAX */
  KT_LEDGER_BAD_NUL_ESCAPE,      /* "\u0000" in a string: json-glib cuts there */
  KT_LEDGER_BAD_SURROGATE_ESCAPE,/* "\ud800x", "\udc00": a UTF-16 surrogate escape
                                    not in a high-low pair names no character */
  KT_LEDGER_BAD_NOT_OBJECT,      /* an array, a string, a number... */
  KT_LEDGER_BAD_DUPLICATE_FIELD, /* a member named twice: which one counts? */
  KT_LEDGER_BAD_MISSING_FIELD,   /* txn, account, amount or ts absent */
  KT_LEDGER_BAD_WRONG_TYPE,      /* one of them not a string ("amount": -12.5) */
  KT_LEDGER_BAD_FIELD_EMPTY,     /* txn or account "" */
  KT_LEDGER_BAD_FIELD_TOO_LONG,  /* txn or account beyond 64 characters */
  KT_LEDGER_BAD_FIELD_CONTROL,   /* txn or account holds a control character */
  KT_LEDGER_BAD_AMOUNT_SYNTAX,   /* amount not a decimal (KT_AMOUNT_ERROR_SYNTAX) */
  KT_LEDGER_BAD_AMOUNT_DECIMALS, /* too many decimals (..._PRECISION) */
  KT_LEDGER_BAD_AMOUNT_OVERFLOW, /* amount overflows (..._OVERFLOW) */
  KT_LEDGER_BAD_TIMESTAMP,       /* ts not a real "YYYY-MM-DD HH:MM:SS" that
                                    DATETIME holds: years 1000..9999, no
                                    second 60 */
  KT_LEDGER_N_BAD
} KtLedgerBad;

/* "not JSON", "nested too deep", ...: lower case, for messages. */
const char *kt_ledger_bad_to_string (KtLedgerBad why);
