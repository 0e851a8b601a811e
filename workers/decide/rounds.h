/* SPDX-License-Identifier: MPL-2.0 */
/* rounds.h - retrig-decide's side of the verdict policy (decide_policy; the rule is
 * common/core/decide_rounds.h): the policy in force on a set's evidence, another round of
 * retriggers when adaptive wants more evidence, and what every decision records of it.
 *
 * On each decide request, decide_rounds_apply runs after the evidence is gathered:
 *   seed      nothing (today's verdict, untouched); the shadow is computed when storing.
 *   adaptive  the test history of each line of the original (rt_history_model_counts:
 *             other pushes, before the failure was seen), the plan (rt_round_plan_for),
 *             and then: its verdict replaces the seed rule's; or the set waits for its
 *             retriggers; or round r + 1 is asked for the way retrig-classify asks for
 *             round 1: a Redis claim of the platform's daily budget (its own dedupe key),
 *             one Postgres call (decide_request_round, migration 0024: the round's row,
 *             the backstop, its ledger row, the set's count), then the retrigger request
 *             published with a confirm and marked published under the round's row lock.
 *             A redelivered request finds the round and publishes it if it was not; a
 *             replica that evaluated the same evidence finds the set moved on (stale).
 *             A round the budget refuses is recorded and the posterior decides at once.
 * When a decision is stored, decide_rounds_evidence adds to its evidence each line's
 * p_regression and history counts and the policy's story ("policy"), and
 * decide_rounds_store writes the decision's policy columns (migration 0024) in the
 * decision's transaction. Single-threaded, like the worker. */
#ifndef RETRIG_WORKERS_DECIDE_ROUNDS_H
#define RETRIG_WORKERS_DECIDE_ROUNDS_H

#include "common/not_core.h"

#include <jansson.h>
#include <stdbool.h>

#include "common/config.h"
#include "common/core/decide_rounds.h"
#include "common/io/amqp.h"
#include "common/io/pg.h"
#include "common/io/redis.h"
#include "common/worker.h"

typedef struct decide_rounds {
    const rt_config *cfg;
    rt_policy policy;         /* decide_policy (read at start: a change needs a restart) */
    rt_decide_settings model; /* from the decide_* keys */
    rt_pg *pg;                /* the worker's connections */
    rt_redis *redis;          /* NULL unless adaptive */
    rt_amqp *amqp;
} decide_rounds;

/* One set as the policy sees it (the worker's evidence, borrowed). */
typedef struct rounds_set {
    long long id;
    const char *id_text;
    const char *project, *revision;
    const char *failure_seen_at;      /* the history counted is from before it */
    const rt_verdict_input *evidence; /* NULL: the original has no line to compare */
    int classification_id;            /* the original's, -1 unknown */
    bool deadline;
} rounds_set;

/* What the policy made of the set, for the decision. */
typedef struct rounds_view {
    bool loaded;                                     /* the set's rounds were read */
    bool evaluated;                                  /* the plan below is the policy's */
    rt_round_state state;                            /* rounds, retriggers, found */
    int rounds;                                      /* rounds with retriggers asked for */
    bool refused;                                    /* a later round the budget refused */
    rt_decide_history history[RT_VERDICT_MAX_LINES]; /* per line of the original */
    size_t nlines;
    rt_round_plan plan;
} rounds_view;

typedef enum {
    ROUNDS_GO_ON, /* the result is the policy's: go on to the step rule (decide_step.h) */
    ROUNDS_ASKED, /* another round was asked for (or a replica moved the set on): leave */
    ROUNDS_ERROR, /* the outcome says what to do with the request */
} rounds_step;

void decide_rounds_init(decide_rounds *r, const rt_config *cfg, rt_pg *pg, rt_redis *redis,
                        rt_amqp *amqp);
/* Whether retrig-decide needs Redis and publishes retrigger requests (adaptive). */
bool decide_rounds_asks(const rt_config *cfg);

/* The policy on a set's gathered evidence; *result (rt_verdict_decide's) becomes the policy
 * in force's verdict. */
rounds_step decide_rounds_apply(decide_rounds *r, const rounds_set *set, rt_verdict_result *result,
                                rounds_view *view, rt_outcome *h);
/* Before storing: the shadow verdicts and p_regression when apply did not compute them
 * (seed). Best effort: without them the decision is stored with its policy columns empty. */
void decide_rounds_finish(decide_rounds *r, const rounds_set *set, rounds_view *view);
/* Adds the policy's story to the stored evidence (lines[i].p_regression, lines[i].model,
 * "p_regression", "policy"). RT_ENOMEM: nothing is partly added that could mislead (the
 * caller fails the decision, as for any evidence it cannot build). */
RT_MUSTCHECK int decide_rounds_evidence(const decide_rounds *r, const rounds_view *view,
                                        json_t *stored);
/* decide_policy = pooled (workers/decide/pool_flow.h): asks round `round` of `more`
 * retriggers of the set the way a later adaptive round is asked (the Redis claim of the
 * set's platform budget under the round's own key, decide_request_round, the request
 * published once under the round's row lock). Idempotent: a round asked before is published
 * if it was not and otherwise left. *refused: the budget granted nothing. */
RT_MUSTCHECK int decide_rounds_ask_more(decide_rounds *r, const rounds_set *set, int round,
                                        size_t more, double p_regression, bool *refused);
/* The decision's policy columns, in the caller's transaction (the row exists). */
RT_MUSTCHECK int decide_rounds_store(decide_rounds *r, const rounds_view *view,
                                     const char *set_id_text);

#endif
