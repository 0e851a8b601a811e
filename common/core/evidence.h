/* SPDX-License-Identifier: MPL-2.0 */
/* evidence.h - the JSON documents the workers store in Postgres beside their rows, built here
 * from typed values so that their shape has one home: the runs already on a push that
 * retrig-classify hands classify_create_set, the evidence of a decision (decisions.evidence:
 * the lines, the runs, the counts, and the verdict policy's view added to it), the record of
 * cancelled retriggers, and the state of a culprit search (decisions.culprit_window: the
 * window's pushes, their probe requests, the next step). docs/data.md describes the fields.
 * Builders return new references (NULL when out of memory) or malloc'd texts; an "add"
 * function adds members to a document and returns RT_ENOMEM when it could not. Pure. */
#ifndef RETRIG_COMMON_CORE_EVIDENCE_H
#define RETRIG_COMMON_CORE_EVIDENCE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/core/decide_model.h"
#include "common/core/decide_rounds.h"
#include "common/core/errors.h"
#include "common/core/events.h"

/* ---- retrig-classify ---- */

/* A run of the label already on the push (member_state name: completed, failed, ...). */
typedef struct rt_found_run {
    const char *task_id;
    int run_id;
    const char *state;
} rt_found_run;

/* [{task_id, run_id, state}] as classify_create_set takes it; malloc'd, NULL: out of memory
 * (never a shorter list: a run left out would be retriggered). */
char *rt_found_runs_json(const rt_found_run *runs, size_t n);

/* ---- retrig-decide: the decision ---- */

typedef struct rt_evidence_line {
    const char *signature, *test, *hash_hex;
    const rt_event_task_id *reproduced_by; /* the retriggers that reproduced it, each once */
    size_t nreproduced_by;
    json_t *history; /* borrowed: its cross-branch history (history.h), NULL: none */
} rt_evidence_line;

typedef struct rt_evidence_tracked {
    const char *line; /* signature of a line with a tracking bug */
    long long bug;
} rt_evidence_tracked;

typedef struct rt_evidence_run {
    const char *task_id;
    int run_id;
    bool found;               /* role found (on the push before the set), else requested */
    const char *member_state; /* retrigger_members.state */
    const char *evidence;     /* what the verdict made of it (rt_run_state_name) */
    bool reproduced;
    long job_id; /* 0: unknown, left out */
    bool have_lines;
    size_t nlines; /* its failure lines, when have_lines */
} rt_evidence_run;

typedef struct rt_decision_evidence {
    int threshold;
    const char *verdict, *reason;
    struct {
        const char *task_id;
        int run_id;
        const char *evidence;
        long job_id;  /* 0: unknown, left out */
        long push_id; /* 0: unknown, left out */
    } original;
    const rt_evidence_line *lines;
    size_t nlines;
    const rt_evidence_tracked *tracked;
    size_t ntracked;
    const rt_evidence_run *runs;
    size_t nruns;
    struct {
        int requested, found, compared, passed, failed, exceptions, no_data, pending, missing;
    } counts;
    const char *failure_seen_at, *retriggers_requested_at /* NULL: unknown */, *decided_at;
    bool deadline;
    int attempt;
    const char *request_reason;
    int classification_id; /* -1: unknown, left out */
    const char *detail;    /* NULL or "": none */
} rt_decision_evidence;

/* decisions.evidence without the policy's view (rt_policy_evidence_add adds it). */
json_t *rt_decision_evidence_build(const rt_decision_evidence *in);

/* The verdict policy's view of the set (docs/data.md "policy"). */
typedef struct rt_policy_evidence {
    rt_policy policy, shadow;
    bool loaded; /* the set's rounds were read: rounds, retriggers, found, refused */
    int rounds;
    size_t retriggers, found;
    bool refused;
    const rt_round_plan *plan; /* NULL: the policy was not evaluated */
    const rt_decide_settings *settings;
    const rt_decide_history *history; /* a line of the original each, with plan */
    size_t nlines;
    long likeliest; /* the line of the highest p_regression, -1: none */
} rt_policy_evidence;

/* Adds "policy" to stored, and with a plan each line's "model" and "p_regression" (stored's
 * "lines" must hold in->nlines) and the likeliest line's "p_regression". */
RT_MUSTCHECK int rt_policy_evidence_add(json_t *stored, const rt_policy_evidence *in);

/* The record of retriggers cancelled once decided: {count, task_ids, estimated_seconds_saved};
 * malloc'd, NULL: out of memory. */
char *rt_cancelled_json(const rt_event_task_id *task_ids, size_t n, long seconds_each);

/* ---- retrig-decide: the culprit search ---- */

/* A push of the window as first seen. */
typedef struct rt_window_push {
    const char *revision;
    long long push_id;
    const char *author;
    int runs, reproduced, pending, base_jobs;
} rt_window_push;

typedef struct rt_window_start {
    long long failing_push_id;
    const rt_window_push *pushes; /* oldest first */
    size_t npushes;
    json_t *lines; /* borrowed: the regression's lines ("line" of each is kept) */
    long history_runs, history_failures;
    const char *probe_rule; /* "adaptive" or "seed" */
} rt_window_start;

/* The window document of a new search: its pushes (asked 0, attempts 0), round 0, the lines'
 * signatures, the history and the probe rule. */
json_t *rt_window_build(const rt_window_start *in);
/* "next" of a new window: the push to probe and its runs, and the window's first push to
 * confirm (confirm NULL: none, confirm_times then 0 as stored). */
json_t *rt_window_first_next_build(const char *revision, int times, const char *confirm,
                                   int confirm_times);
/* "next" of a later round: the push to probe and its runs. */
json_t *rt_window_next_build(const char *revision, int times);
/* "request" of a window push: the attempt asked, its runs, round, confirm flag and time. */
json_t *rt_window_request_build(int attempt, int times, int round, bool confirm, const char *at);

/* A probe of the search as the decision's culprit probes list it. */
typedef struct rt_window_probe {
    int round;
    json_t *revision, *push_id; /* borrowed from the window push */
    int times, runs, reproduced;
    const char *class_name;
    bool confirm;
    json_t *requested_at; /* borrowed */
} rt_window_probe;

json_t *rt_window_probe_build(const rt_window_probe *in);

#endif
