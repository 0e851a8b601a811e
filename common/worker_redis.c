/* SPDX-License-Identifier: MPL-2.0 */
/* worker_redis.c - the skeleton's way to Redis (rt_worker_redis_ops, common/worker.h), kept
 * out of worker.c so that only the workers that name &rt_worker_redis link this file, and
 * with it common/io/redis.c and hiredis. */
#include "common/worker.h"

#include <stdio.h>

#include "common/io/redis.h"

static int redis_connect(rt_redis **out, const char *url, const char *client_name, char *errstr)
{
    rt_redis_options ropts = {0};
    if (client_name) snprintf(ropts.client_name, sizeof ropts.client_name, "%s", client_name);
    return rt_redis_connect(out, url, &ropts, errstr);
}

static bool redis_up(rt_redis *redis)
{
    const char *argv[] = {"PING"};
    redisReply *reply = NULL;
    bool up = rt_redis_command_argv(redis, 1, argv, NULL, &reply) == RT_OK;
    freeReplyObject(reply);
    return up;
}

const rt_worker_redis_ops rt_worker_redis = {redis_connect, redis_up, rt_redis_free};
