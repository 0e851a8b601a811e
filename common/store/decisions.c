/* SPDX-License-Identifier: MPL-2.0 */
/* decisions.c - the statements sheriffs' commands read decisions with, and their row types'
 * fields (decisions.h). Moved from cli/decisions.c and cli/report_decisions.c (issue 33):
 * the statements are unchanged but for the page's columns, which now carry names. */
#include "common/store/decisions.h"

#include <stdio.h>
#include <string.h>

#include "common/store/rows.h"

#define TS(col) "to_char(" col " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"

/* A field of a row struct, and the spec and free function of a row type. */
#define F(type, member, kind, column) RT_ROW_FIELD(type, member, RT_ROW_##kind, column)
#define ROWS(type, fields)                                                                         \
    static const rt_row_spec type##_spec = {fields, sizeof fields / sizeof fields[0],              \
                                            sizeof(type)};                                         \
    void type##_free(type *rows, size_t n) { rt_store_rows_free(&type##_spec, rows, n); }

/* ---- `retrig decisions` ---- */

// clang-format off
static const char SQL_DECISIONS[] =
    "SELECT d.set_id, " TS("d.decided_at") " AS decided_at, d.verdict, d.reason, s.project,"
    " s.revision, s.label, s.platform, s.original_task_id, d.classification_id,"
    " coalesce((SELECT max((l ->> 'reproduced')::int) FROM jsonb_array_elements("
    "   CASE jsonb_typeof(d.evidence -> 'lines') WHEN 'array' THEN d.evidence -> 'lines'"
    "   ELSE '[]'::jsonb END) l), 0) AS reproduced_max,"
    " coalesce((d.evidence #>> '{counts,compared}')::int, 0) AS compared,"
    " d.culprit_status, coalesce(d.culprit_reason, '') AS culprit_reason, d.culprit_revision,"
    " d.culprit_range_first, d.culprit_range_last, d.culprit_url,"
    " d.policy, d.p_regression, d.prior_runs, d.prior_failures,"
    " d.prior_signature_failures, d.rounds, d.retriggers, d.shadow_policy,"
    " d.shadow_verdict, d.shadow_reason"
    " FROM decisions d JOIN retrigger_sets s ON s.id = d.set_id"
    " WHERE d.decided_at >= now() - $1::interval AND ($2::text IS NULL OR s.project = $2)"
    " AND ($3::text IS NULL OR d.verdict = $3)"
    " ORDER BY d.decided_at DESC LIMIT 1000";
// clang-format on
static const rt_row_field LISTED[] = {
    F(rt_decision_listed, set_id, INT, "set_id"),
    F(rt_decision_listed, decided_at, TEXT, "decided_at"),
    F(rt_decision_listed, verdict, TEXT, "verdict"),
    F(rt_decision_listed, reason, TEXT, "reason"),
    F(rt_decision_listed, project, TEXT, "project"),
    F(rt_decision_listed, revision, TEXT, "revision"),
    F(rt_decision_listed, label, TEXT, "label"),
    F(rt_decision_listed, platform, TEXT, "platform"),
    F(rt_decision_listed, original_task_id, TEXT, "original_task_id"),
    F(rt_decision_listed, classification_id, TEXT_NULL, "classification_id"),
    F(rt_decision_listed, reproduced_max, TEXT, "reproduced_max"),
    F(rt_decision_listed, compared, TEXT, "compared"),
    F(rt_decision_listed, culprit_status, TEXT_NULL, "culprit_status"),
    F(rt_decision_listed, culprit_reason, TEXT, "culprit_reason"),
    F(rt_decision_listed, culprit_revision, TEXT_NULL, "culprit_revision"),
    F(rt_decision_listed, culprit_range_first, TEXT_NULL, "culprit_range_first"),
    F(rt_decision_listed, culprit_range_last, TEXT_NULL, "culprit_range_last"),
    F(rt_decision_listed, culprit_url, TEXT_NULL, "culprit_url"),
    F(rt_decision_listed, policy, TEXT_NULL, "policy"),
    F(rt_decision_listed, p_regression, TEXT_NULL, "p_regression"),
    F(rt_decision_listed, prior_runs, TEXT_NULL, "prior_runs"),
    F(rt_decision_listed, prior_failures, TEXT_NULL, "prior_failures"),
    F(rt_decision_listed, prior_signature_failures, TEXT_NULL, "prior_signature_failures"),
    F(rt_decision_listed, rounds, TEXT_NULL, "rounds"),
    F(rt_decision_listed, retriggers, TEXT_NULL, "retriggers"),
    F(rt_decision_listed, shadow_policy, TEXT_NULL, "shadow_policy"),
    F(rt_decision_listed, shadow_verdict, TEXT_NULL, "shadow_verdict"),
    F(rt_decision_listed, shadow_reason, TEXT_NULL, "shadow_reason"),
};
ROWS(rt_decision_listed, LISTED)

int rt_decisions_list(rt_pg *pg, const char *since, const char *project, const char *verdict,
                      rt_decision_listed **rows, size_t *n)
{
    const char *params[] = {since, project, verdict};
    return rt_store_rows(pg, SQL_DECISIONS, 3, params, &rt_decision_listed_spec, rows, n);
}

/* The decisions a prior can be learnt from: regressions and intermittents with their
 * posterior (migration 0024), in the window. $1 since, $2 project or NULL. */
static const char SQL_PRIOR[] =
    "SELECT count(*) AS decided,"
    "       count(*) FILTER (WHERE d.verdict = 'regression') AS regressions,"
    "       count(d.p_regression) AS with_posterior,"
    "       avg(d.p_regression) AS mean_posterior"
    "  FROM decisions d JOIN retrigger_sets s ON s.id = d.set_id"
    " WHERE d.decided_at >= now() - $1::interval AND ($2::text IS NULL OR s.project = $2)"
    "   AND d.verdict IN ('regression', 'intermittent')";
static const rt_row_field PRIOR[] = {
    F(rt_decisions_prior, decided, INT, "decided"),
    F(rt_decisions_prior, regressions, INT, "regressions"),
    F(rt_decisions_prior, with_posterior, INT, "with_posterior"),
    F(rt_decisions_prior, mean_posterior, FLOAT, "mean_posterior"),
};
static const rt_row_spec PRIOR_SPEC = {PRIOR, sizeof PRIOR / sizeof PRIOR[0],
                                       sizeof(rt_decisions_prior)};

int rt_decisions_prior_read(rt_pg *pg, const char *since, const char *project,
                            rt_decisions_prior *out)
{
    memset(out, 0, sizeof *out);
    const char *params[] = {since, project};
    rt_decisions_prior *rows = NULL;
    size_t n = 0;
    int rc = rt_store_rows(pg, SQL_PRIOR, 2, params, &PRIOR_SPEC, &rows, &n);
    if (rc == RT_OK && n == 1) *out = rows[0];
    rt_store_rows_free(&PRIOR_SPEC, rows, n);
    return rc;
}

/* ---- `retrig explain` ---- */

static const char SQL_FIND_SET[] =
    "SELECT s.id FROM retrigger_sets s WHERE s.original_task_id = $1"
    " UNION SELECT m.set_id FROM retrigger_set_members m WHERE m.task_id = $1"
    " ORDER BY 1 DESC LIMIT 1";
typedef struct found_set {
    long long id;
} found_set;
static const rt_row_field FOUND[] = {F(found_set, id, INT, "id")};
static const rt_row_spec FOUND_SPEC = {FOUND, 1, sizeof(found_set)};

int rt_decisions_find_set(rt_pg *pg, const char *task_id, long long *set_id, bool *found)
{
    const char *params[] = {task_id};
    found_set *rows = NULL;
    size_t n = 0;
    int rc = rt_store_rows(pg, SQL_FIND_SET, 1, params, &FOUND_SPEC, &rows, &n);
    *found = rc == RT_OK && n == 1;
    *set_id = *found ? rows[0].id : 0;
    rt_store_rows_free(&FOUND_SPEC, rows, n);
    return rc;
}

// clang-format off
static const char SQL_SET[] =
    "SELECT s.project, s.revision, s.label, s.platform, s.original_task_id, s.original_run_id,"
    " s.retrigger_count, s.status, " TS("s.created_at") " AS created_at,"
    " coalesce(" TS("s.request_published_at") ", '-') AS request_published_at,"
    " coalesce(r.state, '?') AS state, coalesce(r.verdict, '-') AS verdict,"
    " coalesce(r.verdict_reason, '-') AS verdict_reason,"
    " coalesce(" TS("r.resolved_at") ", '-') AS resolved_at,"
    " coalesce(" TS("r.first_seen_at") ", '-') AS first_seen_at,"
    " coalesce(r.task_queue_id, '-') AS task_queue_id, s.failing_groups::text AS failing_groups"
    " FROM retrigger_sets s LEFT JOIN runs r ON r.task_id = s.original_task_id"
    " AND r.run_id = s.original_run_id WHERE s.id = $1::bigint";
// clang-format on
static const rt_row_field SET[] = {
    F(rt_explain_set, project, TEXT, "project"),
    F(rt_explain_set, revision, TEXT, "revision"),
    F(rt_explain_set, label, TEXT, "label"),
    F(rt_explain_set, platform, TEXT, "platform"),
    F(rt_explain_set, original_task_id, TEXT, "original_task_id"),
    F(rt_explain_set, original_run_id, TEXT, "original_run_id"),
    F(rt_explain_set, retrigger_count, TEXT, "retrigger_count"),
    F(rt_explain_set, status, TEXT, "status"),
    F(rt_explain_set, created_at, TEXT, "created_at"),
    F(rt_explain_set, request_published_at, TEXT, "request_published_at"),
    F(rt_explain_set, state, TEXT, "state"),
    F(rt_explain_set, verdict, TEXT, "verdict"),
    F(rt_explain_set, verdict_reason, TEXT, "verdict_reason"),
    F(rt_explain_set, resolved_at, TEXT, "resolved_at"),
    F(rt_explain_set, first_seen_at, TEXT, "first_seen_at"),
    F(rt_explain_set, task_queue_id, TEXT, "task_queue_id"),
    F(rt_explain_set, failing_groups, TEXT, "failing_groups"),
};
ROWS(rt_explain_set, SET)

/* The rounds after the first (decide_policy = adaptive, migration 0024). */
// clang-format off
static const char SQL_ROUNDS[] =
    "SELECT round, wanted, retriggers, refused,"
    " coalesce(to_char(p_regression, 'FM0.000'), '-') AS p_regression,"
    " " TS("requested_at") " AS requested_at,"
    " coalesce(" TS("published_at") ", '-') AS published_at"
    " FROM retrigger_rounds WHERE set_id = $1::bigint ORDER BY round";
// clang-format on
static const rt_row_field ROUND[] = {
    F(rt_explain_round, round, TEXT, "round"),
    F(rt_explain_round, wanted, TEXT, "wanted"),
    F(rt_explain_round, retriggers, TEXT, "retriggers"),
    F(rt_explain_round, refused, BOOL, "refused"),
    F(rt_explain_round, p_regression, TEXT, "p_regression"),
    F(rt_explain_round, requested_at, TEXT, "requested_at"),
    F(rt_explain_round, published_at, TEXT, "published_at"),
};
ROWS(rt_explain_round, ROUND)

// clang-format off
static const char SQL_ACTION[] =
    "SELECT action_name, coalesce(outcome, 'in flight') AS outcome,"
    " coalesce(action_task_id, '-') AS action_task_id, attempts, dry_run,"
    " " TS("intent_at") " AS intent_at, coalesce(" TS("finished_at") ", '-') AS finished_at,"
    " coalesce(error, '') AS error, round"
    " FROM retrigger_actions WHERE set_id = $1::bigint ORDER BY round";
// clang-format on
static const rt_row_field ACTION[] = {
    F(rt_explain_action, action_name, TEXT, "action_name"),
    F(rt_explain_action, outcome, TEXT, "outcome"),
    F(rt_explain_action, action_task_id, TEXT, "action_task_id"),
    F(rt_explain_action, attempts, TEXT, "attempts"),
    F(rt_explain_action, dry_run, BOOL, "dry_run"),
    F(rt_explain_action, intent_at, TEXT, "intent_at"),
    F(rt_explain_action, finished_at, TEXT, "finished_at"),
    F(rt_explain_action, error, TEXT, "error"),
    F(rt_explain_action, round, TEXT, "round"),
};
ROWS(rt_explain_action, ACTION)

// clang-format off
static const char SQL_MEMBERS[] =
    "SELECT m.task_id, m.run_id, m.state, coalesce(m.result, '-') AS result,"
    " coalesce(" TS("m.resolved_at") ", '-') AS resolved_at,"
    " coalesce(r.verdict || '/' || r.verdict_reason, '-') AS classification, m.role"
    " FROM retrigger_set_members m LEFT JOIN runs r ON r.task_id = m.task_id"
    " AND r.run_id = m.run_id WHERE m.set_id = $1::bigint ORDER BY m.added_at, m.task_id";
// clang-format on
static const rt_row_field MEMBER[] = {
    F(rt_explain_member, task_id, TEXT, "task_id"),
    F(rt_explain_member, run_id, TEXT, "run_id"),
    F(rt_explain_member, state, TEXT, "state"),
    F(rt_explain_member, result, TEXT, "result"),
    F(rt_explain_member, resolved_at, TEXT, "resolved_at"),
    F(rt_explain_member, classification, TEXT, "classification"),
    F(rt_explain_member, role, TEXT, "role"),
};
ROWS(rt_explain_member, MEMBER)

// clang-format off
static const char SQL_DECISION[] =
    "SELECT verdict, reason, coalesce(classification_id::text, '-') AS classification_id,"
    " " TS("failure_seen_at") " AS failure_seen_at,"
    " coalesce(" TS("retriggers_requested_at") ", '-') AS retriggers_requested_at,"
    " " TS("decided_at") " AS decided_at,"
    " extract(epoch FROM decided_at - failure_seen_at)::bigint AS seconds_to_decide,"
    " evidence::text AS evidence"
    " FROM decisions WHERE set_id = $1::bigint";
// clang-format on
static const rt_row_field DECISION[] = {
    F(rt_explain_decision, verdict, TEXT, "verdict"),
    F(rt_explain_decision, reason, TEXT, "reason"),
    F(rt_explain_decision, classification_id, TEXT, "classification_id"),
    F(rt_explain_decision, failure_seen_at, TEXT, "failure_seen_at"),
    F(rt_explain_decision, retriggers_requested_at, TEXT, "retriggers_requested_at"),
    F(rt_explain_decision, decided_at, TEXT, "decided_at"),
    F(rt_explain_decision, seconds_to_decide, TEXT, "seconds_to_decide"),
    F(rt_explain_decision, evidence, TEXT, "evidence"),
};
ROWS(rt_explain_decision, DECISION)

/* What the decision row records of the verdict policy (migration 0024). */
static const char SQL_POLICY[] =
    "SELECT coalesce(policy, '-') AS policy,"
    " coalesce(to_char(p_regression, 'FM0.000'), '-') AS p_regression,"
    " coalesce(prior_runs::text, '-') AS prior_runs,"
    " coalesce(prior_failures::text, '-') AS prior_failures,"
    " coalesce(prior_signature_failures::text, '-') AS prior_signature_failures,"
    " coalesce(rounds::text, '-') AS rounds, coalesce(retriggers::text, '-') AS retriggers,"
    " coalesce(shadow_policy, '-') AS shadow_policy,"
    " coalesce(shadow_verdict, '-') AS shadow_verdict,"
    " coalesce(shadow_reason, '-') AS shadow_reason"
    " FROM decisions WHERE set_id = $1::bigint";
static const rt_row_field POLICY[] = {
    F(rt_explain_policy, policy, TEXT, "policy"),
    F(rt_explain_policy, p_regression, TEXT, "p_regression"),
    F(rt_explain_policy, prior_runs, TEXT, "prior_runs"),
    F(rt_explain_policy, prior_failures, TEXT, "prior_failures"),
    F(rt_explain_policy, prior_signature_failures, TEXT, "prior_signature_failures"),
    F(rt_explain_policy, rounds, TEXT, "rounds"),
    F(rt_explain_policy, retriggers, TEXT, "retriggers"),
    F(rt_explain_policy, shadow_policy, TEXT, "shadow_policy"),
    F(rt_explain_policy, shadow_verdict, TEXT, "shadow_verdict"),
    F(rt_explain_policy, shadow_reason, TEXT, "shadow_reason"),
};
ROWS(rt_explain_policy, POLICY)

// clang-format off
static const char SQL_CULPRIT[] =
    "SELECT culprit_status, coalesce(culprit_reason, '-') AS culprit_reason,"
    " coalesce(culprit_revision, '-') AS culprit_revision,"
    " coalesce(culprit_pushlog_id::text, '-') AS culprit_pushlog_id,"
    " coalesce(culprit_author, '-') AS culprit_author, coalesce(culprit_url, '-') AS culprit_url,"
    " coalesce(culprit_range_first, '-') AS culprit_range_first,"
    " coalesce(culprit_range_last, '-') AS culprit_range_last, culprit_jobs_spent,"
    " jsonb_array_length(culprit_probes) AS probes,"
    " coalesce(jsonb_array_length(culprit_window -> 'pushes'), 0) AS window_pushes,"
    " coalesce(culprit_window #>> '{next,revision}', '') AS next_revision,"
    " coalesce(culprit_window #>> '{next,times}', '') AS next_times,"
    " coalesce(" TS("culprit_started_at") ", '-') AS culprit_started_at"
    " FROM decisions WHERE set_id = $1::bigint AND culprit_status IS NOT NULL";
// clang-format on
static const rt_row_field CULPRIT[] = {
    F(rt_explain_culprit, status, TEXT, "culprit_status"),
    F(rt_explain_culprit, reason, TEXT, "culprit_reason"),
    F(rt_explain_culprit, revision, TEXT, "culprit_revision"),
    F(rt_explain_culprit, pushlog_id, TEXT, "culprit_pushlog_id"),
    F(rt_explain_culprit, author, TEXT, "culprit_author"),
    F(rt_explain_culprit, url, TEXT, "culprit_url"),
    F(rt_explain_culprit, range_first, TEXT, "culprit_range_first"),
    F(rt_explain_culprit, range_last, TEXT, "culprit_range_last"),
    F(rt_explain_culprit, jobs_spent, TEXT, "culprit_jobs_spent"),
    F(rt_explain_culprit, probes, TEXT, "probes"),
    F(rt_explain_culprit, window_pushes, TEXT, "window_pushes"),
    F(rt_explain_culprit, next_revision, TEXT, "next_revision"),
    F(rt_explain_culprit, next_times, TEXT, "next_times"),
    F(rt_explain_culprit, started_at, TEXT, "culprit_started_at"),
};
ROWS(rt_explain_culprit, CULPRIT)

/* The statements of `retrig explain` take the set's id. */
static int by_set(rt_pg *pg, const char *sql, long long set_id, const rt_row_spec *spec, void *rows,
                  size_t *n)
{
    char id[32];
    snprintf(id, sizeof id, "%lld", set_id);
    const char *params[] = {id};
    return rt_store_rows(pg, sql, 1, params, spec, rows, n);
}

int rt_explain_set_read(rt_pg *pg, long long set_id, rt_explain_set **rows, size_t *n)
{
    return by_set(pg, SQL_SET, set_id, &rt_explain_set_spec, rows, n);
}

int rt_explain_rounds(rt_pg *pg, long long set_id, rt_explain_round **rows, size_t *n)
{
    return by_set(pg, SQL_ROUNDS, set_id, &rt_explain_round_spec, rows, n);
}

int rt_explain_actions(rt_pg *pg, long long set_id, rt_explain_action **rows, size_t *n)
{
    return by_set(pg, SQL_ACTION, set_id, &rt_explain_action_spec, rows, n);
}

int rt_explain_members(rt_pg *pg, long long set_id, rt_explain_member **rows, size_t *n)
{
    return by_set(pg, SQL_MEMBERS, set_id, &rt_explain_member_spec, rows, n);
}

int rt_explain_decision_read(rt_pg *pg, long long set_id, rt_explain_decision **rows, size_t *n)
{
    return by_set(pg, SQL_DECISION, set_id, &rt_explain_decision_spec, rows, n);
}

int rt_explain_policy_read(rt_pg *pg, long long set_id, rt_explain_policy **rows, size_t *n)
{
    return by_set(pg, SQL_POLICY, set_id, &rt_explain_policy_spec, rows, n);
}

int rt_explain_culprit_read(rt_pg *pg, long long set_id, rt_explain_culprit **rows, size_t *n)
{
    return by_set(pg, SQL_CULPRIT, set_id, &rt_explain_culprit_spec, rows, n);
}

/* ---- the sheriffs' page ---- */

// clang-format off
static const char SQL_PAGE_WINDOW[] =
    "SELECT " TS("$1::timestamptz") " AS until,"
    " " TS("($1::timestamptz - $2::interval)") " AS since,"
    " to_char(($1::timestamptz AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD') AS today";
// clang-format on
typedef struct window_row {
    char *until, *since, *today;
} window_row;
static const rt_row_field WINDOW[] = {F(window_row, until, TEXT, "until"),
                                      F(window_row, since, TEXT, "since"),
                                      F(window_row, today, TEXT, "today")};
static const rt_row_spec WINDOW_SPEC = {WINDOW, 3, sizeof(window_row)};

int rt_page_window_read(rt_pg *pg, const char *until, const char *interval, rt_page_window *out)
{
    memset(out, 0, sizeof *out);
    const char *params[] = {until, interval};
    window_row *rows = NULL;
    size_t n = 0;
    int rc = rt_store_rows(pg, SQL_PAGE_WINDOW, 2, params, &WINDOW_SPEC, &rows, &n);
    if (rc == RT_OK && n == 1) {
        snprintf(out->until, sizeof out->until, "%s", rows[0].until);
        snprintf(out->since, sizeof out->since, "%s", rows[0].since);
        snprintf(out->today, sizeof out->today, "%s", rows[0].today);
    }
    rt_store_rows_free(&WINDOW_SPEC, rows, n);
    return rc;
}

/* Every column of the decision row but the evidence, as JSON: columns a later migration
 * adds (p_regression, policy, ...) show up without a change here. */
// clang-format off
static const char SQL_PAGE_DECISIONS[] =
    "SELECT d.set_id, " TS("d.decided_at") " AS decided_at, d.verdict, d.reason, s.project,"
    " s.revision, s.label, s.platform, s.original_task_id, s.original_run_id,"
    " coalesce(d.classification_id::text, '') AS classification_id,"
    " " TS("d.failure_seen_at") " AS failure_seen_at,"
    " coalesce(" TS("d.retriggers_requested_at") ", '') AS retriggers_requested_at,"
    " d.evidence::text AS evidence, (to_jsonb(d) - 'evidence')::text AS decision_row, s.retrigger_count"
    " FROM decisions d JOIN retrigger_sets s ON s.id = d.set_id"
    " WHERE d.decided_at >= $1::timestamptz - $2::interval AND d.decided_at <= $1::timestamptz"
    " ORDER BY d.decided_at DESC, d.set_id DESC LIMIT $3::integer";
static const char SQL_PAGE_INFRA[] =
    "SELECT r.task_id, r.run_id, coalesce(r.project, '') AS project,"
    " coalesce(r.revision, '') AS revision, coalesce(r.label, '') AS label,"
    " coalesce(r.platform, '') AS platform, coalesce(r.verdict_reason, '') AS verdict_reason,"
    " " TS("coalesce(r.classified_at, r.first_seen_at)") " AS classified_at,"
    " coalesce(" TS("r.resolved_at") ", '') AS resolved_at"
    " FROM runs r WHERE r.verdict = 'infra'"
    " AND coalesce(r.classified_at, r.first_seen_at) >= $1::timestamptz - $2::interval"
    " AND coalesce(r.classified_at, r.first_seen_at) <= $1::timestamptz"
    " ORDER BY coalesce(r.classified_at, r.first_seen_at) DESC LIMIT $3::integer";
static const char SQL_PAGE_MEMBERS[] =
    "SELECT m.set_id, m.task_id, m.run_id, m.role, m.state, coalesce(m.result, '') AS result,"
    " coalesce(" TS("m.resolved_at") ", '') AS resolved_at FROM retrigger_set_members m"
    " WHERE m.set_id = ANY(ARRAY(SELECT jsonb_array_elements_text($1::jsonb))::bigint[])"
    " ORDER BY m.set_id, m.added_at, m.task_id";
// clang-format on
static const char SQL_PAGE_ACTIONS[] =
    "SELECT a.set_id, a.action_name, coalesce(a.outcome, 'in flight') AS outcome, a.dry_run,"
    " coalesce(a.action_task_id, '') AS action_task_id, coalesce(a.error, '') AS error"
    " FROM retrigger_actions a"
    " WHERE a.set_id = ANY(ARRAY(SELECT jsonb_array_elements_text($1::jsonb))::bigint[])";
static const rt_row_field PAGE_DECISION[] = {
    F(rt_page_decision, set_id, TEXT, "set_id"),
    F(rt_page_decision, decided_at, TEXT, "decided_at"),
    F(rt_page_decision, verdict, TEXT, "verdict"),
    F(rt_page_decision, reason, TEXT, "reason"),
    F(rt_page_decision, project, TEXT, "project"),
    F(rt_page_decision, revision, TEXT, "revision"),
    F(rt_page_decision, label, TEXT, "label"),
    F(rt_page_decision, platform, TEXT, "platform"),
    F(rt_page_decision, original_task_id, TEXT, "original_task_id"),
    F(rt_page_decision, original_run_id, TEXT, "original_run_id"),
    F(rt_page_decision, classification_id, TEXT, "classification_id"),
    F(rt_page_decision, failure_seen_at, TEXT, "failure_seen_at"),
    F(rt_page_decision, retriggers_requested_at, TEXT, "retriggers_requested_at"),
    F(rt_page_decision, evidence, TEXT, "evidence"),
    F(rt_page_decision, row, TEXT, "decision_row"),
    F(rt_page_decision, retrigger_count, INT, "retrigger_count"),
};
ROWS(rt_page_decision, PAGE_DECISION)

static const rt_row_field PAGE_INFRA[] = {
    F(rt_page_infra, task_id, TEXT, "task_id"),
    F(rt_page_infra, run_id, TEXT, "run_id"),
    F(rt_page_infra, project, TEXT, "project"),
    F(rt_page_infra, revision, TEXT, "revision"),
    F(rt_page_infra, label, TEXT, "label"),
    F(rt_page_infra, platform, TEXT, "platform"),
    F(rt_page_infra, verdict_reason, TEXT, "verdict_reason"),
    F(rt_page_infra, classified_at, TEXT, "classified_at"),
    F(rt_page_infra, resolved_at, TEXT, "resolved_at"),
};
ROWS(rt_page_infra, PAGE_INFRA)

static const rt_row_field PAGE_MEMBER[] = {
    F(rt_page_member, set_id, TEXT, "set_id"),
    F(rt_page_member, task_id, TEXT, "task_id"),
    F(rt_page_member, run_id, TEXT, "run_id"),
    F(rt_page_member, role, TEXT, "role"),
    F(rt_page_member, state, TEXT, "state"),
    F(rt_page_member, result, TEXT, "result"),
    F(rt_page_member, resolved_at, TEXT, "resolved_at"),
};
ROWS(rt_page_member, PAGE_MEMBER)

static const rt_row_field PAGE_ACTION[] = {
    F(rt_page_action, set_id, TEXT, "set_id"),
    F(rt_page_action, action_name, TEXT, "action_name"),
    F(rt_page_action, outcome, TEXT, "outcome"),
    F(rt_page_action, dry_run, BOOL, "dry_run"),
    F(rt_page_action, action_task_id, TEXT, "action_task_id"),
    F(rt_page_action, error, TEXT, "error"),
};
ROWS(rt_page_action, PAGE_ACTION)

int rt_page_decisions(rt_pg *pg, const char *until, const char *interval, int limit,
                      rt_page_decision **rows, size_t *n)
{
    char limit_text[16];
    snprintf(limit_text, sizeof limit_text, "%d", limit);
    const char *params[] = {until, interval, limit_text};
    return rt_store_rows(pg, SQL_PAGE_DECISIONS, 3, params, &rt_page_decision_spec, rows, n);
}

int rt_page_infra_read(rt_pg *pg, const char *until, const char *interval, int limit,
                       rt_page_infra **rows, size_t *n)
{
    char limit_text[16];
    snprintf(limit_text, sizeof limit_text, "%d", limit);
    const char *params[] = {until, interval, limit_text};
    return rt_store_rows(pg, SQL_PAGE_INFRA, 3, params, &rt_page_infra_spec, rows, n);
}

int rt_page_members(rt_pg *pg, const char *set_ids, rt_page_member **rows, size_t *n)
{
    const char *params[] = {set_ids};
    return rt_store_rows(pg, SQL_PAGE_MEMBERS, 1, params, &rt_page_member_spec, rows, n);
}

int rt_page_actions(rt_pg *pg, const char *set_ids, rt_page_action **rows, size_t *n)
{
    const char *params[] = {set_ids};
    return rt_store_rows(pg, SQL_PAGE_ACTIONS, 1, params, &rt_page_action_spec, rows, n);
}
