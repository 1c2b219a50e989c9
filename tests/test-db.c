/* test-db.c - --db's hosts list (db.c): parsing, errors, what messages
 * and the config file say of it. No MySQL: tests/integration/2*-ha-*.sh
 * connect to the servers of a list. */
#include <string.h>
#include "db.h"

#define PW "s3cr3t-pw"

typedef struct
{
  const char *path;
  const char *uri;
  const char *describe;       /* kt_db_describe() */
  const char *servers[5];     /* kt_db_host_text(), in order */
  const char *host;           /* the first server */
  guint       port;
} ListCase;

static const ListCase list_cases[] = {
  { "/db/hosts/three", "mysql://kt:" PW "@127.0.0.1:3306,127.0.0.1:3307,127.0.0.1:3308/logs",
    "kt@127.0.0.1:3306,127.0.0.1:3307,127.0.0.1:3308/logs",
    { "127.0.0.1:3306", "127.0.0.1:3307", "127.0.0.1:3308", NULL }, "127.0.0.1", 3306 },
  { "/db/hosts/default-ports", "mysql://kt@db1,db2.example.com,db-3_a/logs",
    "kt@db1:3306,db2.example.com:3306,db-3_a:3306/logs",
    { "db1:3306", "db2.example.com:3306", "db-3_a:3306", NULL }, "db1", 0 },
  { "/db/hosts/ipv6", "mysql://kt@[::1]:3307,[fe80::2],[2001:db8::7]:3309/logs",
    "kt@[::1]:3307,[fe80::2]:3306,[2001:db8::7]:3309/logs",
    { "[::1]:3307", "[fe80::2]:3306", "[2001:db8::7]:3309", NULL }, "::1", 3307 },
  { "/db/hosts/one", "mysql://kt@h:3310/logs", "kt@h:3310/logs", { "h:3310", NULL }, "h",
    3310 },
  /* A ',' in the password is not a list's: the servers follow the '@'. */
  { "/db/hosts/comma-in-password", "mysql://kt:p,w@h1,h2:3307/logs?ssl-mode=required",
    "kt@h1:3306,h2:3307/logs", { "h1:3306", "h2:3307", NULL }, "h1", 0 },
  { "/db/hosts/socket", "mysql://root@/logs?socket=/run/m.sock", "root@/run/m.sock/logs",
    { "/run/m.sock", NULL }, NULL, 0 },
  /* localhost with a port is TCP to that port: two ports, two servers
   * (the client library took both for its default socket). Without a
   * port, it is that socket, and named so. */
  { "/db/hosts/localhost-ports", "mysql://kt@localhost:3307,localhost:3308/logs",
    "kt@localhost:3307,localhost:3308/logs", { "localhost:3307", "localhost:3308", NULL },
    "localhost", 3307 },
  { "/db/hosts/localhost-socket", "mysql://kt@localhost,localhost:3308/logs",
    "kt@" MYSQL_UNIX_ADDR ",localhost:3308/logs", { MYSQL_UNIX_ADDR, "localhost:3308", NULL },
    "localhost", 0 },
};

static void
test_list (gconstpointer data)
{
  const ListCase *c = data;
  g_autoptr(GError) error = NULL;
  g_autofree char *describe = NULL;
  KtDbConfig db, copy;
  guint n = g_strv_length ((char **) c->servers);

  g_unsetenv ("MYSQL_PWD");
  g_unsetenv ("MYSQL_UNIX_PORT");
  g_assert_true (kt_db_uri_parse (c->uri, &db, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (db.host, ==, c->host);
  g_assert_cmpuint (db.port, ==, c->port);
  g_assert_cmpstr (db.database, ==, "logs");
  g_assert_cmpuint (kt_db_hosts (&db), ==, n);
  kt_db_config_copy (&copy, &db);
  kt_db_config_clear (&db);
  g_assert_null (db.more_hosts);
  g_assert_cmpuint (db.n_more_hosts, ==, 0);
  /* The copy owns its own list. */
  describe = kt_db_describe (&copy);
  g_assert_cmpstr (describe, ==, c->describe);
  g_assert_null (strstr (describe, PW));
  for (guint i = 0; i < n; i++)
    {
      g_autofree char *one = kt_db_host_text (&copy, i);
      g_assert_cmpstr (one, ==, c->servers[i]);
      g_assert_cmpint (kt_db_host_by_socket (&copy, i), ==, c->servers[i][0] == '/');
    }
  kt_db_config_clear (&copy);
}

typedef struct
{
  const char *path;
  const char *uri;
  const char *needle;  /* in the message */
} BadCase;

/* Each carries the password, which must not show in the message. */
static const BadCase bad_cases[] = {
  { "/db/hosts/error/empty-middle", "mysql://kt:" PW "@h1,,h3/logs", "server 2 of the list is empty" },
  { "/db/hosts/error/empty-last", "mysql://kt:" PW "@h1,/logs", "server 2 of the list is empty" },
  { "/db/hosts/error/empty-first", "mysql://kt:" PW "@,h2/logs", "server 1 of the list is empty" },
  { "/db/hosts/error/port-zero", "mysql://kt:" PW "@h1,h2:0/logs", "server 2 of the list, 'h2:0': the port" },
  { "/db/hosts/error/port-too-big", "mysql://kt:" PW "@h1,h2:65536/logs", "the port must be a number" },
  { "/db/hosts/error/port-word", "mysql://kt:" PW "@h1,h2,h3:x/logs", "server 3 of the list, 'h3:x'" },
  { "/db/hosts/error/port-empty", "mysql://kt:" PW "@h1,h2:/logs", "the port must be a number" },
  { "/db/hosts/error/space", "mysql://kt:" PW "@h1,h%202/logs", "is not HOST[:PORT]" },
  { "/db/hosts/error/ipv6-unclosed", "mysql://kt:" PW "@h1,[::1/logs", "is not HOST[:PORT]" },
  { "/db/hosts/error/ipv6-not-hex", "mysql://kt:" PW "@h1,[zz::1]/logs", "is not HOST[:PORT]" },
  { "/db/hosts/error/ipv6-empty", "mysql://kt:" PW "@h1,[]:3306/logs", "is not HOST[:PORT]" },
  { "/db/hosts/error/ipv6-unbracketed", "mysql://kt:" PW "@h1,::1/logs", "is not HOST[:PORT]" },
  { "/db/hosts/error/after-port", "mysql://kt:" PW "@h1,h2:3306x/logs", "the port must be a number" },
  { "/db/hosts/error/first-bad-port", "mysql://kt:" PW "@h1:x,h2/logs", "--db: expected mysql://" },
  { "/db/hosts/error/socket", "mysql://kt:" PW "@h1,h2/logs?socket=/run/m.sock",
    "a socket is one local server" },
  { "/db/hosts/error/too-many",
    "mysql://kt:" PW "@a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q/logs", "more than 16 servers" },
  /* Checked as for one server. */
  { "/db/hosts/error/no-database", "mysql://kt:" PW "@h1,h2/", "no database name" },
  { "/db/hosts/error/two-at", "mysql://kt:p@" PW "@h1,h2/logs", "more than one '@'" },
};

static void
test_bad (gconstpointer data)
{
  const BadCase *c = data;
  g_autoptr(GError) error = NULL;
  KtDbConfig db;

  g_unsetenv ("MYSQL_PWD");
  g_assert_false (kt_db_uri_parse (c->uri, &db, &error));
  g_assert_error (error, KT_ERROR, KT_ERROR_USAGE);
  g_test_message ("message: %s", error->message);
  g_assert_true (g_str_has_prefix (error->message, "--db"));
  g_assert_nonnull (strstr (error->message, c->needle));
  g_assert_null (strstr (error->message, PW));
  kt_db_config_clear (&db);
}

/* The password of a list's URI is blanked in messages as any other's. */
static void
test_scrub (void)
{
  char text[] = "ktally: --db mysql://kt:" PW "@h1:3306,h2:3307/logs: refused";
  g_auto(GStrv) secrets = kt_db_uri_secrets ("mysql://kt:" PW "@h1:3306,h2:3307/logs");

  kt_db_uri_scrub (text);
  g_assert_null (strstr (text, PW));
  g_assert_nonnull (strstr (text, "@h1:3306,h2:3307/logs: refused"));
  g_assert_nonnull (secrets[0]);
  g_assert_nonnull (strstr (secrets[0], PW));
}

/* Access denied is every server's answer; a server down, a certificate
 * refused or a lock conflict is not. */
static void
test_refused (void)
{
  g_assert_true (kt_db_refused (1045));   /* ER_ACCESS_DENIED_ERROR */
  g_assert_true (kt_db_refused (1698));   /* ER_ACCESS_DENIED_NO_PASSWORD_ERROR */
  g_assert_false (kt_db_refused (2003));  /* CR_CONN_HOST_ERROR: down */
  g_assert_false (kt_db_refused (2026));  /* CR_SSL_CONNECTION_ERROR */
  g_assert_false (kt_db_refused (1044));  /* ER_DBACCESS_DENIED_ERROR: a grant */
  g_assert_false (kt_db_refused (0));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (list_cases); i++)
    g_test_add_data_func (list_cases[i].path, &list_cases[i], test_list);
  for (gsize i = 0; i < G_N_ELEMENTS (bad_cases); i++)
    g_test_add_data_func (bad_cases[i].path, &bad_cases[i], test_bad);
  g_test_add_func ("/db/hosts/scrub", test_scrub);
  g_test_add_func ("/db/refused", test_refused);
  return g_test_run ();
}
