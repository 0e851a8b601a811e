/* SPDX-License-Identifier: MPL-2.0 */
/* test_decide.c - retrig-decide end to end: a recorded failure (the GWxTc8p fixture made
 * to fail, with its errorsummary) goes through real retrig-classify, retrig-retrigger (the
 * fake's Hawk-checked hook) and retrig-decide processes on the local RabbitMQ, Redis and
 * Postgres. The test plays Taskcluster's Pulse messages for the retriggered runs and
 * registers their Treeherder jobs and bug_suggestions in the fake: a reproducing run gets
 * the original's (treeherder/bug_suggestions.json), another run a different line. Pins the
 * "Done when" points of issue 5: regression decided after the second reproduction, before
 * the last retrigger; intermittent; logs pending for a while; logs never parsed (undecided
 * after the cap); Treeherder 500s retried; the deadline sweeper; the decision event valid
 * against its schema; the pending retrigger cancelled when asked. And issue 7's: the
 * decision's lines carry their test's cross-branch history (rows inserted directly into
 * the history tables), and `retrig explain` shows it. And issue 24's culprit search: the
 * window from the fake's push history (the failing push is the culprit when the label
 * passed on the push before), the bisection with add-new-jobs through retrig-retrigger
 * across a lost answer, a killed worker and a redelivered request, and the budget running
 * out, a probe whose runs never come (probe-timeout) and a dry-run probe; the culprit in the
 * database, `retrig explain`, `retrig decisions` and the culprit event. */
#include "support/util.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/core/bugsug.h"
#include "common/core/culprit.h"
#include "common/core/culprit_adaptive.h"
#include "common/options.h"
#include "support/classify_harness.h"
#include "support/endpoint.h"
#include "support/fixtures.h"

#define GWX_PULSE    "pulse/treeherder_task-completed_GWxTc8p_RUa5_Xo4RtMiCA.json"
#define GWX_DEF      "taskcluster/task_definition_GWxTc8p_RUa5_Xo4RtMiCA.json"
#define GWX_ROUTE    "tc-treeherder.v2.autoland.b437ae030825a8ea9fa7a632b1fcb9becbe11f69.88560"
#define GWX_LABEL    "test-android-em-7.0-x86_64/debug-mochitest-e10s-1"
#define GWX_REVISION "b437ae030825a8ea9fa7a632b1fcb9becbe11f69"
#define DEC_FIX      "taskcluster/task_definition_build-android-api-16-debug.json"
#define ES_FAIL      "errorsummary/mochitest-browser-chrome_errorsummary.log"
#define BUGSUG       "treeherder/bug_suggestions.json"
#define CLIENT_ID    "project/retrig/decide-test"
#define TOKEN        "fake-access-token-decide-0123456789"
#define DELAYS       "200,400,800,1600"
#define WAIT_MS      20000

/* One failing push: the decision task (= task group), the original failed task. */
typedef struct push {
    char group[23];
    char original[23];
    char label[256];
    long job;
    char set_id[32];
} push;

typedef struct fixture {
    rt_ch *h;
    rt_amqp *events; /* consumes <ns>.decisions through a queue of our own */
    char events_queue[160];
    bool adaptive; /* decide_policy = adaptive: a regression's reason is "confident" */
    json_t *probe_actions_replace; /* more text replacements of the history pushes'
                                    * actions.json (a hostile template); NULL: none */
} fixture;

static long next_job_id(void)
{
    static long id;
    if (!id) id = 400000000L + (random() % 1000000) * 100;
    return ++id;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->h = rt_ch_new();
    rt_ch *h = f->h;
    rt_ch_setenv(h, "RETRIGGERS_PER_FAILURE", "3");
    rt_ch_setenv(h, "TASKCLUSTER_CLIENT_ID", CLIENT_ID);
    rt_ch_setenv(h, "TASKCLUSTER_ACCESS_TOKEN", TOKEN);
    rt_ch_setenv(h, "DECIDE_DELAYS_MS", DELAYS);

    /* The decision events, as a bot would read them. */
    char err[RT_ERRSTR_SIZE] = "", exchange[160];
    rt_amqp_options opts;
    rt_amqp_options_from_config(&opts, &h->cfg, "test-events");
    assert_int_equal(rt_amqp_new(&f->events, &opts, err), RT_OK);
    assert_int_equal(rt_amqp_ensure_connected(f->events, 10000), RT_OK);
    snprintf(exchange, sizeof exchange, "%s.decisions", h->ns);
    snprintf(f->events_queue, sizeof f->events_queue, "%s.test-events", h->ns);
    rt_amqp_queue_args args = {.auto_delete = false};
    assert_int_equal(rt_amqp_declare_exchange(f->events, exchange, "topic"), RT_OK);
    assert_int_equal(rt_amqp_declare_queue(f->events, f->events_queue, &args), RT_OK);
    assert_int_equal(rt_amqp_bind_queue(f->events, f->events_queue, exchange, "#"), RT_OK);
    assert_int_equal(rt_amqp_consume(f->events, f->events_queue), RT_OK);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    char q[256];
    if (rt_amqp_delete_queue(f->events, f->events_queue) != RT_OK) {}
    char delays[] = DELAYS, *save = NULL;
    for (char *d = strtok_r(delays, ",", &save); d; d = strtok_r(NULL, ",", &save)) {
        snprintf(q, sizeof q, "%s.decide.delay.%s", f->h->ns, d);
        if (rt_amqp_delete_queue(f->events, q) != RT_OK) {}
    }
    snprintf(q, sizeof q, "%s.decisions", f->h->ns);
    if (rt_amqp_delete_exchange(f->events, q) != RT_OK) {}
    rt_amqp_free(f->events);
    rt_ch_free(f->h);
    json_decref(f->probe_actions_replace);
    free(f);
    return 0;
}

static void start_all(rt_ch *h)
{
    rt_ch_start_workers(h, 1);
    rt_ch_start_program(h, "retrig-retrigger", 1);
    rt_ch_start_program(h, "retrig-decide", 1);
}

/* A Treeherder job for a run, with its bug_suggestions (NULL: the fixture's). */
static void add_job(rt_ch *h, const char *task_id, long job, json_t *bug_suggestions)
{
    char id[32];
    snprintf(id, sizeof id, "%ld", job);
    json_t *s =
        json_pack("{s:{s:[{s:I, s:i, s:s, s:s, s:i}]}, s:{s:o}}", "jobs", task_id, "id",
                  (json_int_t)job, "retry_id", 0, "result", "testfailed", "state", "completed",
                  "failure_classification_id", 1, "bug_suggestions", id,
                  bug_suggestions ? bug_suggestions : json_pack("{s:s}", "fixture", BUGSUG));
    rt_ch_scenario(h, s);
    json_decref(s);
}

/* A different failure than the original's: the run failed, but not the same way. */
static json_t *other_failure(void)
{
    return json_pack(
        "[{s:s, s:[], s:s, s:{s:[], s:[]}}]", "search",
        "TEST-UNEXPECTED-FAIL | dom/base/test/browser_other.js | a different assertion",
        "search_terms", "path_end", "dom/base/test/browser_other.js", "bugs", "open_recent",
        "all_others");
}

/* The failure goes through classify and retrigger: the set exists and its action ran. */
static void fail_original(fixture *f, push *p)
{
    rt_ch *h = f->h;
    rt_ch_slugid(p->group);
    rt_ch_slugid(p->original);
    snprintf(p->label, sizeof p->label, "%s-%s", GWX_LABEL, p->group);
    json_t *s =
        json_pack("{s:{s:{s:s, s:{s:s}}, s:o}, s:{s:{s:[o]}, s:{s:o}}, s:{s:s}}", "tasks", p->group,
                  "fixture", DEC_FIX, "override", "taskGroupId", p->group, p->original,
                  rt_ch_task_definition(GWX_DEF, p->group, p->label), "artifacts", p->group, "0",
                  rt_ch_actions_artifact(p->group, GWX_REVISION), p->original, "0",
                  json_pack("[{s:s, s:s}, {s:s, s:s}]", "name", "public/logs/live_backing.log",
                            "content", "recorded log\n", "name",
                            "public/test_info/mochitest_errorsummary.log", "fixture", ES_FAIL),
                  "hook_clients", CLIENT_ID, TOKEN);
    rt_ch_scenario(h, s);
    json_decref(s);
    p->job = next_job_id();
    add_job(h, p->original, p->job, NULL);

    char *body = rt_ch_failed_message(GWX_PULSE, p->original, p->group);
    rt_ch_publish(h, "task-failed", body, strlen(body), GWX_ROUTE, NULL);
    free(body);
    const char *params[] = {p->original};
    assert_int_equal(rt_ch_wait_int(h, WAIT_MS, 1,
                                    "SELECT count(*) FROM retrigger_actions a JOIN retrigger_sets s"
                                    " ON s.id = a.set_id WHERE s.original_task_id = $1"
                                    " AND a.outcome = 'triggered'",
                                    1, params),
                     1);
    char *id = rt_ch_sql_text(h, "SELECT id::text FROM retrigger_sets WHERE original_task_id = $1",
                              1, params);
    assert_non_null(id);
    snprintf(p->set_id, sizeof p->set_id, "%s", id);
    free(id);
}

typedef enum { RUN_REPRODUCES, RUN_OTHER_FAILURE, RUN_PASSES } run_kind;

/* A retriggered run of the push resolves: its task and Treeherder job `job` (0: a new id)
 * in the fake, then its Pulse message (the recorded one with a new task id, tags.label and
 * the push's CC route). */
static void resolve_retrigger(fixture *f, const push *p, run_kind kind, char task_id[23], long job)
{
    rt_ch *h = f->h;
    rt_ch_slugid(task_id);
    json_t *s = json_pack("{s:{s:o}}", "tasks", task_id,
                          rt_ch_task_definition(GWX_DEF, p->group, p->label));
    rt_ch_scenario(h, s);
    json_decref(s);
    long id = job ? job : next_job_id();
    if (kind != RUN_PASSES)
        add_job(h, task_id, id, kind == RUN_OTHER_FAILURE ? other_failure() : NULL);

    json_t *body = NULL;
    if (kind == RUN_PASSES) {
        json_t *wrapper = json_load_file(rt_test_fixture(GWX_PULSE), 0, NULL);
        assert_non_null(wrapper);
        body = json_deep_copy(json_object_get(wrapper, "payload"));
        json_decref(wrapper);
    } else {
        char *text = rt_test_failed_variant(GWX_PULSE, 1);
        body = json_loads(text, 0, NULL);
        free(text);
    }
    assert_non_null(body);
    json_t *status = json_object_get(body, "status");
    json_object_set_new(status, "taskId", json_string(task_id));
    json_object_set_new(status, "taskGroupId", json_string(p->group));
    json_object_set_new(body, "task", json_pack("{s:{s:s}}", "tags", "label", p->label));
    char *text = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    rt_ch_publish(h, kind == RUN_PASSES ? "task-completed" : "task-failed", text, strlen(text),
                  GWX_ROUTE, NULL);
    free(text);
}

/* Waits until the run is a member of the set (retrig-classify recorded it). */
static void wait_member(rt_ch *h, const push *p, const char *task_id)
{
    const char *params[] = {p->set_id, task_id};
    assert_int_equal(rt_ch_wait_int(h, WAIT_MS, 1,
                                    "SELECT count(*) FROM retrigger_set_members"
                                    " WHERE set_id = $1::bigint AND task_id = $2",
                                    2, params),
                     1);
}

static bool decided(rt_ch *h, const push *p, int timeout_ms)
{
    const char *params[] = {p->set_id};
    return rt_ch_wait_int(h, timeout_ms, 1,
                          "SELECT count(*) FROM decisions WHERE set_id = $1::bigint", 1,
                          params) == 1;
}

/* "verdict/reason" of the decision (malloc'd). */
static char *decision(rt_ch *h, const push *p)
{
    const char *params[] = {p->set_id};
    char *v = rt_ch_sql_text(h,
                             "SELECT verdict || '/' || reason FROM decisions"
                             " WHERE set_id = $1::bigint",
                             1, params);
    assert_non_null(v);
    return v;
}

static long long evidence_int(rt_ch *h, const push *p, const char *path)
{
    const char *params[] = {p->set_id, path};
    return rt_ch_sql_int(h,
                         "SELECT (evidence #>> $2::text[])::bigint FROM decisions"
                         " WHERE set_id = $1::bigint",
                         2, params);
}

/* Takes the next decision event (at most timeout_ms); NULL when none came. */
static char *take_event(fixture *f, int timeout_ms)
{
    int64_t deadline = rt_test_now_ms() + timeout_ms;
    while (rt_test_now_ms() < deadline) {
        rt_amqp_message m = {0};
        if (rt_amqp_next(f->events, &m, 100) != RT_OK) continue;
        char *body = strdup(m.body);
        char key[256];
        snprintf(key, sizeof key, "%s", m.routing_key);
        assert_int_equal(rt_amqp_ack(f->events, &m), RT_OK);
        rt_amqp_message_free(&m);
        json_t *doc = json_loads(body, 0, NULL);
        assert_non_null(doc);
        char want[256];
        const char *kind = json_string_value(json_object_get(doc, "kind"));
        snprintf(want, sizeof want, "%s.%s", json_string_value(json_object_get(doc, "project")),
                 kind ? kind : json_string_value(json_object_get(doc, "verdict")));
        assert_string_equal(key, want); /* routing key <project>.<verdict>, <project>.culprit */
        json_decref(doc);
        return body;
    }
    return NULL;
}

static void assert_event_valid(const char *body)
{
    char *error = NULL;
    int rc = rt_ch_validate_schema(RT_TEST_SOURCE_DIR "/queue-schemas/decision-event.json", body,
                                   &error);
    if (rc != 0) fail_msg("decision event does not validate: %s\n%s", error ? error : "", body);
    free(error);
}

static size_t calls_matching(rt_ch *h, const char *prefix, const char *needle)
{
    json_t *calls = rt_fake_calls(&h->fake, prefix);
    assert_non_null(calls);
    size_t n = 0, i;
    json_t *c;
    json_array_foreach(calls, i, c)
    {
        const char *q = json_string_value(json_object_get(c, "query"));
        if (!needle || (q && strstr(q, needle))) n++;
    }
    json_decref(calls);
    return n;
}

/* ---- scenarios ---- */

static void test_every_retrigger_reproducing_is_a_regression_decided_after_the_second(void **state)
{
    fixture *f = *state;
    rt_ch *h = f->h;
    rt_ch_setenv(h, "DECIDE_CANCEL_PENDING", "true");
    start_all(h);
    push p;
    fail_original(f, &p);

    /* The third retrigger is still pending in the push's task group. */
    char third[23];
    rt_ch_slugid(third);
    json_t *s = json_pack("{s:{s:o}, s:{s:{s:s, s:[{s:i, s:s, s:s, s:s}]}}}", "tasks", third,
                          rt_ch_task_definition(GWX_DEF, p.group, p.label), "statuses", third,
                          "state", "pending", "runs", "runId", 0, "state", "pending",
                          "reasonCreated", "scheduled", "scheduled", "2024-05-01T10:00:00.000Z");
    rt_ch_scenario(h, s);
    json_decref(s);

    char r1[23], r2[23];
    resolve_retrigger(f, &p, RUN_REPRODUCES, r1, 0);
    wait_member(h, &p, r1);
    sleep_ms(300); /* one reproduction is not enough: nothing may be decided yet */
    assert_false(decided(h, &p, 0));
    resolve_retrigger(f, &p, RUN_REPRODUCES, r2, 0);
    assert_true(decided(h, &p, WAIT_MS));

    char *v = decision(h, &p);
    assert_string_equal(v, "regression/reproduced");
    free(v);
    /* Decided before the third retrigger arrived: it counted as pending. */
    assert_int_equal(evidence_int(h, &p, "{counts,pending}"), 1);
    assert_int_equal(evidence_int(h, &p, "{counts,compared}"), 2);
    assert_int_equal(evidence_int(h, &p, "{threshold}"), 2);
    assert_int_equal(evidence_int(h, &p, "{lines,0,reproduced}"), 2);
    assert_int_equal(evidence_int(h, &p, "{classification_id}"), 1);
    const char *params[] = {p.set_id};
    assert_int_equal(rt_ch_sql_int(h,
                                   "SELECT count(*) FROM retrigger_sets s JOIN decisions d"
                                   " ON d.set_id = s.id WHERE s.id = $1::bigint"
                                   " AND s.status = 'decided' AND d.retriggers_requested_at"
                                   " IS NOT NULL AND d.failure_seen_at <= d.decided_at",
                                   1, params),
                     1);
    assert_int_equal(rt_ch_sql_int(h,
                                   "SELECT count(*) FROM retrigger_set_members WHERE"
                                   " set_id = $1::bigint AND result = 'same-failure'",
                                   1, params),
                     2);

    /* The event: valid, and naming both reproducing retriggers. */
    char *event = take_event(f, WAIT_MS);
    assert_non_null(event);
    assert_event_valid(event);
    assert_non_null(strstr(event, r1));
    assert_non_null(strstr(event, r2));
    free(event);

    /* The pending third retrigger was cancelled, with Hawk. */
    char path[128];
    snprintf(path, sizeof path, "/api/queue/v1/task/%s/cancel", third);
    assert_true(rt_ch_wait_int(h, WAIT_MS, 1,
                               "SELECT coalesce((evidence #>> '{cancelled,count}')::int, -1)"
                               " FROM decisions WHERE set_id = $1::bigint",
                               1, params) == 1);
    json_t *calls = rt_fake_calls(&h->fake, path);
    assert_int_equal(json_array_size(calls), 1);
    assert_true(
        json_is_true(json_object_get(json_object_get(json_array_get(calls, 0), "hawk"), "valid")));
    json_decref(calls);

    /* The third arriving later changes nothing and publishes nothing. */
    char r3[23];
    resolve_retrigger(f, &p, RUN_PASSES, r3, 0);
    wait_member(h, &p, r3);
    sleep_ms(300);
    v = decision(h, &p);
    assert_string_equal(v, "regression/reproduced");
    free(v);
    assert_null(take_event(f, 300));
    assert_int_equal(rt_ch_queue_depth(h, "dead-letter"), 0);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
}

static void test_one_reproduction_of_three_is_an_intermittent(void **state)
{
    fixture *f = *state;
    rt_ch *h = f->h;
    start_all(h);
    push p;
    fail_original(f, &p);
    char r1[23], r2[23], r3[23];
    resolve_retrigger(f, &p, RUN_REPRODUCES, r1, 0);
    resolve_retrigger(f, &p, RUN_PASSES, r2, 0);
    wait_member(h, &p, r2);
    resolve_retrigger(f, &p, RUN_OTHER_FAILURE, r3, 0);
    assert_true(decided(h, &p, WAIT_MS));
    char *v = decision(h, &p);
    assert_string_equal(v, "intermittent/not-reproduced");
    free(v);
    assert_int_equal(evidence_int(h, &p, "{counts,compared}"), 3);
    assert_int_equal(evidence_int(h, &p, "{counts,pending}"), 0);
    assert_int_equal(evidence_int(h, &p, "{lines,0,reproduced}"), 1);
    const char *params[] = {p.set_id, r3};
    char *result = rt_ch_sql_text(h,
                                  "SELECT result FROM retrigger_set_members"
                                  " WHERE set_id = $1::bigint AND task_id = $2",
                                  2, params);
    assert_non_null(result);
    assert_string_equal(result, "other-failure");
    free(result);
    char *event = take_event(f, WAIT_MS);
    assert_non_null(event);
    assert_event_valid(event);
    assert_non_null(strstr(event, "\"verdict\":\"intermittent\""));
    free(event);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
}

static void test_logs_pending_for_a_while_are_waited_for_then_decided(void **state)
{
    fixture *f = *state;
    rt_ch *h = f->h;
    start_all(h);
    push p;
    fail_original(f, &p);
    char r1[23], r2[23];
    resolve_retrigger(f, &p, RUN_REPRODUCES, r1, 0);
    wait_member(h, &p, r1);
    /* The second run's logs stay pending for its first three looks. */
    long upcoming = next_job_id();
    char fault[160];
    snprintf(fault, sizeof fault,
             "{\"kind\": \"parse_pending\", \"path_prefix\": \"/api/project/\", \"times\": 3,"
             " \"job_id\": %ld}",
             upcoming);
    assert_int_equal(rt_fake_add_fault(&h->fake, fault), 200);
    resolve_retrigger(f, &p, RUN_REPRODUCES, r2, upcoming);
    assert_true(decided(h, &p, WAIT_MS));
    char *v = decision(h, &p);
    assert_string_equal(v, "regression/reproduced");
    free(v);
    char needle[48];
    snprintf(needle, sizeof needle, "job_id=%ld", upcoming);
    assert_true(calls_matching(h, "/api/project/", needle) >= 4); /* 3 pending, then parsed */
    /* The parsed look came back through a delay queue (every first look saw pending). */
    assert_true(evidence_int(h, &p, "{attempt}") >= 2);
    char *event = take_event(f, WAIT_MS);
    assert_non_null(event);
    assert_event_valid(event);
    free(event);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
}

/* One retrigger whose logs are never parsed does not end the set: after the last delay it
 * stays pending (until the set's deadline), and the verdict comes from the others (issue
 * 17, item 2). */
static void
test_a_retrigger_whose_logs_never_parse_stays_pending_and_the_others_decide(void **state)
{
    fixture *f = *state;
    rt_ch *h = f->h;
    rt_ch_setenv(h, "DECIDE_DELAYS_MS", "200,400");
    start_all(h);
    push p;
    fail_original(f, &p);
    char r1[23], r2[23], r3[23];
    long upcoming = next_job_id();
    char fault[160];
    snprintf(fault, sizeof fault,
             "{\"kind\": \"parse_pending\", \"path_prefix\": \"/api/project/\", \"job_id\": %ld}",
             upcoming);
    assert_int_equal(rt_fake_add_fault(&h->fake, fault), 200);
    resolve_retrigger(f, &p, RUN_REPRODUCES, r1, upcoming); /* its logs never parse */
    wait_member(h, &p, r1);
    /* Both delays waited, and more: still no decision, nothing dead-lettered. */
    char needle[48];
    snprintf(needle, sizeof needle, "job_id=%ld", upcoming);
    int64_t deadline = rt_test_now_ms() + WAIT_MS;
    while (calls_matching(h, "/api/project/", needle) < 3 && rt_test_now_ms() < deadline)
        rt_test_pause_ms(50);
    assert_true(calls_matching(h, "/api/project/", needle) >= 3); /* first look + 2 delays */
    rt_test_pause_ms(800);
    assert_false(decided(h, &p, 10));
    assert_int_equal(rt_ch_queue_depth(h, "dead-letter"), 0);
    /* The others reproduce the failure: a regression, with r1 still pending. */
    resolve_retrigger(f, &p, RUN_REPRODUCES, r2, 0);
    resolve_retrigger(f, &p, RUN_REPRODUCES, r3, 0);
    assert_true(decided(h, &p, WAIT_MS));
    char *v = decision(h, &p);
    assert_string_equal(v, "regression/reproduced");
    free(v);
    assert_true(evidence_int(h, &p, "{counts,pending}") >= 1);
    char *event = take_event(f, WAIT_MS);
    assert_non_null(event);
    assert_event_valid(event);
    free(event);
    assert_int_equal(rt_ch_queue_depth(h, "dead-letter"), 0);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
}

static void test_treeherder_500s_are_retried_then_decided(void **state)
{
    fixture *f = *state;
    rt_ch *h = f->h;
    start_all(h);
    push p;
    fail_original(f, &p);
    assert_int_equal(rt_fake_add_fault(&h->fake,
                                       "{\"kind\": \"status\", \"status\": 500,"
                                       " \"path_prefix\": \"/api/project/\", \"times\": 3}"),
                     200);
    char r1[23], r2[23];
    resolve_retrigger(f, &p, RUN_REPRODUCES, r1, 0);
    resolve_retrigger(f, &p, RUN_REPRODUCES, r2, 0);
    assert_true(decided(h, &p, WAIT_MS));
    char *v = decision(h, &p);
    assert_string_equal(v, "regression/reproduced");
    free(v);
    json_t *calls = rt_fake_calls(&h->fake, "/api/project/");
    size_t faulted = 0, i;
    json_t *c;
    json_array_foreach(calls, i, c)
    {
        if (json_integer_value(json_object_get(c, "status")) == 500) faulted++;
    }
    json_decref(calls);
    assert_int_equal(faulted, 3);
    char *event = take_event(f, WAIT_MS);
    assert_non_null(event);
    assert_event_valid(event);
    free(event);
    assert_int_equal(rt_ch_queue_depth(h, "dead-letter"), 0);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
}

static void test_set_past_its_deadline_is_decided_with_what_is_there(void **state)
{
    fixture *f = *state;
    rt_ch *h = f->h;
    rt_ch_setenv(h, "SET_DEADLINE_MINUTES", "5");
    rt_ch_setenv(h, "DECIDE_SWEEP_INTERVAL_S", "1");
    /* A set written as classify and retrigger left it, an hour ago: one retrigger of three
     * came back and reproduced; the others never did. */
    char original[23], r1[23], group[23];
    rt_ch_slugid(original);
    rt_ch_slugid(r1);
    rt_ch_slugid(group);
    long job0 = next_job_id(), job1 = next_job_id();
    add_job(h, original, job0, NULL);
    add_job(h, r1, job1, NULL);
    const char *params[] = {GWX_LABEL, original, group};
    long long set_id = rt_ch_sql_int(h,
                                     "INSERT INTO retrigger_sets (project, revision, label,"
                                     " platform, original_task_id, original_run_id,"
                                     " retrigger_count, task_group_id, status, created_at,"
                                     " request_published_at) VALUES ('autoland',"
                                     " 'b437ae030825a8ea9fa7a632b1fcb9becbe11f69', $1,"
                                     " 'android-em-7-0-x86_64', $2, 0, 3, $3, 'requested',"
                                     " now() - interval '1 hour', now() - interval '1 hour')"
                                     " RETURNING id",
                                     3, params);
    char id[32];
    snprintf(id, sizeof id, "%lld", set_id);
    const char *mparams[] = {id, r1};
    assert_int_equal(rt_ch_sql_int(h,
                                   "INSERT INTO retrigger_set_members (set_id, task_id, run_id,"
                                   " role, state) VALUES ($1::bigint, $2, 0, 'retrigger',"
                                   " 'failed') RETURNING 1",
                                   2, mparams),
                     1);
    rt_ch_start_program(h, "retrig-decide", 1);
    push p = {0};
    snprintf(p.set_id, sizeof p.set_id, "%s", id);
    assert_true(decided(h, &p, WAIT_MS));
    char *v = decision(h, &p);
    assert_string_equal(v, "undecided/retriggers-missing");
    free(v);
    assert_int_equal(evidence_int(h, &p, "{counts,missing}"), 2);
    const char *sparams[] = {id};
    assert_int_equal(rt_ch_sql_int(h,
                                   "SELECT count(*) FROM retrigger_sets WHERE id = $1::bigint"
                                   " AND deadline_requested_at IS NOT NULL"
                                   " AND status = 'decided'",
                                   1, sparams),
                     1);
    char *event = take_event(f, WAIT_MS);
    assert_non_null(event);
    assert_event_valid(event);
    free(event);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
}

/* Treeherder answers 503 to a retrigger's bug_suggestions, for good, on a set past its
 * deadline. It used to be left open forever (each sweep asked again and left it); now the
 * deadline request is looked at again after each delay and then decided
 * undecided/upstream-unavailable, with the evidence it had. */
static void test_bug_suggestions_failing_past_the_deadline_end_undecided(void **state)
{
    fixture *f = *state;
    rt_ch *h = f->h;
    rt_ch_setenv(h, "SET_DEADLINE_MINUTES", "5");
    rt_ch_setenv(h, "DECIDE_SWEEP_INTERVAL_S", "1");
    char original[23], r1[23], r2[23], group[23];
    rt_ch_slugid(original);
    rt_ch_slugid(r1);
    rt_ch_slugid(r2);
    rt_ch_slugid(group);
    long job0 = next_job_id(), job1 = next_job_id(), job2 = next_job_id();
    add_job(h, original, job0, NULL);
    add_job(h, r1, job1, NULL);
    add_job(h, r2, job2, other_failure());
    char fault[256];
    snprintf(fault, sizeof fault,
             "{\"kind\": \"status\", \"status\": 503,"
             " \"path_prefix\": \"/api/project/autoland/jobs/%ld/bug_suggestions\"}",
             job1);
    assert_int_equal(rt_fake_add_fault(&h->fake, fault), 200);
    const char *params[] = {GWX_LABEL, original, group};
    long long set_id = rt_ch_sql_int(h,
                                     "INSERT INTO retrigger_sets (project, revision, label,"
                                     " platform, original_task_id, original_run_id,"
                                     " retrigger_count, task_group_id, status, created_at,"
                                     " request_published_at) VALUES ('autoland',"
                                     " 'b437ae030825a8ea9fa7a632b1fcb9becbe11f69', $1,"
                                     " 'android-em-7-0-x86_64', $2, 0, 3, $3, 'requested',"
                                     " now() - interval '1 hour', now() - interval '1 hour')"
                                     " RETURNING id",
                                     3, params);
    char id[32];
    snprintf(id, sizeof id, "%lld", set_id);
    const char *runs[] = {r1, r2};
    for (int i = 0; i < 2; i++) {
        const char *mparams[] = {id, runs[i]};
        assert_int_equal(rt_ch_sql_int(h,
                                       "INSERT INTO retrigger_set_members (set_id, task_id,"
                                       " run_id, role, state) VALUES ($1::bigint, $2, 0,"
                                       " 'retrigger', 'failed') RETURNING 1",
                                       2, mparams),
                         1);
    }
    rt_ch_start_program(h, "retrig-decide", 1);
    push p = {0};
    snprintf(p.set_id, sizeof p.set_id, "%s", id);
    assert_true(decided(h, &p, WAIT_MS));
    char *v = decision(h, &p);
    assert_string_equal(v, "undecided/upstream-unavailable");
    free(v);
    /* The evidence it had: r2 failed otherwise, r1 unreadable, the third never came. */
    assert_int_equal(evidence_int(h, &p, "{counts,failed}"), 1);
    assert_int_equal(evidence_int(h, &p, "{counts,pending}"), 2);
    assert_int_equal(evidence_int(h, &p, "{counts,missing}"), 1);
    assert_true(calls_matching(h, "/api/project/autoland/jobs/", NULL) > 0);
    char *event = take_event(f, WAIT_MS);
    assert_non_null(event);
    assert_event_valid(event);
    free(event);
    assert_int_equal(rt_ch_queue_depth(h, "dead-letter"), 0);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
}

/* ---- the test history in the decision ---- */

#define HISTORY_GROUP "toolkit/components/pictureinpicture/tests/browser.ini"

/* One run of the history (repository gecko) failing `test` with `signature` days_ago days
 * ago, or, when test is NULL, a run of HISTORY_GROUP in which nothing failed. */
static void history_run(rt_ch *h, const char *project, const char *push_id, const char *revision,
                        bool main, double days_ago, const rt_failure_line *line,
                        const char *signature)
{
    static int n;
    char key[32], days[32], branch_key[64];
    snprintf(key, sizeof key, "history-%d", ++n);
    snprintf(days, sizeof days, "%.3f", days_ago);
    snprintf(branch_key, sizeof branch_key, "%s%s%s", project, strcmp(project, "try") ? "" : ":",
             strcmp(project, "try") ? "" : push_id);
    const char *run[] = {key,      project, main ? "main" : "other", branch_key, push_id,
                         revision, days};
    char *id = rt_ch_sql_text(
        h,
        "INSERT INTO history_runs (source, run_key, repository, project, branch, branch_class,"
        " branch_key, push, revision, run_at, complete_results) VALUES ('taskcluster', $1,"
        " 'gecko', $2, $2, $3, $4, $5, $6, now() - make_interval(secs => $7::float8 * 86400),"
        " false) RETURNING id::text",
        7, run);
    assert_non_null(id);
    if (!line) {
        const char *group[] = {id, HISTORY_GROUP};
        assert_int_equal(rt_ch_sql_int(h,
                                       "INSERT INTO history_groups (run_id, group_name, status,"
                                       " failed, run_at) SELECT $1::bigint, $2, 'OK', false,"
                                       " run_at FROM history_runs WHERE id = $1::bigint"
                                       " RETURNING 1",
                                       2, group),
                         1);
    } else {
        char hash[17];
        snprintf(hash, sizeof hash, "%016llx",
                 (unsigned long long)rt_failure_line_hash(signature, strlen(signature)));
        const char *test[] = {id, line->test, HISTORY_GROUP, signature, hash};
        assert_int_equal(rt_ch_sql_int(h,
                                       "INSERT INTO history_tests (run_id, test, group_name,"
                                       " status, failed, message, signature, signature_hash,"
                                       " run_at) SELECT $1::bigint, $2, $3, 'FAIL', true, 'm',"
                                       " $4, $5, run_at FROM history_runs WHERE id = $1::bigint"
                                       " RETURNING 1",
                                       5, test),
                         1);
    }
    free(id);
}

static void test_decision_carries_the_cross_branch_history_of_each_failing_line(void **state)
{
    fixture *f = *state;
    rt_ch *h = f->h;
    /* The original's first line, as retrig-decide reads it from bug_suggestions. */
    size_t len = 0;
    char *body = rt_test_read_file(rt_test_fixture(BUGSUG), &len);
    rt_bugsug sug;
    char err[RT_ERRSTR_SIZE] = "";
    rt_bugsug_options opts = {0};
    assert_int_equal(rt_bugsug_parse(body, len, &opts, &sug, err), RT_OK);
    free(body);
    assert_true(sug.nlines >= 2);
    const rt_failure_line *line = &sug.lines[0];
    char other_signature[512];
    snprintf(other_signature, sizeof other_signature, "%s | %s | another message", line->status,
             line->test);

    /* The history of its test in the last 7 days, on other pushes: two try pushes and an
     * autoland push with the same signature, a try push with another one (4 pushes, 3
     * branches under review, 1 on main, 3 with this signature); a run of its group that passed; the
     * push decided about itself (not "other"); and, 20 days ago, its first failure on
     * mozilla-central (outside the window). */
    history_run(h, "try", "101", "a101", false, 1, line, line->signature);
    history_run(h, "try", "102", "a102", false, 2, line, other_signature);
    history_run(h, "try", "104", "a104", false, 2.5, line, line->signature);
    history_run(h, "autoland", "200", "a200", true, 3, line, line->signature);
    history_run(h, "try", "103", "a103", false, 1.5, NULL, NULL);
    history_run(h, "autoland", "88560", "b437ae030825a8ea9fa7a632b1fcb9becbe11f69", true, 0.01,
                line, line->signature);
    history_run(h, "mozilla-central", "300", "c300", true, 20, line, line->signature);
    /* Another test's failures count for nothing. */
    rt_failure_line other = *line;
    other.test = "dom/base/test/browser_unrelated.js";
    history_run(h, "try", "105", "a105", false, 1, &other, "TEST-UNEXPECTED-FAIL | x | y");

    /* A set as retrig-classify and retrig-retrigger leave it: the original and two
     * retriggers failed with the original's lines. */
    char original[23], r1[23], r2[23];
    rt_ch_slugid(original);
    rt_ch_slugid(r1);
    rt_ch_slugid(r2);
    add_job(h, original, next_job_id(), NULL);
    add_job(h, r1, next_job_id(), NULL);
    add_job(h, r2, next_job_id(), NULL);
    const char *params[] = {GWX_LABEL, original};
    long long set_id = rt_ch_sql_int(h,
                                     "INSERT INTO retrigger_sets (project, revision, label,"
                                     " platform, original_task_id, original_run_id,"
                                     " retrigger_count, status, request_published_at)"
                                     " VALUES ('autoland',"
                                     " 'b437ae030825a8ea9fa7a632b1fcb9becbe11f69', $1,"
                                     " 'android-em-7-0-x86_64', $2, 0, 2, 'requested', now())"
                                     " RETURNING id",
                                     2, params);
    push p = {0};
    snprintf(p.set_id, sizeof p.set_id, "%lld", set_id);
    const char *mparams[] = {p.set_id, r1, r2};
    assert_int_equal(
        rt_ch_sql_int(h,
                      "WITH m AS (INSERT INTO retrigger_set_members (set_id, task_id, run_id,"
                      " role, state, resolved_at) VALUES ($1::bigint, $2, 0, 'retrigger',"
                      " 'failed', now()), ($1::bigint, $3, 0, 'retrigger', 'failed', now())"
                      " RETURNING 1) SELECT count(*) FROM m",
                      3, mparams),
        2);
    rt_ch_start_program(h, "retrig-decide", 1);
    char request[256];
    snprintf(request, sizeof request,
             "{\"version\":1,\"set_id\":%s,\"project\":\"autoland\",\"attempt\":1,"
             "\"reason\":\"member-resolved: %s\"}",
             p.set_id, r2);
    assert_int_equal(rt_amqp_publish(h->amqp, h->ns, "decide", request, strlen(request), NULL),
                     RT_OK);
    assert_true(decided(h, &p, WAIT_MS));
    char *v = decision(h, &p);
    assert_string_equal(v, "regression/reproduced");
    free(v);

    /* The first line's history, as counted above. */
    assert_int_equal(evidence_int(h, &p, "{lines,0,history,window_days}"), 7);
    assert_int_equal(evidence_int(h, &p, "{lines,0,history,failures}"), 4);
    assert_int_equal(evidence_int(h, &p, "{lines,0,history,pushes}"), 4);
    assert_int_equal(evidence_int(h, &p, "{lines,0,history,branches}"), 3); /* main excluded */
    assert_int_equal(evidence_int(h, &p, "{lines,0,history,main_pushes}"), 1);
    assert_int_equal(evidence_int(h, &p, "{lines,0,history,same_signature_pushes}"), 3);
    assert_int_equal(evidence_int(h, &p, "{lines,0,history,prs}"), 0);
    assert_int_equal(evidence_int(h, &p, "{lines,0,history,runs}"), 6); /* 5 failed, 1 passed */
    const char *sparams[] = {p.set_id};
    char *text =
        rt_ch_sql_text(h,
                       "SELECT concat_ws(' ', h ->> 'flaky', h #>> '{first_failure,project}',"
                       " h #>> '{first_failure,push}', h #>> '{first_failure,revision}')"
                       " FROM (SELECT evidence #> '{lines,0,history}' AS h FROM decisions"
                       " WHERE set_id = $1::bigint) d",
                       1, sparams);
    assert_non_null(text);
    /* Flaky needs more than 3 branches under review: try:101, try:102 and try:104 are 3 (the
     * failures on autoland and mozilla-central, main branches, never count as breadth). The
     * first failure, of any signature, is mozilla-central's 20 days ago. */
    assert_string_equal(text, "false mozilla-central 300 c300");
    free(text);
    text = rt_ch_sql_text(h,
                          "SELECT concat_ws(' ', h #>> '{first_failure,signature}' = $2,"
                          " h #>> '{first_failure_same_signature,push}')"
                          " FROM (SELECT evidence #> '{lines,0,history}' AS h FROM decisions"
                          " WHERE set_id = $1::bigint) d",
                          2, (const char *[]){p.set_id, line->signature});
    assert_non_null(text);
    assert_string_equal(text, "t 300"); /* a boolean prints as t */
    free(text);
    /* A line that never failed elsewhere: zeros, not flaky, no first failure. */
    assert_int_equal(evidence_int(h, &p, "{lines,1,history,failures}"), 0);
    text = rt_ch_sql_text(h,
                          "SELECT concat_ws(' ', h ->> 'flaky', jsonb_typeof(h -> 'first_failure'))"
                          " FROM (SELECT evidence #> '{lines,1,history}' AS h FROM decisions"
                          " WHERE set_id = $1::bigint) d",
                          1, sparams);
    assert_non_null(text);
    assert_string_equal(text, "false null");
    free(text);
    rt_bugsug_free(&sug);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);

    /* retrig explain shows it. */
    char cmd[1024], out[64];
    snprintf(cmd, sizeof cmd, "RETRIG_DATABASE_URL='%s' %s/retrig explain %s 2>&1", h->database_url,
             RT_TEST_BIN_DIR, original);
    FILE *pipe = popen(cmd, "r");
    assert_non_null(pipe);
    char *all = NULL;
    size_t size = 0;
    FILE *mem = open_memstream(&all, &size);
    size_t n;
    while ((n = fread(out, 1, sizeof out, pipe)) > 0) fwrite(out, 1, n, mem);
    fclose(mem);
    assert_int_equal(pclose(pipe), 0);
    if (!strstr(
            all,
            "failed on 4 push(es) (1 on main, 3 with this signature), 3 branch(es) under review") ||
        strstr(all, "FLAKY") || !strstr(all, "first failed ") ||
        !strstr(all, "on mozilla-central push 300 (c300): TEST-UNEXPECTED-") ||
        !strstr(all, "first failed with this signature "))
        fail_msg("retrig explain does not show the history:\n%s", all);
    free(all);
}

/* Runs of the label already on the push are members of the set: with five of them resolved
 * (two reproducing the failure, three passing) the set asks for no retrigger, spends no
 * budget, and is decided from them at once (issue 17, item 1). */
static void test_runs_already_on_the_push_decide_with_no_new_trigger(void **state)
{
    fixture *f = *state;
    rt_ch *h = f->h;
    start_all(h);
    push p = {0};
    rt_ch_slugid(p.group);
    rt_ch_slugid(p.original);
    snprintf(p.label, sizeof p.label, "%s-%s", GWX_LABEL, p.group);
    json_t *s = json_pack(
        "{s:{s:{s:s, s:{s:s}}, s:o}, s:{s:{s:[{s:s, s:s}]}, s:{s:o}}, s:{s:s}, s:{}}", "tasks",
        p.group, "fixture", DEC_FIX, "override", "taskGroupId", p.group, p.original,
        rt_ch_task_definition(GWX_DEF, p.group, p.label), "artifacts", p.group, "0", "name",
        "public/actions.json", "fixture", "taskcluster/actions.json", p.original, "0",
        json_pack("[{s:s, s:s}, {s:s, s:s}]", "name", "public/logs/live_backing.log", "content",
                  "recorded log\n", "name", "public/test_info/mochitest_errorsummary.log",
                  "fixture", ES_FAIL),
        "hook_clients", CLIENT_ID, TOKEN, "statuses");
    char found[5][23];
    for (int i = 0; i < 5; i++) {
        rt_ch_slugid(found[i]);
        bool fails = i < 2;
        json_object_set_new(json_object_get(s, "tasks"), found[i],
                            rt_ch_task_definition(GWX_DEF, p.group, p.label));
        json_object_set_new(json_object_get(s, "statuses"), found[i],
                            json_pack("{s:s, s:[{s:i, s:s, s:s}]}", "state",
                                      fails ? "failed" : "completed", "runs", "runId", 0, "state",
                                      fails ? "failed" : "completed", "reasonResolved",
                                      fails ? "failed" : "completed"));
    }
    rt_ch_scenario(h, s);
    json_decref(s);
    p.job = next_job_id();
    add_job(h, p.original, p.job, NULL);
    for (int i = 0; i < 2; i++) add_job(h, found[i], next_job_id(), NULL);
    char *body = rt_ch_failed_message(GWX_PULSE, p.original, p.group);
    rt_ch_publish(h, "task-failed", body, strlen(body), GWX_ROUTE, NULL);
    free(body);

    const char *params[] = {p.original};
    char *id = NULL;
    int64_t deadline = rt_test_now_ms() + WAIT_MS;
    while (
        !(id = rt_ch_sql_text(h, "SELECT id::text FROM retrigger_sets WHERE original_task_id = $1",
                              1, params)) &&
        rt_test_now_ms() < deadline)
        rt_test_pause_ms(50);
    assert_non_null(id);
    snprintf(p.set_id, sizeof p.set_id, "%s", id);
    free(id);
    assert_true(decided(h, &p, WAIT_MS));
    char *v = decision(h, &p);
    assert_string_equal(v, "regression/reproduced");
    free(v);
    assert_int_equal(evidence_int(h, &p, "{counts,requested}"), 0);
    assert_int_equal(evidence_int(h, &p, "{counts,found}"), 5);
    const char *sparams[] = {p.set_id};
    assert_int_equal(rt_ch_sql_int(h,
                                   "SELECT count(*) FROM retrigger_sets WHERE id = $1::bigint"
                                   " AND retrigger_count = 0 AND found_count = 5",
                                   1, sparams),
                     1);
    assert_int_equal(rt_ch_sql_int(h,
                                   "SELECT count(*) FROM retrigger_set_members"
                                   " WHERE set_id = $1::bigint AND role = 'found'",
                                   1, sparams),
                     5);
    /* Nothing triggered, nothing spent, nothing to retrigger. */
    json_t *triggers = rt_fake_triggers(&h->fake);
    assert_int_equal(json_array_size(triggers), 0);
    json_decref(triggers);
    assert_int_equal(rt_ch_sql_int(h, "SELECT count(*) FROM budget_ledger", 0, NULL), 0);
    assert_int_equal(rt_ch_queue_depth(h, "retrigger"), 0);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);

    /* retrig explain says which runs it found. */
    char cmd[1024], out[64];
    snprintf(cmd, sizeof cmd, "RETRIG_DATABASE_URL='%s' %s/retrig explain %s 2>&1", h->database_url,
             RT_TEST_BIN_DIR, p.original);
    FILE *pipe = popen(cmd, "r");
    assert_non_null(pipe);
    char *all = NULL;
    size_t size = 0;
    FILE *mem = open_memstream(&all, &size);
    size_t n;
    while ((n = fread(out, 1, sizeof out, pipe)) > 0) fwrite(out, 1, n, mem);
    fclose(mem);
    assert_int_equal(pclose(pipe), 0);
    if (!strstr(all, "found     ") || !strstr(all, found[0]))
        fail_msg("retrig explain does not show the runs it found:\n%s", all);
    free(all);
}

/* A failing push whose label already has runs on it, each ended as states[i] says
 * ("failed": reproducing the original, with its Treeherder job; "completed"; "exception":
 * cancelled); hook_group: the hook group its actions.json names instead of the recorded
 * project-gecko (NULL: as recorded). The original failure is published; returns when its
 * set exists (p->set_id). */
static void fail_with_found_runs(rt_ch *h, push *p, const char *const *states, size_t n,
                                 const char *hook_group)
{
    rt_ch_slugid(p->group);
    rt_ch_slugid(p->original);
    snprintf(p->label, sizeof p->label, "%s-%s", GWX_LABEL, p->group);
    json_t *actions = rt_ch_actions_artifact(p->group, GWX_REVISION);
    if (hook_group) {
        char quoted[128];
        snprintf(quoted, sizeof quoted, "\"%s\"", hook_group);
        json_object_set_new(json_object_get(actions, "replace"), "\"project-gecko\"",
                            json_string(quoted));
    }
    json_t *s =
        json_pack("{s:{s:{s:s, s:{s:s}}, s:o}, s:{s:{s:[o]}, s:{s:o}}, s:{s:s}, s:{}}", "tasks",
                  p->group, "fixture", DEC_FIX, "override", "taskGroupId", p->group, p->original,
                  rt_ch_task_definition(GWX_DEF, p->group, p->label), "artifacts", p->group, "0",
                  actions, p->original, "0",
                  json_pack("[{s:s, s:s}, {s:s, s:s}]", "name", "public/logs/live_backing.log",
                            "content", "recorded log\n", "name",
                            "public/test_info/mochitest_errorsummary.log", "fixture", ES_FAIL),
                  "hook_clients", CLIENT_ID, TOKEN, "statuses");
    for (size_t i = 0; i < n; i++) {
        char found[23];
        rt_ch_slugid(found);
        const char *reason = !strcmp(states[i], "exception") ? "canceled" : states[i];
        json_object_set_new(json_object_get(s, "tasks"), found,
                            rt_ch_task_definition(GWX_DEF, p->group, p->label));
        json_object_set_new(json_object_get(s, "statuses"), found,
                            json_pack("{s:s, s:[{s:i, s:s, s:s}]}", "state", states[i], "runs",
                                      "runId", 0, "state", states[i], "reasonResolved", reason));
        if (!strcmp(states[i], "failed")) add_job(h, found, next_job_id(), NULL);
    }
    rt_ch_scenario(h, s);
    json_decref(s);
    p->job = next_job_id();
    add_job(h, p->original, p->job, NULL);
    char *body = rt_ch_failed_message(GWX_PULSE, p->original, p->group);
    rt_ch_publish(h, "task-failed", body, strlen(body), GWX_ROUTE, NULL);
    free(body);
    const char *params[] = {p->original};
    char *id = NULL;
    int64_t deadline = rt_test_now_ms() + WAIT_MS;
    while (!(id = rt_ch_sql_text(h,
                                 "SELECT id::text FROM retrigger_sets WHERE original_task_id = $1"
                                 " AND request_published_at IS NOT NULL",
                                 1, params)) &&
           rt_test_now_ms() < deadline)
        rt_test_pause_ms(50);
    assert_non_null(id);
    snprintf(p->set_id, sizeof p->set_id, "%s", id);
    free(id);
}

/* Runs on the push that ended in an exception (cancelled) are no evidence: they are not
 * members and do not stand for retriggers. Two cancelled runs and a pass with 3 wanted used
 * to make a set asking for none (three "found"), decided undecided at best. */
static void test_cancelled_runs_on_the_push_do_not_stand_for_retriggers(void **state)
{
    fixture *f = *state;
    rt_ch *h = f->h;
    rt_ch_start_workers(h, 1); /* classify only: the request stays in its queue */
    push p = {0};
    static const char *const states[] = {"exception", "completed", "exception"};
    fail_with_found_runs(h, &p, states, 3, NULL);
    const char *sparams[] = {p.set_id};
    assert_int_equal(rt_ch_sql_int(h,
                                   "SELECT retrigger_count * 10 + found_count FROM retrigger_sets"
                                   " WHERE id = $1::bigint",
                                   1, sparams),
                     21);
    assert_int_equal(rt_ch_sql_int(h,
                                   "SELECT count(*) FROM retrigger_set_members"
                                   " WHERE set_id = $1::bigint AND role = 'found'"
                                   " AND state = 'completed'",
                                   1, sparams),
                     1);
    rt_ch_message *req = NULL;
    rt_ch_take(h, "retrigger", 1, WAIT_MS, &req);
    json_t *r = json_loads(req[0].body, 0, NULL);
    assert_non_null(r);
    assert_int_equal(json_integer_value(json_object_get(r, "times")), 2);
    json_decref(r);
    rt_ch_messages_free(req, 1);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
}

/* The first round's hook call is refused for good (the push's actions.json names a hook of
 * another group), but the runs already on the push can decide: one reproduces, one passes,
 * and the one retrigger asked for will never come. The set goes to its decision with them
 * (intermittent, not reproduced) where it used to be marked failed and never decided. */
static void test_a_refused_first_round_is_decided_with_the_runs_on_the_push(void **state)
{
    fixture *f = *state;
    rt_ch *h = f->h;
    start_all(h);
    push p = {0};
    static const char *const states[] = {"failed", "completed"};
    fail_with_found_runs(h, &p, states, 2, "project-releng");
    assert_true(decided(h, &p, WAIT_MS));
    char *v = decision(h, &p);
    assert_string_equal(v, "intermittent/not-reproduced");
    free(v);
    assert_int_equal(evidence_int(h, &p, "{counts,found}"), 2);
    assert_int_equal(evidence_int(h, &p, "{counts,missing}"), 0);
    const char *sparams[] = {p.set_id};
    char *outcome = rt_ch_sql_text(h,
                                   "SELECT outcome FROM retrigger_actions"
                                   " WHERE set_id = $1::bigint AND round = 1",
                                   1, sparams);
    assert_non_null(outcome);
    assert_string_equal(outcome, "refused-hook");
    free(outcome);
    assert_int_equal(rt_ch_sql_int(h,
                                   "SELECT count(*) FROM retrigger_sets WHERE id = $1::bigint"
                                   " AND status = 'decided' AND retrigger_count = 0",
                                   1, sparams),
                     1);
    json_t *triggers = rt_fake_triggers(&h->fake);
    assert_int_equal(json_array_size(triggers), 0);
    json_decref(triggers);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
}

/* ---- the culprit search's window (issue 24) ---- */

#define FAILING_PUSH 88560L /* GWX_ROUTE's pushlog id, the failing push's id in the fake */

/* The output of `retrig <args>` (malloc'd); fails the test when it exits non-zero. */
static char *retrig(rt_ch *h, const char *args)
{
    char cmd[1024], out[256];
    snprintf(cmd, sizeof cmd, "RETRIG_DATABASE_URL='%s' %s/retrig %s 2>&1", h->database_url,
             RT_TEST_BIN_DIR, args);
    FILE *pipe = popen(cmd, "r");
    assert_non_null(pipe);
    char *all = NULL;
    size_t size = 0, n;
    FILE *mem = open_memstream(&all, &size);
    while ((n = fread(out, 1, sizeof out, pipe)) > 0) fwrite(out, 1, n, mem);
    fclose(mem);
    assert_int_equal(pclose(pipe), 0);
    return all;
}

static char *explain(rt_ch *h, const char *task_id)
{
    char args[64];
    snprintf(args, sizeof args, "explain %s", task_id);
    return retrig(h, args);
}

/* Autoland's pushes before and at the failing push (revisions[k]: push N-k, k = 0..count-1),
 * with the label passing on push N-passing only; the failing push's decision task indexed
 * with its pushlog id. */
static void push_history(rt_ch *h, const push *p, int count, int passing, char revisions[][41])
{
    json_t *pushes = json_array();
    for (int k = 0; k < count; k++) {
        if (k == 0)
            snprintf(revisions[k], 41, "%s", GWX_REVISION);
        else
            snprintf(revisions[k], 41, "%08lx%032d", (unsigned long)(random() & 0xffffffffL), k);
        char author[64];
        snprintf(author, sizeof author, "pusher%d@example.com", k);
        json_array_append_new(pushes,
                              json_pack("{s:I, s:s, s:s}", "id", (json_int_t)(FAILING_PUSH - k),
                                        "revision", revisions[k], "author", author));
    }
    char passed[23], decision_task[23], ns[160], route[160];
    rt_ch_slugid(passed);
    rt_ch_slugid(decision_task);
    snprintf(ns, sizeof ns, "gecko.v2.autoland.revision.%s.taskgraph", GWX_REVISION);
    snprintf(route, sizeof route, "tc-treeherder.v2.autoland.%s.%ld", GWX_REVISION, FAILING_PUSH);
    json_t *s = json_pack(
        "{s:{s:o}, s:{s:[{s:I, s:I, s:s, s:s, s:s}]}, s:{s:[{s:s, s:s}]},"
        " s:{s:{s:s, s:s, s:s, s:s, s:[s], s:{s:s}, s:{s:s}}}}",
        "pushes", "autoland", pushes, "jobs", passed, "id", (json_int_t)next_job_id(), "push_id",
        (json_int_t)(FAILING_PUSH - passing), "job_type_name", p->label, "result", "success",
        "state", "completed", "index", ns, "name", "decision", "taskId", decision_task, "tasks",
        decision_task, "taskGroupId", decision_task, "provisionerId", "gecko-3", "workerType",
        "decision", "created", "2024-05-01T10:00:00.000Z", "routes", route, "metadata", "name",
        "Gecko Decision Task", "tags", "kind", "decision-task");
    rt_ch_scenario(h, s);
    json_decref(s);
}

static void pushes_runnable(rt_ch *h, int count, int culprit, char revisions[][41],
                            const json_t *replace);
#define NEVER   (-1)
#define RUNNING (-2)

/* A regression on push N, with the push history of push_history (and, when culprit is not
 * 0, the pushes runnable by add-new-jobs with the culprit N-culprit; culprit NEVER: the jobs
 * add-new-jobs should make never come; RUNNING: they come and never finish): the failing run
 * and two reproducing retriggers.
 * drop_first_probe: the connection of the first add-new-jobs call breaks once Taskcluster
 * acted. dry_run_probes: retrig-retrigger runs dry once the set's own retrigger is made. */
static void regression(fixture *f, push *p, int count, int passing, char revisions[][41],
                       int culprit, bool drop_first_probe, bool dry_run_probes)
{
    rt_ch *h = f->h;
    rt_ch_setenv(h, "CULPRIT_POLL_INTERVAL_S", "1");
    start_all(h);
    fail_original(f, p); /* the set's own hook call is made */
    if (dry_run_probes) {
        rt_ch_setenv(h, "DRY_RUN", "true");
        rt_ch_restart_worker(h, 1, SIGTERM); /* retrig-retrigger */
    }
    push_history(h, p, count, passing, revisions);
    if (culprit != 0) pushes_runnable(h, count, culprit, revisions, f->probe_actions_replace);
    if (drop_first_probe)
        assert_int_equal(rt_fake_add_fault(&h->fake, "[{\"kind\": \"drop_mid_body\","
                                                     " \"path_prefix\": \"/api/hooks/\","
                                                     " \"times\": 1}]"),
                         200);
    char r1[23], r2[23];
    resolve_retrigger(f, p, RUN_REPRODUCES, r1, 0);
    resolve_retrigger(f, p, RUN_REPRODUCES, r2, 0);
    assert_true(decided(h, p, WAIT_MS));
    char *v = decision(h, p);
    assert_string_equal(v, f->adaptive ? "regression/confident" : "regression/reproduced");
    free(v);
}

/* The culprit event of the search (the decision events before it are skipped), valid
 * against its schema: "status reason culprit-revision-or-null range-first range-last"
 * (malloc'd). */
static char *culprit_event(fixture *f)
{
    for (;;) {
        char *body = take_event(f, WAIT_MS);
        assert_non_null(body);
        if (!strstr(body, "\"kind\":\"culprit\"")) {
            free(body);
            continue;
        }
        char *error = NULL;
        if (rt_ch_validate_schema(RT_TEST_SOURCE_DIR "/queue-schemas/culprit-event.json", body,
                                  &error) != 0)
            fail_msg("culprit event does not validate: %s\n%s", error ? error : "", body);
        free(error);
        json_t *doc = json_loads(body, 0, NULL);
        free(body);
        char *summary = NULL;
        json_t *range = json_object_get(doc, "range");
        const char *culprit =
            json_string_value(json_object_get(json_object_get(doc, "culprit"), "revision"));
        assert_true(
            asprintf(&summary, "%s %s %s %s %s", json_string_value(json_object_get(doc, "status")),
                     json_string_value(json_object_get(doc, "reason")), culprit ? culprit : "null",
                     json_string_value(json_array_get(range, 0)),
                     json_string_value(json_array_get(range, 1))) > 0);
        json_decref(doc);
        return summary;
    }
}

/* "status/reason" of the culprit search once its window is found (malloc'd). */
static char *culprit_step(rt_ch *h, const push *p)
{
    const char *params[] = {p->set_id};
    assert_int_equal(rt_ch_wait_int(h, WAIT_MS, 1,
                                    "SELECT count(*) FROM decisions WHERE set_id = $1::bigint"
                                    " AND culprit_window IS NOT NULL",
                                    1, params),
                     1);
    char *v = rt_ch_sql_text(h,
                             "SELECT culprit_status || '/' || culprit_reason FROM decisions"
                             " WHERE set_id = $1::bigint",
                             1, params);
    assert_non_null(v);
    return v;
}

static void
test_regression_right_after_a_push_where_the_label_passed_names_the_failing_push(void **state)
{
    fixture *f = *state;
    rt_ch *h = f->h;
    push p;
    char revisions[3][41];
    regression(f, &p, 3, 1, revisions, 0, false, false);

    char *v = culprit_step(h, &p);
    assert_string_equal(v, "found/no-candidate");
    free(v);
    const char *params[] = {p.set_id};
    char *culprit = rt_ch_sql_text(h,
                                   "SELECT culprit_revision || ' ' || culprit_pushlog_id || ' ' ||"
                                   " culprit_author || ' ' || culprit_url || ' ' ||"
                                   " jsonb_array_length(culprit_window -> 'pushes') || ' ' ||"
                                   " culprit_jobs_spent FROM decisions WHERE set_id = $1::bigint",
                                   1, params);
    char want[512];
    snprintf(want, sizeof want,
             "%s 88560 pusher0@example.com %s/jobs?repo=autoland&revision=%s 2 0", GWX_REVISION,
             h->fake.base_url, GWX_REVISION);
    assert_string_equal(culprit, want);
    free(culprit);
    /* No add-new-jobs call: the culprit cost nothing. */
    json_t *triggers = rt_fake_triggers(&h->fake);
    assert_int_equal(json_array_size(triggers), 1); /* the set's own retrigger action */
    json_decref(triggers);
    char *event = culprit_event(f);
    snprintf(want, sizeof want, "found no-candidate %s %s %s", GWX_REVISION, GWX_REVISION,
             GWX_REVISION);
    assert_string_equal(event, want);
    free(event);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);

    char *all = explain(h, p.original);
    if (!strstr(all, "the culprit search") || !strstr(all, "found (no-candidate)") ||
        !strstr(all, "culprit " GWX_REVISION ", pushlog 88560, by pusher0@example.com"))
        fail_msg("retrig explain does not show the culprit:\n%s", all);
    free(all);
    all = retrig(h, "decisions --format json");
    if (!strstr(all, "\"culprit\": {") || !strstr(all, "\"status\": \"found\"") ||
        !strstr(all, "\"reason\": \"no-candidate\""))
        fail_msg("retrig decisions does not show the culprit:\n%s", all);
    free(all);
    all = retrig(h, "decisions"); /* the CULPRIT column beside the REVISION column */
    char *row = strstr(all, "b437ae030825");
    if (!strstr(all, "CULPRIT") || !row || !strstr(row + 12, "b437ae030825"))
        fail_msg("retrig decisions' table does not show the culprit:\n%s", all);
    free(all);
}

/* Each push k of the history (1..count-1) as Gecko leaves it: its decision task, indexed,
 * with its tc-treeherder route and the recorded actions.json moved to it (and edited by
 * `replace`'s text replacements when not NULL); add-new-jobs runs there fail (reproducing the
 * regression's line) from the culprit push N-culprit on (culprit < 0: add-new-jobs makes no
 * runs anywhere). */
static void pushes_runnable(rt_ch *h, int count, int culprit, char revisions[][41],
                            const json_t *replace)
{
    json_t *s =
        json_pack("{s:{}, s:{}, s:{}, s:{}}", "tasks", "artifacts", "index", "add_new_jobs");
    for (int k = 1; k < count; k++) {
        char decision_task[23], ns[160], route[160];
        rt_ch_slugid(decision_task);
        snprintf(ns, sizeof ns, "gecko.v2.autoland.revision.%s.taskgraph", revisions[k]);
        snprintf(route, sizeof route, "tc-treeherder.v2.autoland.%s.%ld", revisions[k],
                 FAILING_PUSH - k);
        json_object_set_new(json_object_get(s, "tasks"), decision_task,
                            json_pack("{s:s, s:s, s:s, s:s, s:s, s:[s], s:{s:s}, s:{s:s}}",
                                      "taskGroupId", decision_task, "provisionerId", "gecko-3",
                                      "workerType", "decision", "schedulerId", "gecko-level-3",
                                      "created", "2024-05-01T10:00:00.000Z", "routes", route,
                                      "metadata", "name", "Gecko Decision Task", "tags", "kind",
                                      "decision-task"));
        json_t *artifact = rt_ch_actions_artifact(decision_task, revisions[k]);
        if (replace) json_object_update(json_object_get(artifact, "replace"), (json_t *)replace);
        json_object_set_new(json_object_get(s, "artifacts"), decision_task,
                            json_pack("{s:[o]}", "0", artifact));
        json_object_set_new(json_object_get(s, "index"), ns,
                            json_pack("[{s:s, s:s}]", "name", "decision", "taskId", decision_task));
        json_object_set_new(json_object_get(s, "add_new_jobs"), revisions[k],
                            json_string(culprit == NEVER     ? "none"
                                        : culprit == RUNNING ? "running"
                                        : k <= culprit       ? "testfailed"
                                                             : "success"));
    }
    rt_ch_scenario(h, s);
    json_decref(s);
}

/* The add-new-jobs calls the fake took, by revision probed: fails the test when one push
 * was triggered twice for one attempt. Returns how many. */
static size_t add_new_jobs_calls(rt_ch *h, const push *p)
{
    json_t *triggers = rt_fake_triggers(&h->fake);
    assert_non_null(triggers);
    size_t n = 0, i, k;
    json_t *t, *u;
    json_array_foreach(triggers, i, t)
    {
        json_t *decision = json_object_get(json_object_get(t, "payload"), "decision");
        json_t *input =
            json_object_get(json_object_get(json_object_get(t, "payload"), "user"), "input");
        if (strcmp(json_string_value(json_object_get(json_object_get(decision, "action"), "name")),
                   "add-new-jobs"))
            continue;
        assert_string_equal(json_string_value(json_array_get(json_object_get(input, "tasks"), 0)),
                            p->label);
        const char *revision =
            json_string_value(json_object_get(json_object_get(decision, "push"), "revision"));
        json_array_foreach(triggers, k, u)
        {
            if (k >= i) break;
            json_t *other = json_object_get(json_object_get(u, "payload"), "decision");
            if (!strcmp(
                    json_string_value(json_object_get(json_object_get(other, "action"), "name")),
                    "add-new-jobs") &&
                !strcmp(
                    json_string_value(json_object_get(json_object_get(other, "push"), "revision")),
                    revision))
                fail_msg("add-new-jobs triggered twice on %s", revision);
        }
        n++;
    }
    json_decref(triggers);
    return n;
}

/* Issue 24's integration test: a regression on push N, the label skipped on N-1 .. N-6 and
 * passing on N-7, the culprit N-5. retrig-decide finds the window and bisects it with
 * add-new-jobs through retrig-retrigger. The first call's answer is lost after Taskcluster
 * acted (the redelivered request looks the action task up instead of calling again), then
 * retrig-retrigger is killed and gets that probe's request once more: the culprit is named
 * after at most 3 rounds, and every push was triggered once. */
static void test_regression_after_six_skipped_pushes_is_bisected_to_its_culprit(void **state)
{
    fixture *f = *state;
    rt_ch *h = f->h;
    push p;
    char revisions[10][41];
    /* An interrupted call is looked up once the call would have timed out. */
    rt_ch_setenv(h, "HTTP_TIMEOUT_MS", "2000");
    rt_ch_setenv(h, "HTTP_CONNECT_TIMEOUT_MS", "1000");
    /* N-1 .. N-6 skipped, N-7 passed, N-8 N-9 older; the first probe's answer is lost */
    regression(f, &p, 10, 7, revisions, 5, true, false);

    /* The first probe triggered: kill retrig-retrigger, hand its request over again. */
    const char *params[] = {p.set_id};
    assert_int_equal(rt_ch_wait_int(h, WAIT_MS, 1,
                                    "SELECT count(*) FROM culprit_pending_probes"
                                    " WHERE set_id = $1::bigint AND state IN ('triggered', 'done')"
                                    " AND round = 1 AND NOT confirm",
                                    1, params),
                     1);
    rt_ch_restart_worker(h, 1, SIGKILL);
    char *first = rt_ch_sql_text(
        h,
        "SELECT json_build_object('version', 1, 'kind', 'culprit-probe', 'set_id', set_id,"
        " 'project', 'autoland', 'revision', revision, 'label', label, 'platform',"
        " (SELECT platform FROM retrigger_sets WHERE id = set_id), 'times', times, 'attempt', 1,"
        " 'round', 1, 'confirm', false, 'requested_at', '2024-05-01T10:00:00Z')::text"
        " FROM culprit_pending_probes WHERE set_id = $1::bigint AND round = 1 AND NOT confirm",
        1, params);
    assert_non_null(first);
    rt_amqp_publish_opts opts = {0};
    assert_int_equal(rt_amqp_publish(f->events, h->ns, "retrigger", first, strlen(first), &opts),
                     RT_OK);
    free(first);

    assert_int_equal(rt_ch_wait_int(h, 60000, 1,
                                    "SELECT count(*) FROM decisions WHERE set_id = $1::bigint"
                                    " AND culprit_status <> 'searching'",
                                    1, params),
                     1);
    char *v = rt_ch_sql_text(h,
                             "SELECT culprit_status || '/' || culprit_reason || ' ' ||"
                             " culprit_revision || ' ' || culprit_pushlog_id || ' ' ||"
                             " culprit_author FROM decisions WHERE set_id = $1::bigint",
                             1, params);
    char want[256];
    snprintf(want, sizeof want, "found/bisected %s %ld pusher5@example.com", revisions[5],
             FAILING_PUSH - 5);
    assert_string_equal(v, want);
    free(v);
    char *event = culprit_event(f);
    snprintf(want, sizeof want, "found bisected %s %s %s", revisions[5], revisions[5],
             revisions[5]);
    assert_string_equal(event, want);
    free(event);
    long long rounds = rt_ch_sql_int(h,
                                     "SELECT (culprit_window ->> 'rounds')::int FROM decisions"
                                     " WHERE set_id = $1::bigint",
                                     1, params);
    assert_true(rounds >= 1 && rounds <= 3);
    long long probes = rt_ch_sql_int(h,
                                     "SELECT count(*) FROM culprit_pending_probes"
                                     " WHERE set_id = $1::bigint",
                                     1, params);
    /* Each probed push triggered once (a redelivered request, a killed worker), and the jobs
     * spent are what the probes asked for, in the ledger too. */
    assert_int_equal(add_new_jobs_calls(h, &p), (size_t)probes);
    json_t *calls = rt_fake_calls(&h->fake, "/api/hooks/");
    assert_int_equal(json_array_size(calls), 1 + (size_t)probes); /* the set's retrigger too */
    json_decref(calls);
    assert_int_equal(rt_ch_sql_int(h,
                                   "SELECT count(*) FROM culprit_pending_probes WHERE"
                                   " set_id = $1::bigint AND (attempt <> 1 OR calls <> 1)",
                                   1, params),
                     0);
    assert_int_equal(rt_ch_sql_int(h,
                                   "SELECT (SELECT culprit_jobs_spent FROM decisions WHERE"
                                   " set_id = $1::bigint) - (SELECT coalesce(sum(amount), 0)"
                                   " FROM budget_ledger WHERE idempotency_key LIKE"
                                   " 'culprit-probe:' || $1 || ':%')",
                                   1, params),
                     0);
    assert_int_equal(rt_ch_queue_depth(h, "dead-letter"), 0);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);

    char *all = explain(h, p.original);
    if (!strstr(all, "found (bisected)") || !strstr(all, revisions[5]))
        fail_msg("retrig explain does not show the culprit:\n%s", all);
    /* The window keeps its last round's probe; a search that ended has no next one (issue 30). */
    assert_int_equal(rt_ch_sql_int(h,
                                   "SELECT (culprit_window ? 'next')::int FROM decisions"
                                   " WHERE set_id = $1::bigint",
                                   1, params),
                     1);
    if (strstr(all, "next probe"))
        fail_msg("retrig explain shows a next probe of a search that ended:\n%s", all);
    free(all);
}

/* A long clean history of the regression's test (400 runs on other pushes before the
 * failure, none failing) lets one reproduction call a push bad (common/core/culprit.h):
 * the first probe asks for the runs the seed rule plans with that history, fewer than for a
 * test without one, and the window records the history the search uses. */
static void test_a_clean_history_makes_the_probes_cheaper(void **state)
{
    fixture *f = *state;
    rt_ch *h = f->h;
    push p;
    char revisions[10][41];
    rt_ch_line_history(h, BUGSUG, 400, 0);
    regression(f, &p, 10, 7, revisions, 5, false, false);
    const char *params[] = {p.set_id};
    assert_int_equal(rt_ch_wait_int(h, WAIT_MS, 1,
                                    "SELECT count(*) FROM culprit_pending_probes"
                                    " WHERE set_id = $1::bigint AND round = 1 AND NOT confirm",
                                    1, params),
                     1);
    char *window = rt_ch_sql_text(h,
                                  "SELECT concat_ws(' ', culprit_window #>> '{history,runs}',"
                                  " culprit_window #>> '{history,failures}',"
                                  " jsonb_array_length(culprit_window -> 'pushes'),"
                                  " culprit_window #>> '{pushes,-1,runs}',"
                                  " culprit_window #>> '{pushes,-1,reproduced}')"
                                  " FROM decisions WHERE set_id = $1::bigint",
                                  1, params);
    long history_runs = -1, history_failures = -1, npushes = 0;
    int runs = 0, reproduced = 0;
    assert_non_null(window);
    assert_int_equal(sscanf(window, "%ld %ld %ld %d %d", &history_runs, &history_failures, &npushes,
                            &runs, &reproduced),
                     5);
    free(window);
    assert_int_equal(history_runs, 400);
    assert_int_equal(history_failures, 0);
    rt_culprit_model model = {.confidence = rt_culprit_push_confidence(0.95, (size_t)npushes),
                              .threshold = 2,
                              .reproduction_rate = rt_culprit_reproduction_rate(runs, reproduced),
                              .history_runs = history_runs,
                              .history_failures = history_failures};
    rt_culprit_plan with, without;
    assert_int_equal(rt_culprit_seed_plan(&model, &with), RT_OK);
    model.history_runs = model.history_failures = 0;
    assert_int_equal(rt_culprit_seed_plan(&model, &without), RT_OK);
    assert_true(with.times < without.times);
    assert_int_equal(rt_ch_sql_int(h,
                                   "SELECT times FROM culprit_pending_probes WHERE"
                                   " set_id = $1::bigint AND round = 1 AND NOT confirm",
                                   1, params),
                     with.times);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
}

/* Under decide_policy = adaptive the probes are classified by the adaptive verdict's model
 * (common/core/culprit_adaptive.h): the window says so, the first probe asks for the runs
 * that model plans (the regression's test has 400 clean runs on other pushes), and the
 * bisection names the culprit N-5 with each probed push's class from that model. */
static void test_under_the_adaptive_policy_the_probes_use_its_model(void **state)
{
    fixture *f = *state;
    rt_ch *h = f->h;
    push p;
    char revisions[10][41];
    f->adaptive = true;
    rt_ch_setenv(h, "DECIDE_POLICY", "adaptive");
    rt_ch_line_history(h, BUGSUG, 400, 0);
    regression(f, &p, 10, 7, revisions, 5, false, false);
    const char *params[] = {p.set_id};
    assert_int_equal(rt_ch_wait_int(h, WAIT_MS, 1,
                                    "SELECT count(*) FROM culprit_pending_probes"
                                    " WHERE set_id = $1::bigint AND round = 1 AND NOT confirm",
                                    1, params),
                     1);
    char *window = rt_ch_sql_text(h,
                                  "SELECT concat_ws(' ', culprit_window ->> 'probe_rule',"
                                  " jsonb_array_length(culprit_window -> 'pushes'),"
                                  " culprit_window #>> '{pushes,-1,runs}',"
                                  " culprit_window #>> '{pushes,-1,reproduced}')"
                                  " FROM decisions WHERE set_id = $1::bigint",
                                  1, params);
    char rule[16] = "";
    long npushes = 0;
    int runs = 0, reproduced = 0;
    assert_non_null(window);
    assert_int_equal(sscanf(window, "%15s %ld %d %d", rule, &npushes, &runs, &reproduced), 4);
    free(window);
    assert_string_equal(rule, "adaptive");
    rt_culprit_model model = {.confidence = rt_culprit_push_confidence(0.95, (size_t)npushes),
                              .threshold = 2,
                              .reproduction_rate = rt_culprit_reproduction_rate(runs, reproduced),
                              .history_runs = 400,
                              .history_failures = 0,
                              .failing_runs = runs,
                              .failing_reproduced = reproduced};
    rt_decide_settings settings;
    rt_decide_settings_default(&settings);
    settings.first_batch_max = 3; /* RETRIGGERS_PER_FAILURE */
    rt_culprit_adaptive adaptive;
    assert_int_equal(rt_culprit_adaptive_init(&adaptive, &settings), RT_OK);
    int times = rt_culprit_adaptive_times(&adaptive, &model);
    assert_true(times >= 1);
    assert_int_equal(rt_ch_sql_int(h,
                                   "SELECT times FROM culprit_pending_probes WHERE"
                                   " set_id = $1::bigint AND round = 1 AND NOT confirm",
                                   1, params),
                     times);

    assert_int_equal(rt_ch_wait_int(h, 60000, 1,
                                    "SELECT count(*) FROM decisions WHERE set_id = $1::bigint"
                                    " AND culprit_status <> 'searching'",
                                    1, params),
                     1);
    char *v = rt_ch_sql_text(h,
                             "SELECT culprit_status || '/' || culprit_reason || ' ' ||"
                             " culprit_revision FROM decisions WHERE set_id = $1::bigint",
                             1, params);
    char want[128];
    snprintf(want, sizeof want, "found/bisected %s", revisions[5]);
    assert_string_equal(v, want);
    free(v);
    /* Every probed push's class is the adaptive model's for its runs. */
    char *classes = rt_ch_sql_text(
        h,
        "SELECT string_agg(p ->> 'runs' || ':' || (p ->> 'reproduced') || ':' || (p ->> 'class'),"
        " ' ' ORDER BY p ->> 'round') FROM decisions, jsonb_array_elements(culprit_probes) p"
        " WHERE set_id = $1::bigint",
        1, params);
    assert_non_null(classes);
    char *save = NULL;
    for (char *item = strtok_r(classes, " ", &save); item; item = strtok_r(NULL, " ", &save)) {
        int r = 0, x = 0;
        char cls[8] = "";
        assert_int_equal(sscanf(item, "%d:%d:%7s", &r, &x, cls), 3);
        rt_culprit_evidence e = {r, x, false};
        rt_culprit_call call = rt_culprit_adaptive_classify(&e, &model, &adaptive);
        assert_string_equal(cls, call.cls == RT_PUSH_BAD    ? "bad"
                                 : call.cls == RT_PUSH_GOOD ? "good"
                                                            : "open");
    }
    free(classes);
    assert_int_equal(rt_ch_queue_depth(h, "dead-letter"), 0);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
}

/* Treeherder answers 503 when the search reads the first probe's jobs (one attempt per
 * call here): the poll ends without a step and the next one reads them, so the culprit is
 * still named. (The search used to go on with the pushes it had not read yet counted as
 * empty, and stopped as invalid-window.) */
static void test_a_treeherder_5xx_during_a_search_is_waited_out(void **state)
{
    fixture *f = *state;
    rt_ch *h = f->h;
    push p;
    char revisions[10][41];
    rt_ch_setenv(h, "HTTP_MAX_ATTEMPTS", "1");
    regression(f, &p, 10, 7, revisions, 5, false, false);
    const char *params[] = {p.set_id};
    assert_int_equal(rt_ch_wait_int(h, WAIT_MS, 1,
                                    "SELECT count(*) FROM culprit_pending_probes"
                                    " WHERE set_id = $1::bigint AND round = 1 AND NOT confirm",
                                    1, params),
                     1);
    assert_int_equal(rt_fake_add_fault(&h->fake, "[{\"kind\": \"status\", \"status\": 503,"
                                                 " \"path_regex\": \"/jobs/[?]push_id=\","
                                                 " \"times\": 2}]"),
                     200);
    assert_int_equal(rt_ch_wait_int(h, 60000, 1,
                                    "SELECT count(*) FROM decisions WHERE set_id = $1::bigint"
                                    " AND culprit_status <> 'searching'",
                                    1, params),
                     1);
    char *v = rt_ch_sql_text(h,
                             "SELECT culprit_status || '/' || culprit_reason || ' ' ||"
                             " coalesce(culprit_revision, '-') FROM decisions"
                             " WHERE set_id = $1::bigint",
                             1, params);
    char want[128];
    snprintf(want, sizeof want, "found/bisected %s", revisions[5]);
    assert_string_equal(v, want);
    free(v);
    json_t *calls = rt_fake_calls(&h->fake, "/api/project/autoland/jobs/");
    size_t refused = 0, i;
    json_t *call;
    json_array_foreach(calls, i, call) refused +=
        json_integer_value(json_object_get(call, "status")) == 503;
    json_decref(calls);
    assert_true(refused >= 1); /* the fault was met */
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
}

/* The platform's daily budget covers the regression's retriggers and one probe: the second
 * probe is refused by retrig-retrigger, and the search stops with the range that holds the
 * culprit after the first round (the culprit is at or before N-3). */
static void test_a_search_out_of_budget_stops_with_the_range_that_holds_the_culprit(void **state)
{
    fixture *f = *state;
    rt_ch *h = f->h;
    rt_ch_setenv(h, "BUDGET_LIMITS", "android*=12, *=600");
    push p;
    char revisions[10][41];
    regression(f, &p, 10, 7, revisions, 5, false, false);
    const char *params[] = {p.set_id};
    assert_int_equal(rt_ch_wait_int(h, 60000, 1,
                                    "SELECT count(*) FROM decisions WHERE set_id = $1::bigint"
                                    " AND culprit_status <> 'searching'",
                                    1, params),
                     1);
    char *v = rt_ch_sql_text(h,
                             "SELECT culprit_status || '/' || culprit_reason || ' ' ||"
                             " culprit_range_first || ' ' || culprit_range_last || ' ' ||"
                             " (culprit_revision IS NULL) FROM decisions WHERE set_id = $1::bigint",
                             1, params);
    char want[256];
    snprintf(want, sizeof want, "stopped/budget-exhausted %s %s true", revisions[7], revisions[3]);
    assert_string_equal(v, want);
    free(v);
    char *event = culprit_event(f);
    snprintf(want, sizeof want, "stopped budget-exhausted null %s %s", revisions[7], revisions[3]);
    assert_string_equal(event, want);
    free(event);
    assert_int_equal(add_new_jobs_calls(h, &p), 1);
    assert_int_equal(rt_ch_sql_int(h,
                                   "SELECT count(*) FROM culprit_pending_probes WHERE"
                                   " set_id = $1::bigint AND state = 'failed'"
                                   " AND error = 'budget-exhausted'",
                                   1, params),
                     1);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
    char *all = explain(h, p.original);
    if (!strstr(all, "stopped (budget-exhausted)") || !strstr(all, "the culprit is within"))
        fail_msg("retrig explain does not show where the search stopped:\n%s", all);
    free(all);
}

/* The search's end once it is over: "status/reason range-first range-last culprit-is-null"
 * (malloc'd). */
/* Makes the search's probe requests `age` old (an SQL interval) at each of up to `polls`
 * polls, since retrig-decide rewrites the window at each: true once the search stopped. */
static bool age_requests(rt_ch *h, const char *set_id, const char *age, int polls)
{
    const char *params[] = {set_id, age};
    for (int i = 0; i < polls; i++) {
        rt_ch_sql_int(h,
                      "WITH moved AS (SELECT jsonb_agg(CASE WHEN e ? 'request' THEN"
                      " jsonb_set(e, '{request,at}', to_jsonb(to_char((now() AT TIME ZONE 'UTC')"
                      " - $2::interval, 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'))) ELSE e END"
                      " ORDER BY i) AS pushes FROM decisions,"
                      " jsonb_array_elements(culprit_window -> 'pushes') WITH ORDINALITY x(e, i)"
                      " WHERE set_id = $1::bigint)"
                      " UPDATE decisions SET culprit_window = jsonb_set(culprit_window,"
                      " '{pushes}', moved.pushes) FROM moved WHERE set_id = $1::bigint"
                      " AND culprit_status = 'searching' RETURNING 1",
                      2, params);
        if (rt_ch_wait_int(h, 2500, 1,
                           "SELECT count(*) FROM decisions WHERE set_id = $1::bigint"
                           " AND culprit_status <> 'searching'",
                           1, params) == 1)
            return true;
    }
    return false;
}

static char *culprit_end(rt_ch *h, const push *p)
{
    const char *params[] = {p->set_id};
    assert_int_equal(rt_ch_wait_int(h, 60000, 1,
                                    "SELECT count(*) FROM decisions WHERE set_id = $1::bigint"
                                    " AND culprit_status <> 'searching'",
                                    1, params),
                     1);
    char *v = rt_ch_sql_text(h,
                             "SELECT culprit_status || '/' || culprit_reason || ' ' ||"
                             " culprit_range_first || ' ' || culprit_range_last || ' ' ||"
                             " (culprit_revision IS NULL) FROM decisions WHERE set_id = $1::bigint",
                             1, params);
    assert_non_null(v);
    return v;
}

/* The search of a regression on push N (N-7 passed) stopped with `reason` after its first
 * probe (N-4) made no runs that finished: stored with the window's range, published, one
 * add-new-jobs call, nothing dead-lettered; the workers are stopped. */
static void stopped_late(fixture *f, const push *p, char revisions[][41], const char *reason)
{
    char *v = culprit_end(f->h, p);
    char want[256];
    snprintf(want, sizeof want, "stopped/%s %s %s true", reason, revisions[7], revisions[0]);
    assert_string_equal(v, want);
    free(v);
    char *event = culprit_event(f);
    snprintf(want, sizeof want, "stopped %s null %s %s", reason, revisions[7], revisions[0]);
    assert_string_equal(event, want);
    free(event);
    assert_int_equal(add_new_jobs_calls(f->h, p), 1);
    assert_int_equal(rt_ch_queue_depth(f->h, "dead-letter"), 0);
    assert_int_equal(rt_ch_stop_workers(f->h, 10000), 0);
}

/* The first probe is triggered, but the jobs add-new-jobs should make never come: once the
 * request is older than culprit_probe_deadline_minutes the search stops (probe-timeout) with
 * the window's range, stored, shown and published like the other ends, instead of waiting
 * forever. (The request's time is moved back two minutes rather than waiting them.) */
static void test_a_probe_whose_runs_never_come_stops_the_search_after_its_deadline(void **state)
{
    fixture *f = *state;
    rt_ch *h = f->h;
    rt_ch_setenv(h, "CULPRIT_PROBE_DEADLINE_MINUTES", "1");
    push p;
    char revisions[10][41];
    regression(f, &p, 10, 7, revisions, NEVER, false, false);
    const char *params[] = {p.set_id};
    assert_int_equal(rt_ch_wait_int(h, WAIT_MS, 1,
                                    "SELECT count(*) FROM culprit_pending_probes"
                                    " WHERE set_id = $1::bigint AND state = 'triggered'"
                                    " AND round = 1 AND NOT confirm",
                                    1, params),
                     1);
    /* Not before its deadline: the search still waits. */
    sleep_ms(2000);
    assert_int_equal(rt_ch_sql_int(h,
                                   "SELECT count(*) FROM decisions WHERE set_id = $1::bigint"
                                   " AND culprit_status = 'searching'",
                                   1, params),
                     1);
    /* The request two deadlines old. */
    assert_true(age_requests(h, p.set_id, "2 minutes", 20));
    stopped_late(f, &p, revisions, "probe-timeout");
    char *all = explain(h, p.original);
    if (!strstr(all, "stopped (probe-timeout)") || !strstr(all, "the culprit is within"))
        fail_msg("retrig explain does not show where the search stopped:\n%s", all);
    free(all);
    all = retrig(h, "decisions --format json");
    if (!strstr(all, "\"status\": \"stopped\"") || !strstr(all, "\"reason\": \"probe-timeout\""))
        fail_msg("retrig decisions does not show the search's end:\n%s", all);
    free(all);
}

/* A probe whose jobs Treeherder lists but that do not finish (queued, running) is slow, not
 * lost: past culprit_probe_deadline_minutes the search still waits for it, and stops
 * (probe-too-slow) only RT_CULPRIT_SLOW_FACTOR deadlines after the request. A probe whose
 * jobs never come stops at the deadline (the test above). */
static void test_a_slow_probe_is_waited_for_past_the_deadline(void **state)
{
    fixture *f = *state;
    rt_ch *h = f->h;
    rt_ch_setenv(h, "CULPRIT_PROBE_DEADLINE_MINUTES", "1");
    push p;
    char revisions[10][41];
    regression(f, &p, 10, 7, revisions, RUNNING, false, false);
    const char *params[] = {p.set_id};
    /* The probe triggered: the fake lists its jobs at once, all running. */
    assert_int_equal(rt_ch_wait_int(h, WAIT_MS, 1,
                                    "SELECT count(*) FROM decisions, jsonb_array_elements("
                                    "culprit_window -> 'pushes') e WHERE set_id = $1::bigint"
                                    " AND e ? 'request' AND (e ->> 'pending')::int > 0"
                                    " AND (e ->> 'runs')::int = 0"
                                    " AND (SELECT state FROM culprit_pending_probes"
                                    "      WHERE set_id = $1::bigint AND round = 1"
                                    "      AND NOT confirm) = 'triggered'",
                                    1, params),
                     1);
    /* Two deadlines old: still waited for (a lost probe stops at one). */
    assert_false(age_requests(h, p.set_id, "2 minutes", 4));
    /* An hour old: too slow. */
    assert_true(age_requests(h, p.set_id, "1 hour", 20));
    stopped_late(f, &p, revisions, "probe-too-slow");
}

/* retrig-retrigger runs dry: the first probe is recorded dry-run with its payload, the hook
 * is not called, and the search stops (dry-run: no runs will come) with the window's range. */
static void test_a_dry_run_probe_stops_the_search_without_calling_the_hook(void **state)
{
    fixture *f = *state;
    rt_ch *h = f->h;
    push p;
    char revisions[10][41];
    regression(f, &p, 10, 7, revisions, 5, false, true);
    char *v = culprit_end(h, &p);
    char want[256];
    snprintf(want, sizeof want, "stopped/dry-run %s %s true", revisions[7], revisions[0]);
    assert_string_equal(v, want);
    free(v);
    char *event = culprit_event(f);
    snprintf(want, sizeof want, "stopped dry-run null %s %s", revisions[7], revisions[0]);
    assert_string_equal(event, want);
    free(event);
    const char *params[] = {p.set_id};
    assert_int_equal(rt_ch_sql_int(h,
                                   "SELECT count(*) FROM culprit_pending_probes WHERE"
                                   " set_id = $1::bigint AND state = 'dry-run' AND dry_run"
                                   " AND calls = 0 AND payload IS NOT NULL",
                                   1, params),
                     1);
    assert_int_equal(add_new_jobs_calls(h, &p), 0);
    json_t *calls = rt_fake_calls(&h->fake, "/api/hooks/");
    assert_int_equal(json_array_size(calls), 1); /* the set's own retrigger only */
    json_decref(calls);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
    char *all = explain(h, p.original);
    if (!strstr(all, "stopped (dry-run)"))
        fail_msg("retrig explain does not show the dry-run end:\n%s", all);
    free(all);
}

/* The history pushes' actions.json render add-new-jobs with their own input, 200 labels x
 * 100 runs, whatever retrig passes (issue 30). retrig-retrigger refuses the first probe
 * before signing (its row failed with refused-hook), claims no budget for it and never
 * calls add-new-jobs; the search stops on it with the window's range. */
static void test_a_probe_whose_template_ignores_our_input_is_refused_and_never_sent(void **state)
{
    fixture *f = *state;
    rt_ch *h = f->h;
    json_t *tasks = json_array();
    for (int i = 0; i < 200; i++) json_array_append_new(tasks, json_sprintf("label-%d", i));
    char *list = json_dumps(tasks, JSON_COMPACT);
    json_decref(tasks);
    char *greedy = NULL;
    assert_true(asprintf(&greedy, "\"tasks\": %s, \"times\": 100", list) > 0);
    free(list);
    f->probe_actions_replace = json_pack("{s:s}", "\"$eval\": \"input\"", greedy);
    free(greedy);
    push p;
    char revisions[10][41];
    regression(f, &p, 10, 7, revisions, 5, false, false);
    char *v = culprit_end(h, &p);
    char want[256];
    snprintf(want, sizeof want, "stopped/refused-hook %s %s true", revisions[7], revisions[0]);
    assert_string_equal(v, want);
    free(v);
    char *event = culprit_event(f);
    snprintf(want, sizeof want, "stopped refused-hook null %s %s", revisions[7], revisions[0]);
    assert_string_equal(event, want);
    free(event);
    const char *params[] = {p.set_id};
    assert_int_equal(rt_ch_sql_int(h,
                                   "SELECT count(*) FROM culprit_pending_probes WHERE"
                                   " set_id = $1::bigint AND state = 'failed'"
                                   " AND error = 'refused-hook' AND calls = 0"
                                   " AND action_task_id IS NULL",
                                   1, params),
                     1);
    /* Never sent: the set's own retrigger is the only hook call; no probe budget. */
    assert_int_equal(add_new_jobs_calls(h, &p), 0);
    json_t *calls = rt_fake_calls(&h->fake, "/api/hooks/");
    assert_int_equal(json_array_size(calls), 1);
    json_decref(calls);
    assert_int_equal(rt_ch_sql_int(h,
                                   "SELECT count(*) FROM budget_ledger"
                                   " WHERE idempotency_key LIKE 'culprit-probe:%'",
                                   0, NULL),
                     0);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_every_retrigger_reproducing_is_a_regression_decided_after_the_second, setup,
            teardown),
        cmocka_unit_test_setup_teardown(test_runs_already_on_the_push_decide_with_no_new_trigger,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_one_reproduction_of_three_is_an_intermittent, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_logs_pending_for_a_while_are_waited_for_then_decided,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_retrigger_whose_logs_never_parse_stays_pending_and_the_others_decide, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_bug_suggestions_failing_past_the_deadline_end_undecided, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cancelled_runs_on_the_push_do_not_stand_for_retriggers,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_refused_first_round_is_decided_with_the_runs_on_the_push, setup, teardown),
        cmocka_unit_test_setup_teardown(test_treeherder_500s_are_retried_then_decided, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_set_past_its_deadline_is_decided_with_what_is_there,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_decision_carries_the_cross_branch_history_of_each_failing_line, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_regression_right_after_a_push_where_the_label_passed_names_the_failing_push, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_regression_after_six_skipped_pushes_is_bisected_to_its_culprit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_clean_history_makes_the_probes_cheaper, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_under_the_adaptive_policy_the_probes_use_its_model,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_slow_probe_is_waited_for_past_the_deadline, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_a_probe_whose_template_ignores_our_input_is_refused_and_never_sent, setup,
            teardown),
        cmocka_unit_test_setup_teardown(test_a_treeherder_5xx_during_a_search_is_waited_out, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_a_search_out_of_budget_stops_with_the_range_that_holds_the_culprit, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_a_probe_whose_runs_never_come_stops_the_search_after_its_deadline, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_a_dry_run_probe_stops_the_search_without_calling_the_hook, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
