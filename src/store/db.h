/* db.h - MySQL as every layer sees it: where the database is (db-uri.c),
 * a database to work in (KtDb, db.c), the privileges it needs
 * (db-grants.c), and what an error code means (db-errors.c). No MySQL type
 * here: above the store, the store's typed functions and KtDb are all there
 * is (rows: db-rows.h). The store's own modules work on a connection
 * through db-mysql.h, which only they can compile (<mysql.h> is on no
 * other layer's include path).
 *
 * Failures map to what the caller does next: a connection that failed is
 * KT_ERROR_TRANSIENT (drop it, reconnect, retry), a deadlock or lock wait
 * KT_ERROR_CONFLICT (roll back, commit again), anything else
 * KT_ERROR_FATAL. Messages name the database, never with its password. */
#pragma once
#include <glib.h>
#include "error.h"
#include "names.h"

/* One server of a hosts list. */
typedef struct
{
  char  *host;      /* a name or an address (IPv6 without its brackets) */
  guint  port;      /* 0: the client library's default */
} KtDbHost;

/* Where the database is. Strings are owned by whoever fills the struct. */
typedef struct
{
  char  *host;      /* NULL with a socket; the first of a hosts list */
  guint  port;      /* 0: the client library's default */
  KtDbHost *more_hosts;  /* the hosts after @host in --db's list, in order */
  guint  n_more_hosts;
  char  *user;
  char  *password;  /* NULL: none (MYSQL_PWD is read by the CLI) */
  char  *password_file;  /* where the password came from (read again after
                          * Access denied: a rotation), or NULL */
  char  *database;
  char  *socket;    /* unix socket path, or NULL */
  char  *defaults_file;  /* a MySQL option file ([client] group), or NULL */
  /* TLS, from the URI's ?ssl-mode=&ssl-ca=&ssl-cert=&ssl-key= */
  int    ssl_mode;  /* KtSslMode */
  char  *ssl_ca;
  char  *ssl_cert;
  char  *ssl_key;
  gboolean tls_given;  /* the URI's query named ssl-mode, ssl-ca, ssl-cert or ssl-key */
} KtDbConfig;

typedef enum
{
  KT_SSL_PREFERRED,        /* the client library's default */
  KT_SSL_DISABLED,
  KT_SSL_REQUIRED,         /* TLS or fail: never fall back to plain text */
  KT_SSL_VERIFY_CA,        /* required, and the server's certificate checked */
  KT_SSL_VERIFY_IDENTITY,  /* and its name */
} KtSslMode;

/* Parses mysql://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?socket=PATH] into
 * @db (which the caller clears with kt_db_config_clear()). HOST[:PORT] may
 * be a list, HOST[:PORT],HOST[:PORT],... (an IPv6 address in brackets):
 * the servers of one database (a Galera cluster, a primary and its
 * replicas), tried in that order. A missing password is taken from
 * MYSQL_PWD. */
gboolean  kt_db_uri_parse (const char *uri, KtDbConfig *db, GError **error);
void      kt_db_config_clear (KtDbConfig *db);

/* The first line of the password file @path, without its newline. Like
 * ssh with a private key, a file that others may read or write, or its
 * group write, is refused (the password has been seen, or can be
 * swapped); so is one its group may read, unless root owns it (as
 * PostgreSQL takes a key file: root gives the service's group read
 * access, the way Kubernetes mounts a Secret for a pod's fsGroup,
 * root:GROUP 0440); and so is an empty first line (no password):
 * KT_ERROR_USAGE naming --db-password-file. */
char     *kt_db_password_file_read (const char *path, GError **error);

/* Overwrites, in place and with the same length, the password of every
 * mysql:// URI in @s: exactly where GLib's GUri finds it in a well-formed
 * URI, and everything from the first ':' after the user to the last '@'
 * in one that is not (a password may hold an unencoded '@', '/' or a
 * space: too much blanked is harmless). */
void      kt_db_uri_scrub (char *s);

/* The substrings of @word that kt_db_uri_scrub() would blank (each span
 * it might consider a password), for blanking them in a message that
 * quotes @word; NULL-terminated, empty when @word has no mysql:// URI
 * with a password. */
char    **kt_db_uri_secrets (const char *word);

/* A deep copy of @from into @to (cleared with kt_db_config_clear()). */
void      kt_db_config_copy (KtDbConfig *to, const KtDbConfig *from);

/* "user@host:port/database" (or "user@socket/database"; a list
 * "user@host:port,host:port/database"), for messages: never the password.
 * New string. */
char     *kt_db_describe (const KtDbConfig *db);
/* The same with @servers for the host part (one server of the list). */
char     *kt_db_describe_server (const KtDbConfig *db, const char *servers);

/* Which database this process works in: the identity the first of its
 * connections saw (kt_db_open(), of any KtDb or thread, but for those
 * opened KT_DB_OPEN_BESIDE), from then on the identity every connection
 * must see; NULL until one was seen. Static, for messages. */
const char *kt_db_identity (void);

/* Forgets the process's identity: a test's, between two databases. */
void     kt_db_identity_forget (void);

/* How many servers @db names (1 with a socket), and the @i-th of them as
 * "host:port" ("[v6]:port", or the socket's path). New string. */
guint     kt_db_hosts (const KtDbConfig *db);
char     *kt_db_host_text (const KtDbConfig *db, guint i);
/* The @i-th server of @db (0: @db->host; with a socket, host NULL). */
KtDbHost  kt_db_host_at (const KtDbConfig *db, guint i);

/* Whether the @i-th server is reached over a Unix socket: ?socket=, or
 * "localhost" without a port (the client library's default socket, which
 * kt_db_host_text() names; with a port, localhost is TCP). */
gboolean  kt_db_host_by_socket (const KtDbConfig *db, guint i);

/* Table and database names: names.h (kt_is_identifier()). */

/* Appends @name to @out as a quoted identifier (a table or a column):
 * between backticks, a backtick inside doubled, so that no name can end
 * the identifier early. The one way ktally writes a name it did not
 * spell itself into SQL; a name is still checked (kt_is_identifier())
 * where it is given, this only keeps the text what it says. */
void      kt_db_append_identifier (GString *out, const char *name);

/* The privileges ktally needs on its database (README, "Running in
 * production"), as SHOW GRANTS spells them; NULL-terminated. */
extern const char *const kt_db_grants[];

/* Which of kt_db_grants the SHOW GRANTS @lines do not give on @database:
 * globally (*.*) or on the database, by name or by a pattern (`logs\_%`);
 * ALL PRIVILEGES gives all. Grants on tables or columns only, and those of
 * roles not enabled, do not count. NULL-terminated, empty when all are
 * held. */
char    **kt_db_grants_missing_in (const char *const *lines, const char *database);

/* Whether a client or server error code means the connection failed (or a
 * lock conflict): worth another try. */
gboolean  kt_db_is_transient (unsigned int code);

/* Whether a connection failed with @code was refused for who we are:
 * access denied (a wrong password, an unknown user). That server will say
 * the same again ("db-skip", reason "refused"); the others of a hosts list
 * are still tried (users differ between servers while a change
 * replicates, or by mistake), and a list is given up only when every
 * server refused for good (kt_db_open()). */
gboolean  kt_db_refused (unsigned int code);

/* ---- A database a module works in: one connection, opened on demand ---- */

typedef struct _KtDb KtDb;

typedef enum
{
  KT_COMMIT_DONE,     /* everything is in */
  KT_COMMIT_FENCED,   /* another writer moved an offset (or a covered set) first: rolled back */
  KT_COMMIT_FAILED,   /* failed before COMMIT: nothing was written */
  KT_COMMIT_UNKNOWN,  /* the connection died during COMMIT: read it back */
} KtCommitResult;

/* Copies @config; connects on the first call that needs it. Every call
 * drops the connection after a failure of it (KT_ERROR_TRANSIENT), so the
 * next one reconnects: an open transaction dies with its connection. */
KtDb       *kt_db_new  (const KtDbConfig *config);
void        kt_db_free (KtDb *self);  /* NULL is fine */

/* "user@host:port/database", for messages: the server of the connection
 * (or of the last one); before the first, every server of the list. */
const char *kt_db_name (KtDb *self);

/* The server in use (or last used) as "host:port", NULL before the first
 * connection; and how many connections were opened so far: a new one
 * after a failure may be on another server (a failover), where what this
 * process checked or recorded once must be checked again. */
const char *kt_db_host (KtDb *self);
guint       kt_db_connections (KtDb *self);

/* How the live connection reaches its server, as the client library says:
 * "TCP/IP" or "UNIX socket"; NULL when not connected. Static. */
const char *kt_db_transport (KtDb *self);
/* The server's version as it says it ("10.11.6-MariaDB"), NULL when not
 * connected. Owned by the connection. */
const char *kt_db_server_version (KtDb *self);
/* Whether a connection is open (a failure of it dropped it). */
gboolean    kt_db_connected (KtDb *self);

/* A command that only reads (status, jobs, audit): a read-only server
 * will do when no writable one answers (see kt_db_open()). */
void        kt_db_allow_read_only (KtDb *self);

/* MariaDB Connector/C's version, "3.3.8". */
const char *kt_db_client_version (void);
/* The client library's global set-up and tear-down: init before any
 * thread (it is not thread-safe the first time; again later it does
 * nothing), end once the last connection is closed. */
void        kt_db_library_init (void);
void        kt_db_library_end (void);
const KtDbConfig *kt_db_config (KtDb *self);

/* After the schema (and with it the database's identity) was created or
 * migrated on the live connection: the identity read again and recorded
 * as the process's, or compared with it (kt_db_open()). A connection that
 * is not there is opened (which checks). A foreign database:
 * KT_ERROR_FATAL, the connection dropped. */
gboolean    kt_db_identity_check (KtDb *self, GError **error);

/* Connects unless connected: a session at READ COMMITTED (the fenced
 * UPDATEs read the latest committed offset either way; this spares InnoDB's
 * gap locks), refusing a database a newer ktally migrated. Access denied,
 * unknown database: KT_ERROR_FATAL; unreachable: KT_ERROR_TRANSIENT. */
gboolean    kt_db_connect (KtDb *self, GError **error);

/* From the next connection on, the password, its file and the option
 * file of @from (a reload); where the database is stays as it was. */
void        kt_db_set_credentials (KtDb *self, const KtDbConfig *from);

/* Runs @sql (connect first). */
gboolean    kt_db_run (KtDb *self, const char *sql, const char *doing, GError **error);

/* An INSERT of rows this transaction found absent when it looked, under
 * locks that cannot cover a row that does not exist yet: a duplicate key
 * means another writer created the row since, so this transaction decided
 * on a stale view: KT_ERROR_CONFLICT (roll back, commit again, and then see
 * the row), never a failure. */
gboolean    kt_db_run_new_rows (KtDb *self, const char *sql, const char *doing,
                                GError **error);

/* Appends @s as a quoted, escaped literal (connect first). */
void        kt_db_quote (KtDb *self, GString *out, const char *s);

/* A transaction: begin, and either finish or abort. kt_db_finish() sends
 * COMMIT: if its answer is lost with the connection, the server may have
 * committed or not: *@result is UNKNOWN, and the caller reads back what it
 * wrote (its offsets), never guesses. */
gboolean    kt_db_begin  (KtDb *self, GError **error);
gboolean    kt_db_finish (KtDb *self, KtCommitResult *result, GError **error);
void        kt_db_abort  (KtDb *self);

/* A read-only REPEATABLE READ transaction WITH CONSISTENT SNAPSHOT: every
 * read until kt_db_abort() sees one instant (ktally audit on live jobs). */
gboolean    kt_db_snapshot (KtDb *self, GError **error);

/* The type of @table: "BASE TABLE", "VIEW" (MariaDB also says "SEQUENCE"
 * and "SYSTEM VERSIONED"), or NULL when absent. */
gboolean    kt_db_table_type (KtDb *self, const char *table, char **type, GError **error);

/* Whether @table has a column @column (FALSE when the table is absent):
 * for reads that must work on an older schema, which the managing
 * commands' dry runs and `status` read as it is. */
gboolean    kt_db_has_column (KtDb *self, const char *table, const char *column,
                              gboolean *has, GError **error);

/* kt_db_grants_missing_in() of the connected user's SHOW GRANTS, on its
 * database (connects first). NULL with @error when the server cannot
 * say. */
char      **kt_db_grants_missing (KtDb *self, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (KtDb, kt_db_free)
