/* SPDX-License-Identifier: MPL-2.0 */
/* perf.h - the store of retrig-perf's alerts, summaries and backfills (perf_summaries,
 * perf_alerts, migrations 0005 and 0007) and their ledger rows: the SQL that retrig-perf,
 * its follow-up and `retrig perf-report` ran themselves until issue 33, behind typed calls.
 * The statements live in perf.c; no PGresult leaves it.
 *
 * A summary is worked on under its session advisory lock (class RT_PERF_LOCK_CLASS; key the
 * summary id modulo 2^31 - 1): a second runner skips it, Postgres releases it if the process
 * dies. An alert's row is written once (its intent, or its outcome when no call follows),
 * then its outcome, then its follow-up; each update is conditional on the step before still
 * being open, so two runners agree. Thread-safety: per rt_pg handle. Layer: common/store. */
#ifndef RETRIG_COMMON_STORE_PERF_H
#define RETRIG_COMMON_STORE_PERF_H

#include "common/not_core.h"

#include <stdbool.h>
#include <stddef.h>

#include "common/core/errors.h"
#include "common/core/perf_pick.h"
#include "common/io/pg.h"

/* First key of the per-summary pg_try_advisory_lock; perf.c spells the number out in its
 * statements: change both or neither. */
#define RT_PERF_LOCK_CLASS 7273

/* The advisory lock of a summary: *locked false when another session holds it. */
RT_MUSTCHECK int rt_perf_store_lock(rt_pg *pg, long long summary_id, bool *locked);
RT_MUSTCHECK int rt_perf_store_unlock(rt_pg *pg, long long summary_id);
/* The key the lock takes for a summary id (pure; for the tests and the logs). */
int rt_perf_store_lock_key(long long summary_id);

/* What earlier runs did for a set of summaries, as rt_perf_pick_alerts reads it: the alerts
 * with a row (whatever their outcome), per summary whether it is handled and how many
 * distinct jobs were taken (backfilled, in flight or found backfilled; an alert covered by a
 * sibling's backfill is the same job), and those jobs. Owns the job keys. */
typedef struct rt_perf_store_history {
    long long *alerts;
    size_t nalerts;
    rt_perf_taken *taken;
    size_t ntaken;
    rt_perf_job *jobs;
    size_t njobs;
    char **keys; /* njobs job keys, the jobs' job_key point into them */
} rt_perf_store_history;
/* Three statements; on failure *out is empty. RT_EDB (rt_pg_errstr), RT_ENOMEM. */
RT_MUSTCHECK int rt_perf_store_history_load(rt_pg *pg, const long long *summary_ids, size_t n,
                                            rt_perf_store_history *out);
void rt_perf_store_history_free(rt_perf_store_history *h);

/* A summary's row: inserted, or when close is true its handled_at set (kept if set). */
RT_MUSTCHECK int rt_perf_store_upsert_summary(rt_pg *pg, const rt_perf_summary *s, bool close);

/* Whether the summary is done meanwhile: *found false when it has no row; handled, and the
 * distinct jobs taken for it. */
typedef struct rt_perf_summary_state {
    bool found, handled;
    int taken;
} rt_perf_summary_state;
RT_MUSTCHECK int rt_perf_store_summary_state(rt_pg *pg, long long summary_id,
                                             rt_perf_summary_state *out);

/* An alert's row as written: its intent (outcome NULL, a hook call follows) or, with its
 * outcome, one that needs no call. NULL texts and 0 ids are SQL NULL. */
typedef struct rt_perf_alert_record {
    long long alert_id, summary_id, signature_id;
    const char *platform, *family; /* family: the configured family name */
    bool is_regression;
    double amount_pct;
    long long job_id; /* 0: none */
    const char *task_id, *decision_task_id;
    const char *hook_group, *hook_id, *payload; /* payload: JSON text */
    int jobs_scheduled;                         /* the budget spent */
    const char *budget_day;                     /* "YYYY-MM-DD", NULL when nothing spent */
    bool dry_run;
    const char *outcome, *action_task_id, *error;
    const char *job_key;
    long long covered_by; /* covered: the alert whose backfill covers this one; 0: none */
} rt_perf_alert_record;
/* Inserts the row in the caller's transaction (finished_at now when outcome is set). */
RT_MUSTCHECK int rt_perf_store_record_intent(rt_pg *pg, const rt_perf_alert_record *r);
/* The same row for a covered alert (finished now); a row already there is left as it is. */
RT_MUSTCHECK int rt_perf_store_record_covered(rt_pg *pg, const rt_perf_alert_record *r);
/* The ledger row of an alert's backfill, idempotency key "perf-alert:<alert_id>", in the
 * caller's transaction after the backstop (common/store/ledger.h). */
RT_MUSTCHECK int rt_perf_store_ledger(rt_pg *pg, const char *budget, const char *day, int amount,
                                      long long alert_id, const char *reason);

/* An alert's row as resume reads it; *found false when the alert has none. Texts are
 * malloc'd, "" when NULL. */
typedef struct rt_perf_alert_row {
    bool finished, dry_run;
    long long attempts;
    long long age_ms; /* since the intent (or the last attempt) */
    char *task_id, *decision_task_id;
    char *hook_group, *hook_id, *payload, *repository;
} rt_perf_alert_row;
RT_MUSTCHECK int rt_perf_store_alert(rt_pg *pg, long long alert_id, rt_perf_alert_row *row,
                                     bool *found);
void rt_perf_alert_row_free(rt_perf_alert_row *row);

/* The alerts with an intent and no outcome (not dry-run), oldest intent first. */
typedef struct rt_perf_open_alert {
    long long alert_id, summary_id;
} rt_perf_open_alert;
RT_MUSTCHECK int rt_perf_store_open_alerts(rt_pg *pg, rt_perf_open_alert **out, size_t *n);

/* A hook call about to be made: attempts + 1, intent_at now. */
RT_MUSTCHECK int rt_perf_store_attempt(rt_pg *pg, long long alert_id);
/* The outcome of an alert still without one (action_task_id, error: NULL for none). */
RT_MUSTCHECK int rt_perf_store_outcome(rt_pg *pg, long long alert_id, const char *outcome,
                                       const char *action_task_id, const char *error);
/* The error of a failed call on an alert still without an outcome. */
RT_MUSTCHECK int rt_perf_store_error(rt_pg *pg, long long alert_id, const char *error);

/* ---- the follow-up (workers/perf/followup.h) ---- */

/* A backfill whose follow-up is not settled (triggered or found-existing, not dry-run).
 * Texts malloc'd, "" when NULL. */
typedef struct rt_perf_followed {
    long long alert_id, signature_id;
    char *action_task_id;
    char *task_id; /* the task backfilled, "" when unknown */
    char *repository;
    bool expired; /* window_hours have passed since its outcome (or intent) */
} rt_perf_followed;
/* At most limit of them, oldest first. */
RT_MUSTCHECK int rt_perf_store_to_follow(rt_pg *pg, int window_hours, int limit,
                                         rt_perf_followed **out, size_t *n);
void rt_perf_followed_free(rt_perf_followed *list, size_t n);
/* The follow-up's verdict on an alert still pending (reason NULL unless failed). */
RT_MUSTCHECK int rt_perf_store_followup(rt_pg *pg, long long alert_id, const char *state,
                                        const char *reason, const char *detail, int jobs,
                                        int completed);

/* ---- the day's report (`retrig perf-report`) ---- */

/* One family's figures on a day. An alert belongs to the day whose budget paid for it, else
 * to the UTC day of its intent. */
typedef struct rt_perf_family_day {
    char *family;
    long long used; /* budget_ledger "perf:<family>" */
    long long backfills, scheduled, executed, done, pending, failed, already, unsent;
} rt_perf_family_day;
/* A backfill that needs manual work (follow-up failed). Texts "" when NULL; malloc'd. */
typedef struct rt_perf_failure {
    long long alert_id, summary_id;
    char *family, *platform, *reason, *detail, *action_task_id, *settled_at;
    long long jobs, completed;
} rt_perf_failure;
typedef struct rt_perf_day {
    rt_perf_family_day *ledger; /* families with ledger rows: family and used only */
    size_t nledger;
    rt_perf_family_day *alerts; /* families with alerts: the counts, used 0 */
    size_t nalerts;
    rt_perf_failure *failures; /* by alert id */
    size_t nfailures;
} rt_perf_day;
/* day: "YYYY-MM-DD". RT_EDB (rt_pg_errstr), RT_ENOMEM. */
RT_MUSTCHECK int rt_perf_store_day(rt_pg *pg, const char *day, rt_perf_day *out);
void rt_perf_day_free(rt_perf_day *d);

/* An alert retrig-perf took (the sheriffs' page). Texts "" when NULL. */
typedef struct rt_perf_recent {
    char *alert_id, *summary_id, *repository, *platform, *family;
    bool is_regression, dry_run;
    double amount_pct;
    char *outcome; /* "in flight" when none yet */
    char *jobs_scheduled, *followup_state, *followup_reason, *intent_at, *error, *revision;
} rt_perf_recent;
/* The alerts whose intent falls in the interval before until (ISO-8601), newest first, at
 * most limit. */
RT_MUSTCHECK int rt_perf_store_recent(rt_pg *pg, const char *until, const char *interval, int limit,
                                      rt_perf_recent **rows, size_t *n);
void rt_perf_recent_free(rt_perf_recent *rows, size_t n);

#endif
