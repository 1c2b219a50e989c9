/* jobs.h - the jobs a database knows: what `ktally jobs` lists, what
 * `status`, `audit`, `reset` and `forget` check a --job against, and what
 * `forget` removes.
 *
 * A job is known by any row it left: what it is (ktally_job), where it
 * stands (kafka_offset) or what it committed (ktally_batches). A schema
 * older than this ktally's lacks some of those tables: what is absent
 * reads as empty, and nothing here creates or migrates anything, except
 * forget --execute, whose caller brought the schema forward. */
#pragma once
#include <glib.h>
#include "db.h"
#include "identity.h"
#include "offsets.h"

typedef struct
{
  char        *name;
  KtJobRow    *record;      /* ktally_job's row, or NULL where none was recorded */
  char       **topics;      /* every topic it has rows of, sorted */
  guint64      batches;     /* its ktally_batches rows */
  char        *last_commit; /* its last commit (UTC), or NULL */
} KtKnownJob;

void     kt_known_job_free (KtKnownJob *info);  /* NULL is fine */

/* Every job of @db, sorted by name, into @jobs (KtKnownJob*; give the array
 * kt_known_job_free). Reads only. */
gboolean kt_jobs_load (KtDb *db, GPtrArray *jobs, GError **error);

/* @name among @jobs, or NULL. */
const KtKnownJob *kt_jobs_find (const GPtrArray *jobs, const char *name);

/* @name among @jobs, or NULL with KT_ERROR_USAGE naming the known jobs:
 * a mistyped --job must not read as a new job that has everything to do. */
const KtKnownJob *kt_jobs_require (KtDb *db, const GPtrArray *jobs, const char *name,
                                   GError **error);

/* For status and audit: loads the jobs and requires @name, and that it
 * reads each of @topics (NULL: any). KT_ERROR_USAGE otherwise. */
gboolean kt_jobs_check (KtDb *db, const char *name, const char *const *topics,
                        GError **error);

/* What `ktally forget` removes of a job, and what stays. */
typedef struct
{
  KtForgetCount offsets;        /* kafka_offset, ktally_batches, and what they recorded */
  guint64       identity;       /* its ktally_job row */
  const char   *records_table;  /* its kind's own records (ktally_coverage), or NULL */
  guint64       records;
  char         *rows_table;     /* its output rows keyed by job (stay), or NULL */
  guint64       rows;
} KtForgetReport;

void     kt_forget_report_clear (KtForgetReport *report);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (KtForgetReport, kt_forget_report_clear)

/* `ktally forget`: in one transaction, counts into @report what @job has
 * in @db, and with @execute deletes it: its offsets, audit rows (what they
 * recorded per table goes to ktally_forgotten, for `ktally audit`), its
 * kind's records and what it is. Its output rows stay. Without @execute
 * nothing changes. */
gboolean kt_jobs_forget (KtDb *db, const KtKnownJob *job, gboolean execute,
                         KtForgetReport *report, GError **error);
