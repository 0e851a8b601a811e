/* SPDX-License-Identifier: MPL-2.0 */
/* perf.c - retrig-perf's statements and their readers (perf.h). Moved from
 * workers/perf/main.c, workers/perf/followup.c and cli/perf_report.c (issue 33): the
 * statements are unchanged. */
#include "common/store/perf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/store/rows.h"

static const char SQL_TRY_LOCK[] = "SELECT pg_try_advisory_lock(7273, $1::integer) AS locked";
static const char SQL_UNLOCK[] = "SELECT pg_advisory_unlock(7273, $1::integer)";
static const char SQL_HANDLED_ALERTS[] =
    "SELECT alert_id FROM perf_alerts WHERE summary_id = ANY($1::bigint[])";
/* What a summary gave already: its jobs backfilled (or in flight, or found backfilled); an
 * alert covered by a sibling's backfill is the same job and not counted. */
#define SQL_JOBS_TAKEN                                                                             \
    "(SELECT count(DISTINCT coalesce(a.job_key, a.alert_id::text)) FROM perf_alerts a"             \
    " WHERE a.summary_id = s.summary_id AND (a.outcome IS NULL OR a.outcome IN"                    \
    " ('triggered', 'dry-run', 'found-existing', 'already-backfilled')))"
static const char SQL_TAKEN[] =
    "SELECT s.summary_id, s.handled_at IS NOT NULL AS handled, " SQL_JOBS_TAKEN " AS taken"
    " FROM perf_summaries s WHERE s.summary_id = ANY($1::bigint[])";
enum { TK_SUMMARY, TK_HANDLED, TK_TAKEN, TK_N };
static const char *const TAKEN_COLS[TK_N] = {"summary_id", "handled", "taken"};
/* The jobs those were, for covering their alerts' siblings. */
static const char SQL_HANDLED_JOBS[] =
    "SELECT DISTINCT summary_id, job_key FROM perf_alerts WHERE summary_id = ANY($1::bigint[])"
    " AND job_key IS NOT NULL AND (outcome IS NULL OR outcome IN ('triggered', 'dry-run',"
    " 'found-existing', 'already-backfilled'))";
enum { HJ_SUMMARY, HJ_JOB_KEY, HJ_N };
static const char *const HANDLED_JOBS_COLS[HJ_N] = {"summary_id", "job_key"};
static const char SQL_ALERT[] =
    "SELECT outcome IS NOT NULL AS finished, dry_run, attempts,"
    " (extract(epoch FROM now() - intent_at) * 1000)::bigint AS age_ms,"
    " task_id, decision_task_id, hook_group_id, hook_id, payload::text AS payload,"
    " (SELECT repository FROM perf_summaries s"
    " WHERE s.summary_id = perf_alerts.summary_id) AS repository"
    " FROM perf_alerts WHERE alert_id = $1::bigint";
enum {
    AL_FINISHED,
    AL_DRY_RUN,
    AL_ATTEMPTS,
    AL_AGE_MS,
    AL_TASK,
    AL_DECISION_TASK,
    AL_HOOK_GROUP,
    AL_HOOK,
    AL_PAYLOAD,
    AL_REPOSITORY,
    AL_N
};
static const char *const ALERT_COLS[AL_N] = {
    "finished",         "dry_run",       "attempts", "age_ms",  "task_id",
    "decision_task_id", "hook_group_id", "hook_id",  "payload", "repository"};
static const char SQL_OPEN_ALERTS[] =
    "SELECT alert_id, summary_id FROM perf_alerts WHERE outcome IS NULL AND NOT dry_run"
    " ORDER BY intent_at";
enum { OA_ALERT, OA_SUMMARY, OA_N };
static const char *const OPEN_ALERTS_COLS[OA_N] = {"alert_id", "summary_id"};
static const char SQL_SUMMARY_STATE[] =
    "SELECT s.handled_at IS NOT NULL AS handled, " SQL_JOBS_TAKEN " AS taken"
    " FROM perf_summaries s WHERE s.summary_id = $1::bigint";
enum { SS_HANDLED, SS_TAKEN, SS_N };
static const char *const SUMMARY_STATE_COLS[SS_N] = {"handled", "taken"};
static const char SQL_SUMMARY[] =
    "INSERT INTO perf_summaries (summary_id, repository, framework_id, push_id, revision,"
    " created_at, handled_at) VALUES ($1::bigint, $2, $3::integer, $4::bigint, $5,"
    " to_timestamp($6::bigint), CASE WHEN $7::boolean THEN now() END)"
    " ON CONFLICT (summary_id) DO UPDATE SET handled_at ="
    " coalesce(perf_summaries.handled_at, EXCLUDED.handled_at)";
static const char SQL_INTENT[] =
    "INSERT INTO perf_alerts (alert_id, summary_id, signature_id, platform, family, is_regression,"
    " amount_pct, job_id, task_id, decision_task_id, hook_group_id, hook_id, payload,"
    " jobs_scheduled, budget_day, dry_run, outcome, action_task_id, error, finished_at, job_key,"
    " covered_by)"
    " VALUES ($1::bigint, $2::bigint, $3::bigint, $4, $5, $6::boolean, $7::double precision,"
    " $8::bigint, $9, $10, $11, $12, $13::jsonb, $14::integer, $15::date, $16::boolean, $17::text, "
    "$18,"
    " $19, CASE WHEN $17::text IS NULL THEN NULL ELSE now() END, $20, $21::bigint)";
/* The same row for a covered alert; a second run finds it and does nothing. */
static const char SQL_COVERED[] =
    "INSERT INTO perf_alerts (alert_id, summary_id, signature_id, platform, family, is_regression,"
    " amount_pct, job_id, task_id, decision_task_id, hook_group_id, hook_id, payload,"
    " jobs_scheduled, budget_day, dry_run, outcome, action_task_id, error, finished_at, job_key,"
    " covered_by)"
    " VALUES ($1::bigint, $2::bigint, $3::bigint, $4, $5, $6::boolean, $7::double precision,"
    " $8::bigint, $9, $10, $11, $12, $13::jsonb, $14::integer, $15::date, $16::boolean, $17::text, "
    "$18, $19, now(), $20, $21::bigint) ON CONFLICT (alert_id) DO NOTHING";
static const char SQL_LEDGER[] =
    "INSERT INTO budget_ledger (platform, day, amount, idempotency_key, reason)"
    " VALUES ($1, $2::date, $3::integer, 'perf-alert:' || $4, $5)";
static const char SQL_ATTEMPT[] =
    "UPDATE perf_alerts SET attempts = attempts + 1, intent_at = now() WHERE alert_id = $1::bigint";
static const char SQL_OUTCOME[] =
    "UPDATE perf_alerts SET outcome = $2, action_task_id = $3, error = $4, finished_at = now()"
    " WHERE alert_id = $1::bigint AND outcome IS NULL";
static const char SQL_ERROR[] =
    "UPDATE perf_alerts SET error = $2 WHERE alert_id = $1::bigint AND outcome IS NULL";

/* The follow-up (workers/perf/followup.c). */
static const char SQL_TO_FOLLOW[] =
    "SELECT a.alert_id, a.action_task_id, a.signature_id, s.repository,"
    " coalesce(a.finished_at, a.intent_at) < now() - make_interval(hours => $1::integer)"
    " AS expired, coalesce(a.task_id, '') AS task_id"
    " FROM perf_alerts a JOIN perf_summaries s ON s.summary_id = a.summary_id"
    " WHERE a.outcome IN ('triggered', 'found-existing') AND a.action_task_id IS NOT NULL"
    " AND NOT a.dry_run AND (a.followup_state IS NULL OR a.followup_state = 'pending')"
    " ORDER BY coalesce(a.finished_at, a.intent_at) LIMIT $2::integer";
enum { TF_ALERT, TF_ACTION_TASK, TF_SIGNATURE, TF_REPOSITORY, TF_EXPIRED, TF_TASK, TF_N };
static const char *const TO_FOLLOW_COLS[TF_N] = {"alert_id",   "action_task_id", "signature_id",
                                                 "repository", "expired",        "task_id"};
static const char SQL_FOLLOWUP[] =
    "UPDATE perf_alerts SET followup_state = $2, followup_reason = $3, followup_detail = $4,"
    " followup_jobs = $5::integer, followup_completed = $6::integer, followup_checked_at = now(),"
    " followup_settled_at = CASE WHEN $2 = 'pending' THEN NULL ELSE now() END"
    " WHERE alert_id = $1::bigint AND (followup_state IS NULL OR followup_state = 'pending')";

/* The day's report (cli/perf_report.c). */
#define ALERT_DAY "coalesce(budget_day, (intent_at AT TIME ZONE 'UTC')::date) = $1::date"
static const char SQL_DAY_FAMILIES[] =
    "SELECT family, count(*) FILTER (WHERE outcome IN ('triggered', 'found-existing', 'dry-run')"
    " OR outcome IS NULL) AS backfills, coalesce(sum(jobs_scheduled), 0) AS jobs_scheduled,"
    " coalesce(sum(followup_completed), 0) AS jobs_executed,"
    " count(*) FILTER (WHERE followup_state = 'done') AS done,"
    " count(*) FILTER (WHERE followup_state = 'pending' OR (followup_state IS NULL AND outcome IN"
    " ('triggered', 'found-existing') AND NOT dry_run)) AS pending,"
    " count(*) FILTER (WHERE followup_state = 'failed') AS failed,"
    " count(*) FILTER (WHERE outcome = 'already-backfilled') AS already_backfilled,"
    " count(*) FILTER (WHERE outcome IN ('no-job', 'no-backfill-action', 'failed')) AS not_sent"
    " FROM perf_alerts WHERE " ALERT_DAY " GROUP BY family";
/* FA_BACKFILLS to FA_NOT_SENT in the order of rt_perf_family_day's counts from backfills on. */
enum {
    FA_FAMILY,
    FA_BACKFILLS,
    FA_SCHEDULED,
    FA_EXECUTED,
    FA_DONE,
    FA_PENDING,
    FA_FAILED,
    FA_ALREADY,
    FA_NOT_SENT,
    FA_N
};
static const char *const FAMILIES_COLS[FA_N] = {
    "family",  "backfills", "jobs_scheduled",     "jobs_executed", "done",
    "pending", "failed",    "already_backfilled", "not_sent"};
static const char SQL_DAY_LEDGER[] =
    "SELECT substr(platform, 6) AS family, sum(amount) AS used FROM budget_ledger"
    " WHERE day = $1::date AND platform LIKE 'perf:%' GROUP BY 1";
enum { L_FAMILY, L_USED, L_N };
static const char *const LEDGER_COLS[L_N] = {"family", "used"};
static const char SQL_DAY_FAILURES[] =
    "SELECT alert_id, summary_id, family, platform, followup_reason,"
    " coalesce(followup_detail, '') AS followup_detail,"
    " coalesce(action_task_id, '') AS action_task_id, followup_jobs, followup_completed,"
    " coalesce(to_char(followup_settled_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),"
    " '') AS followup_settled_at"
    " FROM perf_alerts WHERE followup_state = 'failed' AND " ALERT_DAY " ORDER BY alert_id";
enum {
    F_ALERT,
    F_SUMMARY,
    F_FAMILY,
    F_PLATFORM,
    F_REASON,
    F_DETAIL,
    F_ACTION_TASK,
    F_JOBS,
    F_COMPLETED,
    F_SETTLED,
    F_N
};
static const char *const FAILURES_COLS[F_N] = {
    "alert_id",           "summary_id",         "family",         "platform",
    "followup_reason",    "followup_detail",    "action_task_id", "followup_jobs",
    "followup_completed", "followup_settled_at"};

/* A field's text, "" when NULL (as PQgetvalue gives it). */
static const char *text_of(const PGresult *res, int row, int col)
{
    const char *t = rt_pg_text(res, row, col);
    return t ? t : "";
}

/* A malloc'd copy of a field's text ("" when NULL); *failed set when out of memory. */
static char *dup_of(const PGresult *res, int row, int col, bool *failed)
{
    char *copy = strdup(text_of(res, row, col));
    if (!copy) *failed = true;
    return copy;
}

int rt_perf_store_lock_key(long long summary_id) { return (int)(summary_id % 2147483647); }

static int lock_call(rt_pg *pg, const char *sql, long long summary_id, bool *result)
{
    char key[16];
    snprintf(key, sizeof key, "%d", rt_perf_store_lock_key(summary_id));
    const char *params[] = {key};
    PGresult *res = NULL;
    int rc = rt_pg_exec(pg, sql, 1, params, &res);
    if (rc != RT_OK) return rc;
    if (result) *result = rt_pg_bool(res, 0, 0);
    PQclear(res);
    return RT_OK;
}

int rt_perf_store_lock(rt_pg *pg, long long summary_id, bool *locked)
{
    *locked = false;
    return lock_call(pg, SQL_TRY_LOCK, summary_id, locked);
}

int rt_perf_store_unlock(rt_pg *pg, long long summary_id)
{
    return lock_call(pg, SQL_UNLOCK, summary_id, NULL);
}

static char *id_array(const long long *ids, size_t n)
{
    size_t size = 3 + n * 21;
    char *text = malloc(size);
    if (!text) return NULL;
    size_t len = (size_t)snprintf(text, size, "{");
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(text + len, size - len, "%s%lld", i ? "," : "", ids[i]);
    snprintf(text + len, size - len, "}");
    return text;
}

void rt_perf_store_history_free(rt_perf_store_history *h)
{
    for (size_t i = 0; h->keys && i < h->njobs; i++) free(h->keys[i]);
    free(h->keys);
    free(h->alerts);
    free(h->taken);
    free(h->jobs);
    memset(h, 0, sizeof *h);
}

static int history_read(const PGresult *a, const PGresult *t, const int *tc, const PGresult *j,
                        const int *jc, rt_perf_store_history *h)
{
    size_t na = (size_t)PQntuples(a), nt = (size_t)PQntuples(t), nj = (size_t)PQntuples(j);
    h->alerts = calloc(na + 1, sizeof *h->alerts);
    h->taken = calloc(nt + 1, sizeof *h->taken);
    h->jobs = calloc(nj + 1, sizeof *h->jobs);
    h->keys = calloc(nj + 1, sizeof *h->keys);
    if (!h->alerts || !h->taken || !h->jobs || !h->keys) return RT_ENOMEM;
    for (size_t i = 0; i < nj; i++) {
        bool failed = false;
        char *key = dup_of(j, (int)i, jc[HJ_JOB_KEY], &failed);
        if (failed) return RT_ENOMEM;
        h->keys[h->njobs] = key;
        h->jobs[h->njobs++] = (rt_perf_job){rt_pg_int(j, (int)i, jc[HJ_SUMMARY]), key};
    }
    for (size_t i = 0; i < na; i++) h->alerts[h->nalerts++] = rt_pg_int(a, (int)i, 0);
    for (size_t i = 0; i < nt; i++)
        h->taken[h->ntaken++] = (rt_perf_taken){rt_pg_int(t, (int)i, tc[TK_SUMMARY]),
                                                (int)rt_pg_int(t, (int)i, tc[TK_TAKEN]),
                                                rt_pg_bool(t, (int)i, tc[TK_HANDLED])};
    return RT_OK;
}

int rt_perf_store_history_load(rt_pg *pg, const long long *summary_ids, size_t n,
                               rt_perf_store_history *out)
{
    memset(out, 0, sizeof *out);
    char *ids = id_array(summary_ids, n);
    if (!ids) return RT_ENOMEM;
    const char *params[] = {ids};
    PGresult *a = NULL, *t = NULL, *j = NULL;
    int tc[TK_N], jc[HJ_N];
    int rc = rt_pg_exec(pg, SQL_HANDLED_ALERTS, 1, params, &a);
    if (rc == RT_OK) rc = rt_pg_exec(pg, SQL_TAKEN, 1, params, &t);
    if (rc == RT_OK) rc = rt_pg_exec(pg, SQL_HANDLED_JOBS, 1, params, &j);
    if (rc == RT_OK) rc = rt_pg_result_columns(&t, TAKEN_COLS, TK_N, tc);
    if (rc == RT_OK) rc = rt_pg_result_columns(&j, HANDLED_JOBS_COLS, HJ_N, jc);
    if (rc == RT_OK) rc = history_read(a, t, tc, j, jc, out);
    if (rc != RT_OK) rt_perf_store_history_free(out);
    free(ids);
    PQclear(a);
    PQclear(t);
    PQclear(j);
    return rc;
}

int rt_perf_store_upsert_summary(rt_pg *pg, const rt_perf_summary *s, bool close)
{
    char id[32], fw[16], push[32], created[32];
    snprintf(id, sizeof id, "%lld", s->id);
    snprintf(fw, sizeof fw, "%d", s->framework);
    snprintf(push, sizeof push, "%lld", s->push_id);
    snprintf(created, sizeof created, "%lld", (long long)s->created);
    const char *params[] = {
        id,      s->repository,           fw, push, s->revision[0] ? s->revision : NULL,
        created, close ? "true" : "false"};
    return rt_pg_exec(pg, SQL_SUMMARY, 7, params, NULL);
}

int rt_perf_store_summary_state(rt_pg *pg, long long summary_id, rt_perf_summary_state *out)
{
    memset(out, 0, sizeof *out);
    char sid[32];
    snprintf(sid, sizeof sid, "%lld", summary_id);
    const char *params[] = {sid};
    PGresult *res = NULL;
    int c[SS_N];
    int rc = rt_pg_exec(pg, SQL_SUMMARY_STATE, 1, params, &res);
    if (rc == RT_OK) rc = rt_pg_result_columns(&res, SUMMARY_STATE_COLS, SS_N, c);
    if (rc != RT_OK) return rc;
    if (PQntuples(res) == 1) {
        out->found = true;
        out->handled = rt_pg_bool(res, 0, c[SS_HANDLED]);
        out->taken = (int)rt_pg_int(res, 0, c[SS_TAKEN]);
    }
    PQclear(res);
    return RT_OK;
}

static int record_alert(rt_pg *pg, const char *sql, const rt_perf_alert_record *r)
{
    char alert[32], summary[32], sig[32], pct[32], job[32], cost[16], by[32];
    snprintf(alert, sizeof alert, "%lld", r->alert_id);
    snprintf(summary, sizeof summary, "%lld", r->summary_id);
    snprintf(sig, sizeof sig, "%lld", r->signature_id);
    snprintf(pct, sizeof pct, "%.4f", r->amount_pct);
    snprintf(job, sizeof job, "%lld", r->job_id);
    snprintf(cost, sizeof cost, "%d", r->jobs_scheduled);
    snprintf(by, sizeof by, "%lld", r->covered_by);
    const char *params[] = {alert,
                            summary,
                            sig,
                            r->platform,
                            r->family,
                            r->is_regression ? "true" : "false",
                            pct,
                            r->job_id ? job : NULL,
                            r->task_id,
                            r->decision_task_id,
                            r->hook_group,
                            r->hook_id,
                            r->payload,
                            cost,
                            r->budget_day,
                            r->dry_run ? "true" : "false",
                            r->outcome,
                            r->action_task_id,
                            r->error,
                            r->job_key,
                            r->covered_by ? by : NULL};
    return rt_pg_exec(pg, sql, 21, params, NULL);
}

int rt_perf_store_record_intent(rt_pg *pg, const rt_perf_alert_record *r)
{
    return record_alert(pg, SQL_INTENT, r);
}

int rt_perf_store_record_covered(rt_pg *pg, const rt_perf_alert_record *r)
{
    return record_alert(pg, SQL_COVERED, r);
}

int rt_perf_store_ledger(rt_pg *pg, const char *budget, const char *day, int amount,
                         long long alert_id, const char *reason)
{
    char amount_text[16], alert[32];
    snprintf(amount_text, sizeof amount_text, "%d", amount);
    snprintf(alert, sizeof alert, "%lld", alert_id);
    const char *params[] = {budget, day, amount_text, alert, reason};
    return rt_pg_exec(pg, SQL_LEDGER, 5, params, NULL);
}

void rt_perf_alert_row_free(rt_perf_alert_row *row)
{
    free(row->task_id);
    free(row->decision_task_id);
    free(row->hook_group);
    free(row->hook_id);
    free(row->payload);
    free(row->repository);
    memset(row, 0, sizeof *row);
}

int rt_perf_store_alert(rt_pg *pg, long long alert_id, rt_perf_alert_row *row, bool *found)
{
    memset(row, 0, sizeof *row);
    *found = false;
    char id[32];
    snprintf(id, sizeof id, "%lld", alert_id);
    const char *params[] = {id};
    PGresult *res = NULL;
    int c[AL_N];
    int rc = rt_pg_exec(pg, SQL_ALERT, 1, params, &res);
    if (rc == RT_OK) rc = rt_pg_result_columns(&res, ALERT_COLS, AL_N, c);
    if (rc != RT_OK) return rc;
    if (PQntuples(res) == 1) {
        bool failed = false;
        row->finished = rt_pg_bool(res, 0, c[AL_FINISHED]);
        row->dry_run = rt_pg_bool(res, 0, c[AL_DRY_RUN]);
        row->attempts = (int)rt_pg_int(res, 0, c[AL_ATTEMPTS]);
        row->age_ms = rt_pg_int(res, 0, c[AL_AGE_MS]);
        row->task_id = dup_of(res, 0, c[AL_TASK], &failed);
        row->decision_task_id = dup_of(res, 0, c[AL_DECISION_TASK], &failed);
        row->hook_group = dup_of(res, 0, c[AL_HOOK_GROUP], &failed);
        row->hook_id = dup_of(res, 0, c[AL_HOOK], &failed);
        row->payload = dup_of(res, 0, c[AL_PAYLOAD], &failed);
        row->repository = dup_of(res, 0, c[AL_REPOSITORY], &failed);
        if (failed) {
            rt_perf_alert_row_free(row);
            rc = RT_ENOMEM;
        } else {
            *found = true;
        }
    }
    PQclear(res);
    return rc;
}

int rt_perf_store_open_alerts(rt_pg *pg, rt_perf_open_alert **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    PGresult *res = NULL;
    int c[OA_N];
    int rc = rt_pg_exec(pg, SQL_OPEN_ALERTS, 0, NULL, &res);
    if (rc == RT_OK) rc = rt_pg_result_columns(&res, OPEN_ALERTS_COLS, OA_N, c);
    if (rc != RT_OK) return rc;
    size_t rows = (size_t)PQntuples(res);
    *out = calloc(rows + 1, sizeof **out);
    if (!*out) {
        rc = RT_ENOMEM;
    } else {
        for (size_t i = 0; i < rows; i++)
            (*out)[i] = (rt_perf_open_alert){rt_pg_int(res, (int)i, c[OA_ALERT]),
                                             rt_pg_int(res, (int)i, c[OA_SUMMARY])};
        *n = rows;
    }
    PQclear(res);
    return rc;
}

int rt_perf_store_attempt(rt_pg *pg, long long alert_id)
{
    char id[32];
    snprintf(id, sizeof id, "%lld", alert_id);
    const char *params[] = {id};
    return rt_pg_exec(pg, SQL_ATTEMPT, 1, params, NULL);
}

int rt_perf_store_outcome(rt_pg *pg, long long alert_id, const char *outcome,
                          const char *action_task_id, const char *error)
{
    char id[32];
    snprintf(id, sizeof id, "%lld", alert_id);
    const char *params[] = {id, outcome, action_task_id, error};
    return rt_pg_exec(pg, SQL_OUTCOME, 4, params, NULL);
}

int rt_perf_store_error(rt_pg *pg, long long alert_id, const char *error)
{
    char id[32];
    snprintf(id, sizeof id, "%lld", alert_id);
    const char *params[] = {id, error};
    return rt_pg_exec(pg, SQL_ERROR, 2, params, NULL);
}

void rt_perf_followed_free(rt_perf_followed *list, size_t n)
{
    for (size_t i = 0; list && i < n; i++) {
        free(list[i].action_task_id);
        free(list[i].task_id);
        free(list[i].repository);
    }
    free(list);
}

int rt_perf_store_to_follow(rt_pg *pg, int window_hours, int limit, rt_perf_followed **out,
                            size_t *n)
{
    *out = NULL;
    *n = 0;
    char window[16], limit_text[16];
    snprintf(window, sizeof window, "%d", window_hours);
    snprintf(limit_text, sizeof limit_text, "%d", limit);
    const char *params[] = {window, limit_text};
    PGresult *res = NULL;
    int c[TF_N];
    int rc = rt_pg_exec(pg, SQL_TO_FOLLOW, 2, params, &res);
    if (rc == RT_OK) rc = rt_pg_result_columns(&res, TO_FOLLOW_COLS, TF_N, c);
    if (rc != RT_OK) return rc;
    size_t rows = (size_t)PQntuples(res);
    rt_perf_followed *list = calloc(rows + 1, sizeof *list);
    bool failed = !list;
    for (size_t i = 0; !failed && i < rows; i++) {
        rt_perf_followed *f = &list[i];
        int r = (int)i;
        f->alert_id = rt_pg_int(res, r, c[TF_ALERT]);
        f->signature_id = rt_pg_int(res, r, c[TF_SIGNATURE]);
        f->action_task_id = dup_of(res, r, c[TF_ACTION_TASK], &failed);
        f->task_id = dup_of(res, r, c[TF_TASK], &failed);
        f->expired = rt_pg_bool(res, r, c[TF_EXPIRED]);
        f->repository = dup_of(res, r, c[TF_REPOSITORY], &failed);
    }
    PQclear(res);
    if (failed) {
        rt_perf_followed_free(list, rows);
        return RT_ENOMEM;
    }
    *out = list;
    *n = rows;
    return RT_OK;
}

int rt_perf_store_followup(rt_pg *pg, long long alert_id, const char *state, const char *reason,
                           const char *detail, int jobs, int completed)
{
    char id[32], jobs_text[16], completed_text[16];
    snprintf(id, sizeof id, "%lld", alert_id);
    snprintf(jobs_text, sizeof jobs_text, "%d", jobs);
    snprintf(completed_text, sizeof completed_text, "%d", completed);
    const char *params[] = {id, state, reason, detail, jobs_text, completed_text};
    return rt_pg_exec(pg, SQL_FOLLOWUP, 6, params, NULL);
}

void rt_perf_day_free(rt_perf_day *d)
{
    for (size_t i = 0; d->failures && i < d->nfailures; i++) {
        rt_perf_failure *f = &d->failures[i];
        free(f->family);
        free(f->platform);
        free(f->reason);
        free(f->detail);
        free(f->action_task_id);
        free(f->settled_at);
    }
    free(d->failures);
    free(d->ledger);
    free(d->alerts);
    memset(d, 0, sizeof *d);
}

static int day_ledger(rt_pg *pg, const char *day, rt_perf_day *d)
{
    const char *params[] = {day};
    PGresult *res = NULL;
    int c[L_N];
    int rc = rt_pg_exec(pg, SQL_DAY_LEDGER, 1, params, &res);
    if (rc == RT_OK) rc = rt_pg_result_columns(&res, LEDGER_COLS, L_N, c);
    if (rc != RT_OK) return rc;
    size_t rows = (size_t)PQntuples(res);
    if (!(d->ledger = calloc(rows + 1, sizeof *d->ledger))) rc = RT_ENOMEM;
    for (size_t i = 0; rc == RT_OK && i < rows; i++) {
        rt_perf_family_day *f = &d->ledger[d->nledger++];
        snprintf(f->family, sizeof f->family, "%s", text_of(res, (int)i, c[L_FAMILY]));
        f->used = rt_pg_int(res, (int)i, c[L_USED]);
    }
    PQclear(res);
    return rc;
}

static int day_alerts(rt_pg *pg, const char *day, rt_perf_day *d)
{
    const char *params[] = {day};
    PGresult *res = NULL;
    int c[FA_N];
    int rc = rt_pg_exec(pg, SQL_DAY_FAMILIES, 1, params, &res);
    if (rc == RT_OK) rc = rt_pg_result_columns(&res, FAMILIES_COLS, FA_N, c);
    if (rc != RT_OK) return rc;
    size_t rows = (size_t)PQntuples(res);
    if (!(d->alerts = calloc(rows + 1, sizeof *d->alerts))) rc = RT_ENOMEM;
    for (size_t i = 0; rc == RT_OK && i < rows; i++) {
        rt_perf_family_day *f = &d->alerts[d->nalerts++];
        snprintf(f->family, sizeof f->family, "%s", text_of(res, (int)i, c[FA_FAMILY]));
        long long *counts[] = {&f->backfills, &f->scheduled, &f->executed, &f->done,
                               &f->pending,   &f->failed,    &f->already,  &f->unsent};
        for (int k = FA_BACKFILLS; k < FA_N; k++)
            *counts[k - FA_BACKFILLS] = rt_pg_int(res, (int)i, c[k]);
    }
    PQclear(res);
    return rc;
}

static int day_failures(rt_pg *pg, const char *day, rt_perf_day *d)
{
    const char *params[] = {day};
    PGresult *res = NULL;
    int c[F_N];
    int rc = rt_pg_exec(pg, SQL_DAY_FAILURES, 1, params, &res);
    if (rc == RT_OK) rc = rt_pg_result_columns(&res, FAILURES_COLS, F_N, c);
    if (rc != RT_OK) return rc;
    size_t rows = (size_t)PQntuples(res);
    bool failed = !(d->failures = calloc(rows + 1, sizeof *d->failures));
    for (size_t i = 0; !failed && i < rows; i++) {
        rt_perf_failure *f = &d->failures[d->nfailures++];
        int r = (int)i;
        f->alert_id = rt_pg_int(res, r, c[F_ALERT]);
        f->summary_id = rt_pg_int(res, r, c[F_SUMMARY]);
        f->family = dup_of(res, r, c[F_FAMILY], &failed);
        f->platform = dup_of(res, r, c[F_PLATFORM], &failed);
        f->reason = dup_of(res, r, c[F_REASON], &failed);
        f->detail = dup_of(res, r, c[F_DETAIL], &failed);
        f->action_task_id = dup_of(res, r, c[F_ACTION_TASK], &failed);
        f->settled_at = dup_of(res, r, c[F_SETTLED], &failed);
        f->jobs = (int)rt_pg_int(res, r, c[F_JOBS]);
        f->completed = (int)rt_pg_int(res, r, c[F_COMPLETED]);
    }
    PQclear(res);
    return failed ? RT_ENOMEM : RT_OK;
}

int rt_perf_store_day(rt_pg *pg, const char *day, rt_perf_day *out)
{
    memset(out, 0, sizeof *out);
    int rc = day_ledger(pg, day, out);
    if (rc == RT_OK) rc = day_alerts(pg, day, out);
    if (rc == RT_OK) rc = day_failures(pg, day, out);
    if (rc != RT_OK) rt_perf_day_free(out);
    return rc;
}

/* The sheriffs' page (cli/report_decisions.c). */
#define TS(col) "to_char(" col " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"
// clang-format off
static const char SQL_RECENT[] =
    "SELECT a.alert_id, a.summary_id, s.repository, a.platform, a.family, a.is_regression,"
    " a.amount_pct, coalesce(a.outcome, 'in flight') AS outcome, a.jobs_scheduled, a.dry_run,"
    " coalesce(a.followup_state, '') AS followup_state,"
    " coalesce(a.followup_reason, '') AS followup_reason, " TS("a.intent_at") " AS intent_at,"
    " coalesce(a.error, '') AS error, coalesce(s.revision, '') AS revision"
    " FROM perf_alerts a JOIN perf_summaries s ON s.summary_id = a.summary_id"
    " WHERE a.intent_at >= $1::timestamptz - $2::interval AND a.intent_at <= $1::timestamptz"
    " ORDER BY a.intent_at DESC, a.alert_id LIMIT $3::integer";
// clang-format on
#define R(member, kind, column) RT_ROW_FIELD(rt_perf_recent, member, RT_ROW_##kind, column)
static const rt_row_field RECENT_FIELDS[] = {
    R(alert_id, TEXT, "alert_id"),
    R(summary_id, TEXT, "summary_id"),
    R(repository, TEXT, "repository"),
    R(platform, TEXT, "platform"),
    R(family, TEXT, "family"),
    R(is_regression, BOOL, "is_regression"),
    R(amount_pct, FLOAT, "amount_pct"),
    R(outcome, TEXT, "outcome"),
    R(jobs_scheduled, TEXT, "jobs_scheduled"),
    R(dry_run, BOOL, "dry_run"),
    R(followup_state, TEXT, "followup_state"),
    R(followup_reason, TEXT, "followup_reason"),
    R(intent_at, TEXT, "intent_at"),
    R(error, TEXT, "error"),
    R(revision, TEXT, "revision"),
};
#undef R
static const rt_row_spec RECENT_SPEC = {
    RECENT_FIELDS, sizeof RECENT_FIELDS / sizeof RECENT_FIELDS[0], sizeof(rt_perf_recent)};

int rt_perf_store_recent(rt_pg *pg, const char *until, const char *interval, int limit,
                         rt_perf_recent **rows, size_t *n)
{
    char limit_text[16];
    snprintf(limit_text, sizeof limit_text, "%d", limit);
    const char *params[] = {until, interval, limit_text};
    return rt_store_rows(pg, SQL_RECENT, 3, params, &RECENT_SPEC, rows, n);
}

void rt_perf_recent_free(rt_perf_recent *rows, size_t n)
{
    rt_store_rows_free(&RECENT_SPEC, rows, n);
}
