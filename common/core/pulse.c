/* SPDX-License-Identifier: MPL-2.0 */
/* pulse.c - Taskcluster task-* message validation into rt_pulse_task. */
#include "common/core/pulse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/ids.h"
#include "common/core/jscan.h"

#define FIELD_MAX 1024

rt_task_event rt_task_event_from_exchange(const char *exchange)
{
    if (!exchange) return RT_TASK_EVENT_UNKNOWN;
    const char *slash = strrchr(exchange, '/');
    const char *name = slash ? slash + 1 : exchange;
    if (!strcmp(name, "task-completed")) return RT_TASK_EVENT_COMPLETED;
    if (!strcmp(name, "task-failed")) return RT_TASK_EVENT_FAILED;
    if (!strcmp(name, "task-exception")) return RT_TASK_EVENT_EXCEPTION;
    if (!strncmp(name, "task-", 5)) return RT_TASK_EVENT_OTHER;
    return RT_TASK_EVENT_UNKNOWN;
}

const char *rt_task_event_name(rt_task_event event)
{
    switch (event) {
    case RT_TASK_EVENT_COMPLETED: return "task-completed";
    case RT_TASK_EVENT_FAILED: return "task-failed";
    case RT_TASK_EVENT_EXCEPTION: return "task-exception";
    case RT_TASK_EVENT_OTHER: return "other";
    case RT_TASK_EVENT_UNKNOWN: break;
    }
    return "unknown";
}

/* Copies an optional string member; a present non-string is a type error. */
static int opt_string(const rt_jscan *js, int obj, const char *key, const char *path, char **out,
                      char *reason)
{
    int v = rt_js_get(js, obj, key);
    if (v < 0 || rt_js_type_of(js, v) == RT_JS_NULL) return RT_OK;
    if (rt_js_type_of(js, v) != RT_JS_STRING) {
        snprintf(reason, RT_PULSE_REASON_SIZE, "wrong-type:%s", path);
        return RT_EPROTO;
    }
    if (rt_js_strlen(js, v) > FIELD_MAX) {
        snprintf(reason, RT_PULSE_REASON_SIZE, "invalid-value:%s", path);
        return RT_EPROTO;
    }
    *out = rt_js_strdup(js, v);
    return *out ? RT_OK : RT_ENOMEM;
}

static int req_string(const rt_jscan *js, int obj, const char *key, const char *path, char **out,
                      char *reason)
{
    if (rt_js_get(js, obj, key) < 0) {
        snprintf(reason, RT_PULSE_REASON_SIZE, "missing-field:%s", path);
        return RT_EPROTO;
    }
    int rc = opt_string(js, obj, key, path, out, reason);
    if (rc == RT_OK && !*out) {
        snprintf(reason, RT_PULSE_REASON_SIZE, "wrong-type:%s", path);
        return RT_EPROTO;
    }
    return rc;
}

static int req_slug(const rt_jscan *js, int obj, const char *key, const char *path, char out[23],
                    char *reason)
{
    char *s = NULL;
    int rc = req_string(js, obj, key, path, &s, reason);
    if (rc != RT_OK) return rc;
    if (!rt_valid_task_id(s)) {
        free(s);
        snprintf(reason, RT_PULSE_REASON_SIZE, "invalid-value:%s", path);
        return RT_EPROTO;
    }
    memcpy(out, s, 23);
    free(s);
    return RT_OK;
}

int rt_pulse_parse_routed(const char *body, size_t len, const char *exchange, char *const *cc,
                          size_t ncc, const char *routes_csv, size_t max_bytes, rt_pulse_task *out,
                          char *reason)
{
    int rc = rt_pulse_parse(body, len, exchange, max_bytes, out, reason);
    if (rc != RT_OK) return rc;
    for (size_t i = 0; i < ncc; i++) (void)rt_pulse_apply_route(out, cc[i]);
    for (const char *r = routes_csv; r && *r;) {
        size_t n = strcspn(r, ",");
        char route[512];
        if (n < sizeof route) { /* a longer one is no Treeherder route */
            memcpy(route, r, n);
            route[n] = '\0';
            (void)rt_pulse_apply_route(out, route);
        }
        r += n + (r[n] == ',');
    }
    return RT_OK;
}

bool rt_pulse_apply_route(rt_pulse_task *task, const char *route)
{
    static const char prefix[] = "tc-treeherder.v2.";
    if (!strncmp(route, "route.", 6)) route += 6;
    if (strncmp(route, prefix, sizeof prefix - 1) != 0) return false;
    const char *p = route + sizeof prefix - 1;
    const char *dot1 = strchr(p, '.');
    if (!dot1) return false;
    const char *dot2 = strchr(dot1 + 1, '.');
    char *project = strndup(p, (size_t)(dot1 - p));
    char *revision = dot2 ? strndup(dot1 + 1, (size_t)(dot2 - dot1 - 1)) : strdup(dot1 + 1);
    char *pushlog = dot2 ? strdup(dot2 + 1) : NULL;
    bool ok = project && revision && rt_valid_project(project) && rt_valid_revision(revision);
    if (ok && pushlog) {
        for (const char *c = pushlog; *c; c++)
            if (*c < '0' || *c > '9') ok = false;
    }
    if (!ok) {
        free(project);
        free(revision);
        free(pushlog);
        return false;
    }
    free(task->project);
    free(task->revision);
    free(task->pushlog_id);
    task->project = project;
    task->revision = revision;
    task->pushlog_id = pushlog;
    return true;
}

static int parse_status(const rt_jscan *js, int status, rt_pulse_task *t, char *reason)
{
    int rc;
    if ((rc = req_slug(js, status, "taskId", "status.taskId", t->task_id, reason))) return rc;
    if ((rc = req_slug(js, status, "taskGroupId", "status.taskGroupId", t->task_group_id, reason)))
        return rc;
    if ((rc = req_string(js, status, "state", "status.state", &t->task_state, reason))) return rc;
    if ((rc =
             opt_string(js, status, "schedulerId", "status.schedulerId", &t->scheduler_id, reason)))
        return rc;
    if ((rc = opt_string(js, status, "taskQueueId", "status.taskQueueId", &t->task_queue_id,
                         reason)))
        return rc;
    if (!t->task_queue_id) {
        char *provisioner = NULL, *worker_type = NULL;
        rc = req_string(js, status, "provisionerId", "status.taskQueueId", &provisioner, reason);
        if (rc == RT_OK)
            rc = req_string(js, status, "workerType", "status.taskQueueId", &worker_type, reason);
        if (rc == RT_OK) {
            size_t n = strlen(provisioner) + strlen(worker_type) + 2;
            t->task_queue_id = malloc(n);
            if (t->task_queue_id)
                snprintf(t->task_queue_id, n, "%s/%s", provisioner, worker_type);
            else
                rc = RT_ENOMEM;
        }
        free(provisioner);
        free(worker_type);
        if (rc) return rc;
    }
    if (!rt_valid_task_queue_id(t->task_queue_id)) {
        snprintf(reason, RT_PULSE_REASON_SIZE, "invalid-value:status.taskQueueId");
        return RT_EPROTO;
    }
    int runs = rt_js_get(js, status, "runs");
    if (runs < 0) {
        snprintf(reason, RT_PULSE_REASON_SIZE, "missing-field:status.runs");
        return RT_EPROTO;
    }
    if (rt_js_type_of(js, runs) != RT_JS_ARRAY) {
        snprintf(reason, RT_PULSE_REASON_SIZE, "wrong-type:status.runs");
        return RT_EPROTO;
    }
    if (t->run_id == RT_PULSE_NO_RUN) return RT_OK; /* no run of the message's to look for */
    for (int run = rt_js_first(js, runs); run >= 0; run = rt_js_after(js, runs, run)) {
        if (rt_js_type_of(js, run) != RT_JS_OBJECT) {
            snprintf(reason, RT_PULSE_REASON_SIZE, "wrong-type:status.runs[]");
            return RT_EPROTO;
        }
        int id = rt_js_get(js, run, "runId");
        if (rt_js_type_of(js, id) != RT_JS_INTEGER) {
            snprintf(reason, RT_PULSE_REASON_SIZE, "wrong-type:status.runs[].runId");
            return RT_EPROTO;
        }
        if (rt_js_integer(js, id) != t->run_id) continue;
        if ((rc = req_string(js, run, "state", "status.runs[].state", &t->run_state, reason)))
            return rc;
        if ((rc = opt_string(js, run, "reasonResolved", "status.runs[].reasonResolved",
                             &t->reason_resolved, reason)))
            return rc;
        if ((rc = opt_string(js, run, "scheduled", "status.runs[].scheduled", &t->scheduled,
                             reason)))
            return rc;
        if ((rc = opt_string(js, run, "started", "status.runs[].started", &t->started, reason)))
            return rc;
        if ((rc = opt_string(js, run, "resolved", "status.runs[].resolved", &t->resolved, reason)))
            return rc;
        return RT_OK;
    }
    snprintf(reason, RT_PULSE_REASON_SIZE, "invalid-value:runId (no such run in status.runs)");
    return RT_EPROTO;
}

static int parse_tags(const rt_jscan *js, int body, rt_pulse_task *t, char *reason)
{
    int task = rt_js_get(js, body, "task");
    if (task < 0 || rt_js_type_of(js, task) == RT_JS_NULL) return RT_OK;
    if (rt_js_type_of(js, task) != RT_JS_OBJECT) {
        snprintf(reason, RT_PULSE_REASON_SIZE, "wrong-type:task");
        return RT_EPROTO;
    }
    int tags = rt_js_get(js, task, "tags");
    if (tags < 0) return RT_OK;
    if (rt_js_type_of(js, tags) != RT_JS_OBJECT) {
        snprintf(reason, RT_PULSE_REASON_SIZE, "wrong-type:task.tags");
        return RT_EPROTO;
    }
    /* Tag values are free-form strings; a non-string one is ignored rather than fatal. */
    static const struct {
        const char *key;
        size_t offset;
    } wanted[] = {
        {"kind", offsetof(rt_pulse_task, tag_kind)},
        {"label", offsetof(rt_pulse_task, tag_label)},
        {"os", offsetof(rt_pulse_task, tag_os)},
        {"test-type", offsetof(rt_pulse_task, tag_test_type)},
        {"action", offsetof(rt_pulse_task, tag_action)},
    };
    for (size_t i = 0; i < sizeof wanted / sizeof wanted[0]; i++) {
        int jv = rt_js_get(js, tags, wanted[i].key);
        if (rt_js_type_of(js, jv) != RT_JS_STRING) continue;
        bool label = offsetof(rt_pulse_task, tag_label) == wanted[i].offset;
        if (!label && rt_js_strlen(js, jv) > FIELD_MAX) continue;
        char *v = rt_js_strdup(js, jv);
        if (!v) return RT_ENOMEM;
        /* The label names the task in sets, SQL rows, URLs and log lines: a hostile one
         * (control characters, "..", non-ASCII, too long) is refused. (The scanner has
         * already refused \u0000.) */
        if (label && !rt_valid_label(v)) {
            free(v);
            snprintf(reason, RT_PULSE_REASON_SIZE, "invalid-value:task.tags.label");
            return RT_EPROTO;
        }
        char **slot = (char **)((char *)t + wanted[i].offset);
        *slot = v;
    }
    return RT_OK;
}

/* The queue's task-exception schema requires only version and status: runId (with
 * workerGroup and workerId) is left out when the deadline passed before a run started. Such
 * a message is one from the task-exception exchange, or, with no exchange known, one whose
 * task is in state exception. */
static bool exception_without_run(const rt_jscan *js, int status, const char *exchange)
{
    rt_task_event event = rt_task_event_from_exchange(exchange);
    if (event != RT_TASK_EVENT_UNKNOWN) return event == RT_TASK_EVENT_EXCEPTION;
    int state = rt_js_get(js, status, "state");
    return rt_js_type_of(js, state) == RT_JS_STRING && rt_js_streq(js, state, "exception");
}

/* Long because it is one pass over one message: the wrapper Treeherder records, the status, the
 * run (or none, for an exception before any run), the exchange and the run's state checked
 * against each other, each with its own error. */
int rt_pulse_parse(const char *body, size_t len, const char *exchange, size_t max_bytes,
                   rt_pulse_task *out, char *reason)
{
    int rc = RT_EPROTO;
    rt_jscan js;
    char *wrapper_exchange = NULL;
    rt_jscan_init(&js);
    memset(out, 0, sizeof *out);
    reason[0] = '\0';
    if (len > max_bytes) {
        snprintf(reason, RT_PULSE_REASON_SIZE, "too-big:%zu bytes over the %zu byte cap", len,
                 max_bytes);
        return RT_ETOOBIG;
    }
    rc = rt_jscan_parse(&js, body, len);
    if (rc == RT_ENOMEM) goto out;
    if (js.too_many) {
        snprintf(reason, RT_PULSE_REASON_SIZE, "too-big:more than %d values", RT_JSCAN_MAX_TOKENS);
        rc = RT_ETOOBIG;
        goto out;
    }
    rc = RT_EPROTO;
    /* A document that is not an object or array was never valid JSON to this parser. */
    rt_js_type top = rt_js_type_of(&js, 0);
    if (top != RT_JS_OBJECT) {
        snprintf(reason, RT_PULSE_REASON_SIZE,
                 top == RT_JS_ARRAY ? "wrong-type:body" : "invalid-json");
        goto out;
    }
    int msg = 0;
    int payload = rt_js_get(&js, 0, "payload");
    if (rt_js_type_of(&js, payload) == RT_JS_OBJECT && rt_js_get(&js, 0, "status") < 0) {
        /* Treeherder's recorded wrapper: {root_url, exchange, payload, routes}. */
        msg = payload;
        int ex = rt_js_get(&js, 0, "exchange");
        if (!exchange && rt_js_type_of(&js, ex) == RT_JS_STRING) {
            if (!(wrapper_exchange = rt_js_strdup(&js, ex))) {
                rc = RT_ENOMEM;
                goto out;
            }
            exchange = wrapper_exchange;
        }
    }
    int version = rt_js_get(&js, msg, "version");
    if (version < 0) {
        snprintf(reason, RT_PULSE_REASON_SIZE, "missing-field:version");
        goto out;
    }
    if (rt_js_type_of(&js, version) != RT_JS_INTEGER || rt_js_integer(&js, version) != 1) {
        snprintf(reason, RT_PULSE_REASON_SIZE, "invalid-value:version");
        goto out;
    }
    int status = rt_js_get(&js, msg, "status");
    if (status < 0) {
        snprintf(reason, RT_PULSE_REASON_SIZE, "missing-field:status");
        goto out;
    }
    if (rt_js_type_of(&js, status) != RT_JS_OBJECT) {
        snprintf(reason, RT_PULSE_REASON_SIZE, "wrong-type:status");
        goto out;
    }
    int run_id = rt_js_get(&js, msg, "runId");
    if (run_id < 0 && !exception_without_run(&js, status, exchange)) {
        snprintf(reason, RT_PULSE_REASON_SIZE, "missing-field:runId");
        goto out;
    }
    if (run_id >= 0 && (rt_js_type_of(&js, run_id) != RT_JS_INTEGER ||
                        rt_js_integer(&js, run_id) < 0 || rt_js_integer(&js, run_id) > 1000)) {
        snprintf(reason, RT_PULSE_REASON_SIZE, "wrong-type:runId");
        goto out;
    }
    out->run_id = run_id >= 0 ? (int)rt_js_integer(&js, run_id) : RT_PULSE_NO_RUN;
    if ((rc = parse_status(&js, status, out, reason))) goto out;
    if (out->run_id == RT_PULSE_NO_RUN) {
        /* A task-exception of a task whose deadline passed before any run started: no
         * run, no worker, nothing more to check. */
        out->event = RT_TASK_EVENT_EXCEPTION;
        if ((rc = parse_tags(&js, msg, out, reason))) goto out;
        rc = RT_OK;
        goto out;
    }
    if ((rc = opt_string(&js, msg, "workerGroup", "workerGroup", &out->worker_group, reason)))
        goto out;
    if ((rc = opt_string(&js, msg, "workerId", "workerId", &out->worker_id, reason))) goto out;
    if ((rc = parse_tags(&js, msg, out, reason))) goto out;

    out->event = rt_task_event_from_exchange(exchange);
    if (out->event == RT_TASK_EVENT_UNKNOWN) {
        /* No exchange known: the run's state says what happened. */
        if (!strcmp(out->run_state, "completed"))
            out->event = RT_TASK_EVENT_COMPLETED;
        else if (!strcmp(out->run_state, "failed"))
            out->event = RT_TASK_EVENT_FAILED;
        else if (!strcmp(out->run_state, "exception"))
            out->event = RT_TASK_EVENT_EXCEPTION;
        else
            out->event = RT_TASK_EVENT_OTHER;
    }
    /* The exchange and the run must agree on how the run ended. */
    static const char *const resolved_state[] = {[RT_TASK_EVENT_COMPLETED] = "completed",
                                                 [RT_TASK_EVENT_FAILED] = "failed",
                                                 [RT_TASK_EVENT_EXCEPTION] = "exception"};
    if (out->event >= RT_TASK_EVENT_COMPLETED && out->event <= RT_TASK_EVENT_EXCEPTION &&
        strcmp(out->run_state, resolved_state[out->event]) != 0) {
        snprintf(reason, RT_PULSE_REASON_SIZE, "invalid-value:status.runs[].state (%s on %s)",
                 out->run_state, rt_task_event_name(out->event));
        rc = RT_EPROTO;
        goto out;
    }
    if (out->event != RT_TASK_EVENT_OTHER && !out->worker_group &&
        out->event != RT_TASK_EVENT_EXCEPTION) {
        snprintf(reason, RT_PULSE_REASON_SIZE, "missing-field:workerGroup");
        rc = RT_EPROTO;
        goto out;
    }
    rc = RT_OK;
out:
    rt_jscan_free(&js);
    free(wrapper_exchange);
    if (rc != RT_OK) rt_pulse_task_free(out);
    return rc;
}

void rt_pulse_task_free(rt_pulse_task *t)
{
    if (!t) return;
    char *owned[] = {t->task_queue_id,   t->scheduler_id,  t->task_state, t->run_state,
                     t->reason_resolved, t->scheduled,     t->started,    t->resolved,
                     t->worker_group,    t->worker_id,     t->tag_kind,   t->tag_label,
                     t->tag_os,          t->tag_test_type, t->tag_action, t->project,
                     t->revision,        t->pushlog_id};
    for (size_t i = 0; i < sizeof owned / sizeof owned[0]; i++) free(owned[i]);
    int run_id = t->run_id;
    memset(t, 0, sizeof *t);
    t->run_id = run_id;
}
