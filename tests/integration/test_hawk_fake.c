/* SPDX-License-Identifier: MPL-2.0 */
/* test_hawk_fake.c - our Hawk headers against the fake upstream's independent verifier:
 * the fixture's retrigger-multiple payload rendered, signed and POSTed to triggerHook. */
#include "support/util.h"
#include "support/fake_upstream.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/core/actions.h"
#include "common/core/hawk.h"
#include "common/core/ids.h"
#include "common/io/http.h"

#define DECISION "f7Jj_h6MTEKr5Ln_7aFqbw"
#define TOKEN    "fake-access-token-not-a-secret"

static rt_fake fake;
static char client_id[96];

static int group_setup(void **state)
{
    (void)state;
    if (rt_fake_start(&fake, NULL) != 0) return -1;
    char scenario[256];
    rt_test_unique_name(client_id, sizeof client_id, "project/retrig/hawk");
    snprintf(scenario, sizeof scenario, "{\"hook_clients\": {\"%s\": \"%s\"}}", client_id, TOKEN);
    return rt_fake_load_scenario(&fake, scenario) == 200 ? 0 : -1;
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

/* The fixture's retrigger-multiple payload and the trigger URL of its hook. */
static char *render_payload(char *url, size_t size)
{
    size_t len;
    char *text = rt_test_read_file(rt_test_fixture("taskcluster/actions.json"), &len);
    rt_actions *actions = NULL;
    const rt_action *action = NULL;
    char errstr[RT_ERRSTR_SIZE];
    assert_int_equal(rt_actions_parse(text, len, len, &actions, errstr), RT_OK);
    free(text);
    assert_int_equal(rt_actions_find(actions, "retrigger-multiple", NULL, 0, &action, errstr),
                     RT_OK);
    json_t *input = json_pack("{s:[{s:[s],s:i}]}", "requests", "tasks",
                              "test-android-em-7.0-x86_64/debug-mochitest-e10s-1", "times", 3);
    json_t *payload = NULL;
    assert_int_equal(rt_actions_render(actions, action, DECISION, NULL, input, &payload, errstr),
                     RT_OK);
    char *group = rt_http_url_escape(action->hook_group_id),
         *hook = rt_http_url_escape(action->hook_id);
    snprintf(url, size, "%s/api/hooks/v1/hooks/%s/%s/trigger", fake.base_url, group, hook);
    free(group);
    free(hook);
    char *body = json_dumps(payload, JSON_COMPACT);
    json_decref(payload);
    json_decref(input);
    rt_actions_free(actions);
    return body;
}

/* POSTs body signed with key at time ts with nonce; returns the HTTP status. */
static long post_signed(const char *url, const char *body, const char *key, long ts,
                        const char *nonce, char **response)
{
    rt_hawk_credentials creds = {.client_id = client_id, .access_token = key};
    char *auth = NULL;
    assert_int_equal(
        rt_hawk_header(&creds, "POST", url, body, "application/json", ts, nonce, &auth), RT_OK);
    rt_http_header headers[] = {{"Authorization", auth}, {"Content-Type", "application/json"}};
    rt_http *h = NULL;
    rt_http_options opts = {.max_attempts = 1};
    char errstr[RT_ERRSTR_SIZE];
    assert_int_equal(rt_http_new(&h, &opts, errstr), RT_OK);
    rt_http_response resp;
    int rc = rt_http_request(h, "POST", url, headers, 2, body, strlen(body), &resp);
    long status = resp.status;
    assert_true(rc == RT_OK || rc == RT_EUPSTREAM);
    if (response) *response = strdup(resp.body);
    rt_http_response_free(&resp);
    free(auth);
    rt_http_free(h);
    return status;
}

static void test_signed_trigger_is_accepted_and_creates_the_action_task(void **state)
{
    (void)state;
    char url[512], nonce[RT_HAWK_NONCE_SIZE], *response = NULL;
    char *body = render_payload(url, sizeof url);
    assert_int_equal(rt_hawk_nonce(nonce), RT_OK);
    assert_int_equal(post_signed(url, body, TOKEN, (long)time(NULL), nonce, &response), 200);

    json_t *answer = json_loads(response, 0, NULL);
    const char *task_id =
        json_string_value(json_object_get(json_object_get(answer, "status"), "taskId"));
    assert_non_null(task_id);
    assert_true(rt_valid_task_id(task_id));

    json_t *triggers = rt_fake_triggers(&fake);
    assert_int_equal(json_array_size(triggers), 1);
    json_t *trigger = json_array_get(triggers, 0);
    assert_string_equal(json_string_value(json_object_get(trigger, "clientId")), client_id);
    assert_string_equal(json_string_value(json_object_get(trigger, "hookId")),
                        "in-tree-action-3-generic/9353e8f146");
    assert_string_equal(json_string_value(json_object_get(trigger, "taskId")), task_id);
    assert_string_equal(json_string_value(json_object_get(trigger, "taskGroupId")), DECISION);
    json_t *sent = json_loads(body, 0, NULL);
    assert_true(json_equal(json_object_get(trigger, "payload"), sent));
    json_decref(sent);
    json_decref(triggers);
    json_decref(answer);
    free(response);
    free(body);
}

static void test_wrong_key_is_rejected_with_401(void **state)
{
    (void)state;
    char url[512], nonce[RT_HAWK_NONCE_SIZE], *response = NULL;
    char *body = render_payload(url, sizeof url);
    assert_int_equal(rt_hawk_nonce(nonce), RT_OK);
    assert_int_equal(post_signed(url, body, "not-the-token", (long)time(NULL), nonce, &response),
                     401);
    assert_non_null(strstr(response, "AuthenticationFailed"));
    json_t *triggers = rt_fake_triggers(&fake);
    assert_int_equal(json_array_size(triggers), 0);
    json_decref(triggers);
    free(response);
    free(body);
}

static void test_reused_nonce_and_stale_timestamp_are_rejected(void **state)
{
    (void)state;
    char url[512], nonce[RT_HAWK_NONCE_SIZE], *response = NULL;
    char *body = render_payload(url, sizeof url);
    assert_int_equal(rt_hawk_nonce(nonce), RT_OK);
    long now = (long)time(NULL);
    assert_int_equal(post_signed(url, body, TOKEN, now, nonce, NULL), 200);
    assert_int_equal(post_signed(url, body, TOKEN, now, nonce, &response), 401);
    assert_non_null(strstr(response, "nonce reused"));
    free(response);
    assert_int_equal(rt_hawk_nonce(nonce), RT_OK);
    assert_int_equal(post_signed(url, body, TOKEN, now - 3600, nonce, &response), 401);
    assert_non_null(strstr(response, "skew"));
    free(response);
    free(body);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_signed_trigger_is_accepted_and_creates_the_action_task,
                               reset_fake),
        cmocka_unit_test_setup(test_wrong_key_is_rejected_with_401, reset_fake),
        cmocka_unit_test_setup(test_reused_nonce_and_stale_timestamp_are_rejected, reset_fake),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
