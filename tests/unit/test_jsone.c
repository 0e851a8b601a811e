/* SPDX-License-Identifier: MPL-2.0 */
/* test_jsone.c - the JSON-e renderer: the specification's examples for what it implements,
 * clear errors for what it does not, and the real actions.json hookPayload templates. */
#include "support/util.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/actions.h"
#include "common/core/jsone.h"

static json_t *parse(const char *text)
{
    json_error_t error;
    json_t *v = json_loads(text, JSON_DECODE_ANY, &error);
    if (!v) fail_msg("bad test JSON %s: %s", text, error.text);
    return v;
}

/* Renders template with context and checks the result equals expected (all JSON text). */
static void check_render(const char *template, const char *context, const char *expected)
{
    json_t *t = parse(template), *c = parse(context), *want = parse(expected), *got = NULL;
    char errstr[RT_ERRSTR_SIZE];
    int rc = rt_jsone_render(t, c, &got, errstr);
    if (rc != RT_OK) fail_msg("%s with %s: rc %d: %s", template, context, rc, errstr);
    if (!json_equal(got, want)) {
        char *text = json_dumps(got, JSON_ENCODE_ANY | JSON_COMPACT);
        print_error("%s with %s gave %s, wanted %s\n", template, context, text, expected);
        free(text);
        fail();
    }
    json_decref(t);
    json_decref(c);
    json_decref(want);
    json_decref(got);
}

/* Renders and checks it fails with rc and an errstr containing needle. */
static void check_error(const char *template, const char *context, int rc, const char *needle)
{
    json_t *t = parse(template), *c = parse(context), *got = NULL;
    char errstr[RT_ERRSTR_SIZE] = "";
    int got_rc = rt_jsone_render(t, c, &got, errstr);
    if (got_rc != rc || !strstr(errstr, needle))
        fail_msg("%s with %s: rc %d (wanted %d), errstr \"%s\" (wanted \"%s\")", template, context,
                 got_rc, rc, errstr, needle);
    assert_null(got);
    json_decref(t);
    json_decref(c);
}

static void test_template_without_operators_renders_unchanged(void **state)
{
    (void)state;
    check_render("{\"key\": [1, 2, {\"key2\": \"val\", \"key3\": 1}, true], \"f\": false}", "{}",
                 "{\"key\": [1, 2, {\"key2\": \"val\", \"key3\": 1}, true], \"f\": false}");
}

static void test_interpolation_in_values_and_keys(void **state)
{
    (void)state;
    check_render("{\"message\": \"hello ${key}\", \"k=${num}\": true}",
                 "{\"key\": \"world\", \"num\": 1}",
                 "{\"message\": \"hello world\", \"k=1\": true}");
    check_render("[\"number: ${num}\", \"booleans: ${t} ${f}\", \"null: ${nil}\"]",
                 "{\"num\": 3, \"t\": true, \"f\": false, \"nil\": null}",
                 "[\"number: 3\", \"booleans: true false\", \"null: \"]");
    check_render("{\"tc_${name}\": \"${value}\"}", "{\"name\": \"foo\", \"value\": \"bar\"}",
                 "{\"tc_foo\": \"bar\"}");
    /* Numbers interpolate as JavaScript prints them. */
    check_render("[\"${a}\", \"${b}\", \"${c}\", \"${d}\"]",
                 "{\"a\": 1.5, \"b\": 2.0, \"c\": 1e21, \"d\": 0.000001}",
                 "[\"1.5\", \"2\", \"1e+21\", \"0.000001\"]");
    /* Text after the closing brace is not an expression (an apostrophe is fine). */
    check_render("\"${a}'s and ${ {x: 1}.x }\"", "{\"a\": \"it\"}", "\"it's and 1\"");
}

/* A number literal is read whole (it was cut to 63 characters: "1" and 70 zeros gave 1e62),
 * rounded as JavaScript rounds it; one a double cannot hold, or of more than 1,024
 * characters, is an error, not another number. */
static void test_long_number_literals_are_exact_or_refused(void **state)
{
    (void)state;
    char tmpl[2200], digits[1100];
    memset(digits, '0', 70);
    digits[70] = '\0';
    snprintf(tmpl, sizeof tmpl, "{\"$eval\": \"1%s\"}", digits);
    check_render(tmpl, "{}", "1e70");
    snprintf(tmpl, sizeof tmpl, "{\"$eval\": \"1%s + 1\"}", digits);
    check_render(tmpl, "{}", "1e70");
    snprintf(tmpl, sizeof tmpl, "{\"$eval\": \"0.%s5\"}", digits);
    check_render(tmpl, "{}", "5e-71");
    snprintf(tmpl, sizeof tmpl, "{\"$eval\": \"9007199254740993%s\"}", "");
    check_render(tmpl, "{}", "9007199254740992"); /* past 2^53, rounded as parseFloat rounds it */
    memset(digits, '0', 400);
    digits[400] = '\0';
    snprintf(tmpl, sizeof tmpl, "{\"$eval\": \"1%s\"}", digits);
    check_error(tmpl, "{}", RT_EPROTO, "too big");
    memset(digits, '1', 1025);
    digits[1025] = '\0';
    snprintf(tmpl, sizeof tmpl, "{\"$eval\": \"%s\"}", digits);
    check_error(tmpl, "{}", RT_EPROTO, "number literal of 1025 characters");
}

static void test_dollar_escapes(void **state)
{
    (void)state;
    check_render("{\"literal:$${name}\": \"literal\"}", "{\"name\": \"foo\"}",
                 "{\"literal:${name}\": \"literal\"}");
    check_render("{\"$$reverse\": [3, 2, {\"$$eval\": \"2 - 1\"}, 0]}", "{}",
                 "{\"$reverse\": [3, 2, {\"$eval\": \"2 - 1\"}, 0]}");
}

static void test_truthiness_follows_json_e(void **state)
{
    (void)state;
    check_render(
        "{\"$if\": \"a || b || c || d || e || f\", \"then\": \"uh oh\", \"else\": \"falsy\"}",
        "{\"a\": null, \"b\": [], \"c\": {}, \"d\": \"\", \"e\": 0, \"f\": false}", "\"falsy\"");
    check_render("[{\"$eval\": \"!x\"}, {\"$eval\": \"!y\"}]", "{\"x\": \"0\", \"y\": [0]}",
                 "[false, false]");
}

static void test_eval_returns_any_value(void **state)
{
    (void)state;
    check_render("{\"config\": {\"$eval\": \"settings.staging\"}}",
                 "{\"settings\": {\"staging\": {\"transactionBackend\": \"mock\"}, "
                 "\"production\": {\"transactionBackend\": \"customerdb\"}}}",
                 "{\"config\": {\"transactionBackend\": \"mock\"}}");
}

static void test_json_operator_sorts_keys(void **state)
{
    (void)state;
    check_render("{\"$json\": [\"a\", \"b\", {\"$eval\": \"a+b\"}, 4]}", "{\"a\": 1, \"b\": 2}",
                 "\"[\\\"a\\\",\\\"b\\\",3,4]\"");
    check_render(
        "{\"$json\": {\"$eval\": \"input\"}}",
        "{\"input\": {\"z\": [1.5, null, \"q\\\"\\n\"], \"a\": {\"y\": true, \"b\": false}}}",
        "\"{\\\"a\\\":{\\\"b\\\":false,\\\"y\\\":true},\\\"z\\\":[1.5,null,\\\"q\\\\\\\"\\\\n\\\"]}"
        "\"");
}

static void test_if_then_else_and_missing_branch_deletes(void **state)
{
    (void)state;
    check_render("{\"key\": {\"$if\": \"cond\", \"then\": 1}, \"k2\": 3}", "{\"cond\": true}",
                 "{\"key\": 1, \"k2\": 3}");
    check_render("{\"$if\": \"x > 5\", \"then\": 1, \"else\": -1}", "{\"x\": 10}", "1");
    check_render("[1, {\"$if\": \"cond\", \"else\": 2}, 3]", "{\"cond\": false}", "[1, 2, 3]");
    check_render("{\"key\": {\"$if\": \"cond\", \"else\": 2}, \"k2\": 3}", "{\"cond\": true}",
                 "{\"k2\": 3}");
    check_render("[1, {\"$if\": \"cond\", \"then\": 2}, 3]", "{\"cond\": false}", "[1, 3]");
    /* A top-level template that deletes itself renders as null. */
    check_render("{\"$if\": \"false\", \"then\": 1}", "{}", "null");
}

static void test_let_binds_names_for_its_in(void **state)
{
    (void)state;
    check_render("{\"$let\": {\"ts\": 100, \"foo\": 200}, \"in\": [{\"$eval\": \"ts+foo\"}, "
                 "{\"$eval\": \"ts-foo\"}, {\"$eval\": \"ts*foo\"}]}",
                 "{}", "[300, -100, 20000]");
    /* The bindings shadow the context, and are rendered in the outer context. */
    check_render("{\"$let\": {\"x\": {\"$eval\": \"x + 1\"}}, \"in\": {\"inner\": \"${x}\"}}",
                 "{\"x\": 1}", "{\"inner\": \"2\"}");
}

static void test_expression_literals_and_access(void **state)
{
    (void)state;
    check_render("[{\"$eval\": \"1.3\"}, {\"$eval\": \"'abc'\"}, {\"$eval\": \"\\\"abc\\\"\"}]",
                 "{}", "[1.3, \"abc\", \"abc\"]");
    check_render(
        "[{\"$eval\": \"[1, 2, \\\"three\\\"]\"}, {\"$eval\": \"{foo: 1, \\\"bar\\\": 2}\"}]", "{}",
        "[[1, 2, \"three\"], {\"foo\": 1, \"bar\": 2}]");
    check_render("{\"$eval\": \"[x, z, x+z]\"}", "{\"x\": \"quick\", \"z\": \"sort\"}",
                 "[\"quick\", \"sort\", \"quicksort\"]");
    check_render("{\"$eval\": \"v.a + v[\\\"b\\\"]\"}",
                 "{\"v\": {\"a\": \"apple\", \"b\": \"banana\", \"c\": \"carrot\"}}",
                 "\"applebanana\"");
    check_render(
        "{\"$eval\": \"{ENOMEM:\\\"Out of memory\\\", ENOCPU:\\\"Out of CPUs\\\"}[msgid]\"}",
        "{\"msgid\": \"ENOMEM\"}", "\"Out of memory\"");
    /* obj["missing"] is null, while obj.missing is an error (below). */
    check_render("{\"$eval\": \"v['nope']\"}", "{\"v\": {}}", "null");
    check_render("{\"$eval\": \"[array[1], string[1], array[-2], string[-2]]\"}",
                 "{\"array\": [\"a\", \"b\", \"c\", \"d\", \"e\"], \"string\": \"abcde\"}",
                 "[\"b\", \"b\", \"d\", \"d\"]");
    /* Strings are indexed by code point. */
    check_render("{\"$eval\": \"s[1]\"}", "{\"s\": \"h\\u00e9llo\"}", "\"\\u00e9\"");
}

static void test_expression_operators(void **state)
{
    (void)state;
    check_render("{\"$eval\": \"[x + z, s + t, z - x, x * z, z / x, z ** 2, (z / x) ** 2]\"}",
                 "{\"x\": 10, \"z\": 20, \"s\": \"face\", \"t\": \"plant\"}",
                 "[30, \"faceplant\", 10, 200, 2, 400, 4]");
    check_render("{\"$eval\": \"[x < z, x <= z, x > z, x >= z, deep == [1, [3, {a: 5}]], "
                 "deep != [1, [3, {a: 5}]]]\"}",
                 "{\"x\": -10, \"z\": 10, \"deep\": [1, [3, {\"a\": 5}]]}",
                 "[true, true, false, false, true, false]");
    check_render("{\"$eval\": \"!(false || false) && true\"}", "{}", "true");
    /* Short-circuit: the unknown name b is never evaluated. */
    check_render("[{\"$eval\": \"true || b\"}, {\"$eval\": \"false && b\"}]", "{}",
                 "[true, false]");
    check_render("{\"$eval\": \"['foo' in {foo: 1, bar: 2}, 'foo' in ['foo', 'bar'], "
                 "'foo' in 'foobar', 'x' in []]\"}",
                 "{}", "[true, true, true, false]");
    /* Precedence: ** binds tighter than *, * than +, + than comparison, and ** is right
     * associative; equality is deep and numeric across integer and real. */
    check_render("{\"$eval\": \"[2 + 3 * 4, 2 ** 3 ** 2, 1 + 2 == 3, 1.0 == 1, -2 ** 2]\"}", "{}",
                 "[14, 512, true, true, 4]");
}

static void test_unsupported_operators_are_named_errors(void **state)
{
    (void)state;
    check_error("{\"$map\": [1, 2], \"each(x)\": {\"$eval\": \"x\"}}", "{}", RT_EPROTO, "$map");
    check_error("{\"a\": {\"$flatten\": [[1], [2]]}}", "{}", RT_EPROTO, "$flatten");
    check_error("{\"$merge\": [{\"a\": 1}]}", "{}", RT_EPROTO, "$merge");
    check_error("{\"$fromNow\": \"1 day\"}", "{}", RT_EPROTO, "$fromNow");
    check_error("{\"$sort\": [2, 1]}", "{}", RT_EPROTO, "$sort");
    check_error("{\"$reverse\": [2, 1]}", "{}", RT_EPROTO, "$reverse");
    check_error("{\"$switch\": {\"true\": 1}}", "{}", RT_EPROTO, "$switch");
    check_error("{\"$eval\": \"len(x)\"}", "{\"x\": [1]}", RT_EPROTO, "function calls");
    check_error("{\"$eval\": \"now\"}", "{}", RT_EPROTO, "built-in 'now'");
    check_error("{\"$eval\": \"x[1:2]\"}", "{\"x\": [1, 2]}", RT_EPROTO, "slices");
    /* An unknown $word is reserved, not passed through. */
    check_error("{\"$foo\": 1}", "{}", RT_EPROTO, "reserved");
    check_error("{\"$eval\": \"1\", \"$if\": \"true\"}", "{}", RT_EPROTO, "only one operator");
}

static void test_template_and_evaluation_errors(void **state)
{
    (void)state;
    check_error("{\"$eval\": \"nope\"}", "{}", RT_EPROTO, "unknown context value nope");
    check_error("{\"$eval\": \"v.missing\"}", "{\"v\": {}}", RT_EPROTO, "no property \"missing\"");
    check_error("\"a ${v} b\"", "{\"v\": {\"x\": 1}}", RT_EPROTO, "produced an array or object");
    check_error("\"a ${v\"", "{\"v\": 1}", RT_EPROTO, "expected }");
    check_error("{\"$eval\": 1}", "{}", RT_EPROTO, "$eval must be given a string");
    check_error("{\"$eval\": \"1\", \"then\": 2}", "{}", RT_EPROTO, "undefined properties: then");
    check_error("{\"$if\": true, \"then\": 1}", "{}", RT_EPROTO, "string expressions only");
    check_error("{\"$let\": [1], \"in\": 1}", "{}", RT_EPROTO, "$let value must be an object");
    check_error("{\"$let\": {\"a\": 1}}", "{}", RT_EPROTO, "requires an `in` clause");
    check_error("{\"$let\": {\"a-b\": 1}, \"in\": 1}", "{}", RT_EPROTO, "top level keys of $let");
    check_error("{\"$eval\": \"1 / 0\"}", "{}", RT_EPROTO, "division by zero");
    check_error("{\"$eval\": \"1 < 'a'\"}", "{}", RT_EPROTO, "expects numbers/strings");
    check_error("{\"$eval\": \"1 + 'a'\"}", "{}", RT_EPROTO, "infix: +");
    check_error("{\"$eval\": \"x[5]\"}", "{\"x\": [1]}", RT_EPROTO, "index out of bounds");
    check_error("{\"$eval\": \"1 = 1\"}", "{}", RT_EPROTO, "unexpected character '='");
    check_error("{\"$eval\": \"1 2\"}", "{}", RT_EPROTO, "unexpected token '2'");
    check_error("{\"$eval\": \"'open\"}", "{}", RT_EPROTO, "unterminated string");
    check_error("{\"$eval\": \"\"}", "{}", RT_EPROTO, "unexpected end");
    check_error("1", "{\"not-an-identifier\": 1}", RT_EPROTO, "top level keys of context");
}

static void test_runaway_templates_are_capped(void **state)
{
    (void)state;
    /* 100000 nested parentheses. */
    size_t n = 100000;
    char *expr = malloc(2 * n + 2);
    memset(expr, '(', n);
    expr[n] = '1';
    memset(expr + n + 1, ')', n);
    expr[2 * n + 1] = '\0';
    json_t *t = json_pack("{s:s}", "$eval", expr), *out = NULL;
    char errstr[RT_ERRSTR_SIZE];
    assert_int_equal(rt_jsone_render(t, NULL, &out, errstr), RT_ETOOBIG);
    json_decref(t);
    /* A long left-associative chain 1+1+...: a deep tree, refused before evaluating. */
    for (size_t i = 0; i < n; i++) expr[2 * i] = '1', expr[2 * i + 1] = '+';
    expr[2 * n] = '1';
    expr[2 * n + 1] = '\0';
    t = json_pack("{s:s}", "$eval", expr);
    assert_int_equal(rt_jsone_render(t, NULL, &out, errstr), RT_ETOOBIG);
    json_decref(t);
    free(expr);
    /* Doubling a string 40 times in nested $let is refused, not attempted. */
    json_t *tpl = json_pack("{s:s}", "$eval", "s");
    for (int i = 0; i < 40; i++)
        tpl = json_pack("{s:{s:{s:s}},s:o}", "$let", "s", "$eval", "s + s", "in", tpl);
    json_t *ctx = json_pack("{s:s}", "s", "abcdefgh");
    assert_int_equal(rt_jsone_render(tpl, ctx, &out, errstr), RT_ETOOBIG);
    assert_null(out);
    json_decref(tpl);
    json_decref(ctx);
}

static void test_result_shares_nothing_with_the_context(void **state)
{
    (void)state;
    json_t *t = parse("{\"a\": {\"$eval\": \"obj\"}}"), *c = parse("{\"obj\": {\"k\": 1}}"), *out;
    char errstr[RT_ERRSTR_SIZE];
    assert_int_equal(rt_jsone_render(t, c, &out, errstr), RT_OK);
    json_object_set_new(json_object_get(out, "a"), "k", json_integer(2));
    assert_int_equal(json_integer_value(json_object_get(json_object_get(c, "obj"), "k")), 1);
    json_decref(out);
    json_decref(t);
    json_decref(c);
}

/* ---- the real actions.json --------------------------------------------------------------- */

static rt_actions *load_fixture_actions(void)
{
    size_t len;
    char *text = rt_test_read_file(rt_test_fixture("taskcluster/actions.json"), &len);
    rt_actions *actions = NULL;
    char errstr[RT_ERRSTR_SIZE];
    if (rt_actions_parse(text, len, len, &actions, errstr)) fail_msg("actions.json: %s", errstr);
    free(text);
    return actions;
}

static const char *path_string(const json_t *root, const char *a, const char *b, const char *c)
{
    const json_t *v = json_object_get(json_object_get(root, a), b);
    if (c) v = json_object_get(v, c);
    return json_string_value(v);
}

#define DECISION "f7Jj_h6MTEKr5Ln_7aFqbw"

static void test_fixture_retrigger_multiple_renders_field_by_field(void **state)
{
    (void)state;
    rt_actions *actions = load_fixture_actions();
    const rt_action *action = NULL;
    char errstr[RT_ERRSTR_SIZE];
    assert_int_equal(rt_actions_find(actions, "retrigger-multiple", NULL, 0, &action, errstr),
                     RT_OK);
    json_t *input = parse("{\"requests\": [{\"tasks\": [\"test-linux1804-64/opt-mochitest-1\"], "
                          "\"times\": 3}]}");
    json_t *payload = NULL;
    /* A task-group action: the task id given is not used, taskId renders null. */
    assert_int_equal(rt_actions_render(actions, action, DECISION, "GWxTc8p_RUa5_Xo4RtMiCA", input,
                                       &payload, errstr),
                     RT_OK);
    assert_string_equal(path_string(payload, "decision", "action", "name"), "retrigger-multiple");
    assert_string_equal(path_string(payload, "decision", "action", "cb_name"),
                        "retrigger-multiple");
    assert_string_equal(path_string(payload, "decision", "action", "symbol"), "rt");
    assert_string_equal(path_string(payload, "decision", "action", "taskGroupId"), DECISION);
    assert_string_equal(path_string(payload, "decision", "push", "revision"),
                        "c7766d0b4a121985a8b07e6721d66ccab57bbf76");
    assert_string_equal(path_string(payload, "decision", "push", "pushlog_id"), "109591");
    assert_string_equal(path_string(payload, "decision", "repository", "project"), "autoland");
    assert_string_equal(path_string(payload, "decision", "repository", "level"), "3");
    json_t *user = json_object_get(payload, "user");
    assert_int_equal(json_object_size(user), 3);
    assert_string_equal(json_string_value(json_object_get(user, "taskGroupId")), DECISION);
    assert_true(json_is_null(json_object_get(user, "taskId")));
    assert_true(json_equal(json_object_get(user, "input"), input));
    /* Nothing else than the template's keys. */
    assert_int_equal(json_object_size(payload), 2);
    assert_int_equal(json_object_size(json_object_get(payload, "decision")), 3);
    json_decref(payload);
    json_decref(input);
    rt_actions_free(actions);
}

static void test_fixture_retrigger_and_backfill_render_with_the_task_id(void **state)
{
    (void)state;
    rt_actions *actions = load_fixture_actions();
    const rt_action *action = NULL;
    char errstr[RT_ERRSTR_SIZE];
    rt_tag tags[] = {{"kind", "test"}, {"retrigger", "true"}, {"test-type", "mochitest"}};
    static const char *const names[] = {"retrigger", "backfill"};
    static const char *const cb_names[] = {"retrigger", "backfill"};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(rt_actions_find(actions, names[i], tags, 3, &action, errstr), RT_OK);
        json_t *input = parse("{\"times\": 5}"), *payload = NULL;
        assert_int_equal(rt_actions_render(actions, action, DECISION, "GWxTc8p_RUa5_Xo4RtMiCA",
                                           input, &payload, errstr),
                         RT_OK);
        assert_string_equal(path_string(payload, "decision", "action", "name"), names[i]);
        assert_string_equal(path_string(payload, "decision", "action", "cb_name"), cb_names[i]);
        assert_string_equal(path_string(payload, "user", "taskId", NULL), "GWxTc8p_RUa5_Xo4RtMiCA");
        assert_string_equal(path_string(payload, "user", "taskGroupId", NULL), DECISION);
        assert_int_equal(json_integer_value(json_object_get(
                             json_object_get(json_object_get(payload, "user"), "input"), "times")),
                         5);
        json_decref(payload);
        json_decref(input);
    }
    rt_actions_free(actions);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_template_without_operators_renders_unchanged),
        cmocka_unit_test(test_interpolation_in_values_and_keys),
        cmocka_unit_test(test_long_number_literals_are_exact_or_refused),
        cmocka_unit_test(test_dollar_escapes),
        cmocka_unit_test(test_truthiness_follows_json_e),
        cmocka_unit_test(test_eval_returns_any_value),
        cmocka_unit_test(test_json_operator_sorts_keys),
        cmocka_unit_test(test_if_then_else_and_missing_branch_deletes),
        cmocka_unit_test(test_let_binds_names_for_its_in),
        cmocka_unit_test(test_expression_literals_and_access),
        cmocka_unit_test(test_expression_operators),
        cmocka_unit_test(test_unsupported_operators_are_named_errors),
        cmocka_unit_test(test_template_and_evaluation_errors),
        cmocka_unit_test(test_runaway_templates_are_capped),
        cmocka_unit_test(test_result_shares_nothing_with_the_context),
        cmocka_unit_test(test_fixture_retrigger_multiple_renders_field_by_field),
        cmocka_unit_test(test_fixture_retrigger_and_backfill_render_with_the_task_id),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
