/* SPDX-License-Identifier: MPL-2.0 */
/* flakes.c - `retrig flakes`: the tests of a project that fail, from the test history
 * (history_flakes in migrations/0006_history.sql): runs, failures and failure rate in a
 * window (main branches only or all), how widely they fail (pushes, branches, pull
 * requests), their first failure with the same signature, and the flaky flag: failed on
 * more than N branches or pull requests within history_flaky_window_days, even if never
 * on main. For projects collected from GitHub (retrig collect-github) each test also shows
 * its re-run flips (failed, then passed on a later attempt of the same run) and its flaky
 * issue (retrig flaky-issues), and the JSON output has a coverage section: the run attempts
 * of the window, those that gave outcomes, and the gaps (what could not be used). Read-only. */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/io/pg.h"

#define TS(col) "to_char(" col " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"

static const char SQL_FLAKES[] =
    "SELECT test, group_name, runs, failures, failure_rate, pushes, pushes_failed,"
    " push_failure_chance, branches, prs, " TS(
        "first_failure_at") ", first_failure_project,"
                            " first_failure_branch, first_failure_push, first_failure_revision, "
                            "first_failure_signature, flaky"
                            " FROM history_flakes($1, $2::timestamptz - $3::interval, "
                            "$2::timestamptz, $4::boolean,"
                            " $5::integer, $6::interval) LIMIT $7::integer";

/* $1 project, $2 until, $3 window. */
static const char SQL_FLIPS[] =
    "SELECT test, count(*) FROM github_rerun_flips WHERE repository = $1"
    " AND failed_at >= $2::timestamptz - $3::interval AND failed_at < $2::timestamptz"
    " GROUP BY test";
static const char SQL_ISSUES[] =
    "SELECT test, state, issue_number, issue_url, tracker FROM flaky_issues WHERE project = $1";
static const char SQL_COVERAGE[] =
    "SELECT count(*), count(*) FILTER (WHERE outcomes > 0),"
    "       count(*) FILTER (WHERE EXISTS (SELECT 1 FROM github_run_gaps g"
    "                          WHERE g.repository = r.repository AND g.run_id = r.run_id"
    "                            AND g.attempt = r.attempt)),"
    "       coalesce(sum(expired_artifacts), 0), count(*) FILTER (WHERE attempt > 1),"
    "       coalesce(sum(outcomes), 0)"
    "  FROM github_runs r WHERE repository = $1"
    "   AND run_started_at >= $2::timestamptz - $3::interval AND run_started_at < $2::timestamptz";
static const char SQL_GAP_KINDS[] =
    "SELECT g.kind, count(*) FROM github_run_gaps g JOIN github_runs r USING (repository, run_id,"
    " attempt) WHERE g.repository = $1 AND r.run_started_at >= $2::timestamptz - $3::interval"
    " AND r.run_started_at < $2::timestamptz GROUP BY g.kind ORDER BY g.kind";
// clang-format off
static const char SQL_GAPS[] =
    "SELECT g.run_id, g.attempt, g.kind, g.artifact, g.file, g.detail, r.html_url, r.branch_key,"
    "       " TS("r.run_started_at")
    "  FROM github_run_gaps g JOIN github_runs r USING (repository, run_id, attempt)"
    " WHERE g.repository = $1 AND r.run_started_at >= $2::timestamptz - $3::interval"
    "   AND r.run_started_at < $2::timestamptz"
    " ORDER BY r.run_started_at DESC, g.run_id, g.attempt, g.kind, g.artifact, g.file LIMIT 100";
// clang-format on

static void usage(FILE *out)
{
    fprintf(out,
            "usage: retrig flakes --project P [--window 7d] [--until ISO-8601] [--min-branches N]\n"
            "                     [--main-only] [--limit N] [--format json|table]\n"
            "Tests of P (a repository: history_repository for Taskcluster, OWNER/REPO for\n"
            "JUnit) that failed in the window ending at --until (default now), flaky ones\n"
            "first. --main-only counts runs on main branches only; the flaky flag (failed on\n"
            "more than N branches or pull requests within history_flaky_window_days; N\n"
            "defaults to history_flaky_min_branches) always looks at every branch.\n"
            "For a GitHub project (retrig collect-github) each test also shows its re-run\n"
            "flips and its issue (retrig flaky-issues), and --format json adds a coverage\n"
            "section: run attempts, those with outcomes, and the gaps (what could not be used).\n"
            "--format json prints {\"project\", \"window\", \"until\", \"tests\": [...],\n"
            "\"coverage\": {...}, \"gaps\": [...]}.\n"
            "Exit: 0 listed, 1 database error, 2 usage.\n");
}

int rt__cli_parse_duration(const char *text, char *out, size_t size)
{
    char *end = NULL;
    long n = strtol(text, &end, 10);
    if (end == text || n <= 0 || n > 100000 || !end[0] || end[1]) return -1;
    const char *unit = *end == 'h' ? "hours" : *end == 'd' ? "days" : *end == 'w' ? "weeks" : NULL;
    if (!unit) return -1;
    snprintf(out, size, "%ld %s", n, unit);
    return 0;
}

static json_t *text_or_null(PGresult *res, int row, int col)
{
    return PQgetisnull(res, row, col) ? json_null() : json_string(PQgetvalue(res, row, col));
}

json_t *rt__cli_flakes(rt_pg *pg, const rt__flakes_query *q)
{
    char min_branches[16], flaky_window[32], limit[16];
    snprintf(min_branches, sizeof min_branches, "%d", q->min_branches);
    snprintf(flaky_window, sizeof flaky_window, "%d days", q->flaky_window_days);
    snprintf(limit, sizeof limit, "%d", q->limit > 0 ? q->limit : 1000);
    const char *params[] = {q->project,   q->until,     q->window, q->main_only ? "t" : "f",
                            min_branches, flaky_window, limit};
    PGresult *res = NULL;
    if (rt_pg_exec(pg, SQL_FLAKES, 7, params, &res) != RT_OK) {
        rt__cli_db_error(pg, "cannot query the test history");
        return NULL;
    }
    json_t *out = json_array();
    for (int r = 0; out && r < PQntuples(res); r++) {
        json_t *first = json_null();
        if (!PQgetisnull(res, r, 10))
            first =
                json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}", "time", text_or_null(res, r, 10),
                          "project", text_or_null(res, r, 11), "branch", text_or_null(res, r, 12),
                          "push", text_or_null(res, r, 13), "revision", text_or_null(res, r, 14),
                          "signature", text_or_null(res, r, 15));
        json_t *row = json_pack(
            "{s:s, s:o, s:I, s:I, s:f, s:I, s:o, s:b, s:I, s:I, s:f, s:I}", "test",
            PQgetvalue(res, r, 0), "group", text_or_null(res, r, 1), "runs",
            (json_int_t)atoll(PQgetvalue(res, r, 2)), "failures",
            (json_int_t)atoll(PQgetvalue(res, r, 3)), "failure_rate", atof(PQgetvalue(res, r, 4)),
            "branches", (json_int_t)atoll(PQgetvalue(res, r, 8)), "first_failure", first, "flaky",
            PQgetvalue(res, r, 16)[0] == 't', "pushes", (json_int_t)atoll(PQgetvalue(res, r, 5)),
            "pushes_failed", (json_int_t)atoll(PQgetvalue(res, r, 6)), "push_failure_chance",
            atof(PQgetvalue(res, r, 7)), "prs", (json_int_t)atoll(PQgetvalue(res, r, 9)));
        if (!row || json_array_append_new(out, row) != 0) {
            json_decref(out);
            out = NULL;
        }
    }
    PQclear(res);
    return out;
}

/* Adds rerun_flips and issue to each row. */
static int add_github_columns(rt_pg *pg, const rt__flakes_query *q, json_t *rows)
{
    const char *params[] = {q->project, q->until, q->window};
    PGresult *flips = NULL, *issues = NULL;
    int rc = rt_pg_exec(pg, SQL_FLIPS, 3, params, &flips);
    if (rc == RT_OK) rc = rt_pg_exec(pg, SQL_ISSUES, 1, params, &issues);
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row)
    {
        if (rc != RT_OK) break;
        const char *test = json_string_value(json_object_get(row, "test"));
        json_int_t n = 0;
        json_t *issue = json_null();
        for (int r = 0; r < PQntuples(flips); r++)
            if (!strcmp(PQgetvalue(flips, r, 0), test)) n = atoll(PQgetvalue(flips, r, 1));
        for (int r = 0; r < PQntuples(issues); r++)
            if (!strcmp(PQgetvalue(issues, r, 0), test))
                issue = json_pack("{s:s, s:I, s:s, s:s}", "state", PQgetvalue(issues, r, 1),
                                  "number", (json_int_t)atoll(PQgetvalue(issues, r, 2)), "url",
                                  PQgetvalue(issues, r, 3), "tracker", PQgetvalue(issues, r, 4));
        if (json_object_set_new(row, "rerun_flips", json_integer(n)) != 0 ||
            json_object_set_new(row, "issue", issue ? issue : json_null()) != 0)
            rc = RT_ENOMEM;
    }
    if (rc == RT_EDB) rt_log_error("cannot query the GitHub history", "error", rt_pg_errstr(pg));
    PQclear(flips);
    PQclear(issues);
    return rc;
}

/* The coverage section and the gaps list (GitHub projects; zeros and [] otherwise). */
static int coverage(rt_pg *pg, const rt__flakes_query *q, json_t **cov, json_t **gaps)
{
    const char *params[] = {q->project, q->until, q->window};
    PGresult *res = NULL;
    *cov = NULL;
    *gaps = json_array();
    json_t *kinds = json_object();
    int rc = rt_pg_exec(pg, SQL_COVERAGE, 3, params, &res);
    if (rc == RT_OK && PQntuples(res) == 1)
        *cov = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "run_attempts",
                         (json_int_t)atoll(PQgetvalue(res, 0, 0)), "attempts_with_outcomes",
                         (json_int_t)atoll(PQgetvalue(res, 0, 1)), "attempts_with_gaps",
                         (json_int_t)atoll(PQgetvalue(res, 0, 2)), "expired_artifacts",
                         (json_int_t)atoll(PQgetvalue(res, 0, 3)), "rerun_attempts",
                         (json_int_t)atoll(PQgetvalue(res, 0, 4)), "outcomes",
                         (json_int_t)atoll(PQgetvalue(res, 0, 5)));
    PQclear(res);
    res = NULL;
    if (rc == RT_OK) rc = rt_pg_exec(pg, SQL_GAP_KINDS, 3, params, &res);
    for (int r = 0; rc == RT_OK && kinds && r < PQntuples(res); r++)
        json_object_set_new(kinds, PQgetvalue(res, r, 0),
                            json_integer((json_int_t)atoll(PQgetvalue(res, r, 1))));
    PQclear(res);
    res = NULL;
    if (rc == RT_OK) rc = rt_pg_exec(pg, SQL_GAPS, 3, params, &res);
    for (int r = 0; rc == RT_OK && *gaps && r < PQntuples(res); r++) {
        json_t *g =
            json_pack("{s:I, s:I, s:s, s:s, s:s, s:o, s:o, s:s, s:s}", "run_id",
                      (json_int_t)atoll(PQgetvalue(res, r, 0)), "attempt",
                      (json_int_t)atoll(PQgetvalue(res, r, 1)), "kind", PQgetvalue(res, r, 2),
                      "artifact", PQgetvalue(res, r, 3), "file", PQgetvalue(res, r, 4), "detail",
                      text_or_null(res, r, 5), "url", text_or_null(res, r, 6), "branch",
                      PQgetvalue(res, r, 7), "started", PQgetvalue(res, r, 8));
        if (!g || json_array_append_new(*gaps, g) != 0) rc = RT_ENOMEM;
    }
    PQclear(res);
    if (rc == RT_EDB) rt_log_error("cannot query the GitHub coverage", "error", rt_pg_errstr(pg));
    if (rc == RT_OK &&
        (!*cov || !*gaps || !kinds || json_object_set_new(*cov, "gaps_by_kind", kinds) != 0))
        rc = RT_ENOMEM;
    else if (rc == RT_OK)
        kinds = NULL;
    json_decref(kinds);
    if (rc != RT_OK) {
        json_decref(*cov);
        json_decref(*gaps);
        *cov = *gaps = NULL;
    }
    return rc;
}

static void print_table(json_t *rows)
{
    printf("%-5s %6s %6s %6s %8s %6s  %-20s %5s %7s  %s\n", "FLAKY", "RUNS", "FAILS", "RATE",
           "BRANCHES", "PUSH%", "FIRST FAILURE", "FLIPS", "ISSUE", "TEST");
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row)
    {
        json_t *first = json_object_get(row, "first_failure");
        const char *first_time =
            json_is_object(first) ? json_string_value(json_object_get(first, "time")) : NULL;
        json_t *issue = json_object_get(row, "issue");
        char issue_text[32] = "-";
        if (json_is_object(issue))
            snprintf(issue_text, sizeof issue_text, "#%lld%s",
                     (long long)json_integer_value(json_object_get(issue, "number")),
                     json_is_string(json_object_get(issue, "state")) &&
                             strcmp(json_string_value(json_object_get(issue, "state")), "open")
                         ? "c"
                         : "");
        printf("%-5s %6lld %6lld %5.1f%% %8lld %5.1f%%  %-20s %5lld %7s  %s\n",
               json_is_true(json_object_get(row, "flaky")) ? "yes" : "-",
               (long long)json_integer_value(json_object_get(row, "runs")),
               (long long)json_integer_value(json_object_get(row, "failures")),
               100.0 * json_real_value(json_object_get(row, "failure_rate")),
               (long long)json_integer_value(json_object_get(row, "branches")),
               100.0 * json_real_value(json_object_get(row, "push_failure_chance")),
               rt_cli_text(first_time),
               (long long)json_integer_value(json_object_get(row, "rerun_flips")), issue_text,
               rt_cli_text(json_string_value(json_object_get(row, "test"))));
    }
}

int rt_cli_flakes(int argc, char **argv, rt_config *cfg)
{
    static const struct option options[] = {
        {"project", required_argument, NULL, 'p'},
        {"window", required_argument, NULL, 'w'},
        {"until", required_argument, NULL, 'u'},
        {"min-branches", required_argument, NULL, 'n'},
        {"main-only", no_argument, NULL, 'm'},
        {"limit", required_argument, NULL, 'l'},
        {"format", required_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    rt__flakes_query q = {.window = "7 days",
                          .until = "now",
                          .min_branches = cfg->history_flaky_min_branches,
                          .flaky_window_days = cfg->history_flaky_window_days,
                          .limit = 1000};
    char window[64];
    bool json = false;
    int c;
    while ((c = getopt_long(argc, argv, "p:w:u:n:ml:f:h", options, NULL)) != -1) {
        switch (c) {
        case 'p': q.project = optarg; break;
        case 'w':
            if (rt__cli_parse_duration(optarg, window, sizeof window) != 0) {
                rt_log_error("--window wants a number and h, d or w", "value", optarg);
                return 2;
            }
            q.window = window;
            break;
        case 'u': q.until = optarg; break;
        case 'n': {
            char *end = NULL;
            long n = strtol(optarg, &end, 10);
            if (end == optarg || *end || n < 0 || n > 1000) {
                rt_log_error("--min-branches wants a number from 0 to 1000", "value", optarg);
                return 2;
            }
            q.min_branches = (int)n;
            break;
        }
        case 'm': q.main_only = true; break;
        case 'l': q.limit = atoi(optarg); break;
        case 'f':
            if (rt__cli_format(optarg, &json)) return 2;
            break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (!q.project || optind < argc || q.limit <= 0) {
        usage(stderr);
        return 2;
    }
    rt_pg *pg = NULL;
    if (rt__cli_connect(cfg, "cli", &pg) != 0) return 1;
    json_t *rows = rt__cli_flakes(pg, &q), *cov = NULL, *gaps = NULL;
    int status = 1;
    if (!rows || add_github_columns(pg, &q, rows) != RT_OK ||
        coverage(pg, &q, &cov, &gaps) != RT_OK)
        goto out;
    if (json) {
        json_t *doc =
            json_pack("{s:s, s:s, s:s, s:O, s:O, s:O}", "project", q.project, "window", q.window,
                      "until", q.until, "tests", rows, "coverage", cov, "gaps", gaps);
        char *text =
            doc ? json_dumps(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(6) | JSON_ENSURE_ASCII)
                : NULL;
        json_decref(doc);
        if (!text) goto out;
        printf("%s\n", text);
        free(text);
    } else {
        print_table(rows);
        json_int_t attempts = json_integer_value(json_object_get(cov, "run_attempts"));
        if (attempts)
            printf("coverage: %lld run attempts, %lld with outcomes, %lld with gaps (%zu listed"
                   " by --format json)\n",
                   (long long)attempts,
                   (long long)json_integer_value(json_object_get(cov, "attempts_with_outcomes")),
                   (long long)json_integer_value(json_object_get(cov, "attempts_with_gaps")),
                   json_array_size(gaps));
    }
    status = 0;
out:
    rt_pg_free(pg);
    json_decref(rows);
    json_decref(cov);
    json_decref(gaps);
    return status;
}
