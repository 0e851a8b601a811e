/* SPDX-License-Identifier: MPL-2.0 */
/* eligibility.c - the ordered eligibility checks for retriggering a failed test run. */
#include "common/core/eligibility.h"

#include <stdlib.h>
#include <string.h>

void rt_elig_policy_defaults(rt_elig_policy *policy)
{
    memset(policy, 0, sizeof *policy);
    policy->tiers[0] = 1;
    policy->tiers[1] = 2;
    policy->ntiers = 2;
    policy->pool_prefixes[0] = "gecko-t/t-linux-";
    policy->npool_prefixes = 1;
    policy->projects[0] = "autoland";
    policy->projects[1] = "mozilla-central";
    policy->nprojects = 2;
    policy->target_retriggers = 5;
}

bool rt_classification_unclassified(int classification_id)
{
    return classification_id == 0 || classification_id == 1 || classification_id == 6;
}

static const char *const reason_names[RT_ELIG_R_COUNT] = {
    [RT_ELIG_R_NEED_MORE_DATA] = "need-more-data",
    [RT_ELIG_R_NOT_FAILED] = "not-failed",
    [RT_ELIG_R_EXCEPTION] = "exception",
    [RT_ELIG_R_NOT_RESOLVED] = "not-resolved",
    [RT_ELIG_R_NOT_TEST] = "not-test",
    [RT_ELIG_R_TIER] = "tier",
    [RT_ELIG_R_NO_PUSH] = "no-push",
    [RT_ELIG_R_PROJECT] = "project",
    [RT_ELIG_R_IS_RETRIGGER] = "is-retrigger",
    [RT_ELIG_R_DUPLICATE] = "duplicate",
    [RT_ELIG_R_POOL] = "pool",
    [RT_ELIG_R_CLASSIFIED] = "classified",
    [RT_ELIG_R_NO_ERRORSUMMARY] = "no-errorsummary",
    [RT_ELIG_R_INCOMPLETE_ERRORSUMMARY] = "incomplete-errorsummary",
    [RT_ELIG_R_NO_TEST_FAILURE] = "no-test-failure",
    [RT_ELIG_R_CRASH_BEFORE_TESTS] = "crash-before-tests",
    [RT_ELIG_R_ELIGIBLE] = "eligible",
};

const char *rt_elig_reason_name(rt_elig_reason code)
{
    return code >= 0 && code < RT_ELIG_R_COUNT ? reason_names[code] : "unknown";
}

static void set(rt_elig_result *r, rt_elig_verdict verdict, rt_elig_reason code)
{
    r->verdict = verdict;
    r->code = code;
    r->reason = rt_elig_reason_name(code);
    r->retriggers = 0;
    r->need = RT_NEED_NOTHING;
}

static void need(rt_elig_result *r, rt_elig_need what)
{
    set(r, RT_ELIG_NEED, RT_ELIG_R_NEED_MORE_DATA);
    r->need = what;
}

/* Long because it is the numbered rule itself, one short step per check in the order the
 * eligibility header gives them; splitting it would hide the order. */
void rt_eligibility_decide(const rt_elig_policy *policy, const rt_elig_facts *facts,
                           rt_elig_result *r)
{
    const rt_pulse_task *msg = facts->message;
    const rt_taskdef *task = facts->task;

    /* 1. Only failed runs are candidates. */
    switch (msg->event) {
    case RT_TASK_EVENT_FAILED: break;
    case RT_TASK_EVENT_COMPLETED: set(r, RT_ELIG_SKIP, RT_ELIG_R_NOT_FAILED); return;
    case RT_TASK_EVENT_EXCEPTION: set(r, RT_ELIG_SKIP, RT_ELIG_R_EXCEPTION); return;
    default: set(r, RT_ELIG_SKIP, RT_ELIG_R_NOT_RESOLVED); return;
    }

    /* 2. A Treeherder test job of an allowed tier. */
    if (!task) {
        need(r, RT_NEED_TASK_DEFINITION);
        return;
    }
    if (!task->job_kind || strcmp(task->job_kind, "test") != 0) {
        set(r, RT_ELIG_SKIP, RT_ELIG_R_NOT_TEST);
        return;
    }
    bool tier_ok = false;
    for (size_t i = 0; i < policy->ntiers; i++)
        if (policy->tiers[i] == task->tier) tier_ok = true;
    if (!tier_ok) {
        set(r, RT_ELIG_SKIP, RT_ELIG_R_TIER);
        return;
    }
    if (!task->project || !task->revision || !task->label) {
        set(r, RT_ELIG_SKIP, RT_ELIG_R_NO_PUSH);
        return;
    }
    bool project_ok = false;
    for (size_t i = 0; i < policy->nprojects && !project_ok; i++)
        project_ok = !strcmp(policy->projects[i], task->project);
    if (!project_ok) {
        set(r, RT_ELIG_SKIP, RT_ELIG_R_PROJECT);
        return;
    }

    /* 3. Not itself a retrigger or backfill. */
    if ((msg->tag_action && *msg->tag_action) || (task->action && *task->action)) {
        set(r, RT_ELIG_SKIP, RT_ELIG_R_IS_RETRIGGER);
        return;
    }
    if (!facts->set_known) {
        need(r, RT_NEED_SET_LOOKUP);
        return;
    }
    if (facts->set_original_task_id) {
        if (strcmp(facts->set_original_task_id, msg->task_id) != 0) {
            set(r, RT_ELIG_SKIP, RT_ELIG_R_IS_RETRIGGER);
        } else {
            set(r, RT_ELIG_SKIP, RT_ELIG_R_DUPLICATE);
        }
        return;
    }

    /* 4. On a configured worker pool. */
    const char *queue = msg->task_queue_id ? msg->task_queue_id : task->task_queue_id;
    bool pool_ok = false;
    for (size_t i = 0; queue && i < policy->npool_prefixes; i++)
        if (!strncmp(queue, policy->pool_prefixes[i], strlen(policy->pool_prefixes[i])))
            pool_ok = true;
    if (!pool_ok) {
        set(r, RT_ELIG_SKIP, RT_ELIG_R_POOL);
        return;
    }

    /* 5. Not classified by a sheriff yet. */
    if (!facts->classification_known) {
        need(r, RT_NEED_CLASSIFICATION);
        return;
    }
    if (!rt_classification_unclassified(facts->classification_id)) {
        set(r, RT_ELIG_SKIP, RT_ELIG_R_CLASSIFIED);
        return;
    }

    /* 6. A test failure according to the errorsummary artifacts. */
    if (!facts->errorsummary) {
        need(r, RT_NEED_ERRORSUMMARY);
        return;
    }
    const char *reason = NULL;
    rt_es_kind kind = rt_errorsummary_classify(facts->errorsummary, &reason);
    if (kind == RT_ES_PRODUCT_CRASH) {
        set(r, RT_ELIG_SKIP, RT_ELIG_R_CRASH_BEFORE_TESTS);
        return;
    }
    if (kind != RT_ES_TEST_FAILURE) {
        rt_elig_reason code = RT_ELIG_R_NO_TEST_FAILURE;
        for (int i = RT_ELIG_R_NO_ERRORSUMMARY; i <= RT_ELIG_R_NO_TEST_FAILURE; i++)
            if (!strcmp(reason, reason_names[i])) code = (rt_elig_reason)i;
        set(r, RT_ELIG_INFRA, code);
        return;
    }

    /* 7. Eligible: a set is made, whose members are the runs of the label already on the
     * push (evidence at no cost) and the retriggers asked for what is missing, possibly
     * none. */
    if (!facts->existing_known) {
        need(r, RT_NEED_EXISTING_RETRIGGERS);
        return;
    }
    int wanted = policy->target_retriggers -
                 (facts->existing_retriggers > 0 ? facts->existing_retriggers : 0);
    set(r, RT_ELIG_RETRIGGER, RT_ELIG_R_ELIGIBLE);
    r->retriggers = wanted > 0 ? wanted : 0;
}

const char *rt_elig_verdict_name(rt_elig_verdict verdict)
{
    switch (verdict) {
    case RT_ELIG_RETRIGGER: return "retrigger";
    case RT_ELIG_SKIP: return "skip";
    case RT_ELIG_INFRA: return "infra";
    case RT_ELIG_NEED: return "need";
    }
    return "skip";
}
