/* schema-mysql.h - the schema on a connection of the store's own
 * (db-mysql.h): what the schema's and the migrations' modules share. The
 * layers above see schema.h, with KtDb only. */
#pragma once
#include <glib.h>
#include "db-mysql.h"
#include "schema.h"

/* The database's schema version into *@version: 0 when it holds no ktally
 * table at all, 1 when it holds ktally tables but no ktally_schema (ktally
 * before schema versions kept none), else the highest version ktally_schema
 * records. */
gboolean kt_schema_version (MYSQL *conn, const char *description, int *version,
                            GError **error);

/* Every table and view of the database: a new table of name -> "BASE
 * TABLE" or "VIEW"; NULL with @error. */
GHashTable *kt_schema_tables (MYSQL *conn, const char *description, GError **error);

/* kt_schema_version() of a database that holds @tables (kt_schema_tables()). */
gboolean kt_schema_version_of (MYSQL *conn, const char *description, GHashTable *tables,
                               int *version, GError **error);

/* Draws the database's identity and records it, unless one is there
 * (INSERT IGNORE: of two instances creating a schema at once, the first
 * wins). Inside the caller's transaction, where there is one: the one that
 * records the schema's version. */
gboolean kt_schema_identity_create (MYSQL *conn, const char *description, GError **error);

/* For the commands that only read (status, audit); alters nothing. A
 * newer schema is refused, one older than KT_SCHEMA_READABLE too
 * (KT_ERROR_USAGE: run `ktally init-db`); an older readable one is read
 * as it is, and one log line says what brings it forward. */
gboolean kt_schema_check_read_only (MYSQL *conn, const char *description, GError **error);

/* Whether every table and view that @tables' .sql file creates exists.
 * DDL commits statement by statement, so a kill -9 while a schema was
 * being created leaves only its first tables: one proves nothing. */
gboolean kt_schema_complete (MYSQL *conn, const char *description, KtTables tables,
                             gboolean *complete, GError **error);

/* Creates whatever @tables' .sql file creates and is absent (every
 * statement is CREATE ... IF NOT EXISTS). */
gboolean kt_schema_create (MYSQL *conn, const char *description, KtTables tables,
                           GError **error);

/* Whether every table @tables' .sql file declares, where it exists, is a
 * table with the columns ktally writes, of the same types, and the same
 * primary key: a view or a sequence of its name, a table of another shape
 * (another program's, an older hand-made one) is refused with
 * KT_ERROR_USAGE naming the table and the column, before anything is
 * written to it. Extra columns are allowed. */
gboolean kt_schema_check_shape (MYSQL *conn, const char *description, KtTables tables,
                                GError **error);
