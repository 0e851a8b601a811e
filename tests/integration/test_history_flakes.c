/* SPDX-License-Identifier: MPL-2.0 */
/* test_history_flakes.c - history_flakes as migrations/0009_history_flakes_listed.sql
 * computes it (per listed test, from the runs of its groups, not from one derived row per
 * run) against the raw rows, on the local Postgres in a database of its own: writing the
 * same runs again (a redelivered batch, a redelivered single run) changes neither the
 * stored rows nor history_flakes; after a mixed ingest (the single-run writer, batches with
 * a run twice, a JUnit run merged twice, a test known in two groups, runs on both sides of
 * midnight) history_flakes gives each test the runs, failures, pushes and group that the
 * per-run view history_test_runs gives, for windows of whole days, partial days, within
 * one day, and unbounded, all branches and main only. The flaky rule's breadth on try
 * (migrations/0032_history_flaky_try_authors.sql), the same from the rollup, the raw rows and a
 * window of partial days: one author's four try pushes are one branch, not flaky; four
 * authors' pushes are four branches, flaky; a regression that landed fails on later try
 * pushes by five authors and is not flaky, while a test that main sees fail now and then
 * keeps its try failures as breadth. */
#include "support/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/history.h"
#include "common/io/history_store.h"
#include "common/store/history.h"
#include "support/classify_harness.h"

#define ES_FAIL "errorsummary/mochitest-browser-chrome_errorsummary.log"
#define ES_PASS "errorsummary/mochitest-browser-chrome_pass_errorsummary.log"

static int setup(void **state)
{
    *state = rt_ch_new();
    return 0;
}

static int teardown(void **state)
{
    rt_ch_free(*state);
    return 0;
}

static void fixture_rows(const char *fixture, rt_history_rows *rows)
{
    size_t len = 0;
    char *text = rt_test_read_file(rt_test_fixture(fixture), &len);
    rt_errorsummary es = {0};
    memset(rows, 0, sizeof *rows);
    assert_int_equal(rt_errorsummary_add(&es, text, len), RT_OK);
    assert_int_equal(rt_history_rows_from_errorsummary(&es, rows), RT_OK);
    assert_true(rows->ngroups > 0);
    rt_errorsummary_free(&es);
    free(text);
}

/* A test known in two groups: it fails in grp/a in one run, in grp/b in another. */
static void two_group_rows(rt_history_rows *rows, const char *failing_group)
{
    memset(rows, 0, sizeof *rows);
    assert_int_equal(rt_history_rows_add_group(rows, "grp/a", "OK", 10, false), RT_OK);
    assert_int_equal(rt_history_rows_add_group(rows, "grp/b", "OK", 10, false), RT_OK);
    if (failing_group)
        assert_int_equal(rt_history_rows_add_test(rows, "grp/both.js", failing_group, "FAIL",
                                                  "PASS", true, NULL, "boom"),
                         RT_OK);
}

static rt_history_run a_run(const char *run_key, const char *project, const char *push,
                            const char *run_at)
{
    bool try_like = !strcmp(project, "try");
    return (rt_history_run){.source = "taskcluster",
                            .run_key = run_key,
                            .repository = "gecko",
                            .project = project,
                            .branch = project,
                            .main = !try_like,
                            .branch_key = try_like ? "try:x" : project,
                            .push = push,
                            .revision = "abc",
                            .platform = "linux1804-64",
                            .label = "test-linux1804-64/opt-mochitest-1",
                            .run_at = run_at,
                            .complete_results = false};
}

static void store_one(rt_ch *h, const rt_history_run *run, const rt_history_rows *rows, bool merge,
                      bool want_inserted)
{
    bool inserted = !want_inserted;
    assert_int_equal(rt_pg_begin(h->pg), RT_OK);
    assert_int_equal(rt_history_store(h->pg, run, rows, merge, &inserted), RT_OK);
    assert_int_equal(rt_pg_commit(h->pg), RT_OK);
    assert_int_equal(rt_history_rollup(h->pg, 1000, NULL), RT_OK); /* as the writers do */
    assert_int_equal(inserted, want_inserted);
}

static void store_batch(rt_ch *h, const rt_history_run *runs, const rt_history_rows *const *rows,
                        size_t n, bool *inserted)
{
    char err[RT_ERRSTR_SIZE] = "";
    assert_int_equal(rt_pg_begin(h->pg), RT_OK);
    assert_int_equal(rt_history_store_batch(h->pg, runs, rows, n, inserted, err), RT_OK);
    assert_int_equal(rt_pg_commit(h->pg), RT_OK);
    assert_int_equal(rt_history_rollup(h->pg, 1000, NULL), RT_OK); /* as the writers do */
}

/* Runs of each group per UTC day, branch class and push, from the stored rows. */
static const char SQL_GROUP_RUNS[] =
    "SELECT coalesce(string_agg(concat_ws(' ', x.group_name, x.day, x.branch_class, x.push,"
    " x.runs), E'\\n' ORDER BY x.group_name, x.day, x.branch_class, x.push), '')"
    " FROM (SELECT g.group_name, (r.run_at AT TIME ZONE 'UTC')::date AS day, r.branch_class,"
    "              r.push, count(*) AS runs"
    "         FROM history_groups g JOIN history_runs r ON r.id = g.run_id"
    "        GROUP BY 1, 2, 3, 4) x";
static const char SQL_FLAKES[] =
    "SELECT coalesce(string_agg(f::text, E'\\n'), '') FROM history_flakes('gecko',"
    " '2024-05-01T06:00:00Z', '2024-05-04T18:00:00Z', $1::boolean, 1, '7 days') f";

/* history_flakes against the per-run view for a window ($1, $2) and scope ($3 main only):
 * rows of one not in the other, both ways. */
static const char SQL_FLAKES_DIFF[] =
    "WITH f AS (SELECT test, group_name, runs, failures, pushes FROM history_flakes('gecko',"
    "             $1::timestamptz, $2::timestamptz, $3::boolean, 3, '7 days') WHERE failures > 0),"
    " v AS (SELECT test, min(group_name) AS group_name, count(*) AS runs,"
    "              count(*) FILTER (WHERE failed) AS failures, count(DISTINCT push) AS pushes"
    "         FROM history_test_runs WHERE repository = 'gecko' AND run_at >= $1::timestamptz"
    "          AND run_at < $2::timestamptz AND (NOT $3::boolean OR branch_class = 'main')"
    "        GROUP BY test HAVING count(*) FILTER (WHERE failed) > 0)"
    " SELECT (SELECT count(*) FROM (SELECT * FROM f EXCEPT SELECT * FROM v) a)"
    "      + (SELECT count(*) FROM (SELECT * FROM v EXCEPT SELECT * FROM f) b)";

static void test_writing_the_same_runs_twice_leaves_the_rows_and_flakes_unchanged(void **state)
{
    rt_ch *h = *state;
    rt_history_rows fail, pass;
    fixture_rows(ES_FAIL, &fail);
    fixture_rows(ES_PASS, &pass);
    rt_history_run runs[] = {a_run("a/0", "try", "1", "2024-05-01T10:00:00Z"),
                             a_run("b/0", "autoland", "2", "2024-05-01T23:59:59Z"),
                             a_run("c/0", "autoland", "2", "2024-05-02T00:00:00Z"),
                             a_run("d/0", "mozilla-central", "3", "2024-05-03T12:00:00Z"),
                             a_run("e/0", "try", "4", "2024-05-04T17:00:00Z")};
    const rt_history_rows *rows[] = {&fail, &pass, &fail, &pass, &fail};
    bool inserted[5];
    store_batch(h, runs, rows, 5, inserted);
    for (int i = 0; i < 5; i++) assert_true(inserted[i]);
    rt_history_run single = a_run("f/0", "try", "5", "2024-05-02T08:00:00Z");
    store_one(h, &single, &fail, false, true);

    char *group_runs = rt_ch_sql_text(h, SQL_GROUP_RUNS, 0, NULL);
    char *flakes_all = rt_ch_sql_text(h, SQL_FLAKES, 1, (const char *[]){"f"});
    char *flakes_main = rt_ch_sql_text(h, SQL_FLAKES, 1, (const char *[]){"t"});
    assert_non_null(group_runs);
    assert_non_null(flakes_all);
    assert_non_null(flakes_main);
    /* b/0 and c/0: the same push on both sides of midnight, one row per day. */
    assert_non_null(strstr(group_runs, "2024-05-01 main 2 1"));
    assert_non_null(strstr(group_runs, "2024-05-02 main 2 1"));
    assert_non_null(strstr(flakes_all, "browser_fullscreen.js"));

    /* The same batch again, and the single run again: nothing is new, nothing moves. */
    store_batch(h, runs, rows, 5, inserted);
    for (int i = 0; i < 5; i++) assert_false(inserted[i]);
    store_one(h, &single, &fail, false, false);
    char *group_runs2 = rt_ch_sql_text(h, SQL_GROUP_RUNS, 0, NULL);
    char *flakes_all2 = rt_ch_sql_text(h, SQL_FLAKES, 1, (const char *[]){"f"});
    char *flakes_main2 = rt_ch_sql_text(h, SQL_FLAKES, 1, (const char *[]){"t"});
    assert_string_equal(group_runs2, group_runs);
    assert_string_equal(flakes_all2, flakes_all);
    assert_string_equal(flakes_main2, flakes_main);

    free(group_runs);
    free(group_runs2);
    free(flakes_all);
    free(flakes_all2);
    free(flakes_main);
    free(flakes_main2);
    rt_history_rows_free(&fail);
    rt_history_rows_free(&pass);
}

static void test_after_a_mixed_ingest_flakes_agrees_with_the_raw_rows(void **state)
{
    rt_ch *h = *state;
    rt_history_rows fail, pass, in_a, in_b, neither;
    fixture_rows(ES_FAIL, &fail);
    fixture_rows(ES_PASS, &pass);
    two_group_rows(&in_a, "grp/a");
    two_group_rows(&in_b, "grp/b");
    two_group_rows(&neither, NULL);

    /* The single-run writer. */
    rt_history_run r1 = a_run("s1/0", "autoland", "10", "2024-05-01T05:00:00Z");
    rt_history_run r2 = a_run("s2/0", "try", "11", "2024-05-01T07:00:00Z");
    store_one(h, &r1, &fail, false, true);
    store_one(h, &r2, &in_a, false, true);

    /* Batches: a run twice in one, and one of them again in the next. */
    rt_history_run b1[] = {a_run("b1/0", "autoland", "10", "2024-05-01T23:30:00Z"),
                           a_run("b2/0", "try", "12", "2024-05-02T00:30:00Z"),
                           a_run("b3/0", "mozilla-central", "13", "2024-05-02T09:00:00Z"),
                           a_run("b1/0", "autoland", "10", "2024-05-01T23:30:00Z"),
                           a_run("b4/0", "try", "14", "2024-05-02T10:00:00Z"),
                           a_run("b5/0", "autoland", "15", "2024-05-03T03:00:00Z")};
    const rt_history_rows *rows1[] = {&pass, &fail, &pass, &pass, &in_b, &neither};
    bool inserted[6];
    store_batch(h, b1, rows1, 6, inserted);
    assert_false(inserted[3]);
    rt_history_run b2[] = {a_run("b5/0", "autoland", "15", "2024-05-03T03:00:00Z"),
                           a_run("b6/0", "mozilla-central", "16", "2024-05-03T20:00:00Z"),
                           a_run("b7/0", "try", "17", "2024-05-04T19:00:00Z"),
                           a_run("b8/0", "autoland", "16", "2024-05-04T01:00:00Z")};
    const rt_history_rows *rows2[] = {&neither, &fail, &fail, &in_a};
    store_batch(h, b2, rows2, 4, inserted);
    assert_false(inserted[0]);

    /* A JUnit run (complete results), merged twice. */
    rt_history_rows junit = {0};
    assert_int_equal(rt_history_rows_add_test(&junit, "grp/junit::t", "grp/junit", "FAIL", NULL,
                                              true, NULL, "assert 1 == 2"),
                     RT_OK);
    rt_history_run j = a_run("j/0", "autoland", "18", "2024-05-02T12:00:00Z");
    j.source = "junit";
    j.complete_results = true;
    store_one(h, &j, &junit, true, true);
    store_one(h, &j, &junit, true, false);

    /* 2 single runs, 5 + 3 new runs of the batches, the JUnit run once. */
    assert_int_equal(rt_ch_sql_int(h, "SELECT count(*) FROM history_runs", 0, NULL), 11);
    /* The test known in two groups: its three recorded runs, and the run of both groups
     * without it once per group, as history_test_runs counts it. */
    assert_int_equal(rt_ch_sql_int(h,
                                   "SELECT runs FROM history_flakes('gecko', '2024-05-01',"
                                   " '2024-05-05', false, 3, '7 days')"
                                   " WHERE test = 'grp/both.js'",
                                   0, NULL),
                     5);

    /* Windows of whole days, of partial days at both ends, within one day, unbounded. */
    static const char *const windows[][2] = {
        {"2024-05-01T00:00:00Z", "2024-05-05T00:00:00Z"},
        {"2024-05-01T06:00:00Z", "2024-05-04T18:00:00Z"},
        {"2024-05-01T23:00:00Z", "2024-05-02T10:00:00Z"},
        {"2024-05-02T00:30:00Z", "2024-05-02T09:00:00Z"},
        {"-infinity", "infinity"},
    };
    for (size_t w = 0; w < sizeof windows / sizeof *windows; w++) {
        for (int main_only = 0; main_only < 2; main_only++) {
            const char *params[] = {windows[w][0], windows[w][1], main_only ? "t" : "f"};
            long long diff = rt_ch_sql_int(h, SQL_FLAKES_DIFF, 3, params);
            if (diff != 0)
                fail_msg("history_flakes differs from history_test_runs in [%s, %s), main only %d:"
                         " %lld rows",
                         windows[w][0], windows[w][1], main_only, diff);
        }
    }

    rt_history_rows_free(&fail);
    rt_history_rows_free(&pass);
    rt_history_rows_free(&in_a);
    rt_history_rows_free(&in_b);
    rt_history_rows_free(&neither);
    rt_history_rows_free(&junit);
}

/* ---- the flaky rule's breadth on try (issue 30, item 8) ---- */

/* One run of the test's own group ("<test>.ini") in which the test failed or passed (no row:
 * a derived pass), its branch key as retrig-history makes it from the push's author. */
static void store_result(rt_ch *h, const char *run_key, const char *project, const char *push,
                         const char *author, const char *run_at, const char *test, bool failed)
{
    rt_history_rows rows = {0};
    char group[96];
    snprintf(group, sizeof group, "%s.ini", test);
    assert_int_equal(rt_history_rows_add_group(&rows, group, failed ? "ERROR" : "OK", 10, failed),
                     RT_OK);
    if (failed)
        assert_int_equal(rt_history_rows_add_test(&rows, test, group, "FAIL", "PASS", true, NULL,
                                                  "assertion failed"),
                         RT_OK);
    char key[160];
    rt_history_branch_key(project, push, author, key, sizeof key);
    rt_history_run run = a_run(run_key, project, push, run_at);
    run.branch_key = key;
    store_one(h, &run, &rows, false, true);
    rt_history_rows_free(&rows);
}

/* "<branches> <flaky>" of a test for 2024-06-01 to 2024-06-08 (breadth 3, 7 days), the same
 * from the rollup (whole days), from the raw rows, and through history_flakes over a window
 * that is not whole days (raw); NULL when one of them differs. */
static char *breadth_of(rt_ch *h, const char *test)
{
    static const char sql[] =
        "WITH a AS (SELECT concat_ws(' ', branches, flaky) AS x FROM history_flakes_rollup('gecko',"
        "             '2024-06-01T00:00:00Z', '2024-06-08T00:00:00Z', false, 3, '7 days')"
        "            WHERE test = $1),"
        " b AS (SELECT concat_ws(' ', branches, flaky) AS x FROM history_flakes_raw('gecko',"
        "         '2024-06-01T00:00:00Z', '2024-06-08T00:00:00Z', false, 3, '7 days')"
        "        WHERE test = $1),"
        " c AS (SELECT concat_ws(' ', branches, flaky) AS x FROM history_flakes('gecko',"
        "         '2024-06-01T06:00:00Z', '2024-06-07T18:00:00Z', false, 3, '7 days')"
        "        WHERE test = $1)"
        " SELECT CASE WHEN (SELECT x FROM a) = (SELECT x FROM b) AND (SELECT x FROM b) ="
        "        (SELECT x FROM c) THEN (SELECT x FROM a) END";
    const char *params[] = {test};
    return rt_ch_sql_text(h, sql, 1, params);
}

static void assert_breadth(rt_ch *h, const char *test, const char *want)
{
    char *got = breadth_of(h, test);
    if (!got || strcmp(got, want) != 0)
        fail_msg("%s: want \"%s\" from the rollup, the raw rows and a partial window, got \"%s\"",
                 test, want, got ? got : "(they differ or no row)");
    free(got);
}

static void test_four_try_pushes_by_one_author_are_one_branch_and_not_flaky(void **state)
{
    rt_ch *h = *state;
    static const char *const at[] = {"2024-06-03T08:00:00Z", "2024-06-03T11:00:00Z",
                                     "2024-06-04T09:00:00Z", "2024-06-05T16:00:00Z"};
    char key[32], push[16];
    for (int i = 0; i < 4; i++) {
        /* the same broken patch pushed to try four times (a fifth run of the last push) */
        snprintf(key, sizeof key, "one%d/0", i);
        snprintf(push, sizeof push, "%d", 501 + i);
        store_result(h, key, "try", push, "Dev@Example.com", at[i], "dom/one-author.js", true);
    }
    store_result(h, "one9/0", "try", "504", "dev@example.com", "2024-06-05T17:00:00Z",
                 "dom/one-author.js", true);
    store_result(h, "main1/0", "autoland", "100", NULL, "2024-06-03T09:00:00Z", "dom/one-author.js",
                 false);
    assert_breadth(h, "dom/one-author.js", "1 f");
}

static void test_try_pushes_by_four_authors_are_four_branches_and_flaky(void **state)
{
    rt_ch *h = *state;
    char key[32], push[16], author[32], at[32];
    for (int i = 0; i < 8; i++) {
        /* four developers, two try pushes each, hitting the same intermittent failure */
        snprintf(key, sizeof key, "four%d/0", i);
        snprintf(push, sizeof push, "%d", 601 + i);
        snprintf(author, sizeof author, "dev%d@example.com", i % 4);
        snprintf(at, sizeof at, "2024-06-0%dT%02d:00:00Z", 3 + i / 4, 8 + i);
        store_result(h, key, "try", push, author, at, "dom/four-authors.js", true);
    }
    assert_breadth(h, "dom/four-authors.js", "4 t");
}

static void test_a_landed_regression_failing_on_later_try_pushes_is_not_flaky(void **state)
{
    rt_ch *h = *state;
    char key[32], push[16], author[32], at[32];
    /* autoland: four passing runs on June 2, then the regression lands at 18:00 and every
     * main run fails the test from then on */
    for (int i = 0; i < 4; i++) {
        snprintf(key, sizeof key, "before%d/0", i);
        snprintf(push, sizeof push, "%d", 100 + i);
        snprintf(at, sizeof at, "2024-06-02T%02d:00:00Z", 6 + 3 * i);
        store_result(h, key, "autoland", push, NULL, at, "dom/regression.js", false);
    }
    static const char *const broken[] = {"2024-06-02T18:00:00Z", "2024-06-02T20:00:00Z",
                                         "2024-06-03T02:00:00Z", "2024-06-03T08:00:00Z",
                                         "2024-06-03T14:00:00Z", "2024-06-04T04:00:00Z",
                                         "2024-06-04T12:00:00Z"};
    for (int i = 0; i < 7; i++) {
        snprintf(key, sizeof key, "after%d/0", i);
        snprintf(push, sizeof push, "%d", 105 + i);
        store_result(h, key, i == 4 ? "mozilla-central" : "autoland", push, NULL, broken[i],
                     "dom/regression.js", true);
    }
    /* five developers' try pushes based on the broken main fail it on June 3 and 4 */
    for (int i = 0; i < 5; i++) {
        snprintf(key, sizeof key, "based%d/0", i);
        snprintf(push, sizeof push, "%d", 700 + i);
        snprintf(author, sizeof author, "dev%d@example.com", i);
        snprintf(at, sizeof at, "2024-06-0%dT%02d:30:00Z", 3 + i % 2, 9 + i);
        store_result(h, key, "try", push, author, at, "dom/regression.js", true);
    }
    assert_breadth(h, "dom/regression.js", "0 f");

    /* A flaky test that main sees fail now and then (one run in eight on June 3) keeps its
     * try failures as breadth. */
    for (int i = 0; i < 8; i++) {
        snprintf(key, sizeof key, "main%d/0", i);
        snprintf(push, sizeof push, "%d", 200 + i);
        snprintf(at, sizeof at, "2024-06-03T%02d:10:00Z", 1 + 2 * i);
        store_result(h, key, "autoland", push, NULL, at, "dom/intermittent.js", i == 3);
    }
    for (int i = 0; i < 4; i++) {
        snprintf(key, sizeof key, "flaky%d/0", i);
        snprintf(push, sizeof push, "%d", 800 + i);
        snprintf(author, sizeof author, "dev%d@example.com", i);
        snprintf(at, sizeof at, "2024-06-0%dT%02d:40:00Z", 3 + i % 2, 9 + i);
        store_result(h, key, "try", push, author, at, "dom/intermittent.js", true);
    }
    assert_breadth(h, "dom/intermittent.js", "4 t");
    assert_breadth(h, "dom/regression.js", "0 f");
}

/* common/store/history.h reads history_flakes into typed rows, the same whether it waits for
 * the answer or asks first and collects it later (retrig report's two connections). */
static void test_the_store_reads_flakes_waiting_or_not(void **state)
{
    rt_ch *h = *state;
    char key[32], push[16], author[32], at[32];
    for (int i = 0; i < 8; i++) {
        snprintf(key, sizeof key, "store%d/0", i);
        snprintf(push, sizeof push, "%d", 701 + i);
        snprintf(author, sizeof author, "dev%d@example.com", i % 4);
        snprintf(at, sizeof at, "2024-06-0%dT%02d:00:00Z", 3 + i / 4, 8 + i);
        store_result(h, key, "try", push, author, at, "dom/store.js", i % 2 == 0);
    }
    rt_history_flakes_query q = {.project = "gecko",
                                 .until = "2024-06-08T00:00:00Z",
                                 .window = "7 days",
                                 .min_branches = 3,
                                 .flaky_window_days = 7};
    rt_history_flake *now = NULL, *later = NULL;
    size_t nnow = 0, nlater = 0;
    assert_int_equal(rt_history_flakes_read(h->pg, &q, &now, &nnow), RT_OK);
    assert_int_equal(rt_history_flakes_send(h->pg, &q), RT_OK);
    assert_int_equal(rt_history_flakes_wait(h->pg, &later, &nlater), RT_OK);
    assert_int_equal(nnow, 1);
    assert_int_equal(nlater, nnow);
    const rt_history_flake *f = &now[0];
    assert_string_equal(f->test, "dom/store.js");
    assert_string_equal(f->group_name, "dom/store.js.ini");
    assert_int_equal(f->failures, 4);
    assert_int_equal(f->branches, 2); /* dev0 and dev2 saw it fail */
    assert_false(f->flaky);
    assert_true(f->failure_rate > 0 && f->failure_rate <= 1);
    assert_non_null(f->first_failure_at);
    assert_string_equal(f->first_failure_at, "2024-06-03T08:00:00Z");
    assert_string_equal(f->first_failure_project, "try");
    assert_string_equal(later[0].test, f->test);
    assert_int_equal(later[0].runs, f->runs);
    assert_int_equal(later[0].failures, f->failures);
    assert_int_equal(later[0].branches, f->branches);
    assert_string_equal(later[0].first_failure_at, f->first_failure_at);
    rt_history_flake_free(now, nnow);
    rt_history_flake_free(later, nlater);
    /* a window with nothing: no row, and an error on a bad window is the store's */
    q.until = "2024-01-08T00:00:00Z";
    assert_int_equal(rt_history_flakes_read(h->pg, &q, &now, &nnow), RT_OK);
    assert_int_equal(nnow, 0);
    rt_history_flake_free(now, nnow);
    q.window = "seven days";
    assert_int_equal(rt_history_flakes_read(h->pg, &q, &now, &nnow), RT_EDB);
    assert_null(now);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_writing_the_same_runs_twice_leaves_the_rows_and_flakes_unchanged, setup, teardown),
        cmocka_unit_test_setup_teardown(test_after_a_mixed_ingest_flakes_agrees_with_the_raw_rows,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_four_try_pushes_by_one_author_are_one_branch_and_not_flaky, setup, teardown),
        cmocka_unit_test_setup_teardown(test_the_store_reads_flakes_waiting_or_not, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_try_pushes_by_four_authors_are_four_branches_and_flaky,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_landed_regression_failing_on_later_try_pushes_is_not_flaky, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
