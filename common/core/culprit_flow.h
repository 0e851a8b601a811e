/* SPDX-License-Identifier: MPL-2.0 */
/* culprit_flow.h - the rules of a culprit search as the workers run it in production, around
 * the bisection of culprit.h: what a Treeherder job of the failing label shows, where the
 * window of pushes starts, the next step, the probe request retrig-decide sends to
 * retrig-retrigger, and what retrig-retrigger does with a request given the row it finds
 * (the exactly-once rule). Pure: no I/O, no clock, no globals; thread-safe.
 *
 * The flow (workers/decide/culprit_flow.c, workers/retrigger/probe.c):
 *   1. retrig-decide records a regression on a project of culprit_projects; the search starts.
 *   2. The window: Treeherder's pushes before the failing push, newest first, each with the
 *      jobs of the failing label on it. The walk stops at the nearest push where the label
 *      ran and did not reproduce the regression's line (rt_culprit_walk_step), or at
 *      culprit_max_depth + 1 pushes back (then the window's first push has no evidence and
 *      the bisection may probe it too). The pushes in between are the candidates.
 *   3. Each round, rt_culprit_flow_next names the push to probe and how many runs; the probe
 *      request goes to retrig-retrigger, which runs Gecko's add-new-jobs action on that
 *      push's own decision task ({"tasks": [label], "times": n}) under the same budget,
 *      exactly-once and hook rules as a retrigger. The runs' jobs (Treeherder, with their
 *      bug_suggestions) classify the push good or bad (rt_culprit_tally_push, then the seed
 *      rule of culprit.h), and the search goes on until found, culprit-before-window or
 *      stopped.
 *
 * Exactly once. A probe request is (set, push, attempt): attempt 1 is the push's first
 * request, attempt k + 1 asks for more runs once attempt k's runs have all resolved. Each
 * (set, push) has one row in culprit_pending_probes (migrations 0015, 0025), written before
 * the hook is called; rt_culprit_probe_action tells what a request finding that row must do,
 * so that a redelivered request, a second worker or a worker killed in the middle of a call
 * never triggers add-new-jobs twice for one attempt. */
#ifndef RETRIG_COMMON_CULPRIT_FLOW_H
#define RETRIG_COMMON_CULPRIT_FLOW_H

#include <stdbool.h>
#include <stddef.h>

#include "common/core/culprit.h"
#include "common/core/errors.h"

/* ---- what the jobs of the label show ---- */

/* A Treeherder job of the failing label on a push, by its state and result:
 *   pending   state unscheduled, pending or running (its result is not known yet)
 *   failed    completed testfailed or busted: its failure lines tell whether it reproduced
 *             the regression (bug_suggestions; while its logs are not parsed it is pending)
 *   passed    completed success
 *   none      completed otherwise (exception, retry, usercancel, superseded, unknown): no
 *             evidence either way, as an exception is to the verdict. */
typedef enum {
    RT_CJOB_PENDING,
    RT_CJOB_FAILED,
    RT_CJOB_PASSED,
    RT_CJOB_NONE,
} rt_culprit_job_kind;

rt_culprit_job_kind rt_culprit_job_kind_of(const char *state, const char *result);

/* The settled jobs of the label on one push, as counted from Treeherder. */
typedef struct rt_culprit_tally {
    int passed;     /* passed */
    int reproduced; /* failed with the regression's failure line */
    int other;      /* failed without it */
    int none;       /* no evidence */
    int pending;    /* not finished, or failed with its logs not parsed yet */
} rt_culprit_tally;

/* A push's evidence for rt_culprit_next from its tally: runs = passed + reproduced + other,
 * and pending = the tally's pending plus the runs asked for that Treeherder does not list
 * yet, max(0, base_jobs + asked - seen_jobs) (base_jobs: the jobs listed when the window was
 * found; seen_jobs: listed now). give_up_missing: the runs asked for that never came are not
 * waited for any more (for a caller that would rather ask for more
 * than wait; retrig-decide stops the search instead, rt_culprit_probe_overdue). Each count is
 * capped at RT_CULPRIT_MAX_RUNS. */
void rt_culprit_tally_push(const rt_culprit_tally *tally, int base_jobs, int seen_jobs, int asked,
                           bool give_up_missing, rt_culprit_push *out);

/* ---- a probe whose runs never come ---- */

#define RT_CULPRIT_PROBE_TIMEOUT  "probe-timeout"  /* runs that never came */
#define RT_CULPRIT_PROBE_TOO_SLOW "probe-too-slow" /* runs that came and did not finish */
#define RT_CULPRIT_SLOW_FACTOR    3 /* how many deadlines runs that came are waited for */

/* Whether a probed push's runs are late, and how: NULL while they are not. The push waits
 * for `pending` runs (its request not handled yet, its add-new-jobs call under way, or the
 * runs asked for not all listed or finished), of which `unlisted` are not even listed by
 * Treeherder; its request was made at requested_at (the request's RFC 3339 UTC time,
 * YYYY-MM-DDTHH:MM:SS[.fff]Z); now_s is seconds since the epoch.
 *   RT_CULPRIT_PROBE_TIMEOUT   deadline_minutes after the request, some runs are still not
 *                              listed: they never came (a task that was not created, or
 *                              lost). A requested_at that is not such a time is one too:
 *                              the request cannot be sent again.
 *   RT_CULPRIT_PROBE_TOO_SLOW  every run is listed but some have not finished (queued
 *                              behind other work, running, or their logs not parsed)
 *                              RT_CULPRIT_SLOW_FACTOR deadlines after the request: a slow
 *                              probe is waited for that much longer before the search
 *                              gives up on it.
 * The search then stops with that reason and the range that still holds the culprit
 * (culprit_probe_deadline_minutes). */
const char *rt_culprit_probe_late(int pending, int unlisted, const char *requested_at,
                                  long long now_s, int deadline_minutes);

/* Runs asked for that Treeherder does not list yet: max(0, base_jobs + asked - seen_jobs)
 * (as rt_culprit_tally_push counts them). */
int rt_culprit_unlisted(int base_jobs, int asked, int seen_jobs);

/* ---- the window ---- */

typedef enum {
    RT_WALK_MORE,  /* a candidate: the label did not run here, or it ran and reproduced */
    RT_WALK_FIRST, /* the window's first push */
} rt_culprit_walk;

/* The `index`-th push before the failing push (0: the one just before), with its evidence:
 * the window's first push when the label ran on it and reproduced nothing (runs > 0,
 * reproduced 0: passed, or failed differently), or when it is max_depth + 1 pushes back (a
 * window holds at most max_depth candidates). A push where the label ran and reproduced the
 * line is a candidate with its runs: the culprit is at or before it. */
rt_culprit_walk rt_culprit_walk_step(const rt_culprit_push *push, int index, int max_depth);

/* The next step of the search over the window (oldest first, the failing push last):
 * rt_culprit_next, except that a window of only the first push and the failing push, where
 * the label ran on the first push and reproduced nothing, names the failing push at once
 * (found, reason "no-candidate", no probe: no push is left between them, as issue 24 asks;
 * rt_culprit_next alone would first confirm a first push that ran fewer times than a
 * classification needs). Same errors as rt_culprit_next. */
RT_MUSTCHECK int rt_culprit_flow_next(const rt_culprit_input *in, rt_culprit_result *out);

/* The class a push's evidence gives under classify (NULL: the seed rule; ctx its context)
 * with the push confidence of a window of npushes pushes ("good", "bad", "open"); the failing
 * push (last) is "bad". */
const char *rt_culprit_push_class_name(const rt_culprit_push *push, bool first, bool failing,
                                       const rt_culprit_model *model, size_t npushes,
                                       rt_culprit_classify_fn classify, void *ctx);

/* A culprit_projects glob as a SQL LIKE pattern (escape character: backslash): '*' is '%',
 * '?' is '_', and '%', '_' and backslash stand for themselves. Other characters, '[' included, are
 * literal (a bracket class of fnmatch is not supported). False when out is too small. */
bool rt_culprit_glob_like(const char *glob, char *out, size_t size);

/* ---- the probe request (queue-schemas/culprit-probe-request.json) ---- */

#define RT_CULPRIT_PROBE_KIND      "culprit-probe"
#define RT_CULPRIT_MAX_ATTEMPTS    100 /* requests for one push */
#define RT_CULPRIT_MAX_ROUNDS      1000
#define RT_CULPRIT_PROBE_LABEL_MAX 512

/* Published by retrig-decide on the work exchange with routing key "retrigger" (into the
 * retrigger queue, beside the retrigger requests); body {"version": 1, "kind":
 * "culprit-probe", "set_id", "project", "revision", "label", "platform", "times",
 * "attempt", "round", "confirm", "requested_at"}. */
typedef struct rt_culprit_probe_request {
    long long set_id;
    char project[65];
    char revision[41]; /* the probed push, 40 hex digits */
    char label[RT_CULPRIT_PROBE_LABEL_MAX + 1];
    char platform[RT_CULPRIT_PROBE_LABEL_MAX + 1];
    int times;    /* 1..RT_CULPRIT_MAX_TIMES */
    int attempt;  /* 1..RT_CULPRIT_MAX_ATTEMPTS */
    int round;    /* 1..RT_CULPRIT_MAX_ROUNDS */
    bool confirm; /* the window's first push, confirmed beside the round's probe */
    char requested_at[40];
} rt_culprit_probe_request;

/* RT_ENOTFOUND when the body is a JSON object without "kind" (another message of the queue:
 * a retrigger request); RT_OK; RT_EPROTO with reason (RT_MESSAGE_REASON_SIZE) for a probe
 * request that is not valid ("missing-field:times", ...). Unknown members are refused. */
RT_MUSTCHECK int rt_culprit_probe_request_parse(const char *body, size_t len,
                                                rt_culprit_probe_request *out, char *reason);
/* A malloc'd JSON text of the request; NULL when out of memory or invalid. */
char *rt_culprit_probe_request_build(const rt_culprit_probe_request *req);

/* ---- exactly once (retrig-retrigger) ---- */

/* The (set, push) row of culprit_pending_probes a request finds, read under the set's lock. */
typedef struct rt_culprit_probe_row {
    bool exists;
    int attempt;
    const char *state;       /* intent, triggered, dry-run, done, failed */
    int calls;               /* hook calls made for the attempt */
    long long since_call_ms; /* since the last call started (intent_at) */
} rt_culprit_probe_row;

typedef enum {
    RT_PROBE_CREATE,  /* no row: record attempt 1's intent, then call */
    RT_PROBE_NEXT,    /* the previous attempt is done: move the row to this attempt, then call */
    RT_PROBE_CALL,    /* the intent is recorded and no call was made: call */
    RT_PROBE_LOOK_UP, /* a call was made and its outcome is unknown: look for its action task
                         in the push's task group; call only when there is none */
    RT_PROBE_WAIT,    /* a call may still be in flight, or the previous attempt is not done
                         yet: look again later */
    RT_PROBE_DONE,    /* handled before (or the search moved on): nothing to do */
    RT_PROBE_STALE,   /* a request that cannot follow from the row: dead-letter it */
} rt_culprit_probe_action;

/* What a request for `attempt` does with the row. call_ms: how long a call may take at most
 * (connect and total timeouts); a call started less than that ago may still create its
 * action task, so it is not looked up yet. */
rt_culprit_probe_action rt_culprit_probe_action_for(const rt_culprit_probe_row *row, int attempt,
                                                    long long call_ms);
const char *rt_culprit_probe_action_name(rt_culprit_probe_action action);

#endif
