/* counts.c - what the count kinds share (counts.h). */
#include "counts.h"

#include <stddef.h>
#include <string.h>
#include "db-rows.h"
#include "error.h"
#include "field-path.h"
#include "schema.h"

/* Rows per INSERT, and bytes: keeps every statement far below
 * max_allowed_packet, even with eight key columns of 255 bytes. */
#define UPSERT_ROWS  1000
#define UPSERT_BYTES (1024 * 1024)

#define AT(field) offsetof (KtCountOptions, field)
#define JOB_CMDS (KT_CMD_RUN | KT_CMD_REPLAY)

static const char *const buckets[] = { "1m", "5m", "1h", NULL };
static const int bucket_minutes[] = { 1, 5, 60 };

/* The default format spelled out (or by its aliases) is the default. */
static char *
normal_time_format (const char *text)
{
  g_autofree char *normal = kt_parser_time_format_normal (text);

  return g_str_equal (normal, "%Y-%m-%d %H:%M:%S") ? g_strdup ("") : g_steal_pointer (&normal);
}

/* Text lines are the default: spelled out, they are what was never given. */
static char *
normal_input (const char *text)
{
  return g_strdup (g_str_equal (text, "text") ? "" : text);
}

/* A field path's one spelling (field-path.h). */
static char *
normal_path (const char *text)
{
  return kt_field_path_normal (text);
}

static gint
compare_items (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

/* --by and --sum: each field's path in its one spelling, sorted, each
 * once (their order and repeats mean nothing to what a row is). */
static char *
normal_paths (const char *text)
{
  g_auto(GStrv) items = g_strsplit (text, ",", -1);
  g_autoptr(GPtrArray) normal = g_ptr_array_new_with_free_func (g_free);
  guint kept = 0;

  for (guint i = 0; items[i] != NULL; i++)
    g_ptr_array_add (normal, kt_field_path_normal (items[i]));
  g_ptr_array_sort (normal, compare_items);
  for (guint i = 0; i < normal->len; i++)
    if (kept == 0 || !g_str_equal (normal->pdata[kept - 1], normal->pdata[i]))
      {
        char *item = normal->pdata[i];

        normal->pdata[i] = normal->pdata[kept];
        normal->pdata[kept++] = item;
      }
  g_ptr_array_set_size (normal, (gint) kept);
  g_ptr_array_add (normal, NULL);
  return g_strjoinv (",", (char **) normal->pdata);
}

const KtOption kt_count_option_rows[] = {
  { "input", 0, "parse", KT_OPT_WORD, AT (input), .words = kt_input_names, .fallback = "text",
    .commands = JOB_CMDS, .identity = "table.input", .normal = normal_input,
    .metavar = "FORMAT",
    .help = "What a record holds: text lines (read by --pattern), json (an object a "
            "line), logfmt (key=value pairs a line) or otlp-json (OpenTelemetry's logs, "
            "each log record of a request; the Collector's otlp_proto is not read)" },
  { "time-field", 0, "parse", KT_OPT_TEXT, AT (time_field), .commands = JOB_CMDS,
    .fallback_doc = "json: @timestamp, timestamp, time, ts or Timestamp; logfmt: ts, time, "
                    "timestamp or @timestamp (the first found)",
    .identity = "table.time_field", .normal = normal_path, .metavar = "PATH",
    .help = "json and logfmt: the path of the record's time (service.name is a member "
            "of a member; log\\.level one member named log.level): RFC 3339, or epoch "
            "seconds, milliseconds or nanoseconds by the number's size" },
  { "level-field", 0, "parse", KT_OPT_TEXT, AT (level_field), .commands = JOB_CMDS,
    .fallback_doc = "json: log.level, level, severity, severity_text, SeverityText, "
                    "severity_number or SeverityNumber; logfmt: level, lvl, severity or "
                    "log.level (the first found)",
    .identity = "table.level_field", .normal = normal_path, .metavar = "PATH",
    .help = "json and logfmt: the path of the record's level, compared with --levels "
            "without regard to case; numbers named as pino's (10-60) or, from a field "
            "named severityNumber, OpenTelemetry's (1-24)" },
  { "pattern", 0, "parse", KT_OPT_TEXT, AT (pattern), .commands = JOB_CMDS,
    .fallback_doc = "YYYY-MM-DD HH:MM:SS LEVEL ...", .identity = "table.pattern",
    .metavar = "REGEX",
    .help = "Another line format (text lines): a pcre2 pattern with the named groups "
            "(?<time>...) and (?<level>...)" },
  { "time-format", 0, "parse", KT_OPT_TEXT, AT (time_format), .commands = JOB_CMDS,
    .fallback_doc = "%Y-%m-%d %H:%M:%S", .identity = "table.time_format",
    .normal = normal_time_format, .metavar = "FORMAT",
    .help = "How the time group reads: strptime-style (%Y %m %d %H %M %S %b %e %T %F; "
            "the month, day, hour and minute at least, and without %Y the year as "
            "syslog's), iso8601 (offsets converted to UTC) or syslog (%b %e %H:%M:%S, "
            "no year: the latest that puts the line at most a day ahead)" },
  { "levels", 0, "parse", KT_OPT_LIST, AT (levels), .fallback = "ERROR",
    .commands = JOB_CMDS, .flags = KT_OPT_SET, .identity = "table.levels",
    .metavar = "A,B,...",
    .help = "The levels counted, exactly as written (structured inputs: whatever the ASCII "
            "case)" },
  { "bucket", 0, "parse", KT_OPT_WORD, AT (bucket), .words = buckets,
    .values = bucket_minutes, .fallback = "1m", .commands = JOB_CMDS,
    .identity = "table.bucket", .metavar = "SIZE", .help = "Count per minute, 5 minutes or hour" },
  { "by", 0, "parse", KT_OPT_LIST, AT (dimensions), .commands = JOB_CMDS, .flags = KT_OPT_SET,
    .identity = "table.dimensions", .normal = normal_paths, .metavar = "FIELD,...",
    .help = "Count per bucket and these fields: 'level' or named groups of --pattern; "
            "with a structured --input, 'level' or field paths (service.name: column "
            "service_name); each a key column of the table (VARBINARY, values cut at 255 "
            "bytes)" },
  { "sum", 0, "parse", KT_OPT_LIST, AT (sums), .commands = JOB_CMDS, .flags = KT_OPT_SET,
    .identity = "table.sums", .normal = normal_paths, .metavar = "FIELD,...",
    .help = "Also add up these numeric named groups of --pattern (or field paths), "
            "exactly, in a sum_FIELD column each ([-]digits[.digits], at most 4 decimals, "
            "a JSON number or a string of one; anything else makes the line malformed)" },
  { "max-keys", 0, "parse", KT_OPT_INT, AT (max_keys), .fallback = "10000", .min = 1,
    .max = 10000000, .commands = JOB_CMDS, .needs = "by", .metavar = "N",
    .help = "With --by: at most N keys per bucket per batch get rows of their own; the "
            "rest are counted in one (other) row per bucket" },
  { "dead-letters", 0, "parse", KT_OPT_TABLE, AT (dead_letters), .commands = JOB_CMDS,
    .metavar = "TABLE",
    .help = "Keep each malformed line in this table (created if absent): its topic, "
            "partition, offset and line number, its bytes (up to 2048) and why, written in "
            "the batch's transaction, each line once whatever reads it again" },
  { "dead-letters-max", 0, "parse", KT_OPT_INT, AT (dead_letters_max), .fallback = "1000",
    .min = 1, .max = 1000000, .commands = JOB_CMDS, .needs = "dead-letters", .metavar = "N",
    .help = "With --dead-letters: at most N malformed lines kept per batch; the rest are "
            "counted (the batch's log record, ktally_dead_letters_total)" },

  KT_OPTION_END
};

/* Whether @name is a pcre2 group name that is also a plain column name:
 * [A-Za-z_][A-Za-z0-9_]*, at most 32 characters (pcre2's limit). */
static gboolean
is_field_name (const char *name)
{
  return kt_is_ascii_name (name, NULL, 32) && !g_ascii_isdigit (*name);
}

/* --by or --sum (@flag): fields, each its own column (column names compare
 * without case), at most @max: names of --pattern's groups for text lines,
 * field paths for a structured input (@structured). */
static gboolean
check_fields (const char *flag, char **fields, guint max, gboolean structured, GError **error)
{
  /* Columns of ktally's own in a count table (sql/counts.sql) or its
   * per-topic table (sql/idempotent.sql; `partition` was one of it before
   * schema version 4): a field of that name would be a second column. */
  static const char *const taken[] = { "log_time", "log_count", "job", "topic", "partition",
                                       "time", NULL };
  guint n = fields != NULL ? g_strv_length (fields) : 0;
  g_auto(GStrv) columns = g_new0 (char *, n + 1);
  const char *rename = structured ? "name it by another path" : "rename the group";

  if (n > max)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "%s: at most %u fields, got %u", flag,
                   max, n);
      return FALSE;
    }
  for (guint i = 0; i < n; i++)
    {
      const char *f = fields[i];
      const char *c;

      if (structured)
        {
          g_auto(GStrv) names = kt_field_path_parse (flag, f, error);

          if (names == NULL)
            return FALSE;
        }
      else if (!is_field_name (f))
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                       "%s: '%s' is not a field name ([A-Za-z_][A-Za-z0-9_]*, at most 32 "
                       "characters, the name of a group of --pattern)", flag, f);
          return FALSE;
        }
      c = columns[i] = kt_field_column (f);
      /* sum_ and the column: MySQL's 64 characters. */
      if (strlen (c) > 60)
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "%s: '%s' gives the column %s, longer "
                       "than 60 characters", flag, f, c);
          return FALSE;
        }
      for (const char *const *t = taken; *t != NULL; t++)
        if (g_ascii_strcasecmp (c, *t) == 0)
          {
            g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                         g_str_equal (*t, "time")
                         ? "%s: '%s': the time is the bucket, the first key already"
                         : "%s: '%s' is a column ktally writes itself; %s",
                         flag, f, rename);
            return FALSE;
          }
      if (g_ascii_strncasecmp (c, "sum_", 4) == 0)
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                       "%s: '%s': names starting with sum_ are the columns of --sum; %s",
                       flag, f, rename);
          return FALSE;
        }
      for (guint j = 0; j < i; j++)
        if (g_ascii_strcasecmp (c, columns[j]) == 0)
          {
            if (g_ascii_strcasecmp (f, fields[j]) == 0)
              g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                           "%s: '%s' given twice (column names do not tell case apart)", flag,
                           f);
            else
              g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                           "%s: '%s' and '%s' both give the column %s (column names do not "
                           "tell case apart)", flag, fields[j], f, c);
            return FALSE;
          }
    }
  return TRUE;
}

gboolean
kt_counts_check (gconstpointer options, GError **error)
{
  const KtCountOptions *config = options;

  gboolean structured = config->input != KT_INPUT_TEXT;

  if (!check_fields ("--by", config->dimensions, KT_MAX_DIMENSIONS, structured, error)
      || !check_fields ("--sum", config->sums, KT_MAX_SUMS, structured, error))
    return FALSE;
  if (config->dead_letters != NULL && kt_schema_own_table (config->dead_letters))
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "--dead-letters: %s is the name of one of "
                   "ktally's own tables: give another", config->dead_letters);
      return FALSE;
    }
  for (char **s = config->sums; s != NULL && *s != NULL; s++)
    if (g_str_equal (*s, "level"))
      {
        g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE,
                             "--sum: 'level' is not a number; --sum adds up numeric "
                             "fields");
        return FALSE;
      }
  /* What the parser refuses (a pattern that does not compile or lacks a
   * group, a time format that cannot place a line in time, --by and --sum
   * against the pattern): refused with the other options, so that
   * `config --check` refuses exactly what `run` does, before either
   * reaches Kafka or MySQL. */
  {
    g_autoptr(KtParser) parser = kt_counts_parser (config, error);

    return parser != NULL;
  }
}

KtParser *
kt_counts_parser (const KtCountOptions *config, GError **error)
{
  KtParseFormat format = {
    .input = (KtInput) config->input,
    .pattern = config->pattern,
    .time_format = config->time_format,
    .levels = (const char *const *) config->levels,
    .bucket = config->bucket,
    .dimensions = (const char *const *) config->dimensions,
    .sums = (const char *const *) config->sums,
    .time_field = config->time_field,
    .level_field = config->level_field,
  };

  return kt_parser_new_format (&format, error);
}

/* The columns of @fields (NULL: none), a new array. */
static char **
columns (char **fields)
{
  char **out;
  guint n;

  if (fields == NULL)
    return NULL;
  n = g_strv_length (fields);
  out = g_new0 (char *, n + 1);
  for (guint i = 0; i < n; i++)
    out[i] = kt_field_column (fields[i]);
  return out;
}

void
kt_counts_shape (const KtCountOptions *config, KtCountsShape *out)
{
  *out = (KtCountsShape) { (const char *const *) columns (config->dimensions),
                           (const char *const *) columns (config->sums) };
}

void
kt_counts_shape_clear (KtCountsShape *shape)
{
  g_strfreev ((char **) shape->dimensions);
  g_strfreev ((char **) shape->sums);
  *shape = (KtCountsShape) { NULL, NULL };
}

static gboolean
plain (const KtCountsShape *shape)
{
  return shape->dimensions == NULL && shape->sums == NULL;
}

/* What a job of @idempotent mode writes at @output, where it is, must be
 * what that mode writes, before anything is created: a table in @shape
 * (transactional); a table @output_topic in @shape per job and topic and
 * ktally's view @output over it, of @shape's columns (idempotent). */
static gboolean
check_output (KtDb *db, gboolean idempotent, const char *output, const KtCountsShape *shape,
              GError **error)
{
  g_autofree char *topics = g_strconcat (output, KT_TOPIC_SUFFIX, NULL);
  g_autofree char *hint = NULL;

  if (!idempotent)
    return kt_schema_check_object (db, output, NULL, "a transactional job counts into a "
                                   "table; give another --table", error)
           && kt_schema_check_counts_table (db, output, shape, FALSE, error);
  hint = g_strdup_printf ("idempotent mode writes %s and a view %s over it; give another "
                          "--table", topics, output);
  /* The view's columns before what it reads: a view of other columns says
   * which. */
  return kt_schema_check_object (db, topics, NULL, hint, error)
         && kt_schema_check_counts_table (db, topics, shape, TRUE, error)
         && kt_schema_check_counts_view (db, output, shape, error)
         && kt_schema_check_object (db, output, topics, hint, error);
}

/* Refuses a count table named like one of ktally's own tables, where it
 * would be created, or where that name holds what is not a count table
 * of this job (ktally's table, as it is): a job over kafka_offset, or an
 * idempotent job's error_log_topic that takes the default job's place. A
 * count table an older ktally made there (@made: it exists and passed
 * check_output()) stays its job's. */
static gboolean
check_own_names (KtDb *db, gboolean idempotent, const char *output, gboolean made,
                 GError **error)
{
  g_autofree char *topics = g_strconcat (output, KT_TOPIC_SUFFIX, NULL);
  /* error_log_topic is the default idempotent job's. */
  const char *own = kt_schema_own_table (output) ? output
                    : idempotent && !g_str_equal (output, "error_log")
                      && kt_schema_own_table (topics) ? topics : NULL;

  if (own == NULL || made)
    return TRUE;
  g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
               "%s: %s is the name of one of ktally's own tables, not of a count table: give "
               "another --table", kt_db_name (db), own);
  return FALSE;
}

/* Idempotent mode: @output is a view over @output_topic, both checked. */
static gboolean
prepare_idempotent (KtDb *db, const char *output, const char *target,
                    const KtCountsShape *shape, GError **error)
{
  static const char *const defaults[] = { "error_log", "error_log" KT_TOPIC_SUFFIX, NULL };
  g_autofree char *topics = g_strconcat (output, KT_TOPIC_SUFFIX, NULL);

  if (g_str_equal (output, "error_log") && plain (shape))
    return kt_schema_prepare (db, KT_TABLES_IDEMPOTENT, "idempotent-mode", error)
           && check_output (db, TRUE, output, shape, error);
  /* The covered sets; error_log and its table are their jobs' (whose
   * shape they check): a job of another table leaves them alone. */
  if (!kt_schema_prepare_except (db, KT_TABLES_IDEMPOTENT, "idempotent-mode", defaults, error))
    return FALSE;
  if (target == NULL)
    g_message ("creating table %s and view %s in %s", topics, output, kt_db_name (db));
  /* Checked again after: a job starting meanwhile may have made them in
   * its own shape, and CREATE ... IF NOT EXISTS leaves those. */
  return kt_schema_create_counts_topics (db, output, shape, error)
         && check_output (db, TRUE, output, shape, error);
}

gboolean
kt_counts_prepare (KtDb *db, gboolean idempotent, const char *output,
                   const KtCountsShape *shape, GError **error)
{
  g_autofree char *error_log = NULL;
  g_autofree char *target = NULL;
  g_autoptr(GError) local = NULL;
  gboolean is_view, ok;

  if (!kt_db_table_type (db, "error_log", &error_log, error)
      || !kt_db_table_type (db, output, &target, error))
    return FALSE;
  is_view = g_strcmp0 (error_log, "VIEW") == 0;
  /* A replay into a table of its own does not care whose error_log it is. */
  if (error_log != NULL && is_view != idempotent
      && (idempotent || g_str_equal (output, "error_log")))
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                   "%s: error_log is %s, so this database belongs to %s-mode jobs; "
                   "use another database for a %s job", kt_db_name (db),
                   is_view ? "a view over idempotent counts" : "a table",
                   is_view ? "idempotent" : "transactional",
                   idempotent ? "idempotent" : "transactional");
      return FALSE;
    }
  /* Every object the job writes, before anything is created; ktally's
   * own name says more than its shape would. */
  ok = check_output (db, idempotent, output, shape, &local);
  if (!ok && !g_error_matches (local, KT_ERROR, KT_ERROR_USAGE))
    {
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  if (!check_own_names (db, idempotent, output, ok && target != NULL, error))
    return FALSE;
  if (!ok)
    {
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  if (idempotent)
    return prepare_idempotent (db, output, target, shape, error);
  if (g_str_equal (output, "error_log") && plain (shape))
    return kt_schema_prepare (db, KT_TABLES_COUNTS, "transactional-mode", error);
  /* A table of its own (or error_log in the job's shape); error_log is its
   * jobs' (whose shape they check): this job leaves it alone. */
  if (target == NULL)
    g_message ("creating table %s in %s", output, kt_db_name (db));
  /* Checked again after: a job starting meanwhile may have made it in its
   * own shape, and CREATE ... IF NOT EXISTS leaves that. */
  return kt_schema_create_counts_table (db, output, shape, error)
         && check_output (db, FALSE, output, shape, error);
}

gboolean
kt_counts_prepare_job (KtDb *db, gboolean idempotent, const char *output,
                       const KtCountsShape *shape, const char *dead_letters, GError **error)
{
  return (dead_letters == NULL
          || kt_dead_letters_prepare (db, dead_letters, output, FALSE, error))
         && kt_counts_prepare (db, idempotent, output, shape, error)
         && (dead_letters == NULL
             || kt_dead_letters_prepare (db, dead_letters, output, TRUE, error));
}

KtCounts *
kt_counts_new (const KtCountOptions *config, gint32 partition, KtKeyLimit *limit)
{
  KtCounts *self = g_new0 (KtCounts, 1);

  self->partition = partition;
  if (config->dimensions == NULL && config->sums == NULL)
    self->minutes = kt_reducer_new ();
  else
    {
      g_return_val_if_fail (limit != NULL, NULL);
      self->keyed = kt_keyed_counts_new (partition, config->sums != NULL
                                               ? g_strv_length (config->sums) : 0, limit);
    }
  return self;
}

void
kt_counts_free (KtCounts *self)
{
  if (self == NULL)
    return;
  kt_reducer_free (self->minutes);
  kt_keyed_counts_free (self->keyed);
  g_free (self);
}

void
kt_counts_clear (KtCounts *self)
{
  if (self->minutes != NULL)
    kt_reducer_clear (self->minutes);
  else
    kt_keyed_counts_clear (self->keyed);
}

guint
kt_counts_size (KtCounts *self)
{
  return self->minutes != NULL ? kt_reducer_size (self->minutes)
                               : kt_keyed_counts_size (self->keyed);
}

void
kt_counts_take (KtParser *parser, KtCounts *counts, gint32 partition, gint64 offset,
                const char *value, gsize len, KtRangeStats *stats, KtBatchSummary *summary)
{
  KtParseCounts mine = { 0 };
  const char *bad = NULL;
  gsize bad_len = 0;
  guint64 malformed = counts->minutes != NULL
    ? kt_parser_value (parser, value, len, counts->minutes, &mine, &bad, &bad_len)
    : kt_parser_value_keyed (parser, value, len, counts->keyed, &mine, &bad, &bad_len);

  if (malformed > 0 && !summary->have_sample)
    {
      summary->have_sample = TRUE;
      summary->sample_partition = partition;
      summary->sample_offset = offset;
      g_strlcpy (summary->sample_why, "malformed line", sizeof summary->sample_why);
      memcpy (summary->sample, bad, MIN (bad_len, KT_SAMPLE_BYTES));
      summary->sample[MIN (bad_len, KT_SAMPLE_BYTES)] = '\0';
    }
  summary->lines += mine.lines;
  summary->counted += mine.errors;
  summary->malformed += mine.malformed;
  stats->records++;
  stats->lines += mine.lines;
  stats->errors += mine.errors;
  stats->malformed += mine.malformed;
}

/* The rows of @counts, sorted: plain minutes as rows without key or sums. */
static GArray *
counts_rows (KtCounts *counts)
{
  g_autoptr(GArray) minutes = NULL;
  GArray *rows;

  if (counts->keyed != NULL)
    return kt_keyed_counts_sorted (counts->keyed);
  minutes = kt_reducer_sorted (counts->minutes);
  rows = g_array_sized_new (FALSE, FALSE, sizeof (KtKeyedRow), minutes->len);
  for (guint i = 0; i < minutes->len; i++)
    {
      const KtMinuteCount *mc = &g_array_index (minutes, KtMinuteCount, i);
      KtKeyedRow row = { counts->partition, mc->minute, FALSE, (const guint8 *) "", 0,
                         mc->count, NULL };

      g_array_append_val (rows, row);
    }
  return rows;
}

/* "INSERT INTO `table` (columns) VALUES " */
static void
start_insert (GString *sql, const char *table, const KtCountsShape *shape, gboolean topics)
{
  /* The names are identifiers the CLI checked: quoting them is enough. */
  g_string_printf (sql, "INSERT INTO `%s` (%slog_time", table, topics ? "job, topic, " : "");
  for (const char *const *d = shape->dimensions; d != NULL && *d != NULL; d++)
    g_string_append_printf (sql, ", `%s`", *d);
  g_string_append (sql, ", log_count");
  for (const char *const *m = shape->sums; m != NULL && *m != NULL; m++)
    g_string_append_printf (sql, ", `sum_%s`", *m);
  g_string_append (sql, ") VALUES ");
}

/* " ON DUPLICATE KEY UPDATE ...", then runs it. */
static gboolean
finish_insert (KtDb *db, GString *sql, const KtCountsShape *shape, const char *table,
               GError **error)
{
  g_autofree char *what = g_strdup_printf ("cannot write the counts to %s", table);

  g_string_append (sql, " ON DUPLICATE KEY UPDATE log_count = log_count + VALUES(log_count)");
  for (const char *const *m = shape->sums; m != NULL && *m != NULL; m++)
    g_string_append_printf (sql, ", `sum_%s` = `sum_%s` + VALUES(`sum_%s`)", *m, *m, *m);
  return kt_db_run (db, sql->str, what, error);
}

/* A row's key columns: ",X'..'" each, or ",'(other)'" each for the
 * (other) row. Hex literals: any bytes (NUL, invalid UTF-8) reach the
 * VARBINARY column as they are, whatever the connection's character set. */
static void
append_key (GString *sql, const KtKeyedRow *row, guint n_dims)
{
  static const char hex[] = "0123456789ABCDEF";
  const guint8 *k = row->key, *end = row->key + row->key_len;

  for (guint i = 0; i < n_dims; i++)
    {
      if (row->other)
        {
          g_string_append (sql, ",'" KT_OTHER_KEY "'");
          continue;
        }
      g_assert (k < end);
      g_string_append (sql, ",X'");
      for (guint b = 0; b < k[0]; b++)
        {
          g_string_append_c (sql, hex[k[1 + b] >> 4]);
          g_string_append_c (sql, hex[k[1 + b] & 15]);
        }
      g_string_append_c (sql, '\'');
      k += 1 + k[0];
    }
}

/* One row's values: "(prefix'YYYY-MM-DD HH:MM:00', keys, count, sums)". */
static void
append_row (GString *sql, const KtKeyedRow *row, const char *prefix, guint n_dims,
            guint n_sums)
{
  char when[20], sum[48];

  kt_minute_format (row->bucket, when);
  g_string_append_printf (sql, "(%s'%s'", prefix, when);
  append_key (sql, row, n_dims);
  g_string_append_printf (sql, ",%" G_GUINT64_FORMAT, row->count);
  for (guint i = 0; i < n_sums; i++)
    {
      kt_sum_format (row->sums[i], sum);
      g_string_append_printf (sql, ",%s", sum);
    }
  g_string_append_c (sql, ')');
}

/* Every row of @parts in one sorted array (the pointers are the parts'). */
static GArray *
all_rows (KtCounts *const *parts, guint n)
{
  GArray *rows = g_array_new (FALSE, FALSE, sizeof (KtKeyedRow));

  for (guint i = 0; i < n; i++)
    {
      g_autoptr(GArray) sorted = counts_rows (parts[i]);

      g_array_append_vals (rows, sorted->data, sorted->len);
    }
  if (n > 1)
    g_array_sort (rows, kt_keyed_row_compare);
  return rows;
}

/* Folds rows[*at] and the equal rows after it (the same bucket and key
 * from other partitions) into @out, whose sums are @sums; moves *at past
 * them. */
static void
fold_equal (GArray *rows, guint *at, guint n_sums, KtSum *sums, KtKeyedRow *out)
{
  const KtKeyedRow *first = &g_array_index (rows, KtKeyedRow, *at);

  *out = *first;
  out->sums = sums;
  for (guint s = 0; s < n_sums; s++)
    sums[s] = first->sums[s];
  for ((*at)++; *at < rows->len; (*at)++)
    {
      const KtKeyedRow *next = &g_array_index (rows, KtKeyedRow, *at);

      if (kt_keyed_row_compare (first, next) != 0)
        break;
      out->count += next->count;
      for (guint s = 0; s < n_sums; s++)
        sums[s] += next->sums[s];
    }
}

gboolean
kt_counts_upsert (KtDb *db, const char *table, const KtCountsShape *shape, const char *job,
                  const char *topic, KtCounts *const *parts, guint n, GError **error)
{
  g_autoptr(GString) sql = g_string_new (NULL);
  g_autoptr(GString) prefix = g_string_new (NULL);  /* 'job','topic', */
  g_autoptr(GArray) rows = all_rows (parts, n);
  guint n_dims = shape->dimensions != NULL ? g_strv_length ((char **) shape->dimensions) : 0;
  guint n_sums = shape->sums != NULL ? g_strv_length ((char **) shape->sums) : 0;
  g_autofree KtSum *sums = g_new0 (KtSum, MAX (n_sums, 1));
  guint statement = 0;

  if (job != NULL)
    {
      kt_db_quote (db, prefix, job);
      g_string_append_c (prefix, ',');
      kt_db_quote (db, prefix, topic);
      g_string_append_c (prefix, ',');
    }
  for (guint at = 0; at < rows->len;)
    {
      KtKeyedRow row;

      fold_equal (rows, &at, n_sums, sums, &row);
      if (statement == 0)
        start_insert (sql, table, shape, job != NULL);
      else
        g_string_append_c (sql, ',');
      append_row (sql, &row, prefix->str, n_dims, n_sums);
      if (++statement == UPSERT_ROWS || sql->len >= UPSERT_BYTES)
        {
          if (!finish_insert (db, sql, shape, table, error))
            return FALSE;
          statement = 0;
        }
    }
  return statement == 0 || finish_insert (db, sql, shape, table, error);
}

/* "(log_time, `d1`, ...)" of @shape */
static void
append_key_columns (GString *sql, const KtCountsShape *shape)
{
  g_string_append (sql, "(log_time");
  for (const char *const *d = shape->dimensions; d != NULL && *d != NULL; d++)
    g_string_append_printf (sql, ", `%s`", *d);
  g_string_append_c (sql, ')');
}

/* "('YYYY-MM-DD HH:MM:00',X'..',...)": a row's key as a row value. */
static void
append_key_value (GString *sql, const KtKeyedRow *row, guint n_dims)
{
  char when[20];

  kt_minute_format (row->bucket, when);
  g_string_append_printf (sql, "('%s'", when);
  append_key (sql, row, n_dims);
  g_string_append_c (sql, ')');
}

/* The lookup key of a row: its bucket's text, then each key column as a
 * length byte and the bytes (KtKeyedRow's key). New string. */
static GString *
key_of_row (const KtKeyedRow *row)
{
  char when[20];
  GString *key;

  kt_minute_format (row->bucket, when);
  key = g_string_new (when);
  g_string_append_len (key, (const char *) row->key, (gssize) row->key_len);
  return key;
}

/* The same from a row read back: log_time, then the key columns. */
static GString *
key_of_result (const char *const *row, const unsigned long *lengths, guint n_dims)
{
  GString *key = g_string_new (row[0]);

  for (guint i = 0; i < n_dims; i++)
    {
      g_string_append_c (key, (char) MIN (lengths[1 + i], 255));
      g_string_append_len (key, row[1 + i] != NULL ? row[1 + i] : "", (gssize) lengths[1 + i]);
    }
  return key;
}

/* What the table holds of @rows[@from, @until) (FOR UPDATE when @lock)
 * into @held: key -> the row's columns after the keys, "count\tsum..." */
static gboolean
read_held (KtDb *db, const char *table, const KtCountsShape *shape, const GArray *rows,
           guint from, guint until, gboolean lock, GHashTable *held, GError **error)
{
  guint n_dims = shape->dimensions != NULL ? g_strv_length ((char **) shape->dimensions) : 0;
  guint n_sums = shape->sums != NULL ? g_strv_length ((char **) shape->sums) : 0;
  g_autoptr(GString) sql = g_string_new ("SELECT log_time");
  g_autoptr(KtDbRows) res = NULL;
  g_autofree char *what = g_strdup_printf ("cannot read the counts of %s", table);
  const char *const *row;

  for (const char *const *d = shape->dimensions; d != NULL && *d != NULL; d++)
    g_string_append_printf (sql, ", `%s`", *d);
  g_string_append (sql, ", log_count");
  for (const char *const *m = shape->sums; m != NULL && *m != NULL; m++)
    g_string_append_printf (sql, ", `sum_%s`", *m);
  g_string_append_printf (sql, " FROM `%s` WHERE ", table);
  append_key_columns (sql, shape);
  g_string_append (sql, " IN (");
  for (guint i = from; i < until; i++)
    {
      if (i > from)
        g_string_append_c (sql, ',');
      append_key_value (sql, &g_array_index (rows, KtKeyedRow, i), n_dims);
    }
  g_string_append (sql, lock ? ") FOR UPDATE" : ")");
  res = kt_db_rows_select (db, sql->str, what, error);
  if (res == NULL)
    return FALSE;
  while ((row = kt_db_rows_next (res)) != NULL)
    {
      GString *key = key_of_result (row, kt_db_rows_lengths (res), n_dims);
      GString *value = g_string_new (row[1 + n_dims]);

      for (guint i = 0; i < n_sums; i++)
        g_string_append_printf (value, "\t%s", row[2 + n_dims + i]);
      g_hash_table_replace (held, g_string_free (key, FALSE), g_string_free (value, FALSE));
    }
  return TRUE;
}

/* Whether one of the buckets of @rows[@from, @until) has an (other) row. */
static gboolean
find_other (KtDb *db, const char *table, const KtCountsShape *shape, const GArray *rows,
            guint from, guint until, char **bucket, GError **error)
{
  g_autoptr(GString) sql = g_string_new ("SELECT log_time FROM ");
  g_autoptr(KtDbRows) res = NULL;
  g_autofree char *what = g_strdup_printf ("cannot read the counts of %s", table);
  const char *const *row;

  g_string_append_printf (sql, "`%s` WHERE log_time IN (", table);
  for (guint i = from; i < until; i++)
    {
      char when[20];

      kt_minute_format (g_array_index (rows, KtKeyedRow, i).bucket, when);
      g_string_append_printf (sql, "%s'%s'", i > from ? "," : "", when);
    }
  g_string_append_c (sql, ')');
  for (const char *const *d = shape->dimensions; d != NULL && *d != NULL; d++)
    g_string_append_printf (sql, " AND `%s` = '" KT_OTHER_KEY "'", *d);
  g_string_append (sql, " LIMIT 1");
  res = kt_db_rows_select (db, sql->str, what, error);
  if (res == NULL)
    return FALSE;
  row = kt_db_rows_next (res);
  *bucket = row != NULL ? g_strdup (row[0]) : NULL;
  return TRUE;
}

/* A row of @rows against what the table holds (@held): it must be there
 * with at least the row's count, and reaching 0, with the row's sums. */
static gboolean
check_held (const char *table, const KtKeyedRow *row, guint n_sums, GHashTable *held,
            GError **error)
{
  g_autoptr(GString) key = key_of_row (row);
  const char *value = g_hash_table_lookup (held, key->str);
  g_autoptr(GString) want = g_string_new (NULL);
  char when[20];
  guint64 count;

  kt_minute_format (row->bucket, when);
  count = value != NULL ? g_ascii_strtoull (value, NULL, 10) : 0;
  g_string_printf (want, "%" G_GUINT64_FORMAT, row->count);
  for (guint i = 0; i < n_sums; i++)
    {
      char sum[48];

      kt_sum_format (row->sums[i], sum);
      g_string_append_printf (want, "\t%s", sum);
    }
  if (value != NULL && (count > row->count || g_str_equal (value, want->str)))
    return TRUE;
  g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
               "the range counted %" G_GUINT64_FORMAT " in %s's row of %s%s, which holds %s: "
               "the table is not what the job counted (rows edited or deleted?), and taking "
               "the range back would leave it wrong; refused", row->count, table, when,
               n_sums > 0 || row->key_len > 0 ? " (and its key)" : "",
               value == NULL ? "no such row" : count < row->count ? "less"
                                                                  : "other sums");
  return FALSE;
}

gboolean
kt_counts_retract (KtDb *db, const char *table, const KtCountsShape *shape, KtCounts *counts,
                   gboolean execute, guint *n_rows, GError **error)
{
  guint n_dims = shape->dimensions != NULL ? g_strv_length ((char **) shape->dimensions) : 0;
  guint n_sums = shape->sums != NULL ? g_strv_length ((char **) shape->sums) : 0;
  g_autoptr(GArray) rows = all_rows (&counts, 1);
  g_autoptr(GString) sql = g_string_new (NULL);
  g_autofree char *what = g_strdup_printf ("cannot take counts back from %s", table);

  *n_rows = rows->len;
  /* Checked first, all of them: nothing is written unless every row can
   * be taken back. The rows stay locked until the caller commits. */
  for (guint at = 0; at < rows->len; at += UPSERT_ROWS)
    {
      guint until = MIN (rows->len, at + UPSERT_ROWS);
      g_autoptr(GHashTable) held = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                          g_free);
      g_autofree char *other = NULL;

      if (n_dims > 0 && !find_other (db, table, shape, rows, at, until, &other, error))
        return FALSE;
      if (other != NULL)
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                       "%s's bucket %s has an (other) row: which keys its batches folded "
                       "past --max-keys depended on those batches, so what the range "
                       "counted per key cannot be taken back; refused", table, other);
          return FALSE;
        }
      if (!read_held (db, table, shape, rows, at, until, execute, held, error))
        return FALSE;
      for (guint i = at; i < until; i++)
        if (!check_held (table, &g_array_index (rows, KtKeyedRow, i), n_sums, held, error))
          return FALSE;
    }
  if (!execute)
    return TRUE;
  for (guint at = 0; at < rows->len; at += UPSERT_ROWS)
    {
      guint until = MIN (rows->len, at + UPSERT_ROWS);

      /* Every row exists (checked, locked): the INSERT always updates. */
      start_insert (sql, table, shape, FALSE);
      for (guint i = at; i < until; i++)
        {
          if (i > at)
            g_string_append_c (sql, ',');
          append_row (sql, &g_array_index (rows, KtKeyedRow, i), "", n_dims, n_sums);
        }
      g_string_append (sql, " ON DUPLICATE KEY UPDATE log_count = log_count - "
                            "VALUES(log_count)");
      for (const char *const *m = shape->sums; m != NULL && *m != NULL; m++)
        g_string_append_printf (sql, ", `sum_%s` = `sum_%s` - VALUES(`sum_%s`)", *m, *m, *m);
      if (!kt_db_run (db, sql->str, what, error))
        return FALSE;
      g_string_printf (sql, "DELETE FROM `%s` WHERE log_count = 0 AND ", table);
      append_key_columns (sql, shape);
      g_string_append (sql, " IN (");
      for (guint i = at; i < until; i++)
        {
          if (i > at)
            g_string_append_c (sql, ',');
          append_key_value (sql, &g_array_index (rows, KtKeyedRow, i), n_dims);
        }
      g_string_append_c (sql, ')');
      if (!kt_db_run (db, sql->str, what, error))
        return FALSE;
    }
  return TRUE;
}

void
kt_counts_summarise (const KtCounts *counts, KtBatchSummary *summary)
{
  summary->folds = counts->keyed != NULL;
  if (counts->keyed != NULL)
    summary->folded += kt_keyed_counts_folded (counts->keyed);
  summary->folded_into = KT_OTHER_KEY;
  summary->folded_why = "their keys came past --max-keys in their bucket and batch";
}

void
kt_counts_line (const KtBatchSummary *summary, guint rows, int bucket, GString *line)
{
  g_autofree char *size = bucket == 60 ? g_strdup ("hour")
                          : bucket == 1 ? g_strdup ("minute")
                          : g_strdup_printf ("%d-minute", bucket);

  g_string_append_printf (line, "%" G_GUINT64_FORMAT " line%s, %" G_GUINT64_FORMAT " ERROR, %"
                          G_GUINT64_FORMAT " malformed, ", summary->lines,
                          summary->lines == 1 ? "" : "s", summary->counted, summary->malformed);
  if (summary->folds || summary->folded > 0)
    g_string_append_printf (line, "%u row%s", rows, rows == 1 ? "" : "s");
  else
    g_string_append_printf (line, "%u %s bucket%s", rows, size, rows == 1 ? "" : "s");
  if (summary->folded > 0)
    g_string_append_printf (line, " (%" G_GUINT64_FORMAT " lines past --max-keys counted "
                            "as (other))", summary->folded);
  if (summary->kept_in != NULL && summary->malformed > 0)
    g_string_append_printf (line, ", %" G_GUINT64_FORMAT " malformed kept in %s",
                            summary->kept, summary->kept_in);
  if (summary->dropped > 0)
    g_string_append_printf (line, " (%" G_GUINT64_FORMAT " past --dead-letters-max not kept)",
                            summary->dropped);
}

/* ---- --dead-letters ---------------------------------------------------------- */

/* The longest raw line kept (sql/dead-letters.sql's VARBINARY). */
#define DEAD_BYTES 2048
/* Rows per INSERT: 2048-byte lines as hex keep it near 4 MB. */
#define DEAD_ROWS 500

typedef struct
{
  gint32          partition;
  gint64          offset;
  guint           line_no;
  gsize           len;        /* the whole line's */
  KtMalformedWhy  why;
  guint8         *raw;        /* its first MIN (len, DEAD_BYTES) bytes */
} DeadLine;

struct _KtDeadLetters
{
  const char *table;
  guint64     max;
  GArray     *lines;     /* DeadLine */
  guint64     dropped;   /* past max */
  gint32      partition; /* the record being read */
  gint64      offset;
};

static void
dead_line_clear (gpointer data)
{
  g_free (((DeadLine *) data)->raw);
}

static void
dead_take (const char *line, gsize len, guint number, KtMalformedWhy why, gpointer data)
{
  KtDeadLetters *self = data;
  DeadLine dl = { self->partition, self->offset, number, len, why, NULL };

  if (self->lines->len >= self->max)
    {
      self->dropped++;
      return;
    }
  dl.raw = g_memdup2 (line, MIN (len, DEAD_BYTES));
  g_array_append_val (self->lines, dl);
}

KtDeadLetters *
kt_dead_letters_new (const KtCountOptions *options, KtParser *parser)
{
  KtDeadLetters *self;

  if (options->dead_letters == NULL)
    return NULL;
  self = g_new0 (KtDeadLetters, 1);
  self->table = options->dead_letters;
  self->max = (guint64) options->dead_letters_max;
  self->lines = g_array_new (FALSE, FALSE, sizeof (DeadLine));
  g_array_set_clear_func (self->lines, dead_line_clear);
  kt_parser_set_malformed_func (parser, dead_take, self);
  return self;
}

void
kt_dead_letters_free (KtDeadLetters *self)
{
  if (self == NULL)
    return;
  g_array_unref (self->lines);
  g_free (self);
}

void
kt_dead_letters_clear (KtDeadLetters *self)
{
  if (self == NULL)
    return;
  g_array_set_size (self->lines, 0);
  self->dropped = 0;
}

void
kt_dead_letters_at (KtDeadLetters *self, gint32 partition, gint64 offset)
{
  if (self == NULL)
    return;
  self->partition = partition;
  self->offset = offset;
}

gboolean
kt_dead_letters_prepare (KtDb *db, const char *table, const char *output, gboolean create,
                         GError **error)
{
  g_autofree char *topics = g_strconcat (output, KT_TOPIC_SUFFIX, NULL);
  g_autofree char *type = NULL;

  if (g_str_equal (table, output) || g_str_equal (table, topics))
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "--dead-letters: %s is the job's own count "
                   "table: give another", table);
      return FALSE;
    }
  if (!kt_db_table_type (db, table, &type, error))
    return FALSE;
  if (!kt_schema_check_dead_letters (db, table, error))
    return FALSE;
  if (type != NULL || !create)
    return TRUE;
  g_message ("creating dead-letter table %s in %s", table, kt_db_name (db));
  /* Checked again after: a job starting meanwhile may have made it. */
  return kt_schema_create_dead_letters (db, table, error)
         && kt_schema_check_dead_letters (db, table, error);
}

static gint
dead_line_compare (gconstpointer a, gconstpointer b)
{
  const DeadLine *x = a, *y = b;

  if (x->partition != y->partition)
    return x->partition < y->partition ? -1 : 1;
  if (x->offset != y->offset)
    return x->offset < y->offset ? -1 : 1;
  return (x->line_no > y->line_no) - (x->line_no < y->line_no);
}

gboolean
kt_dead_letters_write (KtDeadLetters *self, KtDb *db, const char *job, const char *topic,
                       GError **error)
{
  static const char hex[] = "0123456789ABCDEF";
  g_autoptr(GString) sql = g_string_new (NULL);
  g_autoptr(GString) prefix = g_string_new ("(");
  g_autofree char *what = NULL;

  if (self == NULL || self->lines->len == 0)
    return TRUE;
  what = g_strdup_printf ("cannot write the malformed lines to %s", self->table);
  kt_db_quote (db, prefix, topic);
  g_array_sort (self->lines, dead_line_compare);
  for (guint at = 0; at < self->lines->len; at += DEAD_ROWS)
    {
      g_string_printf (sql, "INSERT INTO `%s` (topic, `partition`, `offset`, line_no, raw, "
                       "raw_bytes, reason, job) VALUES ", self->table);
      for (guint i = at; i < MIN (self->lines->len, at + DEAD_ROWS); i++)
        {
          const DeadLine *dl = &g_array_index (self->lines, DeadLine, i);

          g_string_append_printf (sql, "%s%s,%d,%" G_GINT64_FORMAT ",%u,X'", i > at ? "," : "",
                                  prefix->str, dl->partition, dl->offset, dl->line_no);
          /* Hex: any bytes (NUL, invalid UTF-8) reach VARBINARY as they are. */
          for (gsize b = 0; b < MIN (dl->len, DEAD_BYTES); b++)
            {
              g_string_append_c (sql, hex[dl->raw[b] >> 4]);
              g_string_append_c (sql, hex[dl->raw[b] & 15]);
            }
          g_string_append_printf (sql, "',%" G_GSIZE_FORMAT ",'%s',", dl->len,
                                  kt_malformed_why_name (dl->why));
          kt_db_quote (db, sql, job);
          g_string_append_c (sql, ')');
        }
      /* A line there already (read again) stays as it is: no error, and
       * unlike INSERT IGNORE no other error turned into a warning. */
      g_string_append (sql, " ON DUPLICATE KEY UPDATE line_no = line_no");
      if (!kt_db_run (db, sql->str, what, error))
        return FALSE;
    }
  return TRUE;
}

void
kt_dead_letters_summarise (KtDeadLetters *self, KtBatchSummary *summary)
{
  if (self == NULL)
    return;
  summary->kept_in = self->table;
  summary->kept = self->lines->len;
  summary->dropped = self->dropped;
}
