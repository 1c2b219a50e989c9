/* test-metrics.c - the metrics registry, without HTTP.
 *
 * Covers the exact exposition text after a few updates (and before any),
 * cumulative histogram buckets at and around their bounds, label
 * escaping, the cap on retry causes, partition series kept sorted, the
 * ring of recent batches, the /healthz rule on a fake clock, the lag in
 * time and the reload's series on a fake clock, and a smoke test of
 * writers and readers on several threads. */
#include <string.h>
#include "metrics.h"

static gint64 fake_wall_us, fake_mono_us;

static gint64
fake_wall (void)
{
  return fake_wall_us;
}

static gint64
fake_mono (void)
{
  return fake_mono_us;
}

static KtMetrics *
new_faked (const char *job, double interval)
{
  KtMetrics *m = kt_metrics_new (job, interval);

  fake_wall_us = G_GINT64_CONSTANT (1700000000) * G_USEC_PER_SEC;
  fake_mono_us = 1000 * G_USEC_PER_SEC;
  kt_metrics_set_clock (m, fake_wall, fake_mono);
  kt_metrics_set_process (m, NULL);
  return m;
}

static char *
render (KtMetrics *m)
{
  GString *out = g_string_new (NULL);
  kt_metrics_render (m, out);
  return g_string_free (out, FALSE);
}

/* The value of the first line of @text that starts with @series + ' '. */
static const char *
find_value (const char *text, const char *series)
{
  gsize n = strlen (series);

  for (const char *line = text; line != NULL && *line != '\0';)
    {
      if (strncmp (line, series, n) == 0 && line[n] == ' ')
        return line + n + 1;
      line = strchr (line, '\n');
      line = line != NULL ? line + 1 : NULL;
    }
  return NULL;
}

static guint64
value_of (const char *text, const char *series)
{
  const char *v = find_value (text, series);

  if (v == NULL)
    g_error ("no series %s in:\n%s", series, text);
  return g_ascii_strtoull (v, NULL, 10);
}

/* The series of readiness and of what the service runs with: @ready (as
 * /readyz), its database at schema version @v (string literals). */
#define SETTINGS_TEXT(ready, v) \
  "# HELP ktally_ready Whether the job is committing, as /readyz answers it: 1 (200), or 0 " \
  "(503: no success yet, the last batch failed, no success within --health-max-commit-age, or " \
  "the lag over --health-max-lag).\n" \
  "# TYPE ktally_ready gauge\n" \
  "ktally_ready{ktally_job=\"j\"} " ready "\n" \
  "# HELP ktally_schema_version Schema version of the job's database once its tables are ready " \
  "(migrated to this ktally's); 0 before.\n" \
  "# TYPE ktally_schema_version gauge\n" \
  "ktally_schema_version{ktally_job=\"j\"} " v "\n" \
  "# HELP ktally_config_last_reload_successful Whether the last reload (SIGHUP) read the settings " \
  "back and applied what may change (1; before any reload, the start's settings), or kept the " \
  "running ones (0).\n" \
  "# TYPE ktally_config_last_reload_successful gauge\n" \
  "ktally_config_last_reload_successful{ktally_job=\"j\"} 1\n" \
  "# HELP ktally_config_last_reload_success_timestamp_seconds Unix time of the last successful " \
  "load of the settings: the start, then each successful reload.\n" \
  "# TYPE ktally_config_last_reload_success_timestamp_seconds gauge\n" \
  "ktally_config_last_reload_success_timestamp_seconds{ktally_job=\"j\"} 1700000000.000\n" \
  "# HELP ktally_config_restart_pending 1 when the last successful reload found changed settings " \
  "that only a restart applies (logged as needing a restart).\n" \
  "# TYPE ktally_config_restart_pending gauge\n" \
  "ktally_config_restart_pending{ktally_job=\"j\"} 0\n"

/* The value (a float) of @series in a fresh rendering of @m. */
static double
rendered (KtMetrics *m, const char *series)
{
  g_autofree char *text = render (m);
  const char *v = find_value (text, series);

  if (v == NULL)
    g_error ("no series %s in:\n%s", series, text);
  return g_ascii_strtod (v, NULL);
}

static const char empty_text_head[] =
  "# HELP ktally_batches_total Batches finished, by result: committed (counts and offsets in), "
  "fenced (another writer moved an offset first; rolled back), failed (an error; planned again "
  "after a pause), idle (nothing new).\n"
  "# TYPE ktally_batches_total counter\n"
  "ktally_batches_total{ktally_job=\"j\",result=\"committed\"} 0\n"
  "ktally_batches_total{ktally_job=\"j\",result=\"fenced\"} 0\n"
  "ktally_batches_total{ktally_job=\"j\",result=\"failed\"} 0\n"
  "ktally_batches_total{ktally_job=\"j\",result=\"idle\"} 0\n"
  "# HELP ktally_records_total Kafka records in committed batches.\n"
  "# TYPE ktally_records_total counter\n"
  "ktally_records_total{ktally_job=\"j\"} 0\n"
  "# HELP ktally_read_bytes_total Bytes of Kafka record values in committed batches.\n"
  "# TYPE ktally_read_bytes_total counter\n"
  "ktally_read_bytes_total{ktally_job=\"j\"} 0\n"
  "# HELP ktally_lines_total Log lines in committed batches, by kind: error (well-formed ERROR "
  "lines, the ones counted), other (well-formed, another level), malformed.\n"
  "# TYPE ktally_lines_total counter\n"
  "ktally_lines_total{ktally_job=\"j\",kind=\"error\"} 0\n"
  "ktally_lines_total{ktally_job=\"j\",kind=\"other\"} 0\n"
  "ktally_lines_total{ktally_job=\"j\",kind=\"malformed\"} 0\n"
  "# HELP ktally_lines_folded_total Counted lines whose key came past --max-keys in its "
  "bucket and batch: counted in the bucket's (other) row.\n"
  "# TYPE ktally_lines_folded_total counter\n"
  "ktally_lines_folded_total{ktally_job=\"j\"} 0\n"
  "# HELP ktally_dead_letters_total Malformed lines of committed batches with --dead-letters, by "
  "outcome: kept (written to its table, where a line read again stays once), dropped (past "
  "--dead-letters-max in their batch).\n"
  "# TYPE ktally_dead_letters_total counter\n"
  "ktally_dead_letters_total{ktally_job=\"j\",outcome=\"kept\"} 0\n"
  "ktally_dead_letters_total{ktally_job=\"j\",outcome=\"dropped\"} 0\n";

static const char empty_text_tail[] =
  "# HELP ktally_batch_duration_seconds Time from planning a batch to the answer to its commit "
  "(or its failure); idle batches are not observed.\n"
  "# TYPE ktally_batch_duration_seconds histogram\n"
  "ktally_batch_duration_seconds_bucket{ktally_job=\"j\",le=\"0.005\"} 0\n"
  "ktally_batch_duration_seconds_bucket{ktally_job=\"j\",le=\"0.01\"} 0\n"
  "ktally_batch_duration_seconds_bucket{ktally_job=\"j\",le=\"0.025\"} 0\n"
  "ktally_batch_duration_seconds_bucket{ktally_job=\"j\",le=\"0.05\"} 0\n"
  "ktally_batch_duration_seconds_bucket{ktally_job=\"j\",le=\"0.1\"} 0\n"
  "ktally_batch_duration_seconds_bucket{ktally_job=\"j\",le=\"0.25\"} 0\n"
  "ktally_batch_duration_seconds_bucket{ktally_job=\"j\",le=\"0.5\"} 0\n"
  "ktally_batch_duration_seconds_bucket{ktally_job=\"j\",le=\"1\"} 0\n"
  "ktally_batch_duration_seconds_bucket{ktally_job=\"j\",le=\"2.5\"} 0\n"
  "ktally_batch_duration_seconds_bucket{ktally_job=\"j\",le=\"5\"} 0\n"
  "ktally_batch_duration_seconds_bucket{ktally_job=\"j\",le=\"10\"} 0\n"
  "ktally_batch_duration_seconds_bucket{ktally_job=\"j\",le=\"30\"} 0\n"
  "ktally_batch_duration_seconds_bucket{ktally_job=\"j\",le=\"+Inf\"} 0\n"
  "ktally_batch_duration_seconds_sum{ktally_job=\"j\"} 0\n"
  "ktally_batch_duration_seconds_count{ktally_job=\"j\"} 0\n"
  "# HELP ktally_partition_offset Stored offset (the next to read) of each partition after the "
  "last successful batch.\n"
  "# TYPE ktally_partition_offset gauge\n"
  "# HELP ktally_partition_lag Offsets of each partition not yet committed (last stable offset "
  "minus stored offset) after the last successful batch.\n"
  "# TYPE ktally_partition_lag gauge\n"
  "# HELP ktally_partition_high_watermark Last stable offset of each partition, where reading "
  "committed records ends (the high watermark less open transactions; a replay: its --until), "
  "when the last successful batch was planned.\n"
  "# TYPE ktally_partition_high_watermark gauge\n"
  "# HELP ktally_partition_lag_seconds Age of the oldest record of each partition not yet "
  "committed, from its Kafka timestamp; 0 when none was left after the last successful batch.\n"
  "# TYPE ktally_partition_lag_seconds gauge\n"
  "# HELP ktally_last_commit_timestamp_seconds Unix time of the last committed batch; 0 before "
  "the first.\n"
  "# TYPE ktally_last_commit_timestamp_seconds gauge\n"
  "ktally_last_commit_timestamp_seconds{ktally_job=\"j\"} 0.000\n"
  "# HELP ktally_retries_total Batches (or commits) tried again after a transient failure, by "
  "cause.\n"
  "# TYPE ktally_retries_total counter\n"
  "ktally_retries_total{ktally_job=\"j\",cause=\"kafka\"} 0\n"
  "ktally_retries_total{ktally_job=\"j\",cause=\"mysql\"} 0\n"
  "ktally_retries_total{ktally_job=\"j\",cause=\"deadlock\"} 0\n"
  "ktally_retries_total{ktally_job=\"j\",cause=\"other\"} 0\n"
  "# HELP ktally_data_loss_total Ranges of a partition that retention removed before they were "
  "read (--on-data-loss skip).\n"
  "# TYPE ktally_data_loss_total counter\n"
  "ktally_data_loss_total{ktally_job=\"j\"} 0\n"
  "# HELP ktally_data_lost_offsets_total Offsets never counted because retention removed them "
  "first.\n"
  "# TYPE ktally_data_lost_offsets_total counter\n"
  "ktally_data_lost_offsets_total{ktally_job=\"j\"} 0\n";

static void
test_render_empty (void)
{
  g_autoptr(KtMetrics) m = new_faked ("j", 5);
  g_autofree char *text = render (m);
  g_autofree char *want = g_strconcat (empty_text_head, empty_text_tail, SETTINGS_TEXT ("0", "0"),
                                       NULL);

  g_assert_cmpstr (text, ==, want);
}

/* In two parts: C99 compilers need not take a string over 4095 bytes. */
static const char updated_text_head[] =
  "# HELP ktally_batches_total Batches finished, by result: committed (counts and offsets in), "
  "fenced (another writer moved an offset first; rolled back), failed (an error; planned again "
  "after a pause), idle (nothing new).\n"
  "# TYPE ktally_batches_total counter\n"
  "ktally_batches_total{ktally_job=\"j\",result=\"committed\"} 2\n"
  "ktally_batches_total{ktally_job=\"j\",result=\"fenced\"} 1\n"
  "ktally_batches_total{ktally_job=\"j\",result=\"failed\"} 1\n"
  "ktally_batches_total{ktally_job=\"j\",result=\"idle\"} 3\n"
  "# HELP ktally_records_total Kafka records in committed batches.\n"
  "# TYPE ktally_records_total counter\n"
  "ktally_records_total{ktally_job=\"j\"} 150\n"
  "# HELP ktally_read_bytes_total Bytes of Kafka record values in committed batches.\n"
  "# TYPE ktally_read_bytes_total counter\n"
  "ktally_read_bytes_total{ktally_job=\"j\"} 7000\n"
  "# HELP ktally_lines_total Log lines in committed batches, by kind: error (well-formed ERROR "
  "lines, the ones counted), other (well-formed, another level), malformed.\n"
  "# TYPE ktally_lines_total counter\n"
  "ktally_lines_total{ktally_job=\"j\",kind=\"error\"} 12\n"
  "ktally_lines_total{ktally_job=\"j\",kind=\"other\"} 280\n"
  "ktally_lines_total{ktally_job=\"j\",kind=\"malformed\"} 8\n"
  "# HELP ktally_lines_folded_total Counted lines whose key came past --max-keys in its "
  "bucket and batch: counted in the bucket's (other) row.\n"
  "# TYPE ktally_lines_folded_total counter\n"
  "ktally_lines_folded_total{ktally_job=\"j\"} 4\n"
  "# HELP ktally_dead_letters_total Malformed lines of committed batches with --dead-letters, by "
  "outcome: kept (written to its table, where a line read again stays once), dropped (past "
  "--dead-letters-max in their batch).\n"
  "# TYPE ktally_dead_letters_total counter\n"
  "ktally_dead_letters_total{ktally_job=\"j\",outcome=\"kept\"} 5\n"
  "ktally_dead_letters_total{ktally_job=\"j\",outcome=\"dropped\"} 1\n";

static const char updated_text_tail[] =
  "# HELP ktally_batch_duration_seconds Time from planning a batch to the answer to its commit "
  "(or its failure); idle batches are not observed.\n"
  "# TYPE ktally_batch_duration_seconds histogram\n"
  "ktally_batch_duration_seconds_bucket{ktally_job=\"j\",le=\"0.005\"} 1\n"
  "ktally_batch_duration_seconds_bucket{ktally_job=\"j\",le=\"0.01\"} 1\n"
  "ktally_batch_duration_seconds_bucket{ktally_job=\"j\",le=\"0.025\"} 2\n"
  "ktally_batch_duration_seconds_bucket{ktally_job=\"j\",le=\"0.05\"} 2\n"
  "ktally_batch_duration_seconds_bucket{ktally_job=\"j\",le=\"0.1\"} 2\n"
  "ktally_batch_duration_seconds_bucket{ktally_job=\"j\",le=\"0.25\"} 2\n"
  "ktally_batch_duration_seconds_bucket{ktally_job=\"j\",le=\"0.5\"} 3\n"
  "ktally_batch_duration_seconds_bucket{ktally_job=\"j\",le=\"1\"} 3\n"
  "ktally_batch_duration_seconds_bucket{ktally_job=\"j\",le=\"2.5\"} 4\n"
  "ktally_batch_duration_seconds_bucket{ktally_job=\"j\",le=\"5\"} 4\n"
  "ktally_batch_duration_seconds_bucket{ktally_job=\"j\",le=\"10\"} 4\n"
  "ktally_batch_duration_seconds_bucket{ktally_job=\"j\",le=\"30\"} 4\n"
  "ktally_batch_duration_seconds_bucket{ktally_job=\"j\",le=\"+Inf\"} 4\n"
  "ktally_batch_duration_seconds_sum{ktally_job=\"j\"} 2.5225\n"
  "ktally_batch_duration_seconds_count{ktally_job=\"j\"} 4\n"
  "# HELP ktally_partition_offset Stored offset (the next to read) of each partition after the "
  "last successful batch.\n"
  "# TYPE ktally_partition_offset gauge\n"
  "ktally_partition_offset{ktally_job=\"j\",topic=\"logs\",partition=\"0\"} 100\n"
  "ktally_partition_offset{ktally_job=\"j\",topic=\"logs\",partition=\"1\"} 70\n"
  "ktally_partition_offset{ktally_job=\"j\",topic=\"logs\",partition=\"10\"} 9\n"
  "# HELP ktally_partition_lag Offsets of each partition not yet committed (last stable offset "
  "minus stored offset) after the last successful batch.\n"
  "# TYPE ktally_partition_lag gauge\n"
  "ktally_partition_lag{ktally_job=\"j\",topic=\"logs\",partition=\"0\"} 0\n"
  "ktally_partition_lag{ktally_job=\"j\",topic=\"logs\",partition=\"1\"} 5\n"
  "ktally_partition_lag{ktally_job=\"j\",topic=\"logs\",partition=\"10\"} 1\n"
  "# HELP ktally_partition_high_watermark Last stable offset of each partition, where reading "
  "committed records ends (the high watermark less open transactions; a replay: its --until), "
  "when the last successful batch was planned.\n"
  "# TYPE ktally_partition_high_watermark gauge\n"
  "ktally_partition_high_watermark{ktally_job=\"j\",topic=\"logs\",partition=\"0\"} 100\n"
  "ktally_partition_high_watermark{ktally_job=\"j\",topic=\"logs\",partition=\"1\"} 75\n"
  "ktally_partition_high_watermark{ktally_job=\"j\",topic=\"logs\",partition=\"10\"} 10\n"
  "# HELP ktally_partition_lag_seconds Age of the oldest record of each partition not yet "
  "committed, from its Kafka timestamp; 0 when none was left after the last successful batch.\n"
  "# TYPE ktally_partition_lag_seconds gauge\n"
  "ktally_partition_lag_seconds{ktally_job=\"j\",topic=\"logs\",partition=\"0\"} 0.000\n"
  "ktally_partition_lag_seconds{ktally_job=\"j\",topic=\"logs\",partition=\"1\"} 30.500\n"
  "ktally_partition_lag_seconds{ktally_job=\"j\",topic=\"logs\",partition=\"10\"} 0.000\n"
  "# HELP ktally_last_commit_timestamp_seconds Unix time of the last committed batch; 0 before "
  "the first.\n"
  "# TYPE ktally_last_commit_timestamp_seconds gauge\n"
  "ktally_last_commit_timestamp_seconds{ktally_job=\"j\"} 1700000002.250\n"
  "# HELP ktally_retries_total Batches (or commits) tried again after a transient failure, by "
  "cause.\n"
  "# TYPE ktally_retries_total counter\n"
  "ktally_retries_total{ktally_job=\"j\",cause=\"kafka\"} 0\n"
  "ktally_retries_total{ktally_job=\"j\",cause=\"mysql\"} 2\n"
  "ktally_retries_total{ktally_job=\"j\",cause=\"deadlock\"} 1\n"
  "ktally_retries_total{ktally_job=\"j\",cause=\"other\"} 0\n"
  "ktally_retries_total{ktally_job=\"j\",cause=\"rebalance\"} 1\n"
  "# HELP ktally_data_loss_total Ranges of a partition that retention removed before they were "
  "read (--on-data-loss skip).\n"
  "# TYPE ktally_data_loss_total counter\n"
  "ktally_data_loss_total{ktally_job=\"j\"} 1\n"
  "# HELP ktally_data_lost_offsets_total Offsets never counted because retention removed them "
  "first.\n"
  "# TYPE ktally_data_lost_offsets_total counter\n"
  "ktally_data_lost_offsets_total{ktally_job=\"j\"} 40\n";

static void
test_render_updates (void)
{
  g_autoptr(KtMetrics) m = new_faked ("j", 5);
  g_autofree char *text = NULL;
  g_autofree char *want = NULL;

  /* Records and lines count for the two committed batches only; the
   * durations of all but the idle ones: 0.0025 + 0.02 + 2 + 0.5. */
  kt_metrics_batch (m, &(KtBatchReport) { KT_BATCH_COMMITTED, 0.0025, 2, 100, 10, 185, 5, NULL,
                                          5000, 4, 4, 1 });
  kt_metrics_batch (m, &(KtBatchReport) { KT_BATCH_IDLE, 0.001, 0, 0, 0, 0, 0, NULL, 0, 0, 0, 0 });
  kt_metrics_batch (m, &(KtBatchReport) { KT_BATCH_FENCED, 0.02, 1, 30, 9, 9, 9, NULL, 900, 9,
                                          9, 9 });
  kt_metrics_batch (m, &(KtBatchReport) { KT_BATCH_FAILED, 2.0, 1, 7, 7, 7, 7, "MySQL went away",
                                          70, 0, 0, 0 });
  kt_metrics_batch (m, &(KtBatchReport) { KT_BATCH_IDLE, 0, 0, 0, 0, 0, 0, NULL, 0, 0, 0, 0 });
  fake_wall_us += 2250000;
  kt_metrics_batch (m, &(KtBatchReport) { KT_BATCH_COMMITTED, 0.5, 1, 50, 2, 95, 3, NULL, 2000, 0,
                                          1, 0 });
  kt_metrics_batch (m, &(KtBatchReport) { KT_BATCH_IDLE, 0.001, 0, 0, 0, 0, 0, NULL, 0, 0, 0, 0 });
  /* Out of order, partition 1 twice: numeric order (10 after 1), last wins. */
  kt_metrics_partition (m, "logs", 10, 9, 10, 0);
  kt_metrics_partition (m, "logs", 1, 60, 75, 0);
  kt_metrics_partition (m, "logs", 0, 100, 100, fake_wall_us / 1000 - 99000);
  /* Partition 1's oldest unread record was written 30.5 s ago; 10 has
   * one left but its time is not known; 0 has none left. */
  kt_metrics_partition (m, "logs", 1, 70, 75, fake_wall_us / 1000 - 30500);
  kt_metrics_schema_version (m, 6);
  kt_metrics_retry (m, "mysql");
  kt_metrics_retry (m, "deadlock");
  kt_metrics_retry (m, "mysql");
  kt_metrics_retry (m, "rebalance");
  kt_metrics_data_loss (m, 40);

  text = render (m);
  want = g_strconcat (updated_text_head, updated_text_tail, SETTINGS_TEXT ("1", "6"), NULL);
  g_assert_cmpstr (text, ==, want);
}

typedef struct
{
  double  duration;
  guint   bucket;  /* index of the first le= bound that holds it; 12: +Inf only */
} BucketCase;

static const BucketCase bucket_cases[] = {
  { 0, 0 }, { 0.005, 0 }, { 0.0051, 1 }, { 0.01, 1 }, { 0.02, 2 }, { 0.05, 3 },
  { 0.07, 4 }, { 0.25, 5 }, { 0.3, 6 }, { 1, 7 }, { 1.5, 8 }, { 5, 9 }, { 9.99, 10 },
  { 30, 11 }, { 30.5, 12 }, { 1e9, 12 },
};

static void
test_histogram_cumulative (void)
{
  static const char *const les[] = {
    "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10", "30", "+Inf",
  };
  g_autoptr(KtMetrics) m = new_faked ("j", 5);
  g_autofree char *text = NULL;
  guint64 previous = 0;

  for (guint i = 0; i < G_N_ELEMENTS (bucket_cases); i++)
    kt_metrics_batch (m, &(KtBatchReport) { KT_BATCH_COMMITTED, bucket_cases[i].duration,
                                            1, 1, 0, 1, 0, NULL, 0, 0, 0, 0 });
  text = render (m);
  for (guint b = 0; b < G_N_ELEMENTS (les); b++)
    {
      g_autofree char *series = g_strdup_printf (
        "ktally_batch_duration_seconds_bucket{ktally_job=\"j\",le=\"%s\"}", les[b]);
      guint64 want = 0, got = value_of (text, series);

      for (guint i = 0; i < G_N_ELEMENTS (bucket_cases); i++)
        want += bucket_cases[i].bucket <= b;
      g_assert_cmpuint (got, ==, want);
      g_assert_cmpuint (got, >=, previous);  /* cumulative: never decreasing */
      previous = got;
    }
  g_assert_cmpuint (previous, ==, G_N_ELEMENTS (bucket_cases));
  g_assert_cmpuint (value_of (text, "ktally_batch_duration_seconds_count{ktally_job=\"j\"}"), ==,
                    G_N_ELEMENTS (bucket_cases));
}

static void
test_labels_escaping (void)
{
  g_autoptr(KtMetrics) m = new_faked ("a\"b\\c\nd", 5);
  g_autofree char *text = NULL;

  kt_metrics_partition (m, "t\"1", 3, 10, 12, 0);
  kt_metrics_retry (m, "we\\ird");
  text = render (m);
  g_assert_nonnull (strstr (text, "ktally_records_total{ktally_job=\"a\\\"b\\\\c\\nd\"} 0\n"));
  g_assert_nonnull (strstr (text, "ktally_partition_lag{ktally_job=\"a\\\"b\\\\c\\nd\",topic=\"t\\\"1\","
                                  "partition=\"3\"} 2\n"));
  g_assert_nonnull (strstr (text, "cause=\"we\\\\ird\"} 1\n"));
  /* No raw newline inside a series: every line is a comment or a sample. */
  {
    g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
    for (guint i = 0; lines[i] != NULL; i++)
      if (lines[i][0] != '\0' && lines[i][0] != '#')
        g_assert_true (g_str_has_prefix (lines[i], "ktally_"));
  }
}

static void
test_retry_cap (void)
{
  g_autoptr(KtMetrics) m = new_faked ("j", 5);
  g_autofree char *text = NULL;
  guint series = 0;

  for (int i = 0; i < 30; i++)
    {
      g_autofree char *cause = g_strdup_printf ("cause%02d", i);
      kt_metrics_retry (m, cause);
    }
  text = render (m);
  for (const char *p = text; (p = strstr (p, "ktally_retries_total{")) != NULL; p++)
    series++;
  g_assert_cmpuint (series, ==, 16);
  /* 4 seeded + 12 new causes; the other 18 went to "other". */
  g_assert_cmpuint (value_of (text, "ktally_retries_total{ktally_job=\"j\",cause=\"cause11\"}"), ==, 1);
  g_assert_null (find_value (text, "ktally_retries_total{ktally_job=\"j\",cause=\"cause12\"}"));
  g_assert_cmpuint (value_of (text, "ktally_retries_total{ktally_job=\"j\",cause=\"other\"}"), ==, 18);
}

static void
test_recent_ring (void)
{
  g_autoptr(KtMetrics) m = new_faked ("j", 5);
  g_auto(KtMetricsSnapshot) snap = { 0 };
  /* 198 bytes of ASCII, then a 3-byte character across the 199-byte cut. */
  g_autofree char *filler = g_strnfill (197, 'y');
  g_autofree char *long_error = g_strconcat ("x", filler, "\xe2\x82\xac tail", NULL);

  for (guint i = 1; i <= 25; i++)
    {
      kt_metrics_batch (m, &(KtBatchReport) { KT_BATCH_IDLE, 0, 0, 0, 0, 0, 0, NULL, 0, 0, 0, 0 });
      kt_metrics_batch (m, &(KtBatchReport) { i == 25 ? KT_BATCH_FAILED : KT_BATCH_COMMITTED,
                                              0.1, 1, i, 0, i, 0,
                                              i == 25 ? long_error : NULL, 0, 0, 0, 0 });
    }
  kt_metrics_snapshot (m, &snap);
  g_assert_cmpuint (snap.recent->len, ==, KT_METRICS_RECENT);
  g_assert_cmpuint (g_array_index (snap.recent, KtRecentBatch, 0).records, ==, 25);
  g_assert_cmpint (g_array_index (snap.recent, KtRecentBatch, 0).result, ==, KT_BATCH_FAILED);
  g_assert_cmpuint (strlen (g_array_index (snap.recent, KtRecentBatch, 0).error), ==, 198);
  g_assert_true (g_utf8_validate (g_array_index (snap.recent, KtRecentBatch, 0).error, -1, NULL));
  for (guint i = 0; i < snap.recent->len; i++)
    {
      g_assert_cmpuint (g_array_index (snap.recent, KtRecentBatch, i).records, ==, 25 - i);
      g_assert_cmpint (g_array_index (snap.recent, KtRecentBatch, i).result, !=, KT_BATCH_IDLE);
    }
  g_assert_cmpuint (snap.batches[KT_BATCH_IDLE], ==, 25);
  g_assert_cmpuint (snap.batches[KT_BATCH_COMMITTED], ==, 24);
  g_assert_cmpuint (snap.records, ==, 24 * 25 / 2);  /* the failed batch's 25 are not in */
}

/* One step of a health scenario: advance the clock, report, check. */
typedef struct
{
  double        advance;   /* seconds */
  gint          report;    /* a KtBatchResult, or -1: none */
  gboolean      healthy;
  const char   *reason;    /* a substring of the reason */
} HealthStep;

typedef struct
{
  const char *path;
  double      interval;
  HealthStep  steps[8];
} HealthCase;

#define HEALTH_END { -1, -1, FALSE, NULL }

static const HealthCase health_cases[] = {
  { "/metrics/health/start-up", 5, {
      { 0, -1, FALSE, "no batch has succeeded yet" },
      { 3, KT_BATCH_COMMITTED, TRUE, "succeeded (committed) 0.0 s ago (healthy within 15 s)" },
      { 15, -1, TRUE, "15.0 s ago" },
      { 0.1, -1, FALSE, "no batch has succeeded for 15.1 s" },
      HEALTH_END } },
  { "/metrics/health/idle-is-healthy", 2, {
      { 1, KT_BATCH_IDLE, TRUE, "succeeded (idle)" },
      { 9, KT_BATCH_IDLE, TRUE, "(healthy within 10 s)" },  /* the 10 s floor */
      { 10.5, -1, FALSE, "no batch has succeeded for 10.5 s" },
      HEALTH_END } },
  { "/metrics/health/one-failure-is-not-enough", 5, {
      { 1, KT_BATCH_COMMITTED, TRUE, "ok" },
      { 1, KT_BATCH_FAILED, TRUE, "; the last batch failed 0.0 s ago: boom" },
      { 14.5, KT_BATCH_FAILED, FALSE, "no batch has succeeded for 15.5 s" },
      { 0, -1, FALSE, "the last batch failed 0.0 s ago: boom" },
      { 1, KT_BATCH_COMMITTED, TRUE, "succeeded (committed)" },
      HEALTH_END } },
  { "/metrics/health/fenced-is-not-success", 0, {
      { 0, KT_BATCH_FENCED, FALSE, "no batch has succeeded yet" },
      HEALTH_END } },
};

static void
test_health (gconstpointer data)
{
  const HealthCase *c = data;
  g_autoptr(KtMetrics) m = new_faked ("j", c->interval);

  for (guint i = 0; c->steps[i].advance >= 0; i++)
    {
      const HealthStep *s = &c->steps[i];
      g_autoptr(GString) reason = g_string_new (NULL);

      fake_mono_us += (gint64) (s->advance * G_USEC_PER_SEC);
      if (s->report >= 0)
        kt_metrics_batch (m, &(KtBatchReport) { (KtBatchResult) s->report, 0.1, 1, 1, 0, 1, 0,
                                                s->report == KT_BATCH_FAILED ? "boom" : NULL, 0, 0, 0, 0 });
      g_assert_cmpint (kt_metrics_healthy (m, reason), ==, s->healthy);
      if (strstr (reason->str, s->reason) == NULL)
        g_error ("step %u: reason '%s' lacks '%s'", i, reason->str, s->reason);
      g_assert_true (g_str_has_suffix (reason->str, "\n"));
    }
}

/* ---- /livez and /readyz (#16): liveness is the loop turning, readiness
 * is committing within the bounds; a fake clock walks through each state. */

typedef enum { ALIVE, COMMIT, IDLE, FAIL, FENCE, LAG, NOTHING } ProbeAction;

typedef struct
{
  double      advance;   /* seconds before the action; < 0 ends the case */
  ProbeAction action;
  const char *topic;     /* NULL: the loop did not turn; LAG: whose partition 0 */
  gint64      lag;       /* LAG: partition 0's lag */
  gboolean    live, ready;
  const char *reason;    /* the readiness (or, if live is FALSE, liveness) text has it */
} ProbeStep;

typedef struct
{
  const char *path;
  double      interval;
  gint64      max_lag;
  double      max_commit_age, max_stall;
  ProbeStep   steps[10];
} ProbeCase;

#define PROBE_END { -1, NOTHING, NULL, 0, FALSE, FALSE, NULL }

static const ProbeCase probe_cases[] = {
  { "/metrics/probes/starting", 5, -1, 0, 120, {
      { 0, NOTHING, NULL, 0, TRUE, FALSE, "not ready: no batch has succeeded yet" },
      { 1, ALIVE, "t", 0, TRUE, FALSE, "no batch has succeeded yet" },
      { 1, COMMIT, "t", 0, TRUE, TRUE, "ready: committing, the last batch succeeded 0.0 s ago" },
      PROBE_END } },
  /* MySQL or Kafka down: the batch fails, the loop waits and retries:
   * alive, not ready, at once; ready again at the next success. */
  { "/metrics/probes/outage", 1, -1, 0, 120, {
      { 0, COMMIT, "t", 0, TRUE, TRUE, "ready" },
      { 1, FAIL, "t", 0, TRUE, FALSE, "the last batch failed 0.0 s ago: boom" },
      { 30, ALIVE, "t", 0, TRUE, FALSE, "failed 30.0 s ago" },
      { 1, IDLE, "t", 0, TRUE, TRUE, "ready" },
      PROBE_END } },
  /* A fenced batch is neither: the last result before it stands. */
  { "/metrics/probes/fenced", 1, -1, 0, 120, {
      { 0, COMMIT, "t", 0, TRUE, TRUE, "ready" },
      { 1, FENCE, "t", 0, TRUE, TRUE, "ready" },
      PROBE_END } },
  { "/metrics/probes/commit-age-default", 5, -1, 0, 120, {
      { 0, COMMIT, "t", 0, TRUE, TRUE, "ready" },
      { 60, ALIVE, "t", 0, TRUE, TRUE, "ready" },  /* 3 intervals, at least 60 s */
      { 0.5, ALIVE, "t", 0, TRUE, FALSE, "has succeeded for 60.5 s (--health-max-commit-age 60 s)" },
      PROBE_END } },
  { "/metrics/probes/commit-age-intervals", 30, -1, 0, 120, {
      { 0, COMMIT, "t", 0, TRUE, TRUE, "ready" },
      { 89, ALIVE, "t", 0, TRUE, TRUE, "ready" },
      { 2, ALIVE, "t", 0, TRUE, FALSE, "(--health-max-commit-age 90 s)" },
      PROBE_END } },
  { "/metrics/probes/commit-age-given", 1, -1, 5, 120, {
      { 0, IDLE, "t", 0, TRUE, TRUE, "ready" },
      { 5.5, ALIVE, "t", 0, TRUE, FALSE, "(--health-max-commit-age 5 s)" },
      PROBE_END } },
  { "/metrics/probes/lag", 1, 100, 0, 120, {
      { 0, COMMIT, "t", 0, TRUE, TRUE, "lag 0" },
      { 0, LAG, "t", 100, TRUE, TRUE, "lag 100" },
      { 0, LAG, "t", 101, TRUE, FALSE, "not ready: lag 101 offsets is over --health-max-lag 100" },
      { 0, LAG, "t", 0, TRUE, TRUE, "lag 0" },
      PROBE_END } },
  /* The loop stuck (in a call that never returns): not alive, and
   * /readyz says so through the commit age. */
  { "/metrics/probes/stall", 1, -1, 0, 10, {
      { 0, COMMIT, "t", 0, TRUE, TRUE, "ready" },
      { 10, NOTHING, NULL, 0, TRUE, TRUE, "ready" },
      { 0.5, NOTHING, NULL, 0, FALSE, TRUE,
        "not alive: the batch loop moved 10.5 s ago (--health-max-stall 10 s)" },
      { 0, ALIVE, "t", 0, TRUE, TRUE, "ready" },
      PROBE_END } },
  /* Two topics, one batch loop: the lag is theirs together. */
  { "/metrics/probes/topics", 1, 10, 0, 120, {
      { 0, COMMIT, "a", 0, TRUE, TRUE, "ready" },
      { 0, LAG, "a", 6, TRUE, TRUE, "lag 6" },
      { 0, LAG, "b", 6, TRUE, FALSE, "lag 12 offsets is over --health-max-lag 10" },
      { 0, LAG, "a", 0, TRUE, TRUE, "lag 6" },
      PROBE_END } },
};

static void
test_probes (gconstpointer data)
{
  const ProbeCase *c = data;
  g_autoptr(KtMetrics) m = new_faked ("j", c->interval);

  kt_metrics_set_health (m, c->max_lag, c->max_commit_age, c->max_stall);
  for (guint i = 0; c->steps[i].advance >= 0; i++)
    {
      const ProbeStep *s = &c->steps[i];
      g_autoptr(GString) live = g_string_new (NULL);
      g_autoptr(GString) ready = g_string_new (NULL);
      KtBatchReport report = { .error = "boom", .duration = 0.1 };

      fake_mono_us += (gint64) (s->advance * G_USEC_PER_SEC);
      if (s->topic != NULL)
        kt_metrics_alive (m);
      switch (s->action)
        {
        case COMMIT: report.result = KT_BATCH_COMMITTED; break;
        case IDLE: report.result = KT_BATCH_IDLE; break;
        case FAIL: report.result = KT_BATCH_FAILED; break;
        case FENCE: report.result = KT_BATCH_FENCED; break;
        default: report.result = KT_BATCH_N_RESULTS;
        }
      if (report.result != KT_BATCH_N_RESULTS)
        kt_metrics_batch (m, &report);
      if (s->action == LAG)
        kt_metrics_partition (m, s->topic, 0, 0, s->lag, 0);
      g_test_message ("step %u", i);
      g_assert_cmpint (kt_metrics_live (m, live), ==, s->live);
      g_assert_cmpint (kt_metrics_ready (m, ready), ==, s->ready);
      /* The series alerting sees says what /readyz says. */
      g_assert_cmpfloat (rendered (m, "ktally_ready{ktally_job=\"j\"}"), ==, s->ready ? 1 : 0);
      if (strstr (s->live ? ready->str : live->str, s->reason) == NULL)
        g_error ("step %u: '%s' lacks '%s'", i, s->live ? ready->str : live->str, s->reason);
      g_assert_true (g_str_has_suffix (live->str, "\n") && g_str_has_suffix (ready->str, "\n"));
    }
}

static gint writers_left;

#define N_WRITERS 4
#define N_ROUNDS  20000

static gpointer
writer (gpointer data)
{
  KtMetrics *m = data;

  for (guint i = 0; i < N_ROUNDS; i++)
    {
      kt_metrics_batch (m, &(KtBatchReport) { i % 2 ? KT_BATCH_COMMITTED : KT_BATCH_IDLE,
                                              0.001 * (i % 7), 1, 3, 1, 1, 1, NULL, 0, 0, 0, 0 });
      kt_metrics_partition (m, "t", (gint32) (i % 5), i, i + 1, 0);
      if (i % 100 == 0)
        kt_metrics_retry (m, "kafka");
    }
  g_atomic_int_add (&writers_left, -1);
  return NULL;
}

/* Renders, snapshots and health checks while the writers run: a missing
 * lock shows as a lost count below, or as a crash under ASan. */
static gpointer
reader (gpointer data)
{
  KtMetrics *m = data;
  guint renders = 0;

  while (g_atomic_int_get (&writers_left) > 0 || renders == 0)
    {
      g_autoptr(GString) out = g_string_new (NULL);
      g_auto(KtMetricsSnapshot) snap = { 0 };
      g_autoptr(GString) reason = g_string_new (NULL);

      kt_metrics_render (m, out);
      kt_metrics_snapshot (m, &snap);
      kt_metrics_healthy (m, reason);
      g_assert_true (g_str_has_suffix (out->str, "\n"));
      g_assert_cmpuint (snap.partitions->len, <=, 5);
      renders++;
    }
  return GUINT_TO_POINTER (renders);
}

static void
test_threads (void)
{
  g_autoptr(KtMetrics) m = kt_metrics_new ("j", 1);
  GThread *threads[N_WRITERS + 1];
  g_autofree char *text = NULL;

  g_atomic_int_set (&writers_left, N_WRITERS);
  threads[N_WRITERS] = g_thread_new ("reader", reader, m);
  for (guint i = 0; i < N_WRITERS; i++)
    threads[i] = g_thread_new ("writer", writer, m);
  for (guint i = 0; i <= N_WRITERS; i++)
    g_thread_join (threads[i]);

  text = render (m);
  g_assert_cmpuint (value_of (text, "ktally_batches_total{ktally_job=\"j\",result=\"committed\"}"), ==,
                    N_WRITERS * N_ROUNDS / 2);
  g_assert_cmpuint (value_of (text, "ktally_batches_total{ktally_job=\"j\",result=\"idle\"}"), ==,
                    N_WRITERS * N_ROUNDS / 2);
  g_assert_cmpuint (value_of (text, "ktally_records_total{ktally_job=\"j\"}"), ==,
                    3 * N_WRITERS * N_ROUNDS / 2);
  g_assert_cmpuint (value_of (text, "ktally_batch_duration_seconds_count{ktally_job=\"j\"}"), ==,
                    N_WRITERS * N_ROUNDS / 2);
  g_assert_cmpuint (value_of (text, "ktally_retries_total{ktally_job=\"j\",cause=\"kafka\"}"), ==,
                    N_WRITERS * N_ROUNDS / 100);
  g_assert_cmpuint (value_of (text, "ktally_partition_lag{ktally_job=\"j\",topic=\"t\",partition=\"4\"}"),
                    ==, 1);
  g_assert_null (find_value (text, "ktally_partition_lag{ktally_job=\"j\",topic=\"t\",partition=\"5\"}"));
}

static gboolean
fake_process (KtProcessSample *out)
{
  *out = (KtProcessSample) { .cpu_seconds = 12.345, .resident_bytes = 41943040,
                             .virtual_bytes = 536870912, .open_fds = 17, .max_fds = 1024,
                             .start_time = 1700000000.5 };
  return TRUE;
}

/* ktally_build_info last among ktally's series, then the process_* ones,
 * named as every Prometheus client names them, without ktally_job. */
/* The server a job writes to, once known, and its changes (failovers);
 * the same server again is no change. */
static void
test_mysql_server (void)
{
  g_autoptr(KtMetrics) m = new_faked ("j", 5);
  g_autofree char *before = render (m);
  g_autofree char *first = NULL, *moved = NULL;

  g_assert_null (strstr (before, "ktally_mysql_server"));
  kt_metrics_set_mysql_server (m, NULL);
  kt_metrics_set_mysql_server (m, "127.0.0.1:3306");
  kt_metrics_set_mysql_server (m, "127.0.0.1:3306");
  first = render (m);
  g_assert_nonnull (strstr (first, "\nktally_mysql_server_info{ktally_job=\"j\","
                                   "server=\"127.0.0.1:3306\"} 1\n"));
  g_assert_nonnull (strstr (first, "\nktally_mysql_server_changes_total{ktally_job=\"j\"} 0\n"));
  kt_metrics_set_mysql_server (m, "[::1]:3307");
  moved = render (m);
  g_assert_nonnull (strstr (moved, "server=\"[::1]:3307\"} 1\n"));
  g_assert_null (strstr (moved, "127.0.0.1:3306"));
  g_assert_nonnull (strstr (moved, "\nktally_mysql_server_changes_total{ktally_job=\"j\"} 1\n"));
}

static void
test_build_and_process (void)
{
  g_autoptr(KtMetrics) m = new_faked ("j", 5);
  g_autofree char *text = NULL;
  const char *build;

  kt_metrics_set_build_info (m, "0.1.0", "2.0.2", "3.3.8");
  kt_metrics_set_process (m, fake_process);
  text = render (m);
  build = strstr (text, "# HELP ktally_build_info ");
  g_assert_nonnull (build);
  g_assert_true (g_str_has_suffix (text,
    "# TYPE ktally_build_info gauge\n"
    "ktally_build_info{version=\"0.1.0\",librdkafka=\"2.0.2\",mariadb_client=\"3.3.8\"} 1\n"
    "# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.\n"
    "# TYPE process_cpu_seconds_total counter\n"
    "process_cpu_seconds_total 12.35\n"
    "# HELP process_resident_memory_bytes Resident memory size in bytes.\n"
    "# TYPE process_resident_memory_bytes gauge\n"
    "process_resident_memory_bytes 41943040\n"
    "# HELP process_virtual_memory_bytes Virtual memory size in bytes.\n"
    "# TYPE process_virtual_memory_bytes gauge\n"
    "process_virtual_memory_bytes 536870912\n"
    "# HELP process_open_fds Number of open file descriptors.\n"
    "# TYPE process_open_fds gauge\n"
    "process_open_fds 17\n"
    "# HELP process_max_fds Maximum number of open file descriptors.\n"
    "# TYPE process_max_fds gauge\n"
    "process_max_fds 1024\n"
    "# HELP process_start_time_seconds Start time of the process since unix epoch in seconds.\n"
    "# TYPE process_start_time_seconds gauge\n"
    "process_start_time_seconds 1700000000.50\n"));
  /* No series of ktally's carries Prometheus's own label name. */
  g_assert_null (strstr (text, "{job="));
  g_assert_null (strstr (text, ",job="));
}

/* This very process, read from /proc. */
static void
test_process_real (void)
{
  KtProcessSample p;
  double now = (double) g_get_real_time () / G_USEC_PER_SEC;

  g_assert_true (kt_process_sample (&p));
  g_assert_cmpint (p.resident_bytes, >, 1024 * 1024);
  g_assert_cmpint (p.virtual_bytes, >=, p.resident_bytes);
  g_assert_cmpint (p.open_fds, >=, 3);  /* stdin, stdout, stderr */
  g_assert_cmpint (p.max_fds, >=, p.open_fds);
  g_assert_cmpfloat (p.cpu_seconds, >=, 0);
  g_assert_cmpfloat (p.start_time, <=, now + 1);
  g_assert_cmpfloat (p.start_time, >, now - 3600);  /* a test runs for less than an hour */
}

/* The lag is the high watermark less the offset, never below 0 (a stored
 * offset past a high watermark planned a moment earlier). */
static void
test_partition_high (void)
{
  g_autoptr(KtMetrics) m = new_faked ("j", 5);
  g_autofree char *text = NULL;

  kt_metrics_partition (m, "t", 0, 120, 100, 0);
  kt_metrics_partition (m, "t", 1, 40, 100, 0);
  text = render (m);
  g_assert_cmpuint (value_of (text, "ktally_partition_lag{ktally_job=\"j\",topic=\"t\",partition=\"0\"}"), ==, 0);
  g_assert_cmpuint (value_of (text, "ktally_partition_lag{ktally_job=\"j\",topic=\"t\",partition=\"1\"}"), ==, 60);
  g_assert_cmpuint (value_of (text, "ktally_partition_high_watermark{ktally_job=\"j\",topic=\"t\","
                                    "partition=\"1\"}"), ==, 100);
}

#define LAG_SECONDS "ktally_partition_lag_seconds{ktally_job=\"j\",topic=\"t\",partition=\"0\"}"

/* The lag in time: the age of the oldest record not yet committed, at
 * each scrape; 0 when none was left; kept while the offset stands still
 * and its time is not told again; forgotten when the offset moves. */
static void
test_partition_lag_seconds (void)
{
  g_autoptr(KtMetrics) m = new_faked ("j", 5);
  gint64 now_ms = fake_wall_us / 1000;

  kt_metrics_partition (m, "t", 0, 10, 15, 0);
  g_assert_cmpfloat (rendered (m, LAG_SECONDS), ==, 0);  /* not known yet */
  kt_metrics_partition (m, "t", 0, 10, 15, now_ms - 42500);
  g_assert_cmpfloat_with_epsilon (rendered (m, LAG_SECONDS), 42.5, 1e-9);
  /* It grows while the job stands still (MySQL down: no batch succeeds). */
  fake_wall_us += 10 * G_USEC_PER_SEC;
  g_assert_cmpfloat_with_epsilon (rendered (m, LAG_SECONDS), 52.5, 1e-9);
  /* The same offset again, its record's time unknown this time: kept. */
  kt_metrics_partition (m, "t", 0, 10, 20, 0);
  g_assert_cmpfloat_with_epsilon (rendered (m, LAG_SECONDS), 52.5, 1e-9);
  /* The offset moved on: the next record's time, or 0 until it is told. */
  kt_metrics_partition (m, "t", 0, 12, 20, 0);
  g_assert_cmpfloat (rendered (m, LAG_SECONDS), ==, 0);
  kt_metrics_partition (m, "t", 0, 12, 20, now_ms + 5000);
  g_assert_cmpfloat_with_epsilon (rendered (m, LAG_SECONDS), 5, 1e-9);
  /* A record stamped in the future (a producer's clock ahead): never below 0. */
  kt_metrics_partition (m, "t", 0, 12, 20, now_ms + 60000);
  g_assert_cmpfloat (rendered (m, LAG_SECONDS), ==, 0);
  /* Caught up: nothing unread, whatever time is told. */
  kt_metrics_partition (m, "t", 0, 20, 20, now_ms - 1000);
  g_assert_cmpfloat (rendered (m, LAG_SECONDS), ==, 0);
  /* A stored offset beyond the high watermark (a replay's --until). */
  kt_metrics_partition (m, "t", 0, 25, 20, now_ms - 1000);
  g_assert_cmpfloat (rendered (m, LAG_SECONDS), ==, 0);
}

/* A reload's outcome: the start counts as a success; a reload that keeps
 * the running settings sets 0 and leaves the time of the last success; a
 * successful one with changes needing a restart says so. */
static void
test_reload (void)
{
  g_autoptr(KtMetrics) m = new_faked ("j", 5);
  const char *ok = "ktally_config_last_reload_successful{ktally_job=\"j\"}";
  const char *at = "ktally_config_last_reload_success_timestamp_seconds{ktally_job=\"j\"}";
  const char *pending = "ktally_config_restart_pending{ktally_job=\"j\"}";
  const char *schema = "ktally_schema_version{ktally_job=\"j\"}";

  g_assert_cmpfloat (rendered (m, ok), ==, 1);
  g_assert_cmpfloat (rendered (m, at), ==, 1700000000);
  g_assert_cmpfloat (rendered (m, schema), ==, 0);
  kt_metrics_schema_version (m, 6);
  g_assert_cmpfloat (rendered (m, schema), ==, 6);
  fake_wall_us += 30 * G_USEC_PER_SEC;
  kt_metrics_reload (m, FALSE, FALSE);
  g_assert_cmpfloat (rendered (m, ok), ==, 0);
  g_assert_cmpfloat (rendered (m, at), ==, 1700000000);
  fake_wall_us += 30 * G_USEC_PER_SEC;
  kt_metrics_reload (m, TRUE, TRUE);
  g_assert_cmpfloat (rendered (m, ok), ==, 1);
  g_assert_cmpfloat (rendered (m, at), ==, 1700000060);
  g_assert_cmpfloat (rendered (m, pending), ==, 1);
  /* A failed one says nothing new of what needs a restart. */
  kt_metrics_reload (m, FALSE, FALSE);
  g_assert_cmpfloat (rendered (m, pending), ==, 1);
  kt_metrics_reload (m, TRUE, FALSE);
  g_assert_cmpfloat (rendered (m, pending), ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/metrics/render/empty", test_render_empty);
  g_test_add_func ("/metrics/render/updates", test_render_updates);
  g_test_add_func ("/metrics/histogram/cumulative", test_histogram_cumulative);
  g_test_add_func ("/metrics/labels/escaping", test_labels_escaping);
  g_test_add_func ("/metrics/retry/cap", test_retry_cap);
  g_test_add_func ("/metrics/recent/ring", test_recent_ring);
  for (guint i = 0; i < G_N_ELEMENTS (health_cases); i++)
    g_test_add_data_func (health_cases[i].path, &health_cases[i], test_health);
  for (gsize i = 0; i < G_N_ELEMENTS (probe_cases); i++)
    g_test_add_data_func (probe_cases[i].path, &probe_cases[i], test_probes);
  g_test_add_func ("/metrics/threads", test_threads);
  g_test_add_func ("/metrics/build-and-process", test_build_and_process);
  g_test_add_func ("/metrics/mysql-server", test_mysql_server);
  g_test_add_func ("/metrics/process/real", test_process_real);
  g_test_add_func ("/metrics/partition/high-watermark", test_partition_high);
  g_test_add_func ("/metrics/partition/lag-seconds", test_partition_lag_seconds);
  g_test_add_func ("/metrics/reload", test_reload);
  return g_test_run ();
}
