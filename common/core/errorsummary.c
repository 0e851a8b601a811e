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

/* The group named name, NULL when there is none. */
static const rt_es_group *find_group(const rt_errorsummary *es, const char *name)
{
    if (!es->rt__index_size) return NULL;
    size_t len = rt_utf8_boundary(name, strlen(name), RT_ES_MAX_FIELD);
    size_t slot = *index_slot(es, name, len);
    return slot ? &es->groups[slot - 1] : NULL;
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

/* Appends a failure made of copies of the fields (cut to their caps); past
 * RT_ES_MAX_FAILURES it is only counted. test, status and group may not be NULL. */
static int push_failure(rt_errorsummary *es, const char *test, const char *subtest,
                        const char *status, const char *expected, const char *message,
                        const char *group)
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
    rt_es_failure *f = &es->failures[es->nfailures++]; /* counted now, so that free sees it */
    memset(f, 0, sizeof *f);
    f->test = cut_copy(test, RT_ES_MAX_FIELD);
    f->subtest = subtest ? cut_copy(subtest, RT_ES_MAX_FIELD) : NULL;
    f->status = cut_copy(status, 64);
    f->expected = cut_copy(expected ? expected : status, 64);
    f->message = message ? cut_copy(message, RT_ES_MAX_FIELD) : NULL;
    f->group = cut_copy(group, RT_ES_MAX_FIELD);
    if (!f->test || (subtest && !f->subtest) || !f->status || !f->expected ||
        (message && !f->message) || !f->group)
        return RT_ENOMEM;
    return RT_OK;
}

static void free_failure(rt_es_failure *f)
{
    free(f->test);
    free(f->subtest);
    free(f->status);
    free(f->expected);
    free(f->message);
    free(f->group);
}

/* A failure of the object token 0 (test, subtest and message from the line). */
static int add_failure(rt_errorsummary *es, const rt_jscan *js, const char *status,
                       const char *expected, const char *group)
{
    int rc = RT_OK;
    char *test = str_copy(js, rt_js_get(js, 0, "test"), RT_ES_MAX_FIELD, &rc);
    char *subtest = str_copy(js, rt_js_get(js, 0, "subtest"), RT_ES_MAX_FIELD, &rc);
    char *message = str_copy(js, rt_js_get(js, 0, "message"), RT_ES_MAX_FIELD, &rc);
    if (rc == RT_OK)
        rc = push_failure(es, test ? test : "", subtest, status, expected, message, group);
    free(test);
    free(subtest);
    free(message);
    return rc;
}

/* Keeps a crash line until the summary settles (its group's result says whether it was
 * expected): test "" when the line names none, group NULL when it has no group field. */
static int keep_crash(rt_errorsummary *es, const rt_jscan *js)
{
    if (es->rt__ncrashes >= RT_ES_MAX_FAILURES) {
        es->rt__crashes_dropped++;
        return RT_OK;
    }
    if (es->rt__ncrashes == es->rt__cap_crashes) {
        size_t cap = es->rt__cap_crashes ? es->rt__cap_crashes * 2 : 8;
        rt_es_failure *grown = realloc(es->rt__crashes, cap * sizeof *grown);
        if (!grown) return RT_ENOMEM;
        es->rt__crashes = grown;
        es->rt__cap_crashes = cap;
    }
    rt_es_failure *c = &es->rt__crashes[es->rt__ncrashes++];
    memset(c, 0, sizeof *c);
    int rc = RT_OK;
    c->test = str_copy(js, rt_js_get(js, 0, "test"), RT_ES_MAX_FIELD, &rc);
    if (!c->test && rc == RT_OK) c->test = strdup("");
    c->status = strdup("CRASH");
    c->expected = strdup("CRASH");
    c->message = str_copy(js, rt_js_get(js, 0, "signature"), RT_ES_MAX_FIELD, &rc);
    c->group = str_copy(js, rt_js_get(js, 0, "group"), RT_ES_MAX_FIELD, &rc);
    if (rc || !c->test || !c->status || !c->expected) return RT_ENOMEM;
    if (!*c->test) es->crashes_without_test++;
    return RT_OK;
}

/* A result line (test_result or test_status) of the object token 0. */
static int add_result(rt_errorsummary *es, const rt_jscan *js)
{
    int rc = RT_OK;
    /* Whole: compared whole, cut where they are kept (push_failure). */
    char *status = str_copy(js, rt_js_get(js, 0, "status"), SIZE_MAX, &rc);
    char *expected = str_copy(js, rt_js_get(js, 0, "expected"), SIZE_MAX, &rc);
    char *group = str_copy(js, rt_js_get(js, 0, "group"), SIZE_MAX, &rc);
    if (rc) goto out;
    if (!status) {
        es->bad_lines++;
        goto out;
    }
    es->test_results++;
    /* mozlog leaves `expected` out when it equals `status`: such a line is expected. */
    if (!expected || status_expected(js, status, expected)) goto out;
    /* A result outside any group is the harness itself failing (automation.py). */
    if (!group || !*group) es->harness_failure = true;
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

/* A crash line: kept, and counted in its group (found or added). */
static int add_crash(rt_errorsummary *es, const rt_jscan *js)
{
    es->crashes++;
    int rc = keep_crash(es, js);
    int group = rt_js_get(js, 0, "group");
    if (rc == RT_OK && rt_js_type_of(js, group) == RT_JS_STRING && js->tok[group].len > 0) {
        rt_es_group *g = find_or_add_group(es, js, group, NULL, &rc);
        if (g) g->crashes++;
    }
    return rc;
}

/* A `log` line with a `status` is mozlog's shutdown failure: `test` names the group the
 * harness was shutting down, `group` is the known group it matched or [] when none did.
 * Other log lines (ERROR and CRITICAL messages) judge nothing. */
static int add_log(rt_errorsummary *es, const rt_jscan *js)
{
    int status = rt_js_get(js, 0, "status");
    if (rt_js_type_of(js, status) == RT_JS_NULL || status < 0) return RT_OK;
    if (rt_js_type_of(js, status) != RT_JS_STRING) {
        es->bad_lines++;
        return RT_OK;
    }
    int rc = RT_OK;
    char *text = str_copy(js, status, SIZE_MAX, &rc);
    char *group = str_copy(js, rt_js_get(js, 0, "group"), SIZE_MAX, &rc);
    if (rc == RT_OK) rc = add_failure(es, js, text, "OK", group ? group : "");
    if (rc == RT_OK && group && *group) {
        rt_es_group *g = find_or_add_group(es, js, -1, group, &rc);
        if (g) g->failed_tests++;
    }
    es->shutdown_failures++;
    free(text);
    free(group);
    return rc;
}

/* How bad a group status is, to keep the worst across artifacts: no result 0, SKIP 1,
 * OK and PASS 2, UNFINISHED 3, FAIL 4, ERROR and any other status 5. */
static int status_rank(const char *status)
{
    if (!status) return 0;
    if (!strcmp(status, "SKIP")) return 1;
    if (!strcmp(status, "OK") || !strcmp(status, "PASS")) return 2;
    if (!strcmp(status, RT_ES_STATUS_UNFINISHED)) return 3;
    if (!strcmp(status, "FAIL")) return 4;
    return 5;
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
        int status_type = rt_js_type_of(js, status);
        if (rt_js_type_of(js, name) != RT_JS_STRING ||
            (status_type != RT_JS_STRING && status_type != RT_JS_NULL)) {
            es->bad_lines++;
            return RT_OK;
        }
        es->group_results++;
        rt_es_group *g = find_or_add_group(es, js, name, NULL, &rc);
        if (rc) return rc;
        if (g) {
            /* null: a test of the group started and never ended. */
            char *text = status_type == RT_JS_NULL ? strdup(RT_ES_STATUS_UNFINISHED)
                                                   : str_copy(js, status, 64, &rc);
            if (!text) return RT_ENOMEM;
            if (status_rank(text) > status_rank(g->status)) {
                free(g->status);
                g->status = text;
            } else {
                free(text);
            }
            int d = rt_js_get(js, 0, "duration");
            if (rt_js_type_of(js, d) == RT_JS_INTEGER) g->duration_ms = (long)rt_js_integer(js, d);
        }
    } else if (rt_js_streq(js, action, "test_result") || rt_js_streq(js, action, "test_status")) {
        return add_result(es, js);
    } else if (rt_js_streq(js, action, "crash")) {
        return add_crash(es, js);
    } else if (rt_js_streq(js, action, "log")) {
        return add_log(es, js);
    }
    /* Unknown actions (mozlog's lint lines among them) carry nothing the classifier needs. */
    return RT_OK;
}

static bool status_ok(const char *status)
{
    return !strcmp(status, "OK") || !strcmp(status, "PASS") || !strcmp(status, "SKIP");
}

/* Was the kept crash c expected? mozlog marks its group PASS for a crash the test expected
 * (and ERROR for any other), and OK when a later test of the group passed: a crash whose
 * group ended OK or PASS was expected (Treeherder reads it the same way). */
static bool crash_expected(const rt_errorsummary *es, const rt_es_failure *c)
{
    const rt_es_group *g = c->group ? find_group(es, c->group) : NULL;
    return g && g->status && (!strcmp(g->status, "OK") || !strcmp(g->status, "PASS"));
}

/* Back to the failures the lines themselves listed (settle's are derived from the whole
 * summary and made again after each artifact). */
static void unsettle(rt_errorsummary *es)
{
    while (es->nfailures > es->rt__listed_failures) free_failure(&es->failures[--es->nfailures]);
    es->failures_dropped = es->rt__listed_dropped;
}

/* After the lines listed theirs, the failures that need the whole summary: each crash
 * that was not expected, and for a group that ended failing (not OK, PASS nor SKIP) with no
 * failure of its own, the group itself (test: its name, status: its result). */
static int settle(rt_errorsummary *es)
{
    es->rt__listed_failures = es->nfailures;
    es->rt__listed_dropped = es->failures_dropped;
    es->failures_dropped += es->rt__crashes_dropped;
    int rc = RT_OK;
    for (size_t i = 0; rc == RT_OK && i < es->rt__ncrashes; i++) {
        const rt_es_failure *c = &es->rt__crashes[i];
        if (!crash_expected(es, c))
            rc = push_failure(es, c->test, NULL, c->status, c->expected, c->message,
                              c->group ? c->group : "");
    }
    for (size_t i = 0; rc == RT_OK && i < es->ngroups; i++) {
        const rt_es_group *g = &es->groups[i];
        if (!g->status || status_ok(g->status) || g->failed_tests > 0 || g->crashes > 0) continue;
        size_t before = es->nfailures;
        rc = push_failure(es, g->name, NULL, g->status, "OK", NULL, g->name);
        if (es->nfailures > before) es->failures[before].of_group = true;
    }
    return rc;
}

int rt_errorsummary_add(rt_errorsummary *es, const char *text, size_t len)
{
    es->artifacts++;
    size_t test_groups_before = es->test_groups_lines;
    if (es->timed_out) return RT_ETIMEDOUT;
    unsettle(es);
    size_t max_bytes = es->max_bytes ? es->max_bytes : (size_t)RT_ES_MAX_BYTES;
    if (es->too_big || len > max_bytes - (es->bytes < max_bytes ? es->bytes : max_bytes)) {
        es->too_big = true; /* parsed no further: the summary is incomplete */
        return settle(es);
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
    int settled = settle(es);
    return settled == RT_ENOMEM ? settled : rc;
}

bool rt_errorsummary_group_failed(const rt_errorsummary *es, const rt_es_group *group)
{
    (void)es;
    return (group->status && !status_ok(group->status)) || group->failed_tests > 0 ||
           (!group->status && group->crashes > 0);
}

bool rt_errorsummary_group_unfinished(const rt_es_group *group)
{
    return group->listed && !group->status &&
           (group->last_listed || group->failed_tests > 0 || group->crashes > 0);
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

bool rt_errorsummary_crashed_before_tests(const rt_errorsummary *es)
{
    return es->crashes_without_test > 0 && es->crashes == es->crashes_without_test &&
           es->test_results == 0 && es->group_results == 0 && es->shutdown_failures == 0 &&
           !es->timed_out && !es->too_big && es->bad_lines == 0;
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
    if (rt_errorsummary_crashed_before_tests(es)) {
        *reason = "crash-before-tests";
        return RT_ES_PRODUCT_CRASH;
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
    case RT_ES_PRODUCT_CRASH: return "product-crash";
    }
    return "infra";
}

void rt_errorsummary_free(rt_errorsummary *es)
{
    if (!es) return;
    for (size_t i = 0; i < es->nfailures; i++) free_failure(&es->failures[i]);
    free(es->failures);
    for (size_t i = 0; i < es->rt__ncrashes; i++) free_failure(&es->rt__crashes[i]);
    free(es->rt__crashes);
    for (size_t i = 0; i < es->ngroups; i++) {
        free(es->groups[i].name);
        free(es->groups[i].status);
    }
    free(es->groups);
    free(es->rt__index);
    rt_errorsummary_init(es, &es->hash_key, es->max_bytes, es->expired, es->expired_context);
}
