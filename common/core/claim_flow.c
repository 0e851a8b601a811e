/* SPDX-License-Identifier: MPL-2.0 */
/* claim_flow.c - the budget claim of a retrigger set as a pure step machine (claim_flow.h).
 * Each branch mirrors one outcome of the sequence; a step is asked for while its call is
 * not done, and a done call's result picks the branch after it. */
#include "common/core/claim_flow.h"

#include <string.h>

static void ask(rt_claim_flow_step *s, rt_claim_action action) { s->action = action; }

static void end(rt_claim_flow_step *s, rt_claim_end how, rt_claim_cause cause, const char *reason)
{
    s->action = RT_CLAIM_DONE;
    s->end = how;
    s->cause = cause;
    s->reason = reason;
}

/* The run's verdict skip/<reason>, then the end: acked, or requeued when Postgres failed. */
static void verdict_then_end(const rt_claim_flow_facts *f, rt_claim_flow_step *s,
                             const char *reason)
{
    if (!f->verdict.done) {
        ask(s, RT_CLAIM_RECORD_VERDICT);
        s->verdict_reason = reason;
        return;
    }
    if (f->verdict.rc != 0)
        end(s, RT_CLAIM_END_REQUEUE, RT_CLAIM_CAUSE_POSTGRES, reason);
    else
        end(s, RT_CLAIM_END_ACK, RT_CLAIM_CAUSE_NONE, reason);
}

/* Another task owns the set: join it once Postgres has it. */
static void join_owner(const rt_claim_flow_facts *f, rt_claim_flow_step *s)
{
    if (!f->find_set.done) {
        ask(s, RT_CLAIM_FIND_SET);
        return;
    }
    if (f->find_set.rc != 0) {
        end(s, RT_CLAIM_END_REQUEUE, RT_CLAIM_CAUSE_POSTGRES, NULL);
        return;
    }
    if (!f->set_exists) {
        end(s, RT_CLAIM_END_RETRY, RT_CLAIM_CAUSE_SET_IN_PROGRESS, NULL);
        return;
    }
    if (!f->join.done) {
        ask(s, RT_CLAIM_JOIN_SET);
        return;
    }
    if (f->join.rc != 0) {
        end(s, RT_CLAIM_END_REQUEUE, RT_CLAIM_CAUSE_POSTGRES, "is-retrigger");
        return;
    }
    verdict_then_end(f, s, "is-retrigger");
}

/* The set existed before the call: refund a claim made now unless the set is this task's,
 * publish its request if nobody did, and record the duplicate. */
static void duplicate(const rt_claim_flow_facts *f, rt_claim_flow_step *s, int spent,
                      bool spent_now)
{
    if (spent_now && !f->find_set.done) {
        ask(s, RT_CLAIM_FIND_SET);
        return;
    }
    bool ours = spent_now && f->find_set.rc == 0 && f->set_exists && f->set_original_is_self;
    if (spent_now && !ours && !f->refund.done) {
        ask(s, RT_CLAIM_REFUND);
        s->amount = spent;
        return;
    }
    if (!f->publish.done) {
        ask(s, RT_CLAIM_PUBLISH);
        if (f->refund.done && f->refund.rc != 0) s->note = RT_CLAIM_NOTE_REFUND_FAILED;
        return;
    }
    if (f->publish.rc != 0) {
        end(s, RT_CLAIM_END_REQUEUE, RT_CLAIM_CAUSE_POSTGRES, "duplicate");
        return;
    }
    verdict_then_end(f, s, "duplicate");
}

/* After the claim: create the set (with its backstop), settle what the backstop did not
 * keep, publish. */
static void create_and_publish(const rt_claim_flow_facts *f, rt_claim_flow_step *s, int minimum)
{
    const rt_claim *c = &f->claim_result;
    int spent = c->spent; /* CLAIMED now, or EXISTS by this very task (earlier attempt) */
    bool spent_now = c->status == RT_CLAIM_CLAIMED;
    if (!f->create.done) {
        ask(s, RT_CLAIM_CREATE_SET);
        s->count = spent;
        s->minimum = minimum;
        return;
    }
    rt_claim_note pending = RT_CLAIM_NOTE_NONE;
    if (f->create.rc == 0 && f->created && f->kept < spent) {
        if (!f->settle.done) {
            ask(s, RT_CLAIM_SETTLE);
            s->note = RT_CLAIM_NOTE_BACKSTOP_CUT;
            s->claimed = spent;
            s->kept = f->kept;
            s->ledger_total = f->ledger_total + f->kept;
            return;
        }
        /* Nothing written: the dedupe key still names this task, so the redelivery meets
         * the backstop again and gives the claim back then. With the set committed, the
         * counter only stays high, which can only underspend. */
        if (f->settle.rc != 0 && f->kept == 0) {
            end(s, RT_CLAIM_END_REQUEUE, RT_CLAIM_CAUSE_REDIS, NULL);
            return;
        }
        if (f->settle.rc != 0) pending = RT_CLAIM_NOTE_SETTLE_FAILED;
        if (f->refused) {
            verdict_then_end(f, s, "budget-exhausted");
            if (s->action == RT_CLAIM_RECORD_VERDICT) {
                s->note = pending;
                s->set_gauges = true;
                s->gauge_left = 0;
                s->gauge_spent = f->ledger_total;
            }
            return;
        }
        spent = f->kept;
    }
    if (f->create.rc != 0) {
        /* Nothing durable in Postgres; the Redis claim names this task, so the redelivery
         * continues with the budget already spent. */
        end(s, RT_CLAIM_END_REQUEUE, RT_CLAIM_CAUSE_CREATE_SET, NULL);
        s->error = f->create.rc;
        return;
    }
    if (!f->created) {
        duplicate(f, s, spent, spent_now);
        return;
    }
    if (!f->publish.done) {
        ask(s, RT_CLAIM_PUBLISH);
        s->note = pending;
        return;
    }
    /* The set is committed; the redelivery finds it and publishes its request. */
    if (f->publish.rc != 0) {
        end(s, RT_CLAIM_END_REQUEUE, RT_CLAIM_CAUSE_PUBLISH, NULL);
        return;
    }
    if (spent == 0) {
        end(s, RT_CLAIM_END_ACK, RT_CLAIM_CAUSE_NONE, "existing-runs");
        return;
    }
    end(s, RT_CLAIM_END_ACK, RT_CLAIM_CAUSE_NONE, "retriggers-requested");
    s->spent = spent;
    s->counter_total = spent_now && spent == c->spent ? c->total : -1;
}

void rt_claim_flow_next(const rt_claim_flow_facts *f, rt_claim_flow_step *s)
{
    memset(s, 0, sizeof *s);
    s->counter_total = -1;
    if (!f->ledger_known && !f->ledger.done) {
        ask(s, RT_CLAIM_READ_LEDGER);
        return;
    }
    if (!f->ledger_known && f->ledger.rc != 0) {
        end(s, RT_CLAIM_END_REQUEUE, RT_CLAIM_CAUSE_POSTGRES, NULL);
        return;
    }

    /* budget_minimum bounds what is worth spending, never more than is wanted; with runs
     * of the label already on the push, an exhausted budget still makes the set, asking
     * for nothing: those runs decide. */
    int minimum = f->budget_minimum < f->wanted ? f->budget_minimum : f->wanted;
    const rt_claim *c = &f->claim_result;
    if (f->claims == 0) {
        ask(s, RT_CLAIM_REDIS);
        s->wanted = f->wanted;
        s->minimum = minimum;
        return;
    }
    if (f->claim.rc != 0) {
        end(s, RT_CLAIM_END_REQUEUE, RT_CLAIM_CAUSE_REDIS, NULL);
        return;
    }
    if (f->claims == 1 && c->status == RT_CLAIM_EXHAUSTED && f->runs_found > 0) {
        ask(s, RT_CLAIM_REDIS);
        s->note = RT_CLAIM_NOTE_EXHAUSTED_RUNS_DECIDE;
        return; /* wanted = minimum = 0 */
    }
    if (f->claims > 1) minimum = 0;

    if (c->status == RT_CLAIM_EXHAUSTED) {
        verdict_then_end(f, s, "budget-exhausted");
        if (s->action == RT_CLAIM_RECORD_VERDICT) {
            s->note = RT_CLAIM_NOTE_EXHAUSTED;
            s->set_gauges = true;
            s->gauge_left = c->left;
            s->gauge_spent = f->limit - c->left;
        }
        return;
    }
    if (c->status == RT_CLAIM_EXISTS && !f->claim_owner_is_self) {
        join_owner(f, s);
        return;
    }
    create_and_publish(f, s, minimum);
}
