/* SPDX-License-Identifier: MPL-2.0 */
/* test_junit_stream.c - a JUnit report is read as a stream: what libxml2 holds at any time
 * does not grow with the number of testcases (300,000 testcases in a tree took 445 MB).
 * libxml2's allocations are counted through xmlMemSetup, so the figure is the parser's own,
 * the same under valgrind and the sanitizers. The rows (the result) are not counted. */
#include "support/util.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/xmlmemory.h>

#include "common/core/history.h"
#include "common/core/junit.h"

static size_t g_live, g_peak;

static void count(size_t more, size_t less)
{
    g_live = g_live + more - less;
    if (g_live > g_peak) g_peak = g_live;
}

static void *counted_malloc(size_t n)
{
    void *p = malloc(n);
    if (p) count(malloc_usable_size(p), 0);
    return p;
}

static void *counted_realloc(void *old, size_t n)
{
    size_t before = old ? malloc_usable_size(old) : 0;
    void *p = realloc(old, n);
    if (p) count(malloc_usable_size(p), before);
    return p;
}

static void counted_free(void *p)
{
    if (p) count(0, malloc_usable_size(p));
    free(p);
}

static char *counted_strdup(const char *s)
{
    char *p = counted_malloc(strlen(s) + 1);
    if (p) strcpy(p, s);
    return p;
}

/* A report of n testcases in 100 suites, one in ten failing with a message in its text. */
static char *report(size_t n, size_t *len)
{
    size_t size = n * 160 + 1024, o = 0;
    char *s = malloc(size);
    assert_non_null(s);
    o += (size_t)snprintf(s + o, size - o, "<?xml version=\"1.0\"?>\n<testsuites>\n");
    for (size_t i = 0; i < n; i++) {
        if (i % (n / 100) == 0)
            o += (size_t)snprintf(s + o, size - o, "%s<testsuite name=\"suite%zu\">\n",
                                  i ? "</testsuite>\n" : "", i / (n / 100));
        if (i % 10 == 0)
            o += (size_t)snprintf(s + o, size - o,
                                  "<testcase classname=\"pkg.mod%zu\" name=\"test_%zu\"><failure>"
                                  "\n  AssertionError: %zu != 0\n</failure></testcase>\n",
                                  i % 997, i, i);
        else
            o += (size_t)snprintf(s + o, size - o,
                                  "<testcase classname=\"pkg.mod%zu\" name=\"test_%zu\"/>\n",
                                  i % 997, i);
    }
    o += (size_t)snprintf(s + o, size - o, "</testsuite>\n</testsuites>\n");
    *len = o;
    return s;
}

static void test_the_parser_holds_a_bounded_amount_whatever_the_testcases(void **state)
{
    (void)state;
    size_t len = 0;
    char *xml = report(300000, &len);
    rt_history_rows rows = {0};
    rt_junit_stats stats = {0};
    char errstr[RT_ERRSTR_SIZE] = "";
    g_peak = g_live;
    size_t base = g_live;
    int rc = rt_junit_add(xml, len, &rows, &stats, errstr);
    if (rc != RT_OK) fail_msg("rt_junit_add: %s", errstr);
    assert_int_equal(stats.testcases, 300000);
    assert_int_equal(stats.failures, 30000);
    assert_int_equal(rows.ntests, 300000);
    size_t parser = g_peak - base;
    fprintf(stderr, "# %zu bytes of XML; libxml2 held at most %zu bytes\n", len, parser);
    if (parser > 4 << 20) fail_msg("libxml2 held %zu bytes for a %zu-byte report", parser, len);
    /* The failures keep their message: the first line of the failure's text. */
    size_t i = 0;
    while (i < rows.ntests && strcmp(rows.tests[i].test, "pkg.mod10::test_10") != 0) i++;
    assert_true(i < rows.ntests);
    assert_string_equal(rows.tests[i].message, "AssertionError: 10 != 0");
    assert_string_equal(rows.tests[i].group, "pkg.mod10");
    rt_history_rows_free(&rows);
    free(xml);
}

int main(void)
{
    /* Before libxml2 allocates anything. */
    if (xmlMemSetup(counted_free, counted_malloc, counted_realloc, counted_strdup) != 0) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_parser_holds_a_bounded_amount_whatever_the_testcases),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    xmlCleanupParser();
    return failed;
}
