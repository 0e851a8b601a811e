/* SPDX-License-Identifier: MPL-2.0 */
/* test_culprit_flow.c - the production rules around the bisection (common/core/culprit_flow.h):
 * what a Treeherder job shows, a push's evidence from its jobs, where the window starts, the
 * no-candidate shortcut, issue 24's integration scenario played through the rules (a window
 * of N-7 .. N, culprit N-3: three probes), the probe request message, and the exactly-once
 * rule of retrig-retrigger for every row a request may find, and when a probe's runs are
 * overdue. */
#include "support/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/culprit_flow.h"
#include "common/core/messages.h"

static const rt_culprit_model flaky = {.confidence = 0.95,
                                       .threshold = 2,
                                       .reproduction_rate = 0.75,
                                       .history_runs = 0,
                                       .history_failures = 0};

static void test_job_kinds(void **state)
{
    (void)state;
    assert_int_equal(rt_culprit_job_kind_of("completed", "success"), RT_CJOB_PASSED);
    assert_int_equal(rt_culprit_job_kind_of("completed", "testfailed"), RT_CJOB_FAILED);
    assert_int_equal(rt_culprit_job_kind_of("completed", "busted"), RT_CJOB_FAILED);
    assert_int_equal(rt_culprit_job_kind_of("completed", "exception"), RT_CJOB_NONE);
    assert_int_equal(rt_culprit_job_kind_of("completed", "retry"), RT_CJOB_NONE);
    assert_int_equal(rt_culprit_job_kind_of("completed", "usercancel"), RT_CJOB_NONE);
    assert_int_equal(rt_culprit_job_kind_of("completed", NULL), RT_CJOB_NONE);
    assert_int_equal(rt_culprit_job_kind_of("running", "unknown"), RT_CJOB_PENDING);
    assert_int_equal(rt_culprit_job_kind_of("pending", "unknown"), RT_CJOB_PENDING);
    assert_int_equal(rt_culprit_job_kind_of(NULL, NULL), RT_CJOB_PENDING);
}

static void test_a_push_tally(void **state)
{
    (void)state;
    rt_culprit_push p;
    /* A first push that ran once and passed; nothing asked of it. */
    rt_culprit_tally t = {.passed = 1};
    rt_culprit_tally_push(&t, 1, 1, 0, false, &p);
    assert_int_equal(p.runs, 1);
    assert_int_equal(p.reproduced, 0);
    assert_int_equal(p.pending, 0);
    /* Five asked of a skipped push; Treeherder lists two, one running. */
    t = (rt_culprit_tally){.reproduced = 1, .pending = 1};
    rt_culprit_tally_push(&t, 0, 2, 5, false, &p);
    assert_int_equal(p.runs, 1);
    assert_int_equal(p.reproduced, 1);
    assert_int_equal(p.pending, 4); /* one running, three not listed yet */
    /* The same once the request is too old: only the running one is waited for. */
    rt_culprit_tally_push(&t, 0, 2, 5, true, &p);
    assert_int_equal(p.pending, 1);
    /* An exception gives no evidence; reruns beyond those asked do not make pending negative. */
    t = (rt_culprit_tally){.passed = 3, .other = 2, .none = 2};
    rt_culprit_tally_push(&t, 0, 7, 5, false, &p);
    assert_int_equal(p.runs, 5);
    assert_int_equal(p.pending, 0);
    /* Counts are capped. */
    t = (rt_culprit_tally){.passed = RT_CULPRIT_MAX_RUNS, .reproduced = 5};
    rt_culprit_tally_push(&t, 0, 0, 0, false, &p);
    assert_int_equal(p.runs, RT_CULPRIT_MAX_RUNS);
    assert_true(p.reproduced <= p.runs);
}

static void test_a_probe_whose_runs_never_come_is_overdue_after_the_deadline(void **state)
{
    (void)state;
    const long long asked = 1714557600; /* 2024-05-01T10:00:00Z */
    const char *at = "2024-05-01T10:00:00Z";
    /* Waiting for runs none of which is listed: not late before 180 minutes, then they
     * never came. */
    assert_null(rt_culprit_probe_late(6, 6, at, asked, 180));
    assert_null(rt_culprit_probe_late(6, 6, at, asked + 180 * 60 - 1, 180));
    assert_string_equal(rt_culprit_probe_late(6, 6, at, asked + 180 * 60, 180),
                        RT_CULPRIT_PROBE_TIMEOUT);
    assert_string_equal(rt_culprit_probe_late(1, 1, "2024-05-01T10:00:00.250Z", asked + 3600, 60),
                        "probe-timeout");
    /* One run of six never listed: it never came, even though the others did. */
    assert_string_equal(rt_culprit_probe_late(3, 1, at, asked + 180 * 60, 180), "probe-timeout");
    /* Nothing left to wait for: never late, however old the request. */
    assert_null(rt_culprit_probe_late(0, 0, at, asked + 86400 * 30, 180));
    /* A request time that is not one: late, the request cannot be sent again. */
    assert_string_equal(rt_culprit_probe_late(6, 0, NULL, asked, 180), "probe-timeout");
    assert_string_equal(rt_culprit_probe_late(6, 0, "yesterday", asked, 180), "probe-timeout");
    assert_string_equal(rt_culprit_probe_late(6, 0, "2024-05-01T10:00:00", asked, 180),
                        "probe-timeout");
}

static void test_a_slow_probe_is_waited_for_longer_than_one_that_never_came(void **state)
{
    (void)state;
    const long long asked = 1714557600; /* 2024-05-01T10:00:00Z */
    const char *at = "2024-05-01T10:00:00Z";
    /* Every run listed, some not finished: waited for past the deadline, up to
     * RT_CULPRIT_SLOW_FACTOR deadlines. */
    assert_null(rt_culprit_probe_late(2, 0, at, asked + 180 * 60, 180));
    assert_null(rt_culprit_probe_late(2, 0, at, asked + 3 * 180 * 60 - 1, 180));
    assert_string_equal(rt_culprit_probe_late(2, 0, at, asked + 3 * 180 * 60, 180),
                        RT_CULPRIT_PROBE_TOO_SLOW);
    assert_string_equal(RT_CULPRIT_PROBE_TOO_SLOW, "probe-too-slow");
    assert_int_equal(RT_CULPRIT_SLOW_FACTOR, 3);
    /* What counts as not listed. */
    assert_int_equal(rt_culprit_unlisted(10, 5, 12), 3);
    assert_int_equal(rt_culprit_unlisted(10, 5, 15), 0);
    assert_int_equal(rt_culprit_unlisted(10, 5, 40), 0);
    assert_int_equal(rt_culprit_unlisted(2000000000, 2000000000, 0), RT_CULPRIT_MAX_RUNS);
}

static void test_where_the_window_starts(void **state)
{
    (void)state;
    rt_culprit_push skipped = {0}, passed = {.runs = 1}, other = {.runs = 2},
                    reproduced = {.runs = 2, .reproduced = 1}, pending = {.pending = 1};
    assert_int_equal(rt_culprit_walk_step(&skipped, 0, 20), RT_WALK_MORE);
    assert_int_equal(rt_culprit_walk_step(&passed, 0, 20), RT_WALK_FIRST);
    assert_int_equal(rt_culprit_walk_step(&other, 3, 20), RT_WALK_FIRST); /* failed differently */
    assert_int_equal(rt_culprit_walk_step(&reproduced, 3, 20), RT_WALK_MORE);
    assert_int_equal(rt_culprit_walk_step(&pending, 3, 20), RT_WALK_MORE);
    /* At most max_depth candidates: the push max_depth + 1 back is the first, whatever it
     * showed. */
    assert_int_equal(rt_culprit_walk_step(&skipped, 19, 20), RT_WALK_MORE);
    assert_int_equal(rt_culprit_walk_step(&skipped, 20, 20), RT_WALK_FIRST);
    assert_int_equal(rt_culprit_walk_step(&reproduced, 1, 1), RT_WALK_FIRST);
}

static rt_culprit_result flow_next(const rt_culprit_push *pushes, size_t n, long jobs_left)
{
    rt_culprit_input in = {.pushes = pushes, .npushes = n, .model = flaky, .jobs_left = jobs_left};
    rt_culprit_result r;
    assert_int_equal(rt_culprit_flow_next(&in, &r), RT_OK);
    return r;
}

static void test_no_candidate_is_found_at_no_cost(void **state)
{
    (void)state;
    /* The label ran once on N-1 and passed: N is the culprit, nothing is probed. */
    rt_culprit_push w[2] = {{.runs = 1}, {.runs = 4, .reproduced = 4}};
    rt_culprit_result r = flow_next(w, 2, 120);
    assert_int_equal(r.status, RT_CULPRIT_FOUND);
    assert_int_equal(r.culprit, 1);
    assert_int_equal(r.probe, -1);
    assert_int_equal(r.confirm, -1);
    assert_string_equal(r.reason, "no-candidate");
    /* It failed differently there: the same. */
    w[0] = (rt_culprit_push){.runs = 2};
    r = flow_next(w, 2, 0);
    assert_int_equal(r.status, RT_CULPRIT_FOUND);
    /* It reproduced there twice: the culprit is that push or an earlier one. */
    w[0] = (rt_culprit_push){.runs = 2, .reproduced = 2};
    r = flow_next(w, 2, 120);
    assert_int_equal(r.status, RT_CULPRIT_BEFORE_WINDOW);
    /* Once, of the threshold's two: rt_culprit_next's answer, more runs there. */
    w[0] = (rt_culprit_push){.runs = 1, .reproduced = 1};
    r = flow_next(w, 2, 120);
    assert_int_equal(r.status, RT_CULPRIT_SEARCHING);
    assert_int_equal(r.probe, 0);
    /* No evidence on the window's first push (the walk hit max_depth): the bisection probes
     * it, as rt_culprit_next does. */
    w[0] = (rt_culprit_push){0};
    r = flow_next(w, 2, 120);
    assert_int_equal(r.status, RT_CULPRIT_SEARCHING);
    assert_int_equal(r.probe, 0);
    /* Longer windows are rt_culprit_next's. */
    rt_culprit_push w3[3] = {{.runs = 1}, {0}, {.runs = 4, .reproduced = 4}};
    rt_culprit_input in = {.pushes = w3, .npushes = 3, .model = flaky, .jobs_left = 120};
    rt_culprit_result a, b;
    assert_int_equal(rt_culprit_flow_next(&in, &a), RT_OK);
    assert_int_equal(rt_culprit_next(&in, &b), RT_OK);
    assert_memory_equal(&a, &b, sizeof a);
    /* Invalid input stays refused. */
    in.npushes = 1;
    assert_int_equal(rt_culprit_flow_next(&in, &a), RT_EINVAL);
}

/* The integration test's window: N-7 ran once and passed, N-6 .. N-1 skipped, N failing with
 * its four runs reproducing; the truth is N-3. Every probe's runs reproduce on a bad push
 * and pass on a good one. */
static void test_the_integration_scenario_takes_three_probes(void **state)
{
    (void)state;
    rt_culprit_push w[8] = {{.runs = 1}};
    w[7] = (rt_culprit_push){.runs = 4, .reproduced = 4};
    rt_culprit_model model = flaky;
    model.reproduction_rate = rt_culprit_reproduction_rate(4, 4);
    const long culprit = 4; /* N-3 */
    long probes[8], jobs = 0;
    int nprobes = 0;
    for (int step = 0; step < 10; step++) {
        rt_culprit_input in = {.pushes = w, .npushes = 8, .model = model, .jobs_left = 120 - jobs};
        rt_culprit_result r;
        assert_int_equal(rt_culprit_flow_next(&in, &r), RT_OK);
        if (r.status != RT_CULPRIT_SEARCHING) {
            assert_int_equal(r.status, RT_CULPRIT_FOUND);
            assert_int_equal(r.culprit, culprit);
            break;
        }
        assert_true(r.probe > 0 && r.probe < 7);
        assert_int_equal(r.confirm, -1);
        probes[nprobes++] = r.probe;
        jobs += r.times;
        w[r.probe].runs += r.times;
        if (r.probe >= culprit) w[r.probe].reproduced += r.times;
        assert_string_equal(
            rt_culprit_push_class_name(&w[r.probe], false, false, &model, 8, NULL, NULL),
            r.probe >= culprit ? "bad" : "good");
    }
    assert_int_equal(nprobes, 3);
    assert_int_equal(probes[0], 4); /* N-3 */
    assert_int_equal(probes[1], 2); /* N-5 */
    assert_int_equal(probes[2], 3); /* N-4 */
    assert_int_equal(jobs, 15);
    assert_string_equal(rt_culprit_push_class_name(&w[0], true, false, &model, 8, NULL, NULL),
                        "open");
    assert_string_equal(rt_culprit_push_class_name(&w[7], false, true, &model, 8, NULL, NULL),
                        "bad");
    assert_string_equal(rt_culprit_push_class_name(&w[5], false, false, &model, 8, NULL, NULL),
                        "open");
}

static void test_globs_become_like_patterns(void **state)
{
    (void)state;
    char out[64];
    assert_true(rt_culprit_glob_like("autoland", out, sizeof out));
    assert_string_equal(out, "autoland");
    assert_true(rt_culprit_glob_like("mozilla-*", out, sizeof out));
    assert_string_equal(out, "mozilla-%");
    assert_true(rt_culprit_glob_like("a?c_d%e\\f[x]", out, sizeof out));
    assert_string_equal(out, "a_c\\_d\\%e\\\\f[x]");
    assert_true(rt_culprit_glob_like("", out, sizeof out));
    assert_string_equal(out, "");
    assert_false(rt_culprit_glob_like("autoland", out, 8));
    assert_true(rt_culprit_glob_like("autolan", out, 8));
    assert_false(rt_culprit_glob_like("abcdef_", out, 8)); /* the escape does not fit */
}

static const char PROBE[] =
    "{\"version\":1,\"kind\":\"culprit-probe\",\"set_id\":42,\"project\":\"autoland\","
    "\"revision\":\"0123456789abcdef0123456789abcdef01234567\","
    "\"label\":\"test-linux1804-64/opt-mochitest-browser-chrome-1\","
    "\"platform\":\"linux1804-64\",\"times\":5,\"attempt\":1,\"round\":2,\"confirm\":false,"
    "\"requested_at\":\"2024-05-01T10:00:00.123Z\"}";

static int parse_with(const char *from, const char *to, char *reason)
{
    char body[2048];
    const char *at = strstr(PROBE, from);
    assert_non_null(at);
    snprintf(body, sizeof body, "%.*s%s%s", (int)(at - PROBE), PROBE, to, at + strlen(from));
    rt_culprit_probe_request r;
    return rt_culprit_probe_request_parse(body, strlen(body), &r, reason);
}

static void test_the_probe_request(void **state)
{
    (void)state;
    rt_culprit_probe_request r;
    char reason[RT_MESSAGE_REASON_SIZE] = "";
    assert_int_equal(rt_culprit_probe_request_parse(PROBE, strlen(PROBE), &r, reason), RT_OK);
    assert_int_equal(r.set_id, 42);
    assert_string_equal(r.project, "autoland");
    assert_string_equal(r.revision, "0123456789abcdef0123456789abcdef01234567");
    assert_string_equal(r.label, "test-linux1804-64/opt-mochitest-browser-chrome-1");
    assert_string_equal(r.platform, "linux1804-64");
    assert_int_equal(r.times, 5);
    assert_int_equal(r.attempt, 1);
    assert_int_equal(r.round, 2);
    assert_false(r.confirm);
    /* Built again, it parses to the same. */
    char *built = rt_culprit_probe_request_build(&r);
    assert_non_null(built);
    rt_culprit_probe_request again;
    assert_int_equal(rt_culprit_probe_request_parse(built, strlen(built), &again, reason), RT_OK);
    assert_memory_equal(&r, &again, sizeof r);
    free(built);

    /* Another message of the queue (a retrigger request) is not a probe request. */
    const char *retrigger = "{\"version\":1,\"set_id\":1,\"task_id\":\"x\"}";
    assert_int_equal(rt_culprit_probe_request_parse(retrigger, strlen(retrigger), &r, reason),
                     RT_ENOTFOUND);
    assert_int_equal(rt_culprit_probe_request_parse("[1]", 3, &r, reason), RT_ENOTFOUND);
    assert_int_equal(rt_culprit_probe_request_parse("{", 1, &r, reason), RT_ENOTFOUND);

    /* Refused, with the field named. */
    static const struct {
        const char *from, *to, *reason;
    } bad[] = {
        {"\"times\":5", "\"times\":0", "invalid-value:times"},
        {"\"times\":5", "\"times\":101", "invalid-value:times"},
        {"\"times\":5", "\"times\":\"5\"", "wrong-type:times"},
        {"\"attempt\":1", "\"attempt\":0", "invalid-value:attempt"},
        {"\"kind\":\"culprit-probe\"", "\"kind\":\"backfill\"", "invalid-value:kind"},
        {"\"version\":1", "\"version\":2", "invalid-value:version"},
        {"\"revision\":\"0123456789abcdef0123456789abcdef01234567\"",
         "\"revision\":\"0123456789ab\"", "invalid-value:revision"},
        {"\"revision\":\"0123456789abcdef0123456789abcdef01234567\"",
         "\"revision\":\"0123456789ABCDEF0123456789abcdef01234567\"", "invalid-value:revision"},
        {"\"project\":\"autoland\"", "\"project\":\"../etc\"", "invalid-value:project"},
        {"\"confirm\":false", "\"confirm\":0", "wrong-type:confirm"},
        {",\"confirm\":false", "", "missing-field:confirm"},
        {"\"requested_at\":\"2024-05-01T10:00:00.123Z\"", "\"requested_at\":\"yesterday\"",
         "invalid-value:requested_at"},
        {"\"round\":2", "\"round\":2,\"extra\":1", "unknown-field:"},
        {"\"round\":2", "\"round\":2,\"round\":3", ""}, /* duplicate member */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        reason[0] = '\0';
        int rc = parse_with(bad[i].from, bad[i].to, reason);
        if (!bad[i].reason[0]) {
            assert_int_equal(rc, RT_ENOTFOUND); /* not an object we can read at all */
            continue;
        }
        if (rc != RT_EPROTO || strcmp(reason, bad[i].reason))
            fail_msg("case %zu: rc %d reason '%s', want '%s'", i, rc, reason, bad[i].reason);
    }
    /* A label that is not a valid label. */
    assert_int_equal(parse_with("\"label\":\"test-linux1804-64/opt-mochitest-browser-chrome-1\"",
                                "\"label\":\"a\\u0001b\"", reason),
                     RT_EPROTO);
    assert_string_equal(reason, "invalid-value:label");
    /* Nothing invalid is built. */
    r.times = 0;
    assert_null(rt_culprit_probe_request_build(&r));
    assert_null(rt_culprit_probe_request_build(NULL));
}

static rt_culprit_probe_action act(bool exists, int row_attempt, const char *row_state, int calls,
                                   long long since_ms, int attempt)
{
    rt_culprit_probe_row row = {exists, row_attempt, row_state, calls, since_ms};
    return rt_culprit_probe_action_for(&row, attempt, 35000);
}

static void test_exactly_once(void **state)
{
    (void)state;
    /* The first request of a push. */
    assert_int_equal(act(false, 0, NULL, 0, 0, 1), RT_PROBE_CREATE);
    assert_int_equal(act(false, 0, NULL, 0, 0, 2), RT_PROBE_STALE);
    assert_int_equal(act(false, 0, NULL, 0, 0, 0), RT_PROBE_STALE);
    /* Its redelivery: the intent is there, no call yet (the worker died before calling). */
    assert_int_equal(act(true, 1, "intent", 0, 10, 1), RT_PROBE_CALL);
    /* A call in flight, or one that may still reach Taskcluster: wait. */
    assert_int_equal(act(true, 1, "intent", 1, 1000, 1), RT_PROBE_WAIT);
    assert_int_equal(act(true, 1, "intent", 1, 34999, 1), RT_PROBE_WAIT);
    /* Past the call's time: look the action task up before calling again. */
    assert_int_equal(act(true, 1, "intent", 1, 35000, 1), RT_PROBE_LOOK_UP);
    assert_int_equal(act(true, 1, "intent", 3, 90000, 1), RT_PROBE_LOOK_UP);
    /* Settled before: nothing to do. */
    assert_int_equal(act(true, 1, "triggered", 1, 0, 1), RT_PROBE_DONE);
    assert_int_equal(act(true, 1, "dry-run", 0, 0, 1), RT_PROBE_DONE);
    assert_int_equal(act(true, 1, "done", 1, 0, 1), RT_PROBE_DONE);
    assert_int_equal(act(true, 1, "failed", 1, 0, 1), RT_PROBE_DONE);
    assert_int_equal(act(true, 2, "intent", 0, 0, 1), RT_PROBE_DONE); /* an old copy */
    /* More runs on the same push: once the previous attempt is done. */
    assert_int_equal(act(true, 1, "done", 1, 0, 2), RT_PROBE_NEXT);
    assert_int_equal(act(true, 1, "dry-run", 0, 0, 2), RT_PROBE_NEXT);
    assert_int_equal(act(true, 1, "triggered", 1, 0, 2), RT_PROBE_WAIT);
    assert_int_equal(act(true, 1, "intent", 1, 0, 2), RT_PROBE_WAIT);
    assert_int_equal(act(true, 1, "failed", 1, 0, 2), RT_PROBE_DONE);
    assert_int_equal(act(true, 2, "intent", 0, 0, 2), RT_PROBE_CALL);
    assert_int_equal(act(true, 1, "done", 1, 0, 3), RT_PROBE_STALE);
    assert_string_equal(rt_culprit_probe_action_name(RT_PROBE_LOOK_UP), "look-up");
    assert_string_equal(rt_culprit_probe_action_name(RT_PROBE_STALE), "stale");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_job_kinds),
        cmocka_unit_test(test_a_push_tally),
        cmocka_unit_test(test_where_the_window_starts),
        cmocka_unit_test(test_no_candidate_is_found_at_no_cost),
        cmocka_unit_test(test_the_integration_scenario_takes_three_probes),
        cmocka_unit_test(test_globs_become_like_patterns),
        cmocka_unit_test(test_the_probe_request),
        cmocka_unit_test(test_exactly_once),
        cmocka_unit_test(test_a_probe_whose_runs_never_come_is_overdue_after_the_deadline),
        cmocka_unit_test(test_a_slow_probe_is_waited_for_longer_than_one_that_never_came),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
