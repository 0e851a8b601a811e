/* SPDX-License-Identifier: MPL-2.0 */
/* policy.c - the core's policies from the configuration. */
#include "common/policy.h"

#include <stdlib.h>
#include <string.h>

void rt_elig_policy_from_config(const rt_config *cfg, rt_elig_policy *policy)
{
    memset(policy, 0, sizeof *policy);
    for (size_t i = 0; i < cfg->tiers.count && i < RT_ELIG_MAX_TIERS; i++)
        policy->tiers[policy->ntiers++] = atoi(cfg->tiers.items[i]);
    for (size_t i = 0; i < cfg->pool_prefixes.count && i < RT_ELIG_MAX_POOLS; i++)
        policy->pool_prefixes[policy->npool_prefixes++] = cfg->pool_prefixes.items[i];
    for (size_t i = 0; i < cfg->projects.count && i < RT_ELIG_MAX_PROJECTS; i++)
        policy->projects[policy->nprojects++] = cfg->projects.items[i];
    policy->target_retriggers = cfg->retriggers_per_failure;
}

void rt_decide_settings_from_config(const rt_config *cfg, rt_decide_settings *s)
{
    rt_decide_settings_default(s);
    s->confidence = cfg->decide_confidence;
    s->prior_regression = cfg->decide_prior_regression;
    s->max_retriggers = cfg->decide_max_retriggers;
    s->first_batch_max = cfg->retriggers_per_failure;
    s->first_batch_min = cfg->budget_minimum < cfg->retriggers_per_failure
                             ? cfg->budget_minimum
                             : cfg->retriggers_per_failure;
}

rt_policy rt_decide_policy_from_config(const rt_config *cfg)
{
    rt_policy policy = RT_POLICY_SEED;
    /* rt_config_load accepts seed, adaptive and pooled only; pooled is seed per task. */
    if (rt_policy_parse(cfg->decide_policy, &policy) != RT_OK) policy = RT_POLICY_SEED;
    return policy;
}

bool rt_decide_policy_pooled(const rt_config *cfg)
{
    return cfg->decide_policy && !strcmp(cfg->decide_policy, "pooled");
}

rt_culprit_classify_fn rt_culprit_classifier(rt_policy policy, const rt_config *cfg,
                                             rt_culprit_adaptive *adaptive)
{
    if (policy != RT_POLICY_ADAPTIVE) return rt_culprit_seed_classify;
    rt_decide_settings s;
    rt_decide_settings_from_config(cfg, &s);
    if (rt_culprit_adaptive_init(adaptive, &s) != RT_OK) return NULL;
    return rt_culprit_adaptive_classify;
}

void rt_hook_policy_from_config(const rt_config *cfg, rt_hook_policy *policy)
{
    policy->hook_group_id = cfg->taskcluster_hook_group;
    policy->project_levels = &cfg->project_levels;
}

bool rt_taskcluster_credentials(const rt_config *cfg, int level, rt_hawk_credentials *out)
{
    memset(out, 0, sizeof *out);
    if (level < 1 || level > RT_CONFIG_LEVELS) return false;
    if (cfg->taskcluster_client_id_level[level - 1] &&
        cfg->taskcluster_access_token_level[level - 1]) {
        *out = (rt_hawk_credentials){cfg->taskcluster_client_id_level[level - 1],
                                     cfg->taskcluster_access_token_level[level - 1], NULL};
        return true;
    }
    if (cfg->taskcluster_client_id && cfg->taskcluster_access_token) {
        *out = (rt_hawk_credentials){cfg->taskcluster_client_id, cfg->taskcluster_access_token,
                                     cfg->taskcluster_certificate};
        return true;
    }
    return false;
}

bool rt_taskcluster_has_credentials(const rt_config *cfg)
{
    rt_hawk_credentials creds;
    for (int level = 1; level <= RT_CONFIG_LEVELS; level++)
        if (rt_taskcluster_credentials(cfg, level, &creds)) return true;
    return false;
}

int rt_perf_options_from_config(rt_perf_options *options, const rt_config *cfg, char *errstr)
{
    rt_perf_settings settings = {
        .platform_families = &cfg->perf_platform_families,
        .budget_limits = &cfg->perf_budget_limits,
        .repositories = &cfg->perf_repositories,
        .frameworks = &cfg->perf_frameworks,
        .backfill_depth = cfg->perf_backfill_depth,
        .backfill_times = cfg->perf_backfill_times,
        .max_per_summary = cfg->perf_max_per_summary,
        .min_amount_pct = cfg->perf_min_amount_pct,
        .min_age_minutes = cfg->perf_min_age_minutes,
        .include_improvements = cfg->perf_include_improvements,
    };
    return rt_perf_options_build(options, &settings, errstr);
}
