/* SPDX-License-Identifier: MPL-2.0 */
/* flaky_issues.c - the statements of `retrig flaky-issues` (flaky_issues.h). Moved from
 * cli/flaky_issues.c (issue 33): the statements are unchanged. */
#include "common/store/flaky_issues.h"

#include <stdio.h>

#include "common/store/rows.h"

#define TS(col) "to_char(" col " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"

/* $1 project, $2 now, $3 window, $4 min branches, $5 the window's end: the end of now's UTC
 * day, so that the window is whole days, read from the rollup (as `retrig flakes` reads it;
 * a window ending at now reads the raw rows, which took minutes at 50 million outcomes);
 * $6 the trusted author associations, comma-separated. trusted_fork_branches: the branches
 * (pull requests) with a failure in the window that count toward opening an issue, and
 * those that do not (fork pull requests of authors not trusted: github_fork_runs). */
// clang-format off
static const char SQL_CANDIDATES[] =
    "WITH f AS (SELECT * FROM history_flakes($1, $5::timestamptz - $3::interval,"
    "                 $5::timestamptz, false, $4::integer, $3::interval)),"
    " m AS (SELECT test, failures FROM history_flakes($1, $5::timestamptz - $3::interval,"
    "                 $5::timestamptz, true, $4::integer, $3::interval)),"
    " t AS (SELECT test FROM f UNION SELECT test FROM flaky_issues WHERE project = $1)"
    " SELECT t.test, coalesce(f.runs, 0) AS runs, coalesce(f.failures, 0) AS failures,"
    "        coalesce(f.failure_rate, 0) AS failure_rate, coalesce(f.branches, 0) AS branches,"
    "        coalesce(f.prs, 0) AS prs, coalesce(m.failures, 0) AS main_failures,"
    "        coalesce(f.push_failure_chance, 0) AS push_failure_chance,"
    "        coalesce(f.flaky, false) AS flaky,"
    "        (SELECT count(*) FROM github_rerun_flips x WHERE x.repository = $1"
    "           AND x.test = t.test AND x.failed_at >= $5::timestamptz - $3::interval"
    "           AND x.failed_at <= $2::timestamptz) AS rerun_flips,"
    "        (SELECT extract(epoch FROM max(r.run_at))::bigint FROM history_tests ht"
    "           JOIN history_runs r ON r.id = ht.run_id WHERE r.repository = $1"
    "           AND ht.test = t.test AND ht.failed AND r.run_at <= $2::timestamptz)"
    "          AS last_failure,"
    "        " TS("f.first_failure_at") " AS first_failure_at, f.first_failure_branch,"
    "        f.first_failure_revision,"
    "        (SELECT g.html_url FROM github_runs g WHERE g.repository = $1"
    "           AND g.head_sha = f.first_failure_revision ORDER BY g.run_started_at LIMIT 1)"
    "          AS first_failure_url,"
    "        (SELECT ht.message FROM history_tests ht JOIN history_runs r ON r.id = ht.run_id"
    "           WHERE r.repository = $1 AND ht.test = t.test AND ht.failed"
    "             AND r.run_at <= $2::timestamptz ORDER BY r.run_at DESC LIMIT 1) AS message,"
    "        fi.state, fi.issue_number, fi.issue_url, fi.comment_id, fi.figures::text AS figures,"
    "        (SELECT count(DISTINCT r.branch_key) || ' ' ||"
    "                count(DISTINCT r.branch_key) FILTER (WHERE ht.failed)"
    "           FROM history_tests ht JOIN history_runs r ON r.id = ht.run_id"
    "          WHERE r.repository = $1 AND ht.test = t.test AND r.branch_class = 'other'"
    "            AND r.run_at >= $5::timestamptz - $3::interval AND r.run_at < $5::timestamptz)"
    "          AS prs_ran_failed,"
    "        (SELECT count(DISTINCT r.branch_key) FILTER (WHERE x.history_run_id IS NULL) || ' ' ||"
    "                count(DISTINCT r.branch_key) FILTER (WHERE x.history_run_id IS NOT NULL)"
    "           FROM history_tests ht JOIN history_runs r ON r.id = ht.run_id"
    "           LEFT JOIN github_fork_runs x ON x.history_run_id = r.id"
    "                 AND NOT coalesce(upper(x.author_association)"
    "                                  = ANY (string_to_array($6, ',')), false)"
    "          WHERE r.repository = $1 AND ht.test = t.test AND ht.failed"
    "            AND r.branch_class = 'other'"
    "            AND r.run_at >= $5::timestamptz - $3::interval AND r.run_at < $5::timestamptz)"
    "          AS trusted_fork_branches"
    "   FROM t LEFT JOIN f ON f.test = t.test LEFT JOIN m ON m.test = t.test"
    "   LEFT JOIN flaky_issues fi ON fi.project = $1 AND fi.test = t.test"
    "  ORDER BY coalesce(f.flaky, false) DESC, coalesce(f.branches, 0) DESC, t.test";
// clang-format on

static const char SQL_RECORD[] =
    "INSERT INTO flaky_issues (project, test, marker, tracker, state, issue_number, issue_url,"
    " comment_id, opened_at, updated_at, closed_at, reopened_at, last_failure_at, figures)"
    " VALUES ($1, $2, $3, $4, $5, $6::bigint, $7, $8::bigint, $9::timestamptz, $9::timestamptz,"
    " CASE WHEN $5 = 'closed' THEN $9::timestamptz END, NULL, to_timestamp($10::bigint),"
    " $11::jsonb)"
    " ON CONFLICT (project, test) DO UPDATE SET state = EXCLUDED.state,"
    " issue_number = EXCLUDED.issue_number, issue_url = EXCLUDED.issue_url,"
    " comment_id = EXCLUDED.comment_id, updated_at = EXCLUDED.updated_at,"
    " closed_at = CASE WHEN EXCLUDED.state = 'closed' THEN coalesce(CASE WHEN"
    "   flaky_issues.state = 'closed' THEN flaky_issues.closed_at END, EXCLUDED.updated_at) END,"
    " reopened_at = CASE WHEN flaky_issues.state = 'closed' AND EXCLUDED.state = 'open'"
    "   THEN EXCLUDED.updated_at ELSE flaky_issues.reopened_at END,"
    " last_failure_at = EXCLUDED.last_failure_at, figures = EXCLUDED.figures";

#define F(member, kind, column) RT_ROW_FIELD(rt_flaky_candidate, member, RT_ROW_##kind, column)
static const rt_row_field CANDIDATE_FIELDS[] = {
    F(test, TEXT, "test"),
    F(runs, INT, "runs"),
    F(failures, INT, "failures"),
    F(failure_rate, FLOAT, "failure_rate"),
    F(branches, INT, "branches"),
    F(prs, INT, "prs"),
    F(main_failures, INT, "main_failures"),
    F(push_failure_chance, FLOAT, "push_failure_chance"),
    F(flaky, BOOL, "flaky"),
    F(rerun_flips, INT, "rerun_flips"),
    F(last_failure, INT, "last_failure"),
    F(first_failure_at, TEXT_NULL, "first_failure_at"),
    F(first_failure_branch, TEXT_NULL, "first_failure_branch"),
    F(first_failure_revision, TEXT_NULL, "first_failure_revision"),
    F(first_failure_url, TEXT_NULL, "first_failure_url"),
    F(message, TEXT_NULL, "message"),
    F(state, TEXT_NULL, "state"),
    F(issue_number, INT, "issue_number"),
    F(issue_url, TEXT, "issue_url"),
    F(comment_id, INT, "comment_id"),
    F(figures, TEXT, "figures"),
    F(prs_ran_failed, TEXT, "prs_ran_failed"),
    F(trusted_fork_branches, TEXT, "trusted_fork_branches"),
};
#undef F
static const rt_row_spec CANDIDATE_SPEC = {CANDIDATE_FIELDS,
                                           sizeof CANDIDATE_FIELDS / sizeof *CANDIDATE_FIELDS,
                                           sizeof(rt_flaky_candidate)};

int rt_flaky_candidates(rt_pg *pg, const char *project, const char *now, const char *window,
                        int min_branches, const char *until, const char *trusted,
                        rt_flaky_candidate **rows, size_t *n)
{
    char min[16];
    snprintf(min, sizeof min, "%d", min_branches);
    const char *params[] = {project, now, window, min, until, trusted};
    return rt_store_rows(pg, SQL_CANDIDATES, 6, params, &CANDIDATE_SPEC, rows, n);
}

void rt_flaky_candidates_free(rt_flaky_candidate *rows, size_t n)
{
    rt_store_rows_free(&CANDIDATE_SPEC, rows, n);
}

int rt_flaky_issue_record(rt_pg *pg, const rt_flaky_issue_row *r)
{
    char number[24], comment[24], last[24];
    snprintf(number, sizeof number, "%lld", r->number);
    snprintf(comment, sizeof comment, "%lld", r->comment_id);
    snprintf(last, sizeof last, "%lld", r->last_failure > 0 ? r->last_failure : 0);
    const char *params[] = {r->project,
                            r->test,
                            r->marker,
                            r->tracker,
                            r->open ? "open" : "closed",
                            number,
                            r->url,
                            r->comment_id > 0 ? comment : NULL,
                            r->at,
                            last,
                            r->figures};
    return rt_pg_exec(pg, SQL_RECORD, 11, params, NULL);
}

/* $1 project, $2 until, $3 window, $4 flaky window, $5 trusted associations, $6 the tests (a
 * JSON array): one index scan per test (history_tests_test_idx), and none at all for a
 * repository without runs from forks (every Taskcluster project: a one-time filter). */
// clang-format off
static const char SQL_TRUST[] =
    "SELECT ht.test,"
    "       count(DISTINCT r.branch_key) FILTER (WHERE x.history_run_id IS NULL) AS trusted,"
    "       count(DISTINCT r.branch_key) FILTER (WHERE x.history_run_id IS NOT NULL) AS untrusted"
    "  FROM history_tests ht JOIN history_runs r ON r.id = ht.run_id AND r.run_at = ht.run_at"
    "  LEFT JOIN github_fork_runs x ON x.history_run_id = r.id"
    "        AND NOT coalesce(upper(x.author_association) = ANY (string_to_array($5, ',')), false)"
    " WHERE EXISTS (SELECT 1 FROM github_runs g WHERE g.repository = $1"
    "                 AND lower(g.head_repository) <> lower(g.repository))"
    "   AND r.repository = $1 AND ht.failed AND r.branch_class <> 'main'"
    "   AND ht.test IN (SELECT json_array_elements_text($6::json))"
    "   AND r.run_at >= $2::timestamptz - $3::interval - $4::interval"
    "   AND r.run_at < $2::timestamptz"
    "   AND ht.run_at >= $2::timestamptz - $3::interval - $4::interval"
    "   AND ht.run_at < $2::timestamptz"
    " GROUP BY ht.test";
// clang-format on

#define F(member, kind, column) RT_ROW_FIELD(rt_flaky_trust, member, RT_ROW_##kind, column)
static const rt_row_field TRUST_FIELDS[] = {
    F(test, TEXT, "test"),
    F(trusted, INT, "trusted"),
    F(untrusted, INT, "untrusted"),
};
#undef F
static const rt_row_spec TRUST_SPEC = {TRUST_FIELDS, sizeof TRUST_FIELDS / sizeof *TRUST_FIELDS,
                                       sizeof(rt_flaky_trust)};

int rt_flaky_trust_read(rt_pg *pg, const char *project, const char *until, const char *window,
                        const char *flaky_window, const char *trusted, const char *tests_json,
                        rt_flaky_trust **rows, size_t *n)
{
    const char *params[] = {project, until, window, flaky_window, trusted, tests_json};
    return rt_store_rows(pg, SQL_TRUST, 6, params, &TRUST_SPEC, rows, n);
}

void rt_flaky_trust_free(rt_flaky_trust *rows, size_t n)
{
    rt_store_rows_free(&TRUST_SPEC, rows, n);
}
