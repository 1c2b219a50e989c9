/* metrics.c - the metrics registry: counters, gauges, one histogram.
 *
 * Written by the batch loop, read by the HTTP threads. One mutex guards
 * everything: the writers hold it for a handful of additions, the readers
 * for one render into memory, never across I/O. The series are few and
 * fixed (plus one pair per partition), so plain fields beat a generic
 * registry of metric objects. */
#include "metrics.h"

#include <string.h>

#define MAX_CAUSES        16
#define HEALTH_INTERVALS  3
#define HEALTH_MIN_S      10.0
/* /readyz's --health-max-commit-age by default: 3 intervals, and never
 * less than a minute (a first batch over a backlog takes a while). */
#define READY_MIN_S       60.0

/* Upper bounds of ktally_batch_duration_seconds, in seconds: a batch of a
 * few records commits in milliseconds, a full one (--max-per-partition on
 * every partition) in seconds, and 30 s is the source's stall limit. */
static const double bucket_bounds[] = {
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
};
/* Written out once, as Prometheus's clients print them: "le" values are
 * compared as strings by some tools, so "1" must not become "1.0". */
static const char *const bucket_names[] = {
  "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10", "30",
};
#define N_BUCKETS G_N_ELEMENTS (bucket_bounds)
G_STATIC_ASSERT (G_N_ELEMENTS (bucket_names) == N_BUCKETS);

static const char *const result_names[] = { "committed", "fenced", "failed", "idle" };
G_STATIC_ASSERT (G_N_ELEMENTS (result_names) == KT_BATCH_N_RESULTS);

/* Known causes are shown at 0 from the start: rate() and alerts then work
 * before the first retry instead of seeing a series appear. */
static const char *const seeded_causes[] = { "kafka", "mysql", "deadlock", "other" };

struct _KtMetrics
{
  char          *job;
  double         interval;
  KtMetricsClock wall, monotonic;
  gint64         created;       /* monotonic */
  char          *build_info[3]; /* version, librdkafka, mariadb_client; NULL: unset */
  char          *db_server;  /* "host:port" of the batch connection; NULL: none yet */
  guint64        db_server_changes;
  KtProcessFunc  process;       /* NULL: no process_* series */

  GMutex         lock;
  guint64        batches[KT_BATCH_N_RESULTS];
  guint64        records, bytes;
  guint64        lines_error, lines_other, lines_malformed, lines_folded;
  guint64        dead_kept, dead_dropped;
  guint64        bucket_counts[N_BUCKETS + 1];  /* not cumulative; last: +Inf */
  double         duration_sum;
  guint64        duration_count;
  GArray        *partitions;    /* KtPartitionRow, by topic then partition */
  GPtrArray     *causes;        /* char *, in order of first use */
  GArray        *cause_counts;  /* guint64, parallel to causes */
  guint64        data_loss_events, data_lost_offsets;
  gint64         last_commit;   /* wall */
  gint64         last_success;  /* monotonic; 0: none */
  KtBatchResult  last_success_result;
  gint64         last_failure;  /* monotonic; 0: none */
  char           last_error[200];
  KtRecentBatch     recent[KT_METRICS_RECENT];  /* ring */
  guint          recent_next, recent_len;
  gint64         alive;         /* monotonic: the batch loop's last turn; 0: none yet */
  gint64         max_lag;       /* /readyz; -1: no bound */
  double         max_commit_age;  /* /readyz, seconds; 0: from the interval */
  double         max_stall;     /* /livez, seconds */
  int            schema_version;  /* 0: the tables are not ready yet */
  gboolean       reload_ok;     /* the last load of the settings (start, SIGHUP) */
  gboolean       restart_pending;  /* the last reload found changes that need a restart */
  gint64         loaded;        /* wall: the last successful load of the settings */
};

static gint64
now_wall (KtMetrics *self)
{
  return self->wall != NULL ? self->wall () : g_get_real_time ();
}

static gint64
now_monotonic (KtMetrics *self)
{
  return self->monotonic != NULL ? self->monotonic () : g_get_monotonic_time ();
}

static void
partition_row_clear (gpointer p)
{
  KtPartitionRow *row = p;
  g_clear_pointer (&row->topic, g_free);
}

KtMetrics *
kt_metrics_new (const char *job, double interval)
{
  KtMetrics *self;

  g_return_val_if_fail (job != NULL, NULL);

  self = g_new0 (KtMetrics, 1);
  self->job = g_strdup (job);
  self->interval = interval;
  self->process = kt_process_sample;
  self->created = g_get_monotonic_time ();
  g_mutex_init (&self->lock);
  self->partitions = g_array_new (FALSE, TRUE, sizeof (KtPartitionRow));
  g_array_set_clear_func (self->partitions, partition_row_clear);
  self->causes = g_ptr_array_new_with_free_func (g_free);
  self->cause_counts = g_array_new (FALSE, TRUE, sizeof (guint64));
  self->max_lag = -1;
  self->max_stall = 120;
  self->reload_ok = TRUE;
  self->loaded = g_get_real_time ();
  for (guint i = 0; i < G_N_ELEMENTS (seeded_causes); i++)
    {
      guint64 zero = 0;
      g_ptr_array_add (self->causes, g_strdup (seeded_causes[i]));
      g_array_append_val (self->cause_counts, zero);
    }
  return self;
}

void
kt_metrics_free (KtMetrics *self)
{
  if (self == NULL)
    return;
  g_clear_pointer (&self->partitions, g_array_unref);
  g_clear_pointer (&self->causes, g_ptr_array_unref);
  g_clear_pointer (&self->cause_counts, g_array_unref);
  g_mutex_clear (&self->lock);
  for (guint i = 0; i < G_N_ELEMENTS (self->build_info); i++)
    g_free (self->build_info[i]);
  g_free (self->db_server);
  g_free (self->job);
  g_free (self);
}

void
kt_metrics_set_clock (KtMetrics *self, KtMetricsClock wall, KtMetricsClock monotonic)
{
  self->wall = wall;
  self->monotonic = monotonic;
  self->created = now_monotonic (self);
  self->loaded = now_wall (self);
}

void
kt_metrics_set_build_info (KtMetrics *self, const char *version, const char *librdkafka,
                           const char *mariadb_client)
{
  const char *values[] = { version, librdkafka, mariadb_client };

  for (guint i = 0; i < G_N_ELEMENTS (self->build_info); i++)
    {
      g_free (self->build_info[i]);
      self->build_info[i] = g_strdup (values[i] != NULL ? values[i] : "unknown");
    }
}

void
kt_metrics_set_mysql_server (KtMetrics *self, const char *server)
{
  if (server == NULL)
    return;
  g_mutex_lock (&self->lock);
  if (g_strcmp0 (self->db_server, server) != 0)
    {
      if (self->db_server != NULL)
        self->db_server_changes++;
      g_free (self->db_server);
      self->db_server = g_strdup (server);
    }
  g_mutex_unlock (&self->lock);
}

void
kt_metrics_set_process (KtMetrics *self, KtProcessFunc sample)
{
  self->process = sample;
}

const char *
kt_metrics_job (KtMetrics *self)
{
  return self->job;
}

double
kt_metrics_interval (KtMetrics *self)
{
  double interval;

  g_mutex_lock (&self->lock);
  interval = self->interval;
  g_mutex_unlock (&self->lock);
  return interval;
}

void
kt_metrics_set_interval (KtMetrics *self, double interval)
{
  g_mutex_lock (&self->lock);
  self->interval = interval;
  g_mutex_unlock (&self->lock);
}

void
kt_metrics_set_health (KtMetrics *self, gint64 max_lag, double max_commit_age,
                       double max_stall)
{
  g_mutex_lock (&self->lock);
  self->max_lag = max_lag;
  self->max_commit_age = max_commit_age;
  self->max_stall = max_stall;
  g_mutex_unlock (&self->lock);
}

void
kt_metrics_alive (KtMetrics *self)
{
  gint64 mono = now_monotonic (self);

  g_mutex_lock (&self->lock);
  self->alive = mono;
  g_mutex_unlock (&self->lock);
}

const char *
kt_batch_result_name (KtBatchResult result)
{
  g_return_val_if_fail (result < KT_BATCH_N_RESULTS, "failed");
  return result_names[result];
}

/* Copies at most @size - 1 bytes of @src, never splitting a UTF-8
 * sequence: the page prints it, and a cut half character is not text. */
static void
copy_message (char *dest, gsize size, const char *src)
{
  gsize len = strlen (src);

  if (len >= size)
    {
      len = size - 1;
      while (len > 0 && ((guchar) src[len] & 0xC0) == 0x80)
        len--;
    }
  memcpy (dest, src, len);
  dest[len] = '\0';
}

void
kt_metrics_batch (KtMetrics *self, const KtBatchReport *report)
{
  gint64 mono = now_monotonic (self), wall = now_wall (self);

  g_return_if_fail (report->result < KT_BATCH_N_RESULTS);

  g_mutex_lock (&self->lock);
  self->batches[report->result]++;
  switch (report->result)
    {
    case KT_BATCH_COMMITTED:
      self->records += report->records;
      self->bytes += report->bytes;
      self->lines_error += report->lines_error;
      self->lines_other += report->lines_other;
      self->lines_malformed += report->lines_malformed;
      self->lines_folded += report->lines_folded;
      self->dead_kept += report->dead_kept;
      self->dead_dropped += report->dead_dropped;
      self->last_commit = wall;
      G_GNUC_FALLTHROUGH;
    case KT_BATCH_IDLE:
      self->last_success = mono;
      self->last_success_result = report->result;
      break;
    case KT_BATCH_FAILED:
      self->last_failure = mono;
      copy_message (self->last_error, sizeof self->last_error,
                    report->error != NULL ? report->error : "unknown error");
      break;
    case KT_BATCH_FENCED:
    case KT_BATCH_N_RESULTS:
      break;
    }

  if (report->result != KT_BATCH_IDLE)
    {
      KtRecentBatch *row = &self->recent[self->recent_next];
      guint b = 0;

      /* Buckets are "less than or equal": 0.005 s lands in le="0.005". */
      while (b < N_BUCKETS && report->duration > bucket_bounds[b])
        b++;
      self->bucket_counts[b]++;
      self->duration_sum += report->duration;
      self->duration_count++;

      *row = (KtRecentBatch) {
        .finished = wall, .result = report->result, .duration = report->duration,
        .partitions = report->partitions, .records = report->records,
        .lines_error = report->lines_error, .lines_other = report->lines_other,
        .lines_malformed = report->lines_malformed,
      };
      if (report->result == KT_BATCH_FAILED)
        memcpy (row->error, self->last_error, sizeof row->error);
      self->recent_next = (self->recent_next + 1) % KT_METRICS_RECENT;
      self->recent_len = MIN (self->recent_len + 1, KT_METRICS_RECENT);
    }
  g_mutex_unlock (&self->lock);
}

static int
partition_cmp (const char *topic_a, gint32 part_a, const KtPartitionRow *b)
{
  int c = strcmp (topic_a, b->topic);
  return c != 0 ? c : (part_a > b->partition) - (part_a < b->partition);
}

/* Where @topic/@partition's row is, or would go: the partitions are
 * sorted on insert, so that rendering needs no sort and the lookup of
 * each of a batch's partitions is a binary search. Call locked. */
static guint
partition_index (KtMetrics *self, const char *topic, gint32 partition, gboolean *found)
{
  guint lo = 0, hi = self->partitions->len;

  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      int c = partition_cmp (topic, partition,
                             &g_array_index (self->partitions, KtPartitionRow, mid));
      if (c == 0)
        {
          *found = TRUE;
          return mid;
        }
      if (c < 0)
        hi = mid;
      else
        lo = mid + 1;
    }
  *found = FALSE;
  return lo;
}

void
kt_metrics_partition (KtMetrics *self, const char *topic, gint32 partition,
                      gint64 offset, gint64 high, gint64 unread_ms)
{
  gint64 wall = now_wall (self);
  KtPartitionRow *row;
  gboolean found;
  guint at;

  g_return_if_fail (topic != NULL);

  g_mutex_lock (&self->lock);
  at = partition_index (self, topic, partition, &found);
  if (!found)
    {
      KtPartitionRow fresh = { g_strdup (topic), partition, 0, 0, 0, 0, 0 };
      g_array_insert_val (self->partitions, at, fresh);
    }
  row = &g_array_index (self->partitions, KtPartitionRow, at);
  /* Another offset, another oldest record; nothing left, no record. */
  if (row->offset != offset || high <= offset)
    row->unread = 0;
  if (high > offset && unread_ms > 0)
    row->unread = unread_ms;
  row->offset = offset;
  row->high = high;
  row->lag = MAX (0, high - offset);
  row->updated = wall;
  g_mutex_unlock (&self->lock);
}

void
kt_metrics_schema_version (KtMetrics *self, int version)
{
  g_mutex_lock (&self->lock);
  self->schema_version = version;
  g_mutex_unlock (&self->lock);
}

void
kt_metrics_reload (KtMetrics *self, gboolean ok, gboolean restart_pending)
{
  gint64 wall = now_wall (self);

  g_mutex_lock (&self->lock);
  self->reload_ok = ok;
  if (ok)
    {
      self->loaded = wall;
      self->restart_pending = restart_pending;
    }
  g_mutex_unlock (&self->lock);
}

void
kt_metrics_retry (KtMetrics *self, const char *cause)
{
  guint i;

  g_return_if_fail (cause != NULL);

  g_mutex_lock (&self->lock);
  for (i = 0; i < self->causes->len; i++)
    if (g_str_equal (g_ptr_array_index (self->causes, i), cause))
      break;
  if (i == self->causes->len)
    {
      if (self->causes->len < MAX_CAUSES)
        {
          guint64 zero = 0;
          g_ptr_array_add (self->causes, g_strdup (cause));
          g_array_append_val (self->cause_counts, zero);
        }
      else
        for (i = 0; !g_str_equal (g_ptr_array_index (self->causes, i), "other"); i++)
          ;
    }
  g_array_index (self->cause_counts, guint64, i)++;
  g_mutex_unlock (&self->lock);
}

void
kt_metrics_data_loss (KtMetrics *self, gint64 offsets)
{
  g_mutex_lock (&self->lock);
  self->data_loss_events++;
  self->data_lost_offsets += (guint64) MAX (offsets, 0);
  g_mutex_unlock (&self->lock);
}

/* A label value: backslash, double quote and newline escaped, as the
 * exposition format requires (a topic name cannot hold them, a job name
 * given on the command line might). */
static void
append_label (GString *out, const char *name, const char *value)
{
  g_string_append_printf (out, "%s=\"", name);
  for (const char *p = value; *p != '\0'; p++)
    switch (*p)
      {
      case '\\':
        g_string_append (out, "\\\\");
        break;
      case '"':
        g_string_append (out, "\\\"");
        break;
      case '\n':
        g_string_append (out, "\\n");
        break;
      default:
        g_string_append_c (out, *p);
      }
  g_string_append_c (out, '"');
}

static void
append_header (GString *out, const char *name, const char *type, const char *help)
{
  g_string_append_printf (out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* name{ktally_job="...",LABEL="VALUE"} (LABEL NULL: the job alone),
 * without the value. Not "job": Prometheus labels every scraped series
 * with its own job (the scrape's), and would rename ours exported_job. */
static void
append_series (GString *out, KtMetrics *self, const char *name, const char *label,
               const char *value)
{
  g_string_append_printf (out, "%s{", name);
  append_label (out, "ktally_job", self->job);
  if (label != NULL)
    {
      g_string_append_c (out, ',');
      append_label (out, label, value);
    }
  g_string_append (out, "} ");
}

static void
append_u64 (GString *out, guint64 v)
{
  g_string_append_printf (out, "%" G_GUINT64_FORMAT "\n", v);
}

/* Floats through g_ascii_formatd: printf's %g would write a decimal comma
 * under some locales, which no scraper reads. */
static void
append_double (GString *out, const char *format, double v)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];

  g_string_append (out, g_ascii_formatd (buf, sizeof buf, format, v));
  g_string_append_c (out, '\n');
}

/* @name{ktally_job,topic,partition} for every partition: the gint64 at
 * @field of its row. */
static void
append_partitions (GString *out, KtMetrics *self, const char *name, glong field)
{
  for (guint i = 0; i < self->partitions->len; i++)
    {
      const KtPartitionRow *p = &g_array_index (self->partitions, KtPartitionRow, i);

      g_string_append_printf (out, "%s{", name);
      append_label (out, "ktally_job", self->job);
      g_string_append_c (out, ',');
      append_label (out, "topic", p->topic);
      g_string_append_printf (out, ",partition=\"%d\"} %" G_GINT64_FORMAT "\n", p->partition,
                              G_STRUCT_MEMBER (gint64, p, field));
    }
}

/* The process_* series, as every Prometheus client names them (no
 * ktally_job: they describe the process, and the scrape says which). */
static void
append_process (GString *out, const KtProcessSample *p)
{
  append_header (out, "process_cpu_seconds_total", "counter",
                 "Total user and system CPU time spent in seconds.");
  g_string_append (out, "process_cpu_seconds_total ");
  append_double (out, "%.2f", p->cpu_seconds);
  append_header (out, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.");
  g_string_append_printf (out, "process_resident_memory_bytes %" G_GINT64_FORMAT "\n",
                          p->resident_bytes);
  append_header (out, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.");
  g_string_append_printf (out, "process_virtual_memory_bytes %" G_GINT64_FORMAT "\n",
                          p->virtual_bytes);
  append_header (out, "process_open_fds", "gauge", "Number of open file descriptors.");
  g_string_append_printf (out, "process_open_fds %" G_GINT64_FORMAT "\n", p->open_fds);
  append_header (out, "process_max_fds", "gauge", "Maximum number of open file descriptors.");
  g_string_append_printf (out, "process_max_fds %" G_GINT64_FORMAT "\n", p->max_fds);
  append_header (out, "process_start_time_seconds", "gauge",
                 "Start time of the process since unix epoch in seconds.");
  g_string_append (out, "process_start_time_seconds ");
  append_double (out, "%.2f", p->start_time);
}

/* What the batches did: their results, records, bytes and lines. */
static void
append_batches (GString *out, KtMetrics *self)
{
  append_header (out, "ktally_batches_total", "counter",
                 "Batches finished, by result: committed (counts and offsets in), "
                 "fenced (another writer moved an offset first; rolled back), "
                 "failed (an error; planned again after a pause), idle (nothing new).");
  for (guint r = 0; r < KT_BATCH_N_RESULTS; r++)
    {
      append_series (out, self, "ktally_batches_total", "result", result_names[r]);
      append_u64 (out, self->batches[r]);
    }

  append_header (out, "ktally_records_total", "counter",
                 "Kafka records in committed batches.");
  append_series (out, self, "ktally_records_total", NULL, NULL);
  append_u64 (out, self->records);

  append_header (out, "ktally_read_bytes_total", "counter",
                 "Bytes of Kafka record values in committed batches.");
  append_series (out, self, "ktally_read_bytes_total", NULL, NULL);
  append_u64 (out, self->bytes);

  append_header (out, "ktally_lines_total", "counter",
                 "Log lines in committed batches, by kind: error (well-formed ERROR "
                 "lines, the ones counted), other (well-formed, another level), malformed.");
  append_series (out, self, "ktally_lines_total", "kind", "error");
  append_u64 (out, self->lines_error);
  append_series (out, self, "ktally_lines_total", "kind", "other");
  append_u64 (out, self->lines_other);
  append_series (out, self, "ktally_lines_total", "kind", "malformed");
  append_u64 (out, self->lines_malformed);

  append_header (out, "ktally_lines_folded_total", "counter",
                 "Counted lines whose key came past --max-keys in its bucket and batch: "
                 "counted in the bucket's (other) row.");
  append_series (out, self, "ktally_lines_folded_total", NULL, NULL);
  append_u64 (out, self->lines_folded);

  append_header (out, "ktally_dead_letters_total", "counter",
                 "Malformed lines of committed batches with --dead-letters, by outcome: kept "
                 "(written to its table, where a line read again stays once), dropped (past "
                 "--dead-letters-max in their batch).");
  append_series (out, self, "ktally_dead_letters_total", "outcome", "kept");
  append_u64 (out, self->dead_kept);
  append_series (out, self, "ktally_dead_letters_total", "outcome", "dropped");
  append_u64 (out, self->dead_dropped);
}

/* The batch duration histogram: cumulative buckets, sum and count. */
static void
append_durations (GString *out, KtMetrics *self)
{
  guint64 cumulative = 0;

  append_header (out, "ktally_batch_duration_seconds", "histogram",
                 "Time from planning a batch to the answer to its commit (or its "
                 "failure); idle batches are not observed.");
  for (guint b = 0; b <= N_BUCKETS; b++)
    {
      cumulative += self->bucket_counts[b];
      append_series (out, self, "ktally_batch_duration_seconds_bucket", "le",
                     b < N_BUCKETS ? bucket_names[b] : "+Inf");
      append_u64 (out, cumulative);
    }
  append_series (out, self, "ktally_batch_duration_seconds_sum", NULL, NULL);
  append_double (out, "%.12g", self->duration_sum);
  append_series (out, self, "ktally_batch_duration_seconds_count", NULL, NULL);
  append_u64 (out, self->duration_count);
}

/* The age of each partition's oldest record not yet committed, now: the
 * lag in time. 0 when none was left after the last successful batch (or
 * its timestamp is not known). */
static void
append_lag_seconds (GString *out, KtMetrics *self)
{
  gint64 now_ms = now_wall (self) / 1000;

  append_header (out, "ktally_partition_lag_seconds", "gauge",
                 "Age of the oldest record of each partition not yet committed, from its "
                 "Kafka timestamp; 0 when none was left after the last successful batch.");
  for (guint i = 0; i < self->partitions->len; i++)
    {
      const KtPartitionRow *p = &g_array_index (self->partitions, KtPartitionRow, i);
      gint64 age_ms = p->lag > 0 && p->unread > 0 ? MAX (0, now_ms - p->unread) : 0;

      g_string_append (out, "ktally_partition_lag_seconds{");
      append_label (out, "ktally_job", self->job);
      g_string_append_c (out, ',');
      append_label (out, "topic", p->topic);
      g_string_append_printf (out, ",partition=\"%d\"} ", p->partition);
      append_double (out, "%.3f", (double) age_ms / 1000);
    }
}

/* Where each partition stands: offset, lag, high watermark. */
static void
append_positions (GString *out, KtMetrics *self)
{
  append_header (out, "ktally_partition_offset", "gauge",
                 "Stored offset (the next to read) of each partition after the last "
                 "successful batch.");
  append_partitions (out, self, "ktally_partition_offset", G_STRUCT_OFFSET (KtPartitionRow, offset));
  append_header (out, "ktally_partition_lag", "gauge",
                 "Offsets of each partition not yet committed (last stable offset minus "
                 "stored offset) after the last successful batch.");
  append_partitions (out, self, "ktally_partition_lag", G_STRUCT_OFFSET (KtPartitionRow, lag));
  append_header (out, "ktally_partition_high_watermark", "gauge",
                 "Last stable offset of each partition, where reading committed records "
                 "ends (the high watermark less open transactions; a replay: its --until), "
                 "when the last successful batch was planned.");
  append_partitions (out, self, "ktally_partition_high_watermark",
                     G_STRUCT_OFFSET (KtPartitionRow, high));
  append_lag_seconds (out, self);
}

/* What went wrong or late: the last commit, retries, data lost. */
static void
append_troubles (GString *out, KtMetrics *self)
{
  append_header (out, "ktally_last_commit_timestamp_seconds", "gauge",
                 "Unix time of the last committed batch; 0 before the first.");
  append_series (out, self, "ktally_last_commit_timestamp_seconds", NULL, NULL);
  append_double (out, "%.3f", (double) self->last_commit / G_USEC_PER_SEC);

  append_header (out, "ktally_retries_total", "counter",
                 "Batches (or commits) tried again after a transient failure, by cause.");
  for (guint i = 0; i < self->causes->len; i++)
    {
      append_series (out, self, "ktally_retries_total", "cause",
                     g_ptr_array_index (self->causes, i));
      append_u64 (out, g_array_index (self->cause_counts, guint64, i));
    }

  append_header (out, "ktally_data_loss_total", "counter",
                 "Ranges of a partition that retention removed before they were read "
                 "(--on-data-loss skip).");
  append_series (out, self, "ktally_data_loss_total", NULL, NULL);
  append_u64 (out, self->data_loss_events);
  append_header (out, "ktally_data_lost_offsets_total", "counter",
                 "Offsets never counted because retention removed them first.");
  append_series (out, self, "ktally_data_lost_offsets_total", NULL, NULL);
  append_u64 (out, self->data_lost_offsets);
}

/* Which MySQL server, once connected, and how often it changed. */
static void
append_mysql_server (GString *out, KtMetrics *self)
{
  if (self->db_server == NULL)
    return;
  append_header (out, "ktally_mysql_server_info", "gauge",
                 "Always 1; the label names the MySQL server (host:port) the job writes to.");
  append_series (out, self, "ktally_mysql_server_info", "server", self->db_server);
  g_string_append (out, "1\n");
  append_header (out, "ktally_mysql_server_changes_total", "counter",
                 "Times the job moved to another MySQL server of its --db list (a failover).");
  append_series (out, self, "ktally_mysql_server_changes_total", NULL, NULL);
  append_u64 (out, self->db_server_changes);
}

static void unready_reasons (KtMetrics *self, gint64 now, gint64 lag, GString *why);

/* /readyz's answer as a series, which alerting can see without probing:
 * 1 when it would answer 200. */
static void
append_ready (GString *out, KtMetrics *self)
{
  g_autoptr(GString) why = g_string_new (NULL);
  gint64 lag = 0;

  for (guint i = 0; i < self->partitions->len; i++)
    lag += g_array_index (self->partitions, KtPartitionRow, i).lag;
  unready_reasons (self, now_monotonic (self), lag, why);
  append_header (out, "ktally_ready", "gauge",
                 "Whether the job is committing, as /readyz answers it: 1 (200), or 0 (503: "
                 "no success yet, the last batch failed, no success within "
                 "--health-max-commit-age, or the lag over --health-max-lag).");
  append_series (out, self, "ktally_ready", NULL, NULL);
  append_u64 (out, why->len == 0 ? 1 : 0);
}

/* What the service runs with: its database's schema and its settings. */
static void
append_settings (GString *out, KtMetrics *self)
{
  append_header (out, "ktally_schema_version", "gauge",
                 "Schema version of the job's database once its tables are ready (migrated "
                 "to this ktally's); 0 before.");
  append_series (out, self, "ktally_schema_version", NULL, NULL);
  append_u64 (out, (guint64) MAX (self->schema_version, 0));

  append_header (out, "ktally_config_last_reload_successful", "gauge",
                 "Whether the last reload (SIGHUP) read the settings back and applied what "
                 "may change (1; before any reload, the start's settings), or kept the "
                 "running ones (0).");
  append_series (out, self, "ktally_config_last_reload_successful", NULL, NULL);
  append_u64 (out, self->reload_ok ? 1 : 0);
  append_header (out, "ktally_config_last_reload_success_timestamp_seconds", "gauge",
                 "Unix time of the last successful load of the settings: the start, then "
                 "each successful reload.");
  append_series (out, self, "ktally_config_last_reload_success_timestamp_seconds", NULL, NULL);
  append_double (out, "%.3f", (double) self->loaded / G_USEC_PER_SEC);
  append_header (out, "ktally_config_restart_pending", "gauge",
                 "1 when the last successful reload found changed settings that only a "
                 "restart applies (logged as needing a restart).");
  append_series (out, self, "ktally_config_restart_pending", NULL, NULL);
  append_u64 (out, self->restart_pending ? 1 : 0);
}

/* ktally_build_info, once the versions are known. */
static void
append_build_info (GString *out, KtMetrics *self)
{
  if (self->build_info[0] == NULL)
    return;
  append_header (out, "ktally_build_info", "gauge",
                 "Always 1; the labels give the versions of ktally and of the Kafka and "
                 "MariaDB client libraries it runs with.");
  g_string_append (out, "ktally_build_info{");
  append_label (out, "version", self->build_info[0]);
  g_string_append_c (out, ',');
  append_label (out, "librdkafka", self->build_info[1]);
  g_string_append_c (out, ',');
  append_label (out, "mariadb_client", self->build_info[2]);
  g_string_append (out, "} 1\n");
}

void
kt_metrics_render (KtMetrics *self, GString *out)
{
  KtProcessSample process;
  /* /proc is read before the lock: the batch loop never waits on it. */
  gboolean have_process = self->process != NULL && self->process (&process);

  g_mutex_lock (&self->lock);
  append_batches (out, self);
  append_durations (out, self);
  append_positions (out, self);
  append_troubles (out, self);
  append_mysql_server (out, self);
  append_ready (out, self);
  append_settings (out, self);
  append_build_info (out, self);
  g_mutex_unlock (&self->lock);
  if (have_process)
    append_process (out, &process);
}

gboolean
kt_metrics_healthy (KtMetrics *self, GString *reason)
{
  double window = MAX (HEALTH_INTERVALS * self->interval, HEALTH_MIN_S);
  gint64 now = now_monotonic (self);
  gboolean healthy;
  double since;

  g_mutex_lock (&self->lock);
  since = (double) (now - (self->last_success != 0 ? self->last_success : self->created))
          / G_USEC_PER_SEC;
  healthy = self->last_success != 0 && since <= window;
  if (healthy)
    g_string_append_printf (reason, "ok: the last batch succeeded (%s) %.1f s ago",
                            result_names[self->last_success_result], since);
  else if (self->last_success == 0)
    g_string_append_printf (reason, "unhealthy: no batch has succeeded yet, %.1f s "
                            "after start-up", since);
  else
    g_string_append_printf (reason, "unhealthy: no batch has succeeded for %.1f s", since);
  g_string_append_printf (reason, " (healthy within %g s)", window);
  if (self->last_failure != 0 && self->last_failure > self->last_success)
    g_string_append_printf (reason, "; the last batch failed %.1f s ago: %s",
                            (double) (now - self->last_failure) / G_USEC_PER_SEC,
                            self->last_error);
  g_string_append_c (reason, '\n');
  g_mutex_unlock (&self->lock);
  return healthy;
}

gboolean
kt_metrics_live (KtMetrics *self, GString *reason)
{
  gint64 now = now_monotonic (self);
  double since;
  gboolean live;

  g_mutex_lock (&self->lock);
  /* Before the loop's first turn: the process itself is young. */
  since = (double) (now - (self->alive != 0 ? self->alive : self->created)) / G_USEC_PER_SEC;
  live = since <= self->max_stall;
  g_string_append_printf (reason, "%s: the batch loop %s %.1f s ago (--health-max-stall %g s)\n",
                          live ? "alive" : "not alive",
                          self->alive != 0 ? "moved" : "has not started, ktally started",
                          since, self->max_stall);
  g_mutex_unlock (&self->lock);
  return live;
}

/* Why the job is not committing, appended to @why. Call locked. */
static void
unready_reasons (KtMetrics *self, gint64 now, gint64 lag, GString *why)
{
  double age = (double) (now - self->last_success) / G_USEC_PER_SEC;
  double bound = self->max_commit_age > 0 ? self->max_commit_age
                                          : MAX (HEALTH_INTERVALS * self->interval, READY_MIN_S);

  if (self->last_success == 0)
    g_string_append_printf (why, "not ready: no batch has succeeded yet%s%s\n",
                            self->last_failure != 0 ? "; the last failed: " : "",
                            self->last_failure != 0 ? self->last_error : "");
  else if (self->last_failure > self->last_success)
    g_string_append_printf (why, "not ready: the last batch failed %.1f s ago: %s\n",
                            (double) (now - self->last_failure) / G_USEC_PER_SEC,
                            self->last_error);
  else if (age > bound)
    g_string_append_printf (why, "not ready: no batch has succeeded for %.1f s "
                            "(--health-max-commit-age %g s)\n", age, bound);
  if (self->max_lag >= 0 && lag > self->max_lag)
    g_string_append_printf (why, "not ready: lag %" G_GINT64_FORMAT " offsets is over "
                            "--health-max-lag %" G_GINT64_FORMAT "\n", lag, self->max_lag);
}

gboolean
kt_metrics_ready (KtMetrics *self, GString *reason)
{
  gint64 now = now_monotonic (self);
  gsize was = reason->len;
  gint64 lag = 0;

  g_mutex_lock (&self->lock);
  for (guint i = 0; i < self->partitions->len; i++)
    lag += g_array_index (self->partitions, KtPartitionRow, i).lag;
  unready_reasons (self, now, lag, reason);
  if (reason->len == was)
    g_string_append_printf (reason, "ready: committing, the last batch succeeded %.1f s ago, "
                            "lag %" G_GINT64_FORMAT "\n",
                            (double) (now - self->last_success) / G_USEC_PER_SEC, lag);
  g_mutex_unlock (&self->lock);
  return reason->len > was && g_str_has_prefix (reason->str + was, "ready:");
}

void
kt_metrics_snapshot (KtMetrics *self, KtMetricsSnapshot *out)
{
  memset (out, 0, sizeof *out);
  out->partitions = g_array_new (FALSE, TRUE, sizeof (KtPartitionRow));
  g_array_set_clear_func (out->partitions, partition_row_clear);
  out->recent = g_array_new (FALSE, TRUE, sizeof (KtRecentBatch));

  g_mutex_lock (&self->lock);
  memcpy (out->batches, self->batches, sizeof out->batches);
  out->records = self->records;
  out->lines_error = self->lines_error;
  out->lines_other = self->lines_other;
  out->lines_malformed = self->lines_malformed;
  out->data_loss_events = self->data_loss_events;
  out->data_lost_offsets = self->data_lost_offsets;
  out->last_commit = self->last_commit;
  for (guint i = 0; i < self->partitions->len; i++)
    {
      KtPartitionRow row = g_array_index (self->partitions, KtPartitionRow, i);
      row.topic = g_strdup (row.topic);
      g_array_append_val (out->partitions, row);
    }
  for (guint i = 0; i < self->recent_len; i++)
    g_array_append_val (out->recent,
                        self->recent[(self->recent_next + KT_METRICS_RECENT - 1 - i)
                                     % KT_METRICS_RECENT]);
  g_mutex_unlock (&self->lock);
}

void
kt_metrics_snapshot_clear (KtMetricsSnapshot *snapshot)
{
  g_clear_pointer (&snapshot->partitions, g_array_unref);
  g_clear_pointer (&snapshot->recent, g_array_unref);
}
