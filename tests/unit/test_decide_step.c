/* SPDX-License-Identifier: MPL-2.0 */
/* test_decide_step.c - retrig-decide's step after the verdict (common/core/decide_step.h)
 * and the members of a set (common/core/retrigger_set.h). */
#include "support/util.h"

#include <string.h>

#include "common/core/decide_step.h"
#include "common/core/retrigger_set.h"

static rt_verdict_result result(rt_verdict verdict, const char *reason)
{
    rt_verdict_result r;
    rt_verdict_undecided(&r, reason);
    r.verdict = verdict;
    return r;
}

static rt_decide_action step(rt_verdict verdict, const char *wait, bool deadline, int attempt,
                             rt_verdict_result *decided)
{
    rt_verdict_result r = result(verdict, "x");
    rt_decide_situation s = {&r, wait, deadline, attempt, 2};
    return rt_decide_next_step(&s, decided);
}

static void test_a_verdict_is_stored(void **state)
{
    (void)state;
    rt_verdict_result d;
    assert_int_equal(step(RT_VERDICT_REGRESSION, NULL, false, 0, &d), RT_DECIDE_STORE);
    assert_int_equal(d.verdict, RT_VERDICT_REGRESSION);
    assert_int_equal(step(RT_VERDICT_INTERMITTENT, RT_UNDECIDED_LOGS_NOT_PARSED, false, 9, &d),
                     RT_DECIDE_STORE);
}

static void test_a_late_run_is_looked_at_again_then_left_pending(void **state)
{
    (void)state;
    rt_verdict_result d;
    assert_int_equal(step(RT_VERDICT_NOT_YET, RT_UNDECIDED_LOGS_NOT_PARSED, false, 0, &d),
                     RT_DECIDE_RETRY);
    assert_int_equal(step(RT_VERDICT_NOT_YET, RT_UNDECIDED_LOGS_NOT_PARSED, false, 1, &d),
                     RT_DECIDE_RETRY);
    /* Out of delays: not undecided, left to the members' events and the deadline. */
    assert_int_equal(step(RT_VERDICT_NOT_YET, RT_UNDECIDED_LOGS_NOT_PARSED, false, 2, &d),
                     RT_DECIDE_LEAVE);
    assert_int_equal(step(RT_VERDICT_NOT_YET, NULL, false, 0, &d), RT_DECIDE_LEAVE);
}

static void test_the_deadline_ends_the_wait(void **state)
{
    (void)state;
    rt_verdict_result d;
    assert_int_equal(step(RT_VERDICT_NOT_YET, RT_UNDECIDED_LOGS_NOT_PARSED, true, 0, &d),
                     RT_DECIDE_STORE);
    assert_int_equal(d.verdict, RT_VERDICT_UNDECIDED);
    assert_string_equal(d.reason, "logs-not-parsed");
    assert_int_equal(step(RT_VERDICT_NOT_YET, NULL, true, 0, &d), RT_DECIDE_STORE);
    assert_string_equal(d.reason, RT_UNDECIDED_MISSING);
    assert_string_equal(rt_decide_action_name(RT_DECIDE_LEAVE), "leave");
}

/* Treeherder answering 5xx past the deadline used to leave the set open for good (the
 * sweeper asked again, forever): it is looked at again after each delay, then undecided
 * upstream-unavailable, keeping what the verdict had counted. */
static void test_an_upstream_failing_past_the_deadline_ends_undecided(void **state)
{
    (void)state;
    rt_verdict_result d;
    assert_int_equal(step(RT_VERDICT_NOT_YET, RT_UNDECIDED_UPSTREAM_ERROR, true, 0, &d),
                     RT_DECIDE_RETRY);
    assert_int_equal(step(RT_VERDICT_NOT_YET, RT_UNDECIDED_UPSTREAM_ERROR, true, 1, &d),
                     RT_DECIDE_RETRY);
    rt_verdict_result r = result(RT_VERDICT_NOT_YET, "x");
    r.passed = 2;
    r.failed = 1;
    r.pending = 1;
    r.reproduced[0] = 1;
    rt_decide_situation s = {&r, RT_UNDECIDED_UPSTREAM_ERROR, true, 2, 2};
    assert_int_equal(rt_decide_next_step(&s, &d), RT_DECIDE_STORE);
    assert_int_equal(d.verdict, RT_VERDICT_UNDECIDED);
    assert_string_equal(d.reason, "upstream-unavailable");
    assert_int_equal(d.passed, 2);
    assert_int_equal(d.failed, 1);
    assert_int_equal(d.pending, 1);
    assert_int_equal(d.reproduced[0], 1);
    /* Without delays, at once. */
    s.attempt = 0;
    s.ndelays = 0;
    assert_int_equal(rt_decide_next_step(&s, &d), RT_DECIDE_STORE);
    assert_string_equal(d.reason, "upstream-unavailable");
    /* Before the deadline an upstream error is still only waited for. */
    assert_int_equal(step(RT_VERDICT_NOT_YET, RT_UNDECIDED_UPSTREAM_ERROR, false, 2, &d),
                     RT_DECIDE_LEAVE);
}

static void test_members_and_completeness(void **state)
{
    (void)state;
    rt_member_state m;
    assert_true(rt_member_state_parse("unscheduled", &m));
    assert_int_equal(m, RT_MEMBER_PENDING);
    assert_true(rt_member_state_parse("exception", &m));
    assert_int_equal(m, RT_MEMBER_EXCEPTION);
    assert_false(rt_member_state_parse("bogus", &m));
    assert_string_equal(rt_member_state_name(RT_MEMBER_RUNNING), "running");
    assert_int_equal(rt_member_state_of_event(RT_TASK_EVENT_FAILED), RT_MEMBER_FAILED);
    assert_int_equal(rt_member_state_of_event(RT_TASK_EVENT_OTHER), RT_MEMBER_PENDING);
    assert_true(rt_member_resolved(RT_MEMBER_COMPLETED));
    assert_false(rt_member_resolved(RT_MEMBER_RUNNING));
    assert_int_equal(rt_member_run_state(RT_MEMBER_COMPLETED), RT_RUN_PASSED);
    assert_int_equal(rt_member_run_state(RT_MEMBER_FAILED), RT_RUN_FAILED);
    assert_int_equal(rt_member_run_state(RT_MEMBER_EXCEPTION), RT_RUN_EXCEPTION);
    assert_int_equal(rt_member_run_state(RT_MEMBER_RUNNING), RT_RUN_PENDING);
    /* Complete: the retriggers asked for and the runs found, all resolved. */
    assert_false(rt_set_complete(5, 0, 4));
    assert_true(rt_set_complete(5, 0, 5));
    assert_false(rt_set_complete(2, 3, 4));
    assert_true(rt_set_complete(2, 3, 5));
    assert_true(rt_set_complete(0, 5, 5)); /* asked for nothing: the found runs decide */
    assert_false(rt_set_complete(0, 5, 2));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_verdict_is_stored),
        cmocka_unit_test(test_a_late_run_is_looked_at_again_then_left_pending),
        cmocka_unit_test(test_the_deadline_ends_the_wait),
        cmocka_unit_test(test_an_upstream_failing_past_the_deadline_ends_undecided),
        cmocka_unit_test(test_members_and_completeness),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
