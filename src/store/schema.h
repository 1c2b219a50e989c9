/* schema.h - ktally's tables: creating them, their shapes, their version.
 *
 * sql/common.sql, counts.sql, idempotent.sql and ledger.sql always describe the latest
 * schema (KT_SCHEMA_VERSION) and create fresh databases; an older database
 * is brought forward by the migrations (migrations.h).
 * The version lives in the table ktally_schema (sql/version.sql); ktally
 * tables without it are version 1. Every function works on a connection
 * the caller opened with kt_db_open() and keeps owning. Failures are
 * KT_ERROR_TRANSIENT (the connection failed: drop it), KT_ERROR_USAGE (a
 * database this ktally must not touch) or KT_ERROR_FATAL. */
#pragma once
#include <glib.h>
#include "db.h"

/* The schema version this ktally creates, migrates to and writes. */
#define KT_SCHEMA_VERSION 10

/* The oldest version that `status` and `audit`, which never alter a
 * database, still read as it is. */
#define KT_SCHEMA_READABLE 1

/* ktally_batches.member's size in characters (sql/common.sql). */
#define KT_MEMBER_CHARS 400

/* The groups of tables a job needs, one .sql file each. */
typedef enum
{
  KT_TABLES_COMMON,      /* sql/common.sql: kafka_offset, ktally_batches, ktally_job, ktally_table */
  KT_TABLES_COUNTS,      /* sql/counts.sql: error_log, the transactional counts */
  KT_TABLES_IDEMPOTENT,  /* sql/idempotent.sql: per-partition counts, covered sets, the error_log view */
  KT_TABLES_LEDGER,      /* sql/ledger.sql: balances, applied and rejected txns */
} KtTables;

/* Refuses, with KT_ERROR_USAGE and one line naming @name and what it is,
 * an object @name where ktally would write what it cannot hold: with
 * @over NULL, ktally writes rows into a table there, and anything but a
 * base table (a view, a sequence) is refused; with @over, ktally's own
 * view over the table @over is there (idempotent mode's NAME), and
 * anything but a view that reads @over alone is refused (a table, a
 * sequence, a view over something else). An absent @name passes. @hint
 * ends the message: what ktally writes there, and what to do. */
gboolean kt_schema_check_object (KtDb *db, const char *name, const char *over,
                                 const char *hint, GError **error);

/* What the rows of a count table are (--by, --sum): the bucket, then a
 * key column per dimension (KT_DIMENSION_SQL), log_count, then a
 * sum_FIELD column per sum (KT_SUM_SQL). Both NULL: error_log's shape. */
typedef struct
{
  const char *const *dimensions;
  const char *const *sums;
} KtCountsShape;

#define KT_DIMENSION_SQL "VARBINARY(255)"
#define KT_SUM_SQL       "DECIMAL(38,4)"

/* Whether @table, where it exists as a base table, holds rows of @shape:
 * each column of the shape there, of its type (a key column at least 255
 * bytes long, a sum DECIMAL(38+,4)), the primary key exactly the bucket
 * and the key columns (with @per_topic: job and topic first, as in
 * idempotent mode's NAME_topic), and no sum_ column the
 * shape lacks. Other extra columns are allowed. A difference is
 * KT_ERROR_USAGE naming the table and the column. A view passes here:
 * see kt_schema_check_counts_view(). */
gboolean kt_schema_check_counts_table (KtDb *db, const char *table,
                                       const KtCountsShape *shape, gboolean per_topic,
                                       GError **error);

/* Whether the view @view, where it exists, has exactly the columns of
 * @shape (idempotent mode's view over NAME_topic). */
gboolean kt_schema_check_counts_view (KtDb *db, const char *view,
                                      const KtCountsShape *shape, GError **error);

/* Creates @table (an identifier the caller checked) in @shape unless it
 * exists; with no dimension and no sum exactly error_log's columns. */
gboolean kt_schema_create_counts_table (KtDb *db, const char *table,
                                        const KtCountsShape *shape, GError **error);

/* Idempotent mode's output in @shape, unless they exist: the table
 * @view + KT_TOPIC_SUFFIX of rows per job and topic (as error_log_topic,
 * schema version 4) and the view @view that adds them up. With no
 * dimension and no sum, for @view error_log, exactly what
 * sql/idempotent.sql creates. */
#define KT_TOPIC_SUFFIX "_topic"
gboolean kt_schema_create_counts_topics (KtDb *db, const char *view,
                                         const KtCountsShape *shape, GError **error);

/* A dead-letter table (sql/dead-letters.sql) named @table (an identifier
 * the caller checked), unless it exists. */
gboolean kt_schema_create_dead_letters (KtDb *db, const char *table, GError **error);
/* Whether @table, where it exists, is a dead-letter table: a base table
 * with sql/dead-letters.sql's columns, of their types, and its primary
 * key (extra columns allowed). A view or a sequence there, another shape:
 * KT_ERROR_USAGE naming the table and the column. */
gboolean kt_schema_check_dead_letters (KtDb *db, const char *table, GError **error);
/* The table a view reads, from its definition as MariaDB normalises it
 * (information_schema.views: "select ... from `db`.`t` group by ..."):
 * "t" when it reads one table of database @db alone, "db2.t" of another
 * database, NULL when it reads none or more than one (a join, a
 * subquery). New string. */
char    *kt_schema_view_reads (const char *definition, const char *db);

/* Whether @name is the name of one of ktally's own tables (the .sql
 * files': offsets, audit, identity, idempotent mode's error_log_topic and
 * covered sets, the ledger's, the schema version), which no count table
 * may take; error_log, the default count table, is not one. */
gboolean kt_schema_own_table (const char *name);

/* The statements of an embedded .sql text, in order: statements end with
 * ';' at the end of a line, and '--' lines are comments, but for a line
 * before a statement of a migration that starts with
 * KT_SCHEMA_IF_DIRECTIVE ("-- ktally: if NAME...": run it only where every
 * NAME exists, "NAME:view", "NAME:table" as that), which is kept for
 * kt_migrations_statement_applies(). A new array of new strings. */
#define KT_SCHEMA_IF_DIRECTIVE "-- ktally: if "
GPtrArray *kt_schema_statements (const char *text);

/* @member ("job-pid@host") as ktally_batches.member holds it whatever the
 * host's name: every byte that is not printable ASCII becomes '?', and it
 * is cut to KT_MEMBER_CHARS, so that a commit never fails on it. New
 * string. */
char *kt_schema_member (const char *member);

/* ---- The same, for a KtDb (db.h): what commands and kinds call ---------- */
/* (Bringing the schema forward and the common tables in: kt_migrations_ready(),
 * migrations.h.) */

/* Connects, refuses a view or a sequence named like one of ktally's own
 * tables (before anything is written), and reads the schema version into
 * *@version (as kt_schema_version()): what kt_migrations_ready() and
 * kt_schema_check_ready() share. */
gboolean kt_schema_connect_version (KtDb *db, int *version, GError **error);

/* What kt_migrations_ready() refuses, without writing (a dry run of a command
 * that writes): a view or a sequence named like one of ktally's own
 * tables, a newer schema, and at KT_SCHEMA_VERSION a shared table of
 * another shape. An older schema is read as it is: its migration would
 * change the shapes. */
gboolean kt_schema_check_ready (KtDb *db, GError **error);

/* @tables' tables: any that exists must have the shape ktally writes
 * (checked before anything is created), and the absent ones are created,
 * logging one line naming @what ("transactional-mode", "ledger"). */
gboolean kt_schema_prepare (KtDb *db, KtTables tables, const char *what, GError **error);

/* The same, leaving the tables and views named in @except (NULL-terminated)
 * alone: a job whose output takes one of those names in another shape
 * checks and creates it itself. */
gboolean kt_schema_prepare_except (KtDb *db, KtTables tables, const char *what,
                                   const char *const *except, GError **error);

/* For the commands that only read: connects and calls
 * kt_schema_check_read_only(). */
gboolean kt_schema_readable (KtDb *db, GError **error);
