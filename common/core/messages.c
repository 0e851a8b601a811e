/* SPDX-License-Identifier: MPL-2.0 */
/* messages.c - parse and build retrig's own queue messages (messages.h). */
#include "common/core/messages.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/decide_rounds.h"
#include "common/core/ids.h"
#include "common/core/message_fields.h"

#define CAP (1024 * 1024)

int rt__message_string(json_t *root, const char *key, bool (*valid)(const char *), char *out,
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

int rt__message_int(json_t *root, const char *key, long long min, long long max, long long *out,
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

/* RFC 3339 date-time (message_fields.h). */
bool rt__message_valid_time(const char *s)
{
    static const char shape[] = "dddd-dd-ddTdd:dd:dd", zone[] = "dd:dd";
    size_t n = strlen(s), i = 0;
    if (n < sizeof shape || n > 39) return false;
    for (; shape[i]; i++)
        if (shape[i] == 'd' ? !(s[i] >= '0' && s[i] <= '9') : s[i] != shape[i]) return false;
    if (s[i] == '.') {
        size_t digits = 0;
        for (i++; s[i] >= '0' && s[i] <= '9'; i++) digits++;
        if (!digits) return false;
    }
    if (s[i] == 'Z') return i + 1 == n;
    if ((s[i] != '+' && s[i] != '-') || n - i - 1 != sizeof zone - 1) return false;
    for (size_t k = 0; zone[k]; k++)
        if (zone[k] == 'd' ? !(s[i + 1 + k] >= '0' && s[i + 1 + k] <= '9')
                           : s[i + 1 + k] != zone[k])
            return false;
    return true;
}

/* A copy of the string member key of o into *out: NULL for a JSON null when nullable. */
static int failure_text(json_t *o, const char *key, bool nullable, char **out, char *reason)
{
    json_t *v = json_object_get(o, key);
    if (!v) {
        snprintf(reason, RT_MESSAGE_REASON_SIZE, "missing-field:failures.%s", key);
        return RT_EPROTO;
    }
    if (nullable && json_is_null(v)) return RT_OK;
    const char *s = json_string_value(v);
    if (!s) {
        snprintf(reason, RT_MESSAGE_REASON_SIZE, "wrong-type:failures.%s", key);
        return RT_EPROTO;
    }
    return (*out = strdup(s)) ? RT_OK : RT_ENOMEM;
}

static int compare_strings(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The request's lists from their JSON (either may be NULL: absent, empty). Bounded: at most
 * RT_REQUEST_MAX_GROUPS groups (unique strings) and RT_REQUEST_MAX_FAILURES failures, each an
 * object of the schema's six members and no other. An empty group or test name is let
 * through: the errorsummary has them (a crash line of no test, a group_result without a
 * name), retrig always published them, and a request must not be dead-lettered for them. */
static int read_lists(json_t *groups, json_t *failures, rt_retrigger_request *req, char *reason)
{
    if ((groups && !json_is_array(groups)) || (failures && !json_is_array(failures))) {
        snprintf(reason, RT_MESSAGE_REASON_SIZE, "wrong-type:%s",
                 groups && !json_is_array(groups) ? "failing_groups" : "failures");
        return RT_EPROTO;
    }
    size_t ngroups = json_array_size(groups), nfailures = json_array_size(failures);
    if (ngroups > RT_REQUEST_MAX_GROUPS || nfailures > RT_REQUEST_MAX_FAILURES) {
        snprintf(reason, RT_MESSAGE_REASON_SIZE, "invalid-value:%s",
                 ngroups > RT_REQUEST_MAX_GROUPS ? "failing_groups" : "failures");
        return RT_EPROTO;
    }
    if (ngroups && !(req->failing_groups = calloc(ngroups, sizeof *req->failing_groups)))
        return RT_ENOMEM;
    if (nfailures && !(req->failures = calloc(nfailures, sizeof *req->failures))) return RT_ENOMEM;
    for (size_t i = 0; i < ngroups; i++) {
        const char *g = json_string_value(json_array_get(groups, i));
        if (!g) {
            snprintf(reason, RT_MESSAGE_REASON_SIZE, "wrong-type:failing_groups");
            return RT_EPROTO;
        }
        if (!(req->failing_groups[i] = strdup(g))) return RT_ENOMEM;
        req->nfailing_groups = i + 1;
    }
    if (ngroups > 1) { /* unique: neighbours once sorted */
        char **sorted = malloc(ngroups * sizeof *sorted);
        if (!sorted) return RT_ENOMEM;
        memcpy(sorted, req->failing_groups, ngroups * sizeof *sorted);
        qsort(sorted, ngroups, sizeof *sorted, compare_strings);
        bool unique = true;
        for (size_t i = 1; unique && i < ngroups; i++) unique = strcmp(sorted[i - 1], sorted[i]);
        free(sorted);
        if (!unique) {
            snprintf(reason, RT_MESSAGE_REASON_SIZE, "invalid-value:failing_groups");
            return RT_EPROTO;
        }
    }
    for (size_t i = 0; i < nfailures; i++) {
        json_t *o = json_array_get(failures, i);
        if (!json_is_object(o) || json_object_size(o) > 6) {
            snprintf(reason, RT_MESSAGE_REASON_SIZE, "%s:failures",
                     json_is_object(o) ? "invalid-value" : "wrong-type");
            return RT_EPROTO;
        }
        rt_request_failure *f = &req->failures[i];
        req->nfailures = i + 1;
        int rc;
        if ((rc = failure_text(o, "test", false, &f->test, reason)) ||
            (rc = failure_text(o, "subtest", true, &f->subtest, reason)) ||
            (rc = failure_text(o, "status", false, &f->status, reason)) ||
            (rc = failure_text(o, "expected", false, &f->expected, reason)) ||
            (rc = failure_text(o, "message", true, &f->message, reason)) ||
            (rc = failure_text(o, "group", false, &f->group, reason)))
            return rc;
    }
    return RT_OK;
}

json_t *rt__message_load(const char *body, size_t len, char *reason)
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
    if (rt__message_int(root, "version", 1, 1, &version, reason) != RT_OK) {
        json_decref(root);
        return NULL;
    }
    return root;
}

int rt_retrigger_request_parse(const char *body, size_t len, rt_retrigger_request *out,
                               char *reason)
{
    memset(out, 0, sizeof *out);
    json_t *root = rt__message_load(body, len, reason);
    if (!root) return RT_EPROTO;
    long long run_id = 0, times = 0, round = 1; /* requests before rounds are round 1's */
    int rc;
    if ((rc = rt__message_int(root, "set_id", 1, (1LL << 62), &out->set_id, reason)) ||
        (rc = rt__message_string(root, "project", rt_valid_project, out->project,
                                 sizeof out->project, NULL, reason)) ||
        (rc = rt__message_string(root, "revision", rt_valid_revision, out->revision,
                                 sizeof out->revision, NULL, reason)) ||
        (rc = rt__message_string(root, "label", rt_valid_label, NULL, 0, &out->label, reason)) ||
        (rc = rt__message_string(root, "task_id", rt_valid_task_id, out->task_id,
                                 sizeof out->task_id, NULL, reason)) ||
        (rc = rt__message_int(root, "run_id", 0, 1000, &run_id, reason)) ||
        (rc = rt__message_string(root, "task_group_id", rt_valid_task_id, out->task_group_id,
                                 sizeof out->task_group_id, NULL, reason)) ||
        (rc = rt__message_string(root, "platform", rt_valid_label, NULL, 0, &out->platform,
                                 reason)) ||
        (rc = rt__message_string(root, "task_queue_id", rt_valid_task_queue_id, NULL, 0,
                                 &out->task_queue_id, reason)) ||
        (rc = rt__message_int(root, "times", 1, 20, &times, reason)) ||
        (json_object_get(root, "round") &&
         (rc = rt__message_int(root, "round", 1, RT_ROUND_MAX, &round, reason)))) {
        json_decref(root);
        rt_retrigger_request_free(out);
        return rc;
    }
    json_t *at = json_object_get(root, "requested_at");
    if (at &&
        (rc = rt__message_string(root, "requested_at", rt__message_valid_time, out->requested_at,
                                 sizeof out->requested_at, NULL, reason))) {
        json_decref(root);
        rt_retrigger_request_free(out);
        return rc;
    }
    rc = read_lists(json_object_get(root, "failing_groups"), json_object_get(root, "failures"), out,
                    reason);
    json_decref(root);
    if (rc != RT_OK) {
        rt_retrigger_request_free(out);
        return rc;
    }
    out->run_id = (int)run_id;
    out->times = (int)times;
    out->round = (int)round;
    return RT_OK;
}

static void free_lists(rt_retrigger_request *req)
{
    for (size_t i = 0; i < req->nfailing_groups; i++) free(req->failing_groups[i]);
    free(req->failing_groups);
    for (size_t i = 0; i < req->nfailures; i++) {
        rt_request_failure *f = &req->failures[i];
        free(f->test);
        free(f->subtest);
        free(f->status);
        free(f->expected);
        free(f->message);
        free(f->group);
    }
    free(req->failures);
    req->failing_groups = NULL;
    req->failures = NULL;
    req->nfailing_groups = req->nfailures = 0;
}

void rt_retrigger_request_free(rt_retrigger_request *req)
{
    if (!req) return;
    free(req->label);
    free(req->platform);
    free(req->task_queue_id);
    req->label = req->platform = req->task_queue_id = NULL;
    free_lists(req);
}

/* The two lists as JSON arrays (new references); false when out of memory. */
static bool lists_json(const rt_retrigger_request *req, json_t **groups, json_t **failures)
{
    *groups = json_array();
    *failures = json_array();
    bool whole = *groups && *failures; /* never a shorter list */
    for (size_t i = 0; whole && i < req->nfailing_groups; i++)
        whole = json_array_append_new(*groups, json_string(req->failing_groups[i])) == 0;
    for (size_t i = 0; whole && i < req->nfailures; i++) {
        const rt_request_failure *f = &req->failures[i];
        json_t *o = json_pack("{s:s, s:s?, s:s, s:s, s:s?, s:s}", "test", f->test, "subtest",
                              f->subtest, "status", f->status, "expected", f->expected, "message",
                              f->message, "group", f->group);
        whole = o && json_array_append_new(*failures, o) == 0;
    }
    if (whole) return true;
    json_decref(*groups);
    json_decref(*failures);
    *groups = *failures = NULL;
    return false;
}

char *rt_retrigger_request_build(const rt_retrigger_request *req)
{
    if (!req->label || !req->platform || !req->task_queue_id) return NULL;
    json_t *groups = NULL, *failures = NULL;
    if (!lists_json(req, &groups, &failures)) return NULL;
    json_t *o = json_pack("{s:i, s:I, s:s, s:s, s:s, s:s, s:i, s:s, s:s, s:s, s:i}", "version", 1,
                          "set_id", (json_int_t)req->set_id, "project", req->project, "revision",
                          req->revision, "label", req->label, "task_id", req->task_id, "run_id",
                          req->run_id, "task_group_id", req->task_group_id, "platform",
                          req->platform, "task_queue_id", req->task_queue_id, "times", req->times);
    bool whole = o != NULL;
    if (whole && req->round > 1)
        whole = json_object_set_new(o, "round", json_integer(req->round)) == 0;
    if (whole && req->requested_at[0])
        whole = json_object_set_new(o, "requested_at", json_string(req->requested_at)) == 0;
    whole = whole && json_object_set_new(o, "failing_groups", groups) == 0;
    groups = NULL; /* stolen, also by a failed set */
    whole = whole && json_object_set_new(o, "failures", failures) == 0;
    failures = NULL;
    char *text = whole ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(groups);
    json_decref(failures);
    json_decref(o);
    return text;
}

int rt_request_lists_build(const rt_errorsummary *es, char **groups_text, char **failures_text)
{
    *groups_text = *failures_text = NULL;
    rt_retrigger_request req = {0};
    size_t nfailures =
        es->nfailures < RT_REQUEST_MAX_FAILURES ? es->nfailures : RT_REQUEST_MAX_FAILURES;
    /* Borrowed strings: the lists are only read from here. */
    req.failing_groups = es->ngroups ? calloc(es->ngroups, sizeof *req.failing_groups) : NULL;
    req.failures = nfailures ? calloc(nfailures, sizeof *req.failures) : NULL;
    json_t *groups = NULL, *failures = NULL;
    int rc = RT_ENOMEM;
    if ((es->ngroups && !req.failing_groups) || (nfailures && !req.failures)) goto out;
    for (size_t i = 0; i < es->ngroups; i++)
        if (rt_errorsummary_group_failed(es, &es->groups[i]))
            req.failing_groups[req.nfailing_groups++] = es->groups[i].name;
    for (size_t i = 0; i < nfailures; i++) {
        const rt_es_failure *f = &es->failures[i];
        req.failures[req.nfailures++] = (rt_request_failure){.test = f->test,
                                                             .subtest = f->subtest,
                                                             .status = f->status,
                                                             .expected = f->expected,
                                                             .message = f->message,
                                                             .group = f->group};
    }
    if (!lists_json(&req, &groups, &failures)) goto out;
    *groups_text = json_dumps(groups, JSON_COMPACT);
    *failures_text = json_dumps(failures, JSON_COMPACT);
    rc = *groups_text && *failures_text ? RT_OK : RT_ENOMEM;
out:
    if (rc != RT_OK) {
        free(*groups_text);
        free(*failures_text);
        *groups_text = *failures_text = NULL;
    }
    json_decref(groups);
    json_decref(failures);
    free(req.failing_groups);
    free(req.failures);
    return rc;
}

int rt_request_lists_read(rt_retrigger_request *req, const char *groups_text,
                          const char *failures_text, char *reason)
{
    free_lists(req);
    json_error_t error;
    json_t *groups = groups_text ? json_loads(groups_text, JSON_REJECT_DUPLICATES, &error) : NULL;
    json_t *failures =
        failures_text ? json_loads(failures_text, JSON_REJECT_DUPLICATES, &error) : NULL;
    int rc = RT_EPROTO;
    if (!groups)
        snprintf(reason, RT_MESSAGE_REASON_SIZE, "invalid-json:failing_groups");
    else if (!failures)
        snprintf(reason, RT_MESSAGE_REASON_SIZE, "invalid-json:failures");
    else
        rc = read_lists(groups, failures, req, reason);
    json_decref(groups);
    json_decref(failures);
    if (rc != RT_OK) free_lists(req);
    return rc;
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
    json_t *root = rt__message_load(body, len, reason);
    if (!root) return RT_EPROTO;
    long long attempt = 0;
    int rc;
    if ((rc = rt__message_int(root, "set_id", 1, (1LL << 62), &out->set_id, reason)) ||
        (rc = rt__message_string(root, "project", rt_valid_project, out->project,
                                 sizeof out->project, NULL, reason)) ||
        (rc = rt__message_int(root, "attempt", 0, 1000, &attempt, reason)) ||
        (rc = rt__message_string(root, "reason", valid_reason, out->reason, sizeof out->reason,
                                 NULL, reason))) {
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
