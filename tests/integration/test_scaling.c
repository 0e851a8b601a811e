/* SPDX-License-Identifier: MPL-2.0 */
/* test_scaling.c - horizontal scaling (issue 8): 3 retrig-classify, 2 retrig-retrigger and
 * 2 retrig-decide processes share one broker, one Redis and one Postgres and process a
 * recorded stream in which every message arrives more than once, and nothing is done twice.
 *
 * The stream is made from the real fixtures: failing test tasks (the GWxTc8p run made to
 * fail, each with its own label on the recorded autoland push and the recorded
 * errorsummary) and passes (recorded task-completed messages with new task ids). Every
 * Pulse message is published twice. The test plays Taskcluster's part as
 * scripts/demo_driver.py does: for each hook trigger the fake upstream saw, it creates the
 * requested runs (reproducing the failure, or passing for the intermittent ones) and
 * publishes their messages, twice each. A tap on our work exchange counts the retrigger
 * requests the classifiers published and publishes a second copy of every retrigger and
 * decide request, so the retrigger and decide replicas also see each one twice.
 *
 * Afterwards (every queue drained, the workers stopped with SIGTERM and exited 0): one set
 * per failure, one retrigger request per set, one budget claim per set, one hook trigger
 * per label (the fake's /_control/triggers), one decision row per set and one decision
 * event per set on <ns>.decisions. Bounded: the whole test gives up after RUN_MS. */
#include "support/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/options.h"
#include "support/classify_harness.h"
#include "support/fixtures.h"

#define GWX_PULSE    "pulse/treeherder_task-completed_GWxTc8p_RUa5_Xo4RtMiCA.json"
#define GWX_DEF      "taskcluster/task_definition_GWxTc8p_RUa5_Xo4RtMiCA.json"
#define GWX_ROUTE    "tc-treeherder.v2.autoland.b437ae030825a8ea9fa7a632b1fcb9becbe11f69.88560"
#define GWX_LABEL    "test-android-em-7.0-x86_64/debug-mochitest-e10s-1"
#define GWX_REVISION "b437ae030825a8ea9fa7a632b1fcb9becbe11f69"
#define PLATFORM     "android-em-7-0-x86_64"
#define FUZZ_DONE    "pulse/fuzzmanager_task-completed_Z1kaoRtHRRWyyuMDqadYPA.json"
#define DEC_FIX      "taskcluster/task_definition_build-android-api-16-debug.json"
#define ES_FAIL      "errorsummary/mochitest-browser-chrome_errorsummary.log"
#define BUGSUG       "treeherder/bug_suggestions.json"
#define CLIENT_ID    "project/retrig/scaling-test"
#define TOKEN        "fake-access-token-scaling-0123456789"
#define DELAYS       "200,400,800"
#define COPY_HDR     "x-rt-test-copy"

#define NFAIL       12 /* failing tasks; every third one is intermittent */
#define NPASS       16 /* passing tasks */
#define RETRIGGERS  3  /* retriggers_per_failure */
#define DELIVERIES  2  /* times every Pulse message is published */
#define N_CLASSIFY  3
#define N_RETRIGGER 2
#define N_DECIDE    2
#define RUN_MS      75000

typedef struct failure {
    char task_id[23];
    char label[256];
    bool intermittent;
    int played; /* retriggered runs published */
} failure;

typedef struct fixture {
    rt_ch *h;
    char group[23];
    failure fails[NFAIL];
    rt_amqp *tap;        /* consumes tap_queue and events_queue */
    char tap_queue[160]; /* <ns> exchange, keys retrigger and decide */
    char events_queue[160];
    char requests[NFAIL * 4][64]; /* message ids of the requests the classifiers published */
    int request_count[NFAIL * 4];
    size_t nrequest_ids;
    size_t copies;                   /* requests published a second time by the tap */
    long long event_sets[NFAIL * 4]; /* set_id of each decision event */
    size_t nevents;
    size_t triggers_played;
} fixture;

static long next_job_id(void)
{
    static long id;
    if (!id) id = 600000000L + (random() % 1000000) * 100;
    return ++id;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->h = rt_ch_new();
    rt_ch *h = f->h;
    char retriggers[8];
    snprintf(retriggers, sizeof retriggers, "%d", RETRIGGERS);
    rt_ch_setenv(h, "RETRIGGERS_PER_FAILURE", retriggers);
    rt_ch_setenv(h, "BUDGET_LIMITS", "*=10000");
    rt_ch_setenv(h, "TASKCLUSTER_CLIENT_ID", CLIENT_ID);
    rt_ch_setenv(h, "TASKCLUSTER_ACCESS_TOKEN", TOKEN);
    rt_ch_setenv(h, "DECIDE_DELAYS_MS", DELAYS);

    char err[RT_ERRSTR_SIZE] = "", exchange[160];
    rt_amqp_options opts;
    rt_amqp_options_from_config(&opts, &h->cfg, "test-tap");
    assert_int_equal(rt_amqp_new(&f->tap, &opts, err), RT_OK);
    assert_int_equal(rt_amqp_ensure_connected(f->tap, 10000), RT_OK);
    rt_amqp_queue_args args = {.auto_delete = false};
    /* The work exchange (declared as the workers declare it) and a tap on its requests. */
    snprintf(f->tap_queue, sizeof f->tap_queue, "%s.test-tap", h->ns);
    assert_int_equal(rt_amqp_declare_exchange(f->tap, h->ns, "topic"), RT_OK);
    assert_int_equal(rt_amqp_declare_queue(f->tap, f->tap_queue, &args), RT_OK);
    assert_int_equal(rt_amqp_bind_queue(f->tap, f->tap_queue, h->ns, "retrigger"), RT_OK);
    assert_int_equal(rt_amqp_bind_queue(f->tap, f->tap_queue, h->ns, "decide"), RT_OK);
    /* The decision events, as a bot would read them. */
    snprintf(exchange, sizeof exchange, "%s.decisions", h->ns);
    snprintf(f->events_queue, sizeof f->events_queue, "%s.test-events", h->ns);
    assert_int_equal(rt_amqp_declare_exchange(f->tap, exchange, "topic"), RT_OK);
    assert_int_equal(rt_amqp_declare_queue(f->tap, f->events_queue, &args), RT_OK);
    assert_int_equal(rt_amqp_bind_queue(f->tap, f->events_queue, exchange, "#"), RT_OK);
    assert_int_equal(rt_amqp_consume(f->tap, f->tap_queue), RT_OK);
    assert_int_equal(rt_amqp_consume(f->tap, f->events_queue), RT_OK);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    char q[256];
    if (rt_amqp_delete_queue(f->tap, f->tap_queue) != RT_OK) {}
    if (rt_amqp_delete_queue(f->tap, f->events_queue) != RT_OK) {}
    char delays[] = DELAYS, *save = NULL;
    for (char *d = strtok_r(delays, ",", &save); d; d = strtok_r(NULL, ",", &save)) {
        snprintf(q, sizeof q, "%s.decide.delay.%s", f->h->ns, d);
        if (rt_amqp_delete_queue(f->tap, q) != RT_OK) {}
    }
    snprintf(q, sizeof q, "%s.decisions", f->h->ns);
    if (rt_amqp_delete_exchange(f->tap, q) != RT_OK) {}
    rt_amqp_free(f->tap);
    rt_ch_free(f->h);
    free(f);
    return 0;
}

/* ---- Taskcluster's and Treeherder's part ---- */

/* A Treeherder job for a failing run, with the original's bug_suggestions. */
static void add_job(rt_ch *h, const char *task_id)
{
    char id[32];
    long job = next_job_id();
    snprintf(id, sizeof id, "%ld", job);
    json_t *s =
        json_pack("{s:{s:[{s:I, s:i, s:s, s:s, s:i}]}, s:{s:{s:s}}}", "jobs", task_id, "id",
                  (json_int_t)job, "retry_id", 0, "result", "testfailed", "state", "completed",
                  "failure_classification_id", 1, "bug_suggestions", id, "fixture", BUGSUG);
    rt_ch_scenario(h, s);
    json_decref(s);
}

static void publish_times(rt_ch *h, const char *event, const char *body, const char *route)
{
    for (int d = 0; d < DELIVERIES; d++) rt_ch_publish(h, event, body, strlen(body), route, NULL);
}

/* The push's decision task, the failing originals and their data in the fake. */
static void register_push(fixture *f)
{
    rt_ch *h = f->h;
    rt_ch_slugid(f->group);
    json_t *s =
        json_pack("{s:{s:{s:s, s:{s:s}}}, s:{s:{s:[o]}}, s:{s:s}}", "tasks", f->group, "fixture",
                  DEC_FIX, "override", "taskGroupId", f->group, "artifacts", f->group, "0",
                  rt_ch_actions_artifact(f->group, GWX_REVISION), "hook_clients", CLIENT_ID, TOKEN);
    rt_ch_scenario(h, s);
    json_decref(s);
    for (int i = 0; i < NFAIL; i++) {
        failure *x = &f->fails[i];
        rt_ch_slugid(x->task_id);
        snprintf(x->label, sizeof x->label, "%s-%s-%d", GWX_LABEL, f->group, i);
        x->intermittent = i % 3 == 0;
        s = json_pack("{s:{s:o}, s:{s:{s:[{s:s, s:s}, {s:s, s:s}]}}}", "tasks", x->task_id,
                      rt_ch_task_definition(GWX_DEF, f->group, x->label), "artifacts", x->task_id,
                      "0", "name", "public/logs/live_backing.log", "content", "recorded log\n",
                      "name", "public/test_info/mochitest_errorsummary.log", "fixture", ES_FAIL);
        rt_ch_scenario(h, s);
        json_decref(s);
        add_job(h, x->task_id);
    }
}

/* The recorded stream: the failures and the passes, interleaved, each DELIVERIES times. */
static void publish_stream(fixture *f)
{
    rt_ch *h = f->h;
    char *text = rt_test_read_file(rt_test_fixture(FUZZ_DONE), NULL);
    json_t *pass = json_loads(text, 0, NULL);
    free(text);
    assert_non_null(pass);
    for (int i = 0; i < NFAIL || i < NPASS; i++) {
        if (i < NFAIL) {
            char *body = rt_ch_failed_message(GWX_PULSE, f->fails[i].task_id, f->group);
            publish_times(h, "task-failed", body, GWX_ROUTE);
            free(body);
        }
        if (i < NPASS) {
            char task_id[23];
            rt_ch_slugid(task_id);
            json_object_set_new(json_object_get(pass, "status"), "taskId", json_string(task_id));
            char *body = json_dumps(pass, JSON_COMPACT);
            publish_times(h, "task-completed", body, NULL);
            free(body);
        }
    }
    json_decref(pass);
}

/* One retriggered run of a failure resolves: its task (and, when it fails, its job) in the
 * fake, then its Pulse message, DELIVERIES times. */
static void resolve_retrigger(fixture *f, const failure *x, bool reproduces)
{
    rt_ch *h = f->h;
    char task_id[23];
    rt_ch_slugid(task_id);
    json_t *s = json_pack("{s:{s:o}}", "tasks", task_id,
                          rt_ch_task_definition(GWX_DEF, f->group, x->label));
    rt_ch_scenario(h, s);
    json_decref(s);
    if (reproduces) add_job(h, task_id);
    json_t *body = NULL;
    if (reproduces) {
        char *text = rt_test_failed_variant(GWX_PULSE, 1);
        body = json_loads(text, 0, NULL);
        free(text);
    } else {
        json_t *wrapper = json_load_file(rt_test_fixture(GWX_PULSE), 0, NULL);
        assert_non_null(wrapper);
        body = json_deep_copy(json_object_get(wrapper, "payload"));
        json_decref(wrapper);
    }
    assert_non_null(body);
    json_t *status = json_object_get(body, "status");
    json_object_set_new(status, "taskId", json_string(task_id));
    json_object_set_new(status, "taskGroupId", json_string(f->group));
    json_object_set_new(body, "task", json_pack("{s:{s:s}}", "tags", "label", x->label));
    char *text = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    publish_times(h, reproduces ? "task-failed" : "task-completed", text, GWX_ROUTE);
    free(text);
}

/* The labels a hook trigger asked to retrigger, with how many times, passed to fn. */
static void trigger_requests(json_t *trigger, void (*fn)(void *, const char *, int), void *arg)
{
    json_t *input =
        json_object_get(json_object_get(json_object_get(trigger, "payload"), "user"), "input");
    json_t *requests = json_object_get(input, "requests");
    size_t i, k;
    json_t *r, *t;
    json_array_foreach(requests, i, r)
    {
        json_t *times = json_object_get(r, "times");
        json_array_foreach(json_object_get(r, "tasks"), k, t)
            fn(arg, json_string_value(t), times ? (int)json_integer_value(times) : 1);
    }
}

static failure *failure_by_label(fixture *f, const char *label)
{
    for (int i = 0; label && i < NFAIL; i++)
        if (!strcmp(f->fails[i].label, label)) return &f->fails[i];
    return NULL;
}

static void play_request(void *arg, const char *label, int times)
{
    fixture *f = arg;
    failure *x = failure_by_label(f, label);
    if (!x) fail_msg("a trigger asked for an unknown label %s", label ? label : "(none)");
    for (int n = 0; n < times; n++) {
        resolve_retrigger(f, x, !x->intermittent || x->played == 0);
        x->played++;
    }
}

/* Plays the retriggers of every hook trigger not played yet, as Taskcluster would. */
static void play_triggers(fixture *f)
{
    json_t *triggers = rt_fake_triggers(&f->h->fake);
    assert_non_null(triggers);
    for (; f->triggers_played < json_array_size(triggers); f->triggers_played++)
        trigger_requests(json_array_get(triggers, f->triggers_played), play_request, f);
    json_decref(triggers);
}

/* ---- the tap ---- */

static void count_request(fixture *f, const char *message_id)
{
    for (size_t i = 0; i < f->nrequest_ids; i++) {
        if (!strcmp(f->requests[i], message_id)) {
            f->request_count[i]++;
            return;
        }
    }
    assert_true(f->nrequest_ids < NFAIL * 4);
    snprintf(f->requests[f->nrequest_ids], sizeof f->requests[0], "%s", message_id);
    f->request_count[f->nrequest_ids++] = 1;
}

/* Handles what reached the tap within timeout_ms: counts the retrigger requests the
 * classifiers published and publishes a copy of each request the workers published,
 * counts the decision events. Returns how
 * many messages it took. */
static size_t pump_tap(fixture *f, int timeout_ms)
{
    size_t taken = 0;
    rt_amqp_message m = {0};
    while (rt_amqp_next(f->tap, &m, taken ? 0 : timeout_ms) == RT_OK) {
        taken++;
        if (!strcmp(m.queue, f->events_queue)) {
            json_t *doc = json_loads(m.body, 0, NULL);
            assert_non_null(doc);
            assert_true(f->nevents < NFAIL * 4);
            f->event_sets[f->nevents++] = json_integer_value(json_object_get(doc, "set_id"));
            json_decref(doc);
        } else if (!rt_amqp_message_header(&m, COPY_HDR) && m.attempt == 0 && m.death_count == 0) {
            /* Published by a worker (not a copy of ours, nor a delayed retry coming back
             * from a delay queue). */
            if (!strcmp(m.routing_key, "retrigger")) {
                assert_non_null(m.message_id);
                count_request(f, m.message_id);
            }
            /* The broker delivers it a second time. */
            rt_amqp_header headers[] = {{COPY_HDR, "1"}};
            rt_amqp_publish_opts opts = {
                .message_id = m.message_id, .headers = headers, .header_count = 1};
            assert_int_equal(rt_amqp_publish(f->tap, f->h->ns, m.routing_key, m.body, m.len, &opts),
                             RT_OK);
            f->copies++;
        }
        assert_int_equal(rt_amqp_ack(f->tap, &m), RT_OK);
        rt_amqp_message_free(&m);
    }
    return taken;
}

/* Messages ready in every queue the pipeline uses (delay queues included). */
static unsigned pending(fixture *f)
{
    rt_ch *h = f->h;
    unsigned total = 0;
    char q[256];
    const char *suffixes[] = {"retrigger", "decide", "classify-retry", "test-tap"};
    for (size_t i = 0; i < 4; i++) total += rt_ch_queue_depth(h, suffixes[i]);
    char delays[] = DELAYS, *save = NULL;
    for (char *d = strtok_r(delays, ",", &save); d; d = strtok_r(NULL, ",", &save)) {
        snprintf(q, sizeof q, "decide.delay.%s", d);
        total += rt_ch_queue_depth(h, q);
    }
    uint32_t n = 0;
    assert_int_equal(rt_amqp_queue_depth(h->amqp, h->pulse_queue, &n), RT_OK);
    return total + n;
}

static void start_replicas(rt_ch *h)
{
    rt_ch_start_workers(h, N_CLASSIFY);
    rt_ch_start_program(h, "retrig-retrigger", N_RETRIGGER);
    rt_ch_start_program(h, "retrig-decide", N_DECIDE);
}

static long long sql_int(rt_ch *h, const char *sql) { return rt_ch_sql_int(h, sql, 0, NULL); }

/* Counts label occurrences in the triggers. */
typedef struct label_count {
    fixture *f;
    int per_failure[NFAIL];
    int unknown;
} label_count;

static void count_label(void *arg, const char *label, int times)
{
    label_count *c = arg;
    (void)times;
    failure *x = failure_by_label(c->f, label);
    if (x)
        c->per_failure[x - c->f->fails]++;
    else
        c->unknown++;
}

static void
test_replicas_process_a_redelivered_stream_without_duplicate_requests_triggers_or_decisions(
    void **state)
{
    fixture *f = *state;
    rt_ch *h = f->h;
    int64_t deadline = rt_test_now_ms() + RUN_MS;
    register_push(f);
    start_replicas(h);
    publish_stream(f);

    /* Until every set is decided: play the retriggers, feed the duplicates. */
    while (sql_int(h, "SELECT count(*) FROM decisions") < NFAIL) {
        play_triggers(f);
        pump_tap(f, 100);
    }
    /* Until every queue is drained with no worker running: the duplicates in flight were
     * all handled. A SIGTERM puts a worker's prefetched messages back: start again then. */
    for (;;) {
        int quiet = 0;
        while (quiet < 5 && rt_test_now_ms() < deadline) {
            play_triggers(f);
            quiet = pump_tap(f, 100) == 0 && pending(f) == 0 ? quiet + 1 : 0;
        }
        assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
        if (pump_tap(f, 300) == 0 && pending(f) == 0) break;
        if (rt_test_now_ms() > deadline) fail_msg("queues not drained in time");
        start_replicas(h);
    }

    /* One set per failure, each with its original. */
    assert_int_equal(sql_int(h, "SELECT count(*) FROM retrigger_sets"), NFAIL);
    for (int i = 0; i < NFAIL; i++) {
        const char *params[] = {f->fails[i].task_id, f->fails[i].label};
        assert_int_equal(rt_ch_sql_int(h,
                                       "SELECT count(*) FROM retrigger_sets WHERE"
                                       " original_task_id = $1 AND label = $2",
                                       2, params),
                         1);
    }
    /* One retrigger request published per set (the tap's copies aside), one budget claim
     * per set, in Redis and in the ledger. */
    assert_int_equal(f->nrequest_ids, NFAIL);
    for (size_t i = 0; i < f->nrequest_ids; i++) assert_int_equal(f->request_count[i], 1);
    assert_true(f->copies > NFAIL); /* the retrigger and decide replicas saw duplicates */
    assert_int_equal(rt_ch_budget_counter(h, PLATFORM), NFAIL * RETRIGGERS);
    assert_int_equal(sql_int(h, "SELECT count(*) FROM budget_ledger"), NFAIL);
    assert_int_equal(sql_int(h, "SELECT coalesce(sum(amount), 0) FROM budget_ledger"),
                     NFAIL * RETRIGGERS);
    /* One hook call per set, one trigger per label. */
    assert_int_equal(sql_int(h, "SELECT count(*) FROM retrigger_actions"
                                " WHERE outcome = 'triggered' AND attempts = 1"),
                     NFAIL);
    json_t *triggers = rt_fake_triggers(&h->fake);
    assert_non_null(triggers);
    assert_int_equal(json_array_size(triggers), NFAIL);
    label_count labels = {.f = f};
    size_t i;
    json_t *t;
    json_array_foreach(triggers, i, t) trigger_requests(t, count_label, &labels);
    json_decref(triggers);
    assert_int_equal(labels.unknown, 0);
    for (int k = 0; k < NFAIL; k++) assert_int_equal(labels.per_failure[k], 1);
    /* Every run the stream carried was recorded once; the retriggers joined their sets. */
    assert_int_equal(sql_int(h, "SELECT count(*) FROM runs"), NFAIL + NPASS + NFAIL * RETRIGGERS);
    assert_int_equal(sql_int(h, "SELECT count(*) FROM retrigger_set_members"), NFAIL * RETRIGGERS);
    /* One decision per set, with the verdict its retriggers call for. */
    assert_int_equal(sql_int(h, "SELECT count(*) FROM decisions"), NFAIL);
    assert_int_equal(sql_int(h, "SELECT count(*) FROM retrigger_sets WHERE status = 'decided'"),
                     NFAIL);
    assert_int_equal(sql_int(h, "SELECT count(*) FROM decisions WHERE verdict = 'intermittent'"),
                     (NFAIL + 2) / 3);
    assert_int_equal(sql_int(h, "SELECT count(*) FROM decisions WHERE verdict = 'regression'"),
                     NFAIL - (NFAIL + 2) / 3);
    /* One decision event per set. */
    assert_int_equal(f->nevents, NFAIL);
    for (size_t a = 0; a < f->nevents; a++) {
        char id[32];
        snprintf(id, sizeof id, "%lld", f->event_sets[a]);
        const char *params[] = {id};
        assert_int_equal(
            rt_ch_sql_int(h, "SELECT count(*) FROM decisions WHERE set_id = $1::bigint", 1, params),
            1);
        for (size_t b = a + 1; b < f->nevents; b++)
            assert_true(f->event_sets[a] != f->event_sets[b]);
    }
    assert_int_equal(rt_ch_queue_depth(h, "dead-letter"), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_replicas_process_a_redelivered_stream_without_duplicate_requests_triggers_or_decisions,
            setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
