/* SPDX-License-Identifier: MPL-2.0 */
/* worker.h - the skeleton of every retrig-<worker> binary: arguments, configuration,
 * logging, the metrics and health endpoint, SIGHUP reloads, signals, connections that wait
 * for their services, the consume loop and the one settle function. A worker supplies its
 * story (its topology, a handler, what it does between messages) and `run` ties them.
 *
 * Life of a worker (docs/ARCHITECTURE.md):
 *   rt_worker_main     parses arguments, loads the configuration, starts /metrics and
 *                      /healthz, installs SIGTERM/SIGINT (common/io/stop.h), calls run;
 *   rt_worker_connect  connects to every service the worker needs, waiting as long as it
 *                      takes (capped, jittered backoff; /healthz names what is missing;
 *                      retrig_connection_attempts_total counts the tries), then declares
 *                      the worker's topology; a stop request ends the wait;
 *   rt_worker_consume  takes messages until a stop is asked for, hands each to the handler
 *                      and settles it as the handler's outcome says (rt_worker_settle, the
 *                      plan of common/core/settle.h); at each safe point between messages it
 *                      reports health and applies a SIGHUP.
 * After a loss, AMQP reconnects inside its calls, Redis and Postgres at their next command;
 * a worker never exits because a dependency is down.
 *
 * When metrics_port > 0, rt_worker_main serves /metrics and /healthz on metrics_bind
 * (common/io/metrics.h) for the life of `run`. A worker takes part by calling two functions
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

#include "common/not_core.h"

#include <stdbool.h>
#include <stddef.h>

#include "common/config.h"
#include "common/core/settle.h"
#include "common/io/amqp.h"
#include "common/io/pg.h"
#include "common/io/redis.h"

typedef struct rt_worker_conns rt_worker_conns;

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

/* How the skeleton reaches Redis: connect (client_name without spaces, for CLIENT LIST),
 * answer a PING, let go. worker.c calls no Redis function itself, only this table, so a
 * worker that never uses Redis (retrig-history) does not link hiredis; a worker that does
 * passes &rt_worker_redis (common/worker_redis.c) in its setup and its --check-config. */
typedef struct rt_worker_redis_ops {
    int (*connect)(rt_redis **out, const char *url, const char *client_name, char *errstr);
    bool (*up)(rt_redis *redis);
    void (*free)(rt_redis *redis);
} rt_worker_redis_ops;
extern const rt_worker_redis_ops rt_worker_redis;

/* The connections a worker holds; NULL members are not used by the worker. */
struct rt_worker_conns {
    rt_amqp *broker; /* our broker */
    rt_amqp *pulse;  /* Pulse, when it is another connection than broker */
    rt_redis *redis;
    rt_pg *pg;
    const rt_worker_redis_ops *redis_ops; /* set with redis */
};

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
/* Whether a reload was asked for and not applied yet: a cheap test, so that a threaded
 * worker takes its configuration's write lock only when there is something to apply. */
bool rt_worker_reload_pending(void);

/* The services a worker needs. */
enum {
    RT_WORKER_NEEDS_BROKER = 1,   /* amqp_url */
    RT_WORKER_NEEDS_POSTGRES = 4, /* database_url */
    RT_WORKER_NEEDS_PULSE = 8,    /* pulse_url: its own connection when it differs from amqp_url */
};

/* ---- connections ---- */

typedef struct rt_worker_setup {
    const char *worker; /* "classify": connection names ("retrig-classify"), logs */
    unsigned needs;     /* RT_WORKER_NEEDS_* */
    int lane, lanes;    /* this connection set's lane, for /healthz (0 of 1 when unthreaded) */
    /* Called once the broker (and Pulse) answer: declares the worker's exchanges and queues
     * and starts its consumers (the handles remember them across reconnects). RT_ECONN: the
     * broker went away meanwhile, and the wait goes on; another error stops the worker.
     * NULL: nothing to declare. */
    int (*declare)(void *ctx, const rt_worker_conns *conns);
    void *ctx;
    /* Redis (redis_url): &rt_worker_redis when the worker uses it, else NULL. */
    const rt_worker_redis_ops *redis;
} rt_worker_setup;

/* Connects to every service in setup->needs and to Redis when setup->redis, filling conns (members
 * not needed stay NULL; pulse is NULL when pulse_url equals amqp_url: use broker), then calls
 * declare. Waits for missing services as long as it takes, with capped jittered backoff between
 * rounds, reporting this lane unready on /healthz with their names. RT_OK; RT_ESTOPPED when a stop
 * was asked for meanwhile; RT_EAUTH or RT_ECONFIG when a service refuses our credentials or
 * certificate (logged: waiting would not help); RT_ENOMEM. Free conns with
 * rt_worker_disconnect whatever the result. */
RT_MUSTCHECK int rt_worker_connect(const rt_config *cfg, const rt_worker_setup *setup,
                                   rt_worker_conns *conns);
/* Closes and frees every connection of conns (NULL members are skipped). */
void rt_worker_disconnect(rt_worker_conns *conns);
/* A worker's exit status after its start-up returned rc (and, on RT_OK, its loop ran):
 * 0 for RT_OK or a stop asked for while it waited (RT_ESTOPPED), 2 for a configuration
 * error (RT_ECONFIG), 1 otherwise. */
int rt_worker_exit_status(int rc);

/* ---- settling ---- */

typedef struct rt_worker_settler {
    rt_amqp *broker;         /* where the delay queues are (our broker) */
    const char *retry_queue; /* the work queue a delayed copy comes back to */
    const int *delays;       /* milliseconds, one per retry; its delay queues are declared */
    size_t ndelays;
    /* NULL, or a new body for a delayed copy (malloc'd; NULL keeps the message's body): a
     * worker whose messages count their attempts in the body (decide requests). */
    char *(*retry_body)(void *ctx, const rt_amqp_message *m, const rt_settle_plan *plan);
    void *ctx;
} rt_worker_settler;

/* Settles m, consumed from src, as o says (common/core/settle.h): ack, dead-letter with
 * the reason, a delayed copy (carrying the original exchange, the routes and the last error
 * as headers, so that a Pulse message can be handled again as it came) then ack, or
 * requeue. Logs and counts it (retrig_messages_total, retrig_dead_lettered_total, and the
 * processing time since `started` when started > 0). A broker operation that fails is
 * logged: the broker redelivers the message. Returns true when the worker should pause
 * before the next message (rt_worker_pause). */
bool rt_worker_settle(const rt_worker_settler *s, rt_amqp *src, const rt_amqp_message *m,
                      const rt_outcome *o, double started);
/* The pause after a requeue: half a second, or less when a stop is asked for. */
void rt_worker_pause(void);

/* ---- the consume loop ---- */

typedef struct rt_worker_loop {
    rt_config *cfg;
    const rt_worker_conns *conns; /* reported at each safe point */
    int lane, lanes;
    bool apply_reloads;  /* apply a SIGHUP at each safe point (single-lane workers) */
    rt_amqp *sources[2]; /* [0] is waited on; [1] (may be NULL) is looked at when [0] is quiet */
    int wait_ms;         /* how long to wait on sources[0]; 0: 500 */
    size_t batch_max;    /* > 1: take what has arrived on sources[0], up to this many */
    const rt_worker_settler *settler;
    void *ctx;
    /* Handles one message and says what it came to; HOLD: the handler moved *m away (left
     * it zeroed) and settles it later with rt_worker_settle. */
    void (*handle)(void *ctx, rt_amqp *src, rt_amqp_message *m, rt_outcome *o);
    /* With batch_max > 1: handles n messages and settles each itself (rt_worker_settle).
     * The loop frees them. */
    void (*handle_batch)(void *ctx, rt_amqp *src, rt_amqp_message *batch, size_t n);
    /* NULL, or called at every safe point (idle: nothing came since the last one); returns
     * the next wait in ms (0: wait_ms). Periodic work lives here (sweeps, batch flushes). */
    int (*tick)(void *ctx, bool idle);
    /* NULL, or called after a SIGHUP was applied (re-derive what came from cfg). */
    void (*reloaded)(void *ctx);
} rt_worker_loop;

/* Runs the loop until a stop is asked for; the message in hand is settled first. */
void rt_worker_consume(const rt_worker_loop *loop);

/* Topology. */

/* Declares the worker's own queues (with their delay queues) on our broker, with the
 * namespace's dead-letter exchange and queue (<ns>.dlx, <ns>.dead-letter). */
RT_MUSTCHECK int rt_worker_declare_queues(rt_amqp *broker, const rt_config *cfg,
                                          const rt_amqp_work_queue *queues, size_t count);
/* Declares the Pulse queue and binds it to each event's exchange
 * (pulse_exchange_prefix + event, declared too when pulse_declare_exchanges) with every
 * pulse_routing_keys pattern. */
RT_MUSTCHECK int rt_worker_bind_pulse(rt_amqp *pulse, const rt_config *cfg, const char *queue,
                                      const char *const *events, size_t count);

/* Today's UTC date, "YYYY-MM-DD", and now in UTC to the second, "YYYY-MM-DDTHH:MM:SSZ"
 * (the budget's day and the times our messages carry). */
void rt_worker_utc_day(char out[11]);
void rt_worker_utc_now(char out[32]);

/* --check-config support. */

/* 0 when the worker may call Taskcluster (credentials for some level, or dry_run), else 1,
 * logging what is missing. */
int rt_worker_needs_taskcluster(const rt_config *cfg);

/* Connects once to each service in `needs` (and to Redis when redis is not NULL) and logs
 * each that does not answer (never a secret). Returns how many failed. */
int rt_worker_check_services(const rt_config *cfg, const char *worker, unsigned needs,
                             const rt_worker_redis_ops *redis);
/* The exit code of --check-config for that many failures (0 when none, logging that the
 * configuration and services are ok). */
int rt_worker_check_result(int failures);

#endif
