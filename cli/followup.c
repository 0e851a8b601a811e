/* SPDX-License-Identifier: MPL-2.0 */
/* followup.c - `retrig followup`: what retrig-perf's follow-up makes of a backfill, from
 * the facts it gathered, offline (common/core/followup.h). */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "common/core/followup.h"
#include "common/io/file.h"
#include "common/io/log.h"

#define MAX_FACTS_BYTES (1L << 20)

static void usage(FILE *out)
{
    fprintf(out,
            "usage: retrig followup --facts FILE\n"
            "Prints what retrig-perf's follow-up makes of a backfill, {\"state\", \"reason\",\n"
            "\"detail\"}: state pending, done, failed, or need-data (Perfherder's data must be\n"
            "looked at: add data_known, data_found and data_waiting to the facts). FILE is a\n"
            "JSON object of the facts (common/core/followup.h): action_task_valid,\n"
            "action_task_known, action_state, action_reason, action_task_id, expired,\n"
            "window_hours, now, resolved_at, actions_failed, actions_unresolved, bad_action,\n"
            "root_artifact, searched, backfill_tasks, label, first_push, last_push, jobs,\n"
            "completed, failed, exception, deadline, unresolved, first_bad, data_known,\n"
            "data_found, data_waiting, signature_id; an absent field is false or 0.\n"
            "Exit: 0 answered, 1 unusable facts, 2 usage.\n");
}

int rt_cli_followup(int argc, char **argv, rt_config *cfg)
{
    (void)cfg;
    static const struct option options[] = {{"facts", required_argument, NULL, 'f'},
                                            {"help", no_argument, NULL, 'h'},
                                            {NULL, 0, NULL, 0}};
    const char *path = NULL;
    int c;
    while ((c = getopt_long(argc, argv, "f:h", options, NULL)) != -1) {
        switch (c) {
        case 'f': path = optarg; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (!path || optind < argc) {
        usage(stderr);
        return 2;
    }
    char errstr[RT_ERRSTR_SIZE] = "", *text = NULL;
    size_t len = 0;
    if (rt_file_read(path, MAX_FACTS_BYTES, &text, &len, errstr) != RT_OK) {
        rt_log_error("cannot read the facts", "error", errstr);
        return 1;
    }
    json_error_t error;
    json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &error);
    free(text);
    rt_followup_facts facts;
    if (!doc) {
        rt_log_error("the facts are not JSON", "file", path, "error", error.text);
        return 1;
    }
    if (rt_followup_facts_from_json(doc, &facts, errstr) != RT_OK) {
        rt_log_error("unusable facts", "file", path, "error", errstr);
        json_decref(doc);
        return 1;
    }
    rt_followup_outcome o;
    rt_followup_assess(&facts, &o);
    json_t *answer = json_pack("{s:s, s:s?, s:s}", "state", rt_followup_state_name(o.state),
                               "reason", o.reason, "detail", o.detail);
    char *out = answer ? json_dumps(answer, JSON_INDENT(2)) : NULL;
    int status = 1;
    if (out) {
        printf("%s\n", out);
        status = 0;
    }
    free(out);
    json_decref(answer);
    json_decref(doc);
    return status;
}
