/* runner.c - starting one run of a job (runner.h): what the scheduler
 * holds, and the start-up steps it retries. */
#include "runner.h"

#include <unistd.h>
#include "identity.h"
#include "migrations.h"
#include "schema.h"

gboolean
kt_runner_retry (KtRunner *r, KtRetryStep step, const char *what, GError **error)
{
  return kt_retry (r->stop, r->setup->run->startup_timeout, what, step, r, error);
}

/* Every topic is known (an unknown one is an error before anything else,
 * also in a group), and its partitions listed or subscribed to. */
static gboolean
startup_kafka (gpointer data, int timeout_ms, GError **error)
{
  KtRunner *r = data;

  kt_metrics_alive (r->metrics);  /* each try of start-up: alive while it waits */
  for (guint i = 0; i < r->feeds->len; i++)
    if (!kt_feed_start (r->feeds->pdata[i], timeout_ms, error))
      return FALSE;
  return TRUE;
}

/* MySQL's first connection, tried once while Kafka starts (a thread of
 * its own): the two servers' round trips, TLS and the database's checks
 * at once instead of one after the other, some 20 to 60 ms of every
 * start. A failure is only dropped here: startup_mysql tries again,
 * retried and reported as before, once Kafka has started. */
static gpointer
connect_early (gpointer data)
{
  KtRunner *r = data;
  g_autoptr(GError) error = NULL;

  if (!kt_db_connect (r->db, &error))
    g_debug ("MySQL: %s (tried again after Kafka)", error->message);
  return NULL;
}

static gboolean
startup_mysql (gpointer data, int timeout_ms, GError **error)
{
  KtRunner *r = data;

  (void) timeout_ms;
  kt_metrics_alive (r->metrics);
  return kt_db_connect (r->db, error);
}

gboolean
kt_runner_tables (gpointer data, int timeout_ms, GError **error)
{
  KtRunner *r = data;

  (void) timeout_ms;
  kt_metrics_alive (r->metrics);
  if (!kt_migrations_ready (r->db, r->hooks != NULL ? r->hooks->migrating : NULL,
                           r->hooks != NULL ? r->hooks->data : NULL, error))
    return FALSE;
  kt_metrics_schema_version (r->metrics, KT_SCHEMA_VERSION);
  if (!kt_identity_check (r->db, r->setup->identity, error))
    return FALSE;
  for (guint i = 0; i < r->feeds->len; i++)
    if (!r->kind->prepare (((KtFeed *) r->feeds->pdata[i])->state, error))
      return FALSE;
  return TRUE;
}

gboolean
kt_runner_check (gpointer data, int timeout_ms, GError **error)
{
  KtRunner *r = data;
  KtFeed *f = r->feeds->pdata[0];

  r->fixed = r->hooks->check (r->hooks->data, f->source, f->partitions, timeout_ms, error);
  return r->fixed;
}

void
kt_runner_clear (KtRunner *r)
{
  /* Whatever is in flight ends before what it uses goes (run.c joins it
   * first; this is for a path that did not). */
  if (r->committer != NULL)
    g_thread_join (g_steal_pointer (&r->committer));
  g_clear_error (&r->commit_error);
  g_clear_error (&r->landed_error);
  g_clear_pointer (&r->commit_again, g_ptr_array_unref);
  /* The kinds' states first: they may hold statements of the connection. */
  g_clear_pointer (&r->feeds, g_ptr_array_unref);
  g_clear_pointer (&r->db, kt_db_free);
  g_clear_pointer (&r->member_name, g_free);
  kt_run_settings_clear (&r->settings);
  if (r->setup != NULL)
    {
      g_mutex_clear (&r->db_lock);
      kt_flight_clear (&r->flight);
    }
}

gboolean
kt_runner_start (KtRunner *r, const KtRunSetup *setup, const KtRunHooks *hooks,
              const volatile int *stop, KtMetrics *metrics, gboolean *stopped, GError **error)
{
  const KtJobSpec *spec = setup->spec;
  GThread *early;
  gboolean kafka;
  g_autofree char *member = g_strdup_printf ("%s-%d@%s", spec->name, (int) getpid (),
                                             g_get_host_name ());

  r->setup = setup;
  r->hooks = hooks;
  r->stop = stop;
  r->metrics = metrics;
  kt_run_settings_init (&r->settings, setup->run, setup->db);
  r->member = spec->group != NULL;
  r->feeds = g_ptr_array_new_with_free_func ((GDestroyNotify) kt_feed_free);
  g_mutex_init (&r->db_lock);
  kt_flight_init (&r->flight);
  r->commit_again = g_ptr_array_new_with_free_func (g_free);
  *stopped = FALSE;
  r->kind = kt_kind_lookup (spec->kind, kt_mode_names[spec->mode], error);
  if (r->kind == NULL)
    return FALSE;
  r->db = kt_db_new (setup->db);
  r->member_name = kt_schema_member (member);
  for (guint i = 0; spec->topics[i] != NULL; i++)
    {
      KtFeed *f = kt_feed_new (setup, spec->topics[i], r->kind, r->db, r->member_name, metrics,
                               hooks != NULL && hooks->quiet, stop, error);
      if (f == NULL)
        return FALSE;
      f->db_lock = &r->db_lock;
      f->flight_gate = &r->flight;
      g_ptr_array_add (r->feeds, f);
    }

  early = g_thread_new ("ktally-connect", connect_early, r);
  kafka = kt_runner_retry (r, startup_kafka, "Kafka", error);
  g_thread_join (early);
  if (!kafka || !kt_runner_retry (r, startup_mysql, "MySQL", error))
    {
      if (!*stop)
        return FALSE;
      g_clear_error (error);  /* asked to stop while waiting: not a failure */
      *stopped = TRUE;
    }
  return TRUE;
}
