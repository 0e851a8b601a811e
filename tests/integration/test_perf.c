/* SPDX-License-Identifier: MPL-2.0 */
/* test_perf.c - retrig-perf --once end to end: real processes on the local Redis and
 * Postgres, the fake upstream playing Perfherder (alert summaries made from the recorded
 * summary 38857, data points from the recorded BackfillRecord context), Treeherder (jobs)
 * and Taskcluster (the recorded actions.json, Hawk-checked hooks). Pins issue 6: picks
 * within family limits (a family out of budget passes to the next), never twice (a second
 * run, two runners at once), an existing backfill recorded as already-backfilled, dry-run
 * sends nothing, a young summary waits, Perfherder 5xx retried, and a Perfherder error or
 * a truncated page marks nothing handled. And the budget backstop: a Redis counter below
 * the ledger cannot push a family's ledger past its limit. Each test has its own database,
 * Redis prefix and fake (support/classify_harness.h). */
#include "support/util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/store/ledger.h"
#include "common/store/perf.h"
#include "support/classify_harness.h"

#define DECISION      "HkX-TbGXQaSX4ucqGMQNBA"
#define DEC_FIX       "taskcluster/task_definition_build-android-api-16-debug.json"
#define TASK_FIX      "taskcluster/task_definition_B3EheQ-IQ5aPzw34KS_a6g.json"
#define TASK_REVISION "918d7c84da371bda26460fb4b50f161d32107880" /* TASK_FIX's push */
#define ACTIONS       "taskcluster/actions.json"
#define CLIENT_ID     "project/retrig/perf"
#define TOKEN         "fake-access-token-perf-0123456789"
#define HOOKS         "/api/hooks/"
#define MAX_ALERTS    8

extern char **environ;

/* One alert of a test summary: what the fixture's alert 177727 becomes. */
typedef struct test_alert {
    long long id;
    const char *platform;
    double amount_pct;
    bool regression;
    char task_id[23]; /* the task of its job */
    long long job_id;
} test_alert;

typedef struct test_summary {
    long long id;
    long long push_id;
    int age_minutes;
    test_alert alerts[MAX_ALERTS];
    size_t nalerts;
} test_summary;

static rt_ch *new_harness(void)
{
    rt_ch *h = rt_ch_new();
    rt_ch_setenv(h, "TASKCLUSTER_CLIENT_ID", CLIENT_ID);
    rt_ch_setenv(h, "TASKCLUSTER_ACCESS_TOKEN", TOKEN);
    rt_ch_setenv(h, "DRY_RUN", "false");
    rt_ch_setenv(h, "PERF_REPOSITORIES", "autoland");
    rt_ch_setenv(h, "PERF_FRAMEWORKS", "13");
    /* The recorded actions.json, moved to the push of the alerts' task (TASK_FIX). */
    json_t *scenario = json_pack(
        "{s:{s:{s:s, s:{s:s}}}, s:{s:{s:[o]}}, s:{s:s}}", "tasks", DECISION, "fixture", DEC_FIX,
        "override", "taskGroupId", DECISION, "artifacts", DECISION, "0",
        rt_ch_actions_artifact(DECISION, TASK_REVISION), "hook_clients", CLIENT_ID, TOKEN);
    rt_ch_scenario(h, scenario);
    json_decref(scenario);
    return h;
}

static json_t *fixture_json(const char *name)
{
    json_error_t error;
    json_t *doc = json_load_file(rt_test_fixture(name), 0, &error);
    if (!doc) fail_msg("%s: %s", name, error.text);
    return doc;
}

static void iso_minutes_ago(int minutes, char out[40])
{
    time_t t = time(NULL) - (time_t)minutes * 60;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 40, "%Y-%m-%dT%H:%M:%S.000000", &tm);
}

/* Perfherder's view of a test summary: the recorded summary 38857 with our ids, age and
 * alerts (each a copy of the recorded alert 177727 with its own signature). */
static json_t *summary_json(const test_summary *s)
{
    json_t *list = fixture_json("perfherder/alert_summaries.json");
    json_t *summary = json_deep_copy(json_array_get(list, 2));
    json_decref(list);
    assert_int_equal(json_integer_value(json_object_get(summary, "id")), 38857);
    json_t *model = json_deep_copy(json_array_get(json_object_get(summary, "alerts"), 1));
    assert_int_equal(json_integer_value(json_object_get(model, "id")), 177727);
    char created[40];
    iso_minutes_ago(s->age_minutes, created);
    json_object_set_new(summary, "id", json_integer(s->id));
    json_object_set_new(summary, "push_id", json_integer(s->push_id));
    json_object_set_new(summary, "created", json_string(created));
    json_t *alerts = json_array();
    for (size_t i = 0; i < s->nalerts; i++) {
        const test_alert *a = &s->alerts[i];
        json_t *alert = json_deep_copy(model);
        json_t *sig = json_object_get(alert, "series_signature");
        char hash[41];
        snprintf(hash, sizeof hash, "%040lld", a->id);
        json_object_set_new(alert, "id", json_integer(a->id));
        json_object_set_new(alert, "summary_id", json_integer(s->id));
        json_object_set_new(alert, "amount_pct", json_real(a->amount_pct));
        json_object_set_new(alert, "is_regression", json_boolean(a->regression));
        json_object_set_new(sig, "id", json_integer(a->id * 10));
        json_object_set_new(sig, "signature_hash", json_string(hash));
        json_object_set_new(sig, "machine_platform", json_string(a->platform));
        json_array_append_new(alerts, alert);
    }
    json_object_set_new(summary, "alerts", alerts);
    json_decref(model);
    return summary;
}

/* Gives each alert a task (the recorded raptor task, in our push's group), its Treeherder
 * job, and the recorded data points of its series with the last one at the summary's
 * push, produced by that job. */
static void add_summary(rt_ch *h, test_summary *s)
{
    json_t *scenario = json_pack("{s:[o], s:{}, s:{}, s:[]}", "alert_summaries", summary_json(s),
                                 "tasks", "jobs", "performance_data");
    for (size_t i = 0; i < s->nalerts; i++) {
        test_alert *a = &s->alerts[i];
        rt_ch_slugid(a->task_id);
        a->job_id = 700000 + a->id;
        json_object_set_new(
            json_object_get(scenario, "tasks"), a->task_id,
            json_pack("{s:s, s:{s:s}}", "fixture", TASK_FIX, "override", "taskGroupId", DECISION));
        json_object_set_new(json_object_get(scenario, "jobs"), a->task_id,
                            json_pack("[{s:I, s:i}]", "id", (json_int_t)a->job_id, "retry_id", 0));
        json_t *points = fixture_json("perfherder/sherlock_backfill_record_context.json");
        json_t *last = json_array_get(points, json_array_size(points) - 1);
        json_object_set_new(last, "push_id", json_integer(s->push_id));
        json_object_set_new(last, "job_id", json_integer(a->job_id));
        char hash[41];
        snprintf(hash, sizeof hash, "%040lld", a->id);
        json_array_append_new(json_object_get(scenario, "performance_data"),
                              json_pack("{s:s, s:I, s:s, s:o}", "project", "autoland",
                                        "signature_id", (json_int_t)(a->id * 10), "signature_hash",
                                        hash, "data", points));
    }
    rt_ch_scenario(h, scenario);
    json_decref(scenario);
}

/* The environment of a run: the harness's, then the parent's minus the keys we set. */
static char **run_environment(const rt_ch *h)
{
    size_t n = 0;
    while (environ[n]) n++;
    char **env = calloc(n + h->nenv + 1, sizeof *env);
    assert_non_null(env);
    size_t k = 0;
    for (size_t i = 0; i < h->nenv; i++) env[k++] = h->env[i];
    for (size_t i = 0; i < n; i++) {
        const char *eq = strchr(environ[i], '=');
        bool ours = false;
        for (size_t j = 0; eq && j < h->nenv; j++)
            if (!strncmp(h->env[j], environ[i], (size_t)(eq - environ[i]) + 1)) ours = true;
        if (!ours) env[k++] = environ[i];
    }
    return env;
}

/* retrig-perf --once processes started together. */
typedef struct runs {
    size_t n;
    pid_t pids[4];
    bool done[4];
    int codes[4]; /* exit status (128 + signal) once done */
    char logs[4][256];
} runs;

/* Starts `n` retrig-perf --once at the same time, each logging to a file of its own. */
static void start_runs(rt_ch *h, size_t n, runs *r)
{
    char path[512];
    snprintf(path, sizeof path, "%s/retrig-perf", RT_TEST_BIN_DIR);
    char **env = run_environment(h);
    assert_true(n <= 4);
    memset(r, 0, sizeof *r);
    r->n = n;
    for (size_t i = 0; i < n; i++) {
        static int counter;
        snprintf(r->logs[i], sizeof r->logs[i], "%s/perf-%d-%d.log", h->dir, (int)getpid(),
                 counter++);
        pid_t parent = getpid();
        r->pids[i] = fork();
        if (r->pids[i] < 0) fail_msg("fork: %s", strerror(errno));
        if (r->pids[i] == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() != parent) _exit(127);
            int fd = open(r->logs[i], O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (fd >= 0) {
                dup2(fd, STDERR_FILENO);
                dup2(fd, STDOUT_FILENO);
                close(fd);
            }
            char *argv[] = {path, "--once", NULL};
            execve(path, argv, env);
            _exit(127);
        }
    }
    free(env);
}

/* Reaps the runs that have exited; true when all have. */
static bool runs_poll(runs *r)
{
    bool all = true;
    for (size_t i = 0; i < r->n; i++) {
        int status = 0;
        if (!r->done[i] && waitpid(r->pids[i], &status, WNOHANG) == r->pids[i]) {
            r->done[i] = true;
            r->codes[i] = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        }
        all = all && r->done[i];
    }
    return all;
}

/* Each run must exit with `want` within 40 s (killed after that). */
static void wait_runs(runs *r, int want)
{
    int64_t deadline = rt_test_now_ms() + 40000;
    while (!runs_poll(r) && rt_test_now_ms() < deadline) {
        struct timespec ts = {0, 20 * 1000000L};
        nanosleep(&ts, NULL);
    }
    for (size_t i = 0; i < r->n; i++) {
        bool killed = !r->done[i];
        if (killed) {
            int status = 0;
            kill(r->pids[i], SIGKILL);
            waitpid(r->pids[i], &status, 0);
            r->codes[i] = 128 + SIGKILL;
        }
        if (killed || r->codes[i] != want) {
            char *text = rt_test_read_file(r->logs[i], NULL);
            fail_msg("retrig-perf --once exited %d (want %d)%s:\n%s", r->codes[i], want,
                     killed ? " (killed)" : "", text);
        }
    }
}

/* Runs `n` retrig-perf --once at the same time; each must exit with `want` within 40 s. */
static void run_once(rt_ch *h, size_t n, int want)
{
    runs r;
    start_runs(h, n, &r);
    wait_runs(&r, want);
}

/* The hook triggers of the fake, per alert task (how many times each was backfilled). */
static int triggers_for(rt_ch *h, const char *task_id)
{
    json_t *triggers = rt_fake_triggers(&h->fake);
    assert_non_null(triggers);
    int n = 0;
    size_t i;
    json_t *t;
    json_array_foreach(triggers, i, t)
    {
        const char *id = json_string_value(
            json_object_get(json_object_get(json_object_get(t, "payload"), "user"), "taskId"));
        if (id && !strcmp(id, task_id)) n++;
    }
    json_decref(triggers);
    return n;
}

static size_t trigger_count(rt_ch *h)
{
    json_t *triggers = rt_fake_triggers(&h->fake);
    assert_non_null(triggers);
    size_t n = json_array_size(triggers);
    json_decref(triggers);
    return n;
}

static char *alert_field(rt_ch *h, long long alert_id, const char *column)
{
    char sql[256], id[32];
    snprintf(sql, sizeof sql, "SELECT %s::text FROM perf_alerts WHERE alert_id = $1::bigint",
             column);
    snprintf(id, sizeof id, "%lld", alert_id);
    const char *params[] = {id};
    return rt_ch_sql_text(h, sql, 1, params);
}

static void assert_alert(rt_ch *h, long long alert_id, const char *column, const char *want)
{
    char *v = alert_field(h, alert_id, column);
    if (!want && v) fail_msg("perf_alerts.%s of %lld is %s, expected NULL", column, alert_id, v);
    if (want && (!v || strcmp(v, want) != 0))
        fail_msg("perf_alerts.%s of %lld is %s, expected %s", column, alert_id, v ? v : "NULL",
                 want);
    free(v);
}

static long long summary_handled(rt_ch *h, long long summary_id)
{
    char id[32];
    snprintf(id, sizeof id, "%lld", summary_id);
    const char *params[] = {id};
    return rt_ch_sql_int(h,
                         "SELECT count(*) FROM perf_summaries WHERE summary_id = $1::bigint"
                         " AND handled_at IS NOT NULL",
                         1, params);
}

static long long ledger_sum(rt_ch *h, const char *family)
{
    const char *params[] = {family, rt_ch_today()};
    return rt_ch_sql_int(h,
                         "SELECT coalesce(sum(amount), 0) FROM budget_ledger WHERE platform = $1"
                         " AND day = $2::date",
                         2, params);
}

static long long rows(rt_ch *h, const char *table)
{
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", table);
    return rt_ch_sql_int(h, sql, 0, NULL);
}

/* Two summaries of regressions on three families. */
static void two_summaries(rt_ch *h, test_summary *a, test_summary *b)
{
    *a = (test_summary){.id = 900001,
                        .push_id = 1300001,
                        .age_minutes = 120,
                        .nalerts = 3,
                        .alerts = {{.id = 990011,
                                    .platform = "linux1804-64-shippable-qr",
                                    .amount_pct = 17.9,
                                    .regression = true},
                                   {.id = 990012,
                                    .platform = "windows10-64-shippable-qr",
                                    .amount_pct = 10,
                                    .regression = true},
                                   {.id = 990013,
                                    .platform = "macosx1015-64-shippable-qr",
                                    .amount_pct = 8,
                                    .regression = true}}};
    *b = (test_summary){
        .id = 900002,
        .push_id = 1300002,
        .age_minutes = 90,
        .nalerts = 2,
        .alerts = {
            {.id = 990021,
             .platform = "windows10-64-shippable-qr",
             .amount_pct = 12,
             .regression = true},
            {.id = 990022, .platform = "linux1804-64-qr", .amount_pct = 6, .regression = true}}};
    add_summary(h, a);
    add_summary(h, b);
}

static void test_once_backfills_picks_and_a_family_limit_passes_to_the_next_family(void **state)
{
    (void)state;
    rt_ch *h = new_harness();
    rt_ch_setenv(h, "PERF_BUDGET_LIMITS", "windows10=9, *=600"); /* one backfill of 9 jobs */
    test_summary a, b;
    two_summaries(h, &a, &b);
    run_once(h, 1, 0);
    /* windows10: the larger alert (b) took the family's budget; a's windows10 alert is
     * passed over, and its linux and osx alerts are taken. */
    assert_int_equal(trigger_count(h), 4);
    assert_int_equal(triggers_for(h, b.alerts[0].task_id), 1);
    assert_int_equal(triggers_for(h, a.alerts[0].task_id), 1);
    assert_int_equal(triggers_for(h, a.alerts[2].task_id), 1);
    assert_int_equal(triggers_for(h, b.alerts[1].task_id), 1);
    assert_int_equal(triggers_for(h, a.alerts[1].task_id), 0);
    assert_alert(h, 990021, "outcome", "triggered");
    assert_alert(h, 990021, "family", "windows10");
    assert_alert(h, 990021, "jobs_scheduled", "9");
    assert_alert(h, 990021, "task_id", b.alerts[0].task_id);
    assert_alert(h, 990021, "decision_task_id", DECISION);
    assert_alert(h, 990013, "family", "osx");
    assert_alert(h, 990012, "outcome", NULL);
    assert_int_equal(rows(h, "perf_alerts"), 4);
    assert_int_equal(ledger_sum(h, "perf:windows10"), 9);
    assert_int_equal(ledger_sum(h, "perf:linux"), 18);
    assert_int_equal(rt_ch_budget_counter(h, "perf:windows10"), 9);
    /* The payload is the backfill action for the alert's task with our depth and times. */
    json_t *triggers = rt_fake_triggers(&h->fake);
    json_t *user = json_object_get(json_object_get(json_array_get(triggers, 0), "payload"), "user");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(user, "input"), "depth")),
                     9);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(user, "input"), "times")),
                     1);
    assert_string_equal(json_string_value(json_object_get(user, "taskGroupId")), DECISION);
    json_decref(triggers);
    /* b gave everything it had; a keeps an alert a later budget can pay for. */
    assert_int_equal(summary_handled(h, 900002), 1);
    assert_int_equal(summary_handled(h, 900001), 0);

    /* A second run does nothing again, and the passed-over alert still finds no budget. */
    run_once(h, 1, 0);
    assert_int_equal(trigger_count(h), 4);
    assert_int_equal(rows(h, "perf_alerts"), 4);
    assert_int_equal(ledger_sum(h, "perf:windows10"), 9);

    /* With Redis flushed the ledger still holds the day's spend: nothing twice. */
    rt_ch_flush_redis(h);
    run_once(h, 1, 0);
    assert_int_equal(trigger_count(h), 4);
    assert_int_equal(ledger_sum(h, "perf:windows10"), 9);
    rt_ch_free(h);
}

/* Two alerts of one summary from the same job (two subtests of the suite on one machine) are
 * one backfill: the second is recorded covered by the first, costs nothing, and is not
 * counted against perf_max_per_summary (issue 17, item 7). */
static void test_alerts_of_one_job_are_one_backfill(void **state)
{
    (void)state;
    rt_ch *h = new_harness();
    rt_ch_setenv(h, "PERF_MAX_PER_SUMMARY", "1");
    test_summary a = {.id = 900041,
                      .push_id = 1300041,
                      .age_minutes = 120,
                      .nalerts = 3,
                      .alerts = {{.id = 990041,
                                  .platform = "linux1804-64-shippable-qr",
                                  .amount_pct = 17.9,
                                  .regression = true},
                                 {.id = 990042,
                                  .platform = "linux1804-64-shippable-qr",
                                  .amount_pct = 8,
                                  .regression = true},
                                 {.id = 990043,
                                  .platform = "macosx1015-64-shippable-qr",
                                  .amount_pct = 6,
                                  .regression = true}}};
    add_summary(h, &a);
    run_once(h, 1, 0);
    /* One job per summary: the linux job (linux before osx); its sibling is covered; the
     * osx alert waits. */
    assert_int_equal(trigger_count(h), 1);
    assert_alert(h, 990041, "outcome", "triggered");
    assert_alert(h, 990042, "outcome", "covered");
    assert_alert(h, 990042, "covered_by", "990041");
    assert_alert(h, 990042, "jobs_scheduled", "0");
    assert_alert(h, 990043, "outcome", NULL);
    assert_int_equal(ledger_sum(h, "perf:linux"), 9);
    assert_int_equal(summary_handled(h, 900041), 1);
    /* Again: nothing twice. */
    run_once(h, 1, 0);
    assert_int_equal(trigger_count(h), 1);
    assert_int_equal(rows(h, "perf_alerts"), 2);

    /* With room for two jobs, the osx alert is the second job: the covered sibling
     * took no place. */
    test_summary b = a;
    b.id = 900042;
    b.push_id = 1300042;
    for (size_t i = 0; i < 3; i++) b.alerts[i].id += 10;
    add_summary(h, &b);
    rt_ch_setenv(h, "PERF_MAX_PER_SUMMARY", "2");
    run_once(h, 1, 0);
    assert_int_equal(trigger_count(h), 3);
    assert_alert(h, 990052, "outcome", "covered");
    assert_alert(h, 990053, "outcome", "triggered");
    assert_int_equal(summary_handled(h, 900042), 1);
    rt_ch_free(h);
}

/* The budget backstop. Redis lost a claim (it restarted and re-created the family's
 * counter below the ledger) while another runner's transaction, still open, writes the
 * family's last 9 jobs of the day and holds the backstop lock. retrig-perf picks the alert
 * (the ledger it reads at the start leaves room for one backfill), Redis grants the claim
 * from its low counter, and only the ledger, read under the lock once the other runner has
 * committed, says the family is out of budget: nothing is written or sent, the claim goes
 * back to Redis (the counter raised to the ledger) and the alert waits for a later run. */
static void test_the_ledger_backstop_refuses_a_claim_redis_granted_past_the_limit(void **state)
{
    (void)state;
    rt_ch *h = new_harness();
    rt_ch_setenv(h, "PERF_BUDGET_LIMITS", "windows10=18, *=600"); /* two backfills of 9 */
    test_summary s = {.id = 900011,
                      .push_id = 1300011,
                      .age_minutes = 120,
                      .nalerts = 1,
                      .alerts = {{.id = 990111,
                                  .platform = "windows10-64-shippable-qr",
                                  .amount_pct = 10,
                                  .regression = true}}};
    add_summary(h, &s);
    const char *family = "perf:windows10";
    const char *insert =
        "INSERT INTO budget_ledger (platform, day, amount, idempotency_key, reason)"
        " VALUES ($1, $2::date, 9, $3, 'test') RETURNING amount";
    const char *committed[] = {family, rt_ch_today(), "perf-alert:1"};
    assert_int_equal(rt_ch_sql_int(h, insert, 3, committed), 9);
    char key[512];
    snprintf(key, sizeof key, "%sbudget:%s:%s", h->redis_prefix, family, rt_ch_today());
    const char *set[] = {"SET", key, "0"};
    assert_int_equal(rt_redis_command_argv(h->redis, 3, set, NULL, NULL), RT_OK);

    /* The other runner: the lock as every ledger-writing transaction takes it, then its row. */
    rt_pg *other = NULL;
    char errstr[RT_ERRSTR_SIZE] = "", lock[128];
    assert_int_equal(rt_pg_connect(&other, h->database_url, "test-perf", errstr), RT_OK);
    assert_int_equal(rt_pg_begin(other), RT_OK);
    snprintf(lock, sizeof lock, "SELECT pg_advisory_xact_lock(%d, hashtext($1 || '/' || $2))",
             RT_LEDGER_LOCK_CLASS);
    const char *lparams[] = {family, rt_ch_today()};
    assert_int_equal(rt_pg_exec(other, lock, 2, lparams, NULL), RT_OK);
    const char *in_flight[] = {family, rt_ch_today(), "perf-alert:2"};
    assert_int_equal(rt_pg_exec(other, insert, 3, in_flight, NULL), RT_OK);

    runs r;
    start_runs(h, 1, &r);
    /* retrig-perf reaches the lock (or, were there no backstop, finishes without it). */
    const char *waiting =
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
        " AND classid = $1::integer AND database = (SELECT oid FROM pg_database"
        " WHERE datname = current_database())";
    char lock_class[16];
    snprintf(lock_class, sizeof lock_class, "%d", RT_LEDGER_LOCK_CLASS);
    const char *wparams[] = {lock_class};
    int64_t deadline = rt_test_now_ms() + 30000;
    while (!runs_poll(&r) && rt_ch_sql_int(h, waiting, 1, wparams) == 0 &&
           rt_test_now_ms() < deadline) {
        struct timespec ts = {0, 20 * 1000000L};
        nanosleep(&ts, NULL);
    }
    assert_int_equal(rt_pg_commit(other), RT_OK);
    rt_pg_free(other);
    wait_runs(&r, 0);

    assert_int_equal(ledger_sum(h, family), 18);
    assert_int_equal(trigger_count(h), 0);
    assert_int_equal(rows(h, "perf_alerts"), 0);
    assert_int_equal(summary_handled(h, 900011), 0);
    assert_int_equal(rt_ch_budget_counter(h, family), 18);
    snprintf(key, sizeof key, "%sperf-alert:990111", h->redis_prefix);
    const char *exists[] = {"EXISTS", key};
    redisReply *reply = NULL;
    assert_int_equal(rt_redis_command_argv(h->redis, 2, exists, NULL, &reply), RT_OK);
    assert_int_equal(reply->integer, 0);
    freeReplyObject(reply);
    char *log = rt_test_read_file(r.logs[0], NULL);
    assert_non_null(log);
    assert_non_null(strstr(log, "budget backstop: the ledger leaves less than Redis granted"));
    free(log);

    /* The next run finds the family out of budget in Redis and the ledger alike. */
    run_once(h, 1, 0);
    assert_int_equal(trigger_count(h), 0);
    assert_int_equal(ledger_sum(h, family), 18);
    assert_int_equal(rows(h, "perf_alerts"), 0);
    rt_ch_free(h);
}

static void test_two_runners_at_once_backfill_every_alert_exactly_once(void **state)
{
    (void)state;
    rt_ch *h = new_harness();
    test_summary a, b;
    two_summaries(h, &a, &b);
    /* Slow hooks keep both runners busy at the same time. */
    assert_int_equal(
        rt_fake_add_fault(&h->fake,
                          "{\"kind\": \"latency\", \"ms\": 300, \"path_prefix\": \"/api/hooks/\"}"),
        200);
    run_once(h, 2, 0);
    assert_int_equal(trigger_count(h), 5);
    for (size_t i = 0; i < a.nalerts; i++)
        assert_int_equal(triggers_for(h, a.alerts[i].task_id), 1);
    for (size_t i = 0; i < b.nalerts; i++)
        assert_int_equal(triggers_for(h, b.alerts[i].task_id), 1);
    assert_int_equal(rows(h, "perf_alerts"), 5);
    assert_int_equal(rt_ch_sql_int(h, "SELECT count(*) FROM budget_ledger", 0, NULL), 5);
    assert_int_equal(ledger_sum(h, "perf:windows10"), 18);
    assert_int_equal(rt_ch_budget_counter(h, "perf:windows10"), 18);
    assert_int_equal(summary_handled(h, 900001), 1);
    assert_int_equal(summary_handled(h, 900002), 1);
    /* And two more at once find nothing left. */
    run_once(h, 2, 0);
    assert_int_equal(trigger_count(h), 5);
    rt_ch_free(h);
}

static void test_an_existing_backfill_of_the_job_is_recorded_already_backfilled(void **state)
{
    (void)state;
    rt_ch *h = new_harness();
    test_summary s = {.id = 900003,
                      .push_id = 1300003,
                      .age_minutes = 120,
                      .nalerts = 2,
                      .alerts = {{.id = 990031,
                                  .platform = "linux1804-64-shippable-qr",
                                  .amount_pct = 17.9,
                                  .regression = true},
                                 {.id = 990032,
                                  .platform = "windows7-32-shippable-qr",
                                  .amount_pct = 9,
                                  .regression = true}}};
    add_summary(h, &s);
    /* A sheriff backfilled the linux job by hand: a backfill action task in the push's
     * group for that task, as gecko's action tasks look. */
    char by_hand[23];
    rt_ch_slugid(by_hand);
    json_t *scenario =
        json_pack("{s:{s:{s:s, s:s, s:{s:s, s:s}, s:{s:{s:s, s:s, s:{s:i}}}}}}", "tasks", by_hand,
                  "taskGroupId", DECISION, "schedulerId", "gecko-level-3", "tags", "kind",
                  "action-callback", "action", "backfill", "extra", "action", "name", "backfill",
                  "taskId", s.alerts[0].task_id, "input", "depth", 5);
    rt_ch_scenario(h, scenario);
    json_decref(scenario);
    run_once(h, 1, 0);
    assert_int_equal(triggers_for(h, s.alerts[0].task_id), 0);
    assert_int_equal(triggers_for(h, s.alerts[1].task_id), 1);
    assert_alert(h, 990031, "outcome", "already-backfilled");
    assert_alert(h, 990031, "action_task_id", by_hand);
    assert_alert(h, 990031, "jobs_scheduled", "0");
    assert_int_equal(ledger_sum(h, "perf:linux"), 0);
    assert_int_equal(ledger_sum(h, "perf:windows7"), 9);
    assert_int_equal(summary_handled(h, 900003), 1);
    rt_ch_free(h);
}

static void test_dry_run_records_the_payload_and_sends_nothing(void **state)
{
    (void)state;
    rt_ch *h = new_harness();
    rt_ch_setenv(h, "DRY_RUN", "true");
    test_summary a, b;
    two_summaries(h, &a, &b);
    run_once(h, 1, 0);
    json_t *calls = rt_fake_calls(&h->fake, HOOKS);
    assert_int_equal(json_array_size(calls), 0);
    json_decref(calls);
    assert_int_equal(rt_ch_sql_int(h,
                                   "SELECT count(*) FROM perf_alerts WHERE outcome = 'dry-run'"
                                   " AND payload IS NOT NULL AND dry_run",
                                   0, NULL),
                     5);
    char *taken = alert_field(h, 990011, "(payload #>> '{user,taskId}')");
    assert_non_null(taken);
    assert_string_equal(taken, a.alerts[0].task_id);
    free(taken);
    /* A dry run is finished: the next run neither resumes nor repeats it. */
    run_once(h, 1, 0);
    assert_int_equal(rows(h, "perf_alerts"), 5);
    rt_ch_free(h);
}

/* The push's actions.json names a backfill hook of another group: retrig-perf records
 * refused-hook with the reason, spends no budget and sends nothing, while an alert whose
 * task is of another level (schedulerId) is refused as well. */
static void test_a_backfill_hook_retrig_may_not_call_is_refused(void **state)
{
    (void)state;
    rt_ch *h = new_harness();
    json_t *artifact = rt_ch_actions_artifact(DECISION, TASK_REVISION);
    json_object_set_new(json_object_get(artifact, "replace"), "in-tree-action-3-generic/9353e8f146",
                        json_string("in-tree-action-3-release-promotion/abc"));
    json_t *scenario = json_pack("{s:{s:{s:[o]}}, s:[{s:s, s:s}]}", "artifacts", DECISION, "0",
                                 artifact, "hooks", "hookGroupId", "project-gecko", "hookId",
                                 "in-tree-action-3-release-promotion/abc");
    rt_ch_scenario(h, scenario);
    json_decref(scenario);
    test_summary a, b;
    two_summaries(h, &a, &b);
    run_once(h, 1, 0);
    json_t *calls = rt_fake_calls(&h->fake, HOOKS);
    assert_int_equal(json_array_size(calls), 0);
    json_decref(calls);
    assert_int_equal(rt_ch_sql_int(h,
                                   "SELECT count(*) FROM perf_alerts WHERE outcome ="
                                   " 'refused-hook' AND error LIKE '%release-promotion%'",
                                   0, NULL),
                     rows(h, "perf_alerts"));
    assert_true(rows(h, "perf_alerts") > 0);
    assert_int_equal(rt_ch_sql_int(h, "SELECT count(*) FROM budget_ledger", 0, NULL), 0);
    rt_ch_free(h);
}

/* The push's actions.json keeps the backfill hook, group and push but runs cancel-all under
 * the backfill action's name (issue 30): the signed call would cancel the push's tasks with
 * a budget charged for a backfill. retrig-perf refuses every alert before signing
 * (refused-hook, the reason naming the callback), claims no budget and sends nothing. */
static void test_a_backfill_that_runs_another_callback_is_refused(void **state)
{
    (void)state;
    rt_ch *h = new_harness();
    json_t *artifact = rt_ch_actions_artifact(DECISION, TASK_REVISION);
    json_object_set_new(json_object_get(artifact, "replace"), "\"cb_name\": \"backfill\"",
                        json_string("\"cb_name\": \"cancel-all\""));
    json_t *scenario = json_pack("{s:{s:{s:[o]}}}", "artifacts", DECISION, "0", artifact);
    rt_ch_scenario(h, scenario);
    json_decref(scenario);
    test_summary a, b;
    two_summaries(h, &a, &b);
    run_once(h, 1, 0);
    json_t *calls = rt_fake_calls(&h->fake, HOOKS);
    assert_int_equal(json_array_size(calls), 0);
    json_decref(calls);
    assert_true(rows(h, "perf_alerts") > 0);
    assert_int_equal(rt_ch_sql_int(h,
                                   "SELECT count(*) FROM perf_alerts WHERE outcome ="
                                   " 'refused-hook' AND action_task_id IS NULL AND error LIKE"
                                   " '%decision.action.cb_name is cancel-all%'",
                                   0, NULL),
                     rows(h, "perf_alerts"));
    assert_int_equal(rt_ch_sql_int(h, "SELECT count(*) FROM budget_ledger", 0, NULL), 0);
    assert_int_equal(rt_ch_budget_counter(h, "perf:windows10"), -1); /* never claimed */
    assert_int_equal(rt_ch_budget_counter(h, "perf:linux"), -1);
    rt_ch_free(h);
}

static void test_a_young_summary_is_picked_only_once_an_hour_has_passed(void **state)
{
    (void)state;
    rt_ch *h = new_harness();
    test_summary s = {.id = 900004,
                      .push_id = 1300004,
                      .age_minutes = 10,
                      .nalerts = 1,
                      .alerts = {{.id = 990041,
                                  .platform = "linux1804-64-shippable-qr",
                                  .amount_pct = 17.9,
                                  .regression = true}}};
    add_summary(h, &s);
    run_once(h, 1, 0);
    assert_int_equal(trigger_count(h), 0);
    assert_int_equal(rows(h, "perf_summaries"), 0);
    /* Fifty minutes on, Perfherder shows the same summary, now 60 minutes old. */
    s.age_minutes = 61;
    json_t *scenario = json_pack("{s:[o]}", "alert_summaries", summary_json(&s));
    rt_ch_scenario(h, scenario);
    json_decref(scenario);
    run_once(h, 1, 0);
    assert_int_equal(triggers_for(h, s.alerts[0].task_id), 1);
    rt_ch_free(h);
}

static void test_perfherder_5xx_is_retried(void **state)
{
    (void)state;
    rt_ch *h = new_harness();
    rt_ch_setenv(h, "HTTP_MAX_ATTEMPTS", "3");
    rt_ch_setenv(h, "HTTP_BACKOFF_BASE_MS", "20");
    test_summary a, b;
    two_summaries(h, &a, &b);
    assert_int_equal(
        rt_fake_add_fault(&h->fake,
                          "[{\"kind\": \"status\", \"status\": 503, \"times\": 2,"
                          " \"path_prefix\": \"/api/performance/alertsummary/\"},"
                          " {\"kind\": \"status\", \"status\": 502, \"times\": 1,"
                          " \"path_prefix\": \"/api/project/autoland/performance/data/\"}]"),
        200);
    run_once(h, 1, 0);
    assert_int_equal(trigger_count(h), 5);
    json_t *calls = rt_fake_calls(&h->fake, "/api/performance/alertsummary/");
    assert_true(json_array_size(calls) >= 3);
    json_decref(calls);
    rt_ch_free(h);
}

static void test_a_perfherder_error_or_a_truncated_page_marks_nothing_handled(void **state)
{
    (void)state;
    rt_ch *h = new_harness();
    test_summary a, b;
    two_summaries(h, &a, &b);
    assert_int_equal(rt_fake_add_fault(&h->fake,
                                       "{\"kind\": \"status\", \"status\": 500, \"times\": 1,"
                                       " \"path_prefix\": \"/api/performance/alertsummary/\"}"),
                     200);
    run_once(h, 1, 1);
    assert_int_equal(rt_fake_add_fault(&h->fake,
                                       "{\"kind\": \"drop_mid_body\", \"times\": 1,"
                                       " \"path_prefix\": \"/api/performance/alertsummary/\"}"),
                     200);
    run_once(h, 1, 1);
    assert_int_equal(trigger_count(h), 0);
    assert_int_equal(rows(h, "perf_alerts"), 0);
    assert_int_equal(rows(h, "perf_summaries"), 0);
    assert_int_equal(rows(h, "budget_ledger"), 0);
    /* Once Perfherder answers, the same run does everything. */
    run_once(h, 1, 0);
    assert_int_equal(trigger_count(h), 5);
    rt_ch_free(h);
}

/* ---- follow-up of the backfills (migration 0007) ------------------------------------ */

/* One regression, backfilled by a first run; returns its action task id (malloc'd). */
static char *backfilled_alert(rt_ch *h, test_summary *s, long long id)
{
    *s = (test_summary){.id = id,
                        .push_id = id + 400000,
                        .age_minutes = 120,
                        .nalerts = 1,
                        .alerts = {{.id = id + 90000,
                                    .platform = "linux1804-64-shippable-qr",
                                    .amount_pct = 12,
                                    .regression = true}}};
    add_summary(h, s);
    run_once(h, 1, 0);
    assert_alert(h, s->alerts[0].id, "outcome", "triggered");
    char *action = alert_field(h, s->alerts[0].id, "action_task_id");
    assert_non_null(action);
    return action;
}

static void set_status(rt_ch *h, const char *task_id, const char *state, const char *reason)
{
    json_t *run = json_pack("{s:i, s:s}", "runId", 0, "state", state);
    if (reason) json_object_set_new(run, "reasonResolved", json_string(reason));
    json_t *scenario =
        json_pack("{s:{s:{s:s, s:[o]}}}", "statuses", task_id, "state", state, "runs", run);
    rt_ch_scenario(h, scenario);
    json_decref(scenario);
}

/* A job the action task spawned, as gecko makes them: in the push's task group, with
 * extra.parent naming the action task; its Treeherder job, and, when `data`, a data point
 * of the alert's series from that job. */
static const char *spawn_job_in(rt_ch *h, const char *group, const char *action,
                                const test_alert *alert, long long job_id, const char *state,
                                const char *reason, bool data)
{
    static char task_id[23];
    rt_ch_slugid(task_id);
    json_t *scenario =
        json_pack("{s:{s:{s:s, s:{s:s, s:{s:s}}}}, s:{s:[{s:I, s:i}]}}", "tasks", task_id,
                  "fixture", TASK_FIX, "override", "taskGroupId", group, "extra", "parent", action,
                  "jobs", task_id, "id", (json_int_t)job_id, "retry_id", 0);
    if (data) {
        char hash[41];
        snprintf(hash, sizeof hash, "%040lld", alert->id);
        json_object_set_new(
            scenario, "performance_data",
            json_pack("[{s:s, s:I, s:s, s:[{s:I, s:I, s:I, s:f, s:s}]}]", "project", "autoland",
                      "signature_id", (json_int_t)(alert->id * 10), "signature_hash", hash, "data",
                      "id", (json_int_t)(job_id + 5000000), "job_id", (json_int_t)job_id, "push_id",
                      (json_int_t)1200000, "value", 123.4, "revision", "0123456789abcdef"));
    }
    rt_ch_scenario(h, scenario);
    json_decref(scenario);
    set_status(h, task_id, state, reason);
    return task_id;
}

static const char *spawn_job(rt_ch *h, const char *action, const test_alert *alert,
                             long long job_id, const char *state, const char *reason, bool data)
{
    return spawn_job_in(h, DECISION, action, alert, job_id, state, reason, data);
}

/* The public/label-to-taskid.json an action task wrote (run 0); `map` is stolen. */
static void label_to_taskid(rt_ch *h, const char *task_id, json_t *map)
{
    json_t *scenario = json_pack("{s:{s:{s:[{s:s, s:o}]}}}", "artifacts", task_id, "0", "name",
                                 "public/label-to-taskid.json", "json", map);
    rt_ch_scenario(h, scenario);
    json_decref(scenario);
}

/* A backfill-task action task on an earlier push, as gecko's backfill action triggers one
 * through the hooks: in that push's decision task group (a new slugid in group_out). */
static void push_action(rt_ch *h, char task_id[23], char group_out[23], const char *state)
{
    rt_ch_slugid(task_id);
    rt_ch_slugid(group_out);
    json_t *scenario = json_pack(
        "{s:{s:{s:s, s:{s:s}, s:{s:s, s:{s:s, s:{s:s, s:n, s:{s:s, s:i}}}}, s:{s:s}}}}", "tasks",
        task_id, "taskGroupId", group_out, "tags", "kind", "action-callback", "extra", "parent",
        group_out, "action", "name", "backfill-task", "context", "taskGroupId", group_out, "taskId",
        "input", "label", "test-linux1804-64-shippable-qr/opt-talos", "times", 1, "metadata",
        "name", "Action: Backfill task on a push.");
    rt_ch_scenario(h, scenario);
    json_decref(scenario);
    set_status(h, task_id, state, state);
}

static void assert_followup(rt_ch *h, long long alert_id, const char *state, const char *reason)
{
    assert_alert(h, alert_id, "followup_state", state);
    assert_alert(h, alert_id, "followup_reason", reason);
}

static void test_followup_waits_for_the_jobs_then_records_a_backfill_done(void **state)
{
    (void)state;
    rt_ch *h = new_harness();
    test_summary s;
    char *action = backfilled_alert(h, &s, 900101);
    /* The first run triggered; the action task is still pending in the fake. */
    run_once(h, 1, 0);
    assert_followup(h, s.alerts[0].id, "pending", NULL);
    set_status(h, action, "completed", "completed");
    spawn_job(h, action, &s.alerts[0], 810001, "completed", "completed", true);
    char running[23];
    memcpy(running, spawn_job(h, action, &s.alerts[0], 810002, "running", NULL, false), 23);
    run_once(h, 1, 0);
    assert_followup(h, s.alerts[0].id, "pending", NULL);
    assert_alert(h, s.alerts[0].id, "followup_jobs", "2");
    assert_alert(h, s.alerts[0].id, "followup_completed", "1");
    spawn_job(h, action, &s.alerts[0], 810003, "completed", "completed", false);
    /* A task of the same group that the action did not create is not counted. */
    char other[23];
    rt_ch_slugid(other);
    json_t *scenario = json_pack("{s:{s:{s:s, s:{s:s}}}}", "tasks", other, "fixture", TASK_FIX,
                                 "override", "taskGroupId", DECISION);
    rt_ch_scenario(h, scenario);
    json_decref(scenario);
    set_status(h, other, "failed", "failed");
    run_once(h, 1, 0);
    assert_followup(h, s.alerts[0].id, "pending", NULL); /* 810002 still running */
    json_t *calls = rt_fake_calls(&h->fake, "/api/queue/v1/task-group/");
    assert_true(json_array_size(calls) >= 2);
    json_decref(calls);
    /* The running job completes: every job completed, one with data. */
    set_status(h, running, "completed", "completed");
    run_once(h, 1, 0);
    assert_followup(h, s.alerts[0].id, "done", NULL);
    assert_alert(h, s.alerts[0].id, "followup_jobs", "3");
    assert_alert(h, s.alerts[0].id, "followup_completed", "3");
    assert_int_equal(rt_ch_sql_int(h,
                                   "SELECT count(*) FROM perf_alerts WHERE followup_settled_at"
                                   " IS NOT NULL",
                                   0, NULL),
                     1);
    free(action);
    rt_ch_free(h);
}

static void test_followup_records_a_failed_action_task(void **state)
{
    (void)state;
    rt_ch *h = new_harness();
    test_summary s;
    char *action = backfilled_alert(h, &s, 900102);
    set_status(h, action, "failed", "failed");
    run_once(h, 1, 0);
    assert_followup(h, s.alerts[0].id, "failed", "action-failed");
    char *detail = alert_field(h, s.alerts[0].id, "followup_detail");
    assert_non_null(strstr(detail, action));
    free(detail);
    /* Settled: a later run does not look again. */
    assert_int_equal(rt_fake_reset(&h->fake), 200);
    run_once(h, 1, 0);
    char path[96];
    snprintf(path, sizeof path, "/api/queue/v1/task/%s/status", action);
    json_t *calls = rt_fake_calls(&h->fake, path);
    assert_int_equal(json_array_size(calls), 0);
    json_decref(calls);
    free(action);
    rt_ch_free(h);
}

static void test_followup_records_failed_jobs(void **state)
{
    (void)state;
    rt_ch *h = new_harness();
    test_summary s;
    char *action = backfilled_alert(h, &s, 900103);
    set_status(h, action, "completed", "completed");
    spawn_job(h, action, &s.alerts[0], 820001, "completed", "completed", true);
    spawn_job(h, action, &s.alerts[0], 820002, "failed", "failed", false);
    run_once(h, 1, 0);
    assert_followup(h, s.alerts[0].id, "failed", "jobs-failed");
    assert_alert(h, s.alerts[0].id, "followup_jobs", "2");
    assert_alert(h, s.alerts[0].id, "followup_completed", "1");
    free(action);
    rt_ch_free(h);
}

static void test_followup_records_jobs_ending_in_an_exception(void **state)
{
    (void)state;
    rt_ch *h = new_harness();
    test_summary s;
    char *action = backfilled_alert(h, &s, 900104);
    set_status(h, action, "completed", "completed");
    spawn_job(h, action, &s.alerts[0], 830001, "exception", "worker-shutdown", false);
    run_once(h, 1, 0);
    assert_followup(h, s.alerts[0].id, "failed", "jobs-exception");
    free(action);
    rt_ch_free(h);
}

static void
test_followup_records_deadline_exceeded_past_the_window_or_from_taskcluster(void **state)
{
    (void)state;
    rt_ch *h = new_harness();
    test_summary s, t;
    char *action = backfilled_alert(h, &s, 900105);
    /* Still pending, within the window: pending. */
    run_once(h, 1, 0);
    assert_followup(h, s.alerts[0].id, "pending", NULL);
    /* The window (perf_followup_window_hours, 48 by default) has passed. */
    char id[32];
    snprintf(id, sizeof id, "%lld", s.alerts[0].id);
    const char *params[] = {id};
    assert_int_equal(rt_ch_sql_int(h,
                                   "UPDATE perf_alerts SET finished_at = now() - interval '49 "
                                   "hours' WHERE alert_id = $1::bigint RETURNING 1",
                                   1, params),
                     1);
    run_once(h, 1, 0);
    assert_followup(h, s.alerts[0].id, "failed", "deadline-exceeded");
    /* A spawned job Taskcluster resolved deadline-exceeded, within the window. */
    char *action2 = backfilled_alert(h, &t, 900106);
    set_status(h, action2, "completed", "completed");
    spawn_job(h, action2, &t.alerts[0], 840001, "exception", "deadline-exceeded", false);
    run_once(h, 1, 0);
    assert_followup(h, t.alerts[0].id, "failed", "deadline-exceeded");
    free(action);
    free(action2);
    rt_ch_free(h);
}

static void test_followup_records_no_data_when_jobs_complete_without_a_data_point(void **state)
{
    (void)state;
    rt_ch *h = new_harness();
    test_summary s, t;
    char *action = backfilled_alert(h, &s, 900107);
    set_status(h, action, "completed", "completed");
    spawn_job(h, action, &s.alerts[0], 850001, "completed", "completed", false);
    run_once(h, 1, 0);
    assert_followup(h, s.alerts[0].id, "failed", "no-data");
    assert_alert(h, s.alerts[0].id, "followup_completed", "1");
    /* An action task that spawned nothing at all produced no data either. */
    char *action2 = backfilled_alert(h, &t, 900108);
    set_status(h, action2, "completed", "completed");
    run_once(h, 1, 0);
    assert_followup(h, t.alerts[0].id, "failed", "no-data");
    assert_alert(h, t.alerts[0].id, "followup_jobs", "0");
    free(action);
    free(action2);
    rt_ch_free(h);
}

/* gecko's backfill action triggers a backfill-task action per earlier push, in that push's
 * decision task group, and each creates the job there: the follow-up reaches them through
 * the label-to-taskid artifacts, counts only the tasks an action created (not a reused
 * build), and an artifact it cannot fetch leaves the alert pending. */
static void test_followup_finds_the_jobs_on_earlier_pushes_through_the_artifacts(void **state)
{
    (void)state;
    rt_ch *h = new_harness();
    test_summary s, t, u;
    /* Done: two earlier pushes, one job each, one with a data point. */
    char *action = backfilled_alert(h, &s, 900109);
    set_status(h, action, "completed", "completed");
    char n1[23], g1[23], n2[23], g2[23], build[23], j1[23], j2[23];
    push_action(h, n1, g1, "completed");
    push_action(h, n2, g2, "completed");
    label_to_taskid(h, action, json_pack("{s:s, s:s}", "a", n1, "b", n2));
    memcpy(j1, spawn_job_in(h, g1, n1, &s.alerts[0], 860001, "completed", "completed", true), 23);
    memcpy(j2, spawn_job_in(h, g2, n2, &s.alerts[0], 860002, "running", NULL, false), 23);
    /* The build the job depends on, reused from the push's decision: listed, not counted. */
    memcpy(build, spawn_job_in(h, g1, g1, &s.alerts[0], 860003, "failed", "failed", false), 23);
    label_to_taskid(h, n1,
                    json_pack("{s:s, s:s}", "test-linux1804-64-shippable-qr/opt-talos", j1,
                              "build-linux64-shippable/opt", build));
    label_to_taskid(h, n2, json_pack("{s:s}", "test-linux1804-64-shippable-qr/opt-talos", j2));
    run_once(h, 1, 0);
    assert_followup(h, s.alerts[0].id, "pending", NULL);
    assert_alert(h, s.alerts[0].id, "followup_jobs", "2");
    assert_alert(h, s.alerts[0].id, "followup_completed", "1");
    set_status(h, j2, "completed", "completed");
    run_once(h, 1, 0);
    assert_followup(h, s.alerts[0].id, "done", NULL);
    assert_alert(h, s.alerts[0].id, "followup_jobs", "2");
    assert_alert(h, s.alerts[0].id, "followup_completed", "2");

    /* Failed: the job on the earlier push failed; the detail names it. */
    char *action2 = backfilled_alert(h, &t, 900110);
    set_status(h, action2, "completed", "completed");
    char n3[23], g3[23], j3[23];
    push_action(h, n3, g3, "completed");
    label_to_taskid(h, action2, json_pack("{s:s}", "a", n3));
    memcpy(j3, spawn_job_in(h, g3, n3, &t.alerts[0], 860004, "failed", "failed", false), 23);
    label_to_taskid(h, n3, json_pack("{s:s}", "test-linux1804-64-shippable-qr/opt-talos", j3));
    run_once(h, 1, 0);
    assert_followup(h, t.alerts[0].id, "failed", "jobs-failed");
    char *detail = alert_field(h, t.alerts[0].id, "followup_detail");
    assert_non_null(detail);
    assert_non_null(strstr(detail, j3));
    free(detail);

    /* The artifact of the earlier push's action answers 503: left unsettled, then done. */
    char *action3 = backfilled_alert(h, &u, 900111);
    set_status(h, action3, "completed", "completed");
    char n4[23], g4[23], j4[23];
    push_action(h, n4, g4, "completed");
    label_to_taskid(h, action3, json_pack("{s:s}", "a", n4));
    memcpy(j4, spawn_job_in(h, g4, n4, &u.alerts[0], 860005, "completed", "completed", true), 23);
    label_to_taskid(h, n4, json_pack("{s:s}", "test-linux1804-64-shippable-qr/opt-talos", j4));
    char fault[256];
    snprintf(fault, sizeof fault,
             "{\"kind\": \"status\", \"status\": 503, \"path_prefix\": "
             "\"/api/queue/v1/task/%s/runs/0/artifacts/\"}",
             n4);
    assert_int_equal(rt_fake_add_fault(&h->fake, fault), 200);
    run_once(h, 1, 0);
    assert_followup(h, u.alerts[0].id, NULL, NULL); /* unsettled: looked at again next run */
    char path[96];
    snprintf(path, sizeof path, "/api/queue/v1/task/%s/runs/0/artifacts/", n4);
    json_t *calls = rt_fake_calls(&h->fake, path);
    assert_true(json_array_size(calls) >= 1);
    json_decref(calls);
    assert_int_equal(rt_fake_reset(&h->fake), 200); /* the fault is gone */
    run_once(h, 1, 0);
    assert_followup(h, u.alerts[0].id, "done", NULL);
    assert_alert(h, u.alerts[0].id, "followup_jobs", "1");
    free(action);
    free(action2);
    free(action3);
    rt_ch_free(h);
}

/* ---- a real gecko backfill, reached through the index ------------------------------- */

#define ALERT_LABEL "test-macosx1014-64-shippable/opt-raptor-tp6-7-firefox-e10s"
#define ALERT_REV   TASK_REVISION /* the push of actions.json (moved to TASK_FIX's) */
#define ALERT_PUSH  109591        /* its pushlog id */

static void iso_now_ms(char out[40])
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char secs[32];
    strftime(secs, sizeof secs, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, 40, "%.20s.%03dZ", secs, (int)(ts.tv_nsec / 1000000) % 1000);
}

/* A backfill-task action task as gecko's backfill action triggers one on an earlier push:
 * in that push's decision task group, extra.parent = that decision task, the label and
 * the alert push's revision in extra.action.context.input, indexed (once completed) under
 * gecko.v2.autoland.pushlog-id.<push>.actions.<taskId> only. */
static void gecko_backfill_task(rt_ch *h, char task_id[23], char group_out[23], long push,
                                const char *label, const char *created, const char *state)
{
    rt_ch_slugid(task_id);
    rt_ch_slugid(group_out);
    char route[160], now[40];
    snprintf(route, sizeof route, "index.gecko.v2.autoland.pushlog-id.%ld.actions.%s", push,
             task_id);
    if (!created) {
        iso_now_ms(now);
        created = now;
    }
    json_t *scenario = json_pack(
        "{s:{s:{s:s, s:s, s:[s], s:{s:s, s:s}, s:{s:s, s:{s:s, s:{s:s, s:n, s:{s:s, s:s, s:i, "
        "s:s, s:b}}}}, s:{s:s}}}}",
        "tasks", task_id, "taskGroupId", group_out, "created", created, "routes", route, "tags",
        "kind", "action-callback", "action", "backfill-task", "extra", "parent", group_out,
        "action", "name", "backfill-task", "context", "taskGroupId", group_out, "taskId", "input",
        "label", label, "revision", ALERT_REV, "times", 1, "symbol", "tp6-7", "retrigger", 1,
        "metadata", "name", "Action: Backfill task on a push.");
    rt_ch_scenario(h, scenario);
    json_decref(scenario);
    set_status(h, task_id, state, state);
}

static size_t index_calls(rt_ch *h, long push)
{
    char path[128];
    snprintf(path, sizeof path, "/api/index/v1/tasks/gecko.v2.autoland.pushlog-id.%ld.actions",
             push);
    json_t *calls = rt_fake_calls(&h->fake, path);
    size_t n = json_array_size(calls);
    json_decref(calls);
    return n;
}

/* gecko's backfill action creates no job and writes no artifact: it fires a backfill-task
 * hook per earlier push; those action tasks sit in the earlier pushes' groups and name
 * neither our action task nor its group. The follow-up finds them through the index
 * (the action tasks of each earlier push, depth from the action's input), keeps those for
 * the alert's label and push created after our action task, and follows their artifacts.
 * An index 5xx leaves the alert unsettled; none indexed yet within the grace: pending. */
static void test_followup_finds_a_gecko_backfill_through_the_index(void **state)
{
    (void)state;
    rt_ch *h = new_harness();
    test_summary s, t;
    char *action = backfilled_alert(h, &s, 900112);
    set_status(h, action, "completed", "completed");
    char n1[23], g1[23], n2[23], g2[23], other[23], go[23], old[23], gold[23], j1[23], j2[23];
    gecko_backfill_task(h, n1, g1, ALERT_PUSH - 1, ALERT_LABEL, NULL, "completed");
    gecko_backfill_task(h, n2, g2, ALERT_PUSH - 3, ALERT_LABEL, NULL, "completed");
    memcpy(j1, spawn_job_in(h, g1, n1, &s.alerts[0], 870001, "completed", "completed", true), 23);
    memcpy(j2, spawn_job_in(h, g2, n2, &s.alerts[0], 870002, "completed", "completed", false), 23);
    label_to_taskid(h, n1, json_pack("{s:s}", ALERT_LABEL, j1));
    label_to_taskid(h, n2, json_pack("{s:s}", ALERT_LABEL, j2));
    /* Another label's backfill on the same push, and an earlier backfill of our label made
     * before our action task: their failed jobs must not count. */
    gecko_backfill_task(h, other, go, ALERT_PUSH - 1, "test-linux1804-64-shippable-qr/opt-talos",
                        NULL, "completed");
    label_to_taskid(
        h, other,
        json_pack("{s:s}", "test-linux1804-64-shippable-qr/opt-talos",
                  spawn_job_in(h, go, other, &s.alerts[0], 870003, "failed", "failed", false)));
    gecko_backfill_task(h, old, gold, ALERT_PUSH - 2, ALERT_LABEL, "2020-01-01T00:00:00.000Z",
                        "completed");
    label_to_taskid(
        h, old,
        json_pack("{s:s}", ALERT_LABEL,
                  spawn_job_in(h, gold, old, &s.alerts[0], 870004, "failed", "failed", false)));
    run_once(h, 1, 0);
    assert_followup(h, s.alerts[0].id, "done", NULL);
    assert_alert(h, s.alerts[0].id, "followup_jobs", "2");
    assert_alert(h, s.alerts[0].id, "followup_completed", "2");
    /* Depth 9 (perf_backfill_depth): pushes 109590 down to 109582, not ours, not beyond. */
    assert_true(index_calls(h, ALERT_PUSH - 1) >= 1);
    assert_true(index_calls(h, ALERT_PUSH - 9) >= 1);
    assert_int_equal(index_calls(h, ALERT_PUSH), 0);
    assert_int_equal(index_calls(h, ALERT_PUSH - 10), 0);

    /* The index answers 500: unsettled, never failed. */
    char *action2 = backfilled_alert(h, &t, 900113);
    char resolved[40];
    iso_now_ms(resolved);
    json_t *scenario =
        json_pack("{s:{s:{s:s, s:[{s:i, s:s, s:s}]}}}", "statuses", action2, "state", "completed",
                  "runs", "runId", 0, "state", "completed", "resolved", resolved);
    rt_ch_scenario(h, scenario);
    json_decref(scenario);
    assert_int_equal(rt_fake_add_fault(&h->fake, "{\"kind\": \"status\", \"status\": 500, "
                                                 "\"path_prefix\": \"/api/index/v1/tasks/\"}"),
                     200);
    run_once(h, 1, 0);
    assert_followup(h, t.alerts[0].id, NULL, NULL);
    assert_true(index_calls(h, ALERT_PUSH - 1) >= 1);
    /* The index answers again, but the backfill-tasks of the first alert predate this
     * action task and none of its own is indexed yet: pending, within the grace. */
    assert_int_equal(rt_fake_reset(&h->fake), 200);
    run_once(h, 1, 0);
    assert_followup(h, t.alerts[0].id, "pending", NULL);
    char *detail = alert_field(h, t.alerts[0].id, "followup_detail");
    assert_non_null(detail);
    assert_non_null(strstr(detail, "109582-109590"));
    free(detail);
    /* Its backfill-task completes on push 109586 with a job that produced data: done. */
    char n3[23], g3[23], j3[23];
    gecko_backfill_task(h, n3, g3, ALERT_PUSH - 5, ALERT_LABEL, NULL, "completed");
    memcpy(j3, spawn_job_in(h, g3, n3, &t.alerts[0], 870005, "completed", "completed", true), 23);
    label_to_taskid(h, n3, json_pack("{s:s}", ALERT_LABEL, j3));
    run_once(h, 1, 0);
    assert_followup(h, t.alerts[0].id, "done", NULL);
    assert_alert(h, t.alerts[0].id, "followup_jobs", "1");
    free(action);
    free(action2);
    rt_ch_free(h);
}

/* common/store/perf.h on its own: what it writes, it reads back as retrig-perf, its follow-up
 * and `retrig perf-report` read it. */
static void test_the_perf_store_reads_back_what_it_writes(void **state)
{
    (void)state;
    rt_ch *h = rt_ch_new();
    rt_pg *pg = h->pg;
    const char *day = rt_ch_today();
    rt_perf_summary summary = {.id = 9101, .framework = 13, .push_id = 77, .created = 1700000000};
    snprintf(summary.repository, sizeof summary.repository, "autoland");
    rt_perf_alert_record intent = {.alert_id = 91011,
                                   .summary_id = 9101,
                                   .signature_id = 5,
                                   .platform = "linux1804-64-shippable-qr",
                                   .family = "linux",
                                   .is_regression = true,
                                   .amount_pct = 12.5,
                                   .job_id = 4242,
                                   .task_id = "B3EheQ-IQ5aPzw34KS_a6g",
                                   .decision_task_id = DECISION,
                                   .hook_group = "project-gecko",
                                   .hook_id = "in-tree-action-3-generic/abc",
                                   .payload = "{\"a\": 1}",
                                   .jobs_scheduled = 5,
                                   .budget_day = day,
                                   .job_key = "job-a"};
    rt_perf_alert_record covered = intent;
    covered.alert_id = 91012;
    covered.job_id = 0;
    covered.task_id = covered.decision_task_id = NULL;
    covered.hook_group = covered.hook_id = covered.payload = NULL;
    covered.jobs_scheduled = 0;
    covered.budget_day = NULL;
    covered.outcome = "covered";
    covered.error = "same job";
    covered.covered_by = 91011;
    assert_int_equal(rt_pg_begin(pg), RT_OK);
    assert_int_equal(rt_perf_store_upsert_summary(pg, &summary, false), RT_OK);
    assert_int_equal(rt_perf_store_record_intent(pg, &intent), RT_OK);
    assert_int_equal(rt_perf_store_ledger(pg, "perf:linux", day, 5, 91011, "test"), RT_OK);
    assert_int_equal(rt_perf_store_record_covered(pg, &covered), RT_OK);
    assert_int_equal(rt_pg_commit(pg), RT_OK);
    /* a second covered row of the same alert is a no-op */
    assert_int_equal(rt_perf_store_record_covered(pg, &covered), RT_OK);

    long long ids[] = {9101, 9102};
    rt_perf_store_history hist;
    assert_int_equal(rt_perf_store_history_load(pg, ids, 2, &hist), RT_OK);
    assert_int_equal(hist.nalerts, 2);
    assert_int_equal(hist.ntaken, 1);
    assert_int_equal(hist.taken[0].summary_id, 9101);
    assert_int_equal(hist.taken[0].taken, 1); /* one job: the covered alert is not counted */
    assert_false(hist.taken[0].closed);
    assert_int_equal(hist.njobs, 1);
    assert_string_equal(hist.jobs[0].job_key, "job-a");
    rt_perf_store_history_free(&hist);

    rt_perf_summary_state st;
    assert_int_equal(rt_perf_store_summary_state(pg, 9102, &st), RT_OK);
    assert_false(st.found);
    assert_int_equal(rt_perf_store_upsert_summary(pg, &summary, true), RT_OK);
    assert_int_equal(rt_perf_store_summary_state(pg, 9101, &st), RT_OK);
    assert_true(st.found && st.handled);
    assert_int_equal(st.taken, 1);

    rt_perf_open_alert *open = NULL;
    size_t nopen = 0;
    assert_int_equal(rt_perf_store_open_alerts(pg, &open, &nopen), RT_OK);
    assert_int_equal(nopen, 1);
    assert_int_equal(open[0].alert_id, 91011);
    assert_int_equal(open[0].summary_id, 9101);
    free(open);

    bool locked = false;
    assert_int_equal(rt_perf_store_lock(pg, 9101, &locked), RT_OK);
    assert_true(locked);
    assert_int_equal(rt_perf_store_unlock(pg, 9101), RT_OK);

    assert_int_equal(rt_perf_store_attempt(pg, 91011), RT_OK);
    rt_perf_alert_row row;
    bool found = false;
    assert_int_equal(rt_perf_store_alert(pg, 91011, &row, &found), RT_OK);
    assert_true(found);
    assert_false(row.finished || row.dry_run);
    assert_int_equal(row.attempts, 1);
    assert_true(row.age_ms >= 0 && row.age_ms < 60000);
    assert_string_equal(row.task_id, "B3EheQ-IQ5aPzw34KS_a6g");
    assert_string_equal(row.decision_task_id, DECISION);
    assert_string_equal(row.hook_id, "in-tree-action-3-generic/abc");
    assert_string_equal(row.payload, "{\"a\": 1}");
    assert_string_equal(row.repository, "autoland");
    rt_perf_alert_row_free(&row);
    assert_int_equal(rt_perf_store_alert(pg, 91013, &row, &found), RT_OK);
    assert_false(found);

    assert_int_equal(rt_perf_store_error(pg, 91011, "hook down"), RT_OK);
    assert_int_equal(rt_perf_store_outcome(pg, 91011, "triggered", DECISION, NULL), RT_OK);
    /* an outcome is written once */
    assert_int_equal(rt_perf_store_outcome(pg, 91011, "failed", NULL, "late"), RT_OK);
    assert_int_equal(rt_perf_store_alert(pg, 91011, &row, &found), RT_OK);
    assert_true(found && row.finished);
    rt_perf_alert_row_free(&row);

    rt_perf_followed *follow = NULL;
    size_t nfollow = 0;
    assert_int_equal(rt_perf_store_to_follow(pg, 24, 500, &follow, &nfollow), RT_OK);
    assert_int_equal(nfollow, 1);
    assert_int_equal(follow[0].alert_id, 91011);
    assert_int_equal(follow[0].signature_id, 5);
    assert_string_equal(follow[0].action_task_id, DECISION);
    assert_string_equal(follow[0].task_id, "B3EheQ-IQ5aPzw34KS_a6g");
    assert_string_equal(follow[0].repository, "autoland");
    assert_false(follow[0].expired);
    rt_perf_followed_free(follow, nfollow);
    assert_int_equal(rt_perf_store_followup(pg, 91011, "failed", "jobs-failed", "2 failed", 3, 1),
                     RT_OK);
    assert_int_equal(rt_perf_store_to_follow(pg, 24, 500, &follow, &nfollow), RT_OK);
    assert_int_equal(nfollow, 0);
    rt_perf_followed_free(follow, nfollow);

    rt_perf_day d;
    assert_int_equal(rt_perf_store_day(pg, day, &d), RT_OK);
    assert_int_equal(d.nledger, 1);
    assert_string_equal(d.ledger[0].family, "linux");
    assert_int_equal(d.ledger[0].used, 5);
    assert_int_equal(d.nalerts, 1);
    assert_string_equal(d.alerts[0].family, "linux");
    assert_int_equal(d.alerts[0].backfills, 1);
    assert_int_equal(d.alerts[0].scheduled, 5);
    assert_int_equal(d.alerts[0].executed, 1);
    assert_int_equal(d.alerts[0].failed, 1);
    assert_int_equal(d.nfailures, 1);
    assert_int_equal(d.failures[0].alert_id, 91011);
    assert_string_equal(d.failures[0].reason, "jobs-failed");
    assert_string_equal(d.failures[0].detail, "2 failed");
    assert_int_equal(d.failures[0].jobs, 3);
    assert_int_equal(d.failures[0].completed, 1);
    assert_true(strlen(d.failures[0].settled_at) == 20);
    rt_perf_day_free(&d);
    rt_ch_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_perf_store_reads_back_what_it_writes),
        cmocka_unit_test(test_once_backfills_picks_and_a_family_limit_passes_to_the_next_family),
        cmocka_unit_test(test_the_ledger_backstop_refuses_a_claim_redis_granted_past_the_limit),
        cmocka_unit_test(test_alerts_of_one_job_are_one_backfill),
        cmocka_unit_test(test_two_runners_at_once_backfill_every_alert_exactly_once),
        cmocka_unit_test(test_a_backfill_hook_retrig_may_not_call_is_refused),
        cmocka_unit_test(test_a_backfill_that_runs_another_callback_is_refused),
        cmocka_unit_test(test_an_existing_backfill_of_the_job_is_recorded_already_backfilled),
        cmocka_unit_test(test_dry_run_records_the_payload_and_sends_nothing),
        cmocka_unit_test(test_a_young_summary_is_picked_only_once_an_hour_has_passed),
        cmocka_unit_test(test_perfherder_5xx_is_retried),
        cmocka_unit_test(test_a_perfherder_error_or_a_truncated_page_marks_nothing_handled),
        cmocka_unit_test(test_followup_waits_for_the_jobs_then_records_a_backfill_done),
        cmocka_unit_test(test_followup_records_a_failed_action_task),
        cmocka_unit_test(test_followup_records_failed_jobs),
        cmocka_unit_test(test_followup_records_jobs_ending_in_an_exception),
        cmocka_unit_test(
            test_followup_records_deadline_exceeded_past_the_window_or_from_taskcluster),
        cmocka_unit_test(test_followup_records_no_data_when_jobs_complete_without_a_data_point),
        cmocka_unit_test(test_followup_finds_the_jobs_on_earlier_pushes_through_the_artifacts),
        cmocka_unit_test(test_followup_finds_a_gecko_backfill_through_the_index),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
