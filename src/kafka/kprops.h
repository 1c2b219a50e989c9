/* kprops.h - the librdkafka properties a job is given: `-X KEY=VALUE` and
 * the [kafka] section of a config file.
 *
 * The one place that judges them, for every path that takes them (run,
 * replay, status, `config --check`, the config file, and the source when
 * it builds its client): the word's shape; librdkafka's verdict on the key
 * and value; which keys are ktally's own, because exactly-once depends on
 * them (refused); and which values are secrets (never shown in ps, in a
 * message or by `config --check`). */
#pragma once
#include <glib.h>
#include <librdkafka/rdkafka.h>

/* Checks one -X word "KEY=VALUE": its shape, that KEY is not one of
 * ktally's own (listed in kprops.c with the reason), and librdkafka's
 * verdict on a scratch configuration. Fails with KT_ERROR_USAGE and one
 * line starting "-X KEY: " (or "-X: " for a word without a key); the
 * message never contains the value. */
gboolean kt_kprops_check      (const char *word, GError **error);

/* The same for a key and value given apart (a config file's line); the
 * message starts "KEY: ". */
gboolean kt_kprops_check_pair (const char *key, const char *value, GError **error);

/* Checks and sets @words (NULL-terminated, or NULL) on @conf in order,
 * then sets ktally's own properties over them, so that nothing given,
 * not even an alias a later librdkafka adds, overrides those. Errors as
 * kt_kprops_check(). */
gboolean kt_kprops_apply      (rd_kafka_conf_t *conf, const char *const *words,
                               GError **error);

/* Whether the value of property @key must never be shown: librdkafka's
 * sensitive properties (sasl.password, ssl.key.password, ssl.key.pem,
 * sasl.oauthbearer.config...) and, generously, any key that mentions a
 * password, secret, passphrase, private key or token. Case-insensitive;
 * @key may carry text around the name ("-Xsasl.password"). */
gboolean kt_kprops_is_secret  (const char *key);

/* Overwrites, in place, the value of the first "KEY=VALUE" in @text whose
 * KEY is a secret, up to the end of @text: an argv element ("-X k=v",
 * "-Xk=v", "--kafka-property=k=v") or a message quoting one. The length
 * stays (ps shows as much). */
void     kt_kprops_scrub      (char *text);
