/* SPDX-License-Identifier: MPL-2.0 */
/* test_metrics.c - a real retrig-classify with metrics_port set: /metrics counts what it
 * handles, /healthz follows its connections (its Redis is a private redis-server the test
 * kills and restarts, never the shared one), and SIGHUP reloads the configuration file
 * without stopping the worker. Each test has its own harness (support/classify_harness.h). */
#include "support/util.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/io/http.h"
#include "support/classify_harness.h"
#include "support/endpoint.h"

#define B3E       "B3EheQ-IQ5aPzw34KS_a6g"
#define B3E_PULSE "pulse/treeherder_task-completed_B3EheQ-IQ5aPzw34KS_a6g.json"
#define B3E_ROUTE "tc-treeherder.v2.autoland.918d7c84da371bda26460fb4b50f161d32107880.88554"
#define WAIT_MS   15000
#define GWX_PULSE "pulse/treeherder_task-completed_GWxTc8p_RUa5_Xo4RtMiCA.json"
#define GWX_ROUTE "tc-treeherder.v2.autoland.b437ae030825a8ea9fa7a632b1fcb9becbe11f69.88560"

/* ---- a private redis-server the test may lose ---- */

typedef struct private_redis {
    pid_t pid;
    int port;
    char url[128];
} private_redis;

static bool redis_answers(int port)
{
    struct timeval tv = {.tv_sec = 1, .tv_usec = 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
    bool ok = false;
    if (c && !c->err) {
        redisReply *r = redisCommand(c, "PING");
        ok = r && r->type == REDIS_REPLY_STATUS;
        if (r) freeReplyObject(r);
    }
    if (c) redisFree(c);
    return ok;
}

static void start_redis(private_redis *r)
{
    char port[16];
    if (r->port == 0) r->port = rt_test_free_port();
    snprintf(port, sizeof port, "%d", r->port);
    snprintf(r->url, sizeof r->url, "redis://127.0.0.1:%d/0", r->port);
    r->pid = fork();
    assert_true(r->pid >= 0);
    if (r->pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) {
            dup2(devnull, STDOUT_FILENO);
            dup2(devnull, STDERR_FILENO);
        }
        const char *argv[] = {"redis-server", "--port",      port, "--bind",
                              "127.0.0.1",    "--save",      "",   "--appendonly",
                              "no",           "--daemonize", "no", NULL};
        execvp("redis-server", (char *const *)argv);
        _exit(127);
    }
    int64_t deadline = rt_test_now_ms() + 10000;
    while (!redis_answers(r->port)) {
        if (rt_test_now_ms() > deadline) fail_msg("redis-server on port %d did not start", r->port);
        rt_test_pause_ms(10);
    }
}

static void kill_redis(private_redis *r)
{
    if (r->pid <= 0) return;
    kill(r->pid, SIGKILL);
    waitpid(r->pid, NULL, 0);
    r->pid = 0;
}

static int start_worker_with_metrics(rt_ch *h)
{
    int port = rt_test_free_port();
    char text[16];
    snprintf(text, sizeof text, "%d", port);
    rt_ch_setenv(h, "METRICS_PORT", text);
    rt_ch_start_workers(h, 1);
    return port;
}

static void publish_completed(rt_ch *h)
{
    size_t len = 0;
    char *body = rt_test_read_file(rt_test_fixture(B3E_PULSE), &len);
    rt_ch_publish(h, "task-completed", body, len, B3E_ROUTE, NULL);
    free(body);
}

static void test_metrics_count_handled_and_dead_lettered_messages(void **state)
{
    (void)state;
    rt_ch *h = rt_ch_new();
    int port = start_worker_with_metrics(h);
    free(rt_test_wait_health(port, 200, WAIT_MS));
    const char *acked = "retrig_messages_total{outcome=\"acked\",reason=\"not-failed\"}";
    double before = rt_test_sample(port, acked);
    double batches =
        rt_test_sample(port, "retrig_message_processing_seconds_count{path=\"batch\"}");
    double dead_before = rt_test_sample(port, "retrig_dead_lettered_total{");

    publish_completed(h);
    assert_string_equal(rt_ch_wait_verdict(h, B3E, 0, WAIT_MS), "skip/not-failed");
    assert_true(rt_test_wait_sample(port, acked, before + 1, WAIT_MS) == before + 1);
    assert_true(rt_test_sample(port, "retrig_message_processing_seconds_count{path=\"batch\"}") >=
                batches + 1);

    const char *broken = "{\"version\": 1, \"status\": ";
    rt_ch_publish(h, "task-failed", broken, strlen(broken), NULL, NULL);
    assert_true(rt_test_wait_sample(port, "retrig_dead_lettered_total{", dead_before + 1,
                                    WAIT_MS) == dead_before + 1);
    assert_true(
        rt_test_sample(
            port, "retrig_messages_total{outcome=\"dead-lettered\",reason=\"invalid-json\"}") >= 1);
    assert_true(rt_test_sample(port, "retrig_dependency_up{dependency=\"redis\"}") == 1);
    rt_ch_message *dead = NULL;
    rt_ch_take(h, "dead-letter", 1, WAIT_MS, &dead);
    rt_ch_messages_free(dead, 1);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
    rt_ch_free(h);
}

static void test_healthz_is_unready_while_redis_is_lost_and_ready_again_after(void **state)
{
    (void)state;
    private_redis redis = {0};
    start_redis(&redis);
    rt_ch *h = rt_ch_new();
    rt_ch_setenv(h, "REDIS_URL", redis.url);
    int port = start_worker_with_metrics(h);
    char *body = rt_test_wait_health(port, 200, WAIT_MS);
    assert_string_equal(body, "ready\n");
    free(body);

    kill_redis(&redis);
    body = rt_test_wait_health(port, 503, WAIT_MS);
    assert_non_null(strstr(body, "redis"));
    assert_null(strstr(body, "postgres"));
    free(body);
    assert_true(rt_test_sample(port, "retrig_dependency_up{dependency=\"redis\"}") == 0);

    start_redis(&redis); /* the same port: the worker reconnects by itself */
    free(rt_test_wait_health(port, 200, WAIT_MS));
    assert_true(rt_test_sample(port, "retrig_dependency_up{dependency=\"redis\"}") == 1);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
    rt_ch_free(h);
    kill_redis(&redis);
}

static long long redis_integer(redisContext *c, const char *command)
{
    redisReply *r = redisCommand(c, command);
    assert_non_null(r);
    if (r->type != REDIS_REPLY_INTEGER) fail_msg("%s: %s", command, r->str ? r->str : "?");
    long long v = r->integer;
    freeReplyObject(r);
    return v;
}

static void redis_ok(redisContext *c, const char *command)
{
    redisReply *r = redisCommand(c, command);
    assert_non_null(r);
    if (r->type == REDIS_REPLY_ERROR) fail_msg("%s: %s", command, r->str);
    freeReplyObject(r);
}

/* Each lane holds its own connections: one lane cut off while the others hold theirs makes
 * the process unready, and /healthz names the lane. */
static void test_healthz_names_a_lane_that_lost_its_redis_while_the_others_hold_theirs(void **state)
{
    (void)state;
    private_redis redis = {0};
    start_redis(&redis);
    rt_ch *h = rt_ch_new();
    rt_ch_setenv(h, "REDIS_URL", redis.url);
    rt_ch_setenv(h, "CLASSIFY_CONCURRENCY", "4");
    int port = start_worker_with_metrics(h);
    free(rt_test_wait_health(port, 200, WAIT_MS));

    /* Each lane names its connection (CLIENT SETNAME retrig-classify-lane-<n>). */
    redisContext *c = redisConnect("127.0.0.1", redis.port);
    assert_true(c && !c->err);
    redisReply *list = redisCommand(c, "CLIENT LIST TYPE normal");
    assert_true(list && list->type == REDIS_REPLY_STRING);
    long long newest = 0; /* lane 3's client */
    int clients = 0;
    for (const char *at = list->str; (at = strstr(at, "id=")) != NULL; at += 3) {
        clients++;
        const char *line_end = strchr(at, '\n');
        const char *name = strstr(at, " name=retrig-classify-lane-3 ");
        if (name && (!line_end || name < line_end)) newest = atoll(at + 3);
    }
    freeReplyObject(list);
    assert_int_equal(clients, 5); /* four lanes and this connection */
    assert_true(newest > 0);

    /* No room for a new client, then lane 3's connection goes: it cannot come back. */
    redis_ok(c, "CONFIG SET maxclients 4");
    char kill_cmd[64];
    snprintf(kill_cmd, sizeof kill_cmd, "CLIENT KILL ID %lld", newest);
    assert_int_equal(redis_integer(c, kill_cmd), 1);
    char *body = rt_test_wait_health(port, 503, WAIT_MS);
    assert_non_null(strstr(body, "redis"));
    assert_non_null(strstr(body, "(lanes 3)"));
    free(body);
    assert_true(rt_test_sample(port, "retrig_dependency_up{dependency=\"redis\"}") == 0);

    redis_ok(c, "CONFIG SET maxclients 10000");
    free(rt_test_wait_health(port, 200, WAIT_MS));
    redisFree(c);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
    rt_ch_free(h);
    kill_redis(&redis);
}

static void test_sighup_reloads_the_file_and_the_worker_keeps_consuming(void **state)
{
    (void)state;
    rt_ch *h = rt_ch_new();
    char path[256];
    snprintf(path, sizeof path, "%s/retrig.conf", h->dir);
    rt_test_write_file(path, "tiers = 1, 2\nretriggers_per_failure = 5\n");
    rt_ch_setenv(h, "CONFIG", path);
    int port = start_worker_with_metrics(h);
    free(rt_test_wait_health(port, 200, WAIT_MS));

    rt_test_write_file(path, "tiers = 1\nretriggers_per_failure = 3\ntask_cache_size = 10\n");
    assert_int_equal(kill(rt_ch_worker_pid(h, 0), SIGHUP), 0);
    assert_true(
        rt_test_wait_sample(port, "retrig_config_reloads_total{result=\"ok\"}", 1, WAIT_MS) == 1);
    char log[256];
    snprintf(log, sizeof log, "%s/worker-%d.log", h->dir, (int)rt_ch_worker_pid(h, 0));
    char *text = rt_test_read_file(log, NULL);
    assert_non_null(strstr(text, "\"msg\":\"reloaded\",\"key\":\"tiers\",\"value\":\"1\""));
    assert_non_null(
        strstr(text, "\"msg\":\"reloaded\",\"key\":\"retriggers_per_failure\",\"value\":\"3\""));
    assert_non_null(
        strstr(text, "needs a restart; keeping the running value\",\"key\":\"task_cache_size\""));
    free(text);

    /* The reload reaches every lane (classify_concurrency, 4 by default): failures spread
     * over them by the broker all see the new tiers. */
    rt_test_write_file(path, "tiers = 3\n");
    assert_int_equal(kill(rt_ch_worker_pid(h, 0), SIGHUP), 0);
    assert_true(
        rt_test_wait_sample(port, "retrig_config_reloads_total{result=\"ok\"}", 2, WAIT_MS) == 2);
    enum { NFAILED = 12 };
    char task_ids[NFAILED][23], groups[NFAILED][23];
    rt_ch_eligible_scenario(h, NFAILED, "reload", task_ids, groups);
    for (int i = 0; i < NFAILED; i++) {
        char *body = rt_ch_failed_message(GWX_PULSE, task_ids[i], groups[i]);
        rt_ch_publish(h, "task-failed", body, strlen(body), GWX_ROUTE, NULL);
        free(body);
    }
    for (int i = 0; i < NFAILED; i++)
        assert_string_equal(rt_ch_wait_verdict(h, task_ids[i], 0, WAIT_MS), "skip/tier");

    /* A file that no longer loads keeps the running configuration. */
    rt_test_write_file(path, "tiers = 7\n");
    assert_int_equal(kill(rt_ch_worker_pid(h, 0), SIGHUP), 0);
    assert_true(rt_test_wait_sample(port, "retrig_config_reloads_total{result=\"failed\"}", 1,
                                    WAIT_MS) == 1);

    /* Still the same process, still consuming. */
    publish_completed(h);
    assert_string_equal(rt_ch_wait_verdict(h, B3E, 0, WAIT_MS), "skip/not-failed");
    free(rt_test_wait_health(port, 200, WAIT_MS));
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
    rt_ch_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_metrics_count_handled_and_dead_lettered_messages),
        cmocka_unit_test(test_healthz_is_unready_while_redis_is_lost_and_ready_again_after),
        cmocka_unit_test(
            test_healthz_names_a_lane_that_lost_its_redis_while_the_others_hold_theirs),
        cmocka_unit_test(test_sighup_reloads_the_file_and_the_worker_keeps_consuming),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
