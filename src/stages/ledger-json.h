/* ledger-json.h - the ledger's strict JSON scan: is a message one RFC 8259
 * text, and nothing json-glib would misread?
 *
 * The ledger (ledger.c) scans every message with this before json-glib
 * builds its tree, because json-glib 1.6 takes more than RFC 8259 (and
 * recurses without a limit): a text this accepts, json-glib reads as
 * written. Pure: bytes in, a verdict out; it never allocates, never sees
 * Kafka or MySQL. tests/test-ledger-json.c and tests/fuzz/fuzz-ledger-json.c
 * hold it to this contract. */
#pragma once
#include <glib.h>
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
