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
/* The jobs those were, for covering their alerts' siblings. */
static const char SQL_HANDLED_JOBS[] =
    "SELECT DISTINCT summary_id, job_key FROM perf_alerts WHERE summary_id = ANY($1::bigint[])"
    " AND job_key IS NOT NULL AND (outcome IS NULL OR outcome IN ('triggered', 'dry-run',"
    " 'found-existing', 'already-backfilled'))";
static const char SQL_ALERT[] =
    "SELECT outcome IS NOT NULL AS finished, dry_run, attempts,"
    " (extract(epoch FROM now() - intent_at) * 1000)::bigint AS age_ms,"
    " task_id, decision_task_id, hook_group_id, hook_id, payload::text AS payload,"
    " (SELECT repository FROM perf_summaries s"
    " WHERE s.summary_id = perf_alerts.summary_id) AS repository"
    " FROM perf_alerts WHERE alert_id = $1::bigint";
static const char SQL_OPEN_ALERTS[] =
    "SELECT alert_id, summary_id FROM perf_alerts WHERE outcome IS NULL AND NOT dry_run"
    " ORDER BY intent_at";
static const char SQL_SUMMARY_STATE[] =
    "SELECT s.handled_at IS NOT NULL AS handled, " SQL_JOBS_TAKEN " AS taken"
    " FROM perf_summaries s WHERE s.summary_id = $1::bigint";
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
static const char SQL_DAY_LEDGER[] =
    "SELECT substr(platform, 6) AS family, sum(amount) AS used FROM budget_ledger"
    " WHERE day = $1::date AND platform LIKE 'perf:%' GROUP BY 1";
static const char SQL_DAY_FAILURES[] =
    "SELECT alert_id, summary_id, family, platform, followup_reason,"
    " coalesce(followup_detail, '') AS followup_detail,"
    " coalesce(action_task_id, '') AS action_task_id, followup_jobs, followup_completed,"
    " coalesce(to_char(followup_settled_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),"
    " '') AS followup_settled_at"
    " FROM perf_alerts WHERE followup_state = 'failed' AND " ALERT_DAY " ORDER BY alert_id";

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

#define F(type, member, kind, column) RT_ROW_FIELD(type, member, RT_ROW_##kind, column)

/* The rows of what earlier runs did, before they become the core's types. */
typedef struct handled_row {
    long long alert_id;
} handled_row;
static const rt_row_field HANDLED_FIELDS[] = {F(handled_row, alert_id, INT, "alert_id")};
static const rt_row_spec HANDLED_SPEC = {HANDLED_FIELDS, 1, sizeof(handled_row)};
typedef struct taken_row {
    long long summary_id, taken;
    bool handled;
} taken_row;
static const rt_row_field TAKEN_FIELDS[] = {
    F(taken_row, summary_id, INT, "summary_id"),
    F(taken_row, handled, BOOL, "handled"),
    F(taken_row, taken, INT, "taken"),
};
static const rt_row_spec TAKEN_SPEC = {TAKEN_FIELDS, 3, sizeof(taken_row)};
typedef struct job_row {
    long long summary_id;
    char *job_key;
} job_row;
static const rt_row_field JOB_FIELDS[] = {
    F(job_row, summary_id, INT, "summary_id"),
    F(job_row, job_key, TEXT, "job_key"),
};
static const rt_row_spec JOB_SPEC = {JOB_FIELDS, 2, sizeof(job_row)};

void rt_perf_store_history_free(rt_perf_store_history *h)
{
    for (size_t i = 0; h->keys && i < h->njobs; i++) free(h->keys[i]);
    free(h->keys);
    free(h->alerts);
    free(h->taken);
    free(h->jobs);
    memset(h, 0, sizeof *h);
}

/* The rows as rt_perf_pick_alerts reads them; the job keys move to h. */
static int history_of(const handled_row *a, size_t na, const taken_row *t, size_t nt, job_row *j,
                      size_t nj, rt_perf_store_history *h)
{
    h->alerts = calloc(na + 1, sizeof *h->alerts);
    h->taken = calloc(nt + 1, sizeof *h->taken);
    h->jobs = calloc(nj + 1, sizeof *h->jobs);
    h->keys = calloc(nj + 1, sizeof *h->keys);
    if (!h->alerts || !h->taken || !h->jobs || !h->keys) return RT_ENOMEM;
    for (size_t i = 0; i < nj; i++) {
        h->keys[h->njobs] = j[i].job_key;
        h->jobs[h->njobs++] = (rt_perf_job){j[i].summary_id, j[i].job_key};
        j[i].job_key = NULL;
    }
    for (size_t i = 0; i < na; i++) h->alerts[h->nalerts++] = a[i].alert_id;
    for (size_t i = 0; i < nt; i++)
        h->taken[h->ntaken++] = (rt_perf_taken){t[i].summary_id, (int)t[i].taken, t[i].handled};
    return RT_OK;
}

int rt_perf_store_history_load(rt_pg *pg, const long long *summary_ids, size_t n,
                               rt_perf_store_history *out)
{
    memset(out, 0, sizeof *out);
    char *ids = id_array(summary_ids, n);
    if (!ids) return RT_ENOMEM;
    const char *params[] = {ids};
    handled_row *a = NULL;
    taken_row *t = NULL;
    job_row *j = NULL;
    size_t na = 0, nt = 0, nj = 0;
    int rc = rt_store_rows(pg, SQL_HANDLED_ALERTS, 1, params, &HANDLED_SPEC, &a, &na);
    if (rc == RT_OK) rc = rt_store_rows(pg, SQL_TAKEN, 1, params, &TAKEN_SPEC, &t, &nt);
    if (rc == RT_OK) rc = rt_store_rows(pg, SQL_HANDLED_JOBS, 1, params, &JOB_SPEC, &j, &nj);
    if (rc == RT_OK) rc = history_of(a, na, t, nt, j, nj, out);
    if (rc != RT_OK) rt_perf_store_history_free(out);
    free(ids);
    rt_store_rows_free(&HANDLED_SPEC, a, na);
    rt_store_rows_free(&TAKEN_SPEC, t, nt);
    rt_store_rows_free(&JOB_SPEC, j, nj);
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

typedef struct state_row {
    bool handled;
    long long taken;
} state_row;
static const rt_row_field STATE_FIELDS[] = {F(state_row, handled, BOOL, "handled"),
                                            F(state_row, taken, INT, "taken")};
static const rt_row_spec STATE_SPEC = {STATE_FIELDS, 2, sizeof(state_row)};

int rt_perf_store_summary_state(rt_pg *pg, long long summary_id, rt_perf_summary_state *out)
{
    memset(out, 0, sizeof *out);
    char sid[32];
    snprintf(sid, sizeof sid, "%lld", summary_id);
    const char *params[] = {sid};
    state_row *rows = NULL;
    size_t n = 0;
    int rc = rt_store_rows(pg, SQL_SUMMARY_STATE, 1, params, &STATE_SPEC, &rows, &n);
    if (rc == RT_OK && n == 1)
        *out = (rt_perf_summary_state){true, rows[0].handled, (int)rows[0].taken};
    rt_store_rows_free(&STATE_SPEC, rows, n);
    return rc;
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

static const rt_row_field ALERT_FIELDS[] = {
    F(rt_perf_alert_row, finished, BOOL, "finished"),
    F(rt_perf_alert_row, dry_run, BOOL, "dry_run"),
    F(rt_perf_alert_row, attempts, INT, "attempts"),
    F(rt_perf_alert_row, age_ms, INT, "age_ms"),
    F(rt_perf_alert_row, task_id, TEXT, "task_id"),
    F(rt_perf_alert_row, decision_task_id, TEXT, "decision_task_id"),
    F(rt_perf_alert_row, hook_group, TEXT, "hook_group_id"),
    F(rt_perf_alert_row, hook_id, TEXT, "hook_id"),
    F(rt_perf_alert_row, payload, TEXT, "payload"),
    F(rt_perf_alert_row, repository, TEXT, "repository"),
};
static const rt_row_spec ALERT_SPEC = {ALERT_FIELDS, sizeof ALERT_FIELDS / sizeof ALERT_FIELDS[0],
                                       sizeof(rt_perf_alert_row)};
static const rt_row_field OPEN_FIELDS[] = {
    F(rt_perf_open_alert, alert_id, INT, "alert_id"),
    F(rt_perf_open_alert, summary_id, INT, "summary_id"),
};
static const rt_row_spec OPEN_SPEC = {OPEN_FIELDS, 2, sizeof(rt_perf_open_alert)};

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
    rt_perf_alert_row *rows = NULL;
    size_t n = 0;
    int rc = rt_store_rows(pg, SQL_ALERT, 1, params, &ALERT_SPEC, &rows, &n);
    if (rc == RT_OK && n == 1) { /* the row's texts move to *row */
        *row = rows[0];
        *found = true;
        free(rows);
    } else {
        rt_store_rows_free(&ALERT_SPEC, rows, n);
    }
    return rc;
}

int rt_perf_store_open_alerts(rt_pg *pg, rt_perf_open_alert **out, size_t *n)
{
    return rt_store_rows(pg, SQL_OPEN_ALERTS, 0, NULL, &OPEN_SPEC, out, n);
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

static const rt_row_field FOLLOWED_FIELDS[] = {
    F(rt_perf_followed, alert_id, INT, "alert_id"),
    F(rt_perf_followed, action_task_id, TEXT, "action_task_id"),
    F(rt_perf_followed, signature_id, INT, "signature_id"),
    F(rt_perf_followed, repository, TEXT, "repository"),
    F(rt_perf_followed, expired, BOOL, "expired"),
    F(rt_perf_followed, task_id, TEXT, "task_id"),
};
static const rt_row_spec FOLLOWED_SPEC = {FOLLOWED_FIELDS, 6, sizeof(rt_perf_followed)};

void rt_perf_followed_free(rt_perf_followed *list, size_t n)
{
    rt_store_rows_free(&FOLLOWED_SPEC, list, n);
}

int rt_perf_store_to_follow(rt_pg *pg, int window_hours, int limit, rt_perf_followed **out,
                            size_t *n)
{
    char window[16], limit_text[16];
    snprintf(window, sizeof window, "%d", window_hours);
    snprintf(limit_text, sizeof limit_text, "%d", limit);
    const char *params[] = {window, limit_text};
    return rt_store_rows(pg, SQL_TO_FOLLOW, 2, params, &FOLLOWED_SPEC, out, n);
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

static const rt_row_field LEDGER_FIELDS[] = {
    F(rt_perf_family_day, family, TEXT, "family"),
    F(rt_perf_family_day, used, INT, "used"),
};
static const rt_row_spec LEDGER_SPEC = {LEDGER_FIELDS, 2, sizeof(rt_perf_family_day)};
static const rt_row_field FAMILY_FIELDS[] = {
    F(rt_perf_family_day, family, TEXT, "family"),
    F(rt_perf_family_day, backfills, INT, "backfills"),
    F(rt_perf_family_day, scheduled, INT, "jobs_scheduled"),
    F(rt_perf_family_day, executed, INT, "jobs_executed"),
    F(rt_perf_family_day, done, INT, "done"),
    F(rt_perf_family_day, pending, INT, "pending"),
    F(rt_perf_family_day, failed, INT, "failed"),
    F(rt_perf_family_day, already, INT, "already_backfilled"),
    F(rt_perf_family_day, unsent, INT, "not_sent"),
};
static const rt_row_spec FAMILY_SPEC = {FAMILY_FIELDS, 9, sizeof(rt_perf_family_day)};
static const rt_row_field FAILURE_FIELDS[] = {
    F(rt_perf_failure, alert_id, INT, "alert_id"),
    F(rt_perf_failure, summary_id, INT, "summary_id"),
    F(rt_perf_failure, family, TEXT, "family"),
    F(rt_perf_failure, platform, TEXT, "platform"),
    F(rt_perf_failure, reason, TEXT, "followup_reason"),
    F(rt_perf_failure, detail, TEXT, "followup_detail"),
    F(rt_perf_failure, action_task_id, TEXT, "action_task_id"),
    F(rt_perf_failure, jobs, INT, "followup_jobs"),
    F(rt_perf_failure, completed, INT, "followup_completed"),
    F(rt_perf_failure, settled_at, TEXT, "followup_settled_at"),
};
static const rt_row_spec FAILURE_SPEC = {FAILURE_FIELDS, 10, sizeof(rt_perf_failure)};

void rt_perf_day_free(rt_perf_day *d)
{
    rt_store_rows_free(&LEDGER_SPEC, d->ledger, d->nledger);
    rt_store_rows_free(&FAMILY_SPEC, d->alerts, d->nalerts);
    rt_store_rows_free(&FAILURE_SPEC, d->failures, d->nfailures);
    memset(d, 0, sizeof *d);
}

int rt_perf_store_day(rt_pg *pg, const char *day, rt_perf_day *out)
{
    memset(out, 0, sizeof *out);
    const char *params[] = {day};
    int rc =
        rt_store_rows(pg, SQL_DAY_LEDGER, 1, params, &LEDGER_SPEC, &out->ledger, &out->nledger);
    if (rc == RT_OK)
        rc = rt_store_rows(pg, SQL_DAY_FAMILIES, 1, params, &FAMILY_SPEC, &out->alerts,
                           &out->nalerts);
    if (rc == RT_OK)
        rc = rt_store_rows(pg, SQL_DAY_FAILURES, 1, params, &FAILURE_SPEC, &out->failures,
                           &out->nfailures);
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
