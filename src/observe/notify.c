/* notify.c - sd_notify(3)'s protocol for `run` (notify.h). */
#include "notify.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* STATUS= at most this often: a back-to-back job commits hundreds of
 * batches a second, and systemd need not hear of each. */
#define STATUS_EVERY_US G_USEC_PER_SEC

struct _KtNotify
{
  int                fd;           /* -1: disabled */
  struct sockaddr_un addr;
  socklen_t          addr_len;
  gint64             watchdog_us;  /* 0: no watchdog of ours */
  gint64             last_ping;    /* monotonic */
  gint64             last_status;  /* monotonic */
  char              *status;       /* the last STATUS= sent */
  char              *pending;      /* a newer one, held back by STATUS_EVERY_US */
  gboolean           ready;
  gboolean           stopping;
  /* The extender: its thread, and how it is told to end. */
  GThread           *extender;
  GMutex             extend_lock;
  GCond              extend_cond;
  gboolean           extend_done;
  gint64             extend_usec;
};

static void
send_state (KtNotify *self, const char *state)
{
  if (self->fd < 0)
    return;
  /* A datagram: systemd reads it whole, or not at all. A full or gone
   * socket must never stop the job. */
  if (sendto (self->fd, state, strlen (state), MSG_NOSIGNAL,
              (const struct sockaddr *) &self->addr, self->addr_len) < 0)
    g_debug ("$NOTIFY_SOCKET: cannot send %.20s: %s", state, g_strerror (errno));
}

/* $NOTIFY_SOCKET into @self->addr: a path, or "@name" for the abstract
 * namespace (its first byte becomes NUL, and the length counts exactly
 * the name's bytes). */
static gboolean
parse_address (KtNotify *self, const char *socket_name)
{
  size_t n = strlen (socket_name);

  if ((socket_name[0] != '/' && socket_name[0] != '@') || n < 2
      || n >= sizeof self->addr.sun_path)
    return FALSE;
  self->addr.sun_family = AF_UNIX;
  memcpy (self->addr.sun_path, socket_name, n);
  if (socket_name[0] == '@')
    self->addr.sun_path[0] = '\0';
  self->addr_len = (socklen_t) (offsetof (struct sockaddr_un, sun_path) + n
                                + (socket_name[0] == '/' ? 1 : 0));
  return TRUE;
}

/* $WATCHDOG_USEC, when $WATCHDOG_PID is absent or ours. */
static gint64
watchdog_of_environment (void)
{
  const char *usec = g_getenv ("WATCHDOG_USEC");
  const char *pid = g_getenv ("WATCHDOG_PID");
  guint64 value;

  if (usec == NULL || !g_ascii_string_to_unsigned (usec, 10, 1, G_MAXINT64, &value, NULL))
    return 0;
  if (pid != NULL && g_ascii_strtoll (pid, NULL, 10) != (gint64) getpid ())
    return 0;
  return (gint64) value;
}

KtNotify *
kt_notify_new (void)
{
  KtNotify *self = g_new0 (KtNotify, 1);
  const char *socket_name = g_getenv ("NOTIFY_SOCKET");

  self->fd = -1;
  g_mutex_init (&self->extend_lock);
  g_cond_init (&self->extend_cond);
  if (socket_name == NULL)
    return self;
  if (!parse_address (self, socket_name))
    {
      g_debug ("$NOTIFY_SOCKET '%s' is not a socket path or @name: not notifying",
               socket_name);
      return self;
    }
  self->fd = socket (AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (self->fd < 0)
    g_debug ("$NOTIFY_SOCKET: cannot make a socket: %s", g_strerror (errno));
  self->watchdog_us = watchdog_of_environment ();
  return self;
}

void
kt_notify_free (KtNotify *self)
{
  if (self == NULL)
    return;
  kt_notify_extend_end (self);
  g_mutex_clear (&self->extend_lock);
  g_cond_clear (&self->extend_cond);
  if (self->fd >= 0)
    close (self->fd);
  g_free (self->status);
  g_free (self->pending);
  g_free (self);
}

gboolean
kt_notify_enabled (const KtNotify *self)
{
  return self->fd >= 0;
}

static void
send_status (KtNotify *self, const char *status)
{
  g_autofree char *line = g_strdup_printf ("STATUS=%s", status);

  send_state (self, line);
  g_free (self->status);
  self->status = g_strdup (status);
  g_clear_pointer (&self->pending, g_free);
  self->last_status = g_get_monotonic_time ();
}

void
kt_notify_ready (KtNotify *self, const char *status)
{
  /* Never READY=1 after STOPPING=1: systemd would read the service as
   * started again while it stops. */
  if (self->fd < 0 || self->stopping)
    return;
  send_status (self, status);
  if (!self->ready)
    send_state (self, "READY=1");
  self->ready = TRUE;
}

void
kt_notify_status (KtNotify *self, const char *status)
{
  if (self->fd < 0)
    return;
  g_clear_pointer (&self->pending, g_free);
  if (g_strcmp0 (status, self->status) == 0)
    return;
  /* Held back, not dropped: the last word (lag 0 after a backlog) is the
   * one that matters, and a turn sends it (kt_notify_alive). */
  if (g_get_monotonic_time () - self->last_status < STATUS_EVERY_US)
    self->pending = g_strdup (status);
  else
    send_status (self, status);
}

void
kt_notify_alive (KtNotify *self)
{
  gint64 now = g_get_monotonic_time ();

  if (self->pending != NULL && now - self->last_status >= STATUS_EVERY_US)
    {
      g_autofree char *status = g_steal_pointer (&self->pending);
      send_status (self, status);
    }
  /* systemd's advice: ping at half the period or more often; a quarter
   * leaves room for a late turn without a restart. */
  if (self->fd < 0 || self->watchdog_us == 0 || now - self->last_ping < self->watchdog_us / 4)
    return;
  send_state (self, "WATCHDOG=1");
  self->last_ping = now;
}

void
kt_notify_reloaded (KtNotify *self)
{
  g_autofree char *reloading = NULL;

  /* A SIGHUP taken once SIGTERM was: the service is stopping, not ready. */
  if (self->fd < 0 || self->stopping)
    return;
  /* Type=notify-reload wants the reload's start on CLOCK_MONOTONIC, which
   * g_get_monotonic_time() reads on Linux. */
  reloading = g_strdup_printf ("RELOADING=1\nMONOTONIC_USEC=%" G_GINT64_FORMAT,
                               g_get_monotonic_time ());
  send_state (self, reloading);
  if (self->ready)
    send_state (self, "READY=1");
}

/* The extender's thread: the message at once, then every
 * KT_NOTIFY_EXTEND_EVERY_US until told to end. send_state() only reads
 * what kt_notify_new() set. */
static gpointer
extend_thread (gpointer data)
{
  KtNotify *self = data;
  g_autofree char *extend = g_strdup_printf ("EXTEND_TIMEOUT_USEC=%" G_GINT64_FORMAT,
                                             self->extend_usec);

  g_mutex_lock (&self->extend_lock);
  while (!self->extend_done)
    {
      gint64 next = g_get_monotonic_time () + KT_NOTIFY_EXTEND_EVERY_US;

      send_state (self, extend);
      while (!self->extend_done && g_cond_wait_until (&self->extend_cond, &self->extend_lock, next))
        ;
    }
  g_mutex_unlock (&self->extend_lock);
  return NULL;
}

void
kt_notify_extend_begin (KtNotify *self, gint64 usec)
{
  if (self->fd < 0 || self->extender != NULL)
    return;
  self->extend_done = FALSE;
  self->extend_usec = usec;
  self->extender = g_thread_new ("ktally-notify-extend", extend_thread, self);
}

void
kt_notify_extend_end (KtNotify *self)
{
  if (self->extender == NULL)
    return;
  g_mutex_lock (&self->extend_lock);
  self->extend_done = TRUE;
  g_cond_signal (&self->extend_cond);
  g_mutex_unlock (&self->extend_lock);
  g_thread_join (g_steal_pointer (&self->extender));
}

void
kt_notify_stopping (KtNotify *self)
{
  if (self->fd < 0 || self->stopping)
    return;
  send_state (self, "STOPPING=1");
  self->stopping = TRUE;
}
