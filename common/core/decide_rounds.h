/* SPDX-License-Identifier: MPL-2.0 */
/* decide_rounds.h - the verdict policy in the workers (decide_policy = seed | adaptive): how
 * many retriggers retrig-classify asks for first, what retrig-decide does with a set's
 * evidence (store a verdict, wait, or ask for another round), and the keys that make each
 * round's budget claim, ledger row, request and hook call happen once. Pure: no I/O, no
 * clock, no globals, no allocation; thread-safe.
 *
 * A round is one batch of retriggers asked for and waited on. Round 1 is retrig-classify's
 * (the set's retrigger_count); rounds 2, 3, ... are retrig-decide's, each asked for when
 * the policy in force answers "more evidence" with nothing pending.
 *
 *   seed      round 1 asks for retriggers_per_failure runs (counting the runs already on the
 *             push); the verdict is rt_verdict_decide's, unchanged; never another round.
 *   adaptive  round 1 asks for the model's first batch (rt_decide_first_batch from the
 *             history of the failing tests; between budget_minimum and
 *             retriggers_per_failure) less the runs already on the push; then, while the
 *             model answers need-more and nothing is pending, another round of the size
 *             the model chooses (at most RT_ROUND_MAX_TIMES, one request's `times`), until
 *             decide_max_retriggers runs (found and requested) exist; then the posterior
 *             decides ("low-confidence"). When no round may follow (a later round's action
 *             failed or the budget refused it) or the set is past its deadline, need-more
 *             is decided the same way, by the posterior at once.
 * Whatever the policy, every other policy's verdict on the same evidence is computed too
 * (shadow verdicts), and adaptive's p_regression per line.
 *
 * Exactly-once keys, per (set, round); round 1 keeps the keys sets had before rounds:
 *   ledger row      "set:<id>"                  "set:<id>:round:<r>"
 *   its refund      "refund:set:<id>"           "refund:set:<id>:round:<r>"
 *   Redis claim     the set's dedupe key        "round:<id>:<r>" (rt_budget_claim_keyed)
 *   request         "retrigger-set-<id>"        "retrigger-set-<id>-round-<r>" (message id)
 * and the hook call is recorded per (set_id, round) in retrigger_actions. */
#ifndef RETRIG_COMMON_CORE_DECIDE_ROUNDS_H
#define RETRIG_COMMON_CORE_DECIDE_ROUNDS_H

#include <stdbool.h>
#include <stddef.h>

#include "common/core/decide_model.h"
#include "common/core/decide_policy.h"
#include "common/core/errors.h"
#include "common/core/verdict.h"

#define RT_ROUND_MAX_TIMES 20 /* retriggers one round asks for at most (a request's times) */
#define RT_ROUND_MAX       RT_DECIDE_MAX_RETRIGGERS /* rounds of one set at most */
#define RT_ROUND_KEY_SIZE  96                       /* every key below fits */

/* Treeherder's intermittent classifications (4 intermittent, 7 autoclassified
 * intermittent, 8 intermittent needs bug) shift the prior (RT_DECIDE_HINT_CLASSIFIED); so
 * does an open single tracking bug for the line's test (RT_DECIDE_HINT_TRACKED). */
unsigned rt_round_hints(bool tracked, int classification_id);

/* Round 1 of the adaptive policy: the model's first batch for a failure whose failing
 * tests have these histories (n of them, at most RT_VERDICT_MAX_LINES are read; n = 0: one
 * test without history), less the `found` runs already on the push (0 when they are
 * enough), within s->max_retriggers counting them. */
size_t rt_round_first(const rt_decide_settings *s, const rt_decide_history *histories, size_t n,
                      size_t found);

/* What retrig-decide knows of a set's rounds besides the evidence. */
typedef struct rt_round_state {
    int round;        /* the latest round asked for: 1 (classify's), 2, ... */
    size_t requested; /* retriggers retrig asked for in all rounds (budget spent) */
    size_t found;     /* runs of the label already on the push when the set was made */
    bool no_more;     /* no round may follow: one was refused or its action failed */
    bool deadline;    /* past set_deadline_minutes (or the sweeper's request) */
} rt_round_state;

typedef enum {
    RT_ROUND_VERDICT, /* final or undecided: the step rule (decide_step.h) stores it */
    RT_ROUND_WAIT,    /* not yet: retriggers are pending (the step rule waits or retries) */
    RT_ROUND_ASK,     /* ask for round `round` of `more` retriggers */
} rt_round_action;

typedef struct rt_round_plan {
    rt_round_action action;
    rt_policy policy;                    /* the policy in force */
    rt_policy shadow;                    /* the other one: adaptive for seed, seed for adaptive */
    rt_verdict verdict;                  /* the policy in force's (not-yet for WAIT and ASK) */
    char reason[RT_VERDICT_REASON_SIZE]; /* its reason */
    long line;                           /* the line the verdict is named by, -1: none */
    size_t more;                         /* ASK: retriggers the next round asks for */
    int round;                           /* ASK: its number */
    size_t spent;                        /* runs counted against decide_max_retriggers */
    rt_policy_result result;             /* every policy's outcome, adaptive's p_regression */
} rt_round_plan;

/* The plan for a set's evidence. in->spent is set here (found + requested, raised to the
 * runs the evidence holds). RT_EINVAL (plan: verdict undecided "invalid-input", action
 * RT_ROUND_VERDICT) for invalid evidence, settings or state. */
RT_MUSTCHECK int rt_round_plan_for(rt_policy policy, const rt_policy_input *in,
                                   const rt_round_state *state, rt_round_plan *out);

/* The round's keys (table above) into out; RT_EINVAL for set_id < 1, round < 1 (or < 2 for
 * the claim key, round 1 using the set's own) or an out too small. */
RT_MUSTCHECK int rt_round_ledger_key(long long set_id, int round, char *out, size_t size);
RT_MUSTCHECK int rt_round_refund_key(long long set_id, int round, char *out, size_t size);
RT_MUSTCHECK int rt_round_claim_key(long long set_id, int round, char *out, size_t size);
RT_MUSTCHECK int rt_round_message_id(long long set_id, int round, char *out, size_t size);

#endif
