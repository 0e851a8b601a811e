/* SPDX-License-Identifier: MPL-2.0 */
/* perf.h - what retrig-perf's files share: the worker's state, and the backfill of one picked
 * alert (backfill.c: under its summary's lock, still open, its job found, the push's backfill
 * action rendered and checked, the family's budget claimed and the intent recorded, then the
 * hook called once; an interrupted call resumed). main.c reads Perfherder, picks the alerts
 * and runs the schedule. Single-threaded, like the worker. */
#ifndef RETRIG_WORKERS_PERF_H
#define RETRIG_WORKERS_PERF_H

#include "common/not_core.h"

#include <stddef.h>

#include "common/config.h"
#include "common/core/perf_pick.h"
#include "common/io/http.h"
#include "common/io/metrics.h"
#include "common/io/pg.h"
#include "common/io/redis.h"
#include "common/options.h"
#include "common/worker.h"

typedef struct perf {
    rt_config *cfg;
    rt_perf_options opts;
    rt_worker_conns conns;
    rt_pg *pg;           /* conns.pg */
    rt_redis *redis;     /* conns.redis */
    rt_http *http;       /* GETs, with retries */
    rt_http *http_post;  /* the hook call: one attempt */
    char day[11];        /* the UTC day whose budget this run spends */
    char owner[96];      /* who claims budget: host:pid */
    int failures;        /* alerts left with an error this run */
    rt_metric *left_out; /* retrig_perf_left_out_total{what} */
} perf;

/* The budget a family spends ("perf:<family>"), its ledger platform. */
void perf_budget_name(const perf *w, size_t family, char *out, size_t size);
/* One picked alert: under its summary's lock, still open, prepared, claimed and recorded,
 * then the backfill hook called; a failure counts in w->failures and leaves the alert for the
 * next run. */
void perf_backfill(perf *w, const rt_perf_pick *p);
/* Alerts whose hook call was interrupted in an earlier run: each looked up in its push's task
 * group, then recorded or called again. RT_OK, or a Postgres error. */
int perf_resume_open(perf *w);

#endif
