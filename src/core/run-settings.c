/* run-settings.c - what a reload may change of a running job (run.h,
 * KtRunSettings): the scheduler's copy, which it replaces between batches. */
#include "run.h"

void
kt_run_settings_init (KtRunSettings *out, const KtRunOptions *options, const KtDbConfig *db)
{
#define COPY(type, name) out->name = options->name;
  *out = (KtRunSettings) { 0 };
  KT_RUN_RELOADABLE (COPY)
#undef COPY
  kt_db_config_copy (&out->db, db);
}

void
kt_run_settings_clear (KtRunSettings *settings)
{
  kt_db_config_clear (&settings->db);
}
