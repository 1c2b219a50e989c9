/* test-kfeatures.c - the verdict of the start-up feature check, without a
 * broker: librdkafka 2.0.2's "feature" debug lines, as its log callback
 * got them from Apache Kafka 3.9.2, 4.0.0 and 4.1.1 (samples/
 * kafka-features/, recorded with kcat -d feature), and made-up brokers
 * that no longer serve what a feature ktally needs is tied to. */
#include <string.h>
#include "kfeatures.h"

static GPtrArray *
sample (const char *name)
{
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "..", "samples", "kafka-features",
                                                 name, NULL);
  g_autofree char *text = NULL;
  g_autoptr(GError) error = NULL;
  GPtrArray *lines = g_ptr_array_new_with_free_func (g_free);

  g_assert_true (g_file_get_contents (path, &text, NULL, &error));
  g_assert_no_error (error);
  g_auto(GStrv) split = g_strsplit (text, "\n", -1);
  for (char **l = split; *l != NULL; l++)
    if (**l != '\0')
      g_ptr_array_add (lines, g_strdup (*l));
  g_assert_cmpuint (lines->len, >, 50);
  return lines;
}

/* Apache Kafka 4.0.0 serves JoinGroup v2..v9 only: librdkafka 2.0.2 turns
 * off BrokerBalancedConsumer (which it never consults: groups work) and
 * Sasl (GSSAPI: Kerberos is refused). */
static void
test_kafka_400 (void)
{
  g_autoptr(GPtrArray) lines = sample ("apache-4.0.0.log");
  KtFeatureNeeds plain = { 0 }, group = { .group = TRUE };
  KtFeatureNeeds scram = { .sasl = "SCRAM-SHA-512", .librdkafka = 0x020601ff };
  KtFeatureNeeds kerberos = { .group = TRUE, .sasl = "GSSAPI" };
  g_autofree char *verdict = NULL;

  g_assert_null (kt_features_verdict (lines, &plain));
  g_assert_null (kt_features_verdict (lines, &group));
  g_assert_null (kt_features_verdict (lines, &scram));
  verdict = kt_features_verdict (lines, &kerberos);
  g_assert_nonnull (verdict);
  g_test_message ("%s", verdict);
  g_assert_true (g_str_has_prefix (verdict, "broker 127.0.0.1:27947 (Apache Kafka 4.0.0, "));
  g_assert_nonnull (strstr (verdict, "serving JoinGroup v2..v9, not v0)"));
  g_assert_nonnull (strstr (verdict, "turn off its feature Sasl, which Kerberos"));
  g_assert_nonnull (strstr (verdict, "Kafka 4.0.1 and later serve JoinGroup v0 again"));
  g_assert_null (strchr (verdict, '\n'));
}

/* The probe may connect to several brokers: the line speaks of one. */
static void
test_two_brokers (void)
{
  g_autoptr(GPtrArray) lines = sample ("apache-4.0.0.log");
  KtFeatureNeeds kerberos = { .sasl = "GSSAPI" };
  guint n = lines->len;
  g_autofree char *verdict = NULL;

  for (guint i = 0; i < n; i++)
    {
      g_autoptr(GString) copy = g_string_new (lines->pdata[i]);
      g_string_replace (copy, "127.0.0.1:27947", "127.0.0.1:1111", 0);
      g_ptr_array_add (lines, g_string_free (g_steal_pointer (&copy), FALSE));
    }
  verdict = kt_features_verdict (lines, &kerberos);
  g_assert_nonnull (verdict);
  g_assert_nonnull (strstr (verdict, "(Apache Kafka 4.0.0, serving JoinGroup v2..v9, not v0) makes"));
}

/* 4.1.1 (JoinGroup v0 back) and 3.9.2: nothing ktally needs is off. */
static void
test_kafka_411_392 (void)
{
  static const char *const names[] = { "apache-4.1.1.log", "apache-3.9.2.log" };
  KtFeatureNeeds kerberos = { .group = TRUE, .sasl = "GSSAPI" };

  for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autoptr(GPtrArray) lines = sample (names[i]);
      g_assert_null (kt_features_verdict (lines, &kerberos));
    }
}

/* SCRAM from librdkafka before 2.6.1 to Kafka 4.x: refused before the
 * broker answers "invalid credentials" to a right password; to 3.9.2, and
 * from 2.6.1 on, fine; other mechanisms untouched. */
static void
test_scram_kafka_4 (void)
{
  g_autoptr(GPtrArray) k411 = sample ("apache-4.1.1.log");
  g_autoptr(GPtrArray) k392 = sample ("apache-3.9.2.log");
  KtFeatureNeeds old = { .sasl = "SCRAM-SHA-512", .librdkafka = 0x020002ff };
  KtFeatureNeeds old256 = { .group = TRUE, .sasl = "scram-sha-256", .librdkafka = 0x020002ff };
  KtFeatureNeeds fixed = { .sasl = "SCRAM-SHA-512", .librdkafka = 0x020601ff };
  KtFeatureNeeds unfixed = { .sasl = "SCRAM-SHA-512", .librdkafka = 0x020600ff };
  KtFeatureNeeds plain = { .sasl = "PLAIN", .librdkafka = 0x020002ff };
  g_autofree char *verdict = kt_features_verdict (k411, &old);
  g_autofree char *v256 = kt_features_verdict (k411, &old256);
  g_autofree char *v260 = kt_features_verdict (k411, &unfixed);

  g_assert_nonnull (verdict);
  g_test_message ("%s", verdict);
  g_assert_nonnull (strstr (verdict, "(Kafka 4.0 or later, serving Fetch v4 and up) rejects the "
                                     "SCRAM-SHA-512 proofs of librdkafka 2.0.2 as invalid"));
  g_assert_nonnull (strstr (verdict, "librdkafka 2.6.1 or later"));
  g_assert_null (strchr (verdict, '\n'));
  g_assert_nonnull (v256);
  g_assert_nonnull (strstr (v256, "scram-sha-256 proofs"));
  g_assert_nonnull (v260);
  g_assert_null (kt_features_verdict (k411, &fixed));
  g_assert_null (kt_features_verdict (k411, &plain));
  g_assert_null (kt_features_verdict (k392, &old));
}

/* A broker without FindCoordinator v0: consumer groups are gone, and only
 * a job that joins one stops. */
static void
test_no_coordinator (void)
{
  const char *raw[] = {
    "[thrd:b:9092/bootstrap]: b:9092/bootstrap:   ApiKey Fetch (1) Versions 4..18",
    "[thrd:b:9092/bootstrap]: b:9092/bootstrap:   ApiKey FindCoordinator (10) Versions 1..6",
    "[thrd:b:9092/bootstrap]: b:9092/bootstrap:  Feature BrokerGroupCoordinator: "
    "FindCoordinator (0..0) NOT supported by broker",
    "[thrd:b:9092/bootstrap]: b:9092/bootstrap: Disabling feature BrokerGroupCoordinator",
    "[thrd:b:9092/bootstrap]: b:9092/bootstrap: Enabling feature MsgVer2",
  };
  g_autoptr(GPtrArray) lines = g_ptr_array_new ();
  KtFeatureNeeds plain = { 0 }, group = { .group = TRUE };
  g_autofree char *verdict = NULL, *expected = NULL;

  for (gsize i = 0; i < G_N_ELEMENTS (raw); i++)
    g_ptr_array_add (lines, (gpointer) raw[i]);
  g_assert_null (kt_features_verdict (lines, &plain));
  verdict = kt_features_verdict (lines, &group);
  expected = g_strdup_printf ("broker b:9092 (Kafka 4.0 or later, serving FindCoordinator v1..v6, "
                              "not v0) makes librdkafka %s turn off its feature "
                              "BrokerGroupCoordinator, which consumer groups (--group) needs: "
                              "librdkafka 2.11.1 or later keeps it (its issue 4948)",
                              rd_kafka_version_str ());
  g_assert_cmpstr (verdict, ==, expected);
}

/* Lines that are not librdkafka's feature lines judge nothing. */
static void
test_garbage (void)
{
  const char *raw[] = { "", "Disabling feature ApiVersion", "[thrd:x", "a: b", ":",
                        "[thrd:x]: y: Feature : (..) NOT supported" };
  g_autoptr(GPtrArray) lines = g_ptr_array_new ();
  KtFeatureNeeds all = { .group = TRUE, .sasl = "GSSAPI" };

  for (gsize i = 0; i < G_N_ELEMENTS (raw); i++)
    g_ptr_array_add (lines, (gpointer) raw[i]);
  g_assert_null (kt_features_verdict (lines, &all));
}

/* Words of librdkafka 2.0.2 measured against Apache Kafka 3.9.2's SASL_SSL
 * listener: a wrong password, PLAIN and SCRAM; a CA that did not sign the
 * brokers' certificate; and failures that may heal. */
static void
test_failure_final (void)
{
  g_assert_true (kt_broker_failure_final ("sasl_ssl://127.0.0.1:24723/bootstrap: SASL authentication "
                                          "error: Authentication failed: Invalid username or password"));
  g_assert_true (kt_broker_failure_final ("sasl_ssl://127.0.0.1:24723/bootstrap: SASL authentication "
                                          "error: Authentication failed during authentication due to "
                                          "invalid credentials with SASL mechanism SCRAM-SHA-512"));
  g_assert_true (kt_broker_failure_final ("sasl_ssl://127.0.0.1:24723/bootstrap: SSL handshake failed: "
                                          "error:0A000086:SSL routines::certificate verify failed: "
                                          "broker certificate could not be verified, verify that "
                                          "ssl.ca.location is correctly configured"));
  g_assert_false (kt_broker_failure_final ("sasl_ssl://127.0.0.1:21276/bootstrap: SASL authentication "
                                           "error: SaslAuthenticateRequest failed: Local: Broker "
                                           "handle destroyed"));
  g_assert_false (kt_broker_failure_final ("sasl_ssl://127.0.0.1:24723/bootstrap: SSL handshake failed: "
                                           "Disconnected: connection reset by peer"));
  g_assert_false (kt_broker_failure_final ("127.0.0.1:9092/bootstrap: Connect to ipv4#127.0.0.1:9092 "
                                           "failed: Connection refused"));
  g_assert_false (kt_broker_failure_final (NULL));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/kfeatures/kafka-4.0.0", test_kafka_400);
  g_test_add_func ("/kfeatures/two-brokers", test_two_brokers);
  g_test_add_func ("/kfeatures/kafka-4.1.1-3.9.2", test_kafka_411_392);
  g_test_add_func ("/kfeatures/no-coordinator", test_no_coordinator);
  g_test_add_func ("/kfeatures/scram-kafka-4", test_scram_kafka_4);
  g_test_add_func ("/kfeatures/garbage", test_garbage);
  g_test_add_func ("/kfeatures/failure-final", test_failure_final);
  return g_test_run ();
}
