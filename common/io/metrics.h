/* SPDX-License-Identifier: MPL-2.0 */
/* metrics.h - a process-wide registry of Prometheus counters, gauges and histograms with
 * labels, its text exposition, and a small HTTP server (libmicrohttpd) for /metrics and
 * /healthz.
 *
 * Design. A metric family is registered once (name, help, up to RT_METRICS_MAX_LABELS
 * label names, buckets for a histogram) and returns a handle that lives until the process
 * exits. Each family has room for RT_METRICS_MAX_SERIES label combinations, allocated at
 * registration: updating a metric never allocates. Label values are cut to
 * RT_METRICS_LABEL_SIZE - 1 bytes; when a family is full, new combinations are counted in
 * one overflow series whose label values are all "_other", so a runaway label can never
 * eat memory. Registering a name again returns the same family (when the type and labels
 * match), so any module may register what it uses.
 *
 * Thread-safety: every function may be called from any thread (one mutex guards the
 * registry; the exposition thread takes it while it renders). Label values are passed as
 * variadic const char * arguments, exactly as many as the family has label names (NULL
 * counts as ""). */
#ifndef RETRIG_COMMON_METRICS_H
#define RETRIG_COMMON_METRICS_H

#include "common/not_core.h"

#include <stdbool.h>
#include <stddef.h>

#include "common/core/errors.h"

#define RT_METRICS_MAX_FAMILIES 64
#define RT_METRICS_MAX_SERIES   128
#define RT_METRICS_MAX_LABELS   3
#define RT_METRICS_LABEL_SIZE   64
#define RT_METRICS_MAX_BUCKETS  16

typedef struct rt_metric rt_metric;

/* Register a family. labels is a comma-separated list of label names ("outcome,reason"),
 * or NULL for none. NULL when the registry is full, the name or labels are invalid, or the
 * name exists with another type or labels (logged). Updating a NULL handle is a no-op. */
rt_metric *rt_metrics_counter(const char *name, const char *help, const char *labels);
rt_metric *rt_metrics_gauge(const char *name, const char *help, const char *labels);
/* bounds: increasing upper bounds in the metric's unit (seconds); +Inf is implicit. */
rt_metric *rt_metrics_histogram(const char *name, const char *help, const char *labels,
                                const double *bounds, size_t nbounds);

/* Counters: add a non-negative amount. */
void rt_metric_inc(rt_metric *m, ...);
void rt_metric_add(rt_metric *m, double amount, ...);
/* Gauges: set to a value, or add (may be negative). */
void rt_metric_set(rt_metric *m, double value, ...);
void rt_metric_gauge_add(rt_metric *m, double amount, ...);
/* Histograms: record one observation. */
void rt_metric_observe(rt_metric *m, double value, ...);
/* The current value of a counter or gauge series (0 when absent), the observation count
 * of a histogram series; for tests. */
double rt_metric_value(rt_metric *m, ...);

/* Renders every family in the Prometheus text exposition format (version 0.0.4). Returns a
 * malloc'd string (the caller frees it) or NULL when out of memory. */
char *rt_metrics_render(void);

/* Copies the leading word of a free-form reason ("upstream-error: GET ...: HTTP 503") into
 * out as a bounded label value ("upstream-error"): letters, digits, '-', '_' and '.' up to
 * the first other character. "" becomes "none". */
void rt_metrics_reason_label(const char *reason, char *out, size_t size);

/* Seconds from a monotonic clock, for durations. */
double rt_metrics_now(void);

/* ---- the metrics every worker shares (registered on first use) ---- */

typedef struct rt_std_metrics {
    rt_metric *messages;             /* counter retrig_messages_total{outcome,reason} */
    rt_metric *processing_seconds;   /* histogram retrig_message_processing_seconds{path} */
    rt_metric *dead_lettered;        /* counter retrig_dead_lettered_total{queue,reason} */
    rt_metric *retriggers_requested; /* counter retrig_retriggers_requested_total{platform} */
    rt_metric *retrigger_actions;    /* counter retrig_retrigger_actions_total{outcome} */
    rt_metric *hooks_refused;        /* counter retrig_hooks_refused_total{worker,reason} */
    rt_metric *budget_spent;         /* gauge retrig_budget_spent{platform} (today, UTC) */
    rt_metric *budget_left;          /* gauge retrig_budget_left{platform} */
    rt_metric *upstream_requests;    /* counter retrig_upstream_requests_total{service,status} */
    rt_metric *decisions;            /* counter retrig_decisions_total{verdict} */
    rt_metric *decision_latency;     /* histogram retrig_decision_latency_seconds */
    rt_metric *sets_in_flight;       /* gauge retrig_sets_in_flight */
    rt_metric *up;                   /* gauge retrig_dependency_up{dependency} */
    rt_metric *reloads;              /* counter retrig_config_reloads_total{result} */
    rt_metric
        *connection_attempts; /* counter retrig_connection_attempts_total{dependency,result} */
} rt_std_metrics;

/* The shared families (registered once, thread-safe). Never NULL; a member may be NULL
 * only when the registry was full, which updates treat as a no-op. */
const rt_std_metrics *rt_metrics_std(void);

/* ---- the HTTP endpoint ---- */

typedef struct rt_metrics_server rt_metrics_server;

/* Asked by /healthz from the server's thread: true when ready; otherwise writes why
 * (a short line) into why. Must be thread-safe. */
typedef bool (*rt_metrics_ready_fn)(void *ctx, char *why, size_t size);

/* Serves GET /metrics (text exposition) and GET /healthz (200 "ready", or 503 with the
 * reason) on bind_address:port (an IPv4 or IPv6 literal) from a thread of its own.
 * port 0 picks a free port (see rt_metrics_server_port). RT_ECONN when the address cannot
 * be bound, RT_EINVAL for a bad address, with errstr (RT_ERRSTR_SIZE) saying why. */
RT_MUSTCHECK int rt_metrics_server_start(rt_metrics_server **out, const char *bind_address,
                                         int port, rt_metrics_ready_fn ready, void *ctx,
                                         char *errstr);
/* The port the server listens on. */
int rt_metrics_server_port(const rt_metrics_server *s);
/* Stops serving and frees; NULL is a no-op. */
void rt_metrics_server_stop(rt_metrics_server *s);

#endif
