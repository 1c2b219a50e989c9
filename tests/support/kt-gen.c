/* kt-gen.c - writes deterministic log lines to Kafka, with the exact truth.
 *
 * Test and demo infrastructure for ktally: the same --seed gives the same
 * lines, messages and partitions on every machine (own PRNG, no rand()),
 * and --truth writes the per-minute ERROR counts that ktally must end up
 * with, in the form `mariadb -N -B` prints them:
 *   YYYY-MM-DD HH:MM:00<TAB>COUNT     (minutes with COUNT > 0, ascending)
 *
 *   kt-gen --brokers B --topic T --lines N [--seed S] [--partitions P]
 *          [--first-partition F] [--lines-per-value K] [--truth FILE]
 *          [--start "YYYY-MM-DD HH:MM:SS"] [--malformed PERMILLE]
 *          [--rate LINES_PER_SEC] [--min-line-bytes N]
 *          [--shape access|syslog|json|ecs|logfmt|otlp [--keys N] [--key-order random|cycle]
 *           [--by F,...] [--levels L,...] [--bucket MINUTES] [--print-options]]
 *
 * --shape writes log analytics lines instead (kt-shapes.h): nginx-style
 * access logs, syslog with hosts, iso8601 JSON-ish lines, records of the
 * structured inputs (ecs, logfmt; otlp: --lines-per-value records a
 * request), and --truth is
 * then per (bucket, --by fields) with the sums; --print-options prints the
 * `ktally run` options that truth is for, one a line, and exits.
 *
 * --transactional writes through a transactional producer, --txn-messages
 * messages a transaction (each spread over the partitions as above, so
 * every partition sees committed and aborted transactions interleaved);
 * --abort-every K aborts every K-th one after its records reached the
 * log. --hold-open-ms MS keeps the last one open that long after its
 * records reached the log (printing "open" on stdout then) and commits it;
 * --leave-open never ends the last one: the process exits without a
 * word to the broker, which aborts it at --txn-timeout-ms. --truth counts
 * the committed records only.
 *
 * The lines come from kt-lines.c, which kt-parse-bench and kt-freshness
 * share, so a seed means the same lines in all of them.
 * Lines are "YYYY-MM-DD HH:MM:SS LEVEL message". Only the level exactly
 * "ERROR" on a well-formed line counts; "error" and "ERRORS" are there to
 * catch sloppy matching, and malformed lines keep ERROR in them so that a
 * parser which accepts one shows it in the counts. Message i (K lines
 * joined by "\n", no trailing newline, null key) goes to partition
 * (F + i) % P. The program exits non-zero unless every message was
 * delivered.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>
#include <librdkafka/rdkafka.h>

#include "kt-lines.h"
#include "kt-shapes.h"
#include "kt-support.h"

/* ---------------------------------------------------------------------- */
/* Kafka */

typedef struct
{
  guint64 delivered;
  guint64 failed;
  rd_kafka_resp_err_t first_err;
} Delivery;

static gboolean verbose = FALSE;

static void
dr_cb (rd_kafka_t *rk, const rd_kafka_message_t *msg, void *opaque)
{
  Delivery *d = opaque;

  (void) rk;
  if (msg->err == RD_KAFKA_RESP_ERR_NO_ERROR)
    {
      d->delivered++;
      return;
    }
  if (d->failed++ == 0)
    d->first_err = msg->err;
}

static void
log_cb (const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
  /* Warnings matter (a broker going away), debug chatter does not. */
  if (verbose || level <= 4)
    g_printerr ("kt-gen: %%%d %s %s: %s\n", level, fac, rd_kafka_name (rk),
                buf);
}

static int
topic_partition_count (rd_kafka_t *rk, const char *topic)
{
  g_autoptr (rd_kafka_topic_t) rkt = rd_kafka_topic_new (rk, topic, NULL);
  g_autoptr (KtSupportMetadata) md = NULL;
  rd_kafka_resp_err_t err;

  /* Asking for this topic's metadata creates it on a broker that
   * auto-creates topics (the mock does); that is the producer's normal
   * behaviour and fine for a generator. */
  err = rd_kafka_metadata (rk, 0, rkt, &md, 10000);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
    {
      g_printerr ("kt-gen: metadata for %s: %s\n", topic,
                  rd_kafka_err2str (err));
      return -1;
    }
  if (md->topic_cnt != 1 || md->topics[0].err != RD_KAFKA_RESP_ERR_NO_ERROR)
    {
      g_printerr ("kt-gen: topic %s: %s\n", topic,
                  md->topic_cnt == 1 ? rd_kafka_err2str (md->topics[0].err)
                                     : "not in metadata");
      return -1;
    }
  return md->topics[0].partition_cnt;
}

/* Sends one message, waiting while the local queue is full rather than
 * dropping anything. */
/* A NULL @payload is a null value (a tombstone); "" with @len 0 an empty one. */
static gboolean
produce (rd_kafka_t *rk, rd_kafka_topic_t *rkt, int partition,
         const char *payload, size_t len)
{
  for (;;)
    {
      if (rd_kafka_produce (rkt, partition, RD_KAFKA_MSG_F_COPY, (void *) payload,
                            len, NULL, 0, NULL)
          == 0)
        return TRUE;
      if (rd_kafka_last_error () != RD_KAFKA_RESP_ERR__QUEUE_FULL)
        {
          g_printerr ("kt-gen: produce to partition %d: %s\n", partition,
                      rd_kafka_err2str (rd_kafka_last_error ()));
          return FALSE;
        }
      rd_kafka_poll (rk, 50);
    }
}

/* Transactions: one call, failing loudly (a test producer has no use for
 * retrying what the broker refused). */
static gboolean
txn_ok (rd_kafka_error_t *err, const char *what)
{
  if (err == NULL)
    return TRUE;
  g_printerr ("kt-gen: %s: %s\n", what, rd_kafka_error_string (err));
  rd_kafka_error_destroy (err);
  return FALSE;
}

/* ---------------------------------------------------------------------- */

int
main (int argc, char **argv)
{
  g_autofree gchar *opt_brokers = NULL;
  g_autofree gchar *opt_topic = NULL;
  g_autofree gchar *opt_truth = NULL;
  g_autofree gchar *opt_start = NULL;
  gint64 opt_lines = -1;
  gint64 opt_seed = 1;
  int opt_partitions = 0;
  int opt_first = 0;
  int opt_only = -1;
  int opt_empties = 0, opt_nulls = 0, opt_per_second = 0, opt_min_bytes = 0;
  int opt_per_value = 1;
  int opt_malformed = 20;
  double opt_rate = 0;
  g_autofree gchar *opt_shape = NULL, *opt_key_order = NULL, *opt_by = NULL, *opt_levels = NULL;
  int opt_keys = 100, opt_bucket = 0;
  gboolean opt_print_options = FALSE;
  gboolean opt_transactional = FALSE, opt_leave_open = FALSE;
  int opt_txn_messages = 100, opt_abort_every = 0, opt_hold_open_ms = 0;
  int opt_txn_timeout_ms = 10000;
  g_autoptr (KtShaped) shaped = NULL;
  GOptionEntry entries[] = {
    { "brokers", 'b', 0, G_OPTION_ARG_STRING, &opt_brokers,
      "Bootstrap servers", "HOST:PORT,..." },
    { "topic", 't', 0, G_OPTION_ARG_STRING, &opt_topic, "Topic", "NAME" },
    { "lines", 'n', 0, G_OPTION_ARG_INT64, &opt_lines,
      "Number of log lines to write", "N" },
    { "seed", 's', 0, G_OPTION_ARG_INT64, &opt_seed,
      "PRNG seed (default 1)", "S" },
    { "partitions", 'p', 0, G_OPTION_ARG_INT, &opt_partitions,
      "Spread over this many partitions (default: the topic's count)", "P" },
    { "first-partition", 0, 0, G_OPTION_ARG_INT, &opt_first,
      "Message i goes to partition (F + i) % P (default 0)", "F" },
    { "partition", 0, 0, G_OPTION_ARG_INT, &opt_only,
      "Send every message to this one partition", "N" },
    { "per-second", 0, 0, G_OPTION_ARG_INT, &opt_per_second,
      "Log time advances one second every N lines (default: 0-3 s per line)", "N" },
    { "empties", 0, 0, G_OPTION_ARG_INT, &opt_empties,
      "First send this many empty values", "N" },
    { "nulls", 0, 0, G_OPTION_ARG_INT, &opt_nulls,
      "First send this many null values (tombstones)", "N" },
    { "lines-per-value", 'k', 0, G_OPTION_ARG_INT, &opt_per_value,
      "Lines per Kafka message, joined by newlines (default 1)", "K" },
    { "truth", 'T', 0, G_OPTION_ARG_FILENAME, &opt_truth,
      "Write the exact per-minute ERROR counts here", "FILE" },
    { "start", 0, 0, G_OPTION_ARG_STRING, &opt_start,
      "First timestamp (default \"2017-07-30 14:00:00\")", "TIME" },
    { "malformed", 'm', 0, G_OPTION_ARG_INT, &opt_malformed,
      "Malformed lines per thousand (default 20)", "PERMILLE" },
    { "min-line-bytes", 0, 0, G_OPTION_ARG_INT, &opt_min_bytes,
      "Pad well-formed lines with words to at least N bytes (default 0: a"
      " different stream from the unpadded one)", "N" },
    { "rate", 'r', 0, G_OPTION_ARG_DOUBLE, &opt_rate,
      "About this many lines per second (default: as fast as possible)",
      "LINES_PER_SEC" },
    { "verbose", 'v', 0, G_OPTION_ARG_NONE, &verbose,
      "Show all librdkafka logs", NULL },
    { "shape", 0, 0, G_OPTION_ARG_STRING, &opt_shape,
      "Log analytics lines: access, syslog, json, ecs, logfmt or otlp (see kt-shapes.h)",
      "SHAPE" },
    { "keys", 0, 0, G_OPTION_ARG_INT, &opt_keys,
      "--shape: this many distinct services or hosts (default 100)", "N" },
    { "key-order", 0, 0, G_OPTION_ARG_STRING, &opt_key_order,
      "--shape: random (default) or cycle (line i has key i % N)", "ORDER" },
    { "by", 0, 0, G_OPTION_ARG_STRING, &opt_by,
      "--shape: the truth's fields (default: the shape's)", "F,..." },
    { "levels", 0, 0, G_OPTION_ARG_STRING, &opt_levels,
      "--shape: the levels counted (default: the shape's)", "L,..." },
    { "bucket", 0, 0, G_OPTION_ARG_INT, &opt_bucket,
      "--shape: the truth's bucket in minutes, 1, 5 or 60 (default: the shape's)", "M" },
    { "print-options", 0, 0, G_OPTION_ARG_NONE, &opt_print_options,
      "--shape: print the ktally options the truth is for, one a line, and exit", NULL },
    { "transactional", 0, 0, G_OPTION_ARG_NONE, &opt_transactional,
      "Write through a transactional producer", NULL },
    { "txn-messages", 0, 0, G_OPTION_ARG_INT, &opt_txn_messages,
      "--transactional: messages a transaction (default 100)", "N" },
    { "abort-every", 0, 0, G_OPTION_ARG_INT, &opt_abort_every,
      "--transactional: abort every K-th transaction (default 0: none)", "K" },
    { "hold-open-ms", 0, 0, G_OPTION_ARG_INT, &opt_hold_open_ms,
      "--transactional: keep the last transaction open MS after its records are"
      " in the log, then commit it", "MS" },
    { "leave-open", 0, 0, G_OPTION_ARG_NONE, &opt_leave_open,
      "--transactional: exit inside the last transaction (the broker aborts it)", NULL },
    { "txn-timeout-ms", 0, 0, G_OPTION_ARG_INT, &opt_txn_timeout_ms,
      "--transactional: transaction.timeout.ms (default 10000)", "MS" },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr (GOptionContext) ctx
      = g_option_context_new ("- write deterministic log lines to Kafka");
  g_autoptr (GError) error = NULL;
  g_autoptr (rd_kafka_conf_t) conf = NULL;
  g_autoptr (rd_kafka_t) rk = NULL;
  g_autoptr (rd_kafka_topic_t) rkt = NULL;
  g_autoptr (GArray) truth = kt_lines_truth_new ();
  g_autoptr (GString) value = g_string_sized_new (4096);
  Delivery delivery = { 0, 0, RD_KAFKA_RESP_ERR_NO_ERROR };
  guint64 n_error = 0, n_malformed = 0, n_other = 0, n_messages = 0;
  g_autoptr (GArray) pending = g_array_new (FALSE, FALSE, sizeof (gint64));
  guint64 n_txn = 0, n_aborted = 0, n_in_txn = 0;
  KtLines gen;
  gint64 t, started_us;
  char errstr[512];
  int partitions;

  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      g_printerr ("kt-gen: %s\n", error->message);
      return 2;
    }
  if (opt_shape != NULL)
    {
      gint64 start = 0;

      if (opt_start != NULL && !kt_lines_parse_time (opt_start, &start))
        {
          g_printerr ("kt-gen: --start wants \"YYYY-MM-DD HH:MM:SS\", a real"
                      " date and time\n");
          return 2;
        }
      if (opt_start == NULL && !kt_lines_parse_time ("2017-07-30 14:00:00", &start))
        return 1;
      if (opt_start == NULL && g_str_equal (opt_shape, "syslog"))
        start = 0;  /* two days ago: kt-shapes.h */
      if (opt_key_order != NULL && !g_str_equal (opt_key_order, "random")
          && !g_str_equal (opt_key_order, "cycle"))
        {
          g_printerr ("kt-gen: --key-order: random or cycle\n");
          return 2;
        }
      shaped = kt_shaped_new (opt_shape, (guint64) opt_seed, start, opt_per_second,
                              (guint) CLAMP (opt_malformed, 0, 1000), (guint) MAX (opt_keys, 1),
                              g_strcmp0 (opt_key_order, "cycle") == 0, opt_by, opt_levels,
                              opt_bucket, &error);
      if (shaped == NULL)
        {
          g_printerr ("kt-gen: %s\n", error->message);
          return 2;
        }
      if (opt_print_options)
        {
          g_auto (GStrv) options = kt_shaped_options (shaped);
          for (char **o = options; *o != NULL; o++)
            printf ("%s\n", *o);
          return 0;
        }
    }
  if (argc > 1 || opt_brokers == NULL || opt_topic == NULL || opt_lines < 0)
    {
      g_printerr ("kt-gen: --brokers, --topic and --lines are required"
                  " (see --help)\n");
      return 2;
    }
  if (opt_per_value < 1 || opt_malformed < 0 || opt_malformed > 1000
      || opt_partitions < 0 || opt_first < 0 || opt_rate < 0 || opt_min_bytes < 0)
    {
      g_printerr ("kt-gen: bad --lines-per-value, --malformed, --partitions,"
                  " --first-partition, --rate or --min-line-bytes\n");
      return 2;
    }
  if ((opt_transactional
       && (shaped != NULL || opt_txn_messages < 1 || opt_abort_every < 0
           || opt_hold_open_ms < 0 || opt_txn_timeout_ms < 1000
           || (opt_leave_open && opt_hold_open_ms > 0)))
      || (!opt_transactional && (opt_leave_open || opt_hold_open_ms > 0 || opt_abort_every > 0)))
    {
      g_printerr ("kt-gen: bad --transactional, --txn-messages, --abort-every, --hold-open-ms,"
                  " --leave-open or --txn-timeout-ms (not with --shape)\n");
      return 2;
    }
  if (!kt_lines_parse_time (opt_start ? opt_start : "2017-07-30 14:00:00", &t))
    {
      g_printerr ("kt-gen: --start wants \"YYYY-MM-DD HH:MM:SS\", a real"
                  " date and time\n");
      return 2;
    }

  conf = rd_kafka_conf_new ();
  rd_kafka_conf_set_log_cb (conf, log_cb);
  rd_kafka_conf_set_dr_msg_cb (conf, dr_cb);
  rd_kafka_conf_set_opaque (conf, &delivery);
  /* Big batches: the mock returns one producer batch per Fetch, so their
   * size sets how fast consumers can read it back. Idempotence keeps a
   * retried batch from being stored twice, which would falsify --truth. */
  if (!kt_support_conf_set (conf, "bootstrap.servers", opt_brokers)
      || !kt_support_conf_set (conf, "linger.ms", "20")
      || !kt_support_conf_set (conf, "batch.num.messages", "100000")
      || !kt_support_conf_set (conf, "batch.size", "1000000")
      || !kt_support_conf_set (conf, "queue.buffering.max.messages",
                               "1000000")
      || !kt_support_conf_set (conf, "queue.buffering.max.kbytes", "1048576")
      || !kt_support_conf_set (conf, "enable.idempotence", "true")
      || !kt_support_conf_set (conf, "message.timeout.ms", "120000"))
    return 2;
  if (opt_transactional)
    {
      /* Unique: another producer with this id would fence this one and
       * abort its open transaction at once, not at its timeout. */
      g_autofree gchar *id = g_strdup_printf ("kt-gen-%s-%d-%" G_GINT64_FORMAT, opt_topic,
                                              (int) getpid (), g_get_real_time ());
      g_autofree gchar *timeout = g_strdup_printf ("%d", opt_txn_timeout_ms);

      if (!kt_support_conf_set (conf, "transactional.id", id)
          || !kt_support_conf_set (conf, "transaction.timeout.ms", timeout)
          || !kt_support_conf_set (conf, "message.timeout.ms", timeout))
        return 2;
    }
  rk = rd_kafka_new (RD_KAFKA_PRODUCER, g_steal_pointer (&conf), errstr,
                     sizeof errstr);
  if (rk == NULL)
    {
      g_printerr ("kt-gen: rd_kafka_new: %s\n", errstr);
      return 1;
    }

  partitions = opt_partitions;
  if (partitions == 0)
    {
      partitions = topic_partition_count (rk, opt_topic);
      if (partitions <= 0)
        return 1;
    }
  rkt = rd_kafka_topic_new (rk, opt_topic, NULL);
  if (opt_transactional && !txn_ok (rd_kafka_init_transactions (rk, 60000), "init transactions"))
    return 1;

  for (int i = 0; i < opt_empties + opt_nulls; i++)
    {
      int partition = opt_only >= 0 ? opt_only : i % partitions;
      if (!produce (rk, rkt, partition, i < opt_empties ? "" : NULL, 0))
        return 1;
      n_messages++;
    }

  kt_lines_init (&gen, (guint64) opt_seed, t, opt_per_second, (guint) opt_malformed,
                 (guint) opt_min_bytes);
  started_us = g_get_monotonic_time ();
  for (gint64 line = 0; line < opt_lines;)
    {
      int partition = opt_only >= 0 ? opt_only
                      : (int) ((opt_first + (gint64) n_messages) % partitions);

      if (opt_transactional && n_in_txn == 0
          && !txn_ok (rd_kafka_begin_transaction (rk), "begin transaction"))
        return 1;
      g_string_truncate (value, 0);
      if (shaped != NULL)
        {
          guint64 kinds[3] = { 0 };
          guint n = (guint) MIN ((gint64) opt_per_value, opt_lines - line);

          kt_shaped_value (shaped, value, n, kinds);
          n_error += kinds[KT_LINES_ERROR];
          n_other += kinds[KT_LINES_OTHER];
          n_malformed += kinds[KT_LINES_MALFORMED];
          line += n;
        }
      for (int k = 0; shaped == NULL && k < opt_per_value && line < opt_lines; k++, line++)
        {
          if (k > 0)
            g_string_append_c (value, '\n');
          switch (shaped != NULL ? kt_shaped_next (shaped, value) : kt_lines_next (&gen, value, &t))
            {
            case KT_LINES_ERROR:
              n_error++;
              if (opt_transactional)
                g_array_append_val (pending, t);
              else if (shaped == NULL)
                kt_lines_truth_add (truth, t);
              break;
            case KT_LINES_OTHER:
              n_other++;
              break;
            case KT_LINES_MALFORMED:
              n_malformed++;
              break;
            }
        }
      if (!produce (rk, rkt, partition, value->str, value->len))
        return 1;
      n_messages++;
      n_in_txn++;

      if (opt_transactional && (n_in_txn == (guint64) opt_txn_messages || line >= opt_lines))
        {
          gboolean last = line >= opt_lines;
          gboolean abort = !last && opt_abort_every > 0 && (n_txn + 1) % opt_abort_every == 0;

          /* The records reach the log before the transaction ends: an
           * aborted one leaves them there (with its abort marker), an
           * open one holds the last stable offset below them. */
          if (rd_kafka_flush (rk, opt_txn_timeout_ms) != RD_KAFKA_RESP_ERR_NO_ERROR)
            {
              g_printerr ("kt-gen: flush inside a transaction timed out\n");
              return 1;
            }
          if (last && opt_leave_open)
            break;
          if (last && opt_hold_open_ms > 0)
            {
              printf ("open messages=%" G_GUINT64_FORMAT "\n", n_in_txn);
              fflush (stdout);
              g_usleep ((gulong) opt_hold_open_ms * 1000);
            }
          n_txn++;
          if (abort)
            {
              n_aborted++;
              if (!txn_ok (rd_kafka_abort_transaction (rk, 60000), "abort transaction"))
                return 1;
            }
          else
            {
              if (!txn_ok (rd_kafka_commit_transaction (rk, 60000), "commit transaction"))
                return 1;
              for (guint i = 0; i < pending->len; i++)
                kt_lines_truth_add (truth, g_array_index (pending, gint64, i));
            }
          g_array_set_size (pending, 0);
          n_in_txn = 0;
        }

      if (opt_rate > 0)
        {
          /* Pace on the total so far, so rounding never accumulates. */
          gint64 due_us = started_us + (gint64) ((double) line * 1e6 / opt_rate);
          gint64 now_us;
          while ((now_us = g_get_monotonic_time ()) < due_us)
            rd_kafka_poll (rk, (int) MAX (1, MIN (100, (due_us - now_us) / 1000)));
        }
      else
        rd_kafka_poll (rk, 0);
    }

  /* Delivery reports for the tail arrive during the flush; every message
   * is resolved one way or the other within message.timeout.ms. */
  if (rd_kafka_flush (rk, 150000) != RD_KAFKA_RESP_ERR_NO_ERROR)
    g_printerr ("kt-gen: flush timed out with %d messages in flight\n",
                rd_kafka_outq_len (rk));

  if (opt_truth != NULL
      && !(shaped != NULL ? kt_shaped_truth_write (shaped, opt_truth, &error)
                          : kt_lines_truth_write (truth, opt_truth, &error)))
    {
      g_printerr ("kt-gen: %s\n", error->message);
      return 1;
    }

  printf ("lines=%" G_GINT64_FORMAT " messages=%" G_GUINT64_FORMAT
          " errors=%" G_GUINT64_FORMAT " malformed=%" G_GUINT64_FORMAT
          " other=%" G_GUINT64_FORMAT " partitions=%d",
          opt_lines, n_messages, n_error, n_malformed, n_other, partitions);
  if (opt_transactional)
    printf (" transactions=%" G_GUINT64_FORMAT " aborted=%" G_GUINT64_FORMAT
            " left_open=%" G_GUINT64_FORMAT, n_txn, n_aborted,
            opt_leave_open ? n_in_txn : 0);
  printf ("\n");
  fflush (stdout);
  if (opt_leave_open && n_in_txn > 0)
    {
      /* No EndTxn, no close: as a producer killed inside its transaction.
       * Every record reached the log (flushed above). */
      _exit (delivery.failed > 0 || delivery.delivered != n_messages ? 1 : 0);
    }

  if (delivery.failed > 0 || delivery.delivered != n_messages)
    {
      g_printerr ("kt-gen: %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT
                  " messages not delivered (first error: %s)\n",
                  n_messages - delivery.delivered, n_messages,
                  delivery.failed ? rd_kafka_err2str (delivery.first_err)
                                  : "none reported");
      return 1;
    }
  return 0;
}
