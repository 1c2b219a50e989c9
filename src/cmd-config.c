/* cmd-config.c - `ktally config --check [--connect] [--config FILE] [run
 * options]`: the effective settings of that `run`, as a config file that
 * reads back (secrets only as comments), or its first error. With
 * --connect, like `vector validate`, it also reaches Kafka (each topic's
 * partitions) and MySQL (the database, its schema version, the grants
 * ktally needs) and says so in comments after the settings. It creates
 * nothing: no table, no offset, no consumer group. */
#include "commands.h"
#include "describe.h"

#include <stdio.h>
#include "counts.h"
#include "error.h"
#include "retry.h"
#include "schema.h"
#include "source.h"

static KtConfig *
parse (int argc, char **argv, GError **error)
{
  g_autofree char **args = g_new0 (char *, argc + 1);
  gboolean check = FALSE, connect = FALSE;
  const KtJobKind *kind;
  KtConfig *config;
  int n = 0;

  /* --check and --connect anywhere (a --config file's options come before). */
  for (int i = 0; i < argc; i++)
    if (i > 0 && !check && g_strcmp0 (argv[i], "--check") == 0)
      check = TRUE;
    else if (i > 0 && !connect && g_strcmp0 (argv[i], "--connect") == 0)
      connect = TRUE;
    else
      args[n++] = argv[i];
  if (!check)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE,
                           "config: expected 'ktally config --check [--connect] [--config "
                           "FILE] [run options]'");
      return NULL;
    }
  config = kt_run_parse (n, args, error);
  if (config == NULL)
    return NULL;
  config->check_connect = connect;
  /* What `run` refuses at start without Kafka or MySQL: the log format
   * (--pattern, --time-format, --levels, --by and --sum against them). */
  kind = kt_kind_lookup (config->kind, kt_mode_names[config->mode], NULL);
  if (kind != NULL && kind->parses)
    {
      g_autoptr(KtParser) parser = kt_counts_parser (config, error);

      if (parser == NULL)
        {
          kt_config_free (config);
          return NULL;
        }
    }
  return config;
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
  for (char **topic = config->topics; *topic != NULL; topic++)
    {
      KtSourceConfig source_config = {
        .brokers = config->brokers,
        .topic = *topic,
        .client_id = config->job,
        .properties = (const char *const *) config->kafka_properties,
      };
      g_autoptr(KtSource) source = kt_source_new (&source_config, error);
      g_autoptr(GArray) partitions = g_array_new (FALSE, FALSE, sizeof (gint32));
      gpointer pair[] = { source, partitions };

      if (source == NULL
          || !kt_retry (stop, config->startup_timeout, "Kafka", topic_partitions, pair, error))
        return FALSE;
      printf ("# --connect: Kafka %s: topic %s: %u partitions\n", config->brokers, *topic,
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

  if (!kt_retry (stop, config->startup_timeout, "MySQL", connect_db, db, error))
    return FALSE;
  printf ("# --connect: MySQL %s: connected (server %s)\n", kt_db_name (db),
          mysql_get_server_info (kt_db_connection (db)));
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

  fputs (text, stdout);
  if (!config->check_connect)
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
  "config", "--check [--connect] [--config FILE] [run options]: the effective settings",
  "run", parse, handle,
};
