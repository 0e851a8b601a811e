/* SPDX-License-Identifier: MPL-2.0 */
/* sets.c - the retrigger sets' statements and their readers (sets.h). Moved from
 * workers/classify/main.c (issue 33): the statements are unchanged. */
#include "common/store/sets.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Once the task definition is known, one statement: completes the run's row, looks up the
 * set of its (project, revision, label) and reads the ledger's total for its platform today
 * (the floor of the Redis counter when the run turns out eligible). */
static const char SQL_RUN_FACTS[] =
    "WITH details AS ("
    "  UPDATE runs SET project = coalesce(project, $3), revision = coalesce(revision, $4),"
    "   label = coalesce(label, $5), platform = coalesce(platform, $6)"
    "  WHERE task_id = $1 AND run_id = $2::integer)"
    " SELECT s.id, s.original_task_id, s.request_published_at IS NOT NULL AS published,"
    "  coalesce((SELECT spent FROM budget_daily WHERE platform = $10 AND day = $11::date), 0)"
    "  AS ledger_spent"
    " FROM (SELECT 1) AS one LEFT JOIN retrigger_sets s"
    "  ON s.project = $7 AND s.revision = $8 AND s.label = $9";
enum { RF_ID, RF_ORIGINAL, RF_PUBLISHED, RF_LEDGER_SPENT, RF_N };
static const char *const RUN_FACTS_COLS[RF_N] = {"id", "original_task_id", "published",
                                                 "ledger_spent"};
static const char SQL_FIND_SET[] =
    "SELECT id, original_task_id, original_run_id, request_published_at IS NOT NULL AS published"
    " FROM retrigger_sets WHERE project = $1 AND revision = $2 AND label = $3";
enum { FS_ID, FS_ORIGINAL, FS_PUBLISHED, FS_N };
static const char *const FIND_SET_COLS[FS_N] = {"id", "original_task_id", "published"};
static const char SQL_GROUP_HAS_SETS[] =
    "SELECT EXISTS (SELECT 1 FROM retrigger_sets WHERE task_group_id = $1) AS has_sets";
enum { GH_HAS_SETS, GH_N };
static const char *const GROUP_HAS_SETS_COLS[GH_N] = {"has_sets"};
static const char SQL_ADD_MEMBER[] =
    "INSERT INTO retrigger_set_members (set_id, task_id, run_id, role, state, resolved_at)"
    " VALUES ($1::bigint, $2, $3::integer, $4, $5, $6::timestamptz)"
    " ON CONFLICT (set_id, task_id, run_id) DO UPDATE SET state = EXCLUDED.state,"
    " resolved_at = EXCLUDED.resolved_at";
static const char SQL_CREATE_SET[] =
    "SELECT set_id, kept, total, refused FROM classify_create_set($1, $2, $3, $4, $5,"
    " $6::integer, $7::integer, $8::jsonb, $9::jsonb, $10, $11, $12, $13::integer, $14::integer,"
    " $15::jsonb)";
enum { CS_SET_ID, CS_KEPT, CS_TOTAL, CS_REFUSED, CS_N };
static const char *const CREATE_SET_COLS[CS_N] = {"set_id", "kept", "total", "refused"};
static const char SQL_LOCK_SET[] =
    "SELECT id, original_task_id, original_run_id, request_published_at IS NOT NULL AS published,"
    " retrigger_count, platform, task_group_id, task_queue_id,"
    " failing_groups::text AS failing_groups, failures::text AS failures"
    " FROM retrigger_sets WHERE project = $1 AND revision = $2 AND label = $3 FOR UPDATE";
enum {
    LS_ID,
    LS_ORIGINAL_TASK_ID,
    LS_ORIGINAL_RUN_ID,
    LS_PUBLISHED,
    LS_COUNT,
    LS_PLATFORM,
    LS_TASK_GROUP_ID,
    LS_TASK_QUEUE_ID,
    LS_FAILING_GROUPS,
    LS_FAILURES,
    LS_N
};
static const char *const LOCK_SET_COLS[LS_N] = {
    "id",       "original_task_id", "original_run_id", "published",      "retrigger_count",
    "platform", "task_group_id",    "task_queue_id",   "failing_groups", "failures"};
/* A set that asks for no retrigger has nothing to wait for from retrig-retrigger. */
static const char SQL_MARK_PUBLISHED[] =
    "UPDATE retrigger_sets SET request_published_at = now(), updated_at = now(),"
    " status = CASE WHEN retrigger_count = 0 AND status = 'pending' THEN 'requested'"
    " ELSE status END WHERE id = $1::bigint";
static const char SQL_LOCK_SET_BY_ID[] =
    "SELECT retrigger_count + later_retriggers AS wanted, status, project, found_count"
    " FROM retrigger_sets WHERE id = $1::bigint FOR UPDATE";
enum { LB_WANTED, LB_STATUS, LB_PROJECT, LB_FOUND, LB_N };
static const char *const LOCK_SET_BY_ID_COLS[LB_N] = {"wanted", "status", "project", "found_count"};
static const char SQL_RESOLVED_MEMBERS[] =
    "SELECT count(*) AS resolved FROM retrigger_set_members WHERE set_id = $1::bigint"
    " AND role IN ('retrigger', 'found') AND state IN ('completed', 'failed', 'exception')";
enum { RM_RESOLVED, RM_N };
static const char *const RESOLVED_MEMBERS_COLS[RM_N] = {"resolved"};
static const char SQL_SET_COMPLETE[] =
    "UPDATE retrigger_sets SET status = 'complete', updated_at = now() WHERE id = $1::bigint";

int rt_sets_run_facts(rt_pg *pg, const rt_sets_run_facts_query *q, rt_set_ref *set,
                      int *ledger_spent)
{
    char run[16];
    snprintf(run, sizeof run, "%d", q->run_id);
    const char *params[] = {q->task_id,     run,
                            q->project,     q->revision,
                            q->label,       q->platform,
                            q->set_project, q->set_revision,
                            q->set_label,   q->ledger_platform,
                            q->day};
    PGresult *res = NULL;
    int c[RF_N];
    int rc = rt_pg_exec(pg, SQL_RUN_FACTS, 11, params, &res);
    if (rc == RT_OK) rc = rt_pg_result_columns(&res, RUN_FACTS_COLS, RF_N, c);
    if (rc != RT_OK) return rc;
    set->id = PQgetisnull(res, 0, c[RF_ID]) ? 0 : atoll(PQgetvalue(res, 0, c[RF_ID]));
    snprintf(set->original_task_id, sizeof set->original_task_id, "%s",
             set->id ? PQgetvalue(res, 0, c[RF_ORIGINAL]) : "");
    set->published = set->id && PQgetvalue(res, 0, c[RF_PUBLISHED])[0] == 't';
    *ledger_spent = atoi(PQgetvalue(res, 0, c[RF_LEDGER_SPENT]));
    PQclear(res);
    return RT_OK;
}

int rt_sets_find(rt_pg *pg, const char *project, const char *revision, const char *label,
                 rt_set_ref *set)
{
    const char *params[] = {project, revision, label};
    PGresult *res = NULL;
    int c[FS_N];
    int rc = rt_pg_exec(pg, SQL_FIND_SET, 3, params, &res);
    if (rc == RT_OK) rc = rt_pg_result_columns(&res, FIND_SET_COLS, FS_N, c);
    if (rc != RT_OK) return rc;
    memset(set, 0, sizeof *set);
    if (PQntuples(res) == 1) {
        set->id = atoll(PQgetvalue(res, 0, c[FS_ID]));
        snprintf(set->original_task_id, sizeof set->original_task_id, "%s",
                 PQgetvalue(res, 0, c[FS_ORIGINAL]));
        set->published = PQgetvalue(res, 0, c[FS_PUBLISHED])[0] == 't';
    }
    PQclear(res);
    return RT_OK;
}

int rt_sets_group_has_sets(rt_pg *pg, const char *task_group_id, bool *has_sets)
{
    const char *params[] = {task_group_id};
    PGresult *res = NULL;
    int c[GH_N];
    int rc = rt_pg_exec(pg, SQL_GROUP_HAS_SETS, 1, params, &res);
    if (rc == RT_OK) rc = rt_pg_result_columns(&res, GROUP_HAS_SETS_COLS, GH_N, c);
    if (rc != RT_OK) return rc;
    *has_sets = !strcmp(PQgetvalue(res, 0, c[GH_HAS_SETS]), "t");
    PQclear(res);
    return RT_OK;
}

int rt_sets_add_member(rt_pg *pg, const rt_set_member *m)
{
    char set[32], run[16];
    snprintf(set, sizeof set, "%lld", m->set_id);
    snprintf(run, sizeof run, "%d", m->run_id);
    const char *params[] = {set, m->task_id, run, m->role, m->state, m->resolved_at};
    return rt_pg_exec(pg, SQL_ADD_MEMBER, 6, params, NULL);
}

int rt_sets_create(rt_pg *pg, const rt_set_create *in, rt_set_created *out)
{
    char run[16], count[16], limit[16], minimum[16];
    snprintf(run, sizeof run, "%d", in->run_id);
    snprintf(count, sizeof count, "%d", in->count);
    snprintf(limit, sizeof limit, "%d", in->limit);
    snprintf(minimum, sizeof minimum, "%d", in->minimum);
    const char *params[] = {in->project,
                            in->revision,
                            in->label,
                            in->platform,
                            in->task_id,
                            run,
                            count,
                            in->failing_groups,
                            in->failures,
                            in->task_group_id,
                            in->task_queue_id,
                            in->day,
                            limit,
                            minimum,
                            in->found};
    PGresult *res = NULL;
    int c[CS_N];
    memset(out, 0, sizeof *out);
    int rc = rt_pg_exec(pg, SQL_CREATE_SET, 15, params, &res);
    if (rc == RT_OK) rc = rt_pg_result_columns(&res, CREATE_SET_COLS, CS_N, c);
    if (rc != RT_OK) return rc;
    out->refused = PQgetvalue(res, 0, c[CS_REFUSED])[0] == 't';
    out->created = !PQgetisnull(res, 0, c[CS_SET_ID]) || out->refused;
    if (out->created) {
        out->kept = atoi(PQgetvalue(res, 0, c[CS_KEPT]));
        out->ledger_total = atoi(PQgetvalue(res, 0, c[CS_TOTAL]));
    }
    PQclear(res);
    return RT_OK;
}

void rt_set_row_free(rt_set_row *row)
{
    free(row->failing_groups);
    free(row->failures);
    row->failing_groups = row->failures = NULL;
}

int rt_sets_lock(rt_pg *pg, const char *project, const char *revision, const char *label,
                 rt_set_row *s, bool *found)
{
    const char *params[] = {project, revision, label};
    PGresult *res = NULL;
    memset(s, 0, sizeof *s);
    *found = false;
    int c[LS_N];
    int rc = rt_pg_begin_exec(pg, SQL_LOCK_SET, 3, params, &res);
    if (rc == RT_OK) rc = rt_pg_result_columns(&res, LOCK_SET_COLS, LS_N, c);
    if (rc != RT_OK) return rc;
    *found = PQntuples(res) == 1;
    if (*found) {
        s->id = atoll(PQgetvalue(res, 0, c[LS_ID]));
        snprintf(s->original_task_id, sizeof s->original_task_id, "%s",
                 PQgetvalue(res, 0, c[LS_ORIGINAL_TASK_ID]));
        s->original_run_id = atoi(PQgetvalue(res, 0, c[LS_ORIGINAL_RUN_ID]));
        s->published = PQgetvalue(res, 0, c[LS_PUBLISHED])[0] == 't';
        s->count = atoi(PQgetvalue(res, 0, c[LS_COUNT]));
        snprintf(s->platform, sizeof s->platform, "%s", PQgetvalue(res, 0, c[LS_PLATFORM]));
        snprintf(s->task_group_id, sizeof s->task_group_id, "%s",
                 PQgetvalue(res, 0, c[LS_TASK_GROUP_ID]));
        snprintf(s->task_queue_id, sizeof s->task_queue_id, "%s",
                 PQgetvalue(res, 0, c[LS_TASK_QUEUE_ID]));
        s->failing_groups = strdup(PQgetvalue(res, 0, c[LS_FAILING_GROUPS]));
        s->failures = strdup(PQgetvalue(res, 0, c[LS_FAILURES]));
        if (!s->failing_groups || !s->failures) rc = RT_ENOMEM;
    }
    PQclear(res);
    return rc;
}

int rt_sets_mark_published_commit(rt_pg *pg, long long set_id)
{
    char id[32];
    snprintf(id, sizeof id, "%lld", set_id);
    const char *params[] = {id};
    return rt_pg_exec_commit(pg, SQL_MARK_PUBLISHED, 1, params, NULL);
}

int rt_sets_lock_progress(rt_pg *pg, long long set_id, rt_set_progress *p, bool *found)
{
    char id[32];
    snprintf(id, sizeof id, "%lld", set_id);
    const char *params[] = {id};
    PGresult *res = NULL;
    int c[LB_N];
    memset(p, 0, sizeof *p);
    *found = false;
    int rc = rt_pg_exec(pg, SQL_LOCK_SET_BY_ID, 1, params, &res);
    if (rc == RT_OK) rc = rt_pg_result_columns(&res, LOCK_SET_BY_ID_COLS, LB_N, c);
    if (rc != RT_OK) return rc;
    *found = PQntuples(res) == 1;
    if (*found) {
        p->wanted = atoi(PQgetvalue(res, 0, c[LB_WANTED]));
        p->found = atoi(PQgetvalue(res, 0, c[LB_FOUND]));
        const char *status = PQgetvalue(res, 0, c[LB_STATUS]);
        p->open = !strcmp(status, "pending") || !strcmp(status, "requested");
        snprintf(p->project, sizeof p->project, "%s", PQgetvalue(res, 0, c[LB_PROJECT]));
    }
    PQclear(res);
    return RT_OK;
}

int rt_sets_resolved_members(rt_pg *pg, long long set_id, int *resolved)
{
    char id[32];
    snprintf(id, sizeof id, "%lld", set_id);
    const char *params[] = {id};
    PGresult *res = NULL;
    int c[RM_N];
    int rc = rt_pg_exec(pg, SQL_RESOLVED_MEMBERS, 1, params, &res);
    if (rc == RT_OK) rc = rt_pg_result_columns(&res, RESOLVED_MEMBERS_COLS, RM_N, c);
    if (rc != RT_OK) return rc;
    *resolved = atoi(PQgetvalue(res, 0, c[RM_RESOLVED]));
    PQclear(res);
    return RT_OK;
}

int rt_sets_mark_complete(rt_pg *pg, long long set_id)
{
    char id[32];
    snprintf(id, sizeof id, "%lld", set_id);
    const char *params[] = {id};
    return rt_pg_exec(pg, SQL_SET_COMPLETE, 1, params, NULL);
}
