/* SPDX-License-Identifier: MPL-2.0 */
/* upstream.c - Taskcluster queue, index and Treeherder REST calls. */
#include "common/io/upstream.h"

#include <ctype.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/core/ids.h"
#include "common/core/jscan.h"
#include "common/core/utf8.h"

bool rt_upstream_transient(int rc)
{
    return rc == RT_ERETRY || rc == RT_ETIMEDOUT || rc == RT_ECONN;
}

/* Runs a GET and maps the outcome; on success the body moves to *body. */
static int get(rt_http *h, const char *url, char **body, size_t *len, char *errstr)
{
    rt_http_response resp;
    int rc = rt_http_get(h, url, &resp);
    if (rc == RT_EUPSTREAM && resp.status == 404) {
        rt_set_errstr(errstr, "%s", rt_http_errstr(h));
        rc = RT_ENOTFOUND;
    } else if (rc != RT_OK) {
        rt_set_errstr(errstr, "%s", rt_http_errstr(h));
    } else {
        *body = resp.body;
        *len = resp.len;
        resp.body = NULL;
    }
    rt_http_response_free(&resp);
    return rc;
}

static int get_json(rt_http *h, const char *url, json_t **out, char *errstr)
{
    char *body = NULL;
    size_t len = 0;
    int rc = get(h, url, &body, &len, errstr);
    if (rc != RT_OK) return rc;
    json_error_t error;
    *out = json_loadb(body, len, 0, &error);
    free(body);
    if (!*out || !json_is_object(*out)) {
        json_decref(*out);
        *out = NULL;
        rt_set_errstr(errstr, "GET %s: answer is not a JSON object (%s)", url, error.text);
        return RT_EPROTO;
    }
    return RT_OK;
}

/* GET a JSON object and scan it (rt_jscan: no tree of allocated values, for the answers
 * retrig-classify reads per failure). On RT_OK *text holds the body the scanner points
 * into: free it after the scanner. Duplicate member names are refused. */
static int get_scan(rt_http *h, const char *url, rt_jscan *js, char **text, char *errstr)
{
    size_t len = 0;
    *text = NULL;
    int rc = get(h, url, text, &len, errstr);
    if (rc != RT_OK) return rc;
    rc = rt_jscan_parse(js, *text, len);
    if (rc == RT_OK && rt_js_type_of(js, 0) == RT_JS_OBJECT) return RT_OK;
    rt_set_errstr(errstr, "GET %s: answer is not a JSON object (%s)", url,
                  rc == RT_OK ? "another JSON value" : js->err);
    free(*text);
    *text = NULL;
    return rc == RT_ENOMEM ? RT_ENOMEM : RT_EPROTO;
}

/* root + path, without a doubled slash. */
static char *join(const char *root, const char *path)
{
    size_t n = strlen(root);
    while (n > 0 && root[n - 1] == '/') n--;
    size_t size = n + strlen(path) + 1;
    char *url = malloc(size);
    if (url) snprintf(url, size, "%.*s%s", (int)n, root, path);
    return url;
}

/* One page of a listing: a tree (doc) for callers that hand values on, else scanned (js,
 * a JSON object). */
typedef struct listing_page {
    json_t *doc;
    const rt_jscan *js;
} listing_page;

/* Called with each page of a Taskcluster listing; returns RT_OK to go on, RT_OK with
 * *stop set to end early, or an error (which ends the walk with it). */
typedef int page_fn(void *ctx, const listing_page *pg, bool *stop, char *errstr);

/* The page's continuationToken (malloc'd), NULL when there is none or it is not a plausible
 * one (empty, 300 bytes or more); *rc = RT_ENOMEM when the copy failed. */
static char *next_token(const listing_page *pg, int *rc)
{
    char *token = NULL;
    if (pg->doc) {
        const char *next = json_string_value(json_object_get(pg->doc, "continuationToken"));
        if (next && !(token = strdup(next))) *rc = RT_ENOMEM;
    } else {
        int next = rt_js_get(pg->js, 0, "continuationToken");
        if (rt_js_type_of(pg->js, next) == RT_JS_STRING && !(token = rt_js_strdup(pg->js, next)))
            *rc = RT_ENOMEM;
    }
    if (token && (!*token || strlen(token) >= 300)) {
        free(token);
        token = NULL;
    }
    return token;
}

/* Walks a paginated Taskcluster listing: GET <root><path>[?&]continuationToken=... for at
 * most max_pages pages, calling fn with each, as a tree when `tree`, else scanned. `path`
 * already holds its query string, if any. A 404 on the first page is RT_ENOTFOUND. */
static int each_page(rt_http *h, const char *root_url, const char *path, int max_pages, bool tree,
                     page_fn *fn, void *ctx, char *errstr)
{
    char *token = NULL;
    int rc = RT_OK;
    bool stop = false;
    rt_jscan js;
    rt_jscan_init(&js);
    const char *sep = strchr(path, '?') ? "&" : "?";
    for (int page = 0; page < max_pages && !stop; page++) {
        char *escaped = token ? rt_http_url_escape(token) : NULL;
        if (token && !escaped) {
            rc = RT_ENOMEM;
            break;
        }
        size_t size = strlen(path) + (escaped ? strlen(escaped) + 32 : 1);
        char *full = malloc(size);
        if (full)
            snprintf(full, size, "%s%s%s%s", path, escaped ? sep : "",
                     escaped ? "continuationToken=" : "", escaped ? escaped : "");
        free(escaped);
        char *url = full ? join(root_url, full) : NULL;
        free(full);
        if (!url) {
            rc = RT_ENOMEM;
            break;
        }
        listing_page pg = {0};
        char *text = NULL;
        rc = tree ? get_json(h, url, &pg.doc, errstr) : get_scan(h, url, &js, &text, errstr);
        pg.js = &js;
        free(url);
        if (rc != RT_OK) break;
        rc = fn(ctx, &pg, &stop, errstr);
        free(token);
        token = rc == RT_OK ? next_token(&pg, &rc) : NULL;
        json_decref(pg.doc);
        free(text);
        if (rc != RT_OK || !token) break;
    }
    free(token);
    rt_jscan_free(&js);
    return rc;
}

int rt_tc_get_task(rt_http *h, const char *root_url, const char *task_id, char **body, size_t *len,
                   char *errstr)
{
    if (!rt_valid_task_id(task_id)) {
        rt_set_errstr(errstr, "invalid task id");
        return RT_EINVAL;
    }
    char path[96];
    snprintf(path, sizeof path, "/api/queue/v1/task/%s", task_id);
    char *url = join(root_url, path);
    if (!url) return RT_ENOMEM;
    int rc = get(h, url, body, len, errstr);
    free(url);
    return rc;
}

void rt_tc_artifact_names_free(rt_tc_artifact_names *names)
{
    if (!names) return;
    for (size_t i = 0; i < names->count; i++) free(names->names[i]);
    free(names->names);
    names->names = NULL;
    names->count = 0;
}

typedef struct artifact_walk {
    rt_tc_artifact_names *out;
    const char *task_id;
    int run_id;
} artifact_walk;

static int artifact_page(void *ctx, const listing_page *pg, bool *stop, char *errstr)
{
    artifact_walk *w = ctx;
    const rt_jscan *js = pg->js;
    (void)stop;
    int artifacts = rt_js_get(js, 0, "artifacts");
    if (rt_js_type_of(js, artifacts) != RT_JS_ARRAY) {
        rt_set_errstr(errstr, "artifact list of %s run %d has no 'artifacts' array", w->task_id,
                      w->run_id);
        return RT_EPROTO;
    }
    for (int a = rt_js_first(js, artifacts); a >= 0; a = rt_js_after(js, artifacts, a)) {
        int name = rt_js_get(js, a, "name");
        if (rt_js_type_of(js, name) != RT_JS_STRING || w->out->count >= RT_TC_MAX_ARTIFACTS)
            continue;
        char **grown = realloc(w->out->names, (w->out->count + 1) * sizeof *grown);
        if (!grown) return RT_ENOMEM;
        w->out->names = grown;
        if (!(grown[w->out->count] = rt_js_strdup(js, name))) return RT_ENOMEM;
        w->out->count++;
    }
    return RT_OK;
}

int rt_tc_list_artifacts(rt_http *h, const char *root_url, const char *task_id, int run_id,
                         rt_tc_artifact_names *out, char *errstr)
{
    memset(out, 0, sizeof *out);
    if (!rt_valid_task_id(task_id) || run_id < 0) {
        rt_set_errstr(errstr, "invalid task id or run id");
        return RT_EINVAL;
    }
    char path[128];
    snprintf(path, sizeof path, "/api/queue/v1/task/%s/runs/%d/artifacts", task_id, run_id);
    artifact_walk w = {out, task_id, run_id};
    int rc = each_page(h, root_url, path, 1000, false, artifact_page, &w, errstr);
    if (rc != RT_OK) rt_tc_artifact_names_free(out);
    return rc;
}

/* Percent-encodes each '/'-separated segment of an artifact name, keeping the slashes. */
static char *escape_artifact_name(const char *name)
{
    size_t cap = strlen(name) * 3 + 1, n = 0;
    char *out = malloc(cap);
    if (!out) return NULL;
    out[0] = '\0';
    const char *p = name;
    for (;;) {
        const char *slash = strchr(p, '/');
        size_t seg = slash ? (size_t)(slash - p) : strlen(p);
        char *piece = strndup(p, seg);
        char *escaped = piece ? rt_http_url_escape(piece) : NULL;
        free(piece);
        if (!escaped) {
            free(out);
            return NULL;
        }
        n += (size_t)snprintf(out + n, cap - n, "%s%s", escaped, slash ? "/" : "");
        free(escaped);
        if (!slash) break;
        p = slash + 1;
    }
    return out;
}

int rt_tc_get_artifact(rt_http *h, const char *root_url, const char *task_id, int run_id,
                       const char *name, char **body, size_t *len, char *errstr)
{
    if (!rt_valid_task_id(task_id) || run_id < 0 || !name || !*name || strstr(name, "..") ||
        strlen(name) > 1024) {
        rt_set_errstr(errstr, "invalid artifact reference");
        return RT_EINVAL;
    }
    char *escaped = escape_artifact_name(name);
    if (!escaped) return RT_ENOMEM;
    size_t size = strlen(escaped) + 128;
    char *path = malloc(size);
    if (!path) {
        free(escaped);
        return RT_ENOMEM;
    }
    snprintf(path, size, "/api/queue/v1/task/%s/runs/%d/artifacts/%s", task_id, run_id, escaped);
    free(escaped);
    char *url = join(root_url, path);
    free(path);
    if (!url) return RT_ENOMEM;
    int rc = get(h, url, body, len, errstr);
    free(url);
    return rc;
}

typedef struct callback_walk {
    rt_tc_task_fn *task_fn;       /* task-group listings */
    rt_tc_indexed_fn *indexed_fn; /* index listings */
    void *ctx;
    const char *what;
} callback_walk;

static int group_page(void *ctx, const listing_page *pg, bool *stop, char *errstr)
{
    callback_walk *w = ctx;
    rt_tc_task_fn *fn = w->task_fn;
    (void)errstr;
    size_t i;
    json_t *entry;
    json_array_foreach(json_object_get(pg->doc, "tasks"), i, entry)
    {
        json_t *status = json_object_get(entry, "status");
        const char *id = json_string_value(json_object_get(status, "taskId"));
        if (fn(w->ctx, id, status, json_object_get(entry, "task"))) {
            *stop = true;
            break;
        }
    }
    return RT_OK;
}

/* Walks a task group's listing with fn (see each_page). */
static int each_group_page(rt_http *h, const char *root_url, const char *task_group_id, bool tree,
                           page_fn *fn, void *ctx, char *errstr)
{
    if (!rt_valid_task_id(task_group_id)) {
        rt_set_errstr(errstr, "invalid task group id");
        return RT_EINVAL;
    }
    /* Small pages: a page of full task definitions is parsed whole, and Mozilla's task
     * groups hold tens of thousands; this bounds a worker's peak memory. */
    char path[128];
    snprintf(path, sizeof path, "/api/queue/v1/task-group/%s/list?limit=%d", task_group_id,
             RT_TC_GROUP_PAGE_LIMIT);
    return each_page(h, root_url, path, RT_TC_MAX_GROUP_PAGES, tree, fn, ctx, errstr);
}

int rt_tc_each_group_task(rt_http *h, const char *root_url, const char *task_group_id,
                          rt_tc_task_fn *fn, void *ctx, char *errstr)
{
    callback_walk w = {.task_fn = fn, .ctx = ctx, .what = task_group_id};
    return each_group_page(h, root_url, task_group_id, true, group_page, &w, errstr);
}

bool rt_tc_valid_namespace(const char *ns)
{
    if (!ns || !*ns || strlen(ns) > RT_TC_MAX_NAMESPACE) return false;
    bool segment_empty = true;
    for (const char *p = ns; *p; p++) {
        if (*p == '.') {
            if (segment_empty) return false;
            segment_empty = true;
        } else if (isalnum((unsigned char)*p) || *p == '_' || *p == '-') {
            segment_empty = false;
        } else {
            return false;
        }
    }
    return !segment_empty;
}

static int index_page(void *ctx, const listing_page *pg, bool *stop, char *errstr)
{
    callback_walk *w = ctx;
    rt_tc_indexed_fn *fn = w->indexed_fn;
    json_t *tasks = json_object_get(pg->doc, "tasks");
    if (!json_is_array(tasks)) {
        rt_set_errstr(errstr, "index listing of %s has no 'tasks' array", w->what);
        return RT_EPROTO;
    }
    size_t i;
    json_t *entry;
    json_array_foreach(tasks, i, entry)
    {
        const char *id = json_string_value(json_object_get(entry, "taskId"));
        if (!id || !rt_valid_task_id(id)) continue;
        if (fn(w->ctx, id, entry)) {
            *stop = true;
            break;
        }
    }
    return RT_OK;
}

int rt_tc_index_each_task(rt_http *h, const char *root_url, const char *ns, rt_tc_indexed_fn *fn,
                          void *ctx, char *errstr)
{
    if (!rt_tc_valid_namespace(ns)) {
        rt_set_errstr(errstr, "invalid index namespace");
        return RT_EINVAL;
    }
    char path[RT_TC_MAX_NAMESPACE + 64];
    snprintf(path, sizeof path, "/api/index/v1/tasks/%s?limit=1000", ns);
    callback_walk w = {.indexed_fn = fn, .ctx = ctx, .what = ns};
    int rc = each_page(h, root_url, path, RT_TC_MAX_INDEX_PAGES, true, index_page, &w, errstr);
    return rc == RT_ENOTFOUND ? RT_OK : rc; /* an unknown namespace holds no task */
}

/* The status token of a task-group listing entry when its task has this label (tags.label,
 * else metadata.name) and is not exclude_task_id; -1 otherwise. */
static int status_of_label(const rt_jscan *js, int entry, const char *label,
                           const char *exclude_task_id)
{
    int task = rt_js_get(js, entry, "task");
    int l = rt_js_get(js, rt_js_get(js, task, "tags"), "label");
    if (rt_js_type_of(js, l) != RT_JS_STRING)
        l = rt_js_get(js, rt_js_get(js, task, "metadata"), "name");
    if (!rt_js_streq(js, l, label)) return -1;
    int status = rt_js_get(js, entry, "status");
    if (exclude_task_id && rt_js_streq(js, rt_js_get(js, status, "taskId"), exclude_task_id))
        return -1;
    return status;
}

typedef struct label_runs {
    const char *label, *exclude_task_id;
    rt_tc_run *out;
    size_t max, n;
} label_runs;

static bool copy_short(const rt_jscan *js, int i, char *out, size_t size)
{
    if (rt_js_type_of(js, i) != RT_JS_STRING || rt_js_strlen(js, i) >= size) return false;
    char *s = rt_js_strdup(js, i);
    if (!s) return false;
    memcpy(out, s, strlen(s) + 1);
    free(s);
    return true;
}

static int label_runs_page(void *ctx, const listing_page *pg, bool *stop, char *errstr)
{
    label_runs *c = ctx;
    const rt_jscan *js = pg->js;
    (void)stop;
    (void)errstr;
    int tasks = rt_js_get(js, 0, "tasks");
    if (rt_js_type_of(js, tasks) != RT_JS_ARRAY) return RT_OK;
    for (int e = rt_js_first(js, tasks); e >= 0; e = rt_js_after(js, tasks, e)) {
        int status = status_of_label(js, e, c->label, c->exclude_task_id);
        if (status < 0) continue;
        int id = rt_js_get(js, status, "taskId");
        rt_tc_run run = {0};
        if (!copy_short(js, id, run.task_id, sizeof run.task_id) || !rt_valid_task_id(run.task_id))
            continue;
        /* Its latest run, else the task's own state (no run yet). */
        int runs = rt_js_get(js, status, "runs"), last = -1;
        for (int r = rt_js_type_of(js, runs) == RT_JS_ARRAY ? rt_js_first(js, runs) : -1; r >= 0;
             r = rt_js_after(js, runs, r))
            last = r;
        int state = last >= 0 ? rt_js_get(js, last, "state") : rt_js_get(js, status, "state");
        int run_id = last >= 0 ? rt_js_get(js, last, "runId") : -1;
        if (!copy_short(js, state, run.state, sizeof run.state)) continue;
        if (run_id >= 0 && rt_js_type_of(js, run_id) == RT_JS_INTEGER) {
            long long v = rt_js_integer(js, run_id);
            if (v < 0 || v > 1000) continue;
            run.run_id = (int)v;
        }
        if (c->n < c->max) c->out[c->n] = run;
        c->n++;
    }
    return RT_OK;
}

int rt_tc_label_runs_in_group(rt_http *h, const char *root_url, const char *task_group_id,
                              const char *label, const char *exclude_task_id, rt_tc_run *out,
                              size_t max, size_t *n, char *errstr)
{
    label_runs c = {label, exclude_task_id, out, max, 0};
    int rc = each_group_page(h, root_url, task_group_id, false, label_runs_page, &c, errstr);
    *n = c.n;
    return rc;
}

/* Does an action task's extra.action name this label or task? */
static bool action_matches(json_t *task, const char *action_name, const char *label,
                           const char *task_id)
{
    json_t *extra_action = json_object_get(json_object_get(task, "extra"), "action");
    const char *name = json_string_value(json_object_get(json_object_get(task, "tags"), "action"));
    if (!name) name = json_string_value(json_object_get(extra_action, "name"));
    if (!name || strcmp(name, action_name) != 0 || !json_is_object(extra_action)) return false;
    json_t *where = json_object_get(extra_action, "context");
    if (!json_is_object(where)) where = extra_action;
    const char *for_task = json_string_value(json_object_get(where, "taskId"));
    if (task_id && for_task && !strcmp(for_task, task_id)) return true;
    json_t *input = json_object_get(where, "input");
    size_t i, k;
    json_t *request, *t;
    json_array_foreach(json_object_get(input, "tasks"), k, t) /* add-new-jobs */
    {
        if (json_is_string(t) && label && !strcmp(json_string_value(t), label)) return true;
    }
    json_array_foreach(json_object_get(input, "requests"), i, request)
    {
        json_array_foreach(json_object_get(request, "tasks"), k, t)
        {
            if (json_is_string(t) && label && !strcmp(json_string_value(t), label)) return true;
        }
    }
    return false;
}

typedef struct action_search {
    const char *action_name, *label, *task_id;
    const char *const *except;
    size_t nexcept;
    char *out;
    bool found;
} action_search;

static bool excepted(const action_search *a, const char *id)
{
    for (size_t i = 0; i < a->nexcept; i++)
        if (a->except[i] && !strcmp(a->except[i], id)) return true;
    return false;
}

static bool find_action(void *ctx, const char *id, json_t *status, json_t *task)
{
    (void)status;
    action_search *a = ctx;
    if (id && rt_valid_task_id(id) && !excepted(a, id) &&
        action_matches(task, a->action_name, a->label, a->task_id)) {
        memcpy(a->out, id, 23);
        a->found = true;
    }
    return a->found;
}

int rt_tc_find_action_task(rt_http *h, const char *root_url, const char *task_group_id,
                           const char *action_name, const char *label, const char *task_id,
                           char action_task_id[23], bool *found, char *errstr)
{
    return rt_tc_find_action_task_except(h, root_url, task_group_id, action_name, label, task_id,
                                         NULL, 0, action_task_id, found, errstr);
}

int rt_tc_find_action_task_except(rt_http *h, const char *root_url, const char *task_group_id,
                                  const char *action_name, const char *label, const char *task_id,
                                  const char *const *except, size_t nexcept,
                                  char action_task_id[23], bool *found, char *errstr)
{
    action_task_id[0] = '\0';
    action_search a = {action_name, label, task_id, except, nexcept, action_task_id, false};
    int rc = rt_tc_each_group_task(h, root_url, task_group_id, find_action, &a, errstr);
    *found = a.found;
    return rc;
}

/* String token i decoded into out (cut to fit); out unchanged when i is not a string. */
static void scan_string(const rt_jscan *js, int i, char *out, size_t size)
{
    if (rt_js_type_of(js, i) != RT_JS_STRING) return;
    char *s = rt_js_strdup(js, i);
    if (s) snprintf(out, size, "%s", s);
    free(s);
}

int rt_th_job_for_task(rt_http *h, const char *treeherder_url, const char *task_id, int run_id,
                       rt_th_job *job, bool *found, char *errstr)
{
    memset(job, 0, sizeof *job);
    *found = false;
    if (!rt_valid_task_id(task_id)) {
        rt_set_errstr(errstr, "invalid task id");
        return RT_EINVAL;
    }
    char path[128];
    snprintf(path, sizeof path, "/api/jobs/?task_id=%s", task_id);
    char *url = join(treeherder_url, path);
    if (!url) return RT_ENOMEM;
    rt_jscan js;
    rt_jscan_init(&js);
    char *text = NULL;
    int rc = get_scan(h, url, &js, &text, errstr);
    free(url);
    if (rc != RT_OK) return rc;
    int names = rt_js_get(&js, 0, "job_property_names");
    int results = rt_js_get(&js, 0, "results");
    if (rt_js_type_of(&js, results) != RT_JS_ARRAY ||
        (rt_js_first(&js, results) >= 0 && rt_js_type_of(&js, names) != RT_JS_ARRAY)) {
        rt_set_errstr(errstr, "Treeherder jobs for %s: no results/job_property_names", task_id);
        rc = RT_EPROTO;
        goto out;
    }
    for (int row = rt_js_first(&js, results); row >= 0; row = rt_js_after(&js, results, row)) {
        if (rt_js_type_of(&js, row) != RT_JS_ARRAY) continue;
        rt_th_job candidate = {0};
        /* The row's values in the order of the names. An integer field of another type, or
         * out of its range, fails the answer: it must never wrap into an ordinary value
         * (classification 4294967297 is not 1, not classified). null reads as 0. */
        static const struct {
            const char *name;
            long long max;
        } ints[] = {{"id", LONG_MAX},
                    {"failure_classification_id", 1000},
                    {"tier", 100},
                    {"retry_id", 1000},
                    {"push_id", LONG_MAX}};
        int v = rt_js_first(&js, row);
        for (int n = rt_js_first(&js, names); n >= 0 && v >= 0;
             n = rt_js_after(&js, names, n), v = rt_js_after(&js, row, v)) {
            if (rt_js_type_of(&js, n) != RT_JS_STRING) continue;
            size_t k = 0;
            while (k < sizeof ints / sizeof *ints && !rt_js_streq(&js, n, ints[k].name)) k++;
            if (k < sizeof ints / sizeof *ints) {
                long long value = 0;
                if (rt_js_type_of(&js, v) != RT_JS_NULL &&
                    !rt_js_integer_in(&js, v, 0, ints[k].max, &value)) {
                    rt_set_errstr(errstr,
                                  "Treeherder jobs for %s: %s is not an integer from 0 to %lld",
                                  task_id, ints[k].name, ints[k].max);
                    rc = RT_EPROTO;
                    goto out;
                }
                switch (k) {
                case 0: candidate.id = (long)value; break;
                case 1: candidate.failure_classification_id = (int)value; break;
                case 2: candidate.tier = (int)value; break;
                case 3: candidate.retry_id = (int)value; break;
                default: candidate.push_id = (long)value; break;
                }
            } else if (rt_js_streq(&js, n, "result"))
                scan_string(&js, v, candidate.result, sizeof candidate.result);
            else if (rt_js_streq(&js, n, "state"))
                scan_string(&js, v, candidate.state, sizeof candidate.state);
        }
        if (!*found || candidate.retry_id == run_id) {
            bool exact = candidate.retry_id == run_id;
            *job = candidate;
            *found = true;
            if (exact) break;
        }
    }
out:
    rt_jscan_free(&js);
    free(text);
    return rc;
}

int rt_th_job_logs(rt_http *h, const char *treeherder_url, const char *project, long job_id,
                   rt_th_logs *logs, char *errstr)
{
    memset(logs, 0, sizeof *logs);
    if (!rt_valid_project(project) || job_id <= 0) {
        rt_set_errstr(errstr, "invalid project or job id");
        return RT_EINVAL;
    }
    char path[256];
    snprintf(path, sizeof path, "/api/project/%s/job-log-url/?job_id=%ld", project, job_id);
    char *url = join(treeherder_url, path);
    if (!url) return RT_ENOMEM;
    char *body = NULL;
    size_t len = 0;
    int rc = get(h, url, &body, &len, errstr);
    if (rc != RT_OK) {
        free(url);
        return rc;
    }
    json_error_t error;
    json_t *doc = json_loadb(body, len, 0, &error);
    free(body);
    if (!json_is_array(doc)) {
        rt_set_errstr(errstr, "GET %s: answer is not a JSON list", url);
        json_decref(doc);
        free(url);
        return RT_EPROTO;
    }
    free(url);
    size_t i;
    json_t *entry;
    json_array_foreach(doc, i, entry)
    {
        const char *status = json_string_value(json_object_get(entry, "parse_status"));
        if (!status) continue;
        logs->total++;
        if (!strcmp(status, "pending"))
            logs->pending++;
        else if (!strcmp(status, "parsed"))
            logs->parsed++;
        else
            logs->unusable++; /* failed, skipped-size */
    }
    json_decref(doc);
    return RT_OK;
}

int rt_th_bug_suggestions(rt_http *h, const char *treeherder_url, const char *project, long job_id,
                          char **body, size_t *len, char *errstr)
{
    if (!rt_valid_project(project) || job_id <= 0) {
        rt_set_errstr(errstr, "invalid project or job id");
        return RT_EINVAL;
    }
    char path[256];
    snprintf(path, sizeof path, "/api/project/%s/jobs/%ld/bug_suggestions/", project, job_id);
    char *url = join(treeherder_url, path);
    if (!url) return RT_ENOMEM;
    int rc = get(h, url, body, len, errstr);
    free(url);
    return rc;
}

/* ---- a project's pushes ---- */

static bool hex40(const char *s)
{
    if (!s || strlen(s) != 40) return false;
    for (const char *p = s; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'))) return false;
    return true;
}

static int newest_first(const void *a, const void *b)
{
    const rt_th_push *x = a, *y = b;
    if (x->push_timestamp != y->push_timestamp)
        return x->push_timestamp > y->push_timestamp ? -1 : 1;
    return x->id > y->id ? -1 : x->id < y->id;
}

int rt_th_pushes_before(rt_http *h, const char *treeherder_url, const char *project, long before_id,
                        int count, rt_th_push *out, size_t max, size_t *n, char *errstr)
{
    *n = 0;
    if (!rt_valid_project(project) || before_id <= 0 || count < 1 || count > RT_TH_MAX_PUSHES ||
        (size_t)count > max) {
        rt_set_errstr(errstr, "invalid project, push id or count");
        return RT_EINVAL;
    }
    char path[256];
    snprintf(path, sizeof path, "/api/project/%s/push/?id__lt=%ld&count=%d", project, before_id,
             count);
    char *url = join(treeherder_url, path);
    if (!url) return RT_ENOMEM;
    json_t *doc = NULL;
    int rc = get_json(h, url, &doc, errstr);
    free(url);
    if (rc != RT_OK) return rc;
    json_t *results = json_object_get(doc, "results");
    if (!json_is_array(results) || json_array_size(results) > (size_t)count) {
        rt_set_errstr(errstr, "Treeherder pushes of %s: no 'results' list of at most %d", project,
                      count);
        json_decref(doc);
        return RT_EPROTO;
    }
    size_t i;
    json_t *push;
    json_array_foreach(results, i, push)
    {
        json_t *id = json_object_get(push, "id"), *stamp = json_object_get(push, "push_timestamp");
        const char *revision = json_string_value(json_object_get(push, "revision"));
        const char *author = json_string_value(json_object_get(push, "author"));
        if (!json_is_integer(id) || json_integer_value(id) <= 0 ||
            json_integer_value(id) >= before_id || !hex40(revision) || !author ||
            (stamp && !json_is_integer(stamp))) {
            rt_set_errstr(errstr, "Treeherder pushes of %s: entry %zu is not a push before %ld",
                          project, i, before_id);
            json_decref(doc);
            *n = 0;
            return RT_EPROTO;
        }
        rt_th_push *p = &out[(*n)++];
        p->id = (long)json_integer_value(id);
        memcpy(p->revision, revision, 41);
        rt_utf8_copy(p->author, sizeof p->author, author, NULL);
        p->push_timestamp = stamp ? (long long)json_integer_value(stamp) : 0;
    }
    json_decref(doc);
    qsort(out, *n, sizeof *out, newest_first);
    return RT_OK;
}

#define LABEL_JOBS_PAGE 500

int rt_th_push_label_jobs(rt_http *h, const char *treeherder_url, const char *project, long push_id,
                          const char *label, rt_th_label_job *out, size_t max, size_t *n,
                          char *errstr)
{
    *n = 0;
    if (!rt_valid_project(project) || push_id <= 0 || !rt_valid_label(label)) {
        rt_set_errstr(errstr, "invalid project, push id or label");
        return RT_EINVAL;
    }
    char *escaped = rt_http_url_escape(label);
    if (!escaped) return RT_ENOMEM;
    int rc = RT_OK;
    for (size_t offset = 0;; offset += LABEL_JOBS_PAGE) {
        if (offset >= RT_TH_MAX_LABEL_JOBS) {
            rt_set_errstr(errstr, "Treeherder lists more than %d jobs of one label on push %ld",
                          RT_TH_MAX_LABEL_JOBS, push_id);
            rc = RT_ETOOBIG;
            break;
        }
        size_t size = strlen(escaped) + 256;
        char *path = malloc(size);
        if (!path) {
            rc = RT_ENOMEM;
            break;
        }
        snprintf(path, size,
                 "/api/project/%s/jobs/?push_id=%ld&job_type_name=%s&return_type=list&count=%d"
                 "&offset=%zu",
                 project, push_id, escaped, LABEL_JOBS_PAGE, offset);
        char *url = join(treeherder_url, path);
        free(path);
        json_t *doc = NULL;
        rc = url ? get_json(h, url, &doc, errstr) : RT_ENOMEM;
        free(url);
        if (rc != RT_OK) break;
        json_t *names = json_object_get(doc, "job_property_names");
        json_t *results = json_object_get(doc, "results");
        size_t rows = json_array_size(results);
        if (!json_is_array(results) || (rows && !json_is_array(names))) {
            rt_set_errstr(errstr, "Treeherder jobs of push %ld: no results/job_property_names",
                          push_id);
            json_decref(doc);
            rc = RT_EPROTO;
            break;
        }
        size_t r;
        json_t *row;
        json_array_foreach(results, r, row)
        {
            rt_th_label_job job = {0};
            size_t k;
            json_t *name;
            json_array_foreach(names, k, name)
            {
                const char *key = json_string_value(name);
                json_t *v = json_array_get(row, k);
                if (!key || !v) continue;
                if (!strcmp(key, "id") && json_is_integer(v) && json_integer_value(v) > 0 &&
                    json_integer_value(v) < LONG_MAX)
                    job.id = (long)json_integer_value(v);
                else if (!strcmp(key, "retry_id") && json_is_integer(v) &&
                         json_integer_value(v) >= 0 && json_integer_value(v) <= 1000)
                    job.retry_id = (int)json_integer_value(v);
                else if (!strcmp(key, "task_id") && json_is_string(v) &&
                         rt_valid_task_id(json_string_value(v)))
                    memcpy(job.task_id, json_string_value(v), 23);
                else if (!strcmp(key, "state") && json_is_string(v))
                    rt_utf8_copy(job.state, sizeof job.state, json_string_value(v), NULL);
                else if (!strcmp(key, "result") && json_is_string(v))
                    rt_utf8_copy(job.result, sizeof job.result, json_string_value(v), NULL);
            }
            if (!json_is_array(row) || job.id <= 0) {
                rt_set_errstr(errstr, "Treeherder jobs of push %ld: row %zu has no job id", push_id,
                              offset + r);
                rc = RT_EPROTO;
                break;
            }
            if (*n < max) out[*n] = job;
            (*n)++;
        }
        json_decref(doc);
        if (rc != RT_OK || rows < LABEL_JOBS_PAGE) break;
    }
    free(escaped);
    if (rc != RT_OK) *n = 0;
    return rc;
}

int rt_tc_push_decision_task(rt_http *h, const char *root_url, const char *project,
                             const char *revision, char decision_task_id[23], long *pushlog_id,
                             rt_taskdef *def, char *errstr)
{
    decision_task_id[0] = '\0';
    *pushlog_id = 0;
    char ns[RT_TC_MAX_NAMESPACE + 1];
    int len = snprintf(ns, sizeof ns, "gecko.v2.%s.revision.%s.taskgraph.decision",
                       project ? project : "", revision ? revision : "");
    if (len < 0 || (size_t)len >= sizeof ns || !rt_tc_valid_namespace(ns) || !hex40(revision)) {
        rt_set_errstr(errstr, "invalid project or revision for the index");
        return RT_EINVAL;
    }
    char path[RT_TC_MAX_NAMESPACE + 64];
    snprintf(path, sizeof path, "/api/index/v1/task/%s", ns);
    char *url = join(root_url, path);
    if (!url) return RT_ENOMEM;
    json_t *entry = NULL;
    int rc = get_json(h, url, &entry, errstr);
    free(url);
    if (rc != RT_OK) return rc;
    const char *id = json_string_value(json_object_get(entry, "taskId"));
    if (!id || !rt_valid_task_id(id)) {
        rt_set_errstr(errstr, "index entry %s has no valid taskId", ns);
        json_decref(entry);
        return RT_EPROTO;
    }
    char task_id[23];
    memcpy(task_id, id, 23);
    json_decref(entry);
    char *body = NULL;
    size_t blen = 0;
    if ((rc = rt_tc_get_task(h, root_url, task_id, &body, &blen, errstr)) != RT_OK) return rc;
    rt_taskdef parsed = {0};
    char reason[128] = "";
    rc = rt_taskdef_parse(body, blen, RT_TC_MAX_DECISION_BYTES, &parsed, reason);
    free(body);
    if (rc != RT_OK) {
        rt_set_errstr(errstr, "decision task %s: %s", task_id, reason);
        return rc == RT_ENOMEM ? rc : RT_EPROTO;
    }
    char *end = NULL;
    long pushlog = parsed.pushlog_id ? strtol(parsed.pushlog_id, &end, 10) : 0;
    if (!parsed.project || strcmp(parsed.project, project) || !parsed.revision ||
        strcmp(parsed.revision, revision) || (parsed.pushlog_id && (*end || pushlog <= 0))) {
        rt_set_errstr(errstr, "task %s indexed as %s is not that push's decision task", task_id,
                      ns);
        rt_taskdef_free(&parsed);
        return RT_EPROTO;
    }
    memcpy(decision_task_id, task_id, 23);
    *pushlog_id = pushlog;
    if (def)
        *def = parsed;
    else
        rt_taskdef_free(&parsed);
    return RT_OK;
}

int rt_tc_trigger_hook(rt_http *h, const char *root_url, const char *hook_group_id,
                       const char *hook_id, const char *payload, const rt_hawk_credentials *creds,
                       int (*record_call)(void *ctx, char *errstr), void *ctx,
                       char action_task_id[23], rt_hook_stage *stage, long *status, char *errstr)
{
    char *group = rt_http_url_escape(hook_group_id), *hook = rt_http_url_escape(hook_id);
    char *url = NULL, *auth = NULL;
    rt_http_response resp = {0};
    int rc = RT_ENOMEM;
    *stage = RT_HOOK_SIGNING;
    *status = 0;
    if (!group || !hook ||
        asprintf(&url, "%s/api/hooks/v1/hooks/%s/%s/trigger", root_url, group, hook) < 0) {
        url = NULL;
        rt_set_errstr(errstr, "cannot sign the hook call: %s", rt_strerror(rc));
        goto out;
    }
    char nonce[RT_HAWK_NONCE_SIZE];
    if ((rc = rt_hawk_nonce(nonce)) != RT_OK ||
        (rc = rt_hawk_header(creds, "POST", url, payload, "application/json", (long)time(NULL),
                             nonce, &auth)) != RT_OK) {
        rt_set_errstr(errstr, "cannot sign the hook call: %s", rt_strerror(rc));
        goto out;
    }
    *stage = RT_HOOK_RECORDING;
    if ((rc = record_call(ctx, errstr)) != RT_OK) goto out;
    *stage = RT_HOOK_SENDING;
    rt_http_header headers[] = {{"Authorization", auth}, {"Content-Type", "application/json"}};
    rc = rt_http_request(h, "POST", url, headers, 2, payload, strlen(payload), &resp);
    *status = resp.status;
    if (rc == RT_OK) {
        json_error_t error;
        json_t *doc = json_loadb(resp.body, resp.len, 0, &error);
        const char *id =
            json_string_value(json_object_get(json_object_get(doc, "status"), "taskId"));
        if (id && strlen(id) == 22) {
            memcpy(action_task_id, id, 23);
        } else {
            rc = RT_EPROTO;
            rt_set_errstr(errstr, "hook answer without status.taskId");
        }
        json_decref(doc);
    } else if (resp.status == 401 || resp.status == 403) {
        rt_set_errstr(errstr,
                      "taskcluster refused the hook call (HTTP %ld): client %s needs scope "
                      "hooks:trigger-hook:%s/%s",
                      resp.status, creds->client_id, hook_group_id, hook_id);
        rc = RT_EAUTH;
    } else {
        rt_set_errstr(errstr, "hook trigger: %s", rt_http_errstr(h));
    }
out:
    rt_http_response_free(&resp);
    free(group);
    free(hook);
    free(url);
    free(auth);
    return rc;
}
