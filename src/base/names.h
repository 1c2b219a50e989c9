/* names.h - the names ktally gives MySQL objects: tables (and databases).
 *
 * One rule for every table a job names (--table, --dead-letters, the
 * tables derived from them) and for the database of --db, said once here
 * (KT_TABLE_NAME_RULE) for the messages, --help and the man pages, which
 * the option table's KT_OPT_TABLE rows show. Pure: no MySQL. */
#pragma once
#include <glib.h>

/* Whether @c may be part of a name: an ASCII letter or digit or one of
 * @ascii, or a letter, digit or mark beyond ASCII up to U+FFFF (MariaDB's
 * identifiers reach the Basic Multilingual Plane). */
gboolean kt_is_name_char (gunichar c, const char *ascii);

/* MariaDB keeps a table in files named after it, each character beyond
 * [A-Za-z0-9_] written as @XXXX (up to 5 bytes), and the file system
 * takes 255 bytes a name, of which ".frm~" (the longest ending MariaDB
 * adds) takes 5. */
#define KT_NAME_FILE_BYTES 250

/* How many bytes of a file name @name (UTF-8) takes at most in MariaDB:
 * 1 for [A-Za-z0-9_], 5 for any other character. */
gsize kt_name_file_bytes (const char *name);

/* The rule, for messages and help. */
#define KT_TABLE_NAME_RULE "1 to 64 characters: letters, digits and _; beyond ASCII, " \
  "letters, digits and marks (up to U+FFFF), each counting as 5 of the 250 bytes of " \
  "MariaDB's file names"

/* Whether @name is a name ktally gives a table (or takes for a database):
 * KT_TABLE_NAME_RULE. Anything else is refused, never quoted through. */
gboolean kt_is_identifier (const char *name);

/* Whether @name followed by @suffix (ASCII, may be NULL: a table ktally
 * derives from @name, idempotent mode's NAME_topic) is a table name: sets
 * KT_ERROR_USAGE naming @flag and the rule when not. */
gboolean kt_table_name_check (const char *flag, const char *name, const char *suffix,
                              GError **error);
