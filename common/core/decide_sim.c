/* SPDX-License-Identifier: MPL-2.0 */
/* decide_sim.c - simulated failures (xoshiro256** generator, documented mix), their JSON
 * form, and policy runs over them batch by batch. */
#include "common/core/decide_sim.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- PRNG: splitmix64 seeds xoshiro256** (public-domain algorithms by Vigna) ---- */

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void rt_sim_rng_seed(rt_sim_rng *rng, uint64_t seed)
{
    for (size_t i = 0; i < 4; i++) rng->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t rt_sim_rng_next(rt_sim_rng *rng)
{
    uint64_t *s = rng->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double rt_sim_rng_uniform(rt_sim_rng *rng)
{
    return (double)(rt_sim_rng_next(rng) >> 11) * 0x1.0p-53;
}

/* ---- the mix ---- */

#define NO_HISTORY_SHARE   0.15
#define HISTORY_MIN_RUNS   3.0
#define HISTORY_MAX_RUNS   1000.0
#define FULL_REGRESSIONS   0.70
#define PARTIAL_MIN        0.3
#define PARTIAL_MAX        0.9
#define FLAKY_BEFORE_SHARE 0.25
#define FLAKY_BEFORE_MIN   0.003
#define FLAKY_BEFORE_MAX   0.10
#define INTERMITTENT_MIN   0.003
#define INTERMITTENT_MAX   0.5

static const char *const mix_names[] = {"uniform", "observed"};

int rt_sim_mix_parse(const char *name, rt_sim_mix *out)
{
    for (size_t i = 0; i < 2; i++) {
        if (name && !strcmp(name, mix_names[i])) {
            *out = (rt_sim_mix)i;
            return RT_OK;
        }
    }
    return RT_EINVAL;
}

static double log_uniform(rt_sim_rng *rng, double lo, double hi)
{
    return exp(log(lo) + rt_sim_rng_uniform(rng) * (log(hi) - log(lo)));
}

static long binomial(rt_sim_rng *rng, long n, double p)
{
    long k = 0;
    if (p <= 0) return 0;
    for (long i = 0; i < n; i++)
        if (rt_sim_rng_uniform(rng) < p) k++;
    return k;
}

void rt_sim_generate(rt_sim_rng *rng, rt_sim_mix mix, double regression_share, rt_sim_case *out)
{
    memset(out, 0, sizeof *out);
    out->regression = rt_sim_rng_uniform(rng) < regression_share;
    long runs = 0;
    if (rt_sim_rng_uniform(rng) >= NO_HISTORY_SHARE) {
        runs = (long)floor(log_uniform(rng, HISTORY_MIN_RUNS, HISTORY_MAX_RUNS + 1));
        if (runs > (long)HISTORY_MAX_RUNS) runs = (long)HISTORY_MAX_RUNS;
    }
    double rate, before;
    if (out->regression) {
        before = rt_sim_rng_uniform(rng) < FLAKY_BEFORE_SHARE
                     ? log_uniform(rng, FLAKY_BEFORE_MIN, FLAKY_BEFORE_MAX)
                     : 0;
        rate = rt_sim_rng_uniform(rng) < FULL_REGRESSIONS
                   ? 1.0
                   : PARTIAL_MIN + (PARTIAL_MAX - PARTIAL_MIN) * rt_sim_rng_uniform(rng);
    } else {
        /* observed: a log-uniform population weighted by f has a uniform density. */
        rate =
            mix == RT_SIM_MIX_OBSERVED
                ? INTERMITTENT_MIN + (INTERMITTENT_MAX - INTERMITTENT_MIN) * rt_sim_rng_uniform(rng)
                : log_uniform(rng, INTERMITTENT_MIN, INTERMITTENT_MAX);
        before = rate;
    }
    out->history = (rt_decide_history){
        .runs = runs, .failures = binomial(rng, runs, before), .signature_failures = -1};
    out->noutcomes = RT_SIM_OUTCOMES;
    for (size_t i = 0; i < out->noutcomes; i++) out->outcomes[i] = rt_sim_rng_uniform(rng) < rate;
    out->rate = rate;
    out->prior_rate = before;
}

/* ---- JSON ---- */

json_t *rt_sim_case_json(const rt_sim_case *c)
{
    json_t *outcomes = json_array();
    for (size_t i = 0; outcomes && i < c->noutcomes; i++)
        json_array_append_new(outcomes, json_boolean(c->outcomes[i]));
    json_t *doc = json_pack("{s:s, s:{s:I, s:I}, s:o}", "truth",
                            c->regression ? "regression" : "intermittent", "history", "runs",
                            (json_int_t)c->history.runs, "failures",
                            (json_int_t)c->history.failures, "outcomes", outcomes);
    if (doc && c->rate >= 0) json_object_set_new(doc, "rate", json_real(c->rate));
    if (doc && c->prior_rate >= 0) json_object_set_new(doc, "prior_rate", json_real(c->prior_rate));
    return doc;
}

static int optional_rate(const json_t *doc, const char *key, double *out, char *errstr)
{
    const json_t *v = json_object_get(doc, key);
    *out = -1;
    if (!v) return RT_OK;
    if (!json_is_number(v) || json_number_value(v) < 0 || json_number_value(v) > 1) {
        rt_set_errstr(errstr, "\"%s\" must be a number from 0 to 1", key);
        return RT_EPROTO;
    }
    *out = json_number_value(v);
    return RT_OK;
}

int rt_sim_case_parse(const json_t *doc, rt_sim_case *out, char *errstr)
{
    memset(out, 0, sizeof *out);
    out->history.signature_failures = -1;
    if (!json_is_object(doc)) {
        rt_set_errstr(errstr, "a case must be a JSON object");
        return RT_EPROTO;
    }
    const char *truth = json_string_value(json_object_get(doc, "truth"));
    if (!truth || (strcmp(truth, "regression") && strcmp(truth, "intermittent"))) {
        rt_set_errstr(errstr, "\"truth\" must be \"regression\" or \"intermittent\"");
        return RT_EPROTO;
    }
    out->regression = !strcmp(truth, "regression");
    const json_t *history = json_object_get(doc, "history");
    const json_t *runs = json_object_get(history, "runs");
    const json_t *failures = json_object_get(history, "failures");
    if (!json_is_object(history) || !json_is_integer(runs) || !json_is_integer(failures) ||
        json_integer_value(runs) < 0 || json_integer_value(runs) > 1000000000 ||
        json_integer_value(failures) < 0 ||
        json_integer_value(failures) > json_integer_value(runs)) {
        rt_set_errstr(errstr, "\"history\" must be {\"runs\": N, \"failures\": K} with "
                              "0 <= K <= N <= 1000000000");
        return RT_EPROTO;
    }
    out->history.runs = (long)json_integer_value(runs);
    out->history.failures = (long)json_integer_value(failures);
    const json_t *outcomes = json_object_get(doc, "outcomes");
    if (!json_is_array(outcomes) || json_array_size(outcomes) == 0 ||
        json_array_size(outcomes) > RT_SIM_MAX_OUTCOMES) {
        rt_set_errstr(errstr, "\"outcomes\" must be an array of 1 to %d booleans",
                      RT_SIM_MAX_OUTCOMES);
        return RT_EPROTO;
    }
    out->noutcomes = json_array_size(outcomes);
    for (size_t i = 0; i < out->noutcomes; i++) {
        const json_t *o = json_array_get(outcomes, i);
        if (!json_is_boolean(o)) {
            rt_set_errstr(errstr, "\"outcomes\"[%zu] must be true or false", i);
            return RT_EPROTO;
        }
        out->outcomes[i] = json_is_true(o);
    }
    int rc = optional_rate(doc, "rate", &out->rate, errstr);
    if (rc == RT_OK) rc = optional_rate(doc, "prior_rate", &out->prior_rate, errstr);
    return rc;
}

/* ---- runs ---- */

static const char SIM_LINE[] =
    "TEST-UNEXPECTED-FAIL | simulated/test_case.html | the failure the retriggers may reproduce";

int rt_sim_init(rt_sim *sim, const rt_decide_settings *model, int retriggers_per_failure,
                int threshold)
{
    memset(sim, 0, sizeof *sim);
    if (rt_decide_settings_check(model) != RT_OK || retriggers_per_failure < 1 || threshold < 1)
        return RT_EINVAL;
    sim->model = *model;
    sim->retriggers_per_failure = retriggers_per_failure;
    sim->threshold = threshold;
    int rc = rt_failure_line_parse(SIM_LINE, sizeof SIM_LINE - 1, &sim->line);
    return rc == RT_ENOTFOUND ? RT_EINVAL : rc;
}

void rt_sim_free(rt_sim *sim)
{
    if (sim) rt_failure_line_free(&sim->line);
}

static bool is_final(rt_verdict verdict)
{
    return verdict == RT_VERDICT_REGRESSION || verdict == RT_VERDICT_INTERMITTENT;
}

int rt_sim_run(const rt_sim *sim, rt_policy policy, const rt_sim_case *c, rt_sim_result *out)
{
    memset(out, 0, sizeof *out);
    out->verdict = RT_VERDICT_UNDECIDED;
    if (c->noutcomes == 0 || c->noutcomes > RT_SIM_MAX_OUTCOMES) return RT_EINVAL;
    /* No policy may ask for more retriggers than the case holds outcomes for. */
    rt_decide_settings model = sim->model;
    if ((size_t)model.max_retriggers > c->noutcomes) model.max_retriggers = (int)c->noutcomes;
    int per_failure = sim->retriggers_per_failure;
    if ((size_t)per_failure > c->noutcomes) per_failure = (int)c->noutcomes;

    rt_verdict_run runs[RT_SIM_MAX_OUTCOMES];
    size_t spent = 0;
    for (;;) {
        rt_policy_input in = {
            .evidence = {.original = &sim->line,
                         .noriginal = 1,
                         .runs = runs,
                         .nruns = spent,
                         .threshold = sim->threshold},
            .history = &c->history,
            .spent = spent,
            .retriggers_per_failure = per_failure,
            .model = &model,
        };
        rt_policy_result r;
        int rc = rt_policy_decide(policy, &in, &r);
        if (rc != RT_OK) return rc;
        const rt_policy_outcome *o = &r.outcome[policy];
        size_t more = o->more;
        if (spent + more > c->noutcomes) more = c->noutcomes - spent;
        if (is_final(o->verdict) || more == 0) {
            out->verdict = o->verdict;
            snprintf(out->reason, sizeof out->reason, "%s", o->reason);
            out->retriggers = spent;
            out->p_regression = r.p_regression[0];
            for (size_t p = 0; p < RT_POLICY_COUNT; p++) out->shadow[p] = r.outcome[p].verdict;
            return RT_OK;
        }
        for (size_t i = spent; i < spent + more; i++)
            runs[i] =
                c->outcomes[i]
                    ? (rt_verdict_run){.state = RT_RUN_FAILED, .lines = &sim->line, .nlines = 1}
                    : (rt_verdict_run){.state = RT_RUN_PASSED};
        spent += more;
        out->rounds++;
    }
}

void rt_sim_tally_add(rt_sim_tally *t, const rt_sim_case *c, const rt_sim_result *r)
{
    t->cases++;
    if (c->regression) {
        t->regressions++;
    } else {
        t->intermittents++;
    }
    if (r->verdict == RT_VERDICT_REGRESSION) {
        if (c->regression) {
            t->correct++;
            t->regressions_found++;
        } else {
            t->intermittents_called_regression++;
        }
    } else if (r->verdict == RT_VERDICT_INTERMITTENT) {
        if (!c->regression) t->correct++;
    } else {
        t->undecided++;
    }
    if (!strcmp(r->reason, "low-confidence")) t->low_confidence++;
    t->retriggers += r->retriggers;
    t->rounds += r->rounds;
    for (size_t p = 0; p < RT_POLICY_COUNT; p++)
        if (r->shadow[p] == r->verdict) t->shadow_agree[p]++;
}
