/* counts.h - what the two count kinds share (kind-count.c,
 * kind-count-idempotent.c): their tables, reading a record into counts,
 * and their part of a batch's log line. */
#pragma once
#include <glib.h>
#include "cli.h"
#include "db.h"
#include "kind.h"
#include "offsets.h"
#include "parse.h"
#include "reduce.h"

/* The parser of the job's --pattern, --time-format, --levels, --bucket. */
KtParser *kt_counts_parser (const KtConfig *config, GError **error);

/* The count tables: error_log a table (transactional) or the view over
 * per-partition counts (@idempotent), and @output, a replay's table, with
 * error_log's columns. One database holds one mode: an error_log of the
 * other is refused (KT_ERROR_USAGE), and so is a table of another shape. */
gboolean  kt_counts_prepare (KtDb *db, gboolean idempotent, const char *output,
                             GError **error);

/* Parses one record into @reducer, adding what it read to @stats (the
 * audit row) and @summary, whose sample keeps the first malformed line. */
void      kt_counts_take (KtParser *parser, KtReducer *reducer, gint32 partition,
                          gint64 offset, const char *value, gsize len,
                          KtRangeStats *stats, KtBatchSummary *summary);

/* "L lines, E ERROR, M malformed, K minute buckets" (@bucket: --bucket in
 * minutes, which names the buckets: "5-minute", "hour"). */
void      kt_counts_line (const KtBatchSummary *summary, guint buckets, int bucket,
                          GString *line);
