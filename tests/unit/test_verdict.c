/* SPDX-License-Identifier: MPL-2.0 */
/* test_verdict.c - regression or intermittent, table-driven over the failure lines of the
 * recorded bug_suggestions fixture: early decisions, pending runs, exceptions, runs
 * without data, thresholds 1, 2 and 3, and the worker's undecided reasons. */
#include "support/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/bugsug.h"
#include "common/core/verdict.h"
#include "verdict_cases.h"

/* The fixture's four TEST-UNEXPECTED lines: the original run. */
static rt_bugsug original;
/* The same lines as a retrigger would report them: other pids and durations appended, so
 * that reproduction goes through the normaliser, not through byte-equal input. */
static rt_failure_line variant[4];

static int setup(void **state)
{
    (void)state;
    size_t len;
    char *text = rt_test_read_file(rt_test_fixture("treeherder/bug_suggestions.json"), &len);
    char errstr[RT_ERRSTR_SIZE];
    int rc = rt_bugsug_parse(text, len, NULL, &original, errstr);
    free(text);
    if (rc != RT_OK || original.nlines != 4) return -1;
    for (size_t i = 0; i < 4; i++) {
        char line[1024];
        snprintf(line, sizeof line, "%s", original.lines[i].signature);
        /* A retrigger's line differs only in harness noise. */
        char noisy[1100];
        snprintf(noisy, sizeof noisy, "12:00:0%zu     INFO - GECKO(%zu) | %s", i, 1000 + i, line);
        if (rt_failure_line_parse(noisy, strlen(noisy), &variant[i]) != RT_OK) return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    rt_bugsug_free(&original);
    for (size_t i = 0; i < 4; i++) rt_failure_line_free(&variant[i]);
    return 0;
}

static void run_case(const verdict_case *c)
{
    rt_failure_line unrelated;
    const char *other = "TEST-UNEXPECTED-FAIL | dom/other/test_unrelated.html | something else";
    assert_int_equal(rt_failure_line_parse(other, strlen(other), &unrelated), RT_OK);
    rt_failure_line lines[MAX_CASE_RUNS][5];
    rt_verdict_run runs[MAX_CASE_RUNS];
    for (size_t r = 0; r < c->nruns; r++) {
        size_t n = 0;
        for (size_t i = 0; i < 4; i++)
            if (c->runs[r].mask & (1u << i)) lines[r][n++] = variant[i];
        if (c->runs[r].mask & 0x10) lines[r][n++] = unrelated;
        rt_run_state state = c->runs[r].state == 'P'   ? RT_RUN_PENDING
                             : c->runs[r].state == 'S' ? RT_RUN_PASSED
                             : c->runs[r].state == 'F' ? RT_RUN_FAILED
                             : c->runs[r].state == 'X' ? RT_RUN_EXCEPTION
                                                       : RT_RUN_NO_DATA;
        runs[r] = (rt_verdict_run){.state = state, .lines = lines[r], .nlines = n};
    }
    bool tracked[4];
    for (size_t i = 0; i < 4; i++) tracked[i] = (c->tracked >> i) & 1;
    rt_verdict_input in = {.original = original.lines,
                           .noriginal = c->noriginal,
                           .original_tracked = tracked,
                           .runs = runs,
                           .nruns = c->nruns,
                           .threshold = c->threshold};
    rt_verdict_result out;
    assert_int_equal(rt_verdict_decide(&in, &out), RT_OK);
    if (out.verdict != c->verdict || strcmp(out.reason, c->reason) != 0)
        fail_msg("%s: got %s/%s, expected %s/%s", c->name, rt_verdict_name(out.verdict), out.reason,
                 rt_verdict_name(c->verdict), c->reason);
    for (size_t i = 0; i < c->noriginal; i++)
        if (out.reproduced[i] != c->reproduced[i])
            fail_msg("%s: line %zu reproduced %zu times, expected %zu", c->name, i,
                     out.reproduced[i], c->reproduced[i]);
    /* Which retriggers count: passed and failed runs give evidence; a run reproduces when it
     * shares one of the original's lines. */
    for (size_t r = 0; r < c->nruns; r++) {
        bool counts = c->runs[r].state == 'S' || c->runs[r].state == 'F';
        bool reproduces = c->runs[r].state == 'F' && c->noriginal > 0 &&
                          (c->runs[r].mask & ((1u << c->noriginal) - 1)) != 0;
        assert_int_equal(out.run_counts[r], counts);
        assert_int_equal(out.run_reproduced[r], reproduces);
    }
    if (c->verdict == RT_VERDICT_REGRESSION)
        assert_true(out.regression_line >= 0);
    else
        assert_int_equal(out.regression_line, -1);
    rt_failure_line_free(&unrelated);
}

static void test_verdict_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof verdict_cases / sizeof verdict_cases[0]; i++)
        run_case(&verdict_cases[i]);
}

/* Feeding the runs of "every retrigger reproduces" one by one, as they finish: the verdict
 * is not-yet after the first and regression exactly when the second arrives. */
static void test_regression_is_decided_when_the_second_reproduction_arrives(void **state)
{
    (void)state;
    rt_verdict_run runs[5];
    for (size_t r = 0; r < 5; r++) runs[r] = (rt_verdict_run){.state = RT_RUN_PENDING};
    rt_verdict_input in = {.original = original.lines,
                           .noriginal = 4,
                           .runs = runs,
                           .nruns = 5,
                           .threshold = RT_VERDICT_DEFAULT_THRESHOLD};
    rt_verdict_result out;
    assert_int_equal(rt_verdict_decide(&in, &out), RT_OK);
    assert_int_equal(out.verdict, RT_VERDICT_NOT_YET);
    assert_int_equal(out.pending, 5);
    for (size_t r = 0; r < 2; r++) {
        runs[r] = (rt_verdict_run){.state = RT_RUN_FAILED, .lines = variant, .nlines = 4};
        assert_int_equal(rt_verdict_decide(&in, &out), RT_OK);
        assert_int_equal(out.verdict, r == 0 ? RT_VERDICT_NOT_YET : RT_VERDICT_REGRESSION);
    }
    assert_int_equal(out.regression_line, 0);
    assert_int_equal(out.pending, 3);
    assert_int_equal(out.failed, 2);
}

static void test_invalid_input_is_rejected_as_undecided(void **state)
{
    (void)state;
    rt_verdict_run runs[RT_VERDICT_MAX_RUNS + 1];
    memset(runs, 0, sizeof runs);
    rt_verdict_input in = {
        .original = original.lines, .noriginal = 4, .runs = runs, .nruns = 1, .threshold = 0};
    rt_verdict_result out;
    assert_int_equal(rt_verdict_decide(&in, &out), RT_EINVAL);
    assert_int_equal(out.verdict, RT_VERDICT_UNDECIDED);
    assert_string_equal(out.reason, "invalid-input");
    in.threshold = 2;
    in.nruns = RT_VERDICT_MAX_RUNS + 1;
    assert_int_equal(rt_verdict_decide(&in, &out), RT_EINVAL);
    in.nruns = 1;
    in.noriginal = RT_VERDICT_MAX_LINES + 1;
    assert_int_equal(rt_verdict_decide(&in, &out), RT_EINVAL);
    in.noriginal = 4;
    runs[0] = (rt_verdict_run){.state = RT_RUN_FAILED, .lines = NULL, .nlines = 2};
    assert_int_equal(rt_verdict_decide(&in, &out), RT_EINVAL);
    runs[0] = (rt_verdict_run){.state = (rt_run_state)42};
    assert_int_equal(rt_verdict_decide(&in, &out), RT_EINVAL);
}

static void test_undecided_carries_the_workers_reason(void **state)
{
    (void)state;
    static const char *const reasons[] = {
        RT_UNDECIDED_LOGS_NOT_PARSED, RT_UNDECIDED_JOB_NOT_INGESTED, RT_UNDECIDED_UPSTREAM_ERROR};
    rt_verdict_result out;
    for (size_t i = 0; i < 3; i++) {
        memset(&out, 0x5a, sizeof out);
        rt_verdict_undecided(&out, reasons[i]);
        assert_int_equal(out.verdict, RT_VERDICT_UNDECIDED);
        assert_string_equal(out.reason, reasons[i]);
        assert_int_equal(out.reproduced[0], 0);
        assert_int_equal(out.regression_line, -1);
    }
    char long_reason[200];
    memset(long_reason, 'r', sizeof long_reason - 1);
    long_reason[sizeof long_reason - 1] = '\0';
    rt_verdict_undecided(&out, long_reason);
    assert_int_equal(strlen(out.reason), RT_VERDICT_REASON_SIZE - 1);
    rt_verdict_undecided(&out, NULL);
    assert_string_equal(out.reason, "unknown");
    assert_string_equal(rt_verdict_name(RT_VERDICT_REGRESSION), "regression");
    assert_string_equal(rt_verdict_name(RT_VERDICT_NOT_YET), "not-yet");
    assert_string_equal(rt_run_state_name(RT_RUN_NO_DATA), "no-data");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_verdict_table),
        cmocka_unit_test(test_regression_is_decided_when_the_second_reproduction_arrives),
        cmocka_unit_test(test_invalid_input_is_rejected_as_undecided),
        cmocka_unit_test(test_undecided_carries_the_workers_reason),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
