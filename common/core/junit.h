/* SPDX-License-Identifier: MPL-2.0 */
/* junit.h - reads JUnit XML test reports (pytest --junitxml, GitHub Actions test
 * reporters, Maven Surefire) into test history rows (common/core/history.h).
 *
 * Accepted: a <testsuites> root holding <testsuite> elements (nested suites too), or a
 * <testsuite> root. Each <testcase> becomes a test "classname::name" in group classname
 * (the name alone in the group of its testsuite's name when the classname is missing or
 * repeats the name, as jest-junit writes it); a <failure> child makes it FAIL, <error>
 * ERROR, <skipped> SKIP, none PASS. Duplicate testcases are merged, a failure winning.
 * The failure line's message is the failure's message attribute, else the first line of
 * its text. Untrusted input: the document must be well-formed (a truncated file is an
 * error naming the line), no network access, no entity expansion, bounded sizes. Read as
 * a stream with libxml2's xmlTextReader (thread-safe per call): a testcase goes into the rows
 * as soon as its end is read, so what the parser holds does not grow with the report. */
#ifndef RETRIG_COMMON_JUNIT_H
#define RETRIG_COMMON_JUNIT_H

#include <stddef.h>

#include "common/core/errors.h"
#include "common/core/history.h"

#define RT_JUNIT_MAX_BYTES (256L * 1024 * 1024) /* one file */
#define RT_JUNIT_MAX_CASES 1000000              /* testcases of one call, all files */
#define RT_JUNIT_MAX_NAME  4096                 /* bytes of a test name */

typedef struct rt_junit_stats {
    size_t testcases; /* read, before merging */
    size_t failures;  /* failure and error testcases, before merging */
    size_t skipped;
    char timestamp[64]; /* the first testsuite timestamp attribute, "" when none */
} rt_junit_stats;

/* Parses one document and adds its testcases to rows (merging with what is there).
 * Returns RT_OK; RT_EPROTO for a document that is not well-formed XML or not JUnit
 * (errstr: "line 12: Premature end of data ..." or "root element <html> is not
 * testsuites or testsuite"); RT_ETOOBIG past a cap; RT_ENOMEM. On failure rows may hold
 * part of the document: callers discard them. */
RT_MUSTCHECK int rt_junit_add(const char *data, size_t len, rt_history_rows *rows,
                              rt_junit_stats *stats, char *errstr);

#endif
