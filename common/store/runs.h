/* SPDX-License-Identifier: MPL-2.0 */
/* runs.h - the store of resolved task runs (the runs table): the rows retrig-classify writes
 * for every run it sees and the verdict it gives each, behind typed calls. The statements
 * live in runs.c (moved there from workers/classify/main.c, issue 33); no PGresult leaves
 * it. Thread-safety: per rt_pg handle. */
#ifndef RETRIG_COMMON_STORE_RUNS_H
#define RETRIG_COMMON_STORE_RUNS_H

#include "common/not_core.h"

#include <stdbool.h>
#include <stddef.h>

#include "common/core/errors.h"
#include "common/io/pg.h"

/* A run as its Pulse message gives it; times ISO 8601, NULL when unknown. */
typedef struct rt_run_record {
    const char *task_id; /* NULL: no row (rt_runs_record_batch) */
    int run_id;
    const char *state; /* rt_member_state_name */
    const char *reason_resolved, *task_queue_id, *task_group_id;
    const char *project, *revision, *label;
    const char *scheduled_at, *started_at, *resolved_at;
    const char *verdict, *verdict_reason; /* rt_runs_record_batch only; NULL: none yet */
} rt_run_record;

/* Inserts the run's row unless it exists (a redelivery writes nothing). A time Postgres
 * cannot read fails with its SQLSTATE (22007, 22008) in rt_pg_sqlstate. */
RT_MUSTCHECK int rt_runs_record(rt_pg *pg, const rt_run_record *run);
/* The run's verdict, unless it has one. */
RT_MUSTCHECK int rt_runs_set_verdict(rt_pg *pg, const char *task_id, int run_id,
                                     const char *verdict, const char *verdict_reason);
/* A batch of n runs in one statement (rows[i].task_id NULL: no row for i): a run with a
 * verdict that may be a member of a set (its push and label have one, or, when it names
 * none, its task group has one) is not written and maybe_member[i] is set for it, the full
 * path deciding; every other row is inserted unless it exists. Postgres is the source of
 * truth for both, so a flushed Redis changes nothing. On failure nothing is written. */
RT_MUSTCHECK int rt_runs_record_batch(rt_pg *pg, const rt_run_record *rows, size_t n,
                                      bool *maybe_member);

#endif
