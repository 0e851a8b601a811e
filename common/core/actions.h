/* SPDX-License-Identifier: MPL-2.0 */
/* actions.h - a decision task's public/actions.json (version 1): parsing, choosing an
 * action for a task, and rendering a hook action's hookPayload with JSON-e.
 *
 * Each action has a context: a list of tag-sets. A non-empty list makes it a task action,
 * available for a task when one of its tag-sets matches (every key of the tag-set is a
 * task tag with that value; {} matches every task). An empty list makes it a task-group
 * action, rendered with taskId null. Several actions may share a name for disjoint sets
 * of tasks (gecko has three "retrigger"s); the first available one in file order wins.
 * The hookPayload is rendered with the context {taskGroupId: <decision task id>, taskId:
 * <task id or null>, input: <input>} over the file's `variables` (ours win on a clash, as
 * in Treeherder). Untrusted input, parsed once here. Pure: no I/O. */
#ifndef RETRIG_COMMON_ACTIONS_H
#define RETRIG_COMMON_ACTIONS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/core/errors.h"

#define RT_ACTIONS_MAX_BYTES (16 * 1024 * 1024) /* cap of an actions.json, whatever the caller */

typedef struct rt_tag {
    const char *key;
    const char *value;
} rt_tag;

typedef struct rt_action_tagset {
    rt_tag *tags; /* strings owned by the tag-set */
    size_t count;
} rt_action_tagset;

typedef struct rt_action {
    char *name;
    char *title;          /* "" when absent */
    char *kind;           /* "hook"; other kinds are kept but cannot be rendered */
    char *hook_group_id;  /* kind hook: "project-gecko"; NULL otherwise */
    char *hook_id;        /* kind hook: "in-tree-action-3-generic/9353e8f146"; NULL otherwise */
    json_t *hook_payload; /* the JSON-e template (kind hook), NULL otherwise */
    json_t *schema;       /* the input schema, NULL when absent */
    rt_action_tagset *context;
    size_t context_count; /* 0: a task-group action */
} rt_action;

typedef struct rt_actions {
    rt_action *actions;
    size_t count;
    json_t *variables; /* always an object */
} rt_actions;

/* Parses an actions.json: the whole file {version: 1, actions: [...], variables: {...}} or
 * a bare list of actions (then no variables). Returns RT_OK with *out owned by the caller,
 * RT_ETOOBIG (over max_bytes or RT_ACTIONS_MAX_BYTES), RT_EPROTO (not JSON, another
 * version, an action without name/kind/context, a hook action without hookGroupId, hookId
 * or hookPayload, tag values that are not strings, ...) or RT_ENOMEM; errstr says why. */
RT_MUSTCHECK int rt_actions_parse(const char *text, size_t len, size_t max_bytes, rt_actions **out,
                                  char *errstr);
void rt_actions_free(rt_actions *actions);

/* True for a task-group action (context []). */
bool rt_action_is_task_group(const rt_action *action);
/* True when the action is a task action and one of its tag-sets matches the tags. */
bool rt_action_matches_tags(const rt_action *action, const rt_tag *tags, size_t ntags);

/* The first action named `name` available here: a task-group action, or a task action
 * matching the task's tags (tags may be NULL when ntags is 0). RT_ENOTFOUND when there is
 * no action of that name, or none for this task (errstr tells which). */
RT_MUSTCHECK int rt_actions_find(const rt_actions *actions, const char *name, const rt_tag *tags,
                                 size_t ntags, const rt_action **out, char *errstr);

/* Renders a hook action's hookPayload. task_id is ignored (null) for a task-group action
 * and required for a task action. input: the action input (e.g. {"requests": [...]} for
 * retrigger-multiple, {"times": 3} for retrigger); NULL means null. *payload is owned by
 * the caller. RT_EINVAL (not a hook action, task id missing), RT_EPROTO / RT_ETOOBIG
 * (JSON-e error, see jsone.h), RT_ENOMEM. */
RT_MUSTCHECK int rt_actions_render(const rt_actions *actions, const rt_action *action,
                                   const char *decision_task_id, const char *task_id,
                                   const json_t *input, json_t **payload, char *errstr);

/* The input retrig passes to the action `name` for the task labelled `label`, one builder
 * for the workers and `retrig render-action` (which replays exactly what they send):
 *   retrigger-multiple  {"requests": [{"tasks": [label], "times": times}]}
 *   add-new-jobs        {"tasks": [label], "times": times}   (a culprit probe)
 *   backfill            {"depth": depth, "times": times}     (a perf backfill)
 *   any other           {"times": times}                     (Gecko's retrigger)
 * depth is used by backfill only, label by the first two. Owned by the caller; NULL when out
 * of memory or when label is needed and NULL. */
json_t *rt_actions_input(const char *name, const char *label, int times, int depth);

/* Is the rendered hookPayload the call retrig asked for? A push writes its actions.json, and
 * the action task runs the callback decision.action.cb_name with user.input as its input, so
 * a template could swap either. Required, as Gecko's registry renders them
 * (gecko_taskgraph/actions/registry.py):
 *   - decision.action.name is `name`, the action retrig looked up;
 *   - decision.action.cb_name is `name` (cb_name defaults to the name) or a callback Gecko
 *     registers under that name ("retrigger": "retrigger-decision", "retrigger-disabled");
 *   - user.input equals `input` (NULL: null), the input retrig rendered the action with.
 * RT_OK, or RT_EAUTH with *code ("action" or "input", static) and errstr naming the field. */
RT_MUSTCHECK int rt_actions_check_payload(const char *name, const json_t *input,
                                          const json_t *payload, const char **code, char *errstr);

#endif
