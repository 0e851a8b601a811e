/* SPDX-License-Identifier: MPL-2.0 */
/* decide_policy.c - seed, adaptive and mozci verdicts over the same evidence. */
#include "common/core/decide_policy.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static void set_outcome(rt_policy_outcome *o, rt_verdict verdict, const char *reason, size_t more)
{
    o->verdict = verdict;
    snprintf(o->reason, sizeof o->reason, "%s", reason);
    o->more = more;
}

static bool is_final(rt_verdict verdict)
{
    return verdict == RT_VERDICT_REGRESSION || verdict == RT_VERDICT_INTERMITTENT;
}

/* What seed and mozci still ask for: up to retriggers_per_failure in all. */
static size_t up_front(const rt_policy_input *in, size_t spent)
{
    size_t want = in->retriggers_per_failure > 0 ? (size_t)in->retriggers_per_failure : 0;
    return spent < want ? want - spent : 0;
}

static void decide_mozci(const rt_policy_input *in, const rt_verdict_result *c, size_t spent,
                         rt_policy_outcome *o)
{
    size_t compared = c->passed + c->failed;
    bool all_failed = false;
    for (size_t i = 0; i < in->evidence.noriginal; i++)
        if (compared > 0 && c->reproduced[i] == compared) all_failed = true;
    if (compared > 0 && !all_failed) {
        set_outcome(o, RT_VERDICT_INTERMITTENT, "not-every-run-failed", 0);
    } else if (c->pending > 0) {
        set_outcome(o, RT_VERDICT_NOT_YET, "waiting-for-retriggers", 0);
    } else if (up_front(in, spent) > 0) {
        set_outcome(o, RT_VERDICT_NOT_YET, "need-more", up_front(in, spent));
    } else if (compared == 0) {
        set_outcome(o, RT_VERDICT_UNDECIDED, "no-usable-retriggers", 0);
    } else {
        set_outcome(o, RT_VERDICT_REGRESSION, "every-run-failed", 0);
    }
}

static int decide_adaptive(const rt_policy_input *in, const rt_verdict_result *c, size_t spent,
                           rt_policy_result *out)
{
    rt_decide_line lines[RT_VERDICT_MAX_LINES];
    for (size_t i = 0; i < in->evidence.noriginal; i++) {
        lines[i] = (rt_decide_line){
            .history = in->history ? in->history[i] : (rt_decide_history){.signature_failures = -1},
            .reproduced = c->reproduced[i],
            .hints = in->hints ? in->hints[i] : 0,
        };
    }
    rt_decide_input din = {.lines = lines,
                           .nlines = in->evidence.noriginal,
                           .compared = c->passed + c->failed,
                           .pending = c->pending,
                           .spent = spent};
    rt_decide_result r;
    int rc = rt_decide_evaluate(in->model, &din, &r);
    if (rc != RT_OK) return rc;
    set_outcome(&out->outcome[RT_POLICY_ADAPTIVE], r.verdict, r.reason, r.more);
    memcpy(out->p_regression, r.p_regression, sizeof out->p_regression);
    out->line = r.line;
    return RT_OK;
}

int rt_policy_decide(rt_policy policy, const rt_policy_input *in, rt_policy_result *out)
{
    memset(out, 0, sizeof *out);
    out->policy = policy;
    out->line = -1;
    for (size_t p = 0; p < RT_POLICY_COUNT; p++)
        set_outcome(&out->outcome[p], RT_VERDICT_UNDECIDED, "invalid-input", 0);
    if ((unsigned)policy >= RT_POLICY_COUNT || !in->model) return RT_EINVAL;
    int rc = rt_verdict_decide(&in->evidence, &out->counts);
    if (rc != RT_OK) return rc;
    size_t spent = in->spent > in->evidence.nruns ? in->spent : in->evidence.nruns;

    /* seed: the verdict is rt_verdict_decide's, unchanged. */
    rt_policy_outcome *seed = &out->outcome[RT_POLICY_SEED];
    set_outcome(seed, out->counts.verdict, out->counts.reason,
                is_final(out->counts.verdict) || out->counts.pending ? 0 : up_front(in, spent));
    if (in->evidence.noriginal == 0) {
        /* Nothing to compare: the seed rule's answer for everyone. */
        out->outcome[RT_POLICY_ADAPTIVE] = *seed;
        out->outcome[RT_POLICY_MOZCI] = *seed;
        return RT_OK;
    }
    decide_mozci(in, &out->counts, spent, &out->outcome[RT_POLICY_MOZCI]);
    rc = decide_adaptive(in, &out->counts, spent, out);
    if (rc != RT_OK) {
        for (size_t p = 0; p < RT_POLICY_COUNT; p++)
            set_outcome(&out->outcome[p], RT_VERDICT_UNDECIDED, "invalid-input", 0);
        return rc;
    }
    return RT_OK;
}

static const char *const names[RT_POLICY_COUNT] = {"seed", "adaptive", "mozci"};

const char *rt_policy_name(rt_policy policy)
{
    return (unsigned)policy < RT_POLICY_COUNT ? names[policy] : "unknown";
}

int rt_policy_parse(const char *name, rt_policy *out)
{
    for (size_t p = 0; p < RT_POLICY_COUNT; p++) {
        if (name && !strcmp(name, names[p])) {
            *out = (rt_policy)p;
            return RT_OK;
        }
    }
    return RT_EINVAL;
}
