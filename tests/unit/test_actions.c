/* SPDX-License-Identifier: MPL-2.0 */
/* test_actions.c - actions.json parsing and action choice against the real fixture; the
 * input each worker sends and the check that a rendered payload is the call retrig asked. */
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

#define GWX_LABEL "test-android-em-7.0-x86_64/debug-mochitest-e10s-1"
#define GWX_TASK  "GWxTc8p_RUa5_Xo4RtMiCA"

/* The input of each action is what its worker sends, built in one place (the CLI replays it). */
static void test_the_input_is_the_one_each_worker_sends(void **state)
{
    (void)state;
    static const struct {
        const char *name, *want;
    } cases[] = {
        {"retrigger-multiple", "{\"requests\":[{\"tasks\":[\"" GWX_LABEL "\"],\"times\":3}]}"},
        {"add-new-jobs", "{\"tasks\":[\"" GWX_LABEL "\"],\"times\":3}"},
        {"backfill", "{\"depth\":9,\"times\":3}"},
        {"retrigger", "{\"times\":3}"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *input = rt_actions_input(cases[i].name, GWX_LABEL, 3, 9);
        assert_non_null(input);
        char *text = json_dumps(input, JSON_COMPACT | JSON_SORT_KEYS);
        if (strcmp(text, cases[i].want) != 0)
            fail_msg("%s: input %s, want %s", cases[i].name, text, cases[i].want);
        free(text);
        json_decref(input);
    }
    assert_null(rt_actions_input("add-new-jobs", NULL, 3, 9)); /* a probe names its label */
}

/* The action `name` for the GWx test task, rendered from the fixture with retrig's input for
 * it: *action_out and *input_out (the caller frees it) say what was asked. */
static json_t *render_asked(rt_actions *actions, const char *name, const rt_action **action_out,
                            json_t **input_out)
{
    json_t *root = NULL;
    rt_tag tags[16];
    char errstr[RT_ERRSTR_SIZE];
    size_t n =
        fixture_tags("taskcluster/task_definition_GWxTc8p_RUa5_Xo4RtMiCA.json", &root, tags, 16);
    const rt_action *a = NULL;
    assert_int_equal(rt_actions_find(actions, name, tags, n, &a, errstr), RT_OK);
    json_t *input = rt_actions_input(name, GWX_LABEL, 3, 9), *payload = NULL;
    if (rt_actions_render(actions, a, DECISION, rt_action_is_task_group(a) ? NULL : GWX_TASK, input,
                          &payload, errstr) != RT_OK)
        fail_msg("%s: %s", name, errstr);
    json_decref(root);
    *action_out = a;
    *input_out = input;
    return payload;
}

static const char *const ASKED[] = {"retrigger-multiple", "retrigger", "backfill", "add-new-jobs"};

/* Gecko's own templates pass: the payload names the action and carries our input. */
static void test_recorded_templates_render_the_call_asked(void **state)
{
    (void)state;
    rt_actions *actions = load_fixture();
    for (size_t i = 0; i < sizeof ASKED / sizeof ASKED[0]; i++) {
        const rt_action *a;
        json_t *input, *payload = render_asked(actions, ASKED[i], &a, &input);
        const char *code = "unset";
        char errstr[RT_ERRSTR_SIZE] = "";
        if (rt_actions_check_payload(a->name, input, payload, &code, errstr) != RT_OK)
            fail_msg("%s refused: %s", ASKED[i], errstr);
        assert_null(code);
        json_decref(input);
        json_decref(payload);
    }
    rt_actions_free(actions);
}

/* A template that ignores our input and asks for 200 labels x 100 runs, or that drops the
 * input, is refused for each action retrig calls: the budget was charged for our input. */
static void test_a_template_ignoring_the_input_is_refused(void **state)
{
    (void)state;
    rt_actions *actions = load_fixture();
    json_t *labels = json_array();
    for (int i = 0; i < 200; i++)
        json_array_append_new(labels, json_sprintf("%s-%d", GWX_LABEL, i));
    json_t *greedy = json_pack("{s:[{s:O, s:i}], s:O, s:i, s:i}", "requests", "tasks", labels,
                               "times", 100, "tasks", labels, "times", 100, "depth", 25);
    for (size_t i = 0; i < sizeof ASKED / sizeof ASKED[0]; i++) {
        const rt_action *a = NULL;
        char errstr[RT_ERRSTR_SIZE];
        /* Every action of that name takes the template's own literal input. */
        for (size_t k = 0; k < actions->count; k++)
            if (!strcmp(actions->actions[k].name, ASKED[i]))
                json_object_set(json_object_get(actions->actions[k].hook_payload, "user"), "input",
                                greedy);
        json_t *input, *payload = render_asked(actions, ASKED[i], &a, &input);
        const char *code = NULL;
        assert_int_equal(rt_actions_check_payload(a->name, input, payload, &code, errstr),
                         RT_EAUTH);
        assert_string_equal(code, "input");
        if (!strstr(errstr, "user.input is another input"))
            fail_msg("%s: reason %s", ASKED[i], errstr);
        json_decref(payload);
        json_decref(input);
        /* No input at all is not our input either. */
        json_object_del(json_object_get(a->hook_payload, "user"), "input");
        payload = render_asked(actions, ASKED[i], &a, &input);
        assert_int_equal(rt_actions_check_payload(a->name, input, payload, &code, errstr),
                         RT_EAUTH);
        assert_string_equal(code, "input");
        assert_non_null(strstr(errstr, "user.input is missing"));
        json_decref(payload);
        json_decref(input);
    }
    json_decref(greedy);
    json_decref(labels);
    rt_actions_free(actions);
}

/* The action task runs decision.action.cb_name: an action named retrigger-multiple whose
 * callback is cancel-all, or a payload naming another action, is refused; Gecko's callbacks
 * registered under "retrigger" are that action's. */
static void test_another_callback_or_action_is_refused(void **state)
{
    (void)state;
    rt_actions *actions = load_fixture();
    static const struct {
        const char *asked, *field, *value;
        bool allowed;
    } cases[] = {
        {"retrigger-multiple", "cb_name", "cancel-all", false},
        {"backfill", "cb_name", "cancel-all", false},
        {"add-new-jobs", "cb_name", "cancel-all", false},
        {"add-new-jobs", "cb_name", "add-new-jobs-evil", false},
        {"retrigger", "cb_name", "retrigger-multiple", false},
        {"retrigger", "cb_name", "cancel", false},
        {"retrigger-multiple", "name", "cancel-all", false},
        {"backfill", "name", "retrigger", false},
        {"retrigger", "cb_name", "retrigger-decision", true},
        {"retrigger", "cb_name", "retrigger-disabled", true},
        {"retrigger", "cb_name", "retrigger", true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const rt_action *a;
        json_t *input, *payload = render_asked(actions, cases[i].asked, &a, &input);
        json_t *action = json_object_get(json_object_get(payload, "decision"), "action");
        json_object_set_new(action, cases[i].field, json_string(cases[i].value));
        const char *code = NULL;
        char errstr[RT_ERRSTR_SIZE] = "";
        int rc = rt_actions_check_payload(a->name, input, payload, &code, errstr);
        if (cases[i].allowed) {
            if (rc != RT_OK) fail_msg("%s/%s refused: %s", cases[i].asked, cases[i].value, errstr);
        } else {
            assert_int_equal(rc, RT_EAUTH);
            assert_string_equal(code, "action");
            char want[128];
            snprintf(want, sizeof want, "decision.action.%s is %s", cases[i].field, cases[i].value);
            if (!strstr(errstr, want)) fail_msg("reason '%s' does not say '%s'", errstr, want);
        }
        /* Missing is refused too, and so is a name that is not a plain identifier. */
        json_object_del(action, cases[i].field);
        assert_int_equal(rt_actions_check_payload(a->name, input, payload, &code, errstr),
                         RT_EAUTH);
        assert_non_null(strstr(errstr, "missing"));
        json_object_set_new(action, cases[i].field, json_string("cancel all\n"));
        assert_int_equal(rt_actions_check_payload(a->name, input, payload, &code, errstr),
                         RT_EAUTH);
        assert_null(strchr(errstr, '\n'));
        json_decref(input);
        json_decref(payload);
    }
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
        cmocka_unit_test(test_the_input_is_the_one_each_worker_sends),
        cmocka_unit_test(test_recorded_templates_render_the_call_asked),
        cmocka_unit_test(test_a_template_ignoring_the_input_is_refused),
        cmocka_unit_test(test_another_callback_or_action_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
