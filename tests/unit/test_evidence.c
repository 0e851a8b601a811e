/* SPDX-License-Identifier: MPL-2.0 */
/* test_evidence.c - the documents the workers store in Postgres (common/core/evidence.h):
 * every member docs/data.md names is written from the typed values, optional ones left out
 * when unknown, lists never shorter than their input. */
#include "support/util.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/evidence.h"

static json_t *parse(const char *text)
{
    json_error_t error;
    json_t *o = json_loads(text, 0, &error);
    assert_non_null(o);
    return o;
}

static long long member(json_t *o, const char *path)
{
    char key[64];
    const char *dot = strchr(path, '.');
    if (!dot) return json_integer_value(json_object_get(o, path));
    snprintf(key, sizeof key, "%.*s", (int)(dot - path), path);
    return member(json_object_get(o, key), dot + 1);
}

static const char *text_of(json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

static void test_the_runs_found_on_the_push_are_each_listed(void **state)
{
    (void)state;
    rt_found_run runs[] = {{"GWxTc8p_RUa5_Xo4RtMiCA", 0, "failed"},
                           {"kN1HHR__QI6eBNTG-z6yRA", 2, "completed"}};
    char *text = rt_found_runs_json(runs, 2);
    assert_string_equal(text, "[{\"task_id\":\"GWxTc8p_RUa5_Xo4RtMiCA\",\"run_id\":0,\"state\":"
                              "\"failed\"},{\"task_id\":\"kN1HHR__QI6eBNTG-z6yRA\",\"run_id\":2,"
                              "\"state\":\"completed\"}]");
    free(text);
    text = rt_found_runs_json(NULL, 0);
    assert_string_equal(text, "[]");
    free(text);
}

static rt_evidence_run RUNS[] = {
    {.task_id = "kN1HHR__QI6eBNTG-z6yRA",
     .run_id = 0,
     .member_state = "failed",
     .evidence = "failed",
     .reproduced = true,
     .job_id = 77,
     .have_lines = true,
     .nlines = 3},
    {.task_id = "z4zPvzULSAmqFYM357xurg",
     .run_id = 1,
     .found = true,
     .member_state = "completed",
     .evidence = "passed"},
};

static rt_decision_evidence decision(const rt_evidence_line *lines, size_t nlines)
{
    static const rt_evidence_tracked tracked[] = {{"TEST-UNEXPECTED-FAIL | a.js | x", 1234567}};
    return (rt_decision_evidence){
        .threshold = 2,
        .verdict = "regression",
        .reason = "reproduced",
        .original = {.task_id = "GWxTc8p_RUa5_Xo4RtMiCA", .evidence = "failed"},
        .lines = lines,
        .nlines = nlines,
        .tracked = tracked,
        .ntracked = 1,
        .runs = RUNS,
        .nruns = 2,
        .counts =
            {.requested = 2, .found = 1, .compared = 2, .passed = 1, .failed = 1, .missing = 0},
        .failure_seen_at = "2026-12-04T10:00:00Z",
        .decided_at = "2026-12-04T10:30:00Z",
        .attempt = 1,
        .request_reason = "set complete",
        .classification_id = -1};
}

static void test_a_decisions_evidence_holds_every_line_and_run(void **state)
{
    (void)state;
    rt_event_task_id by[] = {"kN1HHR__QI6eBNTG-z6yRA"};
    json_t *history = parse("{\"branches\":3}");
    rt_evidence_line lines[] = {
        {.signature = "TEST-UNEXPECTED-FAIL | a.js | x",
         .test = "a.js",
         .hash_hex = "0011",
         .reproduced_by = by,
         .nreproduced_by = 1,
         .history = history},
        {.signature = "TEST-UNEXPECTED-TIMEOUT | b.js | y", .test = "b.js", .hash_hex = "2233"}};
    rt_decision_evidence in = decision(lines, 2);
    json_t *o = rt_decision_evidence_build(&in);
    assert_non_null(o);
    assert_int_equal(member(o, "threshold"), 2);
    assert_string_equal(text_of(o, "verdict"), "regression");
    assert_string_equal(text_of(o, "request_reason"), "set complete");
    assert_true(json_is_false(json_object_get(o, "deadline")));
    /* Unknown: left out, or null where docs/data.md says so. */
    json_t *original = json_object_get(o, "original");
    assert_null(json_object_get(original, "job_id"));
    assert_null(json_object_get(original, "push_id"));
    assert_null(json_object_get(o, "classification_id"));
    assert_null(json_object_get(o, "detail"));
    assert_true(
        json_is_null(json_object_get(json_object_get(o, "times"), "retriggers_requested_at")));
    json_t *stored_lines = json_object_get(o, "lines");
    assert_int_equal(json_array_size(stored_lines), 2);
    json_t *first = json_array_get(stored_lines, 0);
    assert_int_equal(member(first, "reproduced"), 1);
    assert_string_equal(
        json_string_value(json_array_get(json_object_get(first, "reproduced_by"), 0)),
        "kN1HHR__QI6eBNTG-z6yRA");
    assert_int_equal(member(first, "history.branches"), 3);
    assert_null(json_object_get(json_array_get(stored_lines, 1), "history"));
    json_t *runs = json_object_get(o, "runs");
    assert_int_equal(json_array_size(runs), 2);
    assert_string_equal(text_of(json_array_get(runs, 0), "role"), "requested");
    assert_int_equal(member(json_array_get(runs, 0), "job_id"), 77);
    assert_int_equal(member(json_array_get(runs, 0), "lines"), 3);
    assert_string_equal(text_of(json_array_get(runs, 1), "role"), "found");
    assert_null(json_object_get(json_array_get(runs, 1), "lines"));
    assert_int_equal(member(json_array_get(json_object_get(o, "tracked"), 0), "bug"), 1234567);
    assert_int_equal(member(o, "counts.compared"), 2);
    assert_int_equal(member(o, "counts.found"), 1);
    json_decref(o);

    /* Known: written. */
    in.original.job_id = 9;
    in.original.push_id = 1234;
    in.classification_id = 4;
    in.detail = "log not parsed";
    in.retriggers_requested_at = "2026-12-04T10:05:00Z";
    o = rt_decision_evidence_build(&in);
    assert_int_equal(member(o, "original.push_id"), 1234);
    assert_int_equal(member(o, "original.job_id"), 9);
    assert_int_equal(member(o, "classification_id"), 4);
    assert_string_equal(text_of(o, "detail"), "log not parsed");
    assert_string_equal(text_of(json_object_get(o, "times"), "retriggers_requested_at"),
                        "2026-12-04T10:05:00Z");

    /* The policy's view: without a plan only its names and rounds ... */
    rt_decide_settings settings = {.confidence = 0.95,
                                   .prior_regression = 0.1,
                                   .max_retriggers = 10,
                                   .first_batch_min = 2,
                                   .first_batch_max = 5};
    rt_policy_evidence pin = {.policy = RT_POLICY_ADAPTIVE,
                              .shadow = RT_POLICY_SEED,
                              .loaded = true,
                              .rounds = 2,
                              .retriggers = 6,
                              .found = 1,
                              .settings = &settings,
                              .nlines = 2,
                              .likeliest = -1};
    assert_int_equal(rt_policy_evidence_add(o, &pin), RT_OK);
    json_t *policy = json_object_get(o, "policy");
    assert_string_equal(text_of(policy, "name"), "adaptive");
    assert_string_equal(text_of(policy, "shadow"), "seed");
    assert_int_equal(member(policy, "retriggers"), 6);
    assert_true(json_is_false(json_object_get(policy, "refused")));
    assert_null(json_object_get(policy, "outcomes"));
    assert_null(json_object_get(json_array_get(json_object_get(o, "lines"), 0), "model"));
    json_decref(o);

    /* ... with one, every policy's outcome and each line's model. */
    o = rt_decision_evidence_build(&in);
    rt_round_plan plan = {.spent = 7};
    plan.result.p_regression[0] = 0.25;
    plan.result.p_regression[1] = 0.75;
    plan.result.outcome[RT_POLICY_MOZCI] =
        (rt_policy_outcome){.verdict = RT_VERDICT_INTERMITTENT, .reason = "not-reproduced"};
    rt_decide_history hist[] = {{10, 2, 1}, {20, 0, -1}};
    pin.plan = &plan;
    pin.history = hist;
    pin.likeliest = 1;
    assert_int_equal(rt_policy_evidence_add(o, &pin), RT_OK);
    policy = json_object_get(o, "policy");
    assert_int_equal(member(policy, "spent"), 7);
    assert_int_equal(member(policy, "settings.max_retriggers"), 10);
    assert_string_equal(
        text_of(json_object_get(json_object_get(policy, "outcomes"), "mozci"), "verdict"),
        "intermittent");
    json_t *second = json_array_get(json_object_get(o, "lines"), 1);
    assert_int_equal(member(second, "model.runs"), 20);
    assert_int_equal(member(second, "model.signature_failures"), -1);
    assert_true(json_real_value(json_object_get(second, "p_regression")) == 0.75);
    assert_true(json_real_value(json_object_get(o, "p_regression")) == 0.75);
    /* A view of other lines than the stored ones is refused, never half written. */
    pin.nlines = 3;
    json_t *again = rt_decision_evidence_build(&in);
    assert_int_equal(rt_policy_evidence_add(again, &pin), RT_ENOMEM);
    assert_null(json_object_get(again, "policy"));
    json_decref(again);
    json_decref(o);
    json_decref(history);
}

static void test_cancelled_retriggers_are_counted_with_the_time_they_save(void **state)
{
    (void)state;
    rt_event_task_id ids[] = {"kN1HHR__QI6eBNTG-z6yRA", "z4zPvzULSAmqFYM357xurg"};
    char *text = rt_cancelled_json(ids, 2, 600);
    assert_string_equal(text, "{\"count\":2,\"task_ids\":[\"kN1HHR__QI6eBNTG-z6yRA\","
                              "\"z4zPvzULSAmqFYM357xurg\"],\"estimated_seconds_saved\":1200}");
    free(text);
}

static void test_a_culprit_window_starts_with_nothing_asked(void **state)
{
    (void)state;
    rt_window_push pushes[] = {{.revision = "0123456789abcdef0123456789abcdef01234567",
                                .push_id = 10,
                                .author = "a",
                                .runs = 3},
                               {.revision = "b437ae030825a8ea9fa7a632b1fcb9becbe11f69",
                                .push_id = 11,
                                .author = "b",
                                .runs = 2,
                                .reproduced = 2,
                                .pending = 1,
                                .base_jobs = 4}};
    json_t *lines = parse("[{\"line\":\"TEST-UNEXPECTED-FAIL | a.js | x\",\"hash\":\"00\"},"
                          "{\"hash\":\"11\"}]");
    rt_window_start in = {.failing_push_id = 11,
                          .pushes = pushes,
                          .npushes = 2,
                          .lines = lines,
                          .history_runs = 40,
                          .history_failures = 3,
                          .probe_rule = "seed"};
    json_t *w = rt_window_build(&in);
    assert_non_null(w);
    assert_int_equal(member(w, "failing_push_id"), 11);
    assert_int_equal(member(w, "rounds"), 0);
    assert_int_equal(member(w, "history.runs"), 40);
    assert_string_equal(text_of(w, "probe_rule"), "seed");
    json_t *last = json_array_get(json_object_get(w, "pushes"), 1);
    assert_int_equal(member(last, "base_jobs"), 4);
    assert_int_equal(member(last, "pending"), 1);
    assert_int_equal(member(last, "asked"), 0);
    assert_int_equal(member(last, "attempts"), 0);
    /* Only the lines' signatures are kept. */
    assert_int_equal(json_array_size(json_object_get(w, "lines")), 1);
    json_decref(w);
    json_decref(lines);

    json_t *next = rt_window_first_next_build(pushes[1].revision, 5, NULL, 3);
    assert_true(json_is_null(json_object_get(next, "confirm")));
    assert_int_equal(member(next, "confirm_times"), 0);
    json_decref(next);
    next = rt_window_first_next_build(pushes[1].revision, 5, pushes[0].revision, 3);
    assert_int_equal(member(next, "confirm_times"), 3);
    json_decref(next);
    next = rt_window_next_build(pushes[1].revision, 4);
    assert_int_equal(json_object_size(next), 2);
    json_decref(next);

    json_t *request = rt_window_request_build(2, 5, 3, true, "2026-12-04T10:00:00Z");
    assert_int_equal(member(request, "attempt"), 2);
    assert_true(json_is_true(json_object_get(request, "confirm")));
    json_t *revision = json_string(pushes[1].revision), *push_id = json_integer(11);
    rt_window_probe probe = {.round = 3,
                             .revision = revision,
                             .push_id = push_id,
                             .times = 5,
                             .runs = 4,
                             .reproduced = 1,
                             .class_name = "bad",
                             .confirm = true,
                             .requested_at = json_object_get(request, "at")};
    json_t *p = rt_window_probe_build(&probe);
    assert_string_equal(text_of(p, "requested_at"), "2026-12-04T10:00:00Z");
    assert_string_equal(text_of(p, "class"), "bad");
    json_decref(p);
    probe.requested_at = NULL; /* a push never asked: no probe */
    assert_null(rt_window_probe_build(&probe));
    json_decref(revision);
    json_decref(push_id);
    json_decref(request);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_runs_found_on_the_push_are_each_listed),
        cmocka_unit_test(test_a_decisions_evidence_holds_every_line_and_run),
        cmocka_unit_test(test_cancelled_retriggers_are_counted_with_the_time_they_save),
        cmocka_unit_test(test_a_culprit_window_starts_with_nothing_asked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
