/* SPDX-License-Identifier: MPL-2.0 */
/* history_sim.h - a realistic test history of a Gecko-like repository for the demo, the
 * report pages and their tests (`retrig seed-history`). Pure: no I/O, no clock (the end of
 * the history is an input), no globals; the same options give the same runs, row for row.
 * Thread-safe per generator.
 *
 * The history: from midnight UTC `days` days before `until` to `until`, pushes on autoland (10-15 a
 * day, on 2-4 platforms), mozilla-central (two merges a day, every platform) and try (14-21 a day
 * by 60 developers, each developer's pushes one branch, 1-2 platforms and a few chunks). Each push
 * runs the mochitest-browser-chrome chunks of its platforms; each chunk runs a fixed share of the
 * groups (real manifests of the recorded errorsummary), each group a share of the `tests`
 * tests. A run is recorded as retrig-history records an errorsummary: its groups, and a row
 * for each failing test (complete_results false). What fails:
 *   background  each test fails at 0.02% of its runs (`noise`);
 *   flaky       a handful of tests at 1.5%, 3%, 6%, 12%, 20% and 35%, on every branch, one
 *               at 30% on Windows only, and the four tests of the recorded bug suggestions
 *               (the lines the demo's decisions compare) at 2-8%;
 *   new         one test flaky (15%) since 4.5 days before `until`;
 *   fixed       two flaky tests (18%, 8%) that stop failing 9.3 and 11 days before `until`;
 *   regression  one test fails in 97% of its runs from a known autoland push 6 days before
 *               `until` (the push is in rt_hsim_planted), on mozilla-central from its next
 *               merge, and on the try pushes based on it (85% of the try pushes after it);
 *   gap         nothing is recorded for 20 hours 17 days before `until` (a collection gap).
 * With `hostile`, tests, groups, messages, a try project and revisions carry markup,
 * quotes, ampersands, long and non-ASCII text, and a few of them are flaky. */
#ifndef RETRIG_COMMON_HISTORY_SIM_H
#define RETRIG_COMMON_HISTORY_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/core/errors.h"
#include "common/core/history.h"

#define RT_HSIM_MIN_TESTS 40
#define RT_HSIM_MAX_TESTS 5000
#define RT_HSIM_MAX_DAYS  90

typedef struct rt_hsim_options {
    uint64_t seed;
    long long until; /* end of the history (exclusive), Unix seconds */
    int days;        /* 1..RT_HSIM_MAX_DAYS */
    int tests;       /* RT_HSIM_MIN_TESTS..RT_HSIM_MAX_TESTS */
    double noise;    /* each test's background failure rate, 0..0.05 (0: the default 0.02%) */
    bool hostile;
} rt_hsim_options;

/* One run and its rows; the strings belong to the run. */
typedef struct rt_hsim_run {
    char run_key[40];
    char project[96];
    char branch_key[128];
    char push[24];
    char revision[96];
    char platform[48];
    char label[128];
    char run_at[32]; /* ISO-8601 UTC */
    bool main;
    rt_history_rows rows;
} rt_hsim_run;

/* What the generator planted, for people and tests to check the pages against. */
typedef struct rt_hsim_planted {
    const char *kind; /* flaky, windows-flaky, new, fixed, regression */
    char test[512];
    double rate;     /* failure rate while it fails */
    long long since; /* kind new / regression: first time it can fail; else 0 */
    long long until; /* kind fixed: last time it can fail; else 0 */
    char project[16];
    char push[24];     /* regression: the autoland push that brings it */
    char revision[48]; /* regression: that push's revision */
} rt_hsim_planted;

typedef struct rt_hsim rt_hsim;

/* A generator; RT_EINVAL (errstr says which option) or RT_ENOMEM. */
RT_MUSTCHECK int rt_hsim_new(const rt_hsim_options *options, rt_hsim **out, char *errstr);
/* The next run (pushes in time order; the runs of a push follow it), replacing *run's
 * contents (rows freed first: zero *run before the first call, rt_hsim_run_free after the
 * last). RT_OK, RT_ENOTFOUND after the last run, RT_ENOMEM. */
RT_MUSTCHECK int rt_hsim_next(rt_hsim *sim, rt_hsim_run *run);
void rt_hsim_run_free(rt_hsim_run *run);
/* The planted tests (valid while the generator lives). */
const rt_hsim_planted *rt_hsim_planted_list(const rt_hsim *sim, size_t *count);
/* The run as rt_history_store takes it (pointers into *run). */
rt_history_run rt_hsim_history_run(const rt_hsim_run *run, const char *repository);
void rt_hsim_free(rt_hsim *sim);

#endif
