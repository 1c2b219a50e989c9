/* test-notify.c - sd_notify(3)'s protocol as ktally speaks it, heard on a
 * socket of the test's own (no systemd): READY=1 once, RELOADING=1 then
 * READY=1 around a reload, never READY=1 after STOPPING=1 (a SIGHUP taken
 * after SIGTERM sent it), and EXTEND_TIMEOUT_USEC= at once when a long
 * step begins, from the extender's own thread, none after it ends. */
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <glib/gstdio.h>
#include "notify.h"

typedef struct
{
  char *dir;
  char *path;
  int   fd;
} Listener;

static void
listener_open (Listener *l)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  struct timeval wait = { 0, 200000 };

  l->dir = g_dir_make_tmp ("kt-test-notify-XXXXXX", NULL);
  g_assert_nonnull (l->dir);
  l->path = g_build_filename (l->dir, "notify", NULL);
  g_assert_cmpuint (strlen (l->path), <, sizeof addr.sun_path);
  strcpy (addr.sun_path, l->path);
  l->fd = socket (AF_UNIX, SOCK_DGRAM, 0);
  g_assert_cmpint (l->fd, >=, 0);
  g_assert_cmpint (bind (l->fd, (struct sockaddr *) &addr, sizeof addr), ==, 0);
  setsockopt (l->fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
  g_setenv ("NOTIFY_SOCKET", l->path, TRUE);
  g_unsetenv ("WATCHDOG_USEC");
}

static void
listener_close (Listener *l)
{
  close (l->fd);
  g_unlink (l->path);
  g_rmdir (l->dir);
  g_free (l->path);
  g_free (l->dir);
  g_unsetenv ("NOTIFY_SOCKET");
}

/* Every datagram waiting (0.2 s for the first), joined by '|'. */
static char *
heard (Listener *l)
{
  GString *all = g_string_new (NULL);
  char buf[512];
  ssize_t n;

  while ((n = recv (l->fd, buf, sizeof buf - 1, 0)) > 0)
    {
      buf[n] = '\0';
      g_string_append_printf (all, "%s%s", all->len > 0 ? "|" : "", buf);
    }
  return g_string_free (all, FALSE);
}

static void
test_stopping (void)
{
  Listener l;
  g_autoptr(KtNotify) n = NULL;
  g_autofree char *start = NULL, *reload = NULL, *stop = NULL;

  listener_open (&l);
  n = kt_notify_new ();
  g_assert_true (kt_notify_enabled (n));
  kt_notify_ready (n, "job j: running");
  start = heard (&l);
  g_assert_cmpstr (start, ==, "STATUS=job j: running|READY=1");
  kt_notify_reloaded (n);
  reload = heard (&l);
  g_assert_true (g_str_has_prefix (reload, "RELOADING=1\nMONOTONIC_USEC="));
  g_assert_true (g_str_has_suffix (reload, "|READY=1"));
  /* SIGTERM, then a SIGHUP taken in the same turn: stopping stays stopping. */
  kt_notify_stopping (n);
  kt_notify_reloaded (n);
  kt_notify_ready (n, "job j: running");
  stop = heard (&l);
  g_assert_cmpstr (stop, ==, "STOPPING=1");
  listener_close (&l);
}

static void
test_extend (void)
{
  Listener l;
  g_autoptr(KtNotify) n = NULL;
  g_autofree char *during = NULL, *after = NULL;

  listener_open (&l);
  n = kt_notify_new ();
  kt_notify_extend_end (n);  /* without a begin: nothing */
  kt_notify_extend_begin (n, KT_NOTIFY_EXTEND_US);
  during = heard (&l);
  g_assert_cmpstr (during, ==, "EXTEND_TIMEOUT_USEC=30000000");
  kt_notify_extend_end (n);
  kt_notify_ready (n, "job j: running");
  after = heard (&l);
  g_assert_cmpstr (after, ==, "STATUS=job j: running|READY=1");
  listener_close (&l);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/notify/stopping", test_stopping);
  g_test_add_func ("/notify/extend", test_extend);
  return g_test_run ();
}
