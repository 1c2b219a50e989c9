/* config-env.h - the environment as a source of settings: every setting's
 * KTALLY_ variable (options.h: KTALLY_BROKERS for --brokers) turned into
 * option words, which kt_config_parse() puts between a --config file's
 * words and the command line's. So one rule holds for every option: a
 * flag wins over the environment, the environment over the file, the file
 * over the default; and the environment's values are checked, described
 * (config --check) and read again (a reload) like the others. */
#pragma once
#include <glib.h>
#include "options.h"

typedef struct
{
  GPtrArray *words;    /* "--name=value" or "--name" (char *) */
  GPtrArray *names;    /* the variable each word comes from (char *), in step */
  GPtrArray *off;      /* switches the environment turns off ("false"): their names */
  GPtrArray *given;    /* every variable that gave a setting, sorted, once each */
  GPtrArray *ignored;  /* KTALLY_ variables that are no setting of ktally, sorted */
} KtConfigEnv;

/* Reads the environment for @command (its bits: the rows of @tables it
 * takes): a row's variable, set and not empty, gives its value (a switch:
 * true, false, 1 or 0; a repeatable option: one value a line). A
 * variable of a row that another command takes is left alone; a KTALLY_
 * variable of no row is only noted in @out->ignored (a platform sets
 * its own: Kubernetes gives every pod KTALLY_SERVICE_HOST when a Service
 * is called ktally). A value that holds a secret (a row's secret hook: a
 * password in a URI) is refused unless @secrets (--env-secrets), and is
 * never quoted. KT_ERROR_USAGE naming the variable. */
gboolean kt_config_env_read  (const KtOption *const *tables, KtCommandBits command,
                              gboolean secrets, KtConfigEnv *out, GError **error);
void     kt_config_env_clear (KtConfigEnv *env);

/* The variable a word of @env gives for option @flag (its last), or NULL. */
const char *kt_config_env_gives (const KtConfigEnv *env, const char *flag);
/* The variable whose word is exactly @word, or NULL. */
const char *kt_config_env_word  (const KtConfigEnv *env, const char *word);
