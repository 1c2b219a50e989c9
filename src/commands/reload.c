/* reload.c - SIGHUP's reload (reload.h). */
#include "reload.h"

#include <string.h>
#include "config.h"
#include "describe.h"
#include "kprops.h"
#include "log.h"

/* Set by the SIGHUP handler, taken by the first poll after it. */
static gint requested;
/* How many reloaders there are: a SIGHUP is then a reload. */
static gint reloaders;

struct _KtReload
{
  const KtConfig *running;  /* the process's settings (borrowed) */
  GMutex          lock;
  KtConfig       *current;  /* the newest applied, or NULL: running's */
  KtRunSettings   settings; /* handed to the scheduler; generation counts reloads */
  KtMetrics      *metrics;  /* borrowed, or NULL */
};

void
kt_reload_request (void)
{
  g_atomic_int_set (&requested, 1);
}

gboolean
kt_reload_active (void)
{
  return g_atomic_int_get (&reloaders) > 0;
}

KtReload *
kt_reload_new (const KtConfig *config)
{
  KtReload *self = g_new0 (KtReload, 1);

  self->running = config;
  g_mutex_init (&self->lock);
  g_atomic_int_inc (&reloaders);
  kt_run_settings_init (&self->settings, &config->run, &config->db);
  return self;
}

void
kt_reload_free (KtReload *self)
{
  if (self == NULL)
    return;
  g_atomic_int_dec_and_test (&reloaders);
  g_clear_pointer (&self->current, kt_config_free);
  kt_run_settings_clear (&self->settings);
  g_mutex_clear (&self->lock);
  g_free (self);
}

void
kt_reload_set_metrics (KtReload *self, KtMetrics *metrics)
{
  self->metrics = metrics;
}

/* Whether the reload applied (and a restart is pending), for /metrics. */
static void
reported (KtReload *self, gboolean ok, gboolean restart_pending)
{
  if (self->metrics != NULL)
    kt_metrics_reload (self->metrics, ok, restart_pending);
}

void
kt_reload_change_free (gpointer change)
{
  KtReloadChange *c = change;

  if (c == NULL)
    return;
  g_free (c->setting);
  g_free (c->section);
  g_free (c->from);
  g_free (c->to);
  g_free (c->text);
  g_free (c);
}

/* A change into @into; @text is taken. */
static void
add_change (GPtrArray *into, const char *setting, const char *section, const char *from,
            const char *to, gboolean secret, char *text)
{
  KtReloadChange *c = g_new0 (KtReloadChange, 1);

  c->setting = g_strdup (setting);
  c->section = g_strdup (section);
  c->from = secret ? NULL : g_strdup (from);
  c->to = secret ? NULL : g_strdup (to);
  c->secret = secret;
  c->text = text;
  g_ptr_array_add (into, c);
}

static const char *
level_name (const KtConfig *c)
{
  return c->log.verbose ? "debug (--verbose)" : c->log.quiet ? "warning (--quiet)" : "info";
}

/* Whether a reload applies "[@section] @key" of kt_config_describe():
 * its row says so (KT_OPT_RELOAD); the others need a restart. */
static gboolean
applies (const KtOption *const *tables, const char *section, const char *key)
{
  const KtOption *row = kt_option_lookup_key (tables, G_MAXUINT32, section, key);

  return row != NULL && (row->flags & KT_OPT_RELOAD) != 0;
}

/* "--interval 5 s -> 0.25 s" for every row a reload applies whose value
 * changed: numbers and words here; switches are the log level, files the
 * credentials (worded apart, below). */
static void
diff_table (const KtOption *table, gconstpointer current, gconstpointer fresh, GPtrArray *apply)
{
  for (const KtOption *row = table; current != NULL && row->name != NULL; row++)
      {
        g_autofree char *was = NULL, *now = NULL;
        const char *unit = row->type == KT_OPT_SECONDS ? " s" : "";

        if (!(row->flags & KT_OPT_RELOAD) || (row->flags & KT_OPT_FILE_ONLY)
            || row->type == KT_OPT_SWITCH || row->type == KT_OPT_PATH)
          continue;
        was = kt_option_text (row, current);
        now = kt_option_text (row, fresh);
        if (g_strcmp0 (was, now) != 0)
          add_change (apply, row->name, row->section, was, now, FALSE,
                      g_strdup_printf ("--%s %s%s -> %s%s", row->name,
                                       was != NULL ? was : "(not set)", unit,
                                       now != NULL ? now : "(not set)", unit));
      }
}

/* The job's options, and its kind's (the same kind: a change of kind is
 * refused, being part of the job). */
static void
diff_applied (const KtConfig *current, const KtConfig *fresh, GPtrArray *apply)
{
  diff_table (kt_option_table, current, fresh, apply);
  if (current->kind_options == fresh->kind_options && current->kind_options != NULL)
    diff_table (current->kind_options, current->job.options, fresh->job.options, apply);
}

/* The value of -X @key in @props, or NULL. */
static const char *
property (char **props, const char *key)
{
  gsize n = strlen (key);

  for (char **p = props; p != NULL && *p != NULL; p++)
    if (strncmp (*p, key, n) == 0 && (*p)[n] == '=')
      return *p + n + 1;
  return NULL;
}

/* The secret [kafka] properties: kt_config_describe() hides them, so they
 * are compared here, and their values never shown. */
static void
diff_secrets (char **before, char **after, GPtrArray *restart)
{
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  for (int pass = 0; pass < 2; pass++)
    for (char **p = pass == 0 ? before : after; p != NULL && *p != NULL; p++)
      {
        char *key = g_strndup (*p, strcspn (*p, "="));

        if (!g_hash_table_add (seen, key) || !kt_kprops_is_secret (key)
            || g_strcmp0 (property (before, key), property (after, key)) == 0)
          continue;
        add_change (restart, key, "kafka", NULL, NULL, TRUE,
                    g_strdup_printf ("[kafka] %s changed: needs a restart", key));
      }
}

/* Every key either file has whose value differs, but those a reload
 * applies: one restart line each, with both values (the texts show no
 * secret). */
static void
diff_described (const KtOption *const *tables, GKeyFile *before, GKeyFile *after,
                GPtrArray *restart)
{
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  for (int pass = 0; pass < 2; pass++)
    {
      g_auto(GStrv) groups = g_key_file_get_groups (pass == 0 ? before : after, NULL);

      for (char **g = groups; *g != NULL; g++)
        {
          g_auto(GStrv) keys = g_key_file_get_keys (pass == 0 ? before : after, *g, NULL, NULL);

          for (char **k = keys; keys != NULL && *k != NULL; k++)
            {
              g_autofree char *was = g_key_file_get_string (before, *g, *k, NULL);
              g_autofree char *now = g_key_file_get_string (after, *g, *k, NULL);
              char *id = g_strdup_printf ("[%s] %s", *g, *k);

              if (!g_hash_table_add (seen, id) || applies (tables, *g, *k) || g_strcmp0 (was, now) == 0)
                continue;
              add_change (restart, *k, *g, was, now, FALSE, g_strdup_printf (
                "%s: '%s' -> '%s' needs a restart; still '%s'", id,
                was != NULL ? was : "(not set)", now != NULL ? now : "(not set)",
                was != NULL ? was : "(not set)"));
            }
        }
    }
}

void
kt_reload_diff (const KtConfig *running, const KtConfig *current, const KtConfig *fresh,
                GPtrArray *apply, GPtrArray *restart)
{
  g_autoptr(GKeyFile) before = g_key_file_new ();
  g_autoptr(GKeyFile) after = g_key_file_new ();
  g_autofree char *before_text = kt_config_describe (running);
  g_autofree char *after_text = kt_config_describe (fresh);

  diff_applied (current, fresh, apply);
  if (g_strcmp0 (current->db.password, fresh->db.password) != 0)
    add_change (apply, "password", "mysql", NULL, NULL, TRUE,
                g_strdup ("the MySQL password changed: the next connection uses it"));
  if (g_strcmp0 (current->db.password_file, fresh->db.password_file) != 0)
    add_change (apply, "db-password-file", NULL, current->db.password_file,
                fresh->db.password_file, FALSE, g_strdup_printf (
      "--db-password-file %s -> %s: read at the next connection",
      current->db.password_file != NULL ? current->db.password_file : "(none)",
      fresh->db.password_file != NULL ? fresh->db.password_file : "(none)"));
  if (g_strcmp0 (current->db.defaults_file, fresh->db.defaults_file) != 0)
    add_change (apply, "db-defaults-file", NULL, current->db.defaults_file,
                fresh->db.defaults_file, FALSE, g_strdup_printf (
      "--db-defaults-file %s -> %s: the next connection reads it",
      current->db.defaults_file != NULL ? current->db.defaults_file : "(none)",
      fresh->db.defaults_file != NULL ? fresh->db.defaults_file : "(none)"));
  if (current->log.verbose != fresh->log.verbose || current->log.quiet != fresh->log.quiet)
    add_change (apply, "log-level", NULL, level_name (current), level_name (fresh), FALSE,
                g_strdup_printf ("log level %s -> %s", level_name (current),
                                 level_name (fresh)));

  /* Both texts are ktally's own INI: they load. */
  g_key_file_load_from_data (before, before_text, (gsize) -1, G_KEY_FILE_NONE, NULL);
  g_key_file_load_from_data (after, after_text, (gsize) -1, G_KEY_FILE_NONE, NULL);
  diff_described (running->tables, before, after, restart);
  diff_secrets (running->kafka.properties, fresh->kafka.properties, restart);
}

/* A reload's line "job JOB: reload: @text"; for machines, @value as
 * field @key (@json: JSON text, structured data). */
static void
logged (const char *job, GLogLevelFlags level, const char *key, const char *value,
        gboolean json, const char *text)
{
  g_autoptr(KtLogEvent) e = kt_log_event_new ("reload");

  kt_log_event_string (e, "job", job);
  if (json)
    kt_log_event_json (e, key, value);
  else
    kt_log_event_string (e, key, value);
  kt_log_event_emit (e, level, "job %s: reload: %s", job, text);
}

/* The texts of @changes joined by "; ", for people. */
static char *
joined (GPtrArray *changes)
{
  g_autoptr(GString) text = g_string_new (NULL);

  for (guint i = 0; i < changes->len; i++)
    g_string_append_printf (text, "%s%s", i > 0 ? "; " : "",
                            ((KtReloadChange *) changes->pdata[i])->text);
  return g_string_free (g_steal_pointer (&text), FALSE);
}

static void
append_json_string (GString *out, const char *name, const char *value)
{
  g_string_append_printf (out, "\"%s\":", name);
  if (value != NULL)
    kt_log_append_quoted (out, value);
  else
    g_string_append (out, "null");
}

/* @changes for machines: a JSON array of {"setting", "section" (when the
 * key has one), "from", "to" (null: not set or a secret), "secret"}. */
static char *
changes_json (GPtrArray *changes)
{
  g_autoptr(GString) out = g_string_new ("[");

  for (guint i = 0; i < changes->len; i++)
    {
      const KtReloadChange *c = changes->pdata[i];

      g_string_append (out, i > 0 ? ",{" : "{");
      append_json_string (out, "setting", c->setting);
      if (c->section != NULL)
        {
          g_string_append_c (out, ',');
          append_json_string (out, "section", c->section);
        }
      g_string_append_c (out, ',');
      append_json_string (out, "from", c->from);
      g_string_append_c (out, ',');
      append_json_string (out, "to", c->to);
      g_string_append_printf (out, ",\"secret\":%s}", c->secret ? "true" : "false");
    }
  g_string_append_c (out, ']');
  return g_string_free (g_steal_pointer (&out), FALSE);
}

/* Parses the command's words again, logs what changed, and makes what
 * may change the newest settings. Called with the lock held. */
static void
reload (KtReload *self)
{
  const KtConfig *running = self->running;
  const KtConfig *current = self->current != NULL ? self->current : running;
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) apply = g_ptr_array_new_with_free_func (kt_reload_change_free);
  g_autoptr(GPtrArray) restart = g_ptr_array_new_with_free_func (kt_reload_change_free);
  g_autoptr(KtConfig) fresh = NULL;
  g_auto(GStrv) words = g_strdupv (running->words);
  g_autofree char *applied = NULL, *kept = NULL;
  guint generation;

  if (words == NULL)
    {
      logged (running->job.name, G_LOG_LEVEL_WARNING, "error", "no command line", FALSE,
              "these settings were not read from a command line: nothing to read again");
      reported (self, FALSE, FALSE);
      return;
    }
  /* GOption takes apart the array it parses: give it a copy of the
   * pointers, and free the strings through @words. */
  {
    g_autofree char **argv = g_memdup2 (words, sizeof (char *) * (g_strv_length (words) + 1));
    fresh = kt_config_parse_with (running->commands, running->tables, running->command,
                                  (int) g_strv_length (words), argv, &error);
  }
  if (fresh == NULL)
    {
      g_autofree char *text = g_strdup_printf ("%s; keeping the running settings",
                                               error->message);

      logged (running->job.name, G_LOG_LEVEL_WARNING, "error", error->message, FALSE, text);
      reported (self, FALSE, FALSE);
      return;
    }
  kt_reload_diff (running, current, fresh, apply, restart);
  /* One line for what applies, one for what does not; their fields say
   * the same as structured data (which setting, from, to). */
  applied = joined (apply);
  kept = joined (restart);
  if (apply->len > 0 || restart->len == 0)
    {
      g_autofree char *json = changes_json (apply);
      logged (running->job.name, G_LOG_LEVEL_MESSAGE, "applied", json, TRUE,
              apply->len > 0 ? applied : "nothing changed");
    }
  if (restart->len > 0)
    {
      g_autofree char *json = changes_json (restart);
      logged (running->job.name, G_LOG_LEVEL_WARNING, "needs_restart", json, TRUE, kept);
    }
  reported (self, TRUE, restart->len > 0);
  if (apply->len == 0)
    return;

  kt_log_set_verbosity (fresh->log.verbose, fresh->log.quiet);
  generation = self->settings.generation + 1;
  kt_run_settings_clear (&self->settings);
  kt_run_settings_init (&self->settings, &fresh->run, &fresh->db);
  self->settings.generation = generation;
  g_clear_pointer (&self->current, kt_config_free);
  self->current = g_steal_pointer (&fresh);
}

gboolean
kt_reload_poll (KtReload *self, KtRunSettings *settings, gboolean *reloaded)
{
  gboolean newer = FALSE, did = FALSE;

  g_mutex_lock (&self->lock);
  if (g_atomic_int_compare_and_exchange (&requested, 1, 0))
    {
      reload (self);
      did = TRUE;
    }
  if (settings->generation != self->settings.generation)
    {
      kt_run_settings_clear (settings);
      *settings = self->settings;
      kt_db_config_copy (&settings->db, &self->settings.db);
      newer = TRUE;
    }
  g_mutex_unlock (&self->lock);
  if (reloaded != NULL)
    *reloaded = did;
  return newer;
}
