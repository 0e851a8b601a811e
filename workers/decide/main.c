/* SPDX-License-Identifier: MPL-2.0 */
/* main.c - retrig-decide: regression or intermittent for each retrigger set, stored for
 * sheriffs and published for bots.
 *
 * A decide request (from retrig-classify when a member of a set resolves, from our own
 * delay queues, or from the deadline sweeper) makes the worker gather the evidence: for
 * the original run and each failed retrigger, Treeherder's job, its logs' parse status and
 * its bug_suggestions, normalised to TEST-UNEXPECTED lines (common/core/bugsug.h). The pure
 * rule (common/core/verdict.h) decides as soon as the verdict cannot change. When Treeherder is
 * not ready (job not ingested, logs pending, 429/5xx) the request goes to the next delay
 * queue (decide_delays_ms), never a sleeping worker; past the last delay the request is left:
 * the set stays open, its other members' requests look again, and the deadline sweeper ends
 * the wait (common/core/decide_step.h). A verdict is written in one transaction with the set's
 * status and the members' results, and the decision event is published with a confirm before the
 * commit, so a concurrent replica waits on the decision row and never publishes twice.
 *
 * Deadline sweeper: every decide_sweep_interval_s, sets still open after
 * set_deadline_minutes get a decide request with reason "deadline"; such a request decides
 * with what is there (retriggers that never came make it undecided "retriggers-missing"
 * when the verdict needed them). Optionally (decide_cancel_pending) the retriggers still
 * pending when a set is decided early are cancelled.
 *
 * The verdict policy (decide_policy; rounds.h): seed is the rule above; adaptive decides by
 * the posterior of each line from its test's history and asks for further rounds of
 * retriggers while it wants more evidence. Every decision records the policy, p_regression
 * and the other policy's verdict (rounds.c). pooled decides one verdict per failing test per
 * push over every configuration and asks the member sets' rounds (pool_flow.c).
 *
 * Culprit searches: a regression on a project of culprit_projects is stored with
 * culprit_status 'searching'; the tick then finds its window and bisects it with probe
 * requests to retrig-retrigger (culprit_flow.c). Single-threaded; run replicas.
 *
 * This file is a request's story; gather.c gathers the evidence, documents.c builds what a
 * decision stores and publishes, cancel.c cancels retriggers no longer needed (decide.h), and
 * the statements are common/store/decide_sets.c's. */
#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/core/bugsug.h"
#include "common/core/decide_step.h"
#include "common/core/events.h"
#include "common/core/evidence.h"
#include "common/core/hawk.h"
#include "common/core/history.h"
#include "common/core/ids.h"
#include "common/core/messages.h"
#include "common/core/retrigger_set.h"
#include "common/core/utf8.h"
#include "common/core/verdict.h"
#include "common/io/amqp.h"
#include "common/io/history_store.h"
#include "common/io/http.h"
#include "common/io/metrics.h"
#include "common/io/pg.h"
#include "common/io/upstream.h"
#include "common/options.h"
#include "common/worker.h"
#include "workers/decide/culprit_flow.h"
#include "common/store/decide_sets.h"
#include "workers/decide/decide.h"
#include "workers/decide/rounds.h"

#define SWEEP_BATCH 50

static void evidence_free(evidence *e)
{
    rt_bugsug_free(&e->original.lines);
    for (size_t i = 0; i < e->nruns; i++) rt_bugsug_free(&e->runs[i].lines);
    json_decref(e->history);
}

static void utc_now(char out[40])
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    size_t n = strftime(out, 40, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out + n, 40 - n, ".%03dZ", (int)(ts.tv_nsec / 1000000L) % 1000);
}

static int load_set(decide *w, long long set_id, set_info *s, bool *found)
{
    memset(s, 0, sizeof *s);
    s->id = set_id;
    snprintf(s->id_text, sizeof s->id_text, "%lld", set_id);
    rt_decide_set row;
    int rc = rt_decide_sets_load(w->pg, set_id, w->cfg->set_deadline_minutes, &row, found);
    if (rc != RT_OK || !*found) return rc;
    snprintf(s->project, sizeof s->project, "%s", row.project);
    snprintf(s->revision, sizeof s->revision, "%s", row.revision);
    snprintf(s->label, sizeof s->label, "%s", row.label);
    snprintf(s->platform, sizeof s->platform, "%s", row.platform);
    snprintf(s->original_task_id, sizeof s->original_task_id, "%s", row.original_task_id);
    s->original_run_id = row.original_run_id;
    s->count = row.count;
    snprintf(s->status, sizeof s->status, "%s", row.status);
    snprintf(s->task_group_id, sizeof s->task_group_id, "%s", row.task_group_id);
    s->decided = row.decided;
    s->past_deadline = row.past_deadline;
    snprintf(s->failure_seen_at, sizeof s->failure_seen_at, "%s", row.failure_seen_at);
    snprintf(s->requested_at, sizeof s->requested_at, "%s", row.requested_at);
    s->original_seconds = row.original_seconds;
    return RT_OK;
}

/* Inserts the decision, marks the set, records each member's result and publishes the
 * event, in one transaction. *inserted false: another worker decided first. */
static int store_decision(decide *w, const evidence *e, const rt_decide_request *req,
                          bool *inserted, char decided_at[40])
{
    const set_info *s = &e->set;
    *inserted = false;
    utc_now(decided_at);
    json_t *stored = NULL;
    char *stored_text = NULL, *event = NULL;
    int rc = decide_build_documents(w, e, req, decided_at, &stored);
    if (rc != RT_OK) return rc;
    stored_text = json_dumps(stored, JSON_COMPACT);
    event = decide_event_text(w, e, decided_at);
    json_decref(stored);
    if (!stored_text || !event) {
        rc = RT_ENOMEM;
        goto out;
    }
    const char *verdict = rt_verdict_name(e->result.verdict);
    /* A regression on a project of culprit_projects starts its culprit search: the window is
     * found by the next culprit poll (culprit_flow.c), outside this transaction. */
    bool search = e->result.verdict == RT_VERDICT_REGRESSION &&
                  rt__decide_culprit_project(w->cfg, s->project);
    rt_decide_row row = {.set_id = s->id,
                         .verdict = verdict,
                         .reason = e->result.reason,
                         .evidence = stored_text,
                         .classification_id = e->classification_id,
                         .failure_seen_at = s->failure_seen_at,
                         .requested_at = s->requested_at,
                         .decided_at = decided_at,
                         .culprit_status = search ? "searching" : NULL};
    if ((rc = rt_pg_begin(w->pg)) != RT_OK) goto out;
    rc = rt_decide_sets_insert(w->pg, &row, inserted);
    if (rc != RT_OK || !*inserted) goto done;
    for (size_t k = 0; k < e->nruns && rc == RT_OK; k++) {
        const run_info *run = &e->runs[k];
        bool reproduced = false;
        for (size_t i = 0; e->original.have_lines && i < e->original.lines.nlines; i++)
            if (decide_run_has_line(run, &e->original.lines.lines[i])) reproduced = true;
        const char *result = decide_member_result(run, reproduced);
        if (!run->task_id[0] || !result) continue;
        rc = rt_decide_sets_member_result(w->pg, s->id, run->task_id, run->run_id, result);
    }
    if (rc == RT_OK) rc = decide_rounds_store(&w->rounds, &e->rounds, s->id_text);
    if (rc == RT_OK) rc = pool_flow_store(&w->pool, &e->pool, s->id);
    if (rc != RT_OK) goto done;
    char key[128], message_id[64];
    snprintf(key, sizeof key, "%s.%s", s->project, verdict);
    snprintf(message_id, sizeof message_id, "decision-%lld", s->id);
    rt_amqp_publish_opts opts = {.message_id = message_id, .allow_unroutable = true};
    rc = rt_amqp_publish(w->amqp, w->events, key, event, strlen(event), &opts);
done:
    if (rc == RT_OK) {
        rc = rt_pg_commit(w->pg);
    } else {
        int ignored = rt_pg_rollback(w->pg);
        (void)ignored;
        *inserted = false;
    }
out:
    free(stored_text);
    free(event);
    return rc;
}

/* ---- one request ---- */

/* A decision just stored by this replica: its metrics, its log line and the retriggers it
 * no longer needs. */
static void decided_now(decide *w, evidence *e)
{
    rt_metric_inc(rt_metrics_std()->decisions, rt_verdict_name(e->result.verdict));
    {
        /* Decision latency: from the failure seen to the verdict stored. */
        double seconds = 0;
        if (e->set.failure_seen_at[0] &&
            rt_decide_sets_seconds_since(w->pg, e->set.failure_seen_at, &seconds) == RT_OK)
            rt_metric_observe(rt_metrics_std()->decision_latency, seconds);
    }
    char pending[16];
    snprintf(pending, sizeof pending, "%zu", e->result.pending);
    rt_log_info("decided", "set_id", e->set.id_text, "project", e->set.project, "label",
                e->set.label, "original_task_id", e->set.original_task_id, "verdict",
                rt_verdict_name(e->result.verdict), "reason", e->result.reason, "pending", pending);
    if (w->cfg->decide_cancel_pending && e->result.pending > 0 &&
        (e->result.verdict == RT_VERDICT_REGRESSION ||
         e->result.verdict == RT_VERDICT_INTERMITTENT)) {
        if (w->cfg->dry_run)
            rt_log_info("dry run: pending retriggers not cancelled", "set_id", e->set.id_text);
        else
            decide_cancel_pending(w, e);
    }
}

static void decide_set(decide *w, const rt_decide_request *req, int attempt, rt_outcome *h)
{
    evidence *e = calloc(1, sizeof *e);
    if (!e) {
        rt_outcome_set(h, RT_SETTLE_REQUEUE, "out of memory");
        return;
    }
    bool found = false;
    if (load_set(w, req->set_id, &e->set, &found) != RT_OK) {
        rt_outcome_set(h, RT_SETTLE_REQUEUE, "postgres: %s", rt_pg_errstr(w->pg));
        goto out;
    }
    if (!found) {
        rt_log_warn("decide request for an unknown set", "set_id", e->set.id_text);
        goto out; /* the set is published in the transaction that creates it: it was deleted */
    }
    if (e->set.decided || !strcmp(e->set.status, "decided") || !strcmp(e->set.status, "failed"))
        goto out; /* decided before (a redelivery), or no retriggers were ever made */
    e->deadline = e->set.past_deadline || !strncmp(req->reason, "deadline", 8);
    if (decide_gather(w, e, h) != RT_OK) goto out;
    /* The verdict policy in force on that evidence (rounds.h): adaptive may ask for another
     * round of retriggers instead, whose members ask again. */
    rounds_set policy_set = {.id = e->set.id,
                             .id_text = e->set.id_text,
                             .project = e->set.project,
                             .revision = e->set.revision,
                             .failure_seen_at = e->set.failure_seen_at,
                             .evidence = e->have_input ? &e->input : NULL,
                             .classification_id = e->classification_id,
                             .deadline = e->deadline};
    switch (decide_rounds_apply(&w->rounds, &policy_set, &e->result, &e->rounds, h)) {
    case ROUNDS_GO_ON: break;
    case ROUNDS_ASKED: goto out;
    case ROUNDS_ERROR: goto out;
    }
    /* pooled: one verdict per failing test per push, every member set's (pool_flow.h). */
    pool_set pooled = {.id = e->set.id,
                       .id_text = e->set.id_text,
                       .project = e->set.project,
                       .revision = e->set.revision,
                       .failure_seen_at = e->set.failure_seen_at,
                       .runs = e->original.state == RT_RUN_FAILED ? &e->input : NULL,
                       .deadline = e->deadline};
    switch (pool_flow_apply(&w->pool, &pooled, &e->result, &e->pool, h)) {
    case POOL_NOT_POOLED: break;
    case POOL_DECIDED: e->wait = NULL; break; /* stored whatever is still unreadable */
    case POOL_WAIT: goto out;
    case POOL_ERROR: goto out;
    }

    /* What now (common/core/decide_step.h): store, look again later, or leave the set to
     * its members' events and the deadline. */
    rt_decide_situation situation = {.result = &e->result,
                                     .wait = e->wait,
                                     .deadline = e->deadline,
                                     .attempt = attempt,
                                     .ndelays = w->ndelays};
    rt_verdict_result decided;
    switch (rt_decide_next_step(&situation, &decided)) {
    case RT_DECIDE_STORE: e->result = decided; break;
    case RT_DECIDE_RETRY: rt_outcome_set(h, RT_SETTLE_RETRY, "%s", e->wait); goto out;
    case RT_DECIDE_LEAVE:
        if (e->wait) /* never past the deadline: that stores or looks again (decide_step.h) */
            rt_log_info("a run is still not readable; it stays pending until the set's deadline",
                        "set_id", e->set.id_text, "detail", e->wait_detail);
        else
            rt_log_debug("waiting for retriggers", "set_id", e->set.id_text);
        goto out; /* the next member's request comes from retrig-classify */
    }

    decide_look_up_history(w, e);
    decide_rounds_finish(&w->rounds, &policy_set, &e->rounds);
    bool inserted = false;
    char decided_at[40];
    int rc = store_decision(w, e, req, &inserted, decided_at);
    if (rc != RT_OK) {
        rt_outcome_set(h, RT_SETTLE_REQUEUE, "storing the decision: %s / %s", rt_pg_errstr(w->pg),
                       rt_amqp_errstr(w->amqp));
        goto out;
    }
    if (inserted) decided_now(w, e); /* else a replica decided first */
out:
    evidence_free(e);
    free(e);
}

static void handle(void *ctx, rt_amqp *src, rt_amqp_message *m, rt_outcome *h)
{
    decide *w = ctx;
    (void)src;
    rt_decide_request req;
    char reason[RT_MESSAGE_REASON_SIZE];
    if (rt_decide_request_parse(m->body, m->len, &req, reason) != RT_OK) {
        rt_outcome_set(h, RT_SETTLE_DEAD, "%s", reason);
        return;
    }
    decide_set(w, &req, m->attempt, h);
}

/* A decide request counts its attempts in its body: the delayed copy says which attempt it
 * is and why it waits ("retry: <why>", after "deadline " for the sweeper's requests). */
static char *retry_body(void *ctx, const rt_amqp_message *m, const rt_settle_plan *plan)
{
    (void)ctx;
    rt_decide_request req;
    char reason[RT_MESSAGE_REASON_SIZE];
    if (rt_decide_request_parse(m->body, m->len, &req, reason) != RT_OK) return NULL;
    req.attempt = plan->next_attempt + 1; /* the body counts from 1 */
    bool was_deadline = !strncmp(req.reason, "deadline", 8);
    rt_utf8_format(req.reason, sizeof req.reason, "%sretry: %s", was_deadline ? "deadline " : "",
                   plan->reason); /* cut, if it must be, on a character boundary */
    return rt_decide_request_build(&req);
}

/* Asks for a decision on sets still open past set_deadline_minutes, once per sweep
 * interval each, in one transaction (replicas skip the rows another one holds). */
static void sweep(decide *w)
{
    /* Sets still waiting for their verdict, for the retrig_sets_in_flight gauge. */
    long long open_sets = 0;
    if (rt_decide_sets_in_flight(w->pg, &open_sets) == RT_OK)
        rt_metric_set(rt_metrics_std()->sets_in_flight, (double)open_sets);

    rt_decide_swept sets[SWEEP_BATCH];
    size_t n = 0;
    int rc = rt_pg_begin(w->pg);
    if (rc == RT_OK)
        rc = rt_decide_sets_sweep(w->pg, w->cfg->set_deadline_minutes,
                                  w->cfg->decide_sweep_interval_s, sets, SWEEP_BATCH, &n);
    for (size_t i = 0; i < n && rc == RT_OK; i++) {
        rt_decide_request req = {.set_id = sets[i].id, .attempt = 1};
        snprintf(req.project, sizeof req.project, "%s", sets[i].project);
        snprintf(req.reason, sizeof req.reason, "deadline");
        char *body = rt_decide_request_build(&req);
        if (!body) {
            rc = RT_ENOMEM;
            break;
        }
        char message_id[64];
        snprintf(message_id, sizeof message_id, "decide-%lld-deadline", req.set_id);
        rt_amqp_publish_opts opts = {.message_id = message_id};
        rc = rt_amqp_publish(w->amqp, w->cfg->amqp_namespace, "decide", body, strlen(body), &opts);
        free(body);
        if (rc == RT_OK) rc = rt_decide_sets_swept(w->pg, sets[i].id);
    }
    if (rc == RT_OK && rt_pg_in_transaction(w->pg)) rc = rt_pg_commit(w->pg);
    if (rc != RT_OK) {
        int ignored = rt_pg_rollback(w->pg);
        (void)ignored;
        rt_log_warn("deadline sweep failed; trying at the next one", "error", rt_pg_errstr(w->pg));
        return;
    }
    if (n > 0) {
        char count[24];
        snprintf(count, sizeof count, "%zu", n);
        rt_log_info("decisions requested for sets past their deadline", "sets", count);
    }
}

/* The work queue with its delay queues, the decisions exchange, and the consumer. */
static int declare(void *ctx, const rt_worker_conns *conns)
{
    decide *w = ctx;
    const rt_config *cfg = w->cfg;
    char retrigger_queue[300];
    snprintf(retrigger_queue, sizeof retrigger_queue, "%s.retrigger", cfg->amqp_namespace);
    /* Under decide_policy = adaptive it publishes later rounds' retrigger requests. */
    rt_amqp_work_queue queues[] = {{w->queue, "decide", w->delays, w->ndelays},
                                   {retrigger_queue, "retrigger", NULL, 0}};
    int rc = rt_worker_declare_queues(conns->broker, cfg, queues, decide_rounds_asks(cfg) ? 2 : 1);
    if (rc == RT_OK) rc = rt_amqp_declare_exchange(conns->broker, w->events, "topic");
    if (rc == RT_OK) rc = rt_amqp_consume(conns->broker, w->queue);
    return rc;
}

/* The services: the broker and Postgres, and Redis when adaptive or pooled asks for rounds
 * (their budget claims). */
#define DECIDE_NEEDS (RT_WORKER_NEEDS_BROKER | RT_WORKER_NEEDS_POSTGRES)
static const rt_worker_redis_ops *decide_redis(const rt_config *cfg)
{
    return decide_rounds_asks(cfg) ? &rt_worker_redis : NULL;
}

static int setup(decide *w, rt_config *cfg)
{
    char errstr[RT_ERRSTR_SIZE] = "";
    int rc;
    w->cfg = cfg;
    for (size_t i = 0; i < cfg->decide_delays_ms.count && i < MAX_DELAYS; i++)
        w->delays[w->ndelays++] = atoi(cfg->decide_delays_ms.items[i]);
    snprintf(w->queue, sizeof w->queue, "%s.decide", cfg->amqp_namespace);
    snprintf(w->events, sizeof w->events, "%s.decisions", cfg->amqp_namespace);
    rt_http_options hopts;
    rt_http_options_from_config(&hopts, cfg);
    if ((rc = rt_http_new(&w->http, &hopts, errstr)) != RT_OK) return rc;
    hopts.max_attempts = 1;
    if ((rc = rt_http_new(&w->http_post, &hopts, errstr)) != RT_OK) return rc;
    rt_worker_setup connect = {"decide", DECIDE_NEEDS, 0, 1, declare, w, decide_redis(cfg)};
    if ((rc = rt_worker_connect(cfg, &connect, &w->conns)) != RT_OK) return rc;
    w->amqp = w->conns.broker;
    w->pg = w->conns.pg;
    decide_rounds_init(&w->rounds, cfg, w->pg, w->conns.redis, w->amqp);
    pool_flow_init(&w->pool, cfg, w->pg, w->amqp, &w->rounds);
    return RT_OK;
}

static void teardown(decide *w)
{
    rt_worker_disconnect(&w->conns);
    rt_http_free(w->http);
    rt_http_free(w->http_post);
}

/* Between messages: the deadline sweep, every decide_sweep_interval_s, and the culprit
 * searches due (culprit_flow.c). */
static int tick(void *ctx, bool idle)
{
    decide *w = ctx;
    (void)idle;
    if (time(NULL) >= w->next_sweep) {
        sweep(w);
        pool_flow_sweep(&w->pool);
        w->next_sweep = time(NULL) + w->cfg->decide_sweep_interval_s;
    }
    /* The culprit searches due (each at most every culprit_poll_interval_s); the look for
     * them is one indexed query, made at most once a second. */
    if (time(NULL) >= w->next_culprit_poll) {
        rt__decide_culprit_io io = {w->cfg, w->pg, w->http, w->amqp, w->events};
        rt__decide_culprit_poll(&io);
        w->next_culprit_poll = time(NULL) + 1;
    }
    return 0;
}

static int run(rt_config *cfg)
{
    decide w = {0};
    int rc = setup(&w, cfg);
    if (rc == RT_OK) {
        rt_log_info("consuming", "queue", w.queue, "events", w.events);
        w.next_sweep = time(NULL);
        rt_worker_settler settler = {w.amqp, w.queue, w.delays, w.ndelays, retry_body, &w};
        /* decide_threshold and log_level are read from cfg, so a reload needs nothing more. */
        rt_worker_loop loop = {.cfg = cfg,
                               .conns = &w.conns,
                               .lanes = 1,
                               .apply_reloads = true,
                               .sources = {w.amqp, NULL},
                               .settler = &settler,
                               .ctx = &w,
                               .handle = handle,
                               .tick = tick};
        rt_worker_consume(&loop);
        rt_log_info("stopping: finished the request in hand");
    }
    teardown(&w);
    return rt_worker_exit_status(rc);
}

static int check(rt_config *cfg)
{
    int failures = rt_worker_check_services(cfg, "decide", DECIDE_NEEDS, decide_redis(cfg));
    if (cfg->decide_cancel_pending && !cfg->dry_run &&
        (!cfg->taskcluster_client_id || !cfg->taskcluster_access_token)) {
        rt_log_error("decide_cancel_pending needs taskcluster_client_id and an access token");
        failures++;
    }
    return rt_worker_check_result(failures);
}

int main(int argc, char **argv)
{
    static const rt_worker_def def = {
        "decide",
        "Consumes decide requests, compares the failure lines of a set's original run and\n"
        "retriggers in Treeherder, and stores and publishes regression or intermittent.",
        run,
        check,
    };
    return rt_worker_main(&def, argc, argv);
}
