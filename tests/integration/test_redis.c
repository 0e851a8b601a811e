/* SPDX-License-Identifier: MPL-2.0 */
/* test_redis.c - common/redis against real servers: private redis-server processes that the
 * tests kill and restart, and the shared local Redis (127.0.0.1:6380) for plain commands. */
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

#include "common/config.h"
#include "common/io/redis.h"

/* A counter: proves the script really ran on the server (and which server state it saw). */
static const char INCR_SCRIPT[] = "return redis.call('INCRBY', KEYS[1], ARGV[1])";

typedef struct private_redis {
    pid_t pid;
    int port;
    char url[128];
} private_redis;

static int free_port(void)
{
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = 0};
    socklen_t len = sizeof addr;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&addr, sizeof addr), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&addr, &len), 0);
    close(fd);
    return ntohs(addr.sin_port);
}

/* Waits until the server on port answers PING (bounded), failing the test otherwise. */
static void wait_until_serving(int port)
{
    int64_t deadline = rt_test_now_ms() + 10000;
    struct timeval tv = {.tv_sec = 1, .tv_usec = 0};
    for (;;) {
        redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
        if (c && !c->err) {
            redisReply *r = redisCommand(c, "PING");
            bool ok = r && ((r->type == REDIS_REPLY_STATUS && !strcmp(r->str, "PONG")) ||
                            (r->type == REDIS_REPLY_ERROR && !strncmp(r->str, "NOAUTH", 6)));
            if (r) freeReplyObject(r);
            redisFree(c);
            if (ok) return;
        } else if (c) {
            redisFree(c);
        }
        if (rt_test_now_ms() > deadline) fail_msg("redis-server on port %d did not start", port);
        struct timespec pause = {0, 10 * 1000000L};
        nanosleep(&pause, NULL);
    }
}

/* Starts redis-server on r->port (a free one when 0), with extra "--name value" pairs. */
static void start_redis(private_redis *r, const char *extra_name, const char *extra_value)
{
    char port[16];
    if (r->port == 0) r->port = free_port();
    snprintf(port, sizeof port, "%d", r->port);
    snprintf(r->url, sizeof r->url, "redis://127.0.0.1:%d/2", r->port);
    r->pid = fork();
    assert_true(r->pid >= 0);
    if (r->pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* a failed test must not leave servers behind */
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) {
            dup2(devnull, STDOUT_FILENO);
            dup2(devnull, STDERR_FILENO);
        }
        const char *argv[] = {"redis-server", "--port",      port,        "--bind",
                              "127.0.0.1",    "--save",      "",          "--appendonly",
                              "no",           "--daemonize", "no",        "--dir",
                              "/tmp",         extra_name,    extra_value, NULL};
        execvp("redis-server", (char *const *)argv);
        _exit(127);
    }
    wait_until_serving(r->port);
}

static void kill_redis(private_redis *r)
{
    if (r->pid <= 0) return;
    kill(r->pid, SIGKILL);
    waitpid(r->pid, NULL, 0);
    r->pid = 0;
}

static bool script_exists(rt_redis *h, const rt_redis_script *script)
{
    const char *argv[] = {"SCRIPT", "EXISTS", script->sha1};
    redisReply *reply = NULL;
    assert_int_equal(rt_redis_command_argv(h, 3, argv, NULL, &reply), RT_OK);
    assert_int_equal(reply->type, REDIS_REPLY_ARRAY);
    assert_int_equal(reply->elements, 1);
    bool exists = reply->element[0]->integer == 1;
    freeReplyObject(reply);
    return exists;
}

static long long run_incr(rt_redis *h, const rt_redis_script *script, const char *key,
                          const char *by)
{
    const char *keys[] = {key};
    const char *args[] = {by};
    redisReply *reply = NULL;
    int rc = rt_redis_eval(h, script, 1, keys, 1, args, &reply);
    if (rc != RT_OK) fail_msg("rt_redis_eval: %s: %s", rt_strerror(rc), rt_redis_errstr(h));
    assert_int_equal(reply->type, REDIS_REPLY_INTEGER);
    long long value = reply->integer;
    freeReplyObject(reply);
    return value;
}

static void test_script_sha_is_computed_locally(void **state)
{
    (void)state;
    rt_redis_script script;
    rt_redis_script_init(&script, "return 1");
    /* sha1("return 1"), as redis-cli SCRIPT LOAD "return 1" reports it. */
    assert_string_equal(script.sha1, "e0e1f9fabfc9d4800c877a703b823ac0578ff8db");
}

static void test_lua_script_runs_by_sha_after_redis_restart(void **state)
{
    (void)state;
    private_redis server = {0};
    rt_redis *h = NULL;
    rt_redis_script script;
    char errstr[RT_ERRSTR_SIZE] = "";

    rt_redis_script_init(&script, INCR_SCRIPT);
    start_redis(&server, "--loglevel", "warning");
    assert_int_equal(rt_redis_connect(&h, server.url, NULL, errstr), RT_OK);
    assert_false(script_exists(h, &script));

    assert_int_equal(run_incr(h, &script, "counter", "5"), 5);
    assert_true(script_exists(h, &script));
    assert_int_equal(run_incr(h, &script, "counter", "5"), 10);

    /* Same port, fresh process: the connection is dead and the script cache is empty. */
    kill_redis(&server);
    start_redis(&server, "--loglevel", "warning");

    assert_int_equal(run_incr(h, &script, "counter", "5"), 5); /* new server, new counter */
    assert_true(rt_redis_is_connected(h));
    assert_true(script_exists(h, &script));

    rt_redis_free(h);
    kill_redis(&server);
}

static void test_script_flush_reloads_script(void **state)
{
    (void)state;
    private_redis server = {0};
    rt_redis *h = NULL;
    rt_redis_script script;
    char errstr[RT_ERRSTR_SIZE] = "";
    const char *flush[] = {"SCRIPT", "FLUSH"};

    rt_redis_script_init(&script, INCR_SCRIPT);
    start_redis(&server, "--loglevel", "warning");
    assert_int_equal(rt_redis_connect(&h, server.url, NULL, errstr), RT_OK);
    assert_int_equal(run_incr(h, &script, "flushed", "3"), 3);

    assert_int_equal(rt_redis_command_argv(h, 2, flush, NULL, NULL), RT_OK);
    assert_false(script_exists(h, &script));

    assert_int_equal(run_incr(h, &script, "flushed", "3"), 6);
    assert_true(script_exists(h, &script));

    rt_redis_free(h);
    kill_redis(&server);
}

static void test_script_error_is_reported_with_redis_message(void **state)
{
    (void)state;
    private_redis server = {0};
    rt_redis *h = NULL;
    rt_redis_script script;
    char errstr[RT_ERRSTR_SIZE] = "";
    redisReply *reply = (redisReply *)&reply; /* must be reset to NULL */

    rt_redis_script_init(&script, "return redis.error_reply('BUDGET exhausted')");
    start_redis(&server, "--loglevel", "warning");
    assert_int_equal(rt_redis_connect(&h, server.url, NULL, errstr), RT_OK);
    assert_int_equal(rt_redis_eval(h, &script, 0, NULL, 0, NULL, &reply), RT_EUPSTREAM);
    assert_null(reply);
    assert_non_null(strstr(rt_redis_errstr(h), "BUDGET exhausted"));
    rt_redis_free(h);
    kill_redis(&server);
}

static void test_command_fails_while_server_down_and_recovers_after(void **state)
{
    (void)state;
    private_redis server = {0};
    rt_redis *h = NULL;
    char errstr[RT_ERRSTR_SIZE] = "";
    const char *ping[] = {"PING"};
    rt_redis_options options = {.reconnect_attempts = 2, .reconnect_backoff_ms = 5};

    start_redis(&server, "--loglevel", "warning");
    assert_int_equal(rt_redis_connect(&h, server.url, &options, errstr), RT_OK);
    kill_redis(&server);

    assert_int_equal(rt_redis_command_argv(h, 1, ping, NULL, NULL), RT_ECONN);
    assert_false(rt_redis_is_connected(h));
    assert_non_null(strstr(rt_redis_errstr(h), "127.0.0.1"));

    start_redis(&server, "--loglevel", "warning");
    assert_int_equal(rt_redis_command_argv(h, 1, ping, NULL, NULL), RT_OK);
    assert_true(rt_redis_is_connected(h));

    rt_redis_free(h);
    kill_redis(&server);
}

static void test_password_in_url_authenticates_and_wrong_one_is_refused(void **state)
{
    (void)state;
    private_redis server = {0};
    rt_redis *h = NULL;
    char errstr[RT_ERRSTR_SIZE] = "";
    char url[160];
    const char *ping[] = {"PING"};

    start_redis(&server, "--requirepass", "s3cret/pa@ss");
    snprintf(url, sizeof url, "redis://:s3cret%%2Fpa%%40ss@127.0.0.1:%d/1", server.port);
    assert_int_equal(rt_redis_connect(&h, url, NULL, errstr), RT_OK);
    assert_int_equal(rt_redis_command_argv(h, 1, ping, NULL, NULL), RT_OK);
    rt_redis_free(h);
    h = NULL;

    snprintf(url, sizeof url, "redis://:WrongPassword77@127.0.0.1:%d/0", server.port);
    assert_int_equal(rt_redis_connect(&h, url, NULL, errstr), RT_EAUTH);
    assert_null(h);
    assert_null(strstr(errstr, "WrongPassword77"));

    snprintf(url, sizeof url, "redis://127.0.0.1:%d/0", server.port); /* no password at all */
    assert_int_equal(rt_redis_connect(&h, url, NULL, errstr), RT_OK);
    assert_int_equal(rt_redis_command_argv(h, 1, ping, NULL, NULL), RT_EUPSTREAM);
    assert_non_null(strstr(rt_redis_errstr(h), "NOAUTH"));
    rt_redis_free(h);
    kill_redis(&server);
}

static void test_bad_redis_urls_are_rejected(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "http://127.0.0.1:6380/0",     "redis://",
        "redis://127.0.0.1:0/0",       "redis://127.0.0.1:70000/0",
        "redis://127.0.0.1:6380/db0",  "redis://user@127.0.0.1:6380",
        "redis://:%zz@127.0.0.1:6380",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rt_redis *h = (rt_redis *)&h;
        char errstr[RT_ERRSTR_SIZE] = "";
        if (rt_redis_connect(&h, bad[i], NULL, errstr) != RT_EINVAL)
            fail_msg("accepted %s", bad[i]);
        assert_null(h);
        assert_true(errstr[0] != '\0');
    }
}

static void test_plain_commands_round_trip_on_shared_redis(void **state)
{
    (void)state;
    rt_config cfg;
    rt_redis *h = NULL;
    char errstr[RT_ERRSTR_SIZE] = "";
    char key[96];
    redisReply *reply = NULL;

    assert_int_equal(rt_config_load(&cfg, NULL, errstr), RT_OK);
    assert_int_equal(rt_redis_connect(&h, cfg.redis_url, NULL, errstr), RT_OK);
    rt_test_unique_name(key, sizeof key, "rt_test_redis");

    const char *set_nx[] = {"SET", key, "first", "NX", "EX", "60"};
    assert_int_equal(rt_redis_command_argv(h, 6, set_nx, NULL, &reply), RT_OK);
    assert_int_equal(reply->type, REDIS_REPLY_STATUS);
    assert_string_equal(reply->str, "OK");
    freeReplyObject(reply);

    set_nx[2] = "second"; /* NX: the key exists, nothing is set */
    assert_int_equal(rt_redis_command_argv(h, 6, set_nx, NULL, &reply), RT_OK);
    assert_int_equal(reply->type, REDIS_REPLY_NIL);
    freeReplyObject(reply);

    const char *get[] = {"GET", key};
    assert_int_equal(rt_redis_command_argv(h, 2, get, NULL, &reply), RT_OK);
    assert_int_equal(reply->type, REDIS_REPLY_STRING);
    assert_string_equal(reply->str, "first");
    freeReplyObject(reply);

    const char *incr[] = {"INCR", key}; /* an error reply becomes RT_EUPSTREAM */
    assert_int_equal(rt_redis_command_argv(h, 2, incr, NULL, &reply), RT_EUPSTREAM);
    assert_null(reply);
    assert_non_null(strstr(rt_redis_errstr(h), "not an integer"));

    const char *del[] = {"DEL", key};
    assert_int_equal(rt_redis_command_argv(h, 2, del, NULL, NULL), RT_OK);
    rt_redis_free(h);
    rt_config_free(&cfg);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN); /* as the workers do */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_script_sha_is_computed_locally),
        cmocka_unit_test(test_lua_script_runs_by_sha_after_redis_restart),
        cmocka_unit_test(test_script_flush_reloads_script),
        cmocka_unit_test(test_script_error_is_reported_with_redis_message),
        cmocka_unit_test(test_command_fails_while_server_down_and_recovers_after),
        cmocka_unit_test(test_password_in_url_authenticates_and_wrong_one_is_refused),
        cmocka_unit_test(test_bad_redis_urls_are_rejected),
        cmocka_unit_test(test_plain_commands_round_trip_on_shared_redis),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
