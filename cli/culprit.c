/* SPDX-License-Identifier: MPL-2.0 */
/* culprit.c - `retrig culprit`: the next step of a culprit search over a window of pushes
 * (common/culprit.h), offline, or a simulation of many searches with known truth
 * (common/culprit_sim.h). */
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/core/culprit.h"
#include "common/core/culprit_adaptive.h"
#include "common/core/culprit_sim.h"
#include "common/core/culprit_window.h"
#include "common/core/decide_policy.h"
#include "common/policy.h"

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: retrig culprit --pushes FILE [--history-runs N --history-failures K]\n"
        "                      [--reproduction-rate R] [--confidence C] [--threshold N]\n"
        "                      [--max-jobs N] [--jobs-spent N] [--project P] [--policy P]\n"
        "       retrig culprit --simulate N [--seed S] [--confidence C] [--threshold N]\n"
        "                      [--max-jobs N] [--policy P] [--trust-first]\n"
        "The next step of a search for the push that caused a regression, by bisecting the\n"
        "pushes where the failing label did not run (Gecko's add-new-jobs action).\n"
        "FILE is a JSON array, oldest first, of {\"revision\", \"runs\", \"reproduced\"} (and\n"
        "optionally \"pending\"): the known-good push first, the failing push last, runs 0\n"
        "where the label did not run. Prints {\"status\", \"culprit\", \"probe\": {\"revision\",\n"
        "\"times\"} or null, \"confirm\" (the first push, probed in the same round) or null,\n"
        "\"range\": [first, last], \"range_includes_earlier\", \"reason\",\n"
        "\"times\", \"reproductions\", \"reproduction_rate\", \"push_confidence\",\n"
        "\"jobs_left\", \"policy\"}: times is a fresh probe's runs, reproductions the seed\n"
        "rule's k (null under adaptive; common/core/culprit.h, culprit_adaptive.h).\n"
        "Status is searching, found, culprit-before-window or stopped.\n"
        "  --history-runs N, --history-failures K  the test's runs and failures on other\n"
        "                       pushes (default 0: unknown)\n"
        "  --reproduction-rate R  share of the failing push's runs reproducing the line\n"
        "                       (default: max(reproduced - 1, 0.5) / runs of the failing push)\n"
        "  --confidence C       default: culprit_confidence\n"
        "  --threshold N        reproductions that call a regression (default: decide_threshold)\n"
        "  --max-jobs N         the search's budget (default: culprit_max_jobs)\n"
        "  --jobs-spent N       jobs already spent (default: runs and pending runs of every push\n"
        "                       between the first and the failing push)\n"
        "  --project P          stop at once (project-not-searched) unless P matches\n"
        "                       culprit_projects\n"
        "  --policy P           how a probed push is classified: seed (the seed rule) or\n"
        "                       adaptive (the adaptive verdict's model, with its decide_*\n"
        "                       settings); default: decide_policy\n"
        "  --simulate N         run N searches with known truth and print the table\n"
        "                       (windows of 1 to culprit_max_depth skipped pushes)\n"
        "  --seed S             the simulation's seed (default 1)\n"
        "  --trust-first        simulate taking the first push's single pass as known good\n"
        "                       (with --policy seed)\n"
        "Exit: 0 printed, 1 the file could not be read or is not a valid window, 2 usage.\n");
}

static bool project_searched(const rt_config *cfg, const char *project)
{
    for (size_t i = 0; i < cfg->culprit_projects.count; i++)
        if (fnmatch(cfg->culprit_projects.items[i], project, 0) == 0) return true;
    return false;
}

static int print_json(json_t *doc)
{
    char *text =
        doc ? json_dumps(doc, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(6)) : NULL;
    json_decref(doc);
    if (!text) {
        rt_log_error("cannot format the answer");
        return 1;
    }
    puts(text);
    free(text);
    return 0;
}

static int simulate(long cases, uint64_t seed, const rt_culprit_model *model, long max_jobs,
                    const rt_config *cfg, rt_policy policy, bool trust_first)
{
    rt_culprit_adaptive adaptive;
    rt_culprit_classify_fn classify =
        trust_first ? rt_culprit_sim_trust_first : rt_culprit_classifier(policy, cfg, &adaptive);
    if (!classify) {
        rt_log_error("the decide_* settings are out of range");
        return 2;
    }
    rt_culprit_sim_options o = {.cases = cases,
                                .seed = seed,
                                .confidence = model->confidence,
                                .threshold = model->threshold,
                                .max_jobs = max_jobs,
                                .max_skipped = cfg->culprit_max_depth,
                                .classify = classify,
                                .classify_ctx = &adaptive};
    rt_culprit_sim_report report;
    if (rt_culprit_sim_run(&o, &report) != RT_OK) {
        rt_log_error("the simulation's options are out of range");
        return 2;
    }
    size_t size = rt_culprit_sim_format(&report, NULL, 0) + 1;
    char *table = malloc(size);
    if (!table) return 1;
    rt_culprit_sim_format(&report, table, size);
    const rt_culprit_sim_row *t = &report.total;
    printf("culprit simulation: %ld cases, seed %llu, policy %s, confidence %g, threshold %d, "
           "budget %ld jobs, 1-%d skipped pushes%s\n\n%s\n",
           cases, (unsigned long long)seed, rt_policy_name(policy), model->confidence,
           model->threshold, max_jobs, cfg->culprit_max_depth,
           trust_first ? ", first push trusted" : "", table);
    printf("correct %.1f%% (target >= 95%%), rounds within ceil(log2(C+1)) %.1f%%, jobs %.2f of "
           "a linear backfill (target <= 0.40)\n",
           100.0 * (double)t->correct / (double)t->cases,
           100.0 * (double)t->within_bound / (double)t->cases,
           t->linear_jobs ? (double)t->jobs / (double)t->linear_jobs : 0.0);
    free(table);
    return 0;
}

/* What the command line asks for. */
typedef struct options {
    const char *path, *project;
    long history_runs, history_failures, threshold, max_jobs, jobs_spent, cases, seed;
    double rate, confidence;
    bool trust_first, seed_given;
    rt_policy policy;
} options;

/* One option into o: -1 when taken, else the exit status (0: --help, 2: a usage error). */
static int take_option(int c, options *o)
{
    const char *bad = NULL;
    switch (c) {
    case 'p': o->path = optarg; break;
    case 'H':
        if (rt__cli_parse_long(optarg, 0, 100000000, &o->history_runs))
            bad = "--history-runs wants 0..1e8";
        break;
    case 'F':
        if (rt__cli_parse_long(optarg, 0, 100000000, &o->history_failures))
            bad = "--history-failures wants 0..1e8";
        break;
    case 'r':
        if (rt__cli_parse_double(optarg, 0.001, 1.0, &o->rate))
            bad = "--reproduction-rate wants a number from 0.001 to 1";
        break;
    case 'c':
        if (rt__cli_parse_double(optarg, 0.5, 0.999, &o->confidence))
            bad = "--confidence wants a number from 0.5 to 0.999";
        break;
    case 't':
        if (rt__cli_parse_long(optarg, 1, 20, &o->threshold)) bad = "--threshold wants 1..20";
        break;
    case 'j':
        if (rt__cli_parse_long(optarg, 0, RT_CULPRIT_MAX_JOBS, &o->max_jobs))
            bad = "--max-jobs wants 0..100000";
        break;
    case 's':
        if (rt__cli_parse_long(optarg, 0, RT_CULPRIT_MAX_JOBS, &o->jobs_spent))
            bad = "--jobs-spent wants 0..100000";
        break;
    case 'P': o->project = optarg; break;
    case 'S':
        if (rt__cli_parse_long(optarg, 1, RT_CULPRIT_SIM_MAX_CASES, &o->cases))
            bad = "--simulate wants a number of cases from 1 to 10000000";
        break;
    case 'e':
        if (rt__cli_parse_long(optarg, 0, 2147483647L, &o->seed))
            bad = "--seed wants 0..2147483647";
        o->seed_given = true;
        break;
    case 'T': o->trust_first = true; break;
    case 'o':
        if (rt_policy_parse(optarg, &o->policy) != RT_OK || o->policy == RT_POLICY_MOZCI)
            bad = "--policy wants seed or adaptive";
        break;
    case 'h': usage(stdout); return 0;
    default: usage(stderr); return 2;
    }
    if (!bad) return -1;
    fprintf(stderr, "retrig culprit: %s, not '%s'\n", bad, optarg);
    return 2;
}

/* The options, defaults from the configuration: -1 when the command is to run, else its
 * exit status. */
static int parse_options(int argc, char **argv, const rt_config *cfg, options *o)
{
    static const struct option longopts[] = {
        {"pushes", required_argument, NULL, 'p'},
        {"history-runs", required_argument, NULL, 'H'},
        {"history-failures", required_argument, NULL, 'F'},
        {"reproduction-rate", required_argument, NULL, 'r'},
        {"confidence", required_argument, NULL, 'c'},
        {"threshold", required_argument, NULL, 't'},
        {"max-jobs", required_argument, NULL, 'j'},
        {"jobs-spent", required_argument, NULL, 's'},
        {"project", required_argument, NULL, 'P'},
        {"simulate", required_argument, NULL, 'S'},
        {"seed", required_argument, NULL, 'e'},
        {"trust-first", no_argument, NULL, 'T'},
        {"policy", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    *o = (options){.threshold = cfg->decide_threshold,
                   .max_jobs = cfg->culprit_max_jobs,
                   .jobs_spent = -1,
                   .seed = 1,
                   .rate = -1,
                   .confidence = cfg->culprit_confidence,
                   .policy = rt_decide_policy_from_config(cfg)};
    int c, status;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1)
        if ((status = take_option(c, o)) >= 0) return status;
    if (optind < argc) {
        fprintf(stderr, "retrig culprit: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    if (!o->path == !o->cases) {
        fprintf(stderr, "retrig culprit: give either --pushes FILE or --simulate N\n");
        usage(stderr);
        return 2;
    }
    if (o->trust_first && o->policy != RT_POLICY_SEED) {
        fprintf(stderr, "retrig culprit: --trust-first goes with --policy seed\n");
        return 2;
    }
    if (o->path && (o->seed_given || o->trust_first)) {
        fprintf(stderr, "retrig culprit: --seed and --trust-first go with --simulate\n");
        return 2;
    }
    if (o->history_failures > o->history_runs) {
        fprintf(stderr, "retrig culprit: --history-failures (%ld) exceeds --history-runs (%ld)\n",
                o->history_failures, o->history_runs);
        return 2;
    }
    return -1;
}

/* --pushes FILE: the next step of the search over that window, printed as JSON. */
static int window_step(const options *o, const rt_config *cfg, rt_culprit_model model)
{
    const char *path = o->path, *project = o->project;
    long max_jobs = o->max_jobs, jobs_spent = o->jobs_spent;
    double rate = o->rate;
    rt_policy policy = o->policy;
    int status = 1;
    size_t len = 0;
    char *text =
        rt__cli_read_file(path, (size_t)RT_CULPRIT_WINDOW_MAX_BYTES, &len, "the pushes file");
    if (!text) return 1;
    rt_culprit_window *w = malloc(sizeof *w);
    char errstr[RT_ERRSTR_SIZE] = "";
    int rc = w ? rt_culprit_window_parse(text, len, w, errstr) : RT_ENOMEM;
    free(text);
    if (rc != RT_OK) {
        rt_log_error("invalid pushes file", "file", path, "error", rt_strerror(rc), "reason",
                     errstr);
        free(w);
        return 1;
    }
    size_t skipped = w->count - 2;
    if (skipped > (size_t)cfg->culprit_max_depth) {
        snprintf(errstr, sizeof errstr,
                 "%zu pushes between the first and the failing push: "
                 "culprit_max_depth is %d",
                 skipped, cfg->culprit_max_depth);
        rt_log_error("invalid pushes file", "file", path, "reason", errstr);
        goto out;
    }
    const rt_culprit_push *failing = &w->pushes[w->count - 1];
    model.reproduction_rate =
        rate > 0 ? rate : rt_culprit_reproduction_rate(failing->runs, failing->reproduced);
    if (rate <= 0) {
        model.failing_runs = failing->runs;
        model.failing_reproduced = failing->reproduced;
    }
    if (jobs_spent < 0) {
        jobs_spent = 0;
        for (size_t i = 1; i + 1 < w->count; i++)
            jobs_spent += w->pushes[i].runs + w->pushes[i].pending;
    }
    rt_culprit_model push_model = model; /* what a probe's times come from */
    push_model.confidence = rt_culprit_push_confidence(model.confidence, w->count);
    rt_culprit_plan plan;
    rt_culprit_adaptive adaptive;
    rt_culprit_classify_fn classify = rt_culprit_classifier(policy, cfg, &adaptive);
    if (!classify || rt_culprit_seed_plan(&push_model, &plan) != RT_OK) {
        rt_log_error("the model or the decide_* settings are out of range");
        goto out;
    }
    rt_culprit_evidence fresh = {0, 0, false};
    int times = classify(&fresh, &push_model, &adaptive).more;
    rt_culprit_input in = {.pushes = w->pushes,
                           .npushes = w->count,
                           .model = model,
                           .jobs_left = max_jobs > jobs_spent ? max_jobs - jobs_spent : 0,
                           .classify = classify,
                           .classify_ctx = &adaptive};
    rt_culprit_result res;
    if (rt_culprit_next(&in, &res) != RT_OK) {
        rt_log_error("cannot search", "reason", res.reason);
        goto out;
    }
    if (project && !project_searched(cfg, project)) {
        res = (rt_culprit_result){.status = RT_CULPRIT_STOPPED,
                                  .culprit = -1,
                                  .probe = -1,
                                  .confirm = -1,
                                  .first = res.first,
                                  .last = res.last};
        snprintf(res.reason, sizeof res.reason, "project-not-searched");
    }
    json_t *probe = res.probe >= 0 ? json_pack("{s:s, s:i}", "revision", w->revisions[res.probe],
                                               "times", res.times)
                                   : json_null();
    json_t *confirm = res.confirm >= 0
                          ? json_pack("{s:s, s:i}", "revision", w->revisions[res.confirm], "times",
                                      res.confirm_times)
                          : json_null();
    json_t *culprit =
        res.status == RT_CULPRIT_FOUND ? json_string(w->revisions[res.culprit]) : json_null();
    json_t *range = json_pack("[s, s]", w->revisions[res.first], w->revisions[res.last]);
    json_t *reproductions =
        policy == RT_POLICY_ADAPTIVE ? json_null() : json_integer(plan.reproductions);
    status = print_json(
        json_pack("{s:s, s:o, s:o, s:o, s:o, s:b, s:s, s:i, s:o, s:f, s:f, s:I, s:s}", "status",
                  rt_culprit_status_name(res.status), "culprit", culprit, "probe", probe, "confirm",
                  confirm, "range", range, "range_includes_earlier", res.first == 0, "reason",
                  res.reason, "times", times, "reproductions", reproductions, "reproduction_rate",
                  model.reproduction_rate, "push_confidence", push_model.confidence, "jobs_left",
                  (json_int_t)in.jobs_left, "policy", rt_policy_name(policy)));
out:
    free(w);
    return status;
}

int rt_cli_culprit(int argc, char **argv, rt_config *cfg)
{
    options o;
    int status = parse_options(argc, argv, cfg, &o);
    if (status >= 0) return status;
    rt_culprit_model model = {.confidence = o.confidence,
                              .threshold = (int)o.threshold,
                              .reproduction_rate = 1.0,
                              .history_runs = o.history_runs,
                              .history_failures = o.history_failures};
    if (o.cases)
        return simulate(o.cases, (uint64_t)o.seed, &model, o.max_jobs, cfg, o.policy,
                        o.trust_first);
    return window_step(&o, cfg, model);
}
