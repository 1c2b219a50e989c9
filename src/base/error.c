/* error.c - the KT_ERROR domain and its exit codes. */
#include "error.h"

G_DEFINE_QUARK (kt-error-quark, kt_error)

int
kt_error_exit_code (const GError *error)
{
  if (error == NULL)
    return KT_EXIT_OK;
  if (error->domain != KT_ERROR)
    return KT_EXIT_FAILURE;

  switch ((KtErrorCode) error->code)
    {
    case KT_ERROR_USAGE:
      return KT_EXIT_USAGE;
    case KT_ERROR_FATAL:
    case KT_ERROR_TRANSIENT:  /* at start-up, a dependency that never came */
    case KT_ERROR_REBALANCED:
    case KT_ERROR_OVERTAKEN:
    case KT_ERROR_CONFLICT:
      return KT_EXIT_DEPENDENCY;
    case KT_ERROR_DATA_LOSS:
      return KT_EXIT_DATA_LOSS;
    case KT_ERROR_AUDIT:
      return KT_EXIT_AUDIT;
    case KT_ERROR_CANCELLED:
      return KT_EXIT_OK;
    case KT_ERROR_INTERNAL:
    default:
      return KT_EXIT_FAILURE;
    }
}
