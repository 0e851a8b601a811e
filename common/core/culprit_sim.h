/* SPDX-License-Identifier: MPL-2.0 */
/* culprit_sim.h - a simulation of culprit searches (culprit.h) with known truth, to measure
 * how often the search names the right push, in how many probing rounds, at what cost in
 * jobs against a linear backfill. Deterministic: a seeded PRNG (splitmix64), no clock, no
 * I/O, no globals; thread-safe. Used by `retrig culprit --simulate` and bench_culprit.
 *
 * Each case draws, in this order:
 *   window      C skipped pushes, uniform in 1..max_skipped, between the first push (the
 *               label ran once there and did not reproduce) and the failing push.
 *   regression  solid (40%: reproduction rate 1) or flaky (60%: rate uniform in 0.3..0.9).
 *   test        clean history (40%: 200..2000 runs at a true flake rate of 0.001), flaky
 *               history (40%: 200..2000 runs at a rate uniform in 0.01..0.05) or no history
 *               (20%: a true rate uniform in 0..0.03 the search does not know). The
 *               history's failures are drawn from its runs and rate.
 *   culprit     for a flaky regression, 10% of cases at or before the first push (its one
 *               run passed by chance: the right answer is culprit-before-window); otherwise
 *               uniform over the C skipped pushes and the failing push.
 *   failing     the failing run plus 5 retriggers, drawn again until at least `threshold`
 *               retriggers reproduce (retrig-decide called it a regression).
 * The search's reproduction rate is estimated from the failing push's 6 runs as `retrig
 * culprit` does (rt_culprit_reproduction_rate). Each probe's runs reproduce at the true rate
 * on a push carrying the regression and at the test's true flake rate elsewhere. A round is
 * one call's probe, with the first push's confirmation beside it when there is one. The
 * linear backfill runs every skipped push with the times of the search's first probe (what
 * the rule asks of a push with no runs, at the push confidence): C x n jobs. */
#ifndef RETRIG_COMMON_CULPRIT_SIM_H
#define RETRIG_COMMON_CULPRIT_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/core/culprit.h"
#include "common/core/errors.h"

#define RT_CULPRIT_SIM_MAX_CASES 10000000L
#define RT_CULPRIT_SIM_WINDOWS   5 /* rows by skipped pushes: 1, 2-3, 4-7, 8-15, 16+ */
#define RT_CULPRIT_SIM_KINDS     6 /* solid/flaky regression x clean/flaky/no history */

typedef struct rt_culprit_sim_options {
    long cases; /* 1..RT_CULPRIT_SIM_MAX_CASES */
    uint64_t seed;
    double confidence; /* as rt_culprit_model */
    int threshold;
    long max_jobs;   /* budget per search (culprit_max_jobs) */
    int max_skipped; /* 1..RT_CULPRIT_MAX_PUSHES - 2 (culprit_max_depth - 1) */
    /* A classification step to use instead of the seed rule (NULL: seed), with its ctx. */
    rt_culprit_classify_fn classify;
    void *classify_ctx;
} rt_culprit_sim_options;

typedef struct rt_culprit_sim_row {
    char name[32];
    long cases;
    long correct; /* the right culprit, or culprit-before-window when it was before */
    long stopped; /* the budget ran out (not correct) */
    long rounds;  /* probes requested, summed */
    long rounds_max;
    long within_bound;              /* cases with rounds <= ceil(log2(C + 1)) */
    long within_bound_reruns_aside; /* the same, not counting rounds that only added runs to
                                       a push already probed (ambiguous or short) */
    int bound_max;                  /* the largest ceil(log2(C + 1)) of the row */
    long jobs;                      /* jobs the searches spent */
    long linear_jobs;               /* C x n for each case */
    long jobs_max;                  /* the most one search spent */
} rt_culprit_sim_row;

typedef struct rt_culprit_sim_report {
    rt_culprit_sim_row by_window[RT_CULPRIT_SIM_WINDOWS];
    rt_culprit_sim_row by_kind[RT_CULPRIT_SIM_KINDS];
    rt_culprit_sim_row total;
} rt_culprit_sim_report;

/* Runs the cases. RT_EINVAL when an option is out of range. */
RT_MUSTCHECK int rt_culprit_sim_run(const rt_culprit_sim_options *options,
                                    rt_culprit_sim_report *out);

/* The report as a text table (a Markdown table per grouping); returns the length it needed
 * (as snprintf: the text is cut when size is smaller). */
size_t rt_culprit_sim_format(const rt_culprit_sim_report *report, char *buf, size_t size);

/* The classification step of the simulation's second variant: the seed rule, except that a
 * first push that ran and did not reproduce is taken as known good (trusting the window's
 * known-good push as a linear backfill does). ctx unused. */
rt_culprit_call rt_culprit_sim_trust_first(const rt_culprit_evidence *evidence,
                                           const rt_culprit_model *model, void *ctx);

#endif
