/* SPDX-License-Identifier: MPL-2.0 */
/* test_followup.c - the ladder of retrig-perf's follow-up (common/core/followup.h): each
 * rung from the facts alone, the window, the index's grace hour, the data question. */
#include "support/util.h"

#include <jansson.h>
#include <string.h>

#include "common/core/followup.h"

#define NOW 1700000000

static rt_followup_facts completed(int jobs)
{
    return (rt_followup_facts){.action_task_valid = true,
                               .action_task_known = true,
                               .action_state = "completed",
                               .action_reason = "completed",
                               .action_task_id = "AAAAAAAAAAAAAAAAAAAAAA",
                               .window_hours = 24,
                               .now = NOW,
                               .resolved_at = NOW - 60,
                               .jobs = jobs,
                               .completed = jobs,
                               .label = "test-linux1804-64/opt-talos-tp5o",
                               .signature_id = 1944439};
}

static rt_followup_outcome assess(const rt_followup_facts *f)
{
    rt_followup_outcome o;
    rt_followup_assess(f, &o);
    return o;
}

static void expect(const rt_followup_facts *f, rt_followup_state state, const char *reason,
                   const char *detail_part)
{
    rt_followup_outcome o = assess(f);
    assert_string_equal(rt_followup_state_name(o.state), rt_followup_state_name(state));
    if (reason)
        assert_string_equal(o.reason, reason);
    else
        assert_null(o.reason);
    if (detail_part && !strstr(o.detail, detail_part))
        fail_msg("detail '%s' lacks '%s'", o.detail, detail_part);
}

static void test_the_action_task_itself(void **state)
{
    (void)state;
    rt_followup_facts f = completed(0);
    f.action_task_valid = false;
    expect(&f, RT_FOLLOWUP_FAILED, "action-failed", "invalid action task id");
    f = completed(0);
    f.action_task_known = false;
    expect(&f, RT_FOLLOWUP_PENDING, NULL, "not in the queue yet");
    f.expired = true;
    expect(&f, RT_FOLLOWUP_FAILED, "action-failed", "not found in the queue");
    f = completed(0);
    f.action_state = "running";
    expect(&f, RT_FOLLOWUP_PENDING, NULL, "action task running");
    f.expired = true;
    expect(&f, RT_FOLLOWUP_FAILED, "deadline-exceeded", "still running after 24 h");
    f = completed(0);
    f.action_state = "failed";
    expect(&f, RT_FOLLOWUP_FAILED, "action-failed", "failed");
    f.action_state = "exception";
    f.action_reason = "deadline-exceeded";
    expect(&f, RT_FOLLOWUP_FAILED, "deadline-exceeded", "deadline-exceeded");
    f.action_reason = "worker-shutdown";
    expect(&f, RT_FOLLOWUP_FAILED, "action-failed", "exception (worker-shutdown)");
}

static void test_what_it_spawned(void **state)
{
    (void)state;
    rt_followup_facts f = completed(3);
    f.actions_failed = 1;
    f.bad_action = "BBBBBBBBBBBBBBBBBBBBBB";
    expect(&f, RT_FOLLOWUP_FAILED, "action-failed", "BBBBBBBBBBBBBBBBBBBBBB");
    f = completed(3);
    f.actions_unresolved = 2;
    expect(&f, RT_FOLLOWUP_PENDING, NULL, "2 action tasks it triggered unresolved");
    f.expired = true;
    expect(&f, RT_FOLLOWUP_FAILED, "deadline-exceeded", NULL);
    /* No job yet, the index searched and empty: an hour's grace after the action task. */
    f = completed(0);
    f.searched = true;
    f.first_push = 10;
    f.last_push = 18;
    expect(&f, RT_FOLLOWUP_PENDING, NULL, "indexed on pushes 10-18 yet");
    f.resolved_at = NOW - RT_FOLLOWUP_INDEX_GRACE_S;
    expect(&f, RT_FOLLOWUP_FAILED, "no-data", "no backfill-task for test-linux1804-64");
    f.backfill_tasks = 4;
    expect(&f, RT_FOLLOWUP_FAILED, "no-data", "the 4 backfill-task action tasks");
    f = completed(0);
    f.root_artifact = true;
    expect(&f, RT_FOLLOWUP_FAILED, "no-data", "none in its label-to-taskid artifacts");
    f = completed(5);
    f.completed = 3;
    f.unresolved = 2;
    expect(&f, RT_FOLLOWUP_PENDING, NULL, "2 of 5 jobs unresolved");
    f.expired = true;
    expect(&f, RT_FOLLOWUP_FAILED, "deadline-exceeded", "2 of 5 jobs unresolved after 24 h");
    f = completed(5);
    f.failed = 1;
    f.deadline = 1;
    f.first_bad = "CCCCCCCCCCCCCCCCCCCCCC";
    expect(&f, RT_FOLLOWUP_FAILED, "deadline-exceeded", "1 of 5 jobs deadline-exceeded");
    f.deadline = 0;
    expect(&f, RT_FOLLOWUP_FAILED, "jobs-failed", "1 of 5 jobs failed (e.g. CCCC");
    f.failed = 0;
    f.exception = 2;
    expect(&f, RT_FOLLOWUP_FAILED, "jobs-exception", "2 of 5 jobs ended in an exception");
}

static void test_the_data_is_asked_last_and_decides(void **state)
{
    (void)state;
    rt_followup_facts f = completed(5);
    expect(&f, RT_FOLLOWUP_NEED_DATA, NULL, NULL);
    f.data_known = true;
    f.data_found = true;
    expect(&f, RT_FOLLOWUP_DONE, NULL, "5 jobs completed with Perfherder data");
    f.data_found = false;
    f.data_waiting = true;
    expect(&f, RT_FOLLOWUP_PENDING, NULL, "waiting for Treeherder and Perfherder");
    f.expired = true;
    expect(&f, RT_FOLLOWUP_FAILED, "no-data", "signature 1944439");
}

static void test_facts_from_json(void **state)
{
    (void)state;
    json_error_t error;
    json_t *doc = json_loads("{\"action_task_valid\": true, \"action_task_known\": true,"
                             " \"action_state\": \"completed\", \"jobs\": 2, \"completed\": 2,"
                             " \"data_known\": true, \"data_found\": true, \"now\": 1700000000}",
                             0, &error);
    assert_non_null(doc);
    rt_followup_facts f;
    char errstr[RT_ERRSTR_SIZE] = "";
    assert_int_equal(rt_followup_facts_from_json(doc, &f, errstr), RT_OK);
    expect(&f, RT_FOLLOWUP_DONE, NULL, "2 jobs completed");
    json_decref(doc);
    doc = json_loads("{\"jobs\": -1}", 0, &error);
    assert_int_equal(rt_followup_facts_from_json(doc, &f, errstr), RT_EPROTO);
    assert_non_null(strstr(errstr, "jobs"));
    json_decref(doc);
    doc = json_loads("{\"expired\": \"yes\"}", 0, &error);
    assert_int_equal(rt_followup_facts_from_json(doc, &f, errstr), RT_EPROTO);
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_action_task_itself),
        cmocka_unit_test(test_what_it_spawned),
        cmocka_unit_test(test_the_data_is_asked_last_and_decides),
        cmocka_unit_test(test_facts_from_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
