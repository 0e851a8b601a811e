/* SPDX-License-Identifier: MPL-2.0 */
/* history.h - the test history as `retrig flakes` and `retrig report` read it: the flaky-test
 * rows (history_flakes), the coverage of a window (history_coverage_*), the runs of the
 * listed tests per time slot (history_run_marks, history_tests_days), and for projects
 * collected from GitHub the re-run flips, flaky issues and collection gaps. The SQL those
 * commands ran themselves until issue 33, behind typed calls; the statements live in
 * history.c and no PGresult leaves it. The history's writer and retrig-decide's look-ups are
 * common/io/history_store.h (the test history's other half, left in place while the workers
 * that call it are edited elsewhere).
 *
 * Rows come as arrays of typed structs (common/store/rows.h), *n of them, freed by the
 * matching *_free. Times are texts in UTC, "YYYY-MM-DDTHH:MM:SSZ"; windows are Postgres
 * intervals ("7 days") ending at until (a timestamptz text: ISO-8601 or "now"). A text member
 * is "" for SQL NULL unless its comment says NULL. Errors: RT_EDB (rt_pg_errstr), RT_ECONN,
 * RT_ENOMEM. Read-only. Thread-safety: per rt_pg handle. Layer: common/store. */
#ifndef RETRIG_COMMON_STORE_HISTORY_H
#define RETRIG_COMMON_STORE_HISTORY_H

#include "common/not_core.h"

#include <stdbool.h>
#include <stddef.h>

#include "common/core/errors.h"
#include "common/io/pg.h"

/* ---- the flaky tests (history_flakes, sql/functions) ---- */

typedef struct rt_history_flakes_query {
    const char *project; /* the repository */
    const char *until, *window;
    bool main_only;
    int min_branches;
    int flaky_window_days;
    int limit; /* 0: 1000 */
} rt_history_flakes_query;

/* A test that failed in the window. */
typedef struct rt_history_flake {
    char *test;
    char *group_name; /* NULL when none */
    long long runs, failures, pushes, pushes_failed, branches, prs;
    double failure_rate, push_failure_chance;
    /* Its first failure with the same signature; NULL members when not known. */
    char *first_failure_at, *first_failure_project, *first_failure_branch, *first_failure_push;
    char *first_failure_revision, *first_failure_signature;
    bool flaky;
} rt_history_flake;
RT_MUSTCHECK int rt_history_flakes_read(rt_pg *pg, const rt_history_flakes_query *q,
                                        rt_history_flake **rows, size_t *n);
/* The same asked without waiting (libpq's asynchronous query; the parameters are copied),
 * and collected later: `retrig report` reads two windows at once on two connections. The
 * handle runs nothing else in between. Errors of either are logged with the server's
 * message. */
RT_MUSTCHECK int rt_history_flakes_send(rt_pg *pg, const rt_history_flakes_query *q);
RT_MUSTCHECK int rt_history_flakes_wait(rt_pg *pg, rt_history_flake **rows, size_t *n);
void rt_history_flake_free(rt_history_flake *rows, size_t n);

/* ---- projects collected from GitHub ---- */

/* Re-run flips per test in the window (failed, then passed on a later attempt). */
typedef struct rt_history_flip {
    char *test;
    long long flips;
} rt_history_flip;
RT_MUSTCHECK int rt_history_flips(rt_pg *pg, const char *project, const char *until,
                                  const char *window, rt_history_flip **rows, size_t *n);
void rt_history_flip_free(rt_history_flip *rows, size_t n);

/* The flaky issues of the project's tests (retrig flaky-issues). */
typedef struct rt_history_issue {
    char *test, *state, *issue_url, *tracker;
    long long issue_number;
} rt_history_issue;
RT_MUSTCHECK int rt_history_issues(rt_pg *pg, const char *project, rt_history_issue **rows,
                                   size_t *n);
void rt_history_issue_free(rt_history_issue *rows, size_t n);

/* The run attempts of the window and what could be used of them. */
typedef struct rt_history_github_coverage {
    long long run_attempts, attempts_with_outcomes, attempts_with_gaps, expired_artifacts;
    long long rerun_attempts, outcomes;
} rt_history_github_coverage;
/* The column names of rt_history_github_coverage's members, in their order (for JSON). */
extern const char *const rt_history_github_coverage_names[6];
RT_MUSTCHECK int rt_history_github_coverage_read(rt_pg *pg, const char *project, const char *until,
                                                 const char *window,
                                                 rt_history_github_coverage *out);
/* The collection gaps of the window per kind, by kind. */
typedef struct rt_history_gap_kind {
    char *kind;
    long long gaps;
} rt_history_gap_kind;
RT_MUSTCHECK int rt_history_gap_kinds(rt_pg *pg, const char *project, const char *until,
                                      const char *window, rt_history_gap_kind **rows, size_t *n);
void rt_history_gap_kind_free(rt_history_gap_kind *rows, size_t n);
/* The collection gaps themselves, latest run first, at most 100. */
typedef struct rt_history_github_gap {
    long long run_id, attempt;
    char *kind, *artifact, *file;
    char *detail, *html_url; /* NULL when none */
    char *branch_key, *started;
} rt_history_github_gap;
RT_MUSTCHECK int rt_history_github_gaps(rt_pg *pg, const char *project, const char *until,
                                        const char *window, rt_history_github_gap **rows,
                                        size_t *n);
void rt_history_github_gap_free(rt_history_github_gap *rows, size_t n);

/* ---- the coverage of a window (history_coverage_*, [start, until)) ---- */

typedef struct rt_history_coverage_totals {
    long long runs, main_runs, pushes, main_pushes, other_branches, prs, failures_only_runs;
    char *first_run, *last_run; /* "" when no run */
} rt_history_coverage_totals;
/* *n is 1 (an aggregate). */
RT_MUSTCHECK int rt_history_coverage_totals_read(rt_pg *pg, const char *repository,
                                                 const char *start, const char *until,
                                                 rt_history_coverage_totals **rows, size_t *n);
void rt_history_coverage_totals_free(rt_history_coverage_totals *rows, size_t n);
typedef struct rt_history_coverage_day {
    char *day; /* "YYYY-MM-DD" */
    long long runs, main_runs;
} rt_history_coverage_day;
RT_MUSTCHECK int rt_history_coverage_days(rt_pg *pg, const char *repository, const char *start,
                                          const char *until, rt_history_coverage_day **rows,
                                          size_t *n);
void rt_history_coverage_day_free(rt_history_coverage_day *rows, size_t n);
/* Per project, branch class and source, at most 50. */
typedef struct rt_history_coverage_project {
    char *project, *branch_class, *source, *last_run;
    long long runs, pushes, branches, prs;
} rt_history_coverage_project;
RT_MUSTCHECK int rt_history_coverage_projects(rt_pg *pg, const char *repository, const char *start,
                                              const char *until, rt_history_coverage_project **rows,
                                              size_t *n);
void rt_history_coverage_project_free(rt_history_coverage_project *rows, size_t n);
/* Stretches of at least min_seconds with no run, the window's ends counting as runs; at
 * most 20. */
typedef struct rt_history_coverage_gap {
    char *gap_from, *gap_to;
    long long seconds;
    bool at_start, at_end;
} rt_history_coverage_gap;
RT_MUSTCHECK int rt_history_coverage_gaps(rt_pg *pg, const char *repository, const char *start,
                                          const char *until, long long min_seconds,
                                          rt_history_coverage_gap **rows, size_t *n);
void rt_history_coverage_gap_free(rt_history_coverage_gap *rows, size_t n);

/* ---- the flaky-test page's charts (`retrig report`) ---- */

/* The window as the database sees it: from midnight UTC of (until - window) to until. */
typedef struct rt_history_window {
    long long start, until; /* seconds since the epoch */
    char start_text[32], until_text[32];
} rt_history_window;
RT_MUSTCHECK int rt_history_window_read(rt_pg *pg, const char *until, const char *window,
                                        rt_history_window *out);
/* The runs of the repository in [start, until), counted up to limit. */
RT_MUSTCHECK int rt_history_window_runs(rt_pg *pg, const char *repository, const char *start,
                                        const char *until, int limit, long long *runs);
/* The runs and failures of the tests (a JSON array of names) per time slot and lane (main
 * branches or not): slots of slot_seconds from the raw rows, or, by_day, day slots from the
 * per-day rollup (a window of whole UTC days). */
typedef struct rt_history_mark {
    char *test;
    long long slot, runs, failures;
    bool main;
} rt_history_mark;
RT_MUSTCHECK int rt_history_marks(rt_pg *pg, const char *repository, const char *tests,
                                  const char *start, const char *until, int slot_seconds,
                                  bool by_day, rt_history_mark **rows, size_t *n);
void rt_history_mark_free(rt_history_mark *rows, size_t n);

#endif
