/* SPDX-License-Identifier: MPL-2.0 */
/* rounds.c - retrig-decide's side of the verdict policy (see rounds.h). */
#include "workers/decide/rounds.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/core/evidence.h"
#include "common/core/limits.h"
#include "common/core/messages.h"
#include "common/core/utf8.h"
#include "common/io/budget.h"
#include "common/io/history_store.h"
#include "common/io/metrics.h"
#include "common/policy.h"
#include "common/store/ledger.h"
#include "common/store/set_rounds.h"
#include "common/worker.h"

/* What a later round's request repeats of the set (round 1's request, retrig-classify). */
typedef struct set_row {
    char status[16];
    bool latest_published;
    char platform[600];
    char label[1024];
    char original_task_id[23];
    int original_run_id;
    char task_group_id[23];
    char task_queue_id[300];
    char *failing_groups, *failures; /* JSON text */
} set_row;

static void set_row_free(set_row *s)
{
    free(s->failing_groups);
    free(s->failures);
    s->failing_groups = s->failures = NULL;
}

void decide_rounds_init(decide_rounds *r, const rt_config *cfg, rt_pg *pg, rt_redis *redis,
                        rt_amqp *amqp)
{
    memset(r, 0, sizeof *r);
    r->cfg = cfg;
    r->policy = rt_decide_policy_from_config(cfg);
    rt_decide_settings_from_config(cfg, &r->model);
    r->pg = pg;
    r->redis = redis;
    r->amqp = amqp;
}

bool decide_rounds_asks(const rt_config *cfg)
{
    return rt_decide_policy_from_config(cfg) == RT_POLICY_ADAPTIVE || rt_decide_policy_pooled(cfg);
}

/* The set's rounds into view->state (row: what a later round repeats, when not NULL). */
static int load_state(decide_rounds *r, const rounds_set *set, rounds_view *view, set_row *row)
{
    rt_set_rounds st;
    int rc = rt_set_rounds_read(r->pg, set->id, &st);
    if (rc != RT_OK) return rc;
    view->state = (rt_round_state){
        .round = st.round,
        .requested = (size_t)(st.retrigger_count + st.later_retriggers),
        .found = (size_t)st.found_count,
        .no_more = st.refused || st.round_failed,
        .deadline = set->deadline,
    };
    view->refused = st.refused;
    view->rounds = (st.retrigger_count > 0) + (view->state.round - 1);
    view->loaded = true;
    if (row) {
        memset(row, 0, sizeof *row);
        snprintf(row->status, sizeof row->status, "%s", st.status);
        row->latest_published = st.latest_published;
        snprintf(row->platform, sizeof row->platform, "%s", st.platform);
        snprintf(row->label, sizeof row->label, "%s", st.label);
        snprintf(row->original_task_id, sizeof row->original_task_id, "%s", st.original_task_id);
        row->original_run_id = st.original_run_id;
        snprintf(row->task_group_id, sizeof row->task_group_id, "%s", st.task_group_id);
        snprintf(row->task_queue_id, sizeof row->task_queue_id, "%s", st.task_queue_id);
        row->failing_groups = st.failing_groups; /* ownership moves to row */
        row->failures = st.failures;
        st.failing_groups = st.failures = NULL;
    }
    rt_set_rounds_free(&st);
    return RT_OK;
}

/* The history of each line and the plan. */
static int evaluate(decide_rounds *r, const rounds_set *set, rounds_view *view)
{
    const rt_verdict_input *ev = set->evidence;
    view->nlines = ev->noriginal < RT_VERDICT_MAX_LINES ? ev->noriginal : RT_VERDICT_MAX_LINES;
    rt_history_lookup q = {.repository = r->cfg->history_repository,
                           .window_days = r->cfg->history_flaky_window_days,
                           .min_branches = r->cfg->history_flaky_min_branches,
                           .project = set->project,
                           .revision = set->revision};
    int rc = rt_history_model_counts(r->pg, &q, set->failure_seen_at, ev->original, view->nlines,
                                     view->history);
    if (rc != RT_OK) return rc;
    unsigned hints[RT_VERDICT_MAX_LINES];
    for (size_t i = 0; i < view->nlines; i++)
        hints[i] =
            rt_round_hints(ev->original_tracked && ev->original_tracked[i], set->classification_id);
    rt_policy_input in = {.evidence = *ev,
                          .history = view->history,
                          .hints = hints,
                          .retriggers_per_failure = r->cfg->retriggers_per_failure,
                          .model = &r->model};
    in.evidence.noriginal = view->nlines;
    rc = rt_round_plan_for(r->policy, &in, &view->state, &view->plan);
    view->evaluated = rc == RT_OK;
    return rc;
}

/* The request for round `round` of `times` retriggers, as retrig-classify writes round 1's
 * (queue-schemas/retrigger-request.json) with the round named. NULL: out of memory. */
static char *round_request(const rounds_set *set, const set_row *row, int round, int times)
{
    rt_retrigger_request req = {.set_id = set->id,
                                .label = strdup(row->label),
                                .run_id = row->original_run_id,
                                .platform = strdup(row->platform),
                                .task_queue_id = strdup(row->task_queue_id),
                                .times = times,
                                .round = round};
    snprintf(req.project, sizeof req.project, "%s", set->project);
    snprintf(req.revision, sizeof req.revision, "%s", set->revision);
    snprintf(req.task_id, sizeof req.task_id, "%s", row->original_task_id);
    snprintf(req.task_group_id, sizeof req.task_group_id, "%s", row->task_group_id);
    rt_worker_utc_now(req.requested_at);
    char reason[RT_MESSAGE_REASON_SIZE];
    char *body = rt_request_lists_read(&req, row->failing_groups, row->failures, reason) == RT_OK
                     ? rt_retrigger_request_build(&req)
                     : NULL; /* never a shorter list */
    rt_retrigger_request_free(&req);
    return body;
}

/* Publishes round `round`'s request unless it was (a replica, or an earlier attempt of this
 * request, did), and marks it published: under the round's row lock, so that it goes out
 * once while replicas race here. */
static int publish_round(decide_rounds *r, const rounds_set *set, const set_row *row, int round)
{
    bool publish = false;
    int times = 0;
    int rc = rt_set_rounds_lock(r->pg, set->id, round, &publish, &times);
    if (rc == RT_OK && publish) {
        char *body = round_request(set, row, round, times);
        char message_id[RT_ROUND_KEY_SIZE];
        rc = body ? rt_round_message_id(set->id, round, message_id, sizeof message_id) : RT_ENOMEM;
        rt_amqp_publish_opts opts = {.message_id = message_id};
        if (rc == RT_OK)
            rc = rt_amqp_publish(r->amqp, r->cfg->amqp_namespace, "retrigger", body, strlen(body),
                                 &opts);
        free(body);
        if (rc == RT_OK) rc = rt_set_rounds_published(r->pg, set->id, round);
    }
    if (rc == RT_OK) return rt_pg_commit(r->pg);
    if (rt_pg_in_transaction(r->pg)) {
        int ignored = rt_pg_rollback(r->pg);
        (void)ignored;
    }
    return rc;
}

typedef enum { ASK_MADE, ASK_REFUSED, ASK_STALE } ask_result;

/* Gives back to Redis what the round's claim took and Postgres did not keep. */
static void settle_claim(decide_rounds *r, const rt_claim_request *req, const char *key,
                         int claimed, int kept, int ledger_total)
{
    if (rt_budget_settle_keyed(r->redis, req, key, claimed, kept, ledger_total, NULL) != RT_OK)
        /* The counter only stays high, which can only underspend. */
        rt_log_warn("budget give-back failed", "error", rt_redis_errstr(r->redis));
}

/* Asks for the plan's round the way retrig-classify asks for round 1 (rounds.h). */
static int ask_round(decide_rounds *r, const rounds_set *set, const set_row *row,
                     const rounds_view *view, ask_result *out)
{
    const rt_round_plan *plan = &view->plan;
    char claim_key[RT_ROUND_KEY_SIZE], ledger_key[RT_ROUND_KEY_SIZE];
    int rc = rt_round_claim_key(set->id, plan->round, claim_key, sizeof claim_key);
    if (rc == RT_OK) rc = rt_round_ledger_key(set->id, plan->round, ledger_key, sizeof ledger_key);
    if (rc != RT_OK) return rc;
    char day[11];
    rt_worker_utc_day(day);
    int limit = 0, ledger = 0;
    if (rt_budget_limit_for(&r->cfg->budget_limits, row->platform, 600, &limit) != RT_OK) limit = 0;
    if ((rc = rt_ledger_spent(r->pg, row->platform, day, &ledger)) != RT_OK) return rc;
    /* A later round is worth even one retrigger: the evidence so far is not nothing. */
    rt_claim_request req = {.key_prefix = r->cfg->redis_key_prefix,
                            .platform = row->platform,
                            .task_id = row->original_task_id,
                            .day = day,
                            .wanted = (int)plan->more,
                            .minimum = 1,
                            .limit = limit,
                            .ledger_spent = ledger};
    rt_claim claim;
    if ((rc = rt_budget_claim_keyed(r->redis, &req, claim_key, &claim)) != RT_OK) return rc;
    bool claimed_now = claim.status == RT_CLAIM_CLAIMED;
    int spent = claim.status == RT_CLAIM_EXHAUSTED ? 0 : claim.spent;

    /* Postgres: the round's row, the backstop on what Redis granted and its ledger row, in
     * one call; a refusal (Redis granted nothing) is recorded the same way. */
    double best = plan->result.line >= 0 ? plan->result.p_regression[plan->result.line] : 0;
    for (size_t i = 0; i < view->nlines; i++)
        if (plan->result.p_regression[i] > best) best = plan->result.p_regression[i];
    rt_set_round_ask ask = {.set_id = set->id,
                            .round = plan->round,
                            .wanted = (int)plan->more,
                            .spent = spent,
                            .minimum = 1,
                            .platform = row->platform,
                            .day = day,
                            .limit = limit,
                            .ledger_key = ledger_key,
                            .p_regression = best};
    rt_set_round_asked asked;
    /* On an error nothing is written; the claim names this set's round, so the redelivery
     * goes on with the budget already spent. */
    if ((rc = rt_set_rounds_ask(r->pg, &ask, &asked)) != RT_OK) return rc;
    bool created = asked.created, refused = asked.refused, stale = asked.stale;
    int kept = asked.kept, total = asked.total;
    if (stale || (!created && claimed_now)) {
        /* The set moved on, or the round existed (Redis had lost its claim): this claim
         * pays for nothing. */
        if (claimed_now) settle_claim(r, &req, claim_key, spent, 0, total);
        *out = stale ? ASK_STALE : refused ? ASK_REFUSED : ASK_MADE;
    } else if (refused) {
        if (claimed_now) settle_claim(r, &req, claim_key, spent, 0, total);
        *out = ASK_REFUSED;
    } else {
        if (created && kept < spent) settle_claim(r, &req, claim_key, spent, kept, total + kept);
        if (created) rt_metric_add(rt_metrics_std()->retriggers_requested, kept, row->platform);
        *out = ASK_MADE;
    }
    if (*out == ASK_MADE) return publish_round(r, set, row, plan->round);
    return RT_OK;
}

/* The adaptive plan's verdict in place of rt_verdict_decide's (its counts stay). */
static void take_plan(rt_verdict_result *result, const rt_round_plan *plan)
{
    result->verdict = plan->verdict;
    snprintf(result->reason, sizeof result->reason, "%s", plan->reason);
    result->regression_line = plan->line;
}

rounds_step decide_rounds_apply(decide_rounds *r, const rounds_set *set, rt_verdict_result *result,
                                rounds_view *view, rt_outcome *h)
{
    memset(view, 0, sizeof *view);
    if (r->policy != RT_POLICY_ADAPTIVE) return ROUNDS_GO_ON; /* seed: today's verdict */
    set_row row = {0};
    rounds_step step = ROUNDS_ERROR;
    int rc = load_state(r, set, view, &row);
    if (rc != RT_OK) {
        rt_outcome_set(h, RT_SETTLE_REQUEUE, "postgres: %s", rt_pg_errstr(r->pg));
        goto out;
    }
    /* A later round made but not published (a crash, a broker error): publish it now. */
    if (view->state.round >= 2 && !row.latest_published &&
        (rc = publish_round(r, set, &row, view->state.round)) != RT_OK) {
        rt_outcome_set(h, RT_SETTLE_REQUEUE, "publishing round %d: %s / %s", view->state.round,
                       rt_pg_errstr(r->pg), rt_amqp_errstr(r->amqp));
        goto out;
    }
    if (!set->evidence) { /* nothing to compare: the seed rule's answer stands */
        step = ROUNDS_GO_ON;
        goto out;
    }
    if (evaluate(r, set, view) != RT_OK) {
        rt_outcome_set(h, RT_SETTLE_REQUEUE, "the verdict policy: %s", rt_pg_errstr(r->pg));
        goto out;
    }
    if (view->plan.action == RT_ROUND_ASK) {
        ask_result asked = ASK_STALE;
        if ((rc = ask_round(r, set, &row, view, &asked)) != RT_OK) {
            rt_outcome_set(h, RT_SETTLE_REQUEUE, "asking for round %d: %s / %s / %s",
                           view->plan.round, rt_pg_errstr(r->pg), rt_redis_errstr(r->redis),
                           rt_amqp_errstr(r->amqp));
            goto out;
        }
        char round[16], times[16];
        snprintf(round, sizeof round, "%d", view->plan.round);
        snprintf(times, sizeof times, "%zu", view->plan.more);
        if (asked != ASK_REFUSED) {
            if (asked == ASK_MADE)
                rt_log_info("another round of retriggers asked for", "set_id", set->id_text,
                            "round", round, "wanted", times);
            step = ROUNDS_ASKED;
            goto out;
        }
        /* The budget refused the round: the posterior decides now. */
        rt_log_info("round refused by the budget; the posterior decides", "set_id", set->id_text,
                    "round", round, "platform", row.platform);
        view->refused = true;
        view->state.no_more = true;
        if (evaluate(r, set, view) != RT_OK) {
            rt_outcome_set(h, RT_SETTLE_REQUEUE, "the verdict policy: %s", rt_pg_errstr(r->pg));
            goto out;
        }
    }
    if (view->plan.action == RT_ROUND_VERDICT) {
        take_plan(result, &view->plan);
    } else { /* wait for the retriggers pending; the step rule says how */
        result->verdict = RT_VERDICT_NOT_YET;
        snprintf(result->reason, sizeof result->reason, "%s", view->plan.reason);
        result->regression_line = -1;
    }
    step = ROUNDS_GO_ON;
out:
    set_row_free(&row);
    return step;
}

void decide_rounds_finish(decide_rounds *r, const rounds_set *set, rounds_view *view)
{
    if (view->evaluated) return;
    if (!view->loaded && load_state(r, set, view, NULL) != RT_OK) {
        rt_log_warn("cannot read the set's rounds; stored without them", "set_id", set->id_text,
                    "error", rt_pg_errstr(r->pg));
        view->loaded = false;
        return;
    }
    if (set->evidence && evaluate(r, set, view) != RT_OK)
        rt_log_warn("cannot evaluate the shadow policy; stored without it", "set_id", set->id_text,
                    "error", rt_pg_errstr(r->pg));
}

/* The likeliest line, -1 when the model did not run. */
static long likeliest(const rounds_view *view)
{
    if (!view->evaluated || view->nlines == 0) return -1;
    long best = 0;
    for (size_t i = 1; i < view->nlines; i++)
        if (view->plan.result.p_regression[i] > view->plan.result.p_regression[best])
            best = (long)i;
    return best;
}

int decide_rounds_evidence(const decide_rounds *r, const rounds_view *view, json_t *stored)
{
    rt_policy_evidence in = {.policy = r->policy,
                             .shadow =
                                 r->policy == RT_POLICY_SEED ? RT_POLICY_ADAPTIVE : RT_POLICY_SEED,
                             .loaded = view->loaded,
                             .rounds = view->rounds,
                             .retriggers = view->state.requested,
                             .found = view->state.found,
                             .refused = view->refused,
                             .plan = view->evaluated ? &view->plan : NULL,
                             .settings = &r->model,
                             .history = view->history,
                             .nlines = view->nlines,
                             .likeliest = likeliest(view)};
    return rt_policy_evidence_add(stored, &in);
}

int decide_rounds_store(decide_rounds *r, const rounds_view *view, const char *set_id_text)
{
    char p[32] = "", runs[24] = "", failures[24] = "", sig[24] = "", rounds[16] = "",
         retriggers[16] = "";
    const char *shadow_verdict = NULL, *shadow_reason = NULL;
    long best = likeliest(view);
    if (best >= 0) {
        const rt_decide_history *hist = &view->history[best];
        snprintf(p, sizeof p, "%.17g", view->plan.result.p_regression[best]);
        snprintf(runs, sizeof runs, "%ld", hist->runs);
        snprintf(failures, sizeof failures, "%ld", hist->failures);
        if (hist->signature_failures >= 0)
            snprintf(sig, sizeof sig, "%ld", hist->signature_failures);
    }
    if (view->evaluated) {
        const rt_policy_outcome *o = &view->plan.result.outcome[view->plan.shadow];
        shadow_verdict = rt_verdict_name(o->verdict);
        shadow_reason = o->reason;
    }
    if (view->loaded) {
        snprintf(rounds, sizeof rounds, "%d", view->rounds);
        snprintf(retriggers, sizeof retriggers, "%zu", view->state.requested);
    }
    rt_policy shadow = r->policy == RT_POLICY_SEED ? RT_POLICY_ADAPTIVE : RT_POLICY_SEED;
    rt_set_rounds_policy row = {.set_id = set_id_text,
                                .policy = rt_policy_name(r->policy),
                                .p_regression = p[0] ? p : NULL,
                                .prior_runs = runs[0] ? runs : NULL,
                                .prior_failures = failures[0] ? failures : NULL,
                                .prior_signature_failures = sig[0] ? sig : NULL,
                                .rounds = rounds[0] ? rounds : NULL,
                                .retriggers = retriggers[0] ? retriggers : NULL,
                                .shadow_policy = rt_policy_name(shadow),
                                .shadow_verdict = shadow_verdict,
                                .shadow_reason = shadow_reason};
    return rt_set_rounds_store_policy(r->pg, &row);
}

int decide_rounds_ask_more(decide_rounds *r, const rounds_set *set, int round, size_t more,
                           double p_regression, bool *refused)
{
    rounds_view view;
    memset(&view, 0, sizeof view);
    set_row row = {0};
    *refused = false;
    int rc = load_state(r, set, &view, &row);
    if (rc == RT_OK) {
        view.plan.round = round;
        view.plan.more = more;
        view.plan.result.line = 0;
        view.plan.result.p_regression[0] = p_regression;
        ask_result asked = ASK_STALE;
        rc = ask_round(r, set, &row, &view, &asked);
        *refused = rc == RT_OK && asked == ASK_REFUSED;
    }
    set_row_free(&row);
    return rc;
}
