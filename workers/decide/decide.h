/* SPDX-License-Identifier: MPL-2.0 */
/* decide.h - what retrig-decide's files share: the worker's state, a set's evidence as the
 * verdict sees it, and the calls between main.c (a decide request's story: the set, its
 * evidence, the policy, the next step, the decision stored, the sweeper), gather.c (the
 * evidence from Postgres and Treeherder), documents.c (what a decision stores and publishes)
 * and cancel.c (retriggers no longer needed). Single-threaded, like the worker. */
#ifndef RETRIG_WORKERS_DECIDE_H
#define RETRIG_WORKERS_DECIDE_H

#include "common/not_core.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "common/config.h"
#include "common/core/bugsug.h"
#include "common/core/events.h"
#include "common/core/messages.h"
#include "common/core/verdict.h"
#include "common/io/amqp.h"
#include "common/io/http.h"
#include "common/io/pg.h"
#include "common/worker.h"
#include "workers/decide/pool_flow.h"
#include "workers/decide/rounds.h"

#define MAX_DELAYS       16
#define EVENT_MAX_TASKS  100
#define ORIGINAL_NO_DATA "original-logs-unusable"

typedef struct decide {
    rt_config *cfg;
    rt_worker_conns conns;
    rt_amqp *amqp; /* conns.broker */
    rt_pg *pg;
    rt_http *http;      /* Treeherder and Taskcluster GETs, with the client's retries */
    rt_http *http_post; /* cancel calls: one attempt */
    char queue[300];
    char events[300]; /* the decision events exchange, <ns>.decisions */
    int delays[MAX_DELAYS];
    size_t ndelays;
    time_t next_sweep;
    time_t next_culprit_poll;
    decide_rounds rounds; /* the verdict policy (rounds.h) */
    pool_flow pool;       /* decide_policy = pooled (pool_flow.h) */
} decide;

typedef struct set_info {
    long long id;
    char id_text[32];
    char project[65], revision[41];
    char label[1024];
    char platform[600];
    char original_task_id[23];
    int original_run_id;
    int count; /* retriggers asked for, every round */
    char status[16];
    char task_group_id[23];
    bool decided;
    bool past_deadline;
    char failure_seen_at[40];
    char requested_at[40]; /* "" when unknown */
    long original_seconds; /* the original run's duration, 0 when unknown */
} set_info;

/* One run of the set as the verdict sees it, with what we learnt about it. */
typedef struct run_info {
    char task_id[23];
    int run_id;
    char member_state[16]; /* "" for a retrigger that has not arrived */
    bool found;            /* a run that was on the push before the set (role found) */
    rt_run_state state;
    long job_id;
    long push_id; /* the job's Treeherder push, 0 when unknown */
    rt_bugsug lines;
    bool have_lines;
} run_info;

typedef struct evidence {
    set_info set;
    run_info original;
    int classification_id; /* -1 unknown */
    run_info runs[RT_VERDICT_MAX_RUNS];
    size_t nruns;
    size_t missing; /* retriggers asked for that never arrived (part of runs, PENDING) */
    rt_verdict_result result;
    const char *wait; /* why we must look again later, NULL when nothing to wait for */
    char wait_detail[RT_ERRSTR_SIZE];
    bool deadline;
    json_t *history; /* lines[].history: one object a line of the original, NULL: none */
    rt_verdict_run vruns[RT_VERDICT_MAX_RUNS]; /* what the verdict saw (input) */
    bool tracked[RT_VERDICT_MAX_LINES];
    rt_verdict_input input;
    bool have_input; /* the original's lines were compared */
    rounds_view rounds;
    pool_view pool;
} evidence;

/* gather.c: fills e from Postgres and Treeherder and runs the verdict; RT_OK, or an error
 * with h saying how the request settles. */
int decide_gather(decide *w, evidence *e, rt_outcome *h);

/* documents.c: whether run r shows the failure line; a member's result for the decision
 * ("reproduced", ...; NULL when it has none). */
bool decide_run_has_line(const run_info *r, const rt_failure_line *line);
const char *decide_member_result(const run_info *r, bool reproduced);
/* documents.c: the decision event's text (malloc'd; NULL when out of memory). */
char *decide_event_text(const decide *w, const evidence *e, const char *decided_at);
/* documents.c: the decision's stored evidence document (*stored, the caller's). */
int decide_build_documents(decide *w, const evidence *e, const rt_decide_request *req,
                           const char *decided_at, json_t **stored);
/* documents.c: each line's cross-branch history, added to e before the decision is stored. */
void decide_look_up_history(decide *w, evidence *e);

/* cancel.c: cancels the set's retriggers still pending after an early verdict and records
 * them on the decision (best effort: logged when it fails). */
void decide_cancel_pending(decide *w, const evidence *e);

#endif
