/* SPDX-License-Identifier: MPL-2.0 */
/* sets.h - the store of retrigger sets and their members (retrigger_sets,
 * retrigger_set_members) with the budget ledger row each set's creation writes: the SQL that
 * retrig-classify ran itself until issue 33, behind typed calls. The statements live in
 * sets.c; no PGresult leaves it.
 *
 * The set's creation is one call of the SQL function classify_create_set (migration 0012):
 * the set, the budget backstop under the (platform, day) advisory lock (common/store/ledger.h),
 * the ledger row and the run's verdict commit together, or nothing is written. Publishing a
 * set's request is guarded by the set's row lock (rt_sets_lock, then
 * rt_sets_mark_published_commit), so replicas racing publish it once.
 * Thread-safety: per rt_pg handle. Layer: common/store sits on common/io (pg.h); the core
 * never includes it, the workers and the CLI do. */
#ifndef RETRIG_COMMON_STORE_SETS_H
#define RETRIG_COMMON_STORE_SETS_H

#include "common/not_core.h"

#include <stdbool.h>

#include "common/core/errors.h"
#include "common/io/pg.h"

/* A set as a look-up finds it; id 0: no set. */
typedef struct rt_set_ref {
    long long id;
    char original_task_id[23];
    bool published; /* its request was published */
} rt_set_ref;

/* What a resolved run's facts are completed with and looked up by (rt_sets_run_facts). */
typedef struct rt_sets_run_facts_query {
    const char *task_id;
    int run_id;
    /* Filled in on the run's row where it has none yet (NULL: left as it is). */
    const char *project, *revision, *label, *platform;
    /* The set looked up: the task's (project, revision, label). */
    const char *set_project, *set_revision, *set_label;
    /* The ledger read: what budget_daily records for (ledger_platform, day "YYYY-MM-DD"). */
    const char *ledger_platform, *day;
} rt_sets_run_facts_query;

/* One statement: completes the run's row, looks up its set and reads the ledger's spend. */
RT_MUSTCHECK int rt_sets_run_facts(rt_pg *pg, const rt_sets_run_facts_query *q, rt_set_ref *set,
                                   int *ledger_spent);
/* The set of (project, revision, label); set->id 0 when none. */
RT_MUSTCHECK int rt_sets_find(rt_pg *pg, const char *project, const char *revision,
                              const char *label, rt_set_ref *set);
/* Whether the task group has a set (an index on task_group_id answers). */
RT_MUSTCHECK int rt_sets_group_has_sets(rt_pg *pg, const char *task_group_id, bool *has_sets);

/* A member's row: inserted, or its state and resolved_at updated. */
typedef struct rt_set_member {
    long long set_id;
    const char *task_id;
    int run_id;
    const char *role;        /* "retrigger", "found", ... */
    const char *state;       /* rt_member_state_name */
    const char *resolved_at; /* ISO 8601, NULL when not resolved */
} rt_set_member;
RT_MUSTCHECK int rt_sets_add_member(rt_pg *pg, const rt_set_member *member);

/* What classify_create_set takes. JSON texts: failing_groups, failures and found (the runs
 * already on the push, [{task_id, run_id, state}]). */
typedef struct rt_set_create {
    const char *project, *revision, *label, *platform;
    const char *task_id; /* the original run */
    int run_id;
    int count; /* retriggers the set asks for (the Redis claim) */
    const char *failing_groups, *failures;
    const char *task_group_id, *task_queue_id;
    const char *day; /* the ledger's UTC day */
    int limit, minimum;
    const char *found;
} rt_set_create;

/* What it did: created (the set was inserted, a refusal included; false: the set existed
 * and nothing was written), refused (the backstop kept nothing and no run was found), kept
 * and ledger_total (created: what the backstop kept of count, and the ledger's total
 * before this claim). */
typedef struct rt_set_created {
    bool created, refused;
    int kept, ledger_total;
} rt_set_created;
RT_MUSTCHECK int rt_sets_create(rt_pg *pg, const rt_set_create *in, rt_set_created *out);

/* A set as its request is built from it. failing_groups and failures: malloc'd JSON text. */
typedef struct rt_set_row {
    long long id;
    char original_task_id[23];
    int original_run_id;
    bool published;
    int count; /* retrigger_count */
    char platform[600];
    char task_group_id[23];
    char task_queue_id[300];
    char *failing_groups;
    char *failures;
} rt_set_row;
void rt_set_row_free(rt_set_row *row);

/* Opens a transaction that locks the set row of (project, revision, label) and reads it, in
 * one round trip. *found false: no set. On failure the caller rolls back (when
 * rt_pg_in_transaction says it is open). */
RT_MUSTCHECK int rt_sets_lock(rt_pg *pg, const char *project, const char *revision,
                              const char *label, rt_set_row *row, bool *found);
/* Marks the set's request published and commits the caller's transaction (one round trip);
 * a set that asks for no retrigger becomes requested, nothing being left to wait for. */
RT_MUSTCHECK int rt_sets_mark_published_commit(rt_pg *pg, long long set_id);

/* A set's progress as its row lock reads it (in the caller's transaction). */
typedef struct rt_set_progress {
    int wanted; /* retrigger_count + later_retriggers */
    int found;  /* found_count */
    bool open;  /* pending or requested: neither complete nor decided */
    char project[65];
} rt_set_progress;
/* Locks the set row by id and reads its progress; *found false when no such set. */
RT_MUSTCHECK int rt_sets_lock_progress(rt_pg *pg, long long set_id, rt_set_progress *progress,
                                       bool *found);
/* How many of its retrigger and found members have resolved. */
RT_MUSTCHECK int rt_sets_resolved_members(rt_pg *pg, long long set_id, int *resolved);
RT_MUSTCHECK int rt_sets_mark_complete(rt_pg *pg, long long set_id);

#endif
