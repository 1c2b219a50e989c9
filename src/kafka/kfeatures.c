/* kfeatures.c - the start-up check that librdkafka keeps, with these
 * brokers, the protocol features the job needs (see kfeatures.h).
 *
 * Takes the consumer's configuration, hands back nothing but a verdict: it
 * never changes the configuration it was given and never reads a record. */
#include "kfeatures.h"

#include <stdio.h>
#include <string.h>
#include "rdkafka-autocleanups.h"
#include "error.h"

/* The features whose loss stops ktally, what each is for in words a user
 * knows, and when the job needs it. */
typedef enum
{
  NEED_ALWAYS,
  NEED_GROUP,
  NEED_GSSAPI,
  NEED_OTHER_SASL,
} NeedWhen;

static const struct
{
  const char *feature;  /* librdkafka's name in its debug log */
  const char *what;
  NeedWhen    when;
} needed[] = {
  { "ApiVersion", "the protocol version exchange", NEED_ALWAYS },
  { "BrokerGroupCoordinator", "consumer groups (--group)", NEED_GROUP },
  { "Sasl", "Kerberos (sasl.mechanisms=GSSAPI)", NEED_GSSAPI },
  { "SaslHandshake", "SASL authentication", NEED_OTHER_SASL },
};

/* One parsed debug line: "[thrd:T]: BROKER: TEXT". */
typedef struct
{
  char       *broker;  /* host:port, without the protocol and /id */
  const char *text;    /* borrowed from the line, leading blanks skipped */
} Line;

static gboolean
parse_line (const char *raw, Line *out)
{
  const char *p = raw, *colon, *start, *slash;

  if (g_str_has_prefix (p, "[thrd:"))
    {
      p = strstr (p, "]: ");
      if (p == NULL)
        return FALSE;
      p += 3;
    }
  colon = strstr (p, ": ");
  if (colon == NULL)
    return FALSE;
  start = strstr (p, "://");
  start = start != NULL && start < colon ? start + 3 : p;
  slash = memchr (start, '/', (gsize) (colon - start));
  out->broker = g_strndup (start, (gsize) ((slash != NULL ? slash : colon) - start));
  out->text = colon + 2;
  while (*out->text == ' ')
    out->text++;
  return TRUE;
}

/* @broker's versions of @api from its "ApiKey API (N) Versions A..B"
 * line; FALSE when it serves none. */
static gboolean
broker_range (const GPtrArray *lines, const char *broker, const char *api, int *min, int *max)
{
  for (guint i = 0; i < lines->len; i++)
    {
      Line l;
      char name[64];
      int key;
      gboolean found = FALSE;

      if (!parse_line (lines->pdata[i], &l))
        continue;
      if (strcmp (l.broker, broker) == 0
          && sscanf (l.text, "ApiKey %63s (%d) Versions %d..%d", name, &key, min, max) == 4
          && strcmp (name, api) == 0)
        found = TRUE;
      g_free (l.broker);
      if (found)
        return TRUE;
    }
  return FALSE;
}

static gboolean
is_needed (NeedWhen when, const KtFeatureNeeds *needs)
{
  switch (when)
    {
    case NEED_ALWAYS:
      return TRUE;
    case NEED_GROUP:
      return needs->group;
    case NEED_GSSAPI:
      return needs->sasl != NULL && g_ascii_strcasecmp (needs->sasl, "GSSAPI") == 0;
    case NEED_OTHER_SASL:
      return needs->sasl != NULL && g_ascii_strcasecmp (needs->sasl, "GSSAPI") != 0;
    }
  return FALSE;
}

/* "JoinGroup v2..v9, not v0" for each API that librdkafka found wanting
 * in @broker for @feature ("Feature F: API (A..B) NOT supported by
 * broker"). */
static char *
wanting (const GPtrArray *lines, const char *broker, const char *feature)
{
  g_autoptr(GString) out = g_string_new (NULL);

  for (guint i = 0; i < lines->len; i++)
    {
      Line l;
      char name[64], api[64];
      int lo, hi, min, max;

      if (!parse_line (lines->pdata[i], &l))
        continue;
      if (strcmp (l.broker, broker) == 0
          && sscanf (l.text, "Feature %63[^:]: %63s (%d..%d) NOT supported", name, api, &lo, &hi) == 4
          && strcmp (name, feature) == 0)
        {
          if (out->len > 0)
            g_string_append (out, ", ");
          if (broker_range (lines, broker, api, &min, &max))
            g_string_append_printf (out, "%s v%d..v%d, not v%d", api, min, max, lo);
          else
            g_string_append_printf (out, "no %s", api);
        }
      g_free (l.broker);
    }
  return g_string_free (g_steal_pointer (&out), out->len == 0);
}

/* The first broker in @lines that serves Fetch, and the lowest version it
 * serves; NULL when none says. */
static char *
fetch_floor (const GPtrArray *lines, int *fmin)
{
  for (guint i = 0; i < lines->len; i++)
    {
      Line l;
      int fmax;

      if (!parse_line (lines->pdata[i], &l))
        continue;
      if (broker_range (lines, l.broker, "Fetch", fmin, &fmax))
        return l.broker;
      g_free (l.broker);
    }
  return NULL;
}

/* librdkafka before 2.6.1 builds SCRAM's client-final-message with the
 * client nonce twice; brokers before 4.0 let it pass, 4.0 and later
 * compare nonces as RFC 5802 says and answer "invalid credentials",
 * whatever the password: a user would hunt a wrong password that is
 * right. */
static char *
scram_verdict (const GPtrArray *lines, const KtFeatureNeeds *needs)
{
  int version = needs->librdkafka != 0 ? needs->librdkafka : rd_kafka_version ();
  int fmin = -1;
  g_autofree char *broker = NULL;

  if (needs->sasl == NULL || g_ascii_strncasecmp (needs->sasl, "SCRAM-", 6) != 0
      || version >= 0x020601ff)
    return NULL;
  broker = fetch_floor (lines, &fmin);
  if (broker == NULL || fmin < 4)
    return NULL;
  return g_strdup_printf ("broker %s (Kafka 4.0 or later, serving Fetch v%d and up) rejects "
                          "the %s proofs of librdkafka %d.%d.%d as invalid credentials, "
                          "whatever the password (librdkafka before 2.6.1 repeats the client "
                          "nonce, its issue 4895): use librdkafka 2.6.1 or later, or "
                          "sasl.mechanisms=PLAIN over SASL_SSL",
                          broker, fmin, needs->sasl, (version >> 24) & 0xff,
                          (version >> 16) & 0xff, (version >> 8) & 0xff);
}

char *
kt_features_verdict (const GPtrArray *lines, const KtFeatureNeeds *needs)
{
  char *scram = scram_verdict (lines, needs);

  if (scram != NULL)
    return scram;
  for (guint i = 0; i < lines->len; i++)
    {
      Line l;

      if (!parse_line (lines->pdata[i], &l))
        continue;
      g_autofree char *broker = l.broker;
      if (!g_str_has_prefix (l.text, "Disabling feature "))
        continue;
      const char *feature = l.text + strlen ("Disabling feature ");
      for (gsize n = 0; n < G_N_ELEMENTS (needed); n++)
        {
          if (strcmp (feature, needed[n].feature) != 0 || !is_needed (needed[n].when, needs))
            continue;
          g_autofree char *serves = wanting (lines, broker, feature);
          int fmin = -1, fmax, jmin, jmax;
          /* Kafka 4.0 removed Fetch v0-v3 (KIP-896): the surest sign of
           * a 4.x broker in ApiVersions, which carry no release number. */
          const char *line = "";
          if (broker_range (lines, broker, "Fetch", &fmin, &fmax))
            line = fmin >= 4 ? "Kafka 4.0 or later, " : "Kafka before 4.0, ";
          /* 4.0.0 alone lacks JoinGroup v0 and v1 (KAFKA-19444). */
          gboolean k400 = fmin >= 4 && broker_range (lines, broker, "JoinGroup", &jmin, &jmax)
                          && jmin == 2;
          return g_strdup_printf ("broker %s (%sserving %s) makes librdkafka %s turn off its "
                                  "feature %s, which %s needs: %s",
                                  broker, k400 ? "Apache Kafka 4.0.0, " : line,
                                  serves != NULL ? serves : "other protocol versions",
                                  rd_kafka_version_str (), feature, needed[n].what,
                                  k400 ? "Kafka 4.0.1 and later serve JoinGroup v0 again, and "
                                         "librdkafka 2.11.1 or later does without it"
                                       : "librdkafka 2.11.1 or later keeps it (its issue 4948)");
        }
    }
  return NULL;
}

/* ---------------------------------------------------------------------- */
/* The probe */

typedef struct
{
  GMutex     lock;
  GPtrArray *lines;  /* the feature lines librdkafka logged */
  gboolean   known;  /* librdkafka has weighed a connection's features */
} Probe;

static void
probe_log (const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
  Probe *probe = rd_kafka_opaque (rk);

  (void) level;
  if (strcmp (fac, "APIVERSION") != 0 && strcmp (fac, "FEATURE") != 0)
    return;
  g_mutex_lock (&probe->lock);
  g_ptr_array_add (probe->lines, g_strdup (buf));
  /* librdkafka weighs all its features at once, on the broker's thread,
   * when the ApiVersions answer arrives; the rest of those lines are in
   * once the client is destroyed (its threads joined). */
  if (strstr (buf, "abling feature ") != NULL)
    probe->known = TRUE;
  g_mutex_unlock (&probe->lock);
}

static void
probe_error (rd_kafka_t *rk, int err, const char *reason, void *opaque)
{
  /* The consumer reports its own connection failures. */
  (void) rk, (void) err, (void) reason, (void) opaque;
}

static gboolean
probe_known (Probe *probe)
{
  gboolean known;

  g_mutex_lock (&probe->lock);
  known = probe->known;
  g_mutex_unlock (&probe->lock);
  return known;
}

gboolean
kt_features_check (const rd_kafka_conf_t *conf, gboolean group, int timeout_ms,
                   gboolean *judged, GError **error)
{
  g_autoptr(rd_kafka_conf_t) probe_conf = rd_kafka_conf_dup (conf);
  Probe probe = { .lines = g_ptr_array_new_with_free_func (g_free) };
  KtFeatureNeeds needs = { .group = group };
  char protocol[64] = "", mechanism[64] = "", errstr[512];
  size_t size;
  gint64 deadline = g_get_monotonic_time () + (gint64) timeout_ms * 1000;
  gboolean answered = FALSE, ok = TRUE;
  rd_kafka_t *rk;

  *judged = FALSE;
  g_mutex_init (&probe.lock);
  size = sizeof protocol;
  rd_kafka_conf_get (probe_conf, "security.protocol", protocol, &size);
  size = sizeof mechanism;
  rd_kafka_conf_get (probe_conf, "sasl.mechanisms", mechanism, &size);
  if (g_ascii_strncasecmp (protocol, "sasl_", 5) == 0)
    needs.sasl = mechanism;

  rd_kafka_conf_set_opaque (probe_conf, &probe);
  rd_kafka_conf_set_log_cb (probe_conf, probe_log);
  rd_kafka_conf_set_error_cb (probe_conf, probe_error);
  /* A producer: it joins no group and fetches nothing; the consumer's
   * properties only earn warnings, which go to probe_log and are dropped. */
  if (rd_kafka_conf_set (probe_conf, "debug", "feature", errstr, sizeof errstr) != RD_KAFKA_CONF_OK
      || rd_kafka_conf_set (probe_conf, "log_level", "7", errstr, sizeof errstr) != RD_KAFKA_CONF_OK
      || (rk = rd_kafka_new (RD_KAFKA_PRODUCER, probe_conf, errstr, sizeof errstr)) == NULL)
    {
      /* Nothing to judge by: the consumer's own creation reports what is wrong. */
      g_ptr_array_unref (probe.lines);
      g_mutex_clear (&probe.lock);
      return TRUE;
    }
  probe_conf = NULL;  /* rd_kafka_new() owns it now */

  /* Any request makes it connect; the features are known once the
   * broker's ApiVersions answer is read, even if a later step (SASL) fails. */
  while (!answered && !probe_known (&probe) && g_get_monotonic_time () < deadline)
    {
      const struct rd_kafka_metadata *md = NULL;
      if (rd_kafka_metadata (rk, 0, NULL, &md, 200) == RD_KAFKA_RESP_ERR_NO_ERROR)
        {
          rd_kafka_metadata_destroy (md);
          answered = TRUE;
        }
    }
  rd_kafka_destroy (rk);

  g_mutex_lock (&probe.lock);
  if (answered || probe.known)
    {
      *judged = TRUE;
      g_autofree char *verdict = kt_features_verdict (probe.lines, &needs);
      if (verdict != NULL)
        {
          g_set_error_literal (error, KT_ERROR, KT_ERROR_FATAL, verdict);
          ok = FALSE;
        }
      else
        g_debug ("librdkafka %s keeps every protocol feature this job needs from these brokers",
                 rd_kafka_version_str ());
    }
  g_mutex_unlock (&probe.lock);
  g_ptr_array_unref (probe.lines);
  g_mutex_clear (&probe.lock);
  return ok;
}

gboolean
kt_broker_failure_final (const char *failure)
{
  if (failure == NULL)
    return FALSE;
  /* SASL: the broker's answer to the credentials (PLAIN "Invalid username
   * or password", SCRAM "... due to invalid credentials"). Not
   * "SaslAuthenticateRequest failed: ...", a request lost locally (the
   * handle destroyed, a timeout) before any answer. */
  if (strstr (failure, "SASL authentication error: Authentication failed") != NULL)
    return TRUE;
  /* TLS: OpenSSL's verdict on the brokers' chain. Other handshake failures
   * (a connection reset by a broker restarting) may heal. */
  return strstr (failure, "SSL handshake failed") != NULL
         && strstr (failure, "certificate verify failed") != NULL;
}
