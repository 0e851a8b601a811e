/* SPDX-License-Identifier: MPL-2.0 */
/* github.c - GitHub REST answers into validated structs; Link headers; small decisions. */
#include "common/core/github.h"
#include "common/core/utf8.h"

#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fnmatch.h>
#include <strings.h>

/* A string member of at most RT_GH_MAX_TEXT bytes without NUL; NULL when absent, null or
 * not a string. *bad is set when it is a string that fails the check. */
static const char *text_of(json_t *obj, const char *key, bool *bad)
{
    json_t *v = json_object_get(obj, key);
    if (!json_is_string(v)) return NULL;
    size_t n = json_string_length(v);
    const char *s = json_string_value(v);
    if (n > RT_GH_MAX_TEXT || strlen(s) != n) {
        *bad = true;
        return NULL;
    }
    return s;
}

static char *dup_text(json_t *obj, const char *key, bool *bad)
{
    const char *s = text_of(obj, key, bad);
    if (!s) return NULL;
    char *copy = strdup(s);
    if (!copy) *bad = true;
    return copy;
}

static long long positive_int(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    if (!json_is_integer(v) || json_integer_value(v) <= 0) return 0;
    return (long long)json_integer_value(v);
}

int rt_gh_parse_time(const char *text, time_t *out)
{
    int y, mo, d, h, mi, s, n = 0;
    if (!text || strlen(text) < 20 || strlen(text) > 40) return RT_EINVAL;
    if (sscanf(text, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &s, &n) != 6 || n != 19)
        return RT_EINVAL;
    for (int i = 0; i < 19; i++)
        if (!(i == 4 || i == 7     ? text[i] == '-'
              : i == 10            ? text[i] == 'T'
              : i == 13 || i == 16 ? text[i] == ':'
                                   : isdigit((unsigned char)text[i])))
            return RT_EINVAL;
    const char *p = text + 19;
    if (*p == '.')
        for (p++; isdigit((unsigned char)*p); p++) {}
    long offset = 0;
    if (*p == 'Z') {
        p++;
    } else if ((*p == '+' || *p == '-') && isdigit((unsigned char)p[1]) &&
               isdigit((unsigned char)p[2]) && p[3] == ':' && isdigit((unsigned char)p[4]) &&
               isdigit((unsigned char)p[5])) {
        offset =
            ((p[1] - '0') * 10 + (p[2] - '0')) * 3600L + ((p[4] - '0') * 10 + (p[5] - '0')) * 60L;
        if (*p == '-') offset = -offset;
        p += 6;
    } else {
        return RT_EINVAL;
    }
    if (*p || y < 1970 || y > 9999 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 ||
        s > 60)
        return RT_EINVAL;
    struct tm tm = {.tm_year = y - 1900,
                    .tm_mon = mo - 1,
                    .tm_mday = d,
                    .tm_hour = h,
                    .tm_min = mi,
                    .tm_sec = s};
    time_t t = timegm(&tm);
    if (t == (time_t)-1) return RT_EINVAL;
    struct tm check;
    gmtime_r(&t, &check);
    if (check.tm_mday != d) return RT_EINVAL; /* 31 February */
    *out = t - offset;
    return RT_OK;
}

static bool name_char(int c) { return isalnum(c) || c == '-' || c == '_' || c == '.'; }

bool rt_gh_valid_repo(const char *s)
{
    if (!s) return false;
    const char *slash = strchr(s, '/');
    if (!slash || slash == s || !slash[1] || strchr(slash + 1, '/') || strlen(s) > 200)
        return false;
    for (const char *p = s; *p; p++)
        if (p != slash && !name_char((unsigned char)*p)) return false;
    return strncmp(s, "./", 2) && strncmp(s, "../", 3) && strcmp(slash, "/.") &&
           strcmp(slash, "/..");
}

bool rt_gh_valid_branch(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (!n || n > 255) return false;
    for (const char *p = s; *p; p++)
        if ((unsigned char)*p <= ' ' || *p == 0x7f) return false;
    return true;
}

bool rt_gh_valid_sha(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n < 7 || n > 64) return false;
    for (const char *p = s; *p; p++)
        if (!isxdigit((unsigned char)*p)) return false;
    return true;
}

/* A plain word: event, status, conclusion (letters, digits, '_', '-'; at most 64). */
static bool valid_word(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (!n || n > 64) return false;
    for (const char *p = s; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-') return false;
    return true;
}

void rt_gh_run_free(rt_gh_run *run)
{
    if (!run) return;
    free(run->workflow_path);
    free(run->name);
    free(run->event);
    free(run->status);
    free(run->conclusion);
    free(run->head_branch);
    free(run->head_sha);
    free(run->repository);
    free(run->head_repository);
    free(run->html_url);
    memset(run, 0, sizeof *run);
}

void rt_gh_runs_free(rt_gh_runs *runs)
{
    if (!runs) return;
    for (size_t i = 0; i < runs->count; i++) rt_gh_run_free(&runs->items[i]);
    free(runs->items);
    memset(runs, 0, sizeof *runs);
}

/* One run object; RT_EPROTO when a check fails (the run is then freed). */
static int run_from(json_t *o, rt_gh_run *run)
{
    memset(run, 0, sizeof *run);
    bool bad = !json_is_object(o);
    if (bad) return RT_EPROTO;
    run->id = positive_int(o, "id");
    long long attempt = positive_int(o, "run_attempt");
    run->attempt = attempt ? (int)(attempt > RT_GH_MAX_ATTEMPTS ? -1 : attempt) : 1;
    run->workflow_id = positive_int(o, "workflow_id");
    run->workflow_path = dup_text(o, "path", &bad);
    run->name = dup_text(o, "name", &bad);
    run->event = dup_text(o, "event", &bad);
    run->status = dup_text(o, "status", &bad);
    run->conclusion = dup_text(o, "conclusion", &bad);
    json_t *branch = json_object_get(o, "head_branch");
    if (!branch || json_is_null(branch)) { /* GitHub sends null for some runs: "" then */
        if (!(run->head_branch = strdup(""))) bad = true;
    } else {
        run->head_branch = dup_text(o, "head_branch", &bad);
    }
    run->head_sha = dup_text(o, "head_sha", &bad);
    run->html_url = dup_text(o, "html_url", &bad);
    json_t *repo = json_object_get(o, "repository"), *head = json_object_get(o, "head_repository");
    if (json_is_object(repo)) run->repository = dup_text(repo, "full_name", &bad);
    if (json_is_object(head)) run->head_repository = dup_text(head, "full_name", &bad);
    json_t *prs = json_object_get(o, "pull_requests");
    if (json_is_array(prs) && json_array_size(prs) > 0) {
        long long pr = positive_int(json_array_get(prs, 0), "number");
        if (pr > 1000000000) bad = true;
        run->pr = (int)pr;
    }
    const char *created = text_of(o, "created_at", &bad),
               *started = text_of(o, "run_started_at", &bad);
    if (!created || rt_gh_parse_time(created, &run->created_at) != RT_OK) bad = true;
    if (!started || rt_gh_parse_time(started, &run->run_started_at) != RT_OK)
        run->run_started_at = run->created_at;
    if (!run->id || run->attempt < 1 || !valid_word(run->event) || !valid_word(run->status) ||
        (run->conclusion && !valid_word(run->conclusion)) || !run->head_branch ||
        (run->head_branch[0] && !rt_gh_valid_branch(run->head_branch)) ||
        !rt_gh_valid_sha(run->head_sha) || !rt_gh_valid_repo(run->repository) ||
        (run->head_repository && !rt_gh_valid_repo(run->head_repository)))
        bad = true;
    if (bad) {
        rt_gh_run_free(run);
        return RT_EPROTO;
    }
    return RT_OK;
}

static json_t *load(const char *json, size_t len, char *errstr)
{
    json_error_t e;
    json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &e);
    if (!root) rt_set_errstr(errstr, "not JSON: line %d: %s", e.line, e.text);
    return root;
}

/* The items of a listing: each element of list (an array of at most RT_GH_MAX_ITEMS, else
 * RT_EPROTO naming what) read by from() into a new array of elem_size items; an element
 * from() refuses leaves its slot zeroed and is counted in *skipped. */
typedef int item_from_fn(json_t *o, void *item);
static int items_from(json_t *list, const char *what, size_t elem_size, item_from_fn *from,
                      void **items, size_t *count, size_t *skipped, char *errstr)
{
    if (!json_is_array(list) || json_array_size(list) > RT_GH_MAX_ITEMS) {
        rt_set_errstr(errstr, "%s is not an array of at most %d items", what, RT_GH_MAX_ITEMS);
        return RT_EPROTO;
    }
    if (!json_array_size(list)) return RT_OK;
    char *array = calloc(json_array_size(list), elem_size);
    if (!array) return RT_ENOMEM;
    *items = array;
    size_t i;
    json_t *o;
    json_array_foreach(list, i, o)
    {
        if (from(o, array + *count * elem_size) == RT_OK)
            (*count)++;
        else
            (*skipped)++;
    }
    return RT_OK;
}

static int run_item(json_t *o, void *item) { return run_from(o, item); }

int rt_gh_parse_runs(const char *json, size_t len, rt_gh_runs *out, char *errstr)
{
    memset(out, 0, sizeof *out);
    json_t *root = load(json, len, errstr);
    if (!root) return RT_EPROTO;
    out->total_count = positive_int(root, "total_count");
    int rc = items_from(json_object_get(root, "workflow_runs"), "workflow_runs", sizeof *out->items,
                        run_item, (void **)&out->items, &out->count, &out->skipped, errstr);
    json_decref(root);
    if (rc != RT_OK) rt_gh_runs_free(out);
    return rc;
}

int rt_gh_parse_run(const char *json, size_t len, rt_gh_run *out, char *errstr)
{
    memset(out, 0, sizeof *out);
    json_t *root = load(json, len, errstr);
    if (!root) return RT_EPROTO;
    int rc = run_from(root, out);
    if (rc != RT_OK) rt_set_errstr(errstr, "not a valid workflow run");
    json_decref(root);
    return rc;
}

void rt_gh_artifacts_free(rt_gh_artifacts *artifacts)
{
    if (!artifacts) return;
    for (size_t i = 0; i < artifacts->count; i++) free(artifacts->items[i].name);
    free(artifacts->items);
    memset(artifacts, 0, sizeof *artifacts);
}

/* One artifact object; RT_EPROTO when a check fails (the artifact is then freed). */
static int artifact_from(json_t *o, void *item)
{
    rt_gh_artifact *a = item;
    bool bad = !json_is_object(o);
    if (!bad) {
        a->id = positive_int(o, "id");
        a->name = dup_text(o, "name", &bad);
        json_t *size = json_object_get(o, "size_in_bytes");
        a->size_in_bytes = json_is_integer(size) ? (long long)json_integer_value(size) : -1;
        a->expired = json_is_true(json_object_get(o, "expired"));
        const char *created = text_of(o, "created_at", &bad);
        if (!created || rt_gh_parse_time(created, &a->created_at) != RT_OK) bad = true;
        json_t *run = json_object_get(o, "workflow_run");
        if (json_is_object(run)) a->run_id = positive_int(run, "id");
        if (!a->id || !a->name || !a->name[0] || strlen(a->name) > 255 || a->size_in_bytes < 0)
            bad = true;
    }
    if (!bad) return RT_OK;
    free(a->name);
    memset(a, 0, sizeof *a);
    return RT_EPROTO;
}

int rt_gh_parse_artifacts(const char *json, size_t len, rt_gh_artifacts *out, char *errstr)
{
    memset(out, 0, sizeof *out);
    json_t *root = load(json, len, errstr);
    if (!root) return RT_EPROTO;
    out->total_count = positive_int(root, "total_count");
    int rc = items_from(json_object_get(root, "artifacts"), "artifacts", sizeof *out->items,
                        artifact_from, (void **)&out->items, &out->count, &out->skipped, errstr);
    json_decref(root);
    if (rc != RT_OK) rt_gh_artifacts_free(out);
    return rc;
}

void rt_gh_issue_free(rt_gh_issue *issue)
{
    if (!issue) return;
    free(issue->html_url);
    free(issue->state);
    memset(issue, 0, sizeof *issue);
}

void rt_gh_issues_free(rt_gh_issues *issues)
{
    if (!issues) return;
    for (size_t i = 0; i < issues->count; i++) rt_gh_issue_free(&issues->items[i]);
    free(issues->items);
    memset(issues, 0, sizeof *issues);
}

/* The first line of a body, cut to size. */
static void first_line(json_t *body, char *out, size_t size)
{
    out[0] = '\0';
    if (!json_is_string(body)) return;
    const char *s = json_string_value(body);
    size_t n = rt_utf8_boundary(s, strcspn(s, "\r\n"), size - 1); /* never half a character */
    memcpy(out, s, n);
    out[n] = '\0';
}

static int issue_from(json_t *o, rt_gh_issue *issue)
{
    memset(issue, 0, sizeof *issue);
    bool bad = !json_is_object(o);
    if (bad) return RT_EPROTO;
    issue->number = positive_int(o, "number");
    issue->html_url = dup_text(o, "html_url", &bad);
    issue->state = dup_text(o, "state", &bad);
    issue->pull_request = json_object_get(o, "pull_request") != NULL;
    first_line(json_object_get(o, "body"), issue->body_head, sizeof issue->body_head);
    if (!issue->number || !issue->html_url || !valid_word(issue->state)) bad = true;
    if (bad) {
        rt_gh_issue_free(issue);
        return RT_EPROTO;
    }
    return RT_OK;
}

static int issue_item(json_t *o, void *item) { return issue_from(o, item); }

int rt_gh_parse_issues(const char *json, size_t len, rt_gh_issues *out, char *errstr)
{
    memset(out, 0, sizeof *out);
    json_t *root = load(json, len, errstr);
    if (!root) return RT_EPROTO;
    int rc = items_from(root, "the issue listing", sizeof *out->items, issue_item,
                        (void **)&out->items, &out->count, &out->skipped, errstr);
    json_decref(root);
    if (rc != RT_OK) rt_gh_issues_free(out);
    return rc;
}

int rt_gh_parse_issue(const char *json, size_t len, rt_gh_issue *out, char *errstr)
{
    memset(out, 0, sizeof *out);
    json_t *root = load(json, len, errstr);
    if (!root) return RT_EPROTO;
    int rc = issue_from(root, out);
    if (rc != RT_OK) rt_set_errstr(errstr, "not a valid issue");
    json_decref(root);
    return rc;
}

void rt_gh_comments_free(rt_gh_comments *comments)
{
    if (!comments) return;
    free(comments->items);
    memset(comments, 0, sizeof *comments);
}

static int comment_from(json_t *o, void *item)
{
    rt_gh_comment *c = item;
    c->id = json_is_object(o) ? positive_int(o, "id") : 0;
    if (!c->id) return RT_EPROTO;
    first_line(json_object_get(o, "body"), c->body_head, sizeof c->body_head);
    return RT_OK;
}

int rt_gh_parse_comments(const char *json, size_t len, rt_gh_comments *out, char *errstr)
{
    memset(out, 0, sizeof *out);
    json_t *root = load(json, len, errstr);
    if (!root) return RT_EPROTO;
    int rc = items_from(root, "the comment listing", sizeof *out->items, comment_from,
                        (void **)&out->items, &out->count, &out->skipped, errstr);
    json_decref(root);
    if (rc != RT_OK) rt_gh_comments_free(out);
    return rc;
}

int rt_gh_parse_id(const char *json, size_t len, long long *id, char *errstr)
{
    *id = 0;
    json_t *root = load(json, len, errstr);
    if (!root) return RT_EPROTO;
    *id = json_is_object(root) ? positive_int(root, "id") : 0;
    json_decref(root);
    if (!*id) {
        rt_set_errstr(errstr, "no positive id in the answer");
        return RT_EPROTO;
    }
    return RT_OK;
}

int rt_gh_parse_default_branch(const char *json, size_t len, char **branch, char *errstr)
{
    *branch = NULL;
    json_t *root = load(json, len, errstr);
    if (!root) return RT_EPROTO;
    bool bad = !json_is_object(root);
    char *b = bad ? NULL : dup_text(root, "default_branch", &bad);
    json_decref(root);
    if (bad || !rt_gh_valid_branch(b)) {
        free(b);
        rt_set_errstr(errstr, "no valid default_branch in the repository");
        return RT_EPROTO;
    }
    *branch = b;
    return RT_OK;
}

/* "full_name" of obj's member `key` (a repository object), NULL when absent or odd. */
static const char *repo_name_of(json_t *obj, const char *key)
{
    bool bad = false;
    const char *name = text_of(json_object_get(obj, key), "full_name", &bad);
    return name && !bad && rt_gh_valid_repo(name) ? name : NULL;
}

int rt_gh_pull_for_run(const char *json, size_t len, const rt_gh_run *run, rt_gh_pull *out,
                       char *errstr)
{
    memset(out, 0, sizeof *out);
    json_t *root = load(json, len, errstr);
    if (!root) return RT_EPROTO;
    if (!json_is_array(root) || json_array_size(root) > RT_GH_MAX_ITEMS) {
        rt_set_errstr(errstr, "the pull request listing is not an array of at most %d items",
                      RT_GH_MAX_ITEMS);
        json_decref(root);
        return RT_EPROTO;
    }
    json_t *best = NULL, *first = NULL;
    time_t best_created = 0;
    size_t i;
    json_t *o;
    json_array_foreach(root, i, o)
    {
        bool bad = false;
        json_t *head = json_object_get(o, "head"), *base = json_object_get(o, "base");
        long long number = json_is_object(o) ? positive_int(o, "number") : 0;
        if (!number || number > 1000000000 || !json_is_object(head)) continue;
        const char *base_repo = repo_name_of(base, "repo"), *head_repo = repo_name_of(head, "repo");
        const char *ref = text_of(head, "ref", &bad), *sha = text_of(head, "sha", &bad);
        if (bad || (base_repo && run->repository && strcasecmp(base_repo, run->repository)))
            continue;
        if (run->head_branch[0]) { /* looked up by head: the same branch of the same fork */
            if (!ref || strcmp(ref, run->head_branch)) continue;
            if (head_repo && run->head_repository && strcasecmp(head_repo, run->head_repository))
                continue;
        }
        if (sha && run->head_sha && !strcasecmp(sha, run->head_sha)) {
            best = o; /* the pull request's head is the run's commit */
            break;
        }
        /* else the newest opened before the run (a branch may serve one pull request after
         * another), else the newest */
        time_t created = 0;
        const char *created_text = text_of(o, "created_at", &bad);
        if (created_text && rt_gh_parse_time(created_text, &created) != RT_OK) created = 0;
        if (!first) first = o;
        if (created && created <= run->created_at && created > best_created) {
            best = o;
            best_created = created;
        }
    }
    if (!best) best = first;
    int rc = RT_ENOTFOUND;
    if (best) {
        bool bad = false;
        const char *association = text_of(best, "author_association", &bad);
        out->number = (int)positive_int(best, "number");
        size_t n = association && !bad ? strlen(association) : 0;
        if (n && valid_word(association) && n < sizeof out->association)
            memcpy(out->association, association, n + 1);
        rc = RT_OK;
    }
    json_decref(root);
    return rc;
}

char *rt_gh_link_next(const char *link)
{
    if (!link || strlen(link) > RT_GH_MAX_LINK) return NULL;
    const char *p = link;
    while (*p) {
        while (*p == ' ' || *p == ',') p++;
        if (*p != '<') return NULL;
        const char *url = p + 1, *end = strchr(url, '>');
        if (!end) return NULL;
        p = end + 1;
        bool next = false;
        /* parameters up to the next link: ; rel="next last" */
        while (*p && *p != ',') {
            while (*p == ' ' || *p == ';') p++;
            const char *name = p;
            while (*p && *p != '=' && *p != ';' && *p != ',') p++;
            size_t name_len = (size_t)(p - name);
            while (name_len && name[name_len - 1] == ' ') name_len--;
            if (*p != '=') continue;
            p++;
            while (*p == ' ') p++;
            const char *value = p;
            size_t value_len;
            if (*p == '"') {
                value = ++p;
                while (*p && *p != '"') p++;
                if (!*p) return NULL;
                value_len = (size_t)(p - value);
                p++;
            } else {
                while (*p && *p != ';' && *p != ',') p++;
                value_len = (size_t)(p - value);
                while (value_len && value[value_len - 1] == ' ') value_len--;
            }
            if (name_len == 3 && !strncasecmp(name, "rel", 3)) {
                for (size_t i = 0; i < value_len;) {
                    while (i < value_len && value[i] == ' ') i++;
                    size_t j = i;
                    while (j < value_len && value[j] != ' ') j++;
                    if (j - i == 4 && !strncasecmp(value + i, "next", 4)) next = true;
                    i = j;
                }
            }
        }
        if (next) {
            size_t n = (size_t)(end - url);
            if (!n || (strncmp(url, "http://", 7) && strncmp(url, "https://", 8))) return NULL;
            return strndup(url, n);
        }
    }
    return NULL;
}

bool rt_gh_artifact_wanted(const char *pattern, const char *name)
{
    bool wanted = false;
    for (const char *p = pattern; *p;) {
        size_t n = strcspn(p, ",");
        char glob[256];
        if (n < sizeof glob) {
            memcpy(glob, p, n);
            glob[n] = '\0';
            bool exclude = glob[0] == '!';
            if (fnmatch(glob + exclude, name, FNM_CASEFOLD) == 0) {
                if (exclude) return false;
                wanted = true;
            }
        }
        p += n + (p[n] == ',');
    }
    return wanted;
}

bool rt_gh_redirect_allowed(const char *from, const char *to)
{
    bool from_https = !strncasecmp(from, "https://", 8), to_https = !strncasecmp(to, "https://", 8);
    if (!from_https && strncasecmp(from, "http://", 7)) return false;
    if (!to_https && strncasecmp(to, "http://", 7)) return false;
    return to_https || !from_https;
}

void rt_gh_branch_key(const rt_gh_run *run, char *out, size_t size)
{
    bool fork = run->head_repository && run->repository &&
                strcasecmp(run->head_repository, run->repository) != 0;
    if (run->pr > 0)
        snprintf(out, size, "pr:%d", run->pr);
    else if (!run->head_branch[0]) /* no branch: the commit alone, never another's branch */
        snprintf(out, size, "commit:%s", run->head_sha);
    else if (fork)
        snprintf(out, size, "fork:%s:%s", run->head_repository, run->head_branch);
    else
        snprintf(out, size, "%s", run->head_branch);
}

bool rt_gh_is_main(const rt_gh_run *run, const char *default_branch)
{
    bool fork = run->head_repository && run->repository &&
                strcasecmp(run->head_repository, run->repository) != 0;
    return !fork && run->head_branch[0] && default_branch &&
           !strcmp(run->head_branch, default_branch) && strcmp(run->event, "pull_request") != 0 &&
           strcmp(run->event, "pull_request_target") != 0;
}

bool rt_gh_run_cancelled(const rt_gh_run *run)
{
    return run->conclusion &&
           (!strcmp(run->conclusion, "cancelled") || !strcmp(run->conclusion, "skipped"));
}

int rt_gh_artifact_attempt(time_t created, const time_t *starts, int n)
{
    int attempt = 1;
    for (int i = 1; i < n; i++)
        if (starts[i] <= created) attempt = i + 1;
    return attempt;
}

bool rt_gh_rate_exhausted(long remaining, long reserve)
{
    return remaining >= 0 && remaining <= reserve;
}
