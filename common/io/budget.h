/* SPDX-License-Identifier: MPL-2.0 */
/* budget.h - per-platform daily retrigger budgets and the retrigger-set dedupe key,
 * claimed together in one atomic Redis script.
 *
 * A claim for a (project, revision, label) set either finds the set's dedupe key (someone
 * already claimed it: the value names the task that did and how much it spent), or spends
 * min(wanted, left) from the platform's counter for the UTC day and sets the dedupe key,
 * or, when fewer than `minimum` are left, spends nothing (exhausted); a claim of 0 with
 * minimum 0 sets the dedupe key and spends nothing (a set that asks for no retrigger). A
 * counter that does
 * not exist (new day, or Redis flushed or restarted) starts from the spend the Postgres
 * ledger records at that moment.
 *
 * Redis is the fast path; Postgres is the budget backstop, as its unique constraint is for
 * the dedupe. A claim Redis lost before its ledger row committed (Redis restarted in
 * between) is missing from a counter re-created meanwhile, so Redis alone can grant more
 * than the limit. The transaction writing a ledger row therefore serialises per (platform,
 * day) and checks that the ledger total plus its claim stays within the limit
 * (rt_ledger_backstop, common/store/ledger.h; retrig-classify and retrig-perf); it keeps what fits
 * (at least `minimum`) or nothing, and rt_budget_settle (rt_budget_settle_keyed for a keyed
 * claim) gives the rest of the Redis claim back.
 * Limits come from glob patterns ("android*=100, *=600"), first match wins.
 * Keys are built whole ("<prefix>budget:<platform>:<day>", "<prefix>set:<project>:<revision>:
 * <label>"), never cut; one longer than RT_BUDGET_MAX_KEY bytes is refused (RT_EINVAL).
 * Thread-safety: per rt_redis handle. */
#ifndef RETRIG_COMMON_BUDGET_H
#define RETRIG_COMMON_BUDGET_H

#include "common/not_core.h"

#include <stdbool.h>

#include "common/core/claim_flow.h"
#include "common/core/errors.h"
#include "common/core/limits.h"
#include "common/io/redis.h"

#define RT_BUDGET_MAX_KEY                                                                          \
    4096 /* bytes of a Redis key retrig writes; platforms and labels are <= 512 */

/* rt_claim and rt_claim_status: common/core/claim_flow.h, whose step machine reads them. */

typedef struct rt_claim_request {
    const char *key_prefix; /* "retrig:" */
    const char *project, *revision, *label, *platform;
    const char *task_id; /* the claimant */
    const char *day;     /* UTC "YYYY-MM-DD" */
    int wanted, minimum, limit;
    int ledger_spent; /* what Postgres records for (platform, day) */
} rt_claim_request;

RT_MUSTCHECK int rt_budget_claim(rt_redis *redis, const rt_claim_request *req, rt_claim *out);
/* The same claim for something other than a retrigger set: the dedupe key is
 * <key_prefix><dedupe_key> ("perf-alert:69344"); project, revision and label are unused. */
RT_MUSTCHECK int rt_budget_claim_keyed(rt_redis *redis, const rt_claim_request *req,
                                       const char *dedupe_key, rt_claim *out);
/* After the Postgres backstop kept only `kept` (0: nothing) of a set claim (req as claimed)
 * that spent `claimed`: while the set's dedupe key still records this claim, it now records
 * `kept` (or is deleted when kept is 0, so the set can be claimed later), claimed - kept goes
 * back to the counter, and an existing counter below `ledger_total` (the ledger's total
 * for the day, this claim's row included) is raised to it, so that Redis stops granting what
 * Postgres refuses. Atomic, and a no-op when repeated or when the key names another claim.
 * *refunded (may be NULL): what went back to the counter. */
RT_MUSTCHECK int rt_budget_settle(rt_redis *redis, const rt_claim_request *req, int claimed,
                                  int kept, int ledger_total, int *refunded);
/* The same for a claim made with rt_budget_claim_keyed (the same dedupe_key). */
RT_MUSTCHECK int rt_budget_settle_keyed(rt_redis *redis, const rt_claim_request *req,
                                        const char *dedupe_key, int claimed, int kept,
                                        int ledger_total, int *refunded);
/* Gives `amount` back to the platform's counter for the day (never below zero). */
RT_MUSTCHECK int rt_budget_refund(rt_redis *redis, const char *key_prefix, const char *platform,
                                  const char *day, int amount);
/* The counter's current value (0 when absent); for metrics and tests. */
RT_MUSTCHECK int rt_budget_spent(rt_redis *redis, const char *key_prefix, const char *platform,
                                 const char *day, int *spent);

#endif
