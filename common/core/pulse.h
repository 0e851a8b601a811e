/* SPDX-License-Identifier: MPL-2.0 */
/* pulse.h - parses and validates Taskcluster queue task-* Pulse message bodies.
 *
 * Accepts the raw body (as published on exchange/taskcluster-queue/v1/task-*) and
 * Treeherder's recorded wrapper {root_url, exchange, payload, routes}. Validation follows
 * the queue's schemas (tests/fixtures/taskcluster/schema_task-*.yml) for the fields retrig
 * uses; older bodies without taskQueueId are accepted with provisionerId/workerType, and a
 * task-exception without runId (a deadline passed before any run) as an exception of no run.
 * A body that fails gives a short machine reason ("invalid-json", "missing-field:status.taskId",
 * "wrong-type:runId", "too-big", "invalid-value:status.taskId") for the dead-letter queue.
 * Pure: no I/O. */
#ifndef RETRIG_COMMON_PULSE_H
#define RETRIG_COMMON_PULSE_H

#include <stdbool.h>
#include <stddef.h>

#include "common/core/errors.h"

#define RT_PULSE_REASON_SIZE 128
#define RT_PULSE_NO_RUN      (-1) /* run_id of a task-exception that names no run */

typedef enum {
    RT_TASK_EVENT_UNKNOWN = 0,
    RT_TASK_EVENT_COMPLETED,
    RT_TASK_EVENT_FAILED,
    RT_TASK_EVENT_EXCEPTION,
    RT_TASK_EVENT_OTHER, /* pending, running, defined: not a resolution */
} rt_task_event;

typedef struct rt_pulse_task {
    rt_task_event event;
    char task_id[23];
    /* runId; RT_PULSE_NO_RUN for a task-exception without one (the schema allows it when
     * the deadline passed before any run started): then run_state and the run's times and
     * worker are NULL, and the message is about no run at all. */
    int run_id;
    char task_group_id[23];
    char *task_queue_id; /* taskQueueId, or provisionerId/workerType */
    char *scheduler_id;
    char *task_state;                     /* status.state */
    char *run_state;                      /* runs[runId].state, NULL without a run */
    char *reason_resolved;                /* runs[runId].reasonResolved, may be NULL */
    char *scheduled, *started, *resolved; /* ISO-8601 strings of the run, may be NULL */
    char *worker_group, *worker_id;       /* may be NULL (exceptions) */
    /* task.tags in modern bodies (NULL when absent); a label that is not rt_valid_label
     * fails the parse with "invalid-value:task.tags.label". */
    char *tag_kind, *tag_label, *tag_os, *tag_test_type, *tag_action;
    /* From the CC route tc-treeherder.v2.<project>.<revision>.<pushlogId>, when known. */
    char *project, *revision, *pushlog_id;
} rt_pulse_task;

/* exchange: the AMQP exchange the message came from, or NULL (then taken from the wrapper,
 * else from the run state). max_bytes caps the body. Returns RT_OK, or RT_EPROTO /
 * RT_ETOOBIG with `reason` set; RT_ENOMEM. */
RT_MUSTCHECK int rt_pulse_parse(const char *body, size_t len, const char *exchange,
                                size_t max_bytes, rt_pulse_task *out, char *reason);
/* Sets project/revision/pushlog_id from a route "[route.]tc-treeherder.v2.P.R.N"; returns
 * true when the route was such a route and its parts are valid. */
bool rt_pulse_apply_route(rt_pulse_task *task, const char *route);
/* A delivery as it came: rt_pulse_parse, then the routes of its CC header (cc, ncc) and of
 * routes_csv (the comma-separated routes a delayed copy carries; may be NULL). exchange:
 * the original exchange of a delayed copy, else the delivery's. */
RT_MUSTCHECK int rt_pulse_parse_routed(const char *body, size_t len, const char *exchange,
                                       char *const *cc, size_t ncc, const char *routes_csv,
                                       size_t max_bytes, rt_pulse_task *out, char *reason);
rt_task_event rt_task_event_from_exchange(const char *exchange);
const char *rt_task_event_name(rt_task_event event);
void rt_pulse_task_free(rt_pulse_task *task);

#endif
