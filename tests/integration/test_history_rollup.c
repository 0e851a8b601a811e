/* SPDX-License-Identifier: MPL-2.0 */
/* test_history_rollup.c - the per-day rollup (migrations/0020_history_rollup.sql) gives the
 * same answers as the raw rows (0014's history_flakes, kept as history_flakes_raw), on the
 * local Postgres in a database of its own, on generated data: a seeded mix of try (pushes by
 * 40 authors, each author's pushes one branch), autoland and mozilla-central runs over twelve
 * days with pushes that run on both sides of midnight
 * and again days later, tests that fail often, rarely or on many branches, a test known in
 * two groups, harness failures without a group, a group whose failure has no group result,
 * a try push failing one test on three days running (one branch, counted once),
 * JUnit runs of another repository merged again, written in batches and one by one, the
 * rollup brought up to date in several steps. For every window of whole days, both scopes,
 * several breadths and flaky windows, history_flakes_rollup and history_flakes_raw give the
 * same rows, every column, and so do the coverage's reads of the runs (0030: totals, days,
 * projects, gaps); history_test_days gives what the view history_test_daily gives,
 * and history_tests_days (the report's charts over whole days) what history_run_marks gives
 * with slots of a day, and history_test_variants_rollup what history_test_variants_raw
 * gives (each run on one of three platforms and build types, migration 0041).
 * Then retention drops the oldest days as whole partitions and the two still agree. */
#include "support/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/core/history.h"
#include "common/io/history_store.h"
#include "support/classify_harness.h"

#define DAYS 12
#define RUNS 900

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

static unsigned rng_state = 12345;
static unsigned next_random(void)
{
    rng_state = rng_state * 1103515245u + 12345u;
    return (rng_state >> 8) & 0xffffff;
}

/* Partitions for the days of the data (a fresh database starts at today's). */
static const char SQL_PAST_PARTITIONS[] =
    "SELECT partman.create_partition_time(t, ARRAY(SELECT generate_series("
    " date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' - interval '14 days',"
    " now(), interval '1 day')))"
    " FROM unnest(ARRAY['public.history_runs', 'public.history_groups', 'public.history_tests',"
    "                   'public.history_rollup_push_groups']) t";

/* Rows in one function's answer and not in the other's, both ways; then the raw answer's
 * rows and flaky rows: "DIFF ROWS FLAKY". */
static const char SQL_DIFF[] =
    "WITH a AS (SELECT * FROM history_flakes_rollup($1, $2::timestamptz, $3::timestamptz,"
    "             $4::boolean, $5::integer, $6::interval)),"
    " b AS (SELECT * FROM history_flakes_raw($1, $2::timestamptz, $3::timestamptz,"
    "             $4::boolean, $5::integer, $6::interval))"
    " SELECT concat_ws(' ', (SELECT count(*) FROM (SELECT * FROM a EXCEPT ALL SELECT * FROM b) x)"
    "      + (SELECT count(*) FROM (SELECT * FROM b EXCEPT ALL SELECT * FROM a) y),"
    " (SELECT count(*) FROM b), (SELECT count(*) FROM b WHERE b.flaky))";
static const char SQL_DIFF_ROWS[] =
    "WITH a AS (SELECT * FROM history_flakes_rollup($1, $2::timestamptz, $3::timestamptz,"
    "             $4::boolean, $5::integer, $6::interval)),"
    " b AS (SELECT * FROM history_flakes_raw($1, $2::timestamptz, $3::timestamptz,"
    "             $4::boolean, $5::integer, $6::interval))"
    " SELECT string_agg(x::text, E'\\n') FROM (SELECT 'rollup' AS side, * FROM (SELECT * FROM a"
    " EXCEPT ALL SELECT * FROM b) a UNION ALL SELECT 'raw', * FROM (SELECT * FROM b EXCEPT ALL"
    " SELECT * FROM a) b) x";
/* The per-variant reads (migration 0041): rows in one answer and not the other, both ways,
 * then the raw answer's rows and the variants in it. */
static const char SQL_VARIANTS_DIFF[] =
    "WITH a AS (SELECT * FROM history_test_variants_rollup('gecko', $1::timestamptz,"
    "             $2::timestamptz)),"
    " b AS (SELECT * FROM history_test_variants_raw('gecko', $1::timestamptz, $2::timestamptz))"
    " SELECT concat_ws(' ', (SELECT count(*) FROM (SELECT * FROM a EXCEPT ALL SELECT * FROM b) x)"
    "      + (SELECT count(*) FROM (SELECT * FROM b EXCEPT ALL SELECT * FROM a) y),"
    " (SELECT count(*) FROM b), (SELECT count(DISTINCT variant) FROM b))";
static const char SQL_DAILY_DIFF[] =
    "WITH t AS (SELECT DISTINCT test FROM history_tests),"
    " a AS (SELECT t.test, d.day, d.branch_class, d.runs, d.failures FROM t,"
    "       history_test_days('gecko', t.test, '-infinity', 'infinity') d),"
    " b AS (SELECT v.test, (v.day AT TIME ZONE 'UTC')::date, v.branch_class, v.runs, v.failures"
    "         FROM history_test_daily v WHERE v.repository = 'gecko')"
    " SELECT (SELECT count(*) FROM (SELECT * FROM a EXCEPT ALL SELECT * FROM b) x)"
    "      + (SELECT count(*) FROM (SELECT * FROM b EXCEPT ALL SELECT * FROM a) y)";

/* The coverage (migration 0030) from the rollup of the runs and from history_runs, over
 * [$1, $2): "<differing rows of the four reads> <runs in the window>"; gaps of an hour and of
 * six. */
#define COVERAGE_DIFF(read)                                                                        \
    " (SELECT count(*) FROM ((SELECT * FROM " read "true)) EXCEPT ALL (SELECT * FROM " read        \
    "false))) x) + (SELECT count(*) FROM ((SELECT * FROM " read                                    \
    "false)) EXCEPT ALL (SELECT * FROM " read "true))) y)"
static const char SQL_COVERAGE_DIFF[] = "SELECT concat_ws(' '," COVERAGE_DIFF(
    "history_coverage_totals('gecko', $1::timestamptz, "
    "$2::timestamptz, ") " +" COVERAGE_DIFF("history_"
                                            "coverage_days('"
                                            "gecko', "
                                            "$1::timestamptz,"
                                            " $2::"
                                            "timestamptz, ") " +" COVERAGE_DIFF("history_coverage_"
                                                                                "projects('gecko', "
                                                                                "$1::timestamptz, "
                                                                                "$2::timestamptz, "
                                                                                "1000, ") " "
                                                                                          "+" COVERAGE_DIFF(
                                                                                              "hist"
                                                                                              "ory_"
                                                                                              "cove"
                                                                                              "rage"
                                                                                              "_gap"
                                                                                              "s('"
                                                                                              "geck"
                                                                                              "o', "
                                                                                              "$1::"
                                                                                              "time"
                                                                                              "stam"
                                                                                              "ptz,"
                                                                                              " $2:"
                                                                                              ":tim"
                                                                                              "esta"
                                                                                              "mptz"
                                                                                              ", "
                                                                                              "3600"
                                                                                              ","
                                                                                              " 100"
                                                                                              "0, ") " +" COVERAGE_DIFF("history_coverage_gaps('gecko', $1::timestamptz, "
                                                                                                                        "$2::timestamptz, 21600,"
                                                                                                                        " 1000, ") ","
                                                                                                                                   " (SELECT runs FROM "
                                                                                                                                   "history_coverage_totals('gecko', "
                                                                                                                                   "$1::timestamptz, $2::timestamptz,"
                                                                                                                                   " false)))";

/* The report's charts in day slots: history_tests_days (rollup) against history_run_marks
 * (raw rows) with slots of a day, over [$1, $2); "<differing rows> <raw rows>". */
static const char SQL_MARKS_DIFF[] =
    "WITH t AS (SELECT ARRAY(SELECT DISTINCT test FROM history_tests) AS tests),"
    " a AS (SELECT d.test, (d.day - ($1::timestamptz AT TIME ZONE 'UTC')::date) AS slot,"
    "       d.branch_class = 'main' AS main, d.runs, d.failures FROM t,"
    "       history_tests_days('gecko', t.tests, ($1::timestamptz AT TIME ZONE 'UTC')::date,"
    "                          ($2::timestamptz AT TIME ZONE 'UTC')::date) d),"
    " b AS (SELECT m.test, m.slot, m.main, m.runs, m.failures FROM t,"
    "       history_run_marks('gecko', t.tests, $1::timestamptz, $2::timestamptz, 86400) m)"
    " SELECT concat_ws(' ', (SELECT count(*) FROM (SELECT * FROM a EXCEPT ALL SELECT * FROM b) x)"
    "      + (SELECT count(*) FROM (SELECT * FROM b EXCEPT ALL SELECT * FROM a) y),"
    " (SELECT count(*) FROM b))";

typedef struct gen_run {
    char run_key[32], project[24], push[16], branch_key[48], run_at[40], revision[41];
    rt_history_run run;
    rt_history_rows rows;
} gen_run;

/* r->run from r's texts: a Taskcluster run of gecko, main unless on try, on one of three
 * platforms and build types by its key (a third with no build type: the platform alone is
 * its variant). */
static void set_run(gen_run *r)
{
    static const char *const platforms[] = {"linux1804-64", "windows11-64", "macosx1015-64"};
    static const char *const build_types[] = {"opt", "debug", NULL};
    unsigned key = 0;
    for (const char *c = r->run_key; *c; c++) key = key * 31u + (unsigned char)*c;
    r->run = (rt_history_run){.source = "taskcluster",
                              .run_key = r->run_key,
                              .repository = "gecko",
                              .project = r->project,
                              .branch = r->project,
                              .main = strcmp(r->project, "try") != 0,
                              .branch_key = r->branch_key,
                              .push = r->push,
                              .revision = r->revision,
                              .platform = platforms[key % 3],
                              .build_type = build_types[key / 3 % 3],
                              .label = "test-linux1804-64/opt-mochitest-1",
                              .run_at = r->run_at,
                              .complete_results = false};
}

/* One errorsummary-like run: its component's groups, and failures of its tests. */
static void make_run(gen_run *r, int index, time_t today)
{
    int which = (int)(next_random() % 10);
    const char *project = which < 6 ? "try" : which < 9 ? "autoland" : "mozilla-central";
    int push = 1 + (int)(next_random() % (which < 6 ? 120 : which < 9 ? 40 : 8));
    /* a push runs within a few hours of its time; some runs come days later (retriggers) */
    time_t push_time = today - (time_t)DAYS * 86400 + (time_t)push * (DAYS * 86400 / 130);
    time_t at = push_time + (time_t)(next_random() % (6 * 3600));
    if (next_random() % 20 == 0) at += (time_t)(1 + next_random() % 4) * 86400;
    if (at >= today + 86400) at = today + 86400 - 1;
    struct tm tm;
    gmtime_r(&at, &tm);
    strftime(r->run_at, sizeof r->run_at, "%Y-%m-%dT%H:%M:%SZ", &tm);
    snprintf(r->run_key, sizeof r->run_key, "gen%05d/0", index);
    snprintf(r->project, sizeof r->project, "%s", project);
    snprintf(r->push, sizeof r->push, "%d", push);
    snprintf(r->revision, sizeof r->revision, "%040d", push);
    /* a try push's branch is its author's: 40 developers, each with several pushes */
    char author[48];
    snprintf(author, sizeof author, "dev%d@example.com", push % 40);
    rt_history_branch_key(project, r->push, author, r->branch_key, sizeof r->branch_key);
    int component = (int)(next_random() % 6);
    memset(&r->rows, 0, sizeof r->rows);
    char group[64], test[96];
    for (int g = 0; g < 3; g++) {
        snprintf(group, sizeof group, "c%d/g%d.ini", component, g);
        bool failed = false;
        for (int t = 0; t < 4; t++) {
            /* test t of group g fails with a rate that grows with t; t3 flakes on try */
            unsigned chance = t == 3 && !strcmp(project, "try") ? 30 : (unsigned)(1 + t * 4);
            if (next_random() % 100 >= chance) continue;
            snprintf(test, sizeof test, "c%d/g%d/t%d.js", component, g, t);
            assert_int_equal(rt_history_rows_add_test(&r->rows, test, group, "FAIL", "PASS", true,
                                                      NULL, t % 2 ? "timed out" : "assert failed"),
                             RT_OK);
            failed = true;
        }
        /* the group of g2's failures in c0 sometimes has no group result */
        if (component == 0 && g == 2 && next_random() % 3 == 0) continue;
        assert_int_equal(
            rt_history_rows_add_group(&r->rows, group, failed ? "ERROR" : "OK", 1000, failed),
            RT_OK);
    }
    /* a test known in two groups: it fails in g0 or g1 of component 1 */
    if (component == 1 && next_random() % 4 == 0)
        assert_int_equal(rt_history_rows_add_test(&r->rows, "shared/both.js",
                                                  next_random() % 2 ? "c1/g0.ini" : "c1/g1.ini",
                                                  "FAIL", "PASS", true, NULL, "boom"),
                         RT_OK);
    /* a harness failure without a group */
    if (next_random() % 40 == 0)
        assert_int_equal(rt_history_rows_add_test(&r->rows, "harness", "", "CRASH", "PASS", true,
                                                  NULL, "crashed"),
                         RT_OK);
    set_run(r);
}

/* since and until as UTC midnights of the days of a and b. */
static void day_texts(time_t a, time_t b, char since[40], char until[40])
{
    struct tm tm;
    gmtime_r(&a, &tm);
    strftime(since, 40, "%Y-%m-%dT00:00:00Z", &tm);
    gmtime_r(&b, &tm);
    strftime(until, 40, "%Y-%m-%dT00:00:00Z", &tm);
}

/* A query over [since, until) that answers "<count> <count>". */
static void two_counts(rt_ch *h, const char *sql, const char *since, const char *until,
                       long long *first, long long *second)
{
    const char *params[] = {since, until};
    char *answer = rt_ch_sql_text(h, sql, 2, params);
    assert_non_null(answer);
    assert_int_equal(sscanf(answer, "%lld %lld", first, second), 2);
    free(answer);
}

/* Every window of whole days and every setting: the two functions agree. */
static void assert_rollup_agrees(rt_ch *h, time_t today, long long *rows_seen,
                                 long long *flaky_seen, long long *coverage_runs,
                                 long long *variant_rows, long long *variant_names)
{
    static const char *const flaky_windows[] = {"1 day", "36 hours", "7 days"};
    static const char *const breadths[] = {"0", "2"};
    static const int windows[][2] = {{-DAYS - 1, DAYS + 2}, {-7, 8}, {-3, 1}, {0, 1}, {-5, 2}};
    long long compared = 0;
    for (size_t wi = 0; wi < sizeof windows / sizeof *windows; wi++) {
        int from = windows[wi][0], span = windows[wi][1];
        {
            char since[40], until[40];
            time_t a = today + (time_t)from * 86400, b = today + (time_t)(from + span) * 86400;
            day_texts(a, b, since, until);
            long long cdiff = -1, cruns = 0;
            two_counts(h, SQL_COVERAGE_DIFF, since, until, &cdiff, &cruns);
            if (cdiff != 0)
                fail_msg("the coverage's rollup and raw reads differ in [%s, %s): %lld rows", since,
                         until, cdiff);
            *coverage_runs += cruns;
            const char *vparams[] = {since, until};
            char *vanswer = rt_ch_sql_text(h, SQL_VARIANTS_DIFF, 2, vparams);
            long long vdiff = -1, vrows = 0, vnames = 0;
            assert_non_null(vanswer);
            assert_int_equal(sscanf(vanswer, "%lld %lld %lld", &vdiff, &vrows, &vnames), 3);
            free(vanswer);
            if (vdiff != 0)
                fail_msg("the variants' rollup and raw reads differ in [%s, %s): %lld rows", since,
                         until, vdiff);
            *variant_rows += vrows;
            if (vnames > *variant_names) *variant_names = vnames;
            for (int main_only = 0; main_only < 2; main_only++) {
                for (size_t w = 0; w < 3; w++) {
                    for (size_t m = 0; m < 2; m++) {
                        const char *params[] = {"gecko",     since,
                                                until,       main_only ? "t" : "f",
                                                breadths[m], flaky_windows[w]};
                        char *answer = rt_ch_sql_text(h, SQL_DIFF, 6, params);
                        long long diff = -1, rows = 0, flaky = 0;
                        assert_non_null(answer);
                        assert_int_equal(sscanf(answer, "%lld %lld %lld", &diff, &rows, &flaky), 3);
                        free(answer);
                        if (diff != 0)
                            fail_msg("rollup and raw differ in [%s, %s) main only %d, breadth %s,"
                                     " flaky window %s: %lld rows\n%s",
                                     since, until, main_only, breadths[m], flaky_windows[w], diff,
                                     rt_ch_sql_text(h, SQL_DIFF_ROWS, 6, params));
                        *rows_seen += rows;
                        *flaky_seen += flaky;
                        compared++;
                    }
                }
            }
        }
    }
    assert_true(compared >= 60);
    assert_int_equal(rt_ch_sql_int(h, SQL_DAILY_DIFF, 0, NULL), 0);
    char since[40], until[40];
    time_t a = today - (time_t)(DAYS + 1) * 86400, b = today + 2 * 86400;
    day_texts(a, b, since, until);
    long long diff = -1, marks = 0;
    two_counts(h, SQL_MARKS_DIFF, since, until, &diff, &marks);
    if (diff != 0 || marks == 0)
        fail_msg("the charts' day slots: rollup and raw differ in %lld of %lld rows", diff, marks);
}

static void test_the_rollup_gives_the_raw_answers_before_and_after_retention(void **state)
{
    rt_ch *h = *state;
    time_t today = time(NULL) / 86400 * 86400;
    assert_int_equal(rt_pg_exec(h->pg, SQL_PAST_PARTITIONS, 0, NULL, NULL), RT_OK);
    /* a fresh database has no statistics: no plan is worth compiling */
    assert_int_equal(rt_pg_exec(h->pg, "SET jit = off", 0, NULL, NULL), RT_OK);

    gen_run *runs = calloc(RUNS, sizeof *runs);
    assert_non_null(runs);
    for (int i = 0; i < RUNS; i++) make_run(&runs[i], i, today);

    /* Batches of 25 and single runs; the rollup brought up to date every few batches, in
     * chunks of 40 runs, and a redelivered batch that adds nothing. */
    rt_history_run brun[25];
    const rt_history_rows *brows[25];
    bool inserted[25];
    char err[RT_ERRSTR_SIZE] = "";
    for (int i = 0; i < RUNS;) {
        if (i % 7 == 3) {
            bool one = false;
            assert_int_equal(rt_pg_begin(h->pg), RT_OK);
            assert_int_equal(rt_history_store(h->pg, &runs[i].run, &runs[i].rows, false, &one),
                             RT_OK);
            assert_int_equal(rt_pg_commit(h->pg), RT_OK);
            i++;
            continue;
        }
        int n = RUNS - i < 25 ? RUNS - i : 25;
        for (int k = 0; k < n; k++) {
            brun[k] = runs[i + k].run;
            brows[k] = &runs[i + k].rows;
        }
        for (int again = 0; again < (i % 5 == 0 ? 2 : 1); again++) {
            assert_int_equal(rt_pg_begin(h->pg), RT_OK);
            assert_int_equal(rt_history_store_batch(h->pg, brun, brows, (size_t)n, inserted, err),
                             RT_OK);
            assert_int_equal(rt_pg_commit(h->pg), RT_OK);
        }
        i += n;
        if (i % 100 < 25) assert_int_equal(rt_history_rollup(h->pg, 40, NULL), RT_OK);
    }

    /* One try push that fails one test on three days running: a single branch, so never
     * flaky at a breadth of 2, however its days' spans of the flaky window overlap. */
    gen_run repeat[3];
    for (int d = 0; d < 3; d++) {
        gen_run *r = &repeat[d];
        memset(r, 0, sizeof *r);
        time_t at = today - (time_t)(3 - d) * 86400 + 10 * 3600;
        struct tm tm;
        gmtime_r(&at, &tm);
        strftime(r->run_at, sizeof r->run_at, "%Y-%m-%dT%H:%M:%SZ", &tm);
        snprintf(r->run_key, sizeof r->run_key, "repeat%d/0", d);
        snprintf(r->project, sizeof r->project, "try");
        snprintf(r->push, sizeof r->push, "999");
        snprintf(r->revision, sizeof r->revision, "%040d", 999);
        rt_history_branch_key("try", r->push, NULL, r->branch_key, sizeof r->branch_key);
        assert_int_equal(rt_history_rows_add_test(&r->rows, "lone/repeat.js", "lone/g.ini", "FAIL",
                                                  "PASS", true, NULL, "assert failed"),
                         RT_OK);
        assert_int_equal(rt_history_rows_add_group(&r->rows, "lone/g.ini", "ERROR", 1000, true),
                         RT_OK);
        set_run(r);
        bool one = false;
        assert_int_equal(rt_pg_begin(h->pg), RT_OK);
        assert_int_equal(rt_history_store(h->pg, &r->run, &r->rows, false, &one), RT_OK);
        assert_int_equal(rt_pg_commit(h->pg), RT_OK);
        rt_history_rows_free(&r->rows);
    }
    assert_int_equal(rt_history_rollup(h->pg, 40, NULL), RT_OK);
    {
        char since[40], until[40];
        time_t a = today - 7 * 86400, b = today + 86400;
        day_texts(a, b, since, until);
        const char *params[] = {since, until};
        char *answer = rt_ch_sql_text(h,
                                      "SELECT concat_ws(' ', branches, flaky) FROM"
                                      " history_flakes_rollup('gecko', $1::timestamptz,"
                                      " $2::timestamptz, false, 2, '7 days')"
                                      " WHERE test = 'lone/repeat.js'",
                                      2, params);
        assert_non_null(answer);
        assert_string_equal(answer, "1 f");
        free(answer);
    }

    /* JUnit runs of another repository, one merged again with a new failure. */
    rt_history_rows junit = {0};
    assert_int_equal(
        rt_history_rows_add_test(&junit, "pkg::test_a", "pkg", "PASS", NULL, false, NULL, NULL),
        RT_OK);
    rt_history_run j = {.source = "junit",
                        .run_key = "j1",
                        .repository = "owner/repo",
                        .project = "owner/repo",
                        .branch = "main",
                        .main = true,
                        .branch_key = "main",
                        .push = "abc",
                        .revision = "abc",
                        .run_at = runs[0].run_at,
                        .complete_results = true};
    bool one = false;
    assert_int_equal(rt_pg_begin(h->pg), RT_OK);
    assert_int_equal(rt_history_store(h->pg, &j, &junit, true, &one), RT_OK);
    assert_int_equal(rt_pg_commit(h->pg), RT_OK);
    assert_int_equal(rt_history_rollup(h->pg, 40, NULL), RT_OK);
    rt_history_rows_free(&junit);
    assert_int_equal(
        rt_history_rows_add_test(&junit, "pkg::test_a", "pkg", "FAIL", NULL, true, NULL, "boom"),
        RT_OK);
    assert_int_equal(rt_pg_begin(h->pg), RT_OK);
    assert_int_equal(rt_history_store(h->pg, &j, &junit, true, &one), RT_OK);
    assert_int_equal(rt_pg_commit(h->pg), RT_OK);
    rt_history_rows_free(&junit);

    long added = 0;
    assert_int_equal(rt_history_rollup(h->pg, 40, &added), RT_OK);
    assert_int_equal(rt_ch_sql_int(h, "SELECT count(*) FROM history_rollup_queue", 0, NULL), 0);
    assert_int_equal(rt_ch_sql_int(h, "SELECT count(*) FROM history_runs", 0, NULL), RUNS + 4);
    assert_int_equal(rt_ch_sql_int(h,
                                   "SELECT failures FROM history_flakes('owner/repo', '-infinity',"
                                   " 'infinity', false, 3, '7 days')",
                                   0, NULL),
                     1);

    long long rows_seen = 0, flaky_seen = 0, coverage_runs = 0, variant_rows = 0, variants = 0;
    assert_rollup_agrees(h, today, &rows_seen, &flaky_seen, &coverage_runs, &variant_rows,
                         &variants);
    /* the comparisons were not of empty answers */
    assert_true(rows_seen > 1000);
    assert_true(variant_rows > 500);
    assert_int_equal(variants, 9); /* 3 platforms x (opt, debug, none) */
    assert_true(flaky_seen > 50);
    assert_true(coverage_runs > RUNS);

    /* Retention: days older than 6 go as whole partitions (dropped tables, not deleted rows;
     * its time is a benchmark figure, bench_history, printed here only), and the rollup's rows
     * of those days with them. */
    static const char SQL_RUN_PARTITIONS[] =
        "SELECT count(*) FROM pg_inherits WHERE inhparent = 'history_runs'::regclass";
    long long before = rt_ch_sql_int(h, "SELECT count(*) FROM history_runs", 0, NULL);
    long long tables_before = rt_ch_sql_int(h, SQL_RUN_PARTITIONS, 0, NULL);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long partitions = 0;
    assert_int_equal(rt_history_maintain(h->pg, 6, &partitions), RT_OK);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    long long after = rt_ch_sql_int(h, "SELECT count(*) FROM history_runs", 0, NULL);
    long removed = 0;
    assert_int_equal(rt_history_rollup_prune(h->pg, &removed), RT_OK);
    assert_true(removed > 0);
    printf("retention: %lld of %lld runs dropped in %.3f s, %ld partitions left\n", before - after,
           before, seconds, partitions);
    assert_true(after < before);
    assert_true(rt_ch_sql_int(h, SQL_RUN_PARTITIONS, 0, NULL) < tables_before);
    assert_int_equal(rt_ch_sql_int(h,
                                   "SELECT count(*) FROM history_rollup_tests WHERE repository ="
                                   " 'gecko' AND day < (SELECT min((run_at AT TIME ZONE"
                                   " 'UTC')::date) FROM history_runs WHERE repository = 'gecko')",
                                   0, NULL),
                     0);
    assert_int_equal(
        rt_ch_sql_int(h,
                      "SELECT count(*) FROM history_rollup_test_variants WHERE repository ="
                      " 'gecko' AND day < (SELECT min((run_at AT TIME ZONE"
                      " 'UTC')::date) FROM history_runs WHERE repository = 'gecko')",
                      0, NULL),
        0);
    assert_int_equal(
        rt_ch_sql_int(h,
                      "SELECT count(*) FROM history_rollup_group_variants WHERE repository ="
                      " 'gecko' AND day < (SELECT min((run_at AT TIME ZONE"
                      " 'UTC')::date) FROM history_runs WHERE repository = 'gecko')",
                      0, NULL),
        0);
    char *parts = rt_ch_sql_text(h,
                                 "SELECT string_agg(c.relname, ' ' ORDER BY c.relname) FROM"
                                 " pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE"
                                 " i.inhparent = 'history_rollup_push_groups'::regclass",
                                 0, NULL);
    fprintf(stderr, "registry partitions: %s\n", parts ? parts : "");
    free(parts);
    rows_seen = flaky_seen = coverage_runs = variant_rows = 0;
    assert_rollup_agrees(h, today, &rows_seen, &flaky_seen, &coverage_runs, &variant_rows,
                         &variants);
    assert_true(coverage_runs > 0);
    assert_true(variant_rows > 0);

    for (int i = 0; i < RUNS; i++) rt_history_rows_free(&runs[i].rows);
    free(runs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_the_rollup_gives_the_raw_answers_before_and_after_retention, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
