/* SPDX-License-Identifier: MPL-2.0 */
/* culprit.c - bisecting the pushes of a window for the one that caused a regression, and the
 * seed rule that classifies a push from its runs (culprit.h). Pure. */
#include "common/core/culprit.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* P(Binomial(n, p) < k): the first k terms, each from the one before by the ratio
 * (n - i) / (i + 1) * p / (1 - p), in logarithms so that (1 - p)^n does not underflow. */
static double binomial_below(int n, double p, int k)
{
    if (k <= 0) return 0.0;
    if (k > n || p <= 0.0) return 1.0;
    if (p >= 1.0) return 0.0;
    double log_term = n * log1p(-p), log_ratio = log(p) - log1p(-p), sum = 0.0;
    for (int i = 0; i < k; i++) {
        sum += exp(log_term);
        log_term += log((double)(n - i) / (i + 1)) + log_ratio;
    }
    return sum > 1.0 ? 1.0 : sum;
}

double rt_culprit_binomial_tail(int n, double p, int k)
{
    if (k <= 0) return 1.0;
    if (k > n || p <= 0.0) return 0.0;
    if (p >= 1.0) return 1.0;
    /* The shorter sum: the k terms below, or the n - k + 1 terms from k up (as the terms
     * below n - k + 1 of Binomial(n, 1 - p)). */
    if (k <= n / 2) {
        double tail = 1.0 - binomial_below(n, p, k);
        return tail < 0.0 ? 0.0 : tail;
    }
    return binomial_below(n, 1.0 - p, n - k + 1);
}

bool rt_culprit_model_valid(const rt_culprit_model *m)
{
    return m && m->confidence >= 0.5 && m->confidence < 1.0 && m->threshold >= 1 &&
           m->threshold <= 20 && m->reproduction_rate > 0.0 && m->reproduction_rate <= 1.0 &&
           m->history_runs >= 0 && m->history_failures >= 0 &&
           m->history_failures <= m->history_runs && m->failing_runs >= 0 &&
           m->failing_runs <= RT_CULPRIT_MAX_RUNS && m->failing_reproduced >= 0 &&
           m->failing_reproduced <= m->failing_runs;
}

/* n_j: the fewest runs after which a bad push has shown j reproductions with probability at
 * least c; RT_CULPRIT_MAX_TIMES when even that many are not enough. */
static int runs_for(int j, double r, double confidence)
{
    for (int n = j; n < RT_CULPRIT_MAX_TIMES; n++)
        if (binomial_below(n, r, j) <= 1.0 - confidence) return n;
    return RT_CULPRIT_MAX_TIMES;
}

int rt_culprit_seed_plan(const rt_culprit_model *model, rt_culprit_plan *out)
{
    if (!rt_culprit_model_valid(model) || !out) return RT_EINVAL;
    double f = (double)(model->history_failures + 1) / (double)(model->history_runs + 2);
    int k = model->threshold, n = runs_for(k, model->reproduction_rate, model->confidence);
    for (int j = 1; j < model->threshold; j++) {
        int nj = runs_for(j, model->reproduction_rate, model->confidence);
        if (rt_culprit_binomial_tail(nj, f, j) <= 1.0 - model->confidence) {
            k = j;
            n = nj;
            break;
        }
    }
    *out = (rt_culprit_plan){.times = n, .reproductions = k, .max_runs = n, .flake_rate = f};
    return RT_OK;
}

rt_culprit_call rt_culprit_seed_classify(const rt_culprit_evidence *e,
                                         const rt_culprit_model *model, void *ctx)
{
    (void)ctx;
    rt_culprit_plan p;
    if (rt_culprit_seed_plan(model, &p) != RT_OK) return (rt_culprit_call){RT_PUSH_OPEN, 1};
    int m = e->runs, x = e->reproduced;
    if (x >= p.reproductions) {
        double c = model->confidence, r = model->reproduction_rate, f = p.flake_rate;
        bool flaky_history = model->history_runs > 0;
        if (!flaky_history || rt_culprit_binomial_tail(m, f, x) <= 1.0 - c)
            return (rt_culprit_call){RT_PUSH_BAD, 0};
        /* Ambiguous: a good push of this test shows as many reproductions too often. */
        if (m < p.max_runs) {
            int more = p.max_runs - m < p.times ? p.max_runs - m : p.times;
            return (rt_culprit_call){RT_PUSH_OPEN, more};
        }
        if (r >= 1.0 && m > x) return (rt_culprit_call){RT_PUSH_GOOD, 0}; /* r = 1 never passes */
        double log_ratio = x * (log(r) - log(f)) + (m > x ? (m - x) * (log1p(-r) - log1p(-f)) : 0);
        return (rt_culprit_call){log_ratio >= 0.0 ? RT_PUSH_BAD : RT_PUSH_GOOD, 0};
    }
    if (m >= p.times) return (rt_culprit_call){RT_PUSH_GOOD, 0};
    return (rt_culprit_call){RT_PUSH_OPEN, p.times - m};
}

double rt_culprit_reproduction_rate(int runs, int reproduced)
{
    if (runs < 1 || reproduced < 1 || reproduced > runs) return 0.0;
    return (reproduced > 1 ? reproduced - 1.0 : 0.5) / runs;
}

double rt_culprit_push_confidence(double confidence, size_t npushes)
{
    int probes = 1;
    while (probes < 30 && ((size_t)1 << probes) < npushes) probes++;
    return 1.0 - (1.0 - confidence) / probes;
}

const char *rt_culprit_status_name(rt_culprit_status status)
{
    switch (status) {
    case RT_CULPRIT_SEARCHING: return "searching";
    case RT_CULPRIT_FOUND: return "found";
    case RT_CULPRIT_BEFORE_WINDOW: return "culprit-before-window";
    case RT_CULPRIT_STOPPED: return "stopped";
    }
    return "unknown";
}

static int invalid(rt_culprit_result *out, const char *why)
{
    *out = (rt_culprit_result){.status = RT_CULPRIT_STOPPED,
                               .culprit = -1,
                               .probe = -1,
                               .first = -1,
                               .last = -1,
                               .good = -1,
                               .bad = -1};
    snprintf(out->reason, sizeof out->reason, "invalid-input: %s", why);
    return RT_EINVAL;
}

static bool push_valid(const rt_culprit_push *p)
{
    return p->runs >= 0 && p->runs <= RT_CULPRIT_MAX_RUNS && p->reproduced >= 0 &&
           p->reproduced <= p->runs && p->pending >= 0 && p->pending <= RT_CULPRIT_MAX_RUNS;
}

int rt_culprit_next(const rt_culprit_input *in, rt_culprit_result *out)
{
    if (!out) return RT_EINVAL;
    if (!in || !in->pushes || in->npushes < 2 || in->npushes > RT_CULPRIT_MAX_PUSHES)
        return invalid(out, "the window needs 2 to 101 pushes");
    if (!rt_culprit_model_valid(&in->model)) return invalid(out, "model out of range");
    if (in->jobs_left < 0 || in->jobs_left > RT_CULPRIT_MAX_JOBS)
        return invalid(out, "jobs_left out of range");
    rt_culprit_classify_fn classify = in->classify ? in->classify : rt_culprit_seed_classify;
    size_t count = in->npushes, failing = count - 1;
    rt_culprit_model push_model = in->model;
    push_model.confidence = rt_culprit_push_confidence(in->model.confidence, count);
    rt_culprit_call calls[RT_CULPRIT_MAX_PUSHES];
    for (size_t i = 0; i < count; i++) {
        if (!push_valid(&in->pushes[i])) return invalid(out, "runs out of range");
        if (i == failing) {
            calls[i] = (rt_culprit_call){RT_PUSH_BAD, 0};
            continue;
        }
        rt_culprit_evidence e = {in->pushes[i].runs, in->pushes[i].reproduced, i == 0};
        calls[i] = classify(&e, &push_model, in->classify_ctx);
        if (calls[i].cls != RT_PUSH_OPEN && calls[i].cls != RT_PUSH_GOOD &&
            calls[i].cls != RT_PUSH_BAD)
            return invalid(out, "classification out of range");
        if (calls[i].cls == RT_PUSH_OPEN &&
            (calls[i].more < 1 || calls[i].more > RT_CULPRIT_MAX_TIMES))
            return invalid(out, "classification asked for too few or too many runs");
    }

    /* g: the newest good push. The bisection's good end is g, or push 0 when it is presumed
     * good (it ran and reproduced nothing, in too few runs to be sure). b: the oldest bad push
     * after that end (the failing push at worst). */
    long g = -1, b = (long)failing;
    for (long i = (long)failing - 1; i >= 0; i--)
        if (calls[i].cls == RT_PUSH_GOOD) {
            g = i;
            break;
        }
    bool presumed = g < 0 && calls[0].cls == RT_PUSH_OPEN && in->pushes[0].runs > 0 &&
                    in->pushes[0].reproduced == 0;
    long lower = presumed ? 0 : g;
    for (long i = lower + 1; i < (long)failing; i++)
        if (calls[i].cls == RT_PUSH_BAD) {
            b = i;
            break;
        }
    *out = (rt_culprit_result){.status = RT_CULPRIT_SEARCHING,
                               .culprit = -1,
                               .probe = -1,
                               .confirm = -1,
                               .first = g + 1,
                               .last = b,
                               .good = g,
                               .bad = b};
    if (b == 0) {
        out->status = RT_CULPRIT_BEFORE_WINDOW;
        out->culprit = 0;
        snprintf(out->reason, sizeof out->reason, "first-push-reproduces");
        return RT_OK;
    }
    if (b == lower + 1 && !presumed) {
        out->status = RT_CULPRIT_FOUND;
        out->culprit = b;
        snprintf(out->reason, sizeof out->reason, "%s",
                 b == (long)failing && count == 2 ? "no-candidate" : "bisected");
        return RT_OK;
    }
    /* The probe: push 0 alone when only its confirmation is missing, else the middle of the
     * K = b - lower possible culprits lower+1..b that is not b, with push 0 confirmed in the
     * same round when the middle is push 1 (the answer may then be push 1 or the window's
     * first push or earlier). */
    long m = b == lower + 1 ? 0 : lower + (b - lower + 1) / 2;
    bool confirm = presumed && m == 1 && in->pushes[0].pending == 0;
    const rt_culprit_push *probe = &in->pushes[m];
    if (probe->pending > 0) {
        snprintf(out->reason, sizeof out->reason, "waiting");
        return RT_OK;
    }
    int times = calls[m].more;
    if (times > in->jobs_left) {
        out->status = RT_CULPRIT_STOPPED;
        snprintf(out->reason, sizeof out->reason, "budget-exhausted");
        return RT_OK;
    }
    out->probe = m;
    out->times = times;
    if (confirm && times + calls[0].more <= in->jobs_left) {
        out->confirm = 0;
        out->confirm_times = calls[0].more;
    }
    snprintf(out->reason, sizeof out->reason, "%s",
             m == 0 && presumed ? "confirm-first"
             : probe->runs > 0  ? "more-runs"
                                : "bisect");
    return RT_OK;
}
