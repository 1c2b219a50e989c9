/* ledger-bad.c - the names of the reasons a ledger message is bad
 * (ledger-bad.h). */
#include "ledger-bad.h"

const char *
kt_ledger_bad_to_string (KtLedgerBad why)
{
  static const char *const names[KT_LEDGER_N_BAD] = {
    [KT_LEDGER_BAD_NOT_JSON] = "not JSON",
    [KT_LEDGER_BAD_TOO_DEEP] = "nested too deep",
    [KT_LEDGER_BAD_NUL_ESCAPE] = "\\u0000 in a string",
    [KT_LEDGER_BAD_SURROGATE_ESCAPE] = "lone surrogate escape",
    [KT_LEDGER_BAD_NOT_OBJECT] = "not an object",
    [KT_LEDGER_BAD_DUPLICATE_FIELD] = "duplicate field",
    [KT_LEDGER_BAD_MISSING_FIELD] = "missing field",
    [KT_LEDGER_BAD_WRONG_TYPE] = "wrong type",
    [KT_LEDGER_BAD_FIELD_EMPTY] = "field empty",
    [KT_LEDGER_BAD_FIELD_TOO_LONG] = "field too long",
    [KT_LEDGER_BAD_FIELD_CONTROL] = "control character in field",
    [KT_LEDGER_BAD_AMOUNT_SYNTAX] = "amount not a decimal",
    [KT_LEDGER_BAD_AMOUNT_DECIMALS] = "too many decimals",
    [KT_LEDGER_BAD_AMOUNT_OVERFLOW] = "overflow",
    [KT_LEDGER_BAD_TIMESTAMP] = "bad timestamp",
  };

  g_return_val_if_fail ((guint) why < KT_LEDGER_N_BAD, "?");
  return names[why];
}
