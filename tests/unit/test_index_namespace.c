/* SPDX-License-Identifier: MPL-2.0 */
/* test_index_namespace.c - the index namespaces retrig puts in listTasks URLs
 * (rt_tc_valid_namespace, common/io/upstream.h): gecko's real namespaces pass; hostile or
 * malformed ones (path traversal, slashes, query characters, empty segments, too long) are
 * refused, and rt_tc_index_each_task refuses them before any request. */
#include "support/util.h"

#include <stdlib.h>
#include <string.h>

#include "common/io/upstream.h"

static void test_real_namespaces_pass(void **state)
{
    (void)state;
    assert_true(rt_tc_valid_namespace("gecko.v2.autoland.pushlog-id.109590.actions"));
    assert_true(rt_tc_valid_namespace("gecko.v2.mozilla-central.pushlog-id.1.decision"));
    assert_true(rt_tc_valid_namespace("comm.v2.comm-central.latest_x"));
    assert_true(rt_tc_valid_namespace("a"));
}

static void test_malformed_namespaces_are_refused(void **state)
{
    (void)state;
    static const char *const BAD[] = {
        "",     ".",           "a.",   ".a",
        "a..b", "../x",        "a/b",  "a?limit=1",
        "a&b",  "a%2Fb",       "a b",  "a\r\nb",
        "a#b",  "caf\xc3\xa9", "a\\b", "gecko.v2.autoland.pushlog-id.1.actions/../x",
    };
    for (size_t i = 0; i < sizeof BAD / sizeof *BAD; i++)
        assert_false(rt_tc_valid_namespace(BAD[i]));
    assert_false(rt_tc_valid_namespace(NULL));
    char *long_ns = malloc(RT_TC_MAX_NAMESPACE + 2);
    assert_non_null(long_ns);
    memset(long_ns, 'a', RT_TC_MAX_NAMESPACE + 1);
    long_ns[RT_TC_MAX_NAMESPACE + 1] = '\0';
    assert_false(rt_tc_valid_namespace(long_ns));
    long_ns[RT_TC_MAX_NAMESPACE] = '\0';
    assert_true(rt_tc_valid_namespace(long_ns));
    free(long_ns);
}

static bool never(void *ctx, const char *task_id, json_t *entry)
{
    (void)ctx;
    (void)task_id;
    (void)entry;
    fail_msg("no entry may be listed");
    return true;
}

static void test_listing_refuses_a_bad_namespace_without_a_request(void **state)
{
    (void)state;
    char errstr[RT_ERRSTR_SIZE] = "";
    /* A NULL client: any request would crash, so RT_EINVAL proves none was made. */
    assert_int_equal(
        rt_tc_index_each_task(NULL, "http://127.0.0.1:1", "a/../b", never, NULL, errstr),
        RT_EINVAL);
    assert_non_null(strstr(errstr, "namespace"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_namespaces_pass),
        cmocka_unit_test(test_malformed_namespaces_are_refused),
        cmocka_unit_test(test_listing_refuses_a_bad_namespace_without_a_request),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
