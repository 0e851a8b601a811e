/* SPDX-License-Identifier: MPL-2.0 */
/* github_client.c - the GitHub REST client: libcurl, rate limits, budget, redirects. */
#include "common/io/github_client.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "common/core/github.h"
#include "common/io/curl_body.h"
#include "common/io/log.h"
#include "common/io/stop.h"

struct rt_gh_client {
    CURL *curl;
    rt_gh_client_options opts;
    char *api_url, *token, *ca_file, *auth_header;
    long requests;
    struct timespec last_mutation; /* CLOCK_MONOTONIC; zero: none yet */
    unsigned int jitter_seed;
    long remaining;
    time_t reset;
    rt_gh_stop stopped;
    char errstr[RT_ERRSTR_SIZE];
    char curl_error[CURL_ERROR_SIZE];
};

#define MAX_REDIRECTS 5

typedef struct xfer {
    rt_gh_response *resp;
    size_t cap;
    long max;
    bool too_big, oom;
    long remaining; /* -1: not sent */
    long long reset;
    long retry_after; /* -1: not sent */
} xfer;

int rt_gh_client_new(rt_gh_client **out, const rt_gh_client_options *opts, char *errstr)
{
    *out = NULL;
    if (!opts || !opts->api_url ||
        (strncmp(opts->api_url, "http://", 7) && strncmp(opts->api_url, "https://", 8))) {
        rt_set_errstr(errstr, "github_api_url must be an http:// or https:// URL");
        return RT_EINVAL;
    }
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        rt_set_errstr(errstr, "libcurl global init failed");
        return RT_EIO;
    }
    rt_gh_client *c = calloc(1, sizeof *c);
    if (!c) return RT_ENOMEM;
    c->opts = *opts;
    if (c->opts.max_wait_s <= 0) c->opts.max_wait_s = 3900;
    if (c->opts.max_retry_after_s <= 0) c->opts.max_retry_after_s = 900;
    if (c->opts.secondary_wait_s <= 0) c->opts.secondary_wait_s = 60;
    if (c->opts.mutation_gap_ms <= 0) c->opts.mutation_gap_ms = 1000;
    c->jitter_seed = (unsigned int)time(NULL) ^ (unsigned int)getpid();
    if (c->opts.max_attempts <= 0) c->opts.max_attempts = 4;
    if (c->opts.connect_timeout_ms <= 0) c->opts.connect_timeout_ms = 5000;
    if (c->opts.timeout_ms <= 0) c->opts.timeout_ms = 60000;
    if (c->opts.max_body_bytes <= 0) c->opts.max_body_bytes = 16L * 1024 * 1024;
    c->remaining = -1;
    size_t n = strlen(opts->api_url);
    while (n && opts->api_url[n - 1] == '/') n--;
    c->api_url = strndup(opts->api_url, n);
    c->curl = curl_easy_init();
    bool ok = c->api_url && c->curl;
    if (ok && opts->token && *opts->token) {
        rt_log_add_secret(opts->token);
        size_t size = strlen(opts->token) + 32;
        if ((c->auth_header = malloc(size)))
            snprintf(c->auth_header, size, "Authorization: Bearer %s", opts->token);
        ok = c->auth_header != NULL;
    }
    if (ok && opts->ca_file) ok = (c->ca_file = strdup(opts->ca_file)) != NULL;
    c->opts.api_url = c->api_url;
    c->opts.token = NULL;
    c->opts.ca_file = c->ca_file;
    if (!ok) {
        rt_gh_client_free(c);
        rt_set_errstr(errstr, "out of memory creating the GitHub client");
        return RT_ENOMEM;
    }
    *out = c;
    return RT_OK;
}

void rt_gh_client_free(rt_gh_client *c)
{
    if (!c) return;
    if (c->curl) curl_easy_cleanup(c->curl);
    if (c->auth_header) memset(c->auth_header, 0, strlen(c->auth_header));
    free(c->auth_header);
    free(c->api_url);
    free(c->ca_file);
    free(c);
}

const char *rt_gh_client_errstr(const rt_gh_client *c) { return c->errstr; }
rt_gh_stop rt_gh_client_stopped(const rt_gh_client *c) { return c->stopped; }
long rt_gh_client_requests(const rt_gh_client *c) { return c->requests; }
long rt_gh_client_rate_remaining(const rt_gh_client *c) { return c->remaining; }

void rt_gh_response_free(rt_gh_response *resp)
{
    if (!resp) return;
    free(resp->body);
    free(resp->etag);
    free(resp->link);
    free(resp->location);
    memset(resp, 0, sizeof *resp);
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *userdata)
{
    xfer *x = userdata;
    rt_curl_body b = {&x->resp->body, &x->resp->len, x->cap, 4096, x->max, false, false};
    size_t taken = rt_curl_body_append(&b, data, size * nmemb); /* 0 aborts the transfer */
    x->cap = b.cap;
    x->too_big |= b.too_big;
    x->oom |= b.oom;
    return taken;
}

static void replace(char **field, char *value)
{
    free(*field);
    *field = value;
}

static size_t on_header(char *line, size_t size, size_t nmemb, void *userdata)
{
    xfer *x = userdata;
    size_t n = size * nmemb;
    char *v;
    if ((v = rt_curl_header_value(line, n, "ETag")))
        replace(&x->resp->etag, v);
    else if ((v = rt_curl_header_value(line, n, "Link")))
        replace(&x->resp->link, v);
    else if ((v = rt_curl_header_value(line, n, "Location")))
        replace(&x->resp->location, v);
    else if ((v = rt_curl_header_value(line, n, "x-ratelimit-remaining"))) {
        x->remaining = strtol(v, NULL, 10);
        free(v);
    } else if ((v = rt_curl_header_value(line, n, "x-ratelimit-reset"))) {
        x->reset = strtoll(v, NULL, 10);
        free(v);
    } else if ((v = rt_curl_header_value(line, n, "retry-after"))) {
        char *end = NULL;
        long s = strtol(v, &end, 10);
        x->retry_after = end != v && s >= 0 ? s : -1;
        free(v);
    } else if ((v = rt_curl_header_value(line, n, "Content-Length"))) {
        long long announced = strtoll(v, NULL, 10);
        free(v);
        if (announced > x->max) {
            x->too_big = true;
            return 0;
        }
    }
    return n;
}

/* Sleeps s seconds in one-second steps; false when cancelled meanwhile. */
static bool sleep_s(const rt_gh_client *c, long s)
{
    for (long left = s; left > 0; left--) {
        if (c->opts.cancel && *c->opts.cancel) return false;
        if (!rt_stop_sleep_ms(1000)) return false; /* a stop request ends it at once */
    }
    return !(c->opts.cancel && *c->opts.cancel) && !rt_stop_requested();
}

/* One attempt: fills resp and x; returns the curl result. */
static CURLcode perform(rt_gh_client *c, const char *method, const char *url, bool api,
                        const char *body, long max, rt_gh_response *resp, xfer *x,
                        const char *if_none_match)
{
    rt_gh_response_free(resp);
    memset(x, 0, sizeof *x);
    x->resp = resp;
    x->max = max;
    x->remaining = -1;
    x->retry_after = -1;
    struct curl_slist *list = NULL, *grown;
    char inm[512];
    CURLcode e = CURLE_OUT_OF_MEMORY;
#define HEADER(text)                                                                               \
    do {                                                                                           \
        if (!(grown = curl_slist_append(list, text))) goto out;                                    \
        list = grown;                                                                              \
    } while (0)
    HEADER("Expect:");
    if (api) {
        HEADER("Accept: application/vnd.github+json");
        HEADER("X-GitHub-Api-Version: 2022-11-28");
        if (c->auth_header) HEADER(c->auth_header);
        if (body) HEADER("Content-Type: application/json");
        if (if_none_match && strlen(if_none_match) < 400 && !strpbrk(if_none_match, "\r\n")) {
            snprintf(inm, sizeof inm, "If-None-Match: %s", if_none_match);
            HEADER(inm);
        }
    }
#undef HEADER
    CURL *h = c->curl;
    curl_easy_reset(h);
    e = CURLE_OK;
#define SET(opt, val)                                                                              \
    if (e == CURLE_OK) e = curl_easy_setopt(h, opt, val)
    SET(CURLOPT_URL, url);
    SET(CURLOPT_NOSIGNAL, 1L);
    SET(CURLOPT_USERAGENT, "retrig/" RETRIG_VERSION);
    SET(CURLOPT_CONNECTTIMEOUT_MS, c->opts.connect_timeout_ms);
    SET(CURLOPT_TIMEOUT_MS, c->opts.timeout_ms);
    SET(CURLOPT_FOLLOWLOCATION, 0L);
    SET(CURLOPT_PROTOCOLS_STR, "http,https");
    SET(CURLOPT_SSL_VERIFYPEER, 1L);
    SET(CURLOPT_SSL_VERIFYHOST, 2L);
    if (c->ca_file) { SET(CURLOPT_CAINFO, c->ca_file); }
    SET(CURLOPT_ACCEPT_ENCODING, "");
    SET(CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)max);
    SET(CURLOPT_WRITEFUNCTION, on_body);
    SET(CURLOPT_WRITEDATA, x);
    SET(CURLOPT_HEADERFUNCTION, on_header);
    SET(CURLOPT_HEADERDATA, x);
    SET(CURLOPT_ERRORBUFFER, c->curl_error);
    SET(CURLOPT_HTTPHEADER, list);
    if (body) {
        SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
        SET(CURLOPT_POSTFIELDS, body);
    }
    if (strcmp(method, "GET") != 0 && strcmp(method, "POST") != 0) {
        SET(CURLOPT_CUSTOMREQUEST, method);
    } else if (!strcmp(method, "POST") && !body) {
        SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)0);
        SET(CURLOPT_POSTFIELDS, "");
    }
#undef SET
    c->curl_error[0] = '\0';
    if (e == CURLE_OK) e = curl_easy_perform(h);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &resp->status);
out:
    curl_slist_free_all(list);
    if (!resp->body) resp->body = calloc(1, 1);
    return e;
}

/* The URL of path: appended to api_url, or a full URL that must lie under it. */
static char *api_url_of(rt_gh_client *c, const char *path)
{
    size_t n = strlen(c->api_url);
    if (path[0] == '/') {
        size_t size = n + strlen(path) + 1;
        char *url = malloc(size);
        if (url) snprintf(url, size, "%s%s", c->api_url, path);
        return url;
    }
    if (!strncmp(path, c->api_url, n) && (path[n] == '/' || path[n] == '?')) return strdup(path);
    return NULL;
}

static const char *path_shown(rt_gh_client *c, const char *url)
{
    size_t n = strlen(c->api_url);
    return !strncmp(url, c->api_url, n) ? url + n : url;
}

/* Location resolved against the URL it answered (absolute http(s) only, or a path). */
static char *resolve_location(const char *base, const char *location)
{
    CURLU *u = curl_url();
    char *out = NULL, *tmp = NULL;
    if (!u) return NULL;
    if (curl_url_set(u, CURLUPART_URL, base, 0) == CURLUE_OK &&
        curl_url_set(u, CURLUPART_URL, location, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_URL, &tmp, 0) == CURLUE_OK &&
        (!strncmp(tmp, "http://", 7) || !strncmp(tmp, "https://", 8)))
        out = strdup(tmp);
    curl_free(tmp);
    curl_url_cleanup(u);
    return out;
}

/* Stops or waits before a request; RT_OK to go on. */
static int before_request(rt_gh_client *c, const char *shown)
{
    if (c->stopped) return RT_ERETRY;
    if (c->opts.max_requests > 0 && c->requests >= c->opts.max_requests) {
        c->stopped = RT_GH_STOP_BUDGET;
        rt_set_errstr(c->errstr, "request budget of %ld used (--max-requests); run again to go on",
                      c->opts.max_requests);
        return RT_ERETRY;
    }
    time_t now = time(NULL);
    if (!rt_gh_rate_exhausted(c->remaining, c->opts.reserve) || c->reset <= now) return RT_OK;
    long wait = (long)(c->reset - now) + 1;
    char when[32];
    struct tm tm;
    gmtime_r(&c->reset, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (c->opts.wait_for_reset && wait <= c->opts.max_wait_s) {
        char left[24], secs[24];
        snprintf(left, sizeof left, "%ld", c->remaining);
        snprintf(secs, sizeof secs, "%ld", wait);
        rt_log_warn("GitHub rate limit nearly used: waiting for its reset", "remaining", left,
                    "reset", when, "wait_s", secs, "next", shown);
        if (!sleep_s(c, wait)) {
            c->stopped = RT_GH_STOP_RATE_LIMIT;
            rt_set_errstr(c->errstr, "stopped while waiting for the rate limit's reset (%s)", when);
            return RT_ERETRY;
        }
        c->remaining = -1;
        return RT_OK;
    }
    c->stopped = RT_GH_STOP_RATE_LIMIT;
    rt_set_errstr(c->errstr,
                  "GitHub rate limit: %ld requests left (reserve %ld) until %s; run again after "
                  "the reset to resume",
                  c->remaining, c->opts.reserve, when);
    return RT_ERETRY;
}

static bool is_mutation(const char *method)
{
    return !strcmp(method, "POST") || !strcmp(method, "PATCH") || !strcmp(method, "PUT") ||
           !strcmp(method, "DELETE");
}

/* Waits until mutation_gap_ms have passed since the last mutation was sent; false when a
 * stop or cancel came meanwhile. */
static bool space_mutation(rt_gh_client *c)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (c->last_mutation.tv_sec || c->last_mutation.tv_nsec) {
        long since_ms = (long)(now.tv_sec - c->last_mutation.tv_sec) * 1000 +
                        (now.tv_nsec - c->last_mutation.tv_nsec) / 1000000;
        if (since_ms < c->opts.mutation_gap_ms) {
            if (!rt_stop_sleep_ms(c->opts.mutation_gap_ms - since_ms)) return false;
            if (c->opts.cancel && *c->opts.cancel) return false;
            clock_gettime(CLOCK_MONOTONIC, &now);
        }
    }
    c->last_mutation = now;
    return true;
}

/* A 3xx answer to a request of url. GitHub moves renamed repositories (301) and asks clients
 * to follow 301, 302 and 307, repeating the request. Only within github_api_url (same scheme,
 * host and port, under its path), so the token never leaves for another host or an http://
 * URL; a redirect elsewhere is refused, not followed without it. *next: the URL to follow
 * (the caller's), or NULL: RT_OK when the answer is the caller's own (an artifact's /zip
 * pointing at its storage, with redirect_ok), else RT_EUPSTREAM with errstr set. */
static int follow_redirect(rt_gh_client *c, const char *method, const char *url, const char *shown,
                           const rt_gh_response *resp, bool redirect_ok, int *redirects,
                           char **next_out)
{
    *next_out = NULL;
    char *next = resp->location ? resolve_location(url, resp->location) : NULL;
    size_t n = strlen(c->api_url);
    bool inside = next && !strncmp(next, c->api_url, n) &&
                  (next[n] == '/' || next[n] == '?' || next[n] == '\0');
    /* an artifact's /zip: the storage URL, unless GitHub moved the API path itself */
    if (redirect_ok && next &&
        !(inside &&
          (!strncmp(next + n, "/repos/", 7) || !strncmp(next + n, "/repositories/", 14)))) {
        free(next);
        return RT_OK;
    }
    if (!inside || ++*redirects > MAX_REDIRECTS) {
        rt_set_errstr(c->errstr, "%s %s: HTTP %ld redirect %s", method, shown, resp->status,
                      !next     ? "without a usable Location"
                      : !inside ? "outside github_api_url refused (the token goes nowhere else)"
                                : "loop");
        free(next);
        return RT_EUPSTREAM;
    }
    *next_out = next;
    return RT_OK;
}

/* What a 403 or 429 answer leads to. */
typedef enum {
    LIMIT_AGAIN, /* the primary limit is used up: before_request waits for the reset or stops */
    LIMIT_WAIT,  /* a secondary limit: wait *delay seconds, then try again */
    LIMIT_STOP,  /* a permission the token lacks, or a wait over max_retry_after_s */
} limit_step;
static limit_step on_limit(rt_gh_client *c, const char *method, const char *shown,
                           const rt_gh_response *resp, const xfer *x, int *secondary_limits,
                           long *delay, int *rc)
{
    bool primary = x->remaining == 0;
    bool secondary =
        x->retry_after >= 0 || resp->status == 429 || strcasestr(resp->body, "rate limit") != NULL;
    *rc = RT_ERETRY;
    if (primary && x->retry_after < 0) {
        rt_set_errstr(c->errstr, "%s %s: HTTP %ld, rate limit used up", method, shown,
                      resp->status);
        if (c->reset <= time(NULL)) c->reset = time(NULL) + 60;
        return LIMIT_AGAIN;
    }
    if (!secondary) {
        rt_set_errstr(c->errstr, "%s %s: HTTP %ld (the token may lack a permission)", method, shown,
                      resp->status);
        *rc = RT_EAUTH;
        return LIMIT_STOP;
    }
    ++*secondary_limits;
    if (x->retry_after >= 0) {
        *delay = x->retry_after;
    } else { /* at least a minute, doubled each time, a random quarter more */
        long base = c->opts.secondary_wait_s
                    << (*secondary_limits - 1 < 6 ? *secondary_limits - 1 : 6);
        *delay = base + (long)(rand_r(&c->jitter_seed) % (unsigned)(base / 4 + 1));
    }
    rt_set_errstr(c->errstr, "%s %s: HTTP %ld, secondary rate limit (retry after %ld s)", method,
                  shown, resp->status, *delay);
    if (*delay > c->opts.max_retry_after_s) {
        c->stopped = RT_GH_STOP_RATE_LIMIT;
        return LIMIT_STOP;
    }
    return LIMIT_WAIT;
}

static int request(rt_gh_client *c, const char *method, const char *path, const char *if_none_match,
                   const char *json_body, bool redirect_ok, rt_gh_response *resp)
{
    memset(resp, 0, sizeof *resp);
    c->errstr[0] = '\0';
    char *url = api_url_of(c, path);
    if (!url) {
        rt_set_errstr(c->errstr, "%s %s: not a URL of github_api_url", method, path);
        resp->body = calloc(1, 1);
        return RT_EINVAL;
    }
    const char *shown = path_shown(c, url);
    int rc = RT_ERETRY, redirects = 0, secondary_limits = 0;
    for (int attempt = 1;; attempt++) {
        if ((rc = before_request(c, shown)) != RT_OK) break;
        if (is_mutation(method) && !space_mutation(c)) {
            c->stopped = RT_GH_STOP_RATE_LIMIT;
            rt_set_errstr(c->errstr, "%s %s: stopped before sending", method, shown);
            rc = RT_ERETRY;
            break;
        }
        xfer x;
        CURLcode e = perform(c, method, url, true, json_body, c->opts.max_body_bytes, resp, &x,
                             if_none_match);
        if (resp->status != 304) c->requests++; /* GitHub does not charge a 304 */
        if (x.oom || e == CURLE_OUT_OF_MEMORY) {
            rc = RT_ENOMEM;
            break;
        }
        if (x.remaining >= 0) {
            c->remaining = x.remaining;
            c->reset = (time_t)x.reset;
        }
        if (x.too_big || e == CURLE_FILESIZE_EXCEEDED) {
            rt_set_errstr(c->errstr, "%s %s: answer over %ld bytes", method, shown,
                          c->opts.max_body_bytes);
            rc = RT_ETOOBIG;
            break;
        }
        long delay = 0;
        if (e != CURLE_OK) {
            rt_set_errstr(c->errstr, "%s %s: %s", method, shown,
                          c->curl_error[0] ? c->curl_error : curl_easy_strerror(e));
            rc = e == CURLE_OPERATION_TIMEDOUT ? RT_ETIMEDOUT : RT_ECONN;
            delay = 1L << (attempt - 1 < 4 ? attempt - 1 : 4);
        } else if ((resp->status >= 200 && resp->status < 300) ||
                   (resp->status == 304 && if_none_match)) {
            rc = RT_OK;
            break;
        } else if (resp->status == 301 || resp->status == 302 || resp->status == 303 ||
                   resp->status == 307 || resp->status == 308) {
            char *next = NULL; /* within github_api_url only (follow_redirect) */
            rc = follow_redirect(c, method, url, shown, resp, redirect_ok, &redirects, &next);
            if (!next) break; /* RT_OK: an artifact's storage URL; else refused */
            char status[24];
            snprintf(status, sizeof status, "%ld", resp->status);
            free(url);
            url = next;
            shown = path_shown(c, url);
            rt_log_info("GitHub redirected the request; following it", "status", status, "to",
                        shown);
            attempt--; /* a redirect is no failed attempt */
            continue;
        } else if (resp->status == 403 || resp->status == 429) {
            limit_step step = on_limit(c, method, shown, resp, &x, &secondary_limits, &delay, &rc);
            if (step == LIMIT_AGAIN && attempt < c->opts.max_attempts + 1)
                continue; /* the primary limit: before_request decides */
            if (step != LIMIT_WAIT) break;
        } else if (resp->status >= 500) {
            rt_set_errstr(c->errstr, "%s %s: HTTP %ld", method, shown, resp->status);
            rc = RT_ERETRY;
            delay = 1L << (attempt - 1 < 4 ? attempt - 1 : 4);
        } else {
            rt_set_errstr(c->errstr, "%s %s: HTTP %ld", method, shown, resp->status);
            rc = resp->status == 404 || resp->status == 410 ? RT_ENOTFOUND
                 : resp->status == 401                      ? RT_EAUTH
                                                            : RT_EUPSTREAM;
            break;
        }
        if (attempt >= c->opts.max_attempts) break;
        /* Only idempotent calls are tried again after an answer that may have acted. */
        bool idempotent = strcmp(method, "POST") != 0 && strcmp(method, "PATCH") != 0;
        if (!idempotent && !(resp->status == 403 || resp->status == 429) &&
            !(e == CURLE_COULDNT_CONNECT))
            break;
        char secs[24], status[24];
        snprintf(secs, sizeof secs, "%ld", delay);
        snprintf(status, sizeof status, "%ld", resp->status);
        rt_log_warn("GitHub call failed, retrying", "path", shown, "status", status, "delay_s",
                    secs, "error", c->errstr);
        if (!sleep_s(c, delay)) {
            c->stopped = RT_GH_STOP_RATE_LIMIT;
            rc = RT_ERETRY;
            break;
        }
    }
    free(url);
    return rc;
}

int rt_gh_request(rt_gh_client *c, const char *method, const char *path, const char *if_none_match,
                  const char *json_body, rt_gh_response *resp)
{
    return request(c, method, path, if_none_match, json_body, false, resp);
}

int rt_gh_download(rt_gh_client *c, const char *path, long max_bytes, rt_gh_response *resp)
{
    int rc = request(c, "GET", path, NULL, NULL, true, resp);
    if (rc != RT_OK) return rc;
    if (resp->status < 300 || resp->status >= 400 || !resp->location) {
        if (resp->status == 200) { /* served directly: accept it within the cap */
            if ((long)resp->len > max_bytes) {
                rt_set_errstr(c->errstr, "GET %s: artifact over %ld bytes", path, max_bytes);
                return RT_ETOOBIG;
            }
            return RT_OK;
        }
        rt_set_errstr(c->errstr, "GET %s: HTTP %ld without a Location", path, resp->status);
        return RT_EUPSTREAM;
    }
    char *base = api_url_of(c, path);
    char *storage = base ? resolve_location(base, resp->location) : NULL;
    bool allowed = storage && rt_gh_redirect_allowed(base, storage);
    free(base);
    if (!allowed) {
        rt_set_errstr(c->errstr, "GET %s: %s", path,
                      storage ? "redirect from https to http refused" : "unusable Location");
        free(storage);
        return RT_EUPSTREAM;
    }
    rc = RT_ECONN;
    for (int attempt = 1; attempt <= c->opts.max_attempts; attempt++) {
        xfer x;
        CURLcode e = perform(c, "GET", storage, false, NULL, max_bytes, resp, &x, NULL);
        if (x.oom) {
            rc = RT_ENOMEM;
            break;
        }
        if (x.too_big || e == CURLE_FILESIZE_EXCEEDED) {
            rt_set_errstr(c->errstr, "GET %s: artifact over %ld bytes", path, max_bytes);
            rc = RT_ETOOBIG;
            break;
        }
        if (e == CURLE_OK && resp->status == 200) {
            rc = RT_OK;
            break;
        }
        if (e == CURLE_OK && resp->status < 500) {
            rt_set_errstr(c->errstr, "GET %s: storage answered HTTP %ld", path, resp->status);
            rc = RT_EUPSTREAM;
            break;
        }
        rt_set_errstr(c->errstr, "GET %s: storage: %s", path,
                      e != CURLE_OK ? curl_easy_strerror(e) : "HTTP 5xx");
        rc = RT_ERETRY;
        if (attempt < c->opts.max_attempts && !sleep_s(c, 1L << (attempt - 1))) break;
    }
    free(storage);
    return rc;
}
