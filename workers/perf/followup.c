/* SPDX-License-Identifier: MPL-2.0 */
/* followup.c - retrig-perf's follow-up of triggered backfills: the action task, the jobs
 * it spawned wherever they landed (through label-to-taskid artifacts of the action task and
 * of the action tasks it triggered, else gecko's backfill-task action tasks found through
 * the index of the earlier pushes, else its own task group), and whether they produced
 * Perfherder data. See followup.h for the states and reasons. */
#include "workers/perf/followup.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/core/followup.h"
#include "common/core/ids.h"
#include "common/core/perf_pick.h"
#include "common/core/utf8.h"
#include "common/io/log.h"
#include "common/io/upstream.h"
#include "common/store/perf.h"

#define MAX_ALERTS_PER_RUN 500
#define MAX_DATA_JOBS      20  /* completed jobs whose Perfherder data is looked at */
#define MAX_ACTION_DEPTH   3   /* action tasks triggered by action tasks, this deep */
#define MAX_ACTIONS        32  /* action tasks whose label-to-taskid artifact is read */
#define MAX_LISTED         200 /* tasks looked at from those artifacts, per backfill */
#define MAX_DEPTH          25  /* earlier pushes a backfill reaches (gecko's maximum) */
#define DEFAULT_DEPTH      9   /* gecko's default when the input gives none */
#define MAX_INDEXED        64  /* action tasks looked at per earlier push's index listing */

/* Where gecko's action tasks write the labels and ids of the tasks they created. */
static const char *const LABEL_TO_TASKID[] = {"public/label-to-taskid.json",
                                              "public/actions/label-to-taskid.json"};

typedef struct followed {
    const char *alert_id;
    const char *action_task_id;
    long long signature_id;
    const char *repository;
    bool expired;        /* the follow-up window has passed */
    const char *task_id; /* the task backfilled ("" when unknown) */
} followed;

typedef struct verdict {
    const char *state;  /* pending, done, failed (rt_followup_state_name) */
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

/* An action task (gecko's .taskcluster.yml: tags.kind action-callback, extra.action). */
static bool is_action_task(json_t *task)
{
    const char *kind = json_string_value(json_object_get(json_object_get(task, "tags"), "kind"));
    return (kind && !strcmp(kind, "action-callback")) ||
           json_is_object(json_object_get(json_object_get(task, "extra"), "action"));
}

/* The run id of a status's last run (0 when none). */
static int last_run(json_t *status)
{
    json_t *runs = json_object_get(status, "runs");
    size_t n = json_array_size(runs);
    json_int_t r =
        n ? json_integer_value(json_object_get(json_array_get(runs, n - 1), "runId")) : 0;
    return r > 0 && r < 1000 ? (int)r : 0;
}

/* Counts one spawned job by its state. */
static void count_job(spawned *s, const char *id, const char *state, json_t *status)
{
    s->total++;
    if (rt_followup_task_unresolved(state)) {
        s->unresolved++;
    } else if (!strcmp(state, "completed")) {
        s->completed++;
        if (s->ncompleted_ids < MAX_DATA_JOBS)
            memcpy(s->completed_ids[s->ncompleted_ids++], id, 23);
    } else {
        if (!strcmp(state, "failed"))
            s->failed++;
        else if (!strcmp(last_reason(status), "deadline-exceeded"))
            s->deadline++;
        else
            s->exception++;
        if (!s->first_bad[0]) memcpy(s->first_bad, id, 23);
    }
}

typedef struct group_scan {
    const char *action_task_id;
    spawned *s;
} group_scan;

static bool scan_entry(void *ctx, const char *id, json_t *status, json_t *task)
{
    group_scan *g = ctx;
    const char *state = json_string_value(json_object_get(status, "state"));
    if (id && rt_valid_task_id(id) && state && spawned_by(task, g->action_task_id))
        count_job(g->s, id, state, status);
    return false;
}

/* The fallback: the tasks of the action task's own group that it spawned. */
static int scan_group(const rt_config *cfg, rt_http *http, const char *group,
                      const char *action_task_id, spawned *s, char *errstr)
{
    group_scan g = {action_task_id, s};
    int rc = rt_tc_each_group_task(http, cfg->taskcluster_root_url, group, scan_entry, &g, errstr);
    return rc == RT_ENOTFOUND ? RT_OK : rc; /* no group: nothing spawned */
}

/* The walk from the action task through the label-to-taskid artifacts of action tasks. */
typedef struct walk {
    char actions[MAX_ACTIONS][23]; /* [0] is the backfill's action task */
    int runs[MAX_ACTIONS], depths[MAX_ACTIONS], nactions;
    char seen[MAX_LISTED][23];
    int nseen;
    int actions_unresolved, actions_failed;
    char bad_action[23];
    bool root_artifact;         /* the backfill's action task wrote one */
    bool searched;              /* the index of the earlier pushes was looked through */
    long first_push, last_push; /* pushlog ids looked at */
    int backfill_tasks;         /* backfill-task action tasks found there for the label */
    char label[128];            /* the label backfilled (for the detail) */
} walk;

static bool seen_before(walk *w, const char *id)
{
    for (int i = 0; i < w->nactions; i++)
        if (!strcmp(w->actions[i], id)) return true;
    for (int i = 0; i < w->nseen; i++)
        if (!strcmp(w->seen[i], id)) return true;
    return false;
}

/* GET a task's status object; *doc owns it. RT_ENOTFOUND when the queue does not know it. */
static int task_status(const rt_config *cfg, rt_http *http, const char *id, json_t **doc,
                       json_t **status, char *errstr)
{
    char *url = NULL;
    if (asprintf(&url, "%s/api/queue/v1/task/%s/status", cfg->taskcluster_root_url, id) < 0)
        return RT_ENOMEM;
    long http_status = 0;
    int rc = get_json(http, url, doc, &http_status, errstr);
    free(url);
    if (rc != RT_OK) return http_status == 404 ? RT_ENOTFOUND : rc;
    *status = json_object_get(*doc, "status");
    if (!json_string_value(json_object_get(*status, "state"))) {
        rt_set_errstr(errstr, "status of %s without a state", id);
        json_decref(*doc);
        *doc = NULL;
        return RT_EPROTO;
    }
    return RT_OK;
}

/* The label-to-taskid artifact of an action task (*map NULL when it wrote none). */
static int label_map(const rt_config *cfg, rt_http *http, const char *id, int run, json_t **map,
                     char *errstr)
{
    *map = NULL;
    for (size_t i = 0; i < sizeof LABEL_TO_TASKID / sizeof *LABEL_TO_TASKID; i++) {
        char *body = NULL;
        size_t len = 0;
        int rc = rt_tc_get_artifact(http, cfg->taskcluster_root_url, id, run, LABEL_TO_TASKID[i],
                                    &body, &len, errstr);
        if (rc == RT_ENOTFOUND) continue;
        if (rc != RT_OK) return rc;
        json_error_t error;
        *map = json_loadb(body, len, 0, &error);
        free(body);
        if (!json_is_object(*map)) {
            json_decref(*map);
            *map = NULL;
            rt_set_errstr(errstr, "%s of %s is not a JSON object", LABEL_TO_TASKID[i], id);
            return RT_EPROTO;
        }
        return RT_OK;
    }
    return RT_OK;
}

/* One task listed in the artifact of action task w->actions[from]: a job that action
 * created (counted), an action task it triggered (queued, or counted as unsettled or
 * failed), or a task it reused, such as an existing build (left out). */
static int follow_listed(const rt_config *cfg, rt_http *http, walk *w, int from, const char *id,
                         spawned *s, char *errstr)
{
    char *body = NULL;
    size_t len = 0;
    int rc = rt_tc_get_task(http, cfg->taskcluster_root_url, id, &body, &len, errstr);
    if (rc == RT_ENOTFOUND) return RT_OK; /* never created: nothing to follow */
    if (rc != RT_OK) return rc;
    json_error_t error;
    json_t *task = json_loadb(body, len, 0, &error), *doc = NULL, *status = NULL;
    free(body);
    if (!json_is_object(task)) {
        json_decref(task);
        rt_set_errstr(errstr, "definition of %s is not a JSON object", id);
        return RT_EPROTO;
    }
    bool action = is_action_task(task);
    bool job = !action && spawned_by(task, w->actions[from]);
    json_decref(task);
    if ((!action && !job) ||
        (action && (w->depths[from] + 1 > MAX_ACTION_DEPTH || w->nactions >= MAX_ACTIONS)))
        return RT_OK;
    rc = task_status(cfg, http, id, &doc, &status, errstr);
    if (rc == RT_ENOTFOUND) return RT_OK;
    if (rc != RT_OK) return rc;
    const char *state = json_string_value(json_object_get(status, "state"));
    if (job) {
        count_job(s, id, state, status);
    } else if (rt_followup_task_unresolved(state)) {
        w->actions_unresolved++;
    } else if (strcmp(state, "completed") != 0) {
        if (!w->bad_action[0]) memcpy(w->bad_action, id, 23);
        w->actions_failed++;
    } else {
        memcpy(w->actions[w->nactions], id, 23);
        w->runs[w->nactions] = last_run(status);
        w->depths[w->nactions++] = w->depths[from] + 1;
    }
    json_decref(doc);
    return RT_OK;
}

/* What the index search needs from our backfill action task and the task it backfilled. */
typedef struct origin {
    char trust[32];   /* the index's trust domain, e.g. gecko */
    char project[64]; /* e.g. autoland */
    char revision[48];
    long pushlog_id;
    int depth;
    bool inclusive;
    time_t created;
    char created_text[40];
    char label[256];
} origin;

static void copy_bounded(char *out, size_t size, const char *s, size_t len)
{
    if (len >= size) len = size - 1;
    memcpy(out, s, len);
    out[len] = '\0';
}

static long parse_pushlog_id(const char *s, size_t len)
{
    if (!s || !len || len > 12) return 0;
    long v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

/* Reads one route: index.<trust>.v2.<project>.pushlog-id.<id>.actions.<taskId> (gecko's
 * .taskcluster.yml on action tasks), else tc-treeherder.v2.<project>.<revision>[.<id>]. */
static void read_route(origin *o, const char *route)
{
    const char *part[9] = {0}; /* zeroed: -O3 cannot tell that only parts below n are read */
    size_t len[9] = {0};
    int n = 0;
    for (const char *p = route; n < 9;) {
        const char *dot = strchr(p, '.');
        part[n] = p;
        len[n++] = dot ? (size_t)(dot - p) : strlen(p);
        if (!dot) break;
        p = dot + 1;
    }
#define IS(i, word) (len[i] == strlen(word) && !strncmp(part[i], word, len[i]))
    if (n == 8 && IS(0, "index") && IS(2, "v2") && IS(4, "pushlog-id") && IS(6, "actions")) {
        copy_bounded(o->trust, sizeof o->trust, part[1], len[1]);
        copy_bounded(o->project, sizeof o->project, part[3], len[3]);
        o->pushlog_id = parse_pushlog_id(part[5], len[5]);
    } else if ((n == 4 || n == 5) && IS(0, "tc-treeherder") && IS(1, "v2")) {
        if (!o->project[0]) copy_bounded(o->project, sizeof o->project, part[2], len[2]);
        copy_bounded(o->revision, sizeof o->revision, part[3], len[3]);
        if (n == 5 && !o->pushlog_id) o->pushlog_id = parse_pushlog_id(part[4], len[4]);
    }
#undef IS
}

/* The action's context: gecko's extra.action.context, else extra.action itself. */
static json_t *action_context(json_t *task)
{
    json_t *action = json_object_get(json_object_get(task, "extra"), "action");
    json_t *context = json_object_get(action, "context");
    return json_is_object(context) ? context : action;
}

/* Fills o from our action task's definition (routes, created, input, parameters) and the
 * backfilled task's label. *usable false when something needed is missing. */
static int read_origin(const rt_config *cfg, rt_http *http, const followed *f, origin *o,
                       bool *usable, char *errstr)
{
    *usable = false;
    memset(o, 0, sizeof *o);
    char *body = NULL;
    size_t len = 0;
    int rc =
        rt_tc_get_task(http, cfg->taskcluster_root_url, f->action_task_id, &body, &len, errstr);
    if (rc == RT_ENOTFOUND) return RT_OK;
    if (rc != RT_OK) return rc;
    json_error_t error;
    json_t *task = json_loadb(body, len, 0, &error);
    free(body);
    if (!json_is_object(task)) {
        json_decref(task);
        rt_set_errstr(errstr, "definition of %s is not a JSON object", f->action_task_id);
        return RT_EPROTO;
    }
    size_t i;
    json_t *route;
    json_array_foreach(json_object_get(task, "routes"), i, route)
    {
        if (json_is_string(route)) read_route(o, json_string_value(route));
    }
    json_t *context = action_context(task);
    json_t *params = json_object_get(context, "parameters");
    const char *v;
    if (!o->project[0] && (v = json_string_value(json_object_get(params, "project"))))
        snprintf(o->project, sizeof o->project, "%s", v);
    if (!o->revision[0] && (v = json_string_value(json_object_get(params, "head_rev"))))
        snprintf(o->revision, sizeof o->revision, "%s", v);
    json_t *pid = json_object_get(params, "pushlog_id");
    if (!o->pushlog_id && json_is_string(pid))
        o->pushlog_id = parse_pushlog_id(json_string_value(pid), strlen(json_string_value(pid)));
    if (!o->trust[0]) snprintf(o->trust, sizeof o->trust, "gecko");
    json_t *input = json_object_get(context, "input");
    json_int_t depth = json_integer_value(json_object_get(input, "depth"));
    o->depth = depth >= 1 && depth <= MAX_DEPTH ? (int)depth : DEFAULT_DEPTH;
    o->inclusive = json_is_true(json_object_get(input, "inclusive"));
    const char *created = json_string_value(json_object_get(task, "created"));
    if (created && rt_perf_parse_time(created, &o->created) == RT_OK)
        snprintf(o->created_text, sizeof o->created_text, "%s", created);
    const char *target = json_string_value(json_object_get(context, "taskId"));
    char target_id[23] = "";
    if (target && rt_valid_task_id(target))
        memcpy(target_id, target, 23);
    else if (rt_valid_task_id(f->task_id))
        memcpy(target_id, f->task_id, 23);
    json_decref(task);
    if (!target_id[0] || !o->created_text[0] || !rt_valid_project(o->project) || o->pushlog_id <= 0)
        return RT_OK;
    rc = rt_tc_get_task(http, cfg->taskcluster_root_url, target_id, &body, &len, errstr);
    if (rc == RT_ENOTFOUND) return RT_OK;
    if (rc != RT_OK) return rc;
    task = json_loadb(body, len, 0, &error);
    free(body);
    const char *label =
        json_string_value(json_object_get(json_object_get(task, "metadata"), "name"));
    if (!label) label = json_string_value(json_object_get(json_object_get(task, "tags"), "label"));
    if (label && *label && strlen(label) < sizeof o->label) {
        memcpy(o->label, label, strlen(label) + 1);
        *usable = true;
    }
    json_decref(task);
    return RT_OK;
}

typedef struct indexed {
    char ids[MAX_INDEXED][23];
    int n;
} indexed;

static bool collect_indexed(void *ctx, const char *task_id, json_t *entry)
{
    (void)entry;
    indexed *x = ctx;
    memcpy(x->ids[x->n++], task_id, 23);
    return x->n >= MAX_INDEXED;
}

/* Created at or after our action task? (same second: Taskcluster's ISO texts compare) */
static bool created_after(const origin *o, const char *created)
{
    time_t t;
    if (!created || rt_perf_parse_time(created, &t) != RT_OK) return false;
    return t > o->created || (t == o->created && strcmp(created, o->created_text) >= 0);
}

/* Is this the backfill-task our backfill triggered: that action, for our label (and our
 * push's revision when both name one), created after our action task? */
static bool our_backfill_task(const origin *o, json_t *task)
{
    json_t *context = action_context(task);
    const char *name = json_string_value(
        json_object_get(json_object_get(json_object_get(task, "extra"), "action"), "name"));
    if (!name) name = json_string_value(json_object_get(json_object_get(task, "tags"), "action"));
    json_t *input = json_object_get(context, "input");
    const char *label = json_string_value(json_object_get(input, "label"));
    const char *revision = json_string_value(json_object_get(input, "revision"));
    return name && !strcmp(name, "backfill-task") && label && !strcmp(label, o->label) &&
           !(revision && o->revision[0] && strcmp(revision, o->revision) != 0) &&
           created_after(o, json_string_value(json_object_get(task, "created")));
}

/* A real gecko backfill: for each earlier push (depth of the input, pushlog ids below ours),
 * the action tasks indexed under <trust>.v2.<project>.pushlog-id.<id>.actions; those that
 * are our backfill-task are queued on the walk (their artifacts name the jobs), counted
 * as unresolved or failed otherwise. The index only holds completed tasks. */
static int search_index(const rt_config *cfg, rt_http *http, const origin *o, walk *w, char *errstr)
{
    w->searched = true;
    copy_bounded(w->label, sizeof w->label, o->label, strlen(o->label));
    w->last_push = o->pushlog_id - (o->inclusive ? 0 : 1);
    w->first_push = w->last_push - o->depth + 1;
    if (w->first_push < 1) w->first_push = 1;
    int rc = RT_OK;
    for (long push = w->last_push; push >= w->first_push && rc == RT_OK; push--) {
        char ns[RT_TC_MAX_NAMESPACE + 1];
        snprintf(ns, sizeof ns, "%s.v2.%s.pushlog-id.%ld.actions", o->trust, o->project, push);
        indexed *x = calloc(1, sizeof *x);
        if (!x) return RT_ENOMEM;
        rc = rt_tc_index_each_task(http, cfg->taskcluster_root_url, ns, collect_indexed, x, errstr);
        for (int i = 0; i < x->n && rc == RT_OK && w->nactions < MAX_ACTIONS; i++) {
            if (seen_before(w, x->ids[i])) continue;
            char *body = NULL;
            size_t len = 0;
            rc = rt_tc_get_task(http, cfg->taskcluster_root_url, x->ids[i], &body, &len, errstr);
            if (rc == RT_ENOTFOUND) {
                rc = RT_OK;
                continue;
            }
            if (rc != RT_OK) break;
            json_error_t error;
            json_t *task = json_loadb(body, len, 0, &error);
            free(body);
            bool ours = json_is_object(task) && our_backfill_task(o, task);
            json_decref(task);
            if (!ours) continue;
            w->backfill_tasks++;
            json_t *doc = NULL, *status = NULL;
            rc = task_status(cfg, http, x->ids[i], &doc, &status, errstr);
            if (rc == RT_ENOTFOUND) {
                rc = RT_OK;
                continue;
            }
            if (rc != RT_OK) break;
            const char *state = json_string_value(json_object_get(status, "state"));
            if (rt_followup_task_unresolved(state)) {
                w->actions_unresolved++;
            } else if (strcmp(state, "completed") != 0) {
                if (!w->bad_action[0]) memcpy(w->bad_action, x->ids[i], 23);
                w->actions_failed++;
            } else {
                memcpy(w->actions[w->nactions], x->ids[i], 23);
                w->runs[w->nactions] = last_run(status);
                w->depths[w->nactions++] = 1;
            }
            json_decref(doc);
        }
        free(x);
    }
    return rc;
}

/* Follows the label-to-taskid artifacts of w->actions[from..] (the walk grows as it goes). */
static int follow_artifacts(const rt_config *cfg, rt_http *http, walk *w, int from, spawned *s,
                            char *errstr)
{
    for (int i = from; i < w->nactions; i++) {
        json_t *map = NULL;
        int rc = label_map(cfg, http, w->actions[i], w->runs[i], &map, errstr);
        if (rc != RT_OK) return rc;
        if (!map) continue;
        if (i == 0) w->root_artifact = true;
        const char *label;
        json_t *value;
        json_object_foreach(map, label, value)
        {
            const char *id = json_string_value(value);
            if (!id || !rt_valid_task_id(id) || seen_before(w, id)) continue;
            if (w->nseen >= MAX_LISTED) break;
            memcpy(w->seen[w->nseen++], id, 23);
            if ((rc = follow_listed(cfg, http, w, i, id, s, errstr)) != RT_OK) break;
        }
        json_decref(map);
        if (rc != RT_OK) return rc;
    }
    return RT_OK;
}

/* The jobs spawned by the (completed) action task, wherever they landed: the tasks listed
 * in its label-to-taskid artifact and, through theirs, in those of the action tasks it
 * triggered (bounded); without an artifact, the tasks of its own group naming it. */
static int list_spawned(const rt_config *cfg, rt_http *http, const followed *f, const char *group,
                        int run, walk *w, spawned *s, char *errstr)
{
    memcpy(w->actions[0], f->action_task_id, 23);
    w->runs[0] = run;
    w->depths[0] = 0;
    w->nactions = 1;
    int rc = follow_artifacts(cfg, http, w, 0, s, errstr);
    if (rc != RT_OK || w->root_artifact) return rc;
    /* gecko's backfill: backfill-task action tasks on the earlier pushes, through the index. */
    origin o;
    bool usable = false;
    if ((rc = read_origin(cfg, http, f, &o, &usable, errstr)) != RT_OK) return rc;
    if (usable) {
        if ((rc = search_index(cfg, http, &o, w, errstr)) != RT_OK) return rc;
        if (w->backfill_tasks) return follow_artifacts(cfg, http, w, 1, s, errstr);
    }
    return scan_group(cfg, http, group, f->action_task_id, s, errstr);
}

/* When the status's last run resolved (0 when it does not say). */
static time_t last_resolved(json_t *status)
{
    json_t *runs = json_object_get(status, "runs");
    size_t n = json_array_size(runs);
    const char *r =
        n ? json_string_value(json_object_get(json_array_get(runs, n - 1), "resolved")) : NULL;
    time_t t = 0;
    return r && rt_perf_parse_time(r, &t) == RT_OK ? t : 0;
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

/* What became of one backfill: the facts from Taskcluster, Treeherder and Perfherder, read
 * as far as the ladder of common/core/followup.h needs them, and its answer. RT_OK with v
 * filled, or an upstream error (left pending). */
static int assess(const rt_config *cfg, rt_http *http, const followed *f, verdict *v, char *errstr)
{
    rt_followup_facts facts = {.action_task_valid = rt_valid_task_id(f->action_task_id),
                               .action_task_id = f->action_task_id,
                               .expired = f->expired,
                               .window_hours = cfg->perf_followup_window_hours,
                               .now = time(NULL),
                               .signature_id = f->signature_id};
    json_t *doc = NULL;
    walk *w = NULL;
    spawned s = {0};
    int rc = RT_OK;
    if (facts.action_task_valid) {
        char *url = NULL;
        if (asprintf(&url, "%s/api/queue/v1/task/%s/status", cfg->taskcluster_root_url,
                     f->action_task_id) < 0)
            return RT_ENOMEM;
        long http_status = 0;
        rc = get_json(http, url, &doc, &http_status, errstr);
        free(url);
        if (rc != RT_OK && http_status != 404) return rc;
        rc = RT_OK;
        facts.action_task_known = doc != NULL;
    }
    if (facts.action_task_known) {
        json_t *status = json_object_get(doc, "status");
        const char *group = json_string_value(json_object_get(status, "taskGroupId"));
        facts.action_state = json_string_value(json_object_get(status, "state"));
        facts.action_reason = last_reason(status);
        if (!facts.action_state || !group || !rt_valid_task_id(group)) {
            rt_set_errstr(errstr, "action task status without state or taskGroupId");
            rc = RT_EPROTO;
            goto out;
        }
        if (!strcmp(facts.action_state, "completed")) {
            facts.resolved_at = last_resolved(status);
            if (!(w = calloc(1, sizeof *w))) {
                rc = RT_ENOMEM;
                goto out;
            }
            if ((rc = list_spawned(cfg, http, f, group, last_run(status), w, &s, errstr)) != RT_OK)
                goto out;
            facts.actions_failed = w->actions_failed;
            facts.actions_unresolved = w->actions_unresolved;
            facts.bad_action = w->bad_action;
            facts.root_artifact = w->root_artifact;
            facts.searched = w->searched;
            facts.backfill_tasks = w->backfill_tasks;
            facts.label = w->label;
            facts.first_push = w->first_push;
            facts.last_push = w->last_push;
            facts.jobs = s.total;
            facts.completed = s.completed;
            facts.failed = s.failed;
            facts.exception = s.exception;
            facts.deadline = s.deadline;
            facts.unresolved = s.unresolved;
            facts.first_bad = s.first_bad;
        }
    }
    rt_followup_outcome o;
    rt_followup_assess(&facts, &o);
    if (o.state == RT_FOLLOWUP_NEED_DATA) {
        if ((rc = produced_data(cfg, http, f, &s, &facts.data_found, &facts.data_waiting,
                                errstr)) != RT_OK)
            goto out;
        facts.data_known = true;
        rt_followup_assess(&facts, &o);
    }
    v->state = rt_followup_state_name(o.state);
    v->reason = o.reason;
    snprintf(v->detail, sizeof v->detail, "%s", o.detail);
    v->jobs = s.total;
    v->completed = s.completed;
out:
    free(w);
    json_decref(doc);
    return rc;
}

int rt_perf_followup(const rt_config *cfg, rt_pg *pg, rt_http *http, int *settled)
{
    *settled = 0;
    rt_perf_followed *list = NULL;
    size_t n = 0;
    int rc =
        rt_perf_store_to_follow(pg, cfg->perf_followup_window_hours, MAX_ALERTS_PER_RUN, &list, &n);
    if (rc != RT_OK) return rc;
    for (size_t i = 0; i < n; i++) {
        char alert_id[32];
        snprintf(alert_id, sizeof alert_id, "%lld", list[i].alert_id);
        followed f = {alert_id,           list[i].action_task_id, list[i].signature_id,
                      list[i].repository, list[i].expired,        list[i].task_id};
        verdict v = {0};
        char errstr[RT_ERRSTR_SIZE] = "";
        if (assess(cfg, http, &f, &v, errstr) != RT_OK) {
            rt_log_warn("cannot follow the backfill up; it stays pending", "alert_id", f.alert_id,
                        "action_task_id", f.action_task_id, "error", errstr);
            continue;
        }
        if ((rc = rt_perf_store_followup(pg, list[i].alert_id, v.state, v.reason, v.detail, v.jobs,
                                         v.completed)) != RT_OK)
            break;
        if (!strcmp(v.state, "pending")) continue;
        (*settled)++;
        char completed[16];
        snprintf(completed, sizeof completed, "%d", v.completed);
        if (v.reason)
            rt_log_warn("backfill needs manual work", "alert_id", f.alert_id, "action_task_id",
                        f.action_task_id, "reason", v.reason, "detail", v.detail);
        else
            rt_log_info("backfill done", "alert_id", f.alert_id, "action_task_id", f.action_task_id,
                        "jobs", completed);
    }
    rt_perf_followed_free(list, n);
    return rc;
}
