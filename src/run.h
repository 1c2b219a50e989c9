/* run.h - the batch scheduler: `ktally run` as a long-lived service.
 *
 * Every --interval seconds: plan a batch from the offsets stored in MySQL
 * and Kafka's watermarks, read it, parse and reduce it, commit it. */
#pragma once
#include <glib.h>
#include "cli.h"

/* `ktally run` and `ktally replay` (a run with fixed ends that exits when
 * they are reached). Runs until *@stop is set (returns TRUE: the batch in flight was either
 * committed whole or abandoned whole), until idle with --exit-when-idle
 * (TRUE), or until a failure that retrying cannot cure (FALSE; the error's
 * code gives the exit status). Transient failures are logged and retried
 * with exponential backoff, capped at 30 s. A job of several topics is one
 * job: when one topic's runner fails for good, it sets *@stop, the others
 * finish their batch in flight, and the failure is returned. */
gboolean kt_run (const KtConfig *config, volatile int *stop, GError **error);

/* `ktally status`: per partition, the stored offset, log start, high
 * watermark, lag and any data loss, as a table or JSON on stdout. Reads
 * only: creates nothing. */
gboolean kt_status (const KtConfig *config, GError **error);

/* `ktally init-db`: applies sql/schema.sql (or sql/idempotent.sql). */
gboolean kt_init_db (const KtConfig *config, GError **error);
