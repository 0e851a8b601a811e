/* SPDX-License-Identifier: MPL-2.0 */
/* test_junit.c - the JUnit reader against reports written by the producers themselves
 * (tests/fixtures/junit/, sources in its README.md): every testcase counted, every stored
 * outcome as tests/fixtures/junit/expected.txt says from reading the XML; and the rules of
 * issue 31: a malformed testcase is set aside and the rest kept, identities never merge
 * tests of different files, reruns make FLAKY, duplicates merge whatever their order,
 * disabled/collection/build errors are no test failures, generic messages give way to the
 * text, and a document with a DOCTYPE is refused before anything is expanded. */
#include "support/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/core/history.h"
#include "common/core/junit.h"

static const rt_history_test *find_test(const rt_history_rows *rows, const char *test)
{
    for (size_t i = 0; i < rows->ntests; i++)
        if (!strcmp(rows->tests[i].test, test)) return &rows->tests[i];
    return NULL;
}

/* Occurrences of "<testcase" followed by a blank or '/' or '>' in the raw bytes. */
static size_t count_testcases(const char *xml)
{
    size_t n = 0;
    for (const char *p = xml; (p = strstr(p, "<testcase")) != NULL; p += 9)
        if (strchr(" \t\r\n/>", p[9])) n++;
    return n;
}

static int parse(const char *xml, rt_history_rows *rows, rt_junit_stats *stats)
{
    char errstr[RT_ERRSTR_SIZE] = "";
    memset(rows, 0, sizeof *rows);
    memset(stats, 0, sizeof *stats);
    int rc = rt_junit_add(xml, strlen(xml), rows, stats, errstr);
    if (rc != RT_OK) print_message("# rt_junit_add: %s\n", errstr);
    return rc;
}

/* Checks one fixture against its block of expected.txt; *line points at its "= " line and is
 * moved past the block. */
static void check_fixture(char **line)
{
    char file[128];
    size_t testcases = 0, aside = 0;
    assert_int_equal(sscanf(*line, "= %127s %zu %zu", file, &testcases, &aside), 3);
    char path[256];
    snprintf(path, sizeof path, "tests/fixtures/junit/%s", file);
    size_t len = 0;
    char *xml = rt_test_read_file(rt_test_source(path), &len);
    rt_history_rows rows = {0};
    rt_junit_stats stats = {0};
    char errstr[RT_ERRSTR_SIZE] = "";
    int rc = rt_junit_add(xml, len, &rows, &stats, errstr);
    if (rc != RT_OK) fail_msg("%s: %s", file, errstr);
    if (stats.testcases != count_testcases(xml) || stats.testcases != testcases)
        fail_msg("%s: %zu testcases read, %zu in the file", file, stats.testcases, testcases);
    if (stats.set_aside != aside)
        fail_msg("%s: %zu set aside, not %zu", file, stats.set_aside, aside);
    size_t stored = 0;
    char *next = strchr(*line, '\n');
    while (next && next[1] && next[1] != '=') {
        char *entry = next + 1, *tab = strchr(entry, '\t');
        next = strchr(entry, '\n');
        if (next) *next = '\0';
        assert_non_null(tab);
        *tab = '\0';
        const rt_history_test *t = find_test(&rows, tab + 1);
        if (!t) fail_msg("%s: no test '%s'", file, tab + 1);
        if (strcmp(t->status, entry) != 0)
            fail_msg("%s: '%s' stored %s, not %s", file, tab + 1, t->status, entry);
        bool failing = !strcmp(entry, "FAIL") || !strcmp(entry, "ERROR") || !strcmp(entry, "FLAKY");
        if (t->failed != failing) fail_msg("%s: '%s' failed is %d", file, t->test, t->failed);
        stored++;
    }
    if (rows.ntests != stored)
        fail_msg("%s: %zu tests stored, %zu expected", file, rows.ntests, stored);
    *line = next ? next + 1 : NULL;
    rt_history_rows_free(&rows);
    free(xml);
}

static void test_every_producer_report_reads_with_its_counts_and_outcomes(void **state)
{
    (void)state;
    size_t len = 0;
    char *expected = rt_test_read_file(rt_test_source("tests/fixtures/junit/expected.txt"), &len);
    size_t files = 0;
    for (char *line = expected; line && *line;) {
        if (line[0] == '=') {
            check_fixture(&line);
            files++;
        } else {
            line = strchr(line, '\n');
            if (line) line++;
        }
    }
    assert_true(files >= 20);
    free(expected);
}

/* Messages as the producers put them: a generic one gives way to the body. */
static void test_generic_messages_take_the_first_meaningful_line_of_the_body(void **state)
{
    (void)state;
    static const struct {
        const char *file, *test, *message;
    } cases[] = {
        {"gotestsum.xml", "gotest.tools/gotestsum/testjson/internal/badmain::TestMain",
         "sometimes main can exit 2"},
        {"nose2-failure.xml", "tests.test_math.MathTest::test_div", "AssertionError: 0.5 != 0.4"},
        {"nextest.xml", "oxidized_navigation::parry3d::test_failure",
         "thread 'test_failure' panicked at tests/parry3d.rs:154:5:"},
        {"surefire-reruns.xml", "org.example.RetryTest::alwaysFails", "expected: <1> but was: <2>"},
        {"surefire-reruns.xml", "org.example.RetryTest::throwsOnce", "Connection refused"},
        {"go-junit-report-build-failed.xml", "package/name/failing1::[build failed]",
         "failing1/failing_test.go:15: undefined: x"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[256];
        snprintf(path, sizeof path, "tests/fixtures/junit/%s", cases[i].file);
        size_t len = 0;
        char *xml = rt_test_read_file(rt_test_source(path), &len);
        rt_history_rows rows;
        rt_junit_stats stats;
        assert_int_equal(parse(xml, &rows, &stats), RT_OK);
        const rt_history_test *t = find_test(&rows, cases[i].test);
        assert_non_null(t);
        if (!t->message) fail_msg("%s: %s has no message", cases[i].file, cases[i].test);
        assert_string_equal(t->message, cases[i].message);
        rt_history_rows_free(&rows);
        free(xml);
    }
}

static void test_a_malformed_testcase_is_set_aside_and_the_rest_kept(void **state)
{
    (void)state;
    char longname[RT_JUNIT_MAX_NAME + 64];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    char xml[RT_JUNIT_MAX_NAME * 2];
    snprintf(xml, sizeof xml,
             "<testsuite name=\"s\">\n<testcase classname=\"a\" name=\"ok\"/>\n"
             "<testcase classname=\"a\" name=\"\"><failure message=\"m\"/></testcase>\n"
             "<testcase classname=\"a\"/>\n<testcase classname=\"a\" name=\"%s\"/>\n"
             "<testcase classname=\"a\" name=\"bad\"><failure message=\"boom\"/></testcase>\n"
             "</testsuite>",
             longname);
    rt_history_rows rows;
    rt_junit_stats stats;
    assert_int_equal(parse(xml, &rows, &stats), RT_OK);
    assert_int_equal(stats.testcases, 5);
    assert_int_equal(stats.set_aside, 3);
    assert_string_equal(stats.aside[0], "line 3: testcase without a name");
    assert_string_equal(stats.aside[1], "line 4: testcase without a name");
    assert_non_null(strstr(stats.aside[2], "longer than"));
    assert_int_equal(rows.ntests, 2);
    assert_true(find_test(&rows, "a::bad")->failed);
    rt_history_rows_free(&rows);
    /* only a document that cannot be read is refused */
    assert_int_not_equal(parse("<testsuite><testcase name=\"a\"></testsuite>", &rows, &stats),
                         RT_OK);
    rt_history_rows_free(&rows);
}

static void test_identity_is_classname_else_file_else_suite(void **state)
{
    (void)state;
    static const char xml[] =
        "<testsuites name=\"all\"><testsuite name=\"a.test.js\">"
        "<testcase classname=\"\" name=\"t\"><failure>one</failure></testcase>"
        "<testcase classname=\"\" name=\"t\" file=\"b.test.js\"><failure>two</failure></testcase>"
        "<testcase classname=\"C\" name=\"t\" file=\"c.js\"/>"
        "<testcase classname=\"v\" name=\"v\"/>" /* jest-junit repeats the name */
        "</testsuite><testsuite><testcase name=\"u\"/></testsuite></testsuites>";
    rt_history_rows rows;
    rt_junit_stats stats;
    assert_int_equal(parse(xml, &rows, &stats), RT_OK);
    assert_int_equal(rows.ntests, 5);
    assert_string_equal(find_test(&rows, "a.test.js::t")->message, "one");
    assert_non_null(find_test(&rows, "a.test.js::v"));
    assert_string_equal(find_test(&rows, "b.test.js::t")->message, "two");
    assert_string_equal(find_test(&rows, "b.test.js::t")->group, "b.test.js");
    assert_false(find_test(&rows, "C::t")->failed);
    assert_string_equal(find_test(&rows, "all::u")->group, "all"); /* the innermost named suite */
    rt_history_rows_free(&rows);
}

static void test_reruns_are_attempts_and_fail_then_pass_is_flaky(void **state)
{
    (void)state;
    size_t len = 0;
    char *xml = rt_test_read_file(rt_test_source("tests/fixtures/junit/surefire-reruns.xml"), &len);
    rt_history_rows rows;
    rt_junit_stats stats;
    assert_int_equal(parse(xml, &rows, &stats), RT_OK);
    const rt_history_test *always = find_test(&rows, "org.example.RetryTest::alwaysFails"),
                          *once = find_test(&rows, "org.example.RetryTest::failsOnce"),
                          *errs = find_test(&rows, "org.example.RetryTest::throwsOnce");
    assert_string_equal(always->status, "FAIL");
    assert_int_equal(always->attempts, 3);
    assert_string_equal(once->status, "FLAKY");
    assert_true(once->failed);
    assert_int_equal(once->attempts, 2);
    assert_string_equal(once->message, "expected: <true> but was: <false>");
    /* the signature reads as the failure it was, so it groups with plain failures */
    assert_string_equal(once->signature,
                        "TEST-UNEXPECTED-FAIL | org.example.RetryTest::failsOnce | expected: "
                        "<true> but was: <false>");
    assert_int_equal(errs->attempts, 3);
    rt_history_rows_free(&rows);
    free(xml);
}

/* pytest-rerunfailures: pytest writes a testcase per attempt, a rerun's empty; the attempts of
 * one test read as one test (two passes in a row are a failed attempt then a pass: FLAKY);
 * outside pytest's documents an empty duplicate stays a pass. */
static void test_pytest_rerunfailures_attempts_read_as_one_test(void **state)
{
    (void)state;
    size_t len = 0;
    char *xml =
        rt_test_read_file(rt_test_source("tests/fixtures/junit/pytest-rerunfailures.xml"), &len);
    rt_history_rows rows;
    rt_junit_stats stats;
    assert_int_equal(parse(xml, &rows, &stats), RT_OK);
    assert_int_equal(stats.testcases, 10);
    assert_int_equal(rows.ntests, 5);
    static const struct {
        const char *test, *status;
        int attempts;
    } want[] = {
        {"distributed.tests.test_worker::test_worker_bad_args", "PASS", 1},
        {"distributed.tests.test_worker::test_close_gracefully", "FLAKY", 2},
        {"distributed.tests.test_worker::test_steal_twice", "FLAKY", 3},
        {"distributed.tests.test_worker::test_always_times_out", "FAIL", 3},
        {"distributed.tests.test_worker::test_skipped_on_windows", "SKIP", 1},
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        const rt_history_test *t = find_test(&rows, want[i].test);
        assert_non_null(t);
        if (strcmp(t->status, want[i].status) || t->attempts != want[i].attempts)
            fail_msg("%s: %s x%d, not %s x%d", want[i].test, t->status, t->attempts, want[i].status,
                     want[i].attempts);
    }
    assert_string_equal(find_test(&rows, want[3].test)->message, "assert False");
    rt_history_rows_free(&rows);
    free(xml);

    /* a run ending the document, and pytest's older root (the suite named "pytest") */
    assert_int_equal(parse("<testsuites><testsuite name=\"pytest\"><testcase classname=\"m\" "
                           "name=\"t\"/><testcase classname=\"m\" name=\"t\"/></testsuite>"
                           "</testsuites>",
                           &rows, &stats),
                     RT_OK);
    assert_int_equal(rows.ntests, 1);
    assert_string_equal(rows.tests[0].status, "FLAKY");
    assert_true(rows.tests[0].failed);
    rt_history_rows_free(&rows);
    /* jest, mocha: the same name twice is no rerun */
    assert_int_equal(parse("<testsuites name=\"jest tests\"><testsuite name=\"x\"><testcase "
                           "classname=\"m\" name=\"t\"/><testcase classname=\"m\" name=\"t\"/>"
                           "</testsuite></testsuites>",
                           &rows, &stats),
                     RT_OK);
    assert_string_equal(rows.tests[0].status, "PASS");
    assert_false(rows.tests[0].failed);
    rt_history_rows_free(&rows);
}

/* Every order of the same duplicate results stores the same outcome. */
static void test_duplicates_merge_the_same_in_every_order(void **state)
{
    (void)state;
    static const struct {
        const char *a, *b, *c, *status;
    } cases[] = {
        {"<skipped/>", "", "<skipped/>", "PASS"},
        {"<failure message=\"f\"/>", "<error message=\"e\"/>", "<skipped/>", "FAIL"},
        {"<failure message=\"f\"/>", "", "<skipped/>", "FLAKY"},
        {"<error message=\"e\"/>", "", "<skipped/>", "ERROR"},
        {"<skipped/>", "<skipped/>", "<skipped/>", "SKIP"},
    };
    static const int orders[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
                                     {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *parts[3] = {cases[i].a, cases[i].b, cases[i].c};
        for (size_t o = 0; o < 6; o++) {
            char xml[600];
            snprintf(xml, sizeof xml,
                     "<testsuite><testcase classname=\"k\" name=\"t\">%s</testcase>"
                     "<testcase classname=\"k\" name=\"t\">%s</testcase>"
                     "<testcase classname=\"k\" name=\"t\">%s</testcase></testsuite>",
                     parts[orders[o][0]], parts[orders[o][1]], parts[orders[o][2]]);
            rt_history_rows rows;
            rt_junit_stats stats;
            assert_int_equal(parse(xml, &rows, &stats), RT_OK);
            assert_int_equal(rows.ntests, 1);
            if (strcmp(rows.tests[0].status, cases[i].status) != 0)
                fail_msg("case %zu order %zu: %s, not %s", i, o, rows.tests[0].status,
                         cases[i].status);
            rt_history_rows_free(&rows);
        }
    }
}

static void test_disabled_collection_and_build_errors_are_no_test_failures(void **state)
{
    (void)state;
    static const char xml[] =
        "<testsuites><testsuite name=\"pytest\">"
        "<testcase classname=\"\" name=\"distributed.tests.test_broken\">"
        "<error message=\"collection failure\">E   ImportError: x</error></testcase>"
        "<testcase name=\"d\" classname=\"c\" status=\"disabled\"/>"
        "<testcase name=\"[build failed]\" classname=\"pkg\"><error message=\"Build error\">"
        "<![CDATA[pkg/a_test.go:3: undefined: y]]></error></testcase>"
        "</testsuite></testsuites>";
    rt_history_rows rows;
    rt_junit_stats stats;
    assert_int_equal(parse(xml, &rows, &stats), RT_OK);
    assert_int_equal(stats.failures, 0);
    const rt_history_test *collection = find_test(&rows, "pytest::distributed.tests.test_broken"),
                          *disabled = find_test(&rows, "c::d"),
                          *build = find_test(&rows, "pkg::[build failed]");
    assert_string_equal(collection->status, "COLLECTION_ERROR");
    assert_false(collection->failed);
    assert_string_equal(collection->message, "E   ImportError: x");
    assert_string_equal(disabled->status, "DISABLED");
    assert_false(disabled->failed);
    assert_string_equal(build->status, "BUILD_FAILED");
    assert_false(build->failed);
    assert_string_equal(build->message, "pkg/a_test.go:3: undefined: y");
    rt_history_rows_free(&rows);
}

/* 130 KB of entity references in attributes once ran past 120 s at 485 MB; this 122 KB file
 * (one 2,000-byte entity referenced 40,000 times in one attribute, under libxml2's
 * amplification check) ran past 30 s before the rule: a DOCTYPE is refused before anything
 * is read, in any encoding and after comments. */
static void test_a_doctype_is_refused_fast(void **state)
{
    (void)state;
    size_t size = 200 * 1024, o = 0;
    char *xml = malloc(size);
    assert_non_null(xml);
    o += (size_t)snprintf(
        xml + o, size - o,
        "<?xml version=\"1.0\"?>\n<!-- a report -->\n<!DOCTYPE t [\n<!ENTITY a \"");
    for (int i = 0; i < 2000; i++) xml[o++] = 'y';
    o += (size_t)snprintf(xml + o, size - o,
                          "\">\n]>\n<testsuite name=\"s\"><testcase classname=\"c\" name=\"");
    for (int i = 0; i < 40000; i++) o += (size_t)snprintf(xml + o, size - o, "&a;");
    o += (size_t)snprintf(xml + o, size - o, "\"/></testsuite>\n");
    rt_history_rows rows = {0};
    rt_junit_stats stats = {0};
    char errstr[RT_ERRSTR_SIZE] = "";
    clock_t start = clock();
    assert_int_equal(rt_junit_add(xml, o, &rows, &stats, errstr), RT_EPROTO);
    double seconds = (double)(clock() - start) / CLOCKS_PER_SEC;
    assert_non_null(strstr(errstr, "DOCTYPE"));
    assert_int_equal(stats.testcases, 0);
    assert_true(seconds < 1.0);
    /* UTF-16 with a BOM, the DOCTYPE after a comment: still seen */
    static const char utf16[] =
        "\xff\xfe<\0!\0-\0-\0 \0-\0-\0>\0<\0!\0D\0O\0C\0T\0Y\0P\0E\0 \0x\0>\0";
    assert_int_equal(rt_junit_add(utf16, sizeof utf16 - 1, &rows, &stats, errstr), RT_EPROTO);
    assert_non_null(strstr(errstr, "DOCTYPE"));
    /* a BOM and a comment without a DOCTYPE read as before */
    static const char bom[] = "\xef\xbb\xbf<?xml version=\"1.0\"?><!-- <!DOCTYPE in a comment -->"
                              "<testsuite><testcase classname=\"a\" name=\"b\"/></testsuite>";
    assert_int_equal(rt_junit_add(bom, sizeof bom - 1, &rows, &stats, errstr), RT_OK);
    assert_int_equal(rows.ntests, 1);
    rt_history_rows_free(&rows);
    free(xml);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_producer_report_reads_with_its_counts_and_outcomes),
        cmocka_unit_test(test_generic_messages_take_the_first_meaningful_line_of_the_body),
        cmocka_unit_test(test_a_malformed_testcase_is_set_aside_and_the_rest_kept),
        cmocka_unit_test(test_identity_is_classname_else_file_else_suite),
        cmocka_unit_test(test_reruns_are_attempts_and_fail_then_pass_is_flaky),
        cmocka_unit_test(test_pytest_rerunfailures_attempts_read_as_one_test),
        cmocka_unit_test(test_duplicates_merge_the_same_in_every_order),
        cmocka_unit_test(test_disabled_collection_and_build_errors_are_no_test_failures),
        cmocka_unit_test(test_a_doctype_is_refused_fast),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
