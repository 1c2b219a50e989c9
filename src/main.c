/* main.c - `ktally COMMAND [OPTIONS]`: picks the subcommand, sets up
 * logging and signals, reports the one error, maps it to the exit code. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <json-glib/json-glib.h>

#include "autocleanups.h"
#include "cli.h"
#include "commands.h"
#include "error.h"
#include "loglevel.h"
#include "reload.h"

static volatile int stop_requested = 0;

static void
on_signal (int signum)
{
  (void) signum;
  stop_requested = 1;
}

/* SIGHUP never ends ktally: `run` and `replay` reload between batches
 * (reload.h), the other commands ignore it. */
static void
on_hangup (int signum)
{
  (void) signum;
  kt_reload_request ();
}

/* One line per record on stderr: time, level, message. stdout stays for
 * command output. */
static GLogWriterOutput
log_writer (GLogLevelFlags level, const GLogField *fields, gsize n_fields,
            gpointer user_data)
{
  static int journald = -1;
  const char *message = NULL, *tag;
  g_autoptr(GDateTime) now = NULL;
  g_autofree char *stamp = NULL;

  (void) user_data;
  if ((level & G_LOG_LEVEL_DEBUG) && !kt_log_level_verbose ())
    return G_LOG_WRITER_HANDLED;
  if ((level & (G_LOG_LEVEL_MESSAGE | G_LOG_LEVEL_INFO)) && kt_log_level_quiet ())
    return G_LOG_WRITER_HANDLED;
  if ((level & G_LOG_LEVEL_INFO) && !kt_log_level_verbose ())
    return G_LOG_WRITER_HANDLED;

  /* Under systemd, stderr is the journal: structured fields (priority,
   * GLIB_DOMAIN, CODE_FILE...) instead of our timestamped lines. */
  if (journald < 0)
    journald = g_log_writer_is_journald (fileno (stderr));
  if (journald && g_log_writer_journald (level, fields, n_fields, user_data)
                    == G_LOG_WRITER_HANDLED)
    return G_LOG_WRITER_HANDLED;

  for (gsize i = 0; i < n_fields; i++)
    if (g_strcmp0 (fields[i].key, "MESSAGE") == 0)
      message = fields[i].value;

  if (level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL))
    tag = "BUG";
  else if (level & G_LOG_LEVEL_WARNING)
    tag = "warning";
  else if (level & G_LOG_LEVEL_DEBUG)
    tag = "debug";
  else
    tag = "info";

  now = g_date_time_new_now_local ();
  stamp = g_date_time_format (now, "%Y-%m-%d %H:%M:%S");
  fprintf (stderr, "%s.%03d ktally %s: %s\n", stamp,
           g_date_time_get_microsecond (now) / 1000, tag,
           message != NULL ? message : "");
  fflush (stderr);
  return G_LOG_WRITER_HANDLED;
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

static int
fail (const char *command, const GError *error)
{
  int code = kt_error_exit_code (error);

  if (code == KT_EXIT_USAGE)
    fprintf (stderr, "ktally: %s (try 'ktally%s%s --help')\n", error->message,
             kt_command_find (command) != NULL ? " " : "",
             kt_command_find (command) != NULL ? command : "");
  else
    fprintf (stderr, "ktally: %s\n", error->message);
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
  struct sigaction sa;
  const char *command;
  gboolean ok;

  /* First of all: a SIGHUP at any time must not end ktally. SA_RESTART:
   * nor may it fail a read or a write that it interrupts. */
  memset (&sa, 0, sizeof sa);
  sa.sa_handler = on_hangup;
  sa.sa_flags = SA_RESTART;
  sigemptyset (&sa.sa_mask);
  sigaction (SIGHUP, &sa, NULL);
  g_log_set_writer_func (log_writer, NULL, NULL);

  if (argc < 2 || g_str_equal (argv[1], "--help") || g_str_equal (argv[1], "-h"))
    {
      usage (argc < 2 ? stderr : stdout);
      return argc < 2 ? KT_EXIT_USAGE : KT_EXIT_OK;
    }
  if (g_str_equal (argv[1], "--version"))
    {
      char pcre2[64] = "";

      pcre2_config (PCRE2_CONFIG_VERSION, pcre2);
      printf ("ktally %s\nlibrdkafka %s\nMariaDB Connector/C %s\nGLib %u.%u.%u\n"
              "json-glib %s\npcre2 %s\n", PACKAGE_VERSION, rd_kafka_version_str (),
              mysql_get_client_info (), glib_major_version, glib_minor_version,
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
  kt_log_level_set (config->verbose, config->quiet);

  /* Before any thread (--topic a,b runs one per topic, the ledger its
   * workers): the client library's global set-up is not thread-safe. */
  mysql_library_init (0, NULL, NULL);

  memset (&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset (&sa.sa_mask);
  sigaction (SIGTERM, &sa, NULL);
  sigaction (SIGINT, &sa, NULL);
  signal (SIGPIPE, SIG_IGN);

  ok = kt_command_find (command)->handle (config, &stop_requested, &error);

  mysql_library_end ();
  if (!ok)
    return fail (command, error);
  return KT_EXIT_OK;
}
