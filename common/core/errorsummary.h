/* SPDX-License-Identifier: MPL-2.0 */
/* errorsummary.h - parser and classifier for mozlog's errorsummary artifacts.
 *
 * An errorsummary is JSON lines written by mozlog's ErrorSummaryFormatter
 * (testing/mozbase/mozlog/mozlog/formatters/errorsummary.py), one line type per `action`:
 *   test_groups   `groups`: the groups (manifests) the harness meant to run; written first.
 *   test_result   one unexpected result (`test`, `subtest` for a test_status, `group`,
 *                 `status`, `expected`, `message`, `known_intermittent`); `expected` is left
 *                 out when it equals `status` (then only with MOZLOG_DUMP_ALL_TESTS).
 *                 (`test_status` is read the same way.)
 *   group_result  `group`, `status`, `duration`: one per group whose tests logged something,
 *                 all written when the suite ends. status is OK (a test ran as expected),
 *                 SKIP (all skipped), ERROR (an unexpected result or crash), PASS (the
 *                 group's crash was expected), FAIL (a shutdown failure) or null (a test
 *                 started and never ended; kept as RT_ES_STATUS_UNFINISHED, a failing
 *                 status: mozlog's own test expects ERROR for it).
 *   crash         `test` (null when the product crashed before any test), `signature`,
 *                 `group` (only with a test); unexpected unless its group ended OK or PASS.
 *   log           `level` ERROR/CRITICAL and `message`: judges nothing; or a shutdown
 *                 failure: `status` FAIL, `test` (the group being shut down), `message`,
 *                 `group` (the known group it matched, or [] when none did: every
 *                 group_result may then be OK), always a failure.
 *   lint          (mozlog's formatter builds it and never writes it) and unknown actions
 *                 are ignored.
 * Several artifacts of one run are added to the same summary; a group's result is the
 * worst of its group_results (no result < SKIP < OK = PASS < UNFINISHED < FAIL < ERROR
 * and any other status), whatever the order the artifacts came in. The classifier
 * answers, from the data alone: did tests fail (and which), did the product crash before
 * any test, is the summary complete, or does it point at an infrastructure problem.
 * Failures are listed in this order: the result and shutdown lines as they came, then the
 * unexpected crashes, then one per group that ended failing with none of its own (test:
 * the group's name, status: its result); the last two are made again after each artifact.
 * Untrusted input: every size is capped and the parser never
 * trusts a field's type. Group names are found through a hash table keyed with SipHash
 * (hash_key), so a look-up costs the same whatever the names; parsing stops as soon as a
 * cap is hit (the summary is then incomplete, too_big), and the total bytes of a run's
 * artifacts are capped (max_bytes). A caller may give a deadline (expired, checked every
 * RT_ES_DEADLINE_LINES lines): parsing then stops with RT_ETIMEDOUT. Pure: no I/O, no clock
 * (the deadline is the caller's). Not thread-safe per summary. */
#ifndef RETRIG_COMMON_ERRORSUMMARY_H
#define RETRIG_COMMON_ERRORSUMMARY_H

#include <stdbool.h>
#include <stddef.h>

#include "common/core/errors.h"
#include "common/core/siphash.h"

#define RT_ES_MAX_LINE_BYTES (1024 * 1024) /* one JSON line */
#define RT_ES_MAX_LINES      200000        /* per summary, all artifacts together */
#define RT_ES_MAX_FAILURES   500           /* failures kept (more are counted) */
#define RT_ES_MAX_GROUPS     5000          /* groups kept */
#define RT_ES_MAX_FIELD      2048          /* bytes kept of a message/subtest/name */
#define RT_ES_MAX_BYTES      (64L << 20)   /* all artifacts of a run together, by default */
#define RT_ES_DEADLINE_LINES 256           /* lines between two looks at the deadline */

/* The status kept for a group_result whose status is null (a test started, never ended). */
#define RT_ES_STATUS_UNFINISHED "UNFINISHED"

typedef struct rt_es_failure {
    char *test;
    char *subtest;  /* may be NULL */
    char *status;   /* FAIL, TIMEOUT, CRASH, ERROR, ... */
    char *expected; /* the line's expected status (a crash line: its status; a shutdown
                     * failure or a failing group: OK) */
    char *message;  /* may be NULL; a crash line: its signature */
    char *group;    /* "" for a harness-level failure, a crash or shutdown failure of no
                     * known group */
    bool of_group;  /* no line named it: a group that ended failing (test: the group) */
} rt_es_failure;

typedef struct rt_es_group {
    char *name;
    size_t name_len;
    char *status;        /* the worst group_result status, or NULL when it has none */
    bool listed;         /* named in test_groups */
    bool last_listed;    /* the last group of a test_groups line */
    long duration_ms;    /* -1 when unknown */
    size_t failed_tests; /* unexpected results and shutdown failures in the group */
    size_t crashes;      /* crash lines of the group (expected when it ended OK or PASS) */
} rt_es_group;

typedef enum { RT_ES_PASS, RT_ES_TEST_FAILURE, RT_ES_INFRA, RT_ES_PRODUCT_CRASH } rt_es_kind;

typedef struct rt_errorsummary {
    rt_es_failure *failures;
    size_t nfailures;
    size_t failures_dropped; /* beyond RT_ES_MAX_FAILURES */
    rt_es_group *groups;
    size_t ngroups;
    size_t lines;
    size_t bad_lines; /* unparseable or truncated lines */
    size_t artifacts;
    size_t group_results;
    size_t groups_listed;
    size_t crashes;                  /* crash lines, expected or not */
    size_t crashes_without_test;     /* crash lines naming no test */
    size_t test_results;             /* test_result/test_status lines, expected or not */
    size_t shutdown_failures;        /* log lines with a status */
    size_t test_groups_lines;        /* test_groups lines read */
    size_t artifacts_without_groups; /* artifacts with no test_groups line (an empty one too) */
    bool harness_failure;            /* a test_result outside any group (group "") */
    bool too_big;                    /* a cap was hit: parsing stopped, the summary is incomplete */
    bool timed_out;                  /* the caller's deadline passed: parsing stopped */
    size_t bytes;                    /* of every artifact added */

    /* Set by rt_errorsummary_init (a zeroed summary works, with a known hash key and the
     * default byte cap): */
    rt_siphash_key hash_key;        /* of the group index: the process's random key */
    size_t max_bytes;               /* cap of bytes (all artifacts); 0: RT_ES_MAX_BYTES */
    bool (*expired)(void *context); /* the deadline, or NULL */
    void *expired_context;

    size_t rt__cap_groups, rt__cap_failures; /* internal: allocations and the group index */
    size_t *rt__index, rt__index_size;
    rt_es_failure *rt__crashes; /* internal: every crash line, until their groups end */
    size_t rt__ncrashes, rt__cap_crashes, rt__crashes_dropped;
    size_t rt__listed_failures, rt__listed_dropped; /* failures before the derived ones */
} rt_errorsummary;

/* An empty summary whose group index is keyed with key (NULL: zero), whose artifacts may
 * hold max_bytes in all (0: RT_ES_MAX_BYTES), and whose parsing stops once expired(context)
 * is true (expired may be NULL). */
void rt_errorsummary_init(rt_errorsummary *es, const rt_siphash_key *key, size_t max_bytes,
                          bool (*expired)(void *context), void *context);

/* Adds one artifact's text. Returns RT_OK even for malformed lines (they are counted as
 * bad_lines and make the summary incomplete) and when a cap is hit (too_big; the rest of
 * this and later artifacts is not parsed); RT_ETIMEDOUT when the deadline passed (timed_out;
 * nothing more is parsed); RT_ENOMEM on allocation failure. */
RT_MUSTCHECK int rt_errorsummary_add(rt_errorsummary *es, const char *text, size_t len);

/* Verdict of the data: kind, and a reason code:
 *   pass:          "no-test-failure"
 *   test-failure:  "test-failure"
 *   product-crash: "crash-before-tests" (rt_errorsummary_crashed_before_tests)
 *   infra:         "incomplete-errorsummary" (rt_errorsummary_incomplete_why says which)
 * A summary with no artifacts at all is infra "no-errorsummary".
 *
 * Result lines follow mozlog: a test_result (or test_status) line is a failure when its
 * `expected` is present and differs from `status`, and `status` is not SKIP nor one of its
 * known_intermittent statuses; mozlog leaves `expected` out when it equals `status`, so a
 * line without it is an expected result. A crash line is a failure unless its group ended
 * OK or PASS; a shutdown failure (a log line with a status) always is; so is a group that
 * ended neither OK, PASS nor SKIP. */
rt_es_kind rt_errorsummary_classify(const rt_errorsummary *es, const char **reason);
/* Why the summary is incomplete, or NULL when it is complete. The first that applies of:
 *   "no-errorsummary"       no artifact at all;
 *   "parse-timeout"         the caller's deadline passed;
 *   "too-big"               a cap was hit;
 *   "bad-lines"             a line is not a JSON object with an action (cut or garbled);
 *   "no-test-groups"        an artifact has no test_groups line (an empty file included);
 *   "harness-failure"       a failing result outside any group;
 *   "no-group-result"       groups are listed and not one has a group_result (mozlog writes
 *                           them all when the suite ends: the harness never got there);
 *   "group-without-result"  a listed group that had to finish has no group_result: the last
 *                           group of a test_groups line, or one with failing results
 *                           or crashes.
 * A listed group without a result followed by groups that finished logged no test at all
 * (mozlog writes a group_result only for a group whose tests logged something: its tests
 * were all filtered out); it is "not run" (rt_errorsummary_group_not_run), not missing.
 * Recorded runs have such groups (Treeherder's sample mochitest-browser-chrome summaries
 * list browser/components/tests/browser/whats_new_page/browser.ini 21st of 30 with no
 * result, the 9 groups after it finished). */
const char *rt_errorsummary_incomplete_why(const rt_errorsummary *es);
/* True when the product crashed before any test: a crash line naming no test, and no
 * result, group_result or shutdown line at all, nothing cut or garbled (mozlog writes no
 * group_result for a group none of whose tests started). Such a summary is incomplete; it
 * is a product crash all the same, not an infrastructure failure. */
bool rt_errorsummary_crashed_before_tests(const rt_errorsummary *es);
/* True when rt_errorsummary_incomplete_why is NULL. */
bool rt_errorsummary_complete(const rt_errorsummary *es);
/* True when the group had to finish and has no group_result (see group-without-result). */
bool rt_errorsummary_group_unfinished(const rt_es_group *group);
/* True when the group was listed, has no group_result and did not have to finish. */
bool rt_errorsummary_group_not_run(const rt_es_group *group);
/* True when the group did not end OK, PASS (or SKIP), or one of its tests failed, or it
 * has a crash and no result. Constant time. */
bool rt_errorsummary_group_failed(const rt_errorsummary *es, const rt_es_group *group);
const char *rt_es_kind_name(rt_es_kind kind);

/* Frees what the summary holds; it is then empty, with the same key, cap and deadline. */
void rt_errorsummary_free(rt_errorsummary *es);

#endif
