/* SPDX-License-Identifier: MPL-2.0 */
/* pools.h - the store of pooled sets (decide_policy = pooled, issue 32; migration 0035): one
 * row per (project, revision, failing test) with its members, one retrigger set per failing
 * configuration, and the other configurations' runs of the test's group on the push from the
 * test history. The statements live in pools.c; no PGresult leaves it.
 *
 * Joining is one statement (INSERT ... ON CONFLICT on the pooled set's unique key, then the
 * member's on its set): the first failing task of a test opens the pooled set and every one
 * joins it exactly once, whatever replicas race. Evaluating is done under the pooled set's
 * row lock (rt_pools_lock opens the transaction), so replicas that look at one pooled set
 * at once plan each round once. Thread-safety: per rt_pg handle. Layer: common/store. */
#ifndef RETRIG_COMMON_STORE_POOLS_H
#define RETRIG_COMMON_STORE_POOLS_H

#include "common/not_core.h"

#include <stdbool.h>
#include <stddef.h>

#include "common/core/errors.h"
#include "common/io/pg.h"

#define RT_POOLS_TEST_SIZE   1024
#define RT_POOLS_CONFIG_SIZE 160

/* What a failing task joins: the pooled set of (project, revision, test), opened with
 * settle_until = now + settle_s and deadline_at = now + deadline_minutes when new. */
typedef struct rt_pools_join_in {
    const char *project, *revision, *test;
    const char *group_name; /* NULL: unknown */
    long long set_id;       /* the task's retrigger set */
    const char *config;     /* rt_pool_config_name */
    int settle_s, deadline_minutes;
} rt_pools_join_in;

/* Opens or finds the pooled set and makes set_id its member once. *pool_id: the pooled set;
 * *opened: this call opened it; *joined: this call added the member. */
RT_MUSTCHECK int rt_pools_join(rt_pg *pg, const rt_pools_join_in *in, long long *pool_id,
                               bool *opened, bool *joined);
/* The first failure naming a test of a retrigger set (its failures, as retrig-classify
 * stored them) with the set's platform and label; test "" when none names one. */
typedef struct rt_pools_set_failure {
    char test[RT_POOLS_TEST_SIZE], group_name[RT_POOLS_TEST_SIZE];
    char project[65], revision[41];
    char platform[RT_POOLS_CONFIG_SIZE], label[512];
} rt_pools_set_failure;
RT_MUSTCHECK int rt_pools_set_failure_of(rt_pg *pg, long long set_id, rt_pools_set_failure *out);
/* The pooled set of a retrigger set; 0 when it has none. */
RT_MUSTCHECK int rt_pools_of_set(rt_pg *pg, long long set_id, long long *pool_id);

/* A task of the push that may run the pooled test's group on some configuration (its
 * label family is a member's; migration 0042). */
typedef struct rt_pools_task {
    char task_id[23];
    char label[512];
    char config[RT_POOLS_CONFIG_SIZE];
    char state[16]; /* its latest run's when listed */
    bool finished;  /* read back: its run is in the test history, or it was listed as ended
                       in an exception */
    bool failed;    /* read back: a recorded run of it failed the pooled set's test */
} rt_pools_task;
#define RT_POOLS_MAX_TASKS 1024 /* of one label family on one push */
/* Records the tasks (each once per pooled set; a task listed again keeps its first row). */
RT_MUSTCHECK int rt_pools_add_tasks(rt_pg *pg, long long pool_id, const rt_pools_task *tasks,
                                    size_t n);
/* Whether task_id is one of the pooled set's tasks. */
RT_MUSTCHECK int rt_pools_has_task(rt_pg *pg, long long pool_id, const char *task_id, bool *has);
/* The pooled set's tasks with whether each has finished: a run of it (run_key
 * "<taskId>/<runId>") in the project's test history of the last `days` days, from the day
 * before the pooled set opened, or listed as ended in an exception (the history records
 * completed and failed runs only); and whether such a run failed the pooled set's test.
 * *n at most max; RT_OK with *n 0 when none was recorded. */
RT_MUSTCHECK int rt_pools_tasks(rt_pg *pg, long long pool_id, int days, rt_pools_task *out,
                                size_t max, size_t *n);

/* A pooled set as evaluation reads it. */
typedef struct rt_pool_row {
    long long id;
    char project[65], revision[41];
    char test[RT_POOLS_TEST_SIZE];
    char group_name[RT_POOLS_TEST_SIZE]; /* "" unknown */
    char state[16];                      /* settling, open, decided */
    bool settled;                        /* now >= settle_until */
    bool past_deadline;                  /* now >= deadline_at */
    int rounds, retriggers;
    char verdict[16], reason[64]; /* decided */
    double p_regression;          /* decided; -1 when none */
} rt_pool_row;

/* BEGIN, then the pooled set under its row lock (*found false: none; the transaction stays
 * open either way, for the caller to commit or roll back). */
RT_MUSTCHECK int rt_pools_lock(rt_pg *pg, long long pool_id, rt_pool_row *row, bool *found);

/* A member: its set, its configuration and what its latest look found. */
typedef struct rt_pool_member {
    long long set_id;
    char config[RT_POOLS_CONFIG_SIZE];
    int retriggers, reproduced, unusable; /* the set's runs, as its latest look found them */
    int requested;                        /* retriggers asked for the set, all rounds */
    int found;                            /* runs found on the push when the set was made */
    int asked_round, asked, set_round;    /* the latest round that asked it for retriggers */
    int latest_set_round;                 /* retrigger_sets.round now */
    bool set_decided;
    char project[65];
    bool round_made;      /* the set round set_round exists (retrigger_rounds) */
    bool round_refused;   /* and the budget granted it nothing */
    bool round_published; /* and its retrigger request went out */
} rt_pool_member;

/* The members, the opening one first (joined_at, then set id); *n at most max. */
RT_MUSTCHECK int rt_pools_members(rt_pg *pg, long long pool_id, rt_pool_member *out, size_t max,
                                  size_t *n);
/* What a member set's latest look found of its runs. */
RT_MUSTCHECK int rt_pools_member_evidence(rt_pg *pg, long long set_id, int retriggers,
                                          int reproduced, int unusable);

/* One run of the test's group on the push in the test history (oldest first). */
typedef struct rt_pool_push_run {
    char platform[RT_POOLS_CONFIG_SIZE];
    char label[512];
    bool failed; /* the test failed in it */
} rt_pool_push_run;
/* The runs on (project, revision) of group_name in the last `days` days, with whether the
 * test failed in each, oldest first; *n at most max. */
RT_MUSTCHECK int rt_pools_push_runs(rt_pg *pg, const char *project, const char *revision,
                                    const char *group_name, const char *test, int days,
                                    rt_pool_push_run *out, size_t max, size_t *n);

/* In the locked pooled set's transaction: its latest evaluation (state "settling" becomes
 * "open"), evidence a JSON text. */
RT_MUSTCHECK int rt_pools_evaluated(rt_pg *pg, long long pool_id, double p_regression,
                                    const char *evidence);
/* In the locked pooled set's transaction: round `round` asks member set_ids[i] for asked[i]
 * retriggers carried by its set round set_rounds[i]; the pooled set counts the round and
 * their sum. */
RT_MUSTCHECK int rt_pools_plan_round(rt_pg *pg, long long pool_id, int round,
                                     const long long *set_ids, const int *asked,
                                     const int *set_rounds, size_t n);
/* In the locked pooled set's transaction: the verdict. */
RT_MUSTCHECK int rt_pools_decide(rt_pg *pg, long long pool_id, const char *verdict,
                                 const char *reason, double p_regression, const char *evidence);

/* In the decision's transaction: the decision of set_id points at its pooled set, its policy
 * is pooled, and its evidence gets the pooled set's ("pool": the pooled evidence, with
 * seed, the seed rule's verdict and reason on the set's own runs). */
RT_MUSTCHECK int rt_pools_store_decision(rt_pg *pg, long long set_id, long long pool_id,
                                         const char *seed_verdict, const char *seed_reason);

/* A pooled set that needs a look: settled and never evaluated, or past its deadline and not
 * decided, not asked for in the last `again_s` seconds. */
typedef struct rt_pool_due {
    long long pool_id;
    long long set_id; /* its opening member set */
    char project[65];
} rt_pool_due;
/* In the caller's transaction: up to max due pooled sets (rows other replicas hold are
 * skipped), marked as asked for now. */
RT_MUSTCHECK int rt_pools_due(rt_pg *pg, int again_s, rt_pool_due *out, size_t max, size_t *n);

/* A pooled set still in its settle window that has tasks (rt_pools_tasks), not asked for in
 * the last `again_s` seconds: the sweep asks whether they have finished. */
typedef struct rt_pool_settling {
    long long pool_id;
    long long set_id; /* its opening member set */
    char project[65], revision[41];
    char test[RT_POOLS_TEST_SIZE], group_name[RT_POOLS_TEST_SIZE];
} rt_pool_settling;
/* Up to max of them, the oldest first. */
RT_MUSTCHECK int rt_pools_settling(rt_pg *pg, int again_s, rt_pool_settling *out, size_t max,
                                   size_t *n);
/* Marks a pooled set as asked for now (its wake_requested_at). */
RT_MUSTCHECK int rt_pools_woken(rt_pg *pg, long long pool_id);

#endif
