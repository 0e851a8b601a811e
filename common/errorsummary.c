/* SPDX-License-Identifier: MPL-2.0 */
/* errorsummary.c - parses mozlog errorsummary JSON lines and classifies the run. */
#include "common/errorsummary.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* A bounded copy of a JSON string field, or NULL when absent or not a string. */
static char *field_copy(json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    if (!s) return NULL;
    return strndup(s, RT_ES_MAX_FIELD);
}

static rt_es_group *find_or_add_group(rt_errorsummary *es, const char *name, int *rc)
{
    for (size_t i = 0; i < es->ngroups; i++)
        if (!strcmp(es->groups[i].name, name)) return &es->groups[i];
    if (es->ngroups >= RT_ES_MAX_GROUPS) {
        es->too_big = true;
        return NULL;
    }
    rt_es_group *grown = realloc(es->groups, (es->ngroups + 1) * sizeof *grown);
    if (!grown) {
        *rc = RT_ENOMEM;
        return NULL;
    }
    es->groups = grown;
    rt_es_group *g = &es->groups[es->ngroups];
    memset(g, 0, sizeof *g);
    g->duration_ms = -1;
    g->name = strndup(name, RT_ES_MAX_FIELD);
    if (!g->name) {
        *rc = RT_ENOMEM;
        return NULL;
    }
    es->ngroups++;
    return g;
}

/* Is status one of the line's expected statuses (expected, or known_intermittent)? */
static bool status_expected(json_t *line, const char *status, const char *expected)
{
    if (!strcmp(status, expected)) return true;
    if (!strcmp(status, "SKIP")) return true;
    json_t *known = json_object_get(line, "known_intermittent");
    size_t i;
    json_t *v;
    json_array_foreach(known, i, v)
    {
        if (json_is_string(v) && !strcmp(json_string_value(v), status)) return true;
    }
    return false;
}

static int add_failure(rt_errorsummary *es, json_t *line, const char *status, const char *group)
{
    if (es->nfailures >= RT_ES_MAX_FAILURES) {
        es->failures_dropped++;
        return RT_OK;
    }
    rt_es_failure *grown = realloc(es->failures, (es->nfailures + 1) * sizeof *grown);
    if (!grown) return RT_ENOMEM;
    es->failures = grown;
    rt_es_failure *f = &es->failures[es->nfailures];
    memset(f, 0, sizeof *f);
    const char *test = json_string_value(json_object_get(line, "test"));
    const char *expected = json_string_value(json_object_get(line, "expected"));
    f->test = strndup(test ? test : "", RT_ES_MAX_FIELD);
    f->subtest = field_copy(line, "subtest");
    f->status = strndup(status, 64);
    f->expected = strndup(expected ? expected : "PASS", 64);
    f->message = field_copy(line, "message");
    f->group = strndup(group, RT_ES_MAX_FIELD);
    es->nfailures++; /* counted even if a copy failed, so that free sees it */
    if (!f->test || !f->status || !f->expected || !f->group) return RT_ENOMEM;
    return RT_OK;
}

static int add_line(rt_errorsummary *es, json_t *line)
{
    int rc = RT_OK;
    const char *action = json_string_value(json_object_get(line, "action"));
    if (!action) {
        es->bad_lines++;
        return RT_OK;
    }
    if (!strcmp(action, "test_groups")) {
        json_t *groups = json_object_get(line, "groups");
        size_t i;
        json_t *v;
        json_array_foreach(groups, i, v)
        {
            if (!json_is_string(v)) continue;
            rt_es_group *g = find_or_add_group(es, json_string_value(v), &rc);
            if (rc) return rc;
            if (g && !g->listed) {
                g->listed = true;
                es->groups_listed++;
            }
        }
    } else if (!strcmp(action, "group_result")) {
        const char *name = json_string_value(json_object_get(line, "group"));
        const char *status = json_string_value(json_object_get(line, "status"));
        if (!name || !status) {
            es->bad_lines++;
            return RT_OK;
        }
        es->group_results++;
        rt_es_group *g = find_or_add_group(es, name, &rc);
        if (rc) return rc;
        if (g) {
            free(g->status);
            g->status = strndup(status, 64);
            if (!g->status) return RT_ENOMEM;
            json_t *d = json_object_get(line, "duration");
            if (json_is_integer(d)) g->duration_ms = (long)json_integer_value(d);
        }
    } else if (!strcmp(action, "test_result") || !strcmp(action, "crash")) {
        bool crash = !strcmp(action, "crash");
        const char *status = crash ? "CRASH" : json_string_value(json_object_get(line, "status"));
        const char *expected = json_string_value(json_object_get(line, "expected"));
        json_t *group_value = json_object_get(line, "group");
        const char *group = json_string_value(group_value);
        if (!status) {
            es->bad_lines++;
            return RT_OK;
        }
        if (crash) es->crashes++;
        if (!crash && status_expected(line, status, expected ? expected : "PASS")) return RT_OK;
        /* A result outside any group is the harness itself failing (automation.py). A crash
         * line may lack a group; it still belongs to a test. */
        if (!crash && (!group || !*group)) es->harness_failure = true;
        rc = add_failure(es, line, status, group ? group : "");
        if (rc) return rc;
        if (group && *group) {
            rt_es_group *g = find_or_add_group(es, group, &rc);
            if (rc) return rc;
            (void)g;
        }
    }
    /* "log" and unknown actions carry nothing the classifier needs. */
    return RT_OK;
}

int rt_errorsummary_add(rt_errorsummary *es, const char *text, size_t len)
{
    es->artifacts++;
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        bool terminated = eol != NULL;
        if (!eol) eol = end;
        size_t n = (size_t)(eol - p);
        const char *start = p;
        p = terminated ? eol + 1 : end;
        while (n > 0 && (start[n - 1] == '\r' || start[n - 1] == ' ')) n--;
        if (n == 0) continue;
        if (++es->lines > RT_ES_MAX_LINES || n > RT_ES_MAX_LINE_BYTES) {
            es->too_big = true;
            return RT_OK;
        }
        json_error_t error;
        json_t *line = json_loadb(start, n, JSON_REJECT_DUPLICATES, &error);
        if (!line || !json_is_object(line)) {
            es->bad_lines++; /* includes a last line cut off mid-object */
            json_decref(line);
            continue;
        }
        int rc = add_line(es, line);
        json_decref(line);
        if (rc) return rc;
    }
    return RT_OK;
}

static bool status_ok(const char *status)
{
    return !strcmp(status, "OK") || !strcmp(status, "PASS") || !strcmp(status, "SKIP");
}

bool rt_errorsummary_group_failed(const rt_errorsummary *es, const rt_es_group *group)
{
    if (group->status && !status_ok(group->status)) return true;
    for (size_t i = 0; i < es->nfailures; i++)
        if (!strcmp(es->failures[i].group, group->name)) return true;
    return false;
}

bool rt_errorsummary_complete(const rt_errorsummary *es)
{
    if (es->artifacts == 0 || es->bad_lines > 0 || es->too_big || es->harness_failure) return false;
    if (es->groups_listed > 0 && es->group_results == 0) return false;
    return true;
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
    memset(es, 0, sizeof *es);
}
