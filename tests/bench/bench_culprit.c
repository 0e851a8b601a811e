/* SPDX-License-Identifier: MPL-2.0 */
/* bench_culprit.c - culprit searches against known truth (common/culprit_sim.h): how often
 * the search names the right push, in how many probing rounds, at what share of the jobs of
 * a linear backfill with the same times per push. Windows of 1 to culprit_max_depth skipped
 * pushes, solid and flaky regressions, tests with and without a flaky history; the
 * configuration's defaults (culprit_confidence, decide_threshold, culprit_max_jobs).
 * Deterministic: the same --seed gives the same table on any machine. Also the same cases
 * with the first push trusted as known good (what a linear backfill does), for comparison,
 * and with the probes classified by the adaptive verdict's model (decide_policy = adaptive;
 * common/core/culprit_adaptive.h) in place of the seed rule.
 * A command, not a test: scripts/bench builds and runs it. Exit 0 when it ran (targets:
 * >= 95% correct, at most ceil(log2(C+1)) rounds, jobs <= 0.40 of linear; reported, not
 * enforced), 1 when it could not, 2 on a usage error. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/config.h"
#include "common/core/culprit_adaptive.h"
#include "common/core/culprit_sim.h"
#include "common/policy.h"

static int run(const rt_culprit_sim_options *o, rt_culprit_sim_report *report)
{
    if (rt_culprit_sim_run(o, report) != RT_OK) {
        fprintf(stderr, "bench_culprit: the simulation's options are out of range\n");
        return 1;
    }
    return 0;
}

static double pct(long part, long whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0;
}

int main(int argc, char **argv)
{
    static const struct option options[] = {
        {"cases", required_argument, NULL, 'n'},
        {"seed", required_argument, NULL, 's'},
        {NULL, 0, NULL, 0},
    };
    long cases = 100000;
    unsigned long long seed = 1;
    int c;
    while ((c = getopt_long(argc, argv, "", options, NULL)) != -1) {
        char *end = NULL;
        if (c == 'n') {
            cases = strtol(optarg, &end, 10);
            if (*end || cases < 1 || cases > RT_CULPRIT_SIM_MAX_CASES) c = '?';
        } else if (c == 's') {
            seed = strtoull(optarg, &end, 10);
            if (*end) c = '?';
        }
        if (c == '?') {
            fprintf(stderr, "usage: bench_culprit [--cases N] [--seed S]\n");
            return 2;
        }
    }
    rt_config cfg;
    char errstr[RT_ERRSTR_SIZE] = "";
    if (rt_config_defaults(&cfg, errstr) != RT_OK) {
        fprintf(stderr, "bench_culprit: %s\n", errstr);
        return 1;
    }
    rt_culprit_sim_options o = {.cases = cases,
                                .seed = seed,
                                .confidence = cfg.culprit_confidence,
                                .threshold = cfg.decide_threshold,
                                .max_jobs = cfg.culprit_max_jobs,
                                .max_skipped = cfg.culprit_max_depth};
    rt_culprit_adaptive adaptive;
    rt_culprit_classify_fn adaptive_classify =
        rt_culprit_classifier(RT_POLICY_ADAPTIVE, &cfg, &adaptive);
    rt_config_free(&cfg);
    if (!adaptive_classify) {
        fprintf(stderr, "bench_culprit: the decide_* defaults are out of range\n");
        return 1;
    }
    static rt_culprit_sim_report report, trusted, adapted;
    if (run(&o, &report) != 0) return 1;
    o.classify = rt_culprit_sim_trust_first;
    if (run(&o, &trusted) != 0) return 1;
    o.classify = adaptive_classify;
    o.classify_ctx = &adaptive;
    if (run(&o, &adapted) != 0) return 1;

    size_t size = rt_culprit_sim_format(&report, NULL, 0) + 1;
    char *table = malloc(size);
    if (!table) return 1;
    rt_culprit_sim_format(&report, table, size);
    const rt_culprit_sim_row *t = &report.total, *u = &trusted.total, *a = &adapted.total;
    printf("culprit search: %ld simulated searches, seed %llu, culprit_confidence %g, "
           "decide_threshold %d, culprit_max_jobs %ld, 1-%d skipped pushes\n\n%s\n",
           o.cases, seed, o.confidence, o.threshold, o.max_jobs, o.max_skipped, table);
    free(table);
    printf("correct %.1f%% (target >= 95%%); rounds <= ceil(log2(C+1)) in %.1f%% of cases, "
           "%.1f%% not counting reruns of ambiguous probes (target: every case); jobs %.2f of "
           "a linear backfill with the same times (target <= 0.40)\n",
           pct(t->correct, t->cases), pct(t->within_bound, t->cases),
           pct(t->within_bound_reruns_aside, t->cases),
           t->linear_jobs ? (double)t->jobs / (double)t->linear_jobs : 0);
    printf("the same cases trusting the known-good push as a linear backfill does: correct "
           "%.1f%%, rounds <= ceil(log2(C+1)) in %.1f%%, jobs %.2f of linear\n",
           pct(u->correct, u->cases), pct(u->within_bound, u->cases),
           u->linear_jobs ? (double)u->jobs / (double)u->linear_jobs : 0);
    size = rt_culprit_sim_format(&adapted, NULL, 0) + 1;
    table = malloc(size);
    if (!table) return 1;
    rt_culprit_sim_format(&adapted, table, size);
    printf("\nthe same cases with the probes classified by the adaptive verdict's model "
           "(decide_policy = adaptive):\n\n%s\n",
           table);
    free(table);
    printf("adaptive: correct %.1f%%, rounds <= ceil(log2(C+1)) in %.1f%%, %.1f jobs a search "
           "(seed rule %.1f), jobs %.2f of a linear backfill with the same times\n",
           pct(a->correct, a->cases), pct(a->within_bound, a->cases),
           (double)a->jobs / (double)a->cases, (double)t->jobs / (double)t->cases,
           a->linear_jobs ? (double)a->jobs / (double)a->linear_jobs : 0);
    printf("figure: culprit_cases %ld\n", t->cases);
    printf("figure: culprit_correct_pct %.1f\n", pct(t->correct, t->cases));
    printf("figure: culprit_stopped_pct %.2f\n", pct(t->stopped, t->cases));
    printf("figure: culprit_rounds_within_bound_pct %.1f\n", pct(t->within_bound, t->cases));
    printf("figure: culprit_rounds_within_bound_reruns_aside_pct %.1f\n",
           pct(t->within_bound_reruns_aside, t->cases));
    printf("figure: culprit_jobs_ratio %.2f\n",
           t->linear_jobs ? (double)t->jobs / (double)t->linear_jobs : 0);
    printf("figure: culprit_trusted_correct_pct %.1f\n", pct(u->correct, u->cases));
    printf("figure: culprit_jobs_mean %.1f\n", (double)t->jobs / (double)t->cases);
    printf("figure: culprit_adaptive_correct_pct %.1f\n", pct(a->correct, a->cases));
    printf("figure: culprit_adaptive_rounds_within_bound_pct %.1f\n",
           pct(a->within_bound, a->cases));
    printf("figure: culprit_adaptive_jobs_ratio %.2f\n",
           a->linear_jobs ? (double)a->jobs / (double)a->linear_jobs : 0);
    printf("figure: culprit_adaptive_jobs_mean %.1f\n", (double)a->jobs / (double)a->cases);
    return 0;
}
