/* autocleanups.h - g_autoptr() for the C libraries ktally uses.
 *
 * librdkafka, MariaDB Connector/C and pcre2 predate GLib's cleanup
 * macros; declaring them here once lets every module say who frees. */
#pragma once
#include <glib.h>
#include <librdkafka/rdkafka.h>
#include <mysql.h>
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

G_DEFINE_AUTOPTR_CLEANUP_FUNC (rd_kafka_conf_t, rd_kafka_conf_destroy)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (rd_kafka_topic_partition_list_t,
                               rd_kafka_topic_partition_list_destroy)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (rd_kafka_queue_t, rd_kafka_queue_destroy)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (rd_kafka_topic_t, rd_kafka_topic_destroy)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (rd_kafka_message_t, rd_kafka_message_destroy)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (MYSQL_RES, mysql_free_result)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (MYSQL_STMT, mysql_stmt_close)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (pcre2_code, pcre2_code_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (pcre2_match_data, pcre2_match_data_free)

/* rd_kafka_metadata() hands back a const struct freed by its own call. */
typedef const struct rd_kafka_metadata KtKafkaMetadata;
static inline void
kt_kafka_metadata_free (KtKafkaMetadata *md)
{
  if (md != NULL)
    rd_kafka_metadata_destroy (md);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC (KtKafkaMetadata, kt_kafka_metadata_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (rd_kafka_t, rd_kafka_destroy)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (MYSQL, mysql_close)
