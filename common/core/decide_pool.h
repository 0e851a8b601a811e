/* SPDX-License-Identifier: MPL-2.0 */
/* decide_pool.h - one verdict per failing test per push: the evidence of every
 * configuration (platform and build type) where the test ran on the push, pooled in one
 * posterior, and which configurations to retrigger next. The pooled policy's model, beside
 * the per-task one (decide_model.h), whose settings and pieces it reuses. Pure: no I/O, no
 * clock, no globals, no allocation; thread-safe. Needs libm.
 *
 * The evidence, per configuration c: the push's own run (failed or passed) and its
 * retriggers, n_c of which gave evidence and k_c reproduced the test's failure. The first
 * configuration whose run failed is the one that opened the set (its failure is why the
 * test is looked at, as the original is in decide_model.h): its own run is left out of the
 * likelihoods and its retriggers count; every other configuration counts its run and its
 * retriggers, s_c failures of m_c. With one configuration the posterior is the adaptive
 * model's.
 *
 *   I  intermittent: configuration c fails at its own rate q_c, the rates drawn apart from
 *      the test's flake rate given its history, Q = F_K (decide_model.h): rates vary by
 *      configuration, more when the history is short;
 *        P(D | I) = prod_c M(Q; s_c, m_c).
 *   R  regression: the push broke a set B of configurations holding the opening one; a
 *      broken configuration fails at r' = L + (1 - L) r with one unknown r for all of them
 *      (the regression's reproduction rate, the adaptive model's mixture
 *      w Beta(20, 0.3) + (1 - w) Beta(2, 2)); the others flake as under I. B is every
 *      configuration (weight RT_POOL_ALL_WEIGHT, 0.5), or a subset: each other
 *      configuration broken with probability rho, rho in {1/8, 3/8, 5/8, 7/8} with equal
 *      weights (about uniform: a regression on one platform of seven is not held much less
 *      likely than on four). Given r the configurations are independent, so the sum over B
 *      is a product of (rho r'^s_c (1 - r')^(m_c - s_c) + (1 - rho) M(Q; s_c, m_c)), a
 *      polynomial in r' and 1 - r' whose terms are integrated exactly with M_L.
 *   The prior log odds are the adaptive model's for the test (history and hints), so
 *      log O = prior + log P(D | R) - log P(D | I). Passes count as well as failures: a
 *      configuration that passed multiplies P(D | I) by about 1 - E[q] and P(D | R) by less
 *      (a broken configuration passes rarely), so every pass lowers the posterior.
 *
 * The verdict (decide_confidence, decide_max_retriggers for the whole test):
 *   regression    p >= confidence; intermittent p <= 1 - confidence. Given with no
 *                 retrigger at all when the push's own runs of other configurations
 *                 suffice; with one configuration, only after a retrigger gave evidence.
 *   not-yet       waiting for pending retriggers, or the next round: `more[c]` retriggers
 *                 of configuration c, only of configurations whose own run failed;
 *   at the cap    regression when p >= 0.5, else intermittent, reason "low-confidence".
 *
 * The next round. Retriggers go to configurations whose run failed, fewest retriggers so
 * far first (a passing configuration would pass again under either hypothesis, mostly).
 * The plans tried: t retriggers of each of the first j failing configurations (j <= 4,
 * (t + 1)^j <= 64 outcomes, j t <= first_batch_max and the retriggers left, and
 * j t >= first_batch_min in the first round: one run cannot tell a partial regression from
 * a flake); each costs
 * j t + round_cost P(still undecided after it), that probability over the outcomes the
 * posterior predicts (under each hypothesis the ratio of the likelihoods with and without
 * them, mixed by p), a plan using every retrigger left counting as deciding; the cheapest
 * wins, the smaller on a tie. This is the adaptive model's batch rule with the
 * configurations as a second dimension. */
#ifndef RETRIG_COMMON_DECIDE_POOL_H
#define RETRIG_COMMON_DECIDE_POOL_H

#include <stdbool.h>
#include <stddef.h>

#include "common/core/decide_model.h"
#include "common/core/errors.h"
#include "common/core/verdict.h"

#define RT_POOL_MAX_CONFIGS  16  /* configurations of one test on one push */
#define RT_POOL_ALL_WEIGHT   0.5 /* P(every configuration broken | regression) */
#define RT_POOL_PLAN_CONFIGS 4   /* configurations retriggered in one round, at most */

typedef struct rt_pool_config {
    bool failed;       /* the push's own run failed with the test */
    size_t retriggers; /* retriggers that gave evidence (passed or failed) */
    size_t reproduced; /* of which failed with the test (<= retriggers) */
    size_t pending;    /* requested, not resolved yet */
} rt_pool_config;

typedef struct rt_pool_input {
    rt_decide_history history; /* the test's, before this push */
    unsigned hints;            /* RT_DECIDE_HINT_* */
    const rt_pool_config *configs;
    size_t nconfigs; /* 1..RT_POOL_MAX_CONFIGS, at least one failed */
    size_t spent;    /* retriggers of the test so far, with exceptions and pending */
} rt_pool_input;

typedef struct rt_pool_result {
    rt_verdict verdict; /* regression, intermittent, not-yet, undecided */
    /* "confident", "low-confidence", "need-more", "waiting-for-retriggers",
     * "no-usable-retriggers", "invalid-input" */
    char reason[RT_VERDICT_REASON_SIZE];
    double p_regression;
    long opening;                     /* the configuration that opened the set */
    size_t more[RT_POOL_MAX_CONFIGS]; /* not-yet: retriggers of each configuration now */
    size_t more_total;
} rt_pool_result;

/* The configuration of a task (what the pooled model pools over): its platform and the
 * build type of its label, the word after the label's first '/' up to the next '-'
 * ("linux1804-64" and "test-linux1804-64/debug-mochitest-1" -> "linux1804-64/debug"); the
 * platform alone when the label has no build type. RT_EINVAL when platform is empty or the
 * name does not fit size (out then holds ""). */
RT_MUSTCHECK int rt_pool_config_name(const char *platform, const char *label, char *out,
                                     size_t size);

/* The label family of a task: its label after the build type with a trailing chunk number
 * dropped ("test-linux1804-64/debug-mochitest-browser-chrome-3" -> "mochitest-browser-chrome").
 * The push's tasks of a family are the ones that may run a failing test's group on the
 * other configurations (rt_pool_settle_done). RT_EINVAL when the label has no build type
 * or nothing after it, or the family does not fit size (out then holds ""). */
RT_MUSTCHECK int rt_pool_label_family(const char *label, char *out, size_t size);

/* One task of the push in a member's label family, as the settle window looks at it. */
typedef struct rt_pool_push_task {
    const char *config; /* rt_pool_config_name of its platform and label */
    bool finished;      /* its run is in the test history, or it ended in an exception */
    bool failed;        /* its recorded run failed the test */
} rt_pool_push_task;

/* Whether the settle window may end before its time: the push's other tasks of the test's
 * group have finished. True when there is at least one task and each runs on a
 * configuration whose result is known already (known[]: the member sets' configurations and
 * those where the group's runs on the push passed the test, in the test history), or has
 * finished without failing the test (a run that did not hold the group, or passed it), so
 * that waiting longer brings no configuration's push run. A task that failed the test waits
 * for its member set to join (the failing configurations are the ones a round can
 * retrigger; one that never joins, not eligible, leaves the wait to the window's time).
 * False with no task: nothing says what the push runs, only the window's time ends the
 * wait. */
bool rt_pool_settle_done(const rt_pool_push_task *tasks, size_t ntasks, const char *const *known,
                         size_t nknown);

/* log O and p_regression of the pooled evidence (input as for rt_pool_evaluate). */
double rt_pool_log_odds(const rt_decide_settings *s, const rt_pool_input *in);
double rt_pool_posterior(const rt_decide_settings *s, const rt_pool_input *in);

/* The verdict, or the next round. RT_EINVAL (undecided "invalid-input") on bad settings or
 * input: no configuration or too many, none failed, reproduced > retriggers, or
 * retriggers and pending beyond spent. */
RT_MUSTCHECK int rt_pool_evaluate(const rt_decide_settings *s, const rt_pool_input *in,
                                  rt_pool_result *out);

#endif
