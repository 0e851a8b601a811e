/* SPDX-License-Identifier: MPL-2.0 */
/* decide_model.c - posterior of regression against intermittent per failure line, batch
 * sizes, and the population and prior estimates (formulas in decide_model.h). */
#include "common/core/decide_model.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void rt_decide_settings_default(rt_decide_settings *s)
{
    memset(s, 0, sizeof *s);
    s->confidence = RT_DECIDE_DEFAULT_CONFIDENCE;
    s->prior_regression = RT_DECIDE_DEFAULT_PRIOR_REGRESSION;
    s->max_retriggers = RT_DECIDE_DEFAULT_MAX_RETRIGGERS;
    s->first_batch_min = 2;
    s->first_batch_max = 5;
    s->flake_any = (rt_decide_beta){0.1, 20.0};
    s->flake_failing = rt_decide_beta_size_biased(s->flake_any);
    s->flaky_share = 0.05;
    s->full_weight = 0.5;
    s->full = (rt_decide_beta){20.0, 0.3};
    s->partial = (rt_decide_beta){2.0, 2.0};
    s->hint_factor[0] = 0.25; /* RT_DECIDE_HINT_TRACKED */
    s->hint_factor[1] = 0.25; /* RT_DECIDE_HINT_CLASSIFIED */
    s->hint_factor[2] = 0.5;  /* RT_DECIDE_HINT_TIER3 */
    s->round_cost = 5.0;
}

static bool beta_ok(rt_decide_beta b)
{
    return isfinite(b.alpha) && isfinite(b.beta) && b.alpha > 0 && b.beta > 0;
}

int rt_decide_settings_check(const rt_decide_settings *s)
{
    if (!(s->confidence > 0.5 && s->confidence < 1) ||
        !(s->prior_regression > 0 && s->prior_regression < 1) || s->max_retriggers < 1 ||
        s->max_retriggers > RT_DECIDE_MAX_RETRIGGERS || s->first_batch_min < 1 ||
        s->first_batch_max < s->first_batch_min || !beta_ok(s->flake_any) ||
        !(s->flaky_share >= 0 && s->flaky_share < 1) || !beta_ok(s->flake_failing) ||
        !beta_ok(s->full) || !beta_ok(s->partial) || s->full.alpha < 1 || s->partial.alpha < 1 ||
        !(s->flake_failing.beta > s->full.beta && s->flake_failing.beta > s->partial.beta) ||
        !(s->full_weight >= 0 && s->full_weight <= 1) ||
        !(s->round_cost > 0 && isfinite(s->round_cost)))
        return RT_EINVAL;
    for (size_t i = 0; i < RT_DECIDE_HINT_COUNT; i++)
        if (!(s->hint_factor[i] > 0 && s->hint_factor[i] <= 1)) return RT_EINVAL;
    return RT_OK;
}

static double log_beta(double a, double b)
{
    int sign;
    return lgamma_r(a, &sign) + lgamma_r(b, &sign) - lgamma_r(a + b, &sign);
}

/* log M(a, b; k, n) = log E[x^k (1-x)^(n-k)] for x ~ Beta(a, b). */
static double log_m(rt_decide_beta prior, double k, double n)
{
    if (n <= 0) return 0;
    return log_beta(prior.alpha + k, prior.beta + n - k) - log_beta(prior.alpha, prior.beta);
}

static double log_choose(double n, double k)
{
    int sign;
    return lgamma_r(n + 1, &sign) - lgamma_r(k + 1, &sign) - lgamma_r(n - k + 1, &sign);
}

static double log_sum_exp(double x, double y)
{
    if (x == -INFINITY) return y;
    if (y == -INFINITY) return x;
    double m = x > y ? x : y;
    return m + log(exp(x - m) + exp(y - m));
}

/* The test's history as (K, N), clamped to sense. */
static void history_counts(const rt_decide_history *h, double *k, double *n)
{
    long runs = h->runs > 0 ? h->runs : 0;
    long failures = h->signature_failures >= 0 ? h->signature_failures : h->failures;
    if (failures < 0) failures = 0;
    if (failures > runs) failures = runs;
    *k = (double)failures;
    *n = (double)runs;
}

/* What one line's posterior needs besides the retriggers. */
typedef struct line_model {
    double prior_log_odds; /* log O before any retrigger */
    rt_decide_beta rate;   /* F_K: the test's flake rate under I */
    double floor;          /* L: under R the line fails at least this often */
} line_model;

static void line_model_init(const rt_decide_settings *s, const rt_decide_line *line, line_model *lm)
{
    double lo = log(s->prior_regression) - log1p(-s->prior_regression);
    for (size_t i = 0; i < RT_DECIDE_HINT_COUNT; i++)
        if (line->hints & (1u << i)) lo += log(s->hint_factor[i]);
    double hk, hn;
    history_counts(&line->history, &hk, &hn);
    /* Under R the test's rate before the push is any test's, (1 - e) A + e F. */
    double any = log_sum_exp(
        s->flaky_share < 1 ? log1p(-s->flaky_share) + log_m(s->flake_any, hk, hn) : -INFINITY,
        s->flaky_share > 0 ? log(s->flaky_share) + log_m(s->flake_failing, hk, hn) : -INFINITY);
    lm->prior_log_odds = lo + any - log_m(s->flake_failing, hk, hn);
    lm->rate = (rt_decide_beta){s->flake_failing.alpha + hk, s->flake_failing.beta + hn - hk};
    /* L is F_K's mean, raised where needed so that each shifted component's density over
     * F_K's grows on [L, 1]: then P(k | R) / P(k | I) never falls as k grows. */
    const rt_decide_beta parts[2] = {s->full, s->partial};
    lm->floor = rt_decide_floor(lm->rate, parts, 2);
}

/* log E[r'^k (1 - r')^(n - k)] for r' = L + (1 - L) r, r ~ Beta(c, d):
 * sum over i of C(k, i) L^(k-i) (1 - L)^(n-k+i) B(c + i, d + n - k) / B(c, d), every term
 * positive; consecutive terms differ by (k - i)/(i + 1) (1 - L)/L (c + i)/(c + d + n - k + i). */
static double log_m_shifted(rt_decide_beta part, double floor, double k, double n)
{
    if (floor <= 0 || k <= 0) return log_m(part, k, n) + (n - k) * log1p(-floor);
    double c = part.alpha, d = part.beta;
    double term =
        k * log(floor) + (n - k) * log1p(-floor) + log_beta(c, d + n - k) - log_beta(c, d);
    double step = log1p(-floor) - log(floor), total = term;
    for (double i = 0; i < k; i++) {
        term += log((k - i) / (i + 1)) + step + log((c + i) / (c + d + n - k + i));
        total = log_sum_exp(total, term);
    }
    return total;
}

double rt_decide_beta_log_m(rt_decide_beta prior, double k, double n) { return log_m(prior, k, n); }

double rt_decide_log_choose(double n, double k) { return log_choose(n, k); }

double rt_decide_beta_log_m_shifted(rt_decide_beta part, double floor, double k, double n)
{
    return log_m_shifted(part, floor, k, n);
}

double rt_decide_floor(rt_decide_beta rate, const rt_decide_beta *parts, size_t nparts)
{
    double a = rate.alpha, b = rate.beta, floor = a / (a + b);
    for (size_t j = 0; j < nparts; j++) {
        double c = parts[j].alpha, d = parts[j].beta;
        if (a > c && b > d) {
            double crossing = (a - c) / ((a - c) + (b - d));
            if (crossing > floor) floor = crossing;
        }
    }
    return floor;
}

/* log P(a sequence with k reproductions in n | R). */
static double log_m_regression(const rt_decide_settings *s, const line_model *lm, double k,
                               double n)
{
    double full = s->full_weight > 0 ? log(s->full_weight) + log_m_shifted(s->full, lm->floor, k, n)
                                     : -INFINITY;
    double partial = s->full_weight < 1
                         ? log1p(-s->full_weight) + log_m_shifted(s->partial, lm->floor, k, n)
                         : -INFINITY;
    return log_sum_exp(full, partial);
}

static double log_odds_at(const rt_decide_settings *s, const line_model *lm, double k, double n)
{
    return lm->prior_log_odds + log_m_regression(s, lm, k, n) - log_m(lm->rate, k, n);
}

static double logistic(double lo)
{
    if (lo >= 0) return 1 / (1 + exp(-lo));
    double e = exp(lo);
    return e / (1 + e);
}

double rt_decide_line_log_odds(const rt_decide_settings *s, const rt_decide_line *line,
                               size_t compared)
{
    line_model lm;
    line_model_init(s, line, &lm);
    double k = (double)(line->reproduced < compared ? line->reproduced : compared);
    return log_odds_at(s, &lm, k, (double)compared);
}

double rt_decide_line_posterior(const rt_decide_settings *s, const rt_decide_line *line,
                                size_t compared)
{
    return logistic(rt_decide_line_log_odds(s, line, compared));
}

static bool decided(const rt_decide_settings *s, double p)
{
    return p >= s->confidence || p <= 1 - s->confidence;
}

/* P(the line is decided after b more retriggers), over the outcomes its posterior
 * predicts: under each hypothesis P(k' of b | so far) = C(b, k') M(k + k', n + b) / M(k, n)
 * (exchangeable runs), mixed by p_regression. */
static double p_decided_after(const rt_decide_settings *s, const line_model *lm, double k, double n,
                              size_t b)
{
    double reg = log_m_regression(s, lm, k, n), intermittent = log_m(lm->rate, k, n);
    double p = logistic(lm->prior_log_odds + reg - intermittent);
    double total = 0, bd = (double)b;
    for (double j = 0; j <= bd; j++) {
        double c = log_choose(bd, j);
        double reg_j = log_m_regression(s, lm, k + j, n + bd);
        double intermittent_j = log_m(lm->rate, k + j, n + bd);
        double q = p * exp(c + reg_j - reg) + (1 - p) * exp(c + intermittent_j - intermittent);
        if (decided(s, logistic(lm->prior_log_odds + reg_j - intermittent_j))) total += q;
    }
    return total;
}

/* The batch in least..most minimising b + round_cost * P(undecided after b), for the open
 * lines (the largest of theirs); a batch that uses every retrigger left counts as final. */
static size_t choose_batch(const rt_decide_settings *s, const rt_decide_line *lines, size_t nlines,
                           size_t compared, size_t least, size_t most, size_t left)
{
    size_t best_all = 0;
    for (size_t i = 0; i < nlines; i++) {
        double k = (double)(lines[i].reproduced < compared ? lines[i].reproduced : compared);
        double n = (double)compared;
        line_model lm;
        line_model_init(s, &lines[i], &lm);
        if (compared > 0 && decided(s, logistic(log_odds_at(s, &lm, k, n)))) continue;
        size_t best = least;
        double best_cost = INFINITY;
        for (size_t b = least; b <= most; b++) {
            double undecided = b >= left ? 0 : 1 - p_decided_after(s, &lm, k, n, b);
            double cost = (double)b + s->round_cost * undecided;
            if (cost < best_cost - 1e-9) {
                best_cost = cost;
                best = b;
            }
        }
        if (best > best_all) best_all = best;
    }
    return best_all;
}

size_t rt_decide_first_batch(const rt_decide_settings *s, const rt_decide_line *lines,
                             size_t nlines, size_t spent)
{
    size_t max = (size_t)s->max_retriggers;
    if (spent >= max || nlines == 0) return 0;
    size_t left = max - spent;
    size_t most = left < (size_t)s->first_batch_max ? left : (size_t)s->first_batch_max;
    size_t least = (size_t)s->first_batch_min < most ? (size_t)s->first_batch_min : most;
    return choose_batch(s, lines, nlines, 0, least, most, left);
}

size_t rt_decide_next_batch(const rt_decide_settings *s, const rt_decide_input *in)
{
    size_t max = (size_t)s->max_retriggers;
    if (in->spent >= max || in->nlines == 0) return 0;
    if (in->compared == 0 && in->pending == 0)
        return rt_decide_first_batch(s, in->lines, in->nlines, in->spent);
    size_t left = max - in->spent;
    return choose_batch(s, in->lines, in->nlines, in->compared, 1, left, left);
}

static void set_result(rt_decide_result *out, rt_verdict verdict, const char *reason)
{
    out->verdict = verdict;
    snprintf(out->reason, sizeof out->reason, "%s", reason);
}

int rt_decide_evaluate(const rt_decide_settings *s, const rt_decide_input *in,
                       rt_decide_result *out)
{
    memset(out, 0, sizeof *out);
    out->line = -1;
    set_result(out, RT_VERDICT_UNDECIDED, "invalid-input");
    if (rt_decide_settings_check(s) != RT_OK || in->nlines > RT_VERDICT_MAX_LINES ||
        (in->nlines && !in->lines) || in->compared + in->pending > in->spent)
        return RT_EINVAL;
    for (size_t i = 0; i < in->nlines; i++)
        if (in->lines[i].reproduced > in->compared) return RT_EINVAL;
    if (in->nlines == 0) {
        set_result(out, RT_VERDICT_UNDECIDED, "no-failure-lines");
        return RT_OK;
    }

    double best = -1;
    bool all_low = true;
    for (size_t i = 0; i < in->nlines; i++) {
        double p = rt_decide_line_posterior(s, &in->lines[i], in->compared);
        out->p_regression[i] = p;
        if (p > best) {
            best = p;
            out->line = (long)i;
        }
        if (p > 1 - s->confidence) all_low = false;
    }
    if (in->compared > 0 && best >= s->confidence) {
        set_result(out, RT_VERDICT_REGRESSION, "confident");
        return RT_OK;
    }
    if (in->compared > 0 && all_low) {
        out->line = -1;
        set_result(out, RT_VERDICT_INTERMITTENT, "confident");
        return RT_OK;
    }
    if (in->pending > 0) {
        set_result(out, RT_VERDICT_NOT_YET, "waiting-for-retriggers");
        return RT_OK;
    }
    out->more = rt_decide_next_batch(s, in);
    if (out->more > 0) {
        set_result(out, RT_VERDICT_NOT_YET, "need-more");
        return RT_OK;
    }
    if (in->compared == 0) {
        set_result(out, RT_VERDICT_UNDECIDED, "no-usable-retriggers");
        return RT_OK;
    }
    bool regression = best >= 0.5;
    if (!regression) out->line = -1;
    set_result(out, regression ? RT_VERDICT_REGRESSION : RT_VERDICT_INTERMITTENT, "low-confidence");
    return RT_OK;
}

int rt_decide_fit_population(const rt_decide_counts *tests, size_t ntests, rt_decide_beta *out)
{
    /* Beta-binomial moments with unequal n: with m the mean rate and rho = 1 / (a + b + 1),
     * E[(p_i - m)^2] = m (1 - m) (1 + (n_i - 1) rho) / n_i; averaged over the tests,
     * rho = (S / (m (1 - m)) - mean(1 / n_i)) / mean((n_i - 1) / n_i). */
    double sum_p = 0, sum_inv = 0, count = 0;
    for (size_t i = 0; i < ntests; i++) {
        if (tests[i].runs <= 0) continue;
        long failures = tests[i].failures < 0               ? 0
                        : tests[i].failures > tests[i].runs ? tests[i].runs
                                                            : tests[i].failures;
        sum_p += (double)failures / (double)tests[i].runs;
        sum_inv += 1 / (double)tests[i].runs;
        count++;
    }
    if (count < 2) return RT_EINVAL;
    double m = sum_p / count;
    if (m <= 0 || m >= 1) return RT_EINVAL;
    double ss = 0;
    for (size_t i = 0; i < ntests; i++) {
        if (tests[i].runs <= 0) continue;
        long failures = tests[i].failures < 0               ? 0
                        : tests[i].failures > tests[i].runs ? tests[i].runs
                                                            : tests[i].failures;
        double d = (double)failures / (double)tests[i].runs - m;
        ss += d * d;
    }
    double mean_inv = sum_inv / count;
    double rho = 1.0;
    if (mean_inv < 1) rho = (ss / count / (m * (1 - m)) - mean_inv) / (1 - mean_inv);
    /* rho near 0: every test at the same rate; near 1: rates all 0 or 1. Kept in a range
     * where the Beta stays a proper, not absurdly concentrated, distribution. */
    if (rho < 1e-4) rho = 1e-4;
    if (rho > 0.999) rho = 0.999;
    double total = 1 / rho - 1;
    out->alpha = m * total;
    out->beta = (1 - m) * total;
    return RT_OK;
}

rt_decide_beta rt_decide_beta_size_biased(rt_decide_beta all)
{
    return (rt_decide_beta){all.alpha + 1, all.beta};
}

double rt_decide_prior_estimate(long regressions, long intermittents, double fallback,
                                double strength)
{
    if (regressions < 0) regressions = 0;
    if (intermittents < 0) intermittents = 0;
    if (!(strength > 0)) strength = 1;
    return ((double)regressions + strength * fallback) /
           ((double)regressions + (double)intermittents + strength);
}
