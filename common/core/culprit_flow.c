/* SPDX-License-Identifier: MPL-2.0 */
/* culprit_flow.c - the rules of a production culprit search around the bisection
 * (culprit_flow.h). Pure. */
#include "common/core/culprit_flow.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/core/ids.h"
#include "common/core/messages.h"

#define PROBE_MAX_BYTES 16384 /* a probe request is a few hundred bytes */

static bool is(const char *s, const char *want) { return s && !strcmp(s, want); }

rt_culprit_job_kind rt_culprit_job_kind_of(const char *state, const char *result)
{
    if (!is(state, "completed")) return RT_CJOB_PENDING; /* unscheduled, pending, running */
    if (is(result, "success")) return RT_CJOB_PASSED;
    if (is(result, "testfailed") || is(result, "busted")) return RT_CJOB_FAILED;
    return RT_CJOB_NONE;
}

static int capped(long v)
{
    if (v < 0) return 0;
    return v > RT_CULPRIT_MAX_RUNS ? RT_CULPRIT_MAX_RUNS : (int)v;
}

void rt_culprit_tally_push(const rt_culprit_tally *t, int base_jobs, int seen_jobs, int asked,
                           bool give_up_missing, rt_culprit_push *out)
{
    long missing = give_up_missing ? 0 : rt_culprit_unlisted(base_jobs, asked, seen_jobs);
    out->runs = capped((long)t->passed + t->reproduced + t->other);
    out->reproduced = capped(t->reproduced);
    if (out->reproduced > out->runs) out->reproduced = out->runs;
    out->pending = capped((long)t->pending + missing);
}

static bool utc_time(const char *s);

const char *rt_culprit_probe_late(int pending, int unlisted, const char *requested_at,
                                  long long now_s, int deadline_minutes)
{
    if (pending <= 0) return NULL;
    struct tm tm = {0};
    if (!requested_at || !utc_time(requested_at) ||
        !strptime(requested_at, "%Y-%m-%dT%H:%M:%S", &tm))
        return RT_CULPRIT_PROBE_TIMEOUT;
    long long age = now_s - (long long)timegm(&tm), deadline = (long long)deadline_minutes * 60;
    if (age < deadline) return NULL;
    if (unlisted > 0) return RT_CULPRIT_PROBE_TIMEOUT;
    return age < RT_CULPRIT_SLOW_FACTOR * deadline ? NULL : RT_CULPRIT_PROBE_TOO_SLOW;
}

int rt_culprit_unlisted(int base_jobs, int asked, int seen_jobs)
{
    long missing = (long)base_jobs + asked - seen_jobs;
    return missing <= 0 ? 0 : missing > RT_CULPRIT_MAX_RUNS ? RT_CULPRIT_MAX_RUNS : (int)missing;
}

rt_culprit_walk rt_culprit_walk_step(const rt_culprit_push *push, int index, int max_depth)
{
    if (push->runs > 0 && push->reproduced == 0) return RT_WALK_FIRST;
    return index >= max_depth ? RT_WALK_FIRST : RT_WALK_MORE;
}

int rt_culprit_flow_next(const rt_culprit_input *in, rt_culprit_result *out)
{
    int rc = rt_culprit_next(in, out);
    if (rc != RT_OK || in->npushes != 2) return rc;
    const rt_culprit_push *first = &in->pushes[0];
    /* Its own answer is then found already, or to confirm the first push (or no budget to). */
    if (out->status == RT_CULPRIT_FOUND || out->status == RT_CULPRIT_BEFORE_WINDOW ||
        first->runs < 1 || first->reproduced != 0)
        return RT_OK;
    /* Nothing lies between a push that ran the label without reproducing and the failing
     * push: the failing push brought the regression. */
    *out = (rt_culprit_result){.status = RT_CULPRIT_FOUND,
                               .culprit = 1,
                               .probe = -1,
                               .confirm = -1,
                               .first = 1,
                               .last = 1,
                               .good = 0,
                               .bad = 1};
    snprintf(out->reason, sizeof out->reason, "no-candidate");
    return RT_OK;
}

const char *rt_culprit_push_class_name(const rt_culprit_push *push, bool first, bool failing,
                                       const rt_culprit_model *model, size_t npushes,
                                       rt_culprit_classify_fn classify, void *ctx)
{
    if (failing) return "bad";
    rt_culprit_model m = *model;
    m.confidence = rt_culprit_push_confidence(model->confidence, npushes);
    rt_culprit_evidence e = {push->runs, push->reproduced, first};
    switch ((classify ? classify : rt_culprit_seed_classify)(&e, &m, ctx).cls) {
    case RT_PUSH_GOOD: return "good";
    case RT_PUSH_BAD: return "bad";
    case RT_PUSH_OPEN: break;
    }
    return "open";
}

bool rt_culprit_glob_like(const char *glob, char *out, size_t size)
{
    size_t n = 0;
    for (const char *p = glob; *p; p++) {
        char c = *p == '*' ? '%' : *p == '?' ? '_' : *p;
        bool escape = *p == '%' || *p == '_' || *p == '\\';
        if (n + (escape ? 2 : 1) >= size) return false;
        if (escape) out[n++] = '\\';
        out[n++] = c;
    }
    if (n >= size) return false;
    out[n] = '\0';
    return true;
}

/* ---- the probe request ---- */

static int fail(char *reason, const char *what, const char *key, int rc)
{
    snprintf(reason, RT_MESSAGE_REASON_SIZE, "%s:%s", what, key);
    return rc;
}

static int text_member(json_t *root, const char *key, bool (*valid)(const char *), char *out,
                       size_t size, char *reason)
{
    json_t *v = json_object_get(root, key);
    if (!v) return fail(reason, "missing-field", key, RT_EPROTO);
    const char *s = json_string_value(v);
    if (!s) return fail(reason, "wrong-type", key, RT_EPROTO);
    if (strlen(s) >= size || (valid && !valid(s)))
        return fail(reason, "invalid-value", key, RT_EPROTO);
    memcpy(out, s, strlen(s) + 1);
    return RT_OK;
}

static int int_member(json_t *root, const char *key, long long min, long long max, long long *out,
                      char *reason)
{
    json_t *v = json_object_get(root, key);
    if (!v) return fail(reason, "missing-field", key, RT_EPROTO);
    if (!json_is_integer(v)) return fail(reason, "wrong-type", key, RT_EPROTO);
    long long n = json_integer_value(v);
    if (n < min || n > max) return fail(reason, "invalid-value", key, RT_EPROTO);
    *out = n;
    return RT_OK;
}

static bool full_revision(const char *s)
{
    if (strlen(s) != 40) return false;
    for (const char *p = s; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'))) return false;
    return true;
}

/* An RFC 3339 UTC time as retrig writes it: YYYY-MM-DDTHH:MM:SS[.fff]Z. */
static bool utc_time(const char *s)
{
    static const char shape[] = "dddd-dd-ddTdd:dd:dd";
    size_t n = strlen(s), i = 0;
    if (n < sizeof shape || n > 30 || s[n - 1] != 'Z') return false;
    for (; shape[i]; i++)
        if (shape[i] == 'd' ? !(s[i] >= '0' && s[i] <= '9') : s[i] != shape[i]) return false;
    if (s[i] == '.') {
        if (i + 2 >= n) return false;
        for (i++; i < n - 1; i++)
            if (!(s[i] >= '0' && s[i] <= '9')) return false;
    }
    return i == n - 1;
}

int rt_culprit_probe_request_parse(const char *body, size_t len, rt_culprit_probe_request *out,
                                   char *reason)
{
    static const char *const known[] = {"version",  "kind",  "set_id",   "project",
                                        "revision", "label", "platform", "times",
                                        "attempt",  "round", "confirm",  "requested_at"};
    memset(out, 0, sizeof *out);
    /* A probe request is a few hundred bytes; a bigger body is a retrigger request (whose
     * parser refuses it if it is neither). */
    if (len > PROBE_MAX_BYTES) return RT_ENOTFOUND;
    json_error_t error;
    json_t *root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &error);
    if (!json_is_object(root) || !json_object_get(root, "kind")) {
        json_decref(root);
        return RT_ENOTFOUND; /* not ours to judge: the retrigger request parser says why */
    }
    int rc = RT_OK;
    const char *key;
    json_t *value;
    json_object_foreach(root, key, value)
    {
        size_t i = 0;
        while (i < sizeof known / sizeof *known && strcmp(known[i], key)) i++;
        if (i == sizeof known / sizeof *known) {
            rc = fail(reason, "unknown-field", "", RT_EPROTO); /* the name may be anything */
            goto out;
        }
    }
    long long version = 0, times = 0, attempt = 0, round = 0;
    if (!is(json_string_value(json_object_get(root, "kind")), RT_CULPRIT_PROBE_KIND)) {
        rc = fail(reason, "invalid-value", "kind", RT_EPROTO);
        goto out;
    }
    if ((rc = int_member(root, "version", 1, 1, &version, reason)) ||
        (rc = int_member(root, "set_id", 1, 1LL << 62, &out->set_id, reason)) ||
        (rc = text_member(root, "project", rt_valid_project, out->project, sizeof out->project,
                          reason)) ||
        (rc = text_member(root, "revision", full_revision, out->revision, sizeof out->revision,
                          reason)) ||
        (rc = text_member(root, "label", rt_valid_label, out->label, sizeof out->label, reason)) ||
        (rc = text_member(root, "platform", rt_valid_label, out->platform, sizeof out->platform,
                          reason)) ||
        (rc = int_member(root, "times", 1, RT_CULPRIT_MAX_TIMES, &times, reason)) ||
        (rc = int_member(root, "attempt", 1, RT_CULPRIT_MAX_ATTEMPTS, &attempt, reason)) ||
        (rc = int_member(root, "round", 1, RT_CULPRIT_MAX_ROUNDS, &round, reason)) ||
        (rc = text_member(root, "requested_at", utc_time, out->requested_at,
                          sizeof out->requested_at, reason)))
        goto out;
    json_t *confirm = json_object_get(root, "confirm");
    if (!confirm) {
        rc = fail(reason, "missing-field", "confirm", RT_EPROTO);
        goto out;
    }
    if (!json_is_boolean(confirm)) {
        rc = fail(reason, "wrong-type", "confirm", RT_EPROTO);
        goto out;
    }
    out->confirm = json_is_true(confirm);
    out->times = (int)times;
    out->attempt = (int)attempt;
    out->round = (int)round;
out:
    json_decref(root);
    if (rc != RT_OK) {
        char keep[RT_MESSAGE_REASON_SIZE];
        memcpy(keep, reason, RT_MESSAGE_REASON_SIZE);
        memset(out, 0, sizeof *out);
        memcpy(reason, keep, RT_MESSAGE_REASON_SIZE);
    }
    return rc;
}

char *rt_culprit_probe_request_build(const rt_culprit_probe_request *r)
{
    if (!r || r->set_id < 1 || !rt_valid_project(r->project) || !full_revision(r->revision) ||
        !rt_valid_label(r->label) || !rt_valid_label(r->platform) || r->times < 1 ||
        r->times > RT_CULPRIT_MAX_TIMES || r->attempt < 1 || r->attempt > RT_CULPRIT_MAX_ATTEMPTS ||
        r->round < 1 || r->round > RT_CULPRIT_MAX_ROUNDS || !utc_time(r->requested_at))
        return NULL;
    json_t *o = json_pack(
        "{s:i, s:s, s:I, s:s, s:s, s:s, s:s, s:i, s:i, s:i, s:b, s:s}", "version", 1, "kind",
        RT_CULPRIT_PROBE_KIND, "set_id", (json_int_t)r->set_id, "project", r->project, "revision",
        r->revision, "label", r->label, "platform", r->platform, "times", r->times, "attempt",
        r->attempt, "round", r->round, "confirm", r->confirm, "requested_at", r->requested_at);
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    return text;
}

/* ---- exactly once ---- */

rt_culprit_probe_action rt_culprit_probe_action_for(const rt_culprit_probe_row *row, int attempt,
                                                    long long call_ms)
{
    if (attempt < 1) return RT_PROBE_STALE;
    if (!row->exists) return attempt == 1 ? RT_PROBE_CREATE : RT_PROBE_STALE;
    if (row->attempt > attempt) return RT_PROBE_DONE;
    if (row->attempt == attempt) {
        if (!is(row->state, "intent")) return RT_PROBE_DONE;
        if (row->calls == 0) return RT_PROBE_CALL;
        return row->since_call_ms < call_ms ? RT_PROBE_WAIT : RT_PROBE_LOOK_UP;
    }
    if (row->attempt == attempt - 1) {
        if (is(row->state, "done") || is(row->state, "dry-run")) return RT_PROBE_NEXT;
        /* failed: the search stopped on it, the request has nothing left to do. intent,
         * triggered: retrig-decide asks for more only once it marked the runs done, in the
         * transaction that publishes the request: not committed yet. */
        return is(row->state, "failed") ? RT_PROBE_DONE : RT_PROBE_WAIT;
    }
    return RT_PROBE_STALE;
}

const char *rt_culprit_probe_action_name(rt_culprit_probe_action action)
{
    switch (action) {
    case RT_PROBE_CREATE: return "create";
    case RT_PROBE_NEXT: return "next";
    case RT_PROBE_CALL: return "call";
    case RT_PROBE_LOOK_UP: return "look-up";
    case RT_PROBE_WAIT: return "wait";
    case RT_PROBE_DONE: return "done";
    case RT_PROBE_STALE: return "stale";
    }
    return "unknown";
}
