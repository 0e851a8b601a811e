/* SPDX-License-Identifier: MPL-2.0 */
/* errorsummary.c - parses mozlog errorsummary JSON lines and classifies the run. */
#include "common/core/errorsummary.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/jscan.h"
#include "common/core/utf8.h"

/* A copy of s cut to at most max bytes at a character boundary (the scanner gives valid
 * UTF-8: a cut inside a character would make it invalid, and jansson and Postgres refuse
 * it). NULL when memory is short. */
static char *cut_copy(const char *s, size_t max)
{
    return strndup(s, rt_utf8_boundary(s, strlen(s), max));
}

/* The decoded string token i, cut to at most max bytes (at a character boundary), or NULL
 * when i is not a string (*rc = RT_ENOMEM when the copy failed). */
static char *str_copy(const rt_jscan *js, int i, size_t max, int *rc)
{
    if (rt_js_type_of(js, i) != RT_JS_STRING) return NULL;
    char *s = rt_js_strdup(js, i);
    if (!s) {
        *rc = RT_ENOMEM;
        return NULL;
    }
    size_t len = strlen(s);
    if (len > max) s[rt_utf8_boundary(s, len, max)] = '\0';
    return s;
}

void rt_errorsummary_init(rt_errorsummary *es, const rt_siphash_key *key, size_t max_bytes,
                          bool (*expired)(void *context), void *context)
{
    memset(es, 0, sizeof *es);
    if (key) es->hash_key = *key;
    es->max_bytes = max_bytes;
    es->expired = expired;
    es->expired_context = context;
}

/* The bytes a group is looked up by: the name token's (decoded into *scratch, malloc'd,
 * when it has escapes) or cname, cut as stored names are (RT_ES_MAX_FIELD, at a character
 * boundary), so that a name and its stored copy always meet. */
static int group_key(const rt_jscan *js, int name, const char *cname, const char **key, size_t *len,
                     char **scratch)
{
    *scratch = NULL;
    if (name < 0) {
        *key = cname;
        *len = strlen(cname);
    } else if (!js->tok[name].escaped) {
        *key = js->text + js->tok[name].start;
        *len = js->tok[name].len;
    } else {
        if (!(*scratch = rt_js_strdup(js, name))) return RT_ENOMEM;
        *key = *scratch;
        *len = strlen(*scratch);
    }
    *len = rt_utf8_boundary(*key, *len, RT_ES_MAX_FIELD);
    return RT_OK;
}

/* The index slot of key: the one holding its group, or the empty one where it goes. */
static size_t *index_slot(const rt_errorsummary *es, const char *key, size_t len)
{
    size_t mask = es->rt__index_size - 1;
    for (size_t i = (size_t)rt_siphash(&es->hash_key, key, len) & mask;; i = (i + 1) & mask) {
        size_t *slot = &es->rt__index[i];
        if (!*slot) return slot;
        const rt_es_group *g = &es->groups[*slot - 1];
        if (g->name_len == len && !memcmp(g->name, key, len)) return slot;
    }
}

/* Room for one more group: the array doubles, the index stays at most half full. */
static int reserve_group(rt_errorsummary *es)
{
    if (es->ngroups == es->rt__cap_groups) {
        size_t cap = es->rt__cap_groups ? es->rt__cap_groups * 2 : 16;
        rt_es_group *grown = realloc(es->groups, cap * sizeof *grown);
        if (!grown) return RT_ENOMEM;
        es->groups = grown;
        es->rt__cap_groups = cap;
    }
    if (es->rt__index_size >= 2 * (es->ngroups + 1)) return RT_OK;
    size_t size = es->rt__index_size ? es->rt__index_size * 2 : 64;
    size_t *index = calloc(size, sizeof *index);
    if (!index) return RT_ENOMEM;
    free(es->rt__index);
    es->rt__index = index;
    es->rt__index_size = size;
    for (size_t i = 0; i < es->ngroups; i++)
        *index_slot(es, es->groups[i].name, es->groups[i].name_len) = i + 1;
    return RT_OK;
}

/* The group named by string token name (or by the C string cname when name < 0), added
 * when new; NULL past RT_ES_MAX_GROUPS (too_big) or when memory is short (*rc). */
static rt_es_group *find_or_add_group(rt_errorsummary *es, const rt_jscan *js, int name,
                                      const char *cname, int *rc)
{
    const char *key;
    size_t len;
    char *scratch = NULL;
    rt_es_group *g = NULL;
    if ((*rc = group_key(js, name, cname, &key, &len, &scratch)) != RT_OK) return NULL;
    if ((*rc = reserve_group(es)) != RT_OK) goto out;
    size_t *slot = index_slot(es, key, len);
    if (*slot) {
        g = &es->groups[*slot - 1];
        goto out;
    }
    if (es->ngroups >= RT_ES_MAX_GROUPS) {
        es->too_big = true;
        goto out;
    }
    g = &es->groups[es->ngroups];
    memset(g, 0, sizeof *g);
    g->duration_ms = -1;
    if (!(g->name = strndup(key, len))) {
        *rc = RT_ENOMEM;
        g = NULL;
        goto out;
    }
    g->name_len = len;
    *slot = ++es->ngroups;
out:
    free(scratch);
    return g;
}

/* Is status one of the line's expected statuses (expected, or known_intermittent)? */
static bool status_expected(const rt_jscan *js, const char *status, const char *expected)
{
    if (!strcmp(status, expected)) return true;
    if (!strcmp(status, "SKIP")) return true;
    int known = rt_js_get(js, 0, "known_intermittent");
    if (rt_js_type_of(js, known) != RT_JS_ARRAY) return false;
    for (int v = rt_js_first(js, known); v >= 0; v = rt_js_after(js, known, v))
        if (rt_js_streq(js, v, status)) return true;
    return false;
}

static int add_failure(rt_errorsummary *es, const rt_jscan *js, const char *status,
                       const char *expected, const char *group)
{
    if (es->nfailures >= RT_ES_MAX_FAILURES) {
        es->failures_dropped++;
        return RT_OK;
    }
    if (es->nfailures == es->rt__cap_failures) {
        size_t cap = es->rt__cap_failures ? es->rt__cap_failures * 2 : 16;
        rt_es_failure *grown = realloc(es->failures, cap * sizeof *grown);
        if (!grown) return RT_ENOMEM;
        es->failures = grown;
        es->rt__cap_failures = cap;
    }
    rt_es_failure *f = &es->failures[es->nfailures];
    memset(f, 0, sizeof *f);
    int rc = RT_OK;
    f->test = str_copy(js, rt_js_get(js, 0, "test"), RT_ES_MAX_FIELD, &rc);
    if (!f->test && rc == RT_OK) f->test = strdup("");
    f->subtest = str_copy(js, rt_js_get(js, 0, "subtest"), RT_ES_MAX_FIELD, &rc);
    f->status = cut_copy(status, 64);
    f->expected = cut_copy(expected ? expected : status, 64);
    f->message = str_copy(js, rt_js_get(js, 0, "message"), RT_ES_MAX_FIELD, &rc);
    f->group = cut_copy(group, RT_ES_MAX_FIELD);
    es->nfailures++; /* counted even if a copy failed, so that free sees it */
    if (rc || !f->test || !f->status || !f->expected || !f->group) return RT_ENOMEM;
    return RT_OK;
}

/* A result line (test_result or crash) of the object token 0. */
static int add_result(rt_errorsummary *es, const rt_jscan *js, bool crash)
{
    int rc = RT_OK;
    /* Whole: compared whole, cut where they are kept (add_failure). */
    char *status =
        crash ? strdup("CRASH") : str_copy(js, rt_js_get(js, 0, "status"), SIZE_MAX, &rc);
    char *expected = str_copy(js, rt_js_get(js, 0, "expected"), SIZE_MAX, &rc);
    char *group = str_copy(js, rt_js_get(js, 0, "group"), SIZE_MAX, &rc);
    if (rc || (crash && !status)) {
        rc = RT_ENOMEM;
        goto out;
    }
    if (!status) {
        es->bad_lines++;
        goto out;
    }
    if (crash) es->crashes++;
    /* mozlog leaves `expected` out when it equals `status`: such a line is expected. */
    if (!crash && (!expected || status_expected(js, status, expected))) goto out;
    /* A result outside any group is the harness itself failing (automation.py). A crash
     * line may lack a group; it still belongs to a test. */
    if (!crash && (!group || !*group)) es->harness_failure = true;
    rc = add_failure(es, js, status, expected, group ? group : "");
    if (rc == RT_OK && group && *group) {
        rt_es_group *g = find_or_add_group(es, js, -1, group, &rc);
        if (g) g->failed_tests++;
    }
out:
    free(status);
    free(expected);
    free(group);
    return rc;
}

/* One parsed line: the object token 0. */
static int add_line(rt_errorsummary *es, const rt_jscan *js)
{
    int rc = RT_OK;
    int action = rt_js_get(js, 0, "action");
    if (rt_js_type_of(js, action) != RT_JS_STRING) {
        es->bad_lines++;
        return RT_OK;
    }
    if (rt_js_streq(js, action, "test_groups")) {
        int groups = rt_js_get(js, 0, "groups");
        if (rt_js_type_of(js, groups) != RT_JS_ARRAY) {
            es->bad_lines++;
            return RT_OK;
        }
        es->test_groups_lines++;
        size_t last = SIZE_MAX;
        for (int v = rt_js_first(js, groups); v >= 0; v = rt_js_after(js, groups, v)) {
            if (rt_js_type_of(js, v) != RT_JS_STRING) continue;
            rt_es_group *g = find_or_add_group(es, js, v, NULL, &rc);
            if (rc) return rc;
            if (!g) continue;
            if (!g->listed) {
                g->listed = true;
                es->groups_listed++;
            }
            last = (size_t)(g - es->groups);
        }
        if (last != SIZE_MAX) es->groups[last].last_listed = true;
    } else if (rt_js_streq(js, action, "group_result")) {
        int name = rt_js_get(js, 0, "group"), status = rt_js_get(js, 0, "status");
        if (rt_js_type_of(js, name) != RT_JS_STRING || rt_js_type_of(js, status) != RT_JS_STRING) {
            es->bad_lines++;
            return RT_OK;
        }
        es->group_results++;
        rt_es_group *g = find_or_add_group(es, js, name, NULL, &rc);
        if (rc) return rc;
        if (g) {
            free(g->status);
            g->status = str_copy(js, status, 64, &rc);
            if (!g->status) return RT_ENOMEM;
            int d = rt_js_get(js, 0, "duration");
            if (rt_js_type_of(js, d) == RT_JS_INTEGER) g->duration_ms = (long)rt_js_integer(js, d);
        }
    } else if (rt_js_streq(js, action, "test_result") || rt_js_streq(js, action, "test_status")) {
        return add_result(es, js, false);
    } else if (rt_js_streq(js, action, "crash")) {
        return add_result(es, js, true);
    }
    /* "log" and unknown actions carry nothing the classifier needs. */
    return RT_OK;
}

int rt_errorsummary_add(rt_errorsummary *es, const char *text, size_t len)
{
    es->artifacts++;
    size_t test_groups_before = es->test_groups_lines;
    if (es->timed_out) return RT_ETIMEDOUT;
    size_t max_bytes = es->max_bytes ? es->max_bytes : (size_t)RT_ES_MAX_BYTES;
    if (es->too_big || len > max_bytes - (es->bytes < max_bytes ? es->bytes : max_bytes)) {
        es->too_big = true; /* parsed no further: the summary is incomplete */
        return RT_OK;
    }
    es->bytes += len;
    rt_jscan js;
    rt_jscan_init(&js);
    int rc = RT_OK;
    size_t since_deadline = 0;
    const char *p = text, *end = text + len;
    while (p < end && !es->too_big) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        bool terminated = eol != NULL;
        if (!eol) eol = end;
        size_t n = (size_t)(eol - p);
        const char *start = p;
        p = terminated ? eol + 1 : end;
        if (es->expired && ++since_deadline >= RT_ES_DEADLINE_LINES) {
            since_deadline = 0;
            if (es->expired(es->expired_context)) {
                es->timed_out = true;
                rc = RT_ETIMEDOUT;
                break;
            }
        }
        while (n > 0 && (start[n - 1] == '\r' || start[n - 1] == ' ')) n--;
        if (n == 0) continue;
        if (++es->lines > RT_ES_MAX_LINES || n > RT_ES_MAX_LINE_BYTES) {
            es->too_big = true;
            break;
        }
        /* Duplicate member names are refused, as jansson's JSON_REJECT_DUPLICATES did. */
        rc = rt_jscan_parse(&js, start, n);
        if (rc == RT_ENOMEM) break;
        if (rc != RT_OK || rt_js_type_of(&js, 0) != RT_JS_OBJECT) {
            es->bad_lines++; /* includes a last line cut off mid-object */
            rc = RT_OK;
            continue;
        }
        rc = add_line(es, &js);
        if (rc) break;
    }
    rt_jscan_free(&js);
    /* A harness writes test_groups first: an artifact without it (empty, or cut before its
     * first line) says nothing of what ran. */
    if (rc == RT_OK && !es->too_big && es->test_groups_lines == test_groups_before)
        es->artifacts_without_groups++;
    return rc;
}

static bool status_ok(const char *status)
{
    return !strcmp(status, "OK") || !strcmp(status, "PASS") || !strcmp(status, "SKIP");
}

bool rt_errorsummary_group_failed(const rt_errorsummary *es, const rt_es_group *group)
{
    (void)es;
    return (group->status && !status_ok(group->status)) || group->failed_tests > 0;
}

bool rt_errorsummary_group_unfinished(const rt_es_group *group)
{
    return group->listed && !group->status && (group->last_listed || group->failed_tests > 0);
}

bool rt_errorsummary_group_not_run(const rt_es_group *group)
{
    return group->listed && !group->status && !rt_errorsummary_group_unfinished(group);
}

const char *rt_errorsummary_incomplete_why(const rt_errorsummary *es)
{
    if (es->artifacts == 0) return "no-errorsummary";
    if (es->timed_out) return "parse-timeout";
    if (es->too_big) return "too-big";
    if (es->bad_lines > 0) return "bad-lines";
    if (es->artifacts_without_groups > 0) return "no-test-groups";
    if (es->harness_failure) return "harness-failure";
    if (es->groups_listed > 0 && es->group_results == 0) return "no-group-result";
    for (size_t i = 0; i < es->ngroups; i++)
        if (rt_errorsummary_group_unfinished(&es->groups[i])) return "group-without-result";
    return NULL;
}

bool rt_errorsummary_complete(const rt_errorsummary *es)
{
    return rt_errorsummary_incomplete_why(es) == NULL;
}

rt_es_kind rt_errorsummary_classify(const rt_errorsummary *es, const char **reason)
{
    if (es->artifacts == 0) {
        *reason = "no-errorsummary";
        return RT_ES_INFRA;
    }
    if (!rt_errorsummary_complete(es)) {
        *reason = "incomplete-errorsummary";
        return RT_ES_INFRA;
    }
    bool failed = es->nfailures > 0 || es->failures_dropped > 0;
    for (size_t i = 0; !failed && i < es->ngroups; i++)
        failed = rt_errorsummary_group_failed(es, &es->groups[i]);
    if (!failed) {
        *reason = "no-test-failure";
        return RT_ES_PASS;
    }
    *reason = "test-failure";
    return RT_ES_TEST_FAILURE;
}

const char *rt_es_kind_name(rt_es_kind kind)
{
    switch (kind) {
    case RT_ES_PASS: return "pass";
    case RT_ES_TEST_FAILURE: return "test-failure";
    case RT_ES_INFRA: return "infra";
    }
    return "infra";
}

void rt_errorsummary_free(rt_errorsummary *es)
{
    if (!es) return;
    for (size_t i = 0; i < es->nfailures; i++) {
        rt_es_failure *f = &es->failures[i];
        free(f->test);
        free(f->subtest);
        free(f->status);
        free(f->expected);
        free(f->message);
        free(f->group);
    }
    free(es->failures);
    for (size_t i = 0; i < es->ngroups; i++) {
        free(es->groups[i].name);
        free(es->groups[i].status);
    }
    free(es->groups);
    free(es->rt__index);
    rt_errorsummary_init(es, &es->hash_key, es->max_bytes, es->expired, es->expired_context);
}
