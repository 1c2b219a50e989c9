/* cmd-init-db.c - `ktally init-db`: a database ready for a mode's jobs. */
#include "command.h"

#include <stddef.h>
#include <stdio.h>
#include "check.h"
#include "counts.h"
#include "db-rows.h"
#include "migrations.h"
#include "error.h"
#include "field-path.h"
#include "schema.h"

/* What `ktally init-db --help` says before the options. */
static const char SUMMARY[] =
  "Creates ktally's tables where absent (sql/common.sql, and counts.sql or\n"
  "idempotent.sql by --mode), checks the shape of those present, and brings\n"
  "an older schema forward (sql/migrations/). --dry-run lists the pending\n"
  "migrations, the tables each touches and their sizes, and changes nothing.";

/* init-db's own options. */
typedef struct
{
  gboolean dry_run;  /* --dry-run */
} InitDbOptions;

static const KtOption init_db_options[] = {
  { "dry-run", 0, NULL, KT_OPT_SWITCH, offsetof (InitDbOptions, dry_run),
    .commands = KT_CMD_INIT_DB,
    .help = "List the migrations an older schema needs, the tables each would touch and "
            "their sizes now (rows about, bytes); change nothing" },
  KT_OPTION_END
};

/* The shape error_log holds: what ktally_table records of it (a job with
 * --by or --sum may have made error_log in its own), or else what its
 * columns say (such a job may have been stopped before its first commit
 * recorded it): the key columns but the bucket (and idempotent mode's job,
 * topic), and the sum_ columns. Into @dimensions and @sums,
 * NULL for none; kt_counts_prepare() then checks their types. */
/* The columns of the fields of a ktally_table list. */
static char **
field_columns (const char *list)
{
  char **items = g_strsplit (list, ",", -1);

  for (guint i = 0; items[i] != NULL; i++)
    {
      char *column = kt_field_column (items[i]);

      g_free (items[i]);
      items[i] = column;
    }
  return items;
}

static gboolean
error_log_shape (KtDb *db, char ***dimensions, char ***sums, GError **error)
{
  g_autoptr(KtDbRows) res = kt_db_rows_select (db, "SELECT dimensions, sums FROM ktally_table "
                                                "WHERE name = 'error_log'",
                                                "cannot read what tables hold", error);
  g_autoptr(KtDbRows) columns = NULL;
  g_autoptr(GPtrArray) dims = g_ptr_array_new ();
  g_autoptr(GPtrArray) adds = g_ptr_array_new ();
  const char *const *row;

  if (res == NULL)
    return FALSE;
  row = kt_db_rows_next (res);
  if (row != NULL)
    {
      /* Fields, as the job named them: their columns (a structured
       * input's paths give their own names, service.name service_name). */
      if (row[0] != NULL && *row[0] != '\0')
        *dimensions = field_columns (row[0]);
      if (row[1] != NULL && *row[1] != '\0')
        *sums = field_columns (row[1]);
      return TRUE;
    }
  /* Constant predicates only (schema.c's check_columns says why). */
  columns = kt_db_rows_select (db, "SELECT c.table_name, c.column_name, c.column_key "
                                   "FROM information_schema.columns c WHERE c.table_schema = DATABASE() "
                                   "AND c.table_name IN ('error_log', 'error_log" KT_TOPIC_SUFFIX "') "
                                   "AND c.table_name IN (SELECT t.table_name FROM "
                                   "information_schema.tables t WHERE t.table_schema = DATABASE() "
                                   "AND t.table_type = 'BASE TABLE') "
                                   "ORDER BY c.table_name, c.ordinal_position",
                               "cannot read the tables' columns", error);
  if (columns == NULL)
    return FALSE;
  while ((row = kt_db_rows_next (columns)) != NULL)
    {
      static const char *const own[] = { "job", "topic", "log_time", NULL };
      gboolean key = g_strcmp0 (row[2], "PRI") == 0;

      if (key && !g_strv_contains (own, row[1]))
        g_ptr_array_add (dims, g_strdup (row[1]));
      else if (!key && g_ascii_strncasecmp (row[1], "sum_", 4) == 0 && row[1][4] != '\0')
        g_ptr_array_add (adds, g_strdup (row[1] + 4));
    }
  if (dims->len > 0)
    {
      g_ptr_array_add (dims, NULL);
      *dimensions = (char **) g_ptr_array_steal (dims, NULL);
    }
  if (adds->len > 0)
    {
      g_ptr_array_add (adds, NULL);
      *sums = (char **) g_ptr_array_steal (adds, NULL);
    }
  return TRUE;
}

/* "12 kB": a size for people, in powers of 1024. */
static char *
size_text (gint64 bytes)
{
  static const char *const units[] = { "B", "kB", "MB", "GB", "TB" };
  double v = (double) bytes;
  guint u = 0;

  while (v >= 1024 && u + 1 < G_N_ELEMENTS (units))
    v /= 1024, u++;
  return u == 0 ? g_strdup_printf ("%" G_GINT64_FORMAT " B", bytes)
                : g_strdup_printf ("%.1f %s", v, units[u]);
}

/* --dry-run: what init-db (or the next start) would migrate, on stdout. */
static gboolean
dry_run (const KtConfig *config, GError **error)
{
  g_autoptr(KtDb) db = kt_db_new (&config->db);
  g_autoptr(GArray) pending = g_array_new (FALSE, TRUE, sizeof (KtPendingTable));
  int version;

  g_array_set_clear_func (pending, kt_pending_table_clear);
  if (!kt_migrations_pending (db, &version, pending, error))
    return FALSE;
  if (version == 0)
    printf ("%s holds no ktally table: init-db would create them at schema version %d "
            "(a dry run: nothing changed)\n", kt_db_name (db), KT_SCHEMA_VERSION);
  else if (version == KT_SCHEMA_VERSION)
    printf ("%s is at schema version %d, this ktally's: nothing to migrate (a dry run: "
            "nothing changed)\n", kt_db_name (db), version);
  else
    {
      printf ("%s is at schema version %d; this ktally migrates it to %d, %d migration%s "
              "(a dry run: nothing changed)\n", kt_db_name (db), version, KT_SCHEMA_VERSION,
              KT_SCHEMA_VERSION - version, KT_SCHEMA_VERSION - version == 1 ? "" : "s");
      printf ("%-8s %-20s %-24s %-20s %14s %10s\n", "version", "migration", "table", "does",
              "rows (about)", "size");
      for (guint m = 0; kt_migrations_get (m) != NULL; m++)
        {
          const KtMigration *migration = kt_migrations_get (m);
          gboolean any = FALSE;

          if (migration->version <= version)
            continue;
          for (guint i = 0; i < pending->len; i++)
            {
              const KtPendingTable *t = &g_array_index (pending, KtPendingTable, i);
              g_autofree char *rows = NULL, *size = NULL;

              if (t->version != migration->version)
                continue;
              rows = t->rows >= 0 ? g_strdup_printf ("%" G_GINT64_FORMAT, t->rows)
                                  : g_strdup ("-");
              size = t->bytes >= 0 ? size_text (t->bytes) : g_strdup ("new");
              printf ("%-8d %-20s %-24s %-20s %14s %10s\n", t->version, t->migration, t->table,
                      t->does, rows, size);
              any = TRUE;
            }
          /* Its tables are of a kind or mode this database never used. */
          if (!any)
            printf ("%-8d %-20s %-24s %-20s %14s %10s\n", migration->version, migration->name,
                    "-", "(none here)", "-", "-");
        }
    }
  return TRUE;
}

static gboolean
init_db (const KtConfig *config, GError **error)
{
  g_autoptr(KtDb) db = kt_db_new (&config->db);
  gboolean idempotent = config->job.mode == KT_MODE_IDEMPOTENT;
  g_auto(GStrv) dimensions = NULL, sums = NULL;
  KtCountsShape shape;

  if (!kt_migrations_ready (db, NULL, NULL, error) || !error_log_shape (db, &dimensions, &sums, error))
    return FALSE;
  shape = (KtCountsShape) { (const char *const *) dimensions, (const char *const *) sums };
  if (!kt_counts_prepare (db, idempotent, "error_log", &shape, error))
    return FALSE;
  g_message ("ktally's %s tables are in %s",
             idempotent ? "idempotent-mode" : "transactional-mode", kt_db_name (db));
  return TRUE;
}

static const KtOptionNote notes[] = {
  { "mode", "Which tables: transactional or idempotent" },
  { NULL, NULL }
};

static gboolean
check (KtConfig *config, const KtOptionValues *values, GError **error)
{
  (void) values;
  return kt_check_db (config, error);
}

static gboolean
handle (const KtConfig *config, volatile int *stop, GError **error)
{
  const InitDbOptions *own = config->own;

  (void) stop;
  return own->dry_run ? dry_run (config, error) : init_db (config, error);
}

const KtCommand kt_command_init_db = {
  .name = "init-db",
  .summary = "create ktally's tables in a database",
  .help = SUMMARY,
  .bit = KT_CMD_INIT_DB,
  .notes = notes,
  .options = init_db_options,
  .options_size = sizeof (InitDbOptions),
  .check = check,
  .handle = handle,
};
