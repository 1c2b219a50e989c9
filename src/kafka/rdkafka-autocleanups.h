/* rdkafka-autocleanups.h - g_autoptr() for librdkafka's types.
 *
 * librdkafka predates GLib's cleanup macros; declaring them here once lets
 * every module of the kafka layer say who frees. */
#pragma once
#include <glib.h>
#include <librdkafka/rdkafka.h>

G_DEFINE_AUTOPTR_CLEANUP_FUNC (rd_kafka_conf_t, rd_kafka_conf_destroy)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (rd_kafka_topic_partition_list_t,
                               rd_kafka_topic_partition_list_destroy)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (rd_kafka_queue_t, rd_kafka_queue_destroy)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (rd_kafka_topic_t, rd_kafka_topic_destroy)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (rd_kafka_message_t, rd_kafka_message_destroy)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (rd_kafka_t, rd_kafka_destroy)

/* rd_kafka_metadata() hands back a const struct freed by its own call. */
typedef const struct rd_kafka_metadata KtKafkaMetadata;
static inline void
kt_kafka_metadata_free (KtKafkaMetadata *md)
{
  if (md != NULL)
    rd_kafka_metadata_destroy (md);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC (KtKafkaMetadata, kt_kafka_metadata_free)
