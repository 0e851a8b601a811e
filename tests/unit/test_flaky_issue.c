/* SPDX-License-Identifier: MPL-2.0 */
/* test_flaky_issue.c - the flaky-test issue state machine and its texts
 * (common/core/flaky_issue.h): every transition, the hidden marker (stable, per project and
 * test, only on a first line), figures that changed, UTF-8-safe cuts, Markdown escaping of
 * hostile test names and messages, the GitHub and Bugzilla payloads field by field. */
#include "support/util.h"

#include <stdlib.h>
#include <string.h>

#include "common/core/flaky_issue.h"

#define DAY 86400

static void test_every_transition(void **state)
{
    (void)state;
    const char *why = NULL;
    time_t now = 1714557600, recent = now - 2 * DAY, old = now - 20 * DAY;
    /* no issue */
    assert_int_equal(rt_flaky_decide(RT_FLAKY_NONE, true, true, recent, now, 14, &why),
                     RT_FLAKY_CREATE);
    assert_int_equal(rt_flaky_decide(RT_FLAKY_NONE, false, true, recent, now, 14, &why),
                     RT_FLAKY_NOTHING);
    /* open: updated while flaky and changed, left alone when unchanged */
    assert_int_equal(rt_flaky_decide(RT_FLAKY_OPEN, true, true, recent, now, 14, &why),
                     RT_FLAKY_UPDATE);
    assert_int_equal(rt_flaky_decide(RT_FLAKY_OPEN, true, false, recent, now, 14, &why),
                     RT_FLAKY_NOTHING);
    /* open, no longer flaky but failed recently: kept open (figures follow) */
    assert_int_equal(rt_flaky_decide(RT_FLAKY_OPEN, false, true, recent, now, 14, &why),
                     RT_FLAKY_UPDATE);
    assert_int_equal(rt_flaky_decide(RT_FLAKY_OPEN, false, false, recent, now, 14, &why),
                     RT_FLAKY_NOTHING);
    /* quiet for quiet_days: closed; exactly quiet_days counts as quiet */
    assert_int_equal(rt_flaky_decide(RT_FLAKY_OPEN, false, false, old, now, 14, &why),
                     RT_FLAKY_CLOSE);
    assert_string_equal(why, "no failure within flaky_issue_quiet_days");
    assert_int_equal(rt_flaky_decide(RT_FLAKY_OPEN, false, false, now - 14 * DAY, now, 14, &why),
                     RT_FLAKY_CLOSE);
    assert_int_equal(
        rt_flaky_decide(RT_FLAKY_OPEN, false, false, now - 14 * DAY + 1, now, 14, &why),
        RT_FLAKY_NOTHING);
    assert_int_equal(rt_flaky_decide(RT_FLAKY_OPEN, false, false, 0, now, 14, &why),
                     RT_FLAKY_CLOSE);
    /* closed: reopened when it comes back, else nothing */
    assert_int_equal(rt_flaky_decide(RT_FLAKY_CLOSED, true, true, recent, now, 14, &why),
                     RT_FLAKY_REOPEN);
    assert_int_equal(rt_flaky_decide(RT_FLAKY_CLOSED, false, true, recent, now, 14, &why),
                     RT_FLAKY_NOTHING);
    assert_string_equal(rt_flaky_action_name(RT_FLAKY_REOPEN), "reopen");
}

static void test_marker_is_per_project_and_test_and_only_on_a_first_line(void **state)
{
    (void)state;
    char a[RT_FLAKY_MARKER_SIZE], b[RT_FLAKY_MARKER_SIZE], c[RT_FLAKY_MARKER_SIZE];
    rt_flaky_marker("dask/distributed", "t::x", a);
    rt_flaky_marker("dask/distributed", "t::x", b);
    assert_string_equal(a, b);
    assert_int_equal(strlen(a), strlen("retrig-flaky: ") + 16);
    rt_flaky_marker("dask/distribute", "dt::x", c); /* the same bytes joined: not the same */
    assert_string_not_equal(a, c);
    char line[80];
    snprintf(line, sizeof line, "<!-- %s -->", a);
    assert_true(rt_flaky_marker_matches(line, a));
    snprintf(line, sizeof line, "<!-- %s -->\r", a);
    assert_true(rt_flaky_marker_matches(line, a));
    snprintf(line, sizeof line, "x <!-- %s -->", a);
    assert_false(rt_flaky_marker_matches(line, a));
    snprintf(line, sizeof line, "<!-- %s --> and more", a);
    assert_false(rt_flaky_marker_matches(line, a));
    assert_false(rt_flaky_marker_matches(NULL, a));
    assert_false(rt_flaky_marker_matches("", a));
}

static rt_flaky_figures figures(const char *test, const char *message)
{
    return (rt_flaky_figures){.project = "dask/distributed",
                              .test = test,
                              .window_days = 7,
                              .runs = 40,
                              .failures = 5,
                              .failure_rate = 0.125,
                              .branches = 5,
                              .prs = 4,
                              .main_failures = 1,
                              .push_failure_chance = 0.111,
                              .prs_ran = 9,
                              .prs_failed = 4,
                              .rerun_flips = 2,
                              .flaky = true,
                              .last_failure = 1714557600,
                              .first_failure_time = "2024-05-01T10:00:00Z",
                              .first_failure_branch = "fix-1",
                              .first_failure_revision = "acb5820ced9479c074f688cc328bf03f341a511d",
                              .first_failure_url =
                                  "https://github.com/dask/distributed/actions/runs/1",
                              .message = message};
}

static void test_body_has_the_marker_first_then_the_figures(void **state)
{
    (void)state;
    rt_flaky_figures f = figures("distributed/tests/test_worker.py::test_reconnect",
                                 "asyncio.exceptions.TimeoutError: took 5001ms");
    char marker[RT_FLAKY_MARKER_SIZE];
    rt_flaky_marker(f.project, f.test, marker);
    char *body = rt_flaky_body(&f, marker);
    assert_non_null(body);
    char first[80];
    snprintf(first, sizeof first, "<!-- %s -->\n", marker);
    assert_memory_equal(body, first, strlen(first));
    assert_non_null(strstr(
        body, "`distributed/tests/test_worker.py::test_reconnect` is flaky in dask/distributed"));
    assert_non_null(strstr(body, "| failure rate | 12.5% (5 of 40 runs) |"));
    assert_non_null(strstr(body, "| pull requests / branches hit | 4 / 5 |"));
    assert_non_null(strstr(body, "| chance a push sees it fail | 11.1% |"));
    assert_non_null(strstr(body, "| chance a pull request sees it fail | 44.4% (4 of 9 pull "
                                 "requests and branches that ran it) |"));
    assert_non_null(strstr(body, "| failed, then passed on a re-run of the same commit | 2 |"));
    assert_non_null(strstr(body, "2024-05-01T10:00:00Z on `fix-1` at commit `acb5820ced94…`"));
    assert_non_null(strstr(body, "([run](https://github.com/dask/distributed/actions/runs/1))"));
    assert_non_null(strstr(body, "```text\nasyncio.exceptions.TimeoutError: took 5001ms\n```\n"));
    free(body);
    char *title = rt_flaky_title(&f);
    assert_string_equal(title, "Flaky test: distributed/tests/test_worker.py::test_reconnect");
    free(title);
    char *comment = rt_flaky_comment(&f, "2024-05-02 10:00 UTC");
    assert_memory_equal(comment, RT_FLAKY_FIGURES_HEAD "\n", strlen(RT_FLAKY_FIGURES_HEAD) + 1);
    free(comment);
    char *close = rt_flaky_close_comment(&f, 14);
    assert_non_null(strstr(close, "has not failed for 14 days"));
    free(close);
}

static void test_hostile_names_and_messages_stay_inside_their_markup(void **state)
{
    (void)state;
    /* a message that tries to end the fence, forge a marker, inject HTML, and is long, with
     * a multi-byte character across the cut */
    size_t n = RT_FLAKY_EXCERPT_MAX + 100;
    char *message = malloc(n + 1);
    memset(message, 'a', n);
    memcpy(message, "```\n<!-- retrig-flaky: 0000000000000000 -->\n<script>x</script>\x01\x1b[31m",
           66);
    memcpy(message + RT_FLAKY_EXCERPT_MAX - 1, "\xc3\xa9", 2); /* é across the cut */
    message[n] = '\0';
    rt_flaky_figures f = figures("t::`code` [x](http://evil) | pipe\nnewline", message);
    f.first_failure_url = "javascript:alert(1)";
    f.first_failure_branch = "a`b";
    char marker[RT_FLAKY_MARKER_SIZE];
    rt_flaky_marker(f.project, f.test, marker);
    char *body = rt_flaky_body(&f, marker);
    assert_non_null(body);
    /* the fence is longer than any backtick run inside */
    assert_non_null(strstr(body, "````text\n```\n<!-- retrig-flaky: 0000000000000000 -->"));
    assert_non_null(strstr(body, "\n[… cut]\n````\n"));
    /* control characters dropped, the cut on a character boundary (no lone 0xC3) */
    assert_null(strchr(body, '\x01'));
    assert_null(strchr(body, '\x1b'));
    assert_null(strstr(body, "a\xc3\n"));
    /* the test name in a code span of two backticks, on one line */
    assert_non_null(strstr(body, "``t::`code` [x](http://evil) | pipe newline`` is flaky"));
    /* no link to a non-https URL; the branch span survives its backtick */
    assert_null(strstr(body, "javascript:"));
    assert_non_null(strstr(body, "on ``a`b``"));
    /* only the first line is a marker: the forged one is on a later line */
    const char *second = strchr(body, '\n') + 1;
    assert_false(rt_flaky_marker_matches(second, "retrig-flaky: 0000000000000000"));
    free(body);
    /* the title: one line, bounded, cut on a character */
    char *long_test = malloc(400);
    memset(long_test, 'x', 399);
    memcpy(long_test + RT_FLAKY_TITLE_MAX - strlen("Flaky test: ") - 1, "\xe2\x82\xac", 3);
    long_test[399] = '\0';
    f.test = long_test;
    char *title = rt_flaky_title(&f);
    assert_true(strlen(title) <= RT_FLAKY_TITLE_MAX + strlen("…"));
    assert_null(strchr(title, '\n'));
    assert_non_null(strstr(title, "x…"));
    free(title);
    free(long_test);
    free(message);
}

/* Bidirectional and C1 controls leave no trace in the title and body (a name that reads as
 * another's), and a '|' in a table cell is escaped, so a branch named "@octocat|" stays one
 * code span in its cell: it neither splits the row nor leaves "@octocat" outside the span. */
static void test_bidi_controls_dropped_and_pipes_escaped_in_cells(void **state)
{
    (void)state;
    rt_flaky_figures f = figures("t::test_\xe2\x80\xae"
                                 "cba\xe2\x81\xa6\xc2\x85x\xd8\x9c",
                                 "boom\xe2\x80\x8f");
    f.first_failure_branch = "@octocat|";
    f.fork_branches = 3;
    char marker[RT_FLAKY_MARKER_SIZE];
    rt_flaky_marker(f.project, f.test, marker);
    char *title = rt_flaky_title(&f), *body = rt_flaky_body(&f, marker);
    assert_string_equal(title, "Flaky test: t::test_cbax");
    assert_non_null(strstr(body, "`t::test_cbax` is flaky"));
    assert_non_null(strstr(body, "\nboom\n"));
    assert_non_null(strstr(body, " on `@octocat\\|` at commit "));
    assert_null(strstr(body, "@octocat|"));
    assert_non_null(strstr(body, "(3 of them pull requests from forks"));
    free(title);
    free(body);
}

/* The issue breaks the failures down by variant (matrix job), with each one's OS, Python
 * version and partition, and says when one variant alone fails; a variant's name stays in
 * its table cell. */
static void test_body_breaks_failures_down_by_variant(void **state)
{
    (void)state;
    rt_flaky_variant variants[] = {{"test-results-ubuntu-3.12", 20, 0},
                                   {"test-results-windows-3.12", 20, 5},
                                   {"odd|name", 3, 0}};
    rt_flaky_figures f = figures("t::test_reconnect", NULL);
    f.variants = variants;
    f.nvariants = 3;
    char marker[RT_FLAKY_MARKER_SIZE];
    rt_flaky_marker(f.project, f.test, marker);
    char *body = rt_flaky_body(&f, marker);
    assert_non_null(strstr(body, "It fails on one variant only: `test-results-windows-3.12` "
                                 "(`windows py3.12`), of 3 variants that ran it. It fails on "
                                 "Windows only.\n"));
    assert_non_null(strstr(body, "| variant (matrix job) | OS | Python | partition | failures / "
                                 "runs |\n"));
    assert_non_null(
        strstr(body, "| `test-results-windows-3.12` | `windows` | `3.12` | – | 5 / 20 |\n"));
    assert_non_null(
        strstr(body, "| `test-results-ubuntu-3.12` | `ubuntu` | `3.12` | – | 0 / 20 |\n"));
    assert_non_null(strstr(body, "| `odd\\|name` | – | – | – | 0 / 3 |\n"));
    free(body);
    /* failing on two variants: no "only" */
    variants[0].failures = 1;
    body = rt_flaky_body(&f, marker);
    assert_null(strstr(body, "one variant only"));
    assert_null(strstr(body, "only"));
    free(body);
    assert_null(rt_flaky_only_variant(variants, 1));
}

/* A Firefox CI test's variants are platforms and build types: the table's header says so,
 * and a GitHub project's keeps "matrix job". */
static void test_body_names_what_a_variant_is(void **state)
{
    (void)state;
    rt_flaky_variant variants[] = {{"linux1804-64-qr/debug", 12, 4}, {"linux1804-64-qr/opt", 9, 0}};
    rt_flaky_figures f = figures("dom/tests/browser_a.js", NULL);
    f.variants = variants;
    f.nvariants = 2;
    char marker[RT_FLAKY_MARKER_SIZE];
    rt_flaky_marker(f.project, f.test, marker);
    char *body = rt_flaky_body(&f, marker);
    assert_non_null(strstr(body, "| variant (matrix job) | OS | Python | partition | failures / "
                                 "runs |\n"));
    free(body);
    f.variant_kind = "platform/build type";
    body = rt_flaky_body(&f, marker);
    assert_non_null(strstr(body, "| variant (platform/build type) | failures / runs |\n"));
    assert_non_null(strstr(body, "It fails on one variant only: `linux1804-64-qr/debug`, of 2 "
                                 "variants that ran it.\n"));
    assert_null(strstr(body, "| OS |")); /* a platform is not a matrix job's name */
    free(body);
}

/* "Windows only": every failing variant runs on Windows while variants of another OS ran it
 * and passed (dask/distributed's artifact names); not when a failing variant names no OS,
 * when failures span two OSes, or when no other OS ran it. */
static void test_a_test_failing_on_one_os_only_says_so(void **state)
{
    (void)state;
    rt_flaky_variant variants[] = {{"ubuntu-latest-3.12-default-ci1", 20, 0},
                                   {"windows-latest-3.12-default-ci1", 20, 3},
                                   {"windows-latest-3.11-default-ci1", 20, 2},
                                   {"macos-latest-3.14-default-ci1", 5, 0}};
    assert_string_equal(rt_flaky_only_os(variants, 4), "Windows");
    assert_null(rt_flaky_only_variant(variants, 4));
    rt_flaky_figures f = figures("t::test_reconnect", NULL);
    f.variants = variants;
    f.nvariants = 4;
    char marker[RT_FLAKY_MARKER_SIZE];
    rt_flaky_marker(f.project, f.test, marker);
    char *body = rt_flaky_body(&f, marker);
    assert_non_null(strstr(body, "It fails on Windows only: 2 of the 4 variants that ran it "
                                 "failed, all on Windows.\n"));
    assert_non_null(strstr(body, "| `windows-latest-3.11-default-ci1` | `windows-latest` | "
                                 "`3.11` | `ci1` | 2 / 20 |\n"));
    free(body);
    assert_null(rt_flaky_only_os(variants + 1, 2)); /* Windows alone ran it */
    variants[3].failures = 1;                       /* and macOS fails too */
    assert_null(rt_flaky_only_os(variants, 4));
    variants[3].failures = 0;
    rt_flaky_variant unnamed[] = {{"junit", 20, 3}, {"ubuntu-latest-3.12-default-ci1", 20, 0}};
    assert_null(rt_flaky_only_os(unnamed, 2));
    rt_flaky_variant none[] = {{"windows-latest", 20, 0}, {"ubuntu-latest", 20, 0}};
    assert_null(rt_flaky_only_os(none, 2));
}

static void test_utf8_prefix_never_splits_a_character(void **state)
{
    (void)state;
    assert_int_equal(rt_utf8_prefix("abc", 10), 3);
    assert_int_equal(rt_utf8_prefix("abc", 3), 3);
    assert_int_equal(rt_utf8_prefix("abc", 2), 2);
    assert_int_equal(rt_utf8_prefix("a\xc3\xa9", 2), 1); /* é needs 2 bytes */
    assert_int_equal(rt_utf8_prefix("a\xc3\xa9z", 3), 3);
    assert_int_equal(rt_utf8_prefix("\xf0\x9f\x98\x80!", 3), 0); /* an emoji of 4 */
    assert_int_equal(rt_utf8_prefix("\xf0\x9f\x98\x80!", 4), 4);
}

static void test_figures_change_only_on_what_the_issue_shows(void **state)
{
    (void)state;
    rt_flaky_figures f = figures("t", NULL);
    json_t *a = rt_flaky_figures_json(&f);
    f.failure_rate = 0.2; /* derived: no change on its own */
    json_t *b = rt_flaky_figures_json(&f);
    f.failures = 6;
    json_t *c = rt_flaky_figures_json(&f);
    assert_true(rt_flaky_figures_changed(NULL, a));
    assert_false(rt_flaky_figures_changed(a, b));
    assert_true(rt_flaky_figures_changed(b, c));
    assert_int_equal(json_integer_value(json_object_get(c, "rerun_flips")), 2);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(c, "first_failure"), "branch")), "fix-1");
    json_decref(a);
    json_decref(b);
    json_decref(c);
}

static void test_payloads_field_by_field(void **state)
{
    (void)state;
    json_t *issue = rt_flaky_github_issue("Flaky test: t", "body", "flaky-test");
    assert_string_equal(json_string_value(json_object_get(issue, "title")), "Flaky test: t");
    assert_string_equal(json_string_value(json_object_get(issue, "body")), "body");
    assert_int_equal(json_array_size(json_object_get(issue, "labels")), 1);
    assert_string_equal(json_string_value(json_array_get(json_object_get(issue, "labels"), 0)),
                        "flaky-test");
    assert_int_equal(json_object_size(issue), 3);
    json_decref(issue);

    rt_strlist map = {
        3, {"dom/=Core::DOM: Core & HTML", "testing/=Testing::Mochitest", "*=Testing::General"}};
    char product[64], component[64];
    assert_int_equal(rt_flaky_bugzilla_component(&map, "dom/base/test/t.js", product,
                                                 sizeof product, component, sizeof component),
                     RT_OK);
    assert_string_equal(product, "Core");
    assert_string_equal(component, "DOM: Core & HTML");
    assert_int_equal(rt_flaky_bugzilla_component(&map, "toolkit/x.js", product, sizeof product,
                                                 component, sizeof component),
                     RT_OK);
    assert_string_equal(product, "Testing");
    assert_string_equal(component, "General");
    rt_strlist none = {1, {"dom/=Core::DOM"}};
    assert_int_equal(rt_flaky_bugzilla_component(&none, "toolkit/x.js", product, sizeof product,
                                                 component, sizeof component),
                     RT_ENOTFOUND);
    rt_strlist keywords = {1, {"intermittent-failure"}};
    json_t *bug = rt_flaky_bugzilla_bug("Core", "DOM", "Flaky test: t", "text", &keywords,
                                        "retrig-flaky: 00112233aabbccdd");
    assert_string_equal(json_string_value(json_object_get(bug, "product")), "Core");
    assert_string_equal(json_string_value(json_object_get(bug, "component")), "DOM");
    assert_string_equal(json_string_value(json_object_get(bug, "summary")), "Flaky test: t");
    assert_string_equal(json_string_value(json_object_get(bug, "version")), "unspecified");
    assert_string_equal(json_string_value(json_object_get(bug, "type")), "defect");
    assert_string_equal(json_string_value(json_object_get(bug, "description")), "text");
    assert_string_equal(json_string_value(json_object_get(bug, "op_sys")), "Unspecified");
    assert_string_equal(json_string_value(json_object_get(bug, "platform")), "Unspecified");
    assert_int_equal(json_object_size(bug), 10);
    assert_string_equal(json_string_value(json_object_get(bug, "whiteboard")),
                        "[retrig-flaky: 00112233aabbccdd]");
    assert_string_equal(json_string_value(json_array_get(json_object_get(bug, "keywords"), 0)),
                        "intermittent-failure");
    json_decref(bug);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_transition),
        cmocka_unit_test(test_marker_is_per_project_and_test_and_only_on_a_first_line),
        cmocka_unit_test(test_body_has_the_marker_first_then_the_figures),
        cmocka_unit_test(test_hostile_names_and_messages_stay_inside_their_markup),
        cmocka_unit_test(test_bidi_controls_dropped_and_pipes_escaped_in_cells),
        cmocka_unit_test(test_body_breaks_failures_down_by_variant),
        cmocka_unit_test(test_body_names_what_a_variant_is),
        cmocka_unit_test(test_a_test_failing_on_one_os_only_says_so),
        cmocka_unit_test(test_utf8_prefix_never_splits_a_character),
        cmocka_unit_test(test_figures_change_only_on_what_the_issue_shows),
        cmocka_unit_test(test_payloads_field_by_field),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
