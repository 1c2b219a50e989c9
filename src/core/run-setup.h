/* run-setup.h - a job as the scheduler (run.h) takes it: what it is, where
 * its database and brokers are, how it runs and what it serves, each part
 * in the struct of the layer that uses it. Types only: the feeds (feed.h)
 * see them too. */
#pragma once
#include <glib.h>
#include "db.h"
#include "http.h"
#include "identity.h"
#include "job-spec.h"
#include "plan.h"
#include "source.h"

/* The run options a reload (SIGHUP) may change, listed once: KtRunOptions
 * holds them as the command was given them, KtRunSettings (run.h) as the
 * newest reload has them, and kt_run_settings_init() copies every one.
 * Their option rows say KT_OPT_RELOAD. */
#define KT_RUN_RELOADABLE(FIELD) \
  FIELD (double, interval)          /* seconds from one batch start to the next; \
                                     * 0: back to back */ \
  FIELD (gint64, max_per_partition) /* offsets per partition per batch */ \
  FIELD (gint64, max_batch_bytes)   /* bytes of values per read */
#define KT_RUN_FIELD(type, name) type name;

/* How the scheduler runs a job (run's and replay's options). */
typedef struct
{
  KT_RUN_RELOADABLE (KT_RUN_FIELD)
  gboolean     exit_when_idle;     /* end after a batch that found nothing new */
  KtOnDataLoss on_data_loss;
  double       startup_timeout;    /* seconds to wait for Kafka and MySQL at start */
  double       audit_keep;         /* seconds of ktally_batches kept row by row; 0: all */
} KtRunOptions;

/* A job to run: each part as its layer holds it; all of it outlives the run. */
typedef struct
{
  const KtJobSpec       *spec;      /* what the job is */
  const KtIdentity      *identity;  /* what the database records of it (identity.h) */
  const KtDbConfig      *db;
  const KtKafkaOptions  *kafka;
  const KtRunOptions    *run;
  const KtHealthOptions *health;
  const KtHttpChart     *chart;     /* what the page charts of its output */
} KtRunSetup;
