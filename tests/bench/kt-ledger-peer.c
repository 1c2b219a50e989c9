/* kt-ledger-peer.c - the ledger a user would write first: the benchmark's
 * peer for `ktally run --kind ledger`.
 *
 * One SQL transaction per ledger transaction, with the same exactness as
 * ktally's ledger: each message, in (partition, offset) order,
 *   START TRANSACTION;
 *   SELECT offset FROM peer_offset ... FOR UPDATE   -- the fence: a message
 *                                                   -- already stored is skipped
 *   SELECT ... FROM ledger_applied / ledger_rejected WHERE txn = ?   -- dedup
 *   SELECT balance FROM account_balance WHERE account = ? FOR UPDATE
 *   INSERT/UPDATE account_balance; INSERT ledger_applied or ledger_rejected
 *                                                   -- overdraft: rejected
 *   UPDATE peer_offset SET offset = offset + 1
 *   COMMIT;
 * over one connection, text queries with escaped values, one thread:
 * the straightforward design, not a strawman (no sleep, no reconnect per
 * message, the same durable MariaDB ktally writes to). A bad message
 * (not JSON, a field missing or not a string, an amount that is not a
 * decimal string of at most 4 decimals within 64 bits) only moves the
 * offset. It validates what kt-ledger-gen produces, not the whole list
 * of hostile inputs ktally refuses; its balances, applied and rejected
 * txns must equal kt-ledger-gen --expect (scripts/bench checks them).
 *
 *   kt-ledger-peer --brokers B --topic T --db-host H --db-port P
 *                  --db-user U --db-password PW --db NAME
 *
 * Reads every partition from its stored offset (0 the first time) to its
 * high watermark at start, then prints one line:
 *   messages=N applied=A rejected=R duplicates=D bad=B seconds=S
 * (seconds: from the first message to the last commit). Tables are
 * ktally's names (account_balance, ledger_applied, ledger_rejected) in a
 * database of the peer's own, plus peer_offset. Benchmark infrastructure
 * (scripts/bench): never linked into ktally. */
#include <stdio.h>
#include <string.h>

#include <glib.h>
#include <json-glib/json-glib.h>
#include <librdkafka/rdkafka.h>
#include <mysql.h>

#include "kt-support.h"

#define SCALE 10000  /* amounts in 1/10000 units: DECIMAL(20,4) */

static const char *const ddl[] = {
  "CREATE TABLE IF NOT EXISTS account_balance ("
  " account VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PRIMARY KEY,"
  " balance DECIMAL(20,4) NOT NULL) ENGINE = InnoDB",
  "CREATE TABLE IF NOT EXISTS ledger_applied ("
  " txn VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PRIMARY KEY,"
  " account VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,"
  " amount DECIMAL(20,4) NOT NULL, balance DECIMAL(20,4) NOT NULL, ts DATETIME NOT NULL,"
  " `partition` INT NOT NULL, `offset` BIGINT NOT NULL) ENGINE = InnoDB",
  "CREATE TABLE IF NOT EXISTS ledger_rejected ("
  " txn VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PRIMARY KEY,"
  " account VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,"
  " amount DECIMAL(20,4) NOT NULL, reason VARCHAR(32) NOT NULL, ts DATETIME NOT NULL,"
  " `partition` INT NOT NULL, `offset` BIGINT NOT NULL) ENGINE = InnoDB",
  "CREATE TABLE IF NOT EXISTS peer_offset ("
  " topic VARCHAR(249) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,"
  " `partition` INT NOT NULL, `offset` BIGINT NOT NULL,"
  " PRIMARY KEY (topic, `partition`)) ENGINE = InnoDB",
};

typedef struct
{
  char   *txn, *account, *ts;
  gint64  amount;
} Txn;

static void
txn_clear (Txn *t)
{
  g_clear_pointer (&t->txn, g_free);
  g_clear_pointer (&t->account, g_free);
  g_clear_pointer (&t->ts, g_free);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Txn, txn_clear)

/* "-12.5" -> -125000: digits, at most 4 decimals, within 64 bits. */
static gboolean
parse_amount (const char *s, gint64 *out)
{
  gboolean neg = *s == '-';
  guint64 v = 0;
  int decimals = -1;

  if (neg)
    s++;
  if (!g_ascii_isdigit (*s))
    return FALSE;
  for (; *s; s++)
    {
      if (*s == '.' && decimals < 0)
        {
          decimals = 0;
          continue;
        }
      if (!g_ascii_isdigit (*s) || (decimals >= 0 && ++decimals > 4))
        return FALSE;
      if (v > (guint64) (G_MAXINT64 / 10))
        return FALSE;
      v = v * 10 + (guint64) (*s - '0');
    }
  if (decimals == 0)
    return FALSE;  /* "12." */
  for (int d = decimals < 0 ? 0 : decimals; d < 4; d++)
    {
      if (v > (guint64) (G_MAXINT64 / 10))
        return FALSE;
      v *= 10;
    }
  if (v > (guint64) G_MAXINT64)
    return FALSE;
  *out = neg ? -(gint64) v : (gint64) v;
  return TRUE;
}

static void
format_amount (gint64 v, char buf[static 32])
{
  guint64 a = v < 0 ? (guint64) -v : (guint64) v;
  g_snprintf (buf, 32, "%s%" G_GUINT64_FORMAT ".%04u", v < 0 ? "-" : "", a / SCALE,
              (guint) (a % SCALE));
}

static gboolean
string_member (JsonObject *o, const char *name, char **out)
{
  JsonNode *n = json_object_get_member (o, name);

  if (n == NULL || !JSON_NODE_HOLDS_VALUE (n) || json_node_get_value_type (n) != G_TYPE_STRING)
    return FALSE;
  *out = g_strdup (json_node_get_string (n));
  return TRUE;
}

/* FALSE: a bad message. */
static gboolean
parse_txn (const char *value, gsize len, Txn *t)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autofree char *amount = NULL;
  JsonNode *root;

  if (!json_parser_load_from_data (parser, value, (gssize) len, NULL))
    return FALSE;
  root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return FALSE;
  JsonObject *o = json_node_get_object (root);
  if (!string_member (o, "txn", &t->txn) || !string_member (o, "account", &t->account)
      || !string_member (o, "ts", &t->ts) || !string_member (o, "amount", &amount)
      || *t->txn == '\0' || *t->account == '\0' || !parse_amount (amount, &t->amount))
    {
      txn_clear (t);
      return FALSE;
    }
  return TRUE;
}

typedef struct
{
  MYSQL   *db;
  GString *sql;
  char    *topic_q;  /* escaped topic */
} Peer;

static char *
quote (Peer *p, const char *s)
{
  gsize len = strlen (s);
  char *out = g_malloc (len * 2 + 3);
  out[0] = '\'';
  gsize n = mysql_real_escape_string (p->db, out + 1, s, (unsigned long) len);
  out[n + 1] = '\'';
  out[n + 2] = '\0';
  return out;
}

static gboolean
run (Peer *p, const char *sql)
{
  if (mysql_query (p->db, sql) == 0)
    return TRUE;
  g_printerr ("kt-ledger-peer: %s: %s\n", sql, mysql_error (p->db));
  return FALSE;
}

/* The first column of the first row, or NULL for no row (*ok tells an
 * error). */
static char *
query_value (Peer *p, const char *sql, gboolean *ok)
{
  MYSQL_RES *res;
  MYSQL_ROW row;
  char *v = NULL;

  *ok = run (p, sql) && (res = mysql_store_result (p->db)) != NULL;
  if (!*ok)
    return NULL;
  if ((row = mysql_fetch_row (res)) != NULL && row[0] != NULL)
    v = g_strdup (row[0]);
  mysql_free_result (res);
  return v;
}

typedef enum { DONE_SKIPPED, DONE_BAD, DONE_DUP, DONE_APPLIED, DONE_REJECTED, DONE_ERROR } Done;

/* One message, one transaction. */
static Done
apply (Peer *p, const rd_kafka_message_t *m)
{
  g_auto (Txn) t = { 0 };
  g_autofree char *stored = NULL, *found = NULL, *balance = NULL;
  g_autofree char *txn_q = NULL, *acc_q = NULL, *ts_q = NULL;
  Done done;
  gboolean ok;
  gint64 bal = 0;
  char amount[32], after[32];

  if (!run (p, "START TRANSACTION"))
    return DONE_ERROR;
  g_string_printf (p->sql, "SELECT `offset` FROM peer_offset WHERE topic = %s AND "
                   "`partition` = %d FOR UPDATE", p->topic_q, (int) m->partition);
  stored = query_value (p, p->sql->str, &ok);
  if (!ok || stored == NULL)
    return DONE_ERROR;
  if (g_ascii_strtoll (stored, NULL, 10) != m->offset)
    {
      /* Stored already (or a gap, which the caller's order rules out). */
      run (p, "ROLLBACK");
      return DONE_SKIPPED;
    }

  if (!parse_txn (m->payload, m->len, &t))
    done = DONE_BAD;
  else
    {
      txn_q = quote (p, t.txn);
      acc_q = quote (p, t.account);
      ts_q = quote (p, t.ts);
      g_string_printf (p->sql, "SELECT 1 FROM ledger_applied WHERE txn = %s UNION ALL "
                       "SELECT 1 FROM ledger_rejected WHERE txn = %s", txn_q, txn_q);
      found = query_value (p, p->sql->str, &ok);
      if (!ok)
        return DONE_ERROR;
      if (found != NULL)
        done = DONE_DUP;
      else
        {
          g_string_printf (p->sql, "SELECT balance FROM account_balance WHERE account = %s "
                           "FOR UPDATE", acc_q);
          balance = query_value (p, p->sql->str, &ok);
          if (!ok)
            return DONE_ERROR;
          if (balance == NULL)
            {
              g_string_printf (p->sql, "INSERT INTO account_balance (account, balance) "
                               "VALUES (%s, 0)", acc_q);
              if (!run (p, p->sql->str))
                return DONE_ERROR;
            }
          else if (!parse_amount (balance, &bal))
            return DONE_ERROR;
          format_amount (t.amount, amount);
          if ((t.amount < 0 && bal + t.amount < 0) || (t.amount > 0 && bal > G_MAXINT64 - t.amount))
            {
              g_string_printf (p->sql, "INSERT INTO ledger_rejected (txn, account, amount, "
                               "reason, ts, `partition`, `offset`) VALUES (%s, %s, %s, '%s', %s, "
                               "%d, %" G_GINT64_FORMAT ")", txn_q, acc_q, amount,
                               t.amount < 0 ? "insufficient funds" : "overflow", ts_q,
                               (int) m->partition, (gint64) m->offset);
              done = DONE_REJECTED;
            }
          else
            {
              format_amount (bal + t.amount, after);
              g_string_printf (p->sql, "UPDATE account_balance SET balance = %s WHERE "
                               "account = %s", after, acc_q);
              if (!run (p, p->sql->str))
                return DONE_ERROR;
              g_string_printf (p->sql, "INSERT INTO ledger_applied (txn, account, amount, "
                               "balance, ts, `partition`, `offset`) VALUES (%s, %s, %s, %s, %s, "
                               "%d, %" G_GINT64_FORMAT ")", txn_q, acc_q, amount, after, ts_q,
                               (int) m->partition, (gint64) m->offset);
              done = DONE_APPLIED;
            }
          if (!run (p, p->sql->str))
            return DONE_ERROR;
        }
    }
  g_string_printf (p->sql, "UPDATE peer_offset SET `offset` = `offset` + 1 WHERE topic = %s "
                   "AND `partition` = %d", p->topic_q, (int) m->partition);
  if (!run (p, p->sql->str) || !run (p, "COMMIT"))
    return DONE_ERROR;
  return done;
}

static rd_kafka_t *
new_consumer (const char *brokers)
{
  g_autoptr (rd_kafka_conf_t) conf = rd_kafka_conf_new ();
  char errstr[512];
  rd_kafka_t *rk;

  if (!kt_support_conf_set (conf, "bootstrap.servers", brokers)
      || !kt_support_conf_set (conf, "group.id", "kt-ledger-peer")
      || !kt_support_conf_set (conf, "enable.auto.commit", "false")
      || !kt_support_conf_set (conf, "enable.partition.eof", "false")
      || !kt_support_conf_set (conf, "fetch.wait.max.ms", "10"))
    return NULL;
  rk = rd_kafka_new (RD_KAFKA_CONSUMER, conf, errstr, sizeof errstr);
  if (rk == NULL)
    g_printerr ("kt-ledger-peer: rd_kafka_new: %s\n", errstr);
  else
    conf = NULL;  /* rd_kafka_new() owns it now */
  return rk;
}

int
main (int argc, char **argv)
{
  g_autofree char *brokers = NULL, *topic = NULL, *host = NULL, *user = NULL,
                  *password = NULL, *dbname = NULL;
  int port = 3306;
  GOptionEntry entries[] = {
    { "brokers", 'b', 0, G_OPTION_ARG_STRING, &brokers, "Bootstrap servers", "LIST" },
    { "topic", 't', 0, G_OPTION_ARG_STRING, &topic, "Topic", "NAME" },
    { "db-host", 0, 0, G_OPTION_ARG_STRING, &host, "MySQL host", "HOST" },
    { "db-port", 0, 0, G_OPTION_ARG_INT, &port, "MySQL port", "PORT" },
    { "db-user", 0, 0, G_OPTION_ARG_STRING, &user, "MySQL user", "USER" },
    { "db-password", 0, 0, G_OPTION_ARG_STRING, &password, "MySQL password", "PW" },
    { "db", 0, 0, G_OPTION_ARG_STRING, &dbname, "The peer's database", "NAME" },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- the one-transaction-per-record ledger");
  g_autoptr (GError) error = NULL;
  g_autoptr (KtSupportMetadata) md = NULL;
  g_autofree gint64 *high = NULL;
  rd_kafka_topic_partition_list_t *assignment;
  rd_kafka_t *rk, *meta;
  rd_kafka_topic_t *rkt;
  rd_kafka_queue_t *queue;
  Peer p = { 0 };
  guint64 counts[DONE_ERROR] = { 0 };
  gint64 first_us = 0, last_us = 0, idle_since;
  int n_parts, remaining = 0;
  unsigned int timeout = 10;

  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      g_printerr ("kt-ledger-peer: %s\n", error->message);
      return 2;
    }
  if (brokers == NULL || topic == NULL || host == NULL || user == NULL || dbname == NULL)
    {
      g_printerr ("kt-ledger-peer: --brokers, --topic, --db-host, --db-user and --db are "
                  "required\n");
      return 2;
    }

  p.db = mysql_init (NULL);
  p.sql = g_string_new (NULL);
  mysql_options (p.db, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
  if (mysql_real_connect (p.db, host, user, password, dbname, (unsigned) port, NULL, 0) == NULL)
    {
      g_printerr ("kt-ledger-peer: cannot connect to %s:%d/%s: %s\n", host, port, dbname,
                  mysql_error (p.db));
      return 1;
    }
  mysql_set_character_set (p.db, "utf8mb4");
  for (guint i = 0; i < G_N_ELEMENTS (ddl); i++)
    if (!run (&p, ddl[i]))
      return 1;
  if (!run (&p, "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ"))
    return 1;
  p.topic_q = quote (&p, topic);

  meta = new_consumer (brokers);
  rk = new_consumer (brokers);
  if (meta == NULL || rk == NULL)
    return 2;
  rkt = rd_kafka_topic_new (rk, topic, NULL);
  if (rd_kafka_metadata (rk, 0, rkt, &md, 10000) != RD_KAFKA_RESP_ERR_NO_ERROR
      || md->topic_cnt != 1 || md->topics[0].err || md->topics[0].partition_cnt <= 0)
    {
      g_printerr ("kt-ledger-peer: no metadata for topic %s\n", topic);
      return 1;
    }
  rd_kafka_topic_destroy (rkt);
  n_parts = md->topics[0].partition_cnt;
  high = g_new0 (gint64, n_parts);
  assignment = rd_kafka_topic_partition_list_new (n_parts);
  for (int part = 0; part < n_parts; part++)
    {
      int64_t lo = 0, hi = 0;
      g_autofree char *stored = NULL;
      gboolean ok;

      if (rd_kafka_query_watermark_offsets (meta, topic, part, &lo, &hi, 10000)
          != RD_KAFKA_RESP_ERR_NO_ERROR)
        {
          g_printerr ("kt-ledger-peer: no watermarks for %s/%d\n", topic, part);
          return 1;
        }
      g_string_printf (p.sql, "INSERT IGNORE INTO peer_offset (topic, `partition`, `offset`) "
                       "VALUES (%s, %d, 0)", p.topic_q, part);
      if (!run (&p, p.sql->str) || !run (&p, "COMMIT"))
        return 1;
      g_string_printf (p.sql, "SELECT `offset` FROM peer_offset WHERE topic = %s AND "
                       "`partition` = %d", p.topic_q, part);
      stored = query_value (&p, p.sql->str, &ok);
      if (!ok || stored == NULL)
        return 1;
      high[part] = hi;
      rd_kafka_topic_partition_list_add (assignment, topic, part)->offset
          = g_ascii_strtoll (stored, NULL, 10);
      remaining += rd_kafka_topic_partition_list_find (assignment, topic, part)->offset < hi;
    }
  if (rd_kafka_assign (rk, assignment) != RD_KAFKA_RESP_ERR_NO_ERROR)
    {
      g_printerr ("kt-ledger-peer: assign failed\n");
      return 1;
    }
  rd_kafka_topic_partition_list_destroy (assignment);
  queue = rd_kafka_queue_get_consumer (rk);

  idle_since = g_get_monotonic_time ();
  while (remaining > 0)
    {
      rd_kafka_message_t *m = rd_kafka_consume_queue (queue, 100);
      Done done;

      if (m == NULL)
        {
          if (g_get_monotonic_time () - idle_since > 30 * G_USEC_PER_SEC)
            {
              g_printerr ("kt-ledger-peer: no message for 30 s, %d partition(s) left\n",
                          remaining);
              return 1;
            }
          continue;
        }
      idle_since = g_get_monotonic_time ();
      if (m->err)
        {
          g_printerr ("kt-ledger-peer: %s/%d: %s\n", topic, m->partition,
                      rd_kafka_message_errstr (m));
          rd_kafka_message_destroy (m);
          continue;
        }
      if (first_us == 0)
        first_us = g_get_monotonic_time ();
      done = apply (&p, m);
      if (done == DONE_ERROR)
        return 1;
      counts[done]++;
      last_us = g_get_monotonic_time ();
      if (m->offset == high[m->partition] - 1)
        remaining--;
      rd_kafka_message_destroy (m);
    }

  printf ("messages=%" G_GUINT64_FORMAT " applied=%" G_GUINT64_FORMAT " rejected=%"
          G_GUINT64_FORMAT " duplicates=%" G_GUINT64_FORMAT " bad=%" G_GUINT64_FORMAT
          " skipped=%" G_GUINT64_FORMAT " seconds=%.3f\n",
          counts[DONE_APPLIED] + counts[DONE_REJECTED] + counts[DONE_DUP] + counts[DONE_BAD],
          counts[DONE_APPLIED], counts[DONE_REJECTED], counts[DONE_DUP], counts[DONE_BAD],
          counts[DONE_SKIPPED], (double) (last_us - first_us) / 1e6);
  fflush (stdout);

  rd_kafka_queue_destroy (queue);
  rd_kafka_consumer_close (rk);
  rd_kafka_destroy (rk);
  rd_kafka_destroy (meta);
  mysql_close (p.db);
  g_string_free (p.sql, TRUE);
  g_free (p.topic_q);
  return 0;
}
