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
#include "common/worker.h"

/* The set's rounds, and what a later round's request repeats of round 1's. */
static const char SQL_STATE[] =
    "SELECT s.round, s.retrigger_count, s.later_retriggers, s.found_count, s.status,"
    " coalesce((SELECT r.published_at IS NOT NULL FROM retrigger_rounds r"
    "           WHERE r.set_id = s.id AND r.round = s.round), true) AS latest_published,"
    " EXISTS (SELECT 1 FROM retrigger_rounds r WHERE r.set_id = s.id AND r.refused)"
    "   AS refused,"
    " EXISTS (SELECT 1 FROM retrigger_actions a WHERE a.set_id = s.id AND a.round >= 1"
    "         AND a.outcome IN ('no-retrigger-action', 'classified-before-trigger',"
    "                           'refused-hook', 'failed')) AS round_failed,"
    " s.platform, s.label, s.original_task_id, s.original_run_id,"
    " coalesce(s.task_group_id, '') AS task_group_id,"
    " coalesce(s.task_queue_id, '') AS task_queue_id,"
    " s.failing_groups::text AS failing_groups, s.failures::text AS failures"
    " FROM retrigger_sets s WHERE s.id = $1::bigint";
enum {
    ST_ROUND,
    ST_RETRIGGER_COUNT,
    ST_LATER_RETRIGGERS,
    ST_FOUND_COUNT,
    ST_STATUS,
    ST_LATEST_PUBLISHED,
    ST_REFUSED,
    ST_LATER_ROUND_FAILED,
    ST_PLATFORM,
    ST_LABEL,
    ST_ORIGINAL_TASK_ID,
    ST_ORIGINAL_RUN_ID,
    ST_TASK_GROUP_ID,
    ST_TASK_QUEUE_ID,
    ST_FAILING_GROUPS,
    ST_FAILURES,
    ST_N
};
static const char *const STATE_COLS[ST_N] = {[ST_ROUND] = "round",
                                             [ST_RETRIGGER_COUNT] = "retrigger_count",
                                             [ST_LATER_RETRIGGERS] = "later_retriggers",
                                             [ST_FOUND_COUNT] = "found_count",
                                             [ST_STATUS] = "status",
                                             [ST_LATEST_PUBLISHED] = "latest_published",
                                             [ST_REFUSED] = "refused",
                                             [ST_LATER_ROUND_FAILED] = "round_failed",
                                             [ST_PLATFORM] = "platform",
                                             [ST_LABEL] = "label",
                                             [ST_ORIGINAL_TASK_ID] = "original_task_id",
                                             [ST_ORIGINAL_RUN_ID] = "original_run_id",
                                             [ST_TASK_GROUP_ID] = "task_group_id",
                                             [ST_TASK_QUEUE_ID] = "task_queue_id",
                                             [ST_FAILING_GROUPS] = "failing_groups",
                                             [ST_FAILURES] = "failures"};
static const char SQL_REQUEST_ROUND[] =
    "SELECT created, kept, total, refused, stale FROM decide_request_round($1::bigint,"
    " $2::integer, $3::integer, $4::integer, $5::integer, $6, $7, $8::integer, $9,"
    " $10::float8)";
enum { RQ_CREATED, RQ_KEPT, RQ_TOTAL, RQ_REFUSED, RQ_STALE, RQ_N };
static const char *const REQUEST_ROUND_COLS[RQ_N] = {[RQ_CREATED] = "created",
                                                     [RQ_KEPT] = "kept",
                                                     [RQ_TOTAL] = "total",
                                                     [RQ_REFUSED] = "refused",
                                                     [RQ_STALE] = "stale"};
static const char SQL_LOCK_ROUND[] =
    "SELECT published_at IS NOT NULL AS published, retriggers FROM retrigger_rounds"
    " WHERE set_id = $1::bigint AND round = $2::integer AND NOT refused FOR UPDATE";
enum { LOCK_PUBLISHED, LOCK_RETRIGGERS, LOCK_N };
static const char *const LOCK_ROUND_COLS[LOCK_N] = {
    [LOCK_PUBLISHED] = "published", [LOCK_RETRIGGERS] = "retriggers"};
static const char SQL_ROUND_PUBLISHED[] = "UPDATE retrigger_rounds SET published_at = now()"
                                          " WHERE set_id = $1::bigint AND round = $2::integer";
static const char SQL_STORE[] =
    "UPDATE decisions SET policy = $2, p_regression = $3::float8, prior_runs = $4::integer,"
    " prior_failures = $5::integer, prior_signature_failures = $6::integer,"
    " rounds = $7::integer, retriggers = $8::integer, shadow_policy = $9,"
    " shadow_verdict = $10, shadow_reason = $11 WHERE set_id = $1::bigint";

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

/* rt_pg_columns for a result of the set's: a name the result lacks (a programming error) is
 * logged here, as the callers report a failed query with the connection's error. */
static int columns(const PGresult *res, const char *const *names, size_t n, int *cols,
                   const rounds_set *set)
{
    char errstr[RT_ERRSTR_SIZE] = "";
    int rc = rt_pg_columns(res, names, n, cols, errstr);
    if (rc != RT_OK) rt_log_error("cannot read a result", "set_id", set->id_text, "error", errstr);
    return rc;
}

/* The set's rounds into view->state (row: what a later round repeats, when not NULL). */
static int load_state(decide_rounds *r, const rounds_set *set, rounds_view *view, set_row *row)
{
    const char *params[] = {set->id_text};
    PGresult *res = NULL;
    int rc = rt_pg_exec(r->pg, SQL_STATE, 1, params, &res);
    if (rc != RT_OK) return rc;
    int c[ST_N];
    if ((rc = columns(res, STATE_COLS, ST_N, c, set)) != RT_OK || PQntuples(res) != 1) {
        PQclear(res);
        return rc != RT_OK ? rc : RT_ENOTFOUND;
    }
    int first = atoi(PQgetvalue(res, 0, c[ST_RETRIGGER_COUNT])),
        later = atoi(PQgetvalue(res, 0, c[ST_LATER_RETRIGGERS]));
    bool refused = PQgetvalue(res, 0, c[ST_REFUSED])[0] == 't';
    view->state = (rt_round_state){
        .round = atoi(PQgetvalue(res, 0, c[ST_ROUND])),
        .requested = (size_t)(first + later),
        .found = (size_t)atoi(PQgetvalue(res, 0, c[ST_FOUND_COUNT])),
        .no_more = refused || PQgetvalue(res, 0, c[ST_LATER_ROUND_FAILED])[0] == 't',
        .deadline = set->deadline,
    };
    view->refused = refused;
    view->rounds = (first > 0) + (view->state.round - 1);
    view->loaded = true;
    if (row) {
        memset(row, 0, sizeof *row);
        snprintf(row->status, sizeof row->status, "%s", PQgetvalue(res, 0, c[ST_STATUS]));
        row->latest_published = PQgetvalue(res, 0, c[ST_LATEST_PUBLISHED])[0] == 't';
        snprintf(row->platform, sizeof row->platform, "%s", PQgetvalue(res, 0, c[ST_PLATFORM]));
        snprintf(row->label, sizeof row->label, "%s", PQgetvalue(res, 0, c[ST_LABEL]));
        snprintf(row->original_task_id, sizeof row->original_task_id, "%s",
                 PQgetvalue(res, 0, c[ST_ORIGINAL_TASK_ID]));
        row->original_run_id = atoi(PQgetvalue(res, 0, c[ST_ORIGINAL_RUN_ID]));
        snprintf(row->task_group_id, sizeof row->task_group_id, "%s",
                 PQgetvalue(res, 0, c[ST_TASK_GROUP_ID]));
        snprintf(row->task_queue_id, sizeof row->task_queue_id, "%s",
                 PQgetvalue(res, 0, c[ST_TASK_QUEUE_ID]));
        row->failing_groups = strdup(PQgetvalue(res, 0, c[ST_FAILING_GROUPS]));
        row->failures = strdup(PQgetvalue(res, 0, c[ST_FAILURES]));
        if (!row->failing_groups || !row->failures) rc = RT_ENOMEM;
    }
    PQclear(res);
    return rc;
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
    char round_text[16];
    snprintf(round_text, sizeof round_text, "%d", round);
    const char *params[] = {set->id_text, round_text};
    PGresult *res = NULL;
    int rc = rt_pg_begin_exec(r->pg, SQL_LOCK_ROUND, 2, params, &res);
    int c[LOCK_N];
    if (rc == RT_OK) rc = columns(res, LOCK_ROUND_COLS, LOCK_N, c, set);
    bool publish =
        rc == RT_OK && PQntuples(res) == 1 && PQgetvalue(res, 0, c[LOCK_PUBLISHED])[0] == 'f';
    int times = publish ? atoi(PQgetvalue(res, 0, c[LOCK_RETRIGGERS])) : 0;
    PQclear(res);
    if (publish) {
        char *body = round_request(set, row, round, times);
        char message_id[RT_ROUND_KEY_SIZE];
        rc = body ? rt_round_message_id(set->id, round, message_id, sizeof message_id) : RT_ENOMEM;
        rt_amqp_publish_opts opts = {.message_id = message_id};
        if (rc == RT_OK)
            rc = rt_amqp_publish(r->amqp, r->cfg->amqp_namespace, "retrigger", body, strlen(body),
                                 &opts);
        free(body);
        if (rc == RT_OK) rc = rt_pg_exec(r->pg, SQL_ROUND_PUBLISHED, 2, params, NULL);
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
    char round_text[16], wanted[16], spent_text[16], limit_text[16], p[32];
    snprintf(round_text, sizeof round_text, "%d", plan->round);
    snprintf(wanted, sizeof wanted, "%zu", plan->more);
    snprintf(spent_text, sizeof spent_text, "%d", spent);
    snprintf(limit_text, sizeof limit_text, "%d", limit);
    double best = plan->result.line >= 0 ? plan->result.p_regression[plan->result.line] : 0;
    for (size_t i = 0; i < view->nlines; i++)
        if (plan->result.p_regression[i] > best) best = plan->result.p_regression[i];
    snprintf(p, sizeof p, "%.17g", best);
    const char *params[] = {set->id_text,  round_text, wanted,     spent_text, "1",
                            row->platform, day,        limit_text, ledger_key, p};
    PGresult *res = NULL;
    rc = rt_pg_exec(r->pg, SQL_REQUEST_ROUND, 10, params, &res);
    int c[RQ_N];
    if (rc == RT_OK) rc = columns(res, REQUEST_ROUND_COLS, RQ_N, c, set);
    if (rc != RT_OK) {
        /* Nothing written; the claim names this set's round, so the redelivery goes on with
         * the budget already spent. */
        PQclear(res);
        return rc;
    }
    bool created = PQgetvalue(res, 0, c[RQ_CREATED])[0] == 't';
    int kept = atoi(PQgetvalue(res, 0, c[RQ_KEPT])), total = atoi(PQgetvalue(res, 0, c[RQ_TOTAL]));
    bool refused = PQgetvalue(res, 0, c[RQ_REFUSED])[0] == 't',
         stale = PQgetvalue(res, 0, c[RQ_STALE])[0] == 't';
    PQclear(res);
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
    const char *params[] = {set_id_text,
                            rt_policy_name(r->policy),
                            p[0] ? p : NULL,
                            runs[0] ? runs : NULL,
                            failures[0] ? failures : NULL,
                            sig[0] ? sig : NULL,
                            rounds[0] ? rounds : NULL,
                            retriggers[0] ? retriggers : NULL,
                            rt_policy_name(shadow),
                            shadow_verdict,
                            shadow_reason};
    return rt_pg_exec(r->pg, SQL_STORE, 11, params, NULL);
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
