/* json-member.h - members of the JSON documents the commands print
 * (--json of status, jobs and reset), one call each: "name": value in
 * the object a JsonBuilder is building. */
#pragma once
#include <glib.h>
#include <json-glib/json-glib.h>
#include "coverage.h"

void kt_json_member_string (JsonBuilder *b, const char *name, const char *value);
void kt_json_member_int    (JsonBuilder *b, const char *name, gint64 value);
void kt_json_member_bool   (JsonBuilder *b, const char *name, gboolean value);
/* [from, until], or null when @interval is empty. */
void kt_json_member_interval  (JsonBuilder *b, const char *name, KtInterval interval);
/* [[from, until], ...] of @intervals (KtInterval). */
void kt_json_member_intervals (JsonBuilder *b, const char *name, const GArray *intervals);
