/* SPDX-License-Identifier: MPL-2.0 */
/* redis.h - a synchronous Redis connection that survives server restarts, and Lua
 * scripts called by SHA-1.
 *
 * A handle is connected from redis://[[user]:password@]host[:port][/db]: AUTH when the URL
 * has a password, SELECT when it names a database, with a connect timeout and a command
 * timeout. When a command fails because the connection broke, the handle is marked broken
 * and the NEXT command reconnects first (a bounded number of attempts, doubling the pause
 * between them). A connection that the server closed while the handle was idle is noticed
 * before anything is sent, so a server restart between two commands is invisible to the
 * caller. A command that fails in flight is never resent: it may have run, and only the
 * caller knows whether running it twice is safe.
 *
 * Scripts (rt_redis_script) carry their source and its SHA-1, computed locally, and are
 * run with EVALSHA; on NOSCRIPT (server restarted, SCRIPT FLUSH) the script is loaded with
 * SCRIPT LOAD and EVALSHA is sent once more.
 *
 * Replies are hiredis redisReply objects owned by the caller (freeReplyObject). A Redis
 * error reply is returned as RT_EUPSTREAM with the server's message in the handle's errstr.
 * hiredis writes with write(2): the process must ignore SIGPIPE (workers do), or a write to
 * a connection the server has just closed kills it.
 * A handle is not thread-safe: use one per thread. */
#ifndef RETRIG_COMMON_REDIS_H
#define RETRIG_COMMON_REDIS_H

#include "common/not_core.h"

#include <stdbool.h>
#include <stddef.h>

#include <hiredis/hiredis.h>

#include "common/core/errors.h"

typedef struct rt_redis rt_redis;

typedef struct rt_redis_options {
    int connect_timeout_ms;   /* per connection attempt; 0: 2000 */
    int command_timeout_ms;   /* per command (send and reply); 0: 5000 */
    int reconnect_attempts;   /* connection attempts before giving up; 0: 5 */
    int reconnect_backoff_ms; /* pause after the first failed attempt, doubled after each; 0: 50 */
    char client_name[64]; /* CLIENT SETNAME after each connect ("" none): CLIENT LIST names us */
} rt_redis_options;

/* A Lua script: its source (not copied; usually a string constant that outlives the
 * script) and the lowercase hex SHA-1 of the source, which is the name Redis knows it by. */
typedef struct rt_redis_script {
    const char *source;
    char sha1[41];
} rt_redis_script;

/* Fills script from source, computing its SHA-1. */
void rt_redis_script_init(rt_redis_script *script, const char *source);

/* Parses the URL and connects (options may be NULL for the defaults). On failure returns
 * RT_EINVAL (bad URL), RT_ECONN, RT_EAUTH or RT_ENOMEM with the reason in errstr
 * (RT_ERRSTR_SIZE bytes; never contains the password) and *out is NULL. */
RT_MUSTCHECK int rt_redis_connect(rt_redis **out, const char *url, const rt_redis_options *options,
                                  char *errstr);
void rt_redis_free(rt_redis *h);
/* The reason for the last failure on this handle, "" when none. */
const char *rt_redis_errstr(const rt_redis *h);
/* True when the handle holds a connection that has not failed. It does not ping. */
bool rt_redis_is_connected(const rt_redis *h);

/* Sends one command given as argument strings (argvlen may be NULL for NUL-terminated
 * strings). On success *reply (when reply is not NULL) holds the reply, never an error
 * reply. Returns RT_OK, RT_EUPSTREAM (Redis answered with an error), RT_ECONN (could not
 * send or reconnect), RT_ETIMEDOUT or RT_ENOMEM. */
RT_MUSTCHECK int rt_redis_command_argv(rt_redis *h, int argc, const char **argv,
                                       const size_t *argvlen, redisReply **reply);

/* Loads the script into the server's script cache (SCRIPT LOAD) now; optional, since
 * rt_redis_eval loads it on demand. */
RT_MUSTCHECK int rt_redis_script_load(rt_redis *h, const rt_redis_script *script);

/* Runs script by SHA with nkeys KEYS and nargs ARGV strings, loading it first when the
 * server does not know it. Same results as rt_redis_command_argv; an error raised by the
 * script itself is RT_EUPSTREAM. */
RT_MUSTCHECK int rt_redis_eval(rt_redis *h, const rt_redis_script *script, int nkeys,
                               const char *const keys[], int nargs, const char *const args[],
                               redisReply **reply);

#endif
