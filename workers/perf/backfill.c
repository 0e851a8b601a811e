/* SPDX-License-Identifier: MPL-2.0 */
/* backfill.c - retrig-perf's backfill of one picked alert, exactly once (perf.h): the rules
 * are main.c's header's "for each pick" and "resumed first". */
#include "workers/perf/perf.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/core/actions.h"
#include "common/core/hawk.h"
#include "common/core/ids.h"
#include "common/core/taskdef.h"
#include "common/core/trust.h"
#include "common/io/budget.h"
#include "common/io/log.h"
#include "common/io/stop.h"
#include "common/io/upstream.h"
#include "common/policy.h"
#include "common/store/ledger.h"
#include "common/store/perf.h"

typedef struct target {
    long long job_id;
    char task_id[23];
    char decision_task_id[23];
    json_t *tags;
    rt_taskdef def; /* the task's definition: schedulerId, task group, push */
} target;

/* GET a JSON document; *status receives the HTTP status of a failure (0 when none). */
static int get_json(perf *w, const char *url, json_t **out, long *status, char *errstr)
{
    rt_http_response resp;
    int rc = rt_http_get(w->http, url, &resp);
    *status = rc == RT_OK ? 0 : resp.status;
    *out = NULL;
    if (rc != RT_OK) {
        rt_set_errstr(errstr, "%s", rt_http_errstr(w->http));
    } else {
        json_error_t error;
        *out = json_loadb(resp.body, resp.len, 0, &error);
        if (!*out) {
            rt_set_errstr(errstr, "answer is not JSON: %s", error.text);
            rc = RT_EPROTO;
        }
    }
    rt_http_response_free(&resp);
    return rc;
}

/* The job of the alert's data point at the summary's push, and its task. RT_ENOTFOUND
 * when Perfherder or Treeherder has none (errstr says which). */
static int find_target(perf *w, const rt_perf_pick *p, target *t, char *errstr)
{
    char *url = NULL;
    json_t *doc = NULL;
    long status = 0;
    int rc = RT_ENOMEM;
    if (asprintf(&url, "%s/api/project/%s/performance/data/?signature_id=%lld&push_id=%lld",
                 w->cfg->treeherder_url, p->summary->repository, p->alert->signature_id,
                 p->summary->push_id) < 0) {
        url = NULL;
        goto out;
    }
    if ((rc = get_json(w, url, &doc, &status, errstr)) != RT_OK) goto out;
    long long best = -1;
    const char *key;
    json_t *series;
    json_object_foreach(doc, key, series)
    {
        size_t i;
        json_t *d;
        json_array_foreach(series, i, d)
        {
            json_t *id = json_object_get(d, "id"), *job = json_object_get(d, "job_id");
            if (json_integer_value(json_object_get(d, "signature_id")) != p->alert->signature_id ||
                json_integer_value(json_object_get(d, "push_id")) != p->summary->push_id ||
                !json_is_integer(job) || json_integer_value(job) <= 0)
                continue;
            if (best < 0 || json_integer_value(id) < best) {
                best = json_integer_value(id);
                t->job_id = json_integer_value(job);
            }
        }
    }
    json_decref(doc);
    doc = NULL;
    if (best < 0) {
        rt_set_errstr(errstr, "no data point of signature %lld at push %lld",
                      p->alert->signature_id, p->summary->push_id);
        rc = RT_ENOTFOUND;
        goto out;
    }
    free(url);
    if (asprintf(&url, "%s/api/project/%s/jobs/%lld/", w->cfg->treeherder_url,
                 p->summary->repository, t->job_id) < 0) {
        url = NULL;
        rc = RT_ENOMEM;
        goto out;
    }
    rc = get_json(w, url, &doc, &status, errstr);
    if (rc == RT_EUPSTREAM && status == 404) {
        rt_set_errstr(errstr, "Treeherder has no job %lld", t->job_id);
        rc = RT_ENOTFOUND;
    }
    if (rc != RT_OK) goto out;
    json_t *meta = json_object_get(doc, "taskcluster_metadata");
    const char *task_id = json_string_value(json_object_get(meta, "task_id"));
    if (!task_id) task_id = json_string_value(json_object_get(doc, "task_id"));
    if (!task_id || !rt_valid_task_id(task_id)) {
        rt_set_errstr(errstr, "job %lld has no Taskcluster task", t->job_id);
        rc = RT_ENOTFOUND;
        goto out;
    }
    memcpy(t->task_id, task_id, 23);
    char *body = NULL;
    size_t len = 0;
    if ((rc = rt_tc_get_task(w->http, w->cfg->taskcluster_root_url, t->task_id, &body, &len,
                             errstr)) != RT_OK)
        goto out;
    json_decref(doc);
    char reason[128] = "";
    rc = rt_taskdef_parse(body, len, (size_t)w->cfg->http_max_body_bytes, &t->def, reason);
    if (rc != RT_OK) {
        free(body);
        doc = NULL;
        rt_set_errstr(errstr, "task %s: invalid definition: %s", t->task_id, reason);
        goto out;
    }
    json_error_t error;
    doc = json_loadb(body, len, 0, &error);
    free(body);
    /* In Gecko the push's decision task is the task group of its tasks. */
    memcpy(t->decision_task_id, t->def.task_group_id, 23);
    json_t *tags = json_object_get(doc, "tags");
    t->tags = json_is_object(tags) ? json_incref(tags) : json_object();
    rc = RT_OK;
out:
    json_decref(doc);
    free(url);
    return rc;
}

/* The push's backfill action, rendered for the task and checked (common/core/trust.h).
 * RT_ENOTFOUND when the push has none; RT_EAUTH when the call is refused (*refused_code
 * and errstr say why), and then nothing is to be sent. */
static int render_backfill(perf *w, const rt_perf_pick *p, const target *t, char **hook_group,
                           char **hook_id, char **payload_text, const char **refused_code,
                           char *errstr)
{
    char *url = NULL;
    rt_http_response resp = {0};
    rt_actions *actions = NULL;
    json_t *input = NULL, *payload = NULL;
    int rc = RT_ENOMEM;
    if (asprintf(&url, "%s/api/queue/v1/task/%s/artifacts/public/actions.json",
                 w->cfg->taskcluster_root_url, t->decision_task_id) < 0) {
        url = NULL;
        goto out;
    }
    rc = rt_http_get(w->http, url, &resp);
    if (rc != RT_OK) {
        rt_set_errstr(errstr, "actions.json: %s", rt_http_errstr(w->http));
        if (rc == RT_EUPSTREAM && resp.status == 404) rc = RT_ENOTFOUND;
        goto out;
    }
    if (rt_actions_parse(resp.body, resp.len, RT_ACTIONS_MAX_BYTES, &actions, errstr) != RT_OK) {
        rc = RT_ENOTFOUND;
        goto out;
    }
    rt_tag tagv[64];
    size_t ntags = 0;
    const char *key;
    json_t *value;
    json_object_foreach(t->tags, key, value)
    {
        if (json_is_string(value) && ntags < 64)
            tagv[ntags++] = (rt_tag){key, json_string_value(value)};
    }
    const rt_action *action = NULL;
    if ((rc = rt_actions_find(actions, "backfill", tagv, ntags, &action, errstr)) != RT_OK)
        goto out;
    input = rt_actions_input("backfill", NULL, w->cfg->perf_backfill_times,
                             w->cfg->perf_backfill_depth);
    if (!input) {
        rc = RT_ENOMEM;
        goto out;
    }
    rc = rt_actions_render(actions, action, t->decision_task_id,
                           rt_action_is_task_group(action) ? NULL : t->task_id, input, &payload,
                           errstr);
    if (rc != RT_OK) goto out; /* never sent approximately */
    /* The push wrote actions.json: what it asks for is sent only if it is ours to ask. */
    rt_hook_policy policy;
    rt_hook_policy_from_config(w->cfg, &policy);
    rt_hook_call call = {
        .hook_group_id = action->hook_group_id,
        .hook_id = action->hook_id,
        .payload = payload,
        .project = t->def.project,
        .revision = t->def.revision,
        .scheduler_id = t->def.scheduler_id,
        .task_group_id = t->def.task_group_id,
        .task_id = rt_action_is_task_group(action) ? NULL : t->task_id,
        .action_name = action->name, /* "backfill", with the input it was rendered with */
        .input = input,
    };
    rt_hook_verdict verdict;
    rt_hawk_credentials creds;
    if (!t->def.project || strcmp(t->def.project, p->summary->repository) != 0) {
        *refused_code = "push";
        rt_set_errstr(errstr, "task %s is not on a push of %s (its project: %s)", t->task_id,
                      p->summary->repository, t->def.project ? t->def.project : "none");
        rc = RT_EAUTH;
    } else if (rt_hook_check(&policy, &call, &verdict) != RT_OK) {
        *refused_code = verdict.code;
        rt_set_errstr(errstr, "%s", verdict.reason);
        rc = RT_EAUTH;
    } else if (!w->cfg->dry_run && !rt_taskcluster_credentials(w->cfg, verdict.level, &creds)) {
        *refused_code = "credentials";
        rt_set_errstr(errstr, "no Taskcluster credentials for level %d (project %s)", verdict.level,
                      t->def.project);
        rc = RT_EAUTH;
    }
    if (rc != RT_OK) goto out;
    *payload_text = json_dumps(payload, JSON_COMPACT);
    *hook_group = strdup(action->hook_group_id);
    *hook_id = strdup(action->hook_id);
    if (!*payload_text || !*hook_group || !*hook_id) rc = RT_ENOMEM;
out:
    free(url);
    rt_http_response_free(&resp);
    rt_actions_free(actions);
    json_decref(input);
    json_decref(payload);
    return rc;
}

/* An alert's call starts (rt_tc_trigger_hook's record_call). */
typedef struct call_start {
    perf *w;
    long long alert_id;
} call_start;

static int record_call(void *ctx, char *errstr)
{
    call_start *c = ctx;
    int rc = rt_perf_store_attempt(c->w->pg, c->alert_id);
    if (rc != RT_OK) rt_set_errstr(errstr, "postgres: %s", rt_pg_errstr(c->w->pg));
    return rc;
}

/* Triggers the hook with the project's level's credentials: RT_OK with the action task id, or
 * an error with errstr. */
static int call_hook(perf *w, long long alert_id, const char *project, const char *hook_group,
                     const char *hook_id, const char *payload, char action_task_id[23],
                     char *errstr)
{
    rt_hawk_credentials creds;
    int level = rt_trust_project_level(&w->cfg->project_levels, project);
    if (!rt_taskcluster_credentials(w->cfg, level, &creds)) {
        rt_set_errstr(errstr, "no Taskcluster credentials for level %d (project %s)", level,
                      project ? project : "none");
        return RT_EAUTH;
    }
    call_start start = {w, alert_id};
    rt_hook_stage stage;
    long status;
    return rt_tc_trigger_hook(w->http_post, w->cfg->taskcluster_root_url, hook_group, hook_id,
                              payload, &creds, record_call, &start, action_task_id, &stage, &status,
                              errstr);
}

static int record_outcome(perf *w, const char *alert_id, const char *outcome,
                          const char *action_task_id, const char *error)
{
    return rt_perf_store_outcome(w->pg, atoll(alert_id), outcome, action_task_id, error);
}

/* Calls the hook for an alert whose intent is recorded, and records what happened. */
static void trigger(perf *w, const char *alert_text, const char *project, const char *hook_group,
                    const char *hook_id, const char *payload)
{
    char action_task_id[23] = "", errstr[RT_ERRSTR_SIZE] = "";
    int rc = call_hook(w, atoll(alert_text), project, hook_group, hook_id, payload, action_task_id,
                       errstr);
    if (rc == RT_OK) {
        if (record_outcome(w, alert_text, "triggered", action_task_id, NULL) != RT_OK) {
            rt_log_error("backfill triggered but not recorded; the next run finds its action task",
                         "alert_id", alert_text, "error", rt_pg_errstr(w->pg));
            w->failures++;
        } else {
            rt_log_info("backfill triggered", "alert_id", alert_text, "action_task_id",
                        action_task_id);
        }
        return;
    }
    /* The call may have reached Taskcluster: the next run looks for its action task. */
    w->failures++;
    rt_log_warn("backfill call failed; the next run looks again", "alert_id", alert_text, "error",
                errstr);
    if (rt_perf_store_error(w->pg, atoll(alert_text), errstr) != RT_OK)
        rt_log_warn("cannot record the error", "alert_id", alert_text);
}

/* An alert with an intent and no outcome: an interrupted call. Runs under the lock. */
static void resume(perf *w, const char *alert_text, const rt_perf_alert_row *row)
{
    long long call_ms = (long long)w->cfg->http_connect_timeout_ms + w->cfg->http_timeout_ms;
    if (row->dry_run) return; /* dry-run rows are finished at once */
    if (row->attempts > 0 && row->age_ms < call_ms) {
        rt_log_info("backfill call may still be in flight; left for the next run", "alert_id",
                    alert_text);
        return;
    }
    const char *task_id = row->task_id, *group = row->decision_task_id;
    char action_task_id[23] = "", errstr[RT_ERRSTR_SIZE] = "";
    bool found = false;
    if (rt_tc_find_action_task(w->http, w->cfg->taskcluster_root_url, group, "backfill", NULL,
                               task_id, action_task_id, &found, errstr) != RT_OK) {
        w->failures++;
        rt_log_warn("cannot look for the backfill task; left for the next run", "alert_id",
                    alert_text, "error", errstr);
        return;
    }
    if (found) {
        if (record_outcome(w, alert_text, "found-existing", action_task_id, NULL) != RT_OK)
            w->failures++;
        else
            rt_log_info("backfill task found; not calling again", "alert_id", alert_text,
                        "action_task_id", action_task_id);
        return;
    }
    trigger(w, alert_text, row->repository, row->hook_group, row->hook_id, row->payload);
}

/* The summary's advisory lock (common/store/perf.h); false when busy or on an error. */
static bool lock_summary(perf *w, long long summary_id)
{
    bool locked = false;
    return rt_perf_store_lock(w->pg, summary_id, &locked) == RT_OK && locked;
}

static void unlock_summary(perf *w, long long summary_id)
{
    if (rt_perf_store_unlock(w->pg, summary_id) != RT_OK) {
        char key[16];
        snprintf(key, sizeof key, "%d", rt_perf_store_lock_key(summary_id));
        rt_log_warn("cannot release a summary lock", "lock", key);
    }
}

typedef struct intent {
    const char *outcome; /* NULL: a call follows */
    const target *target;
    const char *hook_group, *hook_id, *payload;
    int cost; /* 0: no budget spent */
    const char *action_task_id, *error;
} intent;

/* The alert's row, its ledger entry (when it cost budget) and its summary, together. When it
 * costs budget, the backstop (common/store/ledger.h) comes first: if the family's ledger total
 * (*ledger_total) leaves less than the cost, nothing is written and *refused is set. */
static int record_alert(perf *w, const rt_perf_pick *p, const intent *in, bool close, bool *refused,
                        int *ledger_total)
{
    char alert[32], family[64];
    snprintf(alert, sizeof alert, "%lld", p->alert->id);
    perf_budget_name(w, p->family, family, sizeof family);
    bool have_job = in->target && in->target->job_id > 0;
    rt_perf_alert_record r = {
        .alert_id = p->alert->id,
        .summary_id = p->summary->id,
        .signature_id = p->alert->signature_id,
        .platform = p->alert->platform,
        .family = rt_perf_family_name(&w->opts, p->family),
        .is_regression = p->alert->is_regression,
        .amount_pct = p->alert->amount_pct,
        .job_id = have_job ? in->target->job_id : 0,
        .task_id = have_job && in->target->task_id[0] ? in->target->task_id : NULL,
        .decision_task_id =
            have_job && in->target->decision_task_id[0] ? in->target->decision_task_id : NULL,
        .hook_group = in->hook_group,
        .hook_id = in->hook_id,
        .payload = in->payload,
        .jobs_scheduled = in->cost,
        .budget_day = in->cost ? w->day : NULL,
        .dry_run = w->cfg->dry_run,
        .outcome = in->outcome,
        .action_task_id = in->action_task_id,
        .error = in->error,
        .job_key = p->alert->job_key};
    *refused = false;
    *ledger_total = 0;
    int rc = rt_pg_begin(w->pg);
    if (rc == RT_OK && in->cost) {
        int kept = 0;
        rc = rt_ledger_backstop(w->pg, family, w->day, w->opts.limit[p->family], in->cost, in->cost,
                                &kept, ledger_total);
        if (rc == RT_OK && kept < in->cost) {
            *refused = true;
            if ((rc = rt_pg_rollback(w->pg)) != RT_OK)
                rt_log_warn("rollback failed", "error", rt_pg_errstr(w->pg));
            return rc;
        }
    }
    if (rc == RT_OK) rc = rt_perf_store_upsert_summary(w->pg, p->summary, close);
    if (rc == RT_OK) rc = rt_perf_store_record_intent(w->pg, &r);
    if (rc == RT_OK && in->cost) {
        char reason[256];
        snprintf(reason, sizeof reason, "perf backfill of alert %lld (summary %lld, %s)",
                 p->alert->id, p->summary->id, p->alert->platform);
        rc = rt_perf_store_ledger(w->pg, family, w->day, in->cost, p->alert->id, reason);
    }
    if (rc == RT_OK) rc = rt_pg_commit(w->pg);
    if (rc != RT_OK) {
        rt_log_warn("cannot record the alert", "alert_id", alert, "error", rt_pg_errstr(w->pg));
        if (rt_pg_rollback(w->pg) != RT_OK)
            rt_log_warn("rollback failed", "error", rt_pg_errstr(w->pg));
    }
    return rc;
}

/* Records an alert that needs no call (and spends no budget). */
static void finish_without_call(perf *w, const rt_perf_pick *p, const target *t,
                                const char *outcome, const char *action_task_id, const char *why,
                                bool close)
{
    intent in = {.outcome = outcome, .target = t, .action_task_id = action_task_id, .error = why};
    char alert[32];
    bool refused = false; /* never: no budget is spent */
    int ledger = 0;
    snprintf(alert, sizeof alert, "%lld", p->alert->id);
    if (record_alert(w, p, &in, close, &refused, &ledger) != RT_OK)
        w->failures++;
    else
        rt_log_info("alert handled without a backfill", "alert_id", alert, "outcome", outcome,
                    "reason", why ? why : "");
}

/* The backstop refused a claim Redis granted (the family's ledger total, `ledger`, leaves
 * less than the cost): the claim goes back to the Redis counter, which is raised to the
 * ledger total, and the alert's dedupe key goes, so the alert is left for a later run as when
 * Redis itself finds the family out of budget. A claim found (EXISTS) is given back under the
 * name of the runner that made it, which the dedupe key records. A give-back that fails
 * leaves the dedupe key: the next run meets the backstop again and gives the claim back then. */
static void give_back_claim(perf *w, const rt_claim_request *claimed, const char *dedupe,
                            const rt_claim *claim, const char *alert, int ledger)
{
    rt_claim_request req = *claimed;
    if (claim->status == RT_CLAIM_EXISTS) req.task_id = claim->owner_task_id;
    char cost[16], total[16];
    snprintf(cost, sizeof cost, "%d", claim->spent);
    snprintf(total, sizeof total, "%d", ledger);
    rt_log_warn("budget backstop: the ledger leaves less than Redis granted", "alert_id", alert,
                "family", req.platform, "day", req.day, "claimed", cost, "kept", "0", "ledger",
                total);
    if (rt_budget_settle_keyed(w->redis, &req, dedupe, claim->spent, 0, ledger, NULL) != RT_OK) {
        w->failures++;
        rt_log_warn("redis: cannot give the budget back; alert left for the next run", "alert_id",
                    alert, "error", rt_redis_errstr(w->redis));
        return;
    }
    rt_log_info("family out of budget; alert left for a later run", "alert_id", alert, "family",
                req.platform);
}

/* Whether the summary is done meanwhile: handled, or as many jobs taken as it may have. */
static int summary_done(perf *w, long long summary_id, bool *done)
{
    rt_perf_summary_state st;
    int rc = rt_perf_store_summary_state(w->pg, summary_id, &st);
    *done = rc == RT_OK && st.found && (st.handled || st.taken >= w->opts.max_per_summary);
    return rc;
}

/* How a step of backfill ended: go on, the alert is finished for this run, or it is left
 * for the next run because an upstream or Postgres call failed (errstr says why). */
typedef enum { STEP_GO, STEP_DONE, STEP_UPSTREAM, STEP_STORAGE } step;

/* Under the summary's lock, what another runner did until a moment ago counts: an alert
 * already recorded is finished (or resumed when its hook call was interrupted), a summary
 * handled meanwhile skips it. */
static step still_open(perf *w, const rt_perf_pick *p, const char *alert)
{
    rt_perf_alert_row row;
    bool found = false;
    if (rt_perf_store_alert(w->pg, p->alert->id, &row, &found) != RT_OK) return STEP_STORAGE;
    if (found) {
        if (!row.finished) resume(w, alert, &row);
        rt_perf_alert_row_free(&row);
        return STEP_DONE;
    }
    bool done = false;
    if (summary_done(w, p->summary->id, &done) != RT_OK) return STEP_STORAGE;
    if (done) rt_log_info("summary done meanwhile; alert skipped", "alert_id", alert);
    return done ? STEP_DONE : STEP_GO;
}

/* The job to backfill, no backfill action task already made for it, and the hook call
 * rendered from its push's actions.json (hook_group, hook_id, payload: the caller frees
 * them). An alert with nothing to call is finished here with its outcome. */
static step prepare(perf *w, const rt_perf_pick *p, const char *alert, target *t, char **hook_group,
                    char **hook_id, char **payload, char *errstr)
{
    int rc = find_target(w, p, t, errstr);
    if (rc == RT_ENOTFOUND) {
        finish_without_call(w, p, t, "no-job", NULL, errstr, false);
        return STEP_DONE;
    }
    if (rc != RT_OK) return STEP_UPSTREAM;
    char existing[23] = "";
    bool found = false;
    if (rt_tc_find_action_task(w->http, w->cfg->taskcluster_root_url, t->decision_task_id,
                               "backfill", NULL, t->task_id, existing, &found, errstr) != RT_OK)
        return STEP_UPSTREAM;
    if (found) {
        finish_without_call(w, p, t, "already-backfilled", existing, NULL, p->closes_summary);
        return STEP_DONE;
    }
    const char *refused_code = NULL;
    rc = render_backfill(w, p, t, hook_group, hook_id, payload, &refused_code, errstr);
    if (rc == RT_ENOTFOUND) {
        finish_without_call(w, p, t, "no-backfill-action", NULL, errstr, false);
        return STEP_DONE;
    }
    if (rc == RT_EAUTH) {
        rt_metric_inc(rt_metrics_std()->hooks_refused, "perf", refused_code);
        rt_log_warn("backfill hook call refused; not sent", "alert_id", alert, "task_id",
                    t->task_id, "reason", errstr);
        finish_without_call(w, p, t, "refused-hook", NULL, errstr, false);
        return STEP_DONE;
    }
    return rc == RT_OK ? STEP_GO : STEP_UPSTREAM;
}

/* The family's budget claimed in Redis (under the alert's dedupe key) and the intent
 * recorded with its ledger row, the backstop. STEP_GO: the hook is to be called. A claim
 * the intent could not be recorded for is refunded; one the backstop refused is given back
 * (give_back_claim). */
static step claim_and_record(perf *w, const rt_perf_pick *p, const char *alert, const target *t,
                             char *hook_group, char *hook_id, char *payload)
{
    char family[64], dedupe[64];
    perf_budget_name(w, p->family, family, sizeof family);
    int ledger = 0;
    if (rt_ledger_spent(w->pg, family, w->day, &ledger) != RT_OK) return STEP_STORAGE;
    rt_claim_request req = {.key_prefix = w->cfg->redis_key_prefix,
                            .platform = family,
                            .task_id = w->owner,
                            .day = w->day,
                            .wanted = w->opts.cost,
                            .minimum = w->opts.cost,
                            .limit = w->opts.limit[p->family],
                            .ledger_spent = ledger};
    snprintf(dedupe, sizeof dedupe, "perf-alert:%s", alert);
    rt_claim claim;
    if (rt_budget_claim_keyed(w->redis, &req, dedupe, &claim) != RT_OK) {
        w->failures++;
        rt_log_warn("redis: cannot claim budget; alert left for the next run", "alert_id", alert,
                    "error", rt_redis_errstr(w->redis));
        return STEP_DONE;
    }
    if (claim.status == RT_CLAIM_EXHAUSTED) {
        rt_log_info("family out of budget; alert left for a later run", "alert_id", alert, "family",
                    family);
        return STEP_DONE;
    }
    /* EXISTS: a runner claimed and died before recording; its spend is this alert's. */
    intent in = {.outcome = w->cfg->dry_run ? "dry-run" : NULL,
                 .target = t,
                 .hook_group = hook_group,
                 .hook_id = hook_id,
                 .payload = payload,
                 .cost = claim.spent};
    bool refused = false;
    if (record_alert(w, p, &in, p->closes_summary, &refused, &ledger) != RT_OK) {
        w->failures++;
        if (claim.status == RT_CLAIM_CLAIMED &&
            rt_budget_refund(w->redis, w->cfg->redis_key_prefix, family, w->day, claim.spent) !=
                RT_OK)
            rt_log_warn("cannot give the budget back", "alert_id", alert);
        return STEP_DONE;
    }
    if (refused) {
        give_back_claim(w, &req, dedupe, &claim, alert, ledger);
        return STEP_DONE;
    }
    if (w->cfg->dry_run) {
        rt_log_info("dry run: backfill not sent", "alert_id", alert, "task_id", t->task_id,
                    "hook_id", hook_id);
        return STEP_DONE;
    }
    return STEP_GO;
}

void perf_backfill(perf *w, const rt_perf_pick *p)
{
    char alert[32], errstr[RT_ERRSTR_SIZE] = "";
    snprintf(alert, sizeof alert, "%lld", p->alert->id);
    if (!lock_summary(w, p->summary->id)) {
        rt_log_info("summary busy with another runner; skipped", "alert_id", alert);
        return;
    }
    target t = {0};
    char *hook_group = NULL, *hook_id = NULL, *payload = NULL;
    step r = still_open(w, p, alert);
    if (r == STEP_GO) r = prepare(w, p, alert, &t, &hook_group, &hook_id, &payload, errstr);
    if (r == STEP_GO) r = claim_and_record(w, p, alert, &t, hook_group, hook_id, payload);
    if (r == STEP_GO) trigger(w, alert, t.def.project, hook_group, hook_id, payload);
    if (r == STEP_UPSTREAM || r == STEP_STORAGE) {
        w->failures++;
        rt_log_warn(r == STEP_UPSTREAM ? "upstream error; alert left for the next run"
                                       : "postgres error; alert left for the next run",
                    "alert_id", alert, "error", r == STEP_UPSTREAM ? errstr : rt_pg_errstr(w->pg));
    }
    unlock_summary(w, p->summary->id);
    json_decref(t.tags);
    rt_taskdef_free(&t.def);
    free(hook_group);
    free(hook_id);
    free(payload);
}

int perf_resume_open(perf *w)
{
    rt_perf_open_alert *open = NULL;
    size_t n = 0;
    int rc = rt_perf_store_open_alerts(w->pg, &open, &n);
    if (rc != RT_OK) return rc;
    for (size_t i = 0; i < n && !rt_stop_requested(); i++) {
        char alert[32];
        snprintf(alert, sizeof alert, "%lld", open[i].alert_id);
        if (!lock_summary(w, open[i].summary_id)) continue;
        rt_perf_alert_row row;
        bool found = false;
        if (rt_perf_store_alert(w->pg, open[i].alert_id, &row, &found) == RT_OK && found) {
            if (!row.finished) resume(w, alert, &row);
            rt_perf_alert_row_free(&row);
        }
        unlock_summary(w, open[i].summary_id);
    }
    free(open);
    return RT_OK;
}
