/* SPDX-License-Identifier: MPL-2.0 */
/* culprit_flow.c - retrig-decide's side of a culprit search: the window of a regression's
 * search from Treeherder's push list, and its first step stored on the decision
 * (culprit_flow.h). Single-threaded, as the worker. */
#include "workers/decide/culprit_flow.h"

#include <fnmatch.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/bugsug.h"
#include "common/core/culprit.h"
#include "common/core/culprit_flow.h"
#include "common/io/log.h"
#include "common/io/upstream.h"

#define CLAIM_BATCH   "5"
#define MAX_JOBS_SEEN 200 /* jobs of the label read on one push of the window */

/* The searches due, claimed by moving culprit_checked_at (a replica skips them then). */
static const char SQL_CLAIM[] =
    "UPDATE decisions d SET culprit_checked_at = now() FROM retrigger_sets s"
    " WHERE s.id = d.set_id AND d.set_id IN (SELECT set_id FROM decisions"
    "   WHERE culprit_status = 'searching' AND culprit_window IS NULL"
    "   AND (culprit_checked_at IS NULL"
    "        OR culprit_checked_at < now() - make_interval(secs => $1::integer))"
    "   ORDER BY culprit_checked_at NULLS FIRST, set_id LIMIT " CLAIM_BATCH
    "   FOR UPDATE SKIP LOCKED)"
    " RETURNING d.set_id, s.project, s.revision, s.label, d.evidence::text";
static const char SQL_STORE[] =
    "UPDATE decisions SET culprit_window = $2::jsonb, culprit_status = $3, culprit_reason = $4,"
    " culprit_revision = $5, culprit_pushlog_id = $6::bigint, culprit_author = $7,"
    " culprit_url = $8, culprit_range_first = $9, culprit_range_last = $10,"
    " culprit_updated_at = now()"
    " WHERE set_id = $1::bigint AND culprit_status = 'searching' AND culprit_window IS NULL";
static const char SQL_STOP[] =
    "UPDATE decisions SET culprit_status = 'stopped', culprit_reason = $2,"
    " culprit_updated_at = now() WHERE set_id = $1::bigint AND culprit_status = 'searching'";

bool rt__decide_culprit_project(const rt_config *cfg, const char *project)
{
    for (size_t i = 0; i < cfg->culprit_projects.count; i++)
        if (fnmatch(cfg->culprit_projects.items[i], project, 0) == 0) return true;
    return false;
}

/* One search, as its decision tells it. */
typedef struct search {
    const rt__decide_culprit_io *io;
    char set_id[32];
    char project[65];
    char revision[41];
    const char *label;
    long failing_push_id;
    json_t *lines; /* the decision's evidence.lines: {"line", "hash", "reproduced"} */
    int failing_runs, failing_reproduced;
} search;

typedef enum { SEEN, WAIT, REFUSED } seen;

/* From an upstream error: wait for a transient one, else the search stops. */
static seen upstream(int rc, const char *what, const search *s, const char *errstr)
{
    rt_log_warn(rt_upstream_transient(rc) ? "culprit window: upstream not ready, trying later"
                                          : "culprit window: upstream refused",
                "set_id", s->set_id, "what", what, "error", errstr);
    return rt_upstream_transient(rc) ? WAIT : REFUSED;
}

static bool line_reproduced(const search *s, const rt_bugsug *lines)
{
    size_t i;
    json_t *line;
    json_array_foreach(s->lines, i, line)
    {
        const char *hash = json_string_value(json_object_get(line, "hash"));
        for (size_t k = 0; hash && k < lines->nlines; k++)
            if (!strcmp(lines->lines[k].hash_hex, hash)) return true;
    }
    return false;
}

/* A failed job of the label: did it reproduce one of the regression's lines? */
static seen failed_job(const search *s, long job_id, rt_culprit_tally *t)
{
    const rt__decide_culprit_io *io = s->io;
    char errstr[RT_ERRSTR_SIZE] = "";
    rt_th_logs logs;
    int rc = rt_th_job_logs(io->http, io->cfg->treeherder_url, s->project, job_id, &logs, errstr);
    if (rc != RT_OK) return upstream(rc, "job logs", s, errstr);
    if (logs.pending > 0 || logs.total == 0) {
        t->pending++;
        return SEEN;
    }
    if (logs.parsed == 0) {
        t->none++;
        return SEEN;
    }
    char *body = NULL;
    size_t len = 0;
    rc = rt_th_bug_suggestions(io->http, io->cfg->treeherder_url, s->project, job_id, &body, &len,
                               errstr);
    if (rc != RT_OK) return upstream(rc, "bug_suggestions", s, errstr);
    rt_bugsug lines = {0};
    rt_bugsug_options opts = {0};
    rc = rt_bugsug_parse(body, len, &opts, &lines, errstr);
    free(body);
    if (rc != RT_OK)
        t->none++; /* unusable, as a run without data is to the verdict */
    else if (line_reproduced(s, &lines))
        t->reproduced++;
    else
        t->other++;
    rt_bugsug_free(&lines);
    return SEEN;
}

/* What the label's jobs on push push_id show; *jobs: how many Treeherder lists. */
static seen push_evidence(const search *s, long push_id, rt_culprit_push *out, int *jobs)
{
    const rt__decide_culprit_io *io = s->io;
    char errstr[RT_ERRSTR_SIZE] = "";
    rt_th_label_job *listed = calloc(MAX_JOBS_SEEN, sizeof *listed);
    if (!listed) return WAIT;
    size_t n = 0;
    int rc = rt_th_push_label_jobs(io->http, io->cfg->treeherder_url, s->project, push_id, s->label,
                                   listed, MAX_JOBS_SEEN, &n, errstr);
    seen r = SEEN;
    if (rc != RT_OK) {
        r = upstream(rc, "jobs of the label", s, errstr);
        goto out;
    }
    rt_culprit_tally t = {0};
    for (size_t i = 0; i < n && i < MAX_JOBS_SEEN && r == SEEN; i++) {
        switch (rt_culprit_job_kind_of(listed[i].state, listed[i].result)) {
        case RT_CJOB_PENDING: t.pending++; break;
        case RT_CJOB_PASSED: t.passed++; break;
        case RT_CJOB_NONE: t.none++; break;
        case RT_CJOB_FAILED: r = failed_job(s, listed[i].id, &t); break;
        }
    }
    rt_culprit_tally_push(&t, 0, 0, 0, false, out);
    *jobs = (int)(n < MAX_JOBS_SEEN ? n : MAX_JOBS_SEEN);
out:
    free(listed);
    return r;
}

static void stop(const search *s, const char *reason)
{
    const char *params[] = {s->set_id, reason};
    if (rt_pg_exec(s->io->pg, SQL_STOP, 2, params, NULL) != RT_OK)
        rt_log_warn("cannot record the culprit search's stop", "set_id", s->set_id, "error",
                    rt_pg_errstr(s->io->pg));
    else
        rt_log_info("culprit search stopped", "set_id", s->set_id, "reason", reason);
}

/* The window's pushes, oldest first, with what each showed. */
static json_t *window_document(const search *s, const rt_th_push *pushes, const int *jobs,
                               const rt_culprit_push *evidence, size_t n)
{
    json_t *list = json_array(), *sigs = json_array();
    for (size_t i = 0; list && i < n; i++)
        json_array_append_new(
            list, json_pack("{s:s, s:I, s:s, s:i, s:i, s:i, s:i, s:i, s:i}", "revision",
                            pushes[i].revision, "push_id", (json_int_t)pushes[i].id, "author",
                            pushes[i].author, "runs", evidence[i].runs, "reproduced",
                            evidence[i].reproduced, "pending", evidence[i].pending, "base_jobs",
                            jobs[i], "asked", 0, "attempts", 0));
    size_t i;
    json_t *line;
    json_array_foreach(s->lines, i, line)
    {
        json_t *sig = json_object_get(line, "line");
        if (sigs && json_is_string(sig)) json_array_append(sigs, sig);
    }
    return json_pack("{s:I, s:o*, s:i, s:o*}", "failing_push_id", (json_int_t)s->failing_push_id,
                     "pushes", list, "rounds", 0, "lines", sigs);
}

/* Stores the window and the search's first step. */
static void store(const search *s, const rt_th_push *pushes, const int *jobs,
                  const rt_culprit_push *evidence, size_t n, const rt_culprit_result *r)
{
    const rt__decide_culprit_io *io = s->io;
    json_t *doc = window_document(s, pushes, jobs, evidence, n);
    if (doc && r->status == RT_CULPRIT_SEARCHING && r->probe >= 0)
        json_object_set_new(doc, "next",
                            json_pack("{s:s, s:i, s:s?, s:i}", "revision",
                                      pushes[r->probe].revision, "times", r->times, "confirm",
                                      r->confirm >= 0 ? pushes[r->confirm].revision : NULL,
                                      "confirm_times", r->confirm >= 0 ? r->confirm_times : 0));
    char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    if (!text) return; /* out of memory: the next poll tries again */

    const rt_th_push *culprit = r->status == RT_CULPRIT_FOUND ? &pushes[r->culprit] : NULL;
    char pushlog[32] = "", url[1024] = "";
    if (culprit) {
        char decision_task[23], errstr[RT_ERRSTR_SIZE] = "";
        long pushlog_id = 0;
        if (rt_tc_push_decision_task(io->http, io->cfg->taskcluster_root_url, s->project,
                                     culprit->revision, decision_task, &pushlog_id, NULL,
                                     errstr) == RT_OK &&
            pushlog_id > 0)
            snprintf(pushlog, sizeof pushlog, "%ld", pushlog_id);
        else
            rt_log_warn("no pushlog id for the culprit push (its decision task is not indexed)",
                        "set_id", s->set_id, "revision", culprit->revision, "error", errstr);
        snprintf(url, sizeof url, "%s/jobs?repo=%s&revision=%s", io->cfg->treeherder_url,
                 s->project, culprit->revision);
    }
    const char *params[] = {s->set_id,
                            text,
                            rt_culprit_status_name(r->status),
                            r->reason,
                            culprit ? culprit->revision : NULL,
                            pushlog[0] ? pushlog : NULL,
                            culprit ? culprit->author : NULL,
                            culprit ? url : NULL,
                            pushes[r->first].revision,
                            pushes[r->last].revision};
    if (rt_pg_exec(io->pg, SQL_STORE, 10, params, NULL) != RT_OK)
        rt_log_warn("cannot store the culprit window; trying at the next poll", "set_id", s->set_id,
                    "error", rt_pg_errstr(io->pg));
    else
        rt_log_info("culprit window found", "set_id", s->set_id, "status",
                    rt_culprit_status_name(r->status), "reason", r->reason, "culprit",
                    culprit ? culprit->revision : "-", "range_first", pushes[r->first].revision,
                    "range_last", pushes[r->last].revision);
    free(text);
}

/* The failing push and the pushes before it, newest first in `listed` (the failing push at
 * 0), walked back to the window's first push; then the window oldest first and its first
 * step. */
static void find_window(const search *s)
{
    const rt__decide_culprit_io *io = s->io;
    int depth = io->cfg->culprit_max_depth;
    size_t max = (size_t)depth + 2; /* the failing push, depth candidates, the first push */
    rt_th_push *listed = calloc(max, sizeof *listed), *window = calloc(max, sizeof *window);
    rt_culprit_push *seen_listed = calloc(max, sizeof *seen_listed),
                    *evidence = calloc(max, sizeof *evidence);
    int *jobs_listed = calloc(max, sizeof *jobs_listed), *jobs = calloc(max, sizeof *jobs);
    if (!listed || !window || !seen_listed || !evidence || !jobs_listed || !jobs) goto out;
    char errstr[RT_ERRSTR_SIZE] = "";
    size_t n = 0;
    int rc = rt_th_pushes_before(io->http, io->cfg->treeherder_url, s->project,
                                 s->failing_push_id + 1, (int)max, listed, max, &n, errstr);
    if (rc != RT_OK) {
        if (upstream(rc, "push list", s, errstr) == REFUSED) stop(s, "push-list-refused");
        goto out;
    }
    if (n == 0 || listed[0].id != s->failing_push_id || strcmp(listed[0].revision, s->revision)) {
        stop(s, "failing-push-not-listed");
        goto out;
    }
    if (n == 1) {
        stop(s, "no-earlier-push");
        goto out;
    }
    size_t first = n - 1; /* the oldest listed, unless a push that ran the label comes first */
    for (size_t i = 1; i < n; i++) {
        seen r = push_evidence(s, listed[i].id, &seen_listed[i], &jobs_listed[i]);
        if (r == REFUSED) stop(s, "treeherder-refused");
        if (r != SEEN) goto out;
        if (seen_listed[i].pending > 0) {
            rt_log_info("culprit window: a run of the label is not finished; trying later",
                        "set_id", s->set_id, "revision", listed[i].revision);
            goto out;
        }
        if (rt_culprit_walk_step(&seen_listed[i], (int)i - 1, depth) == RT_WALK_FIRST) {
            first = i;
            break;
        }
    }
    size_t npushes = first + 1;
    for (size_t i = 0; i < npushes; i++) {
        window[i] = listed[first - i];
        evidence[i] = seen_listed[first - i];
        jobs[i] = jobs_listed[first - i];
    }
    /* The failing push: the regression's own runs (the failing run and the compared ones). */
    evidence[npushes - 1] =
        (rt_culprit_push){.runs = s->failing_runs, .reproduced = s->failing_reproduced};
    rt_culprit_input in = {.pushes = evidence,
                           .npushes = npushes,
                           .model = {.confidence = io->cfg->culprit_confidence,
                                     .threshold = io->cfg->decide_threshold,
                                     .reproduction_rate = rt_culprit_reproduction_rate(
                                         s->failing_runs, s->failing_reproduced)},
                           .jobs_left = io->cfg->culprit_max_jobs};
    rt_culprit_result r;
    if (rt_culprit_flow_next(&in, &r) != RT_OK) {
        rt_log_warn("culprit search refused its window", "set_id", s->set_id, "reason", r.reason);
        stop(s, "invalid-window");
        goto out;
    }
    store(s, window, jobs, evidence, npushes, &r);
out:
    free(listed);
    free(window);
    free(seen_listed);
    free(evidence);
    free(jobs_listed);
    free(jobs);
}

/* The search of one claimed decision, from its row (set_id, project, revision, label,
 * evidence). */
static void look_at(const rt__decide_culprit_io *io, PGresult *res, int row)
{
    search s = {.io = io, .label = PQgetvalue(res, row, 3)};
    snprintf(s.set_id, sizeof s.set_id, "%s", PQgetvalue(res, row, 0));
    snprintf(s.project, sizeof s.project, "%s", PQgetvalue(res, row, 1));
    snprintf(s.revision, sizeof s.revision, "%s", PQgetvalue(res, row, 2));
    json_t *evidence = json_loads(PQgetvalue(res, row, 4), 0, NULL);
    json_t *push_id = json_object_get(json_object_get(evidence, "original"), "push_id");
    s.lines = json_object_get(evidence, "lines");
    int compared =
        (int)json_integer_value(json_object_get(json_object_get(evidence, "counts"), "compared"));
    int reproduced = 0;
    size_t i;
    json_t *line;
    json_array_foreach(s.lines, i, line)
    {
        int k = (int)json_integer_value(json_object_get(line, "reproduced"));
        if (k > reproduced) reproduced = k;
    }
    s.failing_runs = 1 + (compared > 0 ? compared : 0);
    s.failing_reproduced = 1 + (reproduced < compared ? reproduced : compared);
    if (!json_is_integer(push_id) || json_integer_value(push_id) <= 0)
        stop(&s, "failing-push-unknown"); /* decided before the push id was kept */
    else if (!json_array_size(s.lines))
        stop(&s, "no-failure-line");
    else {
        s.failing_push_id = (long)json_integer_value(push_id);
        find_window(&s);
    }
    json_decref(evidence);
}

void rt__decide_culprit_poll(const rt__decide_culprit_io *io)
{
    char interval[16];
    snprintf(interval, sizeof interval, "%d", io->cfg->culprit_poll_interval_s);
    const char *params[] = {interval};
    PGresult *res = NULL;
    if (rt_pg_exec(io->pg, SQL_CLAIM, 1, params, &res) != RT_OK) {
        rt_log_warn("cannot look for culprit searches", "error", rt_pg_errstr(io->pg));
        return;
    }
    for (int i = 0; i < PQntuples(res); i++) look_at(io, res, i);
    PQclear(res);
}
