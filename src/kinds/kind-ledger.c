/* kind-ledger.c - per-account balances from JSON transactions (--kind ledger).
 *
 * Keyed exactly-once updates over the same planner, source, transaction and
 * fencing as the counts: a batch's messages are applied by ledger.c
 * (sharded by account over --workers threads, each account in (partition,
 * offset) order, txns never applied twice), in ONE transaction with the
 * fenced offsets: the fence first, then the batch's balances read and
 * locked (in account order), the apply, and the balances, applied and
 * rejected txns and audit rows written. The messages are kept as read and
 * parsed at write, on the committer's thread and the --workers threads. */
#include "kind.h"

#include <stddef.h>
#include <string.h>
#include "db-rows.h"
#include "decimal.h"
#include "error.h"
#include "ledger.h"
#include "log.h"
#include "offsets.h"
#include "schema.h"

/* Rows per INSERT: keeps every statement far below max_allowed_packet. */
#define UPSERT_ROWS 1000

/* A record as read: applied in (partition, offset) order at commit. */
typedef struct
{
  gint64      offset;
  const char *value;  /* in the batch's chunk; NULL: a tombstone */
  gsize       len;
} LedgerRecord;

/* What the kind keeps from batch to batch. */
typedef struct
{
  KtKindContext  *context;
} Ledger;

/* One batch. */
typedef struct
{
  Ledger         *kind;
  GPtrArray      *records;   /* per range: GArray of LedgerRecord, in offset order */
  GStringChunk   *values;    /* the records' values, side by side: no allocation each */
  gint64          bytes;     /* of their values */
  guint64         n_records;
  GArray         *stats;     /* KtRangeStats per range */
  KtLedgerCounts  counts;    /* once applied */
  guint           changed;   /* accounts it changed */
  KtBatchSummary  summary;
} LedgerBatch;

/* The ledger's own options. */
typedef struct
{
  gint64 workers;  /* --workers; -1 when not given: one per core */
} LedgerOptions;

/* The threads that apply a batch of @context's job. */
static guint
workers (const KtKindContext *context)
{
  const LedgerOptions *o = context->spec->options;

  return o->workers > 0 ? (guint) o->workers : MIN (g_get_num_processors (), 64);
}

static void
ledger_close (gpointer data)
{
  g_free (data);
}

static gpointer
ledger_open (KtKindContext *context, GError **error)
{
  Ledger *self = g_new0 (Ledger, 1);

  (void) error;
  self->context = context;
  return self;
}

static gboolean
ledger_prepare (gpointer data, GError **error)
{
  Ledger *self = data;

  return kt_schema_prepare (self->context->db, KT_TABLES_LEDGER, "ledger", error);
}

static void
ledger_batch_free (gpointer data)
{
  LedgerBatch *b = data;

  if (b == NULL)
    return;
  g_clear_pointer (&b->records, g_ptr_array_unref);
  g_clear_pointer (&b->values, g_string_chunk_free);
  g_clear_pointer (&b->stats, g_array_unref);
  g_free (b);
}

/* Every batch starts from nothing in memory: its balances are read (and
 * locked) in its own transaction, after the fence. */
static gpointer
ledger_batch_new (gpointer data, GArray *ranges, const GArray *states,
                  gint64 max_per_partition, gconstpointer prior, GError **error)
{
  LedgerBatch *b = g_new0 (LedgerBatch, 1);

  (void) states;
  (void) max_per_partition;
  (void) prior;
  (void) error;
  b->kind = data;
  b->records = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);
  for (guint i = 0; i < ranges->len; i++)
    g_ptr_array_add (b->records, g_array_new (FALSE, FALSE, sizeof (LedgerRecord)));
  b->values = g_string_chunk_new (1024 * 1024);
  b->stats = g_array_new (FALSE, TRUE, sizeof (KtRangeStats));
  g_array_set_size (b->stats, ranges->len);
  return b;
}

static void
ledger_take (gpointer data, guint range, gint32 partition, gint64 offset, const char *value,
             gsize len)
{
  LedgerBatch *b = data;
  LedgerRecord rec = { offset, NULL, len };
  KtRangeStats *st = &g_array_index (b->stats, KtRangeStats, range);

  (void) partition;
  if (value != NULL)
    rec.value = g_string_chunk_insert_len (b->values, value, (gssize) len);
  g_array_append_val (b->records->pdata[range], rec);
  b->bytes += (gint64) len;
  b->n_records++;
  st->records++;
  st->lines++;
}

static void
ledger_held (gconstpointer data, gint64 *bytes, gint64 *records)
{
  const LedgerBatch *b = data;

  *bytes = b->bytes;
  *records = (gint64) b->n_records;
}

static void
append_quoted_list (Ledger *self, GString *sql, GPtrArray *items, guint from, guint to)
{
  for (guint i = from; i < to; i++)
    {
      if (i > from)
        g_string_append_c (sql, ',');
      kt_db_quote (self->context->db, sql, items->pdata[i]);
    }
}

static gboolean
load_ledger_state (Ledger *self, KtLedgerBatch *batch, GError **error)
{
  g_autoptr(GPtrArray) accounts = kt_ledger_batch_accounts (batch);
  g_autoptr(GPtrArray) txns = kt_ledger_batch_txns (batch);
  g_autoptr(GString) sql = g_string_new (NULL);

  for (guint at = 0; at < accounts->len; at += 500)
    {
      g_autoptr(KtDbRows) res = NULL;
      const char *const *row;

      g_string_assign (sql, "SELECT account, balance FROM account_balance WHERE account IN (");
      append_quoted_list (self, sql, accounts, at, MIN (accounts->len, at + 500));
      /* Account order (the list is sorted): writers lock rows in one order. */
      g_string_append (sql, ") ORDER BY account FOR UPDATE");
      res = kt_db_rows_select (self->context->db, sql->str, "cannot read account_balance", error);
      if (res == NULL)
        return FALSE;
      while ((row = kt_db_rows_next (res)) != NULL)
        {
          KtAmount balance;
          if (!kt_amount_parse (row[1], &balance, error)
              || !kt_ledger_batch_set_balance (batch, row[0], balance, error))
            {
              g_prefix_error (error, "account_balance of '%s': ", row[0]);
              return FALSE;
            }
        }
    }
  for (guint at = 0; at < txns->len; at += 500)
    {
      g_autoptr(KtDbRows) res = NULL;
      const char *const *row;

      g_string_assign (sql, "SELECT txn FROM ledger_applied WHERE txn IN (");
      append_quoted_list (self, sql, txns, at, MIN (txns->len, at + 500));
      g_string_append (sql, ") UNION ALL SELECT txn FROM ledger_rejected WHERE txn IN (");
      append_quoted_list (self, sql, txns, at, MIN (txns->len, at + 500));
      g_string_append (sql, ") LOCK IN SHARE MODE");
      res = kt_db_rows_select (self->context->db, sql->str, "cannot read ledger_applied", error);
      if (res == NULL)
        return FALSE;
      while ((row = kt_db_rows_next (res)) != NULL)
        if (!kt_ledger_batch_mark_applied (batch, row[0], error))
          return FALSE;
    }
  return TRUE;
}

static guint
append_balances (Ledger *self, GString *sql, const GArray *balances, gboolean is_new,
                 guint at, guint *n_rows)
{
  for (*n_rows = 0; at < balances->len && *n_rows < UPSERT_ROWS; at++)
    {
      const KtLedgerBalance *b = &g_array_index (balances, KtLedgerBalance, at);
      char amount[32];

      if (b->is_new != is_new)
        continue;
      kt_amount_format (b->after, amount);
      g_string_append (sql, (*n_rows)++ > 0 ? ",(" : "(");
      kt_db_quote (self->context->db, sql, b->account);
      g_string_append_printf (sql, ",%s)", amount);
    }
  return at;
}

static gboolean
write_ledger (Ledger *self, const char *topic, KtLedgerBatch *batch, GError **error)
{
  const GArray *balances = kt_ledger_batch_balances (batch);
  const GArray *lists[2] = { kt_ledger_batch_applied (batch), kt_ledger_batch_rejected (batch) };
  g_autoptr(GString) sql = g_string_new (NULL);

  for (int is_new = 0; is_new < 2; is_new++)
    for (guint at = 0, n_rows; at < balances->len;)
      {
        g_string_assign (sql, "INSERT INTO account_balance (account, balance) VALUES ");
        at = append_balances (self, sql, balances, is_new, at, &n_rows);
        if (n_rows == 0)
          break;
        if (is_new)
          {
            if (!kt_db_run_new_rows (self->context->db, sql->str, "cannot create account_balance rows", error))
              return FALSE;
            continue;
          }
        g_string_append (sql, " ON DUPLICATE KEY UPDATE balance = VALUES(balance), "
                              "updated_at = CURRENT_TIMESTAMP(3)");
        if (!kt_db_run (self->context->db, sql->str, "cannot write account_balance", error))
          return FALSE;
      }

  for (int l = 0; l < 2; l++)
    for (guint at = 0; at < lists[l]->len; at += UPSERT_ROWS)
      {
        g_string_assign (sql, l == 0
          ? "INSERT INTO ledger_applied (txn, account, amount, balance, ts, topic, `partition`, `offset`) VALUES "
          : "INSERT INTO ledger_rejected (txn, account, amount, reason, ts, topic, `partition`, `offset`) VALUES ");
        for (guint i = at; i < MIN (lists[l]->len, at + UPSERT_ROWS); i++)
          {
            const KtLedgerEntry *e = &g_array_index (lists[l], KtLedgerEntry, i);
            char amount[32], balance[32];

            kt_amount_format (e->amount, amount);
            kt_amount_format (e->balance, balance);
            g_string_append (sql, i > at ? ",(" : "(");
            kt_db_quote (self->context->db, sql, e->txn);
            g_string_append_c (sql, ',');
            kt_db_quote (self->context->db, sql, e->account);
            g_string_append_printf (sql, ",%s,", amount);
            if (l == 0)
              g_string_append (sql, balance);
            else
              kt_db_quote (self->context->db, sql, kt_ledger_reject_to_string (e->reason));
            g_string_append_c (sql, ',');
            kt_db_quote (self->context->db, sql, e->ts);
            g_string_append_c (sql, ',');
            kt_db_quote (self->context->db, sql, topic);
            g_string_append_printf (sql, ",%d,%" G_GINT64_FORMAT ")", e->partition, e->offset);
          }
        if (!kt_db_run_new_rows (self->context->db, sql->str, l == 0 ? "cannot write ledger_applied"
                                                     : "cannot write ledger_rejected", error))
          return FALSE;
      }
  return TRUE;
}

/* A fresh ledger batch (a write may be tried again after a deadlock, and
 * applying spends a batch) fed the records in (partition, offset) order,
 * written with the offsets in the scheduler's transaction. */
static gboolean
ledger_write (gpointer data, const GArray *ranges, gint32 *fenced, GError **error)
{
  LedgerBatch *b = data;
  Ledger *self = b->kind;
  KtKindContext *context = self->context;
  g_autoptr(KtLedgerBatch) batch = kt_ledger_batch_new ();
  g_autoptr(GArray) inputs = g_array_sized_new (FALSE, FALSE, sizeof (KtLedgerInput),
                                                (guint) b->n_records);

  for (guint i = 0; i < ranges->len; i++)
    {
      GArray *records = b->records->pdata[i];
      for (guint j = 0; j < records->len; j++)
        {
          const LedgerRecord *rec = &g_array_index (records, LedgerRecord, j);
          KtLedgerInput in = { g_array_index (ranges, KtRange, i).partition, rec->offset,
                               rec->value, rec->value != NULL ? rec->len : 0 };

          g_array_append_val (inputs, in);
        }
    }
  /* Parsing is what costs: the workers share it before they apply. */
  if (!kt_ledger_batch_add_all (batch, (const KtLedgerInput *) (void *) inputs->data,
                                inputs->len, workers (context), error))
    return FALSE;

  /* The fence first, exactly as for the counts: a second writer waits on
   * the offset rows, then backs off before reading a single balance. */
  if (!kt_offsets_fence (context->db, context->job, context->topic, ranges, fenced, error))
    return FALSE;
  if (*fenced >= 0)
    return TRUE;
  if (!load_ledger_state (self, batch, error)
      || !kt_ledger_batch_apply (batch, workers (context), error)
      || !write_ledger (self, context->topic, batch, error)
      || !kt_offsets_record (context->db, context->job, context->topic, context->output, context->member, ranges,
                             (const KtRangeStats *) (void *) b->stats->data, &context->audit_id,
                             error))
    return FALSE;

  /* Told by summarise only if the transaction commits. */
  kt_ledger_batch_counts (batch, &b->counts);
  b->changed = kt_ledger_batch_balances (batch)->len;
  b->summary.lines = b->counts.messages;
  b->summary.counted = b->counts.applied;
  b->summary.malformed = b->counts.bad;
  {
    const char *text;
    gint32 partition;
    gint64 offset;
    KtLedgerBad why;

    if (b->counts.bad > 0
        && kt_ledger_batch_bad_sample (batch, &partition, &offset, &why, &text))
      {
        b->summary.have_sample = TRUE;
        b->summary.sample_partition = partition;
        b->summary.sample_offset = offset;
        g_strlcpy (b->summary.sample_why, "bad ledger message",
                   sizeof b->summary.sample_why);
        g_strlcpy (b->summary.sample_reason, kt_ledger_bad_to_string (why),
                   sizeof b->summary.sample_reason);
        g_strlcpy (b->summary.sample, text, sizeof b->summary.sample);
      }
  }
  return TRUE;
}

/* "\\u0000 in a string" -> "u0000_in_a_string": a log field's name. */
static char *
field_name (const char *words)
{
  GString *out = g_string_new (NULL);

  for (const char *p = words; *p != '\0'; p++)
    if (g_ascii_isalnum (*p))
      g_string_append_c (out, g_ascii_tolower (*p));
    else if (out->len > 0 && out->str[out->len - 1] != '_')
      g_string_append_c (out, '_');
  while (out->len > 0 && out->str[out->len - 1] == '_')
    g_string_truncate (out, out->len - 1);
  return g_string_free (out, FALSE);
}

static void
ledger_summarise (gpointer data, KtBatchSummary *out, GString *line)
{
  LedgerBatch *b = data;
  Ledger *self = b->kind;

  *out = b->summary;
  g_string_append_printf (line, "ledger: %" G_GUINT64_FORMAT " messages, %" G_GUINT64_FORMAT
                          " applied, %" G_GUINT64_FORMAT " duplicates skipped, %"
                          G_GUINT64_FORMAT " rejected, %" G_GUINT64_FORMAT " bad, %u "
                          "accounts changed (%u workers)", b->counts.messages,
                          b->counts.applied, b->counts.duplicates,
                          b->counts.rejected, b->counts.bad, b->changed,
                          workers (self->context));
  if (b->counts.bad > 0)
    {
      g_autofree char *reasons = kt_ledger_counts_bad_reasons (&b->counts);
      g_autoptr(KtLogEvent) e = kt_log_event_new ("bad-messages");

      /* Each reason's count as a field: "bad timestamp" is bad_timestamp. */
      kt_log_event_string (e, "job", self->context->job);
      for (guint i = 0; i < KT_LEDGER_N_BAD; i++)
        if (b->counts.bad_by_reason[i] > 0)
          {
            g_autofree char *key = field_name (kt_ledger_bad_to_string (i));
            kt_log_event_int (e, key, (gint64) b->counts.bad_by_reason[i]);
          }
      kt_log_event_emit (e, G_LOG_LEVEL_MESSAGE, "job %s: bad ledger messages by reason: %s",
                         self->context->job, reasons);
    }
}

static const KtOption ledger_options[] = {
  { "workers", 'w', "batch", KT_OPT_INT, offsetof (LedgerOptions, workers), .min = 1, .max = 64,
    .fallback_doc = "the number of cores", .commands = KT_CMD_RUN, .metavar = "N",
    .help = "--kind ledger: threads that parse, then apply a batch (one account per thread)" },
  KT_OPTION_END
};

const KtKind kt_kind_ledger = {
  .options = ledger_options,
  .options_size = sizeof (LedgerOptions),
  .kind = "ledger",
  .mode = "transactional",
  .table = "account_balance",
  .holds = "balances",
  .workers = TRUE,
  /* Reading a transaction again would apply nothing twice (it is decided
   * once), but the audit chain of a ledger is one chain per partition, and
   * balances are per account, shared between jobs: nothing to rebuild. */
  .reread = KT_REREAD_REFUSED,
  .why_no_rewind = "a ledger's audit chain cannot go back, and its balances (shared by "
                   "account between jobs, each transaction decided once) cannot be "
                   "rebuilt: move a ledger forward only",
  .anchors = "kafka_offset",
  .open = ledger_open,
  .close = ledger_close,
  .prepare = ledger_prepare,
  .batch_new = ledger_batch_new,
  .batch_free = ledger_batch_free,
  .take = ledger_take,
  .held = ledger_held,
  .write = ledger_write,
  .summarise = ledger_summarise,
};
