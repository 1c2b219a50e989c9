/* describe.c - a job's effective settings written back as a --config
 * file (describe.h): what `config --check` prints and what a reload
 * compares. cli.c reads options into a KtConfig, config.c reads a file
 * into options, this writes a KtConfig out again. */
#include "describe.h"

#include <string.h>
#include "kind.h"
#include "kprops.h"
#include "log.h"

/* Seconds as a user writes them: 0.3, not GKeyFile's 0.29999999999999999. */
static void
describe_seconds (GKeyFile *file, const char *section, const char *key, double value)
{
  char text[G_ASCII_DTOSTR_BUF_SIZE];

  g_key_file_set_value (file, section, key, g_ascii_formatd (text, sizeof text, "%.15g", value));
}

/* Sets @key in @section to @value (NULL: leaves it out). GKeyFile escapes
 * what needs it (a pattern's backslashes), so the text reads back. */
static void
describe_set (GKeyFile *file, const char *section, const char *key, const char *value)
{
  g_auto(GStrv) parts = NULL;
  g_autofree char *escaped = NULL;

  if (value == NULL)
    return;
  /* A literal "${" would read back as a variable (config.h). */
  parts = g_strsplit (value, "${", -1);
  escaped = g_strjoinv ("$${", parts);
  g_key_file_set_string (file, section, key, escaped);
}

/* "key=value" lines as "key = value", the way people write them (GKeyFile
 * reads both). */
static char *
spaced_pairs (const char *text)
{
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
  GString *out = g_string_new (NULL);

  for (char **l = lines; *l != NULL; l++)
    {
      const char *eq = strchr (*l, '=');

      if (**l != '#' && **l != '[' && eq != NULL)
        g_string_append_printf (out, "%.*s = %s", (int) (eq - *l), *l, eq + 1);
      else
        g_string_append (out, *l);
      if (l[1] != NULL)
        g_string_append_c (out, '\n');
    }
  return g_string_free (out, FALSE);
}

/* [kafka]: a secret is never shown, only a comment that it is set. */
static void
describe_kafka (GKeyFile *file, const KtConfig *c)
{
  g_autoptr(GString) hidden = g_string_new (NULL);
  g_autofree char *topics = g_strjoinv (",", c->topics);

  describe_set (file, "kafka", "brokers", c->brokers);
  describe_set (file, "kafka", "topic", topics);
  describe_set (file, "kafka", "group", c->group);
  if (c->only_partitions != NULL)
    {
      g_autoptr(GString) list = g_string_new (NULL);
      for (guint i = 0; i < c->only_partitions->len; i++)
        g_string_append_printf (list, "%s%d", i ? "," : "",
                                g_array_index (c->only_partitions, gint32, i));
      describe_set (file, "kafka", "partitions", list->str);
    }
  for (char **p = c->kafka_properties; p != NULL && *p != NULL; p++)
    {
      g_autofree char *key = g_strndup (*p, strcspn (*p, "="));
      if (kt_kprops_is_secret (key))
        g_string_append_printf (hidden, "%s %s = (set, hidden)", hidden->len ? "\n" : "", key);
      else
        describe_set (file, "kafka", key, *p + strlen (key) + 1);
    }
  if (hidden->len > 0)
    g_key_file_set_comment (file, "kafka", NULL, hidden->str, NULL);
}

/* [mysql]: the password only as a comment that it is set. */
static void
describe_mysql (GKeyFile *file, const KtConfig *c)
{
  static const char *const ssl[] = { "preferred", "disabled", "required", "verify-ca",
                                     "verify-identity" };
  g_autofree char *port = c->db.host != NULL && c->db.n_more_hosts == 0
    ? g_strdup_printf ("%u", c->db.port ? c->db.port : 3306) : NULL;
  g_autoptr(GString) hosts = g_string_new (NULL);

  /* A list: each server with its port, in order; an IPv6 address in
   * brackets, as the URI has it. */
  for (guint i = 0; c->db.host != NULL && i < kt_db_hosts (&c->db); i++)
    {
      KtDbHost one = i == 0 ? (KtDbHost) { c->db.host, c->db.port } : c->db.more_hosts[i - 1];
      g_autofree char *text = c->db.n_more_hosts > 0 ? kt_db_host_text (&c->db, i)
                              : strchr (one.host, ':') != NULL
                                ? g_strdup_printf ("[%s]", one.host) : g_strdup (one.host);

      g_string_append_printf (hosts, "%s%s", i == 0 ? "" : ", ", text);
    }
  describe_set (file, "mysql", "user", c->db.user);
  describe_set (file, "mysql", "host", c->db.host != NULL ? hosts->str : NULL);
  describe_set (file, "mysql", "port", port);
  describe_set (file, "mysql", "socket", c->db.socket);
  describe_set (file, "mysql", "database", c->db.database);
  describe_set (file, "mysql", "defaults-file", c->db.defaults_file);
  describe_set (file, "mysql", "ssl-mode", ssl[c->db.ssl_mode]);
  describe_set (file, "mysql", "ssl-ca", c->db.ssl_ca);
  g_key_file_set_comment (file, "mysql", NULL,
                          c->db.password != NULL ? " password: (set, hidden)"
                                                 : " password: (none)", NULL);
}

/* [batch]: --workers only for a kind that has workers. */
static void
describe_batch (GKeyFile *file, const KtConfig *c, const KtJobKind *kind)
{
  static const char *const starts[] = { "earliest", "latest" };
  static const char *const losses[] = { "fail", "skip" };
  static const char *const stores[] = { "mysql", "kafka" };

  describe_set (file, "batch", "job", c->job);
  if (c->table_explicit)
    describe_set (file, "batch", "table", c->table);
  describe_set (file, "batch", "kind", c->kind);
  describe_set (file, "batch", "mode", kt_mode_names[c->mode]);
  describe_set (file, "batch", "offsets", stores[c->offsets]);
  describe_seconds (file, "batch", "interval", c->interval);
  g_key_file_set_int64 (file, "batch", "max-per-partition", c->max_per_partition);
  g_key_file_set_int64 (file, "batch", "max-batch-bytes", c->max_batch_bytes);
  describe_set (file, "batch", "start", starts[c->start]);
  describe_set (file, "batch", "on-data-loss", losses[c->on_data_loss]);
  describe_seconds (file, "batch", "startup-timeout", c->startup_timeout);
  g_key_file_set_boolean (file, "batch", "exit-when-idle", c->exit_when_idle);
  if (c->share_table)
    g_key_file_set_boolean (file, "batch", "share-table", TRUE);
  if (kind != NULL && kind->workers)
    g_key_file_set_integer (file, "batch", "workers", (gint) c->workers);
  if (c->audit_keep > 0)
    {
      g_autofree char *keep = g_strdup_printf ("%" G_GINT64_FORMAT "s", c->audit_keep);
      describe_set (file, "batch", "audit-keep", keep);
    }
}

/* [parse]: only for a kind that parses lines. */
static void
describe_parse (GKeyFile *file, const KtConfig *c)
{
  g_autofree char *levels = c->levels != NULL ? g_strjoinv (",", c->levels)
                                              : g_strdup ("ERROR");
  g_autofree char *bucket = g_strdup_printf ("%s", c->bucket == 60 ? "1h"
                                                   : c->bucket == 5 ? "5m" : "1m");

  describe_set (file, "parse", "pattern", c->pattern);
  describe_set (file, "parse", "time-format", c->time_format);
  describe_set (file, "parse", "levels", levels);
  describe_set (file, "parse", "bucket", bucket);
  if (c->dimensions != NULL)
    {
      g_autofree char *by = g_strjoinv (",", c->dimensions);
      describe_set (file, "parse", "by", by);
      g_key_file_set_int64 (file, "parse", "max-keys", c->max_keys);
    }
  if (c->sums != NULL)
    {
      g_autofree char *sum = g_strjoinv (",", c->sums);
      describe_set (file, "parse", "sum", sum);
    }
}

/* [http] and [log]: only what differs from the defaults. */
static void
describe_http_log (GKeyFile *file, const KtConfig *c)
{
  describe_set (file, "http", "http", c->http);
  if (c->health_max_lag >= 0)
    g_key_file_set_int64 (file, "http", "health-max-lag", c->health_max_lag);
  if (c->health_max_commit_age > 0)
    describe_seconds (file, "http", "health-max-commit-age", c->health_max_commit_age);
  if (c->health_max_stall != KT_HEALTH_MAX_STALL)
    describe_seconds (file, "http", "health-max-stall", c->health_max_stall);
  if (c->verbose)
    g_key_file_set_boolean (file, "log", "verbose", TRUE);
  if (c->quiet)
    g_key_file_set_boolean (file, "log", "quiet", TRUE);
  if (c->log_format != NULL && c->log_format != &kt_log_format_text)
    describe_set (file, "log", "log-format", c->log_format->name);
}

char *
kt_config_describe (const KtConfig *c)
{
  g_autoptr(GKeyFile) file = g_key_file_new ();
  /* What the job's kind takes: its parser's options, its --workers. */
  const KtJobKind *kind = c->kind != NULL
    ? kt_kind_lookup (c->kind, kt_mode_names[c->mode], NULL) : NULL;
  g_autofree char *text = NULL;

  describe_kafka (file, c);
  describe_mysql (file, c);
  describe_batch (file, c, kind);
  if (kind != NULL && kind->parses)
    describe_parse (file, c);
  describe_http_log (file, c);
  text = g_key_file_to_data (file, NULL, NULL);
  return spaced_pairs (text);
}
