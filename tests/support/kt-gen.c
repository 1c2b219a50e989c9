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
 *          [--rate LINES_PER_SEC]
 *
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

#include <glib.h>
#include <librdkafka/rdkafka.h>

#include "kt-support.h"

/* ---------------------------------------------------------------------- */
/* Deterministic randomness */

/* splitmix64: tiny, fast and specified bit for bit, so a seed means the
 * same data everywhere (rand() differs between C libraries). */
static inline guint64
prng_next (guint64 *state)
{
  guint64 z = (*state += G_GUINT64_CONSTANT (0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * G_GUINT64_CONSTANT (0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * G_GUINT64_CONSTANT (0x94d049bb133111eb);
  return z ^ (z >> 31);
}

/* Uniform in [0, n): the bias of a plain modulo is below 2^-50 for the
 * small n used here, and a plain modulo keeps the stream easy to port. */
static inline guint
prng_below (guint64 *state, guint n)
{
  return (guint) (prng_next (state) % n);
}

/* ---------------------------------------------------------------------- */
/* Calendar arithmetic on a proleptic Gregorian UTC clock */

/* Howard Hinnant's days_from_civil / civil_from_days: exact, no time zone
 * or locale involved, and far faster than strftime per line. */
static gint64
days_from_civil (gint64 y, unsigned m, unsigned d)
{
  y -= m <= 2;
  gint64 era = (y >= 0 ? y : y - 399) / 400;
  unsigned yoe = (unsigned) (y - era * 400);
  unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + (gint64) doe - 719468;
}

static void
civil_from_days (gint64 z, int *y, int *m, int *d)
{
  z += 719468;
  gint64 era = (z >= 0 ? z : z - 146096) / 146097;
  unsigned doe = (unsigned) (z - era * 146097);
  unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  unsigned mp = (5 * doy + 2) / 153;
  *d = (int) (doy - (153 * mp + 2) / 5 + 1);
  *m = (int) (mp < 10 ? mp + 3 : mp - 9);
  *y = (int) ((gint64) yoe + era * 400 + (*m <= 2));
}

typedef struct
{
  char date[11];  /* YYYY-MM-DD */
  char time[9];   /* HH:MM:SS */
} Stamp;

static void
stamp_from_seconds (gint64 t, Stamp *s)
{
  gint64 days = t >= 0 ? t / 86400 : (t - 86399) / 86400;
  int secs = (int) (t - days * 86400);
  int y, m, d;

  civil_from_days (days, &y, &m, &d);
  g_snprintf (s->date, sizeof s->date, "%04d-%02d-%02d", y, m, d);
  g_snprintf (s->time, sizeof s->time, "%02d:%02d:%02d", secs / 3600,
              secs / 60 % 60, secs % 60);
}

static gboolean
parse_start (const char *text, gint64 *out)
{
  int y, mo, d, h, mi, s, len = 0;
  Stamp back;

  if (sscanf (text, "%4d-%2d-%2d %2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &s,
              &len) != 6
      || text[len] != '\0' || y < 1000 || mo < 1 || mo > 12 || d < 1
      || h > 23 || mi > 59 || s > 59)
    return FALSE;
  *out = days_from_civil (y, (unsigned) mo, (unsigned) d) * 86400
         + h * 3600 + mi * 60 + s;
  /* Round-trip to refuse dates like 2017-02-30. */
  stamp_from_seconds (*out, &back);
  g_autofree gchar *again = g_strdup_printf ("%s %s", back.date, back.time);
  return strcmp (again, text) == 0;
}

/* ---------------------------------------------------------------------- */
/* The lines */

typedef enum
{
  LINE_ERROR,      /* well-formed and counted */
  LINE_OTHER,      /* well-formed, another level */
  LINE_MALFORMED,  /* never counted */
} LineKind;

/* Levels of well-formed lines, weights in per cent: ERROR ~30%. */
static const struct
{
  const char *level;
  guint weight;
} levels[] = {
  { "ERROR", 30 }, { "INFO", 30 }, { "WARN", 17 }, { "DEBUG", 13 },
  { "error", 5 },  { "ERRORS", 5 },
};

static const char *const words[] = {
  "disk",    "quota",   "exceeded", "request", "timeout", "user",
  "session", "expired", "retry",    "cache",   "miss",    "payment",
  "ERROR",   "failed",  "ok",       "queue",   "full",    "db",
};

/* Appends a message of 1-4 words and a number. Words include "ERROR" so
 * that only the level field decides what counts. */
static void
append_message (GString *out, guint64 *rng)
{
  guint nwords = 1 + prng_below (rng, 4);

  for (guint i = 0; i < nwords; i++)
    {
      if (i > 0)
        g_string_append_c (out, ' ');
      g_string_append (out, words[prng_below (rng, G_N_ELEMENTS (words))]);
    }
  g_string_append_printf (out, " %u", prng_below (rng, 100000));
}

/* Appends one malformed line. Those with a readable date use the current
 * clock, so that a parser that wrongly accepts them corrupts a real
 * minute's count. */
static void
append_malformed (GString *out, const Stamp *s, guint64 *rng)
{
  switch (prng_below (rng, 8))
    {
    case 0: /* missing level */
      g_string_append_printf (out, "%s %s", s->date, s->time);
      break;
    case 1: /* impossible date */
      g_string_append_printf (out, "%.4s-02-30 %s ERROR bad date", s->date,
                              s->time);
      break;
    case 2: /* impossible time */
      g_string_append_printf (out, "%s 25:61:00 ERROR bad time", s->date);
      break;
    case 3: /* 24:00:00 is not a time of day here */
      g_string_append_printf (out, "%s 24:00:00 ERROR bad time", s->date);
      break;
    case 4: /* leading blank */
      g_string_append_printf (out, " %s %s ERROR leading blank", s->date,
                              s->time);
      break;
    case 5: /* two spaces before the level */
      g_string_append_printf (out, "%s %s  ERROR two spaces", s->date,
                              s->time);
      break;
    case 6: /* garbage */
      g_string_append (out, "hello world");
      break;
    default: /* a number as the level */
      g_string_append_printf (out, "%s %s 123 x", s->date, s->time);
      break;
    }
}

/* Appends one line and says what kind it was. */
static LineKind
append_line (GString *out, gint64 t, guint permille, guint64 *rng)
{
  Stamp s;
  guint pick;
  gsize i;

  stamp_from_seconds (t, &s);
  if (prng_below (rng, 1000) < permille)
    {
      append_malformed (out, &s, rng);
      return LINE_MALFORMED;
    }
  pick = prng_below (rng, 100);
  for (i = 0; i + 1 < G_N_ELEMENTS (levels) && pick >= levels[i].weight; i++)
    pick -= levels[i].weight;
  g_string_append_printf (out, "%s %s %s ", s.date, s.time, levels[i].level);
  append_message (out, rng);
  return i == 0 ? LINE_ERROR : LINE_OTHER;
}

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

/* ---------------------------------------------------------------------- */
/* Truth: minutes arrive in ascending order (time never goes back), so a
 * flat array of (minute, count) is enough. */

typedef struct
{
  gint64 minute;  /* seconds since the epoch, multiple of 60 */
  guint64 count;
} MinuteCount;

static void
truth_count (GArray *truth, gint64 t)
{
  gint64 minute = t - ((t % 60) + 60) % 60;

  if (truth->len == 0
      || g_array_index (truth, MinuteCount, truth->len - 1).minute != minute)
    {
      MinuteCount mc = { minute, 0 };
      g_array_append_val (truth, mc);
    }
  g_array_index (truth, MinuteCount, truth->len - 1).count++;
}

static gboolean
write_truth (const char *path, GArray *truth, GError **error)
{
  g_autoptr (GString) out = g_string_sized_new (truth->len * 24 + 1);

  for (guint i = 0; i < truth->len; i++)
    {
      const MinuteCount *mc = &g_array_index (truth, MinuteCount, i);
      Stamp s;

      stamp_from_seconds (mc->minute, &s);
      g_string_append_printf (out, "%s %s\t%" G_GUINT64_FORMAT "\n", s.date,
                              s.time, mc->count);
    }
  return g_file_set_contents (path, out->str, (gssize) out->len, error);
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
  int opt_empties = 0, opt_nulls = 0, opt_per_second = 0, in_second = 0;
  int opt_per_value = 1;
  int opt_malformed = 20;
  double opt_rate = 0;
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
    { "rate", 'r', 0, G_OPTION_ARG_DOUBLE, &opt_rate,
      "About this many lines per second (default: as fast as possible)",
      "LINES_PER_SEC" },
    { "verbose", 'v', 0, G_OPTION_ARG_NONE, &verbose,
      "Show all librdkafka logs", NULL },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr (GOptionContext) ctx
      = g_option_context_new ("- write deterministic log lines to Kafka");
  g_autoptr (GError) error = NULL;
  g_autoptr (rd_kafka_conf_t) conf = NULL;
  g_autoptr (rd_kafka_t) rk = NULL;
  g_autoptr (rd_kafka_topic_t) rkt = NULL;
  g_autoptr (GArray) truth = g_array_new (FALSE, FALSE, sizeof (MinuteCount));
  g_autoptr (GString) value = g_string_sized_new (4096);
  Delivery delivery = { 0, 0, RD_KAFKA_RESP_ERR_NO_ERROR };
  guint64 n_error = 0, n_malformed = 0, n_other = 0, n_messages = 0;
  guint64 rng;
  gint64 t, started_us;
  char errstr[512];
  int partitions;

  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      g_printerr ("kt-gen: %s\n", error->message);
      return 2;
    }
  if (argc > 1 || opt_brokers == NULL || opt_topic == NULL || opt_lines < 0)
    {
      g_printerr ("kt-gen: --brokers, --topic and --lines are required"
                  " (see --help)\n");
      return 2;
    }
  if (opt_per_value < 1 || opt_malformed < 0 || opt_malformed > 1000
      || opt_partitions < 0 || opt_first < 0 || opt_rate < 0)
    {
      g_printerr ("kt-gen: bad --lines-per-value, --malformed, --partitions,"
                  " --first-partition or --rate\n");
      return 2;
    }
  if (!parse_start (opt_start ? opt_start : "2017-07-30 14:00:00", &t))
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

  for (int i = 0; i < opt_empties + opt_nulls; i++)
    {
      int partition = opt_only >= 0 ? opt_only : i % partitions;
      if (!produce (rk, rkt, partition, i < opt_empties ? "" : NULL, 0))
        return 1;
      n_messages++;
    }

  rng = (guint64) opt_seed;
  started_us = g_get_monotonic_time ();
  for (gint64 line = 0; line < opt_lines;)
    {
      int partition = opt_only >= 0 ? opt_only
                      : (int) ((opt_first + (gint64) n_messages) % partitions);

      g_string_truncate (value, 0);
      for (int k = 0; k < opt_per_value && line < opt_lines; k++, line++)
        {
          if (k > 0)
            g_string_append_c (value, '\n');
          switch (append_line (value, t, (guint) opt_malformed, &rng))
            {
            case LINE_ERROR:
              n_error++;
              truth_count (truth, t);
              break;
            case LINE_OTHER:
              n_other++;
              break;
            case LINE_MALFORMED:
              n_malformed++;
              break;
            }
          /* A busy service logs thousands of lines a second; the default
           * (0-3 s apart) spreads a few million lines over weeks. */
          if (opt_per_second <= 0)
            t += prng_below (&rng, 4);
          else if (++in_second == opt_per_second)
            {
              t++;
              in_second = 0;
            }
        }
      if (!produce (rk, rkt, partition, value->str, value->len))
        return 1;
      n_messages++;

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

  if (opt_truth != NULL && !write_truth (opt_truth, truth, &error))
    {
      g_printerr ("kt-gen: %s\n", error->message);
      return 1;
    }

  printf ("lines=%" G_GINT64_FORMAT " messages=%" G_GUINT64_FORMAT
          " errors=%" G_GUINT64_FORMAT " malformed=%" G_GUINT64_FORMAT
          " other=%" G_GUINT64_FORMAT " partitions=%d\n",
          opt_lines, n_messages, n_error, n_malformed, n_other, partitions);
  fflush (stdout);

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
