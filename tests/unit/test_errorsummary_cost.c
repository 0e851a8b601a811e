/* SPDX-License-Identifier: MPL-2.0 */
/* test_errorsummary_cost.c - what an errorsummary may cost (issue 20: 13.9 MB crafted took
 * 35 s): groups are found through a SipHash-keyed index, so crafted inputs (long names, many
 * groups, many look-ups) cost about what a real errorsummary of the same size costs;
 * parsing stops once a cap is hit, at the byte cap of a run, and at the caller's deadline;
 * names equal in the bytes kept are one group; the test history's name tables are keyed. */
#include "support/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/core/errorsummary.h"
#include "common/core/history.h"
#include "common/core/siphash.h"
#include "support/crafted.h"

#define FAIL_LINE                                                                                  \
    "{\"action\":\"test_result\",\"test\":\"a.js\",\"status\":\"FAIL\",\"expected\":\"PASS\","     \
    "\"group\":\"dom/a\",\"message\":\"boom\"}\n"

static void test_siphash_gives_the_reference_vectors(void **state)
{
    (void)state;
    unsigned char k[16], m[64];
    for (int i = 0; i < 16; i++) k[i] = (unsigned char)i;
    for (int i = 0; i < 64; i++) m[i] = (unsigned char)i;
    rt_siphash_key key = {0, 0};
    for (int i = 0; i < 8; i++) {
        key.k0 |= (uint64_t)k[i] << (8 * i);
        key.k1 |= (uint64_t)k[8 + i] << (8 * i);
    }
    /* The paper's key 00..0f over messages 00..(n-1). */
    assert_true(rt_siphash(&key, m, 0) == 0x726fdb47dd0e0e31ULL);
    assert_true(rt_siphash(&key, m, 15) == 0xa129ca6149be45e5ULL);
    assert_true(rt_siphash(&key, m, 63) == 0x958a324ceb064572ULL);
    rt_siphash_key other = {1, 2};
    assert_true(rt_siphash(&other, m, 15) != rt_siphash(&key, m, 15));
}

/* Past RT_ES_MAX_GROUPS distinct groups the summary is too big and nothing after is read. */
static void test_parsing_stops_at_the_group_cap(void **state)
{
    (void)state;
    size_t size = (size_t)(RT_ES_MAX_GROUPS + 10) * 16 + 256;
    char *text = malloc(size);
    assert_non_null(text);
    size_t n = (size_t)snprintf(text, size, "{\"action\":\"test_groups\",\"groups\":[");
    for (int i = 0; i < RT_ES_MAX_GROUPS + 1; i++)
        n += (size_t)snprintf(text + n, size - n, "%s\"g%d\"", i ? "," : "", i);
    n += (size_t)snprintf(text + n, size - n, "]}\n%s", FAIL_LINE);
    rt_errorsummary es;
    rt_errorsummary_init(&es, NULL, 0, NULL, NULL);
    assert_int_equal(rt_errorsummary_add(&es, text, n), RT_OK);
    assert_true(es.too_big);
    assert_int_equal(es.ngroups, RT_ES_MAX_GROUPS);
    assert_int_equal(es.lines, 1); /* the failure line after it was not read */
    assert_int_equal(es.nfailures, 0);
    assert_int_equal(rt_errorsummary_add(&es, FAIL_LINE, strlen(FAIL_LINE)), RT_OK);
    assert_int_equal(es.nfailures, 0); /* nor a later artifact */
    const char *reason = NULL;
    assert_int_equal(rt_errorsummary_classify(&es, &reason), RT_ES_INFRA);
    assert_string_equal(reason, "incomplete-errorsummary");
    rt_errorsummary_free(&es);
    free(text);
}

static void test_the_byte_cap_holds_across_artifacts(void **state)
{
    (void)state;
    rt_errorsummary es;
    rt_errorsummary_init(&es, NULL, 2 * strlen(FAIL_LINE), NULL, NULL);
    assert_int_equal(rt_errorsummary_add(&es, FAIL_LINE, strlen(FAIL_LINE)), RT_OK);
    assert_int_equal(rt_errorsummary_add(&es, FAIL_LINE, strlen(FAIL_LINE)), RT_OK);
    assert_false(es.too_big);
    assert_int_equal(es.nfailures, 2);
    assert_int_equal(rt_errorsummary_add(&es, FAIL_LINE, strlen(FAIL_LINE)), RT_OK);
    assert_true(es.too_big);
    assert_int_equal(es.nfailures, 2);
    assert_false(rt_errorsummary_complete(&es));
    rt_errorsummary_free(&es);
}

static bool after_two_looks(void *context)
{
    int *looks = context;
    return ++*looks >= 2;
}

static void test_the_deadline_stops_parsing(void **state)
{
    (void)state;
    size_t len = 0;
    char *text = rt_crafted_errorsummary(RT_CRAFTED_REAL, 400 * 1024, &len);
    int looks = 0;
    rt_errorsummary es;
    rt_errorsummary_init(&es, NULL, 0, after_two_looks, &looks);
    assert_int_equal(rt_errorsummary_add(&es, text, len), RT_ETIMEDOUT);
    assert_true(es.timed_out);
    assert_int_equal(looks, 2);
    assert_int_equal(es.lines, 2 * RT_ES_DEADLINE_LINES - 1);
    assert_false(rt_errorsummary_complete(&es));
    assert_int_equal(rt_errorsummary_add(&es, FAIL_LINE, strlen(FAIL_LINE)), RT_ETIMEDOUT);
    rt_errorsummary_free(&es);
    free(text);
}

/* Names are kept to RT_ES_MAX_FIELD bytes: two names equal in those bytes are one group
 * (each new spelling of a long name made a new group before, up to the cap). */
static void test_names_equal_in_the_bytes_kept_are_one_group(void **state)
{
    (void)state;
    size_t size = 3 * 3100 + 512;
    char *text = malloc(size);
    char *a = malloc(3001), *b = malloc(3001);
    assert_true(text && a && b);
    memset(a, 'n', 3000);
    memset(b, 'n', 3000);
    a[3000] = b[3000] = '\0';
    b[2999] = 'x'; /* differs after the kept bytes */
    size_t n = (size_t)snprintf(text, size,
                                "{\"action\":\"test_groups\",\"groups\":[\"%s\",\"%s\"]}\n"
                                "{\"action\":\"group_result\",\"group\":\"%s\","
                                "\"status\":\"ERROR\"}\n",
                                a, b, a);
    rt_errorsummary es;
    rt_errorsummary_init(&es, NULL, 0, NULL, NULL);
    assert_int_equal(rt_errorsummary_add(&es, text, n), RT_OK);
    assert_int_equal(es.ngroups, 1);
    assert_int_equal(es.groups[0].name_len, RT_ES_MAX_FIELD);
    assert_string_equal(es.groups[0].status, "ERROR");
    rt_errorsummary_free(&es);
    free(text);
    free(a);
    free(b);
}

/* A failure past RT_ES_MAX_FAILURES (counted, not kept) still fails its group. */
static void test_failures_not_kept_still_fail_their_group(void **state)
{
    (void)state;
    rt_errorsummary es;
    rt_errorsummary_init(&es, NULL, 0, NULL, NULL);
    char line[256];
    for (int i = 0; i <= RT_ES_MAX_FAILURES; i++) {
        snprintf(line, sizeof line,
                 "{\"action\":\"test_result\",\"test\":\"t.js\",\"status\":\"FAIL\","
                 "\"expected\":\"PASS\",\"group\":\"%s\"}\n",
                 i < RT_ES_MAX_FAILURES ? "first" : "last");
        assert_int_equal(rt_errorsummary_add(&es, line, strlen(line)), RT_OK);
    }
    assert_int_equal(es.nfailures, RT_ES_MAX_FAILURES);
    assert_int_equal(es.failures_dropped, 1);
    assert_int_equal(es.ngroups, 2);
    assert_true(rt_errorsummary_group_failed(&es, &es.groups[1]));
    rt_errorsummary_free(&es);
}

static double parse_seconds(const char *text, size_t len, rt_errorsummary *es)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    assert_int_equal(rt_errorsummary_add(es, text, len), RT_OK);
    clock_gettime(CLOCK_MONOTONIC, &b);
    return (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
}

/* The cost per byte of every crafted input is close to a real errorsummary's: before the
 * index, look-ups scanned every group (long-names and lookups were tens of times slower
 * at this size, and quadratic beyond). The bench (bench_errorsummary) measures it at 14 MB;
 * here a loose bound, to hold under sanitizers and valgrind. */
static void test_crafted_inputs_cost_what_a_real_one_costs(void **state)
{
    (void)state;
    const size_t bytes = 3 << 20;
    size_t len = 0;
    char *real = rt_crafted_errorsummary(RT_CRAFTED_REAL, bytes, &len);
    rt_siphash_key key = {0x0123456789abcdefULL, 0xfedcba9876543210ULL};
    rt_errorsummary es;
    rt_errorsummary_init(&es, &key, 0, NULL, NULL);
    double base = parse_seconds(real, len, &es) / (double)len;
    rt_errorsummary_free(&es);
    free(real);
    rt_crafted_kind kinds[] = {RT_CRAFTED_LONG_NAMES, RT_CRAFTED_MANY_GROUPS, RT_CRAFTED_LOOKUPS};
    for (size_t i = 0; i < 3; i++) {
        char *text = rt_crafted_errorsummary(kinds[i], bytes, &len);
        rt_errorsummary_init(&es, &key, 0, NULL, NULL);
        double cost = parse_seconds(text, len, &es) / (double)len;
        assert_false(es.too_big);
        double ratio = cost / base;
        fprintf(stderr, "# %s: %.2fx the real errorsummary's cost per byte\n",
                rt_crafted_name(kinds[i]), ratio);
        if (ratio > 10)
            fail_msg("%s costs %.1fx a real errorsummary", rt_crafted_name(kinds[i]), ratio);
        rt_errorsummary_free(&es);
        free(text);
    }
}

static void test_history_rows_keep_the_summary_key(void **state)
{
    (void)state;
    rt_siphash_key key = {42, 43};
    rt_errorsummary es;
    rt_errorsummary_init(&es, &key, 0, NULL, NULL);
    assert_int_equal(rt_errorsummary_add(&es, FAIL_LINE, strlen(FAIL_LINE)), RT_OK);
    rt_history_rows rows;
    assert_int_equal(rt_history_rows_from_errorsummary(&es, &rows), RT_OK);
    assert_true(rows.hash_key.k0 == 42 && rows.hash_key.k1 == 43);
    assert_int_equal(rows.ntests, 1);
    /* Many tests of one group: each found again through the keyed index. */
    char name[32];
    for (int i = 0; i < 3000; i++) {
        snprintf(name, sizeof name, "t%d.js", i % 1000);
        assert_int_equal(
            rt_history_rows_add_test(&rows, name, "dom/a", "PASS", NULL, false, NULL, NULL), RT_OK);
    }
    assert_int_equal(rows.ntests, 1001);
    rt_history_rows_free(&rows);
    rt_errorsummary_free(&es);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_siphash_gives_the_reference_vectors),
        cmocka_unit_test(test_parsing_stops_at_the_group_cap),
        cmocka_unit_test(test_the_byte_cap_holds_across_artifacts),
        cmocka_unit_test(test_the_deadline_stops_parsing),
        cmocka_unit_test(test_names_equal_in_the_bytes_kept_are_one_group),
        cmocka_unit_test(test_failures_not_kept_still_fail_their_group),
        cmocka_unit_test(test_crafted_inputs_cost_what_a_real_one_costs),
        cmocka_unit_test(test_history_rows_keep_the_summary_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
