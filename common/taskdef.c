/* SPDX-License-Identifier: MPL-2.0 */
/* taskdef.c - Taskcluster task definition parsing. */
#include "common/taskdef.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ids.h"
#include "common/pulse.h"

#define REASON_SIZE 128
#define FIELD_MAX   1024

static int copy_string(json_t *v, const char *path, char **out, char *reason)
{
    if (!v || json_is_null(v)) return RT_OK;
    if (!json_is_string(v) || json_string_length(v) > FIELD_MAX ||
        strlen(json_string_value(v)) != json_string_length(v)) {
        snprintf(reason, REASON_SIZE, "wrong-type:%s", path);
        return RT_EPROTO;
    }
    *out = strdup(json_string_value(v));
    return *out ? RT_OK : RT_ENOMEM;
}

/* Moves the strings into one block: a cached definition then costs one allocation instead
 * of ten (retrig-classify keeps thousands). Leaves d as it was when memory is short. */
static void pack(rt_taskdef *d)
{
    char **fields[] = {&d->task_queue_id, &d->job_kind, &d->platform, &d->label,      &d->kind,
                       &d->action,        &d->project,  &d->revision, &d->pushlog_id, &d->created};
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

int rt_taskdef_parse(const char *body, size_t len, size_t max_bytes, rt_taskdef *out, char *reason)
{
    int rc = RT_EPROTO;
    memset(out, 0, sizeof *out);
    reason[0] = '\0';
    if (len > max_bytes) {
        snprintf(reason, REASON_SIZE, "too-big");
        return RT_ETOOBIG;
    }
    json_error_t error;
    json_t *root = json_loadb(body, len, 0, &error);
    if (!json_is_object(root)) {
        snprintf(reason, REASON_SIZE, root ? "wrong-type:task" : "invalid-json");
        goto out;
    }
    const char *group = json_string_value(json_object_get(root, "taskGroupId"));
    if (!group || !rt_valid_task_id(group)) {
        snprintf(reason, REASON_SIZE,
                 group ? "invalid-value:taskGroupId" : "missing-field:taskGroupId");
        goto out;
    }
    memcpy(out->task_group_id, group, 23);

    if ((rc = copy_string(json_object_get(root, "taskQueueId"), "taskQueueId", &out->task_queue_id,
                          reason)))
        goto out;
    if (!out->task_queue_id) {
        const char *prov = json_string_value(json_object_get(root, "provisionerId"));
        const char *type = json_string_value(json_object_get(root, "workerType"));
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

    json_t *extra = json_object_get(root, "extra");
    json_t *th = json_is_object(extra) ? json_object_get(extra, "treeherder") : NULL;
    if (json_is_object(th)) {
        if ((rc = copy_string(json_object_get(th, "jobKind"), "extra.treeherder.jobKind",
                              &out->job_kind, reason)))
            goto out;
        json_t *tier = json_object_get(th, "tier");
        if (tier && !json_is_integer(tier)) {
            snprintf(reason, REASON_SIZE, "wrong-type:extra.treeherder.tier");
            rc = RT_EPROTO;
            goto out;
        }
        out->tier = tier ? (int)json_integer_value(tier) : 0;
        json_t *machine = json_object_get(th, "machine");
        if (json_is_object(machine) &&
            (rc = copy_string(json_object_get(machine, "platform"),
                              "extra.treeherder.machine.platform", &out->platform, reason)))
            goto out;
        if (out->platform && !rt_valid_label(out->platform)) {
            snprintf(reason, REASON_SIZE, "invalid-value:extra.treeherder.machine.platform");
            rc = RT_EPROTO;
            goto out;
        }
    }

    json_t *tags = json_object_get(root, "tags");
    if (json_is_object(tags)) {
        if ((rc = copy_string(json_object_get(tags, "label"), "tags.label", &out->label, reason)))
            goto out;
        if ((rc = copy_string(json_object_get(tags, "kind"), "tags.kind", &out->kind, reason)))
            goto out;
        if ((rc =
                 copy_string(json_object_get(tags, "action"), "tags.action", &out->action, reason)))
            goto out;
    }
    json_t *metadata = json_object_get(root, "metadata");
    if (!out->label && json_is_object(metadata) &&
        (rc = copy_string(json_object_get(metadata, "name"), "metadata.name", &out->label, reason)))
        goto out;
    if (out->label && !rt_valid_label(out->label)) {
        snprintf(reason, REASON_SIZE, "invalid-value:tags.label");
        rc = RT_EPROTO;
        goto out;
    }
    if ((rc = copy_string(json_object_get(root, "created"), "created", &out->created, reason)))
        goto out;

    json_t *routes = json_object_get(root, "routes");
    size_t i;
    json_t *route;
    json_array_foreach(routes, i, route)
    {
        const char *r = json_string_value(route);
        rt_pulse_task push = {0};
        if (r && rt_pulse_apply_route(&push, r)) {
            out->project = push.project;
            out->revision = push.revision;
            out->pushlog_id = push.pushlog_id;
            break;
        }
    }
    rc = RT_OK;
    pack(out);
out:
    json_decref(root);
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
    free(d->job_kind);
    free(d->platform);
    free(d->label);
    free(d->kind);
    free(d->action);
    free(d->project);
    free(d->revision);
    free(d->pushlog_id);
    free(d->created);
    memset(d, 0, sizeof *d);
}
