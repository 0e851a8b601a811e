/* SPDX-License-Identifier: MPL-2.0 */
/* flaky_issues.h - the store of `retrig flaky-issues` (flaky_issues, and the test history as
 * the flaky-test rule reads it): each test that is flaky or has an issue, with its figures
 * and its issue's recorded state, and an issue's state recorded after a step on the tracker.
 * The statements were cli/flaky_issues.c's until issue 33; they live in flaky_issues.c and
 * no PGresult leaves it. Errors: RT_EDB (rt_pg_errstr), RT_ECONN, RT_ENOMEM.
 * Thread-safety: per rt_pg handle. Layer: common/store. */
#ifndef RETRIG_COMMON_STORE_FLAKY_ISSUES_H
#define RETRIG_COMMON_STORE_FLAKY_ISSUES_H

#include "common/not_core.h"

#include <stdbool.h>
#include <stddef.h>

#include "common/core/errors.h"
#include "common/io/pg.h"

/* A test the flaky-test rule looks at: flaky in the window, or with an issue. Texts marked
 * NULL are NULL when unknown. */
typedef struct rt_flaky_candidate {
    char *test;
    long long runs, failures;
    double failure_rate;
    long long branches, prs, main_failures;
    double push_failure_chance;
    bool flaky; /* the rule on every branch under review, forks included */
    long long rerun_flips;
    long long last_failure; /* seconds since the epoch, 0 when none */
    char *first_failure_at, *first_failure_branch, *first_failure_revision; /* NULL */
    char *first_failure_url, *message;                                      /* NULL */
    char *state; /* the issue's: open, closed; NULL when it has none */
    long long issue_number;
    char *issue_url;
    long long comment_id; /* 0 when none */
    char *figures;        /* the figures last written, JSON text */
    char *prs_ran_failed; /* "<branches that ran it> <branches where it failed>" */
    /* "<trusted> <not trusted>": branches with a failure that count toward opening an issue,
     * and fork pull requests of authors not trusted, which do not */
    char *trusted_fork_branches;
} rt_flaky_candidate;
/* The candidates of project at now (UTC texts), over window ("N days") ending at until (the
 * end of now's UTC day, so the rollup answers), flaky above min_branches; trusted: the author
 * associations whose fork pull requests count, comma-separated. Flaky first, then by
 * breadth. */
RT_MUSTCHECK int rt_flaky_candidates(rt_pg *pg, const char *project, const char *now,
                                     const char *window, int min_branches, const char *until,
                                     const char *trusted, rt_flaky_candidate **rows, size_t *n);
void rt_flaky_candidates_free(rt_flaky_candidate *rows, size_t n);

/* An issue's state after a step on the tracker (comment_id 0: none; at: the step's time). */
typedef struct rt_flaky_issue_row {
    const char *project, *test, *marker, *tracker;
    bool open;
    long long number;
    const char *url;
    long long comment_id;
    const char *at;
    long long last_failure; /* seconds since the epoch */
    const char *figures;    /* JSON text */
} rt_flaky_issue_row;
RT_MUSTCHECK int rt_flaky_issue_record(rt_pg *pg, const rt_flaky_issue_row *row);

/* The trust rule of the flaky flag, for `retrig flakes` and its page (issue 31): per test of
 * `tests` (a JSON array of names), the branches under review (every class but main) on which
 * it failed in [until - window - flaky_window, until), the stretch history_flakes reads:
 * `trusted` counts the repository's own branches and the fork pull requests of trusted
 * authors (trusted: associations, comma-separated, as rt_flaky_candidates takes them),
 * `untrusted` the fork pull requests of others (github_fork_runs, migration 0036). Tests
 * without a failure there are left out, and every test of a repository with no run from a
 * fork (so the flag stands as history_flakes gives it). */
typedef struct rt_flaky_trust {
    char *test;
    long long trusted, untrusted;
} rt_flaky_trust;
RT_MUSTCHECK int rt_flaky_trust_read(rt_pg *pg, const char *project, const char *until,
                                     const char *window, const char *flaky_window,
                                     const char *trusted, const char *tests_json,
                                     rt_flaky_trust **rows, size_t *n);
void rt_flaky_trust_free(rt_flaky_trust *rows, size_t n);

#endif
