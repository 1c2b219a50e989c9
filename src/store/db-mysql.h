/* db-mysql.h - the store's own view of MySQL: a connection (MYSQL *) and
 * what its modules do on one. Included by the store's files only: the
 * layers above see db.h, without <mysql.h>, whose include path they do not
 * have (src/store/meson.build), so that an include of this header above
 * the store does not compile. */
#pragma once
#include <glib.h>
#include <mysql.h>
#include "db.h"

/* A connection to @db with bounded waits (seconds), no automatic
 * reconnect, and ssl-mode enforced. Its session is strict (a value that
 * does not fit is an error, never clamped) and in UTC (time_zone
 * '+00:00'), whatever the server's defaults. Access denied, unknown
 * database: KT_ERROR_FATAL; unreachable: KT_ERROR_TRANSIENT. Access denied
 * with a password file: the file is read again, and if it holds another
 * password (a rotation), that is tried once and, if it works, kept in @db.
 * Errors name the server (never the password). The caller owns the
 * connection.
 *
 * The servers of a hosts list are tried in order, each connect bounded by
 * @connect_timeout: the first that answers and is usable wins. @flags:
 * KT_DB_OPEN_*. A Galera
 * node outside the primary component (wsrep_ready OFF) is skipped, and so
 * is a read-only server (read_only ON: a replica, or an old primary that
 * a failover fenced); each skip is one log line ("db-skip"). With
 * KT_DB_OPEN_READ_ONLY_OK, the first read-only server is taken when no writable one
 * answers (a line says so, "db-read-only"), and one alone is taken. On a
 * Galera node, reads wait for every commit the cluster acknowledged
 * (wsrep_sync_wait): offsets read back are never older than a commit
 * ktally was told of.
 *
 * Every connection is checked before it is returned (kt_db_check()):
 * a newer schema stops at once (KT_ERROR_USAGE); a server whose database
 * identity is not the process's (kt_db_identity(): another database, one
 * without ktally's tables) is refused, as one that refuses the password
 * or the database: for good, but only that server, the next one is tried
 * ("db-skip", reason "another-database" or "refused"). *@index (may be
 * NULL): the server used, 0 for @db->host. None usable: KT_ERROR_TRANSIENT
 * when one of them may be later (unreachable, not ready, read-only: a
 * failover under way, or the process's own server down beside a foreign
 * one), KT_ERROR_FATAL when every one refused for good; with one server,
 * its error. */
enum
{
  KT_DB_OPEN_READ_ONLY_OK = 1 << 0,  /* a reader: a read-only server will do (above) */
  KT_DB_OPEN_BESIDE       = 1 << 1,  /* a connection beside the process's work (the
                                      * page's chart): it compares the database's
                                      * identity with the process's, but never makes
                                      * the identity it finds the process's own, so
                                      * that a page asked for while the job's server is
                                      * down cannot choose the job's database */
};
MYSQL   *kt_db_open (KtDbConfig *db, guint flags, guint *index,
                     unsigned int connect_timeout, unsigned int io_timeout,
                     GError **error);

/* kt_db_open() on the @i-th server of @db alone, unchecked (the caller
 * checks: kt_db_check()); *@code: the client library's error number. */
MYSQL   *kt_db_open_host (KtDbConfig *db, guint i, const char *description,
                          unsigned int connect_timeout, unsigned int io_timeout,
                          unsigned int *code, GError **error);

/* What the caller of a failed call on @conn does next: KT_ERROR_CONFLICT
 * (deadlock, lock wait: retry), KT_ERROR_TRANSIENT (the connection or the
 * server failed: drop it, back off) or KT_ERROR_FATAL (db-errors.c). */
KtErrorCode kt_db_error_code (MYSQL *conn);
/* The connection's error, and after a missing privilege what ktally
 * needs (README, "Running in production"). New string. */
char       *kt_db_error_text (MYSQL *conn);

/* ---- SQL on a connection (db-sql.c) ---- */

/* Runs @sql; on failure sets @error ("@doing on @description: why") with
 * kt_db_error_code(). */
gboolean  kt_db_exec   (MYSQL *conn, const char *description, const char *sql,
                        const char *doing, GError **error);

/* Runs a SELECT and keeps its whole result (NULL, with @error, on failure). */
MYSQL_RES *kt_db_select (MYSQL *conn, const char *description, const char *sql,
                         const char *doing, GError **error);

/* Appends @s to @out as a quoted, escaped SQL string literal. */
void      kt_db_append_quoted (MYSQL *conn, GString *out, const char *s);

/* Best effort: a connection that cannot even roll back is gone, and an
 * open transaction dies with it. */
void      kt_db_rollback (MYSQL *conn);

/* ---- What every new connection is checked for (db-check.c) ---- */

typedef enum
{
  KT_DB_CHECK_USABLE,
  KT_DB_CHECK_FOREIGN,  /* another database than the process's: @error says */
  KT_DB_CHECK_FAILED,   /* @error says: a newer schema (KT_ERROR_USAGE), or the reads failed */
} KtDbCheck;

/* @conn, a new connection to @server, before anyone uses it: its schema
 * not newer than this ktally's, and its database the process's (the
 * identity the first connection saw, kt_db_identity(); recorded as the
 * process's with @record when none was yet). */
KtDbCheck kt_db_check (MYSQL *conn, gboolean record, const char *server,
                       const char *description, GError **error);

/* Refuses a database whose ktally_schema records a version newer than
 * KT_SCHEMA_VERSION (KT_ERROR_USAGE: "schema version N is newer than this
 * ktally (M): upgrade ktally"). One cheap query: made at every connect. */
gboolean  kt_db_check_version (MYSQL *conn, const char *description, GError **error);
/* Sets @error for a database whose schema @version is newer than this
 * ktally's, as kt_db_check_version() says it. */
void      kt_db_check_newer_error (GError **error, const char *description, int version);

/* The database's identity (ktally_database, sql/version.sql) into
 * *@identity, a new string; NULL when it holds none (no ktally tables, or
 * a schema older than version 9). Reads only. */
gboolean  kt_db_check_identity_read (MYSQL *conn, const char *description, char **identity,
                                     GError **error);

/* ---- KtDb's connection, for the store's modules (db.c) ---- */

/* The live connection, for schema.c and identity.c calls (connect first);
 * after one of them fails, pass its error through kt_db_failed(). */
MYSQL      *kt_db_connection (KtDb *self);
gboolean    kt_db_failed (KtDb *self, GError *local, GError **error);  /* FALSE */

/* A SELECT's whole result (NULL, with @error, on failure). */
MYSQL_RES  *kt_db_rows (KtDb *self, const char *sql, const char *doing, GError **error);

/* A second connection to the same database with a read timeout of an hour,
 * for a long ALTER (a migration). The caller owns it. */
MYSQL      *kt_db_open_long (KtDb *self, GError **error);
