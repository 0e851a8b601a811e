/* SPDX-License-Identifier: MPL-2.0 */
/* decide_sim.h - offline simulation of the verdict policies (`retrig simulate`): simulated
 * failures with known truth, a policy run on each batch by batch through the same pure
 * functions the worker uses (decide_policy.h), and the tallies. Pure: no I/O, no clock, no
 * globals (the PRNG state is the caller's); a case's JSON form is parsed and built here
 * (jansson). Thread-safe per value.
 *
 * A case: {"truth": "regression"|"intermittent", "history": {"runs": N, "failures": K},
 * "outcomes": [true, false, ...]} where outcome i says whether retrigger i reproduces the
 * original's failure line; optional "rate" (what the outcomes were drawn at) and
 * "prior_rate" (a regression's flake rate before the push) are informational: no policy
 * reads them.
 *
 * The generator (rt_sim_generate), xoshiro256** seeded through splitmix64, so a seed gives
 * the same cases on every machine. Per case, in this order:
 *   truth      regression with probability regression_share (default 0.15);
 *   history    15% of tests have none; the others ran N times, N log-uniform in 3..1000;
 *   regression reproduces every time (70%), or partially (30%: r uniform in 0.3..0.9,
 *              a race); the test was already a little flaky before the push in 25% of
 *              them (f0 log-uniform in 0.3%..10%), else f0 = 0; history failures are
 *              Binomial(N, f0): the history is from before the push;
 *   intermittent fails at its own rate f: `uniform` mix, f log-uniform in 0.3%..50%
 *              among failing intermittents; `observed` mix, intermittents appear among
 *              failures in proportion to f (a log-uniform population of flaky tests weighted
 *              by how often each fails: f uniform in 0.3%..50%, so a 40% test is 40 times
 *              likelier than a 1% one per unit of log rate); history failures are
 *              Binomial(N, f) and each retrigger reproduces with probability f;
 *   outcomes   RT_SIM_OUTCOMES retriggers, each reproducing with the rate above.
 *
 * A run (rt_sim_run): no retriggers exist at first; each round the policy in force says how
 * many more it wants (`more`), they are all requested, waited on (a round) and revealed in
 * order, until the policy gives a verdict. Retriggers per failure count every one
 * requested; rounds count batches waited on.
 *
 * Push-level cases (issue 32): one failing test on one push, seen on every configuration
 * where it ran: {"truth", "history": {"runs", "failures"}, "configs": [{"name", "failed":
 * bool, "outcomes": [bool, ...]}, ...]}, `failed` the push's own run of that configuration
 * and outcomes[i] whether its i-th retrigger fails (a failing configuration needs one at
 * least); optional "rate" per configuration is informational. rt_sim_run_push runs
 *   seed, adaptive, mozci  per failing configuration, as the workers do (one set per failed
 *             task, each with the test's history): the test is a regression when any set
 *             says so, undecided when none does and one is undecided, else intermittent;
 *             retriggers add up, rounds are the most any set waited (they run side by side);
 *   pooled    the pooled model (decide_pool.h) over the whole case, retriggering the
 *             configurations it picks, at most decide_max_retriggers for the test.
 * A per-task case is a push-level case with one configuration, which failed.
 *
 * The push mix (rt_sim_generate_push; docs/simulation.md says why each number):
 *   configurations  the test ran on 1..10 (uniform) distinct configurations, platform x
 *              build type, of 4 platforms and 3 build types;
 *   history    as the per-task mixes: 15% none, else N log-uniform in 3..1000 runs of the
 *              test (all configurations together), failures Binomial(N, rate before push);
 *   intermittent  a flaky test of base rate f log-uniform in 0.3%..50%; each configuration
 *              fails at f times a factor log-uniform in 1/3..3 (at most 0.95), on its own;
 *              a draw where no configuration failed is redrawn, f included: a test is looked
 *              at because it failed, so likelier the flakier it is and the more it ran;
 *   regression  reproducing every time (70%) or partially (30%, r uniform in 0.3..0.9),
 *              already a little flaky before the push in 25% of them (f0 log-uniform in
 *              0.3%..10%); it breaks every configuration (50%), one platform's (30%) or
 *              one build type's (20%), which fail at f0 + (1 - f0) r, the others at f0; a
 *              draw where no configuration failed is redrawn, truth kept;
 *   outcomes   RT_SIM_OUTCOMES retriggers per configuration at its rate. */
#ifndef RETRIG_COMMON_DECIDE_SIM_H
#define RETRIG_COMMON_DECIDE_SIM_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/core/decide_model.h"
#include "common/core/decide_policy.h"
#include "common/core/decide_pool.h"
#include "common/core/errors.h"
#include "common/core/failure_line.h"

#define RT_SIM_OUTCOMES     10                  /* outcomes generated per case */
#define RT_SIM_MAX_OUTCOMES RT_VERDICT_MAX_RUNS /* accepted per case */

typedef struct rt_sim_case {
    bool regression;
    rt_decide_history history; /* signature_failures -1 */
    bool outcomes[RT_SIM_MAX_OUTCOMES];
    size_t noutcomes;
    double rate;       /* informational, -1: unknown */
    double prior_rate; /* informational, -1: unknown */
} rt_sim_case;

typedef struct rt_sim_rng {
    uint64_t s[4];
} rt_sim_rng;

void rt_sim_rng_seed(rt_sim_rng *rng, uint64_t seed);
uint64_t rt_sim_rng_next(rt_sim_rng *rng);
double rt_sim_rng_uniform(rt_sim_rng *rng); /* [0, 1), 53 bits */

typedef enum {
    RT_SIM_MIX_UNIFORM,
    RT_SIM_MIX_OBSERVED,
    RT_SIM_MIX_PUSH, /* push-level cases: rt_sim_generate_push */
} rt_sim_mix;

const char *rt_sim_mix_name(rt_sim_mix mix);
RT_MUSTCHECK int rt_sim_mix_parse(const char *name, rt_sim_mix *out);

/* One case drawn from the mix (above); the per-task mixes (push draws as uniform). */
void rt_sim_generate(rt_sim_rng *rng, rt_sim_mix mix, double regression_share, rt_sim_case *out);

/* The case as its JSON object (NULL: no memory), and back. rt_sim_case_parse validates:
 * RT_EPROTO with errstr naming the field. */
json_t *rt_sim_case_json(const rt_sim_case *c);
RT_MUSTCHECK int rt_sim_case_parse(const json_t *doc, rt_sim_case *out, char *errstr);

/* What every run shares. */
typedef struct rt_sim {
    rt_failure_line line; /* the original's failure line */
    rt_decide_settings model;
    int retriggers_per_failure;
    int threshold; /* decide_threshold, for seed */
} rt_sim;

/* RT_ENOMEM, or RT_EINVAL for bad settings. rt_sim_free(NULL) is a no-op. */
RT_MUSTCHECK int rt_sim_init(rt_sim *sim, const rt_decide_settings *model,
                             int retriggers_per_failure, int threshold);
void rt_sim_free(rt_sim *sim);

typedef struct rt_sim_result {
    rt_verdict verdict; /* undecided when a policy wanted more than the case holds */
    char reason[RT_VERDICT_REASON_SIZE];
    size_t retriggers, rounds;
    double p_regression;                /* adaptive's on the final evidence */
    rt_verdict shadow[RT_POLICY_COUNT]; /* every policy's verdict on the final evidence */
} rt_sim_result;

RT_MUSTCHECK int rt_sim_run(const rt_sim *sim, rt_policy policy, const rt_sim_case *c,
                            rt_sim_result *out);

typedef struct rt_sim_tally {
    size_t cases, regressions, intermittents;
    size_t correct, regressions_found, intermittents_called_regression;
    size_t undecided, low_confidence;
    size_t retriggers, rounds;
    size_t shadow_agree[RT_POLICY_COUNT];
    size_t without_retriggers; /* decided (regression or intermittent) with none */
} rt_sim_tally;

void rt_sim_tally_add(rt_sim_tally *t, const rt_sim_case *c, const rt_sim_result *r);

/* ---- push-level cases ---- */

/* The policies of a simulation: decide_policy.h's, and pooled (not a worker policy yet). */
#define RT_SIM_POLICY_POOLED ((int)RT_POLICY_COUNT)
#define RT_SIM_POLICY_COUNT  (RT_POLICY_COUNT + 1)
const char *rt_sim_policy_name(int policy); /* "seed", "adaptive", "mozci", "pooled" */
RT_MUSTCHECK int rt_sim_policy_parse(const char *name, int *out);

#define RT_SIM_MAX_CONFIGS      RT_POOL_MAX_CONFIGS
#define RT_SIM_CONFIG_NAME_SIZE 64

typedef struct rt_sim_config {
    char name[RT_SIM_CONFIG_NAME_SIZE]; /* platform/build type */
    bool failed;                        /* the push's own run */
    bool outcomes[RT_SIM_MAX_OUTCOMES]; /* its retriggers, in order */
    size_t noutcomes;
    double rate; /* informational, -1: unknown */
} rt_sim_config;

typedef struct rt_sim_push_case {
    bool regression;
    rt_decide_history history; /* signature_failures -1 */
    rt_sim_config configs[RT_SIM_MAX_CONFIGS];
    size_t nconfigs;
} rt_sim_push_case;

/* One push-level case drawn from the push mix (above). */
void rt_sim_generate_push(rt_sim_rng *rng, double regression_share, rt_sim_push_case *out);
/* A per-task case as a push-level case of one failing configuration. */
void rt_sim_push_from_case(const rt_sim_case *c, rt_sim_push_case *out);

/* The JSON form, and back (RT_EPROTO with errstr naming the field). */
json_t *rt_sim_push_case_json(const rt_sim_push_case *c);
RT_MUSTCHECK int rt_sim_push_case_parse(const json_t *doc, rt_sim_push_case *out, char *errstr);

/* A push-level run's result: rt_sim_result, with the retriggers of each configuration. */
typedef struct rt_sim_push_result {
    rt_sim_result result;
    size_t config_retriggers[RT_SIM_MAX_CONFIGS];
} rt_sim_push_result;

/* policy: RT_SIM_POLICY_* or an rt_policy. RT_EINVAL for a bad case or policy. */
RT_MUSTCHECK int rt_sim_run_push(const rt_sim *sim, int policy, const rt_sim_push_case *c,
                                 rt_sim_push_result *out);
/* The tally of a push-level case (its truth is the test's). */
void rt_sim_tally_add_push(rt_sim_tally *t, const rt_sim_push_case *c, const rt_sim_result *r);

#endif
