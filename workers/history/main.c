/* SPDX-License-Identifier: MPL-2.0 */
/* main.c - retrig-history: records the results of every resolved Taskcluster test task,
 * on every branch, for the test history (common/core/history.h, migrations/0006_history.sql).
 *
 * It consumes its own Pulse queue queue/<user>/<pulse_queue_name>-history, bound to the
 * task-completed and task-failed exchanges, so it never slows retrig-classify down. For
 * each run of an allowed project in the sample: the task definition (cached) says whether
 * it is a test (extra.treeherder.jobKind) and gives its platform and build type (its
 * variant: migrations/0040), the errorsummary artifacts give its group and failing test
 * results; a try push's branch is its author, the definition's metadata.owner
 * (rt_history_branch_key). Runs are written history_batch_size at a time, in one
 * transaction (a multi-row INSERT of the runs, a COPY of their groups and of their tests;
 * rt_history_store_batch), and their messages are acked after the commit; a batch is
 * written when full, when no message came for BATCH_IDLE_MS, or after BATCH_MAX_AGE_MS.
 * When a batch fails its runs are written one by one, so that a bad value dead-letters its
 * own message only. The run's unique key makes a redelivery a no-op. After the batches it
 * writes (at most every second) it adds the new runs to the per-day rollup the dashboard
 * reads, and every hour it runs retention (history_retention_days: whole day partitions;
 * migrations 0019 and 0020), both in transactions of their own. Invalid messages and task
 * definitions are dead-lettered with a reason; transient upstream failures go through
 * delay queues (<ns>.history-retry) and are dead-lettered after the last delay; a
 * Postgres failure requeues the message. Single-threaded; run replicas for throughput. */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/core/errorsummary.h"
#include "common/core/history.h"
#include "common/core/pulse.h"
#include "common/core/taskdef.h"
#include "common/core/utf8.h"
#include "common/io/amqp.h"
#include "common/io/deadline.h"
#include "common/io/hashkey.h"
#include "common/io/history_store.h"
#include "common/io/http.h"
#include "common/io/pg.h"
#include "common/io/run_fetch.h"
#include "common/io/upstream.h"
#include "common/options.h"
#include "common/worker.h"

#define MAX_DELAYS           16
#define BATCH_IDLE_MS        20      /* a batch is written when no message came this long */
#define BATCH_MAX_AGE_MS     1000    /* or when its first run waited this long */
#define ROLLUP_INTERVAL_MS   1000    /* new runs go into the per-day rollup this often */
#define ROLLUP_CHUNK         5000    /* runs added to the rollup in one transaction */
#define MAINTAIN_INTERVAL_MS 3600000 /* retention and partitions ahead, hourly */

typedef struct cached_task {
    char task_id[23];
    rt_taskdef def;
} cached_task;

/* A run waiting in the batch, with its message (settled once the batch is written). */
typedef struct held_run {
    rt_amqp *src;
    rt_amqp_message m;
    rt_history_run run; /* points into the strings below */
    char run_key[48], branch_key[300];
    char *project, *push, *revision, *platform, *build_type, *label, *run_at;
    rt_history_rows rows;
} held_run;

/* A run whose outcome is RT_SETTLE_HOLD waits in the batch; its message is settled when
 * the batch is written. */
typedef struct history {
    rt_config *cfg;
    rt_worker_conns conns;
    rt_worker_settler settler;
    rt_amqp *pulse; /* consumes the Pulse queue */
    rt_amqp *ours;  /* retries and dead letters (== pulse when the same URL) */
    rt_pg *pg;
    rt_http *http;
    char pulse_queue[300];
    char retry_queue[300];
    int delays[MAX_DELAYS];
    size_t ndelays;
    cached_task *cache;
    size_t cache_size;
    held_run *batch; /* history_batch_size entries */
    size_t nbatch;
    int64_t batch_since_ms; /* when the first held run came */
    rt_history_run *batch_runs;
    const rt_history_rows **batch_rows;
    bool *batch_inserted;
    int64_t rollup_at_ms;   /* when the rollup was last brought up to date */
    int64_t maintain_at_ms; /* when retention last ran (0: not yet) */
} history;

/* ---- the task definition cache (direct-mapped: definitions never change) ---- */

static cached_task *cache_slot(history *w, const char *task_id)
{
    size_t h = 5381;
    for (const char *p = task_id; *p; p++) h = h * 33 + (unsigned char)*p;
    return &w->cache[h % w->cache_size];
}

/* What rt_run_fetch needs of the worker. */
static rt_run_fetch run_fetch(const history *w)
{
    return (rt_run_fetch){.http = w->http,
                          .root_url = w->cfg->taskcluster_root_url,
                          .max_body_bytes = (size_t)w->cfg->http_max_body_bytes,
                          .time_budget_ms = w->cfg->message_time_budget_ms,
                          .max_es_bytes = (size_t)w->cfg->errorsummary_max_bytes};
}

/* The definition of task_id: from the cache, else fetched (and cached). *owned is set
 * when the caller must free it (no cache). */
static int fetch_task(history *w, const char *task_id, rt_taskdef **out, bool *owned, rt_outcome *h)
{
    *owned = false;
    if (w->cache_size) {
        cached_task *c = cache_slot(w, task_id);
        if (!strcmp(c->task_id, task_id)) {
            *out = &c->def;
            return RT_OK;
        }
    }
    rt_taskdef def;
    rt_run_fetch fetch = run_fetch(w);
    int rc = rt_run_fetch_task(&fetch, task_id, &def, h);
    if (rc != RT_OK) return rc;
    if (w->cache_size) {
        cached_task *c = cache_slot(w, task_id);
        rt_taskdef_free(&c->def);
        snprintf(c->task_id, sizeof c->task_id, "%s", task_id);
        c->def = def;
        *out = &c->def;
        return RT_OK;
    }
    rt_taskdef *copy = malloc(sizeof *copy);
    if (!copy) {
        rt_taskdef_free(&def);
        return RT_ENOMEM;
    }
    *copy = def;
    *out = copy;
    *owned = true;
    return RT_OK;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void held_run_free(held_run *p)
{
    rt_amqp_message_free(&p->m);
    rt_history_rows_free(&p->rows);
    free(p->project);
    free(p->push);
    free(p->revision);
    free(p->platform);
    free(p->build_type);
    free(p->label);
    free(p->run_at);
    memset(p, 0, sizeof *p);
}

static bool copy_or_null(char **out, const char *s)
{
    *out = s ? strdup(s) : NULL;
    return !s || *out;
}

/* Puts a run in the batch: its strings copied, its rows moved (*rows is left empty). */
static int hold(history *w, const rt_history_run *run, rt_history_rows *rows)
{
    held_run *p = &w->batch[w->nbatch];
    memset(p, 0, sizeof *p);
    if (!copy_or_null(&p->project, run->project) || !copy_or_null(&p->push, run->push) ||
        !copy_or_null(&p->revision, run->revision) || !copy_or_null(&p->platform, run->platform) ||
        !copy_or_null(&p->build_type, run->build_type) || !copy_or_null(&p->label, run->label) ||
        !copy_or_null(&p->run_at, run->run_at)) {
        held_run_free(p);
        return RT_ENOMEM;
    }
    snprintf(p->run_key, sizeof p->run_key, "%s", run->run_key);
    snprintf(p->branch_key, sizeof p->branch_key, "%s", run->branch_key);
    p->run = *run;
    p->run.run_key = p->run_key;
    p->run.project = p->project;
    p->run.branch = p->project;
    p->run.branch_key = p->branch_key;
    p->run.push = p->push;
    p->run.revision = p->revision;
    p->run.platform = p->platform;
    p->run.build_type = p->build_type;
    p->run.label = p->label;
    p->run.run_at = p->run_at;
    p->rows = *rows;
    memset(rows, 0, sizeof *rows);
    if (w->nbatch++ == 0) w->batch_since_ms = now_ms();
    return RT_OK;
}

/* Writes one run in a transaction of its own; on failure h says what to do with its
 * message (a bad value: dead letter; anything else: requeue). */
static void store_one(history *w, const rt_history_run *run, const rt_history_rows *rows,
                      rt_outcome *h)
{
    bool inserted = false;
    int rc = rt_pg_begin(w->pg);
    if (rc == RT_OK) rc = rt_history_store(w->pg, run, rows, false, &inserted);
    if (rc == RT_OK) rc = rt_pg_commit(w->pg);
    if (rc != RT_OK) {
        const char *state = rt_pg_sqlstate(w->pg);
        bool bad_value = !strncmp(state, "22", 2); /* data exception: a bad time in the message */
        char why[RT_ERRSTR_SIZE];
        snprintf(why, sizeof why, "%s", rt_pg_errstr(w->pg));
        if (rt_pg_in_transaction(w->pg)) {
            int ignored = rt_pg_rollback(w->pg);
            (void)ignored;
        }
        if (bad_value)
            rt_outcome_set(h, RT_SETTLE_DEAD, "invalid-value: %s", why);
        else
            rt_outcome_set(h, RT_SETTLE_REQUEUE, "postgres: %s", why);
        return;
    }
    char groups[24], tests[24];
    snprintf(groups, sizeof groups, "%zu", rows->ngroups);
    snprintf(tests, sizeof tests, "%zu", rows->ntests);
    rt_log_debug(inserted ? "recorded" : "already recorded", "run_key", run->run_key, "project",
                 run->project, "groups", groups, "failing_tests", tests);
}

/* Whether a project is recorded; logs why not. */
static bool wanted(history *w, const rt_pulse_task *msg, const char *project)
{
    if (!rt_history_project_allowed(&w->cfg->history_projects, project)) return false;
    return rt_history_sampled(msg->task_id, w->cfg->history_sample_percent);
}

/* Fetches what a resolved run needs and records it. */
static void record_run(history *w, rt_pulse_task *msg, rt_outcome *h)
{
    rt_taskdef *task = NULL;
    bool task_owned = false;
    rt_errorsummary es = {0};
    rt_history_rows rows = {0};
    char run[16];
    snprintf(run, sizeof run, "%d", msg->run_id);

    /* The CC route names the project: skip what is not wanted before any upstream call. */
    if (msg->project && !wanted(w, msg, msg->project)) goto out;
    if (fetch_task(w, msg->task_id, &task, &task_owned, h) != RT_OK) goto out;
    if (!task->job_kind || strcmp(task->job_kind, "test") != 0) goto out; /* builds, lints, ... */
    const char *project = msg->project ? msg->project : task->project;
    const char *revision = msg->revision ? msg->revision : task->revision;
    const char *push = msg->pushlog_id ? msg->pushlog_id : task->pushlog_id;
    if (!project || !revision) {
        rt_log_debug("test run without a push; not recorded", "task_id", msg->task_id);
        goto out;
    }
    if (!msg->project && !wanted(w, msg, project)) goto out;
    if (!push) push = revision;
    rt_run_fetch fetch = run_fetch(w);
    if (rt_run_fetch_errorsummary(&fetch, msg->task_id, msg->run_id, &es, h) != RT_OK) goto out;
    if (rt_history_rows_from_errorsummary(&es, &rows) != RT_OK) {
        rt_outcome_set(h, RT_SETTLE_REQUEUE, "out of memory");
        goto out;
    }

    char run_key[48], branch_key[300];
    snprintf(run_key, sizeof run_key, "%s/%d", msg->task_id, msg->run_id);
    /* one person's try pushes are one branch: the task's owner is the push's author */
    rt_history_branch_key(project, push, task->owner, branch_key, sizeof branch_key);
    rt_history_run hr = {
        .source = "taskcluster",
        .run_key = run_key,
        .repository = w->cfg->history_repository,
        .project = project,
        .branch = project,
        .main = rt_history_is_main(&w->cfg->history_main_projects, project),
        .branch_key = branch_key,
        .push = push,
        .revision = revision,
        .platform = task->platform,
        .build_type = task->build_type, /* with the platform, the run's variant (0040) */
        .label = task->label,
        .run_at = msg->resolved ? msg->resolved : (msg->started ? msg->started : msg->scheduled),
        .complete_results = false,
    };
    if (!hr.run_at) {
        rt_outcome_set(h, RT_SETTLE_DEAD, "missing-field:status.runs[].resolved");
        goto out;
    }
    if (w->cfg->history_batch_size <= 1)
        store_one(w, &hr, &rows, h);
    else if (hold(w, &hr, &rows) == RT_OK)
        h->settle = RT_SETTLE_HOLD;
    else
        rt_outcome_set(h, RT_SETTLE_REQUEUE, "out of memory");
out:
    rt_history_rows_free(&rows);
    rt_errorsummary_free(&es);
    if (task_owned) {
        rt_taskdef_free(task);
        free(task);
    }
}

static void handle_message(history *w, const rt_amqp_message *m, rt_outcome *h)
{
    const char *exchange = rt_amqp_message_header(m, "x-retrig-original-exchange");
    if (!exchange) exchange = m->exchange;
    rt_pulse_task msg;
    char reason[RT_PULSE_REASON_SIZE] = "";
    if (rt_pulse_parse_routed(m->body, m->len, exchange, m->cc, m->cc_count,
                              rt_amqp_message_header(m, "x-retrig-routes"),
                              (size_t)w->cfg->max_message_bytes, &msg, reason) != RT_OK) {
        rt_outcome_set(h, RT_SETTLE_DEAD, "%s", reason);
        return;
    }
    if (msg.event == RT_TASK_EVENT_COMPLETED || msg.event == RT_TASK_EVENT_FAILED)
        record_run(w, &msg, h);
    rt_pulse_task_free(&msg);
}

/* Brings the per-day rollup up to date with the runs written (at most every
 * ROLLUP_INTERVAL_MS), and runs retention hourly; both in transactions of their own, after
 * the runs' commit, so a failure here loses nothing (the next call picks the runs up). */
static void keep_up(history *w)
{
    int64_t now = now_ms();
    if (now - w->rollup_at_ms >= ROLLUP_INTERVAL_MS) {
        long added = 0;
        if (rt_history_rollup(w->pg, ROLLUP_CHUNK, &added) != RT_OK)
            rt_log_warn("could not add runs to the test history rollup; trying again later",
                        "error", rt_pg_errstr(w->pg));
        else if (added > 0) {
            char text[24];
            snprintf(text, sizeof text, "%ld", added);
            rt_log_debug("runs added to the rollup", "runs", text);
        }
        w->rollup_at_ms = now;
    }
    if (!w->maintain_at_ms || now - w->maintain_at_ms >= MAINTAIN_INTERVAL_MS) {
        long partitions = 0;
        if (rt_history_maintain(w->pg, w->cfg->history_retention_days, &partitions) != RT_OK ||
            rt_history_rollup_prune(w->pg, NULL) != RT_OK)
            rt_log_warn("test history retention failed; trying again in an hour", "error",
                        rt_pg_errstr(w->pg));
        w->maintain_at_ms = now;
    }
}

/* Writes the batch in one transaction and settles its messages; when that fails, writes
 * its runs one by one and settles each message as its own write says. */
static void flush(history *w)
{
    size_t n = w->nbatch;
    if (!n) return;
    for (size_t i = 0; i < n; i++) {
        w->batch_runs[i] = w->batch[i].run;
        w->batch_rows[i] = &w->batch[i].rows;
    }
    char errstr[RT_ERRSTR_SIZE] = "";
    int rc = rt_pg_begin(w->pg);
    if (rc == RT_OK)
        rc = rt_history_store_batch(w->pg, w->batch_runs, w->batch_rows, n, w->batch_inserted,
                                    errstr);
    if (rc == RT_OK) rc = rt_pg_commit(w->pg);
    if (rc != RT_OK) {
        if (rt_pg_in_transaction(w->pg)) {
            int ignored = rt_pg_rollback(w->pg);
            (void)ignored;
        }
        rt_log_warn("batch write failed; writing its runs one by one", "error",
                    errstr[0] ? errstr : rt_pg_errstr(w->pg));
    }
    bool requeued = false;
    size_t recorded = 0;
    for (size_t i = 0; i < n; i++) {
        held_run *p = &w->batch[i];
        rt_outcome h = {RT_SETTLE_ACK, ""};
        if (rc != RT_OK) store_one(w, &p->run, &p->rows, &h);
        if (rc == RT_OK && w->batch_inserted[i]) recorded++;
        if (rt_worker_settle(&w->settler, p->src, &p->m, &h, 0)) requeued = true;
        held_run_free(p);
    }
    w->nbatch = 0;
    char count[24], new_runs[24];
    snprintf(count, sizeof count, "%zu", n);
    snprintf(new_runs, sizeof new_runs, "%zu", recorded);
    if (rc == RT_OK) rt_log_debug("batch recorded", "runs", count, "new", new_runs);
    if (requeued) rt_worker_pause();
    keep_up(w);
}

/* Handles a message; a held one is moved into the batch (*m is then left empty), which is
 * written once full. */
static void handle(void *ctx, rt_amqp *src, rt_amqp_message *m, rt_outcome *h)
{
    history *w = ctx;
    handle_message(w, m, h);
    if (h->settle != RT_SETTLE_HOLD) return;
    held_run *p = &w->batch[w->nbatch - 1];
    p->src = src;
    p->m = *m;
    memset(m, 0, sizeof *m);
    if (w->nbatch >= (size_t)w->cfg->history_batch_size) flush(w);
}

/* Between messages: the batch is written when nothing came for a moment or when its first
 * run has waited BATCH_MAX_AGE_MS; while it holds runs, the loop waits only briefly. */
static int tick(void *ctx, bool idle)
{
    history *w = ctx;
    if (w->nbatch && (idle || now_ms() - w->batch_since_ms >= BATCH_MAX_AGE_MS)) flush(w);
    if (!w->nbatch) keep_up(w);
    return w->nbatch ? BATCH_IDLE_MS : 0;
}

/* Our topology (the retry queue and its delays), the Pulse queue bound to the task
 * exchanges, and the consumers. */
static int declare(void *ctx, const rt_worker_conns *conns)
{
    history *w = ctx;
    const rt_config *cfg = w->cfg;
    rt_amqp *ours = conns->broker, *pulse = conns->pulse ? conns->pulse : conns->broker;
    rt_amqp_work_queue queues[] = {{w->retry_queue, "history-retry", w->delays, w->ndelays}};
    int rc = rt_worker_declare_queues(ours, cfg, queues, 1);
    static const char *const events[] = {"task-completed", "task-failed"};
    if (rc == RT_OK) rc = rt_worker_bind_pulse(pulse, cfg, w->pulse_queue, events, 2);
    if (rc == RT_OK) rc = rt_amqp_consume(pulse, w->pulse_queue);
    if (rc == RT_OK) rc = rt_amqp_consume(ours, w->retry_queue);
    return rc;
}

static int setup(history *w, rt_config *cfg)
{
    char errstr[RT_ERRSTR_SIZE] = "";
    int rc;
    w->cfg = cfg;
    for (size_t i = 0; i < cfg->retry_delays_ms.count && i < MAX_DELAYS; i++)
        w->delays[w->ndelays++] = atoi(cfg->retry_delays_ms.items[i]);
    snprintf(w->retry_queue, sizeof w->retry_queue, "%s.history-retry", cfg->amqp_namespace);
    w->cache_size = (size_t)cfg->task_cache_size;
    if (w->cache_size && !(w->cache = calloc(w->cache_size, sizeof *w->cache))) return RT_ENOMEM;
    size_t batch = cfg->history_batch_size > 1 ? (size_t)cfg->history_batch_size : 1;
    w->batch = calloc(batch, sizeof *w->batch);
    w->batch_runs = calloc(batch, sizeof *w->batch_runs);
    w->batch_rows = calloc(batch, sizeof *w->batch_rows);
    w->batch_inserted = calloc(batch, sizeof *w->batch_inserted);
    if (!w->batch || !w->batch_runs || !w->batch_rows || !w->batch_inserted) return RT_ENOMEM;
    char user[128];
    rt_amqp_url_user(cfg->pulse_url, user, sizeof user);
    snprintf(w->pulse_queue, sizeof w->pulse_queue, "queue/%s/%s-history", user,
             cfg->pulse_queue_name);
    rt_http_options hopts;
    rt_http_options_from_config(&hopts, cfg);
    if ((rc = rt_http_new(&w->http, &hopts, errstr)) != RT_OK) {
        rt_log_error("cannot set up HTTP", "error", errstr);
        return rc;
    }
    rt_worker_setup connect = {
        "history", RT_WORKER_NEEDS_BROKER | RT_WORKER_NEEDS_PULSE | RT_WORKER_NEEDS_POSTGRES,
        0,         1,
        declare,   w,
        NULL /* no Redis: this binary links no hiredis */};
    if ((rc = rt_worker_connect(cfg, &connect, &w->conns)) != RT_OK) return rc;
    w->ours = w->conns.broker;
    w->pulse = w->conns.pulse ? w->conns.pulse : w->conns.broker;
    w->pg = w->conns.pg;
    w->settler = (rt_worker_settler){w->ours, w->retry_queue, w->delays, w->ndelays, NULL, NULL};
    return RT_OK;
}

static void teardown(history *w)
{
    rt_worker_disconnect(&w->conns);
    rt_http_free(w->http);
    for (size_t i = 0; i < w->cache_size; i++) rt_taskdef_free(&w->cache[i].def);
    free(w->cache);
    for (size_t i = 0; w->batch && i < w->nbatch; i++) held_run_free(&w->batch[i]);
    free(w->batch);
    free(w->batch_runs);
    free(w->batch_rows);
    free(w->batch_inserted);
}

static int run(rt_config *cfg)
{
    history w = {0};
    int rc = setup(&w, cfg);
    if (rc == RT_OK) {
        rt_log_info("consuming", "queue", w.pulse_queue, "retry_queue", w.retry_queue);
        /* Only log_level concerns this worker on a reload; it is read from cfg. */
        rt_worker_loop loop = {.cfg = cfg,
                               .conns = &w.conns,
                               .lanes = 1,
                               .apply_reloads = true,
                               .sources = {w.pulse, w.ours},
                               .settler = &w.settler,
                               .ctx = &w,
                               .handle = handle,
                               .tick = tick};
        rt_worker_consume(&loop);
        flush(&w);
        rt_log_info("stopping: finished the message in hand");
    }
    teardown(&w);
    return rt_worker_exit_status(rc);
}

static int check(rt_config *cfg)
{
    return rt_worker_check_result(rt_worker_check_services(
        cfg, "history", RT_WORKER_NEEDS_BROKER | RT_WORKER_NEEDS_POSTGRES, NULL));
}

int main(int argc, char **argv)
{
    static const rt_worker_def def = {
        "history",
        "Consumes Taskcluster task-completed/failed messages from Pulse and records the group\n"
        "and failing test results of every test task run (errorsummary) for the test history.",
        run,
        check,
    };
    return rt_worker_main(&def, argc, argv);
}
