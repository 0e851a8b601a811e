/* SPDX-License-Identifier: MPL-2.0 */
/* test_history.c - the pure part of the test history (common/core/history.h) and the JUnit
 * reader (common/core/junit.h): sampling, allow-lists, branch keys (a try push's author from
 * the recorded task definition), signatures with the shared
 * normaliser, rows from the recorded errorsummary fixture, and JUnit merging and errors. */
#include "support/util.h"

#include <stdlib.h>
#include <string.h>

#include "common/core/errorsummary.h"
#include "common/core/history.h"
#include "common/core/junit.h"
#include "common/core/taskdef.h"

static const rt_history_test *find_test(const rt_history_rows *rows, const char *name)
{
    for (size_t i = 0; i < rows->ntests; i++)
        if (!strcmp(rows->tests[i].test, name)) return &rows->tests[i];
    return NULL;
}

static const rt_history_group *find_group(const rt_history_rows *rows, const char *name)
{
    for (size_t i = 0; i < rows->ngroups; i++)
        if (!strcmp(rows->groups[i].name, name)) return &rows->groups[i];
    return NULL;
}

static void test_sampling_is_stable_per_task_and_close_to_the_rate(void **state)
{
    (void)state;
    int kept = 0;
    char id[32];
    for (int i = 0; i < 10000; i++) {
        snprintf(id, sizeof id, "task-%05d-abcdefghijk", i);
        bool in = rt_history_sampled(id, 25);
        assert_int_equal(in, rt_history_sampled(id, 25)); /* a redelivery decides the same */
        kept += in;
    }
    assert_in_range(kept, 2200, 2800);
    assert_true(rt_history_sampled("x", 100));
    assert_false(rt_history_sampled("x", 0));
}

static void test_allow_list_globs_and_main_projects(void **state)
{
    (void)state;
    rt_strlist allow = {2, {"autoland", "mozilla-*"}};
    assert_true(rt_history_project_allowed(&allow, "autoland"));
    assert_true(rt_history_project_allowed(&allow, "mozilla-beta"));
    assert_false(rt_history_project_allowed(&allow, "try"));
    rt_strlist main = {2, {"mozilla-central", "autoland"}};
    assert_true(rt_history_is_main(&main, "autoland"));
    assert_false(rt_history_is_main(&main, "mozilla-beta"));
}

static void test_a_try_push_without_a_known_author_is_its_own_branch(void **state)
{
    (void)state;
    char key[64];
    rt_history_branch_key("try", "4242", NULL, key, sizeof key);
    assert_string_equal(key, "try:4242");
    rt_history_branch_key("try-comm-central", "7", "", key, sizeof key);
    assert_string_equal(key, "try-comm-central:7");
    rt_history_branch_key("autoland", "88560", "someone@mozilla.com", key, sizeof key);
    assert_string_equal(key, "autoland"); /* not someone's own branch: the project */
}

/* One developer's try pushes of one patch are one branch: the key is the push's author (a
 * task's metadata.owner, the recorded task definition's here), whatever the push. */
static void test_one_authors_try_pushes_are_one_branch(void **state)
{
    (void)state;
    size_t len = 0;
    char *body = rt_test_read_file(
        rt_test_fixture("taskcluster/task_definition_GWxTc8p_RUa5_Xo4RtMiCA.json"), &len);
    rt_taskdef task;
    char reason[128];
    assert_int_equal(rt_taskdef_parse(body, len, 1 << 20, &task, reason), RT_OK);
    assert_string_equal(task.owner, "jmuizelaar@mozilla.com");
    char first[128], second[128];
    rt_history_branch_key("try", "1001", task.owner, first, sizeof first);
    rt_history_branch_key("try", "1002", "JMuizelaar@Mozilla.com", second, sizeof second);
    assert_string_equal(first, "try:author:jmuizelaar@mozilla.com");
    assert_string_equal(second, first);
    rt_history_branch_key("try", "1001", "other@mozilla.com", second, sizeof second);
    assert_string_not_equal(second, first);
    char tiny[12]; /* truncated, still a string */
    rt_history_branch_key("try", "1001", task.owner, tiny, sizeof tiny);
    assert_string_equal(tiny, "try:author:");
    rt_taskdef_free(&task);
    free(body);
}

static void test_signature_uses_the_shared_normaliser(void **state)
{
    (void)state;
    char *sig = NULL, hash[17];
    assert_int_equal(rt_history_failure_signature("TIMEOUT", "dom/a.js", "sub",
                                                  "took 1234ms at 12:34:56", &sig, hash),
                     RT_OK);
    assert_string_equal(sig, "TEST-UNEXPECTED-TIMEOUT | dom/a.js | sub - took <n>ms at <time>");
    assert_int_equal(strlen(hash), 16);
    char *again = NULL, hash2[17];
    assert_int_equal(rt_history_failure_signature("TIMEOUT", "dom/a.js", "sub",
                                                  "took 99ms at 01:02:03", &again, hash2),
                     RT_OK);
    assert_string_equal(hash, hash2); /* the same failure on another run */
    free(sig);
    free(again);
}

static void test_errorsummary_fixture_gives_every_group_and_one_row_per_failing_test(void **state)
{
    (void)state;
    size_t len = 0;
    char *text = rt_test_read_file(
        rt_test_fixture("errorsummary/mochitest-browser-chrome_errorsummary.log"), &len);
    rt_errorsummary es = {0};
    assert_int_equal(rt_errorsummary_add(&es, text, len), RT_OK);
    free(text);
    rt_history_rows rows;
    assert_int_equal(rt_history_rows_from_errorsummary(&es, &rows), RT_OK);
    assert_int_equal(rows.ngroups, 30);
    assert_int_equal(rows.ntests, 2); /* five failure lines of two tests */
    const rt_history_test *t =
        find_test(&rows, "toolkit/components/pictureinpicture/tests/browser_fullscreen.js");
    assert_non_null(t);
    assert_true(t->failed);
    assert_string_equal(t->group, "toolkit/components/pictureinpicture/tests/browser.ini");
    assert_string_equal(
        t->message, "Uncaught exception - undefined - timed out after 50 tries."); /* the first */
    const rt_history_group *g =
        find_group(&rows, "toolkit/components/pictureinpicture/tests/browser.ini");
    assert_true(g->failed);
    assert_string_equal(g->status, "ERROR");
    assert_false(find_group(&rows, "dom/base/test/browser.ini")->failed);
    rt_history_rows_free(&rows);
    rt_errorsummary_free(&es);
}

static void test_junit_duplicates_merge_with_failure_winning_in_either_order(void **state)
{
    (void)state;
    static const char xml[] =
        "<testsuites><testsuite name=\"pytest\" timestamp=\"2024-05-02T09:14:07\">"
        "<testcase classname=\"m\" name=\"t1\"/>"
        "<testcase classname=\"m\" name=\"t1\"><failure message=\"boom 1\">x</failure></testcase>"
        "<testcase classname=\"m\" name=\"t1\"><failure message=\"boom 2\"/></testcase>"
        "<testcase classname=\"m\" name=\"t2\"><error>E  OSError\nmore</error></testcase>"
        "<testcase classname=\"m\" name=\"t2\"/>"
        "<testcase classname=\"n\" name=\"t3\"><skipped/></testcase>"
        "</testsuite></testsuites>";
    rt_history_rows rows = {0};
    rt_junit_stats stats = {0};
    char errstr[RT_ERRSTR_SIZE] = "";
    assert_int_equal(rt_junit_add(xml, strlen(xml), &rows, &stats, errstr), RT_OK);
    assert_int_equal(stats.testcases, 6);
    assert_string_equal(stats.timestamp, "2024-05-02T09:14:07");
    assert_int_equal(rows.ntests, 3);
    const rt_history_test *t1 = find_test(&rows, "m::t1"), *t2 = find_test(&rows, "m::t2"),
                          *t3 = find_test(&rows, "n::t3");
    assert_true(t1->failed);
    assert_string_equal(t1->message, "boom 1");
    assert_string_equal(t1->signature, "TEST-UNEXPECTED-FAIL | m::t1 | boom 1");
    assert_true(t2->failed);
    assert_string_equal(t2->status, "ERROR");
    assert_string_equal(t2->message, "E  OSError"); /* the first line of the text */
    assert_false(t3->failed);
    assert_string_equal(t3->status, "SKIP");
    assert_true(find_group(&rows, "m")->failed);
    assert_string_equal(find_group(&rows, "m")->status, "FAIL");
    assert_false(find_group(&rows, "n")->failed);
    rt_history_rows_free(&rows);
}

static void test_junit_truncated_or_foreign_documents_are_errors(void **state)
{
    (void)state;
    static const char truncated[] =
        "<testsuites><testsuite name=\"x\"><testcase classname=\"a\" name=\"b\">";
    static const char foreign[] = "<html><body/></html>";
    static const char nameless[] = "<testsuite><testcase classname=\"a\"/></testsuite>";
    rt_history_rows rows = {0};
    rt_junit_stats stats = {0};
    char errstr[RT_ERRSTR_SIZE] = "";
    assert_int_equal(rt_junit_add(truncated, strlen(truncated), &rows, &stats, errstr), RT_EPROTO);
    assert_non_null(strstr(errstr, "line 1"));
    assert_int_equal(rt_junit_add(foreign, strlen(foreign), &rows, &stats, errstr), RT_EPROTO);
    assert_string_equal(errstr, "root element <html> is not testsuites or testsuite");
    /* a testcase without a name is set aside, the document kept (tests/unit/test_junit.c) */
    assert_int_equal(rt_junit_add(nameless, strlen(nameless), &rows, &stats, errstr), RT_OK);
    assert_int_equal(stats.set_aside, 1);
    assert_int_equal(rt_junit_add("", 0, &rows, &stats, errstr), RT_EPROTO);
    rt_history_rows_free(&rows);
}

static void test_junit_seed_corpus_reads(void **state)
{
    (void)state;
    static const char *const seeds[] = {"pytest.xml", "actions-surefire.xml", "actions-jest.xml"};
    static const size_t tests[] = {5, 3, 2};
    for (size_t i = 0; i < 3; i++) {
        char path[256];
        snprintf(path, sizeof path, "tests/fuzz/corpus/junit/%s", seeds[i]);
        size_t len = 0;
        char *text = rt_test_read_file(rt_test_source(path), &len);
        rt_history_rows rows = {0};
        rt_junit_stats stats = {0};
        char errstr[RT_ERRSTR_SIZE] = "";
        assert_int_equal(rt_junit_add(text, len, &rows, &stats, errstr), RT_OK);
        assert_int_equal(rows.ntests, tests[i]);
        assert_true(stats.timestamp[0] != '\0');
        free(text);
        rt_history_rows_free(&rows);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sampling_is_stable_per_task_and_close_to_the_rate),
        cmocka_unit_test(test_allow_list_globs_and_main_projects),
        cmocka_unit_test(test_a_try_push_without_a_known_author_is_its_own_branch),
        cmocka_unit_test(test_one_authors_try_pushes_are_one_branch),
        cmocka_unit_test(test_signature_uses_the_shared_normaliser),
        cmocka_unit_test(test_errorsummary_fixture_gives_every_group_and_one_row_per_failing_test),
        cmocka_unit_test(test_junit_duplicates_merge_with_failure_winning_in_either_order),
        cmocka_unit_test(test_junit_truncated_or_foreign_documents_are_errors),
        cmocka_unit_test(test_junit_seed_corpus_reads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
