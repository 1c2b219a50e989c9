/* cmd-reset.c - `ktally reset`: moves a job's stored offsets, exactly once.
 *
 * Reads the options into a request, makes the reset (core/reset-job.c:
 * executed with --execute, else a dry run that refuses what the
 * execution refuses), and prints the plan: per partition, the stored
 * offset, where it goes and what that means for the output, as text or
 * JSON. A move that would count offsets twice is refused (exit 2),
 * whatever the flags; the job's kind says which moves those are
 * (kind.h). */
#include "command.h"

#include <stddef.h>
#include <stdio.h>
#include <json-glib/json-glib.h>
#include "check.h"
#include "error.h"
#include "instant.h"
#include "json-member.h"
#include "kind.h"
#include "reset.h"


static const char SUMMARY[] =
  "Moves a job's stored offsets: --to earliest (the log start), latest (the\n"
  "high watermark), PARTITION:OFFSET[,...] or batch:ID (where the audited\n"
  "batch ID started); --to-datetime TIME or --by-duration DURATION (the\n"
  "first record at or after that moment, per partition); --shift-by N.\n"
  "Prints the plan, per partition, and what it means; --execute applies it\n"
  "in one transaction, fenced against running instances. A move that would\n"
  "count offsets twice is refused (exit 2): moving a transactional job back\n"
  "needs --rebuild, which takes back what the job counted from there (or,\n"
  "with --to earliest, empties its table) and counts it again.";

/* reset's own options. */
typedef struct
{
  char     *to;                /* --to, as given (reset.h parses it) */
  char     *to_datetime;       /* --to-datetime, as given (instant.h parses it) */
  double    by_duration;       /* --by-duration, seconds; 0: not given */
  char     *shift_by;          /* --shift-by, as given */
  gboolean  rebuild;           /* --rebuild */
  gboolean  accept_data_loss;  /* --accept-data-loss */
} ResetOptions;

static const KtOption reset_options[] = {
  { "to", 0, NULL, KT_OPT_TEXT, offsetof (ResetOptions, to), .commands = KT_CMD_RESET, .metavar = "WHERE",
    .help = "Where to: earliest, latest, PARTITION:OFFSET[,...] or batch:ID" },
  { "to-datetime", 0, NULL, KT_OPT_TEXT, offsetof (ResetOptions, to_datetime),
    .commands = KT_CMD_RESET, .metavar = "TIME",
    .help = "Where to: each partition's first record whose Kafka timestamp is at or after "
            "TIME (ISO 8601, e.g. 2024-05-01T14:00:00+02:00; without an offset, local time), "
            "or its high watermark when none is" },
  { "by-duration", 0, NULL, KT_OPT_SECONDS, offsetof (ResetOptions, by_duration), .min = 0,
    .max = 1e11, .commands = KT_CMD_RESET, .flags = KT_OPT_OPEN_MIN, .metavar = "DURATION",
    .help = "Where to: as --to-datetime, DURATION (e.g. 1h, 90m, 2d) before now" },
  { "shift-by", 0, NULL, KT_OPT_TEXT, offsetof (ResetOptions, shift_by),
    .commands = KT_CMD_RESET, .metavar = "N",
    .help = "Where to: each partition's stored offset plus N (back when negative), stopping "
            "at the log start or the high watermark" },
  { "rebuild", 0, NULL, KT_OPT_SWITCH, offsetof (ResetOptions, rebuild), .commands = KT_CMD_RESET,
    .help = "Going back in a transactional count job: take back from its table what it "
            "counted from the new offsets on, and count that again; with --to earliest, "
            "empty its output and count everything again (the only ways back for a "
            "transactional job)" },
  { "accept-data-loss", 0, NULL, KT_OPT_SWITCH, offsetof (ResetOptions, accept_data_loss),
    .commands = KT_CMD_RESET,
    .help = "With --rebuild: rebuild although retention removed offsets the job counted" },
  KT_OPTION_END
};

static const ResetOptions *
own (const KtConfig *config)
{
  return config->own;
}

/* The target of whichever of --to, --to-datetime, --by-duration and
 * --shift-by was given (check_flags() made sure it is one); *@moment says
 * how a moment was given. */
static gboolean
reset_target (const ResetOptions *o, KtResetTarget *target, const char **moment,
              GError **error)
{
  g_autoptr(GTimeZone) local = g_time_zone_new_local ();
  gint64 shift;

  *moment = NULL;
  if (o->to != NULL)
    return kt_reset_target_parse (o->to, target, error);
  *target = (KtResetTarget) { .to = KT_RESET_TIME };
  if (o->to_datetime != NULL)
    {
      *moment = "--to-datetime";
      return kt_instant_parse ("--to-datetime", o->to_datetime, local, &target->ms, error);
    }
  if (o->by_duration > 0)
    {
      *moment = "--by-duration";
      target->ms = kt_instant_now () - (gint64) (o->by_duration * 1000);
      return TRUE;
    }
  /* Offsets are below 2^63: a shift beyond 2^62 either way leaves any log. */
  if (!g_ascii_string_to_signed (o->shift_by, 10, -(G_GINT64_CONSTANT (1) << 62),
                                 G_GINT64_CONSTANT (1) << 62, &shift, NULL))
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "--shift-by: expected a whole number of "
                   "offsets (negative: back), got '%s'", o->shift_by);
      return FALSE;
    }
  *target = (KtResetTarget) { .to = KT_RESET_SHIFT, .shift = shift };
  return TRUE;
}

/* One partition of the plan, as an object. */
static void
json_move (JsonBuilder *b, const KtResetJob *r, const KtResetMove *m)
{
  g_autofree char *what = kt_reset_move_words (m);

  json_builder_begin_object (b);
  kt_json_member_string (b, "topic", m->topic);
  kt_json_member_int (b, "partition", m->partition);
  kt_json_member_int (b, "stored", m->stored);
  kt_json_member_int (b, "log_start", m->low);
  kt_json_member_int (b, "high_watermark", m->high);
  kt_json_member_int (b, "new", m->to);
  if (m->by_time)
    {
      json_builder_set_member_name (b, "at");
      json_builder_begin_object (b);
      kt_json_member_int (b, "offset", m->at);
      kt_json_member_string (b, "place", kt_time_place_name (m->place));
      json_builder_end_object (b);
    }
  if (r->request->target->to == KT_RESET_SHIFT || r->replay_from != NULL)
    kt_json_member_bool (b, "clamped", m->clamped);
  kt_json_member_string (b, "move", m->rebuild ? "rebuild" : m->recount ? "recount"
                          : m->to > m->stored ? "forward" : m->to < m->stored ? "back" : "stays");
  json_builder_set_member_name (b, "recount");
  if (m->recount)
    {
      json_builder_begin_object (b);
      kt_json_member_int (b, "records", (gint64) m->taken.records);
      kt_json_member_int (b, "lines", (gint64) m->taken.lines);
      kt_json_member_int (b, "errors", (gint64) m->taken.errors);
      kt_json_member_int (b, "malformed", (gint64) m->taken.malformed);
      kt_json_member_int (b, "rows", m->taken_rows);
      json_builder_end_object (b);
    }
  else
    json_builder_add_null_value (b);
  kt_json_member_intervals (b, "skipped", m->skipped);
  kt_json_member_intervals (b, "counted_already", m->counted_already);
  kt_json_member_intervals (b, "newly_counted", m->newly_counted);
  kt_json_member_interval (b, "kept_skipped", m->kept);
  kt_json_member_interval (b, "lost", m->lost);
  kt_json_member_string (b, "effect", what);
  json_builder_end_object (b);
}

static void
print_json (const KtResetJob *r, const GArray *moves, gboolean executed)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *out = NULL;
  const KtJobRow *rec = r->job->record;

  json_builder_begin_object (b);
  kt_json_member_string (b, "job", r->job->name);
  kt_json_member_string (b, "kind", rec->kind);
  kt_json_member_string (b, "mode", rec->mode);
  kt_json_member_string (b, "offsets", rec->offsets);
  kt_json_member_string (b, "table", rec->output);
  kt_json_member_bool (b, "rebuild", r->policy.rebuild);
  kt_json_member_bool (b, "changes", kt_reset_changes (moves));
  kt_json_member_bool (b, "executed", executed);
  if (r->request->target->to == KT_RESET_TIME)
    {
      g_autofree char *utc = kt_instant_format (r->request->target->ms);

      json_builder_set_member_name (b, "moment");
      json_builder_begin_object (b);
      kt_json_member_string (b, "given", r->request->moment);
      kt_json_member_string (b, "utc", utc);
      kt_json_member_int (b, "ms", r->request->target->ms);
      json_builder_end_object (b);
    }
  json_builder_set_member_name (b, "partitions");
  json_builder_begin_array (b);
  for (guint i = 0; i < moves->len; i++)
    json_move (b, r, &g_array_index (moves, KtResetMove, i));
  json_builder_end_array (b);
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  out = json_generator_to_data (gen, NULL);
  printf ("%s\n", out);
}

static void
print_text (const KtResetJob *r, const GArray *moves, gboolean executed)
{
  const KtJobRow *rec = r->job->record;
  g_autofree char *rows = kt_kind_rows_table (r->kind, rec->output);
  const char *topic = NULL;
  guint moved = 0;

  printf ("job %s: %s, %s, offsets in %s, counts into %s\n", r->job->name, rec->kind,
          rec->mode, r->kafka ? "Kafka's consumer group" : "kafka_offset", rec->output);
  if (r->request->target->to == KT_RESET_TIME)
    {
      g_autofree char *utc = kt_instant_format (r->request->target->ms);

      printf ("%s: %s; each partition goes to its first record whose timestamp is at or "
              "after it\n", r->request->moment, utc);
    }
  for (guint i = 0; i < moves->len; i++)
    {
      const KtResetMove *m = &g_array_index (moves, KtResetMove, i);
      g_autofree char *what = kt_reset_move_words (m);

      if (topic == NULL || !g_str_equal (topic, m->topic))
        {
          topic = m->topic;
          printf ("topic %s\n%9s %12s %12s %14s %12s  %s\n", topic, "partition", "stored",
                  "log start", "high watermark", "new", "what it means");
        }
      moved += m->to != m->stored || m->rebuild;
      printf ("%9d %12" G_GINT64_FORMAT " %12" G_GINT64_FORMAT " %14" G_GINT64_FORMAT " %12"
              G_GINT64_FORMAT "  %s\n", m->partition, m->stored, m->low, m->high, m->to, what);
    }
  if (moves->len == 0)
    printf ("job %s stores no offsets%s%s yet: nothing to reset\n", r->job->name,
            r->request->topic != NULL ? " of topic " : "",
            r->request->topic != NULL ? r->request->topic : "");
  else if (moved == 0)
    printf ("nothing to change: every partition is there already\n");
  else if (!executed)
    printf ("dry run: nothing changed; run the same command with --execute to apply it\n");
  else if (r->kafka)
    printf ("done: %u partition%s committed to Kafka's consumer group ktally-%s; this is "
            "not fenced: an instance of job %s that runs commits its own offsets over them, "
            "so stop it first\n", moved, moved == 1 ? "" : "s", r->job->name, r->job->name);
  else
    printf ("done: %u partition%s moved in one transaction; an instance of job %s that runs "
            "is fenced at its next commit and goes on from the new offsets\n", moved,
            moved == 1 ? "" : "s", r->job->name);
  if (r->policy.recount && moved > 0)
    {
      guint64 errors = 0;

      for (guint i = 0; i < moves->len; i++)
        errors += g_array_index (moves, KtResetMove, i).taken.errors;
      printf ("%s %" G_GUINT64_FORMAT " ERROR line%s of those ranges out of %s, and their "
              "audit rows; job %s counts them again\n", executed ? "took" : "--execute takes",
              errors, errors == 1 ? "" : "s", rec->output, r->job->name);
    }
  if (r->policy.rebuild && moved > 0 && rows != NULL)
    printf ("%s the rows of job %s in %s%s%s, and its audit rows\n",
            executed ? "deleted" : "--execute deletes", r->job->name, rows,
            r->kind->records != NULL ? " and " : "",
            r->kind->records != NULL ? r->kind->records : "");
  else if (r->policy.rebuild && moved > 0)
    printf ("%s every row of %s (no other job writes it), and the audit rows of job %s\n",
            executed ? "deleted" : "--execute deletes", rec->output, r->job->name);
}

/* The reset the options ask for, executed or a dry run (reset.h), and
 * its plan printed. */
static gboolean
reset (const KtConfig *config, GError **error)
{
  g_auto(KtResetTarget) target = { 0 };
  g_auto(KtResetJob) r = { 0 };
  g_autoptr(GArray) moves = g_array_new (FALSE, FALSE, sizeof (KtResetMove));
  KtResetRequest request = {
    .db = &config->db, .kafka = &config->kafka, .startup_timeout = config->run.startup_timeout,
    .job = config->job.name, .topic = config->job.topic, .target = &target,
    .rebuild = own (config)->rebuild, .accept_data_loss = own (config)->accept_data_loss,
    .execute = config->execute,
  };

  g_array_set_clear_func (moves, (GDestroyNotify) kt_reset_move_clear);
  if (!reset_target (own (config), &target, &request.moment, error)
      || !kt_reset_job (&request, &r, moves, error))
    return FALSE;
  if (config->json)
    print_json (&r, moves, config->execute && kt_reset_changes (moves));
  else
    print_text (&r, moves, config->execute);
  return TRUE;
}

/* The flags of a reset that go together, and where to spelled right. */
static gboolean
check_flags (KtConfig *config, GError **error)
{
  const ResetOptions *o = own (config);
  KtResetTarget target = { 0 };
  const char *moment;
  guint given = (o->to != NULL) + (o->to_datetime != NULL) + (o->by_duration > 0)
                + (o->shift_by != NULL);

  if (!kt_check_job (config, TRUE, " (`ktally jobs` lists them)", error))
    return FALSE;
  if (given != 1)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE, given == 0
                           ? "--to is required (earliest, latest, PARTITION:OFFSET[,...] or "
                             "batch:ID), or --to-datetime, --by-duration or --shift-by"
                           : "--to, --to-datetime, --by-duration and --shift-by exclude each "
                             "other: give one");
      return FALSE;
    }
  if (!reset_target (o, &target, &moment, error))
    return FALSE;
  kt_reset_target_clear (&target);
  if (!kt_check_execute (config, error))
    return FALSE;
  if (o->rebuild && g_strcmp0 (o->to, "latest") == 0)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE, "--rebuild counts again what the "
                           "job counted from where it goes back to: not with --to latest");
      return FALSE;
    }
  if (o->rebuild && g_strcmp0 (o->to, "earliest") == 0 && config->job.topics != NULL)
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE, "--to earliest --rebuild empties "
                           "the job's whole output, so it rewinds every topic: leave out "
                           "--topic");
      return FALSE;
    }
  if (o->accept_data_loss && !(o->rebuild && g_strcmp0 (o->to, "earliest") == 0))
    {
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE, "--accept-data-loss goes with "
                           "--rebuild only, of --to earliest");
      return FALSE;
    }
  return TRUE;
}

static const KtOptionNote notes[] = {
  { "brokers", "Kafka bootstrap servers (the watermarks; the consumer group of a job with "
               "--offsets kafka)" },
  { "job", "The job to reset (`ktally jobs` lists them)" },
  { "topic", "Only this topic of the job (default: every topic it reads)" },
  { "json", "Print the plan as one JSON document" },
  { NULL, NULL }
};

static gboolean
check (KtConfig *config, const KtOptionValues *values, GError **error)
{
  (void) values;
  return check_flags (config, error)
         && kt_check_db (config, error)
         && kt_check_brokers (config, TRUE, error);
}

static gboolean
handle (const KtConfig *config, volatile int *stop, GError **error)
{
  (void) stop;
  return reset (config, error);
}

const KtCommand kt_command_reset = {
  .name = "reset",
  .summary = "move a job's stored offsets (--dry-run, --execute), never counting twice",
  .help = SUMMARY,
  .bit = KT_CMD_RESET,
  .notes = notes,
  .options = reset_options,
  .options_size = sizeof (ResetOptions),
  .check = check,
  .handle = handle,
};
