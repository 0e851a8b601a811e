/* SPDX-License-Identifier: MPL-2.0 */
/* trust.c - project trust levels and the check of a hook call before it is signed. */
#include "common/core/trust.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/actions.h"
#include "common/core/utf8.h"

#define HOOK_ID_MAX 256

/* NAME=LEVEL: the level (1..RT_TRUST_MAX_LEVEL) when item is project's, 0 otherwise; *bad
 * is set when the item is malformed. */
static int item_level(const char *item, const char *project, bool *bad)
{
    const char *eq = strchr(item, '=');
    *bad = true;
    if (!eq || eq == item) return 0;
    const char *value = eq + 1;
    while (*value == ' ') value++;
    if (value[0] < '1' || value[0] > '0' + RT_TRUST_MAX_LEVEL || value[1] != '\0') return 0;
    size_t name_len = (size_t)(eq - item);
    while (name_len > 0 && item[name_len - 1] == ' ') name_len--;
    if (name_len == 0) return 0;
    *bad = false;
    if (!project || strlen(project) != name_len || strncmp(item, project, name_len) != 0) return 0;
    return value[0] - '0';
}

int rt_trust_project_level(const rt_strlist *levels, const char *project)
{
    for (size_t i = 0; levels && project && i < levels->count; i++) {
        bool bad;
        int level = item_level(levels->items[i], project, &bad);
        if (level) return level;
    }
    return 0;
}

int rt_trust_levels_check(const rt_strlist *levels, char *errstr)
{
    for (size_t i = 0; i < levels->count; i++) {
        bool bad;
        (void)item_level(levels->items[i], NULL, &bad);
        if (bad) {
            rt_set_errstr(errstr, "'%.100s' is not PROJECT=LEVEL with a level from 1 to %d",
                          levels->items[i], RT_TRUST_MAX_LEVEL);
            return RT_EINVAL;
        }
    }
    return RT_OK;
}

static int refuse(rt_hook_verdict *v, const char *code, const char *fmt, ...) RT_PRINTF(3, 4);
static int refuse(rt_hook_verdict *v, const char *code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    v->code = code;
    rt_utf8_vformat(v->reason, sizeof v->reason, fmt, ap);
    va_end(ap);
    return RT_EAUTH;
}

/* "in-tree-action-<level>-generic/" then the hash: [A-Za-z0-9_-]. */
static bool hook_id_ok(const char *hook_id, int level)
{
    char prefix[64];
    snprintf(prefix, sizeof prefix, "in-tree-action-%d-" RT_HOOK_PERMISSION "/", level);
    size_t n = strlen(prefix), len = strlen(hook_id);
    if (len <= n || len > HOOK_ID_MAX || strncmp(hook_id, prefix, n) != 0) return false;
    for (const char *p = hook_id + n; *p; p++) {
        char c = *p;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_'))
            return false;
    }
    return true;
}

/* A string member of obj equal to want; *present says whether the member exists. */
static bool member_is(const json_t *obj, const char *key, const char *want, bool *present)
{
    const json_t *v = json_object_get(obj, key);
    *present = v != NULL;
    return json_is_string(v) && want && !strcmp(json_string_value(v), want);
}

static int check_payload(const rt_hook_call *call, int level, rt_hook_verdict *v)
{
    const json_t *payload = call->payload;
    if (!json_is_object(payload))
        return refuse(v, "task-group", "the hook payload is not an object");
    const json_t *decision = json_object_get(payload, "decision");
    const json_t *action = json_object_get(decision, "action");
    bool present;
    if (!member_is(action, "taskGroupId", call->task_group_id, &present))
        return refuse(v, "task-group",
                      "the payload's decision.action.taskGroupId is %s, not the task's group %s",
                      present ? "another group" : "missing", call->task_group_id);
    const json_t *user = json_object_get(payload, "user");
    if (user && !json_is_object(user))
        return refuse(v, "task-group", "the payload's user is not an object");
    if (!member_is(user, "taskGroupId", call->task_group_id, &present) && present)
        return refuse(v, "task-group", "the payload's user.taskGroupId is not the task's group %s",
                      call->task_group_id);
    const json_t *target = json_object_get(user, "taskId");
    if (target && !json_is_null(target) &&
        !(json_is_string(target) && call->task_id &&
          !strcmp(json_string_value(target), call->task_id)))
        return refuse(v, "task", "the payload's user.taskId is not the task acted on (%s)",
                      call->task_id ? call->task_id : "none: a task-group action");
    const json_t *push = json_object_get(decision, "push");
    if (!member_is(push, "revision", call->revision, &present) && present)
        return refuse(v, "push", "the payload's decision.push.revision is not the push's %s",
                      call->revision ? call->revision : "(unknown)");
    const json_t *repository = json_object_get(decision, "repository");
    if (!member_is(repository, "project", call->project, &present) && present)
        return refuse(v, "push", "the payload's decision.repository.project is not %s",
                      call->project);
    const json_t *lv = json_object_get(repository, "level");
    if (lv) {
        char want[4];
        snprintf(want, sizeof want, "%d", level);
        bool same = json_is_string(lv) ? !strcmp(json_string_value(lv), want)
                                       : json_is_integer(lv) && json_integer_value(lv) == level;
        if (!same)
            return refuse(v, "push", "the payload's decision.repository.level is not %d", level);
    }
    const char *code = NULL;
    char reason[RT_ERRSTR_SIZE];
    if (rt_actions_check_payload(call->action_name, call->input, payload, &code, reason) != RT_OK)
        return refuse(v, code, "%s", reason);
    return RT_OK;
}

int rt_hook_check(const rt_hook_policy *policy, const rt_hook_call *call, rt_hook_verdict *v)
{
    memset(v, 0, sizeof *v);
    v->level = rt_trust_project_level(policy->project_levels, call->project);
    int level = v->level;
    if (!level)
        return refuse(v, "project", "project %s has no trust level (project_levels)",
                      call->project ? call->project : "(none)");
    const char *group = policy->hook_group_id;
    if (!call->hook_group_id || !group || strcmp(call->hook_group_id, group) != 0)
        return refuse(v, "hook-group", "hookGroupId %.100s is not %s",
                      call->hook_group_id ? call->hook_group_id : "(none)",
                      group ? group : "(none)");
    if (!call->hook_id || !hook_id_ok(call->hook_id, level))
        return refuse(v, "hook-id",
                      "hookId %.100s is not in-tree-action-%d-" RT_HOOK_PERMISSION
                      "/<hash> (level of %s)",
                      call->hook_id ? call->hook_id : "(none)", level, call->project);
    const char *domain = !strncmp(group, "project-", 8) ? group + 8 : group;
    char scheduler[128];
    snprintf(scheduler, sizeof scheduler, "%.100s-level-%d", domain, level);
    if (!call->scheduler_id || strcmp(call->scheduler_id, scheduler) != 0)
        return refuse(v, "scheduler", "the task's schedulerId %.100s is not %s (level of %s)",
                      call->scheduler_id ? call->scheduler_id : "(none)", scheduler, call->project);
    if (!call->task_group_id) return refuse(v, "task-group", "the task's group is unknown");
    return check_payload(call, level, v);
}
