/* SPDX-License-Identifier: MPL-2.0 */
/* ledger.h - the Postgres budget ledger (budget_ledger): what a budget spent on a UTC day,
 * and the budget backstop that every transaction writing a ledger row runs first.
 *
 * Redis spends the budgets (common/io/budget.h); a counter Redis re-creates (new day, restart,
 * flush) starts from the ledger total, which misses a claim whose transaction had not
 * committed yet, so Redis alone can then grant more than the limit. The backstop holds the
 * limit in Postgres: a transaction that is about to write a ledger row for (platform, day)
 * takes that pair's transaction advisory lock (class RT_LEDGER_LOCK_CLASS, key
 * hashtext(platform || '/' || day), held until the transaction ends, so such transactions
 * of one pair commit one at a time) and reads the ledger total in a statement of its own
 * after the lock (under READ COMMITTED its snapshot holds every row committed before the
 * lock was granted). Both are the SQL function budget_backstop (migration 0012): one round
 * trip. Used by retrig-classify (platform: the task's platform) and retrig-perf
 * ("perf:<family>"). Thread-safety: per rt_pg handle. Layer: common/store (moved from
 * common/io, issue 33). */
#ifndef RETRIG_COMMON_STORE_LEDGER_H
#define RETRIG_COMMON_STORE_LEDGER_H

#include "common/not_core.h"

#include <stdbool.h>
#include <stddef.h>

#include "common/core/errors.h"
#include "common/io/pg.h"

/* First key of the backstop's pg_advisory_xact_lock. The lock is taken by the SQL function
 * budget_backstop (migration 0012), which spells the number out: change both or neither. */
#define RT_LEDGER_LOCK_CLASS 7274

/* What the ledger records for (platform, day "YYYY-MM-DD"). */
RT_MUSTCHECK int rt_ledger_spent(rt_pg *pg, const char *platform, const char *day, int *spent);

/* The backstop, inside the caller's open transaction and before it writes its ledger row:
 * takes the (platform, day) lock, then *total = the ledger total before this claim, and
 * *kept = claimed when total + claimed <= limit, else limit - total when that is at least
 * minimum, else 0 (the caller writes nothing, rolls back and gives the Redis claim back with
 * rt_budget_settle). The lock stays held until the caller commits or rolls back. */
RT_MUSTCHECK int rt_ledger_backstop(rt_pg *pg, const char *platform, const char *day, int limit,
                                    int claimed, int minimum, int *kept, int *total);

/* Gives back what the ledger row under `key` spent: a negative row under refund_key for the
 * same (platform, day) and amount, once (a second call finds refund_key and writes nothing).
 * out->spent false when there is no row under key (nothing was spent); out->inserted true
 * when this call wrote the refund, so the caller gives the Redis counter back only then. */
typedef struct rt_ledger_refund {
    bool spent, inserted;
    char platform[600], day[16];
    int amount;
} rt_ledger_refund;
RT_MUSTCHECK int rt_ledger_refund_row(rt_pg *pg, const char *key, const char *refund_key,
                                      long long set_id, const char *reason, rt_ledger_refund *out);

/* What the ledger records per budget (platform, or "perf:<family>") and UTC day over the
 * `days` days up to until's UTC day (until: an ISO-8601 time), by budget then day. */
typedef struct rt_ledger_day {
    char *platform;
    char *day; /* "YYYY-MM-DD" */
    long long spent, entries;
} rt_ledger_day;
RT_MUSTCHECK int rt_ledger_days(rt_pg *pg, const char *until, int days, rt_ledger_day **rows,
                                size_t *n);
void rt_ledger_day_free(rt_ledger_day *rows, size_t n);

#endif
