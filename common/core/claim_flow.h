/* SPDX-License-Identifier: MPL-2.0 */
/* claim_flow.h - the budget claim of a retrigger set, step by step: the pure sequence that
 * retrig-classify runs once a failure is eligible. Moved here from classify's
 * request_retriggers (issue 33); classify_request_retriggers (workers/classify/request.c) now
 * only performs the steps.
 *
 * The sequence: read the ledger's spend for (platform, day) unless the run's facts brought
 * it; claim the set and min(wanted, left) of the budget in Redis (common/io/budget.h); when
 * the budget is exhausted but runs of the label are already on the push, claim again asking
 * for nothing (those runs decide). Exhausted: the run's verdict is skip/budget-exhausted.
 * The set claimed by another task: join that set when Postgres has it (is-retrigger), look
 * again later when not (its owner is between Redis and Postgres). Claimed (or claimed
 * earlier by this very task): create the set in one Postgres call that runs the ledger
 * backstop (common/store/ledger.h); when the backstop keeps less than Redis granted, give the
 * rest back (a failed give-back is only logged once the set is committed; with nothing
 * written the message is requeued and the redelivery gives it back); a backstop that kept
 * nothing and no run on the push is skip/budget-exhausted. A set created is then published
 * (a failed publish requeues and gives nothing back: the set is committed and the
 * redelivery publishes it). A set that already existed (Redis flushed, a replica won) is a
 * duplicate: the claim made now is refunded unless the set is this very task's (a replica
 * handling its redelivery spent the claim), its request published if nobody did, and the
 * run's verdict is skip/duplicate. retrig-classify has no dry run: its request is only a
 * message, and retrig-retrigger honours dry_run when it acts on it.
 *
 * Like rt_eligibility_decide, rt_claim_flow_next is a function of the facts: the worker
 * fills rt_claim_flow_facts with what it knows, asks for the next step, performs it and
 * records its result in the facts, until the step is RT_CLAIM_DONE, which says how the
 * message settles. Each result the worker records changes the next step, so a loop
 * terminates. No I/O, no clock, no globals.
 *
 * The keyed claims of retrig-decide's later rounds (workers/decide/rounds.c), of
 * retrig-retrigger's culprit probes and of retrig-perf's backfills run their own sequence:
 * nobody else can own their key, an exhausted budget is recorded (rounds) or fails the probe
 * rather than skipping a run, and what the backstop did not keep is settled, never refunded;
 * they share the Redis claim and the ledger backstop (common/io), not these steps. */
#ifndef RETRIG_COMMON_CLAIM_FLOW_H
#define RETRIG_COMMON_CLAIM_FLOW_H

#include <stdbool.h>
#include <stddef.h>

/* What a Redis claim found (rt_budget_claim, common/io/budget.h fills it). */
typedef enum { RT_CLAIM_CLAIMED, RT_CLAIM_EXISTS, RT_CLAIM_EXHAUSTED } rt_claim_status;

typedef struct rt_claim {
    rt_claim_status status;
    int spent;              /* CLAIMED: spent now; EXISTS: what the claimant spent */
    int left;               /* EXHAUSTED: what was left */
    int total;              /* CLAIMED: the day's counter with this claim in it */
    char owner_task_id[64]; /* EXISTS: the task that claimed the set */
} rt_claim;

/* What the worker does next. */
typedef enum {
    RT_CLAIM_READ_LEDGER,    /* the ledger's spend for (platform, day): facts.ledger_spent */
    RT_CLAIM_REDIS,          /* claim step.wanted (at least step.minimum): facts.claim */
    RT_CLAIM_FIND_SET,       /* the set of (project, revision, label): facts.set_* */
    RT_CLAIM_JOIN_SET,       /* the run becomes a member of the found set (and asks to decide) */
    RT_CLAIM_CREATE_SET,     /* set, backstop and ledger row in one call, asking for step.count
                              * with step.minimum: facts.created, refused, kept, ledger_total */
    RT_CLAIM_SETTLE,         /* rt_budget_settle(claimed, kept, ledger_total) of the step */
    RT_CLAIM_REFUND,         /* give step.amount back to the day's counter */
    RT_CLAIM_PUBLISH,        /* publish the set's request unless it was (under the row lock) */
    RT_CLAIM_RECORD_VERDICT, /* the run's verdict: skip, step.verdict_reason */
    RT_CLAIM_DONE,           /* settle the message: step.end, step.cause, step.reason */
} rt_claim_action;

/* How the message settles (RT_CLAIM_DONE). */
typedef enum { RT_CLAIM_END_ACK, RT_CLAIM_END_REQUEUE, RT_CLAIM_END_RETRY } rt_claim_end;

/* Which call made it requeue or retry (RT_CLAIM_DONE; the worker words the reason). */
typedef enum {
    RT_CLAIM_CAUSE_NONE,
    RT_CLAIM_CAUSE_POSTGRES,
    RT_CLAIM_CAUSE_REDIS,
    RT_CLAIM_CAUSE_CREATE_SET,      /* step.error: RT_ENOMEM, or the Postgres error */
    RT_CLAIM_CAUSE_PUBLISH,         /* the request of a committed set */
    RT_CLAIM_CAUSE_SET_IN_PROGRESS, /* RETRY: the set's owner (facts.claim.owner_task_id) has
                                     * claimed it in Redis and not yet written it */
} rt_claim_cause;

/* A line the worker logs before it performs the step. */
typedef enum {
    RT_CLAIM_NOTE_NONE,
    RT_CLAIM_NOTE_EXHAUSTED_RUNS_DECIDE, /* info: exhausted, the runs on the push decide */
    RT_CLAIM_NOTE_EXHAUSTED,             /* info: budget exhausted */
    RT_CLAIM_NOTE_BACKSTOP_CUT,  /* warn: the ledger leaves less than Redis granted (claimed,
                                  * kept, ledger: facts.ledger_total) */
    RT_CLAIM_NOTE_SETTLE_FAILED, /* warn: the give-back failed (the set is committed) */
    RT_CLAIM_NOTE_REFUND_FAILED, /* warn: the refund of a duplicate's claim failed */
} rt_claim_note;

/* A call the worker made for a step: done, and its result (0 or a negative RT_E*). */
typedef struct rt_claim_call {
    bool done;
    int rc;
} rt_claim_call;

typedef struct rt_claim_flow_facts {
    /* Known before the first step. */
    int wanted;         /* retriggers the decision asks for (>= 0) */
    int budget_minimum; /* configuration: the least worth spending */
    int limit;          /* the platform's daily budget */
    size_t runs_found;  /* runs of the label already on the push */
    bool ledger_known;  /* ledger_spent was read today with the run's facts */
    int ledger_spent;   /* the floor of the Redis counter (RT_CLAIM_READ_LEDGER fills it) */
    /* Results, each recorded after the step that asked for it. */
    rt_claim_call ledger;
    rt_claim_call claim; /* the last claim; claims counts them */
    int claims;
    rt_claim claim_result;
    bool claim_owner_is_self; /* EXISTS: the owner is the task in hand */
    rt_claim_call find_set;
    bool set_exists;           /* FIND_SET found the set */
    bool set_original_is_self; /* ... and its original task is the task in hand */
    rt_claim_call join;
    rt_claim_call create;
    bool created;     /* the call inserted the set (a refusal included) */
    bool refused;     /* the backstop kept nothing and no run was found */
    int kept;         /* created: what the backstop kept */
    int ledger_total; /* created: the ledger's total before this claim */
    rt_claim_call settle;
    rt_claim_call refund;
    rt_claim_call publish;
    rt_claim_call verdict;
} rt_claim_flow_facts;

typedef struct rt_claim_flow_step {
    rt_claim_action action;
    rt_claim_note note;
    int wanted, minimum;             /* REDIS; CREATE_SET: minimum */
    int count;                       /* CREATE_SET: retriggers the set asks for */
    int claimed, kept, ledger_total; /* SETTLE: as rt_budget_settle takes them */
    int amount;                      /* REFUND */
    const char *verdict_reason;      /* RECORD_VERDICT */
    bool set_gauges;                 /* the budget gauges to set, before the step */
    int gauge_left, gauge_spent;
    /* RT_CLAIM_DONE */
    rt_claim_end end;
    rt_claim_cause cause;
    int error;          /* the failed call's result, for cause CREATE_SET */
    const char *reason; /* the outcome's reason ("retriggers-requested", ...), or NULL */
    int spent;          /* "retriggers-requested": what the set asks for */
    int counter_total;  /* ... and the day's counter after it; < 0: unknown, ask Redis */
} rt_claim_flow_step;

/* The next step from the facts (always one; RT_CLAIM_DONE ends). */
void rt_claim_flow_next(const rt_claim_flow_facts *facts, rt_claim_flow_step *step);

#endif
