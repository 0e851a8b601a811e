/* SPDX-License-Identifier: MPL-2.0 */
/* decide_rounds.c - the verdict policy's rounds in the workers (see decide_rounds.h). */
#include "common/core/decide_rounds.h"

#include <stdio.h>
#include <string.h>

unsigned rt_round_hints(bool tracked, int classification_id)
{
    unsigned hints = tracked ? RT_DECIDE_HINT_TRACKED : 0;
    if (classification_id == 4 || classification_id == 7 || classification_id == 8)
        hints |= RT_DECIDE_HINT_CLASSIFIED;
    return hints;
}

size_t rt_round_first(const rt_decide_settings *s, const rt_decide_history *histories, size_t n,
                      size_t found)
{
    rt_decide_line lines[RT_VERDICT_MAX_LINES];
    size_t nlines = n < RT_VERDICT_MAX_LINES ? n : RT_VERDICT_MAX_LINES;
    for (size_t i = 0; i < nlines; i++) lines[i] = (rt_decide_line){.history = histories[i]};
    if (nlines == 0) { /* a failure without a test name: a test without history */
        lines[0] = (rt_decide_line){.history = {.signature_failures = -1}};
        nlines = 1;
    }
    if (rt_decide_settings_check(s) != RT_OK) return 0;
    /* The batch as if nothing were on the push; the runs found count towards it, as
     * retriggers_per_failure counts them for seed. */
    size_t batch = rt_decide_first_batch(s, lines, nlines, 0);
    size_t max = (size_t)s->max_retriggers;
    if (found >= batch || found >= max) return 0;
    size_t want = batch - found;
    return want < max - found ? want : max - found;
}

static void plan_verdict(rt_round_plan *out, const rt_policy_outcome *o, rt_round_action action,
                         long line)
{
    out->action = action;
    out->verdict = o->verdict;
    snprintf(out->reason, sizeof out->reason, "%s", o->reason);
    out->line = line;
}

static bool is_final(rt_verdict v)
{
    return v == RT_VERDICT_REGRESSION || v == RT_VERDICT_INTERMITTENT;
}

int rt_round_plan_for(rt_policy policy, const rt_policy_input *in, const rt_round_state *state,
                      rt_round_plan *out)
{
    memset(out, 0, sizeof *out);
    out->policy = policy;
    out->shadow = policy == RT_POLICY_SEED ? RT_POLICY_ADAPTIVE : RT_POLICY_SEED;
    out->action = RT_ROUND_VERDICT;
    out->verdict = RT_VERDICT_UNDECIDED;
    out->line = -1;
    snprintf(out->reason, sizeof out->reason, "invalid-input");
    if ((policy != RT_POLICY_SEED && policy != RT_POLICY_ADAPTIVE) || !in->model ||
        state->round < 1 || state->round > RT_ROUND_MAX)
        return RT_EINVAL;

    rt_policy_input with = *in;
    with.spent = state->requested + state->found;
    if (with.spent < in->evidence.nruns) with.spent = in->evidence.nruns;
    out->spent = with.spent;
    int rc = rt_policy_decide(policy, &with, &out->result);
    if (rc != RT_OK) return rc;
    const rt_policy_outcome *o = &out->result.outcome[policy];

    if (policy == RT_POLICY_SEED) {
        /* Today's rule: its verdict, named by rt_verdict_decide's line; never a round. */
        plan_verdict(out, o, o->verdict == RT_VERDICT_NOT_YET ? RT_ROUND_WAIT : RT_ROUND_VERDICT,
                     out->result.counts.regression_line);
        return RT_OK;
    }
    long line = out->result.line;
    if (o->verdict != RT_VERDICT_NOT_YET) {
        plan_verdict(out, o, RT_ROUND_VERDICT, o->verdict == RT_VERDICT_REGRESSION ? line : -1);
        return RT_OK;
    }
    if (o->more == 0) { /* waiting for the retriggers pending */
        plan_verdict(out, o, RT_ROUND_WAIT, -1);
        return RT_OK;
    }
    if (!state->no_more && !state->deadline && state->round < RT_ROUND_MAX) {
        plan_verdict(out, o, RT_ROUND_ASK, -1);
        out->more = o->more < RT_ROUND_MAX_TIMES ? o->more : RT_ROUND_MAX_TIMES;
        out->round = state->round + 1;
        return RT_OK;
    }
    /* No round may follow: the posterior decides now, as at the cap. */
    rt_policy_result capped;
    with.spent = (size_t)in->model->max_retriggers;
    if (with.spent < in->evidence.nruns) with.spent = in->evidence.nruns;
    rc = rt_policy_decide(policy, &with, &capped);
    if (rc != RT_OK) return rc;
    out->result.outcome[RT_POLICY_ADAPTIVE] = capped.outcome[RT_POLICY_ADAPTIVE];
    o = &out->result.outcome[policy];
    plan_verdict(out, o, is_final(o->verdict) ? RT_ROUND_VERDICT : RT_ROUND_WAIT,
                 o->verdict == RT_VERDICT_REGRESSION ? capped.line : -1);
    if (o->verdict == RT_VERDICT_UNDECIDED) out->action = RT_ROUND_VERDICT;
    return RT_OK;
}

/* Writes a key; RT_EINVAL when it does not fit. */
static int key(char *out, size_t size, int n)
{
    return n > 0 && (size_t)n < size ? RT_OK : RT_EINVAL;
}

int rt_round_ledger_key(long long set_id, int round, char *out, size_t size)
{
    if (set_id < 1 || round < 1 || !out || size == 0) return RT_EINVAL;
    if (round == 1) return key(out, size, snprintf(out, size, "set:%lld", set_id));
    return key(out, size, snprintf(out, size, "set:%lld:round:%d", set_id, round));
}

int rt_round_refund_key(long long set_id, int round, char *out, size_t size)
{
    char ledger[RT_ROUND_KEY_SIZE];
    int rc = rt_round_ledger_key(set_id, round, ledger, sizeof ledger);
    if (rc != RT_OK || !out || size == 0) return RT_EINVAL;
    return key(out, size, snprintf(out, size, "refund:%s", ledger));
}

int rt_round_claim_key(long long set_id, int round, char *out, size_t size)
{
    if (set_id < 1 || round < 2 || !out || size == 0) return RT_EINVAL;
    return key(out, size, snprintf(out, size, "round:%lld:%d", set_id, round));
}

int rt_round_message_id(long long set_id, int round, char *out, size_t size)
{
    if (set_id < 1 || round < 1 || !out || size == 0) return RT_EINVAL;
    if (round == 1) return key(out, size, snprintf(out, size, "retrigger-set-%lld", set_id));
    return key(out, size, snprintf(out, size, "retrigger-set-%lld-round-%d", set_id, round));
}
