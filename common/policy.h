/* SPDX-License-Identifier: MPL-2.0 */
/* policy.h - the core's policies from the configuration: the one place that reads rt_config
 * on behalf of common/core (which never sees it), so that a setting's meaning for a decision
 * is written once. Pure apart from borrowing the configuration's strings; thread-safety as
 * the configuration (read-only once loaded). */
#ifndef RETRIG_COMMON_POLICY_H
#define RETRIG_COMMON_POLICY_H

#include "common/not_core.h"

#include "common/config.h"
#include "common/core/eligibility.h"
#include "common/core/perf_pick.h"

/* The eligibility policy (tiers, pool_prefixes, retriggers_per_failure). The prefixes point
 * into cfg, which must outlive the policy. */
void rt_elig_policy_from_config(const rt_config *cfg, rt_elig_policy *policy);

/* The perf picking options from the perf_* keys (see rt_perf_options_build); the lists
 * point into cfg. RT_ECONFIG with errstr naming the key. */
RT_MUSTCHECK int rt_perf_options_from_config(rt_perf_options *options, const rt_config *cfg,
                                             char *errstr);

#endif
