/* SPDX-License-Identifier: MPL-2.0 */
/* test_bugsug.c - bug_suggestions responses into one run's failure lines: the recorded
 * fixture, single tracking bugs (Treeherder's "<test> | single tracking bug" summaries),
 * caps, and untrusted input with wrong types. */
#include "support/util.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/bugsug.h"
#include "common/core/verdict.h"

#define SUSPEND_TEST "toolkit/content/tests/browser/browser_suspend_videos_outside_viewport.js"

static json_t *load_fixture(void)
{
    json_error_t err;
    json_t *root = json_load_file(rt_test_fixture("treeherder/bug_suggestions.json"), 0, &err);
    assert_non_null(root);
    return root;
}

static int parse_json(json_t *doc, rt_bugsug *bs, char *errstr)
{
    char *text = json_dumps(doc, JSON_COMPACT);
    assert_non_null(text);
    int rc = rt_bugsug_parse(text, strlen(text), NULL, bs, errstr);
    free(text);
    return rc;
}

static json_t *bug(long id, const char *status, const char *resolution, const char *summary)
{
    return json_pack("{s:I, s:s, s:s, s:s, s:s, s:n, s:s, s:s}", "id", (json_int_t)id, "status",
                     status, "resolution", resolution, "summary", summary, "keywords",
                     "intermittent-failure,intermittent-testcase", "dupe_of", "crash_signature", "",
                     "whiteboard", "");
}

/* The fixture with one more bug in entry 1's (the suspend-videos line) list. */
static json_t *fixture_with_bug(const char *list, json_t *extra)
{
    json_t *root = load_fixture();
    json_t *bugs = json_object_get(json_array_get(root, 1), "bugs");
    assert_int_equal(json_array_append_new(json_object_get(bugs, list), extra), 0);
    return root;
}

static void test_fixture_gives_its_four_test_unexpected_lines_in_order(void **state)
{
    (void)state;
    size_t len;
    char *text = rt_test_read_file(rt_test_fixture("treeherder/bug_suggestions.json"), &len);
    rt_bugsug bs;
    char errstr[RT_ERRSTR_SIZE] = "";
    assert_int_equal(rt_bugsug_parse(text, len, NULL, &bs, errstr), RT_OK);
    assert_int_equal(bs.entries, 6);
    assert_int_equal(bs.other_lines, 2);
    assert_int_equal(bs.nlines, 4);
    assert_int_equal(bs.ntracked, 0);
    assert_string_equal(bs.lines[1].test, SUSPEND_TEST);
    assert_string_equal(bs.lines[2].status, "TEST-UNEXPECTED-CRASH");
    assert_string_equal(bs.lines[3].test,
                        "/css/css-break/hit-test-inline-fragmentation-with-border-radius.html");
    rt_bugsug_free(&bs);
    rt_bugsug_free(&bs); /* twice is harmless */
    rt_bugsug_free(NULL);
    free(text);
}

static void test_fixture_has_no_single_tracking_bug(void **state)
{
    (void)state;
    json_t *root = load_fixture();
    rt_bugsug bs;
    char errstr[RT_ERRSTR_SIZE];
    assert_int_equal(parse_json(root, &bs, errstr), RT_OK);
    assert_int_equal(bs.nlines, 4); /* bug 1622925 is open but names one message, not the test */
    assert_int_equal(bs.ntracked, 0);
    rt_bugsug_free(&bs);
    json_decref(root);
}

/* Issue 17, item 4: the tracking bug is context; the line stays a failure line. */
static void test_open_single_tracking_bug_for_the_test_is_context_and_keeps_the_line(void **state)
{
    (void)state;
    json_t *root =
        fixture_with_bug("open_recent", bug(1643981, "NEW", "",
                                            "Intermittent " SUSPEND_TEST " | single tracking bug"));
    rt_bugsug bs;
    char errstr[RT_ERRSTR_SIZE];
    assert_int_equal(parse_json(root, &bs, errstr), RT_OK);
    assert_int_equal(bs.nlines, 4);
    assert_int_equal(bs.ntracked, 1);
    assert_int_equal(bs.tracked[0].bug_id, 1643981);
    assert_string_equal(bs.tracked[0].line.test, SUSPEND_TEST);
    size_t tracked = 0;
    for (size_t i = 0; i < bs.nlines; i++) {
        long bug_id = rt_bugsug_tracking_bug(&bs, &bs.lines[i]);
        if (!strcmp(bs.lines[i].test, SUSPEND_TEST)) {
            assert_int_equal(bug_id, 1643981);
            tracked++;
        } else {
            assert_int_equal(bug_id, 0);
        }
    }
    assert_int_equal(tracked, 1);
    rt_bugsug_free(&bs);
    json_decref(root);
}

static void test_open_single_tracking_bug_listed_in_all_others_also_counts(void **state)
{
    (void)state;
    json_t *root =
        fixture_with_bug("all_others", bug(1700000, "REOPENED", "",
                                           "Frequent " SUSPEND_TEST " | single tracking bug"));
    rt_bugsug bs;
    char errstr[RT_ERRSTR_SIZE];
    assert_int_equal(parse_json(root, &bs, errstr), RT_OK);
    assert_int_equal(bs.ntracked, 1);
    rt_bugsug_free(&bs);
    json_decref(root);
}

static void test_closed_or_other_tests_single_tracking_bug_keeps_the_line(void **state)
{
    (void)state;
    json_t *cases[] = {
        bug(1, "RESOLVED", "INCOMPLETE", "Intermittent " SUSPEND_TEST " | single tracking bug"),
        bug(2, "RESOLVED", "", "Intermittent " SUSPEND_TEST " | single tracking bug"),
        bug(3, "NEW", "",
            "Intermittent dom/media/test/browser/browser_suspend_videos_outside_viewport.js"
            " | single tracking bug"),
        bug(4, "NEW", "",
            "Intermittent browser_suspend_videos_outside_viewport.js | single tracking bug"),
        bug(5, "NEW", "", "Intermittent " SUSPEND_TEST " | video decoding is suspended"),
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *root = fixture_with_bug("open_recent", cases[i]);
        rt_bugsug bs;
        char errstr[RT_ERRSTR_SIZE];
        assert_int_equal(parse_json(root, &bs, errstr), RT_OK);
        if (bs.nlines != 4 || bs.ntracked != 0) fail_msg("case %zu tracked the line", i);
        rt_bugsug_free(&bs);
        json_decref(root);
    }
}

static void test_single_tracking_bug_rule(void **state)
{
    (void)state;
    static const struct {
        const char *summary, *status, *resolution, *test;
        bool tracked;
    } cases[] = {
        {"Intermittent a/b/test_x.html | single tracking bug", "NEW", "", "a/b/test_x.html", true},
        {"Perma a/b/test_x.html | Single Tracking Bug  ", "NEW", NULL, "a/b/test_x.html", true},
        {"Intermittent /css/x/y.html | single tracking bug", "NEW", "", "/css/x/y.html?variant=1",
         true},
        {"Intermittent bugs/123.html | single tracking bug", "NEW", "",
         "layout/reftests/bugs/123.html", true},
        {"Intermittent test_x.html | single tracking bug", "NEW", "", "a/b/test_x.html", false},
        {"Intermittent other/b/test_x.html | single tracking bug", "NEW", "", "a/b/test_x.html",
         false},
        {"Intermittent a/b/test_x.html | single tracking bug", "VERIFIED", "", "a/b/test_x.html",
         false},
        {"Intermittent a/b/test_x.html | single tracking bug", "NEW", "FIXED", "a/b/test_x.html",
         false},
        {"Intermittent a/b/test_x.html | Test timed out", "NEW", "", "a/b/test_x.html", false},
        {"single tracking bug", "NEW", "", "a/b/test_x.html", false},
        {"Intermittent a/b/test_x.html | single tracking bug", "NEW", "", "", false},
        {NULL, "NEW", "", "a/b/test_x.html", false},
        /* Issue 30: a reftest pair, as the bug filer names it (the harness's file:// root
         * dropped); the reference alone, or another test against the same reference, is not. */
        {"Intermittent layout/reftests/bugs/1804872-2.html == "
         "layout/reftests/bugs/1804872-2-ref.html | single tracking bug",
         "NEW", "",
         "layout/reftests/bugs/1804872-2.html == layout/reftests/bugs/1804872-2-ref.html", true},
        {"Intermittent layout/reftests/a/x.html == layout/reftests/a/x-ref.html | single "
         "tracking bug",
         "NEW", "",
         "file:///C:/slave/test/build/tests/reftest/tests/layout/reftests/a/x.html == "
         "file:///C:/slave/test/build/tests/reftest/tests/layout/reftests/a/x-ref.html",
         true},
        {"Intermittent layout/reftests/a/y.html == layout/reftests/a/x-ref.html | single "
         "tracking bug",
         "NEW", "", "layout/reftests/a/x.html == layout/reftests/a/x-ref.html", false},
        {"Intermittent layout/reftests/a/y.html == layout/reftests/a/x-ref.html | single "
         "tracking bug",
         "NEW", "",
         "file:///C:/slave/test/build/tests/reftest/tests/layout/reftests/a/x.html == "
         "file:///C:/slave/test/build/tests/reftest/tests/layout/reftests/a/x-ref.html",
         false},
        {"Intermittent /css/x/y.html?variant=1 | single tracking bug", "NEW", "",
         "/css/x/y.html?variant=2", false},
        {"Intermittent a/b.html == a/c.html?green.png | single tracking bug", "NEW", "",
         "a/b.html == a/c.html?green.png", true},
        {"Intermittent layout/reftests/a/x-ref.html | single tracking bug", "NEW", "",
         "layout/reftests/a/x.html == layout/reftests/a/x-ref.html", false},
        {"Intermittent layout/reftests/a/x.html != layout/reftests/a/x-ref.html | single "
         "tracking bug",
         "NEW", "", "layout/reftests/a/x.html == layout/reftests/a/x-ref.html", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (rt_bugsug_is_single_tracking_bug(cases[i].summary, cases[i].status, cases[i].resolution,
                                             cases[i].test) != cases[i].tracked)
            fail_msg("case %zu: expected %s", i, cases[i].tracked ? "tracked" : "not tracked");
}

static void test_same_line_twice_in_a_run_is_kept_once(void **state)
{
    (void)state;
    const char *doc =
        "[{\"search\": \"TEST-UNEXPECTED-FAIL | t.js | crashed pid 12\", \"bugs\": {}},"
        " {\"search\": \"TEST-UNEXPECTED-FAIL | t.js | crashed pid 13\", \"bugs\": {},"
        "  \"line_number\": 7, \"counter\": 0, \"failure_new_in_rev\": true}]";
    rt_bugsug bs;
    char errstr[RT_ERRSTR_SIZE];
    assert_int_equal(rt_bugsug_parse(doc, strlen(doc), NULL, &bs, errstr), RT_OK);
    assert_int_equal(bs.nlines, 1);
    assert_int_equal(bs.duplicates, 1);
    rt_bugsug_free(&bs);
}

static void test_lines_beyond_the_cap_are_counted_not_kept(void **state)
{
    (void)state;
    json_t *doc = json_array();
    for (int i = 0; i < 150; i++) {
        char search[64];
        snprintf(search, sizeof search, "TEST-UNEXPECTED-FAIL | t%d.js | x", i);
        json_array_append_new(doc, json_pack("{s:s}", "search", search));
    }
    rt_bugsug bs;
    char errstr[RT_ERRSTR_SIZE];
    assert_int_equal(parse_json(doc, &bs, errstr), RT_OK);
    assert_int_equal(bs.nlines, RT_BUGSUG_MAX_LINES);
    assert_int_equal(bs.truncated, 150 - RT_BUGSUG_MAX_LINES);
    rt_bugsug_free(&bs);
    char *text = json_dumps(doc, JSON_COMPACT);
    rt_bugsug_options opts = {.max_lines = 10};
    assert_int_equal(rt_bugsug_parse(text, strlen(text), &opts, &bs, errstr), RT_OK);
    assert_int_equal(bs.nlines, 10);
    rt_bugsug_free(&bs);
    opts = (rt_bugsug_options){.max_bytes = 100};
    assert_int_equal(rt_bugsug_parse(text, strlen(text), &opts, &bs, errstr), RT_ETOOBIG);
    assert_int_equal(bs.nlines, 0);
    free(text);
    json_decref(doc);
}

static void test_wrong_types_are_protocol_errors_naming_the_field(void **state)
{
    (void)state;
    static const struct {
        const char *doc, *reason;
    } cases[] = {
        {"{}", "not a JSON array"},
        {"[1]", "entry 0 is not an object"},
        {"[{\"search\": 5}]", "search"},
        {"[{}]", "search"},
        {"[{\"search\": \"x\", \"bugs\": []}]", "bugs is not an object"},
        {"[{\"search\": \"TEST-UNEXPECTED-FAIL | a | b\", \"bugs\": {\"open_recent\": {}}}]",
         "open_recent"},
        {"[{\"search\": \"x\", \"bugs\": {\"all_others\": [1]}}]", "all_others[0]"},
        {"[{\"search\": \"x\", \"bugs\": {\"all_others\": [{\"id\": \"12\"}]}}]", "all_others[0]"},
        {"[{\"search\": \"x\", \"bugs\": {\"open_recent\": [{\"summary\": 3}]}}]",
         "open_recent[0]"},
        {"[{\"search\": \"x\", \"line_number\": \"7\"}]", "line_number"},
        {"[{\"search\": \"x\", \"counter\": 1.5}]", "counter"},
        {"[{\"search\": \"x\", \"failure_new_in_rev\": 1}]", "failure_new_in_rev"},
        {"[{\"search\": \"x\", \"search_terms\": \"x\"}]", "search_terms"},
        {"[{\"search\": \"x\", \"path_end\": 1}]", "path_end"},
        {"[{\"search\": \"x\"}", "not JSON"},
        {"", "not JSON"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rt_bugsug bs;
        char errstr[RT_ERRSTR_SIZE] = "";
        int rc = rt_bugsug_parse(cases[i].doc, strlen(cases[i].doc), NULL, &bs, errstr);
        if (rc != RT_EPROTO || !strstr(errstr, cases[i].reason))
            fail_msg("case %zu: rc %d errstr '%s', expected RT_EPROTO and '%s'", i, rc, errstr,
                     cases[i].reason);
        assert_int_equal(bs.nlines, 0);
        assert_null(bs.lines);
    }
}

static void test_null_bugs_and_internal_issues_without_id_are_accepted(void **state)
{
    (void)state;
    const char *doc =
        "[{\"search\": \"TEST-UNEXPECTED-FAIL | a/b.js | x\", \"bugs\": null},"
        " {\"search\": \"TEST-UNEXPECTED-FAIL | a/c.js | x\", \"bugs\": {\"open_recent\":"
        "  [{\"id\": null, \"internal_id\": 4, \"status\": \"NEW\", \"resolution\": \"\","
        "    \"summary\": \"Intermittent a/c.js | single tracking bug\"}]}}]";
    rt_bugsug bs;
    char errstr[RT_ERRSTR_SIZE];
    assert_int_equal(rt_bugsug_parse(doc, strlen(doc), NULL, &bs, errstr), RT_OK);
    assert_int_equal(bs.nlines, 2);
    assert_int_equal(bs.ntracked, 1);
    assert_int_equal(bs.tracked[0].bug_id, -1);
    rt_bugsug_free(&bs);
}

/* Issue 17, item 3: a run whose only failure is a crash has its crash line to compare. */
static void test_crash_only_run_gives_its_crash_lines(void **state)
{
    (void)state;
    const char *doc =
        "[{\"search\": \"PROCESS-CRASH | dom/media/test/test_a.html | application crashed "
        "[@ mozilla::dom::HTMLMediaElement::Load]\", \"bugs\": {\"open_recent\": [], "
        "\"all_others\": []}},"
        " {\"search\": \"Return code: 245\", \"bugs\": {\"open_recent\": [], \"all_others\": []}}]";
    rt_bugsug bs;
    char errstr[RT_ERRSTR_SIZE];
    assert_int_equal(rt_bugsug_parse(doc, strlen(doc), NULL, &bs, errstr), RT_OK);
    assert_int_equal(bs.nlines, 1);
    assert_int_equal(bs.other_lines, 1);
    assert_string_equal(bs.lines[0].status, "PROCESS-CRASH");
    /* Two retriggers with the same crash: a regression, not undecided/no-failure-lines. */
    rt_verdict_run runs[5] = {
        {.state = RT_RUN_FAILED, .lines = bs.lines, .nlines = 1},
        {.state = RT_RUN_FAILED, .lines = bs.lines, .nlines = 1},
        {.state = RT_RUN_PASSED},
        {.state = RT_RUN_PASSED},
        {.state = RT_RUN_PASSED},
    };
    rt_verdict_input in = {
        .original = bs.lines, .noriginal = bs.nlines, .runs = runs, .nruns = 5, .threshold = 2};
    rt_verdict_result out;
    assert_int_equal(rt_verdict_decide(&in, &out), RT_OK);
    assert_int_equal(out.verdict, RT_VERDICT_REGRESSION);
    assert_string_equal(out.reason, "reproduced");
    rt_bugsug_free(&bs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_gives_its_four_test_unexpected_lines_in_order),
        cmocka_unit_test(test_fixture_has_no_single_tracking_bug),
        cmocka_unit_test(test_open_single_tracking_bug_for_the_test_is_context_and_keeps_the_line),
        cmocka_unit_test(test_crash_only_run_gives_its_crash_lines),
        cmocka_unit_test(test_open_single_tracking_bug_listed_in_all_others_also_counts),
        cmocka_unit_test(test_closed_or_other_tests_single_tracking_bug_keeps_the_line),
        cmocka_unit_test(test_single_tracking_bug_rule),
        cmocka_unit_test(test_same_line_twice_in_a_run_is_kept_once),
        cmocka_unit_test(test_lines_beyond_the_cap_are_counted_not_kept),
        cmocka_unit_test(test_wrong_types_are_protocol_errors_naming_the_field),
        cmocka_unit_test(test_null_bugs_and_internal_issues_without_id_are_accepted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
