/* SPDX-License-Identifier: MPL-2.0 */
/* test_culprit.c - the culprit search (common/culprit.h): no candidate, bisection middle
 * first over six skipped pushes for every culprit position, the header's worked example,
 * culprit-before-window, the budget, ambiguous probes, pending runs, a backout, a plugged-in
 * classification, invalid input, the seed rule's numbers, and the property that the range
 * always holds the true culprit under consistent outcomes. */
#include "support/util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/core/culprit.h"

/* A solid regression of a test with a long clean history: one run classifies a push. */
static const rt_culprit_model solid = {.confidence = 0.95,
                                       .threshold = 2,
                                       .reproduction_rate = 1.0,
                                       .history_runs = 2000,
                                       .history_failures = 0};
/* A flaky regression of a test without history: the header's worked example. */
static const rt_culprit_model flaky = {.confidence = 0.95,
                                       .threshold = 2,
                                       .reproduction_rate = 0.75,
                                       .history_runs = 0,
                                       .history_failures = 0};

static rt_culprit_result next(const rt_culprit_push *pushes, size_t count,
                              const rt_culprit_model *model, long jobs_left)
{
    rt_culprit_input in = {
        .pushes = pushes, .npushes = count, .model = *model, .jobs_left = jobs_left};
    rt_culprit_result res;
    int rc = rt_culprit_next(&in, &res);
    if (rc != RT_OK) fail_msg("rt_culprit_next: %s (%s)", rt_strerror(rc), res.reason);
    return res;
}

/* Runs the search to its end against a truth: push i carries the regression when i >= truth
 * (truth 0: the first push or an earlier one). Consistent outcomes: every run on a bad push
 * reproduces, none on a good one. Checks at every step that the range holds the truth.
 * Returns the final result; *rounds and *jobs count the rounds and the runs asked for;
 * reruns (when not NULL) the rounds that only added runs to an ambiguous push. */
static rt_culprit_result search(rt_culprit_push *pushes, size_t count,
                                const rt_culprit_model *model, long truth, long budget, int *rounds,
                                long *jobs, long *probes_out, int *reruns)
{
    *rounds = 0;
    *jobs = 0;
    if (reruns) *reruns = 0;
    for (;;) {
        rt_culprit_result res = next(pushes, count, model, budget - *jobs);
        if (res.status == RT_CULPRIT_FOUND || res.status == RT_CULPRIT_BEFORE_WINDOW ||
            res.status == RT_CULPRIT_STOPPED) {
            if (res.status != RT_CULPRIT_STOPPED) assert_int_equal(res.culprit, truth);
            assert_true(res.first <= truth && truth <= res.last);
            return res;
        }
        assert_true(res.first <= truth && truth <= res.last);
        assert_true(res.probe >= 0 && res.probe < (long)count - 1);
        if (probes_out && *rounds < 8) probes_out[*rounds] = res.probe;
        if (reruns && !strcmp(res.reason, "more-runs")) ++*reruns;
        const long probed[2] = {res.probe, res.confirm};
        const int times[2] = {res.times, res.confirm_times};
        for (int i = 0; i < 2 && probed[i] >= 0; i++) {
            assert_true(times[i] >= 1 && times[i] <= RT_CULPRIT_MAX_TIMES);
            pushes[probed[i]].runs += times[i];
            if (probed[i] >= truth) pushes[probed[i]].reproduced += times[i];
            *jobs += times[i];
        }
        if (++*rounds > 40) fail_msg("the search does not end");
    }
}

static void window(rt_culprit_push *pushes, size_t count, int first_runs)
{
    memset(pushes, 0, count * sizeof *pushes);
    pushes[0] = (rt_culprit_push){.runs = first_runs};
    pushes[count - 1] = (rt_culprit_push){.runs = 6, .reproduced = 6};
}

static void test_no_candidate_names_the_failing_push_at_no_cost(void **state)
{
    (void)state;
    rt_culprit_push pushes[2];
    window(pushes, 2, 1);
    rt_culprit_result res = next(pushes, 2, &solid, 100);
    assert_int_equal(res.status, RT_CULPRIT_FOUND);
    assert_int_equal(res.culprit, 1);
    assert_int_equal(res.probe, -1);
    assert_int_equal(res.confirm, -1);
    assert_int_equal(res.first, 1);
    assert_int_equal(res.last, 1);
    assert_string_equal(res.reason, "no-candidate");
    /* Even with no budget left: nothing to spend. */
    res = next(pushes, 2, &solid, 0);
    assert_int_equal(res.status, RT_CULPRIT_FOUND);

    /* A flaky regression's known-good push that ran once is only presumed good: it is
     * confirmed first (4 more runs make the 5 the seed rule needs). */
    res = next(pushes, 2, &flaky, 100);
    assert_int_equal(res.status, RT_CULPRIT_SEARCHING);
    assert_int_equal(res.probe, 0);
    assert_int_equal(res.times, 4);
    assert_string_equal(res.reason, "confirm-first");
    assert_int_equal(res.first, 0); /* the first push or earlier, until confirmed */
    pushes[0] = (rt_culprit_push){.runs = 5};
    res = next(pushes, 2, &flaky, 100);
    assert_int_equal(res.status, RT_CULPRIT_FOUND);
    assert_int_equal(res.culprit, 1);
}

static void test_six_skipped_pushes_bisect_middle_first_within_three_rounds(void **state)
{
    (void)state;
    /* N-7 good, N-6 .. N-1 skipped, N failing: indices 0, 1..6, 7. */
    const rt_culprit_model *models[] = {&solid, &flaky};
    for (size_t m = 0; m < 2; m++) {
        for (long truth = 1; truth <= 7; truth++) {
            rt_culprit_push pushes[8];
            window(pushes, 8, 1);
            int rounds;
            long jobs, probes[8] = {0};
            rt_culprit_result res = search(pushes, 8, models[m], truth, RT_CULPRIT_MAX_JOBS,
                                           &rounds, &jobs, probes, NULL);
            assert_int_equal(res.status, RT_CULPRIT_FOUND);
            assert_int_equal(res.culprit, truth);
            assert_string_equal(res.reason, "bisected");
            assert_int_equal(probes[0], 4); /* N-3: the middle of 7 possible culprits */
            if (rounds > 3) fail_msg("model %zu, culprit %ld: %d rounds", m, truth, rounds);
            /* Never more than backfilling the six pushes, plus the first push's confirmation. */
            rt_culprit_plan plan;
            rt_culprit_model push_model = *models[m];
            push_model.confidence = rt_culprit_push_confidence(models[m]->confidence, 8);
            assert_int_equal(rt_culprit_seed_plan(&push_model, &plan), RT_OK);
            assert_true(jobs <= 3L * plan.times + plan.times - 1);
        }
    }
}

static void test_worked_example_of_the_header(void **state)
{
    (void)state;
    rt_culprit_push pushes[8];
    window(pushes, 8, 1);
    rt_culprit_model push_model = flaky;
    push_model.confidence = rt_culprit_push_confidence(0.95, 8);
    assert_true(fabs(push_model.confidence - (1 - 0.05 / 3)) < 1e-12);
    rt_culprit_plan plan;
    assert_int_equal(rt_culprit_seed_plan(&push_model, &plan), RT_OK);
    assert_int_equal(plan.times, 5);
    assert_int_equal(plan.reproductions, 2);
    assert_true(fabs(plan.flake_rate - 0.5) < 1e-12);

    rt_culprit_result res = next(pushes, 8, &flaky, 100);
    assert_int_equal(res.probe, 4); /* N-3 */
    assert_int_equal(res.times, 5);
    assert_int_equal(res.confirm, -1);
    assert_string_equal(res.reason, "bisect");
    pushes[4] = (rt_culprit_push){.runs = 5, .reproduced = 4};
    res = next(pushes, 8, &flaky, 95);
    assert_int_equal(res.probe, 2); /* N-5 */
    pushes[2] = (rt_culprit_push){.runs = 5, .reproduced = 3};
    res = next(pushes, 8, &flaky, 90);
    assert_int_equal(res.probe, 1); /* N-6, with N-7 confirmed beside it */
    assert_int_equal(res.times, 5);
    assert_int_equal(res.confirm, 0);
    assert_int_equal(res.confirm_times, 4);
    assert_int_equal(res.first, 0);
    assert_int_equal(res.last, 2);
    pushes[1] = (rt_culprit_push){.runs = 5, .reproduced = 5};
    pushes[0] = (rt_culprit_push){.runs = 5, .reproduced = 0};
    res = next(pushes, 8, &flaky, 81);
    assert_int_equal(res.status, RT_CULPRIT_FOUND);
    assert_int_equal(res.culprit, 1);
    assert_int_equal(res.good, 0);

    /* Had N-7 reproduced twice in its new runs: the culprit is before the window. */
    pushes[0] = (rt_culprit_push){.runs = 5, .reproduced = 2};
    res = next(pushes, 8, &flaky, 81);
    assert_int_equal(res.status, RT_CULPRIT_BEFORE_WINDOW);
    assert_int_equal(res.culprit, 0);
    assert_int_equal(res.first, 0);
    assert_int_equal(res.last, 0);
    assert_string_equal(res.reason, "first-push-reproduces");
    assert_string_equal(rt_culprit_status_name(res.status), "culprit-before-window");
}

static void test_culprit_before_window(void **state)
{
    (void)state;
    /* The regression predates the window: every push carries it. */
    rt_culprit_push pushes[8];
    window(pushes, 8, 1);
    int rounds;
    long jobs;
    rt_culprit_result res =
        search(pushes, 8, &flaky, 0, RT_CULPRIT_MAX_JOBS, &rounds, &jobs, NULL, NULL);
    assert_int_equal(res.status, RT_CULPRIT_BEFORE_WINDOW);
    assert_true(rounds <= 3);
    /* A window whose first push never ran (none was found within culprit_max_depth): the
     * first push is just the oldest candidate. */
    window(pushes, 8, 0);
    res = search(pushes, 8, &solid, 0, RT_CULPRIT_MAX_JOBS, &rounds, &jobs, NULL, NULL);
    assert_int_equal(res.status, RT_CULPRIT_BEFORE_WINDOW);
    window(pushes, 8, 0);
    res = search(pushes, 8, &solid, 1, RT_CULPRIT_MAX_JOBS, &rounds, &jobs, NULL, NULL);
    assert_int_equal(res.status, RT_CULPRIT_FOUND);
    assert_int_equal(res.culprit, 1);
}

static void test_budget_exhausted_returns_the_range(void **state)
{
    (void)state;
    rt_culprit_push pushes[22];
    window(pushes, 22, 1);
    int rounds;
    long jobs;
    /* 6 runs a probe (confidence 0.99 a push over 22 pushes): 12 jobs pay for two probes. */
    rt_culprit_model model = flaky;
    rt_culprit_result res = search(pushes, 22, &model, 6, 12, &rounds, &jobs, NULL, NULL);
    assert_int_equal(res.status, RT_CULPRIT_STOPPED);
    assert_string_equal(res.reason, "budget-exhausted");
    assert_int_equal(res.probe, -1);
    assert_int_equal(rounds, 2);
    assert_true(jobs <= 12);
    assert_true(res.first <= 6 && 6 <= res.last);
    assert_true(res.last - res.first < 21);
    /* No budget at all: the whole window. */
    window(pushes, 22, 1);
    res = next(pushes, 22, &model, 0);
    assert_int_equal(res.status, RT_CULPRIT_STOPPED);
    assert_int_equal(res.first, 0);
    assert_int_equal(res.last, 21);
}

static void test_ambiguous_probe_of_a_flaky_test_is_decided_in_its_own_round(void **state)
{
    (void)state;
    /* A flaky regression of a test that fails 1 run in 25 anyway. */
    rt_culprit_model model = {.confidence = 0.95,
                              .threshold = 2,
                              .reproduction_rate = 0.5,
                              .history_runs = 500,
                              .history_failures = 20};
    rt_culprit_push pushes[8];
    window(pushes, 8, 1);
    rt_culprit_result res = next(pushes, 8, &model, 1000);
    long middle = res.probe;
    int n = res.times;
    rt_culprit_model push_model = model;
    push_model.confidence = rt_culprit_push_confidence(0.95, 8);
    rt_culprit_plan plan;
    assert_int_equal(rt_culprit_seed_plan(&push_model, &plan), RT_OK);
    assert_int_equal(n, plan.times);
    assert_int_equal(plan.max_runs, n);
    assert_int_equal(plan.reproductions, 2);
    double f = plan.flake_rate, r = model.reproduction_rate;
    /* x reproductions in n runs reach the threshold, but a good push of this test shows as
     * many too often: no second round, the likelihood ratio decides. */
    int tested = 0;
    for (int x = 2; x <= n; x++) {
        if (rt_culprit_binomial_tail(n, f, x) <= 1 - push_model.confidence) break;
        double llr = x * (log(r) - log(f)) + (n - x) * (log1p(-r) - log1p(-f));
        pushes[middle] = (rt_culprit_push){.runs = n, .reproduced = x};
        res = next(pushes, 8, &model, 1000);
        assert_int_not_equal(res.probe, middle);
        if (llr >= 0)
            assert_int_equal(res.last, middle);
        else
            assert_int_equal(res.good, middle);
        tested++;
    }
    assert_true(tested > 0);
    /* A probe whose runs were fewer than asked (some ended in an exception) gets the rest. */
    pushes[middle] = (rt_culprit_push){.runs = n - 2, .reproduced = 0};
    res = next(pushes, 8, &model, 1000);
    assert_int_equal(res.probe, middle);
    assert_int_equal(res.times, 2);
    assert_string_equal(res.reason, "more-runs");
}

static void test_waits_while_the_probes_runs_are_pending(void **state)
{
    (void)state;
    rt_culprit_push pushes[8];
    window(pushes, 8, 1);
    pushes[4].pending = 1;
    rt_culprit_result res = next(pushes, 8, &solid, 100);
    assert_int_equal(res.status, RT_CULPRIT_SEARCHING);
    assert_int_equal(res.probe, -1);
    assert_string_equal(res.reason, "waiting");
    /* A reproduction already decides the push, pending runs or not. */
    pushes[4] = (rt_culprit_push){.runs = 1, .reproduced = 1, .pending = 2};
    res = next(pushes, 8, &solid, 100);
    assert_int_equal(res.probe, 2);
}

static void test_bad_push_older_than_a_good_one_is_ignored(void **state)
{
    (void)state;
    /* 2 reproduced, 4 passed (a backout, then the regression relanded at 5 or 6). */
    rt_culprit_push pushes[8];
    window(pushes, 8, 1);
    pushes[2] = (rt_culprit_push){.runs = 1, .reproduced = 1};
    pushes[4] = (rt_culprit_push){.runs = 1, .reproduced = 0};
    rt_culprit_result res = next(pushes, 8, &solid, 100);
    assert_int_equal(res.good, 4);
    assert_int_equal(res.first, 5);
    assert_int_equal(res.last, 7);
    assert_int_equal(res.probe, 6);
}

typedef struct counting {
    int calls;
} counting;

/* A plugged-in classification: 3 runs, bad on any reproduction. */
static rt_culprit_call three_runs(const rt_culprit_evidence *e, const rt_culprit_model *model,
                                  void *ctx)
{
    (void)model;
    ((counting *)ctx)->calls++;
    if (e->reproduced > 0) return (rt_culprit_call){RT_PUSH_BAD, 0};
    if (e->runs >= 3) return (rt_culprit_call){RT_PUSH_GOOD, 0};
    return (rt_culprit_call){RT_PUSH_OPEN, 3 - e->runs};
}

static rt_culprit_call broken(const rt_culprit_evidence *e, const rt_culprit_model *model,
                              void *ctx)
{
    (void)e, (void)model, (void)ctx;
    return (rt_culprit_call){RT_PUSH_OPEN, 0};
}

static void test_a_plugged_in_classification_is_used(void **state)
{
    (void)state;
    rt_culprit_push pushes[8];
    window(pushes, 8, 3);
    counting ctx = {0};
    rt_culprit_input in = {.pushes = pushes,
                           .npushes = 8,
                           .model = solid,
                           .jobs_left = 100,
                           .classify = three_runs,
                           .classify_ctx = &ctx};
    rt_culprit_result res;
    assert_int_equal(rt_culprit_next(&in, &res), RT_OK);
    assert_int_equal(ctx.calls, 7); /* every push but the failing one */
    assert_int_equal(res.probe, 4);
    assert_int_equal(res.times, 3);
    in.classify = broken;
    assert_int_equal(rt_culprit_next(&in, &res), RT_EINVAL);
    assert_int_equal(res.status, RT_CULPRIT_STOPPED);
}

static void test_invalid_input_is_refused(void **state)
{
    (void)state;
    rt_culprit_push pushes[RT_CULPRIT_MAX_PUSHES + 1];
    window(pushes, 8, 1);
    rt_culprit_result res;
    rt_culprit_input in = {.pushes = pushes, .npushes = 1, .model = solid, .jobs_left = 10};
    assert_int_equal(rt_culprit_next(&in, &res), RT_EINVAL);
    assert_non_null(strstr(res.reason, "invalid-input"));
    in.npushes = RT_CULPRIT_MAX_PUSHES + 1;
    assert_int_equal(rt_culprit_next(&in, &res), RT_EINVAL);
    in.npushes = 8;
    pushes[3] = (rt_culprit_push){.runs = 1, .reproduced = 2};
    assert_int_equal(rt_culprit_next(&in, &res), RT_EINVAL);
    pushes[3] = (rt_culprit_push){.runs = -1};
    assert_int_equal(rt_culprit_next(&in, &res), RT_EINVAL);
    pushes[3] = (rt_culprit_push){.pending = RT_CULPRIT_MAX_RUNS + 1};
    assert_int_equal(rt_culprit_next(&in, &res), RT_EINVAL);
    pushes[3] = (rt_culprit_push){0};
    in.jobs_left = -1;
    assert_int_equal(rt_culprit_next(&in, &res), RT_EINVAL);
    in.jobs_left = 10;
    const rt_culprit_model bad_models[] = {
        {.confidence = 1.0, .threshold = 2, .reproduction_rate = 1},
        {.confidence = 0.4, .threshold = 2, .reproduction_rate = 1},
        {.confidence = 0.95, .threshold = 0, .reproduction_rate = 1},
        {.confidence = 0.95, .threshold = 2, .reproduction_rate = 0},
        {.confidence = 0.95, .threshold = 2, .reproduction_rate = NAN},
        {.confidence = 0.95,
         .threshold = 2,
         .reproduction_rate = 1,
         .history_runs = 1,
         .history_failures = 2},
    };
    for (size_t i = 0; i < sizeof bad_models / sizeof bad_models[0]; i++) {
        in.model = bad_models[i];
        assert_int_equal(rt_culprit_next(&in, &res), RT_EINVAL);
        rt_culprit_plan plan;
        assert_int_equal(rt_culprit_seed_plan(&bad_models[i], &plan), RT_EINVAL);
    }
    assert_int_equal(rt_culprit_next(NULL, &res), RT_EINVAL);
    assert_int_equal(rt_culprit_next(&in, NULL), RT_EINVAL);
}

static void test_seed_rule_numbers(void **state)
{
    (void)state;
    rt_culprit_plan plan;
    /* A solid regression, long clean history: one run, one reproduction. */
    assert_int_equal(rt_culprit_seed_plan(&solid, &plan), RT_OK);
    assert_int_equal(plan.times, 1);
    assert_int_equal(plan.reproductions, 1);
    assert_int_equal(plan.max_runs, 1);
    /* No history: the decide threshold (the seed rule). */
    rt_culprit_model m = solid;
    m.history_runs = 0;
    assert_int_equal(rt_culprit_seed_plan(&m, &plan), RT_OK);
    assert_int_equal(plan.reproductions, 2);
    assert_int_equal(plan.times, 2);
    m.threshold = 3;
    assert_int_equal(rt_culprit_seed_plan(&m, &plan), RT_OK);
    assert_int_equal(plan.reproductions, 3);
    assert_int_equal(plan.times, 3);
    /* Fewer runs for a long clean history than for none, at the same rate. */
    rt_culprit_model clean = {
        .confidence = 0.95, .threshold = 2, .reproduction_rate = 0.5, .history_runs = 5000};
    rt_culprit_model unknown = clean;
    unknown.history_runs = 0;
    rt_culprit_plan p_clean, p_unknown;
    assert_int_equal(rt_culprit_seed_plan(&clean, &p_clean), RT_OK);
    assert_int_equal(rt_culprit_seed_plan(&unknown, &p_unknown), RT_OK);
    assert_true(p_clean.times < p_unknown.times);
    assert_int_equal(p_clean.reproductions, 1);
    assert_int_equal(p_clean.times, 5); /* 0.5^5 = 0.031 <= 0.05, 0.5^4 = 0.0625 */
    /* The rule holds its promise: a bad push shows k reproductions in n runs with
     * probability >= c, for rates from 0.05 to 1. */
    for (double r = 0.05; r <= 1.0; r += 0.05) {
        m = (rt_culprit_model){.confidence = 0.95, .threshold = 2, .reproduction_rate = r};
        assert_int_equal(rt_culprit_seed_plan(&m, &plan), RT_OK);
        if (plan.times < RT_CULPRIT_MAX_TIMES)
            assert_true(rt_culprit_binomial_tail(plan.times, r, plan.reproductions) >= 0.95);
        if (plan.times > plan.reproductions)
            assert_true(rt_culprit_binomial_tail(plan.times - 1, r, plan.reproductions) < 0.95);
    }
    /* The estimate of r from the failing push. */
    assert_true(fabs(rt_culprit_reproduction_rate(6, 6) - 5.0 / 6) < 1e-12);
    assert_true(fabs(rt_culprit_reproduction_rate(6, 3) - 2.0 / 6) < 1e-12);
    assert_true(fabs(rt_culprit_reproduction_rate(1, 1) - 0.5) < 1e-12);
    assert_true(rt_culprit_reproduction_rate(0, 0) == 0.0);
    assert_true(rt_culprit_reproduction_rate(3, 4) == 0.0);
    /* Binomial tails. */
    assert_true(fabs(rt_culprit_binomial_tail(5, 0.75, 2) - (1 - 0.015625)) < 1e-9);
    assert_true(rt_culprit_binomial_tail(3, 0.5, 0) == 1.0);
    assert_true(rt_culprit_binomial_tail(3, 0.5, 4) == 0.0);
    assert_true(fabs(rt_culprit_binomial_tail(2000, 0.001, 1) - (1 - pow(0.999, 2000))) < 1e-9);
    assert_true(fabs(rt_culprit_push_confidence(0.95, 2) - 0.95) < 1e-12);
    assert_true(fabs(rt_culprit_push_confidence(0.95, 22) - 0.99) < 1e-12);
}

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static void test_property_range_holds_the_culprit_under_consistent_outcomes(void **state)
{
    (void)state;
    uint64_t rng = 24;
    for (int i = 0; i < 1000; i++) {
        size_t skipped = 1 + splitmix(&rng) % 40;
        size_t count = skipped + 2;
        int first_runs = (int)(splitmix(&rng) % 3); /* never ran, ran once, ran twice */
        long truth = (long)(splitmix(&rng) % (count - (first_runs ? 1 : 0))) + (first_runs ? 1 : 0);
        if (first_runs && splitmix(&rng) % 10 == 0) truth = 0;
        rt_culprit_model model = {.confidence = 0.8 + 0.19 * (double)(splitmix(&rng) % 100) / 100,
                                  .threshold = 1 + (int)(splitmix(&rng) % 3),
                                  .reproduction_rate =
                                      0.2 + 0.8 * (double)(splitmix(&rng) % 101) / 100,
                                  .history_runs = (long)(splitmix(&rng) % 3000)};
        model.history_failures = model.history_runs ? (long)(splitmix(&rng) % 3) : 0;
        rt_culprit_push pushes[RT_CULPRIT_MAX_PUSHES];
        window(pushes, count, first_runs);
        if (truth == 0) pushes[0].reproduced = first_runs; /* consistent: it reproduced */
        int rounds, reruns;
        long jobs;
        rt_culprit_result res = search(pushes, count, &model, truth, RT_CULPRIT_MAX_JOBS, &rounds,
                                       &jobs, NULL, &reruns);
        /* search() checked the range at every step and the answer at the end. */
        assert_true(res.status == RT_CULPRIT_FOUND || res.status == RT_CULPRIT_BEFORE_WINDOW);
        /* ceil(log2(K)) rounds, K the possible culprits: the skipped pushes and the failing
         * one, and the first push when it is not presumed good. An ambiguous probe (a test
         * with a short flaky history: its good pushes could show as many reproductions) is
         * decided in its own round: no round only adds runs to a push already probed. */
        long possible = (long)skipped + 1 + (first_runs && truth ? 0 : 1);
        int bound = 0;
        while ((1L << bound) < possible) bound++;
        if (rounds > bound)
            fail_msg("case %d: %d rounds (%d reruns) over %ld possible culprits (truth %ld, first "
                     "runs %d, "
                     "c %g T %d r %g H %ld F %ld)",
                     i, rounds, reruns, possible, truth, first_runs, model.confidence,
                     model.threshold, model.reproduction_rate, model.history_runs,
                     model.history_failures);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_candidate_names_the_failing_push_at_no_cost),
        cmocka_unit_test(test_six_skipped_pushes_bisect_middle_first_within_three_rounds),
        cmocka_unit_test(test_worked_example_of_the_header),
        cmocka_unit_test(test_culprit_before_window),
        cmocka_unit_test(test_budget_exhausted_returns_the_range),
        cmocka_unit_test(test_ambiguous_probe_of_a_flaky_test_is_decided_in_its_own_round),
        cmocka_unit_test(test_waits_while_the_probes_runs_are_pending),
        cmocka_unit_test(test_bad_push_older_than_a_good_one_is_ignored),
        cmocka_unit_test(test_a_plugged_in_classification_is_used),
        cmocka_unit_test(test_invalid_input_is_refused),
        cmocka_unit_test(test_seed_rule_numbers),
        cmocka_unit_test(test_property_range_holds_the_culprit_under_consistent_outcomes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
