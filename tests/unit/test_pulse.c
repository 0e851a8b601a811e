/* SPDX-License-Identifier: MPL-2.0 */
/* test_pulse.c - Taskcluster task-* message and task definition parsing on real fixtures. */
#include "support/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/ids.h"
#include "common/core/pulse.h"
#include "common/core/taskdef.h"

#define CAP (1024 * 1024)

static int parse_fixture(const char *name, const char *exchange, rt_pulse_task *task, char *reason)
{
    size_t len = 0;
    char *text = rt_test_read_file(rt_test_fixture(name), &len);
    int rc = rt_pulse_parse(text, len, exchange, CAP, task, reason);
    free(text);
    return rc;
}

static int parse_text(const char *text, rt_pulse_task *task, char *reason)
{
    return rt_pulse_parse(text, strlen(text), "exchange/taskcluster-queue/v1/task-failed", CAP,
                          task, reason);
}

static void test_treeherder_wrapper_is_unwrapped_with_its_exchange(void **state)
{
    (void)state;
    rt_pulse_task t;
    char reason[RT_PULSE_REASON_SIZE];
    assert_int_equal(parse_fixture("pulse/treeherder_task-completed_GWxTc8p_RUa5_Xo4RtMiCA.json",
                                   NULL, &t, reason),
                     RT_OK);
    assert_int_equal(t.event, RT_TASK_EVENT_COMPLETED);
    assert_string_equal(t.task_id, "GWxTc8p_RUa5_Xo4RtMiCA");
    assert_string_equal(t.task_group_id, "HkX-TbGXQaSX4ucqGMQNBA");
    assert_int_equal(t.run_id, 0);
    /* 2019 body: no taskQueueId, so provisionerId/workerType. */
    assert_string_equal(t.task_queue_id, "terraform-packet/gecko-t-linux");
    assert_string_equal(t.run_state, "completed");
    assert_string_equal(t.resolved, "2019-06-26T19:36:08.596Z");
    assert_string_equal(t.worker_group, "packet-sjc1");
    assert_null(t.tag_label);
    rt_pulse_task_free(&t);
}

static void test_modern_body_has_task_queue_id_and_exchange_decides_the_event(void **state)
{
    (void)state;
    rt_pulse_task t;
    char reason[RT_PULSE_REASON_SIZE];
    assert_int_equal(parse_fixture("pulse/fuzzmanager_task-completed_Z1kaoRtHRRWyyuMDqadYPA.json",
                                   "exchange/taskcluster-queue/v1/task-completed", &t, reason),
                     RT_OK);
    assert_int_equal(t.event, RT_TASK_EVENT_COMPLETED);
    assert_string_equal(t.task_queue_id, "proj-fuzzing/linux-pool10");
    rt_pulse_task_free(&t);
}

static void test_exception_without_worker_is_valid(void **state)
{
    (void)state;
    rt_pulse_task t;
    char reason[RT_PULSE_REASON_SIZE];
    assert_int_equal(parse_fixture("pulse/fuzzmanager_task-exception_f8fRfedPSp2-A7M9Zhxe-Q.json",
                                   NULL, &t, reason),
                     RT_OK);
    assert_int_equal(t.event, RT_TASK_EVENT_EXCEPTION); /* from the run state */
    assert_string_equal(t.reason_resolved, "deadline-exceeded");
    assert_null(t.worker_group);
    rt_pulse_task_free(&t);
}

/* Taskcluster's task-exception schema requires only version and status: runId, workerGroup
 * and workerId are left out when the deadline passed before any run started. Such a body is
 * an exception of no run (it used to be dead-lettered as missing-field:runId); on the other
 * exchanges, whose schemas require runId, it is still refused. */
static void test_exception_without_run_id_is_an_exception_of_no_run(void **state)
{
    (void)state;
    static const char *const fixture =
        "pulse/derived_task-exception_no-run_f8fRfedPSp2-A7M9Zhxe-Q.json";
    static const char *const exchanges[] = {"exchange/taskcluster-queue/v1/task-exception", NULL};
    for (size_t i = 0; i < 2; i++) {
        rt_pulse_task t;
        char reason[RT_PULSE_REASON_SIZE];
        int rc = parse_fixture(fixture, exchanges[i], &t, reason);
        if (rc != RT_OK) fail_msg("exchange %s: %s", exchanges[i], reason);
        assert_int_equal(t.event, RT_TASK_EVENT_EXCEPTION);
        assert_int_equal(t.run_id, RT_PULSE_NO_RUN);
        assert_string_equal(t.task_id, "f8fRfedPSp2-A7M9Zhxe-Q");
        assert_string_equal(t.task_group_id, "eW36sOvMTV6vM-XphAs07Q");
        assert_string_equal(t.task_state, "exception");
        assert_null(t.run_state);
        assert_null(t.resolved);
        assert_null(t.worker_group);
        rt_pulse_task_free(&t);
    }
    rt_pulse_task t;
    char reason[RT_PULSE_REASON_SIZE];
    assert_int_equal(
        parse_fixture(fixture, "exchange/taskcluster-queue/v1/task-failed", &t, reason), RT_EPROTO);
    assert_string_equal(reason, "missing-field:runId");
}

static void test_pending_and_running_are_not_resolutions(void **state)
{
    (void)state;
    rt_pulse_task t;
    char reason[RT_PULSE_REASON_SIZE];
    assert_int_equal(parse_fixture("pulse/treeherder_task-running_Ai-bmuTzS7eRBYFhSPnZ1w.json",
                                   NULL, &t, reason),
                     RT_OK);
    assert_int_equal(t.event, RT_TASK_EVENT_OTHER);
    rt_pulse_task_free(&t);
}

static void test_malformed_bodies_give_a_reason(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"{not json", "invalid-json"},
        {"[1]", "wrong-type:body"},
        {"{\"version\": 1, \"runId\": 0}", "missing-field:status"},
        {"{\"status\": {}, \"runId\": 0}", "missing-field:version"},
        {"{\"version\": 1, \"status\": {\"taskGroupId\": \"HkX-TbGXQaSX4ucqGMQNBA\"}, \"runId\": "
         "0}",
         "missing-field:status.taskId"},
        {"{\"version\": 1, \"status\": {\"taskId\": \"../../etc/passwd/xxxxxxx\"}, \"runId\": 0}",
         "invalid-value:status.taskId"},
        {"{\"version\": 1, \"status\": {\"taskId\": \"GWxTc8p_RUa5_Xo4RtMiCA\"}, \"runId\": \"0\"}",
         "wrong-type:runId"},
        {"{\"version\": 1, \"runId\": 0, \"workerGroup\": \"g\", \"status\": {\"taskId\": "
         "\"GWxTc8p_RUa5_Xo4RtMiCA\", "
         "\"taskGroupId\": \"HkX-TbGXQaSX4ucqGMQNBA\", \"state\": \"failed\", \"taskQueueId\": "
         "\"a/b\", \"runs\": {}}}",
         "wrong-type:status.runs"},
        {"{\"version\": 1, \"runId\": 3, \"workerGroup\": \"g\", \"status\": {\"taskId\": "
         "\"GWxTc8p_RUa5_Xo4RtMiCA\", "
         "\"taskGroupId\": \"HkX-TbGXQaSX4ucqGMQNBA\", \"state\": \"failed\", \"taskQueueId\": "
         "\"a/b\", "
         "\"runs\": [{\"runId\": 0, \"state\": \"failed\"}]}}",
         "invalid-value:runId"},
        {"{\"version\": 1, \"runId\": 0, \"workerGroup\": \"g\", \"status\": {\"taskId\": "
         "\"GWxTc8p_RUa5_Xo4RtMiCA\", "
         "\"taskGroupId\": \"HkX-TbGXQaSX4ucqGMQNBA\", \"state\": \"failed\", \"taskQueueId\": "
         "\"a\\r\\nb\", "
         "\"runs\": [{\"runId\": 0, \"state\": \"failed\"}]}}",
         "invalid-value:status.taskQueueId"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rt_pulse_task t;
        char reason[RT_PULSE_REASON_SIZE];
        assert_int_equal(parse_text(cases[i][0], &t, reason), RT_EPROTO);
        if (strncmp(reason, cases[i][1], strlen(cases[i][1])) != 0)
            fail_msg("case %zu: reason '%s', expected '%s'", i, reason, cases[i][1]);
    }
}

static void test_exchange_and_run_state_must_agree(void **state)
{
    (void)state;
    rt_pulse_task t;
    char reason[RT_PULSE_REASON_SIZE];
    assert_int_equal(parse_fixture("pulse/fuzzmanager_task-completed_Z1kaoRtHRRWyyuMDqadYPA.json",
                                   "exchange/taskcluster-queue/v1/task-failed", &t, reason),
                     RT_EPROTO);
    assert_non_null(strstr(reason, "invalid-value:status.runs[].state"));
}

static void test_body_over_the_cap_is_too_big(void **state)
{
    (void)state;
    rt_pulse_task t;
    char reason[RT_PULSE_REASON_SIZE];
    const char *body = "{\"version\": 1}";
    assert_int_equal(rt_pulse_parse(body, strlen(body), NULL, 8, &t, reason), RT_ETOOBIG);
    assert_memory_equal(reason, "too-big", 7);
}

static void test_treeherder_route_gives_the_push_and_hostile_routes_are_refused(void **state)
{
    (void)state;
    rt_pulse_task t = {0};
    assert_true(rt_pulse_apply_route(
        &t, "route.tc-treeherder.v2.autoland.b437ae030825a8ea9fa7a632b1fcb9becbe11f69.88560"));
    assert_string_equal(t.project, "autoland");
    assert_string_equal(t.revision, "b437ae030825a8ea9fa7a632b1fcb9becbe11f69");
    assert_string_equal(t.pushlog_id, "88560");
    assert_false(rt_pulse_apply_route(
        &t, "tc-treeherder.v2.../etc.b437ae030825a8ea9fa7a632b1fcb9becbe11f69.1"));
    assert_false(rt_pulse_apply_route(&t, "tc-treeherder.v2.try.not-a-revision.1"));
    assert_false(rt_pulse_apply_route(&t, "index.gecko.v2.autoland.latest"));
    assert_string_equal(t.project, "autoland"); /* unchanged by refused routes */
    rt_pulse_task_free(&t);
}

static void test_task_definition_fields(void **state)
{
    (void)state;
    size_t len = 0;
    char *text = rt_test_read_file(
        rt_test_fixture("taskcluster/task_definition_GWxTc8p_RUa5_Xo4RtMiCA.json"), &len);
    rt_taskdef d;
    char reason[128];
    assert_int_equal(rt_taskdef_parse(text, len, CAP, &d, reason), RT_OK);
    assert_string_equal(d.job_kind, "test");
    assert_int_equal(d.tier, 2);
    assert_string_equal(d.platform, "android-em-7-0-x86_64");
    assert_string_equal(d.label,
                        "test-android-em-7.0-x86_64/debug-mochitest-e10s-1"); /* metadata.name */
    assert_string_equal(d.project, "autoland");
    assert_string_equal(d.revision, "b437ae030825a8ea9fa7a632b1fcb9becbe11f69");
    assert_string_equal(d.task_queue_id, "terraform-packet/gecko-t-linux");
    assert_null(d.action);
    rt_taskdef_free(&d);
    free(text);

    text = rt_test_read_file(
        rt_test_fixture("taskcluster/task_definition_build-android-api-16-debug.json"), &len);
    assert_int_equal(rt_taskdef_parse(text, len, CAP, &d, reason), RT_OK);
    assert_string_equal(d.label, "build-android-api-16/debug"); /* tags.label */
    assert_string_equal(d.job_kind, "build");
    assert_string_equal(d.kind, "build");
    rt_taskdef_free(&d);
    free(text);
}

/* A tier an int cannot hold was cast: 4294967297 became tier 1, eligible. */
static void test_out_of_range_tiers_are_invalid(void **state)
{
    (void)state;
    size_t len = 0;
    char *text = rt_test_read_file(
        rt_test_fixture("taskcluster/task_definition_GWxTc8p_RUa5_Xo4RtMiCA.json"), &len);
    const char *tiers[] = {"4294967297", "-1", "101", "9223372036854775807", "\"1\"", "1.0"};
    const char *reasons[] = {"invalid-value", "invalid-value", "invalid-value",
                             "invalid-value", "wrong-type",    "wrong-type"};
    for (size_t i = 0; i < sizeof tiers / sizeof *tiers; i++) {
        char *at = strstr(text, "\"tier\": 2");
        assert_non_null(at);
        size_t size = len + 64;
        char *doc = malloc(size);
        assert_non_null(doc);
        snprintf(doc, size, "%.*s\"tier\": %s%s", (int)(at - text), text, tiers[i],
                 at + strlen("\"tier\": 2"));
        rt_taskdef d;
        char reason[128];
        assert_int_equal(rt_taskdef_parse(doc, strlen(doc), CAP, &d, reason), RT_EPROTO);
        char want[64];
        snprintf(want, sizeof want, "%s:extra.treeherder.tier", reasons[i]);
        assert_string_equal(reason, want);
        free(doc);
    }
    free(text);
}

/* extra.treeherder without a tier is a tier-1 job to Treeherder (its pulse handler reads
 * treeherderConfig.get("tier", 1)); retrig used to read it as tier 0 and skip it. */
static void test_a_task_without_a_tier_is_tier_1(void **state)
{
    (void)state;
    size_t len = 0;
    char *text = rt_test_read_file(
        rt_test_fixture("taskcluster/task_definition_GWxTc8p_RUa5_Xo4RtMiCA.json"), &len);
    /* The recorded task less its tier: '"symbol": "1",\n      "tier": 2' becomes '"symbol": "1"'.
     */
    static const char with_tier[] = "\"symbol\": \"1\",\n      \"tier\": 2";
    char *at = strstr(text, with_tier);
    assert_non_null(at);
    size_t keep = strlen("\"symbol\": \"1\""), cut = strlen(with_tier);
    memmove(at + keep, at + cut, strlen(at + cut) + 1);
    assert_null(strstr(text, "\"tier\""));
    rt_taskdef d;
    char reason[128];
    assert_int_equal(rt_taskdef_parse(text, strlen(text), CAP, &d, reason), RT_OK);
    assert_int_equal(d.tier, 1);
    assert_string_equal(d.job_kind, "test");
    rt_taskdef_free(&d);
    free(text);
}

/* The build type Treeherder shows next to the platform (taskdef.h), on recorded definitions:
 * a debug and an opt test, an AddressSanitizer test whose platform says nothing of it (its
 * label says opt, Treeherder shows asan), and an action task without a collection (opt, as
 * Treeherder shows it). */
static void test_build_type_is_treeherders_option_collection(void **state)
{
    (void)state;
    static const struct {
        const char *fixture, *platform, *build_type;
    } recorded[] = {
        {"task_definition_GWxTc8p_RUa5_Xo4RtMiCA.json", "android-em-7-0-x86_64", "debug"},
        {"task_definition_A35mWTRuQmyj88yMnIF0fA.json", "linux64-qr", "debug"},
        {"task_definition_KYZKwkbvRc-qPE22g286yQ.json", "linux64-qr", "opt"},
        {"task_definition_B3EheQ-IQ5aPzw34KS_a6g.json", "macosx1014-64-shippable", "opt"},
        {"task_definition_UZ37gpDqTRS1pBNnp0Spsg.json", "linux64", "asan"},
        {"task_definition_CER7YmG9QmCd-R66vfWkVQ.json", "gecko-decision", "opt"},
    };
    for (size_t i = 0; i < sizeof recorded / sizeof *recorded; i++) {
        char path[128];
        snprintf(path, sizeof path, "taskcluster/%s", recorded[i].fixture);
        size_t len = 0;
        char *text = rt_test_read_file(rt_test_fixture(path), &len);
        rt_taskdef d;
        char reason[128];
        assert_int_equal(rt_taskdef_parse(text, len, CAP, &d, reason), RT_OK);
        assert_string_equal(d.platform, recorded[i].platform);
        assert_non_null(d.build_type);
        assert_string_equal(d.build_type, recorded[i].build_type);
        rt_taskdef_free(&d);
        free(text);
    }

    /* The recorded debug test with its collection replaced: labels win over the collection,
     * names are a sorted set, a malformed name or too many names leave it unknown. */
    size_t len = 0;
    char *text = rt_test_read_file(
        rt_test_fixture("taskcluster/task_definition_GWxTc8p_RUa5_Xo4RtMiCA.json"), &len);
    static const char collection[] = "\"collection\": {\n        \"debug\": true\n      }";
    char *at = strstr(text, collection);
    assert_non_null(at);
    static const struct {
        const char *replacement, *build_type; /* NULL: unknown */
    } cases[] = {
        {"\"collection\": {\"opt\": true, \"asan\": true}", "asan,opt"},
        {"\"collection\": {\"tsan\": false}", "tsan"}, /* Treeherder reads the keys only */
        {"\"labels\": [\"debug\", \"ccov\", \"debug\"], \"collection\": {\"opt\": true}",
         "ccov,debug"},
        {"\"labels\": [], \"collection\": {\"pgo\": true}", "pgo"},
        {"\"collection\": {}", "opt"},
        {"\"collection\": {\"de bug\": true}", NULL},
        {"\"labels\": [\"debug\", 7]", NULL},
        {"\"collection\": {\"a\": 1, \"b\": 1, \"c\": 1, \"d\": 1, \"e\": 1, \"f\": 1,"
         " \"g\": 1, \"h\": 1, \"i\": 1}",
         NULL},
        {"\"collection\": {\"\\u0061san\": true}", "asan"}, /* an escape decodes first */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        size_t size = len + strlen(cases[i].replacement) + 1;
        char *doc = malloc(size);
        assert_non_null(doc);
        snprintf(doc, size, "%.*s%s%s", (int)(at - text), text, cases[i].replacement,
                 at + strlen(collection));
        rt_taskdef d;
        char reason[128];
        assert_int_equal(rt_taskdef_parse(doc, strlen(doc), CAP, &d, reason), RT_OK);
        if (cases[i].build_type) {
            assert_non_null(d.build_type);
            assert_string_equal(d.build_type, cases[i].build_type);
        } else {
            assert_null(d.build_type);
        }
        assert_string_equal(d.platform, "android-em-7-0-x86_64"); /* the rest as parsed before */
        rt_taskdef_free(&d);
        free(doc);
    }
    /* without extra.treeherder: no build type (and tier 0) */
    char *extra = strstr(text, "\"treeherder\": {");
    assert_non_null(extra);
    memcpy(extra, "\"treehurder", strlen("\"treehurder"));
    rt_taskdef d;
    char reason[128];
    assert_int_equal(rt_taskdef_parse(text, len, CAP, &d, reason), RT_OK);
    assert_null(d.build_type);
    assert_int_equal(d.tier, 0);
    rt_taskdef_free(&d);
    free(text);
}

static void test_identifier_validation(void **state)
{
    (void)state;
    assert_true(rt_valid_task_id("GWxTc8p_RUa5_Xo4RtMiCA"));
    assert_false(rt_valid_task_id("GWxTc8p_RUa5_Xo4RtMiC"));
    assert_false(rt_valid_task_id("GWxTc8p/RUa5_Xo4RtMiCA"));
    assert_true(rt_valid_project("mozilla-central"));
    assert_false(rt_valid_project(".."));
    assert_false(rt_valid_project("a/b"));
    assert_false(rt_valid_project("a\r\nb"));
    assert_true(rt_valid_revision("b437ae030825"));
    assert_false(rt_valid_revision("b437ae03082z"));
    assert_true(rt_valid_label("test-linux1804-64/opt-mochitest-browser-chrome-1"));
    assert_false(rt_valid_label("a\nb"));
    assert_false(rt_valid_label("caf\xc3\xa9"));
    assert_false(rt_valid_label("../../x"));
    char longlabel[600];
    memset(longlabel, 'a', sizeof longlabel - 1);
    longlabel[sizeof longlabel - 1] = '\0';
    assert_false(rt_valid_label(longlabel));
    assert_true(rt_valid_task_queue_id("gecko-t/t-linux-large"));
    assert_false(rt_valid_task_queue_id("gecko-t"));
    assert_false(rt_valid_task_queue_id("a/b/c"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_treeherder_wrapper_is_unwrapped_with_its_exchange),
        cmocka_unit_test(test_modern_body_has_task_queue_id_and_exchange_decides_the_event),
        cmocka_unit_test(test_exception_without_worker_is_valid),
        cmocka_unit_test(test_exception_without_run_id_is_an_exception_of_no_run),
        cmocka_unit_test(test_pending_and_running_are_not_resolutions),
        cmocka_unit_test(test_malformed_bodies_give_a_reason),
        cmocka_unit_test(test_exchange_and_run_state_must_agree),
        cmocka_unit_test(test_body_over_the_cap_is_too_big),
        cmocka_unit_test(test_treeherder_route_gives_the_push_and_hostile_routes_are_refused),
        cmocka_unit_test(test_task_definition_fields),
        cmocka_unit_test(test_out_of_range_tiers_are_invalid),
        cmocka_unit_test(test_a_task_without_a_tier_is_tier_1),
        cmocka_unit_test(test_build_type_is_treeherders_option_collection),
        cmocka_unit_test(test_identifier_validation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
