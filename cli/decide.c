/* SPDX-License-Identifier: MPL-2.0 */
/* decide.c - `retrig decide`: retrig-decide's verdict replayed from bug_suggestions files,
 * so a sheriff can see which failure lines the retriggers reproduced. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/core/bugsug.h"
#include "common/core/verdict.h"

static void decide_usage(FILE *out)
{
    fprintf(out,
            "usage: retrig decide --original BUGSUG.json [--retrigger BUGSUG.json]...\n"
            "                     [--passed N] [--threshold N]\n"
            "Replays retrig-decide's verdict. Each file is one failed run's Treeherder\n"
            "bug_suggestions response (GET /api/project/<repo>/jobs/<id>/bug_suggestions/):\n"
            "--original for the failure, --retrigger for each retrigger that failed; --passed\n"
            "counts retriggers that passed. A failure line (TEST-UNEXPECTED-* or PROCESS-CRASH)\n"
            "of the original reproduced by at least --threshold retriggers (default:\n"
            "decide_threshold) is a regression; when only lines tracked by an open single\n"
            "tracking bug reproduce, its reason is reproduced-known-intermittent. Prints\n"
            "{\"verdict\", \"reason\", \"lines\": [{\"line\", \"reproduced\"}], \"tracked\":\n"
            "[{\"line\", \"bug\"}]}.\n"
            "Exit: 0 a verdict was printed, 1 a file could not be read or parsed, 2 usage.\n");
}

static int parse_count(const char *text, long max, long *value)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < 0 || v > max) return -1;
    *value = v;
    return 0;
}

static int load(const char *path, const rt_bugsug_options *opts, rt_bugsug *bs)
{
    char errstr[RT_ERRSTR_SIZE] = "";
    size_t len = 0;
    char *text =
        rt__cli_read_file(path, (size_t)RT_BUGSUG_MAX_BYTES, &len, "the bug_suggestions file");
    if (!text) return 1;
    int rc = rt_bugsug_parse(text, len, opts, bs, errstr);
    free(text);
    if (rc != RT_OK) {
        rt_log_error("invalid bug_suggestions file", "file", path, "error", rt_strerror(rc),
                     "reason", errstr);
        return 1;
    }
    return 0;
}

/* Appends value (stolen) to array; false when value is NULL or the append failed. */
static bool append(json_t *array, json_t *value)
{
    return value && json_array_append_new(array, value) == 0;
}

/* Long because it is one case per option with its check, then a linear sequence (load the
 * files, build the runs and the tracked lines, decide, print the verdict as JSON) that shares
 * cleanup through goto out. */
int rt_cli_decide(int argc, char **argv, rt_config *cfg)
{
    static const struct option options[] = {
        {"original", required_argument, NULL, 'o'}, {"retrigger", required_argument, NULL, 'r'},
        {"passed", required_argument, NULL, 'p'},   {"threshold", required_argument, NULL, 't'},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0},
    };
    const char *original_path = NULL;
    const char *retrigger_paths[RT_VERDICT_MAX_RUNS];
    size_t nretriggers = 0;
    long passed = 0, threshold = cfg->decide_threshold;
    rt_bugsug_options opts = {0};
    int c;
    while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        switch (c) {
        case 'o': original_path = optarg; break;
        case 'r':
            if (nretriggers == RT_VERDICT_MAX_RUNS) {
                fprintf(stderr, "retrig decide: at most %d retriggers\n", RT_VERDICT_MAX_RUNS);
                return 2;
            }
            retrigger_paths[nretriggers++] = optarg;
            break;
        case 'p':
            if (parse_count(optarg, RT_VERDICT_MAX_RUNS, &passed) != 0) {
                fprintf(stderr, "retrig decide: --passed wants a count 0..%d, not '%s'\n",
                        RT_VERDICT_MAX_RUNS, optarg);
                return 2;
            }
            break;
        case 't':
            if (parse_count(optarg, RT_VERDICT_MAX_RUNS, &threshold) != 0 || threshold < 1) {
                fprintf(stderr, "retrig decide: --threshold wants a count 1..%d, not '%s'\n",
                        RT_VERDICT_MAX_RUNS, optarg);
                return 2;
            }
            break;
        case 'h': decide_usage(stdout); return 0;
        default: decide_usage(stderr); return 2;
        }
    }
    if (!original_path || optind < argc) {
        if (optind < argc)
            fprintf(stderr, "retrig decide: unexpected argument '%s'\n", argv[optind]);
        decide_usage(stderr);
        return 2;
    }
    if (nretriggers + (size_t)passed > RT_VERDICT_MAX_RUNS) {
        fprintf(stderr, "retrig decide: at most %d retriggers in all\n", RT_VERDICT_MAX_RUNS);
        return 2;
    }

    int status = 1;
    rt_bugsug original = {0};
    rt_bugsug retriggers[RT_VERDICT_MAX_RUNS];
    rt_verdict_run runs[RT_VERDICT_MAX_RUNS];
    size_t loaded = 0;
    json_t *out = NULL;
    memset(retriggers, 0, sizeof retriggers);
    if (load(original_path, &opts, &original) != 0) goto out;
    for (; loaded < nretriggers; loaded++)
        if (load(retrigger_paths[loaded], &opts, &retriggers[loaded]) != 0) goto out;
    size_t nruns = 0;
    for (size_t i = 0; i < nretriggers; i++)
        runs[nruns++] = (rt_verdict_run){
            .state = RT_RUN_FAILED, .lines = retriggers[i].lines, .nlines = retriggers[i].nlines};
    for (long i = 0; i < passed; i++) runs[nruns++] = (rt_verdict_run){.state = RT_RUN_PASSED};

    bool tracked_line[RT_VERDICT_MAX_LINES] = {false};
    for (size_t i = 0; i < original.nlines && i < RT_VERDICT_MAX_LINES; i++)
        tracked_line[i] = rt_bugsug_tracking_bug(&original, &original.lines[i]) != 0;
    rt_verdict_input in = {.original = original.lines,
                           .noriginal = original.nlines,
                           .original_tracked = tracked_line,
                           .runs = runs,
                           .nruns = nruns,
                           .threshold = (int)threshold};
    rt_verdict_result result;
    if (rt_verdict_decide(&in, &result) != RT_OK) {
        rt_log_error("cannot decide", "reason", result.reason);
        goto out;
    }
    json_t *lines = json_array(), *tracked = json_array();
    bool whole = lines && tracked; /* a line JSON cannot hold is an error, never left out */
    for (size_t i = 0; whole && i < original.nlines; i++)
        whole = append(lines, json_pack("{s:s, s:I}", "line", original.lines[i].signature,
                                        "reproduced", (json_int_t)result.reproduced[i]));
    for (size_t i = 0; whole && i < original.ntracked; i++)
        whole = append(tracked, json_pack("{s:s, s:I}", "line", original.tracked[i].line.signature,
                                          "bug", (json_int_t)original.tracked[i].bug_id));
    if (whole)
        out = json_pack("{s:s, s:s, s:o, s:o}", "verdict", rt_verdict_name(result.verdict),
                        "reason", result.reason, "lines", lines, "tracked", tracked);
    else {
        json_decref(lines);
        json_decref(tracked);
    }
    char *text = out ? json_dumps(out, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
    if (!text) {
        rt_log_error("cannot format the verdict");
        goto out;
    }
    puts(text);
    free(text);
    status = 0;
out:
    json_decref(out);
    rt_bugsug_free(&original);
    for (size_t i = 0; i < loaded; i++) rt_bugsug_free(&retriggers[i]);
    return status;
}
