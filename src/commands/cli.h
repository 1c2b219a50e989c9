/* cli.h - ktally's option table and KtConfig, the settings it fills.
 *
 * Every option is one row of kt_option_table (cli.c): names, config-file
 * key, type, default, bounds, which commands take it, whether a reload
 * applies it, help. A command (cmd-*.c) parses its words with
 * kt_command_parse(), which loads every row it takes into a KtConfig,
 * then checks what is its own (kt_options_* below hold the checks several
 * commands share). Everything is parsed and checked up front, with errors
 * that name the flag; the modules get the struct, never argv. */
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


void      kt_config_free  (KtConfig *config);  /* NULL is fine */

/* Overwrites, in place, the password of any mysql:// URI among @argv, so
 * that it does not show in ps(1). Call before parsing (on a copy). */
void      kt_scrub_argv (int argc, char **argv);

/* Whether @name is a job's name: [A-Za-z0-9._-] or any character beyond
 * ASCII (of the Basic Multilingual Plane: MySQL's), 1 to 64 characters. */
gboolean  kt_is_job_name (const char *name);


/* ---- What the commands share ---------------------------------------------- */

/* Each checks options of @config, or fails with KT_ERROR_USAGE and one
 * line naming the flag. kt_options_kafka(): --brokers and --topic
 * required; @several says whether the command takes several topics
 * (--topic a,b); --job defaults to the topic. */
gboolean kt_options_kafka   (KtConfig *config, const KtOptionValues *values,
                             gboolean several, GError **error);
/* --db required, and its password file read. */
gboolean kt_options_db      (KtConfig *config, GError **error);
/* What run and replay share: the kind, the mode, the fields of --by... */
gboolean kt_options_run     (KtConfig *config, GError **error);
/* --table: whether it was given (its row, KT_OPT_TABLE, checked the name). */
gboolean kt_options_table   (KtConfig *config, const KtOptionValues *values, GError **error);
/* --job: required when @required; of the rules of job names. */
gboolean kt_options_job     (KtConfig *config, gboolean required, const char *hint,
                             GError **error);
/* --brokers (required when @required), -X, and one --topic, optional: the
 * commands that manage jobs (jobs, reset, forget) reach Kafka only for the
 * watermarks and the consumer group's offsets. */
gboolean kt_options_brokers (KtConfig *config, gboolean required, GError **error);
/* --dry-run and --execute exclude each other. */
gboolean kt_options_execute (KtConfig *config, GError **error);

/* What the database records of the job of @config, run by @kind: its
 * settings from the rows that say they are part of it (identity.h). The
 * caller clears @id. */
struct _KtKind;
void     kt_config_identity (const KtConfig *config, const struct _KtKind *kind,
                             KtIdentity *id);

/* What the page charts of the job's output: its table, bucket and --by
 * fields (*@dimensions holds them: the caller frees it after @chart). */
void     kt_config_chart    (const KtConfig *config, const struct _KtKind *kind,
                             KtHttpChart *chart, GStrv *dimensions);

/* Runs the job of @config (run.h's kt_run(), with its identity and
 * chart made here). */
gboolean kt_config_run      (const KtConfig *config, const KtRunHooks *hooks,
                             volatile int *stop, KtRangeStats *totals, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (KtConfig, kt_config_free)
