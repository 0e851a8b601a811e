/* SPDX-License-Identifier: MPL-2.0 */
/* offline.c - `retrig errorsummary` and `retrig eligibility`: the worker's decisions,
 * replayed from files, so a sheriff can ask why a task was (not) retriggered. */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/core/eligibility.h"
#include "common/core/errorsummary.h"
#include "common/core/pulse.h"
#include "common/core/taskdef.h"
#include "common/io/hashkey.h"
#include "common/policy.h"

#define FILE_CAP (256L * 1024 * 1024)

/* The files as one run's artifacts, parsed as retrig-classify parses them (the process's
 * hash key, errorsummary_max_bytes; no time budget). */
static int load_errorsummaries(const rt_config *cfg, char **paths, size_t npaths,
                               rt_errorsummary *es)
{
    rt_errorsummary_init(es, rt_hash_key(), (size_t)cfg->errorsummary_max_bytes, NULL, NULL);
    for (size_t i = 0; i < npaths; i++) {
        size_t len = 0;
        char *text = rt__cli_read_file(paths[i], (size_t)FILE_CAP, &len, "the errorsummary file");
        if (!text) {
            rt_log_error("cannot read errorsummary file", "file", paths[i]);
            return 1;
        }
        int rc = rt_errorsummary_add(es, text, len);
        free(text);
        if (rc != RT_OK) {
            rt_log_error("cannot parse errorsummary file", "file", paths[i], "error",
                         rt_strerror(rc));
            return 1;
        }
    }
    return 0;
}

/* Appends value (stolen) to array; false when value is NULL (json_pack refused it) or the
 * append failed, so that an item is never left out without the caller knowing. */
static bool append(json_t *array, json_t *value)
{
    return value && json_array_append_new(array, value) == 0;
}

/* The summary as JSON; NULL when an item could not be represented (never a shorter list). */
static json_t *errorsummary_json(const rt_errorsummary *es)
{
    const char *reason = NULL;
    rt_es_kind kind = rt_errorsummary_classify(es, &reason);
    json_t *failing = json_array(), *failures = json_array(), *unfinished = json_array();
    json_t *not_run = json_array();
    bool whole = failing && failures && unfinished && not_run;
    for (size_t i = 0; whole && i < es->ngroups; i++) {
        if (rt_errorsummary_group_failed(es, &es->groups[i]))
            whole = append(failing, json_string(es->groups[i].name));
        if (whole && rt_errorsummary_group_unfinished(&es->groups[i]))
            whole = append(unfinished, json_string(es->groups[i].name));
        if (whole && rt_errorsummary_group_not_run(&es->groups[i]))
            whole = append(not_run, json_string(es->groups[i].name));
    }
    for (size_t i = 0; whole && i < es->nfailures; i++) {
        const rt_es_failure *f = &es->failures[i];
        whole = append(failures, json_pack("{s:s, s:s?, s:s, s:s, s:s?, s:s}", "test", f->test,
                                           "subtest", f->subtest, "status", f->status, "expected",
                                           f->expected, "message", f->message, "group", f->group));
    }
    if (!whole) {
        json_decref(failing);
        json_decref(failures);
        json_decref(unfinished);
        json_decref(not_run);
        return NULL;
    }
    return json_pack("{s:s, s:s, s:b, s:s?, s:o, s:o, s:o, s:o, s:I, s:I, s:I}", "kind",
                     rt_es_kind_name(kind), "reason", reason, "complete",
                     rt_errorsummary_complete(es), "incomplete", rt_errorsummary_incomplete_why(es),
                     "groups_without_result", unfinished, "groups_not_run", not_run,
                     "failing_groups", failing, "failures", failures, "failures_not_listed",
                     (json_int_t)es->failures_dropped, "bad_lines", (json_int_t)es->bad_lines,
                     "artifacts_without_test_groups", (json_int_t)es->artifacts_without_groups);
}

static void print_json(json_t *value)
{
    char *text = value ? json_dumps(value, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
    if (text) puts(text);
    free(text);
}

int rt_cli_errorsummary(int argc, char **argv, rt_config *cfg)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fprintf(argc < 2 ? stderr : stdout,
                "usage: retrig errorsummary FILE...\n"
                "Parses errorsummary artifacts of one run and prints\n"
                "{\"kind\": \"test-failure\"|\"product-crash\"|\"infra\"|\"pass\",\n"
                " \"reason\" (product-crash: crash-before-tests), \"complete\",\n"
                " \"incomplete\" (why not complete: no-test-groups, group-without-result, ...),\n"
                " \"groups_without_result\": [...] (groups that had to finish and did not),\n"
                " \"groups_not_run\": [...] (listed, no test logged), \"failing_groups\": [...],\n"
                " \"failures\": [{test, subtest, status, expected, message, group}],\n"
                " \"failures_not_listed\", \"bad_lines\", \"artifacts_without_test_groups\"}.\n");
        return argc < 2 ? 2 : 0;
    }
    rt_errorsummary es = {0};
    int status = load_errorsummaries(cfg, argv + 1, (size_t)(argc - 1), &es);
    if (status == 0) {
        json_t *out = errorsummary_json(&es);
        if (!out) {
            rt_log_error("cannot represent the errorsummary as JSON");
            status = 1;
        }
        print_json(out);
        json_decref(out);
    }
    rt_errorsummary_free(&es);
    return status;
}

static void eligibility_usage(FILE *out)
{
    fprintf(out,
            "usage: retrig eligibility --message PULSE.json --task TASKDEF.json\n"
            "                          [--errorsummary FILE]... [--classification ID]\n"
            "                          [--pool-prefix P]... [--tier N]... [--existing N]\n"
            "Replays retrig-classify's decision for one task run from files: the Pulse body\n"
            "(raw, or Treeherder's {root_url, exchange, payload, routes} wrapper), the task\n"
            "definition, its errorsummary artifacts (none: no-errorsummary) and the Treeherder\n"
            "classification id (default 1, not classified). --pool-prefix and --tier replace\n"
            "the configured pool_prefixes and tiers; --existing counts retriggers already\n"
            "present for the push (default 0). Prints {\"task_id\", \"verdict\", \"reason\",\n"
            "\"retriggers\"} with verdict retrigger, skip or infra.\n");
}

/* Long because it is one case per option (--pool-prefix and --tier replace the configured lists
 * on first use), then a linear sequence of reads and parses, one per file, that shares cleanup
 * through goto out before the decision is printed. */
int rt_cli_eligibility(int argc, char **argv, rt_config *cfg)
{
    static const struct option options[] = {
        {"message", required_argument, NULL, 'm'},
        {"task", required_argument, NULL, 't'},
        {"errorsummary", required_argument, NULL, 'e'},
        {"classification", required_argument, NULL, 'c'},
        {"pool-prefix", required_argument, NULL, 'p'},
        {"tier", required_argument, NULL, 'n'},
        {"existing", required_argument, NULL, 'x'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *message_path = NULL, *task_path = NULL;
    char *es_paths[64];
    size_t nes = 0;
    int classification = 1, existing = 0, status = 2, c;
    rt_elig_policy policy;
    rt_elig_policy_from_config(cfg, &policy);
    bool prefixes_given = false, tiers_given = false;
    while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        switch (c) {
        case 'm': message_path = optarg; break;
        case 't': task_path = optarg; break;
        case 'e':
            if (nes == sizeof es_paths / sizeof es_paths[0]) {
                eligibility_usage(stderr);
                return 2;
            }
            es_paths[nes++] = optarg;
            break;
        case 'c': classification = atoi(optarg); break;
        case 'x': existing = atoi(optarg); break;
        case 'p':
            if (!prefixes_given) policy.npool_prefixes = 0;
            prefixes_given = true;
            if (policy.npool_prefixes < RT_ELIG_MAX_POOLS)
                policy.pool_prefixes[policy.npool_prefixes++] = optarg;
            break;
        case 'n':
            if (!tiers_given) policy.ntiers = 0;
            tiers_given = true;
            if (policy.ntiers < RT_ELIG_MAX_TIERS) policy.tiers[policy.ntiers++] = atoi(optarg);
            break;
        case 'h': eligibility_usage(stdout); return 0;
        default: eligibility_usage(stderr); return 2;
        }
    }
    if (!message_path || !task_path) {
        eligibility_usage(stderr);
        return 2;
    }

    rt_pulse_task msg = {0};
    rt_taskdef task = {0};
    rt_errorsummary es = {0};
    char *msg_text = NULL, *task_text = NULL;
    size_t msg_len = 0, task_len = 0;
    char reason[RT_PULSE_REASON_SIZE];
    status = 1;
    if (!(msg_text = rt__cli_read_file(message_path, (size_t)FILE_CAP, &msg_len, "the message"))) {
        rt_log_error("cannot read message file", "file", message_path);
        goto out;
    }
    if (!(task_text =
              rt__cli_read_file(task_path, (size_t)FILE_CAP, &task_len, "the task definition"))) {
        rt_log_error("cannot read task definition file", "file", task_path);
        goto out;
    }
    if (rt_pulse_parse(msg_text, msg_len, NULL, (size_t)cfg->max_message_bytes, &msg, reason) !=
        RT_OK) {
        rt_log_error("invalid Pulse message", "file", message_path, "reason", reason);
        goto out;
    }
    if (rt_taskdef_parse(task_text, task_len, FILE_CAP, &task, reason) != RT_OK) {
        rt_log_error("invalid task definition", "file", task_path, "reason", reason);
        goto out;
    }
    if (load_errorsummaries(cfg, es_paths, nes, &es) != 0) goto out;

    rt_elig_facts facts = {
        .message = &msg,
        .task = &task,
        .set_known = true,
        .set_original_task_id = NULL,
        .classification_known = true,
        .classification_id = classification,
        .errorsummary = &es,
        .existing_known = true,
        .existing_retriggers = existing,
    };
    rt_elig_result result;
    rt_eligibility_decide(&policy, &facts, &result);
    json_t *out = json_pack("{s:s, s:s, s:s, s:i}", "task_id", msg.task_id, "verdict",
                            rt_elig_verdict_name(result.verdict), "reason", result.reason,
                            "retriggers", result.retriggers);
    print_json(out);
    json_decref(out);
    status = 0;
out:
    free(msg_text);
    free(task_text);
    rt_pulse_task_free(&msg);
    rt_taskdef_free(&task);
    rt_errorsummary_free(&es);
    return status;
}
