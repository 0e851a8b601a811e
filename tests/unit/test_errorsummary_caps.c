/* SPDX-License-Identifier: MPL-2.0 */
/* test_errorsummary_caps.c - the errorsummary size caps (common/core/errorsummary.h): a line
 * over RT_ES_MAX_LINE_BYTES and more than RT_ES_MAX_LINES lines (all artifacts of a run
 * together) make the summary incomplete, so a run is never judged on partial data. */
#include "support/util.h"

#include <stdlib.h>
#include <string.h>

#include "common/core/errorsummary.h"

#define FAIL_LINE                                                                                  \
    "{\"action\":\"test_result\",\"test\":\"browser_a.js\",\"status\":\"FAIL\","                   \
    "\"expected\":\"PASS\",\"group\":\"dom/a\",\"message\":\"boom\"}\n"
#define LOG_LINE "{\"action\":\"log\",\"level\":\"INFO\",\"message\":\"x\"}\n"

/* A "log" JSON line of exactly `bytes` bytes before its newline. */
static char *log_line_of(size_t bytes)
{
    static const char head[] = "{\"action\":\"log\",\"message\":\"", tail[] = "\"}";
    assert_true(bytes > sizeof head + sizeof tail);
    char *s = malloc(bytes + 2);
    assert_non_null(s);
    size_t pad = bytes - (sizeof head - 1) - (sizeof tail - 1);
    memcpy(s, head, sizeof head - 1);
    memset(s + sizeof head - 1, 'x', pad);
    memcpy(s + sizeof head - 1 + pad, tail, sizeof tail - 1);
    s[bytes] = '\n';
    s[bytes + 1] = '\0';
    return s;
}

/* `count` log lines in one text. */
static char *log_lines(size_t count, size_t *len)
{
    size_t one = sizeof LOG_LINE - 1;
    char *s = malloc(count * one + 1);
    assert_non_null(s);
    for (size_t i = 0; i < count; i++) memcpy(s + i * one, LOG_LINE, one);
    s[count * one] = '\0';
    *len = count * one;
    return s;
}

static void test_line_of_exactly_the_cap_is_parsed(void **state)
{
    (void)state;
    rt_errorsummary es = {0};
    char *big = log_line_of(RT_ES_MAX_LINE_BYTES);
    assert_int_equal(rt_errorsummary_add(&es, FAIL_LINE, strlen(FAIL_LINE)), RT_OK);
    assert_int_equal(rt_errorsummary_add(&es, big, strlen(big)), RT_OK);
    assert_false(es.too_big);
    assert_int_equal(es.bad_lines, 0);
    assert_int_equal(es.nfailures, 1);
    /* Incomplete only because these artifacts have no test_groups line, not for size. */
    assert_string_equal(rt_errorsummary_incomplete_why(&es), "no-test-groups");
    free(big);
    rt_errorsummary_free(&es);
}

static void test_line_over_the_cap_makes_the_summary_incomplete_not_a_test_failure(void **state)
{
    (void)state;
    rt_errorsummary es = {0};
    char *big = log_line_of(RT_ES_MAX_LINE_BYTES + 1);
    assert_int_equal(rt_errorsummary_add(&es, FAIL_LINE, strlen(FAIL_LINE)), RT_OK);
    assert_int_equal(rt_errorsummary_add(&es, big, strlen(big)), RT_OK);
    assert_true(es.too_big);
    assert_false(rt_errorsummary_complete(&es));
    const char *reason = NULL;
    assert_int_equal(rt_errorsummary_classify(&es, &reason), RT_ES_INFRA);
    assert_string_equal(reason, "incomplete-errorsummary");
    free(big);
    rt_errorsummary_free(&es);
}

static void test_lines_up_to_the_cap_across_artifacts_are_all_read(void **state)
{
    (void)state;
    rt_errorsummary es = {0};
    size_t len = 0;
    char *half = log_lines(RT_ES_MAX_LINES / 2 - 1, &len);
    assert_int_equal(rt_errorsummary_add(&es, FAIL_LINE, strlen(FAIL_LINE)), RT_OK);
    assert_int_equal(rt_errorsummary_add(&es, half, len), RT_OK);
    assert_int_equal(rt_errorsummary_add(&es, half, len), RT_OK);
    assert_int_equal(rt_errorsummary_add(&es, FAIL_LINE, strlen(FAIL_LINE)), RT_OK);
    assert_int_equal(es.lines, RT_ES_MAX_LINES);
    assert_false(es.too_big);
    assert_int_equal(es.nfailures, 2);
    assert_string_equal(rt_errorsummary_incomplete_why(&es), "no-test-groups");
    free(half);
    rt_errorsummary_free(&es);
}

static void test_one_line_over_the_line_cap_across_artifacts_makes_it_incomplete(void **state)
{
    (void)state;
    rt_errorsummary es = {0};
    size_t len = 0;
    char *half = log_lines(RT_ES_MAX_LINES / 2, &len);
    assert_int_equal(rt_errorsummary_add(&es, FAIL_LINE, strlen(FAIL_LINE)), RT_OK);
    assert_int_equal(rt_errorsummary_add(&es, half, len), RT_OK);
    assert_false(es.too_big);
    /* The second artifact brings the total to RT_ES_MAX_LINES + 1. */
    assert_int_equal(rt_errorsummary_add(&es, half, len), RT_OK);
    assert_true(es.too_big);
    /* Nothing after the cap is read: a failure there is not seen. */
    assert_int_equal(rt_errorsummary_add(&es, FAIL_LINE, strlen(FAIL_LINE)), RT_OK);
    assert_int_equal(es.nfailures, 1);
    const char *reason = NULL;
    assert_int_equal(rt_errorsummary_classify(&es, &reason), RT_ES_INFRA);
    assert_string_equal(reason, "incomplete-errorsummary");
    free(half);
    rt_errorsummary_free(&es);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_line_of_exactly_the_cap_is_parsed),
        cmocka_unit_test(test_line_over_the_cap_makes_the_summary_incomplete_not_a_test_failure),
        cmocka_unit_test(test_lines_up_to_the_cap_across_artifacts_are_all_read),
        cmocka_unit_test(test_one_line_over_the_line_cap_across_artifacts_makes_it_incomplete),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
