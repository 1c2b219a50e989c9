/* coverage.h - which offsets of a partition an idempotent job has counted.
 *
 * Idempotent mode stores, with each partition's counts and in the same
 * transaction, the set of offsets those counts include: a few disjoint
 * intervals, usually one, [first offset counted, last + 1). A batch counts
 * only offsets outside the set it read when it planned, and its write
 * extends the set only if the set is still what it read (compare and set).
 * So a repeated write (a crash between the output and the offsets, a zombie
 * writer), a rewind of the offsets to anywhere, or a replayed range adds
 * nothing twice, and what was never counted (retention skipped it, or the
 * offsets were moved forward past it) is counted if it is ever read.
 *
 * Pure: no Kafka, no MySQL. The text form ("0-100,250-400") is what the
 * database keeps. */
#pragma once
#include <glib.h>

typedef struct
{
  gint64 from;   /* inclusive */
  gint64 until;  /* exclusive */
} KtInterval;

typedef struct _KtCoverage KtCoverage;

KtCoverage *kt_coverage_new  (void);
void        kt_coverage_free (KtCoverage *self);  /* NULL is fine */
KtCoverage *kt_coverage_copy (const KtCoverage *self);

/* Parses "A-B,C-D" (each A < B, ascending); "" is the empty set. Intervals
 * that overlap are kept as they are (kt_coverage_overlap() reports them:
 * offsets counted twice by an older ktally); a malformed text is
 * KT_ERROR_FATAL, naming @what. */
KtCoverage *kt_coverage_parse (const char *text, const char *what, GError **error);

/* The text form (empty string for the empty set); the caller frees it. */
char       *kt_coverage_format (const KtCoverage *self);

/* Adds [from, until) (nothing if empty), merging what it touches. */
void        kt_coverage_add (KtCoverage *self, gint64 from, gint64 until);

/* The first offset at or after @offset that is not covered. */
gint64      kt_coverage_next_gap (const KtCoverage *self, gint64 offset);

/* Whether @offset is covered. */
gboolean    kt_coverage_contains (const KtCoverage *self, gint64 offset);

/* The covered intervals that meet [from, until), clipped to it, appended
 * to @out (KtInterval, ascending). */
void        kt_coverage_within (const KtCoverage *self, gint64 from, gint64 until,
                                GArray *out);

/* The first overlap between two stored intervals, if any (TRUE and *@out;
 * only sets parsed from an older ktally's rows can have one). */
gboolean    kt_coverage_overlap (const KtCoverage *self, KtInterval *out);

/* How many offsets of [from, until) are covered. */
gint64      kt_coverage_count (const KtCoverage *self, gint64 from, gint64 until);

guint       kt_coverage_n_intervals (const KtCoverage *self);
gboolean    kt_coverage_equal (const KtCoverage *a, const KtCoverage *b);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (KtCoverage, kt_coverage_free)
