/* config.h - `--config FILE`: a GKeyFile turned into command-line words.
 *
 * The file's keys are spelled exactly like the long options, in sections
 * [kafka] [mysql] [batch] [parse] [http]; the file's words go before the
 * command line's, so a flag given on the command line wins (GOption keeps
 * the last value). Any key of [kafka] that is not an option is a librdkafka
 * property, checked like -X (kprops.h, naming the line) and passed as -X. */
#pragma once
#include <glib.h>

/* Appends to @words the options that @path gives for @command ("run",
 * "replay", "status"). An unknown section or key is an error naming the
 * file, its line and the key (KT_ERROR_USAGE); so is a file that cannot be
 * read or parsed. */
gboolean kt_config_file_words (const char *path, const char *command,
                               GPtrArray *words, GError **error);

/* Moves "--config FILE" / "--config=FILE" out of @argv (NULL-terminated,
 * the strings stay owned by the caller) and returns FILE, or NULL. */
const char *kt_config_file_take (GPtrArray *argv);
