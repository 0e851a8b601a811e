/* SPDX-License-Identifier: MPL-2.0 */
/* settle.h - what becomes of a consumed message, from what handling it came to: the
 * at-least-once contract of every worker in one pure function.
 *
 * A handler answers with an outcome and a reason:
 *   ACK      done (its effects are durable): acknowledge it;
 *   DEAD     never usable (malformed, refused): dead-letter it with the reason;
 *   RETRY    an upstream failed: a copy goes to the delay queue of the attempt's delay
 *            (delays[attempt]) with attempt + 1, and the original is acknowledged; after
 *            the last delay it is dead-lettered with "<reason> (after N retries)";
 *   WAIT     busy elsewhere (another worker holds the set): like RETRY but the attempt is
 *            not spent (the copy keeps its attempt; the delay is the attempt's, or the last
 *            one), so waiting never dead-letters it; with no delays, requeued;
 *   REQUEUE  our own storage failed: back to its queue at once (nack with requeue), and the
 *            worker pauses before taking the next message;
 *   HOLD     the handler kept the message to settle later (a batch): nothing now.
 * The plan says which broker operation to make; common/worker.c makes it. */
#ifndef RETRIG_COMMON_CORE_SETTLE_H
#define RETRIG_COMMON_CORE_SETTLE_H

#include <stdbool.h>
#include <stddef.h>

#include "common/core/errors.h"

typedef enum {
    RT_SETTLE_ACK,
    RT_SETTLE_RETRY,
    RT_SETTLE_DEAD,
    RT_SETTLE_REQUEUE,
    RT_SETTLE_WAIT,
    RT_SETTLE_HOLD,
} rt_settle;

/* What a handler came to; reason is empty for a plain ACK. */
typedef struct rt_outcome {
    rt_settle settle;
    char reason[RT_ERRSTR_SIZE];
} rt_outcome;

/* Sets the outcome and its reason (printf-style; cut to RT_ERRSTR_SIZE at a character
 * boundary). */
void rt_outcome_set(rt_outcome *o, rt_settle settle, const char *fmt, ...) RT_PRINTF(3, 4);

typedef enum {
    RT_SETTLE_DO_ACK,         /* basic.ack */
    RT_SETTLE_DO_DEAD_LETTER, /* to the dead-letter queue with plan.reason */
    RT_SETTLE_DO_DELAY,       /* a copy to the delay queue of delay_ms with next_attempt; ack */
    RT_SETTLE_DO_REQUEUE,     /* basic.nack with requeue */
    RT_SETTLE_DO_NOTHING,     /* held by the handler */
} rt_settle_action;

typedef struct rt_settle_plan {
    rt_settle_action action;
    int delay_ms;       /* DELAY */
    int next_attempt;   /* DELAY: the copy's x-retrig-attempt */
    bool pause;         /* pause before the next message (a requeue, a wait without delays) */
    const char *metric; /* retrig_messages_total's outcome: acked, retried, dead-lettered,
                         * requeued or held */
    char reason[RT_ERRSTR_SIZE + 64]; /* DEAD_LETTER's reason; else the outcome's */
} rt_settle_plan;

/* The plan for outcome o of a message at attempt `attempt` (its x-retrig-attempt, 0 for a
 * first delivery), given the worker's delays (ndelays of them, in milliseconds). */
void rt_settle_plan_for(const rt_outcome *o, int attempt, const int *delays, size_t ndelays,
                        rt_settle_plan *plan);

#endif
