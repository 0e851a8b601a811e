/* SPDX-License-Identifier: MPL-2.0 */
/* test_failure_line.c - the failure line normaliser: real lines from the recorded
 * bug_suggestions fixture, volatile variants that must compare equal, and different
 * failures that must not. */
#include "support/util.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/failure_line.h"

/* The fixture's `search` lines, in order (six entries, four TEST-UNEXPECTED). */
static json_t *fixture_searches(void)
{
    json_error_t err;
    json_t *root = json_load_file(rt_test_fixture("treeherder/bug_suggestions.json"), 0, &err);
    assert_non_null(root);
    return root;
}

static const char *fixture_search(json_t *root, size_t i)
{
    const char *s = json_string_value(json_object_get(json_array_get(root, i), "search"));
    assert_non_null(s);
    return s;
}

static void parse_ok(const char *text, rt_failure_line *line)
{
    assert_int_equal(rt_failure_line_parse(text, strlen(text), line), RT_OK);
}

static bool same_failure(const char *a, const char *b)
{
    rt_failure_line la, lb;
    parse_ok(a, &la);
    parse_ok(b, &lb);
    bool equal = rt_failure_line_equal(&la, &lb);
    rt_failure_line_free(&la);
    rt_failure_line_free(&lb);
    return equal;
}

static void test_fixture_lines_split_into_status_test_and_message(void **state)
{
    (void)state;
    json_t *root = fixture_searches();
    rt_failure_line line;
    parse_ok(fixture_search(root, 1), &line);
    assert_string_equal(line.status, "TEST-UNEXPECTED-FAIL");
    assert_string_equal(line.test,
                        "toolkit/content/tests/browser/browser_suspend_videos_outside_viewport.js");
    assert_string_equal(
        line.message,
        "video decoding is suspended - false == true - got false, expected true (operator ==)");
    assert_string_equal(line.signature, fixture_search(root, 1)); /* nothing volatile in it */
    assert_int_equal(strlen(line.hash_hex), 16);
    rt_failure_line_free(&line);

    parse_ok(fixture_search(root, 4), &line);
    assert_string_equal(line.status, "TEST-UNEXPECTED-CRASH");
    assert_string_equal(line.test, "/trusted-types/WorkerGlobalScope-eval.html");
    assert_string_equal(line.message, "expected OK");
    rt_failure_line_free(&line);
    json_decref(root);
}

static void test_fixture_lines_that_are_not_test_unexpected_are_not_failure_lines(void **state)
{
    (void)state;
    json_t *root = fixture_searches();
    size_t kept = 0;
    for (size_t i = 0; i < json_array_size(root); i++) {
        rt_failure_line line;
        const char *s = fixture_search(root, i);
        int rc = rt_failure_line_parse(s, strlen(s), &line);
        if (rc == RT_OK)
            kept++;
        else
            assert_int_equal(rc, RT_ENOTFOUND);
        rt_failure_line_free(&line);
    }
    assert_int_equal(kept, 4); /* "Return code: 1" and "Got 1 unexpected statuses" are not */
    json_decref(root);
}

static void test_same_failure_with_other_pid_address_duration_compares_equal(void **state)
{
    (void)state;
    json_t *root = fixture_searches();
    const char *base = fixture_search(root, 0);
    char a[1024], b[1024];
    snprintf(a, sizeof a, "%s [Parent 12345, Main Thread] at 0x7f3a2b1c4d00 took 1234ms pid 4242",
             base);
    snprintf(b, sizeof b, "%s [Parent 877, Main Thread] at 0x55d4c3b2a100 took 98ms pid 31", base);
    assert_true(same_failure(a, b));
    snprintf(a, sizeof a,
             "%s after 370 seconds at 2024-05-01T12:34:56.789Z http://localhost:49152/x", base);
    snprintf(b, sizeof b, "%s after 45 seconds at 2025-01-31T01:02:03Z http://localhost:8000/x",
             base);
    assert_true(same_failure(a, b));
    snprintf(a, sizeof a,
             "%s /tmp/tmpa1b2c3.mozrunner/prefs.js {0b6c7a3e-1d2f-4c5b-9a8e-7f6d5c4b3a21}", base);
    snprintf(b, sizeof b,
             "%s /tmp/tmpzz9xy1.mozrunner/prefs.js {11111111-2222-3333-4444-555555555555}", base);
    assert_true(same_failure(a, b));
    json_decref(root);
}

static void test_harness_prefixes_ansi_and_spacing_do_not_change_the_signature(void **state)
{
    (void)state;
    json_t *root = fixture_searches();
    const char *base = fixture_search(root, 1);
    char variant[1024];
    snprintf(variant, sizeof variant, "12:34:56     INFO - GECKO(4321) | \x1b[31m%s\x1b[0m  \t",
             base);
    assert_true(same_failure(base, variant));
    snprintf(variant, sizeof variant, "[1234] %s", base);
    assert_true(same_failure(base, variant));
    json_decref(root);
}

static void test_different_assertion_message_is_a_different_failure(void **state)
{
    (void)state;
    json_t *root = fixture_searches();
    /* The fixture's own neighbour: bug 1548870 names another message of the same test. */
    assert_false(same_failure(fixture_search(root, 0),
                              "TEST-UNEXPECTED-FAIL | devtools/client/netmonitor/src/har/test/"
                              "browser_net_har_copy_all_as_har.js | Check the total time -"));
    /* The two CRASH lines share status and message but not the test. */
    assert_false(same_failure(fixture_search(root, 4), fixture_search(root, 5)));
    /* Same test and message, another status. */
    assert_false(same_failure("TEST-UNEXPECTED-FAIL | a/test_x.html | Test timed out.",
                              "TEST-UNEXPECTED-TIMEOUT | a/test_x.html | Test timed out."));
    /* Short numbers and nsresult codes tell failures apart. */
    assert_false(same_failure("TEST-UNEXPECTED-FAIL | t.js | got 3, expected 4",
                              "TEST-UNEXPECTED-FAIL | t.js | got 5, expected 4"));
    assert_false(same_failure("TEST-UNEXPECTED-FAIL | t.js | NS_ERROR_FAILURE (0x80004005)",
                              "TEST-UNEXPECTED-FAIL | t.js | NS_ERROR_INVALID_ARG (0x80070057)"));
    assert_false(same_failure("TEST-UNEXPECTED-FAIL | t.js | /tmp/tmpab12/prefs.js missing",
                              "TEST-UNEXPECTED-FAIL | t.js | /tmp/tmpab12/cookies.sqlite missing"));
    assert_false(same_failure("TEST-UNEXPECTED-FAIL | t.js | value 0.25 < 0.5",
                              "TEST-UNEXPECTED-FAIL | t.js | value 0.75 < 0.5"));
    json_decref(root);
}

/* Each documented rule, with the header's example. */
static void test_each_rule_rewrites_its_example(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"\x1b[1;31mred\x1b[0m text", "red text"},
        {"  a \t\n b  ", "a b"},
        {"{0b6c7a3e-1d2f-4c5b-9a8e-7f6d5c4b3a21} closed", "{<uuid>} closed"},
        {"at 0x7f3a2b1c4d00", "at 0x<addr>"},
        {"code 0x80004005", "code 0x80004005"},
        {"at 2024-05-01T12:34:56.789Z", "at <time>"},
        {"at 2024-05-01 12:34:56+02:00 ok", "at <time> ok"},
        {"at 12:34:56.789", "at <time>"},
        {"file.js:12:34 failed", "file.js:12:34 failed"},
        {"/tmp/tmpa1b2c3.mozrunner/prefs.js", "<tmp>/prefs.js"},
        {"file:///tmp/tmpa1b2c3/a.html", "file://<tmp>/a.html"},
        {"/tmp/log.txt", "<tmp>/log.txt"},
        {"/var/folders/8z/abc123/T/tmpq/a", "<tmp>/a"},
        {"C:\\Users\\task_1\\AppData\\Local\\Temp\\tmpq\\a", "<tmp>\\a"},
        {"/home/u/tmp/x", "/home/u/tmp/x"},
        {"http://localhost:49152/x", "http://localhost:<port>/x"},
        {"ws://127.0.0.1:8000", "ws://127.0.0.1:<port>"},
        {"http://[::1]:1234/", "http://[::1]:<port>/"},
        {"http://mochi.test:8888/a", "http://mochi.test:8888/a"},
        {"pid 1234", "pid <n>"},
        {"PID: 1234, pid=99", "PID: <n>, pid=<n>"},
        {"GECKO(1234) said", "GECKO(<n>) said"},
        {"[Parent 1234, Main Thread] WARNING", "[Parent <n>, Main Thread] WARNING"},
        {"[Child 77: Main Thread]", "[Child <n>: Main Thread]"},
        {"took 1234ms", "took <n>ms"},
        {"after 370 seconds", "after <n> seconds"},
        {"in 1.5s and 2 min", "in <n>s and <n> min"},
        {"items 3 s", "items 3 s"},
        {"task_1700000000 died", "task_<n> died"},
        {"leaked 123456 bytes", "leaked <n> bytes"},
        {"test123456 and abc0x7f3a2b1c4d00", "test123456 and abc0x7f3a2b1c4d00"},
        {"value 0.1234567", "value 0.1234567"},
        {"got 3, expected 4", "got 3, expected 4"},
        /* Found by fuzz_failure_line: an offset glued to a unit is a duration. */
        {"[2048-05-01T12:05-01mins", "[<time>-<n>mins"},
        {"at 2024-05-01T12:34:56-01:00x", "at <time>-01:00x"},
        {"at 2024-05-00T12:34:56,234ms_x", "at <time>,<n>ms_x"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got = rt_failure_line_normalise_message(cases[i].in, strlen(cases[i].in));
        assert_non_null(got);
        if (strcmp(got, cases[i].out) != 0)
            fail_msg("case %zu: '%s' -> '%s', expected '%s'", i, cases[i].in, got, cases[i].out);
        char *again = rt_failure_line_normalise_message(got, strlen(got));
        assert_non_null(again);
        assert_string_equal(again, got); /* idempotent */
        free(again);
        free(got);
    }
}

static void test_test_path_is_kept_as_is(void **state)
{
    (void)state;
    rt_failure_line line;
    parse_ok("TEST-UNEXPECTED-FAIL | /tmp/x/test_1234567.html?q=0x7f3a2b1c4d00 | took 5ms", &line);
    assert_string_equal(line.test, "/tmp/x/test_1234567.html?q=0x7f3a2b1c4d00");
    assert_string_equal(line.message, "took <n>ms");
    assert_string_equal(
        line.signature,
        "TEST-UNEXPECTED-FAIL | /tmp/x/test_1234567.html?q=0x7f3a2b1c4d00 | took <n>ms");
    rt_failure_line_free(&line);
}

static void test_lines_without_message_or_test(void **state)
{
    (void)state;
    rt_failure_line line;
    parse_ok("TEST-UNEXPECTED-FAIL | a/test_b.js", &line);
    assert_string_equal(line.signature, "TEST-UNEXPECTED-FAIL | a/test_b.js");
    assert_string_equal(line.message, "");
    rt_failure_line_free(&line);
    assert_true(
        same_failure("TEST-UNEXPECTED-FAIL | a/test_b.js |", "TEST-UNEXPECTED-FAIL | a/test_b.js"));
    parse_ok("TEST-UNEXPECTED-ERROR", &line);
    assert_string_equal(line.signature, "TEST-UNEXPECTED-ERROR");
    rt_failure_line_free(&line);
    /* The message keeps its further " | " separators. */
    parse_ok("TEST-UNEXPECTED-FAIL | t.js | a | b", &line);
    assert_string_equal(line.test, "t.js");
    assert_string_equal(line.message, "a | b");
    rt_failure_line_free(&line);
    /* Not a failure line. */
    assert_int_equal(rt_failure_line_parse("TEST-PASS | t.js | ok", 18, &line), RT_ENOTFOUND);
    assert_null(line.signature);
    assert_int_equal(rt_failure_line_parse("", 0, &line), RT_ENOTFOUND);
    assert_int_equal(rt_failure_line_parse("PROCESS-CRASHED | t.js | x", 26, &line), RT_ENOTFOUND);
}

/* Issue 17, item 3: crash lines are failure lines, normalised by the same rules, so that a
 * run whose only failure is a crash can be compared with its retriggers. */
static void test_crash_lines_are_compared_like_the_others(void **state)
{
    (void)state;
    rt_failure_line a, b, c;
    parse_ok("12:00:01     INFO - GECKO(1234) | PROCESS-CRASH | dom/media/test/test_a.html | "
             "application crashed [@ mozilla::dom::HTMLMediaElement::Load] pid 4321",
             &a);
    assert_string_equal(a.status, "PROCESS-CRASH");
    assert_string_equal(a.test, "dom/media/test/test_a.html");
    assert_string_equal(a.signature, "PROCESS-CRASH | dom/media/test/test_a.html | application "
                                     "crashed [@ mozilla::dom::HTMLMediaElement::Load] pid <n>");
    /* The same crash in a retrigger, another pid: the same failure. */
    parse_ok("PROCESS-CRASH | dom/media/test/test_a.html | application crashed "
             "[@ mozilla::dom::HTMLMediaElement::Load] pid 99",
             &b);
    assert_true(rt_failure_line_equal(&a, &b));
    /* Another signature is another failure. */
    parse_ok("PROCESS-CRASH | dom/media/test/test_a.html | application crashed [@ mozalloc_abort]",
             &c);
    assert_false(rt_failure_line_equal(&a, &c));
    /* And a signature parses back to itself. */
    rt_failure_line again;
    parse_ok(a.signature, &again);
    assert_string_equal(again.signature, a.signature);
    rt_failure_line_free(&again);
    rt_failure_line_free(&a);
    rt_failure_line_free(&b);
    rt_failure_line_free(&c);
}

/* Issue 30, items 1 and 2: every line of Treeherder's error-summary and log-parser tests, its
 * sample logs and UI tests, and each layout mozcrash and mozlog write
 * (fixtures/treeherder/error_summary_lines.json, sources in its README), with the status, test
 * and message each must give; the signature parses back to itself. */
static void test_treeherder_and_mozcrash_lines_split_as_expected(void **state)
{
    (void)state;
    json_error_t err;
    json_t *root = json_load_file(rt_test_fixture("treeherder/error_summary_lines.json"), 0, &err);
    assert_non_null(root);
    assert_true(json_array_size(root) >= 50);
    size_t index, kept = 0, prefixed = 0, crashes = 0;
    json_t *entry;
    json_array_foreach(root, index, entry)
    {
        const char *text = json_string_value(json_object_get(entry, "line"));
        assert_non_null(text);
        rt_failure_line line;
        int rc = rt_failure_line_parse(text, strlen(text), &line);
        if (json_is_false(json_object_get(entry, "failure_line"))) {
            if (rc != RT_ENOTFOUND) fail_msg("entry %zu kept: %s", index, text);
            continue;
        }
        if (rc != RT_OK) fail_msg("entry %zu dropped (%d): %s", index, rc, text);
        static const char *const parts[] = {"status", "test", "message"};
        const char *got[] = {line.status, line.test, line.message};
        for (int k = 0; k < 3; k++) {
            const char *want = json_string_value(json_object_get(entry, parts[k]));
            assert_non_null(want);
            if (strcmp(got[k], want) != 0)
                fail_msg("entry %zu %s: '%s', expected '%s'", index, parts[k], got[k], want);
        }
        rt_failure_line again;
        parse_ok(line.signature, &again);
        assert_string_equal(again.signature, line.signature);
        assert_string_equal(again.test, line.test);
        rt_failure_line_free(&again);
        kept++;
        prefixed += strncmp(text, line.status, strlen(line.status)) != 0;
        crashes += !strcmp(line.status, RT_FAILURE_LINE_CRASH);
        rt_failure_line_free(&line);
    }
    assert_true(kept >= 40);
    assert_true(prefixed >= 10); /* REFTEST, "596 INFO", mozharness prefixes ... */
    assert_true(crashes >= 20);
    json_decref(root);
}

/* The status is found after a harness's labels in the first field, and they are not part of
 * the failure: another counter or label is the same failure. Anything else before the status
 * is not a failure line. */
static void test_status_after_harness_labels_is_the_same_failure(void **state)
{
    (void)state;
    assert_true(same_failure("REFTEST TEST-UNEXPECTED-FAIL | layout/a.html == layout/a-ref.html | "
                             "image comparison, max difference: 255",
                             "TEST-UNEXPECTED-FAIL | layout/a.html == layout/a-ref.html | image "
                             "comparison, max difference: 255"));
    assert_true(same_failure("596 INFO TEST-UNEXPECTED-FAIL | t/test_a.html | x",
                             "2423 INFO TEST-UNEXPECTED-FAIL | t/test_a.html | x"));
    assert_true(same_failure("08:00:00     INFO - REFTEST TEST-UNEXPECTED-FAIL | a.html | x",
                             "INFO TEST-UNEXPECTED-FAIL | a.html | x"));
    assert_false(same_failure("REFTEST TEST-UNEXPECTED-FAIL | a.html | x",
                              "REFTEST TEST-UNEXPECTED-PASS | a.html | x"));
    static const char *const others[] = {
        "TEST-INFO | t.js | TEST-UNEXPECTED-FAIL | x", /* the status in another field */
        "I/GeckoDump( 730): 110 INFO TEST-UNEXPECTED-FAIL | foo | bar",
        "see TEST-UNEXPECTED-FAIL lines above",
        "REFTEST PROCESS-CRASHED | t.js | x",
        "REFTEST ERROR | a.html | application timed out",
    };
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        rt_failure_line line;
        if (rt_failure_line_parse(others[i], strlen(others[i]), &line) != RT_ENOTFOUND)
            fail_msg("kept: %s", others[i]);
    }
    rt_failure_line line;
    parse_ok("REFTEST TEST-UNEXPECTED-FAIL", &line);
    assert_string_equal(line.signature, "TEST-UNEXPECTED-FAIL");
    rt_failure_line_free(&line);
}

/* Each crash layout of one crash is the same failure, whatever the pid or the dump id; the
 * test is the test and the signature is in the message; another test or signature differs. */
static void test_crash_layouts_of_one_crash_compare_equal(void **state)
{
    (void)state;
    static const char *const same[] = {
        "PROCESS-CRASH | application crashed [@ js::GCMarker::markChildren] | dom/a/test_b.html",
        "PROCESS-CRASH | application crashed [@ js::GCMarker::markChildren] | dom/a/test_b.html ",
        "PROCESS-CRASH | dom/a/test_b.html | application crashed [@ js::GCMarker::markChildren]",
        "REFTEST PROCESS-CRASH | application crashed [@ js::GCMarker::markChildren] | "
        "dom/a/test_b.html",
        "12:00:00  WARNING -  PROCESS-CRASH | dom/a/test_b.html | application crashed "
        "[@ js::GCMarker::markChildren]",
    };
    for (size_t i = 1; i < sizeof same / sizeof same[0]; i++)
        if (!same_failure(same[0], same[i])) fail_msg("differs: %s", same[i]);
    rt_failure_line line;
    parse_ok(same[0], &line);
    assert_string_equal(line.test, "dom/a/test_b.html");
    assert_string_equal(line.message, "application crashed [@ js::GCMarker::markChildren]");
    assert_string_equal(line.signature, "PROCESS-CRASH | dom/a/test_b.html | application crashed "
                                        "[@ js::GCMarker::markChildren]");
    rt_failure_line_free(&line);
    /* No test: a pid or a dump id in its place, in either layout. */
    static const char *const no_test[] = {
        "PROCESS-CRASH | application crashed [@ mozalloc_abort] | pid: 4242",
        "PROCESS-CRASH | application crashed [@ mozalloc_abort] | pid: 77 ",
        "PROCESS-CRASH | pid: 1234 | application crashed [@ mozalloc_abort]",
        "PROCESS-CRASH | 0b6c7a3e-1d2f-4c5b-9a8e-7f6d5c4b3a21 | application crashed "
        "[@ mozalloc_abort]",
        "PROCESS-CRASH | application crashed [@ mozalloc_abort] | "
        "{11111111-2222-3333-4444-555555555555}.dmp",
        "PROCESS-CRASH | application crashed [@ mozalloc_abort]",
    };
    for (size_t i = 0; i < sizeof no_test / sizeof no_test[0]; i++) {
        parse_ok(no_test[i], &line);
        if (strcmp(line.test, "") || strcmp(line.message, "application crashed [@ mozalloc_abort]"))
            fail_msg("%s -> test '%s' message '%s'", no_test[i], line.test, line.message);
        assert_string_equal(line.signature, "PROCESS-CRASH application crashed [@ mozalloc_abort]");
        rt_failure_line again;
        parse_ok(line.signature, &again);
        assert_true(rt_failure_line_equal(&line, &again));
        rt_failure_line_free(&again);
        rt_failure_line_free(&line);
    }
    assert_false(same_failure(same[0], "PROCESS-CRASH | application crashed "
                                       "[@ js::GCMarker::markChildren] | dom/a/test_c.html"));
    assert_false(same_failure(same[0], "PROCESS-CRASH | application crashed [@ mozalloc_abort] | "
                                       "dom/a/test_b.html"));
    /* A module offset names the crash site: it is kept. */
    assert_false(same_failure("PROCESS-CRASH | application crashed [@ libc.so.6 + "
                              "0x0000000000114cf9] | a.html",
                              "PROCESS-CRASH | application crashed [@ libc.so.6 + "
                              "0x0000000000114d00] | a.html"));
    /* The test keeps its reftest pair and label, as every other test does. */
    parse_ok("REFTEST PROCESS-CRASH | application crashed [@ jemalloc_crash] | a.html == b.html",
             &line);
    assert_string_equal(line.test, "a.html == b.html");
    rt_failure_line_free(&line);
}

static void test_hash_is_fnv1a_64_of_the_signature(void **state)
{
    (void)state;
    assert_true(rt_failure_line_hash("", 0) == 0xcbf29ce484222325ULL);
    assert_true(rt_failure_line_hash("a", 1) == 0xaf63dc4c8601ec8cULL);
    rt_failure_line line, copy;
    parse_ok("TEST-UNEXPECTED-FAIL | t.js | x", &line);
    assert_true(line.hash == rt_failure_line_hash(line.signature, strlen(line.signature)));
    char hex[17];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)line.hash);
    assert_string_equal(line.hash_hex, hex);
    assert_int_equal(rt_failure_line_copy(&copy, &line), RT_OK);
    assert_true(rt_failure_line_equal(&line, &copy));
    rt_failure_line_free(&copy);
    rt_failure_line_free(&line);
    rt_failure_line_free(NULL);
}

static void test_very_long_line_is_cut_not_crashed(void **state)
{
    (void)state;
    size_t len = RT_FAILURE_LINE_MAX_INPUT * 2;
    char *text = malloc(len);
    assert_non_null(text);
    memset(text, '7', len);
    memcpy(text, "TEST-UNEXPECTED-FAIL | t.js | ", 30);
    rt_failure_line line;
    assert_int_equal(rt_failure_line_parse(text, len, &line), RT_OK);
    assert_string_equal(line.message, "<n>");
    rt_failure_line_free(&line);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_lines_split_into_status_test_and_message),
        cmocka_unit_test(test_fixture_lines_that_are_not_test_unexpected_are_not_failure_lines),
        cmocka_unit_test(test_same_failure_with_other_pid_address_duration_compares_equal),
        cmocka_unit_test(test_harness_prefixes_ansi_and_spacing_do_not_change_the_signature),
        cmocka_unit_test(test_different_assertion_message_is_a_different_failure),
        cmocka_unit_test(test_each_rule_rewrites_its_example),
        cmocka_unit_test(test_test_path_is_kept_as_is),
        cmocka_unit_test(test_lines_without_message_or_test),
        cmocka_unit_test(test_hash_is_fnv1a_64_of_the_signature),
        cmocka_unit_test(test_crash_lines_are_compared_like_the_others),
        cmocka_unit_test(test_very_long_line_is_cut_not_crashed),
        cmocka_unit_test(test_treeherder_and_mozcrash_lines_split_as_expected),
        cmocka_unit_test(test_status_after_harness_labels_is_the_same_failure),
        cmocka_unit_test(test_crash_layouts_of_one_crash_compare_equal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
