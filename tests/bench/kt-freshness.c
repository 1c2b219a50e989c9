/* kt-freshness.c - how long a produced line takes to show in error_log.
 *
 * Freshness is what a dashboard user feels: the delay from a record's
 * produce time to its count being visible in error_log. This program
 * writes log lines at a steady rate and watches error_log, in one process
 * with one clock (CLOCK_MONOTONIC):
 *
 *   - produce time is cut into slices (--slice-ms, default 100 ms). Every
 *     line of slice k is stamped inside log minute START + k, so each
 *     minute bucket holds exactly one slice's lines and its final count
 *     (the slice's ERROR lines, kt-gen's generator) is known;
 *   - a watcher thread polls error_log every --poll-ms (default 10 ms)
 *     over its own MySQL connection and notes when each bucket's count
 *     first equals its slice's ERROR lines;
 *   - a slice's delay is that moment minus the time its last line was
 *     handed to librdkafka (produce(); linger.ms is --linger-ms, 5, so
 *     the producer's own batching is part of the delay, as for any
 *     producer). Slice ends fall at every phase of ktally's batch cycle,
 *     so the delays sample the delay of a record produced at a random
 *     moment;
 *   - the same delay is split at the delivery report of the slice's last
 *     line (the broker has appended it): produce -> acknowledged is the
 *     producer's and the broker's share, acknowledged -> visible ktally's
 *     (plus the poll). Reports are served by the producer's rd_kafka_poll,
 *     every millisecond or so while pacing.
 *
 * Resolution: a bucket is seen complete at the start of the first poll
 * after its commit, so each delay is an upper bound, above the truth by
 * at most one poll period plus one query (the report gives both). A count
 * above its slice's, or a bucket still short --wait-s seconds after the
 * last line was produced, fails (exit 1).
 *
 *   kt-freshness --brokers B --topic T --db-host H --db-port P --db-user U
 *                --db-password PW --db NAME --rate LINES_PER_S --seconds S
 *                [--slice-ms 100] [--poll-ms 10] [--linger-ms 5] [--seed S]
 *                [--start "2017-08-01 00:00:00"] [--truth FILE]
 *                [--delays FILE] [--wait-s 60]
 *
 * One line of key=value results goes to stdout:
 *   lines= records= errors= slices= (those with an ERROR line) rate=
 *   p50_ms= p90_ms= p99_ms= max_ms= min_ms= (produce -> visible)
 *   ack_p50_ms= ack_p99_ms= after_ack_p50_ms= after_ack_p99_ms=
 *   poll_ms= query_ms_max= check=ok
 * --truth writes kt-gen's truth format, --delays the three delays (ms) of
 * each slice, tab-separated.
 * The lines are kt-gen's (tests/support/kt-lines.c), one per record, sent
 * round-robin over the topic's partitions. Benchmark infrastructure
 * (scripts/bench): never linked into ktally. */
#include <stdio.h>
#include <string.h>

#include <glib.h>
#include <librdkafka/rdkafka.h>
#include <mysql.h>

#include "kt-lines.h"
#include "kt-support.h"

typedef struct
{
  /* Set by the producer once the slice is complete, read by the watcher. */
  guint64 truth;      /* ERROR lines of the slice */
  gint64  last_us;    /* monotonic time its last line was produced */
  gboolean done;
  /* The watcher's. */
  guint64 seen;       /* highest count seen */
  gint64  seen_at;    /* poll start at which seen == truth first; 0: not yet */
} Slice;

typedef struct
{
  GMutex   lock;
  Slice   *slices;
  guint    n_slices;
  guint    produced;      /* slices complete on the producer side */
  gboolean producing;     /* FALSE once every line was produced */
  gint64   deadline_us;   /* the watcher gives up here (set at the end) */
  char     start[20];     /* log time of slice 0's minute */
  MYSQL   *db;
  int      poll_ms;
  /* Results of the watcher. */
  guint64  polls;
  gint64   first_poll_us, last_poll_us, query_us_max;
  char    *failure;       /* NULL: fine */
} Watch;

static gint64
now_us (void)
{
  return g_get_monotonic_time ();
}

/* The first failure wins; the producer checks it between slices. */
static void
fail (Watch *w, char *message)
{
  if (!g_atomic_pointer_compare_and_exchange (&w->failure, NULL, message))
    g_free (message);
}

/* Polls until every slice is complete, a count is wrong, or time is up. */
static gpointer
watch_thread (gpointer data)
{
  Watch *w = data;
  guint lo = 0;  /* every slice below lo is complete */

  mysql_thread_init ();
  for (;;)
    {
      g_autofree char *sql = NULL;
      gint64 t0 = now_us (), t1;
      MYSQL_RES *res;
      MYSQL_ROW row;
      guint produced;
      gboolean producing;

      g_mutex_lock (&w->lock);
      produced = w->produced;
      producing = w->producing;
      g_mutex_unlock (&w->lock);
      if (!producing && lo >= w->n_slices)
        break;
      if (!producing && t0 > w->deadline_us)
        {
          fail (w, g_strdup_printf ("slice %u of %u (minute %u after %s) still at %"
                                        G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT
                                        " ERROR lines, long after its last line",
                                        lo, w->n_slices, lo, w->start, w->slices[lo].seen,
                                        w->slices[lo].truth));
          break;
        }

      sql = g_strdup_printf ("SELECT TIMESTAMPDIFF(MINUTE, '%s', log_time), log_count "
                             "FROM error_log WHERE log_time >= '%s' + INTERVAL %u MINUTE",
                             w->start, w->start, lo);
      if (mysql_query (w->db, sql) != 0 || (res = mysql_store_result (w->db)) == NULL)
        {
          fail (w, g_strdup_printf ("cannot read error_log: %s", mysql_error (w->db)));
          break;
        }
      t1 = now_us ();
      if (w->polls++ == 0)
        w->first_poll_us = t0;
      w->last_poll_us = t0;
      w->query_us_max = MAX (w->query_us_max, t1 - t0);

      g_mutex_lock (&w->lock);
      while ((row = mysql_fetch_row (res)) != NULL)
        {
          gint64 k = g_ascii_strtoll (row[0], NULL, 10);
          guint64 count = g_ascii_strtoull (row[1], NULL, 10);
          Slice *s;

          if (k < 0 || k >= w->n_slices)
            {
              fail (w, g_strdup_printf ("error_log has a count in minute %s, outside "
                                            "the %u written", row[0], w->n_slices));
              break;
            }
          s = &w->slices[k];
          s->seen = MAX (s->seen, count);
          if (s->done && count > s->truth)
            {
              fail (w, g_strdup_printf ("minute %" G_GINT64_FORMAT " of %s: error_log says %"
                                            G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT
                                            " ERROR lines were written", k, w->start, count,
                                            s->truth));
              break;
            }
          /* The poll's start: the commit was visible by then (an upper
           * bound on when it became visible). */
          if (s->done && count == s->truth && s->seen_at == 0)
            s->seen_at = t0;
        }
      /* A slice without an ERROR line has no row to wait for (and no
       * delay to report). */
      while (lo < produced && (w->slices[lo].seen_at != 0 || w->slices[lo].truth == 0))
        lo++;
      g_mutex_unlock (&w->lock);
      mysql_free_result (res);
      if (g_atomic_pointer_get (&w->failure) != NULL)
        break;
      g_usleep ((gulong) w->poll_ms * 1000);
    }
  mysql_thread_end ();
  return NULL;
}

/* Delivery reports arrive in the producer's thread (rd_kafka_poll and
 * flush): no lock. */
typedef struct
{
  guint64  failed;
  gint64  *acked_us;  /* per slice: when its last line's report came */
} Delivery;

static void
dr_cb (rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
  Delivery *d = opaque;

  (void) rk;
  if (m->err)
    d->failed++;
  else if (m->_private != NULL)  /* the msg_opaque: slice + 1 of a slice's last line */
    d->acked_us[GPOINTER_TO_UINT (m->_private) - 1] = now_us ();
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

/* Nearest-rank percentile of sorted @v. */
static double
percentile (const double *v, guint n, double p)
{
  guint rank = (guint) (p / 100.0 * n + 0.999999);
  return v[CLAMP (rank, 1, n) - 1];
}

int
main (int argc, char **argv)
{
  g_autofree char *brokers = NULL, *topic = NULL, *host = NULL, *user = NULL,
                  *password = NULL, *dbname = NULL, *start_text = NULL,
                  *truth_path = NULL, *delays_path = NULL;
  int port = 3306, slice_ms = 100, poll_ms = 10, linger_ms = 5, wait_s = 60;
  double rate = 0, seconds = 0;
  gint64 seed = 1;
  GOptionEntry entries[] = {
    { "brokers", 'b', 0, G_OPTION_ARG_STRING, &brokers, "Bootstrap servers", "LIST" },
    { "topic", 't', 0, G_OPTION_ARG_STRING, &topic, "Topic", "NAME" },
    { "db-host", 0, 0, G_OPTION_ARG_STRING, &host, "MySQL host", "HOST" },
    { "db-port", 0, 0, G_OPTION_ARG_INT, &port, "MySQL port", "PORT" },
    { "db-user", 0, 0, G_OPTION_ARG_STRING, &user, "MySQL user", "USER" },
    { "db-password", 0, 0, G_OPTION_ARG_STRING, &password, "MySQL password", "PW" },
    { "db", 0, 0, G_OPTION_ARG_STRING, &dbname, "Database with ktally's error_log", "NAME" },
    { "rate", 'r', 0, G_OPTION_ARG_DOUBLE, &rate, "Lines per second", "N" },
    { "seconds", 's', 0, G_OPTION_ARG_DOUBLE, &seconds, "For this long", "S" },
    { "slice-ms", 0, 0, G_OPTION_ARG_INT, &slice_ms, "Produce time per minute bucket (100)", "MS" },
    { "poll-ms", 0, 0, G_OPTION_ARG_INT, &poll_ms, "Pause between polls of error_log (10)", "MS" },
    { "linger-ms", 0, 0, G_OPTION_ARG_INT, &linger_ms, "The producer's linger.ms (5)", "MS" },
    { "seed", 0, 0, G_OPTION_ARG_INT64, &seed, "kt-gen's --seed (1)", "S" },
    { "start", 0, 0, G_OPTION_ARG_STRING, &start_text,
      "Log time of the first bucket (default \"2017-08-01 00:00:00\")", "TIME" },
    { "truth", 'T', 0, G_OPTION_ARG_FILENAME, &truth_path, "Write the truth here", "FILE" },
    { "delays", 0, 0, G_OPTION_ARG_FILENAME, &delays_path, "Write each slice's delay (ms)", "FILE" },
    { "wait-s", 0, 0, G_OPTION_ARG_INT, &wait_s,
      "Fail when a bucket is short this long after the last line (60)", "S" },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- freshness of ktally's error_log");
  g_autoptr (GError) error = NULL;
  g_autoptr (rd_kafka_conf_t) conf = rd_kafka_conf_new ();
  g_autoptr (rd_kafka_t) rk = NULL;
  g_autoptr (rd_kafka_topic_t) rkt = NULL;
  g_autoptr (KtSupportMetadata) md = NULL;
  g_autoptr (GString) line = g_string_sized_new (256);
  g_autoptr (GArray) truth = kt_lines_truth_new ();
  g_autofree double *delays = NULL, *acks = NULL, *after = NULL;
  g_autofree char *linger = NULL;
  Watch w = { 0 };
  GThread *watcher;
  KtLines gen;
  Delivery delivery = { 0 };
  guint64 n_lines, per_slice, errors = 0, line_no = 0;
  gint64 start, started_us;
  char errstr[512];
  int n_parts;
  guint n_measured = 0;
  unsigned int timeout = 10;

  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      g_printerr ("kt-freshness: %s\n", error->message);
      return 2;
    }
  if (brokers == NULL || topic == NULL || host == NULL || user == NULL || dbname == NULL
      || rate <= 0 || seconds <= 0 || slice_ms < 1 || poll_ms < 0 || linger_ms < 0
      || !kt_lines_parse_time (start_text ? start_text : "2017-08-01 00:00:00", &start)
      || start % 60 != 0)
    {
      g_printerr ("kt-freshness: --brokers, --topic, --db-host, --db-user, --db, --rate and "
                  "--seconds are required; --start must be a whole minute\n");
      return 2;
    }
  per_slice = (guint64) (rate * slice_ms / 1000.0 + 0.5);
  w.n_slices = (guint) (seconds * 1000.0 / slice_ms + 0.5);
  if (per_slice < 1 || w.n_slices < 1)
    {
      g_printerr ("kt-freshness: --rate x --slice-ms gives no line per slice\n");
      return 2;
    }
  n_lines = per_slice * w.n_slices;

  /* MySQL first: a wrong database is better found before producing. */
  w.db = mysql_init (NULL);
  mysql_options (w.db, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
  if (mysql_real_connect (w.db, host, user, password, dbname, (unsigned) port, NULL, 0) == NULL
      || mysql_query (w.db, "SET time_zone = '+00:00'") != 0)
    {
      g_printerr ("kt-freshness: cannot connect to %s:%d/%s: %s\n", host, port, dbname,
                  mysql_error (w.db));
      return 1;
    }

  linger = g_strdup_printf ("%d", linger_ms);
  rd_kafka_conf_set_dr_msg_cb (conf, dr_cb);
  rd_kafka_conf_set_opaque (conf, &delivery);
  if (!kt_support_conf_set (conf, "bootstrap.servers", brokers)
      || !kt_support_conf_set (conf, "linger.ms", linger)
      || !kt_support_conf_set (conf, "batch.num.messages", "100000")
      || !kt_support_conf_set (conf, "queue.buffering.max.messages", "1000000")
      || !kt_support_conf_set (conf, "enable.idempotence", "true"))
    return 2;
  rk = rd_kafka_new (RD_KAFKA_PRODUCER, g_steal_pointer (&conf), errstr, sizeof errstr);
  if (rk == NULL)
    {
      g_printerr ("kt-freshness: rd_kafka_new: %s\n", errstr);
      return 1;
    }
  rkt = rd_kafka_topic_new (rk, topic, NULL);
  if (rd_kafka_metadata (rk, 0, rkt, &md, 10000) != RD_KAFKA_RESP_ERR_NO_ERROR
      || md->topic_cnt != 1 || md->topics[0].err || md->topics[0].partition_cnt <= 0)
    {
      g_printerr ("kt-freshness: no metadata for topic %s\n", topic);
      return 1;
    }
  n_parts = md->topics[0].partition_cnt;

  g_mutex_init (&w.lock);
  w.slices = g_new0 (Slice, w.n_slices);
  delivery.acked_us = g_new0 (gint64, w.n_slices);
  w.producing = TRUE;
  w.poll_ms = poll_ms;
  kt_lines_format_time (start, w.start);
  watcher = g_thread_new ("watch", watch_thread, &w);

  kt_lines_init (&gen, (guint64) seed, start, 0, 20, 0);
  started_us = now_us ();
  for (guint k = 0; k < w.n_slices && g_atomic_pointer_get (&w.failure) == NULL; k++)
    {
      guint64 slice_errors = 0;

      for (guint64 j = 0; j < per_slice; j++, line_no++)
        {
          /* Spread over the bucket's minute; the time inside it does not
           * matter, the minute is the slice. */
          gint64 t = start + (gint64) k * 60 + (gint64) (j * 60 / per_slice);
          gint64 due = started_us + (gint64) ((double) line_no * 1e6 / rate), now;

          while ((now = now_us ()) < due)
            rd_kafka_poll (rk, (int) MAX (1, MIN (100, (due - now) / 1000)));
          g_string_truncate (line, 0);
          if (kt_lines_append (&gen, line, t) == KT_LINES_ERROR)
            {
              slice_errors++;
              kt_lines_truth_add (truth, t);
            }
          while (rd_kafka_produce (rkt, (int) (line_no % (guint64) n_parts), RD_KAFKA_MSG_F_COPY,
                                   line->str, line->len, NULL, 0,
                                   j + 1 == per_slice ? GUINT_TO_POINTER (k + 1) : NULL) != 0)
            {
              if (rd_kafka_last_error () != RD_KAFKA_RESP_ERR__QUEUE_FULL)
                {
                  g_printerr ("kt-freshness: produce: %s\n",
                              rd_kafka_err2str (rd_kafka_last_error ()));
                  return 1;
                }
              rd_kafka_poll (rk, 10);
            }
        }
      g_mutex_lock (&w.lock);
      w.slices[k].truth = slice_errors;
      w.slices[k].last_us = now_us ();
      w.slices[k].done = TRUE;
      w.produced = k + 1;
      g_mutex_unlock (&w.lock);
      errors += slice_errors;
      rd_kafka_poll (rk, 0);
    }
  double took = (double) (now_us () - started_us) / 1e6;
  rd_kafka_flush (rk, 60000);
  g_mutex_lock (&w.lock);
  w.producing = FALSE;
  w.deadline_us = now_us () + (gint64) wait_s * G_USEC_PER_SEC;
  g_mutex_unlock (&w.lock);
  g_thread_join (watcher);
  mysql_close (w.db);

  if (delivery.failed > 0 || rd_kafka_outq_len (rk) > 0)
    {
      g_printerr ("kt-freshness: %" G_GUINT64_FORMAT " lines were not delivered\n",
                  delivery.failed + (guint64) rd_kafka_outq_len (rk));
      return 1;
    }
  if (truth_path != NULL && !kt_lines_truth_write (truth, truth_path, &error))
    {
      g_printerr ("kt-freshness: %s\n", error->message);
      return 1;
    }
  if (w.failure != NULL)
    {
      g_printerr ("kt-freshness: %s\n", w.failure);
      return 1;
    }

  /* Per slice with an ERROR line: produce -> visible (what a user feels),
   * produce -> acknowledged (the producer's and the broker's share) and
   * acknowledged -> visible (ktally's share, plus one poll). */
  delays = g_new (double, w.n_slices);
  acks = g_new (double, w.n_slices);
  after = g_new (double, w.n_slices);
  for (guint k = 0; k < w.n_slices; k++)
    if (w.slices[k].truth > 0)
      {
        delays[n_measured] = (double) (w.slices[k].seen_at - w.slices[k].last_us) / 1000.0;
        acks[n_measured] = (double) (delivery.acked_us[k] - w.slices[k].last_us) / 1000.0;
        after[n_measured] = (double) (w.slices[k].seen_at - delivery.acked_us[k]) / 1000.0;
        n_measured++;
      }
  if (n_measured == 0)
    {
      g_printerr ("kt-freshness: no slice had an ERROR line: raise --rate or --slice-ms\n");
      return 1;
    }
  if (delays_path != NULL)
    {
      g_autoptr (GString) out = g_string_new (NULL);
      for (guint k = 0; k < n_measured; k++)
        g_string_append_printf (out, "%.3f\t%.3f\t%.3f\n", delays[k], acks[k], after[k]);
      if (!g_file_set_contents (delays_path, out->str, (gssize) out->len, &error))
        {
          g_printerr ("kt-freshness: %s\n", error->message);
          return 1;
        }
    }
  qsort (delays, n_measured, sizeof (double), cmp_double);
  qsort (acks, n_measured, sizeof (double), cmp_double);
  qsort (after, n_measured, sizeof (double), cmp_double);
  printf ("lines=%" G_GUINT64_FORMAT " records=%" G_GUINT64_FORMAT " errors=%" G_GUINT64_FORMAT
          " slices=%u rate=%.0f p50_ms=%.1f p90_ms=%.1f p99_ms=%.1f max_ms=%.1f min_ms=%.1f"
          " ack_p50_ms=%.1f ack_p99_ms=%.1f after_ack_p50_ms=%.1f after_ack_p99_ms=%.1f"
          " poll_ms=%.2f query_ms_max=%.2f check=ok\n",
          n_lines, n_lines, errors, n_measured, (double) n_lines / took,
          percentile (delays, n_measured, 50), percentile (delays, n_measured, 90),
          percentile (delays, n_measured, 99), delays[n_measured - 1], delays[0],
          percentile (acks, n_measured, 50), percentile (acks, n_measured, 99),
          percentile (after, n_measured, 50), percentile (after, n_measured, 99),
          w.polls > 1 ? (double) (w.last_poll_us - w.first_poll_us) / 1000.0 / (double) (w.polls - 1)
                      : 0.0,
          (double) w.query_us_max / 1000.0);
  g_free (delivery.acked_us);
  g_free (w.failure);
  g_free (w.slices);
  g_mutex_clear (&w.lock);
  return 0;
}
