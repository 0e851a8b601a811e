/* SPDX-License-Identifier: MPL-2.0 */
/* verdict.h - regression or intermittent, from the failure lines of the original run and
 * of its retriggers. Pure: no I/O, no clock, no allocation; thread-safe.
 *
 * A retrigger reproduces an original line when it failed and its lines hold the same
 * failure (rt_failure_line_equal). With threshold N (default 2):
 *   regression    some original line is reproduced by N or more retriggers. Decided as
 *                 soon as that happens, even with retriggers still pending.
 *   intermittent  no line can reach N any more: for every line, reproductions so far plus
 *                 retriggers still pending < N, and at least one retrigger gave evidence.
 *                 Reason "not-reproduced" when no retrigger is pending, else
 *                 "cannot-reach-threshold" (decided early).
 *   not-yet       the verdict can still change: wait for the pending retriggers.
 *   undecided     the data cannot decide: "no-failure-lines" (the original has no
 *                 failure line to compare), "no-usable-retriggers" (every retrigger
 *                 was an exception or had no data), or a reason from the worker
 *                 (rt_verdict_undecided: logs-not-parsed, job-not-ingested, upstream-error;
 *                 past the deadline retriggers-missing, upstream-unavailable: decide_step.h).
 * Evidence: a retrigger that passed reproduced nothing; one that failed reproduced the
 * original lines it shares. An exception, or a run without data (logs failed or skipped
 * for size), counts neither way. A failed run whose logs are not parsed yet is pending.
 * A single tracking bug (bugsug.h) is context, never evidence: a line it tracks is compared
 * like any other. A regression is named by an untracked line reaching N when there is one
 * (reason "reproduced"); when only tracked lines reach N the reason is
 * "reproduced-known-intermittent": a known intermittent that now reproduces, which sheriffs
 * must see. A failure line is TEST-UNEXPECTED-* or PROCESS-CRASH (failure_line.h). */
#ifndef RETRIG_COMMON_VERDICT_H
#define RETRIG_COMMON_VERDICT_H

#include <stdbool.h>
#include <stddef.h>

#include "common/core/bugsug.h"
#include "common/core/errors.h"
#include "common/core/failure_line.h"

#define RT_VERDICT_MAX_LINES         RT_BUGSUG_MAX_LINES
#define RT_VERDICT_MAX_RUNS          64
#define RT_VERDICT_DEFAULT_THRESHOLD 2
#define RT_VERDICT_REASON_SIZE       64

/* Reasons the worker passes to rt_verdict_undecided. */
#define RT_UNDECIDED_LOGS_NOT_PARSED  "logs-not-parsed"
#define RT_UNDECIDED_JOB_NOT_INGESTED "job-not-ingested"
#define RT_UNDECIDED_UPSTREAM_ERROR   "upstream-error"

typedef enum {
    RT_RUN_PENDING,   /* not finished, or finished but its logs are not parsed yet */
    RT_RUN_PASSED,    /* completed successfully: reproduced nothing */
    RT_RUN_FAILED,    /* failed, with its (possibly empty) failure lines */
    RT_RUN_EXCEPTION, /* exception (worker lost, deadline, cancelled): counts neither way */
    RT_RUN_NO_DATA,   /* failed but its logs failed to parse or were skipped for size */
} rt_run_state;

typedef enum {
    RT_VERDICT_NOT_YET,
    RT_VERDICT_REGRESSION,
    RT_VERDICT_INTERMITTENT,
    RT_VERDICT_UNDECIDED,
} rt_verdict;

typedef struct rt_verdict_run {
    rt_run_state state;
    const rt_failure_line *lines; /* RT_RUN_FAILED only */
    size_t nlines;
} rt_verdict_run;

typedef struct rt_verdict_input {
    const rt_failure_line *original; /* the original run's failure lines (bugsug.h) */
    size_t noriginal;                /* at most RT_VERDICT_MAX_LINES */
    const bool *original_tracked;    /* per original line: an open single tracking bug (context
                                      * for the reason only); NULL: none */
    const rt_verdict_run *runs;      /* the retriggers */
    size_t nruns;                    /* at most RT_VERDICT_MAX_RUNS */
    int threshold;                   /* N >= 1 */
} rt_verdict_input;

typedef struct rt_verdict_result {
    rt_verdict verdict;
    char reason[RT_VERDICT_REASON_SIZE];
    size_t reproduced[RT_VERDICT_MAX_LINES]; /* per original line: retriggers reproducing it */
    long regression_line; /* the line the regression is named by (first untracked line
                           * reaching N, else first tracked one), -1 when none */
    bool run_counts[RT_VERDICT_MAX_RUNS];     /* the retrigger gave evidence (passed/failed) */
    bool run_reproduced[RT_VERDICT_MAX_RUNS]; /* it reproduced at least one original line */
    size_t pending, passed, failed, exceptions, no_data;
} rt_verdict_result;

/* Decides. RT_EINVAL (result undecided "invalid-input") when threshold < 1, too many lines
 * or runs, or a NULL array with a non-zero count. */
RT_MUSTCHECK int rt_verdict_decide(const rt_verdict_input *in, rt_verdict_result *out);

/* Makes an undecided result with the worker's reason (copied, truncated to fit). */
void rt_verdict_undecided(rt_verdict_result *out, const char *reason);

const char *rt_verdict_name(rt_verdict verdict);   /* "regression", "not-yet", ... */
const char *rt_run_state_name(rt_run_state state); /* "pending", "passed", ... */

#endif
