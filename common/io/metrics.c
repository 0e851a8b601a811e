/* SPDX-License-Identifier: MPL-2.0 */
/* metrics.c - the Prometheus registry (fixed-size series, one mutex), its text exposition
 * and the libmicrohttpd server for /metrics and /healthz. See metrics.h. */
#include "common/io/metrics.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "common/io/log.h"

#define NAME_SIZE       96
#define HELP_SIZE       256
#define LABEL_NAME_SIZE 32
#define OVERFLOW_LABEL  "_other"

typedef enum { KIND_COUNTER, KIND_GAUGE, KIND_HISTOGRAM } metric_kind;

typedef struct series {
    char labels[RT_METRICS_MAX_LABELS][RT_METRICS_LABEL_SIZE];
    double value; /* counter, gauge; the sum of a histogram */
    unsigned long long count;
    unsigned long long buckets[RT_METRICS_MAX_BUCKETS]; /* per bucket, not cumulative */
} series;

struct rt_metric {
    char name[NAME_SIZE];
    char help[HELP_SIZE];
    metric_kind kind;
    size_t nlabels;
    char label_names[RT_METRICS_MAX_LABELS][LABEL_NAME_SIZE];
    double bounds[RT_METRICS_MAX_BUCKETS];
    size_t nbounds;
    size_t nseries; /* used, the overflow series (last slot) not counted */
    bool overflow_used;
    series series[RT_METRICS_MAX_SERIES];
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static rt_metric *g_families[RT_METRICS_MAX_FAMILIES];
static size_t g_nfamilies;

static bool valid_name(const char *s, bool colon)
{
    if (!s || !*s) return false;
    for (const char *p = s; *p; p++) {
        bool alpha = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' ||
                     (colon && *p == ':');
        if (!alpha && !(p > s && *p >= '0' && *p <= '9')) return false;
    }
    return true;
}

/* Splits "a,b" into names; false when invalid or too many. */
static bool parse_labels(const char *labels, char names[][LABEL_NAME_SIZE], size_t *n)
{
    *n = 0;
    if (!labels || !*labels) return true;
    const char *p = labels;
    while (*p) {
        const char *end = p + strcspn(p, ",");
        size_t len = (size_t)(end - p);
        if (*n == RT_METRICS_MAX_LABELS || len == 0 || len >= LABEL_NAME_SIZE) return false;
        memcpy(names[*n], p, len);
        names[*n][len] = '\0';
        if (!valid_name(names[*n], false) || !strcmp(names[*n], "le")) return false;
        (*n)++;
        p = *end ? end + 1 : end;
    }
    return true;
}

static rt_metric *register_family(metric_kind kind, const char *name, const char *help,
                                  const char *labels, const double *bounds, size_t nbounds)
{
    char names[RT_METRICS_MAX_LABELS][LABEL_NAME_SIZE] = {
        {0}}; /* every build type: no maybe-uninitialized */
    size_t nlabels = 0;
    if (!valid_name(name, true) || strlen(name) >= NAME_SIZE ||
        !parse_labels(labels, names, &nlabels) || nbounds > RT_METRICS_MAX_BUCKETS - 1) {
        rt_log_error("metric not registered: bad name, labels or buckets", "metric", name);
        return NULL;
    }
    for (size_t i = 1; i < nbounds; i++) {
        if (!(bounds[i] > bounds[i - 1])) {
            rt_log_error("metric not registered: buckets must increase", "metric", name);
            return NULL;
        }
    }
    rt_metric *m = NULL;
    pthread_mutex_lock(&g_lock);
    for (size_t i = 0; i < g_nfamilies; i++) {
        rt_metric *f = g_families[i];
        if (strcmp(f->name, name) != 0) continue;
        bool same = f->kind == kind && f->nlabels == nlabels;
        for (size_t k = 0; same && k < nlabels; k++) same = !strcmp(f->label_names[k], names[k]);
        if (same)
            m = f;
        else
            rt_log_error("metric registered twice with different types or labels", "metric", name);
        goto out;
    }
    if (g_nfamilies == RT_METRICS_MAX_FAMILIES || !(m = calloc(1, sizeof *m))) {
        rt_log_error("metric not registered: registry full", "metric", name);
        goto out;
    }
    snprintf(m->name, sizeof m->name, "%s", name);
    snprintf(m->help, sizeof m->help, "%s", help ? help : "");
    m->kind = kind;
    m->nlabels = nlabels;
    memcpy(m->label_names, names, sizeof names);
    m->nbounds = nbounds;
    if (nbounds) memcpy(m->bounds, bounds, nbounds * sizeof *bounds);
    for (size_t k = 0; k < nlabels; k++)
        snprintf(m->series[RT_METRICS_MAX_SERIES - 1].labels[k], RT_METRICS_LABEL_SIZE, "%s",
                 OVERFLOW_LABEL);
    g_families[g_nfamilies++] = m;
out:
    pthread_mutex_unlock(&g_lock);
    return m;
}

rt_metric *rt_metrics_counter(const char *name, const char *help, const char *labels)
{
    return register_family(KIND_COUNTER, name, help, labels, NULL, 0);
}

rt_metric *rt_metrics_gauge(const char *name, const char *help, const char *labels)
{
    return register_family(KIND_GAUGE, name, help, labels, NULL, 0);
}

rt_metric *rt_metrics_histogram(const char *name, const char *help, const char *labels,
                                const double *bounds, size_t nbounds)
{
    return register_family(KIND_HISTOGRAM, name, help, labels, bounds, nbounds);
}

/* The series for the label values in ap; under g_lock. Creates it when there is room,
 * else the overflow series. create false: NULL when absent. */
static series *find_series(rt_metric *m, va_list ap, bool create)
{
    const char *values[RT_METRICS_MAX_LABELS];
    for (size_t k = 0; k < m->nlabels; k++) {
        values[k] = va_arg(ap, const char *);
        if (!values[k]) values[k] = "";
    }
    for (size_t i = 0; i < m->nseries; i++) {
        series *s = &m->series[i];
        bool same = true;
        for (size_t k = 0; same && k < m->nlabels; k++)
            same = !strncmp(s->labels[k], values[k], RT_METRICS_LABEL_SIZE - 1);
        if (same) return s;
    }
    if (!create) return NULL;
    if (m->nseries == RT_METRICS_MAX_SERIES - 1) {
        m->overflow_used = true;
        return &m->series[RT_METRICS_MAX_SERIES - 1];
    }
    series *s = &m->series[m->nseries++];
    for (size_t k = 0; k < m->nlabels; k++)
        snprintf(s->labels[k], RT_METRICS_LABEL_SIZE, "%s", values[k]);
    return s;
}

static void update(rt_metric *m, metric_kind kind, bool set, double amount, va_list ap)
{
    if (!m || m->kind != kind) return;
    pthread_mutex_lock(&g_lock);
    series *s = find_series(m, ap, true);
    if (kind == KIND_HISTOGRAM) {
        size_t b = 0;
        while (b < m->nbounds && amount > m->bounds[b]) b++;
        s->buckets[b]++;
        s->count++;
        s->value += amount;
    } else if (set) {
        s->value = amount;
    } else {
        s->value += amount;
    }
    pthread_mutex_unlock(&g_lock);
}

void rt_metric_inc(rt_metric *m, ...)
{
    va_list ap;
    va_start(ap, m);
    update(m, KIND_COUNTER, false, 1, ap);
    va_end(ap);
}

void rt_metric_add(rt_metric *m, double amount, ...)
{
    va_list ap;
    va_start(ap, amount);
    if (amount >= 0) update(m, KIND_COUNTER, false, amount, ap);
    va_end(ap);
}

void rt_metric_set(rt_metric *m, double value, ...)
{
    va_list ap;
    va_start(ap, value);
    update(m, KIND_GAUGE, true, value, ap);
    va_end(ap);
}

void rt_metric_gauge_add(rt_metric *m, double amount, ...)
{
    va_list ap;
    va_start(ap, amount);
    update(m, KIND_GAUGE, false, amount, ap);
    va_end(ap);
}

void rt_metric_observe(rt_metric *m, double value, ...)
{
    va_list ap;
    va_start(ap, value);
    update(m, KIND_HISTOGRAM, false, value, ap);
    va_end(ap);
}

double rt_metric_value(rt_metric *m, ...)
{
    if (!m) return 0;
    va_list ap;
    va_start(ap, m);
    pthread_mutex_lock(&g_lock);
    series *s = find_series(m, ap, false);
    double v = !s ? 0 : m->kind == KIND_HISTOGRAM ? (double)s->count : s->value;
    pthread_mutex_unlock(&g_lock);
    va_end(ap);
    return v;
}

/* ---- exposition ---- */

static void put_escaped(FILE *out, const char *s, bool quotes)
{
    for (const char *p = s; *p; p++) {
        if (*p == '\\')
            fputs("\\\\", out);
        else if (*p == '\n')
            fputs("\\n", out);
        else if (quotes && *p == '"')
            fputs("\\\"", out);
        else
            fputc(*p, out);
    }
}

static void put_number(FILE *out, double v)
{
    if (v == (double)(long long)v && v < 9e15 && v > -9e15)
        fprintf(out, "%lld", (long long)v);
    else
        fprintf(out, "%.17g", v);
}

/* {a="x",b="y"[,le="0.5"]} or nothing. */
static void put_labels(FILE *out, const rt_metric *m, const series *s, const char *le)
{
    if (!m->nlabels && !le) return;
    fputc('{', out);
    for (size_t k = 0; k < m->nlabels; k++) {
        fprintf(out, "%s%s=\"", k ? "," : "", m->label_names[k]);
        put_escaped(out, s->labels[k], true);
        fputc('"', out);
    }
    if (le) fprintf(out, "%sle=\"%s\"", m->nlabels ? "," : "", le);
    fputc('}', out);
}

static void render_series(FILE *out, const rt_metric *m, const series *s)
{
    if (m->kind != KIND_HISTOGRAM) {
        fputs(m->name, out);
        put_labels(out, m, s, NULL);
        fputc(' ', out);
        put_number(out, s->value);
        fputc('\n', out);
        return;
    }
    unsigned long long cumulative = 0;
    for (size_t b = 0; b <= m->nbounds; b++) {
        char le[40];
        if (b < m->nbounds)
            snprintf(le, sizeof le, "%g", m->bounds[b]);
        else
            snprintf(le, sizeof le, "+Inf");
        cumulative += s->buckets[b];
        fprintf(out, "%s_bucket", m->name);
        put_labels(out, m, s, le);
        fprintf(out, " %llu\n", cumulative);
    }
    fprintf(out, "%s_sum", m->name);
    put_labels(out, m, s, NULL);
    fputc(' ', out);
    put_number(out, s->value);
    fprintf(out, "\n%s_count", m->name);
    put_labels(out, m, s, NULL);
    fprintf(out, " %llu\n", s->count);
}

char *rt_metrics_render(void)
{
    static const char *const types[] = {"counter", "gauge", "histogram"};
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (!out) return NULL;
    pthread_mutex_lock(&g_lock);
    for (size_t i = 0; i < g_nfamilies; i++) {
        const rt_metric *m = g_families[i];
        fprintf(out, "# HELP %s ", m->name);
        put_escaped(out, m->help, false);
        fprintf(out, "\n# TYPE %s %s\n", m->name, types[m->kind]);
        for (size_t k = 0; k < m->nseries; k++) render_series(out, m, &m->series[k]);
        if (m->overflow_used) render_series(out, m, &m->series[RT_METRICS_MAX_SERIES - 1]);
    }
    pthread_mutex_unlock(&g_lock);
    if (fclose(out) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

void rt_metrics_reason_label(const char *reason, char *out, size_t size)
{
    size_t n = 0;
    if (size == 0) return;
    for (const char *p = reason ? reason : ""; *p && n + 1 < size && n + 1 < RT_METRICS_LABEL_SIZE;
         p++) {
        bool ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                  (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || *p == '.';
        if (!ok) break;
        out[n++] = *p;
    }
    out[n] = '\0';
    if (n == 0) snprintf(out, size, "none");
}

double rt_metrics_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- the shared families ---- */

static rt_std_metrics g_std;
static pthread_once_t g_std_once = PTHREAD_ONCE_INIT;

static void register_std(void)
{
    static const double processing[] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                        0.25,  0.5,    1,     2.5,  5,     10,   30};
    static const double latency[] = {10,   30,   60,   120,  300,   600,
                                     1200, 1800, 3600, 7200, 14400, 21600};
    g_std.messages =
        rt_metrics_counter("retrig_messages_total",
                           "Messages handled, by how they were settled and why", "outcome,reason");
    g_std.processing_seconds =
        rt_metrics_histogram("retrig_message_processing_seconds",
                             "Time to handle and settle a message (path: single, or batch for "
                             "a whole batch of the fast path)",
                             "path", processing, sizeof processing / sizeof processing[0]);
    g_std.dead_lettered = rt_metrics_counter(
        "retrig_dead_lettered_total", "Messages sent to the dead-letter queue", "queue,reason");
    g_std.retriggers_requested =
        rt_metrics_counter("retrig_retriggers_requested_total",
                           "Retriggers requested (budget spent) by platform", "platform");
    g_std.retrigger_actions =
        rt_metrics_counter("retrig_retrigger_actions_total",
                           "Outcomes of retrigger requests (triggered, dry-run, ...)", "outcome");
    g_std.hooks_refused = rt_metrics_counter(
        "retrig_hooks_refused_total",
        "Hook calls an actions.json asked for that retrig refused to sign (rt_hook_check), by "
        "worker and reason (project, hook-group, hook-id, scheduler, task-group, task, push, "
        "credentials)",
        "worker,reason");
    g_std.budget_spent =
        rt_metrics_gauge("retrig_budget_spent",
                         "Retriggers spent today (UTC) by platform, as last seen", "platform");
    g_std.budget_left = rt_metrics_gauge(
        "retrig_budget_left", "Retriggers left today (UTC) by platform, as last seen", "platform");
    g_std.upstream_requests = rt_metrics_counter(
        "retrig_upstream_requests_total",
        "Upstream HTTP attempts by host and status class (2xx..5xx, timeout, error)",
        "service,status");
    g_std.decisions =
        rt_metrics_counter("retrig_decisions_total", "Sets decided, by verdict", "verdict");
    g_std.decision_latency = rt_metrics_histogram("retrig_decision_latency_seconds",
                                                  "From the set's creation to its decision", NULL,
                                                  latency, sizeof latency / sizeof latency[0]);
    g_std.sets_in_flight =
        rt_metrics_gauge("retrig_sets_in_flight", "Retrigger sets not decided yet", NULL);
    g_std.up = rt_metrics_gauge(
        "retrig_dependency_up",
        "1 while the connection to a dependency is up (broker, redis, postgres)", "dependency");
    g_std.reloads = rt_metrics_counter("retrig_config_reloads_total",
                                       "Configuration reloads on SIGHUP, by result", "result");
    g_std.connection_attempts = rt_metrics_counter(
        "retrig_connection_attempts_total",
        "Attempts to connect to a dependency while a worker waits for it (broker, pulse, "
        "redis, postgres), by result (ok, failed)",
        "dependency,result");
}

const rt_std_metrics *rt_metrics_std(void)
{
    pthread_once(&g_std_once, register_std);
    return &g_std;
}

/* ---- the HTTP endpoint ---- */

struct rt_metrics_server {
    struct MHD_Daemon *daemon;
    rt_metrics_ready_fn ready;
    void *ctx;
    int port;
};

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned int status, char *body,
                             const char *content_type)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
    enum MHD_Result r = MHD_queue_response(conn, status, resp);
    MHD_destroy_response(resp);
    return r;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **req_cls)
{
    rt_metrics_server *s = cls;
    (void)version;
    (void)upload_data;
    (void)req_cls;
    if (*upload_data_size) return MHD_NO; /* no request bodies here */
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, strdup("method not allowed\n"),
                     "text/plain");
    if (!strcmp(url, "/metrics")) {
        char *text = rt_metrics_render();
        if (!text) return MHD_NO;
        return reply(conn, MHD_HTTP_OK, text, "text/plain; version=0.0.4; charset=utf-8");
    }
    if (!strcmp(url, "/healthz")) {
        char why[200] = "";
        bool ready = !s->ready || s->ready(s->ctx, why, sizeof why);
        char *body = malloc(sizeof why + 16);
        if (!body) return MHD_NO;
        snprintf(body, sizeof why + 16, ready ? "ready\n" : "not ready: %s\n", why);
        return reply(conn, ready ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE, body, "text/plain");
    }
    return reply(conn, MHD_HTTP_NOT_FOUND, strdup("not found: try /metrics or /healthz\n"),
                 "text/plain");
}

int rt_metrics_server_start(rt_metrics_server **out, const char *bind_address, int port,
                            rt_metrics_ready_fn ready, void *ctx, char *errstr)
{
    *out = NULL;
    struct sockaddr_in v4 = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    struct sockaddr_in6 v6 = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port)};
    const struct sockaddr *addr = NULL;
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD;
    if (port < 0 || port > 65535 || !bind_address) {
        rt_set_errstr(errstr, "metrics: bad port %d", port);
        return RT_EINVAL;
    }
    if (inet_pton(AF_INET, bind_address, &v4.sin_addr) == 1) {
        addr = (const struct sockaddr *)&v4;
    } else if (inet_pton(AF_INET6, bind_address, &v6.sin6_addr) == 1) {
        addr = (const struct sockaddr *)&v6;
        flags |= MHD_USE_IPv6;
    } else {
        rt_set_errstr(errstr, "bad value for 'metrics_bind': '%s' is not an IPv4 or IPv6 address",
                      bind_address);
        return RT_EINVAL;
    }
    rt_metrics_server *s = calloc(1, sizeof *s);
    if (!s) return RT_ENOMEM;
    s->ready = ready;
    s->ctx = ctx;
    s->daemon = MHD_start_daemon(flags, (uint16_t)port, NULL, NULL, on_request, s,
                                 MHD_OPTION_SOCK_ADDR, addr, MHD_OPTION_CONNECTION_LIMIT, 32u,
                                 MHD_OPTION_CONNECTION_TIMEOUT, 10u, MHD_OPTION_END);
    if (!s->daemon) {
        rt_set_errstr(
            errstr, "metrics: cannot listen on %s port %d (in use, or not an address of this host)",
            bind_address, port);
        free(s);
        return RT_ECONN;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info ? info->port : port;
    *out = s;
    return RT_OK;
}

int rt_metrics_server_port(const rt_metrics_server *s) { return s ? s->port : 0; }

void rt_metrics_server_stop(rt_metrics_server *s)
{
    if (!s) return;
    MHD_stop_daemon(s->daemon);
    free(s);
}
