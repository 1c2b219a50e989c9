/* db.c - where the database is, connections, and SQL helpers (db.h). */
#include "db.h"

#include <errmsg.h>
#include <errno.h>
#include <fcntl.h>
#include <mysqld_error.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "mysql-autocleanups.h"
#include "log.h"

static KtDbConnectCheck connect_check;

void
kt_db_set_connect_check (KtDbConnectCheck check)
{
  connect_check = check;
}

/* Every session ktally opens: a value that does not fit is an error, never
 * clamped or truncated in silence. */
#define KT_SQL_MODE "STRICT_ALL_TABLES,STRICT_TRANS_TABLES,NO_ZERO_DATE,NO_ZERO_IN_DATE," \
                    "ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION"

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

/* The @i-th server of @db: 0 is @db->host. */
static KtDbHost
host_at (const KtDbConfig *db, guint i)
{
  return i == 0 ? (KtDbHost) { db->host, db->port } : db->more_hosts[i - 1];
}

gboolean
kt_db_host_by_socket (const KtDbConfig *db, guint i)
{
  return db->socket != NULL || by_default_socket (host_at (db, i));
}

char *
kt_db_host_text (const KtDbConfig *db, guint i)
{
  KtDbHost h = host_at (db, i);

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

/* "user@SERVERS/database" with @servers. */
static char *
describe_with (const KtDbConfig *db, const char *servers)
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
  return describe_with (db, servers->str);
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

gboolean
kt_db_is_transient (unsigned int code)
{
  switch (code)
    {
    case CR_CONNECTION_ERROR:
    case CR_CONN_HOST_ERROR:
    case CR_SERVER_GONE_ERROR:
    case CR_SERVER_LOST:
    case CR_SERVER_LOST_EXTENDED:
    case CR_COMMANDS_OUT_OF_SYNC:
    case ER_CON_COUNT_ERROR:
    case ER_SERVER_SHUTDOWN:
    case ER_LOCK_DEADLOCK:
    case ER_LOCK_WAIT_TIMEOUT:
    case ER_QUERY_INTERRUPTED:
    case ER_CONNECTION_KILLED:
    case ER_NET_READ_ERROR:
    case ER_NET_READ_INTERRUPTED:
    case ER_NET_ERROR_ON_WRITE:
    case ER_NET_WRITE_INTERRUPTED:
    case ER_UNKNOWN_COM_ERROR:  /* MariaDB answers this while it shuts down, and a
                                 * Galera node outside the primary component */
    case ER_ERROR_DURING_COMMIT:  /* Galera: the replication of a COMMIT failed */
      return TRUE;
    default:
      return FALSE;
    }
}

gboolean
kt_db_refused (unsigned int code)
{
  return code == ER_ACCESS_DENIED_ERROR || code == ER_ACCESS_DENIED_NO_PASSWORD_ERROR;
}

const char *const kt_db_grants[] = {
  "SELECT", "INSERT", "UPDATE", "DELETE", "CREATE", "ALTER", "DROP", "CREATE VIEW",
  "CREATE TEMPORARY TABLES", NULL
};

/* A grant's database pattern (LIKE: % and _, \ escapes) against @name. */
static gboolean
like (const char *pattern, const char *name)
{
  for (;; pattern++, name++)
    {
      if (*pattern == '%')
        {
          for (const char *n = name;; n++)
            {
              if (like (pattern + 1, n))
                return TRUE;
              if (*n == '\0')
                return FALSE;
            }
        }
      if (*pattern == '\\' && pattern[1] != '\0')
        pattern++;
      else if (*pattern == '_' && *name != '\0')
        continue;
      if (*pattern != *name)
        return FALSE;
      if (*pattern == '\0')
        return TRUE;
    }
}

/* `name` without its quotes (`` inside is one `); NULL if @text is not a
 * quoted name followed by @tail. */
static char *
unquote (const char *text, const char *tail)
{
  g_autoptr(GString) out = g_string_new (NULL);
  const char *p = text;

  if (*p++ != '`')
    return NULL;
  for (; *p != '\0'; p++)
    {
      if (*p == '`' && p[1] == '`')
        g_string_append_c (out, *p++);
      else if (*p == '`')
        break;
      else
        g_string_append_c (out, *p);
    }
  if (*p != '`' || !g_str_equal (p + 1, tail))
    return NULL;
  return g_string_free (g_steal_pointer (&out), FALSE);
}

char **
kt_db_grants_missing_in (const char *const *lines, const char *database)
{
  g_autoptr(GHashTable) held = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GPtrArray) missing = g_ptr_array_new ();

  for (const char *const *l = lines; *l != NULL; l++)
    {
      const char *on = strstr (*l, " ON "), *to;
      g_autofree char *privs = NULL, *object = NULL, *db = NULL;
      g_auto(GStrv) each = NULL;
      gboolean all;

      if (!g_str_has_prefix (*l, "GRANT ") || on == NULL
          || (to = strstr (on + 4, " TO ")) == NULL)
        continue;  /* a role granted, or not a grant */
      privs = g_strndup (*l + 6, (gsize) (on - *l - 6));
      object = g_strndup (on + 4, (gsize) (to - on - 4));
      /* Global, or on a database (a pattern); tables, columns, routines
       * do not make a database-wide privilege. */
      if (!g_str_equal (object, "*.*")
          && ((db = unquote (object, ".*")) == NULL || !like (db, database)))
        continue;
      all = g_str_has_prefix (privs, "ALL");
      each = g_strsplit (privs, ", ", -1);
      for (char **p = each; *p != NULL; p++)
        if (strchr (*p, '(') == NULL)
          g_hash_table_add (held, g_strdup (*p));
      if (all)
        g_hash_table_add (held, g_strdup ("ALL"));
    }
  for (const char *const *g = kt_db_grants; *g != NULL; g++)
    if (!g_hash_table_contains (held, "ALL") && !g_hash_table_contains (held, *g))
      g_ptr_array_add (missing, g_strdup (*g));
  /* The set's keys were copies: free them. */
  {
    GHashTableIter iter;
    gpointer key;

    g_hash_table_iter_init (&iter, held);
    while (g_hash_table_iter_next (&iter, &key, NULL))
      g_free (key);
  }
  g_ptr_array_add (missing, NULL);
  return (char **) g_ptr_array_free (g_steal_pointer (&missing), FALSE);
}

/* Whether @code says the user lacks a privilege (not a wrong password). */
static gboolean
is_grant_error (unsigned int code)
{
  return code == ER_DBACCESS_DENIED_ERROR || code == ER_TABLEACCESS_DENIED_ERROR
         || code == ER_COLUMNACCESS_DENIED_ERROR || code == ER_SPECIFIC_ACCESS_DENIED_ERROR;
}

/* The connection's error, and after a missing privilege ("CREATE command
 * denied to user ..."), the grants ktally needs: the server names one
 * privilege at a time, a user fixing them one by one would go round and
 * round. New string. */
static char *
error_text (MYSQL *conn)
{
  g_autofree char *grants = NULL;

  /* ktally makes its tables, never its database. */
  if (mysql_errno (conn) == ER_BAD_DB_ERROR)
    return g_strdup_printf ("%s (create it first: CREATE DATABASE; ktally creates its "
                            "tables in it)", mysql_error (conn));
  if (!is_grant_error (mysql_errno (conn)))
    return g_strdup (mysql_error (conn));
  grants = g_strjoinv (", ", (char **) kt_db_grants);
  /* To a user without a grant on a database, MySQL says "access denied"
   * whether the database exists or not. */
  if (mysql_errno (conn) == ER_DBACCESS_DENIED_ERROR)
    return g_strdup_printf ("%s: the database does not exist, or the user may not use it "
                            "(MySQL does not tell which to a user without grants on it): "
                            "create it if it is missing (CREATE DATABASE), and GRANT %s ON "
                            "it to the user", mysql_error (conn), grants);
  return g_strdup_printf ("%s (ktally needs GRANT %s ON its database; `ktally config "
                          "--check --connect` lists what is missing)", mysql_error (conn), grants);
}

KtErrorCode
kt_db_error_code (MYSQL *conn)
{
  unsigned int code = mysql_errno (conn);

  if (code == ER_LOCK_DEADLOCK || code == ER_LOCK_WAIT_TIMEOUT)
    return KT_ERROR_CONFLICT;
  return kt_db_is_transient (code) ? KT_ERROR_TRANSIENT : KT_ERROR_FATAL;
}

/* One attempt of kt_db_open() on the @i-th server; *@code: the client's
 * error number. */
static MYSQL *
open_once (const KtDbConfig *db, guint i, const char *description,
           unsigned int connect_timeout, unsigned int io_timeout, unsigned int *code,
           GError **error)
{
  g_autoptr(MYSQL) conn = mysql_init (NULL);
  KtDbHost server = host_at (db, i);
  my_bool off = 0;

  *code = 0;

  if (conn == NULL)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_INTERNAL,
                           "cannot allocate a MySQL connection");
      return NULL;
    }
  /* Bounded waits: a server that hangs is a transient failure to report,
   * not a process stuck forever. Reconnection is ours, never silent: an
   * automatic reconnect would lose the open transaction without a word. */
  mysql_options (conn, MYSQL_OPT_CONNECT_TIMEOUT, &connect_timeout);
  mysql_options (conn, MYSQL_OPT_READ_TIMEOUT, &io_timeout);
  mysql_options (conn, MYSQL_OPT_WRITE_TIMEOUT, &io_timeout);
  mysql_options (conn, MYSQL_OPT_RECONNECT, &off);
  mysql_options (conn, MYSQL_SET_CHARSET_NAME, "utf8mb4");
  /* Where the user said: a port means TCP. The library takes "localhost"
   * for its default socket whatever the port (localhost:3307 and
   * localhost:3308 were one server, the default socket's, twice). */
  if (db->socket == NULL && !by_default_socket (server))
    {
      unsigned int tcp = MYSQL_PROTOCOL_TCP;
      mysql_options (conn, MYSQL_OPT_PROTOCOL, &tcp);
    }
  if (db->defaults_file != NULL)
    {
      /* The [client] group may give the password (and user, host...). */
      mysql_options (conn, MYSQL_READ_DEFAULT_FILE, db->defaults_file);
      mysql_options (conn, MYSQL_READ_DEFAULT_GROUP, "client");
    }
  if (db->ssl_mode != KT_SSL_PREFERRED)
    {
      my_bool enforce = db->ssl_mode != KT_SSL_DISABLED;
      my_bool verify = db->ssl_mode >= KT_SSL_VERIFY_CA;

      if (enforce)
        {
          mysql_ssl_set (conn, db->ssl_key, db->ssl_cert, db->ssl_ca, NULL, NULL);
          /* No silent fall back to plain text if the server has no TLS. */
          mysql_options (conn, MYSQL_OPT_SSL_ENFORCE, &enforce);
        }
      mysql_options (conn, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &verify);
    }

  if (mysql_real_connect (conn, server.host, db->user, db->password, db->database,
                          server.port, db->socket, 0) == NULL)
    {
      g_autofree char *why = error_text (conn);

      *code = mysql_errno (conn);
      g_set_error (error, KT_ERROR,
                   kt_db_is_transient (*code) ? KT_ERROR_TRANSIENT : KT_ERROR_FATAL,
                   "cannot connect to MySQL at %s: %s", description, why);
      return NULL;
    }
  /* Whatever the client library did with ssl-mode: not encrypted, not used. */
  if (db->ssl_mode >= KT_SSL_REQUIRED && mysql_get_ssl_cipher (conn) == NULL)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_FATAL,
                   "cannot connect to MySQL at %s: ssl-mode requires TLS and the "
                   "connection is not encrypted", description);
      return NULL;
    }
  /* Whatever the server's defaults: a value that does not fit is an error,
   * never clamped or truncated in silence (a count, a name), and the times
   * ktally stamps (committed_at, NOW() in --audit-keep) are UTC, which a
   * DST change or the server's time zone cannot fold out of order. */
  if (mysql_query (conn, "SET SESSION sql_mode = '" KT_SQL_MODE "', "
                         "SESSION time_zone = '+00:00'") != 0)
    {
      g_set_error (error, KT_ERROR, kt_db_error_code (conn),
                   "cannot set sql_mode and time_zone on %s: %s", description,
                   mysql_error (conn));
      return NULL;
    }
  return g_steal_pointer (&conn);
}

/* A rotation found by a refused connection: said once, with its fields. */
static void
reread_logged (const char *description, const char *file)
{
  g_autoptr(KtLogEvent) e = kt_log_event_new ("password-reread");

  kt_log_event_string (e, "database", description);
  kt_log_event_string (e, "file", file);
  kt_log_event_emit (e, G_LOG_LEVEL_MESSAGE, "MySQL at %s refused the password; %s holds "
                     "a new one: connecting with it", description, file);
}

/* kt_db_open() on the @i-th server of @db alone. */
static MYSQL *
open_host (KtDbConfig *db, guint i, const char *description, unsigned int connect_timeout,
           unsigned int io_timeout, unsigned int *code, GError **error)
{
  g_autoptr(GError) local = NULL;
  g_autoptr(GError) reread = NULL;
  g_autofree char *fresh = NULL;
  MYSQL *conn = open_once (db, i, description, connect_timeout, io_timeout, code, &local);

  if (conn != NULL)
    return conn;
  if (*code != ER_ACCESS_DENIED_ERROR || db->password_file == NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local));
      return NULL;
    }
  /* Refused: perhaps the password was rotated under us. The file is read
   * once more (an option file, --db-defaults-file, is read by the client
   * library at every connection anyway); only a new password is tried. */
  fresh = kt_db_password_file_read (db->password_file, &reread);
  if (fresh == NULL || g_strcmp0 (fresh, db->password) == 0)
    {
      if (fresh == NULL)
        g_set_error (error, KT_ERROR, local->code, "%s (and reading the password file "
                     "again: %s)", local->message, reread->message);
      else
        g_set_error (error, KT_ERROR, local->code, "%s (read again, %s holds the same "
                     "password)", local->message, db->password_file);
      if (fresh != NULL)
        memset (fresh, 0, strlen (fresh));
      return NULL;
    }
  reread_logged (description, db->password_file);
  if (db->password != NULL)
    memset (db->password, 0, strlen (db->password));
  g_free (db->password);
  db->password = g_steal_pointer (&fresh);
  return open_once (db, i, description, connect_timeout, io_timeout, code, error);
}

/* What a server of the list is to ktally. */
typedef enum
{
  SERVER_USABLE,
  SERVER_READ_ONLY,   /* read_only ON: a replica, or a server a failover fenced */
  SERVER_NOT_READY,   /* a Galera node outside the primary component */
  SERVER_FAILED,      /* it could not say: the error tells */
  SERVER_FOREIGN,     /* another database: its identity is not this process's */
} ServerState;

static const char *const server_why[] = {
  NULL,
  "read-only (read_only=ON: a replica, or a server a failover fenced)",
  "not ready: a Galera node outside the primary component (wsrep_ready=OFF)",
};

/* Whether the server of @conn may take ktally's work. Only SHOW and SET:
 * a node that is not ready refuses the rest (1047). */
static ServerState
server_state (MYSQL *conn, const char *description, GError **error)
{
  g_autoptr(MYSQL_RES) vars = NULL;
  g_autoptr(MYSQL_RES) status = NULL;
  gboolean read_only = FALSE, wsrep = FALSE;
  MYSQL_ROW row;

  /* super_read_only is MySQL's; ktally's user may well have SUPER (or
   * READ_ONLY ADMIN), which read_only does not stop: hence the look. */
  vars = kt_db_select (conn, description, "SHOW GLOBAL VARIABLES WHERE Variable_name IN "
                       "('read_only', 'super_read_only', 'wsrep_on')",
                       "cannot read read_only and wsrep_on", error);
  if (vars == NULL)
    return SERVER_FAILED;
  while ((row = mysql_fetch_row (vars)) != NULL)
    {
      gboolean on = row[1] != NULL && g_ascii_strcasecmp (row[1], "ON") == 0;

      if (g_str_equal (row[0], "wsrep_on"))
        wsrep = on;
      else
        read_only |= on;
    }
  if (wsrep)
    {
      status = kt_db_select (conn, description, "SHOW GLOBAL STATUS LIKE 'wsrep_ready'",
                             "cannot read wsrep_ready", error);
      if (status == NULL)
        return SERVER_FAILED;
      row = mysql_fetch_row (status);
      if (row == NULL || row[1] == NULL || g_ascii_strcasecmp (row[1], "ON") != 0)
        return SERVER_NOT_READY;
      /* Causal reads: what this session reads (offsets above all) is at
       * least as new as every commit the cluster acknowledged, on any node. */
      if (!kt_db_exec (conn, description, "SET SESSION wsrep_sync_wait = 1",
                       "cannot set wsrep_sync_wait", error))
        return SERVER_FAILED;
    }
  return read_only ? SERVER_READ_ONLY : SERVER_USABLE;
}

/* A server of the list passed over (@why: what it is, or the error that
 * the connection met): one line. */
static void
skip_logged (const char *description, const char *server, ServerState state,
             unsigned int refused, const char *why, gboolean last)
{
  g_autoptr(KtLogEvent) e = kt_log_event_new ("db-skip");
  const char *next = last ? "no other server to try" : "trying the next one";

  kt_log_event_string (e, "database", description);
  kt_log_event_string (e, "server", server);
  kt_log_event_string (e, "reason", state == SERVER_READ_ONLY ? "read-only"
                                    : state == SERVER_NOT_READY ? "not-ready"
                                    : state == SERVER_FOREIGN ? "another-database"
                                    : kt_db_refused (refused) ? "refused" : "failed");
  if (state == SERVER_FAILED || state == SERVER_FOREIGN)
    kt_log_event_emit (e, G_LOG_LEVEL_WARNING, "%s: %s", why, next);
  else
    kt_log_event_emit (e, G_LOG_LEVEL_WARNING, "MySQL at %s is %s: %s", description,
                       server_why[state], next);
}

/* A skip of a list being walked, said once kt_db_open() knows the end. */
typedef struct
{
  char        *description;
  char        *server;
  ServerState  state;
  unsigned int refused;
  char        *why;
} Skip;

static void
skip_clear (gpointer data)
{
  Skip *k = data;

  g_free (k->description);
  g_free (k->server);
  g_free (k->why);
}

/* The skips of a list walked: said when a server was taken (why not the
 * ones before it) or when one may come back (a retry follows); not when
 * every server refused for good: the error that ends the command names
 * each one's reason, in one line. */
static void
skips_said (GArray *skips, gboolean said, gboolean taken)
{
  for (guint i = 0; said && i < skips->len; i++)
    {
      const Skip *k = &g_array_index (skips, Skip, i);

      skip_logged (k->description, k->server, k->state, k->refused, k->why,
                   !taken && i + 1 == skips->len);
    }
}

/* ---- Which database this is ------------------------------------------------ */

/* The identity of the database this process works in: the first one a
 * connection of it saw (any thread: the page's chart has connections of
 * its own), and the server it was seen on. */
static GMutex identity_lock;
static char  *identity_seen;
static char  *identity_seen_on;

/* Compares @seen (NULL: the server holds none) of @server with the
 * process's identity, recording it (with @record) if the process has none
 * yet. SERVER_FOREIGN with @error naming both when they differ. */
static ServerState
identity_compare (const char *seen, gboolean record, const char *server,
                  const char *description, GError **error)
{
  ServerState state = SERVER_USABLE;

  g_mutex_lock (&identity_lock);
  if (identity_seen == NULL && seen != NULL && record)
    {
      identity_seen = g_strdup (seen);
      identity_seen_on = g_strdup (server);
    }
  else if (identity_seen != NULL && g_strcmp0 (seen, identity_seen) != 0)
    {
      g_autofree char *its = seen != NULL
        ? g_strdup_printf ("its identity is %s", seen)
        : g_strdup ("it holds no ktally identity (no ktally tables, or an older schema: a "
                    "replica promoted before the database's creation reached it? restart "
                    "ktally to start there anew)");

      g_set_error (error, KT_ERROR, KT_ERROR_FATAL,
                   "MySQL at %s is another database than this process's: %s, not %s "
                   "(first seen on %s); refusing it: the servers of a hosts list must be "
                   "one database's (a Galera cluster, a primary and its replicas)",
                   description, its, identity_seen, identity_seen_on);
      state = SERVER_FOREIGN;
    }
  g_mutex_unlock (&identity_lock);
  return state;
}

const char *
kt_db_identity (void)
{
  const char *id;

  g_mutex_lock (&identity_lock);
  id = identity_seen;
  g_mutex_unlock (&identity_lock);
  return id;
}

void
kt_db_identity_forget (void)
{
  g_mutex_lock (&identity_lock);
  g_clear_pointer (&identity_seen, g_free);
  g_clear_pointer (&identity_seen_on, g_free);
  g_mutex_unlock (&identity_lock);
}

/* The connect check (the schema's version and identity) on @conn, a
 * connection to @server, and the identity compared: SERVER_USABLE,
 * SERVER_FOREIGN, or SERVER_FAILED with @error (a newer schema: its
 * KT_ERROR_USAGE). */
static ServerState
checked (MYSQL *conn, gboolean record, const char *server, const char *description,
         GError **error)
{
  g_autofree char *seen = NULL;

  if (connect_check == NULL)
    return SERVER_USABLE;
  if (!connect_check (conn, description, &seen, error))
    return SERVER_FAILED;
  return identity_compare (seen, record, server, description, error);
}

/* The process's first database, found on a server after the first of the
 * list was passed over: nothing tells whether that one is another
 * database's (sql/HA.md, "What it cannot tell"), so it is said, once. */
static void
first_elsewhere (const char *server, const char *description)
{
  g_autoptr(KtLogEvent) e = kt_log_event_new ("db-identity");

  kt_log_event_string (e, "server", server);
  kt_log_event_string (e, "identity", kt_db_identity ());
  kt_log_event_emit (e, G_LOG_LEVEL_WARNING, "MySQL: this process works in the database of "
                     "%s (identity %s), found after the first server of the list did not "
                     "take it: from now on every server must hold that identity; if the "
                     "first holds another database, stop ktally", description,
                     kt_db_identity ());
}

/* The @i-th server of @db for kt_db_open(): connected and looked at, and
 * when about to be taken (usable; read-only and alone, for a reader)
 * checked for which database it is. The connection in *@conn unless it
 * failed; @error set when SERVER_FAILED or SERVER_FOREIGN, or when the
 * schema is newer than this ktally (KT_ERROR_USAGE: the database's, not
 * this server's: the caller stops at once). */
static ServerState
try_server (KtDbConfig *db, guint i, guint flags, const char *server, const char *description,
            unsigned int connect_timeout, unsigned int io_timeout, unsigned int *refused,
            MYSQL **conn, GError **error)
{
  gboolean alone_reader = (flags & KT_DB_OPEN_READ_ONLY_OK) != 0 && kt_db_hosts (db) == 1;
  ServerState state;

  *conn = open_host (db, i, description, connect_timeout, io_timeout, refused, error);
  state = *conn != NULL ? server_state (*conn, description, error) : SERVER_FAILED;
  /* Which database it is, before anyone uses it: a server that holds
   * another is refused as one that refuses the password is. Only a server
   * about to be taken: a read-only one passed over (an old primary a
   * failover fenced, which may hold what the new one lost, its creation
   * included) must not make its identity the process's. */
  if (state == SERVER_USABLE || (state == SERVER_READ_ONLY && alone_reader))
    {
      ServerState which = checked (*conn, (flags & KT_DB_OPEN_BESIDE) == 0, server,
                                   description, error);

      if (which != SERVER_USABLE)
        state = which;
    }
  return state;
}

/* A reader's read-only server, taken when no writable one answered: checked
 * now (NULL when it is another database, its reason added to @why_not; NULL
 * with @error on a newer schema), and said. */
static MYSQL *
take_fallback (KtDbConfig *db, MYSQL *fallback, guint at, guint flags, guint *index,
               GString *why_not, GError **error)
{
  g_autoptr(MYSQL) conn = fallback;
  g_autofree char *server = kt_db_host_text (db, at);
  g_autofree char *description = describe_with (db, server);
  g_autoptr(GError) local = NULL;
  g_autoptr(KtLogEvent) e = NULL;

  if (checked (conn, (flags & KT_DB_OPEN_BESIDE) == 0, server, description, &local)
      != SERVER_USABLE)
    {
      if (g_error_matches (local, KT_ERROR, KT_ERROR_USAGE))
        g_propagate_error (error, g_steal_pointer (&local));
      else
        g_string_append_printf (why_not, "%s%s", why_not->len > 0 ? "; " : "", local->message);
      return NULL;
    }
  e = kt_log_event_new ("db-read-only");
  kt_log_event_string (e, "server", server);
  kt_log_event_emit (e, G_LOG_LEVEL_MESSAGE, "MySQL: no writable server in the list: "
                     "reading %s, which is read-only", server);
  if (index != NULL)
    *index = at;
  return g_steal_pointer (&conn);
}

MYSQL *
kt_db_open (KtDbConfig *db, guint flags, guint *index, unsigned int connect_timeout,
            unsigned int io_timeout, GError **error)
{
  gboolean read_only_ok = (flags & KT_DB_OPEN_READ_ONLY_OK) != 0;
  g_autoptr(GString) why_not = g_string_new (NULL);
  g_autoptr(GArray) skips = g_array_new (FALSE, TRUE, sizeof (Skip));
  MYSQL *fallback = NULL;  /* the first read-only server, for a reader */
  guint fallback_at = 0;
  KtErrorCode code = KT_ERROR_FATAL;
  guint n = kt_db_hosts (db);
  gboolean had_identity = kt_db_identity () != NULL;

  g_array_set_clear_func (skips, skip_clear);
  for (guint i = 0; i < n; i++)
    {
      g_autofree char *server = kt_db_host_text (db, i);
      g_autofree char *description = describe_with (db, server);
      g_autoptr(GError) local = NULL;
      g_autoptr(MYSQL) conn = NULL;
      unsigned int refused = 0;
      ServerState state = try_server (db, i, flags, server, description, connect_timeout,
                                      io_timeout, &refused, &conn, &local);

      if (g_error_matches (local, KT_ERROR, KT_ERROR_USAGE))
        {
          g_clear_pointer (&fallback, mysql_close);
          g_propagate_error (error, g_steal_pointer (&local));
          return NULL;
        }
      if (state == SERVER_USABLE || (state == SERVER_READ_ONLY && read_only_ok && n == 1))
        {
          g_clear_pointer (&fallback, mysql_close);
          skips_said (skips, TRUE, TRUE);
          if (!had_identity && i > 0 && kt_db_identity () != NULL)
            first_elsewhere (server, description);
          if (index != NULL)
            *index = i;
          return g_steal_pointer (&conn);
        }
      /* A reader takes a read-only server only when no writable one is
       * there: a replica may lag, an old primary may hold what the
       * failover lost. */
      if (state == SERVER_READ_ONLY && read_only_ok)
        {
          if (fallback == NULL)
            {
              fallback = g_steal_pointer (&conn);
              fallback_at = i;
            }
          continue;
        }
      if (n == 1)
        {
          if (state != SERVER_FAILED && state != SERVER_FOREIGN)
            {
              skip_logged (description, server, state, 0, NULL, TRUE);
              g_set_error (error, KT_ERROR, KT_ERROR_TRANSIENT, "cannot use MySQL at %s: it "
                           "is %s", description, server_why[state]);
            }
          else
            g_propagate_error (error, g_steal_pointer (&local));
          return NULL;
        }
      /* Refused (access denied, another database) is this server's answer,
       * not the list's: the next server may take us (users differ between
       * servers while a change replicates, or by mistake), and only when
       * every one refused for good is it fatal, as with one server. */
      g_array_append_val (skips, ((Skip) { g_strdup (description), g_strdup (server), state,
                                           refused,
                                           g_strdup (local != NULL ? local->message : NULL) }));
      /* One server that may come back (or be promoted) makes it worth
       * another try. */
      if ((state != SERVER_FAILED && state != SERVER_FOREIGN) || local->code != KT_ERROR_FATAL)
        code = KT_ERROR_TRANSIENT;
      g_string_append_printf (why_not, "%s%s: %s", why_not->len > 0 ? "; " : "", server,
                              state != SERVER_FAILED && state != SERVER_FOREIGN
                              ? server_why[state] : local->message);
    }
  if (fallback != NULL)
    {
      GError *local = NULL;
      MYSQL *taken;

      skips_said (skips, TRUE, TRUE);
      taken = take_fallback (db, fallback, fallback_at, flags, index, why_not, &local);
      if (taken != NULL || local != NULL)
        {
          g_propagate_error (error, local);
          return taken;
        }
    }
  else
    skips_said (skips, code == KT_ERROR_TRANSIENT, FALSE);
  {
    g_autofree char *all = kt_db_describe (db);
    g_set_error (error, KT_ERROR, code, "no usable MySQL server for %s: %s", all,
                 why_not->str);
  }
  return NULL;
}

gboolean
kt_db_exec (MYSQL *conn, const char *description, const char *sql, const char *doing,
            GError **error)
{
  g_autofree char *why = NULL;

  if (mysql_real_query (conn, sql, strlen (sql)) == 0)
    return TRUE;
  why = error_text (conn);
  g_set_error (error, KT_ERROR, kt_db_error_code (conn), "%s on %s: %s", doing,
               description, why);
  return FALSE;
}

MYSQL_RES *
kt_db_select (MYSQL *conn, const char *description, const char *sql, const char *doing,
              GError **error)
{
  MYSQL_RES *res;

  if (!kt_db_exec (conn, description, sql, doing, error))
    return NULL;
  res = mysql_store_result (conn);
  if (res == NULL)
    {
      g_autofree char *why = error_text (conn);
      g_set_error (error, KT_ERROR, kt_db_error_code (conn), "%s on %s: %s", doing,
                   description, why);
    }
  return res;
}

void
kt_db_append_quoted (MYSQL *conn, GString *out, const char *s)
{
  gsize len = strlen (s), at;

  g_string_append_c (out, '\'');
  at = out->len;
  g_string_set_size (out, at + 2 * len + 1);
  g_string_set_size (out, at + mysql_real_escape_string (conn, out->str + at, s, len));
  g_string_append_c (out, '\'');
}

void
kt_db_append_identifier (GString *out, const char *name)
{
  g_string_append_c (out, '`');
  for (const char *p = name; *p != '\0'; p++)
    {
      if (*p == '`')
        g_string_append_c (out, '`');
      g_string_append_c (out, *p);
    }
  g_string_append_c (out, '`');
}

void
kt_db_rollback (MYSQL *conn)
{
  (void) mysql_real_query (conn, "ROLLBACK", 8);
}

/* ---- KtDb ---------------------------------------------------------------- */

/* A migration's connection waits this long for an answer: one hour. */
#define LONG_IO_S 3600

struct _KtDb
{
  KtDbConfig config;
  char      *name;         /* every server: before the first connection */
  char     **names;        /* "user@host:port/database", one per server */
  char     **servers;      /* "host:port", one per server */
  guint      server;       /* of the connection, or of the last one */
  guint      connections;  /* opened so far */
  gboolean   read_only_ok;
  MYSQL     *conn;
};

KtDb *
kt_db_new (const KtDbConfig *config)
{
  KtDb *self = g_new0 (KtDb, 1);
  guint n = kt_db_hosts (config);

  kt_db_config_copy (&self->config, config);
  self->name = kt_db_describe (config);
  self->names = g_new0 (char *, n + 1);
  self->servers = g_new0 (char *, n + 1);
  for (guint i = 0; i < n; i++)
    {
      self->servers[i] = kt_db_host_text (config, i);
      self->names[i] = describe_with (config, self->servers[i]);
    }
  return self;
}

void
kt_db_free (KtDb *self)
{
  if (self == NULL)
    return;
  g_clear_pointer (&self->conn, mysql_close);
  kt_db_config_clear (&self->config);
  g_free (self->name);
  g_strfreev (self->names);
  g_strfreev (self->servers);
  g_free (self);
}

const char *
kt_db_name (KtDb *self)
{
  return self->connections > 0 ? self->names[self->server] : self->name;
}

const char *
kt_db_host (KtDb *self)
{
  return self->connections > 0 ? self->servers[self->server] : NULL;
}

const char *
kt_db_transport (KtDb *self)
{
  const char *info = self->conn != NULL ? mysql_get_host_info (self->conn) : NULL;
  const char *via = info != NULL ? strstr (info, " via ") : NULL;

  return via != NULL ? via + strlen (" via ") : NULL;
}

const char *
kt_db_server_version (KtDb *self)
{
  return self->conn != NULL ? mysql_get_server_info (self->conn) : NULL;
}

gboolean
kt_db_connected (KtDb *self)
{
  return self->conn != NULL;
}

guint
kt_db_connections (KtDb *self)
{
  return self->connections;
}

void
kt_db_allow_read_only (KtDb *self)
{
  self->read_only_ok = TRUE;
}

const char *
kt_db_client_version (void)
{
  return mysql_get_client_info ();
}

void
kt_db_library_init (void)
{
  mysql_library_init (0, NULL, NULL);
}

void
kt_db_library_end (void)
{
  mysql_library_end ();
}

const KtDbConfig *
kt_db_config (KtDb *self)
{
  return &self->config;
}

void
kt_db_set_credentials (KtDb *self, const KtDbConfig *from)
{
  if (self->config.password != NULL)
    memset (self->config.password, 0, strlen (self->config.password));
  g_free (self->config.password);
  g_free (self->config.password_file);
  g_free (self->config.defaults_file);
  self->config.password = g_strdup (from->password);
  self->config.password_file = g_strdup (from->password_file);
  self->config.defaults_file = g_strdup (from->defaults_file);
}

MYSQL *
kt_db_connection (KtDb *self)
{
  return self->conn;
}

/* Sets @error from the connection's last error, prefixed by what we were
 * doing. A failed connection is dropped: whatever state it had (an open
 * transaction) dies with it, and the next call reconnects. A deadlock or
 * lock wait cost only the transaction (the caller rolls back): the
 * connection is fine, and the same commit may be tried again. */
static void
set_error (KtDb *self, GError **error, const char *doing)
{
  KtErrorCode code = kt_db_error_code (self->conn);
  g_autofree char *why = error_text (self->conn);

  g_set_error (error, KT_ERROR, code, "%s on %s: %s", doing, kt_db_name (self), why);
  if (code == KT_ERROR_TRANSIENT)
    g_clear_pointer (&self->conn, mysql_close);
}

gboolean
kt_db_failed (KtDb *self, GError *local, GError **error)
{
  if (g_error_matches (local, KT_ERROR, KT_ERROR_TRANSIENT))
    g_clear_pointer (&self->conn, mysql_close);
  g_propagate_error (error, local);
  return FALSE;
}

/* A connection on another server than the last one (a failover, or the
 * first server back): one line. */
static void
moved_logged (KtDb *self, guint was)
{
  g_autoptr(KtLogEvent) e = kt_log_event_new ("db-server");

  kt_log_event_string (e, "database", self->names[self->server]);
  kt_log_event_string (e, "server", self->servers[self->server]);
  kt_log_event_string (e, "previous", self->servers[was]);
  kt_log_event_string (e, "transport", kt_db_transport (self));
  kt_log_event_emit (e, G_LOG_LEVEL_MESSAGE, "MySQL: now on %s over %s (was %s)",
                     self->names[self->server], kt_db_transport (self), self->servers[was]);
}

gboolean
kt_db_connect (KtDb *self, GError **error)
{
  guint was = self->server;

  if (self->conn != NULL)
    return TRUE;
  self->conn = kt_db_open (&self->config, self->read_only_ok ? KT_DB_OPEN_READ_ONLY_OK : 0,
                           &self->server, 5, 60, error);
  if (self->conn == NULL)
    return FALSE;
  if (self->connections++ > 0 && self->server != was)
    moved_logged (self, was);
  if (mysql_query (self->conn, "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED") != 0)
    {
      set_error (self, error, "cannot set the isolation level");
      g_clear_pointer (&self->conn, mysql_close);
      return FALSE;
    }
  /* kt_db_open() checked, at this connect as at every one, the schema's
   * version (a database a newer ktally migrated meanwhile is not written by
   * this one) and which database it is. */
  return TRUE;
}

gboolean
kt_db_identity_check (KtDb *self, GError **error)
{
  GError *local = NULL;

  if (self->conn == NULL)
    return kt_db_connect (self, error);
  switch (checked (self->conn, TRUE, self->servers[self->server], kt_db_name (self), &local))
    {
    case SERVER_USABLE:
      return TRUE;
    case SERVER_FOREIGN:
      g_clear_pointer (&self->conn, mysql_close);
      g_propagate_error (error, local);
      return FALSE;
    default:
      return kt_db_failed (self, local, error);
    }
}

gboolean
kt_db_run (KtDb *self, const char *sql, const char *doing, GError **error)
{
  if (mysql_real_query (self->conn, sql, strlen (sql)) == 0)
    return TRUE;
  set_error (self, error, doing);
  return FALSE;
}

gboolean
kt_db_run_new_rows (KtDb *self, const char *sql, const char *doing, GError **error)
{
  if (mysql_real_query (self->conn, sql, strlen (sql)) == 0)
    return TRUE;
  if (mysql_errno (self->conn) != ER_DUP_ENTRY)
    {
      set_error (self, error, doing);
      return FALSE;
    }
  g_set_error (error, KT_ERROR, KT_ERROR_CONFLICT,
               "%s on %s: another writer created the same row at the same time (%s)",
               doing, kt_db_name (self), mysql_error (self->conn));
  return FALSE;
}

MYSQL_RES *
kt_db_rows (KtDb *self, const char *sql, const char *doing, GError **error)
{
  MYSQL_RES *res;

  if (!kt_db_run (self, sql, doing, error))
    return NULL;
  res = mysql_store_result (self->conn);
  if (res == NULL)
    set_error (self, error, doing);
  return res;
}

void
kt_db_quote (KtDb *self, GString *out, const char *s)
{
  kt_db_append_quoted (self->conn, out, s);
}

gboolean
kt_db_begin (KtDb *self, GError **error)
{
  return kt_db_connect (self, error)
         && kt_db_run (self, "START TRANSACTION", "cannot start a transaction", error);
}

void
kt_db_abort (KtDb *self)
{
  /* Best effort: if even this fails, the connection is gone, and a
   * transaction dies with its connection. */
  if (self->conn != NULL && mysql_real_query (self->conn, "ROLLBACK", 8) != 0)
    g_clear_pointer (&self->conn, mysql_close);
}

gboolean
kt_db_finish (KtDb *self, KtCommitResult *result, GError **error)
{
  unsigned int code;

  if (mysql_real_query (self->conn, "COMMIT", 6) == 0)
    {
      *result = KT_COMMIT_DONE;
      return TRUE;
    }
  code = mysql_errno (self->conn);
  /* Unknown: the connection died with the answer, or a Galera node left
   * the primary component while it replicated the transaction (1047, or
   * 1180 for a failed replication): the others may have committed it. A
   * certification conflict (1213) is known: no node committed it. */
  *result = code == CR_SERVER_LOST || code == CR_SERVER_GONE_ERROR
            || code == CR_SERVER_LOST_EXTENDED || code == ER_CONNECTION_KILLED
            || code == ER_UNKNOWN_COM_ERROR || code == ER_ERROR_DURING_COMMIT
            ? KT_COMMIT_UNKNOWN : KT_COMMIT_FAILED;
  set_error (self, error, "cannot commit");
  if (*result == KT_COMMIT_FAILED)
    kt_db_abort (self);
  return FALSE;
}

gboolean
kt_db_snapshot (KtDb *self, GError **error)
{
  return kt_db_connect (self, error)
         && kt_db_run (self, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ",
                       "cannot set the isolation level", error)
         && kt_db_run (self, "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY",
                       "cannot start a transaction", error);
}

gboolean
kt_db_table_type (KtDb *self, const char *table, char **type, GError **error)
{
  g_autoptr(GString) sql = g_string_new ("SELECT table_type FROM information_schema.tables "
                                         "WHERE table_schema = DATABASE() AND table_name = ");
  g_autoptr(MYSQL_RES) res = NULL;
  MYSQL_ROW row;

  if (!kt_db_connect (self, error))
    return FALSE;
  kt_db_quote (self, sql, table);
  res = kt_db_rows (self, sql->str, "cannot look for the tables", error);
  if (res == NULL)
    return FALSE;
  row = mysql_fetch_row (res);
  *type = row != NULL ? g_strdup (row[0]) : NULL;
  return TRUE;
}

gboolean
kt_db_has_column (KtDb *self, const char *table, const char *column, gboolean *has,
                  GError **error)
{
  g_autoptr(GString) sql = g_string_new ("SELECT 1 FROM information_schema.columns "
                                         "WHERE table_schema = DATABASE() AND table_name = ");
  g_autoptr(MYSQL_RES) res = NULL;

  if (!kt_db_connect (self, error))
    return FALSE;
  kt_db_quote (self, sql, table);
  g_string_append (sql, " AND column_name = ");
  kt_db_quote (self, sql, column);
  res = kt_db_rows (self, sql->str, "cannot look for the columns", error);
  if (res == NULL)
    return FALSE;
  *has = mysql_fetch_row (res) != NULL;
  return TRUE;
}

MYSQL *
kt_db_open_long (KtDb *self, GError **error)
{
  /* The server of the batch connection, not the first of the list: the
   * migration must change the database the job then writes. */
  unsigned int code;
  g_autoptr(MYSQL) conn = open_host (&self->config, self->server, kt_db_name (self), 5,
                                     LONG_IO_S, &code, error);

  if (conn != NULL
      && checked (conn, TRUE, self->servers[self->server], kt_db_name (self), error)
         != SERVER_USABLE)
    return NULL;
  return g_steal_pointer (&conn);
}

char **
kt_db_grants_missing (KtDb *self, GError **error)
{
  g_autoptr(MYSQL_RES) res = NULL;
  g_autoptr(GPtrArray) lines = g_ptr_array_new_with_free_func (g_free);
  MYSQL_ROW row;

  if (!kt_db_connect (self, error))
    return NULL;
  res = kt_db_rows (self, "SHOW GRANTS", "cannot read the grants", error);
  if (res == NULL)
    return NULL;
  while ((row = mysql_fetch_row (res)) != NULL)
    if (row[0] != NULL)
      g_ptr_array_add (lines, g_strdup (row[0]));
  g_ptr_array_add (lines, NULL);
  return kt_db_grants_missing_in ((const char *const *) lines->pdata, self->config.database);
}
