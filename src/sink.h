/* sink.h - the MySQL sink: counts and offsets, in one transaction.
 *
 * The sink is the only place offsets are stored. A batch's per-minute
 * counts and its kafka_offset updates commit together or not at all, and
 * every offset update is fenced on the offset the batch was planned from,
 * so a second writer on the same job can never count a range twice. */
#pragma once
#include <glib.h>
#include "plan.h"
#include "reduce.h"

typedef struct _KtSink KtSink;

/* Where the database is. Strings are owned by whoever fills the struct. */
typedef struct
{
  char  *host;      /* NULL with a socket */
  guint  port;      /* 0: the client library's default */
  char  *user;
  char  *password;  /* NULL: none (MYSQL_PWD is read by the CLI) */
  char  *database;
  char  *socket;    /* unix socket path, or NULL */
} KtDbConfig;

typedef enum
{
  KT_COMMIT_DONE,     /* counts and offsets are in */
  KT_COMMIT_FENCED,   /* another writer moved an offset first: rolled back */
  KT_COMMIT_FAILED,   /* failed before COMMIT: nothing was written */
  KT_COMMIT_UNKNOWN,  /* the connection died during COMMIT: read it back */
} KtCommitResult;

/* Copies @db; does not connect yet. */
KtSink  *kt_sink_new  (const KtDbConfig *db);
void     kt_sink_free (KtSink *self);  /* NULL is fine */

/* Connects unless connected. Access denied, unknown database:
 * KT_ERROR_FATAL; server unreachable or gone: KT_ERROR_TRANSIENT. Every
 * other call connects on demand and drops the connection after a transient
 * failure, so the next call starts afresh. */
gboolean kt_sink_connect (KtSink *self, GError **error);

/* Whether both tables exist (without creating anything). */
gboolean kt_sink_has_schema (KtSink *self, gboolean *present, GError **error);

/* Applies sql/schema.sql (CREATE TABLE IF NOT EXISTS ...). */
gboolean kt_sink_apply_schema (KtSink *self, GError **error);

/* Fills ->stored of each of @states with @job's offset for @topic, or -1
 * where it has no row. */
gboolean kt_sink_load_offsets (KtSink *self, const char *job, const char *topic,
                               KtPartitionState *states, guint n_states,
                               GError **error);

/* Creates the offset row of a partition seen for the first time. A row
 * that another writer created first is left as it is. */
gboolean kt_sink_init_offset (KtSink *self, const char *job, const char *topic,
                              gint32 partition, gint64 offset, GError **error);

/* One transaction: for each range, UPDATE kafka_offset to until WHERE it is
 * still from (in partition order), then upsert every minute of @reducer
 * adding to log_count (in minute order). Sets *@result; on
 * KT_COMMIT_FENCED, *@fenced_partition names the first partition whose
 * offset had moved. Returns FALSE with *@result FAILED (nothing written) or
 * UNKNOWN (COMMIT was sent and its answer lost: the caller reads the
 * offsets back to learn which, never guesses). */
gboolean kt_sink_commit (KtSink *self, const char *job, const char *topic,
                         const GArray *ranges, KtReducer *reducer,
                         KtCommitResult *result, gint32 *fenced_partition,
                         GError **error);

/* "user@host:port/database" for messages: never the password. */
const char *kt_sink_describe (KtSink *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (KtSink, kt_sink_free)
