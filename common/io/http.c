/* SPDX-License-Identifier: MPL-2.0 */
/* http.c - libcurl client with connection reuse, size caps, timeouts and retries with
 * backoff. One easy handle per rt_http; see http.h for the contract. */
#include "common/io/http.h"

#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "common/io/curl_body.h"
#include "common/io/log.h"
#include "common/io/metrics.h"
#include "common/io/stop.h"

#define RT_HTTP_MAX_REDIRECTS 5

struct rt_http {
    CURL *curl;
    rt_http_options opts;
    char *ca_file;
    unsigned int seed;
    char errstr[RT_ERRSTR_SIZE];
    char curl_error[CURL_ERROR_SIZE];
};

/* What one attempt collects. */
typedef struct rt__http_xfer {
    rt_http_response *resp;
    size_t cap;
    long max_body;
    long announced; /* Content-Length over the cap, or -1 */
    bool too_big;
    bool oom;
} rt__http_xfer;

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_result = CURLE_FAILED_INIT;

static void curl_init_once(void) { curl_init_result = curl_global_init(CURL_GLOBAL_DEFAULT); }

static void real_sleep_ms(void *ctx, long ms)
{
    (void)ctx;
    (void)rt_stop_sleep_ms(ms); /* a stop request ends the pause (and the retries) */
}

/* Cuts a transfer still running once a stopping process's drain time is over. */
static int on_progress(void *ctx, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
    (void)ctx, (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
    return rt_stop_draining_over() ? 1 : 0;
}

int rt_http_new(rt_http **out, const rt_http_options *opts, char *errstr)
{
    char ignored[RT_ERRSTR_SIZE];
    int rc = RT_OK;
    rt_http *h = NULL;

    if (!errstr) errstr = ignored;
    *out = NULL;
    pthread_once(&curl_once, curl_init_once);
    if (curl_init_result != CURLE_OK) {
        rt_set_errstr(errstr, "libcurl global init failed: %s",
                      curl_easy_strerror(curl_init_result));
        return RT_EIO;
    }
    h = calloc(1, sizeof *h);
    if (!h) goto oom;
    if (opts) h->opts = *opts;
    if (h->opts.connect_timeout_ms <= 0) h->opts.connect_timeout_ms = 5000;
    if (h->opts.timeout_ms <= 0) h->opts.timeout_ms = 30000;
    if (h->opts.max_body_bytes <= 0) h->opts.max_body_bytes = 64L * 1024 * 1024;
    if (h->opts.max_attempts <= 0) h->opts.max_attempts = 4;
    if (h->opts.backoff_base_ms <= 0) h->opts.backoff_base_ms = 250;
    if (h->opts.backoff_max_ms <= 0) h->opts.backoff_max_ms = 30000;
    if (!h->opts.sleep_ms) h->opts.sleep_ms = real_sleep_ms;
    if (h->opts.ca_file) {
        h->ca_file = strdup(h->opts.ca_file);
        if (!h->ca_file) goto oom;
    }
    h->opts.ca_file = h->ca_file;
    h->seed =
        (unsigned int)time(NULL) ^ ((unsigned int)getpid() << 16) ^ (unsigned int)(uintptr_t)h;
    h->curl = curl_easy_init();
    if (!h->curl) {
        rt_set_errstr(errstr, "curl_easy_init failed");
        rc = RT_ENOMEM;
        goto out;
    }
    *out = h;
    h = NULL;
    goto out;
oom:
    rt_set_errstr(errstr, "out of memory creating the HTTP client");
    rc = RT_ENOMEM;
out:
    rt_http_free(h);
    return rc;
}

void rt_http_free(rt_http *h)
{
    if (!h) return;
    if (h->curl) curl_easy_cleanup(h->curl);
    free(h->ca_file);
    free(h);
}

const char *rt_http_errstr(const rt_http *h) { return h->errstr; }

void rt_http_response_free(rt_http_response *resp)
{
    if (!resp) return;
    free(resp->body);
    free(resp->content_type);
    free(resp->retry_after);
    memset(resp, 0, sizeof *resp);
}

/* Forgets the previous attempt's answer, keeping the attempt count. */
static int response_restart(rt_http_response *resp, size_t *cap)
{
    int attempts = resp->attempts;

    rt_http_response_free(resp);
    resp->attempts = attempts;
    resp->body = malloc(256);
    if (!resp->body) return RT_ENOMEM;
    resp->body[0] = '\0';
    *cap = 256;
    return RT_OK;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *userdata)
{
    rt__http_xfer *x = userdata;
    rt_curl_body b = {&x->resp->body, &x->resp->len, x->cap, 256, x->max_body, false, false};
    size_t taken = rt_curl_body_append(&b, data, size * nmemb); /* 0 aborts the transfer */
    x->cap = b.cap;
    x->too_big |= b.too_big;
    x->oom |= b.oom;
    return taken;
}
static size_t on_header(char *line, size_t size, size_t nmemb, void *userdata)
{
    rt__http_xfer *x = userdata;
    rt_http_response *resp = x->resp;
    size_t n = size * nmemb;
    char *value;

    if (n >= 5 && !strncmp(line, "HTTP/", 5)) { /* a new answer (after a redirect) */
        free(resp->content_type);
        free(resp->retry_after);
        resp->content_type = NULL;
        resp->retry_after = NULL;
        return n;
    }
    if ((value = rt_curl_header_value(line, n, "Content-Type"))) {
        free(resp->content_type);
        resp->content_type = value;
    } else if ((value = rt_curl_header_value(line, n, "Retry-After"))) {
        free(resp->retry_after);
        resp->retry_after = value;
    } else if ((value = rt_curl_header_value(line, n, "Content-Length"))) {
        long long announced = strtoll(value, NULL, 10);
        free(value);
        if (announced > x->max_body) {
            x->too_big = true;
            x->announced = (long)announced;
            return 0;
        }
    }
    return n;
}

/* Delay before the next attempt: Retry-After when given (capped), else exponential
 * backoff with jitter. */
static long next_delay_ms(rt_http *h, int attempt, const char *retry_after)
{
    long max = h->opts.backoff_max_ms;

    if (retry_after && *retry_after) {
        char *end = NULL;
        long seconds = strtol(retry_after, &end, 10);
        if (end && *end == '\0' && seconds >= 0) {
            return seconds > max / 1000 ? max : seconds * 1000;
        }
        time_t when = curl_getdate(retry_after, NULL);
        if (when != -1) {
            double ms = difftime(when, time(NULL)) * 1000.0;
            if (ms <= 0) return 0;
            return ms > (double)max ? max : (long)ms;
        }
    }
    long delay = h->opts.backoff_base_ms;
    for (int i = 1; i < attempt && delay < max; i++) delay *= 2;
    if (delay > max) delay = max;
    return delay / 2 + (long)(rand_r(&h->seed) % (unsigned long)(delay / 2 + 1));
}

static bool is_idempotent(const char *method)
{
    return strcmp(method, "POST") != 0 && strcmp(method, "PATCH") != 0;
}

static int setup_attempt(rt_http *h, const char *method, const char *url,
                         struct curl_slist *headers, const char *body, size_t body_len,
                         rt__http_xfer *x)
{
    CURL *c = h->curl;
    CURLcode e = CURLE_OK;

    curl_easy_reset(c);
#define SET(opt, val)                                                                              \
    if (e == CURLE_OK) e = curl_easy_setopt(c, opt, val)
    SET(CURLOPT_URL, url);
    SET(CURLOPT_NOSIGNAL, 1L);
    SET(CURLOPT_USERAGENT, "retrig/" RETRIG_VERSION);
    SET(CURLOPT_CONNECTTIMEOUT_MS, h->opts.connect_timeout_ms);
    SET(CURLOPT_TIMEOUT_MS, h->opts.timeout_ms);
    SET(CURLOPT_FOLLOWLOCATION, 1L);
    SET(CURLOPT_MAXREDIRS, (long)RT_HTTP_MAX_REDIRECTS);
    SET(CURLOPT_PROTOCOLS_STR, "http,https");
    /* An https URL never follows a redirect to http: the request, and the answer trusted,
     * would then travel in clear. */
    SET(CURLOPT_REDIR_PROTOCOLS_STR, strncasecmp(url, "https://", 8) == 0 ? "https" : "http,https");
    SET(CURLOPT_SSL_VERIFYPEER, 1L);
    SET(CURLOPT_SSL_VERIFYHOST, 2L);
    if (h->ca_file) SET(CURLOPT_CAINFO, h->ca_file);
    SET(CURLOPT_ACCEPT_ENCODING, "");
    SET(CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)h->opts.max_body_bytes);
    SET(CURLOPT_WRITEFUNCTION, on_body);
    SET(CURLOPT_WRITEDATA, x);
    SET(CURLOPT_HEADERFUNCTION, on_header);
    SET(CURLOPT_HEADERDATA, x);
    SET(CURLOPT_ERRORBUFFER, h->curl_error);
    SET(CURLOPT_NOPROGRESS, 0L);
    SET(CURLOPT_XFERINFOFUNCTION, on_progress);
    SET(CURLOPT_HTTPHEADER, headers);
    if (!strcmp(method, "HEAD")) {
        SET(CURLOPT_NOBODY, 1L);
    } else if (!strcmp(method, "GET") && !body) {
        SET(CURLOPT_HTTPGET, 1L);
    } else {
        SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(body ? body_len : 0));
        SET(CURLOPT_POSTFIELDS, body ? body : "");
        if (strcmp(method, "POST") != 0) SET(CURLOPT_CUSTOMREQUEST, method);
    }
#undef SET
    if (e != CURLE_OK) {
        rt_set_errstr(h->errstr, "%s: curl option failed: %s", method, curl_easy_strerror(e));
        return RT_EINVAL;
    }
    h->curl_error[0] = '\0';
    return RT_OK;
}

/* Counts one attempt in retrig_upstream_requests_total{service=host[:port], status=class}. */
static void count_attempt(const char *url, CURLcode e, long status)
{
    const char *host = strstr(url, "://");
    host = host ? host + 3 : url;
    const char *at = strchr(host, '@'), *slash = host + strcspn(host, "/?#");
    if (at && at < slash) host = at + 1; /* never a user or password in a label */
    char service[RT_METRICS_LABEL_SIZE], status_class[32];
    snprintf(service, sizeof service, "%.*s", (int)(slash - host), host);
    if (e == CURLE_OK && status > 0)
        snprintf(status_class, sizeof status_class, "%ldxx", status / 100);
    else
        snprintf(status_class, sizeof status_class, "%s",
                 e == CURLE_OPERATION_TIMEDOUT ? "timeout" : "error");
    rt_metric_inc(rt_metrics_std()->upstream_requests, service, status_class);
}

/* The request's header lines for curl, with "Expect:" (no 100-continue wait); NULL when out
 * of memory. */
static struct curl_slist *header_list(const rt_http_header *headers, size_t nheaders)
{
    struct curl_slist *list = NULL;
    for (size_t i = 0; i < nheaders; i++) {
        size_t need = strlen(headers[i].name) + strlen(headers[i].value) + 3;
        char *line = malloc(need);
        if (!line) goto oom;
        snprintf(line, need, "%s: %s", headers[i].name, headers[i].value);
        struct curl_slist *grown = curl_slist_append(list, line);
        free(line);
        if (!grown) goto oom;
        list = grown;
    }
    struct curl_slist *grown = curl_slist_append(list, "Expect:");
    if (grown) return grown;
oom:
    curl_slist_free_all(list);
    return NULL;
}

/* What one attempt's outcome (curl's code e, the answer's status) means: RT_OK for a 2xx,
 * else the error, written to h->errstr; *retryable when another attempt may succeed (a
 * method that is not idempotent only when nothing reached the server, or on 429/503). */
static int attempt_result(rt_http *h, const char *method, const char *shown, CURLcode e,
                          long status, int attempt, bool idempotent, bool *retryable)
{
    *retryable = false;
    switch (e) {
    case CURLE_OK:
        if (status >= 200 && status < 300) return RT_OK;
        if (status == 429 || status >= 500) {
            *retryable = idempotent || status == 429 || status == 503;
            rt_set_errstr(h->errstr, "%s %s: HTTP %ld after %d attempt%s", method, shown, status,
                          attempt, attempt == 1 ? "" : "s");
            return RT_ERETRY;
        }
        rt_set_errstr(h->errstr, "%s %s: HTTP %ld", method, shown, status);
        return RT_EUPSTREAM;
    case CURLE_OPERATION_TIMEDOUT:
        *retryable = idempotent;
        rt_set_errstr(h->errstr, "%s %s: timed out (%ld ms per attempt) after %d attempt%s", method,
                      shown, h->opts.timeout_ms, attempt, attempt == 1 ? "" : "s");
        return RT_ETIMEDOUT;
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
        rt_set_errstr(h->errstr, "%s %s: %s", method, shown,
                      h->curl_error[0] ? h->curl_error : curl_easy_strerror(e));
        return RT_EINVAL;
    case CURLE_TOO_MANY_REDIRECTS:
        rt_set_errstr(h->errstr, "%s %s: more than %d redirects", method, shown,
                      RT_HTTP_MAX_REDIRECTS);
        return RT_EUPSTREAM;
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
        rt_set_errstr(h->errstr, "%s %s: TLS verification failed: %s", method, shown,
                      h->curl_error[0] ? h->curl_error : curl_easy_strerror(e));
        return RT_ECONN;
    default:
        /* Nothing was sent when the connection could not be made, so any method may try
         * again; a connection lost later may have reached the server. */
        *retryable = idempotent || e == CURLE_COULDNT_CONNECT || e == CURLE_COULDNT_RESOLVE_HOST ||
                     e == CURLE_COULDNT_RESOLVE_PROXY;
        rt_set_errstr(h->errstr, "%s %s: %s after %d attempt%s", method, shown,
                      h->curl_error[0] ? h->curl_error : curl_easy_strerror(e), attempt,
                      attempt == 1 ? "" : "s");
        return RT_ECONN;
    }
}

static void log_retry(const rt_http *h, const char *shown, long answered, int attempt, long delay)
{
    if (!rt_log_enabled(RT_LOG_WARN)) return;
    char status[24], attempt_text[16], delay_text[24];
    snprintf(status, sizeof status, "%ld", answered);
    snprintf(attempt_text, sizeof attempt_text, "%d", attempt);
    snprintf(delay_text, sizeof delay_text, "%ld", delay);
    rt_log_warn("upstream call failed, retrying", "url", shown, "status", status, "attempt",
                attempt_text, "delay_ms", delay_text, "error", h->errstr);
}

int rt_http_request(rt_http *h, const char *method, const char *url, const rt_http_header *headers,
                    size_t nheaders, const char *body, size_t body_len, rt_http_response *resp)
{
    char shown[160];
    int rc = RT_OK;
    bool idempotent = is_idempotent(method);

    memset(resp, 0, sizeof *resp);
    h->errstr[0] = '\0';
    rt_redact(url, shown, sizeof shown);
    struct curl_slist *list = header_list(headers, nheaders);
    if (!list) goto oom;

    for (int attempt = 1;; attempt++) {
        rt__http_xfer x = {.resp = resp, .max_body = h->opts.max_body_bytes, .announced = -1};
        resp->attempts = attempt;
        rc = response_restart(resp, &x.cap);
        if (rc != RT_OK) goto oom;
        rc = setup_attempt(h, method, url, list, body, body_len, &x);
        if (rc != RT_OK) goto out;
        CURLcode e = curl_easy_perform(h->curl);
        curl_easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE, &resp->status);
        count_attempt(url, e, resp->status);
        if (x.oom) goto oom;
        if (x.too_big || e == CURLE_FILESIZE_EXCEEDED) {
            if (x.announced >= 0) {
                rt_set_errstr(h->errstr, "%s %s: body of %ld bytes is over the %ld-byte cap",
                              method, shown, x.announced, h->opts.max_body_bytes);
            } else {
                rt_set_errstr(h->errstr, "%s %s: body over the %ld-byte cap", method, shown,
                              h->opts.max_body_bytes);
            }
            rc = RT_ETOOBIG;
            goto out;
        }
        bool retryable;
        rc = attempt_result(h, method, shown, e, resp->status, attempt, idempotent, &retryable);
        if (rc == RT_OK || !retryable || attempt >= h->opts.max_attempts) goto out;
        if (rt_stop_requested()) goto out; /* stopping: the caller's message goes back */

        long answered = e == CURLE_OK ? resp->status : 0; /* 0: no complete answer */
        long delay = next_delay_ms(h, attempt, answered ? resp->retry_after : NULL);
        log_retry(h, shown, answered, attempt, delay);
        h->opts.sleep_ms(h->opts.sleep_ctx, delay);
    }

oom:
    rt_set_errstr(h->errstr, "%s %s: out of memory", method, shown);
    rc = RT_ENOMEM;
out:
    curl_slist_free_all(list);
    if (rc == RT_OK) h->errstr[0] = '\0';
    if (!resp->body) resp->body = calloc(1, 1);
    return rc;
}

int rt_http_get(rt_http *h, const char *url, rt_http_response *resp)
{
    return rt_http_request(h, "GET", url, NULL, 0, NULL, 0, resp);
}

char *rt_http_url_escape(const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = strlen(s);
    char *out = malloc(n * 3 + 1);
    char *p = out;

    if (!out) return NULL;
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if ((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ||
            *c == '-' || *c == '.' || *c == '_' || *c == '~') {
            *p++ = (char)*c;
        } else {
            *p++ = '%';
            *p++ = hex[*c >> 4];
            *p++ = hex[*c & 15];
        }
    }
    *p = '\0';
    return out;
}
