/* SPDX-License-Identifier: MPL-2.0 */
/* taskdef.c - Taskcluster task definition parsing. */
#include "common/core/taskdef.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/ids.h"
#include "common/core/jscan.h"
#include "common/core/pulse.h"

#define REASON_SIZE 128
#define FIELD_MAX   1024

/* A string member copied out: absent or null leaves *out NULL; another type, or a string
 * longer than FIELD_MAX, is wrong-type:<path>. */
static int copy_string(const rt_jscan *js, int v, const char *path, char **out, char *reason)
{
    rt_js_type t = rt_js_type_of(js, v);
    if (t == 0 || t == RT_JS_NULL) return RT_OK;
    if (t != RT_JS_STRING || rt_js_strlen(js, v) > FIELD_MAX) {
        snprintf(reason, REASON_SIZE, "wrong-type:%s", path);
        return RT_EPROTO;
    }
    *out = rt_js_strdup(js, v);
    return *out ? RT_OK : RT_ENOMEM;
}

/* The decoded string token v (malloc'd), NULL when v is not a string or memory is short. */
static char *string_of(const rt_jscan *js, int v)
{
    return rt_js_type_of(js, v) == RT_JS_STRING ? rt_js_strdup(js, v) : NULL;
}

/* Copies string token v into name (51 bytes) when it is a name Treeherder's schema allows
 * a label: 1 to 50 of [A-Za-z0-9_-] (member names are string tokens too). RT_OK,
 * RT_EPROTO when it is not such a name, RT_ENOMEM. */
static int option_name(const rt_jscan *js, int v, char *name)
{
    if (rt_js_type_of(js, v) != RT_JS_STRING) return RT_EPROTO;
    size_t len = rt_js_strlen(js, v);
    if (len < 1 || len > 50) return RT_EPROTO;
    char *s = rt_js_strdup(js, v);
    if (!s) return RT_ENOMEM;
    int rc = RT_OK;
    for (size_t i = 0; i < len; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
              (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '-'))
            rc = RT_EPROTO;
    memcpy(name, s, len + 1);
    free(s);
    return rc;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The build type of extra.treeherder (token th) as taskdef.h describes it, into *out
 * (malloc'd; left NULL when unknown). RT_OK or RT_ENOMEM. */
static int build_type_of(const rt_jscan *js, int th, char **out)
{
    int list = rt_js_get(js, th, "labels");
    bool labels = rt_js_type_of(js, list) == RT_JS_ARRAY && rt_js_first(js, list) >= 0;
    if (!labels) {
        list = rt_js_get(js, th, "collection");
        if (rt_js_type_of(js, list) != RT_JS_OBJECT || rt_js_first(js, list) < 0)
            return (*out = strdup("opt")) ? RT_OK : RT_ENOMEM;
    }
    char name[RT_TASKDEF_MAX_BUILD_OPTIONS][51];
    char *sorted[RT_TASKDEF_MAX_BUILD_OPTIONS];
    size_t n = 0;
    /* an array's elements, or an object's member names */
    for (int v = rt_js_first(js, list); v >= 0; v = rt_js_after(js, list, v)) {
        if (n == RT_TASKDEF_MAX_BUILD_OPTIONS) return RT_OK; /* unknown */
        int rc = option_name(js, v, name[n]);
        if (rc != RT_OK) return rc == RT_ENOMEM ? rc : RT_OK;
        sorted[n] = name[n];
        n++;
    }
    qsort(sorted, n, sizeof *sorted, by_name);
    char text[RT_TASKDEF_MAX_BUILD_OPTIONS * 51 + 1];
    size_t used = 0;
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && !strcmp(sorted[i], sorted[i - 1])) continue; /* Treeherder: a set */
        used +=
            (size_t)snprintf(text + used, sizeof text - used, "%s%s", used ? "," : "", sorted[i]);
    }
    text[used] = '\0';
    return (*out = strdup(text)) ? RT_OK : RT_ENOMEM;
}

/* Moves the strings into one block: a cached definition then costs one allocation instead
 * of ten (retrig-classify keeps thousands). Leaves d as it was when memory is short. */
static void pack(rt_taskdef *d)
{
    char **fields[] = {&d->task_queue_id, &d->scheduler_id, &d->job_kind,   &d->platform,
                       &d->build_type,    &d->label,        &d->kind,       &d->action,
                       &d->project,       &d->revision,     &d->pushlog_id, &d->created,
                       &d->owner};
    size_t n = sizeof fields / sizeof *fields, total = 0;
    for (size_t i = 0; i < n; i++)
        if (*fields[i]) total += strlen(*fields[i]) + 1;
    char *block = malloc(total ? total : 1);
    if (!block) return;
    char *at = block;
    for (size_t i = 0; i < n; i++) {
        if (!*fields[i]) continue;
        size_t len = strlen(*fields[i]) + 1;
        memcpy(at, *fields[i], len);
        free(*fields[i]);
        *fields[i] = at;
        at += len;
    }
    d->storage = block;
}

/* Long because it reads the fields of the definition one after the other (taskGroupId,
 * taskQueueId or provisionerId/workerType, schedulerId, extra.treeherder and its build type, tags,
 * metadata.name and owner, created, routes), each with its own check and reason, sharing cleanup
 * through goto out. */
int rt_taskdef_parse(const char *body, size_t len, size_t max_bytes, rt_taskdef *out, char *reason)
{
    int rc = RT_EPROTO;
    memset(out, 0, sizeof *out);
    reason[0] = '\0';
    if (len > max_bytes) {
        snprintf(reason, REASON_SIZE, "too-big");
        return RT_ETOOBIG;
    }
    /* Scanned, not built into a tree: retrig-classify parses one per failure. Duplicate
     * member names make it invalid-json. */
    rt_jscan js;
    rt_jscan_init(&js);
    char *prov = NULL, *type = NULL, *group = NULL;
    int parsed = rt_jscan_parse(&js, body, len);
    if (parsed == RT_ENOMEM) {
        rc = RT_ENOMEM;
        goto out;
    }
    if (parsed != RT_OK || rt_js_type_of(&js, 0) != RT_JS_OBJECT) {
        if (js.too_many)
            snprintf(reason, REASON_SIZE, "too-big:more than %d values", RT_JSCAN_MAX_TOKENS);
        else
            snprintf(reason, REASON_SIZE, parsed == RT_OK ? "wrong-type:task" : "invalid-json");
        goto out;
    }
    group = string_of(&js, rt_js_get(&js, 0, "taskGroupId"));
    if (!group || !rt_valid_task_id(group)) {
        snprintf(reason, REASON_SIZE,
                 group ? "invalid-value:taskGroupId" : "missing-field:taskGroupId");
        goto out;
    }
    memcpy(out->task_group_id, group, 23);

    if ((rc = copy_string(&js, rt_js_get(&js, 0, "taskQueueId"), "taskQueueId", &out->task_queue_id,
                          reason)))
        goto out;
    if (!out->task_queue_id) {
        prov = string_of(&js, rt_js_get(&js, 0, "provisionerId"));
        type = string_of(&js, rt_js_get(&js, 0, "workerType"));
        if (!prov || !type) {
            snprintf(reason, REASON_SIZE, "missing-field:taskQueueId");
            rc = RT_EPROTO;
            goto out;
        }
        size_t n = strlen(prov) + strlen(type) + 2;
        out->task_queue_id = malloc(n);
        if (!out->task_queue_id) {
            rc = RT_ENOMEM;
            goto out;
        }
        snprintf(out->task_queue_id, n, "%s/%s", prov, type);
    }
    if (!rt_valid_task_queue_id(out->task_queue_id)) {
        snprintf(reason, REASON_SIZE, "invalid-value:taskQueueId");
        rc = RT_EPROTO;
        goto out;
    }

    if ((rc = copy_string(&js, rt_js_get(&js, 0, "schedulerId"), "schedulerId", &out->scheduler_id,
                          reason)))
        goto out;

    int th = rt_js_get(&js, rt_js_get(&js, 0, "extra"), "treeherder");
    if (rt_js_type_of(&js, th) == RT_JS_OBJECT) {
        if ((rc = copy_string(&js, rt_js_get(&js, th, "jobKind"), "extra.treeherder.jobKind",
                              &out->job_kind, reason)))
            goto out;
        /* Treeherder reads a job without a tier as tier 1 (its Taskcluster pulse handler:
         * treeherderConfig.get("tier", 1)), and so does retrig. */
        int tier = rt_js_get(&js, th, "tier");
        long long tier_value = 1;
        if (tier >= 0 && rt_js_type_of(&js, tier) != RT_JS_INTEGER) {
            snprintf(reason, REASON_SIZE, "wrong-type:extra.treeherder.tier");
            rc = RT_EPROTO;
            goto out;
        }
        if (tier >= 0 && !rt_js_integer_in(&js, tier, 0, RT_TASKDEF_MAX_TIER, &tier_value)) {
            snprintf(reason, REASON_SIZE, "invalid-value:extra.treeherder.tier");
            rc = RT_EPROTO;
            goto out;
        }
        out->tier = (int)tier_value;
        int machine = rt_js_get(&js, th, "machine");
        if (rt_js_type_of(&js, machine) == RT_JS_OBJECT &&
            (rc = copy_string(&js, rt_js_get(&js, machine, "platform"),
                              "extra.treeherder.machine.platform", &out->platform, reason)))
            goto out;
        if (out->platform && !rt_valid_label(out->platform)) {
            snprintf(reason, REASON_SIZE, "invalid-value:extra.treeherder.machine.platform");
            rc = RT_EPROTO;
            goto out;
        }
        if ((rc = build_type_of(&js, th, &out->build_type))) goto out;
    }

    int tags = rt_js_get(&js, 0, "tags");
    if (rt_js_type_of(&js, tags) == RT_JS_OBJECT) {
        if ((rc = copy_string(&js, rt_js_get(&js, tags, "label"), "tags.label", &out->label,
                              reason)))
            goto out;
        if ((rc = copy_string(&js, rt_js_get(&js, tags, "kind"), "tags.kind", &out->kind, reason)))
            goto out;
        if ((rc = copy_string(&js, rt_js_get(&js, tags, "action"), "tags.action", &out->action,
                              reason)))
            goto out;
    }
    int metadata = rt_js_get(&js, 0, "metadata");
    if (!out->label && rt_js_type_of(&js, metadata) == RT_JS_OBJECT &&
        (rc = copy_string(&js, rt_js_get(&js, metadata, "name"), "metadata.name", &out->label,
                          reason)))
        goto out;
    if (rt_js_type_of(&js, metadata) == RT_JS_OBJECT &&
        (rc = copy_string(&js, rt_js_get(&js, metadata, "owner"), "metadata.owner", &out->owner,
                          reason)))
        goto out;
    if (out->label && !rt_valid_label(out->label)) {
        snprintf(reason, REASON_SIZE, "invalid-value:tags.label");
        rc = RT_EPROTO;
        goto out;
    }
    if ((rc = copy_string(&js, rt_js_get(&js, 0, "created"), "created", &out->created, reason)))
        goto out;

    int routes = rt_js_get(&js, 0, "routes");
    if (rt_js_type_of(&js, routes) == RT_JS_ARRAY) {
        for (int r = rt_js_first(&js, routes); r >= 0; r = rt_js_after(&js, routes, r)) {
            char *route = string_of(&js, r);
            rt_pulse_task push = {0};
            bool applied = route && rt_pulse_apply_route(&push, route);
            free(route);
            if (applied) {
                out->project = push.project;
                out->revision = push.revision;
                out->pushlog_id = push.pushlog_id;
                break;
            }
        }
    }
    rc = RT_OK;
    pack(out);
out:
    free(group);
    free(prov);
    free(type);
    rt_jscan_free(&js);
    if (rc != RT_OK) rt_taskdef_free(out);
    return rc;
}

void rt_taskdef_free(rt_taskdef *d)
{
    if (!d) return;
    if (d->storage) {
        free(d->storage);
        memset(d, 0, sizeof *d);
        return;
    }
    free(d->task_queue_id);
    free(d->scheduler_id);
    free(d->job_kind);
    free(d->platform);
    free(d->build_type);
    free(d->label);
    free(d->kind);
    free(d->action);
    free(d->project);
    free(d->revision);
    free(d->pushlog_id);
    free(d->created);
    free(d->owner);
    memset(d, 0, sizeof *d);
}
