/* SPDX-License-Identifier: MPL-2.0 */
/* gather.c - retrig-decide's evidence (decide.h): the set's members from Postgres, then for
 * the original run and each member Treeherder's job, its logs' parse status and its
 * bug_suggestions, normalised to TEST-UNEXPECTED lines (common/core/bugsug.h), and the
 * verdict on them (common/core/verdict.h). What is not readable yet is noted as a wait. */
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
_Static_assert(sizeof((run_info *)0)->task_id == sizeof((rt_decide_member *)0)->task_id &&
                   sizeof((run_info *)0)->member_state == sizeof((rt_decide_member *)0)->state,
               "a member's texts are copied whole");

static int load_members(decide *w, evidence *e, size_t *distinct, rt_outcome *h)
{
    const set_info *s = &e->set;
    rt_decide_member members[RT_VERDICT_MAX_RUNS];
    size_t n = 0;
    if (rt_decide_sets_members(w->pg, s->id, s->original_task_id, s->original_run_id, members,
                               RT_VERDICT_MAX_RUNS - e->nruns, &n) != RT_OK) {
        rt_outcome_set(h, RT_SETTLE_REQUEUE, "postgres: %s", rt_pg_errstr(w->pg));
        return RT_EDB;
    }
    for (size_t i = 0; i < n; i++) {
        run_info *r = &e->runs[e->nruns++];
        memcpy(r->task_id, members[i].task_id, sizeof r->task_id);
        r->run_id = members[i].run_id;
        memcpy(r->member_state, members[i].state, sizeof r->member_state);
        r->found = members[i].found;
        bool seen = r->found;
        for (size_t k = 0; k + 1 < e->nruns && !seen; k++)
            if (!e->runs[k].found && !strcmp(e->runs[k].task_id, r->task_id)) seen = true;
        if (!seen) (*distinct)++;
    }
    return RT_OK;
}

/* Fills e from Postgres and Treeherder and runs the verdict. */
int decide_gather(decide *w, evidence *e, rt_outcome *h)
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
