/* SPDX-License-Identifier: MPL-2.0 */
/* decide_pool.c - the pooled posterior of one failing test over the configurations of a
 * push, and the next round's retriggers (formulas in decide_pool.h). */
#include "common/core/decide_pool.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Observations of the whole test: every configuration's run and retriggers. */
#define MAX_OBSERVATIONS (RT_POOL_MAX_CONFIGS + RT_DECIDE_MAX_RETRIGGERS)
/* Cells (failures, passes) with failures + passes <= MAX_OBSERVATIONS. */
#define MAX_CELLS ((MAX_OBSERVATIONS / 2 + 1) * (MAX_OBSERVATIONS / 2 + 1))

static const double SUBSET_RHO[] = {0.125, 0.375, 0.625, 0.875};
#define SUBSET_COUNT (sizeof SUBSET_RHO / sizeof SUBSET_RHO[0])

static double log_sum_exp(double x, double y)
{
    if (x == -INFINITY) return y;
    if (y == -INFINITY) return x;
    double m = x > y ? x : y;
    return m + log(exp(x - m) + exp(y - m));
}

static double logistic(double lo)
{
    if (lo >= 0) return 1 / (1 + exp(-lo));
    double e = exp(lo);
    return e / (1 + e);
}

/* What the likelihoods need besides the counts. */
typedef struct pool_model {
    double prior_log_odds;
    rt_decide_beta rate; /* Q = F_K */
    double floor;        /* L */
} pool_model;

static void pool_model_init(const rt_decide_settings *s, const rt_pool_input *in, pool_model *pm)
{
    rt_decide_line line = {.history = in->history, .hints = in->hints};
    pm->prior_log_odds = rt_decide_line_log_odds(s, &line, 0);
    long runs = in->history.runs > 0 ? in->history.runs : 0;
    long failures =
        in->history.signature_failures >= 0 ? in->history.signature_failures : in->history.failures;
    if (failures < 0) failures = 0;
    if (failures > runs) failures = runs;
    pm->rate = (rt_decide_beta){s->flake_failing.alpha + (double)failures,
                                s->flake_failing.beta + (double)(runs - failures)};
    const rt_decide_beta parts[2] = {s->full, s->partial};
    pm->floor = rt_decide_floor(pm->rate, parts, 2);
}

/* Per configuration: failures s and observations m counted in the likelihoods. */
typedef struct counts {
    double s[RT_POOL_MAX_CONFIGS], m[RT_POOL_MAX_CONFIGS];
    size_t n, opening;
} counts;

static void counts_init(const rt_pool_input *in, size_t opening, counts *c)
{
    c->n = in->nconfigs;
    c->opening = opening;
    for (size_t i = 0; i < in->nconfigs; i++) {
        const rt_pool_config *cfg = &in->configs[i];
        bool own = i != opening;
        c->s[i] = (double)cfg->reproduced + (own && cfg->failed ? 1 : 0);
        c->m[i] = (double)cfg->retriggers + (own ? 1 : 0);
    }
}

/* log E[r'^a (1 - r')^b] under the regression's mixture. */
static double log_e_regression(const rt_decide_settings *s, const pool_model *pm, double a,
                               double b)
{
    double full =
        s->full_weight > 0
            ? log(s->full_weight) + rt_decide_beta_log_m_shifted(s->full, pm->floor, a, a + b)
            : -INFINITY;
    double partial =
        s->full_weight < 1
            ? log1p(-s->full_weight) + rt_decide_beta_log_m_shifted(s->partial, pm->floor, a, a + b)
            : -INFINITY;
    return log_sum_exp(full, partial);
}

/* log P(D | I) and log P(D | R). */
static void log_likelihoods(const rt_decide_settings *s, const pool_model *pm, const counts *c,
                            double *log_i, double *log_r)
{
    double li[RT_POOL_MAX_CONFIGS], total_i = 0, total_s = 0, total_m = 0;
    for (size_t i = 0; i < c->n; i++) {
        li[i] = rt_decide_beta_log_m(pm->rate, c->s[i], c->m[i]);
        total_i += li[i];
        total_s += c->s[i];
        total_m += c->m[i];
    }
    *log_i = total_i;
    size_t fails = (size_t)total_s, passes = (size_t)(total_m - total_s), width = passes + 1;
    /* Every configuration broken: one cell. */
    double r_all = log(RT_POOL_ALL_WEIGHT) + log_e_regression(s, pm, total_s, total_m - total_s);
    /* Subsets: coefficients of r'^a (1 - r')^b, the opening configuration always broken. */
    double cell_e[MAX_CELLS];
    for (size_t k = 0; k < (fails + 1) * width; k++) cell_e[k] = NAN;
    double r_subsets = -INFINITY;
    for (size_t j = 0; j < SUBSET_COUNT; j++) {
        double coef[MAX_CELLS], next[MAX_CELLS];
        for (size_t k = 0; k < (fails + 1) * width; k++) coef[k] = -INFINITY;
        size_t so = (size_t)c->s[c->opening], po = (size_t)(c->m[c->opening] - c->s[c->opening]);
        size_t max_a = so, max_b = po;
        coef[so * width + po] = 0;
        double lr = log(SUBSET_RHO[j]), lu = log1p(-SUBSET_RHO[j]);
        for (size_t i = 0; i < c->n; i++) {
            if (i == c->opening) continue;
            size_t si = (size_t)c->s[i], pi = (size_t)(c->m[i] - c->s[i]);
            for (size_t k = 0; k < (fails + 1) * width; k++) next[k] = -INFINITY;
            for (size_t a = 0; a <= max_a; a++)
                for (size_t b = 0; b <= max_b; b++) {
                    double v = coef[a * width + b];
                    if (v == -INFINITY) continue;
                    size_t broken = (a + si) * width + b + pi, kept = a * width + b;
                    next[broken] = log_sum_exp(next[broken], v + lr);
                    next[kept] = log_sum_exp(next[kept], v + lu + li[i]);
                }
            max_a += si;
            max_b += pi;
            memcpy(coef, next, (fails + 1) * width * sizeof coef[0]);
        }
        double sum = -INFINITY;
        for (size_t a = 0; a <= max_a; a++)
            for (size_t b = 0; b <= max_b; b++) {
                size_t k = a * width + b;
                if (coef[k] == -INFINITY) continue;
                if (isnan(cell_e[k])) cell_e[k] = log_e_regression(s, pm, (double)a, (double)b);
                sum = log_sum_exp(sum, coef[k] + cell_e[k]);
            }
        r_subsets = log_sum_exp(r_subsets, log((1 - RT_POOL_ALL_WEIGHT) / SUBSET_COUNT) + sum);
    }
    *log_r = log_sum_exp(r_all, r_subsets);
}

static long opening_config(const rt_pool_input *in)
{
    for (size_t i = 0; i < in->nconfigs; i++)
        if (in->configs[i].failed) return (long)i;
    return -1;
}

static bool input_ok(const rt_pool_input *in)
{
    if (in->nconfigs == 0 || in->nconfigs > RT_POOL_MAX_CONFIGS || !in->configs ||
        opening_config(in) < 0)
        return false;
    size_t retriggers = 0, pending = 0;
    for (size_t i = 0; i < in->nconfigs; i++) {
        if (in->configs[i].reproduced > in->configs[i].retriggers) return false;
        retriggers += in->configs[i].retriggers;
        pending += in->configs[i].pending;
    }
    return retriggers <= RT_DECIDE_MAX_RETRIGGERS && retriggers + pending <= in->spent;
}

static double log_odds_of(const rt_decide_settings *s, const pool_model *pm, const counts *c)
{
    double li, lr;
    log_likelihoods(s, pm, c, &li, &lr);
    return pm->prior_log_odds + lr - li;
}

double rt_pool_log_odds(const rt_decide_settings *s, const rt_pool_input *in)
{
    if (!input_ok(in)) return NAN;
    pool_model pm;
    pool_model_init(s, in, &pm);
    counts c;
    counts_init(in, (size_t)opening_config(in), &c);
    return log_odds_of(s, &pm, &c);
}

double rt_pool_posterior(const rt_decide_settings *s, const rt_pool_input *in)
{
    return logistic(rt_pool_log_odds(s, in));
}

static bool decided(const rt_decide_settings *s, double p)
{
    return p >= s->confidence || p <= 1 - s->confidence;
}

/* P(decided after t more retriggers of each configuration in which[0..j)). */
static double p_decided_after(const rt_decide_settings *s, const pool_model *pm, const counts *c,
                              const size_t *which, size_t j, size_t t)
{
    double li, lr;
    log_likelihoods(s, pm, c, &li, &lr);
    double p = logistic(pm->prior_log_odds + lr - li);
    size_t outcomes = 1;
    for (size_t i = 0; i < j; i++) outcomes *= t + 1;
    double total = 0;
    for (size_t o = 0; o < outcomes; o++) {
        counts after = *c;
        double log_ways = 0;
        size_t rest = o;
        for (size_t i = 0; i < j; i++) {
            size_t k = rest % (t + 1);
            rest /= t + 1;
            after.s[which[i]] += (double)k;
            after.m[which[i]] += (double)t;
            log_ways += rt_decide_log_choose((double)t, (double)k);
        }
        double li2, lr2;
        log_likelihoods(s, pm, &after, &li2, &lr2);
        double q = p * exp(log_ways + lr2 - lr) + (1 - p) * exp(log_ways + li2 - li);
        if (decided(s, logistic(pm->prior_log_odds + lr2 - li2))) total += q;
    }
    return total;
}

/* The cheapest plan (decide_pool.h) into out->more; 0 when no retrigger is left. */
static void plan_round(const rt_decide_settings *s, const pool_model *pm, const counts *c,
                       const rt_pool_input *in, rt_pool_result *out)
{
    size_t max = (size_t)s->max_retriggers;
    if (in->spent >= max) return;
    size_t left = max - in->spent, most = left, retriggered = 0;
    if (most > (size_t)s->first_batch_max) most = (size_t)s->first_batch_max;
    for (size_t i = 0; i < in->nconfigs; i++) retriggered += in->configs[i].retriggers;
    /* The first round asks first_batch_min at least, as the adaptive model's does. */
    size_t least = retriggered == 0 ? (size_t)s->first_batch_min : 1;
    if (least > most) least = most;
    /* The failing configurations, fewest retriggers first (insertion sort, stable). */
    size_t failing[RT_POOL_MAX_CONFIGS], nfailing = 0;
    for (size_t i = 0; i < in->nconfigs; i++) {
        if (!in->configs[i].failed) continue;
        size_t at = nfailing++;
        while (at > 0 && in->configs[failing[at - 1]].retriggers > in->configs[i].retriggers) {
            failing[at] = failing[at - 1];
            at--;
        }
        failing[at] = i;
    }
    size_t best_j = 0, best_t = 0;
    double best_cost = INFINITY;
    for (size_t j = 1; j <= nfailing && j <= RT_POOL_PLAN_CONFIGS; j++) {
        for (size_t t = 1; j * t <= most; t++) {
            size_t outcomes = 1;
            for (size_t i = 0; i < j; i++) outcomes *= t + 1;
            if (outcomes > 64) break;
            if (j * t < least) continue;
            double undecided = j * t >= left ? 0 : 1 - p_decided_after(s, pm, c, failing, j, t);
            double cost = (double)(j * t) + s->round_cost * undecided;
            if (cost < best_cost - 1e-9) {
                best_cost = cost;
                best_j = j;
                best_t = t;
            }
        }
    }
    for (size_t i = 0; i < best_j; i++) out->more[failing[i]] = best_t;
    out->more_total = best_j * best_t;
}

static void set_result(rt_pool_result *out, rt_verdict verdict, const char *reason)
{
    out->verdict = verdict;
    snprintf(out->reason, sizeof out->reason, "%s", reason);
}

int rt_pool_evaluate(const rt_decide_settings *s, const rt_pool_input *in, rt_pool_result *out)
{
    memset(out, 0, sizeof *out);
    out->opening = -1;
    set_result(out, RT_VERDICT_UNDECIDED, "invalid-input");
    if (rt_decide_settings_check(s) != RT_OK || !input_ok(in)) return RT_EINVAL;
    out->opening = opening_config(in);
    pool_model pm;
    pool_model_init(s, in, &pm);
    counts c;
    counts_init(in, (size_t)out->opening, &c);
    double p = logistic(log_odds_of(s, &pm, &c));
    out->p_regression = p;

    size_t pending = 0;
    double observed = 0;
    for (size_t i = 0; i < in->nconfigs; i++) {
        pending += in->configs[i].pending;
        observed += c.m[i];
    }
    /* Some evidence beyond the failure that opened the set. */
    if (observed > 0 && p >= s->confidence) {
        set_result(out, RT_VERDICT_REGRESSION, "confident");
        return RT_OK;
    }
    if (observed > 0 && p <= 1 - s->confidence) {
        set_result(out, RT_VERDICT_INTERMITTENT, "confident");
        return RT_OK;
    }
    if (pending > 0) {
        set_result(out, RT_VERDICT_NOT_YET, "waiting-for-retriggers");
        return RT_OK;
    }
    plan_round(s, &pm, &c, in, out);
    if (out->more_total > 0) {
        set_result(out, RT_VERDICT_NOT_YET, "need-more");
        return RT_OK;
    }
    if (observed == 0) {
        set_result(out, RT_VERDICT_UNDECIDED, "no-usable-retriggers");
        return RT_OK;
    }
    set_result(out, p >= 0.5 ? RT_VERDICT_REGRESSION : RT_VERDICT_INTERMITTENT, "low-confidence");
    return RT_OK;
}

int rt_pool_config_name(const char *platform, const char *label, char *out, size_t size)
{
    if (size) out[0] = '\0';
    if (!platform || !platform[0] || !size) return RT_EINVAL;
    const char *type = label ? strchr(label, '/') : NULL;
    size_t type_len = 0;
    if (type) {
        type++;
        type_len = strcspn(type, "-/");
    }
    int n = type_len ? snprintf(out, size, "%s/%.*s", platform, (int)type_len, type)
                     : snprintf(out, size, "%s", platform);
    if (n < 0 || (size_t)n >= size) {
        out[0] = '\0';
        return RT_EINVAL;
    }
    return RT_OK;
}

int rt_pool_label_family(const char *label, char *out, size_t size)
{
    if (size) out[0] = '\0';
    const char *type = label ? strchr(label, '/') : NULL;
    if (!type || !size) return RT_EINVAL;
    type++;
    size_t type_len = strcspn(type, "-/");
    if (!type_len || type[type_len] != '-' || !type[type_len + 1]) return RT_EINVAL;
    const char *suite = type + type_len + 1;
    size_t len = strlen(suite), digits = 0;
    while (digits < len && suite[len - 1 - digits] >= '0' && suite[len - 1 - digits] <= '9')
        digits++;
    if (digits && digits + 1 < len && suite[len - 1 - digits] == '-') len -= digits + 1;
    if (len >= size) return RT_EINVAL;
    memcpy(out, suite, len);
    out[len] = '\0';
    return RT_OK;
}

bool rt_pool_settle_done(const rt_pool_push_task *tasks, size_t ntasks, const char *const *known,
                         size_t nknown)
{
    if (!tasks || !ntasks) return false;
    for (size_t i = 0; i < ntasks; i++) {
        if (tasks[i].finished && !tasks[i].failed) continue;
        bool has = false;
        for (size_t k = 0; k < nknown && !has; k++)
            has = tasks[i].config && known[k] && !strcmp(tasks[i].config, known[k]);
        if (!has) return false;
    }
    return true;
}
