/* SPDX-License-Identifier: MPL-2.0 */
/* verdict.c - the early-deciding regression/intermittent rule over retrigger evidence. */
#include "common/core/verdict.h"

#include <stdio.h>
#include <string.h>

static void set_result(rt_verdict_result *out, rt_verdict verdict, const char *reason)
{
    out->verdict = verdict;
    snprintf(out->reason, sizeof out->reason, "%s", reason ? reason : "");
}

void rt_verdict_undecided(rt_verdict_result *out, const char *reason)
{
    memset(out, 0, sizeof *out);
    out->regression_line = -1;
    set_result(out, RT_VERDICT_UNDECIDED, reason && reason[0] ? reason : "unknown");
}

static bool run_has_line(const rt_verdict_run *run, const rt_failure_line *line)
{
    for (size_t k = 0; k < run->nlines; k++)
        if (rt_failure_line_equal(&run->lines[k], line)) return true;
    return false;
}

int rt_verdict_decide(const rt_verdict_input *in, rt_verdict_result *out)
{
    rt_verdict_undecided(out, "invalid-input");
    if (in->threshold < 1 || in->noriginal > RT_VERDICT_MAX_LINES ||
        in->nruns > RT_VERDICT_MAX_RUNS || (in->noriginal && !in->original) ||
        (in->nruns && !in->runs))
        return RT_EINVAL;
    for (size_t r = 0; r < in->nruns; r++)
        if (in->runs[r].state == RT_RUN_FAILED && in->runs[r].nlines && !in->runs[r].lines)
            return RT_EINVAL;

    size_t evidence = 0;
    for (size_t r = 0; r < in->nruns; r++) {
        const rt_verdict_run *run = &in->runs[r];
        switch (run->state) {
        case RT_RUN_PENDING: out->pending++; break;
        case RT_RUN_PASSED:
            out->passed++;
            out->run_counts[r] = true;
            break;
        case RT_RUN_FAILED:
            out->failed++;
            out->run_counts[r] = true;
            for (size_t i = 0; i < in->noriginal; i++) {
                if (run_has_line(run, &in->original[i])) {
                    out->reproduced[i]++;
                    out->run_reproduced[r] = true;
                }
            }
            break;
        case RT_RUN_EXCEPTION: out->exceptions++; break;
        case RT_RUN_NO_DATA: out->no_data++; break;
        default: return RT_EINVAL;
        }
        if (out->run_counts[r]) evidence++;
    }

    size_t n = (size_t)in->threshold;
    if (in->noriginal == 0) {
        set_result(out, RT_VERDICT_UNDECIDED, "no-failure-lines");
        return RT_OK;
    }
    bool reachable = false;
    long tracked_line = -1; /* the first tracked line reaching N */
    for (size_t i = 0; i < in->noriginal; i++) {
        if (out->reproduced[i] >= n) {
            if (in->original_tracked && in->original_tracked[i]) {
                if (tracked_line < 0) tracked_line = (long)i;
                continue;
            }
            out->regression_line = (long)i;
            set_result(out, RT_VERDICT_REGRESSION, "reproduced");
            return RT_OK;
        }
        if (out->reproduced[i] + out->pending >= n) reachable = true;
    }
    if (tracked_line >= 0) {
        out->regression_line = tracked_line;
        set_result(out, RT_VERDICT_REGRESSION, "reproduced-known-intermittent");
        return RT_OK;
    }
    if (reachable || (evidence == 0 && out->pending > 0)) {
        /* Some line can still reach N, or nothing is known yet and a run may still tell. */
        set_result(out, RT_VERDICT_NOT_YET, "waiting-for-retriggers");
        return RT_OK;
    }
    if (evidence == 0) {
        set_result(out, RT_VERDICT_UNDECIDED, "no-usable-retriggers");
        return RT_OK;
    }
    set_result(out, RT_VERDICT_INTERMITTENT,
               out->pending ? "cannot-reach-threshold" : "not-reproduced");
    return RT_OK;
}

const char *rt_verdict_name(rt_verdict verdict)
{
    switch (verdict) {
    case RT_VERDICT_NOT_YET: return "not-yet";
    case RT_VERDICT_REGRESSION: return "regression";
    case RT_VERDICT_INTERMITTENT: return "intermittent";
    case RT_VERDICT_UNDECIDED: return "undecided";
    }
    return "unknown";
}

const char *rt_run_state_name(rt_run_state state)
{
    switch (state) {
    case RT_RUN_PENDING: return "pending";
    case RT_RUN_PASSED: return "passed";
    case RT_RUN_FAILED: return "failed";
    case RT_RUN_EXCEPTION: return "exception";
    case RT_RUN_NO_DATA: return "no-data";
    }
    return "unknown";
}
