/* SPDX-License-Identifier: MPL-2.0 */
/* history.c - test history rows: sampling, branch keys, merging results. */
#include "common/core/history.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/failure_line.h"

#define NO_SLOT ((size_t)-1)

bool rt_history_project_allowed(const rt_strlist *projects, const char *project)
{
    if (!project) return false;
    for (size_t i = 0; i < projects->count; i++)
        if (fnmatch(projects->items[i], project, 0) == 0) return true;
    return false;
}

bool rt_history_sampled(const char *task_id, int percent)
{
    if (percent >= 100) return true;
    if (percent <= 0) return false;
    return rt_failure_line_hash(task_id, strlen(task_id)) % 100 < (uint64_t)percent;
}

bool rt_history_is_main(const rt_strlist *main_projects, const char *project)
{
    for (size_t i = 0; project && i < main_projects->count; i++)
        if (!strcmp(main_projects->items[i], project)) return true;
    return false;
}

void rt_history_branch_key(const char *project, const char *push, const char *author, char *out,
                           size_t size)
{
    bool try_like = !strcmp(project, "try") || !strncmp(project, "try-", 4);
    if (try_like && author && *author) {
        int n = snprintf(out, size, "%s:author:%s", project, author);
        size_t end = n < 0 ? 0 : (size_t)n < size ? (size_t)n : size ? size - 1 : 0;
        for (size_t i = strlen(project) + 8; i < end; i++) /* emails differ in case only */
            if (out[i] >= 'A' && out[i] <= 'Z') out[i] = (char)(out[i] - 'A' + 'a');
    } else if (try_like && push) {
        snprintf(out, size, "%s:%s", project, push);
    } else {
        snprintf(out, size, "%s", project);
    }
}

int rt_history_failure_signature(const char *status, const char *test, const char *subtest,
                                 const char *message, char **signature, char hash_hex[17])
{
    *signature = NULL;
    hash_hex[0] = '\0';
    const char *msg = message ? message : "";
    size_t size =
        strlen(status) + strlen(test) + strlen(msg) + (subtest ? strlen(subtest) : 0) + 64;
    char *line = malloc(size);
    if (!line) return RT_ENOMEM;
    if (subtest && *subtest)
        snprintf(line, size, RT_FAILURE_LINE_PREFIX "%s | %s | %s - %s", status, test, subtest,
                 msg);
    else
        snprintf(line, size, RT_FAILURE_LINE_PREFIX "%s | %s | %s", status, test, msg);
    /* A message of several lines: the first one is the failure line. */
    line[strcspn(line, "\r\n")] = '\0';
    rt_failure_line parsed;
    int rc = rt_failure_line_parse(line, strlen(line), &parsed);
    free(line);
    if (rc != RT_OK) return rc;
    *signature = parsed.signature;
    parsed.signature = NULL;
    memcpy(hash_hex, parsed.hash_hex, 17);
    rt_failure_line_free(&parsed);
    return RT_OK;
}

/* ---- rows, with name indexes (open addressing over the positions) ---- */

/* Keyed: test and group names come from artifacts, and an unkeyed hash would let one
 * craft names that all collide (each look-up then walks all of them). */
static size_t name_hash(const rt_history_rows *rows, const char *name)
{
    return (size_t)rt_siphash(&rows->hash_key, name, strlen(name));
}

static size_t *index_slot(size_t *index, size_t size, const char *name,
                          const char *(*name_of)(const rt_history_rows *, size_t),
                          const rt_history_rows *rows)
{
    size_t mask = size - 1;
    for (size_t i = name_hash(rows, name) & mask;; i = (i + 1) & mask) {
        if (index[i] == NO_SLOT || !strcmp(name_of(rows, index[i]), name)) return &index[i];
    }
}

static const char *group_name_of(const rt_history_rows *rows, size_t i)
{
    return rows->groups[i].name;
}
static const char *test_name_of(const rt_history_rows *rows, size_t i)
{
    return rows->tests[i].test;
}

/* Keeps both indexes at most half full. */
static int index_reserve(rt_history_rows *rows, size_t wanted)
{
    if (rows->rt__index_size && wanted * 2 <= rows->rt__index_size) return RT_OK;
    size_t size = rows->rt__index_size ? rows->rt__index_size : 64;
    while (wanted * 2 > size) size *= 2;
    size_t *groups = malloc(size * sizeof *groups), *tests = malloc(size * sizeof *tests);
    if (!groups || !tests) {
        free(groups);
        free(tests);
        return RT_ENOMEM;
    }
    memset(groups, 0xff, size * sizeof *groups);
    memset(tests, 0xff, size * sizeof *tests);
    for (size_t i = 0; i < rows->ngroups; i++)
        *index_slot(groups, size, rows->groups[i].name, group_name_of, rows) = i;
    for (size_t i = 0; i < rows->ntests; i++)
        *index_slot(tests, size, rows->tests[i].test, test_name_of, rows) = i;
    free(rows->rt__group_index);
    free(rows->rt__test_index);
    rows->rt__group_index = groups;
    rows->rt__test_index = tests;
    rows->rt__index_size = size;
    return RT_OK;
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

static int replace(char **field, const char *value)
{
    char *copy = dup_or_null(value);
    if (value && !copy) return RT_ENOMEM;
    free(*field);
    *field = copy;
    return RT_OK;
}

int rt_history_rows_add_group(rt_history_rows *rows, const char *name, const char *status,
                              long duration_ms, bool failed)
{
    size_t most = rows->ngroups > rows->ntests ? rows->ngroups : rows->ntests;
    if (index_reserve(rows, most + 1) != RT_OK) return RT_ENOMEM;
    size_t *slot =
        index_slot(rows->rt__group_index, rows->rt__index_size, name, group_name_of, rows);
    if (*slot != NO_SLOT) {
        rt_history_group *g = &rows->groups[*slot];
        if (replace(&g->status, status) != RT_OK) return RT_ENOMEM;
        if (duration_ms >= 0) g->duration_ms = duration_ms;
        g->failed = g->failed || failed;
        g->derived = false;
        return RT_OK;
    }
    if (rows->ngroups == rows->rt__cap_groups) {
        size_t cap = rows->rt__cap_groups ? rows->rt__cap_groups * 2 : 16;
        rt_history_group *grown = realloc(rows->groups, cap * sizeof *grown);
        if (!grown) return RT_ENOMEM;
        rows->groups = grown;
        rows->rt__cap_groups = cap;
    }
    rt_history_group *g = &rows->groups[rows->ngroups];
    memset(g, 0, sizeof *g);
    g->name = strdup(name);
    g->status = dup_or_null(status);
    if (!g->name || (status && !g->status)) {
        free(g->name);
        free(g->status);
        return RT_ENOMEM;
    }
    g->duration_ms = duration_ms;
    g->failed = failed;
    *slot = rows->ngroups++;
    return RT_OK;
}

/* The group a test ran in: added (derived) when new; a failing test fails it. */
static int touch_group(rt_history_rows *rows, const char *group, bool failed)
{
    if (!*group) return RT_OK;
    size_t *slot =
        index_slot(rows->rt__group_index, rows->rt__index_size, group, group_name_of, rows);
    if (*slot == NO_SLOT) {
        int rc = rt_history_rows_add_group(rows, group, failed ? "FAIL" : "OK", -1, failed);
        if (rc == RT_OK) rows->groups[rows->ngroups - 1].derived = true;
        return rc;
    }
    rt_history_group *g = &rows->groups[*slot];
    if (failed && !g->failed) {
        g->failed = true;
        if (g->derived || !g->status) return replace(&g->status, "FAIL");
    }
    return RT_OK;
}

static int fill_failure(rt_history_test *t, const char *status, const char *expected,
                        const char *subtest, const char *message)
{
    if (replace(&t->status, status) != RT_OK || replace(&t->expected, expected) != RT_OK)
        return RT_ENOMEM;
    free(t->message);
    t->message = NULL;
    if (subtest && *subtest) {
        size_t size = strlen(subtest) + (message ? strlen(message) : 0) + 4;
        if (!(t->message = malloc(size))) return RT_ENOMEM;
        snprintf(t->message, size, "%s - %s", subtest, message ? message : "");
    } else if (message && !(t->message = strdup(message))) {
        return RT_ENOMEM;
    }
    free(t->signature);
    t->signature = NULL;
    t->signature_hash[0] = '\0';
    t->failed = true;
    /* a flaky result's failure reads as the failure it was */
    int rc = rt_history_failure_signature(strcmp(status, "FLAKY") ? status : "FAIL", t->test,
                                          subtest, message, &t->signature, t->signature_hash);
    return rc == RT_ENOTFOUND ? RT_OK : rc;
}

/* The order in which results of one test win a merge: failures, errors, passes, skips, the
 * rest. FLAKY ranks as the failure it holds. */
static int rank(const char *status, bool failed)
{
    if (failed) return !strcmp(status, "ERROR") ? 4 : 5;
    if (!strcmp(status, "PASS")) return 3;
    if (!strcmp(status, "SKIP")) return 2;
    return 1;
}

int rt_history_rows_add_attempts(rt_history_rows *rows, const char *test, int n)
{
    if (!rows->rt__test_index) return RT_ENOTFOUND;
    size_t *slot = index_slot(rows->rt__test_index, rows->rt__index_size, test, test_name_of, rows);
    if (*slot == NO_SLOT) return RT_ENOTFOUND;
    rows->tests[*slot].attempts += n;
    return RT_OK;
}

int rt_history_rows_add_test(rt_history_rows *rows, const char *test, const char *group,
                             const char *status, const char *expected, bool failed,
                             const char *subtest, const char *message)
{
    if (!group) group = "";
    size_t most = rows->ngroups > rows->ntests ? rows->ngroups : rows->ntests;
    if (index_reserve(rows, most + 2) != RT_OK) return RT_ENOMEM;
    int rc = touch_group(rows, group, failed);
    if (rc != RT_OK) return rc;
    size_t *slot = index_slot(rows->rt__test_index, rows->rt__index_size, test, test_name_of, rows);
    if (*slot != NO_SLOT) {
        rt_history_test *t = &rows->tests[*slot];
        int was = rank(t->status, t->failed), is = rank(status, failed);
        /* a failure (not an error: pytest's teardown errors) and a pass: flaky */
        bool flaky = !strcmp(t->status, "FLAKY") || !strcmp(status, "FLAKY") ||
                     (was == 5 && !strcmp(status, "PASS")) ||
                     (is == 5 && !strcmp(t->status, "PASS"));
        if (is > was) {
            rc = failed ? fill_failure(t, status, expected, subtest, message)
                        : replace(&t->status, status);
            if (rc != RT_OK) return rc;
        }
        if (flaky && rank(t->status, t->failed) == 5) return replace(&t->status, "FLAKY");
        return RT_OK;
    }
    if (rows->ntests == rows->rt__cap_tests) {
        size_t cap = rows->rt__cap_tests ? rows->rt__cap_tests * 2 : 16;
        rt_history_test *grown = realloc(rows->tests, cap * sizeof *grown);
        if (!grown) return RT_ENOMEM;
        rows->tests = grown;
        rows->rt__cap_tests = cap;
    }
    rt_history_test *t = &rows->tests[rows->ntests];
    memset(t, 0, sizeof *t);
    t->test = strdup(test);
    t->group = strdup(group);
    if (!t->test || !t->group) {
        free(t->test);
        free(t->group);
        return RT_ENOMEM;
    }
    *slot = rows->ntests++;
    if (failed) return fill_failure(t, status, expected, subtest, message);
    /* what a result that is no failure says (a collection or build error's cause) */
    if (message && *message && !(t->message = strdup(message))) return RT_ENOMEM;
    return replace(&t->status, status);
}

int rt_history_rows_from_errorsummary(const rt_errorsummary *es, rt_history_rows *out)
{
    memset(out, 0, sizeof *out);
    out->hash_key = es->hash_key;
    int rc = RT_OK;
    for (size_t i = 0; rc == RT_OK && i < es->ngroups; i++) {
        const rt_es_group *g = &es->groups[i];
        rc = rt_history_rows_add_group(out, g->name, g->status, g->duration_ms,
                                       rt_errorsummary_group_failed(es, g));
    }
    for (size_t i = 0; rc == RT_OK && i < es->nfailures; i++) {
        const rt_es_failure *f = &es->failures[i];
        if (f->of_group) continue; /* the group's row says it failed; no test did */
        rc = rt_history_rows_add_test(out, f->test, f->group, f->status, f->expected, true,
                                      f->subtest, f->message);
    }
    if (rc != RT_OK) rt_history_rows_free(out);
    return rc;
}

void rt_history_rows_free(rt_history_rows *rows)
{
    if (!rows) return;
    for (size_t i = 0; i < rows->ngroups; i++) {
        free(rows->groups[i].name);
        free(rows->groups[i].status);
    }
    for (size_t i = 0; i < rows->ntests; i++) {
        rt_history_test *t = &rows->tests[i];
        free(t->test);
        free(t->group);
        free(t->status);
        free(t->expected);
        free(t->message);
        free(t->signature);
    }
    free(rows->groups);
    free(rows->tests);
    free(rows->rt__group_index);
    free(rows->rt__test_index);
    rt_siphash_key key = rows->hash_key;
    memset(rows, 0, sizeof *rows);
    rows->hash_key = key;
}
