/* SPDX-License-Identifier: MPL-2.0 */
/* test_decide_rounds.c - the verdict policy's rounds in the workers (common/core/
 * decide_rounds.h): the size of classify's first round, when retrig-decide stores, waits or
 * asks for another round and how many, the cap, the deadline and a refused round deciding
 * by the posterior, seed never asking, shadow verdicts, and the exactly-once keys. And the
 * workers' loop (first round, then a round while the plan asks) gives exactly what
 * `retrig simulate` gives (decide_sim.h) on generated failures. */
#include "support/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/decide_rounds.h"
#include "common/core/decide_sim.h"
#include "common/core/failure_line.h"
#include "common/core/messages.h"

static rt_failure_line line; /* the original's one failure line */

static int setup(void **state)
{
    (void)state;
    const char *text = "TEST-UNEXPECTED-FAIL | dom/base/test/browser_rounds.js | a failure";
    return rt_failure_line_parse(text, strlen(text), &line) == RT_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    rt_failure_line_free(&line);
    return 0;
}

/* Evidence of n resolved retriggers, the first k reproducing, then `pending` pending. */
static void runs_of(rt_verdict_run *runs, size_t k, size_t n, size_t pending)
{
    for (size_t i = 0; i < n; i++)
        runs[i] = i < k ? (rt_verdict_run){.state = RT_RUN_FAILED, .lines = &line, .nlines = 1}
                        : (rt_verdict_run){.state = RT_RUN_PASSED};
    for (size_t i = n; i < n + pending; i++) runs[i] = (rt_verdict_run){.state = RT_RUN_PENDING};
}

static rt_round_plan plan(rt_policy policy, const rt_decide_settings *model,
                          const rt_decide_history *history, size_t k, size_t n, size_t pending,
                          rt_round_state st)
{
    rt_verdict_run runs[RT_VERDICT_MAX_RUNS];
    runs_of(runs, k, n, pending);
    rt_policy_input in = {
        .evidence =
            {.original = &line, .noriginal = 1, .runs = runs, .nruns = n + pending, .threshold = 2},
        .history = history,
        .retriggers_per_failure = 5,
        .model = model,
    };
    rt_round_plan p;
    assert_int_equal(rt_round_plan_for(policy, &in, &st, &p), RT_OK);
    return p;
}

static void test_first_round_is_the_models_batch_less_the_runs_found(void **state)
{
    (void)state;
    rt_decide_settings s;
    rt_decide_settings_default(&s);
    rt_decide_history none = {0, 0, -1}, flaky = {1000, 400, -1};
    /* decide_model.h's worked example: 2 for a test without history, and for a flaky one. */
    assert_int_equal(rt_round_first(&s, &none, 1, 0), 2);
    assert_int_equal(rt_round_first(&s, &flaky, 1, 0), 2);
    assert_int_equal(rt_round_first(&s, NULL, 0, 0), 2); /* no test named: no history */
    /* The runs already on the push count towards it. */
    assert_int_equal(rt_round_first(&s, &none, 1, 1), 1);
    assert_int_equal(rt_round_first(&s, &none, 1, 2), 0);
    assert_int_equal(rt_round_first(&s, &none, 1, 7), 0);
    /* Never above retriggers_per_failure (first_batch_max) nor decide_max_retriggers. */
    s.first_batch_min = 1;
    s.first_batch_max = 1;
    assert_int_equal(rt_round_first(&s, &none, 1, 0), 1);
    rt_decide_settings_default(&s);
    s.first_batch_min = s.first_batch_max = 5;
    s.max_retriggers = 3;
    assert_int_equal(rt_round_first(&s, &none, 1, 0), 3);
    assert_int_equal(rt_round_first(&s, &none, 1, 2), 1);
    /* Settings the model refuses ask for nothing. */
    s.confidence = 2;
    assert_int_equal(rt_round_first(&s, &none, 1, 0), 0);
}

static void test_adaptive_stores_waits_or_asks_for_the_next_round(void **state)
{
    (void)state;
    rt_decide_settings s;
    rt_decide_settings_default(&s);
    rt_decide_history none = {0, 0, -1};
    rt_round_state st = {.round = 1, .requested = 2};

    /* Two passes of a test without history: intermittent (p = 0.026), after one round. */
    rt_round_plan p = plan(RT_POLICY_ADAPTIVE, &s, &none, 0, 2, 0, st);
    assert_int_equal(p.action, RT_ROUND_VERDICT);
    assert_int_equal(p.verdict, RT_VERDICT_INTERMITTENT);
    assert_string_equal(p.reason, "confident");
    assert_int_equal(p.line, -1);
    assert_true(p.result.p_regression[0] < 0.05);
    /* Two reproductions: regression (p = 0.958), named by the line. */
    p = plan(RT_POLICY_ADAPTIVE, &s, &none, 2, 2, 0, st);
    assert_int_equal(p.action, RT_ROUND_VERDICT);
    assert_int_equal(p.verdict, RT_VERDICT_REGRESSION);
    assert_int_equal(p.line, 0);
    /* One of two: ambiguous (p = 0.289), nothing pending: round 2 of 1. */
    p = plan(RT_POLICY_ADAPTIVE, &s, &none, 1, 2, 0, st);
    assert_int_equal(p.action, RT_ROUND_ASK);
    assert_int_equal(p.verdict, RT_VERDICT_NOT_YET);
    assert_string_equal(p.reason, "need-more");
    assert_int_equal(p.round, 2);
    assert_int_equal(p.more, 1);
    assert_int_equal(p.spent, 2);
    /* The same with a retrigger still pending: wait for it. */
    rt_round_state three = {.round = 1, .requested = 3};
    p = plan(RT_POLICY_ADAPTIVE, &s, &none, 1, 2, 1, three);
    assert_int_equal(p.action, RT_ROUND_WAIT);
    assert_string_equal(p.reason, "waiting-for-retriggers");
    /* Round 2 passed: 1 of 3, still ambiguous: round 3, numbered on. */
    rt_round_state second = {.round = 2, .requested = 3};
    p = plan(RT_POLICY_ADAPTIVE, &s, &none, 1, 3, 0, second);
    assert_int_equal(p.action, RT_ROUND_ASK);
    assert_int_equal(p.round, 3);
    assert_true(p.more >= 1 && p.more <= 7);
    /* Runs found on the push count against decide_max_retriggers. */
    rt_round_state found = {.round = 1, .requested = 0, .found = 2};
    p = plan(RT_POLICY_ADAPTIVE, &s, &none, 1, 2, 0, found);
    assert_int_equal(p.action, RT_ROUND_ASK);
    assert_int_equal(p.spent, 2);
}

static void test_at_the_cap_a_refused_round_or_the_deadline_the_posterior_decides(void **state)
{
    (void)state;
    rt_decide_settings s;
    rt_decide_settings_default(&s);
    s.max_retriggers = 3;
    rt_decide_history none = {0, 0, -1};
    /* 1 of 3 at the cap of 3: p = 0.171, intermittent by the posterior. */
    rt_round_state st = {.round = 2, .requested = 3};
    rt_round_plan p = plan(RT_POLICY_ADAPTIVE, &s, &none, 1, 3, 0, st);
    assert_int_equal(p.action, RT_ROUND_VERDICT);
    assert_int_equal(p.verdict, RT_VERDICT_INTERMITTENT);
    assert_string_equal(p.reason, "low-confidence");
    /* 2 of 3 at the cap: p = 0.708, a regression by the posterior. */
    p = plan(RT_POLICY_ADAPTIVE, &s, &none, 2, 3, 0, st);
    assert_int_equal(p.verdict, RT_VERDICT_REGRESSION);
    assert_string_equal(p.reason, "low-confidence");
    assert_int_equal(p.line, 0);

    /* Below the cap, a round that may not follow decides the same way. */
    rt_decide_settings_default(&s);
    rt_round_state refused = {.round = 1, .requested = 2, .no_more = true};
    p = plan(RT_POLICY_ADAPTIVE, &s, &none, 1, 2, 0, refused);
    assert_int_equal(p.action, RT_ROUND_VERDICT);
    assert_int_equal(p.verdict, RT_VERDICT_INTERMITTENT); /* p = 0.289 < 0.5 */
    assert_string_equal(p.reason, "low-confidence");
    assert_string_equal(p.result.outcome[RT_POLICY_ADAPTIVE].reason, "low-confidence");
    rt_round_state late = {.round = 1, .requested = 2, .deadline = true};
    p = plan(RT_POLICY_ADAPTIVE, &s, &none, 1, 2, 0, late);
    assert_int_equal(p.action, RT_ROUND_VERDICT);
    assert_string_equal(p.reason, "low-confidence");
    /* Past the deadline with retriggers pending: still waiting (the step rule makes it
     * undecided, retriggers-missing, as for seed). */
    rt_round_state late_pending = {.round = 1, .requested = 3, .deadline = true};
    p = plan(RT_POLICY_ADAPTIVE, &s, &none, 1, 2, 1, late_pending);
    assert_int_equal(p.action, RT_ROUND_WAIT);
    /* Nothing gave evidence and no round may follow: undecided. */
    rt_verdict_run none_usable[2] = {{.state = RT_RUN_EXCEPTION}, {.state = RT_RUN_EXCEPTION}};
    rt_policy_input in = {
        .evidence =
            {.original = &line, .noriginal = 1, .runs = none_usable, .nruns = 2, .threshold = 2},
        .history = &none,
        .retriggers_per_failure = 5,
        .model = &s,
    };
    assert_int_equal(rt_round_plan_for(RT_POLICY_ADAPTIVE, &in, &refused, &p), RT_OK);
    assert_int_equal(p.action, RT_ROUND_VERDICT);
    assert_int_equal(p.verdict, RT_VERDICT_UNDECIDED);
    assert_string_equal(p.reason, "no-usable-retriggers");
}

static void test_a_round_asks_for_at_most_one_requests_worth(void **state)
{
    (void)state;
    rt_decide_settings s;
    rt_decide_settings_default(&s);
    s.max_retriggers = 64;
    s.round_cost = 1e6; /* waiting costs so much that the model asks for all that is left */
    rt_decide_history none = {0, 0, -1};
    rt_round_state st = {.round = 1, .requested = 2};
    rt_round_plan p = plan(RT_POLICY_ADAPTIVE, &s, &none, 1, 2, 0, st);
    assert_int_equal(p.action, RT_ROUND_ASK);
    assert_int_equal(p.result.outcome[RT_POLICY_ADAPTIVE].more, 62);
    assert_int_equal(p.more, RT_ROUND_MAX_TIMES);
    /* The last round allowed asks for nothing more. */
    rt_round_state last = {.round = RT_ROUND_MAX, .requested = 2};
    p = plan(RT_POLICY_ADAPTIVE, &s, &none, 1, 2, 0, last);
    assert_int_equal(p.action, RT_ROUND_VERDICT);
    assert_string_equal(p.reason, "low-confidence");
}

static void test_seed_never_asks_and_both_policies_shadow_each_other(void **state)
{
    (void)state;
    rt_decide_settings s;
    rt_decide_settings_default(&s);
    rt_decide_history none = {0, 0, -1};
    rt_round_state st = {.round = 1, .requested = 2};
    /* One reproduction of two, nothing pending: seed says intermittent (no line can reach
     * 2 any more), adaptive would ask for more. */
    rt_round_plan p = plan(RT_POLICY_SEED, &s, &none, 1, 2, 0, st);
    assert_int_equal(p.policy, RT_POLICY_SEED);
    assert_int_equal(p.shadow, RT_POLICY_ADAPTIVE);
    assert_int_equal(p.action, RT_ROUND_VERDICT);
    assert_int_equal(p.verdict, RT_VERDICT_INTERMITTENT);
    assert_string_equal(p.reason, "not-reproduced");
    assert_int_equal(p.result.outcome[RT_POLICY_ADAPTIVE].verdict, RT_VERDICT_NOT_YET);
    assert_string_equal(p.result.outcome[RT_POLICY_ADAPTIVE].reason, "need-more");
    assert_true(p.result.p_regression[0] > 0.28 && p.result.p_regression[0] < 0.30);
    /* Seed waits for its pending retriggers, and never asks for a round. */
    rt_round_state five = {.round = 1, .requested = 5};
    p = plan(RT_POLICY_SEED, &s, &none, 1, 2, 3, five);
    assert_int_equal(p.action, RT_ROUND_WAIT);
    assert_int_equal(p.more, 0);
    /* Two reproductions: seed's regression is named by rt_verdict_decide's line. */
    p = plan(RT_POLICY_SEED, &s, &none, 2, 2, 0, st);
    assert_int_equal(p.verdict, RT_VERDICT_REGRESSION);
    assert_string_equal(p.reason, "reproduced");
    assert_int_equal(p.line, 0);
    /* Adaptive in force: seed is its shadow. */
    p = plan(RT_POLICY_ADAPTIVE, &s, &none, 0, 2, 0, st);
    assert_int_equal(p.shadow, RT_POLICY_SEED);
    assert_int_equal(p.result.outcome[RT_POLICY_SEED].verdict, RT_VERDICT_INTERMITTENT);
    /* Invalid input: undecided, an error. */
    rt_policy_input in = {.evidence = {.original = &line, .noriginal = 1, .threshold = 0},
                          .model = &s};
    assert_int_equal(rt_round_plan_for(RT_POLICY_ADAPTIVE, &in, &st, &p), RT_EINVAL);
    assert_int_equal(p.verdict, RT_VERDICT_UNDECIDED);
    assert_string_equal(p.reason, "invalid-input");
    rt_round_state bad = {.round = 0};
    in.evidence.threshold = 2;
    assert_int_equal(rt_round_plan_for(RT_POLICY_ADAPTIVE, &in, &bad, &p), RT_EINVAL);
    assert_int_equal(rt_round_plan_for(RT_POLICY_MOZCI, &in, &st, &p), RT_EINVAL);
}

static void test_hints_from_tracking_and_classification(void **state)
{
    (void)state;
    assert_int_equal(rt_round_hints(false, 1), 0);
    assert_int_equal(rt_round_hints(true, 1), RT_DECIDE_HINT_TRACKED);
    assert_int_equal(rt_round_hints(false, 4), RT_DECIDE_HINT_CLASSIFIED);
    assert_int_equal(rt_round_hints(true, 7), RT_DECIDE_HINT_TRACKED | RT_DECIDE_HINT_CLASSIFIED);
    assert_int_equal(rt_round_hints(false, 8), RT_DECIDE_HINT_CLASSIFIED);
    assert_int_equal(rt_round_hints(false, 2), 0); /* fixed by commit */
    assert_int_equal(rt_round_hints(false, -1), 0);
}

static void test_exactly_once_keys_per_round(void **state)
{
    (void)state;
    char k[RT_ROUND_KEY_SIZE];
    /* Round 1 keeps the keys sets had before rounds. */
    assert_int_equal(rt_round_ledger_key(42, 1, k, sizeof k), RT_OK);
    assert_string_equal(k, "set:42");
    assert_int_equal(rt_round_refund_key(42, 1, k, sizeof k), RT_OK);
    assert_string_equal(k, "refund:set:42");
    assert_int_equal(rt_round_message_id(42, 1, k, sizeof k), RT_OK);
    assert_string_equal(k, "retrigger-set-42");
    /* Later rounds: a key of their own each. */
    assert_int_equal(rt_round_ledger_key(42, 3, k, sizeof k), RT_OK);
    assert_string_equal(k, "set:42:round:3");
    assert_int_equal(rt_round_refund_key(42, 3, k, sizeof k), RT_OK);
    assert_string_equal(k, "refund:set:42:round:3");
    assert_int_equal(rt_round_claim_key(42, 3, k, sizeof k), RT_OK);
    assert_string_equal(k, "round:42:3");
    assert_int_equal(rt_round_message_id(42, 3, k, sizeof k), RT_OK);
    assert_string_equal(k, "retrigger-set-42-round-3");
    /* The largest ids fit. */
    assert_int_equal(rt_round_refund_key(4611686018427387904LL, RT_ROUND_MAX, k, sizeof k), RT_OK);
    assert_string_equal(k, "refund:set:4611686018427387904:round:64");
    /* Invalid: no set, no round, round 1's claim (the set's own key), a buffer too small. */
    assert_int_equal(rt_round_ledger_key(0, 1, k, sizeof k), RT_EINVAL);
    assert_int_equal(rt_round_ledger_key(1, 0, k, sizeof k), RT_EINVAL);
    assert_int_equal(rt_round_claim_key(1, 1, k, sizeof k), RT_EINVAL);
    assert_int_equal(rt_round_message_id(-5, 2, k, sizeof k), RT_EINVAL);
    char small[8];
    assert_int_equal(rt_round_ledger_key(123456, 2, small, sizeof small), RT_EINVAL);
    assert_int_equal(rt_round_refund_key(1, 1, small, sizeof small), RT_EINVAL);
}

/* A retrigger request names its round (queue-schemas/retrigger-request.json); one without
 * is round 1's, as every request was before rounds. */
static void test_a_retrigger_request_names_its_round(void **state)
{
    (void)state;
    static const struct {
        const char *example;
        int round, times;
    } cases[] = {{"test-failures.json", 1, 3}, {"second-round.json", 2, 2}};
    for (size_t i = 0; i < 2; i++) {
        char path[128];
        snprintf(path, sizeof path, "queue-schemas/examples/retrigger-request/%s",
                 cases[i].example);
        size_t len = 0;
        char *body = rt_test_read_file(rt_test_source(path), &len);
        rt_retrigger_request req;
        char reason[RT_MESSAGE_REASON_SIZE] = "";
        assert_int_equal(rt_retrigger_request_parse(body, len, &req, reason), RT_OK);
        assert_int_equal(req.round, cases[i].round);
        assert_int_equal(req.times, cases[i].times);
        rt_retrigger_request_free(&req);
        free(body);
    }
    size_t len = 0;
    char *body = rt_test_read_file(
        rt_test_source("queue-schemas/examples/retrigger-request/second-round.json"), &len);
    static const struct {
        const char *from, *to, *reason;
    } bad[] = {{"\"round\": 2", "\"round\": 0", "invalid-value:round"},
               {"\"round\": 2", "\"round\": 65", "invalid-value:round"},
               {"\"round\": 2", "\"round\": \"2\"", "wrong-type:round"},
               {"\"times\": 2", "\"times\": 21", "invalid-value:times"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *at = strstr(body, bad[i].from);
        assert_non_null(at);
        char *text = NULL;
        assert_true(asprintf(&text, "%.*s%s%s", (int)(at - body), body, bad[i].to,
                             at + strlen(bad[i].from)) > 0);
        rt_retrigger_request req;
        char reason[RT_MESSAGE_REASON_SIZE] = "";
        assert_int_equal(rt_retrigger_request_parse(text, strlen(text), &req, reason), RT_EPROTO);
        assert_string_equal(reason, bad[i].reason);
        free(text);
    }
    free(body);
}

/* The workers' loop over one simulated case: classify's first round, then decide's rounds
 * while the plan asks; the outcomes revealed in order as the retriggers resolve. */
static void worker_loop(const rt_decide_settings *s, const rt_sim_case *c, rt_sim_result *out)
{
    memset(out, 0, sizeof *out);
    rt_verdict_run runs[RT_SIM_MAX_OUTCOMES];
    size_t spent = rt_round_first(s, &c->history, 1, 0);
    rt_round_state st = {.round = 1, .requested = spent};
    out->rounds = spent > 0;
    for (;;) {
        for (size_t i = 0; i < spent; i++)
            runs[i] = c->outcomes[i]
                          ? (rt_verdict_run){.state = RT_RUN_FAILED, .lines = &line, .nlines = 1}
                          : (rt_verdict_run){.state = RT_RUN_PASSED};
        rt_policy_input in = {
            .evidence =
                {.original = &line, .noriginal = 1, .runs = runs, .nruns = spent, .threshold = 2},
            .history = &c->history,
            .retriggers_per_failure = 5,
            .model = s,
        };
        rt_round_plan p;
        assert_int_equal(rt_round_plan_for(RT_POLICY_ADAPTIVE, &in, &st, &p), RT_OK);
        if (p.action != RT_ROUND_ASK) {
            assert_int_equal(p.action, RT_ROUND_VERDICT);
            out->verdict = p.verdict;
            snprintf(out->reason, sizeof out->reason, "%s", p.reason);
            out->retriggers = spent;
            return;
        }
        assert_int_equal(p.round, st.round + 1);
        spent += p.more;
        assert_true(spent <= (size_t)s->max_retriggers);
        st.round = p.round;
        st.requested = spent;
        out->rounds++;
    }
}

static void test_the_workers_loop_is_what_retrig_simulate_runs(void **state)
{
    (void)state;
    rt_decide_settings s;
    rt_decide_settings_default(&s);
    rt_sim sim;
    assert_int_equal(rt_sim_init(&sim, &s, 5, 2), RT_OK);
    rt_sim_rng rng;
    rt_sim_rng_seed(&rng, 18);
    for (size_t i = 0; i < 3000; i++) {
        rt_sim_case c;
        rt_sim_generate(&rng, i % 2 ? RT_SIM_MIX_OBSERVED : RT_SIM_MIX_UNIFORM, 0.15, &c);
        rt_sim_result simulated, worked;
        assert_int_equal(rt_sim_run(&sim, RT_POLICY_ADAPTIVE, &c, &simulated), RT_OK);
        worker_loop(&s, &c, &worked);
        if (worked.verdict != simulated.verdict || strcmp(worked.reason, simulated.reason) ||
            worked.retriggers != simulated.retriggers || worked.rounds != simulated.rounds)
            fail_msg("case %zu: workers %s/%s %zu retriggers %zu rounds, simulate %s/%s %zu %zu", i,
                     rt_verdict_name(worked.verdict), worked.reason, worked.retriggers,
                     worked.rounds, rt_verdict_name(simulated.verdict), simulated.reason,
                     simulated.retriggers, simulated.rounds);
    }
    rt_sim_free(&sim);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_round_is_the_models_batch_less_the_runs_found),
        cmocka_unit_test(test_adaptive_stores_waits_or_asks_for_the_next_round),
        cmocka_unit_test(test_at_the_cap_a_refused_round_or_the_deadline_the_posterior_decides),
        cmocka_unit_test(test_a_round_asks_for_at_most_one_requests_worth),
        cmocka_unit_test(test_seed_never_asks_and_both_policies_shadow_each_other),
        cmocka_unit_test(test_hints_from_tracking_and_classification),
        cmocka_unit_test(test_exactly_once_keys_per_round),
        cmocka_unit_test(test_a_retrigger_request_names_its_round),
        cmocka_unit_test(test_the_workers_loop_is_what_retrig_simulate_runs),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
