/* kind.h - what a job kind does with a batch.
 *
 * The scheduler (run.c) plans a batch of offset ranges, reads them, and
 * hands every record to the job's kind (a state per topic of the job, and
 * a batch object per topic and batch: batch_new); the kind turns them
 * into output and writes it with the ranges' offsets,
 * fenced (offsets.h), in the transaction the scheduler opened for every
 * topic of the job, in its own way: per-minute counts (kind-count.c),
 * counts that carry the offsets they include, their offsets stored after
 * (kind-count-idempotent.c), per-account balances (kind-ledger.c). The scheduler never asks which kind it runs:
 * a new kind is a new file and a line in kind.c's table. */
#pragma once
#include <glib.h>
#include "db.h"
#include "kind-context.h"
#include "options.h"
#include "plan.h"

#define KT_SAMPLE_BYTES 120

/* What a batch did, for the batch's log line and the metrics, in terms
 * every kind shares (a kind's own figures go into its part of the line,
 * summarise()). */
typedef struct
{
  guint64  lines;          /* lines (or messages) read */
  guint64  counted;        /* of them, those the output took */
  guint64  malformed;      /* skipped: what the kind cannot read */
  /* Of the counted, those folded into one catch-all row (@folded_into)
   * because a bound was reached; @folds: the output folds, so the batch's
   * figures name @folded even when it is 0. A warning, once a minute,
   * says how many and why (@folded_why). Both strings static. */
  gboolean folds;
  guint64  folded;
  const char *folded_into;
  const char *folded_why;
  /* Of the malformed, those kept in the table @kept_in (NULL: the kind
   * keeps none), and those past its bound, dropped. */
  const char *kept_in;
  guint64  kept;
  guint64  dropped;
  /* One record the kind skipped, for the log (once a minute). */
  gboolean have_sample;
  gint32   sample_partition;
  gint64   sample_offset;
  char     sample_why[32];     /* "malformed line", "bad ledger message" */
  char     sample_reason[48];  /* "not JSON", or "" */
  char     sample[KT_SAMPLE_BYTES + 1];
} KtBatchSummary;

typedef struct _KtKind KtKind;

/* What reading offsets again that the job's output already counted does:
 * what `ktally reset` may do when it moves a job's offsets back. */
typedef enum
{
  KT_REREAD_COUNTS_TWICE,  /* counts them again: a rewind needs its output rebuilt */
  KT_REREAD_SKIPS,         /* knows what it counted and skips it: a rewind is harmless */
  KT_REREAD_REFUSED,       /* no rewind at all (why_no_rewind says why) */
} KtReread;

struct _KtKind
{
  const char *kind;   /* --kind */
  const char *mode;   /* --mode */
  const char *table;  /* the table it writes, or NULL: --table's */
  const char *holds;  /* what that table's rows are: "counts", "balances" */
  /* Its own options (options.h): their rows, which fill a struct of
   * @options_size (KtJobSpec's `options`), or NULL: none. */
  const KtOption *options;
  gsize       options_size;
  /* What its options say together, once the table loaded them (each on
   * its own is the table's): KT_ERROR_USAGE naming the option; NULL: no
   * such rules. */
  gboolean  (*check_options) (gconstpointer options, GError **error);
  gboolean    parses; /* reads log lines: --pattern, --levels... matter */
  gboolean    workers; /* applies a batch on --workers threads */

  /* What managing a job of this kind (`ktally reset`, `ktally forget`)
   * must know; nothing here runs during a batch. */
  KtReread    reread;
  const char *why_no_rewind;  /* KT_REREAD_REFUSED: the reason, for the user */
  /* reset --rebuild: the output can be emptied and counted again from the
   * log start. Its rows are either keyed by job (@rows_suffix: only the
   * job's are deleted) or the whole output table's (rebuilt only when no
   * other job writes that table). */
  gboolean    rebuilds;
  const char *rows_suffix;    /* its output rows keyed by job are in the table
                               * OUTPUT + this (kt_kind_rows_table), or NULL */
  const char *records;        /* a table of its own records keyed by job (not output:
                               * forget and rebuild delete them), or NULL */
  /* The table where its write() stores each partition's anchor (the last
   * record its output counted, anchor.h) with the key (job, topic,
   * partition): kafka_offset when the offsets commit with the output,
   * else a table written with the output. */
  const char *anchors;
  /* The offsets of each partition of @topic that @job's output counted
   * (partition -> KtCoverage*, into @sets), for a kind that keeps them
   * (KT_REREAD_SKIPS); NULL otherwise. Reads only. */
  gboolean (*counted)   (KtDb *db, const char *job, const char *topic, GHashTable *sets,
                         GError **error);

  /* What the kind keeps for one runner from batch to batch (a compiled
   * parser, buffers), or NULL with @error (KT_ERROR_USAGE for a setting it
   * refuses). @context outlives it. */
  gpointer (*open)      (KtKindContext *context, GError **error);
  void     (*close)     (gpointer self);

  /* The job's tables: checked against what the kind writes, created where
   * absent (after the job's identity was checked). */
  gboolean (*prepare)   (gpointer self, GError **error);

  /* A batch is an object of its own, apart from what open() made: the
   * scheduler makes one (batch_new), hands it every record (take), has it
   * written (write, after) and told (summarise), and frees it
   * (batch_free). Two may be alive at once: while one is written on the
   * committer's thread, the scheduler's thread makes the next and feeds
   * it records. So:
   *  - open, close, prepare, batch_new, ahead, take, summarise, retract
   *    and batch_free run on the scheduler's thread; write and after on
   *    the committer's, once the batch took its last record, and never
   *    two writes at once;
   *  - write and after change only their batch and the database: what
   *    open() made they only read;
   *  - a batch made with a @prior reads of it only what the prior's
   *    batch_new and take left (what write changes is the writer's). */

  /* Whether a batch over @ranges can start from what @prior (a batch
   * whose commit is in flight) leaves in memory, without the database
   * (idempotent mode: the offsets each partition's output counted, known
   * only for the partitions @prior read). May be NULL: always. */
  gboolean (*ahead)     (gconstpointer prior, const GArray *ranges);

  /* A new batch over @ranges (@states: where every partition stood;
   * @max_per_partition: the batch's cap, --max-per-partition as it is
   * now), which may move the ranges' ends, or NULL with @error. @ranges is
   * the scheduler's, kept until batch_free; the read may lower its ends.
   * @prior: NULL, the batch starts from what the database holds; or the
   * batch before it, whose commit is in flight: the new one starts where
   * @prior leaves every partition if it commits (a range's from is then
   * @prior's until for the partitions both read), its state for them
   * comes from @prior's in memory (ahead() said it can), and it must not
   * touch the database (the committer owns the connection). If @prior
   * does not commit, the new batch is freed unwritten. */
  gpointer (*batch_new) (gpointer self, GArray *ranges, const GArray *states,
                         gint64 max_per_partition, gconstpointer prior, GError **error);
  void     (*batch_free) (gpointer batch);

  /* One record of ranges[@range] (of @partition), in offset order per
   * partition; a NULL @value is a tombstone. */
  void     (*take)      (gpointer batch, guint range, gint32 partition, gint64 offset,
                         const char *value, gsize len);

  /* May be NULL: none. What the batch keeps of its records until it is
   * written (the ledger keeps the messages): value bytes and records,
   * which the next batch's read counts against its caps while this one
   * commits. */
  void     (*held)      (gconstpointer batch, gint64 *bytes, gint64 *records);

  /* Writes the batch: its output and the ranges' offsets, fenced, inside
   * the transaction the scheduler opened on context->db (with kt_kind_context_begin();
   * one transaction for every topic of the job). The read may have moved
   * the ranges' ends back (a cap); a range whose until is its from moves
   * nothing. *@fenced: the first partition another writer moved (-1:
   * none): the scheduler then rolls back, nothing is written. FALSE with
   * the error; the scheduler rolls back, and tries a KT_ERROR_CONFLICT
   * again (so write may be called again for the same batch). */
  gboolean (*write)     (gpointer batch, const GArray *ranges, gint32 *fenced, GError **error);

  /* May be NULL. Once the transaction committed: what goes after the
   * output (idempotent mode: the offsets, fenced as above; a fenced store
   * leaves the output standing: *@fenced says which partition). */
  gboolean (*after)     (gpointer batch, const GArray *ranges, gint32 *fenced, GError **error);

  /* After a commit that landed: the batch's figures, and the kind's part
   * of the batch's log line appended to @line ("300 lines, 12 ERROR, ...").
   * The kind may log lines of its own (per-reason counts). */
  void     (*summarise) (gpointer batch, KtBatchSummary *out, GString *line);

  /* reset --rebuild of a range (a recount of a KT_REREAD_COUNTS_TWICE
   * kind), in the caller's transaction: takes what the records given to
   * the batch's take() counted back out of the job's output. Refused with
   * KT_ERROR_USAGE, before anything is written, where the output does not
   * hold exactly that to take (rows edited, counted by another parser;
   * keys folded past --max-keys). Without @execute, only its reads and
   * checks. *@rows: the output rows it lowers. NULL: the kind cannot take
   * counts back, and a recount is refused. */
  gboolean (*retract)   (gpointer batch, gboolean execute, guint *rows, GError **error);
};

/* The implementation of --kind @kind in --mode @mode, or NULL with
 * KT_ERROR_USAGE saying which combinations there are. */
const KtKind *kt_kind_lookup (const char *kind, const char *mode, GError **error);

/* The kind that always writes @table (its own, like the ledger's
 * account_balance), or NULL: a table a job names with --table. */
const KtKind *kt_kind_of_table (const char *table);

/* The table of @kind's output rows keyed by job, for a job writing
 * @output (error_log -> error_log_topic), newly allocated; NULL when the
 * kind keeps none (its rows are the whole @output's). */
char *kt_kind_rows_table (const KtKind *kind, const char *output);

/* Every kind's table of options, each once; NULL-terminated. */
const KtOption *const *kt_kind_option_tables (void);

extern const KtKind kt_kind_count, kt_kind_count_idempotent, kt_kind_ledger;
