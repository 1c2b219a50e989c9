/* check.h - the checks of options that several commands share, once the
 * option table loaded them (a command's own check calls those it needs). */
#pragma once
#include <glib.h>
#include "cli.h"

/* Whether @name is a job's name: [A-Za-z0-9._-] or any character beyond
 * ASCII (of the Basic Multilingual Plane: MySQL's), 1 to 64 characters. */
gboolean kt_check_is_job_name (const char *name);

/* Each checks options of @config, or fails with KT_ERROR_USAGE and one
 * line naming the flag. kt_check_kafka(): --brokers and --topic
 * required; @several says whether the command takes several topics
 * (--topic a,b); --job defaults to the topic. */
gboolean kt_check_kafka (KtConfig *config, const KtOptionValues *values,
                             gboolean several, GError **error);
/* --db required, and its password file read. */
gboolean kt_check_db (KtConfig *config, GError **error);
/* What run and replay share: the kind, the mode, the fields of --by... */
gboolean kt_check_run (KtConfig *config, GError **error);
/* --table: whether it was given (its row, KT_OPT_TABLE, checked the name). */
gboolean kt_check_table (KtConfig *config, const KtOptionValues *values, GError **error);
/* --job: required when @required; of the rules of job names. */
gboolean kt_check_job (KtConfig *config, gboolean required, const char *hint,
                             GError **error);
/* --brokers (required when @required), -X, and one --topic, optional: the
 * commands that manage jobs (jobs, reset, forget) reach Kafka only for the
 * watermarks and the consumer group's offsets. */
gboolean kt_check_brokers (KtConfig *config, gboolean required, GError **error);
/* --dry-run and --execute exclude each other. */
gboolean kt_check_execute (KtConfig *config, GError **error);
