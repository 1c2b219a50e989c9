/* kind-context.c - one topic's context for a job kind (kind-context.h):
 * the job's transaction, and its identity recorded with the first commit. */
#include "kind-context.h"

gboolean
kt_kind_context_begin (KtKindContext *job, GError **error)
{
  if (!kt_db_begin (job->db, error))
    return FALSE;
  /* A promoted replica may lack the commit that recorded the job (it
   * lost the last transactions of the primary, offsets and all). */
  if (job->claimed_on != kt_db_connections (job->db))
    job->claimed = FALSE;
  if (job->claimed
      || kt_identity_claim (job->db, job->identity, error))
    return TRUE;
  kt_db_abort (job->db);
  return FALSE;
}

gboolean
kt_kind_context_finish (KtKindContext *job, KtCommitResult *result, GError **error)
{
  if (!kt_db_finish (job->db, result, error))
    return FALSE;
  job->claimed = TRUE;
  job->claimed_on = kt_db_connections (job->db);
  return TRUE;
}

gboolean
kt_kind_context_claim (KtKindContext *job, GError **error)
{
  KtCommitResult result;

  /* A lost answer: the next claim finds the rows, and compares. */
  return (job->claimed && job->claimed_on == kt_db_connections (job->db))
         || (kt_kind_context_begin (job, error)
             && kt_kind_context_finish (job, &result, error));
}
