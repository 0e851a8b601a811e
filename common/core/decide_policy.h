/* SPDX-License-Identifier: MPL-2.0 */
/* decide_policy.h - the verdict policies over one retrigger set's evidence, each with the
 * verdict the others would give on the same evidence (shadow verdicts). Pure: no I/O, no
 * clock, no globals, no allocation; thread-safe.
 *
 *   seed      today's rule, common/verdict.c called as is: a line reproduced by
 *             decide_threshold retriggers is a regression. Asks for retriggers_per_failure
 *             retriggers at once.
 *   adaptive  the model of common/decide_model.h: per-line posterior from the test's
 *             history and the reproductions, batches chosen by the model, at most
 *             decide_max_retriggers in all, then the posterior decides ("low-confidence").
 *   mozci     regression only when every retrigger that gave evidence failed with a line of
 *             the original (the same line in all of them); intermittent as soon as one did
 *             not. Asks for retriggers_per_failure retriggers at once.
 *
 * The evidence is the same for all three: rt_verdict_input (the original's lines, the
 * retriggers' states and lines). rt_verdict_decide counts it once; an original without
 * compared lines is decided by the seed rule for every policy (undecided no-failure-lines).
 * `more` is how many retriggers a policy would
 * request now to reach its plan; it is 0 once a policy has what it wants. */
#ifndef RETRIG_COMMON_DECIDE_POLICY_H
#define RETRIG_COMMON_DECIDE_POLICY_H

#include <stddef.h>

#include "common/core/decide_model.h"
#include "common/core/errors.h"
#include "common/core/verdict.h"

typedef enum {
    RT_POLICY_SEED,
    RT_POLICY_ADAPTIVE,
    RT_POLICY_MOZCI,
} rt_policy;
#define RT_POLICY_COUNT 3

typedef struct rt_policy_input {
    rt_verdict_input evidence;        /* threshold: decide_threshold (seed) */
    const rt_decide_history *history; /* per original line; NULL: no history known */
    const unsigned *hints;            /* per original line, RT_DECIDE_HINT_*; NULL: none */
    size_t spent;                     /* retriggers so far (raised to evidence.nruns) */
    int retriggers_per_failure;       /* what seed and mozci ask for */
    const rt_decide_settings *model;  /* adaptive */
} rt_policy_input;

typedef struct rt_policy_outcome {
    rt_verdict verdict;
    char reason[RT_VERDICT_REASON_SIZE];
    size_t more; /* retriggers this policy would request now */
} rt_policy_outcome;

typedef struct rt_policy_result {
    rt_policy policy;                           /* the policy in force */
    rt_policy_outcome outcome[RT_POLICY_COUNT]; /* every policy's; outcome[policy] rules */
    rt_verdict_result counts;                   /* rt_verdict_decide's counts */
    double p_regression[RT_VERDICT_MAX_LINES];  /* adaptive's, per original line */
    long line;                                  /* adaptive's likeliest regression line */
} rt_policy_result;

/* Every policy's verdict on the evidence. RT_EINVAL (every outcome undecided
 * "invalid-input") when the evidence or the model settings are invalid. */
RT_MUSTCHECK int rt_policy_decide(rt_policy policy, const rt_policy_input *in,
                                  rt_policy_result *out);

const char *rt_policy_name(rt_policy policy); /* "seed", "adaptive", "mozci" */
/* RT_EINVAL for an unknown name. */
RT_MUSTCHECK int rt_policy_parse(const char *name, rt_policy *out);

#endif
