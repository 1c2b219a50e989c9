/* test-reload.c - what a reload (SIGHUP) applies and what needs a restart,
 * without Kafka or MySQL: kt_reload_diff() between parsed command lines,
 * and kt_reload_poll() handing newer settings to each runner once. */
#include <string.h>
#include <glib/gstdio.h>
#include "cli.h"
#include "commands.h"
#include "reload.h"

#define PW "s3cr3tPW"
#define BASE "run", "--brokers", "b:9092", "--topic", "logs"

static KtConfig *
parse (const char *const *args)
{
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) owned = g_strdupv ((char **) args);
  int argc = (int) g_strv_length (owned);
  g_autofree char **argv = g_memdup2 (owned, (gsize) (argc + 1) * sizeof (char *));
  KtConfig *config = kt_config_parse (args[0], argc, argv, &error);

  g_assert_no_error (error);
  return config;
}

typedef struct
{
  const char *path;
  const char *before[16];
  const char *after[16];
  const char *apply;    /* lines joined by "|" */
  const char *restart;
} DiffCase;

static const DiffCase diff_cases[] = {
  { "/reload/diff/nothing", { BASE, "--db", "mysql://u@h/d", NULL },
    { BASE, "--db", "mysql://u@h/d", NULL }, "", "" },
  { "/reload/diff/limits", { BASE, "--db", "mysql://u@h/d", NULL },
    { BASE, "--db", "mysql://u@h/d", "--interval", "250ms", "-n", "7", "--max-batch-bytes",
      "4096", NULL },
    "--interval 5 s -> 0.25 s|--max-per-partition 100000 -> 7|--max-batch-bytes 67108864 -> 4096",
    "" },
  { "/reload/diff/password", { BASE, "--db", "mysql://u:old" PW "@h/d", NULL },
    { BASE, "--db", "mysql://u:new" PW "@h/d", NULL },
    "the MySQL password changed: the next connection uses it", "" },
  { "/reload/diff/log-level", { BASE, "--db", "mysql://u@h/d", NULL },
    { BASE, "--db", "mysql://u@h/d", "-v", NULL }, "log level info -> debug (--verbose)", "" },
  { "/reload/diff/restart", { BASE, "--db", "mysql://u@h/d", "--job", "j", NULL },
    { BASE, "--db", "mysql://u@h2/d", "--job", "j", "--mode", "idempotent", NULL }, "",
    "[mysql] host: 'h' -> 'h2' needs a restart; still 'h'|"
    "[batch] mode: 'transactional' -> 'idempotent' needs a restart; still 'transactional'" },
  { "/reload/diff/kafka-secret", { BASE, "--db", "mysql://u@h/d", "-X", "sasl.password=a" PW,
                                   NULL },
    { BASE, "--db", "mysql://u@h/d", "-X", "sasl.password=b" PW, "-X", "client.rack=r1", NULL },
    "", "[kafka] client.rack: '(not set)' -> 'r1' needs a restart; still '(not set)'|"
    "[kafka] sasl.password changed: needs a restart" },
};

/* The changes' texts joined by "|". */
static char *
joined (GPtrArray *changes)
{
  g_autoptr(GPtrArray) texts = g_ptr_array_new ();

  for (guint i = 0; i < changes->len; i++)
    g_ptr_array_add (texts, ((KtReloadChange *) changes->pdata[i])->text);
  g_ptr_array_add (texts, NULL);
  return g_strjoinv ("|", (char **) texts->pdata);
}

static void
test_diff (gconstpointer data)
{
  const DiffCase *c = data;
  g_autoptr(KtConfig) before = parse (c->before);
  g_autoptr(KtConfig) after = parse (c->after);
  g_autoptr(GPtrArray) apply = g_ptr_array_new_with_free_func (kt_reload_change_free);
  g_autoptr(GPtrArray) restart = g_ptr_array_new_with_free_func (kt_reload_change_free);
  g_autofree char *a = NULL, *r = NULL;

  kt_reload_diff (before, before, after, apply, restart);
  a = joined (apply);
  r = joined (restart);
  g_assert_cmpstr (a, ==, c->apply);
  g_assert_cmpstr (r, ==, c->restart);
  g_assert_null (strstr (a, PW));
  g_assert_null (strstr (r, PW));
}

/* The changes as data: which setting, its section, from, to; a secret's
 * values are not kept at all. */
static void
test_diff_structured (void)
{
  const char *before[] = { BASE, "--db", "mysql://u:old" PW "@h/d", "-X", "sasl.password=a" PW,
                           NULL };
  const char *after[] = { BASE, "--db", "mysql://u:new" PW "@h2/d", "-X", "sasl.password=b" PW,
                          "--interval", "250ms", NULL };
  g_autoptr(KtConfig) a = parse (before);
  g_autoptr(KtConfig) b = parse (after);
  g_autoptr(GPtrArray) apply = g_ptr_array_new_with_free_func (kt_reload_change_free);
  g_autoptr(GPtrArray) restart = g_ptr_array_new_with_free_func (kt_reload_change_free);
  const KtReloadChange *c;

  kt_reload_diff (a, a, b, apply, restart);
  g_assert_cmpuint (apply->len, ==, 2);
  c = apply->pdata[0];
  g_assert_cmpstr (c->setting, ==, "interval");
  g_assert_cmpstr (c->section, ==, "batch");
  g_assert_cmpstr (c->from, ==, "5");
  g_assert_cmpstr (c->to, ==, "0.25");
  g_assert_false (c->secret);
  c = apply->pdata[1];
  g_assert_cmpstr (c->setting, ==, "password");
  g_assert_true (c->secret);
  g_assert_null (c->from);
  g_assert_null (c->to);
  g_assert_cmpuint (restart->len, ==, 2);
  c = restart->pdata[0];
  g_assert_cmpstr (c->setting, ==, "host");
  g_assert_cmpstr (c->section, ==, "mysql");
  g_assert_cmpstr (c->from, ==, "h");
  g_assert_cmpstr (c->to, ==, "h2");
  c = restart->pdata[1];
  g_assert_cmpstr (c->setting, ==, "sasl.password");
  g_assert_cmpstr (c->section, ==, "kafka");
  g_assert_true (c->secret);
  g_assert_null (c->from);
}

/* What needs a restart is said against the running settings at every
 * reload (they are still in force); what applies, against the newest. */
static void
test_diff_after_reload (void)
{
  const char *run[] = { BASE, "--db", "mysql://u@h/d", "--job", "j", NULL };
  const char *one[] = { BASE, "--db", "mysql://u@h/d", "--job", "j", "-i", "1", "-m",
                        "idempotent", NULL };
  g_autoptr(KtConfig) running = parse (run);
  g_autoptr(KtConfig) current = parse (one);
  g_autoptr(KtConfig) fresh = parse (one);
  g_autoptr(GPtrArray) apply = g_ptr_array_new_with_free_func (kt_reload_change_free);
  g_autoptr(GPtrArray) restart = g_ptr_array_new_with_free_func (kt_reload_change_free);

  kt_reload_diff (running, current, fresh, apply, restart);
  g_assert_cmpuint (apply->len, ==, 0);
  g_assert_cmpuint (restart->len, ==, 1);
  g_assert_nonnull (strstr (((KtReloadChange *) restart->pdata[0])->text, "[batch] mode"));
}

/* One reload, seen by each runner once; a bad file changes nothing. */
static void
test_poll (void)
{
  g_autofree char *dir = g_dir_make_tmp ("kt-test-reload-XXXXXX", NULL);
  g_autofree char *conf = g_build_filename (dir, "ktally.conf", NULL);
  const char *run[] = { BASE, "--db", "mysql://u@h/d", "--config", conf, NULL };
  g_autoptr(KtConfig) running = NULL;
  g_autoptr(KtReload) reload = NULL;
  g_auto(KtRunSettings) a = { 0 };
  g_auto(KtRunSettings) b = { 0 };
  gboolean did;

  g_assert_true (g_file_set_contents (conf, "[batch]\ninterval = 2\n", -1, NULL));
  running = parse (run);
  reload = kt_reload_new (running);
  kt_run_settings_init (&a, &running->run, &running->db);
  kt_run_settings_init (&b, &running->run, &running->db);
  g_assert_cmpfloat (a.interval, ==, 2);

  g_assert_false (kt_reload_poll (reload, &a, &did));
  g_assert_false (did);

  g_assert_true (g_file_set_contents (conf, "[batch]\ninterval = 500ms\nmax-batch-bytes = 2048\n",
                                      -1, NULL));
  kt_reload_request ();
  g_assert_true (kt_reload_poll (reload, &a, &did));
  g_assert_true (did);
  g_assert_cmpfloat (a.interval, ==, 0.5);
  g_assert_cmpint (a.max_batch_bytes, ==, 2048);
  g_assert_cmpstr (a.db.host, ==, "h");
  g_assert_false (kt_reload_poll (reload, &a, &did));
  g_assert_false (did);
  /* The other runner gets them at its next poll, without a reload. */
  g_assert_true (kt_reload_poll (reload, &b, &did));
  g_assert_false (did);
  g_assert_cmpfloat (b.interval, ==, 0.5);

  /* A file that no longer parses: warned, nothing changes. */
  g_assert_true (g_file_set_contents (conf, "[batch]\ninterval = 5x\n", -1, NULL));
  kt_reload_request ();
  g_assert_false (kt_reload_poll (reload, &a, &did));  /* its warning: 170-reload-rotation */
  g_assert_true (did);
  g_assert_cmpfloat (a.interval, ==, 0.5);
  g_remove (conf);
  g_rmdir (dir);
}

/* A reload reads the file as a start does: a TLS setting it would drop is
 * refused there too (the running settings kept), whether the file's uri
 * has it beside it or the command line's --db replaces the file's. */
static void
test_poll_tls_kept (void)
{
  g_autofree char *dir = g_dir_make_tmp ("kt-test-reload-XXXXXX", NULL);
  g_autofree char *conf = g_build_filename (dir, "ktally.conf", NULL);
  const char *by_file[] = { BASE, "--config", conf, NULL };
  const char *by_flag[] = { BASE, "--db", "mysql://u@h/d", "--config", conf, NULL };

  for (int flag = 0; flag < 2; flag++)
    {
      g_autoptr(KtConfig) running = NULL;
      g_autoptr(KtReload) reload = NULL;
      g_auto(KtRunSettings) a = { 0 };
      gboolean did;

      g_assert_true (g_file_set_contents (conf, "[mysql]\nuri = mysql://u@h/d\n[batch]\n"
                                          "interval = 2\n", -1, NULL));
      running = parse (flag ? by_flag : by_file);
      reload = kt_reload_new (running);
      kt_run_settings_init (&a, &running->run, &running->db);
      g_assert_true (g_file_set_contents (conf, flag
                                          ? "[mysql]\nhost = h\nuser = u\ndatabase = d\n"
                                            "ssl-mode = verify-identity\n[batch]\ninterval = 1\n"
                                          : "[mysql]\nuri = mysql://u@h/d\n"
                                            "ssl-mode = verify-identity\n[batch]\ninterval = 1\n",
                                          -1, NULL));
      kt_reload_request ();
      g_assert_false (kt_reload_poll (reload, &a, &did));
      g_assert_true (did);
      g_assert_cmpfloat (a.interval, ==, 2);
      g_assert_cmpint (a.db.ssl_mode, ==, KT_SSL_PREFERRED);
    }
  g_remove (conf);
  g_rmdir (dir);
}


int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_unsetenv ("MYSQL_PWD");
  for (gsize i = 0; i < G_N_ELEMENTS (diff_cases); i++)
    g_test_add_data_func (diff_cases[i].path, &diff_cases[i], test_diff);
  g_test_add_func ("/reload/diff/structured", test_diff_structured);
  g_test_add_func ("/reload/diff/after-reload", test_diff_after_reload);
  g_test_add_func ("/reload/poll", test_poll);
  g_test_add_func ("/reload/poll/tls-kept", test_poll_tls_kept);
  return g_test_run ();
}
