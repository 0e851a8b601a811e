/* SPDX-License-Identifier: MPL-2.0 */
/* render_action.c - `retrig render-action`: the hook call a worker would make for a task
 * (retrig-retrigger's retrigger, retrig-perf's backfill, a culprit probe's add-new-jobs),
 * with the input it sends (rt_actions_input), rendered offline from an actions.json and a
 * task definition. */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/core/actions.h"
#include "common/core/ids.h"
#include "common/core/taskdef.h"
#include "common/core/trust.h"
#include "common/policy.h"

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: retrig render-action --actions ACTIONS.json --task TASKDEF.json --task-id ID\n"
        "                            [--action NAME] [--times N] [--depth N]\n"
        "Renders the hookPayload of an action (default retrigger-multiple) for the task and\n"
        "prints {\"hookGroupId\", \"hookId\", \"payload\"}. ACTIONS.json is a whole actions.json\n"
        "or a bare list of actions. A task action must have the task in its context.\n"
        "The input is the one the workers send: retrigger-multiple {requests: [{tasks: [label],\n"
        "times}]}, add-new-jobs (a culprit probe) {tasks: [label], times}, backfill {depth,\n"
        "times} (perf_backfill_depth, perf_backfill_times by default), others {times}.\n"
        "The call is checked as retrig-retrigger checks it before signing (the configured\n"
        "taskcluster_hook_group, an in-tree-action hook of the level of the task's project in\n"
        "project_levels, the task's schedulerId, task group and push, the action's name and\n"
        "callback, the input rendered): a call retrig would refuse is printed with\n"
        "\"refused\": {\"code\", \"reason\"} and the exit code is 1.\n");
}

/* Long because it is a linear sequence of steps that share cleanup through goto out: the
 * options, reading and parsing both files, finding the action by the task's tags, rendering its
 * hookPayload, checking the call as retrig-retrigger does and printing it. */
int rt_cli_render_action(int argc, char **argv, rt_config *cfg)
{
    static const struct option options[] = {
        {"actions", required_argument, NULL, 'a'}, {"task", required_argument, NULL, 't'},
        {"task-id", required_argument, NULL, 'i'}, {"action", required_argument, NULL, 'n'},
        {"times", required_argument, NULL, 'x'},   {"depth", required_argument, NULL, 'd'},
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0},
    };
    const char *actions_path = NULL, *task_path = NULL, *task_id = NULL;
    const char *name = cfg->retrigger_action;
    int times = 0, depth = cfg->perf_backfill_depth, c;
    bool times_given = false;
    while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        switch (c) {
        case 'a': actions_path = optarg; break;
        case 't': task_path = optarg; break;
        case 'i': task_id = optarg; break;
        case 'n': name = optarg; break;
        case 'x':
            times = atoi(optarg);
            times_given = true;
            break;
        case 'd': depth = atoi(optarg); break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (!times_given)
        times = !strcmp(name, "backfill") ? cfg->perf_backfill_times : cfg->retriggers_per_failure;
    if (!actions_path || !task_path || !task_id || times < 1 || times > 100 || depth < 1 ||
        depth > 25) {
        usage(stderr);
        return 2;
    }
    if (!rt_valid_task_id(task_id)) {
        rt_log_error("invalid task id", "task_id", task_id);
        return 2;
    }
    int status = 1;
    char errstr[RT_ERRSTR_SIZE] = "", reason[128] = "";
    size_t alen = 0, tlen = 0;
    char *atext = rt__cli_read_file(actions_path, RT_ACTIONS_MAX_BYTES, &alen, "actions.json");
    char *ttext =
        atext ? rt__cli_read_file(task_path, 16 << 20, &tlen, "the task definition") : NULL;
    rt_actions *actions = NULL;
    rt_taskdef def = {0};
    json_t *task_json = NULL, *input = NULL, *payload = NULL;
    if (!atext || !ttext) goto out;
    if (rt_actions_parse(atext, alen, RT_ACTIONS_MAX_BYTES, &actions, errstr) != RT_OK) {
        rt_log_error("invalid actions.json", "file", actions_path, "error", errstr);
        goto out;
    }
    if (rt_taskdef_parse(ttext, tlen, RT_ACTIONS_MAX_BYTES, &def, reason) != RT_OK || !def.label) {
        rt_log_error("invalid task definition", "file", task_path, "reason", reason);
        goto out;
    }
    json_error_t error;
    task_json = json_loadb(ttext, tlen, 0, &error);
    rt_tag tags[64];
    size_t ntags = 0;
    const char *key;
    json_t *value;
    json_object_foreach(json_object_get(task_json, "tags"), key, value)
    {
        if (json_is_string(value) && ntags < 64)
            tags[ntags++] = (rt_tag){key, json_string_value(value)};
    }
    const rt_action *action = NULL;
    if (rt_actions_find(actions, name, tags, ntags, &action, errstr) != RT_OK) {
        rt_log_error("no such action for this task", "action", name, "error", errstr);
        goto out;
    }
    if (!(input = rt_actions_input(name, def.label, times, depth))) {
        rt_log_error("out of memory");
        goto out;
    }
    /* The decision task is the task's group in Gecko. */
    if (rt_actions_render(actions, action, def.task_group_id,
                          rt_action_is_task_group(action) ? NULL : task_id, input, &payload,
                          errstr) != RT_OK) {
        rt_log_error("cannot render the action", "action", name, "error", errstr);
        goto out;
    }
    rt_hook_policy policy;
    rt_hook_policy_from_config(cfg, &policy);
    rt_hook_call call = {
        .hook_group_id = action->hook_group_id,
        .hook_id = action->hook_id,
        .payload = payload,
        .project = def.project,
        .revision = def.revision,
        .scheduler_id = def.scheduler_id,
        .task_group_id = def.task_group_id,
        .task_id = rt_action_is_task_group(action) ? NULL : task_id,
        .action_name = action->name,
        .input = input,
    };
    rt_hook_verdict verdict;
    bool refused = rt_hook_check(&policy, &call, &verdict) != RT_OK;
    json_t *result = json_pack("{s:s, s:s, s:O}", "hookGroupId", action->hook_group_id, "hookId",
                               action->hook_id, "payload", payload);
    json_t *refusal =
        refused ? json_pack("{s:s, s:s}", "code", verdict.code, "reason", verdict.reason) : NULL;
    bool built = result && (!refused || (refusal && !json_object_set(result, "refused", refusal)));
    json_decref(refusal);
    char *text =
        built ? json_dumps(result, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_ENSURE_ASCII) : NULL;
    json_decref(result);
    if (!text) {
        rt_log_error("out of memory");
        goto out;
    }
    puts(text);
    free(text);
    if (refused) {
        rt_log_warn("retrig would refuse this hook call", "reason", verdict.reason);
        goto out;
    }
    status = 0;
out:
    free(atext);
    free(ttext);
    rt_actions_free(actions);
    rt_taskdef_free(&def);
    json_decref(task_json);
    json_decref(input);
    json_decref(payload);
    return status;
}
