/* metrics.h - what the service has done, for /metrics, /healthz and /.
 *
 * The batch loop reports each batch, partition position, retry and data
 * loss here; the HTTP side (http.c) reads it from its own threads. Every
 * call takes one mutex for a few microseconds and never does I/O, so the
 * batch loop never waits on a client: rendering copies out under the lock
 * and sending happens after it. Nothing here touches Kafka or MySQL. */
#pragma once
#include <glib.h>
#include "process.h"

typedef struct _KtMetrics KtMetrics;

typedef enum
{
  KT_BATCH_COMMITTED,  /* counts and offsets are in */
  KT_BATCH_FENCED,     /* another writer moved an offset first: rolled back */
  KT_BATCH_FAILED,     /* an error: nothing (or, unknown, everything) written */
  KT_BATCH_IDLE,       /* nothing new to read: a success that read nothing */
  KT_BATCH_N_RESULTS
} KtBatchResult;

/* What one batch did, as the batch loop reports it. Lines: error + other
 * + malformed is every line read. */
typedef struct
{
  KtBatchResult result;
  double        duration;    /* seconds, from planning to the commit's answer */
  guint         partitions;  /* ranges read */
  guint64       records;
  guint64       lines_error;
  guint64       lines_other;
  guint64       lines_malformed;
  const char   *error;       /* FAILED: what happened (copied); else NULL */
  guint64       bytes;       /* bytes of record values read */
  guint64       lines_folded;  /* of lines_error, those counted in (other) rows (--max-keys) */
  guint64       dead_kept;     /* of lines_malformed, those written to --dead-letters */
  guint64       dead_dropped;  /* ...and those past --dead-letters-max, not kept */
} KtBatchReport;

#define KT_METRICS_RECENT 20  /* batches kept for the page, idle ones aside */

/* One of the last batches (idle batches are counted, not kept). */
typedef struct
{
  gint64        finished;    /* wall clock, microseconds since the epoch */
  KtBatchResult result;
  double        duration;
  guint         partitions;
  guint64       records;
  guint64       lines_error;
  guint64       lines_other;
  guint64       lines_malformed;
  char          error[200];  /* FAILED: the message, cut at a UTF-8 boundary */
} KtRecentBatch;

/* Where one partition stood after the last successful batch. */
typedef struct
{
  char   *topic;
  gint32  partition;
  gint64  offset;   /* the stored offset: the next one to read */
  gint64  high;     /* the high watermark when the batch planned */
  gint64  lag;      /* high watermark minus offset */
  gint64  updated;  /* wall clock, microseconds since the epoch */
  gint64  unread;   /* Kafka timestamp (ms) of the oldest record not yet
                     * committed; 0: none left, or not known */
} KtPartitionRow;

/* A consistent copy of the registry, for the page: taken under the lock
 * in one go, then read at leisure. */
typedef struct
{
  guint64 batches[KT_BATCH_N_RESULTS];
  guint64 records;
  guint64 lines_error;
  guint64 lines_other;
  guint64 lines_malformed;
  guint64 data_loss_events;
  guint64 data_lost_offsets;
  gint64  last_commit;   /* wall clock, microseconds; 0: none yet */
  GArray *partitions;    /* KtPartitionRow, by topic then partition */
  GArray *recent;        /* KtRecentBatch, newest first, at most KT_METRICS_RECENT */
} KtMetricsSnapshot;

/* @job labels every ktally_ series (as ktally_job: Prometheus's own job
 * label names the scrape). @interval is --interval (seconds; 0: back to
 * back), which sets how long /healthz waits for a success. */
KtMetrics  *kt_metrics_new      (const char *job, double interval);
void        kt_metrics_free     (KtMetrics *self);  /* NULL is fine */

/* For tests: where the registry reads the wall clock and the monotonic
 * clock (both in microseconds). NULL restores GLib's. Not thread-safe:
 * call before sharing the registry. */
typedef gint64 (*KtMetricsClock) (void);
void        kt_metrics_set_clock (KtMetrics *self, KtMetricsClock wall,
                                  KtMetricsClock monotonic);

/* ktally_build_info's labels: the versions of ktally and the client
 * libraries (copied). Unset, the series is left out. Call before sharing. */
void        kt_metrics_set_build_info (KtMetrics *self, const char *version,
                                       const char *librdkafka, const char *mariadb_client);

/* ktally_mysql_server_info's label: the MySQL server of the batch
 * connection, "host:port" (copied; NULL is ignored); a change from one
 * server to another (a failover) counts in
 * ktally_mysql_server_changes_total. Until the first, neither is shown. */
void        kt_metrics_set_mysql_server (KtMetrics *self, const char *server);

/* Where the process_* series come from: kt_process_sample() unless set;
 * NULL leaves them out (tests). Not thread-safe: call before sharing. */
typedef gboolean (*KtProcessFunc) (KtProcessSample *out);
void        kt_metrics_set_process (KtMetrics *self, KtProcessFunc sample);

/* The job given to kt_metrics_new() (constant), and the interval, which
 * a reload may change. */
const char *kt_metrics_job      (KtMetrics *self);
double      kt_metrics_interval (KtMetrics *self);
void        kt_metrics_set_interval (KtMetrics *self, double interval);

/* /readyz's and /livez's bounds: @max_lag offsets (-1: none), no good
 * batch for @max_commit_age seconds (0: 3 intervals, at least 60 s), and
 * /livez's @max_stall seconds. Defaults: -1, 0, 120. */
void        kt_metrics_set_health (KtMetrics *self, gint64 max_lag, double max_commit_age,
                                   double max_stall);

/* The batch loop is alive (it turned, or it waits and checks the time,
 * at least once a second): /livez's clock. */
void        kt_metrics_alive    (KtMetrics *self);

/* One batch ended. Records, bytes and lines count only when it COMMITTED
 * (a fenced or failed batch's are read again by a later one, and counting
 * them twice would break records_total == records produced); durations
 * are observed for every batch but idle ones, which would drown the
 * histogram in zeros. @report->error is copied. */
void        kt_metrics_batch    (KtMetrics *self, const KtBatchReport *report);

/* @topic/@partition's stored offset after a successful batch, the
 * high watermark it planned with (the lag is their difference, never below
 * 0), and, when some is left, the Kafka timestamp (milliseconds since the
 * epoch) of the record at @offset, the oldest not yet committed:
 * ktally_partition_lag_seconds is its age at each scrape (0 with nothing
 * left). @unread_ms 0: not known (the one known for the same offset
 * stays). The first report of a partition adds its series. */
void        kt_metrics_partition (KtMetrics *self, const char *topic, gint32 partition,
                                  gint64 offset, gint64 high, gint64 unread_ms);

/* The schema version of the job's database, once its tables are ready
 * (ktally_schema_version; 0 before). */
void        kt_metrics_schema_version (KtMetrics *self, int version);

/* A reload (SIGHUP) ended: @ok when the settings read back and what may
 * change was applied (a file that no longer parses: FALSE, the running
 * settings kept); @restart_pending when some change needs a restart.
 * Until the first reload, the settings of the start count as a successful
 * load at the registry's creation. */
void        kt_metrics_reload (KtMetrics *self, gboolean ok, gboolean restart_pending);

/* A batch (or a commit inside it) is tried again after a transient
 * failure. @cause is a short constant word ("mysql", "kafka",
 * "deadlock"...), the label value; past 16 distinct causes, the rest
 * count as "other" so that a bug cannot grow the series without end. */
void        kt_metrics_retry    (KtMetrics *self, const char *cause);

/* Retention removed @offsets offsets of one partition before they were
 * read (--on-data-loss skip): one event. */
void        kt_metrics_data_loss (KtMetrics *self, gint64 offsets);

/* Appends every series in the Prometheus text exposition format 0.0.4
 * (HELP and TYPE lines, cumulative histogram buckets, escaped labels):
 * ktally's, ktally_build_info, then the process_* series (sampled first,
 * outside the lock). */
void        kt_metrics_render   (KtMetrics *self, GString *out);

/* Whether the service is healthy: a batch (committed or idle) succeeded
 * within the last 3 intervals, and never less than 10 s (a back-to-back
 * service still needs time for one batch). A batch that fails once does
 * not make it unhealthy; failing for that long does. Appends one line to
 * @reason either way: what the last success and the last failure were. */
gboolean    kt_metrics_healthy  (KtMetrics *self, GString *reason);

/* /livez: the batch loop was alive (kt_metrics_alive()) within the last
 * max_stall seconds (before its first turn: ktally started within them):
 * the process is not hung. An outage of Kafka
 * or MySQL does not make it unlive (the loop waits and retries, alive).
 * Appends one line per reason to @reason either way. */
gboolean    kt_metrics_live     (KtMetrics *self, GString *reason);

/* /readyz: the job is committing: a batch (committed or idle, which
 * means nothing was left to commit) succeeded, the last one did not fail
 * (so MySQL or Kafka being down makes it unready at the first failed
 * batch), the last success is younger than max_commit_age, and the lag
 * over all partitions is at most max_lag. Appends one line per reason
 * (one "ready: ..." line when ready). */
gboolean    kt_metrics_ready    (KtMetrics *self, GString *reason);

/* Fills @out (which the caller clears with kt_metrics_snapshot_clear()). */
void        kt_metrics_snapshot (KtMetrics *self, KtMetricsSnapshot *out);
void        kt_metrics_snapshot_clear (KtMetricsSnapshot *snapshot);

/* "committed", "fenced", "failed", "idle": the label values. */
const char *kt_batch_result_name (KtBatchResult result);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (KtMetrics, kt_metrics_free)
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (KtMetricsSnapshot, kt_metrics_snapshot_clear)
