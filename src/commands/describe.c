/* describe.c - a job's effective settings written back as a --config
 * file (describe.h): what `config --check` prints and what a reload
 * compares. config.c parses a command's words (and config-file.c a
 * file's) into a KtConfig; this writes a KtConfig out again. */
#include "describe.h"

#include <string.h>
#include "command.h"
#include "kind.h"
#include "kprops.h"
#include "log.h"

/* Sets @key in @section to @value (NULL: leaves it out). GKeyFile escapes
 * what needs it (a pattern's backslashes), so the text reads back. */
static void
describe_set (GKeyFile *file, const char *section, const char *key, const char *value)
{
  g_auto(GStrv) parts = NULL;
  g_autofree char *escaped = NULL;

  if (value == NULL)
    return;
  /* A literal "${" would read back as a variable (config-file.h). */
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

/* The -X properties, in [kafka]: a secret is never shown, only a comment
 * that it is set. */
static void
describe_properties (GKeyFile *file, const KtConfig *c)
{
  g_autoptr(GString) hidden = g_string_new (NULL);

  for (char **p = c->kafka.properties; p != NULL && *p != NULL; p++)
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

/* [mysql]: the URI's parts, the password only as a comment that it is set. */
static void
describe_mysql (GKeyFile *file, const KtConfig *c)
{
  static const char *const ssl[] = { "preferred", "disabled", "required", "verify-ca",
                                     "verify-identity" };
  /* localhost without a port is the default socket: no port to add. */
  g_autofree char *port = c->db.host != NULL && c->db.n_more_hosts == 0
                          && !kt_db_host_by_socket (&c->db, 0)
    ? g_strdup_printf ("%u", c->db.port ? c->db.port : 3306) : NULL;
  g_autoptr(GString) hosts = g_string_new (NULL);

  /* A list: each server with its port, in order; an IPv6 address in
   * brackets, as the URI has it. */
  for (guint i = 0; c->db.host != NULL && i < kt_db_hosts (&c->db); i++)
    {
      KtDbHost one = i == 0 ? (KtDbHost) { c->db.host, c->db.port } : c->db.more_hosts[i - 1];
      g_autofree char *text = kt_db_host_by_socket (&c->db, i) ? g_strdup (one.host)
                              : c->db.n_more_hosts > 0 ? kt_db_host_text (&c->db, i)
                              : strchr (one.host, ':') != NULL
                                ? g_strdup_printf ("[%s]", one.host) : g_strdup (one.host);

      g_string_append_printf (hosts, "%s%s", i == 0 ? "" : ", ", text);
    }
  describe_set (file, "mysql", "user", c->db.user);
  describe_set (file, "mysql", "host", c->db.host != NULL ? hosts->str : NULL);
  describe_set (file, "mysql", "port", port);
  describe_set (file, "mysql", "socket", c->db.socket);
  describe_set (file, "mysql", "database", c->db.database);
  describe_set (file, "mysql", "password-file", c->db.password_file);
  describe_set (file, "mysql", "defaults-file", c->db.defaults_file);
  describe_set (file, "mysql", "ssl-mode", ssl[c->db.ssl_mode]);
  describe_set (file, "mysql", "ssl-ca", c->db.ssl_ca);
  describe_set (file, "mysql", "ssl-cert", c->db.ssl_cert);
  describe_set (file, "mysql", "ssl-key", c->db.ssl_key);
  g_key_file_set_comment (file, "mysql", NULL,
                          c->db.password != NULL ? " password: (set, hidden)"
                                                 : " password: (none)", NULL);
}

char *
kt_config_describe (const KtConfig *c)
{
  g_autoptr(GKeyFile) file = g_key_file_new ();
  KtCommandBits bits = c->cmd != NULL ? kt_command_bits (c->cmd) : KT_CMD_RUN;
  /* The options of the job's kind, and no other kind's. */
  const KtKind *kind = c->job.kind != NULL
    ? kt_kind_lookup (c->job.kind, kt_mode_names[c->job.mode], NULL) : NULL;
  g_auto(GStrv) sections = kt_option_sections (c->tables);
  g_autofree char *text = NULL;

  for (char **s = sections; *s != NULL; s++)
    {
      if (g_str_equal (*s, "mysql"))
        describe_mysql (file, c);
      kt_option_table_describe (kt_option_table, bits, *s, c, file);
      if (kind != NULL && kind->options != NULL && c->job.options != NULL)
        kt_option_table_describe (kind->options, bits, *s, c->job.options, file);
      if (g_str_equal (*s, "kafka"))
        describe_properties (file, c);
    }
  text = g_key_file_to_data (file, NULL, NULL);
  return spaced_pairs (text);
}
