/* SPDX-License-Identifier: MPL-2.0 */
/* request.c - retrig-classify's retrigger request for an eligible failure (classify.h): the
 * steps of common/core/claim_flow.h performed (the ledger read, the Redis claim, the set found
 * or created with its backstop and ledger row, give-backs and refunds), the request published
 * with a confirm under the set's row lock and marked published, and a set found without its
 * request published again. */
#include "workers/classify/classify.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/claim_flow.h"
#include "common/core/decide_rounds.h"
#include "common/core/evidence.h"
#include "common/core/messages.h"
#include "common/core/retrigger_set.h"
#include "common/io/budget.h"
#include "common/io/history_store.h"
#include "common/io/log.h"
#include "common/io/metrics.h"
#include "common/options.h"
#include "common/policy.h"
#include "common/store/ledger.h"
#include "common/store/runs.h"
#include "common/store/sets.h"

/* ---- the retrigger request ---- */

/* A set that asks for no retrigger (the runs on the push are enough): its decide request in
 * place of a retrigger request, and the mark, committed together as publish_request does. */
static int publish_found_only(classify *w, const char *project, const rt_set_row *s)
{
    rt_decide_request req = {.set_id = s->id, .attempt = 1};
    snprintf(req.project, sizeof req.project, "%s", project);
    snprintf(req.reason, sizeof req.reason, "existing-runs");
    char *body = rt_decide_request_build(&req);
    if (!body) return RT_ENOMEM;
    char message_id[64];
    snprintf(message_id, sizeof message_id, "decide-%lld-found", s->id);
    rt_amqp_publish_opts opts = {.message_id = message_id};
    int rc = rt_amqp_publish(w->ours, w->cfg->amqp_namespace, "decide", body, strlen(body), &opts);
    free(body);
    if (rc != RT_OK) return rc;
    return rt_sets_mark_published_commit(w->pg, s->id);
}

/* Publishes the retrigger request of a locked set and marks it published, committing the
 * caller's transaction with the mark (one round trip): a concurrent replica waits on the
 * row lock for the mark and never publishes twice. */
static int publish_request(classify *w, const char *project, const char *revision,
                           const char *label, const rt_set_row *s)
{
    if (s->count == 0) return publish_found_only(w, project, s);
    rt_retrigger_request req = {.set_id = s->id,
                                .label = strdup(label),
                                .run_id = s->original_run_id,
                                .platform = strdup(s->platform),
                                .task_queue_id = strdup(s->task_queue_id),
                                .times = s->count,
                                .round = 1};
    snprintf(req.project, sizeof req.project, "%s", project);
    snprintf(req.revision, sizeof req.revision, "%s", revision);
    snprintf(req.task_id, sizeof req.task_id, "%s", s->original_task_id);
    snprintf(req.task_group_id, sizeof req.task_group_id, "%s", s->task_group_id);
    rt_worker_utc_now(req.requested_at);
    char reason[RT_MESSAGE_REASON_SIZE];
    /* Stored lists that cannot be read go out empty, as they always did. */
    char *body = rt_request_lists_read(&req, s->failing_groups, s->failures, reason) != RT_ENOMEM
                     ? rt_retrigger_request_build(&req)
                     : NULL;
    rt_retrigger_request_free(&req);
    if (!body) return RT_ENOMEM;
    char message_id[64];
    snprintf(message_id, sizeof message_id, "retrigger-set-%lld", s->id);
    rt_amqp_publish_opts opts = {.message_id = message_id};
    int rc =
        rt_amqp_publish(w->ours, w->cfg->amqp_namespace, w->request_key, body, strlen(body), &opts);
    free(body);
    if (rc != RT_OK) return rc;
    return rt_sets_mark_published_commit(w->pg, s->id);
}

/* Publishes the set's request unless somebody did: right after the set's transaction
 * commits, and again on a redelivery when a crash or an error came in between. Under the
 * set's row lock, so that replicas racing here publish it once. */
int classify_ensure_published(classify *w, const char *project, const char *revision,
                              const char *label)
{
    rt_set_row s;
    bool found = false;
    int rc = rt_sets_lock(w->pg, project, revision, label, &s, &found);
    bool publish = rc == RT_OK && found && !s.published;
    if (publish) rc = publish_request(w, project, revision, label, &s); /* commits */
    rt_set_row_free(&s);
    if (rc == RT_OK && !publish) return rt_pg_commit(w->pg);
    if (rc != RT_OK && rt_pg_in_transaction(w->pg)) {
        int ignored = rt_pg_rollback(w->pg);
        (void)ignored;
    }
    return rc;
}

/* The runs already on the push, as classify_create_set takes them:
 * [{task_id, run_id, state}] (malloc'd JSON text; NULL when out of memory). */
static char *found_json(const classify *w)
{
    rt_found_run *runs = calloc(w->nfound + 1, sizeof *runs);
    if (!runs) return NULL;
    size_t n = 0;
    for (size_t i = 0; i < w->nfound; i++) {
        rt_member_state state;
        if (!rt_member_state_parse(w->found[i].state, &state)) continue; /* not a run state */
        runs[n++] = (rt_found_run){.task_id = w->found[i].task_id,
                                   .run_id = w->found[i].run_id,
                                   .state = rt_member_state_name(state)};
    }
    char *text = rt_found_runs_json(runs, n);
    free(runs);
    return text;
}

/* retrig_retriggers_requested_total and today's budget gauges after a spend. total: the
 * counter the claim left (< 0: ask Redis, as after the backstop gave some back). */
static void report_budget(classify *w, const char *platform, const char *day, int limit, int spent,
                          int total)
{
    const rt_std_metrics *m = rt_metrics_std();
    rt_metric_add(m->retriggers_requested, spent, platform);
    if (total < 0 &&
        rt_budget_spent(w->redis, w->cfg->redis_key_prefix, platform, day, &total) != RT_OK)
        return;
    rt_metric_set(m->budget_spent, total, platform);
    rt_metric_set(m->budget_left, limit > total ? limit - total : 0, platform);
}

/* decide_policy = adaptive: round 1 asks for the model's first batch for the failing tests
 * (their history on other pushes, common/io/history_store.h) less the runs found on the
 * push, instead of eligibility's retriggers_per_failure less them (*wanted, left as it is
 * under seed). */
int classify_adaptive_first_round(classify *w, const rt_taskdef *task, const rt_errorsummary *es,
                                  int *wanted)
{
    if (rt_decide_policy_from_config(w->cfg) != RT_POLICY_ADAPTIVE) return RT_OK;
    rt_decide_settings model;
    rt_decide_settings_from_config(w->cfg, &model);
    /* One line a failing test (the decision compares lines; the history is the test's). */
    rt_failure_line lines[RT_VERDICT_MAX_LINES];
    size_t n = 0;
    for (size_t i = 0; es && i < es->nfailures && n < RT_VERDICT_MAX_LINES; i++) {
        const char *test = es->failures[i].test;
        bool seen = !test || !test[0];
        for (size_t k = 0; !seen && k < n; k++) seen = !strcmp(lines[k].test, test);
        if (!seen) lines[n++] = (rt_failure_line){.test = (char *)test};
    }
    rt_decide_history history[RT_VERDICT_MAX_LINES];
    rt_history_lookup q = {.repository = w->cfg->history_repository,
                           .window_days = w->cfg->history_flaky_window_days,
                           .min_branches = w->cfg->history_flaky_min_branches,
                           .project = task->project,
                           .revision = task->revision};
    int rc = rt_history_model_counts(w->pg, &q, NULL, lines, n, history);
    if (rc != RT_OK) return rc;
    *wanted = (int)rt_round_first(&model, history, n, w->nfound);
    return RT_OK;
}

/* What the set claim works on: the run, its task and the (platform, day) budget. */
typedef struct set_claim {
    classify *w;
    const rt_pulse_task *msg;
    const rt_taskdef *task;
    const rt_errorsummary *es;
    const char *platform;
    char day[11];
    rt_claim_request req;
    long long set_id; /* FIND_SET: the set found (0: none) */
} set_claim;

/* The set, the backstop under the (platform, day) lock, the ledger row and the run's
 * verdict, in one call (migration 0012): committed together, or nothing is written (the
 * set exists, or the backstop refused). The request is published after it, so it never
 * names a set that a crash or a lost connection rolled back. */
static int create_set(set_claim *c, int count, int minimum, rt_claim_flow_facts *f)
{
    classify *w = c->w;
    const rt_pulse_task *msg = c->msg;
    const rt_taskdef *task = c->task;
    char *groups_text = NULL, *failures_text = NULL;
    int lists = rt_request_lists_build(c->es, &groups_text, &failures_text);
    char *found_text = found_json(w);
    rt_set_create in = {.project = task->project,
                        .revision = task->revision,
                        .label = task->label,
                        .platform = c->platform,
                        .task_id = msg->task_id,
                        .run_id = msg->run_id,
                        .count = count,
                        .failing_groups = groups_text,
                        .failures = failures_text,
                        .task_group_id = msg->task_group_id,
                        .task_queue_id =
                            msg->task_queue_id ? msg->task_queue_id : task->task_queue_id,
                        .day = c->day,
                        .limit = c->req.limit,
                        .minimum = minimum,
                        .found = found_text};
    rt_set_created out;
    /* A failure list that cannot be written is an error, never an empty list. */
    int rc = lists == RT_OK && found_text ? rt_sets_create(w->pg, &in, &out) : RT_ENOMEM;
    free(found_text);
    free(groups_text);
    free(failures_text);
    if (rc == RT_OK) {
        f->created = out.created;
        f->refused = out.refused;
        f->kept = out.created ? out.kept : count;
        f->ledger_total = out.ledger_total;
    }
    return rc;
}

/* The line a step's note asks for, before the step. */
static void note(const set_claim *c, const rt_claim_flow_step *s, const rt_claim_flow_facts *f)
{
    const char *task_id = c->msg->task_id;
    char claimed[16], kept[16], total[16];
    switch (s->note) {
    case RT_CLAIM_NOTE_NONE: break;
    case RT_CLAIM_NOTE_EXHAUSTED_RUNS_DECIDE:
        rt_log_info("budget exhausted: the runs already on the push decide", "task_id", task_id,
                    "platform", c->platform, "day", c->day);
        break;
    case RT_CLAIM_NOTE_EXHAUSTED:
        rt_log_info("budget exhausted", "task_id", task_id, "platform", c->platform, "day", c->day);
        break;
    case RT_CLAIM_NOTE_BACKSTOP_CUT:
        snprintf(claimed, sizeof claimed, "%d", s->claimed);
        snprintf(kept, sizeof kept, "%d", s->kept);
        snprintf(total, sizeof total, "%d", f->ledger_total);
        rt_log_warn("budget backstop: the ledger leaves less than Redis granted", "task_id",
                    task_id, "platform", c->platform, "day", c->day, "claimed", claimed, "kept",
                    kept, "ledger", total);
        break;
    case RT_CLAIM_NOTE_SETTLE_FAILED:
        rt_log_warn("budget give-back failed", "task_id", task_id, "error",
                    rt_redis_errstr(c->w->redis));
        break;
    case RT_CLAIM_NOTE_REFUND_FAILED:
        rt_log_warn("budget refund failed", "task_id", task_id, "error",
                    rt_redis_errstr(c->w->redis));
        break;
    }
    if (s->set_gauges) {
        rt_metric_set(rt_metrics_std()->budget_left, s->gauge_left, c->platform);
        rt_metric_set(rt_metrics_std()->budget_spent, s->gauge_spent, c->platform);
    }
}

/* Performs one step of the claim (common/core/claim_flow.h) and records its result. */
static void perform(set_claim *c, const rt_claim_flow_step *s, rt_claim_flow_facts *f)
{
    classify *w = c->w;
    const rt_taskdef *task = c->task;
    const char *task_id = c->msg->task_id;
    int rc = RT_OK;
    switch (s->action) {
    case RT_CLAIM_READ_LEDGER:
        rc = rt_ledger_spent(w->pg, c->platform, c->day, &f->ledger_spent);
        c->req.ledger_spent = f->ledger_spent;
        f->ledger = (rt_claim_call){true, rc};
        break;
    case RT_CLAIM_REDIS:
        c->req.wanted = s->wanted;
        c->req.minimum = s->minimum;
        rc = rt_budget_claim(w->redis, &c->req, &f->claim_result);
        f->claim = (rt_claim_call){true, rc};
        f->claims++;
        f->claim_owner_is_self = rc == RT_OK && f->claim_result.status == RT_CLAIM_EXISTS &&
                                 !strcmp(f->claim_result.owner_task_id, task_id);
        break;
    case RT_CLAIM_FIND_SET: {
        char original[23] = "";
        bool published = false;
        c->set_id = 0;
        rc = classify_find_set(w, task->project, task->revision, task->label, &c->set_id, original,
                               &published);
        f->find_set = (rt_claim_call){true, rc};
        f->set_exists = rc == RT_OK && c->set_id != 0;
        f->set_original_is_self = f->set_exists && !strcmp(original, task_id);
        break;
    }
    case RT_CLAIM_JOIN_SET:
        f->join = (rt_claim_call){true, classify_join_set(w, c->set_id, c->msg)};
        break;
    case RT_CLAIM_CREATE_SET:
        f->create = (rt_claim_call){true, create_set(c, s->count, s->minimum, f)};
        break;
    case RT_CLAIM_SETTLE:
        rc = rt_budget_settle(w->redis, &c->req, s->claimed, s->kept, s->ledger_total, NULL);
        f->settle = (rt_claim_call){true, rc};
        break;
    case RT_CLAIM_REFUND:
        rc = rt_budget_refund(w->redis, w->cfg->redis_key_prefix, c->platform, c->day, s->amount);
        f->refund = (rt_claim_call){true, rc};
        break;
    case RT_CLAIM_PUBLISH:
        rc = classify_ensure_published(w, task->project, task->revision, task->label);
        f->publish = (rt_claim_call){true, rc};
        break;
    case RT_CLAIM_RECORD_VERDICT:
        f->verdict =
            (rt_claim_call){true, classify_record_verdict(w, c->msg, "skip", s->verdict_reason)};
        break;
    case RT_CLAIM_DONE: break;
    }
}

/* How the message settles, as the claim's last step says, with its log line. */
static void conclude(const set_claim *c, const rt_claim_flow_step *s, const rt_claim_flow_facts *f,
                     rt_outcome *h)
{
    classify *w = c->w;
    const rt_taskdef *task = c->task;
    if (s->reason) snprintf(h->reason, sizeof h->reason, "%s", s->reason);
    rt_settle how = s->end == RT_CLAIM_END_RETRY ? RT_SETTLE_RETRY : RT_SETTLE_REQUEUE;
    switch (s->end == RT_CLAIM_END_ACK ? RT_CLAIM_CAUSE_NONE : s->cause) {
    case RT_CLAIM_CAUSE_NONE: break;
    case RT_CLAIM_CAUSE_POSTGRES:
        rt_outcome_set(h, how, "postgres: %s", rt_pg_errstr(w->pg));
        return;
    case RT_CLAIM_CAUSE_REDIS:
        rt_outcome_set(h, how, "redis: %s", rt_redis_errstr(w->redis));
        return;
    case RT_CLAIM_CAUSE_CREATE_SET:
        rt_outcome_set(h, how, "creating the set: %s",
                       s->error == RT_ENOMEM ? "out of memory" : rt_pg_errstr(w->pg));
        return;
    case RT_CLAIM_CAUSE_PUBLISH:
        rt_outcome_set(h, how, "publishing the retrigger request: %s / %s", rt_pg_errstr(w->pg),
                       rt_amqp_errstr(w->ours));
        return;
    case RT_CLAIM_CAUSE_SET_IN_PROGRESS:
        /* Its owner is between Redis and Postgres: look again later. */
        rt_outcome_set(h, how, "set-in-progress: owned by %s", f->claim_result.owner_task_id);
        return;
    }
    if (s->reason && !strcmp(s->reason, "existing-runs")) {
        char found[16];
        snprintf(found, sizeof found, "%zu", w->nfound);
        rt_log_info("set made from the runs already on the push; no retrigger asked for", "task_id",
                    c->msg->task_id, "project", task->project, "label", task->label, "runs", found);
    } else if (s->reason && !strcmp(s->reason, "retriggers-requested")) {
        report_budget(w, c->platform, c->day, c->req.limit, s->spent, s->counter_total);
        char sp[16];
        snprintf(sp, sizeof sp, "%d", s->spent);
        rt_log_info("retriggers requested", "task_id", c->msg->task_id, "project", task->project,
                    "label", task->label, "platform", c->platform, "times", sp);
    }
}

/* Claims budget and set, creates the set, publishes the request: the steps of
 * common/core/claim_flow.h, performed here. */
void classify_request_retriggers(classify *w, const rt_pulse_task *msg, const rt_taskdef *task,
                                 const rt_errorsummary *es, int wanted, const run_facts *facts,
                                 rt_outcome *h)
{
    set_claim c = {.w = w, .msg = msg, .task = task, .es = es};
    c.platform = task->platform ? task->platform : "unknown";
    rt_worker_utc_day(c.day);
    int limit = 0;
    if (rt_budget_limit_for(&w->cfg->budget_limits, c.platform, 600, &limit) != RT_OK) limit = 0;
    /* What the durable ledger says was spent today, the floor of the Redis counter: read
     * with the run's facts, unless the day has turned since. */
    bool ledger_known = facts->known && !strcmp(facts->day, c.day);
    c.req = (rt_claim_request){.key_prefix = w->cfg->redis_key_prefix,
                               .project = task->project,
                               .revision = task->revision,
                               .label = task->label,
                               .platform = c.platform,
                               .task_id = msg->task_id,
                               .day = c.day,
                               .limit = limit,
                               .ledger_spent = facts->ledger_spent};
    rt_claim_flow_facts f = {.wanted = wanted,
                             .budget_minimum = w->cfg->budget_minimum,
                             .limit = limit,
                             .runs_found = w->nfound,
                             .ledger_known = ledger_known,
                             .ledger_spent = facts->ledger_spent};
    rt_claim_flow_step s;
    for (rt_claim_flow_next(&f, &s); s.action != RT_CLAIM_DONE; rt_claim_flow_next(&f, &s)) {
        note(&c, &s, &f);
        perform(&c, &s, &f);
    }
    conclude(&c, &s, &f, h);
}
