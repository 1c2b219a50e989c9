/* ledger.c - per-batch application of keyed updates, one owner per key.
 *
 * Takes Kafka values in batch order, hands the sink what to load and,
 * after kt_ledger_batch_apply(), what to write. Parsing is one pass, no
 * tree: the strict RFC 8259 scan of ledger-json.c hands back the four
 * members, whose strings are decoded and checked here. A batch's messages
 * are parsed on up to --workers threads, each a run of them in batch
 * order, and added in batch order on the caller's (kt_ledger_batch_add_all).
 *
 * Applying is a sequential pre-pass that settles every duplicate (the only
 * question that spans accounts), then one shard per worker, chosen by a
 * hash of the account. A worker owns its accounts' balances outright and
 * each entry is written by the one worker of its account, so there are no
 * locks: the threads' start and join order everything else. */
#include "ledger.h"

#include <string.h>
#include "error.h"
#include "ledger-json.h"

G_STATIC_ASSERT (sizeof (gpointer) >= sizeof (gint64));

#define SAMPLE_BYTES 120

/* ---- one message --------------------------------------------------------- */

/* The four fields, borrowed from a Parser's buffer: valid until its next
 * message. */
typedef struct
{
  const char *txn;
  const char *account;
  const char *ts;
  KtAmount    amount;
} Fields;

/* What one thread keeps to parse messages: the JSON reader and a buffer
 * for the decoded strings. */
typedef struct
{
  KtLedgerJsonReader *json;
  GByteArray         *buf;
} Parser;

/* A txn or account whose text as written is longer than this is too long
 * without decoding it: an escape of six bytes decodes to at least one. */
#define KEY_TEXT_MAX (6 * 4 * KT_LEDGER_FIELD_MAX)
/* A ts longer than this as written cannot be the 19 characters of one. */
#define TS_TEXT_MAX (6 * 19)

static void
parser_init (Parser *p)
{
  p->json = kt_ledger_json_reader_new ();
  p->buf = g_byte_array_new ();
}

static void
parser_clear (Parser *p)
{
  g_clear_pointer (&p->json, kt_ledger_json_reader_free);
  g_clear_pointer (&p->buf, g_byte_array_unref);
}

/* Whether member @v is a JSON string; *@why otherwise. */
static gboolean
is_string (const KtJsonValue *v, KtLedgerBad *why)
{
  if (v->type == KT_JSON_ABSENT)
    {
      *why = KT_LEDGER_BAD_MISSING_FIELD;
      return FALSE;
    }
  /* A JSON number is refused, not converted: another reader may take it
   * through a double. */
  if (v->type != KT_JSON_STRING)
    {
      *why = KT_LEDGER_BAD_WRONG_TYPE;
      return FALSE;
    }
  return TRUE;
}

/* String @v decoded into *@at (room for it and a NUL, which decoding
 * never outgrows), *@at moved past it. */
static const char *
decode (const KtJsonValue *v, char **at)
{
  char *out = *at;
  gsize n = kt_json_unescape (v, out);

  out[n] = '\0';
  *at = out + n + 1;
  return out;
}

/* txn and account become keys, log text and VARCHAR(64) utf8mb4 values:
 * 1 to 64 characters (code points, as MariaDB counts them), no control
 * characters, valid UTF-8. */
static gboolean
check_key (const char *text, KtLedgerBad *why)
{
  /* 64 characters are at most 256 bytes: a huge string is refused without
   * walking it. */
  if (*text == '\0')
    *why = KT_LEDGER_BAD_FIELD_EMPTY;
  /* The scan makes json-glib's strings valid UTF-8; checked again because
   * the walk below must not run past the end of a broken one. */
  else if (!g_utf8_validate (text, -1, NULL))
    *why = KT_LEDGER_BAD_NOT_JSON;
  else if (strlen (text) > 4 * KT_LEDGER_FIELD_MAX
           || g_utf8_strlen (text, -1) > KT_LEDGER_FIELD_MAX)
    *why = KT_LEDGER_BAD_FIELD_TOO_LONG;
  else
    {
      for (const char *p = text; *p != '\0'; p = g_utf8_next_char (p))
        if (g_unichar_iscntrl (g_utf8_get_char (p)))
          {
            *why = KT_LEDGER_BAD_FIELD_CONTROL;
            return FALSE;
          }
      return TRUE;
    }
  return FALSE;
}

static inline int
digits (const char *p, int n)
{
  int v = 0;

  for (int i = 0; i < n; i++)
    {
      if (!g_ascii_isdigit (p[i]))
        return -1;
      v = v * 10 + (p[i] - '0');
    }
  return v;
}

/* "YYYY-MM-DD HH:MM:SS", a date that exists, within MariaDB's DATETIME
 * (years 1000..9999). ts is stored as given, and DATETIME has no second
 * 60: a leap second is a bad timestamp here (log lines count it). */
static gboolean
check_ts (const char *ts)
{
  int year, month, day;

  if (strlen (ts) != 19 || ts[4] != '-' || ts[7] != '-' || ts[10] != ' '
      || ts[13] != ':' || ts[16] != ':')
    return FALSE;
  year = digits (ts, 4);
  month = digits (ts + 5, 2);
  day = digits (ts + 8, 2);
  if (year < 1000 || month < 1 || month > 12 || day < 1
      || day > g_date_get_days_in_month ((GDateMonth) month, (GDateYear) year))
    return FALSE;
  return digits (ts + 11, 2) >= 0 && digits (ts + 11, 2) <= 23
         && digits (ts + 14, 2) >= 0 && digits (ts + 14, 2) <= 59
         && digits (ts + 17, 2) >= 0 && digits (ts + 17, 2) <= 59;
}

static KtLedgerBad
amount_reason (const GError *error)
{
  switch ((KtAmountError) error->code)
    {
    case KT_AMOUNT_ERROR_PRECISION:
      return KT_LEDGER_BAD_AMOUNT_DECIMALS;
    case KT_AMOUNT_ERROR_OVERFLOW:
      return KT_LEDGER_BAD_AMOUNT_OVERFLOW;
    case KT_AMOUNT_ERROR_SYNTAX:
    default:
      return KT_LEDGER_BAD_AMOUNT_SYNTAX;
    }
}

/* txn or account @v: a string (is_string() said so) decoded into *@at
 * and checked, into *@out. */
static gboolean
read_key (const KtJsonValue *v, char **at, const char **out, KtLedgerBad *why)
{
  /* Not empty (no escape decodes to nothing), and too long however it
   * decodes: refused without decoding it. */
  if (v->len > KEY_TEXT_MAX)
    {
      *why = KT_LEDGER_BAD_FIELD_TOO_LONG;
      return FALSE;
    }
  *out = decode (v, at);
  return check_key (*out, why);
}

/* Message @value: its four fields, strings decoded into @p's buffer, or
 * the first reason it is bad (the document, then txn, account, amount and
 * ts in that order). */
static gboolean
parse_fields (Parser *p, const char *value, gsize len, Fields *f, KtLedgerBad *why)
{
  g_autoptr(GError) local = NULL;
  KtJsonValue m[KT_LEDGER_N_MEMBERS];
  const char *amount;
  gsize room = 0;
  char *at;

  if (value == NULL && len == 0)
    value = "";
  /* Repeated members are refused there: which one would count? */
  if (!kt_ledger_json_read (p->json, value, len, m, why))
    return FALSE;
  /* Room for every string decoded (never longer than written) that is
   * decoded at all, and its NUL: the buffer is sized once, so that the
   * fields may point into it. */
  for (guint i = 0; i < KT_LEDGER_N_MEMBERS; i++)
    if (m[i].type == KT_JSON_STRING)
      room += MIN (m[i].len, i == KT_LEDGER_TS ? TS_TEXT_MAX
                             : i == KT_LEDGER_AMOUNT ? G_MAXSIZE - 1 : KEY_TEXT_MAX) + 1;
  g_byte_array_set_size (p->buf, (guint) room);
  at = (char *) p->buf->data;

  if (!is_string (&m[KT_LEDGER_TXN], why) || !read_key (&m[KT_LEDGER_TXN], &at, &f->txn, why)
      || !is_string (&m[KT_LEDGER_ACCOUNT], why)
      || !read_key (&m[KT_LEDGER_ACCOUNT], &at, &f->account, why)
      || !is_string (&m[KT_LEDGER_AMOUNT], why))
    return FALSE;
  amount = decode (&m[KT_LEDGER_AMOUNT], &at);
  if (!kt_amount_parse (amount, &f->amount, &local))
    {
      *why = amount_reason (local);
      return FALSE;
    }
  if (!is_string (&m[KT_LEDGER_TS], why))
    return FALSE;
  if (m[KT_LEDGER_TS].len > TS_TEXT_MAX)
    {
      *why = KT_LEDGER_BAD_TIMESTAMP;
      return FALSE;
    }
  f->ts = decode (&m[KT_LEDGER_TS], &at);
  if (!check_ts (f->ts))
    {
      *why = KT_LEDGER_BAD_TIMESTAMP;
      return FALSE;
    }
  return TRUE;
}

char *
kt_ledger_counts_bad_reasons (const KtLedgerCounts *counts)
{
  GString *out;

  g_return_val_if_fail (counts != NULL, NULL);

  out = g_string_new (NULL);
  for (guint i = 0; i < KT_LEDGER_N_BAD; i++)
    if (counts->bad_by_reason[i] > 0)
      g_string_append_printf (out, "%s%" G_GUINT64_FORMAT " %s", out->len > 0 ? ", " : "",
                              counts->bad_by_reason[i], kt_ledger_bad_to_string (i));
  return g_string_free (out, FALSE);
}

const char *
kt_ledger_reject_to_string (KtLedgerReject why)
{
  switch (why)
    {
    case KT_LEDGER_REJECT_NONE:
      return "applied";
    case KT_LEDGER_REJECT_INSUFFICIENT_FUNDS:
      return "insufficient funds";
    case KT_LEDGER_REJECT_OVERFLOW:
      return "overflow";
    default:
      g_return_val_if_reached ("?");
    }
}

gboolean
kt_ledger_parse (const char *value, gsize len, KtLedgerMessage *out, KtLedgerBad *why)
{
  Parser parser;
  Fields f = { 0 };
  KtLedgerBad ignored;
  gboolean good;

  g_return_val_if_fail (value != NULL || len == 0, FALSE);
  g_return_val_if_fail (out != NULL, FALSE);

  memset (out, 0, sizeof *out);
  parser_init (&parser);
  good = parse_fields (&parser, value, len, &f, why != NULL ? why : &ignored);
  if (good)
    {
      out->txn = g_strdup (f.txn);
      out->account = g_strdup (f.account);
      out->amount = f.amount;
      g_strlcpy (out->ts, f.ts, sizeof out->ts);
    }
  parser_clear (&parser);
  return good;
}

void
kt_ledger_message_clear (KtLedgerMessage *msg)
{
  if (msg == NULL)
    return;
  g_clear_pointer (&msg->txn, g_free);
  g_clear_pointer (&msg->account, g_free);
}

/* ---- the batch ------------------------------------------------------------ */

typedef struct
{
  const char *name;     /* in the batch's strings */
  KtAmount    before;   /* from the database, or 0 */
  KtAmount    balance;  /* written only by the worker that owns the account */
  gboolean    known;    /* set_balance() gave it */
  guint       shard;
} Account;

/* Flags of a txn in KtLedgerBatch.txns. IN_BATCH keeps every value non-NULL. */
enum
{
  TXN_IN_BATCH = 1 << 0,
  TXN_DECIDED_BEFORE = 1 << 1,  /* mark_applied(): an earlier batch decided it */
  TXN_TAKEN = 1 << 2,           /* its first message in this batch is known */
};

typedef enum
{
  ENTRY_PENDING,
  ENTRY_DUPLICATE,
  ENTRY_APPLIED,
  ENTRY_REJECTED,
} EntryState;

/* One good message. Separate guint8 fields, not bit-fields: entries of
 * different accounts sit side by side and are written by different
 * threads, which C11 allows only for distinct memory locations. */
typedef struct
{
  const char *txn;
  const char *ts;
  Account    *account;
  KtAmount    amount;
  KtAmount    balance;   /* after deciding */
  gint64      offset;
  gint32      partition;
  guint8      state;     /* EntryState */
  guint8      reason;    /* KtLedgerReject */
} Entry;

typedef enum
{
  BATCH_OPEN,     /* adding, loading */
  BATCH_APPLIED,  /* results ready */
  BATCH_SPENT,    /* apply failed half-way */
} BatchState;

struct _KtLedgerBatch
{
  BatchState    state;
  Parser        parser;       /* kt_ledger_batch_add()'s */
  GStringChunk *strings;      /* every txn, account and ts of the batch */
  GPtrArray    *more_strings; /* GStringChunk: kt_ledger_batch_add_all()'s workers' */
  GArray       *entries;      /* Entry, in batch order */
  GHashTable   *accounts;     /* name (in strings) -> Account (owned) */
  GHashTable   *txns;         /* name (in strings) -> TXN_* flags */
  GHashTable   *last_offset;  /* partition -> last offset added */
  KtLedgerCounts counts;
  /* The first bad message. */
  gboolean      have_sample;
  gint32        sample_partition;
  gint64        sample_offset;
  KtLedgerBad   sample_why;
  char         *sample;
  KtLedgerTraceFunc trace;
  gpointer      trace_data;
  /* Results, once applied. */
  GArray       *applied;      /* KtLedgerEntry */
  GArray       *rejected;     /* KtLedgerEntry */
  GArray       *balances;     /* KtLedgerBalance */
};

KtLedgerBatch *
kt_ledger_batch_new (void)
{
  KtLedgerBatch *self = g_new0 (KtLedgerBatch, 1);

  parser_init (&self->parser);
  self->strings = g_string_chunk_new (64 * 1024);
  self->more_strings = g_ptr_array_new_with_free_func ((GDestroyNotify) g_string_chunk_free);
  self->entries = g_array_new (FALSE, FALSE, sizeof (Entry));
  self->accounts = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, g_free);
  self->txns = g_hash_table_new (g_str_hash, g_str_equal);
  self->last_offset = g_hash_table_new (g_direct_hash, g_direct_equal);
  self->applied = g_array_new (FALSE, FALSE, sizeof (KtLedgerEntry));
  self->rejected = g_array_new (FALSE, FALSE, sizeof (KtLedgerEntry));
  self->balances = g_array_new (FALSE, FALSE, sizeof (KtLedgerBalance));
  return self;
}

void
kt_ledger_batch_free (KtLedgerBatch *self)
{
  if (self == NULL)
    return;
  parser_clear (&self->parser);
  /* The tables' keys live in the string chunk: tables first. */
  g_clear_pointer (&self->accounts, g_hash_table_unref);
  g_clear_pointer (&self->txns, g_hash_table_unref);
  g_clear_pointer (&self->last_offset, g_hash_table_unref);
  g_clear_pointer (&self->entries, g_array_unref);
  g_clear_pointer (&self->applied, g_array_unref);
  g_clear_pointer (&self->rejected, g_array_unref);
  g_clear_pointer (&self->balances, g_array_unref);
  g_clear_pointer (&self->strings, g_string_chunk_free);
  g_clear_pointer (&self->more_strings, g_ptr_array_unref);
  g_free (self->sample);
  g_free (self);
}

/* Printable ASCII stays, everything else becomes \xNN: a sample may be
 * any bytes and ends up on a terminal. */
static char *
escape_sample (const char *value, gsize len)
{
  GString *out = g_string_sized_new (MIN (len, SAMPLE_BYTES) + 8);

  for (gsize i = 0; i < MIN (len, SAMPLE_BYTES); i++)
    {
      guchar c = (guchar) value[i];
      if (c == '\\')
        g_string_append (out, "\\\\");
      else if (c >= 0x20 && c < 0x7f)
        g_string_append_c (out, (char) c);
      else
        g_string_append_printf (out, "\\x%02x", c);
    }
  if (len > SAMPLE_BYTES)
    g_string_append (out, "...");
  return g_string_free (out, FALSE);
}

/* Adds one message, parsed: @f good (its strings in the batch's chunks
 * when @own, or borrowed and copied), or bad for @why. */
static gboolean
add_parsed (KtLedgerBatch *self, gint32 partition, gint64 offset, const char *value, gsize len,
            const Fields *f, gboolean good, KtLedgerBad why, gboolean own)
{
  gpointer key = GINT_TO_POINTER (partition), last, name, flags;
  Account *account;
  Entry e = { 0 };

  /* Kafka's order within a partition is the batch's order: an offset that
   * goes back is the caller's bug, and would make the result depend on it. */
  g_return_val_if_fail (!g_hash_table_lookup_extended (self->last_offset, key, NULL, &last)
                        || offset > (gint64) (gintptr) last, FALSE);

  g_hash_table_insert (self->last_offset, key, (gpointer) (gintptr) offset);
  self->counts.messages++;
  if (!good)
    {
      self->counts.bad++;
      self->counts.bad_by_reason[why]++;
      if (!self->have_sample)
        {
          self->have_sample = TRUE;
          self->sample_partition = partition;
          self->sample_offset = offset;
          self->sample_why = why;
          self->sample = escape_sample (value, len);
        }
      return FALSE;
    }

  account = g_hash_table_lookup (self->accounts, f->account);
  if (account == NULL)
    {
      account = g_new0 (Account, 1);
      account->name = own ? f->account : g_string_chunk_insert (self->strings, f->account);
      g_hash_table_insert (self->accounts, (gpointer) account->name, account);
    }
  if (g_hash_table_lookup_extended (self->txns, f->txn, &name, &flags))
    e.txn = name;
  else
    {
      e.txn = own ? f->txn : g_string_chunk_insert (self->strings, f->txn);
      g_hash_table_insert (self->txns, (gpointer) e.txn, GUINT_TO_POINTER (TXN_IN_BATCH));
    }
  /* Timestamps repeat (one per second at most): stored once each (a
   * worker's chunk already stored them so). */
  e.ts = own ? f->ts : g_string_chunk_insert_const (self->strings, f->ts);
  e.account = account;
  e.amount = f->amount;
  e.offset = offset;
  e.partition = partition;
  e.state = ENTRY_PENDING;
  g_array_append_val (self->entries, e);
  return TRUE;
}

gboolean
kt_ledger_batch_add (KtLedgerBatch *self, gint32 partition, gint64 offset,
                     const char *value, gsize len)
{
  Fields f = { 0 };
  KtLedgerBad why = KT_LEDGER_BAD_NOT_JSON;
  gboolean good;

  g_return_val_if_fail (self != NULL, FALSE);
  g_return_val_if_fail (self->state == BATCH_OPEN, FALSE);
  g_return_val_if_fail (value != NULL || len == 0, FALSE);

  good = parse_fields (&self->parser, value, len, &f, &why);
  return add_parsed (self, partition, offset, value, len, &f, good, why, FALSE) && good;
}

/* A message as a worker parsed it. */
typedef struct
{
  Fields      f;     /* good: strings in the worker's chunk */
  KtLedgerBad why;   /* bad: the reason */
  gboolean    good;
} Parsed;

/* One worker's run of a batch's messages: [from, to) of @inputs. */
typedef struct
{
  const KtLedgerInput *inputs;
  Parsed              *out;
  guint                from, to;
  GStringChunk        *strings;  /* handed to the batch once joined */
  GThread             *thread;
} ParseRun;

static gpointer
run_parse (gpointer data)
{
  ParseRun *run = data;
  Parser parser;

  parser_init (&parser);
  for (guint i = run->from; i < run->to; i++)
    {
      const KtLedgerInput *in = &run->inputs[i];
      Parsed *out = &run->out[i];
      Fields f = { 0 };

      out->good = parse_fields (&parser, in->value, in->len, &f, &out->why);
      if (!out->good)
        continue;
      out->f.txn = g_string_chunk_insert (run->strings, f.txn);
      out->f.account = g_string_chunk_insert (run->strings, f.account);
      out->f.ts = g_string_chunk_insert_const (run->strings, f.ts);
      out->f.amount = f.amount;
    }
  parser_clear (&parser);
  return NULL;
}

/* Messages a thread is worth starting for: parsing one costs about a
 * microsecond, starting and joining a thread some tens. */
#define PARSE_RUN_MIN 512

gboolean
kt_ledger_batch_add_all (KtLedgerBatch *self, const KtLedgerInput *inputs, guint n,
                         guint workers, GError **error)
{
  g_autofree Parsed *parsed = NULL;
  g_autofree ParseRun *runs = NULL;
  guint n_runs;
  gboolean ok = TRUE;

  g_return_val_if_fail (self != NULL, FALSE);
  g_return_val_if_fail (self->state == BATCH_OPEN, FALSE);
  g_return_val_if_fail (inputs != NULL || n == 0, FALSE);
  g_return_val_if_fail (workers >= 1, FALSE);

  n_runs = MAX (1, MIN (workers, n / PARSE_RUN_MIN));
  parsed = g_new0 (Parsed, n);
  runs = g_new0 (ParseRun, n_runs);
  /* Contiguous runs in batch order; the first runs here, once the others
   * have started. */
  for (guint r = 0; r < n_runs; r++)
    {
      runs[r] = (ParseRun) { inputs, parsed, (guint) ((guint64) n * r / n_runs),
                             (guint) ((guint64) n * (r + 1) / n_runs),
                             g_string_chunk_new (64 * 1024), NULL };
      g_ptr_array_add (self->more_strings, runs[r].strings);
    }
  for (guint r = 1; r < n_runs && ok; r++)
    {
      g_autoptr(GError) local = NULL;

      runs[r].thread = g_thread_try_new ("kt-ledger-parse", run_parse, &runs[r], &local);
      if (runs[r].thread == NULL)
        {
          g_set_error (error, KT_ERROR, KT_ERROR_TRANSIENT,
                       "cannot start ledger parser %u of %u: %s", r + 1, n_runs,
                       local->message);
          ok = FALSE;
        }
    }
  if (ok)
    run_parse (&runs[0]);
  for (guint r = 1; r < n_runs; r++)
    if (runs[r].thread != NULL)
      g_thread_join (g_steal_pointer (&runs[r].thread));
  if (!ok)
    return FALSE;

  /* In batch order, on this thread: the batch's tables see the messages
   * exactly as kt_ledger_batch_add() one by one would show them. */
  for (guint i = 0; i < n; i++)
    {
      const KtLedgerInput *in = &inputs[i];

      add_parsed (self, in->partition, in->offset, in->value, in->len, &parsed[i].f,
                  parsed[i].good, parsed[i].why, TRUE);
    }
  return TRUE;
}

static gint
compare_names (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

static GPtrArray *
sorted_keys (GHashTable *table)
{
  GPtrArray *out = g_ptr_array_sized_new (g_hash_table_size (table));
  GHashTableIter iter;
  gpointer key;

  g_hash_table_iter_init (&iter, table);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    g_ptr_array_add (out, key);
  g_ptr_array_sort (out, compare_names);
  return out;
}

GPtrArray *
kt_ledger_batch_accounts (KtLedgerBatch *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  return sorted_keys (self->accounts);
}

GPtrArray *
kt_ledger_batch_txns (KtLedgerBatch *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  return sorted_keys (self->txns);
}

gboolean
kt_ledger_batch_set_balance (KtLedgerBatch *self, const char *account,
                             KtAmount balance, GError **error)
{
  Account *a;

  g_return_val_if_fail (self != NULL && account != NULL, FALSE);
  g_return_val_if_fail (self->state == BATCH_OPEN, FALSE);
  g_return_val_if_fail (balance >= KT_AMOUNT_MIN, FALSE);

  a = g_hash_table_lookup (self->accounts, account);
  if (a == NULL || a->known)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_INTERNAL,
                   a == NULL ? "the database gave a balance for account \"%s\", "
                               "which is not in this batch"
                             : "the database gave two balances for account \"%s\"",
                   account);
      return FALSE;
    }
  a->known = TRUE;
  a->before = a->balance = balance;
  return TRUE;
}

gboolean
kt_ledger_batch_mark_applied (KtLedgerBatch *self, const char *txn, GError **error)
{
  gpointer name, flags;

  g_return_val_if_fail (self != NULL && txn != NULL, FALSE);
  g_return_val_if_fail (self->state == BATCH_OPEN, FALSE);

  if (!g_hash_table_lookup_extended (self->txns, txn, &name, &flags))
    {
      g_set_error (error, KT_ERROR, KT_ERROR_INTERNAL,
                   "the database named txn \"%s\", which is not in this batch", txn);
      return FALSE;
    }
  g_hash_table_insert (self->txns, name,
                       GUINT_TO_POINTER (GPOINTER_TO_UINT (flags) | TXN_DECIDED_BEFORE));
  return TRUE;
}

void
kt_ledger_batch_set_trace (KtLedgerBatch *self, KtLedgerTraceFunc trace, gpointer user_data)
{
  g_return_if_fail (self != NULL);
  g_return_if_fail (self->state == BATCH_OPEN);
  self->trace = trace;
  self->trace_data = user_data;
}

/* Which worker owns an account: FNV-1a, then murmur3's 64-bit finalizer.
 * Not g_str_hash: its djb2 (h * 33 + c) leaves the low bits a near-linear
 * function of the last bytes, and `% workers` reads exactly those, so
 * "ACC-0" and "ACC-8" always share one of 8 workers. The finalizer spreads
 * every byte over every bit. Unseeded on purpose: the same account lands
 * on the same worker in every run, which makes a trace reproducible. A
 * skewed spread costs only speed; correctness never depends on it. */
static guint64
shard_hash (const char *name)
{
  guint64 h = G_GUINT64_CONSTANT (0xcbf29ce484222325);

  for (const guchar *p = (const guchar *) name; *p != '\0'; p++)
    h = (h ^ *p) * G_GUINT64_CONSTANT (0x100000001b3);
  h ^= h >> 33;
  h *= G_GUINT64_CONSTANT (0xff51afd7ed558ccd);
  h ^= h >> 33;
  h *= G_GUINT64_CONSTANT (0xc4ceb9fe1a85ec53);
  h ^= h >> 33;
  return h;
}

/* The only rule that spans accounts, settled in batch order before any
 * sharding: the first message of a txn not decided before is the one;
 * every other message of it is a duplicate, whatever its account. */
static void
settle_duplicates (KtLedgerBatch *self)
{
  for (guint i = 0; i < self->entries->len; i++)
    {
      Entry *e = &g_array_index (self->entries, Entry, i);
      guint flags = GPOINTER_TO_UINT (g_hash_table_lookup (self->txns, e->txn));

      if (flags & (TXN_DECIDED_BEFORE | TXN_TAKEN))
        e->state = ENTRY_DUPLICATE;
      else
        g_hash_table_insert (self->txns, (gpointer) e->txn,
                             GUINT_TO_POINTER (flags | TXN_TAKEN));
    }
}

/* Rules 2 to 4 for one message, on its owner's thread. */
static void
decide (KtLedgerBatch *self, Entry *e)
{
  Account *a = e->account;
  KtAmount sum;
  gboolean fits;

  if (self->trace != NULL)
    self->trace (a->name, self->trace_data);
  fits = kt_amount_add (a->balance, e->amount, &sum);
  /* A debit that overflows went below KT_AMOUNT_MIN: below 0 too. */
  if (e->amount < 0 && (!fits || sum < 0))
    {
      e->state = ENTRY_REJECTED;
      e->reason = KT_LEDGER_REJECT_INSUFFICIENT_FUNDS;
    }
  else if (!fits)
    {
      e->state = ENTRY_REJECTED;
      e->reason = KT_LEDGER_REJECT_OVERFLOW;
    }
  else
    {
      a->balance = sum;
      e->state = ENTRY_APPLIED;
    }
  e->balance = a->balance;
}

typedef struct
{
  KtLedgerBatch *batch;
  GArray        *indices;  /* guint: the shard's pending entries, batch order */
  GThread       *thread;
} Shard;

static gpointer
run_shard (gpointer data)
{
  Shard *shard = data;
  Entry *entries = (Entry *) (void *) shard->batch->entries->data;

  for (guint i = 0; i < shard->indices->len; i++)
    decide (shard->batch, &entries[g_array_index (shard->indices, guint, i)]);
  return NULL;
}

static void
shard_clear (Shard *shard)
{
  g_clear_pointer (&shard->indices, g_array_unref);
}

/* The results, in batch order, from the entries: single-threaded, after
 * every worker has been joined. */
static void
collect (KtLedgerBatch *self)
{
  g_autoptr(GHashTable) touched = g_hash_table_new (g_direct_hash, g_direct_equal);
  g_autoptr(GPtrArray) names = sorted_keys (self->accounts);

  for (guint i = 0; i < self->entries->len; i++)
    {
      const Entry *e = &g_array_index (self->entries, Entry, i);
      KtLedgerEntry out = { e->txn, e->account->name, e->ts, e->amount, e->balance,
                            e->partition, e->offset, (KtLedgerReject) e->reason };

      switch ((EntryState) e->state)
        {
        case ENTRY_DUPLICATE:
          self->counts.duplicates++;
          break;
        case ENTRY_APPLIED:
          g_array_append_val (self->applied, out);
          g_hash_table_add (touched, e->account);
          break;
        case ENTRY_REJECTED:
          g_array_append_val (self->rejected, out);
          break;
        case ENTRY_PENDING:
        default:
          g_assert_not_reached ();
        }
    }
  self->counts.applied = self->applied->len;
  self->counts.rejected = self->rejected->len;

  for (guint i = 0; i < names->len; i++)
    {
      const Account *a = g_hash_table_lookup (self->accounts, names->pdata[i]);

      if (g_hash_table_contains (touched, a))
        {
          KtLedgerBalance b = { a->name, a->before, a->balance, !a->known };
          g_array_append_val (self->balances, b);
        }
    }
}

gboolean
kt_ledger_batch_apply (KtLedgerBatch *self, guint workers, GError **error)
{
  g_autoptr(GArray) shards = NULL;
  GHashTableIter iter;
  gpointer value;
  guint n_shards, first = G_MAXUINT;
  gboolean ok = TRUE;

  g_return_val_if_fail (self != NULL, FALSE);
  g_return_val_if_fail (self->state == BATCH_OPEN, FALSE);
  g_return_val_if_fail (workers >= 1, FALSE);

  settle_duplicates (self);

  /* No more shards than accounts: a thread with nothing to do is waste. */
  n_shards = MAX (1, MIN (workers, g_hash_table_size (self->accounts)));
  g_hash_table_iter_init (&iter, self->accounts);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    ((Account *) value)->shard = (guint) (shard_hash (((Account *) value)->name) % n_shards);

  shards = g_array_sized_new (FALSE, TRUE, sizeof (Shard), n_shards);
  g_array_set_clear_func (shards, (GDestroyNotify) shard_clear);
  g_array_set_size (shards, n_shards);
  for (guint s = 0; s < n_shards; s++)
    {
      g_array_index (shards, Shard, s).batch = self;
      g_array_index (shards, Shard, s).indices = g_array_new (FALSE, FALSE, sizeof (guint));
    }
  for (guint i = 0; i < self->entries->len; i++)
    {
      const Entry *e = &g_array_index (self->entries, Entry, i);
      if (e->state == ENTRY_PENDING)
        g_array_append_val (g_array_index (shards, Shard, e->account->shard).indices, i);
    }

  /* Every non-empty shard but the first gets a thread; the first runs
   * here, once all have started (a failed start must leave nothing run
   * on this thread that the others did not also run). */
  for (guint s = 0; s < n_shards && ok; s++)
    {
      Shard *shard = &g_array_index (shards, Shard, s);
      g_autoptr(GError) local = NULL;

      if (shard->indices->len == 0)
        continue;
      if (first == G_MAXUINT)
        {
          first = s;
          continue;
        }
      shard->thread = g_thread_try_new ("kt-ledger", run_shard, shard, &local);
      if (shard->thread == NULL)
        {
          g_set_error (error, KT_ERROR, KT_ERROR_TRANSIENT,
                       "cannot start ledger worker %u of %u: %s", s + 1, n_shards,
                       local->message);
          ok = FALSE;
        }
    }
  if (ok && first != G_MAXUINT)
    run_shard (&g_array_index (shards, Shard, first));
  for (guint s = 0; s < n_shards; s++)
    if (g_array_index (shards, Shard, s).thread != NULL)
      g_thread_join (g_steal_pointer (&g_array_index (shards, Shard, s).thread));

  if (!ok)
    {
      self->state = BATCH_SPENT;
      return FALSE;
    }
  collect (self);
  self->state = BATCH_APPLIED;
  return TRUE;
}

const GArray *
kt_ledger_batch_applied (KtLedgerBatch *self)
{
  g_return_val_if_fail (self != NULL && self->state == BATCH_APPLIED, NULL);
  return self->applied;
}

const GArray *
kt_ledger_batch_rejected (KtLedgerBatch *self)
{
  g_return_val_if_fail (self != NULL && self->state == BATCH_APPLIED, NULL);
  return self->rejected;
}

const GArray *
kt_ledger_batch_balances (KtLedgerBatch *self)
{
  g_return_val_if_fail (self != NULL && self->state == BATCH_APPLIED, NULL);
  return self->balances;
}

void
kt_ledger_batch_counts (KtLedgerBatch *self, KtLedgerCounts *counts)
{
  g_return_if_fail (self != NULL && counts != NULL);
  *counts = self->counts;
}

gboolean
kt_ledger_batch_bad_sample (KtLedgerBatch *self, gint32 *partition, gint64 *offset,
                            KtLedgerBad *why, const char **text)
{
  g_return_val_if_fail (self != NULL, FALSE);

  if (!self->have_sample)
    return FALSE;
  if (partition != NULL)
    *partition = self->sample_partition;
  if (offset != NULL)
    *offset = self->sample_offset;
  if (why != NULL)
    *why = self->sample_why;
  if (text != NULL)
    *text = self->sample;
  return TRUE;
}
