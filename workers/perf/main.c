/* SPDX-License-Identifier: MPL-2.0 */
/* main.c - retrig-perf: backfills of Perfherder alerts within daily per-family budgets.
 *
 * Every perf_interval_s (or once with --once): read every page of alert summaries of the
 * configured frameworks (a Perfherder error or an unreadable page ends the run before
 * anything is done), pick alerts (common/core/perf_pick.h) against what Postgres says was
 * handled and what the budgets say is left, then for each pick, under a per-summary
 * advisory lock (released by Postgres if this process dies; a second runner skips the
 * summary): check again what Postgres holds, find the alert's job (Perfherder's data
 * point of its series at its push, then the job's task), look in the push's task group
 * for a backfill of that task already there ("already-backfilled"), render the push's
 * `backfill` action, claim the family's budget in Redis (atomic, deduped by alert), and
 * write the intent, the ledger entry and the summary in one transaction, which first
 * checks the family's ledger total under the budget backstop's lock (common/store/ledger.h: a
 * Redis counter re-created below the ledger cannot push it past the limit; a refused claim
 * goes back to Redis and the alert is left for a later run); only then call the hook
 * (Hawk). Alerts whose call was interrupted are resumed first: the action task is looked up
 * in the task group before any new call. Dry-run records the payload and sends nothing.
 * Each run starts with the follow-up of earlier backfills (followup.h): their action task
 * and spawned jobs, failures recorded with a reason. What Postgres holds of summaries and
 * alerts is read and written through common/store/perf.h. Single-threaded. */
#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/core/actions.h"
#include "common/core/hawk.h"
#include "common/core/ids.h"
#include "common/core/perf_pick.h"
#include "common/core/taskdef.h"
#include "common/core/trust.h"
#include "common/io/budget.h"
#include "common/io/http.h"
#include "common/io/metrics.h"
#include "common/io/pg.h"
#include "common/io/redis.h"
#include "common/io/stop.h"
#include "common/io/upstream.h"
#include "common/options.h"
#include "common/policy.h"
#include "common/store/ledger.h"
#include "common/store/perf.h"
#include "common/worker.h"
#include "workers/perf/followup.h"

#define MAX_PAGES 100

static bool g_once;

typedef struct perf {
    rt_config *cfg;
    rt_perf_options opts;
    rt_worker_conns conns;
    rt_pg *pg;           /* conns.pg */
    rt_redis *redis;     /* conns.redis */
    rt_http *http;       /* GETs, with retries */
    rt_http *http_post;  /* the hook call: one attempt */
    char day[11];        /* the UTC day whose budget this run spends */
    char owner[96];      /* who claims budget: host:pid */
    int failures;        /* alerts left with an error this run */
    rt_metric *left_out; /* retrig_perf_left_out_total{what} */
} perf;

static void utc_day(time_t now, char day[11])
{
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(day, 11, "%Y-%m-%d", &tm);
}

/* "perf:<family>": the budget's name in Redis and in the ledger. */
static void budget_name(const perf *w, size_t family, char *out, size_t size)
{
    snprintf(out, size, "perf:%s", rt_perf_family_name(&w->opts, family));
}

/* ---- reading Perfherder ------------------------------------------------------------- */

/* Every page of one framework's summaries, newest first, until older than the lookback. */
static int fetch_framework(perf *w, const char *framework, time_t oldest, rt_perf_summaries *out)
{
    char *url = NULL;
    if (asprintf(&url, "%s/api/performance/alertsummary/?framework=%s", w->cfg->treeherder_url,
                 framework) < 0)
        return RT_ENOMEM;
    int rc = RT_OK;
    for (int page = 0; url && page < MAX_PAGES; page++) {
        rt_http_response resp;
        rc = rt_http_get(w->http, url, &resp);
        if (rc != RT_OK) {
            rt_log_error("cannot read alert summaries; nothing is done this run", "framework",
                         framework, "error", rt_http_errstr(w->http));
            rt_http_response_free(&resp);
            break;
        }
        char errstr[RT_ERRSTR_SIZE] = "", *next = NULL;
        size_t before = out->count, problems_before = out->nproblems;
        rc = rt_perf_summaries_parse(resp.body, resp.len, out, &next, errstr);
        /* A summary or an alert Perfherder sent malformed is left out, the rest is picked. */
        for (size_t i = problems_before; rc == RT_OK && i < out->nproblems; i++) {
            const rt_perf_problem *p = &out->problems[i];
            char sid[32], aid[32];
            snprintf(sid, sizeof sid, "%lld", p->summary_id);
            snprintf(aid, sizeof aid, "%lld", p->alert_id);
            rt_log_warn(
                p->alert_id ? "malformed alert left out" : "malformed alert summary left out",
                "summary_id", sid, "alert_id", p->alert_id ? aid : NULL, "reason", p->reason);
            rt_metric_inc(w->left_out, p->alert_id ? "alert" : "summary");
        }
        rt_http_response_free(&resp);
        if (rc != RT_OK) {
            rt_log_error("unusable alert summary page; nothing is done this run", "framework",
                         framework, "error", errstr);
            break;
        }
        bool older = false;
        for (size_t i = before; i < out->count; i++)
            if (out->items[i].created < oldest) older = true;
        free(url);
        url = NULL;
        /* Pages come from Perfherder itself: a next URL elsewhere is not followed. */
        if (next && strncmp(next, w->cfg->treeherder_url, strlen(w->cfg->treeherder_url)) != 0) {
            rt_log_error("alert summary page points elsewhere; nothing is done this run", "next",
                         next);
            free(next);
            rc = RT_EPROTO;
            break;
        }
        if (older)
            free(next);
        else
            url = next;
    }
    free(url);
    return rc;
}

/* What earlier runs did for the summaries read (common/store/perf.h). */
static int load_history(perf *w, const rt_perf_summaries *s, rt_perf_store_history *h)
{
    long long *ids = calloc(s->count + 1, sizeof *ids);
    if (!ids) return RT_ENOMEM;
    for (size_t i = 0; i < s->count; i++) ids[i] = s->items[i].id;
    int rc = rt_perf_store_history_load(w->pg, ids, s->count, h);
    free(ids);
    return rc;
}

/* An alert whose job another backfill covers: its row, outcome covered, no budget. */
static int record_covered(perf *w, const rt_perf_cover *c)
{
    char alert[32], summary[32];
    snprintf(alert, sizeof alert, "%lld", c->alert->id);
    snprintf(summary, sizeof summary, "%lld", c->summary->id);
    rt_perf_alert_record r = {
        .alert_id = c->alert->id,
        .summary_id = c->summary->id,
        .signature_id = c->alert->signature_id,
        .platform = c->alert->platform,
        .family = rt_perf_family_name(&w->opts, rt_perf_family_of(&w->opts, c->alert->platform)),
        .is_regression = c->alert->is_regression,
        .amount_pct = c->alert->amount_pct,
        .dry_run = w->cfg->dry_run,
        .outcome = "covered",
        .error = c->reason,
        .job_key = c->alert->job_key,
        .covered_by = c->by_alert_id};
    int rc = rt_pg_begin(w->pg);
    if (rc == RT_OK) rc = rt_perf_store_upsert_summary(w->pg, c->summary, false);
    if (rc == RT_OK) rc = rt_perf_store_record_covered(w->pg, &r);
    if (rc == RT_OK) rc = rt_pg_commit(w->pg);
    if (rc != RT_OK) {
        rt_log_warn("cannot record a covered alert", "alert_id", alert, "error",
                    rt_pg_errstr(w->pg));
        if (rt_pg_rollback(w->pg) != RT_OK)
            rt_log_warn("rollback failed", "error", rt_pg_errstr(w->pg));
        return rc;
    }
    rt_log_info("alert covered by another backfill of its job", "alert_id", alert, "summary_id",
                summary, "reason", c->reason);
    return RT_OK;
}

/* What each family spent today: the larger of the Redis counter and the ledger. */
static int load_budgets(perf *w)
{
    for (size_t f = 0; f <= w->opts.nfamilies; f++) {
        char name[64];
        budget_name(w, f, name, sizeof name);
        int counter = 0,
            rc = rt_budget_spent(w->redis, w->cfg->redis_key_prefix, name, w->day, &counter);
        if (rc != RT_OK) return rc;
        int ledger = 0;
        if ((rc = rt_ledger_spent(w->pg, name, w->day, &ledger)) != RT_OK) return rc;
        w->opts.used[f] = counter > ledger ? counter : ledger;
    }
    return RT_OK;
}

/* ---- one alert -------------------------------------------------------------------- */

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
    budget_name(w, p->family, family, sizeof family);
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
    budget_name(w, p->family, family, sizeof family);
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

/* One picked alert: under its summary's lock, still open, prepared, claimed and recorded,
 * then the backfill hook called. */
static void backfill(perf *w, const rt_perf_pick *p)
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

/* Alerts whose hook call was interrupted in an earlier run. */
static int resume_open(perf *w)
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

/* ---- a run -------------------------------------------------------------------------- */

static int run_once(perf *w)
{
    time_t now = time(NULL);
    utc_day(now, w->day);
    w->failures = 0;
    rt_perf_summaries summaries = {0};
    rt_perf_store_history h = {0};
    rt_perf_result result = {0};
    /* First the backfills of earlier runs: what became of their action tasks and jobs. */
    int settled = 0, rc = rt_perf_followup(w->cfg, w->pg, w->http, &settled);
    if (rc != RT_OK) {
        rt_log_error("postgres error in the follow-up; nothing is done this run", "error",
                     rt_pg_errstr(w->pg));
        goto out;
    }
    for (size_t i = 0; i < w->cfg->perf_frameworks.count && rc == RT_OK; i++)
        rc = fetch_framework(w, w->cfg->perf_frameworks.items[i],
                             now - (time_t)w->cfg->perf_lookback_hours * 3600, &summaries);
    if (rc != RT_OK) goto out;
    /* Older than the lookback: not ours to look at any more. */
    size_t kept = 0;
    for (size_t i = 0; i < summaries.count; i++) {
        if (summaries.items[i].created >= now - (time_t)w->cfg->perf_lookback_hours * 3600)
            summaries.items[kept++] = summaries.items[i];
        else
            free(summaries.items[i].alerts);
    }
    summaries.count = kept;
    if ((rc = resume_open(w)) != RT_OK || (rc = load_history(w, &summaries, &h)) != RT_OK) {
        rt_log_error("postgres error; nothing is done this run", "error", rt_pg_errstr(w->pg));
        goto out;
    }
    if ((rc = load_budgets(w)) != RT_OK) {
        rt_log_error("cannot read the budgets; nothing is done this run", "error",
                     rt_redis_errstr(w->redis));
        goto out;
    }
    rt_perf_history hist = {h.alerts, h.nalerts, h.taken, h.ntaken, h.jobs, h.njobs};
    if ((rc = rt_perf_pick_alerts(&summaries, &w->opts, &hist, now, &result)) != RT_OK) goto out;
    char counts[64];
    snprintf(counts, sizeof counts, "%zu summaries, %zu picks", summaries.count, result.npicks);
    rt_log_info("alerts picked", "counts", counts, "day", w->day);
    for (size_t i = 0; i < result.nclosed; i++) {
        if (rt_perf_store_upsert_summary(w->pg, result.closed[i], true) != RT_OK) {
            w->failures++;
            rt_log_warn("cannot mark a summary handled", "error", rt_pg_errstr(w->pg));
        }
    }
    for (size_t i = 0; i < result.npicks && !rt_stop_requested(); i++) {
        /* Between two alerts: readiness only (the picks were made with the running options). */
        rt_worker_health(&w->conns);
        backfill(w, &result.picks[i]);
    }
    /* Covered alerts are recorded after the picks, so a covering alert's row exists. */
    for (size_t i = 0; i < result.ncovered && !rt_stop_requested(); i++)
        if (record_covered(w, &result.covered[i]) != RT_OK) w->failures++;
out:
    rt_perf_result_free(&result);
    rt_perf_summaries_free(&summaries);
    rt_perf_store_history_free(&h);
    if (rc == RT_OK && w->failures) {
        char n[16];
        snprintf(n, sizeof n, "%d", w->failures);
        rt_log_warn("run finished with alerts left for the next run", "failures", n);
    }
    return rc != RT_OK || w->failures ? 1 : 0;
}

static int setup(perf *w, rt_config *cfg)
{
    char errstr[RT_ERRSTR_SIZE] = "";
    int rc;
    w->cfg = cfg;
    w->left_out = rt_metrics_counter("retrig_perf_left_out_total",
                                     "Malformed alert summaries and alerts Perfherder sent, left "
                                     "out of the picking (what: summary, alert)",
                                     "what");
    if ((rc = rt_perf_options_from_config(&w->opts, cfg, errstr)) != RT_OK) {
        rt_log_error("configuration error", "error", errstr);
        return rc;
    }
    char host[64] = "";
    gethostname(host, sizeof host - 1);
    snprintf(w->owner, sizeof w->owner, "%s:%d", host, (int)getpid());
    if (rt_worker_needs_taskcluster(cfg)) return RT_ECONFIG;
    rt_http_options hopts;
    rt_http_options_from_config(&hopts, cfg);
    if ((rc = rt_http_new(&w->http, &hopts, errstr)) != RT_OK) return rc;
    hopts.max_attempts = 1;
    if ((rc = rt_http_new(&w->http_post, &hopts, errstr)) != RT_OK) return rc;
    rt_worker_setup connect = {"perf", RT_WORKER_NEEDS_POSTGRES, 0, 1, NULL,
                               NULL,   &rt_worker_redis};
    if ((rc = rt_worker_connect(cfg, &connect, &w->conns)) != RT_OK) return rc;
    w->redis = w->conns.redis;
    w->pg = w->conns.pg;
    return RT_OK;
}

/* Between runs: report readiness (no broker here) and apply a SIGHUP. No perf_* key is
 * reloadable, but the options are derived again from the reloaded configuration so that
 * nothing computed from cfg outlives a reload; a failure keeps the running options. */
static void safe_point(perf *w)
{
    rt_worker_health(&w->conns);
    if (!rt_worker_reload(w->cfg)) return;
    rt_perf_options opts;
    char errstr[RT_ERRSTR_SIZE] = "";
    if (rt_perf_options_from_config(&opts, w->cfg, errstr) != RT_OK) {
        rt_log_error("reloaded configuration: keeping the running perf options", "error", errstr);
        return;
    }
    w->opts = opts; /* used[] is read again from the budgets at the start of each run */
}

static int run(rt_config *cfg)
{
    perf w = {0};
    int rc = setup(&w, cfg);
    int status = rt_worker_exit_status(rc);
    if (rc == RT_OK) {
        rt_log_info(g_once ? "running once" : "running", "dry_run",
                    cfg->dry_run ? "true" : "false");
        for (;;) {
            safe_point(&w);
            status = run_once(&w);
            if (g_once || rt_stop_requested()) break;
            /* Until the next run: a safe point each second, and SIGTERM ends the wait. */
            for (int s = 0; s < cfg->perf_interval_s && rt_stop_sleep_ms(1000); s++) safe_point(&w);
            if (rt_stop_requested()) {
                status = 0;
                break;
            }
        }
        rt_log_info("stopping");
    }
    rt_worker_disconnect(&w.conns);
    rt_http_free(w.http);
    rt_http_free(w.http_post);
    return status;
}

static int check(rt_config *cfg)
{
    char errstr[RT_ERRSTR_SIZE] = "";
    rt_perf_options opts;
    if (rt_perf_options_from_config(&opts, cfg, errstr) != RT_OK) {
        rt_log_error("configuration error", "error", errstr);
        return 2;
    }
    int failures =
        rt_worker_check_services(cfg, "perf", RT_WORKER_NEEDS_POSTGRES, &rt_worker_redis);
    failures += rt_worker_needs_taskcluster(cfg);
    return rt_worker_check_result(failures);
}

int main(int argc, char **argv)
{
    static const rt_worker_def def = {
        "perf",
        "Every perf_interval_s, backfills Perfherder alerts (the push's backfill action, Hawk)\n"
        "in priority order within daily per-platform-family budgets, each alert at most once.",
        run,
        check,
    };
    static const rt_worker_flag flags[] = {
        {"once", "run once and exit (cron, Kubernetes CronJob); exit 1 if anything failed",
         &g_once},
    };
    return rt_worker_main_flags(&def, flags, 1, argc, argv);
}
