/* db-uri.c - where the database is (db.h, KtDbConfig): the mysql:// URI
 * and its hosts list, the password file, and how a database is named in
 * messages (never with its password). Pure but for the password file: no
 * connection here (<mysql.h> only for the client library's default
 * socket). */
#include "db-mysql.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void
kt_db_config_clear (KtDbConfig *db)
{
  if (db->password != NULL)
    memset (db->password, 0, strlen (db->password));
  g_clear_pointer (&db->host, g_free);
  g_clear_pointer (&db->user, g_free);
  g_clear_pointer (&db->password, g_free);
  g_clear_pointer (&db->password_file, g_free);
  g_clear_pointer (&db->database, g_free);
  g_clear_pointer (&db->socket, g_free);
  g_clear_pointer (&db->defaults_file, g_free);
  g_clear_pointer (&db->ssl_ca, g_free);
  g_clear_pointer (&db->ssl_cert, g_free);
  g_clear_pointer (&db->ssl_key, g_free);
  for (guint i = 0; i < db->n_more_hosts; i++)
    g_free (db->more_hosts[i].host);
  g_clear_pointer (&db->more_hosts, g_free);
  db->n_more_hosts = 0;
  db->port = 0;
  db->ssl_mode = KT_SSL_PREFERRED;
  db->tls_given = FALSE;
}

void
kt_db_config_copy (KtDbConfig *to, const KtDbConfig *from)
{
  *to = (KtDbConfig) {
    .host = g_strdup (from->host),
    .port = from->port,
    .user = g_strdup (from->user),
    .password = g_strdup (from->password),
    .password_file = g_strdup (from->password_file),
    .database = g_strdup (from->database),
    .socket = g_strdup (from->socket),
    .defaults_file = g_strdup (from->defaults_file),
    .ssl_mode = from->ssl_mode,
    .ssl_ca = g_strdup (from->ssl_ca),
    .ssl_cert = g_strdup (from->ssl_cert),
    .ssl_key = g_strdup (from->ssl_key),
    .tls_given = from->tls_given,
    .n_more_hosts = from->n_more_hosts,
  };
  if (from->n_more_hosts > 0)
    to->more_hosts = g_new0 (KtDbHost, from->n_more_hosts);
  for (guint i = 0; i < from->n_more_hosts; i++)
    to->more_hosts[i] = (KtDbHost) { g_strdup (from->more_hosts[i].host),
                                     from->more_hosts[i].port };
}

char *
kt_db_password_file_read (const char *path, GError **error)
{
  char buf[4096];
  gsize len = 0, line;
  struct stat st;
  int read_errno = 0;
  char *password = NULL;
  int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

  if (fd < 0 || fstat (fd, &st) != 0)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "--db-password-file: cannot read '%s': %s",
                   path, g_strerror (errno));
      if (fd >= 0)
        close (fd);
      return NULL;
    }
  /* Group read only where root gave it (db.h). */
  if (st.st_mode & (S_IWGRP | S_IROTH | S_IWOTH) || (st.st_mode & S_IRGRP && st.st_uid != 0))
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "--db-password-file: '%s' is readable or writable by group or others "
                   "(mode %04o): make it 0600 or 0400, owned by the user ktally runs as "
                   "(or 0640 or 0440 owned by root, for ktally's group)",
                   path, (unsigned int) (st.st_mode & 07777));
      close (fd);
      return NULL;
    }
  /* Up to the first newline, or the end; the rest of the file is not read. */
  while (len < sizeof buf - 1 && memchr (buf, '\n', len) == NULL)
    {
      ssize_t n = read (fd, buf + len, sizeof buf - 1 - len);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          read_errno = n < 0 ? errno : 0;
          break;
        }
      len += (gsize) n;
    }
  close (fd);
  buf[len] = '\0';
  line = strcspn (buf, "\r\n");
  if (read_errno != 0)
    g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "--db-password-file: cannot read '%s': %s",
                 path, g_strerror (read_errno));
  else if (line == sizeof buf - 1)
    g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "--db-password-file: the first line of "
                 "'%s' is longer than %zu bytes", path, sizeof buf - 2);
  else if (line == 0)
    g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "--db-password-file: the first line of "
                 "'%s' is empty: no password", path);
  else
    password = g_strndup (buf, line);
  memset (buf, 0, sizeof buf);
  return password;
}

/* Where the password of the mysql:// URI at @uri stands: [*@from,
 * *@from + *@len) of @uri. A URI GUri parses, with a host free of '@',
 * has it exactly (between the user's ':' and the '@', whatever its
 * query holds); any other is not trusted to be well-formed: from the
 * first ':' to the last '@'. @narrow: the span up to the first '@' only
 * (what a reader would take for the password), for messages. */
static gboolean
password_span (const char *uri, gboolean narrow, gsize *from, gsize *len)
{
  const char *colon = strchr (uri + strlen ("mysql://"), ':');
  const char *at;
  g_autofree char *password = NULL, *host = NULL;

  if (colon == NULL)
    return FALSE;
  if (g_uri_split_with_user (uri, G_URI_FLAGS_HAS_PASSWORD | G_URI_FLAGS_ENCODED, NULL, NULL,
                             &password, NULL, &host, NULL, NULL, NULL, NULL, NULL)
      && (host == NULL || strchr (host, '@') == NULL))
    {
      if (password != NULL)
        narrow = TRUE;
      else if (strchr (colon, '@') == NULL)
        return FALSE;
      /* Else GUri sees no password, yet an '@' follows the ':' (in a path:
       * "mysql://user:/pa@ss"): a mistyped URI, scrubbed as untrusted text
       * (found by fuzz-options). Blanking too much only shows less. */
    }
  at = narrow ? strchr (colon, '@') : strrchr (colon, '@');
  if (at == NULL)
    return FALSE;
  *from = (gsize) (colon + 1 - uri);
  *len = (gsize) (at - colon - 1);
  return TRUE;
}

void
kt_db_uri_scrub (char *s)
{
  for (char *uri = strstr (s, "mysql://"); uri != NULL; uri = strstr (uri, "mysql://"))
    {
      gsize from, len;

      if (!password_span (uri, FALSE, &from, &len))
        {
          uri += strlen ("mysql://");
          continue;
        }
      memset (uri + from, 'x', len);
      uri += from + len;
    }
}

char **
kt_db_uri_secrets (const char *word)
{
  g_autoptr(GPtrArray) out = g_ptr_array_new ();

  for (const char *uri = strstr (word, "mysql://"); uri != NULL;
       uri = strstr (uri + strlen ("mysql://"), "mysql://"))
    for (int narrow = 0; narrow < 2; narrow++)
      {
        gsize from, len;

        /* Longest first: blanking it leaves nothing of the shorter one. */
        if (password_span (uri, narrow, &from, &len) && len > 0
            && (narrow == 0 || out->len == 0
                || strlen (out->pdata[out->len - 1]) != len
                || strncmp (out->pdata[out->len - 1], uri + from, len) != 0))
          g_ptr_array_add (out, g_strndup (uri + from, len));
      }
  g_ptr_array_add (out, NULL);
  return (char **) g_ptr_array_free (g_steal_pointer (&out), FALSE);
}

guint
kt_db_hosts (const KtDbConfig *db)
{
  return db->socket != NULL ? 1 : 1 + db->n_more_hosts;
}

/* Whether the client library reaches @h over its default Unix socket:
 * "localhost" with no port. With a port it is TCP (open_once() says so,
 * or the library would take the socket and drop the port). */
static gboolean
by_default_socket (KtDbHost h)
{
  return h.port == 0 && g_strcmp0 (h.host, "localhost") == 0;
}

KtDbHost
kt_db_host_at (const KtDbConfig *db, guint i)
{
  return i == 0 ? (KtDbHost) { db->host, db->port } : db->more_hosts[i - 1];
}

gboolean
kt_db_host_by_socket (const KtDbConfig *db, guint i)
{
  return db->socket != NULL || by_default_socket (kt_db_host_at (db, i));
}

char *
kt_db_host_text (const KtDbConfig *db, guint i)
{
  KtDbHost h = kt_db_host_at (db, i);

  if (db->socket != NULL)
    return g_strdup (db->socket);
  /* localhost without a port is where every MySQL client takes it: the
   * client library's default socket (named as ?socket= is), not TCP
   * port 3306. */
  if (by_default_socket (h))
    return g_strdup (g_getenv ("MYSQL_UNIX_PORT") != NULL ? g_getenv ("MYSQL_UNIX_PORT")
                                                          : MYSQL_UNIX_ADDR);
  /* An IPv6 address in brackets, as in the URI: its ':' are not a port's. */
  return g_strdup_printf (strchr (h.host, ':') != NULL ? "[%s]:%u" : "%s:%u", h.host,
                          h.port ? h.port : 3306);
}

char *
kt_db_describe_server (const KtDbConfig *db, const char *servers)
{
  return g_strdup_printf ("%s@%s/%s", db->user, servers, db->database);
}

char *
kt_db_describe (const KtDbConfig *db)
{
  g_autoptr(GString) servers = g_string_new (NULL);

  for (guint i = 0; i < kt_db_hosts (db); i++)
    {
      g_autofree char *one = kt_db_host_text (db, i);
      g_string_append_printf (servers, "%s%s", i > 0 ? "," : "", one);
    }
  return kt_db_describe_server (db, servers->str);
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

/* The parts of --db a database needs, each checked with its own message:
 * the scheme, one '@' before the host, a user, a database name. */
static GUri *
uri_checked (const char *uri, GError **error)
{
  g_autoptr(GUri) parsed = NULL;
  const char *path;

  /* GLib's message would quote the URI, password included: use our own. */
  parsed = g_uri_parse (uri, G_URI_FLAGS_HAS_PASSWORD, NULL);
  if (parsed == NULL || g_strcmp0 (g_uri_get_scheme (parsed), "mysql") != 0)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE,
                           "--db: expected mysql://USER[:PASSWORD]@HOST[:PORT]/DATABASE");
      return NULL;
    }
  /* GUri ends the user's part at the first '@': "kt:p@ss@h" would be the
   * password "p" on the host "ss@h", which messages then show. */
  if (g_uri_get_host (parsed) != NULL && strchr (g_uri_get_host (parsed), '@') != NULL)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE,
                           "--db: more than one '@' before the host: percent-encode an '@' "
                           "in the user or password as %40");
      return NULL;
    }
  if (g_uri_get_user (parsed) == NULL || *g_uri_get_user (parsed) == '\0')
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE,
                           "--db: no user name (mysql://USER@HOST/DATABASE)");
      return NULL;
    }
  path = g_uri_get_path (parsed);
  if (path == NULL || path[0] != '/' || path[1] == '\0')
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE,
                           "--db: no database name (mysql://USER@HOST/DATABASE)");
      return NULL;
    }
  if (!kt_is_identifier (path + 1))
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "--db: database name '%s' is not a name ktally takes (%s)", path + 1,
                   KT_TABLE_NAME_RULE);
      return NULL;
    }
  return g_steal_pointer (&parsed);
}

/* One ?key=value of --db into @db. */
static gboolean
uri_param (const char *k, const char *v, KtDbConfig *db, GError **error)
{
  static const char *const ssl_modes[] = {
    "preferred", "disabled", "required", "verify-ca", "verify-identity", NULL
  };
  char **path = g_str_equal (k, "socket") ? &db->socket
                : g_str_equal (k, "ssl-ca") ? &db->ssl_ca
                : g_str_equal (k, "ssl-cert") ? &db->ssl_cert
                : g_str_equal (k, "ssl-key") ? &db->ssl_key : NULL;
  int mode;

  db->tls_given |= g_str_has_prefix (k, "ssl-");
  if (path != NULL && v[0] == '/')
    {
      *path = g_strdup (v);
      return TRUE;
    }
  if (path != NULL)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "--db: %s must be an absolute path", k);
      return FALSE;
    }
  if (g_str_equal (k, "ssl-mode"))
    {
      if (!parse_enum ("--db: ssl-mode", v, ssl_modes, &mode, error))
        return FALSE;
      db->ssl_mode = mode;
      return TRUE;
    }
  g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "--db: unknown parameter '%s' (known: socket, "
               "ssl-mode, ssl-ca, ssl-cert, ssl-key)", k);
  return FALSE;
}

/* The query part of --db (may be NULL) into @db. */
static gboolean
uri_params (const char *query, KtDbConfig *db, GError **error)
{
  g_autoptr(GHashTable) params = NULL;
  GHashTableIter iter;
  gpointer key, value;

  if (query == NULL)
    return TRUE;
  params = g_uri_parse_params (query, -1, "&", G_URI_PARAMS_NONE, NULL);
  if (params == NULL)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE,
                           "--db: the query part is not key=value&...");
      return FALSE;
    }
  g_hash_table_iter_init (&iter, params);
  while (g_hash_table_iter_next (&iter, &key, &value))
    if (!uri_param (key, value, db, error))
      return FALSE;
  if (db->ssl_ca != NULL && db->ssl_mode == KT_SSL_PREFERRED)
    db->ssl_mode = KT_SSL_VERIFY_CA;  /* a CA given is a CA to check */
  return TRUE;
}

/* A list holds at most this many servers: more is a mistake. */
#define MAX_HOSTS 16

/* One HOST[:PORT] or [IPV6][:PORT] of a hosts list (not the first: GUri
 * reads that one) into @out; @n counts from 1, for the message. */
static gboolean
parse_host (const char *text, guint n, KtDbHost *out, GError **error)
{
  const char *end, *port = NULL;
  gboolean v6 = text[0] == '[';

  if (v6)
    {
      end = strchr (text, ']');
      if (end != NULL && end > text + 1 && strspn (text + 1, "0123456789abcdefABCDEF:.")
                                           == (gsize) (end - text - 1)
          && (end[1] == '\0' || end[1] == ':'))
        port = end[1] == ':' ? end + 2 : NULL;
      else
        end = NULL;
    }
  else
    {
      end = text + strspn (text, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                 "0123456789.-_");
      if (end == text || (*end != '\0' && *end != ':'))
        end = NULL;
      else
        port = *end == ':' ? end + 1 : NULL;
    }
  if (end == NULL)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "--db: server %u of the list, '%s', is "
                   "not HOST[:PORT] or [IPV6-ADDRESS][:PORT]", n, text);
      return FALSE;
    }
  out->port = 0;
  if (port != NULL)
    {
      guint64 value;

      if (!g_ascii_string_to_unsigned (port, 10, 1, 65535, &value, NULL))
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "--db: server %u of the list, '%s': "
                       "the port must be a number from 1 to 65535", n, text);
          return FALSE;
        }
      out->port = (guint) value;
    }
  out->host = g_strndup (text + v6, (gsize) (end - text - v6));
  return TRUE;
}

/* Splits a hosts list out of @uri: *@first is @uri with its first server
 * only (for GUri, which knows one), *@more the others' texts (NULL when
 * there is one). The servers stand after the last '@' before the path. */
static gboolean
split_hosts (const char *uri, char **first, char ***more, GError **error)
{
  const char *authority, *servers, *end, *comma;
  g_auto(GStrv) all = NULL;

  *first = NULL;
  *more = NULL;
  if (!g_str_has_prefix (uri, "mysql://"))
    {
      *first = g_strdup (uri);
      return TRUE;
    }
  authority = uri + strlen ("mysql://");
  end = authority + strcspn (authority, "/?#");
  servers = g_strrstr_len (authority, end - authority, "@");
  servers = servers != NULL ? servers + 1 : authority;
  comma = memchr (servers, ',', (gsize) (end - servers));
  if (comma == NULL)
    {
      *first = g_strdup (uri);
      return TRUE;
    }
  {
    g_autofree char *list = g_strndup (servers, (gsize) (end - servers));
    all = g_strsplit (list, ",", -1);
  }
  if (g_strv_length (all) > MAX_HOSTS)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "--db: more than %d servers in the list",
                   MAX_HOSTS);
      return FALSE;
    }
  for (guint i = 0; all[i] != NULL; i++)
    if (all[i][0] == '\0')
      {
        g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "--db: server %u of the list is empty "
                     "(HOST[:PORT],HOST[:PORT]...)", i + 1);
        return FALSE;
      }
  *first = g_strdup_printf ("%.*s%s%s", (int) (servers - uri), uri, all[0], end);
  *more = g_strdupv (all + 1);
  return TRUE;
}

gboolean
kt_db_uri_parse (const char *uri, KtDbConfig *db, GError **error)
{
  g_autoptr(GUri) parsed = NULL;
  g_autofree char *first = NULL;
  g_auto(GStrv) more = NULL;

  memset (db, 0, sizeof *db);
  if (!split_hosts (uri, &first, &more, error))
    return FALSE;
  parsed = uri_checked (first, error);
  if (parsed == NULL)
    return FALSE;
  db->user = g_strdup (g_uri_get_user (parsed));
  db->password = g_strdup (g_uri_get_password (parsed));
  if (db->password == NULL && g_getenv ("MYSQL_PWD") != NULL)
    db->password = g_strdup (g_getenv ("MYSQL_PWD"));
  db->database = g_strdup (g_uri_get_path (parsed) + 1);
  if (g_uri_get_host (parsed) != NULL && *g_uri_get_host (parsed) != '\0')
    db->host = g_strdup (g_uri_get_host (parsed));
  db->port = g_uri_get_port (parsed) > 0 ? (guint) g_uri_get_port (parsed) : 0;
  if (!uri_params (g_uri_get_query (parsed), db, error))
    {
      kt_db_config_clear (db);
      return FALSE;
    }
  if (db->host == NULL && db->socket == NULL)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE,
                           "--db: no host (mysql://USER@HOST/DATABASE, or ?socket=/path)");
      kt_db_config_clear (db);
      return FALSE;
    }
  if (more == NULL)
    return TRUE;
  if (db->socket != NULL)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE,
                           "--db: a socket is one local server: not with a list of hosts");
      kt_db_config_clear (db);
      return FALSE;
    }
  db->n_more_hosts = g_strv_length (more);
  db->more_hosts = g_new0 (KtDbHost, db->n_more_hosts);
  for (guint i = 0; i < db->n_more_hosts; i++)
    if (!parse_host (more[i], i + 2, &db->more_hosts[i], error))
      {
        kt_db_config_clear (db);
        return FALSE;
      }
  return TRUE;
}
