/* SPDX-License-Identifier: MPL-2.0 */
/* test_http.c - the HTTP client against the fake upstream: retries and backoff, caps,
 * timeouts, dropped connections, real fixtures, and the fake's Hawk checks. */
#include "support/util.h"
#include "support/fake_upstream.h"

#include "common/io/http.h"

#include <jansson.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TASK_ID      "B3EheQ-IQ5aPzw34KS_a6g"
#define TASK_PATH    "/api/queue/v1/task/" TASK_ID
#define HOOK_ID      "in-tree-action-3-generic/9353e8f146"
#define HOOK_PATH    "/api/hooks/v1/hooks/project-gecko/in-tree-action-3-generic%2F9353e8f146/trigger"
#define CLIENT_ID    "project/retrig/test"
#define ACCESS_TOKEN "test-access-token-not-a-secret"

static rt_fake fake;

/* Records the delays the client asks for instead of sleeping. */
typedef struct {
    long delays[16];
    int count;
} sleep_log;

static void record_sleep(void *ctx, long ms)
{
    sleep_log *log = ctx;
    if (log->count < 16) log->delays[log->count] = ms;
    log->count++;
}

static int group_setup(void **state)
{
    (void)state;
    return rt_fake_start(&fake, NULL) == 0 ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    rt_fake_stop(&fake);
    return 0;
}

static int reset_fake(void **state)
{
    (void)state;
    return rt_fake_reset(&fake) == 200 ? 0 : -1;
}

static rt_http *new_client(rt_http_options *opts)
{
    rt_http *h = NULL;
    char errstr[RT_ERRSTR_SIZE];
    int rc = rt_http_new(&h, opts, errstr);
    if (rc != 0) fail_msg("rt_http_new: %s", errstr);
    return h;
}

static size_t count_calls(const char *prefix)
{
    json_t *calls = rt_fake_calls(&fake, prefix);
    assert_non_null(calls);
    size_t n = json_array_size(calls);
    json_decref(calls);
    return n;
}

static void test_429_with_retry_after_is_retried_after_that_delay_then_succeeds(void **state)
{
    (void)state;
    rt_http_options opts = {.backoff_base_ms = 10, .backoff_max_ms = 5000};
    rt_http *h = new_client(&opts);
    rt_http_response resp;
    assert_int_equal(rt_fake_add_fault(&fake, "{\"path_prefix\": \"" TASK_PATH "\", \"kind\": "
                                              "\"status\", \"status\": 429, \"times\": 1, "
                                              "\"headers\": {\"Retry-After\": \"1\"}}"),
                     200);

    int64_t started = rt_test_now_ms();
    int rc = rt_http_get(h, rt_fake_url(&fake, TASK_PATH), &resp);
    int64_t elapsed = rt_test_now_ms() - started;

    assert_int_equal(rc, 0);
    assert_int_equal(resp.status, 200);
    assert_int_equal(resp.attempts, 2);
    assert_true(elapsed >= 950);
    assert_int_equal(count_calls(TASK_PATH), 2);
    rt_http_response_free(&resp);
    rt_http_free(h);
}

static void test_5xx_on_every_attempt_gives_up_naming_status_url_and_attempts(void **state)
{
    (void)state;
    sleep_log log = {0};
    rt_http_options opts = {.max_attempts = 3,
                            .backoff_base_ms = 100,
                            .backoff_max_ms = 10000,
                            .sleep_ms = record_sleep,
                            .sleep_ctx = &log};
    rt_http *h = new_client(&opts);
    rt_http_response resp;
    char url[256];
    assert_int_equal(rt_fake_add_fault(&fake, "{\"path_prefix\": \"" TASK_PATH "\", \"kind\": "
                                              "\"status\", \"status\": 503}"),
                     200);
    snprintf(url, sizeof url, "%s", rt_fake_url(&fake, TASK_PATH));

    int rc = rt_http_get(h, url, &resp);

    assert_int_equal(rc, RT_ERETRY);
    assert_int_equal(resp.status, 503);
    assert_non_null(strstr(rt_http_errstr(h), "HTTP 503"));
    assert_non_null(strstr(rt_http_errstr(h), "after 3 attempts"));
    assert_non_null(strstr(rt_http_errstr(h), url));
    assert_int_equal(count_calls(TASK_PATH), 3);
    /* Exponential backoff with jitter: the n-th delay lies in [base*2^(n-1)/2, base*2^(n-1)]. */
    assert_int_equal(log.count, 2);
    assert_in_range(log.delays[0], 50, 100);
    assert_in_range(log.delays[1], 100, 200);
    rt_http_response_free(&resp);
    rt_http_free(h);
}

static void test_retry_after_longer_than_backoff_max_is_capped(void **state)
{
    (void)state;
    sleep_log log = {0};
    rt_http_options opts = {
        .max_attempts = 2, .backoff_max_ms = 2000, .sleep_ms = record_sleep, .sleep_ctx = &log};
    rt_http *h = new_client(&opts);
    rt_http_response resp;
    assert_int_equal(rt_fake_add_fault(&fake, "{\"path_prefix\": \"" TASK_PATH "\", \"kind\": "
                                              "\"status\", \"status\": 429, \"times\": 1, "
                                              "\"headers\": {\"Retry-After\": \"120\"}}"),
                     200);

    assert_int_equal(rt_http_get(h, rt_fake_url(&fake, TASK_PATH), &resp), 0);
    assert_int_equal(log.count, 1);
    assert_int_equal(log.delays[0], 2000);
    rt_http_response_free(&resp);
    rt_http_free(h);
}

static void test_retry_after_http_date_in_the_past_retries_at_once(void **state)
{
    (void)state;
    sleep_log log = {0};
    rt_http_options opts = {.max_attempts = 2, .sleep_ms = record_sleep, .sleep_ctx = &log};
    rt_http *h = new_client(&opts);
    rt_http_response resp;
    assert_int_equal(rt_fake_add_fault(&fake, "{\"path_prefix\": \"" TASK_PATH "\", \"kind\": "
                                              "\"status\", \"status\": 503, \"times\": 1, "
                                              "\"headers\": {\"Retry-After\": "
                                              "\"Wed, 21 Oct 2015 07:28:00 GMT\"}}"),
                     200);

    assert_int_equal(rt_http_get(h, rt_fake_url(&fake, TASK_PATH), &resp), 0);
    assert_int_equal(log.count, 1);
    assert_int_equal(log.delays[0], 0);
    rt_http_response_free(&resp);
    rt_http_free(h);
}

static void test_404_is_returned_at_once_as_upstream_error(void **state)
{
    (void)state;
    rt_http_options opts = {.max_attempts = 4};
    rt_http *h = new_client(&opts);
    rt_http_response resp;

    int rc = rt_http_get(h, rt_fake_url(&fake, "/api/queue/v1/task/AAAAAAAAAAAAAAAAAAAAAA"), &resp);

    assert_int_equal(rc, RT_EUPSTREAM);
    assert_int_equal(resp.status, 404);
    assert_non_null(strstr(resp.body, "ResourceNotFound"));
    assert_non_null(strstr(rt_http_errstr(h), "HTTP 404"));
    assert_int_equal(count_calls("/api/queue/v1/task/AAAA"), 1);
    rt_http_response_free(&resp);
    rt_http_free(h);
}

static void check_body_over_cap_is_refused(bool chunked)
{
    rt_http_options opts = {.max_body_bytes = 64 * 1024, .max_attempts = 3};
    rt_http *h = new_client(&opts);
    rt_http_response resp;
    char rule[256];
    snprintf(rule, sizeof rule,
             "{\"path_prefix\": \"/big\", \"kind\": \"large_body\", \"bytes\": 1000000, "
             "\"chunked\": %s}",
             chunked ? "true" : "false");
    assert_int_equal(rt_fake_add_fault(&fake, rule), 200);

    int rc = rt_http_get(h, rt_fake_url(&fake, "/big"), &resp);

    assert_int_equal(rc, RT_ETOOBIG);
    assert_non_null(strstr(rt_http_errstr(h), "65536-byte cap"));
    assert_true(resp.len <= 64 * 1024);
    assert_int_equal(count_calls("/big"), 1); /* never retried */
    rt_http_response_free(&resp);

    /* The same client still works afterwards. */
    assert_int_equal(rt_http_get(h, rt_fake_url(&fake, TASK_PATH), &resp), 0);
    rt_http_response_free(&resp);
    rt_http_free(h);
}

static void test_body_over_cap_announced_by_content_length_is_refused(void **state)
{
    (void)state;
    check_body_over_cap_is_refused(false);
}

static void test_body_over_cap_while_streaming_chunked_is_refused(void **state)
{
    (void)state;
    check_body_over_cap_is_refused(true);
}

static void test_stalled_server_times_out_within_the_configured_timeout(void **state)
{
    (void)state;
    sleep_log log = {0};
    rt_http_options opts = {
        .timeout_ms = 500, .max_attempts = 2, .sleep_ms = record_sleep, .sleep_ctx = &log};
    rt_http *h = new_client(&opts);
    rt_http_response resp;
    assert_int_equal(
        rt_fake_add_fault(&fake, "{\"path_prefix\": \"" TASK_PATH "\", \"kind\": \"stall\"}"), 200);

    int64_t started = rt_test_now_ms();
    int rc = rt_http_get(h, rt_fake_url(&fake, TASK_PATH), &resp);
    int64_t elapsed = rt_test_now_ms() - started;

    assert_int_equal(rc, RT_ETIMEDOUT);
    assert_non_null(strstr(rt_http_errstr(h), "timed out"));
    /* Two attempts of 500 ms; the fake would stall for 60 s. */
    assert_true(elapsed >= 2 * 450);
    assert_true(elapsed < 10000);
    assert_int_equal(count_calls(TASK_PATH), 2);
    rt_http_response_free(&resp);
    rt_http_free(h);
}

static void test_connection_dropped_mid_body_is_retried(void **state)
{
    (void)state;
    sleep_log log = {0};
    rt_http_options opts = {.sleep_ms = record_sleep, .sleep_ctx = &log};
    rt_http *h = new_client(&opts);
    rt_http_response resp;
    size_t fixture_len;
    char *fixture = rt_test_read_file(
        rt_test_fixture("taskcluster/task_definition_" TASK_ID ".json"), &fixture_len);
    assert_int_equal(rt_fake_add_fault(&fake, "{\"path_prefix\": \"" TASK_PATH "\", \"kind\": "
                                              "\"drop_mid_body\", \"times\": 1}"),
                     200);

    int rc = rt_http_get(h, rt_fake_url(&fake, TASK_PATH), &resp);

    assert_int_equal(rc, 0);
    assert_int_equal(resp.attempts, 2);
    assert_int_equal(count_calls(TASK_PATH), 2);
    json_t *got = json_loadb(resp.body, resp.len, 0, NULL);
    json_t *want = json_loadb(fixture, fixture_len, 0, NULL);
    assert_non_null(got);
    assert_true(json_equal(got, want));
    json_decref(got);
    json_decref(want);
    free(fixture);
    rt_http_response_free(&resp);
    rt_http_free(h);
}

static void test_task_definition_fixture_is_served_unchanged_with_json_type(void **state)
{
    (void)state;
    rt_http *h = new_client(NULL);
    rt_http_response resp;
    json_error_t error;
    json_t *want = json_load_file(
        rt_test_fixture("taskcluster/task_definition_GWxTc8p_RUa5_Xo4RtMiCA.json"), 0, &error);
    assert_non_null(want);

    assert_int_equal(
        rt_http_get(h, rt_fake_url(&fake, "/api/queue/v1/task/GWxTc8p_RUa5_Xo4RtMiCA"), &resp), 0);

    json_t *got = json_loadb(resp.body, resp.len, 0, &error);
    assert_non_null(got);
    assert_true(json_equal(got, want));
    assert_non_null(resp.content_type);
    assert_non_null(strstr(resp.content_type, "application/json"));
    json_decref(got);
    json_decref(want);
    rt_http_response_free(&resp);
    rt_http_free(h);
}

static void test_user_agent_names_retrig_and_its_version(void **state)
{
    (void)state;
    rt_http *h = new_client(NULL);
    rt_http_response resp;
    assert_int_equal(rt_http_get(h, rt_fake_url(&fake, TASK_PATH), &resp), 0);

    json_t *calls = rt_fake_calls(&fake, TASK_PATH);
    assert_int_equal(json_array_size(calls), 1);
    json_t *headers = json_object_get(json_array_get(calls, 0), "headers");
    assert_string_equal(json_string_value(json_object_get(headers, "User-Agent")),
                        "retrig/" RETRIG_VERSION);
    json_decref(calls);
    rt_http_response_free(&resp);
    rt_http_free(h);
}

static void test_url_escape_encodes_slashes_and_keeps_unreserved(void **state)
{
    (void)state;
    char *escaped = rt_http_url_escape(HOOK_ID);
    assert_string_equal(escaped, "in-tree-action-3-generic%2F9353e8f146");
    free(escaped);
    escaped = rt_http_url_escape("a b&c=d~e.f_g");
    assert_string_equal(escaped, "a%20b%26c%3Dd~e.f_g");
    free(escaped);
}

/* A Hawk header as Taskcluster computes it (small on purpose: the real module comes later).
 * mac = base64(HMAC-SHA256(token, "hawk.1.header\nts\nnonce\nMETHOD\npath\nhost\nport\n\n\n")) */
static void hawk_header(char *out, size_t size, const char *token, const char *nonce, long ts,
                        const char *path)
{
    char normalized[1024];
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int mac_len = 0;
    unsigned char mac64[64];

    snprintf(normalized, sizeof normalized, "hawk.1.header\n%ld\n%s\nPOST\n%s\n127.0.0.1\n%d\n\n\n",
             ts, nonce, path, fake.port);
    assert_non_null(HMAC(EVP_sha256(), token, (int)strlen(token), (unsigned char *)normalized,
                         strlen(normalized), mac, &mac_len));
    EVP_EncodeBlock(mac64, mac, (int)mac_len);
    snprintf(out, size, "Hawk id=\"%s\", ts=\"%ld\", nonce=\"%s\", mac=\"%s\"", CLIENT_ID, ts,
             nonce, (char *)mac64);
}

static int trigger(rt_http *h, const char *authorization, rt_http_response *resp)
{
    static const char body[] =
        "{\"decision\": {\"action\": {\"name\": \"retrigger\", \"cb_name\": "
        "\"retrigger-decision\", \"taskGroupId\": \"EJAo7mQyRqS-jmzebhceFA\"}}, "
        "\"user\": {\"input\": {\"times\": 3}, \"taskId\": \"" TASK_ID "\", "
        "\"taskGroupId\": \"EJAo7mQyRqS-jmzebhceFA\"}}";
    rt_http_header headers[] = {{"Authorization", authorization},
                                {"Content-Type", "application/json"}};
    return rt_http_request(h, "POST", rt_fake_url(&fake, HOOK_PATH), headers, 2, body, strlen(body),
                           resp);
}

static void load_hook_client(void)
{
    assert_int_equal(rt_fake_load_scenario(&fake, "{\"hook_clients\": {\"" CLIENT_ID
                                                  "\": \"" ACCESS_TOKEN "\"}}"),
                     200);
}

static void test_hook_trigger_with_valid_mac_creates_a_listed_action_task(void **state)
{
    (void)state;
    char auth[512], nonce[64];
    rt_http *h = new_client(NULL);
    rt_http_response resp;
    load_hook_client();
    rt_test_unique_name(nonce, sizeof nonce, "nonce");
    hawk_header(auth, sizeof auth, ACCESS_TOKEN, nonce, (long)time(NULL), HOOK_PATH);

    assert_int_equal(trigger(h, auth, &resp), 0);

    json_t *answer = json_loadb(resp.body, resp.len, 0, NULL);
    const char *task_id =
        json_string_value(json_object_get(json_object_get(answer, "status"), "taskId"));
    assert_non_null(task_id);
    assert_int_equal(strlen(task_id), 22);
    json_t *triggers = rt_fake_triggers(&fake);
    assert_int_equal(json_array_size(triggers), 1);
    json_t *first = json_array_get(triggers, 0);
    assert_string_equal(json_string_value(json_object_get(first, "hookId")), HOOK_ID);
    assert_string_equal(json_string_value(json_object_get(first, "clientId")), CLIENT_ID);
    assert_string_equal(json_string_value(json_object_get(first, "taskId")), task_id);
    rt_http_response_free(&resp);

    /* The action task is listed in its task group with its input. */
    assert_int_equal(
        rt_http_get(h, rt_fake_url(&fake, "/api/queue/v1/task-group/EJAo7mQyRqS-jmzebhceFA/list"),
                    &resp),
        0);
    json_t *group = json_loadb(resp.body, resp.len, 0, NULL);
    json_t *tasks = json_object_get(group, "tasks");
    bool found = false;
    for (size_t i = 0; i < json_array_size(tasks); i++) {
        json_t *entry = json_array_get(tasks, i);
        const char *id =
            json_string_value(json_object_get(json_object_get(entry, "status"), "taskId"));
        if (id && !strcmp(id, task_id)) {
            json_t *input = json_object_get(
                json_object_get(json_object_get(json_object_get(entry, "task"), "extra"), "action"),
                "input");
            assert_int_equal(json_integer_value(json_object_get(input, "times")), 3);
            found = true;
        }
    }
    assert_true(found);
    json_decref(group);
    json_decref(triggers);
    json_decref(answer);
    rt_http_response_free(&resp);
    rt_http_free(h);
}

static void test_hook_trigger_with_wrong_mac_is_refused_and_creates_nothing(void **state)
{
    (void)state;
    char auth[512], nonce[64];
    rt_http *h = new_client(NULL);
    rt_http_response resp;
    load_hook_client();
    rt_test_unique_name(nonce, sizeof nonce, "nonce");
    hawk_header(auth, sizeof auth, "not-the-token", nonce, (long)time(NULL), HOOK_PATH);

    int rc = trigger(h, auth, &resp);

    assert_int_equal(rc, RT_EUPSTREAM);
    assert_int_equal(resp.status, 401);
    assert_non_null(strstr(resp.body, "AuthenticationFailed"));
    json_t *triggers = rt_fake_triggers(&fake);
    assert_int_equal(json_array_size(triggers), 0);
    assert_int_equal(count_calls("/api/hooks/"), 1);
    json_decref(triggers);
    rt_http_response_free(&resp);
    rt_http_free(h);
}

static void test_hook_trigger_with_replayed_nonce_is_refused(void **state)
{
    (void)state;
    char auth[512], nonce[64];
    rt_http *h = new_client(NULL);
    rt_http_response resp;
    load_hook_client();
    rt_test_unique_name(nonce, sizeof nonce, "nonce");
    hawk_header(auth, sizeof auth, ACCESS_TOKEN, nonce, (long)time(NULL), HOOK_PATH);
    assert_int_equal(trigger(h, auth, &resp), 0);
    rt_http_response_free(&resp);

    int rc = trigger(h, auth, &resp);

    assert_int_equal(rc, RT_EUPSTREAM);
    assert_int_equal(resp.status, 401);
    assert_non_null(strstr(resp.body, "nonce"));
    json_t *triggers = rt_fake_triggers(&fake);
    assert_int_equal(json_array_size(triggers), 1);
    json_decref(triggers);
    rt_http_response_free(&resp);
    rt_http_free(h);
}

static void test_hook_trigger_with_stale_timestamp_is_refused(void **state)
{
    (void)state;
    char auth[512], nonce[64];
    rt_http *h = new_client(NULL);
    rt_http_response resp;
    load_hook_client();
    rt_test_unique_name(nonce, sizeof nonce, "nonce");
    hawk_header(auth, sizeof auth, ACCESS_TOKEN, nonce, (long)time(NULL) - 120, HOOK_PATH);

    assert_int_equal(trigger(h, auth, &resp), RT_EUPSTREAM);
    assert_int_equal(resp.status, 401);
    assert_non_null(strstr(resp.body, "skew"));
    rt_http_response_free(&resp);
    rt_http_free(h);
}

static void test_post_is_not_retried_after_a_500_but_is_after_a_503(void **state)
{
    (void)state;
    char auth[512], nonce[64];
    sleep_log log = {0};
    rt_http_options opts = {.max_attempts = 3, .sleep_ms = record_sleep, .sleep_ctx = &log};
    rt_http *h = new_client(&opts);
    rt_http_response resp;
    load_hook_client();
    assert_int_equal(rt_fake_add_fault(&fake, "{\"path_prefix\": \"/api/hooks/\", \"kind\": "
                                              "\"status\", \"status\": 500, \"times\": 1}"),
                     200);
    rt_test_unique_name(nonce, sizeof nonce, "nonce");
    hawk_header(auth, sizeof auth, ACCESS_TOKEN, nonce, (long)time(NULL), HOOK_PATH);

    /* A 500 may have created the task: the POST is not repeated. */
    assert_int_equal(trigger(h, auth, &resp), RT_ERETRY);
    assert_int_equal(resp.attempts, 1);
    assert_int_equal(count_calls("/api/hooks/"), 1);
    rt_http_response_free(&resp);

    /* A 503 is retried; the retry carries the same header (a real caller signs again). */
    assert_int_equal(rt_fake_add_fault(&fake, "{\"path_prefix\": \"/api/hooks/\", \"kind\": "
                                              "\"status\", \"status\": 503, \"times\": 2}"),
                     200);
    assert_int_equal(trigger(h, auth, &resp), 0);
    assert_int_equal(resp.attempts, 3);
    assert_int_equal(count_calls("/api/hooks/"), 4);
    rt_http_response_free(&resp);
    rt_http_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_429_with_retry_after_is_retried_after_that_delay_then_succeeds,
                               reset_fake),
        cmocka_unit_test_setup(test_5xx_on_every_attempt_gives_up_naming_status_url_and_attempts,
                               reset_fake),
        cmocka_unit_test_setup(test_retry_after_longer_than_backoff_max_is_capped, reset_fake),
        cmocka_unit_test_setup(test_retry_after_http_date_in_the_past_retries_at_once, reset_fake),
        cmocka_unit_test_setup(test_404_is_returned_at_once_as_upstream_error, reset_fake),
        cmocka_unit_test_setup(test_body_over_cap_announced_by_content_length_is_refused,
                               reset_fake),
        cmocka_unit_test_setup(test_body_over_cap_while_streaming_chunked_is_refused, reset_fake),
        cmocka_unit_test_setup(test_stalled_server_times_out_within_the_configured_timeout,
                               reset_fake),
        cmocka_unit_test_setup(test_connection_dropped_mid_body_is_retried, reset_fake),
        cmocka_unit_test_setup(test_task_definition_fixture_is_served_unchanged_with_json_type,
                               reset_fake),
        cmocka_unit_test_setup(test_user_agent_names_retrig_and_its_version, reset_fake),
        cmocka_unit_test(test_url_escape_encodes_slashes_and_keeps_unreserved),
        cmocka_unit_test_setup(test_hook_trigger_with_valid_mac_creates_a_listed_action_task,
                               reset_fake),
        cmocka_unit_test_setup(test_hook_trigger_with_wrong_mac_is_refused_and_creates_nothing,
                               reset_fake),
        cmocka_unit_test_setup(test_hook_trigger_with_replayed_nonce_is_refused, reset_fake),
        cmocka_unit_test_setup(test_hook_trigger_with_stale_timestamp_is_refused, reset_fake),
        cmocka_unit_test_setup(test_post_is_not_retried_after_a_500_but_is_after_a_503, reset_fake),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
