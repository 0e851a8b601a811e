/* SPDX-License-Identifier: MPL-2.0 */
/* eligibility.h - should this resolved task run be retriggered? The pure decision.
 *
 * The checks run in a fixed order, each with a reason code:
 *   1 not-failed (completed run), exception (task-exception), not-resolved
 *   2 not-test (extra.treeherder.jobKind), tier, no-push (no tc-treeherder route),
 *     project (the push's Treeherder project is not in the allow-list: a try push, whose
 *     decision task and actions.json anyone with try access writes, is never acted on)
 *   3 is-retrigger (tags.action, or a member of an existing set), duplicate (this very
 *     task already has its set)
 *   4 pool (task queue id does not start with a configured prefix)
 *   5 classified (Treeherder classification other than 1 or 6)
 *   6 no-errorsummary / incomplete-errorsummary / no-test-failure (verdict infra);
 *     crash-before-tests (verdict skip: the product crashed before any test ran, so there is
 *     no test to judge; a product failure for a sheriff, not infra)
 *   7 eligible: a set is made with the runs of the label already on the push as members,
 *     and retriggers = target - existing of them asked for (0 when those are enough)
 * Facts that need an upstream call are optional: when the next check needs one that is
 * missing, the verdict is RT_ELIG_NEED with `need` naming it, so the worker fetches only
 * what the decision actually requires. No I/O, no clock, no globals. */
#ifndef RETRIG_COMMON_ELIGIBILITY_H
#define RETRIG_COMMON_ELIGIBILITY_H

#include <stdbool.h>
#include <stddef.h>

#include "common/core/errorsummary.h"
#include "common/core/pulse.h"
#include "common/core/taskdef.h"

#define RT_ELIG_MAX_TIERS    8
#define RT_ELIG_MAX_POOLS    16
#define RT_ELIG_MAX_PROJECTS 16

typedef enum { RT_ELIG_RETRIGGER, RT_ELIG_SKIP, RT_ELIG_INFRA, RT_ELIG_NEED } rt_elig_verdict;

/* The reason codes, in the order of the checks (rt_elig_reason_name: one table of names). */
typedef enum {
    RT_ELIG_R_NEED_MORE_DATA, /* "need-more-data": RT_ELIG_NEED */
    RT_ELIG_R_NOT_FAILED,
    RT_ELIG_R_EXCEPTION,
    RT_ELIG_R_NOT_RESOLVED,
    RT_ELIG_R_NOT_TEST,
    RT_ELIG_R_TIER,
    RT_ELIG_R_NO_PUSH,
    RT_ELIG_R_PROJECT,
    RT_ELIG_R_IS_RETRIGGER,
    RT_ELIG_R_DUPLICATE,
    RT_ELIG_R_POOL,
    RT_ELIG_R_CLASSIFIED,
    RT_ELIG_R_NO_ERRORSUMMARY, /* the infra verdicts: rt_errorsummary_classify's reasons */
    RT_ELIG_R_INCOMPLETE_ERRORSUMMARY,
    RT_ELIG_R_NO_TEST_FAILURE,
    RT_ELIG_R_CRASH_BEFORE_TESTS, /* rt_errorsummary_classify's product-crash reason */
    RT_ELIG_R_ELIGIBLE,
    RT_ELIG_R_COUNT,
} rt_elig_reason;

typedef enum {
    RT_NEED_NOTHING = 0,
    RT_NEED_TASK_DEFINITION,
    RT_NEED_SET_LOOKUP,
    RT_NEED_CLASSIFICATION,
    RT_NEED_ERRORSUMMARY,
    RT_NEED_EXISTING_RETRIGGERS,
} rt_elig_need;

typedef struct rt_elig_policy {
    int tiers[RT_ELIG_MAX_TIERS];
    size_t ntiers;
    const char *pool_prefixes[RT_ELIG_MAX_POOLS];
    size_t npool_prefixes;
    const char *projects[RT_ELIG_MAX_PROJECTS]; /* exact Treeherder project names */
    size_t nprojects;
    int target_retriggers; /* retriggers wanted on top of the original (5) */
} rt_elig_policy;

typedef struct rt_elig_facts {
    const rt_pulse_task *message;     /* required */
    const rt_taskdef *task;           /* NULL: not fetched yet */
    bool set_known;                   /* the set lookup for (project, revision, label) was done */
    const char *set_original_task_id; /* the set's original task, NULL when no set exists */
    bool classification_known;
    int classification_id;               /* 0 when Treeherder has not ingested the job yet */
    const rt_errorsummary *errorsummary; /* NULL: not fetched yet */
    bool existing_known;
    int existing_retriggers; /* runs of the label already on the push (found members) */
} rt_elig_facts;

typedef struct rt_elig_result {
    rt_elig_verdict verdict;
    rt_elig_reason code;
    const char *reason; /* rt_elig_reason_name(code) */
    int retriggers;     /* RT_ELIG_RETRIGGER: retriggers to ask for, 0 when the runs on the
                         * push are enough */
    rt_elig_need need;  /* for RT_ELIG_NEED */
} rt_elig_result;

/* Whether a Treeherder failure_classification_id leaves the failure to retrig: 1 not
 * classified and 6 new failure not classified, and 0, Treeherder not having ingested the
 * job yet. Every other id is a sheriff's classification (intermittent, infra, fixed by
 * commit, ...), which retrig never second-guesses. */
bool rt_classification_unclassified(int classification_id);

/* Policy defaults: tiers 1 and 2, pool prefix gecko-t/t-linux-, projects autoland and
 * mozilla-central, 5 retriggers. */
void rt_elig_policy_defaults(rt_elig_policy *policy);
void rt_eligibility_decide(const rt_elig_policy *policy, const rt_elig_facts *facts,
                           rt_elig_result *result);
const char *rt_elig_verdict_name(rt_elig_verdict verdict);
/* "not-failed", "is-retrigger", ... (the codes of the list above); "unknown" out of range. */
const char *rt_elig_reason_name(rt_elig_reason code);

#endif
