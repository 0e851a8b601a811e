/* SPDX-License-Identifier: MPL-2.0 */
/* seed_history.c - `retrig seed-history`: writes a realistic test history
 * (common/core/history_sim.h) into database_url through the history's one writer
 * (common/io/history_store.h), for the demo and the report pages' tests. Deterministic for
 * a seed and an end time; a second run with the same ones adds nothing. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "common/core/history_sim.h"
#include "common/core/perf_pick.h"
#include "common/io/history_store.h"
#include "common/io/pg.h"

#define BATCH 400

static void usage(FILE *out)
{
    fprintf(out,
            "usage: retrig seed-history [--repository R] [--seed N] [--days 30] [--tests 300]\n"
            "                           [--until ISO-8601] [--noise RATE] [--hostile]\n"
            "Writes a realistic test history of R (default history_repository) into\n"
            "database_url: pushes on autoland, mozilla-central and try over DAYS days ending\n"
            "at --until (default now), TESTS tests in the groups of the recorded errorsummary,\n"
            "a handful of flaky tests, one new this week, two fixed, one regression landing on\n"
            "a known autoland push, and a collection gap; every other test fails at RATE\n"
            "(default 0.0002) of its runs. The same options give the same rows; runs already\n"
            "stored are left as they are. --hostile adds tests, messages, a project and\n"
            "revisions made of markup and quotes. Prints what it planted.\n"
            "Exit: 0 written, 1 database error, 2 usage.\n");
}

/* Stores a batch in one transaction; counts the runs that were new. */
static int store(rt_pg *pg, const rt_hsim_run *batch, size_t n, const char *repository,
                 size_t *added)
{
    rt_history_run runs[BATCH];
    const rt_history_rows *rows[BATCH];
    bool inserted[BATCH];
    for (size_t i = 0; i < n; i++) {
        runs[i] = rt_hsim_history_run(&batch[i], repository);
        rows[i] = &batch[i].rows;
    }
    char errstr[RT_ERRSTR_SIZE] = "";
    int rc = rt_pg_begin(pg);
    if (rc == RT_OK) rc = rt_history_store_batch(pg, runs, rows, n, inserted, errstr);
    if (rc == RT_OK) rc = rt_pg_commit(pg);
    if (rc != RT_OK) {
        rt_log_error("cannot store the seeded runs", "error",
                     errstr[0] ? errstr : rt_pg_errstr(pg));
        if (rt_pg_rollback(pg) != RT_OK) rt_log_warn("rollback failed", "error", rt_pg_errstr(pg));
        return rc;
    }
    for (size_t i = 0; i < n; i++) *added += inserted[i];
    return RT_OK;
}

static void print_planted(const rt_hsim *sim)
{
    size_t n = 0;
    const rt_hsim_planted *p = rt_hsim_planted_list(sim, &n);
    for (size_t i = 0; i < n; i++) {
        char since[32] = "", until[32] = "";
        time_t t;
        struct tm tm;
        if (p[i].since) {
            t = (time_t)p[i].since;
            strftime(since, sizeof since, "%Y-%m-%dT%H:%MZ", gmtime_r(&t, &tm));
        }
        if (p[i].until) {
            t = (time_t)p[i].until;
            strftime(until, sizeof until, "%Y-%m-%dT%H:%MZ", gmtime_r(&t, &tm));
        }
        printf("  %-13s %5.1f%%  %s", p[i].kind, 100.0 * p[i].rate, p[i].test);
        if (p[i].push[0])
            printf("  (from %s push %s, %.12s, %s)", p[i].project, p[i].push, p[i].revision, since);
        else if (since[0])
            printf("  (since %s)", since);
        if (until[0]) printf("  (until %s)", until);
        printf("\n");
    }
}

/* Long because it is one case per option with its range check, then a linear sequence (the
 * simulation, the batches of runs stored, the rollup, ANALYZE, the summary) that shares cleanup
 * through goto out. */
int rt_cli_seed_history(int argc, char **argv, rt_config *cfg)
{
    static const struct option options[] = {
        {"repository", required_argument, NULL, 'r'},
        {"seed", required_argument, NULL, 's'},
        {"days", required_argument, NULL, 'd'},
        {"tests", required_argument, NULL, 't'},
        {"until", required_argument, NULL, 'u'},
        {"noise", required_argument, NULL, 'N'},
        {"hostile", no_argument, NULL, 'H'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    rt_hsim_options o = {.seed = 1, .until = (long long)time(NULL), .days = 30, .tests = 300};
    const char *repository = cfg->history_repository;
    long v;
    int c;
    while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        switch (c) {
        case 'r': repository = optarg; break;
        case 's':
            if (rt__cli_parse_long(optarg, 0, 2147483647L, &v)) {
                rt_log_error("--seed wants a number from 0 to 2147483647", "value", optarg);
                return 2;
            }
            o.seed = (uint64_t)v;
            break;
        case 'd':
            if (rt__cli_parse_long(optarg, 1, RT_HSIM_MAX_DAYS, &v)) {
                rt_log_error("--days wants a number from 1 to 90", "value", optarg);
                return 2;
            }
            o.days = (int)v;
            break;
        case 't':
            if (rt__cli_parse_long(optarg, RT_HSIM_MIN_TESTS, RT_HSIM_MAX_TESTS, &v)) {
                rt_log_error("--tests wants a number from 40 to 5000", "value", optarg);
                return 2;
            }
            o.tests = (int)v;
            break;
        case 'u': {
            time_t t;
            if (rt_perf_parse_time(optarg, &t) != RT_OK) {
                rt_log_error("--until is not an ISO-8601 UTC time (2024-05-10T00:00:00Z)", "value",
                             optarg);
                return 2;
            }
            o.until = (long long)t;
            break;
        }
        case 'N': {
            char *end = NULL;
            o.noise = strtod(optarg, &end);
            if (end == optarg || *end || !(o.noise > 0 && o.noise <= 0.05)) {
                rt_log_error("--noise wants a failure rate above 0, at most 0.05", "value", optarg);
                return 2;
            }
            break;
        }
        case 'H': o.hostile = true; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc || !repository || !repository[0]) {
        usage(stderr);
        return 2;
    }
    char errstr[RT_ERRSTR_SIZE] = "";
    rt_hsim *sim = NULL;
    if (rt_hsim_new(&o, &sim, errstr) != RT_OK) {
        rt_log_error("cannot seed the history", "error", errstr);
        return 2;
    }
    int status = 1;
    rt_pg *pg = NULL;
    rt_hsim_run *batch = calloc(BATCH, sizeof *batch);
    size_t n = 0, total = 0, added = 0, main_runs = 0;
    if (!batch) goto out;
    if (rt__cli_connect(cfg, "cli", &pg) != 0) goto out;
    for (;;) {
        int rc = rt_hsim_next(sim, &batch[n]);
        if (rc == RT_ENOTFOUND) break;
        if (rc != RT_OK) {
            rt_log_error("cannot seed the history", "error", rt_strerror(rc));
            goto out;
        }
        total++;
        main_runs += batch[n].main;
        if (++n == BATCH) {
            if (store(pg, batch, n, repository, &added) != RT_OK) goto out;
            n = 0;
        }
    }
    if (n && store(pg, batch, n, repository, &added) != RT_OK) goto out;
    /* the runs into the per-day rollup that retrig flakes and retrig report read for whole
     * days (migrations/0020), as retrig-history does behind its batches */
    if (rt_history_rollup(pg, 5000, NULL) != RT_OK) {
        rt_log_error("the runs are stored but not in the rollup", "error", rt_pg_errstr(pg));
        goto out;
    }
    /* the pages ask the planner about these tables next: give it fresh statistics */
    if (rt_pg_exec(pg,
                   "ANALYZE history_runs, history_groups, history_tests, history_rollup_groups,"
                   " history_rollup_tests",
                   0, NULL, NULL) != RT_OK)
        rt_log_warn("cannot analyze the history tables", "error", rt_pg_errstr(pg));
    printf("seed-history: %zu runs (%zu on main branches, %zu new) over %d days into %s; "
           "planted:\n",
           total, main_runs, added, o.days, repository);
    print_planted(sim);
    status = 0;
out:
    for (size_t i = 0; batch && i < BATCH; i++) rt_hsim_run_free(&batch[i]);
    free(batch);
    rt_hsim_free(sim);
    rt_pg_free(pg);
    return status;
}
