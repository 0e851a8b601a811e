/* SPDX-License-Identifier: MPL-2.0 */
/* main.c - retrig-decide: regression or intermittent for each retrigger set, stored for
 * sheriffs and published for bots.
 *
 * A decide request (from retrig-classify when a member of a set resolves, from our own
 * delay queues, or from the deadline sweeper) makes the worker gather the evidence: for
 * the original run and each failed retrigger, Treeherder's job, its logs' parse status and
 * its bug_suggestions, normalised to TEST-UNEXPECTED lines (common/core/bugsug.h). The pure
 * rule (common/core/verdict.h) decides as soon as the verdict cannot change. When Treeherder is
 * not ready (job not ingested, logs pending, 429/5xx) the request goes to the next delay
 * queue (decide_delays_ms), never a sleeping worker; past the last delay the request is left:
 * the set stays open, its other members' requests look again, and the deadline sweeper ends
 * the wait (common/core/decide_step.h). A verdict is written in one transaction with the set's
 * status and the members' results, and the decision event is published with a confirm before the
 * commit, so a concurrent replica waits on the decision row and never publishes twice.
 *
 * Deadline sweeper: every decide_sweep_interval_s, sets still open after
 * set_deadline_minutes get a decide request with reason "deadline"; such a request decides
 * with what is there (retriggers that never came make it undecided "retriggers-missing"
 * when the verdict needed them). Optionally (decide_cancel_pending) the retriggers still
 * pending when a set is decided early are cancelled.
 *
 * The verdict policy (decide_policy; rounds.h): seed is the rule above; adaptive decides by
 * the posterior of each line from its test's history and asks for further rounds of
 * retriggers while it wants more evidence. Every decision records the policy, p_regression
 * and the other policy's verdict (rounds.c).
 *
 * Culprit searches: a regression on a project of culprit_projects is stored with
 * culprit_status 'searching'; the tick then finds its window and bisects it with probe
 * requests to retrig-retrigger (culprit_flow.c). Single-threaded; run replicas. */
#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/core/bugsug.h"
#include "common/core/decide_step.h"
#include "common/core/events.h"
#include "common/core/evidence.h"
#include "common/core/hawk.h"
#include "common/core/history.h"
#include "common/core/ids.h"
#include "common/core/messages.h"
#include "common/core/retrigger_set.h"
#include "common/core/utf8.h"
#include "common/core/verdict.h"
#include "common/io/amqp.h"
#include "common/io/history_store.h"
#include "common/io/http.h"
#include "common/io/metrics.h"
#include "common/io/pg.h"
#include "common/io/upstream.h"
#include "common/options.h"
#include "common/worker.h"
#include "workers/decide/culprit_flow.h"
#include "workers/decide/rounds.h"

#define MAX_DELAYS       16
#define SWEEP_BATCH      "50"
#define EVENT_MAX_TASKS  100
#define ORIGINAL_NO_DATA "original-logs-unusable"

typedef struct decide {
    rt_config *cfg;
    rt_worker_conns conns;
    rt_amqp *amqp; /* conns.broker */
    rt_pg *pg;
    rt_http *http;      /* Treeherder and Taskcluster GETs, with the client's retries */
    rt_http *http_post; /* cancel calls: one attempt */
    char queue[300];
    char events[300]; /* the decision events exchange, <ns>.decisions */
    int delays[MAX_DELAYS];
    size_t ndelays;
    time_t next_sweep;
    time_t next_culprit_poll;
    decide_rounds rounds; /* the verdict policy (rounds.h) */
} decide;

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
    " ORDER BY created_at LIMIT " SWEEP_BATCH " FOR UPDATE SKIP LOCKED";
enum { SWEEP_ID, SWEEP_PROJECT, SWEEP_N };
static const char *const SWEEP_COLS[SWEEP_N] = {[SWEEP_ID] = "id", [SWEEP_PROJECT] = "project"};
static const char SQL_SWEPT[] =
    "UPDATE retrigger_sets SET deadline_requested_at = now() WHERE id = $1::bigint";

typedef struct set_info {
    long long id;
    char id_text[32];
    char project[65], revision[41];
    char label[1024];
    char platform[600];
    char original_task_id[23];
    int original_run_id;
    int count; /* retriggers asked for, every round */
    char status[16];
    char task_group_id[23];
    bool decided;
    bool past_deadline;
    char failure_seen_at[40];
    char requested_at[40]; /* "" when unknown */
    long original_seconds; /* the original run's duration, 0 when unknown */
} set_info;

/* One run of the set as the verdict sees it, with what we learnt about it. */
typedef struct run_info {
    char task_id[23];
    int run_id;
    char member_state[16]; /* "" for a retrigger that has not arrived */
    bool found;            /* a run that was on the push before the set (role found) */
    rt_run_state state;
    long job_id;
    long push_id; /* the job's Treeherder push, 0 when unknown */
    rt_bugsug lines;
    bool have_lines;
} run_info;

typedef struct evidence {
    set_info set;
    run_info original;
    int classification_id; /* -1 unknown */
    run_info runs[RT_VERDICT_MAX_RUNS];
    size_t nruns;
    size_t missing; /* retriggers asked for that never arrived (part of runs, PENDING) */
    rt_verdict_result result;
    const char *wait; /* why we must look again later, NULL when nothing to wait for */
    char wait_detail[RT_ERRSTR_SIZE];
    bool deadline;
    json_t *history; /* lines[].history: one object a line of the original, NULL: none */
    rt_verdict_run vruns[RT_VERDICT_MAX_RUNS]; /* what the verdict saw (input) */
    bool tracked[RT_VERDICT_MAX_LINES];
    rt_verdict_input input;
    bool have_input; /* the original's lines were compared */
    rounds_view rounds;
} evidence;

static void evidence_free(evidence *e)
{
    rt_bugsug_free(&e->original.lines);
    for (size_t i = 0; i < e->nruns; i++) rt_bugsug_free(&e->runs[i].lines);
    json_decref(e->history);
}

static void utc_now(char out[40])
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    size_t n = strftime(out, 40, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out + n, 40 - n, ".%03dZ", (int)(ts.tv_nsec / 1000000L) % 1000);
}

static int load_set(decide *w, long long set_id, set_info *s, bool *found)
{
    memset(s, 0, sizeof *s);
    s->id = set_id;
    snprintf(s->id_text, sizeof s->id_text, "%lld", set_id);
    char deadline[16];
    snprintf(deadline, sizeof deadline, "%d", w->cfg->set_deadline_minutes);
    const char *params[] = {s->id_text, deadline};
    PGresult *res = NULL;
    int rc = rt_pg_exec(w->pg, SQL_SET, 2, params, &res);
    if (rc != RT_OK) return rc;
    int c[SET_N];
    char errstr[RT_ERRSTR_SIZE] = "";
    if ((rc = rt_pg_columns(res, SET_COLS, SET_N, c, errstr)) != RT_OK) {
        rt_log_error("cannot read the set", "set_id", s->id_text, "error", errstr);
        PQclear(res);
        return rc;
    }
    *found = PQntuples(res) == 1;
    if (*found) {
        snprintf(s->project, sizeof s->project, "%s", PQgetvalue(res, 0, c[SET_PROJECT]));
        snprintf(s->revision, sizeof s->revision, "%s", PQgetvalue(res, 0, c[SET_REVISION]));
        snprintf(s->label, sizeof s->label, "%s", PQgetvalue(res, 0, c[SET_LABEL]));
        snprintf(s->platform, sizeof s->platform, "%s", PQgetvalue(res, 0, c[SET_PLATFORM]));
        snprintf(s->original_task_id, sizeof s->original_task_id, "%s",
                 PQgetvalue(res, 0, c[SET_ORIGINAL_TASK_ID]));
        s->original_run_id = atoi(PQgetvalue(res, 0, c[SET_ORIGINAL_RUN_ID]));
        s->count = atoi(PQgetvalue(res, 0, c[SET_RETRIGGERS]));
        snprintf(s->status, sizeof s->status, "%s", PQgetvalue(res, 0, c[SET_STATUS]));
        snprintf(s->task_group_id, sizeof s->task_group_id, "%s",
                 PQgetvalue(res, 0, c[SET_TASK_GROUP_ID]));
        s->decided = PQgetvalue(res, 0, c[SET_DECIDED])[0] == 't';
        s->past_deadline = PQgetvalue(res, 0, c[SET_PAST_DEADLINE])[0] == 't';
        snprintf(s->failure_seen_at, sizeof s->failure_seen_at, "%s",
                 PQgetvalue(res, 0, c[SET_FAILURE_SEEN_AT]));
        snprintf(s->requested_at, sizeof s->requested_at, "%s",
                 PQgetvalue(res, 0, c[SET_REQUESTED_AT]));
        s->original_seconds = atol(PQgetvalue(res, 0, c[SET_ORIGINAL_SECONDS]));
    }
    PQclear(res);
    return RT_OK;
}

/* ---- gathering ---- */

typedef enum { LOOK_LINES, LOOK_NO_DATA, LOOK_WAIT } look;

/* What Treeherder knows of one failed run: its job, its logs, its failure lines. On
 * LOOK_WAIT *why is the wait reason (RT_UNDECIDED_*) and detail says more. */
static look look_at_run(decide *w, const set_info *s, run_info *run, int *classification,
                        const char **why, char *detail)
{
    char errstr[RT_ERRSTR_SIZE] = "";
    rt_th_job job;
    bool found = false;
    int rc = rt_th_job_for_task(w->http, w->cfg->treeherder_url, run->task_id, run->run_id, &job,
                                &found, errstr);
    if (rc != RT_OK) goto upstream;
    if (!found || job.retry_id != run->run_id) {
        *why = RT_UNDECIDED_JOB_NOT_INGESTED;
        snprintf(detail, RT_ERRSTR_SIZE, "no Treeherder job for %s run %d yet", run->task_id,
                 run->run_id);
        return LOOK_WAIT;
    }
    run->job_id = job.id;
    run->push_id = job.push_id;
    if (classification) *classification = job.failure_classification_id;

    rt_th_logs logs;
    rc = rt_th_job_logs(w->http, w->cfg->treeherder_url, s->project, job.id, &logs, errstr);
    if (rc != RT_OK) goto upstream;
    if (logs.pending > 0 || logs.total == 0) {
        *why = RT_UNDECIDED_LOGS_NOT_PARSED;
        snprintf(detail, RT_ERRSTR_SIZE, "job %ld: %d of %d logs not parsed", job.id,
                 logs.total ? logs.pending : 0, logs.total);
        return LOOK_WAIT;
    }
    if (logs.parsed == 0) return LOOK_NO_DATA; /* every log failed or was skipped for size */

    char *body = NULL;
    size_t len = 0;
    rc = rt_th_bug_suggestions(w->http, w->cfg->treeherder_url, s->project, job.id, &body, &len,
                               errstr);
    if (rc != RT_OK) goto upstream;
    rt_bugsug_options opts = {0};
    rc = rt_bugsug_parse(body, len, &opts, &run->lines, errstr);
    free(body);
    if (rc != RT_OK) {
        rt_log_warn("unusable bug_suggestions: the run counts as no data", "task_id", run->task_id,
                    "error", errstr);
        return LOOK_NO_DATA;
    }
    run->have_lines = true;
    return LOOK_LINES;
upstream:
    if (rt_upstream_transient(rc)) {
        *why = RT_UNDECIDED_UPSTREAM_ERROR;
        snprintf(detail, RT_ERRSTR_SIZE, "%s", errstr);
        return LOOK_WAIT;
    }
    /* A permanent refusal (4xx, a body of the wrong shape): waiting cannot help. */
    rt_log_warn("treeherder refused; the run counts as no data", "task_id", run->task_id, "error",
                errstr);
    return LOOK_NO_DATA;
}

static void note_wait(evidence *e, const char *why, const char *detail)
{
    if (!e->wait) {
        e->wait = why;
        snprintf(e->wait_detail, sizeof e->wait_detail, "%s", detail);
    }
}

/* The set's members that give evidence into e->runs; *distinct: the retriggers asked for
 * that arrived (a task's reruns count once). */
static int load_members(decide *w, evidence *e, size_t *distinct, rt_outcome *h)
{
    const set_info *s = &e->set;
    char run_text[16];
    snprintf(run_text, sizeof run_text, "%d", s->original_run_id);
    const char *params[] = {s->id_text, s->original_task_id, run_text};
    PGresult *res = NULL;
    if (rt_pg_exec(w->pg, SQL_MEMBERS, 3, params, &res) != RT_OK) {
        rt_outcome_set(h, RT_SETTLE_REQUEUE, "postgres: %s", rt_pg_errstr(w->pg));
        return RT_EDB;
    }
    int c[MEMBER_N];
    char errstr[RT_ERRSTR_SIZE] = "";
    if (rt_pg_columns(res, MEMBER_COLS, MEMBER_N, c, errstr) != RT_OK) {
        rt_outcome_set(h, RT_SETTLE_REQUEUE, "postgres: %s", errstr);
        PQclear(res);
        return RT_EDB;
    }
    for (int i = 0; i < PQntuples(res) && e->nruns < RT_VERDICT_MAX_RUNS; i++) {
        run_info *r = &e->runs[e->nruns++];
        snprintf(r->task_id, sizeof r->task_id, "%s", PQgetvalue(res, i, c[MEMBER_TASK_ID]));
        r->run_id = atoi(PQgetvalue(res, i, c[MEMBER_RUN_ID]));
        snprintf(r->member_state, sizeof r->member_state, "%s",
                 PQgetvalue(res, i, c[MEMBER_STATE]));
        r->found = !strcmp(PQgetvalue(res, i, c[MEMBER_ROLE]), "found");
        bool seen = r->found;
        for (size_t k = 0; k + 1 < e->nruns && !seen; k++)
            if (!e->runs[k].found && !strcmp(e->runs[k].task_id, r->task_id)) seen = true;
        if (!seen) (*distinct)++;
    }
    PQclear(res);
    return RT_OK;
}

/* Fills e from Postgres and Treeherder and runs the verdict. */
static int gather(decide *w, evidence *e, rt_outcome *h)
{
    set_info *s = &e->set;
    char detail[RT_ERRSTR_SIZE] = "";
    const char *why = NULL;

    snprintf(e->original.task_id, sizeof e->original.task_id, "%s", s->original_task_id);
    e->original.run_id = s->original_run_id;
    snprintf(e->original.member_state, sizeof e->original.member_state, "failed");
    e->classification_id = -1;
    look o = look_at_run(w, s, &e->original, &e->classification_id, &why, detail);
    if (o == LOOK_WAIT) {
        note_wait(e, why, detail);
        rt_verdict_undecided(&e->result, why);
        e->result.verdict = RT_VERDICT_NOT_YET;
        return RT_OK;
    }
    if (o == LOOK_NO_DATA) {
        e->original.state = RT_RUN_NO_DATA;
        rt_verdict_undecided(&e->result, ORIGINAL_NO_DATA);
        return RT_OK;
    }
    e->original.state = RT_RUN_FAILED;

    size_t distinct = 0; /* retriggers asked for that arrived (a task's reruns count once) */
    if (load_members(w, e, &distinct, h) != RT_OK) return RT_EDB;

    for (size_t i = 0; i < e->nruns; i++) {
        run_info *r = &e->runs[i];
        rt_member_state member = RT_MEMBER_PENDING;
        (void)rt_member_state_parse(r->member_state, &member);
        r->state = rt_member_run_state(member);
        if (r->state != RT_RUN_FAILED) continue;
        /* A failure's lines decide: Treeherder's, once its logs are parsed. */
        look l = look_at_run(w, s, r, NULL, &why, detail);
        if (l == LOOK_NO_DATA)
            r->state = RT_RUN_NO_DATA;
        else if (l == LOOK_WAIT) {
            r->state = RT_RUN_PENDING;
            note_wait(e, why, detail);
        }
    }
    /* Retriggers asked for that have not resolved yet (a task's reruns count once). */
    while (distinct + e->missing < (size_t)s->count && e->nruns < RT_VERDICT_MAX_RUNS) {
        e->runs[e->nruns++].state = RT_RUN_PENDING;
        e->missing++;
    }

    rt_verdict_run *vruns = e->vruns;
    for (size_t i = 0; i < e->nruns; i++) {
        vruns[i].state = e->runs[i].state;
        vruns[i].lines = e->runs[i].have_lines ? e->runs[i].lines.lines : NULL;
        vruns[i].nlines = e->runs[i].have_lines ? e->runs[i].lines.nlines : 0;
    }
    bool *tracked_line = e->tracked;
    for (size_t i = 0;
         e->original.have_lines && i < e->original.lines.nlines && i < RT_VERDICT_MAX_LINES; i++)
        tracked_line[i] =
            rt_bugsug_tracking_bug(&e->original.lines, &e->original.lines.lines[i]) != 0;
    rt_verdict_input in = {.original = e->original.lines.lines,
                           .noriginal = e->original.lines.nlines,
                           .original_tracked = tracked_line,
                           .runs = vruns,
                           .nruns = e->nruns,
                           .threshold = w->cfg->decide_threshold};
    if (rt_verdict_decide(&in, &e->result) != RT_OK) {
        rt_outcome_set(h, RT_SETTLE_DEAD, "internal: verdict input refused");
        return RT_EINVAL;
    }
    e->input = in; /* the verdict policy reads the same evidence (rounds.h) */
    e->have_input = e->original.have_lines && e->original.lines.nlines > 0;
    return RT_OK;
}

/* ---- the decision ---- */

static bool run_has_line(const run_info *r, const rt_failure_line *line)
{
    if (r->state != RT_RUN_FAILED || !r->have_lines) return false;
    for (size_t k = 0; k < r->lines.nlines; k++)
        if (rt_failure_line_equal(&r->lines.lines[k], line)) return true;
    return false;
}

static const char *member_result(const run_info *r, bool reproduced)
{
    switch (r->state) {
    case RT_RUN_PASSED: return "passed";
    case RT_RUN_FAILED: return reproduced ? "same-failure" : "other-failure";
    case RT_RUN_EXCEPTION: return "exception";
    case RT_RUN_NO_DATA: return "no-data";
    case RT_RUN_PENDING: return NULL;
    }
    return NULL;
}

/* The retriggers (task ids, each once) whose failures hold line; ids holds e->nruns. */
static size_t reproducers(const evidence *e, const rt_failure_line *line, rt_event_task_id *ids)
{
    size_t n = 0;
    for (size_t k = 0; k < e->nruns; k++) {
        if (!run_has_line(&e->runs[k], line)) continue;
        size_t j = 0;
        while (j < n && strcmp(ids[j], e->runs[k].task_id)) j++;
        if (j == n) memcpy(ids[n++], e->runs[k].task_id, sizeof *ids);
    }
    return n;
}

/* The decision event for bots (queue-schemas/decision-event.json): a malloc'd text, NULL when
 * out of memory. Each line with the retriggers that reproduced it, and the retriggers that
 * had resolved (at most EVENT_MAX_TASKS). */
static char *event_text(const decide *w, const evidence *e, const char *decided_at)
{
    const set_info *s = &e->set;
    const rt_verdict_result *r = &e->result;
    size_t nlines = e->original.have_lines ? e->original.lines.nlines : 0;
    rt_event_task_id compared[EVENT_MAX_TASKS];
    rt_decision_event ev = {.set_id = s->id,
                            .label = (char *)s->label,
                            .retrigger_task_ids = compared,
                            .threshold = w->cfg->decide_threshold,
                            .lines = calloc(nlines ? nlines : 1, sizeof *ev.lines),
                            .nlines = nlines};
    rt_event_task_id *by = calloc(nlines * e->nruns + 1, sizeof *by);
    char *text = NULL;
    if (!ev.lines || !by) goto out;
    for (size_t i = 0; i < nlines; i++) {
        const rt_failure_line *line = &e->original.lines.lines[i];
        ev.lines[i] =
            (rt_decision_event_line){.line = line->signature, .reproduced_by = by + i * e->nruns};
        ev.lines[i].nreproduced_by = reproducers(e, line, ev.lines[i].reproduced_by);
    }
    for (size_t k = 0; k < e->nruns && ev.nretrigger_task_ids < EVENT_MAX_TASKS; k++) {
        const run_info *run = &e->runs[k];
        if (!run->task_id[0] || run->state == RT_RUN_PENDING) continue;
        size_t j = 0;
        while (j < ev.nretrigger_task_ids && strcmp(compared[j], run->task_id)) j++;
        if (j == ev.nretrigger_task_ids)
            memcpy(compared[ev.nretrigger_task_ids++], run->task_id, sizeof *compared);
    }
    snprintf(ev.project, sizeof ev.project, "%s", s->project);
    snprintf(ev.revision, sizeof ev.revision, "%s", s->revision);
    snprintf(ev.platform, sizeof ev.platform, "%.128s", s->platform[0] ? s->platform : "unknown");
    snprintf(ev.verdict, sizeof ev.verdict, "%s", rt_verdict_name(r->verdict));
    snprintf(ev.reason, sizeof ev.reason, "%s", r->reason);
    snprintf(ev.original_task_id, sizeof ev.original_task_id, "%s", s->original_task_id);
    snprintf(ev.decided_at, sizeof ev.decided_at, "%s", decided_at);
    text = rt_decision_event_build(&ev); /* lent strings and arrays, freed here */
out:
    free(ev.lines);
    free(by);
    return text;
}

/* The evidence stored with the decision (*stored, common/core/evidence.h): every line and
 * run of the set, or nothing. */
static int build_documents(decide *w, const evidence *e, const rt_decide_request *req,
                           const char *decided_at, json_t **stored)
{
    const set_info *s = &e->set;
    const rt_verdict_result *r = &e->result;
    size_t nlines = e->original.have_lines ? e->original.lines.nlines : 0;
    size_t ntracked = e->original.have_lines ? e->original.lines.ntracked : 0;
    rt_evidence_line *lines = calloc(nlines + 1, sizeof *lines);
    rt_evidence_tracked *tracked = calloc(ntracked + 1, sizeof *tracked);
    rt_evidence_run *runs = calloc(e->nruns + 1, sizeof *runs);
    rt_event_task_id *by = calloc(nlines * e->nruns + 1, sizeof *by);
    *stored = NULL;
    if (!lines || !tracked || !runs || !by) goto out;
    for (size_t i = 0; i < nlines; i++) {
        const rt_failure_line *line = &e->original.lines.lines[i];
        lines[i] = (rt_evidence_line){.signature = line->signature,
                                      .test = line->test,
                                      .hash_hex = line->hash_hex,
                                      .reproduced_by = by + i * e->nruns,
                                      .nreproduced_by = reproducers(e, line, by + i * e->nruns),
                                      .history = json_array_get(e->history, i)};
    }
    for (size_t i = 0; i < ntracked; i++)
        tracked[i] = (rt_evidence_tracked){.line = e->original.lines.tracked[i].line.signature,
                                           .bug = e->original.lines.tracked[i].bug_id};
    rt_decision_evidence in = {.threshold = w->cfg->decide_threshold,
                               .verdict = rt_verdict_name(r->verdict),
                               .reason = r->reason,
                               .original = {.task_id = s->original_task_id,
                                            .run_id = s->original_run_id,
                                            .evidence = rt_run_state_name(e->original.state),
                                            .job_id = e->original.job_id,
                                            .push_id = e->original.push_id},
                               .lines = lines,
                               .nlines = nlines,
                               .tracked = tracked,
                               .ntracked = ntracked,
                               .runs = runs,
                               .counts = {.requested = s->count,
                                          .passed = (int)r->passed,
                                          .failed = (int)r->failed,
                                          .exceptions = (int)r->exceptions,
                                          .no_data = (int)r->no_data,
                                          .pending = (int)r->pending,
                                          .missing = (int)e->missing},
                               .failure_seen_at = s->failure_seen_at,
                               .retriggers_requested_at =
                                   s->requested_at[0] ? s->requested_at : NULL,
                               .decided_at = decided_at,
                               .deadline = e->deadline,
                               .attempt = req->attempt,
                               .request_reason = req->reason,
                               .classification_id = e->classification_id,
                               .detail = e->wait_detail};
    for (size_t k = 0; k < e->nruns; k++) {
        const run_info *run = &e->runs[k];
        in.counts.found += run->found;
        if (!run->task_id[0]) continue; /* a retrigger that never arrived */
        bool reproduced = false;
        for (size_t i = 0; i < nlines; i++)
            if (run_has_line(run, &e->original.lines.lines[i])) reproduced = true;
        runs[in.nruns++] = (rt_evidence_run){.task_id = run->task_id,
                                             .run_id = run->run_id,
                                             .found = run->found,
                                             .member_state = run->member_state,
                                             .evidence = rt_run_state_name(run->state),
                                             .reproduced = reproduced,
                                             .job_id = run->job_id,
                                             .have_lines = run->have_lines,
                                             .nlines = run->lines.nlines};
        if (run->state == RT_RUN_PASSED || run->state == RT_RUN_FAILED) in.counts.compared++;
    }
    *stored = rt_decision_evidence_build(&in);
    if (*stored && decide_rounds_evidence(&w->rounds, &e->rounds, *stored) != RT_OK) {
        json_decref(*stored);
        *stored = NULL;
    }
out:
    free(lines);
    free(tracked);
    free(runs);
    free(by);
    return *stored ? RT_OK : RT_ENOMEM;
}

/* The cross-branch test history of the original's lines (common/core/history.h), into
 * e->history. Best effort: without it the decision is still stored. */
static void look_up_history(decide *w, evidence *e)
{
    if (!e->original.have_lines || !e->original.lines.nlines) return;
    rt_history_lookup q = {.repository = w->cfg->history_repository,
                           .window_days = w->cfg->history_flaky_window_days,
                           .min_branches = w->cfg->history_flaky_min_branches,
                           .project = e->set.project,
                           .revision = e->set.revision};
    if (rt_history_lines_lookup(w->pg, &q, e->original.lines.lines, e->original.lines.nlines,
                                &e->history) != RT_OK)
        rt_log_warn("cannot read the test history; decided without it", "set_id", e->set.id_text,
                    "error", rt_pg_errstr(w->pg));
}

/* Inserts the decision, marks the set, records each member's result and publishes the
 * event, in one transaction. *inserted false: another worker decided first. */
static int store_decision(decide *w, const evidence *e, const rt_decide_request *req,
                          bool *inserted, char decided_at[40])
{
    const set_info *s = &e->set;
    *inserted = false;
    utc_now(decided_at);
    json_t *stored = NULL;
    char *stored_text = NULL, *event = NULL;
    int rc = build_documents(w, e, req, decided_at, &stored);
    if (rc != RT_OK) return rc;
    stored_text = json_dumps(stored, JSON_COMPACT);
    event = event_text(w, e, decided_at);
    json_decref(stored);
    if (!stored_text || !event) {
        rc = RT_ENOMEM;
        goto out;
    }
    char classification[16];
    snprintf(classification, sizeof classification, "%d", e->classification_id);
    const char *verdict = rt_verdict_name(e->result.verdict);
    /* A regression on a project of culprit_projects starts its culprit search: the window is
     * found by the next culprit poll (culprit_flow.c), outside this transaction. */
    bool search = e->result.verdict == RT_VERDICT_REGRESSION &&
                  rt__decide_culprit_project(w->cfg, s->project);
    const char *params[] = {s->id_text,
                            verdict,
                            e->result.reason,
                            stored_text,
                            e->classification_id >= 0 ? classification : NULL,
                            s->failure_seen_at,
                            s->requested_at[0] ? s->requested_at : NULL,
                            decided_at,
                            search ? "searching" : NULL};
    if ((rc = rt_pg_begin(w->pg)) != RT_OK) goto out;
    PGresult *res = NULL;
    rc = rt_pg_exec(w->pg, SQL_INSERT_DECISION, 9, params, &res);
    if (rc == RT_OK) *inserted = PQntuples(res) == 1;
    PQclear(res);
    if (rc != RT_OK || !*inserted) goto done;
    const char *sparams[] = {s->id_text};
    if ((rc = rt_pg_exec(w->pg, SQL_SET_DECIDED, 1, sparams, NULL)) != RT_OK) goto done;
    for (size_t k = 0; k < e->nruns && rc == RT_OK; k++) {
        const run_info *run = &e->runs[k];
        bool reproduced = false;
        for (size_t i = 0; e->original.have_lines && i < e->original.lines.nlines; i++)
            if (run_has_line(run, &e->original.lines.lines[i])) reproduced = true;
        const char *result = member_result(run, reproduced);
        if (!run->task_id[0] || !result) continue;
        char run_id[16];
        snprintf(run_id, sizeof run_id, "%d", run->run_id);
        const char *mparams[] = {s->id_text, run->task_id, run_id, result};
        rc = rt_pg_exec(w->pg, SQL_MEMBER_RESULT, 4, mparams, NULL);
    }
    if (rc == RT_OK) rc = decide_rounds_store(&w->rounds, &e->rounds, s->id_text);
    if (rc != RT_OK) goto done;
    char key[128], message_id[64];
    snprintf(key, sizeof key, "%s.%s", s->project, verdict);
    snprintf(message_id, sizeof message_id, "decision-%lld", s->id);
    rt_amqp_publish_opts opts = {.message_id = message_id, .allow_unroutable = true};
    rc = rt_amqp_publish(w->amqp, w->events, key, event, strlen(event), &opts);
done:
    if (rc == RT_OK) {
        rc = rt_pg_commit(w->pg);
    } else {
        int ignored = rt_pg_rollback(w->pg);
        (void)ignored;
        *inserted = false;
    }
out:
    free(stored_text);
    free(event);
    return rc;
}

/* ---- cancelling what is no longer needed ---- */

static int cancel_task(decide *w, const char *task_id)
{
    char url[512];
    snprintf(url, sizeof url, "%s/api/queue/v1/task/%s/cancel", w->cfg->taskcluster_root_url,
             task_id);
    char nonce[RT_HAWK_NONCE_SIZE], *auth = NULL;
    rt_hawk_credentials creds = {w->cfg->taskcluster_client_id, w->cfg->taskcluster_access_token,
                                 w->cfg->taskcluster_certificate};
    int rc = rt_hawk_nonce(nonce);
    if (rc == RT_OK)
        rc = rt_hawk_header(&creds, "POST", url, NULL, NULL, (long)time(NULL), nonce, &auth);
    if (rc != RT_OK) return rc;
    rt_http_header headers[] = {{"Authorization", auth}};
    rt_http_response resp;
    rc = rt_http_request(w->http_post, "POST", url, headers, 1, NULL, 0, &resp);
    rt_http_response_free(&resp);
    free(auth);
    return rc;
}

static bool is_member(const evidence *e, const char *task_id)
{
    if (!strcmp(task_id, e->set.original_task_id)) return true;
    for (size_t i = 0; i < e->nruns; i++)
        if (e->runs[i].task_id[0] && !strcmp(e->runs[i].task_id, task_id)) return true;
    return false;
}

typedef struct cancel_walk {
    decide *w;
    const evidence *e;
    rt_event_task_id *cancelled; /* task ids cancelled so far */
    size_t ncancelled, cap;
} cancel_walk;

/* One task of the push's task group: cancelled when it is a pending, unscheduled or running
 * task with the set's label that is not a member yet. Never stops the walk. */
static bool cancel_if_pending(void *ctx, const char *id, json_t *status, json_t *task)
{
    cancel_walk *c = ctx;
    const char *state = json_string_value(json_object_get(status, "state"));
    const char *label = json_string_value(json_object_get(json_object_get(task, "tags"), "label"));
    if (!label)
        label = json_string_value(json_object_get(json_object_get(task, "metadata"), "name"));
    if (!id || !state || !label || !rt_valid_task_id(id) || strcmp(label, c->e->set.label) ||
        is_member(c->e, id))
        return false;
    if (strcmp(state, "pending") && strcmp(state, "running") && strcmp(state, "unscheduled"))
        return false;
    if (cancel_task(c->w, id) == RT_OK) {
        if (c->ncancelled == c->cap) {
            size_t cap = c->cap ? 2 * c->cap : 16;
            rt_event_task_id *grown = realloc(c->cancelled, cap * sizeof *grown);
            if (!grown) return false; /* the record counts what it could keep */
            c->cancelled = grown;
            c->cap = cap;
        }
        memcpy(c->cancelled[c->ncancelled++], id, sizeof *c->cancelled);
    } else
        rt_log_warn("cancel failed", "task_id", id, "error", rt_http_errstr(c->w->http_post));
    return false;
}

/* Cancels the set's retriggers still pending or running: the tasks of the push's task
 * group with the set's label that are not members yet. Best effort (a listing that fails
 * part way keeps what was cancelled until then); records the count, the task ids and an
 * estimate of the task time saved (the original run's duration each). */
static void cancel_pending(decide *w, const evidence *e)
{
    const set_info *s = &e->set;
    if (!s->task_group_id[0] || !w->cfg->taskcluster_client_id ||
        !w->cfg->taskcluster_access_token) {
        rt_log_warn("cannot cancel pending retriggers: no task group or no credentials", "set_id",
                    s->id_text);
        return;
    }
    cancel_walk walk = {.w = w, .e = e};
    char errstr[RT_ERRSTR_SIZE] = "";
    if (rt_tc_each_group_task(w->http, w->cfg->taskcluster_root_url, s->task_group_id,
                              cancel_if_pending, &walk, errstr) != RT_OK)
        rt_log_warn("cannot list the task group to cancel retriggers", "set_id", s->id_text,
                    "error", errstr);
    size_t n = walk.ncancelled;
    char *text = rt_cancelled_json(walk.cancelled, n, s->original_seconds);
    free(walk.cancelled);
    const char *params[] = {s->id_text, text};
    if (text && rt_pg_exec(w->pg, SQL_CANCELLED, 2, params, NULL) != RT_OK)
        rt_log_warn("cannot record the cancelled retriggers", "set_id", s->id_text, "error",
                    rt_pg_errstr(w->pg));
    free(text);
    char count[16];
    snprintf(count, sizeof count, "%zu", n);
    rt_log_info("pending retriggers cancelled", "set_id", s->id_text, "count", count);
}

/* ---- one request ---- */

/* The number in the one row of a query's one column (col: its name), for a metric; false
 * when the query failed or gave no such row or column. */
static bool query_number(decide *w, const char *sql, int nparams, const char *const *params,
                         const char *const *col, double *out)
{
    PGresult *res = NULL;
    int c;
    char errstr[RT_ERRSTR_SIZE] = "";
    bool ok = rt_pg_exec(w->pg, sql, nparams, params, &res) == RT_OK && PQntuples(res) == 1 &&
              rt_pg_columns(res, col, 1, &c, errstr) == RT_OK;
    if (ok) *out = atof(PQgetvalue(res, 0, c));
    PQclear(res);
    return ok;
}

static void decide_set(decide *w, const rt_decide_request *req, int attempt, rt_outcome *h)
{
    evidence *e = calloc(1, sizeof *e);
    if (!e) {
        rt_outcome_set(h, RT_SETTLE_REQUEUE, "out of memory");
        return;
    }
    bool found = false;
    if (load_set(w, req->set_id, &e->set, &found) != RT_OK) {
        rt_outcome_set(h, RT_SETTLE_REQUEUE, "postgres: %s", rt_pg_errstr(w->pg));
        goto out;
    }
    if (!found) {
        rt_log_warn("decide request for an unknown set", "set_id", e->set.id_text);
        goto out; /* the set is published in the transaction that creates it: it was deleted */
    }
    if (e->set.decided || !strcmp(e->set.status, "decided") || !strcmp(e->set.status, "failed"))
        goto out; /* decided before (a redelivery), or no retriggers were ever made */
    e->deadline = e->set.past_deadline || !strncmp(req->reason, "deadline", 8);
    if (gather(w, e, h) != RT_OK) goto out;
    /* The verdict policy in force on that evidence (rounds.h): adaptive may ask for another
     * round of retriggers instead, whose members ask again. */
    rounds_set policy_set = {.id = e->set.id,
                             .id_text = e->set.id_text,
                             .project = e->set.project,
                             .revision = e->set.revision,
                             .failure_seen_at = e->set.failure_seen_at,
                             .evidence = e->have_input ? &e->input : NULL,
                             .classification_id = e->classification_id,
                             .deadline = e->deadline};
    switch (decide_rounds_apply(&w->rounds, &policy_set, &e->result, &e->rounds, h)) {
    case ROUNDS_GO_ON: break;
    case ROUNDS_ASKED: goto out;
    case ROUNDS_ERROR: goto out;
    }

    /* What now (common/core/decide_step.h): store, look again later, or leave the set to
     * its members' events and the deadline. */
    rt_decide_situation situation = {.result = &e->result,
                                     .wait = e->wait,
                                     .deadline = e->deadline,
                                     .attempt = attempt,
                                     .ndelays = w->ndelays};
    rt_verdict_result decided;
    switch (rt_decide_next_step(&situation, &decided)) {
    case RT_DECIDE_STORE: e->result = decided; break;
    case RT_DECIDE_RETRY: rt_outcome_set(h, RT_SETTLE_RETRY, "%s", e->wait); goto out;
    case RT_DECIDE_LEAVE:
        if (e->wait) /* never past the deadline: that stores or looks again (decide_step.h) */
            rt_log_info("a run is still not readable; it stays pending until the set's deadline",
                        "set_id", e->set.id_text, "detail", e->wait_detail);
        else
            rt_log_debug("waiting for retriggers", "set_id", e->set.id_text);
        goto out; /* the next member's request comes from retrig-classify */
    }

    look_up_history(w, e);
    decide_rounds_finish(&w->rounds, &policy_set, &e->rounds);
    bool inserted = false;
    char decided_at[40];
    int rc = store_decision(w, e, req, &inserted, decided_at);
    if (rc != RT_OK) {
        rt_outcome_set(h, RT_SETTLE_REQUEUE, "storing the decision: %s / %s", rt_pg_errstr(w->pg),
                       rt_amqp_errstr(w->amqp));
        goto out;
    }
    if (!inserted) goto out; /* a replica decided first */
    rt_metric_inc(rt_metrics_std()->decisions, rt_verdict_name(e->result.verdict));
    {
        /* Decision latency: from the failure seen to the verdict stored. */
        const char *lparams[] = {e->set.failure_seen_at};
        double seconds = 0;
        if (e->set.failure_seen_at[0] &&
            query_number(w, SQL_SECONDS_SINCE, 1, lparams, SECONDS_SINCE_COLS, &seconds))
            rt_metric_observe(rt_metrics_std()->decision_latency, seconds);
    }
    char pending[16];
    snprintf(pending, sizeof pending, "%zu", e->result.pending);
    rt_log_info("decided", "set_id", e->set.id_text, "project", e->set.project, "label",
                e->set.label, "original_task_id", e->set.original_task_id, "verdict",
                rt_verdict_name(e->result.verdict), "reason", e->result.reason, "pending", pending);
    if (w->cfg->decide_cancel_pending && e->result.pending > 0 &&
        (e->result.verdict == RT_VERDICT_REGRESSION ||
         e->result.verdict == RT_VERDICT_INTERMITTENT)) {
        if (w->cfg->dry_run)
            rt_log_info("dry run: pending retriggers not cancelled", "set_id", e->set.id_text);
        else
            cancel_pending(w, e);
    }
out:
    evidence_free(e);
    free(e);
}

static void handle(void *ctx, rt_amqp *src, rt_amqp_message *m, rt_outcome *h)
{
    decide *w = ctx;
    (void)src;
    rt_decide_request req;
    char reason[RT_MESSAGE_REASON_SIZE];
    if (rt_decide_request_parse(m->body, m->len, &req, reason) != RT_OK) {
        rt_outcome_set(h, RT_SETTLE_DEAD, "%s", reason);
        return;
    }
    decide_set(w, &req, m->attempt, h);
}

/* A decide request counts its attempts in its body: the delayed copy says which attempt it
 * is and why it waits ("retry: <why>", after "deadline " for the sweeper's requests). */
static char *retry_body(void *ctx, const rt_amqp_message *m, const rt_settle_plan *plan)
{
    (void)ctx;
    rt_decide_request req;
    char reason[RT_MESSAGE_REASON_SIZE];
    if (rt_decide_request_parse(m->body, m->len, &req, reason) != RT_OK) return NULL;
    req.attempt = plan->next_attempt + 1; /* the body counts from 1 */
    bool was_deadline = !strncmp(req.reason, "deadline", 8);
    rt_utf8_format(req.reason, sizeof req.reason, "%sretry: %s", was_deadline ? "deadline " : "",
                   plan->reason); /* cut, if it must be, on a character boundary */
    return rt_decide_request_build(&req);
}

/* Asks for a decision on sets still open past set_deadline_minutes, once per sweep
 * interval each, in one transaction (replicas skip the rows another one holds). */
static void sweep(decide *w)
{
    /* Sets still waiting for their verdict, for the retrig_sets_in_flight gauge. */
    double open_sets = 0;
    if (query_number(w, SQL_SETS_IN_FLIGHT, 0, NULL, SETS_IN_FLIGHT_COLS, &open_sets))
        rt_metric_set(rt_metrics_std()->sets_in_flight, open_sets);

    char minutes[16], seconds[16];
    snprintf(minutes, sizeof minutes, "%d", w->cfg->set_deadline_minutes);
    snprintf(seconds, sizeof seconds, "%d", w->cfg->decide_sweep_interval_s);
    const char *params[] = {minutes, seconds};
    PGresult *res = NULL;
    int rc = rt_pg_begin(w->pg);
    if (rc == RT_OK) rc = rt_pg_exec(w->pg, SQL_SWEEP, 2, params, &res);
    int c[SWEEP_N];
    char errstr[RT_ERRSTR_SIZE] = "";
    if (rc == RT_OK) rc = rt_pg_columns(res, SWEEP_COLS, SWEEP_N, c, errstr);
    int n = rc == RT_OK ? PQntuples(res) : 0;
    for (int i = 0; i < n && rc == RT_OK; i++) {
        rt_decide_request req = {.set_id = atoll(PQgetvalue(res, i, c[SWEEP_ID])), .attempt = 1};
        snprintf(req.project, sizeof req.project, "%s", PQgetvalue(res, i, c[SWEEP_PROJECT]));
        snprintf(req.reason, sizeof req.reason, "deadline");
        char *body = rt_decide_request_build(&req);
        if (!body) {
            rc = RT_ENOMEM;
            break;
        }
        char message_id[64];
        snprintf(message_id, sizeof message_id, "decide-%lld-deadline", req.set_id);
        rt_amqp_publish_opts opts = {.message_id = message_id};
        rc = rt_amqp_publish(w->amqp, w->cfg->amqp_namespace, "decide", body, strlen(body), &opts);
        free(body);
        const char *sparams[] = {PQgetvalue(res, i, c[SWEEP_ID])};
        if (rc == RT_OK) rc = rt_pg_exec(w->pg, SQL_SWEPT, 1, sparams, NULL);
    }
    PQclear(res);
    if (rc == RT_OK && rt_pg_in_transaction(w->pg)) rc = rt_pg_commit(w->pg);
    if (rc != RT_OK) {
        int ignored = rt_pg_rollback(w->pg);
        (void)ignored;
        rt_log_warn("deadline sweep failed; trying at the next one", "error",
                    errstr[0] ? errstr : rt_pg_errstr(w->pg));
        return;
    }
    if (n > 0) {
        char count[16];
        snprintf(count, sizeof count, "%d", n);
        rt_log_info("decisions requested for sets past their deadline", "sets", count);
    }
}

/* The work queue with its delay queues, the decisions exchange, and the consumer. */
static int declare(void *ctx, const rt_worker_conns *conns)
{
    decide *w = ctx;
    const rt_config *cfg = w->cfg;
    char retrigger_queue[300];
    snprintf(retrigger_queue, sizeof retrigger_queue, "%s.retrigger", cfg->amqp_namespace);
    /* Under decide_policy = adaptive it publishes later rounds' retrigger requests. */
    rt_amqp_work_queue queues[] = {{w->queue, "decide", w->delays, w->ndelays},
                                   {retrigger_queue, "retrigger", NULL, 0}};
    int rc = rt_worker_declare_queues(conns->broker, cfg, queues, decide_rounds_asks(cfg) ? 2 : 1);
    if (rc == RT_OK) rc = rt_amqp_declare_exchange(conns->broker, w->events, "topic");
    if (rc == RT_OK) rc = rt_amqp_consume(conns->broker, w->queue);
    return rc;
}

/* The services: the broker and Postgres, and Redis when adaptive asks for rounds (their
 * budget claims). */
#define DECIDE_NEEDS (RT_WORKER_NEEDS_BROKER | RT_WORKER_NEEDS_POSTGRES)
static const rt_worker_redis_ops *decide_redis(const rt_config *cfg)
{
    return decide_rounds_asks(cfg) ? &rt_worker_redis : NULL;
}

static int setup(decide *w, rt_config *cfg)
{
    char errstr[RT_ERRSTR_SIZE] = "";
    int rc;
    w->cfg = cfg;
    for (size_t i = 0; i < cfg->decide_delays_ms.count && i < MAX_DELAYS; i++)
        w->delays[w->ndelays++] = atoi(cfg->decide_delays_ms.items[i]);
    snprintf(w->queue, sizeof w->queue, "%s.decide", cfg->amqp_namespace);
    snprintf(w->events, sizeof w->events, "%s.decisions", cfg->amqp_namespace);
    rt_http_options hopts;
    rt_http_options_from_config(&hopts, cfg);
    if ((rc = rt_http_new(&w->http, &hopts, errstr)) != RT_OK) return rc;
    hopts.max_attempts = 1;
    if ((rc = rt_http_new(&w->http_post, &hopts, errstr)) != RT_OK) return rc;
    rt_worker_setup connect = {"decide", DECIDE_NEEDS, 0, 1, declare, w, decide_redis(cfg)};
    if ((rc = rt_worker_connect(cfg, &connect, &w->conns)) != RT_OK) return rc;
    w->amqp = w->conns.broker;
    w->pg = w->conns.pg;
    decide_rounds_init(&w->rounds, cfg, w->pg, w->conns.redis, w->amqp);
    return RT_OK;
}

static void teardown(decide *w)
{
    rt_worker_disconnect(&w->conns);
    rt_http_free(w->http);
    rt_http_free(w->http_post);
}

/* Between messages: the deadline sweep, every decide_sweep_interval_s, and the culprit
 * searches due (culprit_flow.c). */
static int tick(void *ctx, bool idle)
{
    decide *w = ctx;
    (void)idle;
    if (time(NULL) >= w->next_sweep) {
        sweep(w);
        w->next_sweep = time(NULL) + w->cfg->decide_sweep_interval_s;
    }
    /* The culprit searches due (each at most every culprit_poll_interval_s); the look for
     * them is one indexed query, made at most once a second. */
    if (time(NULL) >= w->next_culprit_poll) {
        rt__decide_culprit_io io = {w->cfg, w->pg, w->http, w->amqp, w->events};
        rt__decide_culprit_poll(&io);
        w->next_culprit_poll = time(NULL) + 1;
    }
    return 0;
}

static int run(rt_config *cfg)
{
    decide w = {0};
    int rc = setup(&w, cfg);
    if (rc == RT_OK) {
        rt_log_info("consuming", "queue", w.queue, "events", w.events);
        w.next_sweep = time(NULL);
        rt_worker_settler settler = {w.amqp, w.queue, w.delays, w.ndelays, retry_body, &w};
        /* decide_threshold and log_level are read from cfg, so a reload needs nothing more. */
        rt_worker_loop loop = {.cfg = cfg,
                               .conns = &w.conns,
                               .lanes = 1,
                               .apply_reloads = true,
                               .sources = {w.amqp, NULL},
                               .settler = &settler,
                               .ctx = &w,
                               .handle = handle,
                               .tick = tick};
        rt_worker_consume(&loop);
        rt_log_info("stopping: finished the request in hand");
    }
    teardown(&w);
    return rt_worker_exit_status(rc);
}

static int check(rt_config *cfg)
{
    int failures = rt_worker_check_services(cfg, "decide", DECIDE_NEEDS, decide_redis(cfg));
    if (cfg->decide_cancel_pending && !cfg->dry_run &&
        (!cfg->taskcluster_client_id || !cfg->taskcluster_access_token)) {
        rt_log_error("decide_cancel_pending needs taskcluster_client_id and an access token");
        failures++;
    }
    return rt_worker_check_result(failures);
}

int main(int argc, char **argv)
{
    static const rt_worker_def def = {
        "decide",
        "Consumes decide requests, compares the failure lines of a set's original run and\n"
        "retriggers in Treeherder, and stores and publishes regression or intermittent.",
        run,
        check,
    };
    return rt_worker_main(&def, argc, argv);
}
