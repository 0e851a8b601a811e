/* SPDX-License-Identifier: MPL-2.0 */
/* worker.h - the shared start-up of every retrig-<worker> binary: arguments, config,
 * logging, the metrics and health endpoint, and SIGHUP reloads. The worker's own loop is
 * passed in as `run`.
 *
 * When metrics_port > 0, rt_worker_main serves /metrics and /healthz on metrics_bind
 * (common/metrics.h) for the life of `run`. A worker takes part by calling two functions
 * between messages (its safe points), from its own thread: rt_worker_health (readiness
 * for /healthz and retrig_dependency_up) and rt_worker_reload (applies a SIGHUP).
 * /healthz answers 503 until the worker first reports its connections.
 *
 * What SIGHUP reloads (the same file and RETRIG_* environment as at start are read
 * again): budget_limits, budget_minimum, decide_threshold, log_level, pool_prefixes,
 * retriggers_per_failure and tiers. Any other key that changed is logged as needing a
 * restart and keeps its running value. A file that no longer loads is logged and the
 * running configuration stays as it was. A reload never drops a connection. */
#ifndef RETRIG_COMMON_WORKER_H
#define RETRIG_COMMON_WORKER_H

#include <stdbool.h>
#include <stddef.h>

#include "common/amqp.h"
#include "common/config.h"
#include "common/pg.h"
#include "common/redis.h"

typedef struct rt_worker_def {
    const char *name;    /* "classify" -> binary retrig-classify */
    const char *summary; /* one line for --help */
    /* Runs the worker until shutdown; returns the exit code. */
    int (*run)(rt_config *cfg);
    /* Checks that every service the worker needs is reachable; returns the exit code. */
    int (*check)(rt_config *cfg);
} rt_worker_def;

/* An extra boolean flag of one worker ("--once"): set to true when given. */
typedef struct rt_worker_flag {
    const char *name; /* "once" -> --once */
    const char *help; /* one line for --help */
    bool *value;      /* set to true when the flag is given */
} rt_worker_flag;

/* Parses --config/--help/--version/--check-config, loads the configuration (exit 2 on
 * error), then calls def->check or def->run. */
int rt_worker_main(const rt_worker_def *def, int argc, char **argv);
/* The same with nflags extra boolean flags (listed by --help). */
int rt_worker_main_flags(const rt_worker_def *def, const rt_worker_flag *flags, size_t nflags,
                         int argc, char **argv);

/* The connections a worker reports; NULL members are not used by the worker. */
typedef struct rt_worker_conns {
    rt_amqp *broker; /* our broker */
    rt_amqp *pulse;  /* Pulse, when it is another connection than broker */
    rt_redis *redis;
    rt_pg *pg;
} rt_worker_conns;

/* Between messages: at most every RT_WORKER_HEALTH_INTERVAL_MS, checks each connection
 * (the broker's state; PING to Redis and SELECT 1 to Postgres outside a transaction, which
 * reconnect a broken connection with their own backoff) and publishes the result for
 * /healthz and retrig_dependency_up. */
#define RT_WORKER_HEALTH_INTERVAL_MS 2000
void rt_worker_health(const rt_worker_conns *conns);
/* The same for one of `lanes` threads that each hold their own connections (lanes at most
 * RT_WORKER_MAX_LANES), each calling it from its own safe points: /healthz is ready once
 * every lane has reported and no lane has a dependency down; its answer names the lanes
 * that have. rt_worker_health is lane 0 of 1. */
#define RT_WORKER_MAX_LANES 64
void rt_worker_health_lane(int lane, int lanes, const rt_worker_conns *conns);
/* Between messages: when a SIGHUP arrived, reloads the reloadable keys into cfg (see the
 * top of this file). Returns true when it did: the list keys were replaced (the old items
 * are freed), so the worker re-derives what it computed from cfg (an eligibility policy,
 * say) before using it again. */
bool rt_worker_reload(rt_config *cfg);
/* Asks for a reload as SIGHUP does. */
void rt_worker_request_reload(void);
/* Whether a reload was asked for and not applied yet: a cheap test, so that a threaded
 * worker takes its configuration's write lock only when there is something to apply. */
bool rt_worker_reload_pending(void);

/* --check-config support: the services a worker needs. */
enum {
    RT_WORKER_NEEDS_BROKER = 1,   /* amqp_url */
    RT_WORKER_NEEDS_REDIS = 2,    /* redis_url */
    RT_WORKER_NEEDS_POSTGRES = 4, /* database_url */
};

/* Connects once to each service in `needs` and logs each that does not answer (never a
 * secret). Returns how many failed. */
int rt_worker_check_services(const rt_config *cfg, const char *worker, unsigned needs);
/* The exit code of --check-config for that many failures (0 when none, logging that the
 * configuration and services are ok). */
int rt_worker_check_result(int failures);

#endif
