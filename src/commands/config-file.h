/* config-file.h - `--config FILE`: a GKeyFile turned into command-line
 * words (config.c puts them in front of the command line's).
 *
 * The file's keys are spelled exactly like the long options, in the
 * sections the option rows name (kt_option_sections()); the file's words
 * go before the command line's, so a flag given on the command line wins
 * (GOption keeps the last value). Any key of [kafka] that is not an option is a librdkafka
 * property, checked like -X (kprops.h, naming the line) and passed as -X. */
#pragma once
#include <glib.h>
#include "config-env.h"
#include "db.h"
#include "options.h"

/* Appends to @words the options that @path gives for @command (its
 * bits: the rows of @tables it takes, cli.h), and to @lines (guint, may be NULL) the line each
 * word comes from. Values may name the environment: ${NAME} is NAME's
 * value, $${ a literal ${. An unknown section or key, a key given twice,
 * an unset ${NAME}, a file that cannot be read or parsed: KT_ERROR_USAGE
 * naming the file and the line. With @every (GError *, may be NULL), an
 * unknown section or key is appended there instead, and the other keys
 * still give their words: a check that reports every error at once. */
gboolean kt_config_file_words (const char *path, const KtOption *const *tables,
                               KtCommandBits command, GPtrArray *words, GArray *lines,
                               GPtrArray *every, GError **error);

/* Where the value a failed parse's @message is about came from, for the
 * message's front: "--config: PATH:LINE" when from @words (and @lines, as
 * kt_config_file_words() gave them; @path may be NULL with none), the
 * variable ("KTALLY_INTERVAL") when from @env, NULL when from @given (the
 * command line's words, NULL-terminated, which win) or unknown. @tables
 * and @command give the options' short names. */
char    *kt_config_file_blame (const char *path, const char *message, GPtrArray *words,
                               GArray *lines, const KtConfigEnv *env, char **given,
                               const KtOption *const *tables, KtCommandBits command);

/* A --db on the command line (in @given) replaces the file's whole
 * database, TLS included: when the file's --db (in @words, at its line in
 * @lines) asks for TLS (ssl-mode required or stricter, a CA, a client
 * certificate) and @used, the --db that won, names no ssl-* parameter of
 * its own, the file's TLS would be dropped in silence: KT_ERROR_USAGE
 * naming the file's line and what it asked for. */
gboolean kt_config_file_check_db (const char *path, GPtrArray *words, GArray *lines,
                                  char **given, const KtDbConfig *used, GError **error);

/* Moves "--config FILE" / "--config=FILE" out of @argv (NULL-terminated,
 * the strings stay owned by the caller) and returns FILE, or NULL. */
const char *kt_config_file_take (GPtrArray *argv);
