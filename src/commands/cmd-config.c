/* cmd-config.c - `ktally config --check [--connect] [--config FILE] [run
 * options]`: the effective settings of that `run`, as a config file that
 * reads back (secrets only as comments), or its first error. With
 * --connect, like `vector validate`, it also reaches Kafka (each topic's
 * partitions) and MySQL (the database, its schema version, the grants
 * ktally needs) and says so in comments after the settings. It creates
 * nothing: no table, no offset, no consumer group. */
#include "command.h"

#include <stddef.h>
#include <stdio.h>
#include "cmd-run.h"
#include "config.h"
#include "describe.h"
#include "error.h"
#include "retry.h"
#include "schema.h"
#include "source.h"

/* What `ktally config --help` says before the options. */
static const char SUMMARY[] =
  "Checks the options of a `run` (a --config file's and the command line's)\n"
  "without running it, and prints the effective settings as a config file\n"
  "that reads back (secrets only as comments). With --connect it also\n"
  "reaches Kafka and MySQL and reports what it found; it creates nothing.\n\n"
  "Exit status: 0 the settings are good, 2 they are not (every error, one\n"
  "line each, naming the option and the file's line), 3 --connect could not\n"
  "reach Kafka or MySQL, or lacks grants.";

/* config's own options. */
typedef struct
{
  gboolean check;    /* --check */
  gboolean connect;  /* --connect */
} ConfigOptions;

static const KtOption config_options[] = {
  { "check", 0, NULL, KT_OPT_SWITCH, offsetof (ConfigOptions, check), .commands = KT_CMD_CONFIG,
    .help = "Check run's options (and a --config file) and print the effective settings "
            "as a config file" },
  { "connect", 0, NULL, KT_OPT_SWITCH, offsetof (ConfigOptions, connect), .commands = KT_CMD_CONFIG,
    .help = "With --check: also reach Kafka (each topic's partitions) and MySQL (the "
            "database, its schema version, the grants ktally needs); creates nothing" },
  KT_OPTION_END
};

static const ConfigOptions *
own (const KtConfig *config)
{
  return config->own;
}

static gboolean
check (KtConfig *config, const KtOptionValues *values, GError **error)
{
  if (!own (config)->check)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE,
                           "config: expected 'ktally config --check [--connect] [--config "
                           "FILE] [run options]'");
      return FALSE;
    }
  /* Every error at once: the values that did not load (the table kept
   * them), then what run checks of them together. */
  kt_command_run_check_every (config, values, kt_option_values_errors (values));
  return kt_config_errors (kt_option_values_errors (values), error);
}

static gboolean
topic_partitions (gpointer data, int timeout_ms, GError **error)
{
  gpointer *pair = data;
  return kt_source_partitions (pair[0], pair[1], timeout_ms, error);
}

/* Each topic's partitions, from the brokers, as `run` asks them. */
static gboolean
check_kafka (const KtConfig *config, const volatile int *stop, GError **error)
{
  for (char **topic = config->job.topics; *topic != NULL; topic++)
    {
      KtSourceConfig source_config = {
        .brokers = config->kafka.brokers,
        .topic = *topic,
        .client_id = config->job.name,
        .properties = (const char *const *) config->kafka.properties,
      };
      g_autoptr(KtSource) source = kt_source_new (&source_config, error);
      g_autoptr(GArray) partitions = g_array_new (FALSE, FALSE, sizeof (gint32));
      gpointer pair[] = { source, partitions };

      if (source == NULL
          || !kt_retry (stop, config->run.startup_timeout, "Kafka", topic_partitions, pair, error))
        return FALSE;
      printf ("# --connect: Kafka %s: topic %s: %u partitions\n", config->kafka.brokers, *topic,
              partitions->len);
    }
  return TRUE;
}

static gboolean
connect_db (gpointer data, int timeout_ms, GError **error)
{
  (void) timeout_ms;
  return kt_schema_readable (data, error);
}

/* The database, readable by this ktally, and the grants on it. */
static gboolean
check_mysql (const KtConfig *config, const volatile int *stop, GError **error)
{
  g_autoptr(KtDb) db = kt_db_new (&config->db);
  g_auto(GStrv) missing = NULL;
  g_autofree char *all = g_strjoinv (", ", (char **) kt_db_grants);

  if (!kt_retry (stop, config->run.startup_timeout, "MySQL", connect_db, db, error))
    return FALSE;
  printf ("# --connect: MySQL %s: connected over %s (server %s, database identity %s)\n",
          kt_db_name (db), kt_db_transport (db), kt_db_server_version (db),
          kt_db_identity () != NULL ? kt_db_identity () : "none yet");
  missing = kt_db_grants_missing (db, error);
  if (missing == NULL)
    return FALSE;
  if (missing[0] != NULL)
    {
      g_autofree char *list = g_strjoinv (", ", missing);
      g_set_error (error, KT_ERROR, KT_ERROR_FATAL,
                   "MySQL %s: the user lacks %s on database %s (ktally needs GRANT %s ON "
                   "`%s`.* TO the user; grants on single tables or of roles not enabled "
                   "are not counted)", kt_db_name (db), list, config->db.database, all,
                   config->db.database);
      return FALSE;
    }
  printf ("# --connect: MySQL grants on %s: %s\n", config->db.database, all);
  return TRUE;
}

static gboolean
handle (const KtConfig *config, volatile int *stop, GError **error)
{
  g_autofree char *text = kt_config_describe (config);

  /* Where the settings came from besides the file and the flags, and what
   * looks like a setting but is none (a typo, or a platform's variable). */
  if (config->env_given != NULL)
    {
      g_autofree char *names = g_strjoinv (", ", config->env_given);
      printf ("# from the environment (flags win over it, it over the file): %s\n", names);
    }
  if (config->env_ignored != NULL)
    {
      g_autofree char *names = g_strjoinv (", ", config->env_ignored);
      printf ("# ignored, no setting of ktally: %s\n", names);
    }
  fputs (text, stdout);
  if (!own (config)->connect)
    return TRUE;
  fflush (stdout);
  if (!check_kafka (config, stop, error) || !check_mysql (config, stop, error))
    {
      fflush (stdout);
      g_prefix_error (error, "config --check --connect: ");
      return FALSE;
    }
  return TRUE;
}

const KtCommand kt_command_config = {
  .name = "config",
  .summary = "--check [--connect] [--config FILE] [run options]: the effective settings",
  .help = SUMMARY,
  .bit = KT_CMD_CONFIG,
  .also = KT_CMD_RUN,
  .options = config_options,
  .options_size = sizeof (ConfigOptions),
  .every_error = TRUE,
  .check = check,
  .handle = handle,
};
