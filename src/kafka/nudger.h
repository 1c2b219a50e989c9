/* nudger.h - wakes librdkafka's fetchers when the app has made room in a
 * full pre-fetch queue, for librdkafka before 2.2.
 *
 * Before 2.2 a fetcher stopped by a full consumer queue looks again only
 * on its broker thread's one-second timer, so a consumer faster than that
 * stalls (nudger.c has the figures). librdkafka 2.2 added
 * fetch.queue.backoff.ms, which source.c sets instead, and source.c starts
 * a nudger only on older versions.
 *
 * DELETABLE once librdkafka >= 2.2 is the minimum: remove nudger.[ch]
 * and, in source.c, the `nudger` field, maybe_nudge() and its two calls,
 * the taken_records/taken_bytes counters and queue_bytes, and the
 * has_fetch_queue_backoff() test around starting it. */
#pragma once
#include <glib.h>
#include <librdkafka/rdkafka.h>

typedef struct _KtNudger KtNudger;

/* Starts the nudger's thread on the consuming handle @rk (borrowed: it
 * must outlive the nudger). */
KtNudger *kt_nudger_new  (rd_kafka_t *rk);

/* Asks for a nudge: the thread asks each assigned partition's leader for
 * its log end, which wakes that leader's broker thread. Never blocks;
 * pokes that come before the last one was served make one nudge. */
void      kt_nudger_poke (KtNudger *n);

/* Stops and joins the thread; call before the handle goes. NULL is fine. */
void      kt_nudger_free (KtNudger *n);
