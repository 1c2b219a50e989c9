/* group-wait.c - `run --group`: a member that holds no partition says why
 * it waits (group-wait.h), from what the group and the brokers answer. */
#include "group-wait.h"

#include "log.h"

/* A member with no partition says why it waits after this long, then
 * again at this pace (a standby member must not flood the log). */
#define WAITING_FIRST_US   (5 * G_USEC_PER_SEC)
#define WAITING_EVERY_US   (30 * G_USEC_PER_SEC)

/* --group: one group-waiting record about a member that holds no
 * partition, and why: what the group answered (no assignment at all yet:
 * the member cannot join or the group is still rebalancing; an empty one:
 * more members than partitions), how many members it has and how many
 * partitions each topic has, where the brokers say. */
static void
log_waiting (KtGroupWait *self, const char *job, const char *group, GPtrArray *feeds,
             gint64 now)
{
  KtFeed *first = feeds->pdata[0];
  g_autoptr(KtLogEvent) e = kt_log_event_new ("group-waiting");
  g_autoptr(GString) topics = g_string_new (NULL);
  g_autoptr(GString) counts = g_string_new (NULL);
  g_autoptr(GString) why = g_string_new (NULL);
  g_autoptr(GArray) parts = g_array_new (FALSE, FALSE, sizeof (gint32));
  g_autoptr(GError) no_members = NULL;
  g_autofree char *state = NULL;
  gboolean assigned = FALSE;
  guint members = 0;
  gint64 partitions = 0;
  double waited = (double) (now - self->since) / G_USEC_PER_SEC;

  for (guint i = 0; i < feeds->len; i++)
    {
      KtFeed *f = feeds->pdata[i];
      g_autoptr(GError) ignored = NULL;
      gboolean once;

      kt_source_owned (f->source, parts, &once);
      assigned |= once;
      g_string_append_printf (topics, "%s%s", i ? "," : "", f->context.topic);
      /* Asked now: partitions added since start-up count. */
      if (partitions >= 0 && kt_source_partitions (f->source, parts, 2000, &ignored))
        {
          partitions += parts->len;
          g_string_append_printf (counts, "%s%s has %u partition%s", i ? ", " : "",
                                  f->context.topic, parts->len, parts->len == 1 ? "" : "s");
        }
      else
        partitions = -1;
    }
  if (!kt_source_group_members (first->source, group, &members, &state, 2000, &no_members))
    members = 0;

  kt_log_event_string (e, "job", job);
  kt_log_event_string (e, "group", group);
  kt_log_event_string (e, "topic", topics->str);
  kt_log_event_double (e, "waited", waited, 1);
  kt_log_event_string (e, "reason", assigned ? "none-assigned" : "no-assignment-yet");
  if (no_members == NULL)
    {
      kt_log_event_int (e, "members", members);
      kt_log_event_string (e, "group_state", state);
    }
  if (partitions >= 0)
    kt_log_event_int (e, "partitions", partitions);

  g_string_append (why, assigned
                   ? "the group assigned no partition to this member"
                   : "no assignment has come from the group yet (joining or rebalancing)");
  if (no_members == NULL)
    g_string_append_printf (why, "; the group is %s with %u member%s", state, members,
                            members == 1 ? "" : "s");
  else
    g_string_append_printf (why, "; members unknown (%s)", no_members->message);
  if (partitions >= 0)
    g_string_append_printf (why, "; %s", counts->str);
  if (assigned && no_members == NULL && partitions >= 0 && members > partitions)
    g_string_append (why, ": a member beyond the partition count waits until another leaves");
  /* A standby member is by design; a member that never got any answer
   * from the group may be stuck (a coordinator it cannot reach). */
  kt_log_event_emit (e, assigned ? G_LOG_LEVEL_MESSAGE : G_LOG_LEVEL_WARNING,
                     "job %s: waiting in group %s for %.0f s with no partition of %s: %s",
                     job, group, waited, topics->str, why->str);
}

void
kt_group_wait_check (KtGroupWait *self, const char *job, const char *group, GPtrArray *feeds)
{
  g_autoptr(GArray) parts = g_array_new (FALSE, FALSE, sizeof (gint32));
  gint64 now;

  for (guint i = 0; i < feeds->len; i++)
    {
      gboolean once;

      kt_source_owned (((KtFeed *) feeds->pdata[i])->source, parts, &once);
      if (parts->len > 0)
        {
          self->since = 0;
          self->said = 0;
          return;
        }
    }
  now = g_get_monotonic_time ();
  if (self->since == 0)
    self->since = now;
  if (now - self->since < WAITING_FIRST_US
      || (self->said != 0 && now - self->said < WAITING_EVERY_US))
    return;
  log_waiting (self, job, group, feeds, now);
  self->said = g_get_monotonic_time ();
}
