/* SPDX-License-Identifier: MPL-2.0 */
/* classify.h - what retrig-classify's files share: a lane's state, the run's facts, and the
 * calls between main.c (the message's story: record, learn, decide, act) and request.c (an
 * eligible failure's retrigger request: the set and its budget claimed through
 * common/core/claim_flow.h's steps, the request published under the set's row lock). Each
 * lane (classify_concurrency) holds one classify of its own. */
#ifndef RETRIG_WORKERS_CLASSIFY_H
#define RETRIG_WORKERS_CLASSIFY_H

#include "common/not_core.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/config.h"
#include "common/core/eligibility.h"
#include "common/core/errorsummary.h"
#include "common/core/pulse.h"
#include "common/core/taskdef.h"
#include "common/io/amqp.h"
#include "common/io/http.h"
#include "common/io/pg.h"
#include "common/io/redis.h"
#include "common/io/upstream.h"
#include "common/worker.h"

#define MAX_DELAYS 16
#define MAX_FOUND  32 /* runs of a label already on a push kept as members */

typedef struct cached_task {
    char task_id[23];
    rt_taskdef def;
} cached_task;

/* The configuration the lanes share (snapshot.c): immutable, swapped by pointer; a lane holds
 * a reference from one safe point to the next. */
typedef struct snapshot snapshot;
struct snapshot {
    atomic_int refs;
    rt_config cfg;
    rt_elig_policy policy; /* derived from cfg; points into it */
};

/* The first snapshot, of cfg (RT_ENOMEM), and its release once every lane has stopped. */
int classify_snapshot_start(const rt_config *cfg);
void classify_snapshot_stop(void);
snapshot *classify_snapshot_new(const rt_config *from);
void classify_snapshot_release(snapshot *s);
/* The current snapshot, with a reference, and its generation. */
snapshot *classify_snapshot_acquire(unsigned *generation);
/* The current generation: a lane whose snapshot is older takes the new one. */
unsigned classify_snapshot_generation(void);
/* Applies a pending SIGHUP to a copy of the current configuration and publishes it (one lane
 * at a time; the others go on). */
void classify_reload_if_asked(void);

typedef struct classify {
    rt_config *cfg; /* snap's configuration: read once per batch */
    snapshot *snap; /* held from one safe point to the next */
    unsigned snap_generation;
    rt_worker_conns conns;
    rt_worker_settler settler;
    size_t lane, lanes; /* this lane's number, and how many there are */
    rt_amqp *pulse;     /* consumes the Pulse queue */
    rt_amqp *ours;      /* our broker: requests, retries, dead letters (== pulse when same URL) */
    rt_redis *redis;
    rt_pg *pg;
    rt_http *http;
    rt_elig_policy policy;
    char pulse_queue[300];
    char retry_queue[300];
    char request_queue[300];
    char request_key[32];
    int delays[MAX_DELAYS];
    size_t ndelays;
    cached_task *cache;
    size_t cache_size;
    rt_tc_run found[MAX_FOUND]; /* the message in hand's runs already on its push */
    size_t nfound;
} classify;

/* What rt_sets_run_facts read along with the run's details (common/store/sets.h). */
typedef struct run_facts {
    bool known;
    long long set_id; /* 0: no set */
    char original[23];
    bool published;
    char day[11]; /* the UTC day ledger_spent is for */
    int ledger_spent;
} run_facts;

/* The run's verdict and its reason on its runs row. */
int classify_record_verdict(classify *w, const rt_pulse_task *msg, const char *verdict,
                            const char *reason);
/* The set of (project, revision, label): *set_id 0 when none. */
int classify_find_set(classify *w, const char *project, const char *revision, const char *label,
                      long long *set_id, char original[23], bool *published);
/* The run joins the set as a member, and the set's decision is asked for when it is complete. */
int classify_join_set(classify *w, long long set_id, const rt_pulse_task *msg);

/* shared.c: listings of one task group are taken one at a time, across lanes:
 * classify_group_listing_begin waits until no other lane lists the group, marks it listed and
 * returns its place, which classify_group_listing_end frees. No lock is held across the
 * network. */
size_t classify_group_listing_begin(const char *task_group_id);
void classify_group_listing_end(size_t place);
/* shared.c: the lane's task definition cache (direct-mapped: definitions never change).
 * classify_cache_put takes ownership of def's contents and returns where it lives now (def
 * itself when the cache is off). */
const rt_taskdef *classify_cache_get(classify *w, const char *task_id);
const rt_taskdef *classify_cache_put(classify *w, const char *task_id, rt_taskdef *def);

/* The runs state a message's event gives its member row. */
const char *classify_member_state(const rt_pulse_task *msg);
/* Handles one delivery from src and settles it (ack, retry, dead letter or requeue); pre: a
 * failed run the fast path recorded and parsed already, else NULL. */
void classify_process(classify *w, rt_amqp *src, rt_amqp_message *m, rt_pulse_task *pre);

/* batch.c: the deliveries of one batch, completed and exception runs of task groups without a
 * retrigger set written in one statement and acked together, the others through
 * classify_process one by one. */
#define BATCH_MAX 256
void classify_process_batch(classify *w, rt_amqp *src, rt_amqp_message *batch, size_t n);

/* request.c: the retriggers the set's first round asks for under decide_policy = adaptive (the
 * verdict model's first batch, within budget_minimum and retriggers_per_failure). */
int classify_adaptive_first_round(classify *w, const rt_taskdef *task, const rt_errorsummary *es,
                                  int *wanted);
/* request.c: an eligible failure's set and budget claimed, the set created with its ledger
 * row, and its retrigger request published; h says how the message settles. */
void classify_request_retriggers(classify *w, const rt_pulse_task *msg, const rt_taskdef *task,
                                 const rt_errorsummary *es, int wanted, const run_facts *facts,
                                 rt_outcome *h);
/* request.c: a set whose request was never published (its publisher died) gets it now. */
int classify_ensure_published(classify *w, const char *project, const char *revision,
                              const char *label);

#endif
