/* SPDX-License-Identifier: MPL-2.0 */
/* evidence.c - build the documents the workers store in Postgres (evidence.h). */
#include "common/core/evidence.h"

#include <stdlib.h>

/* Appends value (stolen) to array; false when value is NULL or the append failed. */
static bool append(json_t *array, json_t *value)
{
    return value && json_array_append_new(array, value) == 0;
}

/* Sets key of o to value (stolen); false when value is NULL or the set failed. */
static bool set(json_t *o, const char *key, json_t *value)
{
    return value && json_object_set_new(o, key, value) == 0;
}

static char *dump(json_t *o)
{
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    return text;
}

static json_t *task_ids(const rt_event_task_id *ids, size_t n)
{
    json_t *list = json_array();
    for (size_t i = 0; list && i < n; i++)
        if (!append(list, json_string(ids[i]))) {
            json_decref(list);
            return NULL;
        }
    return list;
}

char *rt_found_runs_json(const rt_found_run *runs, size_t n)
{
    json_t *list = json_array();
    for (size_t i = 0; list && i < n; i++)
        if (!append(list, json_pack("{s:s, s:i, s:s}", "task_id", runs[i].task_id, "run_id",
                                    runs[i].run_id, "state", runs[i].state))) {
            json_decref(list);
            return NULL;
        }
    return dump(list);
}

/* ---- the decision ---- */

static json_t *evidence_lines(const rt_decision_evidence *in)
{
    json_t *lines = json_array();
    for (size_t i = 0; lines && i < in->nlines; i++) {
        const rt_evidence_line *l = &in->lines[i];
        json_t *by = task_ids(l->reproduced_by, l->nreproduced_by);
        json_t *o = by ? json_pack("{s:s, s:s, s:s, s:i, s:o}", "line", l->signature, "test",
                                   l->test, "hash", l->hash_hex, "reproduced",
                                   (int)l->nreproduced_by, "reproduced_by", by)
                       : NULL;
        if (!append(lines, o) || (l->history && json_object_set(o, "history", l->history))) {
            json_decref(lines);
            return NULL;
        }
    }
    return lines;
}

static json_t *evidence_runs(const rt_decision_evidence *in)
{
    json_t *runs = json_array();
    for (size_t k = 0; runs && k < in->nruns; k++) {
        const rt_evidence_run *run = &in->runs[k];
        json_t *o =
            json_pack("{s:s, s:i, s:s, s:s, s:s, s:b}", "task_id", run->task_id, "run_id",
                      run->run_id, "role", run->found ? "found" : "requested", "state",
                      run->member_state, "evidence", run->evidence, "reproduced", run->reproduced);
        bool whole = append(runs, o);
        if (whole && run->job_id) whole = set(o, "job_id", json_integer(run->job_id));
        if (whole && run->have_lines)
            whole = set(o, "lines", json_integer((json_int_t)run->nlines));
        if (!whole) {
            json_decref(runs);
            return NULL;
        }
    }
    return runs;
}

json_t *rt_decision_evidence_build(const rt_decision_evidence *in)
{
    json_t *lines = evidence_lines(in), *runs = evidence_runs(in), *tracked = json_array();
    for (size_t i = 0; tracked && i < in->ntracked; i++)
        if (!append(tracked, json_pack("{s:s, s:I}", "line", in->tracked[i].line, "bug",
                                       (json_int_t)in->tracked[i].bug))) {
            json_decref(tracked);
            tracked = NULL;
        }
    json_t *original = json_pack("{s:s, s:i, s:s}", "task_id", in->original.task_id, "run_id",
                                 in->original.run_id, "evidence", in->original.evidence);
    bool whole = lines && runs && tracked && original;
    if (whole && in->original.job_id)
        whole = set(original, "job_id", json_integer(in->original.job_id));
    if (whole && in->original.push_id > 0) /* the culprit search's failing push */
        whole = set(original, "push_id", json_integer(in->original.push_id));
    json_t *times = json_pack("{s:s, s:s?, s:s}", "failure_seen_at", in->failure_seen_at,
                              "retriggers_requested_at", in->retriggers_requested_at, "decided_at",
                              in->decided_at);
    json_t *counts = json_pack(
        "{s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i}", "requested", in->counts.requested, "found",
        in->counts.found, "compared", in->counts.compared, "passed", in->counts.passed, "failed",
        in->counts.failed, "exceptions", in->counts.exceptions, "no_data", in->counts.no_data,
        "pending", in->counts.pending, "missing", in->counts.missing);
    json_t *stored = NULL;
    if (whole && times && counts) { /* "o" steals each, also when packing fails */
        stored = json_pack("{s:i, s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:b, s:i, s:s}",
                           "threshold", in->threshold, "verdict", in->verdict, "reason", in->reason,
                           "original", original, "lines", lines, "tracked", tracked, "runs", runs,
                           "counts", counts, "times", times, "deadline", in->deadline, "attempt",
                           in->attempt, "request_reason", in->request_reason);
        lines = runs = tracked = original = times = counts = NULL;
    }
    json_decref(lines);
    json_decref(runs);
    json_decref(tracked);
    json_decref(original);
    json_decref(times);
    json_decref(counts);
    whole = stored != NULL;
    if (whole && in->classification_id >= 0)
        whole = set(stored, "classification_id", json_integer(in->classification_id));
    if (whole && in->detail && in->detail[0])
        whole = set(stored, "detail", json_string(in->detail));
    if (!whole) {
        json_decref(stored);
        return NULL;
    }
    return stored;
}

static json_t *outcome_json(const rt_policy_outcome *o)
{
    return json_pack("{s:s, s:s, s:I}", "verdict", rt_verdict_name(o->verdict), "reason", o->reason,
                     "more", (json_int_t)o->more);
}

/* The plan's members of policy, and each line's model in stored. */
static bool add_plan(json_t *policy, json_t *stored, const rt_policy_evidence *in)
{
    const rt_round_plan *plan = in->plan;
    const rt_decide_settings *m = in->settings;
    json_t *outcomes = json_object();
    bool whole = set(policy, "outcomes", outcomes);
    for (size_t p = 0; whole && p < RT_POLICY_COUNT; p++)
        whole = set(outcomes, rt_policy_name((rt_policy)p), outcome_json(&plan->result.outcome[p]));
    whole =
        whole &&
        set(policy, "settings",
            json_pack("{s:f, s:f, s:i, s:i, s:i}", "confidence", m->confidence, "prior_regression",
                      m->prior_regression, "max_retriggers", m->max_retriggers, "first_batch_min",
                      m->first_batch_min, "first_batch_max", m->first_batch_max)) &&
        set(policy, "spent", json_integer((json_int_t)plan->spent));
    /* Each line of the original: its p_regression and the history the model used. */
    json_t *lines = json_object_get(stored, "lines");
    whole = whole && json_array_size(lines) == in->nlines;
    for (size_t i = 0; whole && i < in->nlines; i++) {
        const rt_decide_history *hist = &in->history[i];
        json_t *line = json_array_get(lines, i);
        whole = set(line, "model",
                    json_pack("{s:I, s:I, s:I}", "runs", (json_int_t)hist->runs, "failures",
                              (json_int_t)hist->failures, "signature_failures",
                              (json_int_t)hist->signature_failures)) &&
                set(line, "p_regression", json_real(plan->result.p_regression[i]));
    }
    if (whole && in->likeliest >= 0)
        whole = set(stored, "p_regression", json_real(plan->result.p_regression[in->likeliest]));
    return whole;
}

int rt_policy_evidence_add(json_t *stored, const rt_policy_evidence *in)
{
    json_t *policy = json_pack("{s:s, s:s}", "name", rt_policy_name(in->policy), "shadow",
                               rt_policy_name(in->shadow));
    bool whole = policy != NULL;
    if (whole && in->loaded)
        whole = set(policy, "rounds", json_integer(in->rounds)) &&
                set(policy, "retriggers", json_integer((json_int_t)in->retriggers)) &&
                set(policy, "found", json_integer((json_int_t)in->found)) &&
                set(policy, "refused", json_boolean(in->refused));
    if (whole && in->plan) whole = add_plan(policy, stored, in);
    if (!whole) {
        json_decref(policy);
        return RT_ENOMEM;
    }
    return set(stored, "policy", policy) ? RT_OK : RT_ENOMEM;
}

char *rt_cancelled_json(const rt_event_task_id *ids, size_t n, long seconds_each)
{
    json_t *list = task_ids(ids, n);
    return dump(list ? json_pack("{s:i, s:o, s:I}", "count", (int)n, "task_ids", list,
                                 "estimated_seconds_saved", (json_int_t)n * seconds_each)
                     : NULL);
}

/* ---- the culprit search ---- */

json_t *rt_window_build(const rt_window_start *in)
{
    json_t *list = json_array(), *sigs = json_array();
    for (size_t i = 0; list && i < in->npushes; i++) {
        const rt_window_push *p = &in->pushes[i];
        json_array_append_new(
            list, json_pack("{s:s, s:I, s:s, s:i, s:i, s:i, s:i, s:i, s:i}", "revision",
                            p->revision, "push_id", (json_int_t)p->push_id, "author", p->author,
                            "runs", p->runs, "reproduced", p->reproduced, "pending", p->pending,
                            "base_jobs", p->base_jobs, "asked", 0, "attempts", 0));
    }
    size_t i;
    json_t *line;
    json_array_foreach(in->lines, i, line)
    {
        json_t *sig = json_object_get(line, "line");
        if (sigs && json_is_string(sig)) json_array_append(sigs, sig);
    }
    return json_pack("{s:I, s:o*, s:i, s:o*, s:{s:I, s:I}, s:s}", "failing_push_id",
                     (json_int_t)in->failing_push_id, "pushes", list, "rounds", 0, "lines", sigs,
                     "history", "runs", (json_int_t)in->history_runs, "failures",
                     (json_int_t)in->history_failures, "probe_rule", in->probe_rule);
}

json_t *rt_window_first_next_build(const char *revision, int times, const char *confirm,
                                   int confirm_times)
{
    return json_pack("{s:s, s:i, s:s?, s:i}", "revision", revision, "times", times, "confirm",
                     confirm, "confirm_times", confirm ? confirm_times : 0);
}

json_t *rt_window_next_build(const char *revision, int times)
{
    return json_pack("{s:s, s:i}", "revision", revision, "times", times);
}

json_t *rt_window_request_build(int attempt, int times, int round, bool confirm, const char *at)
{
    return json_pack("{s:i, s:i, s:i, s:b, s:s}", "attempt", attempt, "times", times, "round",
                     round, "confirm", confirm, "at", at);
}

json_t *rt_window_probe_build(const rt_window_probe *in)
{
    return json_pack("{s:i, s:O, s:O, s:i, s:i, s:i, s:s, s:b, s:O}", "round", in->round,
                     "revision", in->revision, "push_id", in->push_id, "times", in->times, "runs",
                     in->runs, "reproduced", in->reproduced, "class", in->class_name, "confirm",
                     in->confirm, "requested_at", in->requested_at);
}
