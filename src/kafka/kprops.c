/* kprops.c - librdkafka properties: shape, librdkafka's verdict, ktally's
 * own keys, secrets. Takes words, hands on a checked rd_kafka_conf_t; it
 * never prints and never puts a value into a message. */
#include "kprops.h"

#include <string.h>
#include "rdkafka-autocleanups.h"
#include "error.h"

/* The properties ktally sets itself, because the README's exactness
 * argument depends on them. @value is what ktally sets (NULL: set from an
 * option, or a legacy spelling that is only refused). Tuning (fetch and
 * queue sizes, timeouts), security and group membership (client.id,
 * group.instance.id, partition.assignment.strategy) stay the user's: the
 * fence in MySQL decides what is counted whatever they say. */
typedef struct
{
  const char *key;
  const char *value;
  const char *why;  /* completes "refused: " */
} Reserved;

#define EXACT "exactly-once depends on ktally's own setting "
#define OFFSETS_WHY EXACT "(offsets are stored by ktally only, with the counts, or " \
                          "committed to Kafka after them with --offsets kafka)"

static const Reserved reserved[] = {
  { "enable.auto.commit", "false", OFFSETS_WHY },
  { "enable.auto.offset.store", "false", OFFSETS_WHY },
  { "auto.commit.enable", NULL, OFFSETS_WHY },  /* the legacy consumer's spelling */
  { "offset.store.method", NULL, OFFSETS_WHY },
  { "auto.offset.reset", "error",
    EXACT "(an offset lost to retention stops the read, see --on-data-loss; it is never "
    "skipped silently)" },
  { "enable.partition.eof", "true",
    EXACT "(the end of a range whose last offsets are gaps is only seen through it)" },
  { "isolation.level", "read_committed",
    EXACT "(records of aborted transactions are never counted)" },
  { "group.id", NULL,
    "give --group NAME (ktally's own group is ktally-JOB, where --offsets kafka keeps "
    "the offsets)" },
  { "bootstrap.servers", NULL, "give --brokers" },
  { "metadata.broker.list", NULL, "give --brokers" },
};

/* librdkafka's _RK_SENSITIVE properties (2.0.2 and later), and words that
 * mark a secret in any property a later version may add. Matched as
 * case-insensitive substrings. */
static const char *const secret_marks[] = {
  "sasl.username", "sasl.password", "ssl.key", "ssl_key", "ssl.ca.pem",
  "oauthbearer", "password", "passwd", "passphrase", "secret", "private",
  "credential", "token", ".pem", "keytab",
};

gboolean
kt_kprops_is_secret (const char *key)
{
  g_autofree char *lower = g_ascii_strdown (key, -1);

  for (gsize i = 0; i < G_N_ELEMENTS (secret_marks); i++)
    if (strstr (lower, secret_marks[i]) != NULL)
      return TRUE;
  return FALSE;
}

void
kt_kprops_scrub (char *text)
{
  for (char *eq = strchr (text, '='); eq != NULL; eq = strchr (eq + 1, '='))
    {
      const char *start = eq;
      g_autofree char *key = NULL;

      while (start > text && (g_ascii_isalnum (start[-1]) || strchr ("._-", start[-1]) != NULL))
        start--;
      key = g_strndup (start, (gsize) (eq - start));
      if (*key != '\0' && kt_kprops_is_secret (key))
        {
          /* To the end: a value may hold '=' and spaces. */
          memset (eq + 1, 'x', strlen (eq + 1));
          return;
        }
    }
}

static const Reserved *
find_reserved (const char *key)
{
  /* librdkafka takes a topic property with a "topic." prefix too. */
  const char *name = g_str_has_prefix (key, "topic.") ? key + strlen ("topic.") : key;

  for (gsize i = 0; i < G_N_ELEMENTS (reserved); i++)
    if (g_str_equal (reserved[i].key, name) || g_str_equal (reserved[i].key, key))
      return &reserved[i];
  return NULL;
}

/* Sets what ktally sets on @conf. */
static gboolean
set_fixed (rd_kafka_conf_t *conf, GError **error)
{
  char errstr[512];

  for (gsize i = 0; i < G_N_ELEMENTS (reserved); i++)
    if (reserved[i].value != NULL
        && rd_kafka_conf_set (conf, reserved[i].key, reserved[i].value, errstr,
                              sizeof errstr) != RD_KAFKA_CONF_OK)
      {
        /* A librdkafka without one of them is not one ktally can run on. */
        g_set_error (error, KT_ERROR, KT_ERROR_INTERNAL, "librdkafka refuses %s=%s: %s",
                     reserved[i].key, reserved[i].value, errstr);
        return FALSE;
      }
  return TRUE;
}

/* librdkafka's message without the value: it quotes a bad one ("Invalid
 * value "..." for configuration property ..."). For a secret, a message
 * holding the value anywhere is not shown at all. */
static char *
redacted (const char *key, const char *errstr, const char *value)
{
  g_autofree char *quoted = g_strdup_printf ("\"%s\"", value);
  g_auto(GStrv) parts = NULL;

  if (*value != '\0' && kt_kprops_is_secret (key) && strstr (errstr, value) != NULL)
    return g_strdup ("librdkafka refuses the value");
  parts = g_strsplit (errstr, quoted, -1);
  return g_strjoinv ("\"...\"", parts);
}

/* Sets @key=@value on @conf, or fails with librdkafka's reason. */
static gboolean
set_one (rd_kafka_conf_t *conf, const char *key, const char *value, GError **error)
{
  char errstr[512];
  g_autofree char *reason = NULL;

  if (rd_kafka_conf_set (conf, key, value, errstr, sizeof errstr) == RD_KAFKA_CONF_OK)
    return TRUE;
  reason = redacted (key, errstr, value);
  g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "%s: %s", key, reason);
  return FALSE;
}

gboolean
kt_kprops_check_pair (const char *key, const char *value, GError **error)
{
  const Reserved *own = find_reserved (key);
  g_autoptr(rd_kafka_conf_t) scratch = NULL;
  char *before[G_N_ELEMENTS (reserved)] = { NULL };
  gboolean ok = TRUE;

  if (own != NULL)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_USAGE, "%s: refused: %s", key, own->why);
      return FALSE;
    }

  /* librdkafka's verdict, on a configuration like the one the source
   * builds. Any of ktally's own properties that the key changes anyway is
   * another spelling of one (an alias) and is refused as such. */
  scratch = rd_kafka_conf_new ();
  if (!set_fixed (scratch, error))
    return FALSE;
  for (gsize i = 0; i < G_N_ELEMENTS (reserved); i++)
    {
      char buf[512];
      size_t size = sizeof buf;
      if (rd_kafka_conf_get (scratch, reserved[i].key, buf, &size) == RD_KAFKA_CONF_OK)
        before[i] = g_strdup (buf);
    }
  if (!set_one (scratch, key, value, error))
    ok = FALSE;
  for (gsize i = 0; i < G_N_ELEMENTS (reserved); i++)
    {
      char buf[512];
      size_t size = sizeof buf;

      if (ok && before[i] != NULL
          && rd_kafka_conf_get (scratch, reserved[i].key, buf, &size) == RD_KAFKA_CONF_OK
          && !g_str_equal (buf, before[i]))
        {
          g_set_error (error, KT_ERROR, KT_ERROR_USAGE,
                       "%s: refused: it changes %s: %s", key, reserved[i].key,
                       reserved[i].why);
          ok = FALSE;
        }
      g_free (before[i]);
    }
  return ok;
}

gboolean
kt_kprops_check (const char *word, GError **error)
{
  const char *eq = strchr (word, '=');
  g_autofree char *key = NULL;

  if (eq == NULL || eq == word)
    {
      /* Not quoted back: it may be a secret given the wrong way. */
      g_set_error_literal (error, KT_ERROR, KT_ERROR_USAGE, "-X: expected KEY=VALUE");
      return FALSE;
    }
  key = g_strndup (word, (gsize) (eq - word));
  if (!kt_kprops_check_pair (key, eq + 1, error))
    {
      g_prefix_error (error, "-X ");
      return FALSE;
    }
  return TRUE;
}

gboolean
kt_kprops_apply (rd_kafka_conf_t *conf, const char *const *words, GError **error)
{
  for (const char *const *w = words; w != NULL && *w != NULL; w++)
    {
      g_autofree char *key = NULL;

      if (!kt_kprops_check (*w, error))
        return FALSE;
      key = g_strndup (*w, strcspn (*w, "="));
      if (!set_one (conf, key, *w + strlen (key) + 1, error))
        {
          g_prefix_error (error, "-X ");
          return FALSE;
        }
    }
  return set_fixed (conf, error);
}
