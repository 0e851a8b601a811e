/* SPDX-License-Identifier: MPL-2.0 */
/* perf_pick.c - `retrig perf-pick`: the alerts retrig-perf would backfill from a file of
 * Perfherder alert summaries, with the reasons, offline (common/core/perf_pick.h). */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "common/core/perf_pick.h"
#include "common/policy.h"

#define MAX_FILE_BYTES (256L * 1024 * 1024)

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: retrig perf-pick --summaries FILE [--now ISO-8601] [--used FAMILY=N]...\n"
        "                        [--max-per-summary N] [--include-improvements] [--explain]\n"
        "Prints the alerts retrig-perf would backfill, in order, as a JSON array of\n"
        "{summary_id, alert_id, platform, family, amount_pct, is_regression, round,\n"
        "closes_summary, reason}. FILE is a list of alert summaries or a page of\n"
        "/api/performance/alertsummary/ ({\"results\": [...]}). --now is the time of the run\n"
        "(default: now), --used the jobs a family's budget already spent today; the other\n"
        "rules come from the perf_* configuration keys. --explain prints\n"
        "{\"picked\": [...], \"skipped\": [{summary_id, alert_id, reason}], \"closed\": [ids]}.\n");
}

static int set_used(rt_perf_options *o, const char *item)
{
    const char *eq = strchr(item, '=');
    if (!eq) return RT_EINVAL;
    char *end = NULL;
    long v = strtol(eq + 1, &end, 10);
    if (end == eq + 1 || *end || v < 0 || v > 1000000) return RT_EINVAL;
    for (size_t f = 0; f <= o->nfamilies; f++) {
        const char *name = rt_perf_family_name(o, f);
        if (strlen(name) == (size_t)(eq - item) && !strncmp(name, item, (size_t)(eq - item))) {
            o->used[f] = (int)v;
            return RT_OK;
        }
    }
    return RT_ENOTFOUND;
}

static json_t *pick_json(const rt_perf_options *o, const rt_perf_pick *p)
{
    return json_pack("{s:I, s:I, s:s, s:s, s:f, s:b, s:i, s:b, s:s}", "summary_id",
                     (json_int_t)p->summary->id, "alert_id", (json_int_t)p->alert->id, "platform",
                     p->alert->platform, "family", rt_perf_family_name(o, p->family), "amount_pct",
                     p->alert->amount_pct, "is_regression", p->alert->is_regression, "round",
                     p->round, "closes_summary", p->closes_summary, "reason", p->reason);
}

/* Long because it is one case per option with its check, then under --explain one JSON array
 * built per part of the result (covered, left out, skipped, closed), sharing cleanup through
 * goto out. */
int rt_cli_perf_pick(int argc, char **argv, rt_config *cfg)
{
    static const struct option options[] = {
        {"summaries", required_argument, NULL, 's'},
        {"now", required_argument, NULL, 'n'},
        {"used", required_argument, NULL, 'u'},
        {"max-per-summary", required_argument, NULL, 'm'},
        {"include-improvements", no_argument, NULL, 'i'},
        {"explain", no_argument, NULL, 'e'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    char errstr[RT_ERRSTR_SIZE] = "";
    rt_perf_options o;
    if (rt_perf_options_from_config(&o, cfg, errstr) != RT_OK) {
        rt_log_error("configuration error", "error", errstr);
        return 2;
    }
    const char *path = NULL;
    time_t now = time(NULL);
    bool explain = false;
    int c;
    while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        switch (c) {
        case 's': path = optarg; break;
        case 'n':
            if (rt_perf_parse_time(optarg, &now) != RT_OK) {
                rt_log_error("--now is not an ISO-8601 UTC time (2023-06-24T12:00:00Z)", "now",
                             optarg);
                return 2;
            }
            break;
        case 'u':
            if (set_used(&o, optarg) != RT_OK) {
                rt_log_error("--used is FAMILY=JOBS with a configured family (or other)", "used",
                             optarg);
                return 2;
            }
            break;
        case 'm':
            o.max_per_summary = atoi(optarg);
            if (o.max_per_summary < 1 || o.max_per_summary > 100) {
                rt_log_error("--max-per-summary is from 1 to 100", "value", optarg);
                return 2;
            }
            break;
        case 'i': o.include_improvements = true; break;
        case 'e': explain = true; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (!path || optind < argc) {
        usage(stderr);
        return 2;
    }
    int status = 1;
    size_t len = 0;
    char *text = rt__cli_read_file(path, (size_t)MAX_FILE_BYTES, &len, "the alert summaries");
    rt_perf_summaries summaries = {0};
    rt_perf_result result = {0};
    json_t *picked = json_array(), *doc = NULL;
    if (!text) goto out;
    if (rt_perf_summaries_parse(text, len, &summaries, NULL, errstr) != RT_OK) {
        rt_log_error("unusable alert summaries", "file", path, "error", errstr);
        goto out;
    }
    if (rt_perf_pick_alerts(&summaries, &o, NULL, now, &result) != RT_OK || !picked) goto out;
    for (size_t i = 0; i < result.npicks; i++)
        json_array_append_new(picked, pick_json(&o, &result.picks[i]));
    /* What the file held that could not be used is said whatever the mode. */
    for (size_t i = 0; i < summaries.nproblems; i++) {
        char sid[32], aid[32];
        snprintf(sid, sizeof sid, "%lld", summaries.problems[i].summary_id);
        snprintf(aid, sizeof aid, "%lld", summaries.problems[i].alert_id);
        rt_log_warn(summaries.problems[i].alert_id ? "malformed alert left out"
                                                   : "malformed alert summary left out",
                    "summary_id", sid, "alert_id", summaries.problems[i].alert_id ? aid : NULL,
                    "reason", summaries.problems[i].reason);
    }
    if (explain) {
        json_t *skipped = json_array(), *closed = json_array(), *covered = json_array(),
               *left_out = json_array();
        for (size_t i = 0; i < result.ncovered; i++) {
            const rt_perf_cover *cv = &result.covered[i];
            json_array_append_new(
                covered,
                json_pack("{s:I, s:I, s:o, s:s}", "summary_id", (json_int_t)cv->summary->id,
                          "alert_id", (json_int_t)cv->alert->id, "by_alert_id",
                          cv->by_alert_id ? json_integer(cv->by_alert_id) : json_null(), "reason",
                          cv->reason));
        }
        for (size_t i = 0; i < summaries.nproblems; i++) {
            const rt_perf_problem *p = &summaries.problems[i];
            json_array_append_new(
                left_out,
                json_pack("{s:o, s:o, s:s}", "summary_id",
                          p->summary_id ? json_integer(p->summary_id) : json_null(), "alert_id",
                          p->alert_id ? json_integer(p->alert_id) : json_null(), "reason",
                          p->reason));
        }
        for (size_t i = 0; i < result.nskips; i++) {
            const rt_perf_skip *k = &result.skips[i];
            json_array_append_new(
                skipped, json_pack("{s:I, s:o, s:s}", "summary_id", (json_int_t)k->summary->id,
                                   "alert_id", k->alert ? json_integer(k->alert->id) : json_null(),
                                   "reason", k->reason));
        }
        for (size_t i = 0; i < result.nclosed; i++)
            json_array_append_new(closed, json_integer(result.closed[i]->id));
        for (size_t i = 0; i < result.npicks; i++)
            if (result.picks[i].closes_summary)
                json_array_append_new(closed, json_integer(result.picks[i].summary->id));
        doc = json_pack("{s:O, s:o, s:o, s:o, s:o}", "picked", picked, "covered", covered,
                        "skipped", skipped, "closed", closed, "left_out", left_out);
    } else {
        doc = json_incref(picked);
    }
    char *out =
        doc ? json_dumps(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(12) | JSON_ENSURE_ASCII) : NULL;
    if (out) {
        printf("%s\n", out);
        free(out);
        status = 0;
    }
out:
    json_decref(doc);
    json_decref(picked);
    rt_perf_result_free(&result);
    rt_perf_summaries_free(&summaries);
    free(text);
    return status;
}
