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

#define MAX_ROWS 64

#define ALERT_DAY "coalesce(budget_day, (intent_at AT TIME ZONE 'UTC')::date) = $1::date"

static const char SQL_FAMILIES[] =
    "SELECT family, count(*) FILTER (WHERE outcome IN ('triggered', 'found-existing', 'dry-run')"
    " OR outcome IS NULL) AS backfills, coalesce(sum(jobs_scheduled), 0) AS jobs_scheduled,"
    " coalesce(sum(followup_completed), 0) AS jobs_executed,"
    " count(*) FILTER (WHERE followup_state = 'done') AS done,"
    " count(*) FILTER (WHERE followup_state = 'pending' OR (followup_state IS NULL AND outcome IN"
    " ('triggered', 'found-existing') AND NOT dry_run)) AS pending,"
    " count(*) FILTER (WHERE followup_state = 'failed') AS failed,"
    " count(*) FILTER (WHERE outcome = 'already-backfilled') AS already_backfilled,"
    " count(*) FILTER (WHERE outcome IN ('no-job', 'no-backfill-action', 'failed')) AS not_sent"
    " FROM perf_alerts WHERE " ALERT_DAY " GROUP BY family";
/* FA_BACKFILLS to FA_NOT_SENT in the order of family_row's counts from backfills on. */
enum {
    FA_FAMILY,
    FA_BACKFILLS,
    FA_SCHEDULED,
    FA_EXECUTED,
    FA_DONE,
    FA_PENDING,
    FA_FAILED,
    FA_ALREADY,
    FA_NOT_SENT,
    FA_N
};
static const char *const FAMILIES_COLS[FA_N] = {
    "family",  "backfills", "jobs_scheduled",     "jobs_executed", "done",
    "pending", "failed",    "already_backfilled", "not_sent"};
static const char SQL_LEDGER[] =
    "SELECT substr(platform, 6) AS family, sum(amount) AS used FROM budget_ledger"
    " WHERE day = $1::date AND platform LIKE 'perf:%' GROUP BY 1";
enum { L_FAMILY, L_USED, L_N };
static const char *const LEDGER_COLS[L_N] = {"family", "used"};
static const char SQL_FAILURES[] =
    "SELECT alert_id, summary_id, family, platform, followup_reason,"
    " coalesce(followup_detail, '') AS followup_detail,"
    " coalesce(action_task_id, '') AS action_task_id, followup_jobs, followup_completed,"
    " coalesce(to_char(followup_settled_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),"
    " '') AS followup_settled_at"
    " FROM perf_alerts WHERE followup_state = 'failed' AND " ALERT_DAY " ORDER BY alert_id";
enum {
    F_ALERT,
    F_SUMMARY,
    F_FAMILY,
    F_PLATFORM,
    F_REASON,
    F_DETAIL,
    F_ACTION_TASK,
    F_JOBS,
    F_COMPLETED,
    F_SETTLED,
    F_N
};
static const char *const FAILURES_COLS[F_N] = {
    "alert_id",           "summary_id",         "family",         "platform",
    "followup_reason",    "followup_detail",    "action_task_id", "followup_jobs",
    "followup_completed", "followup_settled_at"};

typedef struct family_row {
    char name[64];
    int limit; /* -1: no configured family of that name */
    long long used, backfills, scheduled, executed, done, pending, failed, already, unsent;
} family_row;

typedef struct report {
    family_row rows[MAX_ROWS];
    size_t nrows;
    int failure_cols[F_N]; /* the columns of the result of SQL_FAILURES */
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

static int load(rt_pg *pg, const rt_config *cfg, const char *day, report *r, PGresult **failures)
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
    const char *params[] = {day};
    PGresult *res = NULL;
    int lc[L_N], fc[FA_N];
    if (rt_pg_exec(pg, SQL_LEDGER, 1, params, &res) != RT_OK) goto db;
    if (rt_pg_columns(res, LEDGER_COLS, L_N, lc, errstr) != RT_OK) goto columns;
    for (int i = 0; i < PQntuples(res); i++) {
        family_row *row = row_of(r, PQgetvalue(res, i, lc[L_FAMILY]));
        if (row) row->used = atoll(PQgetvalue(res, i, lc[L_USED]));
    }
    PQclear(res);
    res = NULL;
    if (rt_pg_exec(pg, SQL_FAMILIES, 1, params, &res) != RT_OK) goto db;
    if (rt_pg_columns(res, FAMILIES_COLS, FA_N, fc, errstr) != RT_OK) goto columns;
    for (int i = 0; i < PQntuples(res); i++) {
        family_row *row = row_of(r, PQgetvalue(res, i, fc[FA_FAMILY]));
        if (!row) continue;
        long long *cols[] = {&row->backfills, &row->scheduled, &row->executed, &row->done,
                             &row->pending,   &row->failed,    &row->already,  &row->unsent};
        for (int c = FA_BACKFILLS; c < FA_N; c++)
            *cols[c - FA_BACKFILLS] = atoll(PQgetvalue(res, i, fc[c]));
    }
    PQclear(res);
    res = NULL;
    if (rt_pg_exec(pg, SQL_FAILURES, 1, params, failures) != RT_OK) goto db;
    if (rt_pg_columns(*failures, FAILURES_COLS, F_N, r->failure_cols, errstr) != RT_OK)
        goto columns;
    return 0;
db:
    PQclear(res);
    rt__cli_db_error(pg, "cannot read the backfills");
    return 1;
columns:
    PQclear(res);
    rt_log_error("cannot read the backfills", "error", errstr);
    return 1;
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

static int print_json(const char *day, const report *r, PGresult *failures)
{
    family_row total = {.name = "total", .limit = 0};
    json_t *families = json_array(), *list = json_array();
    for (size_t i = 0; i < r->nrows; i++) {
        json_array_append_new(families, row_json(&r->rows[i]));
        add_total(&total, &r->rows[i]);
        if (r->rows[i].limit > 0) total.limit += r->rows[i].limit;
    }
    const int *c = r->failure_cols;
    for (int i = 0; i < PQntuples(failures); i++)
        json_array_append_new(
            list, json_pack("{s:I, s:I, s:s, s:s, s:s, s:s, s:s, s:i, s:i, s:s}", "alert_id",
                            (json_int_t)atoll(PQgetvalue(failures, i, c[F_ALERT])), "summary_id",
                            (json_int_t)atoll(PQgetvalue(failures, i, c[F_SUMMARY])), "family",
                            PQgetvalue(failures, i, c[F_FAMILY]), "platform",
                            PQgetvalue(failures, i, c[F_PLATFORM]), "reason",
                            PQgetvalue(failures, i, c[F_REASON]), "detail",
                            PQgetvalue(failures, i, c[F_DETAIL]), "action_task_id",
                            PQgetvalue(failures, i, c[F_ACTION_TASK]), "jobs",
                            atoi(PQgetvalue(failures, i, c[F_JOBS])), "jobs_completed",
                            atoi(PQgetvalue(failures, i, c[F_COMPLETED])), "settled_at",
                            PQgetvalue(failures, i, c[F_SETTLED])));
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

static int print_table(const char *day, const report *r, PGresult *failures)
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
    printf("\nneeding manual work: %d\n", PQntuples(failures));
    if (PQntuples(failures) > 0)
        printf("%-10s %-10s %-18s %-22s %s\n", "alert", "family", "reason", "action task",
               "detail");
    const int *c = r->failure_cols;
    for (int i = 0; i < PQntuples(failures); i++)
        printf("%-10s %-10s %-18s %-22s %s\n", rt_cli_text(PQgetvalue(failures, i, c[F_ALERT])),
               rt_cli_text(PQgetvalue(failures, i, c[F_FAMILY])),
               rt_cli_text(PQgetvalue(failures, i, c[F_REASON])),
               rt_cli_text(PQgetvalue(failures, i, c[F_ACTION_TASK])),
               rt_cli_text(PQgetvalue(failures, i, c[F_DETAIL])));
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
    PGresult *failures = NULL;
    int status = r ? load(pg, cfg, day, r, &failures) : 1;
    if (status == 0) status = json ? print_json(day, r, failures) : print_table(day, r, failures);
    PQclear(failures);
    free(r);
    rt_pg_free(pg);
    return status;
}
