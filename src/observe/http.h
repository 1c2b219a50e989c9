/* http.h - `ktally run --http ADDR:PORT`: /metrics, /healthz and a page.
 *
 * Serves the KtMetrics registry from libmicrohttpd's own threads, never
 * the batch loop's: the loop only writes the registry and never waits on a
 * client. The page's chart reads the job's table through a MySQL connection of
 * its own, with timeouts, at most once every few seconds. Slow, oversized
 * or too many clients are cut off by limits (see http.c), not served
 * forever. */
#pragma once
#include <glib.h>
#include "metrics.h"
#include "db.h"

typedef struct _KtHttp KtHttp;

/* --http and the health bounds its /readyz and /livez apply. */
typedef struct
{
  char   *http;            /* ADDR:PORT, or NULL: no server */
  gint64  max_lag;         /* /readyz: offsets behind at most; -1: no bound */
  double  max_commit_age;  /* /readyz: seconds since a batch succeeded; 0: auto */
  double  max_stall;       /* /livez: seconds the batch loop may not move */
} KtHealthOptions;

/* What the page charts: the job's count table (a view in idempotent
 * mode), its bucket, and its --by fields, each a choice of the page's
 * selector (?by=FIELD) that stacks the field's top keys. */
typedef struct
{
  const char        *table;       /* NULL: error_log */
  const char *const *dimensions;  /* NULL: none */
  int                bucket;      /* minutes: 1, 5 or 60 */
} KtHttpChart;

/* Listens on @listen_addr: "IPV4:PORT" or "[IPV6]:PORT", numeric (no
 * name is looked up; nothing listens beyond that one address), port 0
 * for any free one. @metrics is borrowed and must outlive the server;
 * @db and @chart are copied (@db NULL: the page has no chart; @chart
 * NULL: error_log per minute). A malformed address, or
 * one that cannot be bound (in use, not on this host, not permitted):
 * KT_ERROR_USAGE, one line naming --http. */
KtHttp  *kt_http_start (const char *listen_addr, KtMetrics *metrics,
                        const KtDbConfig *db, const KtHttpChart *chart, GError **error);

/* The port actually bound (the one asked for, unless it was 0). */
guint16  kt_http_port  (KtHttp *self);

/* Closes every connection and joins the server's threads: a request in
 * the middle of the chart's query finishes first, within that query's
 * timeouts. NULL is fine. */
void     kt_http_stop  (KtHttp *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (KtHttp, kt_http_stop)
