/* SPDX-License-Identifier: MPL-2.0 */
/* test_log.c - JSON log lines, levels, escaping and secret redaction. */
#include "support/util.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/errors.h"
#include "common/io/log.h"

/* Runs one log call into memory and returns the text (caller frees). */
#define CAPTURE(text, call)                                                                        \
    do {                                                                                           \
        size_t capture_len_ = 0;                                                                   \
        FILE *capture_ = open_memstream(&(text), &capture_len_);                                   \
        rt_log_set_output(capture_);                                                               \
        call;                                                                                      \
        rt_log_set_output(NULL);                                                                   \
        fclose(capture_);                                                                          \
    } while (0)

static int setup(void **state)
{
    (void)state;
    rt_log_init("retrig-test");
    rt_log_set_level(RT_LOG_DEBUG);
    rt_log_clear_secrets();
    return 0;
}

static void test_line_is_one_json_object_with_fields(void **state)
{
    (void)state;
    char *text = NULL;
    CAPTURE(text, rt_log_info("run recorded", "task_id", "B3EheQ-IQ5aPzw34KS_a6g", "run_id", "0"));
    assert_non_null(strchr(text, '\n'));
    assert_ptr_equal(strchr(text, '\n'), text + strlen(text) - 1); /* exactly one line */
    json_error_t error;
    json_t *line = json_loads(text, 0, &error);
    if (!line) fail_msg("not JSON: %s (%s)", text, error.text);
    assert_string_equal(json_string_value(json_object_get(line, "level")), "info");
    assert_string_equal(json_string_value(json_object_get(line, "prog")), "retrig-test");
    assert_string_equal(json_string_value(json_object_get(line, "msg")), "run recorded");
    assert_string_equal(json_string_value(json_object_get(line, "task_id")),
                        "B3EheQ-IQ5aPzw34KS_a6g");
    assert_non_null(json_object_get(line, "ts"));
    json_decref(line);
    free(text);
}

static void test_levels_below_the_threshold_are_dropped(void **state)
{
    (void)state;
    rt_log_set_level(RT_LOG_WARN);
    char *text = NULL;
    CAPTURE(text, {
        rt_log_info("hidden");
        rt_log_debug("hidden too");
        rt_log_warn("shown");
    });
    assert_null(strstr(text, "hidden"));
    assert_non_null(strstr(text, "shown"));
    free(text);
    rt_log_level level;
    assert_int_equal(rt_log_parse_level("warning", &level), 0);
    assert_int_equal(level, RT_LOG_WARN);
    assert_true(rt_log_parse_level("verbose", &level) < 0);
}

static void test_hostile_values_stay_valid_json(void **state)
{
    (void)state;
    char *text = NULL;
    CAPTURE(text, rt_log_error("bad\r\nline \"quoted\"", "label", "a\x01\x7f\xff\xc3(b\\", "empty",
                               NULL));
    json_error_t error;
    json_t *line = json_loads(text, 0, &error);
    if (!line) fail_msg("not JSON: %s (%s)", text, error.text);
    assert_string_equal(json_string_value(json_object_get(line, "msg")), "bad\r\nline \"quoted\"");
    assert_true(json_is_null(json_object_get(line, "empty")));
    assert_ptr_equal(strchr(text, '\n'), text + strlen(text) - 1);
    json_decref(line);
    free(text);
}

static void test_url_passwords_are_redacted(void **state)
{
    (void)state;
    char *text = NULL;
    CAPTURE(text, rt_log_error("connect failed", "url",
                               "amqps://retrig:hunter2secret@pulse.mozilla.org:5671/", "other",
                               "postgresql://u:pw@db/x and redis://:redispw@r:6379/0"));
    assert_null(strstr(text, "hunter2secret"));
    assert_null(strstr(text, ":pw@"));
    assert_null(strstr(text, "redispw"));
    assert_non_null(strstr(text, "amqps://retrig:***@pulse.mozilla.org:5671/"));
    free(text);
    char out[128];
    rt_redact("see https://user:topsecret@host/path", out, sizeof out);
    assert_string_equal(out, "see https://user:***@host/path");
    /* Not a URL password: times and ports stay. */
    rt_redact("at 12:30:45 on host:5672", out, sizeof out);
    assert_string_equal(out, "at 12:30:45 on host:5672");
}

static void test_registered_secrets_are_redacted_anywhere(void **state)
{
    (void)state;
    rt_log_add_secret("tc-access-token-XYZ");
    char *text = NULL;
    CAPTURE(text, rt_log_error("header Authorization: tc-access-token-XYZ", "token",
                               "prefix-tc-access-token-XYZ-suffix"));
    assert_null(strstr(text, "tc-access-token-XYZ"));
    assert_non_null(strstr(text, "prefix-***-suffix"));
    free(text);
    char *copy = rt_redact_dup("tc-access-token-XYZ");
    assert_string_equal(copy, "***");
    free(copy);
}

/* The text form a person reads: "<prog>: <msg>: <error> (fields)", "warning: " for a
 * warning, the hint on its own line, a repeated message said once, control characters
 * escaped and secrets redacted. */
static void test_text_lines_for_people(void **state)
{
    (void)state;
    rt_log_add_secret("s3cr3t-value");
    rt_log_set_format(RT_LOG_TEXT);
    char *text = NULL;
    CAPTURE(text, rt_log_error("cannot read the file", "file", "a\x1b[31mb\n", "error",
                               "no such file", "hint", "try s3cr3t-value"));
    assert_string_equal(text,
                        "retrig-test: cannot read the file: no such file (file=a\\x1b[31mb\\n)\n"
                        "hint: try ***\n");
    free(text);
    CAPTURE(text, rt_log_warn("cannot connect to Postgres", "error",
                              "cannot connect to Postgres at h:1/db: refused"));
    assert_string_equal(text,
                        "retrig-test: warning: cannot connect to Postgres at h:1/db: refused\n");
    free(text);
    CAPTURE(text, rt_log_info("consuming", "queue", "q"));
    assert_string_equal(text, "retrig-test: consuming (queue=q)\n");
    free(text);
    /* Back to JSON: the same call is a JSON object again. */
    rt_log_set_format(RT_LOG_JSON);
    CAPTURE(text, rt_log_info("consuming", "queue", "q"));
    json_t *line = json_loads(text, 0, NULL);
    assert_non_null(line);
    assert_string_equal(json_string_value(json_object_get(line, "msg")), "consuming");
    json_decref(line);
    free(text);
    rt_log_format format;
    assert_int_equal(rt_log_parse_format("text", &format), 0);
    assert_int_equal(format, RT_LOG_TEXT);
    assert_int_equal(rt_log_parse_format("xml", &format), RT_EINVAL);
    rt_log_set_format(RT_LOG_AUTO);
}

/* A secret with a quote and a backslash: redacted on the raw value, before escaping made it
 * pa\"ss\\word in the line. */
static void test_secrets_with_quotes_and_backslashes_are_redacted(void **state)
{
    (void)state;
    rt_log_add_secret("pa\"ss\\word-77");
    char *text = NULL;
    CAPTURE(text,
            rt_log_warn("login failed with pa\"ss\\word-77", "detail", "token=pa\"ss\\word-77;"));
    if (strstr(text, "ss\\\\word-77") || strstr(text, "word-77"))
        fail_msg("secret printed: %s", text);
    json_t *line = json_loads(text, 0, NULL);
    assert_non_null(line);
    assert_string_equal(json_string_value(json_object_get(line, "detail")), "token=***;");
    json_decref(line);
    free(text);
}

/* A secret that straddles the 8 KB cap: redacted first, so no part of it is printed. */
static void test_a_secret_at_the_cap_is_not_printed_in_part(void **state)
{
    (void)state;
    static const char secret[] = "SeCrEt-TOKEN-0123456789abcdef";
    rt_log_add_secret(secret);
    for (size_t pad = 7950; pad < 8200; pad += 3) {
        char *value = malloc(pad + sizeof secret + 8);
        assert_non_null(value);
        memset(value, 'x', pad);
        memcpy(value + pad, secret, sizeof secret);
        char *text = NULL;
        CAPTURE(text, rt_log_info("m", "value", value));
        if (strstr(text, "SeCrEt-TOK")) fail_msg("part of the secret printed at pad %zu", pad);
        free(text);
        free(value);
    }
}

/* Lines over the cap stay one valid JSON object and say so, whatever falls at the cut: a
 * multi-byte character, a two-byte or six-byte escape, a key. */
static void test_cut_lines_are_valid_json_and_say_they_were_cut(void **state)
{
    (void)state;
    const char *units[] = {"\xe2\x82\xac", "\"", "\x01", "\xf0\x9f\x90\x9b", "a"};
    for (size_t u = 0; u < sizeof units / sizeof *units; u++) {
        for (size_t shift = 0; shift < 6; shift++) {
            size_t n = strlen(units[u]), count = 9000 / n + 10;
            char *value = malloc(shift + count * n + 1);
            assert_non_null(value);
            memset(value, 'y', shift);
            for (size_t i = 0; i < count; i++) memcpy(value + shift + i * n, units[u], n);
            value[shift + count * n] = '\0';
            char *text = NULL;
            CAPTURE(text, rt_log_error("big", "task_id", "B3EheQ-IQ5aPzw34KS_a6g", "value", value,
                                       "after", "gone"));
            assert_true(strlen(text) <= 8192);
            json_error_t error;
            json_t *line = json_loads(text, 0, &error);
            if (!line) fail_msg("unit %zu shift %zu: not JSON (%s)", u, shift, error.text);
            assert_true(json_is_true(json_object_get(line, "truncated")));
            assert_string_equal(json_string_value(json_object_get(line, "task_id")),
                                "B3EheQ-IQ5aPzw34KS_a6g");
            assert_true(json_string_length(json_object_get(line, "value")) > 1300);
            assert_null(json_object_get(line, "after"));
            json_decref(line);
            free(text);
            free(value);
        }
    }
    /* A key too long to fit is left out, with its value. */
    char *key = malloc(9001);
    assert_non_null(key);
    memset(key, 'k', 9000);
    key[9000] = '\0';
    char *text = NULL;
    CAPTURE(text, rt_log_info("m", "first", "1", key, "v"));
    json_t *line = json_loads(text, 0, NULL);
    assert_non_null(line);
    assert_string_equal(json_string_value(json_object_get(line, "first")), "1");
    assert_true(json_is_true(json_object_get(line, "truncated")));
    json_decref(line);
    free(text);
    free(key);
    /* A short line says nothing of the kind. */
    CAPTURE(text, rt_log_info("m", "k", "v"));
    line = json_loads(text, 0, NULL);
    assert_null(json_object_get(line, "truncated"));
    json_decref(line);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_line_is_one_json_object_with_fields, setup),
        cmocka_unit_test_setup(test_levels_below_the_threshold_are_dropped, setup),
        cmocka_unit_test_setup(test_hostile_values_stay_valid_json, setup),
        cmocka_unit_test_setup(test_url_passwords_are_redacted, setup),
        cmocka_unit_test_setup(test_registered_secrets_are_redacted_anywhere, setup),
        cmocka_unit_test_setup(test_text_lines_for_people, setup),
        cmocka_unit_test_setup(test_secrets_with_quotes_and_backslashes_are_redacted, setup),
        cmocka_unit_test_setup(test_a_secret_at_the_cap_is_not_printed_in_part, setup),
        cmocka_unit_test_setup(test_cut_lines_are_valid_json_and_say_they_were_cut, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
