/* log.c - the writer behind every log record (log.h).
 *
 * GLib's records (g_message()...) and ours (KtLogEvent, with typed
 * fields) both end in write_record(): filtered by level, then handed to
 * journald (the text format under systemd) or formatted and written to
 * stderr (or stdout: --log-to), above the status line if there is one.
 * One mutex keeps lines whole when several threads log (topics,
 * librdkafka's threads). */
#include "log.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "error.h"

static const KtLogFormat *const formats[] = {
  &kt_log_format_text, &kt_log_format_json, &kt_log_format_logfmt,
};

static struct
{
  const KtLogFormat *format;
  gboolean           verbose, quiet;
  gboolean           journald;  /* the stream is the journal's */
  gboolean           tty;       /* stderr is a terminal */
  GMutex             lock;      /* the output and the status line */
  char              *status;    /* the status line shown, or NULL */
  FILE              *out;       /* where records go: stderr, or stdout; NULL: stderr */
} logger = { &kt_log_format_text, FALSE, FALSE, FALSE, FALSE, { 0 }, NULL, NULL };

struct _KtLogEvent
{
  GArray    *fields;   /* KtLogField; its strings are in @strings */
  GPtrArray *strings;
};

const KtLogFormat *
kt_log_format_lookup (const char *name, GError **error)
{
  for (gsize i = 0; i < G_N_ELEMENTS (formats); i++)
    if (g_str_equal (formats[i]->name, name))
      return formats[i];
  g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
               "--log-format: '%s' is not a log format (text, json or logfmt)", name);
  return NULL;
}

void
kt_log_init (void)
{
  logger.journald = g_log_writer_is_journald (fileno (stderr));
  logger.tty = isatty (fileno (stderr));
  g_log_set_writer_func (kt_log_writer, NULL, NULL);
}

void
kt_log_configure (const KtLogFormat *format, gboolean verbose, gboolean quiet, int to)
{
  logger.format = format != NULL ? format : &kt_log_format_text;
  logger.verbose = verbose;
  logger.quiet = quiet;
  logger.out = to == KT_LOG_TO_STDOUT ? stdout : stderr;
  logger.journald = g_log_writer_is_journald (fileno (logger.out));
}

void
kt_log_set_verbosity (gboolean verbose, gboolean quiet)
{
  g_atomic_int_set (&logger.verbose, verbose);
  g_atomic_int_set (&logger.quiet, quiet);
}

gboolean
kt_log_interactive (void)
{
  return logger.tty && !logger.journald && logger.format == &kt_log_format_text
         && (logger.out == NULL || logger.out == stderr);
}

/* Whether --verbose and --quiet let a record of @level through. */
static gboolean
wanted (GLogLevelFlags level)
{
  if ((level & (G_LOG_LEVEL_DEBUG | G_LOG_LEVEL_INFO)) && !g_atomic_int_get (&logger.verbose))
    return FALSE;
  if ((level & (G_LOG_LEVEL_MESSAGE | G_LOG_LEVEL_INFO)) && g_atomic_int_get (&logger.quiet))
    return FALSE;
  return TRUE;
}

/* The level's word in a record; the error that ends the process is
 * "error", which no GLib level maps to (G_LOG_LEVEL_ERROR is a bug that
 * aborts, like CRITICAL). */
static const char *
level_word (GLogLevelFlags level)
{
  if (level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL))
    return "critical";
  if (level & G_LOG_LEVEL_WARNING)
    return "warning";
  if (level & G_LOG_LEVEL_DEBUG)
    return "debug";
  return "info";
}

/* syslog's priorities, as journald files them. */
static int
priority_of (const char *level)
{
  static const struct { const char *level; int priority; } map[] = {
    { "error", 3 }, { "critical", 4 }, { "warning", 4 }, { "info", 5 }, { "debug", 7 },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (map); i++)
    if (g_str_equal (map[i].level, level))
      return map[i].priority;
  return 6;
}

/* Writes @line (and a newline) under the lock, above the status line. */
static void
put_line (const char *line)
{
  FILE *out = logger.out != NULL ? logger.out : stderr;

  g_mutex_lock (&logger.lock);
  if (logger.status != NULL)
    fputs ("\r\033[K", stderr);
  fputs (line, out);
  fputc ('\n', out);
  if (logger.status != NULL)
    fputs (logger.status, stderr);
  fflush (out);
  g_mutex_unlock (&logger.lock);
}

/* @record through journald, its fields upper-cased as journald wants
 * them (JOB=, BATCH=...), or FALSE if journald would not take it. */
static gboolean
to_journald (GLogLevelFlags level, const KtLogRecord *record)
{
  g_autoptr(GArray) fields = g_array_new (FALSE, FALSE, sizeof (GLogField));
  g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func (g_free);
  char priority[2] = { (char) ('0' + priority_of (record->level)), '\0' };
  GLogField f;

  f = (GLogField) { "PRIORITY", priority, -1 };
  g_array_append_val (fields, f);
  f = (GLogField) { "GLIB_DOMAIN", G_LOG_DOMAIN, -1 };
  g_array_append_val (fields, f);
  f = (GLogField) { "MESSAGE", record->message, -1 };
  g_array_append_val (fields, f);
  for (guint i = 0; i < record->n_fields; i++)
    {
      char *key = g_ascii_strup (record->fields[i].key, -1);
      g_ptr_array_add (keys, key);
      f = (GLogField) { key, record->fields[i].value, -1 };
      g_array_append_val (fields, f);
    }
  return g_log_writer_journald (level, (const GLogField *) (void *) fields->data, fields->len,
                                NULL) == G_LOG_WRITER_HANDLED;
}

/* Every record ends here. @glib_fields: the record as GLib gave it (then
 * journald gets it untouched), or NULL. */
static void
write_record (GLogLevelFlags level, const KtLogRecord *record, const GLogField *glib_fields,
              gsize n_glib_fields)
{
  g_autoptr(GString) line = g_string_new (NULL);

  if (logger.journald && logger.format == &kt_log_format_text)
    {
      if (glib_fields != NULL
          ? g_log_writer_journald (level, glib_fields, n_glib_fields, NULL)
            == G_LOG_WRITER_HANDLED
          : to_journald (level, record))
        return;
    }
  /* A machine format on the journal's stream: the "<N>" prefix gives the
   * line its priority (SyslogLevelPrefix=, on by default). */
  else if (logger.journald)
    g_string_append_printf (line, "<%d>", priority_of (record->level));
  logger.format->format (record, line);
  put_line (line->str);
}

/* GLib's own fields, which the formats leave out (the message and the
 * level are the record's). */
static gboolean
glib_internal (const char *key)
{
  static const char *const internal[] = {
    "MESSAGE", "PRIORITY", "GLIB_DOMAIN", "GLIB_OLD_LOG_API", "CODE_FILE", "CODE_LINE",
    "CODE_FUNC", "SYSLOG_IDENTIFIER", "MESSAGE_ID",
  };

  for (gsize i = 0; i < G_N_ELEMENTS (internal); i++)
    if (g_str_equal (internal[i], key))
      return TRUE;
  return FALSE;
}

GLogWriterOutput
kt_log_writer (GLogLevelFlags level, const GLogField *fields, gsize n_fields,
               gpointer user_data)
{
  g_autoptr(GArray) extra = g_array_new (FALSE, FALSE, sizeof (KtLogField));
  g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func (g_free);
  KtLogRecord record = { g_get_real_time (), level_word (level), "", NULL, 0 };

  (void) user_data;
  if (!wanted (level))
    return G_LOG_WRITER_HANDLED;
  for (gsize i = 0; i < n_fields; i++)
    {
      KtLogField f;

      if (g_str_equal (fields[i].key, "MESSAGE"))
        record.message = fields[i].value;
      if (glib_internal (fields[i].key) || fields[i].length != -1)
        continue;
      f = (KtLogField) { g_ascii_strdown (fields[i].key, -1), fields[i].value, FALSE, FALSE };
      g_ptr_array_add (keys, (char *) f.key);
      g_array_append_val (extra, f);
    }
  record.fields = (const KtLogField *) (void *) extra->data;
  record.n_fields = extra->len;
  write_record (level, &record, fields, n_fields);
  return G_LOG_WRITER_HANDLED;
}

KtLogEvent *
kt_log_event_new (const char *event)
{
  KtLogEvent *self = g_new0 (KtLogEvent, 1);

  self->fields = g_array_new (FALSE, FALSE, sizeof (KtLogField));
  self->strings = g_ptr_array_new_with_free_func (g_free);
  kt_log_event_string (self, "event", event);
  return self;
}

void
kt_log_event_free (KtLogEvent *self)
{
  if (self == NULL)
    return;
  g_clear_pointer (&self->fields, g_array_unref);
  g_clear_pointer (&self->strings, g_ptr_array_unref);
  g_free (self);
}

static void
add_field (KtLogEvent *self, const char *key, char *value, gboolean number)
{
  KtLogField f = { g_strdup (key), value, number, FALSE };

  g_ptr_array_add (self->strings, (char *) f.key);
  g_ptr_array_add (self->strings, value);
  g_array_append_val (self->fields, f);
}

void
kt_log_event_string (KtLogEvent *self, const char *key, const char *value)
{
  add_field (self, key, g_strdup (value != NULL ? value : ""), FALSE);
}

void
kt_log_event_json (KtLogEvent *self, const char *key, const char *json)
{
  add_field (self, key, g_strdup (json), FALSE);
  g_array_index (self->fields, KtLogField, self->fields->len - 1).json = TRUE;
}

void
kt_log_event_int (KtLogEvent *self, const char *key, gint64 value)
{
  add_field (self, key, g_strdup_printf ("%" G_GINT64_FORMAT, value), TRUE);
}

void
kt_log_event_double (KtLogEvent *self, const char *key, double value, int decimals)
{
  char format[8], buf[G_ASCII_DTOSTR_BUF_SIZE];

  /* NaN and infinities are no JSON numbers: 0 says as much here. */
  if (!isfinite (value))
    value = 0;
  g_snprintf (format, sizeof format, "%%.%df", CLAMP (decimals, 0, 9));
  add_field (self, key, g_strdup (g_ascii_formatd (buf, sizeof buf, format, value)), TRUE);
}

void
kt_log_event_emit (KtLogEvent *self, GLogLevelFlags level, const char *format, ...)
{
  g_autofree char *message = NULL;
  KtLogRecord record;
  va_list args;

  if (!wanted (level))
    return;
  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);
  record = (KtLogRecord) {
    g_get_real_time (), level_word (level), message,
    (const KtLogField *) (void *) self->fields->data, self->fields->len,
  };
  write_record (level, &record, NULL, 0);
}

void
kt_log_exit (int exit_status, const char *message)
{
  g_autoptr(KtLogEvent) e = kt_log_event_new ("exit");
  KtLogRecord record;

  kt_log_event_int (e, "exit_status", exit_status);
  record = (KtLogRecord) {
    g_get_real_time (), "error", message,
    (const KtLogField *) (void *) e->fields->data, e->fields->len,
  };
  /* G_LOG_LEVEL_CRITICAL only as journald's writer's flag: the record's
   * own PRIORITY field (3, err) is what it files. */
  write_record (G_LOG_LEVEL_CRITICAL, &record, NULL, 0);
}

void
kt_log_status (const char *line)
{
  if (!kt_log_interactive ())
    return;
  g_mutex_lock (&logger.lock);
  g_free (logger.status);
  logger.status = g_strdup (line);
  fprintf (stderr, "\r%s\033[K", line);
  fflush (stderr);
  g_mutex_unlock (&logger.lock);
}

void
kt_log_status_done (void)
{
  g_mutex_lock (&logger.lock);
  if (logger.status != NULL)
    {
      fputc ('\n', stderr);
      fflush (stderr);
      g_clear_pointer (&logger.status, g_free);
    }
  g_mutex_unlock (&logger.lock);
}
