/* SPDX-License-Identifier: MPL-2.0 */
/* pools.c - the pooled sets' statements and their readers (pools.h, migration 0035). */
#include "common/store/pools.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The pooled set opened or found (its unique key), then the member added (its set's unique
 * key): concurrent joins of one test serialise on the pooled set's row. */
static const char SQL_JOIN[] =
    "WITH pool AS ("
    "  INSERT INTO pooled_sets (project, revision, test, group_name, settle_until, deadline_at)"
    "  VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5::integer),"
    "          now() + make_interval(mins => $6::integer))"
    "  ON CONFLICT (project, revision, test) DO UPDATE"
    "   SET group_name = coalesce(pooled_sets.group_name, EXCLUDED.group_name)"
    "  RETURNING id, (xmax = 0) AS opened),"
    " member AS ("
    "  INSERT INTO pooled_set_members (pool_id, set_id, config)"
    "  SELECT id, $7::bigint, $8 FROM pool ON CONFLICT DO NOTHING RETURNING pool_id)"
    " SELECT pool.id, pool.opened, EXISTS (SELECT 1 FROM member) AS joined FROM pool";
enum { JN_ID, JN_OPENED, JN_JOINED, JN_N };
static const char *const JOIN_COLS[JN_N] = {"id", "opened", "joined"};
static const char SQL_OF_SET[] = "SELECT pool_id FROM pooled_set_members WHERE set_id = $1::bigint";
static const char *const OF_SET_COLS[] = {"pool_id"};
static const char SQL_SET_FAILURE[] =
    "SELECT s.project, s.revision, coalesce(s.platform, '') AS platform, s.label,"
    " coalesce(f.value->>'test', '') AS test, coalesce(f.value->>'group', '') AS group_name"
    " FROM retrigger_sets s LEFT JOIN LATERAL ("
    "  SELECT e.value FROM jsonb_array_elements(CASE WHEN jsonb_typeof(s.failures) = 'array'"
    "   THEN s.failures ELSE '[]'::jsonb END) WITH ORDINALITY AS e(value, n)"
    "  WHERE coalesce(e.value->>'test', '') <> '' ORDER BY e.n LIMIT 1) f ON true"
    " WHERE s.id = $1::bigint";
enum { SF_PROJECT, SF_REVISION, SF_PLATFORM, SF_LABEL, SF_TEST, SF_GROUP, SF_N };
static const char *const SET_FAILURE_COLS[SF_N] = {"project", "revision", "platform",
                                                   "label",   "test",     "group_name"};
static const char SQL_LOCK[] =
    "SELECT id, project, revision, test, coalesce(group_name, '') AS group_name, state,"
    " now() >= settle_until AS settled, now() >= deadline_at AS past_deadline, rounds,"
    " retriggers, coalesce(verdict, '') AS verdict, coalesce(reason, '') AS reason,"
    " coalesce(p_regression, -1) AS p_regression"
    " FROM pooled_sets WHERE id = $1::bigint FOR UPDATE";
enum {
    LK_ID,
    LK_PROJECT,
    LK_REVISION,
    LK_TEST,
    LK_GROUP,
    LK_STATE,
    LK_SETTLED,
    LK_PAST_DEADLINE,
    LK_ROUNDS,
    LK_RETRIGGERS,
    LK_VERDICT,
    LK_REASON,
    LK_P,
    LK_N
};
static const char *const LOCK_COLS[LK_N] = {
    "id",      "project", "revision",      "test",   "group_name",
    "state",   "settled", "past_deadline", "rounds", "retriggers",
    "verdict", "reason",  "p_regression"};
static const char SQL_MEMBERS[] =
    "SELECT m.set_id, m.config, m.retriggers, m.reproduced, m.unusable,"
    " s.retrigger_count + s.later_retriggers AS requested, s.found_count AS found,"
    " m.asked_round, m.asked, m.set_round, s.round AS latest_set_round,"
    " (s.status = 'decided' OR EXISTS (SELECT 1 FROM decisions d WHERE d.set_id = s.id))"
    "  AS set_decided, s.project,"
    " r.set_id IS NOT NULL AS round_made, coalesce(r.refused, false) AS round_refused,"
    " coalesce(r.published_at IS NOT NULL, false) AS round_published"
    " FROM pooled_set_members m JOIN retrigger_sets s ON s.id = m.set_id"
    " LEFT JOIN retrigger_rounds r ON r.set_id = m.set_id AND r.round = m.set_round"
    " WHERE m.pool_id = $1::bigint ORDER BY m.joined_at, m.set_id LIMIT $2::integer";
enum {
    MB_SET_ID,
    MB_CONFIG,
    MB_RETRIGGERS,
    MB_REPRODUCED,
    MB_UNUSABLE,
    MB_REQUESTED,
    MB_FOUND,
    MB_ASKED_ROUND,
    MB_ASKED,
    MB_SET_ROUND,
    MB_LATEST_SET_ROUND,
    MB_SET_DECIDED,
    MB_PROJECT,
    MB_ROUND_MADE,
    MB_ROUND_REFUSED,
    MB_ROUND_PUBLISHED,
    MB_N
};
static const char *const MEMBER_COLS[MB_N] = {
    "set_id",  "config",      "retriggers",    "reproduced",     "unusable",         "requested",
    "found",   "asked_round", "asked",         "set_round",      "latest_set_round", "set_decided",
    "project", "round_made",  "round_refused", "round_published"};
static const char SQL_MEMBER_EVIDENCE[] =
    "UPDATE pooled_set_members SET retriggers = $2::integer, reproduced = $3::integer,"
    " unusable = $4::integer WHERE set_id = $1::bigint";
/* The push's runs of the group, from the partitions of the last $5 days (run_at bounds
 * them), with whether the test failed in each. */
static const char SQL_PUSH_RUNS[] =
    "SELECT r.platform, coalesce(r.label, '') AS label,"
    " EXISTS (SELECT 1 FROM history_tests t WHERE t.run_id = r.id AND t.run_at = r.run_at"
    "         AND t.test = $4 AND t.failed) AS failed"
    " FROM history_groups g JOIN history_runs r ON r.id = g.run_id AND r.run_at = g.run_at"
    " WHERE g.group_name = $3 AND r.project = $1 AND r.revision = $2"
    " AND r.source = 'taskcluster' AND r.platform IS NOT NULL"
    " AND g.run_at >= now() - make_interval(days => $5::integer)"
    " AND r.run_at >= now() - make_interval(days => $5::integer)"
    " ORDER BY r.run_at, r.id LIMIT $6::integer";
enum { PR_PLATFORM, PR_LABEL, PR_FAILED, PR_N };
static const char *const PUSH_RUN_COLS[PR_N] = {"platform", "label", "failed"};
static const char SQL_EVALUATED[] =
    "UPDATE pooled_sets SET state = CASE WHEN state = 'settling' THEN 'open' ELSE state END,"
    " p_regression = $2::float8, evidence = $3::jsonb, updated_at = now() WHERE id = $1::bigint";
static const char SQL_ROUND[] =
    "UPDATE pooled_sets SET rounds = $2::integer, retriggers = retriggers + $3::integer,"
    " state = 'open', updated_at = now() WHERE id = $1::bigint";
static const char SQL_MEMBER_ROUND[] =
    "UPDATE pooled_set_members SET asked_round = $3::integer, asked = $4::integer,"
    " set_round = $5::integer WHERE pool_id = $1::bigint AND set_id = $2::bigint";
static const char SQL_DECIDE[] =
    "UPDATE pooled_sets SET state = 'decided', verdict = $2, reason = $3,"
    " p_regression = $4::float8, evidence = $5::jsonb, decided_at = now(), updated_at = now()"
    " WHERE id = $1::bigint";
static const char SQL_STORE_DECISION[] =
    "UPDATE decisions d SET pool_id = p.id, policy = 'pooled', p_regression = p.p_regression,"
    " evidence = jsonb_set(jsonb_set(d.evidence, '{policy,name}', '\"pooled\"', false),"
    "   '{pool}', coalesce(p.evidence, '{}'::jsonb)"
    "   || jsonb_build_object('pool_id', p.id, 'test', p.test, 'group', p.group_name,"
    "                         'verdict', p.verdict, 'reason', p.reason, 'rounds', p.rounds,"
    "                         'retriggers', p.retriggers,"
    "                         'seed', jsonb_build_object('verdict', $3::text,"
    "                                                    'reason', $4::text)))"
    " FROM pooled_sets p WHERE d.set_id = $1::bigint AND p.id = $2::bigint";
static const char SQL_DUE[] =
    "UPDATE pooled_sets p SET wake_requested_at = now()"
    " FROM (SELECT ps.id FROM pooled_sets ps WHERE ps.state <> 'decided'"
    "       AND ((ps.state = 'settling' AND ps.settle_until <= now()) OR ps.deadline_at <= now())"
    "       AND (ps.wake_requested_at IS NULL"
    "            OR ps.wake_requested_at < now() - make_interval(secs => $1::integer))"
    "       ORDER BY ps.settle_until LIMIT $2::integer FOR UPDATE SKIP LOCKED) due"
    " WHERE p.id = due.id"
    " RETURNING p.id, p.project, coalesce((SELECT m.set_id FROM pooled_set_members m"
    "   WHERE m.pool_id = p.id ORDER BY m.joined_at, m.set_id LIMIT 1), 0) AS set_id";
enum { DU_ID, DU_PROJECT, DU_SET_ID, DU_N };
static const char *const DUE_COLS[DU_N] = {"id", "project", "set_id"};

static const char SQL_ADD_TASKS[] =
    "INSERT INTO pooled_set_tasks (pool_id, task_id, label, config, state)"
    " SELECT $1::bigint, t.task_id, t.label, t.config, t.state"
    " FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) AS t(task_id, label, config, "
    "state)"
    " ON CONFLICT DO NOTHING";
/* A task's runs are looked for by their unique key (a run id up to 9: Taskcluster's
 * automatic reruns stop well before), in the partitions of the last $2 days from the day
 * before the pooled set opened (a push's tasks resolve within hours of its first failure):
 * one or two partitions, each probed once per key. */
static const char SQL_TASKS[] =
    "SELECT t.task_id, t.label, t.config, t.state,"
    " t.state = 'exception' OR h.recorded AS finished, h.failed"
    " FROM pooled_set_tasks t JOIN pooled_sets p ON p.id = t.pool_id"
    " CROSS JOIN LATERAL (SELECT count(r.id) > 0 AS recorded, coalesce(bool_or(EXISTS ("
    "   SELECT 1 FROM history_tests x WHERE x.run_id = r.id AND x.run_at = r.run_at"
    "   AND x.test = p.test AND x.failed)), false) AS failed"
    "  FROM history_runs r WHERE r.source = 'taskcluster' AND r.project = p.project"
    "  AND r.run_key = ANY (ARRAY(SELECT t.task_id || '/' || k FROM generate_series(0, 9) k))"
    "  AND r.run_at >= greatest(now() - make_interval(days => $2::integer),"
    "   (SELECT o.opened_at FROM pooled_sets o WHERE o.id = $1::bigint) - interval '1 day')) h"
    " WHERE t.pool_id = $1::bigint ORDER BY t.task_id LIMIT $3::integer";
enum { TK_TASK_ID, TK_LABEL, TK_CONFIG, TK_STATE, TK_FINISHED, TK_FAILED, TK_N };
static const char *const TASK_COLS[TK_N] = {"task_id", "label",    "config",
                                            "state",   "finished", "failed"};
static const char SQL_HAS_TASK[] = "SELECT EXISTS (SELECT 1 FROM pooled_set_tasks"
                                   " WHERE pool_id = $1::bigint AND task_id = $2) AS has";
static const char *const HAS_TASK_COLS[] = {"has"};
static const char SQL_SETTLING[] =
    "SELECT p.id, p.project, p.revision, p.test, coalesce(p.group_name, '') AS group_name,"
    " coalesce((SELECT m.set_id FROM pooled_set_members m WHERE m.pool_id = p.id"
    "   ORDER BY m.joined_at, m.set_id LIMIT 1), 0) AS set_id"
    " FROM pooled_sets p WHERE p.state = 'settling' AND p.settle_until > now()"
    " AND p.deadline_at > now()"
    " AND EXISTS (SELECT 1 FROM pooled_set_tasks t WHERE t.pool_id = p.id)"
    " AND (p.wake_requested_at IS NULL"
    "      OR p.wake_requested_at < now() - make_interval(secs => $1::integer))"
    " ORDER BY p.opened_at, p.id LIMIT $2::integer";
enum { ST_ID, ST_PROJECT, ST_REVISION, ST_TEST, ST_GROUP, ST_SET_ID, ST_N };
static const char *const SETTLING_COLS[ST_N] = {"id",   "project",    "revision",
                                                "test", "group_name", "set_id"};
static const char SQL_WOKEN[] =
    "UPDATE pooled_sets SET wake_requested_at = now() WHERE id = $1::bigint";

static void copy(char *out, size_t size, const char *text)
{
    snprintf(out, size, "%s", text ? text : "");
}

int rt_pools_join(rt_pg *pg, const rt_pools_join_in *in, long long *pool_id, bool *opened,
                  bool *joined)
{
    char settle[16], deadline[16], set[32];
    snprintf(settle, sizeof settle, "%d", in->settle_s);
    snprintf(deadline, sizeof deadline, "%d", in->deadline_minutes);
    snprintf(set, sizeof set, "%lld", in->set_id);
    const char *params[] = {in->project, in->revision, in->test, in->group_name,
                            settle,      deadline,     set,      in->config};
    PGresult *res = NULL;
    int c[JN_N];
    int rc = rt_pg_exec(pg, SQL_JOIN, 8, params, &res);
    if (rc == RT_OK) rc = rt_pg_result_columns(&res, JOIN_COLS, JN_N, c);
    if (rc != RT_OK) return rc;
    *pool_id = rt_pg_int(res, 0, c[JN_ID]);
    *opened = rt_pg_bool(res, 0, c[JN_OPENED]);
    *joined = rt_pg_bool(res, 0, c[JN_JOINED]);
    PQclear(res);
    return RT_OK;
}

int rt_pools_set_failure_of(rt_pg *pg, long long set_id, rt_pools_set_failure *out)
{
    char set[32];
    snprintf(set, sizeof set, "%lld", set_id);
    const char *params[] = {set};
    PGresult *res = NULL;
    int c[SF_N];
    memset(out, 0, sizeof *out);
    int rc = rt_pg_exec(pg, SQL_SET_FAILURE, 1, params, &res);
    if (rc == RT_OK) rc = rt_pg_result_columns(&res, SET_FAILURE_COLS, SF_N, c);
    if (rc != RT_OK) return rc;
    if (PQntuples(res) == 1) {
        copy(out->project, sizeof out->project, rt_pg_text(res, 0, c[SF_PROJECT]));
        copy(out->revision, sizeof out->revision, rt_pg_text(res, 0, c[SF_REVISION]));
        copy(out->platform, sizeof out->platform, rt_pg_text(res, 0, c[SF_PLATFORM]));
        copy(out->label, sizeof out->label, rt_pg_text(res, 0, c[SF_LABEL]));
        copy(out->test, sizeof out->test, rt_pg_text(res, 0, c[SF_TEST]));
        copy(out->group_name, sizeof out->group_name, rt_pg_text(res, 0, c[SF_GROUP]));
    }
    PQclear(res);
    return RT_OK;
}

int rt_pools_of_set(rt_pg *pg, long long set_id, long long *pool_id)
{
    char set[32];
    snprintf(set, sizeof set, "%lld", set_id);
    const char *params[] = {set};
    PGresult *res = NULL;
    int c;
    int rc = rt_pg_exec(pg, SQL_OF_SET, 1, params, &res);
    if (rc == RT_OK) rc = rt_pg_result_columns(&res, OF_SET_COLS, 1, &c);
    if (rc != RT_OK) return rc;
    *pool_id = PQntuples(res) == 1 ? rt_pg_int(res, 0, c) : 0;
    PQclear(res);
    return RT_OK;
}

int rt_pools_lock(rt_pg *pg, long long pool_id, rt_pool_row *row, bool *found)
{
    char id[32];
    snprintf(id, sizeof id, "%lld", pool_id);
    const char *params[] = {id};
    PGresult *res = NULL;
    int c[LK_N];
    memset(row, 0, sizeof *row);
    *found = false;
    int rc = rt_pg_begin_exec(pg, SQL_LOCK, 1, params, &res);
    if (rc == RT_OK) rc = rt_pg_result_columns(&res, LOCK_COLS, LK_N, c);
    if (rc != RT_OK) return rc;
    if (PQntuples(res) == 1) {
        *found = true;
        row->id = rt_pg_int(res, 0, c[LK_ID]);
        copy(row->project, sizeof row->project, rt_pg_text(res, 0, c[LK_PROJECT]));
        copy(row->revision, sizeof row->revision, rt_pg_text(res, 0, c[LK_REVISION]));
        copy(row->test, sizeof row->test, rt_pg_text(res, 0, c[LK_TEST]));
        copy(row->group_name, sizeof row->group_name, rt_pg_text(res, 0, c[LK_GROUP]));
        copy(row->state, sizeof row->state, rt_pg_text(res, 0, c[LK_STATE]));
        row->settled = rt_pg_bool(res, 0, c[LK_SETTLED]);
        row->past_deadline = rt_pg_bool(res, 0, c[LK_PAST_DEADLINE]);
        row->rounds = (int)rt_pg_int(res, 0, c[LK_ROUNDS]);
        row->retriggers = (int)rt_pg_int(res, 0, c[LK_RETRIGGERS]);
        copy(row->verdict, sizeof row->verdict, rt_pg_text(res, 0, c[LK_VERDICT]));
        copy(row->reason, sizeof row->reason, rt_pg_text(res, 0, c[LK_REASON]));
        row->p_regression = rt_pg_float(res, 0, c[LK_P]);
    }
    PQclear(res);
    return RT_OK;
}

int rt_pools_members(rt_pg *pg, long long pool_id, rt_pool_member *out, size_t max, size_t *n)
{
    char id[32], limit[16];
    snprintf(id, sizeof id, "%lld", pool_id);
    snprintf(limit, sizeof limit, "%zu", max);
    const char *params[] = {id, limit};
    PGresult *res = NULL;
    int c[MB_N];
    *n = 0;
    int rc = rt_pg_exec(pg, SQL_MEMBERS, 2, params, &res);
    if (rc == RT_OK) rc = rt_pg_result_columns(&res, MEMBER_COLS, MB_N, c);
    if (rc != RT_OK) return rc;
    for (int i = 0; i < PQntuples(res) && *n < max; i++) {
        rt_pool_member *m = &out[(*n)++];
        memset(m, 0, sizeof *m);
        m->set_id = rt_pg_int(res, i, c[MB_SET_ID]);
        copy(m->config, sizeof m->config, rt_pg_text(res, i, c[MB_CONFIG]));
        m->retriggers = (int)rt_pg_int(res, i, c[MB_RETRIGGERS]);
        m->reproduced = (int)rt_pg_int(res, i, c[MB_REPRODUCED]);
        m->unusable = (int)rt_pg_int(res, i, c[MB_UNUSABLE]);
        m->requested = (int)rt_pg_int(res, i, c[MB_REQUESTED]);
        m->found = (int)rt_pg_int(res, i, c[MB_FOUND]);
        m->asked_round = (int)rt_pg_int(res, i, c[MB_ASKED_ROUND]);
        m->asked = (int)rt_pg_int(res, i, c[MB_ASKED]);
        m->set_round = (int)rt_pg_int(res, i, c[MB_SET_ROUND]);
        m->latest_set_round = (int)rt_pg_int(res, i, c[MB_LATEST_SET_ROUND]);
        m->set_decided = rt_pg_bool(res, i, c[MB_SET_DECIDED]);
        copy(m->project, sizeof m->project, rt_pg_text(res, i, c[MB_PROJECT]));
        m->round_made = rt_pg_bool(res, i, c[MB_ROUND_MADE]);
        m->round_refused = rt_pg_bool(res, i, c[MB_ROUND_REFUSED]);
        m->round_published = rt_pg_bool(res, i, c[MB_ROUND_PUBLISHED]);
    }
    PQclear(res);
    return RT_OK;
}

int rt_pools_member_evidence(rt_pg *pg, long long set_id, int retriggers, int reproduced,
                             int unusable)
{
    char set[32], r[16], k[16], u[16];
    snprintf(set, sizeof set, "%lld", set_id);
    snprintf(r, sizeof r, "%d", retriggers);
    snprintf(k, sizeof k, "%d", reproduced);
    snprintf(u, sizeof u, "%d", unusable);
    const char *params[] = {set, r, k, u};
    return rt_pg_exec(pg, SQL_MEMBER_EVIDENCE, 4, params, NULL);
}

int rt_pools_push_runs(rt_pg *pg, const char *project, const char *revision, const char *group_name,
                       const char *test, int days, rt_pool_push_run *out, size_t max, size_t *n)
{
    char days_text[16], limit[16];
    snprintf(days_text, sizeof days_text, "%d", days);
    snprintf(limit, sizeof limit, "%zu", max);
    const char *params[] = {project, revision, group_name, test, days_text, limit};
    PGresult *res = NULL;
    int c[PR_N];
    *n = 0;
    int rc = rt_pg_exec(pg, SQL_PUSH_RUNS, 6, params, &res);
    if (rc == RT_OK) rc = rt_pg_result_columns(&res, PUSH_RUN_COLS, PR_N, c);
    if (rc != RT_OK) return rc;
    for (int i = 0; i < PQntuples(res) && *n < max; i++) {
        rt_pool_push_run *r = &out[(*n)++];
        copy(r->platform, sizeof r->platform, rt_pg_text(res, i, c[PR_PLATFORM]));
        copy(r->label, sizeof r->label, rt_pg_text(res, i, c[PR_LABEL]));
        r->failed = rt_pg_bool(res, i, c[PR_FAILED]);
    }
    PQclear(res);
    return RT_OK;
}

int rt_pools_evaluated(rt_pg *pg, long long pool_id, double p_regression, const char *evidence)
{
    char id[32], p[32];
    snprintf(id, sizeof id, "%lld", pool_id);
    snprintf(p, sizeof p, "%.17g", p_regression);
    const char *params[] = {id, p, evidence};
    return rt_pg_exec(pg, SQL_EVALUATED, 3, params, NULL);
}

int rt_pools_plan_round(rt_pg *pg, long long pool_id, int round, const long long *set_ids,
                        const int *asked, const int *set_rounds, size_t n)
{
    char id[32], round_text[16], total_text[16];
    int total = 0;
    for (size_t i = 0; i < n; i++) total += asked[i];
    snprintf(id, sizeof id, "%lld", pool_id);
    snprintf(round_text, sizeof round_text, "%d", round);
    snprintf(total_text, sizeof total_text, "%d", total);
    const char *params[] = {id, round_text, total_text};
    int rc = rt_pg_exec(pg, SQL_ROUND, 3, params, NULL);
    for (size_t i = 0; i < n && rc == RT_OK; i++) {
        char set[32], a[16], r[16];
        snprintf(set, sizeof set, "%lld", set_ids[i]);
        snprintf(a, sizeof a, "%d", asked[i]);
        snprintf(r, sizeof r, "%d", set_rounds[i]);
        const char *mparams[] = {id, set, round_text, a, r};
        rc = rt_pg_exec(pg, SQL_MEMBER_ROUND, 5, mparams, NULL);
    }
    return rc;
}

int rt_pools_decide(rt_pg *pg, long long pool_id, const char *verdict, const char *reason,
                    double p_regression, const char *evidence)
{
    char id[32], p[32];
    snprintf(id, sizeof id, "%lld", pool_id);
    snprintf(p, sizeof p, "%.17g", p_regression);
    const char *params[] = {id, verdict, reason, p, evidence};
    return rt_pg_exec(pg, SQL_DECIDE, 5, params, NULL);
}

int rt_pools_store_decision(rt_pg *pg, long long set_id, long long pool_id,
                            const char *seed_verdict, const char *seed_reason)
{
    char set[32], pool[32];
    snprintf(set, sizeof set, "%lld", set_id);
    snprintf(pool, sizeof pool, "%lld", pool_id);
    const char *params[] = {set, pool, seed_verdict, seed_reason};
    return rt_pg_exec(pg, SQL_STORE_DECISION, 4, params, NULL);
}

int rt_pools_due(rt_pg *pg, int again_s, rt_pool_due *out, size_t max, size_t *n)
{
    char again[16], limit[16];
    snprintf(again, sizeof again, "%d", again_s);
    snprintf(limit, sizeof limit, "%zu", max);
    const char *params[] = {again, limit};
    PGresult *res = NULL;
    int c[DU_N];
    *n = 0;
    int rc = rt_pg_exec(pg, SQL_DUE, 2, params, &res);
    if (rc == RT_OK) rc = rt_pg_result_columns(&res, DUE_COLS, DU_N, c);
    if (rc != RT_OK) return rc;
    for (int i = 0; i < PQntuples(res) && *n < max; i++) {
        rt_pool_due *d = &out[(*n)++];
        d->pool_id = rt_pg_int(res, i, c[DU_ID]);
        d->set_id = rt_pg_int(res, i, c[DU_SET_ID]);
        copy(d->project, sizeof d->project, rt_pg_text(res, i, c[DU_PROJECT]));
    }
    PQclear(res);
    return RT_OK;
}

int rt_pools_add_tasks(rt_pg *pg, long long pool_id, const rt_pools_task *tasks, size_t n)
{
    if (!n) return RT_OK;
    rt_pg_array cols[4] = {{0}};
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) {
        const char *row[4] = {tasks[i].task_id, tasks[i].label, tasks[i].config, tasks[i].state};
        for (size_t c = 0; c < 4 && ok; c++) ok = rt_pg_array_add(&cols[c], row[c]) == RT_OK;
    }
    char id[32];
    snprintf(id, sizeof id, "%lld", pool_id);
    const char *params[5] = {id};
    for (size_t c = 0; c < 4 && ok; c++) ok = (params[c + 1] = rt_pg_array_text(&cols[c])) != NULL;
    int rc = ok ? rt_pg_exec(pg, SQL_ADD_TASKS, 5, params, NULL) : RT_ENOMEM;
    for (size_t c = 0; c < 4; c++) rt_pg_array_free(&cols[c]);
    return rc;
}

int rt_pools_has_task(rt_pg *pg, long long pool_id, const char *task_id, bool *has)
{
    char id[32];
    snprintf(id, sizeof id, "%lld", pool_id);
    const char *params[] = {id, task_id};
    PGresult *res = NULL;
    int c;
    *has = false;
    int rc = rt_pg_exec(pg, SQL_HAS_TASK, 2, params, &res);
    if (rc == RT_OK) rc = rt_pg_result_columns(&res, HAS_TASK_COLS, 1, &c);
    if (rc != RT_OK) return rc;
    *has = PQntuples(res) == 1 && rt_pg_bool(res, 0, c);
    PQclear(res);
    return RT_OK;
}

int rt_pools_tasks(rt_pg *pg, long long pool_id, int days, rt_pools_task *out, size_t max,
                   size_t *n)
{
    char id[32], days_text[16], limit[16];
    snprintf(id, sizeof id, "%lld", pool_id);
    snprintf(days_text, sizeof days_text, "%d", days);
    snprintf(limit, sizeof limit, "%zu", max);
    const char *params[] = {id, days_text, limit};
    PGresult *res = NULL;
    int c[TK_N];
    *n = 0;
    int rc = rt_pg_exec(pg, SQL_TASKS, 3, params, &res);
    if (rc == RT_OK) rc = rt_pg_result_columns(&res, TASK_COLS, TK_N, c);
    if (rc != RT_OK) return rc;
    for (int i = 0; i < PQntuples(res) && *n < max; i++) {
        rt_pools_task *t = &out[(*n)++];
        copy(t->task_id, sizeof t->task_id, rt_pg_text(res, i, c[TK_TASK_ID]));
        copy(t->label, sizeof t->label, rt_pg_text(res, i, c[TK_LABEL]));
        copy(t->config, sizeof t->config, rt_pg_text(res, i, c[TK_CONFIG]));
        copy(t->state, sizeof t->state, rt_pg_text(res, i, c[TK_STATE]));
        t->finished = rt_pg_bool(res, i, c[TK_FINISHED]);
        t->failed = rt_pg_bool(res, i, c[TK_FAILED]);
    }
    PQclear(res);
    return RT_OK;
}

int rt_pools_settling(rt_pg *pg, int again_s, rt_pool_settling *out, size_t max, size_t *n)
{
    char again[16], limit[16];
    snprintf(again, sizeof again, "%d", again_s);
    snprintf(limit, sizeof limit, "%zu", max);
    const char *params[] = {again, limit};
    PGresult *res = NULL;
    int c[ST_N];
    *n = 0;
    int rc = rt_pg_exec(pg, SQL_SETTLING, 2, params, &res);
    if (rc == RT_OK) rc = rt_pg_result_columns(&res, SETTLING_COLS, ST_N, c);
    if (rc != RT_OK) return rc;
    for (int i = 0; i < PQntuples(res) && *n < max; i++) {
        rt_pool_settling *s = &out[(*n)++];
        s->pool_id = rt_pg_int(res, i, c[ST_ID]);
        s->set_id = rt_pg_int(res, i, c[ST_SET_ID]);
        copy(s->project, sizeof s->project, rt_pg_text(res, i, c[ST_PROJECT]));
        copy(s->revision, sizeof s->revision, rt_pg_text(res, i, c[ST_REVISION]));
        copy(s->test, sizeof s->test, rt_pg_text(res, i, c[ST_TEST]));
        copy(s->group_name, sizeof s->group_name, rt_pg_text(res, i, c[ST_GROUP]));
    }
    PQclear(res);
    return RT_OK;
}

int rt_pools_woken(rt_pg *pg, long long pool_id)
{
    char id[32];
    snprintf(id, sizeof id, "%lld", pool_id);
    const char *params[] = {id};
    return rt_pg_exec(pg, SQL_WOKEN, 1, params, NULL);
}
