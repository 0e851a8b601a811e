/* SPDX-License-Identifier: MPL-2.0 */
/* test_worker_services.c - every worker waits for its services and always obeys SIGTERM.
 *
 * Each worker is pointed at RabbitMQ, Redis and Postgres through TCP proxies the test
 * switches on and off (support/proxy.h), so the shared servers are never touched. With every
 * proxy down the worker stays up, /healthz answers 503 naming what is missing and
 * retrig_connection_attempts_total counts its tries; once the proxies are up it becomes
 * ready and consumes without a restart (a malformed message reaches its queue and is
 * dead-lettered); a SIGTERM while it waits makes it exit 0 within a second. Then a worker
 * holding a message in a stalled upstream call exits 0 within its drain time, and the
 * message is handled by the next worker: nothing is lost. */
#include "support/util.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/classify_harness.h"
#include "support/endpoint.h"
#include "support/proxy.h"

#define WAIT_MS   20000
#define GWX_PULSE "pulse/treeherder_task-completed_GWxTc8p_RUa5_Xo4RtMiCA.json"
#define GWX_DEF   "taskcluster/task_definition_GWxTc8p_RUa5_Xo4RtMiCA.json"
#define GWX_ROUTE "tc-treeherder.v2.autoland.b437ae030825a8ea9fa7a632b1fcb9becbe11f69.88560"

enum { BROKER = 1, REDIS = 2, POSTGRES = 4 };

/* What each worker needs, how it says it is running, and where a malformed message for it
 * goes (NULL: it consumes no queue). */
typedef struct worker_kind {
    const char *program;
    unsigned needs;
    const char *ready; /* its log message once connected */
    const char *queue; /* "pulse" (the task exchanges), or our routing key */
} worker_kind;

static const worker_kind KINDS[] = {
    {"retrig-classify", BROKER | REDIS | POSTGRES, "consuming", "pulse"},
    {"retrig-retrigger", BROKER | REDIS | POSTGRES, "consuming", "retrigger"},
    {"retrig-decide", BROKER | POSTGRES, "consuming", "decide"},
    {"retrig-history", BROKER | POSTGRES, "consuming", "pulse"},
    {"retrig-perf", REDIS | POSTGRES, "running", NULL},
};

typedef struct world {
    rt_ch *h;
    rt_proxy *broker, *redis, *pg;
    int metrics_port;
} world;

/* A harness whose workers reach every service through a proxy, all down. */
static void world_new(world *w)
{
    w->h = rt_ch_new();
    w->broker = rt_proxy_new(5673);
    w->redis = rt_proxy_new(6380);
    w->pg = rt_proxy_new(5433);
    char url[512];
    snprintf(url, sizeof url, "amqp://guest:guest@127.0.0.1:%d/", rt_proxy_port(w->broker));
    rt_ch_setenv(w->h, "AMQP_URL", url);
    snprintf(url, sizeof url, "redis://127.0.0.1:%d/0", rt_proxy_port(w->redis));
    rt_ch_setenv(w->h, "REDIS_URL", url);
    snprintf(url, sizeof url, "postgresql://retrig:retrig@127.0.0.1:%d/%s", rt_proxy_port(w->pg),
             w->h->dbname);
    rt_ch_setenv(w->h, "DATABASE_URL", url);
    rt_ch_setenv(w->h, "DRY_RUN", "true");
    rt_ch_setenv(w->h, "PERF_INTERVAL_S", "3600");
    w->metrics_port = rt_test_free_port();
    char port[16];
    snprintf(port, sizeof port, "%d", w->metrics_port);
    rt_ch_setenv(w->h, "METRICS_PORT", port);
}

static void world_free(world *w)
{
    rt_ch_free(w->h);
    rt_proxy_free(w->broker);
    rt_proxy_free(w->redis);
    rt_proxy_free(w->pg);
}

static void all_up(world *w)
{
    rt_proxy_up(w->broker);
    rt_proxy_up(w->redis);
    rt_proxy_up(w->pg);
}

static bool alive(pid_t pid)
{
    int status;
    return waitpid(pid, &status, WNOHANG) == 0;
}

/* SIGTERM to the worker; returns how long it took to exit (ms), its exit status in *status
 * (-1 when killed by a signal). Fails after 10 s. */
static int64_t terminate(pid_t pid, int *status)
{
    int64_t start = rt_test_now_ms();
    assert_int_equal(kill(pid, SIGTERM), 0);
    int raw = 0;
    pid_t r;
    while ((r = waitpid(pid, &raw, WNOHANG)) == 0 && rt_test_now_ms() - start < 10000)
        rt_test_pause_ms(5);
    if (r != pid) {
        kill(pid, SIGKILL);
        waitpid(pid, &raw, 0);
        fail_msg("the worker did not exit within 10 s of SIGTERM");
    }
    *status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    return rt_test_now_ms() - start;
}

/* Publishes a body that is not JSON where the worker takes its messages. */
static void publish_junk(world *w, const worker_kind *k)
{
    static const char junk[] = "{not json";
    if (!strcmp(k->queue, "pulse")) {
        rt_ch_publish(w->h, "task-failed", junk, sizeof junk - 1, NULL, NULL);
        return;
    }
    rt_amqp_publish_opts opts = {0};
    assert_int_equal(rt_amqp_publish(w->h->amqp, w->h->ns, k->queue, junk, sizeof junk - 1, &opts),
                     RT_OK);
}

/* Down: up and unready, naming what it misses; up: ready and consuming, no restart. */
static void waits_then_consumes(const worker_kind *k)
{
    world w = {0};
    world_new(&w);
    if (k->queue && !strcmp(k->queue, "pulse")) rt_ch_declare_pulse(w.h);
    size_t index = rt_ch_spawn_program(w.h, k->program);
    pid_t pid = rt_ch_worker_pid(w.h, index);

    /* The first answers may say it is starting; then it names what it waits for. */
    const char *named = k->needs & BROKER ? "broker" : "redis";
    char *body = NULL;
    int64_t until = rt_test_now_ms() + WAIT_MS;
    for (;;) {
        body = rt_test_wait_health(w.metrics_port, 503, WAIT_MS);
        if (strstr(body, named) || rt_test_now_ms() > until) break;
        free(body);
        rt_test_pause_ms(100);
    }
    if (k->needs & BROKER) assert_non_null(strstr(body, "broker"));
    if (k->needs & REDIS) assert_non_null(strstr(body, "redis"));
    if (k->needs & POSTGRES) assert_non_null(strstr(body, "postgres"));
    if (!(k->needs & BROKER)) assert_null(strstr(body, "broker"));
    if (!(k->needs & REDIS)) assert_null(strstr(body, "redis"));
    free(body);
    /* It keeps trying, and does not give up. */
    const char *first = k->needs & BROKER ? "broker" : "redis";
    char series[128];
    snprintf(series, sizeof series,
             "retrig_connection_attempts_total{dependency=\"%s\",result=\"failed\"}", first);
    assert_true(rt_test_wait_sample(w.metrics_port, series, 3, WAIT_MS) >= 3);
    rt_test_pause_ms(1000);
    assert_true(alive(pid));
    assert_false(rt_ch_log_says(w.h, index, k->ready));

    all_up(&w);
    free(rt_test_wait_health(w.metrics_port, 200, WAIT_MS));
    int64_t deadline = rt_test_now_ms() + WAIT_MS;
    while (!rt_ch_log_says(w.h, index, k->ready) && rt_test_now_ms() < deadline)
        rt_test_pause_ms(20);
    assert_true(rt_ch_log_says(w.h, index, k->ready));
    assert_true(alive(pid));
    if (k->queue) {
        publish_junk(&w, k);
        assert_true(
            rt_test_wait_sample(w.metrics_port, "retrig_dead_lettered_total{", 1, WAIT_MS) >= 1);
    }
    assert_int_equal(rt_ch_stop_workers(w.h, 10000), 0);
    world_free(&w);
}

/* SIGTERM while every service is down and the worker waits: exit 0 within a second. */
static void stops_while_waiting(const worker_kind *k)
{
    world w = {0};
    world_new(&w);
    size_t index = rt_ch_spawn_program(w.h, k->program);
    pid_t pid = rt_ch_worker_pid(w.h, index);
    free(rt_test_wait_health(w.metrics_port, 503, WAIT_MS));
    rt_test_pause_ms(300); /* well into the backoff */
    int status = 0;
    int64_t took = terminate(pid, &status);
    w.h->nworkers = 0; /* reaped here */
    assert_int_equal(status, 0);
    if (took >= 1000)
        fail_msg("%s took %lld ms to exit after SIGTERM", k->program, (long long)took);
    world_free(&w);
}

#define WORKER_TESTS(i, name)                                                                      \
    static void test_##name##_waits_for_its_services_then_consumes(void **state)                   \
    {                                                                                              \
        (void)state;                                                                               \
        waits_then_consumes(&KINDS[i]);                                                            \
    }                                                                                              \
    static void test_##name##_exits_within_a_second_of_sigterm_while_waiting(void **state)         \
    {                                                                                              \
        (void)state;                                                                               \
        stops_while_waiting(&KINDS[i]);                                                            \
    }

WORKER_TESTS(0, classify)
WORKER_TESTS(1, retrigger)
WORKER_TESTS(2, decide)
WORKER_TESTS(3, history)
WORKER_TESTS(4, perf)

/* A worker holding a message whose upstream call hangs exits 0 within its drain time after
 * SIGTERM, and the message is not lost: the next worker classifies the run. */
static void test_sigterm_during_a_stalled_upstream_call_loses_nothing(void **state)
{
    (void)state;
    rt_ch *h = rt_ch_new();
    rt_ch_setenv(h, "HTTP_TIMEOUT_MS", "60000");
    rt_ch_setenv(h, "DRAIN_TIMEOUT_MS", "500");
    char task_id[23], group[23];
    rt_ch_slugid(task_id);
    rt_ch_slugid(group);
    json_t *scenario =
        json_pack("{s:{s:o}, s:{s:{s:[{s:s, s:s}]}}}", "tasks", task_id,
                  rt_ch_task_definition(GWX_DEF, group, NULL), "artifacts", task_id, "0", "name",
                  "public/test_info/mochitest_errorsummary.log", "fixture",
                  "errorsummary/mochitest-browser-chrome_errorsummary.log");
    rt_ch_scenario(h, scenario);
    json_decref(scenario);
    char fault[256];
    snprintf(fault, sizeof fault,
             "{\"kind\": \"stall\", \"ms\": 60000, \"times\": 1, \"path_prefix\": "
             "\"/api/queue/v1/task/%s\"}",
             task_id);
    assert_int_equal(rt_fake_add_fault(&h->fake, fault), 200);
    rt_ch_start_workers(h, 1);
    char *body = rt_ch_failed_message(GWX_PULSE, task_id, group);
    rt_ch_publish(h, "task-failed", body, strlen(body), GWX_ROUTE, NULL);
    free(body);

    /* Wait until the worker is inside the stalled call. */
    char prefix[96];
    snprintf(prefix, sizeof prefix, "/api/queue/v1/task/%s", task_id);
    int64_t deadline = rt_test_now_ms() + WAIT_MS;
    for (;;) {
        json_t *calls = rt_fake_calls(&h->fake, prefix);
        bool stalled = calls && json_array_size(calls) > 0;
        json_decref(calls);
        if (stalled) break;
        if (rt_test_now_ms() > deadline) fail_msg("the worker never asked for the task");
        rt_test_pause_ms(20);
    }
    rt_test_pause_ms(200);
    int status = 0;
    int64_t took = terminate(rt_ch_worker_pid(h, 0), &status);
    h->nworkers = 0;
    assert_int_equal(status, 0);
    /* The drain time (500 ms), and the transfer's next progress check (at most a second). */
    if (took >= 2500) fail_msg("took %lld ms to exit after SIGTERM", (long long)took);
    assert_string_equal(rt_ch_verdict(h, task_id, 0), "");

    /* The message went back (a delayed copy, or a redelivery): the next worker handles it. */
    rt_ch_start_workers(h, 1);
    assert_string_equal(rt_ch_wait_verdict(h, task_id, 0, WAIT_MS), "retrigger/eligible");
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
    rt_ch_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classify_waits_for_its_services_then_consumes),
        cmocka_unit_test(test_classify_exits_within_a_second_of_sigterm_while_waiting),
        cmocka_unit_test(test_retrigger_waits_for_its_services_then_consumes),
        cmocka_unit_test(test_retrigger_exits_within_a_second_of_sigterm_while_waiting),
        cmocka_unit_test(test_decide_waits_for_its_services_then_consumes),
        cmocka_unit_test(test_decide_exits_within_a_second_of_sigterm_while_waiting),
        cmocka_unit_test(test_history_waits_for_its_services_then_consumes),
        cmocka_unit_test(test_history_exits_within_a_second_of_sigterm_while_waiting),
        cmocka_unit_test(test_perf_waits_for_its_services_then_consumes),
        cmocka_unit_test(test_perf_exits_within_a_second_of_sigterm_while_waiting),
        cmocka_unit_test(test_sigterm_during_a_stalled_upstream_call_loses_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
