/* SPDX-License-Identifier: MPL-2.0 */
/* test_eligibility.c - the ordered eligibility checks, on real fixtures made to fail. */
#include "support/util.h"

#include <stdlib.h>
#include <string.h>

#include "common/core/eligibility.h"
#include "support/fixtures.h"

/* A fixture Pulse message with only its state fields turned from completed to failed. */
static void load_failed(const char *name, rt_pulse_task *msg)
{
    char *text = rt_test_failed_variant(name, 0);
    char reason[RT_PULSE_REASON_SIZE];
    assert_int_equal(rt_pulse_parse(text, strlen(text), NULL, 1 << 20, msg, reason), RT_OK);
    free(text);
}

static void load_task(const char *name, rt_taskdef *task)
{
    size_t len = 0;
    char *text = rt_test_read_file(rt_test_fixture(name), &len);
    char reason[128];
    assert_int_equal(rt_taskdef_parse(text, len, 1 << 22, task, reason), RT_OK);
    free(text);
}

static void load_errorsummary(const char *name, rt_errorsummary *es)
{
    size_t len = 0;
    char *text = rt_test_read_file(rt_test_fixture(name), &len);
    memset(es, 0, sizeof *es);
    assert_int_equal(rt_errorsummary_add(es, text, len), RT_OK);
    free(text);
}

typedef struct fixture {
    rt_pulse_task msg;
    rt_taskdef task;
    rt_errorsummary es;
    rt_elig_policy policy;
    rt_elig_facts facts;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    load_failed("pulse/treeherder_task-completed_GWxTc8p_RUa5_Xo4RtMiCA.json", &f->msg);
    load_task("taskcluster/task_definition_GWxTc8p_RUa5_Xo4RtMiCA.json", &f->task);
    load_errorsummary("errorsummary/mochitest-browser-chrome_errorsummary.log", &f->es);
    rt_elig_policy_defaults(&f->policy);
    f->policy.pool_prefixes[0] = "terraform-packet/gecko-t-linux"; /* this 2019 task's pool */
    f->facts = (rt_elig_facts){.message = &f->msg,
                               .task = &f->task,
                               .set_known = true,
                               .classification_known = true,
                               .classification_id = 1,
                               .errorsummary = &f->es,
                               .existing_known = true};
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    rt_pulse_task_free(&f->msg);
    rt_taskdef_free(&f->task);
    rt_errorsummary_free(&f->es);
    free(f);
    return 0;
}

static rt_elig_result decide(fixture *f)
{
    rt_elig_result r;
    rt_eligibility_decide(&f->policy, &f->facts, &r);
    return r;
}

static void test_failed_tier2_test_with_test_failures_gets_five_retriggers(void **state)
{
    fixture *f = *state;
    assert_int_equal(f->msg.event, RT_TASK_EVENT_FAILED);
    rt_elig_result r = decide(f);
    assert_int_equal(r.verdict, RT_ELIG_RETRIGGER);
    assert_string_equal(r.reason, "eligible");
    assert_int_equal(r.retriggers, 5);
}

/* The runs already on the push are members: retrig asks only for the missing ones, and with
 * enough of them it asks for none but still makes the set (issue 17, item 1). */
static void test_existing_runs_are_subtracted_and_still_make_a_set(void **state)
{
    fixture *f = *state;
    f->facts.existing_retriggers = 3;
    assert_int_equal(decide(f).retriggers, 2);
    f->facts.existing_retriggers = 4;
    rt_elig_result r = decide(f);
    assert_int_equal(r.verdict, RT_ELIG_RETRIGGER);
    assert_int_equal(r.retriggers, 1);
    for (int existing = 5; existing <= 7; existing++) {
        f->facts.existing_retriggers = existing;
        r = decide(f);
        assert_int_equal(r.verdict, RT_ELIG_RETRIGGER);
        assert_string_equal(r.reason, "eligible");
        assert_int_equal(r.retriggers, 0);
    }
}

static void test_completed_and_exception_runs_are_skipped_first(void **state)
{
    fixture *f = *state;
    f->facts.task = NULL; /* not even needed */
    f->msg.event = RT_TASK_EVENT_COMPLETED;
    assert_string_equal(decide(f).reason, "not-failed");
    f->msg.event = RT_TASK_EVENT_EXCEPTION;
    assert_string_equal(decide(f).reason, "exception");
}

static void test_tier_and_job_kind(void **state)
{
    fixture *f = *state;
    f->policy.tiers[1] = 3; /* tiers 1 and 3: this tier-2 task is out */
    assert_string_equal(decide(f).reason, "tier");
    f->policy.tiers[1] = 2;
    static char build[] = "build"; /* the parsed strings live in one block: point elsewhere */
    f->task.job_kind = build;
    assert_string_equal(decide(f).reason, "not-test");
}

/* A try push writes its own actions.json: a failure there is never acted on. */
static void test_a_push_outside_the_projects_allow_list_is_skipped(void **state)
{
    fixture *f = *state;
    static char try_project[] = "try", pool[] = "gecko-t/t-linux-large";
    f->task.project = try_project; /* route tc-treeherder.v2.try.<revision>.<push> */
    f->task.task_queue_id = pool;
    f->policy.pool_prefixes[0] = "gecko-t/t-linux-";
    rt_elig_result r = decide(f);
    assert_int_equal(r.verdict, RT_ELIG_SKIP);
    assert_string_equal(r.reason, "project");
    /* Before anything that needs an upstream call or a lookup. */
    f->facts.set_known = false;
    f->facts.classification_known = false;
    f->facts.errorsummary = NULL;
    assert_string_equal(decide(f).reason, "project");
    f->policy.projects[f->policy.nprojects++] = "try"; /* an operator's explicit choice */
    assert_int_equal(decide(f).need, RT_NEED_SET_LOOKUP);
}

static void test_retriggers_are_never_retriggered(void **state)
{
    fixture *f = *state;
    f->facts.set_original_task_id = "AAAAAAAAAAAAAAAAAAAAAA"; /* the set of another task */
    assert_string_equal(decide(f).reason, "is-retrigger");
    f->facts.set_original_task_id = f->msg.task_id; /* this task's own set */
    assert_string_equal(decide(f).reason, "duplicate");
    f->facts.set_original_task_id = NULL;
    f->msg.tag_action = strdup("retrigger-multiple");
    assert_string_equal(decide(f).reason, "is-retrigger");
}

/* The one classification rule, which retrig-retrigger checks again before it triggers. */
static void test_only_unclassified_failures_are_retrig_s(void **state)
{
    (void)state;
    /* Treeherder's ids (treeherder/failure_classification.json): 1 not classified, 2 fixed
     * by commit, 3 expected fail, 4 intermittent, 5 infra, 6 new failure not classified,
     * 7 autoclassified intermittent, 8 intermittent needs bugid; 0: not ingested yet. */
    const bool want[] = {true, true, false, false, false, false, true, false, false};
    for (int id = 0; id <= 8; id++) assert_int_equal(rt_classification_unclassified(id), want[id]);
    assert_false(rt_classification_unclassified(-1));
    assert_false(rt_classification_unclassified(4096));
}

static void test_pool_and_classification(void **state)
{
    fixture *f = *state;
    rt_elig_policy_defaults(&f->policy); /* gecko-t/t-linux- only */
    assert_string_equal(decide(f).reason, "pool");
    f->policy.pool_prefixes[0] = "terraform-packet/";
    for (int c = 0; c <= 8; c++) {
        f->facts.classification_id = c;
        rt_elig_result r = decide(f);
        bool unclassified = c == 0 || c == 1 || c == 6;
        if (unclassified)
            assert_int_equal(r.verdict, RT_ELIG_RETRIGGER);
        else
            assert_string_equal(r.reason, "classified");
    }
}

static void test_infra_errorsummaries(void **state)
{
    fixture *f = *state;
    rt_errorsummary_free(&f->es);
    load_errorsummary("errorsummary/mochitest-browser-chrome_infra_errorsummary.log", &f->es);
    rt_elig_result r = decide(f);
    assert_int_equal(r.verdict, RT_ELIG_INFRA);
    assert_string_equal(r.reason, "incomplete-errorsummary");
    assert_int_equal(r.code, RT_ELIG_R_INCOMPLETE_ERRORSUMMARY);
    rt_errorsummary_free(&f->es);
    load_errorsummary("errorsummary/mochitest-browser-chrome_pass_errorsummary.log", &f->es);
    assert_string_equal(decide(f).reason, "no-test-failure");
    assert_int_equal(decide(f).code, RT_ELIG_R_NO_TEST_FAILURE);
    rt_errorsummary_free(&f->es);
    assert_string_equal(decide(f).reason, "no-errorsummary");
    assert_int_equal(decide(f).code, RT_ELIG_R_NO_ERRORSUMMARY);
}

/* A crash before any test is the product's, not infra: skipped with its own reason. */
static void test_crash_before_any_test_is_skipped_with_its_own_reason(void **state)
{
    fixture *f = *state;
    rt_errorsummary_free(&f->es);
    load_errorsummary("errorsummary/mozlog/crash_before_tests.log", &f->es);
    rt_elig_result r = decide(f);
    assert_int_equal(r.verdict, RT_ELIG_SKIP);
    assert_int_equal(r.code, RT_ELIG_R_CRASH_BEFORE_TESTS);
    assert_string_equal(r.reason, "crash-before-tests");
}

/* One table of names: every code has its own, and the string a result carries is its code's
 * name (the worker branches on the code, the database and metrics keep the name). */
static void test_every_reason_code_has_one_name(void **state)
{
    (void)state;
    for (int i = 0; i < RT_ELIG_R_COUNT; i++) {
        const char *name = rt_elig_reason_name((rt_elig_reason)i);
        assert_non_null(name);
        assert_string_not_equal(name, "unknown");
        for (int j = 0; j < i; j++)
            assert_string_not_equal(name, rt_elig_reason_name((rt_elig_reason)j));
    }
    assert_string_equal(rt_elig_reason_name(RT_ELIG_R_COUNT), "unknown");
    assert_string_equal(rt_elig_reason_name(RT_ELIG_R_IS_RETRIGGER), "is-retrigger");
    assert_string_equal(rt_elig_reason_name(RT_ELIG_R_ELIGIBLE), "eligible");
}

static void test_missing_facts_are_asked_for_in_order(void **state)
{
    fixture *f = *state;
    rt_elig_facts all = f->facts;
    f->facts = (rt_elig_facts){.message = &f->msg};
    assert_int_equal(decide(f).need, RT_NEED_TASK_DEFINITION);
    f->facts.task = all.task;
    assert_int_equal(decide(f).need, RT_NEED_SET_LOOKUP);
    f->facts.set_known = true;
    assert_int_equal(decide(f).need, RT_NEED_CLASSIFICATION);
    f->facts.classification_known = true;
    f->facts.classification_id = 1;
    assert_int_equal(decide(f).need, RT_NEED_ERRORSUMMARY);
    f->facts.errorsummary = all.errorsummary;
    assert_int_equal(decide(f).need, RT_NEED_EXISTING_RETRIGGERS);
    f->facts.existing_known = true;
    assert_int_equal(decide(f).verdict, RT_ELIG_RETRIGGER);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_failed_tier2_test_with_test_failures_gets_five_retriggers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_existing_runs_are_subtracted_and_still_make_a_set,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_completed_and_exception_runs_are_skipped_first, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_tier_and_job_kind, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_push_outside_the_projects_allow_list_is_skipped,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_retriggers_are_never_retriggered, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pool_and_classification, setup, teardown),
        cmocka_unit_test(test_only_unclassified_failures_are_retrig_s),
        cmocka_unit_test(test_every_reason_code_has_one_name),
        cmocka_unit_test_setup_teardown(test_infra_errorsummaries, setup, teardown),
        cmocka_unit_test_setup_teardown(test_crash_before_any_test_is_skipped_with_its_own_reason,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_facts_are_asked_for_in_order, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
