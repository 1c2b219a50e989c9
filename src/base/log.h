/* log.h - how ktally's log records leave the process: --log-format.
 *
 * Modules log with g_message() and friends, or, for a line a machine
 * reads (a batch's figures, a data loss, the error that ends the
 * process), with a KtLogEvent: the same line for people, plus typed
 * fields (job, batch, records, lag...). main.c installs kt_log_writer()
 * as GLib's writer. Each record is written by the chosen format, one
 * small interface and one file each (log-text.c, log-json.c,
 * log-logfmt.c), one line on stderr; under systemd, the text format
 * hands records to journald instead, with their priority and fields
 * (JOB=, BATCH=...). Nothing here knows what a batch is. */
#pragma once
#include <glib.h>

/* One field of a record besides its time, level and message. */
typedef struct
{
  const char *key;     /* lower case, [a-z0-9_]: "job", "records", "exit_status" */
  const char *value;   /* as text: "logs", "12", "0.112" */
  gboolean    number;  /* a number (JSON writes it bare), not a string */
  gboolean    json;    /* JSON text (an array, an object): the json format
                        * writes it as it is, the others as a string */
} KtLogField;

/* One record, as a format sees it. */
typedef struct
{
  gint64            time;      /* wall clock, microseconds since the epoch */
  const char       *level;     /* "error", "critical", "warning", "info", "debug" */
  const char       *message;
  const KtLogField *fields;
  guint             n_fields;
} KtLogRecord;

typedef struct
{
  const char *name;  /* --log-format */
  /* Appends @record to @out as one line, without the newline; never
   * fails, whatever bytes the message holds. */
  void (*format) (const KtLogRecord *record, GString *out);
} KtLogFormat;

/* Where records go: --log-to. */
typedef enum
{
  KT_LOG_TO_STDERR,
  KT_LOG_TO_STDOUT,  /* a container's log stream: for commands that print nothing */
} KtLogTo;

/* How a command logs: --verbose, --quiet, --log-format, --log-to. */
typedef struct
{
  gboolean           verbose;
  gboolean           quiet;
  const KtLogFormat *format;  /* static; NULL: text */
  int                to;      /* KtLogTo */
} KtLogOptions;

extern const KtLogFormat kt_log_format_text, kt_log_format_json, kt_log_format_logfmt;

/* For the formats: @time (microseconds since the epoch) as RFC 3339 in
 * UTC with milliseconds, "2024-05-01T12:09:08.123Z". */
void kt_log_append_time (GString *out, gint64 time);
/* For the formats: @text in double quotes, valid UTF-8 whatever its bytes
 * (invalid ones become U+FFFD), with '"', '\\', \n, \r and \t escaped
 * and every other control (and DEL) as \u00XX: a JSON string, and the
 * quoted value of logfmt. */
void kt_log_append_quoted (GString *out, const char *text);

/* The format named @name ("text", "json", "logfmt"), or NULL with
 * KT_ERROR_USAGE naming them all. */
const KtLogFormat *kt_log_format_lookup (const char *name, GError **error);

/* Call once, first thing in main() (before any thread): installs the
 * writer, text format, messages on. Looks whether stderr is the journal. */
void kt_log_init      (void);

/* Applies the options: @format (NULL: text), @verbose adds debug and info
 * records, @quiet keeps warnings and errors only, @to the stream records
 * are written to (KtLogTo; whether it is the journal's is looked at again). */
void kt_log_configure (const KtLogFormat *format, gboolean verbose, gboolean quiet, int to);

/* --verbose and --quiet again, while other threads log (a reload). */
void kt_log_set_verbosity (gboolean verbose, gboolean quiet);

/* GLib's writer (g_log_set_writer_func()): formats the record, or hands
 * it to journald. Thread-safe; one write per line. */
GLogWriterOutput kt_log_writer (GLogLevelFlags level, const GLogField *fields,
                                gsize n_fields, gpointer user_data);

/* ---- Records with fields -------------------------------------------- */

typedef struct _KtLogEvent KtLogEvent;

/* A record about to be logged. @event names what happened ("batch",
 * "fenced", "data-loss"...) and is its first field, "event". */
KtLogEvent *kt_log_event_new    (const char *event);
void        kt_log_event_free   (KtLogEvent *self);  /* NULL is fine */

/* Adds a field (@key lower case, [a-z0-9_]); @value is copied. */
void        kt_log_event_string (KtLogEvent *self, const char *key, const char *value);
void        kt_log_event_int    (KtLogEvent *self, const char *key, gint64 value);
/* @json: valid JSON text (an array or an object, its strings valid
 * UTF-8), which the json format embeds as it is: structured data (what a
 * reload changed). The other formats and journald take it as a string. */
void        kt_log_event_json   (KtLogEvent *self, const char *key, const char *json);
/* Written with at most @decimals decimals, never a decimal comma. */
void        kt_log_event_double (KtLogEvent *self, const char *key, double value,
                                 int decimals);

/* Logs it at @level (G_LOG_LEVEL_MESSAGE, _WARNING, _DEBUG...) with the
 * message @format: the line people read, which says everything the
 * fields say. @self stays usable (free it after). */
void        kt_log_event_emit   (KtLogEvent *self, GLogLevelFlags level,
                                 const char *format, ...) G_GNUC_PRINTF (3, 4);

/* The error that ends the process, at error priority (journald's "err",
 * which `journalctl -p err` shows; "error" in json and logfmt, with the
 * fields event=exit and exit_status). The text format writes it as every
 * Unix tool does: `ktally: @message`, alone on its line. */
void        kt_log_exit         (int exit_status, const char *message);

/* ---- A status line on a terminal ------------------------------------ */

/* Whether records go to a person: the text format on a terminal (stderr),
 * not the journal. Only then does a status line make sense. */
gboolean    kt_log_interactive  (void);

/* Shows @line as the status line under the records (a progress report):
 * each call replaces it, and records logged meanwhile are written above
 * it. Nothing happens unless kt_log_interactive(). */
void        kt_log_status       (const char *line);

/* Leaves the last status line on the screen and ends it with a newline;
 * the next record starts below it. */
void        kt_log_status_done  (void);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (KtLogEvent, kt_log_event_free)
