/* SPDX-License-Identifier: MPL-2.0 */
/* pool_flow.h - retrig-decide under decide_policy = pooled (issue 32): one verdict per
 * failing test per push (common/core/decide_pool.h), every member set's decision pointing
 * at it. The pooled sets and their members are common/store/pools.h's; retrig-classify
 * opens and joins them (workers/classify/pooled.h).
 *
 * On each decide request of a member set, after the set's own evidence is gathered (its
 * retriggers' runs and Treeherder lines, as for seed; the seed verdict on them is kept as
 * the shadow), pool_flow_apply:
 *   - joins the set to its pooled set if retrig-classify did not get to it (a crash between
 *     the set's commit and the join), and records what the set's runs show (evidence,
 *     reproduced: a failure line of the pooled test);
 *   - locks the pooled set's row; decided: the set takes the pooled verdict;
 *   - before the settle window ends and the deadline: nothing now, the sweep
 *     (pool_flow_sweep) asks again when it ends. It ends at decide_pool_settle_s, or earlier
 *     when the push's other tasks of the test's group have finished (rt_pool_settle_done
 *     over the tasks of the members' label families retrig-classify recorded, migration
 *     0042: each has its run in the test history without failing the test, ended in an
 *     exception, or runs on a configuration already known, a member's or one whose run of
 *     the group passed); the sweep looks for such pooled sets too;
 *   - else pools the evidence: each member set is a failing configuration (its push run
 *     failed; its retriggers and runs found on the push, pending the ones asked for and not
 *     in); every other configuration where the test's group ran on the push comes from the
 *     test history (history_runs/groups/tests, retrig-history's): its first run is the push
 *     run, failed when the test failed in it, later runs count as retriggers. The model
 *     (rt_pool_evaluate) with the test's history on other pushes decides, or asks for a
 *     round: the pooled set's round and each chosen member's share are planned under the
 *     row lock, then each share is asked as the next round of that member set
 *     (decide_rounds_ask_more: the platform's budget, decide_request_round, one retrigger
 *     request per set round: exactly once whatever replicas or redeliveries do). A round
 *     planned and not yet made counts as pending, and is made by whichever look comes next.
 *     Only failing configurations are retriggered; decide_max_retriggers caps the test.
 *   - past the pooled set's deadline (decide_pool_deadline_minutes) or the set's, the
 *     retriggers still missing are left out and the posterior decides.
 * A decided pooled set asks every other open member set to decide (they store the pooled
 * verdict). pool_flow_store writes the decision's link (in the decision's transaction):
 * policy pooled, pool_id, the pooled evidence and the seed verdict in evidence.pool.
 * Single-threaded, like the worker. */
#ifndef RETRIG_WORKERS_DECIDE_POOL_FLOW_H
#define RETRIG_WORKERS_DECIDE_POOL_FLOW_H

#include "common/not_core.h"

#include <stdbool.h>

#include "common/config.h"
#include "common/core/decide_model.h"
#include "common/core/verdict.h"
#include "common/io/amqp.h"
#include "common/io/pg.h"
#include "common/worker.h"
#include "workers/decide/rounds.h"

typedef struct pool_flow {
    const rt_config *cfg;
    bool on; /* decide_policy = pooled (read at start) */
    rt_decide_settings model;
    rt_pg *pg;
    rt_amqp *amqp;
    decide_rounds *rounds; /* asks the member sets' rounds */
} pool_flow;

/* One member set's request as the flow sees it (the worker's evidence, borrowed). */
typedef struct pool_set {
    long long id;
    const char *id_text;
    const char *project, *revision;
    const char *failure_seen_at;
    const rt_verdict_input *runs; /* the set's runs as gathered; NULL: not gathered */
    bool deadline;                /* the set's deadline passed */
} pool_set;

/* What the flow made of the set, for its decision. */
typedef struct pool_view {
    long long pool_id; /* 0: not pooled */
    bool decided;      /* the result is the pooled verdict */
    rt_verdict seed_verdict;
    char seed_reason[RT_VERDICT_REASON_SIZE];
} pool_view;

typedef enum {
    POOL_NOT_POOLED, /* not pooled (policy, or no failure names a test): go on per set */
    POOL_DECIDED,    /* *result is the pooled verdict: store it */
    POOL_WAIT,       /* nothing to store now (settling, waiting for retriggers, asked) */
    POOL_ERROR,      /* the outcome says what to do with the request */
} pool_step;

void pool_flow_init(pool_flow *p, const rt_config *cfg, rt_pg *pg, rt_amqp *amqp,
                    decide_rounds *rounds);
pool_step pool_flow_apply(pool_flow *p, const pool_set *set, rt_verdict_result *result,
                          pool_view *view, rt_outcome *h);
/* In the decision's transaction (the row exists); RT_OK and nothing done unless decided. */
RT_MUSTCHECK int pool_flow_store(pool_flow *p, const pool_view *view, long long set_id);
/* Asks for a look at pooled sets whose settle window or deadline passed (the tick). */
void pool_flow_sweep(pool_flow *p);

#endif
