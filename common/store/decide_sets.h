/* SPDX-License-Identifier: MPL-2.0 */
/* decide_sets.h - the store of retrigger sets as retrig-decide reads and decides them: a set
 * with what its verdict needs, the members that give evidence, the decision written with the
 * set's status and each member's result, the cancelled retriggers recorded on it, the
 * deadline sweep of sets still open, and two figures for the metrics. The statements were
 * retrig-decide's own until issue 33; they live in decide_sets.c and no PGresult leaves it.
 * (common/store/decisions.h is the sheriffs' read-only side of the same tables.)
 * Errors: RT_EDB (rt_pg_errstr), RT_ECONN, RT_ENOMEM. Thread-safety: per rt_pg handle.
 * Layer: common/store. */
#ifndef RETRIG_COMMON_STORE_DECIDE_SETS_H
#define RETRIG_COMMON_STORE_DECIDE_SETS_H

#include "common/not_core.h"

#include <stdbool.h>
#include <stddef.h>

#include "common/core/errors.h"
#include "common/io/pg.h"

/* A set as its verdict needs it. Times are UTC texts with milliseconds
 * ("YYYY-MM-DDTHH:MM:SS.mmmZ"). */
typedef struct rt_decide_set {
    char project[65], revision[41];
    char label[1024];
    char platform[600];
    char original_task_id[23];
    int original_run_id;
    int count; /* retriggers asked for, every round */
    char status[16];
    char task_group_id[23]; /* "" when unknown */
    bool decided;           /* a decision row exists */
    bool past_deadline;     /* created more than deadline_minutes ago */
    char failure_seen_at[40];
    char requested_at[40]; /* "" when unknown */
    long original_seconds; /* the original run's duration, 0 when unknown */
} rt_decide_set;
/* *found false when there is no such set. */
RT_MUSTCHECK int rt_decide_sets_load(rt_pg *pg, long long set_id, int deadline_minutes,
                                     rt_decide_set *set, bool *found);

/* A member that gives evidence: a retrigger asked for, or a run found on the push. */
typedef struct rt_decide_member {
    char task_id[23];
    int run_id;
    char state[16];
    bool found; /* role found (on the push before the set) */
} rt_decide_member;
/* The set's evidence members other than the original run, oldest first, at most max. */
RT_MUSTCHECK int rt_decide_sets_members(rt_pg *pg, long long set_id, const char *original_task_id,
                                        int original_run_id, rt_decide_member *members, size_t max,
                                        size_t *n);

/* A decision as it is written. */
typedef struct rt_decide_row {
    long long set_id;
    const char *verdict, *reason;
    const char *evidence;        /* JSON text */
    int classification_id;       /* -1: unknown (NULL) */
    const char *failure_seen_at; /* timestamptz texts; requested_at NULL or "" when unknown */
    const char *requested_at;
    const char *decided_at;
    const char *culprit_status; /* "searching" when a culprit search starts, else NULL */
} rt_decide_row;
/* Inside the caller's transaction: the decision, unless the set has one (*inserted false),
 * and then the set marked decided. */
RT_MUSTCHECK int rt_decide_sets_insert(rt_pg *pg, const rt_decide_row *row, bool *inserted);
/* A member's result (reproduced, did-not-reproduce, ...), inside the same transaction. */
RT_MUSTCHECK int rt_decide_sets_member_result(rt_pg *pg, long long set_id, const char *task_id,
                                              int run_id, const char *result);
/* The retriggers cancelled after the decision, as the evidence's "cancelled" (JSON text). */
RT_MUSTCHECK int rt_decide_sets_cancelled(rt_pg *pg, long long set_id, const char *cancelled);

/* Seconds from a timestamptz text until now (Postgres's clock). */
RT_MUSTCHECK int rt_decide_sets_seconds_since(rt_pg *pg, const char *since, double *seconds);
/* Sets still waiting for their verdict (pending, requested, complete). */
RT_MUSTCHECK int rt_decide_sets_in_flight(rt_pg *pg, long long *sets);

/* A set the deadline sweep asks a decision for. */
typedef struct rt_decide_swept {
    long long id;
    char project[65];
} rt_decide_swept;
/* Inside the caller's transaction: up to max sets still open past deadline_minutes whose
 * last deadline request is older than interval_s, oldest first, locked (rows another
 * transaction holds are skipped, so replicas sweep apart). */
RT_MUSTCHECK int rt_decide_sets_sweep(rt_pg *pg, int deadline_minutes, int interval_s,
                                      rt_decide_swept *sets, size_t max, size_t *n);
/* The set's deadline request is sent: the next sweep waits interval_s for it. */
RT_MUSTCHECK int rt_decide_sets_swept(rt_pg *pg, long long set_id);

#endif
