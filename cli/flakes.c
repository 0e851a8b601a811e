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
#include "common/core/matrix_variant.h"
#include "common/store/flaky_issues.h"
#include "common/store/history.h"
#include "common/store/outcomes.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: retrig flakes --project P [--window 7d] [--until ISO-8601] [--min-branches N]\n"
            "                     [--main-only] [--limit N] [--format json|table]\n"
            "Tests of P (a repository: history_repository for Taskcluster, OWNER/REPO for\n"
            "JUnit) that failed in the window ending at --until (default: the end of the\n"
            "current UTC day, so that --window 7d is today and the six days before), flaky\n"
            "ones first. --main-only counts runs on main branches only; the flaky flag (failed on\n"
            "more than N branches or pull requests within history_flaky_window_days; N\n"
            "defaults to history_flaky_min_branches) always looks at every branch.\n"
            "For a GitHub project (retrig collect-github) each test also shows its re-run\n"
            "flips and its issue (retrig flaky-issues), and --format json adds a coverage\n"
            "section: run attempts, those with outcomes, and the gaps (what could not be used).\n"
            "Each test shows its runs and failures by variant (a GitHub matrix job, a\n"
            "Taskcluster platform/build type) and the one variant it fails on alone.\n"
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

/* A nullable text of the store as JSON. */
static json_t *text_or_null(const char *text) { return text ? json_string(text) : json_null(); }

const char *rt__cli_history_until(const char *until, char out[32])
{
    if (strcmp(until, "now") != 0) return until;
    time_t tomorrow = time(NULL) / 86400 * 86400 + 86400;
    struct tm tm;
    gmtime_r(&tomorrow, &tm);
    strftime(out, 32, "%Y-%m-%dT00:00:00Z", &tm);
    return out;
}

/* The store's query for q; until lives in out. */
static rt_history_flakes_query store_query(const rt__flakes_query *q, char until[32])
{
    return (rt_history_flakes_query){.project = q->project,
                                     .until = rt__cli_history_until(q->until, until),
                                     .window = q->window,
                                     .main_only = q->main_only,
                                     .min_branches = q->min_branches,
                                     .flaky_window_days = q->flaky_window_days,
                                     .limit = q->limit};
}

/* The rows of history_flakes as JSON; NULL when out of memory. */
static json_t *flakes_rows(const rt_history_flake *rows, size_t n)
{
    json_t *out = json_array();
    for (size_t r = 0; out && r < n; r++) {
        const rt_history_flake *f = &rows[r];
        json_t *first = json_null();
        if (f->first_failure_at)
            first = json_pack(
                "{s:o, s:o, s:o, s:o, s:o, s:o}", "time", text_or_null(f->first_failure_at),
                "project", text_or_null(f->first_failure_project), "branch",
                text_or_null(f->first_failure_branch), "push", text_or_null(f->first_failure_push),
                "revision", text_or_null(f->first_failure_revision), "signature",
                text_or_null(f->first_failure_signature));
        json_t *row = json_pack(
            "{s:s, s:o, s:I, s:I, s:f, s:I, s:o, s:b, s:I, s:I, s:f, s:I}", "test", f->test,
            "group", text_or_null(f->group_name), "runs", (json_int_t)f->runs, "failures",
            (json_int_t)f->failures, "failure_rate", f->failure_rate, "branches",
            (json_int_t)f->branches, "first_failure", first, "flaky", f->flaky, "pushes",
            (json_int_t)f->pushes, "pushes_failed", (json_int_t)f->pushes_failed,
            "push_failure_chance", f->push_failure_chance, "prs", (json_int_t)f->prs);
        if (!row || json_array_append_new(out, row) != 0) {
            json_decref(out);
            out = NULL;
        }
    }
    return out;
}

json_t *rt__cli_flakes(rt_pg *pg, const rt__flakes_query *q)
{
    char until[32];
    rt_history_flakes_query sq = store_query(q, until);
    rt_history_flake *rows = NULL;
    size_t n = 0;
    if (rt_history_flakes_read(pg, &sq, &rows, &n) != RT_OK) {
        rt__cli_db_error(pg, "cannot query the test history");
        return NULL;
    }
    json_t *out = flakes_rows(rows, n);
    rt_history_flake_free(rows, n);
    return out;
}

int rt__cli_flakes_send(rt_pg *pg, const rt__flakes_query *q)
{
    char until[32];
    rt_history_flakes_query sq = store_query(q, until);
    return rt_history_flakes_send(pg, &sq) == RT_OK ? 0 : -1;
}

json_t *rt__cli_flakes_wait(rt_pg *pg)
{
    rt_history_flake *rows = NULL;
    size_t n = 0;
    json_t *out = NULL;
    if (rt_history_flakes_wait(pg, &rows, &n) == RT_OK) out = flakes_rows(rows, n);
    rt_history_flake_free(rows, n);
    return out;
}

const char *rt__cli_trusted_associations(const rt_config *cfg, char *out, size_t size)
{
    out[0] = '\0';
    for (size_t i = 0; i < cfg->flaky_issues_trusted_associations.count; i++) {
        size_t used = strlen(out);
        snprintf(out + used, size - used, "%s%s", used ? "," : "",
                 cfg->flaky_issues_trusted_associations.items[i]);
    }
    return out;
}

int rt__cli_flakes_trust(rt_pg *pg, const rt__flakes_query *q, json_t *rows)
{
    json_t *tests = json_array();
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row)
    {
        if (!tests || json_array_append(tests, json_object_get(row, "test")) != 0) break;
    }
    char *tests_json = tests ? json_dumps(tests, JSON_COMPACT) : NULL;
    json_decref(tests);
    if (!tests_json) return -1;
    char until[32], flaky_window[32];
    snprintf(flaky_window, sizeof flaky_window, "%d days", q->flaky_window_days);
    rt_flaky_trust *trust = NULL;
    size_t n = 0;
    int rc =
        rt_flaky_trust_read(pg, q->project, rt__cli_history_until(q->until, until), q->window,
                            flaky_window, q->trusted ? q->trusted : "", tests_json, &trust, &n);
    free(tests_json);
    if (rc != RT_OK) {
        rt__cli_db_error(pg, "cannot query the test history");
        return -1;
    }
    json_array_foreach(rows, i, row)
    {
        const char *test = json_string_value(json_object_get(row, "test"));
        const rt_flaky_trust *t = NULL;
        for (size_t k = 0; test && k < n && !t; k++)
            if (!strcmp(trust[k].test, test)) t = &trust[k];
        bool through_forks =
            t && json_is_true(json_object_get(row, "flaky")) && t->trusted <= q->min_branches;
        if (json_object_set_new(row, "fork_branches", json_integer(t ? t->untrusted : 0)) != 0 ||
            (through_forks && (json_object_set_new(row, "flaky", json_false()) != 0 ||
                               json_object_set_new(row, "flaky_through_forks", json_true()) != 0)))
            rc = RT_ENOMEM;
    }
    rt_flaky_trust_free(trust, n);
    return rc == RT_OK ? 0 : -1;
}

/* Adds rerun_flips and issue to each row. */
static int add_github_columns(rt_pg *pg, const rt__flakes_query *q, json_t *rows)
{
    rt_history_flip *flips = NULL;
    rt_history_issue *issues = NULL;
    size_t nflips = 0, nissues = 0;
    int rc = rt_history_flips(pg, q->project, q->until, q->window, &flips, &nflips);
    if (rc == RT_OK) rc = rt_history_issues(pg, q->project, &issues, &nissues);
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row)
    {
        if (rc != RT_OK) break;
        const char *test = json_string_value(json_object_get(row, "test"));
        json_int_t n = 0;
        json_t *issue = json_null();
        for (size_t r = 0; r < nflips; r++)
            if (!strcmp(flips[r].test, test)) n = (json_int_t)flips[r].flips;
        for (size_t r = 0; r < nissues; r++)
            if (!strcmp(issues[r].test, test))
                issue = json_pack("{s:s, s:I, s:s, s:s}", "state", issues[r].state, "number",
                                  (json_int_t)issues[r].issue_number, "url", issues[r].issue_url,
                                  "tracker", issues[r].tracker);
        if (json_object_set_new(row, "rerun_flips", json_integer(n)) != 0 ||
            json_object_set_new(row, "issue", issue ? issue : json_null()) != 0)
            rc = RT_ENOMEM;
    }
    if (rc == RT_EDB) rt_log_error("cannot query the GitHub history", "error", rt_pg_errstr(pg));
    rt_history_flip_free(flips, nflips);
    rt_history_issue_free(issues, nissues);
    return rc;
}

/* Each variant of by ({"variants": [...], "only_variant"}) gains what its name says (os,
 * os_family, python, partition: null when unknown; label, the compact form, the name itself
 * when it does not parse: common/core/matrix_variant.h), and by gains only_os ("Windows"
 * when every failing variant runs on Windows and another OS ran the test: flaky_issue.h).
 * Only a matrix job's name is read so; another variant's (Taskcluster's platform/build type)
 * is its label, the rest null. */
static int describe_variants(json_t *by, const rt_flaky_variant *v, size_t n, bool matrix)
{
    json_t *list = json_object_get(by, "variants");
    for (size_t i = 0; i < n && i < json_array_size(list); i++) {
        rt_matrix_variant mv = {0};
        char label[160];
        if (matrix) {
            rt_matrix_variant_parse(v[i].name, &mv);
            rt_matrix_variant_describe(v[i].name, label, sizeof label);
        } else {
            snprintf(label, sizeof label, "%s", v[i].name);
        }
        json_t *o = json_pack(
            "{s:o, s:o, s:o, s:o, s:s}", "os", text_or_null(mv.os[0] ? mv.os : NULL), "os_family",
            text_or_null(mv.os_family), "python", text_or_null(mv.python[0] ? mv.python : NULL),
            "partition", text_or_null(mv.partition[0] ? mv.partition : NULL), "label", label);
        if (!o || json_object_update(json_array_get(list, i), o) != 0) {
            json_decref(o);
            return RT_ENOMEM;
        }
        json_decref(o);
    }
    const char *only_os = matrix ? rt_flaky_only_os(v, n) : NULL;
    return json_object_set_new(by, "only_os", text_or_null(only_os)) == 0 ? RT_OK : RT_ENOMEM;
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
    /* a matrix job's name is read as its OS, Python and partition; a platform's is not */
    bool matrix = !variants.kind || !strcmp(variants.kind, RT_VARIANT_KIND_GITHUB);
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row)
    {
        const char *test = json_string_value(json_object_get(row, "test"));
        json_t *o = rt_outcome_labels_json(rt_outcome_labels_find(&labels, test));
        if (!o || json_object_set_new(row, "outcomes", o) != 0) rc = RT_ENOMEM;
        /* failures by variant (GitHub's matrix jobs, Mozilla's platform/build type), and the
         * one variant failing alone */
        size_t n = 0;
        const rt_flaky_variant *v = rt_test_variants_of(&variants, test, &n);
        json_t *by = rt_test_variants_json(v, n);
        if (!by || describe_variants(by, v, n, matrix) != RT_OK || json_object_update(row, by) != 0)
            rc = RT_ENOMEM;
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
    *cov = NULL;
    *gaps = json_array();
    json_t *kinds = json_object();
    rt_history_github_coverage counts;
    rt_history_gap_kind *by_kind = NULL;
    rt_history_github_gap *list = NULL;
    size_t nkinds = 0, nlist = 0;
    int rc = rt_history_github_coverage_read(pg, q->project, q->until, q->window, &counts);
    if (rc == RT_OK) {
        /* The coverage's fields are its columns' names, in the order of the SELECT. */
        const long long values[] = {counts.run_attempts,       counts.attempts_with_outcomes,
                                    counts.attempts_with_gaps, counts.expired_artifacts,
                                    counts.rerun_attempts,     counts.outcomes};
        *cov = json_object();
        for (size_t i = 0; *cov && i < 6; i++)
            if (json_object_set_new(*cov, rt_history_github_coverage_names[i],
                                    json_integer((json_int_t)values[i])) != 0)
                rc = RT_ENOMEM;
    }
    if (rc == RT_OK)
        rc = rt_history_gap_kinds(pg, q->project, q->until, q->window, &by_kind, &nkinds);
    for (size_t r = 0; rc == RT_OK && kinds && r < nkinds; r++)
        json_object_set_new(kinds, by_kind[r].kind, json_integer((json_int_t)by_kind[r].gaps));
    if (rc == RT_OK)
        rc = rt_history_github_gaps(pg, q->project, q->until, q->window, &list, &nlist);
    for (size_t r = 0; rc == RT_OK && *gaps && r < nlist; r++) {
        const rt_history_github_gap *g = &list[r];
        json_t *o = json_pack("{s:I, s:I, s:s, s:s, s:s, s:o, s:o, s:s, s:s}", "run_id",
                              (json_int_t)g->run_id, "attempt", (json_int_t)g->attempt, "kind",
                              g->kind, "artifact", g->artifact, "file", g->file, "detail",
                              text_or_null(g->detail), "url", text_or_null(g->html_url), "branch",
                              g->branch_key, "started", g->started);
        if (!o || json_array_append_new(*gaps, o) != 0) rc = RT_ENOMEM;
    }
    rt_history_gap_kind_free(by_kind, nkinds);
    rt_history_github_gap_free(list, nlist);
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

static void print_labels(json_t *outcomes);
static void print_variants(json_t *row);

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
        if (json_is_true(json_object_get(row, "flaky_through_forks")))
            printf("%*s flaky only through %lld fork pull requests of untrusted authors: "
                   "evidence, not counted\n",
                   72, "", (long long)json_integer_value(json_object_get(row, "fork_branches")));
        print_variants(row);
    }
}

/* The variants a test failed on, compactly ("windows-latest py3.12 ci1 3/20"), and the one
 * variant or OS it fails on alone, on lines under it. */
static void print_variants(json_t *row)
{
    json_t *list = json_object_get(row, "variants"), *v;
    size_t i, failing = 0;
    json_array_foreach(list, i, v) failing +=
        json_integer_value(json_object_get(v, "failures")) > 0;
    if (!failing) return;
    printf("%*s failing variants:", 72, "");
    size_t shown = 0;
    json_array_foreach(list, i, v)
    {
        json_int_t failures = json_integer_value(json_object_get(v, "failures"));
        if (failures <= 0 || shown++ >= 4) continue;
        printf("%s %s %lld/%lld", shown > 1 ? "," : "",
               rt_cli_text(json_string_value(json_object_get(v, "label"))), (long long)failures,
               (long long)json_integer_value(json_object_get(v, "runs")));
    }
    if (failing > 4) printf(", ... %zu more", failing - 4);
    printf(" (of %zu)\n", json_array_size(list));
    const char *only = json_string_value(json_object_get(row, "only_variant"));
    const char *only_os = json_string_value(json_object_get(row, "only_os"));
    if (only)
        printf("%*s fails on one variant only: %s (of %zu)\n", 72, "", rt_cli_text(only),
               json_array_size(list));
    if (only_os)
        printf("%*s fails on %s only (%zu of %zu variants)\n", 72, "", only_os, failing,
               json_array_size(list));
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

/* Under the table: the tests that reported only disabled, collection or build errors, and
 * the coverage of a GitHub project's collection. */
static void print_others_and_coverage(json_t *others, json_t *cov, json_t *gaps)
{
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
    char window[64], trusted[512];
    q.trusted = rt__cli_trusted_associations(cfg, trusted, sizeof trusted);
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
    /* One window for every read below: the tests, their variants, outcomes, flips and gaps. */
    char until[32];
    q.until = rt__cli_history_until(q.until, until);
    rt_pg *pg = NULL;
    if (rt__cli_connect_read(cfg, "cli", &pg) != 0) return 1;
    json_t *rows = rt__cli_flakes(pg, &q), *cov = NULL, *gaps = NULL, *others = NULL;
    int status = 1;
    if (!rows || rt__cli_flakes_trust(pg, &q, rows) != 0 ||
        add_github_columns(pg, &q, rows) != RT_OK ||
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
        print_others_and_coverage(others, cov, gaps);
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
