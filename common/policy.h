/* SPDX-License-Identifier: MPL-2.0 */
/* policy.h - the core's policies from the configuration: the one place that reads rt_config
 * on behalf of common/core (which never sees it), so that a setting's meaning for a decision
 * is written once. Pure apart from borrowing the configuration's strings; thread-safety as
 * the configuration (read-only once loaded). */
#ifndef RETRIG_COMMON_POLICY_H
#define RETRIG_COMMON_POLICY_H

#include "common/not_core.h"

#include "common/config.h"
#include "common/core/culprit_adaptive.h"
#include "common/core/decide_model.h"
#include "common/core/decide_policy.h"
#include "common/core/eligibility.h"
#include "common/core/hawk.h"
#include "common/core/perf_pick.h"
#include "common/core/trust.h"

/* The eligibility policy (tiers, pool_prefixes, projects, retriggers_per_failure). The
 * prefixes and projects point into cfg, which must outlive the policy. */
void rt_elig_policy_from_config(const rt_config *cfg, rt_elig_policy *policy);

/* The verdict model's settings (common/core/decide_model.h): its documented defaults with
 * decide_confidence, decide_prior_regression, decide_max_retriggers, and the first batch
 * between budget_minimum and retriggers_per_failure; the verdict policy in force
 * (decide_policy). */
void rt_decide_settings_from_config(const rt_config *cfg, rt_decide_settings *s);
rt_policy rt_decide_policy_from_config(const rt_config *cfg);
/* decide_policy = pooled (issue 32): one verdict per failing test per push, over every
 * configuration's runs (common/core/decide_pool.h). Each task's own set then keeps the seed
 * rule as its per-task policy (rt_decide_policy_from_config gives seed), whose verdict and
 * adaptive's are stored as shadows. */
bool rt_decide_policy_pooled(const rt_config *cfg);
/* How the culprit search classifies a probed push under a verdict policy: adaptive, the
 * adaptive verdict's model with the decide_* settings (ctx: *adaptive, which the caller
 * keeps while it searches); otherwise the seed rule (ctx unused). NULL when the decide_*
 * settings are out of range (rt_config_load refuses them before). */
rt_culprit_classify_fn rt_culprit_classifier(rt_policy policy, const rt_config *cfg,
                                             rt_culprit_adaptive *adaptive);

/* The hook-call policy (taskcluster_hook_group, project_levels); points into cfg. */
void rt_hook_policy_from_config(const rt_config *cfg, rt_hook_policy *policy);

/* The Taskcluster credentials that sign hook calls for tasks of trust level `level`:
 * taskcluster_client_id_level<N> with its token, else taskcluster_client_id with its token
 * (and certificate). False when the level has neither: its hooks are never triggered. The
 * strings point into cfg. */
bool rt_taskcluster_credentials(const rt_config *cfg, int level, rt_hawk_credentials *out);
/* True when some level has credentials (what a worker that triggers hooks needs unless
 * dry_run is set). */
bool rt_taskcluster_has_credentials(const rt_config *cfg);

/* The perf picking options from the perf_* keys (see rt_perf_options_build); the lists
 * point into cfg. RT_ECONFIG with errstr naming the key. */
RT_MUSTCHECK int rt_perf_options_from_config(rt_perf_options *options, const rt_config *cfg,
                                             char *errstr);

#endif
