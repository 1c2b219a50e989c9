/* ledger-json.h - the ledger's strict JSON scan: is a message one RFC 8259
 * text, and nothing json-glib would misread? And, in the same pass, what
 * do its txn, account, amount and ts hold?
 *
 * The ledger (ledger.c) reads every message with kt_ledger_json_read():
 * no tree, the four members as slices of the message. The scan is as
 * strict as it was when json-glib read the messages after it (json-glib
 * 1.6 takes more than RFC 8259, and recurses without a limit): a text it
 * accepts, json-glib reads as written, and the reader finds what json-glib
 * found. Pure: bytes in, a verdict and slices out; never sees Kafka or
 * MySQL. tests/test-ledger-json.c and tests/fuzz/fuzz-ledger-json.c (which
 * holds the reader to json-glib's reading) keep it to this contract. */
#pragma once
#include <glib.h>
#include "json-scan.h"
#include "ledger-bad.h"

/* Whether the @len bytes at @value (any bytes: NUL, invalid UTF-8, any
 * nesting; never read past @len) are exactly one JSON text, with nothing
 * before or after it but JSON white space, in valid UTF-8 without a NUL
 * byte, nested at most KT_LEDGER_DEPTH_MAX deep, whose strings decode to
 * valid UTF-8 without NUL (no "\u0000", no UTF-16 surrogate escape outside
 * a high-low pair). If so, *@top_members is the number of members of the
 * root object, a repeated name counted each time (0 when the root is not
 * an object). If not, *@why is the first problem found: NOT_JSON,
 * TOO_DEEP, NUL_ESCAPE or SURROGATE_ESCAPE. */
gboolean kt_ledger_json_scan (const char *value, gsize len, guint *top_members,
                              KtLedgerBad *why);

/* The members a ledger message is read for, in the order they are checked. */
typedef enum
{
  KT_LEDGER_TXN,
  KT_LEDGER_ACCOUNT,
  KT_LEDGER_AMOUNT,
  KT_LEDGER_TS,
  KT_LEDGER_N_MEMBERS
} KtLedgerMember;

/* What a reader keeps from message to message (buffers for the member
 * names): one per thread. */
typedef struct _KtLedgerJsonReader KtLedgerJsonReader;

KtLedgerJsonReader *kt_ledger_json_reader_new  (void);
void                kt_ledger_json_reader_free (KtLedgerJsonReader *self);  /* NULL is fine */

/* kt_ledger_json_scan()'s verdict on the @len bytes at @value, then: the
 * root must be an object (else KT_LEDGER_BAD_NOT_OBJECT) whose member
 * names, escapes decoded, are all distinct (else
 * KT_LEDGER_BAD_DUPLICATE_FIELD). If so, fills @members (KT_LEDGER_N_MEMBERS
 * of them, by KtLedgerMember) with the root members "txn", "account",
 * "amount" and "ts" as json-scan.h's slices of @value (a string's text
 * between its quotes, escapes as written: kt_json_unescape() decodes it;
 * KT_JSON_ABSENT where absent; other members are not read) and returns
 * TRUE; otherwise returns FALSE with *@why and @members all absent. */
gboolean kt_ledger_json_read (KtLedgerJsonReader *self, const char *value, gsize len,
                              KtJsonValue *members, KtLedgerBad *why);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (KtLedgerJsonReader, kt_ledger_json_reader_free)
