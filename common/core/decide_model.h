/* SPDX-License-Identifier: MPL-2.0 */
/* decide_model.h - how likely a failure line is a regression, from the test's own history
 * and what its retriggers reproduced; and how many retriggers to ask for next. The model
 * behind the adaptive verdict (decide_policy.h). Pure: no I/O, no clock, no globals, no
 * allocation; thread-safe (lgamma_r, not lgamma). Needs libm.
 *
 * One failure line of the original run, from a test that ran N times in the history window
 * before this push and failed K of them (K counts only failures with this line's signature
 * when that is known). n retriggers gave evidence (passed, or failed with their lines) and
 * k of them reproduced the line. Two hypotheses:
 *
 *   I  intermittent: the test fails at its own rate f and the line comes back when it does:
 *        f ~ F_K = Beta(Fa + K, Fb + N - K)
 *      F (flake_failing) is the flake rate of a failing test before its own history is known.
 *      A test is looked at because it failed, so F is size-biased: with A = Beta(a, b) the
 *      rate of any test (fitted from every test's history), F = Beta(a + 1, b), the default
 *      Beta(1.1, 20) (mean 5%); or F is fitted from failing tests' histories
 *      (rt_decide_fit_population; `retrig simulate` fits it from its cases).
 *   R  regression: the push broke the test. Each retrigger reproduces the line with
 *      probability r' = L + (1 - L) r: the test still flakes (L, F_K's mean: its own rate)
 *      and the breakage adds r. Many regressions fail every time, others partially (a race):
 *        r ~ w Beta(20, 0.3) + (1 - w) Beta(2, 2)        (w = full_weight, 0.5)
 *      The history is from before the push: the rate then was any test's,
 *        (1 - e) A + e F,   A = Beta(0.1, 20)           (flake_any, mean 0.5%; e =
 *      flaky_share, 0.05: some regressions land in tests that already flaked like F).
 *
 * With M(a, b; k, n) = B(a + k, b + n - k) / B(a, b) = E[x^k (1 - x)^(n - k)] for x ~ Beta(a, b)
 * (B the Beta function: the probability of one sequence of n with k successes) and its
 * shifted form M_L(c, d; k, n) = E[r'^k (1 - r')^(n - k)] =
 *   sum over i = 0..k of C(k, i) L^(k - i) (1 - L)^(n - k + i) M(c, d; i, n - k + i),
 * the posterior log odds of a regression are
 *
 *   log O = logit(pi) + sum of log hint factors                           the prior
 *         + log[(1 - e) M(A; K, N) + e M(F; K, N)] - log M(F; K, N)          the history
 *         + log[w M_L(20, 0.3; k, n) + (1 - w) M_L(2, 2; k, n)] - log M(F_K; k, n)
 *
 * and p_regression = 1 / (1 + exp(-log O)). pi is P(regression) among the failures retrig
 * retriggers (decide_prior_regression, default 0.15: an assumption, to be re-estimated from
 * past verdicts with rt_decide_prior_estimate). The history term weighs how typical the
 * test's record is of a test hit by a regression against one failing intermittently: a long
 * clean record makes a regression likelier (an intermittent rarely hides behind 1,000 clean
 * runs), frequent failures make it less likely, by a factor never below e. Everything is
 * computed in logs (lgamma_r; every term of M_L positive), so N = 1,000,000 or k = 64
 * neither overflows nor underflows.
 *
 * More reproductions never lower p_regression: L is raised above F_K's mean where needed
 * (a test failing more than half the time) so that each shifted component's density over
 * F_K's grows on [L, 1]; the sequence likelihood x^k (1 - x)^(n - k) is totally positive in
 * (k, x), so P(k | R) / P(k | I) then grows with k. This holds when the components' alphas
 * are >= 1 and Fb exceeds their betas, which rt_decide_settings_check requires.
 *
 * Hints from classification move the prior, never the evidence: an open single tracking
 * bug for the line's test (a tracked line is still compared: verdict.h), a Treeherder
 * classification of the original as intermittent, or a tier-3 job multiply the prior odds
 * by hint_factor (0.25, 0.25, 0.5; judgement, not fitted). Reproductions still decide: with
 * every hint, ten reproductions in ten of a test without history give p = 0.99998.
 *
 * A set (every compared line of the original) is
 *   regression    when some line's p_regression >= confidence (decide_confidence, 0.95);
 *   intermittent  when every line's p_regression <= 1 - confidence;
 *   not-yet       otherwise: wait for the pending retriggers, or ask for `more`, chosen by
 *                 rt_decide_next_batch, while retriggers spent (counting those already
 *                 present for the push, exceptions and pending ones) stay within
 *                 max_retriggers (decide_max_retriggers, 10);
 *   at the cap    regression when the likeliest line's p_regression >= 0.5, else
 *                 intermittent, reason "low-confidence".
 * No verdict is given before some retrigger gave evidence.
 *
 * Batch sizes. Each batch is the b that minimises
 *   b + round_cost * P(still undecided after b more)
 * (round_cost 5: waiting one more round, a test task's run time, is worth 5 retriggers),
 * the probability taken over the outcomes the current posterior predicts: under each
 * hypothesis P(k' of b) = C(b, k') M(k + k', n + b) / M(k, n), mixed by p_regression. b runs
 * from 1 to the retriggers left, the first batch from first_batch_min (budget_minimum, 2:
 * one run cannot tell a partial regression from a flake) to first_batch_max
 * (retriggers_per_failure, 5). A batch that uses every retrigger left counts as deciding.
 * With several open lines the largest of their batches is asked for.
 *
 * Worked example, default settings (logit(0.15) = -1.7346):
 *   a test with no history (N = 0): the history term is 0, L = 1.1/21.1 = 0.0521. First
 *   batch 2.
 *     k = n = 2:  R = 0.5 M_L(20, 0.3; 2, 2) + 0.5 M_L(2, 2; 2, 2) = 0.5 (0.9728 + 0.3217)
 *                 = 0.6472, I = M(1.1, 20; 2, 2) = (1.1/21.1)(2.1/22.1) = 0.004954,
 *                 log O = -1.7346 + log(0.6472 / 0.004954) = 3.1380, p = 0.958: regression.
 *     k = 1, n = 2: R = 0.1088, I = (1.1/21.1)(20/22.1) = 0.04718, p = 0.289: need more.
 *     k = 0, n = 2: R = 0.1352, I = (20/21.1)(21/22.1) = 0.9007, p = 0.026: intermittent.
 *   a test with 1,000 clean runs (K = 0, N = 1000): M(A; 0, 1000) = 0.6734 and
 *     M(F; 0, 1000) = 0.01327, so the history term is log(0.95 * 0.6734 + 0.05 * 0.01327) -
 *     log(0.01327) = +3.877 and the prior 0.895. L = 0.0011. First batch 2.
 *     k = n = 2:  R = 0.6359, I = M(1.1, 1020; 2, 2) = 2.2e-6, p = 0.9999996: regression.
 *     k = 0, n = 2: p = 0.562, need more; after ten passes R = 0.0190, I = 0.9893, p = 0.141:
 *                 a regression reproducing one run in ten would pass so; intermittent at
 *                 the cap, low-confidence.
 *   a test that failed 400 of 1,000 runs: M(A)/M(F) = 0.0127, the history term
 *     log(0.95 * 0.0127 + 0.05) = -2.780, the prior 0.0108; L = 0.393. First batch 2.
 *     k = n = 2:  R = 0.7429, I = M(401.1, 620; 2, 2) = 0.1545, p = 0.050: need more.
 *     k = n = 5: p = 0.406; k = n = 8: p = 0.908; k = n = 10: R = 0.5076, I = 9.36e-5,
 *                 p = 0.983: a regression, on reproductions alone.
 * The unit tests (tests/unit/test_decide_model.c) pin these numbers. */
#ifndef RETRIG_COMMON_DECIDE_MODEL_H
#define RETRIG_COMMON_DECIDE_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#include "common/core/errors.h"
#include "common/core/verdict.h"

#define RT_DECIDE_DEFAULT_CONFIDENCE       0.95
#define RT_DECIDE_DEFAULT_MAX_RETRIGGERS   10
#define RT_DECIDE_DEFAULT_PRIOR_REGRESSION 0.15
#define RT_DECIDE_MAX_RETRIGGERS           RT_VERDICT_MAX_RUNS

/* Prior-shifting hints of a line (bits). */
#define RT_DECIDE_HINT_TRACKED    0x1u /* an open single tracking bug for its test */
#define RT_DECIDE_HINT_CLASSIFIED 0x2u /* the original is classified intermittent */
#define RT_DECIDE_HINT_TIER3      0x4u /* a tier-3 job */
#define RT_DECIDE_HINT_COUNT      3

typedef struct rt_decide_beta {
    double alpha, beta; /* both > 0 */
} rt_decide_beta;

/* One test's record in the history window, before this push. */
typedef struct rt_decide_history {
    long runs;               /* runs that resolved (passed or failed); 0: no history */
    long failures;           /* of which failed */
    long signature_failures; /* of which failed with this line's signature; -1: unknown */
} rt_decide_history;

typedef struct rt_decide_line {
    rt_decide_history history;
    size_t reproduced; /* retriggers that reproduced this line (<= compared) */
    unsigned hints;    /* RT_DECIDE_HINT_* */
} rt_decide_line;

typedef struct rt_decide_settings {
    double confidence;            /* (0.5, 1): decide_confidence */
    double prior_regression;      /* (0, 1): decide_prior_regression */
    int max_retriggers;           /* 1..RT_DECIDE_MAX_RETRIGGERS, counting existing runs */
    int first_batch_min;          /* the first batch at least (budget_minimum) */
    int first_batch_max;          /* the first batch at most (retriggers_per_failure) */
    rt_decide_beta flake_any;     /* A: a test's flake rate before the push */
    rt_decide_beta flake_failing; /* F: the flake rate of a test failing intermittently */
    double flaky_share;           /* e: tests whose rate before the push is like F's */
    double full_weight;           /* w: regressions that reproduce (nearly) every time */
    rt_decide_beta full, partial; /* their reproduction rates, and the others' */
    double hint_factor[RT_DECIDE_HINT_COUNT]; /* prior odds factors, in (0, 1] */
    double round_cost;                        /* one more round, in retriggers (> 0) */
} rt_decide_settings;

typedef struct rt_decide_input {
    const rt_decide_line *lines; /* the original's compared lines */
    size_t nlines;               /* at most RT_VERDICT_MAX_LINES */
    size_t compared;             /* retriggers that gave evidence (passed or failed) */
    size_t pending;              /* requested, not resolved yet */
    size_t spent;                /* every retrigger so far, with exceptions and pending */
} rt_decide_input;

typedef struct rt_decide_result {
    rt_verdict verdict; /* regression, intermittent, not-yet, undecided */
    /* "confident", "low-confidence", "need-more", "waiting-for-retriggers",
     * "no-failure-lines", "no-usable-retriggers", "invalid-input" */
    char reason[RT_VERDICT_REASON_SIZE];
    size_t more;                               /* not-yet: retriggers to request now */
    double p_regression[RT_VERDICT_MAX_LINES]; /* per line */
    long line;                                 /* the likeliest regression line, -1: none */
} rt_decide_result;

/* The documented defaults (above). */
void rt_decide_settings_default(rt_decide_settings *s);
/* RT_EINVAL when a setting is out of its range. */
RT_MUSTCHECK int rt_decide_settings_check(const rt_decide_settings *s);

/* log O and p_regression of one line after `compared` retriggers gave evidence. */
double rt_decide_line_log_odds(const rt_decide_settings *s, const rt_decide_line *line,
                               size_t compared);
double rt_decide_line_posterior(const rt_decide_settings *s, const rt_decide_line *line,
                                size_t compared);

/* The verdict, or how many more retriggers. RT_EINVAL (undecided "invalid-input") on bad
 * settings or input (too many lines, reproduced > compared, compared + pending > spent). */
RT_MUSTCHECK int rt_decide_evaluate(const rt_decide_settings *s, const rt_decide_input *in,
                                    rt_decide_result *out);

/* The first batch for a failure whose lines have not been retriggered yet (spent: runs
 * already present for the push); 0 when no retrigger is left. */
size_t rt_decide_first_batch(const rt_decide_settings *s, const rt_decide_line *lines,
                             size_t nlines, size_t spent);
/* The next batch for an undecided set with nothing pending; 0 when none is left. */
size_t rt_decide_next_batch(const rt_decide_settings *s, const rt_decide_input *in);

/* A Beta fitted by the method of moments to per-test (runs, failures): the flake-rate
 * distribution those tests' counts imply, binomial noise of short histories removed. Tests
 * with no runs are skipped. RT_EINVAL (out untouched: keep the defaults) when fewer than 2
 * tests have runs, or none or all of their runs failed. */
typedef struct rt_decide_counts {
    long runs, failures;
} rt_decide_counts;
RT_MUSTCHECK int rt_decide_fit_population(const rt_decide_counts *tests, size_t ntests,
                                          rt_decide_beta *out);
/* The flake rate of a failing test when `all` is every test's: Beta(alpha + 1, beta). */
rt_decide_beta rt_decide_beta_size_biased(rt_decide_beta all);

/* log M(a, b; k, n) = log E[x^k (1 - x)^(n - k)] for x ~ Beta(a, b) (0 when n <= 0), and
 * log C(n, k): the model's pieces, for the culprit search's probes (culprit_adaptive.h). */
double rt_decide_beta_log_m(rt_decide_beta prior, double k, double n);
double rt_decide_log_choose(double n, double k);
/* log E[r'^k (1 - r')^(n - k)] for r' = floor + (1 - floor) r, r ~ part: a regression's rate
 * on top of the test's own (M_L above). */
double rt_decide_beta_log_m_shifted(rt_decide_beta part, double floor, double k, double n);
/* L for a test whose flake rate is `rate` and regressions whose rates are the parts: rate's
 * mean, raised where needed so that P(k | R) / P(k | I) never falls as k grows. */
double rt_decide_floor(rt_decide_beta rate, const rt_decide_beta *parts, size_t nparts);

/* P(regression) from past verdicts, shrunk toward `fallback` with the weight of `strength`
 * verdicts: (regressions + strength * fallback) / (regressions + intermittents + strength). */
double rt_decide_prior_estimate(long regressions, long intermittents, double fallback,
                                double strength);

#endif
