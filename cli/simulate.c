/* SPDX-License-Identifier: MPL-2.0 */
/* simulate.c - `retrig simulate`: the verdict policies (seed, adaptive, mozci) run offline
 * over simulated failures with known truth, batch by batch through the same pure functions
 * the worker calls (common/decide_sim.h); or such failures generated from a documented mix.
 * Reads and writes files only. */
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
        "usage: retrig simulate --cases FILE.jsonl [--policy seed|adaptive|mozci]...\n"
        "                       [--format table|json] [--confidence C]\n"
        "                       [--prior-regression P] [--max-retriggers N]\n"
        "                       [--population fit|default|A,B]\n"
        "       retrig simulate --generate N --seed S [--mix uniform|observed]\n"
        "                       [--regression-share P] [--out FILE]\n"
        "Runs verdict policies over simulated failures whose truth is known and prints,\n"
        "per policy: accuracy, regression recall, the share of intermittents called\n"
        "regression, retriggers and rounds (batches waited on) per failure. Each line of\n"
        "FILE is {\"truth\": \"regression\"|\"intermittent\", \"history\": {\"runs\": N,\n"
        "\"failures\": K}, \"outcomes\": [true, false, ...]}: outcome i is whether retrigger i\n"
        "reproduces the failure. --policy defaults to decide_policy; --confidence,\n"
        "--prior-regression and --max-retriggers to decide_confidence,\n"
        "decide_prior_regression and decide_max_retriggers; seed and mozci ask for\n"
        "retriggers_per_failure retriggers, seed needs decide_threshold reproductions.\n"
        "--population: the flake-rate prior of a failing test, fitted from the file's\n"
        "histories (fit, the default), the model's default, or Beta(A, B).\n"
        "--generate writes N cases drawn with seed S (the same file for the same seed;\n"
        "mixes in common/decide_sim.h) to --out or stdout; --regression-share defaults\n"
        "to 0.15.\n"
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
        rt_sim_case c;
        rt_sim_generate(&rng, mix, share, &c);
        json_t *doc = rt_sim_case_json(&c);
        char *text = doc ? json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(6)) : NULL;
        if (!text || fprintf(out, "%s\n", text) < 0) status = 1;
        free(text);
        json_decref(doc);
    }
    if (out != stdout ? fclose(out) != 0 : fflush(out) != 0) status = 1;
    if (status) rt_log_error("cannot write the cases", "file", out_path ? out_path : "stdout");
    return status;
}

/* Reads every case of a JSON-lines file; blank lines are skipped. */
static int load_cases(const char *path, rt_sim_case **out, size_t *count)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        rt_log_error("cannot read the cases", "file", path, "error", strerror(errno));
        return 1;
    }
    rt_sim_case *cases = NULL;
    size_t n = 0, cap = 0, lineno = 0;
    char *line = NULL;
    size_t line_cap = 0;
    ssize_t len;
    int status = 1;
    while ((len = getline(&line, &line_cap, f)) >= 0) {
        lineno++;
        char where[64];
        snprintf(where, sizeof where, "%zu", lineno);
        if (strspn(line, " \t\r\n") == (size_t)len) continue;
        if (len > MAX_LINE_BYTES || n == MAX_CASES) {
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
        if (n == cap) {
            size_t grown = cap ? cap * 2 : 1024;
            rt_sim_case *bigger = realloc(cases, grown * sizeof *cases);
            if (!bigger) {
                json_decref(doc);
                rt_log_error("out of memory reading the cases", "file", path);
                goto out;
            }
            cases = bigger;
            cap = grown;
        }
        char errstr[RT_ERRSTR_SIZE] = "";
        int rc = rt_sim_case_parse(doc, &cases[n], errstr);
        json_decref(doc);
        if (rc != RT_OK) {
            rt_log_error("invalid case", "file", path, "line", where, "reason", errstr);
            goto out;
        }
        n++;
    }
    if (ferror(f)) {
        rt_log_error("cannot read the cases", "file", path);
        goto out;
    }
    if (n == 0) {
        rt_log_error("no cases in the file", "file", path);
        goto out;
    }
    *out = cases;
    cases = NULL;
    *count = n;
    status = 0;
out:
    free(line);
    free(cases);
    fclose(f);
    return status;
}

static double share(size_t part, size_t whole) { return whole ? (double)part / (double)whole : 0; }

static json_t *tally_json(rt_policy policy, const rt_sim_tally *t)
{
    json_t *shadow = json_object();
    for (size_t p = 0; shadow && p < RT_POLICY_COUNT; p++)
        if (p != (size_t)policy)
            json_object_set_new(shadow, rt_policy_name((rt_policy)p),
                                json_real(share(t->shadow_agree[p], t->cases)));
    return json_pack(
        "{s:s, s:f, s:f, s:f, s:f, s:f, s:f, s:I, s:o}", "policy", rt_policy_name(policy),
        "accuracy", share(t->correct, t->cases), "regression_recall",
        share(t->regressions_found, t->regressions), "intermittents_called_regression",
        share(t->intermittents_called_regression, t->intermittents), "retriggers_per_failure",
        share(t->retriggers, t->cases), "rounds_per_failure", share(t->rounds, t->cases),
        "low_confidence", share(t->low_confidence, t->cases), "undecided", (json_int_t)t->undecided,
        "shadow_agreement", shadow);
}

/* What the command line asks for. */
typedef struct options {
    const char *cases_path, *out_path, *population, *trace_path;
    rt_policy policies[RT_POLICY_COUNT];
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
        rt_policy p;
        if (rt_policy_parse(optarg, &p) != RT_OK)
            return usage_error("--policy is seed, adaptive or mozci, not '%s'", optarg);
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
            return usage_error("--mix is uniform or observed, not '%s'", optarg);
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
    if (o->npolicies == 0) o->policies[o->npolicies++] = rt_decide_policy_from_config(cfg);
    return -1;
}

/* --population fit: the flake rate of a failing test fitted from the cases' histories, when
 * the model can use the fit. Returns where the population came from. */
static const char *fit_population(options *o, const rt_sim_case *cases, size_t ncases)
{
    if (strcmp(o->population, "fit")) return o->fixed.alpha > 0 ? "given" : "default";
    rt_decide_counts *counts = malloc((ncases ? ncases : 1) * sizeof *counts);
    if (!counts) return "default";
    for (size_t i = 0; i < ncases; i++)
        counts[i] = (rt_decide_counts){cases[i].history.runs, cases[i].history.failures};
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

/* Every policy over every case, a row each in rows; each case's outcome in trace when open. */
static int run_policies(const options *o, rt_sim *sim, const rt_sim_case *cases, size_t ncases,
                        json_t *rows, FILE *trace)
{
    for (size_t k = 0; k < o->npolicies; k++) {
        rt_sim_tally tally = {0};
        for (size_t i = 0; i < ncases; i++) {
            rt_sim_result r;
            if (rt_sim_run(sim, o->policies[k], &cases[i], &r) != RT_OK) {
                rt_log_error("cannot simulate a case", "policy", rt_policy_name(o->policies[k]));
                return -1;
            }
            rt_sim_tally_add(&tally, &cases[i], &r);
            if (trace)
                fprintf(trace,
                        "{\"case\":%zu,\"policy\":\"%s\",\"truth\":\"%s\",\"verdict\":\"%s\","
                        "\"reason\":\"%s\",\"retriggers\":%zu,\"rounds\":%zu,"
                        "\"p_regression\":%.6g,\"runs\":%ld,\"failures\":%ld,\"rate\":%.6g}\n",
                        i + 1, rt_policy_name(o->policies[k]),
                        cases[i].regression ? "regression" : "intermittent",
                        rt_verdict_name(r.verdict), r.reason, r.retriggers, r.rounds,
                        r.p_regression, cases[i].history.runs, cases[i].history.failures,
                        cases[i].rate);
        }
        json_array_append_new(rows, tally_json(o->policies[k], &tally));
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
    printf("%lld cases (%lld regressions, %lld intermittents, %lld with history) from %s\n", ncases,
           regressions, ncases - regressions,
           (long long)json_integer_value(json_object_get(report, "with_history")), o->cases_path);
    printf("confidence %.3g, prior P(regression) %.3g, max retriggers %d, "
           "retriggers_per_failure %d, threshold %d,\n"
           "flake rate of a failing test Beta(%.3g, %.3g) (%s)\n\n",
           o->model.confidence, o->model.prior_regression, o->model.max_retriggers,
           cfg->retriggers_per_failure, cfg->decide_threshold, o->model.flake_failing.alpha,
           o->model.flake_failing.beta, population_source);
    printf("| policy | accuracy | regression recall | intermittents called regression | "
           "retriggers / failure | rounds / failure | low-confidence |\n"
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (size_t k = 0; k < json_array_size(rows); k++) {
        json_t *row = json_array_get(rows, k);
#define NUM(key) json_real_value(json_object_get(row, key))
        printf("| %s | %.3f | %.3f | %.3f | %.2f | %.2f | %.3f |\n",
               json_string_value(json_object_get(row, "policy")), NUM("accuracy"),
               NUM("regression_recall"), NUM("intermittents_called_regression"),
               NUM("retriggers_per_failure"), NUM("rounds_per_failure"), NUM("low_confidence"));
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

    rt_sim_case *cases = NULL;
    size_t ncases = 0;
    if (load_cases(o.cases_path, &cases, &ncases) != 0) return 1;
    status = 1;
    json_t *report = NULL;
    rt_sim sim = {0};
    FILE *trace = NULL;
    size_t with_history = 0, regressions = 0;
    for (size_t i = 0; i < ncases; i++) {
        with_history += cases[i].history.runs > 0;
        regressions += cases[i].regression;
    }
    const char *population_source = fit_population(&o, cases, ncases);
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
    if (run_policies(&o, &sim, cases, ncases, json_object_get(report, "policies"), trace) != 0)
        goto out;
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
    free(cases);
    return status;
}
