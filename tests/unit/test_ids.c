/* SPDX-License-Identifier: MPL-2.0 */
/* test_ids.c - identifier validation (common/core/ids.h) against hostile values: path
 * traversal, CR/LF, "..", very long, non-UTF-8 and non-ASCII; and the Pulse parser
 * refusing messages that carry them (the reason names the field). */
#include "support/util.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/ids.h"
#include "common/core/pulse.h"

#define MODERN "pulse/fuzzmanager_task-completed_Z1kaoRtHRRWyyuMDqadYPA.json"

/* Values no identifier may be. */
static const char *const HOSTILE[] = {
    "",       "../../x",          "..",          "a/../b",
    "a\r\nb", "a\nSet-Cookie: x", "a\rb",        "a\tb",
    "a\x7f",  "\xff\xfe\xfd",     "caf\xc3\xa9", "\xc0\xae\xc0\xae/x", /* overlong UTF-8 ".." */
};

static char *repeat(char c, size_t n)
{
    char *s = malloc(n + 1);
    assert_non_null(s);
    memset(s, c, n);
    s[n] = '\0';
    return s;
}

static void test_hostile_values_are_no_identifier_of_any_kind(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof HOSTILE / sizeof HOSTILE[0]; i++) {
        const char *v = HOSTILE[i];
        if (rt_valid_task_id(v)) fail_msg("task id accepted: '%s'", v);
        if (rt_valid_project(v)) fail_msg("project accepted: '%s'", v);
        if (rt_valid_revision(v)) fail_msg("revision accepted: '%s'", v);
        if (rt_valid_label(v)) fail_msg("label accepted: '%s'", v);
        if (rt_valid_task_queue_id(v)) fail_msg("task queue id accepted: '%s'", v);
    }
    assert_false(rt_valid_task_id(NULL));
    assert_false(rt_valid_project(NULL));
    assert_false(rt_valid_revision(NULL));
    assert_false(rt_valid_label(NULL));
    assert_false(rt_valid_task_queue_id(NULL));
}

static void test_task_ids_are_exactly_22_slug_characters(void **state)
{
    (void)state;
    assert_true(rt_valid_task_id("GWxTc8p_RUa5_Xo4RtMiCA"));
    assert_true(rt_valid_task_id("f8fRfedPSp2-A7M9Zhxe-Q"));
    assert_false(rt_valid_task_id("GWxTc8p_RUa5_Xo4RtMiC"));   /* 21 */
    assert_false(rt_valid_task_id("GWxTc8p_RUa5_Xo4RtMiCAA")); /* 23 */
    assert_false(rt_valid_task_id("../../xxxxxxxxxxxxxxxxx")); /* 22 with traversal */
    assert_false(rt_valid_task_id("GWxTc8p_RUa5_Xo4RtM.CA"));
    assert_false(rt_valid_task_id("GWxTc8p_RUa5_Xo4RtM%CA"));
    assert_false(rt_valid_task_id("GWxTc8p_RUa5_Xo4RtM\r\nA"));
    assert_false(rt_valid_task_id("GWxTc8p_RUa5_Xo4RtMi\xc3\xa9"));
}

static void test_projects_refuse_dots_at_start_and_doubled_and_length_over_64(void **state)
{
    (void)state;
    assert_true(rt_valid_project("mozilla-central"));
    assert_true(rt_valid_project("comm-esr115"));
    assert_true(rt_valid_project("mozilla-esr115.1"));
    assert_false(rt_valid_project(".hidden"));
    assert_false(rt_valid_project("a..b"));
    assert_false(rt_valid_project("a/b"));
    assert_false(rt_valid_project("a b"));
    assert_false(rt_valid_project("a:b")); /* Redis key separator */
    assert_false(rt_valid_project("%2e%2e"));
    char *s = repeat('p', 64);
    assert_true(rt_valid_project(s));
    free(s);
    s = repeat('p', 65);
    assert_false(rt_valid_project(s));
    free(s);
}

static void test_revisions_are_12_to_40_hex_digits(void **state)
{
    (void)state;
    assert_true(rt_valid_revision("b437ae030825"));
    assert_true(rt_valid_revision("b437ae030825a8ea9fa7a632b1fcb9becbe11f69"));
    assert_false(rt_valid_revision("b437ae03082"));                               /* 11 */
    assert_false(rt_valid_revision("b437ae030825a8ea9fa7a632b1fcb9becbe11f690")); /* 41 */
    assert_false(rt_valid_revision("b437ae03082g"));
    assert_false(rt_valid_revision("b437ae030825/.."));
    assert_false(rt_valid_revision("b437ae030825\n"));
}

static void test_labels_are_printable_ascii_without_dotdot_up_to_512(void **state)
{
    (void)state;
    assert_true(rt_valid_label("test-linux1804-64/opt-mochitest-browser-chrome-1"));
    assert_true(rt_valid_label("test-android-em-7.0-x86_64/debug-mochitest-e10s-1"));
    assert_true(rt_valid_label("a label with inner spaces"));
    assert_false(rt_valid_label(" leading"));
    assert_false(rt_valid_label("trailing "));
    assert_false(rt_valid_label("a/../b"));
    assert_false(rt_valid_label("label\r\n{\"level\":\"error\"}"));
    assert_false(rt_valid_label("nul-free\x01"));
    char *s = repeat('l', 512);
    assert_true(rt_valid_label(s));
    free(s);
    s = repeat('l', 513);
    assert_false(rt_valid_label(s));
    free(s);
    s = repeat('l', 100000);
    assert_false(rt_valid_label(s));
    free(s);
}

static void test_task_queue_ids_have_exactly_one_inner_slash(void **state)
{
    (void)state;
    assert_true(rt_valid_task_queue_id("gecko-t/t-linux-large"));
    assert_true(rt_valid_task_queue_id("a/b"));
    assert_false(rt_valid_task_queue_id("/b"));
    assert_false(rt_valid_task_queue_id("a/"));
    assert_false(rt_valid_task_queue_id("a/b/c"));
    assert_false(rt_valid_task_queue_id("a/.."));
    assert_false(rt_valid_task_queue_id("gecko t/linux"));
    assert_false(rt_valid_task_queue_id("gecko-t/linux\r\n"));
}

/* The modern fixture body with one string field replaced (path: "status.taskId",
 * "task.tags.label", ...), parsed as a task-completed message. */
static int parse_with(const char *path, const char *value, size_t value_len, char *reason)
{
    char *text = rt_test_read_file(rt_test_fixture(MODERN), NULL);
    json_t *doc = json_loads(text, 0, NULL);
    free(text);
    assert_non_null(doc);
    char copy[64];
    snprintf(copy, sizeof copy, "%s", path);
    json_t *obj = doc;
    char *save = NULL, *part = strtok_r(copy, ".", &save);
    for (;;) {
        char *next = strtok_r(NULL, ".", &save);
        if (!next) break;
        json_t *child = json_object_get(obj, part);
        if (!child) {
            child = json_object();
            json_object_set_new(obj, part, child);
        }
        obj = child;
        part = next;
    }
    json_object_set_new(obj, part, json_string("@@HOSTILE@@"));
    char *dumped = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    assert_non_null(dumped);
    /* The value goes in as raw bytes (JSON-escaped control characters), so invalid UTF-8
     * reaches the parser as it would on the wire. */
    char *at = strstr(dumped, "@@HOSTILE@@");
    assert_non_null(at);
    char *body = malloc(strlen(dumped) + value_len * 6 + 1);
    assert_non_null(body);
    size_t n = (size_t)(at - dumped);
    memcpy(body, dumped, n);
    for (size_t i = 0; i < value_len; i++) {
        unsigned char c = (unsigned char)value[i];
        if (c < 0x20 || c == '"' || c == '\\')
            n += (size_t)sprintf(body + n, "\\u%04x", c);
        else
            body[n++] = (char)c;
    }
    strcpy(body + n, at + strlen("@@HOSTILE@@"));
    free(dumped);
    rt_pulse_task t;
    int rc = rt_pulse_parse(body, strlen(body), "exchange/taskcluster-queue/v1/task-completed",
                            1024 * 1024, &t, reason);
    if (rc == RT_OK) rt_pulse_task_free(&t);
    free(body);
    return rc;
}

static void test_pulse_messages_with_hostile_identifiers_are_refused_naming_the_field(void **state)
{
    (void)state;
    char reason[RT_PULSE_REASON_SIZE];
    assert_int_equal(parse_with("task.tags.label", "fine-label/opt-1", 16, reason), RT_OK);
    static const struct {
        const char *path;
        const char *reason;
    } fields[] = {
        {"status.taskId", "invalid-value:status.taskId"},
        {"status.taskGroupId", "invalid-value:status.taskGroupId"},
        {"status.taskQueueId", "invalid-value:status.taskQueueId"},
        {"task.tags.label", "invalid-value:task.tags.label"},
    };
    for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++) {
        for (size_t i = 0; i < sizeof HOSTILE / sizeof HOSTILE[0]; i++) {
            int rc = parse_with(fields[f].path, HOSTILE[i], strlen(HOSTILE[i]), reason);
            /* The empty label is "no label" for tags; everything else is refused. */
            if (i == 0 && !strcmp(fields[f].path, "task.tags.label")) continue;
            if (rc != RT_EPROTO)
                fail_msg("%s = '%s' accepted (rc %d)", fields[f].path, HOSTILE[i], rc);
            /* Invalid UTF-8 does not even parse as JSON. */
            if (strcmp(reason, fields[f].reason) != 0 && strcmp(reason, "invalid-json") != 0)
                fail_msg("%s = '%s': reason '%s'", fields[f].path, HOSTILE[i], reason);
        }
    }
    /* An embedded NUL (\u0000) cannot shorten a label into a valid one: the JSON parser
     * refuses it (and the label check would, by length). */
    assert_int_equal(parse_with("task.tags.label", "ok\0\r\nX", 6, reason), RT_EPROTO);
    assert_string_equal(reason, "invalid-json");
    char *longlabel = repeat('l', 4096);
    assert_int_equal(parse_with("task.tags.label", longlabel, 4096, reason), RT_EPROTO);
    free(longlabel);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hostile_values_are_no_identifier_of_any_kind),
        cmocka_unit_test(test_task_ids_are_exactly_22_slug_characters),
        cmocka_unit_test(test_projects_refuse_dots_at_start_and_doubled_and_length_over_64),
        cmocka_unit_test(test_revisions_are_12_to_40_hex_digits),
        cmocka_unit_test(test_labels_are_printable_ascii_without_dotdot_up_to_512),
        cmocka_unit_test(test_task_queue_ids_have_exactly_one_inner_slash),
        cmocka_unit_test(test_pulse_messages_with_hostile_identifiers_are_refused_naming_the_field),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
