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
#include <time.h>

#include "cli/cli.h"
#include "common/io/pg.h"
#include "common/store/outcomes.h"

#define TS(col) "to_char(" col " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"

// clang-format off
static const char SQL_FLAKES[] =
    "SELECT test, group_name, runs, failures, failure_rate, pushes, pushes_failed,"
    "       push_failure_chance, branches, prs, " TS("first_failure_at") " AS first_failure_at,"
    "       first_failure_project, first_failure_branch, first_failure_push,"
    "       first_failure_revision, first_failure_signature, flaky"
    "  FROM history_flakes($1, $2::timestamptz - $3::interval, $2::timestamptz, $4::boolean,"
    "                      $5::integer, $6::interval) LIMIT $7::integer";
// clang-format on
enum {
    F_TEST,
    F_GROUP,
    F_RUNS,
    F_FAILURES,
    F_RATE,
    F_PUSHES,
    F_PUSHES_FAILED,
    F_PUSH_CHANCE,
    F_BRANCHES,
    F_PRS,
    F_FF_AT,
    F_FF_PROJECT,
    F_FF_BRANCH,
    F_FF_PUSH,
    F_FF_REVISION,
    F_FF_SIGNATURE,
    F_FLAKY,
    F_NCOLS
};
static const char *const FLAKES_COLS[F_NCOLS] = {"test",
                                                 "group_name",
                                                 "runs",
                                                 "failures",
                                                 "failure_rate",
                                                 "pushes",
                                                 "pushes_failed",
                                                 "push_failure_chance",
                                                 "branches",
                                                 "prs",
                                                 "first_failure_at",
                                                 "first_failure_project",
                                                 "first_failure_branch",
                                                 "first_failure_push",
                                                 "first_failure_revision",
                                                 "first_failure_signature",
                                                 "flaky"};

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
    "       count(*) FILTER (WHERE EXISTS (SELECT 1 FROM github_run_gaps g"
    "                          WHERE g.repository = r.repository AND g.run_id = r.run_id"
    "                            AND g.attempt = r.attempt)) AS attempts_with_gaps,"
    "       coalesce(sum(expired_artifacts), 0) AS expired_artifacts,"
    "       count(*) FILTER (WHERE attempt > 1) AS rerun_attempts,"
    "       coalesce(sum(outcomes), 0) AS outcomes"
    "  FROM github_runs r WHERE repository = $1"
    "   AND run_started_at >= $2::timestamptz - $3::interval AND run_started_at < $2::timestamptz";
static const char SQL_GAP_KINDS[] =
    "SELECT g.kind, count(*) AS gaps FROM github_run_gaps g JOIN github_runs r USING (repository, "
    "run_id,"
    " attempt) WHERE g.repository = $1 AND r.run_started_at >= $2::timestamptz - $3::interval"
    " AND r.run_started_at < $2::timestamptz GROUP BY g.kind ORDER BY g.kind";
// clang-format off
static const char SQL_GAPS[] =
    "SELECT g.run_id, g.attempt, g.kind, g.artifact, g.file, g.detail, r.html_url, r.branch_key,"
    "       " TS("r.run_started_at") " AS started"
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

const char *rt__cli_history_until(const char *until, char out[32])
{
    if (strcmp(until, "now") != 0) return until;
    time_t tomorrow = time(NULL) / 86400 * 86400 + 86400;
    struct tm tm;
    gmtime_r(&tomorrow, &tm);
    strftime(out, 32, "%Y-%m-%dT00:00:00Z", &tm);
    return out;
}

/* history_flakes's parameters for q, in texts that live in t. */
typedef struct flakes_params {
    char min_branches[16], flaky_window[32], limit[16], until[32];
    const char *values[7];
} flakes_params;

static void set_params(flakes_params *t, const rt__flakes_query *q)
{
    snprintf(t->min_branches, sizeof t->min_branches, "%d", q->min_branches);
    snprintf(t->flaky_window, sizeof t->flaky_window, "%d days", q->flaky_window_days);
    snprintf(t->limit, sizeof t->limit, "%d", q->limit > 0 ? q->limit : 1000);
    const char *values[] = {q->project,      rt__cli_history_until(q->until, t->until),
                            q->window,       q->main_only ? "t" : "f",
                            t->min_branches, t->flaky_window,
                            t->limit};
    memcpy(t->values, values, sizeof values);
}

/* The rows of a history_flakes result as JSON; NULL (logged) when its columns are not there. */
static json_t *flakes_rows(PGresult *res)
{
    int c[F_NCOLS];
    char errstr[RT_ERRSTR_SIZE] = "";
    if (rt_pg_columns(res, FLAKES_COLS, F_NCOLS, c, errstr) != RT_OK) {
        rt_log_error("cannot read the test history", "error", errstr);
        return NULL;
    }
    json_t *out = json_array();
    for (int r = 0; out && r < PQntuples(res); r++) {
        json_t *first = json_null();
        if (rt_pg_text(res, r, c[F_FF_AT]))
            first = json_pack(
                "{s:o, s:o, s:o, s:o, s:o, s:o}", "time", text_or_null(res, r, c[F_FF_AT]),
                "project", text_or_null(res, r, c[F_FF_PROJECT]), "branch",
                text_or_null(res, r, c[F_FF_BRANCH]), "push", text_or_null(res, r, c[F_FF_PUSH]),
                "revision", text_or_null(res, r, c[F_FF_REVISION]), "signature",
                text_or_null(res, r, c[F_FF_SIGNATURE]));
        json_t *row = json_pack(
            "{s:s, s:o, s:I, s:I, s:f, s:I, s:o, s:b, s:I, s:I, s:f, s:I}", "test",
            PQgetvalue(res, r, c[F_TEST]), "group", text_or_null(res, r, c[F_GROUP]), "runs",
            (json_int_t)rt_pg_int(res, r, c[F_RUNS]), "failures",
            (json_int_t)rt_pg_int(res, r, c[F_FAILURES]), "failure_rate",
            rt_pg_float(res, r, c[F_RATE]), "branches",
            (json_int_t)rt_pg_int(res, r, c[F_BRANCHES]), "first_failure", first, "flaky",
            rt_pg_bool(res, r, c[F_FLAKY]), "pushes", (json_int_t)rt_pg_int(res, r, c[F_PUSHES]),
            "pushes_failed", (json_int_t)rt_pg_int(res, r, c[F_PUSHES_FAILED]),
            "push_failure_chance", rt_pg_float(res, r, c[F_PUSH_CHANCE]), "prs",
            (json_int_t)rt_pg_int(res, r, c[F_PRS]));
        if (!row || json_array_append_new(out, row) != 0) {
            json_decref(out);
            out = NULL;
        }
    }
    return out;
}

json_t *rt__cli_flakes(rt_pg *pg, const rt__flakes_query *q)
{
    flakes_params t;
    set_params(&t, q);
    PGresult *res = NULL;
    if (rt_pg_exec(pg, SQL_FLAKES, 7, t.values, &res) != RT_OK) {
        rt__cli_db_error(pg, "cannot query the test history");
        return NULL;
    }
    json_t *out = flakes_rows(res);
    PQclear(res);
    return out;
}

int rt__cli_flakes_send(rt_pg *pg, const rt__flakes_query *q)
{
    flakes_params t;
    set_params(&t, q);
    /* libpq copies the parameters into its buffer here */
    if (PQsendQueryParams(rt_pg_conn(pg), SQL_FLAKES, 7, NULL, t.values, NULL, NULL, 0) == 1)
        return 0;
    rt_log_error("cannot query the test history", "error", PQerrorMessage(rt_pg_conn(pg)));
    return -1;
}

json_t *rt__cli_flakes_wait(rt_pg *pg)
{
    PGresult *res = NULL, *next;
    while ((next = PQgetResult(rt_pg_conn(pg)))) {
        if (res) PQclear(res);
        res = next;
    }
    json_t *out = NULL;
    if (res && PQresultStatus(res) == PGRES_TUPLES_OK)
        out = flakes_rows(res);
    else
        rt_log_error("cannot query the test history", "error",
                     res ? PQresultErrorMessage(res) : PQerrorMessage(rt_pg_conn(pg)));
    PQclear(res);
    return out;
}

/* Adds rerun_flips and issue to each row. */
static int add_github_columns(rt_pg *pg, const rt__flakes_query *q, json_t *rows)
{
    const char *params[] = {q->project, q->until, q->window};
    PGresult *flips = NULL, *issues = NULL;
    enum { FL_TEST, FL_FLIPS, FL_N };
    static const char *const FLIPS_COLS[FL_N] = {"test", "flips"};
    enum { I_TEST, I_STATE, I_NUMBER, I_URL, I_TRACKER, I_N };
    static const char *const ISSUES_COLS[I_N] = {"test", "state", "issue_number", "issue_url",
                                                 "tracker"};
    int fl[FL_N], is[I_N];
    char errstr[RT_ERRSTR_SIZE] = "";
    int rc = rt_pg_exec(pg, SQL_FLIPS, 3, params, &flips);
    if (rc == RT_OK) rc = rt_pg_exec(pg, SQL_ISSUES, 1, params, &issues);
    if (rc == RT_OK && (rt_pg_columns(flips, FLIPS_COLS, FL_N, fl, errstr) != RT_OK ||
                        rt_pg_columns(issues, ISSUES_COLS, I_N, is, errstr) != RT_OK)) {
        rt_log_error("cannot read the GitHub history", "error", errstr);
        rc = RT_EINVAL;
    }
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row)
    {
        if (rc != RT_OK) break;
        const char *test = json_string_value(json_object_get(row, "test"));
        json_int_t n = 0;
        json_t *issue = json_null();
        for (int r = 0; r < PQntuples(flips); r++)
            if (!strcmp(PQgetvalue(flips, r, fl[FL_TEST]), test))
                n = (json_int_t)rt_pg_int(flips, r, fl[FL_FLIPS]);
        for (int r = 0; r < PQntuples(issues); r++)
            if (!strcmp(PQgetvalue(issues, r, is[I_TEST]), test))
                issue =
                    json_pack("{s:s, s:I, s:s, s:s}", "state", PQgetvalue(issues, r, is[I_STATE]),
                              "number", (json_int_t)rt_pg_int(issues, r, is[I_NUMBER]), "url",
                              PQgetvalue(issues, r, is[I_URL]), "tracker",
                              PQgetvalue(issues, r, is[I_TRACKER]));
        if (json_object_set_new(row, "rerun_flips", json_integer(n)) != 0 ||
            json_object_set_new(row, "issue", issue ? issue : json_null()) != 0)
            rc = RT_ENOMEM;
    }
    if (rc == RT_EDB) rt_log_error("cannot query the GitHub history", "error", rt_pg_errstr(pg));
    PQclear(flips);
    PQclear(issues);
    return rc;
}

/* Labels each row with its outcomes that are no plain failure ("outcomes": FLAKY, a JUnit
 * failure then pass within one run; common/store/outcomes.h) and lists in *others the tests
 * that reported only DISABLED, COLLECTION_ERROR or BUILD_FAILED: no test failure, never
 * flaky, shown as what they are. */
static int add_outcome_labels(rt_pg *pg, const rt__flakes_query *q, json_t *rows, json_t **others)
{
    rt_outcome_labels_list labels = {0};
    rt_test_variants variants = {0};
    *others = json_array();
    int rc =
        *others ? rt_outcome_labels_read(pg, q->project, q->until, q->window, &labels) : RT_ENOMEM;
    if (rc == RT_OK) rc = rt_test_variants_read(pg, q->project, q->until, q->window, &variants);
    if (rc == RT_EDB) rt_log_error("cannot query the test history", "error", rt_pg_errstr(pg));
    if (rc != RT_OK) {
        rt_outcome_labels_free(&labels);
        return rc;
    }
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row)
    {
        const char *test = json_string_value(json_object_get(row, "test"));
        json_t *o = rt_outcome_labels_json(rt_outcome_labels_find(&labels, test));
        if (!o || json_object_set_new(row, "outcomes", o) != 0) rc = RT_ENOMEM;
        /* failures by variant (GitHub's matrix jobs), and the one variant failing alone */
        size_t n = 0;
        const rt_flaky_variant *v = rt_test_variants_of(&variants, test, &n);
        json_t *by = rt_test_variants_json(v, n);
        if (!by || json_object_update(row, by) != 0) rc = RT_ENOMEM;
        json_decref(by);
    }
    rt_test_variants_free(&variants);
    for (size_t k = 0; rc == RT_OK && k < labels.count; k++) {
        const rt_outcome_labels *l = &labels.items[k];
        bool listed = false;
        json_array_foreach(rows, i, row) listed =
            listed || !strcmp(json_string_value(json_object_get(row, "test")), l->test);
        if (listed || l->disabled + l->collection_error + l->build_failed == 0) continue;
        json_t *other =
            json_pack("{s:s, s:o}", "test", l->test, "outcomes", rt_outcome_labels_json(l));
        if (!other || json_array_append_new(*others, other) != 0) rc = RT_ENOMEM;
    }
    rt_outcome_labels_free(&labels);
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
    /* The coverage's fields are its columns' names, in the order of the SELECT. */
    static const char *const COVERAGE_COLS[] = {"run_attempts",       "attempts_with_outcomes",
                                                "attempts_with_gaps", "expired_artifacts",
                                                "rerun_attempts",     "outcomes"};
    enum { NCOV = sizeof COVERAGE_COLS / sizeof COVERAGE_COLS[0] };
    enum {
        G_RUN,
        G_ATTEMPT,
        G_KIND,
        G_ARTIFACT,
        G_FILE,
        G_DETAIL,
        G_URL,
        G_BRANCH,
        G_STARTED,
        G_N
    };
    static const char *const GAP_COLS[G_N] = {"run_id",   "attempt",    "kind",
                                              "artifact", "file",       "detail",
                                              "html_url", "branch_key", "started"};
    int cc[NCOV], gc[G_N], kc[2];
    char errstr[RT_ERRSTR_SIZE] = "";
    int rc = rt_pg_exec(pg, SQL_COVERAGE, 3, params, &res);
    if (rc == RT_OK && rt_pg_columns(res, COVERAGE_COLS, NCOV, cc, errstr) != RT_OK) rc = RT_EINVAL;
    if (rc == RT_OK && PQntuples(res) == 1) {
        *cov = json_object();
        for (size_t i = 0; *cov && i < NCOV; i++)
            if (json_object_set_new(*cov, COVERAGE_COLS[i],
                                    json_integer((json_int_t)rt_pg_int(res, 0, cc[i]))) != 0)
                rc = RT_ENOMEM;
    }
    PQclear(res);
    res = NULL;
    if (rc == RT_OK) rc = rt_pg_exec(pg, SQL_GAP_KINDS, 3, params, &res);
    if (rc == RT_OK &&
        rt_pg_columns(res, (const char *const[]){"kind", "gaps"}, 2, kc, errstr) != RT_OK)
        rc = RT_EINVAL;
    for (int r = 0; rc == RT_OK && kinds && r < PQntuples(res); r++)
        json_object_set_new(kinds, PQgetvalue(res, r, kc[0]),
                            json_integer((json_int_t)rt_pg_int(res, r, kc[1])));
    PQclear(res);
    res = NULL;
    if (rc == RT_OK) rc = rt_pg_exec(pg, SQL_GAPS, 3, params, &res);
    if (rc == RT_OK && rt_pg_columns(res, GAP_COLS, G_N, gc, errstr) != RT_OK) rc = RT_EINVAL;
    for (int r = 0; rc == RT_OK && *gaps && r < PQntuples(res); r++) {
        json_t *g = json_pack(
            "{s:I, s:I, s:s, s:s, s:s, s:o, s:o, s:s, s:s}", "run_id",
            (json_int_t)rt_pg_int(res, r, gc[G_RUN]), "attempt",
            (json_int_t)rt_pg_int(res, r, gc[G_ATTEMPT]), "kind", PQgetvalue(res, r, gc[G_KIND]),
            "artifact", PQgetvalue(res, r, gc[G_ARTIFACT]), "file", PQgetvalue(res, r, gc[G_FILE]),
            "detail", text_or_null(res, r, gc[G_DETAIL]), "url", text_or_null(res, r, gc[G_URL]),
            "branch", PQgetvalue(res, r, gc[G_BRANCH]), "started",
            PQgetvalue(res, r, gc[G_STARTED]));
        if (!g || json_array_append_new(*gaps, g) != 0) rc = RT_ENOMEM;
    }
    PQclear(res);
    if (rc == RT_EDB) rt_log_error("cannot query the GitHub coverage", "error", rt_pg_errstr(pg));
    if (rc == RT_EINVAL) rt_log_error("cannot read the GitHub coverage", "error", errstr);
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

static void print_labels(json_t *outcomes);

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
        print_labels(json_object_get(row, "outcomes"));
        const char *only = json_string_value(json_object_get(row, "only_variant"));
        if (only)
            printf("%*s fails on one variant only: %s (of %zu)\n", 72, "", rt_cli_text(only),
                   json_array_size(json_object_get(row, "variants")));
    }
}

/* The outcomes of a test that are no plain failure, on a line under it. */
static void print_labels(json_t *outcomes)
{
    if (!json_object_size(outcomes)) return;
    printf("%*s outcomes:", 72, "");
    const char *key;
    json_t *n;
    json_object_foreach(outcomes, key, n)
        printf(" %s x%lld", key, (long long)json_integer_value(n));
    printf("\n");
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
    if (rt__cli_connect_read(cfg, "cli", &pg) != 0) return 1;
    json_t *rows = rt__cli_flakes(pg, &q), *cov = NULL, *gaps = NULL, *others = NULL;
    int status = 1;
    if (!rows || add_github_columns(pg, &q, rows) != RT_OK ||
        add_outcome_labels(pg, &q, rows, &others) != RT_OK ||
        coverage(pg, &q, &cov, &gaps) != RT_OK)
        goto out;
    if (json) {
        json_t *doc = json_pack("{s:s, s:s, s:s, s:O, s:O, s:O, s:O}", "project", q.project,
                                "window", q.window, "until", q.until, "tests", rows,
                                "not_test_failures", others, "coverage", cov, "gaps", gaps);
        char *text =
            doc ? json_dumps(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(6) | JSON_ENSURE_ASCII)
                : NULL;
        json_decref(doc);
        if (!text) goto out;
        printf("%s\n", text);
        free(text);
    } else {
        print_table(rows);
        size_t i;
        json_t *other;
        if (json_array_size(others))
            printf("not test failures (disabled, collection or build errors: never flaky):\n");
        json_array_foreach(others, i, other)
        {
            const char *key;
            json_t *n;
            json_object_foreach(json_object_get(other, "outcomes"), key, n)
                printf("  %-16s x%-5lld %s\n", key, (long long)json_integer_value(n),
                       rt_cli_text(json_string_value(json_object_get(other, "test"))));
        }
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
    json_decref(others);
    return status;
}
