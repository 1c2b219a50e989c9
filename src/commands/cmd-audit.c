/* cmd-audit.c - `ktally audit`: checks the chain of committed batches
 * (core/audit.c) and prints the verdict: the chains, each table's totals,
 * the notes, then the problems. Exit status 5 (KT_ERROR_AUDIT) when
 * anything is broken. */
#include "command.h"

#include <stdio.h>
#include "audit.h"
#include "check.h"
#include "error.h"

/* The notes, then the problems; KT_ERROR_AUDIT when there are any. */
static gboolean
report (GPtrArray *notes, GPtrArray *forgotten_notes, GPtrArray *problems, GError **error)
{
  for (guint i = 0; i < notes->len; i++)
    printf ("audit: note: %s (a replay adds its range)\n", (const char *) notes->pdata[i]);
  for (guint i = 0; i < forgotten_notes->len; i++)
    printf ("audit: note: %s\n", (const char *) forgotten_notes->pdata[i]);
  for (guint i = 0; i < problems->len; i++)
    printf ("audit: BROKEN: %s\n", (const char *) problems->pdata[i]);
  if (problems->len > 0)
    {
      g_set_error (error, KT_ERROR, KT_ERROR_AUDIT, "the audit found %u problem(s)",
                   problems->len);
      return FALSE;
    }
  printf ("audit: OK: every chain is whole up to its stored offset and every total agrees\n");
  return TRUE;
}

/* What the audit found, in the order it finds it. */
static gboolean
print_report (const char *job, const KtAuditReport *r, GError **error)
{
  printf ("audit: %u partition chains, %u batches%s%s\n", r->chains, r->batches,
          job != NULL ? " of job " : "", job != NULL ? job : "");
  for (guint i = 0; i < r->tables->len; i++)
    {
      const KtAuditTable *t = &g_array_index (r->tables, KtAuditTable, i);

      if (t->holds != NULL)
        printf ("audit: %s: %s, chains only\n", t->name, t->holds);
      else
        printf ("audit: %s: %" G_GUINT64_FORMAT " ERROR lines recorded by batches, %"
                G_GUINT64_FORMAT " in the table%s\n", t->name, t->recorded, t->total,
                t->total == t->recorded ? "" : "  <-- differs");
    }
  return report (r->notes, r->forgotten, r->problems, error);
}

static gboolean
audit (const KtConfig *config, GError **error)
{
  g_auto(KtAuditReport) report = { 0 };
  KtAuditRequest request = { &config->db, &config->kafka, config->job.name };

  return kt_audit (&request, &report, error) && print_report (config->job.name, &report, error);
}

/* What `ktally audit --help` says before the options. */
static const char SUMMARY[] =
  "Checks the audit trail (ktally_batches): per partition, the committed\n"
  "batches form one chain without gap or overlap up to the stored offset,\n"
  "and their ERROR totals agree with the tables they were written to.\n"
  "Exit status 0 when everything holds, 5 on any break.";

static const KtOptionNote notes[] = {
  { "job", "Audit this job only (default: every job in the database)" },
  { "brokers", "Kafka bootstrap servers: also check where the chains of jobs that keep "
               "their offsets in Kafka (--offsets kafka) end" },
  { NULL, NULL }
};

static gboolean
check (KtConfig *config, const KtOptionValues *values, GError **error)
{
  (void) values;
  return kt_check_job (config, FALSE, "", error)
         && kt_check_db (config, error)
         && kt_check_brokers (config, FALSE, error);
}

static gboolean
handle (const KtConfig *config, volatile int *stop, GError **error)
{
  (void) stop;
  return audit (config, error);
}

const KtCommand kt_command_audit = {
  .name = "audit",
  .summary = "check that the committed batches form one unbroken chain",
  .help = SUMMARY,
  .bit = KT_CMD_AUDIT,
  .notes = notes,
  .check = check,
  .handle = handle,
};
