/* SPDX-License-Identifier: MPL-2.0 */
/* decide_sets.c - retrig-decide's statements on retrigger sets and decisions
 * (decide_sets.h). Moved from workers/decide/main.c (issue 33): the statements are
 * unchanged but for the sweep's LIMIT, now a parameter. */
#include "common/store/decide_sets.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char SQL_SET[] =
    "SELECT s.project, s.revision, s.label, s.platform, s.original_task_id, s.original_run_id,"
    " s.retrigger_count + s.later_retriggers AS retriggers, s.status,"
    " coalesce(s.task_group_id, '') AS task_group_id,"
    " EXISTS (SELECT 1 FROM decisions d WHERE d.set_id = s.id) AS decided,"
    " s.created_at < now() - make_interval(mins => $2::integer) AS past_deadline,"
    " to_char(coalesce(r.first_seen_at, r.resolved_at, s.created_at) AT TIME ZONE 'UTC',"
    "         'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"') AS failure_seen_at,"
    " to_char(coalesce(a.finished_at, s.request_published_at) AT TIME ZONE 'UTC',"
    "         'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"') AS requested_at,"
    " coalesce(extract(epoch FROM r.resolved_at - r.started_at)::bigint, 0) AS original_seconds"
    " FROM retrigger_sets s"
    " LEFT JOIN runs r ON r.task_id = s.original_task_id AND r.run_id = s.original_run_id"
    " LEFT JOIN retrigger_actions a ON a.set_id = s.id AND a.round = 1"
    " WHERE s.id = $1::bigint";
enum {
    SET_PROJECT,
    SET_REVISION,
    SET_LABEL,
    SET_PLATFORM,
    SET_ORIGINAL_TASK_ID,
    SET_ORIGINAL_RUN_ID,
    SET_RETRIGGERS,
    SET_STATUS,
    SET_TASK_GROUP_ID,
    SET_DECIDED,
    SET_PAST_DEADLINE,
    SET_FAILURE_SEEN_AT,
    SET_REQUESTED_AT,
    SET_ORIGINAL_SECONDS,
    SET_N
};
static const char *const SET_COLS[SET_N] = {[SET_PROJECT] = "project",
                                            [SET_REVISION] = "revision",
                                            [SET_LABEL] = "label",
                                            [SET_PLATFORM] = "platform",
                                            [SET_ORIGINAL_TASK_ID] = "original_task_id",
                                            [SET_ORIGINAL_RUN_ID] = "original_run_id",
                                            [SET_RETRIGGERS] = "retriggers",
                                            [SET_STATUS] = "status",
                                            [SET_TASK_GROUP_ID] = "task_group_id",
                                            [SET_DECIDED] = "decided",
                                            [SET_PAST_DEADLINE] = "past_deadline",
                                            [SET_FAILURE_SEEN_AT] = "failure_seen_at",
                                            [SET_REQUESTED_AT] = "requested_at",
                                            [SET_ORIGINAL_SECONDS] = "original_seconds"};
/* The members that give evidence: the retriggers asked for and the runs found on the push. */
static const char SQL_MEMBERS[] = "SELECT task_id, run_id, state, role FROM retrigger_set_members"
                                  " WHERE set_id = $1::bigint AND role IN ('retrigger', 'found')"
                                  " AND NOT (task_id = $2 AND run_id = $3::integer)"
                                  " ORDER BY added_at, task_id, run_id LIMIT 64";
enum { MEMBER_TASK_ID, MEMBER_RUN_ID, MEMBER_STATE, MEMBER_ROLE, MEMBER_N };
static const char *const MEMBER_COLS[MEMBER_N] = {[MEMBER_TASK_ID] = "task_id",
                                                  [MEMBER_RUN_ID] = "run_id",
                                                  [MEMBER_STATE] = "state",
                                                  [MEMBER_ROLE] = "role"};
static const char SQL_INSERT_DECISION[] =
    "INSERT INTO decisions (set_id, verdict, reason, evidence, classification_id, failure_seen_at,"
    " retriggers_requested_at, decided_at, culprit_status, culprit_started_at, culprit_updated_at)"
    " VALUES ($1::bigint, $2, $3, $4::jsonb, $5::integer, $6::timestamptz, $7::timestamptz,"
    " $8::timestamptz, $9::text, CASE WHEN $9::text IS NULL THEN NULL ELSE now() END,"
    " CASE WHEN $9::text IS NULL THEN NULL ELSE now() END)"
    " ON CONFLICT (set_id) DO NOTHING RETURNING set_id";
static const char SQL_SET_DECIDED[] =
    "UPDATE retrigger_sets SET status = 'decided', updated_at = now() WHERE id = $1::bigint";
static const char SQL_MEMBER_RESULT[] =
    "UPDATE retrigger_set_members SET result = $4"
    " WHERE set_id = $1::bigint AND task_id = $2 AND run_id = $3::integer";
static const char SQL_CANCELLED[] =
    "UPDATE decisions SET evidence = jsonb_set(evidence, '{cancelled}', $2::jsonb)"
    " WHERE set_id = $1::bigint";
static const char SQL_SECONDS_SINCE[] =
    "SELECT extract(epoch FROM now() - $1::timestamptz) AS seconds";
static const char *const SECONDS_SINCE_COLS[] = {"seconds"};
static const char SQL_SETS_IN_FLIGHT[] = "SELECT count(*) AS sets FROM retrigger_sets"
                                         " WHERE status IN ('pending', 'requested', 'complete')";
static const char *const SETS_IN_FLIGHT_COLS[] = {"sets"};
static const char SQL_SWEEP[] =
    "SELECT id, project FROM retrigger_sets"
    " WHERE status IN ('pending', 'requested', 'complete')"
    " AND created_at < now() - make_interval(mins => $1::integer)"
    " AND (deadline_requested_at IS NULL"
    "      OR deadline_requested_at < now() - make_interval(secs => $2::integer))"
    " ORDER BY created_at LIMIT $3::integer FOR UPDATE SKIP LOCKED";
enum { SWEEP_ID, SWEEP_PROJECT, SWEEP_N };
static const char *const SWEEP_COLS[SWEEP_N] = {[SWEEP_ID] = "id", [SWEEP_PROJECT] = "project"};
static const char SQL_SWEPT[] =
    "UPDATE retrigger_sets SET deadline_requested_at = now() WHERE id = $1::bigint";

static void copy(char *out, size_t size, const PGresult *res, int row, int col)
{
    snprintf(out, size, "%s", PQgetvalue(res, row, col));
}

int rt_decide_sets_load(rt_pg *pg, long long set_id, int deadline_minutes, rt_decide_set *s,
                        bool *found)
{
    char id[24], deadline[16];
    snprintf(id, sizeof id, "%lld", set_id);
    snprintf(deadline, sizeof deadline, "%d", deadline_minutes);
    const char *params[] = {id, deadline};
    PGresult *res = NULL;
    int c[SET_N];
    memset(s, 0, sizeof *s);
    int rc = rt_pg_exec(pg, SQL_SET, 2, params, &res);
    if (rc == RT_OK) rc = rt_pg_result_columns(&res, SET_COLS, SET_N, c);
    if (rc != RT_OK) return rc;
    *found = PQntuples(res) == 1;
    if (*found) {
        copy(s->project, sizeof s->project, res, 0, c[SET_PROJECT]);
        copy(s->revision, sizeof s->revision, res, 0, c[SET_REVISION]);
        copy(s->label, sizeof s->label, res, 0, c[SET_LABEL]);
        copy(s->platform, sizeof s->platform, res, 0, c[SET_PLATFORM]);
        copy(s->original_task_id, sizeof s->original_task_id, res, 0, c[SET_ORIGINAL_TASK_ID]);
        s->original_run_id = atoi(PQgetvalue(res, 0, c[SET_ORIGINAL_RUN_ID]));
        s->count = atoi(PQgetvalue(res, 0, c[SET_RETRIGGERS]));
        copy(s->status, sizeof s->status, res, 0, c[SET_STATUS]);
        copy(s->task_group_id, sizeof s->task_group_id, res, 0, c[SET_TASK_GROUP_ID]);
        s->decided = PQgetvalue(res, 0, c[SET_DECIDED])[0] == 't';
        s->past_deadline = PQgetvalue(res, 0, c[SET_PAST_DEADLINE])[0] == 't';
        copy(s->failure_seen_at, sizeof s->failure_seen_at, res, 0, c[SET_FAILURE_SEEN_AT]);
        copy(s->requested_at, sizeof s->requested_at, res, 0, c[SET_REQUESTED_AT]);
        s->original_seconds = atol(PQgetvalue(res, 0, c[SET_ORIGINAL_SECONDS]));
    }
    PQclear(res);
    return RT_OK;
}

int rt_decide_sets_members(rt_pg *pg, long long set_id, const char *original_task_id,
                           int original_run_id, rt_decide_member *members, size_t max, size_t *n)
{
    char id[24], run[16];
    snprintf(id, sizeof id, "%lld", set_id);
    snprintf(run, sizeof run, "%d", original_run_id);
    const char *params[] = {id, original_task_id, run};
    PGresult *res = NULL;
    int c[MEMBER_N];
    *n = 0;
    int rc = rt_pg_exec(pg, SQL_MEMBERS, 3, params, &res);
    if (rc == RT_OK) rc = rt_pg_result_columns(&res, MEMBER_COLS, MEMBER_N, c);
    if (rc != RT_OK) return rc;
    for (int i = 0; i < PQntuples(res) && *n < max; i++) {
        rt_decide_member *m = &members[(*n)++];
        copy(m->task_id, sizeof m->task_id, res, i, c[MEMBER_TASK_ID]);
        m->run_id = atoi(PQgetvalue(res, i, c[MEMBER_RUN_ID]));
        copy(m->state, sizeof m->state, res, i, c[MEMBER_STATE]);
        m->found = !strcmp(PQgetvalue(res, i, c[MEMBER_ROLE]), "found");
    }
    PQclear(res);
    return RT_OK;
}

int rt_decide_sets_insert(rt_pg *pg, const rt_decide_row *row, bool *inserted)
{
    char id[24], classification[16];
    snprintf(id, sizeof id, "%lld", row->set_id);
    snprintf(classification, sizeof classification, "%d", row->classification_id);
    const char *params[] = {id,
                            row->verdict,
                            row->reason,
                            row->evidence,
                            row->classification_id >= 0 ? classification : NULL,
                            row->failure_seen_at,
                            row->requested_at && row->requested_at[0] ? row->requested_at : NULL,
                            row->decided_at,
                            row->culprit_status};
    PGresult *res = NULL;
    *inserted = false;
    int rc = rt_pg_exec(pg, SQL_INSERT_DECISION, 9, params, &res);
    if (rc == RT_OK) *inserted = PQntuples(res) == 1;
    PQclear(res);
    if (rc != RT_OK || !*inserted) return rc;
    const char *sparams[] = {id};
    return rt_pg_exec(pg, SQL_SET_DECIDED, 1, sparams, NULL);
}

int rt_decide_sets_member_result(rt_pg *pg, long long set_id, const char *task_id, int run_id,
                                 const char *result)
{
    char id[24], run[16];
    snprintf(id, sizeof id, "%lld", set_id);
    snprintf(run, sizeof run, "%d", run_id);
    const char *params[] = {id, task_id, run, result};
    return rt_pg_exec(pg, SQL_MEMBER_RESULT, 4, params, NULL);
}

int rt_decide_sets_cancelled(rt_pg *pg, long long set_id, const char *cancelled)
{
    char id[24];
    snprintf(id, sizeof id, "%lld", set_id);
    const char *params[] = {id, cancelled};
    return rt_pg_exec(pg, SQL_CANCELLED, 2, params, NULL);
}

/* The number in the one row of a query's one column. */
static int one_number(rt_pg *pg, const char *sql, int nparams, const char *const *params,
                      const char *const *col, double *out)
{
    PGresult *res = NULL;
    int c;
    int rc = rt_pg_exec(pg, sql, nparams, params, &res);
    if (rc == RT_OK) rc = rt_pg_result_columns(&res, col, 1, &c);
    if (rc != RT_OK) return rc;
    if (PQntuples(res) != 1) rc = RT_EDB;
    if (rc == RT_OK) *out = atof(PQgetvalue(res, 0, c));
    PQclear(res);
    return rc;
}

int rt_decide_sets_seconds_since(rt_pg *pg, const char *since, double *seconds)
{
    const char *params[] = {since};
    return one_number(pg, SQL_SECONDS_SINCE, 1, params, SECONDS_SINCE_COLS, seconds);
}

int rt_decide_sets_in_flight(rt_pg *pg, long long *sets)
{
    double n = 0;
    int rc = one_number(pg, SQL_SETS_IN_FLIGHT, 0, NULL, SETS_IN_FLIGHT_COLS, &n);
    if (rc == RT_OK) *sets = (long long)n;
    return rc;
}

int rt_decide_sets_sweep(rt_pg *pg, int deadline_minutes, int interval_s, rt_decide_swept *sets,
                         size_t max, size_t *n)
{
    char minutes[16], seconds[16], limit[24];
    snprintf(minutes, sizeof minutes, "%d", deadline_minutes);
    snprintf(seconds, sizeof seconds, "%d", interval_s);
    snprintf(limit, sizeof limit, "%zu", max);
    const char *params[] = {minutes, seconds, limit};
    PGresult *res = NULL;
    int c[SWEEP_N];
    *n = 0;
    int rc = rt_pg_exec(pg, SQL_SWEEP, 3, params, &res);
    if (rc == RT_OK) rc = rt_pg_result_columns(&res, SWEEP_COLS, SWEEP_N, c);
    if (rc != RT_OK) return rc;
    for (int i = 0; i < PQntuples(res) && *n < max; i++) {
        sets[*n].id = atoll(PQgetvalue(res, i, c[SWEEP_ID]));
        copy(sets[*n].project, sizeof sets[*n].project, res, i, c[SWEEP_PROJECT]);
        (*n)++;
    }
    PQclear(res);
    return RT_OK;
}

int rt_decide_sets_swept(rt_pg *pg, long long set_id)
{
    char id[24];
    snprintf(id, sizeof id, "%lld", set_id);
    const char *params[] = {id};
    return rt_pg_exec(pg, SQL_SWEPT, 1, params, NULL);
}
