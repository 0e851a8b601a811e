/* SPDX-License-Identifier: MPL-2.0 */
/* test_set_tracking.c - retrig-classify recognising retriggered runs as members of their
 * retrigger set (issue 4, "Set tracking"): real classify replicas on the local RabbitMQ,
 * Redis and Postgres, the fake upstream serving the recorded GWxTc8p fixture. A set is
 * created through classify from the recorded failure; its retriggers are the recorded
 * message with new task ids, as Pulse would deliver them. Each resolved member asks
 * retrig-decide to look (<ns>.decide, queue-schemas/decide-request.json); the set becomes
 * complete, with one "set-complete" request, when every requested retrigger resolved. */
#include "support/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/classify_harness.h"

#define GWX       "GWxTc8p_RUa5_Xo4RtMiCA"
#define GWX_PULSE "pulse/treeherder_task-completed_GWxTc8p_RUa5_Xo4RtMiCA.json"
#define GWX_DEF   "taskcluster/task_definition_GWxTc8p_RUa5_Xo4RtMiCA.json"
#define GWX_GROUP "HkX-TbGXQaSX4ucqGMQNBA"
#define GWX_REV   "b437ae030825a8ea9fa7a632b1fcb9becbe11f69"
#define GWX_ROUTE "tc-treeherder.v2.autoland." GWX_REV ".88560"
#define GWX_LABEL "test-android-em-7.0-x86_64/debug-mochitest-e10s-1"
#define ES_FAIL   "errorsummary/mochitest-browser-chrome_errorsummary.log"
#define OTHER_REV "0123456789abcdef0123456789abcdef01234567"
#define MEMBERS   5
#define WAIT_MS   20000

static const char SQL_MEMBERS[] =
    "SELECT count(*) FROM retrigger_set_members WHERE set_id = $1::bigint AND role = 'retrigger'"
    " AND state IN ('completed', 'failed', 'exception')";

typedef struct tracked {
    rt_ch *h;
    long long set_id;
    char set_text[32];
    char members[MEMBERS][23];
} tracked;

/* The recorded failure, and its errorsummary, through classify: a set of 5 retriggers. */
static void create_set(tracked *t, size_t workers)
{
    rt_ch *h = t->h;
    json_t *scenario =
        json_pack("{s:{s:{s:[{s:s, s:s}, {s:s, s:s}]}}}", "artifacts", GWX, "0", "name",
                  "public/logs/live_backing.log", "content", "[taskcluster] recorded log\n", "name",
                  "public/test_info/mochitest_errorsummary.log", "fixture", ES_FAIL);
    rt_ch_scenario(h, scenario);
    json_decref(scenario);
    rt_ch_start_workers(h, workers);
    char *body = rt_ch_failed_message(GWX_PULSE, NULL, NULL);
    rt_ch_publish(h, "task-failed", body, strlen(body), GWX_ROUTE, NULL);
    free(body);
    assert_string_equal(rt_ch_wait_verdict(h, GWX, 0, WAIT_MS), "retrigger/eligible");
    const char *params[] = {GWX};
    t->set_id =
        rt_ch_sql_int(h, "SELECT id FROM retrigger_sets WHERE original_task_id = $1", 1, params);
    assert_true(t->set_id > 0);
    snprintf(t->set_text, sizeof t->set_text, "%lld", t->set_id);
    const char *sparams[] = {t->set_text};
    assert_int_equal(
        rt_ch_sql_int(h, "SELECT retrigger_count FROM retrigger_sets WHERE id = $1", 1, sparams),
        MEMBERS);
}

/* The recorded message of GWxTc8p as a run of another task of its push: a new task id,
 * completed or failed, with task.tags.label when `tagged` (a modern message). The task's
 * definition (the recorded one: same label and push) is served by the fake. */
static char *member_message(rt_ch *h, const char *task_id, bool failed, bool tagged)
{
    json_t *def = rt_ch_task_definition(GWX_DEF, NULL, NULL);
    json_t *scenario = json_pack("{s:{s:o}}", "tasks", task_id, def);
    rt_ch_scenario(h, scenario);
    json_decref(scenario);

    json_t *body;
    if (failed) {
        char *text = rt_ch_failed_message(GWX_PULSE, task_id, NULL);
        body = json_loads(text, 0, NULL);
        free(text);
    } else {
        json_t *wrapper = json_load_file(rt_test_fixture(GWX_PULSE), 0, NULL);
        assert_non_null(wrapper);
        body = json_incref(json_object_get(wrapper, "payload"));
        json_decref(wrapper);
        json_object_set_new(json_object_get(body, "status"), "taskId", json_string(task_id));
    }
    assert_non_null(body);
    if (tagged)
        json_object_set_new(body, "task", json_pack("{s:{s:s}}", "tags", "label", GWX_LABEL));
    char *text = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    assert_non_null(text);
    return text;
}

static void publish_member(rt_ch *h, const char *task_id, bool failed, bool tagged,
                           const char *route)
{
    char *body = member_message(h, task_id, failed, tagged);
    rt_ch_publish(h, failed ? "task-failed" : "task-completed", body, strlen(body), route, NULL);
    free(body);
}

/* Waits for every member and the complete status, stops the workers once the Pulse queue
 * is drained, and returns the decide requests published (*count of them). */
static rt_ch_message *settle_and_take_decides(tracked *t, size_t workers, size_t *count)
{
    rt_ch *h = t->h;
    const char *params[] = {t->set_text};
    long long members = rt_ch_wait_int(h, WAIT_MS, MEMBERS, SQL_MEMBERS, 1, params);
    if (members != MEMBERS) fail_msg("%lld of %d members resolved", members, MEMBERS);
    /* The last member joins in one transaction and marks the set complete in the next. */
    long long complete = rt_ch_wait_int(
        h, WAIT_MS, 1, "SELECT count(*) FROM retrigger_sets WHERE id = $1 AND status = 'complete'",
        1, params);
    if (complete != 1) fail_msg("the set did not become complete");
    rt_ch_settle(h, "retrig-classify", h->pulse_queue, workers, WAIT_MS);
    *count = rt_ch_queue_depth(h, "decide");
    rt_ch_message *decides = NULL;
    rt_ch_take(h, "decide", *count, WAIT_MS, &decides);
    return decides;
}

/* Every decide request is valid, about this set, and exactly one says the set is complete. */
static void assert_one_set_complete(tracked *t, rt_ch_message *decides, size_t count)
{
    size_t complete = 0;
    for (size_t i = 0; i < count; i++) {
        char *error = NULL;
        if (rt_ch_validate_schema(rt_test_source("queue-schemas/decide-request.json"),
                                  decides[i].body, &error) != 0)
            fail_msg("decide request %s:\n%s", decides[i].body, error);
        free(error);
        json_t *req = json_loads(decides[i].body, 0, NULL);
        assert_int_equal(json_integer_value(json_object_get(req, "set_id")), t->set_id);
        assert_string_equal(json_string_value(json_object_get(req, "project")), "autoland");
        assert_int_equal(json_integer_value(json_object_get(req, "attempt")), 1);
        const char *reason = json_string_value(json_object_get(req, "reason"));
        if (!strcmp(reason, "set-complete")) {
            complete++;
        } else if (strncmp(reason, "member-resolved: ", 17) != 0) {
            fail_msg("decide reason %s", reason);
        } else {
            bool known = false;
            for (size_t m = 0; m < MEMBERS; m++)
                if (!strcmp(reason + 17, t->members[m])) known = true;
            if (!known) fail_msg("a decide request for a stranger: %s", reason);
        }
        json_decref(req);
    }
    assert_int_equal(complete, 1);
}

static int setup(void **state)
{
    *state = rt_ch_new();
    return 0;
}

static int teardown(void **state)
{
    rt_ch_free(*state);
    return 0;
}

static void test_resolved_retriggers_join_their_set_which_completes_exactly_once(void **state)
{
    tracked t = {.h = *state};
    rt_ch *h = t.h;
    create_set(&t, 3);

    /* Five retriggers of the label on the push (two failed), each delivered twice, as
     * Pulse may; and a run of the same label on another push, which is not a member. */
    for (size_t m = 0; m < MEMBERS; m++) rt_ch_slugid(t.members[m]);
    char stranger[23];
    rt_ch_slugid(stranger);
    publish_member(h, stranger, false, true, "tc-treeherder.v2.autoland." OTHER_REV ".88561");
    for (int round = 0; round < 2; round++)
        for (size_t m = 0; m < MEMBERS; m++)
            publish_member(h, t.members[m], m % 2 == 1, true, GWX_ROUTE);

    size_t count = 0;
    rt_ch_message *decides = settle_and_take_decides(&t, 3, &count);
    /* Decide requests are wake-ups: one per resolved member while the set is open, and
     * "set-complete" once. Members resolving after completion (here 5 members for a set of
     * 3) or concurrently with it need none, so only the one set-complete is certain. */
    assert_true(count >= 1);
    assert_one_set_complete(&t, decides, count);
    rt_ch_messages_free(decides, count);

    const char *params[] = {t.set_text};
    assert_int_equal(rt_ch_sql_int(h,
                                   "SELECT count(*) FROM retrigger_set_members WHERE set_id = $1"
                                   " AND role = 'retrigger'",
                                   1, params),
                     MEMBERS);
    for (size_t m = 0; m < MEMBERS; m++) {
        const char *mparams[] = {t.set_text, t.members[m]};
        char *state_of = rt_ch_sql_text(h,
                                        "SELECT state FROM retrigger_set_members WHERE set_id = $1"
                                        " AND task_id = $2 AND run_id = 0",
                                        2, mparams);
        assert_non_null(state_of);
        assert_string_equal(state_of, m % 2 == 1 ? "failed" : "completed");
        free(state_of);
    }
    /* The failed ones are retriggers, never sets of their own. */
    assert_int_equal(rt_ch_sql_int(h, "SELECT count(*) FROM retrigger_sets", 0, NULL), 1);
    const char *sparams[] = {stranger};
    assert_int_equal(rt_ch_sql_int(h,
                                   "SELECT count(*) FROM retrigger_set_members WHERE task_id = $1",
                                   1, sparams),
                     0);
}

static void
test_old_format_retriggers_join_the_set_of_their_task_group_even_after_redis_flush(void **state)
{
    tracked t = {.h = *state};
    rt_ch *h = t.h;
    create_set(&t, 2);
    /* As recorded in 2019: no task.tags and no CC route. Their task group has a set, which
     * Postgres knows (retrigger_sets.task_group_id), so a flushed Redis changes nothing. */
    rt_ch_flush_redis(h);
    for (size_t m = 0; m < MEMBERS; m++) {
        rt_ch_slugid(t.members[m]);
        publish_member(h, t.members[m], m == 0, false, NULL);
    }
    size_t count = 0;
    rt_ch_message *decides = settle_and_take_decides(&t, 2, &count);
    /* Every member joined, and the set completed exactly once (a member resolving together
     * with the completion needs no wake-up of its own). */
    const char *params[] = {t.set_text};
    assert_int_equal(rt_ch_sql_int(h,
                                   "SELECT count(*) FROM retrigger_set_members WHERE set_id = $1"
                                   " AND role = 'retrigger'",
                                   1, params),
                     MEMBERS);
    assert_true(count >= 1);
    assert_one_set_complete(&t, decides, count);
    rt_ch_messages_free(decides, count);
    /* Their definitions told the label and push. */
    for (size_t m = 0; m < MEMBERS; m++) {
        char path[128];
        snprintf(path, sizeof path, "/api/queue/v1/task/%s", t.members[m]);
        json_t *calls = rt_fake_calls(&h->fake, path);
        assert_true(json_array_size(calls) >= 1);
        json_decref(calls);
    }
}

static void test_modern_retriggers_join_their_set_even_after_redis_lost_its_marks(void **state)
{
    tracked t = {.h = *state};
    rt_ch *h = t.h;
    create_set(&t, 2);
    /* Postgres is the truth: with the label and the push in the message, the set is found
     * without Redis. */
    rt_ch_flush_redis(h);
    for (size_t m = 0; m < MEMBERS; m++) {
        rt_ch_slugid(t.members[m]);
        publish_member(h, t.members[m], false, true, GWX_ROUTE);
    }
    size_t count = 0;
    rt_ch_message *decides = settle_and_take_decides(&t, 2, &count);
    /* Every member joined (Postgres), and the set completed exactly once; a member resolving
     * concurrently with the completion needs no wake-up of its own. */
    const char *params[] = {t.set_text};
    assert_int_equal(rt_ch_sql_int(h,
                                   "SELECT count(*) FROM retrigger_set_members WHERE set_id = $1"
                                   " AND role = 'retrigger'",
                                   1, params),
                     MEMBERS);
    assert_true(count >= 1);
    assert_one_set_complete(&t, decides, count);
    rt_ch_messages_free(decides, count);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_resolved_retriggers_join_their_set_which_completes_exactly_once, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_old_format_retriggers_join_the_set_of_their_task_group_even_after_redis_flush,
            setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_modern_retriggers_join_their_set_even_after_redis_lost_its_marks, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
