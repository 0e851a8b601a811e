/* SPDX-License-Identifier: MPL-2.0 */
/* decisions.c - `retrig decisions` lists the verdicts retrig-decide stored, and
 * `retrig explain <taskId>` tells the whole story of one retrigger set: the failure and
 * how retrig-classify judged it, the retrigger action, each retrigger and its state, the
 * lines compared and the verdict, with the times. Read-only: the sheriff role suffices. */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/core/ids.h"
#include "common/io/pg.h"

#define TS(col) "to_char(" col " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"

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
/* The columns read by name; policy_json reads the verdict policy's by name too. */
enum {
    D_SET,
    D_DECIDED_AT,
    D_VERDICT,
    D_REASON,
    D_PROJECT,
    D_REVISION,
    D_LABEL,
    D_PLATFORM,
    D_TASK,
    D_CLASSIFICATION,
    D_REPRODUCED,
    D_COMPARED,
    D_CULPRIT_STATUS,
    D_CULPRIT_REASON,
    D_CULPRIT_REVISION,
    D_RANGE_FIRST,
    D_RANGE_LAST,
    D_CULPRIT_URL,
    D_POLICY,
    D_P_REGRESSION,
    D_ROUNDS,
    D_RETRIGGERS,
    D_SHADOW_VERDICT,
    D_N
};
static const char *const DECISIONS_COLS[D_N] = {"set_id",
                                                "decided_at",
                                                "verdict",
                                                "reason",
                                                "project",
                                                "revision",
                                                "label",
                                                "platform",
                                                "original_task_id",
                                                "classification_id",
                                                "reproduced_max",
                                                "compared",
                                                "culprit_status",
                                                "culprit_reason",
                                                "culprit_revision",
                                                "culprit_range_first",
                                                "culprit_range_last",
                                                "culprit_url",
                                                "policy",
                                                "p_regression",
                                                "rounds",
                                                "retriggers",
                                                "shadow_verdict"};

static const char SQL_FIND_SET[] =
    "SELECT s.id FROM retrigger_sets s WHERE s.original_task_id = $1"
    " UNION SELECT m.set_id FROM retrigger_set_members m WHERE m.task_id = $1"
    " ORDER BY 1 DESC LIMIT 1";
enum { F_ID, F_N };
static const char *const FIND_SET_COLS[F_N] = {"id"};

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
enum {
    S_PROJECT,
    S_REVISION,
    S_LABEL,
    S_PLATFORM,
    S_TASK,
    S_RUN,
    S_RETRIGGERS,
    S_STATUS,
    S_CREATED,
    S_PUBLISHED,
    S_STATE,
    S_VERDICT,
    S_REASON,
    S_RESOLVED,
    S_SEEN,
    S_QUEUE,
    S_GROUPS,
    S_N
};
static const char *const SET_COLS[S_N] = {
    "project",         "revision",        "label",          "platform",    "original_task_id",
    "original_run_id", "retrigger_count", "status",         "created_at",  "request_published_at",
    "state",           "verdict",         "verdict_reason", "resolved_at", "first_seen_at",
    "task_queue_id",   "failing_groups"};

// clang-format off
static const char SQL_ACTION[] =
    "SELECT action_name, coalesce(outcome, 'in flight') AS outcome,"
    " coalesce(action_task_id, '-') AS action_task_id, attempts, dry_run,"
    " " TS("intent_at") " AS intent_at, coalesce(" TS("finished_at") ", '-') AS finished_at,"
    " coalesce(error, '') AS error, round"
    " FROM retrigger_actions WHERE set_id = $1::bigint ORDER BY round";
// clang-format on
enum {
    A_NAME,
    A_OUTCOME,
    A_TASK,
    A_ATTEMPTS,
    A_DRY_RUN,
    A_INTENT,
    A_FINISHED,
    A_ERROR,
    A_ROUND,
    A_N
};
static const char *const ACTION_COLS[A_N] = {"action_name", "outcome", "action_task_id",
                                             "attempts",    "dry_run", "intent_at",
                                             "finished_at", "error",   "round"};

/* The rounds after the first (decide_policy = adaptive, migration 0024). */
// clang-format off
static const char SQL_ROUNDS[] =
    "SELECT round, wanted, retriggers, refused,"
    " coalesce(to_char(p_regression, 'FM0.000'), '-') AS p_regression,"
    " " TS("requested_at") " AS requested_at,"
    " coalesce(" TS("published_at") ", '-') AS published_at"
    " FROM retrigger_rounds WHERE set_id = $1::bigint ORDER BY round";
// clang-format on
enum { R_ROUND, R_WANTED, R_RETRIGGERS, R_REFUSED, R_P_REGRESSION, R_REQUESTED, R_PUBLISHED, R_N };
static const char *const ROUNDS_COLS[R_N] = {
    "round", "wanted", "retriggers", "refused", "p_regression", "requested_at", "published_at"};

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
enum {
    PO_POLICY,
    PO_P_REGRESSION,
    PO_RUNS,
    PO_FAILURES,
    PO_SIGNATURE_FAILURES,
    PO_ROUNDS,
    PO_RETRIGGERS,
    PO_SHADOW_POLICY,
    PO_SHADOW_VERDICT,
    PO_SHADOW_REASON,
    PO_N
};
static const char *const POLICY_COLS[PO_N] = {
    "policy", "p_regression", "prior_runs",    "prior_failures", "prior_signature_failures",
    "rounds", "retriggers",   "shadow_policy", "shadow_verdict", "shadow_reason"};

// clang-format off
static const char SQL_MEMBERS[] =
    "SELECT m.task_id, m.run_id, m.state, coalesce(m.result, '-') AS result,"
    " coalesce(" TS("m.resolved_at") ", '-') AS resolved_at,"
    " coalesce(r.verdict || '/' || r.verdict_reason, '-') AS classification, m.role"
    " FROM retrigger_set_members m LEFT JOIN runs r ON r.task_id = m.task_id"
    " AND r.run_id = m.run_id WHERE m.set_id = $1::bigint ORDER BY m.added_at, m.task_id";
// clang-format on
enum { M_TASK, M_RUN, M_STATE, M_RESULT, M_RESOLVED, M_CLASSIFICATION, M_ROLE, M_N };
static const char *const MEMBERS_COLS[M_N] = {"task_id",     "run_id",         "state", "result",
                                              "resolved_at", "classification", "role"};

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
enum {
    V_VERDICT,
    V_REASON,
    V_CLASSIFICATION,
    V_SEEN,
    V_REQUESTED,
    V_DECIDED,
    V_SECONDS,
    V_EVIDENCE,
    V_N
};
static const char *const DECISION_COLS[V_N] = {"verdict",
                                               "reason",
                                               "classification_id",
                                               "failure_seen_at",
                                               "retriggers_requested_at",
                                               "decided_at",
                                               "seconds_to_decide",
                                               "evidence"};

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
enum {
    C_STATUS,
    C_REASON,
    C_REVISION,
    C_PUSHLOG,
    C_AUTHOR,
    C_URL,
    C_RANGE_FIRST,
    C_RANGE_LAST,
    C_JOBS,
    C_PROBES,
    C_PUSHES,
    C_NEXT_REVISION,
    C_NEXT_TIMES,
    C_STARTED,
    C_N
};
static const char *const CULPRIT_COLS[C_N] = {"culprit_status",      "culprit_reason",
                                              "culprit_revision",    "culprit_pushlog_id",
                                              "culprit_author",      "culprit_url",
                                              "culprit_range_first", "culprit_range_last",
                                              "culprit_jobs_spent",  "probes",
                                              "window_pushes",       "next_revision",
                                              "next_times",          "culprit_started_at"};

static void decisions_usage(FILE *out)
{
    fprintf(out, "usage: retrig decisions [--since DURATION] [--project P] [--verdict V]\n"
                 "                        [--format table|json]\n"
                 "       retrig decisions --estimate-prior [--since 30d] [--project P]\n"
                 "                        [--format table|json]\n"
                 "Lists the decisions of retrig-decide, newest first (at most 1000): DURATION is\n"
                 "a number and a unit, s, m, h or d (default 24h); V is regression, intermittent,\n"
                 "infra or undecided.\n"
                 "--estimate-prior estimates decide_prior_regression from the decisions of the\n"
                 "window (default 30d): the mean p_regression of the regressions and\n"
                 "intermittents decided (stored under either policy), one EM step from the\n"
                 "prior in force; run it again after a while to let it settle.\n"
                 "Exit: 0 listed, 1 database error, 2 usage.\n");
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

/* The mean posterior over past failures is the EM update of the prior share of regressions:
 * with a calibrated model it converges to the share the data imply, where the share of
 * regression verdicts would carry the policy's errors (the seed rule's false regressions).
 * The estimate is kept within [0.01, 0.5], as the model's prior is. */
static int estimate_prior(rt_pg *pg, const char *since, const char *project, bool json,
                          double current)
{
    const char *params[] = {since, project};
    PGresult *res = NULL;
    enum { P_DECIDED, P_REGRESSIONS, P_WITH, P_MEAN, P_N };
    static const char *const COLS[P_N] = {"decided", "regressions", "with_posterior",
                                          "mean_posterior"};
    int c[P_N];
    char errstr[RT_ERRSTR_SIZE] = "";
    if (rt_pg_exec(pg, SQL_PRIOR, 2, params, &res) != RT_OK) {
        rt__cli_db_error(pg, "cannot read the decisions");
        return 1;
    }
    if (rt_pg_columns(res, COLS, P_N, c, errstr) != RT_OK) {
        rt_log_error("cannot read the decisions", "error", errstr);
        PQclear(res);
        return 1;
    }
    long long decided = rt_pg_int(res, 0, c[P_DECIDED]);
    long long regressions = rt_pg_int(res, 0, c[P_REGRESSIONS]);
    long long with = rt_pg_int(res, 0, c[P_WITH]);
    double mean = rt_pg_float(res, 0, c[P_MEAN]);
    PQclear(res);
    double estimate = mean < 0.01 ? 0.01 : mean > 0.5 ? 0.5 : mean;
    if (json) {
        json_t *o =
            json_pack("{s:s, s:s?, s:I, s:I, s:I, s:f}", "since", since, "project", project,
                      "decided", (json_int_t)decided, "regressions", (json_int_t)regressions,
                      "with_posterior", (json_int_t)with, "current", current);
        if (o && with > 0) {
            json_object_set_new(o, "mean_posterior", json_real(mean));
            json_object_set_new(o, "estimate", json_real(estimate));
        }
        char *text = o ? json_dumps(o, JSON_INDENT(2) | JSON_ENSURE_ASCII) : NULL;
        json_decref(o);
        if (!text) return 1;
        printf("%s\n", text);
        free(text);
        return 0;
    }
    printf("decisions in the last %s%s%s: %lld regressions and intermittents, %lld regressions "
           "(%.1f%%)\n",
           since, project ? " of " : "", project ? rt_cli_text(project) : "", decided, regressions,
           decided ? 100.0 * (double)regressions / (double)decided : 0.0);
    if (with == 0) {
        printf("none has a p_regression yet (decided before migration 0024): no estimate; "
               "decide_prior_regression stays %.3f\n",
               current);
        return 0;
    }
    printf("mean p_regression over %lld of them: %.3f\n", with, mean);
    printf("decide_prior_regression = %.3f   (now %.3f; the mean posterior, one EM step: run "
           "this again after a while)\n",
           estimate, current);
    return 0;
}

/* "24h" -> "24 hours"; false when malformed. */
static bool parse_since(const char *text, char *out, size_t size)
{
    char *end = NULL;
    long n = strtol(text, &end, 10);
    if (end == text || n < 0 || n > 100000 || !end[0] || end[1]) return false;
    const char *unit = *end == 's'   ? "seconds"
                       : *end == 'm' ? "minutes"
                       : *end == 'h' ? "hours"
                       : *end == 'd' ? "days"
                                     : NULL;
    if (!unit) return false;
    snprintf(out, size, "%ld %s", n, unit);
    return true;
}

static int db_connect(rt_config *cfg, rt_pg **pg) { return rt__cli_connect(cfg, "cli", pg); }

/* A value of a result, printable (PQgetvalue: "" for SQL NULL). */
static const char *cell(const PGresult *res, int row, int col)
{
    return rt_cli_text(PQgetvalue(res, row, col));
}

/* The verdict policy's columns of a SQL_DECISIONS row (migration 0024) into o, those that
 * are set. */
static void policy_json(json_t *o, const PGresult *res, int i)
{
    static const char *const names[] = {
        "policy", "p_regression", "prior_runs",    "prior_failures", "prior_signature_failures",
        "rounds", "retriggers",   "shadow_policy", "shadow_verdict", "shadow_reason"};
    for (int k = 0; o && k < 10; k++) {
        int col = PQfnumber(res, names[k]); /* by name: the SELECT holds other columns too */
        if (col < 0 || PQgetisnull(res, i, col)) continue;
        const char *v = PQgetvalue(res, i, col);
        json_t *value = k == 1             ? json_real(atof(v))
                        : k >= 2 && k <= 6 ? json_integer(atoll(v))
                                           : json_string(v);
        json_object_set_new(o, names[k], value);
    }
}

/* Long because it is one case per option with its check, then the rows of SQL_DECISIONS printed
 * two ways: as JSON objects (with the culprit search and the verdict policy when recorded), or as
 * a table of thirteen columns. */
int rt_cli_decisions(int argc, char **argv, rt_config *cfg)
{
    static const struct option options[] = {
        {"since", required_argument, NULL, 's'},
        {"project", required_argument, NULL, 'p'},
        {"verdict", required_argument, NULL, 'v'},
        {"format", required_argument, NULL, 'f'},
        {"estimate-prior", no_argument, NULL, 'e'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    char since[64] = "";
    const char *project = NULL, *verdict = NULL;
    bool json = false, prior = false;
    int c;
    while ((c = getopt_long(argc, argv, "s:p:v:f:eh", options, NULL)) != -1) {
        switch (c) {
        case 'e': prior = true; break;
        case 's':
            if (!parse_since(optarg, since, sizeof since)) {
                rt_log_error("--since wants a number and s, m, h or d", "value", optarg);
                return 2;
            }
            break;
        case 'p': project = optarg; break;
        case 'v':
            if (strcmp(optarg, "regression") && strcmp(optarg, "intermittent") &&
                strcmp(optarg, "infra") && strcmp(optarg, "undecided")) {
                rt_log_error("--verdict is regression, intermittent, infra or undecided", "value",
                             optarg);
                return 2;
            }
            verdict = optarg;
            break;
        case 'f':
            if (rt__cli_format(optarg, &json)) return 2;
            break;
        case 'h': decisions_usage(stdout); return 0;
        default: decisions_usage(stderr); return 2;
        }
    }
    if (optind < argc || (prior && verdict)) {
        decisions_usage(stderr);
        return 2;
    }
    if (!since[0]) snprintf(since, sizeof since, "%s", prior ? "30 days" : "24 hours");
    rt_pg *pg = NULL;
    if (db_connect(cfg, &pg)) return 1;
    if (prior) {
        int rc = estimate_prior(pg, since, project, json, cfg->decide_prior_regression);
        rt_pg_free(pg);
        return rc;
    }
    const char *params[] = {since, project, verdict};
    PGresult *res = NULL;
    int status = 1;
    int d[D_N];
    char errstr[RT_ERRSTR_SIZE] = "";
    if (rt_pg_exec(pg, SQL_DECISIONS, 3, params, &res) != RT_OK) {
        rt__cli_db_error(pg, "cannot read the decisions");
        goto out;
    }
    if (rt_pg_columns(res, DECISIONS_COLS, D_N, d, errstr) != RT_OK) {
        rt_log_error("cannot read the decisions", "error", errstr);
        goto out;
    }
    int n = PQntuples(res);
    if (json) {
        json_t *list = json_array();
        for (int i = 0; i < n; i++) {
            json_t *o = json_pack(
                "{s:I, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:i}", "set_id",
                (json_int_t)atoll(PQgetvalue(res, i, d[D_SET])), "decided_at",
                PQgetvalue(res, i, d[D_DECIDED_AT]), "verdict", PQgetvalue(res, i, d[D_VERDICT]),
                "reason", PQgetvalue(res, i, d[D_REASON]), "project",
                PQgetvalue(res, i, d[D_PROJECT]), "revision", PQgetvalue(res, i, d[D_REVISION]),
                "label", PQgetvalue(res, i, d[D_LABEL]), "platform",
                PQgetvalue(res, i, d[D_PLATFORM]), "original_task_id",
                PQgetvalue(res, i, d[D_TASK]), "reproduced_max",
                atoi(PQgetvalue(res, i, d[D_REPRODUCED])), "compared",
                atoi(PQgetvalue(res, i, d[D_COMPARED])));
            if (o && !PQgetisnull(res, i, d[D_CLASSIFICATION]))
                json_object_set_new(o, "classification_id",
                                    json_integer(atoi(PQgetvalue(res, i, d[D_CLASSIFICATION]))));
            if (o && !PQgetisnull(res, i, d[D_CULPRIT_STATUS])) {
#define OR_NULL(col) (PQgetisnull(res, i, d[col]) ? NULL : PQgetvalue(res, i, d[col]))
                json_object_set_new(
                    o, "culprit",
                    json_pack("{s:s, s:s, s:s?, s:s?, s:s?, s:s?}", "status",
                              PQgetvalue(res, i, d[D_CULPRIT_STATUS]), "reason",
                              PQgetvalue(res, i, d[D_CULPRIT_REASON]), "revision",
                              OR_NULL(D_CULPRIT_REVISION), "range_first", OR_NULL(D_RANGE_FIRST),
                              "range_last", OR_NULL(D_RANGE_LAST), "url", OR_NULL(D_CULPRIT_URL)));
#undef OR_NULL
            }
            policy_json(o, res, i);
            json_array_append_new(list, o);
        }
        char *text = json_dumps(list, JSON_INDENT(2) | JSON_ENSURE_ASCII);
        json_decref(list);
        if (text) printf("%s\n", text);
        free(text);
    } else {
        printf("%-20s  %-12s  %-22s  %-10s  %-12s  %-5s  %-8s  %-5s  %-5s  %-12s  %-22s  %-21s  "
               "%s\n",
               "DECIDED_AT", "VERDICT", "REASON", "PROJECT", "REVISION", "REPRO", "POLICY", "P_REG",
               "RD/RT", "SHADOW", "ORIGINAL_TASK", "CULPRIT", "LABEL");
        for (int i = 0; i < n; i++) {
            /* The culprit search: the culprit's revision once found, else its status. */
            char culprit[64] = "-";
            if (!PQgetisnull(res, i, d[D_CULPRIT_REVISION]))
                snprintf(culprit, sizeof culprit, "%.12s",
                         PQgetvalue(res, i, d[D_CULPRIT_REVISION]));
            else if (!PQgetisnull(res, i, d[D_CULPRIT_STATUS]))
                snprintf(culprit, sizeof culprit, "%.21s", PQgetvalue(res, i, d[D_CULPRIT_STATUS]));
            /* The verdict policy (migration 0024): p_regression, rounds/retriggers asked for. */
            char p[16] = "-", spent[24] = "-";
            if (!PQgetisnull(res, i, d[D_P_REGRESSION]))
                snprintf(p, sizeof p, "%.3f", atof(PQgetvalue(res, i, d[D_P_REGRESSION])));
            if (!PQgetisnull(res, i, d[D_ROUNDS]) && !PQgetisnull(res, i, d[D_RETRIGGERS]))
                snprintf(spent, sizeof spent, "%s/%s", PQgetvalue(res, i, d[D_ROUNDS]),
                         PQgetvalue(res, i, d[D_RETRIGGERS]));
            printf(
                "%-20s  %-12s  %-22s  %-10s  %-12.12s  %2s/%-2s  %-8s  %-5s  %-5s  %-12s  %-22s  "
                "%-21s  %s\n",
                cell(res, i, d[D_DECIDED_AT]), cell(res, i, d[D_VERDICT]),
                cell(res, i, d[D_REASON]), cell(res, i, d[D_PROJECT]), cell(res, i, d[D_REVISION]),
                cell(res, i, d[D_REPRODUCED]), cell(res, i, d[D_COMPARED]),
                PQgetisnull(res, i, d[D_POLICY]) ? "-" : cell(res, i, d[D_POLICY]), p, spent,
                PQgetisnull(res, i, d[D_SHADOW_VERDICT]) ? "-" : cell(res, i, d[D_SHADOW_VERDICT]),
                cell(res, i, d[D_TASK]), rt_cli_text(culprit), cell(res, i, d[D_LABEL]));
        }
    }
    status = 0;
out:
    PQclear(res);
    rt_pg_free(pg);
    return status;
}

static long long int_of(json_t *o, const char *key)
{
    return (long long)json_integer_value(json_object_get(o, key));
}

/* The line's cross-branch history at decision time (lines[].history). */
static void print_history(json_t *history)
{
    if (!json_is_object(history)) return;
    printf("      history (%lld days, other pushes): failed on %lld push(es) (%lld on main, %lld "
           "with this signature), %lld branch(es) under review, %lld PR(s); %lld failure(s) in "
           "%lld run(s)%s\n",
           int_of(history, "window_days"), int_of(history, "pushes"),
           int_of(history, "main_pushes"), int_of(history, "same_signature_pushes"),
           int_of(history, "branches"), int_of(history, "prs"), int_of(history, "failures"),
           int_of(history, "runs"),
           json_is_true(json_object_get(history, "flaky")) ? "; FLAKY" : "");
    static const char *const firsts[][2] = {
        {"first_failure", "first failed"},
        {"first_failure_same_signature", "first failed with this signature"}};
    for (size_t i = 0; i < 2; i++) {
        json_t *first = json_object_get(history, firsts[i][0]);
        if (!json_is_object(first)) continue;
        const char *sig = json_string_value(json_object_get(first, "signature"));
        printf("      %s %s on %s push %s (%s)%s%s\n", firsts[i][1],
               rt_cli_text(json_string_value(json_object_get(first, "at"))),
               rt_cli_text(json_string_value(json_object_get(first, "project"))),
               rt_cli_text(json_string_value(json_object_get(first, "push"))),
               json_is_string(json_object_get(first, "revision"))
                   ? rt_cli_text(json_string_value(json_object_get(first, "revision")))
                   : "-",
               sig ? ": " : "", sig ? rt_cli_text(sig) : "");
    }
}

static void print_lines(json_t *evidence)
{
    size_t i;
    json_t *line;
    json_t *lines = json_object_get(evidence, "lines");
    if (!json_array_size(lines)) printf("  (no failure line of the original to compare)\n");
    json_array_foreach(lines, i, line)
    {
        printf("  [%lld reproduced] %s\n",
               (long long)json_integer_value(json_object_get(line, "reproduced")),
               rt_cli_text(json_string_value(json_object_get(line, "line"))));
        size_t k;
        json_t *by;
        json_array_foreach(json_object_get(line, "reproduced_by"), k, by)
            printf("      by %s\n", rt_cli_text(json_string_value(by)));
        print_history(json_object_get(line, "history"));
        json_t *model = json_object_get(line, "model");
        if (json_is_number(json_object_get(line, "p_regression")) && json_is_object(model)) {
            long long sig = int_of(model, "signature_failures");
            char sig_text[64] = "";
            if (sig >= 0) snprintf(sig_text, sizeof sig_text, ", %lld with this signature", sig);
            printf(
                "      p_regression %.3f (prior: %lld failure(s) in %lld run(s) of its test%s)\n",
                json_number_value(json_object_get(line, "p_regression")), int_of(model, "failures"),
                int_of(model, "runs"), sig_text);
        }
    }
    json_array_foreach(json_object_get(evidence, "tracked"), i, line)
        printf("  [dropped: single tracking bug %lld] %s\n",
               (long long)json_integer_value(json_object_get(line, "bug")),
               rt_cli_text(json_string_value(json_object_get(line, "line"))));
}

/* The culprit search of a regression (SQL_CULPRIT's row, its columns c). */
static void print_culprit(PGresult *res, const int *c)
{
#define V(col) cell(res, 0, c[col])
    printf("\nthe culprit search (started %s)\n  %s (%s)\n", V(C_STARTED), V(C_STATUS),
           V(C_REASON));
    if (strcmp(PQgetvalue(res, 0, c[C_REVISION]), "-"))
        printf("  culprit %s, pushlog %s, by %s\n  %s\n", V(C_REVISION), V(C_PUSHLOG), V(C_AUTHOR),
               V(C_URL));
    else if (strcmp(PQgetvalue(res, 0, c[C_RANGE_FIRST]), "-"))
        printf("  the culprit is within %s .. %s\n", V(C_RANGE_FIRST), V(C_RANGE_LAST));
    printf("  window: %s push(es); %s probe(s), %s job(s) spent\n", V(C_PUSHES), V(C_PROBES),
           V(C_JOBS));
    /* The window keeps its last round's probe after the search ends: only a search under way
     * has a next probe. */
    if (!strcmp(PQgetvalue(res, 0, c[C_STATUS]), "searching") &&
        PQgetvalue(res, 0, c[C_NEXT_REVISION])[0])
        printf("  next probe: %s, %s run(s)\n", V(C_NEXT_REVISION), V(C_NEXT_TIMES));
#undef V
}

/* The verdict policy's record of the decision (migration 0024): the policy in force,
 * p_regression and the history it used, the rounds and retriggers, the other policy's
 * verdict on the same evidence. Nothing for decisions stored before it. */
static void print_policy(rt_pg *pg, const char *const *sparams)
{
    PGresult *res = NULL;
    int c[PO_N];
    char errstr[RT_ERRSTR_SIZE] = "";
    if (rt_pg_exec(pg, SQL_POLICY, 1, sparams, &res) != RT_OK || PQntuples(res) != 1) {
        PQclear(res);
        return;
    }
    int rc = rt_pg_columns(res, POLICY_COLS, PO_N, c, errstr);
    if (rc != RT_OK) rt_log_error("cannot read the verdict policy", "error", errstr);
    if (rc != RT_OK || !strcmp(PQgetvalue(res, 0, c[PO_POLICY]), "-")) {
        PQclear(res);
        return;
    }
#define V(col) cell(res, 0, c[col])
    printf("  policy %s: p_regression %s (prior: %s failure(s) in %s run(s) of the test, %s with "
           "this signature); %s round(s), %s retrigger(s) asked for\n",
           V(PO_POLICY), V(PO_P_REGRESSION), V(PO_FAILURES), V(PO_RUNS), V(PO_SIGNATURE_FAILURES),
           V(PO_ROUNDS), V(PO_RETRIGGERS));
    printf("  %s would say: %s (%s)\n", V(PO_SHADOW_POLICY), V(PO_SHADOW_VERDICT),
           V(PO_SHADOW_REASON));
#undef V
    PQclear(res);
}

/* Long because it tells the story one section at a time, each its own query and printf calls:
 * the set, its later rounds, the retrigger action, the runs compared, the verdict with its
 * evidence and the culprit search; every query shares the exits dberror, nocolumn and out. */
int rt_cli_explain(int argc, char **argv, rt_config *cfg)
{
    if (argc != 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fprintf(argc == 2 ? stdout : stderr,
                "usage: retrig explain TASK_ID\n"
                "The whole story of the retrigger set of a task (its original failed task or\n"
                "any of its retriggers): the failure and retrig-classify's verdict, the\n"
                "retrigger action, each retrigger and its state, the failure lines compared,\n"
                "the verdict and its times. Exit: 0 told, 1 no such set or database error,\n"
                "2 usage.\n");
        return argc == 2 ? 0 : 2;
    }
    const char *task_id = argv[1];
    if (!rt_valid_task_id(task_id)) {
        rt_log_error("not a Taskcluster task id", "task_id", task_id);
        return 2;
    }
    rt_pg *pg = NULL;
    if (db_connect(cfg, &pg)) return 1;
    int status = 1;
    PGresult *res = NULL;
    /* The column numbers of each result, looked up by name. */
    int f[F_N], s[S_N], r[R_N], a[A_N], m[M_N], v[V_N], c[C_N];
    char errstr[RT_ERRSTR_SIZE] = "";
    const char *params[] = {task_id};
    if (rt_pg_exec(pg, SQL_FIND_SET, 1, params, &res) != RT_OK) goto dberror;
    if (rt_pg_columns(res, FIND_SET_COLS, F_N, f, errstr) != RT_OK) goto nocolumn;
    if (PQntuples(res) != 1) {
        fprintf(stderr, "no retrigger set knows task %s\n", task_id);
        goto out;
    }
    char id[32];
    snprintf(id, sizeof id, "%s", PQgetvalue(res, 0, f[F_ID]));
    PQclear(res);
    res = NULL;
    const char *sparams[] = {id};

    if (rt_pg_exec(pg, SQL_SET, 1, sparams, &res) != RT_OK) goto dberror;
    if (rt_pg_columns(res, SET_COLS, S_N, s, errstr) != RT_OK) goto nocolumn;
    printf("retrigger set %s: %s %s\n  label    %s\n  platform %s\n  status   %s (created %s)\n",
           id, cell(res, 0, s[S_PROJECT]), cell(res, 0, s[S_REVISION]), cell(res, 0, s[S_LABEL]),
           cell(res, 0, s[S_PLATFORM]), cell(res, 0, s[S_STATUS]), cell(res, 0, s[S_CREATED]));
    printf("\nthe failure\n  original %s run %s: %s on %s, resolved %s, seen %s\n",
           cell(res, 0, s[S_TASK]), cell(res, 0, s[S_RUN]), cell(res, 0, s[S_STATE]),
           cell(res, 0, s[S_QUEUE]), cell(res, 0, s[S_RESOLVED]), cell(res, 0, s[S_SEEN]));
    printf("  retrig-classify: %s (%s)\n  failing groups: %s\n", cell(res, 0, s[S_VERDICT]),
           cell(res, 0, s[S_REASON]), cell(res, 0, s[S_GROUPS]));
    printf("  asked for %s retriggers; request published %s\n", cell(res, 0, s[S_RETRIGGERS]),
           cell(res, 0, s[S_PUBLISHED]));
    PQclear(res);
    res = NULL;

    if (rt_pg_exec(pg, SQL_ROUNDS, 1, sparams, &res) != RT_OK) goto dberror;
    if (rt_pg_columns(res, ROUNDS_COLS, R_N, r, errstr) != RT_OK) goto nocolumn;
    /* Later rounds (decide_policy = adaptive): asked for by retrig-decide. */
    for (int i = 0; i < PQntuples(res); i++) {
        if (PQgetvalue(res, i, r[R_REFUSED])[0] == 't')
            printf("  round %s: %s wanted, refused by the budget (p_regression %s, %s)\n",
                   cell(res, i, r[R_ROUND]), cell(res, i, r[R_WANTED]),
                   cell(res, i, r[R_P_REGRESSION]), cell(res, i, r[R_REQUESTED]));
        else
            printf("  round %s: asked for %s more retriggers of %s wanted (p_regression %s, %s); "
                   "request published %s\n",
                   cell(res, i, r[R_ROUND]), cell(res, i, r[R_RETRIGGERS]),
                   cell(res, i, r[R_WANTED]), cell(res, i, r[R_P_REGRESSION]),
                   cell(res, i, r[R_REQUESTED]), cell(res, i, r[R_PUBLISHED]));
    }
    PQclear(res);
    res = NULL;

    if (rt_pg_exec(pg, SQL_ACTION, 1, sparams, &res) != RT_OK) goto dberror;
    if (rt_pg_columns(res, ACTION_COLS, A_N, a, errstr) != RT_OK) goto nocolumn;
    printf("\nthe retrigger action\n");
    if (PQntuples(res) == 0) printf("  none recorded yet\n");
    for (int i = 0; i < PQntuples(res); i++)
        printf("  %s%s%s%s: %s%s, action task %s, %s attempt(s), intent %s, finished %s%s%s\n",
               PQntuples(res) > 1 ? "round " : "",
               PQntuples(res) > 1 ? cell(res, i, a[A_ROUND]) : "", PQntuples(res) > 1 ? " " : "",
               cell(res, i, a[A_NAME]), cell(res, i, a[A_OUTCOME]),
               cell(res, i, a[A_DRY_RUN])[0] == 't' ? " (dry run)" : "", cell(res, i, a[A_TASK]),
               cell(res, i, a[A_ATTEMPTS]), cell(res, i, a[A_INTENT]), cell(res, i, a[A_FINISHED]),
               cell(res, i, a[A_ERROR])[0] ? "; error: " : "", cell(res, i, a[A_ERROR]));
    PQclear(res);
    res = NULL;

    if (rt_pg_exec(pg, SQL_MEMBERS, 1, sparams, &res) != RT_OK) goto dberror;
    if (rt_pg_columns(res, MEMBERS_COLS, M_N, m, errstr) != RT_OK) goto nocolumn;
    /* requested: a retrigger retrig asked for; found: a run of the label already on the
     * push when the set was made. */
    printf("\nthe runs compared (%d seen)\n", PQntuples(res));
    for (int i = 0; i < PQntuples(res); i++) {
        const char *role = PQgetvalue(res, i, m[M_ROLE]);
        printf("  %-9s %s run %s: %-9s -> %-13s resolved %s  (classify: %s)%s\n",
               !strcmp(role, "retrigger") ? "requested" : rt_cli_text(role),
               cell(res, i, m[M_TASK]), cell(res, i, m[M_RUN]), cell(res, i, m[M_STATE]),
               cell(res, i, m[M_RESULT]), cell(res, i, m[M_RESOLVED]),
               cell(res, i, m[M_CLASSIFICATION]),
               !strcmp(PQgetvalue(res, i, m[M_TASK]), task_id) ? "  <- asked about" : "");
    }
    PQclear(res);
    res = NULL;

    if (rt_pg_exec(pg, SQL_DECISION, 1, sparams, &res) != RT_OK) goto dberror;
    if (rt_pg_columns(res, DECISION_COLS, V_N, v, errstr) != RT_OK) goto nocolumn;
    printf("\nthe verdict\n");
    if (PQntuples(res) == 0) {
        printf("  not decided yet\n");
    } else {
        json_t *evidence = json_loads(PQgetvalue(res, 0, v[V_EVIDENCE]), 0, NULL);
        json_t *counts = json_object_get(evidence, "counts");
        printf("  %s (%s), threshold %lld; classification %s when decided\n",
               cell(res, 0, v[V_VERDICT]), cell(res, 0, v[V_REASON]),
               (long long)json_integer_value(json_object_get(evidence, "threshold")),
               cell(res, 0, v[V_CLASSIFICATION]));
        printf("  retriggers: %lld compared (%lld passed, %lld failed), %lld exception, %lld "
               "without "
               "data, %lld pending\n",
               (long long)json_integer_value(json_object_get(counts, "compared")),
               (long long)json_integer_value(json_object_get(counts, "passed")),
               (long long)json_integer_value(json_object_get(counts, "failed")),
               (long long)json_integer_value(json_object_get(counts, "exceptions")),
               (long long)json_integer_value(json_object_get(counts, "no_data")),
               (long long)json_integer_value(json_object_get(counts, "pending")));
        printf("  lines of the original compared:\n");
        print_lines(evidence);
        print_policy(pg, sparams);
        json_t *cancelled = json_object_get(evidence, "cancelled");
        if (cancelled)
            printf("  cancelled %lld pending retrigger(s), ~%lld s of task time saved\n",
                   (long long)json_integer_value(json_object_get(cancelled, "count")),
                   (long long)json_integer_value(
                       json_object_get(cancelled, "estimated_seconds_saved")));
        printf("\nthe times\n  failure seen           %s\n  retriggers requested   %s\n"
               "  decided                %s  (%s s after the failure was seen)\n",
               cell(res, 0, v[V_SEEN]), cell(res, 0, v[V_REQUESTED]), cell(res, 0, v[V_DECIDED]),
               cell(res, 0, v[V_SECONDS]));
        json_decref(evidence);
        PQclear(res);
        res = NULL;
        if (rt_pg_exec(pg, SQL_CULPRIT, 1, sparams, &res) != RT_OK) goto dberror;
        if (rt_pg_columns(res, CULPRIT_COLS, C_N, c, errstr) != RT_OK) goto nocolumn;
        if (PQntuples(res) == 1) print_culprit(res, c);
    }
    status = 0;
    goto out;
dberror:
    rt__cli_db_error(pg, "cannot read the set");
    goto out;
nocolumn: /* a name the result lacks: this file's SQL and its columns disagree */
    rt_log_error("cannot read the set", "error", errstr);
out:
    PQclear(res);
    rt_pg_free(pg);
    return status;
}
