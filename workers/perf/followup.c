/* SPDX-License-Identifier: MPL-2.0 */
/* followup.c - retrig-perf's follow-up of triggered backfills: the action task, the jobs
 * it spawned (extra.parent or tags.created-by = the action task, in its task group), and
 * whether they produced Perfherder data. See followup.h for the states and reasons. */
#include "workers/perf/followup.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ids.h"
#include "common/log.h"
#include "common/upstream.h"

#define MAX_ALERTS_PER_RUN 500
#define MAX_DATA_JOBS      20 /* completed jobs whose Perfherder data is looked at */

static const char SQL_TO_FOLLOW[] =
    "SELECT a.alert_id, a.action_task_id, a.signature_id, s.repository,"
    " coalesce(a.finished_at, a.intent_at) < now() - make_interval(hours => $1::integer)"
    " FROM perf_alerts a JOIN perf_summaries s ON s.summary_id = a.summary_id"
    " WHERE a.outcome IN ('triggered', 'found-existing') AND a.action_task_id IS NOT NULL"
    " AND NOT a.dry_run AND (a.followup_state IS NULL OR a.followup_state = 'pending')"
    " ORDER BY coalesce(a.finished_at, a.intent_at) LIMIT 500";
static const char SQL_RECORD[] =
    "UPDATE perf_alerts SET followup_state = $2, followup_reason = $3, followup_detail = $4,"
    " followup_jobs = $5::integer, followup_completed = $6::integer, followup_checked_at = now(),"
    " followup_settled_at = CASE WHEN $2 = 'pending' THEN NULL ELSE now() END"
    " WHERE alert_id = $1::bigint AND (followup_state IS NULL OR followup_state = 'pending')";

typedef struct followed {
    const char *alert_id;
    const char *action_task_id;
    long long signature_id;
    const char *repository;
    bool expired; /* the follow-up window has passed */
} followed;

typedef struct verdict {
    const char *state;  /* pending, done, failed */
    const char *reason; /* NULL unless failed */
    char detail[256];
    int jobs;
    int completed;
} verdict;

typedef struct spawned {
    int total, completed, failed, exception, deadline, unresolved;
    char completed_ids[MAX_DATA_JOBS][23];
    int ncompleted_ids;
    char first_bad[23]; /* a failed or exception job, for the detail */
} spawned;

static void set(verdict *v, const char *state, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void set(verdict *v, const char *state, const char *reason, const char *fmt, ...)
{
    v->state = state;
    v->reason = reason;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->detail, sizeof v->detail, fmt, ap);
    va_end(ap);
}

/* GET a JSON document; *status receives the HTTP status of a failure (0 when none). */
static int get_json(rt_http *http, const char *url, json_t **out, long *status, char *errstr)
{
    rt_http_response resp;
    int rc = rt_http_get(http, url, &resp);
    *status = rc == RT_OK ? 0 : resp.status;
    *out = NULL;
    if (rc != RT_OK) {
        rt_set_errstr(errstr, "%s", rt_http_errstr(http));
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

static bool unresolved(const char *state)
{
    return !strcmp(state, "unscheduled") || !strcmp(state, "pending") || !strcmp(state, "running");
}

/* The reasonResolved of a status's last run ("" when none). */
static const char *last_reason(json_t *status)
{
    json_t *runs = json_object_get(status, "runs");
    size_t n = json_array_size(runs);
    const char *r =
        n ? json_string_value(json_object_get(json_array_get(runs, n - 1), "reasonResolved"))
          : NULL;
    return r ? r : "";
}

static bool spawned_by(json_t *task, const char *action_task_id)
{
    const char *parent =
        json_string_value(json_object_get(json_object_get(task, "extra"), "parent"));
    const char *by =
        json_string_value(json_object_get(json_object_get(task, "tags"), "created-by"));
    return (parent && !strcmp(parent, action_task_id)) || (by && !strcmp(by, action_task_id));
}

/* The tasks of the group the action task spawned, and their states. */
static int list_spawned(const rt_config *cfg, rt_http *http, const char *group,
                        const char *action_task_id, spawned *s, char *errstr)
{
    char *token = NULL;
    int rc = RT_OK;
    for (int page = 0; page < RT_TC_MAX_GROUP_PAGES; page++) {
        char *escaped = token ? rt_http_url_escape(token) : NULL, *url = NULL;
        if ((token && !escaped) ||
            asprintf(&url, "%s/api/queue/v1/task-group/%s/list%s%s", cfg->taskcluster_root_url,
                     group, escaped ? "?continuationToken=" : "", escaped ? escaped : "") < 0) {
            free(escaped);
            rc = RT_ENOMEM;
            break;
        }
        free(escaped);
        json_t *doc = NULL;
        long status = 0;
        rc = get_json(http, url, &doc, &status, errstr);
        free(url);
        if (rc != RT_OK) {
            if (status == 404) rc = RT_OK; /* no group: nothing spawned */
            break;
        }
        size_t i;
        json_t *entry;
        json_array_foreach(json_object_get(doc, "tasks"), i, entry)
        {
            json_t *st = json_object_get(entry, "status");
            const char *id = json_string_value(json_object_get(st, "taskId"));
            const char *state = json_string_value(json_object_get(st, "state"));
            if (!id || !rt_valid_task_id(id) || !state ||
                !spawned_by(json_object_get(entry, "task"), action_task_id))
                continue;
            s->total++;
            if (unresolved(state)) {
                s->unresolved++;
            } else if (!strcmp(state, "completed")) {
                s->completed++;
                if (s->ncompleted_ids < MAX_DATA_JOBS)
                    memcpy(s->completed_ids[s->ncompleted_ids++], id, 23);
            } else {
                if (!strcmp(state, "failed"))
                    s->failed++;
                else if (!strcmp(last_reason(st), "deadline-exceeded"))
                    s->deadline++;
                else
                    s->exception++;
                if (!s->first_bad[0]) memcpy(s->first_bad, id, 23);
            }
        }
        free(token);
        token = NULL;
        const char *next = json_string_value(json_object_get(doc, "continuationToken"));
        if (next && *next && strlen(next) < 300) token = strdup(next);
        json_decref(doc);
        if (!token) break;
    }
    free(token);
    return rc;
}

/* Did any of the completed jobs give Perfherder a data point of the alert's series?
 * *waiting is true while a job is not in Treeherder or its logs are not parsed yet. */
static int produced_data(const rt_config *cfg, rt_http *http, const followed *f, const spawned *s,
                         bool *found, bool *waiting, char *errstr)
{
    *found = *waiting = false;
    long job_ids[MAX_DATA_JOBS];
    int njobs = 0, rc = RT_OK;
    for (int i = 0; i < s->ncompleted_ids; i++) {
        rt_th_job job;
        bool known = false;
        if ((rc = rt_th_job_for_task(http, cfg->treeherder_url, s->completed_ids[i], 0, &job,
                                     &known, errstr)) != RT_OK)
            return rc;
        if (!known) {
            *waiting = true;
            continue;
        }
        rt_th_logs logs;
        if ((rc = rt_th_job_logs(http, cfg->treeherder_url, f->repository, job.id, &logs,
                                 errstr)) != RT_OK)
            return rc;
        if (logs.pending > 0) *waiting = true;
        job_ids[njobs++] = job.id;
    }
    if (!njobs) return RT_OK;
    char *project = rt_http_url_escape(f->repository);
    size_t size =
        256 + strlen(cfg->treeherder_url) + (project ? strlen(project) : 0) + (size_t)njobs * 32;
    char *url = malloc(size);
    if (!project || !url) {
        free(project);
        free(url);
        return RT_ENOMEM;
    }
    size_t n = (size_t)snprintf(url, size, "%s/api/project/%s/performance/data/?signature_id=%lld",
                                cfg->treeherder_url, project, f->signature_id);
    for (int i = 0; i < njobs; i++)
        n += (size_t)snprintf(url + n, size - n, "&job_id=%ld", job_ids[i]);
    free(project);
    json_t *doc = NULL;
    long status = 0;
    rc = get_json(http, url, &doc, &status, errstr);
    free(url);
    if (rc != RT_OK) return rc;
    const char *key;
    json_t *series;
    json_object_foreach(doc, key, series)
    {
        size_t i;
        json_t *d;
        json_array_foreach(series, i, d)
        {
            if (json_integer_value(json_object_get(d, "signature_id")) != f->signature_id) continue;
            long long job = json_integer_value(json_object_get(d, "job_id"));
            for (int k = 0; k < njobs; k++)
                if (job == job_ids[k]) *found = true;
        }
    }
    json_decref(doc);
    return RT_OK;
}

/* What became of one backfill. RT_OK with v filled, or an upstream error (left pending). */
static int assess(const rt_config *cfg, rt_http *http, const followed *f, verdict *v, char *errstr)
{
    int window = cfg->perf_followup_window_hours;
    char *url = NULL;
    if (!rt_valid_task_id(f->action_task_id)) {
        set(v, "failed", "action-failed", "invalid action task id");
        return RT_OK;
    }
    if (asprintf(&url, "%s/api/queue/v1/task/%s/status", cfg->taskcluster_root_url,
                 f->action_task_id) < 0)
        return RT_ENOMEM;
    json_t *doc = NULL;
    long http_status = 0;
    int rc = get_json(http, url, &doc, &http_status, errstr);
    free(url);
    if (rc != RT_OK && http_status == 404) {
        if (f->expired)
            set(v, "failed", "action-failed", "action task %s not found in the queue",
                f->action_task_id);
        else
            set(v, "pending", NULL, "action task %s not in the queue yet", f->action_task_id);
        return RT_OK;
    }
    if (rc != RT_OK) return rc;
    json_t *status = json_object_get(doc, "status");
    const char *state = json_string_value(json_object_get(status, "state"));
    const char *group = json_string_value(json_object_get(status, "taskGroupId"));
    if (!state || !group || !rt_valid_task_id(group)) {
        rt_set_errstr(errstr, "action task status without state or taskGroupId");
        json_decref(doc);
        return RT_EPROTO;
    }
    if (unresolved(state)) {
        if (f->expired)
            set(v, "failed", "deadline-exceeded", "action task still %s after %d h", state, window);
        else
            set(v, "pending", NULL, "action task %s", state);
    } else if (!strcmp(state, "failed")) {
        set(v, "failed", "action-failed", "action task %s failed", f->action_task_id);
    } else if (!strcmp(state, "exception")) {
        const char *why = last_reason(status);
        if (!strcmp(why, "deadline-exceeded"))
            set(v, "failed", "deadline-exceeded", "action task %s: deadline-exceeded",
                f->action_task_id);
        else
            set(v, "failed", "action-failed", "action task %s: exception (%s)", f->action_task_id,
                why[0] ? why : "no reason");
    } else if (strcmp(state, "completed") != 0) {
        rt_set_errstr(errstr, "action task in unknown state %s", state);
        rc = RT_EPROTO;
    } else {
        spawned s = {0};
        char group_id[23];
        memcpy(group_id, group, 23);
        json_decref(doc);
        doc = NULL;
        if ((rc = list_spawned(cfg, http, group_id, f->action_task_id, &s, errstr)) != RT_OK)
            return rc;
        v->jobs = s.total;
        v->completed = s.completed;
        bool found = false, waiting = false;
        if (s.total == 0) {
            set(v, "failed", "no-data", "the action task spawned no job");
        } else if (s.unresolved) {
            if (f->expired)
                set(v, "failed", "deadline-exceeded", "%d of %d jobs unresolved after %d h",
                    s.unresolved, s.total, window);
            else
                set(v, "pending", NULL, "%d of %d jobs unresolved", s.unresolved, s.total);
        } else if (s.deadline) {
            set(v, "failed", "deadline-exceeded", "%d of %d jobs deadline-exceeded (e.g. %s)",
                s.deadline, s.total, s.first_bad);
        } else if (s.failed) {
            set(v, "failed", "jobs-failed", "%d of %d jobs failed (e.g. %s)", s.failed, s.total,
                s.first_bad);
        } else if (s.exception) {
            set(v, "failed", "jobs-exception", "%d of %d jobs ended in an exception (e.g. %s)",
                s.exception, s.total, s.first_bad);
        } else if ((rc = produced_data(cfg, http, f, &s, &found, &waiting, errstr)) != RT_OK) {
            return rc;
        } else if (found) {
            set(v, "done", NULL, "%d jobs completed with Perfherder data", s.completed);
        } else if (waiting && !f->expired) {
            set(v, "pending", NULL, "%d jobs completed; waiting for Treeherder and Perfherder",
                s.completed);
        } else {
            set(v, "failed", "no-data",
                "%d jobs completed without a Perfherder data point of signature %lld", s.completed,
                f->signature_id);
        }
    }
    json_decref(doc);
    return rc;
}

int rt_perf_followup(const rt_config *cfg, rt_pg *pg, rt_http *http, int *settled)
{
    *settled = 0;
    char window[16];
    snprintf(window, sizeof window, "%d", cfg->perf_followup_window_hours);
    const char *params[] = {window};
    PGresult *res = NULL;
    int rc = rt_pg_exec(pg, SQL_TO_FOLLOW, 1, params, &res);
    if (rc != RT_OK) return rc;
    for (int i = 0; i < PQntuples(res) && i < MAX_ALERTS_PER_RUN; i++) {
        followed f = {PQgetvalue(res, i, 0), PQgetvalue(res, i, 1), atoll(PQgetvalue(res, i, 2)),
                      PQgetvalue(res, i, 3), PQgetvalue(res, i, 4)[0] == 't'};
        verdict v = {0};
        char errstr[RT_ERRSTR_SIZE] = "";
        if (assess(cfg, http, &f, &v, errstr) != RT_OK) {
            rt_log_warn("cannot follow the backfill up; it stays pending", "alert_id", f.alert_id,
                        "action_task_id", f.action_task_id, "error", errstr);
            continue;
        }
        char jobs[16], completed[16];
        snprintf(jobs, sizeof jobs, "%d", v.jobs);
        snprintf(completed, sizeof completed, "%d", v.completed);
        const char *up[] = {f.alert_id, v.state, v.reason, v.detail, jobs, completed};
        if ((rc = rt_pg_exec(pg, SQL_RECORD, 6, up, NULL)) != RT_OK) break;
        if (!strcmp(v.state, "pending")) continue;
        (*settled)++;
        if (v.reason)
            rt_log_warn("backfill needs manual work", "alert_id", f.alert_id, "action_task_id",
                        f.action_task_id, "reason", v.reason, "detail", v.detail);
        else
            rt_log_info("backfill done", "alert_id", f.alert_id, "action_task_id", f.action_task_id,
                        "jobs", completed);
    }
    PQclear(res);
    return rc;
}
