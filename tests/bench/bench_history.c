/* SPDX-License-Identifier: MPL-2.0 */
/* bench_history.c - the test history at volume (issue 7): how fast the history writer
 * ingests test outcomes next to a raw COPY of the same rows, and how long the dashboard
 * queries take over them.
 *
 * In a database of its own (support/classify_harness.h), it derives runs from the real
 * errorsummary fixtures (passing and failing mochitest-browser-chrome, xpcshell, infra,
 * a lone failure), each run's groups and tests moved under one of 400 components so that
 * tests recur across runs, spread over 30 days and over try (each push its own branch),
 * autoland and mozilla-central pushes, until --outcomes rows (groups + tests, default
 * 1,000,000) are made. All rows are built before any timing. Then:
 *   1. a share of the runs (--per-run-share, 5%) written as retrig-history did before
 *      batching: one transaction per run (rt_history_store);
 *   2. the rest as retrig-history writes them now: history_batch_size runs a transaction
 *      (rt_history_store_batch, --batch, default the configuration's);
 *   3. every row again, by raw COPY in one transaction into copies of the tables (same
 *      columns, indexes, constraints and foreign keys): the ceiling;
 * and prints rows per second of each and the ratios (target: batched >= 0.5 of COPY).
 * After ANALYZE it times the dashboard's queries (best of 2): history_flakes for 7 and
 * 30 days, all branches and main only (retrig flakes, retrig report), history_group_stats,
 * the daily failure rates of one test (the report's charts), retrig-decide's look-up of a
 * decision's lines, and the `retrig flakes` and `retrig report` commands end to end
 * (target: under 1 s each). A command, not a test: scripts/bench builds and runs it. Exit
 * 0 when it ran (targets reported, not enforced), 1 when it could not. */
#include "support/util.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/core/errorsummary.h"
#include "common/core/history.h"
#include "common/io/history_store.h"
#include "support/classify_harness.h"

#define COMPONENTS 400
#define DAYS       30
#define NTEMPLATES 5

static const char *const FIXTURES[NTEMPLATES] = {
    "errorsummary/mochitest-browser-chrome_pass_errorsummary.log",
    "errorsummary/xpcshell-errorsummary-with-colon.log",
    "errorsummary/mochitest-browser-chrome_errorsummary.log",
    "errorsummary/mochitest-browser-chrome_infra_errorsummary.log",
    "errorsummary/plain-chunked_errorsummary.log",
};
static const int WEIGHTS[NTEMPLATES] = {60, 26, 10, 2, 2}; /* percent of runs */

typedef struct bench_run {
    char run_key[32], project[24], push[16], revision[41], branch_key[48], run_at[40];
    char label[96];
    rt_history_run run;
    rt_history_rows rows;
} bench_run;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, const char *detail)
{
    fprintf(stderr, "bench_history: %s: %s\n", what, detail ? detail : "");
    exit(1);
}

static void exec_or_die(rt_pg *pg, const char *sql)
{
    if (rt_pg_exec(pg, sql, 0, NULL, NULL) != RT_OK) die(sql, rt_pg_errstr(pg));
}

/* The template's rows under component c: "c042/<name>". */
static void derive(const rt_history_rows *t, int c, rt_history_rows *out)
{
    char a[1024], b[1024];
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < t->ngroups; i++) {
        const rt_history_group *g = &t->groups[i];
        snprintf(a, sizeof a, "c%03d/%s", c, g->name);
        if (rt_history_rows_add_group(out, a, g->status, g->duration_ms, g->failed) != RT_OK)
            die("rows", "out of memory");
    }
    for (size_t i = 0; i < t->ntests; i++) {
        const rt_history_test *x = &t->tests[i];
        snprintf(a, sizeof a, "c%03d/%s", c, x->test);
        if (x->group[0])
            snprintf(b, sizeof b, "c%03d/%s", c, x->group);
        else
            b[0] = '\0';
        if (rt_history_rows_add_test(out, a, b, x->status, x->expected, x->failed, NULL,
                                     x->message) != RT_OK)
            die("rows", "out of memory");
    }
}

static void make_run(bench_run *r, int index, const rt_history_rows *templates, time_t now)
{
    int pick = (int)(random() % 100), k = 0;
    for (int acc = WEIGHTS[0]; pick >= acc && k + 1 < NTEMPLATES; acc += WEIGHTS[++k]) {}
    int which = (int)(random() % 10);
    const char *project = which < 6 ? "try" : which < 9 ? "autoland" : "mozilla-central";
    long push = 1 + random() % (which < 6 ? 4000 : which < 9 ? 1500 : 200);
    snprintf(r->run_key, sizeof r->run_key, "bench%08d/0", index);
    snprintf(r->project, sizeof r->project, "%s", project);
    snprintf(r->push, sizeof r->push, "%ld", push);
    snprintf(r->revision, sizeof r->revision, "%08lx%032x", push, (unsigned)which);
    rt_history_branch_key(project, r->push, r->branch_key, sizeof r->branch_key);
    time_t at = now - (time_t)(random() % (DAYS * 86400));
    struct tm tm;
    gmtime_r(&at, &tm);
    strftime(r->run_at, sizeof r->run_at, "%Y-%m-%dT%H:%M:%SZ", &tm);
    snprintf(r->label, sizeof r->label, "test-linux1804-64/opt-mochitest-browser-chrome-%d",
             1 + (int)(random() % 16));
    derive(&templates[k], (int)(random() % COMPONENTS), &r->rows);
    bool main = strcmp(project, "try") != 0;
    r->run = (rt_history_run){.source = "taskcluster",
                              .run_key = r->run_key,
                              .repository = "gecko",
                              .project = r->project,
                              .branch = r->project,
                              .main = main,
                              .branch_key = r->branch_key,
                              .push = r->push,
                              .revision = r->revision,
                              .platform = "linux1804-64",
                              .label = r->label,
                              .run_at = r->run_at,
                              .complete_results = false};
}

/* ---- raw COPY ---- */

typedef struct buf {
    char *data;
    size_t len, cap;
} buf;

static void put(buf *b, const char *s, char sep)
{
    size_t n = s ? strlen(s) * 2 + 3 : 3;
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        if (!(b->data = realloc(b->data, b->cap))) die("copy", "out of memory");
    }
    if (!s) {
        memcpy(b->data + b->len, "\\N", 2);
        b->len += 2;
    }
    for (; s && *s; s++) {
        char e = *s == '\\' ? '\\' : *s == '\t' ? 't' : *s == '\n' ? 'n' : *s == '\r' ? 'r' : 0;
        if (e) {
            b->data[b->len++] = '\\';
            b->data[b->len++] = e;
        } else {
            b->data[b->len++] = *s;
        }
    }
    b->data[b->len++] = sep;
}

static void copy(rt_pg *pg, const char *sql, const buf *b)
{
    PGconn *conn = rt_pg_conn(pg);
    PGresult *res = PQexec(conn, sql);
    if (PQresultStatus(res) != PGRES_COPY_IN) die(sql, PQerrorMessage(conn));
    PQclear(res);
    if (PQputCopyData(conn, b->data, (int)b->len) != 1 || PQputCopyEnd(conn, NULL) != 1)
        die(sql, PQerrorMessage(conn));
    while ((res = PQgetResult(conn))) {
        if (PQresultStatus(res) != PGRES_COMMAND_OK) die(sql, PQerrorMessage(conn));
        PQclear(res);
    }
}

/* ---- query timings ---- */

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int nslow;

#define TRIES 2 /* each query runs twice; the faster time is reported */

static void report_time(const char *what, double t[TRIES], long long rows)
{
    qsort(t, TRIES, sizeof *t, compare_double);
    bool ok = t[0] < 1.0;
    if (!ok) nslow++;
    printf("  %-58s %8.1f ms", what, t[0] * 1000);
    if (rows >= 0) printf("  (%lld rows)", rows);
    printf("%s\n", ok ? "" : "  OVER 1 s");
    /* For scripts/bench's report: the description up to its "(", as a key. */
    char key[96];
    size_t k = 0;
    for (const char *c = what; *c && *c != '(' && k + 1 < sizeof key; c++) {
        bool word =
            (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9');
        if (word)
            key[k++] = *c >= 'A' && *c <= 'Z' ? (char)(*c - 'A' + 'a') : *c;
        else if (k && key[k - 1] != '_')
            key[k++] = '_';
    }
    while (k && key[k - 1] == '_') k--;
    key[k] = '\0';
    printf("figure: history_%s_ms.%s %.1f\n", strstr(what, "(command") ? "command" : "query", key,
           t[0] * 1000);
}

static void time_query(rt_pg *pg, const char *what, const char *sql, int nparams,
                       const char *const *params)
{
    double t[TRIES];
    long long rows = 0;
    for (int i = 0; i < TRIES; i++) {
        PGresult *res = NULL;
        double start = now_s();
        if (rt_pg_exec(pg, sql, nparams, params, &res) != RT_OK) die(what, rt_pg_errstr(pg));
        t[i] = now_s() - start;
        rows = PQntuples(res);
        PQclear(res);
    }
    report_time(what, t, rows);
}

static void time_command(const char *what, const char *cmd)
{
    double t[TRIES];
    for (int i = 0; i < TRIES; i++) {
        double start = now_s();
        if (system(cmd) != 0) die("command failed", cmd);
        t[i] = now_s() - start;
    }
    report_time(what, t, -1);
}

int main(int argc, char **argv)
{
    long outcomes = 1000000;
    int batch = 0, per_run_share = 5;
    static const struct option options[] = {{"outcomes", required_argument, NULL, 'o'},
                                            {"batch", required_argument, NULL, 'b'},
                                            {"per-run-share", required_argument, NULL, 'p'},
                                            {"help", no_argument, NULL, 'h'},
                                            {NULL, 0, NULL, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "o:b:p:h", options, NULL)) != -1) {
        switch (c) {
        case 'o': outcomes = atol(optarg); break;
        case 'b': batch = atoi(optarg); break;
        case 'p': per_run_share = atoi(optarg); break;
        default:
            printf("usage: bench_history [--outcomes N (1000000)] [--batch RUNS"
                   " (history_batch_size)] [--per-run-share PERCENT (5)]\n");
            return c == 'h' ? 0 : 1;
        }
    }
    if (outcomes < 1000 || outcomes > 50000000 || batch < 0 || batch > 1000 || per_run_share < 0 ||
        per_run_share > 100) {
        fprintf(stderr, "bench_history: 1000..50000000 outcomes, batch 0..1000, share 0..100\n");
        return 1;
    }
    srandom(7);
    rt_ch *h = rt_ch_new();
    if (!batch) batch = h->cfg.history_batch_size;
    rt_pg *pg = h->pg;
    double t0 = now_s();

    /* The templates, from the real fixtures. */
    rt_history_rows templates[NTEMPLATES];
    for (int i = 0; i < NTEMPLATES; i++) {
        size_t len = 0;
        char *text = rt_test_read_file(rt_test_fixture(FIXTURES[i]), &len);
        rt_errorsummary es = {0};
        if (rt_errorsummary_add(&es, text, len) != RT_OK ||
            rt_history_rows_from_errorsummary(&es, &templates[i]) != RT_OK)
            die("fixture", FIXTURES[i]);
        rt_errorsummary_free(&es);
        free(text);
    }

    /* The runs, until the outcomes are made. */
    size_t cap = 1024, nruns = 0;
    long made = 0, groups = 0, tests = 0, failed = 0;
    bench_run *runs = malloc(cap * sizeof *runs);
    time_t now = time(NULL);
    while (made < outcomes) {
        if (nruns == cap && !(runs = realloc(runs, (cap *= 2) * sizeof *runs)))
            die("runs", "out of memory");
        bench_run *r = &runs[nruns];
        make_run(r, (int)nruns, templates, now);
        nruns++;
        groups += (long)r->rows.ngroups;
        tests += (long)r->rows.ntests;
        made += (long)(r->rows.ngroups + r->rows.ntests);
        for (size_t k = 0; k < r->rows.ntests; k++) failed += r->rows.tests[k].failed;
    }
    for (size_t i = 0; i < nruns; i++) { /* the pointers, once the array stopped moving */
        bench_run *r = &runs[i];
        r->run.run_key = r->run_key;
        r->run.project = r->project;
        r->run.branch = r->project;
        r->run.branch_key = r->branch_key;
        r->run.push = r->push;
        r->run.revision = r->revision;
        r->run.label = r->label;
        r->run.run_at = r->run_at;
    }
    printf("test history benchmark: %ld outcomes (%ld group results, %ld test results, %ld"
           " failing) in %zu runs from the errorsummary fixtures, %d components, %d days"
           " (built in %.1f s)\n",
           made, groups, tests, failed, nruns, COMPONENTS, DAYS, now_s() - t0);

    /* 1. One transaction per run: the writer before batching. */
    size_t per_run = nruns * (size_t)per_run_share / 100;
    long rows1 = 0;
    double start = now_s();
    for (size_t i = 0; i < per_run; i++) {
        bool inserted = false;
        if (rt_pg_begin(pg) != RT_OK ||
            rt_history_store(pg, &runs[i].run, &runs[i].rows, false, &inserted) != RT_OK ||
            rt_pg_commit(pg) != RT_OK || !inserted)
            die("per-run store", rt_pg_errstr(pg));
        rows1 += (long)(runs[i].rows.ngroups + runs[i].rows.ntests);
    }
    double per_run_s = now_s() - start;

    /* 2. Batches of runs: the writer now. */
    rt_history_run *brun = malloc((size_t)batch * sizeof *brun);
    const rt_history_rows **brows = malloc((size_t)batch * sizeof *brows);
    bool *inserted = malloc((size_t)batch * sizeof *inserted);
    char err[RT_ERRSTR_SIZE] = "";
    long rows2 = 0;
    start = now_s();
    for (size_t i = per_run; i < nruns; i += (size_t)batch) {
        size_t n = nruns - i < (size_t)batch ? nruns - i : (size_t)batch;
        for (size_t k = 0; k < n; k++) {
            brun[k] = runs[i + k].run;
            brows[k] = &runs[i + k].rows;
            rows2 += (long)(runs[i + k].rows.ngroups + runs[i + k].rows.ntests);
        }
        if (rt_pg_begin(pg) != RT_OK ||
            rt_history_store_batch(pg, brun, brows, n, inserted, err) != RT_OK ||
            rt_pg_commit(pg) != RT_OK)
            die("batch store", err[0] ? err : rt_pg_errstr(pg));
    }
    double batch_s = now_s() - start;

    /* 3. Raw COPY of every row into copies of the tables. */
    exec_or_die(pg, "CREATE SCHEMA raw");
    exec_or_die(pg, "CREATE TABLE raw.history_runs (LIKE public.history_runs INCLUDING ALL)");
    exec_or_die(pg, "CREATE TABLE raw.history_groups (LIKE public.history_groups INCLUDING ALL)");
    exec_or_die(pg, "CREATE TABLE raw.history_tests (LIKE public.history_tests INCLUDING ALL)");
    exec_or_die(pg, "ALTER TABLE raw.history_groups ADD FOREIGN KEY (run_id)"
                    " REFERENCES raw.history_runs (id) ON DELETE CASCADE");
    exec_or_die(pg, "ALTER TABLE raw.history_tests ADD FOREIGN KEY (run_id)"
                    " REFERENCES raw.history_runs (id) ON DELETE CASCADE");
    buf br = {0}, bg = {0}, bt = {0};
    for (size_t i = 0; i < nruns; i++) {
        const bench_run *r = &runs[i];
        char id[24], duration[24];
        snprintf(id, sizeof id, "%zu", i + 1);
        put(&br, id, '\t');
        put(&br, "taskcluster", '\t');
        put(&br, r->run_key, '\t');
        put(&br, "gecko", '\t');
        put(&br, r->project, '\t');
        put(&br, r->project, '\t');
        put(&br, r->run.main ? "main" : "other", '\t');
        put(&br, r->branch_key, '\t');
        put(&br, NULL, '\t');
        put(&br, r->push, '\t');
        put(&br, r->revision, '\t');
        put(&br, "linux1804-64", '\t');
        put(&br, r->label, '\t');
        put(&br, r->run_at, '\t');
        put(&br, "f", '\n');
        for (size_t g = 0; g < r->rows.ngroups; g++) {
            const rt_history_group *gr = &r->rows.groups[g];
            snprintf(duration, sizeof duration, "%ld", gr->duration_ms);
            put(&bg, id, '\t');
            put(&bg, gr->name, '\t');
            put(&bg, gr->status, '\t');
            put(&bg, gr->duration_ms >= 0 ? duration : NULL, '\t');
            put(&bg, gr->failed ? "t" : "f", '\n');
        }
        for (size_t k = 0; k < r->rows.ntests; k++) {
            const rt_history_test *t = &r->rows.tests[k];
            put(&bt, id, '\t');
            put(&bt, t->test, '\t');
            put(&bt, t->group, '\t');
            put(&bt, t->status, '\t');
            put(&bt, t->expected, '\t');
            put(&bt, t->failed ? "t" : "f", '\t');
            put(&bt, t->message, '\t');
            put(&bt, t->signature, '\t');
            put(&bt, t->signature_hash[0] ? t->signature_hash : NULL, '\n');
        }
    }
    start = now_s();
    if (rt_pg_begin(pg) != RT_OK) die("begin", rt_pg_errstr(pg));
    copy(pg,
         "COPY raw.history_runs (id, source, run_key, repository, project, branch, branch_class,"
         " branch_key, pr, push, revision, platform, label, run_at, complete_results) FROM STDIN",
         &br);
    copy(pg, "COPY raw.history_groups (run_id, group_name, status, duration_ms, failed) FROM STDIN",
         &bg);
    copy(pg,
         "COPY raw.history_tests (run_id, test, group_name, status, expected, failed, message,"
         " signature, signature_hash) FROM STDIN",
         &bt);
    if (rt_pg_commit(pg) != RT_OK) die("commit", rt_pg_errstr(pg));
    double copy_s = now_s() - start;
    free(br.data);
    free(bg.data);
    free(bt.data);

    long long stored = rt_ch_sql_int(
        h, "SELECT (SELECT count(*) FROM history_groups) + (SELECT count(*) FROM history_tests)", 0,
        NULL);
    double copy_rate = (double)made / copy_s;
    printf("ingest (rows = group + test results; %lld stored by the writer, %s)\n", stored,
           stored == made ? "all" : "NOT ALL");
    if (per_run)
        printf("  one transaction per run (before)  %8.0f rows/s  %7zu runs %8.1f s   ratio"
               " %.2f\n",
               (double)rows1 / per_run_s, per_run, per_run_s,
               (double)rows1 / per_run_s / copy_rate);
    printf("  batches of %4d runs (writer now)   %8.0f rows/s  %7zu runs %8.1f s   ratio %.2f"
           "  (target >= 0.5: %s)\n",
           batch, (double)rows2 / batch_s, nruns - per_run, batch_s,
           (double)rows2 / batch_s / copy_rate,
           (double)rows2 / batch_s / copy_rate >= 0.5 ? "met" : "NOT met");
    printf("  raw COPY, one transaction          %8.0f rows/s  %7zu runs %8.1f s\n", copy_rate,
           nruns, copy_s);
    printf("figure: history_outcomes %ld\nfigure: history_ingest_rows_per_s %.0f\n"
           "figure: history_copy_rows_per_s %.0f\nfigure: history_ingest_ratio %.2f\n",
           made, (double)rows2 / batch_s, copy_rate, (double)rows2 / batch_s / copy_rate);

    /* The queries, on the writer's tables. */
    exec_or_die(pg, "DROP SCHEMA raw CASCADE");
    exec_or_die(pg, "ANALYZE history_runs");
    exec_or_die(pg, "ANALYZE history_groups");
    exec_or_die(pg, "ANALYZE history_tests");
    printf("queries at %ld outcomes (best of %d; target < 1 s each)\n", made, TRIES);
    static const char flakes[] =
        "SELECT * FROM history_flakes('gecko', now() - $1::interval, now(), $2::boolean, 3,"
        " interval '7 days') LIMIT 1000";
    const char *p7all[] = {"7 days", "f"}, *p7main[] = {"7 days", "t"};
    const char *p30all[] = {"30 days", "f"}, *p30main[] = {"30 days", "t"};
    time_query(pg, "history_flakes 7 days, all branches (retrig flakes)", flakes, 2, p7all);
    time_query(pg, "history_flakes 7 days, main only (--main-only)", flakes, 2, p7main);
    time_query(pg, "history_flakes 30 days, all branches (retrig report)", flakes, 2, p30all);
    time_query(pg, "history_flakes 30 days, main only (retrig report)", flakes, 2, p30main);
    time_query(pg, "history_group_stats 7 days",
               "SELECT * FROM history_group_stats('gecko', now() - interval '7 days', now(),"
               " false)",
               0, NULL);
    char *top = rt_ch_sql_text(h,
                               "SELECT test FROM history_flakes('gecko', now() - interval '7 days',"
                               " now(), false, 3, interval '7 days') LIMIT 1",
                               0, NULL);
    if (!top) die("no flaky test", "");
    const char *pdaily[] = {top};
    time_query(pg, "history_test_daily of one test, 30 days (report chart)",
               "SELECT day, sum(runs), sum(failures) FROM history_test_daily WHERE repository ="
               " 'gecko' AND test = $1 AND day >= now() - interval '30 days' GROUP BY day",
               1, pdaily);
    /* retrig-decide's look-up: the failing fixture's lines under one component. */
    rt_history_rows lines_rows;
    derive(&templates[2], 7, &lines_rows);
    rt_failure_line lines[16];
    size_t nlines = 0;
    for (size_t i = 0; i < lines_rows.ntests && nlines < 16; i++) {
        const rt_history_test *t = &lines_rows.tests[i];
        if (!t->signature) continue;
        lines[nlines] = (rt_failure_line){.test = t->test, .signature = t->signature};
        memcpy(lines[nlines].hash_hex, t->signature_hash, 17);
        nlines++;
    }
    rt_history_lookup q = {"gecko", 7, 3, "autoland", "0"};
    double t[TRIES];
    for (int i = 0; i < TRIES; i++) {
        json_t *out = NULL;
        start = now_s();
        if (rt_history_lines_lookup(pg, &q, lines, nlines, &out) != RT_OK)
            die("lines lookup", rt_pg_errstr(pg));
        t[i] = now_s() - start;
        json_decref(out);
    }
    char what[96];
    snprintf(what, sizeof what, "retrig-decide history of a decision's %zu lines", nlines);
    report_time(what, t, (long long)nlines);
    rt_history_rows_free(&lines_rows);

    char cmd[1024];
    char *dir = rt_test_tempdir();
    snprintf(cmd, sizeof cmd,
             "RETRIG_DATABASE_URL='%s' %s/retrig flakes --project gecko --format json >/dev/null",
             h->database_url, RT_TEST_BIN_DIR);
    time_command("retrig flakes --project gecko --format json (command)", cmd);
    snprintf(cmd, sizeof cmd,
             "RETRIG_DATABASE_URL='%s' %s/retrig report --project gecko --out %s/report.html"
             " >/dev/null 2>&1",
             h->database_url, RT_TEST_BIN_DIR, dir);
    time_command("retrig report --project gecko (command, 30 days, charts)", cmd);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    free(dir);
    free(top);
    printf("%s (total %.0f s)\n", nslow ? "some queries are over 1 s" : "every query under 1 s",
           now_s() - t0);

    for (size_t i = 0; i < nruns; i++) rt_history_rows_free(&runs[i].rows);
    for (int i = 0; i < NTEMPLATES; i++) rt_history_rows_free(&templates[i]);
    free(runs);
    free(brun);
    free(brows);
    free(inserted);
    rt_ch_free(h);
    return stored == made ? 0 : 1;
}
