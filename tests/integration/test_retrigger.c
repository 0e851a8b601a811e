/* SPDX-License-Identifier: MPL-2.0 */
/* test_retrigger.c - retrig-retrigger end to end: real worker processes on the local
 * RabbitMQ, Redis and Postgres, the fake upstream playing Taskcluster (the recorded
 * actions.json, Hawk-checked hooks) and Treeherder. Pins the "Done when" points of issue
 * 4: exactly one trigger per set under dropped connections and SIGKILLs, dry-run, a
 * sheriff's classification before the trigger (budget returned), the rendered payload as
 * the action's template implies, 401 and unknown sets dead-lettered. Sets are inserted
 * directly, as retrig-classify would have written them. Each test has its own database,
 * Redis prefix and AMQP namespace (support/classify_harness.h). */
#include "support/util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/io/http.h"
#include "support/classify_harness.h"

#define DECISION   "HkX-TbGXQaSX4ucqGMQNBA"
#define DEC_FIX    "taskcluster/task_definition_build-android-api-16-debug.json"
#define TASK_FIX   "taskcluster/task_definition_GWxTc8p_RUa5_Xo4RtMiCA.json"
#define ACTIONS    "taskcluster/actions.json"
#define CLIENT_ID  "project/retrig/x"
#define TOKEN      "fake-access-token-0123456789"
#define HOOK_GROUP "project-gecko"
#define HOOK_ID    "in-tree-action-3-generic/9353e8f146"
#define HOOK_PATH  "/api/hooks/v1/hooks/project-gecko/in-tree-action-3-generic%2F9353e8f146/trigger"
#define SCOPE      "hooks:trigger-hook:project-gecko/in-tree-action-3-generic/9353e8f146"
#define PROJECT    "autoland"
#define REVISION   "b437ae030825a8ea9fa7a632b1fcb9becbe11f69"
#define PLATFORM   "linux1804-64"
#define TASK_QUEUE "gecko-t/t-linux-large"
#define LABEL      "test-linux1804-64/opt-mochitest-browser-chrome-e10s"
#define WAIT_MS    20000

static const char SQL_OUTCOMES[] =
    "SELECT count(*) FROM retrigger_actions WHERE outcome IS NOT NULL";
static const char SQL_LEDGER_SUM[] = "SELECT coalesce(sum(amount), 0) FROM budget_ledger"
                                     " WHERE platform = $1 AND day = $2::date";

/* A set as retrig-classify writes it: row, ledger spend and Redis counter. */
typedef struct test_set {
    long long id;
    char id_text[32];
    char label[160];
    char original[23];
    int times;
} test_set;

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* The decision task (its own group, as a decision task is), its actions.json (the recorded
 * one, moved to this push), the client. */
static void load_push(rt_ch *h)
{
    json_t *scenario =
        json_pack("{s:{s:{s:s, s:{s:s}}}, s:{s:{s:[o]}}, s:{s:s}}", "tasks", DECISION, "fixture",
                  DEC_FIX, "override", "taskGroupId", DECISION, "artifacts", DECISION, "0",
                  rt_ch_actions_artifact(DECISION, REVISION), "hook_clients", CLIENT_ID, TOKEN);
    rt_ch_scenario(h, scenario);
    json_decref(scenario);
}

static void redis_incrby(rt_ch *h, const char *platform, int amount)
{
    char key[256], by[16];
    snprintf(key, sizeof key, "%sbudget:%s:%s", h->redis_prefix, platform, rt_ch_today());
    snprintf(by, sizeof by, "%d", amount);
    const char *argv[] = {"INCRBY", key, by};
    redisReply *reply = NULL;
    if (rt_redis_command_argv(h->redis, 3, argv, NULL, &reply) != RT_OK)
        fail_msg("redis INCRBY: %s", rt_redis_errstr(h->redis));
    freeReplyObject(reply);
}

static void insert_set(rt_ch *h, test_set *s, const char *label, int times)
{
    memset(s, 0, sizeof *s);
    snprintf(s->label, sizeof s->label, "%s", label);
    s->times = times;
    rt_ch_slugid(s->original);
    char count[16];
    snprintf(count, sizeof count, "%d", times);
    const char *params[] = {PROJECT,     REVISION, label,    PLATFORM,
                            s->original, count,    DECISION, TASK_QUEUE};
    s->id =
        rt_ch_sql_int(h,
                      "INSERT INTO retrigger_sets (project, revision, label, platform,"
                      " original_task_id, original_run_id, retrigger_count, task_group_id,"
                      " task_queue_id, request_published_at)"
                      " VALUES ($1, $2, $3, $4, $5, 0, $6::integer, $7, $8, now()) RETURNING id",
                      8, params);
    assert_true(s->id > 0);
    snprintf(s->id_text, sizeof s->id_text, "%lld", s->id);
    const char *lparams[] = {PLATFORM, rt_ch_today(), count, s->id_text};
    assert_int_equal(rt_ch_sql_int(h,
                                   "INSERT INTO budget_ledger (platform, day, amount,"
                                   " idempotency_key, set_id, reason) VALUES ($1, $2::date,"
                                   " $3::integer, 'set:' || $4, $4::bigint, 'retrigger')"
                                   " RETURNING 1",
                                   4, lparams),
                     1);
    redis_incrby(h, PLATFORM, times);
    /* The original task: the recorded GWxTc8p test task of this push (autoland, level 3). */
    json_t *scenario = json_pack("{s:{s:o}}", "tasks", s->original,
                                 rt_ch_task_definition(TASK_FIX, DECISION, label));
    rt_ch_scenario(h, scenario);
    json_decref(scenario);
}

/* The retrigger request retrig-classify would publish for the set (any set_id). */
static void publish_request(rt_ch *h, long long set_id, const test_set *s)
{
    json_t *req =
        json_pack("{s:i, s:I, s:s, s:s, s:s, s:s, s:i, s:s, s:s, s:s, s:i, s:s, s:[], "
                  "s:[]}",
                  "version", 1, "set_id", (json_int_t)set_id, "project", PROJECT, "revision",
                  REVISION, "label", s->label, "task_id", s->original, "run_id", 0, "task_group_id",
                  DECISION, "platform", PLATFORM, "task_queue_id", TASK_QUEUE, "times", s->times,
                  "requested_at", "2024-05-01T10:00:00Z", "failing_groups", "failures");
    char *body = json_dumps(req, JSON_COMPACT);
    json_decref(req);
    assert_non_null(body);
    char message_id[64];
    snprintf(message_id, sizeof message_id, "retrigger-set-%lld", set_id);
    rt_amqp_publish_opts opts = {.message_id = message_id};
    if (rt_amqp_publish(h->amqp, h->ns, "retrigger", body, strlen(body), &opts) != RT_OK)
        fail_msg("publish: %s", rt_amqp_errstr(h->amqp));
    free(body);
}

/* A column of the set's retrigger_actions row (malloc'd, NULL when absent or NULL). */
static char *action_field(rt_ch *h, const test_set *s, const char *column)
{
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT %s::text FROM retrigger_actions WHERE set_id = $1::bigint",
             column);
    const char *params[] = {s->id_text};
    return rt_ch_sql_text(h, sql, 1, params);
}

static char *set_field(rt_ch *h, const test_set *s, const char *column)
{
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT %s::text FROM retrigger_sets WHERE id = $1::bigint", column);
    const char *params[] = {s->id_text};
    return rt_ch_sql_text(h, sql, 1, params);
}

static void wait_outcomes(rt_ch *h, long long want)
{
    long long got = rt_ch_wait_int(h, WAIT_MS, want, SQL_OUTCOMES, 0, NULL);
    if (got != want) fail_msg("%lld of %lld sets have an outcome", got, want);
}

static void assert_field(rt_ch *h, const test_set *s, const char *column, const char *want)
{
    char *v = action_field(h, s, column);
    if (!want) {
        if (v) fail_msg("retrigger_actions.%s is %s, expected NULL", column, v);
    } else {
        if (!v) fail_msg("retrigger_actions.%s is NULL, expected %s", column, want);
        assert_string_equal(v, want);
    }
    free(v);
}

static size_t upstream_calls(rt_ch *h, const char *prefix)
{
    json_t *calls = rt_fake_calls(&h->fake, prefix);
    assert_non_null(calls);
    size_t n = json_array_size(calls);
    json_decref(calls);
    return n;
}

/* The hookPayload of the fixture's retrigger-multiple as its template implies for this
 * input: the decision part is literal, user is {input, taskGroupId, taskId} by $eval. */
static json_t *template_payload(const char *label, int times)
{
    json_error_t error;
    json_t *file = json_load_file(rt_test_fixture(ACTIONS), 0, &error);
    assert_non_null(file);
    json_t *payload = NULL;
    size_t i;
    json_t *action;
    json_array_foreach(json_object_get(file, "actions"), i, action)
    {
        const char *name = json_string_value(json_object_get(action, "name"));
        if (name && !strcmp(name, "retrigger-multiple")) {
            payload = json_deep_copy(json_object_get(action, "hookPayload"));
            break;
        }
    }
    json_decref(file);
    assert_non_null(payload);
    /* The recorded push's actions.json, moved to ours (as the fake serves it). */
    json_t *decision = json_object_get(payload, "decision");
    json_object_set_new(json_object_get(decision, "action"), "taskGroupId", json_string(DECISION));
    json_object_set_new(json_object_get(decision, "push"), "revision", json_string(REVISION));
    json_t *user = json_object_get(payload, "user");
    assert_non_null(user);
    /* The template's user part, checked, before it is replaced by its values. */
    json_t *want_user =
        json_pack("{s:{s:s}, s:{s:s}, s:{s:s}}", "input", "$eval", "input", "taskGroupId", "$eval",
                  "taskGroupId", "taskId", "$eval", "taskId");
    assert_true(json_equal(user, want_user));
    json_decref(want_user);
    json_object_set_new(payload, "user",
                        json_pack("{s:{s:[{s:[s], s:i}]}, s:s, s:n}", "input", "requests", "tasks",
                                  label, "times", times, "taskGroupId", DECISION, "taskId"));
    return payload;
}

static int setup(void **state)
{
    rt_ch *h = rt_ch_new();
    load_push(h);
    rt_ch_setenv(h, "TASKCLUSTER_CLIENT_ID", CLIENT_ID);
    rt_ch_setenv(h, "TASKCLUSTER_ACCESS_TOKEN", TOKEN);
    rt_ch_setenv(h, "DRY_RUN", "false");
    *state = h;
    return 0;
}

static int teardown(void **state)
{
    rt_ch_free(*state);
    return 0;
}

/* ---- 1. exactly once ---- */

#define CHAOS_SETS  100
#define CHAOS_KILLS 10

static void test_dropped_calls_and_sigkills_trigger_every_label_exactly_once(void **state)
{
    rt_ch *h = *state;
    /* The connection breaks after the hook acted in one trigger call out of five; the
     * others take a while, as Taskcluster's do, so kills land in the middle of calls. */
    assert_int_equal(rt_fake_add_fault(&h->fake,
                                       "[{\"kind\": \"drop_mid_body\", \"path_prefix\":"
                                       " \"/api/hooks/\", \"every\": 5},"
                                       " {\"kind\": \"latency\", \"ms\": 150, \"path_prefix\":"
                                       " \"/api/hooks/\"}]"),
                     200);
    rt_ch_setenv(h, "RETRY_DELAYS_MS", "300,600,1000,1500,2000,3000,4000,5000");
    rt_ch_setenv(h, "HTTP_TIMEOUT_MS", "2000");
    rt_ch_setenv(h, "HTTP_CONNECT_TIMEOUT_MS", "1000");
    rt_ch_start_program(h, "retrig-retrigger", 2);

    test_set *sets = calloc(CHAOS_SETS, sizeof *sets);
    assert_non_null(sets);
    for (int i = 0; i < CHAOS_SETS; i++) {
        char label[160];
        snprintf(label, sizeof label, "%s-%d", LABEL, i + 1);
        insert_set(h, &sets[i], label, 1 + i % 5);
    }
    for (int i = 0; i < CHAOS_SETS; i++) {
        publish_request(h, sets[i].id, &sets[i]);
        if (i % 10 == 0) publish_request(h, sets[i].id, &sets[i]); /* a duplicate */
    }

    int kills = 0;
    while (kills < CHAOS_KILLS && rt_ch_sql_int(h, SQL_OUTCOMES, 0, NULL) < CHAOS_SETS) {
        sleep_ms(500 + (int)(random() % 1000));
        rt_ch_restart_worker(h, (size_t)(random() % 2), SIGKILL);
        kills++;
    }
    long long done = rt_ch_wait_int(h, 40000, CHAOS_SETS, SQL_OUTCOMES, 0, NULL);
    if (done != CHAOS_SETS)
        fail_msg("%lld of %d sets finished after %d kills", done, CHAOS_SETS, kills);
    assert_true(kills > 0);

    /* What the fake saw: one trigger per label, each creating one action task. */
    json_t *triggers = rt_fake_triggers(&h->fake);
    assert_non_null(triggers);
    json_t *by_label = json_object(); /* label -> [action task ids] */
    size_t i;
    json_t *t;
    json_array_foreach(triggers, i, t)
    {
        json_t *requests = json_object_get(
            json_object_get(json_object_get(json_object_get(t, "payload"), "user"), "input"),
            "requests");
        size_t k, m;
        json_t *req, *label;
        json_array_foreach(requests, k, req)
        {
            json_array_foreach(json_object_get(req, "tasks"), m, label)
            {
                const char *l = json_string_value(label);
                assert_non_null(l);
                json_t *ids = json_object_get(by_label, l);
                if (!ids) json_object_set_new(by_label, l, ids = json_array());
                json_array_append(ids, json_object_get(t, "taskId"));
            }
        }
    }
    assert_int_equal(json_object_size(by_label), CHAOS_SETS);
    long long found_existing = 0;
    for (int s = 0; s < CHAOS_SETS; s++) {
        json_t *ids = json_object_get(by_label, sets[s].label);
        if (json_array_size(ids) != 1)
            fail_msg("label %s was triggered %zu times", sets[s].label, json_array_size(ids));
        const char *task = json_string_value(json_array_get(ids, 0));
        char *outcome = action_field(h, &sets[s], "outcome");
        assert_non_null(outcome);
        if (strcmp(outcome, "triggered") != 0 && strcmp(outcome, "found-existing") != 0)
            fail_msg("set %s: outcome %s", sets[s].label, outcome);
        if (!strcmp(outcome, "found-existing")) found_existing++;
        free(outcome);
        assert_field(h, &sets[s], "action_task_id", task);
        char *status = set_field(h, &sets[s], "status");
        char *set_task = set_field(h, &sets[s], "action_task_id");
        assert_string_equal(status, "requested");
        assert_non_null(set_task);
        assert_string_equal(set_task, task);
        free(status);
        free(set_task);
    }
    /* Every dropped call had created its task: those sets can only have found it. */
    json_t *calls = rt_fake_calls(&h->fake, "/api/hooks/");
    long long dropped = 0;
    json_array_foreach(calls, i, t)
    {
        const char *fault = json_string_value(json_object_get(t, "fault"));
        if (fault && !strcmp(fault, "drop_mid_body")) dropped++;
    }
    assert_int_equal(dropped, json_array_size(calls) / 5); /* every 5th call */
    assert_true(dropped >= CHAOS_SETS / 5);
    assert_true(found_existing >= dropped);
    assert_int_equal(rt_ch_queue_depth(h, "dead-letter"), 0);
    fprintf(stderr, "# %d kills, %zu trigger calls, %lld dropped, %lld found-existing\n", kills,
            json_array_size(calls), dropped, found_existing);
    json_decref(calls);
    json_decref(by_label);
    json_decref(triggers);
    free(sets);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
}

/* ---- 2. dry-run ---- */

static void test_dry_run_records_the_payload_and_sends_no_post(void **state)
{
    rt_ch *h = *state;
    rt_ch_setenv(h, "DRY_RUN", "true");
    rt_ch_start_program(h, "retrig-retrigger", 1);
    test_set s;
    insert_set(h, &s, LABEL "-dry", 3);
    publish_request(h, s.id, &s);
    wait_outcomes(h, 1);

    assert_field(h, &s, "outcome", "dry-run");
    assert_field(h, &s, "dry_run", "true");
    assert_field(h, &s, "action_task_id", NULL);
    assert_field(h, &s, "hook_group_id", HOOK_GROUP);
    assert_field(h, &s, "hook_id", HOOK_ID);
    char *text = action_field(h, &s, "payload");
    assert_non_null(text);
    json_t *recorded = json_loads(text, 0, NULL);
    json_t *want = template_payload(s.label, 3);
    if (!json_equal(recorded, want)) fail_msg("recorded payload %s", text);
    json_decref(recorded);
    json_decref(want);
    free(text);

    /* Everything ran (actions.json, Treeherder) except the call. */
    assert_true(upstream_calls(h, "/api/queue/v1/task/" DECISION "/artifacts/") >= 1);
    assert_true(upstream_calls(h, "/api/jobs/") >= 1);
    assert_int_equal(upstream_calls(h, "/api/hooks/"), 0);
    json_t *triggers = rt_fake_triggers(&h->fake);
    assert_int_equal(json_array_size(triggers), 0);
    json_decref(triggers);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
}

/* ---- 3. classified before the trigger ---- */

static void test_classification_before_trigger_stops_it_and_returns_the_budget(void **state)
{
    rt_ch *h = *state;
    test_set other, s;
    insert_set(h, &other, LABEL "-other", 2); /* spent today on the platform, not ours */
    const char *lparams[] = {PLATFORM, rt_ch_today()};
    long long ledger_before = rt_ch_sql_int(h, SQL_LEDGER_SUM, 2, lparams);
    insert_set(h, &s, LABEL "-classified", 4);
    int counter_before = rt_ch_budget_counter(h, PLATFORM);
    assert_int_equal(rt_ch_sql_int(h, SQL_LEDGER_SUM, 2, lparams), ledger_before + 4);
    assert_int_equal(counter_before, 6);
    /* A sheriff classified the original as intermittent (4) after retrig-classify saw it. */
    json_t *scenario = json_pack("{s:{s:[{s:i, s:i, s:s, s:s, s:i}]}}", "jobs", s.original, "id",
                                 304000001, "retry_id", 0, "result", "testfailed", "state",
                                 "completed", "failure_classification_id", 4);
    rt_ch_scenario(h, scenario);
    json_decref(scenario);

    rt_ch_start_program(h, "retrig-retrigger", 1);
    publish_request(h, s.id, &s);
    wait_outcomes(h, 1);

    assert_field(h, &s, "outcome", "classified-before-trigger");
    assert_field(h, &s, "action_task_id", NULL);
    char *status = set_field(h, &s, "status");
    assert_string_equal(status, "failed");
    free(status);
    assert_int_equal(upstream_calls(h, "/api/hooks/"), 0);
    assert_int_equal(rt_ch_sql_int(h, SQL_LEDGER_SUM, 2, lparams), ledger_before);
    const char *rparams[] = {s.id_text};
    assert_int_equal(rt_ch_sql_int(h,
                                   "SELECT amount FROM budget_ledger WHERE idempotency_key ="
                                   " 'refund:set:' || $1",
                                   1, rparams),
                     -4);
    assert_int_equal(rt_ch_budget_counter(h, PLATFORM), counter_before - 4);

    /* A redelivery refunds nothing twice. */
    publish_request(h, s.id, &s);
    char queue[256];
    snprintf(queue, sizeof queue, "%s.retrigger", h->ns);
    rt_ch_settle(h, "retrig-retrigger", queue, 1, WAIT_MS);
    assert_int_equal(rt_ch_sql_int(h, SQL_LEDGER_SUM, 2, lparams), ledger_before);
    assert_int_equal(rt_ch_budget_counter(h, PLATFORM), counter_before - 4);
}

/* ---- 4. the payload ---- */

static void test_triggered_payload_is_what_the_retrigger_multiple_template_implies(void **state)
{
    rt_ch *h = *state;
    rt_ch_start_program(h, "retrig-retrigger", 1);
    test_set s;
    insert_set(h, &s, LABEL "-payload", 5);
    publish_request(h, s.id, &s);
    wait_outcomes(h, 1);
    assert_field(h, &s, "outcome", "triggered");

    json_t *triggers = rt_fake_triggers(&h->fake);
    assert_int_equal(json_array_size(triggers), 1);
    json_t *t = json_array_get(triggers, 0);
    assert_string_equal(json_string_value(json_object_get(t, "hookGroupId")), HOOK_GROUP);
    assert_string_equal(json_string_value(json_object_get(t, "hookId")), HOOK_ID);
    assert_string_equal(json_string_value(json_object_get(t, "clientId")), CLIENT_ID);
    json_t *payload = json_object_get(t, "payload");
    assert_int_equal(json_object_size(payload), 2); /* decision, user */

    /* decision: literal in the template, sent as is. */
    json_t *action = json_object_get(json_object_get(payload, "decision"), "action");
    const char *fields[][2] = {
        {"cb_name", "retrigger-multiple"}, {"description", "Create a clone of the task."},
        {"name", "retrigger-multiple"},    {"symbol", "rt"},
        {"taskGroupId", DECISION},         {"title", "Retrigger"},
    };
    assert_int_equal(json_object_size(action), 6);
    for (size_t i = 0; i < 6; i++)
        assert_string_equal(json_string_value(json_object_get(action, fields[i][0])), fields[i][1]);
    json_t *push = json_object_get(json_object_get(payload, "decision"), "push");
    assert_string_equal(json_string_value(json_object_get(push, "revision")), REVISION);
    assert_string_equal(json_string_value(json_object_get(push, "pushlog_id")), "109591");
    json_t *repo = json_object_get(json_object_get(payload, "decision"), "repository");
    assert_string_equal(json_string_value(json_object_get(repo, "project")), "autoland");
    assert_string_equal(json_string_value(json_object_get(repo, "level")), "3");

    /* user: the $evals of input, taskGroupId and taskId. */
    json_t *user = json_object_get(payload, "user");
    assert_int_equal(json_object_size(user), 3);
    json_t *requests = json_object_get(json_object_get(user, "input"), "requests");
    assert_int_equal(json_object_size(json_object_get(user, "input")), 1);
    assert_int_equal(json_array_size(requests), 1);
    json_t *req = json_array_get(requests, 0);
    assert_int_equal(json_object_size(req), 2);
    json_t *tasks = json_object_get(req, "tasks");
    assert_int_equal(json_array_size(tasks), 1);
    assert_string_equal(json_string_value(json_array_get(tasks, 0)), s.label);
    assert_int_equal(json_integer_value(json_object_get(req, "times")), 5);
    assert_string_equal(json_string_value(json_object_get(user, "taskGroupId")), DECISION);
    assert_true(json_is_null(json_object_get(user, "taskId")));

    /* The whole payload, as the template implies, and as recorded. */
    json_t *want = template_payload(s.label, 5);
    assert_true(json_equal(payload, want));
    json_decref(want);
    char *recorded = action_field(h, &s, "payload");
    json_t *rec = json_loads(recorded, 0, NULL);
    assert_true(json_equal(rec, payload));
    json_decref(rec);
    free(recorded);

    /* One call, Hawk-valid, to the escaped hook path; its task recorded. */
    json_t *calls = rt_fake_calls(&h->fake, "/api/hooks/");
    assert_int_equal(json_array_size(calls), 1);
    json_t *call = json_array_get(calls, 0);
    assert_string_equal(json_string_value(json_object_get(call, "path")), HOOK_PATH);
    assert_true(json_is_true(json_object_get(json_object_get(call, "hawk"), "valid")));
    json_decref(calls);
    const char *task = json_string_value(json_object_get(t, "taskId"));
    assert_field(h, &s, "action_task_id", task);
    assert_field(h, &s, "attempts", "1");
    char *set_task = set_field(h, &s, "action_task_id");
    assert_string_equal(set_task, task);
    free(set_task);
    json_decref(triggers);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
}

/* ---- 5. refused credentials ---- */

static void test_refused_credentials_dead_letter_naming_the_scope_and_worker_lives(void **state)
{
    rt_ch *h = *state;
    rt_ch_setenv(h, "TASKCLUSTER_ACCESS_TOKEN", "not-the-token");
    rt_ch_start_program(h, "retrig-retrigger", 1);
    test_set refused, next;
    insert_set(h, &refused, LABEL "-refused", 2);
    publish_request(h, refused.id, &refused);

    rt_ch_message *dead = NULL;
    rt_ch_take(h, "dead-letter", 1, WAIT_MS, &dead);
    assert_non_null(dead[0].reason);
    if (!strstr(dead[0].reason, SCOPE)) fail_msg("dead-letter reason: %s", dead[0].reason);
    assert_non_null(strstr(dead[0].reason, "401"));
    assert_non_null(strstr(dead[0].reason, CLIENT_ID));
    rt_ch_messages_free(dead, 1);
    assert_field(h, &refused, "outcome", NULL);
    char *error = action_field(h, &refused, "error");
    assert_non_null(error);
    assert_non_null(strstr(error, SCOPE));
    free(error);
    json_t *calls = rt_fake_calls(&h->fake, "/api/hooks/");
    assert_int_equal(json_array_size(calls), 1); /* refused once, not retried */
    assert_int_equal(json_integer_value(json_object_get(json_array_get(calls, 0), "status")), 401);
    json_decref(calls);

    /* Still running: once Taskcluster knows this token, the next request goes through. */
    assert_int_equal(waitpid(rt_ch_worker_pid(h, 0), NULL, WNOHANG), 0);
    json_t *scenario = json_pack("{s:{s:s}}", "hook_clients", CLIENT_ID, "not-the-token");
    rt_ch_scenario(h, scenario);
    json_decref(scenario);
    insert_set(h, &next, LABEL "-next", 1);
    publish_request(h, next.id, &next);
    wait_outcomes(h, 1);
    assert_field(h, &next, "outcome", "triggered");
    json_t *triggers = rt_fake_triggers(&h->fake);
    assert_int_equal(json_array_size(triggers), 1);
    json_decref(triggers);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
}

/* ---- 6. an actions.json that names a hook retrig may not call ---- */

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

/* The sample of `series` on the worker's /metrics (0 when absent). */
static double metric(int port, const char *series)
{
    rt_http *http = NULL;
    rt_http_options opts = {.max_attempts = 1, .timeout_ms = 5000, .connect_timeout_ms = 1000};
    assert_int_equal(rt_http_new(&http, &opts, NULL), RT_OK);
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/metrics", port);
    rt_http_response resp;
    double value = 0;
    if (rt_http_get(http, url, &resp) == RT_OK) {
        const char *line = strstr(resp.body, series);
        if (line) value = strtod(line + strlen(series), NULL);
    }
    rt_http_response_free(&resp);
    rt_http_free(http);
    return value;
}

/* The autoland push's own actions.json names a release-promotion hook of another group (a
 * push writes its actions.json itself). Taskcluster would accept the call (the fake knows
 * the hook and the client): retrig must refuse it before signing, record refused-hook,
 * give the budget back, dead-letter the request and count it. */
static void test_a_foreign_hook_in_actions_json_is_refused_and_never_sent(void **state)
{
    rt_ch *h = *state;
    json_t *artifact = rt_ch_actions_artifact(DECISION, REVISION);
    json_object_set_new(json_object_get(artifact, "replace"), "\"project-gecko\"",
                        json_string("\"project-releng\""));
    json_object_set_new(json_object_get(artifact, "replace"), HOOK_ID,
                        json_string("in-tree-action-3-release-promotion/abc"));
    json_t *scenario = json_pack("{s:{s:{s:[o]}}, s:[{s:s, s:s}]}", "artifacts", DECISION, "0",
                                 artifact, "hooks", "hookGroupId", "project-releng", "hookId",
                                 "in-tree-action-3-release-promotion/abc");
    rt_ch_scenario(h, scenario);
    json_decref(scenario);
    int port = free_port();
    char port_text[16];
    snprintf(port_text, sizeof port_text, "%d", port);
    rt_ch_setenv(h, "METRICS_PORT", port_text);
    rt_ch_start_program(h, "retrig-retrigger", 1);

    test_set s;
    insert_set(h, &s, LABEL "-foreign", 3);
    int counter_before = rt_ch_budget_counter(h, PLATFORM);
    publish_request(h, s.id, &s);
    rt_ch_message *dead = NULL;
    rt_ch_take(h, "dead-letter", 1, WAIT_MS, &dead);
    assert_non_null(dead[0].reason);
    if (strncmp(dead[0].reason, "refused-hook: hookGroupId project-releng", 40) != 0)
        fail_msg("dead-letter reason: %s", dead[0].reason);
    rt_ch_messages_free(dead, 1);

    assert_field(h, &s, "outcome", "refused-hook");
    assert_field(h, &s, "action_task_id", NULL);
    char *error = action_field(h, &s, "error");
    assert_non_null(error);
    assert_non_null(strstr(error, "project-releng"));
    free(error);
    char *status = set_field(h, &s, "status");
    assert_string_equal(status, "failed");
    free(status);
    /* Never sent: no call reached the hooks service, none was signed. */
    assert_int_equal(upstream_calls(h, "/api/hooks/"), 0);
    json_t *triggers = rt_fake_triggers(&h->fake);
    assert_int_equal(json_array_size(triggers), 0);
    json_decref(triggers);
    assert_int_equal(rt_ch_budget_counter(h, PLATFORM), counter_before - 3);
    assert_true(
        metric(port, "retrig_hooks_refused_total{worker=\"retrigger\",reason=\"hook-group\"} ") ==
        1);
    assert_true(metric(port, "retrig_retrigger_actions_total{outcome=\"refused-hook\"} ") == 1);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
}

/* A task whose schedulerId is not its project's level (a level-1 task on an autoland push)
 * is refused as well, with the recorded, untouched autoland actions.json. */
static void test_a_task_of_another_level_is_refused(void **state)
{
    rt_ch *h = *state;
    rt_ch_start_program(h, "retrig-retrigger", 1);
    test_set s;
    insert_set(h, &s, LABEL "-level1", 2);
    json_t *def = rt_ch_task_definition(TASK_FIX, DECISION, s.label);
    json_object_set_new(def, "schedulerId", json_string("gecko-level-1"));
    json_t *scenario = json_pack("{s:{s:o}}", "tasks", s.original, def);
    rt_ch_scenario(h, scenario);
    json_decref(scenario);
    publish_request(h, s.id, &s);
    rt_ch_message *dead = NULL;
    rt_ch_take(h, "dead-letter", 1, WAIT_MS, &dead);
    if (!strstr(dead[0].reason, "schedulerId gecko-level-1 is not gecko-level-3"))
        fail_msg("dead-letter reason: %s", dead[0].reason);
    rt_ch_messages_free(dead, 1);
    assert_field(h, &s, "outcome", "refused-hook");
    assert_int_equal(upstream_calls(h, "/api/hooks/"), 0);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
}

/* The replacement of every hookPayload's `"$eval": "input"` that makes the template ignore
 * retrig's input: 200 labels x 100 runs (malloc'd). */
static char *greedy_input(void)
{
    json_t *tasks = json_array();
    for (int i = 0; i < 200; i++) json_array_append_new(tasks, json_sprintf(LABEL "-%d", i));
    json_t *request = json_pack("{s:o, s:i}", "tasks", tasks, "times", 100);
    char *text = json_dumps(request, JSON_COMPACT);
    json_decref(request);
    assert_non_null(text);
    size_t len = strlen(text);
    memmove(text, text + 1, len - 2); /* the members, without the braces */
    text[len - 2] = '\0';
    char *out = NULL;
    assert_true(asprintf(&out, "\"requests\": [{%s}]", text) > 0);
    free(text);
    return out;
}

/* The push's actions.json renders retrigger-multiple with its own input, 200 labels x 100
 * runs, whatever retrig passes (issue 30): the hook, the group and the push are the right
 * ones, so only the input tells. retrig refuses it before signing (refused-hook, the reason
 * naming user.input), never calls the hook, and the set's budget, charged for the 3 runs
 * retrig asked, is given back. */
static void test_a_template_that_ignores_our_input_is_refused_and_never_sent(void **state)
{
    rt_ch *h = *state;
    json_t *artifact = rt_ch_actions_artifact(DECISION, REVISION);
    char *greedy = greedy_input();
    json_object_set_new(json_object_get(artifact, "replace"), "\"$eval\": \"input\"",
                        json_string(greedy));
    free(greedy);
    json_t *scenario = json_pack("{s:{s:{s:[o]}}}", "artifacts", DECISION, "0", artifact);
    rt_ch_scenario(h, scenario);
    json_decref(scenario);
    int port = free_port();
    char port_text[16];
    snprintf(port_text, sizeof port_text, "%d", port);
    rt_ch_setenv(h, "METRICS_PORT", port_text);
    rt_ch_start_program(h, "retrig-retrigger", 1);

    test_set s;
    insert_set(h, &s, LABEL "-greedy", 3);
    int counter_before = rt_ch_budget_counter(h, PLATFORM);
    publish_request(h, s.id, &s);
    rt_ch_message *dead = NULL;
    rt_ch_take(h, "dead-letter", 1, WAIT_MS, &dead);
    assert_non_null(dead[0].reason);
    if (strncmp(dead[0].reason, "refused-hook: ", 14) != 0 ||
        !strstr(dead[0].reason, "user.input is another input"))
        fail_msg("dead-letter reason: %s", dead[0].reason);
    rt_ch_messages_free(dead, 1);

    assert_field(h, &s, "outcome", "refused-hook");
    assert_field(h, &s, "action_task_id", NULL);
    char *error = action_field(h, &s, "error");
    assert_non_null(error);
    assert_non_null(strstr(error, "user.input"));
    free(error);
    char *status = set_field(h, &s, "status");
    assert_string_equal(status, "failed");
    free(status);
    /* Never sent, never signed. */
    assert_int_equal(upstream_calls(h, "/api/hooks/"), 0);
    json_t *triggers = rt_fake_triggers(&h->fake);
    assert_int_equal(json_array_size(triggers), 0);
    json_decref(triggers);
    /* The budget: the 3 runs charged are back in Redis and in the ledger. */
    assert_int_equal(rt_ch_budget_counter(h, PLATFORM), counter_before - 3);
    const char *lparams[] = {PLATFORM, rt_ch_today()};
    assert_int_equal(rt_ch_sql_int(h, SQL_LEDGER_SUM, 2, lparams), 0);
    assert_true(
        metric(port, "retrig_hooks_refused_total{worker=\"retrigger\",reason=\"input\"} ") == 1);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
}

/* Taskcluster refuses the first round's hook call itself (400: nothing is created, asking
 * again cannot help). The round fails for good: outcome failed, its budget back, the
 * request dead-lettered. A set with runs of the label already on the push then goes on to
 * its decision with them (its retriggers leave it, status requested) where it used to stay
 * open with retriggers that would never come; one without any failed. */
static void test_a_hook_call_refused_by_taskcluster_ends_the_round(void **state)
{
    rt_ch *h = *state;
    assert_int_equal(rt_fake_add_fault(&h->fake, "{\"kind\": \"status\", \"status\": 400,"
                                                 " \"path_prefix\": \"/api/hooks/\"}"),
                     200);
    rt_ch_start_program(h, "retrig-retrigger", 1);
    test_set with_found, alone;
    insert_set(h, &with_found, LABEL "-found", 2);
    insert_set(h, &alone, LABEL "-alone", 3);
    const char *fparams[] = {with_found.id_text};
    assert_int_equal(rt_ch_sql_int(h,
                                   "UPDATE retrigger_sets SET found_count = 1"
                                   " WHERE id = $1::bigint RETURNING 1",
                                   1, fparams),
                     1);
    int counter_before = rt_ch_budget_counter(h, PLATFORM);
    publish_request(h, with_found.id, &with_found);
    publish_request(h, alone.id, &alone);
    rt_ch_message *dead = NULL;
    rt_ch_take(h, "dead-letter", 2, WAIT_MS, &dead);
    for (int i = 0; i < 2; i++)
        if (!dead[i].reason || !strstr(dead[i].reason, "upstream-error: hook trigger"))
            fail_msg("dead-letter reason: %s", dead[i].reason ? dead[i].reason : "(none)");
    rt_ch_messages_free(dead, 2);
    wait_outcomes(h, 2);
    assert_field(h, &with_found, "outcome", "failed");
    assert_field(h, &alone, "outcome", "failed");
    char *status = set_field(h, &with_found, "status");
    assert_string_equal(status, "requested");
    free(status);
    char *count = set_field(h, &with_found, "retrigger_count");
    assert_string_equal(count, "0");
    free(count);
    status = set_field(h, &alone, "status");
    assert_string_equal(status, "failed");
    free(status);
    assert_int_equal(upstream_calls(h, "/api/hooks/"), 2); /* once each, not retried */
    assert_int_equal(rt_ch_budget_counter(h, PLATFORM), counter_before - 5);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
}

/* ---- 7. unknown sets ---- */

static void test_request_for_unknown_set_is_retried_then_dead_lettered(void **state)
{
    rt_ch *h = *state;
    rt_ch_start_program(h, "retrig-retrigger", 1);
    test_set ghost = {.times = 2};
    snprintf(ghost.label, sizeof ghost.label, "%s-ghost", LABEL);
    rt_ch_slugid(ghost.original);
    publish_request(h, 987654321, &ghost);

    rt_ch_message *dead = NULL;
    rt_ch_take(h, "dead-letter", 1, WAIT_MS, &dead);
    assert_non_null(dead[0].reason);
    if (strncmp(dead[0].reason, "unknown-set: 987654321", 22) != 0 ||
        !strstr(dead[0].reason, "after 2 retries"))
        fail_msg("dead-letter reason: %s", dead[0].reason);
    assert_string_equal(dead[0].message_id, "retrigger-set-987654321");
    rt_ch_messages_free(dead, 1);
    assert_int_equal(rt_ch_sql_int(h, "SELECT count(*) FROM retrigger_actions", 0, NULL), 0);
    assert_int_equal(upstream_calls(h, "/api/"), 0);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_dropped_calls_and_sigkills_trigger_every_label_exactly_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dry_run_records_the_payload_and_sends_no_post, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_classification_before_trigger_stops_it_and_returns_the_budget, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_triggered_payload_is_what_the_retrigger_multiple_template_implies, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_refused_credentials_dead_letter_naming_the_scope_and_worker_lives, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_a_foreign_hook_in_actions_json_is_refused_and_never_sent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_task_of_another_level_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_template_that_ignores_our_input_is_refused_and_never_sent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_hook_call_refused_by_taskcluster_ends_the_round,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_request_for_unknown_set_is_retried_then_dead_lettered,
                                        setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
