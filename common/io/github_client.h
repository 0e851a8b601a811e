/* SPDX-License-Identifier: MPL-2.0 */
/* github_client.h - calls the GitHub REST API (libcurl) within its rate limits.
 *
 * Every request sends Accept: application/vnd.github+json, X-GitHub-Api-Version and, with
 * a token, Authorization: Bearer (the token never reaches a log line or errstr). Answers
 * keep ETag, Link and Location; x-ratelimit-remaining and x-ratelimit-reset are tracked.
 *
 * Limits, in this order before each request: the request budget (max_requests; RT_ERETRY,
 * stopped BUDGET), then the primary rate limit: at `reserve` requests left or fewer the
 * client waits for the reset (wait_for_reset, periodic mode) or stops (RT_ERETRY, stopped
 * RATE_LIMIT, errstr naming the reset time) so that a later run resumes. Secondary limits
 * (403 or 429 with retry-after, or 403 naming a rate limit) back off and try again, up to
 * max_attempts: retry-after's seconds when sent, else, as GitHub asks, at least a minute
 * (secondary_wait_s) doubled on each further limit of the same request, plus up to a
 * quarter of it at random; a wait over max_retry_after_s stops the client (RATE_LIMIT).
 * Mutations (POST, PATCH, PUT, DELETE) are sent at least mutation_gap_ms (a second) apart.
 * 5xx and connection failures back off 1, 2, 4 s.
 * A conditional GET (if_none_match) answered 304 is RT_OK with status 304; it counts
 * against neither max_requests nor rt_gh_client_requests, as GitHub does not charge it.
 *
 * Redirects of API calls (301, 302, 307, 308: a renamed repository answers 301 to
 * /repositories/{id}/...) are followed, the same method and body repeated, at most 5 in a
 * row, only to URLs under api_url (same scheme, host and port), where the token may go; a
 * redirect anywhere else (another host, https to http) is refused (RT_EUPSTREAM), never
 * followed with or without the token. Each redirect is a request.
 *
 * rt_gh_download follows an artifact's redirect by hand: the storage URL (Location) is
 * fetched with no Authorization header and no GitHub headers, as the storage host refuses
 * them; it does not count against the API budget. A redirect of the API call to a URL under
 * api_url (a renamed repository) is followed as above first. Not thread-safe: one client per
 * thread. */
#ifndef RETRIG_COMMON_GITHUB_CLIENT_H
#define RETRIG_COMMON_GITHUB_CLIENT_H

#include "common/not_core.h"

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "common/core/errors.h"

typedef struct rt_gh_client rt_gh_client;

typedef struct rt_gh_client_options {
    const char *api_url;     /* "https://api.github.com"; copied */
    const char *token;       /* NULL: anonymous; copied */
    long max_requests;       /* API requests allowed to this client; <= 0: no budget */
    long reserve;            /* stop (or wait) at this many requests left */
    bool wait_for_reset;     /* wait for the rate limit's reset instead of stopping */
    long max_wait_s;         /* longest wait for a reset; <= 0: 3900 */
    long max_retry_after_s;  /* longest secondary-limit wait; <= 0: 900 */
    long secondary_wait_s;   /* first secondary-limit wait without retry-after; <= 0: 60 */
    long mutation_gap_ms;    /* least time between POST/PATCH/PUT/DELETE; <= 0: 1000 */
    int max_attempts;        /* per request; <= 0: 4 */
    long connect_timeout_ms; /* <= 0: 5000 */
    long timeout_ms;         /* <= 0: 60000 */
    long max_body_bytes;     /* API answers; <= 0: 16 MiB */
    const char *ca_file;     /* NULL: system CAs; copied */
    /* When it becomes non-zero (a signal handler's flag), waits end at once and the client
     * stops (RT_ERETRY, stopped RATE_LIMIT or BUDGET as it was waiting for); may be NULL. */
    const volatile sig_atomic_t *cancel;
} rt_gh_client_options;

typedef enum { RT_GH_STOP_NONE, RT_GH_STOP_RATE_LIMIT, RT_GH_STOP_BUDGET } rt_gh_stop;

typedef struct rt_gh_response {
    long status;
    char *body; /* NUL-terminated, "" when none */
    size_t len;
    char *etag;     /* may be NULL */
    char *link;     /* may be NULL */
    char *location; /* may be NULL */
} rt_gh_response;

RT_MUSTCHECK int rt_gh_client_new(rt_gh_client **out, const rt_gh_client_options *opts,
                                  char *errstr);
void rt_gh_client_free(rt_gh_client *c);
const char *rt_gh_client_errstr(const rt_gh_client *c);
/* Why the client stopped (sticky until the end). */
rt_gh_stop rt_gh_client_stopped(const rt_gh_client *c);
/* API requests made so far. */
long rt_gh_client_requests(const rt_gh_client *c);
/* x-ratelimit-remaining of the last answer; -1 when unknown. */
long rt_gh_client_rate_remaining(const rt_gh_client *c);

/* A request: path "/repos/..." (appended to api_url) or a full URL under api_url (a Link
 * header's). json_body may be NULL. RT_OK for 2xx (and 304 to a conditional GET);
 * RT_ENOTFOUND for 404 and 410; RT_EAUTH for 401 and a 403 that is no rate limit;
 * RT_EUPSTREAM for other answers (status in resp); RT_ERETRY when stopped or retries
 * ran out; RT_ECONN, RT_ETIMEDOUT, RT_ETOOBIG, RT_EINVAL (a URL outside api_url). resp is
 * always initialised: free it. */
RT_MUSTCHECK int rt_gh_request(rt_gh_client *c, const char *method, const char *path,
                               const char *if_none_match, const char *json_body,
                               rt_gh_response *resp);
/* GET path (an artifact's /zip) without following its redirect, then the Location URL
 * without Authorization, accepting at most max_bytes. Results as rt_gh_request. */
RT_MUSTCHECK int rt_gh_download(rt_gh_client *c, const char *path, long max_bytes,
                                rt_gh_response *resp);
void rt_gh_response_free(rt_gh_response *resp);

#endif
