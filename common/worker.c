/* SPDX-License-Identifier: MPL-2.0 */
/* worker.c - the skeleton every worker binary runs: arguments, configuration, the
 * metrics/health endpoint, readiness reports, SIGHUP reloads, connections that wait for
 * their services, the consume loop and settling. The readiness state is written by the
 * workers' threads and read by the endpoint's thread through atomics; everything else
 * belongs to the calling thread. */
#include "common/worker.h"

#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/core/utf8.h"
#include "common/options.h"

#include "common/io/log.h"
#include "common/io/metrics.h"
#include "common/io/stop.h"
#include "common/policy.h"

enum { DEP_BROKER = 1, DEP_REDIS = 2, DEP_POSTGRES = 4 };

/* Between two rounds of connection attempts while a service is missing. */
#define CONNECT_BACKOFF_BASE_MS 250
#define CONNECT_BACKOFF_MAX_MS  5000

static volatile sig_atomic_t g_reload;
static const char *g_config_path; /* as given with --config, NULL: $RETRIG_CONFIG */
static atomic_int g_down = DEP_BROKER | DEP_REDIS | DEP_POSTGRES; /* dependencies down */
static atomic_bool g_reported;                                    /* every lane has reported once */
/* Per lane (of a threaded worker; else lane 0 of 1): what its own connections found,
 * whether it reported, and when it last looked (its thread's alone). */
static struct {
    atomic_int down;
    atomic_bool reported;
    double last_check;
} g_lane[RT_WORKER_MAX_LANES];
static atomic_int g_lanes = 1;
static pthread_mutex_t g_health_lock = PTHREAD_MUTEX_INITIALIZER; /* g_down's aggregation */

static void on_sighup(int sig)
{
    (void)sig;
    g_reload = 1;
}

bool rt_worker_reload_pending(void) { return g_reload != 0; }

/* /healthz, from the endpoint's thread. */
static bool worker_ready(void *ctx, char *why, size_t size)
{
    (void)ctx;
    if (!atomic_load(&g_reported)) {
        snprintf(why, size, "starting: the worker has not reported its connections yet");
        return false;
    }
    int down = atomic_load(&g_down);
    if (!down) return true;
    char list[RT_WORKER_MAX_LANES * 3 + 1] = ""; /* " 0 3": the lanes with one down */
    size_t at = 0;
    int lanes = atomic_load(&g_lanes);
    for (int i = 0; lanes > 1 && i < lanes; i++)
        if (atomic_load(&g_lane[i].down))
            at += (size_t)snprintf(list + at, sizeof list - at, " %d", i);
    snprintf(why, size, "down:%s%s%s%s%s%s", down & DEP_BROKER ? " broker" : "",
             down & DEP_REDIS ? " redis" : "", down & DEP_POSTGRES ? " postgres" : "",
             at ? " (lanes" : "", list, at ? ")" : "");
    return false;
}

static bool pg_up(rt_pg *pg)
{
    if (rt_pg_in_transaction(pg)) return true; /* not a safe point: keep the last answer */
    PGresult *res = NULL;
    bool up = rt_pg_exec(pg, "SELECT 1", 0, NULL, &res) == RT_OK;
    PQclear(res);
    return up;
}

void rt_worker_health(const rt_worker_conns *conns) { rt_worker_health_lane(0, 1, conns); }

/* Publishes what one lane found down (DEP_* bits) and the process's readiness. */
static void report_lane(int lane, int lanes, int mine)
{
    if (lanes < 1 || lanes > RT_WORKER_MAX_LANES || lane < 0 || lane >= lanes) return;
    atomic_store(&g_lane[lane].down, mine);
    atomic_store(&g_lane[lane].reported, true);
    atomic_store(&g_lanes, lanes);

    /* The process is ready when every lane reported and none has a dependency down. */
    pthread_mutex_lock(&g_health_lock);
    int down = 0;
    bool all = true;
    for (int i = 0; i < lanes; i++) {
        down |= atomic_load(&g_lane[i].down);
        all = all && atomic_load(&g_lane[i].reported);
    }
    int before = atomic_exchange(&g_down, down);
    bool first = all && !atomic_exchange(&g_reported, true);
    pthread_mutex_unlock(&g_health_lock);
    if (!all) return;
    const rt_std_metrics *m = rt_metrics_std();
    rt_metric_set(m->up, down & DEP_BROKER ? 0 : 1, "broker");
    rt_metric_set(m->up, down & DEP_REDIS ? 0 : 1, "redis");
    rt_metric_set(m->up, down & DEP_POSTGRES ? 0 : 1, "postgres");
    if (first || before != down) {
        char why[128] = "";
        if (worker_ready(NULL, why, sizeof why))
            rt_log_info("ready: broker, redis and postgres connections up");
        else
            rt_log_warn("not ready", "reason", why);
    }
}

void rt_worker_health_lane(int lane, int lanes, const rt_worker_conns *conns)
{
    if (lanes < 1 || lanes > RT_WORKER_MAX_LANES || lane < 0 || lane >= lanes) return;
    double now = rt_metrics_now();
    if (now - g_lane[lane].last_check < RT_WORKER_HEALTH_INTERVAL_MS / 1000.0 &&
        atomic_load(&g_lane[lane].reported))
        return;
    g_lane[lane].last_check = now;
    int mine = 0;
    if ((conns->broker && !rt_amqp_is_connected(conns->broker)) ||
        (conns->pulse && !rt_amqp_is_connected(conns->pulse)))
        mine |= DEP_BROKER;
    if (conns->redis && !conns->redis_ops->up(conns->redis)) mine |= DEP_REDIS;
    if (conns->pg && !pg_up(conns->pg)) mine |= DEP_POSTGRES;
    report_lane(lane, lanes, mine);
}

/* ---- connections that wait for their services ---- */

static void count_attempt(const char *dependency, bool ok)
{
    rt_metric_inc(rt_metrics_std()->connection_attempts, dependency, ok ? "ok" : "failed");
}

/* One attempt on the broker connection h (created on the first call). */
static int try_broker(const rt_config *cfg, const char *worker, const char *url, rt_amqp **h,
                      char *errstr)
{
    if (!*h) {
        rt_amqp_options opts;
        rt_amqp_options_from_config(&opts, cfg, worker);
        opts.url = url;
        int rc = rt_amqp_new(h, &opts, errstr);
        if (rc != RT_OK) return rc == RT_EINVAL ? RT_ECONFIG : rc;
    }
    int rc = rt_amqp_ensure_connected(*h, 0);
    if (rc != RT_OK) rt_set_errstr(errstr, "%s", rt_amqp_errstr(*h));
    return rc;
}

static bool permanent(int rc) { return rc == RT_EAUTH || rc == RT_ECONFIG || rc == RT_ENOMEM; }

/* Tries each missing service once; returns the DEP_* bits still missing, or -1 with *fatal
 * set for an error waiting cannot mend. */
static int connect_round(const rt_config *cfg, const rt_worker_setup *setup, rt_worker_conns *conns,
                         bool *declared, int *fatal)
{
    char errstr[RT_ERRSTR_SIZE] = "";
    int missing = 0, rc;
    bool separate_pulse = (setup->needs & RT_WORKER_NEEDS_PULSE) && cfg->pulse_url &&
                          strcmp(cfg->pulse_url, cfg->amqp_url) != 0;
    if (setup->needs & (RT_WORKER_NEEDS_BROKER | RT_WORKER_NEEDS_PULSE)) {
        if (!conns->broker || !rt_amqp_is_connected(conns->broker)) {
            rc = try_broker(cfg, setup->worker, cfg->amqp_url, &conns->broker, errstr);
            count_attempt("broker", rc == RT_OK);
            if (rc != RT_OK) {
                if (permanent(rc)) goto fatal;
                rt_log_warn("waiting for the broker", "error", errstr);
                missing |= DEP_BROKER;
            }
        }
        if (separate_pulse && (!conns->pulse || !rt_amqp_is_connected(conns->pulse))) {
            rc = try_broker(cfg, setup->worker, cfg->pulse_url, &conns->pulse, errstr);
            count_attempt("pulse", rc == RT_OK);
            if (rc != RT_OK) {
                if (permanent(rc)) goto fatal;
                rt_log_warn("waiting for Pulse", "error", errstr);
                missing |= DEP_BROKER;
            }
        }
    }
    if (setup->redis && !conns->redis) {
        char name[64];
        /* Names without spaces: "retrig-classify" or, for a lane, "retrig-classify-lane-3". */
        if (setup->lanes > 1)
            snprintf(name, sizeof name, "retrig-%s-lane-%d", setup->worker, setup->lane);
        else
            snprintf(name, sizeof name, "retrig-%s", setup->worker);
        conns->redis_ops = setup->redis;
        rc = setup->redis->connect(&conns->redis, cfg->redis_url, name, errstr);
        count_attempt("redis", rc == RT_OK);
        if (rc != RT_OK) {
            if (permanent(rc) || rc == RT_EINVAL) goto fatal;
            rt_log_warn("waiting for Redis", "error", errstr);
            missing |= DEP_REDIS;
        }
    }
    if ((setup->needs & RT_WORKER_NEEDS_POSTGRES) && !conns->pg) {
        rc = rt_pg_connect(&conns->pg, cfg->database_url, setup->worker, errstr);
        count_attempt("postgres", rc == RT_OK);
        if (rc != RT_OK) {
            if (permanent(rc)) goto fatal;
            rt_log_warn("waiting for Postgres", "error", errstr);
            missing |= DEP_POSTGRES;
        }
    }
    if (!(missing & DEP_BROKER) && !*declared && setup->declare) {
        rc = setup->declare(setup->ctx, conns);
        if (rc == RT_OK) {
            *declared = true;
        } else if (rc == RT_ECONN) {
            missing |= DEP_BROKER; /* the broker went away meanwhile */
        } else {
            rt_log_error("cannot set up the queues", "error",
                         rt_amqp_errstr(conns->pulse ? conns->pulse : conns->broker));
            *fatal = rc;
            return -1;
        }
    }
    return missing;
fatal:
    rt_log_error("cannot connect; waiting would not help", "error", errstr);
    *fatal = rc;
    return -1;
}

int rt_worker_connect(const rt_config *cfg, const rt_worker_setup *setup, rt_worker_conns *conns)
{
    memset(conns, 0, sizeof *conns);
    bool declared = false;
    long delay = CONNECT_BACKOFF_BASE_MS;
    unsigned seed = (unsigned)time(NULL) ^ (unsigned)(setup->lane * 7919);
    int lanes = setup->lanes > 0 ? setup->lanes : 1;
    for (;;) {
        if (rt_stop_requested()) return RT_ESTOPPED;
        int fatal = RT_OK;
        int missing = connect_round(cfg, setup, conns, &declared, &fatal);
        if (missing < 0) return fatal;
        /* /healthz names what is missing; all up: the lane's health checks take over. */
        report_lane(setup->lane, lanes, missing);
        if (!missing) return RT_OK;
        /* Equal jitter: replicas that lost the same service do not come back in step. */
        long pause = delay / 2 + (long)(rand_r(&seed) % (unsigned)(delay / 2 + 1));
        if (!rt_stop_sleep_ms(pause)) return RT_ESTOPPED;
        delay = delay * 2 > CONNECT_BACKOFF_MAX_MS ? CONNECT_BACKOFF_MAX_MS : delay * 2;
    }
}

void rt_worker_disconnect(rt_worker_conns *conns)
{
    if (conns->pulse && conns->pulse != conns->broker) rt_amqp_free(conns->pulse);
    rt_amqp_free(conns->broker);
    if (conns->redis) conns->redis_ops->free(conns->redis);
    rt_pg_free(conns->pg);
    memset(conns, 0, sizeof *conns);
}

int rt_worker_exit_status(int rc)
{
    if (rc == RT_OK || rc == RT_ESTOPPED) return 0;
    return rc == RT_ECONFIG ? 2 : 1;
}

/* ---- settling ---- */

void rt_worker_pause(void) { (void)rt_stop_sleep_ms(500); }

/* Publishes the delayed copy of m that the plan asks for, then acks m. */
static int delay_copy(const rt_worker_settler *s, rt_amqp *src, const rt_amqp_message *m,
                      const rt_settle_plan *plan, const char *last_error)
{
    /* A Pulse message keeps what routed it: its exchange and its routes (CC). */
    const char *exchange = rt_amqp_message_header(m, "x-retrig-original-exchange");
    if (!exchange) exchange = m->exchange ? m->exchange : "";
    char routes[4096] = "";
    const char *old_routes = rt_amqp_message_header(m, "x-retrig-routes");
    if (old_routes) rt_utf8_copy(routes, sizeof routes, old_routes, NULL);
    for (size_t i = 0; i < m->cc_count; i++) {
        size_t n = strlen(routes);
        size_t len = strlen(m->cc[i]);
        if (n + len + 2 > sizeof routes) break; /* never half a route */
        if (n) routes[n++] = ',';
        memcpy(routes + n, m->cc[i], len + 1); /* (snprintf here failed -O3's truncation check) */
    }
    rt_amqp_header headers[] = {{"x-retrig-original-exchange", exchange},
                                {"x-retrig-routes", routes},
                                {"x-retrig-last-error", last_error}};
    rt_amqp_publish_opts opts = {.headers = headers,
                                 .header_count = 3,
                                 .attempt = plan->next_attempt,
                                 .message_id = m->message_id};
    char *body = s->retry_body ? s->retry_body(s->ctx, m, plan) : NULL;
    int rc = rt_amqp_publish_delayed(s->broker, s->retry_queue, plan->delay_ms,
                                     body ? body : m->body, body ? strlen(body) : m->len, &opts);
    free(body);
    if (rc != RT_OK) return rc;
    return rt_amqp_ack(src, m);
}

bool rt_worker_settle(const rt_worker_settler *s, rt_amqp *src, const rt_amqp_message *m,
                      const rt_outcome *o, double started)
{
    rt_settle_plan plan;
    rt_settle_plan_for(o, m->attempt, s->delays, s->ndelays, &plan);
    int rc = RT_OK;
    switch (plan.action) {
    case RT_SETTLE_DO_ACK: rc = rt_amqp_ack(src, m); break;
    case RT_SETTLE_DO_NOTHING: return false;
    case RT_SETTLE_DO_DEAD_LETTER:
        rt_log_warn("message dead-lettered", "reason", plan.reason, "queue", m->queue, "message_id",
                    m->message_id);
        rc = rt_amqp_dead_letter(src, m, plan.reason);
        break;
    case RT_SETTLE_DO_DELAY:
        rt_log_info(o->settle == RT_SETTLE_WAIT ? "busy; looking again later"
                                                : "upstream failed; retrying later",
                    "reason", o->reason, "queue", m->queue, "message_id", m->message_id);
        rc = delay_copy(s, src, m, &plan, o->reason);
        break;
    case RT_SETTLE_DO_REQUEUE:
        rt_log_warn("message requeued", "reason", o->reason, "queue", m->queue, "message_id",
                    m->message_id);
        rc = rt_amqp_nack(src, m, true);
        break;
    }
    if (rc != RT_OK)
        rt_log_warn("could not settle a message; the broker will redeliver it", "error",
                    rt_amqp_errstr(src));
    const rt_std_metrics *metrics = rt_metrics_std();
    char reason[RT_METRICS_LABEL_SIZE];
    rt_metrics_reason_label(plan.reason, reason, sizeof reason);
    rt_metric_inc(metrics->messages, plan.metric, reason);
    if (plan.action == RT_SETTLE_DO_DEAD_LETTER)
        rt_metric_inc(metrics->dead_lettered, m->queue, reason);
    if (started > 0)
        rt_metric_observe(metrics->processing_seconds, rt_metrics_now() - started, "single");
    return plan.pause;
}

/* ---- the consume loop ---- */

/* Handles one message and settles it as the handler says. */
static void consume_one(const rt_worker_loop *loop, rt_amqp *src, rt_amqp_message *m)
{
    rt_outcome o = {RT_SETTLE_ACK, ""};
    double started = rt_metrics_now();
    loop->handle(loop->ctx, src, m, &o);
    if (rt_worker_settle(loop->settler, src, m, &o, started)) rt_worker_pause();
}

void rt_worker_consume(const rt_worker_loop *loop)
{
    size_t batch_max = loop->batch_max > 1 && loop->handle_batch ? loop->batch_max : 1;
    rt_amqp_message *batch = calloc(batch_max, sizeof *batch);
    if (!batch) {
        rt_log_error("out of memory; stopping");
        rt_stop_request();
        return;
    }
    rt_amqp *first = loop->sources[0];
    rt_amqp *second = loop->sources[1] != first ? loop->sources[1] : NULL;
    int base_wait = loop->wait_ms > 0 ? loop->wait_ms : 500;
    bool idle = false;
    while (!rt_stop_requested()) {
        /* The safe point: health, a SIGHUP, the worker's periodic work. */
        rt_worker_health_lane(loop->lane, loop->lanes > 0 ? loop->lanes : 1, loop->conns);
        if (loop->apply_reloads && rt_worker_reload(loop->cfg) && loop->reloaded)
            loop->reloaded(loop->ctx);
        int wait = loop->tick ? loop->tick(loop->ctx, idle) : 0;
        if (rt_stop_requested()) break;
        if (wait <= 0) wait = second ? (base_wait < 200 ? base_wait : 200) : base_wait;
        int rc = rt_amqp_next(first, &batch[0], wait);
        if (rc == RT_OK) {
            idle = false;
            if (batch_max > 1) {
                size_t n = 1;
                while (n < batch_max && rt_amqp_next(first, &batch[n], 0) == RT_OK) n++;
                loop->handle_batch(loop->ctx, first, batch, n);
                for (size_t i = 0; i < n; i++) rt_amqp_message_free(&batch[i]);
            } else {
                consume_one(loop, first, &batch[0]);
                rt_amqp_message_free(&batch[0]);
            }
            continue;
        }
        idle = true;
        if (rc != RT_ETIMEDOUT && !rt_stop_requested()) {
            rt_log_warn("broker connection lost; reconnecting", "error", rt_amqp_errstr(first));
            (void)rt_stop_sleep_ms(200);
        }
        if (second && rt_amqp_next(second, &batch[0], 50) == RT_OK) {
            consume_one(loop, second, &batch[0]);
            rt_amqp_message_free(&batch[0]);
        }
    }
    free(batch);
}

/* The keys SIGHUP applies; every other change waits for a restart. */
static const char *const RELOADABLE[] = {"budget_limits",
                                         "budget_minimum",
                                         "decide_threshold",
                                         "log_level",
                                         "pool_prefixes",
                                         "retriggers_per_failure",
                                         "tiers",
                                         NULL};

static bool reloadable(const char *key)
{
    for (const char *const *k = RELOADABLE; *k; k++)
        if (!strcmp(*k, key)) return true;
    return false;
}

/* The printed configuration ("key = value" lines, secrets masked), malloc'd. */
static char *config_text(const rt_config *cfg)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (!out) return NULL;
    rt_config_print(cfg, out);
    if (fclose(out) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

static void swap_list(rt_config_list *a, rt_config_list *b)
{
    rt_config_list t = *a;
    *a = *b;
    *b = t;
}

bool rt_worker_reload(rt_config *cfg)
{
    if (!g_reload) return false;
    g_reload = 0;
    rt_log_level running_level = cfg->log_level;
    rt_config fresh;
    char errstr[RT_ERRSTR_SIZE] = "";
    char *old_text = NULL, *new_text = NULL;
    bool changed = false, reloaded = false;
    if (rt_config_load(&fresh, g_config_path, errstr) != RT_OK) {
        rt_log_set_level(running_level);
        rt_log_error("reload failed; keeping the running configuration", "error", errstr);
        rt_metric_inc(rt_metrics_std()->reloads, "failed");
        goto out;
    }
    old_text = config_text(cfg);
    new_text = config_text(&fresh);
    if (!old_text || !new_text) {
        rt_log_set_level(running_level);
        rt_log_error("reload failed: out of memory");
        rt_metric_inc(rt_metrics_std()->reloads, "failed");
        goto out;
    }
    /* Both texts list the keys in the same order, one line each. */
    char *save_old = NULL, *save_new = NULL;
    for (char *a = strtok_r(old_text, "\n", &save_old), *b = strtok_r(new_text, "\n", &save_new);
         a && b; a = strtok_r(NULL, "\n", &save_old), b = strtok_r(NULL, "\n", &save_new)) {
        if (!strcmp(a, b)) continue;
        char key[80];
        snprintf(key, sizeof key, "%.*s", (int)strcspn(b, " ="), b);
        if (reloadable(key)) {
            rt_log_info("reloaded", "key", key, "value", strchr(b, '=') ? strchr(b, '=') + 2 : "");
            changed = true;
        } else {
            rt_log_warn("changed key needs a restart; keeping the running value", "key", key);
        }
    }
    cfg->log_level = fresh.log_level;
    cfg->budget_minimum = fresh.budget_minimum;
    cfg->decide_threshold = fresh.decide_threshold;
    cfg->retriggers_per_failure = fresh.retriggers_per_failure;
    swap_list(&cfg->budget_limits, &fresh.budget_limits);
    swap_list(&cfg->pool_prefixes, &fresh.pool_prefixes);
    swap_list(&cfg->tiers, &fresh.tiers);
    rt_log_set_level(cfg->log_level);
    reloaded = true;
    rt_metric_inc(rt_metrics_std()->reloads, "ok");
    rt_log_info("configuration reloaded", "changed", changed ? "true" : "false");
out:
    free(old_text);
    free(new_text);
    rt_config_free(&fresh);
    return reloaded;
}

#define MAX_FLAGS 8

static void usage(const rt_worker_def *def, const rt_worker_flag *flags, size_t nflags, FILE *out)
{
    fprintf(out, "usage: retrig-%s [--config FILE] [--check-config]", def->name);
    for (size_t i = 0; i < nflags; i++) fprintf(out, " [--%s]", flags[i].name);
    fprintf(out,
            "\n"
            "\n"
            "%s\n"
            "\n"
            "options:\n"
            "  -c, --config FILE    configuration file (default: $RETRIG_CONFIG)\n"
            "      --check-config   load the configuration, check that the services it names\n"
            "                       answer, and exit (0 when all do)\n",
            def->summary);
    for (size_t i = 0; i < nflags; i++)
        fprintf(out, "      --%-15s%s\n", flags[i].name, flags[i].help);
    fprintf(out,
            "  -h, --help           print this help\n"
            "  -V, --version        print the version\n"
            "\n"
            "Configuration: defaults, then the file, then RETRIG_<KEY> environment variables;\n"
            "`retrig config --keys` lists every key. Logs are JSON lines on stderr.\n"
            "Exit codes: 0 success, 1 failure, 2 usage or configuration error.\n");
}

int rt_worker_check_services(const rt_config *cfg, const char *worker, unsigned needs,
                             const rt_worker_redis_ops *redis_ops)
{
    char errstr[RT_ERRSTR_SIZE] = "";
    int failures = 0;
    if (needs & RT_WORKER_NEEDS_BROKER) {
        rt_amqp *amqp = NULL;
        rt_amqp_options opts;
        rt_amqp_options_from_config(&opts, cfg, worker);
        if (rt_amqp_new(&amqp, &opts, errstr) != RT_OK ||
            rt_amqp_ensure_connected(amqp, 5000) != RT_OK) {
            rt_log_error("broker unreachable", "error", amqp ? rt_amqp_errstr(amqp) : errstr);
            failures++;
        }
        rt_amqp_free(amqp);
    }
    if (redis_ops) {
        rt_redis *redis = NULL;
        if (redis_ops->connect(&redis, cfg->redis_url, NULL, errstr) != RT_OK) {
            rt_log_error("redis unreachable", "error", errstr);
            failures++;
        }
        if (redis) redis_ops->free(redis);
    }
    if (needs & RT_WORKER_NEEDS_POSTGRES) {
        rt_pg *pg = NULL;
        if (rt_pg_connect(&pg, cfg->database_url, worker, errstr) != RT_OK) {
            rt_log_error("postgres unreachable", "error", errstr);
            failures++;
        }
        rt_pg_free(pg);
    }
    return failures;
}

int rt_worker_declare_queues(rt_amqp *broker, const rt_config *cfg,
                             const rt_amqp_work_queue *queues, size_t count)
{
    char dlx[300], dlq[300];
    snprintf(dlx, sizeof dlx, "%s.dlx", cfg->amqp_namespace);
    snprintf(dlq, sizeof dlq, "%s.dead-letter", cfg->amqp_namespace);
    rt_amqp_topology topo = {cfg->amqp_namespace, dlx, dlq, queues, count, 0};
    return rt_amqp_declare_topology(broker, &topo);
}

int rt_worker_bind_pulse(rt_amqp *pulse, const rt_config *cfg, const char *queue,
                         const char *const *events, size_t count)
{
    int rc = rt_amqp_declare_queue(pulse, queue, NULL);
    for (size_t i = 0; i < count && rc == RT_OK; i++) {
        char exchange[300];
        snprintf(exchange, sizeof exchange, "%s%s", cfg->pulse_exchange_prefix, events[i]);
        if (cfg->pulse_declare_exchanges) rc = rt_amqp_declare_exchange(pulse, exchange, "topic");
        for (size_t k = 0; k < cfg->pulse_routing_keys.count && rc == RT_OK; k++)
            rc = rt_amqp_bind_queue(pulse, queue, exchange, cfg->pulse_routing_keys.items[k]);
    }
    return rc;
}

void rt_worker_utc_day(char out[11])
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(out, 11, "%Y-%m-%d", &tm);
}

void rt_worker_utc_now(char out[32])
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int rt_worker_needs_taskcluster(const rt_config *cfg)
{
    if (cfg->dry_run || rt_taskcluster_has_credentials(cfg)) return 0;
    rt_log_error("taskcluster_client_id and a Taskcluster access token are needed unless "
                 "dry_run is true");
    return 1;
}

int rt_worker_check_result(int failures)
{
    if (!failures) rt_log_info("configuration and services ok");
    return failures ? 1 : 0;
}

int rt_worker_main(const rt_worker_def *def, int argc, char **argv)
{
    return rt_worker_main_flags(def, NULL, 0, argc, argv);
}

int rt_worker_main_flags(const rt_worker_def *def, const rt_worker_flag *flags, size_t nflags,
                         int argc, char **argv)
{
    if (nflags > MAX_FLAGS) nflags = MAX_FLAGS;
    /* Extra flags answer getopt with 256 + their index. */
    struct option options[5 + MAX_FLAGS] = {
        {"config", required_argument, NULL, 'c'},
        {"check-config", no_argument, NULL, 'k'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
    };
    for (size_t i = 0; i < nflags; i++)
        options[4 + i] = (struct option){flags[i].name, no_argument, NULL, 256 + (int)i};
    char program[64];
    snprintf(program, sizeof program, "retrig-%s", def->name);
    rt_log_init(program);
    signal(SIGPIPE, SIG_IGN);

    const char *config_path = NULL;
    int check_only = 0, c;
    while ((c = getopt_long(argc, argv, "c:hV", options, NULL)) != -1) {
        switch (c) {
        case 'c': config_path = optarg; break;
        case 'k': check_only = 1; break;
        case 'h': usage(def, flags, nflags, stdout); return 0;
        case 'V': printf("%s %s\n", program, RETRIG_VERSION); return 0;
        default:
            if (c >= 256 && c < 256 + (int)nflags) {
                *flags[c - 256].value = true;
                break;
            }
            usage(def, flags, nflags, stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "%s: unexpected argument '%s'\n", program, argv[optind]);
        usage(def, flags, nflags, stderr);
        return 2;
    }
    rt_config cfg;
    char errstr[RT_ERRSTR_SIZE] = "";
    if (rt_config_load(&cfg, config_path, errstr) != RT_OK) {
        rt_log_error("configuration error", "error", errstr);
        rt_config_free(&cfg);
        return 2;
    }
    g_config_path = config_path;
    if (check_only) {
        int status = def->check(&cfg);
        rt_config_free(&cfg);
        return status;
    }
    /* SIGTERM/SIGINT ask for a stop that every wait obeys (common/io/stop.h); SIGHUP only
     * sets a flag, applied between messages (rt_worker_reload). */
    rt_stop_install(cfg.drain_timeout_ms);
    struct sigaction hup = {.sa_handler = on_sighup};
    sigemptyset(&hup.sa_mask);
    sigaction(SIGHUP, &hup, NULL);
    rt_metrics_server *metrics = NULL;
    if (cfg.metrics_port > 0) {
        (void)rt_metrics_std(); /* the shared families show from the first scrape */
        if (rt_metrics_server_start(&metrics, cfg.metrics_bind, cfg.metrics_port, worker_ready,
                                    NULL, errstr) != RT_OK) {
            rt_log_error("cannot start the metrics endpoint", "error", errstr);
            rt_config_free(&cfg);
            return 1;
        }
        char port[16];
        snprintf(port, sizeof port, "%d", rt_metrics_server_port(metrics));
        rt_log_info("metrics endpoint listening", "bind", cfg.metrics_bind, "port", port);
    }
    int status = def->run(&cfg);
    rt_metrics_server_stop(metrics);
    rt_config_free(&cfg);
    return status;
}
