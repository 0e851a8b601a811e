/* SPDX-License-Identifier: MPL-2.0 */
/* test_errorsummary.c - errorsummary parsing and classification on the recorded fixtures. */
#include "support/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/errorsummary.h"

static rt_es_kind classify_fixture(const char *name, rt_errorsummary *es, const char **reason)
{
    size_t len = 0;
    char *text = rt_test_read_file(rt_test_fixture(name), &len);
    memset(es, 0, sizeof *es);
    assert_int_equal(rt_errorsummary_add(es, text, len), RT_OK);
    free(text);
    return rt_errorsummary_classify(es, reason);
}

static void test_mochitest_failures_are_a_test_failure_with_their_groups(void **state)
{
    (void)state;
    rt_errorsummary es;
    const char *reason = NULL;
    assert_int_equal(
        classify_fixture("errorsummary/mochitest-browser-chrome_errorsummary.log", &es, &reason),
        RT_ES_TEST_FAILURE);
    assert_string_equal(reason, "test-failure");
    assert_true(rt_errorsummary_complete(&es));
    /* Five failure lines, then one for each of the two ERROR groups with no failing test. */
    assert_int_equal(es.nfailures, 7);
    assert_true(es.failures[5].of_group && es.failures[6].of_group);
    assert_false(es.failures[4].of_group);
    assert_string_equal(es.failures[0].test,
                        "toolkit/components/pictureinpicture/tests/browser_fullscreen.js");
    assert_string_equal(es.failures[0].subtest, "Uncaught exception");
    assert_string_equal(es.failures[0].status, "FAIL");
    assert_string_equal(es.failures[0].expected, "PASS");
    assert_string_equal(es.failures[0].group,
                        "toolkit/components/pictureinpicture/tests/browser.ini");
    size_t failing = 0;
    for (size_t i = 0; i < es.ngroups; i++)
        if (rt_errorsummary_group_failed(&es, &es.groups[i])) failing++;
    assert_int_equal(failing, 3); /* two ERROR group_results plus the group with failing tests */
    assert_int_equal(es.groups_listed, 30);
    /* whats_new_page is listed 21st of 30 and logged no test: not run, not missing. */
    size_t not_run = 0;
    for (size_t i = 0; i < es.ngroups; i++)
        if (rt_errorsummary_group_not_run(&es.groups[i])) {
            not_run++;
            assert_string_equal(es.groups[i].name,
                                "browser/components/tests/browser/whats_new_page/browser.ini");
        }
    assert_int_equal(not_run, 1);
    assert_null(rt_errorsummary_incomplete_why(&es));
    rt_errorsummary_free(&es);
}

static void test_harness_timeout_outside_any_group_is_infra(void **state)
{
    (void)state;
    rt_errorsummary es;
    const char *reason = NULL;
    assert_int_equal(
        classify_fixture("errorsummary/mochitest-browser-chrome_infra_errorsummary.log", &es,
                         &reason),
        RT_ES_INFRA);
    assert_string_equal(reason, "incomplete-errorsummary");
    assert_true(es.harness_failure);
    rt_errorsummary_free(&es);
}

static void test_all_groups_ok_is_a_pass(void **state)
{
    (void)state;
    rt_errorsummary es;
    const char *reason = NULL;
    assert_int_equal(classify_fixture("errorsummary/mochitest-browser-chrome_pass_errorsummary.log",
                                      &es, &reason),
                     RT_ES_PASS);
    assert_string_equal(reason, "no-test-failure");
    rt_errorsummary_free(&es);
    assert_int_equal(
        classify_fixture("errorsummary/xpcshell-errorsummary-with-colon.log", &es, &reason),
        RT_ES_PASS);
    /* Group names containing ':' are kept whole. */
    assert_string_equal(es.groups[0].name,
                        "toolkit/components/extensions/test/xpcshell/xpcshell-e10s.ini:"
                        "toolkit/components/extensions/test/xpcshell/xpcshell-content.ini");
    rt_errorsummary_free(&es);
}

/* Issue 17, item 5: a summary without test_groups says nothing of what ran. */
static void test_single_failure_line_without_groups_is_incomplete(void **state)
{
    (void)state;
    rt_errorsummary es;
    const char *reason = NULL;
    assert_int_equal(classify_fixture("errorsummary/plain-chunked_errorsummary.log", &es, &reason),
                     RT_ES_INFRA);
    assert_string_equal(reason, "incomplete-errorsummary");
    assert_string_equal(rt_errorsummary_incomplete_why(&es), "no-test-groups");
    assert_int_equal(es.nfailures, 1);   /* still parsed, for `retrig errorsummary` */
    assert_null(es.failures[0].message); /* "message": null in the file */
    rt_errorsummary_free(&es);
}

/* Issue 17, item 5: groups A and B listed, a group_result for A only: B, the last group
 * listed, never finished. An empty artifact, or one next to a complete one, is
 * incomplete too. */
static void test_a_listed_group_without_its_result_is_incomplete(void **state)
{
    (void)state;
    const char *partial =
        "{\"action\": \"test_groups\", \"groups\": [\"a.ini\", \"b.ini\"]}\n"
        "{\"action\": \"test_result\", \"test\": \"a/t1.js\", \"group\": \"a.ini\", "
        "\"status\": \"FAIL\", \"expected\": \"PASS\"}\n"
        "{\"action\": \"group_result\", \"group\": \"a.ini\", \"status\": \"ERROR\"}\n";
    rt_errorsummary es = {0};
    assert_int_equal(rt_errorsummary_add(&es, partial, strlen(partial)), RT_OK);
    const char *reason = NULL;
    assert_int_equal(rt_errorsummary_classify(&es, &reason), RT_ES_INFRA);
    assert_string_equal(reason, "incomplete-errorsummary");
    assert_string_equal(rt_errorsummary_incomplete_why(&es), "group-without-result");
    size_t unfinished = 0;
    for (size_t i = 0; i < es.ngroups; i++)
        if (rt_errorsummary_group_unfinished(&es.groups[i])) {
            unfinished++;
            assert_string_equal(es.groups[i].name, "b.ini");
        }
    assert_int_equal(unfinished, 1);
    rt_errorsummary_free(&es);

    /* A group with a failing test and no result is unfinished wherever it is listed. */
    const char *failing_unfinished =
        "{\"action\": \"test_groups\", \"groups\": [\"a.ini\", \"b.ini\"]}\n"
        "{\"action\": \"test_result\", \"test\": \"a/t1.js\", \"group\": \"a.ini\", "
        "\"status\": \"FAIL\", \"expected\": \"PASS\"}\n"
        "{\"action\": \"group_result\", \"group\": \"b.ini\", \"status\": \"OK\"}\n";
    assert_int_equal(rt_errorsummary_add(&es, failing_unfinished, strlen(failing_unfinished)),
                     RT_OK);
    assert_string_equal(rt_errorsummary_incomplete_why(&es), "group-without-result");
    rt_errorsummary_free(&es);

    /* Both results: complete, a test failure. */
    const char *whole =
        "{\"action\": \"test_groups\", \"groups\": [\"a.ini\", \"b.ini\"]}\n"
        "{\"action\": \"test_result\", \"test\": \"a/t1.js\", \"group\": \"a.ini\", "
        "\"status\": \"FAIL\", \"expected\": \"PASS\"}\n"
        "{\"action\": \"group_result\", \"group\": \"a.ini\", \"status\": \"ERROR\"}\n"
        "{\"action\": \"group_result\", \"group\": \"b.ini\", \"status\": \"OK\"}\n";
    assert_int_equal(rt_errorsummary_add(&es, whole, strlen(whole)), RT_OK);
    assert_int_equal(rt_errorsummary_classify(&es, &reason), RT_ES_TEST_FAILURE);
    /* ...until an empty artifact of the same run comes along. */
    assert_int_equal(rt_errorsummary_add(&es, "", 0), RT_OK);
    assert_int_equal(rt_errorsummary_classify(&es, &reason), RT_ES_INFRA);
    assert_string_equal(rt_errorsummary_incomplete_why(&es), "no-test-groups");
    assert_int_equal(es.artifacts_without_groups, 1);
    rt_errorsummary_free(&es);

    /* An empty file alone is incomplete, not "complete, no-test-failure". */
    assert_int_equal(rt_errorsummary_add(&es, "\n", 1), RT_OK);
    assert_int_equal(rt_errorsummary_classify(&es, &reason), RT_ES_INFRA);
    assert_string_equal(rt_errorsummary_incomplete_why(&es), "no-test-groups");
    rt_errorsummary_free(&es);
}

/* Issue 17, item 6: mozlog leaves `expected` out when the status was the expected one. */
static void test_a_result_without_expected_is_an_expected_result(void **state)
{
    (void)state;
    const char *text = "{\"action\": \"test_groups\", \"groups\": [\"a.ini\"]}\n"
                       "{\"action\": \"test_result\", \"test\": \"a/ok.js\", \"group\": \"a.ini\", "
                       "\"status\": \"OK\"}\n"
                       "{\"action\": \"test_status\", \"test\": \"a/ok.js\", \"subtest\": \"s\", "
                       "\"group\": \"a.ini\", \"status\": \"FAIL\"}\n"
                       "{\"action\": \"group_result\", \"group\": \"a.ini\", \"status\": \"OK\"}\n";
    rt_errorsummary es = {0};
    assert_int_equal(rt_errorsummary_add(&es, text, strlen(text)), RT_OK);
    const char *reason = NULL;
    assert_int_equal(rt_errorsummary_classify(&es, &reason), RT_ES_PASS);
    assert_int_equal(es.nfailures, 0);
    rt_errorsummary_free(&es);
    /* With `expected` present and different, the same status lines are failures. */
    const char *failing =
        "{\"action\": \"test_groups\", \"groups\": [\"a.ini\"]}\n"
        "{\"action\": \"test_result\", \"test\": \"a/ok.js\", \"group\": \"a.ini\", "
        "\"status\": \"OK\", \"expected\": \"ERROR\"}\n"
        "{\"action\": \"test_status\", \"test\": \"a/ok.js\", \"subtest\": \"s\", "
        "\"group\": \"a.ini\", \"status\": \"FAIL\", \"expected\": \"PASS\"}\n"
        "{\"action\": \"group_result\", \"group\": \"a.ini\", \"status\": \"ERROR\"}\n";
    assert_int_equal(rt_errorsummary_add(&es, failing, strlen(failing)), RT_OK);
    assert_int_equal(rt_errorsummary_classify(&es, &reason), RT_ES_TEST_FAILURE);
    assert_int_equal(es.nfailures, 2);
    assert_string_equal(es.failures[0].expected, "ERROR");
    assert_string_equal(es.failures[1].subtest, "s");
    rt_errorsummary_free(&es);
}

static void test_truncated_last_line_is_incomplete(void **state)
{
    (void)state;
    size_t len = 0;
    char *text = rt_test_read_file(
        rt_test_fixture("errorsummary/mochitest-browser-chrome_errorsummary.log"), &len);
    rt_errorsummary es = {0};
    assert_int_equal(rt_errorsummary_add(&es, text, len - 40), RT_OK); /* cut mid-line */
    const char *reason = NULL;
    assert_int_equal(rt_errorsummary_classify(&es, &reason), RT_ES_INFRA);
    assert_string_equal(reason, "incomplete-errorsummary");
    assert_int_equal(es.bad_lines, 1);
    rt_errorsummary_free(&es);
    free(text);
}

static void test_groups_listed_but_none_finished_is_incomplete(void **state)
{
    (void)state;
    size_t len = 0;
    char *text = rt_test_read_file(
        rt_test_fixture("errorsummary/mochitest-browser-chrome_errorsummary.log"), &len);
    /* Keep only the test_groups line and the test_result lines: no group_result at all. */
    char *cut = strstr(text, "\"action\": \"group_result\"");
    assert_non_null(cut);
    while (cut > text && cut[-1] != '\n') cut--;
    rt_errorsummary es = {0};
    assert_int_equal(rt_errorsummary_add(&es, text, (size_t)(cut - text)), RT_OK);
    const char *reason = NULL;
    assert_int_equal(rt_errorsummary_classify(&es, &reason), RT_ES_INFRA);
    assert_string_equal(reason, "incomplete-errorsummary");
    rt_errorsummary_free(&es);
    free(text);
}

static void test_no_artifact_is_no_errorsummary(void **state)
{
    (void)state;
    rt_errorsummary es = {0};
    const char *reason = NULL;
    assert_int_equal(rt_errorsummary_classify(&es, &reason), RT_ES_INFRA);
    assert_string_equal(reason, "no-errorsummary");
}

static void test_known_intermittent_and_expected_statuses_are_not_failures(void **state)
{
    (void)state;
    const char *text =
        "{\"action\": \"test_groups\", \"groups\": [\"a.ini\"]}\n"
        "{\"action\": \"test_result\", \"test\": \"t1\", \"group\": \"a.ini\", \"status\": "
        "\"FAIL\", \"expected\": \"PASS\", \"known_intermittent\": [\"FAIL\"]}\n"
        "{\"action\": \"test_result\", \"test\": \"t2\", \"group\": \"a.ini\", \"status\": "
        "\"FAIL\", \"expected\": \"FAIL\"}\n"
        "{\"action\": \"log\", \"level\": \"ERROR\", \"message\": \"noise\"}\n"
        "{\"action\": \"group_result\", \"group\": \"a.ini\", \"status\": \"OK\"}\n";
    rt_errorsummary es = {0};
    assert_int_equal(rt_errorsummary_add(&es, text, strlen(text)), RT_OK);
    const char *reason = NULL;
    assert_int_equal(rt_errorsummary_classify(&es, &reason), RT_ES_PASS);
    rt_errorsummary_free(&es);
}

static void test_crash_counts_as_failure_and_wrong_types_are_bad_lines(void **state)
{
    (void)state;
    const char *text =
        "{\"action\": \"test_groups\", \"groups\": [\"a.ini\", 7]}\n"
        "{\"action\": \"crash\", \"test\": \"t1\", \"group\": \"a.ini\", \"signature\": \"@ "
        "mozalloc_abort\"}\n"
        "{\"action\": \"group_result\", \"group\": \"a.ini\", \"status\": \"CRASH\"}\n";
    rt_errorsummary es = {0};
    assert_int_equal(rt_errorsummary_add(&es, text, strlen(text)), RT_OK);
    const char *reason = NULL;
    assert_int_equal(rt_errorsummary_classify(&es, &reason), RT_ES_TEST_FAILURE);
    assert_int_equal(es.crashes, 1);
    assert_string_equal(es.failures[0].status, "CRASH");
    rt_errorsummary_free(&es);

    const char *bad =
        "{\"action\": \"group_result\", \"group\": 5, \"status\": \"OK\"}\n[1,2]\nnot json\n";
    assert_int_equal(rt_errorsummary_add(&es, bad, strlen(bad)), RT_OK);
    assert_int_equal(es.bad_lines, 3);
    assert_false(rt_errorsummary_complete(&es));
    rt_errorsummary_free(&es);
}

static void test_failures_beyond_the_cap_are_counted_not_kept(void **state)
{
    (void)state;
    rt_errorsummary es = {0};
    const char *head =
        "{\"action\": \"test_groups\", \"groups\": [\"g.ini\"]}\n"
        "{\"action\": \"group_result\", \"group\": \"g.ini\", \"status\": \"ERROR\"}\n";
    assert_int_equal(rt_errorsummary_add(&es, head, strlen(head)), RT_OK);
    const char *line = "{\"action\": \"test_groups\", \"groups\": [\"g.ini\"]}\n"
                       "{\"action\": \"test_result\", \"test\": \"t\", \"group\": \"g.ini\", "
                       "\"status\": \"FAIL\", \"expected\": \"PASS\"}\n";
    for (int i = 0; i < RT_ES_MAX_FAILURES + 10; i++)
        assert_int_equal(rt_errorsummary_add(&es, line, strlen(line)), RT_OK);
    assert_int_equal(es.nfailures, RT_ES_MAX_FAILURES);
    assert_int_equal(es.failures_dropped, 10);
    const char *reason = NULL;
    assert_int_equal(rt_errorsummary_classify(&es, &reason), RT_ES_TEST_FAILURE);
    rt_errorsummary_free(&es);
}

/* mozlog's own test outputs and what its formatter writes for the events its tests leave
 * out (tests/fixtures/errorsummary/mozlog/, README there). Issue 30. */
static rt_es_kind classify_files(rt_errorsummary *es, const char **reason, const char *first,
                                 const char *second)
{
    char path[256];
    const char *names[] = {first, second};
    memset(es, 0, sizeof *es);
    for (size_t i = 0; i < 2 && names[i]; i++) {
        snprintf(path, sizeof path, "errorsummary/mozlog/%s.log", names[i]);
        size_t len = 0;
        char *text = rt_test_read_file(rt_test_fixture(path), &len);
        assert_int_equal(rt_errorsummary_add(es, text, len), RT_OK);
        free(text);
    }
    return rt_errorsummary_classify(es, reason);
}

static size_t failing_groups(const rt_errorsummary *es)
{
    size_t n = 0;
    for (size_t i = 0; i < es->ngroups; i++)
        if (rt_errorsummary_group_failed(es, &es->groups[i])) n++;
    return n;
}

/* A shutdown failure is a log line with a status: a failure, even when its group is []
 * and every group_result is OK. */
static void test_shutdown_failure_is_a_failure_even_when_every_group_is_ok(void **state)
{
    (void)state;
    rt_errorsummary es;
    const char *reason = NULL;
    assert_int_equal(classify_files(&es, &reason, "shutdown_failure_unknown_group", NULL),
                     RT_ES_TEST_FAILURE);
    assert_string_equal(reason, "test-failure");
    assert_true(rt_errorsummary_complete(&es));
    assert_int_equal(failing_groups(&es), 0);
    assert_int_equal(es.nfailures, 1);
    assert_string_equal(es.failures[0].test, "dom/tests/mochitest/leaks/mochitest.ini");
    assert_string_equal(es.failures[0].status, "FAIL");
    assert_string_equal(es.failures[0].group, "");
    assert_non_null(strstr(es.failures[0].message, "bytes leaked"));
    assert_false(es.failures[0].of_group);
    assert_false(es.harness_failure); /* the product's shutdown, not the harness */
    rt_errorsummary_free(&es);

    /* Of a known group: listed once (the line), the group FAIL. */
    assert_int_equal(classify_files(&es, &reason, "shutdown_failure_known_group", NULL),
                     RT_ES_TEST_FAILURE);
    assert_int_equal(es.nfailures, 1);
    assert_string_equal(es.failures[0].group, "manifestA");
    assert_false(es.failures[0].of_group);
    assert_int_equal(failing_groups(&es), 1);
    rt_errorsummary_free(&es);

    /* A log line with only a level and a message judges nothing. */
    assert_int_equal(classify_files(&es, &reason, "log_error", NULL), RT_ES_PASS);
    assert_int_equal(es.bad_lines, 0);
    rt_errorsummary_free(&es);
}

/* mozlog marks a group PASS after a crash the test expected, OK when a later test passed:
 * such a crash is no failure. In a group that ended otherwise, or with no result, it is. */
static void test_crash_in_a_group_that_ended_ok_or_pass_is_expected(void **state)
{
    (void)state;
    rt_errorsummary es;
    const char *reason = NULL;
    assert_int_equal(classify_files(&es, &reason, "expected_crash", NULL), RT_ES_PASS);
    assert_int_equal(es.crashes, 1);
    assert_int_equal(es.nfailures, 0);
    assert_int_equal(failing_groups(&es), 0);
    rt_errorsummary_free(&es);

    const char *pass =
        "{\"action\": \"test_groups\", \"groups\": [\"a.ini\"]}\n"
        "{\"action\": \"crash\", \"test\": \"a/t.js\", \"group\": \"a.ini\", "
        "\"signature\": \"@ abort\"}\n"
        "{\"action\": \"group_result\", \"group\": \"a.ini\", \"status\": \"PASS\"}\n";
    assert_int_equal(rt_errorsummary_add(&es, pass, strlen(pass)), RT_OK);
    assert_int_equal(rt_errorsummary_classify(&es, &reason), RT_ES_PASS);
    assert_int_equal(es.nfailures, 0);
    rt_errorsummary_free(&es);

    assert_int_equal(classify_files(&es, &reason, "assertion_crash_on_shutdown", NULL),
                     RT_ES_TEST_FAILURE);
    assert_int_equal(es.nfailures, 1);
    assert_string_equal(es.failures[0].status, "CRASH");
    assert_string_equal(es.failures[0].test, "manifestA");
    assert_false(es.failures[0].of_group); /* the crash is the group's failure */
    rt_errorsummary_free(&es);

    /* Without its group's result the crash is unexpected, and the group unfinished. */
    assert_int_equal(
        rt_errorsummary_add(&es, pass, strstr(pass, "{\"action\": \"group_result") - pass), RT_OK);
    assert_int_equal(es.nfailures, 1);
    assert_true(rt_errorsummary_group_failed(&es, &es.groups[0]));
    assert_true(rt_errorsummary_group_unfinished(&es.groups[0]));
    assert_false(rt_errorsummary_complete(&es));
    rt_errorsummary_free(&es);
}

/* A crash line with `test: null` and nothing else run: the product crashed at start-up. */
static void test_crash_before_any_test_is_a_product_crash(void **state)
{
    (void)state;
    rt_errorsummary es;
    const char *reason = NULL;
    assert_int_equal(classify_files(&es, &reason, "crash_before_tests", NULL), RT_ES_PRODUCT_CRASH);
    assert_string_equal(reason, "crash-before-tests");
    assert_string_equal(rt_es_kind_name(RT_ES_PRODUCT_CRASH), "product-crash");
    assert_true(rt_errorsummary_crashed_before_tests(&es));
    assert_int_equal(es.nfailures, 1);
    assert_string_equal(es.failures[0].test, "");
    assert_string_equal(es.failures[0].message, "@ libxul.so + 0x2d4e1c0");
    rt_errorsummary_free(&es);

    /* After a test ran (and a group ended), it is a crash among others: not before tests. */
    assert_int_equal(classify_files(&es, &reason, "crash_before_tests", "fail_expected_fail"),
                     RT_ES_TEST_FAILURE);
    assert_false(rt_errorsummary_crashed_before_tests(&es));
    rt_errorsummary_free(&es);
    /* Cut short, it proves nothing: infra. */
    size_t len = 0;
    char *text =
        rt_test_read_file(rt_test_fixture("errorsummary/mozlog/crash_before_tests.log"), &len);
    assert_int_equal(rt_errorsummary_add(&es, text, len - 10), RT_OK);
    assert_int_equal(rt_errorsummary_classify(&es, &reason), RT_ES_INFRA);
    free(text);
    rt_errorsummary_free(&es);
}

/* `"status": null`: a test of the group started and never ended (mozlog's
 * missing_test_end). Not a garbled line: a group that did not end well, listed. */
static void test_null_group_result_is_an_unfinished_failing_group(void **state)
{
    (void)state;
    rt_errorsummary es;
    const char *reason = NULL;
    assert_int_equal(classify_files(&es, &reason, "missing_test_end", NULL), RT_ES_TEST_FAILURE);
    assert_int_equal(es.bad_lines, 0);
    assert_true(rt_errorsummary_complete(&es));
    assert_string_equal(es.groups[0].status, RT_ES_STATUS_UNFINISHED);
    assert_int_equal(es.nfailures, 1);
    assert_string_equal(es.failures[0].test, "manifest");
    assert_string_equal(es.failures[0].status, RT_ES_STATUS_UNFINISHED);
    assert_true(es.failures[0].of_group);
    rt_errorsummary_free(&es);
}

/* A group that ended FAIL or ERROR with no failure line of its own is listed as a failure
 * (test: the group), so that a failing run always names what failed. */
static void test_failing_group_without_failure_lines_is_listed(void **state)
{
    (void)state;
    const char *text =
        "{\"action\": \"test_groups\", \"groups\": [\"a.ini\", \"b.ini\"]}\n"
        "{\"action\": \"group_result\", \"group\": \"a.ini\", \"status\": \"FAIL\"}\n"
        "{\"action\": \"group_result\", \"group\": \"b.ini\", \"status\": \"OK\"}\n";
    rt_errorsummary es = {0};
    assert_int_equal(rt_errorsummary_add(&es, text, strlen(text)), RT_OK);
    const char *reason = NULL;
    assert_int_equal(rt_errorsummary_classify(&es, &reason), RT_ES_TEST_FAILURE);
    assert_int_equal(es.nfailures, 1);
    assert_string_equal(es.failures[0].test, "a.ini");
    assert_string_equal(es.failures[0].group, "a.ini");
    assert_string_equal(es.failures[0].status, "FAIL");
    assert_true(es.failures[0].of_group);
    /* A later artifact with a failing test of the group: the test replaces the group's entry. */
    const char *more =
        "{\"action\": \"test_groups\", \"groups\": [\"a.ini\"]}\n"
        "{\"action\": \"test_result\", \"test\": \"a/t.js\", \"group\": \"a.ini\", "
        "\"status\": \"FAIL\", \"expected\": \"PASS\"}\n"
        "{\"action\": \"group_result\", \"group\": \"a.ini\", \"status\": \"ERROR\"}\n";
    assert_int_equal(rt_errorsummary_add(&es, more, strlen(more)), RT_OK);
    assert_int_equal(es.nfailures, 1);
    assert_string_equal(es.failures[0].test, "a/t.js");
    assert_false(es.failures[0].of_group);
    assert_string_equal(es.groups[0].status, "ERROR");
    rt_errorsummary_free(&es);
}

/* Artifacts of one run: the worst group_result of a group wins, in any order. */
static void test_worst_group_result_wins_across_artifacts(void **state)
{
    (void)state;
    static const struct {
        const char *first, *second, *worst;
    } cases[] = {
        {"ERROR", "OK", "ERROR"},
        {"OK", "ERROR", "ERROR"},
        {"OK", "SKIP", "OK"},
        {"SKIP", "OK", "OK"},
        {"PASS", "FAIL", "FAIL"},
        {"FAIL", "ERROR", "ERROR"},
        {"null", "OK", RT_ES_STATUS_UNFINISHED},
        {"FAIL", "null", "FAIL"},
        {"TIMEOUT", "OK", "TIMEOUT"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rt_errorsummary es = {0};
        const char *statuses[] = {cases[i].first, cases[i].second};
        for (size_t k = 0; k < 2; k++) {
            char text[256];
            bool null = !strcmp(statuses[k], "null");
            snprintf(text, sizeof text,
                     "{\"action\": \"test_groups\", \"groups\": [\"a.ini\"]}\n"
                     "{\"action\": \"group_result\", \"group\": \"a.ini\", \"status\": %s%s%s}\n",
                     null ? "" : "\"", statuses[k], null ? "" : "\"");
            assert_int_equal(rt_errorsummary_add(&es, text, strlen(text)), RT_OK);
        }
        assert_string_equal(es.groups[0].status, cases[i].worst);
        const char *reason = NULL;
        bool ok = !strcmp(cases[i].worst, "OK") || !strcmp(cases[i].worst, "SKIP");
        assert_int_equal(rt_errorsummary_classify(&es, &reason),
                         ok ? RT_ES_PASS : RT_ES_TEST_FAILURE);
        rt_errorsummary_free(&es);
    }

    /* mozlog's chunks: a crash in a group that ended ERROR in one artifact and OK in the
     * other is unexpected, whichever came last. */
    for (int order = 0; order < 2; order++) {
        rt_errorsummary es;
        const char *reason = NULL;
        assert_int_equal(
            classify_files(&es, &reason,
                           order ? "fail_expected_fail" : "assertion_crash_on_shutdown",
                           order ? "assertion_crash_on_shutdown" : "fail_expected_fail"),
            RT_ES_TEST_FAILURE);
        assert_int_equal(es.nfailures, 1);
        assert_string_equal(es.failures[0].status, "CRASH");
        rt_errorsummary_free(&es);
    }
}

/* mozlog's own test cases (testing/mozbase/mozlog/tests/test_errorsummary.py), each with
 * the verdict its lines mean. */
static void test_mozlog_test_outputs_get_their_verdicts(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        rt_es_kind kind;
        size_t failures;
    } cases[] = {
        {"basic", RT_ES_TEST_FAILURE, 1},
        {"missing_test_end", RT_ES_TEST_FAILURE, 1},
        {"crash_and_group_status", RT_ES_TEST_FAILURE, 1},
        {"fail_expected_fail", RT_ES_PASS, 0},
        {"timeout_and_crash", RT_ES_TEST_FAILURE, 3},
        {"crash_expected_crash", RT_ES_PASS, 0},
        {"assertion_crash_on_shutdown", RT_ES_TEST_FAILURE, 1},
        {"timeout_no_group_status", RT_ES_INFRA, 1},
        {"group_start_end_duration", RT_ES_TEST_FAILURE, 1},
        {"group_start_end_all_skipped", RT_ES_PASS, 0},
        {"non_manifest_group_names_ignored", RT_ES_PASS, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rt_errorsummary es;
        const char *reason = NULL;
        assert_int_equal(classify_files(&es, &reason, cases[i].name, NULL), cases[i].kind);
        assert_int_equal(es.nfailures, cases[i].failures);
        assert_int_equal(es.bad_lines, 0);
        rt_errorsummary_free(&es);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mochitest_failures_are_a_test_failure_with_their_groups),
        cmocka_unit_test(test_harness_timeout_outside_any_group_is_infra),
        cmocka_unit_test(test_all_groups_ok_is_a_pass),
        cmocka_unit_test(test_single_failure_line_without_groups_is_incomplete),
        cmocka_unit_test(test_a_listed_group_without_its_result_is_incomplete),
        cmocka_unit_test(test_a_result_without_expected_is_an_expected_result),
        cmocka_unit_test(test_truncated_last_line_is_incomplete),
        cmocka_unit_test(test_groups_listed_but_none_finished_is_incomplete),
        cmocka_unit_test(test_no_artifact_is_no_errorsummary),
        cmocka_unit_test(test_known_intermittent_and_expected_statuses_are_not_failures),
        cmocka_unit_test(test_crash_counts_as_failure_and_wrong_types_are_bad_lines),
        cmocka_unit_test(test_failures_beyond_the_cap_are_counted_not_kept),
        cmocka_unit_test(test_shutdown_failure_is_a_failure_even_when_every_group_is_ok),
        cmocka_unit_test(test_crash_in_a_group_that_ended_ok_or_pass_is_expected),
        cmocka_unit_test(test_crash_before_any_test_is_a_product_crash),
        cmocka_unit_test(test_null_group_result_is_an_unfinished_failing_group),
        cmocka_unit_test(test_failing_group_without_failure_lines_is_listed),
        cmocka_unit_test(test_worst_group_result_wins_across_artifacts),
        cmocka_unit_test(test_mozlog_test_outputs_get_their_verdicts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
