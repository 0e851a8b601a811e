/* SPDX-License-Identifier: MPL-2.0 */
/* test_messages.c - our own queue messages (common/core/messages.h, events.h, and the probe
 * request of culprit_flow.h): each built message parses back to what was built, every example
 * of queue-schemas/examples builds back to itself, and hostile bodies are refused naming the
 * field. With RT_MESSAGES_DUMP_DIR set, every message built here is also written to
 * <dir>/<schema>/<name>.json: tests/scripts/test_queue_schemas.py runs this binary so and
 * validates them against the schemas. */
#include "support/util.h"

#include <dirent.h>
#include <sys/stat.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/culprit_flow.h"
#include "common/core/errorsummary.h"
#include "common/core/events.h"
#include "common/core/messages.h"

static void assert_same_json(const char *a, const char *b)
{
    json_error_t error;
    json_t *x = json_loads(a, 0, &error), *y = json_loads(b, 0, &error);
    assert_non_null(x);
    assert_non_null(y);
    if (!json_equal(x, y)) fail_msg("not the same JSON:\n%s\n%s", a, b);
    json_decref(x);
    json_decref(y);
}

/* Writes a built message for the schema check (see above). */
static void dump(const char *schema, const char *name, const char *text)
{
    const char *dir = getenv("RT_MESSAGES_DUMP_DIR");
    if (!dir || !*dir) return;
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, schema);
    mkdir(path, 0755);
    snprintf(path + strlen(path), sizeof path - strlen(path), "/%s.json", name);
    rt_test_write_file(path, text);
}

static void assert_same_failure(const rt_request_failure *a, const rt_request_failure *b)
{
    assert_string_equal(a->test, b->test);
    if (a->subtest || b->subtest) assert_string_equal(a->subtest, b->subtest);
    assert_string_equal(a->status, b->status);
    assert_string_equal(a->expected, b->expected);
    if (a->message || b->message) assert_string_equal(a->message, b->message);
    assert_string_equal(a->group, b->group);
}

static void test_a_retrigger_request_parses_back_to_what_was_built(void **state)
{
    (void)state;
    char *groups[] = {"dom/a.ini", "dom/b.ini"};
    rt_request_failure failures[] = {{.test = "dom/a.js",
                                      .subtest = "sub \"quoted\"",
                                      .status = "FAIL",
                                      .expected = "PASS",
                                      .message = "a\nb",
                                      .group = "dom/a.ini"},
                                     {.test = "Main app process exited normally",
                                      .status = "CRASH",
                                      .expected = "PASS",
                                      .group = ""}};
    for (int round = 1; round <= 3; round += 2) {
        rt_retrigger_request req = {.set_id = 42,
                                    .project = "autoland",
                                    .revision = "b437ae030825a8ea9fa7a632b1fcb9becbe11f69",
                                    .label = "test-linux1804-64/opt-mochitest-1",
                                    .task_id = "GWxTc8p_RUa5_Xo4RtMiCA",
                                    .run_id = 2,
                                    .task_group_id = "HkX-TbGXQaSX4ucqGMQNBA",
                                    .platform = "linux1804-64",
                                    .task_queue_id = "gecko-t/t-linux-large",
                                    .times = 5,
                                    .round = round,
                                    .requested_at = "2026-12-04T10:15:33.104Z",
                                    .failing_groups = groups,
                                    .nfailing_groups = 2,
                                    .failures = failures,
                                    .nfailures = 2};
        char *text = rt_retrigger_request_build(&req);
        assert_non_null(text);
        dump("retrigger-request", round > 1 ? "built-round-3" : "built-round-1", text);
        /* Round 1 is the default: written only past it, as retrig-classify always wrote. */
        assert_int_equal(strstr(text, "\"round\"") != NULL, round > 1);
        rt_retrigger_request back;
        char reason[RT_MESSAGE_REASON_SIZE] = "";
        assert_int_equal(rt_retrigger_request_parse(text, strlen(text), &back, reason), RT_OK);
        assert_int_equal(back.set_id, 42);
        assert_string_equal(back.project, req.project);
        assert_string_equal(back.revision, req.revision);
        assert_string_equal(back.label, req.label);
        assert_string_equal(back.task_id, req.task_id);
        assert_int_equal(back.run_id, 2);
        assert_string_equal(back.task_group_id, req.task_group_id);
        assert_string_equal(back.platform, req.platform);
        assert_string_equal(back.task_queue_id, req.task_queue_id);
        assert_int_equal(back.times, 5);
        assert_int_equal(back.round, round);
        assert_string_equal(back.requested_at, req.requested_at);
        assert_int_equal(back.nfailing_groups, 2);
        assert_string_equal(back.failing_groups[1], "dom/b.ini");
        assert_int_equal(back.nfailures, 2);
        assert_same_failure(&back.failures[0], &failures[0]);
        assert_same_failure(&back.failures[1], &failures[1]);
        assert_null(back.failures[1].subtest);
        assert_null(back.failures[1].message);
        /* And built again, the same text. */
        char *again = rt_retrigger_request_build(&back);
        assert_string_equal(again, text);
        free(again);
        free(text);
        rt_retrigger_request_free(&back);
    }
}

static void test_a_runs_failures_are_stored_and_read_back_whole(void **state)
{
    (void)state;
    size_t len = 0;
    char *log = rt_test_read_file(
        rt_test_fixture("errorsummary/mochitest-browser-chrome_errorsummary.log"), &len);
    rt_errorsummary es;
    memset(&es, 0, sizeof es);
    assert_int_equal(rt_errorsummary_add(&es, log, len), RT_OK);
    free(log);
    char *groups = NULL, *failures = NULL;
    assert_int_equal(rt_request_lists_build(&es, &groups, &failures), RT_OK);
    rt_retrigger_request req = {0};
    char reason[RT_MESSAGE_REASON_SIZE] = "";
    assert_int_equal(rt_request_lists_read(&req, groups, failures, reason), RT_OK);
    size_t failing = 0;
    for (size_t i = 0; i < es.ngroups; i++)
        if (rt_errorsummary_group_failed(&es, &es.groups[i]))
            assert_string_equal(req.failing_groups[failing++], es.groups[i].name);
    assert_int_equal(req.nfailing_groups, failing);
    assert_true(failing > 0);
    assert_int_equal(req.nfailures, es.nfailures);
    /* A whole request with the fixture's lists, for the schema check. */
    req.set_id = 1;
    snprintf(req.project, sizeof req.project, "autoland");
    snprintf(req.revision, sizeof req.revision, "b437ae030825a8ea9fa7a632b1fcb9becbe11f69");
    snprintf(req.task_id, sizeof req.task_id, "GWxTc8p_RUa5_Xo4RtMiCA");
    snprintf(req.task_group_id, sizeof req.task_group_id, "HkX-TbGXQaSX4ucqGMQNBA");
    snprintf(req.requested_at, sizeof req.requested_at, "2026-12-04T10:15:33Z");
    req.label = strdup("test-linux1804-64/opt-mochitest-browser-chrome-1");
    req.platform = strdup("linux1804-64");
    req.task_queue_id = strdup("gecko-t/t-linux-large");
    req.times = 3;
    char *whole = rt_retrigger_request_build(&req);
    assert_non_null(whole);
    dump("retrigger-request", "built-from-errorsummary", whole);
    free(whole);
    for (size_t i = 0; i < es.nfailures; i++) {
        rt_request_failure f = {.test = es.failures[i].test,
                                .subtest = es.failures[i].subtest,
                                .status = es.failures[i].status,
                                .expected = es.failures[i].expected,
                                .message = es.failures[i].message,
                                .group = es.failures[i].group};
        assert_same_failure(&req.failures[i], &f);
    }
    /* As Postgres hands jsonb back: members reordered, spaces added. */
    assert_int_equal(rt_request_lists_read(&req, "[\"a.ini\", \"b.ini\"]",
                                           "[{\"group\": \"a.ini\", \"message\": null, \"status\": "
                                           "\"FAIL\", \"subtest\": null, \"test\": \"t\", "
                                           "\"expected\": \"PASS\"}]",
                                           reason),
                     RT_OK);
    assert_int_equal(req.nfailing_groups, 2);
    assert_int_equal(req.nfailures, 1);
    assert_string_equal(req.failures[0].test, "t");
    assert_int_equal(rt_request_lists_read(&req, "[]", "{", reason), RT_EPROTO);
    assert_string_equal(reason, "invalid-json:failures");
    assert_int_equal(req.nfailing_groups, 0); /* never half a list */
    rt_retrigger_request_free(&req);
    free(groups);
    free(failures);
    rt_errorsummary_free(&es);
}

#define REQUEST                                                                                    \
    "{\"version\":1,\"set_id\":42,\"project\":\"autoland\",\"revision\":"                          \
    "\"b437ae030825a8ea9fa7a632b1fcb9becbe11f69\",\"label\":\"l\",\"task_id\":"                    \
    "\"GWxTc8p_RUa5_Xo4RtMiCA\",\"run_id\":0,\"task_group_id\":\"HkX-TbGXQaSX4ucqGMQNBA\","        \
    "\"platform\":\"p\",\"task_queue_id\":\"a/b\",\"times\":3,\"requested_at\":"                   \
    "\"2019-06-26T19:36:12.104Z\",\"failing_groups\":[\"a.ini\"],\"failures\":[{\"test\":\"t\","   \
    "\"subtest\":null,\"status\":\"FAIL\",\"expected\":\"PASS\",\"message\":null,\"group\":"       \
    "\"a.ini\"}]}"

/* REQUEST with its first `from` replaced by `to`, parsed: the parser's answer. */
static int request_with(const char *from, const char *to, char *reason)
{
    char body[4096];
    const char *at = strstr(REQUEST, from);
    assert_non_null(at);
    snprintf(body, sizeof body, "%.*s%s%s", (int)(at - REQUEST), REQUEST, to, at + strlen(from));
    rt_retrigger_request r;
    int rc = rt_retrigger_request_parse(body, strlen(body), &r, reason);
    rt_retrigger_request_free(&r);
    return rc;
}

static void test_hostile_lists_in_a_retrigger_request_are_refused(void **state)
{
    (void)state;
    char reason[RT_MESSAGE_REASON_SIZE] = "";
    assert_int_equal(request_with("\"times\"", "\"times\"", reason), RT_OK);
    /* What errorsummaries hold and retrig always published: a group or test of no name. */
    assert_int_equal(request_with("[\"a.ini\"]", "[\"\",\"a.ini\"]", reason), RT_OK);
    assert_int_equal(request_with("\"test\":\"t\"", "\"test\":\"\"", reason), RT_OK);
    static const struct {
        const char *from, *to, *reason;
    } bad[] = {
        {"[\"a.ini\"]", "\"a.ini\"", "wrong-type:failing_groups"},
        {"[\"a.ini\"]", "[\"a.ini\",\"a.ini\"]", "invalid-value:failing_groups"},
        {"[\"a.ini\"]", "[7]", "wrong-type:failing_groups"},
        {"\"failures\":[", "\"failures\":[7,", "wrong-type:failures"},
        {"\"subtest\":null", "\"subtest\":5", "wrong-type:failures.subtest"},
        {"\"status\":\"FAIL\",", "", "missing-field:failures.status"},
        {"\"group\":\"a.ini\"", "\"group\":\"a.ini\",\"extra\":1", "invalid-value:failures"},
        {"\"2019-06-26T19:36:12.104Z\"", "\"2019-06-26 19:36\"", "invalid-value:requested_at"},
        {"\"2019-06-26T19:36:12.104Z\"", "\"2019-06-26T19:36:12\"", "invalid-value:requested_at"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(request_with(bad[i].from, bad[i].to, reason), RT_EPROTO);
        assert_string_equal(reason, bad[i].reason);
    }
    /* More failures than a request carries. */
    char body[16384];
    size_t n = (size_t)snprintf(body, sizeof body, "%.*s", (int)(strstr(REQUEST, "[{") - REQUEST),
                                REQUEST);
    body[n++] = '[';
    for (int i = 0; i <= RT_REQUEST_MAX_FAILURES; i++)
        n += (size_t)snprintf(body + n, sizeof body - n,
                              "%s{\"test\":\"t\",\"subtest\":null,\"status\":\"FAIL\",\"expected\":"
                              "\"PASS\",\"message\":null,\"group\":\"\"}",
                              i ? "," : "");
    snprintf(body + n, sizeof body - n, "]}");
    rt_retrigger_request r;
    assert_int_equal(rt_retrigger_request_parse(body, strlen(body), &r, reason), RT_EPROTO);
    assert_string_equal(reason, "invalid-value:failures");
    rt_retrigger_request_free(&r);
}

static void test_a_decision_event_parses_back_to_what_was_built(void **state)
{
    (void)state;
    rt_event_task_id ids[] = {"kN1HHR__QI6eBNTG-z6yRA", "z4zPvzULSAmqFYM357xurg"};
    rt_decision_event_line lines[] = {
        {.line = "TEST-UNEXPECTED-FAIL | dom/a.js | x", .reproduced_by = ids, .nreproduced_by = 2},
        {.line = "TEST-UNEXPECTED-TIMEOUT | dom/b.js | y"}};
    rt_decision_event ev = {.set_id = 7,
                            .project = "autoland",
                            .revision = "b437ae030825a8ea9fa7a632b1fcb9becbe11f69",
                            .label = "test-linux1804-64/opt-mochitest-1",
                            .platform = "linux1804-64",
                            .verdict = "regression",
                            .reason = "reproduced",
                            .original_task_id = "GWxTc8p_RUa5_Xo4RtMiCA",
                            .retrigger_task_ids = ids,
                            .nretrigger_task_ids = 2,
                            .lines = lines,
                            .nlines = 2,
                            .threshold = 2,
                            .decided_at = "2026-12-04T10:15:33.530Z"};
    char *text = rt_decision_event_build(&ev);
    assert_non_null(text);
    dump("decision-event", "built-regression", text);
    rt_decision_event back;
    char reason[RT_MESSAGE_REASON_SIZE] = "";
    assert_int_equal(rt_decision_event_parse(text, strlen(text), &back, reason), RT_OK);
    assert_int_equal(back.set_id, 7);
    assert_string_equal(back.label, ev.label);
    assert_string_equal(back.platform, ev.platform);
    assert_string_equal(back.verdict, "regression");
    assert_string_equal(back.reason, "reproduced");
    assert_string_equal(back.original_task_id, ev.original_task_id);
    assert_int_equal(back.nretrigger_task_ids, 2);
    assert_string_equal(back.retrigger_task_ids[1], ids[1]);
    assert_int_equal(back.nlines, 2);
    assert_string_equal(back.lines[0].line, lines[0].line);
    assert_int_equal(back.lines[0].nreproduced_by, 2);
    assert_string_equal(back.lines[0].reproduced_by[0], ids[0]);
    assert_int_equal(back.lines[1].nreproduced_by, 0);
    assert_int_equal(back.threshold, 2);
    assert_string_equal(back.decided_at, ev.decided_at);
    char *again = rt_decision_event_build(&back);
    assert_string_equal(again, text);
    free(again);
    rt_decision_event_free(&back);

    /* Hostile copies are refused naming the field. */
    static const struct {
        const char *from, *to, *reason;
    } bad[] = {
        {"\"regression\"", "\"flaky\"", "invalid-value:verdict"},
        {"\"retrigger_task_ids\":[\"kN1HHR__QI6eBNTG-z6yRA\"",
         "\"retrigger_task_ids\":[\"z4zPvzULSAmqFYM357xurg\"", "invalid-value:retrigger_task_ids"},
        {"\"reproduced_by\":[\"kN1HHR__QI6eBNTG-z6yRA\",\"z4zPvzULSAmqFYM357xurg\"]",
         "\"reproduced_by\":3", "wrong-type:reproduced_by"},
        {"\"threshold\":2", "\"threshold\":21", "invalid-value:threshold"},
        {"\"version\":1", "\"version\":1,\"extra\":true", "unknown-field:body"},
        {"\"line\":\"TEST-UNEXPECTED-FAIL | dom/a.js | x\"", "\"line\":\"\"", "invalid-value:line"},
        {"\"decided_at\":\"2026-12-04T10:15:33.530Z\"", "\"decided_at\":\"today\"",
         "invalid-value:decided_at"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char body[4096];
        const char *at = strstr(text, bad[i].from);
        assert_non_null(at);
        snprintf(body, sizeof body, "%.*s%s%s", (int)(at - text), text, bad[i].to,
                 at + strlen(bad[i].from));
        assert_int_equal(rt_decision_event_parse(body, strlen(body), &back, reason), RT_EPROTO);
        assert_string_equal(reason, bad[i].reason);
        rt_decision_event_free(&back);
    }
    free(text);
}

static void test_a_culprit_event_parses_back_to_what_was_built(void **state)
{
    (void)state;
    for (int found = 0; found <= 1; found++) {
        rt_culprit_event ev = {.set_id = 3,
                               .project = "autoland",
                               .revision = "b437ae030825a8ea9fa7a632b1fcb9becbe11f69",
                               .label = "test-linux1804-64/opt-mochitest-1",
                               .status = "stopped",
                               .reason = "budget-exhausted",
                               .range_first = "0123456789abcdef0123456789abcdef01234567",
                               .range_last = "b437ae030825a8ea9fa7a632b1fcb9becbe11f69",
                               .rounds = 2,
                               .pushes_probed = 3,
                               .jobs_spent = 14};
        if (found) {
            snprintf(ev.status, sizeof ev.status, "found");
            snprintf(ev.reason, sizeof ev.reason, "bisected");
            ev.found = true;
            snprintf(ev.culprit.revision, sizeof ev.culprit.revision, "%s", ev.range_first);
            ev.culprit.author = "someone@example.com";
            ev.culprit.url = "https://treeherder.mozilla.org/jobs?repo=autoland";
            /* pushlog_id 0: its decision task is not indexed, null */
        }
        char *text = rt_culprit_event_build(&ev);
        assert_non_null(text);
        dump("culprit-event", found ? "built-found" : "built-stopped", text);
        assert_int_equal(strstr(text, "\"pushlog_id\":null") != NULL, found);
        assert_int_equal(strstr(text, "\"culprit\":null") != NULL, !found);
        rt_culprit_event back;
        char reason[RT_MESSAGE_REASON_SIZE] = "";
        assert_int_equal(rt_culprit_event_parse(text, strlen(text), &back, reason), RT_OK);
        assert_int_equal(back.found, found);
        assert_string_equal(back.status, ev.status);
        assert_string_equal(back.range_first, ev.range_first);
        assert_string_equal(back.range_last, ev.range_last);
        assert_int_equal(back.jobs_spent, 14);
        if (found) assert_string_equal(back.culprit.url, ev.culprit.url);
        char *again = rt_culprit_event_build(&back);
        assert_string_equal(again, text);
        free(again);
        rt_culprit_event_free(&back);
        free(text);
    }
    static const char *const bad[][2] = {
        {"{\"version\":1,\"kind\":\"decision\"}", "invalid-value:kind"},
        {"{\"version\":1,\"kind\":\"culprit\",\"set_id\":1,\"project\":\"autoland\",\"revision\":"
         "\"b437ae030825a8ea9fa7a632b1fcb9becbe11f69\",\"label\":\"l\",\"status\":\"searching\"}",
         "invalid-value:status"},
        {"{\"version\":1,\"kind\":\"culprit\",\"set_id\":1,\"project\":\"autoland\",\"revision\":"
         "\"b437ae030825a8ea9fa7a632b1fcb9becbe11f69\",\"label\":\"l\",\"status\":\"stopped\","
         "\"reason\":\"x\",\"culprit\":null,\"range\":[\"b437ae030825a8ea9fa7a632b1fcb9becbe11f69"
         "\"]}",
         "invalid-value:range"},
        {"[]", "wrong-type:body"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        rt_culprit_event back;
        char reason[RT_MESSAGE_REASON_SIZE] = "";
        assert_int_equal(rt_culprit_event_parse(bad[i][0], strlen(bad[i][0]), &back, reason),
                         RT_EPROTO);
        assert_string_equal(reason, bad[i][1]);
        rt_culprit_event_free(&back);
    }
}

/* The example's message parsed by our parser and built again: NULL when refused. */
static char *rebuilt(const char *schema, const char *body, char *reason)
{
    size_t len = strlen(body);
    char *text = NULL;
    if (!strcmp(schema, "retrigger-request")) {
        rt_retrigger_request m;
        if (rt_retrigger_request_parse(body, len, &m, reason) == RT_OK)
            text = rt_retrigger_request_build(&m);
        rt_retrigger_request_free(&m);
    } else if (!strcmp(schema, "decide-request")) {
        rt_decide_request m;
        if (rt_decide_request_parse(body, len, &m, reason) == RT_OK)
            text = rt_decide_request_build(&m);
    } else if (!strcmp(schema, "decision-event")) {
        rt_decision_event m;
        if (rt_decision_event_parse(body, len, &m, reason) == RT_OK)
            text = rt_decision_event_build(&m);
        rt_decision_event_free(&m);
    } else if (!strcmp(schema, "culprit-event")) {
        rt_culprit_event m;
        if (rt_culprit_event_parse(body, len, &m, reason) == RT_OK)
            text = rt_culprit_event_build(&m);
        rt_culprit_event_free(&m);
    } else if (!strcmp(schema, "culprit-probe-request")) {
        rt_culprit_probe_request m;
        if (rt_culprit_probe_request_parse(body, len, &m, reason) == RT_OK)
            text = rt_culprit_probe_request_build(&m);
    }
    return text;
}

static void test_every_example_of_ours_builds_back_to_itself(void **state)
{
    (void)state;
    static const char *const ours[] = {"retrigger-request", "decide-request", "decision-event",
                                       "culprit-event", "culprit-probe-request"};
    for (size_t s = 0; s < sizeof ours / sizeof *ours; s++) {
        char dir[1024];
        snprintf(dir, sizeof dir, "%s", rt_test_source("queue-schemas/examples"));
        snprintf(dir + strlen(dir), sizeof dir - strlen(dir), "/%s", ours[s]);
        DIR *d = opendir(dir);
        assert_non_null(d);
        int seen = 0;
        for (struct dirent *entry; (entry = readdir(d));) {
            if (!strstr(entry->d_name, ".json")) continue;
            char path[2048];
            snprintf(path, sizeof path, "%s/%s", dir, entry->d_name);
            char *body = rt_test_read_file(path, NULL);
            char reason[RT_MESSAGE_REASON_SIZE] = "";
            char *text = rebuilt(ours[s], body, reason);
            if (!text) fail_msg("%s/%s refused: %s", ours[s], entry->d_name, reason);
            assert_same_json(text, body);
            char name[300];
            snprintf(name, sizeof name, "example-%.*s", (int)(strlen(entry->d_name) - 5),
                     entry->d_name);
            dump(ours[s], name, text);
            free(text);
            free(body);
            seen++;
        }
        closedir(d);
        assert_true(seen >= 1);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_retrigger_request_parses_back_to_what_was_built),
        cmocka_unit_test(test_a_runs_failures_are_stored_and_read_back_whole),
        cmocka_unit_test(test_hostile_lists_in_a_retrigger_request_are_refused),
        cmocka_unit_test(test_a_decision_event_parses_back_to_what_was_built),
        cmocka_unit_test(test_a_culprit_event_parses_back_to_what_was_built),
        cmocka_unit_test(test_every_example_of_ours_builds_back_to_itself),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
