/* SPDX-License-Identifier: MPL-2.0 */
/* messages.h - our own queue messages (queue-schemas/): the retrigger request that
 * retrig-classify publishes and retrig-retrigger consumes, and the decide request that
 * starts retrig-decide. Parsed and validated once here (bad ones are dead-lettered with
 * the reason); built here so that every publisher writes the same shape. Pure. */
#ifndef RETRIG_COMMON_MESSAGES_H
#define RETRIG_COMMON_MESSAGES_H

#include <stddef.h>

#include "common/core/errors.h"

#define RT_MESSAGE_REASON_SIZE 128

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
} rt_retrigger_request;

RT_MUSTCHECK int rt_retrigger_request_parse(const char *body, size_t len, rt_retrigger_request *out,
                                            char *reason);
void rt_retrigger_request_free(rt_retrigger_request *req);

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
