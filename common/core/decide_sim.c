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

static const char *const mix_names[] = {"uniform", "observed", "push"};

int rt_sim_mix_parse(const char *name, rt_sim_mix *out)
{
    for (size_t i = 0; i < sizeof mix_names / sizeof mix_names[0]; i++) {
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

/* A case's "truth" and "history", per task or per push. */
static int parse_truth_history(const json_t *doc, bool *regression, rt_decide_history *history,
                               char *errstr)
{
    if (!json_is_object(doc)) {
        rt_set_errstr(errstr, "a case must be a JSON object");
        return RT_EPROTO;
    }
    const char *truth = json_string_value(json_object_get(doc, "truth"));
    if (!truth || (strcmp(truth, "regression") && strcmp(truth, "intermittent"))) {
        rt_set_errstr(errstr, "\"truth\" must be \"regression\" or \"intermittent\"");
        return RT_EPROTO;
    }
    *regression = !strcmp(truth, "regression");
    const json_t *h = json_object_get(doc, "history");
    const json_t *runs = json_object_get(h, "runs");
    const json_t *failures = json_object_get(h, "failures");
    if (!json_is_object(h) || !json_is_integer(runs) || !json_is_integer(failures) ||
        json_integer_value(runs) < 0 || json_integer_value(runs) > 1000000000 ||
        json_integer_value(failures) < 0 ||
        json_integer_value(failures) > json_integer_value(runs)) {
        rt_set_errstr(errstr, "\"history\" must be {\"runs\": N, \"failures\": K} with "
                              "0 <= K <= N <= 1000000000");
        return RT_EPROTO;
    }
    history->runs = (long)json_integer_value(runs);
    history->failures = (long)json_integer_value(failures);
    history->signature_failures = -1;
    return RT_OK;
}

int rt_sim_case_parse(const json_t *doc, rt_sim_case *out, char *errstr)
{
    memset(out, 0, sizeof *out);
    out->history.signature_failures = -1;
    int rc = parse_truth_history(doc, &out->regression, &out->history, errstr);
    if (rc != RT_OK) return rc;
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
    rc = optional_rate(doc, "rate", &out->rate, errstr);
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
    if (r->retriggers == 0 && is_final(r->verdict)) t->without_retriggers++;
    t->retriggers += r->retriggers;
    t->rounds += r->rounds;
    for (size_t p = 0; p < RT_POLICY_COUNT; p++)
        if (r->shadow[p] == r->verdict) t->shadow_agree[p]++;
}

/* ---- push-level cases ---- */

static const char *const PLATFORMS[] = {"linux1804-64", "windows11-64", "macosx1015-64",
                                        "android-em-7.0-x86_64"};
static const char *const BUILD_TYPES[] = {"opt", "debug", "asan"};
#define NPLATFORMS            (sizeof PLATFORMS / sizeof PLATFORMS[0])
#define NBUILD_TYPES          (sizeof BUILD_TYPES / sizeof BUILD_TYPES[0])
#define PUSH_MAX_CONFIGS      10
#define CONFIG_FACTOR         3.0 /* a configuration's rate: f times 1/3..3 */
#define CONFIG_MAX_RATE       0.95
#define ALL_BROKEN_SHARE      0.5 /* regressions breaking every configuration */
#define PLATFORM_BROKEN_SHARE 0.3 /* one platform's; the rest one build type's */

static const char *const sim_policy_names[RT_SIM_POLICY_COUNT] = {"seed", "adaptive", "mozci",
                                                                  "pooled"};

const char *rt_sim_policy_name(int policy)
{
    return policy >= 0 && policy < RT_SIM_POLICY_COUNT ? sim_policy_names[policy] : "unknown";
}

int rt_sim_policy_parse(const char *name, int *out)
{
    for (int p = 0; p < RT_SIM_POLICY_COUNT; p++) {
        if (name && !strcmp(name, sim_policy_names[p])) {
            *out = p;
            return RT_OK;
        }
    }
    return RT_EINVAL;
}

/* n distinct configurations of PLATFORMS x BUILD_TYPES, platform index of each in *platform
 * and build type in *build. */
static size_t draw_configs(rt_sim_rng *rng, rt_sim_push_case *out, size_t *platform, size_t *build)
{
    size_t all[NPLATFORMS * NBUILD_TYPES];
    for (size_t i = 0; i < NPLATFORMS * NBUILD_TYPES; i++) all[i] = i;
    size_t n = 1 + (size_t)(rt_sim_rng_uniform(rng) * PUSH_MAX_CONFIGS);
    for (size_t i = 0; i < n; i++) { /* a partial Fisher-Yates shuffle */
        size_t j = i + (size_t)(rt_sim_rng_uniform(rng) * (double)(NPLATFORMS * NBUILD_TYPES - i));
        size_t t = all[i];
        all[i] = all[j];
        all[j] = t;
        platform[i] = all[i] / NBUILD_TYPES;
        build[i] = all[i] % NBUILD_TYPES;
        snprintf(out->configs[i].name, sizeof out->configs[i].name, "%s/%s", PLATFORMS[platform[i]],
                 BUILD_TYPES[build[i]]);
    }
    out->nconfigs = n;
    return n;
}

void rt_sim_generate_push(rt_sim_rng *rng, double regression_share, rt_sim_push_case *out)
{
    memset(out, 0, sizeof *out);
    out->regression = rt_sim_rng_uniform(rng) < regression_share;
    size_t platform[PUSH_MAX_CONFIGS], build[PUSH_MAX_CONFIGS];
    double before;
    for (;;) {
        size_t n = draw_configs(rng, out, platform, build);
        double base;
        if (out->regression) {
            before = rt_sim_rng_uniform(rng) < FLAKY_BEFORE_SHARE
                         ? log_uniform(rng, FLAKY_BEFORE_MIN, FLAKY_BEFORE_MAX)
                         : 0;
            base = rt_sim_rng_uniform(rng) < FULL_REGRESSIONS
                       ? 1.0
                       : PARTIAL_MIN + (PARTIAL_MAX - PARTIAL_MIN) * rt_sim_rng_uniform(rng);
            double kind = rt_sim_rng_uniform(rng);
            size_t which_platform = platform[(size_t)(rt_sim_rng_uniform(rng) * (double)n)];
            size_t which_build = build[(size_t)(rt_sim_rng_uniform(rng) * (double)n)];
            for (size_t i = 0; i < n; i++) {
                bool broken =
                    kind < ALL_BROKEN_SHARE ||
                    (kind < ALL_BROKEN_SHARE + PLATFORM_BROKEN_SHARE ? platform[i] == which_platform
                                                                     : build[i] == which_build);
                out->configs[i].rate = broken ? before + (1 - before) * base : before;
            }
        } else {
            base = log_uniform(rng, INTERMITTENT_MIN, INTERMITTENT_MAX);
            before = base;
            for (size_t i = 0; i < n; i++) {
                double rate = base * log_uniform(rng, 1 / CONFIG_FACTOR, CONFIG_FACTOR);
                out->configs[i].rate = rate < CONFIG_MAX_RATE ? rate : CONFIG_MAX_RATE;
            }
        }
        bool any = false;
        for (size_t i = 0; i < n; i++) {
            out->configs[i].failed = rt_sim_rng_uniform(rng) < out->configs[i].rate;
            any |= out->configs[i].failed;
        }
        if (any) break;
    }
    long runs = 0;
    if (rt_sim_rng_uniform(rng) >= NO_HISTORY_SHARE) {
        runs = (long)floor(log_uniform(rng, HISTORY_MIN_RUNS, HISTORY_MAX_RUNS + 1));
        if (runs > (long)HISTORY_MAX_RUNS) runs = (long)HISTORY_MAX_RUNS;
    }
    out->history = (rt_decide_history){
        .runs = runs, .failures = binomial(rng, runs, before), .signature_failures = -1};
    for (size_t i = 0; i < out->nconfigs; i++) {
        rt_sim_config *c = &out->configs[i];
        c->noutcomes = RT_SIM_OUTCOMES;
        for (size_t j = 0; j < c->noutcomes; j++)
            c->outcomes[j] = rt_sim_rng_uniform(rng) < c->rate;
    }
}

void rt_sim_push_from_case(const rt_sim_case *c, rt_sim_push_case *out)
{
    memset(out, 0, sizeof *out);
    out->regression = c->regression;
    out->history = c->history;
    out->nconfigs = 1;
    rt_sim_config *only = &out->configs[0];
    snprintf(only->name, sizeof only->name, "task");
    only->failed = true;
    only->noutcomes = c->noutcomes;
    memcpy(only->outcomes, c->outcomes, c->noutcomes * sizeof c->outcomes[0]);
    only->rate = c->rate;
}

json_t *rt_sim_push_case_json(const rt_sim_push_case *c)
{
    json_t *configs = json_array();
    for (size_t i = 0; configs && i < c->nconfigs; i++) {
        const rt_sim_config *cfg = &c->configs[i];
        json_t *outcomes = json_array();
        for (size_t j = 0; outcomes && j < cfg->noutcomes; j++)
            json_array_append_new(outcomes, json_boolean(cfg->outcomes[j]));
        json_t *one = json_pack("{s:s, s:b, s:o}", "name", cfg->name, "failed", cfg->failed,
                                "outcomes", outcomes);
        if (one && cfg->rate >= 0) json_object_set_new(one, "rate", json_real(cfg->rate));
        json_array_append_new(configs, one);
    }
    return json_pack("{s:s, s:{s:I, s:I}, s:o}", "truth",
                     c->regression ? "regression" : "intermittent", "history", "runs",
                     (json_int_t)c->history.runs, "failures", (json_int_t)c->history.failures,
                     "configs", configs);
}

static int parse_config(const json_t *doc, size_t index, rt_sim_config *out, char *errstr)
{
    if (!json_is_object(doc)) {
        rt_set_errstr(errstr, "\"configs\"[%zu] must be an object", index);
        return RT_EPROTO;
    }
    const char *name = json_string_value(json_object_get(doc, "name"));
    if (!name || !*name || strlen(name) >= sizeof out->name) {
        rt_set_errstr(errstr, "\"configs\"[%zu].\"name\" must be a string of 1 to %zu bytes", index,
                      sizeof out->name - 1);
        return RT_EPROTO;
    }
    snprintf(out->name, sizeof out->name, "%s", name);
    const json_t *failed = json_object_get(doc, "failed");
    if (!json_is_boolean(failed)) {
        rt_set_errstr(errstr, "\"configs\"[%zu].\"failed\" must be true or false", index);
        return RT_EPROTO;
    }
    out->failed = json_is_true(failed);
    const json_t *outcomes = json_object_get(doc, "outcomes");
    size_t least = out->failed ? 1 : 0;
    if (!json_is_array(outcomes) || json_array_size(outcomes) < least ||
        json_array_size(outcomes) > RT_SIM_MAX_OUTCOMES) {
        rt_set_errstr(errstr,
                      "\"configs\"[%zu].\"outcomes\" must be an array of %zu to %d booleans%s",
                      index, least, RT_SIM_MAX_OUTCOMES,
                      least ? " (a configuration whose run failed can be retriggered)" : "");
        return RT_EPROTO;
    }
    out->noutcomes = json_array_size(outcomes);
    for (size_t i = 0; i < out->noutcomes; i++) {
        const json_t *o = json_array_get(outcomes, i);
        if (!json_is_boolean(o)) {
            rt_set_errstr(errstr, "\"configs\"[%zu].\"outcomes\"[%zu] must be true or false", index,
                          i);
            return RT_EPROTO;
        }
        out->outcomes[i] = json_is_true(o);
    }
    const json_t *rate = json_object_get(doc, "rate");
    out->rate = -1;
    if (rate) {
        if (!json_is_number(rate) || json_number_value(rate) < 0 || json_number_value(rate) > 1) {
            rt_set_errstr(errstr, "\"configs\"[%zu].\"rate\" must be a number from 0 to 1", index);
            return RT_EPROTO;
        }
        out->rate = json_number_value(rate);
    }
    return RT_OK;
}

int rt_sim_push_case_parse(const json_t *doc, rt_sim_push_case *out, char *errstr)
{
    memset(out, 0, sizeof *out);
    int rc = parse_truth_history(doc, &out->regression, &out->history, errstr);
    if (rc != RT_OK) return rc;
    const json_t *configs = json_object_get(doc, "configs");
    if (!json_is_array(configs) || json_array_size(configs) == 0 ||
        json_array_size(configs) > RT_SIM_MAX_CONFIGS) {
        rt_set_errstr(errstr, "\"configs\" must be an array of 1 to %d configurations",
                      RT_SIM_MAX_CONFIGS);
        return RT_EPROTO;
    }
    out->nconfigs = json_array_size(configs);
    bool any_failed = false;
    for (size_t i = 0; i < out->nconfigs; i++) {
        rc = parse_config(json_array_get(configs, i), i, &out->configs[i], errstr);
        if (rc != RT_OK) return rc;
        any_failed |= out->configs[i].failed;
        for (size_t j = 0; j < i; j++) {
            if (!strcmp(out->configs[j].name, out->configs[i].name)) {
                rt_set_errstr(errstr, "\"configs\"[%zu]: \"%s\" is there twice", i,
                              out->configs[i].name);
                return RT_EPROTO;
            }
        }
    }
    if (!any_failed) {
        rt_set_errstr(errstr, "\"configs\": no configuration failed (\"failed\": true)");
        return RT_EPROTO;
    }
    return RT_OK;
}

/* Folds one set's verdict into the test's: regression when any set says so. */
static void fold_verdict(rt_verdict *test, rt_verdict set)
{
    if (*test == RT_VERDICT_REGRESSION || set == RT_VERDICT_REGRESSION)
        *test = RT_VERDICT_REGRESSION;
    else if (*test != RT_VERDICT_INTERMITTENT || set != RT_VERDICT_INTERMITTENT)
        *test = RT_VERDICT_UNDECIDED;
}

/* The per-task policies' verdicts on one configuration's first n retriggers. */
static int per_task_shadows(const rt_sim *sim, const rt_decide_history *history,
                            const rt_sim_config *cfg, size_t n, rt_verdict *shadow)
{
    rt_verdict_run runs[RT_SIM_MAX_OUTCOMES];
    for (size_t i = 0; i < n; i++)
        runs[i] = cfg->outcomes[i]
                      ? (rt_verdict_run){.state = RT_RUN_FAILED, .lines = &sim->line, .nlines = 1}
                      : (rt_verdict_run){.state = RT_RUN_PASSED};
    rt_policy_input in = {
        .evidence = {.original = &sim->line,
                     .noriginal = 1,
                     .runs = runs,
                     .nruns = n,
                     .threshold = sim->threshold},
        .history = history,
        .spent = n,
        .retriggers_per_failure = sim->retriggers_per_failure,
        .model = &sim->model,
    };
    rt_policy_result r;
    int rc = rt_policy_decide(RT_POLICY_SEED, &in, &r);
    for (size_t p = 0; rc == RT_OK && p < RT_POLICY_COUNT; p++) shadow[p] = r.outcome[p].verdict;
    return rc;
}

static int run_per_task(const rt_sim *sim, rt_policy policy, const rt_sim_push_case *c,
                        rt_sim_push_result *out)
{
    rt_sim_result *res = &out->result;
    bool first = true, low_confidence = false;
    char reason[RT_VERDICT_REASON_SIZE] = "";
    for (size_t i = 0; i < c->nconfigs; i++) {
        const rt_sim_config *cfg = &c->configs[i];
        if (!cfg->failed) continue;
        rt_sim_case task = {.regression = c->regression,
                            .history = c->history,
                            .noutcomes = cfg->noutcomes,
                            .rate = -1,
                            .prior_rate = -1};
        memcpy(task.outcomes, cfg->outcomes, cfg->noutcomes * sizeof cfg->outcomes[0]);
        rt_sim_result r;
        int rc = rt_sim_run(sim, policy, &task, &r);
        if (rc != RT_OK) return rc;
        if (first) {
            res->verdict = r.verdict;
            memcpy(res->shadow, r.shadow, sizeof res->shadow);
            snprintf(reason, sizeof reason, "%s", r.reason);
            res->p_regression = r.p_regression;
        } else {
            if (r.verdict == RT_VERDICT_REGRESSION && res->verdict != RT_VERDICT_REGRESSION)
                snprintf(reason, sizeof reason, "%s", r.reason);
            fold_verdict(&res->verdict, r.verdict);
            for (size_t p = 0; p < RT_POLICY_COUNT; p++) fold_verdict(&res->shadow[p], r.shadow[p]);
            if (r.p_regression > res->p_regression) res->p_regression = r.p_regression;
        }
        first = false;
        low_confidence |= !strcmp(r.reason, "low-confidence");
        out->config_retriggers[i] = r.retriggers;
        res->retriggers += r.retriggers;
        if (r.rounds > res->rounds) res->rounds = r.rounds;
    }
    /* An intermittent is low-confidence when any of its sets was. */
    snprintf(res->reason, sizeof res->reason, "%s",
             res->verdict == RT_VERDICT_INTERMITTENT && low_confidence ? "low-confidence" : reason);
    return RT_OK;
}

static int run_pooled(const rt_sim *sim, const rt_sim_push_case *c, rt_sim_push_result *out)
{
    rt_sim_result *res = &out->result;
    rt_pool_config configs[RT_SIM_MAX_CONFIGS];
    memset(configs, 0, sizeof configs);
    for (size_t i = 0; i < c->nconfigs; i++) configs[i].failed = c->configs[i].failed;
    /* No round may ask more retriggers than the case holds outcomes for. */
    size_t held = 0;
    for (size_t i = 0; i < c->nconfigs; i++)
        held += c->configs[i].failed ? c->configs[i].noutcomes : 0;
    rt_decide_settings model = sim->model;
    if ((size_t)model.max_retriggers > held) model.max_retriggers = (int)held;
    size_t spent = 0;
    for (;;) {
        rt_pool_input in = {
            .history = c->history, .configs = configs, .nconfigs = c->nconfigs, .spent = spent};
        rt_pool_result r;
        int rc = rt_pool_evaluate(&model, &in, &r);
        if (rc != RT_OK) return rc;
        size_t asked = 0;
        for (size_t i = 0; i < c->nconfigs; i++) {
            size_t more = r.more[i], room = c->configs[i].noutcomes - configs[i].retriggers;
            if (more > room) more = room;
            for (size_t j = configs[i].retriggers; j < configs[i].retriggers + more; j++)
                configs[i].reproduced += c->configs[i].outcomes[j];
            configs[i].retriggers += more;
            out->config_retriggers[i] += more;
            asked += more;
        }
        if (r.verdict != RT_VERDICT_NOT_YET || asked == 0) {
            res->verdict = r.verdict;
            snprintf(res->reason, sizeof res->reason, "%s", r.reason);
            res->retriggers = spent;
            res->p_regression = r.p_regression;
            break;
        }
        spent += asked;
        res->rounds++;
    }
    /* The per-task policies' verdicts on the same evidence, folded as theirs are. */
    bool first = true;
    for (size_t i = 0; i < c->nconfigs; i++) {
        if (!c->configs[i].failed) continue;
        rt_verdict shadow[RT_POLICY_COUNT];
        int rc = per_task_shadows(sim, &c->history, &c->configs[i], configs[i].retriggers, shadow);
        if (rc != RT_OK) return rc;
        for (size_t p = 0; p < RT_POLICY_COUNT; p++) {
            if (first)
                res->shadow[p] = shadow[p];
            else
                fold_verdict(&res->shadow[p], shadow[p]);
        }
        first = false;
    }
    return RT_OK;
}

int rt_sim_run_push(const rt_sim *sim, int policy, const rt_sim_push_case *c,
                    rt_sim_push_result *out)
{
    memset(out, 0, sizeof *out);
    out->result.verdict = RT_VERDICT_UNDECIDED;
    if (c->nconfigs == 0 || c->nconfigs > RT_SIM_MAX_CONFIGS || policy < 0 ||
        policy >= RT_SIM_POLICY_COUNT)
        return RT_EINVAL;
    bool any_failed = false;
    for (size_t i = 0; i < c->nconfigs; i++) {
        if (c->configs[i].noutcomes > RT_SIM_MAX_OUTCOMES ||
            (c->configs[i].failed && c->configs[i].noutcomes == 0))
            return RT_EINVAL;
        any_failed |= c->configs[i].failed;
    }
    if (!any_failed) return RT_EINVAL;
    if (policy == RT_SIM_POLICY_POOLED) return run_pooled(sim, c, out);
    return run_per_task(sim, (rt_policy)policy, c, out);
}

void rt_sim_tally_add_push(rt_sim_tally *t, const rt_sim_push_case *c, const rt_sim_result *r)
{
    rt_sim_case truth = {.regression = c->regression};
    rt_sim_tally_add(t, &truth, r);
}
