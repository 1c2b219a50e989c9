/* reload.h - SIGHUP: the command's words and its --config file read again.
 *
 * The scheduler knows nothing of files: between batches it asks its
 * turn hook (run.h) for newer settings, and this module answers it.
 * What may change while a job runs (the interval, the caps, the MySQL
 * credentials, the log level) is handed to the scheduler; anything else
 * that changed is logged as needing a restart, one line each, and the
 * running value stays. A file that no longer parses changes nothing. */
#pragma once
#include <glib.h>
#include "cli.h"
#include "run.h"

typedef struct _KtReload KtReload;

/* Asks for a reload at the next kt_reload_poll(), of whichever KtReload
 * polls first. Async-signal-safe: the SIGHUP handler calls it. */
void      kt_reload_request (void);

/* Whether a reloader exists (the command reloads at SIGHUP): for the
 * line that says what a SIGHUP does. */
gboolean  kt_reload_active  (void);

/* A reloader for the running @config (borrowed: it must outlive the
 * reloader). */
KtReload *kt_reload_new  (const KtConfig *config);
void      kt_reload_free (KtReload *self);  /* NULL is fine */

/* Where each reload reports whether it applied (ktally_config_*): the
 * run's registry (borrowed: it must outlive the reloader); NULL: nowhere. */
void      kt_reload_set_metrics (KtReload *self, KtMetrics *metrics);

/* For KtRunHooks.turn, callable from any thread: if a reload was asked
 * for, one caller does it (parses again, applies the log level, logs one
 * line of what applies and one of what needs a restart); then, if
 * @settings is older than the newest settings, replaces it and returns
 * TRUE. *@reloaded (may be NULL) tells whether this call did a reload. */
gboolean  kt_reload_poll (KtReload *self, KtRunSettings *settings, gboolean *reloaded);

/* One setting a reload found changed. */
typedef struct
{
  char    *setting;  /* the option ("interval", "db-password-file", "log-level",
                      * "password"), or a config key ("host", a [kafka] property) */
  char    *section;  /* the config file's section of that key ("mysql"), or NULL */
  char    *from;     /* as the config file spells it; NULL: not set, or a secret */
  char    *to;
  gboolean secret;   /* a secret: said to have changed, its values never shown */
  char    *text;     /* the line people read */
} KtReloadChange;

void      kt_reload_change_free (gpointer change);

/* What a reload to @fresh changes: appends to @apply (KtReloadChange) one
 * per setting that differs from @current's (the newest applied;
 * @running's before any reload) and may change while running, and to
 * @restart one per other setting that differs from @running's (the
 * process's, which it keeps until restarted). Never a secret's value.
 * Give both arrays kt_reload_change_free(). */
void      kt_reload_diff (const KtConfig *running, const KtConfig *current,
                          const KtConfig *fresh, GPtrArray *apply, GPtrArray *restart);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (KtReload, kt_reload_free)
