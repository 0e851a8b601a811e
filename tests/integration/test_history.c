/* SPDX-License-Identifier: MPL-2.0 */
/* test_history.c - retrig-history end to end: a real worker process on the local
 * RabbitMQ and Postgres, the fake upstream serving the recorded task definitions and
 * errorsummary fixtures. Pins what issue 7 asks of "record everything": group and failing
 * test results with project, push, branch class, platform, label and time; idempotent on
 * redelivery; only test tasks of allowed projects; dead letters with reasons; retries of
 * transient upstream failures; each run's platform and build type, the variant retrig flakes
 * breaks a test's failures down by. Each test has its own database and names
 * (support/classify_harness.h). */
#include "support/util.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/classify_harness.h"
#include "support/cli_run.h"
#include "support/crafted.h"

#define GWX_PULSE    "pulse/treeherder_task-completed_GWxTc8p_RUa5_Xo4RtMiCA.json"
#define GWX_DEF      "taskcluster/task_definition_GWxTc8p_RUa5_Xo4RtMiCA.json"
#define GWX_REV      "b437ae030825a8ea9fa7a632b1fcb9becbe11f69"
#define GWX_LABEL    "test-android-em-7.0-x86_64/debug-mochitest-e10s-1"
#define GWX_PLATFORM "android-em-7-0-x86_64"
#define ES_FAIL      "errorsummary/mochitest-browser-chrome_errorsummary.log"
#define ES_PASS      "errorsummary/mochitest-browser-chrome_pass_errorsummary.log"
#define ES_GROUPS    30 /* groups of both fixtures */
#define PROGRAM      "retrig-history"
#define WAIT_MS      15000

static const char SQL_RUN_COUNT[] = "SELECT count(*) FROM history_runs WHERE run_key = $1 || '/0'";

typedef struct task {
    char task_id[23];
    char group[23];
} task;

static int setup(void **state)
{
    rt_ch *h = rt_ch_new();
    rt_ch_setenv(h, "TASK_CACHE_SIZE", "64");
    *state = h;
    return 0;
}

static int teardown(void **state)
{
    rt_ch *h = *state;
    if (rt_ch_stop_workers(h, 10000) != 0) fprintf(stderr, "a worker did not stop cleanly\n");
    char q[256];
    snprintf(q, sizeof q, "%s-history", h->pulse_queue);
    if (rt_amqp_delete_queue(h->amqp, q) != RT_OK) {}
    static const char *const suffixes[] = {"history-retry", "history-retry.delay.300",
                                           "history-retry.delay.600"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(q, sizeof q, "%s.%s", h->ns, suffixes[i]);
        if (rt_amqp_delete_queue(h->amqp, q) != RT_OK) {}
    }
    rt_ch_free(h);
    return 0;
}

/* A task made from a recorded task definition with its own ids, its errorsummary, and a job
 * kind. */
static void add_task_from(rt_ch *h, task *t, const char *definition, const char *errorsummary,
                          const char *job_kind)
{
    rt_ch_slugid(t->task_id);
    rt_ch_slugid(t->group);
    json_t *def = rt_ch_task_definition(definition, t->group, NULL);
    if (job_kind)
        json_object_set_new(json_object_get(json_object_get(def, "extra"), "treeherder"), "jobKind",
                            json_string(job_kind));
    json_t *artifacts =
        json_pack("[{s:s, s:s}]", "name", "public/logs/live_backing.log", "content", "log\n");
    if (errorsummary)
        json_array_append_new(artifacts, json_pack("{s:s, s:s}", "name",
                                                   "public/test_info/mochitest_errorsummary.log",
                                                   "fixture", errorsummary));
    json_t *scenario = json_pack("{s:{s:o}, s:{s:{s:o}}}", "tasks", t->task_id, def, "artifacts",
                                 t->task_id, "0", artifacts);
    rt_ch_scenario(h, scenario);
    json_decref(scenario);
}

/* A task made from the GWxTc8p fixture. */
static void add_task(rt_ch *h, task *t, const char *errorsummary, const char *job_kind)
{
    add_task_from(h, t, GWX_DEF, errorsummary, job_kind);
}

/* Publishes the run of t as task-failed (or task-completed) with the CC route of project. */
static void publish(rt_ch *h, const task *t, bool failed, const char *project, const char *push,
                    const char *message_id)
{
    char *body = rt_ch_failed_message(GWX_PULSE, t->task_id, t->group);
    if (!failed) {
        json_t *doc = json_loads(body, 0, NULL);
        free(body);
        json_t *status = json_object_get(doc, "status");
        json_object_set_new(status, "state", json_string("completed"));
        json_t *run = json_array_get(json_object_get(status, "runs"), 0);
        json_object_set_new(run, "state", json_string("completed"));
        json_object_set_new(run, "reasonResolved", json_string("completed"));
        body = json_dumps(doc, JSON_COMPACT);
        json_decref(doc);
    }
    char route[256];
    snprintf(route, sizeof route, "tc-treeherder.v2.%s.%s.%s", project, GWX_REV, push);
    rt_ch_publish(h, failed ? "task-failed" : "task-completed", body, strlen(body), route,
                  message_id);
    free(body);
}

static long long wait_recorded(rt_ch *h, const task *t)
{
    const char *params[] = {t->task_id};
    return rt_ch_wait_int(h, WAIT_MS, 1, SQL_RUN_COUNT, 1, params);
}

static long long count_for(rt_ch *h, const char *sql, const task *t)
{
    const char *params[] = {t->task_id};
    return rt_ch_sql_int(h, sql, 1, params);
}

static const char SQL_GROUPS[] =
    "SELECT count(*) FROM history_groups g JOIN history_runs r ON r.id = g.run_id"
    " WHERE r.run_key = $1 || '/0'";
static const char SQL_FAILED_GROUPS[] =
    "SELECT count(*) FROM history_groups g JOIN history_runs r ON r.id = g.run_id"
    " WHERE r.run_key = $1 || '/0' AND g.failed";
static const char SQL_TESTS[] =
    "SELECT count(*) FROM history_tests t JOIN history_runs r ON r.id = t.run_id"
    " WHERE r.run_key = $1 || '/0'";

static void
test_failed_and_completed_test_runs_are_recorded_with_their_push_and_branch_class(void **state)
{
    rt_ch *h = *state;
    task failed, passed, on_try;
    add_task(h, &failed, ES_FAIL, NULL);
    add_task(h, &passed, ES_PASS, NULL);
    add_task(h, &on_try, ES_FAIL, NULL);
    rt_ch_start_program(h, PROGRAM, 1);
    publish(h, &failed, true, "autoland", "88560", NULL);
    publish(h, &passed, false, "mozilla-central", "123", NULL);
    publish(h, &on_try, true, "try", "4242", NULL);
    assert_int_equal(wait_recorded(h, &failed), 1);
    assert_int_equal(wait_recorded(h, &passed), 1);
    assert_int_equal(wait_recorded(h, &on_try), 1);

    char *run = rt_ch_sql_text(
        h,
        "SELECT concat_ws(' ', source, repository, project, branch, branch_class, branch_key,"
        " push, revision, platform, label, run_at IS NOT NULL, complete_results)"
        " FROM history_runs WHERE run_key = $1 || '/0'",
        1, (const char *[]){failed.task_id});
    assert_non_null(run);
    assert_string_equal(run, "taskcluster gecko autoland autoland main autoland 88560 " GWX_REV
                             " " GWX_PLATFORM " " GWX_LABEL " t f");
    free(run);
    char *key = rt_ch_sql_text(
        h, "SELECT branch_class || ' ' || branch_key FROM history_runs WHERE run_key = $1 || '/0'",
        1, (const char *[]){on_try.task_id});
    /* a try push is its author's branch: the recorded task definition's metadata.owner */
    assert_string_equal(key, "other try:author:jmuizelaar@mozilla.com");
    free(key);

    /* Every group of the summary; the failing tests, one row each, with their signature. */
    assert_int_equal(count_for(h, SQL_GROUPS, &failed), ES_GROUPS);
    /* Three group_results end ERROR in the fixture (pictureinpicture with its failures). */
    assert_int_equal(count_for(h, SQL_FAILED_GROUPS, &failed), 3);
    assert_int_equal(count_for(h, SQL_TESTS, &failed), 2);
    char *signature = rt_ch_sql_text(
        h,
        "SELECT t.signature FROM history_tests t JOIN history_runs r ON r.id = t.run_id"
        " WHERE r.run_key = $1 || '/0' AND t.test = "
        "'toolkit/components/pictureinpicture/tests/browser_fullscreen.js'",
        1, (const char *[]){failed.task_id});
    assert_non_null(signature);
    assert_string_equal(
        signature,
        "TEST-UNEXPECTED-FAIL | toolkit/components/pictureinpicture/tests/"
        "browser_fullscreen.js | Uncaught exception - undefined - timed out after 50 tries.");
    free(signature);
    assert_int_equal(count_for(h, SQL_GROUPS, &passed), ES_GROUPS);
    assert_int_equal(count_for(h, SQL_FAILED_GROUPS, &passed), 0);
    assert_int_equal(count_for(h, SQL_TESTS, &passed), 0);

    /* The questions: the passing run of the test's group counts as a run of the test; of its
     * two failures only the try push's is breadth (autoland is a main branch). */
    char *stats = rt_ch_sql_text(
        h,
        "SELECT concat_ws(' ', runs, failures, branches, pushes, flaky)"
        " FROM history_flakes('gecko', '2000-01-01', 'infinity', false, 3, '7 days')"
        " WHERE test = 'toolkit/components/pictureinpicture/tests/browser_fullscreen.js'",
        0, NULL);
    assert_non_null(stats);
    assert_string_equal(stats, "3 2 1 3 f");
    free(stats);
    assert_int_equal(rt_ch_queue_depth(h, "dead-letter"), 0);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0); /* exit 0: no sanitizer report */
}

static void test_redelivered_and_duplicated_messages_record_the_run_once(void **state)
{
    rt_ch *h = *state;
    task t, marker;
    add_task(h, &t, ES_FAIL, NULL);
    add_task(h, &marker, ES_PASS, NULL);
    rt_ch_start_program(h, PROGRAM, 2);
    for (int i = 0; i < 4; i++) publish(h, &t, true, "autoland", "88560", NULL);
    assert_int_equal(wait_recorded(h, &t), 1);
    /* A worker killed mid-stream redelivers what it held: still one run. */
    rt_ch_restart_worker(h, 0, SIGKILL);
    publish(h, &t, true, "autoland", "88560", NULL);
    publish(h, &marker, true, "autoland", "88560", NULL);
    assert_int_equal(wait_recorded(h, &marker), 1);
    char q[256];
    snprintf(q, sizeof q, "%s-history", h->pulse_queue);
    rt_ch_settle(h, PROGRAM, q, 1, WAIT_MS);
    assert_int_equal(count_for(h, SQL_RUN_COUNT, &t), 1);
    assert_int_equal(count_for(h, SQL_GROUPS, &t), ES_GROUPS);
    assert_int_equal(count_for(h, SQL_TESTS, &t), 2);
}

static long long upstream_calls(rt_ch *h, const char *task_id)
{
    char prefix[128];
    snprintf(prefix, sizeof prefix, "/api/queue/v1/task/%s", task_id);
    json_t *calls = rt_fake_calls(&h->fake, prefix);
    assert_non_null(calls);
    long long n = (long long)json_array_size(calls);
    json_decref(calls);
    return n;
}

static void test_only_test_tasks_of_allowed_projects_are_recorded(void **state)
{
    rt_ch *h = *state;
    rt_ch_setenv(h, "HISTORY_PROJECTS", "autoland, mozilla-*");
    task build, elsewhere, marker;
    add_task(h, &build, ES_FAIL, "build");
    add_task(h, &elsewhere, ES_FAIL, NULL);
    add_task(h, &marker, ES_PASS, NULL);
    rt_ch_start_program(h, PROGRAM, 1);
    publish(h, &build, true, "autoland", "88560", NULL);
    publish(h, &elsewhere, true, "try", "7", NULL);
    publish(h, &marker, false, "mozilla-beta", "9", NULL);
    assert_int_equal(wait_recorded(h, &marker), 1); /* one worker: the others were handled */
    assert_int_equal(count_for(h, SQL_RUN_COUNT, &build), 0);
    assert_int_equal(count_for(h, SQL_RUN_COUNT, &elsewhere), 0);
    /* The build's definition was read, not its artifacts; try cost no upstream call. */
    assert_int_equal(upstream_calls(h, build.task_id), 1);
    assert_int_equal(upstream_calls(h, elsewhere.task_id), 0);
    char *cls =
        rt_ch_sql_text(h, "SELECT branch_class FROM history_runs WHERE run_key = $1 || '/0'", 1,
                       (const char *[]){marker.task_id});
    assert_string_equal(cls, "other"); /* mozilla-beta is not a main project */
    free(cls);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0); /* exit 0: no sanitizer report */
}

static void test_malformed_message_is_dead_lettered_with_its_reason(void **state)
{
    rt_ch *h = *state;
    task marker;
    add_task(h, &marker, ES_PASS, NULL);
    rt_ch_start_program(h, PROGRAM, 1);
    static const char broken[] = "{\"status\": {\"taskId\": 12}";
    rt_ch_publish(h, "task-failed", broken, strlen(broken), NULL, "broken-1");
    publish(h, &marker, true, "autoland", "1", NULL);
    rt_ch_message *dead = NULL;
    rt_ch_take(h, "dead-letter", 1, WAIT_MS, &dead);
    assert_string_equal(dead[0].message_id, "broken-1");
    assert_non_null(dead[0].reason);
    assert_string_equal(dead[0].reason, "invalid-json");
    rt_ch_messages_free(dead, 1);
    assert_int_equal(wait_recorded(h, &marker), 1);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0); /* exit 0: no sanitizer report */
}

static void test_upstream_503_is_retried_through_delay_queues_then_recorded(void **state)
{
    rt_ch *h = *state;
    task t, down;
    add_task(h, &t, ES_FAIL, NULL);
    add_task(h, &down, ES_FAIL, NULL);
    char rule[512];
    snprintf(
        rule, sizeof rule,
        "[{\"kind\": \"status\", \"status\": 503, \"times\": 2, \"path_regex\": "
        "\"^/api/queue/v1/task/%s/runs\"},"
        " {\"kind\": \"status\", \"status\": 503, \"path_regex\": \"^/api/queue/v1/task/%s$\"}]",
        t.task_id, down.task_id);
    assert_int_equal(rt_fake_add_fault(&h->fake, rule), 200);
    rt_ch_start_program(h, PROGRAM, 1);
    publish(h, &t, true, "autoland", "88560", "flaky-upstream");
    publish(h, &down, true, "autoland", "88560", "down-upstream");
    assert_int_equal(wait_recorded(h, &t), 1);
    assert_int_equal(count_for(h, SQL_TESTS, &t), 2);
    rt_ch_message *dead = NULL;
    rt_ch_take(h, "dead-letter", 1, WAIT_MS, &dead);
    assert_string_equal(dead[0].message_id, "down-upstream");
    assert_non_null(strstr(dead[0].reason, "upstream-error: task definition"));
    assert_non_null(strstr(dead[0].reason, "after 2 retries"));
    rt_ch_messages_free(dead, 1);
    assert_int_equal(count_for(h, SQL_RUN_COUNT, &down), 0);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0); /* exit 0: no sanitizer report */
}

/* An errorsummary that takes longer than message_time_budget_ms: retried through the
 * delay queues, then dead-lettered (parse-timeout), the run never recorded from part of it. */
static void test_an_errorsummary_over_the_time_budget_is_retried_then_dead_lettered(void **state)
{
    rt_ch *h = *state;
    rt_ch_setenv(h, "MESSAGE_TIME_BUDGET_MS", "1");
    task t;
    add_task(h, &t, NULL, NULL);
    size_t len = 0;
    char *big = rt_crafted_errorsummary(RT_CRAFTED_REAL, 4 << 20, &len);
    json_t *scenario =
        json_pack("{s:{s:{s:[{s:s, s:s%}]}}}", "artifacts", t.task_id, "0", "name",
                  "public/test_info/mochitest_errorsummary.log", "content", big, len);
    free(big);
    rt_ch_scenario(h, scenario);
    json_decref(scenario);
    rt_ch_start_program(h, PROGRAM, 1);
    publish(h, &t, true, "autoland", "88560", "slow-errorsummary");
    rt_ch_message *dead = NULL;
    rt_ch_take(h, "dead-letter", 1, 30000, &dead);
    if (strncmp(dead[0].reason, "parse-timeout", 13) != 0 ||
        !strstr(dead[0].reason, "after 2 retries"))
        fail_msg("reason: %s", dead[0].reason);
    rt_ch_messages_free(dead, 1);
    assert_int_equal(count_for(h, SQL_RUN_COUNT, &t), 0);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
}

/* A Mozilla outcome keeps its variant, the platform and the build type Treeherder shows
 * (issue 31): a test fails in three runs of linux64-qr debug and passes in a fourth, in two
 * runs of linux64-qr opt and two of linux64 asan (recorded task definitions of each, where
 * asan is in the collection only); retrig flakes gives its runs and failures per variant
 * and names linux64-qr/debug as the one it fails on. The other failing test of the same
 * summary likewise. */
static void test_a_test_failing_on_one_platform_and_build_type_says_so(void **state)
{
    rt_ch *h = *state;
    static const struct {
        const char *definition, *errorsummary, *build_type;
    } plan[] = {
        {"taskcluster/task_definition_A35mWTRuQmyj88yMnIF0fA.json", ES_FAIL, "debug"},
        {"taskcluster/task_definition_A35mWTRuQmyj88yMnIF0fA.json", ES_FAIL, "debug"},
        {"taskcluster/task_definition_A35mWTRuQmyj88yMnIF0fA.json", ES_FAIL, "debug"},
        {"taskcluster/task_definition_A35mWTRuQmyj88yMnIF0fA.json", ES_PASS, "debug"},
        {"taskcluster/task_definition_KYZKwkbvRc-qPE22g286yQ.json", ES_PASS, "opt"},
        {"taskcluster/task_definition_KYZKwkbvRc-qPE22g286yQ.json", ES_PASS, "opt"},
        {"taskcluster/task_definition_UZ37gpDqTRS1pBNnp0Spsg.json", ES_PASS, "asan"},
        {"taskcluster/task_definition_UZ37gpDqTRS1pBNnp0Spsg.json", ES_PASS, "asan"},
    };
    enum { N = sizeof plan / sizeof *plan };
    task tasks[N];
    for (size_t i = 0; i < N; i++)
        add_task_from(h, &tasks[i], plan[i].definition, plan[i].errorsummary, NULL);
    rt_ch_start_program(h, PROGRAM, 1);
    for (size_t i = 0; i < N; i++) {
        char push[16];
        snprintf(push, sizeof push, "%zu", 90000 + i);
        publish(h, &tasks[i], !strcmp(plan[i].errorsummary, ES_FAIL), "autoland", push, NULL);
    }
    for (size_t i = 0; i < N; i++) {
        assert_int_equal(wait_recorded(h, &tasks[i]), 1);
        char *build_type =
            rt_ch_sql_text(h, "SELECT build_type FROM history_runs WHERE run_key = $1 || '/0'", 1,
                           (const char *[]){tasks[i].task_id});
        assert_non_null(build_type);
        assert_string_equal(build_type, plan[i].build_type);
        free(build_type);
    }

    /* retrig flakes reads whole days from the rollup: wait until the worker has added them */
    assert_int_equal(
        rt_ch_wait_int(h, WAIT_MS, 0, "SELECT count(*) FROM history_rollup_queue", 0, NULL), 0);
    const char *env[RT_CH_MAX_ENV + 1] = {0};
    for (size_t i = 0; i < h->nenv; i++) env[i] = h->env[i];
    const char *argv[] = {
        "retrig",   "flakes", "--project", "gecko", "--until", "2019-06-27T00:00:00Z",
        "--window", "7d",     "--format",  "json",  NULL};
    char *out = NULL, *err = NULL;
    int status = rt_test_run(env, argv, &out, &err);
    if (status != 0) fail_msg("retrig flakes: %d %s", status, err);
    json_t *doc = json_loads(out, 0, NULL);
    assert_non_null(doc);
    static const char *const failing[] = {
        "toolkit/components/pictureinpicture/tests/browser_fullscreen.js",
        "toolkit/components/pictureinpicture/tests/browser_videoSelection.js"};
    size_t seen = 0, i;
    json_t *row;
    json_array_foreach(json_object_get(doc, "tests"), i, row)
    {
        const char *test = json_string_value(json_object_get(row, "test"));
        if (strcmp(test, failing[0]) != 0 && strcmp(test, failing[1]) != 0) continue;
        seen++;
        json_t *only = json_object_get(row, "only_variant");
        if (!json_is_string(only)) fail_msg("%s: no only_variant in %s", test, out);
        assert_string_equal(json_string_value(only), "linux64-qr/debug");
        json_t *variants = json_object_get(row, "variants");
        assert_int_equal(json_array_size(variants), 3);
        static const struct {
            const char *variant;
            long long runs, failures;
        } want[] = {{"linux64-qr/debug", 4, 3}, {"linux64-qr/opt", 2, 0}, {"linux64/asan", 2, 0}};
        for (size_t w = 0; w < 3; w++) {
            bool found = false;
            size_t k;
            json_t *v;
            json_array_foreach(variants, k, v)
            {
                if (strcmp(json_string_value(json_object_get(v, "variant")), want[w].variant))
                    continue;
                found = true;
                assert_int_equal(json_integer_value(json_object_get(v, "runs")), want[w].runs);
                assert_int_equal(json_integer_value(json_object_get(v, "failures")),
                                 want[w].failures);
            }
            if (!found) fail_msg("%s: no variant %s in %s", test, want[w].variant, out);
        }
    }
    if (seen != 2) fail_msg("tests: %s", out);
    json_decref(doc);
    free(out);
    free(err);

    /* The table says it under the test. */
    const char *table_argv[] = {
        "retrig",   "flakes", "--project", "gecko", "--until", "2019-06-27T00:00:00Z",
        "--window", "7d",     "--format",  "table", NULL};
    assert_int_equal(rt_test_run(env, table_argv, &out, NULL), 0);
    assert_non_null(strstr(out, "fails on one variant only: linux64-qr/debug (of 3)"));
    free(out);

    /* The flaky-test page gives it the badge, and says what a variant is here. */
    char page[256], out_arg[300];
    snprintf(page, sizeof page, "%s/variants.html", h->dir);
    snprintf(out_arg, sizeof out_arg, "--out=%s", page);
    const char *report_argv[] = {
        "retrig",   "report", "--project", "gecko", "--until", "2019-06-27T00:00:00Z",
        "--window", "7d",     out_arg,     NULL};
    assert_int_equal(rt_test_run(env, report_argv, &out, NULL), 0);
    free(out);
    size_t len = 0;
    char *html = rt_test_read_file(page, &len);
    assert_non_null(strstr(html, "title=\"failed on this variant (platform/build type) only, of 3 "
                                 "that ran it\">only on linux64-qr/debug</span>"));
    free(html);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0); /* exit 0: no sanitizer report */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_failed_and_completed_test_runs_are_recorded_with_their_push_and_branch_class,
            setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_redelivered_and_duplicated_messages_record_the_run_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_only_test_tasks_of_allowed_projects_are_recorded,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_malformed_message_is_dead_lettered_with_its_reason,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_upstream_503_is_retried_through_delay_queues_then_recorded, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_an_errorsummary_over_the_time_budget_is_retried_then_dead_lettered, setup,
            teardown),
        cmocka_unit_test_setup_teardown(test_a_test_failing_on_one_platform_and_build_type_says_so,
                                        setup, teardown),
    };
    signal(SIGPIPE, SIG_IGN);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
