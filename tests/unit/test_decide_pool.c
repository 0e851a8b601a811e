/* SPDX-License-Identifier: MPL-2.0 */
/* test_decide_pool.c - the pooled model (common/core/decide_pool.h): with one configuration
 * it is the adaptive model; a test failing on 3 configurations of a push and passing on 4
 * is a regression within one round; failing on 1 and passing on 6 is intermittent with
 * retriggers of that configuration only; passes lower the posterior, reproductions raise
 * it; the budget holds for the whole test; bad input is rejected. */
#include "support/util.h"

#include <jansson.h>
#include <math.h>
#include <string.h>

#include "common/core/decide_model.h"
#include "common/core/decide_pool.h"
#include "common/core/decide_sim.h"

static rt_decide_settings settings(void)
{
    rt_decide_settings s;
    rt_decide_settings_default(&s);
    return s;
}

/* Rounds of the pooled policy until a verdict: every retrigger it asks of configuration c
 * fails when reproduces[c]. Returns the rounds; *asked[c] the retriggers asked of c. */
static size_t run_rounds(const rt_decide_settings *s, rt_decide_history history,
                         rt_pool_config *configs, size_t n, const bool *reproduces,
                         rt_pool_result *out, size_t *asked)
{
    size_t rounds = 0, spent = 0;
    memset(asked, 0, n * sizeof *asked);
    for (;;) {
        rt_pool_input in = {.history = history, .configs = configs, .nconfigs = n, .spent = spent};
        assert_int_equal(rt_pool_evaluate(s, &in, out), RT_OK);
        if (out->verdict != RT_VERDICT_NOT_YET) return rounds;
        assert_true(out->more_total > 0);
        for (size_t c = 0; c < n; c++) {
            configs[c].retriggers += out->more[c];
            if (reproduces[c]) configs[c].reproduced += out->more[c];
            asked[c] += out->more[c];
            spent += out->more[c];
        }
        assert_true(spent <= (size_t)s->max_retriggers);
        rounds++;
    }
}

static void test_one_configuration_is_the_adaptive_model(void **state)
{
    (void)state;
    rt_decide_settings s = settings();
    const rt_decide_history histories[] = {{0, 0, -1}, {1000, 0, -1}, {1000, 400, -1}};
    for (size_t h = 0; h < 3; h++)
        for (size_t n = 1; n <= 6; n++)
            for (size_t k = 0; k <= n; k++) {
                rt_pool_config one = {.failed = true, .retriggers = n, .reproduced = k};
                rt_pool_input in = {
                    .history = histories[h], .configs = &one, .nconfigs = 1, .spent = n};
                rt_decide_line line = {.history = histories[h], .reproduced = k};
                double want = rt_decide_line_posterior(&s, &line, n);
                double got = rt_pool_posterior(&s, &in);
                if (fabs(got - want) > 1e-9)
                    fail_msg("h %zu k %zu n %zu: %g != %g", h, k, n, got, want);
            }
}

static void test_three_failing_four_passing_is_a_regression_within_one_round(void **state)
{
    (void)state;
    rt_decide_settings s = settings();
    const rt_decide_history histories[] = {{0, 0, -1}, {200, 2, -1}, {1000, 0, -1}};
    for (size_t h = 0; h < 3; h++) {
        rt_pool_config configs[7] = {{.failed = true},  {.failed = false}, {.failed = true},
                                     {.failed = false}, {.failed = true},  {.failed = false},
                                     {.failed = false}};
        const bool reproduces[7] = {true, false, true, false, true, false, false};
        rt_pool_result r;
        size_t asked[7];
        size_t rounds = run_rounds(&s, histories[h], configs, 7, reproduces, &r, asked);
        assert_int_equal(r.verdict, RT_VERDICT_REGRESSION);
        assert_string_equal(r.reason, "confident");
        assert_true(rounds <= 1);
        for (size_t c = 0; c < 7; c++)
            if (!configs[c].failed) assert_int_equal(asked[c], 0);
    }
    /* A long clean history: the push's own runs suffice, no retrigger at all. */
    rt_pool_config configs[7] = {
        {.failed = true}, {.failed = true}, {.failed = true}, {0}, {0}, {0}, {0}};
    rt_pool_input in = {.history = {1000, 0, -1}, .configs = configs, .nconfigs = 7};
    rt_pool_result r;
    assert_int_equal(rt_pool_evaluate(&s, &in, &r), RT_OK);
    assert_int_equal(r.verdict, RT_VERDICT_REGRESSION);
    assert_int_equal(r.more_total, 0);
}

static void test_one_failing_six_passing_is_intermittent_retriggering_only_it(void **state)
{
    (void)state;
    rt_decide_settings s = settings();
    /* A test with a long clean record: a failure on one configuration of seven is worth a
     * look, and the look is at that configuration alone. */
    rt_pool_config configs[7] = {{0}, {0}, {0}, {.failed = true}, {0}, {0}, {0}};
    const bool reproduces[7] = {false};
    rt_pool_result r;
    size_t asked[7];
    size_t rounds =
        run_rounds(&s, (rt_decide_history){1000, 0, -1}, configs, 7, reproduces, &r, asked);
    assert_int_equal(r.verdict, RT_VERDICT_INTERMITTENT);
    assert_int_equal(r.opening, 3);
    assert_true(rounds >= 1);
    assert_true(asked[3] >= 1);
    for (size_t c = 0; c < 7; c++)
        if (c != 3) assert_int_equal(asked[c], 0);
    /* The same evidence on one configuration alone is not enough: the six passes decided. */
    rt_pool_config alone = {.failed = true, .retriggers = asked[3]};
    rt_pool_input in = {
        .history = {1000, 0, -1}, .configs = &alone, .nconfigs = 1, .spent = asked[3]};
    assert_true(rt_pool_posterior(&s, &in) > 1 - s.confidence);
}

static void test_passes_lower_the_posterior_and_reproductions_raise_it(void **state)
{
    (void)state;
    rt_decide_settings s = settings();
    const rt_decide_history histories[] = {{0, 0, -1}, {100, 10, -1}, {1000, 0, -1}};
    for (size_t h = 0; h < 3; h++) {
        rt_pool_config configs[RT_POOL_MAX_CONFIGS] = {{.failed = true}, {.failed = true}};
        double last = 2;
        for (size_t n = 2; n <= 12; n++) {
            rt_pool_input in = {.history = histories[h], .configs = configs, .nconfigs = n};
            double p = rt_pool_posterior(&s, &in);
            if (!(p < last)) fail_msg("history %zu: %zu configurations, p %g >= %g", h, n, p, last);
            last = p;
        }
        /* Retriggers of a failing configuration: a pass lowers, a reproduction raises. */
        rt_pool_config two[3] = {{.failed = true, .retriggers = 1}, {.failed = false}};
        rt_pool_input in = {.history = histories[h], .configs = two, .nconfigs = 2, .spent = 1};
        double passed = rt_pool_posterior(&s, &in);
        two[0].reproduced = 1;
        double reproduced = rt_pool_posterior(&s, &in);
        two[0].retriggers = two[0].reproduced = 0;
        in.spent = 0;
        double none = rt_pool_posterior(&s, &in);
        assert_true(passed < none);
        assert_true(reproduced > none);
    }
}

static void test_the_budget_holds_for_the_whole_test(void **state)
{
    (void)state;
    rt_decide_settings s = settings();
    s.max_retriggers = 4;
    /* A 40% flaky test failing on 2 of 3: undecided for long; half its retriggers fail. */
    for (size_t spent = 0; spent <= 4; spent++) {
        rt_pool_config configs[3] = {
            {.failed = true, .retriggers = spent / 2, .reproduced = spent / 4},
            {.failed = true, .retriggers = spent - spent / 2},
            {.failed = false}};
        rt_pool_input in = {
            .history = {1000, 400, -1}, .configs = configs, .nconfigs = 3, .spent = spent};
        rt_pool_result r;
        assert_int_equal(rt_pool_evaluate(&s, &in, &r), RT_OK);
        if (r.verdict == RT_VERDICT_NOT_YET) {
            assert_true(r.more_total >= 1 && r.more_total <= 4 - spent);
            assert_int_equal(r.more[2], 0);
        }
        if (spent == 4) {
            assert_int_not_equal(r.verdict, RT_VERDICT_NOT_YET);
            assert_int_equal(r.more_total, 0);
        }
    }
    /* At the cap the likelier hypothesis, low-confidence: a test without history failing
     * on two configurations, one of them retriggered 4 times. */
    for (size_t k = 1; k <= 2; k++) {
        rt_pool_config configs[2] = {{.failed = true, .retriggers = 4, .reproduced = k},
                                     {.failed = true}};
        rt_pool_input in = {.history = {0, 0, -1}, .configs = configs, .nconfigs = 2, .spent = 4};
        rt_pool_result r;
        assert_int_equal(rt_pool_evaluate(&s, &in, &r), RT_OK);
        assert_string_equal(r.reason, "low-confidence");
        assert_int_equal(r.verdict, k == 2 ? RT_VERDICT_REGRESSION : RT_VERDICT_INTERMITTENT);
        assert_true((r.p_regression >= 0.5) == (k == 2));
    }
}

/* A task's configuration for the pooled set: platform and the label's build type. */
static void test_config_name_is_platform_and_build_type(void **state)
{
    (void)state;
    char name[64];
    assert_int_equal(rt_pool_config_name("linux1804-64", "test-linux1804-64/debug-mochitest-1",
                                         name, sizeof name),
                     RT_OK);
    assert_string_equal(name, "linux1804-64/debug");
    assert_int_equal(rt_pool_config_name("android-em-7-0-x86_64",
                                         "test-android-em-7.0-x86_64-qr/opt-geckoview-junit", name,
                                         sizeof name),
                     RT_OK);
    assert_string_equal(name, "android-em-7-0-x86_64/opt");
    assert_int_equal(rt_pool_config_name("windows11-64", "no build type", name, sizeof name),
                     RT_OK);
    assert_string_equal(name, "windows11-64");
    assert_int_equal(rt_pool_config_name("windows11-64", NULL, name, sizeof name), RT_OK);
    assert_string_equal(name, "windows11-64");
    assert_int_equal(rt_pool_config_name("", "test-x/opt-a", name, sizeof name), RT_EINVAL);
    assert_int_equal(rt_pool_config_name("linux1804-64", "test-x/debug-a", name, 10), RT_EINVAL);
    assert_string_equal(name, "");
}

static void test_invalid_input_is_rejected(void **state)
{
    (void)state;
    rt_decide_settings s = settings();
    rt_pool_result r;
    rt_pool_config passing[2] = {{.failed = false}, {.failed = false}};
    rt_pool_input in = {.configs = passing, .nconfigs = 2};
    assert_int_equal(rt_pool_evaluate(&s, &in, &r), RT_EINVAL); /* none failed */
    assert_string_equal(r.reason, "invalid-input");
    rt_pool_config bad = {.failed = true, .retriggers = 1, .reproduced = 2};
    in = (rt_pool_input){.configs = &bad, .nconfigs = 1, .spent = 1};
    assert_int_equal(rt_pool_evaluate(&s, &in, &r), RT_EINVAL); /* reproduced > retriggers */
    bad = (rt_pool_config){.failed = true, .retriggers = 2, .pending = 1};
    in.spent = 2;
    assert_int_equal(rt_pool_evaluate(&s, &in, &r), RT_EINVAL); /* more than spent */
    in.nconfigs = 0;
    assert_int_equal(rt_pool_evaluate(&s, &in, &r), RT_EINVAL);
    in.nconfigs = RT_POOL_MAX_CONFIGS + 1;
    assert_int_equal(rt_pool_evaluate(&s, &in, &r), RT_EINVAL);
    s.confidence = 1.5;
    in = (rt_pool_input){.configs = &bad, .nconfigs = 1, .spent = 3};
    assert_int_equal(rt_pool_evaluate(&s, &in, &r), RT_EINVAL);
}

/* ---- push-level simulation ---- */

static void test_push_generator_is_deterministic_and_of_its_shape(void **state)
{
    (void)state;
    rt_sim_rng a, b;
    rt_sim_rng_seed(&a, 3);
    rt_sim_rng_seed(&b, 3);
    size_t regressions = 0, single = 0, all_failed_regressions = 0, many_failed_intermittents = 0;
    for (size_t i = 0; i < 4000; i++) {
        rt_sim_push_case x, y;
        rt_sim_generate_push(&a, 0.15, &x);
        rt_sim_generate_push(&b, 0.15, &y);
        assert_memory_equal(&x, &y, sizeof x);
        assert_true(x.nconfigs >= 1 && x.nconfigs <= 10);
        size_t failing = 0;
        for (size_t c = 0; c < x.nconfigs; c++) {
            failing += x.configs[c].failed;
            assert_int_equal(x.configs[c].noutcomes, RT_SIM_OUTCOMES);
            assert_non_null(strchr(x.configs[c].name, '/'));
            for (size_t d = 0; d < c; d++)
                assert_string_not_equal(x.configs[c].name, x.configs[d].name);
        }
        assert_true(failing >= 1);
        assert_true(x.history.failures >= 0 && x.history.failures <= x.history.runs);
        regressions += x.regression;
        single += x.nconfigs == 1;
        if (x.regression && failing == x.nconfigs && x.nconfigs > 1) all_failed_regressions++;
        if (!x.regression && failing >= 3) many_failed_intermittents++;
    }
    assert_true(regressions > 480 && regressions < 720);
    /* A tenth of tests ran on one configuration, but fewer of those fail on the push: the
     * intermittents among them are rarer (a test is looked at because it failed). */
    assert_true(single > 80 && single < 300);
    /* Regressions mostly fail everywhere they broke; intermittents mostly somewhere. */
    assert_true(all_failed_regressions > regressions / 4);
    assert_true(many_failed_intermittents > 0 && many_failed_intermittents < 4000 / 4);
}

static void test_push_case_json_round_trip_and_errors(void **state)
{
    (void)state;
    rt_sim_rng rng;
    rt_sim_rng_seed(&rng, 9);
    rt_sim_push_case c, back;
    rt_sim_generate_push(&rng, 0.5, &c);
    json_t *doc = rt_sim_push_case_json(&c);
    assert_non_null(doc);
    char errstr[RT_ERRSTR_SIZE] = "";
    assert_int_equal(rt_sim_push_case_parse(doc, &back, errstr), RT_OK);
    assert_int_equal(back.nconfigs, c.nconfigs);
    assert_int_equal(back.regression, c.regression);
    for (size_t i = 0; i < c.nconfigs; i++) {
        assert_string_equal(back.configs[i].name, c.configs[i].name);
        assert_int_equal(back.configs[i].failed, c.configs[i].failed);
        assert_memory_equal(back.configs[i].outcomes, c.configs[i].outcomes, RT_SIM_OUTCOMES);
    }
    json_decref(doc);
    static const struct {
        const char *text, *names;
    } bad[] = {
        {"{\"truth\": \"regression\", \"history\": {\"runs\": 1, \"failures\": 0}}", "configs"},
        {"{\"truth\": \"maybe\", \"history\": {\"runs\": 1, \"failures\": 0}, \"configs\": []}",
         "truth"},
        {"{\"truth\": \"regression\", \"history\": {\"runs\": 1, \"failures\": 0}, \"configs\": "
         "[]}",
         "configs"},
        {"{\"truth\": \"regression\", \"history\": {\"runs\": 1, \"failures\": 0}, \"configs\": "
         "[{\"name\": \"a/opt\", \"failed\": false, \"outcomes\": []}]}",
         "no configuration failed"},
        {"{\"truth\": \"regression\", \"history\": {\"runs\": 1, \"failures\": 0}, \"configs\": "
         "[{\"name\": \"a/opt\", \"failed\": true, \"outcomes\": []}]}",
         "outcomes"},
        {"{\"truth\": \"regression\", \"history\": {\"runs\": 1, \"failures\": 0}, \"configs\": "
         "[{\"name\": \"a/opt\", \"failed\": \"yes\", \"outcomes\": [true]}]}",
         "failed"},
        {"{\"truth\": \"regression\", \"history\": {\"runs\": 1, \"failures\": 0}, \"configs\": "
         "[{\"name\": \"a/opt\", \"failed\": true, \"outcomes\": [true]}, {\"name\": \"a/opt\", "
         "\"failed\": false, \"outcomes\": []}]}",
         "twice"},
        {"{\"truth\": \"regression\", \"history\": {\"runs\": 1, \"failures\": 0}, \"configs\": "
         "[{\"failed\": true, \"outcomes\": [true]}]}",
         "name"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_t *j = json_loads(bad[i].text, 0, NULL);
        assert_non_null(j);
        errstr[0] = 0;
        assert_int_equal(rt_sim_push_case_parse(j, &back, errstr), RT_EPROTO);
        if (!strstr(errstr, bad[i].names))
            fail_msg("case %zu: '%s' lacks '%s'", i, errstr, bad[i].names);
        json_decref(j);
    }
}

static rt_sim_config config(const char *name, bool failed, bool reproduces)
{
    rt_sim_config c = {.failed = failed, .noutcomes = RT_SIM_OUTCOMES, .rate = -1};
    snprintf(c.name, sizeof c.name, "%s", name);
    for (size_t i = 0; i < c.noutcomes; i++) c.outcomes[i] = reproduces;
    return c;
}

static void test_per_task_policies_fold_per_failing_configuration(void **state)
{
    (void)state;
    rt_decide_settings model = settings();
    rt_sim sim;
    assert_int_equal(rt_sim_init(&sim, &model, 5, 2), RT_OK);
    /* Fails on a and c; a's retriggers never reproduce, c's always do. */
    rt_sim_push_case c = {.regression = true, .history = {0, 0, -1}, .nconfigs = 3};
    c.configs[0] = config("a/opt", true, false);
    c.configs[1] = config("b/opt", false, false);
    c.configs[2] = config("c/opt", true, true);
    rt_sim_push_result r;
    assert_int_equal(rt_sim_run_push(&sim, RT_POLICY_SEED, &c, &r), RT_OK);
    assert_int_equal(r.result.verdict, RT_VERDICT_REGRESSION); /* c's set says so */
    assert_int_equal(r.result.retriggers, 10);                 /* 5 + 5 */
    assert_int_equal(r.result.rounds, 1);                      /* side by side */
    assert_int_equal(r.config_retriggers[0], 5);
    assert_int_equal(r.config_retriggers[1], 0);
    assert_int_equal(r.config_retriggers[2], 5);
    /* Neither reproducing: intermittent. */
    c.configs[2] = config("c/opt", true, false);
    assert_int_equal(rt_sim_run_push(&sim, RT_POLICY_ADAPTIVE, &c, &r), RT_OK);
    assert_int_equal(r.result.verdict, RT_VERDICT_INTERMITTENT);
    assert_int_equal(r.config_retriggers[1], 0);
    /* Pooled on a per-task case is the adaptive run. */
    rt_sim_case task = {.regression = true, .history = {1000, 0, -1}, .noutcomes = 10, .rate = -1};
    task.outcomes[0] = true;
    task.outcomes[2] = true;
    rt_sim_push_case one;
    rt_sim_push_from_case(&task, &one);
    rt_sim_result adaptive;
    assert_int_equal(rt_sim_run(&sim, RT_POLICY_ADAPTIVE, &task, &adaptive), RT_OK);
    assert_int_equal(rt_sim_run_push(&sim, RT_SIM_POLICY_POOLED, &one, &r), RT_OK);
    assert_int_equal(r.result.verdict, adaptive.verdict);
    assert_int_equal(r.result.retriggers, adaptive.retriggers);
    assert_int_equal(r.result.rounds, adaptive.rounds);
    assert_int_equal(rt_sim_run_push(&sim, RT_SIM_POLICY_COUNT, &one, &r), RT_EINVAL);
    rt_sim_free(&sim);
}

static void test_pooled_beats_adaptive_on_a_generated_push_sample(void **state)
{
    (void)state;
    rt_decide_settings model = settings();
    rt_sim sim;
    assert_int_equal(rt_sim_init(&sim, &model, 5, 2), RT_OK);
    rt_sim_rng rng;
    rt_sim_rng_seed(&rng, 21);
    rt_sim_tally adaptive = {0}, pooled = {0};
    for (size_t i = 0; i < 1500; i++) {
        rt_sim_push_case c;
        rt_sim_generate_push(&rng, 0.15, &c);
        rt_sim_push_result a, p;
        assert_int_equal(rt_sim_run_push(&sim, RT_POLICY_ADAPTIVE, &c, &a), RT_OK);
        assert_int_equal(rt_sim_run_push(&sim, RT_SIM_POLICY_POOLED, &c, &p), RT_OK);
        assert_true(p.result.retriggers <= (size_t)model.max_retriggers);
        for (size_t j = 0; j < c.nconfigs; j++)
            if (!c.configs[j].failed) assert_int_equal(p.config_retriggers[j], 0);
        rt_sim_tally_add_push(&adaptive, &c, &a.result);
        rt_sim_tally_add_push(&pooled, &c, &p.result);
    }
    assert_true(pooled.correct > adaptive.correct);
    assert_true(2 * pooled.retriggers < adaptive.retriggers);
    assert_true(pooled.without_retriggers > pooled.cases / 3);
    assert_int_equal(adaptive.without_retriggers, 0);
    rt_sim_free(&sim);
}

/* The label family: the suite after the build type, the chunk number dropped. */
static void test_label_family(void **state)
{
    (void)state;
    char out[64];
    assert_int_equal(
        rt_pool_label_family("test-linux1804-64/debug-mochitest-browser-chrome-3", out, sizeof out),
        RT_OK);
    assert_string_equal(out, "mochitest-browser-chrome");
    assert_int_equal(rt_pool_label_family("test-windows11-64-shippable-qr/opt-mochitest-"
                                          "browser-chrome-swr-12",
                                          out, sizeof out),
                     RT_OK);
    assert_string_equal(out, "mochitest-browser-chrome-swr");
    /* No chunk: the whole suite; a suite that is only a number is kept. */
    assert_int_equal(rt_pool_label_family("test-macosx1015-64/opt-xpcshell", out, sizeof out),
                     RT_OK);
    assert_string_equal(out, "xpcshell");
    assert_int_equal(rt_pool_label_family("test-a/opt-42", out, sizeof out), RT_OK);
    assert_string_equal(out, "42");
    /* Chunk-like digits not after a '-' stay. */
    assert_int_equal(rt_pool_label_family("test-a/debug-web-platform-tests-h2", out, sizeof out),
                     RT_OK);
    assert_string_equal(out, "web-platform-tests-h2");
    /* No build type, nothing after it, or too long: none. */
    static const char *const bad[] = {"build-linux64", "test-a/debug", "test-a/debug-",
                                      "test-a/-mochitest-1", NULL};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(rt_pool_label_family(bad[i], out, sizeof out), RT_EINVAL);
        assert_string_equal(out, "");
    }
    assert_int_equal(rt_pool_label_family("test-a/opt-mochitest-1", out, 9), RT_EINVAL);
    assert_int_equal(rt_pool_label_family("test-a/opt-mochitest-1", out, 10), RT_OK);
    assert_string_equal(out, "mochitest");
}

/* The settle window ends early only when every task of the push has finished or runs on a
 * configuration whose result is known. */
static void test_settle_done_when_the_push_tasks_finished(void **state)
{
    (void)state;
    const char *const known[] = {"linux1804-64/debug", "windows11-64/opt"};
    rt_pool_push_task tasks[] = {{"linux1804-64/debug", false, false}, /* a member's */
                                 {"windows11-64/opt", false, false},   /* another chunk */
                                 {"macosx1015-64/opt", true, false},
                                 {"linux1804-64/opt", true, false}};
    size_t n = sizeof tasks / sizeof *tasks;
    assert_true(rt_pool_settle_done(tasks, n, known, 2));
    /* One still running on a configuration not heard of: wait. */
    tasks[3].finished = false;
    assert_false(rt_pool_settle_done(tasks, n, known, 2));
    /* Its configuration's group result comes in from another of its tasks: done. */
    const char *const more[] = {"linux1804-64/debug", "windows11-64/opt", "linux1804-64/opt"};
    assert_true(rt_pool_settle_done(tasks, n, more, 3));
    /* Nothing known of the configurations: every task must have finished. */
    assert_false(rt_pool_settle_done(tasks, n, NULL, 0));
    for (size_t i = 0; i < n; i++) tasks[i].finished = true;
    assert_true(rt_pool_settle_done(tasks, n, NULL, 0));
    /* A task that failed the test waits for its configuration's member set. */
    tasks[2].failed = true;
    assert_false(rt_pool_settle_done(tasks, n, NULL, 0));
    assert_false(rt_pool_settle_done(tasks, n, more, 3));
    const char *const joined[] = {"macosx1015-64/opt"};
    assert_true(rt_pool_settle_done(tasks, n, joined, 1));
    /* No task listed: only the window's time ends the wait. */
    assert_false(rt_pool_settle_done(tasks, 0, known, 2));
    assert_false(rt_pool_settle_done(NULL, 0, known, 2));
    /* A task of no configuration waits for its run. */
    rt_pool_push_task unnamed = {NULL, false, false};
    assert_false(rt_pool_settle_done(&unnamed, 1, known, 2));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_configuration_is_the_adaptive_model),
        cmocka_unit_test(test_three_failing_four_passing_is_a_regression_within_one_round),
        cmocka_unit_test(test_one_failing_six_passing_is_intermittent_retriggering_only_it),
        cmocka_unit_test(test_passes_lower_the_posterior_and_reproductions_raise_it),
        cmocka_unit_test(test_the_budget_holds_for_the_whole_test),
        cmocka_unit_test(test_config_name_is_platform_and_build_type),
        cmocka_unit_test(test_invalid_input_is_rejected),
        cmocka_unit_test(test_push_generator_is_deterministic_and_of_its_shape),
        cmocka_unit_test(test_push_case_json_round_trip_and_errors),
        cmocka_unit_test(test_per_task_policies_fold_per_failing_configuration),
        cmocka_unit_test(test_pooled_beats_adaptive_on_a_generated_push_sample),
        cmocka_unit_test(test_label_family),
        cmocka_unit_test(test_settle_done_when_the_push_tasks_finished),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
