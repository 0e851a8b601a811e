/* SPDX-License-Identifier: MPL-2.0 */
/* http.h - the HTTP client every worker uses to talk to Taskcluster, Treeherder and
 * Perfherder (libcurl underneath).
 *
 * One rt_http owns one libcurl easy handle, so consecutive calls reuse the connection.
 * Thread-safety: an rt_http is used by one thread at a time; give each thread its own.
 * rt_http_new may be called from any thread (libcurl's global init runs once).
 *
 * Every request sends "User-Agent: retrig/<version>", verifies TLS (peer and host; a CA
 * file is optional), follows up to 5 redirects (http/https only, as Taskcluster answers
 * artifacts with 303 to storage), and refuses a body larger than max_body_bytes, whether
 * announced by Content-Length or found while streaming (RT_ETOOBIG, never retried).
 *
 * Retries: 429, 5xx, connection failures and timeouts are retried up to max_attempts in
 * all, sleeping backoff_base_ms * 2^(n-1) (at most backoff_max_ms), half of it random
 * jitter; a Retry-After header (seconds or an HTTP date) replaces that delay, capped at
 * backoff_max_ms. POST and PATCH are not idempotent (triggerHook creates a task), so they
 * are retried only where the server cannot have acted on them: connect failures, 429 and
 * 503. Other failures of a POST/PATCH return at once (RT_ERETRY/RT_ECONN/RT_ETIMEDOUT) so
 * the caller's own dedupe decides.
 *
 * Results: 0 for a 2xx answer. A 4xx other than 429 (or a 3xx left over) is not retried
 * and returns RT_EUPSTREAM with the response filled, so callers can tell 404 (not found)
 * from the rest by resp->status. Retryable failures left after the last attempt return
 * RT_ERETRY (429/5xx, last response filled), RT_ETIMEDOUT or RT_ECONN. The handle's errstr
 * then says what happened, with the URL redacted:
 * "GET http://host/api/x: HTTP 503 after 4 attempts". */
#ifndef RETRIG_COMMON_HTTP_H
#define RETRIG_COMMON_HTTP_H

#include "common/not_core.h"

#include <stddef.h>

#include "common/core/errors.h"

typedef struct rt_http rt_http;

typedef struct rt_http_options {
    long connect_timeout_ms; /* <= 0: 5000 */
    long timeout_ms;         /* whole attempt, connect included; <= 0: 30000 */
    long max_body_bytes;     /* <= 0: 64 MiB */
    int max_attempts;        /* <= 0: 4 */
    long backoff_base_ms;    /* <= 0: 250 */
    long backoff_max_ms;     /* <= 0: 30000 */
    const char *ca_file;     /* NULL: the system CAs; copied */
    /* Sleeps between attempts; NULL: a real sleep. Tests inject a recorder. */
    void (*sleep_ms)(void *ctx, long ms);
    void *sleep_ctx;
} rt_http_options;

typedef struct rt_http_header {
    const char *name;  /* "Authorization" */
    const char *value; /* "Hawk id=..." */
} rt_http_header;

typedef struct rt_http_response {
    long status;        /* HTTP status of the last answer; 0 when none arrived */
    char *body;         /* malloc'd, NUL-terminated (may hold NULs); "" when empty */
    size_t len;         /* body bytes, without the terminating NUL */
    char *content_type; /* Content-Type of the final answer, or NULL */
    char *retry_after;  /* Retry-After of the final answer as sent, or NULL */
    int attempts;       /* attempts made */
} rt_http_response;

/* A new client. opts NULL: all defaults. On failure *out is NULL and errstr (may be
 * NULL) says why. */
RT_MUSTCHECK int rt_http_new(rt_http **out, const rt_http_options *opts, char *errstr);
void rt_http_free(rt_http *h);

/* The human detail of the last failure ("" after a success). */
const char *rt_http_errstr(const rt_http *h);

/* GET url. resp is always initialised (free it with rt_http_response_free, also on
 * failure). See the top of this file for the results. */
RT_MUSTCHECK int rt_http_get(rt_http *h, const char *url, rt_http_response *resp);

/* Any method ("GET", "POST", ...) with extra headers (they replace curl's defaults of the
 * same name) and an optional body (body NULL: none; sent as given, so set Content-Type). */
RT_MUSTCHECK int rt_http_request(rt_http *h, const char *method, const char *url,
                                 const rt_http_header *headers, size_t nheaders, const char *body,
                                 size_t body_len, rt_http_response *resp);

/* Frees what the response owns and zeroes it; NULL is a no-op. */
void rt_http_response_free(rt_http_response *resp);

/* Percent-encodes everything but RFC 3986 unreserved characters (A-Z a-z 0-9 - . _ ~),
 * so "in-tree-action-3-generic/9353e8f146" becomes "in-tree-action-3-generic%2F9353e8f146".
 * Returns a malloc'd string, or NULL when out of memory. */
char *rt_http_url_escape(const char *s);

#endif
