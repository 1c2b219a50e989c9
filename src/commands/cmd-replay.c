/* cmd-replay.c - `ktally replay`: counts a fixed offset range into a table,
 * exactly once, through the scheduler (run.h) with fixed ends: a replay is
 * a job of its own (replay.TABLE.HASH, see cli.c) whose partitions start at
 * --from and end at --until. */
#include "command.h"

#include <stddef.h>
#include "by-time.h"
#include "check.h"
#include "config.h"
#include "db.h"
#include "error.h"
#include "identity.h"
#include "instant.h"
#include "log.h"
#include "progress.h"
#include "reload.h"
#include "retry.h"
#include "run.h"
#include "source.h"

/* What `ktally replay --help` says before the options. */
static const char SUMMARY[] =
  "Reads exactly [--from, --until) of the listed partitions and adds their\n"
  "per-minute ERROR counts to --table, exactly once: a replay keeps its own\n"
  "offsets (job replay.TABLE.HASH), so rerunning it resumes it or, once\n"
  "finished, changes nothing. The live job's offsets are never touched.\n"
  "By time instead of offsets: --from-datetime [--until-datetime], or --last,\n"
  "resolved per partition by the replay's first run and stored with it: run\n"
  "again with the same moments, it takes that range (the range is logged).";

/* replay's own options: a range given by time. */
typedef struct
{
  char     *from_datetime;   /* as given (instant.h parses it) */
  char     *until_datetime;
  double    last;            /* seconds; 0: not given */
  /* Not rows: */
  gboolean  named;           /* --job was given */
  gint64    from_ms;         /* the moments, once parsed (--last: before now, at start) */
  gint64    until_ms;        /* with until_given; a moment before 1970 is negative */
  gboolean  until_given;     /* FALSE: the end of each partition */
  gboolean  stored;          /* the range is the one its first run resolved */
} ReplayOptions;

static const KtOption replay_own_options[] = {
  { "from-datetime", 0, NULL, KT_OPT_TEXT, offsetof (ReplayOptions, from_datetime),
    .commands = KT_CMD_REPLAY, .metavar = "TIME",
    .help = "Instead of --from: each partition from its first record whose Kafka timestamp "
            "is at or after TIME (ISO 8601, e.g. 2024-05-01T14:00:00+02:00; without an "
            "offset, local time)" },
  { "until-datetime", 0, NULL, KT_OPT_TEXT, offsetof (ReplayOptions, until_datetime),
    .commands = KT_CMD_REPLAY, .needs = "from-datetime", .metavar = "TIME",
    .help = "Instead of --until: up to (not including) each partition's first record at or "
            "after TIME" },
  { "last", 0, NULL, KT_OPT_SECONDS, offsetof (ReplayOptions, last), .min = 0, .max = 1e11,
    .commands = KT_CMD_REPLAY, .flags = KT_OPT_OPEN_MIN, .metavar = "DURATION",
    .help = "Instead of --from and --until: from DURATION (e.g. 1h) before now to the end of "
            "each partition" },
  KT_OPTION_END
};

static const ReplayOptions *
own (const KtConfig *config)
{
  return config->own;
}

static gboolean
by_time (const KtConfig *config)
{
  return own (config)->from_datetime != NULL || own (config)->last > 0;
}

typedef struct
{
  const KtConfig *config;
  gint64          started;   /* monotonic: the command's start */
  gint64          ready_at;  /* the first batch's start: the rate's */
  KtReload       *reload;
} Replay;

static gint
compare_gint32 (gconstpointer a, gconstpointer b)
{
  gint32 x = *(const gint32 *) a, y = *(const gint32 *) b;

  return (x > y) - (x < y);
}

/* Every listed partition exists and [from, until) is readable now, before
 * anything is written; the run reads only the listed partitions. */
static gboolean
check (gpointer data, KtSource *source, GArray *partitions, int timeout_ms, GError **error)
{
  const KtConfig *config = ((Replay *) data)->config;
  g_autoptr(GArray) states = g_array_new (FALSE, TRUE, sizeof (KtPartitionState));

  for (guint i = 0; i < config->job.replay_from->len; i++)
    {
      const KtPartitionOffset *f = &g_array_index (config->job.replay_from, KtPartitionOffset, i);
      guint found;
      KtPartitionState s = { f->partition, -1, 0, 0 };

      /* The topic's partitions are sorted: a search, not a scan each. */
      if (!g_array_binary_search (partitions, &f->partition, compare_gint32, &found))
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                       "--from: topic %s has no partition %d (it has %u)",
                       config->job.topic, f->partition, partitions->len);
          return FALSE;
        }
      g_array_append_val (states, s);
    }
  if (!kt_source_watermarks (source, (KtPartitionState *) (void *) states->data, states->len,
                             timeout_ms, error))
    return FALSE;

  g_array_set_size (partitions, 0);
  for (guint i = 0; i < states->len; i++)
    {
      const KtPartitionState *s = &g_array_index (states, KtPartitionState, i);
      gint64 from = g_array_index (config->job.replay_from, KtPartitionOffset, i).offset;
      gint64 until = g_array_index (config->job.replay_until, KtPartitionOffset, i).offset;

      /* Given by time, the range is the one the first run resolved (it
       * is not the user's --from or --until). */
      const char *what = config->job.replay_times != NULL
                         ? "the range its first run resolved" : NULL;

      if (until > s->high)
        {
          if (what != NULL)
            g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                         "replay %s: %s ends at %" G_GINT64_FORMAT " in partition %d, "
                         "beyond its high watermark %" G_GINT64_FORMAT " now (the topic "
                         "recreated?)", config->job.name, what, until, s->partition, s->high);
          else
            g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                         "--until: partition %d ends at %" G_GINT64_FORMAT
                         " (its high watermark), not %" G_GINT64_FORMAT,
                         s->partition, s->high, until);
          return FALSE;
        }
      if (from < s->low && from < until)
        {
          if (what != NULL)
            g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                         "replay %s: %s starts at %" G_GINT64_FORMAT " in partition %d, "
                         "which starts at %" G_GINT64_FORMAT " now: offsets [%"
                         G_GINT64_FORMAT ", %" G_GINT64_FORMAT ") were lost to retention",
                         config->job.name, what, from, s->partition, s->low, from, s->low);
          else
            g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                         "--from: partition %d starts at %" G_GINT64_FORMAT " now: "
                         "offsets [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ") were "
                         "lost to retention", s->partition, s->low, from, s->low);
          return FALSE;
        }
      g_array_append_val (partitions, s->partition);
    }
  return TRUE;
}

/* Said once the table is known to take the replay's rows (not before a
 * refusal). */
static void
ready (gpointer data)
{
  const KtConfig *config = ((Replay *) data)->config;

  ((Replay *) data)->ready_at = g_get_monotonic_time ();
  /* The moments name the replay, and its first run stored the offsets
   * they resolved to: the same moments again (--last's, spelled out) find
   * that range, whatever the log has become. */
  if (by_time (config))
    {
      g_autoptr(KtLogEvent) e = kt_log_event_new ("replay-range");
      g_autofree char *from = kt_instant_format (own (config)->from_ms);
      g_autofree char *until = own (config)->until_given
                               ? kt_instant_format (own (config)->until_ms) : g_strdup ("the end");
      g_autofree char *again = own (config)->until_given
                               ? g_strdup_printf ("--from-datetime %s --until-datetime %s", from,
                                                  until)
                               : g_strdup_printf ("--from-datetime %s", from);

      kt_log_event_string (e, "job", config->job.name);
      kt_log_event_string (e, "from_time", from);
      kt_log_event_string (e, "until_time", until);
      kt_log_event_string (e, "range", config->job.replay_range);
      kt_log_event_string (e, "resolved", own (config)->stored ? "first-run" : "now");
      kt_log_event_emit (e, G_LOG_LEVEL_MESSAGE, "replay %s: from %s to %s is offsets %s (%s; "
                         "rerun with %s to resume it)", config->job.name, from, until,
                         config->job.replay_range, own (config)->stored
                         ? "as its first run resolved them" : "resolved now, stored with it",
                         again);
    }
  if (g_str_equal (config->job.table, "error_log"))
    {
      g_autoptr(KtLogEvent) e = kt_log_event_new ("replay-into-live");

      kt_log_event_string (e, "table", config->job.table);
      kt_log_event_emit (e, G_LOG_LEVEL_WARNING, "replaying into the live error_log: these "
                         "counts are ADDED to it");
    }
}

/* On a terminal: offsets done of the total, rate, time left. */
static void
progress (gpointer data, const char *topic, const GArray *states, const KtRangeStats *totals)
{
  Replay *replay = data;
  const KtConfig *config = replay->config;
  g_autoptr(GString) line = g_string_new ("replay: ");
  gint64 total = 0, left = 0;

  (void) topic;
  if (!kt_log_interactive ())
    return;
  for (guint i = 0; i < config->job.replay_from->len; i++)
    total += g_array_index (config->job.replay_until, KtPartitionOffset, i).offset
             - g_array_index (config->job.replay_from, KtPartitionOffset, i).offset;
  for (guint j = 0; j < states->len; j++)
    {
      const KtPartitionState *s = &g_array_index (states, KtPartitionState, j);
      left += MAX (0, s->high - MAX (s->stored, s->low));
    }
  /* The rate is of the records this run read: a resumed replay's earlier
   * runs did part of what is done. */
  kt_progress_append (line, "offsets", total - left, total, left, (gint64) totals->records,
                      (double) (g_get_monotonic_time () - replay->ready_at) / G_USEC_PER_SEC);
  kt_log_status (line->str);
}

/* SIGHUP: a long replay takes a rotated password, --max-per-partition,
 * the log level (reload.h). */
static gboolean
on_reload (gpointer data, KtRunSettings *settings)
{
  return kt_reload_poll (((Replay *) data)->reload, settings, NULL);
}

static gboolean
replay (const KtConfig *config, volatile int *stop, GError **error)
{
  g_autoptr(KtReload) reload = kt_reload_new (config);
  Replay replay = { config, g_get_monotonic_time (), g_get_monotonic_time (), reload };
  KtRunHooks hooks = { .check = check, .ready = ready, .progress = progress,
                       .turn = on_reload, .data = &replay, .quiet = TRUE };
  g_autoptr(KtLogEvent) e = NULL;
  KtRangeStats totals;
  double seconds;
  gboolean ok;

  ok = kt_config_run (config, &hooks, stop, &totals, error);
  kt_log_status_done ();  /* the progress line stays, the next line below it */
  if (!ok)
    return FALSE;
  if (*stop)
    return TRUE;
  seconds = (double) (g_get_monotonic_time () - replay.started) / G_USEC_PER_SEC;
  e = kt_log_event_new ("done");
  kt_log_event_string (e, "job", config->job.name);
  kt_log_event_string (e, "table", config->job.table);
  kt_log_event_int (e, "records", (gint64) totals.records);
  kt_log_event_int (e, "lines", (gint64) totals.lines);
  kt_log_event_int (e, "errors", (gint64) totals.errors);
  kt_log_event_int (e, "malformed", (gint64) totals.malformed);
  kt_log_event_double (e, "duration", seconds, 3);
  kt_log_event_emit (e, G_LOG_LEVEL_MESSAGE, "replay %s: done: %" G_GUINT64_FORMAT " record%s, %"
                     G_GUINT64_FORMAT " line%s, %" G_GUINT64_FORMAT " ERROR, %" G_GUINT64_FORMAT
                     " malformed added to %s in %.1f s", config->job.name, totals.records,
                     totals.records == 1 ? "" : "s", totals.lines, totals.lines == 1 ? "" : "s",
                     totals.errors, totals.malformed, config->job.table, seconds);
  return TRUE;
}

/* --from and --until: the same partitions, from <= until in each. */
static gboolean
parse_range (KtConfig *config, GError **error)
{
  if (config->job.replay_from == NULL || config->job.replay_until == NULL)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE, config->job.replay_from == NULL
                           ? "--from is required (or --from-datetime, or --last)"
                           : "--until is required");
      return FALSE;
    }
  for (guint i = 0; i < MAX (config->job.replay_from->len, config->job.replay_until->len); i++)
    {
      const KtPartitionOffset *f = i < config->job.replay_from->len
        ? &g_array_index (config->job.replay_from, KtPartitionOffset, i) : NULL;
      const KtPartitionOffset *u = i < config->job.replay_until->len
        ? &g_array_index (config->job.replay_until, KtPartitionOffset, i) : NULL;

      if (f == NULL || u == NULL || f->partition != u->partition)
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                       "--from and --until must name the same partitions "
                       "(partition %d is in only one)",
                       f == NULL ? u->partition
                       : u == NULL ? f->partition : MIN (f->partition, u->partition));
          return FALSE;
        }
      if (f->offset > u->offset)
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                       "partition %d: --from %" G_GINT64_FORMAT " is after --until %"
                       G_GINT64_FORMAT, f->partition, f->offset, u->offset);
          return FALSE;
        }
    }
  /* What the replay is: part of its job's identity (identity.h). */
  config->job.replay_range = kt_replay_range_text (config->job.replay_from,
                                                   config->job.replay_until);
  return TRUE;
}

/* The name of the replay of @config's range, table and topic: derived
 * from the table, the topic and the range as parsed (partitions in order,
 * offsets as numbers), or for a replay given by time the moments (in UTC,
 * to the millisecond), so that any spelling of one range is one replay:
 * rerunning it resumes it, or finds it finished. The topic is in it byte
 * for byte: the same range of another topic (or of one named in another
 * case) is another replay, not one already done. New string. */
static char *
derived_name (const KtConfig *config)
{
  g_autoptr(GString) key = g_string_new (config->job.table);
  g_autofree char *digest = NULL;
  g_autofree char *table = NULL;

  g_string_append_printf (key, "|%zu:%s", strlen (config->job.topic), config->job.topic);
  /* Given by time, the moments are the replay (their offsets are stored
   * with it); "|time:" keeps these names apart from ranges' names. */
  if (config->job.replay_times != NULL)
    g_string_append_printf (key, "|time:%s", config->job.replay_times);
  else
    for (guint i = 0; i < config->job.replay_from->len; i++)
      g_string_append_printf (key, "|%d:%" G_GINT64_FORMAT "-%" G_GINT64_FORMAT,
                              g_array_index (config->job.replay_from, KtPartitionOffset, i).partition,
                              g_array_index (config->job.replay_from, KtPartitionOffset, i).offset,
                              g_array_index (config->job.replay_until, KtPartitionOffset, i).offset);
  digest = g_compute_checksum_for_string (G_CHECKSUM_SHA256, key->str, -1);
  /* The table's name is only for people: the digest covers all of it.
   * Cut by characters: a name is UTF-8. */
  table = g_utf8_substring (config->job.table, 0, MIN (32, g_utf8_strlen (config->job.table, -1)));
  return g_strdup_printf ("%s%s.%.24s", KT_REPLAY_JOB_PREFIX, table, digest);
}

/* A replay's job name fits ktally_job.job. */
static gboolean
check_name_length (const char *name, GError **error)
{
  if (g_utf8_strlen (name, -1) <= 64)
    return TRUE;
  g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
               "--job: a replay's job is '%s' followed by its name, at most 64 "
               "characters in all", KT_REPLAY_JOB_PREFIX);
  return FALSE;
}

/* --from-datetime, --until-datetime and --last: one way of giving the
 * range, spelled right, and a range that is not empty. */
static gboolean
check_times (KtConfig *config, GError **error)
{
  ReplayOptions *o = config->own;
  g_autoptr(GTimeZone) local = g_time_zone_new_local ();

  if (config->job.replay_from != NULL || config->job.replay_until != NULL)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE, "--from and --until (offsets) "
                           "exclude --from-datetime, --until-datetime and --last (times): "
                           "give the range one way");
      return FALSE;
    }
  if (o->last > 0 && o->from_datetime != NULL)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE, "--last and --from-datetime "
                           "exclude each other: --last 1h is --from-datetime one hour ago");
      return FALSE;
    }
  o->until_given = o->until_datetime != NULL;
  if (o->from_datetime == NULL)
    {
      o->from_ms = kt_instant_now () - (gint64) (o->last * 1000);
      return TRUE;
    }
  if (!kt_instant_parse ("--from-datetime", o->from_datetime, local, &o->from_ms, error)
      || (o->until_datetime != NULL
          && !kt_instant_parse ("--until-datetime", o->until_datetime, local, &o->until_ms,
                                error)))
    return FALSE;
  if (o->until_datetime != NULL && o->until_ms <= o->from_ms)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "--until-datetime %s is not after "
                   "--from-datetime %s", o->until_datetime, o->from_datetime);
      return FALSE;
    }
  return TRUE;
}

static gboolean
replay_options (KtConfig *config, const KtOptionValues *values, GError **error)
{
  ReplayOptions *o = config->own;

  if (!kt_check_table (config, values, error))
    return FALSE;
  /* A replay's offsets live under a job of its own, whatever --job says:
   * "replay." names are never a live job's (cmd-run.c refuses them), so a
   * replay can never move a live job's offsets. */
  o->named = kt_option_given (values, "job");
  if (o->named)
    {
      g_autofree char *given = g_steal_pointer (&config->job.name);
      config->job.name = g_strdup_printf ("%s%s", KT_REPLAY_JOB_PREFIX, given);
      if (!check_name_length (config->job.name, error))
        return FALSE;
    }
  config->run.interval = 0;
  config->run.exit_when_idle = TRUE;
  /* A range by time is resolved against Kafka when the replay runs. */
  if (by_time (config))
    return check_times (config, error);
  if (!parse_range (config, error))
    return FALSE;
  if (!o->named)
    {
      g_free (config->job.name);
      config->job.name = derived_name (config);
    }
  return check_name_length (config->job.name, error);
}

static gboolean
check_options (KtConfig *config, const KtOptionValues *values, GError **error)
{
  return kt_check_kafka (config, values, FALSE, error)
         && kt_check_db (config, error)
         && kt_check_run (config, error)
         && replay_options (config, values, error);
}

static gboolean
source_partitions (gpointer data, int timeout_ms, GError **error)
{
  gpointer *args = data;
  return kt_source_partitions (args[0], args[1], timeout_ms, error);
}

/* What a replay given by time stored at its first run: its row of
 * ktally_job, read once MySQL answers (within --startup-timeout). */
typedef struct
{
  const KtConfig *config;
  const char     *name;
  char           *range;   /* NULL: no row (or a schema before the moments were kept) */
  char           *times;
} Stored;

static gboolean
read_stored (gpointer data, int timeout_ms, GError **error)
{
  Stored *st = data;
  g_autoptr(KtDb) db = kt_db_new (&st->config->db);

  (void) timeout_ms;
  g_clear_pointer (&st->range, g_free);
  g_clear_pointer (&st->times, g_free);
  return kt_identity_read_replay (db, st->name, &st->range, &st->times, error);
}

/* A range given by time, as offsets: into @resolved (a copy of @config
 * whose moments, range and name are new, freed by resolved_clear()). The
 * replay's name comes from its moments (or --job); if it has a row whose
 * moments are these, its first run resolved them and stored the range:
 * that range, whatever the log has become since (a partition's end that
 * has grown, records stamped inside the range written since). Otherwise
 * every partition of the topic, from its offset at the first moment to
 * its offset at the second (or its end now), asked of Kafka once, which
 * the replay's first commit stores. */
static gboolean
resolve (const KtConfig *config, KtConfig *resolved, GError **error)
{
  ReplayOptions *o = config->own;
  KtSourceConfig source_config = {
    .brokers = config->kafka.brokers, .topic = config->job.topic,
    .client_id = config->job.name, .properties = (const char *const *) config->kafka.properties,
  };
  g_autoptr(KtSource) source = NULL;
  g_autoptr(GArray) partitions = g_array_new (FALSE, FALSE, sizeof (gint32));
  g_autoptr(GArray) states = g_array_new (FALSE, TRUE, sizeof (KtPartitionState));
  g_autofree KtTimeOffset *from = NULL, *until = NULL;
  g_autofree char *from_text = kt_instant_format (o->from_ms);
  g_autofree char *until_text = o->until_given ? kt_instant_format (o->until_ms) : g_strdup ("..");
  Stored stored = { config, NULL, NULL, NULL };
  gpointer args[2];
  static const volatile int never = 0;

  *resolved = *config;
  resolved->job.replay_times = g_strdup_printf ("%s/%s", from_text, until_text);
  resolved->job.replay_from = g_array_new (FALSE, FALSE, sizeof (KtPartitionOffset));
  resolved->job.replay_until = g_array_new (FALSE, FALSE, sizeof (KtPartitionOffset));
  resolved->job.name = o->named ? g_strdup (config->job.name) : derived_name (resolved);
  if (!check_name_length (resolved->job.name, error))
    return FALSE;

  stored.name = resolved->job.name;
  if (!kt_retry (&never, config->run.startup_timeout, "MySQL", read_stored, &stored, error))
    return FALSE;
  o->stored = stored.range != NULL && *stored.range != '\0'
              && g_str_equal (stored.times, resolved->job.replay_times);
  if (o->stored)
    {
      gboolean ok = kt_replay_range_parse (stored.range, resolved->job.replay_from,
                                           resolved->job.replay_until, error);

      if (ok)
        resolved->job.replay_range = g_steal_pointer (&stored.range);
      g_free (stored.range);
      g_free (stored.times);
      if (!ok)
        g_prefix_error (error, "replay %s: ", resolved->job.name);
      return ok;
    }
  g_free (stored.range);
  g_free (stored.times);

  source = kt_source_new (&source_config, error);
  args[0] = source;
  args[1] = partitions;
  if (source == NULL
      || !kt_retry (&never, config->run.startup_timeout, "Kafka", source_partitions, args, error))
    return FALSE;
  for (guint i = 0; i < partitions->len; i++)
    g_array_append_val (states, ((KtPartitionState) { g_array_index (partitions, gint32, i),
                                                      -1, 0, 0 }));
  from = g_new0 (KtTimeOffset, MAX (partitions->len, 1));
  until = g_new0 (KtTimeOffset, MAX (partitions->len, 1));
  if (!kt_source_watermarks (source, (KtPartitionState *) (void *) states->data, states->len,
                             10000, error)
      || !kt_time_offsets (source, (KtPartitionState *) (void *) states->data, states->len,
                           o->from_ms, from, 10000, error)
      || (o->until_given
          && !kt_time_offsets (source, (KtPartitionState *) (void *) states->data, states->len,
                               o->until_ms, until, 10000, error)))
    return FALSE;
  for (guint i = 0; i < states->len; i++)
    {
      const KtPartitionState *s = &g_array_index (states, KtPartitionState, i);

      g_array_append_val (resolved->job.replay_from,
                          ((KtPartitionOffset) { s->partition, from[i].offset }));
      g_array_append_val (resolved->job.replay_until,
                          ((KtPartitionOffset) { s->partition,
                                                 o->until_given ? until[i].offset : s->high }));
    }
  resolved->job.replay_range = kt_replay_range_text (resolved->job.replay_from,
                                                     resolved->job.replay_until);
  return TRUE;
}

/* What resolve() put into @resolved (the rest is its config's). */
static void
resolved_clear (KtConfig *resolved)
{
  g_clear_pointer (&resolved->job.replay_from, g_array_unref);
  g_clear_pointer (&resolved->job.replay_until, g_array_unref);
  g_clear_pointer (&resolved->job.replay_range, g_free);
  g_clear_pointer (&resolved->job.replay_times, g_free);
  g_clear_pointer (&resolved->job.name, g_free);
}

static gboolean
handle (const KtConfig *config, volatile int *stop, GError **error)
{
  KtConfig resolved = { 0 };
  gboolean ok;

  if (!by_time (config))
    return replay (config, stop, error);
  ok = resolve (config, &resolved, error) && replay (&resolved, stop, error);
  resolved_clear (&resolved);
  return ok;
}

const KtCommand kt_command_replay = {
  .name = "replay",
  .summary = "count a fixed offset range into a table of its own, once",
  .help = SUMMARY,
  .bit = KT_CMD_REPLAY,
  .options = replay_own_options,
  .options_size = sizeof (ReplayOptions),
  .check = check_options,
  .handle = handle,
};
