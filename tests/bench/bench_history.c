/* SPDX-License-Identifier: MPL-2.0 */
/* bench_history.c - the test history at volume (issue 7): how fast the history writer
 * ingests test outcomes next to a raw COPY of the same rows, and how long the dashboard
 * queries take over them.
 *
 * In a database of its own (support/classify_harness.h), it derives runs from the real
 * errorsummary fixtures (passing and failing mochitest-browser-chrome, xpcshell, infra,
 * a lone failure), each run's groups and tests moved under one of 400 components so that
 * tests recur across runs, spread over 30 days and over try (each push its own branch, as
 * without a known author), autoland and mozilla-central pushes, until --outcomes rows (groups + tests, default
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
#include <unistd.h>

#include "common/core/errorsummary.h"
#include "common/core/history.h"
#include "common/io/history_store.h"
#include "support/classify_harness.h"

#define COMPONENTS   400
#define PLATFORMS    6
#define NTEMPLATES   5
#define ROLLUP_EVERY 100   /* batches between rollup calls: a replica at full speed, about 1 s */
#define PER_RUN_MAX  20000 /* runs written one transaction each, at most */

static const char *const FIXTURES[NTEMPLATES] = {
    "errorsummary/mochitest-browser-chrome_pass_errorsummary.log",
    "errorsummary/xpcshell-errorsummary-with-colon.log",
    "errorsummary/mochitest-browser-chrome_errorsummary.log",
    "errorsummary/mochitest-browser-chrome_infra_errorsummary.log",
    "errorsummary/plain-chunked_errorsummary.log",
};
#define T_PASS  0
#define T_XPC   1
#define T_FAIL  2
#define T_INFRA 3
#define T_PLAIN 4

typedef struct bench_run {
    char run_key[32], project[24], push[16], revision[41], branch_key[48], run_at[40];
    char label[96], platform[32];
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

/* The generated CI, push by push in time order: every day 200 try pushes (each its own
 * branch), 80 autoland and 6 mozilla-central pushes; a push runs a contiguous range of the
 * 400 components (chunks) on 6 platforms, as many tasks as the volume asks (Firefox: some
 * 250 test tasks a push on average); each task runs one component's fixture-derived rows
 * within 4 hours of the push (some past midnight), 3% of them retriggered 1 to 3 days later.
 * A component fails (the failing fixture) 7% of the time, one in 20 components 67%; 2% of
 * runs are infra failures and 2% harness failures without a group. */
typedef struct generator {
    unsigned long long state;
    const rt_history_rows *templates;
    time_t start; /* midnight UTC of the first day */
    int days;
    int tasks; /* per push, on average */
    int day, push_in_day, task_in_push, push_tasks, first_component;
    long try_push, autoland_push, central_push;
    char project[24];
    long push;
    time_t push_time;
    long index;
} generator;

#define PUSHES_A_DAY 286

static unsigned long long next_u64(generator *g)
{
    g->state ^= g->state << 13;
    g->state ^= g->state >> 7;
    g->state ^= g->state << 17;
    return g->state;
}

static unsigned below(generator *g, unsigned n) { return (unsigned)(next_u64(g) % n); }

static void generator_init(generator *g, const rt_history_rows *templates, time_t start, int days,
                           int tasks)
{
    memset(g, 0, sizeof *g);
    g->state = 0x9e3779b97f4a7c15ull;
    g->templates = templates;
    g->start = start;
    g->days = days;
    g->tasks = tasks;
    g->task_in_push = g->push_tasks = 0;
    g->push_in_day = -1;
}

/* The next run, or false when the days are over. */
static bool generate(generator *g, bench_run *r)
{
    if (g->task_in_push >= g->push_tasks) { /* the next push */
        if (++g->push_in_day >= PUSHES_A_DAY) {
            g->push_in_day = 0;
            g->day++;
        }
        if (g->day >= g->days) return false;
        int slot = (int)((long)g->push_in_day * 7919 % PUSHES_A_DAY), k = g->push_in_day;
        bool is_try = slot < 200, is_central = slot >= 280;
        snprintf(g->project, sizeof g->project, "%s",
                 is_central ? "mozilla-central"
                 : is_try   ? "try"
                            : "autoland");
        g->push = is_central ? ++g->central_push : is_try ? ++g->try_push : ++g->autoland_push;
        g->push_time = g->start + (time_t)g->day * 86400 + (time_t)k * 86400 / PUSHES_A_DAY +
                       (time_t)below(g, 300);
        /* try runs a third of the tasks, mozilla-central twice as many */
        int tasks = is_try ? g->tasks / 2 : is_central ? g->tasks * 2 : g->tasks * 3 / 2;
        g->push_tasks = tasks < 1 ? 1 : tasks;
        g->first_component = (int)below(g, COMPONENTS);
        g->task_in_push = 0;
    }
    int t = g->task_in_push++;
    int component = (g->first_component + t / PLATFORMS) % COMPONENTS;
    int platform = t % PLATFORMS;
    unsigned pick = below(g, 1000);
    unsigned fail = component % 20 == 0 ? 670 : 70;
    int k = pick < 20            ? T_INFRA
            : pick < 40          ? T_PLAIN
            : pick < 40 + fail   ? T_FAIL
            : below(g, 100) < 30 ? T_XPC
                                 : T_PASS;
    time_t at = g->push_time + (time_t)below(g, 4 * 3600);
    if (below(g, 100) < 3) at += (time_t)(1 + below(g, 3)) * 86400;
    time_t end = g->start + (time_t)g->days * 86400 - 1;
    if (at > end) at = end;
    struct tm tm;
    gmtime_r(&at, &tm);
    strftime(r->run_at, sizeof r->run_at, "%Y-%m-%dT%H:%M:%SZ", &tm);
    snprintf(r->run_key, sizeof r->run_key, "bench%09ld/0", g->index++);
    snprintf(r->project, sizeof r->project, "%s", g->project);
    snprintf(r->push, sizeof r->push, "%ld", g->push);
    snprintf(r->revision, sizeof r->revision, "%08lx%032x", g->push, (unsigned)g->project[0]);
    rt_history_branch_key(g->project, r->push, NULL, r->branch_key, sizeof r->branch_key);
    snprintf(r->platform, sizeof r->platform, "linux%d-64", platform);
    snprintf(r->label, sizeof r->label, "test-linux%d-64/opt-chunk-%d", platform, component);
    derive(&g->templates[k], component, &r->rows);
    r->run = (rt_history_run){.source = "taskcluster",
                              .run_key = r->run_key,
                              .repository = "gecko",
                              .project = r->project,
                              .branch = r->project,
                              .main = strcmp(g->project, "try") != 0,
                              .branch_key = r->branch_key,
                              .push = r->push,
                              .revision = r->revision,
                              .platform = r->platform,
                              .label = r->label,
                              .run_at = r->run_at,
                              .complete_results = false};
    return true;
}

/* ---- raw COPY ---- */

/* One field of COPY's text format, then sep. */
static void put(FILE *f, const char *s, char sep)
{
    if (!s) fputs("\\N", f);
    for (; s && *s; s++) {
        char e = *s == '\\' ? '\\' : *s == '\t' ? 't' : *s == '\n' ? 'n' : *s == '\r' ? 'r' : 0;
        if (e) {
            fputc('\\', f);
            fputc(e, f);
        } else {
            fputc(*s, f);
        }
    }
    fputc(sep, f);
}

/* COPY sql FROM STDIN with the contents of the file at path. */
static void copy_file(rt_pg *pg, const char *sql, const char *path)
{
    PGconn *conn = rt_pg_conn(pg);
    FILE *f = fopen(path, "r");
    if (!f) die("cannot read", path);
    PGresult *res = PQexec(conn, sql);
    if (PQresultStatus(res) != PGRES_COPY_IN) die(sql, PQerrorMessage(conn));
    PQclear(res);
    static char chunk[1 << 20];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        if (PQputCopyData(conn, chunk, (int)n) != 1) die(sql, PQerrorMessage(conn));
    fclose(f);
    if (PQputCopyEnd(conn, NULL) != 1) die(sql, PQerrorMessage(conn));
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

/* Dashboard queries must take under 1 s, `retrig report` under 3 s; what reads the raw rows
 * ("(raw") is shown with no target. */
static void report_time(const char *what, double t[TRIES], long long rows)
{
    qsort(t, TRIES, sizeof *t, compare_double);
    bool raw = strstr(what, "(raw") != NULL;
    double limit = strstr(what, "retrig report") ? 3.0 : 1.0;
    bool ok = raw || t[0] < limit;
    if (!ok) nslow++;
    printf("  %-64s %8.1f ms", what, t[0] * 1000);
    if (rows >= 0) printf("  (%lld rows)", rows);
    printf("%s\n", ok ? "" : limit > 1.0 ? "  OVER 3 s" : "  OVER 1 s");
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
    printf("figure: history_%s_ms.%s %.1f\n",
           raw                        ? "raw"
           : strstr(what, "(command") ? "command"
                                      : "query",
           key, t[0] * 1000);
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

static long long sql_int(rt_ch *h, const char *sql)
{
    long long v = rt_ch_sql_int(h, sql, 0, NULL);
    return v;
}

/* Partitions for the days of the data (a fresh database has them from today on). */
static const char SQL_PAST_PARTITIONS[] =
    "SELECT partman.create_partition_time(t, ARRAY(SELECT generate_series($1::timestamptz,"
    " $1::timestamptz + make_interval(days => $2::integer), interval '1 day')))"
    " FROM unnest(ARRAY['public.history_runs', 'public.history_groups', 'public.history_tests',"
    "                   'public.history_rollup_push_groups']) t";

/* A copy of a partitioned table with the same columns, keys, indexes and day partitions. */
static void raw_copy_of(rt_pg *pg, const char *table, const char *since, int days)
{
    char sql[1024];
    snprintf(sql, sizeof sql,
             "CREATE TABLE raw.%s (LIKE public.%s INCLUDING DEFAULTS INCLUDING CONSTRAINTS"
             " INCLUDING INDEXES) PARTITION BY RANGE (run_at)",
             table, table);
    exec_or_die(pg, sql);
    snprintf(sql, sizeof sql, "CREATE TABLE raw.%s_default PARTITION OF raw.%s DEFAULT", table,
             table);
    exec_or_die(pg, sql);
    for (int d = 0; d <= days; d++) {
        snprintf(sql, sizeof sql,
                 "DO $$ BEGIN EXECUTE format('CREATE TABLE raw.%s_%d PARTITION OF raw.%s FOR VALUES"
                 " FROM (%%L) TO (%%L)', '%s'::timestamptz + interval '%d days',"
                 " '%s'::timestamptz + interval '%d days'); END $$",
                 table, d, table, since, d, since, d + 1);
        exec_or_die(pg, sql);
    }
}

static double expected_rows(const rt_history_rows *templates)
{
    /* as generate() picks: infra 2%, harness 2%, failing 10% (7% x 95% + 67% x 5%), the rest
     * 30% xpcshell and 70% passing mochitest */
    double fail = 0.07 * 0.95 + 0.67 * 0.05, rest = 1.0 - 0.04 - fail;
    double share[NTEMPLATES] = {rest * 0.7, rest * 0.3, fail, 0.02, 0.02};
    double rows = 0;
    for (int k = 0; k < NTEMPLATES; k++)
        rows += share[k] * (double)(templates[k].ngroups + templates[k].ntests);
    return rows;
}

int main(int argc, char **argv)
{
    long outcomes = 1000000;
    int batch = 0, per_run_share = 5, days = 30;
    static const struct option options[] = {
        {"outcomes", required_argument, NULL, 'o'}, {"days", required_argument, NULL, 'd'},
        {"batch", required_argument, NULL, 'b'},    {"per-run-share", required_argument, NULL, 'p'},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "o:d:b:p:h", options, NULL)) != -1) {
        switch (c) {
        case 'o': outcomes = atol(optarg); break;
        case 'd': days = atoi(optarg); break;
        case 'b': batch = atoi(optarg); break;
        case 'p': per_run_share = atoi(optarg); break;
        default:
            printf("usage: bench_history [--outcomes N (1000000)] [--days D (30)] [--batch RUNS"
                   " (history_batch_size)] [--per-run-share PERCENT (5)]\n");
            return c == 'h' ? 0 : 1;
        }
    }
    if (outcomes < 1000 || outcomes > 100000000 || days < 2 || days > 90 || batch < 0 ||
        batch > 1000 || per_run_share < 0 || per_run_share > 100) {
        fprintf(stderr, "bench_history: 1000..100000000 outcomes, 2..90 days, batch 0..1000,"
                        " share 0..100\n");
        return 1;
    }
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
    double per_run_rows = expected_rows(templates);
    double runs_wanted = (double)outcomes / per_run_rows;
    int tasks = (int)(runs_wanted / days / 232.0 + 0.5); /* 232 tasks a day per task a push */
    if (tasks < 1) tasks = 1;
    time_t today = time(NULL) / 86400 * 86400, start = today - (time_t)(days - 1) * 86400;
    char since[40];
    struct tm tm;
    gmtime_r(&start, &tm);
    strftime(since, sizeof since, "%Y-%m-%dT00:00:00Z", &tm);
    char days_text[16];
    snprintf(days_text, sizeof days_text, "%d", days);
    const char *pp[] = {since, days_text};
    if (rt_pg_exec(pg, SQL_PAST_PARTITIONS, 2, pp, NULL) != RT_OK)
        die("partitions", rt_pg_errstr(pg));
    printf("test history benchmark: about %ld outcomes from the errorsummary fixtures (%.1f rows"
           " a run), %d days of %d pushes (200 try, 80 autoland, 6 mozilla-central), %d test"
           " tasks a push on average, %d components on %d platforms\n",
           outcomes, per_run_rows, days, PUSHES_A_DAY, tasks * 232 / PUSHES_A_DAY, COMPONENTS,
           PLATFORMS);

    /* 1 and 2: the writer, one transaction per run first, then batches; the rollup kept up
     * every ROLLUP_EVERY batches. Only the database calls are timed. */
    generator g;
    generator_init(&g, templates, start, days, tasks);
    long per_run = (long)(runs_wanted * per_run_share / 100);
    if (per_run > PER_RUN_MAX) per_run = PER_RUN_MAX;
    bench_run *runs = calloc((size_t)batch, sizeof *runs);
    rt_history_run *brun = malloc((size_t)batch * sizeof *brun);
    const rt_history_rows **brows = malloc((size_t)batch * sizeof *brows);
    bool *inserted = malloc((size_t)batch * sizeof *inserted);
    if (!runs || !brun || !brows || !inserted) die("memory", "");
    char err[RT_ERRSTR_SIZE] = "";
    long nruns = 0, made = 0, groups = 0, tests = 0, failed = 0, rows1 = 0, rows2 = 0;
    double per_run_s = 0, batch_s = 0, rollup_s = 0, start_s;
    long batches = 0;
    bool more = true;
    while (more) {
        size_t n = 0;
        long want = nruns < per_run ? 1 : batch;
        while (n < (size_t)want && (more = generate(&g, &runs[n]))) {
            bench_run *r = &runs[n++];
            groups += (long)r->rows.ngroups;
            tests += (long)r->rows.ntests;
            made += (long)(r->rows.ngroups + r->rows.ntests);
            for (size_t k = 0; k < r->rows.ntests; k++) failed += r->rows.tests[k].failed;
        }
        if (!n) break;
        for (size_t k = 0; k < n; k++) {
            runs[k].run.run_key = runs[k].run_key; /* the strings of this slot */
            runs[k].run.project = runs[k].project;
            runs[k].run.branch = runs[k].project;
            runs[k].run.branch_key = runs[k].branch_key;
            runs[k].run.push = runs[k].push;
            runs[k].run.revision = runs[k].revision;
            runs[k].run.platform = runs[k].platform;
            runs[k].run.label = runs[k].label;
            runs[k].run.run_at = runs[k].run_at;
            brun[k] = runs[k].run;
            brows[k] = &runs[k].rows;
        }
        long rows = 0;
        for (size_t k = 0; k < n; k++) rows += (long)(runs[k].rows.ngroups + runs[k].rows.ntests);
        start_s = now_s();
        if (nruns < per_run) {
            bool one = false;
            if (rt_pg_begin(pg) != RT_OK ||
                rt_history_store(pg, &runs[0].run, &runs[0].rows, false, &one) != RT_OK ||
                rt_pg_commit(pg) != RT_OK || !one)
                die("per-run store", rt_pg_errstr(pg));
            per_run_s += now_s() - start_s;
            rows1 += rows;
        } else {
            if (rt_pg_begin(pg) != RT_OK ||
                rt_history_store_batch(pg, brun, brows, n, inserted, err) != RT_OK ||
                rt_pg_commit(pg) != RT_OK)
                die("batch store", err[0] ? err : rt_pg_errstr(pg));
            batch_s += now_s() - start_s;
            rows2 += rows;
            if (++batches % ROLLUP_EVERY == 0) {
                start_s = now_s();
                if (rt_history_rollup(pg, 5000, NULL) != RT_OK) die("rollup", rt_pg_errstr(pg));
                rollup_s += now_s() - start_s;
            }
        }
        nruns += (long)n;
        for (size_t k = 0; k < n; k++) rt_history_rows_free(&runs[k].rows);
        if (nruns % 200000 < (long)n)
            fprintf(stderr, "bench_history: %ld runs, %ld rows written (%.0f s)\n", nruns, made,
                    now_s() - t0);
    }
    start_s = now_s();
    if (rt_history_rollup(pg, 5000, NULL) != RT_OK) die("rollup", rt_pg_errstr(pg));
    rollup_s += now_s() - start_s;
    printf("generated %ld outcomes (%ld group results, %ld test results, %ld failing) in %ld"
           " runs\n",
           made, groups, tests, failed, nruns);

    /* 3. Raw COPY of every row into copies of the tables, from files written first. */
    char *dir = rt_test_tempdir();
    char path_runs[600], path_groups[600], path_tests[600];
    snprintf(path_runs, sizeof path_runs, "%s/runs.copy", dir);
    snprintf(path_groups, sizeof path_groups, "%s/groups.copy", dir);
    snprintf(path_tests, sizeof path_tests, "%s/tests.copy", dir);
    FILE *fr = fopen(path_runs, "w"), *fg = fopen(path_groups, "w"), *ft = fopen(path_tests, "w");
    if (!fr || !fg || !ft) die("cannot write in", dir);
    generator_init(&g, templates, start, days, tasks);
    bench_run r;
    for (long i = 0; generate(&g, &r); i++) {
        char id[24], duration[24];
        snprintf(id, sizeof id, "%ld", i + 1);
        put(fr, id, '\t');
        put(fr, "taskcluster", '\t');
        put(fr, r.run_key, '\t');
        put(fr, "gecko", '\t');
        put(fr, r.project, '\t');
        put(fr, r.project, '\t');
        put(fr, r.run.main ? "main" : "other", '\t');
        put(fr, r.branch_key, '\t');
        put(fr, NULL, '\t');
        put(fr, r.push, '\t');
        put(fr, r.revision, '\t');
        put(fr, r.platform, '\t');
        put(fr, r.label, '\t');
        put(fr, r.run_at, '\t');
        put(fr, "f", '\n');
        for (size_t k = 0; k < r.rows.ngroups; k++) {
            const rt_history_group *gr = &r.rows.groups[k];
            snprintf(duration, sizeof duration, "%ld", gr->duration_ms);
            put(fg, id, '\t');
            put(fg, r.run_at, '\t');
            put(fg, gr->name, '\t');
            put(fg, gr->status, '\t');
            put(fg, gr->duration_ms >= 0 ? duration : NULL, '\t');
            put(fg, gr->failed ? "t" : "f", '\n');
        }
        for (size_t k = 0; k < r.rows.ntests; k++) {
            const rt_history_test *t = &r.rows.tests[k];
            put(ft, id, '\t');
            put(ft, r.run_at, '\t');
            put(ft, t->test, '\t');
            put(ft, t->group, '\t');
            put(ft, t->status, '\t');
            put(ft, t->expected, '\t');
            put(ft, t->failed ? "t" : "f", '\t');
            put(ft, t->message, '\t');
            put(ft, t->signature, '\t');
            put(ft, t->signature_hash[0] ? t->signature_hash : NULL, '\n');
        }
        rt_history_rows_free(&r.rows);
    }
    if (fclose(fr) || fclose(fg) || fclose(ft)) die("cannot write in", dir);
    exec_or_die(pg, "CREATE SCHEMA raw");
    raw_copy_of(pg, "history_runs", since, days);
    raw_copy_of(pg, "history_groups", since, days);
    raw_copy_of(pg, "history_tests", since, days);
    start_s = now_s();
    if (rt_pg_begin(pg) != RT_OK) die("begin", rt_pg_errstr(pg));
    copy_file(pg,
              "COPY raw.history_runs (id, source, run_key, repository, project, branch,"
              " branch_class, branch_key, pr, push, revision, platform, label, run_at,"
              " complete_results) FROM STDIN",
              path_runs);
    copy_file(pg,
              "COPY raw.history_groups (run_id, run_at, group_name, status, duration_ms, failed)"
              " FROM STDIN",
              path_groups);
    copy_file(pg,
              "COPY raw.history_tests (run_id, run_at, test, group_name, status, expected,"
              " failed, message, signature, signature_hash) FROM STDIN",
              path_tests);
    if (rt_pg_commit(pg) != RT_OK) die("commit", rt_pg_errstr(pg));
    double copy_s = now_s() - start_s;
    unlink(path_runs);
    unlink(path_groups);
    unlink(path_tests);
    exec_or_die(pg, "DROP SCHEMA raw CASCADE");

    long long stored = sql_int(h, "SELECT (SELECT count(*) FROM history_groups) +"
                                  " (SELECT count(*) FROM history_tests)");
    double copy_rate = (double)made / copy_s, ingest_s = batch_s + rollup_s;
    printf("ingest (rows = group + test results; %lld stored by the writer, %s)\n", stored,
           stored == made ? "all" : "NOT ALL");
    if (per_run)
        printf("  one transaction per run (before)      %8.0f rows/s  %8ld runs %8.1f s   ratio"
               " %.2f\n",
               (double)rows1 / per_run_s, per_run, per_run_s,
               (double)rows1 / per_run_s / copy_rate);
    double ratio = (double)rows2 / batch_s / copy_rate;
    printf("  batches of %4d runs (the writer now)  %8.0f rows/s  %8ld runs %8.1f s   ratio %.2f"
           "  (target >= 0.5: %s)\n",
           batch, (double)rows2 / batch_s, nruns - per_run, batch_s, ratio,
           ratio >= 0.5 ? "met" : "NOT met");
    printf("  the rollup, every %d batches            %8.0f rows/s                %8.1f s   (its"
           " own transactions, after the writer's)\n",
           ROLLUP_EVERY, (double)rows2 / rollup_s, rollup_s);
    printf("  writer and rollup together            %8.0f rows/s                %8.1f s   ratio"
           " %.2f\n",
           (double)rows2 / ingest_s, ingest_s, (double)rows2 / ingest_s / copy_rate);
    printf("  raw COPY, one transaction             %8.0f rows/s  %8ld runs %8.1f s\n", copy_rate,
           nruns, copy_s);
    printf("figure: history_outcomes %ld\nfigure: history_days %d\n"
           "figure: history_ingest_rows_per_s %.0f\nfigure: history_copy_rows_per_s %.0f\n"
           "figure: history_ingest_ratio %.2f\nfigure: history_rollup_rows_per_s %.0f\n"
           "figure: history_ingest_with_rollup_ratio %.2f\n",
           made, days, (double)rows2 / batch_s, copy_rate, ratio, (double)rows2 / rollup_s,
           (double)rows2 / ingest_s / copy_rate);

    /* Disk. */
    /* Autovacuum marks the rollup's pages of past days all-visible in a running database, so
     * that its per-group reads are index-only scans (0029); a database loaded in one go has
     * not had it yet. */
    exec_or_die(pg,
                "VACUUM (ANALYZE) history_rollup_groups, history_rollup_group_pushes,"
                " history_rollup_tests, history_rollup_test_groups, history_rollup_test_branches");
    exec_or_die(pg, "ANALYZE");
    long long raw_bytes =
        sql_int(h, "SELECT sum(pg_total_relation_size(relid)) FROM (SELECT relid FROM"
                   " pg_partition_tree('history_runs') UNION ALL SELECT relid FROM"
                   " pg_partition_tree('history_groups') UNION ALL SELECT relid FROM"
                   " pg_partition_tree('history_tests')) x");
    long long rollup_bytes =
        sql_int(h, "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c WHERE c.relkind = 'r'"
                   " AND c.relname LIKE 'history_rollup%'");
    printf("disk: %.0f bytes an outcome in the outcome tables (%.2f GB), %.0f in the rollup"
           " (%.2f GB)\n",
           (double)raw_bytes / (double)made, (double)raw_bytes / 1e9,
           (double)rollup_bytes / (double)made, (double)rollup_bytes / 1e9);
    printf("figure: history_bytes_per_outcome %.0f\n", (double)raw_bytes / (double)made);
    printf("figure: history_rollup_bytes_per_outcome %.0f\n", (double)rollup_bytes / (double)made);

    /* The queries, on the writer's tables: whole UTC days ending tonight, as retrig flakes
     * and retrig report ask. */
    printf("queries at %ld outcomes (best of %d; dashboard target < 1 s each, retrig report"
           " < 3 s)\n",
           made, TRIES);
    static const char flakes[] =
        "SELECT * FROM history_flakes('gecko', $3::timestamptz - $1::interval, $3::timestamptz,"
        " $2::boolean, 3, interval '7 days') LIMIT 1000";
    char tomorrow[40];
    time_t end_time = today + 86400;
    gmtime_r(&end_time, &tm);
    strftime(tomorrow, sizeof tomorrow, "%Y-%m-%dT00:00:00Z", &tm);
    const char *p7all[] = {"7 days", "f", tomorrow}, *p7main[] = {"7 days", "t", tomorrow};
    const char *p30all[] = {"30 days", "f", tomorrow}, *p30main[] = {"30 days", "t", tomorrow};
    time_query(pg, "history_flakes 7 days, all branches (retrig flakes)", flakes, 3, p7all);
    time_query(pg, "history_flakes 7 days, main only (--main-only)", flakes, 3, p7main);
    time_query(pg, "history_flakes 30 days, all branches (retrig report)", flakes, 3, p30all);
    time_query(pg, "history_flakes 30 days, main only (retrig report)", flakes, 3, p30main);
    const char *ptop[] = {tomorrow};
    char *top = rt_ch_sql_text(h,
                               "SELECT test FROM history_flakes('gecko', $1::timestamptz -"
                               " interval '7 days', $1::timestamptz, false, 3, interval '7 days')"
                               " LIMIT 1",
                               1, ptop);
    if (!top) die("no flaky test", "");
    const char *pdaily[] = {top, tomorrow};
    time_query(pg, "history_test_days of one test, 30 days (report chart)",
               "SELECT * FROM history_test_days('gecko', $1, ($2::timestamptz - interval"
               " '30 days')::date, $2::date)",
               2, pdaily);
    time_query(pg, "history_flakes 36 hours, all branches (raw: not whole days)",
               "SELECT * FROM history_flakes('gecko', now() - interval '36 hours', now(), false, 3,"
               " interval '7 days') LIMIT 1000",
               0, NULL);
    /* retrig-decide's look-up: the failing fixture's lines under one component. */
    rt_history_rows lines_rows;
    derive(&templates[T_FAIL], 7, &lines_rows);
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
        start_s = now_s();
        if (rt_history_lines_lookup(pg, &q, lines, nlines, &out) != RT_OK)
            die("lines lookup", rt_pg_errstr(pg));
        t[i] = now_s() - start_s;
        json_decref(out);
    }
    char what[128];
    snprintf(what, sizeof what, "retrig-decide history of a decision's %zu lines (raw)", nlines);
    report_time(what, t, (long long)nlines);
    rt_history_rows_free(&lines_rows);

    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "RETRIG_DATABASE_URL='%s' %s/retrig flakes --project gecko --format json >/dev/null",
             h->database_url, RT_TEST_BIN_DIR);
    time_command("retrig flakes --project gecko --format json (command)", cmd);
    snprintf(cmd, sizeof cmd,
             "RETRIG_DATABASE_URL='%s' %s/retrig report --project gecko --out %s/report.html"
             " >/dev/null 2>&1",
             h->database_url, RT_TEST_BIN_DIR, dir);
    time_command("retrig report --project gecko (command, 30 days, charts)", cmd);

    /* Retention: the oldest day goes. */
    long long before = sql_int(h, "SELECT count(*) FROM history_runs");
    long partitions = 0;
    start_s = now_s();
    if (rt_history_maintain(pg, days - 2, &partitions) != RT_OK) die("retention", rt_pg_errstr(pg));
    double retention_s = now_s() - start_s;
    long long after = sql_int(h, "SELECT count(*) FROM history_runs");
    printf("retention of one day: %lld runs (%.1f%%) dropped as partitions in %.0f ms (target"
           " < 1,000 ms: %s)\n",
           before - after, 100.0 * (double)(before - after) / (double)before, retention_s * 1000,
           retention_s < 1.0 ? "met" : "NOT met");
    printf("figure: history_retention_ms %.0f\n", retention_s * 1000);
    long removed = 0;
    start_s = now_s();
    if (rt_history_rollup_prune(pg, &removed) != RT_OK) die("prune", rt_pg_errstr(pg));
    printf("and then, in the background, the rollup's %ld rows of that day removed in %.0f ms\n",
           removed, (now_s() - start_s) * 1000);

    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    free(dir);
    free(top);
    printf("%s (total %.0f s)\n",
           nslow ? "some queries are over their target" : "every query within its target",
           now_s() - t0);

    for (int i = 0; i < NTEMPLATES; i++) rt_history_rows_free(&templates[i]);
    free(runs);
    free(brun);
    free(brows);
    free(inserted);
    rt_ch_free(h);
    return stored == made ? 0 : 1;
}
