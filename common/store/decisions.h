/* SPDX-License-Identifier: MPL-2.0 */
/* decisions.h - the store of retrig-decide's decisions as sheriffs read them: the verdicts
 * with their rounds, retrigger actions, members and culprit searches (decisions,
 * retrigger_sets, retrigger_set_members, retrigger_actions, retrigger_rounds, runs), for
 * `retrig decisions`, `retrig explain` and the sheriffs' page (`retrig report --decisions`).
 * The SQL those commands ran themselves until issue 33, behind typed calls; the statements
 * live in decisions.c and no PGresult leaves it. Read-only: the sheriff role suffices.
 *
 * Rows come as arrays of typed structs (common/store/rows.h), *n of them, freed by the
 * matching *_free. Times are texts in UTC, "YYYY-MM-DDTHH:MM:SSZ". A text member is "" for
 * SQL NULL unless its comment says NULL; the statements replace some NULLs by "-" for
 * printing, as noted. Errors: RT_EDB (rt_pg_errstr), RT_ECONN, RT_ENOMEM.
 * Thread-safety: per rt_pg handle. Layer: common/store. */
#ifndef RETRIG_COMMON_STORE_DECISIONS_H
#define RETRIG_COMMON_STORE_DECISIONS_H

#include "common/not_core.h"

#include <stdbool.h>
#include <stddef.h>

#include "common/core/errors.h"
#include "common/io/pg.h"

/* ---- `retrig decisions` ---- */

/* A decision as listed. NULL members: not recorded (culprit_* without a culprit search;
 * the verdict policy's, migration 0024, for older decisions). */
typedef struct rt_decision_listed {
    long long set_id;
    char *decided_at, *verdict, *reason, *project, *revision, *label, *platform;
    char *original_task_id;
    char *classification_id; /* NULL when none */
    char *reproduced_max;    /* the most retriggers that reproduced one line */
    char *compared;          /* retriggers compared */
    char *culprit_status;    /* NULL: no culprit search */
    char *culprit_reason;
    char *culprit_revision, *culprit_range_first, *culprit_range_last, *culprit_url; /* or NULL */
    /* The verdict policy's record (NULL when not stored): p_regression a number, prior_* to
     * retriggers integers, the others words. */
    char *policy, *p_regression, *prior_runs, *prior_failures, *prior_signature_failures;
    char *rounds, *retriggers, *shadow_policy, *shadow_verdict, *shadow_reason;
} rt_decision_listed;
/* The decisions of the last `since` (an interval, "24 hours"), of project and verdict (NULL:
 * any), newest first, at most 1000. */
RT_MUSTCHECK int rt_decisions_list(rt_pg *pg, const char *since, const char *project,
                                   const char *verdict, rt_decision_listed **rows, size_t *n);
void rt_decision_listed_free(rt_decision_listed *rows, size_t n);

/* What a prior share of regressions can be learnt from: the regressions and intermittents
 * decided in the window, of project (NULL: any). */
typedef struct rt_decisions_prior {
    long long decided, regressions;
    long long with_posterior; /* those with a p_regression */
    double mean_posterior;    /* their mean p_regression, 0 when none */
} rt_decisions_prior;
RT_MUSTCHECK int rt_decisions_prior_read(rt_pg *pg, const char *since, const char *project,
                                         rt_decisions_prior *out);

/* ---- `retrig explain` ---- */

/* The newest set whose original task or one of whose members is task_id; *found false when
 * none. */
RT_MUSTCHECK int rt_decisions_find_set(rt_pg *pg, const char *task_id, long long *set_id,
                                       bool *found);

/* The set and its original run ("-" or "?" for what the run's row lacks). */
typedef struct rt_explain_set {
    char *project, *revision, *label, *platform, *original_task_id, *original_run_id;
    char *retrigger_count, *status, *created_at, *request_published_at;
    char *state, *verdict, *verdict_reason, *resolved_at, *first_seen_at, *task_queue_id;
    char *failing_groups; /* JSON text */
} rt_explain_set;
/* The rounds after the first (decide_policy = adaptive), in order. */
typedef struct rt_explain_round {
    char *round, *wanted, *retriggers, *p_regression, *requested_at, *published_at;
    bool refused;
} rt_explain_round;
/* The retrigger actions, one a round. */
typedef struct rt_explain_action {
    char *action_name, *outcome, *action_task_id, *attempts, *intent_at, *finished_at;
    char *error, *round;
    bool dry_run;
} rt_explain_action;
/* The runs of the set, as added. classification: classify's verdict/reason or "-". */
typedef struct rt_explain_member {
    char *task_id, *run_id, *state, *result, *resolved_at, *classification, *role;
} rt_explain_member;
/* The decision. evidence: JSON text. */
typedef struct rt_explain_decision {
    char *verdict, *reason, *classification_id, *failure_seen_at, *retriggers_requested_at;
    char *decided_at, *seconds_to_decide, *evidence;
} rt_explain_decision;
/* The verdict policy's record of the decision ("-" where not stored). */
typedef struct rt_explain_policy {
    char *policy, *p_regression, *prior_runs, *prior_failures, *prior_signature_failures;
    char *rounds, *retriggers, *shadow_policy, *shadow_verdict, *shadow_reason;
} rt_explain_policy;
/* The culprit search of a regression ("-" or "" where there is nothing). */
typedef struct rt_explain_culprit {
    char *status, *reason, *revision, *pushlog_id, *author, *url, *range_first, *range_last;
    char *jobs_spent, *probes, *window_pushes, *next_revision, *next_times, *started_at;
} rt_explain_culprit;

/* The set's row: *n 0 or 1. */
RT_MUSTCHECK int rt_explain_set_read(rt_pg *pg, long long set_id, rt_explain_set **rows, size_t *n);
void rt_explain_set_free(rt_explain_set *rows, size_t n);
RT_MUSTCHECK int rt_explain_rounds(rt_pg *pg, long long set_id, rt_explain_round **rows, size_t *n);
void rt_explain_round_free(rt_explain_round *rows, size_t n);
RT_MUSTCHECK int rt_explain_actions(rt_pg *pg, long long set_id, rt_explain_action **rows,
                                    size_t *n);
void rt_explain_action_free(rt_explain_action *rows, size_t n);
RT_MUSTCHECK int rt_explain_members(rt_pg *pg, long long set_id, rt_explain_member **rows,
                                    size_t *n);
void rt_explain_member_free(rt_explain_member *rows, size_t n);
/* *n 0 (not decided yet) or 1. */
RT_MUSTCHECK int rt_explain_decision_read(rt_pg *pg, long long set_id, rt_explain_decision **rows,
                                          size_t *n);
void rt_explain_decision_free(rt_explain_decision *rows, size_t n);
/* *n 0 or 1. */
RT_MUSTCHECK int rt_explain_policy_read(rt_pg *pg, long long set_id, rt_explain_policy **rows,
                                        size_t *n);
void rt_explain_policy_free(rt_explain_policy *rows, size_t n);
/* *n 0 (no culprit search) or 1. */
RT_MUSTCHECK int rt_explain_culprit_read(rt_pg *pg, long long set_id, rt_explain_culprit **rows,
                                         size_t *n);
void rt_explain_culprit_free(rt_explain_culprit *rows, size_t n);

/* ---- the sheriffs' page (`retrig report --decisions`) ---- */

/* The page's window: until (an ISO-8601 time, or "now") and the interval before it, as
 * Postgres reads them, and until's UTC day. */
typedef struct rt_page_window {
    char until[32], since[32], today[11];
} rt_page_window;
RT_MUSTCHECK int rt_page_window_read(rt_pg *pg, const char *until, const char *interval,
                                     rt_page_window *out);

/* A decision of the window; row: every column of the decision row but the evidence, as a
 * JSON object (columns a later migration adds show up there). */
typedef struct rt_page_decision {
    char *set_id, *decided_at, *verdict, *reason, *project, *revision, *label, *platform;
    char *original_task_id, *original_run_id;
    char *classification_id;                         /* "" when none */
    char *failure_seen_at, *retriggers_requested_at; /* "" when not requested */
    char *evidence, *row;                            /* JSON texts */
    long long retrigger_count;
} rt_page_decision;
/* A run classify found an infrastructure failure (texts "" when unknown). */
typedef struct rt_page_infra {
    char *task_id, *run_id, *project, *revision, *label, *platform, *verdict_reason;
    char *classified_at, *resolved_at;
} rt_page_infra;
typedef struct rt_page_member {
    char *set_id, *task_id, *run_id, *role, *state, *result, *resolved_at;
} rt_page_member;
typedef struct rt_page_action {
    char *set_id, *action_name, *outcome, *action_task_id, *error;
    bool dry_run;
} rt_page_action;

/* The decisions (newest first) and infra failures (latest first) of the window
 * (since .. until, both ISO-8601 texts, interval an interval), at most limit each. */
RT_MUSTCHECK int rt_page_decisions(rt_pg *pg, const char *until, const char *interval, int limit,
                                   rt_page_decision **rows, size_t *n);
void rt_page_decision_free(rt_page_decision *rows, size_t n);
RT_MUSTCHECK int rt_page_infra_read(rt_pg *pg, const char *until, const char *interval, int limit,
                                    rt_page_infra **rows, size_t *n);
void rt_page_infra_free(rt_page_infra *rows, size_t n);
/* The members and actions of the sets set_ids (a JSON array of ids as texts). */
RT_MUSTCHECK int rt_page_members(rt_pg *pg, const char *set_ids, rt_page_member **rows, size_t *n);
void rt_page_member_free(rt_page_member *rows, size_t n);
RT_MUSTCHECK int rt_page_actions(rt_pg *pg, const char *set_ids, rt_page_action **rows, size_t *n);
void rt_page_action_free(rt_page_action *rows, size_t n);

#endif
