/* SPDX-License-Identifier: MPL-2.0 */
/* probe.c - retrig-retrigger's culprit probes: add-new-jobs on a push of a culprit search's
 * window, exactly once.
 *
 * A probe request (common/core/culprit_flow.h) asks for `times` runs of the failing label on
 * one push: Gecko's add-new-jobs action of that push's own decision task (the Taskcluster
 * index's gecko.v2.<project>.revision.<revision>.taskgraph.decision), input {"tasks":
 * [label], "times": times}. The same rules as a retrigger: under the set's lock, the row of
 * culprit_pending_probes (set, push) says what the request does (rt_culprit_probe_action_for);
 * the budget of the label's platform is claimed and the intent recorded with its ledger row
 * in one transaction before the hook is called; a call whose outcome is unknown is looked up
 * in the push's task group (skipping earlier attempts' action tasks) before calling again;
 * the hook allow-list checks the call; dry-run records the payload only. A request that
 * cannot be served (no decision task, no add-new-jobs, the hook refused, no budget left)
 * marks the row failed with the reason, and retrig-decide stops the search on it. The
 * statements are common/store/hook_calls.c's. */
#include "workers/retrigger/retrigger.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/culprit_flow.h"
#include "common/io/budget.h"
#include "common/io/log.h"
#include "common/io/metrics.h"
#include "common/io/upstream.h"
#include "common/options.h"
#include "common/store/hook_calls.h"
#include "common/store/ledger.h"

typedef struct probe_ctx {
    retrigger *w;
    const rt_culprit_probe_request *req;
    char set_id[32];
    char round[16], attempt[16], times[16];
} probe_ctx;

/* The request cannot be served: the row says why (retrig-decide stops the search on it). */
static void probe_failed(probe_ctx *p, const char *why, rt_outcome *h)
{
    const rt_culprit_probe_request *r = p->req;
    rt_probe_failure f = {.set_id = r->set_id,
                          .revision = r->revision,
                          .label = r->label,
                          .round = r->round,
                          .attempt = r->attempt,
                          .times = r->times,
                          .confirm = r->confirm,
                          .why = why};
    if (rt_hook_calls_probe_failed(p->w->pg, &f) != RT_OK)
        rt_outcome_set(h, RT_SETTLE_REQUEUE, "postgres: %s", rt_pg_errstr(p->w->pg));
    else
        rt_log_warn("culprit probe failed", "set_id", p->set_id, "revision", r->revision, "reason",
                    why);
}

static void probe_triggered(probe_ctx *p, const char *action_task_id, rt_outcome *h)
{
    if (rt_hook_calls_probe_triggered(p->w->pg, p->req->set_id, p->req->revision, action_task_id) !=
        RT_OK)
        rt_outcome_set(h, RT_SETTLE_REQUEUE, "postgres: %s", rt_pg_errstr(p->w->pg));
    else
        rt_log_info("culprit probe triggered", "set_id", p->set_id, "revision", p->req->revision,
                    "times", p->times, "attempt", p->attempt, "action_task_id", action_task_id);
}

/* Budget for a new attempt: the Redis claim, then in one transaction the backstop, the
 * intent row and the ledger row. *stored false (with h set or the row failed) when the
 * attempt is not recorded. */
static void probe_intent(probe_ctx *p, long pushlog_id, const char *decision_task_id,
                         const rt_action *action, const char *payload, bool *stored, rt_outcome *h)
{
    retrigger *w = p->w;
    const rt_culprit_probe_request *r = p->req;
    *stored = false;
    char day[11], key[160];
    rt_worker_utc_day(day);
    snprintf(key, sizeof key, "culprit-probe:%s:%s:%s", p->set_id, r->revision, p->attempt);
    int limit = 0, ledger = 0;
    if (rt_budget_limit_for(&w->cfg->budget_limits, r->platform, 600, &limit) != RT_OK) limit = 0;
    if (rt_ledger_spent(w->pg, r->platform, day, &ledger) != RT_OK) {
        rt_outcome_set(h, RT_SETTLE_REQUEUE, "postgres: %s", rt_pg_errstr(w->pg));
        return;
    }
    rt_claim_request creq = {.key_prefix = w->cfg->redis_key_prefix,
                             .platform = r->platform,
                             .task_id = key,
                             .day = day,
                             .wanted = r->times,
                             .minimum = r->times,
                             .limit = limit,
                             .ledger_spent = ledger};
    rt_claim claim;
    if (rt_budget_claim_keyed(w->redis, &creq, key, &claim) != RT_OK) {
        rt_outcome_set(h, RT_SETTLE_RETRY, "redis: %s", rt_redis_errstr(w->redis));
        return;
    }
    if (claim.status == RT_CLAIM_EXHAUSTED) {
        probe_failed(p, "budget-exhausted", h);
        return;
    }
    /* EXISTS: a worker claimed and died before recording; its claim is this attempt's. */
    char reason[256];
    snprintf(reason, sizeof reason, "culprit probe of set %s on %.12s (attempt %s)", p->set_id,
             r->revision, p->attempt);
    rt_probe_intent intent = {.set_id = r->set_id,
                              .revision = r->revision,
                              .pushlog_id = pushlog_id,
                              .label = r->label,
                              .round = r->round,
                              .attempt = r->attempt,
                              .times = r->times,
                              .confirm = r->confirm,
                              .decision_task_id = decision_task_id,
                              .payload = payload,
                              .dry_run = w->cfg->dry_run,
                              .hook_group_id = action->hook_group_id,
                              .hook_id = action->hook_id,
                              .platform = r->platform,
                              .day = day,
                              .ledger_key = key,
                              .ledger_reason = reason,
                              .spent = claim.spent};
    int kept = 0, total = 0;
    bool row = false;
    int rc = rt_pg_begin(w->pg);
    if (rc == RT_OK)
        rc = rt_ledger_backstop(w->pg, r->platform, day, limit, claim.spent, claim.spent, &kept,
                                &total);
    bool fits = rc == RT_OK && kept == claim.spent;
    if (fits) rc = rt_hook_calls_probe_intent(w->pg, &intent, &row);
    if (rc == RT_OK && row) rc = rt_pg_commit(w->pg);
    if (rc != RT_OK || !row) {
        int ignored = rt_pg_rollback(w->pg);
        (void)ignored;
        int back = rt_budget_settle_keyed(w->redis, &creq, key, claim.spent, 0, total, NULL);
        (void)back; /* a failed give-back can only underspend */
        if (rc != RT_OK)
            rt_outcome_set(h, RT_SETTLE_REQUEUE, "postgres: %s", rt_pg_errstr(w->pg));
        else if (!fits)
            probe_failed(p, "budget-exhausted", h);
        else
            rt_outcome_set(h, RT_SETTLE_RETRY, "probe-row-moved: set %s push %s", p->set_id,
                           r->revision);
        return;
    }
    *stored = true;
}

/* What one probe request does, step by step (each returns false when the request ends there,
 * with p->h saying how it settles). */
typedef struct probe_call {
    probe_ctx p;
    rt_outcome *h;
    rt_culprit_probe_action kind;
    char decision_task_id[23];
    char previous[RT_CULPRIT_MAX_ATTEMPTS * 23 + 1]; /* earlier attempts' action tasks */
    long pushlog_id;
    rt_taskdef task;
    const rt_actions *actions;
    const rt_action *action;
    json_t *payload;
    char *payload_text;
    rt_hawk_credentials creds;
    char errstr[RT_ERRSTR_SIZE];
} probe_call;

/* What the probe's row says this request does (rt_culprit_probe_action_for), while the
 * search is still on. */
static bool probe_step(probe_call *c)
{
    retrigger *w = c->p.w;
    const rt_culprit_probe_request *r = c->p.req;
    bool searching = false;
    char state[16] = "";
    rt_culprit_probe_row row;
    if (rt_hook_calls_searching(w->pg, r->set_id, &searching) != RT_OK) {
        rt_outcome_set(c->h, RT_SETTLE_REQUEUE, "postgres: %s", rt_pg_errstr(w->pg));
        return false;
    }
    if (!searching) return false; /* the search is over (or its decision gone): nothing to do */
    if (rt_hook_calls_probe_row(w->pg, r->set_id, r->revision, &row, state, c->decision_task_id,
                                c->previous, sizeof c->previous) != RT_OK) {
        rt_outcome_set(c->h, RT_SETTLE_REQUEUE, "postgres: %s", rt_pg_errstr(w->pg));
        return false;
    }
    long long call_ms = (long long)w->cfg->http_connect_timeout_ms + w->cfg->http_timeout_ms;
    c->kind = rt_culprit_probe_action_for(&row, r->attempt, call_ms);
    switch (c->kind) {
    case RT_PROBE_DONE: return false; /* handled before: a redelivery */
    case RT_PROBE_STALE:
        rt_outcome_set(c->h, RT_SETTLE_DEAD, "stale-probe: attempt %d finds attempt %d (%s)",
                       r->attempt, row.attempt, state);
        return false;
    case RT_PROBE_WAIT:
        rt_outcome_set(c->h, RT_SETTLE_WAIT, "call-in-flight: probe of set %s on %s", c->p.set_id,
                       r->revision);
        return false;
    case RT_PROBE_LOOK_UP:
    case RT_PROBE_CREATE:
    case RT_PROBE_NEXT:
    case RT_PROBE_CALL: return true;
    }
    return false;
}

/* An earlier call was interrupted: false when it reached Taskcluster (its action task is
 * recorded) or the task group cannot be read. */
static bool probe_not_sent_before(probe_call *c)
{
    const char *exclude[RT_CULPRIT_MAX_ATTEMPTS];
    size_t nexclude = 0;
    for (char *save = NULL, *id = strtok_r(c->previous, ",", &save);
         id && nexclude < RT_CULPRIT_MAX_ATTEMPTS; id = strtok_r(NULL, ",", &save))
        exclude[nexclude++] = id;
    bool exists = false;
    char found_id[23];
    retrigger *w = c->p.w;
    int rc = rt_tc_find_action_task_except(w->http, w->cfg->taskcluster_root_url,
                                           c->decision_task_id, "add-new-jobs", c->p.req->label,
                                           NULL, exclude, nexclude, found_id, &exists, c->errstr);
    if (rc != RT_OK) {
        rt_outcome_set(c->h, rt_upstream_transient(rc) ? RT_SETTLE_RETRY : RT_SETTLE_DEAD,
                       "upstream-error: task group: %s", c->errstr);
        return false;
    }
    if (!exists) return true;
    rt_log_info("culprit probe's action task found; not calling again", "set_id", c->p.set_id,
                "action_task_id", found_id);
    probe_triggered(&c->p, found_id, c->h);
    return false;
}

/* The push's own decision task, its actions.json's add-new-jobs rendered for the probe, and
 * the hook call checked against the allow-list. */
static bool probe_render(probe_call *c)
{
    retrigger *w = c->p.w;
    const rt_culprit_probe_request *r = c->p.req;
    int rc =
        rt_tc_push_decision_task(w->http, w->cfg->taskcluster_root_url, r->project, r->revision,
                                 c->decision_task_id, &c->pushlog_id, &c->task, c->errstr);
    if (rc != RT_OK) {
        if (rt_upstream_transient(rc))
            rt_outcome_set(c->h, RT_SETTLE_RETRY, "upstream-error: decision task: %s", c->errstr);
        else
            probe_failed(&c->p, "no-decision-task", c->h);
        return false;
    }
    rt_outcome lookup = {RT_SETTLE_ACK, ""};
    if (retrigger_get_actions(w, c->decision_task_id, &c->actions, &lookup) != RT_OK) {
        if (lookup.settle != RT_SETTLE_ACK)
            *c->h = lookup;
        else
            probe_failed(&c->p, "no-add-new-jobs-action", c->h);
        return false;
    }
    if (rt_actions_find(c->actions, "add-new-jobs", NULL, 0, &c->action, c->errstr) != RT_OK ||
        !rt_action_is_task_group(c->action)) {
        probe_failed(&c->p, "no-add-new-jobs-action", c->h);
        return false;
    }
    json_t *input = rt_actions_input("add-new-jobs", r->label, r->times, 0);
    rc = input ? rt_actions_render(c->actions, c->action, c->decision_task_id, NULL, input,
                                   &c->payload, c->errstr)
               : RT_ENOMEM;
    if (rc != RT_OK) {
        json_decref(input);
        rt_outcome_set(c->h, RT_SETTLE_DEAD, "cannot render add-new-jobs: %s", c->errstr);
        return false;
    }
    retrigger_subject subject = {r->project, r->revision, NULL};
    const char *refused_code = NULL;
    char refused[RT_ERRSTR_SIZE];
    rc = retrigger_check_hook(w, &subject, &c->task, c->action, input, c->payload, &c->creds,
                              &refused_code, refused);
    json_decref(input);
    if (rc != RT_OK) {
        rt_metric_inc(rt_metrics_std()->hooks_refused, "culprit-probe", refused_code);
        rt_log_warn("add-new-jobs hook call refused; not sent", "set_id", c->p.set_id,
                    "hook_group_id", c->action->hook_group_id, "hook_id", c->action->hook_id,
                    "reason", refused);
        probe_failed(&c->p, "refused-hook", c->h);
        return false;
    }
    c->payload_text = json_dumps(c->payload, JSON_COMPACT);
    if (c->payload_text) return true;
    rt_outcome_set(c->h, RT_SETTLE_REQUEUE, "out of memory");
    return false;
}

/* A call of the probe starts (retrigger_call_hook's record_call). */
static int record_call(void *ctx, char *errstr)
{
    probe_call *c = ctx;
    int rc = rt_hook_calls_probe_calling(c->p.w->pg, c->p.req->set_id, c->p.req->revision);
    if (rc != RT_OK) rt_set_errstr(errstr, "postgres: %s", rt_pg_errstr(c->p.w->pg));
    return rc;
}

/* A new attempt's budget and intent first; then the call (dry-run: none) and its outcome. */
static void probe_send(probe_call *c)
{
    retrigger *w = c->p.w;
    const rt_culprit_probe_request *r = c->p.req;
    if (c->kind == RT_PROBE_CREATE || c->kind == RT_PROBE_NEXT) {
        bool stored = false;
        probe_intent(&c->p, c->pushlog_id, c->decision_task_id, c->action, c->payload_text, &stored,
                     c->h);
        if (!stored) return;
    }
    if (w->cfg->dry_run) {
        rt_log_info("dry run: add-new-jobs not called", "set_id", c->p.set_id, "revision",
                    r->revision, "hook_id", c->action->hook_id);
        return;
    }
    char action_task_id[23] = "";
    if (retrigger_call_hook(w, record_call, c, c->action, c->payload_text, &c->creds,
                            action_task_id, c->h) == RT_OK) {
        probe_triggered(&c->p, action_task_id, c->h);
        return;
    }
    if (rt_hook_calls_probe_error(w->pg, r->set_id, r->revision, c->h->reason) != RT_OK)
        rt_log_warn("cannot record the error", "set_id", c->p.set_id);
}

void retrigger_probe(retrigger *w, const rt_culprit_probe_request *r, rt_outcome *h)
{
    probe_call c = {.p = {.w = w, .req = r}, .h = h};
    snprintf(c.p.set_id, sizeof c.p.set_id, "%lld", r->set_id);
    snprintf(c.p.round, sizeof c.p.round, "%d", r->round);
    snprintf(c.p.attempt, sizeof c.p.attempt, "%d", r->attempt);
    snprintf(c.p.times, sizeof c.p.times, "%d", r->times);
    if (!retrigger_lock_set(w, r->set_id, h)) return;
    if (probe_step(&c) && (c.kind != RT_PROBE_LOOK_UP || probe_not_sent_before(&c)) &&
        probe_render(&c))
        probe_send(&c);
    retrigger_unlock_set(w, r->set_id);
    json_decref(c.payload);
    free(c.payload_text);
    rt_taskdef_free(&c.task);
}
