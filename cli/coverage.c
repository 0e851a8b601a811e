/* SPDX-License-Identifier: MPL-2.0 */
/* coverage.c - what the test history of a repository rests on in a window: runs, pushes,
 * branches and pull requests recorded, per day and per project, where they came from,
 * and the collection gaps (stretches with no run at all, projects gone quiet), as the one
 * JSON object the flaky-test page embeds and draws (see rt__cli_coverage in cli.h).
 * Read-only. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/io/pg.h"

#define TS(col) "to_char(" col " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"
/* The four reads are functions of migration 0030: from the per-day and per-hour rollup of the
 * runs for a window of whole UTC days (retrig report's default), else from history_runs. */
// clang-format off
static const char SQL_TOTALS[] =
    "SELECT runs, main_runs, pushes, main_pushes, other_branches, prs, failures_only_runs,"
    " coalesce(" TS("first_run") ", '') AS first_run,"
    " coalesce(" TS("last_run") ", '') AS last_run"
    " FROM history_coverage_totals($1, $2::timestamptz, $3::timestamptz)";
// clang-format on
enum {
    T_RUNS,
    T_MAIN_RUNS,
    T_PUSHES,
    T_MAIN_PUSHES,
    T_OTHER,
    T_PRS,
    T_FAILURES_ONLY,
    T_FIRST,
    T_LAST,
    T_N
};
static const char *const TOTALS_COLS[T_N] = {
    "runs", "main_runs",          "pushes",    "main_pushes", "other_branches",
    "prs",  "failures_only_runs", "first_run", "last_run"};
static const char SQL_DAYS[] = "SELECT to_char(day, 'YYYY-MM-DD') AS day, runs, main_runs"
                               " FROM history_coverage_days($1, $2::timestamptz, $3::timestamptz)";
enum { D_DAY, D_RUNS, D_MAIN_RUNS, D_N };
static const char *const DAYS_COLS[D_N] = {"day", "runs", "main_runs"};
// clang-format off
static const char SQL_PROJECTS[] =
    "SELECT project, branch_class, source, runs, pushes, " TS("last_run") " AS last_run,"
    " branches, prs FROM history_coverage_projects($1, $2::timestamptz, $3::timestamptz, 50)";
// clang-format on
enum { P_PROJECT, P_CLASS, P_SOURCE, P_RUNS, P_PUSHES, P_LAST_RUN, P_BRANCHES, P_PRS, P_N };
static const char *const PROJECTS_COLS[P_N] = {"project", "branch_class", "source",   "runs",
                                               "pushes",  "last_run",     "branches", "prs"};
/* Stretches of at least $4 seconds with no run, the window's ends counting as runs. */
// clang-format off
static const char SQL_GAPS[] =
    "SELECT " TS("gap_from") " AS gap_from, " TS("gap_to") " AS gap_to, seconds, at_start,"
    " at_end FROM history_coverage_gaps($1, $2::timestamptz, $3::timestamptz, $4::integer, 20)";
// clang-format on
enum { G_FROM, G_TO, G_SECONDS, G_AT_START, G_AT_END, G_N };
static const char *const GAPS_COLS[G_N] = {"gap_from", "gap_to", "seconds", "at_start", "at_end"};

static long long num(PGresult *res, int row, int col) { return atoll(PQgetvalue(res, row, col)); }

/* Runs sql and looks its columns up by name (cols[i] for names[i]). */
static int query(rt_pg *pg, const char *sql, int n, const char *const *params, PGresult **res,
                 const char *const *names, size_t ncols, int *cols)
{
    char errstr[RT_ERRSTR_SIZE] = "";
    if (rt_pg_exec(pg, sql, n, params, res) != RT_OK) {
        rt__cli_db_error(pg, "cannot read the coverage of the test history");
        return 1;
    }
    if (rt_pg_columns(*res, names, ncols, cols, errstr) == RT_OK) return 0;
    rt_log_error("cannot read the coverage of the test history", "error", errstr);
    PQclear(*res);
    *res = NULL;
    return 1;
}

/* Long because it is the page's four coverage reads (window, days, projects and sources, gaps)
 * in turn, each turned into its part of one JSON object. */
json_t *rt__cli_coverage(rt_pg *pg, const rt_config *cfg, const char *repository, const char *start,
                         const char *until, long long window_seconds)
{
    const char *params[] = {repository, start, until, NULL};
    PGresult *res = NULL;
    json_t *out = NULL, *gaps = json_array(), *notes = json_array(), *days = json_array(),
           *projects = json_array(), *sources = json_object();
    if (!gaps || !notes || !days || !projects || !sources) goto fail;
    int t[T_N], d[D_N], p[P_N], g[G_N];
    if (query(pg, SQL_TOTALS, 3, params, &res, TOTALS_COLS, T_N, t)) goto fail;
    long long runs = num(res, 0, t[T_RUNS]), failures_only = num(res, 0, t[T_FAILURES_ONLY]);
    out = json_pack("{s:s, s:{s:s, s:s}, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:s, s:s}",
                    "repository", repository, "window", "start", start, "until", until, "runs",
                    (json_int_t)runs, "main_runs", (json_int_t)num(res, 0, t[T_MAIN_RUNS]),
                    "pushes", (json_int_t)num(res, 0, t[T_PUSHES]), "main_pushes",
                    (json_int_t)num(res, 0, t[T_MAIN_PUSHES]), "other_branches",
                    (json_int_t)num(res, 0, t[T_OTHER]), "prs", (json_int_t)num(res, 0, t[T_PRS]),
                    "failures_only_runs", (json_int_t)failures_only, "first_run",
                    PQgetvalue(res, 0, t[T_FIRST]), "last_run", PQgetvalue(res, 0, t[T_LAST]));
    PQclear(res);
    res = NULL;
    if (!out) goto fail;

    if (query(pg, SQL_DAYS, 3, params, &res, DAYS_COLS, D_N, d)) goto fail;
    for (int i = 0; i < PQntuples(res); i++)
        json_array_append_new(days,
                              json_pack("{s:s, s:I, s:I}", "day", PQgetvalue(res, i, d[D_DAY]),
                                        "runs", (json_int_t)num(res, i, d[D_RUNS]), "main_runs",
                                        (json_int_t)num(res, i, d[D_MAIN_RUNS])));
    PQclear(res);
    res = NULL;

    if (query(pg, SQL_PROJECTS, 3, params, &res, PROJECTS_COLS, P_N, p)) goto fail;
    for (int i = 0; i < PQntuples(res); i++) {
        const char *source = PQgetvalue(res, i, p[P_SOURCE]);
        json_array_append_new(projects,
                              json_pack("{s:s, s:s, s:s, s:I, s:I, s:s, s:I, s:I}", "project",
                                        PQgetvalue(res, i, p[P_PROJECT]), "branch_class",
                                        PQgetvalue(res, i, p[P_CLASS]), "source", source, "runs",
                                        (json_int_t)num(res, i, p[P_RUNS]), "pushes",
                                        (json_int_t)num(res, i, p[P_PUSHES]), "last_run",
                                        PQgetvalue(res, i, p[P_LAST_RUN]), "branches",
                                        (json_int_t)num(res, i, p[P_BRANCHES]), "prs",
                                        (json_int_t)num(res, i, p[P_PRS])));
        json_t *count = json_object_get(sources, source);
        json_object_set_new(sources, source,
                            json_integer(json_integer_value(count) + num(res, i, p[P_RUNS])));
    }
    PQclear(res);
    res = NULL;

    /* A gap is a stretch without any run, at least 6 hours and ten times the usual wait
     * between two runs (a small repository is quiet at night). */
    long long usual = runs > 0 ? window_seconds / runs : window_seconds;
    long long threshold = usual * 10 > 6 * 3600 ? usual * 10 : 6 * 3600;
    char threshold_text[24];
    snprintf(threshold_text, sizeof threshold_text, "%lld", threshold);
    params[3] = threshold_text;
    if (query(pg, SQL_GAPS, 4, params, &res, GAPS_COLS, G_N, g)) goto fail;
    for (int i = 0; i < PQntuples(res); i++) {
        bool at_start = PQgetvalue(res, i, g[G_AT_START])[0] == 't',
             at_end = PQgetvalue(res, i, g[G_AT_END])[0] == 't';
        const char *what = at_start && at_end ? "no run recorded in the window"
                           : at_start         ? "no run recorded before"
                           : at_end           ? "no run recorded since"
                                              : "no run recorded";
        json_array_append_new(
            gaps, json_pack("{s:s, s:s, s:s, s:f, s:s}", "kind", "no-runs", "from",
                            PQgetvalue(res, i, g[G_FROM]), "to", PQgetvalue(res, i, g[G_TO]),
                            "hours", (double)num(res, i, g[G_SECONDS]) / 3600.0, "what", what));
    }
    PQclear(res);
    res = NULL;

    if (failures_only > 0) {
        char note[320];
        snprintf(note, sizeof note,
                 "%lld of %lld runs record failures only (Taskcluster errorsummary): a test's "
                 "passing runs are the runs of its group, and a test that never failed in a "
                 "group is not in the history.",
                 failures_only, runs);
        json_array_append_new(notes, json_string(note));
    }
    if (cfg->history_sample_percent < 100) {
        char note[160];
        snprintf(note, sizeof note,
                 "history_sample_percent is %d: only that share of task runs is recorded.",
                 cfg->history_sample_percent);
        json_array_append_new(notes, json_string(note));
    }
    char main_note[512] = "Main branches (history_main_projects): ";
    for (size_t i = 0; i < cfg->history_main_projects.count; i++) {
        size_t len = strlen(main_note);
        snprintf(main_note + len, sizeof main_note - len, "%s%s", i ? ", " : "",
                 cfg->history_main_projects.items[i]);
    }
    json_array_append_new(notes, json_string(main_note));
    json_object_set_new(out, "days", days);
    json_object_set_new(out, "projects", projects);
    json_object_set_new(out, "sources", sources);
    json_object_set_new(out, "gaps", gaps);
    json_object_set_new(out, "notes", notes);
    json_object_set_new(out, "gap_threshold_hours", json_real((double)threshold / 3600.0));
    return out;
fail:
    PQclear(res);
    json_decref(out);
    json_decref(gaps);
    json_decref(notes);
    json_decref(days);
    json_decref(projects);
    json_decref(sources);
    return NULL;
}
