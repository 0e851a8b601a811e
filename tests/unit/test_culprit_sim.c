/* SPDX-License-Identifier: MPL-2.0 */
/* test_culprit_sim.c - the culprit search simulation (common/culprit_sim.h): the same seed
 * gives the same report and another seed another, the rows add up to the total, a plugged-in
 * classification is used, options out of range are refused, and the table is cut safely. */
#include "support/util.h"

#include <stdlib.h>
#include <string.h>

#include "common/core/culprit_sim.h"

static const rt_culprit_sim_options defaults = {.cases = 400,
                                                .seed = 1,
                                                .confidence = 0.95,
                                                .threshold = 2,
                                                .max_jobs = 120,
                                                .max_skipped = 20};

static void test_same_seed_same_report_and_rows_add_up(void **state)
{
    (void)state;
    static rt_culprit_sim_report a, b, c;
    rt_culprit_sim_options o = defaults;
    assert_int_equal(rt_culprit_sim_run(&o, &a), RT_OK);
    assert_int_equal(rt_culprit_sim_run(&o, &b), RT_OK);
    assert_memory_equal(&a, &b, sizeof a);
    o.seed = 2;
    assert_int_equal(rt_culprit_sim_run(&o, &c), RT_OK);
    assert_true(memcmp(&a.total, &c.total, sizeof a.total) != 0);

    long cases = 0, correct = 0, jobs = 0, linear = 0;
    for (size_t i = 0; i < RT_CULPRIT_SIM_WINDOWS; i++) {
        cases += a.by_window[i].cases;
        correct += a.by_window[i].correct;
        jobs += a.by_window[i].jobs;
    }
    assert_int_equal(cases, 400);
    assert_int_equal(correct, a.total.correct);
    assert_int_equal(jobs, a.total.jobs);
    cases = 0;
    for (size_t i = 0; i < RT_CULPRIT_SIM_KINDS; i++) {
        cases += a.by_kind[i].cases;
        linear += a.by_kind[i].linear_jobs;
    }
    assert_int_equal(cases, 400);
    assert_int_equal(linear, a.total.linear_jobs);
    /* The bisection bound holds once reruns of ambiguous probes are set aside, and the
     * search is right far more often than not. */
    assert_int_equal(a.total.within_bound_reruns_aside, 400);
    assert_true(a.total.within_bound <= a.total.within_bound_reruns_aside);
    assert_true(a.total.correct > 360);
    assert_true(a.total.jobs < a.total.linear_jobs);
    assert_true(a.total.jobs_max <= o.max_jobs);
}

static void test_trusting_the_first_push_is_wrong_more_often(void **state)
{
    (void)state;
    static rt_culprit_sim_report checked, trusted;
    rt_culprit_sim_options o = defaults;
    assert_int_equal(rt_culprit_sim_run(&o, &checked), RT_OK);
    o.classify = rt_culprit_sim_trust_first;
    assert_int_equal(rt_culprit_sim_run(&o, &trusted), RT_OK);
    assert_true(trusted.total.correct < checked.total.correct);
}

static void test_options_out_of_range_are_refused(void **state)
{
    (void)state;
    static rt_culprit_sim_report r;
    rt_culprit_sim_options o = defaults;
    o.cases = 0;
    assert_int_equal(rt_culprit_sim_run(&o, &r), RT_EINVAL);
    o = defaults;
    o.max_skipped = RT_CULPRIT_MAX_PUSHES - 1;
    assert_int_equal(rt_culprit_sim_run(&o, &r), RT_EINVAL);
    o = defaults;
    o.confidence = 1.0;
    assert_int_equal(rt_culprit_sim_run(&o, &r), RT_EINVAL);
    o = defaults;
    o.max_jobs = -1;
    assert_int_equal(rt_culprit_sim_run(&o, &r), RT_EINVAL);
    assert_int_equal(rt_culprit_sim_run(NULL, &r), RT_EINVAL);
}

static void test_table_is_cut_safely(void **state)
{
    (void)state;
    static rt_culprit_sim_report r;
    rt_culprit_sim_options o = defaults;
    o.cases = 200;
    assert_int_equal(rt_culprit_sim_run(&o, &r), RT_OK);
    size_t need = rt_culprit_sim_format(&r, NULL, 0);
    assert_true(need > 200);
    char *full = malloc(need + 1);
    assert_int_equal(rt_culprit_sim_format(&r, full, need + 1), need);
    assert_int_equal(strlen(full), need);
    assert_non_null(strstr(full, "| all | 200 |"));
    assert_non_null(strstr(full, "| skipped pushes C | cases | correct"));
    char small[40];
    memset(small, 'x', sizeof small);
    assert_int_equal(rt_culprit_sim_format(&r, small, sizeof small), need);
    assert_int_equal(strlen(small), sizeof small - 1);
    assert_memory_equal(small, full, sizeof small - 1);
    free(full);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_seed_same_report_and_rows_add_up),
        cmocka_unit_test(test_trusting_the_first_push_is_wrong_more_often),
        cmocka_unit_test(test_options_out_of_range_are_refused),
        cmocka_unit_test(test_table_is_cut_safely),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
