/* SPDX-License-Identifier: MPL-2.0 */
/* followup.h - what became of one retrig-perf backfill, from facts the worker gathered
 * (workers/perf/followup.c): the pure ladder that turns the action task's state, the jobs
 * it spawned and the Perfherder data into pending, done or failed with a reason. Replayed
 * offline by `retrig followup --facts FILE`. No I/O, no clock (`now` is a fact).
 *
 * The ladder, first match wins:
 *   the action task id is invalid                      failed  action-failed
 *   the queue does not know the action task            pending (failed action-failed once
 *                                                       the follow-up window has passed)
 *   the action task is pending or running              pending (failed deadline-exceeded
 *                                                       after the window)
 *   it failed                                          failed  action-failed
 *   it ended in an exception                           failed  deadline-exceeded when the
 *                                                       reason is deadline-exceeded, else
 *                                                       action-failed
 *   it completed, and action tasks it triggered failed failed  action-failed
 *   ... some of those are unresolved                   pending (deadline-exceeded after
 *                                                       the window)
 *   no job found, the index may still list them        pending (an hour's grace after the
 *                                                       action task resolved)
 *   no job found                                       failed  no-data, saying where it looked
 *   jobs unresolved                                    pending (deadline-exceeded after the
 *                                                       window)
 *   a job deadline-exceeded / failed / exception       failed  deadline-exceeded /
 *                                                       jobs-failed / jobs-exception
 *   every job completed: Perfherder's data not known   need data (the worker asks
 *                                                       Perfherder and calls again)
 *   a data point of the alert's series from a job      done
 *   Treeherder or Perfherder not there yet             pending (failed no-data after the
 *                                                       window)
 *   otherwise                                          failed  no-data */
#ifndef RETRIG_COMMON_CORE_FOLLOWUP_H
#define RETRIG_COMMON_CORE_FOLLOWUP_H

#include <jansson.h>
#include <stdbool.h>
#include <time.h>

#include "common/core/errors.h"

#define RT_FOLLOWUP_INDEX_GRACE_S 3600 /* backfill-task action tasks are indexed late */

typedef struct rt_followup_facts {
    bool action_task_valid;    /* a well-formed task id */
    bool action_task_known;    /* the queue answered for it (not 404) */
    const char *action_state;  /* unscheduled, pending, running, completed, failed, exception */
    const char *action_reason; /* the last run's reasonResolved ("" when none) */
    const char *action_task_id;
    bool expired;            /* perf_followup_window_hours have passed since the trigger */
    int window_hours;        /* for the details */
    time_t now, resolved_at; /* resolved_at: the action task's last run (0 unknown) */
    /* What it spawned (when completed): */
    int actions_failed, actions_unresolved; /* action tasks it triggered */
    const char *bad_action;                 /* one of the failed ones */
    bool root_artifact;                     /* the action task had a label-to-taskid artifact */
    bool searched;                          /* the Taskcluster index was searched */
    int backfill_tasks;                     /* backfill-task action tasks found there */
    const char *label;                      /* the backfilled task's label */
    long first_push, last_push;             /* the pushes looked at */
    int jobs, completed, failed, exception, deadline, unresolved;
    const char *first_bad; /* a failed or exception job */
    /* Perfherder (once every job completed): */
    bool data_known;   /* the data question was asked */
    bool data_found;   /* a data point of the series came from one of the jobs */
    bool data_waiting; /* a job is not in Treeherder or its logs are not parsed */
    long long signature_id;
} rt_followup_facts;

typedef enum {
    RT_FOLLOWUP_PENDING,
    RT_FOLLOWUP_DONE,
    RT_FOLLOWUP_FAILED,
    RT_FOLLOWUP_NEED_DATA
} rt_followup_state;

typedef struct rt_followup_outcome {
    rt_followup_state state;
    const char *reason; /* NULL unless failed: action-failed, deadline-exceeded, no-data,
                         * jobs-failed, jobs-exception */
    char detail[256];
} rt_followup_outcome;

/* The outcome of the facts (see the ladder above). */
void rt_followup_assess(const rt_followup_facts *facts, rt_followup_outcome *out);
/* Whether a Taskcluster task state is not final (unscheduled, pending, running). */
bool rt_followup_task_unresolved(const char *state);
/* "pending", "done", "failed", "need-data". */
const char *rt_followup_state_name(rt_followup_state state);

/* Facts from a JSON object with the fields of rt_followup_facts (now and resolved_at as
 * UTC seconds); the strings point into doc, which must outlive facts. RT_EPROTO with errstr
 * naming the field. */
RT_MUSTCHECK int rt_followup_facts_from_json(json_t *doc, rt_followup_facts *facts, char *errstr);

#endif
