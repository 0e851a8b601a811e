/* SPDX-License-Identifier: MPL-2.0 */
/* retrigger.h - what retrig-retrigger's files share: the worker's state, and the steps every
 * hook call takes whatever asked for it (hook.c): the push's actions.json (cached), the
 * original task's definition, the check of the rendered call against the allow-list and the
 * project's credentials, the set's session lock, and the signed call itself. round.c serves a
 * retrigger set's rounds, probe.c a culprit search's probes; main.c is the worker's topology
 * and its handler. Single-threaded, like the worker. */
#ifndef RETRIG_WORKERS_RETRIGGER_H
#define RETRIG_WORKERS_RETRIGGER_H

#include "common/not_core.h"

#include <jansson.h>
#include <stdbool.h>

#include "common/config.h"
#include "common/core/actions.h"
#include "common/core/culprit_flow.h"
#include "common/core/hawk.h"
#include "common/core/messages.h"
#include "common/core/taskdef.h"
#include "common/io/amqp.h"
#include "common/io/http.h"
#include "common/io/pg.h"
#include "common/io/redis.h"
#include "common/worker.h"

#define RETRIGGER_MAX_DELAYS    16
#define RETRIGGER_ACTIONS_CACHE 32

typedef struct cached_actions {
    char decision_task_id[23];
    rt_actions *actions;
} cached_actions;

typedef struct retrigger {
    rt_config *cfg;
    rt_worker_conns conns;
    rt_amqp *amqp; /* conns.broker */
    rt_redis *redis;
    rt_pg *pg;
    rt_http *http;      /* GETs, with retries */
    rt_http *http_post; /* the hook call: one attempt, we retry through the delay queue */
    char queue[300];
    int delays[RETRIGGER_MAX_DELAYS];
    size_t ndelays;
    cached_actions cache[RETRIGGER_ACTIONS_CACHE];
    size_t cache_next;
} retrigger;

/* A retrigger request: one round of a set, exactly once (round.c). */
void retrigger_round(retrigger *w, const rt_retrigger_request *req, rt_outcome *h);
/* A culprit probe request: add-new-jobs on one push, exactly once (probe.c). */
void retrigger_probe(retrigger *w, const rt_culprit_probe_request *req, rt_outcome *h);

/* ---- hook.c ---- */

/* actions.json of a decision task, cached (it never changes). RT_ENOTFOUND with h acked and
 * its reason "no-retrigger-action: ..." when the push has none or it cannot be used; another
 * error with h set to retry or dead-letter. */
int retrigger_get_actions(retrigger *w, const char *decision_task_id, const rt_actions **out,
                          rt_outcome *h);
/* The task's definition (its schedulerId and task group, for the hook check) and its tags (for
 * task actions: retrigger, backfill); *tags_out is the caller's. */
int retrigger_fetch_task(retrigger *w, const char *task_id, rt_taskdef *def, json_t **tags_out,
                         rt_outcome *h);

/* What a hook call is for: the push, and the original task for a task action (NULL for a
 * task-group action such as add-new-jobs). */
typedef struct retrigger_subject {
    const char *project, *revision, *task_id;
} retrigger_subject;
/* The hook call the rendered action asks for, checked before anything is signed or sent
 * (common/core/trust.h): the payload must be the action looked up with the input it was
 * rendered with; for a real call, the credentials of the project's level. RT_OK, or RT_EAUTH
 * with *code and reason (RT_ERRSTR_SIZE) saying why it is refused. */
int retrigger_check_hook(retrigger *w, const retrigger_subject *subject, const rt_taskdef *task,
                         const rt_action *action, const json_t *input, const json_t *payload,
                         rt_hawk_credentials *creds, const char **code, char *reason);

/* Signs and sends the hook call (rt_tc_trigger_hook), after record_call(call_ctx, errstr)
 * recorded that a call starts (a redelivery then waits until the call would have timed out).
 * RT_OK with action_task_id, or an error with h filled: requeued when the start could not be
 * recorded; dead-lettered when the call could not be signed, Taskcluster refused our
 * credentials (RT_EAUTH) or refused the call with another 4xx (RT_EUPSTREAM: nothing was
 * created); else retried (the call may have arrived). */
int retrigger_call_hook(retrigger *w, int (*record_call)(void *call_ctx, char *errstr),
                        void *call_ctx, const rt_action *action, const char *payload,
                        const rt_hawk_credentials *creds, char action_task_id[23], rt_outcome *h);

/* One worker per set at a time: the set's session lock (Postgres drops it if this process
 * dies). false when not taken, with h set: requeued on a database error, else waiting while
 * another worker holds it. */
bool retrigger_lock_set(retrigger *w, long long set_id, rt_outcome *h);
void retrigger_unlock_set(retrigger *w, long long set_id);

#endif
