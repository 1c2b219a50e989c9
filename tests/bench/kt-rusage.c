/* kt-rusage.c - runs a command and reports its wall time, CPU time and
 * peak RSS, like `/usr/bin/time -v` but with no package to install.
 *
 *   kt-rusage --output FILE [--pid-file FILE] -- COMMAND [ARG...]
 *
 * Writes one line to FILE once the command has exited:
 *   wall_s=W user_s=U sys_s=S maxrss_kb=K exit=E
 * and exits with the command's status (128 + N if killed by signal N).
 * SIGTERM and SIGINT are passed on to the command, so a benchmark can stop
 * a long-lived process through this wrapper and still get its figures.
 * Benchmark infrastructure (scripts/bench): never linked into ktally. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile pid_t child = -1;

static void
forward (int signum)
{
  if (child > 0)
    kill (child, signum);
}

static double
now_s (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static double
tv_s (struct timeval tv)
{
  return (double) tv.tv_sec + (double) tv.tv_usec / 1e6;
}

int
main (int argc, char **argv)
{
  const char *output = NULL, *pid_file = NULL;
  struct sigaction sa;
  struct rusage ru;
  double started, wall;
  int status, i, code;
  pid_t pid;
  FILE *out;

  for (i = 1; i < argc; i++)
    {
      if (strcmp (argv[i], "--") == 0)
        {
          i++;
          break;
        }
      if (strcmp (argv[i], "--output") == 0 && i + 1 < argc)
        output = argv[++i];
      else if (strcmp (argv[i], "--pid-file") == 0 && i + 1 < argc)
        pid_file = argv[++i];
      else
        break;
    }
  if (output == NULL || i >= argc)
    {
      fprintf (stderr, "usage: kt-rusage --output FILE [--pid-file FILE] -- COMMAND [ARG...]\n");
      return 2;
    }

  memset (&sa, 0, sizeof sa);
  sa.sa_handler = forward;
  sigemptyset (&sa.sa_mask);
  sigaction (SIGTERM, &sa, NULL);
  sigaction (SIGINT, &sa, NULL);

  started = now_s ();
  pid = fork ();
  if (pid < 0)
    {
      perror ("kt-rusage: fork");
      return 1;
    }
  if (pid == 0)
    {
      signal (SIGTERM, SIG_DFL);
      signal (SIGINT, SIG_DFL);
      execvp (argv[i], argv + i);
      fprintf (stderr, "kt-rusage: cannot run %s: %s\n", argv[i], strerror (errno));
      _exit (127);
    }
  child = pid;
  if (pid_file != NULL)
    {
      FILE *f = fopen (pid_file, "w");
      if (f != NULL)
        {
          fprintf (f, "%d\n", (int) pid);
          fclose (f);
        }
    }

  while (wait4 (pid, &status, 0, &ru) < 0)
    if (errno != EINTR)
      {
        perror ("kt-rusage: wait4");
        return 1;
      }
  wall = now_s () - started;
  code = WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);

  out = fopen (output, "w");
  if (out == NULL)
    {
      fprintf (stderr, "kt-rusage: cannot write %s: %s\n", output, strerror (errno));
      return code != 0 ? code : 1;
    }
  fprintf (out, "wall_s=%.6f user_s=%.6f sys_s=%.6f maxrss_kb=%ld exit=%d\n", wall,
           tv_s (ru.ru_utime), tv_s (ru.ru_stime), ru.ru_maxrss, code);
  fclose (out);
  return code;
}
