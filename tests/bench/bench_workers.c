/* SPDX-License-Identifier: MPL-2.0 */
/* bench_workers.c - resident memory of every worker after a realistic workload (issue 9:
 * "resident memory per worker").
 *
 * On the local services with names of its own (support/classify_harness.h), one replica
 * each of retrig-classify, retrig-retrigger, retrig-decide and retrig-history, and one
 * retrig-perf on its interval (not --once: a process that exits has no /proc entry left),
 * share one broker, one Redis, one Postgres and the fake upstream. The bench plays
 * Taskcluster's part, as tests/integration/test_scaling.c does: it publishes --messages
 * Pulse messages made from the recorded fixtures, in all: passing test tasks (the GWxTc8p
 * run with new task ids and the recorded passing errorsummary), task exceptions (the
 * recorded fuzzmanager one), and failing test tasks (the GWxTc8p run made to fail, its own
 * label, its Treeherder job and the recorded failing errorsummary; one in three is
 * intermittent); for each hook trigger the fake saw it publishes the retriggered runs,
 * which join their sets, so retrig-decide decides every set. retrig-history records every
 * test task's errorsummary from its own queue. Meanwhile retrig-perf does one full pass
 * over the fake's Perfherder data: the recorded alert summaries plus recent copies of
 * summary 38857 whose alerts it backfills (the recorded BackfillRecord data points).
 *
 * Once every set is decided, every test run is in the history, retrig-perf's pass is over
 * and every queue is drained, it reads VmHWM (peak) and VmRSS (now) of each worker from
 * /proc/<pid>/status, then stops them (SIGTERM, each must exit 0). Prints a table and
 * `figure: rss_peak_mb.<program> X`, `figure: rss_now_mb.<program> X` (MiB) and
 * `figure: workers_messages N`. A command, not a test: scripts/bench runs it. Exit status
 * 0 when it ran, 1 when it could not (timeout, a worker failed), 2 on bad usage. */
#include "support/util.h"

#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "support/classify_harness.h"

#define GWX_PULSE    "pulse/treeherder_task-completed_GWxTc8p_RUa5_Xo4RtMiCA.json"
#define GWX_DEF      "taskcluster/task_definition_GWxTc8p_RUa5_Xo4RtMiCA.json"
#define GWX_ROUTE    "tc-treeherder.v2.autoland.b437ae030825a8ea9fa7a632b1fcb9becbe11f69.88560"
#define GWX_LABEL    "test-android-em-7.0-x86_64/debug-mochitest-e10s-1"
#define GWX_REVISION "b437ae030825a8ea9fa7a632b1fcb9becbe11f69"
#define EXC_PULSE    "pulse/fuzzmanager_task-exception_f8fRfedPSp2-A7M9Zhxe-Q.json"
#define DEC_FIX      "taskcluster/task_definition_build-android-api-16-debug.json"
#define PERF_TASK    "taskcluster/task_definition_B3EheQ-IQ5aPzw34KS_a6g.json"
#define ES_FAIL      "errorsummary/mochitest-browser-chrome_errorsummary.log"
#define ES_PASS      "errorsummary/mochitest-browser-chrome_pass_errorsummary.log"
#define ES_NAME      "public/test_info/mochitest_errorsummary.log"
#define BUGSUG       "treeherder/bug_suggestions.json"
#define CLIENT_ID    "project/retrig/bench-workers"
#define TOKEN        "fake-access-token-bench-workers-0123456789"
#define DELAYS       "200,400,800"
#define RETRIES      "300,600" /* the harness's retry_delays_ms */

#define RETRIGGERS     3 /* retriggers_per_failure */
#define PERF_SUMMARIES 4
#define PERF_ALERTS    3 /* per summary */
#define RUN_MS         120000
#define NPROGRAMS      5

static const char *const PROGRAMS[NPROGRAMS] = {"retrig-classify", "retrig-retrigger",
                                                "retrig-decide", "retrig-history", "retrig-perf"};
static const char *const PERF_PLATFORMS[PERF_ALERTS] = {
    "linux1804-64-shippable-qr", "windows10-64-shippable-qr", "macosx1015-64-shippable-qr"};

typedef struct failure {
    char task_id[23];
    char label[256];
    bool intermittent;
    int played; /* retriggered runs published */
} failure;

typedef struct bench {
    rt_ch *h;
    char group[23]; /* the push's task group (its decision task has the same id) */
    failure *fails;
    int nfail, npass, nexception;
    long published;   /* Pulse messages */
    long test_runs;   /* of which task-completed or task-failed: what history records */
    long next_job;    /* Treeherder job ids */
    size_t triggers;  /* hook triggers played */
    long long picks;  /* retrig-perf's picks this pass, -1 until it logged them */
    json_t *scenario; /* pending additions to the fake, sent by flush() */
} bench;

/* Everything the fake upstream logs and the harness says while tearing down goes here
 * instead of stderr (NULL: back to stderr). */
static void quiet(const char *path)
{
    static int saved = -1;
    if (path) {
        int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0600);
        saved = dup(STDERR_FILENO);
        if (fd >= 0) {
            dup2(fd, STDERR_FILENO);
            close(fd);
        }
    } else if (saved >= 0) {
        dup2(saved, STDERR_FILENO);
        close(saved);
        saved = -1;
    }
}

/* ---- the fake's data ---- */

static json_t *section(bench *b, const char *name)
{
    if (!b->scenario) b->scenario = json_object();
    json_t *s = json_object_get(b->scenario, name);
    if (!s) json_object_set_new(b->scenario, name, s = json_object());
    return s;
}

static void flush(bench *b)
{
    if (!b->scenario) return;
    rt_ch_scenario(b->h, b->scenario);
    json_decref(b->scenario);
    b->scenario = NULL;
}

/* A GWxTc8p test task of our push with its label and errorsummary; a failing one also gets
 * its Treeherder job with the recorded bug suggestions. */
static void add_test_task(bench *b, const char *task_id, const char *label, bool failed)
{
    json_object_set_new(section(b, "tasks"), task_id,
                        rt_ch_task_definition(GWX_DEF, b->group, label));
    json_object_set_new(section(b, "artifacts"), task_id,
                        json_pack("{s:[{s:s, s:s}, {s:s, s:s}]}", "0", "name",
                                  "public/logs/live_backing.log", "content", "recorded log\n",
                                  "name", ES_NAME, "fixture", failed ? ES_FAIL : ES_PASS));
    if (!failed) return;
    long job = ++b->next_job;
    char id[32];
    snprintf(id, sizeof id, "%ld", job);
    json_object_set_new(section(b, "jobs"), task_id,
                        json_pack("[{s:I, s:i, s:s, s:s, s:i}]", "id", (json_int_t)job, "retry_id",
                                  0, "result", "testfailed", "state", "completed",
                                  "failure_classification_id", 1));
    json_object_set_new(section(b, "bug_suggestions"), id, json_pack("{s:s}", "fixture", BUGSUG));
}

/* Perfherder: PERF_SUMMARIES copies of the recorded summary 38857 (two hours old, on our
 * push's group), each with PERF_ALERTS regressions made from its alert 177727, each alert
 * with its task, its job and the recorded data points of its series. */
static void add_perf_summaries(bench *b)
{
    json_t *list = json_load_file(rt_test_fixture("perfherder/alert_summaries.json"), 0, NULL);
    json_t *points = json_load_file(
        rt_test_fixture("perfherder/sherlock_backfill_record_context.json"), 0, NULL);
    if (!json_is_array(list) || !json_is_array(points)) {
        fprintf(stderr, "bench_workers: cannot read the Perfherder fixtures\n");
        exit(1);
    }
    json_t *model = json_array_get(list, 2);
    json_t *alert_model = json_array_get(json_object_get(model, "alerts"), 1);
    json_t *summaries = json_array(), *series = json_array();
    char created[40];
    time_t t = time(NULL) - 2 * 3600;
    strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%S.000000", gmtime(&t));
    for (long s = 0; s < PERF_SUMMARIES; s++) {
        long long summary_id = 900100 + s, push_id = 1300100 + s;
        json_t *summary = json_deep_copy(model), *alerts = json_array();
        json_object_set_new(summary, "id", json_integer(summary_id));
        json_object_set_new(summary, "push_id", json_integer(push_id));
        json_object_set_new(summary, "created", json_string(created));
        for (long a = 0; a < PERF_ALERTS; a++) {
            long long alert_id = 990100 + s * 10 + a;
            char hash[41], task_id[23];
            snprintf(hash, sizeof hash, "%040lld", alert_id);
            json_t *alert = json_deep_copy(alert_model);
            json_t *sig = json_object_get(alert, "series_signature");
            json_object_set_new(alert, "id", json_integer(alert_id));
            json_object_set_new(alert, "summary_id", json_integer(summary_id));
            json_object_set_new(alert, "amount_pct", json_real(8.0 + (double)a));
            json_object_set_new(alert, "is_regression", json_true());
            json_object_set_new(sig, "id", json_integer(alert_id * 10));
            json_object_set_new(sig, "signature_hash", json_string(hash));
            json_object_set_new(sig, "machine_platform", json_string(PERF_PLATFORMS[a]));
            json_array_append_new(alerts, alert);
            /* Its job's task in our group, the job, the series ending at the push. */
            rt_ch_slugid(task_id);
            json_object_set_new(section(b, "tasks"), task_id,
                                json_pack("{s:s, s:{s:s, s:[s]}}", "fixture", PERF_TASK, "override",
                                          "taskGroupId", b->group, "routes", GWX_ROUTE));
            json_object_set_new(
                section(b, "jobs"), task_id,
                json_pack("[{s:I, s:i}]", "id", (json_int_t)(700000 + alert_id), "retry_id", 0));
            json_t *data = json_deep_copy(points);
            json_t *last = json_array_get(data, json_array_size(data) - 1);
            json_object_set_new(last, "push_id", json_integer(push_id));
            json_object_set_new(last, "job_id", json_integer(700000 + alert_id));
            json_array_append_new(series, json_pack("{s:s, s:I, s:s, s:o}", "project", "autoland",
                                                    "signature_id", (json_int_t)(alert_id * 10),
                                                    "signature_hash", hash, "data", data));
        }
        json_object_set_new(summary, "alerts", alerts);
        json_array_append_new(summaries, summary);
    }
    if (!b->scenario) b->scenario = json_object();
    json_object_set_new(b->scenario, "alert_summaries", summaries);
    json_object_set_new(b->scenario, "performance_data", series);
    json_decref(list);
    json_decref(points);
}

/* The push (decision task, actions.json, hook credentials), the failing originals, and
 * Perfherder's summaries. */
static void register_push(bench *b)
{
    rt_ch_slugid(b->group);
    json_object_set_new(
        section(b, "tasks"), b->group,
        json_pack("{s:s, s:{s:s}}", "fixture", DEC_FIX, "override", "taskGroupId", b->group));
    json_object_set_new(section(b, "artifacts"), b->group,
                        json_pack("{s:[o]}", "0", rt_ch_actions_artifact(b->group, GWX_REVISION)));
    json_object_set_new(section(b, "hook_clients"), CLIENT_ID, json_string(TOKEN));
    for (int i = 0; i < b->nfail; i++) {
        failure *x = &b->fails[i];
        rt_ch_slugid(x->task_id);
        snprintf(x->label, sizeof x->label, "%s-%s-%d", GWX_LABEL, b->group, i);
        x->intermittent = i % 3 == 0;
        add_test_task(b, x->task_id, x->label, true);
    }
    add_perf_summaries(b);
    flush(b);
}

/* ---- Taskcluster's part ---- */

static void publish(bench *b, const char *event, json_t *body, const char *route)
{
    char *text = json_dumps(body, JSON_COMPACT);
    if (!text) exit(1);
    rt_ch_publish(b->h, event, text, strlen(text), route, NULL);
    free(text);
    b->published++;
    if (strcmp(event, "task-exception") != 0) b->test_runs++;
}

/* A run of a GWxTc8p test task of our push: the recorded message made to fail, or the
 * recorded completed one. */
static json_t *test_message(const bench *b, const char *task_id, const char *label, bool failed)
{
    json_t *body = NULL;
    if (failed) {
        char *text = rt_ch_failed_message(GWX_PULSE, task_id, b->group);
        body = json_loads(text, 0, NULL);
        free(text);
    } else {
        json_t *wrapper = json_load_file(rt_test_fixture(GWX_PULSE), 0, NULL);
        body = json_deep_copy(json_object_get(wrapper, "payload"));
        json_decref(wrapper);
        json_t *status = json_object_get(body, "status");
        json_object_set_new(status, "taskId", json_string(task_id));
        json_object_set_new(status, "taskGroupId", json_string(b->group));
    }
    if (!body) exit(1);
    if (label) json_object_set_new(body, "task", json_pack("{s:{s:s}}", "tags", "label", label));
    return body;
}

/* The stream: failures, passes and exceptions interleaved, each published once. */
static void publish_stream(bench *b)
{
    json_t *exc = json_load_file(rt_test_fixture(EXC_PULSE), 0, NULL);
    json_t *exc_body = json_object_get(exc, "payload") ? json_object_get(exc, "payload") : exc;
    if (!exc_body) exit(1);
    char(*passes)[23] = calloc((size_t)b->npass + 1, sizeof *passes);
    if (!passes) exit(1);
    for (int i = 0; i < b->npass; i++) {
        char label[300];
        rt_ch_slugid(passes[i]);
        snprintf(label, sizeof label, "%s-%s-pass-%d", GWX_LABEL, b->group, i);
        add_test_task(b, passes[i], label, false);
    }
    flush(b);
    for (int i = 0; i < b->nfail || i < b->npass || i < b->nexception; i++) {
        if (i < b->nfail) {
            json_t *m = test_message(b, b->fails[i].task_id, NULL, true);
            publish(b, "task-failed", m, GWX_ROUTE);
            json_decref(m);
        }
        if (i < b->npass) {
            json_t *m = test_message(b, passes[i], NULL, false);
            publish(b, "task-completed", m, GWX_ROUTE);
            json_decref(m);
        }
        if (i < b->nexception) {
            char task_id[23];
            rt_ch_slugid(task_id);
            json_object_set_new(json_object_get(exc_body, "status"), "taskId",
                                json_string(task_id));
            publish(b, "task-exception", exc_body, NULL);
        }
    }
    free(passes);
    json_decref(exc);
}

/* For each hook trigger not played yet: the retriggered runs it asked for resolve (the
 * failure reproduces, except on the intermittent ones after their first retrigger). The
 * backfills retrig-perf triggers ask for no label here and are left alone. */
static void play_triggers(bench *b)
{
    json_t *triggers = rt_fake_triggers(&b->h->fake);
    if (!triggers) {
        fprintf(stderr, "bench_workers: cannot read the fake's triggers\n");
        exit(1);
    }
    for (; b->triggers < json_array_size(triggers); b->triggers++) {
        json_t *input = json_object_get(
            json_object_get(json_object_get(json_array_get(triggers, b->triggers), "payload"),
                            "user"),
            "input");
        size_t i, k;
        json_t *r, *t;
        json_array_foreach(json_object_get(input, "requests"), i, r)
        {
            json_t *times = json_object_get(r, "times");
            json_array_foreach(json_object_get(r, "tasks"), k, t)
            {
                failure *x = NULL;
                for (int f = 0; f < b->nfail && json_string_value(t); f++)
                    if (!strcmp(b->fails[f].label, json_string_value(t))) x = &b->fails[f];
                for (int n = 0; x && n < (times ? (int)json_integer_value(times) : 1); n++) {
                    bool reproduces = !x->intermittent || x->played++ == 0;
                    char task_id[23];
                    rt_ch_slugid(task_id);
                    add_test_task(b, task_id, x->label, reproduces);
                    flush(b);
                    json_t *m = test_message(b, task_id, x->label, reproduces);
                    publish(b, reproduces ? "task-failed" : "task-completed", m, GWX_ROUTE);
                    json_decref(m);
                }
            }
        }
    }
    json_decref(triggers);
}

/* ---- progress ---- */

/* Messages ready in a queue; 0 when it does not exist (yet). */
static unsigned depth(bench *b, const char *queue)
{
    uint32_t n = 0;
    return rt_amqp_queue_depth(b->h->amqp, queue, &n) == RT_OK ? n : 0;
}

static unsigned depth_with_delays(bench *b, const char *suffix, const char *delays)
{
    char q[256], list[64], *save = NULL;
    snprintf(q, sizeof q, "%s.%s", b->h->ns, suffix);
    unsigned total = depth(b, q);
    snprintf(list, sizeof list, "%s", delays);
    for (char *d = strtok_r(list, ",", &save); d; d = strtok_r(NULL, ",", &save)) {
        snprintf(q, sizeof q, "%s.%s.delay.%s", b->h->ns, suffix, d);
        total += depth(b, q);
    }
    return total;
}

/* Messages ready in every queue of the pipeline, delay queues included. */
static unsigned pending(bench *b)
{
    char q[256];
    snprintf(q, sizeof q, "%s-history", b->h->pulse_queue);
    return depth(b, b->h->pulse_queue) + depth(b, q) +
           depth_with_delays(b, "classify-retry", RETRIES) +
           depth_with_delays(b, "retrigger", RETRIES) + depth_with_delays(b, "decide", DELAYS) +
           depth_with_delays(b, "history-retry", RETRIES);
}

/* retrig-perf's picks this pass, from its "alerts picked" log line; -1 before it. */
static long long perf_picks(bench *b, pid_t pid)
{
    char path[256], line[4096];
    snprintf(path, sizeof path, "%s/worker-%d.log", b->h->dir, (int)pid);
    FILE *f = fopen(path, "r");
    long long picks = -1;
    while (f && fgets(line, sizeof line, f)) {
        const char *at = strstr(line, "\"alerts picked\"") ? strstr(line, "summaries, ") : NULL;
        if (at) picks = atoll(at + strlen("summaries, "));
    }
    if (f) fclose(f);
    return picks;
}

static long long sql_int(bench *b, const char *sql) { return rt_ch_sql_int(b->h, sql, 0, NULL); }

/* Whether the whole workload is done: every set decided, every test run in the history,
 * retrig-perf's pass over with an outcome for each pick, nothing left in a queue. */
static bool done(bench *b, pid_t perf_pid)
{
    if (b->picks < 0) b->picks = perf_picks(b, perf_pid);
    return b->picks >= 0 &&
           sql_int(b, "SELECT count(*) FROM perf_alerts WHERE outcome IS NOT NULL") == b->picks &&
           sql_int(b, "SELECT count(*) FROM decisions") == b->nfail &&
           sql_int(b, "SELECT count(*) FROM history_runs") == b->test_runs && pending(b) == 0;
}

/* VmHWM and VmRSS of a process, in kB (-1 when unreadable). */
static void read_rss(pid_t pid, long *hwm_kb, long *rss_kb)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    *hwm_kb = *rss_kb = -1;
    while (f && fgets(line, sizeof line, f)) {
        if (!strncmp(line, "VmHWM:", 6)) *hwm_kb = atol(line + 6);
        if (!strncmp(line, "VmRSS:", 6)) *rss_kb = atol(line + 6);
    }
    if (f) fclose(f);
}

/* What the harness leaves: the history queues, the decide delay queues, the events. */
static void delete_extra(bench *b)
{
    rt_amqp *a = b->h->amqp;
    char q[256], list[64], *save = NULL;
    snprintf(q, sizeof q, "%s-history", b->h->pulse_queue);
    if (rt_amqp_delete_queue(a, q) != RT_OK) {}
    snprintf(q, sizeof q, "%s.history-retry", b->h->ns);
    if (rt_amqp_delete_queue(a, q) != RT_OK) {}
    snprintf(list, sizeof list, "%s", RETRIES);
    for (char *d = strtok_r(list, ",", &save); d; d = strtok_r(NULL, ",", &save)) {
        snprintf(q, sizeof q, "%s.history-retry.delay.%s", b->h->ns, d);
        if (rt_amqp_delete_queue(a, q) != RT_OK) {}
    }
    snprintf(list, sizeof list, "%s", DELAYS);
    for (char *d = strtok_r(list, ",", &save); d; d = strtok_r(NULL, ",", &save)) {
        snprintf(q, sizeof q, "%s.decide.delay.%s", b->h->ns, d);
        if (rt_amqp_delete_queue(a, q) != RT_OK) {}
    }
    snprintf(q, sizeof q, "%s.decisions", b->h->ns);
    if (rt_amqp_delete_exchange(a, q) != RT_OK) {}
}

int main(int argc, char **argv)
{
    int messages = 300;
    static const struct option options[] = {
        {"messages", required_argument, NULL, 'm'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        switch (c) {
        case 'm': messages = atoi(optarg); break;
        default:
            printf("usage: bench_workers [--messages N (300)]\n"
                   "One replica of each worker through a recorded workload of N Pulse messages;"
                   " prints\nthe peak and current resident memory of each.\n");
            return c == 'h' ? 0 : 2;
        }
    }
    if (messages < 40 || messages > 20000) {
        fprintf(stderr, "bench_workers: --messages 40..20000\n");
        return 2;
    }
    int64_t start = rt_test_now_ms();
    bench b = {.picks = -1, .next_job = 610000000L + (long)(getpid() % 10000) * 10000};
    /* One failure in 20 messages, each with RETRIGGERS retriggered runs; one exception in
     * 10; the rest passes. */
    b.nfail = messages / 20;
    b.nexception = messages / 10;
    b.npass = messages - b.nfail * (1 + RETRIGGERS) - b.nexception;
    b.fails = calloc((size_t)b.nfail, sizeof *b.fails);
    if (!b.fails) return 1;

    char fake_log[] = "/tmp/bench-workers-fake-XXXXXX";
    int log_fd = mkstemp(fake_log);
    if (log_fd >= 0) close(log_fd);
    quiet(fake_log);
    b.h = rt_ch_new();
    quiet(NULL);
    rt_ch *h = b.h;
    char retriggers[8];
    snprintf(retriggers, sizeof retriggers, "%d", RETRIGGERS);
    rt_ch_setenv(h, "RETRIGGERS_PER_FAILURE", retriggers);
    rt_ch_setenv(h, "BUDGET_LIMITS", "*=100000");
    rt_ch_setenv(h, "TASKCLUSTER_CLIENT_ID", CLIENT_ID);
    rt_ch_setenv(h, "TASKCLUSTER_ACCESS_TOKEN", TOKEN);
    rt_ch_setenv(h, "DECIDE_DELAYS_MS", DELAYS);
    rt_ch_setenv(h, "DRY_RUN", "false");
    rt_ch_setenv(h, "PERF_REPOSITORIES", "autoland");
    rt_ch_setenv(h, "PERF_FRAMEWORKS", "13");
    register_push(&b);

    printf("worker memory benchmark: one replica of each worker, %d Pulse messages (%d failing"
           " test tasks, %d retriggers each, %d exceptions), %d Perfherder alerts\n",
           messages, b.nfail, RETRIGGERS, b.nexception, PERF_SUMMARIES * PERF_ALERTS);
    fflush(stdout);
    for (size_t i = 0; i + 1 < NPROGRAMS; i++) rt_ch_start_program(h, PROGRAMS[i], 1);
    /* retrig-perf has no queue: it is ready once it logs "running" (then it does a pass). */
    rt_ch_start_program_ready(h, PROGRAMS[NPROGRAMS - 1], 1, "running");
    pid_t perf_pid = rt_ch_worker_pid(h, NPROGRAMS - 1);
    publish_stream(&b);

    int quiet_polls = 0, status = 0;
    int64_t deadline = rt_test_now_ms() + RUN_MS;
    while (quiet_polls < 3) {
        play_triggers(&b);
        quiet_polls = done(&b, perf_pid) ? quiet_polls + 1 : 0;
        if (rt_test_now_ms() > deadline) {
            fprintf(stderr,
                    "bench_workers: not done within %d s: %lld of %d sets decided, %lld of %ld"
                    " test runs in the history, perf picks %lld with %lld outcomes, %u messages"
                    " queued\n",
                    RUN_MS / 1000, sql_int(&b, "SELECT count(*) FROM decisions"), b.nfail,
                    sql_int(&b, "SELECT count(*) FROM history_runs"), b.test_runs, b.picks,
                    sql_int(&b, "SELECT count(*) FROM perf_alerts WHERE outcome IS NOT NULL"),
                    pending(&b));
            status = 1;
            break;
        }
        struct timespec ts = {0, 100 * 1000000L};
        nanosleep(&ts, NULL);
    }

    long hwm[NPROGRAMS], rss[NPROGRAMS];
    for (size_t i = 0; i < NPROGRAMS; i++) read_rss(rt_ch_worker_pid(h, i), &hwm[i], &rss[i]);
    if (rt_ch_stop_workers(h, 10000) != 0) {
        fprintf(stderr, "bench_workers: a worker did not exit 0\n");
        status = 1;
    }
    double seconds = (double)(rt_test_now_ms() - start) / 1000.0;
    long long runs = sql_int(&b, "SELECT count(*) FROM runs WHERE verdict IS NOT NULL");
    long long sets = sql_int(&b, "SELECT count(*) FROM retrigger_sets");
    long long decided = sql_int(&b, "SELECT count(*) FROM decisions");
    long long regressions =
        sql_int(&b, "SELECT count(*) FROM decisions WHERE verdict = 'regression'");
    long long history = sql_int(&b, "SELECT count(*) FROM history_runs");
    long long backfills =
        sql_int(&b, "SELECT count(*) FROM perf_alerts WHERE outcome = 'triggered'");
    unsigned dead = rt_ch_queue_depth(h, "dead-letter");

    printf("%-18s %12s %12s\n", "worker", "peak RSS MiB", "RSS now MiB");
    for (size_t i = 0; i < NPROGRAMS; i++)
        printf("%-18s %12.1f %12.1f\n", PROGRAMS[i], hwm[i] / 1024.0, rss[i] / 1024.0);
    printf("(%ld messages published, %lld runs classified, %lld sets, %lld decided (%lld"
           " regressions), %lld history runs, %lld backfills triggered, %u dead letters; %.1f s)\n",
           b.published, runs, sets, decided, regressions, history, backfills, dead, seconds);
    for (size_t i = 0; i < NPROGRAMS; i++) {
        if (hwm[i] < 0 || rss[i] < 0) {
            status = 1;
            continue;
        }
        printf("figure: rss_peak_mb.%s %.1f\n", PROGRAMS[i], hwm[i] / 1024.0);
        printf("figure: rss_now_mb.%s %.1f\n", PROGRAMS[i], rss[i] / 1024.0);
    }
    printf("figure: workers_messages %ld\n", b.published);
    fflush(stdout);

    quiet(fake_log);
    delete_extra(&b);
    rt_ch_free(h);
    quiet(NULL);
    unlink(fake_log);
    free(b.fails);
    return status;
}
