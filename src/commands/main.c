/* main.c - `ktally COMMAND [OPTIONS]`: picks the subcommand, sets up
 * logging and signals, reports the one error, maps it to the exit code. */
#include <errno.h>
#include <locale.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <json-glib/json-glib.h>
#include "cli.h"
#include "commands.h"
#include "error.h"
#include "log.h"
#include "parse.h"
#include "reload.h"
#include "schema.h"
#include "source.h"

static volatile int stop_requested = 0;
/* The handler's bytes (the signal's number; 0 ends the watcher). */
static int signal_pipe[2] = { -1, -1 };

static void
on_signal (int signum)
{
  int saved = errno;
  unsigned char b = (unsigned char) signum;
  ssize_t ignored;

  /* SIGHUP never ends ktally: `run` and `replay` reload between batches
   * (reload.h), the other commands ignore it. */
  if (signum == SIGHUP)
    kt_reload_request ();
  else
    stop_requested = 1;
  /* Non-blocking: a full pipe already holds enough to say it. */
  ignored = write (signal_pipe[1], &b, 1);
  (void) ignored;
  errno = saved;
}

/* What a SIGHUP does: a reload, or nothing. */
static void
hangup_logged (void)
{
  g_autoptr(KtLogEvent) e = kt_log_event_new ("signal");

  kt_log_event_string (e, "signal", "SIGHUP");
  kt_log_event_emit (e, G_LOG_LEVEL_MESSAGE, "SIGHUP received: %s", kt_reload_active ()
                     ? "reading the settings again before the next batch"
                     : "ignored (only run and replay reload their settings)");
}

/* Says which signal came and what happens now, from a thread of its own:
 * a handler must not log. Ends on a 0 byte. */
static gpointer
signal_watch (gpointer data)
{
  guint seen = 0;

  (void) data;
  for (;;)
    {
      g_autoptr(KtLogEvent) e = NULL;
      unsigned char b;
      ssize_t n = read (signal_pipe[0], &b, 1);

      if (n < 0 && errno == EINTR)
        continue;
      if (n != 1 || b == 0)
        return NULL;
      if (b == SIGHUP)
        {
          hangup_logged ();
          continue;
        }
      e = kt_log_event_new ("signal");
      kt_log_event_string (e, "signal", b == SIGINT ? "SIGINT" : "SIGTERM");
      kt_log_event_emit (e, G_LOG_LEVEL_MESSAGE, "%s received: %s",
                         b == SIGINT ? "SIGINT" : "SIGTERM",
                         seen++ == 0 ? "stopping after the batch in flight (it commits "
                                       "whole or not at all)"
                                     : "already stopping after the batch in flight");
    }
}

/* SIGTERM and SIGINT set stop_requested, SIGHUP asks for a reload, and a
 * thread logs them. */
static GThread *
signals_start (void)
{
  struct sigaction sa;

  if (pipe2 (signal_pipe, O_CLOEXEC) != 0
      || fcntl (signal_pipe[1], F_SETFL, O_NONBLOCK) != 0)
    g_error ("cannot create a pipe: %s", g_strerror (errno));
  memset (&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset (&sa.sa_mask);
  sigaction (SIGTERM, &sa, NULL);
  sigaction (SIGINT, &sa, NULL);
  signal (SIGPIPE, SIG_IGN);
  return g_thread_new ("ktally-signals", signal_watch, NULL);
}

/* Lets the watcher log what it has read, then ends it. */
static void
signals_stop (GThread *watcher)
{
  unsigned char zero = 0;

  while (write (signal_pipe[1], &zero, 1) < 0 && errno == EAGAIN)
    g_usleep (1000);
  g_thread_join (watcher);
}

/* From the first instruction on: a SIGHUP at any time must not end
 * ktally (before signals_start() its byte finds no pipe, and is not
 * logged). SA_RESTART: nor may it fail a read or a write it interrupts. */
static void
hangup_caught (void)
{
  struct sigaction sa;

  memset (&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sa.sa_flags = SA_RESTART;
  sigemptyset (&sa.sa_mask);
  sigaction (SIGHUP, &sa, NULL);
}

static void
usage (FILE *out)
{
  fputs ("Usage: ktally COMMAND [OPTIONS]\n"
         "\n"
         "Exact per-minute ERROR counts from Kafka into MySQL, exactly once.\n"
         "\n"
         "Commands:\n", out);
  for (const KtCommand *const *c = kt_commands (); *c != NULL; c++)
    fprintf (out, "  %-9s %s\n", (*c)->name, (*c)->summary);
  fputs ("\n'ktally COMMAND --help' explains each command's options.\n", out);
}

/* Reports the error that ends the process, once, through the logger: at
 * error priority in the journal, "ktally: ..." on a terminal. */
static int
fail (const char *command, const GError *error)
{
  int code = kt_error_exit_code (error);
  g_autofree char *message = NULL;
  g_auto(GStrv) lines = NULL;

  if (code == KT_EXIT_USAGE)
    message = g_strdup_printf ("%s (try 'ktally%s%s --help')", error->message,
                               kt_command_find (command) != NULL ? " " : "",
                               kt_command_find (command) != NULL ? command : "");
  /* Every error of a check that reports them all: one line each. */
  lines = g_strsplit (message != NULL ? message : error->message, "\n", -1);
  for (char **l = lines; *l != NULL; l++)
    kt_log_exit (code, *l);
  return code;
}

int
main (int argc, char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(KtConfig) config = NULL;
  g_auto(GStrv) args = NULL;
  g_autofree char **parse_args = NULL;
  g_autofree char *prgname = NULL;
  GThread *signal_watcher;
  const char *command;
  gboolean ok;

  hangup_caught ();
  /* The locale's character set only (a value given in it is converted to
   * UTF-8, options.h): times, numbers and month names stay the C locale's,
   * whatever the environment says. */
  setlocale (LC_CTYPE, "");
  kt_log_init ();

  if (argc < 2 || g_str_equal (argv[1], "--help") || g_str_equal (argv[1], "-h"))
    {
      usage (argc < 2 ? stderr : stdout);
      return argc < 2 ? KT_EXIT_USAGE : KT_EXIT_OK;
    }
  if (g_str_equal (argv[1], "--version"))
    {
      g_autofree char *pcre2 = kt_parser_library_version ();

      printf ("ktally %s\nlibrdkafka %s\nMariaDB Connector/C %s\nGLib %u.%u.%u\n"
              "json-glib %s\npcre2 %s\n", PACKAGE_VERSION, kt_source_library_version (),
              kt_db_client_version (), glib_major_version, glib_minor_version,
              glib_micro_version, JSON_VERSION_S, pcre2);
      return KT_EXIT_OK;
    }
  command = argv[1];
  /* Parse a copy, then blank any password in the real argv: ps(1) and
   * /proc/PID/cmdline show the real one. */
  args = g_strdupv (argv + 1);
  kt_scrub_argv (argc, argv);

  prgname = g_strdup_printf ("ktally %s", command);
  g_set_prgname (prgname);
  /* GOption drops the entries it parses from the array it is given: hand
   * it a second array of the same strings, so that args still frees all. */
  parse_args = g_memdup2 (args, sizeof (char *) * (gsize) argc);
  config = kt_config_parse (command, argc - 1, parse_args, &error);
  if (config == NULL)
    return fail (command, error);
  kt_log_configure (config->log.format, config->log.verbose, config->log.quiet,
                    config->log.to);

  /* Before any thread (--topic a,b runs one per topic, the ledger its
   * workers): the client library's global set-up is not thread-safe. */
  kt_db_library_init ();

  signal_watcher = signals_start ();

  ok = kt_command_find (command)->handle (config, &stop_requested, &error);

  signals_stop (signal_watcher);
  kt_db_library_end ();
  if (!ok)
    return fail (command, error);
  return KT_EXIT_OK;
}
