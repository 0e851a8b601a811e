/* SPDX-License-Identifier: MPL-2.0 */
/* set_rounds.h - the store of a retrigger set's later rounds as retrig-decide asks for them
 * (retrigger_rounds, and the verdict policy's columns of decisions): the set's rounds and
 * what a later round's request repeats of round 1's, a round asked for in one call of the SQL
 * function decide_request_round (the round's row, the budget backstop, its ledger row, the
 * set's count), the round's row lock that guards publishing its request, and the policy's
 * record on the decision. The statements were workers/decide/rounds.c's until issue 33; they
 * live in set_rounds.c and no PGresult leaves it. Errors: RT_EDB (rt_pg_errstr), RT_ECONN,
 * RT_ENOMEM. Thread-safety: per rt_pg handle. Layer: common/store. */
#ifndef RETRIG_COMMON_STORE_SET_ROUNDS_H
#define RETRIG_COMMON_STORE_SET_ROUNDS_H

#include "common/not_core.h"

#include <stdbool.h>

#include "common/core/errors.h"
#include "common/io/pg.h"

/* A set's rounds, and what a later round's request repeats of the set. */
typedef struct rt_set_rounds {
    int round;            /* the latest round */
    int retrigger_count;  /* round 1's retriggers */
    int later_retriggers; /* every later round's */
    int found_count;      /* runs of the label found on the push */
    char status[16];
    bool latest_published; /* the latest round's request went out (true for round 1) */
    bool refused;          /* a round the budget refused */
    bool round_failed;     /* a round whose action failed for good */
    char platform[600];
    char label[1024];
    char original_task_id[23];
    int original_run_id;
    char task_group_id[23];
    char task_queue_id[300];
    char *failing_groups, *failures; /* JSON texts, malloc'd */
} rt_set_rounds;
/* RT_ENOTFOUND when there is no such set. */
RT_MUSTCHECK int rt_set_rounds_read(rt_pg *pg, long long set_id, rt_set_rounds *out);
void rt_set_rounds_free(rt_set_rounds *s);

/* A later round asked for (decide_request_round): wanted retriggers, spent of them granted by
 * Redis (0: refused), at least minimum, the platform's (platform, day) ledger under limit,
 * the ledger row's idempotency key, and the p_regression that asked. */
typedef struct rt_set_round_ask {
    long long set_id;
    int round, wanted, spent, minimum;
    const char *platform, *day;
    int limit;
    const char *ledger_key;
    double p_regression;
} rt_set_round_ask;
typedef struct rt_set_round_asked {
    bool created; /* the round's row was written by this call */
    int kept;     /* what the backstop kept of spent */
    int total;    /* the ledger's total before this claim */
    bool refused; /* the round is recorded as refused */
    bool stale;   /* the set moved on: nothing was written */
} rt_set_round_asked;
RT_MUSTCHECK int rt_set_rounds_ask(rt_pg *pg, const rt_set_round_ask *ask, rt_set_round_asked *out);

/* Opens a transaction and locks the round's row: *publish when its request has not gone out,
 * with *times its retriggers. The caller publishes, marks it (rt_set_rounds_published) and
 * commits, or rolls back. */
RT_MUSTCHECK int rt_set_rounds_lock(rt_pg *pg, long long set_id, int round, bool *publish,
                                    int *times);
RT_MUSTCHECK int rt_set_rounds_published(rt_pg *pg, long long set_id, int round);

/* The verdict policy's record on the set's decision (texts; NULL is SQL NULL). */
typedef struct rt_set_rounds_policy {
    const char *set_id, *policy, *p_regression, *prior_runs, *prior_failures;
    const char *prior_signature_failures, *rounds, *retriggers;
    const char *shadow_policy, *shadow_verdict, *shadow_reason;
} rt_set_rounds_policy;
RT_MUSTCHECK int rt_set_rounds_store_policy(rt_pg *pg, const rt_set_rounds_policy *p);

#endif
