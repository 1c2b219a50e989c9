/* kind-context.c - one topic's context for a job kind (kind-context.h):
 * the job's transaction, and its identity recorded with the first commit. */
#include "kind-context.h"

gboolean
kt_kind_context_begin (KtKindContext *context, GError **error)
{
  if (!kt_db_begin (context->db, error))
    return FALSE;
  /* A promoted replica may lack the commit that recorded the job (it
   * lost the last transactions of the primary, offsets and all). */
  if (context->claimed_on != kt_db_connections (context->db))
    context->claimed = FALSE;
  if (context->claimed
      || kt_identity_claim (context->db, context->identity, error))
    return TRUE;
  kt_db_abort (context->db);
  return FALSE;
}

gboolean
kt_kind_context_finish (KtKindContext *context, KtCommitResult *result, GError **error)
{
  if (!kt_db_finish (context->db, result, error))
    return FALSE;
  context->claimed = TRUE;
  context->claimed_on = kt_db_connections (context->db);
  return TRUE;
}

gboolean
kt_kind_context_claim (KtKindContext *context, GError **error)
{
  KtCommitResult result;

  /* A lost answer: the next claim finds the rows, and compares. */
  return (context->claimed && context->claimed_on == kt_db_connections (context->db))
         || (kt_kind_context_begin (context, error)
             && kt_kind_context_finish (context, &result, error));
}
