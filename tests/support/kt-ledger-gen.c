/* kt-ledger-gen.c - writes ledger transactions to Kafka, with the oracle.
 *
 * Test infrastructure for `ktally run --kind ledger`:
 *
 *   kt-ledger-gen --brokers B --topic T --messages N [--accounts A]
 *                 [--seed S] [--unkeyed] [--duplicates PERMILLE]
 *                 [--bad PERMILLE] [--expect DIR]
 *
 * Messages are {"txn": ..., "account": ..., "amount": "-12.5000", "ts": ...}.
 * Keyed (the default, Kafka's usual partitioning): an account always goes
 * to one partition, hash(account) % P, and debits may overdraw, so order
 * matters and rejections happen. --unkeyed: message i goes to partition
 * i % P, one account lands on several partitions, and amounts are credits
 * only, so that the result cannot depend on how batches interleave the
 * partitions (ktally orders per partition, as Kafka does).
 * Duplicates re-send an earlier message byte for byte (a producer retry);
 * bad messages are not JSON, miss a field, give the amount as a number or
 * with 5 decimals.
 *
 * --expect DIR writes what applying everything in (partition, offset)
 * order gives, as `mariadb -N -B` prints it:
 *   balances.tsv  ACCOUNT<TAB>BALANCE (4 decimals), accounts in byte order
 *   applied.tsv   TXN, byte order
 *   rejected.tsv  TXN<TAB>REASON, byte order
 *   counts        messages=N bad=B duplicates=D applied=A rejected=R
 */
#include <stdio.h>
#include <string.h>

#include <glib.h>
#include <glib/gstdio.h>
#include <librdkafka/rdkafka.h>

#include "kt-support.h"

typedef struct
{
  char   *value;    /* the JSON as sent */
  char   *txn;      /* NULL for a bad message */
  char   *account;
  gint64  amount;   /* 1/10000 units */
} Message;

static void
message_free (gpointer data)
{
  Message *m = data;
  g_free (m->value);
  g_free (m->txn);
  g_free (m->account);
  g_free (m);
}

static guint64
next (guint64 *state)  /* splitmix64, as kt-gen */
{
  guint64 z = (*state += G_GUINT64_CONSTANT (0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * G_GUINT64_CONSTANT (0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * G_GUINT64_CONSTANT (0x94d049bb133111eb);
  return z ^ (z >> 31);
}

static void
format_amount (gint64 v, char buf[static 32])
{
  guint64 a = v < 0 ? (guint64) -v : (guint64) v;
  g_snprintf (buf, 32, "%s%" G_GUINT64_FORMAT ".%04u", v < 0 ? "-" : "",
              a / 10000, (guint) (a % 10000));
}

static guint
fnv (const char *s)
{
  guint h = 2166136261u;
  for (; *s; s++)
    h = (h ^ (guchar) *s) * 16777619u;
  return h;
}

static int
compare_str (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

static void
delivery_cb (rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
  (void) rk;
  if (m->err)
    (*(int *) opaque)++;
}

/* Applies every partition's messages in offset order, partition after
 * partition, and writes the expected tables. */
static gboolean
write_expect (const char *dir, GPtrArray **parts, int n_parts, guint64 sent)
{
  g_autoptr(GHashTable) balance = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, g_free);
  g_autoptr(GHashTable) decided = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GPtrArray) applied = g_ptr_array_new ();
  g_autoptr(GPtrArray) rejected = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) accounts = NULL;
  g_autoptr(GString) out = g_string_new (NULL);
  guint64 bad = 0, dups = 0;
  g_autofree char *path = NULL;

  g_mkdir_with_parents (dir, 0755);
  for (int p = 0; p < n_parts; p++)
    for (guint i = 0; i < parts[p]->len; i++)
      {
        Message *m = parts[p]->pdata[i];
        gint64 *b;

        if (m->txn == NULL)
          {
            bad++;
            continue;
          }
        if (!g_hash_table_add (decided, m->txn))
          {
            dups++;
            continue;
          }
        b = g_hash_table_lookup (balance, m->account);
        if (b == NULL)
          {
            b = g_new0 (gint64, 1);
            g_hash_table_insert (balance, m->account, b);
          }
        if (*b + m->amount < 0)
          {
            g_ptr_array_add (rejected, g_strdup_printf ("%s\tinsufficient funds", m->txn));
            continue;
          }
        *b += m->amount;
        g_ptr_array_add (applied, m->txn);
      }

  accounts = g_ptr_array_new ();
  {
    GHashTableIter iter;
    gpointer key;

    g_hash_table_iter_init (&iter, balance);
    while (g_hash_table_iter_next (&iter, &key, NULL))
      g_ptr_array_add (accounts, key);
  }
  g_ptr_array_sort (accounts, compare_str);
  for (guint i = 0; i < accounts->len; i++)
    {
      char amount[32];
      format_amount (*(gint64 *) g_hash_table_lookup (balance, accounts->pdata[i]), amount);
      g_string_append_printf (out, "%s\t%s\n", (char *) accounts->pdata[i], amount);
    }
  path = g_build_filename (dir, "balances.tsv", NULL);
  g_file_set_contents (path, out->str, -1, NULL);

  g_ptr_array_sort (applied, compare_str);
  g_string_truncate (out, 0);
  for (guint i = 0; i < applied->len; i++)
    g_string_append_printf (out, "%s\n", (char *) applied->pdata[i]);
  g_free (path);
  path = g_build_filename (dir, "applied.tsv", NULL);
  g_file_set_contents (path, out->str, -1, NULL);

  g_ptr_array_sort (rejected, compare_str);
  g_string_truncate (out, 0);
  for (guint i = 0; i < rejected->len; i++)
    g_string_append_printf (out, "%s\n", (char *) rejected->pdata[i]);
  g_free (path);
  path = g_build_filename (dir, "rejected.tsv", NULL);
  g_file_set_contents (path, out->str, -1, NULL);

  g_string_printf (out, "messages=%" G_GUINT64_FORMAT " bad=%" G_GUINT64_FORMAT
                   " duplicates=%" G_GUINT64_FORMAT " applied=%u rejected=%u\n",
                   sent, bad, dups, applied->len, rejected->len);
  g_free (path);
  path = g_build_filename (dir, "counts", NULL);
  g_file_set_contents (path, out->str, -1, NULL);
  fputs (out->str, stdout);
  return TRUE;
}

int
main (int argc, char **argv)
{
  g_autofree char *brokers = NULL, *topic = NULL, *expect = NULL;
  gint64 n_messages = 0, seed = 1;
  int n_accounts = 100, dup_permille = 30, bad_permille = 10, failed = 0;
  gboolean unkeyed = FALSE;
  GOptionEntry entries[] = {
    { "brokers", 'b', 0, G_OPTION_ARG_STRING, &brokers, "Bootstrap servers", "LIST" },
    { "topic", 't', 0, G_OPTION_ARG_STRING, &topic, "Topic", "NAME" },
    { "messages", 'n', 0, G_OPTION_ARG_INT64, &n_messages, "Messages to write", "N" },
    { "accounts", 'a', 0, G_OPTION_ARG_INT, &n_accounts, "Accounts (default 100)", "A" },
    { "seed", 's', 0, G_OPTION_ARG_INT64, &seed, "PRNG seed (default 1)", "S" },
    { "unkeyed", 0, 0, G_OPTION_ARG_NONE, &unkeyed, "Spread accounts over partitions (credits only)", NULL },
    { "duplicates", 0, 0, G_OPTION_ARG_INT, &dup_permille, "Re-sent messages per thousand (30)", "P" },
    { "bad", 0, 0, G_OPTION_ARG_INT, &bad_permille, "Bad messages per thousand (10)", "P" },
    { "expect", 'e', 0, G_OPTION_ARG_FILENAME, &expect, "Write the oracle's tables here", "DIR" },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr(GOptionContext) context = g_option_context_new ("- write ledger transactions to Kafka");
  g_autoptr(GError) error = NULL;
  g_autoptr(rd_kafka_conf_t) conf = rd_kafka_conf_new ();
  g_autoptr(rd_kafka_t) rk = NULL;
  g_autoptr(rd_kafka_topic_t) rkt = NULL;
  g_autoptr(KtSupportMetadata) md = NULL;
  g_autoptr(GPtrArray) owned = g_ptr_array_new_with_free_func (message_free);
  g_autoptr(GPtrArray) all = g_ptr_array_new ();  /* good originals, for duplicates */
  GPtrArray **parts;
  guint64 state, sent = 0;
  char errstr[512];
  int n_parts;

  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error) || brokers == NULL
      || topic == NULL || n_messages <= 0 || n_accounts <= 0)
    {
      g_printerr ("kt-ledger-gen: %s\n", error ? error->message
                                              : "--brokers, --topic and --messages are required");
      return 2;
    }
  if (!kt_support_conf_set (conf, "bootstrap.servers", brokers)
      || !kt_support_conf_set (conf, "enable.idempotence", "true")
      || !kt_support_conf_set (conf, "linger.ms", "5"))
    return 2;
  rd_kafka_conf_set_dr_msg_cb (conf, delivery_cb);
  rd_kafka_conf_set_opaque (conf, &failed);
  rk = rd_kafka_new (RD_KAFKA_PRODUCER, conf, errstr, sizeof errstr);
  if (rk == NULL)
    {
      g_printerr ("kt-ledger-gen: %s\n", errstr);
      return 1;
    }
  conf = NULL;
  rkt = rd_kafka_topic_new (rk, topic, NULL);
  if (rd_kafka_metadata (rk, 0, rkt, &md, 10000) != RD_KAFKA_RESP_ERR_NO_ERROR
      || md->topic_cnt != 1 || md->topics[0].partition_cnt <= 0)
    {
      g_printerr ("kt-ledger-gen: no metadata for topic %s\n", topic);
      return 1;
    }
  n_parts = md->topics[0].partition_cnt;
  parts = g_new0 (GPtrArray *, n_parts);
  for (int p = 0; p < n_parts; p++)
    parts[p] = g_ptr_array_new ();

  state = (guint64) seed;
  for (gint64 i = 0; i < n_messages; i++)
    {
      Message *m;
      int partition;

      if (all->len > 0 && (int) (next (&state) % 1000) < dup_permille)
        {
          /* A producer retry: the same bytes again (in keyed mode to the
           * account's partition, as a keyed producer would). */
          Message *orig = all->pdata[next (&state) % all->len];
          m = g_new0 (Message, 1);
          m->value = g_strdup (orig->value);
          m->txn = g_strdup (orig->txn);
          m->account = g_strdup (orig->account);
          m->amount = orig->amount;
        }
      else if ((int) (next (&state) % 1000) < bad_permille)
        {
          static const char *const bad[] = {
            "not json at all",
            "{\"txn\": \"B-1\", \"account\": \"ACC-1\", \"ts\": \"2017-07-30 14:09:08\"}",
            "{\"txn\": \"B-2\", \"account\": \"ACC-1\", \"amount\": -12.5, \"ts\": \"2017-07-30 14:09:08\"}",
            "{\"txn\": \"B-3\", \"account\": \"ACC-1\", \"amount\": \"1.23456\", \"ts\": \"2017-07-30 14:09:08\"}",
            "{\"txn\": \"B-4\", \"account\": \"ACC-1\", \"amount\": \"99999999999999999999\", \"ts\": \"2017-07-30 14:09:08\"}",
          };
          m = g_new0 (Message, 1);
          m->value = g_strdup (bad[next (&state) % G_N_ELEMENTS (bad)]);
        }
      else
        {
          char amount[32];
          guint account = (guint) (next (&state) % (guint) n_accounts);
          /* Keyed: credits up to 100, debits up to 150 (some overdraw).
           * Unkeyed: credits only. */
          gint64 v = (gint64) (next (&state) % 1000000) + 1;
          if (!unkeyed && next (&state) % 100 < 45)
            v = -(gint64) (next (&state) % 1500000) - 1;

          m = g_new0 (Message, 1);
          m->txn = g_strdup_printf ("T%" G_GINT64_FORMAT "-%" G_GINT64_FORMAT, seed, i);
          m->account = g_strdup_printf ("ACC-%u", account);
          m->amount = v;
          format_amount (v, amount);
          m->value = g_strdup_printf ("{\"txn\": \"%s\", \"account\": \"%s\", \"amount\": \"%s\", "
                                      "\"ts\": \"2017-07-30 14:%02u:%02u\"}", m->txn, m->account,
                                      amount, (guint) (i / 60) % 60, (guint) i % 60);
          g_ptr_array_add (all, m);
        }
      g_ptr_array_add (owned, m);

      partition = m->account != NULL && !unkeyed ? (int) (fnv (m->account) % (guint) n_parts)
                                                 : (int) (i % n_parts);
      g_ptr_array_add (parts[partition], m);
      while (rd_kafka_producev (rk, RD_KAFKA_V_RKT (rkt), RD_KAFKA_V_PARTITION (partition),
                                RD_KAFKA_V_MSGFLAGS (RD_KAFKA_MSG_F_COPY),
                                RD_KAFKA_V_VALUE (m->value, strlen (m->value)),
                                RD_KAFKA_V_KEY (m->account, m->account ? strlen (m->account) : 0),
                                RD_KAFKA_V_END) == RD_KAFKA_RESP_ERR__QUEUE_FULL)
        rd_kafka_poll (rk, 50);
      rd_kafka_poll (rk, 0);
      sent++;
    }
  rd_kafka_flush (rk, 60000);
  if (failed > 0 || rd_kafka_outq_len (rk) > 0)
    {
      g_printerr ("kt-ledger-gen: %d messages were not delivered\n", failed);
      return 1;
    }
  if (expect != NULL)
    write_expect (expect, parts, n_parts, sent);

  for (int p = 0; p < n_parts; p++)
    g_ptr_array_unref (parts[p]);
  g_free (parts);
  return 0;
}
