/* SPDX-License-Identifier: MPL-2.0 */
/* retrigger_set.c - member states and the completeness rule (see retrigger_set.h). */
#include "common/core/retrigger_set.h"

#include <string.h>

static const char *const NAMES[] = {"pending", "running", "completed", "failed", "exception"};

const char *rt_member_state_name(rt_member_state state)
{
    return (unsigned)state < sizeof NAMES / sizeof *NAMES ? NAMES[state] : "pending";
}

bool rt_member_state_parse(const char *text, rt_member_state *out)
{
    if (!text) return false;
    if (!strcmp(text, "unscheduled")) {
        *out = RT_MEMBER_PENDING;
        return true;
    }
    for (unsigned i = 0; i < sizeof NAMES / sizeof *NAMES; i++)
        if (!strcmp(text, NAMES[i])) {
            *out = (rt_member_state)i;
            return true;
        }
    return false;
}

rt_member_state rt_member_state_of_event(rt_task_event event)
{
    switch (event) {
    case RT_TASK_EVENT_COMPLETED: return RT_MEMBER_COMPLETED;
    case RT_TASK_EVENT_FAILED: return RT_MEMBER_FAILED;
    case RT_TASK_EVENT_EXCEPTION: return RT_MEMBER_EXCEPTION;
    default: return RT_MEMBER_PENDING;
    }
}

bool rt_member_resolved(rt_member_state state)
{
    return state == RT_MEMBER_COMPLETED || state == RT_MEMBER_FAILED ||
           state == RT_MEMBER_EXCEPTION;
}

rt_run_state rt_member_run_state(rt_member_state state)
{
    switch (state) {
    case RT_MEMBER_COMPLETED: return RT_RUN_PASSED;
    case RT_MEMBER_FAILED: return RT_RUN_FAILED;
    case RT_MEMBER_EXCEPTION: return RT_RUN_EXCEPTION;
    default: return RT_RUN_PENDING;
    }
}

bool rt_set_complete(int requested, int found, int resolved)
{
    int waited = (requested > 0 ? requested : 0) + (found > 0 ? found : 0);
    return resolved >= waited;
}
