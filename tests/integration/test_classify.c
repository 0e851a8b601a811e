/* SPDX-License-Identifier: MPL-2.0 */
/* test_classify.c - retrig-classify end to end: real worker processes on the local
 * RabbitMQ, Redis and Postgres, the fake upstream serving the recorded fixtures. Pins the
 * "Done when" points of issue 3: verdicts of the fixtures, exactly-once retrigger sets
 * under duplicates, replicas and a flushed Redis, budgets under concurrency and the Postgres
 * budget backstop after Redis lost a claim, dead letters with reasons, retries through
 * delay queues, and a clean SIGTERM. Each test has its own
 * database, Redis prefix, AMQP namespace and Pulse exchanges (support/classify_harness.h). */
#include "support/util.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "support/classify_harness.h"
#include "support/crafted.h"
#include "support/fixtures.h"

#define GWX          "GWxTc8p_RUa5_Xo4RtMiCA"
#define GWX_PULSE    "pulse/treeherder_task-completed_GWxTc8p_RUa5_Xo4RtMiCA.json"
#define GWX_DEF      "taskcluster/task_definition_GWxTc8p_RUa5_Xo4RtMiCA.json"
#define GWX_ROUTE    "tc-treeherder.v2.autoland.b437ae030825a8ea9fa7a632b1fcb9becbe11f69.88560"
#define GWX_LABEL    "test-android-em-7.0-x86_64/debug-mochitest-e10s-1"
#define GWX_PLATFORM "android-em-7-0-x86_64"
#define B3E          "B3EheQ-IQ5aPzw34KS_a6g"
#define B3E_PULSE    "pulse/treeherder_task-completed_B3EheQ-IQ5aPzw34KS_a6g.json"
#define B3E_ROUTE    "tc-treeherder.v2.autoland.918d7c84da371bda26460fb4b50f161d32107880.88554"
#define FUZZ_DONE    "pulse/fuzzmanager_task-completed_Z1kaoRtHRRWyyuMDqadYPA.json"
#define FUZZ_EXC     "pulse/fuzzmanager_task-exception_f8fRfedPSp2-A7M9Zhxe-Q.json"
#define EXC_NO_RUN   "pulse/derived_task-exception_no-run_f8fRfedPSp2-A7M9Zhxe-Q.json"
#define TRY_REVISION "5f2bd4a1c8d8a6c3b1e0f9a7d6c5b4a3e2d1c0b9"
#define ES_FAIL      "errorsummary/mochitest-browser-chrome_errorsummary.log"
#define ES_PASS      "errorsummary/mochitest-browser-chrome_pass_errorsummary.log"
#define ES_INFRA     "errorsummary/mochitest-browser-chrome_infra_errorsummary.log"
#define ES_STARTUP   "errorsummary/mozlog/crash_before_tests.log" /* test: null */
#define ES_EXP_CRASH "errorsummary/mozlog/expected_crash.log"

#define WAIT_MS 15000

static const char SQL_SETS[] = "SELECT count(*) FROM retrigger_sets";
static const char SQL_LEDGER[] = "SELECT coalesce(sum(amount), 0) FROM budget_ledger";
static const char SQL_CLASSIFIED[] = "SELECT count(*) FROM runs WHERE verdict IS NOT NULL";

/* A new failing task made from the GWxTc8p fixture: its own task id, task group and label
 * (so it is its own set), served by the fake with the given artifacts. */
typedef struct variant {
    char task_id[23];
    char group[23];
    char label[256];
} variant;

static json_t *scenario_new(void)
{
    return json_pack("{s:{}, s:{}, s:{}}", "tasks", "artifacts", "jobs");
}

static json_t *artifacts_with(const char *errorsummary)
{
    json_t *list = json_pack("[{s:s, s:s}]", "name", "public/logs/live_backing.log", "content",
                             "[taskcluster 2019-06-26T19:16:36.554Z] Task ID: recorded log\n");
    if (errorsummary)
        json_array_append_new(list, json_pack("{s:s, s:s}", "name",
                                              "public/test_info/mochitest_errorsummary.log",
                                              "fixture", errorsummary));
    return json_pack("{s:o}", "0", list);
}

static void add_variant(json_t *scenario, variant *v, const char *suffix, const char *errorsummary,
                        int classification)
{
    rt_ch_slugid(v->task_id);
    rt_ch_slugid(v->group);
    snprintf(v->label, sizeof v->label, "%s-%s", GWX_LABEL, suffix);
    json_object_set_new(json_object_get(scenario, "tasks"), v->task_id,
                        rt_ch_task_definition(GWX_DEF, v->group, v->label));
    json_object_set_new(json_object_get(scenario, "artifacts"), v->task_id,
                        artifacts_with(errorsummary));
    if (classification)
        json_object_set_new(json_object_get(scenario, "jobs"), v->task_id,
                            json_pack("[{s:i, s:i, s:s, s:s, s:i}]", "id",
                                      (int)(300000000 + random() % 1000000), "retry_id", 0,
                                      "result", "testfailed", "state", "completed",
                                      "failure_classification_id", classification));
}

static void publish_variant(rt_ch *h, const variant *v, const char *message_id)
{
    char *body = rt_ch_failed_message(GWX_PULSE, v->task_id, v->group);
    rt_ch_publish(h, "task-failed", body, strlen(body), GWX_ROUTE, message_id);
    free(body);
}

static void publish_gwx_failed(rt_ch *h)
{
    char *body = rt_ch_failed_message(GWX_PULSE, NULL, NULL);
    rt_ch_publish(h, "task-failed", body, strlen(body), GWX_ROUTE, NULL);
    free(body);
}

static void publish_file(rt_ch *h, const char *event, const char *fixture, const char *route)
{
    size_t len = 0;
    char *body = rt_test_read_file(rt_test_fixture(fixture), &len);
    rt_ch_publish(h, event, body, len, route, NULL);
    free(body);
}

/* Number of calls the fake saw whose path starts with prefix. */
static size_t upstream_calls(rt_ch *h, const char *prefix)
{
    json_t *calls = rt_fake_calls(&h->fake, prefix);
    assert_non_null(calls);
    size_t n = json_array_size(calls);
    json_decref(calls);
    return n;
}

/* Stops the workers (they must exit 0), and repeats with `workers` fresh ones until no
 * message is left in the Pulse queue: afterwards every published message was acked. */
static void settle(rt_ch *h, size_t workers)
{
    int64_t deadline = rt_test_now_ms() + 20000;
    for (;;) {
        assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
        uint32_t left = 0;
        assert_int_equal(rt_amqp_queue_depth(h->amqp, h->pulse_queue, &left), RT_OK);
        if (left == 0) return;
        if (rt_test_now_ms() > deadline) fail_msg("%u messages still in the Pulse queue", left);
        rt_ch_start_workers(h, workers);
        while (rt_amqp_queue_depth(h->amqp, h->pulse_queue, &left) == RT_OK && left > 0 &&
               rt_test_now_ms() < deadline) {
            struct timespec ts = {0, 20 * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
}

static int setup(void **state)
{
    *state = rt_ch_new();
    return 0;
}

static int teardown(void **state)
{
    rt_ch_free(*state);
    return 0;
}

/* ---- 1. the fixtures ---- */

static void test_completed_and_exception_fixtures_are_skipped_without_upstream_calls(void **state)
{
    rt_ch *h = *state;
    rt_ch_start_workers(h, 1);
    /* As recorded: Treeherder wrappers (2019, no taskQueueId) and raw bodies (2021). */
    publish_file(h, "task-completed", GWX_PULSE, GWX_ROUTE);
    publish_file(h, "task-completed", B3E_PULSE, B3E_ROUTE);
    publish_file(h, "task-completed", FUZZ_DONE, NULL);
    publish_file(h, "task-exception", FUZZ_EXC, NULL);
    assert_string_equal(rt_ch_wait_verdict(h, GWX, 0, WAIT_MS), "skip/not-failed");
    assert_string_equal(rt_ch_wait_verdict(h, B3E, 0, WAIT_MS), "skip/not-failed");
    assert_string_equal(rt_ch_wait_verdict(h, "Z1kaoRtHRRWyyuMDqadYPA", 0, WAIT_MS),
                        "skip/not-failed");
    assert_string_equal(rt_ch_wait_verdict(h, "f8fRfedPSp2-A7M9Zhxe-Q", 0, WAIT_MS),
                        "skip/exception");
    const char *gwx[] = {GWX};
    char *push = rt_ch_sql_text(h,
                                "SELECT project || ' ' || revision || ' ' || state"
                                " FROM runs WHERE task_id = $1",
                                1, gwx);
    assert_non_null(push); /* the push came from the CC route */
    assert_string_equal(push, "autoland b437ae030825a8ea9fa7a632b1fcb9becbe11f69 completed");
    free(push);
    assert_int_equal(upstream_calls(h, "/api/"), 0);
    assert_int_equal(rt_ch_queue_depth(h, "retrigger"), 0);
    assert_int_equal(rt_ch_queue_depth(h, "dead-letter"), 0);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
}

/* Taskcluster's task-exception schema requires only version and status: a task whose
 * deadline passed before any run started has no runId. Such a message is an exception of no
 * run, acked without a run row or an upstream call; it used to be dead-lettered as
 * missing-field:runId. */
static void test_an_exception_without_a_run_id_is_skipped_not_dead_lettered(void **state)
{
    rt_ch *h = *state;
    rt_ch_start_workers(h, 1);
    publish_file(h, "task-exception", EXC_NO_RUN, NULL);
    publish_file(h, "task-exception", FUZZ_EXC, NULL); /* behind it, as recorded */
    assert_string_equal(rt_ch_wait_verdict(h, "f8fRfedPSp2-A7M9Zhxe-Q", 0, WAIT_MS),
                        "skip/exception");
    settle(h, 1);
    assert_int_equal(rt_ch_queue_depth(h, "dead-letter"), 0);
    assert_int_equal(rt_ch_sql_int(h, "SELECT count(*) FROM runs", 0, NULL), 1);
    assert_int_equal(upstream_calls(h, "/api/"), 0);
}

static void test_failed_fixture_variants_get_the_verdicts_their_data_implies(void **state)
{
    rt_ch *h = *state;
    json_t *scenario = scenario_new();
    json_object_set_new(json_object_get(scenario, "artifacts"), GWX, artifacts_with(ES_FAIL));
    variant pass, infra, none, classified, crash, expected_crash;
    add_variant(scenario, &pass, "pass", ES_PASS, 0);
    add_variant(scenario, &infra, "infra", ES_INFRA, 0);
    add_variant(scenario, &crash, "crash-before-tests", ES_STARTUP, 0);
    add_variant(scenario, &expected_crash, "expected-crash", ES_EXP_CRASH, 0);
    add_variant(scenario, &none, "no-errorsummary", NULL, 0);
    add_variant(scenario, &classified, "classified", ES_FAIL, 4);
    rt_ch_scenario(h, scenario);
    json_decref(scenario);
    rt_ch_start_workers(h, 1);

    publish_gwx_failed(h);
    publish_variant(h, &pass, NULL);
    publish_variant(h, &infra, NULL);
    publish_variant(h, &crash, NULL);
    publish_variant(h, &expected_crash, NULL);
    publish_variant(h, &none, NULL);
    publish_variant(h, &classified, NULL);

    assert_string_equal(rt_ch_wait_verdict(h, GWX, 0, WAIT_MS), "retrigger/eligible");
    assert_string_equal(rt_ch_wait_verdict(h, pass.task_id, 0, WAIT_MS), "infra/no-test-failure");
    assert_string_equal(rt_ch_wait_verdict(h, infra.task_id, 0, WAIT_MS),
                        "infra/incomplete-errorsummary");
    /* mozlog's crash before any test is the product's (issue 30), an expected crash none. */
    assert_string_equal(rt_ch_wait_verdict(h, crash.task_id, 0, WAIT_MS),
                        "skip/crash-before-tests");
    assert_string_equal(rt_ch_wait_verdict(h, expected_crash.task_id, 0, WAIT_MS),
                        "infra/no-test-failure");
    assert_string_equal(rt_ch_wait_verdict(h, none.task_id, 0, WAIT_MS), "infra/no-errorsummary");
    assert_string_equal(rt_ch_wait_verdict(h, classified.task_id, 0, WAIT_MS), "skip/classified");

    /* A classified job stops before the errorsummary is fetched. */
    char prefix[128];
    snprintf(prefix, sizeof prefix, "/api/queue/v1/task/%s/runs", classified.task_id);
    assert_int_equal(upstream_calls(h, prefix), 0);

    /* One retrigger request, for GWxTc8p, asking for 5. */
    rt_ch_message *req = NULL;
    rt_ch_take(h, "retrigger", 1, WAIT_MS, &req);
    json_t *r = json_loads(req[0].body, 0, NULL);
    assert_non_null(r);
    assert_string_equal(json_string_value(json_object_get(r, "task_id")), GWX);
    assert_int_equal(json_integer_value(json_object_get(r, "run_id")), 0);
    assert_int_equal(json_integer_value(json_object_get(r, "times")), 5);
    assert_string_equal(json_string_value(json_object_get(r, "project")), "autoland");
    assert_string_equal(json_string_value(json_object_get(r, "revision")),
                        "b437ae030825a8ea9fa7a632b1fcb9becbe11f69");
    assert_string_equal(json_string_value(json_object_get(r, "label")), GWX_LABEL);
    assert_string_equal(json_string_value(json_object_get(r, "platform")), GWX_PLATFORM);
    assert_string_equal(json_string_value(json_object_get(r, "task_queue_id")),
                        "terraform-packet/gecko-t-linux");
    assert_string_equal(json_string_value(json_object_get(r, "task_group_id")),
                        "HkX-TbGXQaSX4ucqGMQNBA");
    assert_true(json_array_size(json_object_get(r, "failing_groups")) > 0);
    assert_true(json_array_size(json_object_get(r, "failures")) > 0);
    json_decref(r);
    rt_ch_messages_free(req, 1);
    assert_int_equal(rt_ch_queue_depth(h, "retrigger"), 0);

    assert_int_equal(rt_ch_sql_int(h, SQL_SETS, 0, NULL), 1);
    const char *gwx[] = {GWX};
    assert_int_equal(rt_ch_sql_int(h,
                                   "SELECT retrigger_count FROM retrigger_sets WHERE"
                                   " original_task_id = $1 AND request_published_at IS NOT NULL",
                                   1, gwx),
                     5);
    assert_int_equal(rt_ch_sql_int(h, SQL_LEDGER, 0, NULL), 5);
    assert_int_equal(rt_ch_budget_counter(h, GWX_PLATFORM), 5);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
}

static void test_published_retrigger_request_validates_against_its_schema(void **state)
{
    rt_ch *h = *state;
    json_t *scenario = scenario_new();
    json_object_set_new(json_object_get(scenario, "artifacts"), GWX, artifacts_with(ES_FAIL));
    rt_ch_scenario(h, scenario);
    json_decref(scenario);
    rt_ch_start_workers(h, 1);
    publish_gwx_failed(h);
    rt_ch_message *req = NULL;
    rt_ch_take(h, "retrigger", 1, WAIT_MS, &req);
    char *error = NULL;
    int invalid = rt_ch_validate_schema(rt_test_source("queue-schemas/retrigger-request.json"),
                                        req[0].body, &error);
    if (invalid) fprintf(stderr, "request: %s\nschema errors:\n%s", req[0].body, error);
    free(error);
    rt_ch_messages_free(req, 1);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
    assert_int_equal(invalid, 0);
}

static void test_tier_and_pool_policies_skip_fixture_failures(void **state)
{
    rt_ch *h = *state;
    rt_ch_setenv(h, "TIERS", "1");
    rt_ch_setenv(h, "POOL_PREFIXES", "gecko-t/t-linux-"); /* the default */
    json_t *scenario = scenario_new();
    json_object_set_new(json_object_get(scenario, "artifacts"), GWX, artifacts_with(ES_FAIL));
    rt_ch_scenario(h, scenario);
    json_decref(scenario);
    rt_ch_start_workers(h, 1);

    publish_gwx_failed(h);                                   /* tier 2 */
    char *b3e = rt_ch_failed_message(B3E_PULSE, NULL, NULL); /* tier 1, releng-hardware osx */
    rt_ch_publish(h, "task-failed", b3e, strlen(b3e), B3E_ROUTE, NULL);
    free(b3e);

    assert_string_equal(rt_ch_wait_verdict(h, GWX, 0, WAIT_MS), "skip/tier");
    assert_string_equal(rt_ch_wait_verdict(h, B3E, 0, WAIT_MS), "skip/pool");
    /* Neither needed Treeherder nor the artifacts. */
    assert_int_equal(upstream_calls(h, "/api/queue/v1/task/" GWX "/runs"), 0);
    assert_int_equal(upstream_calls(h, "/api/queue/v1/task/" B3E "/runs"), 0);
    assert_int_equal(upstream_calls(h, "/api/jobs/"), 0);
    assert_int_equal(rt_ch_queue_depth(h, "retrigger"), 0);
    assert_int_equal(rt_ch_sql_int(h, SQL_SETS, 0, NULL), 0);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
}

/* A failure on a try push: everything else about it is eligible (a test on a gecko-t Linux
 * pool, tier 2, unclassified, a failing errorsummary), but a try push writes its own
 * actions.json and decision task, so retrig never acts on it: skip/project, before any
 * upstream call past the task definition. */
static void test_a_try_push_failure_is_skipped_by_project(void **state)
{
    rt_ch *h = *state;
    rt_ch_setenv(h, "POOL_PREFIXES", "gecko-t/t-linux-, terraform-packet/gecko-t-linux");
    json_t *scenario = scenario_new();
    variant v;
    add_variant(scenario, &v, "try", ES_FAIL, 0);
    json_t *def = json_object_get(json_object_get(scenario, "tasks"), v.task_id);
    json_object_set_new(def, "schedulerId", json_string("gecko-level-1"));
    json_object_set_new(def, "taskQueueId", json_string("gecko-t/t-linux-large"));
    json_object_set_new(def, "routes",
                        json_pack("[s, s]", "tc-treeherder.v2.try." TRY_REVISION ".1234567",
                                  "index.gecko.v2.try.latest.test"));
    rt_ch_scenario(h, scenario);
    json_decref(scenario);
    rt_ch_start_workers(h, 1);

    char *body = rt_ch_failed_message(GWX_PULSE, v.task_id, v.group);
    rt_ch_publish(h, "task-failed", body, strlen(body),
                  "tc-treeherder.v2.try." TRY_REVISION ".1234567", NULL);
    free(body);
    assert_string_equal(rt_ch_wait_verdict(h, v.task_id, 0, WAIT_MS), "skip/project");
    assert_int_equal(upstream_calls(h, "/api/queue/v1/task/"), 1); /* the definition only */
    assert_int_equal(upstream_calls(h, "/api/jobs/"), 0);
    assert_int_equal(rt_ch_queue_depth(h, "retrigger"), 0);
    assert_int_equal(rt_ch_sql_int(h, SQL_SETS, 0, NULL), 0);
    assert_int_equal(rt_ch_sql_int(h, SQL_LEDGER, 0, NULL), 0);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);

    /* An operator who does add try (with its level) gets it classified as any push. */
    rt_ch_setenv(h, "PROJECTS", "autoland, mozilla-central, try");
    rt_ch_start_workers(h, 1);
    variant w;
    scenario = scenario_new();
    add_variant(scenario, &w, "try-allowed", ES_FAIL, 0);
    def = json_object_get(json_object_get(scenario, "tasks"), w.task_id);
    json_object_set_new(def, "routes",
                        json_pack("[s]", "tc-treeherder.v2.try." TRY_REVISION ".1234567"));
    rt_ch_scenario(h, scenario);
    json_decref(scenario);
    body = rt_ch_failed_message(GWX_PULSE, w.task_id, w.group);
    rt_ch_publish(h, "task-failed", body, strlen(body),
                  "tc-treeherder.v2.try." TRY_REVISION ".1234567", NULL);
    free(body);
    assert_string_equal(rt_ch_wait_verdict(h, w.task_id, 0, WAIT_MS), "retrigger/eligible");
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
}

/* Treeherder's classification read into an int wrapped: 4294967297 became 1 (not
 * classified) and the failure was retriggered. Out of range, the answer is refused. */
static void test_an_out_of_range_classification_is_an_error_not_unclassified(void **state)
{
    rt_ch *h = *state;
    json_t *scenario = scenario_new();
    variant v;
    add_variant(scenario, &v, "wrapping-classification", ES_FAIL, 0);
    json_object_set_new(json_object_get(scenario, "jobs"), v.task_id,
                        json_pack("[{s:i, s:i, s:s, s:s, s:I}]", "id", 300999001, "retry_id", 0,
                                  "result", "testfailed", "state", "completed",
                                  "failure_classification_id", (json_int_t)4294967297LL));
    rt_ch_scenario(h, scenario);
    json_decref(scenario);
    rt_ch_start_workers(h, 1);
    publish_variant(h, &v, "wrapping");
    rt_ch_message *dead = NULL;
    rt_ch_take(h, "dead-letter", 1, WAIT_MS, &dead);
    if (!strstr(dead[0].reason, "failure_classification_id is not an integer"))
        fail_msg("reason: %s", dead[0].reason);
    rt_ch_messages_free(dead, 1);
    assert_int_equal(rt_ch_queue_depth(h, "retrigger"), 0);
    assert_int_equal(rt_ch_sql_int(h, SQL_SETS, 0, NULL), 0);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
}

/* ---- 2. exactly once ---- */

static void test_duplicated_failure_requests_one_set_even_after_redis_flush(void **state)
{
    rt_ch *h = *state;
    json_t *scenario = scenario_new();
    json_object_set_new(json_object_get(scenario, "artifacts"), GWX, artifacts_with(ES_FAIL));
    variant other;
    add_variant(scenario, &other, "after-flush", ES_FAIL, 0);
    rt_ch_scenario(h, scenario);
    json_decref(scenario);

    /* Delivered 3 times to one worker, one after the other. */
    rt_ch_start_workers(h, 1);
    for (int i = 0; i < 3; i++) publish_gwx_failed(h);
    assert_string_equal(rt_ch_wait_verdict(h, GWX, 0, WAIT_MS), "retrigger/eligible");
    settle(h, 1);
    assert_int_equal(rt_ch_queue_depth(h, "retrigger"), 1);

    /* Published 3 times at once to 3 replicas of one queue. */
    rt_ch_start_workers(h, 3);
    for (int i = 0; i < 3; i++) publish_gwx_failed(h);
    settle(h, 3);
    assert_int_equal(rt_ch_queue_depth(h, "retrigger"), 1);
    assert_int_equal(rt_ch_sql_int(h, SQL_SETS, 0, NULL), 1);
    assert_int_equal(rt_ch_sql_int(h, SQL_LEDGER, 0, NULL), 5);
    assert_int_equal(rt_ch_budget_counter(h, GWX_PLATFORM), 5);

    /* Redis loses everything (our keys only: the server is shared); delivered again. */
    rt_ch_flush_redis(h);
    assert_int_equal(rt_ch_budget_counter(h, GWX_PLATFORM), -1);
    rt_ch_start_workers(h, 3);
    for (int i = 0; i < 3; i++) publish_gwx_failed(h);
    settle(h, 3);
    assert_int_equal(rt_ch_queue_depth(h, "retrigger"), 1);
    assert_int_equal(rt_ch_sql_int(h, SQL_SETS, 0, NULL), 1);
    assert_int_equal(rt_ch_sql_int(h, SQL_LEDGER, 0, NULL), 5);
    int counter = rt_ch_budget_counter(h, GWX_PLATFORM);
    assert_true(counter == -1 || counter == 5); /* nothing spent: absent, or back to the ledger */

    /* The next failure on the platform starts the counter from the ledger, not from zero. */
    rt_ch_start_workers(h, 1);
    publish_variant(h, &other, NULL);
    assert_string_equal(rt_ch_wait_verdict(h, other.task_id, 0, WAIT_MS), "retrigger/eligible");
    assert_int_equal(rt_ch_sql_int(h, SQL_LEDGER, 0, NULL), 10);
    assert_int_equal(rt_ch_budget_counter(h, GWX_PLATFORM), 10);
    assert_int_equal(rt_ch_sql_int(h, SQL_SETS, 0, NULL), 2);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
    assert_int_equal(rt_ch_queue_depth(h, "retrigger"), 2);
}

/* ---- 3. budgets ---- */

static void test_platform_budget_is_never_exceeded_by_concurrent_workers(void **state)
{
    rt_ch *h = *state;
    rt_ch_setenv(h, "BUDGET_LIMITS", "android*=10, *=600");
    json_t *scenario = scenario_new();
    variant v[4];
    for (int i = 0; i < 4; i++) {
        char suffix[16];
        snprintf(suffix, sizeof suffix, "budget-%d", i);
        add_variant(scenario, &v[i], suffix, ES_FAIL, 0);
    }
    rt_ch_scenario(h, scenario);
    json_decref(scenario);
    rt_ch_start_workers(h, 3);
    for (int i = 0; i < 4; i++) publish_variant(h, &v[i], NULL);

    int highest = 0;
    int64_t deadline = rt_test_now_ms() + WAIT_MS;
    while (rt_ch_sql_int(h, SQL_CLASSIFIED, 0, NULL) < 4 && rt_test_now_ms() < deadline) {
        int c = rt_ch_budget_counter(h, GWX_PLATFORM);
        if (c > highest) highest = c;
    }
    int c = rt_ch_budget_counter(h, GWX_PLATFORM);
    if (c > highest) highest = c;
    assert_int_equal(rt_ch_sql_int(h, SQL_CLASSIFIED, 0, NULL), 4);
    assert_true(highest <= 10);
    assert_int_equal(c, 10);
    assert_int_equal(rt_ch_sql_int(h, SQL_SETS, 0, NULL), 2);
    assert_int_equal(rt_ch_sql_int(h, SQL_LEDGER, 0, NULL), 10);
    assert_int_equal(rt_ch_sql_int(h,
                                   "SELECT count(*) FROM runs WHERE verdict = 'skip'"
                                   " AND verdict_reason = 'budget-exhausted'",
                                   0, NULL),
                     2);
    assert_int_equal(rt_ch_sql_int(h,
                                   "SELECT count(*) FROM runs WHERE verdict = 'retrigger'"
                                   " AND verdict_reason = 'eligible'",
                                   0, NULL),
                     2);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
    assert_int_equal(rt_ch_queue_depth(h, "retrigger"), 2);
}

/* The budget backstop. Worker A claims in Redis, Redis restarts before A's Postgres
 * transaction commits, worker B re-creates the counter from the ledger without A's claim,
 * A commits: the ledger now holds spend the Redis counter does not count. These tests set
 * up exactly that state (a counter lower than the ledger total) and show that Postgres,
 * not Redis, has the last word. */

#define GWX_REVISION "b437ae030825a8ea9fa7a632b1fcb9becbe11f69"

static void lost_claim_state(rt_ch *h, int ledger, int counter)
{
    char amount[16], value[16], key[512];
    snprintf(amount, sizeof amount, "%d", ledger);
    const char *params[] = {GWX_PLATFORM, rt_ch_today(), amount};
    assert_int_equal(rt_ch_sql_int(h,
                                   "WITH i AS (INSERT INTO budget_ledger (platform, day, amount,"
                                   " idempotency_key, reason) VALUES ($1, $2::date, $3::integer,"
                                   " 'test:committed-while-redis-restarted', 'retrigger')"
                                   " RETURNING amount) SELECT amount FROM i",
                                   3, params),
                     ledger);
    snprintf(value, sizeof value, "%d", counter);
    snprintf(key, sizeof key, "%sbudget:%s:%s", h->redis_prefix, GWX_PLATFORM, rt_ch_today());
    const char *argv[] = {"SET", key, value};
    redisReply *reply = NULL;
    assert_int_equal(rt_redis_command_argv(h->redis, 3, argv, NULL, &reply), RT_OK);
    freeReplyObject(reply);
    assert_int_equal(rt_ch_budget_counter(h, GWX_PLATFORM), counter);
}

/* The value of the Redis dedupe key of a variant's set, malloc'd; NULL when absent. */
static char *set_key_value(rt_ch *h, const variant *v)
{
    char key[768];
    snprintf(key, sizeof key, "%sset:autoland:%s:%s", h->redis_prefix, GWX_REVISION, v->label);
    const char *argv[] = {"GET", key};
    redisReply *reply = NULL;
    assert_int_equal(rt_redis_command_argv(h->redis, 2, argv, NULL, &reply), RT_OK);
    char *value = reply->type == REDIS_REPLY_STRING ? strdup(reply->str) : NULL;
    freeReplyObject(reply);
    return value;
}

/* Polls the Redis counter until it equals want (the give-back follows the commit). */
static int wait_counter(rt_ch *h, int want)
{
    int64_t deadline = rt_test_now_ms() + WAIT_MS;
    int c = rt_ch_budget_counter(h, GWX_PLATFORM);
    while (c != want && rt_test_now_ms() < deadline) {
        struct timespec ts = {0, 20 * 1000000L};
        nanosleep(&ts, NULL);
        c = rt_ch_budget_counter(h, GWX_PLATFORM);
    }
    return c;
}

static void test_a_claim_redis_lost_is_cut_to_what_the_postgres_ledger_leaves(void **state)
{
    rt_ch *h = *state;
    rt_ch_setenv(h, "BUDGET_LIMITS", "android*=10, *=600");
    json_t *scenario = scenario_new();
    variant v;
    add_variant(scenario, &v, "backstop-cut", ES_FAIL, 0);
    rt_ch_scenario(h, scenario);
    json_decref(scenario);
    lost_claim_state(h, 8, 0); /* Redis would grant all 5: only 2 are left */
    rt_ch_start_workers(h, 1);
    publish_variant(h, &v, NULL);

    assert_string_equal(rt_ch_wait_verdict(h, v.task_id, 0, WAIT_MS), "retrigger/eligible");
    assert_int_equal(rt_ch_sql_int(h, SQL_LEDGER, 0, NULL), 10);
    assert_int_equal(rt_ch_sql_int(h, SQL_SETS, 0, NULL), 1);
    assert_int_equal(rt_ch_sql_int(h, "SELECT retrigger_count FROM retrigger_sets", 0, NULL), 2);
    rt_ch_message *request = NULL;
    rt_ch_take(h, "retrigger", 1, WAIT_MS, &request);
    json_t *doc = json_loads(request[0].body, 0, NULL);
    assert_non_null(doc);
    assert_int_equal(json_integer_value(json_object_get(doc, "times")), 2);
    json_decref(doc);
    rt_ch_messages_free(request, 1);
    /* Redis gave back the 3 Postgres did not keep and now counts the ledger's 10; the set's
     * key records what was kept. */
    assert_int_equal(wait_counter(h, 10), 10);
    char *value = set_key_value(h, &v);
    char want[64];
    snprintf(want, sizeof want, "%s:2", v.task_id);
    assert_non_null(value);
    assert_string_equal(value, want);
    free(value);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
}

static void test_a_claim_the_postgres_ledger_cannot_cover_is_budget_exhausted(void **state)
{
    rt_ch *h = *state;
    rt_ch_setenv(h, "BUDGET_LIMITS", "android*=10, *=600");
    json_t *scenario = scenario_new();
    variant v[2];
    add_variant(scenario, &v[0], "backstop-refused", ES_FAIL, 0);
    add_variant(scenario, &v[1], "backstop-after", ES_FAIL, 0);
    rt_ch_scenario(h, scenario);
    json_decref(scenario);
    lost_claim_state(h, 9, 1); /* Redis would grant 5: 1 is left, under the minimum of 2 */
    rt_ch_start_workers(h, 1);
    publish_variant(h, &v[0], NULL);

    assert_string_equal(rt_ch_wait_verdict(h, v[0].task_id, 0, WAIT_MS), "skip/budget-exhausted");
    assert_int_equal(rt_ch_sql_int(h, SQL_LEDGER, 0, NULL), 9);
    assert_int_equal(rt_ch_sql_int(h, SQL_SETS, 0, NULL), 0);
    assert_int_equal(rt_ch_queue_depth(h, "retrigger"), 0);
    /* The claim went back: no set key left to block the label, the counter raised to the
     * ledger's 9 (the verdict is written after the give-back). */
    char *value = set_key_value(h, &v[0]);
    assert_null(value);
    assert_int_equal(rt_ch_budget_counter(h, GWX_PLATFORM), 9);

    /* Redis itself now refuses the next failure on the platform. */
    publish_variant(h, &v[1], NULL);
    assert_string_equal(rt_ch_wait_verdict(h, v[1].task_id, 0, WAIT_MS), "skip/budget-exhausted");
    assert_int_equal(rt_ch_sql_int(h, SQL_LEDGER, 0, NULL), 9);
    assert_int_equal(rt_ch_sql_int(h, SQL_SETS, 0, NULL), 0);
    assert_int_equal(rt_ch_budget_counter(h, GWX_PLATFORM), 9);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
    assert_int_equal(rt_ch_queue_depth(h, "retrigger"), 0);
}

/* ---- 4. malformed messages ---- */

static void
test_malformed_messages_are_dead_lettered_with_reasons_and_consumption_goes_on(void **state)
{
    rt_ch *h = *state;
    rt_ch_setenv(h, "MAX_MESSAGE_BYTES", "4096");
    rt_ch_start_workers(h, 1);

    char *failed = rt_ch_failed_message(GWX_PULSE, NULL, NULL);
    json_t *base = json_loads(failed, 0, NULL);
    free(failed);

    json_t *no_task = json_deep_copy(base);
    json_object_del(json_object_get(no_task, "status"), "taskId");
    json_t *bad_run = json_deep_copy(base);
    json_object_set_new(bad_run, "runId", json_string("0"));
    json_t *big = json_deep_copy(base);
    char padding[5000];
    memset(padding, 'x', sizeof padding - 1);
    padding[sizeof padding - 1] = '\0';
    json_object_set_new(big, "padding", json_string(padding));
    json_t *completed = json_deep_copy(base); /* a completed run on task-failed */
    json_t *st = json_object_get(completed, "status");
    json_object_set_new(st, "state", json_string("completed"));
    json_object_set_new(json_array_get(json_object_get(st, "runs"), 0), "state",
                        json_string("completed"));

    struct {
        const char *id;
        json_t *doc;
        const char *text;
        const char *reason_prefix;
    } cases[] = {
        {"invalid-json", NULL, "{\"version\": 1, \"status\": ", "invalid-json"},
        {"missing-task-id", no_task, NULL, "missing-field:status.taskId"},
        {"wrong-type-run-id", bad_run, NULL, "wrong-type:runId"},
        {"too-big", big, NULL, "too-big"},
        {"state-mismatch", completed, NULL, "invalid-value:status.runs[].state"},
    };
    size_t n = sizeof cases / sizeof cases[0];
    for (size_t i = 0; i < n; i++) {
        char *text = cases[i].doc ? json_dumps(cases[i].doc, JSON_COMPACT) : strdup(cases[i].text);
        rt_ch_publish(h, "task-failed", text, strlen(text), GWX_ROUTE, cases[i].id);
        free(text);
    }
    /* A valid message after them is still classified. */
    char task_id[23];
    rt_ch_slugid(task_id);
    char *valid = rt_test_read_file(rt_test_fixture(FUZZ_DONE), NULL);
    json_t *ok = json_loads(valid, 0, NULL);
    free(valid);
    json_object_set_new(json_object_get(ok, "status"), "taskId", json_string(task_id));
    char *ok_text = json_dumps(ok, JSON_COMPACT);
    rt_ch_publish(h, "task-completed", ok_text, strlen(ok_text), NULL, "valid");
    free(ok_text);
    assert_string_equal(rt_ch_wait_verdict(h, task_id, 0, WAIT_MS), "skip/not-failed");

    rt_ch_message *dead = NULL;
    rt_ch_take(h, "dead-letter", n, WAIT_MS, &dead);
    for (size_t i = 0; i < n; i++) {
        bool matched = false;
        for (size_t k = 0; k < n; k++) {
            if (!dead[k].message_id || strcmp(dead[k].message_id, cases[i].id) != 0) continue;
            matched = true;
            assert_non_null(dead[k].reason);
            if (strncmp(dead[k].reason, cases[i].reason_prefix, strlen(cases[i].reason_prefix)))
                fail_msg("%s: reason '%s', expected '%s...'", cases[i].id, dead[k].reason,
                         cases[i].reason_prefix);
        }
        if (!matched) fail_msg("no dead letter for %s", cases[i].id);
    }
    rt_ch_messages_free(dead, n);
    assert_int_equal(rt_ch_queue_depth(h, "dead-letter"), 0);
    /* Nothing malformed was recorded as a run. */
    assert_int_equal(rt_ch_sql_int(h, "SELECT count(*) FROM runs", 0, NULL), 1);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);

    json_decref(base);
    json_decref(no_task);
    json_decref(bad_run);
    json_decref(big);
    json_decref(completed);
    json_decref(ok);
}

/* ---- 5. upstream faults ---- */

/* The fake's answers (HTTP statuses) to GET <root>/api/queue/v1/task/<id> and the time
 * between the first and the last, in seconds. */
static size_t task_definition_calls(rt_ch *h, const char *task_id, int statuses[8], double *span)
{
    char path[128];
    snprintf(path, sizeof path, "/api/queue/v1/task/%s", task_id);
    json_t *calls = rt_fake_calls(&h->fake, path);
    assert_non_null(calls);
    size_t n = 0, i;
    double first = 0, last = 0;
    json_t *call;
    json_array_foreach(calls, i, call)
    {
        if (strcmp(json_string_value(json_object_get(call, "path")), path) != 0) continue;
        double t = json_number_value(json_object_get(call, "time"));
        if (n == 0) first = t;
        last = t;
        if (n < 8) statuses[n] = (int)json_integer_value(json_object_get(call, "status"));
        n++;
    }
    json_decref(calls);
    *span = last - first;
    return n;
}

static void add_fault(rt_ch *h, const char *task_id, int times)
{
    char regex[128];
    snprintf(regex, sizeof regex, "^/api/queue/v1/task/%s$", task_id);
    json_t *rule =
        json_pack("{s:s, s:s, s:i}", "kind", "status", "path_regex", regex, "status", 503);
    if (times > 0) json_object_set_new(rule, "times", json_integer(times));
    char *text = json_dumps(rule, JSON_COMPACT);
    assert_int_equal(rt_fake_add_fault(&h->fake, text), 200);
    free(text);
    json_decref(rule);
}

static void test_upstream_503_is_retried_through_delay_queues_then_classified(void **state)
{
    rt_ch *h = *state;
    json_t *scenario = scenario_new();
    variant v;
    add_variant(scenario, &v, "flaky-upstream", ES_FAIL, 0);
    rt_ch_scenario(h, scenario);
    json_decref(scenario);
    add_fault(h, v.task_id, 2);
    rt_ch_start_workers(h, 1);
    publish_variant(h, &v, "flaky");

    assert_string_equal(rt_ch_wait_verdict(h, v.task_id, 0, WAIT_MS), "retrigger/eligible");
    int statuses[8] = {0};
    double span = 0;
    assert_int_equal(task_definition_calls(h, v.task_id, statuses, &span), 3);
    assert_int_equal(statuses[0], 503);
    assert_int_equal(statuses[1], 503);
    assert_int_equal(statuses[2], 200);
    /* Two trips through the delay queues (300 ms, then 600 ms): the broker's TTLs bound it. */
    assert_true(span >= 0.85);
    assert_int_equal(rt_ch_wait_queue_depth(h, "retrigger", 1, WAIT_MS), 1);
    assert_int_equal(rt_ch_queue_depth(h, "dead-letter"), 0);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
}

static void test_permanent_upstream_failure_is_dead_lettered_after_the_last_delay(void **state)
{
    rt_ch *h = *state;
    json_t *scenario = scenario_new();
    variant v;
    add_variant(scenario, &v, "down-upstream", ES_FAIL, 0);
    rt_ch_scenario(h, scenario);
    json_decref(scenario);
    add_fault(h, v.task_id, 0);
    rt_ch_start_workers(h, 1);
    publish_variant(h, &v, "down");

    rt_ch_message *dead = NULL;
    rt_ch_take(h, "dead-letter", 1, WAIT_MS, &dead);
    assert_non_null(dead[0].reason);
    if (strncmp(dead[0].reason, "upstream-error", strlen("upstream-error")) != 0)
        fail_msg("reason: %s", dead[0].reason);
    assert_string_equal(dead[0].message_id, "down");
    rt_ch_messages_free(dead, 1);

    int statuses[8] = {0};
    double span = 0;
    assert_int_equal(task_definition_calls(h, v.task_id, statuses, &span), 3);
    assert_true(span >= 0.85);
    assert_string_equal(rt_ch_verdict(h, v.task_id, 0), ""); /* recorded, not decided */
    assert_int_equal(rt_ch_queue_depth(h, "retrigger"), 0);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
}

/* An errorsummary that takes longer than message_time_budget_ms to parse: its message is
 * retried through the delay queues, then dead-lettered (parse-timeout), never redelivered
 * forever; the run stays recorded without a verdict. */
static void test_an_errorsummary_over_the_time_budget_is_retried_then_dead_lettered(void **state)
{
    rt_ch *h = *state;
    rt_ch_setenv(h, "MESSAGE_TIME_BUDGET_MS", "1");
    json_t *scenario = scenario_new();
    variant v;
    add_variant(scenario, &v, "slow-errorsummary", NULL, 0);
    size_t len = 0;
    char *big = rt_crafted_errorsummary(RT_CRAFTED_REAL, 4 << 20, &len);
    json_t *list =
        json_object_get(json_object_get(json_object_get(scenario, "artifacts"), v.task_id), "0");
    json_array_append_new(list, json_pack("{s:s, s:s%}", "name",
                                          "public/test_info/mochitest_errorsummary.log", "content",
                                          big, len));
    free(big);
    rt_ch_scenario(h, scenario);
    json_decref(scenario);
    rt_ch_start_workers(h, 1);
    publish_variant(h, &v, "slow");

    rt_ch_message *dead = NULL;
    rt_ch_take(h, "dead-letter", 1, 30000, &dead);
    assert_non_null(dead[0].reason);
    if (strncmp(dead[0].reason, "parse-timeout", strlen("parse-timeout")) != 0 ||
        !strstr(dead[0].reason, "after 2 retries"))
        fail_msg("reason: %s", dead[0].reason);
    rt_ch_messages_free(dead, 1);
    /* Fetched once per delivery: the first and the two retries. */
    char artifact[160];
    snprintf(artifact, sizeof artifact, "/api/queue/v1/task/%s/runs/0/artifacts/public", v.task_id);
    assert_int_equal(upstream_calls(h, artifact), 3);
    assert_string_equal(rt_ch_verdict(h, v.task_id, 0), "");
    assert_int_equal(rt_ch_queue_depth(h, "retrigger"), 0);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
}

/* The errorsummary artifacts of a run are parsed up to errorsummary_max_bytes in all: past
 * it the summary is incomplete, an infra verdict, not a test failure judged on part of it. */
static void test_errorsummaries_past_the_byte_cap_are_incomplete(void **state)
{
    rt_ch *h = *state;
    rt_ch_setenv(h, "ERRORSUMMARY_MAX_BYTES", "4096"); /* the recorded one is 7,778 bytes */
    json_t *scenario = scenario_new();
    variant v;
    add_variant(scenario, &v, "byte-cap", ES_FAIL, 0);
    rt_ch_scenario(h, scenario);
    json_decref(scenario);
    rt_ch_start_workers(h, 1);
    publish_variant(h, &v, NULL);
    assert_string_equal(rt_ch_wait_verdict(h, v.task_id, 0, WAIT_MS),
                        "infra/incomplete-errorsummary");
    assert_int_equal(rt_ch_queue_depth(h, "retrigger"), 0);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
}

/* ---- 6. SIGTERM ---- */

static void test_sigterm_mid_stream_exits_0_and_loses_no_message(void **state)
{
    rt_ch *h = *state;
    /* A backlog first, so that the workers are busy when the signal comes. */
    rt_ch_declare_pulse(h);
    char *text = rt_test_read_file(rt_test_fixture(FUZZ_DONE), NULL);
    json_t *doc = json_loads(text, 0, NULL);
    free(text);
    enum { N = 1000 };
    for (int i = 0; i < N; i++) {
        char task_id[23];
        rt_ch_slugid(task_id);
        json_object_set_new(json_object_get(doc, "status"), "taskId", json_string(task_id));
        char *body = json_dumps(doc, JSON_COMPACT);
        rt_ch_publish(h, "task-completed", body, strlen(body), NULL, NULL);
        free(body);
    }
    json_decref(doc);
    rt_ch_start_workers(h, 2);
    /* Each finishes the message in hand, acks it, and exits 0. */
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
    /* Whatever they had not acked is still queued: a new worker classifies every run. */
    rt_ch_start_workers(h, 1);
    assert_int_equal(rt_ch_wait_int(h, WAIT_MS, N, SQL_CLASSIFIED, 0, NULL), N);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
    uint32_t left = 1;
    assert_int_equal(rt_amqp_queue_depth(h->amqp, h->pulse_queue, &left), RT_OK);
    assert_int_equal(left, 0);
}

static void test_sigterm_stops_idle_workers_with_status_0(void **state)
{
    rt_ch *h = *state;
    rt_ch_start_workers(h, 3);
    int64_t start = rt_test_now_ms();
    assert_int_equal(rt_ch_stop_workers(h, 5000), 0);
    assert_true(rt_test_now_ms() - start < 5000);
}

/* ---- lanes ---- */

/* The stripe a task group id fell in when retrig-classify had 64 task-group locks picked by
 * this hash: the test picks two groups that shared one. */
static unsigned old_stripe(const char *task_group_id)
{
    unsigned long hash = 5381;
    for (const char *p = task_group_id; *p; p++) hash = hash * 33 + (unsigned char)*p;
    return (unsigned)(hash % 64);
}

/* The listing calls of a task group the fake saw (a JSON array owned by the caller). */
static json_t *group_listings(rt_ch *h, const char *group)
{
    char prefix[96];
    snprintf(prefix, sizeof prefix, "/api/queue/v1/task-group/%s/list", group);
    json_t *calls = rt_fake_calls(&h->fake, prefix);
    assert_non_null(calls);
    return calls;
}

/* A slow listing of one task group stalls no other group, not even one whose id once shared
 * its lock stripe: no lock is held across the network. A failure of the slow group itself
 * waits for the listing under way and lists after it (one listing of a group at a time). */
static void test_a_slow_task_group_listing_stalls_no_other_group(void **state)
{
    rt_ch *h = *state;
    json_t *scenario = scenario_new();
    variant slow, other, sibling;
    add_variant(scenario, &slow, "slow-group", ES_FAIL, 0);
    add_variant(scenario, &other, "same-stripe", ES_FAIL, 0);
    add_variant(scenario, &sibling, "slow-group-sibling", ES_FAIL, 0);
    /* other's group in slow's old stripe; sibling in slow's group. */
    do rt_ch_slugid(other.group);
    while (old_stripe(other.group) != old_stripe(slow.group) || !strcmp(other.group, slow.group));
    snprintf(sibling.group, sizeof sibling.group, "%s", slow.group);
    json_t *tasks = json_object_get(scenario, "tasks");
    json_object_set_new(tasks, other.task_id,
                        rt_ch_task_definition(GWX_DEF, other.group, other.label));
    json_object_set_new(tasks, sibling.task_id,
                        rt_ch_task_definition(GWX_DEF, sibling.group, sibling.label));
    rt_ch_scenario(h, scenario);
    json_decref(scenario);
    /* The slow group's first listing takes 6 s. */
    char regex[128], *rule = NULL;
    snprintf(regex, sizeof regex, "^/api/queue/v1/task-group/%s/list", slow.group);
    json_t *fault = json_pack("{s:s, s:s, s:i, s:i}", "kind", "latency", "path_regex", regex, "ms",
                              6000, "times", 1);
    rule = json_dumps(fault, JSON_COMPACT);
    json_decref(fault);
    assert_int_equal(rt_fake_add_fault(&h->fake, rule), 200);
    free(rule);
    /* Three lanes of one process, each holding one message at a time. */
    rt_ch_setenv(h, "CLASSIFY_CONCURRENCY", "3");
    rt_ch_setenv(h, "AMQP_PREFETCH", "1");
    rt_ch_setenv(h, "HTTP_TIMEOUT_MS", "20000");
    rt_ch_start_workers(h, 1);

    publish_variant(h, &slow, NULL);
    int64_t deadline = rt_test_now_ms() + WAIT_MS;
    json_t *calls = NULL;
    for (;;) { /* until the slow listing is under way */
        json_decref(calls);
        calls = group_listings(h, slow.group);
        if (json_array_size(calls) == 1) break;
        if (rt_test_now_ms() > deadline) fail_msg("the slow group was never listed");
        struct timespec ts = {0, 20 * 1000000L};
        nanosleep(&ts, NULL);
    }
    json_decref(calls);
    publish_variant(h, &other, NULL);
    publish_variant(h, &sibling, NULL);

    /* The other group is classified while the slow listing is still under way. */
    assert_string_equal(rt_ch_wait_verdict(h, other.task_id, 0, WAIT_MS), "retrigger/eligible");
    calls = group_listings(h, slow.group);
    if (!json_is_null(json_object_get(json_array_get(calls, 0), "status")))
        fail_msg("the other group waited for the slow group's listing");
    assert_int_equal(json_array_size(calls), 1); /* the sibling waits for it */
    json_decref(calls);
    assert_string_equal(rt_ch_verdict(h, slow.task_id, 0), "");

    /* The slow group's sibling failure listed only once the slow listing had ended. */
    assert_string_equal(rt_ch_wait_verdict(h, slow.task_id, 0, WAIT_MS), "retrigger/eligible");
    assert_string_equal(rt_ch_wait_verdict(h, sibling.task_id, 0, WAIT_MS), "retrigger/eligible");
    calls = group_listings(h, slow.group);
    assert_int_equal(json_array_size(calls), 2);
    double first = json_number_value(json_object_get(json_array_get(calls, 0), "time"));
    double second = json_number_value(json_object_get(json_array_get(calls, 1), "time"));
    json_decref(calls);
    assert_true(second - first >= 5.9);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_completed_and_exception_fixtures_are_skipped_without_upstream_calls, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_an_exception_without_a_run_id_is_skipped_not_dead_lettered, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_failed_fixture_variants_get_the_verdicts_their_data_implies, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_published_retrigger_request_validates_against_its_schema, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tier_and_pool_policies_skip_fixture_failures, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_try_push_failure_is_skipped_by_project, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_an_out_of_range_classification_is_an_error_not_unclassified, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_duplicated_failure_requests_one_set_even_after_redis_flush, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_platform_budget_is_never_exceeded_by_concurrent_workers, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_claim_redis_lost_is_cut_to_what_the_postgres_ledger_leaves, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_claim_the_postgres_ledger_cannot_cover_is_budget_exhausted, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_malformed_messages_are_dead_lettered_with_reasons_and_consumption_goes_on, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_upstream_503_is_retried_through_delay_queues_then_classified, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_permanent_upstream_failure_is_dead_lettered_after_the_last_delay, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_an_errorsummary_over_the_time_budget_is_retried_then_dead_lettered, setup,
            teardown),
        cmocka_unit_test_setup_teardown(test_errorsummaries_past_the_byte_cap_are_incomplete, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_sigterm_mid_stream_exits_0_and_loses_no_message, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_sigterm_stops_idle_workers_with_status_0, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_slow_task_group_listing_stalls_no_other_group, setup,
                                        teardown),
    };
    signal(SIGPIPE, SIG_IGN);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
