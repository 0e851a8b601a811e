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
#include <time.h>

#include "common/core/bugsug.h"
#include "common/core/culprit.h"
#include "common/core/culprit_adaptive.h"
#include "common/core/culprit_flow.h"
#include "common/core/events.h"
#include "common/core/evidence.h"
#include "common/io/history_store.h"
#include "common/io/log.h"
#include "common/worker.h"
#include "common/io/upstream.h"
#include "common/policy.h"
#include "common/store/culprit_searches.h"

#define CLAIM_BATCH   5
#define MAX_JOBS_SEEN 200 /* jobs of the label read on one push of the window */

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
    long history_runs, history_failures; /* the line's test before the failure (culprit.h) */
    const char *platform;
    int jobs_spent;
    const char *range_first, *range_last; /* the last step's range, "" before the window */
    rt_culprit_classify_fn classify;      /* the probes' rule under decide_policy */
    rt_culprit_adaptive adaptive;         /* its context under adaptive */
} search;

/* The probes' model (culprit.h): the confidence and threshold configured, the regression's
 * reproduction rate on the failing push, and the test's history before the failure. */
static rt_culprit_model search_model(const search *s, int failing_runs, int failing_reproduced)
{
    return (rt_culprit_model){.confidence = s->io->cfg->culprit_confidence,
                              .threshold = s->io->cfg->decide_threshold,
                              .reproduction_rate =
                                  rt_culprit_reproduction_rate(failing_runs, failing_reproduced),
                              .history_runs = s->history_runs,
                              .history_failures = s->history_failures,
                              .failing_runs = failing_runs,
                              .failing_reproduced = failing_reproduced};
}

/* How a search ended, for its event. */
typedef struct ending {
    const char *status, *reason;
    const char *culprit, *pushlog, *author, *url; /* NULL unless found */
    const char *first, *last;
    int rounds, probed, spent;
} ending;

/* The culprit event (queue-schemas/culprit-event.json) on the decisions exchange, routing
 * key <project>.culprit, once the end is stored. A failed publish is logged, not repeated. */
static void publish_end(const search *s, const ending *e)
{
    rt_culprit_event ev = {.set_id = atoll(s->set_id),
                           .label = (char *)s->label,
                           .found = e->culprit != NULL,
                           .culprit = {.pushlog_id = e->pushlog ? atoll(e->pushlog) : 0,
                                       .author = (char *)e->author,
                                       .url = (char *)e->url},
                           .rounds = e->rounds,
                           .pushes_probed = e->probed,
                           .jobs_spent = e->spent};
    snprintf(ev.project, sizeof ev.project, "%s", s->project);
    snprintf(ev.revision, sizeof ev.revision, "%s", s->revision);
    snprintf(ev.status, sizeof ev.status, "%s", e->status);
    snprintf(ev.reason, sizeof ev.reason, "%s", e->reason);
    snprintf(ev.culprit.revision, sizeof ev.culprit.revision, "%s", e->culprit ? e->culprit : "");
    snprintf(ev.range_first, sizeof ev.range_first, "%s", e->first);
    snprintf(ev.range_last, sizeof ev.range_last, "%s", e->last);
    char *text = rt_culprit_event_build(&ev); /* lent strings: nothing to free */
    char key[128], message_id[64];
    snprintf(key, sizeof key, "%s.culprit", s->project);
    snprintf(message_id, sizeof message_id, "culprit-%s", s->set_id);
    rt_amqp_publish_opts opts = {.message_id = message_id, .allow_unroutable = true};
    if (!text ||
        rt_amqp_publish(s->io->amqp, s->io->events, key, text, strlen(text), &opts) != RT_OK)
        rt_log_warn("cannot publish the culprit event", "set_id", s->set_id);
    free(text);
}

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
static seen push_tally(const search *s, long push_id, rt_culprit_tally *t, int *jobs)
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
    for (size_t i = 0; i < n && i < MAX_JOBS_SEEN && r == SEEN; i++) {
        switch (rt_culprit_job_kind_of(listed[i].state, listed[i].result)) {
        case RT_CJOB_PENDING: t->pending++; break;
        case RT_CJOB_PASSED: t->passed++; break;
        case RT_CJOB_NONE: t->none++; break;
        case RT_CJOB_FAILED: r = failed_job(s, listed[i].id, t); break;
        }
    }
    *jobs = (int)(n < MAX_JOBS_SEEN ? n : MAX_JOBS_SEEN);
out:
    free(listed);
    return r;
}

/* Stops the search with reason; true when this call stopped it. */
static bool stop(const search *s, const char *reason)
{
    bool changed = false;
    if (rt_culprit_searches_stop(s->io->pg, s->set_id, reason, &changed) != RT_OK || !changed) {
        rt_log_warn("culprit search not stopped (stopped before, or a database error)", "set_id",
                    s->set_id, "error", rt_pg_errstr(s->io->pg));
        return false;
    }
    rt_log_info("culprit search stopped", "set_id", s->set_id, "reason", reason);
    return true;
}

/* The window's pushes, oldest first, with what each showed. */
static json_t *window_document(const search *s, const rt_th_push *pushes, const int *jobs,
                               const rt_culprit_push *evidence, size_t n)
{
    rt_window_push *list = calloc(n + 1, sizeof *list);
    if (!list) return NULL;
    for (size_t i = 0; i < n; i++)
        list[i] = (rt_window_push){.revision = pushes[i].revision,
                                   .push_id = pushes[i].id,
                                   .author = pushes[i].author,
                                   .runs = evidence[i].runs,
                                   .reproduced = evidence[i].reproduced,
                                   .pending = evidence[i].pending,
                                   .base_jobs = jobs[i]};
    rt_window_start in = {.failing_push_id = s->failing_push_id,
                          .pushes = list,
                          .npushes = n,
                          .lines = s->lines,
                          .history_runs = s->history_runs,
                          .history_failures = s->history_failures,
                          .probe_rule =
                              s->classify == rt_culprit_adaptive_classify ? "adaptive" : "seed"};
    json_t *doc = rt_window_build(&in);
    free(list);
    return doc;
}

/* Stores the window and the search's first step. */
static void store(const search *s, const rt_th_push *pushes, const int *jobs,
                  const rt_culprit_push *evidence, size_t n, const rt_culprit_result *r)
{
    const rt__decide_culprit_io *io = s->io;
    json_t *doc = window_document(s, pushes, jobs, evidence, n);
    if (doc && r->status == RT_CULPRIT_SEARCHING && r->probe >= 0)
        json_object_set_new(
            doc, "next",
            rt_window_first_next_build(pushes[r->probe].revision, r->times,
                                       r->confirm >= 0 ? pushes[r->confirm].revision : NULL,
                                       r->confirm_times));
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
    rt_culprit_stored stored = {.set_id = s->set_id,
                                .window = text,
                                .status = rt_culprit_status_name(r->status),
                                .reason = r->reason,
                                .revision = culprit ? culprit->revision : NULL,
                                .pushlog_id = pushlog[0] ? pushlog : NULL,
                                .author = culprit ? culprit->author : NULL,
                                .url = culprit ? url : NULL,
                                .range_first = pushes[r->first].revision,
                                .range_last = pushes[r->last].revision};
    bool changed = false;
    if (rt_culprit_searches_store_window(io->pg, &stored, &changed) != RT_OK || !changed) {
        rt_log_warn("culprit window not stored (a replica stored it, or a database error)",
                    "set_id", s->set_id, "error", rt_pg_errstr(io->pg));
        free(text);
        return;
    }
    rt_log_info("culprit window found", "set_id", s->set_id, "status",
                rt_culprit_status_name(r->status), "reason", r->reason, "culprit",
                culprit ? culprit->revision : "-", "range_first", pushes[r->first].revision,
                "range_last", pushes[r->last].revision);
    if (r->status != RT_CULPRIT_SEARCHING) {
        ending e = {.status = rt_culprit_status_name(r->status),
                    .reason = r->reason,
                    .culprit = culprit ? culprit->revision : NULL,
                    .pushlog = pushlog[0] ? pushlog : NULL,
                    .author = culprit ? culprit->author : NULL,
                    .url = culprit ? url : NULL,
                    .first = pushes[r->first].revision,
                    .last = pushes[r->last].revision};
        publish_end(s, &e);
    }
    free(text);
}

/* The failing push and the pushes before it, newest first in `listed` (the failing push at
 * 0), walked back to the window's first push; then the window oldest first and its first
 * step. */
static void find_window(search *s)
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
        rt_culprit_tally t = {0};
        seen r = push_tally(s, listed[i].id, &t, &jobs_listed[i]);
        if (r == REFUSED) stop(s, "treeherder-refused");
        if (r != SEEN) goto out;
        rt_culprit_tally_push(&t, 0, 0, 0, false, &seen_listed[i]);
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
                           .model = search_model(s, s->failing_runs, s->failing_reproduced),
                           .jobs_left = io->cfg->culprit_max_jobs,
                           .classify = s->classify,
                           .classify_ctx = &s->adaptive};
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

/* ---- a search under way ---- */

static int member_int(json_t *o, const char *key)
{
    return (int)json_integer_value(json_object_get(o, key));
}

/* Publishes the probe request of a window push (its "request"). */
static int publish_request(const search *s, json_t *push)
{
    json_t *request = json_object_get(push, "request");
    rt_culprit_probe_request r = {.set_id = atoll(s->set_id),
                                  .times = member_int(request, "times"),
                                  .attempt = member_int(request, "attempt"),
                                  .round = member_int(request, "round"),
                                  .confirm = json_is_true(json_object_get(request, "confirm"))};
    snprintf(r.project, sizeof r.project, "%s", s->project);
    snprintf(r.revision, sizeof r.revision, "%s",
             json_string_value(json_object_get(push, "revision")));
    snprintf(r.label, sizeof r.label, "%s", s->label);
    snprintf(r.platform, sizeof r.platform, "%s", s->platform);
    snprintf(r.requested_at, sizeof r.requested_at, "%s",
             json_string_value(json_object_get(request, "at")));
    char *body = rt_culprit_probe_request_build(&r);
    if (!body) return RT_EINVAL;
    char message_id[128];
    snprintf(message_id, sizeof message_id, "culprit-probe-%s-%.12s-%d", s->set_id, r.revision,
             r.attempt);
    rt_amqp_publish_opts opts = {.message_id = message_id};
    int rc = rt_amqp_publish(s->io->amqp, s->io->cfg->amqp_namespace, "retrigger", body,
                             strlen(body), &opts);
    free(body);
    return rc;
}

/* Asks for `times` more runs on window push `index` in round `round`. */
static void ask(json_t *push, int times, int round, bool confirm, const char *at)
{
    int attempt = member_int(push, "attempts") + 1;
    json_object_set_new(push, "attempts", json_integer(attempt));
    json_object_set_new(push, "asked", json_integer(member_int(push, "asked") + times));
    json_object_set_new(push, "pending", json_integer(member_int(push, "pending") + times));
    json_object_set_new(push, "request",
                        rt_window_request_build(attempt, times, round, confirm, at));
}

/* The probes of the window, one per push probed, with what its runs show now. */
static json_t *probes_document(search *s, json_t *pushes, const rt_culprit_push *evidence, size_t n,
                               const rt_culprit_model *model)
{
    json_t *probes = json_array();
    size_t i;
    json_t *push;
    json_array_foreach(pushes, i, push)
    {
        json_t *request = json_object_get(push, "request");
        if (!request || !probes) continue;
        rt_window_probe probe = {
            .round = member_int(request, "round"),
            .revision = json_object_get(push, "revision"),
            .push_id = json_object_get(push, "push_id"),
            .times = member_int(push, "asked"),
            .runs = evidence[i].runs,
            .reproduced = evidence[i].reproduced,
            .class_name = rt_culprit_push_class_name(&evidence[i], i == 0, i + 1 == n, model, n,
                                                     s->classify, &s->adaptive),
            .confirm = json_is_true(json_object_get(request, "confirm")),
            .requested_at = json_object_get(request, "at")};
        json_array_append_new(probes, rt_window_probe_build(&probe));
    }
    return probes;
}

/* Whether the runs push waits for (pending, of which unlisted are not listed by Treeherder)
 * are late (culprit_probe_deadline_minutes): the reason the search stops with, or NULL. */
static const char *late(const search *s, json_t *push, int pending, int unlisted)
{
    json_t *request = json_object_get(push, "request");
    const char *why =
        rt_culprit_probe_late(pending, unlisted, json_string_value(json_object_get(request, "at")),
                              (long long)time(NULL), s->io->cfg->culprit_probe_deadline_minutes);
    if (why)
        rt_log_warn("culprit probe's runs late; the search stops", "set_id", s->set_id, "revision",
                    json_string_value(json_object_get(push, "revision")), "requested_at",
                    json_string_value(json_object_get(request, "at")), "reason", why);
    return why;
}

/* A probe's row in culprit_pending_probes; attempt 0, state and error "" when there is none. */
typedef struct probe_row {
    int attempt;
    char state[16];
    char error[RT_CULPRIT_REASON_SIZE];
} probe_row;

/* The probe row of revision into *row (left as it is when there is none). False: a database
 * error, logged. */
static bool read_probe(const search *s, const char *revision, probe_row *row)
{
    bool found = false;
    probe_row read = {0};
    if (rt_culprit_searches_probe(s->io->pg, s->set_id, revision, &read.attempt, read.state,
                                  read.error, sizeof read.error, &found) != RT_OK) {
        rt_log_warn("cannot read a culprit probe", "set_id", s->set_id, "error",
                    rt_pg_errstr(s->io->pg));
        return false;
    }
    if (found) *row = read;
    return true;
}

/* One poll of a search with its window: what each push showed so far, and the step it
 * leads to. */
typedef struct step {
    search *s;
    json_t *window, *pushes;
    size_t n;
    rt_culprit_push *evidence;
    bool *republish; /* pushes whose probe request is published (again) after the step */
    const char *stop_reason;
    char failed[RT_CULPRIT_REASON_SIZE];
    rt_culprit_result r;
    int spent;
} step;

static int probed_pushes(json_t *pushes, size_t n)
{
    int probed = 0;
    for (size_t i = 0; i < n; i++) probed += member_int(json_array_get(pushes, i), "attempts") > 0;
    return probed;
}

/* Push i's probe: its row, and the jobs of its push once the probe triggered. false on a
 * storage error (the poll ends; the next one looks again). */
static bool read_push(step *t, size_t i)
{
    search *s = t->s;
    json_t *push = json_array_get(t->pushes, i), *request = json_object_get(push, "request");
    rt_culprit_push *e = &t->evidence[i];
    *e = (rt_culprit_push){member_int(push, "runs"), member_int(push, "reproduced"),
                           member_int(push, "pending")};
    if (!request) return true;
    int attempt = member_int(request, "attempt");
    const char *revision = json_string_value(json_object_get(push, "revision"));
    probe_row row = {0};
    if (!read_probe(s, revision, &row)) return false;
    if (row.attempt < attempt) {
        t->republish[i] = true; /* not handled yet */
        if (!t->stop_reason) t->stop_reason = late(s, push, e->pending, e->pending);
        return true;
    }
    if (!strcmp(row.state, "failed")) {
        snprintf(t->failed, sizeof t->failed, "%s", row.error[0] ? row.error : "probe-failed");
        t->stop_reason = t->failed; /* budget-exhausted, refused-hook, no-decision-task, ... */
        return true;
    }
    if (!strcmp(row.state, "dry-run")) {
        t->stop_reason = "dry-run"; /* no runs will come */
        return true;
    }
    /* intent: a call under way; done: counted, unless the step that counted it was not
     * stored (its window still waits for runs). */
    bool recount = !strcmp(row.state, "done") && e->pending > 0;
    if (strcmp(row.state, "triggered") && !recount) {
        if (!t->stop_reason)
            t->stop_reason = late(s, push, e->pending, e->pending); /* no task made yet */
        return true;
    }
    rt_culprit_tally tally = {0};
    int seen_jobs = 0;
    seen r = push_tally(s, member_int(push, "push_id"), &tally, &seen_jobs);
    if (r == REFUSED) t->stop_reason = "treeherder-refused";
    if (r != SEEN) {
        if (!t->stop_reason) t->stop_reason = ""; /* not ready: look again at the next poll */
        return true;
    }
    rt_culprit_tally_push(&tally, member_int(push, "base_jobs"), seen_jobs,
                          member_int(push, "asked"), false, e);
    json_object_set_new(push, "runs", json_integer(e->runs));
    json_object_set_new(push, "reproduced", json_integer(e->reproduced));
    json_object_set_new(push, "pending", json_integer(e->pending));
    if (e->pending == 0) {
        if (rt_culprit_searches_probe_done(s->io->pg, s->set_id, revision, attempt) != RT_OK)
            return false;
    }
    int unlisted =
        rt_culprit_unlisted(member_int(push, "base_jobs"), member_int(push, "asked"), seen_jobs);
    if (!t->stop_reason) t->stop_reason = late(s, push, e->pending, unlisted);
    return true;
}

/* The search stopped by what a probe showed: stored, and its end published. */
static void end_stopped(step *t)
{
    search *s = t->s;
    if (!stop(s, t->stop_reason) || !s->range_first[0]) return;
    ending e = {.status = "stopped",
                .reason = t->stop_reason,
                .first = s->range_first,
                .last = s->range_last,
                .rounds = member_int(t->window, "rounds"),
                .probed = probed_pushes(t->pushes, t->n),
                .spent = s->jobs_spent};
    publish_end(s, &e);
}

/* The next round's probes (and the confirmation of the first push) marked in the window. */
static void ask_next(step *t)
{
    const rt_culprit_result *r = &t->r;
    t->spent = t->s->jobs_spent;
    if (r->status != RT_CULPRIT_SEARCHING || r->probe < 0) return;
    char at[40];
    rt_worker_utc_now(at);
    int round = member_int(t->window, "rounds") + 1;
    json_object_set_new(t->window, "rounds", json_integer(round));
    json_t *probe = json_array_get(t->pushes, (size_t)r->probe);
    ask(probe, r->times, round, false, at);
    json_object_set_new(
        t->window, "next",
        rt_window_next_build(json_string_value(json_object_get(probe, "revision")), r->times));
    t->republish[r->probe] = true;
    t->spent += r->times;
    t->evidence[r->probe].pending += r->times;
    if (r->confirm >= 0 && r->confirm != r->probe) {
        ask(json_array_get(t->pushes, (size_t)r->confirm), r->confirm_times, round, true, at);
        t->republish[r->confirm] = true;
        t->spent += r->confirm_times;
        t->evidence[r->confirm].pending += r->confirm_times;
    }
}

/* The step stored on the decision (exactly once), with the culprit's pushlog id and link
 * when found; then its end, or its probe requests, published. */
static void store_step(step *t, const rt_culprit_model *model)
{
    search *s = t->s;
    const rt__decide_culprit_io *io = s->io;
    const rt_culprit_result *r = &t->r;
    json_t *probes = probes_document(s, t->pushes, t->evidence, t->n, model);
    char *window_text = json_dumps(t->window, JSON_COMPACT);
    char *probes_text = probes ? json_dumps(probes, JSON_COMPACT) : NULL;
    json_t *culprit =
        r->status == RT_CULPRIT_FOUND ? json_array_get(t->pushes, (size_t)r->culprit) : NULL;
    const char *culprit_revision = json_string_value(json_object_get(culprit, "revision"));
    char pushlog[32] = "", url[1024] = "", spent_text[16];
    snprintf(spent_text, sizeof spent_text, "%d", t->spent);
    if (!window_text || !probes_text) goto out;
    if (culprit_revision) {
        char decision_task[23], errstr[RT_ERRSTR_SIZE] = "";
        long pushlog_id = 0;
        if (rt_tc_push_decision_task(io->http, io->cfg->taskcluster_root_url, s->project,
                                     culprit_revision, decision_task, &pushlog_id, NULL,
                                     errstr) == RT_OK &&
            pushlog_id > 0)
            snprintf(pushlog, sizeof pushlog, "%ld", pushlog_id);
        snprintf(url, sizeof url, "%s/jobs?repo=%s&revision=%s", io->cfg->treeherder_url,
                 s->project, culprit_revision);
    }
    rt_culprit_stored stored = {
        .set_id = s->set_id,
        .window = window_text,
        .probes = probes_text,
        .jobs_spent = spent_text,
        .status = rt_culprit_status_name(r->status),
        .reason = r->reason,
        .revision = culprit_revision,
        .pushlog_id = pushlog[0] ? pushlog : NULL,
        .author = culprit_revision ? json_string_value(json_object_get(culprit, "author")) : NULL,
        .url = culprit_revision ? url : NULL,
        .range_first = json_string_value(
            json_object_get(json_array_get(t->pushes, (size_t)r->first), "revision")),
        .range_last = json_string_value(
            json_object_get(json_array_get(t->pushes, (size_t)r->last), "revision"))};
    bool changed = false;
    if (rt_culprit_searches_step(io->pg, &stored, &changed) != RT_OK || !changed) {
        rt_log_warn("culprit search's step not stored; trying at the next poll", "set_id",
                    s->set_id, "error", rt_pg_errstr(io->pg));
        goto out;
    }
    if (r->status != RT_CULPRIT_SEARCHING) {
        rt_log_info("culprit search over", "set_id", s->set_id, "status",
                    rt_culprit_status_name(r->status), "reason", r->reason, "culprit",
                    culprit_revision ? culprit_revision : "-");
        ending e = {.status = rt_culprit_status_name(r->status),
                    .reason = r->reason,
                    .culprit = culprit_revision,
                    .pushlog = pushlog[0] ? pushlog : NULL,
                    .author = stored.author,
                    .url = culprit_revision ? url : NULL,
                    .first = stored.range_first,
                    .last = stored.range_last,
                    .rounds = member_int(t->window, "rounds"),
                    .probed = probed_pushes(t->pushes, t->n),
                    .spent = t->spent};
        publish_end(s, &e);
        goto out;
    }
    for (size_t i = 0; i < t->n; i++) {
        if (!t->republish[i]) continue;
        json_t *push = json_array_get(t->pushes, i);
        const char *revision = json_string_value(json_object_get(push, "revision"));
        if (publish_request(s, push) != RT_OK)
            rt_log_warn("cannot publish a culprit probe; publishing at the next poll", "set_id",
                        s->set_id, "revision", revision);
        else
            rt_log_info("culprit probe requested", "set_id", s->set_id, "revision", revision,
                        "reason", r->reason);
    }
out:
    json_decref(probes);
    free(window_text);
    free(probes_text);
}

/* A search with its window: the probes' runs, then the next step (more probes, or the
 * answer). Requests are published after the step is stored; a request lost in between (or
 * not handled yet) is published again at the next poll, and retrig-retrigger's row makes
 * it trigger at most once. A push whose jobs Treeherder cannot give yet (pending, logs not
 * parsed, a 5xx) ends the poll without a step: the next one looks again. */
static void go_on(search *s, const char *text)
{
    step t = {.s = s, .window = json_loads(text, 0, NULL)};
    t.pushes = json_object_get(t.window, "pushes");
    t.n = json_array_size(t.pushes);
    /* The test's history as the window recorded it: the same model for the whole search. */
    json_t *history = json_object_get(t.window, "history");
    s->history_runs = member_int(history, "runs");
    s->history_failures = member_int(history, "failures");
    t.evidence = calloc(t.n ? t.n : 1, sizeof *t.evidence);
    t.republish = calloc(t.n ? t.n : 1, sizeof *t.republish);
    if (!t.window || t.n < 2 || t.n > RT_CULPRIT_MAX_PUSHES || !t.evidence || !t.republish) {
        if (t.window && t.evidence && t.republish) stop(s, "invalid-window");
        goto out;
    }
    for (size_t i = 0; i < t.n && !t.stop_reason; i++)
        if (!read_push(&t, i)) goto out;
    if (t.stop_reason) {
        if (t.stop_reason[0]) end_stopped(&t);
        goto out;
    }
    const rt_culprit_push *failing = &t.evidence[t.n - 1];
    rt_culprit_input in = {.pushes = t.evidence,
                           .npushes = t.n,
                           .model = search_model(s, failing->runs, failing->reproduced),
                           .jobs_left = s->io->cfg->culprit_max_jobs > s->jobs_spent
                                            ? s->io->cfg->culprit_max_jobs - s->jobs_spent
                                            : 0,
                           .classify = s->classify,
                           .classify_ctx = &s->adaptive};
    if (rt_culprit_flow_next(&in, &t.r) != RT_OK) {
        rt_log_warn("culprit search refused its window", "set_id", s->set_id, "reason", t.r.reason);
        stop(s, "invalid-window");
        goto out;
    }
    ask_next(&t);
    store_step(&t, &in.model);
out:
    json_decref(t.window);
    free(t.evidence);
    free(t.republish);
}

/* The history of the regression's line (the one most retriggers reproduced) before the
 * failure, on other pushes: its test's runs and its failures with that line (any failure of
 * the test when the line has no signature). Without it (a lookup error, logged) the probes
 * are planned as for a test without history. */
static void load_history(search *s, const char *before)
{
    json_t *best = NULL, *line;
    long most = -1;
    size_t i;
    json_array_foreach(s->lines, i, line)
    {
        long k = (long)json_integer_value(json_object_get(line, "reproduced"));
        if (k > most) {
            most = k;
            best = line;
        }
    }
    const char *test = json_string_value(json_object_get(best, "test"));
    const char *signature = json_string_value(json_object_get(best, "line"));
    const char *hash = json_string_value(json_object_get(best, "hash"));
    if (!test || !test[0] || !signature || !hash || strlen(hash) != 16) return;
    rt_failure_line l = {.test = (char *)test, .signature = (char *)signature};
    snprintf(l.hash_hex, sizeof l.hash_hex, "%s", hash);
    const rt_config *cfg = s->io->cfg;
    rt_history_lookup q = {.repository = cfg->history_repository,
                           .window_days = cfg->history_flaky_window_days,
                           .min_branches = cfg->history_flaky_min_branches,
                           .project = s->project,
                           .revision = s->revision};
    rt_decide_history h;
    if (rt_history_model_counts(s->io->pg, &q, before, &l, 1, &h) != RT_OK) {
        rt_log_warn("cannot read the history of the regression's test; probing as for a test"
                    " without history",
                    "set_id", s->set_id, "error", rt_pg_errstr(s->io->pg));
        return;
    }
    s->history_runs = h.runs;
    s->history_failures = h.signature_failures >= 0 ? h.signature_failures : h.failures;
}

/* The search of one claimed decision, from its row. */
static void look_at(const rt__decide_culprit_io *io, const rt_culprit_claimed *row)
{
    search s = {.io = io, .label = row->label};
    s.classify = rt_culprit_classifier(rt_decide_policy_from_config(io->cfg), io->cfg, &s.adaptive);
    snprintf(s.set_id, sizeof s.set_id, "%s", row->set_id);
    snprintf(s.project, sizeof s.project, "%s", row->project);
    snprintf(s.revision, sizeof s.revision, "%s", row->revision);
    json_t *evidence = json_loads(row->evidence, 0, NULL);
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
        s.platform = row->platform;
        s.jobs_spent = (int)row->jobs_spent;
        s.range_first = row->range_first;
        s.range_last = row->range_last;
        const char *window = row->window;
        if (window[0]) {
            go_on(&s, window);
        } else {
            load_history(&s, row->failure_seen_at);
            find_window(&s);
        }
    }
    json_decref(evidence);
}

void rt__decide_culprit_poll(const rt__decide_culprit_io *io)
{
    rt_culprit_claimed *rows = NULL;
    size_t n = 0;
    if (rt_culprit_searches_claim(io->pg, io->cfg->culprit_poll_interval_s, CLAIM_BATCH, &rows,
                                  &n) != RT_OK) {
        rt_log_warn("cannot look for culprit searches", "error", rt_pg_errstr(io->pg));
        return;
    }
    for (size_t i = 0; i < n; i++) look_at(io, &rows[i]);
    rt_culprit_claimed_free(rows, n);
}
