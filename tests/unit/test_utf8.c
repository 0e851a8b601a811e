/* SPDX-License-Identifier: MPL-2.0 */
/* test_utf8.c - cuts never split a character; validation and repair (common/core/utf8.h). */
#include "support/util.h"

#include <stdlib.h>
#include <string.h>

#include "common/core/utf8.h"

/* "aé€😀": 1 + 2 + 3 + 4 bytes. */
static const char MIXED[] = "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";

static void test_every_cut_lands_on_a_boundary(void **state)
{
    (void)state;
    static const size_t boundaries[] = {0, 1, 3, 6, 10};
    size_t len = strlen(MIXED);
    for (size_t max = 0; max <= len; max++) {
        size_t n = rt_utf8_boundary(MIXED, len, max);
        size_t want = 0;
        for (size_t i = 0; i < 5; i++)
            if (boundaries[i] <= max) want = boundaries[i];
        assert_int_equal(n, want);
        assert_true(rt_utf8_valid(MIXED, n));
    }
}

static void test_copy_cuts_whole_characters(void **state)
{
    (void)state;
    for (size_t size = 1; size <= sizeof MIXED; size++) {
        char out[32];
        bool cut = false;
        size_t n = rt_utf8_copy(out, size, MIXED, &cut);
        assert_int_equal(n, strlen(out));
        assert_true(rt_utf8_valid(out, n));
        assert_int_equal(cut, n < strlen(MIXED));
    }
}

static void format_into(char *out, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    rt_utf8_vformat(out, size, fmt, ap);
    va_end(ap);
}

static void test_vformat_cut_is_valid(void **state)
{
    (void)state;
    for (size_t size = 1; size <= sizeof MIXED + 2; size++) {
        char out[32];
        format_into(out, size, "<%s>", MIXED);
        assert_true(strlen(out) < size);
        assert_true(rt_utf8_valid(out, strlen(out)));
    }
}

static void test_validation_refuses_what_postgres_refuses(void **state)
{
    (void)state;
    assert_true(rt_utf8_valid(MIXED, strlen(MIXED)));
    assert_false(rt_utf8_valid("\xc3", 1));             /* cut */
    assert_false(rt_utf8_valid("\xc0\xaf", 2));         /* overlong */
    assert_false(rt_utf8_valid("\xed\xa0\x80", 3));     /* surrogate */
    assert_false(rt_utf8_valid("\xf4\x90\x80\x80", 4)); /* past U+10FFFF */
    assert_false(rt_utf8_valid("\x80", 1));             /* stray continuation */
}

static void test_sanitize_replaces_each_bad_byte(void **state)
{
    (void)state;
    char *s = rt_utf8_sanitize("a\xff"
                               "b\xc3",
                               4);
    assert_string_equal(s, "a\xef\xbf\xbd"
                           "b\xef\xbf\xbd");
    free(s);
    s = rt_utf8_sanitize("x\0y", 3); /* NUL would end the text early */
    assert_string_equal(s, "x\xef\xbf\xbdy");
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_cut_lands_on_a_boundary),
        cmocka_unit_test(test_copy_cuts_whole_characters),
        cmocka_unit_test(test_vformat_cut_is_valid),
        cmocka_unit_test(test_validation_refuses_what_postgres_refuses),
        cmocka_unit_test(test_sanitize_replaces_each_bad_byte),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
