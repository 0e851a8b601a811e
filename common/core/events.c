/* SPDX-License-Identifier: MPL-2.0 */
/* events.c - build and parse the decision and culprit events (events.h). */
#include "common/core/events.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/ids.h"
#include "common/core/message_fields.h"
#include "common/core/messages.h"

#define MAX_REPRODUCED_BY 1000 /* retriggers named for one line */

static int fail(char *reason, const char *what, const char *key)
{
    snprintf(reason, RT_MESSAGE_REASON_SIZE, "%s:%s", what, key);
    return RT_EPROTO;
}

/* Refuses a member of root not in known (the schemas forbid additional properties). */
static int only_known(json_t *root, const char *const *known, size_t n, char *reason)
{
    const char *key;
    json_t *value;
    json_object_foreach(root, key, value)
    {
        size_t i = 0;
        while (i < n && strcmp(known[i], key)) i++;
        if (i == n) return fail(reason, "unknown-field", "body"); /* the name may be anything */
    }
    return RT_OK;
}

static bool full_revision(const char *s)
{
    size_t n = strlen(s);
    if (n != 40) return false;
    for (; *s; s++)
        if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f'))) return false;
    return true;
}

static bool one_of(const char *s, const char *const *names)
{
    for (; *names; names++)
        if (!strcmp(s, *names)) return true;
    return false;
}

static bool valid_verdict(const char *s)
{
    static const char *const names[] = {"regression", "intermittent", "infra", "undecided", NULL};
    return one_of(s, names);
}

static bool valid_culprit_status(const char *s)
{
    static const char *const names[] = {"found", "culprit-before-window", "stopped", NULL};
    return one_of(s, names);
}

static bool nonempty(const char *s) { return s[0] != '\0'; }

/* ---- the decision event ---- */

static json_t *task_ids_json(const rt_event_task_id *ids, size_t n)
{
    json_t *list = json_array();
    for (size_t i = 0; list && i < n; i++)
        if (json_array_append_new(list, json_string(ids[i])) != 0) {
            json_decref(list); /* never a shorter list */
            return NULL;
        }
    return list;
}

char *rt_decision_event_build(const rt_decision_event *e)
{
    if (!e->label) return NULL;
    json_t *lines = json_array();
    json_t *ids = task_ids_json(e->retrigger_task_ids, e->nretrigger_task_ids);
    bool whole = lines && ids;
    for (size_t i = 0; whole && i < e->nlines; i++) {
        const rt_decision_event_line *l = &e->lines[i];
        json_t *by = task_ids_json(l->reproduced_by, l->nreproduced_by);
        json_t *o =
            by && l->line ? json_pack("{s:s, s:o}", "line", l->line, "reproduced_by", by) : NULL;
        if (!o) json_decref(by);
        whole = o && json_array_append_new(lines, o) == 0;
    }
    json_t *o =
        whole ? json_pack("{s:i, s:I, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:O, s:O, s:s}", "version",
                          1, "set_id", (json_int_t)e->set_id, "project", e->project, "revision",
                          e->revision, "label", e->label, "platform", e->platform, "verdict",
                          e->verdict, "reason", e->reason, "original_task_id", e->original_task_id,
                          "retrigger_task_ids", ids, "lines", lines, "decided_at", e->decided_at)
              : NULL;
    bool threshold_ok = !o || e->threshold <= 0 ||
                        json_object_set_new(o, "threshold", json_integer(e->threshold)) == 0;
    char *text = o && threshold_ok ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    json_decref(ids);
    json_decref(lines);
    return text;
}

/* A list of unique task ids (at most max) into *out. */
static int task_ids(json_t *list, const char *key, size_t max, rt_event_task_id **out, size_t *n,
                    char *reason)
{
    if (!list) return fail(reason, "missing-field", key);
    if (!json_is_array(list)) return fail(reason, "wrong-type", key);
    size_t count = json_array_size(list);
    if (count > max) return fail(reason, "invalid-value", key);
    if (count && !(*out = calloc(count, sizeof **out))) return RT_ENOMEM;
    for (size_t i = 0; i < count; i++) {
        const char *id = json_string_value(json_array_get(list, i));
        if (!id) return fail(reason, "wrong-type", key);
        if (!rt_valid_task_id(id)) return fail(reason, "invalid-value", key);
        for (size_t k = 0; k < i; k++) /* unique; at most MAX_REPRODUCED_BY squared */
            if (!strcmp((*out)[k], id)) return fail(reason, "invalid-value", key);
        memcpy((*out)[i], id, sizeof **out);
        *n = i + 1;
    }
    return RT_OK;
}

static int event_lines(json_t *list, rt_decision_event *out, char *reason)
{
    static const char *const known[] = {"line", "reproduced_by"};
    if (!list) return fail(reason, "missing-field", "lines");
    if (!json_is_array(list)) return fail(reason, "wrong-type", "lines");
    size_t count = json_array_size(list);
    if (count > RT_EVENT_MAX_LINES) return fail(reason, "invalid-value", "lines");
    if (count && !(out->lines = calloc(count, sizeof *out->lines))) return RT_ENOMEM;
    for (size_t i = 0; i < count; i++) {
        json_t *o = json_array_get(list, i);
        if (!json_is_object(o)) return fail(reason, "wrong-type", "lines");
        rt_decision_event_line *l = &out->lines[i];
        out->nlines = i + 1;
        int rc;
        if ((rc = only_known(o, known, 2, reason)) ||
            (rc = rt__message_string(o, "line", nonempty, NULL, 0, &l->line, reason)) ||
            (rc = task_ids(json_object_get(o, "reproduced_by"), "reproduced_by", MAX_REPRODUCED_BY,
                           &l->reproduced_by, &l->nreproduced_by, reason)))
            return rc;
    }
    return RT_OK;
}

static bool valid_event_label(const char *s) { return nonempty(s) && strlen(s) <= 1024; }

int rt_decision_event_parse(const char *body, size_t len, rt_decision_event *out, char *reason)
{
    static const char *const known[] = {
        "version",  "set_id",    "project",   "revision",         "label",
        "platform", "verdict",   "reason",    "original_task_id", "retrigger_task_ids",
        "lines",    "threshold", "decided_at"};
    memset(out, 0, sizeof *out);
    json_t *root = rt__message_load(body, len, reason);
    if (!root) return RT_EPROTO;
    long long threshold = 0;
    int rc;
    if ((rc = only_known(root, known, sizeof known / sizeof *known, reason)) ||
        (rc = rt__message_int(root, "set_id", 1, (1LL << 62), &out->set_id, reason)) ||
        (rc = rt__message_string(root, "project", rt_valid_project, out->project,
                                 sizeof out->project, NULL, reason)) ||
        (rc = rt__message_string(root, "revision", full_revision, out->revision,
                                 sizeof out->revision, NULL, reason)) ||
        (rc = rt__message_string(root, "label", valid_event_label, NULL, 0, &out->label, reason)) ||
        (rc = rt__message_string(root, "platform", nonempty, out->platform, sizeof out->platform,
                                 NULL, reason)) ||
        (rc = rt__message_string(root, "verdict", valid_verdict, out->verdict, sizeof out->verdict,
                                 NULL, reason)) ||
        (rc = rt__message_string(root, "reason", nonempty, out->reason, sizeof out->reason, NULL,
                                 reason)) ||
        (rc = rt__message_string(root, "original_task_id", rt_valid_task_id, out->original_task_id,
                                 sizeof out->original_task_id, NULL, reason)) ||
        (rc = task_ids(json_object_get(root, "retrigger_task_ids"), "retrigger_task_ids",
                       RT_EVENT_MAX_TASKS, &out->retrigger_task_ids, &out->nretrigger_task_ids,
                       reason)) ||
        (rc = event_lines(json_object_get(root, "lines"), out, reason)) ||
        (json_object_get(root, "threshold") &&
         (rc = rt__message_int(root, "threshold", 1, 20, &threshold, reason))) ||
        (rc = rt__message_string(root, "decided_at", rt__message_valid_time, out->decided_at,
                                 sizeof out->decided_at, NULL, reason)))
        goto out;
    out->threshold = (int)threshold;
out:
    json_decref(root);
    return rc;
}

void rt_decision_event_free(rt_decision_event *e)
{
    if (!e) return;
    free(e->label);
    free(e->retrigger_task_ids);
    for (size_t i = 0; i < e->nlines; i++) {
        free(e->lines[i].line);
        free(e->lines[i].reproduced_by);
    }
    free(e->lines);
    e->label = NULL;
    e->retrigger_task_ids = NULL;
    e->lines = NULL;
    e->nretrigger_task_ids = e->nlines = 0;
}

/* ---- the culprit event ---- */

char *rt_culprit_event_build(const rt_culprit_event *e)
{
    if (!e->label || (e->found && !e->culprit.url)) return NULL;
    json_t *culprit =
        e->found
            ? json_pack("{s:s, s:o, s:s, s:s}", "revision", e->culprit.revision, "pushlog_id",
                        e->culprit.pushlog_id > 0 ? json_integer(e->culprit.pushlog_id)
                                                  : json_null(),
                        "author", e->culprit.author ? e->culprit.author : "", "url", e->culprit.url)
            : json_null();
    json_t *o = culprit
                    ? json_pack("{s:i, s:s, s:I, s:s, s:s, s:s, s:s, s:s, s:o, s:[s, s], s:i, "
                                "s:i, s:i}",
                                "version", 1, "kind", "culprit", "set_id", (json_int_t)e->set_id,
                                "project", e->project, "revision", e->revision, "label", e->label,
                                "status", e->status, "reason", e->reason, "culprit", culprit,
                                "range", e->range_first, e->range_last, "rounds", e->rounds,
                                "pushes_probed", e->pushes_probed, "jobs_spent", e->jobs_spent)
                    : NULL;
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    return text;
}

static int culprit_push(json_t *v, rt_culprit_event *out, char *reason)
{
    static const char *const known[] = {"revision", "pushlog_id", "author", "url"};
    if (!v) return fail(reason, "missing-field", "culprit");
    if (json_is_null(v)) return RT_OK;
    if (!json_is_object(v)) return fail(reason, "wrong-type", "culprit");
    int rc;
    if ((rc = only_known(v, known, 4, reason)) ||
        (rc = rt__message_string(v, "revision", full_revision, out->culprit.revision,
                                 sizeof out->culprit.revision, NULL, reason)) ||
        (rc = rt__message_string(v, "author", NULL, NULL, 0, &out->culprit.author, reason)) ||
        (rc = rt__message_string(v, "url", nonempty, NULL, 0, &out->culprit.url, reason)))
        return rc;
    json_t *pushlog = json_object_get(v, "pushlog_id");
    if (!pushlog) return fail(reason, "missing-field", "pushlog_id");
    if (!json_is_null(pushlog) &&
        (rc = rt__message_int(v, "pushlog_id", 1, (1LL << 62), &out->culprit.pushlog_id, reason)))
        return rc;
    out->found = true;
    return RT_OK;
}

static int culprit_range(json_t *v, rt_culprit_event *out, char *reason)
{
    if (!v) return fail(reason, "missing-field", "range");
    if (!json_is_array(v)) return fail(reason, "wrong-type", "range");
    const char *first = json_string_value(json_array_get(v, 0));
    const char *last = json_string_value(json_array_get(v, 1));
    if (json_array_size(v) != 2 || !first || !last || !full_revision(first) || !full_revision(last))
        return fail(reason, "invalid-value", "range");
    memcpy(out->range_first, first, 41);
    memcpy(out->range_last, last, 41);
    return RT_OK;
}

static bool valid_culprit_reason(const char *s) { return nonempty(s) && strlen(s) <= 160; }

int rt_culprit_event_parse(const char *body, size_t len, rt_culprit_event *out, char *reason)
{
    static const char *const known[] = {
        "version", "kind",    "set_id", "project", "revision",      "label",     "status",
        "reason",  "culprit", "range",  "rounds",  "pushes_probed", "jobs_spent"};
    memset(out, 0, sizeof *out);
    json_t *root = rt__message_load(body, len, reason);
    if (!root) return RT_EPROTO;
    char kind[8];
    long long rounds = 0, probed = 0, spent = 0;
    int rc;
    if ((rc = only_known(root, known, sizeof known / sizeof *known, reason)) ||
        (rc = rt__message_string(root, "kind", NULL, kind, sizeof kind, NULL, reason)))
        goto out;
    if (strcmp(kind, "culprit")) {
        rc = fail(reason, "invalid-value", "kind");
        goto out;
    }
    if ((rc = rt__message_int(root, "set_id", 1, (1LL << 62), &out->set_id, reason)) ||
        (rc = rt__message_string(root, "project", rt_valid_project, out->project,
                                 sizeof out->project, NULL, reason)) ||
        (rc = rt__message_string(root, "revision", full_revision, out->revision,
                                 sizeof out->revision, NULL, reason)) ||
        (rc = rt__message_string(root, "label", valid_event_label, NULL, 0, &out->label, reason)) ||
        (rc = rt__message_string(root, "status", valid_culprit_status, out->status,
                                 sizeof out->status, NULL, reason)) ||
        (rc = rt__message_string(root, "reason", valid_culprit_reason, out->reason,
                                 sizeof out->reason, NULL, reason)) ||
        (rc = culprit_push(json_object_get(root, "culprit"), out, reason)) ||
        (rc = culprit_range(json_object_get(root, "range"), out, reason)) ||
        (rc = rt__message_int(root, "rounds", 0, 1 << 30, &rounds, reason)) ||
        (rc = rt__message_int(root, "pushes_probed", 0, 1 << 30, &probed, reason)) ||
        (rc = rt__message_int(root, "jobs_spent", 0, 1 << 30, &spent, reason)))
        goto out;
    out->rounds = (int)rounds;
    out->pushes_probed = (int)probed;
    out->jobs_spent = (int)spent;
out:
    json_decref(root);
    return rc;
}

void rt_culprit_event_free(rt_culprit_event *e)
{
    if (!e) return;
    free(e->label);
    free(e->culprit.author);
    free(e->culprit.url);
    e->label = e->culprit.author = e->culprit.url = NULL;
}
