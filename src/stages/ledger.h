/* ledger.h - keyed exactly-once updates: a per-account ledger.
 *
 * Messages are JSON documents
 *   {"txn": "T-123", "account": "ACC-42", "amount": "-12.50",
 *    "ts": "2017-07-30 14:09:08"}
 * with the amount a decimal string (positive credits, negative debits).
 * One batch is built from the messages of a planned offset range, loaded
 * with what the database knows (balances, txns already decided), applied,
 * and drained by the sink, which writes the results and the fenced offsets
 * in one transaction.
 *
 * The result of kt_ledger_batch_apply() is always the result of applying
 * the batch's messages one by one in the order they were added, whatever
 * the number of workers: an account is owned by one worker for the whole
 * batch, and duplicates are decided before the work is split. The ledger
 * never sees Kafka or MySQL. */
#pragma once
#include <glib.h>
#include "decimal.h"
#include "ledger-bad.h"

/* txn and account: 1..64 characters, what a VARCHAR(64) holds. */
#define KT_LEDGER_FIELD_MAX 64
/* Why a well-formed, first-seen message was not applied. */
typedef enum
{
  KT_LEDGER_REJECT_NONE,                /* it was applied */
  KT_LEDGER_REJECT_INSUFFICIENT_FUNDS,  /* a debit would take the balance below 0 */
  KT_LEDGER_REJECT_OVERFLOW,            /* a credit would pass KT_AMOUNT_MAX */
} KtLedgerReject;

/* One parsed message. Strings are owned: kt_ledger_message_clear(). */
typedef struct
{
  char     *txn;
  char     *account;
  KtAmount  amount;
  char      ts[20];  /* "YYYY-MM-DD HH:MM:SS" */
} KtLedgerMessage;

/* A decided message, as the sink writes it. Strings belong to the batch. */
typedef struct
{
  const char    *txn;
  const char    *account;
  const char    *ts;
  KtAmount       amount;
  KtAmount       balance;    /* the account's balance after this message
                                (unchanged by a rejected one) */
  gint32         partition;
  gint64         offset;
  KtLedgerReject reason;     /* NONE in the applied list */
} KtLedgerEntry;

/* An account an applied message touched. */
typedef struct
{
  const char *account;
  KtAmount    before;   /* what kt_ledger_batch_set_balance() gave, or 0 */
  KtAmount    after;
  gboolean    is_new;   /* no balance was set: the account has no row yet */
} KtLedgerBalance;

typedef struct
{
  guint64 messages;    /* added: good + bad */
  guint64 applied;
  guint64 duplicates;  /* txn decided before: in the database or earlier here */
  guint64 rejected;
  guint64 bad;         /* the sum of by_reason */
  guint64 bad_by_reason[KT_LEDGER_N_BAD];
} KtLedgerCounts;

typedef struct _KtLedgerBatch KtLedgerBatch;

/* "insufficient funds", ...: lower case, for messages (a bad message's
 * reason: kt_ledger_bad_to_string(), ledger-bad.h). */
const char *kt_ledger_reject_to_string (KtLedgerReject why);

/* The bad messages of @counts by reason, "2 bad timestamp, 1 field too
 * long" (reasons in enum order), or "" if there were none. Free it. */
char       *kt_ledger_counts_bad_reasons (const KtLedgerCounts *counts);

/* Parses one Kafka value of @len bytes: any bytes at all (NUL, invalid
 * UTF-8, any nesting, any size) give an answer, never a crash. On success
 * fills @out (which the caller clears); otherwise sets *@why to the first
 * problem found (the document, then txn, account, amount, ts in that
 * order) and leaves @out zeroed. Members other than the four are
 * ignored. */
gboolean kt_ledger_parse (const char *value, gsize len, KtLedgerMessage *out,
                          KtLedgerBad *why);

void     kt_ledger_message_clear (KtLedgerMessage *msg);

KtLedgerBatch *kt_ledger_batch_new  (void);
void           kt_ledger_batch_free (KtLedgerBatch *self);  /* NULL is fine */

/* Parses and keeps one message, or counts it as bad (the first bad one is
 * kept as the sample). Within a partition, offsets must increase (a bug
 * otherwise); partitions may interleave. The batch's order is the order
 * of these calls. Returns whether the message was good. */
gboolean kt_ledger_batch_add (KtLedgerBatch *self, gint32 partition, gint64 offset,
                              const char *value, gsize len);

/* One Kafka value, as kt_ledger_batch_add_all() takes it. */
typedef struct
{
  gint32      partition;
  gint64      offset;
  const char *value;  /* NULL with @len 0: a tombstone */
  gsize       len;
} KtLedgerInput;

/* kt_ledger_batch_add() of each of the @n @inputs in the order given, with
 * the parsing (what costs) split over at most @workers threads (>= 1; 1:
 * all of it here; a short batch starts none): the batch is exactly what
 * the calls one by one make. @inputs are read only during the call.
 * Fails only if a thread cannot be started (KT_ERROR_TRANSIENT), having
 * added nothing. */
gboolean kt_ledger_batch_add_all (KtLedgerBatch *self, const KtLedgerInput *inputs, guint n,
                                  guint workers, GError **error);

/* The distinct accounts, and txns, of the good messages, ascending by
 * strcmp (lock rows in this order). The caller frees the array; the
 * strings belong to the batch. */
GPtrArray *kt_ledger_batch_accounts (KtLedgerBatch *self);
GPtrArray *kt_ledger_batch_txns     (KtLedgerBatch *self);

/* Before apply: the database's balance of @account. An account never set
 * starts at 0 and is new. Fails with KT_ERROR_INTERNAL if @account is not
 * one of kt_ledger_batch_accounts() or was set already: the database
 * answered for another key (a case-insensitive or PAD SPACE collation can
 * do that) and going on would overwrite the wrong balance. */
gboolean kt_ledger_batch_set_balance  (KtLedgerBatch *self, const char *account,
                                       KtAmount balance, GError **error);

/* Before apply: @txn was decided by an earlier batch, applied OR rejected
 * (both are final: see kt_ledger_batch_apply()). Its messages here are
 * duplicates. KT_ERROR_INTERNAL if @txn is not one of
 * kt_ledger_batch_txns(); marking twice is fine. */
gboolean kt_ledger_batch_mark_applied (KtLedgerBatch *self, const char *txn,
                                       GError **error);

/* Decides every good message, as if one by one in batch order:
 *  1. a txn already decided (marked, or by an earlier message of this
 *     batch, whatever its account and outcome) is a duplicate: skipped;
 *  2. a debit that would leave the balance below 0 is rejected,
 *     "insufficient funds";
 *  3. a credit that would pass KT_AMOUNT_MAX is rejected, "overflow";
 *  4. otherwise the balance moves and the txn is applied.
 * A rejected txn is decided for good, like an applied one: the sink
 * records it (ledger_rejected) and marks it next time, so replaying the
 * same messages gives the same result whatever happened in between; a
 * retry needs a new txn id. Duplicates are settled in one pass first,
 * then accounts are split over at most @workers threads (>= 1; 1 runs
 * here) by a hash of the account, each applying its accounts' messages in
 * batch order. Call once. Fails only if a thread cannot be started
 * (KT_ERROR_TRANSIENT): the batch is then spent, free it. */
gboolean kt_ledger_batch_apply (KtLedgerBatch *self, guint workers, GError **error);

/* After apply, owned by the batch: the applied and the rejected messages
 * (KtLedgerEntry) in batch order, and the balances (KtLedgerBalance) of the
 * accounts with an applied message, ascending by account; a new account
 * is listed even if its messages net to 0, so that its row is created. */
const GArray *kt_ledger_batch_applied  (KtLedgerBatch *self);
const GArray *kt_ledger_batch_rejected (KtLedgerBatch *self);
const GArray *kt_ledger_batch_balances (KtLedgerBatch *self);

/* Counts so far: bad ones from add, the rest after apply. */
void     kt_ledger_batch_counts (KtLedgerBatch *self, KtLedgerCounts *counts);

/* The first bad message, if any: where, why, and its first 120 bytes with
 * anything but printable ASCII as \xNN (safe to log). @text belongs to
 * the batch. */
gboolean kt_ledger_batch_bad_sample (KtLedgerBatch *self, gint32 *partition,
                                     gint64 *offset, KtLedgerBad *why,
                                     const char **text);

/* For tests: called by the worker thread just before it decides each
 * message of @account, so a test can see which thread owns which account.
 * Set before apply; NULL (the default) costs nothing. */
typedef void (*KtLedgerTraceFunc) (const char *account, gpointer user_data);
void     kt_ledger_batch_set_trace (KtLedgerBatch *self, KtLedgerTraceFunc trace,
                                    gpointer user_data);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (KtLedgerBatch, kt_ledger_batch_free)
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (KtLedgerMessage, kt_ledger_message_clear)
