/* SPDX-License-Identifier: MPL-2.0 */
/* outcomes.c - per test, the runs that reported FLAKY, DISABLED, COLLECTION_ERROR or
 * BUILD_FAILED in a window (history_tests, the partial index of migration 0037), and the
 * runs and failures of each failing test per variant (github_run_variants, 0038; for
 * Taskcluster runs taskcluster_run_variants, 0040). */
#include "common/store/outcomes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* $1 repository, $2 until, $3 window; history_tests.run_at bounds the partitions read. */
static const char SQL_LABELS[] =
    "SELECT t.test,"
    "       count(*) FILTER (WHERE t.status = 'FLAKY') AS flaky,"
    "       count(*) FILTER (WHERE t.status = 'DISABLED') AS disabled,"
    "       count(*) FILTER (WHERE t.status = 'COLLECTION_ERROR') AS collection_error,"
    "       count(*) FILTER (WHERE t.status = 'BUILD_FAILED') AS build_failed"
    "  FROM history_tests t JOIN history_runs r ON r.id = t.run_id"
    " WHERE r.repository = $1"
    "   AND r.run_at >= $2::timestamptz - $3::interval AND r.run_at < $2::timestamptz"
    "   AND t.status IN ('FLAKY', 'DISABLED', 'COLLECTION_ERROR', 'BUILD_FAILED')"
    "   AND t.run_at >= $2::timestamptz - $3::interval AND t.run_at < $2::timestamptz"
    " GROUP BY t.test ORDER BY count(*) DESC, t.test LIMIT 1000";
enum { L_TEST, L_FLAKY, L_DISABLED, L_COLLECTION, L_BUILD, L_N };
static const char *const LABEL_COLS[L_N] = {"test", "flaky", "disabled", "collection_error",
                                            "build_failed"};

static int by_test(const void *a, const void *b)
{
    return strcmp(((const rt_outcome_labels *)a)->test, ((const rt_outcome_labels *)b)->test);
}

int rt_outcome_labels_read(rt_pg *pg, const char *repository, const char *until, const char *window,
                           rt_outcome_labels_list *out)
{
    memset(out, 0, sizeof *out);
    const char *params[] = {repository, until, window};
    PGresult *res = NULL;
    int c[L_N];
    char errstr[RT_ERRSTR_SIZE] = "";
    int rc = rt_pg_exec(pg, SQL_LABELS, 3, params, &res);
    if (rc != RT_OK) return rc;
    rc = rt_pg_columns(res, LABEL_COLS, L_N, c, errstr);
    int n = rc == RT_OK ? PQntuples(res) : 0;
    if (n > 0 && !(out->items = calloc((size_t)n, sizeof *out->items))) rc = RT_ENOMEM;
    for (int r = 0; rc == RT_OK && r < n; r++) {
        rt_outcome_labels *l = &out->items[r];
        if (!(l->test = strdup(PQgetvalue(res, r, c[L_TEST])))) {
            rc = RT_ENOMEM;
            break;
        }
        l->flaky = atol(PQgetvalue(res, r, c[L_FLAKY]));
        l->disabled = atol(PQgetvalue(res, r, c[L_DISABLED]));
        l->collection_error = atol(PQgetvalue(res, r, c[L_COLLECTION]));
        l->build_failed = atol(PQgetvalue(res, r, c[L_BUILD]));
        out->count++;
    }
    PQclear(res);
    if (rc != RT_OK) {
        rt_outcome_labels_free(out);
        return rc;
    }
    if (out->count > 1) qsort(out->items, out->count, sizeof *out->items, by_test);
    return RT_OK;
}

const rt_outcome_labels *rt_outcome_labels_find(const rt_outcome_labels_list *list,
                                                const char *test)
{
    if (!list || !list->count || !test) return NULL;
    rt_outcome_labels key = {.test = (char *)test};
    return bsearch(&key, list->items, list->count, sizeof *list->items, by_test);
}

json_t *rt_outcome_labels_json(const rt_outcome_labels *labels)
{
    json_t *o = json_object();
    if (!o || !labels) return o;
    const char *names[] = {"FLAKY", "DISABLED", "COLLECTION_ERROR", "BUILD_FAILED"};
    long counts[] = {labels->flaky, labels->disabled, labels->collection_error,
                     labels->build_failed};
    for (size_t i = 0; i < 4; i++)
        if (counts[i] > 0 && json_object_set_new(o, names[i], json_integer(counts[i])) != 0) {
            json_decref(o);
            return NULL;
        }
    return o;
}

void rt_outcome_labels_text(const rt_outcome_labels *labels, char *out, size_t size)
{
    out[0] = '\0';
    if (!labels) return;
    const char *names[] = {"FLAKY", "DISABLED", "COLLECTION_ERROR", "BUILD_FAILED"};
    long counts[] = {labels->flaky, labels->disabled, labels->collection_error,
                     labels->build_failed};
    size_t used = 0;
    for (size_t i = 0; i < 4 && used < size; i++)
        if (counts[i] > 0) {
            int n = snprintf(out + used, size - used, "%s%s x%ld", used ? ", " : "", names[i],
                             counts[i]);
            if (n < 0) break;
            used += (size_t)n;
        }
}

void rt_outcome_labels_free(rt_outcome_labels_list *list)
{
    if (!list) return;
    for (size_t i = 0; i < list->count; i++) free(list->items[i].test);
    free(list->items);
    memset(list, 0, sizeof *list);
}

/* $1 repository, $2 until, $3 window: the tests that failed in GitHub runs of the window,
 * then all their outcomes there by variant (history_tests_test_idx). */
static const char SQL_VARIANTS[] =
    "WITH failing AS (SELECT DISTINCT t.test FROM history_tests t"
    "                   JOIN history_runs r ON r.id = t.run_id"
    "                  WHERE r.repository = $1 AND r.source = 'github' AND t.failed"
    "                    AND r.run_at >= $2::timestamptz - $3::interval"
    "                    AND r.run_at < $2::timestamptz"
    "                    AND t.run_at >= $2::timestamptz - $3::interval"
    "                    AND t.run_at < $2::timestamptz)"
    " SELECT t.test, v.variant, count(*) AS runs, count(*) FILTER (WHERE t.failed) AS failures"
    "   FROM failing x JOIN history_tests t ON t.test = x.test"
    "   JOIN history_runs r ON r.id = t.run_id"
    "   JOIN github_run_variants v ON v.history_run_id = t.run_id"
    "  WHERE r.repository = $1 AND r.run_at >= $2::timestamptz - $3::interval"
    "    AND r.run_at < $2::timestamptz AND t.run_at >= $2::timestamptz - $3::interval"
    "    AND t.run_at < $2::timestamptz"
    "  GROUP BY t.test, v.variant ORDER BY t.test, v.variant LIMIT 50000";
enum { V_TEST, V_VARIANT, V_RUNS, V_FAILURES, V_N };
static const char *const VARIANT_COLS[V_N] = {"test", "variant", "runs", "failures"};

/* $1 repository, $2 until, $3 window: the tests that failed in Taskcluster runs of the
 * window, and per variant (platform and build type) their runs and failures there
 * (sql/functions/30_history_test_variants.sql: from the per-day rollup for whole UTC days,
 * else the raw rows). */
static const char SQL_TC_VARIANTS[] =
    "SELECT test, variant, runs, failures"
    "  FROM history_test_variants($1, $2::timestamptz - $3::interval, $2::timestamptz)"
    " ORDER BY 1, 2 LIMIT 50000";

typedef struct variant_row {
    char *test;
    rt_flaky_variant v;
} variant_row;

static int by_test_then_variant(const void *a, const void *b)
{
    const variant_row *x = a, *y = b;
    int c = strcmp(x->test, y->test);
    return c ? c : strcmp(x->v.name, y->v.name);
}

/* Appends the Taskcluster runs' variants (SQL_TC_VARIANTS) to out; when out held GitHub rows
 * too (a repository fed by both), sorts all by test then variant so that each test's rows
 * stay together. */
static int taskcluster_variants(rt_pg *pg, const char *const params[3], rt_test_variants *out)
{
    PGresult *res = NULL;
    int c[V_N];
    char errstr[RT_ERRSTR_SIZE] = "";
    int rc = rt_pg_exec(pg, SQL_TC_VARIANTS, 3, params, &res);
    if (rc != RT_OK) return rc;
    rc = rt_pg_columns(res, VARIANT_COLS, V_N, c, errstr);
    size_t n = rc == RT_OK ? (size_t)PQntuples(res) : 0, before = out->count;
    if (n > 0) {
        char **tests = realloc(out->tests, (before + n) * sizeof *tests);
        if (tests) out->tests = tests;
        rt_flaky_variant *variants =
            tests ? realloc(out->variants, (before + n) * sizeof *variants) : NULL;
        if (variants) out->variants = variants;
        if (!variants) rc = RT_ENOMEM;
    }
    for (size_t r = 0; rc == RT_OK && r < n; r++) {
        size_t i = out->count;
        out->tests[i] = strdup(PQgetvalue(res, (int)r, c[V_TEST]));
        out->variants[i].name = strdup(PQgetvalue(res, (int)r, c[V_VARIANT]));
        out->variants[i].runs = atol(PQgetvalue(res, (int)r, c[V_RUNS]));
        out->variants[i].failures = atol(PQgetvalue(res, (int)r, c[V_FAILURES]));
        out->count++;
        if (!out->tests[i] || !out->variants[i].name) rc = RT_ENOMEM;
    }
    PQclear(res);
    if (rc == RT_OK && n > 0)
        out->kind = before ? RT_VARIANT_KIND_GITHUB " or " RT_VARIANT_KIND_TASKCLUSTER
                           : RT_VARIANT_KIND_TASKCLUSTER;
    if (rc != RT_OK || before == 0 || n == 0) return rc;
    variant_row *rows = calloc(out->count, sizeof *rows);
    if (!rows) return RT_ENOMEM;
    for (size_t i = 0; i < out->count; i++)
        rows[i] = (variant_row){out->tests[i], out->variants[i]};
    qsort(rows, out->count, sizeof *rows, by_test_then_variant);
    for (size_t i = 0; i < out->count; i++) {
        out->tests[i] = rows[i].test;
        out->variants[i] = rows[i].v;
    }
    free(rows);
    return RT_OK;
}

int rt_test_variants_read(rt_pg *pg, const char *repository, const char *until, const char *window,
                          rt_test_variants *out)
{
    memset(out, 0, sizeof *out);
    const char *params[] = {repository, until, window};
    PGresult *res = NULL;
    int c[V_N];
    char errstr[RT_ERRSTR_SIZE] = "";
    int rc = rt_pg_exec(pg, SQL_VARIANTS, 3, params, &res);
    if (rc != RT_OK) return rc;
    rc = rt_pg_columns(res, VARIANT_COLS, V_N, c, errstr);
    int n = rc == RT_OK ? PQntuples(res) : 0;
    if (n > 0 && (!(out->tests = calloc((size_t)n, sizeof *out->tests)) ||
                  !(out->variants = calloc((size_t)n, sizeof *out->variants))))
        rc = RT_ENOMEM;
    for (int r = 0; rc == RT_OK && r < n; r++) {
        out->tests[r] = strdup(PQgetvalue(res, r, c[V_TEST]));
        char *name = strdup(PQgetvalue(res, r, c[V_VARIANT]));
        out->variants[r].name = name;
        out->variants[r].runs = atol(PQgetvalue(res, r, c[V_RUNS]));
        out->variants[r].failures = atol(PQgetvalue(res, r, c[V_FAILURES]));
        out->count++;
        if (!out->tests[r] || !name) rc = RT_ENOMEM;
    }
    PQclear(res);
    if (rc == RT_OK && out->count > 0) out->kind = RT_VARIANT_KIND_GITHUB;
    if (rc == RT_OK) rc = taskcluster_variants(pg, params, out);
    if (rc != RT_OK) rt_test_variants_free(out);
    return rc;
}

const rt_flaky_variant *rt_test_variants_of(const rt_test_variants *all, const char *test,
                                            size_t *n)
{
    *n = 0;
    /* sorted by test (as Postgres collates): the first row of test, then its run */
    for (size_t i = 0; all && i < all->count; i++) {
        if (strcmp(all->tests[i], test) != 0) continue;
        size_t k = i;
        while (k < all->count && !strcmp(all->tests[k], test)) k++;
        *n = k - i;
        return &all->variants[i];
    }
    return NULL;
}

json_t *rt_test_variants_json(const rt_flaky_variant *variants, size_t n)
{
    json_t *list = json_array();
    for (size_t i = 0; list && i < n; i++) {
        json_t *v =
            json_pack("{s:s, s:I, s:I}", "variant", variants[i].name, "runs",
                      (json_int_t)variants[i].runs, "failures", (json_int_t)variants[i].failures);
        if (!v || json_array_append_new(list, v) != 0) {
            json_decref(list);
            list = NULL;
        }
    }
    if (!list) return NULL;
    const char *only = rt_flaky_only_variant(variants, n);
    return json_pack("{s:o, s:o}", "variants", list, "only_variant",
                     only ? json_string(only) : json_null());
}

void rt_test_variants_free(rt_test_variants *all)
{
    if (!all) return;
    for (size_t i = 0; i < all->count; i++) {
        free(all->tests[i]);
        free((char *)all->variants[i].name);
    }
    free(all->tests);
    free(all->variants);
    memset(all, 0, sizeof *all);
}
