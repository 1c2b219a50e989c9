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
#include <mysql.h>
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

/* Brings the database to KT_SCHEMA_VERSION, under a named lock
 * (GET_LOCK) so that two starting instances never migrate at once. A
 * database without ktally tables gets the version recorded (its tables are
 * created afterwards from the latest .sql files); an older one runs each
 * migration in order, on whatever ktally tables it holds, logging one line
 * per migration. Restart-safe: every DDL step may run again after a kill
 * -9, and the data changes commit in one transaction with the version row,
 * so a migration cut short is completed by the next call. A newer schema
 * is refused as by kt_schema_refuse_newer(). Migrations may run for a long
 * time on big tables: give @conn a generous read timeout. */
gboolean kt_migrations_bring_forward (MYSQL *conn, const char *description, GError **error);

/* For a KtDb (db.h), what commands and kinds call: connects, refuses a
 * view or a sequence named like one of ktally's own tables (before
 * anything is written), brings the schema to KT_SCHEMA_VERSION (on a
 * connection of its own with a long read timeout: an ALTER of a big table
 * outlasts the usual 60 s, and the named lock lives as long as it), and
 * makes sure the tables every job shares (sql/common.sql) exist in the
 * right shape. Its dry run: kt_schema_check_ready(). */
gboolean kt_migrations_ready (KtDb *db, GError **error);
