/* SPDX-License-Identifier: MPL-2.0 */
/* hook.c - the steps of retrig-retrigger's every hook call (retrigger.h): the push's
 * actions.json, the original task, the allow-list and credentials check, the set's lock and
 * the signed call. */
#include "workers/retrigger/retrigger.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/core/trust.h"
#include "common/core/utf8.h"
#include "common/io/log.h"
#include "common/io/upstream.h"
#include "common/policy.h"
#include "common/store/hook_calls.h"

int retrigger_get_actions(retrigger *w, const char *decision_task_id, const rt_actions **out,
                          rt_outcome *h)
{
    for (size_t i = 0; i < RETRIGGER_ACTIONS_CACHE; i++) {
        if (w->cache[i].actions && !strcmp(w->cache[i].decision_task_id, decision_task_id)) {
            *out = w->cache[i].actions;
            return RT_OK;
        }
    }
    char *body = NULL, errstr[RT_ERRSTR_SIZE] = "";
    size_t len = 0;
    /* The latest run's artifact: GET /task/<id>/artifacts/<name> answers for it. */
    char path[128];
    snprintf(path, sizeof path, "%s/api/queue/v1/task/%s/artifacts/public/actions.json",
             w->cfg->taskcluster_root_url, decision_task_id);
    rt_http_response resp;
    int rc = rt_http_get(w->http, path, &resp);
    if (rc != RT_OK) {
        snprintf(errstr, sizeof errstr, "%s", rt_http_errstr(w->http));
        long status = resp.status;
        rt_http_response_free(&resp);
        if (rc == RT_EUPSTREAM && status == 404) {
            rt_outcome_set(h, RT_SETTLE_ACK, "no-retrigger-action: no actions.json (%s)", errstr);
            return RT_ENOTFOUND;
        }
        rt_outcome_set(h, rt_upstream_transient(rc) ? RT_SETTLE_RETRY : RT_SETTLE_DEAD,
                       "upstream-error: actions.json: %s", errstr);
        return rc;
    }
    body = resp.body;
    len = resp.len;
    rt_actions *actions = NULL;
    rc = rt_actions_parse(body, len, RT_ACTIONS_MAX_BYTES, &actions, errstr);
    rt_http_response_free(&resp);
    if (rc != RT_OK) {
        rt_outcome_set(h, RT_SETTLE_ACK, "no-retrigger-action: unusable actions.json: %s", errstr);
        return RT_ENOTFOUND;
    }
    cached_actions *slot = &w->cache[w->cache_next++ % RETRIGGER_ACTIONS_CACHE];
    rt_actions_free(slot->actions);
    snprintf(slot->decision_task_id, sizeof slot->decision_task_id, "%s", decision_task_id);
    slot->actions = actions;
    *out = actions;
    return RT_OK;
}

int retrigger_fetch_task(retrigger *w, const char *task_id, rt_taskdef *def, json_t **tags_out,
                         rt_outcome *h)
{
    char *body = NULL, errstr[RT_ERRSTR_SIZE] = "", reason[128] = "";
    size_t len = 0;
    int rc = rt_tc_get_task(w->http, w->cfg->taskcluster_root_url, task_id, &body, &len, errstr);
    if (rc != RT_OK) {
        rt_outcome_set(h, rt_upstream_transient(rc) ? RT_SETTLE_RETRY : RT_SETTLE_DEAD,
                       "upstream-error: task definition: %s", errstr);
        return rc;
    }
    rc = rt_taskdef_parse(body, len, (size_t)w->cfg->http_max_body_bytes, def, reason);
    if (rc != RT_OK) {
        free(body);
        rt_outcome_set(h, rc == RT_ENOMEM ? RT_SETTLE_REQUEUE : RT_SETTLE_DEAD,
                       "invalid task definition: %s", reason);
        return rc;
    }
    json_error_t error;
    json_t *doc = json_loadb(body, len, 0, &error);
    free(body);
    json_t *tags = json_object_get(doc, "tags");
    *tags_out = json_is_object(tags) ? json_incref(tags) : json_object();
    json_decref(doc);
    return *tags_out ? RT_OK : RT_ENOMEM;
}

int retrigger_call_hook(retrigger *w, int (*record_call)(void *call_ctx, char *errstr),
                        void *call_ctx, const rt_action *action, const char *payload,
                        const rt_hawk_credentials *creds, char action_task_id[23], rt_outcome *h)
{
    char errstr[RT_ERRSTR_SIZE] = "";
    rt_hook_stage stage;
    long status = 0;
    int rc = rt_tc_trigger_hook(w->http_post, w->cfg->taskcluster_root_url, action->hook_group_id,
                                action->hook_id, payload, creds, record_call, call_ctx,
                                action_task_id, &stage, &status, errstr);
    if (rc == RT_OK) return RT_OK;
    if (stage == RT_HOOK_SIGNING)
        rt_outcome_set(h, RT_SETTLE_DEAD, "%s", errstr);
    else if (stage == RT_HOOK_RECORDING)
        rt_outcome_set(h, RT_SETTLE_REQUEUE, "%s", errstr);
    else if (rc == RT_EAUTH)
        rt_outcome_set(h, RT_SETTLE_DEAD, "%s", errstr);
    else if (rc == RT_EPROTO)
        rt_outcome_set(h, RT_SETTLE_RETRY, "upstream-error: %s", errstr);
    else
        /* 429, 5xx, a dropped connection: the call may or may not have arrived. The retry
         * looks for the action task before calling again. A 4xx other than those: nothing was
         * created and asking again cannot help. */
        rt_outcome_set(h,
                       rc == RT_EUPSTREAM && status < 500 && status != 429 ? RT_SETTLE_DEAD
                                                                           : RT_SETTLE_RETRY,
                       "upstream-error: %s", errstr);
    return rc;
}

int retrigger_check_hook(retrigger *w, const retrigger_subject *s, const rt_taskdef *task,
                         const rt_action *action, const json_t *input, const json_t *payload,
                         rt_hawk_credentials *creds, const char **code, char *reason)
{
    rt_hook_policy policy;
    rt_hook_policy_from_config(w->cfg, &policy);
    rt_hook_call call = {
        .hook_group_id = action->hook_group_id,
        .hook_id = action->hook_id,
        .payload = payload,
        .project = s->project,
        .revision = s->revision,
        .scheduler_id = task->scheduler_id,
        .task_group_id = task->task_group_id,
        .task_id = rt_action_is_task_group(action) ? NULL : s->task_id,
        .action_name = action->name,
        .input = input,
    };
    rt_hook_verdict verdict;
    if (rt_hook_check(&policy, &call, &verdict) != RT_OK) {
        *code = verdict.code;
        rt_utf8_copy(reason, RT_ERRSTR_SIZE, verdict.reason, NULL);
        return RT_EAUTH;
    }
    if (!w->cfg->dry_run && !rt_taskcluster_credentials(w->cfg, verdict.level, creds)) {
        *code = "credentials";
        snprintf(reason, RT_ERRSTR_SIZE,
                 "no Taskcluster credentials for level %d (project %s): "
                 "taskcluster_client_id_level%d",
                 verdict.level, s->project, verdict.level);
        return RT_EAUTH;
    }
    return RT_OK;
}

bool retrigger_lock_set(retrigger *w, long long set_id, rt_outcome *h)
{
    bool locked = false;
    if (rt_hook_calls_try_lock(w->pg, set_id, &locked) != RT_OK) {
        rt_outcome_set(h, RT_SETTLE_REQUEUE, "postgres: %s", rt_pg_errstr(w->pg));
        return false;
    }
    if (!locked)
        rt_outcome_set(h, RT_SETTLE_WAIT, "set-busy: another worker holds set %lld", set_id);
    return locked;
}

void retrigger_unlock_set(retrigger *w, long long set_id)
{
    if (rt_hook_calls_unlock(w->pg, set_id) != RT_OK) {
        char text[24];
        snprintf(text, sizeof text, "%lld", set_id);
        rt_log_warn("cannot release the set lock", "set_id", text);
    }
}
