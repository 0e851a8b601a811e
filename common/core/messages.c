/* SPDX-License-Identifier: MPL-2.0 */
/* messages.c - parse and build retrig's own queue messages. */
#include "common/core/messages.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/decide_rounds.h"
#include "common/core/ids.h"

#define CAP (1024 * 1024)

static int string_field(json_t *root, const char *key, bool (*valid)(const char *), char *out,
                        size_t size, char **dup, char *reason)
{
    json_t *v = json_object_get(root, key);
    if (!v) {
        snprintf(reason, RT_MESSAGE_REASON_SIZE, "missing-field:%s", key);
        return RT_EPROTO;
    }
    const char *s = json_string_value(v);
    if (!s) {
        snprintf(reason, RT_MESSAGE_REASON_SIZE, "wrong-type:%s", key);
        return RT_EPROTO;
    }
    if ((valid && !valid(s)) || (out && strlen(s) >= size)) {
        snprintf(reason, RT_MESSAGE_REASON_SIZE, "invalid-value:%s", key);
        return RT_EPROTO;
    }
    if (out) snprintf(out, size, "%s", s);
    if (dup && !(*dup = strdup(s))) return RT_ENOMEM;
    return RT_OK;
}

static int int_field(json_t *root, const char *key, long long min, long long max, long long *out,
                     char *reason)
{
    json_t *v = json_object_get(root, key);
    if (!v) {
        snprintf(reason, RT_MESSAGE_REASON_SIZE, "missing-field:%s", key);
        return RT_EPROTO;
    }
    if (!json_is_integer(v)) {
        snprintf(reason, RT_MESSAGE_REASON_SIZE, "wrong-type:%s", key);
        return RT_EPROTO;
    }
    long long n = json_integer_value(v);
    if (n < min || n > max) {
        snprintf(reason, RT_MESSAGE_REASON_SIZE, "invalid-value:%s", key);
        return RT_EPROTO;
    }
    *out = n;
    return RT_OK;
}

static json_t *load(const char *body, size_t len, char *reason)
{
    if (len > CAP) {
        snprintf(reason, RT_MESSAGE_REASON_SIZE, "too-big");
        return NULL;
    }
    json_error_t error;
    json_t *root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &error);
    if (!json_is_object(root)) {
        snprintf(reason, RT_MESSAGE_REASON_SIZE, root ? "wrong-type:body" : "invalid-json");
        json_decref(root);
        return NULL;
    }
    long long version = 0;
    if (int_field(root, "version", 1, 1, &version, reason) != RT_OK) {
        json_decref(root);
        return NULL;
    }
    return root;
}

int rt_retrigger_request_parse(const char *body, size_t len, rt_retrigger_request *out,
                               char *reason)
{
    memset(out, 0, sizeof *out);
    json_t *root = load(body, len, reason);
    if (!root) return RT_EPROTO;
    long long run_id = 0, times = 0, round = 1; /* requests before rounds are round 1's */
    int rc;
    if ((rc = int_field(root, "set_id", 1, (1LL << 62), &out->set_id, reason)) ||
        (rc = string_field(root, "project", rt_valid_project, out->project, sizeof out->project,
                           NULL, reason)) ||
        (rc = string_field(root, "revision", rt_valid_revision, out->revision, sizeof out->revision,
                           NULL, reason)) ||
        (rc = string_field(root, "label", rt_valid_label, NULL, 0, &out->label, reason)) ||
        (rc = string_field(root, "task_id", rt_valid_task_id, out->task_id, sizeof out->task_id,
                           NULL, reason)) ||
        (rc = int_field(root, "run_id", 0, 1000, &run_id, reason)) ||
        (rc = string_field(root, "task_group_id", rt_valid_task_id, out->task_group_id,
                           sizeof out->task_group_id, NULL, reason)) ||
        (rc = string_field(root, "platform", rt_valid_label, NULL, 0, &out->platform, reason)) ||
        (rc = string_field(root, "task_queue_id", rt_valid_task_queue_id, NULL, 0,
                           &out->task_queue_id, reason)) ||
        (rc = int_field(root, "times", 1, 20, &times, reason)) ||
        (json_object_get(root, "round") &&
         (rc = int_field(root, "round", 1, RT_ROUND_MAX, &round, reason)))) {
        json_decref(root);
        rt_retrigger_request_free(out);
        return rc;
    }
    out->run_id = (int)run_id;
    out->times = (int)times;
    out->round = (int)round;
    json_decref(root);
    return RT_OK;
}

void rt_retrigger_request_free(rt_retrigger_request *req)
{
    if (!req) return;
    free(req->label);
    free(req->platform);
    free(req->task_queue_id);
    req->label = req->platform = req->task_queue_id = NULL;
}

static bool valid_reason(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= 256) return false;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p >= 0x7f) return false;
    return true;
}

int rt_decide_request_parse(const char *body, size_t len, rt_decide_request *out, char *reason)
{
    memset(out, 0, sizeof *out);
    json_t *root = load(body, len, reason);
    if (!root) return RT_EPROTO;
    long long attempt = 0;
    int rc;
    if ((rc = int_field(root, "set_id", 1, (1LL << 62), &out->set_id, reason)) ||
        (rc = string_field(root, "project", rt_valid_project, out->project, sizeof out->project,
                           NULL, reason)) ||
        (rc = int_field(root, "attempt", 0, 1000, &attempt, reason)) ||
        (rc = string_field(root, "reason", valid_reason, out->reason, sizeof out->reason, NULL,
                           reason))) {
        json_decref(root);
        return rc;
    }
    out->attempt = (int)attempt;
    json_decref(root);
    return RT_OK;
}

char *rt_decide_request_build(const rt_decide_request *req)
{
    json_t *o =
        json_pack("{s:i, s:I, s:s, s:i, s:s}", "version", 1, "set_id", (json_int_t)req->set_id,
                  "project", req->project, "attempt", req->attempt, "reason", req->reason);
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    return text;
}
