/* test-field-path.c - fields named by path (base/field-path.c): names,
 * escapes, one normal form for two spellings, the key of a flat record,
 * the column a field gives, and what is no path. */
#include "error.h"
#include "field-path.h"

static void
test_parse (void)
{
  static const struct { const char *text; const char *names; } good[] = {
    { "level", "level" }, { "service.name", "service|name" }, { "log\\.level", "log.level" },
    { "a\\\\b.c", "a\\b|c" }, { "@timestamp", "@timestamp" }, { "\\l\\e\\v\\e\\l", "level" },
    { "http.response.status_code", "http|response|status_code" },
    { "caf\xc3\xa9.n\\.a", "caf\xc3\xa9|n.a" },
  };
  static const char *const bad[] = { "", ".", "a.", ".a", "a..b", "a\\", "a.\\" };

  for (guint i = 0; i < G_N_ELEMENTS (good); i++)
    {
      g_autoptr(GError) error = NULL;
      g_auto(GStrv) names = kt_field_path_parse ("--by", good[i].text, &error);
      g_autofree char *joined = NULL;

      g_assert_no_error (error);
      joined = g_strjoinv ("|", names);
      g_assert_cmpstr (joined, ==, good[i].names);
    }
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(GError) error = NULL;

      g_assert_null (kt_field_path_parse ("--time-field", bad[i], &error));
      g_assert_error (error, KT_ERROR, KT_ERROR_USAGE);
      g_assert_true (g_str_has_prefix (error->message, "--time-field: '"));
    }
  {
    g_autoptr(GError) error = NULL;
    g_autofree char *long_name = g_strnfill (256, 'a');
    g_autofree char *many = g_strjoinv (".", (char *[]) { "a", "b", "c", "d", "e", "f", "g",
                                                          "h", "i", "j", "k", "l", "m", "n",
                                                          "o", "p", "q", NULL });

    g_assert_null (kt_field_path_parse ("--by", long_name, &error));
    g_clear_error (&error);
    g_assert_null (kt_field_path_parse ("--by", many, &error));
  }
}

/* One path, one normal form: a backslash that changes nothing goes. */
static void
test_normal (void)
{
  static const struct { const char *a, *b; } same[] = {
    { "\\level", "level" }, { "service.\\name", "service.name" }, { "log\\.level", "log\\.level" },
    { "a\\\\b", "a\\\\b" }, { "\\@timestamp", "@timestamp" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (same); i++)
    {
      g_autofree char *a = kt_field_path_normal (same[i].a);
      g_autofree char *b = kt_field_path_normal (same[i].b);

      g_assert_cmpstr (a, ==, b);
      g_assert_cmpstr (a, ==, same[i].b);
    }
  /* A dot escaped or not are two paths (one member, or a member's). */
  {
    g_autofree char *a = kt_field_path_normal ("log.level");
    g_autofree char *b = kt_field_path_normal ("log\\.level");

    g_assert_cmpstr (a, !=, b);
  }
}

static void
test_column (void)
{
  static const struct { const char *path, *column, *key; } cases[] = {
    { "level", "level", "level" }, { "service.name", "service_name", "service.name" },
    { "log\\.level", "log_level", "log.level" }, { "@timestamp", "_timestamp", "@timestamp" },
    { "http.response.status_code", "http_response_status_code", "http.response.status_code" },
    { "9lives", "_9lives", "9lives" }, { "caf\xc3\xa9", "caf__", "caf\xc3\xa9" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *column = kt_field_column (cases[i].path);
      g_autofree char *key = kt_field_path_key (cases[i].path);

      g_assert_cmpstr (column, ==, cases[i].column);
      g_assert_cmpstr (key, ==, cases[i].key);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/field-path/parse", test_parse);
  g_test_add_func ("/field-path/normal", test_normal);
  g_test_add_func ("/field-path/column", test_column);
  return g_test_run ();
}
