/* SPDX-License-Identifier: MPL-2.0 */
/* simulate.c - `retrig simulate`: the verdict policies (seed, adaptive, mozci, and pooled)
 * run offline over simulated failures with known truth, per task or per push (a failing
 * test on every configuration where it ran), batch by batch through the same pure
 * functions the worker calls (common/decide_sim.h); or such failures generated from a
 * documented mix. Reads and writes files only. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/core/decide_model.h"
#include "common/core/decide_policy.h"
#include "common/core/decide_sim.h"
#include "common/policy.h"

#define MAX_CASES      2000000
#define MAX_LINE_BYTES 65536

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: retrig simulate --cases FILE.jsonl [--policy seed|adaptive|mozci|pooled]...\n"
        "                       [--format table|json] [--confidence C]\n"
        "                       [--prior-regression P] [--max-retriggers N]\n"
        "                       [--population fit|default|A,B]\n"
        "       retrig simulate --generate N --seed S [--mix uniform|observed|push]\n"
        "                       [--regression-share P] [--out FILE]\n"
        "Runs verdict policies over simulated failures whose truth is known and prints,\n"
        "per policy: accuracy, regression recall, the share of intermittents called\n"
        "regression, retriggers and rounds (batches waited on) per failure. Each line of\n"
        "FILE is {\"truth\": \"regression\"|\"intermittent\", \"history\": {\"runs\": N,\n"
        "\"failures\": K}, \"outcomes\": [true, false, ...]}: outcome i is whether retrigger i\n"
        "reproduces the failure. A push-level line is one failing test on every\n"
        "configuration where it ran: {\"truth\", \"history\", \"configs\": [{\"name\",\n"
        "\"failed\": BOOL, \"outcomes\": [...]}, ...]} (failed: the push's own run); seed,\n"
        "adaptive and mozci then run per failing configuration (a regression when any\n"
        "says so, retriggers added up), pooled over the whole test; the table adds the\n"
        "share decided with no retrigger. pooled: one verdict per failing test from every\n"
        "configuration (common/core/decide_pool.h), on a per-task line the adaptive model.\n"
        "--policy defaults to decide_policy; --confidence,\n"
        "--prior-regression and --max-retriggers to decide_confidence,\n"
        "decide_prior_regression and decide_max_retriggers; seed and mozci ask for\n"
        "retriggers_per_failure retriggers, seed needs decide_threshold reproductions.\n"
        "--population: the flake-rate prior of a failing test, fitted from the file's\n"
        "histories (fit, the default), the model's default, or Beta(A, B).\n"
        "--generate writes N cases drawn with seed S (the same file for the same seed;\n"
        "mixes in common/decide_sim.h; push: push-level cases, docs/simulation.md) to\n"
        "--out or stdout; --regression-share defaults to 0.15.\n"
        "Exit: 0 done, 1 a file could not be read or written or is invalid, 2 usage.\n");
}

static int generate(long count, unsigned long long seed, rt_sim_mix mix, double share,
                    const char *out_path)
{
    FILE *out = out_path ? fopen(out_path, "w") : stdout;
    if (!out) {
        rt_log_error("cannot write the cases", "file", out_path, "error", strerror(errno));
        return 1;
    }
    rt_sim_rng rng;
    rt_sim_rng_seed(&rng, (uint64_t)seed);
    int status = 0;
    for (long i = 0; i < count && status == 0; i++) {
        json_t *doc;
        if (mix == RT_SIM_MIX_PUSH) {
            rt_sim_push_case c;
            rt_sim_generate_push(&rng, share, &c);
            doc = rt_sim_push_case_json(&c);
        } else {
            rt_sim_case c;
            rt_sim_generate(&rng, mix, share, &c);
            doc = rt_sim_case_json(&c);
        }
        char *text = doc ? json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(6)) : NULL;
        if (!text || fprintf(out, "%s\n", text) < 0) status = 1;
        free(text);
        json_decref(doc);
    }
    if (out != stdout ? fclose(out) != 0 : fflush(out) != 0) status = 1;
    if (status) rt_log_error("cannot write the cases", "file", out_path ? out_path : "stdout");
    return status;
}

/* The cases of a file: per task, or per push (push-level lines, with "configs"). */
typedef struct case_file {
    rt_sim_case *tasks;
    rt_sim_push_case *pushes;
    size_t count;
    bool push;
} case_file;

static void case_file_free(case_file *f)
{
    free(f->tasks);
    free(f->pushes);
}

/* Room for one more case of the file's level; false when out of memory. */
static bool grow(case_file *f, size_t *cap)
{
    if (f->count < *cap) return true;
    size_t grown = *cap ? *cap * 2 : 1024;
    void *bigger = f->push ? realloc(f->pushes, grown * sizeof *f->pushes)
                           : realloc(f->tasks, grown * sizeof *f->tasks);
    if (!bigger) return false;
    if (f->push)
        f->pushes = bigger;
    else
        f->tasks = bigger;
    *cap = grown;
    return true;
}

/* Reads every case of a JSON-lines file; blank lines are skipped. The first case sets the
 * file's level (per task or per push); every other must be of the same. */
static int load_cases(const char *path, case_file *out)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        rt_log_error("cannot read the cases", "file", path, "error", strerror(errno));
        return 1;
    }
    case_file cases = {0};
    size_t cap = 0, lineno = 0;
    char *line = NULL;
    size_t line_cap = 0;
    ssize_t len;
    int status = 1;
    while ((len = getline(&line, &line_cap, f)) >= 0) {
        lineno++;
        char where[64];
        snprintf(where, sizeof where, "%zu", lineno);
        if (strspn(line, " \t\r\n") == (size_t)len) continue;
        if (len > MAX_LINE_BYTES || cases.count == MAX_CASES) {
            rt_log_error(len > MAX_LINE_BYTES ? "case line too long" : "too many cases", "file",
                         path, "line", where);
            goto out;
        }
        json_error_t jerr;
        json_t *doc = json_loadb(line, (size_t)len, 0, &jerr);
        if (!doc) {
            rt_log_error("case is not JSON", "file", path, "line", where, "error", jerr.text);
            goto out;
        }
        bool push = json_object_get(doc, "configs") != NULL;
        if (cases.count == 0) cases.push = push;
        if (push != cases.push) {
            json_decref(doc);
            rt_log_error("invalid case", "file", path, "line", where, "reason",
                         push ? "a push-level case (\"configs\") in a file of per-task cases"
                              : "a per-task case in a file of push-level cases (\"configs\")");
            goto out;
        }
        if (!grow(&cases, &cap)) {
            json_decref(doc);
            rt_log_error("out of memory reading the cases", "file", path);
            goto out;
        }
        char errstr[RT_ERRSTR_SIZE] = "";
        int rc = push ? rt_sim_push_case_parse(doc, &cases.pushes[cases.count], errstr)
                      : rt_sim_case_parse(doc, &cases.tasks[cases.count], errstr);
        json_decref(doc);
        if (rc != RT_OK) {
            rt_log_error("invalid case", "file", path, "line", where, "reason", errstr);
            goto out;
        }
        cases.count++;
    }
    if (ferror(f)) {
        rt_log_error("cannot read the cases", "file", path);
        goto out;
    }
    if (cases.count == 0) {
        rt_log_error("no cases in the file", "file", path);
        goto out;
    }
    *out = cases;
    cases = (case_file){0};
    status = 0;
out:
    free(line);
    case_file_free(&cases);
    fclose(f);
    return status;
}

/* The history and truth of case i, whichever its level. */
static const rt_decide_history *case_history(const case_file *f, size_t i)
{
    return f->push ? &f->pushes[i].history : &f->tasks[i].history;
}

static bool case_regression(const case_file *f, size_t i)
{
    return f->push ? f->pushes[i].regression : f->tasks[i].regression;
}

static double share(size_t part, size_t whole) { return whole ? (double)part / (double)whole : 0; }

/* A policy's row; push-level rows add the share decided with no retrigger. */
static json_t *tally_json(int policy, const rt_sim_tally *t, bool push)
{
    json_t *shadow = json_object();
    for (size_t p = 0; shadow && p < RT_POLICY_COUNT; p++)
        if ((int)p != policy)
            json_object_set_new(shadow, rt_policy_name((rt_policy)p),
                                json_real(share(t->shadow_agree[p], t->cases)));
    json_t *row = json_pack(
        "{s:s, s:f, s:f, s:f, s:f, s:f, s:f, s:I, s:o}", "policy", rt_sim_policy_name(policy),
        "accuracy", share(t->correct, t->cases), "regression_recall",
        share(t->regressions_found, t->regressions), "intermittents_called_regression",
        share(t->intermittents_called_regression, t->intermittents), "retriggers_per_failure",
        share(t->retriggers, t->cases), "rounds_per_failure", share(t->rounds, t->cases),
        "low_confidence", share(t->low_confidence, t->cases), "undecided", (json_int_t)t->undecided,
        "shadow_agreement", shadow);
    if (row && push)
        json_object_set_new(row, "decided_without_retriggers",
                            json_real(share(t->without_retriggers, t->cases)));
    return row;
}

/* What the command line asks for. */
typedef struct options {
    const char *cases_path, *out_path, *population, *trace_path;
    int policies[RT_SIM_POLICY_COUNT]; /* rt_policy, or RT_SIM_POLICY_POOLED */
    size_t npolicies;
    bool json_format, seed_given;
    long generate_count;
    unsigned long long seed;
    rt_sim_mix mix;
    double regression_share;
    rt_decide_settings model; /* the decide_* settings, with the options' changes */
    rt_decide_beta fixed;     /* --population A,B; alpha 0: not given */
} options;

RT_PRINTF(1, 2) static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("retrig simulate: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return 2;
}

/* One option into o: -1 when taken, else the exit status (0: --help, 2: a usage error). */
static int take_option(int c, options *o)
{
    long n;
    switch (c) {
    case 'c': o->cases_path = optarg; return -1;
    case 'p': {
        int p;
        if (rt_sim_policy_parse(optarg, &p) != RT_OK)
            return usage_error("--policy is seed, adaptive or mozci, or pooled, not '%s'", optarg);
        bool seen = false;
        for (size_t i = 0; i < o->npolicies; i++) seen |= o->policies[i] == p;
        if (!seen) o->policies[o->npolicies++] = p;
        return -1;
    }
    case 'f': return rt__cli_format(optarg, &o->json_format) ? 2 : -1;
    case 'C':
        if (rt__cli_parse_double(optarg, 0.51, 0.999, &o->model.confidence) != 0)
            return usage_error("--confidence wants 0.51..0.999, not '%s'", optarg);
        return -1;
    case 'P':
        if (rt__cli_parse_double(optarg, 0.001, 0.999, &o->model.prior_regression) != 0)
            return usage_error("--prior-regression wants 0.001..0.999, not '%s'", optarg);
        return -1;
    case 'M':
        if (rt__cli_parse_long(optarg, 1, RT_DECIDE_MAX_RETRIGGERS, &n) != 0)
            return usage_error("--max-retriggers wants 1..%d, not '%s'", RT_DECIDE_MAX_RETRIGGERS,
                               optarg);
        o->model.max_retriggers = (int)n;
        return -1;
    case 'F': o->population = optarg; return -1;
    case 'g':
        if (rt__cli_parse_long(optarg, 1, MAX_CASES, &o->generate_count) != 0)
            return usage_error("--generate wants 1..%d cases, not '%s'", MAX_CASES, optarg);
        return -1;
    case 's': {
        char *end = NULL;
        errno = 0;
        o->seed = strtoull(optarg, &end, 10);
        if (errno || end == optarg || *end || optarg[0] == '-')
            return usage_error("--seed wants a number, not '%s'", optarg);
        o->seed_given = true;
        return -1;
    }
    case 'm':
        if (rt_sim_mix_parse(optarg, &o->mix) != RT_OK)
            return usage_error("--mix is uniform or observed (per task), or push, not '%s'",
                               optarg);
        return -1;
    case 'r':
        if (rt__cli_parse_double(optarg, 0, 1, &o->regression_share) != 0)
            return usage_error("--regression-share wants 0..1, not '%s'", optarg);
        return -1;
    case 'o': o->out_path = optarg; return -1;
    case 't': o->trace_path = optarg; return -1;
    case 'h': usage(stdout); return 0;
    default: usage(stderr); return 2;
    }
}

/* --population A,B into o->fixed (fit and default leave it unset). */
static int take_population(options *o)
{
    if (!strcmp(o->population, "fit") || !strcmp(o->population, "default")) return -1;
    char *end = NULL;
    o->fixed.alpha = strtod(o->population, &end);
    if (end && *end == ',') o->fixed.beta = strtod(end + 1, &end);
    if (!end || *end || !(o->fixed.alpha > 0) || !(o->fixed.beta > 0) ||
        !isfinite(o->fixed.alpha) || !isfinite(o->fixed.beta))
        return usage_error("--population is fit, default or A,B, not '%s'", o->population);
    o->model.flake_failing = o->fixed;
    if (rt_decide_settings_check(&o->model) != RT_OK) {
        fprintf(stderr,
                "retrig simulate: --population %s: B must exceed the regression prior's betas "
                "(%g)\n",
                o->population, o->model.partial.beta);
        return 2;
    }
    return -1;
}

/* The options: -1 when the command is to run, else its exit status. */
static int parse_options(int argc, char **argv, const rt_config *cfg, options *o)
{
    static const struct option longopts[] = {
        {"cases", required_argument, NULL, 'c'},
        {"policy", required_argument, NULL, 'p'},
        {"format", required_argument, NULL, 'f'},
        {"confidence", required_argument, NULL, 'C'},
        {"prior-regression", required_argument, NULL, 'P'},
        {"max-retriggers", required_argument, NULL, 'M'},
        {"population", required_argument, NULL, 'F'},
        {"generate", required_argument, NULL, 'g'},
        {"seed", required_argument, NULL, 's'},
        {"mix", required_argument, NULL, 'm'},
        {"regression-share", required_argument, NULL, 'r'},
        {"out", required_argument, NULL, 'o'},
        {"trace", required_argument, NULL, 't'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    *o = (options){.population = "fit", .generate_count = -1, .regression_share = 0.15};
    rt_decide_settings_from_config(cfg, &o->model);
    int c, status;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1)
        if ((status = take_option(c, o)) >= 0) return status;
    if (optind < argc) {
        fprintf(stderr, "retrig simulate: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    if ((o->generate_count > 0) == (o->cases_path != NULL)) {
        fprintf(stderr, "retrig simulate: give either --cases or --generate\n");
        usage(stderr);
        return 2;
    }
    if (o->generate_count > 0 && !o->seed_given) {
        fprintf(stderr, "retrig simulate: --generate needs --seed\n");
        return 2;
    }
    if (o->generate_count <= 0 && (status = take_population(o)) >= 0) return status;
    if (o->npolicies == 0) o->policies[o->npolicies++] = (int)rt_decide_policy_from_config(cfg);
    return -1;
}

/* --population fit: the flake rate of a failing test fitted from the cases' histories, when
 * the model can use the fit. Returns where the population came from. */
static const char *fit_population(options *o, const case_file *cases, size_t ncases)
{
    if (strcmp(o->population, "fit")) return o->fixed.alpha > 0 ? "given" : "default";
    rt_decide_counts *counts = malloc((ncases ? ncases : 1) * sizeof *counts);
    if (!counts) return "default";
    for (size_t i = 0; i < ncases; i++)
        counts[i] =
            (rt_decide_counts){case_history(cases, i)->runs, case_history(cases, i)->failures};
    const char *source = "default";
    rt_decide_beta fitted;
    rt_decide_settings tried = o->model;
    /* A fit the model cannot use (too few histories, or a Beta too wide to keep the
     * likelihood ratio monotone) leaves the default. */
    if (rt_decide_fit_population(counts, ncases, &fitted) == RT_OK) {
        tried.flake_failing = fitted;
        source = "default: fit not usable";
        if (rt_decide_settings_check(&tried) == RT_OK) {
            o->model = tried;
            source = "fitted";
        }
    }
    free(counts);
    return source;
}

/* One case under one policy: per-task cases through rt_sim_run (pooled: as a push of one
 * configuration), push-level cases through rt_sim_run_push. */
static int run_case(rt_sim *sim, int policy, const case_file *cases, size_t i,
                    rt_sim_push_result *out)
{
    memset(out, 0, sizeof *out);
    if (cases->push) return rt_sim_run_push(sim, policy, &cases->pushes[i], out);
    if (policy != RT_SIM_POLICY_POOLED)
        return rt_sim_run(sim, (rt_policy)policy, &cases->tasks[i], &out->result);
    rt_sim_push_case one;
    rt_sim_push_from_case(&cases->tasks[i], &one);
    return rt_sim_run_push(sim, policy, &one, out);
}

/* A push-level case's trace fields: its configurations and the retriggers of each. */
static void trace_push(FILE *trace, const rt_sim_push_case *c, const rt_sim_push_result *r)
{
    size_t failing = 0;
    for (size_t j = 0; j < c->nconfigs; j++) failing += c->configs[j].failed;
    fprintf(trace, ",\"configs\":%zu,\"failing\":%zu,\"retriggers_by_config\":{", c->nconfigs,
            failing);
    bool first = true;
    for (size_t j = 0; j < c->nconfigs; j++) {
        if (!r->config_retriggers[j]) continue;
        json_t *name = json_string(c->configs[j].name);
        char *text = name ? json_dumps(name, JSON_ENCODE_ANY) : NULL;
        fprintf(trace, "%s%s:%zu", first ? "" : ",", text ? text : "\"?\"",
                r->config_retriggers[j]);
        first = false;
        free(text);
        json_decref(name);
    }
    fputc('}', trace);
}

/* Every policy over every case, a row each in rows; each case's outcome in trace when open. */
static int run_policies(const options *o, rt_sim *sim, const case_file *cases, json_t *rows,
                        FILE *trace)
{
    for (size_t k = 0; k < o->npolicies; k++) {
        rt_sim_tally tally = {0};
        const char *name = rt_sim_policy_name(o->policies[k]);
        for (size_t i = 0; i < cases->count; i++) {
            rt_sim_push_result pr;
            if (run_case(sim, o->policies[k], cases, i, &pr) != RT_OK) {
                rt_log_error("cannot simulate a case", "policy", name);
                return -1;
            }
            const rt_sim_result *r = &pr.result;
            if (cases->push)
                rt_sim_tally_add_push(&tally, &cases->pushes[i], r);
            else
                rt_sim_tally_add(&tally, &cases->tasks[i], r);
            if (!trace) continue;
            const rt_decide_history *h = case_history(cases, i);
            fprintf(trace,
                    "{\"case\":%zu,\"policy\":\"%s\",\"truth\":\"%s\",\"verdict\":\"%s\","
                    "\"reason\":\"%s\",\"retriggers\":%zu,\"rounds\":%zu,"
                    "\"p_regression\":%.6g,\"runs\":%ld,\"failures\":%ld",
                    i + 1, name, case_regression(cases, i) ? "regression" : "intermittent",
                    rt_verdict_name(r->verdict), r->reason, r->retriggers, r->rounds,
                    r->p_regression, h->runs, h->failures);
            if (cases->push)
                trace_push(trace, &cases->pushes[i], &pr);
            else
                fprintf(trace, ",\"rate\":%.6g", cases->tasks[i].rate);
            fputs("}\n", trace);
        }
        json_array_append_new(rows, tally_json(o->policies[k], &tally, cases->push));
    }
    return 0;
}

/* The report as a Markdown table. */
static void print_table(const options *o, const rt_config *cfg, json_t *report,
                        const char *population_source)
{
    json_t *rows = json_object_get(report, "policies");
    long long ncases = json_integer_value(json_object_get(report, "cases"));
    long long regressions = json_integer_value(json_object_get(report, "regressions"));
    bool push = json_object_get(report, "level") != NULL;
    printf("%lld %scases (%lld regressions, %lld intermittents, %lld with history", ncases,
           push ? "push-level " : "", regressions, ncases - regressions,
           (long long)json_integer_value(json_object_get(report, "with_history")));
    if (push)
        printf(", %lld failing configurations of %lld",
               (long long)json_integer_value(json_object_get(report, "failing_configs")),
               (long long)json_integer_value(json_object_get(report, "configs")));
    printf(") from %s\n", o->cases_path);
    printf("confidence %.3g, prior P(regression) %.3g, max retriggers %d, "
           "retriggers_per_failure %d, threshold %d,\n"
           "flake rate of a failing test Beta(%.3g, %.3g) (%s)\n\n",
           o->model.confidence, o->model.prior_regression, o->model.max_retriggers,
           cfg->retriggers_per_failure, cfg->decide_threshold, o->model.flake_failing.alpha,
           o->model.flake_failing.beta, population_source);
    printf("| policy | accuracy | regression recall | intermittents called regression | "
           "retriggers / failure | rounds / failure | low-confidence |%s\n"
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: |%s\n",
           push ? " no retrigger |" : "", push ? " ---: |" : "");
    for (size_t k = 0; k < json_array_size(rows); k++) {
        json_t *row = json_array_get(rows, k);
#define NUM(key) json_real_value(json_object_get(row, key))
        printf("| %s | %.3f | %.3f | %.3f | %.2f | %.2f | %.3f |",
               json_string_value(json_object_get(row, "policy")), NUM("accuracy"),
               NUM("regression_recall"), NUM("intermittents_called_regression"),
               NUM("retriggers_per_failure"), NUM("rounds_per_failure"), NUM("low_confidence"));
        if (push) printf(" %.3f |", NUM("decided_without_retriggers"));
        putchar('\n');
#undef NUM
    }
}

int rt_cli_simulate(int argc, char **argv, rt_config *cfg)
{
    options o;
    int status = parse_options(argc, argv, cfg, &o);
    if (status >= 0) return status;
    if (o.generate_count > 0)
        return generate(o.generate_count, o.seed, o.mix, o.regression_share, o.out_path);

    case_file cases = {0};
    if (load_cases(o.cases_path, &cases) != 0) return 1;
    size_t ncases = cases.count, nconfigs = 0, failing_configs = 0;
    status = 1;
    json_t *report = NULL;
    rt_sim sim = {0};
    FILE *trace = NULL;
    size_t with_history = 0, regressions = 0;
    for (size_t i = 0; i < ncases; i++) {
        with_history += case_history(&cases, i)->runs > 0;
        regressions += case_regression(&cases, i);
        for (size_t j = 0; cases.push && j < cases.pushes[i].nconfigs; j++) {
            nconfigs++;
            failing_configs += cases.pushes[i].configs[j].failed;
        }
    }
    const char *population_source = fit_population(&o, &cases, ncases);
    if (o.trace_path && !(trace = fopen(o.trace_path, "w"))) {
        rt_log_error("cannot write the trace", "file", o.trace_path, "error", strerror(errno));
        goto out;
    }
    if (rt_sim_init(&sim, &o.model, cfg->retriggers_per_failure, cfg->decide_threshold) != RT_OK) {
        rt_log_error("cannot set up the simulation");
        goto out;
    }
    report = json_pack(
        "{s:s, s:I, s:I, s:I, s:I, s:{s:f, s:f, s:i, s:i, s:i, s:s, s:f, s:f}, s:[]}", "cases_file",
        o.cases_path, "cases", (json_int_t)ncases, "regressions", (json_int_t)regressions,
        "intermittents", (json_int_t)(ncases - regressions), "with_history",
        (json_int_t)with_history, "settings", "confidence", o.model.confidence, "prior_regression",
        o.model.prior_regression, "max_retriggers", o.model.max_retriggers,
        "retriggers_per_failure", cfg->retriggers_per_failure, "threshold", cfg->decide_threshold,
        "population", population_source, "population_alpha", o.model.flake_failing.alpha,
        "population_beta", o.model.flake_failing.beta, "policies");
    if (!report) {
        rt_log_error("cannot format the report (is the file name UTF-8?)");
        goto out;
    }
    if (cases.push) {
        json_object_set_new(report, "level", json_string("push"));
        json_object_set_new(report, "configs", json_integer((json_int_t)nconfigs));
        json_object_set_new(report, "failing_configs", json_integer((json_int_t)failing_configs));
    }
    if (run_policies(&o, &sim, &cases, json_object_get(report, "policies"), trace) != 0) goto out;
    if (o.json_format) {
        char *text = json_dumps(report, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
        if (!text) goto out;
        puts(text);
        free(text);
    } else {
        print_table(&o, cfg, report, population_source);
    }
    status = fflush(stdout) == 0 ? 0 : 1;
out:
    if (trace && fclose(trace) != 0) {
        rt_log_error("cannot write the trace", "file", o.trace_path);
        status = 1;
    }
    json_decref(report);
    rt_sim_free(&sim);
    case_file_free(&cases);
    return status;
}
