/* SPDX-License-Identifier: MPL-2.0 */
/* decide_step.h - what retrig-decide does with a set once the verdict rule has spoken: store
 * a decision, look again after a delay, or leave the set to the next member that resolves
 * and, last, to the deadline. Pure; tests/unit/test_decide_step.c pins each case (`retrig
 * decide` replays the verdict rule, common/core/verdict.h, not this step).
 *
 * The rule:
 *   the verdict is regression, intermittent or undecided     store it
 *   not yet, past the set's deadline                          undecided: the runs that never
 *                                                             came, or never became readable,
 *                                                             could have gone either way
 *                                                             (reason: the wait, else
 *                                                             retriggers-missing)
 *   not yet, past the deadline, Treeherder answering 429/5xx  look again after the next delay;
 *                                                             with no delay left, undecided
 *                                                             "upstream-unavailable" with the
 *                                                             counts gathered so far
 *   not yet, a run's job or logs not ready, delays left       look again after the next delay
 *   not yet, a run's job or logs not ready, no delay left     leave: a late member stays
 *                                                             pending until the deadline, and
 *                                                             the other members' events ask
 *                                                             again meanwhile
 *   not yet, members still running                            leave: each one that resolves
 *                                                             asks again */
#ifndef RETRIG_COMMON_CORE_DECIDE_STEP_H
#define RETRIG_COMMON_CORE_DECIDE_STEP_H

#include <stdbool.h>
#include <stddef.h>

#include "common/core/verdict.h"

#define RT_UNDECIDED_MISSING "retriggers-missing"
/* Past the deadline, Treeherder still failing after the last delay. */
#define RT_UNDECIDED_UPSTREAM_UNAVAILABLE "upstream-unavailable"

typedef enum {
    RT_DECIDE_STORE, /* store result (a decision) */
    RT_DECIDE_RETRY, /* look again after the next delay (the message's next attempt) */
    RT_DECIDE_LEAVE, /* nothing now: a member's event or the deadline sweeper asks again */
} rt_decide_action;

typedef struct rt_decide_situation {
    const rt_verdict_result *result;
    const char *wait; /* why a run could not be read yet (RT_UNDECIDED_*), NULL when none */
    bool deadline;    /* past set_deadline_minutes, or the sweeper's request */
    int attempt;      /* the request's attempt (0 for the first) */
    size_t ndelays;   /* decide_delays_ms */
} rt_decide_situation;

/* What to do; when the action is RT_DECIDE_STORE, *decided holds the result to store. */
rt_decide_action rt_decide_next_step(const rt_decide_situation *s, rt_verdict_result *decided);
/* "store", "retry", "leave". */
const char *rt_decide_action_name(rt_decide_action action);

#endif
