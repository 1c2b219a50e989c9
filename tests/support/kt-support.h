/* kt-support.h - small helpers shared by the test/demo support programs
 * (kt-mock-broker, kt-gen).
 *
 * These programs are built apart from ktally on purpose, so they carry
 * their own g_autoptr() declarations instead of including src/. */
#pragma once
#include <glib.h>
#include <librdkafka/rdkafka.h>

G_DEFINE_AUTOPTR_CLEANUP_FUNC (rd_kafka_conf_t, rd_kafka_conf_destroy)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (rd_kafka_t, rd_kafka_destroy)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (rd_kafka_topic_t, rd_kafka_topic_destroy)

/* rd_kafka_metadata() hands back a const struct freed by its own call. */
typedef const struct rd_kafka_metadata KtSupportMetadata;
static inline void
kt_support_metadata_free (KtSupportMetadata *md)
{
  if (md != NULL)
    rd_kafka_metadata_destroy (md);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC (KtSupportMetadata, kt_support_metadata_free)

/* Sets one librdkafka property or says which one was refused: a typo in
 * a property name must stop the program, not be silently ignored. */
static inline gboolean
kt_support_conf_set (rd_kafka_conf_t *conf, const char *name,
                     const char *value)
{
  char errstr[512];

  if (rd_kafka_conf_set (conf, name, value, errstr, sizeof errstr)
      != RD_KAFKA_CONF_OK)
    {
      g_printerr ("librdkafka refused %s=%s: %s\n", name, value, errstr);
      return FALSE;
    }
  return TRUE;
}

/* One error domain for the support programs: their errors are only ever
 * printed, so a single code is enough. */
#define KT_SUPPORT_ERROR (g_quark_from_static_string ("kt-support-error"))
#define KT_SUPPORT_FAILED 0
