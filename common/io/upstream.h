/* SPDX-License-Identifier: MPL-2.0 */
/* upstream.h - the Taskcluster queue, index and Treeherder calls retrig makes, over rt_http.
 *
 * Each call validates the identifiers it puts in a URL, parses the answer once into a
 * small struct and maps HTTP outcomes to codes: 404 -> RT_ENOTFOUND; other 4xx ->
 * RT_EUPSTREAM; 429/5xx/timeouts after the client's retries -> RT_ERETRY / RT_ETIMEDOUT /
 * RT_ECONN (transient: the caller retries later through a delay queue); a body that is
 * not the documented shape -> RT_EPROTO. errstr (RT_ERRSTR_SIZE) says what happened.
 * Thread-safety: that of the rt_http passed in. */
#ifndef RETRIG_COMMON_UPSTREAM_H
#define RETRIG_COMMON_UPSTREAM_H

#include "common/not_core.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/core/errors.h"
#include "common/core/hawk.h"
#include "common/core/taskdef.h"
#include "common/io/http.h"

#define RT_TC_MAX_ARTIFACTS      10000
#define RT_TC_MAX_GROUP_PAGES    1000
#define RT_TC_GROUP_PAGE_LIMIT   50 /* tasks per task-group page asked for */
#define RT_TC_MAX_INDEX_PAGES    20
#define RT_TC_MAX_NAMESPACE      255
#define RT_TC_MAX_DECISION_BYTES (4L * 1024 * 1024) /* a decision task definition */

/* True for codes worth retrying later (429/5xx, timeouts, connection failures). */
bool rt_upstream_transient(int rc);

/* True for an index namespace that may go into a URL: dot-separated non-empty segments of
 * A-Z a-z 0-9 _ -, at most RT_TC_MAX_NAMESPACE characters. */
bool rt_tc_valid_namespace(const char *ns);

/* Called for each task listed under an index namespace: its taskId (validated) and the
 * entry ({namespace, taskId, rank, data, expires}, borrowed); returns true to stop. */
typedef bool rt_tc_indexed_fn(void *ctx, const char *task_id, json_t *entry);

/* The index's listTasks: GET <root>/api/index/v1/tasks/<namespace>?limit=N (the tasks
 * indexed immediately under the namespace; the POST form is deprecated), following
 * continuationToken (at most RT_TC_MAX_INDEX_PAGES pages) until fn returns true. Entries
 * without a valid taskId are skipped. A namespace the index does not know (404) lists
 * nothing. RT_EINVAL for a namespace rt_tc_valid_namespace refuses; RT_EPROTO when the
 * answer has no 'tasks' array. GET, so 429/5xx are retried by the client. */
RT_MUSTCHECK int rt_tc_index_each_task(rt_http *h, const char *root_url, const char *ns,
                                       rt_tc_indexed_fn *fn, void *ctx, char *errstr);

/* GET <root>/api/queue/v1/task/<taskId>: the raw definition (malloc'd, NUL-terminated). */
RT_MUSTCHECK int rt_tc_get_task(rt_http *h, const char *root_url, const char *task_id, char **body,
                                size_t *len, char *errstr);

typedef struct rt_tc_artifact_names {
    char **names;
    size_t count;
} rt_tc_artifact_names;

/* Lists a run's artifact names, following continuationToken. */
RT_MUSTCHECK int rt_tc_list_artifacts(rt_http *h, const char *root_url, const char *task_id,
                                      int run_id, rt_tc_artifact_names *out, char *errstr);
void rt_tc_artifact_names_free(rt_tc_artifact_names *names);

/* GET a run's artifact (redirects to storage are followed). */
RT_MUSTCHECK int rt_tc_get_artifact(rt_http *h, const char *root_url, const char *task_id,
                                    int run_id, const char *name, char **body, size_t *len,
                                    char *errstr);

/* Called for each task of a task group listing, with its status and definition objects
 * (borrowed); returns true to stop. task_id may be NULL when the entry lacks one. */
typedef bool rt_tc_task_fn(void *ctx, const char *task_id, json_t *status, json_t *task);

/* Walks GET <root>/api/queue/v1/task-group/<id>/list, following continuationToken (at most
 * RT_TC_MAX_GROUP_PAGES pages), until fn returns true. */
RT_MUSTCHECK int rt_tc_each_group_task(rt_http *h, const char *root_url, const char *task_group_id,
                                       rt_tc_task_fn *fn, void *ctx, char *errstr);

/* A run of a task of the push, as its task group lists it. */
typedef struct rt_tc_run {
    char task_id[23];
    int run_id;     /* its latest run (0 when it has none yet) */
    char state[16]; /* unscheduled, pending, running, completed, failed, exception */
} rt_tc_run;

/* The tasks of a task group whose label is `label` (tags.label, else metadata.name),
 * leaving out `exclude_task_id`, each with its latest run: the runs of the label already on
 * the push or scheduled for it, whoever asked for them. At most max are kept in out; *n is
 * how many were found in all. A task without a valid id or state is left out. */
RT_MUSTCHECK int rt_tc_label_runs_in_group(rt_http *h, const char *root_url,
                                           const char *task_group_id, const char *label,
                                           const char *exclude_task_id, rt_tc_run *out, size_t max,
                                           size_t *n, char *errstr);

/* Looks through a task group for an action task created by `action_name` for this label
 * or task: tags.action (or extra.action.name) equal to action_name, and an input that
 * names the label (retrigger-multiple: input.requests[].tasks; add-new-jobs: input.tasks)
 * or a taskId equal to
 * task_id (retrigger, backfill). extra.action may hold input/taskId directly or under
 * "context" (gecko's shape). *found false when there is none. */
RT_MUSTCHECK int rt_tc_find_action_task(rt_http *h, const char *root_url, const char *task_group_id,
                                        const char *action_name, const char *label,
                                        const char *task_id, char action_task_id[23], bool *found,
                                        char *errstr);
/* The same, leaving out the action tasks named in except[] (nexcept of them; NULL entries
 * are ignored): a later round of a set (common/core/decide_rounds.h) or a culprit probe
 * looks for its own action task, not one an earlier attempt or round recorded for the same
 * label. */
RT_MUSTCHECK int rt_tc_find_action_task_except(rt_http *h, const char *root_url,
                                               const char *task_group_id, const char *action_name,
                                               const char *label, const char *task_id,
                                               const char *const *except, size_t nexcept,
                                               char action_task_id[23], bool *found, char *errstr);

/* Where a hook call stopped (rt_tc_trigger_hook): signing it, recording that it starts, or
 * sending it (the call may then have reached Taskcluster). */
typedef enum { RT_HOOK_SIGNING, RT_HOOK_RECORDING, RT_HOOK_SENDING } rt_hook_stage;
/* Taskcluster's hooks.triggerHook: POST <root_url>/api/hooks/v1/hooks/<group>/<id>/trigger
 * with payload (JSON text), Hawk-signed with creds, sent once through h (which should make one
 * attempt: the callers retry after looking for the action task, never blindly).
 * record_call(ctx, errstr) runs once the call is signed and before it is sent, so that the
 * caller records that a call starts; its error ends the call unsent. RT_OK with
 * action_task_id (the answer's status.taskId). Otherwise *stage says where it stopped and
 * errstr why: RT_EAUTH when Taskcluster refused our credentials (401, 403; errstr names the
 * scope needed), RT_EPROTO for an answer without a task id, else rt_http_request's error;
 * *status is the answer's HTTP status (0 when none). Used by retrig-retrigger and retrig-perf. */
RT_MUSTCHECK int rt_tc_trigger_hook(rt_http *h, const char *root_url, const char *hook_group_id,
                                    const char *hook_id, const char *payload,
                                    const rt_hawk_credentials *creds,
                                    int (*record_call)(void *ctx, char *errstr), void *ctx,
                                    char action_task_id[23], rt_hook_stage *stage, long *status,
                                    char *errstr);

typedef struct rt_th_job {
    long id;
    int failure_classification_id;
    int tier;
    int retry_id; /* the Taskcluster run id */
    long push_id;
    char result[32];
    char state[32];
} rt_th_job;

/* GET <treeherder>/api/jobs/?task_id=<id>, results zipped with job_property_names; the
 * job of run `run_id` (else the last one listed). *found is false when Treeherder has not
 * ingested the task yet. */
RT_MUSTCHECK int rt_th_job_for_task(rt_http *h, const char *treeherder_url, const char *task_id,
                                    int run_id, rt_th_job *job, bool *found, char *errstr);

typedef struct rt_th_logs {
    int pending;  /* logs whose parse_status is pending */
    int parsed;   /* parsed */
    int unusable; /* failed or skipped-size */
    int total;
} rt_th_logs;

/* GET <treeherder>/api/project/<project>/job-log-url/?job_id=<id>: counts of parse_status. */
RT_MUSTCHECK int rt_th_job_logs(rt_http *h, const char *treeherder_url, const char *project,
                                long job_id, rt_th_logs *logs, char *errstr);

/* GET <treeherder>/api/project/<project>/jobs/<id>/bug_suggestions/: the raw body. */
RT_MUSTCHECK int rt_th_bug_suggestions(rt_http *h, const char *treeherder_url, const char *project,
                                       long job_id, char **body, size_t *len, char *errstr);

/* ---- a project's pushes, for culprit searches (workers/decide/culprit_flow.c) ---- */

#define RT_TH_MAX_PUSHES     1000 /* Treeherder's own cap on one push listing */
#define RT_TH_MAX_LABEL_JOBS 10000
#define RT_TH_AUTHOR_SIZE    256

typedef struct rt_th_push {
    long id;                        /* Treeherder's push id (not the pushlog id) */
    char revision[41];              /* the push's head revision, 40 hex digits */
    char author[RT_TH_AUTHOR_SIZE]; /* the pusher, cut on a character when longer */
    long long push_timestamp;       /* seconds since the epoch */
} rt_th_push;

/* GET <treeherder>/api/project/<project>/push/?id__lt=<before_id>&count=<count>: the count
 * pushes before push before_id, newest first (sorted by push_timestamp, then id, whatever the
 * answer's order). count is 1..RT_TH_MAX_PUSHES and at most max. An entry that is not a push
 * (no positive id, a revision that is not 40 hex digits, an author that is not a string)
 * fails the whole answer (RT_EPROTO): a push left out would silently shorten a window. */
RT_MUSTCHECK int rt_th_pushes_before(rt_http *h, const char *treeherder_url, const char *project,
                                     long before_id, int count, rt_th_push *out, size_t max,
                                     size_t *n, char *errstr);

/* A Treeherder job of one label on one push. */
typedef struct rt_th_label_job {
    long id;
    char task_id[23]; /* "" when Treeherder does not give it */
    int retry_id;
    char state[32];  /* unscheduled, pending, running, completed */
    char result[32]; /* success, testfailed, busted, exception, retry, usercancel, unknown, ... */
} rt_th_label_job;

/* The jobs of `label` (Treeherder's job_type_name, the task label) on push push_id: GET
 * <treeherder>/api/project/<project>/jobs/?push_id=<id>&job_type_name=<label>&return_type=list
 * &count=500&offset=..., every page (at most RT_TH_MAX_LABEL_JOBS jobs; more is RT_ETOOBIG).
 * At most max are kept in out; *n is how many there were. A row whose id is not a positive
 * integer fails the answer (RT_EPROTO). */
RT_MUSTCHECK int rt_th_push_label_jobs(rt_http *h, const char *treeherder_url, const char *project,
                                       long push_id, const char *label, rt_th_label_job *out,
                                       size_t max, size_t *n, char *errstr);

/* A push's decision task from the Taskcluster index (Gecko indexes it as
 * gecko.v2.<project>.revision.<revision>.taskgraph.decision), checked against its own
 * definition: its tc-treeherder route must name the same project and revision, which also
 * gives the pushlog id (*pushlog_id, 0 when the route has none). RT_ENOTFOUND when the index
 * does not know the push; RT_EPROTO when the indexed task is not that push's. def (may be
 * NULL) receives the parsed definition (free with rt_taskdef_free). */
RT_MUSTCHECK int rt_tc_push_decision_task(rt_http *h, const char *root_url, const char *project,
                                          const char *revision, char decision_task_id[23],
                                          long *pushlog_id, rt_taskdef *def, char *errstr);

#endif
