/* SPDX-License-Identifier: MPL-2.0 */
/* test_amqp.c - common/amqp against the local RabbitMQ: confirms and manual acks, dead
 * letters with a reason, delay queues, reconnection, and TLS certificate refusal.
 * Every test declares its own uniquely named topology and deletes it at the end. */
#include "support/util.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include "common/config.h"
#include "common/io/amqp.h"
#include "common/options.h"

/* A topology of one work queue (with one delay) and its own dead-letter queue. */
typedef struct fixture {
    char worker[64];
    char exchange[96], dlx[96], dlq[96], queue[96], key[96];
    int delays[1];
    rt_amqp_work_queue work;
    rt_amqp_topology topology;
    rt_amqp *h;
} fixture;

/* Set by setup_quorum: the next fixture's handle declares quorum work queues. */
static bool quorum_next;

static rt_amqp *connect_as(const char *worker, const char *url, const char *ca_file,
                           int connect_timeout_ms)
{
    rt_config cfg;
    char err[RT_ERRSTR_SIZE];
    if (rt_config_load(&cfg, NULL, err) != RT_OK) fail_msg("config: %s", err);
    rt_amqp_options opts;
    rt_amqp_options_from_config(&opts, &cfg, worker);
    if (url) opts.url = url;
    if (ca_file) opts.ca_file = ca_file;
    opts.connect_timeout_ms = connect_timeout_ms;
    opts.quorum_work_queues = quorum_next;
    opts.confirm_timeout_ms = 5000;
    opts.reconnect_timeout_ms = 10000;
    opts.backoff_base_ms = 50;
    rt_amqp *h = NULL;
    int rc = rt_amqp_new(&h, &opts, err);
    rt_config_free(&cfg);
    if (rc != RT_OK) fail_msg("rt_amqp_new: %s", err);
    return h;
}

static void connect_fixture(fixture *f)
{
    f->h = connect_as(f->worker, NULL, NULL, 5000);
    int rc = rt_amqp_ensure_connected(f->h, 10000);
    if (rc != RT_OK) fail_msg("connect: %s", rt_amqp_errstr(f->h));
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    rt_test_unique_name(f->worker, sizeof f->worker, "test-amqp");
    rt_test_unique_name(f->exchange, sizeof f->exchange, "test.retrig");
    rt_test_unique_name(f->dlx, sizeof f->dlx, "test.retrig.dlx");
    rt_test_unique_name(f->dlq, sizeof f->dlq, "test.retrig.dead-letter");
    rt_test_unique_name(f->queue, sizeof f->queue, "test.retrig.work");
    rt_test_unique_name(f->key, sizeof f->key, "work");
    f->delays[0] = 1000;
    f->work = (rt_amqp_work_queue){
        .name = f->queue, .routing_key = f->key, .delays_ms = f->delays, .delay_count = 1};
    f->topology = (rt_amqp_topology){.exchange = f->exchange,
                                     .dead_letter_exchange = f->dlx,
                                     .dead_letter_queue = f->dlq,
                                     .queues = &f->work,
                                     .queue_count = 1,
                                     .expires_ms = 120000};
    connect_fixture(f);
    int rc = rt_amqp_declare_topology(f->h, &f->topology);
    if (rc != RT_OK) fail_msg("declare topology: %s", rt_amqp_errstr(f->h));
    *state = f;
    return 0;
}

static int setup_quorum(void **state)
{
    quorum_next = true;
    int rc = setup(state);
    quorum_next = false;
    return rc;
}

static int teardown(void **state)
{
    fixture *f = *state;
    if (!f->h) connect_fixture(f);
    int rc = rt_amqp_delete_topology(f->h, &f->topology);
    if (rc != RT_OK) fprintf(stderr, "delete topology: %s\n", rt_amqp_errstr(f->h));
    rt_amqp_free(f->h);
    free(f);
    return 0;
}

static void publish_text(fixture *f, const char *text, const rt_amqp_publish_opts *opts)
{
    int rc = rt_amqp_publish(f->h, f->exchange, f->key, text, strlen(text), opts);
    if (rc != RT_OK) fail_msg("publish: %s (%s)", rt_amqp_errstr(f->h), rt_strerror(rc));
}

static void next_or_fail(rt_amqp *h, rt_amqp_message *msg, int timeout_ms)
{
    int rc = rt_amqp_next(h, msg, timeout_ms);
    if (rc != RT_OK) fail_msg("next: %s (%s)", rt_amqp_errstr(h), rt_strerror(rc));
}

static uint32_t depth(fixture *f, const char *queue)
{
    uint32_t count = 99;
    int rc = rt_amqp_queue_depth(f->h, queue, &count);
    if (rc != RT_OK) fail_msg("queue depth of %s: %s", queue, rt_amqp_errstr(f->h));
    return count;
}

static void test_publish_consume_round_trip_with_confirm_and_manual_ack(void **state)
{
    fixture *f = *state;
    rt_amqp_header headers[] = {{"x-test", "yes"}};
    rt_amqp_publish_opts opts = {
        .message_id = "message-1", .headers = headers, .header_count = 1, .attempt = 2};
    publish_text(f, "{\"n\":1}", &opts);
    assert_int_equal(depth(f, f->queue), 1); /* the confirm means the broker has it */

    assert_int_equal(rt_amqp_consume(f->h, f->queue), RT_OK);
    rt_amqp_message msg;
    next_or_fail(f->h, &msg, 5000);
    assert_string_equal(msg.body, "{\"n\":1}");
    assert_int_equal(msg.len, 7);
    assert_string_equal(msg.queue, f->queue);
    assert_string_equal(msg.exchange, f->exchange);
    assert_string_equal(msg.routing_key, f->key);
    assert_string_equal(msg.content_type, "application/json");
    assert_string_equal(msg.message_id, "message-1");
    assert_string_equal(rt_amqp_message_header(&msg, "x-test"), "yes");
    assert_int_equal(msg.attempt, 2);
    assert_false(msg.redelivered);

    /* Not acked (nack with requeue): it comes back, marked redelivered. */
    assert_int_equal(rt_amqp_nack(f->h, &msg, true), RT_OK);
    rt_amqp_message_free(&msg);
    next_or_fail(f->h, &msg, 5000);
    assert_string_equal(msg.body, "{\"n\":1}");
    assert_true(msg.redelivered);
    assert_int_equal(rt_amqp_ack(f->h, &msg), RT_OK);
    assert_int_equal(rt_amqp_ack(f->h, &msg), RT_EINVAL); /* never twice */
    rt_amqp_message_free(&msg);

    /* Acked: gone for good. */
    assert_int_equal(rt_amqp_next(f->h, &msg, 300), RT_ETIMEDOUT);
    assert_int_equal(rt_amqp_stop_consuming(f->h), RT_OK);
    assert_int_equal(depth(f, f->queue), 0);

    /* Received but the connection closed without an ack: redelivered to the next consumer. */
    publish_text(f, "{\"n\":2}", NULL);
    assert_int_equal(rt_amqp_consume(f->h, f->queue), RT_OK);
    next_or_fail(f->h, &msg, 5000);
    assert_string_equal(msg.body, "{\"n\":2}");
    assert_false(msg.redelivered);
    rt_amqp_message_free(&msg);
    rt_amqp_free(f->h);
    connect_fixture(f);
    assert_int_equal(rt_amqp_consume(f->h, f->queue), RT_OK);
    next_or_fail(f->h, &msg, 5000);
    assert_string_equal(msg.body, "{\"n\":2}");
    assert_true(msg.redelivered);
    assert_int_equal(rt_amqp_ack(f->h, &msg), RT_OK);
    rt_amqp_message_free(&msg);
}

/* rt_amqp_ack_many acks exactly the deliveries it is given: in one frame when they are all
 * that is outstanding, and without touching a delivery that is not among them otherwise. */
static void test_ack_many_acks_exactly_the_given_deliveries(void **state)
{
    fixture *f = *state;
    char text[32];
    for (int i = 0; i < 6; i++) {
        snprintf(text, sizeof text, "{\"n\":%d}", i);
        publish_text(f, text, NULL);
    }
    assert_int_equal(rt_amqp_consume(f->h, f->queue), RT_OK);
    rt_amqp_message msgs[6];
    for (int i = 0; i < 6; i++) next_or_fail(f->h, &msgs[i], 5000);
    assert_int_equal(rt_amqp_ack(f->h, &msgs[1]), RT_OK);
    rt_amqp_message *set[] = {&msgs[0], &msgs[2], &msgs[3], &msgs[4], &msgs[5]};
    assert_int_equal(rt_amqp_ack_many(f->h, set, 5), RT_OK);
    assert_int_equal(rt_amqp_ack(f->h, &msgs[4]), RT_EINVAL); /* settled by the batch */
    for (int i = 0; i < 6; i++) rt_amqp_message_free(&msgs[i]);
    rt_amqp_message extra;
    assert_int_equal(rt_amqp_next(f->h, &extra, 300), RT_ETIMEDOUT);
    assert_int_equal(rt_amqp_stop_consuming(f->h), RT_OK);
    assert_int_equal(depth(f, f->queue), 0);

    /* One delivery outside the set stays unsettled: the others are acked, it is not, and
     * it comes back once the connection is gone. */
    for (int i = 0; i < 4; i++) {
        snprintf(text, sizeof text, "{\"m\":%d}", i);
        publish_text(f, text, NULL);
    }
    assert_int_equal(rt_amqp_consume(f->h, f->queue), RT_OK);
    for (int i = 0; i < 4; i++) next_or_fail(f->h, &msgs[i], 5000);
    rt_amqp_message *some[] = {&msgs[0], &msgs[1], &msgs[3]};
    assert_int_equal(rt_amqp_ack_many(f->h, some, 3), RT_OK);
    for (int i = 0; i < 4; i++) rt_amqp_message_free(&msgs[i]);
    rt_amqp_free(f->h);
    connect_fixture(f);
    assert_int_equal(rt_amqp_consume(f->h, f->queue), RT_OK);
    next_or_fail(f->h, &extra, 5000);
    assert_string_equal(extra.body, "{\"m\":2}");
    assert_true(extra.redelivered);
    assert_int_equal(rt_amqp_ack(f->h, &extra), RT_OK);
    rt_amqp_message_free(&extra);
    assert_int_equal(rt_amqp_next(f->h, &extra, 300), RT_ETIMEDOUT);
}

static void test_rejected_message_reaches_dead_letter_queue_with_reason(void **state)
{
    fixture *f = *state;
    rt_amqp_header headers[] = {{"x-test", "kept"}};
    rt_amqp_publish_opts opts = {.message_id = "bad-1", .headers = headers, .header_count = 1};
    const char *body = "{\"status\": malformed";
    publish_text(f, body, &opts);

    assert_int_equal(rt_amqp_consume(f->h, f->queue), RT_OK);
    rt_amqp_message msg;
    next_or_fail(f->h, &msg, 5000);
    int rc = rt_amqp_dead_letter(f->h, &msg, "invalid JSON at line 1");
    if (rc != RT_OK) fail_msg("dead letter: %s", rt_amqp_errstr(f->h));
    rt_amqp_message_free(&msg);
    assert_int_equal(rt_amqp_stop_consuming(f->h), RT_OK);
    assert_int_equal(depth(f, f->queue), 0);

    assert_int_equal(rt_amqp_consume(f->h, f->dlq), RT_OK);
    next_or_fail(f->h, &msg, 5000);
    assert_string_equal(msg.body, body);
    assert_int_equal(msg.len, strlen(body));
    assert_string_equal(msg.message_id, "bad-1");
    assert_string_equal(msg.exchange, f->dlx);
    assert_string_equal(rt_amqp_message_header(&msg, "x-retrig-reason"), "invalid JSON at line 1");
    assert_string_equal(rt_amqp_message_header(&msg, "x-retrig-source-queue"), f->queue);
    assert_string_equal(rt_amqp_message_header(&msg, "x-retrig-original-routing-key"), f->key);
    assert_non_null(rt_amqp_message_header(&msg, "x-retrig-failed-at"));
    assert_string_equal(rt_amqp_message_header(&msg, "x-test"), "kept");
    assert_int_equal(rt_amqp_ack(f->h, &msg), RT_OK);
    rt_amqp_message_free(&msg);
    assert_int_equal(rt_amqp_next(f->h, &msg, 200), RT_ETIMEDOUT);
}

static void test_dead_letter_reason_is_bounded_and_sanitised(void **state)
{
    fixture *f = *state;
    publish_text(f, "{}", NULL);
    assert_int_equal(rt_amqp_consume(f->h, f->queue), RT_OK);
    rt_amqp_message msg;
    next_or_fail(f->h, &msg, 5000);
    char reason[1024];
    memset(reason, 'x', sizeof reason - 1);
    reason[sizeof reason - 1] = '\0';
    memcpy(reason, "bad\nline\tfrom amqp://u:hunter2secret@host/", 42);
    assert_int_equal(rt_amqp_dead_letter(f->h, &msg, reason), RT_OK);
    rt_amqp_message_free(&msg);
    assert_int_equal(rt_amqp_stop_consuming(f->h), RT_OK);

    assert_int_equal(rt_amqp_consume(f->h, f->dlq), RT_OK);
    next_or_fail(f->h, &msg, 5000);
    const char *got = rt_amqp_message_header(&msg, "x-retrig-reason");
    assert_non_null(got);
    assert_true(strlen(got) <= RT_AMQP_REASON_MAX);
    assert_true(strlen(got) > 100);
    assert_null(strpbrk(got, "\n\t"));
    assert_null(strstr(got, "hunter2secret"));
    assert_int_equal(strncmp(got, "bad line from amqp://", 21), 0);
    assert_int_equal(rt_amqp_ack(f->h, &msg), RT_OK);
    rt_amqp_message_free(&msg);
}

static void test_delayed_message_returns_after_its_delay(void **state)
{
    fixture *f = *state;
    assert_int_equal(rt_amqp_consume(f->h, f->queue), RT_OK);
    rt_amqp_publish_opts opts = {.attempt = 1};
    int64_t start = rt_test_now_ms();
    int rc = rt_amqp_publish_delayed(f->h, f->queue, 1000, "{\"later\":true}", 14, &opts);
    if (rc != RT_OK) fail_msg("publish delayed: %s", rt_amqp_errstr(f->h));

    rt_amqp_message msg;
    assert_int_equal(rt_amqp_next(f->h, &msg, 200), RT_ETIMEDOUT);
    next_or_fail(f->h, &msg, 8000);
    int64_t elapsed = rt_test_now_ms() - start;
    assert_true(elapsed >= 950);
    assert_string_equal(msg.body, "{\"later\":true}");
    assert_string_equal(msg.routing_key, f->key);
    assert_int_equal(msg.attempt, 1);
    assert_int_equal(msg.death_count, 1);
    assert_int_equal(rt_amqp_ack(f->h, &msg), RT_OK);
    rt_amqp_message_free(&msg);
}

static void test_delayed_publish_without_its_delay_queue_is_refused(void **state)
{
    fixture *f = *state;
    assert_int_equal(rt_amqp_publish_delayed(f->h, f->queue, 777, "{}", 2, NULL), RT_ENOTFOUND);
    assert_non_null(strstr(rt_amqp_errstr(f->h), ".delay.777"));
    /* An unroutable work message is refused too, and the handle keeps working. */
    assert_int_equal(rt_amqp_publish(f->h, f->exchange, "no-such-key", "{}", 2, NULL),
                     RT_ENOTFOUND);
    assert_int_equal(rt_amqp_publish(f->h, "test.no-such-exchange", "k", "{}", 2, NULL),
                     RT_ENOTFOUND);
    publish_text(f, "{}", NULL);
    assert_int_equal(depth(f, f->queue), 1);
    uint32_t count;
    assert_int_equal(rt_amqp_queue_depth(f->h, "test.no-such-queue", &count), RT_ENOTFOUND);
}

static void
test_deliveries_during_publishes_are_kept_in_order_and_survive_publish_errors(void **state)
{
    fixture *f = *state;
    assert_int_equal(rt_amqp_consume(f->h, f->queue), RT_OK);
    /* Each publish waits for its confirm while earlier messages are being delivered on the
     * same connection: those deliveries must be kept, in order. */
    enum { COUNT = 25 };
    for (int i = 0; i < COUNT; i++) {
        char body[32];
        snprintf(body, sizeof body, "{\"i\":%d}", i);
        publish_text(f, body, NULL);
        if (i == COUNT / 2) /* a refused publish closes only the publish channel */
            assert_int_equal(rt_amqp_publish(f->h, "test.no-such-exchange", "k", "{}", 2, NULL),
                             RT_ENOTFOUND);
    }
    for (int i = 0; i < COUNT; i++) {
        rt_amqp_message msg;
        next_or_fail(f->h, &msg, 5000);
        char want[32];
        snprintf(want, sizeof want, "{\"i\":%d}", i);
        assert_string_equal(msg.body, want);
        assert_false(msg.redelivered);
        assert_int_equal(rt_amqp_ack(f->h, &msg), RT_OK);
        rt_amqp_message_free(&msg);
    }
    assert_int_equal(rt_amqp_connection_count(f->h), 1);
}

static void test_reconnects_after_connection_is_lost(void **state)
{
    fixture *f = *state;
    assert_int_equal(rt_amqp_consume(f->h, f->queue), RT_OK);
    publish_text(f, "{\"before\":1}", NULL);
    rt_amqp_message msg;
    next_or_fail(f->h, &msg, 5000);
    assert_false(msg.redelivered);

    /* Cut the connection under the handle, as a network failure would. */
    int fd = rt_amqp_socket_fd(f->h);
    assert_true(fd >= 0);
    assert_int_equal(rt_amqp_connection_count(f->h), 1);
    assert_int_equal(shutdown(fd, SHUT_RDWR), 0);

    /* The message in hand can no longer be acked: the broker will redeliver it. */
    assert_int_equal(rt_amqp_ack(f->h, &msg), RT_ECONN);
    rt_amqp_message_free(&msg);

    /* The next publish reconnects, re-declares the topology and restarts the consumer. */
    publish_text(f, "{\"after\":1}", NULL);
    assert_true(rt_amqp_is_connected(f->h));
    assert_int_equal(rt_amqp_connection_count(f->h), 2);
    int seen_before = 0, seen_after = 0;
    while (seen_before + seen_after < 2) {
        next_or_fail(f->h, &msg, 5000);
        if (!strcmp(msg.body, "{\"before\":1}")) {
            assert_true(msg.redelivered);
            seen_before++;
        } else {
            assert_string_equal(msg.body, "{\"after\":1}");
            seen_after++;
        }
        assert_int_equal(rt_amqp_ack(f->h, &msg), RT_OK);
        rt_amqp_message_free(&msg);
    }
    assert_int_equal(seen_before, 1);
    assert_int_equal(seen_after, 1);
}

static char *rabbitmqctl(const char *args);

static void test_quorum_work_queue_keeps_confirms_acks_dead_letters_and_delays(void **state)
{
    fixture *f = *state;
    /* The broker says the work queue and its delay queue are quorum queues (a node of a
     * cluster can go without taking either with it). */
    char *queues = rabbitmqctl("list_queues -q name type");
    if (!queues) {
        skip(); /* rabbitmqctl unusable here; the behaviour below is still what matters */
    }
    char line[256];
    snprintf(line, sizeof line, "%s\tquorum", f->queue);
    assert_non_null(strstr(queues, line));
    snprintf(line, sizeof line, "%s.delay.1000\tquorum", f->queue);
    assert_non_null(strstr(queues, line));
    free(queues);

    /* Confirmed publish, redelivery after a nack, ack. */
    publish_text(f, "{\"q\":1}", NULL);
    assert_int_equal(rt_amqp_consume(f->h, f->queue), RT_OK);
    rt_amqp_message msg;
    next_or_fail(f->h, &msg, 5000);
    assert_false(msg.redelivered);
    assert_int_equal(rt_amqp_nack(f->h, &msg, true), RT_OK);
    rt_amqp_message_free(&msg);
    next_or_fail(f->h, &msg, 5000);
    assert_true(msg.redelivered);
    assert_int_equal(rt_amqp_ack(f->h, &msg), RT_OK);
    rt_amqp_message_free(&msg);

    /* A dead letter with its reason. */
    publish_text(f, "{\"q\":2}", NULL);
    next_or_fail(f->h, &msg, 5000);
    assert_int_equal(rt_amqp_dead_letter(f->h, &msg, "quorum reason"), RT_OK);
    rt_amqp_message_free(&msg);

    /* The delay queue dead-letters back into the quorum queue. */
    int64_t start = rt_test_now_ms();
    assert_int_equal(rt_amqp_publish_delayed(f->h, f->queue, 1000, "{\"q\":3}", 7, NULL), RT_OK);
    next_or_fail(f->h, &msg, 8000);
    assert_true(rt_test_now_ms() - start >= 950);
    assert_string_equal(msg.body, "{\"q\":3}");
    assert_int_equal(rt_amqp_ack(f->h, &msg), RT_OK);
    rt_amqp_message_free(&msg);
    assert_int_equal(rt_amqp_stop_consuming(f->h), RT_OK);

    assert_int_equal(rt_amqp_consume(f->h, f->dlq), RT_OK);
    next_or_fail(f->h, &msg, 5000);
    assert_string_equal(msg.body, "{\"q\":2}");
    assert_string_equal(rt_amqp_message_header(&msg, "x-retrig-reason"), "quorum reason");
    assert_int_equal(rt_amqp_ack(f->h, &msg), RT_OK);
    rt_amqp_message_free(&msg);
}

/* Runs deploy/local/services.sh rabbitmqctl ARGS; returns its output (malloc'd) or NULL. */
static char *rabbitmqctl(const char *args)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "bash %s rabbitmqctl %s 2>/dev/null",
             rt_test_source("deploy/local/services.sh"), args);
    FILE *p = popen(cmd, "r");
    if (!p) return NULL;
    size_t cap = 65536, len = 0;
    char *out = malloc(cap);
    assert_non_null(out);
    size_t n;
    while ((n = fread(out + len, 1, cap - len - 1, p)) > 0) len += n;
    out[len] = '\0';
    if (pclose(p) != 0) {
        free(out);
        return NULL;
    }
    return out;
}

static void test_reconnects_after_broker_closes_the_connection(void **state)
{
    fixture *f = *state;
    assert_int_equal(rt_amqp_consume(f->h, f->queue), RT_OK);
    /* Find our connection (its pid) by its unique name ("retrig-<worker>") and have the broker
     * close it: a real connection.close from the server, not a local socket error. */
    char *list = rabbitmqctl("-q --no-table-headers list_connections pid client_properties");
    if (!list) skip();
    char *line = strstr(list, f->worker);
    assert_non_null(line);
    while (line > list && line[-1] != '\n') line--;
    size_t pid_len = strcspn(line, "\t");
    char args[512];
    snprintf(args, sizeof args, "close_connection '%.*s' 'test closes it'", (int)pid_len, line);
    free(list);
    char *out = rabbitmqctl(args);
    assert_non_null(out);
    free(out);

    rt_amqp_message msg;
    /* The consumer notices the close, reconnects and keeps consuming. */
    assert_int_equal(rt_amqp_connection_count(f->h), 1);
    int64_t deadline = rt_test_now_ms() + 5000;
    while (rt_amqp_connection_count(f->h) < 2 && rt_test_now_ms() < deadline)
        assert_int_equal(rt_amqp_next(f->h, &msg, 200), RT_ETIMEDOUT);
    assert_int_equal(rt_amqp_connection_count(f->h), 2);
    publish_text(f, "{\"after\":\"forced close\"}", NULL);
    next_or_fail(f->h, &msg, 5000);
    assert_string_equal(msg.body, "{\"after\":\"forced close\"}");
    assert_int_equal(rt_amqp_ack(f->h, &msg), RT_OK);
    rt_amqp_message_free(&msg);
    assert_true(rt_amqp_is_connected(f->h));
}

/* ---- TLS ---- */

static int free_port(void)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(s >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t len = sizeof a;
    assert_int_equal(getsockname(s, (struct sockaddr *)&a, &len), 0);
    close(s);
    return ntohs(a.sin_port);
}

static bool port_open(int port)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    bool ok = connect(s, (struct sockaddr *)&a, sizeof a) == 0;
    close(s);
    return ok;
}

typedef struct tls_server {
    char *dir;
    char cert[512];
    int port;
    pid_t pid;
    int stdin_fd; /* kept open: s_server stops when its stdin ends */
} tls_server;

/* A TLS listener with a fresh self-signed certificate for DNS:localhost. */
static void tls_server_start(tls_server *s)
{
    s->dir = rt_test_tempdir();
    snprintf(s->cert, sizeof s->cert, "%s/cert.pem", s->dir);
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
             "-keyout %s/key.pem -out %s -days 1 -subj /CN=localhost "
             "-addext subjectAltName=DNS:localhost >/dev/null 2>&1",
             s->dir, s->cert);
    if (system(cmd) != 0) skip(); /* no openssl CLI */
    s->port = free_port();
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    s->pid = fork();
    assert_true(s->pid >= 0);
    if (s->pid == 0) {
        char accept[32], key[600];
        snprintf(accept, sizeof accept, "127.0.0.1:%d", s->port);
        snprintf(key, sizeof key, "%s/key.pem", s->dir);
        dup2(fds[0], 0);
        close(fds[1]);
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) {
            dup2(devnull, 1);
            dup2(devnull, 2);
        }
        execlp("openssl", "openssl", "s_server", "-accept", accept, "-cert", s->cert, "-key", key,
               "-quiet", (char *)NULL);
        _exit(127);
    }
    close(fds[0]);
    s->stdin_fd = fds[1];
    int64_t deadline = rt_test_now_ms() + 5000;
    while (!port_open(s->port)) {
        if (rt_test_now_ms() > deadline) fail_msg("openssl s_server did not start");
        usleep(20000);
    }
}

static void tls_server_stop(tls_server *s)
{
    kill(s->pid, SIGTERM);
    waitpid(s->pid, NULL, 0);
    close(s->stdin_fd);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", s->dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", s->dir);
    free(s->dir);
}

static int try_amqps(const char *host, int port, const char *ca_file, char *errstr)
{
    char url[256];
    snprintf(url, sizeof url, "amqps://guest:tls-password@%s:%d/", host, port);
    rt_amqp *h = connect_as("test-tls", url, ca_file, 1500);
    int rc = rt_amqp_ensure_connected(h, 0);
    snprintf(errstr, RT_ERRSTR_SIZE, "%s", rt_amqp_errstr(h));
    rt_amqp_free(h);
    return rc;
}

static void test_amqps_refuses_unknown_certificate(void **state)
{
    (void)state;
    tls_server s;
    tls_server_start(&s);
    char err[RT_ERRSTR_SIZE];

    /* Self-signed and no CA configured (system bundle): refused, and said so. */
    assert_int_equal(try_amqps("localhost", s.port, NULL, err), RT_EAUTH);
    assert_non_null(strstr(err, "certificate"));
    assert_non_null(strstr(err, "amqp_ca_file"));
    assert_null(strstr(err, "tls-password"));

    /* Trusted CA but another host name: refused by hostname verification. */
    assert_int_equal(try_amqps("127.0.0.1", s.port, s.cert, err), RT_EAUTH);
    assert_non_null(strstr(err, "certificate"));

    /* With the certificate as CA, TLS succeeds; the listener is no broker, so the AMQP
     * handshake then fails as a connection error, not a certificate error. */
    int rc = try_amqps("localhost", s.port, s.cert, err);
    assert_int_equal(rc, RT_ECONN);
    assert_null(strstr(err, "certificate"));

    tls_server_stop(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_quorum_work_queue_keeps_confirms_acks_dead_letters_and_delays, setup_quorum,
            teardown),
        cmocka_unit_test_setup_teardown(test_publish_consume_round_trip_with_confirm_and_manual_ack,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_ack_many_acks_exactly_the_given_deliveries, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_rejected_message_reaches_dead_letter_queue_with_reason,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_dead_letter_reason_is_bounded_and_sanitised, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_delayed_message_returns_after_its_delay, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_delayed_publish_without_its_delay_queue_is_refused,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_deliveries_during_publishes_are_kept_in_order_and_survive_publish_errors, setup,
            teardown),
        cmocka_unit_test_setup_teardown(test_reconnects_after_connection_is_lost, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reconnects_after_broker_closes_the_connection, setup,
                                        teardown),
        cmocka_unit_test(test_amqps_refuses_unknown_certificate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
