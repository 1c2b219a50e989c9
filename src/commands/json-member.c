/* json-member.c - members of the commands' JSON documents (json-member.h). */
#include "json-member.h"

void
kt_json_member_string (JsonBuilder *b, const char *name, const char *value)
{
  json_builder_set_member_name (b, name);
  json_builder_add_string_value (b, value);
}

void
kt_json_member_int (JsonBuilder *b, const char *name, gint64 value)
{
  json_builder_set_member_name (b, name);
  json_builder_add_int_value (b, value);
}

void
kt_json_member_bool (JsonBuilder *b, const char *name, gboolean value)
{
  json_builder_set_member_name (b, name);
  json_builder_add_boolean_value (b, value);
}

void
kt_json_member_interval (JsonBuilder *b, const char *name, KtInterval interval)
{
  json_builder_set_member_name (b, name);
  if (interval.until <= interval.from)
    {
      json_builder_add_null_value (b);
      return;
    }
  json_builder_begin_array (b);
  json_builder_add_int_value (b, interval.from);
  json_builder_add_int_value (b, interval.until);
  json_builder_end_array (b);
}

void
kt_json_member_intervals (JsonBuilder *b, const char *name, const GArray *intervals)
{
  json_builder_set_member_name (b, name);
  json_builder_begin_array (b);
  for (guint i = 0; i < intervals->len; i++)
    {
      json_builder_begin_array (b);
      json_builder_add_int_value (b, g_array_index (intervals, KtInterval, i).from);
      json_builder_add_int_value (b, g_array_index (intervals, KtInterval, i).until);
      json_builder_end_array (b);
    }
  json_builder_end_array (b);
}
