/* SPDX-License-Identifier: MPL-2.0 */
/* upstream.c - Taskcluster queue, index and Treeherder REST calls. */
#include "common/upstream.h"

#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ids.h"

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

/* Called with each page of a Taskcluster listing; returns RT_OK to go on, RT_OK with
 * *stop set to end early, or an error (which ends the walk with it). */
typedef int page_fn(void *ctx, json_t *doc, bool *stop, char *errstr);

/* Walks a paginated Taskcluster listing: GET <root><path>[?&]continuationToken=... for at
 * most max_pages pages, calling fn with each. `path` already holds its query string, if
 * any. A 404 on the first page is RT_ENOTFOUND. */
static int each_page(rt_http *h, const char *root_url, const char *path, int max_pages, page_fn *fn,
                     void *ctx, char *errstr)
{
    char *token = NULL;
    int rc = RT_OK;
    bool stop = false;
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
        json_t *doc = NULL;
        rc = get_json(h, url, &doc, errstr);
        free(url);
        if (rc != RT_OK) break;
        rc = fn(ctx, doc, &stop, errstr);
        free(token);
        token = NULL;
        const char *next = json_string_value(json_object_get(doc, "continuationToken"));
        if (rc == RT_OK && next && *next && strlen(next) < 300 && !(token = strdup(next)))
            rc = RT_ENOMEM;
        json_decref(doc);
        if (rc != RT_OK || !token) break;
    }
    free(token);
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

static int artifact_page(void *ctx, json_t *doc, bool *stop, char *errstr)
{
    artifact_walk *w = ctx;
    (void)stop;
    json_t *artifacts = json_object_get(doc, "artifacts");
    if (!json_is_array(artifacts)) {
        rt_set_errstr(errstr, "artifact list of %s run %d has no 'artifacts' array", w->task_id,
                      w->run_id);
        return RT_EPROTO;
    }
    size_t i;
    json_t *a;
    json_array_foreach(artifacts, i, a)
    {
        const char *name = json_string_value(json_object_get(a, "name"));
        if (!name || w->out->count >= RT_TC_MAX_ARTIFACTS) continue;
        char **grown = realloc(w->out->names, (w->out->count + 1) * sizeof *grown);
        if (!grown) return RT_ENOMEM;
        w->out->names = grown;
        if (!(grown[w->out->count] = strdup(name))) return RT_ENOMEM;
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
    int rc = each_page(h, root_url, path, 1000, artifact_page, &w, errstr);
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

static int group_page(void *ctx, json_t *doc, bool *stop, char *errstr)
{
    callback_walk *w = ctx;
    rt_tc_task_fn *fn = w->task_fn;
    (void)errstr;
    size_t i;
    json_t *entry;
    json_array_foreach(json_object_get(doc, "tasks"), i, entry)
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

int rt_tc_each_group_task(rt_http *h, const char *root_url, const char *task_group_id,
                          rt_tc_task_fn *fn, void *ctx, char *errstr)
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
    callback_walk w = {.task_fn = fn, .ctx = ctx, .what = task_group_id};
    return each_page(h, root_url, path, RT_TC_MAX_GROUP_PAGES, group_page, &w, errstr);
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

static int index_page(void *ctx, json_t *doc, bool *stop, char *errstr)
{
    callback_walk *w = ctx;
    rt_tc_indexed_fn *fn = w->indexed_fn;
    json_t *tasks = json_object_get(doc, "tasks");
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
    int rc = each_page(h, root_url, path, RT_TC_MAX_INDEX_PAGES, index_page, &w, errstr);
    return rc == RT_ENOTFOUND ? RT_OK : rc; /* an unknown namespace holds no task */
}

typedef struct label_count {
    const char *label, *exclude_task_id;
    int count;
} label_count;

static bool count_label(void *ctx, const char *id, json_t *status, json_t *task)
{
    (void)status;
    label_count *c = ctx;
    const char *l = json_string_value(json_object_get(json_object_get(task, "tags"), "label"));
    if (!l) l = json_string_value(json_object_get(json_object_get(task, "metadata"), "name"));
    if (l && !strcmp(l, c->label) && !(id && c->exclude_task_id && !strcmp(id, c->exclude_task_id)))
        c->count++;
    return false;
}

int rt_tc_count_label_in_group(rt_http *h, const char *root_url, const char *task_group_id,
                               const char *label, const char *exclude_task_id, int *count,
                               char *errstr)
{
    label_count c = {label, exclude_task_id, 0};
    int rc = rt_tc_each_group_task(h, root_url, task_group_id, count_label, &c, errstr);
    *count = c.count;
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
    char *out;
    bool found;
} action_search;

static bool find_action(void *ctx, const char *id, json_t *status, json_t *task)
{
    (void)status;
    action_search *a = ctx;
    if (id && rt_valid_task_id(id) && action_matches(task, a->action_name, a->label, a->task_id)) {
        memcpy(a->out, id, 23);
        a->found = true;
    }
    return a->found;
}

int rt_tc_find_action_task(rt_http *h, const char *root_url, const char *task_group_id,
                           const char *action_name, const char *label, const char *task_id,
                           char action_task_id[23], bool *found, char *errstr)
{
    action_task_id[0] = '\0';
    action_search a = {action_name, label, task_id, action_task_id, false};
    int rc = rt_tc_each_group_task(h, root_url, task_group_id, find_action, &a, errstr);
    *found = a.found;
    return rc;
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
    json_t *doc = NULL;
    int rc = get_json(h, url, &doc, errstr);
    free(url);
    if (rc != RT_OK) return rc;
    json_t *names = json_object_get(doc, "job_property_names");
    json_t *results = json_object_get(doc, "results");
    if (!json_is_array(results) || (json_array_size(results) > 0 && !json_is_array(names))) {
        rt_set_errstr(errstr, "Treeherder jobs for %s: no results/job_property_names", task_id);
        json_decref(doc);
        return RT_EPROTO;
    }
    size_t i, k;
    json_t *row, *name;
    json_array_foreach(results, i, row)
    {
        if (!json_is_array(row)) continue;
        rt_th_job candidate = {0};
        json_array_foreach(names, k, name)
        {
            const char *n = json_string_value(name);
            json_t *v = json_array_get(row, k);
            if (!n || !v) continue;
            if (!strcmp(n, "id"))
                candidate.id = (long)json_integer_value(v);
            else if (!strcmp(n, "failure_classification_id"))
                candidate.failure_classification_id = (int)json_integer_value(v);
            else if (!strcmp(n, "tier"))
                candidate.tier = (int)json_integer_value(v);
            else if (!strcmp(n, "retry_id"))
                candidate.retry_id = (int)json_integer_value(v);
            else if (!strcmp(n, "push_id"))
                candidate.push_id = (long)json_integer_value(v);
            else if (!strcmp(n, "result") && json_is_string(v))
                snprintf(candidate.result, sizeof candidate.result, "%s", json_string_value(v));
            else if (!strcmp(n, "state") && json_is_string(v))
                snprintf(candidate.state, sizeof candidate.state, "%s", json_string_value(v));
        }
        if (!*found || candidate.retry_id == run_id) {
            bool exact = candidate.retry_id == run_id;
            *job = candidate;
            *found = true;
            if (exact) break;
        }
    }
    json_decref(doc);
    return RT_OK;
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
