/* SPDX-License-Identifier: MPL-2.0 */
/* bench_scaling.c - how retrig-classify scales out: throughput of 1 against 3 replicas on
 * the eligible path when every upstream call takes 50 ms (issue 8: ratio at least 2.5).
 *
 * On the local services with names of its own (support/classify_harness.h), the fake
 * upstream gets a latency fault of --latency-ms on /api/ (every Taskcluster and Treeherder
 * call). Each round starts its workers first, then publishes M failed test tasks (distinct
 * task ids, groups and labels, from the recorded GWxTc8p fixture and its errorsummary;
 * budget limit high) with confirms, so the broker spreads them over the replicas; each
 * message ends in a set, a ledger row and a published retrigger request. A worker handles
 * one message at a time, so one replica waits on the upstream most of the time and three
 * should go nearly three times as fast. Rates come from the workers' own timestamps
 * (runs.classified_at, first to last). A command, not a test: scripts/bench runs it. Exit
 * status 0 when it ran (the target is reported, not enforced), 1 when it could not. */
#include "support/util.h"

#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/classify_harness.h"

#define GWX_PULSE "pulse/treeherder_task-completed_GWxTc8p_RUa5_Xo4RtMiCA.json"
#define GWX_DEF   "taskcluster/task_definition_GWxTc8p_RUa5_Xo4RtMiCA.json"
#define GWX_ROUTE "tc-treeherder.v2.autoland.b437ae030825a8ea9fa7a632b1fcb9becbe11f69.88560"
#define ES_FAIL   "errorsummary/mochitest-browser-chrome_errorsummary.log"

static const char SQL_CLASSIFIED[] = "SELECT count(*) FROM runs WHERE verdict IS NOT NULL";
static const char SQL_SPAN[] =
    "SELECT extract(epoch FROM max(classified_at) - min(classified_at)) FROM runs";

/* One round: `replicas` workers, then n eligible messages; the rate over what they
 * classified within timeout_ms (*done of n). */
static double round_rate(rt_ch *h, int round, int replicas, int n, int timeout_ms, long long *done)
{
    if (rt_ch_sql_int(h, "WITH d AS (DELETE FROM runs RETURNING 1) SELECT count(*) FROM d", 0,
                      NULL) < 0)
        fprintf(stderr, "unexpected row count in runs\n");
    char(*task_ids)[23] = calloc((size_t)n, sizeof *task_ids);
    char(*groups)[23] = calloc((size_t)n, sizeof *groups);
    if (!task_ids || !groups) exit(1);
    char tag[32];
    snprintf(tag, sizeof tag, "scaling-%d", round);
    rt_ch_eligible_scenario(h, n, tag, task_ids, groups);
    rt_ch_start_workers(h, (size_t)replicas);
    for (int i = 0; i < n; i++) {
        char *body = rt_ch_failed_message(GWX_PULSE, task_ids[i], groups[i]);
        rt_ch_publish(h, "task-failed", body, strlen(body), GWX_ROUTE, NULL);
        free(body);
    }
    *done = rt_ch_wait_int(h, timeout_ms, n, SQL_CLASSIFIED, 0, NULL);
    if (rt_ch_stop_workers(h, 10000) != 0) fprintf(stderr, "a worker did not exit 0\n");
    char *span = rt_ch_sql_text(h, SQL_SPAN, 0, NULL);
    double seconds = span ? atof(span) : 0;
    free(span);
    free(task_ids);
    free(groups);
    return seconds > 0 && *done > 1 ? (double)(*done - 1) / seconds : 0;
}

int main(int argc, char **argv)
{
    int eligible = 150, latency_ms = 50, replicas = 3;
    static const struct option options[] = {
        {"eligible", required_argument, NULL, 'e'},
        {"latency-ms", required_argument, NULL, 'l'},
        {"replicas", required_argument, NULL, 'r'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        switch (c) {
        case 'e': eligible = atoi(optarg); break;
        case 'l': latency_ms = atoi(optarg); break;
        case 'r': replicas = atoi(optarg); break;
        default:
            printf("usage: bench_scaling [--eligible N (150)] [--latency-ms MS (50)]"
                   " [--replicas N (3)]\n");
            return c == 'h' ? 0 : 2;
        }
    }
    if (eligible < 2 || eligible > 100000 || latency_ms < 0 || latency_ms > 10000 || replicas < 2 ||
        replicas > RT_CH_MAX_WORKERS) {
        fprintf(stderr,
                "bench_scaling: --eligible 2..100000, --latency-ms 0..10000,"
                " --replicas 2..%d\n",
                RT_CH_MAX_WORKERS);
        return 2;
    }

    /* The fake logs one line per request: keep them out of the report. */
    char fake_log[] = "/tmp/bench-scaling-fake-XXXXXX";
    int log_fd = mkstemp(fake_log);
    int saved = dup(STDERR_FILENO);
    if (log_fd >= 0) dup2(log_fd, STDERR_FILENO);
    rt_ch *h = rt_ch_new();
    dup2(saved, STDERR_FILENO);
    close(saved);
    if (log_fd >= 0) close(log_fd);
    unlink(fake_log);

    char fault[160];
    snprintf(fault, sizeof fault, "{\"kind\": \"latency\", \"ms\": %d, \"path_prefix\": \"/api/\"}",
             latency_ms);
    if (rt_fake_add_fault(&h->fake, fault) != 200) {
        fprintf(stderr, "bench_scaling: the fake refused the latency fault\n");
        return 1;
    }
    rt_ch_setenv(h, "BUDGET_LIMITS", "*=1000000");
    rt_ch_declare_pulse(h);
    printf("retrig-classify scaling benchmark: eligible path, %d ms upstream latency on every"
           " call, %d messages a round\n",
           latency_ms, eligible);
    fflush(stdout);

    int timeout_ms = 120000;
    long long done1 = 0, doneN = 0;
    double one = round_rate(h, 1, 1, eligible, timeout_ms, &done1);
    printf("1 replica                 %7lld msgs  %9.1f msg/s%s\n", done1, one,
           done1 < eligible ? "  [stopped at the 120 s cap]" : "");
    fflush(stdout);
    double many = round_rate(h, 2, replicas, eligible, timeout_ms, &doneN);
    printf("%d replicas                %7lld msgs  %9.1f msg/s%s\n", replicas, doneN, many,
           doneN < eligible ? "  [stopped at the 120 s cap]" : "");
    printf("ratio %d:1                 %.2f   (target >= 2.5 for 3 replicas)\n", replicas,
           one > 0 ? many / one : 0);
    long long sets = rt_ch_sql_int(h, "SELECT count(*) FROM retrigger_sets", 0, NULL);
    unsigned requests = rt_ch_queue_depth(h, "retrigger");
    printf("(%lld sets, %u retrigger requests published)\n", sets, requests);
    printf(
        "figure: scaling_one_msgs_per_s %.1f\nfigure: scaling_many_msgs_per_s %.1f\n"
        "figure: scaling_replicas %d\nfigure: scaling_ratio %.2f\nfigure: scaling_latency_ms %d\n",
        one, many, replicas, one > 0 ? many / one : 0, latency_ms);

    /* Quiet tear-down (the fake is stopped here too). */
    saved = dup(STDERR_FILENO);
    int null_fd = open("/dev/null", O_WRONLY);
    if (null_fd >= 0) dup2(null_fd, STDERR_FILENO);
    rt_ch_free(h);
    dup2(saved, STDERR_FILENO);
    close(saved);
    if (null_fd >= 0) close(null_fd);
    return 0;
}
