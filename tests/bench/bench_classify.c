/* SPDX-License-Identifier: MPL-2.0 */
/* bench_classify.c - how fast one retrig-classify worker goes, next to the broker's limit.
 *
 * Three measurements on the local services (a database, Redis prefix, namespace and Pulse
 * exchanges of its own, see support/classify_harness.h):
 *   1. a minimal consume-and-ack loop (rt_amqp, the worker's prefetch) over N persistent
 *      messages already in a queue: the broker's limit for one consumer;
 *   2. one worker on the completed path: N task-completed messages (distinct task ids; no
 *      HTTP call needed), already queued when the worker starts;
 *   3. one worker on the eligible path: M failed test tasks (distinct task ids, groups and
 *      labels, budget limit high) against the local fake upstream, each ending in a set, a
 *      ledger row and a published retrigger request.
 * Worker rates come from the workers' own timestamps (runs.classified_at: first to last).
 * Peak resident memory is VmHWM from /proc/<pid>/status just before the worker stops.
 * A command, not a test: scripts/bench builds and runs it. Exit status 0 when it ran
 * (targets are reported, not enforced), 1 when it could not. */
#include "support/util.h"

#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/options.h"
#include "support/classify_harness.h"

#define GWX_PULSE "pulse/treeherder_task-completed_GWxTc8p_RUa5_Xo4RtMiCA.json"
#define GWX_DEF   "taskcluster/task_definition_GWxTc8p_RUa5_Xo4RtMiCA.json"
#define GWX_ROUTE "tc-treeherder.v2.autoland.b437ae030825a8ea9fa7a632b1fcb9becbe11f69.88560"
#define FUZZ_DONE "pulse/fuzzmanager_task-completed_Z1kaoRtHRRWyyuMDqadYPA.json"
#define ES_FAIL   "errorsummary/mochitest-browser-chrome_errorsummary.log"

static const char SQL_CLASSIFIED[] = "SELECT count(*) FROM runs WHERE verdict IS NOT NULL";
static const char SQL_SPAN[] =
    "SELECT extract(epoch FROM max(classified_at) - min(classified_at)) FROM runs";

static double now_s(void) { return (double)rt_test_now_ms() / 1000.0; }

/* n raw task-completed bodies with distinct task ids, published with confirms. */
static void publish_completed(rt_ch *h, const char *exchange_or_null, const char *queue, int n)
{
    char *text = rt_test_read_file(rt_test_fixture(FUZZ_DONE), NULL);
    json_t *doc = json_loads(text, 0, NULL);
    free(text);
    json_t *status = json_object_get(doc, "status");
    for (int i = 0; i < n; i++) {
        char task_id[23];
        rt_ch_slugid(task_id);
        json_object_set_new(status, "taskId", json_string(task_id));
        char *body = json_dumps(doc, JSON_COMPACT);
        if (exchange_or_null) {
            rt_ch_publish(h, exchange_or_null, body, strlen(body), NULL, NULL);
        } else {
            /* The default exchange routes by queue name. */
            if (rt_amqp_publish(h->amqp, "", queue, body, strlen(body), NULL) != RT_OK) {
                fprintf(stderr, "publish: %s\n", rt_amqp_errstr(h->amqp));
                exit(1);
            }
        }
        free(body);
    }
    json_decref(doc);
}

static double raw_loop(rt_ch *h, int n)
{
    char queue[160];
    snprintf(queue, sizeof queue, "%s.raw", h->id);
    if (rt_amqp_declare_queue(h->amqp, queue, NULL) != RT_OK) {
        fprintf(stderr, "declare: %s\n", rt_amqp_errstr(h->amqp));
        exit(1);
    }
    publish_completed(h, NULL, queue, n);

    rt_amqp_options opts;
    rt_amqp_options_from_config(&opts, &h->cfg, "bench");
    rt_amqp *c = NULL;
    char err[RT_ERRSTR_SIZE] = "";
    if (rt_amqp_new(&c, &opts, err) != RT_OK || rt_amqp_ensure_connected(c, 10000) != RT_OK ||
        rt_amqp_consume(c, queue) != RT_OK) {
        fprintf(stderr, "raw consumer: %s\n", c ? rt_amqp_errstr(c) : err);
        exit(1);
    }
    int got = 0;
    double start = 0;
    while (got < n) {
        rt_amqp_message m = {0};
        int rc = rt_amqp_next(c, &m, 5000);
        if (rc != RT_OK) {
            fprintf(stderr, "raw loop stopped after %d messages: %s\n", got, rt_amqp_errstr(c));
            exit(1);
        }
        if (got == 0) start = now_s();
        if (rt_amqp_ack(c, &m) != RT_OK) exit(1);
        rt_amqp_message_free(&m);
        got++;
    }
    double rate = (n - 1) / (now_s() - start);
    rt_amqp_free(c);
    if (rt_amqp_delete_queue(h->amqp, queue) != RT_OK) {}
    return rate;
}

static long vm_hwm_kb(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmHWM:", 6)) kb = atol(line + 6);
    if (f) fclose(f);
    return kb;
}

/* Starts one worker on what is queued and waits (at most timeout_ms) for n verdicts.
 * Returns the worker's rate over the messages it classified (first to last verdict);
 * *done says how many that was, *hwm_kb its peak RSS. */
static double run_worker(rt_ch *h, int n, int timeout_ms, long long *done, long *hwm_kb)
{
    rt_ch_start_workers(h, 1);
    /* Looks every 500 ms: counting a growing runs table every 20 ms (rt_ch_wait_int) would
     * take Postgres CPU from the worker being measured. The rate comes from the rows' own
     * timestamps, so how often we look does not change it. */
    int64_t deadline = rt_test_now_ms() + timeout_ms;
    for (;;) {
        *done = rt_ch_sql_int(h, SQL_CLASSIFIED, 0, NULL);
        if (*done >= n || rt_test_now_ms() >= deadline) break;
        struct timespec pause = {0, 500 * 1000000L};
        nanosleep(&pause, NULL);
    }
    *hwm_kb = vm_hwm_kb(rt_ch_worker_pid(h, 0));
    if (rt_ch_stop_workers(h, 10000) != 0) fprintf(stderr, "the worker did not exit 0\n");
    char *span = rt_ch_sql_text(h, SQL_SPAN, 0, NULL);
    double seconds = span ? atof(span) : 0;
    free(span);
    return seconds > 0 && *done > 1 ? (double)(*done - 1) / seconds : 0;
}

int main(int argc, char **argv)
{
    int completed = 20000, eligible = 2000;
    static const struct option options[] = {
        {"completed", required_argument, NULL, 'c'},
        {"eligible", required_argument, NULL, 'e'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        switch (c) {
        case 'c': completed = atoi(optarg); break;
        case 'e': eligible = atoi(optarg); break;
        default:
            printf("usage: bench_classify [--completed N (20000)] [--eligible N (2000)]\n");
            return c == 'h' ? 0 : 2;
        }
    }
    if (completed < 2 || eligible < 2 || completed > 1000000 || eligible > 100000) {
        fprintf(stderr, "bench_classify: counts must be between 2 and 1000000/100000\n");
        return 2;
    }

    /* The fake logs one line per request: not for a benchmark (the writes would count), and
     * what it still prints stays out of the report. */
    setenv("FAKE_UPSTREAM_QUIET", "1", 1);
    char fake_log[] = "/tmp/bench-classify-fake-XXXXXX";
    int log_fd = mkstemp(fake_log);
    int saved = dup(STDERR_FILENO);
    if (log_fd >= 0) dup2(log_fd, STDERR_FILENO);
    rt_ch *h = rt_ch_new();
    dup2(saved, STDERR_FILENO);
    close(saved);
    if (log_fd >= 0) close(log_fd);
    unlink(fake_log);

    printf("retrig-classify benchmark: one worker, prefetch %d, broker %s\n", h->cfg.amqp_prefetch,
           "amqp_url (local RabbitMQ)");
    fflush(stdout);

    double raw = raw_loop(h, completed);
    printf("raw consume+ack loop      %7d msgs  %9.0f msg/s\n", completed, raw);
    printf("figure: classify_raw_msgs_per_s %.0f\n", raw);
    fflush(stdout);

    rt_ch_declare_pulse(h);
    publish_completed(h, "task-completed", NULL, completed);
    long hwm_completed = 0;
    long long done = 0;
    double fast = run_worker(h, completed, 60000, &done, &hwm_completed);
    printf("worker, completed path    %7lld msgs  %9.0f msg/s  ratio to raw %.2f"
           "   (target >= 10000 msg/s and >= 0.80)%s\n",
           done, fast, raw > 0 ? fast / raw : 0,
           done < completed ? "  [stopped at the 60 s cap]" : "");
    printf("figure: classify_completed_msgs_per_s %.0f\nfigure: classify_ratio %.2f\n", fast,
           raw > 0 ? fast / raw : 0);
    fflush(stdout);

    /* The eligible path in a clean table, budget out of the way. */
    if (rt_ch_sql_int(h, "WITH d AS (DELETE FROM runs RETURNING 1) SELECT count(*) FROM d", 0,
                      NULL) < done)
        fprintf(stderr, "unexpected row count in runs\n");
    rt_ch_setenv(h, "BUDGET_LIMITS", "*=1000000");
    char(*task_ids)[23] = calloc((size_t)eligible, sizeof *task_ids);
    char(*groups)[23] = calloc((size_t)eligible, sizeof *groups);
    if (!task_ids || !groups) return 1;
    rt_ch_eligible_scenario(h, eligible, "bench", task_ids, groups);
    for (int i = 0; i < eligible; i++) {
        char *body = rt_ch_failed_message(GWX_PULSE, task_ids[i], groups[i]);
        rt_ch_publish(h, "task-failed", body, strlen(body), GWX_ROUTE, NULL);
        free(body);
    }
    long hwm_eligible = 0;
    double slow = run_worker(h, eligible, 60000, &done, &hwm_eligible);
    long long sets = rt_ch_sql_int(h, "SELECT count(*) FROM retrigger_sets", 0, NULL);
    unsigned requests = rt_ch_queue_depth(h, "retrigger");
    printf("worker, eligible path     %7lld msgs  %9.0f msg/s   (target >= 500 msg/s; %lld sets,"
           " %u requests published)%s\n",
           done, slow, sets, requests, done < eligible ? "  [stopped at the 60 s cap]" : "");
    printf("worker peak RSS (VmHWM)   completed path %.1f MB, eligible path %.1f MB"
           "   (target < 20 MB)\n",
           hwm_completed / 1024.0, hwm_eligible / 1024.0);
    printf("figure: classify_eligible_msgs_per_s %.0f\n"
           "figure: rss_peak_mb.retrig-classify-completed %.1f\n"
           "figure: rss_peak_mb.retrig-classify-eligible %.1f\n",
           slow, hwm_completed / 1024.0, hwm_eligible / 1024.0);
    free(task_ids);
    free(groups);

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
