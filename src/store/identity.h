/* identity.h - a job is its settings; a table is what its rows mean.
 *
 * A job's results depend on settings ktally must never let change under
 * it: its kind and mode, where its offsets live, the table it writes and
 * the topics it reads (ktally_job), and what that table's rows mean: their
 * bucket, the levels counted, the pattern and time format that read them,
 * their dimensions and sums (ktally_table). Both are recorded by the first
 * commit (kt_identity_claim(), in the commit's transaction) and compared at
 * every start (kt_identity_check()): a difference that would mix results is
 * refused with one line naming the setting, the stored value and the given
 * one, before anything is written. A second job that would count a topic
 * into a table another job already counts it into is refused too, unless
 * the sharing is asked for (--share-table): two jobs count everything
 * twice. */
#pragma once
#include <glib.h>
#include "db.h"
#include "options.h"

/* One setting of a job (a column of ktally_job) or of what its table holds
 * (a column of ktally_table), as stored. */
typedef struct
{
  const char     *column;
  const char     *flag;     /* how the user sets it, for messages: "--levels" */
  char           *value;    /* its normal form; "" where it does not apply, or is the
                             * default */
  gboolean        unrecorded_if_empty;  /* '' stored: an older ktally did not record it */
  const KtOption *row;      /* its option, whose normal form a stored value is read in
                             * (two spellings of one meaning are one); NULL: as stored */
} KtIdentitySetting;

typedef struct
{
  char      *job;
  char      *output;        /* the table it writes */
  char     **topics;        /* the topics it reads */
  gboolean   replay;        /* `ktally replay`: re-counting into a table is its purpose */
  gboolean   share_table;   /* --share-table: another job may count its topics there too */
  GArray    *job_settings;  /* KtIdentitySetting, columns of ktally_job */
  GArray    *table_settings;  /* KtIdentitySetting, columns of ktally_table */
} KtIdentity;

/* An identity with no settings yet (the strings are copied). */
void     kt_identity_init  (KtIdentity *id, const char *job, const char *output,
                            const char *const *topics, gboolean replay, gboolean share_table);
/* Adds a setting of ktally_table (@table) or ktally_job: @value (copied)
 * in its normal form. */
void     kt_identity_add   (KtIdentity *id, gboolean table, const char *column,
                            const char *flag, const char *value, const KtOption *row,
                            gboolean unrecorded_if_empty);
void     kt_identity_clear (KtIdentity *id);
/* The value of setting @column (either table), or NULL. */
const char *kt_identity_value (const KtIdentity *id, const char *column);

/* Compares @id with what the database recorded of its job and its output
 * table (either may be absent: nothing to compare), and, unless
 * id->share_table or @id is a replay, looks for another job that counts
 * one of @id's topics into the same table. Reads only. A difference is
 * KT_ERROR_USAGE naming the setting, both values and what to do; a
 * connection failure is reported as the caller's query failures are. */
gboolean kt_identity_check (KtDb *db, const KtIdentity *id, GError **error);

/* Records @id's job and table if absent and compares them again under row
 * locks, inside the caller's open transaction (the job's first write: its
 * offset rows, or its first commit), and looks for another job sharing its
 * topics and table again: the table's row is locked first, so two jobs
 * claiming at once take turns and the second sees the first. Two
 * instances started with different settings cannot both write. A
 * difference is KT_ERROR_USAGE; the caller rolls back. */
gboolean kt_identity_claim (KtDb *db, const KtIdentity *id, GError **error);

/* ---- What `ktally jobs`, `reset` and `forget` read and change ------------ */

/* One ktally_job row: what a job is, as recorded. */
typedef struct
{
  char  *kind;
  char  *mode;
  char  *offsets;
  char  *output;
  char **topics;   /* sorted */
  char  *replay_range;  /* a replay's "P:FROM-UNTIL,..."; "" for other jobs, and where
                         * not recorded (a replay before schema version 5) */
} KtJobRow;

void     kt_job_row_free (KtJobRow *record);  /* NULL is fine */

/* Every ktally_job row into @records: job -> KtJobRow*. An absent table
 * (a schema older than version 3) holds none. Reads only. */
gboolean kt_identity_read_jobs (KtDb *db, GHashTable *records, GError **error);

/* A replay's row of ktally_job: its range and the moments it was given
 * by (*@range, *@times: new strings, "" where not recorded), or both NULL
 * when @job has no row, or the schema is older than version 7 (no
 * moments recorded). Reads only. */
gboolean kt_identity_read_replay (KtDb *db, const char *job, char **range, char **times,
                                  GError **error);

/* reset --rebuild, in the caller's transaction: with @lock, locks the row
 * of table @output (as a claim does, so that no job claims it meanwhile);
 * names in *@other (a new string, or NULL) another job or replay recorded
 * as writing it. Without @lock (a dry run) it only reads, also a schema
 * older than version 3, which records no job. */
gboolean kt_identity_other_writer (KtDb *db, const char *job, const char *output,
                                   gboolean lock, char **other, GError **error);

/* reset --rebuild of a range: what the rows of table @name mean, as
 * ktally_table recorded them (@columns: the ktally_table columns to read,
 * NULL-terminated) into @values (column -> value, "" for NULL), and
 * whether a row was there (*@found). Reads only. */
gboolean kt_identity_read_table (KtDb *db, const char *name, const char *const *columns,
                                 GHashTable *values, gboolean *found, GError **error);

/* forget, in the caller's transaction: counts @job's ktally_job row into
 * *@rows, and deletes it when @execute. ktally_table's row stays: the
 * table's rows still mean what it says. */
gboolean kt_identity_forget (KtDb *db, const char *job, gboolean execute, guint64 *rows,
                             GError **error);
