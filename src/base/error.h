/* error.h - the KT_ERROR domain: what the caller does next.
 *
 * Every module reports failures as a GError in KT_ERROR. The code tells
 * the caller how to react; the message tells the user what happened. */
#pragma once
#include <glib.h>

#define KT_ERROR (kt_error_quark ())

typedef enum
{
  KT_ERROR_USAGE,      /* bad option, URI or identifier: exit 2, touch nothing */
  KT_ERROR_TRANSIENT,  /* network, timeout, lost connection: back off, retry */
  KT_ERROR_FATAL,      /* access denied, unknown database or topic: stop */
  KT_ERROR_DATA_LOSS,  /* a stored offset fell below the log start: stop */
  KT_ERROR_INTERNAL,   /* anything else we cannot recover from */
  KT_ERROR_CANCELLED,  /* SIGTERM/SIGINT arrived: abandon the batch, exit 0 */
  KT_ERROR_AUDIT,      /* `ktally audit` found a break in the chain */
  KT_ERROR_REBALANCED, /* the group took a partition away mid-batch: re-plan */
  KT_ERROR_CONFLICT,   /* deadlock or lock wait timeout: retry the commit */
  KT_ERROR_OVERTAKEN,  /* retention removed offsets mid-read: re-plan at once */
} KtErrorCode;

/* Process exit codes, documented in the README and --help. */
enum
{
  KT_EXIT_OK = 0,
  KT_EXIT_FAILURE = 1,     /* unexpected or internal error */
  KT_EXIT_USAGE = 2,       /* usage or configuration error */
  KT_EXIT_DEPENDENCY = 3,  /* Kafka or MySQL refused us for good */
  KT_EXIT_DATA_LOSS = 4,   /* data lost to retention under a stored offset */
  KT_EXIT_AUDIT = 5,       /* `ktally audit`: the offset chain is broken */
};

GQuark kt_error_quark (void);

/* Maps a KT_ERROR (or any other) error to the process exit code. */
int kt_error_exit_code (const GError *error);
