/* SPDX-License-Identifier: MPL-2.0 */
/* test_decide_model.c - the failure model (common/decide_model.h) on posteriors worked out
 * by hand: a test without history, one with 1,000 clean runs, one failing 40% of the
 * time; more reproductions never lower p_regression; hints move the prior, never past the
 * evidence; set verdicts, batch sizes, the population fit and the prior estimate. Then the
 * policies (decide_policy.h): seed gives common/verdict.c's answers on its own table of
 * cases, mozci and the shadow verdicts; and the simulation (decide_sim.h): the generator
 * is deterministic for a seed and seed's known error rates come out of it. */
#include "support/util.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/bugsug.h"
#include "common/core/decide_model.h"
#include "common/core/decide_policy.h"
#include "common/core/decide_sim.h"
#include "common/core/verdict.h"
#include "verdict_cases.h"

/* ---- hand computation, without lgamma ---- */

/* M(a, b; k, n) = E[x^k (1 - x)^(n - k)] for x ~ Beta(a, b), as a product of ratios. */
static double m_product(double a, double b, int k, int n)
{
    double p = 1;
    for (int i = 0; i < k; i++) p *= (a + i) / (a + b + i);
    for (int j = 0; j < n - k; j++) p *= (b + j) / (a + b + k + j);
    return p;
}

/* M_L for k = n = 2, written out: E[(L + (1 - L) r)^2]. */
static double m_shifted_2_of_2(double c, double d, double floor)
{
    return floor * floor + 2 * floor * (1 - floor) * c / (c + d) +
           (1 - floor) * (1 - floor) * c * (c + 1) / ((c + d) * (c + d + 1));
}

static double logit(double p) { return log(p / (1 - p)); }

static double posterior(const rt_decide_settings *s, long runs, long failures, size_t k, size_t n)
{
    rt_decide_line line = {.history = {runs, failures, -1}, .reproduced = k};
    return rt_decide_line_posterior(s, &line, n);
}

#define assert_near(x, y, tol)                                                                     \
    do {                                                                                           \
        double x_ = (x), y_ = (y);                                                                 \
        if (!(fabs(x_ - y_) <= (tol))) fail_msg("%s = %.9g, expected %.9g", #x, x_, y_);           \
    } while (0)

/* ---- posteriors worked out by hand (decide_model.h's worked example) ---- */

static void test_no_history_two_reproductions_are_a_regression(void **state)
{
    (void)state;
    rt_decide_settings s;
    rt_decide_settings_default(&s);
    /* F = Beta(1.1, 20), L = F's mean; the history term is 0. */
    double floor = 1.1 / 21.1;
    double r = 0.5 * m_shifted_2_of_2(20, 0.3, floor) + 0.5 * m_shifted_2_of_2(2, 2, floor);
    double i = (1.1 / 21.1) * (2.1 / 22.1);
    assert_near(r, 0.647232, 1e-6);
    assert_near(i, 0.004954, 1e-6);
    rt_decide_line line = {.history = {0, 0, -1}, .reproduced = 2};
    assert_near(rt_decide_line_log_odds(&s, &line, 2), logit(0.15) + log(r / i), 1e-9);
    assert_near(posterior(&s, 0, 0, 2, 2), 0.958431, 1e-6);
    assert_near(posterior(&s, 0, 0, 1, 2), 0.289244, 1e-6); /* need more */
    assert_near(posterior(&s, 0, 0, 0, 2), 0.025801, 1e-6); /* intermittent */
    assert_near(posterior(&s, 0, 0, 0, 0), 0.15, 1e-12);    /* the prior, untouched */
    assert_int_equal(rt_decide_first_batch(&s, &line, 1, 0), 2);
}

static void test_1000_clean_runs_make_a_failure_likely_a_regression(void **state)
{
    (void)state;
    rt_decide_settings s;
    rt_decide_settings_default(&s);
    /* The history term: log[0.95 M(A; 0, 1000) + 0.05 M(F; 0, 1000)] - log M(F; 0, 1000). */
    double ma = m_product(0.1, 20, 0, 1000), mf = m_product(1.1, 20, 0, 1000);
    assert_near(ma, 0.6734, 1e-4);
    assert_near(mf, 0.01327, 1e-5);
    double history = log(0.95 * ma + 0.05 * mf) - log(mf);
    assert_near(history, 3.877, 1e-3);
    double prior = 1 / (1 + exp(-(logit(0.15) + history)));
    assert_near(posterior(&s, 1000, 0, 0, 0), prior, 1e-9);
    assert_near(prior, 0.894926, 1e-6);
    /* Two reproductions: I = M(1.1, 1020; 2, 2), tiny. */
    assert_near(m_product(1.1, 1020, 2, 2), 2.21335e-6, 1e-10);
    assert_true(posterior(&s, 1000, 0, 2, 2) > 0.999999);
    assert_near(posterior(&s, 1000, 0, 0, 2), 0.561674, 1e-6);
    assert_near(posterior(&s, 1000, 0, 0, 10), 0.140733, 1e-6);
    rt_decide_line line = {.history = {1000, 0, -1}};
    assert_int_equal(rt_decide_first_batch(&s, &line, 1, 0), 2);

    /* Ten passes use every retrigger: the posterior decides, low-confidence. */
    rt_decide_input in = {.lines = &line, .nlines = 1, .compared = 10, .spent = 10};
    rt_decide_result out;
    assert_int_equal(rt_decide_evaluate(&s, &in, &out), RT_OK);
    assert_int_equal(out.verdict, RT_VERDICT_INTERMITTENT);
    assert_string_equal(out.reason, "low-confidence");
    assert_near(out.p_regression[0], 0.140733, 1e-6);
}

static void test_a_test_failing_40_percent_needs_many_reproductions(void **state)
{
    (void)state;
    rt_decide_settings s;
    rt_decide_settings_default(&s);
    double ratio = m_product(0.1, 20, 400, 1000) / m_product(1.1, 20, 400, 1000);
    assert_near(ratio, 0.0127, 1e-4);
    double history = log(0.95 * ratio + 0.05);
    assert_near(history, -2.780, 1e-3);
    assert_near(posterior(&s, 1000, 400, 0, 0), 1 / (1 + exp(-(logit(0.15) + history))), 1e-9);
    assert_near(posterior(&s, 1000, 400, 0, 0), 0.0108315, 1e-7);
    /* L = F_K's mean = 401.1 / 1021.1; I = M(401.1, 620; 2, 2). */
    double floor = 401.1 / 1021.1;
    double r = 0.5 * m_shifted_2_of_2(20, 0.3, floor) + 0.5 * m_shifted_2_of_2(2, 2, floor);
    double i = m_product(401.1, 620, 2, 2);
    assert_near(r, 0.742901, 1e-6);
    assert_near(i, 0.154534, 1e-6);
    rt_decide_line line = {.history = {1000, 400, -1}, .reproduced = 2};
    assert_near(rt_decide_line_log_odds(&s, &line, 2), logit(0.15) + history + log(r / i), 1e-9);
    assert_near(posterior(&s, 1000, 400, 2, 2), 0.0500083, 1e-6);
    assert_near(posterior(&s, 1000, 400, 5, 5), 0.406323, 1e-6);
    assert_near(posterior(&s, 1000, 400, 8, 8), 0.907801, 1e-6);
    assert_near(posterior(&s, 1000, 400, 10, 10), 0.983444, 1e-6);
    /* Two passes confirm the flake quickly. */
    assert_true(posterior(&s, 1000, 400, 0, 2) < 0.002);
}

static void test_signature_counts_replace_the_tests_when_known(void **state)
{
    (void)state;
    rt_decide_settings s;
    rt_decide_settings_default(&s);
    /* The test fails 30% of the time, never with this line: the line is new. */
    rt_decide_line test_only = {.history = {500, 150, -1}, .reproduced = 2};
    rt_decide_line with_signature = {.history = {500, 150, 0}, .reproduced = 2};
    rt_decide_line same_counts = {.history = {500, 0, -1}, .reproduced = 2};
    assert_true(rt_decide_line_posterior(&s, &with_signature, 2) >
                rt_decide_line_posterior(&s, &test_only, 2));
    assert_near(rt_decide_line_posterior(&s, &with_signature, 2),
                rt_decide_line_posterior(&s, &same_counts, 2), 1e-12);
}

/* ---- properties ---- */

static void test_more_reproductions_never_lower_p_regression(void **state)
{
    (void)state;
    static const rt_decide_beta populations[] = {{1.1, 20}, {0.37, 4.09}, {1.19, 4.41}, {3, 3}};
    static const long runs[] = {0, 1, 3, 10, 30, 100, 1000, 100000};
    static const double rates[] = {0, 0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 1};
    rt_decide_settings s;
    rt_decide_settings_default(&s);
    size_t checked = 0;
    for (size_t f = 0; f < sizeof populations / sizeof populations[0]; f++) {
        s.flake_failing = populations[f];
        assert_int_equal(rt_decide_settings_check(&s), RT_OK);
        for (size_t a = 0; a < sizeof runs / sizeof runs[0]; a++) {
            for (size_t b = 0; b < sizeof rates / sizeof rates[0]; b++) {
                for (unsigned hints = 0; hints < 8; hints += 7) {
                    for (size_t n = 1; n <= 20; n++) {
                        double before = -INFINITY;
                        for (size_t k = 0; k <= n; k++) {
                            rt_decide_line line = {
                                .history = {runs[a], (long)(rates[b] * (double)runs[a] + 0.5), -1},
                                .reproduced = k,
                                .hints = hints};
                            double lo = rt_decide_line_log_odds(&s, &line, n);
                            if (!(lo >= before - 1e-9))
                                fail_msg("F=(%g,%g) N=%ld K=%.0f%%: %zu of %zu gives %.9g < %.9g",
                                         populations[f].alpha, populations[f].beta, runs[a],
                                         rates[b] * 100, k, n, lo, before);
                            before = lo;
                            checked++;
                        }
                    }
                }
            }
        }
    }
    assert_true(checked > 100000);
}

static void test_extreme_counts_stay_finite(void **state)
{
    (void)state;
    rt_decide_settings s;
    rt_decide_settings_default(&s);
    s.max_retriggers = RT_DECIDE_MAX_RETRIGGERS;
    for (size_t k = 0; k <= 64; k += 8) {
        double p = posterior(&s, 1000000, 400000, k, 64);
        assert_true(isfinite(p) && p >= 0 && p <= 1);
        p = posterior(&s, 1000000, 0, k, 64);
        assert_true(isfinite(p) && p >= 0 && p <= 1);
    }
    assert_true(posterior(&s, 1000000, 0, 64, 64) > 0.999999);
    assert_true(posterior(&s, 1000000, 400000, 0, 64) < 1e-4);
}

static void test_hints_move_the_prior_but_reproductions_still_decide(void **state)
{
    (void)state;
    rt_decide_settings s;
    rt_decide_settings_default(&s);
    rt_decide_line plain = {.history = {0, 0, -1}, .reproduced = 2};
    double p_plain = rt_decide_line_posterior(&s, &plain, 2);
    double lo_plain = rt_decide_line_log_odds(&s, &plain, 2);
    for (unsigned i = 0; i < RT_DECIDE_HINT_COUNT; i++) {
        rt_decide_line hinted = plain;
        hinted.hints = 1u << i;
        assert_true(rt_decide_line_posterior(&s, &hinted, 2) < p_plain);
        assert_near(rt_decide_line_log_odds(&s, &hinted, 2), lo_plain + log(s.hint_factor[i]),
                    1e-12);
    }
    rt_decide_line all = {.history = {0, 0, -1},
                          .reproduced = 10,
                          .hints = RT_DECIDE_HINT_TRACKED | RT_DECIDE_HINT_CLASSIFIED |
                                   RT_DECIDE_HINT_TIER3};
    assert_near(rt_decide_line_posterior(&s, &all, 10), 0.9999834, 1e-7);
    rt_decide_input in = {.lines = &all, .nlines = 1, .compared = 10, .spent = 10};
    rt_decide_result out;
    assert_int_equal(rt_decide_evaluate(&s, &in, &out), RT_OK);
    assert_int_equal(out.verdict, RT_VERDICT_REGRESSION);
    assert_string_equal(out.reason, "confident");
}

/* ---- set verdicts ---- */

static void test_set_verdicts(void **state)
{
    (void)state;
    rt_decide_settings s;
    rt_decide_settings_default(&s);
    rt_decide_result out;
    /* Line 0 a known 40% flake reproduced twice, line 1 a clean test reproduced twice:
     * one line is enough for a regression, and it is named. */
    rt_decide_line lines[2] = {{.history = {1000, 400, -1}, .reproduced = 2},
                               {.history = {1000, 0, -1}, .reproduced = 2}};
    rt_decide_input in = {.lines = lines, .nlines = 2, .compared = 2, .spent = 2};
    assert_int_equal(rt_decide_evaluate(&s, &in, &out), RT_OK);
    assert_int_equal(out.verdict, RT_VERDICT_REGRESSION);
    assert_int_equal(out.line, 1);
    /* Neither reproduced: line 1 (clean) stays open, so not yet; the model asks for more. */
    lines[0].reproduced = lines[1].reproduced = 0;
    assert_int_equal(rt_decide_evaluate(&s, &in, &out), RT_OK);
    assert_int_equal(out.verdict, RT_VERDICT_NOT_YET);
    assert_string_equal(out.reason, "need-more");
    assert_true(out.more >= 1 && out.more <= 8);
    assert_int_equal(out.more, rt_decide_next_batch(&s, &in));
    /* The same with retriggers pending: wait for them, ask for nothing. */
    in.pending = 3;
    in.spent = 5;
    assert_int_equal(rt_decide_evaluate(&s, &in, &out), RT_OK);
    assert_int_equal(out.verdict, RT_VERDICT_NOT_YET);
    assert_string_equal(out.reason, "waiting-for-retriggers");
    assert_int_equal(out.more, 0);
    /* Both lines low after enough passes: intermittent, even with one still pending. */
    in.compared = 6;
    in.pending = 1;
    in.spent = 7;
    lines[1].history = (rt_decide_history){100, 3, -1};
    assert_int_equal(rt_decide_evaluate(&s, &in, &out), RT_OK);
    assert_int_equal(out.verdict, RT_VERDICT_INTERMITTENT);
    assert_string_equal(out.reason, "confident");
    assert_int_equal(out.line, -1);
    assert_true(out.p_regression[0] <= 0.05 && out.p_regression[1] <= 0.05);

    /* No evidence yet: first batch; none left: undecided. */
    rt_decide_line fresh = {.history = {0, 0, -1}};
    rt_decide_input none = {.lines = &fresh, .nlines = 1};
    assert_int_equal(rt_decide_evaluate(&s, &none, &out), RT_OK);
    assert_int_equal(out.verdict, RT_VERDICT_NOT_YET);
    assert_int_equal(out.more, 2);
    none.spent = 10; /* ten exceptions */
    assert_int_equal(rt_decide_evaluate(&s, &none, &out), RT_OK);
    assert_int_equal(out.verdict, RT_VERDICT_UNDECIDED);
    assert_string_equal(out.reason, "no-usable-retriggers");
    /* At the cap with p >= 0.5: regression, low-confidence. */
    rt_decide_line flaky = {.history = {1000, 400, -1}, .reproduced = 7};
    rt_decide_input capped = {.lines = &flaky, .nlines = 1, .compared = 7, .spent = 10};
    assert_int_equal(rt_decide_evaluate(&s, &capped, &out), RT_OK);
    assert_true(out.p_regression[0] >= 0.5 && out.p_regression[0] < 0.95);
    assert_int_equal(out.verdict, RT_VERDICT_REGRESSION);
    assert_string_equal(out.reason, "low-confidence");
    /* No lines: nothing to compare. */
    rt_decide_input empty = {.compared = 2, .spent = 2};
    assert_int_equal(rt_decide_evaluate(&s, &empty, &out), RT_OK);
    assert_int_equal(out.verdict, RT_VERDICT_UNDECIDED);
    assert_string_equal(out.reason, "no-failure-lines");
}

static void test_invalid_input_and_settings_are_rejected(void **state)
{
    (void)state;
    rt_decide_settings s;
    rt_decide_settings_default(&s);
    rt_decide_result out;
    rt_decide_line line = {.reproduced = 3};
    rt_decide_input in = {.lines = &line, .nlines = 1, .compared = 2, .spent = 2};
    assert_int_equal(rt_decide_evaluate(&s, &in, &out), RT_EINVAL); /* reproduced > compared */
    assert_string_equal(out.reason, "invalid-input");
    line.reproduced = 1;
    in.pending = 1; /* compared + pending > spent */
    assert_int_equal(rt_decide_evaluate(&s, &in, &out), RT_EINVAL);
    in.pending = 0;
    in.nlines = RT_VERDICT_MAX_LINES + 1;
    assert_int_equal(rt_decide_evaluate(&s, &in, &out), RT_EINVAL);
    in.nlines = 1;
    assert_int_equal(rt_decide_evaluate(&s, &in, &out), RT_OK);

    rt_decide_settings bad = s;
    bad.confidence = 0.5;
    assert_int_equal(rt_decide_settings_check(&bad), RT_EINVAL);
    assert_int_equal(rt_decide_evaluate(&bad, &in, &out), RT_EINVAL);
    bad = s;
    bad.prior_regression = 1;
    assert_int_equal(rt_decide_settings_check(&bad), RT_EINVAL);
    bad = s;
    bad.flake_failing = (rt_decide_beta){0.3, 1.0}; /* too wide to keep the ratio monotone */
    assert_int_equal(rt_decide_settings_check(&bad), RT_EINVAL);
    bad = s;
    bad.first_batch_min = 6; /* above first_batch_max */
    assert_int_equal(rt_decide_settings_check(&bad), RT_EINVAL);
    bad = s;
    bad.hint_factor[1] = 2; /* a hint may only lower the prior */
    assert_int_equal(rt_decide_settings_check(&bad), RT_EINVAL);
}

static void test_batch_sizes_stay_within_bounds(void **state)
{
    (void)state;
    rt_decide_settings s;
    rt_decide_settings_default(&s);
    static const long runs[] = {0, 5, 20, 50, 100, 300, 1000};
    static const double rates[] = {0, 0.02, 0.1, 0.4};
    for (size_t a = 0; a < 7; a++) {
        for (size_t b = 0; b < 4; b++) {
            rt_decide_line line = {.history = {runs[a], (long)(rates[b] * runs[a] + 0.5), -1}};
            size_t first = rt_decide_first_batch(&s, &line, 1, 0);
            assert_true(first >= 2 && first <= 5);
            /* With 8 of 10 already there, at most 2 are left. */
            assert_true(rt_decide_first_batch(&s, &line, 1, 8) <= 2);
            assert_int_equal(rt_decide_first_batch(&s, &line, 1, 10), 0);
            for (size_t k = 0; k <= 3; k++) {
                line.reproduced = k;
                rt_decide_input in = {.lines = &line, .nlines = 1, .compared = 3, .spent = 4};
                size_t next = rt_decide_next_batch(&s, &in);
                assert_true(next <= 6);
                in.spent = 10;
                assert_int_equal(rt_decide_next_batch(&s, &in), 0);
            }
        }
    }
    /* A clean history of 50 runs leaves the failure uncertain (p 0.37): a larger first
     * batch, to decide in one round. */
    rt_decide_line medium = {.history = {50, 0, -1}};
    assert_int_equal(rt_decide_first_batch(&s, &medium, 1, 0), 4);
    /* retriggers_per_failure caps it. */
    s.first_batch_max = 3;
    assert_true(rt_decide_first_batch(&s, &medium, 1, 0) <= 3);
}

/* ---- population and prior ---- */

static void test_population_fit_by_moments(void **state)
{
    (void)state;
    /* Two tests of 100 runs failing 10 and 30: m = 0.2, S = 0.01, mean(1/n) = 0.01,
     * rho = (0.01 / 0.16 - 0.01) / 0.99 = 0.0530303, a + b = 1/rho - 1 = 17.857. */
    rt_decide_counts two[] = {{100, 10}, {100, 30}, {0, 0}};
    rt_decide_beta fit;
    assert_int_equal(rt_decide_fit_population(two, 3, &fit), RT_OK);
    assert_near(fit.alpha + fit.beta, 1 / 0.0530303 - 1, 1e-3);
    assert_near(fit.alpha / (fit.alpha + fit.beta), 0.2, 1e-12);
    /* Too few tests with runs, or no failure at all: keep the defaults. */
    assert_int_equal(rt_decide_fit_population(two, 1, &fit), RT_EINVAL);
    rt_decide_counts clean[] = {{100, 0}, {50, 0}};
    assert_int_equal(rt_decide_fit_population(clean, 2, &fit), RT_EINVAL);

    /* Rates drawn from a known Beta(2, 18) (mean 0.1, a + b = 20), 400 runs each: the fit
     * comes back near it once the binomial noise is taken out. */
    rt_sim_rng rng;
    rt_sim_rng_seed(&rng, 7);
    enum { TESTS = 4000 };
    rt_decide_counts *tests = malloc(TESTS * sizeof *tests);
    assert_non_null(tests);
    for (size_t t = 0; t < TESTS; t++) {
        /* Beta(2, 18) as the 2nd smallest of 19 uniforms. */
        double u[19];
        for (size_t i = 0; i < 19; i++) u[i] = rt_sim_rng_uniform(&rng);
        double first = 2, second = 2;
        for (size_t i = 0; i < 19; i++) {
            if (u[i] < first) {
                second = first;
                first = u[i];
            } else if (u[i] < second) {
                second = u[i];
            }
        }
        long failures = 0;
        for (long r = 0; r < 400; r++) failures += rt_sim_rng_uniform(&rng) < second;
        tests[t] = (rt_decide_counts){400, failures};
    }
    assert_int_equal(rt_decide_fit_population(tests, TESTS, &fit), RT_OK);
    assert_near(fit.alpha / (fit.alpha + fit.beta), 0.1, 0.005);
    assert_near(fit.alpha + fit.beta, 20, 2.5);
    free(tests);

    assert_near(rt_decide_beta_size_biased((rt_decide_beta){0.1, 20}).alpha, 1.1, 1e-12);
    assert_near(rt_decide_beta_size_biased((rt_decide_beta){0.1, 20}).beta, 20, 1e-12);
}

static void test_prior_estimate_from_past_verdicts(void **state)
{
    (void)state;
    assert_near(rt_decide_prior_estimate(0, 0, 0.15, 20), 0.15, 1e-12);
    assert_near(rt_decide_prior_estimate(30, 170, 0.15, 20), 33.0 / 220, 1e-12);
    assert_near(rt_decide_prior_estimate(100, 900, 0.15, 20), 103.0 / 1020, 1e-12);
    assert_near(rt_decide_prior_estimate(-1, 10, 0.5, 0), 0.5 / 11, 1e-12);
}

/* ---- policies ---- */

static rt_bugsug original;
static rt_failure_line variant[4];
static rt_failure_line unrelated;

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
        char noisy[1100];
        snprintf(noisy, sizeof noisy, "12:00:0%zu     INFO - GECKO(%zu) | %s", i, 1000 + i,
                 original.lines[i].signature);
        if (rt_failure_line_parse(noisy, strlen(noisy), &variant[i]) != RT_OK) return -1;
    }
    const char *other = "TEST-UNEXPECTED-FAIL | dom/other/test_unrelated.html | something else";
    return rt_failure_line_parse(other, strlen(other), &unrelated) == RT_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    rt_bugsug_free(&original);
    for (size_t i = 0; i < 4; i++) rt_failure_line_free(&variant[i]);
    rt_failure_line_free(&unrelated);
    return 0;
}

/* The runs of a verdict case (verdict_cases.h). */
static void case_runs(const verdict_case *c, rt_failure_line lines[][5], rt_verdict_run *runs)
{
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
}

static void test_policy_seed_is_verdict_c_on_its_cases(void **state)
{
    (void)state;
    rt_decide_settings model;
    rt_decide_settings_default(&model);
    for (size_t i = 0; i < sizeof verdict_cases / sizeof verdict_cases[0]; i++) {
        const verdict_case *c = &verdict_cases[i];
        rt_failure_line lines[MAX_CASE_RUNS][5];
        rt_verdict_run runs[MAX_CASE_RUNS];
        case_runs(c, lines, runs);
        bool tracked[4];
        for (size_t k = 0; k < 4; k++) tracked[k] = (c->tracked >> k) & 1;
        rt_verdict_input evidence = {.original = original.lines,
                                     .noriginal = c->noriginal,
                                     .original_tracked = tracked,
                                     .runs = runs,
                                     .nruns = c->nruns,
                                     .threshold = c->threshold};
        rt_verdict_result direct;
        assert_int_equal(rt_verdict_decide(&evidence, &direct), RT_OK);
        rt_policy_input in = {.evidence = evidence, .retriggers_per_failure = 5, .model = &model};
        rt_policy_result out;
        assert_int_equal(rt_policy_decide(RT_POLICY_SEED, &in, &out), RT_OK);
        const rt_policy_outcome *seed = &out.outcome[RT_POLICY_SEED];
        if (seed->verdict != c->verdict || strcmp(seed->reason, c->reason) != 0 ||
            seed->verdict != direct.verdict || strcmp(seed->reason, direct.reason) != 0)
            fail_msg("%s: policy seed %s/%s, verdict.c %s/%s, table %s/%s", c->name,
                     rt_verdict_name(seed->verdict), seed->reason, rt_verdict_name(direct.verdict),
                     direct.reason, rt_verdict_name(c->verdict), c->reason);
        assert_memory_equal(out.counts.reproduced, direct.reproduced, sizeof direct.reproduced);
        /* Every policy answers on the same evidence (the shadows). */
        for (size_t p = 0; p < RT_POLICY_COUNT; p++)
            assert_true(out.outcome[p].reason[0] != '\0' &&
                        strcmp(out.outcome[p].reason, "invalid-input") != 0);
    }
}

static void test_policy_mozci_and_shadow_verdicts(void **state)
{
    (void)state;
    rt_decide_settings model;
    rt_decide_settings_default(&model);
    rt_verdict_run runs[5];
    for (size_t r = 0; r < 5; r++)
        runs[r] = (rt_verdict_run){.state = RT_RUN_FAILED, .lines = variant, .nlines = 4};
    rt_policy_input in = {.evidence = {.original = original.lines,
                                       .noriginal = 4,
                                       .runs = runs,
                                       .nruns = 5,
                                       .threshold = 2},
                          .retriggers_per_failure = 5,
                          .model = &model};
    rt_policy_result out;
    /* Five of five: everyone says regression. */
    assert_int_equal(rt_policy_decide(RT_POLICY_ADAPTIVE, &in, &out), RT_OK);
    assert_int_equal(out.policy, RT_POLICY_ADAPTIVE);
    assert_int_equal(out.outcome[RT_POLICY_SEED].verdict, RT_VERDICT_REGRESSION);
    assert_int_equal(out.outcome[RT_POLICY_ADAPTIVE].verdict, RT_VERDICT_REGRESSION);
    assert_int_equal(out.outcome[RT_POLICY_MOZCI].verdict, RT_VERDICT_REGRESSION);
    assert_string_equal(out.outcome[RT_POLICY_MOZCI].reason, "every-run-failed");
    /* Three of five: seed regression, mozci intermittent as soon as one passed. */
    runs[1] = runs[3] = (rt_verdict_run){.state = RT_RUN_PASSED};
    assert_int_equal(rt_policy_decide(RT_POLICY_MOZCI, &in, &out), RT_OK);
    assert_int_equal(out.outcome[RT_POLICY_SEED].verdict, RT_VERDICT_REGRESSION);
    assert_int_equal(out.outcome[RT_POLICY_MOZCI].verdict, RT_VERDICT_INTERMITTENT);
    assert_string_equal(out.outcome[RT_POLICY_MOZCI].reason, "not-every-run-failed");
    /* Two reproductions and three pending: mozci and adaptive wait, seed has decided. */
    runs[1] = runs[3] = runs[4] = (rt_verdict_run){.state = RT_RUN_PENDING};
    runs[2] = runs[0];
    assert_int_equal(rt_policy_decide(RT_POLICY_SEED, &in, &out), RT_OK);
    assert_int_equal(out.outcome[RT_POLICY_SEED].verdict, RT_VERDICT_REGRESSION);
    assert_int_equal(out.outcome[RT_POLICY_MOZCI].verdict, RT_VERDICT_NOT_YET);
    assert_int_equal(out.outcome[RT_POLICY_MOZCI].more, 0);
    /* Nothing yet: seed and mozci ask for retriggers_per_failure, adaptive its first batch. */
    in.evidence.nruns = 0;
    assert_int_equal(rt_policy_decide(RT_POLICY_ADAPTIVE, &in, &out), RT_OK);
    assert_int_equal(out.outcome[RT_POLICY_SEED].more, 5);
    assert_int_equal(out.outcome[RT_POLICY_MOZCI].more, 5);
    assert_int_equal(out.outcome[RT_POLICY_ADAPTIVE].verdict, RT_VERDICT_NOT_YET);
    assert_int_equal(out.outcome[RT_POLICY_ADAPTIVE].more, 2);
    /* History per line reaches the model: a 40% flake reproduced twice is not enough. */
    runs[0] = runs[1] = (rt_verdict_run){.state = RT_RUN_FAILED, .lines = variant, .nlines = 4};
    in.evidence.nruns = 2;
    rt_decide_history history[4];
    for (size_t i = 0; i < 4; i++) history[i] = (rt_decide_history){1000, 400, -1};
    in.history = history;
    assert_int_equal(rt_policy_decide(RT_POLICY_ADAPTIVE, &in, &out), RT_OK);
    assert_int_equal(out.outcome[RT_POLICY_ADAPTIVE].verdict, RT_VERDICT_NOT_YET);
    assert_near(out.p_regression[0], 0.0500083, 1e-6);
    assert_int_equal(out.outcome[RT_POLICY_SEED].verdict, RT_VERDICT_REGRESSION);
    assert_string_equal(rt_policy_name(RT_POLICY_MOZCI), "mozci");
    rt_policy p;
    assert_int_equal(rt_policy_parse("adaptive", &p), RT_OK);
    assert_int_equal(p, RT_POLICY_ADAPTIVE);
    assert_int_equal(rt_policy_parse("majority", &p), RT_EINVAL);
}

/* ---- simulation ---- */

static void test_generator_is_deterministic_for_a_seed(void **state)
{
    (void)state;
    rt_sim_rng a, b, c;
    rt_sim_rng_seed(&a, 42);
    rt_sim_rng_seed(&b, 42);
    rt_sim_rng_seed(&c, 43);
    size_t differ = 0, regressions = 0, no_history = 0;
    for (size_t i = 0; i < 5000; i++) {
        rt_sim_case x, y, z;
        rt_sim_generate(&a, RT_SIM_MIX_OBSERVED, 0.15, &x);
        rt_sim_generate(&b, RT_SIM_MIX_OBSERVED, 0.15, &y);
        rt_sim_generate(&c, RT_SIM_MIX_OBSERVED, 0.15, &z);
        assert_int_equal(x.regression, y.regression);
        assert_int_equal(x.history.runs, y.history.runs);
        assert_int_equal(x.history.failures, y.history.failures);
        assert_int_equal(x.noutcomes, RT_SIM_OUTCOMES);
        assert_memory_equal(x.outcomes, y.outcomes, sizeof x.outcomes);
        assert_true(x.rate == y.rate);
        differ += x.rate != z.rate;
        regressions += x.regression;
        no_history += x.history.runs == 0;
        assert_true(x.history.failures <= x.history.runs && x.history.runs <= 1000);
        if (!x.regression) assert_true(x.rate >= 0.003 && x.rate <= 0.5);
    }
    assert_true(differ > 4900);
    assert_near((double)regressions / 5000, 0.15, 0.02);
    assert_near((double)no_history / 5000, 0.15, 0.02);
    /* The stream itself is fixed: xoshiro256** seeded by splitmix64. */
    rt_sim_rng_seed(&a, 0);
    assert_true(rt_sim_rng_next(&a) == 0x99ec5f36cb75f2b4ULL);
}

/* seed's known error: an intermittent failing at rate f is called a regression when 2 or
 * more of 5 retriggers fail, 1 - (1-f)^5 - 5 f (1-f)^4: 16.5% at 15%, 81.25% at 50%. */
static void test_seed_policy_gives_its_known_error_rates(void **state)
{
    (void)state;
    rt_decide_settings model;
    rt_decide_settings_default(&model);
    rt_sim sim;
    assert_int_equal(rt_sim_init(&sim, &model, 5, 2), RT_OK);
    static const double rates[] = {0.15, 0.5};
    static const double expected[] = {0.1648, 0.8125};
    rt_sim_rng rng;
    rt_sim_rng_seed(&rng, 1);
    for (size_t r = 0; r < 2; r++) {
        rt_sim_tally tally = {0};
        for (size_t i = 0; i < 10000; i++) {
            rt_sim_case c = {.history = {0, 0, -1}, .noutcomes = 10, .rate = rates[r]};
            for (size_t j = 0; j < 10; j++) c.outcomes[j] = rt_sim_rng_uniform(&rng) < rates[r];
            rt_sim_result out;
            assert_int_equal(rt_sim_run(&sim, RT_POLICY_SEED, &c, &out), RT_OK);
            assert_int_equal(out.retriggers, 5);
            assert_int_equal(out.rounds, 1);
            rt_sim_tally_add(&tally, &c, &out);
        }
        assert_near((double)tally.intermittents_called_regression / 10000, expected[r], 0.015);
    }
    rt_sim_free(&sim);
}

static void test_simulated_case_json_round_trip_and_errors(void **state)
{
    (void)state;
    rt_sim_rng rng;
    rt_sim_rng_seed(&rng, 5);
    rt_sim_case c, back;
    rt_sim_generate(&rng, RT_SIM_MIX_UNIFORM, 1.0, &c);
    json_t *doc = rt_sim_case_json(&c);
    assert_non_null(doc);
    char errstr[RT_ERRSTR_SIZE] = "";
    assert_int_equal(rt_sim_case_parse(doc, &back, errstr), RT_OK);
    json_decref(doc);
    assert_true(back.regression);
    assert_int_equal(back.history.runs, c.history.runs);
    assert_int_equal(back.history.failures, c.history.failures);
    assert_int_equal(back.history.signature_failures, -1);
    assert_memory_equal(back.outcomes, c.outcomes, sizeof c.outcomes);

    static const char *const bad[][2] = {
        {"[]", "object"},
        {"{\"truth\": \"maybe\", \"history\": {\"runs\": 1, \"failures\": 0}, \"outcomes\": "
         "[true]}",
         "truth"},
        {"{\"truth\": \"regression\", \"history\": {\"runs\": 1, \"failures\": 2}, \"outcomes\": "
         "[true]}",
         "history"},
        {"{\"truth\": \"regression\", \"history\": {\"runs\": 1, \"failures\": 0}, \"outcomes\": "
         "[]}",
         "outcomes"},
        {"{\"truth\": \"regression\", \"history\": {\"runs\": 1, \"failures\": 0}, \"outcomes\": "
         "[true, 1]}",
         "outcomes\"[1]"},
        {"{\"truth\": \"intermittent\", \"history\": {\"runs\": 1, \"failures\": 0}, "
         "\"outcomes\": [true], \"rate\": 2}",
         "rate"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_t *j = json_loads(bad[i][0], 0, NULL);
        assert_non_null(j);
        assert_int_equal(rt_sim_case_parse(j, &back, errstr), RT_EPROTO);
        if (!strstr(errstr, bad[i][1])) fail_msg("'%s' does not name '%s'", errstr, bad[i][1]);
        json_decref(j);
    }
}

/* Adaptive on a small generated file: better than seed on accuracy with fewer retriggers,
 * never more than decide_max_retriggers. */
static void test_adaptive_beats_seed_on_a_generated_sample(void **state)
{
    (void)state;
    rt_decide_settings model;
    rt_decide_settings_default(&model);
    rt_sim sim;
    assert_int_equal(rt_sim_init(&sim, &model, 5, 2), RT_OK);
    rt_sim_rng rng;
    rt_sim_rng_seed(&rng, 11);
    rt_sim_tally seed = {0}, adaptive = {0};
    for (size_t i = 0; i < 1500; i++) {
        rt_sim_case c;
        rt_sim_generate(&rng, RT_SIM_MIX_UNIFORM, 0.15, &c);
        rt_sim_result a, s;
        assert_int_equal(rt_sim_run(&sim, RT_POLICY_SEED, &c, &s), RT_OK);
        assert_int_equal(rt_sim_run(&sim, RT_POLICY_ADAPTIVE, &c, &a), RT_OK);
        assert_true(a.retriggers >= 2 && a.retriggers <= 10);
        assert_true(a.verdict == RT_VERDICT_REGRESSION || a.verdict == RT_VERDICT_INTERMITTENT);
        assert_int_equal(a.shadow[RT_POLICY_ADAPTIVE], a.verdict);
        rt_sim_tally_add(&seed, &c, &s);
        rt_sim_tally_add(&adaptive, &c, &a);
    }
    assert_true(adaptive.correct > seed.correct);
    assert_true(adaptive.retriggers < seed.retriggers);
    assert_int_equal(adaptive.undecided, 0);
    rt_sim_free(&sim);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_history_two_reproductions_are_a_regression),
        cmocka_unit_test(test_1000_clean_runs_make_a_failure_likely_a_regression),
        cmocka_unit_test(test_a_test_failing_40_percent_needs_many_reproductions),
        cmocka_unit_test(test_signature_counts_replace_the_tests_when_known),
        cmocka_unit_test(test_more_reproductions_never_lower_p_regression),
        cmocka_unit_test(test_extreme_counts_stay_finite),
        cmocka_unit_test(test_hints_move_the_prior_but_reproductions_still_decide),
        cmocka_unit_test(test_set_verdicts),
        cmocka_unit_test(test_invalid_input_and_settings_are_rejected),
        cmocka_unit_test(test_batch_sizes_stay_within_bounds),
        cmocka_unit_test(test_population_fit_by_moments),
        cmocka_unit_test(test_prior_estimate_from_past_verdicts),
        cmocka_unit_test(test_policy_seed_is_verdict_c_on_its_cases),
        cmocka_unit_test(test_policy_mozci_and_shadow_verdicts),
        cmocka_unit_test(test_generator_is_deterministic_for_a_seed),
        cmocka_unit_test(test_seed_policy_gives_its_known_error_rates),
        cmocka_unit_test(test_simulated_case_json_round_trip_and_errors),
        cmocka_unit_test(test_adaptive_beats_seed_on_a_generated_sample),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
