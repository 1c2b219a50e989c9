/* options.h - the option table: one row per option, and everything made of
 * the rows.
 *
 * A row says what an option is: its names, its config-file section and
 * key, its type and bounds, its default, which commands take it, whether
 * a reload applies it, whether it is part of a job's identity, and its
 * help. From the rows come each command's GOption entries (and so its
 * --help), the config file's keys, the typed values in the struct the
 * table fills (offsetof), their text again (config --check, the reload's
 * diff, a job's identity) and the man pages' OPTIONS sections. Adding an
 * option is one row plus the code that uses it.
 *
 * Every value is taken as the bytes given (no GOption charset
 * conversion), then checked here: text must be UTF-8 (or convert from the
 * locale's charset), numbers must be within the row's bounds, words one of
 * the row's words. Nothing is special: -1 is a number like any other. */
#pragma once
#include <glib.h>

/* The commands an option belongs to: one bit each (commands/commands.h
 * names them), so that a kind's rows can say which take them. */
typedef guint32 KtCommandBits;

enum
{
  KT_CMD_RUN     = 1 << 0,
  KT_CMD_REPLAY  = 1 << 1,
  KT_CMD_STATUS  = 1 << 2,
  KT_CMD_AUDIT   = 1 << 3,
  KT_CMD_JOBS    = 1 << 4,
  KT_CMD_RESET   = 1 << 5,
  KT_CMD_FORGET  = 1 << 6,
  KT_CMD_CONFIG  = 1 << 7,
  KT_CMD_INIT_DB = 1 << 8,
  KT_CMD_ALL     = (1 << 9) - 1,
};

typedef enum
{
  KT_OPT_TEXT,     /* char *: UTF-8 text */
  KT_OPT_TABLE,    /* char *: a table's name (names.h's rule, which the help states) */
  KT_OPT_PATH,     /* char *: a file name, bytes as given */
  KT_OPT_INT,      /* gint64 within [min, max]; -1 when unset (then min >= 0) */
  KT_OPT_SECONDS,  /* double: a duration (500ms, 5s, 2m, 12h, 7d) within [min, max]; 0 when unset */
  KT_OPT_SWITCH,   /* gboolean: no value */
  KT_OPT_WORD,     /* int: one of words (its values[i], or i) */
  KT_OPT_LIST,     /* char **: comma-separated, no empty item; NULL when unset */
  KT_OPT_REPEAT,   /* char **: every time it is given, in order; NULL when never */
  KT_OPT_CUSTOM,   /* the row's own parse, clear and text */
} KtOptionType;

typedef enum
{
  KT_OPT_RELOAD    = 1 << 0,  /* SIGHUP applies a change between batches */
  KT_OPT_SECRET    = 1 << 1,  /* never shown: config --check, logs, diffs */
  KT_OPT_FILE_ONLY = 1 << 2,  /* a config-file key, no flag ([mysql] host) */
  KT_OPT_SET       = 1 << 3,  /* KT_OPT_LIST: order and repeats mean nothing */
  KT_OPT_OPEN_MIN  = 1 << 4,  /* min itself is not allowed (an interval > 0) */
  /* A setting without a config-file section that the environment gives
   * too (--db, --config); every row with a section has its variable. */
  KT_OPT_ENV       = 1 << 5,
} KtOptionFlags;

typedef struct _KtOption KtOption;

struct _KtOption
{
  const char   *name;       /* the long name, and the config file's key */
  char          letter;     /* the short name, or 0 */
  const char   *section;    /* the config file's [section], or NULL: flags only */
  KtOptionType  type;
  gsize         offset;     /* where the value lands in the table's struct */
  const char   *fallback;   /* the value when not given, as a user writes it; NULL: unset */
  const char   *fallback_doc;  /* what the help says the default is, when it is not a
                                * value ("the number of cores"); NULL: the fallback */
  double        min, max;   /* KT_OPT_INT, KT_OPT_SECONDS; both 0: no bounds */
  const char *const *words; /* KT_OPT_WORD: the words, NULL-terminated */
  const int    *values;     /* KT_OPT_WORD: what each word stores, or NULL: its index */
  KtCommandBits commands;   /* which commands take it */
  guint         flags;      /* KtOptionFlags */
  /* Part of a job's identity (identity.h): "job.COLUMN" of ktally_job or
   * "table.COLUMN" of ktally_table; NULL: not. */
  const char   *identity;
  /* The identity's normal form of a value's text (two spellings of one
   * meaning compare equal); NULL: the text itself (a KT_OPT_SET list is
   * sorted and deduplicated). New string. */
  char       *(*normal) (const char *text);
  /* KT_OPT_CUSTOM: @text into the field (@flag names the option in
   * errors); the field cleared; the field as text (NULL: unset). */
  gboolean    (*parse)  (const char *flag, const char *text, gpointer field,
                         GError **error);
  void        (*clear)  (gpointer field);
  char       *(*text)   (gconstpointer field);
  /* Whether @text, a value of this row, holds a secret (a password in a
   * URI, a secret librdkafka property): the environment may give such a
   * value only when the user says so (--env-secrets). NULL: never, but
   * for KT_OPT_SECRET rows, which always do. */
  gboolean    (*secret) (const char *text);
  const char   *needs;      /* another option this one means nothing without: given
                             * alone it is refused, and not described */
  const char   *metavar;    /* the value's name in --help: "N", "DURATION" */
  const char   *help;       /* one or two sentences; the default, bounds and words
                             * are added from the row; "{sections}" stands for the
                             * config file's sections, "[kafka] [mysql] ..." */
  /* KT_OPT_RELOAD: how a summary of what a reload changes names it ("the
   * MySQL credentials", shared by the rows that make them up); NULL: its
   * --flag (kt_option_reloadable()). */
  const char   *reloads_as;
};

/* A table ends with a row whose name is NULL. */
#define KT_OPTION_END { .name = NULL }

/* A command's own words for an option whose row speaks for several
 * commands ("--brokers: also show each job's lag"). */
typedef struct
{
  const char *name;
  const char *help;
} KtOptionNote;

/* ---- Parsing: the rows a command takes, GOption, the typed values -------- */

typedef struct _KtOptionValues KtOptionValues;

/* The rows of @tables (a NULL-terminated list of tables) that @command
 * takes; a name may appear in several tables (a kind's options shared by
 * two kinds): its first row is the one. */
KtOptionValues *kt_option_values_new  (const KtOption *const *tables, KtCommandBits command);
void            kt_option_values_free (KtOptionValues *values);  /* NULL is fine */

/* Parses @argv (@argv[0] is the command's name) into @values: GOption
 * with an entry per row, @summary above the options in --help, @notes
 * (may be NULL, ends with a NULL name) in place of a row's help. --help
 * prints and exits 0. KT_ERROR_USAGE on an unknown option, a missing
 * value or a stray argument. */
gboolean kt_option_values_parse (KtOptionValues *values, const char *summary,
                                 const KtOptionNote *notes, int argc, char **argv,
                                 GError **error);

/* Whether option @name was given (on the command line or in a file). */
gboolean kt_option_given (const KtOptionValues *values, const char *name);

/* Every row of @table that @values holds into @target (the struct the
 * table's offsets point into): the given value, else the fallback, else
 * unset; checked against the row. KT_ERROR_USAGE naming the option; with
 * kt_option_values_collect(), every row's error instead (the row left at
 * its fallback), and TRUE. */
gboolean kt_option_values_load (const KtOptionValues *values, const KtOption *table,
                                gpointer target, GError **error);

/* From now on, kt_option_values_load() keeps the error of each row that
 * does not load and goes on: a check that reports every error at once
 * (config --check). kt_option_values_errors(): those errors (GError *),
 * where the caller may add its own; NULL when not collecting. */
void       kt_option_values_collect (KtOptionValues *values);
GPtrArray *kt_option_values_errors  (const KtOptionValues *values);

/* The first row of @table that @values holds and that was given, or NULL:
 * for refusing options that do not apply ("--workers: --kind count takes
 * no workers"). */
const KtOption *kt_option_values_first_given (const KtOptionValues *values,
                                              const KtOption *table);

/* @text, as a user writes it (a stored identity's text too), into @row's
 * field of @target, checked as a given value is. KT_ERROR_USAGE naming
 * the option. */
gboolean kt_option_set_text (const KtOption *row, const char *text, gpointer target,
                             GError **error);

/* Frees what kt_option_values_load() put into @target for @table's rows. */
void kt_option_table_clear (const KtOption *table, gpointer target);

/* ---- The values as text ---------------------------------------------------- */

/* The text of @row's value in @target, as a user would write it (so that
 * it reads back the same), or NULL when unset. New string. */
char *kt_option_text (const KtOption *row, gconstpointer target);

/* The identity's normal form of @row's value in @target (see normal);
 * "" when unset. New string. */
char *kt_option_normal (const KtOption *row, gconstpointer target);

/* The normal form of a value's @text for @row (a stored identity). */
char *kt_option_normal_text (const KtOption *row, const char *text);

/* Every row of @table in [@section] that @command takes, with a value,
 * into @file as "key = text"; secrets as a comment that they are set. */
void  kt_option_table_describe (const KtOption *table, KtCommandBits command,
                                const char *section, gconstpointer target, GKeyFile *file);

/* The config file's sections, in the order @tables name them. */
GStrv kt_option_sections (const KtOption *const *tables);

/* The row of @tables named @name that @command takes, or NULL. */
const KtOption *kt_option_lookup (const KtOption *const *tables, KtCommandBits command,
                                  const char *name);

/* The row of @tables that file key [@section] @key gives for @command,
 * or NULL. */
const KtOption *kt_option_lookup_key (const KtOption *const *tables, KtCommandBits command,
                                      const char *section, const char *key);

/* ---- The environment ------------------------------------------------------- */

/* The environment variable that gives @row: "KTALLY_" and its long name
 * upper-cased, each '-' a '_' (--max-per-partition: KTALLY_MAX_PER_PARTITION),
 * for a row with a config-file section or KT_OPT_ENV; NULL for the others
 * (what one command does: --execute, --json, --check). New string. */
char *kt_option_env_name (const KtOption *row);

/* Whether @text, a value of @row, holds a secret (see KtOption.secret). */
gboolean kt_option_holds_secret (const KtOption *row, const char *text);

/* ---- Help and man pages ---------------------------------------------------- */

/* @row's help for @notes' command: its text ("{sections}" spelled out
 * from @tables), then what the row says of its words, bounds and default
 * ("(1 to 64; default: the number of cores)"). New string. */
char *kt_option_help (const KtOption *const *tables, const KtOption *row,
                      const KtOptionNote *notes);

/* What a reload changes for @command, from the KT_OPT_RELOAD rows of
 * @tables it takes: their reloads_as phrases, then the others' --flags,
 * in table order ("the MySQL credentials, the log level, --interval and
 * --max-batch-bytes"). New string. A command's summary says
 * "{reloadable}" where it goes (kt_option_values_parse()). */
char *kt_option_reloadable (const KtOption *const *tables, KtCommandBits command);

/* The OPTIONS of a command as man(7) paragraphs (.TP per option); the
 * same for a NULL-terminated list of @rows of @tables. */
void  kt_option_man      (GString *out, const KtOptionValues *values,
                          const KtOptionNote *notes);
void  kt_option_man_rows (GString *out, const KtOption *const *tables,
                          const KtOption *const *rows, const KtOptionNote *notes);

/* One config-file key as a man(7) paragraph: its value, help, flag and
 * @commands, the names of the commands that read it. */
void  kt_option_man_key  (GString *out, const KtOption *row, const char *commands);

/* The rows of @values, in order (for the man page's synopsis, tests). */
const KtOption *const *kt_option_values_rows (const KtOptionValues *values, guint *n);

/* ---- Checks every option shares ------------------------------------------ */

/* @bytes (an option's value as given) as UTF-8: valid UTF-8 as it is (the
 * C locale included: log text is UTF-8 in the wild), else converted from
 * the locale's charset; a value that is neither is KT_ERROR_USAGE naming
 * @flag. New string. */
char    *kt_option_utf8 (const char *flag, const char *bytes, GError **error);

/* Parses a duration for @flag: digits with an optional fraction, then at
 * most one unit of ms, s, m, h, d ("500ms", "2.5", "7d"; a bare number is
 * seconds) into seconds. Anything else ("7ds", "-1", "5 s") is
 * KT_ERROR_USAGE naming @flag. */
gboolean kt_duration_parse (const char *flag, const char *text, double *seconds,
                            GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (KtOptionValues, kt_option_values_free)
