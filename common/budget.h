/* SPDX-License-Identifier: MPL-2.0 */
/* budget.h - per-platform daily retrigger budgets and the retrigger-set dedupe key,
 * claimed together in one atomic Redis script.
 *
 * A claim for a (project, revision, label) set either finds the set's dedupe key (someone
 * already claimed it: the value names the task that did and how much it spent), or spends
 * min(wanted, left) from the platform's counter for the UTC day and sets the dedupe key,
 * or, when fewer than `minimum` are left, spends nothing (exhausted). A counter that does
 * not exist (new day, or Redis flushed) starts from the spend the Postgres ledger already
 * records, so a flushed Redis never lets a day overspend. Limits come from glob patterns
 * ("android*=100, *=600"), first match wins. Thread-safety: per rt_redis handle. */
#ifndef RETRIG_COMMON_BUDGET_H
#define RETRIG_COMMON_BUDGET_H

#include <stdbool.h>

#include "common/config.h"
#include "common/errors.h"
#include "common/redis.h"

typedef enum { RT_CLAIM_CLAIMED, RT_CLAIM_EXISTS, RT_CLAIM_EXHAUSTED } rt_claim_status;

typedef struct rt_claim {
    rt_claim_status status;
    int spent;              /* CLAIMED: spent now; EXISTS: what the claimant spent */
    int left;               /* EXHAUSTED: what was left */
    char owner_task_id[64]; /* EXISTS: the task that claimed the set */
} rt_claim;

typedef struct rt_claim_request {
    const char *key_prefix; /* "retrig:" */
    const char *project, *revision, *label, *platform;
    const char *task_id; /* the claimant */
    const char *day;     /* UTC "YYYY-MM-DD" */
    int wanted, minimum, limit;
    int ledger_spent; /* what Postgres records for (platform, day) */
} rt_claim_request;

/* The daily limit of a platform from "pattern=limit" items (fnmatch globs, first match);
 * fallback when none matches. Returns RT_EINVAL for a malformed item (config checks this). */
RT_MUSTCHECK int rt_budget_limit_for(const rt_config_list *limits, const char *platform,
                                     int fallback, int *limit);
/* Checks "pattern=limit" items; errstr names the bad item. */
RT_MUSTCHECK int rt_budget_check_limits(const rt_config_list *limits, char *errstr);

RT_MUSTCHECK int rt_budget_claim(rt_redis *redis, const rt_claim_request *req, rt_claim *out);
/* The same claim for something other than a retrigger set: the dedupe key is
 * <key_prefix><dedupe_key> ("perf-alert:69344"); project, revision and label are unused. */
RT_MUSTCHECK int rt_budget_claim_keyed(rt_redis *redis, const rt_claim_request *req,
                                       const char *dedupe_key, rt_claim *out);
/* Gives `amount` back to the platform's counter for the day (never below zero). */
RT_MUSTCHECK int rt_budget_refund(rt_redis *redis, const char *key_prefix, const char *platform,
                                  const char *day, int amount);
/* The counter's current value (0 when absent); for metrics and tests. */
RT_MUSTCHECK int rt_budget_spent(rt_redis *redis, const char *key_prefix, const char *platform,
                                 const char *day, int *spent);

#endif
