/* SPDX-License-Identifier: MPL-2.0 */
/* test_hostile_ids.c - hostile identifiers in Pulse messages (path traversal, CR/LF, "..",
 * very long, non-UTF-8) against a real retrig-classify: each such message is dead-lettered
 * with a reason naming the field, a hostile CC route is ignored (the push comes from the
 * task definition instead), and none of the values reaches an upstream URL, a Redis key, a
 * database row, a retrigger request or a raw worker log line. */
#include "support/util.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/classify_harness.h"

#define GWX_PULSE "pulse/treeherder_task-completed_GWxTc8p_RUa5_Xo4RtMiCA.json"
#define GWX_DEF   "taskcluster/task_definition_GWxTc8p_RUa5_Xo4RtMiCA.json"
#define GWX_LABEL "test-android-em-7.0-x86_64/debug-mochitest-e10s-1"
#define ES_FAIL   "errorsummary/mochitest-browser-chrome_errorsummary.log"
/* A Treeherder route whose project is a path traversal. */
#define EVIL_ROUTE "tc-treeherder.v2.../../admin.b437ae030825a8ea9fa7a632b1fcb9becbe11f69.1"
/* A log line forged through a CR/LF in a message id. */
#define FORGED "forged-by-hostile-input"

#define WAIT_MS 15000

/* Fragments no outgoing request, key, row or log line may contain. */
static const char *const MARKERS[] = {"..", "\r", "\n", "passwd", "INJECTED", FORGED};

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

/* A failed GWxTc8p message (own task id and group) with one string field set to raw bytes
 * (control characters JSON-escaped, everything else as is, so invalid UTF-8 stays invalid).
 * path: "status.taskId", "task.tags.label", ... Returns malloc'd text. */
static char *hostile_body(const char *path, const char *value, size_t value_len)
{
    char task_id[23], group[23];
    rt_ch_slugid(task_id);
    rt_ch_slugid(group);
    char *text = rt_ch_failed_message(GWX_PULSE, task_id, group);
    json_t *doc = json_loads(text, 0, NULL);
    free(text);
    assert_non_null(doc);
    char copy[64];
    snprintf(copy, sizeof copy, "%s", path);
    json_t *obj = doc;
    char *save = NULL, *part = strtok_r(copy, ".", &save);
    for (char *next; (next = strtok_r(NULL, ".", &save)) != NULL; part = next) {
        json_t *child = json_object_get(obj, part);
        if (!child) {
            child = json_object();
            json_object_set_new(obj, part, child);
        }
        obj = child;
    }
    json_object_set_new(obj, part, json_string("@@HOSTILE@@"));
    char *dumped = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    assert_non_null(dumped);
    char *at = strstr(dumped, "@@HOSTILE@@");
    assert_non_null(at);
    char *body = malloc(strlen(dumped) + value_len * 6 + 1);
    assert_non_null(body);
    size_t n = (size_t)(at - dumped);
    memcpy(body, dumped, n);
    for (size_t i = 0; i < value_len; i++) {
        unsigned char c = (unsigned char)value[i];
        if (c < 0x20 || c == '"' || c == '\\')
            n += (size_t)sprintf(body + n, "\\u%04x", c);
        else
            body[n++] = (char)c;
    }
    strcpy(body + n, at + strlen("@@HOSTILE@@"));
    free(dumped);
    return body;
}

/* Fails when any string in the JSON value contains a marker. */
static void assert_json_clean(json_t *v, const char *what)
{
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        for (size_t i = 0; i < sizeof MARKERS / sizeof MARKERS[0]; i++)
            if (strstr(s, MARKERS[i])) fail_msg("%s contains '%s': %.200s", what, MARKERS[i], s);
    } else if (json_is_object(v)) {
        const char *key;
        json_t *child;
        json_object_foreach(v, key, child) assert_json_clean(child, what);
    } else if (json_is_array(v)) {
        size_t i;
        json_t *child;
        json_array_foreach(v, i, child) assert_json_clean(child, what);
    }
}

/* Every Redis key under the harness prefix is free of markers. */
static void assert_redis_keys_clean(rt_ch *h)
{
    char cursor[32] = "0", pattern[128];
    snprintf(pattern, sizeof pattern, "%s*", h->redis_prefix);
    size_t keys = 0;
    do {
        const char *argv[] = {"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"};
        redisReply *reply = NULL;
        assert_int_equal(rt_redis_command_argv(h->redis, 6, argv, NULL, &reply), RT_OK);
        assert_int_equal(reply->type, REDIS_REPLY_ARRAY);
        assert_int_equal(reply->elements, 2);
        snprintf(cursor, sizeof cursor, "%s", reply->element[0]->str);
        redisReply *list = reply->element[1];
        for (size_t i = 0; i < list->elements; i++) {
            const char *key = list->element[i]->str + strlen(h->redis_prefix);
            keys++;
            for (size_t m = 0; m < sizeof MARKERS / sizeof MARKERS[0]; m++)
                if (strstr(key, MARKERS[m]))
                    fail_msg("Redis key '%s' contains '%s'", key, MARKERS[m]);
        }
        freeReplyObject(reply);
    } while (strcmp(cursor, "0") != 0);
    assert_true(keys > 0); /* the valid message left marks: the scan saw real keys */
}

/* Every line of every worker log is one JSON object whose strings hold no raw CR/LF and
 * no forged line; the forged text appears only escaped inside a value. */
static void assert_worker_logs_clean(rt_ch *h)
{
    DIR *d = opendir(h->dir);
    assert_non_null(d);
    size_t lines = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strncmp(e->d_name, "worker-", 7) != 0) continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", h->dir, e->d_name);
        char *text = rt_test_read_file(path, NULL);
        char *save = NULL;
        for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
            lines++;
            if (strchr(line, '\r')) fail_msg("raw CR in log line: %.200s", line);
            json_error_t err;
            json_t *obj = json_loads(line, 0, &err);
            if (!json_is_object(obj)) fail_msg("log line is not one JSON object: %.200s", line);
            const char *msg = json_string_value(json_object_get(obj, "msg"));
            if (msg && strstr(msg, FORGED)) fail_msg("forged log line: %.200s", line);
            json_decref(obj);
        }
        free(text);
    }
    closedir(d);
    assert_true(lines > 0);
}

static void test_hostile_identifiers_are_dead_lettered_and_reach_no_url_key_row_or_log(void **state)
{
    rt_ch *h = *state;
    /* The one valid message: its route is hostile and must be ignored. */
    char task_id[23], group[23];
    rt_ch_slugid(task_id);
    rt_ch_slugid(group);
    json_t *scenario = json_pack("{s:{}, s:{}, s:{}}", "tasks", "artifacts", "jobs");
    json_object_set_new(json_object_get(scenario, "tasks"), task_id,
                        rt_ch_task_definition(GWX_DEF, group, GWX_LABEL "-hostile-route"));
    json_t *artifacts =
        json_pack("[{s:s, s:s}, {s:s, s:s}]", "name", "public/logs/live_backing.log", "content",
                  "[taskcluster 2019-06-26T19:16:36.554Z] recorded log\n", "name",
                  "public/test_info/mochitest_errorsummary.log", "fixture", ES_FAIL);
    json_object_set_new(json_object_get(scenario, "artifacts"), task_id,
                        json_pack("{s:o}", "0", artifacts));
    rt_ch_scenario(h, scenario);
    json_decref(scenario);
    rt_ch_start_workers(h, 1);

    char longlabel[10001];
    memset(longlabel, 'A', sizeof longlabel - 1);
    longlabel[sizeof longlabel - 1] = '\0';
    static const char crlf_label[] = "ok\r\n{\"level\":\"error\",\"msg\":\"" FORGED "\"}";
    struct {
        const char *id;
        const char *path;
        const char *value;
        size_t len;
        const char *reason;
    } cases[] = {
        {"traversal-task-id", "status.taskId", "../../x", 7, "invalid-value:status.taskId"},
        {"crlf-task-group", "status.taskGroupId", "a\r\nINJECTED", 11,
         "invalid-value:status.taskGroupId"},
        {"traversal-queue", "status.taskQueueId", "gecko-t/../../passwd", 20,
         "invalid-value:status.taskQueueId"},
        {"crlf-label", "task.tags.label", crlf_label, sizeof crlf_label - 1,
         "invalid-value:task.tags.label"},
        {"traversal-label", "task.tags.label", "../../../etc/passwd", 19,
         "invalid-value:task.tags.label"},
        {"long-label", "task.tags.label", longlabel, sizeof longlabel - 1,
         "invalid-value:task.tags.label"},
        {"non-utf8-label", "task.tags.label", "INJECTED\xff\xfe", 10, "invalid-json"},
    };
    size_t n = sizeof cases / sizeof cases[0];
    for (size_t i = 0; i < n; i++) {
        char *body = hostile_body(cases[i].path, cases[i].value, cases[i].len);
        rt_ch_publish(h, "task-failed", body, strlen(body), EVIL_ROUTE, cases[i].id);
        free(body);
    }
    /* A message id carrying a CR/LF and a forged log line (logged when dead-lettered). */
    char *body = hostile_body("status.taskId", "..", 2);
    rt_ch_publish(h, "task-failed", body, strlen(body), NULL,
                  "evil\r\n{\"level\":\"error\",\"msg\":\"" FORGED "\"}");
    free(body);
    char *valid = rt_ch_failed_message(GWX_PULSE, task_id, group);
    rt_ch_publish(h, "task-failed", valid, strlen(valid), EVIL_ROUTE, "valid");
    free(valid);

    /* The valid message is classified with the push of its task definition. */
    assert_string_equal(rt_ch_wait_verdict(h, task_id, 0, WAIT_MS), "retrigger/eligible");
    rt_ch_message *req = NULL;
    rt_ch_take(h, "retrigger", 1, WAIT_MS, &req);
    json_t *r = json_loads(req[0].body, 0, NULL);
    assert_non_null(r);
    assert_string_equal(json_string_value(json_object_get(r, "project")), "autoland");
    /* Its identifiers (failure messages may hold newlines of their own). */
    static const char *const fields[] = {"project",       "revision", "label",        "task_id",
                                         "task_group_id", "platform", "task_queue_id"};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        assert_json_clean(json_object_get(r, fields[i]), fields[i]);
    json_decref(r);
    rt_ch_messages_free(req, 1);

    /* Exactly the hostile messages are dead letters, each with its reason. */
    rt_ch_message *dead = NULL;
    rt_ch_take(h, "dead-letter", n + 1, WAIT_MS, &dead);
    for (size_t i = 0; i < n; i++) {
        bool matched = false;
        for (size_t k = 0; k < n + 1; k++) {
            if (!dead[k].message_id || strcmp(dead[k].message_id, cases[i].id) != 0) continue;
            matched = true;
            assert_non_null(dead[k].reason);
            if (strcmp(dead[k].reason, cases[i].reason) != 0)
                fail_msg("%s: reason '%s', expected '%s'", cases[i].id, dead[k].reason,
                         cases[i].reason);
        }
        if (!matched) fail_msg("no dead letter for %s", cases[i].id);
    }
    for (size_t k = 0; k < n + 1; k++) {
        assert_non_null(dead[k].reason);
        assert_null(strchr(dead[k].reason, '\r'));
        assert_null(strchr(dead[k].reason, '\n'));
    }
    rt_ch_messages_free(dead, n + 1);
    assert_int_equal(rt_ch_queue_depth(h, "dead-letter"), 0);
    assert_int_equal(rt_ch_stop_workers(h, 10000), 0);

    /* Nothing hostile went out to the upstream, into Redis or Postgres, or into a log. */
    json_t *calls = rt_fake_calls(&h->fake, NULL);
    assert_non_null(calls);
    assert_true(json_array_size(calls) > 0);
    assert_json_clean(calls, "upstream call");
    json_decref(calls);
    assert_redis_keys_clean(h);
    assert_int_equal(rt_ch_sql_int(h, "SELECT count(*) FROM runs", 0, NULL), 1);
    assert_int_equal(rt_ch_sql_int(h,
                                   "SELECT count(*) FROM retrigger_sets WHERE project <> 'autoland'"
                                   " OR label LIKE '%..%' OR label ~ '[\\r\\n]'",
                                   0, NULL),
                     0);
    assert_worker_logs_clean(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_hostile_identifiers_are_dead_lettered_and_reach_no_url_key_row_or_log, setup,
            teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
