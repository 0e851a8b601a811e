/* SPDX-License-Identifier: MPL-2.0 */
/* test_settle.c - the at-least-once contract: what becomes of a message for each outcome and
 * attempt (common/core/settle.h). */
#include "support/util.h"

#include <string.h>

#include "common/core/settle.h"

static const int DELAYS[] = {1000, 5000, 30000};

static rt_settle_plan plan_for(rt_settle settle, const char *reason, int attempt, size_t ndelays)
{
    rt_outcome o;
    rt_outcome_set(&o, settle, "%s", reason);
    rt_settle_plan plan;
    rt_settle_plan_for(&o, attempt, DELAYS, ndelays, &plan);
    return plan;
}

static void test_ack_and_dead_letter_say_what_they_did(void **state)
{
    (void)state;
    rt_settle_plan p = plan_for(RT_SETTLE_ACK, "", 0, 3);
    assert_int_equal(p.action, RT_SETTLE_DO_ACK);
    assert_string_equal(p.metric, "acked");
    assert_false(p.pause);
    p = plan_for(RT_SETTLE_DEAD, "invalid-json", 2, 3);
    assert_int_equal(p.action, RT_SETTLE_DO_DEAD_LETTER);
    assert_string_equal(p.reason, "invalid-json");
    assert_string_equal(p.metric, "dead-lettered");
    p = plan_for(RT_SETTLE_HOLD, "", 0, 3);
    assert_int_equal(p.action, RT_SETTLE_DO_NOTHING);
}

static void test_retry_walks_the_delays_then_dead_letters(void **state)
{
    (void)state;
    for (int attempt = 0; attempt < 3; attempt++) {
        rt_settle_plan p = plan_for(RT_SETTLE_RETRY, "upstream-error: 503", attempt, 3);
        assert_int_equal(p.action, RT_SETTLE_DO_DELAY);
        assert_int_equal(p.delay_ms, DELAYS[attempt]);
        assert_int_equal(p.next_attempt, attempt + 1);
        assert_string_equal(p.metric, "retried");
    }
    rt_settle_plan p = plan_for(RT_SETTLE_RETRY, "upstream-error: 503", 3, 3);
    assert_int_equal(p.action, RT_SETTLE_DO_DEAD_LETTER);
    assert_string_equal(p.reason, "upstream-error: 503 (after 3 retries)");
    /* No delays configured: the first failure is the last. */
    p = plan_for(RT_SETTLE_RETRY, "x", 0, 0);
    assert_int_equal(p.action, RT_SETTLE_DO_DEAD_LETTER);
}

static void test_wait_never_spends_an_attempt_nor_dead_letters(void **state)
{
    (void)state;
    for (int attempt = 0; attempt < 10; attempt++) {
        rt_settle_plan p = plan_for(RT_SETTLE_WAIT, "set-busy", attempt, 3);
        assert_int_equal(p.action, RT_SETTLE_DO_DELAY);
        assert_int_equal(p.next_attempt, attempt);
        assert_int_equal(p.delay_ms, DELAYS[attempt < 3 ? attempt : 2]);
    }
    rt_settle_plan p = plan_for(RT_SETTLE_WAIT, "set-busy", 0, 0);
    assert_int_equal(p.action, RT_SETTLE_DO_REQUEUE);
    assert_true(p.pause);
}

static void test_requeue_pauses(void **state)
{
    (void)state;
    rt_settle_plan p = plan_for(RT_SETTLE_REQUEUE, "postgres: gone", 1, 3);
    assert_int_equal(p.action, RT_SETTLE_DO_REQUEUE);
    assert_true(p.pause);
    assert_string_equal(p.metric, "requeued");
}

static void test_a_long_reason_is_cut_at_a_character(void **state)
{
    (void)state;
    char reason[RT_ERRSTR_SIZE * 2];
    size_t n = 0;
    while (n + 2 < sizeof reason) {
        memcpy(reason + n, "\xc3\xa9", 2); /* é */
        n += 2;
    }
    reason[n] = '\0';
    rt_outcome o;
    rt_outcome_set(&o, RT_SETTLE_DEAD, "x%s", reason); /* odd offset: a cut would split é */
    size_t len = strlen(o.reason);
    assert_true(len < sizeof o.reason);
    assert_true(len % 2 == 1);
    assert_int_equal((unsigned char)o.reason[len - 1], 0xa9);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ack_and_dead_letter_say_what_they_did),
        cmocka_unit_test(test_retry_walks_the_delays_then_dead_letters),
        cmocka_unit_test(test_wait_never_spends_an_attempt_nor_dead_letters),
        cmocka_unit_test(test_requeue_pauses),
        cmocka_unit_test(test_a_long_reason_is_cut_at_a_character),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
