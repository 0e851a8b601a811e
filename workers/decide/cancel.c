/* SPDX-License-Identifier: MPL-2.0 */
/* cancel.c - retrig-decide's cancelling of retriggers no longer needed (decide.h,
 * decide_cancel_pending): after an early verdict, the set's retriggers still pending in its
 * task group are cancelled with Taskcluster's cancelTask and recorded on the decision. */
#include "workers/decide/decide.h"

#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/decide_step.h"
#include "common/core/evidence.h"
#include "common/core/history.h"
#include "common/core/ids.h"
#include "common/core/retrigger_set.h"
#include "common/core/utf8.h"
#include "common/io/history_store.h"
#include "common/io/log.h"
#include "common/io/metrics.h"
#include "common/io/upstream.h"
#include "common/options.h"
#include "common/store/decide_sets.h"

static int cancel_task(decide *w, const char *task_id)
{
    char url[512];
    snprintf(url, sizeof url, "%s/api/queue/v1/task/%s/cancel", w->cfg->taskcluster_root_url,
             task_id);
    char nonce[RT_HAWK_NONCE_SIZE], *auth = NULL;
    rt_hawk_credentials creds = {w->cfg->taskcluster_client_id, w->cfg->taskcluster_access_token,
                                 w->cfg->taskcluster_certificate};
    int rc = rt_hawk_nonce(nonce);
    if (rc == RT_OK)
        rc = rt_hawk_header(&creds, "POST", url, NULL, NULL, (long)time(NULL), nonce, &auth);
    if (rc != RT_OK) return rc;
    rt_http_header headers[] = {{"Authorization", auth}};
    rt_http_response resp;
    rc = rt_http_request(w->http_post, "POST", url, headers, 1, NULL, 0, &resp);
    rt_http_response_free(&resp);
    free(auth);
    return rc;
}

static bool is_member(const evidence *e, const char *task_id)
{
    if (!strcmp(task_id, e->set.original_task_id)) return true;
    for (size_t i = 0; i < e->nruns; i++)
        if (e->runs[i].task_id[0] && !strcmp(e->runs[i].task_id, task_id)) return true;
    return false;
}

typedef struct cancel_walk {
    decide *w;
    const evidence *e;
    rt_event_task_id *cancelled; /* task ids cancelled so far */
    size_t ncancelled, cap;
} cancel_walk;

/* One task of the push's task group: cancelled when it is a pending, unscheduled or running
 * task with the set's label that is not a member yet. Never stops the walk. */
static bool cancel_if_pending(void *ctx, const char *id, json_t *status, json_t *task)
{
    cancel_walk *c = ctx;
    const char *state = json_string_value(json_object_get(status, "state"));
    const char *label = json_string_value(json_object_get(json_object_get(task, "tags"), "label"));
    if (!label)
        label = json_string_value(json_object_get(json_object_get(task, "metadata"), "name"));
    if (!id || !state || !label || !rt_valid_task_id(id) || strcmp(label, c->e->set.label) ||
        is_member(c->e, id))
        return false;
    if (strcmp(state, "pending") && strcmp(state, "running") && strcmp(state, "unscheduled"))
        return false;
    if (cancel_task(c->w, id) == RT_OK) {
        if (c->ncancelled == c->cap) {
            size_t cap = c->cap ? 2 * c->cap : 16;
            rt_event_task_id *grown = realloc(c->cancelled, cap * sizeof *grown);
            if (!grown) return false; /* the record counts what it could keep */
            c->cancelled = grown;
            c->cap = cap;
        }
        memcpy(c->cancelled[c->ncancelled++], id, sizeof *c->cancelled);
    } else
        rt_log_warn("cancel failed", "task_id", id, "error", rt_http_errstr(c->w->http_post));
    return false;
}

/* Cancels the set's retriggers still pending or running: the tasks of the push's task
 * group with the set's label that are not members yet. Best effort (a listing that fails
 * part way keeps what was cancelled until then); records the count, the task ids and an
 * estimate of the task time saved (the original run's duration each). */
void decide_cancel_pending(decide *w, const evidence *e)
{
    const set_info *s = &e->set;
    if (!s->task_group_id[0] || !w->cfg->taskcluster_client_id ||
        !w->cfg->taskcluster_access_token) {
        rt_log_warn("cannot cancel pending retriggers: no task group or no credentials", "set_id",
                    s->id_text);
        return;
    }
    cancel_walk walk = {.w = w, .e = e};
    char errstr[RT_ERRSTR_SIZE] = "";
    if (rt_tc_each_group_task(w->http, w->cfg->taskcluster_root_url, s->task_group_id,
                              cancel_if_pending, &walk, errstr) != RT_OK)
        rt_log_warn("cannot list the task group to cancel retriggers", "set_id", s->id_text,
                    "error", errstr);
    size_t n = walk.ncancelled;
    char *text = rt_cancelled_json(walk.cancelled, n, s->original_seconds);
    free(walk.cancelled);
    if (text && rt_decide_sets_cancelled(w->pg, s->id, text) != RT_OK)
        rt_log_warn("cannot record the cancelled retriggers", "set_id", s->id_text, "error",
                    rt_pg_errstr(w->pg));
    free(text);
    char count[16];
    snprintf(count, sizeof count, "%zu", n);
    rt_log_info("pending retriggers cancelled", "set_id", s->id_text, "count", count);
}
