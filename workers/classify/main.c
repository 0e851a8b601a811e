/* SPDX-License-Identifier: MPL-2.0 */
/* main.c - retrig-classify: from Taskcluster task-* Pulse messages to retrigger requests.
 *
 * For each message: validate it (bad ones go to the dead-letter queue with a reason),
 * record the run, then run the pure eligibility checks (common/core/eligibility.h), fetching
 * only what the next check needs (task definition, set lookup, Treeherder classification,
 * errorsummary artifacts, existing retriggers). An eligible failure claims its set and its
 * budget atomically in Redis, then in one Postgres call (classify_create_set, migration
 * 0012) creates the set (the unique constraint is the backstop when Redis was flushed), runs
 * the ledger backstop and writes the ledger row; then, under the set's row lock, publishes
 * the retrigger request with a confirm and marks it published; the order of those steps and
 * what each failure leads to is common/core/claim_flow.h's (rt_claim_flow_next), which
 * classify_request_retriggers (request.c) performs. The statements on runs, sets, their members and
 * ledger rows are common/store/runs.h's and sets.h's (moved there from this file, issue 33). The
 * Pulse message is acked only after that. Transient upstream failures go through delay queues;
 * after the last delay the message is dead-lettered. With decide_policy = adaptive, the set's first
 * round asks for the verdict model's first batch (common/core/decide_rounds.h: from the history of
 * the failing tests, within budget_minimum and retriggers_per_failure) instead of
 * retriggers_per_failure; retrig-decide asks for the later rounds. With decide_policy = pooled,
 * the set asks for no retrigger and joins its failing test's pooled set (pooled.h), whose
 * rounds retrig-decide asks for. classify_concurrency lanes
 * (threads) in one process each run this whole loop with their own connections, like replicas; run
 * replicas for more. This file is the message's story; request.c performs the retrigger request,
 * batch.c the fast path, snapshot.c and shared.c what the lanes share (classify.h). */
#include <jansson.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/core/claim_flow.h"
#include "common/core/decide_rounds.h"
#include "common/core/eligibility.h"
#include "common/core/errorsummary.h"
#include "common/core/evidence.h"
#include "common/core/ids.h"
#include "common/core/messages.h"
#include "common/core/pulse.h"
#include "common/core/retrigger_set.h"
#include "common/core/taskdef.h"
#include "common/core/utf8.h"
#include "common/io/amqp.h"
#include "common/io/budget.h"
#include "common/io/deadline.h"
#include "common/io/hashkey.h"
#include "common/io/history_store.h"
#include "common/io/http.h"
#include "common/io/metrics.h"
#include "common/io/pg.h"
#include "common/io/redis.h"
#include "common/io/run_fetch.h"
#include "common/io/stop.h"
#include "common/io/upstream.h"
#include "common/options.h"
#include "common/policy.h"
#include "common/store/ledger.h"
#include "common/store/runs.h"
#include "common/store/sets.h"
#include "common/worker.h"
#include "workers/classify/classify.h"
#include "workers/classify/pooled.h"

/* ---- small helpers ---- */

/* Maps an upstream failure: transient -> retry later; anything else -> dead letter. */
int classify_record_verdict(classify *w, const rt_pulse_task *msg, const char *verdict,
                            const char *reason)
{
    return rt_runs_set_verdict(w->pg, msg->task_id, msg->run_id, verdict, reason);
}

const char *classify_member_state(const rt_pulse_task *msg)
{
    return rt_member_state_name(rt_member_state_of_event(msg->event));
}

static int read_run_facts(classify *w, const rt_pulse_task *msg, const rt_taskdef *task,
                          run_facts *f)
{
    rt_worker_utc_day(f->day);
    rt_sets_run_facts_query q = {.task_id = msg->task_id,
                                 .run_id = msg->run_id,
                                 .project = task->project ? task->project : msg->project,
                                 .revision = task->revision ? task->revision : msg->revision,
                                 .label = task->label,
                                 .platform = task->platform,
                                 .set_project = task->project,
                                 .set_revision = task->revision,
                                 .set_label = task->label,
                                 .ledger_platform = task->platform ? task->platform : "unknown",
                                 .day = f->day};
    rt_set_ref set;
    int rc = rt_sets_run_facts(w->pg, &q, &set, &f->ledger_spent);
    if (rc != RT_OK) return rc;
    f->set_id = set.id;
    snprintf(f->original, sizeof f->original, "%s", set.original_task_id);
    f->published = set.published;
    f->known = true;
    return RT_OK;
}

/* Looks up the set of (project, revision, label). *set_id 0 when none. */
int classify_find_set(classify *w, const char *project, const char *revision, const char *label,
                      long long *set_id, char original[23], bool *published)
{
    rt_set_ref set;
    int rc = rt_sets_find(w->pg, project, revision, label, &set);
    if (rc != RT_OK) return rc;
    *set_id = set.id;
    snprintf(original, 23, "%s", set.original_task_id);
    *published = set.published;
    return RT_OK;
}

static int add_member(classify *w, long long set_id, const rt_pulse_task *msg)
{
    rt_set_member member = {.set_id = set_id,
                            .task_id = msg->task_id,
                            .run_id = msg->run_id,
                            .role = "retrigger",
                            .state = classify_member_state(msg),
                            .resolved_at = msg->resolved};
    return rt_sets_add_member(w->pg, &member);
}

/* A member of set_id resolved: ask retrig-decide to look (it decides as soon as the verdict
 * cannot change), and mark the set complete when every requested retrigger has resolved.
 * The set row is locked so that concurrent replicas publish "set-complete" once. */
static int request_decision(classify *w, long long set_id, const char *task_id)
{
    rt_set_progress set;
    bool found = false;
    int resolved = 0;
    int rc = rt_pg_begin(w->pg);
    if (rc != RT_OK) return rc;
    rc = rt_sets_lock_progress(w->pg, set_id, &set, &found);
    /* Not found, complete or decided already: nothing new to say. */
    if (rc != RT_OK || !found || !set.open) goto out;
    rt_decide_request req = {.set_id = set_id, .attempt = 1}; /* the schema counts from 1 */
    snprintf(req.project, sizeof req.project, "%s", set.project);
    if ((rc = rt_sets_resolved_members(w->pg, set_id, &resolved)) != RT_OK) goto out;
    bool complete = rt_set_complete(set.wanted, set.found, resolved);
    snprintf(req.reason, sizeof req.reason, complete ? "set-complete" : "member-resolved: %s",
             task_id);
    if (complete && (rc = rt_sets_mark_complete(w->pg, set_id)) != RT_OK) goto out;
    char *body = rt_decide_request_build(&req);
    if (!body) {
        rc = RT_ENOMEM;
        goto out;
    }
    char message_id[96];
    snprintf(message_id, sizeof message_id, "decide-%lld-%s", set_id,
             complete ? "complete" : task_id);
    rt_amqp_publish_opts opts = {.message_id = message_id};
    rc = rt_amqp_publish(w->ours, w->cfg->amqp_namespace, "decide", body, strlen(body), &opts);
    free(body);
out:
    if (rc == RT_OK) return rt_pg_commit(w->pg);
    int ignored = rt_pg_rollback(w->pg);
    (void)ignored;
    return rc;
}

/* Records a run as a member of its set, then asks for a decision. */
int classify_join_set(classify *w, long long set_id, const rt_pulse_task *msg)
{
    int rc = add_member(w, set_id, msg);
    if (rc == RT_OK) rc = request_decision(w, set_id, msg->task_id);
    return rc;
}

/* Whether the task group has a retrigger set: lets old-format messages without tags skip
 * the task definition. Postgres answers (an index on task_group_id); when it cannot, look. */
static bool group_has_sets(classify *w, const char *task_group_id)
{
    bool exists = true;
    if (rt_sets_group_has_sets(w->pg, task_group_id, &exists) != RT_OK) return true;
    return exists;
}

/* ---- gathering the facts ---- */

/* What rt_run_fetch needs of the worker. */
static rt_run_fetch run_fetch(const classify *w)
{
    return (rt_run_fetch){.http = w->http,
                          .root_url = w->cfg->taskcluster_root_url,
                          .max_body_bytes = (size_t)w->cfg->http_max_body_bytes,
                          .time_budget_ms = w->cfg->message_time_budget_ms,
                          .max_es_bytes = (size_t)w->cfg->errorsummary_max_bytes};
}

static int fetch_task(classify *w, const char *task_id, const rt_taskdef **out, rt_outcome *h)
{
    *out = classify_cache_get(w, task_id);
    if (*out) return RT_OK;
    rt_taskdef def;
    rt_run_fetch fetch = run_fetch(w);
    int rc = rt_run_fetch_task(&fetch, task_id, &def, h);
    if (rc != RT_OK) return rc;
    *out = classify_cache_put(w, task_id, &def);
    if (*out == &def) { /* not cached: keep a heap copy for the caller */
        rt_taskdef *copy = malloc(sizeof *copy);
        if (!copy) {
            rt_taskdef_free(&def);
            return RT_ENOMEM;
        }
        *copy = def;
        *out = copy;
    }
    return RT_OK;
}

/* One run's way through the eligibility rule: what it has learnt so far. */
typedef struct run_call {
    classify *w;
    rt_pulse_task *msg;
    rt_outcome *h;
    const rt_taskdef *task;
    bool task_heap; /* task is this call's copy, not the cache's */
    rt_errorsummary es;
    bool have_es;
    rt_elig_facts facts;
    char original[23];
    long long set_id;
    bool published;
    run_facts pre;
} run_call;

static int fetch_task_for(run_call *c)
{
    if (fetch_task(c->w, c->msg->task_id, &c->task, c->h) != RT_OK) return RT_EUPSTREAM;
    c->task_heap = classify_cache_get(c->w, c->msg->task_id) != c->task;
    c->facts.task = c->task;
    return RT_OK;
}

/* A resolved run of a label with a set is a member of that set, whatever its state (the
 * decision needs completed retriggers too). Modern messages carry the label and the push,
 * so this costs no upstream call; older ones are looked at only when their task group has
 * sets. Failed runs are handled by the eligibility rule. */
static bool join_as_member(run_call *c)
{
    classify *w = c->w;
    rt_pulse_task *msg = c->msg;
    if (msg->event == RT_TASK_EVENT_FAILED) return true;
    const char *label = msg->tag_label, *project = msg->project, *revision = msg->revision;
    if ((!label || !project || !revision) && group_has_sets(w, msg->task_group_id)) {
        if (fetch_task_for(c) != RT_OK) return false;
        label = c->task->label;
        if (c->task->project) project = c->task->project;
        if (c->task->revision) revision = c->task->revision;
    }
    if (!label || !project || !revision) return true;
    if (classify_find_set(w, project, revision, label, &c->set_id, c->original, &c->published) !=
        RT_OK) {
        rt_outcome_set(c->h, RT_SETTLE_REQUEUE, "postgres: %s", rt_pg_errstr(w->pg));
        return false;
    }
    if (c->set_id && strcmp(c->original, msg->task_id) != 0 &&
        classify_join_set(w, c->set_id, msg) != RT_OK) {
        rt_outcome_set(c->h, RT_SETTLE_REQUEUE, "postgres or broker: %s", rt_pg_errstr(w->pg));
        return false;
    }
    return true;
}

/* The runs of the label already on the push: members of the set to come. */
static bool learn_existing_runs(run_call *c)
{
    classify *w = c->w;
    char errstr[RT_ERRSTR_SIZE] = "";
    size_t total = 0;
    size_t place = classify_group_listing_begin(c->msg->task_group_id);
    int rc = rt_tc_label_runs_in_group(w->http, w->cfg->taskcluster_root_url, c->msg->task_group_id,
                                       c->task->label, c->msg->task_id, w->found, MAX_FOUND, &total,
                                       errstr);
    classify_group_listing_end(place);
    if (rc != RT_OK) {
        rt_outcome_upstream(c->h, rc, "task group", errstr);
        return false;
    }
    w->nfound = total < MAX_FOUND ? total : MAX_FOUND;
    c->facts.existing_known = true;
    c->facts.existing_retriggers = (int)w->nfound;
    return true;
}

/* Runs already on the push stand for retriggers only when they can be evidence: one that
 * ended in an exception (cancelled, deadline exceeded, worker lost for good) reproduces
 * nothing and passes nothing (verdict.h), so it is no member of the set, and five of them
 * must not leave the set asking for no retrigger. */
static void keep_possible_evidence(run_call *c)
{
    classify *w = c->w;
    size_t kept = 0;
    for (size_t i = 0; i < w->nfound; i++)
        if (strcmp(w->found[i].state, "exception") != 0) w->found[kept++] = w->found[i];
    w->nfound = kept;
    c->facts.existing_retriggers = (int)kept;
}

/* Fetches what the rule asked for into c->facts; false when the request ends (h set). */
static bool learn(run_call *c, rt_elig_need need)
{
    classify *w = c->w;
    rt_pulse_task *msg = c->msg;
    switch (need) {
    case RT_NEED_TASK_DEFINITION:
        if (fetch_task_for(c) != RT_OK) return false;
        if (read_run_facts(w, msg, c->task, &c->pre) != RT_OK) break;
        c->set_id = c->pre.set_id;
        snprintf(c->original, sizeof c->original, "%s", c->pre.original);
        c->published = c->pre.published;
        c->facts.set_known = true;
        c->facts.set_original_task_id = c->set_id ? c->original : NULL;
        return true;
    case RT_NEED_SET_LOOKUP:
        if (classify_find_set(w, c->task->project, c->task->revision, c->task->label, &c->set_id,
                              c->original, &c->published) != RT_OK)
            break;
        c->facts.set_known = true;
        c->facts.set_original_task_id = c->set_id ? c->original : NULL;
        return true;
    case RT_NEED_CLASSIFICATION: {
        rt_th_job job;
        bool found = false;
        char errstr[RT_ERRSTR_SIZE] = "";
        int rc = rt_th_job_for_task(w->http, w->cfg->treeherder_url, msg->task_id, msg->run_id,
                                    &job, &found, errstr);
        if (rc != RT_OK) {
            rt_outcome_upstream(c->h, rc, "treeherder job", errstr);
            return false;
        }
        c->facts.classification_known = true;
        c->facts.classification_id = found ? job.failure_classification_id : 0;
        return true;
    }
    case RT_NEED_ERRORSUMMARY: {
        c->have_es = true; /* freed whatever the fetch left, a timed-out parse too */
        rt_run_fetch fetch = run_fetch(w);
        if (rt_run_fetch_errorsummary(&fetch, msg->task_id, msg->run_id, &c->es, c->h) != RT_OK)
            return false;
        c->facts.errorsummary = &c->es;
        return true;
    }
    case RT_NEED_EXISTING_RETRIGGERS:
        if (!learn_existing_runs(c)) return false;
        keep_possible_evidence(c);
        return true;
    case RT_NEED_NOTHING: return true;
    }
    rt_outcome_set(c->h, RT_SETTLE_REQUEUE, "postgres: %s", rt_pg_errstr(w->pg));
    return false;
}

/* Acts on the rule's verdict: the retriggers of an eligible failure, else the verdict
 * recorded (a retrigger joins its set; a duplicate makes sure its set was published). */
static void act(run_call *c, const rt_elig_result *r)
{
    classify *w = c->w;
    const rt_taskdef *task = c->task;
    if (r->verdict == RT_ELIG_RETRIGGER) {
        /* pooled: no retrigger at first; the pooled set asks (workers/classify/pooled.h). */
        bool pooled = classify_pooled(w->cfg, &c->es);
        int wanted = pooled ? 0 : r->retriggers;
        if (classify_adaptive_first_round(w, task, &c->es, &wanted) != RT_OK)
            rt_outcome_set(c->h, RT_SETTLE_REQUEUE, "postgres: %s", rt_pg_errstr(w->pg));
        else
            classify_request_retriggers(w, c->msg, task, &c->es, wanted, &c->pre, c->h);
        if (pooled && c->h->settle == RT_SETTLE_ACK &&
            classify_pool_join(w->pg, w->http, w->cfg, c->msg->task_id, task, &c->es) != RT_OK)
            rt_outcome_set(c->h, RT_SETTLE_REQUEUE, "joining the pooled set: %s",
                           rt_pg_errstr(w->pg));
        return;
    }
    const char *verdict = rt_elig_verdict_name(r->verdict);
    int rc = RT_OK;
    if (r->code == RT_ELIG_R_IS_RETRIGGER && task) {
        if (!c->set_id && classify_find_set(w, task->project, task->revision, task->label,
                                            &c->set_id, c->original, &c->published) != RT_OK)
            rc = RT_EDB;
        if (rc == RT_OK && c->set_id) rc = classify_join_set(w, c->set_id, c->msg);
    } else if (r->code == RT_ELIG_R_DUPLICATE && task && !c->published) {
        rc = classify_ensure_published(w, task->project, task->revision, task->label);
    }
    if (rc == RT_OK) rc = classify_record_verdict(w, c->msg, verdict, r->reason);
    if (rc != RT_OK) {
        rt_outcome_set(c->h, RT_SETTLE_REQUEUE, "postgres: %s", rt_pg_errstr(w->pg));
        return;
    }
    char run[16];
    snprintf(run, sizeof run, "%d", c->msg->run_id);
    rt_log_debug("classified", "task_id", c->msg->task_id, "run_id", run, "verdict", verdict,
                 "reason", r->reason);
    snprintf(c->h->reason, sizeof c->h->reason, "%s", r->reason); /* for retrig_messages_total */
}

/* The whole decision for one parsed, resolved run: the rule (rt_eligibility_decide) asks for
 * the facts it lacks, one at a time, until it gives a verdict. */
static void classify_run(classify *w, rt_pulse_task *msg, rt_outcome *h)
{
    run_call c = {.w = w, .msg = msg, .h = h, .facts = {.message = msg}};
    w->nfound = 0;
    bool settled = !join_as_member(&c);
    for (int step = 0; step < 10 && !settled; step++) {
        rt_elig_result r;
        rt_eligibility_decide(&w->policy, &c.facts, &r);
        if (r.verdict != RT_ELIG_NEED) {
            act(&c, &r);
            settled = true;
        } else if (!learn(&c, r.need)) {
            settled = true;
        }
    }
    if (!settled) rt_outcome_set(h, RT_SETTLE_DEAD, "internal: eligibility did not settle");
    if (c.have_es) rt_errorsummary_free(&c.es);
    if (c.task_heap && c.task) {
        rt_taskdef_free((rt_taskdef *)c.task);
        free((rt_taskdef *)c.task);
    }
}

/* pre: the delivery already parsed (routes applied) and its run recorded, by the batch
 * (process_batch); NULL: parse and record it here. */
static void handle(classify *w, const rt_amqp_message *m, rt_pulse_task *pre, rt_outcome *h)
{
    if (pre) {
        classify_run(w, pre, h);
        return;
    }
    const char *exchange = rt_amqp_message_header(m, "x-retrig-original-exchange");
    if (!exchange) exchange = m->exchange;
    rt_pulse_task msg;
    char reason[RT_PULSE_REASON_SIZE];
    if (rt_pulse_parse_routed(m->body, m->len, exchange, m->cc, m->cc_count,
                              rt_amqp_message_header(m, "x-retrig-routes"),
                              (size_t)w->cfg->max_message_bytes, &msg, reason) != RT_OK) {
        rt_outcome_set(h, RT_SETTLE_DEAD, "%s", reason);
        return;
    }
    if (msg.event == RT_TASK_EVENT_OTHER || msg.event == RT_TASK_EVENT_UNKNOWN) goto out;
    if (msg.run_id == RT_PULSE_NO_RUN) { /* a deadline passed before any run: skipped */
        snprintf(h->reason, sizeof h->reason, "%s", rt_elig_reason_name(RT_ELIG_R_EXCEPTION));
        goto out;
    }

    rt_run_record run = {.task_id = msg.task_id,
                         .run_id = msg.run_id,
                         .state = classify_member_state(&msg),
                         .reason_resolved = msg.reason_resolved,
                         .task_queue_id = msg.task_queue_id,
                         .task_group_id = msg.task_group_id,
                         .project = msg.project,
                         .revision = msg.revision,
                         .label = msg.tag_label,
                         .scheduled_at = msg.scheduled,
                         .started_at = msg.started,
                         .resolved_at = msg.resolved};
    if (rt_runs_record(w->pg, &run) != RT_OK) {
        if (!strcmp(rt_pg_sqlstate(w->pg), "22007") || !strcmp(rt_pg_sqlstate(w->pg), "22008"))
            rt_outcome_set(h, RT_SETTLE_DEAD, "invalid-value:status.runs[] time");
        else
            rt_outcome_set(h, RT_SETTLE_REQUEUE, "postgres: %s", rt_pg_errstr(w->pg));
        goto out;
    }
    classify_run(w, &msg, h);
out:
    rt_pulse_task_free(&msg);
}

/* Our topology (requests, the retry queue with its delays, decide requests), the Pulse queue
 * bound to the task exchanges, and the consumers. Dead letters of Pulse messages go to our
 * broker's dead-letter exchange, so the Pulse connection knows the same topology names
 * (declared on our broker only). */
static int declare(void *ctx, const rt_worker_conns *conns)
{
    classify *w = ctx;
    const rt_config *cfg = w->cfg;
    rt_amqp *ours = conns->broker, *pulse = conns->pulse ? conns->pulse : conns->broker;
    char decide_queue[300];
    snprintf(decide_queue, sizeof decide_queue, "%s.decide", cfg->amqp_namespace);
    rt_amqp_work_queue queues[] = {
        {w->request_queue, "retrigger", NULL, 0},
        {w->retry_queue, "classify-retry", w->delays, w->ndelays},
        {decide_queue, "decide", NULL, 0},
    };
    int rc = rt_worker_declare_queues(ours, cfg, queues, 3);
    static const char *const events[] = {"task-completed", "task-failed", "task-exception"};
    if (rc == RT_OK) rc = rt_worker_bind_pulse(pulse, cfg, w->pulse_queue, events, 3);
    if (rc == RT_OK) rc = rt_amqp_consume(pulse, w->pulse_queue);
    if (rc == RT_OK) rc = rt_amqp_consume(ours, w->retry_queue);
    return rc;
}

static int setup(classify *w, rt_config *cfg, int cache_size)
{
    char errstr[RT_ERRSTR_SIZE] = "";
    int rc;
    w->cfg = cfg;
    rt_elig_policy_from_config(cfg, &w->policy);
    for (size_t i = 0; i < cfg->retry_delays_ms.count && i < MAX_DELAYS; i++)
        w->delays[w->ndelays++] = atoi(cfg->retry_delays_ms.items[i]);
    snprintf(w->retry_queue, sizeof w->retry_queue, "%s.classify-retry", cfg->amqp_namespace);
    snprintf(w->request_queue, sizeof w->request_queue, "%s.retrigger", cfg->amqp_namespace);
    snprintf(w->request_key, sizeof w->request_key, "retrigger");
    char user[128];
    rt_amqp_url_user(cfg->pulse_url, user, sizeof user);
    snprintf(w->pulse_queue, sizeof w->pulse_queue, "queue/%s/%s", user, cfg->pulse_queue_name);
    w->cache_size = (size_t)cache_size;
    if (w->cache_size && !(w->cache = calloc(w->cache_size, sizeof *w->cache))) return RT_ENOMEM;
    rt_http_options hopts;
    rt_http_options_from_config(&hopts, cfg);
    if ((rc = rt_http_new(&w->http, &hopts, errstr)) != RT_OK) {
        rt_log_error("cannot set up HTTP", "error", errstr);
        return rc;
    }
    rt_worker_setup connect = {
        "classify",      RT_WORKER_NEEDS_BROKER | RT_WORKER_NEEDS_PULSE | RT_WORKER_NEEDS_POSTGRES,
        (int)w->lane,    (int)w->lanes,
        declare,         w,
        &rt_worker_redis};
    if ((rc = rt_worker_connect(cfg, &connect, &w->conns)) != RT_OK) return rc;
    w->ours = w->conns.broker;
    w->pulse = w->conns.pulse ? w->conns.pulse : w->conns.broker;
    w->redis = w->conns.redis;
    w->pg = w->conns.pg;
    w->settler = (rt_worker_settler){w->ours, w->retry_queue, w->delays, w->ndelays, NULL, NULL};
    return RT_OK;
}

static void teardown(classify *w)
{
    rt_worker_disconnect(&w->conns);
    rt_http_free(w->http);
    for (size_t i = 0; i < w->cache_size; i++) rt_taskdef_free(&w->cache[i].def);
    free(w->cache);
}

/* Handles one delivery from src and settles it (ack, retry, dead letter or requeue). */
void classify_process(classify *w, rt_amqp *src, rt_amqp_message *m, rt_pulse_task *pre)
{
    rt_outcome h = {RT_SETTLE_ACK, ""};
    double started = rt_metrics_now();
    handle(w, m, pre, &h);
    if (rt_worker_settle(&w->settler, src, m, &h, started)) rt_worker_pause();
}

/* ---- lanes: classify_concurrency loops in one process ---- */

/* Each lane is a whole classifier (its own broker, Redis, Postgres and HTTP connections and
 * task cache) consuming the same queues, like replicas sharing a process: a lane waiting on
 * Taskcluster does not hold up the others, and each waits for its services on its own. The
 * configuration they share is a snapshot (snapshot.c). */

/* The lane's safe point (after health): a reload, and the newest snapshot. */
/* The newest snapshot, when another lane published one since this lane took its own. */
static void take_newest_snapshot(classify *w)
{
    if (classify_snapshot_generation() == w->snap_generation) return;
    snapshot *old = w->snap;
    w->snap = classify_snapshot_acquire(&w->snap_generation);
    w->cfg = &w->snap->cfg;
    w->policy = w->snap->policy;
    classify_snapshot_release(old);
}

static int lane_tick(void *ctx, bool idle)
{
    (void)idle;
    classify_reload_if_asked();
    take_newest_snapshot(ctx);
    return 0;
}

/* A batch (and a single delivery) starts with the newest snapshot and keeps it to its end: a
 * lane that waited for deliveries while another applied a reload must not handle the first
 * ones that arrive with the configuration before it. */
static void lane_batch(void *ctx, rt_amqp *src, rt_amqp_message *batch, size_t n)
{
    take_newest_snapshot(ctx);
    classify_process_batch(ctx, src, batch, n);
}

/* The retry queue's deliveries on their own connection (when Pulse is another broker). */
static void lane_one(void *ctx, rt_amqp *src, rt_amqp_message *m, rt_outcome *o)
{
    classify *w = ctx;
    take_newest_snapshot(w);
    handle(w, m, NULL, o);
    (void)src;
}

typedef struct lane {
    classify w;
    int cache_size;
    pthread_t thread;
    bool started; /* its thread runs */
    int rc;       /* what its start-up came to */
} lane;

/* One lane's life: wait for its services, consume until a stop, let go. */
static void *lane_main(void *arg)
{
    lane *l = arg;
    classify *w = &l->w;
    w->snap = classify_snapshot_acquire(&w->snap_generation);
    l->rc = setup(w, &w->snap->cfg, l->cache_size);
    w->policy = w->snap->policy;
    if (l->rc == RT_OK) {
        if (w->lane == 0) {
            char count[16];
            snprintf(count, sizeof count, "%zu", w->lanes);
            rt_log_info("consuming", "queue", w->pulse_queue, "retry_queue", w->retry_queue,
                        "lanes", count);
        }
        /* With one connection, deliveries of both queues arrive on it. */
        rt_worker_loop loop = {.cfg = w->cfg,
                               .conns = &w->conns,
                               .lane = (int)w->lane,
                               .lanes = (int)w->lanes,
                               .sources = {w->pulse, w->ours},
                               .batch_max = BATCH_MAX,
                               .settler = &w->settler,
                               .ctx = w,
                               .handle = lane_one,
                               .handle_batch = lane_batch,
                               .tick = lane_tick};
        rt_worker_consume(&loop);
    } else if (l->rc != RT_ESTOPPED) {
        rt_stop_request(); /* a lane that cannot start stops the process */
    }
    teardown(w);
    classify_snapshot_release(w->snap);
    return NULL;
}

static int run(rt_config *cfg)
{
    size_t nlanes = (size_t)cfg->classify_concurrency;
    /* One malloc arena for every lane: an arena per thread costs each lane its own peak of
     * parsed documents in resident memory, and the lanes spend their time waiting. */
    if (nlanes > 1) mallopt(M_ARENA_MAX, 1);
    lane *lanes = calloc(nlanes, sizeof *lanes);
    if (!lanes || classify_snapshot_start(cfg) != RT_OK) {
        free(lanes);
        rt_log_error("out of memory");
        return 1;
    }
    /* The task cache is shared out between the lanes: the process keeps task_cache_size. */
    int cache_size = cfg->task_cache_size;
    for (size_t i = 0; i < nlanes; i++) {
        lanes[i].w.lane = i;
        lanes[i].w.lanes = nlanes;
        lanes[i].cache_size = cache_size / (int)nlanes + (i < (size_t)cache_size % nlanes ? 1 : 0);
    }
    for (size_t i = 1; i < nlanes; i++) {
        if (pthread_create(&lanes[i].thread, NULL, lane_main, &lanes[i]) != 0) {
            rt_log_error("cannot start a lane; stopping");
            lanes[i].rc = RT_ENOMEM;
            rt_stop_request();
            break;
        }
        lanes[i].started = true;
    }
    lane_main(&lanes[0]);
    for (size_t i = 1; i < nlanes; i++)
        if (lanes[i].started) pthread_join(lanes[i].thread, NULL);
    int rc = RT_OK;
    for (size_t i = 0; i < nlanes && rc == RT_OK; i++)
        if (lanes[i].rc != RT_OK && lanes[i].rc != RT_ESTOPPED) rc = lanes[i].rc;
    if (rc == RT_OK) rt_log_info("stopping: finished the messages in hand");
    free(lanes);
    classify_snapshot_stop();
    return rt_worker_exit_status(rc);
}

static int check(rt_config *cfg)
{
    return rt_worker_check_result(rt_worker_check_services(
        cfg, "classify", RT_WORKER_NEEDS_BROKER | RT_WORKER_NEEDS_POSTGRES, &rt_worker_redis));
}

int main(int argc, char **argv)
{
    static const rt_worker_def def = {
        "classify",
        "Consumes Taskcluster task-completed/failed/exception messages from Pulse, decides\n"
        "which failed test tasks to retrigger, and publishes retrigger requests.",
        run,
        check,
    };
    return rt_worker_main(&def, argc, argv);
}
