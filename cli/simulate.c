/* SPDX-License-Identifier: MPL-2.0 */
/* simulate.c - `retrig simulate`: the verdict policies (seed, adaptive, mozci) run offline
 * over simulated failures with known truth, batch by batch through the same pure functions
 * the worker calls (common/decide_sim.h); or such failures generated from a documented mix.
 * Reads and writes files only. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/core/decide_model.h"
#include "common/core/decide_policy.h"
#include "common/core/decide_sim.h"

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

static int parse_double(const char *text, double min, double max, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end || !(v >= min && v <= max)) return -1;
    *out = v;
    return 0;
}

static int parse_long(const char *text, long min, long max, long *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < min || v > max) return -1;
    *out = v;
    return 0;
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

int rt_cli_simulate(int argc, char **argv, rt_config *cfg)
{
    static const struct option options[] = {
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
    const char *cases_path = NULL, *out_path = NULL, *population = "fit", *trace_path = NULL;
    rt_policy policies[RT_POLICY_COUNT];
    size_t npolicies = 0;
    bool json_format = false, seed_given = false;
    long generate_count = -1;
    unsigned long long seed = 0;
    rt_sim_mix mix = RT_SIM_MIX_UNIFORM;
    double regression_share = 0.15;
    rt_decide_settings model;
    rt_decide_settings_default(&model);
    model.confidence = cfg->decide_confidence;
    model.prior_regression = cfg->decide_prior_regression;
    model.max_retriggers = cfg->decide_max_retriggers;
    model.first_batch_max = cfg->retriggers_per_failure;
    model.first_batch_min = cfg->budget_minimum < cfg->retriggers_per_failure
                                ? cfg->budget_minimum
                                : cfg->retriggers_per_failure;
    int c;
    while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        long n;
        switch (c) {
        case 'c': cases_path = optarg; break;
        case 'p': {
            rt_policy p;
            if (rt_policy_parse(optarg, &p) != RT_OK) {
                fprintf(stderr, "retrig simulate: --policy is seed, adaptive or mozci, not '%s'\n",
                        optarg);
                return 2;
            }
            bool seen = false;
            for (size_t i = 0; i < npolicies; i++) seen |= policies[i] == p;
            if (!seen) policies[npolicies++] = p;
            break;
        }
        case 'f':
            if (rt__cli_format(optarg, &json_format)) return 2;
            break;
        case 'C':
            if (parse_double(optarg, 0.51, 0.999, &model.confidence) != 0) {
                fprintf(stderr, "retrig simulate: --confidence wants 0.51..0.999, not '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case 'P':
            if (parse_double(optarg, 0.001, 0.999, &model.prior_regression) != 0) {
                fprintf(stderr,
                        "retrig simulate: --prior-regression wants 0.001..0.999, not '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case 'M':
            if (parse_long(optarg, 1, RT_DECIDE_MAX_RETRIGGERS, &n) != 0) {
                fprintf(stderr, "retrig simulate: --max-retriggers wants 1..%d, not '%s'\n",
                        RT_DECIDE_MAX_RETRIGGERS, optarg);
                return 2;
            }
            model.max_retriggers = (int)n;
            break;
        case 'F': population = optarg; break;
        case 'g':
            if (parse_long(optarg, 1, MAX_CASES, &generate_count) != 0) {
                fprintf(stderr, "retrig simulate: --generate wants 1..%d cases, not '%s'\n",
                        MAX_CASES, optarg);
                return 2;
            }
            break;
        case 's': {
            char *end = NULL;
            errno = 0;
            seed = strtoull(optarg, &end, 10);
            if (errno || end == optarg || *end || optarg[0] == '-') {
                fprintf(stderr, "retrig simulate: --seed wants a number, not '%s'\n", optarg);
                return 2;
            }
            seed_given = true;
            break;
        }
        case 'm':
            if (rt_sim_mix_parse(optarg, &mix) != RT_OK) {
                fprintf(stderr, "retrig simulate: --mix is uniform or observed, not '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case 'r':
            if (parse_double(optarg, 0, 1, &regression_share) != 0) {
                fprintf(stderr, "retrig simulate: --regression-share wants 0..1, not '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case 'o': out_path = optarg; break;
        case 't': trace_path = optarg; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "retrig simulate: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    if ((generate_count > 0) == (cases_path != NULL)) {
        fprintf(stderr, "retrig simulate: give either --cases or --generate\n");
        usage(stderr);
        return 2;
    }
    if (generate_count > 0) {
        if (!seed_given) {
            fprintf(stderr, "retrig simulate: --generate needs --seed\n");
            return 2;
        }
        return generate(generate_count, seed, mix, regression_share, out_path);
    }
    rt_decide_beta fixed = {0, 0};
    if (strcmp(population, "fit") && strcmp(population, "default")) {
        char *end = NULL;
        fixed.alpha = strtod(population, &end);
        if (end && *end == ',') fixed.beta = strtod(end + 1, &end);
        if (!end || *end || !(fixed.alpha > 0) || !(fixed.beta > 0) || !isfinite(fixed.alpha) ||
            !isfinite(fixed.beta)) {
            fprintf(stderr, "retrig simulate: --population is fit, default or A,B, not '%s'\n",
                    population);
            return 2;
        }
        model.flake_failing = fixed;
        if (rt_decide_settings_check(&model) != RT_OK) {
            fprintf(stderr,
                    "retrig simulate: --population %s: B must exceed the regression prior's "
                    "betas (%g)\n",
                    population, model.partial.beta);
            return 2;
        }
    }
    if (npolicies == 0) {
        rt_policy p = RT_POLICY_SEED;
        if (rt_policy_parse(cfg->decide_policy, &p) != RT_OK) p = RT_POLICY_SEED;
        policies[npolicies++] = p;
    }

    rt_sim_case *cases = NULL;
    size_t ncases = 0;
    if (load_cases(cases_path, &cases, &ncases) != 0) return 1;
    int status = 1;
    json_t *report = NULL;
    rt_sim sim = {0};
    FILE *trace = NULL;
    size_t with_history = 0, regressions = 0;
    for (size_t i = 0; i < ncases; i++) {
        with_history += cases[i].history.runs > 0;
        regressions += cases[i].regression;
    }
    const char *population_source = "default";
    if (!strcmp(population, "fit")) {
        rt_decide_counts *counts = malloc(ncases * sizeof *counts);
        if (!counts) goto out;
        for (size_t i = 0; i < ncases; i++)
            counts[i] = (rt_decide_counts){cases[i].history.runs, cases[i].history.failures};
        rt_decide_beta fitted;
        rt_decide_settings tried = model;
        /* A fit the model cannot use (too few histories, or a Beta too wide to keep the
         * likelihood ratio monotone) leaves the default. */
        if (rt_decide_fit_population(counts, ncases, &fitted) == RT_OK) {
            tried.flake_failing = fitted;
            population_source = "default: fit not usable";
            if (rt_decide_settings_check(&tried) == RT_OK) {
                model = tried;
                population_source = "fitted";
            }
        }
        free(counts);
    } else if (fixed.alpha > 0) {
        population_source = "given";
    }
    if (trace_path && !(trace = fopen(trace_path, "w"))) {
        rt_log_error("cannot write the trace", "file", trace_path, "error", strerror(errno));
        goto out;
    }
    if (rt_sim_init(&sim, &model, cfg->retriggers_per_failure, cfg->decide_threshold) != RT_OK) {
        rt_log_error("cannot set up the simulation");
        goto out;
    }

    report = json_pack(
        "{s:s, s:I, s:I, s:I, s:I, s:{s:f, s:f, s:i, s:i, s:i, s:s, s:f, s:f}, s:[]}", "cases_file",
        cases_path, "cases", (json_int_t)ncases, "regressions", (json_int_t)regressions,
        "intermittents", (json_int_t)(ncases - regressions), "with_history",
        (json_int_t)with_history, "settings", "confidence", model.confidence, "prior_regression",
        model.prior_regression, "max_retriggers", model.max_retriggers, "retriggers_per_failure",
        cfg->retriggers_per_failure, "threshold", cfg->decide_threshold, "population",
        population_source, "population_alpha", model.flake_failing.alpha, "population_beta",
        model.flake_failing.beta, "policies");
    if (!report) {
        rt_log_error("cannot format the report (is the file name UTF-8?)");
        goto out;
    }
    json_t *rows = json_object_get(report, "policies");
    for (size_t k = 0; k < npolicies; k++) {
        rt_sim_tally tally = {0};
        for (size_t i = 0; i < ncases; i++) {
            rt_sim_result r;
            if (rt_sim_run(&sim, policies[k], &cases[i], &r) != RT_OK) {
                rt_log_error("cannot simulate a case", "policy", rt_policy_name(policies[k]));
                goto out;
            }
            rt_sim_tally_add(&tally, &cases[i], &r);
            if (trace)
                fprintf(trace,
                        "{\"case\":%zu,\"policy\":\"%s\",\"truth\":\"%s\",\"verdict\":\"%s\","
                        "\"reason\":\"%s\",\"retriggers\":%zu,\"rounds\":%zu,"
                        "\"p_regression\":%.6g,\"runs\":%ld,\"failures\":%ld,\"rate\":%.6g}\n",
                        i + 1, rt_policy_name(policies[k]),
                        cases[i].regression ? "regression" : "intermittent",
                        rt_verdict_name(r.verdict), r.reason, r.retriggers, r.rounds,
                        r.p_regression, cases[i].history.runs, cases[i].history.failures,
                        cases[i].rate);
        }
        json_array_append_new(rows, tally_json(policies[k], &tally));
    }

    if (json_format) {
        char *text = json_dumps(report, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
        if (!text) goto out;
        puts(text);
        free(text);
    } else {
        printf("%zu cases (%zu regressions, %zu intermittents, %zu with history) from %s\n", ncases,
               regressions, ncases - regressions, with_history, cases_path);
        printf("confidence %.3g, prior P(regression) %.3g, max retriggers %d, "
               "retriggers_per_failure %d, threshold %d,\n"
               "flake rate of a failing test Beta(%.3g, %.3g) (%s)\n\n",
               model.confidence, model.prior_regression, model.max_retriggers,
               cfg->retriggers_per_failure, cfg->decide_threshold, model.flake_failing.alpha,
               model.flake_failing.beta, population_source);
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
    status = fflush(stdout) == 0 ? 0 : 1;
out:
    if (trace && fclose(trace) != 0) {
        rt_log_error("cannot write the trace", "file", trace_path);
        status = 1;
    }
    json_decref(report);
    rt_sim_free(&sim);
    free(cases);
    return status;
}
