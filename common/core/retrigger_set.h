/* SPDX-License-Identifier: MPL-2.0 */
/* retrigger_set.h - the members of a retrigger set and when the set has said all it will:
 * the states a member goes through, what the verdict sees of each, and the completeness
 * rule. Pure; shared by retrig-classify (which records members and asks for a decision)
 * and retrig-decide (which reads them).
 *
 * A set's members are its original failed run, the retriggers retrig asked for (role
 * retrigger) and the runs of the label that were already on the push when the set was made
 * (role found: someone else's retriggers, an earlier run). A set is complete once as many
 * of its retrigger and found members have resolved as it waits for: the retriggers it
 * asked for plus the runs it found. */
#ifndef RETRIG_COMMON_CORE_RETRIGGER_SET_H
#define RETRIG_COMMON_CORE_RETRIGGER_SET_H

#include <stdbool.h>

#include "common/core/pulse.h"
#include "common/core/verdict.h"

typedef enum {
    RT_MEMBER_PENDING,
    RT_MEMBER_RUNNING,
    RT_MEMBER_COMPLETED,
    RT_MEMBER_FAILED,
    RT_MEMBER_EXCEPTION,
} rt_member_state;

/* "pending", "running", "completed", "failed", "exception". */
const char *rt_member_state_name(rt_member_state state);
/* A Taskcluster run state as a member state ("unscheduled" is pending); false for anything
 * else. */
bool rt_member_state_parse(const char *text, rt_member_state *out);
/* The member state a Pulse task event tells: completed, failed, exception, else pending. */
rt_member_state rt_member_state_of_event(rt_task_event event);
/* Whether the member has resolved (completed, failed or exception). */
bool rt_member_resolved(rt_member_state state);
/* What the verdict sees of a member before its logs are read: completed is a pass,
 * exception counts neither way, failed is a failure whose lines decide (the worker reads
 * them and may find them not parsed yet: pending), pending and running are pending. */
rt_run_state rt_member_run_state(rt_member_state state);

/* Whether the set is complete: `resolved` of its retrigger and found members resolved, of
 * `requested` retriggers asked for and `found` runs found. */
bool rt_set_complete(int requested, int found, int resolved);

#endif
