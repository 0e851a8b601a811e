/* SPDX-License-Identifier: MPL-2.0 */
/* settle.c - the plan for a consumed message (see settle.h). */
#include "common/core/settle.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/core/utf8.h"

void rt_outcome_set(rt_outcome *o, rt_settle settle, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    o->settle = settle;
    rt_utf8_vformat(o->reason, sizeof o->reason, fmt, ap);
    va_end(ap);
}

void rt_settle_plan_for(const rt_outcome *o, int attempt, const int *delays, size_t ndelays,
                        rt_settle_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    if (attempt < 0) attempt = 0;
    snprintf(plan->reason, sizeof plan->reason, "%s", o->reason);
    switch (o->settle) {
    case RT_SETTLE_ACK:
        plan->action = RT_SETTLE_DO_ACK;
        plan->metric = "acked";
        return;
    case RT_SETTLE_HOLD:
        plan->action = RT_SETTLE_DO_NOTHING;
        plan->metric = "held";
        return;
    case RT_SETTLE_DEAD:
        plan->action = RT_SETTLE_DO_DEAD_LETTER;
        plan->metric = "dead-lettered";
        return;
    case RT_SETTLE_REQUEUE:
        plan->action = RT_SETTLE_DO_REQUEUE;
        plan->metric = "requeued";
        plan->pause = true;
        return;
    case RT_SETTLE_RETRY:
        if ((size_t)attempt >= ndelays) {
            plan->action = RT_SETTLE_DO_DEAD_LETTER;
            plan->metric = "dead-lettered";
            rt_utf8_format(plan->reason, sizeof plan->reason, "%s (after %d retries)", o->reason,
                           attempt);
            return;
        }
        plan->action = RT_SETTLE_DO_DELAY;
        plan->metric = "retried";
        plan->delay_ms = delays[attempt];
        plan->next_attempt = attempt + 1;
        return;
    case RT_SETTLE_WAIT:
        plan->metric = "retried";
        if (ndelays == 0) {
            plan->action = RT_SETTLE_DO_REQUEUE;
            plan->pause = true;
            return;
        }
        plan->action = RT_SETTLE_DO_DELAY;
        plan->delay_ms = delays[(size_t)attempt < ndelays ? (size_t)attempt : ndelays - 1];
        plan->next_attempt = attempt;
        return;
    }
    plan->action = RT_SETTLE_DO_REQUEUE; /* an outcome this code does not know: keep it */
    plan->metric = "requeued";
    plan->pause = true;
}
