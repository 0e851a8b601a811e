/* SPDX-License-Identifier: MPL-2.0 */
/* main.c - retrig-retrigger: Taskcluster's retrigger action for each retrigger request,
 * exactly once.
 *
 * For a request: find its set; if the set's action has an outcome, it is done. Otherwise,
 * under a per-set advisory lock (released by Postgres if this process dies), check
 * Treeherder's classification again (a sheriff may have classified the failure: then the
 * budget goes back), fetch the decision task's actions.json, pick the configured action,
 * render its hookPayload with JSON-e, record the intent durably, and only then call the
 * hook with Hawk authentication. A redelivered request that finds an intent without an
 * outcome waits until the interrupted call would have timed out, then looks for the action
 * task in the push's task group, so a call is never repeated when it had reached Taskcluster.
 * Dry-run records the payload and sends nothing. The same queue carries retrig-decide's
 * culprit probes ("kind": "culprit-probe"): add-new-jobs on a push of a regression's window,
 * under the same rules (see "culprit probes" below). Single-threaded; run replicas for
 * throughput.
 *
 * Rounds (common/core/decide_rounds.h): a request names the round of its set it is for (1,
 * retrig-classify's; 2, 3, ... retrig-decide's under decide_policy = adaptive). Everything
 * above holds per (set, round): the intent and outcome, the refund of the round's own
 * ledger row, and the look-up of an interrupted call, which leaves out the action tasks
 * earlier rounds recorded. A later round that fails gives its retriggers back to the set's
 * count and asks retrig-decide to decide with what is there; so does round 1 when runs of the
 * label were found on the push (without any, or when a sheriff classified the failure, the
 * set failed). */
#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/core/actions.h"
#include "common/core/culprit_flow.h"
#include "common/core/decide_rounds.h"
#include "common/core/eligibility.h"
#include "common/core/hawk.h"
#include "common/core/messages.h"
#include "common/core/taskdef.h"
#include "common/core/trust.h"
#include "common/core/utf8.h"
#include "common/io/amqp.h"
#include "common/io/budget.h"
#include "common/io/http.h"
#include "common/io/metrics.h"
#include "common/io/pg.h"
#include "common/io/redis.h"
#include "common/io/upstream.h"
#include "common/options.h"
#include "common/policy.h"
#include "common/store/ledger.h"
#include "common/worker.h"

#define MAX_DELAYS    16
#define ACTIONS_CACHE 32

typedef struct cached_actions {
    char decision_task_id[23];
    rt_actions *actions;
} cached_actions;

typedef struct retrigger {
    rt_config *cfg;
    rt_worker_conns conns;
    rt_amqp *amqp; /* conns.broker */
    rt_redis *redis;
    rt_pg *pg;
    rt_http *http;      /* GETs, with retries */
    rt_http *http_post; /* the hook call: one attempt, we retry through the delay queue */
    char queue[300];
    int delays[MAX_DELAYS];
    size_t ndelays;
    cached_actions cache[ACTIONS_CACHE];
    size_t cache_next;
} retrigger;

/* The set and what its round asks for: round 1 the set's own count, a later round its row. */
static const char SQL_SET[] =
    "SELECT s.project, s.revision, s.label, s.original_task_id,"
    " CASE WHEN $2::integer = 1 THEN s.retrigger_count ELSE r.retriggers END AS retriggers,"
    " s.platform, s.task_group_id FROM retrigger_sets s"
    " LEFT JOIN retrigger_rounds r ON r.set_id = s.id AND r.round = $2::integer"
    " WHERE s.id = $1::bigint AND ($2::integer = 1 OR r.retriggers > 0)";
enum { S_PROJECT, S_REVISION, S_LABEL, S_ORIGINAL, S_RETRIGGERS, S_PLATFORM, S_GROUP, S_N };
static const char *const SET_COLS[S_N] = {
    "project", "revision", "label", "original_task_id", "retriggers", "platform", "task_group_id"};
static const char SQL_ACTION[] =
    "SELECT outcome IS NOT NULL AS finished, action_name, decision_task_id, attempts,"
    " (extract(epoch FROM now() - intent_at) * 1000)::bigint AS since_call_ms"
    " FROM retrigger_actions WHERE set_id = $1::bigint AND round = $2::integer";
enum { A_FINISHED, A_ATTEMPTS, A_SINCE_CALL_MS, A_N };
static const char *const ACTION_COLS[A_N] = {"finished", "attempts", "since_call_ms"};
/* The action tasks the set's other rounds recorded: not this round's. */
static const char SQL_OTHER_ACTIONS[] =
    "SELECT action_task_id FROM retrigger_actions WHERE set_id = $1::bigint"
    " AND round <> $2::integer AND action_task_id IS NOT NULL ORDER BY round LIMIT 64";
enum { OA_ACTION_TASK_ID, OA_N };
static const char *const OTHER_ACTIONS_COLS[OA_N] = {"action_task_id"};
static const char SQL_TRY_LOCK[] = "SELECT pg_try_advisory_lock(7271, $1::integer) AS locked";
enum { TL_LOCKED, TL_N };
static const char *const TRY_LOCK_COLS[TL_N] = {"locked"};
static const char SQL_UNLOCK[] = "SELECT pg_advisory_unlock(7271, $1::integer)";
static const char SQL_INTENT[] =
    "INSERT INTO retrigger_actions (set_id, round, action_name, decision_task_id, hook_group_id,"
    " hook_id, payload, dry_run) VALUES ($1::bigint, $8::integer, $2, $3, $4, $5, $6::jsonb,"
    " $7::boolean)"
    " ON CONFLICT (set_id, round) DO UPDATE SET payload = EXCLUDED.payload, hook_group_id ="
    " EXCLUDED.hook_group_id, hook_id = EXCLUDED.hook_id WHERE retrigger_actions.outcome IS NULL";
/* intent_at moves to each call's start: a redelivery waits until that call is over. */
static const char SQL_ATTEMPT[] =
    "UPDATE retrigger_actions SET attempts = attempts + 1, intent_at = now()"
    " WHERE set_id = $1::bigint AND round = $2::integer";
static const char SQL_OUTCOME[] =
    "INSERT INTO retrigger_actions (set_id, round, action_name, decision_task_id, dry_run,"
    " outcome, action_task_id, error, finished_at) VALUES ($1::bigint, $8::integer, $2, $3,"
    " $4::boolean, $5, $6, $7, now())"
    " ON CONFLICT (set_id, round) DO UPDATE SET outcome = EXCLUDED.outcome, action_task_id ="
    " EXCLUDED.action_task_id, error = EXCLUDED.error, finished_at = now()"
    " WHERE retrigger_actions.outcome IS NULL";
static const char SQL_ERROR[] =
    "UPDATE retrigger_actions SET error = $2 WHERE set_id = $1::bigint AND round = $3::integer"
    " AND outcome IS NULL";
static const char SQL_SET_STATUS[] =
    "UPDATE retrigger_sets SET status = $2, action_task_id = coalesce($3, action_task_id),"
    " updated_at = now() WHERE id = $1::bigint AND status IN ('pending', 'requested')";
/* A later round: the set's action task stays the first round's. One that failed asked for
 * nothing after all: its retriggers leave the set's count, and the set has what it waits
 * for (retrig-decide decides with it). */
static const char SQL_ROUND_STATUS[] =
    "UPDATE retrigger_sets SET status = 'requested', updated_at = now()"
    " WHERE id = $1::bigint AND status IN ('pending', 'requested')";
static const char SQL_ROUND_FAILED[] =
    "UPDATE retrigger_sets SET status = 'complete',"
    " later_retriggers = greatest(later_retriggers - $2::integer, 0), updated_at = now()"
    " WHERE id = $1::bigint AND status IN ('pending', 'requested')";
/* Round 1 that failed for good: its retriggers leave the set's count as a later round's do.
 * With runs of the label already on the push (found members) the set goes on to its
 * decision with them; without, there is nothing to decide and the set failed. A sheriff's
 * classification before the trigger is never second-guessed: that set failed. */
static const char SQL_FIRST_ROUND_FAILED[] =
    "UPDATE retrigger_sets SET"
    " status = CASE WHEN found_count > 0 AND $2 <> 'classified-before-trigger'"
    "          THEN 'requested' ELSE 'failed' END,"
    " retrigger_count = CASE WHEN found_count > 0 AND $2 <> 'classified-before-trigger'"
    "                   THEN 0 ELSE retrigger_count END,"
    " updated_at = now() WHERE id = $1::bigint AND status IN ('pending', 'requested')";
static const char SQL_LEDGER_ENTRY[] =
    "SELECT platform, day::text AS day, amount FROM budget_ledger WHERE idempotency_key = $1";
enum { LE_PLATFORM, LE_DAY, LE_AMOUNT, LE_N };
static const char *const LEDGER_ENTRY_COLS[LE_N] = {"platform", "day", "amount"};
static const char SQL_LEDGER_REFUND[] =
    "INSERT INTO budget_ledger (platform, day, amount, idempotency_key, set_id, reason)"
    " VALUES ($1, $2::date, -$3::integer, $4, $5::bigint, $6)"
    " ON CONFLICT (idempotency_key) DO NOTHING RETURNING id";

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
    const char *params[] = {key};
    PGresult *res = NULL;
    int c[LE_N];
    int rc = rt_pg_exec(w->pg, SQL_LEDGER_ENTRY, 1, params, &res);
    if (rc == RT_OK) rc = rt_pg_result_columns(&res, LEDGER_ENTRY_COLS, LE_N, c);
    if (rc != RT_OK) return rc;
    if (PQntuples(res) != 1) {
        PQclear(res);
        return RT_OK; /* nothing was spent */
    }
    char platform[600], day[16], amount[16];
    snprintf(platform, sizeof platform, "%s", PQgetvalue(res, 0, c[LE_PLATFORM]));
    snprintf(day, sizeof day, "%s", PQgetvalue(res, 0, c[LE_DAY]));
    snprintf(amount, sizeof amount, "%s", PQgetvalue(res, 0, c[LE_AMOUNT]));
    PQclear(res);
    const char *rparams[] = {platform, day, amount, refund_key, s->id_text, why};
    res = NULL;
    rc = rt_pg_exec(w->pg, SQL_LEDGER_REFUND, 6, rparams, &res);
    bool inserted = rc == RT_OK && PQntuples(res) == 1;
    PQclear(res);
    if (rc != RT_OK) return rc;
    /* Only the first refund gives the counter back; a crash in between leaves the counter
     * high, which can only underspend. */
    if (inserted)
        rc = rt_budget_refund(w->redis, w->cfg->redis_key_prefix, platform, day, atoi(amount));
    return rc;
}

static int record_outcome(retrigger *w, const set_info *s, const char *action_name,
                          const char *outcome_name, const char *action_task_id, const char *error,
                          const char *set_status)
{
    const char *params[] = {s->id_text,
                            action_name,
                            s->decision_task_id,
                            w->cfg->dry_run ? "true" : "false",
                            outcome_name,
                            action_task_id,
                            error,
                            s->round_text};
    /* The outcome and the set's status in one transaction: a crash between them must not
     * leave an outcome whose set still says pending (its redelivery finds the outcome and
     * goes no further). */
    bool own = set_status && !rt_pg_in_transaction(w->pg);
    int rc = own ? rt_pg_begin(w->pg) : RT_OK;
    if (rc == RT_OK) rc = rt_pg_exec(w->pg, SQL_OUTCOME, 8, params, NULL);
    if (rc == RT_OK && set_status && s->round == 1 && !strcmp(set_status, "failed")) {
        const char *sparams[] = {s->id_text, outcome_name};
        rc = rt_pg_exec(w->pg, SQL_FIRST_ROUND_FAILED, 2, sparams, NULL);
    } else if (rc == RT_OK && set_status && s->round == 1) {
        const char *sparams[] = {s->id_text, set_status, action_task_id};
        rc = rt_pg_exec(w->pg, SQL_SET_STATUS, 3, sparams, NULL);
    } else if (rc == RT_OK && set_status && !strcmp(set_status, "failed")) {
        char count[16];
        snprintf(count, sizeof count, "%d", s->count);
        const char *sparams[] = {s->id_text, count};
        rc = rt_pg_exec(w->pg, SQL_ROUND_FAILED, 2, sparams, NULL);
    } else if (rc == RT_OK && set_status) {
        const char *sparams[] = {s->id_text};
        rc = rt_pg_exec(w->pg, SQL_ROUND_STATUS, 1, sparams, NULL);
    }
    if (own && rc == RT_OK) rc = rt_pg_commit(w->pg);
    if (own && rc != RT_OK && rt_pg_in_transaction(w->pg)) {
        int ignored = rt_pg_rollback(w->pg);
        (void)ignored;
    }
    if (rc == RT_OK) rt_metric_inc(rt_metrics_std()->retrigger_actions, outcome_name);
    return rc;
}

/* actions.json of a decision task, cached (it never changes). */
static int get_actions(retrigger *w, const char *decision_task_id, const rt_actions **out,
                       rt_outcome *h)
{
    for (size_t i = 0; i < ACTIONS_CACHE; i++) {
        if (w->cache[i].actions && !strcmp(w->cache[i].decision_task_id, decision_task_id)) {
            *out = w->cache[i].actions;
            return RT_OK;
        }
    }
    char *body = NULL, errstr[RT_ERRSTR_SIZE] = "";
    size_t len = 0;
    /* The latest run's artifact: GET /task/<id>/artifacts/<name> answers for it. */
    char path[128];
    snprintf(path, sizeof path, "%s/api/queue/v1/task/%s/artifacts/public/actions.json",
             w->cfg->taskcluster_root_url, decision_task_id);
    rt_http_response resp;
    int rc = rt_http_get(w->http, path, &resp);
    if (rc != RT_OK) {
        snprintf(errstr, sizeof errstr, "%s", rt_http_errstr(w->http));
        long status = resp.status;
        rt_http_response_free(&resp);
        if (rc == RT_EUPSTREAM && status == 404) {
            rt_outcome_set(h, RT_SETTLE_ACK, "no-retrigger-action: no actions.json (%s)", errstr);
            return RT_ENOTFOUND;
        }
        rt_outcome_set(h, rt_upstream_transient(rc) ? RT_SETTLE_RETRY : RT_SETTLE_DEAD,
                       "upstream-error: actions.json: %s", errstr);
        return rc;
    }
    body = resp.body;
    len = resp.len;
    rt_actions *actions = NULL;
    rc = rt_actions_parse(body, len, RT_ACTIONS_MAX_BYTES, &actions, errstr);
    rt_http_response_free(&resp);
    if (rc != RT_OK) {
        rt_outcome_set(h, RT_SETTLE_ACK, "no-retrigger-action: unusable actions.json: %s", errstr);
        return RT_ENOTFOUND;
    }
    cached_actions *slot = &w->cache[w->cache_next++ % ACTIONS_CACHE];
    rt_actions_free(slot->actions);
    snprintf(slot->decision_task_id, sizeof slot->decision_task_id, "%s", decision_task_id);
    slot->actions = actions;
    *out = actions;
    return RT_OK;
}

/* The original task's definition (its schedulerId and task group, for the hook check) and
 * its tags (for task actions: retrigger, backfill). */
static int fetch_task(retrigger *w, const char *task_id, rt_taskdef *def, json_t **tags_out,
                      rt_outcome *h)
{
    char *body = NULL, errstr[RT_ERRSTR_SIZE] = "", reason[128] = "";
    size_t len = 0;
    int rc = rt_tc_get_task(w->http, w->cfg->taskcluster_root_url, task_id, &body, &len, errstr);
    if (rc != RT_OK) {
        rt_outcome_set(h, rt_upstream_transient(rc) ? RT_SETTLE_RETRY : RT_SETTLE_DEAD,
                       "upstream-error: task definition: %s", errstr);
        return rc;
    }
    rc = rt_taskdef_parse(body, len, (size_t)w->cfg->http_max_body_bytes, def, reason);
    if (rc != RT_OK) {
        free(body);
        rt_outcome_set(h, rc == RT_ENOMEM ? RT_SETTLE_REQUEUE : RT_SETTLE_DEAD,
                       "invalid task definition: %s", reason);
        return rc;
    }
    json_error_t error;
    json_t *doc = json_loadb(body, len, 0, &error);
    free(body);
    json_t *tags = json_object_get(doc, "tags");
    *tags_out = json_is_object(tags) ? json_incref(tags) : json_object();
    json_decref(doc);
    return *tags_out ? RT_OK : RT_ENOMEM;
}

static int load_set(retrigger *w, long long set_id, int round, set_info *s, bool *found)
{
    memset(s, 0, sizeof *s);
    s->id = set_id;
    s->round = round;
    snprintf(s->id_text, sizeof s->id_text, "%lld", set_id);
    snprintf(s->round_text, sizeof s->round_text, "%d", round);
    const char *params[] = {s->id_text, s->round_text};
    PGresult *res = NULL;
    int c[S_N];
    int rc = rt_pg_exec(w->pg, SQL_SET, 2, params, &res);
    if (rc == RT_OK) rc = rt_pg_result_columns(&res, SET_COLS, S_N, c);
    if (rc != RT_OK) return rc;
    *found = PQntuples(res) == 1;
    if (*found) {
        snprintf(s->project, sizeof s->project, "%s", PQgetvalue(res, 0, c[S_PROJECT]));
        snprintf(s->revision, sizeof s->revision, "%s", PQgetvalue(res, 0, c[S_REVISION]));
        snprintf(s->label, sizeof s->label, "%s", PQgetvalue(res, 0, c[S_LABEL]));
        snprintf(s->original_task_id, sizeof s->original_task_id, "%s",
                 PQgetvalue(res, 0, c[S_ORIGINAL]));
        s->count = atoi(PQgetvalue(res, 0, c[S_RETRIGGERS]));
        snprintf(s->platform, sizeof s->platform, "%s", PQgetvalue(res, 0, c[S_PLATFORM]));
        /* In Gecko the push's decision task is the original task's group. */
        snprintf(s->decision_task_id, sizeof s->decision_task_id, "%s",
                 PQgetvalue(res, 0, c[S_GROUP]));
    }
    PQclear(res);
    return RT_OK;
}

/* Triggers the hook. Returns RT_OK with action_task_id, or an error with h filled. */
static int call_hook(retrigger *w, const char *attempt_sql, const char *const *attempt_params,
                     int nattempt_params, const rt_action *action, const char *payload,
                     const rt_hawk_credentials *creds, char action_task_id[23], rt_outcome *h)
{
    char *group = rt_http_url_escape(action->hook_group_id);
    char *hook = rt_http_url_escape(action->hook_id);
    size_t n = strlen(w->cfg->taskcluster_root_url) + (group ? strlen(group) : 0) +
               (hook ? strlen(hook) : 0) + 64;
    char *url = malloc(n), *auth = NULL;
    int rc = RT_ENOMEM;
    rt_http_response resp = {0};
    if (!group || !hook || !url) goto out;
    snprintf(url, n, "%s/api/hooks/v1/hooks/%s/%s/trigger", w->cfg->taskcluster_root_url, group,
             hook);
    char nonce[RT_HAWK_NONCE_SIZE];
    if ((rc = rt_hawk_nonce(nonce)) != RT_OK ||
        (rc = rt_hawk_header(creds, "POST", url, payload, "application/json", (long)time(NULL),
                             nonce, &auth)) != RT_OK) {
        rt_outcome_set(h, RT_SETTLE_DEAD, "cannot sign the hook call: %s", rt_strerror(rc));
        goto out;
    }
    rt_http_header headers[] = {{"Authorization", auth}, {"Content-Type", "application/json"}};
    if ((rc = rt_pg_exec(w->pg, attempt_sql, nattempt_params, attempt_params, NULL)) != RT_OK) {
        rt_outcome_set(h, RT_SETTLE_REQUEUE, "postgres: %s", rt_pg_errstr(w->pg));
        goto out;
    }
    rc = rt_http_request(w->http_post, "POST", url, headers, 2, payload, strlen(payload), &resp);
    if (rc == RT_OK) {
        json_error_t error;
        json_t *doc = json_loadb(resp.body, resp.len, 0, &error);
        const char *id =
            json_string_value(json_object_get(json_object_get(doc, "status"), "taskId"));
        if (id && strlen(id) == 22) {
            memcpy(action_task_id, id, 23);
        } else {
            rc = RT_EPROTO;
            rt_outcome_set(h, RT_SETTLE_RETRY, "upstream-error: hook answer without status.taskId");
        }
        json_decref(doc);
    } else if (resp.status == 401 || resp.status == 403) {
        rt_outcome_set(h, RT_SETTLE_DEAD,
                       "taskcluster refused the hook call (HTTP %ld): client %s needs scope "
                       "hooks:trigger-hook:%s/%s",
                       resp.status, creds->client_id, action->hook_group_id, action->hook_id);
        rc = RT_EAUTH;
    } else {
        /* 429, 5xx, a dropped connection: the call may or may not have arrived. The retry
         * looks for the action task before calling again. */
        rt_outcome_set(h,
                       rc == RT_EUPSTREAM && resp.status < 500 && resp.status != 429
                           ? RT_SETTLE_DEAD
                           : RT_SETTLE_RETRY,
                       "upstream-error: hook trigger: %s", rt_http_errstr(w->http_post));
    }
out:
    rt_http_response_free(&resp);
    free(group);
    free(hook);
    free(url);
    free(auth);
    return rc;
}

/* The hook call the rendered action asks for, checked before anything is signed or sent
 * (common/core/trust.h): the payload must be the action looked up with the input it was
 * rendered with; for a real call, the credentials of the project's level. RT_OK, or RT_EAUTH
 * with *code and reason (RT_ERRSTR_SIZE) saying why it is refused. */
static int check_hook(retrigger *w, const set_info *s, const rt_taskdef *task,
                      const rt_action *action, const json_t *input, const json_t *payload,
                      rt_hawk_credentials *creds, const char **code, char *reason)
{
    rt_hook_policy policy;
    rt_hook_policy_from_config(w->cfg, &policy);
    rt_hook_call call = {
        .hook_group_id = action->hook_group_id,
        .hook_id = action->hook_id,
        .payload = payload,
        .project = s->project,
        .revision = s->revision,
        .scheduler_id = task->scheduler_id,
        .task_group_id = task->task_group_id,
        .task_id = rt_action_is_task_group(action) ? NULL : s->original_task_id,
        .action_name = action->name,
        .input = input,
    };
    rt_hook_verdict verdict;
    if (rt_hook_check(&policy, &call, &verdict) != RT_OK) {
        *code = verdict.code;
        rt_utf8_copy(reason, RT_ERRSTR_SIZE, verdict.reason, NULL);
        return RT_EAUTH;
    }
    if (!w->cfg->dry_run && !rt_taskcluster_credentials(w->cfg, verdict.level, creds)) {
        *code = "credentials";
        snprintf(reason, RT_ERRSTR_SIZE,
                 "no Taskcluster credentials for level %d (project %s): "
                 "taskcluster_client_id_level%d",
                 verdict.level, s->project, verdict.level);
        return RT_EAUTH;
    }
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
    const char *params[] = {s->id_text, s->round_text};
    PGresult *res = NULL;
    int c[OA_N];
    if (rt_pg_exec(w->pg, SQL_OTHER_ACTIONS, 2, params, &res) != RT_OK ||
        rt_pg_result_columns(&res, OTHER_ACTIONS_COLS, OA_N, c) != RT_OK)
        return RT_EDB;
    const char *except[64];
    size_t n = 0;
    for (int i = 0; i < PQntuples(res) && n < 64; i++)
        except[n++] = PQgetvalue(res, i, c[OA_ACTION_TASK_ID]);
    int rc = rt_tc_find_action_task_except(
        w->http, w->cfg->taskcluster_root_url, s->decision_task_id, action_name, s->label,
        s->original_task_id, except, n, action_task_id, exists, errstr);
    PQclear(res);
    return rc;
}

/* A round whose action failed (its budget is back, its retriggers left the set's count):
 * retrig-decide decides with what is there (round 1: the runs found on the push, when there
 * are any; SQL_FIRST_ROUND_FAILED). Best effort: without this request the deadline sweeper
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

/* One worker per set at a time: a session advisory lock on the set, which Postgres drops if
 * this process dies. false when not taken (h: requeue, or wait while another worker holds
 * it); lock_key is what unlock_set needs. */
static bool lock_set(retrigger *w, long long set_id, char lock_key[16], rt_outcome *h)
{
    snprintf(lock_key, 16, "%d", (int)(set_id % 2147483647));
    const char *params[] = {lock_key};
    PGresult *res = NULL;
    int tl[TL_N];
    if (rt_pg_exec(w->pg, SQL_TRY_LOCK, 1, params, &res) != RT_OK ||
        rt_pg_result_columns(&res, TRY_LOCK_COLS, TL_N, tl) != RT_OK) {
        rt_outcome_set(h, RT_SETTLE_REQUEUE, "postgres: %s", rt_pg_errstr(w->pg));
        return false;
    }
    bool locked = PQgetvalue(res, 0, tl[TL_LOCKED])[0] == 't';
    PQclear(res);
    if (!locked)
        rt_outcome_set(h, RT_SETTLE_WAIT, "set-busy: another worker holds set %lld", set_id);
    return locked;
}

static void unlock_set(retrigger *w, const char *lock_key, const char *set_text)
{
    const char *params[] = {lock_key};
    PGresult *res = NULL;
    if (rt_pg_exec(w->pg, SQL_UNLOCK, 1, params, &res) != RT_OK)
        rt_log_warn("cannot release the set lock", "set_id", set_text);
    PQclear(res);
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
static bool load_and_lock(round_call *t, char lock_key[16])
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
    return lock_set(t->w, t->s.id, lock_key, t->h);
}

/* What an earlier delivery of this round did, read under the lock (a copy of this request
 * may have been handled by another worker up to a moment ago): false when it finished, its
 * call may still be in flight, or its interrupted call reached Taskcluster. */
static bool no_earlier_call(round_call *t)
{
    retrigger *w = t->w;
    const char *params[] = {t->s.id_text, t->s.round_text};
    PGresult *res = NULL;
    int ac[A_N];
    if (rt_pg_exec(w->pg, SQL_ACTION, 2, params, &res) != RT_OK ||
        rt_pg_result_columns(&res, ACTION_COLS, A_N, ac) != RT_OK) {
        rt_outcome_set(t->h, RT_SETTLE_REQUEUE, "postgres: %s", rt_pg_errstr(w->pg));
        return false;
    }
    bool have_intent = PQntuples(res) == 1;
    bool finished = have_intent && PQgetvalue(res, 0, ac[A_FINISHED])[0] == 't';
    int attempts = have_intent ? atoi(PQgetvalue(res, 0, ac[A_ATTEMPTS])) : 0;
    long long since_call_ms = have_intent ? atoll(PQgetvalue(res, 0, ac[A_SINCE_CALL_MS])) : 0;
    PQclear(res);
    if (finished) return false; /* done before: a redelivery */
    /* A worker that died in the middle of a call leaves that call in flight: Taskcluster
     * may create the action task after we look for it. Look only once the call would have
     * timed out. */
    long long call_ms = (long long)w->cfg->http_connect_timeout_ms + w->cfg->http_timeout_ms;
    if (attempts > 0 && since_call_ms < call_ms) {
        rt_outcome_set(t->h, RT_SETTLE_WAIT,
                       "call-in-flight: the hook call for set %lld started %lld ms ago", t->s.id,
                       since_call_ms);
        return false;
    }
    if (!have_intent) return true;
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
    int rc = get_actions(t->w, t->s.decision_task_id, &t->actions, &lookup);
    if (rc == RT_OK &&
        (rc = fetch_task(t->w, t->s.original_task_id, &t->task, &t->tags, t->h)) != RT_OK)
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
    rc = check_hook(t->w, &t->s, &t->task, t->action, input, t->payload, &t->creds, &refused_code,
                    refused);
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

/* The intent recorded, then the hook called (dry-run: only recorded) and its outcome. */
static void send_round(round_call *t)
{
    retrigger *w = t->w;
    set_info *s = &t->s;
    const char *iparams[] = {s->id_text,
                             t->action_name,
                             s->decision_task_id,
                             t->action->hook_group_id,
                             t->action->hook_id,
                             t->payload_text,
                             w->cfg->dry_run ? "true" : "false",
                             s->round_text};
    if (rt_pg_exec(w->pg, SQL_INTENT, 8, iparams, NULL) != RT_OK) {
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
    const char *aparams[] = {s->id_text, s->round_text};
    int rc = call_hook(w, SQL_ATTEMPT, aparams, 2, t->action, t->payload_text, &t->creds,
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
        const char *eparams[] = {s->id_text, t->h->reason, s->round_text};
        if (rt_pg_exec(w->pg, SQL_ERROR, 3, eparams, NULL) != RT_OK)
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

static void retrigger_set(retrigger *w, const rt_retrigger_request *req, rt_outcome *h)
{
    round_call t = {.w = w, .req = req, .h = h, .action_name = w->cfg->retrigger_action};
    char lock_key[16];
    if (!load_and_lock(&t, lock_key)) return;
    if (no_earlier_call(&t) && still_unclassified(&t) && find_action(&t) && render_and_check(&t))
        send_round(&t);
    unlock_set(w, lock_key, t.s.id_text);
    json_decref(t.tags);
    json_decref(t.payload);
    free(t.payload_text);
    rt_taskdef_free(&t.task);
}

/* ---- culprit probes: add-new-jobs on a push of a culprit search's window ----
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
 * marks the row failed with the reason, and retrig-decide stops the search on it. */

static const char SQL_PROBE_SEARCHING[] =
    "SELECT count(*) AS searching FROM decisions WHERE set_id = $1::bigint"
    " AND culprit_status = 'searching'";
enum { PS_SEARCHING, PS_N };
static const char *const PROBE_SEARCHING_COLS[PS_N] = {"searching"};
static const char SQL_PROBE_ROW[] =
    "SELECT attempt, state, calls,"
    " (extract(epoch FROM now() - intent_at) * 1000)::bigint AS since_call_ms,"
    " coalesce(decision_task_id, '') AS decision_task_id,"
    " array_to_string(previous_action_task_ids, ',') AS previous"
    " FROM culprit_pending_probes WHERE set_id = $1::bigint AND revision = $2";
enum { PR_ATTEMPT, PR_STATE, PR_CALLS, PR_SINCE_CALL_MS, PR_DECISION, PR_PREVIOUS, PR_N };
static const char *const PROBE_ROW_COLS[PR_N] = {
    "attempt", "state", "calls", "since_call_ms", "decision_task_id", "previous"};
static const char SQL_PROBE_CREATE[] =
    "INSERT INTO culprit_pending_probes (set_id, revision, pushlog_id, label, round, attempt,"
    " times, confirm, decision_task_id, payload, dry_run, hook_group_id, hook_id, state)"
    " VALUES ($1::bigint, $2, $3::bigint, $4, $5::integer, $6::integer, $7::integer,"
    " $8::boolean, $9, $10::jsonb, $11::boolean, $12, $13, $14)"
    " ON CONFLICT (set_id, revision) DO UPDATE SET pushlog_id = EXCLUDED.pushlog_id,"
    " round = EXCLUDED.round, attempt = EXCLUDED.attempt, times = EXCLUDED.times,"
    " confirm = EXCLUDED.confirm, decision_task_id = EXCLUDED.decision_task_id,"
    " payload = EXCLUDED.payload, dry_run = EXCLUDED.dry_run,"
    " hook_group_id = EXCLUDED.hook_group_id, hook_id = EXCLUDED.hook_id,"
    " state = EXCLUDED.state, calls = 0, error = NULL, intent_at = now(), triggered_at = NULL,"
    " done_at = NULL, action_task_id = NULL,"
    " previous_action_task_ids = CASE WHEN culprit_pending_probes.action_task_id IS NULL"
    "   THEN culprit_pending_probes.previous_action_task_ids"
    "   ELSE culprit_pending_probes.previous_action_task_ids"
    "        || culprit_pending_probes.action_task_id END"
    " WHERE culprit_pending_probes.attempt = EXCLUDED.attempt - 1"
    " AND culprit_pending_probes.state IN ('done', 'dry-run')"
    " RETURNING set_id";
static const char SQL_PROBE_LEDGER[] =
    "INSERT INTO budget_ledger (platform, day, amount, idempotency_key, set_id, reason)"
    " VALUES ($1, $2::date, $3::integer, $4, $5::bigint, $6)"
    " ON CONFLICT (idempotency_key) DO NOTHING";
static const char SQL_PROBE_CALLING[] =
    "UPDATE culprit_pending_probes SET calls = calls + 1, intent_at = now()"
    " WHERE set_id = $1::bigint AND revision = $2";
static const char SQL_PROBE_TRIGGERED[] =
    "UPDATE culprit_pending_probes SET state = 'triggered', action_task_id = $3,"
    " triggered_at = now(), error = NULL"
    " WHERE set_id = $1::bigint AND revision = $2 AND state = 'intent'";
static const char SQL_PROBE_ERROR[] =
    "UPDATE culprit_pending_probes SET error = $3"
    " WHERE set_id = $1::bigint AND revision = $2 AND state = 'intent'";
static const char SQL_PROBE_FAILED[] =
    "INSERT INTO culprit_pending_probes (set_id, revision, label, round, attempt, times, confirm,"
    " state, error, done_at) VALUES ($1::bigint, $2, $3, $4::integer, $5::integer, $6::integer,"
    " $7::boolean, 'failed', $8, now())"
    " ON CONFLICT (set_id, revision) DO UPDATE SET state = 'failed', error = EXCLUDED.error,"
    " attempt = EXCLUDED.attempt, done_at = now()"
    " WHERE culprit_pending_probes.state NOT IN ('triggered', 'failed')";

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
    const char *params[] = {p->set_id,
                            r->revision,
                            r->label,
                            p->round,
                            p->attempt,
                            p->times,
                            r->confirm ? "true" : "false",
                            why};
    if (rt_pg_exec(p->w->pg, SQL_PROBE_FAILED, 8, params, NULL) != RT_OK)
        rt_outcome_set(h, RT_SETTLE_REQUEUE, "postgres: %s", rt_pg_errstr(p->w->pg));
    else
        rt_log_warn("culprit probe failed", "set_id", p->set_id, "revision", r->revision, "reason",
                    why);
}

static void probe_triggered(probe_ctx *p, const char *action_task_id, rt_outcome *h)
{
    const char *params[] = {p->set_id, p->req->revision, action_task_id};
    if (rt_pg_exec(p->w->pg, SQL_PROBE_TRIGGERED, 3, params, NULL) != RT_OK)
        rt_outcome_set(h, RT_SETTLE_REQUEUE, "postgres: %s", rt_pg_errstr(p->w->pg));
    else
        rt_log_info("culprit probe triggered", "set_id", p->set_id, "revision", p->req->revision,
                    "times", p->times, "attempt", p->attempt, "action_task_id", action_task_id);
}

/* Budget for a new attempt: the Redis claim, then in one transaction the backstop, the
 * intent row and the ledger row. *stored false (with h set or the row failed) when the
 * attempt is not recorded. */
static void probe_intent(probe_ctx *p, const char *pushlog, const char *decision_task_id,
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
    char spent[16], reason[256];
    snprintf(spent, sizeof spent, "%d", claim.spent);
    snprintf(reason, sizeof reason, "culprit probe of set %s on %.12s (attempt %s)", p->set_id,
             r->revision, p->attempt);
    const char *params[] = {p->set_id,
                            r->revision,
                            pushlog,
                            r->label,
                            p->round,
                            p->attempt,
                            p->times,
                            r->confirm ? "true" : "false",
                            decision_task_id,
                            payload,
                            w->cfg->dry_run ? "true" : "false",
                            action->hook_group_id,
                            action->hook_id,
                            w->cfg->dry_run ? "dry-run" : "intent"};
    const char *lparams[] = {r->platform, day, spent, key, p->set_id, reason};
    int kept = 0, total = 0;
    PGresult *res = NULL;
    int rc = rt_pg_begin(w->pg);
    if (rc == RT_OK)
        rc = rt_ledger_backstop(w->pg, r->platform, day, limit, claim.spent, claim.spent, &kept,
                                &total);
    bool fits = rc == RT_OK && kept == claim.spent;
    if (fits) rc = rt_pg_exec(w->pg, SQL_PROBE_CREATE, 14, params, &res);
    bool row = rc == RT_OK && fits && PQntuples(res) == 1;
    PQclear(res);
    if (row) rc = rt_pg_exec(w->pg, SQL_PROBE_LEDGER, 6, lparams, NULL);
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
    const char *sparams[] = {c->p.set_id};
    PGresult *res = NULL;
    int ps[PS_N], pr[PR_N];
    if (rt_pg_exec(w->pg, SQL_PROBE_SEARCHING, 1, sparams, &res) != RT_OK ||
        rt_pg_result_columns(&res, PROBE_SEARCHING_COLS, PS_N, ps) != RT_OK) {
        rt_outcome_set(c->h, RT_SETTLE_REQUEUE, "postgres: %s", rt_pg_errstr(w->pg));
        return false;
    }
    bool searching = atoi(PQgetvalue(res, 0, ps[PS_SEARCHING])) == 1;
    PQclear(res);
    if (!searching) return false; /* the search is over (or its decision gone): nothing to do */
    const char *rparams[] = {c->p.set_id, r->revision};
    res = NULL;
    if (rt_pg_exec(w->pg, SQL_PROBE_ROW, 2, rparams, &res) != RT_OK ||
        rt_pg_result_columns(&res, PROBE_ROW_COLS, PR_N, pr) != RT_OK) {
        rt_outcome_set(c->h, RT_SETTLE_REQUEUE, "postgres: %s", rt_pg_errstr(w->pg));
        return false;
    }
    char state[16] = "";
    rt_culprit_probe_row row = {.exists = PQntuples(res) == 1, .state = state};
    if (row.exists) {
        row.attempt = atoi(PQgetvalue(res, 0, pr[PR_ATTEMPT]));
        snprintf(state, sizeof state, "%s", PQgetvalue(res, 0, pr[PR_STATE]));
        row.calls = atoi(PQgetvalue(res, 0, pr[PR_CALLS]));
        row.since_call_ms = atoll(PQgetvalue(res, 0, pr[PR_SINCE_CALL_MS]));
        snprintf(c->decision_task_id, sizeof c->decision_task_id, "%s",
                 PQgetvalue(res, 0, pr[PR_DECISION]));
        snprintf(c->previous, sizeof c->previous, "%s", PQgetvalue(res, 0, pr[PR_PREVIOUS]));
    }
    PQclear(res);
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
    if (get_actions(w, c->decision_task_id, &c->actions, &lookup) != RT_OK) {
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
    set_info s = {.id = r->set_id};
    snprintf(s.id_text, sizeof s.id_text, "%s", c->p.set_id);
    snprintf(s.project, sizeof s.project, "%s", r->project);
    snprintf(s.revision, sizeof s.revision, "%s", r->revision);
    snprintf(s.decision_task_id, sizeof s.decision_task_id, "%s", c->decision_task_id);
    const char *refused_code = NULL;
    char refused[RT_ERRSTR_SIZE];
    rc = check_hook(w, &s, &c->task, c->action, input, c->payload, &c->creds, &refused_code,
                    refused);
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

/* A new attempt's budget and intent first; then the call (dry-run: none) and its outcome. */
static void probe_send(probe_call *c)
{
    retrigger *w = c->p.w;
    const rt_culprit_probe_request *r = c->p.req;
    if (c->kind == RT_PROBE_CREATE || c->kind == RT_PROBE_NEXT) {
        char pushlog[32];
        snprintf(pushlog, sizeof pushlog, "%ld", c->pushlog_id);
        bool stored = false;
        probe_intent(&c->p, c->pushlog_id > 0 ? pushlog : NULL, c->decision_task_id, c->action,
                     c->payload_text, &stored, c->h);
        if (!stored) return;
    }
    if (w->cfg->dry_run) {
        rt_log_info("dry run: add-new-jobs not called", "set_id", c->p.set_id, "revision",
                    r->revision, "hook_id", c->action->hook_id);
        return;
    }
    char action_task_id[23] = "";
    const char *cparams[] = {c->p.set_id, r->revision};
    if (call_hook(w, SQL_PROBE_CALLING, cparams, 2, c->action, c->payload_text, &c->creds,
                  action_task_id, c->h) == RT_OK) {
        probe_triggered(&c->p, action_task_id, c->h);
        return;
    }
    const char *eparams[] = {c->p.set_id, r->revision, c->h->reason};
    if (rt_pg_exec(w->pg, SQL_PROBE_ERROR, 3, eparams, NULL) != RT_OK)
        rt_log_warn("cannot record the error", "set_id", c->p.set_id);
}

static void probe(retrigger *w, const rt_culprit_probe_request *r, rt_outcome *h)
{
    probe_call c = {.p = {.w = w, .req = r}, .h = h};
    snprintf(c.p.set_id, sizeof c.p.set_id, "%lld", r->set_id);
    snprintf(c.p.round, sizeof c.p.round, "%d", r->round);
    snprintf(c.p.attempt, sizeof c.p.attempt, "%d", r->attempt);
    snprintf(c.p.times, sizeof c.p.times, "%d", r->times);
    char lock_key[16];
    if (!lock_set(w, r->set_id, lock_key, h)) return;
    if (probe_step(&c) && (c.kind != RT_PROBE_LOOK_UP || probe_not_sent_before(&c)) &&
        probe_render(&c))
        probe_send(&c);
    unlock_set(w, lock_key, c.p.set_id);
    json_decref(c.payload);
    free(c.payload_text);
    rt_taskdef_free(&c.task);
}

static void handle(void *ctx, rt_amqp *src, rt_amqp_message *m, rt_outcome *h)
{
    retrigger *w = ctx;
    (void)src;
    rt_retrigger_request req;
    char reason[RT_MESSAGE_REASON_SIZE];
    /* The queue also carries retrig-decide's culprit probes (culprit_probe.inc). */
    rt_culprit_probe_request probe_req;
    int prc = rt_culprit_probe_request_parse(m->body, m->len, &probe_req, reason);
    if (prc == RT_OK) {
        probe(w, &probe_req, h);
        return;
    }
    if (prc != RT_ENOTFOUND) {
        rt_outcome_set(h, RT_SETTLE_DEAD, "%s", reason);
        return;
    }
    if (rt_retrigger_request_parse(m->body, m->len, &req, reason) != RT_OK) {
        rt_outcome_set(h, RT_SETTLE_DEAD, "%s", reason);
        return;
    }
    retrigger_set(w, &req, h);
    rt_retrigger_request_free(&req);
}

/* The work queue with its delay queues, and its consumer. */
static int declare(void *ctx, const rt_worker_conns *conns)
{
    retrigger *w = ctx;
    const rt_config *cfg = w->cfg;
    rt_amqp_work_queue queues[] = {{w->queue, "retrigger", w->delays, w->ndelays}};
    int rc = rt_worker_declare_queues(conns->broker, cfg, queues, 1);
    if (rc == RT_OK) rc = rt_amqp_consume(conns->broker, w->queue);
    return rc;
}

static int setup(retrigger *w, rt_config *cfg)
{
    char errstr[RT_ERRSTR_SIZE] = "";
    int rc;
    w->cfg = cfg;
    for (size_t i = 0; i < cfg->retry_delays_ms.count && i < MAX_DELAYS; i++)
        w->delays[w->ndelays++] = atoi(cfg->retry_delays_ms.items[i]);
    snprintf(w->queue, sizeof w->queue, "%s.retrigger", cfg->amqp_namespace);
    if (rt_worker_needs_taskcluster(cfg)) return RT_ECONFIG;
    rt_http_options hopts;
    rt_http_options_from_config(&hopts, cfg);
    if ((rc = rt_http_new(&w->http, &hopts, errstr)) != RT_OK) return rc;
    hopts.max_attempts = 1;
    if ((rc = rt_http_new(&w->http_post, &hopts, errstr)) != RT_OK) return rc;
    rt_worker_setup connect = {
        "retrigger",     RT_WORKER_NEEDS_BROKER | RT_WORKER_NEEDS_POSTGRES, 0, 1, declare, w,
        &rt_worker_redis};
    if ((rc = rt_worker_connect(cfg, &connect, &w->conns)) != RT_OK) return rc;
    w->amqp = w->conns.broker;
    w->redis = w->conns.redis;
    w->pg = w->conns.pg;
    return RT_OK;
}

static void teardown(retrigger *w)
{
    rt_worker_disconnect(&w->conns);
    rt_http_free(w->http);
    rt_http_free(w->http_post);
    for (size_t i = 0; i < ACTIONS_CACHE; i++) rt_actions_free(w->cache[i].actions);
}

static int run(rt_config *cfg)
{
    retrigger w = {0};
    int rc = setup(&w, cfg);
    if (rc == RT_OK) {
        rt_log_info("consuming", "queue", w.queue, "dry_run", cfg->dry_run ? "true" : "false");
        rt_worker_settler settler = {w.amqp, w.queue, w.delays, w.ndelays, NULL, NULL};
        rt_worker_loop loop = {.cfg = cfg,
                               .conns = &w.conns,
                               .lanes = 1,
                               .apply_reloads = true,
                               .sources = {w.amqp, NULL},
                               .settler = &settler,
                               .ctx = &w,
                               .handle = handle};
        rt_worker_consume(&loop);
        rt_log_info("stopping: finished the request in hand");
    }
    teardown(&w);
    return rt_worker_exit_status(rc);
}

static int check(rt_config *cfg)
{
    int failures = rt_worker_check_services(
        cfg, "retrigger", RT_WORKER_NEEDS_BROKER | RT_WORKER_NEEDS_POSTGRES, &rt_worker_redis);
    failures += rt_worker_needs_taskcluster(cfg);
    return rt_worker_check_result(failures);
}

int main(int argc, char **argv)
{
    static const rt_worker_def def = {
        "retrigger",
        "Consumes retrigger requests and triggers the push's retrigger action in Taskcluster\n"
        "(hooks.triggerHook with Hawk authentication), exactly once per set.",
        run,
        check,
    };
    return rt_worker_main(&def, argc, argv);
}
