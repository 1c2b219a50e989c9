/* group-wait.h - `run --group`: a member that holds no partition says why.
 *
 * A member beyond the partition count is a standby by design; one that
 * never got an answer from the group may be stuck (a coordinator it
 * cannot reach). Either way the log says which, and how the group and
 * the topics look, once it has waited a while, then at a slow pace. */
#pragma once
#include <glib.h>
#include "feed.h"

typedef struct
{
  gint64 since;  /* since when no topic of the job has a partition (0: some has) */
  gint64 said;   /* when the wait was last logged (0: not yet) */
} KtGroupWait;

/* Whether the member of @group holds a partition of @feeds (KtFeed) now;
 * after a few seconds without one, one group-waiting record of why, then
 * again every half minute. Between batches: it asks the group and the
 * brokers (bounded waits). */
void kt_group_wait_check (KtGroupWait *self, const char *job, const char *group,
                          GPtrArray *feeds);
