/* check.c - the checks of options that several commands share (check.h):
 * what the option table's rows cannot say, each failing with one line
 * that names the flag. */
#include "check.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "error.h"
#include "kind.h"
#include "kprops.h"

gboolean
kt_check_is_job_name (const char *name)
{
  glong n = 0;

  if (name == NULL || *name == '\0' || !g_utf8_validate (name, -1, NULL))
    return FALSE;
  for (const char *p = name; *p != '\0'; p = g_utf8_next_char (p), n++)
    if (!kt_is_name_char (g_utf8_get_char (p), "._-"))
      return FALSE;
  return n <= 64;
}


/* Kafka's own rule for topic names. */
static gboolean
check_topic_name (const char *topic, const char *more, GError **error)
{
  if (kt_is_ascii_name (topic, ".-", 249))
    return TRUE;
  g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
               "--topic: '%s' is not a valid topic name ([A-Za-z0-9._-], at most 249 "
               "characters%s)", topic, more);
  return FALSE;
}

static gboolean
check_job_name (const char *job, GError **error)
{
  if (job == NULL || kt_check_is_job_name (job))
    return TRUE;
  g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
               "--job: '%s' is not a valid job name (letters, digits, '.', '_', '-', at "
               "most 64 characters)", job);
  return FALSE;
}

static gboolean
check_properties (char **properties, GError **error)
{
  for (char **p = properties; p != NULL && *p != NULL; p++)
    if (!kt_kprops_check (*p, error))
      return FALSE;
  return TRUE;
}

gboolean
kt_check_kafka (KtConfig *config, const KtOptionValues *values, gboolean several,
                  GError **error)
{
  if (config->kafka.brokers == NULL || *config->kafka.brokers == '\0')
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE, "--brokers is required");
      return FALSE;
    }
  if (config->job.topics == NULL)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE, "--topic is required");
      return FALSE;
    }
  for (char **t = config->job.topics; *t != NULL; t++)
    if (!check_topic_name (*t, "", error))
      return FALSE;
  if (g_strv_length (config->job.topics) > 1)
    {
      if (!several)
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                       "--topic: several topics are for `run` and `status` only, not `%s`",
                       config->command);
          return FALSE;
        }
      if (!kt_option_given (values, "job"))
        {
          g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE,
                               "--job is required with several topics (one job, "
                               "offsets per topic and partition)");
          return FALSE;
        }
      for (guint i = 0; config->job.topics[i] != NULL; i++)
        for (guint j = 0; j < i; j++)
          if (g_str_equal (config->job.topics[i], config->job.topics[j]))
            {
              g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "--topic: '%s' given twice",
                           config->job.topics[i]);
              return FALSE;
            }
    }
  if (!check_job_name (config->job.name, error) || !check_properties (config->kafka.properties,
                                                                 error))
    return FALSE;
  config->job.topic = g_strdup (config->job.topics[0]);
  if (config->job.name == NULL && strlen (config->job.topic) > 64)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE,
                           "--job: the topic name is longer than 64 characters, "
                           "so it cannot be the job name: give --job");
      return FALSE;
    }
  if (config->job.name == NULL)
    config->job.name = g_strdup (config->job.topic);
  return TRUE;
}

/* The TLS files of --db (or [mysql] ssl-ca, ssl-cert, ssl-key): files
 * this process can read, found before a connection fails on them. */
static gboolean
check_tls_files (const KtDbConfig *db, GError **error)
{
  const char *const files[][2] = {
    { "ssl-ca", db->ssl_ca }, { "ssl-cert", db->ssl_cert }, { "ssl-key", db->ssl_key },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (files); i++)
    if (files[i][1] != NULL && g_access (files[i][1], R_OK) != 0)
      {
        int saved = errno;

        g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "--db: %s '%s': cannot read it: %s",
                     files[i][0], files[i][1], g_strerror (saved));
        return FALSE;
      }
  return TRUE;
}

gboolean
kt_check_db (KtConfig *config, GError **error)
{
  if (config->db.database == NULL)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE, "--db is required");
      return FALSE;
    }
  if (config->db.password_file != NULL)
    {
      char *password = kt_db_password_file_read (config->db.password_file, error);

      if (password == NULL)
        return FALSE;
      if (config->db.password != NULL)
        memset (config->db.password, 0, strlen (config->db.password));
      g_free (config->db.password);
      config->db.password = password;
    }
  if (config->db.defaults_file != NULL
      && !g_file_test (config->db.defaults_file, G_FILE_TEST_IS_REGULAR))
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "--db-defaults-file: '%s' is not a readable file", config->db.defaults_file);
      return FALSE;
    }
  return check_tls_files (&config->db, error);
}

gboolean
kt_check_table (KtConfig *config, const KtOptionValues *values, GError **error)
{
  (void) error;  /* the row (KT_OPT_TABLE) checked the name */
  config->job.table_explicit = kt_option_given (values, "table");
  return TRUE;
}

/* The kind and how it combines with the mode and the offsets store. */
static gboolean
options_kind (KtConfig *config, GError **error)
{
  const KtKind *kind;

  if (config->job.kind == NULL)
    config->job.kind = g_strdup ("count");  /* replay's */
  if (config->job.offsets == KT_OFFSETS_KAFKA && config->job.mode != KT_MODE_IDEMPOTENT)
    {
      /* Kafka's offsets cannot join a MySQL transaction. */
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE,
                           "--offsets kafka needs --mode idempotent");
      return FALSE;
    }
  /* The kinds' table (kind.c) knows the kinds, and which modes each one
   * runs in. */
  kind = kt_kind_lookup (config->job.kind, kt_mode_names[config->job.mode], error);
  return kind != NULL
         && (kind->check_options == NULL || kind->check_options (config->job.options, error));
}

/* How this instance shares the topic: a consumer group or a static list. */
static gboolean
options_share (KtConfig *config, GError **error)
{
  if (config->job.group != NULL && config->job.partitions != NULL)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE,
                           "--group and --partitions exclude each other: a group shares "
                           "the partitions itself");
      return FALSE;
    }
  if (config->job.group != NULL && !kt_is_ascii_name (config->job.group, ".-", 200))
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "--group: '%s' is not a valid group name ([A-Za-z0-9._-])", config->job.group);
      return FALSE;
    }
  if (config->job.group != NULL && config->job.offsets == KT_OFFSETS_KAFKA)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE,
                           "--group needs offsets in MySQL (not --offsets kafka)");
      return FALSE;
    }
  return TRUE;
}

gboolean
kt_check_run (KtConfig *config, GError **error)
{
  return options_kind (config, error) && options_share (config, error);
}

gboolean
kt_check_job (KtConfig *config, gboolean required, const char *hint, GError **error)
{
  if (required && config->job.name == NULL)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "--job is required%s", hint);
      return FALSE;
    }
  return check_job_name (config->job.name, error);
}

gboolean
kt_check_brokers (KtConfig *config, gboolean required, GError **error)
{
  if (required && (config->kafka.brokers == NULL || *config->kafka.brokers == '\0'))
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE, "--brokers is required");
      return FALSE;
    }
  if (config->job.topics != NULL && g_strv_length (config->job.topics) > 1)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "--topic: several topics are for `run` and `status` only, not `%s`",
                   config->command);
      return FALSE;
    }
  if (config->job.topics != NULL && !check_topic_name (config->job.topics[0], "; one topic", error))
    return FALSE;
  if (!check_properties (config->kafka.properties, error))
    return FALSE;
  if (config->kafka.brokers != NULL && *config->kafka.brokers == '\0')
    g_clear_pointer (&config->kafka.brokers, g_free);
  config->job.topic = g_strdup (config->job.topics != NULL ? config->job.topics[0] : NULL);
  return TRUE;
}

gboolean
kt_check_execute (KtConfig *config, GError **error)
{
  if (config->dry_run && config->execute)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE,
                           "--dry-run and --execute exclude each other");
      return FALSE;
    }
  return TRUE;
}
