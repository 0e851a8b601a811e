/* SPDX-License-Identifier: MPL-2.0 */
/* history.c - the test history's reads for `retrig flakes` and `retrig report`, and their
 * row types' fields (history.h). Moved from cli/flakes.c, cli/coverage.c and cli/report.c
 * (issue 33): the statements are unchanged. */
#include "common/store/history.h"

#include <stdio.h>
#include <string.h>

#include "common/io/log.h"
#include "common/store/rows.h"

#define TS(col)                       "to_char(" col " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"
#define F(type, member, kind, column) RT_ROW_FIELD(type, member, RT_ROW_##kind, column)
/* The spec and free function of a row type. */
#define ROWS(type, fields)                                                                         \
    static const rt_row_spec type##_spec = {fields, sizeof fields / sizeof fields[0],              \
                                            sizeof(type)};                                         \
    void type##_free(type *rows, size_t n) { rt_store_rows_free(&type##_spec, rows, n); }

/* ---- the flaky tests ---- */

// clang-format off
static const char SQL_FLAKES[] =
    "SELECT test, group_name, runs, failures, failure_rate, pushes, pushes_failed,"
    "       push_failure_chance, branches, prs, " TS("first_failure_at") " AS first_failure_at,"
    "       first_failure_project, first_failure_branch, first_failure_push,"
    "       first_failure_revision, first_failure_signature, flaky"
    "  FROM history_flakes($1, $2::timestamptz - $3::interval, $2::timestamptz, $4::boolean,"
    "                      $5::integer, $6::interval) LIMIT $7::integer";
// clang-format on
static const rt_row_field FLAKE[] = {
    F(rt_history_flake, test, TEXT, "test"),
    F(rt_history_flake, group_name, TEXT_NULL, "group_name"),
    F(rt_history_flake, runs, INT, "runs"),
    F(rt_history_flake, failures, INT, "failures"),
    F(rt_history_flake, failure_rate, FLOAT, "failure_rate"),
    F(rt_history_flake, pushes, INT, "pushes"),
    F(rt_history_flake, pushes_failed, INT, "pushes_failed"),
    F(rt_history_flake, push_failure_chance, FLOAT, "push_failure_chance"),
    F(rt_history_flake, branches, INT, "branches"),
    F(rt_history_flake, prs, INT, "prs"),
    F(rt_history_flake, first_failure_at, TEXT_NULL, "first_failure_at"),
    F(rt_history_flake, first_failure_project, TEXT_NULL, "first_failure_project"),
    F(rt_history_flake, first_failure_branch, TEXT_NULL, "first_failure_branch"),
    F(rt_history_flake, first_failure_push, TEXT_NULL, "first_failure_push"),
    F(rt_history_flake, first_failure_revision, TEXT_NULL, "first_failure_revision"),
    F(rt_history_flake, first_failure_signature, TEXT_NULL, "first_failure_signature"),
    F(rt_history_flake, flaky, BOOL, "flaky"),
};
ROWS(rt_history_flake, FLAKE)

/* history_flakes's parameters for q, in texts that live in t. */
typedef struct flakes_params {
    char min_branches[16], flaky_window[32], limit[16];
    const char *values[7];
} flakes_params;

static void set_params(flakes_params *t, const rt_history_flakes_query *q)
{
    snprintf(t->min_branches, sizeof t->min_branches, "%d", q->min_branches);
    snprintf(t->flaky_window, sizeof t->flaky_window, "%d days", q->flaky_window_days);
    snprintf(t->limit, sizeof t->limit, "%d", q->limit > 0 ? q->limit : 1000);
    const char *values[] = {q->project,      q->until,        q->window, q->main_only ? "t" : "f",
                            t->min_branches, t->flaky_window, t->limit};
    memcpy(t->values, values, sizeof values);
}

int rt_history_flakes_read(rt_pg *pg, const rt_history_flakes_query *q, rt_history_flake **rows,
                           size_t *n)
{
    flakes_params t;
    set_params(&t, q);
    return rt_store_rows(pg, SQL_FLAKES, 7, t.values, &rt_history_flake_spec, rows, n);
}

int rt_history_flakes_send(rt_pg *pg, const rt_history_flakes_query *q)
{
    flakes_params t;
    set_params(&t, q);
    /* libpq copies the parameters into its buffer here */
    if (PQsendQueryParams(rt_pg_conn(pg), SQL_FLAKES, 7, NULL, t.values, NULL, NULL, 0) == 1)
        return RT_OK;
    rt_log_error("cannot query the test history", "error", PQerrorMessage(rt_pg_conn(pg)));
    return RT_EDB;
}

int rt_history_flakes_wait(rt_pg *pg, rt_history_flake **rows, size_t *n)
{
    *rows = NULL;
    *n = 0;
    PGresult *res = NULL, *next;
    while ((next = PQgetResult(rt_pg_conn(pg)))) {
        if (res) PQclear(res);
        res = next;
    }
    int rc = RT_EDB;
    if (res && PQresultStatus(res) == PGRES_TUPLES_OK)
        rc = rt_store_rows_read(res, &rt_history_flake_spec, rows, n);
    else
        rt_log_error("cannot query the test history", "error",
                     res ? PQresultErrorMessage(res) : PQerrorMessage(rt_pg_conn(pg)));
    PQclear(res);
    return rc;
}

/* ---- projects collected from GitHub ---- */

/* $1 project, $2 until, $3 window. */
static const char SQL_FLIPS[] =
    "SELECT test, count(*) AS flips FROM github_rerun_flips WHERE repository = $1"
    " AND failed_at >= $2::timestamptz - $3::interval AND failed_at < $2::timestamptz"
    " GROUP BY test";
static const char SQL_ISSUES[] =
    "SELECT test, state, issue_number, issue_url, tracker FROM flaky_issues WHERE project = $1";
static const char SQL_COVERAGE[] =
    "SELECT count(*) AS run_attempts,"
    "       count(*) FILTER (WHERE outcomes > 0) AS attempts_with_outcomes,"
    "       count(*) FILTER (WHERE EXISTS (SELECT 1 FROM github_gaps g"
    "                          WHERE g.repository = r.repository AND g.run_id = r.run_id"
    "                            AND g.attempt = r.attempt)) AS attempts_with_gaps,"
    "       coalesce(sum(expired_artifacts), 0) AS expired_artifacts,"
    "       count(*) FILTER (WHERE attempt > 1) AS rerun_attempts,"
    "       coalesce(sum(outcomes), 0) AS outcomes"
    "  FROM github_runs r WHERE repository = $1"
    "   AND run_started_at >= $2::timestamptz - $3::interval AND run_started_at < $2::timestamptz";
static const char SQL_GAP_KINDS[] =
    "SELECT g.kind, count(*) AS gaps FROM github_gaps g JOIN github_runs r USING (repository, "
    "run_id,"
    " attempt) WHERE g.repository = $1 AND r.run_started_at >= $2::timestamptz - $3::interval"
    " AND r.run_started_at < $2::timestamptz GROUP BY g.kind ORDER BY g.kind";
// clang-format off
static const char SQL_GAPS[] =
    "SELECT g.run_id, g.attempt, g.kind, g.artifact, g.file, g.detail, r.html_url, r.branch_key,"
    "       " TS("r.run_started_at") " AS started"
    "  FROM github_gaps g JOIN github_runs r USING (repository, run_id, attempt)"
    " WHERE g.repository = $1 AND r.run_started_at >= $2::timestamptz - $3::interval"
    "   AND r.run_started_at < $2::timestamptz"
    " ORDER BY r.run_started_at DESC, g.run_id, g.attempt, g.kind, g.artifact, g.file LIMIT 100";
// clang-format on
static const rt_row_field FLIP[] = {
    F(rt_history_flip, test, TEXT, "test"),
    F(rt_history_flip, flips, INT, "flips"),
};
ROWS(rt_history_flip, FLIP)
static const rt_row_field ISSUE[] = {
    F(rt_history_issue, test, TEXT, "test"),
    F(rt_history_issue, state, TEXT, "state"),
    F(rt_history_issue, issue_number, INT, "issue_number"),
    F(rt_history_issue, issue_url, TEXT, "issue_url"),
    F(rt_history_issue, tracker, TEXT, "tracker"),
};
ROWS(rt_history_issue, ISSUE)
static const rt_row_field GITHUB_COVERAGE[] = {
    F(rt_history_github_coverage, run_attempts, INT, "run_attempts"),
    F(rt_history_github_coverage, attempts_with_outcomes, INT, "attempts_with_outcomes"),
    F(rt_history_github_coverage, attempts_with_gaps, INT, "attempts_with_gaps"),
    F(rt_history_github_coverage, expired_artifacts, INT, "expired_artifacts"),
    F(rt_history_github_coverage, rerun_attempts, INT, "rerun_attempts"),
    F(rt_history_github_coverage, outcomes, INT, "outcomes"),
};
static const rt_row_spec GITHUB_COVERAGE_SPEC = {GITHUB_COVERAGE, 6,
                                                 sizeof(rt_history_github_coverage)};
const char *const rt_history_github_coverage_names[6] = {
    "run_attempts",      "attempts_with_outcomes", "attempts_with_gaps",
    "expired_artifacts", "rerun_attempts",         "outcomes"};
static const rt_row_field GAP_KIND[] = {
    F(rt_history_gap_kind, kind, TEXT, "kind"),
    F(rt_history_gap_kind, gaps, INT, "gaps"),
};
ROWS(rt_history_gap_kind, GAP_KIND)
static const rt_row_field GITHUB_GAP[] = {
    F(rt_history_github_gap, run_id, INT, "run_id"),
    F(rt_history_github_gap, attempt, INT, "attempt"),
    F(rt_history_github_gap, kind, TEXT, "kind"),
    F(rt_history_github_gap, artifact, TEXT, "artifact"),
    F(rt_history_github_gap, file, TEXT, "file"),
    F(rt_history_github_gap, detail, TEXT_NULL, "detail"),
    F(rt_history_github_gap, html_url, TEXT_NULL, "html_url"),
    F(rt_history_github_gap, branch_key, TEXT, "branch_key"),
    F(rt_history_github_gap, started, TEXT, "started"),
};
ROWS(rt_history_github_gap, GITHUB_GAP)

int rt_history_flips(rt_pg *pg, const char *project, const char *until, const char *window,
                     rt_history_flip **rows, size_t *n)
{
    const char *params[] = {project, until, window};
    return rt_store_rows(pg, SQL_FLIPS, 3, params, &rt_history_flip_spec, rows, n);
}

int rt_history_issues(rt_pg *pg, const char *project, rt_history_issue **rows, size_t *n)
{
    const char *params[] = {project};
    return rt_store_rows(pg, SQL_ISSUES, 1, params, &rt_history_issue_spec, rows, n);
}

int rt_history_github_coverage_read(rt_pg *pg, const char *project, const char *until,
                                    const char *window, rt_history_github_coverage *out)
{
    memset(out, 0, sizeof *out);
    const char *params[] = {project, until, window};
    rt_history_github_coverage *rows = NULL;
    size_t n = 0;
    int rc = rt_store_rows(pg, SQL_COVERAGE, 3, params, &GITHUB_COVERAGE_SPEC, &rows, &n);
    if (rc == RT_OK && n == 1) *out = rows[0];
    rt_store_rows_free(&GITHUB_COVERAGE_SPEC, rows, n);
    return rc;
}

int rt_history_gap_kinds(rt_pg *pg, const char *project, const char *until, const char *window,
                         rt_history_gap_kind **rows, size_t *n)
{
    const char *params[] = {project, until, window};
    return rt_store_rows(pg, SQL_GAP_KINDS, 3, params, &rt_history_gap_kind_spec, rows, n);
}

int rt_history_github_gaps(rt_pg *pg, const char *project, const char *until, const char *window,
                           rt_history_github_gap **rows, size_t *n)
{
    const char *params[] = {project, until, window};
    return rt_store_rows(pg, SQL_GAPS, 3, params, &rt_history_github_gap_spec, rows, n);
}

/* ---- the coverage of a window ---- */

/* The four reads are functions of migration 0030: from the per-day and per-hour rollup of the
 * runs for a window of whole UTC days (retrig report's default), else from history_runs. */
// clang-format off
static const char SQL_TOTALS[] =
    "SELECT runs, main_runs, pushes, main_pushes, other_branches, prs, failures_only_runs,"
    " coalesce(" TS("first_run") ", '') AS first_run,"
    " coalesce(" TS("last_run") ", '') AS last_run"
    " FROM history_coverage_totals($1, $2::timestamptz, $3::timestamptz)";
// clang-format on
static const char SQL_COVERAGE_DAYS[] =
    "SELECT to_char(day, 'YYYY-MM-DD') AS day, runs, main_runs"
    " FROM history_coverage_days($1, $2::timestamptz, $3::timestamptz)";
// clang-format off
static const char SQL_PROJECTS[] =
    "SELECT project, branch_class, source, runs, pushes, " TS("last_run") " AS last_run,"
    " branches, prs FROM history_coverage_projects($1, $2::timestamptz, $3::timestamptz, 50)";
// clang-format on
/* Stretches of at least $4 seconds with no run, the window's ends counting as runs. */
// clang-format off
static const char SQL_COVERAGE_GAPS[] =
    "SELECT " TS("gap_from") " AS gap_from, " TS("gap_to") " AS gap_to, seconds, at_start,"
    " at_end FROM history_coverage_gaps($1, $2::timestamptz, $3::timestamptz, $4::integer, 20)";
// clang-format on
static const rt_row_field TOTALS[] = {
    F(rt_history_coverage_totals, runs, INT, "runs"),
    F(rt_history_coverage_totals, main_runs, INT, "main_runs"),
    F(rt_history_coverage_totals, pushes, INT, "pushes"),
    F(rt_history_coverage_totals, main_pushes, INT, "main_pushes"),
    F(rt_history_coverage_totals, other_branches, INT, "other_branches"),
    F(rt_history_coverage_totals, prs, INT, "prs"),
    F(rt_history_coverage_totals, failures_only_runs, INT, "failures_only_runs"),
    F(rt_history_coverage_totals, first_run, TEXT, "first_run"),
    F(rt_history_coverage_totals, last_run, TEXT, "last_run"),
};
ROWS(rt_history_coverage_totals, TOTALS)
static const rt_row_field COVERAGE_DAY[] = {
    F(rt_history_coverage_day, day, TEXT, "day"),
    F(rt_history_coverage_day, runs, INT, "runs"),
    F(rt_history_coverage_day, main_runs, INT, "main_runs"),
};
ROWS(rt_history_coverage_day, COVERAGE_DAY)
static const rt_row_field COVERAGE_PROJECT[] = {
    F(rt_history_coverage_project, project, TEXT, "project"),
    F(rt_history_coverage_project, branch_class, TEXT, "branch_class"),
    F(rt_history_coverage_project, source, TEXT, "source"),
    F(rt_history_coverage_project, runs, INT, "runs"),
    F(rt_history_coverage_project, pushes, INT, "pushes"),
    F(rt_history_coverage_project, last_run, TEXT, "last_run"),
    F(rt_history_coverage_project, branches, INT, "branches"),
    F(rt_history_coverage_project, prs, INT, "prs"),
};
ROWS(rt_history_coverage_project, COVERAGE_PROJECT)
static const rt_row_field COVERAGE_GAP[] = {
    F(rt_history_coverage_gap, gap_from, TEXT, "gap_from"),
    F(rt_history_coverage_gap, gap_to, TEXT, "gap_to"),
    F(rt_history_coverage_gap, seconds, INT, "seconds"),
    F(rt_history_coverage_gap, at_start, BOOL, "at_start"),
    F(rt_history_coverage_gap, at_end, BOOL, "at_end"),
};
ROWS(rt_history_coverage_gap, COVERAGE_GAP)

int rt_history_coverage_totals_read(rt_pg *pg, const char *repository, const char *start,
                                    const char *until, rt_history_coverage_totals **rows, size_t *n)
{
    const char *params[] = {repository, start, until};
    return rt_store_rows(pg, SQL_TOTALS, 3, params, &rt_history_coverage_totals_spec, rows, n);
}

int rt_history_coverage_days(rt_pg *pg, const char *repository, const char *start,
                             const char *until, rt_history_coverage_day **rows, size_t *n)
{
    const char *params[] = {repository, start, until};
    return rt_store_rows(pg, SQL_COVERAGE_DAYS, 3, params, &rt_history_coverage_day_spec, rows, n);
}

int rt_history_coverage_projects(rt_pg *pg, const char *repository, const char *start,
                                 const char *until, rt_history_coverage_project **rows, size_t *n)
{
    const char *params[] = {repository, start, until};
    return rt_store_rows(pg, SQL_PROJECTS, 3, params, &rt_history_coverage_project_spec, rows, n);
}

int rt_history_coverage_gaps(rt_pg *pg, const char *repository, const char *start,
                             const char *until, long long min_seconds,
                             rt_history_coverage_gap **rows, size_t *n)
{
    char seconds[24];
    snprintf(seconds, sizeof seconds, "%lld", min_seconds);
    const char *params[] = {repository, start, until, seconds};
    return rt_store_rows(pg, SQL_COVERAGE_GAPS, 4, params, &rt_history_coverage_gap_spec, rows, n);
}

/* ---- the flaky-test page's charts ---- */

/* The window as the database sees it: from midnight UTC of (until - window) to until. */
// clang-format off
static const char SQL_WINDOW[] =
    "SELECT extract(epoch FROM x.s)::bigint AS start_epoch,"
    " extract(epoch FROM x.u)::bigint AS until_epoch,"
    " " TS("x.s") " AS start_text, " TS("x.u") " AS until_text"
    " FROM (SELECT date_trunc('day', ($1::timestamptz - $2::interval)"
    " AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS s, $1::timestamptz AS u) x";
// clang-format on
static const char SQL_MARKS[] =
    "SELECT m.test, m.slot, m.main, m.runs, m.failures FROM history_run_marks($1,"
    " ARRAY(SELECT jsonb_array_elements_text($2::jsonb)), $3::timestamptz, $4::timestamptz,"
    " $5::integer) m";
/* The same marks in day slots from the per-day rollup (migration 0026), for a window of
 * whole UTC days with more runs than the raw read handles quickly. */
static const char SQL_DAY_MARKS[] =
    "SELECT d.test, (d.day - ($3::timestamptz AT TIME ZONE 'UTC')::date) AS slot,"
    " d.branch_class = 'main' AS main, d.runs, d.failures FROM history_tests_days($1,"
    " ARRAY(SELECT jsonb_array_elements_text($2::jsonb)), ($3::timestamptz AT TIME ZONE"
    " 'UTC')::date, ($4::timestamptz AT TIME ZONE 'UTC')::date) d";
static const char SQL_WINDOW_RUNS[] =
    "SELECT count(*) AS runs FROM (SELECT 1 FROM history_runs WHERE repository = $1"
    " AND run_at >= $2::timestamptz AND run_at < $3::timestamptz LIMIT $4::integer) r";
typedef struct window_row {
    long long start, until;
    char *start_text, *until_text;
} window_row;
static const rt_row_field WINDOW[] = {
    F(window_row, start, INT, "start_epoch"),
    F(window_row, until, INT, "until_epoch"),
    F(window_row, start_text, TEXT, "start_text"),
    F(window_row, until_text, TEXT, "until_text"),
};
static const rt_row_spec WINDOW_SPEC = {WINDOW, 4, sizeof(window_row)};
typedef struct count_row {
    long long runs;
} count_row;
static const rt_row_field COUNT[] = {F(count_row, runs, INT, "runs")};
static const rt_row_spec COUNT_SPEC = {COUNT, 1, sizeof(count_row)};
static const rt_row_field MARK[] = {
    F(rt_history_mark, test, TEXT, "test"),        F(rt_history_mark, slot, INT, "slot"),
    F(rt_history_mark, main, BOOL, "main"),        F(rt_history_mark, runs, INT, "runs"),
    F(rt_history_mark, failures, INT, "failures"),
};
ROWS(rt_history_mark, MARK)

int rt_history_window_read(rt_pg *pg, const char *until, const char *window, rt_history_window *out)
{
    memset(out, 0, sizeof *out);
    const char *params[] = {until, window};
    window_row *rows = NULL;
    size_t n = 0;
    int rc = rt_store_rows(pg, SQL_WINDOW, 2, params, &WINDOW_SPEC, &rows, &n);
    if (rc == RT_OK && n == 1) {
        out->start = rows[0].start;
        out->until = rows[0].until;
        snprintf(out->start_text, sizeof out->start_text, "%s", rows[0].start_text);
        snprintf(out->until_text, sizeof out->until_text, "%s", rows[0].until_text);
    }
    rt_store_rows_free(&WINDOW_SPEC, rows, n);
    return rc;
}

int rt_history_window_runs(rt_pg *pg, const char *repository, const char *start, const char *until,
                           int limit, long long *runs)
{
    char limit_text[16];
    snprintf(limit_text, sizeof limit_text, "%d", limit);
    const char *params[] = {repository, start, until, limit_text};
    count_row *rows = NULL;
    size_t n = 0;
    int rc = rt_store_rows(pg, SQL_WINDOW_RUNS, 4, params, &COUNT_SPEC, &rows, &n);
    *runs = rc == RT_OK && n == 1 ? rows[0].runs : 0;
    rt_store_rows_free(&COUNT_SPEC, rows, n);
    return rc;
}

int rt_history_marks(rt_pg *pg, const char *repository, const char *tests, const char *start,
                     const char *until, int slot_seconds, bool by_day, rt_history_mark **rows,
                     size_t *n)
{
    char slot[16];
    snprintf(slot, sizeof slot, "%d", slot_seconds);
    const char *params[] = {repository, tests, start, until, slot};
    return rt_store_rows(pg, by_day ? SQL_DAY_MARKS : SQL_MARKS, by_day ? 4 : 5, params,
                         &rt_history_mark_spec, rows, n);
}
