/* notify.h - systemd's service notifications (sd_notify(3)) for `run`
 * under Type=notify: READY=1 once Kafka, MySQL and the tables answered,
 * STATUS= with the lag, WATCHDOG=1 from the batch loop, RELOADING=1 and
 * READY=1 around a reload, STOPPING=1 on SIGTERM, and EXTEND_TIMEOUT_USEC=
 * while a long step of the start (a schema migration) runs.
 *
 * The protocol is one datagram per message to the AF_UNIX socket named in
 * $NOTIFY_SOCKET, which systemd documents as stable: ktally speaks it
 * itself rather than linking libsystemd for one sendto(). Without
 * $NOTIFY_SOCKET (not under systemd, or Type=exec) every call does
 * nothing. Not thread-safe: the scheduler's thread only (but for the
 * extender's own thread, which only sends). */
#pragma once
#include <glib.h>

typedef struct _KtNotify KtNotify;

/* From the environment: $NOTIFY_SOCKET ("/path" or "@abstract"),
 * $WATCHDOG_USEC and $WATCHDOG_PID (the watchdog is ours only when it
 * names this process, or no process). Never fails: a socket that cannot
 * be used is logged at debug level and ignored. */
KtNotify *kt_notify_new  (void);
void      kt_notify_free (KtNotify *self);  /* NULL is fine */

/* Whether notifications go anywhere. */
gboolean  kt_notify_enabled (const KtNotify *self);

/* READY=1 with @status (once; later calls only update the status). */
void      kt_notify_ready    (KtNotify *self, const char *status);
/* STATUS=@status when it changed, at most once a second: a newer one
 * within the second waits for the next kt_notify_alive(). */
void      kt_notify_status   (KtNotify *self, const char *status);
/* The loop turned: WATCHDOG=1 when a quarter of the watchdog's period
 * has passed since the last ping; a held-back STATUS= once it may go. */
void      kt_notify_alive    (KtNotify *self);
/* A reload was applied: RELOADING=1 (with MONOTONIC_USEC) then READY=1;
 * nothing once stopping (kt_notify_ready() neither: never READY=1 after
 * STOPPING=1). */
void      kt_notify_reloaded (KtNotify *self);
/* While a step of the start that may outlast systemd's start timeout
 * runs on the caller's thread (a schema migration, or the wait for
 * another instance's): EXTEND_TIMEOUT_USEC=@usec at once, then again
 * every KT_NOTIFY_EXTEND_EVERY_US from a thread of its own, for as long as
 * the step lasts (a blocking ALTER TABLE gives the caller's thread no turn)
 * and not a moment longer: kt_notify_extend_end() stops it and joins the
 * thread. Calls do not nest; end without begin does nothing. */
#define KT_NOTIFY_EXTEND_US       (30 * G_USEC_PER_SEC)
#define KT_NOTIFY_EXTEND_EVERY_US (10 * G_USEC_PER_SEC)
void      kt_notify_extend_begin (KtNotify *self, gint64 usec);
void      kt_notify_extend_end   (KtNotify *self);
/* STOPPING=1 (once). */
void      kt_notify_stopping (KtNotify *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (KtNotify, kt_notify_free)
