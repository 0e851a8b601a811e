/* SPDX-License-Identifier: MPL-2.0 */
/* junit.h - reads JUnit XML test reports, as pytest, jest-junit, Maven Surefire, Gradle,
 * JUnit 5, gotestsum, go-junit-report, ctest, mocha, nose2, cargo-nextest, bazel and
 * JunitXml.TestLogger write them (tests/fixtures/junit/ holds one of each), into test
 * history rows (common/core/history.h).
 *
 * Accepted: a <testsuites> root holding <testsuite> elements (nested suites too), or a
 * <testsuite> root. A testcase's identity is "<scope>::<name>" where the scope is its
 * classname, else (classname missing, empty or repeating the name, as jest-junit, mocha and
 * go's TestMain write it) its `file` attribute, else the name of the innermost enclosing
 * testsuite; the name alone when none is set. The scope is the test's group.
 *
 * Outcomes (the status stored): a <failure> child makes FAIL, <error> ERROR (a failure
 * winning over an error), <skipped> SKIP, none PASS. <flakyFailure>/<flakyError> (Surefire,
 * Gradle's merged reruns) are failed attempts of a test that then passed: FLAKY, stored as
 * failed so the flaky rule counts it, with the first attempt's message; <rerunFailure>/
 * <rerunError> are further failed attempts of a failing test (FAIL, attempts counted).
 * pytest-rerunfailures: pytest's junitxml writes a <testcase> per attempt, a rerun's with no
 * outcome element; so in pytest's documents (<testsuites name="pytest tests">, or a
 * <testsuite name="pytest">) consecutive testcases of one test are its attempts, all but
 * the last failed ones: empty, empty is FLAKY (a failure, then a pass), empty, <failure> a
 * FAIL of two attempts (tests/fixtures/junit/pytest-rerunfailures.xml). Interleaved with
 * other tests (pytest-xdist) they merge as duplicates do.
 * status="disabled" with no outcome child (ctest) is DISABLED; pytest's collection error
 * (no classname, <error message="collection failure">) COLLECTION_ERROR; go-junit-report's
 * "[build failed]"/"[setup failed]" testcases BUILD_FAILED: none of these three counts as a
 * test failure (failed is false). Duplicate testcases of one test merge whatever their order
 * (common/core/history.h: failure > error > pass > skip; a failure and a pass make FLAKY).
 *
 * The message is the failure's message attribute, unless missing or generic ("Failed",
 * "test failure", ...): then the first meaningful line of its text. A malformed testcase
 * (no name, a name past RT_JUNIT_MAX_NAME) is set aside, counted in the stats with its
 * reason, and the rest of the report kept; only a document that cannot be read is refused.
 *
 * Untrusted input: a document with a DOCTYPE (so with entity declarations) is refused before
 * any element is read; no network access, no entity expansion, bounded sizes. Read as a
 * stream with libxml2's xmlTextReader (thread-safe per call): a testcase goes into the rows
 * as soon as its end is read, so what the parser holds does not grow with the report. */
#ifndef RETRIG_COMMON_JUNIT_H
#define RETRIG_COMMON_JUNIT_H

#include <stddef.h>

#include "common/core/errors.h"
#include "common/core/history.h"

#define RT_JUNIT_MAX_BYTES     (256L * 1024 * 1024) /* one file */
#define RT_JUNIT_MAX_CASES     1000000              /* testcases of one call, all files */
#define RT_JUNIT_MAX_NAME      4096                 /* bytes of a test name */
#define RT_JUNIT_ASIDE_REASONS 16                   /* set-aside reasons kept in the stats */

typedef struct rt_junit_stats {
    size_t testcases; /* read, before merging, set-aside ones included */
    size_t failures;  /* failure and error testcases, before merging */
    size_t skipped;
    size_t set_aside; /* malformed testcases not stored */
    /* the first RT_JUNIT_ASIDE_REASONS of them: "line 12: testcase without a name" */
    char aside[RT_JUNIT_ASIDE_REASONS][160];
    char timestamp[64]; /* the first testsuite timestamp attribute, "" when none */
} rt_junit_stats;

/* Parses one document and adds its testcases to rows (merging with what is there).
 * Returns RT_OK (malformed testcases set aside and counted in stats); RT_EPROTO for a
 * document that is not well-formed XML, has a DOCTYPE, or is not JUnit (errstr: "line 12:
 * Premature end of data ..." or "root element <html> is not testsuites or testsuite");
 * RT_ETOOBIG past a cap; RT_ENOMEM. On failure rows may hold part of the document: callers
 * discard them. */
RT_MUSTCHECK int rt_junit_add(const char *data, size_t len, rt_history_rows *rows,
                              rt_junit_stats *stats, char *errstr);

#endif
