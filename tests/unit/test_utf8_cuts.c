/* SPDX-License-Identifier: MPL-2.0 */
/* test_utf8_cuts.c - text cut to a size never ends in half a character: errorsummary fields
 * (RT_ES_MAX_FIELD), failure lines (RT_FAILURE_LINE_MAX_INPUT) and the history rows made of
 * them, with 2-, 3- and 4-byte characters straddling every cut position. A field cut in
 * half a character made json_pack return NULL (the failure vanished from `retrig
 * errorsummary`, the lines from `retrig decide`) and Postgres refuse the history batch. */
#include "support/util.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/errorsummary.h"
#include "common/core/failure_line.h"
#include "common/core/history.h"
#include "common/core/utf8.h"

static const char *const chars[] = {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x90\x9b"}; /* é € 🐛 */

/* `prefix` bytes of 'a', then the character `c` repeated up to at least `total` bytes: the
 * cut at `total` falls `prefix % strlen(c)` bytes into a character. */
static char *text_with(size_t prefix, const char *c, size_t total)
{
    size_t clen = strlen(c), size = total + 2 * clen + 1;
    char *s = malloc(size);
    assert_non_null(s);
    memset(s, 'a', prefix);
    size_t n = prefix;
    while (n < total + clen) {
        memcpy(s + n, c, clen);
        n += clen;
    }
    s[n] = '\0';
    return s;
}

static void assert_valid(const char *s, const char *what)
{
    if (!s) return;
    if (!rt_utf8_valid(s, strlen(s)))
        fail_msg("%s is not valid UTF-8 (%zu bytes)", what, strlen(s));
}

static void test_errorsummary_fields_are_cut_at_character_boundaries(void **state)
{
    (void)state;
    for (size_t k = 0; k < 3; k++) {
        size_t clen = strlen(chars[k]);
        for (size_t shift = 0; shift < clen; shift++) {
            char *long_text = text_with(shift, chars[k], RT_ES_MAX_FIELD + 8);
            /* Two failures: the first with every cut field, the second plain. */
            size_t size = 8 * strlen(long_text) + 1024;
            char *doc = malloc(size);
            assert_non_null(doc);
            snprintf(doc, size,
                     "{\"action\":\"test_groups\",\"groups\":[\"%s\"]}\n"
                     "{\"action\":\"test_result\",\"test\":\"%s\",\"subtest\":\"%s\","
                     "\"status\":\"FAIL\",\"expected\":\"PASS\",\"group\":\"%s\","
                     "\"message\":\"%s\"}\n"
                     "{\"action\":\"test_result\",\"test\":\"b.js\",\"status\":\"FAIL\","
                     "\"expected\":\"PASS\",\"group\":\"g\",\"message\":\"second\"}\n"
                     "{\"action\":\"group_result\",\"group\":\"%s\",\"status\":\"ERROR\"}\n",
                     long_text, long_text, long_text, long_text, long_text, long_text);
            rt_errorsummary es = {0};
            assert_int_equal(rt_errorsummary_add(&es, doc, strlen(doc)), RT_OK);
            assert_int_equal(es.nfailures, 2);
            json_t *list = json_array();
            for (size_t i = 0; i < es.nfailures; i++) {
                const rt_es_failure *f = &es.failures[i];
                assert_true(strlen(f->test) <= RT_ES_MAX_FIELD);
                if (i == 0) assert_true(strlen(f->test) > RT_ES_MAX_FIELD - 4);
                assert_valid(f->test, "test");
                assert_valid(f->subtest, "subtest");
                assert_valid(f->message, "message");
                assert_valid(f->group, "group");
                json_t *item = json_pack("{s:s, s:s?, s:s, s:s, s:s?, s:s}", "test", f->test,
                                         "subtest", f->subtest, "status", f->status, "expected",
                                         f->expected, "message", f->message, "group", f->group);
                if (!item)
                    fail_msg("json_pack refused failure %zu (char %zu, shift %zu)", i, k, shift);
                json_array_append_new(list, item);
            }
            assert_int_equal(json_array_size(list), 2);
            for (size_t g = 0; g < es.ngroups; g++) assert_valid(es.groups[g].name, "group name");

            /* The history rows made of them are valid text for Postgres. */
            rt_history_rows rows;
            assert_int_equal(rt_history_rows_from_errorsummary(&es, &rows), RT_OK);
            for (size_t t = 0; t < rows.ntests; t++) {
                assert_valid(rows.tests[t].test, "row test");
                assert_valid(rows.tests[t].message, "row message");
                assert_valid(rows.tests[t].signature, "row signature");
            }
            rt_history_rows_free(&rows);
            json_decref(list);
            rt_errorsummary_free(&es);
            free(doc);
            free(long_text);
        }
    }
}

static void test_failure_lines_are_cut_at_character_boundaries(void **state)
{
    (void)state;
    static const char head[] = "TEST-UNEXPECTED-FAIL | dom/a/test_b.html | ";
    for (size_t k = 0; k < 3; k++) {
        size_t clen = strlen(chars[k]);
        for (size_t shift = 0; shift < clen; shift++) {
            char *body = text_with(shift, chars[k], RT_FAILURE_LINE_MAX_INPUT);
            size_t size = strlen(head) + strlen(body) + 1;
            char *line = malloc(size);
            assert_non_null(line);
            snprintf(line, size, "%s%s", head, body);
            rt_failure_line parsed;
            assert_int_equal(rt_failure_line_parse(line, strlen(line), &parsed), RT_OK);
            assert_valid(parsed.signature, "signature");
            assert_valid(parsed.message, "message");
            assert_true(strlen(parsed.signature) <= RT_FAILURE_LINE_MAX_INPUT);
            json_t *item = json_pack("{s:s}", "line", parsed.signature);
            if (!item) fail_msg("json_pack refused the line (char %zu, shift %zu)", k, shift);
            json_decref(item);
            rt_failure_line_free(&parsed);
            free(line);
            free(body);
        }
    }
}

/* Bytes that were never UTF-8 (a log in Latin-1) become U+FFFD, not an invalid signature. */
static void test_failure_lines_replace_invalid_bytes(void **state)
{
    (void)state;
    const char line[] =
        "TEST-UNEXPECTED-FAIL | test_\xe9t\xe9.html | caf\xe9 \xff\xfe \x1b[\xc3\xa9";
    rt_failure_line parsed;
    assert_int_equal(rt_failure_line_parse(line, strlen(line), &parsed), RT_OK);
    assert_valid(parsed.signature, "signature");
    assert_non_null(strstr(parsed.signature, "test_\xef\xbf\xbdt\xef\xbf\xbd.html"));
    rt_failure_line_free(&parsed);
    char *message = rt_failure_line_normalise_message("caf\xe9", 4);
    assert_valid(message, "message");
    free(message);
}

/* errstr buffers (rt_set_errstr) end on a boundary too. */
static void test_errstr_is_cut_at_a_character_boundary(void **state)
{
    (void)state;
    char *text = text_with(1, chars[1], RT_ERRSTR_SIZE + 8);
    char errstr[RT_ERRSTR_SIZE];
    rt_set_errstr(errstr, "%s", text);
    assert_valid(errstr, "errstr");
    assert_true(strlen(errstr) >= RT_ERRSTR_SIZE - 4);
    free(text);
}

/* Text for the terminal: controls, ESC, C1 and bidi overrides escaped; the rest kept. */
static void test_printable_text_escapes_what_a_terminal_obeys(void **state)
{
    (void)state;
    char *out = rt_utf8_printable("a\x1b[2J\x07"
                                  "b\tc\nd\x7f \xc2\x9b"
                                  "31m \xe2\x80\xae \xff é€🐛 C:\\x");
    assert_string_equal(out, "a\\x1b[2J\\x07b\\tc\\nd\\x7f \\u009b31m \\u202e \\xff é€🐛 C:\\x");
    free(out);
    out = rt_utf8_printable("");
    assert_string_equal(out, "");
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_errorsummary_fields_are_cut_at_character_boundaries),
        cmocka_unit_test(test_failure_lines_are_cut_at_character_boundaries),
        cmocka_unit_test(test_failure_lines_replace_invalid_bytes),
        cmocka_unit_test(test_errstr_is_cut_at_a_character_boundary),
        cmocka_unit_test(test_printable_text_escapes_what_a_terminal_obeys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
