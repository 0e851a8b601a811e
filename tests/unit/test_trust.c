/* SPDX-License-Identifier: MPL-2.0 */
/* test_trust.c - project trust levels and the hook-call check (common/core/trust.h): the
 * recorded autoland actions.json passes for its own push; a hook group, hook id, scheduler,
 * task group, target task or push that is not the task's is refused, naming the field. */
#include "support/util.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/actions.h"
#include "common/core/trust.h"

#define DECISION "f7Jj_h6MTEKr5Ln_7aFqbw" /* the recorded actions.json's push */
#define REVISION "c7766d0b4a121985a8b07e6721d66ccab57bbf76"
#define TASK     "GWxTc8p_RUa5_Xo4RtMiCA"

static rt_strlist levels = {3, {"try=1", "autoland=3", "mozilla-central = 3"}};
static const rt_hook_policy policy = {"project-gecko", &levels};

static json_t *times_two; /* the input every action is rendered with here: {"times": 2} */

static int setup(void **state)
{
    (void)state;
    times_two = json_pack("{s:i}", "times", 2);
    return times_two ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    json_decref(times_two);
    return 0;
}

/* The fixture's action `name`, rendered for TASK of the push DECISION with times_two. */
static json_t *render(const char *name, const rt_action **action_out, rt_actions **actions_out)
{
    size_t len;
    char *text = rt_test_read_file(rt_test_fixture("taskcluster/actions.json"), &len);
    rt_actions *actions = NULL;
    char errstr[RT_ERRSTR_SIZE];
    assert_int_equal(rt_actions_parse(text, len, len, &actions, errstr), RT_OK);
    free(text);
    const rt_action *action = NULL;
    for (size_t i = 0; i < actions->count && !action; i++)
        if (!strcmp(actions->actions[i].name, name)) action = &actions->actions[i];
    assert_non_null(action);
    json_t *payload = NULL;
    assert_int_equal(rt_actions_render(actions, action, DECISION,
                                       rt_action_is_task_group(action) ? NULL : TASK, times_two,
                                       &payload, errstr),
                     RT_OK);
    *action_out = action;
    *actions_out = actions;
    return payload;
}

static rt_hook_call call_for(const rt_action *action, const json_t *payload)
{
    return (rt_hook_call){
        .hook_group_id = action->hook_group_id,
        .hook_id = action->hook_id,
        .payload = payload,
        .project = "autoland",
        .revision = REVISION,
        .scheduler_id = "gecko-level-3",
        .task_group_id = DECISION,
        .task_id = rt_action_is_task_group(action) ? NULL : TASK,
        .action_name = action->name,
        .input = times_two,
    };
}

static void assert_refused(const rt_hook_call *call, const char *code, const char *words)
{
    rt_hook_verdict v;
    assert_int_equal(rt_hook_check(&policy, call, &v), RT_EAUTH);
    assert_non_null(v.code);
    assert_string_equal(v.code, code);
    if (!strstr(v.reason, words)) fail_msg("reason '%s' does not say '%s'", v.reason, words);
}

static void test_levels_come_from_the_list_by_exact_name(void **state)
{
    (void)state;
    assert_int_equal(rt_trust_project_level(&levels, "try"), 1);
    assert_int_equal(rt_trust_project_level(&levels, "autoland"), 3);
    assert_int_equal(rt_trust_project_level(&levels, "mozilla-central"), 3);
    assert_int_equal(rt_trust_project_level(&levels, "try-comm-central"), 0);
    assert_int_equal(rt_trust_project_level(&levels, "auto"), 0);
    assert_int_equal(rt_trust_project_level(&levels, NULL), 0);
    char errstr[RT_ERRSTR_SIZE];
    assert_int_equal(rt_trust_levels_check(&levels, errstr), RT_OK);
    rt_strlist bad = {2, {"try=1", "autoland=4"}};
    assert_int_equal(rt_trust_levels_check(&bad, errstr), RT_EINVAL);
    assert_non_null(strstr(errstr, "autoland=4"));
    rt_strlist no_level = {1, {"autoland"}};
    assert_int_equal(rt_trust_levels_check(&no_level, errstr), RT_EINVAL);
}

static void test_recorded_actions_pass_for_their_own_push(void **state)
{
    (void)state;
    const char *names[] = {"retrigger-multiple", "retrigger", "backfill"};
    for (size_t i = 0; i < 3; i++) {
        const rt_action *action;
        rt_actions *actions;
        json_t *payload = render(names[i], &action, &actions);
        rt_hook_call call = call_for(action, payload);
        rt_hook_verdict v;
        int rc = rt_hook_check(&policy, &call, &v);
        if (rc != RT_OK) fail_msg("%s refused: %s", names[i], v.reason);
        assert_null(v.code);
        assert_int_equal(v.level, 3);
        json_decref(payload);
        rt_actions_free(actions);
    }
}

static void test_foreign_hooks_are_refused(void **state)
{
    (void)state;
    const rt_action *action;
    rt_actions *actions;
    json_t *payload = render("retrigger-multiple", &action, &actions);
    rt_hook_call call = call_for(action, payload);

    call.hook_group_id = "project-releng";
    assert_refused(&call, "hook-group", "project-releng");
    call.hook_group_id = "project-gecko";
    const char *bad_ids[] = {
        "in-tree-action-3-release-promotion/abc", /* more power than retrig needs */
        "in-tree-action-1-generic/9353e8f146",    /* another level */
        "../../../auth/v1",
        "in-tree-action-3-generic/../../../auth/v1",
        "in-tree-action-3-generic/a/b",
        "in-tree-action-3-generic/",
        "in-tree-action-3-generic/a%2Fb",
        "in-tree-action-3-generic",
        "",
    };
    for (size_t i = 0; i < sizeof bad_ids / sizeof *bad_ids; i++) {
        call.hook_id = bad_ids[i];
        assert_refused(&call, "hook-id", "in-tree-action-3-generic/");
    }
    call.hook_id = NULL;
    assert_refused(&call, "hook-id", "(none)");
    json_decref(payload);
    rt_actions_free(actions);
}

static void test_a_task_of_another_level_or_project_is_refused(void **state)
{
    (void)state;
    const rt_action *action;
    rt_actions *actions;
    json_t *payload = render("retrigger-multiple", &action, &actions);
    rt_hook_call call = call_for(action, payload);

    call.scheduler_id = "gecko-level-1"; /* a try task claiming an autoland push */
    assert_refused(&call, "scheduler", "gecko-level-1");
    call.scheduler_id = NULL;
    assert_refused(&call, "scheduler", "gecko-level-3");
    call.scheduler_id = "gecko-level-3";
    call.project = "elm";
    assert_refused(&call, "project", "elm");
    call.project = NULL;
    assert_refused(&call, "project", "(none)");

    /* A try task with try's own level-1 hook is what try may do (when allowed at all). */
    call.project = "try";
    call.scheduler_id = "gecko-level-1";
    call.hook_id = "in-tree-action-1-generic/9353e8f146";
    assert_refused(&call, "push", "project is not try"); /* the payload says autoland */
    json_decref(payload);
    rt_actions_free(actions);
}

static void test_a_payload_aimed_elsewhere_is_refused(void **state)
{
    (void)state;
    const rt_action *action;
    rt_actions *actions;
    json_t *payload = render("retrigger", &action, &actions);
    rt_hook_call call = call_for(action, payload);
    json_t *decision = json_object_get(payload, "decision");
    json_t *user = json_object_get(payload, "user");

    call.task_group_id = "HkX-TbGXQaSX4ucqGMQNBA"; /* the task is in another group */
    assert_refused(&call, "task-group", "decision.action.taskGroupId");
    call.task_group_id = DECISION;

    json_object_set_new(user, "taskId", json_string("B3EheQ-IQ5aPzw34KS_a6g"));
    assert_refused(&call, "task", TASK);
    json_object_set_new(user, "taskId", json_string(TASK));

    json_object_set_new(user, "taskGroupId", json_string("HkX-TbGXQaSX4ucqGMQNBA"));
    assert_refused(&call, "task-group", "user.taskGroupId");
    json_object_set_new(user, "taskGroupId", json_string(DECISION));

    json_object_set_new(json_object_get(decision, "push"), "revision",
                        json_string("b437ae030825a8ea9fa7a632b1fcb9becbe11f69"));
    assert_refused(&call, "push", "decision.push.revision");
    json_object_set_new(json_object_get(decision, "push"), "revision", json_string(REVISION));

    json_object_set_new(json_object_get(decision, "repository"), "level", json_string("1"));
    assert_refused(&call, "push", "decision.repository.level");
    json_object_set_new(json_object_get(decision, "repository"), "level", json_integer(3));
    rt_hook_verdict v;
    assert_int_equal(rt_hook_check(&policy, &call, &v), RT_OK);

    json_object_del(json_object_get(decision, "action"), "taskGroupId");
    assert_refused(&call, "task-group", "missing");
    json_object_del(payload, "decision");
    assert_refused(&call, "task-group", "missing");
    call.payload = NULL;
    assert_refused(&call, "task-group", "not an object");
    json_decref(payload);
    rt_actions_free(actions);
}

/* The action asked for is what the call runs: a template that swaps the callback or ignores
 * the input is refused by the hook check itself (every caller goes through it). */
static void test_a_payload_with_another_callback_or_input_is_refused(void **state)
{
    (void)state;
    const rt_action *action;
    rt_actions *actions;
    json_t *payload = render("retrigger-multiple", &action, &actions);
    rt_hook_call call = call_for(action, payload);
    json_t *decision_action = json_object_get(json_object_get(payload, "decision"), "action");
    json_t *user = json_object_get(payload, "user");

    json_object_set_new(decision_action, "cb_name", json_string("cancel-all"));
    assert_refused(&call, "action", "cb_name is cancel-all");
    json_object_set_new(decision_action, "cb_name", json_string("retrigger-multiple"));

    json_object_set_new(user, "input", json_pack("{s:i}", "times", 100));
    assert_refused(&call, "input", "user.input");
    json_object_set(user, "input", times_two);

    call.action_name = "retrigger"; /* the caller asked for another action than rendered */
    assert_refused(&call, "action", "decision.action.name");
    call.action_name = NULL;
    assert_refused(&call, "action", "decision.action.name");
    call.action_name = action->name;
    rt_hook_verdict v;
    assert_int_equal(rt_hook_check(&policy, &call, &v), RT_OK);
    json_decref(payload);
    rt_actions_free(actions);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_levels_come_from_the_list_by_exact_name),
        cmocka_unit_test(test_recorded_actions_pass_for_their_own_push),
        cmocka_unit_test(test_foreign_hooks_are_refused),
        cmocka_unit_test(test_a_task_of_another_level_or_project_is_refused),
        cmocka_unit_test(test_a_payload_aimed_elsewhere_is_refused),
        cmocka_unit_test(test_a_payload_with_another_callback_or_input_is_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
