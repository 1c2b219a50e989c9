/* migrations.h - bringing a database of an older schema version forward to
 * KT_SCHEMA_VERSION (schema.h), and making a database ready for a job.
 *
 * Each sql/migrations/NNN-*.sql takes a database from version NNN - 1 to
 * NNN: its DDL (each statement safe to run again), then what its SQL
 * cannot say (a function of the tables the database holds), then its row
 * rewrites in one transaction with the version row. Runs on a connection
 * the caller opened with kt_db_open() and keeps owning. Failures as in
 * schema.h: KT_ERROR_TRANSIENT, KT_ERROR_USAGE (a newer schema) or
 * KT_ERROR_FATAL. */
#pragma once
#include <glib.h>
#include "db.h"
#include "schema.h"

/* One migration, as compiled in from sql/migrations/. */
typedef struct
{
  int         version;  /* the version it reaches, from version - 1 */
  const char *name;     /* the file's name without NNN- and .sql */
  const char *sql;      /* the file's text */
} KtMigration;

/* The @i-th migration in order (from 0), or NULL past the last. Static. */
const KtMigration *kt_migrations_get (guint i);

/* Whether @statement (one of kt_schema_statements()) runs in a database
 * holding @tables (name -> "BASE TABLE" or "VIEW", as kt_schema_tables()
 * gives; NULL: none): yes without a KT_SCHEMA_IF_DIRECTIVE line, else only
 * where every NAME it lists exists (as a view or a base table, for
 * NAME:view and NAME:table). *@sql is the statement after that line. */
gboolean kt_migrations_statement_applies (const char *statement, GHashTable *tables,
                                          const char **sql);

/* Told when a migration starts (@migrating TRUE: it may wait for another
 * instance's migration, then migrate, each step maybe as long as an ALTER
 * TABLE of a big table) and ends (FALSE), on the thread that migrates: a
 * service manager's start timeout must be pushed back meanwhile
 * (notify.h). */
typedef void (*KtMigrationsMigrating) (gboolean migrating, gpointer data);

/* ---- Before a migration: init-db --dry-run ------------------------------ */

/* One table a pending migration touches: a row of `init-db --dry-run`. */
typedef struct
{
  int         version;    /* the migration's (to version) */
  const char *migration;  /* its name (static) */
  char       *table;
  char       *does;       /* "alter", "create", "create view", "insert",
                           * "update", "delete", "drop", "read" (a copy's
                           * source), joined by ", " */
  gint64      rows;       /* about (InnoDB's estimate); -1: not a table now */
  gint64      bytes;      /* data and indexes; -1: not a table now */
} KtPendingTable;

/* Clears the strings of a KtPendingTable (an array's clear function). */
void     kt_pending_table_clear (gpointer row);

/* What @sql (one statement of a migration, as kt_schema_statements()
 * gives it, an IF directive line first or not) does to which table:
 * appends "does\ttable" (new strings) to @out, in the order the statement
 * names them. Tables of other databases (db.table) are left out. Pure. */
void     kt_migrations_statement_uses (const char *sql, GPtrArray *out);

/* A dry run of kt_migrations_bring_forward(), which changes nothing: the
 * database's version into *@version, and, when it is older than
 * KT_SCHEMA_VERSION, a row in @pending (KtPendingTable) for each table
 * each migration would touch, in order, with the table's size now. Which
 * statements apply follows the tables each migration before would create
 * or drop. A newer schema is refused as by kt_db_check_version(). */
gboolean kt_migrations_pending (KtDb *db, int *version, GArray *pending, GError **error);

/* What commands and kinds call: connects, refuses a view or a sequence
 * named like one of ktally's own tables (before anything is written),
 * brings the schema to KT_SCHEMA_VERSION, and makes sure the tables every
 * job shares (sql/common.sql) exist in the right shape. Its dry run:
 * kt_schema_check_ready().
 *
 * Bringing the schema forward happens under a named lock (GET_LOCK), so
 * that two starting instances never migrate at once, on a connection of
 * its own with a long read timeout (an ALTER of a big table outlasts the
 * usual 60 s, and the lock lives as long as it). A database without
 * ktally tables gets the version recorded (its tables are created
 * afterwards from the latest .sql files); an older one runs each migration
 * in order, on whatever ktally tables it holds, logging one line per
 * migration. Restart-safe: every DDL step may run again after a kill -9,
 * and the data changes commit in one transaction with the version row, so
 * a migration cut short is completed by the next call. A newer schema is
 * refused as by kt_db_check_version(). @migrating (NULL: nobody) is
 * told, with @data, when a migration starts and ends. */
gboolean kt_migrations_ready (KtDb *db, KtMigrationsMigrating migrating, gpointer data,
                              GError **error);
