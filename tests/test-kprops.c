/* test-kprops.c - librdkafka properties, without a broker.
 *
 * Covers kt_kprops_check (shape, librdkafka's verdict, ktally's own keys
 * refused, no value in any message), kt_kprops_apply (ktally's own values
 * win over anything given), kt_kprops_is_secret and kt_kprops_scrub. */
#include <string.h>
#include "rdkafka-autocleanups.h"
#include "error.h"
#include "kprops.h"

#define SECRET "Sup3rS3cret"

static void
test_check_good (void)
{
  static const char *const good[] = {
    "security.protocol=SASL_SSL", "sasl.password=" SECRET, "fetch.wait.max.ms=10",
    "client.id=x", "group.instance.id=member-1", "partition.assignment.strategy=range",
    "queued.min.messages=1000", "receive.message.max.bytes=2000000",
    "sasl.oauthbearer.config=principal=admin", "topic.metadata.refresh.interval.ms=1000",
    "client.rack=", "check.crcs=true",
  };

  for (gsize i = 0; i < G_N_ELEMENTS (good); i++)
    {
      g_autoptr(GError) error = NULL;
      g_test_message ("%s", good[i]);
      g_assert_true (kt_kprops_check (good[i], &error));
      g_assert_no_error (error);
    }
}

static void
test_check_bad (void)
{
  static const struct
  {
    const char *word;
    const char *starts;  /* the message starts so */
  } bad[] = {
    { "noequals", "-X: expected KEY=VALUE" },
    { "=value", "-X: expected KEY=VALUE" },
    { "no.such.property=1", "-X no.such.property: No such configuration property" },
    { "fetch.wait.max.ms=" SECRET, "-X fetch.wait.max.ms: Invalid value" },
    { "security.protocol=" SECRET, "-X security.protocol: Invalid value" },
    /* What exactly-once depends on, with any value, in any spelling. */
    { "enable.auto.commit=true", "-X enable.auto.commit: refused: exactly-once" },
    { "enable.auto.commit=false", "-X enable.auto.commit: refused" },
    { "enable.auto.offset.store=true", "-X enable.auto.offset.store: refused" },
    { "auto.commit.enable=true", "-X auto.commit.enable: refused" },
    { "topic.auto.commit.enable=true", "-X topic.auto.commit.enable: refused" },
    { "offset.store.method=file", "-X offset.store.method: refused" },
    { "auto.offset.reset=earliest", "-X auto.offset.reset: refused" },
    { "topic.auto.offset.reset=smallest", "-X topic.auto.offset.reset: refused" },
    { "enable.partition.eof=false", "-X enable.partition.eof: refused" },
    { "isolation.level=read_uncommitted", "-X isolation.level: refused" },
    { "group.id=other", "-X group.id: refused: give --group NAME" },
    { "bootstrap.servers=elsewhere:9092", "-X bootstrap.servers: refused: give --brokers" },
    { "metadata.broker.list=elsewhere:9092", "-X metadata.broker.list: refused" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(GError) error = NULL;

      g_test_message ("%s", bad[i].word);
      g_assert_false (kt_kprops_check (bad[i].word, &error));
      g_assert_error (error, KT_ERROR, KT_ERROR_USAGE);
      g_test_message ("  -> %s", error->message);
      g_assert_true (g_str_has_prefix (error->message, bad[i].starts));
      g_assert_null (strstr (error->message, SECRET));
      g_assert_null (strchr (error->message, '\n'));
    }
}

/* A config file's line: the key and value apart, no "-X". */
static void
test_check_pair (void)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (kt_kprops_check_pair ("sasl.password", SECRET, &error));
  g_assert_no_error (error);
  g_assert_false (kt_kprops_check_pair ("enable.auto.commit", "true", &error));
  g_assert_error (error, KT_ERROR, KT_ERROR_USAGE);
  g_assert_true (g_str_has_prefix (error->message, "enable.auto.commit: refused"));
}

static char *
get (rd_kafka_conf_t *conf, const char *key)
{
  char buf[512];
  size_t size = sizeof buf;

  g_assert_cmpint (rd_kafka_conf_get (conf, key, buf, &size), ==, RD_KAFKA_CONF_OK);
  return g_strdup (buf);
}

/* ktally's own values are set last: nothing given overrides them, and
 * the rest is set in order (the last of two wins). */
static void
test_apply (void)
{
  static const char *const words[] = {
    "fetch.wait.max.ms=7", "client.rack=a", "client.rack=b", NULL,
  };
  static const char *const own[][2] = {
    { "enable.auto.commit", "false" }, { "enable.auto.offset.store", "false" },
    { "enable.partition.eof", "true" }, { "auto.offset.reset", "error" },
    { "isolation.level", "read_committed" },
  };
  g_autoptr(rd_kafka_conf_t) conf = rd_kafka_conf_new ();
  g_autoptr(GError) error = NULL;
  char errstr[512];

  /* Set before, as the source sets its tunable defaults: overridden. */
  g_assert_cmpint (rd_kafka_conf_set (conf, "fetch.wait.max.ms", "50", errstr, sizeof errstr),
                   ==, RD_KAFKA_CONF_OK);
  g_assert_cmpint (rd_kafka_conf_set (conf, "enable.auto.commit", "true", errstr, sizeof errstr),
                   ==, RD_KAFKA_CONF_OK);
  g_assert_true (kt_kprops_apply (conf, words, &error));
  g_assert_no_error (error);
  for (gsize i = 0; i < G_N_ELEMENTS (own); i++)
    {
      g_autofree char *v = get (conf, own[i][0]);
      g_test_message ("%s", own[i][0]);
      g_assert_cmpstr (v, ==, own[i][1]);
    }
  {
    g_autofree char *wait = get (conf, "fetch.wait.max.ms");
    g_autofree char *rack = get (conf, "client.rack");
    g_assert_cmpstr (wait, ==, "7");
    g_assert_cmpstr (rack, ==, "b");
  }

  /* No words: ktally's own values all the same. */
  {
    g_autoptr(rd_kafka_conf_t) plain = rd_kafka_conf_new ();
    g_autofree char *eof = NULL;
    g_assert_true (kt_kprops_apply (plain, NULL, &error));
    eof = get (plain, "enable.partition.eof");
    g_assert_cmpstr (eof, ==, "true");
  }

  /* A refused word stops it, with the word's message. */
  {
    static const char *const refused[] = { "client.rack=a", "isolation.level=read_uncommitted", NULL };
    g_autoptr(rd_kafka_conf_t) other = rd_kafka_conf_new ();
    g_assert_false (kt_kprops_apply (other, refused, &error));
    g_assert_error (error, KT_ERROR, KT_ERROR_USAGE);
    g_assert_true (g_str_has_prefix (error->message, "-X isolation.level: refused"));
  }
}

static void
test_is_secret (void)
{
  static const struct
  {
    const char *key;
    gboolean    secret;
  } cases[] = {
    /* librdkafka's _RK_SENSITIVE properties, 2.0.2 and later. */
    { "sasl.password", TRUE }, { "sasl.username", TRUE }, { "ssl.key.password", TRUE },
    { "ssl.key.pem", TRUE }, { "ssl_key", TRUE }, { "ssl.key.location", TRUE },
    { "ssl.keystore.password", TRUE }, { "ssl.ca.pem", TRUE },
    { "sasl.oauthbearer.config", TRUE }, { "sasl.oauthbearer.client.secret", TRUE },
    { "sasl.oauthbearer.assertion.private.key.passphrase", TRUE },
    { "sasl.oauthbearer.assertion.private.key.pem", TRUE },
    /* Generously, whatever names one. */
    { "some.future.password", TRUE }, { "SASL.PASSWORD", TRUE }, { "x.secret.y", TRUE },
    { "-Xsasl.password", TRUE }, { "--kafka-property=ssl.key.password", TRUE },
    { "sasl.kerberos.keytab", TRUE },
    { "security.protocol", FALSE }, { "sasl.mechanisms", FALSE }, { "client.id", FALSE },
    { "fetch.wait.max.ms", FALSE }, { "ssl.ca.location", FALSE }, { "bootstrap.servers", FALSE },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_test_message ("%s", cases[i].key);
      g_assert_cmpint (kt_kprops_is_secret (cases[i].key), ==, cases[i].secret);
    }
}

static void
test_scrub (void)
{
  static const struct
  {
    const char *in, *out;
  } cases[] = {
    { "sasl.password=abc", "sasl.password=xxx" },
    { "-Xsasl.password=abc", "-Xsasl.password=xxx" },
    { "-vXssl.key.password=a b=c", "-vXssl.key.password=xxxxx" },
    { "--kafka-property=sasl.password=abc", "--kafka-property=sasl.password=xxx" },
    { "--kafka-property=security.protocol=SSL", "--kafka-property=security.protocol=SSL" },
    { "Unknown option -vXsasl.password=abc", "Unknown option -vXsasl.password=xxx" },
    { "unexpected argument 'sasl.oauthbearer.config=p=q'",
      "unexpected argument 'sasl.oauthbearer.config=xxxx" },
    { "security.protocol=SASL_SSL", "security.protocol=SASL_SSL" },
    { "sasl.password=", "sasl.password=" },
    { "=abc", "=abc" },
    { "no equals here", "no equals here" },
    { "", "" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *text = g_strdup (cases[i].in);
      kt_kprops_scrub (text);
      g_assert_cmpstr (text, ==, cases[i].out);
    }
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/kprops/check/good", test_check_good);
  g_test_add_func ("/kprops/check/bad", test_check_bad);
  g_test_add_func ("/kprops/check/pair", test_check_pair);
  g_test_add_func ("/kprops/apply", test_apply);
  g_test_add_func ("/kprops/is-secret", test_is_secret);
  g_test_add_func ("/kprops/scrub", test_scrub);
  return g_test_run ();
}
