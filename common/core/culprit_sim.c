/* SPDX-License-Identifier: MPL-2.0 */
/* culprit_sim.c - culprit searches against a known truth (culprit_sim.h). Pure. */
#include "common/core/culprit_sim.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define RETRIGGERS 5 /* retriggers retrig-decide looked at on the failing push */

static uint64_t next_u64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static double uniform(uint64_t *state) { return (double)(next_u64(state) >> 11) * 0x1.0p-53; }

/* Uniform in lo..hi. */
static long between(uint64_t *state, long lo, long hi)
{
    return lo + (long)(next_u64(state) % (uint64_t)(hi - lo + 1));
}

static int bernoulli_count(uint64_t *state, int n, double p)
{
    int hits = 0;
    for (int i = 0; i < n; i++) hits += uniform(state) < p;
    return hits;
}

static int ceil_log2(long v)
{
    int bits = 0;
    while ((1L << bits) < v) bits++;
    return bits;
}

rt_culprit_call rt_culprit_sim_trust_first(const rt_culprit_evidence *e,
                                           const rt_culprit_model *model, void *ctx)
{
    if (e->first && e->runs > 0 && e->reproduced == 0) return (rt_culprit_call){RT_PUSH_GOOD, 0};
    return rt_culprit_seed_classify(e, model, ctx);
}

typedef struct sim_case {
    int skipped;
    bool flaky_regression;
    int history_kind; /* 0 clean, 1 flaky, 2 none */
    double rate, flake;
    long truth; /* index of the first push carrying the regression; 0: at or before the first */
    rt_culprit_push pushes[RT_CULPRIT_MAX_PUSHES];
    rt_culprit_model model;
} sim_case;

static void draw_case(uint64_t *rng, const rt_culprit_sim_options *o, sim_case *c)
{
    memset(c, 0, sizeof *c);
    c->skipped = (int)between(rng, 1, o->max_skipped);
    c->flaky_regression = uniform(rng) >= 0.4;
    c->rate = c->flaky_regression ? 0.3 + 0.6 * uniform(rng) : 1.0;
    double u = uniform(rng);
    long history_runs = 0, history_failures = 0;
    if (u < 0.4) {
        c->history_kind = 0;
        c->flake = 0.001;
    } else if (u < 0.8) {
        c->history_kind = 1;
        c->flake = 0.01 + 0.04 * uniform(rng);
    } else {
        c->history_kind = 2;
        c->flake = 0.03 * uniform(rng);
    }
    if (c->history_kind != 2) {
        history_runs = between(rng, 200, 2000);
        history_failures = bernoulli_count(rng, (int)history_runs, c->flake);
    }
    long failing = c->skipped + 1;
    if (c->flaky_regression && uniform(rng) < 0.1)
        c->truth = 0;
    else
        c->truth = between(rng, 1, failing);
    c->pushes[0] = (rt_culprit_push){.runs = 1, .reproduced = 0};
    int reproduced;
    do reproduced = bernoulli_count(rng, RETRIGGERS, c->rate);
    while (reproduced < o->threshold);
    c->pushes[failing] = (rt_culprit_push){.runs = 1 + RETRIGGERS, .reproduced = 1 + reproduced};
    c->model = (rt_culprit_model){
        .confidence = o->confidence,
        .threshold = o->threshold,
        .reproduction_rate = rt_culprit_reproduction_rate(1 + RETRIGGERS, 1 + reproduced),
        .history_runs = history_runs,
        .history_failures = history_failures,
        .failing_runs = 1 + RETRIGGERS,
        .failing_reproduced = 1 + reproduced,
    };
}

typedef struct sim_outcome {
    bool correct, stopped;
    long rounds, reruns, jobs, linear;
} sim_outcome;

static void add(rt_culprit_sim_row *row, const char *name, int skipped, const sim_outcome *o)
{
    snprintf(row->name, sizeof row->name, "%s", name);
    int bound = ceil_log2(skipped + 1);
    row->cases++;
    row->correct += o->correct;
    row->stopped += o->stopped;
    row->rounds += o->rounds;
    if (o->rounds > row->rounds_max) row->rounds_max = o->rounds;
    row->within_bound += o->rounds <= bound;
    row->within_bound_reruns_aside += o->rounds - o->reruns <= bound;
    if (bound > row->bound_max) row->bound_max = bound;
    row->jobs += o->jobs;
    row->linear_jobs += o->linear;
    if (o->jobs > row->jobs_max) row->jobs_max = o->jobs;
}

int rt_culprit_sim_run(const rt_culprit_sim_options *o, rt_culprit_sim_report *out)
{
    if (!o || !out || o->cases < 1 || o->cases > RT_CULPRIT_SIM_MAX_CASES || o->max_skipped < 1 ||
        o->max_skipped > RT_CULPRIT_MAX_PUSHES - 2 || o->max_jobs < 0 ||
        o->max_jobs > RT_CULPRIT_MAX_JOBS)
        return RT_EINVAL;
    static const char *const windows[RT_CULPRIT_SIM_WINDOWS] = {"1", "2-3", "4-7", "8-15", "16+"};
    static const char *const kinds[RT_CULPRIT_SIM_KINDS] = {
        "solid, clean history", "solid, flaky history", "solid, no history",
        "flaky, clean history", "flaky, flaky history", "flaky, no history"};
    memset(out, 0, sizeof *out);
    uint64_t rng = o->seed;
    sim_case c;
    for (long n = 0; n < o->cases; n++) {
        draw_case(&rng, o, &c);
        size_t count = (size_t)c.skipped + 2;
        rt_culprit_model push_model = c.model;
        push_model.confidence = rt_culprit_push_confidence(c.model.confidence, count);
        /* The times of a fresh probe, for the linear backfill: what the rule asks of a
         * push with no runs. */
        rt_culprit_classify_fn classify = o->classify ? o->classify : rt_culprit_seed_classify;
        rt_culprit_evidence fresh = {0, 0, false};
        int fresh_times = classify(&fresh, &push_model, o->classify_ctx).more;
        long jobs = 0, rounds = 0, reruns = 0;
        rt_culprit_result res;
        for (;;) {
            rt_culprit_input in = {.pushes = c.pushes,
                                   .npushes = count,
                                   .model = c.model,
                                   .jobs_left = o->max_jobs - jobs,
                                   .classify = o->classify,
                                   .classify_ctx = o->classify_ctx};
            if (rt_culprit_next(&in, &res) != RT_OK) return RT_EINVAL;
            if (res.status != RT_CULPRIT_SEARCHING) break;
            if (res.probe < 0 || rounds > 4 * RT_CULPRIT_MAX_PUSHES) return RT_EINVAL;
            const long pushes[2] = {res.probe, res.confirm};
            const int times[2] = {res.times, res.confirm_times};
            for (int i = 0; i < 2 && pushes[i] >= 0; i++) {
                double p = pushes[i] >= c.truth ? c.rate : c.flake;
                c.pushes[pushes[i]].runs += times[i];
                c.pushes[pushes[i]].reproduced += bernoulli_count(&rng, times[i], p);
                jobs += times[i];
            }
            rounds++;
            reruns += !strcmp(res.reason, "more-runs");
        }
        sim_outcome outcome = {
            .correct = (res.status == RT_CULPRIT_FOUND && res.culprit == c.truth && c.truth > 0) ||
                       (res.status == RT_CULPRIT_BEFORE_WINDOW && c.truth == 0),
            .stopped = res.status == RT_CULPRIT_STOPPED,
            .rounds = rounds,
            .reruns = reruns,
            .jobs = jobs,
            .linear = (long)c.skipped * fresh_times};
        int w = c.skipped == 1    ? 0
                : c.skipped <= 3  ? 1
                : c.skipped <= 7  ? 2
                : c.skipped <= 15 ? 3
                                  : 4;
        int k = (c.flaky_regression ? 3 : 0) + c.history_kind;
        add(&out->by_window[w], windows[w], c.skipped, &outcome);
        add(&out->by_kind[k], kinds[k], c.skipped, &outcome);
        add(&out->total, "all", c.skipped, &outcome);
    }
    return RT_OK;
}

/* Text appended with snprintf semantics: used counts what was needed, buf holds what fits. */
typedef struct text {
    char *buf;
    size_t size, used;
} text;

RT_PRINTF(2, 3) static void append(text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *at = t->buf && t->used < t->size ? t->buf + t->used : NULL;
    int n = vsnprintf(at, at ? t->size - t->used : 0, fmt, ap);
    va_end(ap);
    if (n > 0) t->used += (size_t)n;
}

static void append_row(text *t, const rt_culprit_sim_row *r)
{
    if (r->cases == 0) return;
    double cases = (double)r->cases;
    append(t,
           "| %s | %ld | %.1f%% | %ld | %.2f | %ld | %d | %.1f%% | %.1f%% | %.1f | %ld | %.2f |\n",
           r->name, r->cases, 100.0 * (double)r->correct / cases, r->stopped,
           (double)r->rounds / cases, r->rounds_max, r->bound_max,
           100.0 * (double)r->within_bound / cases,
           100.0 * (double)r->within_bound_reruns_aside / cases, (double)r->jobs / cases,
           r->jobs_max, r->linear_jobs ? (double)r->jobs / (double)r->linear_jobs : 0.0);
}

size_t rt_culprit_sim_format(const rt_culprit_sim_report *report, char *buf, size_t size)
{
    text t = {buf, size, 0};
    if (buf && size) buf[0] = '\0';
    const struct {
        const char *title;
        const rt_culprit_sim_row *rows;
        size_t count;
    } groups[] = {
        {"skipped pushes C", report->by_window, RT_CULPRIT_SIM_WINDOWS},
        {"regression, test", report->by_kind, RT_CULPRIT_SIM_KINDS},
    };
    for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++) {
        append(&t,
               "%s| %s | cases | correct | stopped | rounds (mean) | rounds (max) | "
               "ceil(log2(C+1)) (max) | rounds <= ceil(log2(C+1)) | the same, reruns aside | "
               "jobs (mean) | jobs (max) | jobs / linear |\n"
               "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n",
               g ? "\n" : "", groups[g].title);
        for (size_t i = 0; i < groups[g].count; i++) append_row(&t, &groups[g].rows[i]);
        append_row(&t, &report->total);
    }
    return t.used;
}
