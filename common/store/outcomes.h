/* SPDX-License-Identifier: MPL-2.0 */
/* outcomes.h - the store of the JUnit outcomes that are not plain passes, skips or failures
 * (history_tests.status, migration 0034): FLAKY (failed, then passed within one run: still
 * failed), DISABLED, COLLECTION_ERROR and BUILD_FAILED (no test failure: never counted by
 * the flaky rule). Per test of a repository and window, how many runs reported each, so
 * that retrig flakes, the flaky-test page and the flaky-test issues label them as what they
 * are. The statement lives in outcomes.c; no PGresult leaves it. Thread-safety: per rt_pg
 * handle. */
#ifndef RETRIG_COMMON_STORE_OUTCOMES_H
#define RETRIG_COMMON_STORE_OUTCOMES_H

#include "common/not_core.h"

#include <jansson.h>
#include <stddef.h>

#include "common/core/errors.h"
#include "common/core/flaky_issue.h"
#include "common/io/pg.h"

#define RT_OUTCOME_LABELS_MAX 1000 /* tests listed at most, those with the most runs first */

/* The outcomes of one test in the window, in runs (history runs: one per report file). */
typedef struct rt_outcome_labels {
    char *test;
    long flaky, disabled, collection_error, build_failed;
} rt_outcome_labels;

typedef struct rt_outcome_labels_list {
    rt_outcome_labels *items; /* sorted by test */
    size_t count;
} rt_outcome_labels_list;

/* The tests of `repository` with such outcomes in runs from `until` - `window` (Postgres
 * interval text, "7 days") to `until` (a timestamptz text: ISO-8601 or "now"). */
RT_MUSTCHECK int rt_outcome_labels_read(rt_pg *pg, const char *repository, const char *until,
                                        const char *window, rt_outcome_labels_list *out);
/* The test's labels, NULL when it has none. */
const rt_outcome_labels *rt_outcome_labels_find(const rt_outcome_labels_list *list,
                                                const char *test);
/* {"FLAKY": n, "DISABLED": n, "COLLECTION_ERROR": n, "BUILD_FAILED": n}, the non-zero ones
 * only (an empty object for NULL); NULL when out of memory. */
json_t *rt_outcome_labels_json(const rt_outcome_labels *labels);
/* "FLAKY x2, DISABLED x1" into out ("" when none). */
void rt_outcome_labels_text(const rt_outcome_labels *labels, char *out, size_t size);
/* NULL is a no-op. */
void rt_outcome_labels_free(rt_outcome_labels_list *list);

/* Variants (GitHub: the matrix job, github_run_variants of migration 0038; Taskcluster: the
 * platform and build type, "linux1804-64-qr/debug", taskcluster_run_variants of migration
 * 0040, a run counted for a test when it ran one of the test's groups): per test that failed
 * in the window, its runs and failures in each variant, each test's rows together, by
 * variant. */
typedef struct rt_test_variants {
    char **tests;               /* tests[i] the test of variants[i] */
    rt_flaky_variant *variants; /* names owned */
    size_t count;
    const char *kind; /* static: RT_VARIANT_KIND_GITHUB, RT_VARIANT_KIND_TASKCLUSTER, both
                       * joined with " or " (a repository fed by both); NULL without rows */
} rt_test_variants;
#define RT_VARIANT_KIND_GITHUB      "matrix job"
#define RT_VARIANT_KIND_TASKCLUSTER "platform/build type"
#define RT_TEST_VARIANTS_MAX        50000 /* rows read at most */
RT_MUSTCHECK int rt_test_variants_read(rt_pg *pg, const char *repository, const char *until,
                                       const char *window, rt_test_variants *out);
/* The variants of `test` (a run of *n rows), NULL when none. */
const rt_flaky_variant *rt_test_variants_of(const rt_test_variants *all, const char *test,
                                            size_t *n);
/* {"variants": [{variant, runs, failures}], "only_variant": name or null}; NULL when out of
 * memory. */
json_t *rt_test_variants_json(const rt_flaky_variant *variants, size_t n);
void rt_test_variants_free(rt_test_variants *all);

#endif
