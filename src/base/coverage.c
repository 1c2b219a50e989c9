/* coverage.c - the set of offsets an idempotent job counted (coverage.h). */
#include "coverage.h"

#include <string.h>
#include "error.h"

struct _KtCoverage
{
  GArray *intervals;  /* KtInterval, ascending by from; disjoint unless parsed so */
};

KtCoverage *
kt_coverage_new (void)
{
  KtCoverage *self = g_new0 (KtCoverage, 1);
  self->intervals = g_array_new (FALSE, FALSE, sizeof (KtInterval));
  return self;
}

void
kt_coverage_free (KtCoverage *self)
{
  if (self == NULL)
    return;
  g_clear_pointer (&self->intervals, g_array_unref);
  g_free (self);
}

KtCoverage *
kt_coverage_copy (const KtCoverage *self)
{
  KtCoverage *copy = kt_coverage_new ();
  g_array_append_vals (copy->intervals, self->intervals->data, self->intervals->len);
  return copy;
}

static const KtInterval *
at (const KtCoverage *self, guint i)
{
  return &g_array_index (self->intervals, KtInterval, i);
}

KtCoverage *
kt_coverage_parse (const char *text, const char *what, GError **error)
{
  g_autoptr(KtCoverage) self = kt_coverage_new ();
  g_auto(GStrv) items = NULL;

  if (text == NULL || *text == '\0')
    return g_steal_pointer (&self);
  items = g_strsplit (text, ",", -1);
  for (char **item = items; *item != NULL; item++)
    {
      g_auto(GStrv) ends = g_strsplit (*item, "-", 3);
      guint64 from, until;
      KtInterval iv;

      if (g_strv_length (ends) != 2
          || !g_ascii_string_to_unsigned (ends[0], 10, 0, G_MAXINT64, &from, NULL)
          || !g_ascii_string_to_unsigned (ends[1], 10, 0, G_MAXINT64, &until, NULL)
          || from >= until
          || (self->intervals->len > 0
              && (gint64) from < at (self, self->intervals->len - 1)->from))
        {
          g_set_error (error, KT_ERROR, KT_ERROR_FATAL,
                       "%s: '%s' is not a list of ascending offset ranges A-B",
                       what, *item);
          return NULL;
        }
      iv = (KtInterval) { (gint64) from, (gint64) until };
      g_array_append_val (self->intervals, iv);
    }
  return g_steal_pointer (&self);
}

char *
kt_coverage_format (const KtCoverage *self)
{
  GString *out = g_string_new (NULL);

  for (guint i = 0; i < self->intervals->len; i++)
    g_string_append_printf (out, "%s%" G_GINT64_FORMAT "-%" G_GINT64_FORMAT,
                            i ? "," : "", at (self, i)->from, at (self, i)->until);
  return g_string_free (out, FALSE);
}

void
kt_coverage_add (KtCoverage *self, gint64 from, gint64 until)
{
  KtInterval merged = { from, until };
  guint first, last;

  if (from >= until)
    return;
  /* Intervals that end before @from starts (and do not touch it) stay;
   * so do those that start after @until. Everything between is merged. */
  for (first = 0; first < self->intervals->len && at (self, first)->until < from; first++)
    ;
  for (last = first; last < self->intervals->len && at (self, last)->from <= until; last++)
    {
      merged.from = MIN (merged.from, at (self, last)->from);
      merged.until = MAX (merged.until, at (self, last)->until);
    }
  g_array_remove_range (self->intervals, first, last - first);
  g_array_insert_val (self->intervals, first, merged);
}

gint64
kt_coverage_next_gap (const KtCoverage *self, gint64 offset)
{
  /* Ascending by from: one pass also handles overlapping intervals. */
  for (guint i = 0; i < self->intervals->len; i++)
    if (at (self, i)->from <= offset && offset < at (self, i)->until)
      offset = at (self, i)->until;
  return offset;
}

gboolean
kt_coverage_contains (const KtCoverage *self, gint64 offset)
{
  return kt_coverage_next_gap (self, offset) != offset;
}

void
kt_coverage_within (const KtCoverage *self, gint64 from, gint64 until, GArray *out)
{
  for (guint i = 0; i < self->intervals->len; i++)
    {
      KtInterval iv = { MAX (from, at (self, i)->from), MIN (until, at (self, i)->until) };
      if (iv.from < iv.until)
        g_array_append_val (out, iv);
    }
}

gboolean
kt_coverage_overlap (const KtCoverage *self, KtInterval *out)
{
  for (guint i = 1; i < self->intervals->len; i++)
    if (at (self, i)->from < at (self, i - 1)->until)
      {
        *out = (KtInterval) { at (self, i)->from,
                              MIN (at (self, i)->until, at (self, i - 1)->until) };
        return TRUE;
      }
  return FALSE;
}

gint64
kt_coverage_count (const KtCoverage *self, gint64 from, gint64 until)
{
  gint64 n = 0, end = from;

  for (guint i = 0; i < self->intervals->len; i++)
    {
      gint64 lo = MAX (end, at (self, i)->from), hi = MIN (until, at (self, i)->until);
      if (lo < hi)
        {
          n += hi - lo;
          end = hi;
        }
    }
  return n;
}

guint
kt_coverage_n_intervals (const KtCoverage *self)
{
  return self->intervals->len;
}

gboolean
kt_coverage_equal (const KtCoverage *a, const KtCoverage *b)
{
  /* An empty GArray's data may be NULL, which memcmp must not get. */
  return a->intervals->len == b->intervals->len
         && (a->intervals->len == 0
             || memcmp (a->intervals->data, b->intervals->data,
                        a->intervals->len * sizeof (KtInterval)) == 0);
}
