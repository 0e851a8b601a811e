/* SPDX-License-Identifier: MPL-2.0 */
/* culprit_adaptive.c - a probed push classified with the adaptive verdict's Beta mixtures
 * (culprit_adaptive.h). Pure. */
#include "common/core/culprit_adaptive.h"

#include <math.h>
#include <string.h>

/* Two Beta components and their log weights (normalised). */
typedef struct mixture {
    rt_decide_beta part[2];
    double log_weight[2];
} mixture;

static double log_add(double x, double y)
{
    if (x == -INFINITY) return y;
    if (y == -INFINITY) return x;
    double m = x > y ? x : y;
    return m + log(exp(x - m) + exp(y - m));
}

static double log_or_minus_infinity(double w) { return w > 0 ? log(w) : -INFINITY; }

/* The prior components a and b, weighted w and 1 - w, updated with k successes in n. */
static mixture updated(rt_decide_beta a, rt_decide_beta b, double w, double k, double n)
{
    mixture mx = {.part = {{a.alpha + k, a.beta + n - k}, {b.alpha + k, b.beta + n - k}}};
    double la = log_or_minus_infinity(w) + rt_decide_beta_log_m(a, k, n);
    double lb = log_or_minus_infinity(1 - w) + rt_decide_beta_log_m(b, k, n);
    double total = log_add(la, lb);
    mx.log_weight[0] = la - total;
    mx.log_weight[1] = lb - total;
    return mx;
}

/* The test's flake rate: the mixture updated with its history (the prior's mix when there
 * is none), matched by its first two moments to one Beta. */
static rt_decide_beta good_rate(const rt_decide_settings *s, const rt_culprit_model *m)
{
    mixture mx = updated(s->flake_any, s->flake_failing, 1 - s->flaky_share,
                         (double)m->history_failures, (double)m->history_runs);
    double mean = 0, second = 0;
    for (int i = 0; i < 2; i++) {
        double w = exp(mx.log_weight[i]), a = mx.part[i].alpha, b = mx.part[i].beta;
        mean += w * a / (a + b);
        second += w * a * (a + 1) / ((a + b) * (a + b + 1));
    }
    double variance = second - mean * mean;
    if (!(variance > 0) || !(mean > 0 && mean < 1)) return mx.part[0];
    double strength = mean * (1 - mean) / variance - 1;
    if (!(strength > 0)) return mx.part[0];
    return (rt_decide_beta){mean * strength, (1 - mean) * strength};
}

/* What a probe's runs are weighed against: the good push's rate, the bad push's mixture of
 * regression rates and the floor L its runs reproduce at least (the test still flakes). */
typedef struct weighing {
    rt_decide_beta good;
    mixture bad;
    double floor;
} weighing;

static weighing weighing_of(const rt_decide_settings *s, const rt_culprit_model *m)
{
    double k0, n0;
    if (m->failing_runs > 0) {
        k0 = m->failing_reproduced > 2 ? m->failing_reproduced - 2 : 0;
        n0 = m->failing_runs > 2 ? m->failing_runs - 2 : 0;
        if (k0 > n0) k0 = n0;
    } else {
        n0 = 5;
        k0 = 5 * m->reproduction_rate;
    }
    weighing w = {.good = good_rate(s, m),
                  .bad = updated(s->full, s->partial, s->full_weight, k0, n0)};
    w.floor = rt_decide_floor(w.good, w.bad.part, 2);
    return w;
}

/* log P(one sequence of n runs with k reproductions | bad), and | good. */
static double log_bad(const weighing *w, double k, double n)
{
    return log_add(
        w->bad.log_weight[0] + rt_decide_beta_log_m_shifted(w->bad.part[0], w->floor, k, n),
        w->bad.log_weight[1] + rt_decide_beta_log_m_shifted(w->bad.part[1], w->floor, k, n));
}

static double log_good(const weighing *w, double k, double n)
{
    return rt_decide_beta_log_m(w->good, k, n);
}

static double p_bad(const weighing *w, int runs, int reproduced)
{
    double lo = log_bad(w, reproduced, runs) - log_good(w, reproduced, runs);
    return 1.0 / (1.0 + exp(-lo));
}

double rt_culprit_adaptive_p_bad(const rt_decide_settings *s, const rt_culprit_model *model,
                                 int runs, int reproduced)
{
    weighing w = weighing_of(s, model);
    return p_bad(&w, runs, reproduced);
}

/* The mixture's mean rate. */
static double mean_rate(const mixture *mx)
{
    double mean = 0;
    for (int i = 0; i < 2; i++)
        mean += exp(mx->log_weight[i]) * mx->part[i].alpha / (mx->part[i].alpha + mx->part[i].beta);
    return mean;
}

/* The larger of the two errors of calling n runs by the likelihood ratio: a bad push (whose
 * runs reproduce at rate r) called good, a good one called bad. */
static double call_error(const weighing *w, double r, int n)
{
    double miss = 0, false_alarm = 0;
    for (int x = 0; x <= n; x++) {
        double lc = rt_decide_log_choose(n, x);
        double lb = log_bad(w, x, n), lg = log_good(w, x, n);
        if (lb >= lg)
            false_alarm += exp(lc + lg);
        else if (r < 1)
            miss += exp(lc + x * log(r) + (n - x) * log1p(-r));
    }
    return miss > false_alarm ? miss : false_alarm;
}

static int plan_times(const rt_decide_settings *s, const rt_culprit_model *model)
{
    weighing w = weighing_of(s, model);
    double r = mean_rate(&w.bad);
    if (model->reproduction_rate < r) r = model->reproduction_rate;
    r = w.floor + (1 - w.floor) * r;
    rt_culprit_plan seed;
    int most = rt_culprit_seed_plan(model, &seed) == RT_OK ? seed.times : RT_CULPRIT_MAX_TIMES;
    for (int n = 1; n < most; n++)
        if (call_error(&w, r, n) <= 1.0 - model->confidence) return n;
    return most;
}

int rt_culprit_adaptive_init(rt_culprit_adaptive *a, const rt_decide_settings *s)
{
    if (!a || !s || rt_decide_settings_check(s) != RT_OK) return RT_EINVAL;
    memset(a, 0, sizeof *a);
    a->settings = *s;
    return RT_OK;
}

/* Field by field: a model's padding bytes are not its value (memcmp would read them). */
static bool same_model(const rt_culprit_model *x, const rt_culprit_model *y)
{
    return x->confidence == y->confidence && x->threshold == y->threshold &&
           x->reproduction_rate == y->reproduction_rate && x->history_runs == y->history_runs &&
           x->history_failures == y->history_failures && x->failing_runs == y->failing_runs &&
           x->failing_reproduced == y->failing_reproduced;
}

int rt_culprit_adaptive_times(rt_culprit_adaptive *a, const rt_culprit_model *model)
{
    if (!a || !rt_culprit_model_valid(model)) return 0;
    if (!a->planned || !same_model(&a->planned_for, model)) {
        a->planned_for = *model;
        a->times = plan_times(&a->settings, model);
        a->planned = true;
    }
    return a->times;
}

rt_culprit_call rt_culprit_adaptive_classify(const rt_culprit_evidence *e,
                                             const rt_culprit_model *model, void *ctx)
{
    rt_culprit_adaptive *a = ctx;
    int n = rt_culprit_adaptive_times(a, model);
    if (n < 1) return (rt_culprit_call){RT_PUSH_OPEN, 1};
    if (e->runs < 1) return (rt_culprit_call){RT_PUSH_OPEN, n};
    double p = rt_culprit_adaptive_p_bad(&a->settings, model, e->runs, e->reproduced);
    double c = model->confidence;
    if (p >= c) return (rt_culprit_call){RT_PUSH_BAD, 0};
    if (p <= 1.0 - c) return (rt_culprit_call){RT_PUSH_GOOD, 0};
    if (e->runs >= n) return (rt_culprit_call){p >= 0.5 ? RT_PUSH_BAD : RT_PUSH_GOOD, 0};
    return (rt_culprit_call){RT_PUSH_OPEN, n - e->runs};
}
