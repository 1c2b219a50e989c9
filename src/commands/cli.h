/* cli.h - ktally's option table and KtConfig, the settings it fills.
 *
 * Every option is one row of kt_option_table (cli.c): names, config-file
 * key, type, default, bounds, which commands take it, whether a reload
 * applies it, help. A command's words are parsed by config.c, which loads
 * every row the command takes into a KtConfig, then has the command check
 * what is its own (check.h holds the checks several commands share).
 * Everything is parsed and checked up front, with errors that name the
 * flag; the modules get the struct, never argv. */
#pragma once
#include <glib.h>
#include "db.h"
#include "identity.h"
#include "http.h"
#include "job-spec.h"
#include "log.h"
#include "options.h"
#include "run.h"
#include "source.h"


/* A command's settings: each part in the struct of the layer that uses it,
 * so that none below the commands sees the whole. */
struct _KtCommand;

typedef struct
{
  const char     *command;   /* the command's name (static): "run", "replay"... */
  const struct _KtCommand *cmd;  /* that command (command.h) */
  /* What it was parsed against (static, config.h): every command, and
   * every table of options. A reload parses the words again against them. */
  const struct _KtCommand *const *commands;
  const KtOption *const *tables;
  /* The command's words as parsed (the --config file named in them, not
   * its contents): a reload (SIGHUP) parses them again. */
  char          **words;
  char           *config_file;  /* --config, as given */
  KtJobSpec       job;       /* what the job is (base/job-spec.h) */
  KtDbConfig      db;        /* where MySQL is (store/db.h) */
  KtKafkaOptions  kafka;     /* where Kafka is (kafka/source.h) */
  KtRunOptions    run;       /* how the scheduler runs it (core/run.h) */
  KtHealthOptions health;    /* --http and its health bounds (observe/http.h) */
  KtLogOptions    log;       /* --verbose, --quiet, --log-format, --log-to (base/log.h) */
  gboolean        json;      /* status, jobs, reset: --json */
  gboolean        dry_run;   /* reset, forget: --dry-run (the default) */
  gboolean        execute;   /* reset, forget: --execute */
  gboolean        env_secrets;  /* --env-secrets */
  /* The KTALLY_ variables that gave settings, and those set that are no
   * setting of ktally (ignored: a platform sets its own, KTALLY_SERVICE_HOST),
   * for config --check; NULL when none. */
  char          **env_given;
  char          **env_ignored;
  /* The command's own options (its table, commands.h), or NULL. */
  gpointer        own;
  const KtOption *kind_options;  /* the table that filled job.options */
  const KtOption *own_options;   /* the table that filled own */
} KtConfig;

/* Every option ktally has: one row each (cli.c). */
extern const KtOption kt_option_table[];


/* Frees a KtConfig (config.c, which makes them). NULL is fine. */
void      kt_config_free  (KtConfig *config);

/* Overwrites, in place, the password of any mysql:// URI among @argv, so
 * that it does not show in ps(1). Call before parsing (on a copy). */
void      kt_scrub_argv (int argc, char **argv);



G_DEFINE_AUTOPTR_CLEANUP_FUNC (KtConfig, kt_config_free)
