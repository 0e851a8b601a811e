/* SPDX-License-Identifier: MPL-2.0 */
/* trust.h - what retrig lets an untrusted actions.json make it sign: the trust level of a
 * Treeherder project, and the check every hook call passes before it is signed with our
 * Taskcluster credentials (retrig-retrigger, retrig-perf, `retrig render-action`).
 *
 * A push writes its own actions.json, so its hookGroupId, hookId and hookPayload say what
 * the push wants, not what retrig may do. rt_hook_check allows a call only when:
 *   - the task's project has a configured trust level (1-3, as Gecko's repositories);
 *   - hookGroupId is the configured group ("project-gecko"), and hookId is
 *     "in-tree-action-<level>-generic/<hash>" for the project's level, the hash made of
 *     letters, digits, '-' and '_' (nothing that walks out of the hook's path). Gecko
 *     registers every action that retrig uses (retrigger, retrigger-multiple, backfill)
 *     with the "generic" permission; other permissions (release-promotion, ...) are
 *     hooks with more power than retrig needs, and are refused;
 *   - the task's schedulerId is "<trust domain>-level-<level>", the trust domain being the
 *     group's name after "project-" ("gecko-level-3");
 *   - the rendered payload's decision.action.taskGroupId (required) and user.taskGroupId
 *     (when present) are the task's own task group, user.taskId (when not null) is the
 *     task acted on, and decision.push.revision, decision.repository.project and
 *     decision.repository.level (each when present) are the push's;
 *   - the payload is the call retrig asked for: decision.action.name the action it looked
 *     up, decision.action.cb_name that action's callback and user.input the input it
 *     rendered the action with (rt_actions_check_payload, common/core/actions.h), so a
 *     template cannot swap the callback (cancel-all) or the input (200 labels x 100 runs)
 *     under a budget charged for what retrig asked.
 * Otherwise it gives a short code (for metrics and the outcome) and a reason naming the
 * field. Pure: no I/O, no globals; thread-safe. */
#ifndef RETRIG_COMMON_CORE_TRUST_H
#define RETRIG_COMMON_CORE_TRUST_H

#include <jansson.h>
#include <stdbool.h>

#include "common/core/errors.h"
#include "common/core/strlist.h"

#define RT_TRUST_MAX_LEVEL 3
#define RT_HOOK_PERMISSION "generic" /* the only in-tree action permission retrig calls */

/* The level of project in a list of "NAME=LEVEL" items (exact names), 0 when the project
 * is not listed or its item is malformed. */
int rt_trust_project_level(const rt_strlist *levels, const char *project);
/* Checks a "NAME=LEVEL" list: RT_OK, or RT_EINVAL with errstr naming the bad item. */
RT_MUSTCHECK int rt_trust_levels_check(const rt_strlist *levels, char *errstr);

typedef struct rt_hook_policy {
    const char *hook_group_id;        /* the only hook group retrig calls: "project-gecko" */
    const rt_strlist *project_levels; /* "try=1, autoland=3, ..." */
} rt_hook_policy;

typedef struct rt_hook_call {
    const char *hook_group_id, *hook_id; /* from the action (untrusted) */
    const json_t *payload;               /* the rendered hookPayload (untrusted) */
    const char *project, *revision;      /* the push, as retrig knows it */
    const char *scheduler_id;            /* the task's, from its definition */
    const char *task_group_id;           /* the task's own task group */
    const char *task_id;                 /* the task acted on; NULL for a task-group action */
    const char *action_name;             /* the action retrig looked up ("retrigger-multiple") */
    const json_t *input;                 /* the input it rendered the action with */
} rt_hook_call;

typedef struct rt_hook_verdict {
    int level;        /* the project's trust level, 0 when it has none */
    const char *code; /* NULL when allowed; else "project", "hook-group", "hook-id",
                       * "scheduler", "task-group", "task", "push", "action", "input"
                       * (static strings) */
    char reason[RT_ERRSTR_SIZE];
} rt_hook_verdict;

/* RT_OK when the call may be signed and sent; RT_EAUTH when it is refused (verdict says
 * why). verdict->level is set either way. */
RT_MUSTCHECK int rt_hook_check(const rt_hook_policy *policy, const rt_hook_call *call,
                               rt_hook_verdict *verdict);

#endif
