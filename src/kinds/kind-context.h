/* kind-context.h - what a job kind works with: one topic's context
 * (not the jobs a database knows, which `ktally jobs` lists: jobs.h).
 *
 * The scheduler (run.c) owns one KtKindContext per topic it reads
 * (feed.h) and hands it to the job's kind (kind.h). A kind writes its
 * output through context->db, inside the transaction the scheduler opened
 * with kt_kind_context_begin() and closes with kt_kind_context_finish()
 * (one for every topic of the job): the first commit of a process also
 * records what the job is (identity.h), so a kind never has to know about
 * that. */
#pragma once
#include <glib.h>
#include "job-spec.h"
#include "db.h"
#include "identity.h"
#include "source.h"

typedef struct
{
  const KtJobSpec  *spec;      /* what the job is; spec->options: the kind's own */
  const char       *job;       /* the job's name */
  const char       *topic;     /* the topic of this feed */
  const char       *output;    /* the table the job writes (the identity's) */
  const char       *member;    /* "job-pid@host": who commits, in audit rows */
  KtDb             *db;        /* the job's database */
  KtSource         *source;    /* the topic's reader (--offsets kafka commits through it) */
  const KtIdentity *identity;  /* what the job is */
  gboolean          claimed;     /* a commit of this process recorded it... */
  guint             claimed_on;  /* ...on this connection (kt_db_connections()) */
  gint64            audit_id;  /* the first ktally_batches id the kind's last write
                                * recorded (`reset --to batch:ID`); 0: none */
} KtKindContext;

/* START TRANSACTION; in the first transaction of the process, records the
 * job's identity too (a different one recorded meanwhile is KT_ERROR_USAGE,
 * the transaction rolled back). Also the first on a new connection: it may
 * be to another server (a failover) that lost the record. */
gboolean kt_kind_context_begin (KtKindContext *context, GError **error);

/* Records the job's identity in a transaction of its own, unless a commit
 * of this process did already: before the job's first offset rows. */
gboolean kt_kind_context_claim (KtKindContext *context, GError **error);

/* COMMIT (see kt_db_finish()); once one landed, the identity is recorded. */
gboolean kt_kind_context_finish (KtKindContext *context, KtCommitResult *result, GError **error);
