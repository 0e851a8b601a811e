/* SPDX-License-Identifier: MPL-2.0 */
/* culprit_adaptive.h - the culprit search's probes (culprit.h) classified with the adaptive
 * verdict's model (decide_model.h) in place of the seed rule: decide_policy = adaptive.
 * Pure: no I/O, no clock, no allocation, no globals. Thread-safe with one context per thread
 * (the context caches the plan of the last model it saw).
 *
 * A probed push is good (the test flakes at its own rate f) or bad (it carries the
 * regression, which reproduces the line at rate r). Both rates are uncertain, and both are
 * the decide model's Beta mixtures updated with what is known:
 *   good  f ~ (1 - e) A + e F    (flake_any, flake_failing, flaky_share), updated with the
 *         test's history before the failure (F failures in H runs), each component
 *         reweighted by how well it explains that history: a long clean history leaves f
 *         near 0, a flaky one near its own rate; with no history, the prior's mix (mean
 *         0.7%, with the tail of F). The mixture is then matched by its mean and variance
 *         to one Beta G, the rate the probe's runs are weighed against.
 *   bad   r ~ w Beta(20, 0.3) + (1 - w) Beta(2, 2)   (full_weight, full, partial), updated
 *         with the failing push's runs: the failing run is left out (it was picked because
 *         it failed), and so is one reproduction, since the push was only searched because
 *         at least decide_threshold of its retriggers reproduced (which leans the rate
 *         high): k0 = max(reproduced - 2, 0) of n0 = max(runs - 2, 0). When the failing
 *         push's runs are unknown (the model's failing_runs 0), the rate r is taken as
 *         worth 5 runs: k0 = 5 r of n0 = 5. A bad push's runs reproduce at
 *         r' = L + (1 - L) r: the test still flakes. L is G's mean, raised as the verdict
 *         raises it (rt_decide_floor) so that more reproductions never make a push less bad.
 * A push with x reproductions in m runs is bad with probability
 *   p = P(x, m | bad) / (P(x, m | bad) + P(x, m | good))     (even prior odds: the probe is
 *                                                             the middle of the range)
 * each P the probability of the sequence, E[r'^x (1 - r')^(m - x)] under the bad mixture
 * (rt_decide_beta_log_m_shifted) and E[f^x (1 - f)^(m - x)] under G (rt_decide_beta_log_m),
 * computed in logs.
 *
 * The probe's times n: the fewest runs after which the likelihood ratio's call (bad when
 * p >= 0.5) is wrong with probability at most 1 - c under either hypothesis: a good push
 * called bad, over the outcomes G predicts (beta-binomial), or a bad push called good when
 * its runs reproduce at L + (1 - L) times the lower of the bad mixture's mean and the seed
 * rule's r (max(reproduced - 1, 0.5) / runs, culprit.h): the mean alone leans high after
 * the selection above, and named the wrong push in 5.0% of 100,000 simulated searches
 * against 4.1%. At most the seed rule's n for the same model: planning over the whole
 * uncertainty of r asked up to 100 runs of a probe for partial regressions, and 17% of the
 * simulated searches ran out of their budget.
 * The classification, with the push's confidence c (rt_culprit_push_confidence):
 *   p >= c          bad
 *   p <= 1 - c      good
 *   m >= n          bad when p >= 0.5, else good: a probe whose runs all finished is decided
 *                   in its round, so the search keeps its bound of ceil(log2 K) rounds
 *   otherwise       open, n - m more runs.
 * A push with no runs is open with n. More reproductions in the same runs never lower p
 * (the floor L above; the unit tests check it on a grid of histories and regressions).
 *
 * Compared with the seed rule on 100,000 simulated searches (`retrig culprit --simulate
 * 100000 --seed 1 --policy adaptive`, then `--policy seed`): the culprit right in 95.9%
 * against 96.1%, 26.2 jobs a search against 27.1, both within ceil(log2(C+1)) rounds in
 * every search and at 0.34 of a linear backfill. Better for solid regressions (99.3-99.5%
 * against 98.8-99.5%) and for flaky ones of clean tests with fewer jobs (96.0% with 28.4
 * jobs against 96.2% with 32.0); a little worse for flaky regressions of flaky tests
 * (91.4% against 92.0%) and of tests without history (93.7% against 93.9%). */
#ifndef RETRIG_COMMON_CULPRIT_ADAPTIVE_H
#define RETRIG_COMMON_CULPRIT_ADAPTIVE_H

#include <stdbool.h>

#include "common/core/culprit.h"
#include "common/core/decide_model.h"
#include "common/core/errors.h"

typedef struct rt_culprit_adaptive {
    rt_decide_settings settings;
    /* The cache: the model the times were planned for. */
    bool planned;
    rt_culprit_model planned_for;
    int times;
} rt_culprit_adaptive;

/* RT_EINVAL when the settings are out of range (rt_decide_settings_check). */
RT_MUSTCHECK int rt_culprit_adaptive_init(rt_culprit_adaptive *a, const rt_decide_settings *s);

/* An rt_culprit_classify_fn; ctx is an rt_culprit_adaptive (an invalid model or a NULL ctx:
 * open, n = 1, which rt_culprit_next never sees since it checks the model first). */
rt_culprit_call rt_culprit_adaptive_classify(const rt_culprit_evidence *evidence,
                                             const rt_culprit_model *model, void *ctx);

/* p: the probability that a push with `reproduced` of `runs` carries the regression. */
double rt_culprit_adaptive_p_bad(const rt_decide_settings *s, const rt_culprit_model *model,
                                 int runs, int reproduced);

/* n: the probe's times for the model (cached in a). 0 when the model is invalid. */
int rt_culprit_adaptive_times(rt_culprit_adaptive *a, const rt_culprit_model *model);

#endif
