/* SPDX-License-Identifier: MPL-2.0 */
/* stream.h - the recorded-shape stream of Pulse messages that the chaos test (test_chaos.c)
 * and the cluster test (test_cluster.c) send through replicas of every worker, the part of
 * Taskcluster the tests play (the retriggered runs of each hook trigger), and the checks
 * that afterwards nothing was lost and nothing done twice.
 *
 * The stream (shuffled), every message with a message_id of its own:
 *   - `eligible` failures: the GWxTc8p run made to fail, each with its own task id and label
 *     on one of `groups` pushes (task groups with a decision task and actions.json), the
 *     recorded errorsummary and a Treeherder job; half on the platform of the recording
 *     (RT_STREAM_LIMITED, whose daily budget `limit` is low enough to run out), half on
 *     linux1804-64-qr (a value of the definition changed, nothing else);
 *   - `malformed` messages (invalid JSON, missing taskId, runId of the wrong type, a body
 *     over max_message_bytes, a completed run on task-failed);
 *   - `other` failures that are not eligible: a build task, a tier-3 test, a test on another
 *     worker pool, an infra errorsummary, an errorsummary without test failures;
 *   - the rest up to `messages`: recorded task-completed (GWxTc8p, B3EheQ, fuzzmanager) and
 *     task-exception messages with new task ids; the fake serves their definitions
 *     (GWxTc8p: a test with the passing errorsummary; B3EheQ: a test without an
 *     errorsummary; fuzzmanager: a build), as every real task has one.
 * retrig-history consumes its own Pulse queue (queue/<user>/<name>-history, declared and
 * bound before the first message) with the defaults for history_projects (*) and
 * history_sample_percent (100), so it records every resolved test run: the eligible
 * failures, the failures that are not eligible but for the build, the GWxTc8p and B3EheQ
 * completed runs and the retriggered runs; both Pulse consumers dead-letter each malformed
 * message. For each hook trigger the fake upstream saw, the stream publishes the
 * retriggered runs (reproducing with the failing errorsummary, or passing with the passing
 * one on the second retrigger of every third failure).
 *
 * The checks count
 *   lost        eligible failures with neither a set nor the verdict skip/budget-exhausted
 *               (only on the limited platform), sets without a hook trigger, sets without a
 *               decision (or an undecided one without a reason), valid messages whose run
 *               was not recorded, test runs without a history run, history runs with fewer
 *               groups or failing tests than their errorsummary has, and malformed messages
 *               missing from the dead-letter queue from either Pulse queue
 *               (x-retrig-source-queue), or there without a reason;
 *   duplicated  sets beyond the first of a failure (and sets of non-eligible tasks), hook
 *               triggers beyond the first of a set (and triggers of unknown labels),
 *               decisions beyond one per set, history runs beyond the first of a test run
 *               (and of runs that are no test run), history runs with more groups or failing
 *               tests than their errorsummary has, and dead letters that are not malformed
 *               messages or are second copies from a queue.
 * Everything is logged to stderr prefixed with the stream's tag.
 *
 * With `configs` (decide_policy = pooled, issue 32): every push has a revision of its own and
 * its eligible failures are the one recorded test failing on some of `configs`
 * configurations (a build type each, debug, opt, asan, ...; on RT_STREAM_LIMITED and the
 * other platform in turn): push g fails on 1 + g % configs of them, so the pushes make one
 * pooled set each, some decided from the push's own runs, others after rounds of their
 * failing configurations. A set is then triggered once per round the pooled set asked of it
 * (none, one or more), each retriggered run is played (up to RT_STREAM_POOLED_RUNS per
 * failure), and the checks add: every eligible failure's set is a member of its push's
 * pooled set, each pooled set decided once, every member's decision pointing at it; hook
 * triggers of a set beyond its rounds made are duplicated, rounds made without their
 * trigger lost. */
#ifndef RETRIG_TESTS_SUPPORT_STREAM_H
#define RETRIG_TESTS_SUPPORT_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "support/classify_harness.h"

#define RT_STREAM_RETRIGGERS  2 /* retriggers_per_failure, decide_threshold, budget_minimum */
#define RT_STREAM_LIMITED     "android-em-7-0-x86_64" /* the platform whose budget runs out */
#define RT_STREAM_MAX_BYTES   65536                   /* max_message_bytes */
#define RT_STREAM_POOLED_RUNS 10 /* retriggered runs played per failure: decide_max_retriggers */

typedef struct rt_stream_sizes {
    const char *tag;               /* "chaos": the log prefix, labels and message ids */
    const char *client_id, *token; /* the Taskcluster credentials the fake accepts */
    int messages, eligible, malformed, other, groups;
    int limit;   /* RT_STREAM_LIMITED's daily budget */
    int configs; /* 0: per-task sets (decide_policy's default); else pooled (above) */
    struct {
        int classify, retrigger, decide, history;
    } replicas;
} rt_stream_sizes;

typedef struct rt_stream_tally {
    long lost, duplicated;
    int exhausted; /* eligible failures of the limited platform left budget-exhausted */
} rt_stream_tally;

typedef struct rt_stream rt_stream;

/* A stream for the harness h (its configuration set: budgets, credentials, the decide
 * delays and deadlines the checks expect); nothing is sent yet. */
rt_stream *rt_stream_new(rt_ch *h, const rt_stream_sizes *sizes);
/* Deletes the queues the stream's workers declared and frees it (not h). */
void rt_stream_free(rt_stream *s);

/* Builds the stream and loads what the fake serves for it, declares the Pulse queues and
 * starts the replicas. */
void rt_stream_start(rt_stream *s);
/* One round: `count` more messages out, the retriggers of new hook triggers played, the
 * limited platform's Redis counter sampled, workers that exited restarted. */
void rt_stream_round(rt_stream *s, size_t count);
/* Every message out, every eligible failure has its verdict and every set its decision. */
bool rt_stream_settled(rt_stream *s);
/* Stops the workers once every queue of the pipeline stayed empty for a while, starting
 * them again while something is left (at most until deadline_ms, rt_test_now_ms). */
void rt_stream_drain(rt_stream *s, int64_t deadline_ms);
/* The checks (above), after the workers stopped. */
void rt_stream_check(rt_stream *s, rt_stream_tally *t);

size_t rt_stream_published(const rt_stream *s);
size_t rt_stream_played(const rt_stream *s); /* retriggered runs published */
long rt_stream_respawns(const rt_stream *s);
int rt_stream_max_counter(const rt_stream *s); /* the highest sample of the counter */
/* The most the ledger holds for the limited platform on one day. */
long long rt_stream_ledger(rt_stream *s);
/* Retriggers asked of the hook across every trigger of the fake (times summed). */
long long rt_stream_hook_times(rt_stream *s);

void rt_stream_sleep_ms(int ms);

#endif
