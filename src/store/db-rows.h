/* db-rows.h - a SELECT's rows, for code above the store.
 *
 * The layers above store/ read rows through this and never see MySQL's
 * types: a row is an array of column texts (NULL for SQL NULL), valid
 * until the next one, and its columns' lengths in bytes (binary keys). */
#pragma once
#include <glib.h>
#include "db.h"

typedef struct _KtDbRows KtDbRows;

/* Runs @sql (a SELECT) on @db, connecting first, and holds its whole
 * result; NULL with @error as kt_db_run() (@doing says what for). */
KtDbRows           *kt_db_rows_select  (KtDb *db, const char *sql, const char *doing,
                                        GError **error);

/* The next row (the first at the first call), or NULL after the last. */
const char *const  *kt_db_rows_next    (KtDbRows *self);

/* The lengths in bytes of the row kt_db_rows_next() returned last. */
const unsigned long *kt_db_rows_lengths (KtDbRows *self);

void                kt_db_rows_free    (KtDbRows *self);  /* NULL is fine */

G_DEFINE_AUTOPTR_CLEANUP_FUNC (KtDbRows, kt_db_rows_free)
