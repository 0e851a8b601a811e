/* SPDX-License-Identifier: MPL-2.0 */
/* round.c - retrig-retrigger's retrigger requests: one round of a retrigger set, exactly once.
 *
 * For a request: find its set; if the set's round has an outcome, it is done. Otherwise,
 * under the set's session lock (released by Postgres if this process dies), check
 * Treeherder's classification again (a sheriff may have classified the failure: then the
 * budget goes back), fetch the decision task's actions.json, pick the configured action,
 * render its hookPayload with JSON-e, record the intent durably, and only then call the hook
 * with Hawk authentication. A redelivered request that finds an intent without an outcome
 * waits until the interrupted call would have timed out, then looks for the action task in
 * the push's task group, so a call is never repeated when it had reached Taskcluster.
 * Dry-run records the payload and sends nothing.
 *
 * Rounds (common/core/decide_rounds.h): a request names the round of its set it is for (1,
 * retrig-classify's; 2, 3, ... retrig-decide's under decide_policy = adaptive). Everything
 * above holds per (set, round): the intent and outcome, the refund of the round's own ledger
 * row, and the look-up of an interrupted call, which leaves out the action tasks earlier
 * rounds recorded. A later round that fails gives its retriggers back to the set's count and
 * asks retrig-decide to decide with what is there; so does round 1 when runs of the label were
 * found on the push (without any, or when a sheriff classified the failure, the set failed).
 * The statements are common/store/hook_calls.c's. */
#include "workers/retrigger/retrigger.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/decide_rounds.h"
#include "common/core/eligibility.h"
#include "common/io/budget.h"
#include "common/io/log.h"
#include "common/io/metrics.h"
#include "common/io/upstream.h"
#include "common/store/hook_calls.h"
#include "common/store/ledger.h"

typedef struct set_info {
    long long id;
    char id_text[32];
    char project[65], revision[41];
    char label[600];
    char original_task_id[23];
    int count; /* retriggers this round asks for */
    char platform[600];
    char decision_task_id[23];
    int round;
    char round_text[16];
} set_info;

/* Puts the unspent budget of a set's round back: a negative ledger row (once), then the
 * counter. */
static int refund(retrigger *w, const set_info *s, const char *why)
{
    char key[RT_ROUND_KEY_SIZE], refund_key[RT_ROUND_KEY_SIZE];
    if (rt_round_ledger_key(s->id, s->round, key, sizeof key) != RT_OK ||
        rt_round_refund_key(s->id, s->round, refund_key, sizeof refund_key) != RT_OK)
        return RT_EINVAL;
    rt_ledger_refund back;
    int rc = rt_ledger_refund_row(w->pg, key, refund_key, s->id, why, &back);
    if (rc != RT_OK || !back.spent) return rc; /* !spent: nothing was spent */
    /* Only the first refund gives the counter back; a crash in between leaves the counter
     * high, which can only underspend. */
    if (back.inserted)
        rc = rt_budget_refund(w->redis, w->cfg->redis_key_prefix, back.platform, back.day,
                              back.amount);
    return rc;
}

static int record_outcome(retrigger *w, const set_info *s, const char *action_name,
                          const char *outcome_name, const char *action_task_id, const char *error,
                          const char *set_status)
{
    rt_round_outcome o = {.set_id = s->id,
                          .round = s->round,
                          .count = s->count,
                          .action_name = action_name,
                          .decision_task_id = s->decision_task_id,
                          .dry_run = w->cfg->dry_run,
                          .outcome = outcome_name,
                          .action_task_id = action_task_id,
                          .error = error,
                          .set_status = set_status};
    int rc = rt_hook_calls_round_outcome(w->pg, &o);
    if (rc == RT_OK) rt_metric_inc(rt_metrics_std()->retrigger_actions, outcome_name);
    return rc;
}

static int load_set(retrigger *w, long long set_id, int round, set_info *s, bool *found)
{
    memset(s, 0, sizeof *s);
    s->id = set_id;
    s->round = round;
    snprintf(s->id_text, sizeof s->id_text, "%lld", set_id);
    snprintf(s->round_text, sizeof s->round_text, "%d", round);
    rt_round_target t;
    int rc = rt_hook_calls_round_target(w->pg, set_id, round, &t, found);
    if (rc != RT_OK || !*found) return rc;
    snprintf(s->project, sizeof s->project, "%s", t.project);
    snprintf(s->revision, sizeof s->revision, "%s", t.revision);
    snprintf(s->label, sizeof s->label, "%s", t.label);
    snprintf(s->original_task_id, sizeof s->original_task_id, "%s", t.original_task_id);
    s->count = t.count;
    snprintf(s->platform, sizeof s->platform, "%s", t.platform);
    /* In Gecko the push's decision task is the original task's group. */
    snprintf(s->decision_task_id, sizeof s->decision_task_id, "%s", t.task_group_id);
    return RT_OK;
}

/* Did an interrupted call of this round reach Taskcluster? Its action task, leaving out
 * those the set's other rounds recorded (same action, same label). RT_EDB when Postgres
 * cannot say which they are. */
static int find_action_task(retrigger *w, const set_info *s, const char *action_name,
                            char action_task_id[23], bool *exists, char *errstr)
{
    if (s->round == 1)
        return rt_tc_find_action_task(w->http, w->cfg->taskcluster_root_url, s->decision_task_id,
                                      action_name, s->label, s->original_task_id, action_task_id,
                                      exists, errstr);
    char ids[64][23];
    const char *except[64];
    size_t n = 0;
    if (rt_hook_calls_other_action_tasks(w->pg, s->id, s->round, ids, 64, &n) != RT_OK)
        return RT_EDB;
    for (size_t i = 0; i < n; i++) except[i] = ids[i];
    return rt_tc_find_action_task_except(w->http, w->cfg->taskcluster_root_url, s->decision_task_id,
                                         action_name, s->label, s->original_task_id, except, n,
                                         action_task_id, exists, errstr);
}

/* A round whose action failed (its budget is back, its retriggers left the set's count):
 * retrig-decide decides with what is there (round 1: the runs found on the push, when there
 * are any; rt_hook_calls_round_outcome). Best effort: without this request the deadline sweeper
 * asks at the set's deadline. */
static void round_failed(retrigger *w, const set_info *s, const char *why)
{
    if (s->round == 1 && !strcmp(why, "classified-before-trigger")) return; /* the set failed */
    rt_decide_request req = {.set_id = s->id, .attempt = 1};
    snprintf(req.project, sizeof req.project, "%s", s->project);
    snprintf(req.reason, sizeof req.reason, "round-failed: round %d %s", s->round, why);
    char *body = rt_decide_request_build(&req);
    char message_id[96];
    snprintf(message_id, sizeof message_id, "decide-%lld-round-%d-failed", s->id, s->round);
    rt_amqp_publish_opts opts = {.message_id = message_id};
    if (!body || rt_amqp_publish(w->amqp, w->cfg->amqp_namespace, "decide", body, strlen(body),
                                 &opts) != RT_OK)
        rt_log_warn("cannot ask for a decision after a failed round; the sweeper will", "set_id",
                    s->id_text, "round", s->round_text);
    free(body);
}

/* ---- one round of a set: the retrigger action, once ----
 *
 * Under the set's lock (Postgres drops it if the worker dies), in order: a round already
 * finished is a redelivery; a call that may still be in flight waits for its timeout; an
 * interrupted call is looked up in the task group before any new call; a failure a sheriff
 * classified since is not retriggered; then the push's actions.json gives the action, its
 * rendered hook call is checked against the allow-list, the intent is recorded and the hook
 * is called (or, in dry-run, only recorded). Each step returns false when the request ends
 * there, with *h saying how it settles (an ack unless set otherwise). */

typedef struct round_call {
    retrigger *w;
    const rt_retrigger_request *req;
    rt_outcome *h;
    set_info s;
    const char *action_name;
    char action_task_id[23];
    rt_taskdef task;
    json_t *tags, *payload;
    char *payload_text;
    const rt_actions *actions;
    const rt_action *action;
    rt_hawk_credentials creds;
    char errstr[RT_ERRSTR_SIZE];
} round_call;

/* Ends the round without a call: its budget back, the outcome `code` recorded with detail,
 * and a later round's decision asked for. false when storage failed (then requeued). */
static bool give_up(round_call *t, const char *code, const char *detail)
{
    if (refund(t->w, &t->s, code) != RT_OK ||
        record_outcome(t->w, &t->s, t->action_name, code, NULL, detail, "failed") != RT_OK) {
        rt_outcome_set(t->h, RT_SETTLE_REQUEUE, "storage: %s", rt_pg_errstr(t->w->pg));
        return false;
    }
    round_failed(t->w, &t->s, code);
    return true;
}

/* The set of the request, locked for this worker. */
static bool load_and_lock(round_call *t)
{
    bool found = false;
    if (load_set(t->w, t->req->set_id, t->req->round, &t->s, &found) != RT_OK) {
        rt_outcome_set(t->h, RT_SETTLE_REQUEUE, "postgres: %s", rt_pg_errstr(t->w->pg));
        return false;
    }
    if (!found) {
        /* The request may overtake the commit of its set: look again later. */
        if (t->req->round == 1)
            rt_outcome_set(t->h, RT_SETTLE_RETRY, "unknown-set: %lld", t->req->set_id);
        else
            rt_outcome_set(t->h, RT_SETTLE_RETRY, "unknown-set: %lld round %d", t->req->set_id,
                           t->req->round);
        return false;
    }
    return retrigger_lock_set(t->w, t->s.id, t->h);
}

/* What an earlier delivery of this round did, read under the lock (a copy of this request
 * may have been handled by another worker up to a moment ago): false when it finished, its
 * call may still be in flight, or its interrupted call reached Taskcluster. */
static bool no_earlier_call(round_call *t)
{
    retrigger *w = t->w;
    rt_round_call_state earlier;
    if (rt_hook_calls_round_state(w->pg, t->s.id, t->s.round, &earlier) != RT_OK) {
        rt_outcome_set(t->h, RT_SETTLE_REQUEUE, "postgres: %s", rt_pg_errstr(w->pg));
        return false;
    }
    if (earlier.finished) return false; /* done before: a redelivery */
    /* A worker that died in the middle of a call leaves that call in flight: Taskcluster
     * may create the action task after we look for it. Look only once the call would have
     * timed out. */
    long long call_ms = (long long)w->cfg->http_connect_timeout_ms + w->cfg->http_timeout_ms;
    if (earlier.attempts > 0 && earlier.since_call_ms < call_ms) {
        rt_outcome_set(t->h, RT_SETTLE_WAIT,
                       "call-in-flight: the hook call for set %lld started %lld ms ago", t->s.id,
                       earlier.since_call_ms);
        return false;
    }
    if (!earlier.have_intent) return true;
    /* An earlier call was interrupted: did it reach Taskcluster? */
    bool exists = false;
    int rc = find_action_task(w, &t->s, t->action_name, t->action_task_id, &exists, t->errstr);
    if (rc == RT_EDB) {
        rt_outcome_set(t->h, RT_SETTLE_REQUEUE, "postgres: %s", rt_pg_errstr(w->pg));
        return false;
    }
    if (rc != RT_OK) {
        rt_outcome_set(t->h, rt_upstream_transient(rc) ? RT_SETTLE_RETRY : RT_SETTLE_DEAD,
                       "upstream-error: task group: %s", t->errstr);
        return false;
    }
    if (!exists) return true;
    if (record_outcome(w, &t->s, t->action_name, "found-existing", t->action_task_id, NULL,
                       "requested") != RT_OK)
        rt_outcome_set(t->h, RT_SETTLE_REQUEUE, "postgres: %s", rt_pg_errstr(w->pg));
    else
        rt_log_info("action task found; not calling again", "set_id", t->s.id_text, "round",
                    t->s.round_text, "action_task_id", t->action_task_id);
    return false;
}

/* false when a sheriff classified the failure since it was seen (the round is given up). */
static bool still_unclassified(round_call *t)
{
    rt_th_job job;
    bool ingested = false;
    int rc = rt_th_job_for_task(t->w->http, t->w->cfg->treeherder_url, t->s.original_task_id,
                                t->req->run_id, &job, &ingested, t->errstr);
    if (rc != RT_OK) {
        rt_outcome_set(t->h, rt_upstream_transient(rc) ? RT_SETTLE_RETRY : RT_SETTLE_DEAD,
                       "upstream-error: treeherder: %s", t->errstr);
        return false;
    }
    int c = ingested ? job.failure_classification_id : 0;
    if (rt_classification_unclassified(c)) return true;
    char why[64];
    snprintf(why, sizeof why, "classified-before-trigger (classification %d)", c);
    /* The refund first (it happens once, whatever the redeliveries): once the outcome is
     * recorded, the set's budget is back. */
    if (give_up(t, "classified-before-trigger", why))
        rt_log_info("classified before trigger; budget returned", "set_id", t->s.id_text, "round",
                    t->s.round_text);
    return false;
}

/* The retrigger action of the push's actions.json that applies to the original task (by its
 * tags); the task's definition is kept for the hook check. */
static bool find_action(round_call *t)
{
    rt_outcome lookup = {RT_SETTLE_ACK, ""};
    int rc = retrigger_get_actions(t->w, t->s.decision_task_id, &t->actions, &lookup);
    if (rc == RT_OK &&
        (rc = retrigger_fetch_task(t->w, t->s.original_task_id, &t->task, &t->tags, t->h)) != RT_OK)
        return false;
    if (rc == RT_OK) {
        rt_tag tagv[64];
        size_t ntags = 0;
        const char *key;
        json_t *value;
        json_object_foreach(t->tags, key, value)
        {
            if (json_is_string(value) && ntags < 64)
                tagv[ntags++] = (rt_tag){key, json_string_value(value)};
        }
        rc = rt_actions_find(t->actions, t->action_name, tagv, ntags, &t->action, t->errstr);
        if (rc == RT_OK) return true;
        snprintf(lookup.reason, sizeof lookup.reason, "no-retrigger-action: %.200s", t->errstr);
    }
    if (lookup.settle != RT_SETTLE_ACK) { /* transient or broken upstream */
        *t->h = lookup;
        return false;
    }
    if (give_up(t, "no-retrigger-action", lookup.reason))
        rt_log_warn("no retrigger action", "set_id", t->s.id_text, "round", t->s.round_text,
                    "reason", lookup.reason);
    return false;
}

/* The action rendered for this round's runs, and checked: the push wrote actions.json, so
 * what it asks for is signed only if it is ours to ask. */
static bool render_and_check(round_call *t)
{
    json_t *input = rt_actions_input(t->action_name, t->s.label, t->s.count, 0);
    int rc =
        input ? rt_actions_render(t->actions, t->action, t->s.decision_task_id,
                                  rt_action_is_task_group(t->action) ? NULL : t->s.original_task_id,
                                  input, &t->payload, t->errstr)
              : RT_ENOMEM;
    if (rc != RT_OK) {
        json_decref(input);
        /* A template we cannot render exactly is never sent approximately. */
        rt_outcome_set(t->h, RT_SETTLE_DEAD, "cannot render action %s: %s", t->action_name,
                       t->errstr);
        return false;
    }
    const char *refused_code = NULL;
    char refused[RT_ERRSTR_SIZE];
    retrigger_subject subject = {t->s.project, t->s.revision, t->s.original_task_id};
    rc = retrigger_check_hook(t->w, &subject, &t->task, t->action, input, t->payload, &t->creds,
                              &refused_code, refused);
    json_decref(input);
    if (rc != RT_OK) {
        rt_metric_inc(rt_metrics_std()->hooks_refused, "retrigger", refused_code);
        if (give_up(t, "refused-hook", refused)) {
            rt_log_warn("hook call refused; not sent", "set_id", t->s.id_text, "round",
                        t->s.round_text, "hook_group_id", t->action->hook_group_id, "hook_id",
                        t->action->hook_id, "reason", refused);
            rt_outcome_set(t->h, RT_SETTLE_DEAD, "refused-hook: %s", refused);
        }
        return false;
    }
    t->payload_text = json_dumps(t->payload, JSON_COMPACT);
    if (t->payload_text) return true;
    rt_outcome_set(t->h, RT_SETTLE_REQUEUE, "out of memory");
    return false;
}

/* A call of the round starts (retrigger_call_hook's record_call). */
static int record_call(void *ctx, char *errstr)
{
    round_call *t = ctx;
    int rc = rt_hook_calls_round_attempt(t->w->pg, t->s.id, t->s.round);
    if (rc != RT_OK) rt_set_errstr(errstr, "postgres: %s", rt_pg_errstr(t->w->pg));
    return rc;
}

/* The intent recorded, then the hook called (dry-run: only recorded) and its outcome. */
static void send_round(round_call *t)
{
    retrigger *w = t->w;
    set_info *s = &t->s;
    rt_round_intent intent = {.set_id = s->id,
                              .round = s->round,
                              .action_name = t->action_name,
                              .decision_task_id = s->decision_task_id,
                              .hook_group_id = t->action->hook_group_id,
                              .hook_id = t->action->hook_id,
                              .payload = t->payload_text,
                              .dry_run = w->cfg->dry_run};
    if (rt_hook_calls_round_intent(w->pg, &intent) != RT_OK) {
        rt_outcome_set(t->h, RT_SETTLE_REQUEUE, "postgres: %s", rt_pg_errstr(w->pg));
        return;
    }
    if (w->cfg->dry_run) {
        if (record_outcome(w, s, t->action_name, "dry-run", NULL, NULL, "requested") != RT_OK)
            rt_outcome_set(t->h, RT_SETTLE_REQUEUE, "postgres: %s", rt_pg_errstr(w->pg));
        else
            rt_log_info("dry run: hook not called", "set_id", s->id_text, "round", s->round_text,
                        "hook_id", t->action->hook_id);
        return;
    }
    int rc = retrigger_call_hook(w, record_call, t, t->action, t->payload_text, &t->creds,
                                 t->action_task_id, t->h);
    if (rc == RT_EUPSTREAM && t->h->settle == RT_SETTLE_DEAD) {
        /* Taskcluster refused the call itself (a 4xx other than 401, 403 and 429): nothing
         * was created and asking again cannot help. The round failed for good: its budget
         * back, outcome failed, and the set goes on with what it has (give_up). The request
         * is dead-lettered with the reason all the same. */
        rt_outcome refused = *t->h;
        if (give_up(t, "failed", refused.reason)) *t->h = refused;
        return;
    }
    if (rc != RT_OK) {
        if (rt_hook_calls_round_error(w->pg, s->id, s->round, t->h->reason) != RT_OK)
            rt_log_warn("cannot record the error", "set_id", s->id_text);
        return;
    }
    if (record_outcome(w, s, t->action_name, "triggered", t->action_task_id, NULL, "requested") !=
        RT_OK)
        rt_outcome_set(t->h, RT_SETTLE_REQUEUE, "postgres: %s", rt_pg_errstr(w->pg));
    else
        rt_log_info("retrigger action triggered", "set_id", s->id_text, "round", s->round_text,
                    "label", s->label, "action_task_id", t->action_task_id);
}

void retrigger_round(retrigger *w, const rt_retrigger_request *req, rt_outcome *h)
{
    round_call t = {.w = w, .req = req, .h = h, .action_name = w->cfg->retrigger_action};
    if (!load_and_lock(&t)) return;
    if (no_earlier_call(&t) && still_unclassified(&t) && find_action(&t) && render_and_check(&t))
        send_round(&t);
    retrigger_unlock_set(w, t.s.id);
    json_decref(t.tags);
    json_decref(t.payload);
    free(t.payload_text);
    rt_taskdef_free(&t.task);
}
