/* page.h - the page at /: the job's health, totals, chart, partitions and
 * last batches as one HTML document with an inline SVG chart.
 *
 * Pure: it takes a snapshot of the figures (metrics.h) and the chart's
 * rows (charts.h), already copied out of whatever lock guards them, and
 * hands back the page's text. It never reads the registry, MySQL, a
 * socket or the clock (times are printed in the local time zone, as
 * given), so the same input gives the same page. Every name and key it
 * shows is escaped for HTML: a job, table, topic or key is data, never
 * markup. */
#pragma once
#include <glib.h>
#include "charts.h"
#include "metrics.h"

/* The server reads the chart at most this often (seconds); the page says
 * so, and says when it fails, how soon it tries again. */
#define KT_PAGE_CHART_CACHE_S 5

/* Everything one page shows, borrowed for the call. */
typedef struct
{
  const char              *job;          /* the job's name */
  gboolean                 healthy;      /* /healthz's verdict */
  const char              *health;       /* and its text (a trailing newline is dropped) */
  const KtMetricsSnapshot *figures;      /* totals, partitions, recent batches */
  const char              *table;        /* the chart's table */
  const char *const       *dimensions;   /* its --by fields, or NULL */
  int                      bucket;       /* minutes: 1, 5 or 60 */
  gboolean                 have_db;      /* FALSE: no database, no chart */
  int                      dimension;    /* the chart shown: an index of
                                          * @dimensions, or -1 for the totals */
  const GArray            *points;       /* KtChartPoint, by minute then series */
  const GPtrArray         *keys;         /* GBytes: the keys of series 0.. */
  const char              *chart_error;  /* the chart could not be read: why; or NULL */
} KtPage;

/* Appends the whole document to @out. */
void kt_page_render    (const KtPage *page, GString *out);

/* The chart ?by=@by asks for: the index of @by in @dimensions, or -1
 * (the totals) for NULL or anything but one of them. */
int  kt_page_dimension (const char *const *dimensions, const char *by);
