/* SPDX-License-Identifier: MPL-2.0 */
/* decide_step.c - retrig-decide's step after the verdict (see decide_step.h). */
#include "common/core/decide_step.h"

#include <stdio.h>
#include <string.h>

rt_decide_action rt_decide_next_step(const rt_decide_situation *s, rt_verdict_result *decided)
{
    *decided = *s->result;
    if (s->result->verdict != RT_VERDICT_NOT_YET) return RT_DECIDE_STORE;
    if (s->deadline) {
        /* The deadline ends the wait. A verdict still open then could have gone either way
         * with the runs that never came or never became readable: undecided, saying why. */
        if (s->wait && !strcmp(s->wait, RT_UNDECIDED_UPSTREAM_ERROR)) {
            /* Treeherder still failing: looked at again after each delay, then undecided
             * with the evidence gathered (the counts stay), never left open for good. */
            if (s->attempt >= 0 && (size_t)s->attempt < s->ndelays) return RT_DECIDE_RETRY;
            decided->verdict = RT_VERDICT_UNDECIDED;
            decided->regression_line = -1;
            snprintf(decided->reason, sizeof decided->reason, "%s",
                     RT_UNDECIDED_UPSTREAM_UNAVAILABLE);
            return RT_DECIDE_STORE;
        }
        rt_verdict_undecided(decided, s->wait ? s->wait : RT_UNDECIDED_MISSING);
        return RT_DECIDE_STORE;
    }
    if (s->wait && s->attempt >= 0 && (size_t)s->attempt < s->ndelays) return RT_DECIDE_RETRY;
    return RT_DECIDE_LEAVE;
}

const char *rt_decide_action_name(rt_decide_action action)
{
    switch (action) {
    case RT_DECIDE_STORE: return "store";
    case RT_DECIDE_RETRY: return "retry";
    case RT_DECIDE_LEAVE: return "leave";
    }
    return "unknown";
}
