/* charts.h - the page's chart, read from a job's count table.
 *
 * The page at / (observe/page.c draws it; observe/http.c caches it and
 * serves it) shows the lines counted per bucket over the KT_CHART_HOURS
 * hours that end at the newest bucket in the table: the totals, or one
 * --by field's top keys stacked. This module builds those statements and
 * runs them on a connection the caller owns: no cache, no threads, no
 * HTML. Table and field names go into the SQL through
 * kt_db_append_identifier() (db.h), keys as hex literals: whatever a name
 * or a key holds, it cannot change a statement. It never writes. */
#pragma once
#include <glib.h>
#include "db.h"

/* The window the chart shows, and how many keys of a --by field it
 * stacks (the most lines in the window first); the rest is one series. */
#define KT_CHART_HOURS 6
#define KT_CHART_TOP   5

/* One stacked piece of a bar. */
typedef struct
{
  gint64  minute;   /* the bucket's first minute, since the epoch */
  guint   series;   /* 0..KT_CHART_TOP-1: the keys, in order; KT_CHART_TOP: the rest */
  guint64 count;
} KtChartPoint;

typedef struct _KtChartConnection KtChartConnection;

/* A connection for the chart, with the short timeouts a page can wait
 * (@connect_s, @io_s seconds) and, where the server knows one, a
 * server-side limit of @io_s on each statement; a read-only server (a
 * replica) will do. The caller owns it. Failures as kt_db_open(). */
KtChartConnection *kt_chart_connect (KtDbConfig *db, unsigned int connect_s,
                                     unsigned int io_s, GError **error);
void               kt_chart_disconnect (KtChartConnection *conn);  /* NULL is fine */

/* The statements kt_chart_read() runs, as text (new strings), for tests:
 * the newest bucket of @table in minutes since the epoch; the keys of
 * @field with the most lines after the minute @since; and the points
 * after @since, each bucket's lines split by @keys (GBytes, series 0..)
 * of @field, the rest as series KT_CHART_TOP (@field NULL: the totals,
 * series 0). */
char    *kt_chart_sql_newest (const char *table);
char    *kt_chart_sql_top    (const char *table, const char *field, gint64 since);
char    *kt_chart_sql_points (const char *table, const char *field, const GPtrArray *keys,
                              gint64 since);

/* Reads the chart of @table into @points (KtChartPoint, by minute then
 * series) and, with @field (a --by field; NULL: the totals), its top
 * keys into @keys (GBytes, the (other) key left out). Both start empty
 * and stay empty when the table has no rows. A failed statement:
 * KT_ERROR_TRANSIENT, naming @table and @description; drop the
 * connection. */
gboolean kt_chart_read (KtChartConnection *conn, const char *description, const char *table,
                        const char *field, GArray *points, GPtrArray *keys, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (KtChartConnection, kt_chart_disconnect)
