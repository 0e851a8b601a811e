/* SPDX-License-Identifier: MPL-2.0 */
/* set_rounds.c - retrig-decide's statements on a set's later rounds (set_rounds.h). Moved
 * from workers/decide/rounds.c (issue 33): the statements are unchanged. */
#include "common/store/set_rounds.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static void copy(char *out, size_t size, const PGresult *res, int col)
{
    snprintf(out, size, "%s", PQgetvalue(res, 0, col));
}

static bool flag(const PGresult *res, int col) { return PQgetvalue(res, 0, col)[0] == 't'; }

int rt_set_rounds_read(rt_pg *pg, long long set_id, rt_set_rounds *out)
{
    char id[24];
    snprintf(id, sizeof id, "%lld", set_id);
    const char *params[] = {id};
    PGresult *res = NULL;
    int c[ST_N];
    memset(out, 0, sizeof *out);
    int rc = rt_pg_exec(pg, SQL_STATE, 1, params, &res);
    if (rc == RT_OK) rc = rt_pg_result_columns(&res, STATE_COLS, ST_N, c);
    if (rc != RT_OK) return rc;
    if (PQntuples(res) != 1) {
        PQclear(res);
        return RT_ENOTFOUND;
    }
    out->round = atoi(PQgetvalue(res, 0, c[ST_ROUND]));
    out->retrigger_count = atoi(PQgetvalue(res, 0, c[ST_RETRIGGER_COUNT]));
    out->later_retriggers = atoi(PQgetvalue(res, 0, c[ST_LATER_RETRIGGERS]));
    out->found_count = atoi(PQgetvalue(res, 0, c[ST_FOUND_COUNT]));
    copy(out->status, sizeof out->status, res, c[ST_STATUS]);
    out->latest_published = flag(res, c[ST_LATEST_PUBLISHED]);
    out->refused = flag(res, c[ST_REFUSED]);
    out->round_failed = flag(res, c[ST_LATER_ROUND_FAILED]);
    copy(out->platform, sizeof out->platform, res, c[ST_PLATFORM]);
    copy(out->label, sizeof out->label, res, c[ST_LABEL]);
    copy(out->original_task_id, sizeof out->original_task_id, res, c[ST_ORIGINAL_TASK_ID]);
    out->original_run_id = atoi(PQgetvalue(res, 0, c[ST_ORIGINAL_RUN_ID]));
    copy(out->task_group_id, sizeof out->task_group_id, res, c[ST_TASK_GROUP_ID]);
    copy(out->task_queue_id, sizeof out->task_queue_id, res, c[ST_TASK_QUEUE_ID]);
    out->failing_groups = strdup(PQgetvalue(res, 0, c[ST_FAILING_GROUPS]));
    out->failures = strdup(PQgetvalue(res, 0, c[ST_FAILURES]));
    PQclear(res);
    if (!out->failing_groups || !out->failures) {
        rt_set_rounds_free(out);
        return RT_ENOMEM;
    }
    return RT_OK;
}

void rt_set_rounds_free(rt_set_rounds *s)
{
    free(s->failing_groups);
    free(s->failures);
    s->failing_groups = s->failures = NULL;
}

int rt_set_rounds_ask(rt_pg *pg, const rt_set_round_ask *a, rt_set_round_asked *out)
{
    char id[24], round[16], wanted[16], spent[16], minimum[16], limit[16], p[32];
    snprintf(id, sizeof id, "%lld", a->set_id);
    snprintf(round, sizeof round, "%d", a->round);
    snprintf(wanted, sizeof wanted, "%d", a->wanted);
    snprintf(spent, sizeof spent, "%d", a->spent);
    snprintf(minimum, sizeof minimum, "%d", a->minimum);
    snprintf(limit, sizeof limit, "%d", a->limit);
    snprintf(p, sizeof p, "%.17g", a->p_regression);
    const char *params[] = {id,          round,  wanted, spent,         minimum,
                            a->platform, a->day, limit,  a->ledger_key, p};
    PGresult *res = NULL;
    int c[RQ_N];
    memset(out, 0, sizeof *out);
    int rc = rt_pg_exec(pg, SQL_REQUEST_ROUND, 10, params, &res);
    if (rc == RT_OK) rc = rt_pg_result_columns(&res, REQUEST_ROUND_COLS, RQ_N, c);
    if (rc != RT_OK) return rc;
    if (PQntuples(res) != 1) {
        PQclear(res);
        return RT_EDB;
    }
    out->created = flag(res, c[RQ_CREATED]);
    out->kept = atoi(PQgetvalue(res, 0, c[RQ_KEPT]));
    out->total = atoi(PQgetvalue(res, 0, c[RQ_TOTAL]));
    out->refused = flag(res, c[RQ_REFUSED]);
    out->stale = flag(res, c[RQ_STALE]);
    PQclear(res);
    return RT_OK;
}

int rt_set_rounds_lock(rt_pg *pg, long long set_id, int round, bool *publish, int *times)
{
    char id[24], round_text[16];
    snprintf(id, sizeof id, "%lld", set_id);
    snprintf(round_text, sizeof round_text, "%d", round);
    const char *params[] = {id, round_text};
    PGresult *res = NULL;
    int c[LOCK_N];
    *publish = false;
    *times = 0;
    int rc = rt_pg_begin_exec(pg, SQL_LOCK_ROUND, 2, params, &res);
    if (rc == RT_OK) rc = rt_pg_result_columns(&res, LOCK_ROUND_COLS, LOCK_N, c);
    if (rc != RT_OK) return rc;
    *publish = PQntuples(res) == 1 && PQgetvalue(res, 0, c[LOCK_PUBLISHED])[0] == 'f';
    if (*publish) *times = atoi(PQgetvalue(res, 0, c[LOCK_RETRIGGERS]));
    PQclear(res);
    return RT_OK;
}

int rt_set_rounds_published(rt_pg *pg, long long set_id, int round)
{
    char id[24], round_text[16];
    snprintf(id, sizeof id, "%lld", set_id);
    snprintf(round_text, sizeof round_text, "%d", round);
    const char *params[] = {id, round_text};
    return rt_pg_exec(pg, SQL_ROUND_PUBLISHED, 2, params, NULL);
}

int rt_set_rounds_store_policy(rt_pg *pg, const rt_set_rounds_policy *p)
{
    const char *params[] = {p->set_id,         p->policy,         p->p_regression,
                            p->prior_runs,     p->prior_failures, p->prior_signature_failures,
                            p->rounds,         p->retriggers,     p->shadow_policy,
                            p->shadow_verdict, p->shadow_reason};
    return rt_pg_exec(pg, SQL_STORE, 11, params, NULL);
}
