/* SPDX-License-Identifier: MPL-2.0 */
/* hook_calls.c - the statements of retrig-retrigger's hook calls (hook_calls.h). Moved from
 * workers/retrigger/main.c (issue 33): the statements are unchanged (the state's read names
 * only the columns it uses). */
#include "common/store/hook_calls.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char SQL_TRY_LOCK[] = "SELECT pg_try_advisory_lock(7271, $1::integer) AS locked";
enum { TL_LOCKED, TL_N };
static const char *const TRY_LOCK_COLS[TL_N] = {"locked"};
static const char SQL_UNLOCK[] = "SELECT pg_advisory_unlock(7271, $1::integer)";

/* The set and what its round asks for: round 1 the set's own count, a later round its row. */
static const char SQL_ROUND_TARGET[] =
    "SELECT s.project, s.revision, s.label, s.original_task_id,"
    " CASE WHEN $2::integer = 1 THEN s.retrigger_count ELSE r.retriggers END AS retriggers,"
    " s.platform, s.task_group_id FROM retrigger_sets s"
    " LEFT JOIN retrigger_rounds r ON r.set_id = s.id AND r.round = $2::integer"
    " WHERE s.id = $1::bigint AND ($2::integer = 1 OR r.retriggers > 0)";
enum { S_PROJECT, S_REVISION, S_LABEL, S_ORIGINAL, S_RETRIGGERS, S_PLATFORM, S_GROUP, S_N };
static const char *const ROUND_TARGET_COLS[S_N] = {
    "project", "revision", "label", "original_task_id", "retriggers", "platform", "task_group_id"};
static const char SQL_ROUND_STATE[] =
    "SELECT outcome IS NOT NULL AS finished, attempts,"
    " (extract(epoch FROM now() - intent_at) * 1000)::bigint AS since_call_ms"
    " FROM retrigger_actions WHERE set_id = $1::bigint AND round = $2::integer";
enum { A_FINISHED, A_ATTEMPTS, A_SINCE_CALL_MS, A_N };
static const char *const ROUND_STATE_COLS[A_N] = {"finished", "attempts", "since_call_ms"};
static const char SQL_OTHER_ACTIONS[] =
    "SELECT action_task_id FROM retrigger_actions WHERE set_id = $1::bigint"
    " AND round <> $2::integer AND action_task_id IS NOT NULL ORDER BY round LIMIT 64";
enum { OA_ACTION_TASK_ID, OA_N };
static const char *const OTHER_ACTIONS_COLS[OA_N] = {"action_task_id"};
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

static const char SQL_SEARCHING[] =
    "SELECT count(*) AS searching FROM decisions WHERE set_id = $1::bigint"
    " AND culprit_status = 'searching'";
enum { PS_SEARCHING, PS_N };
static const char *const SEARCHING_COLS[PS_N] = {"searching"};
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

/* The decimal texts of a statement's integer parameters. */
typedef struct ids_text {
    char set[24], round[16];
} ids_text;

static void ids(ids_text *t, long long set_id, int round)
{
    snprintf(t->set, sizeof t->set, "%lld", set_id);
    snprintf(t->round, sizeof t->round, "%d", round);
}

static void lock_key(char out[16], long long set_id)
{
    snprintf(out, 16, "%d", (int)(set_id % 2147483647));
}

int rt_hook_calls_try_lock(rt_pg *pg, long long set_id, bool *locked)
{
    char key[16];
    lock_key(key, set_id);
    const char *params[] = {key};
    PGresult *res = NULL;
    int c[TL_N];
    int rc = rt_pg_exec(pg, SQL_TRY_LOCK, 1, params, &res);
    if (rc == RT_OK) rc = rt_pg_result_columns(&res, TRY_LOCK_COLS, TL_N, c);
    if (rc != RT_OK) return rc;
    *locked = PQntuples(res) == 1 && PQgetvalue(res, 0, c[TL_LOCKED])[0] == 't';
    PQclear(res);
    return RT_OK;
}

int rt_hook_calls_unlock(rt_pg *pg, long long set_id)
{
    char key[16];
    lock_key(key, set_id);
    const char *params[] = {key};
    return rt_pg_exec(pg, SQL_UNLOCK, 1, params, NULL);
}

static void copy_value(char *out, size_t size, const PGresult *res, int col)
{
    snprintf(out, size, "%s", PQgetvalue(res, 0, col));
}

int rt_hook_calls_round_target(rt_pg *pg, long long set_id, int round, rt_round_target *t,
                               bool *found)
{
    ids_text id;
    ids(&id, set_id, round);
    const char *params[] = {id.set, id.round};
    PGresult *res = NULL;
    int c[S_N];
    memset(t, 0, sizeof *t);
    int rc = rt_pg_exec(pg, SQL_ROUND_TARGET, 2, params, &res);
    if (rc == RT_OK) rc = rt_pg_result_columns(&res, ROUND_TARGET_COLS, S_N, c);
    if (rc != RT_OK) return rc;
    *found = PQntuples(res) == 1;
    if (*found) {
        copy_value(t->project, sizeof t->project, res, c[S_PROJECT]);
        copy_value(t->revision, sizeof t->revision, res, c[S_REVISION]);
        copy_value(t->label, sizeof t->label, res, c[S_LABEL]);
        copy_value(t->original_task_id, sizeof t->original_task_id, res, c[S_ORIGINAL]);
        t->count = atoi(PQgetvalue(res, 0, c[S_RETRIGGERS]));
        copy_value(t->platform, sizeof t->platform, res, c[S_PLATFORM]);
        copy_value(t->task_group_id, sizeof t->task_group_id, res, c[S_GROUP]);
    }
    PQclear(res);
    return RT_OK;
}

int rt_hook_calls_round_state(rt_pg *pg, long long set_id, int round, rt_round_call_state *state)
{
    ids_text id;
    ids(&id, set_id, round);
    const char *params[] = {id.set, id.round};
    PGresult *res = NULL;
    int c[A_N];
    memset(state, 0, sizeof *state);
    int rc = rt_pg_exec(pg, SQL_ROUND_STATE, 2, params, &res);
    if (rc == RT_OK) rc = rt_pg_result_columns(&res, ROUND_STATE_COLS, A_N, c);
    if (rc != RT_OK) return rc;
    state->have_intent = PQntuples(res) == 1;
    if (state->have_intent) {
        state->finished = PQgetvalue(res, 0, c[A_FINISHED])[0] == 't';
        state->attempts = atoi(PQgetvalue(res, 0, c[A_ATTEMPTS]));
        state->since_call_ms = atoll(PQgetvalue(res, 0, c[A_SINCE_CALL_MS]));
    }
    PQclear(res);
    return RT_OK;
}

int rt_hook_calls_other_action_tasks(rt_pg *pg, long long set_id, int round, char (*out)[23],
                                     size_t max, size_t *n)
{
    ids_text id;
    ids(&id, set_id, round);
    const char *params[] = {id.set, id.round};
    PGresult *res = NULL;
    int c[OA_N];
    *n = 0;
    int rc = rt_pg_exec(pg, SQL_OTHER_ACTIONS, 2, params, &res);
    if (rc == RT_OK) rc = rt_pg_result_columns(&res, OTHER_ACTIONS_COLS, OA_N, c);
    if (rc != RT_OK) return rc;
    for (int i = 0; i < PQntuples(res) && *n < max; i++)
        snprintf(out[(*n)++], 23, "%s", PQgetvalue(res, i, c[OA_ACTION_TASK_ID]));
    PQclear(res);
    return RT_OK;
}

int rt_hook_calls_round_intent(rt_pg *pg, const rt_round_intent *in)
{
    ids_text id;
    ids(&id, in->set_id, in->round);
    const char *params[] = {
        id.set,      in->action_name, in->decision_task_id,           in->hook_group_id,
        in->hook_id, in->payload,     in->dry_run ? "true" : "false", id.round};
    return rt_pg_exec(pg, SQL_INTENT, 8, params, NULL);
}

int rt_hook_calls_round_attempt(rt_pg *pg, long long set_id, int round)
{
    ids_text id;
    ids(&id, set_id, round);
    const char *params[] = {id.set, id.round};
    return rt_pg_exec(pg, SQL_ATTEMPT, 2, params, NULL);
}

int rt_hook_calls_round_error(rt_pg *pg, long long set_id, int round, const char *error)
{
    ids_text id;
    ids(&id, set_id, round);
    const char *params[] = {id.set, error, id.round};
    return rt_pg_exec(pg, SQL_ERROR, 3, params, NULL);
}

/* What the outcome does to the set (see rt_round_outcome). */
static int set_after_outcome(rt_pg *pg, const rt_round_outcome *o, const ids_text *id)
{
    const char *status = o->set_status;
    bool failed = status && !strcmp(status, "failed");
    if (!status) return RT_OK;
    if (o->round == 1 && failed) {
        const char *params[] = {id->set, o->outcome};
        return rt_pg_exec(pg, SQL_FIRST_ROUND_FAILED, 2, params, NULL);
    }
    if (o->round == 1) {
        const char *params[] = {id->set, status, o->action_task_id};
        return rt_pg_exec(pg, SQL_SET_STATUS, 3, params, NULL);
    }
    if (failed) {
        char count[16];
        snprintf(count, sizeof count, "%d", o->count);
        const char *params[] = {id->set, count};
        return rt_pg_exec(pg, SQL_ROUND_FAILED, 2, params, NULL);
    }
    const char *params[] = {id->set};
    return rt_pg_exec(pg, SQL_ROUND_STATUS, 1, params, NULL);
}

int rt_hook_calls_round_outcome(rt_pg *pg, const rt_round_outcome *o)
{
    ids_text id;
    ids(&id, o->set_id, o->round);
    const char *params[] = {id.set,
                            o->action_name,
                            o->decision_task_id,
                            o->dry_run ? "true" : "false",
                            o->outcome,
                            o->action_task_id,
                            o->error,
                            id.round};
    /* The outcome and the set's status in one transaction: a crash between them must not
     * leave an outcome whose set still says pending (its redelivery finds the outcome and
     * goes no further). */
    bool own = o->set_status && !rt_pg_in_transaction(pg);
    int rc = own ? rt_pg_begin(pg) : RT_OK;
    if (rc == RT_OK) rc = rt_pg_exec(pg, SQL_OUTCOME, 8, params, NULL);
    if (rc == RT_OK) rc = set_after_outcome(pg, o, &id);
    if (own && rc == RT_OK) rc = rt_pg_commit(pg);
    if (own && rc != RT_OK && rt_pg_in_transaction(pg)) {
        int ignored = rt_pg_rollback(pg);
        (void)ignored;
    }
    return rc;
}

int rt_hook_calls_searching(rt_pg *pg, long long set_id, bool *searching)
{
    ids_text id;
    ids(&id, set_id, 0);
    const char *params[] = {id.set};
    PGresult *res = NULL;
    int c[PS_N];
    int rc = rt_pg_exec(pg, SQL_SEARCHING, 1, params, &res);
    if (rc == RT_OK) rc = rt_pg_result_columns(&res, SEARCHING_COLS, PS_N, c);
    if (rc != RT_OK) return rc;
    *searching = PQntuples(res) == 1 && atoi(PQgetvalue(res, 0, c[PS_SEARCHING])) == 1;
    PQclear(res);
    return RT_OK;
}

int rt_hook_calls_probe_row(rt_pg *pg, long long set_id, const char *revision,
                            rt_culprit_probe_row *row, char state[16], char decision_task_id[23],
                            char *previous, size_t previous_size)
{
    ids_text id;
    ids(&id, set_id, 0);
    const char *params[] = {id.set, revision};
    PGresult *res = NULL;
    int c[PR_N];
    int rc = rt_pg_exec(pg, SQL_PROBE_ROW, 2, params, &res);
    if (rc == RT_OK) rc = rt_pg_result_columns(&res, PROBE_ROW_COLS, PR_N, c);
    if (rc != RT_OK) return rc;
    state[0] = '\0';
    *row = (rt_culprit_probe_row){.exists = PQntuples(res) == 1, .state = state};
    if (row->exists) {
        row->attempt = atoi(PQgetvalue(res, 0, c[PR_ATTEMPT]));
        copy_value(state, 16, res, c[PR_STATE]);
        row->calls = atoi(PQgetvalue(res, 0, c[PR_CALLS]));
        row->since_call_ms = atoll(PQgetvalue(res, 0, c[PR_SINCE_CALL_MS]));
        copy_value(decision_task_id, 23, res, c[PR_DECISION]);
        copy_value(previous, previous_size, res, c[PR_PREVIOUS]);
    }
    PQclear(res);
    return RT_OK;
}

int rt_hook_calls_probe_intent(rt_pg *pg, const rt_probe_intent *in, bool *stored)
{
    char set[24], pushlog[32], round[16], attempt[16], times[16], spent[16];
    snprintf(set, sizeof set, "%lld", in->set_id);
    snprintf(pushlog, sizeof pushlog, "%ld", in->pushlog_id);
    snprintf(round, sizeof round, "%d", in->round);
    snprintf(attempt, sizeof attempt, "%d", in->attempt);
    snprintf(times, sizeof times, "%d", in->times);
    snprintf(spent, sizeof spent, "%d", in->spent);
    const char *params[] = {set,
                            in->revision,
                            in->pushlog_id > 0 ? pushlog : NULL,
                            in->label,
                            round,
                            attempt,
                            times,
                            in->confirm ? "true" : "false",
                            in->decision_task_id,
                            in->payload,
                            in->dry_run ? "true" : "false",
                            in->hook_group_id,
                            in->hook_id,
                            in->dry_run ? "dry-run" : "intent"};
    const char *lparams[] = {in->platform, in->day, spent, in->ledger_key, set, in->ledger_reason};
    PGresult *res = NULL;
    *stored = false;
    int rc = rt_pg_exec(pg, SQL_PROBE_CREATE, 14, params, &res);
    bool row = rc == RT_OK && PQntuples(res) == 1;
    PQclear(res);
    if (row) rc = rt_pg_exec(pg, SQL_PROBE_LEDGER, 6, lparams, NULL);
    *stored = row && rc == RT_OK;
    return rc;
}

int rt_hook_calls_probe_calling(rt_pg *pg, long long set_id, const char *revision)
{
    ids_text id;
    ids(&id, set_id, 0);
    const char *params[] = {id.set, revision};
    return rt_pg_exec(pg, SQL_PROBE_CALLING, 2, params, NULL);
}

int rt_hook_calls_probe_triggered(rt_pg *pg, long long set_id, const char *revision,
                                  const char *action_task_id)
{
    ids_text id;
    ids(&id, set_id, 0);
    const char *params[] = {id.set, revision, action_task_id};
    return rt_pg_exec(pg, SQL_PROBE_TRIGGERED, 3, params, NULL);
}

int rt_hook_calls_probe_error(rt_pg *pg, long long set_id, const char *revision, const char *error)
{
    ids_text id;
    ids(&id, set_id, 0);
    const char *params[] = {id.set, revision, error};
    return rt_pg_exec(pg, SQL_PROBE_ERROR, 3, params, NULL);
}

int rt_hook_calls_probe_failed(rt_pg *pg, const rt_probe_failure *f)
{
    char set[24], round[16], attempt[16], times[16];
    snprintf(set, sizeof set, "%lld", f->set_id);
    snprintf(round, sizeof round, "%d", f->round);
    snprintf(attempt, sizeof attempt, "%d", f->attempt);
    snprintf(times, sizeof times, "%d", f->times);
    const char *params[] = {
        set, f->revision, f->label, round, attempt, times, f->confirm ? "true" : "false", f->why};
    return rt_pg_exec(pg, SQL_PROBE_FAILED, 8, params, NULL);
}
