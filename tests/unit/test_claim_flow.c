/* SPDX-License-Identifier: MPL-2.0 */
/* test_claim_flow.c - the budget claim of a retrigger set, step by step: each outcome and
 * each failure order (Redis down, exhausted, the set owned elsewhere, the ledger backstop
 * cutting or refusing, the set's write failing after Redis claimed, a failed give-back,
 * refund or publish, a duplicate), run against a scripted world that answers each step. */
#include "support/util.h"

#include <stdio.h>
#include <string.h>

#include "common/core/claim_flow.h"
#include "common/core/errors.h"

/* What each call answers, and what the flow asked for. */
typedef struct world {
    int ledger_rc, ledger_spent;
    rt_claim claims[2]; /* the first claim's answer and the second's (asking for nothing) */
    int claim_rc[2];
    bool owner_self;
    int find_rc;
    bool set_exists, set_self;
    int join_rc, create_rc;
    bool created, refused;
    int kept, total;
    int settle_rc, refund_rc, publish_rc, verdict_rc;
    /* recorded */
    char trail[256];
    rt_claim_flow_step steps[24];
    size_t nsteps;
} world;

static rt_claim_flow_facts facts(int wanted, size_t runs_found)
{
    return (rt_claim_flow_facts){.wanted = wanted,
                                 .budget_minimum = 1,
                                 .limit = 600,
                                 .runs_found = runs_found,
                                 .ledger_known = true,
                                 .ledger_spent = 10};
}

static rt_claim claimed(int spent, int total)
{
    return (rt_claim){.status = RT_CLAIM_CLAIMED, .spent = spent, .total = total};
}

static rt_claim exists(int spent, const char *owner)
{
    rt_claim c = {.status = RT_CLAIM_EXISTS, .spent = spent};
    snprintf(c.owner_task_id, sizeof c.owner_task_id, "%s", owner);
    return c;
}

static rt_claim exhausted(int left)
{
    return (rt_claim){.status = RT_CLAIM_EXHAUSTED, .left = left};
}

/* The steps' names in a trail. */
static const char *action_name(rt_claim_action action)
{
    static const char *const names[] = {
        [RT_CLAIM_READ_LEDGER] = "read-ledger", [RT_CLAIM_REDIS] = "redis",
        [RT_CLAIM_FIND_SET] = "find-set",       [RT_CLAIM_JOIN_SET] = "join-set",
        [RT_CLAIM_CREATE_SET] = "create-set",   [RT_CLAIM_SETTLE] = "settle",
        [RT_CLAIM_REFUND] = "refund",           [RT_CLAIM_PUBLISH] = "publish",
        [RT_CLAIM_RECORD_VERDICT] = "verdict",  [RT_CLAIM_DONE] = "done"};
    return (unsigned)action < sizeof names / sizeof names[0] ? names[action] : "unknown";
}

/* Performs each step as the world answers it until DONE; the trail names the steps. */
static rt_claim_flow_step run(world *w, rt_claim_flow_facts *f)
{
    for (;;) {
        assert_true(w->nsteps < sizeof w->steps / sizeof w->steps[0]); /* it terminates */
        rt_claim_flow_step s;
        rt_claim_flow_next(f, &s);
        w->steps[w->nsteps++] = s;
        if (w->trail[0]) strcat(w->trail, " ");
        strcat(w->trail, action_name(s.action));
        switch (s.action) {
        case RT_CLAIM_READ_LEDGER:
            f->ledger = (rt_claim_call){true, w->ledger_rc};
            f->ledger_spent = w->ledger_spent;
            break;
        case RT_CLAIM_REDIS: {
            int i = f->claims < 2 ? f->claims : 1;
            f->claim = (rt_claim_call){true, w->claim_rc[i]};
            f->claim_result = w->claims[i];
            f->claim_owner_is_self = w->owner_self;
            f->claims++;
            break;
        }
        case RT_CLAIM_FIND_SET:
            f->find_set = (rt_claim_call){true, w->find_rc};
            f->set_exists = w->find_rc == 0 && w->set_exists;
            f->set_original_is_self = f->set_exists && w->set_self;
            break;
        case RT_CLAIM_JOIN_SET: f->join = (rt_claim_call){true, w->join_rc}; break;
        case RT_CLAIM_CREATE_SET:
            f->create = (rt_claim_call){true, w->create_rc};
            if (w->create_rc == 0) {
                f->created = w->created;
                f->refused = w->refused;
                f->kept = w->created ? w->kept : s.count;
                f->ledger_total = w->total;
            }
            break;
        case RT_CLAIM_SETTLE: f->settle = (rt_claim_call){true, w->settle_rc}; break;
        case RT_CLAIM_REFUND: f->refund = (rt_claim_call){true, w->refund_rc}; break;
        case RT_CLAIM_PUBLISH: f->publish = (rt_claim_call){true, w->publish_rc}; break;
        case RT_CLAIM_RECORD_VERDICT: f->verdict = (rt_claim_call){true, w->verdict_rc}; break;
        case RT_CLAIM_DONE: return s;
        }
    }
}

/* The step of the trail that did `action` (the first one). */
static const rt_claim_flow_step *step_of(const world *w, rt_claim_action action)
{
    for (size_t i = 0; i < w->nsteps; i++)
        if (w->steps[i].action == action) return &w->steps[i];
    fail_msg("no %s step in \"%s\"", action_name(action), w->trail);
    return NULL;
}

/* A world where every call works and the set is created with all that Redis granted. */
static world working(rt_claim first)
{
    return (world){
        .claims = {first, claimed(0, 0)}, .created = true, .kept = first.spent, .total = 10};
}

static void test_claimed_set_is_created_and_published(void **state)
{
    (void)state;
    world w = working(claimed(5, 15));
    rt_claim_flow_facts f = facts(5, 0);
    rt_claim_flow_step end = run(&w, &f);
    assert_string_equal(w.trail, "redis create-set publish done");
    assert_int_equal(step_of(&w, RT_CLAIM_REDIS)->wanted, 5);
    assert_int_equal(step_of(&w, RT_CLAIM_REDIS)->minimum, 1);
    assert_int_equal(step_of(&w, RT_CLAIM_CREATE_SET)->count, 5);
    assert_int_equal(end.end, RT_CLAIM_END_ACK);
    assert_string_equal(end.reason, "retriggers-requested");
    assert_int_equal(end.spent, 5);
    assert_int_equal(end.counter_total, 15); /* the claim's counter: no Redis round trip */
}

static void test_minimum_never_exceeds_what_is_wanted(void **state)
{
    (void)state;
    world w = working(claimed(2, 12));
    rt_claim_flow_facts f = facts(2, 0);
    f.budget_minimum = 3;
    run(&w, &f);
    assert_int_equal(step_of(&w, RT_CLAIM_REDIS)->minimum, 2);
    assert_int_equal(step_of(&w, RT_CLAIM_CREATE_SET)->minimum, 2);
}

static void test_ledger_is_read_unless_the_run_facts_brought_it(void **state)
{
    (void)state;
    world w = working(claimed(5, 15));
    rt_claim_flow_facts f = facts(5, 0);
    f.ledger_known = false;
    run(&w, &f);
    assert_string_equal(w.trail, "read-ledger redis create-set publish done");

    world down = working(claimed(5, 15));
    down.ledger_rc = RT_EUPSTREAM;
    f = facts(5, 0);
    f.ledger_known = false;
    rt_claim_flow_step end = run(&down, &f);
    assert_string_equal(down.trail, "read-ledger done"); /* no claim without the floor */
    assert_int_equal(end.end, RT_CLAIM_END_REQUEUE);
    assert_int_equal(end.cause, RT_CLAIM_CAUSE_POSTGRES);
}

static void test_redis_down_requeues_before_anything_is_written(void **state)
{
    (void)state;
    world w = working(claimed(5, 15));
    w.claim_rc[0] = RT_EUPSTREAM;
    rt_claim_flow_facts f = facts(5, 0);
    rt_claim_flow_step end = run(&w, &f);
    assert_string_equal(w.trail, "redis done");
    assert_int_equal(end.end, RT_CLAIM_END_REQUEUE);
    assert_int_equal(end.cause, RT_CLAIM_CAUSE_REDIS);
    assert_null(end.reason);
}

static void test_exhausted_budget_records_skip(void **state)
{
    (void)state;
    world w = working(exhausted(0));
    rt_claim_flow_facts f = facts(5, 0);
    rt_claim_flow_step end = run(&w, &f);
    assert_string_equal(w.trail, "redis verdict done");
    const rt_claim_flow_step *v = step_of(&w, RT_CLAIM_RECORD_VERDICT);
    assert_string_equal(v->verdict_reason, "budget-exhausted");
    assert_int_equal(v->note, RT_CLAIM_NOTE_EXHAUSTED);
    assert_true(v->set_gauges);
    assert_int_equal(v->gauge_left, 0);
    assert_int_equal(v->gauge_spent, 600);
    assert_int_equal(end.end, RT_CLAIM_END_ACK);
    assert_string_equal(end.reason, "budget-exhausted");

    world down = working(exhausted(0));
    down.verdict_rc = RT_EUPSTREAM;
    f = facts(5, 0);
    end = run(&down, &f);
    assert_int_equal(end.end, RT_CLAIM_END_REQUEUE);
    assert_int_equal(end.cause, RT_CLAIM_CAUSE_POSTGRES);
    assert_string_equal(end.reason, "budget-exhausted");
}

static void test_exhausted_with_runs_on_the_push_claims_nothing_and_makes_the_set(void **state)
{
    (void)state;
    world w = working(exhausted(0));
    w.claims[1] = claimed(0, 600);
    w.kept = 0;
    rt_claim_flow_facts f = facts(5, 2);
    rt_claim_flow_step end = run(&w, &f);
    assert_string_equal(w.trail, "redis redis create-set publish done");
    const rt_claim_flow_step *second = &w.steps[1];
    assert_int_equal(second->note, RT_CLAIM_NOTE_EXHAUSTED_RUNS_DECIDE);
    assert_int_equal(second->wanted, 0);
    assert_int_equal(second->minimum, 0);
    assert_int_equal(step_of(&w, RT_CLAIM_CREATE_SET)->count, 0);
    assert_int_equal(step_of(&w, RT_CLAIM_CREATE_SET)->minimum, 0);
    assert_string_equal(end.reason, "existing-runs");

    world down = working(exhausted(0));
    down.claim_rc[1] = RT_EUPSTREAM;
    f = facts(5, 2);
    end = run(&down, &f);
    assert_string_equal(down.trail, "redis redis done");
    assert_int_equal(end.cause, RT_CLAIM_CAUSE_REDIS);
}

static void test_set_of_another_task_is_joined(void **state)
{
    (void)state;
    world w = working(exists(5, "other"));
    w.set_exists = true;
    rt_claim_flow_facts f = facts(5, 0);
    rt_claim_flow_step end = run(&w, &f);
    assert_string_equal(w.trail, "redis find-set join-set verdict done");
    assert_string_equal(step_of(&w, RT_CLAIM_RECORD_VERDICT)->verdict_reason, "is-retrigger");
    assert_int_equal(end.end, RT_CLAIM_END_ACK);
    assert_string_equal(end.reason, "is-retrigger");
}

static void test_set_claimed_but_not_written_is_looked_at_again(void **state)
{
    (void)state;
    world w = working(exists(5, "other"));
    rt_claim_flow_facts f = facts(5, 0);
    rt_claim_flow_step end = run(&w, &f);
    assert_string_equal(w.trail, "redis find-set done");
    assert_int_equal(end.end, RT_CLAIM_END_RETRY);
    assert_int_equal(end.cause, RT_CLAIM_CAUSE_SET_IN_PROGRESS);

    world down = working(exists(5, "other"));
    down.find_rc = RT_EUPSTREAM;
    f = facts(5, 0);
    end = run(&down, &f);
    assert_int_equal(end.end, RT_CLAIM_END_REQUEUE);
    assert_int_equal(end.cause, RT_CLAIM_CAUSE_POSTGRES);

    world nojoin = working(exists(5, "other"));
    nojoin.set_exists = true;
    nojoin.join_rc = RT_EUPSTREAM;
    f = facts(5, 0);
    end = run(&nojoin, &f);
    assert_string_equal(nojoin.trail, "redis find-set join-set done"); /* no verdict */
    assert_int_equal(end.end, RT_CLAIM_END_REQUEUE);
}

static void test_own_earlier_claim_goes_on_with_the_budget_spent(void **state)
{
    (void)state;
    world w = working(exists(4, "me"));
    w.owner_self = true;
    rt_claim_flow_facts f = facts(5, 0);
    rt_claim_flow_step end = run(&w, &f);
    assert_string_equal(w.trail, "redis create-set publish done");
    assert_int_equal(step_of(&w, RT_CLAIM_CREATE_SET)->count, 4);
    assert_int_equal(end.spent, 4);
    assert_int_equal(end.counter_total, -1); /* not claimed now: Redis is asked */
}

static void test_backstop_cut_gives_the_rest_back(void **state)
{
    (void)state;
    world w = working(claimed(5, 15));
    w.kept = 2;
    w.total = 598;
    rt_claim_flow_facts f = facts(5, 0);
    rt_claim_flow_step end = run(&w, &f);
    assert_string_equal(w.trail, "redis create-set settle publish done");
    const rt_claim_flow_step *s = step_of(&w, RT_CLAIM_SETTLE);
    assert_int_equal(s->note, RT_CLAIM_NOTE_BACKSTOP_CUT);
    assert_int_equal(s->claimed, 5);
    assert_int_equal(s->kept, 2);
    assert_int_equal(s->ledger_total, 600);
    assert_int_equal(end.spent, 2);
    assert_int_equal(end.counter_total, -1);
    assert_string_equal(end.reason, "retriggers-requested");
}

static void test_failed_give_back_of_a_committed_set_is_only_noted(void **state)
{
    (void)state;
    world w = working(claimed(5, 15));
    w.kept = 2;
    w.settle_rc = RT_EUPSTREAM;
    rt_claim_flow_facts f = facts(5, 0);
    rt_claim_flow_step end = run(&w, &f);
    assert_string_equal(w.trail, "redis create-set settle publish done");
    assert_int_equal(step_of(&w, RT_CLAIM_PUBLISH)->note, RT_CLAIM_NOTE_SETTLE_FAILED);
    assert_int_equal(end.end, RT_CLAIM_END_ACK);
}

static void test_backstop_refusal_gives_all_back_and_records_skip(void **state)
{
    (void)state;
    world w = working(claimed(5, 15));
    w.kept = 0;
    w.refused = true;
    w.total = 600;
    rt_claim_flow_facts f = facts(5, 0);
    rt_claim_flow_step end = run(&w, &f);
    assert_string_equal(w.trail, "redis create-set settle verdict done");
    assert_int_equal(step_of(&w, RT_CLAIM_SETTLE)->kept, 0);
    const rt_claim_flow_step *v = step_of(&w, RT_CLAIM_RECORD_VERDICT);
    assert_string_equal(v->verdict_reason, "budget-exhausted");
    assert_true(v->set_gauges);
    assert_int_equal(v->gauge_left, 0);
    assert_int_equal(v->gauge_spent, 600);
    assert_string_equal(end.reason, "budget-exhausted");
    assert_int_equal(end.end, RT_CLAIM_END_ACK);
}

static void test_failed_give_back_with_nothing_written_requeues(void **state)
{
    (void)state;
    world w = working(claimed(5, 15));
    w.kept = 0;
    w.refused = true;
    w.settle_rc = RT_EUPSTREAM;
    rt_claim_flow_facts f = facts(5, 0);
    rt_claim_flow_step end = run(&w, &f);
    assert_string_equal(w.trail, "redis create-set settle done"); /* no verdict: retried */
    assert_int_equal(end.end, RT_CLAIM_END_REQUEUE);
    assert_int_equal(end.cause, RT_CLAIM_CAUSE_REDIS);
}

static void test_failed_set_write_after_the_claim_keeps_the_claim_for_the_redelivery(void **state)
{
    (void)state;
    world w = working(claimed(5, 15));
    w.create_rc = RT_ENOMEM;
    rt_claim_flow_facts f = facts(5, 0);
    rt_claim_flow_step end = run(&w, &f);
    /* No refund: the dedupe key names this task, whose redelivery spends the claim. */
    assert_string_equal(w.trail, "redis create-set done");
    assert_int_equal(end.end, RT_CLAIM_END_REQUEUE);
    assert_int_equal(end.cause, RT_CLAIM_CAUSE_CREATE_SET);
    assert_int_equal(end.error, RT_ENOMEM);
}

static void test_failed_publish_of_a_committed_set_requeues_without_refund(void **state)
{
    (void)state;
    world w = working(claimed(5, 15));
    w.publish_rc = RT_EUPSTREAM;
    rt_claim_flow_facts f = facts(5, 0);
    rt_claim_flow_step end = run(&w, &f);
    assert_string_equal(w.trail, "redis create-set publish done");
    assert_int_equal(end.end, RT_CLAIM_END_REQUEUE);
    assert_int_equal(end.cause, RT_CLAIM_CAUSE_PUBLISH);
    assert_null(end.reason);
}

static void test_duplicate_refunds_the_claim_made_now(void **state)
{
    (void)state;
    world w = working(claimed(5, 15));
    w.created = false;
    w.set_exists = true; /* a replica's set */
    rt_claim_flow_facts f = facts(5, 0);
    rt_claim_flow_step end = run(&w, &f);
    assert_string_equal(w.trail, "redis create-set find-set refund publish verdict done");
    assert_int_equal(step_of(&w, RT_CLAIM_REFUND)->amount, 5);
    assert_string_equal(step_of(&w, RT_CLAIM_RECORD_VERDICT)->verdict_reason, "duplicate");
    assert_string_equal(end.reason, "duplicate");
    assert_int_equal(end.end, RT_CLAIM_END_ACK);
}

static void test_duplicate_of_this_tasks_own_set_keeps_the_budget(void **state)
{
    (void)state;
    world w = working(claimed(5, 15));
    w.created = false;
    w.set_exists = w.set_self = true; /* a replica handled this task's redelivery */
    rt_claim_flow_facts f = facts(5, 0);
    run(&w, &f);
    assert_string_equal(w.trail, "redis create-set find-set publish verdict done");

    /* Claimed earlier by this task: nothing spent now, nothing to look up or give back. */
    world again = working(exists(5, "me"));
    again.owner_self = true;
    again.created = false;
    f = facts(5, 0);
    run(&again, &f);
    assert_string_equal(again.trail, "redis create-set publish verdict done");
}

static void test_duplicate_lookup_or_refund_failing_still_ends_the_duplicate(void **state)
{
    (void)state;
    world w = working(claimed(5, 15));
    w.created = false;
    w.find_rc = RT_EUPSTREAM; /* cannot tell it is ours: refund, which can only underspend */
    w.refund_rc = RT_EUPSTREAM;
    rt_claim_flow_facts f = facts(5, 0);
    rt_claim_flow_step end = run(&w, &f);
    assert_string_equal(w.trail, "redis create-set find-set refund publish verdict done");
    assert_int_equal(step_of(&w, RT_CLAIM_PUBLISH)->note, RT_CLAIM_NOTE_REFUND_FAILED);
    assert_int_equal(end.end, RT_CLAIM_END_ACK);

    world down = working(claimed(5, 15));
    down.created = false;
    down.set_exists = true;
    down.publish_rc = RT_EUPSTREAM;
    f = facts(5, 0);
    end = run(&down, &f);
    assert_string_equal(down.trail, "redis create-set find-set refund publish done");
    assert_int_equal(end.end, RT_CLAIM_END_REQUEUE);
    assert_int_equal(end.cause, RT_CLAIM_CAUSE_POSTGRES);
    assert_string_equal(end.reason, "duplicate");
}

/* Every failure order: each call failing or not, each claim answer and each backstop
 * answer. The flow ends; the budget goes back at most once (never both settled and
 * refunded); a created set is never refunded; an acked message with a claim made now and
 * no set created by it gave the claim back unless the set is this task's. */
static void test_every_failure_order_ends_and_gives_back_at_most_once(void **state)
{
    (void)state;
    const rt_claim answers[] = {claimed(5, 15),  claimed(1, 600), exists(5, "other"),
                                exists(5, "me"), exhausted(0),    exhausted(3)};
    size_t runs = 0;
    for (size_t a = 0; a < sizeof answers / sizeof answers[0]; a++)
        for (unsigned fails = 0; fails < (1u << 9); fails++)
            for (unsigned shape = 0; shape < 8; shape++) {
                world w = working(answers[a]);
                w.owner_self =
                    answers[a].status == RT_CLAIM_EXISTS && !strcmp(answers[a].owner_task_id, "me");
                w.claims[1] = claimed(0, 600);
                int *calls[] = {&w.ledger_rc, &w.claim_rc[0], &w.find_rc,
                                &w.join_rc,   &w.create_rc,   &w.settle_rc,
                                &w.refund_rc, &w.publish_rc,  &w.verdict_rc};
                for (unsigned i = 0; i < 9; i++)
                    if (fails & (1u << i)) *calls[i] = RT_EUPSTREAM;
                w.created = shape & 1;
                w.refused = w.created && (shape & 2);
                w.kept = w.refused ? 0 : (shape & 4) ? answers[a].spent / 2 : answers[a].spent;
                w.set_exists = !(shape & 2);
                w.set_self = shape & 4;
                rt_claim_flow_facts f = facts(5, shape & 1);
                f.ledger_known = shape & 2;
                rt_claim_flow_step end = run(&w, &f);
                bool settled = f.settle.done, refunded = f.refund.done;
                assert_false(settled && refunded);
                if (f.created) assert_false(refunded);
                bool spent_now = f.claims > 0 && f.claim.rc == 0 &&
                                 f.claim_result.status == RT_CLAIM_CLAIMED &&
                                 f.claim_result.spent > 0;
                if (end.end == RT_CLAIM_END_ACK && spent_now && f.create.done && !f.created &&
                    !(f.find_set.rc == 0 && f.set_original_is_self))
                    assert_true(refunded);
                runs++;
            }
    assert_int_equal(runs, 6 * 512 * 8);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_claimed_set_is_created_and_published),
        cmocka_unit_test(test_minimum_never_exceeds_what_is_wanted),
        cmocka_unit_test(test_ledger_is_read_unless_the_run_facts_brought_it),
        cmocka_unit_test(test_redis_down_requeues_before_anything_is_written),
        cmocka_unit_test(test_exhausted_budget_records_skip),
        cmocka_unit_test(test_exhausted_with_runs_on_the_push_claims_nothing_and_makes_the_set),
        cmocka_unit_test(test_set_of_another_task_is_joined),
        cmocka_unit_test(test_set_claimed_but_not_written_is_looked_at_again),
        cmocka_unit_test(test_own_earlier_claim_goes_on_with_the_budget_spent),
        cmocka_unit_test(test_backstop_cut_gives_the_rest_back),
        cmocka_unit_test(test_failed_give_back_of_a_committed_set_is_only_noted),
        cmocka_unit_test(test_backstop_refusal_gives_all_back_and_records_skip),
        cmocka_unit_test(test_failed_give_back_with_nothing_written_requeues),
        cmocka_unit_test(test_failed_set_write_after_the_claim_keeps_the_claim_for_the_redelivery),
        cmocka_unit_test(test_failed_publish_of_a_committed_set_requeues_without_refund),
        cmocka_unit_test(test_duplicate_refunds_the_claim_made_now),
        cmocka_unit_test(test_duplicate_of_this_tasks_own_set_keeps_the_budget),
        cmocka_unit_test(test_duplicate_lookup_or_refund_failing_still_ends_the_duplicate),
        cmocka_unit_test(test_every_failure_order_ends_and_gives_back_at_most_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
