/* SPDX-License-Identifier: MPL-2.0 */
/* issue_tracker.c - GitHub Issues and Bugzilla behind rt_tracker_ops. */
#include "common/issue_tracker.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/flaky_issue.h"
#include "common/core/github.h"
#include "common/io/github_client.h"
#include "common/io/http.h"
#include "common/options.h"

#define MAX_ISSUE_PAGES 100

void rt_tracker_free(rt_tracker *t)
{
    if (t) t->ops->free(t);
}

/* ---- GitHub ---- */

typedef struct gh_tracker {
    rt_tracker base;
    rt_gh_client *gh;
    char repo[256];
    char *label;
    bool listed;
    rt_gh_issues known; /* every issue with the label */
} gh_tracker;

static int gh_send(gh_tracker *t, const char *method, const char *path, json_t *payload,
                   rt_gh_response *resp)
{
    char *body = payload ? json_dumps(payload, JSON_COMPACT) : NULL;
    json_decref(payload);
    if (!body) {
        memset(resp, 0, sizeof *resp);
        rt_set_errstr(t->base.errstr, "out of memory");
        return RT_ENOMEM;
    }
    int rc = rt_gh_request(t->gh, method, path, NULL, body, resp);
    free(body);
    if (rc != RT_OK) rt_set_errstr(t->base.errstr, "%s", rt_gh_client_errstr(t->gh));
    return rc;
}

static int gh_list(gh_tracker *t)
{
    char *label = rt_http_url_escape(t->label);
    char first[600];
    if (!label) return RT_ENOMEM;
    snprintf(first, sizeof first, "/repos/%s/issues?labels=%s&state=all&per_page=100", t->repo,
             label);
    free(label);
    char *url = strdup(first);
    int rc = url ? RT_OK : RT_ENOMEM;
    for (int page = 0; rc == RT_OK && url && page < MAX_ISSUE_PAGES; page++) {
        rt_gh_response resp;
        rc = rt_gh_request(t->gh, "GET", url, NULL, NULL, &resp);
        free(url);
        url = NULL;
        rt_gh_issues part;
        if (rc == RT_OK)
            rc = rt_gh_parse_issues(resp.body, resp.len, &part, t->base.errstr);
        else
            rt_set_errstr(t->base.errstr, "%s", rt_gh_client_errstr(t->gh));
        if (rc == RT_OK) {
            rt_gh_issue *grown =
                realloc(t->known.items, (t->known.count + part.count + 1) * sizeof *grown);
            if (!grown) {
                rt_gh_issues_free(&part);
                rc = RT_ENOMEM;
            } else {
                t->known.items = grown;
                if (part.count)
                    memcpy(grown + t->known.count, part.items, part.count * sizeof *grown);
                t->known.count += part.count;
                free(part.items);
                url = rt_gh_link_next(resp.link);
            }
        }
        rt_gh_response_free(&resp);
    }
    free(url);
    if (rc == RT_OK) t->listed = true;
    return rc;
}

static void issue_of(const rt_gh_issue *i, rt_tracker_issue *out)
{
    memset(out, 0, sizeof *out);
    out->number = i->number;
    snprintf(out->url, sizeof out->url, "%s", i->html_url);
    out->open = !strcmp(i->state, "open");
}

/* The figures comment of an issue found again (0 when it has none yet). */
static int gh_figures_comment(gh_tracker *t, rt_tracker_issue *issue)
{
    char first[300];
    snprintf(first, sizeof first, "/repos/%s/issues/%lld/comments?per_page=100", t->repo,
             issue->number);
    char *url = strdup(first);
    int rc = url ? RT_OK : RT_ENOMEM;
    for (int page = 0; rc == RT_OK && url && page < 10 && !issue->comment_id; page++) {
        rt_gh_response resp;
        rc = rt_gh_request(t->gh, "GET", url, NULL, NULL, &resp);
        free(url);
        url = NULL;
        rt_gh_comments comments;
        if (rc == RT_OK)
            rc = rt_gh_parse_comments(resp.body, resp.len, &comments, t->base.errstr);
        else
            rt_set_errstr(t->base.errstr, "%s", rt_gh_client_errstr(t->gh));
        if (rc == RT_OK) {
            for (size_t i = 0; i < comments.count && !issue->comment_id; i++)
                if (!strcmp(comments.items[i].body_head, RT_FLAKY_FIGURES_HEAD))
                    issue->comment_id = comments.items[i].id;
            rt_gh_comments_free(&comments);
            url = rt_gh_link_next(resp.link);
        }
        rt_gh_response_free(&resp);
    }
    free(url);
    return rc;
}

static int gh_find(rt_tracker *base, const char *marker, rt_tracker_issue *out)
{
    gh_tracker *t = (gh_tracker *)base;
    if (!t->listed) {
        int rc = gh_list(t);
        if (rc != RT_OK) return rc;
    }
    for (size_t i = 0; i < t->known.count; i++) {
        const rt_gh_issue *issue = &t->known.items[i];
        if (issue->pull_request || !rt_flaky_marker_matches(issue->body_head, marker)) continue;
        issue_of(issue, out);
        return gh_figures_comment(t, out);
    }
    return RT_ENOTFOUND;
}

static int gh_create(rt_tracker *base, const char *test, const char *title, const char *body,
                     const char *marker, rt_tracker_issue *out)
{
    gh_tracker *t = (gh_tracker *)base;
    char path[300];
    snprintf(path, sizeof path, "/repos/%s/issues", t->repo);
    rt_gh_response resp;
    int rc = gh_send(t, "POST", path, rt_flaky_github_issue(title, body, t->label), &resp);
    rt_gh_issue issue;
    if (rc == RT_OK) rc = rt_gh_parse_issue(resp.body, resp.len, &issue, t->base.errstr);
    rt_gh_response_free(&resp);
    if (rc != RT_OK) return rc;
    issue_of(&issue, out);
    /* remembered, so a second find in this run sees it */
    rt_gh_issue *grown = realloc(t->known.items, (t->known.count + 1) * sizeof *grown);
    if (grown) {
        t->known.items = grown;
        snprintf(issue.body_head, sizeof issue.body_head, "<!-- %s -->", marker);
        grown[t->known.count++] = issue;
    } else {
        rt_gh_issue_free(&issue);
    }
    (void)test;
    return RT_OK;
}

static int gh_comment(gh_tracker *t, const rt_tracker_issue *issue, const char *text, long long *id)
{
    char path[300];
    snprintf(path, sizeof path, "/repos/%s/issues/%lld/comments", t->repo, issue->number);
    rt_gh_response resp;
    int rc = gh_send(t, "POST", path, json_pack("{s:s}", "body", text), &resp);
    long long got = 0;
    if (rc == RT_OK) rc = rt_gh_parse_id(resp.body, resp.len, &got, t->base.errstr);
    rt_gh_response_free(&resp);
    if (id) *id = got;
    return rc;
}

static int gh_update(rt_tracker *base, rt_tracker_issue *issue, const char *comment)
{
    gh_tracker *t = (gh_tracker *)base;
    if (issue->comment_id > 0) {
        char path[300];
        snprintf(path, sizeof path, "/repos/%s/issues/comments/%lld", t->repo, issue->comment_id);
        rt_gh_response resp;
        int rc = gh_send(t, "PATCH", path, json_pack("{s:s}", "body", comment), &resp);
        rt_gh_response_free(&resp);
        if (rc != RT_ENOTFOUND) return rc; /* deleted by someone: write a new one */
    }
    return gh_comment(t, issue, comment, &issue->comment_id);
}

static int gh_state(gh_tracker *t, rt_tracker_issue *issue, bool open)
{
    char path[300];
    snprintf(path, sizeof path, "/repos/%s/issues/%lld", t->repo, issue->number);
    rt_gh_response resp;
    json_t *payload = open
                          ? json_pack("{s:s}", "state", "open")
                          : json_pack("{s:s, s:s}", "state", "closed", "state_reason", "completed");
    int rc = gh_send(t, "PATCH", path, payload, &resp);
    rt_gh_response_free(&resp);
    if (rc == RT_OK) issue->open = open;
    return rc;
}

static int gh_close(rt_tracker *base, rt_tracker_issue *issue, const char *comment)
{
    gh_tracker *t = (gh_tracker *)base;
    int rc = gh_comment(t, issue, comment, NULL);
    return rc == RT_OK ? gh_state(t, issue, false) : rc;
}

static int gh_reopen(rt_tracker *base, rt_tracker_issue *issue, const char *comment)
{
    gh_tracker *t = (gh_tracker *)base;
    int rc = gh_state(t, issue, true);
    return rc == RT_OK ? gh_comment(t, issue, comment, NULL) : rc;
}

static void gh_free(rt_tracker *base)
{
    gh_tracker *t = (gh_tracker *)base;
    rt_gh_client_free(t->gh);
    rt_gh_issues_free(&t->known);
    free(t->label);
    free(t);
}

static const rt_tracker_ops github_ops = {"github", gh_find,   gh_create, gh_update,
                                          gh_close, gh_reopen, gh_free};

int rt_tracker_github_new(rt_tracker **out, const rt_config *cfg, const char *repo,
                          const char *token, char *errstr)
{
    *out = NULL;
    if (!rt_gh_valid_repo(repo)) {
        rt_set_errstr(errstr, "not an OWNER/NAME repository: %s", repo);
        return RT_EINVAL;
    }
    gh_tracker *t = calloc(1, sizeof *t);
    if (!t) return RT_ENOMEM;
    t->base.ops = &github_ops;
    snprintf(t->repo, sizeof t->repo, "%s", repo);
    t->label = strdup(cfg->flaky_issue_label);
    rt_gh_client_options go = {.api_url = cfg->github_api_url,
                               .token = token,
                               .reserve = 0,
                               .connect_timeout_ms = cfg->http_connect_timeout_ms,
                               .timeout_ms = cfg->http_timeout_ms,
                               .secondary_wait_s = cfg->github_secondary_wait_s,
                               .ca_file = cfg->http_ca_file};
    int rc = t->label ? rt_gh_client_new(&t->gh, &go, errstr) : RT_ENOMEM;
    if (rc != RT_OK) {
        gh_free(&t->base);
        return rc;
    }
    *out = &t->base;
    return RT_OK;
}

/* ---- Bugzilla ---- */

typedef struct bz_tracker {
    rt_tracker base;
    rt_http *http;
    const rt_config *cfg;
    char *root; /* bugzilla_url without a trailing slash */
    char *key_header;
} bz_tracker;

static int bz_call(bz_tracker *t, const char *method, const char *path, json_t *payload,
                   json_t **answer)
{
    if (answer) *answer = NULL;
    char *body = NULL;
    if (payload) {
        body = json_dumps(payload, JSON_COMPACT);
        json_decref(payload);
        if (!body) return RT_ENOMEM;
    }
    size_t size = strlen(t->root) + strlen(path) + 1;
    char *url = malloc(size);
    if (!url) {
        free(body);
        return RT_ENOMEM;
    }
    snprintf(url, size, "%s%s", t->root, path);
    rt_http_header headers[] = {{"X-BUGZILLA-API-KEY", t->key_header ? t->key_header : ""},
                                {"Accept", "application/json"},
                                {"Content-Type", "application/json"}};
    rt_http_response resp;
    int rc = rt_http_request(t->http, method, url, headers, body ? 3 : 2, body,
                             body ? strlen(body) : 0, &resp);
    free(url);
    free(body);
    if (rc != RT_OK) {
        rt_set_errstr(t->base.errstr, "%s", rt_http_errstr(t->http));
        long status = resp.status;
        rt_http_response_free(&resp);
        return status == 404 ? RT_ENOTFOUND : rc;
    }
    if (answer) {
        json_error_t e;
        *answer = json_loadb(resp.body, resp.len, 0, &e);
        if (!*answer) {
            rt_set_errstr(t->base.errstr, "%s %s: answer is not JSON", method, path);
            rc = RT_EPROTO;
        }
    }
    rt_http_response_free(&resp);
    return rc;
}

static void bz_issue(bz_tracker *t, long long id, bool open, rt_tracker_issue *out)
{
    memset(out, 0, sizeof *out);
    out->number = id;
    out->open = open;
    snprintf(out->url, sizeof out->url, "%s/show_bug.cgi?id=%lld", t->root, id);
}

static int bz_find(rt_tracker *base, const char *marker, rt_tracker_issue *out)
{
    bz_tracker *t = (bz_tracker *)base;
    char whiteboard[RT_FLAKY_MARKER_SIZE + 2];
    snprintf(whiteboard, sizeof whiteboard, "[%s]", marker);
    char *escaped = rt_http_url_escape(whiteboard);
    if (!escaped) return RT_ENOMEM;
    char path[300];
    snprintf(path, sizeof path, "/rest/bug?whiteboard=%s&include_fields=id,status,whiteboard",
             escaped);
    free(escaped);
    json_t *answer = NULL;
    int rc = bz_call(t, "GET", path, NULL, &answer);
    if (rc != RT_OK) return rc;
    rc = RT_ENOTFOUND;
    size_t i;
    json_t *bug;
    json_array_foreach(json_object_get(answer, "bugs"), i, bug)
    {
        const char *wb = json_string_value(json_object_get(bug, "whiteboard"));
        const char *status = json_string_value(json_object_get(bug, "status"));
        json_t *id = json_object_get(bug, "id");
        if (!wb || !strstr(wb, whiteboard) || !json_is_integer(id) || json_integer_value(id) <= 0)
            continue;
        bool open = !status || (strcmp(status, "RESOLVED") && strcmp(status, "VERIFIED") &&
                                strcmp(status, "CLOSED"));
        bz_issue(t, (long long)json_integer_value(id), open, out);
        rc = RT_OK;
        break;
    }
    json_decref(answer);
    return rc;
}

static int bz_create(rt_tracker *base, const char *test, const char *title, const char *body,
                     const char *marker, rt_tracker_issue *out)
{
    bz_tracker *t = (bz_tracker *)base;
    char product[256], component[256];
    if (rt_flaky_bugzilla_component(&t->cfg->bugzilla_components, test, product, sizeof product,
                                    component, sizeof component) != RT_OK) {
        rt_set_errstr(t->base.errstr, "no bugzilla_components entry matches the test");
        return RT_ECONFIG;
    }
    json_t *bug =
        rt_flaky_bugzilla_bug(product, component, title, body, &t->cfg->bugzilla_keywords, marker);
    if (!bug) return RT_ENOMEM;
    json_t *answer = NULL;
    int rc = bz_call(t, "POST", "/rest/bug", bug, &answer);
    json_t *id = json_object_get(answer, "id");
    if (rc == RT_OK && (!json_is_integer(id) || json_integer_value(id) <= 0)) {
        rt_set_errstr(t->base.errstr, "POST /rest/bug: no bug id in the answer");
        rc = RT_EPROTO;
    }
    if (rc == RT_OK) bz_issue(t, (long long)json_integer_value(id), true, out);
    json_decref(answer);
    return rc;
}

static int bz_put(bz_tracker *t, rt_tracker_issue *issue, json_t *payload)
{
    if (!payload) return RT_ENOMEM;
    char path[64];
    snprintf(path, sizeof path, "/rest/bug/%lld", issue->number);
    return bz_call(t, "PUT", path, payload, NULL);
}

static int bz_update(rt_tracker *base, rt_tracker_issue *issue, const char *comment)
{
    return bz_put((bz_tracker *)base, issue, json_pack("{s:{s:s}}", "comment", "body", comment));
}

static int bz_close(rt_tracker *base, rt_tracker_issue *issue, const char *comment)
{
    int rc = bz_put((bz_tracker *)base, issue,
                    json_pack("{s:s, s:s, s:{s:s}}", "status", "RESOLVED", "resolution",
                              "WORKSFORME", "comment", "body", comment));
    if (rc == RT_OK) issue->open = false;
    return rc;
}

static int bz_reopen(rt_tracker *base, rt_tracker_issue *issue, const char *comment)
{
    int rc = bz_put((bz_tracker *)base, issue,
                    json_pack("{s:s, s:{s:s}}", "status", "REOPENED", "comment", "body", comment));
    if (rc == RT_OK) issue->open = true;
    return rc;
}

static void bz_free(rt_tracker *base)
{
    bz_tracker *t = (bz_tracker *)base;
    rt_http_free(t->http);
    free(t->root);
    free(t->key_header);
    free(t);
}

static const rt_tracker_ops bugzilla_ops = {"bugzilla", bz_find,   bz_create, bz_update,
                                            bz_close,   bz_reopen, bz_free};

int rt_tracker_bugzilla_new(rt_tracker **out, const rt_config *cfg, char *errstr)
{
    *out = NULL;
    if (!cfg->bugzilla_api_key || !*cfg->bugzilla_api_key) {
        rt_set_errstr(errstr, "bugzilla_api_key (or bugzilla_api_key_file) is not set");
        return RT_ECONFIG;
    }
    bz_tracker *t = calloc(1, sizeof *t);
    if (!t) return RT_ENOMEM;
    t->base.ops = &bugzilla_ops;
    t->cfg = cfg;
    size_t n = strlen(cfg->bugzilla_url);
    while (n && cfg->bugzilla_url[n - 1] == '/') n--;
    t->root = strndup(cfg->bugzilla_url, n);
    t->key_header = strdup(cfg->bugzilla_api_key);
    rt_http_options opts;
    rt_http_options_from_config(&opts, cfg);
    int rc = t->root && t->key_header ? rt_http_new(&t->http, &opts, errstr) : RT_ENOMEM;
    if (rc != RT_OK) {
        bz_free(&t->base);
        return rc;
    }
    *out = &t->base;
    return RT_OK;
}
