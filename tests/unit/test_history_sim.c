/* SPDX-License-Identifier: MPL-2.0 */
/* test_history_sim.c - the generated test history (common/core/history_sim.h): the same
 * options give the same rows, another seed another history; runs stay in the window and out
 * of the collection gap; each branch is classed and keyed as retrig-history would; the
 * planted regression fails only from its autoland push and in nearly every run after it,
 * the new test only since its start, the fixed tests never after their fix; hostile text
 * only when asked for; bad options are refused. */
#include "support/util.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/core/history_sim.h"

#define UNTIL 1764590400LL /* 2025-12-01T12:00:00Z */
#define DAY   86400LL

static rt_hsim *make(uint64_t seed, int days, bool hostile)
{
    rt_hsim_options o = {
        .seed = seed, .until = UNTIL, .days = days, .tests = 120, .hostile = hostile};
    char errstr[RT_ERRSTR_SIZE] = "";
    rt_hsim *sim = NULL;
    assert_int_equal(rt_hsim_new(&o, &sim, errstr), RT_OK);
    return sim;
}

static long long epoch(const char *iso)
{
    struct tm tm = {0};
    assert_non_null(strptime(iso, "%Y-%m-%dT%H:%M:%SZ", &tm));
    return (long long)timegm(&tm);
}

static const rt_hsim_planted *planted(const rt_hsim *sim, const char *kind, size_t nth)
{
    size_t n = 0;
    const rt_hsim_planted *p = rt_hsim_planted_list(sim, &n);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(p[i].kind, kind) && nth-- == 0) return &p[i];
    fail_msg("no planted %s", kind);
    return NULL;
}

static bool failed(const rt_hsim_run *run, const char *test)
{
    for (size_t i = 0; i < run->rows.ntests; i++)
        if (!strcmp(run->rows.tests[i].test, test)) return run->rows.tests[i].failed;
    return false;
}

static bool runs_group_of(const rt_hsim_run *run, const char *test)
{
    const char *slash = strrchr(test, '/');
    for (size_t i = 0; slash && i < run->rows.ngroups; i++)
        if (!strncmp(run->rows.groups[i].name, test, (size_t)(slash - test + 1))) return true;
    return false;
}

static void test_the_same_options_give_the_same_rows(void **state)
{
    (void)state;
    rt_hsim *a = make(7, 10, true), *b = make(7, 10, true);
    rt_hsim_run x = {0}, y = {0};
    size_t n = 0, failures = 0;
    for (;;) {
        int ra = rt_hsim_next(a, &x), rb = rt_hsim_next(b, &y);
        assert_int_equal(ra, rb);
        if (ra == RT_ENOTFOUND) break;
        assert_int_equal(ra, RT_OK);
        assert_string_equal(x.run_key, y.run_key);
        assert_string_equal(x.project, y.project);
        assert_string_equal(x.revision, y.revision);
        assert_string_equal(x.run_at, y.run_at);
        assert_int_equal(x.rows.ngroups, y.rows.ngroups);
        assert_int_equal(x.rows.ntests, y.rows.ntests);
        for (size_t i = 0; i < x.rows.ntests; i++) {
            assert_string_equal(x.rows.tests[i].test, y.rows.tests[i].test);
            assert_string_equal(x.rows.tests[i].signature_hash, y.rows.tests[i].signature_hash);
        }
        failures += x.rows.ntests;
        n++;
    }
    assert_in_range(n, 3000, 8000); /* about 470 runs a day */
    assert_true(failures > 500);
    rt_hsim_run_free(&x);
    rt_hsim_run_free(&y);
    rt_hsim_free(a);
    rt_hsim_free(b);
}

static void test_another_seed_gives_another_history(void **state)
{
    (void)state;
    rt_hsim *a = make(1, 3, false), *b = make(2, 3, false);
    rt_hsim_run x = {0}, y = {0};
    assert_int_equal(rt_hsim_next(a, &x), RT_OK);
    assert_int_equal(rt_hsim_next(b, &y), RT_OK);
    assert_true(strcmp(x.run_key, y.run_key) != 0);
    assert_true(strcmp(x.revision, y.revision) != 0);
    rt_hsim_run_free(&x);
    rt_hsim_run_free(&y);
    rt_hsim_free(a);
    rt_hsim_free(b);
}

static void test_runs_stay_in_the_window_and_out_of_the_gap(void **state)
{
    (void)state;
    rt_hsim *sim = make(3, 30, false);
    long long start = UNTIL - 30 * DAY;
    start -= start % DAY;
    long long gap = UNTIL - 17 * DAY;
    rt_hsim_run run = {0};
    size_t main_runs = 0, try_runs = 0, in_gap_day = 0, nauthors = 0, npushes = 0;
    static char authors[128][128], pushes[1024][24];
    while (rt_hsim_next(sim, &run) == RT_OK) {
        long long at = epoch(run.run_at);
        assert_true(at >= start && at < UNTIL);
        assert_false(at >= gap && at < gap + 20 * 3600);
        if (at >= gap - 6 * 3600 && at < gap + 26 * 3600) in_gap_day++;
        if (!strcmp(run.project, "try")) {
            /* each developer's try pushes are one branch */
            assert_true(!strncmp(run.branch_key, "try:author:dev", 14));
            assert_non_null(strstr(run.branch_key, "@example.com"));
            assert_false(run.main);
            try_runs++;
            size_t a = 0, p = 0;
            while (a < nauthors && strcmp(authors[a], run.branch_key)) a++;
            if (a == nauthors && nauthors < 128)
                snprintf(authors[nauthors++], sizeof *authors, "%s", run.branch_key);
            while (p < npushes && strcmp(pushes[p], run.push)) p++;
            if (p == npushes && npushes < 1024)
                snprintf(pushes[npushes++], sizeof *pushes, "%s", run.push);
        } else {
            assert_string_equal(run.branch_key, run.project);
            assert_true(run.main);
            main_runs++;
        }
        assert_int_equal(strlen(run.revision), 40);
        assert_non_null(strstr(run.label, run.platform));
    }
    assert_true(main_runs > 2 * try_runs && try_runs > 1000);
    /* many developers, each with several try pushes */
    assert_true(nauthors > 30 && nauthors <= 60 && npushes > 3 * nauthors);
    assert_true(in_gap_day > 0); /* the runs around the gap are there */
    rt_hsim_run_free(&run);
    rt_hsim_free(sim);
}

static void test_the_regression_fails_from_its_autoland_push_on(void **state)
{
    (void)state;
    rt_hsim *sim = make(4, 30, false);
    const rt_hsim_planted *r = planted(sim, "regression", 0);
    assert_string_equal(r->project, "autoland");
    assert_true(r->push[0] && strlen(r->revision) == 40);
    assert_true(r->since >= UNTIL - 6 * DAY && r->since < UNTIL - 5 * DAY);
    const rt_hsim_planted *fresh = planted(sim, "new", 0);
    const rt_hsim_planted *fixed[2] = {planted(sim, "fixed", 0), planted(sim, "fixed", 1)};
    rt_hsim_run run = {0};
    long long runs_after = 0, fails_after = 0, fixed_fails = 0, fixed_after = 0;
    while (rt_hsim_next(sim, &run) == RT_OK) {
        long long at = epoch(run.run_at);
        if (failed(&run, r->test)) {
            assert_true(at > r->since);
            if (!strcmp(run.project, "autoland")) assert_true(atoll(run.push) >= atoll(r->push));
        }
        if (!strcmp(run.project, "autoland") && atoll(run.push) >= atoll(r->push) &&
            runs_group_of(&run, r->test)) {
            runs_after++;
            fails_after += failed(&run, r->test);
        }
        if (failed(&run, fresh->test)) assert_true(at >= fresh->since);
        for (int k = 0; k < 2; k++) {
            if (failed(&run, fixed[k]->test)) {
                fixed_fails++;
                assert_true(at <= fixed[k]->until);
            }
            if (at > fixed[k]->until && runs_group_of(&run, fixed[k]->test)) fixed_after++;
        }
    }
    assert_true(runs_after > 100);
    assert_true(fails_after * 100 >= runs_after * 90);
    assert_true(fixed_fails > 20 && fixed_after > 100); /* they failed, then ran clean */
    rt_hsim_run_free(&run);
    rt_hsim_free(sim);
}

static void test_hostile_text_only_when_asked(void **state)
{
    (void)state;
    for (int hostile = 0; hostile < 2; hostile++) {
        rt_hsim *sim = make(5, 8, hostile);
        rt_hsim_run run = {0};
        size_t marked = 0, marked_failures = 0;
        while (rt_hsim_next(sim, &run) == RT_OK) {
            bool here = strchr(run.project, '<') || strchr(run.revision, '<');
            for (size_t i = 0; i < run.rows.ngroups; i++)
                if (strchr(run.rows.groups[i].name, '<')) here = true;
            for (size_t i = 0; i < run.rows.ntests; i++)
                if (strpbrk(run.rows.tests[i].test, "<\"&")) marked_failures++;
            marked += here;
        }
        if (hostile) {
            assert_true(marked > 0 && marked_failures > 10);
        } else {
            assert_int_equal(marked, 0);
            assert_int_equal(marked_failures, 0);
        }
        rt_hsim_run_free(&run);
        rt_hsim_free(sim);
    }
}

static void test_bad_options_are_refused(void **state)
{
    (void)state;
    rt_hsim_options bad[] = {
        {.seed = 1, .until = UNTIL, .days = 0, .tests = 100},
        {.seed = 1, .until = UNTIL, .days = 91, .tests = 100},
        {.seed = 1, .until = UNTIL, .days = 30, .tests = 10},
        {.seed = 1, .until = UNTIL, .days = 30, .tests = 100, .noise = 0.5},
        {.seed = 1, .until = 1000, .days = 30, .tests = 100},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char errstr[RT_ERRSTR_SIZE] = "";
        rt_hsim *sim = (rt_hsim *)&errstr; /* must come back NULL */
        assert_int_equal(rt_hsim_new(&bad[i], &sim, errstr), RT_EINVAL);
        assert_null(sim);
        assert_true(errstr[0] != '\0');
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_same_options_give_the_same_rows),
        cmocka_unit_test(test_another_seed_gives_another_history),
        cmocka_unit_test(test_runs_stay_in_the_window_and_out_of_the_gap),
        cmocka_unit_test(test_the_regression_fails_from_its_autoland_push_on),
        cmocka_unit_test(test_hostile_text_only_when_asked),
        cmocka_unit_test(test_bad_options_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
