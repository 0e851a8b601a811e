/* SPDX-License-Identifier: MPL-2.0 */
/* test_decide_pooled.c - decide_policy = pooled end to end (issue 32): recorded failures
 * (the GWxTc8p fixture made to fail with the mochitest errorsummary, whose first failure is
 * toolkit/components/pictureinpicture/tests/browser_fullscreen.js) go through real
 * retrig-classify, retrig-retrigger (the fake's Hawk-checked hook) and retrig-decide
 * processes on the local RabbitMQ, Redis and Postgres. The test history holds what
 * retrig-history would have stored: the test's clean record on other pushes, and the push's
 * own runs of the test's group on every configuration where it ran.
 *
 * Pins the integration test: a test failing on 3 configurations of a push and
 * passing on 4 is one pooled set (opened by the first failure, joined by the others once)
 * decided regression with at most one round (here none: the push's runs suffice), every
 * failing task's decision pointing at it; a test failing on 1 configuration and passing on
 * 6 is decided intermittent with retriggers of that configuration only, asked once per
 * round through retrig-retrigger within the platform's budget.
 *
 * Also: the settle window ends when the push's other tasks of the test's group have
 * finished, not at its time; the recovery paths of workers/decide/pool_flow.c (a round
 * written but not published is published by the next look, once; a set that never joined
 * joins at decide time) and the deadline path (retriggers that never come are left out and
 * the posterior decides). */
#include "support/util.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "support/classify_harness.h"
#include "support/fixtures.h"

#define GWX_PULSE    "pulse/treeherder_task-completed_GWxTc8p_RUa5_Xo4RtMiCA.json"
#define GWX_DEF      "taskcluster/task_definition_GWxTc8p_RUa5_Xo4RtMiCA.json"
#define GWX_ROUTE    "tc-treeherder.v2.autoland.b437ae030825a8ea9fa7a632b1fcb9becbe11f69.88560"
#define GWX_REVISION "b437ae030825a8ea9fa7a632b1fcb9becbe11f69"
#define GWX_PLATFORM "android-em-7-0-x86_64"
#define DEC_FIX      "taskcluster/task_definition_build-android-api-16-debug.json"
#define ES_FAIL      "errorsummary/mochitest-browser-chrome_errorsummary.log"
#define BUGSUG       "treeherder/bug_suggestions.json"
#define TEST_NAME    "toolkit/components/pictureinpicture/tests/browser_fullscreen.js"
#define TEST_GROUP   "toolkit/components/pictureinpicture/tests/browser.ini"
#define CLIENT_ID    "project/retrig/pooled-test"
#define TOKEN        "fake-access-token-pooled-0123456789"
#define DELAYS       "200,400,800,1600"
#define WAIT_MS      30000

static long next_job_id(void)
{
    static long id;
    if (!id) id = 700000000L + (random() % 1000000) * 100;
    return ++id;
}

static int setup(void **state)
{
    rt_ch *h = rt_ch_new();
    rt_ch_setenv(h, "DECIDE_POLICY", "pooled");
    rt_ch_setenv(h, "DECIDE_POOL_SETTLE_S", "4");
    rt_ch_setenv(h, "DECIDE_SWEEP_INTERVAL_S", "1");
    rt_ch_setenv(h, "RETRIGGERS_PER_FAILURE", "5");
    rt_ch_setenv(h, "TASKCLUSTER_CLIENT_ID", CLIENT_ID);
    rt_ch_setenv(h, "TASKCLUSTER_ACCESS_TOKEN", TOKEN);
    rt_ch_setenv(h, "DECIDE_DELAYS_MS", DELAYS);
    *state = h;
    return 0;
}

static int teardown(void **state)
{
    rt_ch *h = *state;
    char q[256];
    char delays[] = DELAYS, *save = NULL;
    for (char *d = strtok_r(delays, ",", &save); d; d = strtok_r(NULL, ",", &save)) {
        snprintf(q, sizeof q, "%s.decide.delay.%s", h->ns, d);
        if (rt_amqp_delete_queue(h->amqp, q) != RT_OK) {}
    }
    snprintf(q, sizeof q, "%s.decisions", h->ns);
    if (rt_amqp_delete_exchange(h->amqp, q) != RT_OK) {}
    rt_ch_free(h);
    return 0;
}

static void start_all(rt_ch *h)
{
    rt_ch_start_workers(h, 1);
    rt_ch_start_program(h, "retrig-retrigger", 1);
    rt_ch_start_program(h, "retrig-decide", 1);
}

/* The test's record on other pushes (1,000 runs, the first `flaky` of them failing), and
 * the push's runs of its group: one per configuration, platform[i] with label[i], failing
 * the test when failed[i]. */
static void store_history(rt_ch *h, int flaky, size_t n, const char *const *platforms,
                          const char *const *labels, const bool *failed)
{
    char flaky_text[16];
    snprintf(flaky_text, sizeof flaky_text, "%d", flaky);
    const char *record[] = {TEST_NAME, TEST_GROUP, flaky_text};
    assert_int_equal(
        rt_ch_sql_int(h,
                      "WITH r AS (INSERT INTO history_runs (source, run_key, repository, project,"
                      " branch, branch_class, branch_key, push, revision, run_at,"
                      " complete_results) SELECT 'taskcluster', 'pooled-' || i, 'gecko',"
                      " 'autoland', 'autoland', 'main', 'autoland', (2000 + i)::text,"
                      " 'rev' || i, now() - make_interval(mins => 5 * i), true"
                      " FROM generate_series(1, 1000) i RETURNING id, run_at, push),"
                      " t AS (INSERT INTO history_tests (run_id, run_at, test, group_name, status,"
                      " failed) SELECT r.id, r.run_at, $1, $2, CASE WHEN r.push::integer - 2000"
                      " <= $3::integer THEN 'FAIL' ELSE 'PASS' END, r.push::integer - 2000 <="
                      " $3::integer FROM r RETURNING 1)"
                      " SELECT count(*) FROM t",
                      3, record),
        1000);
    for (size_t i = 0; i < n; i++) {
        char key[64];
        snprintf(key, sizeof key, "pooled-push-%zu", i);
        const char *params[] = {
            key,          platforms[i],         labels[i], TEST_NAME, TEST_GROUP,
            GWX_REVISION, failed[i] ? "t" : "f"};
        assert_int_equal(
            rt_ch_sql_int(
                h,
                "WITH r AS (INSERT INTO history_runs (source, run_key, repository, project,"
                " branch, branch_class, branch_key, push, revision, platform, label, run_at,"
                " complete_results) VALUES ('taskcluster', $1, 'gecko', 'autoland', 'autoland',"
                " 'main', 'autoland', '88560', $6, $2, $3, now() - interval '30 minutes',"
                " false) RETURNING id, run_at),"
                " g AS (INSERT INTO history_groups (run_id, run_at, group_name, status, failed)"
                " SELECT id, run_at, $5, CASE WHEN $7::boolean THEN 'ERROR' ELSE 'OK' END,"
                " $7::boolean FROM r RETURNING 1),"
                " t AS (INSERT INTO history_tests (run_id, run_at, test, group_name, status,"
                " failed) SELECT id, run_at, $4, $5, 'FAIL', true FROM r WHERE $7::boolean"
                " RETURNING 1)"
                " SELECT (SELECT count(*) FROM g) + (SELECT count(*) FROM t)",
                7, params),
            failed[i] ? 2 : 1);
    }
}

/* A failing task of the push, label given: its definition, errorsummary and Treeherder job
 * (the bug_suggestions fixture), then its task-failed message. The decision task's
 * definition and actions artifact come with the first (group_new). */
static void define_failing_task(rt_ch *h, const char *group, bool group_new, const char *label,
                                char task_id[23])
{
    rt_ch_slugid(task_id);
    json_t *s = json_pack("{s:{s:o}, s:{s:{s:[{s:s, s:s}, {s:s, s:s}]}}, s:{s:s}}", "tasks",
                          task_id, rt_ch_task_definition(GWX_DEF, group, label), "artifacts",
                          task_id, "0", "name", "public/logs/live_backing.log", "content",
                          "recorded log\n", "name", "public/test_info/mochitest_errorsummary.log",
                          "fixture", ES_FAIL, "hook_clients", CLIENT_ID, TOKEN);
    assert_non_null(s);
    if (group_new) {
        json_object_set_new(
            json_object_get(s, "tasks"), group,
            json_pack("{s:s, s:{s:s}}", "fixture", DEC_FIX, "override", "taskGroupId", group));
        json_object_set_new(json_object_get(s, "artifacts"), group,
                            json_pack("{s:[o]}", "0", rt_ch_actions_artifact(group, GWX_REVISION)));
    }
    rt_ch_scenario(h, s);
    json_decref(s);
    char id[32];
    long job = next_job_id();
    snprintf(id, sizeof id, "%ld", job);
    json_t *j =
        json_pack("{s:{s:[{s:I, s:i, s:s, s:s, s:i}]}, s:{s:{s:s}}}", "jobs", task_id, "id",
                  (json_int_t)job, "retry_id", 0, "result", "testfailed", "state", "completed",
                  "failure_classification_id", 1, "bug_suggestions", id, "fixture", BUGSUG);
    rt_ch_scenario(h, j);
    json_decref(j);
}

/* Its task-failed message. */
static void publish_failure(rt_ch *h, const char *group, const char *task_id)
{
    char *body = rt_ch_failed_message(GWX_PULSE, task_id, group);
    rt_ch_publish(h, "task-failed", body, strlen(body), GWX_ROUTE, NULL);
    free(body);
}

static void fail_task(rt_ch *h, const char *group, bool group_new, const char *label,
                      char task_id[23])
{
    define_failing_task(h, group, group_new, label, task_id);
    publish_failure(h, group, task_id);
}

/* A retrigger of the label resolves and passes. */
static void pass_retrigger(rt_ch *h, const char *group, const char *label, char task_id[23])
{
    rt_ch_slugid(task_id);
    json_t *s =
        json_pack("{s:{s:o}}", "tasks", task_id, rt_ch_task_definition(GWX_DEF, group, label));
    rt_ch_scenario(h, s);
    json_decref(s);
    json_t *wrapper = json_load_file(rt_test_fixture(GWX_PULSE), 0, NULL);
    assert_non_null(wrapper);
    json_t *body = json_deep_copy(json_object_get(wrapper, "payload"));
    json_decref(wrapper);
    json_t *status = json_object_get(body, "status");
    json_object_set_new(status, "taskId", json_string(task_id));
    json_object_set_new(status, "taskGroupId", json_string(group));
    json_object_set_new(body, "task", json_pack("{s:{s:s}}", "tags", "label", label));
    char *text = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    rt_ch_publish(h, "task-completed", text, strlen(text), GWX_ROUTE, NULL);
    free(text);
}

/* Retriggers the hook was asked for across every trigger of the fake (times summed). */
static long long hook_times(rt_ch *h, size_t *calls)
{
    json_t *triggers = rt_fake_triggers(&h->fake);
    assert_non_null(triggers);
    long long times = 0;
    size_t i, k;
    json_t *t, *req;
    json_array_foreach(triggers, i, t)
    {
        json_t *input =
            json_object_get(json_object_get(json_object_get(t, "payload"), "user"), "input");
        json_t *requests = json_object_get(input, "requests");
        if (json_is_integer(json_object_get(input, "times")))
            times += json_integer_value(json_object_get(input, "times"));
        json_array_foreach(requests, k, req) times +=
            json_integer_value(json_object_get(req, "times"));
    }
    *calls = json_array_size(triggers);
    json_decref(triggers);
    return times;
}

/* The output of a retrig command against the harness database (malloc'd). */
static char *retrig(rt_ch *h, const char *args)
{
    char cmd[1024], out[256];
    snprintf(cmd, sizeof cmd, "RETRIG_DATABASE_URL='%s' %s/retrig %s 2>&1", h->database_url,
             RT_TEST_BIN_DIR, args);
    FILE *pipe = popen(cmd, "r");
    assert_non_null(pipe);
    char *all = NULL;
    size_t size = 0;
    FILE *mem = open_memstream(&all, &size);
    size_t n;
    while ((n = fread(out, 1, sizeof out, pipe)) > 0) fwrite(out, 1, n, mem);
    fclose(mem);
    assert_int_equal(pclose(pipe), 0);
    return all;
}

static void assert_text(rt_ch *h, const char *sql, const char *want)
{
    char *v = rt_ch_sql_text(h, sql, 0, NULL);
    if (!v || strcmp(v, want)) fail_msg("%s: got '%s', want '%s'", sql, v ? v : "(null)", want);
    free(v);
}

/* ---- scenarios ---- */

static void test_failing_on_3_of_7_configurations_is_one_pooled_regression(void **state)
{
    rt_ch *h = *state;
    const char *platforms[] = {GWX_PLATFORM,   GWX_PLATFORM,   GWX_PLATFORM,   "linux1804-64",
                               "linux1804-64", "windows11-64", "macosx1015-64"};
    const char *labels[] = {"test-android-em-7.0-x86_64/debug-mochitest-e10s-1",
                            "test-android-em-7.0-x86_64/opt-mochitest-e10s-1",
                            "test-android-em-7.0-x86_64/asan-mochitest-e10s-1",
                            "test-linux1804-64/debug-mochitest-browser-chrome-3",
                            "test-linux1804-64/opt-mochitest-browser-chrome-3",
                            "test-windows11-64/opt-mochitest-browser-chrome-3",
                            "test-macosx1015-64/opt-mochitest-browser-chrome-3"};
    const bool failed[] = {true, true, true, false, false, false, false};
    /* A clean record: three configurations failing at once is news. */
    store_history(h, 0, 7, platforms, labels, failed);
    start_all(h);
    char group[23], tasks[3][23];
    rt_ch_slugid(group);
    /* The push's tasks are in its task group before any fails (the decision task made
     * them): the pooled set waits for the three of its family to join. */
    for (size_t i = 0; i < 3; i++) define_failing_task(h, group, i == 0, labels[i], tasks[i]);
    for (size_t i = 0; i < 3; i++) publish_failure(h, group, tasks[i]);
    /* Pulse delivers the first failure twice: it joins once all the same. */
    char *again = rt_ch_failed_message(GWX_PULSE, tasks[0], group);
    rt_ch_publish(h, "task-failed", again, strlen(again), GWX_ROUTE, NULL);
    free(again);

    /* One pooled set for (push, test), its 3 failing configurations joined once each. */
    assert_int_equal(
        rt_ch_wait_int(h, WAIT_MS, 3, "SELECT count(*) FROM pooled_set_members", 0, NULL), 3);

    assert_int_equal(rt_ch_wait_int(h, WAIT_MS, 3,
                                    "SELECT count(*) FROM decisions WHERE pool_id IS NOT NULL", 0,
                                    NULL),
                     3);
    struct timespec pause = {1, 500000000L}; /* the repeated delivery has been handled */
    nanosleep(&pause, NULL);
    assert_int_equal(rt_ch_sql_int(h, "SELECT count(*) FROM pooled_set_members", 0, NULL), 3);
    assert_text(h,
                "SELECT count(*) || '/' || min(test) || '/' || min(state) || '/' || min(verdict)"
                " || '/' || min(reason) || '/' || min(rounds) || '/' || min(retriggers)"
                " FROM pooled_sets",
                "1/" TEST_NAME "/decided/regression/confident/0/0");
    /* The first failure opened it; asked for no retrigger per task. */
    assert_text(h, "SELECT string_agg(m.config, ',' ORDER BY m.config) FROM pooled_set_members m",
                GWX_PLATFORM "/asan," GWX_PLATFORM "/debug," GWX_PLATFORM "/opt");
    assert_text(h, "SELECT sum(retrigger_count + later_retriggers)::text FROM retrigger_sets", "0");
    /* Every decision points at the pooled verdict, with every configuration's evidence. */
    assert_text(h,
                "SELECT string_agg(DISTINCT d.verdict || '/' || d.policy || '/' ||"
                " (d.pool_id = p.id) || '/' || jsonb_array_length(d.evidence #> '{pool,configs}')"
                " || '/' || (d.evidence #>> '{pool,seed,verdict}') || '/' ||"
                " (d.p_regression >= 0.95) || '/' || (d.evidence #>> '{policy,name}') || '/' ||"
                " d.shadow_policy, ',') FROM decisions d, pooled_sets p",
                "regression/pooled/true/7/undecided/true/pooled/adaptive");
    assert_text(h,
                "SELECT string_agg(c->>'config' || '=' || (c->>'push_run'), ',' ORDER BY"
                " c->>'config') FROM pooled_sets p, jsonb_array_elements(p.evidence->'configs') c",
                GWX_PLATFORM "/asan=failed," GWX_PLATFORM "/debug=failed," GWX_PLATFORM
                             "/opt=failed,linux1804-64/debug=passed,linux1804-64/opt=passed,"
                             "macosx1015-64/opt=passed,windows11-64/opt=passed");
    /* At most one round: here the push's own runs sufficed, no budget was spent. */
    assert_int_equal(rt_ch_sql_int(h, "SELECT count(*) FROM retrigger_rounds", 0, NULL), 0);
    assert_int_equal(
        rt_ch_sql_int(h, "SELECT coalesce(sum(amount), 0) FROM budget_ledger", 0, NULL), 0);
    size_t calls = 0;
    assert_int_equal(hook_times(h, &calls), 0);
    assert_int_equal(rt_ch_queue_depth(h, "dead-letter"), 0);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);

    /* retrig explain of any failing task: every configuration's evidence in one table. */
    char args[64];
    snprintf(args, sizeof args, "explain %s", tasks[1]);
    char *out = retrig(h, args);
    static const char *const want[] = {
        "the pooled verdict (pooled set ",
        TEST_NAME " on every configuration of the push)",
        "regression (confident), p_regression 1.000; 0 round(s), 0 retrigger(s) asked for",
        "config                                   push run retriggers reproduced pending",
        "linux1804-64/opt                         passed            0          0       0\n",
        "policy pooled: p_regression 1.000",
        "  <- this set",
        "the seed rule on this task's own runs: undecided (no-usable-retriggers)"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (!strstr(out, want[i])) fail_msg("retrig explain lacks '%s':\n%s", want[i], out);
    size_t failing = 0;
    for (const char *at = out; (at = strstr(at, "failed            0          0       0")); at++)
        failing++;
    if (failing != 3) fail_msg("retrig explain: %zu failing configurations:\n%s", failing, out);
    free(out);

    /* The sheriffs' page: the same table in each of the three decisions. */
    char *dir = rt_test_tempdir();
    snprintf(args, sizeof args, "report --decisions --out %s/decisions.html", dir);
    free(retrig(h, args));
    char path[512];
    snprintf(path, sizeof path, "%s/decisions.html", dir);
    size_t len = 0;
    char *page = rt_test_read_file(path, &len);
    size_t tables = 0, history_rows = 0;
    for (const char *at = page; (at = strstr(at, "<h3>The pooled verdict: every configuration"));
         at++)
        tables++;
    for (const char *at = page; (at = strstr(at, "<td>passed</td><td>0</td><td>0</td><td>0</td>"
                                                 "<td>test history</td>"));
         at++)
        history_rows++;
    if (tables != 3 || history_rows != 12 || !strstr(page, "linux1804-64/debug</td>") ||
        !strstr(page, " (this one)"))
        fail_msg("the decisions page: %zu pooled tables, %zu passing configurations", tables,
                 history_rows);
    free(page);
    char rm[600];
    snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
    if (system(rm) != 0) fail_msg("cannot remove %s", dir);
    free(dir);
}

static void test_failing_on_1_of_7_is_intermittent_retriggering_only_it(void **state)
{
    rt_ch *h = *state;
    const char *platforms[] = {GWX_PLATFORM,   "linux1804-64",  "linux1804-64", "windows11-64",
                               "windows11-64", "macosx1015-64", "macosx1015-64"};
    const char *labels[] = {"test-android-em-7.0-x86_64/debug-mochitest-e10s-1",
                            "test-linux1804-64/debug-mochitest-browser-chrome-3",
                            "test-linux1804-64/opt-mochitest-browser-chrome-3",
                            "test-windows11-64/debug-mochitest-browser-chrome-3",
                            "test-windows11-64/opt-mochitest-browser-chrome-3",
                            "test-macosx1015-64/debug-mochitest-browser-chrome-3",
                            "test-macosx1015-64/opt-mochitest-browser-chrome-3"};
    const bool failed[] = {true, false, false, false, false, false, false};
    /* A rare flake (1 failure in 1,000 runs elsewhere) failing on one configuration: the
     * six passes are not quite enough (a known flake, 20 in 1,000, would be decided with no
     * retrigger at all), one round of that configuration is. */
    store_history(h, 1, 7, platforms, labels, failed);
    start_all(h);
    char group[23], original[23];
    rt_ch_slugid(group);
    fail_task(h, group, true, labels[0], original);

    /* After the settle window: a round of the failing configuration's set, triggered once. */
    assert_int_equal(rt_ch_wait_int(h, WAIT_MS, 1,
                                    "SELECT count(*) FROM retrigger_actions WHERE round = 2"
                                    " AND outcome = 'triggered'",
                                    0, NULL),
                     1);
    long long asked = rt_ch_sql_int(h, "SELECT sum(retriggers) FROM retrigger_rounds", 0, NULL);
    assert_true(asked >= 1);
    assert_int_equal(rt_ch_sql_int(h, "SELECT count(*) FROM decisions", 0, NULL), 0);
    char want[64];
    snprintf(want, sizeof want, "1/%lld/open", asked);
    assert_text(h, "SELECT rounds || '/' || retriggers || '/' || state FROM pooled_sets", want);

    /* Exactly once: retrig-decide killed and restarted, then a repeated decide request of
     * the set, ask for nothing more. */
    rt_ch_restart_worker(h, 2, SIGKILL); /* retrig-decide */
    char *set_id = rt_ch_sql_text(h, "SELECT id::text FROM retrigger_sets", 0, NULL);
    assert_non_null(set_id);
    char body[256];
    snprintf(body, sizeof body,
             "{\"version\": 1, \"set_id\": %s, \"project\": \"autoland\", \"reason\": "
             "\"pool-settled\", \"attempt\": 1}",
             set_id);
    free(set_id);
    rt_amqp_publish_opts opts = {.message_id = "pooled-test-redelivery"};
    assert_int_equal(rt_amqp_publish(h->amqp, h->ns, "decide", body, strlen(body), &opts), RT_OK);
    struct timespec pause = {1, 500000000L};
    nanosleep(&pause, NULL);
    assert_int_equal(rt_ch_sql_int(h, "SELECT count(*) FROM retrigger_rounds", 0, NULL), 1);

    /* Every round's retriggers pass, until the pooled set decides (the model may want a
     * further round; each is asked once, of the failing configuration only). */
    long long passed = 0, rounds = 1;
    for (;;) {
        for (; passed < asked; passed++) {
            char task_id[23];
            pass_retrigger(h, group, labels[0], task_id);
        }
        char wait_sql[256];
        snprintf(wait_sql, sizeof wait_sql,
                 "SELECT (SELECT count(*) FROM decisions) + (SELECT count(*) FROM"
                 " retrigger_actions WHERE outcome = 'triggered' AND round > %lld)",
                 rounds + 1);
        assert_int_equal(rt_ch_wait_int(h, WAIT_MS, 1, wait_sql, 0, NULL), 1);
        if (rt_ch_sql_int(h, "SELECT count(*) FROM decisions", 0, NULL) == 1) break;
        rounds++;
        asked = rt_ch_sql_int(h, "SELECT sum(retriggers) FROM retrigger_rounds", 0, NULL);
        assert_true(asked <= 10); /* decide_max_retriggers for the whole test */
    }
    assert_int_equal(rt_ch_wait_int(h, WAIT_MS, 1, "SELECT count(*) FROM decisions", 0, NULL), 1);
    assert_int_equal(rounds, 1); /* the model's one round (common/core/decide_pool.h) */
    snprintf(want, sizeof want, "intermittent/%lld/intermittent/pooled/true/true", rounds);
    assert_text(h,
                "SELECT p.verdict || '/' || p.rounds || '/' || d.verdict || '/' || d.policy ||"
                " '/' || (d.pool_id = p.id) || '/' || (d.p_regression < 0.5)"
                " FROM pooled_sets p, decisions d",
                want);
    /* Only the failing configuration was retriggered, within its platform's budget. */
    snprintf(want, sizeof want, "%s/debug=%lld/%lld", GWX_PLATFORM, asked, rounds);
    assert_text(h,
                "SELECT string_agg(DISTINCT m.config, ',') || '=' || sum(r.retriggers) || '/' ||"
                " count(*) FROM retrigger_rounds r JOIN pooled_set_members m"
                " ON m.set_id = r.set_id",
                want);
    size_t calls = 0;
    assert_int_equal(hook_times(h, &calls), asked);
    assert_int_equal(calls, rounds);
    assert_int_equal(rt_ch_budget_counter(h, GWX_PLATFORM), asked);
    assert_int_equal(
        rt_ch_sql_int(h, "SELECT coalesce(sum(amount), 0) FROM budget_ledger", 0, NULL), asked);
    assert_int_equal(rt_ch_queue_depth(h, "dead-letter"), 0);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
}

/* A task of the push in the task group (its label's family is what the settle window
 * waits for), with its platform; state NULL: completed. */
static void group_task(rt_ch *h, const char *group, const char *label, const char *platform,
                       const char *state, char task_id[23])
{
    rt_ch_slugid(task_id);
    json_t *def = rt_ch_task_definition(GWX_DEF, group, label);
    json_t *machine =
        json_object_get(json_object_get(json_object_get(def, "extra"), "treeherder"), "machine");
    assert_non_null(machine);
    json_object_set_new(machine, "platform", json_string(platform));
    json_t *s = json_pack("{s:{s:o}}", "tasks", task_id, def);
    if (state) json_object_set_new(s, "statuses", json_pack("{s:{s:s}}", task_id, "state", state));
    rt_ch_scenario(h, s);
    json_decref(s);
}

/* What retrig-history stores of a task's run on the push: its run of the test's group. */
static void record_push_run(rt_ch *h, const char *task_id, const char *platform, const char *label,
                            bool failed)
{
    char key[200]; /* "<taskId>/0", sized for any task id buffer the callers pass */
    snprintf(key, sizeof key, "%s/0", task_id);
    const char *params[] = {key,          platform,          label, TEST_NAME, TEST_GROUP,
                            GWX_REVISION, failed ? "t" : "f"};
    assert_int_equal(
        rt_ch_sql_int(h,
                      "WITH r AS (INSERT INTO history_runs (source, run_key, repository, project,"
                      " branch, branch_class, branch_key, push, revision, platform, label, run_at,"
                      " complete_results) VALUES ('taskcluster', $1, 'gecko', 'autoland',"
                      " 'autoland', 'main', 'autoland', '88560', $6, $2, $3, now(), false)"
                      " RETURNING id, run_at),"
                      " g AS (INSERT INTO history_groups (run_id, run_at, group_name, status,"
                      " failed) SELECT id, run_at, $5, CASE WHEN $7::boolean THEN 'ERROR' ELSE"
                      " 'OK' END, $7::boolean FROM r RETURNING 1),"
                      " t AS (INSERT INTO history_tests (run_id, run_at, test, group_name,"
                      " status, failed) SELECT id, run_at, $4, $5, 'FAIL', true FROM r WHERE"
                      " $7::boolean RETURNING 1)"
                      " SELECT (SELECT count(*) FROM g) + (SELECT count(*) FROM t)",
                      7, params),
        failed ? 2 : 1);
}

/* The settle window ends when the push's other tasks of the test's group have finished, not
 * at its time (an hour here): while one of them runs the pooled set waits; once its run is
 * in the test history the pooled set decides at the next sweep. */
static void test_settle_window_ends_when_the_push_tasks_finished(void **state)
{
    rt_ch *h = *state;
    rt_ch_setenv(h, "DECIDE_POOL_SETTLE_S", "3600");
    const char *platforms[] = {GWX_PLATFORM,   GWX_PLATFORM,   GWX_PLATFORM,   "linux1804-64",
                               "linux1804-64", "windows11-64", "macosx1015-64"};
    const char *labels[] = {"test-android-em-7.0-x86_64/debug-mochitest-browser-chrome-1",
                            "test-android-em-7.0-x86_64/opt-mochitest-browser-chrome-2",
                            "test-android-em-7.0-x86_64/asan-mochitest-browser-chrome-1",
                            "test-linux1804-64/debug-mochitest-browser-chrome-3",
                            "test-linux1804-64/opt-mochitest-browser-chrome-3",
                            "test-windows11-64/opt-mochitest-browser-chrome-5",
                            "test-macosx1015-64/opt-mochitest-browser-chrome-3"};
    store_history(h, 0, 0, NULL, NULL, NULL); /* the test's clean record elsewhere */
    char group[23], tasks[7][23], other[23];
    rt_ch_slugid(group);
    /* The push's other tasks of the family: three passed (their runs recorded), one still
     * running, and one of another suite still running (not waited for). */
    for (size_t i = 3; i < 7; i++) {
        group_task(h, group, labels[i], platforms[i], i == 6 ? "running" : NULL, tasks[i]);
        if (i != 6) record_push_run(h, tasks[i], platforms[i], labels[i], false);
    }
    group_task(h, group, "test-macosx1015-64/opt-xpcshell-2", "macosx1015-64", "running", other);
    /* One of the family ended in an exception: the history never records it, it is done. */
    group_task(h, group, "test-linux2204-64/opt-mochitest-browser-chrome-1", "linux2204-64",
               "exception", other);
    start_all(h);
    for (size_t i = 0; i < 3; i++) {
        fail_task(h, group, i == 0, labels[i], tasks[i]);
        record_push_run(h, tasks[i], platforms[i], labels[i], true);
    }
    assert_int_equal(
        rt_ch_wait_int(h, WAIT_MS, 3, "SELECT count(*) FROM pooled_set_members", 0, NULL), 3);
    /* Every task of the family recorded once, the other suite's not. */
    assert_int_equal(
        rt_ch_wait_int(h, WAIT_MS, 8, "SELECT count(*) FROM pooled_set_tasks", 0, NULL), 8);
    assert_int_equal(rt_ch_sql_int(h,
                                   "SELECT count(*) FROM pooled_set_tasks WHERE label LIKE"
                                   " '%xpcshell%' OR state = 'running' AND config <>"
                                   " 'macosx1015-64/opt'",
                                   0, NULL),
                     0);
    /* The macOS task runs: several sweeps later the pooled set still waits. */
    struct timespec pause = {3, 0};
    nanosleep(&pause, NULL);
    assert_text(h, "SELECT state FROM pooled_sets", "settling");
    assert_int_equal(rt_ch_sql_int(h, "SELECT count(*) FROM decisions", 0, NULL), 0);

    /* It passes and retrig-history records it: the pooled set decides, far before its hour. */
    record_push_run(h, tasks[6], platforms[6], labels[6], false);
    assert_int_equal(rt_ch_wait_int(h, WAIT_MS, 3,
                                    "SELECT count(*) FROM decisions WHERE pool_id IS NOT NULL", 0,
                                    NULL),
                     3);
    assert_text(h,
                "SELECT state || '/' || verdict || '/' || rounds || '/' ||"
                " (settle_until > now() + interval '50 minutes') || '/' ||"
                " jsonb_array_length(evidence->'configs') FROM pooled_sets",
                "decided/regression/0/true/7");
    assert_text(h,
                "SELECT string_agg(c->>'config' || '=' || (c->>'push_run'), ',' ORDER BY"
                " c->>'config') FROM pooled_sets p, jsonb_array_elements(p.evidence->'configs') c",
                GWX_PLATFORM "/asan=failed," GWX_PLATFORM "/debug=failed," GWX_PLATFORM
                             "/opt=failed,linux1804-64/debug=passed,linux1804-64/opt=passed,"
                             "macosx1015-64/opt=passed,windows11-64/opt=passed");
    assert_int_equal(rt_ch_queue_depth(h, "dead-letter"), 0);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
}

/* The configurations of the one-failing scenario: the failing one first. */
static const char *const ONE_PLATFORMS[] = {GWX_PLATFORM,   "linux1804-64", "linux1804-64",
                                            "windows11-64", "windows11-64", "macosx1015-64",
                                            "macosx1015-64"};
static const char *const ONE_LABELS[] = {"test-android-em-7.0-x86_64/debug-mochitest-e10s-1",
                                         "test-linux1804-64/debug-mochitest-browser-chrome-3",
                                         "test-linux1804-64/opt-mochitest-browser-chrome-3",
                                         "test-windows11-64/debug-mochitest-browser-chrome-3",
                                         "test-windows11-64/opt-mochitest-browser-chrome-3",
                                         "test-macosx1015-64/debug-mochitest-browser-chrome-3",
                                         "test-macosx1015-64/opt-mochitest-browser-chrome-3"};

/* A decide request of a set, as a redelivery of the one a crashed worker held. */
static void request_decide(rt_ch *h, const char *set_sql, const char *message_id)
{
    char *set_id = rt_ch_sql_text(h, set_sql, 0, NULL);
    assert_non_null(set_id);
    char body[256];
    snprintf(body, sizeof body,
             "{\"version\": 1, \"set_id\": %s, \"project\": \"autoland\", \"reason\": "
             "\"pool-settled\", \"attempt\": 1}",
             set_id);
    free(set_id);
    rt_amqp_publish_opts opts = {.message_id = message_id};
    assert_int_equal(rt_amqp_publish(h->amqp, h->ns, "decide", body, strlen(body), &opts), RT_OK);
}

/* Recovery: a pooled round written to Postgres whose retrigger request never went out (a
 * crash between the two) is published by the next look, once. */
static void test_round_written_not_published_is_published_once(void **state)
{
    rt_ch *h = *state;
    const bool failed[] = {true, false, false, false, false, false, false};
    store_history(h, 1, 7, ONE_PLATFORMS, ONE_LABELS, failed);
    /* No retrig-retrigger yet: the round's request waits in its queue. */
    rt_ch_start_workers(h, 1);
    rt_ch_start_program(h, "retrig-decide", 1);
    char group[23], original[23];
    rt_ch_slugid(group);
    fail_task(h, group, true, ONE_LABELS[0], original);
    assert_int_equal(rt_ch_wait_int(h, WAIT_MS, 1,
                                    "SELECT count(*) FROM retrigger_rounds WHERE round = 2"
                                    " AND published_at IS NOT NULL",
                                    0, NULL),
                     1);
    /* The crash: the request lost, the round's row not marked published. The set's other
     * requests (its first round's) go back to the queue. */
    char round_id[64];
    long long set_id = rt_ch_sql_int(h, "SELECT set_id FROM retrigger_rounds", 0, NULL);
    snprintf(round_id, sizeof round_id, "retrigger-set-%lld-round-2", set_id);
    unsigned depth = rt_ch_wait_queue_depth(h, "retrigger", 1, WAIT_MS);
    assert_true(depth >= 1);
    rt_ch_message *msgs = NULL;
    rt_ch_take(h, "retrigger", depth, WAIT_MS, &msgs);
    /* The test stops consuming: retrig-retrigger is to get what is published from now. */
    assert_int_equal(rt_amqp_stop_consuming(h->amqp), RT_OK);
    memset(h->consuming, 0, sizeof h->consuming);
    size_t lost = 0;
    for (size_t i = 0; i < depth; i++) {
        if (msgs[i].message_id && !strcmp(msgs[i].message_id, round_id)) {
            lost++;
            continue;
        }
        rt_amqp_publish_opts opts = {.message_id = msgs[i].message_id};
        assert_int_equal(
            rt_amqp_publish(h->amqp, h->ns, "retrigger", msgs[i].body, strlen(msgs[i].body), &opts),
            RT_OK);
    }
    rt_ch_messages_free(msgs, depth);
    assert_int_equal(lost, 1);
    assert_int_equal(rt_ch_sql_int(h,
                                   "WITH u AS (UPDATE retrigger_rounds SET published_at = NULL"
                                   " RETURNING 1) SELECT count(*) FROM u",
                                   0, NULL),
                     1);
    rt_ch_restart_worker(h, 1, SIGKILL); /* retrig-decide */
    long long asked = rt_ch_sql_int(h, "SELECT retriggers FROM retrigger_rounds", 0, NULL);
    assert_true(asked >= 1);

    /* The redelivered decide request: the round is published, its retriggers asked once. */
    rt_ch_start_program(h, "retrig-retrigger", 1);
    request_decide(h, "SELECT id::text FROM retrigger_sets", "pooled-test-recover-1");
    assert_int_equal(rt_ch_wait_int(h, WAIT_MS, 1,
                                    "SELECT count(*) FROM retrigger_actions WHERE round = 2"
                                    " AND outcome = 'triggered'",
                                    0, NULL),
                     1);
    assert_int_equal(rt_ch_sql_int(h,
                                   "SELECT count(*) FROM retrigger_rounds WHERE published_at"
                                   " IS NOT NULL",
                                   0, NULL),
                     1);
    /* Further looks publish nothing more. */
    request_decide(h, "SELECT id::text FROM retrigger_sets", "pooled-test-recover-2");
    struct timespec pause = {1, 500000000L};
    nanosleep(&pause, NULL);
    size_t calls = 0;
    assert_int_equal(hook_times(h, &calls), asked);
    assert_int_equal(calls, 1);
    assert_int_equal(rt_ch_sql_int(h, "SELECT count(*) FROM retrigger_rounds", 0, NULL), 1);
    assert_text(h, "SELECT rounds || '/' || state FROM pooled_sets", "1/open");
    assert_int_equal(rt_ch_budget_counter(h, GWX_PLATFORM), asked);
    assert_int_equal(
        rt_ch_sql_int(h, "SELECT coalesce(sum(amount), 0) FROM budget_ledger", 0, NULL), asked);
    assert_int_equal(rt_ch_queue_depth(h, "dead-letter"), 0);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
}

/* Recovery: a failing task's set that never joined its pooled set (retrig-classify died
 * between the set's commit and the join) joins it at decide time and gets the pooled
 * verdict with the others. */
static void test_set_never_joined_joins_at_decide_time(void **state)
{
    rt_ch *h = *state;
    rt_ch_setenv(h, "DECIDE_POOL_SETTLE_S", "3600");
    const char *platforms[] = {GWX_PLATFORM,   GWX_PLATFORM,   GWX_PLATFORM,   "linux1804-64",
                               "linux1804-64", "windows11-64", "macosx1015-64"};
    const char *labels[] = {"test-android-em-7.0-x86_64/debug-mochitest-e10s-1",
                            "test-android-em-7.0-x86_64/opt-mochitest-e10s-1",
                            "test-android-em-7.0-x86_64/asan-mochitest-e10s-1",
                            "test-linux1804-64/debug-mochitest-e10s-3",
                            "test-linux1804-64/opt-mochitest-e10s-3",
                            "test-windows11-64/opt-mochitest-e10s-3",
                            "test-macosx1015-64/opt-mochitest-e10s-3"};
    store_history(h, 0, 0, NULL, NULL, NULL);
    char group[23], tasks[7][23];
    rt_ch_slugid(group);
    /* The passing configurations' tasks: recorded but the last, still running. */
    for (size_t i = 3; i < 7; i++) {
        group_task(h, group, labels[i], platforms[i], i == 6 ? "running" : NULL, tasks[i]);
        if (i != 6) record_push_run(h, tasks[i], platforms[i], labels[i], false);
    }
    for (size_t i = 0; i < 3; i++) define_failing_task(h, group, i == 0, labels[i], tasks[i]);
    start_all(h);
    for (size_t i = 0; i < 3; i++) {
        publish_failure(h, group, tasks[i]);
        record_push_run(h, tasks[i], platforms[i], labels[i], true);
    }
    assert_int_equal(
        rt_ch_wait_int(h, WAIT_MS, 3, "SELECT count(*) FROM pooled_set_members", 0, NULL), 3);
    /* The crash: the asan task's set is not a member. */
    const char *asan[] = {labels[2]};
    assert_int_equal(rt_ch_sql_int(h,
                                   "WITH d AS (DELETE FROM pooled_set_members m USING"
                                   " retrigger_sets s WHERE s.id = m.set_id AND s.label = $1"
                                   " RETURNING 1) SELECT count(*) FROM d",
                                   1, asan),
                     1);
    /* Its decide request: it joins at decide time, once. */
    request_decide(h,
                   "SELECT id::text FROM retrigger_sets WHERE label ="
                   " 'test-android-em-7.0-x86_64/asan-mochitest-e10s-1'",
                   "pooled-test-join");
    assert_int_equal(rt_ch_wait_int(h, WAIT_MS, 1,
                                    "SELECT count(*) FROM pooled_set_members m JOIN"
                                    " retrigger_sets s ON s.id = m.set_id WHERE s.label LIKE"
                                    " '%/asan-%' AND m.config = '" GWX_PLATFORM "/asan'",
                                    0, NULL),
                     1);
    assert_int_equal(rt_ch_sql_int(h, "SELECT count(*) FROM decisions", 0, NULL), 0);
    /* The last task passes: one pooled verdict, the recovered set a member with the rest. */
    record_push_run(h, tasks[6], platforms[6], labels[6], false);
    assert_int_equal(rt_ch_wait_int(h, WAIT_MS, 3,
                                    "SELECT count(*) FROM decisions d JOIN pooled_sets p"
                                    " ON p.id = d.pool_id WHERE p.verdict = 'regression'",
                                    0, NULL),
                     3);
    assert_text(h,
                "SELECT count(*) || '/' || count(c->>'set_id') FROM pooled_sets p,"
                " jsonb_array_elements(p.evidence->'configs') c",
                "7/3");
    assert_int_equal(rt_ch_sql_int(h, "SELECT count(*) FROM pooled_set_members", 0, NULL), 3);
    assert_int_equal(rt_ch_queue_depth(h, "dead-letter"), 0);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
}

/* The deadline: a pooled set whose retriggers never finish decides with what it has at
 * decide_pool_deadline_minutes, the missing retriggers left out, and asks no more. */
static void test_retriggers_never_finishing_decide_at_the_deadline(void **state)
{
    rt_ch *h = *state;
    rt_ch_setenv(h, "DECIDE_POOL_DEADLINE_MINUTES", "1");
    const bool failed[] = {true, false, false, false, false, false, false};
    store_history(h, 1, 7, ONE_PLATFORMS, ONE_LABELS, failed);
    start_all(h);
    char group[23], original[23];
    rt_ch_slugid(group);
    fail_task(h, group, true, ONE_LABELS[0], original);
    assert_int_equal(rt_ch_wait_int(h, WAIT_MS, 1,
                                    "SELECT count(*) FROM retrigger_actions WHERE round = 2"
                                    " AND outcome = 'triggered'",
                                    0, NULL),
                     1);
    long long asked = rt_ch_sql_int(h, "SELECT retriggers FROM retrigger_rounds", 0, NULL);
    /* The pooled set's deadline is the setting's minute; its retriggers never come. The
     * clock is moved rather than waited for. */
    assert_text(h, "SELECT (deadline_at - opened_at)::text || '/' || state FROM pooled_sets",
                "00:01:00/open");
    struct timespec pause = {2, 0};
    nanosleep(&pause, NULL);
    assert_int_equal(rt_ch_sql_int(h, "SELECT count(*) FROM decisions", 0, NULL), 0);
    assert_int_equal(rt_ch_sql_int(h,
                                   "WITH u AS (UPDATE pooled_sets SET deadline_at = now(),"
                                   " opened_at = now() - interval '1 minute' RETURNING 1)"
                                   " SELECT count(*) FROM u",
                                   0, NULL),
                     1);
    assert_int_equal(rt_ch_wait_int(h, WAIT_MS, 1,
                                    "SELECT count(*) FROM decisions WHERE pool_id IS NOT NULL", 0,
                                    NULL),
                     1);
    /* Six passing configurations and no reproduction: intermittent, for the deadline. */
    assert_text(h,
                "SELECT p.state || '/' || p.verdict || '/' || p.reason || '/' || p.rounds || '/'"
                " || d.verdict || '/' || (p.p_regression < 0.5) || '/' ||"
                " (d.evidence #>> '{pool,configs,0,pending}')"
                " FROM pooled_sets p JOIN decisions d ON d.pool_id = p.id",
                "decided/intermittent/deadline/1/intermittent/true/0");
    /* No round after it, no budget beyond the one round's. */
    pause.tv_sec = 1;
    nanosleep(&pause, NULL);
    assert_int_equal(rt_ch_sql_int(h, "SELECT count(*) FROM retrigger_rounds", 0, NULL), 1);
    size_t calls = 0;
    assert_int_equal(hook_times(h, &calls), asked);
    assert_int_equal(calls, 1);
    assert_int_equal(
        rt_ch_sql_int(h, "SELECT coalesce(sum(amount), 0) FROM budget_ledger", 0, NULL), asked);
    assert_int_equal(rt_ch_queue_depth(h, "dead-letter"), 0);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_failing_on_3_of_7_configurations_is_one_pooled_regression, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failing_on_1_of_7_is_intermittent_retriggering_only_it,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_settle_window_ends_when_the_push_tasks_finished, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_round_written_not_published_is_published_once, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_set_never_joined_joins_at_decide_time, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_retriggers_never_finishing_decide_at_the_deadline,
                                        setup, teardown),
    };
    /* RT_TEST_FILTER=<glob> runs only the scenarios it names (one at a time, by hand). */
    if (getenv("RT_TEST_FILTER")) cmocka_set_test_filter(getenv("RT_TEST_FILTER"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
