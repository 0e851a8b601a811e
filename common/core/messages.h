/* SPDX-License-Identifier: MPL-2.0 */
/* messages.h - our own queue messages (queue-schemas/): the retrigger request that
 * retrig-classify (round 1) and retrig-decide (later rounds) publish and retrig-retrigger
 * consumes, and the decide request that starts retrig-decide. Parsed and validated once here
 * (bad ones are dead-lettered with the reason); built here so that every publisher writes the
 * same shape. The events on the decisions exchange are in events.h, the culprit probe request
 * in culprit_flow.h. Pure. */
#ifndef RETRIG_COMMON_MESSAGES_H
#define RETRIG_COMMON_MESSAGES_H

#include <stddef.h>

#include "common/core/errors.h"
#include "common/core/errorsummary.h"

#define RT_MESSAGE_REASON_SIZE  128
#define RT_REQUEST_MAX_FAILURES 100  /* failures a request carries (the first ones) */
#define RT_REQUEST_MAX_GROUPS   4096 /* failing groups a request may carry */

/* One unexpected result of the original run (queue-schemas/retrigger-request.json
 * "failures"): from its errorsummary. */
typedef struct rt_request_failure {
    char *test;
    char *subtest; /* NULL: null, the whole test failed */
    char *status;
    char *expected;
    char *message; /* NULL: null */
    char *group;   /* "" for a harness-level failure */
} rt_request_failure;

typedef struct rt_retrigger_request {
    long long set_id;
    char project[65];
    char revision[41];
    char *label;
    char task_id[23];
    int run_id;
    char task_group_id[23];
    char *platform;
    char *task_queue_id;
    int times;
    int round; /* the set's round this request is for (decide_rounds.h); 1 when absent */
    char requested_at[40]; /* RFC 3339, UTC; "" when absent (requests before it was kept) */
    char **failing_groups; /* owned; empty when absent */
    size_t nfailing_groups;
    rt_request_failure *failures; /* owned; empty when absent */
    size_t nfailures;
} rt_retrigger_request;

/* The request in body; RT_EPROTO with reason ("missing-field:times", ...) when it is not
 * valid; RT_ENOMEM. requested_at, failing_groups and failures may be absent (older
 * publishers); when present they are checked for their shape and bounds (a date-time, at
 * most RT_REQUEST_MAX_GROUPS unique groups, at most RT_REQUEST_MAX_FAILURES failures of the
 * schema's six members), an empty group or test name let through as errorsummaries have
 * them. Free with rt_retrigger_request_free, also after a failure. */
RT_MUSTCHECK int rt_retrigger_request_parse(const char *body, size_t len, rt_retrigger_request *out,
                                            char *reason);
/* A malloc'd compact JSON text of the request, "round" written only past round 1; NULL when
 * out of memory or a required string is NULL. */
char *rt_retrigger_request_build(const rt_retrigger_request *req);
void rt_retrigger_request_free(rt_retrigger_request *req);

/* The failing groups and failures of a run as its retrigger set stores them and its requests
 * carry them (JSON arrays, malloc'd texts): the groups that failed, the first
 * RT_REQUEST_MAX_FAILURES failures. RT_ENOMEM (both NULL): never a shorter list. */
RT_MUSTCHECK int rt_request_lists_build(const rt_errorsummary *es, char **groups_text,
                                        char **failures_text);
/* Reads the stored lists (as rt_request_lists_build wrote them) into req, replacing what it
 * held; RT_EPROTO with reason when one is not such a list, RT_ENOMEM. */
RT_MUSTCHECK int rt_request_lists_read(rt_retrigger_request *req, const char *groups_text,
                                       const char *failures_text, char *reason);

typedef struct rt_decide_request {
    long long set_id;
    char project[65];
    int attempt;
    char reason[256]; /* printable ASCII */
} rt_decide_request;

RT_MUSTCHECK int rt_decide_request_parse(const char *body, size_t len, rt_decide_request *out,
                                         char *reason);
/* A malloc'd JSON text of the request; NULL when out of memory. */
char *rt_decide_request_build(const rt_decide_request *req);

#endif
