/* SPDX-License-Identifier: MPL-2.0 */
/* test_culprit_window.c - the JSON window of `retrig culprit --pushes` (common/culprit_window.h):
 * a valid window, then every way hostile input is refused with a reason naming the push and
 * the field: not JSON, not an array, too small, too many pushes, too many bytes, bad
 * revisions, duplicate revisions, counts out of range, unknown or duplicate members, a
 * failing push that never reproduced. */
#include "support/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/culprit_window.h"

#define GOOD_REV "3f1c0aa8d1b2c3d4e5f60718293a4b5c6d7e8f90"
#define BAD_REV  "9e8d7c6b5a40"

static int parse(const char *text, rt_culprit_window *w, char *errstr)
{
    return rt_culprit_window_parse(text, strlen(text), w, errstr);
}

static void test_a_valid_window_is_parsed(void **state)
{
    (void)state;
    rt_culprit_window w;
    char errstr[RT_ERRSTR_SIZE] = "";
    const char *text = "[{\"revision\": \"" GOOD_REV "\", \"runs\": 1, \"reproduced\": 0},"
                       " {\"revision\": \"0123456789ab\", \"runs\": 0, \"reproduced\": 0},"
                       " {\"revision\": \"abcdef012345\", \"runs\": 3, \"reproduced\": 1,"
                       "  \"pending\": 2},"
                       " {\"revision\": \"" BAD_REV "\", \"runs\": 6, \"reproduced\": 5}]";
    assert_int_equal(parse(text, &w, errstr), RT_OK);
    assert_int_equal(w.count, 4);
    assert_string_equal(w.revisions[0], GOOD_REV);
    assert_string_equal(w.revisions[3], BAD_REV);
    assert_int_equal(w.pushes[0].runs, 1);
    assert_int_equal(w.pushes[2].reproduced, 1);
    assert_int_equal(w.pushes[2].pending, 2);
    assert_int_equal(w.pushes[1].pending, 0);
    assert_int_equal(w.pushes[3].reproduced, 5);
}

typedef struct hostile {
    const char *name;
    const char *text;
    int rc;
    const char *reason; /* a substring of errstr */
} hostile;

static void test_hostile_windows_are_refused_with_a_reason(void **state)
{
    (void)state;
#define P0 "{\"revision\": \"" GOOD_REV "\", \"runs\": 1, \"reproduced\": 0}"
#define PN "{\"revision\": \"" BAD_REV "\", \"runs\": 6, \"reproduced\": 6}"
    const hostile cases[] = {
        {"not JSON", "[{\"revision\": ", RT_EPROTO, "not JSON"},
        {"empty", "", RT_EPROTO, "not JSON"},
        {"an object", "{\"pushes\": []}", RT_EPROTO, "expected an array"},
        {"one push", "[" PN "]", RT_EPROTO, "at least the first push"},
        {"a push not an object", "[" P0 ", 7, " PN "]", RT_EPROTO, "push 1: expected an object"},
        {"uppercase revision",
         "[" P0 ", {\"revision\": \"ABCDEF012345\", \"runs\": 0, \"reproduced\": 0}, " PN "]",
         RT_EPROTO, "push 1: \"revision\" must be 12 or 40 lowercase hex"},
        {"39 digits",
         "[{\"revision\": \"3f1c0aa8d1b2c3d4e5f60718293a4b5c6d7e8f9\", \"runs\": 1, "
         "\"reproduced\": 0}, " PN "]",
         RT_EPROTO, "push 0: \"revision\" must be"},
        {"revision with a slash",
         "[" P0 ", {\"revision\": \"../../etc/pa\", \"runs\": 0, \"reproduced\": 0}, " PN "]",
         RT_EPROTO, "push 1: \"revision\""},
        {"revision a number",
         "[" P0 ", {\"revision\": 123456789012, \"runs\": 0, \"reproduced\": 0}, " PN "]",
         RT_EPROTO, "push 1: \"revision\""},
        {"same revision twice", "[" P0 ", " P0 ", " PN "]", RT_EPROTO, "push 1: revision"},
        {"short form of another push",
         "[" P0 ", {\"revision\": \"3f1c0aa8d1b2\", \"runs\": 0, \"reproduced\": 0}, " PN "]",
         RT_EPROTO, "is also push 0"},
        {"runs missing", "[" P0 ", {\"revision\": \"0123456789ab\", \"reproduced\": 0}, " PN "]",
         RT_EPROTO, "push 1: \"runs\" is missing"},
        {"runs negative",
         "[" P0 ", {\"revision\": \"0123456789ab\", \"runs\": -1, \"reproduced\": 0}, " PN "]",
         RT_EPROTO, "push 1: \"runs\" must be an integer"},
        {"runs huge",
         "[" P0 ", {\"revision\": \"0123456789ab\", \"runs\": 99999999999999999, "
         "\"reproduced\": 0}, " PN "]",
         RT_EPROTO, "\"runs\" must be an integer from 0 to 10000"},
        {"runs a fraction",
         "[" P0 ", {\"revision\": \"0123456789ab\", \"runs\": 1.5, \"reproduced\": 0}, " PN "]",
         RT_EPROTO, "\"runs\" must be an integer"},
        {"runs a string",
         "[" P0 ", {\"revision\": \"0123456789ab\", \"runs\": \"2\", \"reproduced\": 0}, " PN "]",
         RT_EPROTO, "\"runs\" must be an integer"},
        {"reproduced more than runs",
         "[" P0 ", {\"revision\": \"0123456789ab\", \"runs\": 2, \"reproduced\": 3}, " PN "]",
         RT_EPROTO, "push 1: \"reproduced\" must be an integer from 0 to 2"},
        {"pending negative",
         "[" P0 ", {\"revision\": \"0123456789ab\", \"runs\": 0, \"reproduced\": 0, "
         "\"pending\": -2}, " PN "]",
         RT_EPROTO, "\"pending\""},
        {"a misspelt member",
         "[" P0 ", {\"revision\": \"0123456789ab\", \"runs\": 2, \"reproduce\": 2}, " PN "]",
         RT_EPROTO, "push 1: unknown member \"reproduce\""},
        {"a duplicate member",
         "[" P0
         ", {\"revision\": \"0123456789ab\", \"runs\": 2, \"runs\": 0, \"reproduced\": 0}, " PN "]",
         RT_EPROTO, "not JSON"},
        {"a NUL in a revision",
         "[" P0 ", {\"revision\": \"0123456789a\\u0000\", \"runs\": 0, \"reproduced\": 0}, " PN "]",
         RT_EPROTO, "not JSON"},
        {"failing push never reproduced",
         "[" P0 ", {\"revision\": \"" BAD_REV "\", \"runs\": 3, \"reproduced\": 0}]", RT_EPROTO,
         "push 1: the failing push (the last) must have reproduced"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rt_culprit_window w;
        char errstr[RT_ERRSTR_SIZE] = "";
        int rc = parse(cases[i].text, &w, errstr);
        if (rc != cases[i].rc || !strstr(errstr, cases[i].reason))
            fail_msg("%s: rc %d (%s), expected %d with '%s'", cases[i].name, rc, errstr,
                     cases[i].rc, cases[i].reason);
        assert_int_equal(w.count, 0);
    }
}

static void test_size_bounds(void **state)
{
    (void)state;
    rt_culprit_window w;
    char errstr[RT_ERRSTR_SIZE] = "";
    /* The most pushes a window may hold, then one more. */
    for (size_t count = RT_CULPRIT_MAX_PUSHES; count <= RT_CULPRIT_MAX_PUSHES + 1; count++) {
        size_t size = 64 + count * 80, used = 0;
        char *text = malloc(size);
        used += (size_t)snprintf(text + used, size - used, "[");
        for (size_t i = 0; i < count; i++)
            used +=
                (size_t)snprintf(text + used, size - used,
                                 "%s{\"revision\": \"%012zx\", \"runs\": 1, \"reproduced\": %d}",
                                 i ? "," : "", i + 1, i + 1 == count);
        snprintf(text + used, size - used, "]");
        int rc = parse(text, &w, errstr);
        free(text);
        if (count == RT_CULPRIT_MAX_PUSHES) {
            assert_int_equal(rc, RT_OK);
            assert_int_equal(w.count, RT_CULPRIT_MAX_PUSHES);
        } else {
            assert_int_equal(rc, RT_ETOOBIG);
            assert_non_null(strstr(errstr, "at most 101"));
        }
    }
    /* More bytes than a window may take, even as whitespace. */
    size_t big = (size_t)RT_CULPRIT_WINDOW_MAX_BYTES + 2;
    char *text = malloc(big);
    memset(text, ' ', big);
    text[0] = '[';
    text[big - 1] = ']';
    assert_int_equal(rt_culprit_window_parse(text, big, &w, errstr), RT_ETOOBIG);
    free(text);
    assert_true(rt_culprit_valid_revision("0123456789ab"));
    assert_false(rt_culprit_valid_revision(NULL));
    assert_false(rt_culprit_valid_revision(""));
    assert_false(rt_culprit_valid_revision("0123456789abc"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_valid_window_is_parsed),
        cmocka_unit_test(test_hostile_windows_are_refused_with_a_reason),
        cmocka_unit_test(test_size_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
