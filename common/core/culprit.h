/* SPDX-License-Identifier: MPL-2.0 */
/* culprit.h - which push of a window caused a regression, by bisecting the pushes where the
 * failing label did not run, with Gecko's add-new-jobs action ({"tasks": [label], "times": n}).
 * Pure: no I/O, no clock, no allocation, no globals; thread-safe.
 *
 * The window, oldest first: pushes[0] is the first push (normally the newest push before the
 * failure where the label ran and did not reproduce the failure line: the known-good push),
 * then the pushes where the label was optimised away (runs 0) or that a probe ran it on, and
 * last the failing push, whose regression verdict the caller already holds. Pushes are
 * assumed to stack: once the culprit landed, every later push carries it.
 *
 * Each push is classified from its runs by a pluggable function (rt_culprit_classify_fn):
 * good (does not carry the regression), bad (carries it), or open (ask for `more` runs).
 * The failing push is bad by definition. The search is stateless: the caller stores the
 * runs and calls rt_culprit_next again after each round's runs have finished.
 *
 *   g      the newest good push (-1 when none)
 *   lower  the bisection's good end: g, or push 0 when g < 0 and push 0 is presumed good:
 *          it ran and reproduced nothing, but in fewer runs than a classification needs (the
 *          usual known-good push of a flaky regression, which ran once)
 *   b      the oldest bad push after lower (the failing push at worst)
 *   range  [g + 1, b]: the pushes that may be the culprit. first == 0 means "the first push
 *          or an earlier one": the window holds no good push before it.
 *   found                 b == g + 1 and g >= 0: b is the culprit (the push before it is good).
 *                         With no push between a known-good first push and the failing push,
 *                         the failing push is the culprit at no cost.
 *   culprit-before-window b == 0: the first push itself carries the regression (probing it
 *                         reproduced the line). The culprit is that push or an earlier one:
 *                         widen the window.
 *   searching             a round: probe the middle push m = lower + ceil(K / 2) of the
 *                         K = b - lower possible culprits lower+1 .. b (never b) with `times`
 *                         runs. When m is push 1 and push 0 is only presumed good, push 0 is
 *                         confirmed in the same round (confirm, confirm_times): the answer may
 *                         then be push 1 or "push 0 or earlier"; when only that confirmation
 *                         is missing, it is the probe. A push left open by its runs (too few,
 *                         or ambiguous) is the middle again, so it gets more runs. While the
 *                         probe has runs pending: wait (probe -1).
 *   stopped               the next probe costs more jobs than jobs_left: budget-exhausted,
 *                         with the range that holds the culprit (a confirmation that does not
 *                         fit beside the probe waits for a later round).
 * Bad pushes older than g (a backout, a flaky line) are ignored: the failing push's culprit
 * is the first bad push after the newest good one. Bisecting K possible culprits takes at
 * most ceil(log2 K) rounds, K = skipped pushes + 1: a probe whose runs all finished is
 * always decided in its round (only runs lost to exceptions are asked for again).
 * The model's confidence is the search's: each push is classified with confidence
 * 1 - (1 - c) / ceil(log2(npushes)) (rt_culprit_push_confidence), so that all the probes
 * of a search are right together with probability at least c.
 *
 * The seed rule (rt_culprit_seed_classify, used when no function is given; retrig-decide
 * uses it under decide_policy = seed, and the adaptive verdict's model under adaptive:
 * culprit_adaptive.h). With the push's confidence c, the decide threshold T,
 * the regression's reproduction rate r (the share of the failing push's runs that reproduce
 * the line) and the test's history of H runs with F failures on other pushes:
 *   f    the test's flake rate, (F + 1) / (H + 2) (rule of succession; 0.5 with no history).
 *   n_j  the smallest n >= j with P(Binomial(n, r) < j) <= 1 - c: the runs after which a bad
 *        push has shown j reproductions with probability at least c (n_j = j when r = 1).
 *   k    reproductions that make a push bad: the smallest j in 1..T whose false alarm
 *        P(Binomial(n_j, f) >= j) <= 1 - c, else T (decide_threshold: the seed rule
 *        "regression when at least T runs reproduce the line"). A long clean history makes
 *        k = 1, and so fewer runs.
 *   n    n_k, the probe's `times` (at most RT_CULPRIT_MAX_TIMES); a push is decided once
 *        it has n runs.
 * A push with m finished runs of which x reproduced:
 *   x >= k            bad; but when the history shows flakiness (H > 0) and a good push of
 *                     this test would show x reproductions in m runs with probability
 *                     P(Binomial(m, f) >= x) > 1 - c, it is ambiguous: with m < n, open
 *                     (n - m more runs); with m >= n the likelihood ratio decides at once,
 *                     bad when x ln(r / f) + (m - x) ln((1 - r) / (1 - f)) >= 0. (Asking
 *                     for n more runs instead costs a round beyond ceil(log2 K) in 2% of
 *                     searches and gains 0.8 points of correct answers; asking for 2n at
 *                     once runs out of budget in 16% of flaky regressions of flaky tests:
 *                     bench_culprit.)
 *   x < k and m >= n  good: a bad push shows fewer than k reproductions in n runs with
 *                     probability at most 1 - c.
 *   otherwise         open: n - m more runs (so a first push that ran once and passed is
 *                     only presumed good, unless n = 1: see lower).
 *
 * Worked example: c = 0.95, T = 2, no history, r = 0.75. Window of 8 pushes: N-7 ran once
 * and passed, N-6 .. N-1 skipped, N failing; the true culprit is N-6. Each push is classified
 * with confidence 1 - 0.05 / ceil(log2 8) = 0.983. f = 0.5: k = 1 would need n_1 = 3
 * (0.25^3 = 0.016 <= 0.017) and its false alarm 1 - 0.5^3 = 0.875 is too high, so k = 2 and
 * n = n_2 = 5 (P(Binomial(5, 0.75) < 2) = 0.016; with 4 runs 0.051). N-7 is presumed good
 * (1 run of the 5 needed), so lower = N-7, b = N and K = 7 (N-6 .. N).
 *   1. probe N-3 (N-7 + ceil(7 / 2)), times 5 -> 4 of 5 reproduce: bad, b = N-3, K = 4.
 *   2. probe N-5 (N-7 + 2), times 5 -> 3 of 5: bad, b = N-5, K = 2.
 *   3. probe N-6 (N-7 + 1), times 5, and confirm N-7, times 4 -> N-6 5 of 5: bad; N-7 0 of
 *      5: good.
 *   4. g = N-7, b = N-6: found N-6 after 3 rounds and 19 jobs, where backfilling the six
 *      skipped pushes with the same times costs 30. Had N-7 reproduced twice in its 4 new
 *      runs, the answer would have been culprit-before-window; had N-6 passed, N-5. */
#ifndef RETRIG_COMMON_CULPRIT_H
#define RETRIG_COMMON_CULPRIT_H

#include <stdbool.h>
#include <stddef.h>

#include "common/core/errors.h"

#define RT_CULPRIT_MAX_PUSHES  101    /* the first push, up to 99 others, the failing push */
#define RT_CULPRIT_MAX_TIMES   100    /* add-new-jobs accepts times up to 100 */
#define RT_CULPRIT_MAX_RUNS    10000  /* runs, reproductions or pending runs of one push */
#define RT_CULPRIT_MAX_JOBS    100000 /* jobs_left */
#define RT_CULPRIT_REASON_SIZE 160

/* What the classification knows about the regression and the test. */
typedef struct rt_culprit_model {
    double confidence;        /* c: 0.5 <= c < 1 */
    int threshold;            /* T: decide_threshold, 1..20 */
    double reproduction_rate; /* r: 0 < r <= 1 */
    long history_runs;        /* H: runs of the test on other pushes, 0 when unknown */
    long history_failures;    /* F: 0..H */
    /* The failing push's runs (the failing run and its retriggers) and how many reproduced
     * the line: what r was estimated from (0, 0: unknown). Read by the adaptive rule
     * (culprit_adaptive.h); 0..RT_CULPRIT_MAX_RUNS, reproduced <= runs. */
    int failing_runs, failing_reproduced;
} rt_culprit_model;

/* What one push's runs say. */
typedef enum {
    RT_PUSH_OPEN, /* ask for `more` runs */
    RT_PUSH_GOOD, /* does not carry the regression */
    RT_PUSH_BAD,  /* carries it */
} rt_push_class;

typedef struct rt_culprit_evidence {
    int runs;       /* finished runs of the label on the push that gave evidence */
    int reproduced; /* of those, runs that reproduced the failure line */
    bool first;     /* the window's first push */
} rt_culprit_evidence;

typedef struct rt_culprit_call {
    rt_push_class cls;
    int more; /* RT_PUSH_OPEN: runs to ask for, 1..RT_CULPRIT_MAX_TIMES */
} rt_culprit_call;

/* A probe-classification step: how a push's runs classify. Must be deterministic and
 * consistent (more reproductions never make a push less bad) and bounded (after enough
 * runs it returns good or bad). A push with no runs must be open: its `more` is the
 * probe's times. ctx is the caller's. */
typedef rt_culprit_call (*rt_culprit_classify_fn)(const rt_culprit_evidence *evidence,
                                                  const rt_culprit_model *model, void *ctx);

/* The seed rule's numbers for a model (see above). */
typedef struct rt_culprit_plan {
    int times;         /* n */
    int reproductions; /* k */
    int max_runs;      /* n: a push is decided by then */
    double flake_rate; /* f */
} rt_culprit_plan;

/* Whether every field of the model is in its range. */
bool rt_culprit_model_valid(const rt_culprit_model *model);
/* RT_EINVAL when the model is out of range. */
RT_MUSTCHECK int rt_culprit_seed_plan(const rt_culprit_model *model, rt_culprit_plan *out);
/* The seed rule as an rt_culprit_classify_fn (ctx unused; an invalid model: open, n = 1). */
rt_culprit_call rt_culprit_seed_classify(const rt_culprit_evidence *evidence,
                                         const rt_culprit_model *model, void *ctx);

typedef struct rt_culprit_push {
    int runs;       /* finished runs of the label that gave evidence (passed or failed) */
    int reproduced; /* of those, runs that reproduced the regression's failure line */
    int pending;    /* runs asked for and not finished yet */
} rt_culprit_push;

typedef struct rt_culprit_input {
    const rt_culprit_push *pushes; /* oldest first; the last is the failing push */
    size_t npushes;                /* 2..RT_CULPRIT_MAX_PUSHES */
    rt_culprit_model model;
    long jobs_left;                  /* jobs the search may still spend, 0..RT_CULPRIT_MAX_JOBS */
    rt_culprit_classify_fn classify; /* NULL: rt_culprit_seed_classify */
    void *classify_ctx;
} rt_culprit_input;

typedef enum {
    RT_CULPRIT_SEARCHING,
    RT_CULPRIT_FOUND,
    RT_CULPRIT_BEFORE_WINDOW,
    RT_CULPRIT_STOPPED,
} rt_culprit_status;

typedef struct rt_culprit_result {
    rt_culprit_status status;
    long culprit; /* found: the culprit's index; culprit-before-window: 0; else -1 */
    long probe;   /* searching: the push to run the label on; -1 while waiting */
    int times;    /* runs to ask for on probe */
    long confirm; /* searching: push 0, to probe in the same round; -1: none */
    int confirm_times;
    long first, last; /* the pushes that may be the culprit; first == 0: or an earlier push */
    long good, bad;   /* g (-1: none) and b */
    char reason[RT_CULPRIT_REASON_SIZE]; /* a code ("bisect", "budget-exhausted", ...) */
} rt_culprit_result;

/* The next step of the search. Reason codes: found "no-candidate" (nothing between a good
 * first push and the failing push) or "bisected"; culprit-before-window
 * "first-push-reproduces"; searching "bisect" (a new push), "more-runs" (the same push: its
 * runs were not enough or ambiguous), "confirm-first" (push 0 alone) or "waiting" (probe
 * -1: its runs are pending); stopped "budget-exhausted". RT_EINVAL (result stopped, reason
 * "invalid-input: ...") when the window, the model or a classification is out of range. */
RT_MUSTCHECK int rt_culprit_next(const rt_culprit_input *in, rt_culprit_result *out);

/* An estimate of the regression's reproduction rate r from the failing push's runs (the
 * failing run and its retriggers) and how many reproduced the line: the failing run is left
 * out (it was picked because it failed), one pass is added to lean toward a low rate, and at
 * least half a reproduction is counted: max(reproduced - 1, 0.5) / runs. 6 runs all
 * reproducing give 0.83, 3 of 6 give 0.33, a lone failing run 0.5. 0 when runs < 1 or
 * reproduced is out of 1..runs. */
double rt_culprit_reproduction_rate(int runs, int reproduced);

/* The confidence each push is classified with so that a search over a window of npushes
 * pushes names the right culprit with the given confidence: the search takes about
 * R = ceil(log2(npushes)) probes (at least 1), each wrong with probability at most
 * (1 - confidence) / R, so all are right with probability at least confidence (union
 * bound). */
double rt_culprit_push_confidence(double confidence, size_t npushes);

/* "searching", "found", "culprit-before-window", "stopped" (the names migration 0015
 * stores). */
const char *rt_culprit_status_name(rt_culprit_status status);

/* P(Binomial(n, p) >= k), for 0 <= p <= 1 and n <= 100000; exposed for tests and the
 * simulation. */
double rt_culprit_binomial_tail(int n, double p, int k);

#endif
