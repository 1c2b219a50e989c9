/* source.h - the Kafka source: reads exactly a planned set of ranges.
 *
 * Plain librdkafka client code: partitions are assigned at the planned
 * offsets (no consumer group offsets, no auto-commit) and read up to each
 * range's end. They stay assigned between batches, so the next batch's
 * records are already fetched; a range that does not start where the
 * previous one ended (a fence, a failed batch) seeks. Metadata and
 * watermarks are asked on a second handle, so those requests never queue
 * behind a waiting Fetch. */
#pragma once
#include <glib.h>
#include "plan.h"

typedef struct _KtSource KtSource;

/* Where Kafka is: --brokers and -X (the options that reach it). */
typedef struct
{
  char  *brokers;     /* host:port[,...], or NULL where a command may go without */
  char **properties;  /* -X key=value, in order, checked (kprops.h), or NULL */
} KtKafkaOptions;

typedef struct
{
  const char         *brokers;
  const char         *topic;
  const char         *client_id;     /* shown to the brokers; the job name */
  const char *const  *properties;    /* "key=value" for rd_kafka_conf_set, or NULL */
  gint64              max_batch_bytes;  /* stop a read after this many value bytes */
  const char         *group;         /* --group: join this consumer group, or NULL */
  /* --group: where newly assigned partitions start. Fills ->stored of each
   * state (partition set) with the offset the partition must be read from
   * (the one in kafka_offset), or fails; called on the consuming thread
   * from inside a rebalance. */
  gboolean          (*start_offsets) (KtPartitionState *states, guint n,
                                      gpointer user_data, GError **error);
  gpointer            start_offsets_data;
  /* --group: called on the consuming thread as a rebalance begins, before
   * any partition changes hands (start_offsets_data is its argument), or
   * NULL. */
  void              (*rebalancing) (gpointer user_data);
  /* Set by SIGTERM/SIGINT: waits on Kafka give up early (KT_ERROR_CANCELLED). */
  const volatile int *stop;
} KtSourceConfig;

/* Called for each record of a range, in offset order per partition. A NULL
 * @value is a tombstone. */
typedef void (*KtRecordFunc) (gint32 partition, gint64 offset,
                              const char *value, gsize len, gpointer user_data);

/* Creates both handles. Fails with KT_ERROR_USAGE when a property is
 * refused by librdkafka (its message names the key). Contacts nobody. */
KtSource *kt_source_new  (const KtSourceConfig *config, GError **error);
/* NULL is fine. Waits for librdkafka to close the handles at most 10 s,
 * or until a SIGTERM (*stop) that comes meanwhile: librdkafka 2.0 can
 * wait for ever there once a topic was deleted under an assigned
 * partition; such a source is left behind (logged), never freed. */
void      kt_source_free (KtSource *self);

/* The topic's partition ids, ascending, into @partitions (gint32). Unknown
 * topic: KT_ERROR_FATAL, or KT_ERROR_DATA_LOSS once an earlier call listed
 * it (deleted since); no broker answered within @timeout_ms:
 * KT_ERROR_TRANSIENT. */
gboolean  kt_source_partitions (KtSource *self, GArray *partitions,
                                int timeout_ms, GError **error);

/* Whether the topic may not be the one it was, since the last call: its
 * partitions vanished under the reader (deleted), or a listing
 * (kt_source_partitions()) found other partitions or other replicas than
 * the one before (created again). A kt_source_read() under way meanwhile
 * fails (KT_ERROR_OVERTAKEN) until this is asked. Clears it. */
gboolean  kt_source_take_changed (KtSource *self);
/* The same, without clearing it. */
gboolean  kt_source_changed      (KtSource *self);

/* Log start and end of each partition in @states (fills ->low and
 * ->high), asked of the leaders. The end is the last stable offset (the
 * high watermark less the records of transactions still open: consumers
 * read committed records only, so that is where a job's reading ends).
 * Failure is KT_ERROR_TRANSIENT. */
gboolean  kt_source_watermarks (KtSource *self, KtPartitionState *states,
                                guint n_states, int timeout_ms, GError **error);

/* The high watermark of each partition of @states into @highs[i]: the
 * log's end, open transactions included (at or past the last stable
 * offset of kt_source_watermarks()). Asks on a client of its own, made
 * on first use (`status` only). Failure is KT_ERROR_TRANSIENT. */
gboolean  kt_source_high_watermarks (KtSource *self, const KtPartitionState *states,
                                     guint n_states, gint64 *highs, int timeout_ms,
                                     GError **error);

/* Kafka's offsets-for-times (ListOffsets by timestamp, one request per
 * leader): for each partition of @states, the earliest offset whose
 * record's timestamp (CreateTime, or LogAppendTime on topics that set it)
 * is at or after @ms, into @offsets[i]; -1 where no record is (the time
 * is after the partition's last record, or it is empty). With
 * read_committed (always), the brokers look only below the last stable
 * offset. @states' low and high must be known (kt_source_watermarks()):
 * brokers that answer -1 where a partition holds records even for the
 * epoch's start cannot look up by time at all (librdkafka's mock
 * cluster): KT_ERROR_FATAL. Other failures: KT_ERROR_TRANSIENT. */
gboolean  kt_source_offsets_for_time (KtSource *self, const KtPartitionState *states,
                                      guint n_states, gint64 ms, gint64 *offsets,
                                      int timeout_ms, GError **error);

/* Reads every range of @ranges from read_from up to until, calling @func per
 * record. Gaps in the offsets are fine: a partition is done once a record at
 * until - 1 or later, or its end at until or later, is seen. If the byte cap
 * (or the bound on records carried past their ranges, the queue's record
 * cap) stops the read early, a range's until is lowered to just past the
 * last record read (so the caller commits exactly what was read). Fails with
 * KT_ERROR_CANCELLED once *@stop is set, KT_ERROR_TRANSIENT when no record
 * arrives for @stall_ms, KT_ERROR_OVERTAKEN when an offset vanished to
 * retention while being read (the next plan sees where the log starts now),
 * KT_ERROR_FATAL within seconds when a record batch is larger than
 * receive.message.max.bytes lets librdkafka take (naming the partitions,
 * their offsets and the property to raise), KT_ERROR_OVERTAKEN too when the
 * topic changed meanwhile (kt_source_take_changed()). Each range's anchor
 * is set to the last record handed over of it (unset: none, only holes).
 * @ranges is modified only on
 * success. */
gboolean  kt_source_read (KtSource *self, GArray *ranges, KtRecordFunc func,
                          gpointer user_data, const volatile int *stop,
                          int stall_ms, GError **error);

/* --offsets kafka: fills ->stored of @states from the consumer group's
 * committed offsets (-1 where none). Failure is KT_ERROR_TRANSIENT. */
gboolean  kt_source_committed (KtSource *self, KtPartitionState *states,
                               guint n_states, int timeout_ms, GError **error);

/* --offsets kafka: commits each range's until to the consumer group,
 * synchronously (after the output is written). */
gboolean  kt_source_commit (KtSource *self, const GArray *ranges, GError **error);

/* --group: subscribes to the topic. Kafka's group protocol then assigns
 * this instance its share of the partitions (cooperative-sticky where the
 * brokers allow it). Offsets are never taken from the group: a newly
 * assigned partition starts wherever the next plan (from kafka_offset)
 * says, by a seek. A partition revoked while a batch reads it makes that
 * read fail with KT_ERROR_REBALANCED before anything is committed, so the
 * batch is abandoned whole and the partition released. */
gboolean  kt_source_subscribe (KtSource *self, GError **error);

/* --group: the partitions assigned to this instance now, ascending, and
 * whether any assignment has arrived yet. */
void      kt_source_owned (KtSource *self, GArray *partitions, gboolean *assigned);

/* Between batches, for up to @timeout_ms: reads ahead (records that
 * arrive are kept for the next batch, up to the byte cap and the
 * carried-records bound, so a full pre-fetch queue never stops the
 * fetchers while the scheduler waits), and with --group serves the group's
 * events (assignments, revocations). */
void      kt_source_serve (KtSource *self, int timeout_ms);

/* FALSE with KT_ERROR_FATAL when kt_source_serve() met what retrying
 * cannot cure (an ACL refusing the group or the topic), once;
 * kt_source_is_refused() tells without taking it (the scheduler stops
 * waiting for the next interval). */
gboolean  kt_source_refused    (KtSource *self, GError **error);
gboolean  kt_source_is_refused (KtSource *self);

/* --group: appends to @partitions (gint32) the partitions the group has
 * assigned to this instance since the last call (again, too: revoked and
 * assigned back), and forgets them. */
void      kt_source_take_assigned (KtSource *self, GArray *partitions);

/* --group: how many rebalances (assignments, revocations) this reader
 * applied so far; 0 without a group. A batch planned under one count and
 * committed under another may hold a partition another member now owns,
 * or one that must start from its stored offset (on the reading thread). */
guint64   kt_source_rebalances (KtSource *self);

/* --group: "COOPERATIVE", "EAGER" or "NONE" (no assignment yet). */
const char *kt_source_protocol (KtSource *self);

/* --group, for `ktally status`: which member owns which partition, from
 * the group's description: fills @owners with partition -> member
 * ("client-id@host"), a GHashTable of GINT_TO_POINTER -> char*. */
gboolean  kt_source_group_owners (KtSource *self, const char *group,
                                  GHashTable *owners, int timeout_ms, GError **error);

/* --group: how many members @group has now, and its state ("Stable",
 * "PreparingRebalance"...: *@state, newly allocated), from the group's
 * description. A broker that cannot describe groups (librdkafka's mock)
 * or no answer within @timeout_ms: KT_ERROR_TRANSIENT. */
gboolean  kt_source_group_members (KtSource *self, const char *group, guint *members,
                                   char **state, int timeout_ms, GError **error);

/* The byte cap of the next kt_source_read()s (a reload of
 * --max-batch-bytes). */
void      kt_source_set_max_batch_bytes (KtSource *self, gint64 max_batch_bytes);
/* librdkafka's version, "2.0.2". */
const char *kt_source_library_version (void);

/* The Kafka timestamp (milliseconds since the epoch) of the record at
 * @offset of @partition, the next one to read after a kt_source_read():
 * its own when it was fetched already (carried for the next batch), else
 * that of the record before it, handed over last (no later than its own
 * when timestamps grow with offsets); -1 when neither is at hand. */
gint64    kt_source_unread_timestamp (KtSource *self, gint32 partition, gint64 offset);

/* Value bytes handed to @func by the last kt_source_read(). */
gint64    kt_source_last_bytes (KtSource *self);

/* How often the partition list is read again, in microseconds: the
 * consumer's topic.metadata.refresh.interval.ms (60 s unless -X says). */
gint64    kt_source_metadata_every_us (KtSource *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (KtSource, kt_source_free)
