/* SPDX-License-Identifier: MPL-2.0 */
/* actions.c - actions.json parsing, action choice by task tags, hookPayload rendering. */
#include "common/core/actions.h"

#include <stdlib.h>
#include <string.h>

#include "common/core/ids.h"
#include "common/core/jsone.h"

#define MAX_ACTIONS 1000
#define MAX_TAGSETS 1000
#define MAX_TAGS    100
#define MAX_FIELD   4096

static void tagset_free(rt_action_tagset *set)
{
    for (size_t i = 0; i < set->count; i++) {
        free((char *)set->tags[i].key);
        free((char *)set->tags[i].value);
    }
    free(set->tags);
}

static void action_free(rt_action *a)
{
    free(a->name);
    free(a->title);
    free(a->kind);
    free(a->hook_group_id);
    free(a->hook_id);
    json_decref(a->hook_payload);
    json_decref(a->schema);
    for (size_t i = 0; i < a->context_count; i++) tagset_free(&a->context[i]);
    free(a->context);
}

void rt_actions_free(rt_actions *actions)
{
    if (!actions) return;
    for (size_t i = 0; i < actions->count; i++) action_free(&actions->actions[i]);
    free(actions->actions);
    json_decref(actions->variables);
    free(actions);
}

/* A string field of action #index: required or optional (then *out stays NULL). */
static int copy_field(const json_t *obj, const char *field, bool required, size_t index, char **out,
                      char *errstr)
{
    json_t *v = json_object_get(obj, field);
    if (!v && !required) return RT_OK;
    if (!json_is_string(v) || json_string_length(v) > MAX_FIELD ||
        strlen(json_string_value(v)) != json_string_length(v)) {
        rt_set_errstr(errstr, "actions.json: action %zu: %s %s", index, field,
                      v ? "is not a string (or too long)" : "is missing");
        return RT_EPROTO;
    }
    *out = strdup(json_string_value(v));
    return *out ? RT_OK : RT_ENOMEM;
}

static int parse_context(const json_t *context, rt_action *a, size_t index, char *errstr)
{
    if (!json_is_array(context) || json_array_size(context) > MAX_TAGSETS) {
        rt_set_errstr(errstr, "actions.json: action %zu (%s): context is %s", index, a->name,
                      context ? "not a list of tag-sets" : "missing");
        return RT_EPROTO;
    }
    size_t n = json_array_size(context);
    if (n == 0) return RT_OK;
    if (!(a->context = calloc(n, sizeof *a->context))) return RT_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        json_t *set = json_array_get(context, i);
        if (!json_is_object(set) || json_object_size(set) > MAX_TAGS) {
            rt_set_errstr(errstr, "actions.json: action %zu (%s): context[%zu] is not a tag-set",
                          index, a->name, i);
            return RT_EPROTO;
        }
        rt_action_tagset *ts = &a->context[a->context_count++];
        if (json_object_size(set) && !(ts->tags = calloc(json_object_size(set), sizeof *ts->tags)))
            return RT_ENOMEM;
        const char *key;
        json_t *value;
        json_object_foreach(set, key, value)
        {
            if (!json_is_string(value) || json_string_length(value) > MAX_FIELD ||
                strlen(json_string_value(value)) != json_string_length(value)) {
                rt_set_errstr(errstr,
                              "actions.json: action %zu (%s): tag %.64s of context[%zu] is not "
                              "a string",
                              index, a->name, key, i);
                return RT_EPROTO;
            }
            rt_tag *tag = &ts->tags[ts->count];
            tag->key = strdup(key);
            tag->value = strdup(json_string_value(value));
            ts->count++;
            if (!tag->key || !tag->value) return RT_ENOMEM;
        }
    }
    return RT_OK;
}

static int parse_action(const json_t *obj, size_t index, rt_action *a, char *errstr)
{
    int rc;
    if (!json_is_object(obj)) {
        rt_set_errstr(errstr, "actions.json: action %zu is not an object", index);
        return RT_EPROTO;
    }
    if ((rc = copy_field(obj, "name", true, index, &a->name, errstr)) ||
        (rc = copy_field(obj, "kind", true, index, &a->kind, errstr)) ||
        (rc = copy_field(obj, "title", false, index, &a->title, errstr)))
        return rc;
    if (!a->title && !(a->title = strdup(""))) return RT_ENOMEM;
    if ((rc = parse_context(json_object_get(obj, "context"), a, index, errstr))) return rc;
    json_t *schema = json_object_get(obj, "schema");
    if (schema) a->schema = json_incref(schema);
    if (strcmp(a->kind, "hook") != 0) return RT_OK;
    if ((rc = copy_field(obj, "hookGroupId", true, index, &a->hook_group_id, errstr)) ||
        (rc = copy_field(obj, "hookId", true, index, &a->hook_id, errstr)))
        return rc;
    json_t *payload = json_object_get(obj, "hookPayload");
    if (!payload) {
        rt_set_errstr(errstr, "actions.json: action %zu (%s): hookPayload is missing", index,
                      a->name);
        return RT_EPROTO;
    }
    a->hook_payload = json_incref(payload);
    return RT_OK;
}

int rt_actions_parse(const char *text, size_t len, size_t max_bytes, rt_actions **out, char *errstr)
{
    int rc = RT_EPROTO;
    json_t *root = NULL;
    rt_actions *actions = NULL;
    *out = NULL;
    if (errstr) errstr[0] = '\0';
    if (len > max_bytes || len > RT_ACTIONS_MAX_BYTES) {
        rt_set_errstr(errstr, "actions.json: %zu bytes is over the cap", len);
        return RT_ETOOBIG;
    }
    json_error_t error;
    if (!(root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &error))) {
        rt_set_errstr(errstr, "actions.json: invalid JSON: %s (line %d)", error.text, error.line);
        goto out;
    }
    json_t *list = root, *variables = NULL;
    if (json_is_object(root)) {
        json_t *version = json_object_get(root, "version");
        if (!json_is_integer(version) || json_integer_value(version) != 1) {
            rt_set_errstr(errstr, "actions.json: version is not 1");
            goto out;
        }
        list = json_object_get(root, "actions");
        variables = json_object_get(root, "variables");
        if (variables && !json_is_object(variables)) {
            rt_set_errstr(errstr, "actions.json: variables is not an object");
            goto out;
        }
    }
    if (!json_is_array(list) || json_array_size(list) > MAX_ACTIONS) {
        rt_set_errstr(errstr, "actions.json: actions is not a list (of at most %d)", MAX_ACTIONS);
        goto out;
    }
    rc = RT_ENOMEM;
    if (!(actions = calloc(1, sizeof *actions))) goto out;
    actions->variables = variables ? json_incref(variables) : json_object();
    size_t n = json_array_size(list);
    if (!actions->variables || (n && !(actions->actions = calloc(n, sizeof *actions->actions))))
        goto out;
    for (size_t i = 0; i < n; i++) {
        rc = parse_action(json_array_get(list, i), i, &actions->actions[i], errstr);
        actions->count++;
        if (rc) goto out;
    }
    *out = actions;
    actions = NULL;
    rc = RT_OK;
out:
    if (rc == RT_ENOMEM) rt_set_errstr(errstr, "actions.json: out of memory");
    rt_actions_free(actions);
    json_decref(root);
    return rc;
}

bool rt_action_is_task_group(const rt_action *action) { return action->context_count == 0; }

bool rt_action_matches_tags(const rt_action *action, const rt_tag *tags, size_t ntags)
{
    for (size_t s = 0; s < action->context_count; s++) {
        const rt_action_tagset *set = &action->context[s];
        bool all = true;
        for (size_t i = 0; i < set->count && all; i++) {
            bool found = false;
            for (size_t j = 0; j < ntags && !found; j++)
                found = strcmp(tags[j].key, set->tags[i].key) == 0 &&
                        strcmp(tags[j].value, set->tags[i].value) == 0;
            all = found;
        }
        if (all) return true;
    }
    return false;
}

int rt_actions_find(const rt_actions *actions, const char *name, const rt_tag *tags, size_t ntags,
                    const rt_action **out, char *errstr)
{
    bool named = false;
    *out = NULL;
    for (size_t i = 0; i < actions->count; i++) {
        const rt_action *a = &actions->actions[i];
        if (strcmp(a->name, name) != 0) continue;
        named = true;
        if (rt_action_is_task_group(a) || rt_action_matches_tags(a, tags, ntags)) {
            *out = a;
            return RT_OK;
        }
    }
    if (named)
        rt_set_errstr(errstr,
                      "action %.64s is not available for this task (its tags match no context)",
                      name);
    else
        rt_set_errstr(errstr, "no action named %.64s in actions.json", name);
    return RT_ENOTFOUND;
}

int rt_actions_render(const rt_actions *actions, const rt_action *action,
                      const char *decision_task_id, const char *task_id, const json_t *input,
                      json_t **payload, char *errstr)
{
    int rc = RT_ENOMEM;
    json_t *context = NULL;
    *payload = NULL;
    if (!action->hook_payload) {
        rt_set_errstr(errstr, "action %s has kind %s: only hook actions can be triggered",
                      action->name, action->kind);
        return RT_EINVAL;
    }
    if (!decision_task_id || !rt_valid_task_id(decision_task_id)) {
        rt_set_errstr(errstr, "action %s: invalid decision task id", action->name);
        return RT_EINVAL;
    }
    bool group = rt_action_is_task_group(action);
    if (!group && (!task_id || !rt_valid_task_id(task_id))) {
        rt_set_errstr(errstr, "action %s is a task action: it needs a valid task id", action->name);
        return RT_EINVAL;
    }
    if (!(context = json_copy(actions->variables))) goto out;
    if (json_object_set_new(context, "taskGroupId", json_string(decision_task_id)) ||
        json_object_set_new(context, "taskId", group ? json_null() : json_string(task_id)) ||
        json_object_set_new(context, "input", input ? json_incref((json_t *)input) : json_null()))
        goto out;
    rc = rt_jsone_render(action->hook_payload, context, payload, errstr);
out:
    if (rc == RT_ENOMEM && !*payload)
        rt_set_errstr(errstr, "action %s: out of memory", action->name);
    json_decref(context);
    return rc;
}

json_t *rt_actions_input(const char *name, const char *label, int times, int depth)
{
    if (!strcmp(name, "retrigger-multiple"))
        return label ? json_pack("{s:[{s:[s], s:i}]}", "requests", "tasks", label, "times", times)
                     : NULL;
    if (!strcmp(name, "add-new-jobs"))
        return label ? json_pack("{s:[s], s:i}", "tasks", label, "times", times) : NULL;
    if (!strcmp(name, "backfill")) return json_pack("{s:i, s:i}", "depth", depth, "times", times);
    return json_pack("{s:i}", "times", times);
}

/* Gecko's callbacks registered under another action's name (gecko_taskgraph/actions/
 * retrigger.py): the same "retrigger" for decision tasks and for tasks not to retrigger. */
static const struct {
    const char *name, *cb_name;
} CALLBACK_VARIANTS[] = {
    {"retrigger", "retrigger-decision"},
    {"retrigger", "retrigger-disabled"},
};

static bool callback_of(const char *name, const char *cb_name)
{
    if (!strcmp(cb_name, name)) return true;
    for (size_t i = 0; i < sizeof CALLBACK_VARIANTS / sizeof CALLBACK_VARIANTS[0]; i++)
        if (!strcmp(CALLBACK_VARIANTS[i].name, name) &&
            !strcmp(CALLBACK_VARIANTS[i].cb_name, cb_name))
            return true;
    return false;
}

/* An untrusted name shown in a reason only when it is a plain identifier. */
static const char *shown(const json_t *v, const char *otherwise)
{
    const char *text = json_string_value(v);
    size_t len = text ? strlen(text) : 0;
    if (!text || len == 0 || len > 64 || len != json_string_length(v)) return otherwise;
    for (const char *p = text; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '-' || *p == '_'))
            return otherwise;
    return text;
}

int rt_actions_check_payload(const char *name, const json_t *input, const json_t *payload,
                             const char **code, char *errstr)
{
    *code = "action";
    const json_t *action = json_object_get(json_object_get(payload, "decision"), "action");
    const json_t *v = json_object_get(action, "name");
    if (!name || !json_is_string(v) || strcmp(json_string_value(v), name) != 0) {
        rt_set_errstr(errstr, "the payload's decision.action.name is %s, not the action %.64s",
                      v ? shown(v, "another action") : "missing", name ? name : "(none)");
        return RT_EAUTH;
    }
    v = json_object_get(action, "cb_name");
    if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v) ||
        !callback_of(name, json_string_value(v))) {
        rt_set_errstr(errstr,
                      "the payload's decision.action.cb_name is %s, not a callback of the action "
                      "%.64s",
                      v ? shown(v, "another callback") : "missing", name);
        return RT_EAUTH;
    }
    *code = "input";
    const json_t *user = json_object_get(payload, "user");
    v = json_object_get(user, "input");
    json_t *null = json_null();
    bool same = v && json_equal((json_t *)v, input ? (json_t *)input : null);
    json_decref(null);
    if (!same) {
        rt_set_errstr(errstr,
                      "the payload's user.input is %s, not the input retrig rendered the action "
                      "%.64s with",
                      v ? "another input" : "missing", name);
        return RT_EAUTH;
    }
    *code = NULL;
    return RT_OK;
}
