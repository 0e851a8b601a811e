/* SPDX-License-Identifier: MPL-2.0 */
/* hook_calls.h - the store of the hook calls retrig-retrigger makes, each exactly once: a
 * retrigger set's rounds (retrigger_actions, one row per (set, round): the intent with its
 * payload, each call's start, the outcome) with the set's status that an outcome moves, and a
 * culprit search's probes (culprit_pending_probes, one row per (set, push)) with the ledger
 * row of each probe's budget. The statements were retrig-retrigger's own until issue 33; they
 * live in hook_calls.c and no PGresult leaves it.
 *
 * Exactly once rests on the order the worker keeps: the set's session lock (one worker per set
 * at a time; Postgres drops it when the worker dies), the intent recorded before the call,
 * each call's start recorded (a redelivery waits until a call in flight would have timed out),
 * the outcome recorded once (a row with an outcome is never changed again).
 * Thread-safety: per rt_pg handle. Layer: common/store (the core and common/io below it). */
#ifndef RETRIG_COMMON_STORE_HOOK_CALLS_H
#define RETRIG_COMMON_STORE_HOOK_CALLS_H

#include "common/not_core.h"

#include <stdbool.h>
#include <stddef.h>

#include "common/core/culprit_flow.h"
#include "common/core/errors.h"
#include "common/io/pg.h"

/* ---- the set's session lock ---- */

/* pg_try_advisory_lock on the set (class 7271): *locked false when another session holds it.
 * Held until rt_hook_calls_unlock or the end of the session. */
RT_MUSTCHECK int rt_hook_calls_try_lock(rt_pg *pg, long long set_id, bool *locked);
RT_MUSTCHECK int rt_hook_calls_unlock(rt_pg *pg, long long set_id);

/* ---- a retrigger set's rounds ---- */

/* What a round of a set asks for: the set's push and label, the original task and its group
 * (in Gecko the push's decision task), and the retriggers: round 1 the set's count, a later
 * round its retrigger_rounds row. */
typedef struct rt_round_target {
    char project[65], revision[41];
    char label[600];
    char original_task_id[23];
    char platform[600];
    char task_group_id[23];
    int count;
} rt_round_target;
/* *found false when the set, or a later round's row asking for retriggers, does not exist
 * (yet: the request may overtake its commit). */
RT_MUSTCHECK int rt_hook_calls_round_target(rt_pg *pg, long long set_id, int round,
                                            rt_round_target *target, bool *found);

/* What earlier deliveries of the round did. */
typedef struct rt_round_call_state {
    bool have_intent;        /* an intent row exists */
    bool finished;           /* it has an outcome */
    int attempts;            /* hook calls started */
    long long since_call_ms; /* since the last call started (or the intent) */
} rt_round_call_state;
RT_MUSTCHECK int rt_hook_calls_round_state(rt_pg *pg, long long set_id, int round,
                                           rt_round_call_state *state);

/* The action tasks the set's other rounds recorded (not this round's), oldest round first, at
 * most max. */
RT_MUSTCHECK int rt_hook_calls_other_action_tasks(rt_pg *pg, long long set_id, int round,
                                                  char (*ids)[23], size_t max, size_t *n);

/* The intent of a round's call, recorded before the call: inserted, or the payload and hook
 * of an intent without an outcome replaced. */
typedef struct rt_round_intent {
    long long set_id;
    int round;
    const char *action_name, *decision_task_id;
    const char *hook_group_id, *hook_id;
    const char *payload; /* JSON text */
    bool dry_run;
} rt_round_intent;
RT_MUSTCHECK int rt_hook_calls_round_intent(rt_pg *pg, const rt_round_intent *intent);
/* A call starts: attempts + 1, intent_at now. */
RT_MUSTCHECK int rt_hook_calls_round_attempt(rt_pg *pg, long long set_id, int round);
/* The last call's error, kept on a round without an outcome. */
RT_MUSTCHECK int rt_hook_calls_round_error(rt_pg *pg, long long set_id, int round,
                                           const char *error);

/* A round's outcome, and what it does to the set (set_status): NULL leaves the set as it is;
 * "requested" marks it requested (round 1 also records its action task); "failed" for round 1
 * sends the set on to its decision when runs of the label were found on the push (its
 * retriggers leave its count) and fails it otherwise, or when a sheriff classified the
 * failure ("classified-before-trigger"); for a later round, its retriggers (count) leave the
 * set's and the set is complete. The outcome and the set's change commit together (in the
 * caller's transaction when one is open). An outcome already recorded is kept. */
typedef struct rt_round_outcome {
    long long set_id;
    int round;
    int count; /* the round's retriggers */
    const char *action_name, *decision_task_id;
    bool dry_run;
    const char *outcome;        /* triggered, found-existing, dry-run, failed, ... */
    const char *action_task_id; /* NULL when none */
    const char *error;          /* NULL when none */
    const char *set_status;     /* NULL, "requested" or "failed" */
} rt_round_outcome;
RT_MUSTCHECK int rt_hook_calls_round_outcome(rt_pg *pg, const rt_round_outcome *outcome);

/* ---- a culprit search's probes ---- */

/* Whether the set's decision is still searching for its culprit. */
RT_MUSTCHECK int rt_hook_calls_searching(rt_pg *pg, long long set_id, bool *searching);

/* The probe row of (set, push): row->exists false when none. row->state points into state;
 * decision_task_id ("" when none) and previous (the earlier attempts' action tasks,
 * comma-separated) are filled when it exists. */
RT_MUSTCHECK int rt_hook_calls_probe_row(rt_pg *pg, long long set_id, const char *revision,
                                         rt_culprit_probe_row *row, char state[16],
                                         char decision_task_id[23], char *previous,
                                         size_t previous_size);

/* A probe attempt's intent (state "intent", or "dry-run"), with its budget's ledger row. */
typedef struct rt_probe_intent {
    long long set_id;
    const char *revision;
    long pushlog_id; /* 0: unknown */
    const char *label;
    int round, attempt, times;
    bool confirm;
    const char *decision_task_id, *payload;
    bool dry_run;
    const char *hook_group_id, *hook_id;
    /* the ledger row: amount spent on (platform, day), under its idempotency key */
    const char *platform, *day, *ledger_key, *ledger_reason;
    int spent;
} rt_probe_intent;
/* Inside the caller's transaction (after the budget backstop): creates the row, or moves a
 * row whose previous attempt is done to this attempt, then writes the ledger row. *stored
 * false when the row was neither (another attempt holds it): nothing was written. */
RT_MUSTCHECK int rt_hook_calls_probe_intent(rt_pg *pg, const rt_probe_intent *intent, bool *stored);
/* A call starts: calls + 1, intent_at now. */
RT_MUSTCHECK int rt_hook_calls_probe_calling(rt_pg *pg, long long set_id, const char *revision);
/* The call created its action task: the row (in state intent) is triggered. */
RT_MUSTCHECK int rt_hook_calls_probe_triggered(rt_pg *pg, long long set_id, const char *revision,
                                               const char *action_task_id);
/* The last call's error, kept on a row still in state intent. */
RT_MUSTCHECK int rt_hook_calls_probe_error(rt_pg *pg, long long set_id, const char *revision,
                                           const char *error);

/* The probe cannot be served: the row (created if need be) fails with why, unless it was
 * triggered or failed before. */
typedef struct rt_probe_failure {
    long long set_id;
    const char *revision, *label;
    int round, attempt, times;
    bool confirm;
    const char *why;
} rt_probe_failure;
RT_MUSTCHECK int rt_hook_calls_probe_failed(rt_pg *pg, const rt_probe_failure *failure);

#endif
