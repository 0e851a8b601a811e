/* SPDX-License-Identifier: MPL-2.0 */
/* perf_report.c - `retrig perf-report [--day YYYY-MM-DD] [--format table|json]`: what
 * retrig-perf's backfills cost and gave on one UTC day (default today), per platform
 * family: the daily limit, the budget used (budget_ledger, "perf:<family>"), backfills
 * asked, jobs scheduled, jobs executed (spawned jobs that completed, from the follow-up),
 * the follow-up states, and every backfill that needs manual work with its reason. An
 * alert belongs to the day whose budget paid for it, else to the UTC day of its intent.
 * Read-only: the sheriff role suffices. */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "common/core/perf_pick.h"
#include "common/io/pg.h"
#include "common/policy.h"
#include "common/store/perf.h"

#define MAX_ROWS 64

typedef struct family_row {
    char name[64];
    int limit; /* -1: no configured family of that name */
    long long used, backfills, scheduled, executed, done, pending, failed, already, unsent;
} family_row;

typedef struct report {
    family_row rows[MAX_ROWS];
    size_t nrows;
    rt_perf_day day; /* the store's answer: its failures are printed as they are */
} report;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: retrig perf-report [--day YYYY-MM-DD] [--format table|json]\n"
            "What retrig-perf's backfills cost and gave on one UTC day (default today), per\n"
            "platform family: daily limit, budget used (ledger), backfills, jobs scheduled, jobs\n"
            "executed (spawned jobs that completed), follow-up states (done, pending, failed),\n"
            "and the backfills that need manual work with their reason (action-failed,\n"
            "jobs-failed, jobs-exception, deadline-exceeded, no-data).\n"
            "Exit: 0 printed, 1 database error, 2 usage.\n");
}

static bool valid_day(const char *text)
{
    int y, m, d;
    char rest;
    if (strlen(text) != 10 || sscanf(text, "%4d-%2d-%2d%c", &y, &m, &d, &rest) != 3 ||
        text[4] != '-' || text[7] != '-')
        return false;
    struct tm tm = {.tm_year = y - 1900, .tm_mon = m - 1, .tm_mday = d, .tm_hour = 12};
    time_t t = timegm(&tm);
    struct tm back;
    gmtime_r(&t, &back);
    return y >= 1970 && back.tm_year == y - 1900 && back.tm_mon == m - 1 && back.tm_mday == d;
}

static family_row *row_of(report *r, const char *name)
{
    for (size_t i = 0; i < r->nrows; i++)
        if (!strcmp(r->rows[i].name, name)) return &r->rows[i];
    if (r->nrows == MAX_ROWS) return NULL;
    family_row *row = &r->rows[r->nrows++];
    memset(row, 0, sizeof *row);
    snprintf(row->name, sizeof row->name, "%s", name);
    row->limit = -1;
    return row;
}

static int load(rt_pg *pg, const rt_config *cfg, const char *day, report *r)
{
    char errstr[RT_ERRSTR_SIZE] = "";
    rt_perf_options opts;
    if (rt_perf_options_from_config(&opts, cfg, errstr) != RT_OK) {
        rt_log_error("configuration error", "error", errstr);
        return 2;
    }
    for (size_t f = 0; f <= opts.nfamilies; f++) {
        family_row *row = row_of(r, rt_perf_family_name(&opts, f));
        if (row) row->limit = opts.limit[f];
    }
    if (rt_perf_store_day(pg, day, &r->day) != RT_OK) {
        rt__cli_db_error(pg, "cannot read the backfills");
        return 1;
    }
    for (size_t i = 0; i < r->day.nledger; i++) {
        family_row *row = row_of(r, r->day.ledger[i].family);
        if (row) row->used = r->day.ledger[i].used;
    }
    for (size_t i = 0; i < r->day.nalerts; i++) {
        const rt_perf_family_day *f = &r->day.alerts[i];
        family_row *row = row_of(r, f->family);
        if (!row) continue;
        row->backfills = f->backfills;
        row->scheduled = f->scheduled;
        row->executed = f->executed;
        row->done = f->done;
        row->pending = f->pending;
        row->failed = f->failed;
        row->already = f->already;
        row->unsent = f->unsent;
    }
    return 0;
}

static json_t *row_json(const family_row *row)
{
    return json_pack("{s:s, s:o, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "family", row->name,
                     "limit", row->limit >= 0 ? json_integer(row->limit) : json_null(),
                     "budget_used", (json_int_t)row->used, "backfills", (json_int_t)row->backfills,
                     "jobs_scheduled", (json_int_t)row->scheduled, "jobs_executed",
                     (json_int_t)row->executed, "done", (json_int_t)row->done, "pending",
                     (json_int_t)row->pending, "failed", (json_int_t)row->failed,
                     "already_backfilled", (json_int_t)row->already, "not_sent",
                     (json_int_t)row->unsent);
}

static void add_total(family_row *total, const family_row *row)
{
    total->used += row->used;
    total->backfills += row->backfills;
    total->scheduled += row->scheduled;
    total->executed += row->executed;
    total->done += row->done;
    total->pending += row->pending;
    total->failed += row->failed;
    total->already += row->already;
    total->unsent += row->unsent;
}

static int print_json(const char *day, const report *r)
{
    family_row total = {.name = "total", .limit = 0};
    json_t *families = json_array(), *list = json_array();
    for (size_t i = 0; i < r->nrows; i++) {
        json_array_append_new(families, row_json(&r->rows[i]));
        add_total(&total, &r->rows[i]);
        if (r->rows[i].limit > 0) total.limit += r->rows[i].limit;
    }
    for (size_t i = 0; i < r->day.nfailures; i++) {
        const rt_perf_failure *f = &r->day.failures[i];
        json_array_append_new(
            list,
            json_pack("{s:I, s:I, s:s, s:s, s:s, s:s, s:s, s:i, s:i, s:s}", "alert_id",
                      (json_int_t)f->alert_id, "summary_id", (json_int_t)f->summary_id, "family",
                      f->family, "platform", f->platform, "reason", f->reason, "detail", f->detail,
                      "action_task_id", f->action_task_id, "jobs", (int)f->jobs, "jobs_completed",
                      (int)f->completed, "settled_at", f->settled_at));
    }
    json_t *totals = row_json(&total);
    json_object_del(totals, "family");
    json_t *doc = json_pack("{s:s, s:o, s:o, s:o}", "day", day, "families", families, "totals",
                            totals, "failures", list);
    int rc = doc && json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_ENSURE_ASCII) == 0 ? 0 : 1;
    fputc('\n', stdout);
    json_decref(doc);
    return rc;
}

static void print_row(const family_row *row)
{
    char limit[16] = "-";
    if (row->limit >= 0) snprintf(limit, sizeof limit, "%d", row->limit);
    printf("%-12s %7s %7lld %9lld %10lld %9lld %5lld %8lld %7lld %8lld %9lld\n", row->name, limit,
           row->used, row->backfills, row->scheduled, row->executed, row->done, row->pending,
           row->failed, row->already, row->unsent);
}

static int print_table(const char *day, const report *r)
{
    family_row total = {.name = "total", .limit = 0};
    printf("retrig-perf backfills on %s (UTC)\n\n", day);
    printf("%-12s %7s %7s %9s %10s %9s %5s %8s %7s %8s %9s\n", "family", "limit", "used",
           "backfills", "scheduled", "executed", "done", "pending", "failed", "already",
           "not-sent");
    for (size_t i = 0; i < r->nrows; i++) {
        print_row(&r->rows[i]);
        add_total(&total, &r->rows[i]);
        if (r->rows[i].limit > 0) total.limit += r->rows[i].limit;
    }
    print_row(&total);
    printf("\nneeding manual work: %zu\n", r->day.nfailures);
    if (r->day.nfailures > 0)
        printf("%-10s %-10s %-18s %-22s %s\n", "alert", "family", "reason", "action task",
               "detail");
    for (size_t i = 0; i < r->day.nfailures; i++) {
        const rt_perf_failure *f = &r->day.failures[i];
        char alert[32];
        snprintf(alert, sizeof alert, "%lld", f->alert_id);
        printf("%-10s %-10s %-18s %-22s %s\n", rt_cli_text(alert), rt_cli_text(f->family),
               rt_cli_text(f->reason), rt_cli_text(f->action_task_id), rt_cli_text(f->detail));
    }
    return fflush(stdout) == 0 ? 0 : 1;
}

int rt_cli_perf_report(int argc, char **argv, rt_config *cfg)
{
    static const struct option options[] = {
        {"day", required_argument, NULL, 'd'},
        {"format", required_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    char day[11];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(day, sizeof day, "%Y-%m-%d", &tm);
    bool json = false;
    int c;
    while ((c = getopt_long(argc, argv, "d:f:h", options, NULL)) != -1) {
        switch (c) {
        case 'd':
            if (!valid_day(optarg)) {
                rt_log_error("--day wants a date YYYY-MM-DD", "value", optarg);
                return 2;
            }
            memcpy(day, optarg, 11);
            break;
        case 'f':
            if (rt__cli_format(optarg, &json)) return 2;
            break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc) {
        usage(stderr);
        return 2;
    }
    rt_pg *pg = NULL;
    if (rt__cli_connect(cfg, "cli", &pg) != 0) return 1;
    report *r = calloc(1, sizeof *r);
    int status = r ? load(pg, cfg, day, r) : 1;
    if (status == 0) status = json ? print_json(day, r) : print_table(day, r);
    if (r) rt_perf_day_free(&r->day);
    free(r);
    rt_pg_free(pg);
    return status;
}
