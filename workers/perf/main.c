/* SPDX-License-Identifier: MPL-2.0 */
/* main.c - retrig-perf: backfills of Perfherder alerts within daily per-family budgets.
 *
 * Every perf_interval_s (or once with --once): read every page of alert summaries of the
 * configured frameworks (a Perfherder error or an unreadable page ends the run before
 * anything is done), pick alerts (common/core/perf_pick.h) against what Postgres says was
 * handled and what the budgets say is left, then for each pick, under a per-summary
 * advisory lock (released by Postgres if this process dies; a second runner skips the
 * summary): check again what Postgres holds, find the alert's job (Perfherder's data
 * point of its series at its push, then the job's task), look in the push's task group
 * for a backfill of that task already there ("already-backfilled"), render the push's
 * `backfill` action, claim the family's budget in Redis (atomic, deduped by alert), and
 * write the intent, the ledger entry and the summary in one transaction, which first
 * checks the family's ledger total under the budget backstop's lock (common/store/ledger.h: a
 * Redis counter re-created below the ledger cannot push it past the limit; a refused claim
 * goes back to Redis and the alert is left for a later run); only then call the hook
 * (Hawk). Alerts whose call was interrupted are resumed first: the action task is looked up
 * in the task group before any new call. Dry-run records the payload and sends nothing.
 * Each run starts with the follow-up of earlier backfills (followup.h): their action task
 * and spawned jobs, failures recorded with a reason. What Postgres holds of summaries and
 * alerts is read and written through common/store/perf.h. This file reads Perfherder, picks and
 * runs the schedule; backfill.c backfills each pick and resumes interrupted calls (perf.h).
 * Single-threaded. */
#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/core/actions.h"
#include "common/core/hawk.h"
#include "common/core/ids.h"
#include "common/core/perf_pick.h"
#include "common/core/taskdef.h"
#include "common/core/trust.h"
#include "common/io/budget.h"
#include "common/io/http.h"
#include "common/io/metrics.h"
#include "common/io/pg.h"
#include "common/io/redis.h"
#include "common/io/stop.h"
#include "common/io/upstream.h"
#include "common/options.h"
#include "common/policy.h"
#include "common/store/ledger.h"
#include "common/store/perf.h"
#include "common/worker.h"
#include "workers/perf/followup.h"
#include "workers/perf/perf.h"

#define MAX_PAGES 100

static bool g_once;

static void utc_day(time_t now, char day[11])
{
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(day, 11, "%Y-%m-%d", &tm);
}

/* "perf:<family>": the budget's name in Redis and in the ledger. */
void perf_budget_name(const perf *w, size_t family, char *out, size_t size)
{
    snprintf(out, size, "perf:%s", rt_perf_family_name(&w->opts, family));
}

/* ---- reading Perfherder ------------------------------------------------------------- */

/* Every page of one framework's summaries, newest first, until older than the lookback. */
static int fetch_framework(perf *w, const char *framework, time_t oldest, rt_perf_summaries *out)
{
    char *url = NULL;
    if (asprintf(&url, "%s/api/performance/alertsummary/?framework=%s", w->cfg->treeherder_url,
                 framework) < 0)
        return RT_ENOMEM;
    int rc = RT_OK;
    for (int page = 0; url && page < MAX_PAGES; page++) {
        rt_http_response resp;
        rc = rt_http_get(w->http, url, &resp);
        if (rc != RT_OK) {
            rt_log_error("cannot read alert summaries; nothing is done this run", "framework",
                         framework, "error", rt_http_errstr(w->http));
            rt_http_response_free(&resp);
            break;
        }
        char errstr[RT_ERRSTR_SIZE] = "", *next = NULL;
        size_t before = out->count, problems_before = out->nproblems;
        rc = rt_perf_summaries_parse(resp.body, resp.len, out, &next, errstr);
        /* A summary or an alert Perfherder sent malformed is left out, the rest is picked. */
        for (size_t i = problems_before; rc == RT_OK && i < out->nproblems; i++) {
            const rt_perf_problem *p = &out->problems[i];
            char sid[32], aid[32];
            snprintf(sid, sizeof sid, "%lld", p->summary_id);
            snprintf(aid, sizeof aid, "%lld", p->alert_id);
            rt_log_warn(
                p->alert_id ? "malformed alert left out" : "malformed alert summary left out",
                "summary_id", sid, "alert_id", p->alert_id ? aid : NULL, "reason", p->reason);
            rt_metric_inc(w->left_out, p->alert_id ? "alert" : "summary");
        }
        rt_http_response_free(&resp);
        if (rc != RT_OK) {
            rt_log_error("unusable alert summary page; nothing is done this run", "framework",
                         framework, "error", errstr);
            break;
        }
        bool older = false;
        for (size_t i = before; i < out->count; i++)
            if (out->items[i].created < oldest) older = true;
        free(url);
        url = NULL;
        /* Pages come from Perfherder itself: a next URL elsewhere is not followed. */
        if (next && strncmp(next, w->cfg->treeherder_url, strlen(w->cfg->treeherder_url)) != 0) {
            rt_log_error("alert summary page points elsewhere; nothing is done this run", "next",
                         next);
            free(next);
            rc = RT_EPROTO;
            break;
        }
        if (older)
            free(next);
        else
            url = next;
    }
    free(url);
    return rc;
}

/* What earlier runs did for the summaries read (common/store/perf.h). */
static int load_history(perf *w, const rt_perf_summaries *s, rt_perf_store_history *h)
{
    long long *ids = calloc(s->count + 1, sizeof *ids);
    if (!ids) return RT_ENOMEM;
    for (size_t i = 0; i < s->count; i++) ids[i] = s->items[i].id;
    int rc = rt_perf_store_history_load(w->pg, ids, s->count, h);
    free(ids);
    return rc;
}

/* An alert whose job another backfill covers: its row, outcome covered, no budget. */
static int record_covered(perf *w, const rt_perf_cover *c)
{
    char alert[32], summary[32];
    snprintf(alert, sizeof alert, "%lld", c->alert->id);
    snprintf(summary, sizeof summary, "%lld", c->summary->id);
    rt_perf_alert_record r = {
        .alert_id = c->alert->id,
        .summary_id = c->summary->id,
        .signature_id = c->alert->signature_id,
        .platform = c->alert->platform,
        .family = rt_perf_family_name(&w->opts, rt_perf_family_of(&w->opts, c->alert->platform)),
        .is_regression = c->alert->is_regression,
        .amount_pct = c->alert->amount_pct,
        .dry_run = w->cfg->dry_run,
        .outcome = "covered",
        .error = c->reason,
        .job_key = c->alert->job_key,
        .covered_by = c->by_alert_id};
    int rc = rt_pg_begin(w->pg);
    if (rc == RT_OK) rc = rt_perf_store_upsert_summary(w->pg, c->summary, false);
    if (rc == RT_OK) rc = rt_perf_store_record_covered(w->pg, &r);
    if (rc == RT_OK) rc = rt_pg_commit(w->pg);
    if (rc != RT_OK) {
        rt_log_warn("cannot record a covered alert", "alert_id", alert, "error",
                    rt_pg_errstr(w->pg));
        if (rt_pg_rollback(w->pg) != RT_OK)
            rt_log_warn("rollback failed", "error", rt_pg_errstr(w->pg));
        return rc;
    }
    rt_log_info("alert covered by another backfill of its job", "alert_id", alert, "summary_id",
                summary, "reason", c->reason);
    return RT_OK;
}

/* What each family spent today: the larger of the Redis counter and the ledger. */
static int load_budgets(perf *w)
{
    for (size_t f = 0; f <= w->opts.nfamilies; f++) {
        char name[64];
        perf_budget_name(w, f, name, sizeof name);
        int counter = 0,
            rc = rt_budget_spent(w->redis, w->cfg->redis_key_prefix, name, w->day, &counter);
        if (rc != RT_OK) return rc;
        int ledger = 0;
        if ((rc = rt_ledger_spent(w->pg, name, w->day, &ledger)) != RT_OK) return rc;
        w->opts.used[f] = counter > ledger ? counter : ledger;
    }
    return RT_OK;
}

/* ---- a run -------------------------------------------------------------------------- */

static int run_once(perf *w)
{
    time_t now = time(NULL);
    utc_day(now, w->day);
    w->failures = 0;
    rt_perf_summaries summaries = {0};
    rt_perf_store_history h = {0};
    rt_perf_result result = {0};
    /* First the backfills of earlier runs: what became of their action tasks and jobs. */
    int settled = 0, rc = rt_perf_followup(w->cfg, w->pg, w->http, &settled);
    if (rc != RT_OK) {
        rt_log_error("postgres error in the follow-up; nothing is done this run", "error",
                     rt_pg_errstr(w->pg));
        goto out;
    }
    for (size_t i = 0; i < w->cfg->perf_frameworks.count && rc == RT_OK; i++)
        rc = fetch_framework(w, w->cfg->perf_frameworks.items[i],
                             now - (time_t)w->cfg->perf_lookback_hours * 3600, &summaries);
    if (rc != RT_OK) goto out;
    /* Older than the lookback: not ours to look at any more. */
    size_t kept = 0;
    for (size_t i = 0; i < summaries.count; i++) {
        if (summaries.items[i].created >= now - (time_t)w->cfg->perf_lookback_hours * 3600)
            summaries.items[kept++] = summaries.items[i];
        else
            free(summaries.items[i].alerts);
    }
    summaries.count = kept;
    if ((rc = perf_resume_open(w)) != RT_OK || (rc = load_history(w, &summaries, &h)) != RT_OK) {
        rt_log_error("postgres error; nothing is done this run", "error", rt_pg_errstr(w->pg));
        goto out;
    }
    if ((rc = load_budgets(w)) != RT_OK) {
        rt_log_error("cannot read the budgets; nothing is done this run", "error",
                     rt_redis_errstr(w->redis));
        goto out;
    }
    rt_perf_history hist = {h.alerts, h.nalerts, h.taken, h.ntaken, h.jobs, h.njobs};
    if ((rc = rt_perf_pick_alerts(&summaries, &w->opts, &hist, now, &result)) != RT_OK) goto out;
    char counts[64];
    snprintf(counts, sizeof counts, "%zu summaries, %zu picks", summaries.count, result.npicks);
    rt_log_info("alerts picked", "counts", counts, "day", w->day);
    for (size_t i = 0; i < result.nclosed; i++) {
        if (rt_perf_store_upsert_summary(w->pg, result.closed[i], true) != RT_OK) {
            w->failures++;
            rt_log_warn("cannot mark a summary handled", "error", rt_pg_errstr(w->pg));
        }
    }
    for (size_t i = 0; i < result.npicks && !rt_stop_requested(); i++) {
        /* Between two alerts: readiness only (the picks were made with the running options). */
        rt_worker_health(&w->conns);
        perf_backfill(w, &result.picks[i]);
    }
    /* Covered alerts are recorded after the picks, so a covering alert's row exists. */
    for (size_t i = 0; i < result.ncovered && !rt_stop_requested(); i++)
        if (record_covered(w, &result.covered[i]) != RT_OK) w->failures++;
out:
    rt_perf_result_free(&result);
    rt_perf_summaries_free(&summaries);
    rt_perf_store_history_free(&h);
    if (rc == RT_OK && w->failures) {
        char n[16];
        snprintf(n, sizeof n, "%d", w->failures);
        rt_log_warn("run finished with alerts left for the next run", "failures", n);
    }
    return rc != RT_OK || w->failures ? 1 : 0;
}

static int setup(perf *w, rt_config *cfg)
{
    char errstr[RT_ERRSTR_SIZE] = "";
    int rc;
    w->cfg = cfg;
    w->left_out = rt_metrics_counter("retrig_perf_left_out_total",
                                     "Malformed alert summaries and alerts Perfherder sent, left "
                                     "out of the picking (what: summary, alert)",
                                     "what");
    if ((rc = rt_perf_options_from_config(&w->opts, cfg, errstr)) != RT_OK) {
        rt_log_error("configuration error", "error", errstr);
        return rc;
    }
    char host[64] = "";
    gethostname(host, sizeof host - 1);
    snprintf(w->owner, sizeof w->owner, "%s:%d", host, (int)getpid());
    if (rt_worker_needs_taskcluster(cfg)) return RT_ECONFIG;
    rt_http_options hopts;
    rt_http_options_from_config(&hopts, cfg);
    if ((rc = rt_http_new(&w->http, &hopts, errstr)) != RT_OK) return rc;
    hopts.max_attempts = 1;
    if ((rc = rt_http_new(&w->http_post, &hopts, errstr)) != RT_OK) return rc;
    rt_worker_setup connect = {"perf", RT_WORKER_NEEDS_POSTGRES, 0, 1, NULL,
                               NULL,   &rt_worker_redis};
    if ((rc = rt_worker_connect(cfg, &connect, &w->conns)) != RT_OK) return rc;
    w->redis = w->conns.redis;
    w->pg = w->conns.pg;
    return RT_OK;
}

/* Between runs: report readiness (no broker here) and apply a SIGHUP. No perf_* key is
 * reloadable, but the options are derived again from the reloaded configuration so that
 * nothing computed from cfg outlives a reload; a failure keeps the running options. */
static void safe_point(perf *w)
{
    rt_worker_health(&w->conns);
    if (!rt_worker_reload(w->cfg)) return;
    rt_perf_options opts;
    char errstr[RT_ERRSTR_SIZE] = "";
    if (rt_perf_options_from_config(&opts, w->cfg, errstr) != RT_OK) {
        rt_log_error("reloaded configuration: keeping the running perf options", "error", errstr);
        return;
    }
    w->opts = opts; /* used[] is read again from the budgets at the start of each run */
}

static int run(rt_config *cfg)
{
    perf w = {0};
    int rc = setup(&w, cfg);
    int status = rt_worker_exit_status(rc);
    if (rc == RT_OK) {
        rt_log_info(g_once ? "running once" : "running", "dry_run",
                    cfg->dry_run ? "true" : "false");
        for (;;) {
            safe_point(&w);
            status = run_once(&w);
            if (g_once || rt_stop_requested()) break;
            /* Until the next run: a safe point each second, and SIGTERM ends the wait. */
            for (int s = 0; s < cfg->perf_interval_s && rt_stop_sleep_ms(1000); s++) safe_point(&w);
            if (rt_stop_requested()) {
                status = 0;
                break;
            }
        }
        rt_log_info("stopping");
    }
    rt_worker_disconnect(&w.conns);
    rt_http_free(w.http);
    rt_http_free(w.http_post);
    return status;
}

static int check(rt_config *cfg)
{
    char errstr[RT_ERRSTR_SIZE] = "";
    rt_perf_options opts;
    if (rt_perf_options_from_config(&opts, cfg, errstr) != RT_OK) {
        rt_log_error("configuration error", "error", errstr);
        return 2;
    }
    int failures =
        rt_worker_check_services(cfg, "perf", RT_WORKER_NEEDS_POSTGRES, &rt_worker_redis);
    failures += rt_worker_needs_taskcluster(cfg);
    return rt_worker_check_result(failures);
}

int main(int argc, char **argv)
{
    static const rt_worker_def def = {
        "perf",
        "Every perf_interval_s, backfills Perfherder alerts (the push's backfill action, Hawk)\n"
        "in priority order within daily per-platform-family budgets, each alert at most once.",
        run,
        check,
    };
    static const rt_worker_flag flags[] = {
        {"once", "run once and exit (cron, Kubernetes CronJob); exit 1 if anything failed",
         &g_once},
    };
    return rt_worker_main_flags(&def, flags, 1, argc, argv);
}
