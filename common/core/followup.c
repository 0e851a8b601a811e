/* SPDX-License-Identifier: MPL-2.0 */
/* followup.c - the ladder of a backfill's follow-up (see followup.h). */
#include "common/core/followup.h"

#include <stdarg.h>
#include <string.h>

#include "common/core/utf8.h"

static void set(rt_followup_outcome *o, rt_followup_state state, const char *reason,
                const char *fmt, ...) RT_PRINTF(4, 5);
static void set(rt_followup_outcome *o, rt_followup_state state, const char *reason,
                const char *fmt, ...)
{
    o->state = state;
    o->reason = reason;
    va_list ap;
    va_start(ap, fmt);
    rt_utf8_vformat(o->detail, sizeof o->detail, fmt, ap);
    va_end(ap);
}

static const char *or_empty(const char *s) { return s ? s : ""; }

bool rt_followup_task_unresolved(const char *state)
{
    return !strcmp(state, "unscheduled") || !strcmp(state, "pending") || !strcmp(state, "running");
}

/* The action task completed: what it spawned, then the data. */
static void assess_spawned(const rt_followup_facts *f, rt_followup_outcome *o)
{
    const char *label = or_empty(f->label);
    int window = f->window_hours;
    /* backfill-task action tasks are indexed once they complete: give them time. */
    bool indexing = f->searched && !f->backfill_tasks && f->resolved_at > 0 &&
                    f->now - f->resolved_at < RT_FOLLOWUP_INDEX_GRACE_S && !f->expired;
    if (f->actions_failed) {
        set(o, RT_FOLLOWUP_FAILED, "action-failed", "%d action tasks it triggered failed (e.g. %s)",
            f->actions_failed, or_empty(f->bad_action));
    } else if (f->actions_unresolved) {
        if (f->expired)
            set(o, RT_FOLLOWUP_FAILED, "deadline-exceeded",
                "%d action tasks it triggered unresolved after %d h", f->actions_unresolved,
                window);
        else
            set(o, RT_FOLLOWUP_PENDING, NULL,
                "%d action tasks it triggered unresolved; %d jobs so far", f->actions_unresolved,
                f->jobs);
    } else if (f->jobs == 0 && indexing) {
        set(o, RT_FOLLOWUP_PENDING, NULL,
            "no backfill-task for %.80s indexed on pushes %ld-%ld yet", label, f->first_push,
            f->last_push);
    } else if (f->jobs == 0 && f->searched && f->backfill_tasks) {
        set(o, RT_FOLLOWUP_FAILED, "no-data",
            "the %d backfill-task action tasks for %.80s on pushes %ld-%ld spawned no job",
            f->backfill_tasks, label, f->first_push, f->last_push);
    } else if (f->jobs == 0 && f->searched) {
        set(o, RT_FOLLOWUP_FAILED, "no-data",
            "the action task spawned no job (no label-to-taskid artifact, no backfill-task for "
            "%.80s indexed on pushes %ld-%ld, none in its task group)",
            label, f->first_push, f->last_push);
    } else if (f->jobs == 0) {
        set(o, RT_FOLLOWUP_FAILED, "no-data", "the action task spawned no job (%s)",
            f->root_artifact ? "none in its label-to-taskid artifacts"
                             : "no label-to-taskid artifact, none in its task group");
    } else if (f->unresolved) {
        if (f->expired)
            set(o, RT_FOLLOWUP_FAILED, "deadline-exceeded", "%d of %d jobs unresolved after %d h",
                f->unresolved, f->jobs, window);
        else
            set(o, RT_FOLLOWUP_PENDING, NULL, "%d of %d jobs unresolved", f->unresolved, f->jobs);
    } else if (f->deadline) {
        set(o, RT_FOLLOWUP_FAILED, "deadline-exceeded", "%d of %d jobs deadline-exceeded (e.g. %s)",
            f->deadline, f->jobs, or_empty(f->first_bad));
    } else if (f->failed) {
        set(o, RT_FOLLOWUP_FAILED, "jobs-failed", "%d of %d jobs failed (e.g. %s)", f->failed,
            f->jobs, or_empty(f->first_bad));
    } else if (f->exception) {
        set(o, RT_FOLLOWUP_FAILED, "jobs-exception",
            "%d of %d jobs ended in an exception (e.g. %s)", f->exception, f->jobs,
            or_empty(f->first_bad));
    } else if (!f->data_known) {
        set(o, RT_FOLLOWUP_NEED_DATA, NULL, "%d jobs completed; Perfherder's data not asked yet",
            f->completed);
    } else if (f->data_found) {
        set(o, RT_FOLLOWUP_DONE, NULL, "%d jobs completed with Perfherder data", f->completed);
    } else if (f->data_waiting && !f->expired) {
        set(o, RT_FOLLOWUP_PENDING, NULL,
            "%d jobs completed; waiting for Treeherder and Perfherder", f->completed);
    } else {
        set(o, RT_FOLLOWUP_FAILED, "no-data",
            "%d jobs completed without a Perfherder data point of signature %lld", f->completed,
            f->signature_id);
    }
}

void rt_followup_assess(const rt_followup_facts *f, rt_followup_outcome *o)
{
    memset(o, 0, sizeof *o);
    const char *id = or_empty(f->action_task_id);
    const char *state = or_empty(f->action_state);
    if (!f->action_task_valid) {
        set(o, RT_FOLLOWUP_FAILED, "action-failed", "invalid action task id");
    } else if (!f->action_task_known) {
        if (f->expired)
            set(o, RT_FOLLOWUP_FAILED, "action-failed", "action task %s not found in the queue",
                id);
        else
            set(o, RT_FOLLOWUP_PENDING, NULL, "action task %s not in the queue yet", id);
    } else if (rt_followup_task_unresolved(state)) {
        if (f->expired)
            set(o, RT_FOLLOWUP_FAILED, "deadline-exceeded", "action task still %s after %d h",
                state, f->window_hours);
        else
            set(o, RT_FOLLOWUP_PENDING, NULL, "action task %s", state);
    } else if (!strcmp(state, "failed")) {
        set(o, RT_FOLLOWUP_FAILED, "action-failed", "action task %s failed", id);
    } else if (!strcmp(state, "exception")) {
        const char *why = or_empty(f->action_reason);
        if (!strcmp(why, "deadline-exceeded"))
            set(o, RT_FOLLOWUP_FAILED, "deadline-exceeded", "action task %s: deadline-exceeded",
                id);
        else
            set(o, RT_FOLLOWUP_FAILED, "action-failed", "action task %s: exception (%s)", id,
                why[0] ? why : "no reason");
    } else if (!strcmp(state, "completed")) {
        assess_spawned(f, o);
    } else {
        set(o, RT_FOLLOWUP_PENDING, NULL, "action task in unknown state %.40s", state);
    }
}

const char *rt_followup_state_name(rt_followup_state state)
{
    switch (state) {
    case RT_FOLLOWUP_PENDING: return "pending";
    case RT_FOLLOWUP_DONE: return "done";
    case RT_FOLLOWUP_FAILED: return "failed";
    case RT_FOLLOWUP_NEED_DATA: return "need-data";
    }
    return "unknown";
}

/* ---- facts from JSON (retrig followup) ---- */

static bool get_bool(json_t *doc, const char *key, bool *out)
{
    json_t *v = json_object_get(doc, key);
    if (!v) return true; /* absent: false */
    if (!json_is_boolean(v)) return false;
    *out = json_is_true(v);
    return true;
}

static bool get_int(json_t *doc, const char *key, long long min, long long max, long long *out)
{
    json_t *v = json_object_get(doc, key);
    if (!v) return true;
    if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max)
        return false;
    *out = json_integer_value(v);
    return true;
}

static bool get_string(json_t *doc, const char *key, const char **out)
{
    json_t *v = json_object_get(doc, key);
    if (!v || json_is_null(v)) return true;
    if (!json_is_string(v) || json_string_length(v) > 512) return false;
    *out = json_string_value(v);
    return true;
}

int rt_followup_facts_from_json(json_t *doc, rt_followup_facts *f, char *errstr)
{
    memset(f, 0, sizeof *f);
    if (!json_is_object(doc)) {
        rt_set_errstr(errstr, "the facts are not a JSON object");
        return RT_EPROTO;
    }
    static const char *const bools[] = {"action_task_valid", "action_task_known", "expired",
                                        "root_artifact",     "searched",          "data_known",
                                        "data_found",        "data_waiting"};
    bool *bool_fields[] = {&f->action_task_valid, &f->action_task_known, &f->expired,
                           &f->root_artifact,     &f->searched,          &f->data_known,
                           &f->data_found,        &f->data_waiting};
    for (size_t i = 0; i < sizeof bools / sizeof *bools; i++)
        if (!get_bool(doc, bools[i], bool_fields[i])) {
            rt_set_errstr(errstr, "'%s' is not true or false", bools[i]);
            return RT_EPROTO;
        }
    static const char *const strings[] = {"action_state", "action_reason", "action_task_id",
                                          "bad_action",   "label",         "first_bad"};
    const char **string_fields[] = {&f->action_state, &f->action_reason, &f->action_task_id,
                                    &f->bad_action,   &f->label,         &f->first_bad};
    for (size_t i = 0; i < sizeof strings / sizeof *strings; i++)
        if (!get_string(doc, strings[i], string_fields[i])) {
            rt_set_errstr(errstr, "'%s' is not a string of at most 512 bytes", strings[i]);
            return RT_EPROTO;
        }
    static const char *const ints[] = {
        "window_hours", "actions_failed", "actions_unresolved", "backfill_tasks", "jobs",
        "completed",    "failed",         "exception",          "deadline",       "unresolved"};
    int *int_fields[] = {&f->window_hours,   &f->actions_failed, &f->actions_unresolved,
                         &f->backfill_tasks, &f->jobs,           &f->completed,
                         &f->failed,         &f->exception,      &f->deadline,
                         &f->unresolved};
    for (size_t i = 0; i < sizeof ints / sizeof *ints; i++) {
        long long v = 0;
        if (!get_int(doc, ints[i], 0, 1000000, &v)) {
            rt_set_errstr(errstr, "'%s' is not an integer from 0 to 1000000", ints[i]);
            return RT_EPROTO;
        }
        *int_fields[i] = (int)v;
    }
    long long now = 0, resolved = 0, first = 0, last = 0, signature = 0;
    if (!get_int(doc, "now", 0, 1LL << 40, &now) ||
        !get_int(doc, "resolved_at", 0, 1LL << 40, &resolved) ||
        !get_int(doc, "first_push", 0, 1LL << 40, &first) ||
        !get_int(doc, "last_push", 0, 1LL << 40, &last) ||
        !get_int(doc, "signature_id", 0, 1LL << 53, &signature)) {
        rt_set_errstr(errstr, "now, resolved_at, first_push, last_push and signature_id are "
                              "non-negative integers");
        return RT_EPROTO;
    }
    f->now = (time_t)now;
    f->resolved_at = (time_t)resolved;
    f->first_push = (long)first;
    f->last_push = (long)last;
    f->signature_id = signature;
    return RT_OK;
}
