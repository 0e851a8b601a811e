/* SPDX-License-Identifier: MPL-2.0 */
/* test_cluster.c - a RabbitMQ cluster that loses a node (issue 23): the stream of the chaos
 * test (test_chaos.c), 1,000 Pulse messages, through two replicas of every worker connected
 * to a three-node cluster (deploy/local/services.sh cluster: retrig-c1..3@localhost on
 * 127.0.0.1:5691-5693, started by the test and stopped after it) with amqp_quorum_queues,
 * while the node holding the leaders of the quorum work queues is stopped (gracefully, as a
 * node that goes away) and started again later; afterwards nothing is lost and nothing is
 * done twice, and every decision is written.
 *
 * The workers and the test get RETRIG_AMQP_URL naming the three nodes
 * (amqp://guest:guest@127.0.0.1:5691,127.0.0.1:5692,127.0.0.1:5693/, which Pulse defaults
 * to) and RETRIG_AMQP_QUORUM_QUEUES=true; each connection starts on a node of its own
 * choosing and, when its node goes away, moves to the next one, declaring its topology and
 * consumers again (common/io/amqp.c). The stream, the upstream data, the retriggers the
 * test plays and the checks are tests/support/stream.h's, as in the chaos test (100
 * eligible failures on 10 pushes, a budget of 60 on the limited platform, 25 malformed
 * messages, 50 failures that are not eligible); nothing is killed and no shared service is
 * restarted. After STOP_AFTER messages are published, the node that leads
 * most of the quorum queues (rabbitmqctl list_queues leader; a queue's leader is the node its
 * first declarer was connected to, and connections start on nodes of their own choosing) is
 * stopped, and the connections on it move on; it is started again once RESTART_AFTER
 * messages are out (it rejoins the cluster, and its queue replicas catch up). The classic
 * Pulse queues stand for Pulse's own broker, which is not ours to lose: they stay on the
 * node the test's own connection declared them on, and that node is never the one stopped
 * (of the two others, the one leading more quorum queues is).
 *
 * It prints one line to stdout, `cluster: N messages, node stopped after M, L lost, D
 * duplicated`:
 *   N  Pulse messages published (the 1,000 of the stream and the retriggered runs played);
 *   M  stream messages published when the node was stopped;
 *   L, D  lost and duplicated as stream.h counts them (eligible failures without a set or a
 *      verdict, sets without a trigger or a decision, runs and history runs missing, dead
 *      letters missing; second sets, triggers, decisions and history runs).
 * The test fails unless L and D are 0 and every set is decided. Bounded by RUN_MS. */
#include "support/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/classify_harness.h"
#include "support/stream.h"

#define LIMIT         60
#define RUN_MS        300000
#define CHUNK         8   /* stream messages published per round */
#define STOP_AFTER    300 /* stream messages out when the leaders' node is stopped */
#define RESTART_AFTER 800 /* and when it is started again */

static const rt_stream_sizes SIZES = {.tag = "cluster",
                                      .client_id = "project/retrig/cluster-test",
                                      .token = "fake-access-token-cluster-0123456",
                                      .messages = 1000,
                                      .eligible = 100,
                                      .malformed = 25,
                                      .other = 50,
                                      .groups = 10,
                                      .limit = LIMIT,
                                      .replicas = {2, 2, 2, 2}};

typedef struct fixture {
    rt_ch *h;
    rt_stream *s;
    size_t stopped_after;
    int stopped_node;
} fixture;

/* Runs deploy/local/services.sh with args; its output goes to stderr. */
static int services(const char *args)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "bash '%s/deploy/local/services.sh' %s >&2", RT_TEST_SOURCE_DIR,
             args);
    return system(cmd);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    /* A run killed before its teardown leaves the nodes' Mnesia behind, half written; the
     * test needs three fresh nodes, so whatever an earlier run left is forgotten first. */
    if (services("cluster stop") != 0) fail_msg("the RabbitMQ cluster left behind did not stop");
    if (services("cluster start") != 0) fail_msg("the RabbitMQ cluster did not start");
    setenv("RETRIG_AMQP_URL", "amqp://guest:guest@127.0.0.1:5691,127.0.0.1:5692,127.0.0.1:5693/",
           1);
    setenv("RETRIG_AMQP_QUORUM_QUEUES", "true", 1);
    f->h = rt_ch_new();
    f->s = rt_stream_new(f->h, &SIZES);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    rt_stream_free(f->s);
    rt_ch_free(f->h);
    free(f);
    if (services("cluster stop") != 0) fprintf(stderr, "cluster: the cluster did not stop\n");
    unsetenv("RETRIG_AMQP_URL");
    unsetenv("RETRIG_AMQP_QUORUM_QUEUES");
    return 0;
}

/* ---- the cluster ---- */

/* The node (1..3) "retrig-cN@..." names in text, or 0. */
static int node_in(const char *text)
{
    const char *at = text ? strstr(text, "retrig-c") : NULL;
    return at && at[8] >= '1' && at[8] <= '3' ? at[8] - '0' : 0;
}

/* The cluster node (1..3) that leads most of our quorum queues, among the nodes that do not
 * hold the classic Pulse queues. Those stand for Pulse's own broker, which is not ours to
 * lose: with their node stopped the test could not publish its stream (its connection
 * declares them again on reconnecting) and would wait for a restart that comes only after
 * more of the stream is out. The test's connection declared both before any worker ran, so
 * they share one node and two nodes remain to choose from. */
static int leaders_node(rt_ch *h)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "bash '%s/deploy/local/services.sh' cluster rabbitmqctl 1 -q list_queues name type"
             " pid leader 2>/dev/null",
             RT_TEST_SOURCE_DIR);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    int counts[4] = {0};
    bool pulse_home[4] = {false};
    char line[1024], prefix[300];
    snprintf(prefix, sizeof prefix, "%s.", h->ns);
    while (fgets(line, sizeof line, p)) {
        char *name = strtok(line, "\t\n"), *type = strtok(NULL, "\t\n");
        char *pid = strtok(NULL, "\t\n"), *leader = strtok(NULL, "\t\n");
        if (!name || !type) continue;
        if (!strcmp(type, "quorum") && !strncmp(name, prefix, strlen(prefix)))
            counts[node_in(leader)]++;
        else if (!strcmp(type, "classic") && !strncmp(name, h->pulse_queue, strlen(h->pulse_queue)))
            pulse_home[node_in(pid)] = true;
    }
    pclose(p);
    int best = 0;
    for (int n = 1; n <= 3; n++)
        if (!pulse_home[n] && (!best || counts[n] > counts[best])) best = n;
    fprintf(stderr,
            "cluster: quorum queue leaders: node 1 %d, node 2 %d, node 3 %d; Pulse queues on"
            " node%s%s%s\n",
            counts[1], counts[2], counts[3], pulse_home[1] ? " 1" : "", pulse_home[2] ? " 2" : "",
            pulse_home[3] ? " 3" : "");
    assert_true(best > 0);
    assert_true(counts[best] > 0);
    return best;
}

static void node_action(const char *action, int node)
{
    char args[64];
    snprintf(args, sizeof args, "cluster %s %d", action, node);
    int64_t started = rt_test_now_ms();
    if (services(args) != 0) fail_msg("%s of node %d failed", action, node);
    fprintf(stderr, "cluster: %s %d in %lld ms\n", action, node,
            (long long)(rt_test_now_ms() - started));
}

static void test_losing_the_node_of_the_queue_leaders_loses_and_duplicates_nothing(void **state)
{
    fixture *f = *state;
    rt_ch *h = f->h;
    int64_t started = rt_test_now_ms();
    int64_t deadline = started + RUN_MS;
    srandom((unsigned)(started ^ getpid()));
    rt_stream_start(f->s);

    /* The stream goes out in chunks and the retriggers are played; the leaders' node stops
     * after STOP_AFTER messages and comes back after RESTART_AFTER. */
    bool timed_out = false, restarted = false;
    for (;;) {
        rt_stream_round(f->s, CHUNK);
        size_t published = rt_stream_published(f->s);
        if (!f->stopped_node && published >= STOP_AFTER) {
            f->stopped_node = leaders_node(h);
            f->stopped_after = published;
            node_action("stop-node", f->stopped_node);
        }
        if (f->stopped_node && !restarted && published >= RESTART_AFTER) {
            node_action("start-node", f->stopped_node);
            restarted = true;
        }
        if (restarted && rt_stream_settled(f->s)) break;
        if (rt_test_now_ms() > deadline) {
            timed_out = true;
            fprintf(stderr, "cluster: not settled within %d ms\n", RUN_MS);
            break;
        }
        rt_stream_sleep_ms(100);
    }
    fprintf(stderr, "cluster: settled after %lld ms, %ld workers exited on their own\n",
            (long long)(rt_test_now_ms() - started), rt_stream_respawns(f->s));

    /* Drained with no worker running: everything in flight was handled. */
    if (timed_out)
        (void)rt_ch_stop_workers(h, 15000);
    else
        rt_stream_drain(f->s, deadline);

    rt_stream_tally t;
    rt_stream_check(f->s, &t);
    printf("cluster: %zu messages, node stopped after %zu, %ld lost, %ld duplicated\n",
           (size_t)SIZES.messages + rt_stream_played(f->s), f->stopped_after, t.lost, t.duplicated);
    fflush(stdout);

    long long ledger = rt_stream_ledger(f->s);
    fprintf(
        stderr,
        "cluster: budget of %s: limit %d, ledger %lld, highest counter sampled %d, %d"
        " failures budget-exhausted; %lld sets, %zu retriggered runs played, %lld decisions,"
        " %lld undecided\n",
        RT_STREAM_LIMITED, LIMIT, ledger, rt_stream_max_counter(f->s), t.exhausted,
        rt_ch_sql_int(h, "SELECT count(*) FROM retrigger_sets", 0, NULL), rt_stream_played(f->s),
        rt_ch_sql_int(h, "SELECT count(*) FROM decisions", 0, NULL),
        rt_ch_sql_int(h, "SELECT count(*) FROM decisions WHERE verdict = 'undecided'", 0, NULL));
    assert_true(rt_stream_max_counter(f->s) <= LIMIT);
    assert_true(ledger <= LIMIT);
    /* every set decided: the decisions all written */
    assert_int_equal(rt_ch_sql_int(h,
                                   "SELECT count(*) FROM retrigger_sets s WHERE NOT EXISTS"
                                   " (SELECT 1 FROM decisions d WHERE d.set_id = s.id)",
                                   0, NULL),
                     0);
    assert_true(f->stopped_node > 0);
    assert_true(restarted);
    assert_false(timed_out);
    assert_int_equal(t.lost, 0);
    assert_int_equal(t.duplicated, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_losing_the_node_of_the_queue_leaders_loses_and_duplicates_nothing, setup,
            teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
