/* cli.c - the options several commands share: their tables (cli.h's
 * KT_*_ENTRIES), their checks (kt_options_*), and the command line's
 * dispatch to a command's own parser (commands.h). */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "config.h"
#include "commands.h"
#include "kind.h"
#include "error.h"
#include "kprops.h"

const char *const kt_mode_names[] = { "transactional", "idempotent", NULL };

void
kt_config_free (KtConfig *config)
{
  if (config == NULL)
    return;
  g_free (config->brokers);
  g_free (config->topic);
  g_strfreev (config->topics);
  g_free (config->job);
  kt_db_config_clear (&config->db);
  g_strfreev (config->kafka_properties);
  g_free (config->table);
  g_clear_pointer (&config->replay_from, g_array_unref);
  g_clear_pointer (&config->replay_until, g_array_unref);
  g_clear_pointer (&config->replay_range, g_free);
  g_clear_pointer (&config->only_partitions, g_array_unref);
  g_free (config->pattern);
  g_free (config->time_format);
  g_strfreev (config->levels);
  g_strfreev (config->dimensions);
  g_strfreev (config->sums);
  g_free (config->group);
  g_free (config->http);
  g_free (config->reset_to);
  g_strfreev (config->words);
  g_free (config);
}

static gboolean
all_chars_in (const char *s, const char *extra, gsize max_len)
{
  gsize n = 0;

  if (s == NULL || *s == '\0')
    return FALSE;
  for (const char *p = s; *p != '\0'; p++, n++)
    if (!g_ascii_isalnum (*p) && *p != '_' && (extra == NULL || strchr (extra, *p) == NULL))
      return FALSE;
  return n <= max_len;
}

static gboolean
parse_enum (const char *flag, const char *value, const char *const *names,
            int *out, GError **error)
{
  g_autofree char *choices = NULL;

  for (int i = 0; names[i] != NULL; i++)
    if (g_strcmp0 (value, names[i]) == 0)
      {
        *out = i;
        return TRUE;
      }
  choices = g_strjoinv ("|", (char **) names);
  g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "%s: expected %s, got '%s'",
               flag, choices, value);
  return FALSE;
}


void
kt_scrub_argv (int argc, char **argv)
{
  for (int i = 1; i < argc; i++)
    {
      kt_db_uri_scrub (argv[i]);
      kt_kprops_scrub (argv[i]);
    }
}

static gint
compare_partition_offsets (gconstpointer a, gconstpointer b)
{
  const KtPartitionOffset *x = a, *y = b;
  return (x->partition > y->partition) - (x->partition < y->partition);
}

gboolean
kt_partition_offsets_parse (const char *flag, const char *text, GArray *out,
                            GError **error)
{
  g_auto(GStrv) items = g_strsplit (text, ",", -1);

  for (char **item = items; *item != NULL; item++)
    {
      g_auto(GStrv) pair = g_strsplit (*item, ":", 3);
      guint64 partition, offset;
      KtPartitionOffset po;

      if (g_strv_length (pair) != 2
          || !g_ascii_string_to_unsigned (pair[0], 10, 0, G_MAXINT32, &partition, NULL)
          || !g_ascii_string_to_unsigned (pair[1], 10, 0, G_MAXINT64, &offset, NULL))
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                       "%s: expected PARTITION:OFFSET[,...], got '%s'", flag, *item);
          return FALSE;
        }
      po.partition = (gint32) partition;
      po.offset = (gint64) offset;
      for (guint i = 0; i < out->len; i++)
        if (g_array_index (out, KtPartitionOffset, i).partition == po.partition)
          {
            g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                         "%s: partition %d given twice", flag, po.partition);
            return FALSE;
          }
      g_array_append_val (out, po);
    }
  g_array_sort (out, compare_partition_offsets);
  return TRUE;
}

static gint
compare_gint32 (gconstpointer a, gconstpointer b)
{
  gint32 x = *(const gint32 *) a, y = *(const gint32 *) b;
  return (x > y) - (x < y);
}

gboolean
kt_partition_list_parse (const char *flag, const char *text, GArray *out, GError **error)
{
  g_auto(GStrv) items = g_strsplit (text, ",", -1);
  g_autoptr(GHashTable) seen = g_hash_table_new (g_direct_hash, g_direct_equal);

  for (char **item = items; *item != NULL; item++)
    {
      g_auto(GStrv) ends = g_strsplit (*item, "-", 3);
      guint64 lo, hi;

      if (g_strv_length (ends) < 1 || g_strv_length (ends) > 2
          || !g_ascii_string_to_unsigned (ends[0], 10, 0, G_MAXINT32, &lo, NULL)
          || !g_ascii_string_to_unsigned (ends[1] != NULL ? ends[1] : ends[0], 10, 0,
                                          G_MAXINT32, &hi, NULL)
          || lo > hi || hi - lo > 100000)
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                       "%s: expected partitions like 0-3,7, got '%s'", flag, *item);
          return FALSE;
        }
      for (guint64 p = lo; p <= hi; p++)
        {
          gint32 v = (gint32) p;
          if (!g_hash_table_add (seen, GINT_TO_POINTER (v)))
            {
              g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "%s: partition %d given twice",
                           flag, v);
              return FALSE;
            }
          g_array_append_val (out, v);
        }
    }
  g_array_sort (out, compare_gint32);
  return TRUE;
}

/* Digits, an optional fraction, then at most one unit: no sign, no
 * exponent, no blanks, nothing after the unit ("7ds" is not 7 days). */
static gboolean
parse_seconds (const char *text, double *seconds)
{
  /* "ms" before "m": each unit is compared whole. */
  static const struct { const char *unit; double seconds; } units[] = {
    { "ms", 0.001 }, { "s", 1 }, { "m", 60 }, { "h", 3600 }, { "d", 86400 },
  };
  const char *p = text;
  double value;
  char *end;

  if (!g_ascii_isdigit (*p))
    return FALSE;
  while (g_ascii_isdigit (*p))
    p++;
  if (*p == '.' && !g_ascii_isdigit (*++p))
    return FALSE;
  while (g_ascii_isdigit (*p))
    p++;
  value = g_ascii_strtod (text, &end);
  if (end != p || !isfinite (value))
    return FALSE;
  if (*p != '\0')
    {
      gsize i = 0;

      while (i < G_N_ELEMENTS (units) && !g_str_equal (p, units[i].unit))
        i++;
      if (i == G_N_ELEMENTS (units))
        return FALSE;
      value *= units[i].seconds;
    }
  *seconds = value;
  return value <= 1e12;
}

gboolean
kt_duration_parse (const char *flag, const char *text, double *seconds, GError **error)
{
  if (parse_seconds (text, seconds))
    return TRUE;
  g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
               "%s: expected a duration like 500ms, 5s, 2m, 12h or 7d (a bare number "
               "is seconds), got '%s'", flag, text);
  return FALSE;
}

gboolean
kt_options_kafka (KtConfig *config, KtRawOptions *raw, gboolean several, GError **error)
{
  if (raw->brokers == NULL || *raw->brokers == '\0')
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE, "--brokers is required");
      return FALSE;
    }
  if (raw->topic == NULL)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE, "--topic is required");
      return FALSE;
    }
  config->topics = g_strsplit (raw->topic, ",", -1);
  if (config->topics[0] == NULL)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE, "--topic: no topic name");
      return FALSE;
    }
  for (char **t = config->topics; *t != NULL; t++)
    /* Kafka's own rule for topic names. */
    if (!all_chars_in (*t, ".-", 249))
      {
        g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                     "--topic: '%s' is not a valid topic name ([A-Za-z0-9._-], "
                     "at most 249 characters)", *t);
        return FALSE;
      }
  if (g_strv_length (config->topics) > 1)
    {
      if (!several)
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                       "--topic: several topics are for `run` and `status` only, not `%s`",
                       config->command);
          return FALSE;
        }
      if (raw->job == NULL)
        {
          g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE,
                               "--job is required with several topics (one job, "
                               "offsets per topic and partition)");
          return FALSE;
        }
      for (guint i = 0; config->topics[i] != NULL; i++)
        for (guint j = 0; j < i; j++)
          if (g_str_equal (config->topics[i], config->topics[j]))
            {
              g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "--topic: '%s' given twice",
                           config->topics[i]);
              return FALSE;
            }
    }
  if (raw->job != NULL && !all_chars_in (raw->job, ".-", 64))
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "--job: '%s' is not a valid job name ([A-Za-z0-9._-], "
                   "at most 64 characters)", raw->job);
      return FALSE;
    }
  for (char **p = raw->properties; p != NULL && *p != NULL; p++)
    if (!kt_kprops_check (*p, error))
      return FALSE;

  config->brokers = g_steal_pointer (&raw->brokers);
  config->topic = g_strdup (config->topics[0]);
  if (raw->job == NULL && strlen (config->topic) > 64)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE,
                           "--job: the topic name is longer than 64 characters, "
                           "so it cannot be the job name: give --job");
      return FALSE;
    }
  config->job = raw->job != NULL ? g_steal_pointer (&raw->job) : g_strdup (config->topic);
  config->kafka_properties = g_steal_pointer (&raw->properties);
  return TRUE;
}

gboolean
kt_options_db (KtConfig *config, KtRawOptions *raw, GError **error)
{
  if (raw->db == NULL)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE, "--db is required");
      return FALSE;
    }
  if (!kt_db_uri_parse (raw->db, &config->db, error))
    return FALSE;
  if (raw->password_file != NULL)
    {
      char *password = kt_db_password_file_read (raw->password_file, error);

      if (password == NULL)
        return FALSE;
      if (config->db.password != NULL)
        memset (config->db.password, 0, strlen (config->db.password));
      g_free (config->db.password);
      config->db.password = password;
      config->db.password_file = g_strdup (raw->password_file);
    }
  if (raw->defaults_file != NULL)
    {
      if (!g_file_test (raw->defaults_file, G_FILE_TEST_IS_REGULAR))
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                       "--db-defaults-file: '%s' is not a readable file", raw->defaults_file);
          return FALSE;
        }
      config->db.defaults_file = g_strdup (raw->defaults_file);
    }
  return TRUE;
}

gboolean
kt_options_table (KtConfig *config, KtRawOptions *raw, const char *fallback,
                GError **error)
{
  if (raw->table != NULL && !kt_is_identifier (raw->table))
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "--table: '%s' is not a plain identifier ([A-Za-z0-9_], "
                   "at most 64 characters)", raw->table);
      return FALSE;
    }
  config->table_explicit = raw->table != NULL;
  config->table = raw->table != NULL ? g_steal_pointer (&raw->table) : g_strdup (fallback);
  return TRUE;
}

/* The run options that pick one of a few words. */
static gboolean
options_choices (KtConfig *config, KtRawOptions *raw, GError **error)
{
  static const char *const starts[] = { "earliest", "latest", NULL };
  static const char *const losses[] = { "fail", "skip", NULL };
  static const char *const stores[] = { "mysql", "kafka", NULL };
  static const char *const buckets[] = { "1m", "5m", "1h", NULL };
  static const int minutes[] = { 1, 5, 60 };
  const KtJobKind *kind;
  int v;

  if (raw->mode != NULL)
    {
      if (!parse_enum ("--mode", raw->mode, kt_mode_names, &v, error))
        return FALSE;
      config->mode = (KtMode) v;
    }
  if (raw->start != NULL)
    {
      if (!parse_enum ("--start", raw->start, starts, &v, error))
        return FALSE;
      config->start = (KtStart) v;
    }
  if (raw->on_data_loss != NULL)
    {
      if (!parse_enum ("--on-data-loss", raw->on_data_loss, losses, &v, error))
        return FALSE;
      config->on_data_loss = (KtOnDataLoss) v;
    }
  if (raw->offsets != NULL)
    {
      if (!parse_enum ("--offsets", raw->offsets, stores, &v, error))
        return FALSE;
      config->offsets = (KtOffsetStore) v;
      if (config->offsets == KT_OFFSETS_KAFKA && config->mode != KT_MODE_IDEMPOTENT)
        {
          /* Kafka's offsets cannot join a MySQL transaction. */
          g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE,
                               "--offsets kafka needs --mode idempotent");
          return FALSE;
        }
    }
  /* The kinds' table (kind.c) knows the kinds, and which modes each one
   * runs in. */
  kind = kt_kind_lookup (raw->kind != NULL ? raw->kind : "count",
                         kt_mode_names[config->mode], error);
  if (kind == NULL)
    return FALSE;
  config->kind = kind->kind;
  config->bucket = 1;
  if (raw->bucket != NULL)
    {
      if (!parse_enum ("--bucket", raw->bucket, buckets, &v, error))
        return FALSE;
      config->bucket = minutes[v];
    }
  return TRUE;
}

/* A duration option: its default when not given, else parsed and within
 * [@min, @max] seconds (@min itself allowed only when @min_ok). */
static gboolean
option_seconds (const char *flag, const char *text, double fallback, double min,
                gboolean min_ok, double max, double *out, GError **error)
{
  double v = fallback;

  if (text != NULL && !kt_duration_parse (flag, text, &v, error))
    return FALSE;
  if (v < min || (v == min && !min_ok) || v > max)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "%s: '%s' is not between %g and %g seconds",
                   flag, text, min, max);
      return FALSE;
    }
  *out = v;
  return TRUE;
}

/* The run options that are numbers within bounds. */
static gboolean
options_limits (KtConfig *config, KtRawOptions *raw, GError **error)
{
  double keep = 0;

  if (!option_seconds ("--interval", raw->interval, 5, 0, TRUE, 86400, &config->interval,
                       error))
    return FALSE;
  if (raw->max_per_partition < 1)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "--max-per-partition: must be at least 1, got %" G_GINT64_FORMAT,
                   raw->max_per_partition);
      return FALSE;
    }
  if (raw->max_batch_bytes < 1024)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "--max-batch-bytes: must be at least 1024, got %" G_GINT64_FORMAT,
                   raw->max_batch_bytes);
      return FALSE;
    }
  if (!option_seconds ("--startup-timeout", raw->startup_timeout, 20, 0, FALSE, 3600,
                       &config->startup_timeout, error))
    return FALSE;
  if (raw->workers == 0 || raw->workers < -1 || raw->workers > 64)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "--workers: %d is not between 1 and 64", raw->workers);
      return FALSE;
    }
  /* Whole seconds: the rows' times are. */
  if (raw->audit_keep != NULL
      && !option_seconds ("--audit-keep", raw->audit_keep, 0, 1, TRUE, 1e12, &keep, error))
    return FALSE;
  config->audit_keep = (gint64) keep;
  if (raw->health_max_lag < -1)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "--health-max-lag: must be 0 or more, got %" G_GINT64_FORMAT,
                   raw->health_max_lag);
      return FALSE;
    }
  config->health_max_lag = raw->health_max_lag;
  if (!option_seconds ("--health-max-commit-age", raw->health_max_commit_age, 0, 0, TRUE,
                       1e9, &config->health_max_commit_age, error)
      || !option_seconds ("--health-max-stall", raw->health_max_stall, KT_HEALTH_MAX_STALL,
                          0, FALSE, 1e9, &config->health_max_stall, error))
    return FALSE;
  config->workers = raw->workers > 0 ? (guint) raw->workers : MIN (g_get_num_processors (), 64);
  config->max_per_partition = raw->max_per_partition;
  config->max_batch_bytes = raw->max_batch_bytes;
  return TRUE;
}

/* How this instance shares the topic: a consumer group or a static list. */
static gboolean
options_share (KtConfig *config, KtRawOptions *raw, GError **error)
{
  if (raw->group != NULL && raw->partitions != NULL)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE,
                           "--group and --partitions exclude each other: a group shares "
                           "the partitions itself");
      return FALSE;
    }
  if (raw->group != NULL && !all_chars_in (raw->group, ".-", 200))
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "--group: '%s' is not a valid group name ([A-Za-z0-9._-])", raw->group);
      return FALSE;
    }
  if (raw->group != NULL && config->offsets == KT_OFFSETS_KAFKA)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE,
                           "--group needs offsets in MySQL (not --offsets kafka)");
      return FALSE;
    }
  if (raw->partitions != NULL)
    {
      config->only_partitions = g_array_new (FALSE, FALSE, sizeof (gint32));
      if (!kt_partition_list_parse ("--partitions", raw->partitions,
                                    config->only_partitions, error))
        return FALSE;
    }
  config->group = g_steal_pointer (&raw->group);
  config->share_table = raw->share_table;
  return TRUE;
}

/* Whether @name is a pcre2 group name that is also a plain column name:
 * [A-Za-z_][A-Za-z0-9_]*, at most 32 characters (pcre2's limit). */
static gboolean
is_field_name (const char *name)
{
  return all_chars_in (name, NULL, 32) && !g_ascii_isdigit (*name);
}

/* --by or --sum (@flag) into @out: names of fields, each once (column
 * names compare without case), at most @max; NULL @text leaves @out NULL. */
static gboolean
parse_fields (const char *flag, const char *text, guint max, char ***out, GError **error)
{
  /* Columns of ktally's own in a count table (sql/counts.sql) or its
   * per-topic table (sql/idempotent.sql; `partition` was one of it before
   * schema version 4): a field of that name would be a second column. */
  static const char *const taken[] = { "log_time", "log_count", "job", "topic", "partition",
                                       "time", NULL };
  g_auto(GStrv) fields = NULL;
  guint n;

  if (text == NULL)
    return TRUE;
  fields = g_strsplit (text, ",", -1);
  n = g_strv_length (fields);
  if (n > max)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "%s: at most %u fields, got %u", flag,
                   max, n);
      return FALSE;
    }
  for (guint i = 0; i < n; i++)
    {
      const char *f = fields[i];

      if (!is_field_name (f))
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                       "%s: '%s' is not a field name ([A-Za-z_][A-Za-z0-9_]*, at most 32 "
                       "characters, the name of a group of --pattern)", flag, f);
          return FALSE;
        }
      for (const char *const *t = taken; *t != NULL; t++)
        if (g_ascii_strcasecmp (f, *t) == 0)
          {
            g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                         g_str_equal (*t, "time")
                         ? "%s: '%s': the time is the bucket, the first key already"
                         : "%s: '%s' is a column ktally writes itself; rename the group",
                         flag, f);
            return FALSE;
          }
      if (g_ascii_strncasecmp (f, "sum_", 4) == 0)
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                       "%s: '%s': names starting with sum_ are the columns of --sum; "
                       "rename the group", flag, f);
          return FALSE;
        }
      for (guint j = 0; j < i; j++)
        if (g_ascii_strcasecmp (f, fields[j]) == 0)
          {
            g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                         "%s: '%s' given twice (column names do not tell case apart)", flag,
                         f);
            return FALSE;
          }
    }
  *out = g_steal_pointer (&fields);
  return TRUE;
}

/* --by, --sum and --max-keys. */
static gboolean
options_fields (KtConfig *config, KtRawOptions *raw, GError **error)
{
  const KtJobKind *kind = kt_kind_lookup (config->kind, kt_mode_names[config->mode], NULL);

  if (!parse_fields ("--by", raw->by, KT_MAX_DIMENSIONS, &config->dimensions, error)
      || !parse_fields ("--sum", raw->sum, KT_MAX_SUMS, &config->sums, error))
    return FALSE;
  for (char **s = config->sums; s != NULL && *s != NULL; s++)
    if (g_str_equal (*s, "level"))
      {
        g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE,
                             "--sum: 'level' is not a number; --sum adds up numeric "
                             "groups of --pattern");
        return FALSE;
      }
  if ((config->dimensions != NULL || config->sums != NULL) && kind != NULL && !kind->parses)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "%s: --kind %s reads no log lines",
                   config->dimensions != NULL ? "--by" : "--sum", config->kind);
      return FALSE;
    }
  if (raw->max_keys != -1 && config->dimensions == NULL)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE,
                           "--max-keys needs --by: without it a bucket has one key");
      return FALSE;
    }
  if (raw->max_keys != -1 && (raw->max_keys < 1 || raw->max_keys > KT_MAX_KEYS_LIMIT))
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "--max-keys: %" G_GINT64_FORMAT " is not between 1 and %d", raw->max_keys,
                   KT_MAX_KEYS_LIMIT);
      return FALSE;
    }
  config->max_keys = raw->max_keys != -1 ? (guint) raw->max_keys : KT_MAX_KEYS_DEFAULT;
  return TRUE;
}

gboolean
kt_options_run (KtConfig *config, KtRawOptions *raw, GError **error)
{
  if (!options_choices (config, raw, error)
      || !options_limits (config, raw, error)
      || !options_share (config, raw, error)
      || !options_fields (config, raw, error))
    return FALSE;
  config->http = g_steal_pointer (&raw->http);
  config->pattern = g_steal_pointer (&raw->pattern);
  config->time_format = g_steal_pointer (&raw->time_format);
  if (raw->levels != NULL)
    {
      config->levels = g_strsplit (raw->levels, ",", -1);
      for (char **l = config->levels; *l != NULL; l++)
        if (**l == '\0')
          {
            g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE,
                                 "--levels: an empty level in the list");
            return FALSE;
          }
    }
  config->exit_when_idle = raw->exit_when_idle;
  return TRUE;
}

void
kt_raw_options_clear (KtRawOptions *raw)
{
  g_free (raw->brokers);
  g_free (raw->topic);
  g_free (raw->job);
  g_free (raw->db);
  g_free (raw->mode);
  g_free (raw->start);
  g_free (raw->on_data_loss);
  g_free (raw->offsets);
  g_free (raw->table);
  g_free (raw->from);
  g_free (raw->until);
  g_free (raw->audit_keep);
  g_free (raw->password_file);
  g_free (raw->group);
  g_free (raw->http);
  g_free (raw->kind);
  g_free (raw->config_file);
  g_free (raw->log_format);
  g_free (raw->pattern);
  g_free (raw->time_format);
  g_free (raw->levels);
  g_free (raw->bucket);
  g_free (raw->by);
  g_free (raw->sum);
  g_free (raw->partitions);
  g_free (raw->defaults_file);
  g_free (raw->interval);
  g_free (raw->startup_timeout);
  g_free (raw->health_max_commit_age);
  g_free (raw->health_max_stall);
  g_strfreev (raw->properties);
  g_free (raw->to);
}
gboolean
kt_options_parse (
const char *command, const char *summary, const GOptionEntry *entries,
                  int argc, char **argv, KtRawOptions *raw, KtConfig *config, GError **error)
{
  g_autoptr(GOptionContext) context = g_option_context_new (NULL);
  g_autoptr(GError) local = NULL;

  g_option_context_set_summary (context, summary);
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &local))
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "%s", local->message);
      return FALSE;
    }
  if (argc > 1)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "unexpected argument '%s'", argv[1]);
      return FALSE;
    }
  config->command = command;
  config->verbose = raw->verbose;
  config->quiet = raw->quiet;
  config->log_format = kt_log_format_lookup (raw->log_format != NULL ? raw->log_format : "text",
                                             error);
  if (config->log_format == NULL)
    return FALSE;
  config->json = raw->json;
  raw->job_given = raw->job != NULL;
  return TRUE;
}

gboolean
kt_options_job (KtConfig *config, KtRawOptions *raw, GError **error)
{
  if (raw->job != NULL && !all_chars_in (raw->job, ".-", 64))
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "--job: '%s' is not a valid "
                   "job name ([A-Za-z0-9._-], at most 64 characters)", raw->job);
      return FALSE;
    }
  config->job = g_steal_pointer (&raw->job);
  return TRUE;
}

gboolean
kt_options_mode (KtConfig *config, KtRawOptions *raw, GError **error)
{
  int v = 0;

  if (raw->mode != NULL && !parse_enum ("--mode", raw->mode, kt_mode_names, &v, error))
    return FALSE;
  config->mode = (KtMode) v;
  return TRUE;
}

gboolean
kt_options_brokers (KtConfig *config, KtRawOptions *raw, gboolean required, GError **error)
{
  if (required && (raw->brokers == NULL || *raw->brokers == '\0'))
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE, "--brokers is required");
      return FALSE;
    }
  if (raw->topic != NULL && !all_chars_in (raw->topic, ".-", 249))
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "--topic: '%s' is not a valid topic name ([A-Za-z0-9._-], at most 249 "
                   "characters; one topic)", raw->topic);
      return FALSE;
    }
  for (char **p = raw->properties; p != NULL && *p != NULL; p++)
    if (!kt_kprops_check (*p, error))
      return FALSE;
  config->brokers = raw->brokers != NULL && *raw->brokers != '\0'
                    ? g_steal_pointer (&raw->brokers) : NULL;
  config->topic = g_steal_pointer (&raw->topic);
  config->kafka_properties = g_steal_pointer (&raw->properties);
  return TRUE;
}

gboolean
kt_options_timeout (KtConfig *config, KtRawOptions *raw, GError **error)
{
  return option_seconds ("--startup-timeout", raw->startup_timeout, 20, 0, FALSE, 3600,
                         &config->startup_timeout, error);
}

/* Blanks, in @message, what the command's @words hold where a mysql://
 * password stands (kt_db_uri_secrets()). A message quotes what the user
 * gave (GOption quotes a bad value whole), so a password shows as in its
 * URI, after a ':'; a longer one is blanked wherever it shows. Our own
 * text stays as it is: the placeholder "mysql://USER[:PASSWORD]@HOST"
 * in the --db messages, or a one-letter password's letter in a word. */
static void
scrub_message (char *message, char **words)
{
  for (char **w = words; *w != NULL; w++)
    {
      g_auto(GStrv) secrets = kt_db_uri_secrets (*w);

      for (char **s = secrets; *s != NULL; s++)
        for (char *at = strstr (message, *s); at != NULL; at = strstr (at + 1, *s))
          if (strlen (*s) >= 4 || (at > message && at[-1] == ':'))
            memset (at, 'x', strlen (*s));
    }
  kt_kprops_scrub (message);
}

KtConfig *
kt_config_parse (const char *command, int argc, char **argv, GError **error)
{
  const KtCommand *cmd = kt_command_find (command);
  g_autoptr(GError) local = NULL;
  g_autoptr(GPtrArray) args = g_ptr_array_new ();  /* borrowed strings */
  g_autoptr(GPtrArray) words = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GArray) lines = g_array_new (FALSE, FALSE, sizeof (guint));
  g_auto(GStrv) given = NULL;  /* the command line's words, for the file's errors */
  const char *file;
  KtConfig *config = NULL;

  for (int i = 0; i < argc; i++)
    {
      /* "-Xkey=value", as kcat and getopt take it: GOption wants the
       * value apart. */
      if (i > 0 && g_str_has_prefix (argv[i], "-X") && argv[i][2] != '\0')
        {
          g_ptr_array_add (args, (char *) "-X");
          g_ptr_array_add (args, argv[i] + 2);
        }
      else
        g_ptr_array_add (args, argv[i]);
    }
  g_ptr_array_add (args, NULL);
  file = kt_config_file_take (args);
  given = g_strdupv ((char **) args->pdata);
  if (cmd == NULL)
    g_set_error (&local, KT_ERROR, KT_ERROR_USAGE, "unknown command '%s'", command);
  else if (file == NULL
           || kt_config_file_words (file, cmd->keys_of != NULL ? cmd->keys_of : cmd->name,
                                    words, lines, &local))
    {
      /* The file's words first: the command line's come later and win. */
      for (guint i = 0; i < words->len; i++)
        g_ptr_array_insert (args, (gint) (i + 1), words->pdata[i]);
      config = cmd->parse ((int) args->len - 1, (char **) args->pdata, &local);
      /* A value from the file that does not do: its line too. */
      if (config == NULL && file != NULL && local->domain == KT_ERROR
          && local->code == KT_ERROR_USAGE)
        {
          g_autofree char *where = kt_config_file_blame (file, local->message, words, lines,
                                                         given);
          if (where != NULL)
            g_prefix_error (&local, "--config: %s: ", where);
        }
    }

  /* GLib quotes a bad argument back, and the argument may be a URI with a
   * password in it: no message leaves here with one. */
  if (config == NULL)
    {
      /* Every word given: --config=FILE too, which `given` no longer holds
       * (a file name that looks like a URI, found by fuzz-options). */
      g_autofree char **all = g_new0 (char *, argc + 1);

      memcpy (all, argv, sizeof (char *) * (gsize) argc);
      g_ptr_array_add (words, NULL);
      scrub_message (local->message, all);
      scrub_message (local->message, given);
      scrub_message (local->message, (char **) words->pdata);
      g_propagate_error (error, g_steal_pointer (&local));
      return NULL;
    }
  config->words = g_new0 (char *, argc + 1);
  for (int i = 0; i < argc; i++)
    config->words[i] = g_strdup (argv[i]);
  return config;
}
