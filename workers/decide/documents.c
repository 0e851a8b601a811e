/* SPDX-License-Identifier: MPL-2.0 */
/* documents.c - what retrig-decide's decision stores and publishes (decide.h): each run's
 * result, the decision event (common/core/events.h), the stored evidence
 * (common/core/evidence.h) and the cross-branch history of each line. */
#include "workers/decide/decide.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/decide_step.h"
#include "common/core/evidence.h"
#include "common/core/history.h"
#include "common/core/ids.h"
#include "common/core/retrigger_set.h"
#include "common/core/utf8.h"
#include "common/io/history_store.h"
#include "common/io/log.h"
#include "common/io/metrics.h"
#include "common/io/upstream.h"
#include "common/options.h"
#include "common/store/decide_sets.h"

bool decide_run_has_line(const run_info *r, const rt_failure_line *line)
{
    if (r->state != RT_RUN_FAILED || !r->have_lines) return false;
    for (size_t k = 0; k < r->lines.nlines; k++)
        if (rt_failure_line_equal(&r->lines.lines[k], line)) return true;
    return false;
}

const char *decide_member_result(const run_info *r, bool reproduced)
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
        if (!decide_run_has_line(&e->runs[k], line)) continue;
        size_t j = 0;
        while (j < n && strcmp(ids[j], e->runs[k].task_id)) j++;
        if (j == n) memcpy(ids[n++], e->runs[k].task_id, sizeof *ids);
    }
    return n;
}

/* The decision event for bots (queue-schemas/decision-event.json): a malloc'd text, NULL when
 * out of memory. Each line with the retriggers that reproduced it, and the retriggers that
 * had resolved (at most EVENT_MAX_TASKS). */
char *decide_event_text(const decide *w, const evidence *e, const char *decided_at)
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
int decide_build_documents(decide *w, const evidence *e, const rt_decide_request *req,
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
            if (decide_run_has_line(run, &e->original.lines.lines[i])) reproduced = true;
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
void decide_look_up_history(decide *w, evidence *e)
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
