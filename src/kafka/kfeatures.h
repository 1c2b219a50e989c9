/* kfeatures.h - whether librdkafka keeps, with these brokers, the protocol
 * features this job needs; checked once, when a broker first answers.
 *
 * librdkafka before 2.11.1 ties each of its features to exact old protocol
 * versions and turns the feature off, silently, when a broker no longer
 * serves them (its issue 4948; Kafka 4.0 removed old versions, KIP-896).
 * With Debian's 2.0.2 that costs Kerberos (GSSAPI) on Apache Kafka 4.0.0,
 * which lacks JoinGroup v0; a broker without FindCoordinator v0 would cost
 * consumer groups. librdkafka says so only in its "feature" debug log: a
 * short-lived probe client with that log on connects once, and its words
 * are read. A feature ktally does not use is no reason to stop. */
#pragma once
#include <glib.h>
#include <librdkafka/rdkafka.h>

typedef struct
{
  gboolean    group;  /* --group: joins a consumer group (its coordinator) */
  const char *sasl;   /* the SASL mechanism of a SASL_* security.protocol, or NULL */
  int         librdkafka;  /* rd_kafka_version() to judge for; 0: the one linked */
} KtFeatureNeeds;

/* Pure: reads librdkafka's "feature" debug lines of one connection (@lines,
 * as its log callback got them) and returns NULL when none of the features
 * @needs names was turned off, else one line for the user naming the
 * broker, what it serves, the feature and what it is for. Also refuses
 * SCRAM from librdkafka before 2.6.1 to Kafka 4.0 or later, which rejects
 * its proofs as invalid credentials whatever the password (librdkafka's
 * issue 4895: it repeats the client nonce, which Kafka 4 checks). */
char     *kt_features_verdict (const GPtrArray *lines, const KtFeatureNeeds *needs);

/* Connects a probe client made from a copy of @conf (its callbacks and
 * opaque replaced) to one broker, waiting up to @timeout_ms, and applies
 * kt_features_verdict: FALSE with KT_ERROR_FATAL and that line when a
 * needed feature is off. *@judged tells whether a broker answered at all
 * (if not, TRUE is returned: the caller's own request reports why). */
gboolean  kt_features_check   (const rd_kafka_conf_t *conf, gboolean group,
                               int timeout_ms, gboolean *judged, GError **error);

/* Pure: whether a broker connection's failure, in librdkafka's words (its
 * "FAIL" log line, e.g. "sasl_ssl://h:9093/bootstrap: SASL authentication
 * error: Authentication failed: Invalid username or password"), can never
 * heal by trying again with the same settings: the brokers refused the
 * credentials, or their certificate is not signed by ssl.ca.location's CA.
 * A connection lost mid-handshake, refused or timed out is not. */
gboolean  kt_broker_failure_final (const char *failure);
