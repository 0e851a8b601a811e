/* SPDX-License-Identifier: MPL-2.0 */
/* test_actions.c - actions.json parsing and action choice against the real fixture. */
#include "support/util.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/actions.h"

#define DECISION "f7Jj_h6MTEKr5Ln_7aFqbw"

static rt_actions *load_fixture(void)
{
    size_t len;
    char *text = rt_test_read_file(rt_test_fixture("taskcluster/actions.json"), &len);
    rt_actions *actions = NULL;
    char errstr[RT_ERRSTR_SIZE];
    int rc = rt_actions_parse(text, len, len, &actions, errstr);
    if (rc) fail_msg("actions.json: %s", errstr);
    free(text);
    return actions;
}

static int parse_text(const char *text, rt_actions **out, char *errstr)
{
    return rt_actions_parse(text, strlen(text), 1 << 20, out, errstr);
}

/* The tags of a fixture task definition, as rt_tag pairs pointing into *root. */
static size_t fixture_tags(const char *name, json_t **root, rt_tag *tags, size_t max)
{
    json_error_t error;
    *root = json_load_file(rt_test_fixture(name), 0, &error);
    assert_non_null(*root);
    size_t n = 0;
    const char *key;
    json_t *value;
    json_object_foreach(json_object_get(*root, "tags"), key, value)
    {
        if (n < max) tags[n++] = (rt_tag){key, json_string_value(value)};
    }
    return n;
}

/* cb_name tells apart actions that share a name. */
static const char *cb_name(const rt_action *action)
{
    return json_string_value(json_object_get(
        json_object_get(json_object_get(action->hook_payload, "decision"), "action"), "cb_name"));
}

static void test_fixture_parses_every_hook_action(void **state)
{
    (void)state;
    rt_actions *actions = load_fixture();
    assert_int_equal(actions->count, 17);
    assert_true(json_is_object(actions->variables));
    for (size_t i = 0; i < actions->count; i++) {
        const rt_action *a = &actions->actions[i];
        assert_string_equal(a->kind, "hook");
        assert_string_equal(a->hook_group_id, "project-gecko");
        assert_string_equal(a->hook_id, "in-tree-action-3-generic/9353e8f146");
        assert_non_null(a->hook_payload);
    }
    const rt_action *custom = &actions->actions[0];
    assert_string_equal(custom->name, "retrigger-custom");
    assert_string_equal(custom->title, "Retrigger task with custom parameters");
    assert_int_equal(custom->context_count, 2);
    assert_string_equal(custom->context[1].tags[0].key, "test-type");
    assert_string_equal(custom->context[1].tags[0].value, "reftest");
    assert_non_null(custom->schema);
    rt_actions_free(actions);
}

static void test_retrigger_multiple_is_a_task_group_action(void **state)
{
    (void)state;
    rt_actions *actions = load_fixture();
    const rt_action *a = NULL;
    char errstr[RT_ERRSTR_SIZE];
    /* Available whatever the task's tags, even none. */
    assert_int_equal(rt_actions_find(actions, "retrigger-multiple", NULL, 0, &a, errstr), RT_OK);
    assert_true(rt_action_is_task_group(a));
    assert_non_null(a->schema);
    rt_tag build[] = {{"kind", "build"}};
    const rt_action *b = NULL;
    assert_int_equal(rt_actions_find(actions, "retrigger-multiple", build, 1, &b, errstr), RT_OK);
    assert_ptr_equal(a, b);
    rt_actions_free(actions);
}

static void test_retrigger_choice_depends_on_the_task_tags(void **state)
{
    (void)state;
    rt_actions *actions = load_fixture();
    const rt_action *a = NULL;
    char errstr[RT_ERRSTR_SIZE];
    json_t *root = NULL;
    rt_tag tags[16];

    /* A test with retrigger "true": the real retrigger action. */
    size_t n =
        fixture_tags("taskcluster/task_definition_GWxTc8p_RUa5_Xo4RtMiCA.json", &root, tags, 16);
    assert_int_equal(rt_actions_find(actions, "retrigger", tags, n, &a, errstr), RT_OK);
    assert_false(rt_action_is_task_group(a));
    assert_string_equal(cb_name(a), "retrigger");
    /* backfill's context [{}] matches every task. */
    assert_int_equal(rt_actions_find(actions, "backfill", tags, n, &a, errstr), RT_OK);
    assert_string_equal(cb_name(a), "backfill");
    /* create-interactive wants docker-worker tests: this one is. */
    assert_int_equal(rt_actions_find(actions, "create-interactive", tags, n, &a, errstr), RT_OK);
    json_decref(root);

    /* A build with retrigger "false": only the disabled retrigger ([{}]) is left. */
    n = fixture_tags("taskcluster/task_definition_build-android-api-16-debug.json", &root, tags,
                     16);
    assert_int_equal(rt_actions_find(actions, "retrigger", tags, n, &a, errstr), RT_OK);
    assert_string_equal(cb_name(a), "retrigger-disabled");
    assert_int_equal(rt_actions_find(actions, "create-interactive", tags, n, &a, errstr),
                     RT_ENOTFOUND);
    assert_null(a);
    assert_non_null(strstr(errstr, "not available"));
    json_decref(root);

    /* A decision task: the retrigger for decision tasks comes first. */
    rt_tag decision[] = {{"kind", "decision-task"}};
    assert_int_equal(rt_actions_find(actions, "retrigger", decision, 1, &a, errstr), RT_OK);
    assert_string_equal(cb_name(a), "retrigger-decision");

    /* A generic-worker raptor test is not a docker-worker test. */
    n = fixture_tags("taskcluster/task_definition_B3EheQ-IQ5aPzw34KS_a6g.json", &root, tags, 16);
    assert_int_equal(rt_actions_find(actions, "create-interactive", tags, n, &a, errstr),
                     RT_ENOTFOUND);
    assert_int_equal(rt_actions_find(actions, "geckoprofile", tags, n, &a, errstr), RT_OK);
    json_decref(root);
    rt_actions_free(actions);
}

static void test_unknown_action_is_not_found(void **state)
{
    (void)state;
    rt_actions *actions = load_fixture();
    const rt_action *a = NULL;
    char errstr[RT_ERRSTR_SIZE];
    assert_int_equal(rt_actions_find(actions, "retrigger-everything", NULL, 0, &a, errstr),
                     RT_ENOTFOUND);
    assert_non_null(strstr(errstr, "no action named retrigger-everything"));
    rt_actions_free(actions);
}

static void test_task_action_needs_a_task_id_and_ids_are_validated(void **state)
{
    (void)state;
    rt_actions *actions = load_fixture();
    const rt_action *a = NULL;
    char errstr[RT_ERRSTR_SIZE];
    rt_tag tags[] = {{"retrigger", "true"}};
    json_t *payload = NULL;
    assert_int_equal(rt_actions_find(actions, "retrigger", tags, 1, &a, errstr), RT_OK);
    assert_int_equal(rt_actions_render(actions, a, DECISION, NULL, NULL, &payload, errstr),
                     RT_EINVAL);
    assert_null(payload);
    assert_int_equal(rt_actions_render(actions, a, "not a task id", "GWxTc8p_RUa5_Xo4RtMiCA", NULL,
                                       &payload, errstr),
                     RT_EINVAL);
    rt_actions_free(actions);
}

static void test_variables_are_in_the_context_but_ours_win(void **state)
{
    (void)state;
    rt_actions *actions = NULL;
    char errstr[RT_ERRSTR_SIZE];
    assert_int_equal(
        parse_text("{\"version\": 1, \"variables\": {\"level\": 3, \"taskGroupId\": \"shadow\"},"
                   " \"actions\": [{\"name\": \"a\", \"kind\": \"hook\", \"context\": [],"
                   " \"hookGroupId\": \"g\", \"hookId\": \"h\", \"hookPayload\":"
                   " {\"l\": \"${level}\", \"g\": {\"$eval\": \"taskGroupId\"}}}]}",
                   &actions, errstr),
        RT_OK);
    const rt_action *a = NULL;
    json_t *payload = NULL;
    assert_int_equal(rt_actions_find(actions, "a", NULL, 0, &a, errstr), RT_OK);
    assert_int_equal(rt_actions_render(actions, a, DECISION, NULL, NULL, &payload, errstr), RT_OK);
    assert_string_equal(json_string_value(json_object_get(payload, "l")), "3");
    assert_string_equal(json_string_value(json_object_get(payload, "g")), DECISION);
    json_decref(payload);
    rt_actions_free(actions);
}

static void test_bare_list_of_actions_is_accepted(void **state)
{
    (void)state;
    rt_actions *actions = NULL;
    char errstr[RT_ERRSTR_SIZE];
    assert_int_equal(parse_text("[{\"name\": \"a\", \"kind\": \"hook\", \"context\": [{}],"
                                " \"hookGroupId\": \"g\", \"hookId\": \"h\", \"hookPayload\": {}}]",
                                &actions, errstr),
                     RT_OK);
    assert_int_equal(actions->count, 1);
    assert_int_equal(json_object_size(actions->variables), 0);
    rt_actions_free(actions);
}

static void test_malformed_files_are_protocol_errors(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "not json",
        "{\"version\": 2, \"actions\": []}",
        "{\"version\": 1, \"actions\": {}}",
        "{\"version\": 1, \"actions\": [], \"variables\": []}",
        "{\"version\": 1, \"actions\": [{\"kind\": \"hook\", \"context\": []}]}",
        "[{\"name\": \"a\", \"kind\": \"hook\", \"context\": {}}]",
        "[{\"name\": \"a\", \"kind\": \"hook\", \"context\": [{\"kind\": 1}]}]",
        "[{\"name\": \"a\", \"kind\": \"hook\", \"context\": [[]]}]",
        "[{\"name\": \"a\", \"kind\": \"hook\", \"context\": [], \"hookId\": \"h\","
        " \"hookPayload\": {}}]",
        "[{\"name\": \"a\", \"kind\": \"hook\", \"context\": [], \"hookGroupId\": \"g\","
        " \"hookId\": \"h\"}]",
        "[{\"name\": \"a\", \"name\": \"b\", \"kind\": \"hook\", \"context\": []}]",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rt_actions *actions = NULL;
        char errstr[RT_ERRSTR_SIZE] = "";
        int rc = parse_text(bad[i], &actions, errstr);
        if (rc != RT_EPROTO) fail_msg("%s: rc %d, wanted RT_EPROTO", bad[i], rc);
        assert_null(actions);
        assert_true(errstr[0] != '\0');
    }
    rt_actions *actions = NULL;
    char errstr[RT_ERRSTR_SIZE];
    assert_int_equal(rt_actions_parse("[]", 2, 1, &actions, errstr), RT_ETOOBIG);
}

static void test_non_hook_actions_cannot_be_rendered(void **state)
{
    (void)state;
    rt_actions *actions = NULL;
    char errstr[RT_ERRSTR_SIZE];
    assert_int_equal(parse_text("[{\"name\": \"t\", \"kind\": \"task\", \"context\": [],"
                                " \"task\": {}}]",
                                &actions, errstr),
                     RT_OK);
    json_t *payload = NULL;
    assert_int_equal(
        rt_actions_render(actions, &actions->actions[0], DECISION, NULL, NULL, &payload, errstr),
        RT_EINVAL);
    assert_non_null(strstr(errstr, "only hook actions"));
    rt_actions_free(actions);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_parses_every_hook_action),
        cmocka_unit_test(test_retrigger_multiple_is_a_task_group_action),
        cmocka_unit_test(test_retrigger_choice_depends_on_the_task_tags),
        cmocka_unit_test(test_unknown_action_is_not_found),
        cmocka_unit_test(test_task_action_needs_a_task_id_and_ids_are_validated),
        cmocka_unit_test(test_variables_are_in_the_context_but_ours_win),
        cmocka_unit_test(test_bare_list_of_actions_is_accepted),
        cmocka_unit_test(test_malformed_files_are_protocol_errors),
        cmocka_unit_test(test_non_hook_actions_cannot_be_rendered),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
