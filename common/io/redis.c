/* SPDX-License-Identifier: MPL-2.0 */
/* redis.c - Redis connection with reconnect-before-next-command, and Lua scripts by SHA.
 * See redis.h for the contract. One handle per thread. */
#include "common/io/redis.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/sha.h>

#include "common/io/log.h"
#include "common/io/stop.h"

#define RT_REDIS_MAX_ARGS 1024

struct rt_redis {
    redisContext *ctx;
    bool broken; /* the last command failed at the connection level */
    char *host;
    int port;
    char *user;     /* NULL: AUTH with the password only */
    char *password; /* NULL: no AUTH */
    int db;
    rt_redis_options options;
    char errstr[RT_ERRSTR_SIZE];
};

void rt_redis_script_init(rt_redis_script *script, const char *source)
{
    unsigned char digest[SHA_DIGEST_LENGTH];
    static const char hex[] = "0123456789abcdef";

    script->source = source;
    SHA1((const unsigned char *)source, strlen(source), digest);
    for (size_t i = 0; i < SHA_DIGEST_LENGTH; i++) {
        script->sha1[2 * i] = hex[digest[i] >> 4];
        script->sha1[2 * i + 1] = hex[digest[i] & 0xf];
    }
    script->sha1[40] = '\0';
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Copies len bytes of a URL component, decoding %XX; NULL on a bad escape or no memory. */
static char *percent_decode(const char *s, size_t len)
{
    char *out = malloc(len + 1);
    size_t n = 0;
    if (!out) return NULL;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '%') {
            int hi = i + 2 < len ? hex_value(s[i + 1]) : -1;
            int lo = i + 2 < len ? hex_value(s[i + 2]) : -1;
            if (hi < 0 || lo < 0) {
                free(out);
                return NULL;
            }
            out[n++] = (char)(hi * 16 + lo);
            i += 2;
        } else {
            out[n++] = s[i];
        }
    }
    out[n] = '\0';
    return out;
}

static int parse_number(const char *s, size_t len, long min, long max, long *value)
{
    long v = 0;
    if (len == 0 || len > 10) return RT_EINVAL;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return RT_EINVAL;
        v = v * 10 + (s[i] - '0');
    }
    if (v < min || v > max) return RT_EINVAL;
    *value = v;
    return RT_OK;
}

/* redis://[[user]:password@]host[:port][/db] into h. The password may contain '@' or '/':
 * the last '@' ends it. */
static int parse_url(rt_redis *h, const char *url, char *errstr)
{
    static const char scheme[] = "redis://";
    const char *p, *at, *host, *host_end, *port = NULL, *slash;
    long value;

    if (!url || strncmp(url, scheme, sizeof scheme - 1) != 0) {
        rt_set_errstr(errstr, "redis_url must start with redis://");
        return RT_EINVAL;
    }
    p = url + sizeof scheme - 1;
    at = strrchr(p, '@');
    if (at) {
        const char *colon = memchr(p, ':', (size_t)(at - p));
        if (!colon) {
            rt_set_errstr(errstr, "redis_url: put the password after a colon "
                                  "(redis://:PASSWORD@host:port/db)");
            return RT_EINVAL;
        }
        if (colon > p) h->user = percent_decode(p, (size_t)(colon - p));
        h->password = percent_decode(colon + 1, (size_t)(at - colon - 1));
        if ((colon > p && !h->user) || !h->password) {
            rt_set_errstr(errstr, "redis_url: bad %%-escape in the user or password");
            return RT_EINVAL;
        }
        p = at + 1;
    }
    host = p;
    if (*host == '[') { /* [IPv6 address] */
        host_end = strchr(host, ']');
        if (!host_end) {
            rt_set_errstr(errstr, "redis_url: unterminated [ in the host");
            return RT_EINVAL;
        }
        host++;
        p = host_end + 1;
    } else {
        host_end = host + strcspn(host, ":/");
        p = host_end;
    }
    if (host_end == host) {
        rt_set_errstr(errstr, "redis_url: no host");
        return RT_EINVAL;
    }
    h->host = strndup(host, (size_t)(host_end - host));
    if (!h->host) return RT_ENOMEM;
    h->port = 6379;
    if (*p == ':') {
        port = p + 1;
        p = port + strcspn(port, "/");
        if (parse_number(port, (size_t)(p - port), 1, 65535, &value) != RT_OK) {
            rt_set_errstr(errstr, "redis_url: bad port");
            return RT_EINVAL;
        }
        h->port = (int)value;
    }
    h->db = 0;
    if (*p == '/') {
        slash = p + 1;
        if (*slash && parse_number(slash, strlen(slash), 0, INT_MAX, &value) != RT_OK) {
            rt_set_errstr(errstr, "redis_url: the path must be a database number, like /0");
            return RT_EINVAL;
        }
        if (*slash) h->db = (int)value;
    } else if (*p) {
        rt_set_errstr(errstr, "redis_url: unexpected text after the host");
        return RT_EINVAL;
    }
    return RT_OK;
}

static struct timeval ms_to_timeval(int ms)
{
    struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
    return tv;
}

static void disconnect(rt_redis *h)
{
    if (h->ctx) redisFree(h->ctx);
    h->ctx = NULL;
    h->broken = false;
}

/* Classifies a failure recorded on the context (the reply was NULL). */
static int context_error(rt_redis *h, const char *what, int saved_errno)
{
    int rc = RT_ECONN;
    if (h->ctx->err == REDIS_ERR_OOM)
        rc = RT_ENOMEM;
    else if (h->ctx->err == REDIS_ERR_IO && (saved_errno == EAGAIN || saved_errno == EWOULDBLOCK))
        rc = RT_ETIMEDOUT;
    rt_set_errstr(h->errstr, "redis %s:%d: %s: %s", h->host, h->port, what,
                  rc == RT_ETIMEDOUT ? "timed out" : h->ctx->errstr);
    h->broken = true;
    return rc;
}

/* Sends one command on the current connection; an error reply is returned as a reply. */
static int send_raw(rt_redis *h, int argc, const char **argv, const size_t *argvlen,
                    redisReply **reply)
{
    errno = 0;
    redisReply *r = redisCommandArgv(h->ctx, argc, argv, argvlen);
    if (!r) return context_error(h, argv[0], errno);
    *reply = r;
    return RT_OK;
}

/* One connection attempt: connect, set the command timeout, AUTH, SELECT. */
static int connect_once(rt_redis *h)
{
    redisReply *r = NULL;
    char db[16];
    int rc;

    h->ctx =
        redisConnectWithTimeout(h->host, h->port, ms_to_timeval(h->options.connect_timeout_ms));
    if (!h->ctx) {
        rt_set_errstr(h->errstr, "redis %s:%d: out of memory", h->host, h->port);
        return RT_ENOMEM;
    }
    if (h->ctx->err) {
        rc = context_error(h, "connect", errno);
        if (rc == RT_ETIMEDOUT) rc = RT_ECONN;
        goto out;
    }
    if (redisSetTimeout(h->ctx, ms_to_timeval(h->options.command_timeout_ms)) != REDIS_OK) {
        rc = context_error(h, "setting the command timeout", errno);
        goto out;
    }
    if (h->password) {
        const char *argv[3] = {"AUTH", h->user ? h->user : h->password, h->password};
        rc = send_raw(h, h->user ? 3 : 2, argv, NULL, &r);
        if (rc != RT_OK) goto out;
        if (r->type == REDIS_REPLY_ERROR) {
            rt_set_errstr(h->errstr, "redis %s:%d: AUTH refused: %s", h->host, h->port, r->str);
            rc = RT_EAUTH;
            goto out;
        }
        freeReplyObject(r);
        r = NULL;
    }
    if (h->db != 0) {
        snprintf(db, sizeof db, "%d", h->db);
        const char *argv[2] = {"SELECT", db};
        rc = send_raw(h, 2, argv, NULL, &r);
        if (rc != RT_OK) goto out;
        if (r->type == REDIS_REPLY_ERROR) {
            rt_set_errstr(h->errstr, "redis %s:%d: SELECT %d refused: %s", h->host, h->port, h->db,
                          r->str);
            rc = RT_EUPSTREAM;
            goto out;
        }
    }
    if (h->options.client_name[0]) {
        const char *argv[3] = {"CLIENT", "SETNAME", h->options.client_name};
        rc = send_raw(h, 3, argv, NULL, &r);
        if (rc != RT_OK) goto out;
        freeReplyObject(r); /* an error (a server without CLIENT) costs only the name */
        r = NULL;
    }
    rc = RT_OK;
out:
    if (r) freeReplyObject(r);
    if (rc != RT_OK) disconnect(h);
    return rc;
}

/* True when the idle connection has something to read: in a synchronous protocol that
 * means the server closed it (or broke protocol), so it must not be used. */
static bool idle_connection_is_dead(const rt_redis *h)
{
    struct pollfd pfd = {.fd = h->ctx->fd, .events = POLLIN};
    int n = poll(&pfd, 1, 0);
    return n != 0;
}

/* Makes sure a usable connection exists, reconnecting with backoff when needed. */
static int ensure_connected(rt_redis *h)
{
    int rc = RT_ECONN;
    int pause = h->options.reconnect_backoff_ms;

    if (h->ctx && !h->broken && !idle_connection_is_dead(h)) return RT_OK;
    if (h->ctx) {
        char port[16];
        snprintf(port, sizeof port, "%d", h->port);
        rt_log_warn("redis connection lost; reconnecting", "host", h->host, "port", port, "reason",
                    h->broken ? h->errstr : "closed by the server");
        disconnect(h);
    }
    for (int attempt = 1; attempt <= h->options.reconnect_attempts; attempt++) {
        rc = connect_once(h);
        if (rc == RT_OK || rc == RT_EAUTH || rc == RT_ENOMEM || rc == RT_EUPSTREAM) break;
        if (attempt < h->options.reconnect_attempts) {
            if (!rt_stop_sleep_ms(pause)) break; /* stopping: no more attempts */
            pause = pause > INT_MAX / 2 ? INT_MAX : pause * 2;
        }
    }
    return rc;
}

int rt_redis_connect(rt_redis **out, const char *url, const rt_redis_options *options, char *errstr)
{
    rt_redis *h = calloc(1, sizeof *h);
    int rc;

    *out = NULL;
    if (!h) {
        rt_set_errstr(errstr, "out of memory");
        return RT_ENOMEM;
    }
    if (options) h->options = *options;
    if (h->options.connect_timeout_ms <= 0) h->options.connect_timeout_ms = 2000;
    if (h->options.command_timeout_ms <= 0) h->options.command_timeout_ms = 5000;
    if (h->options.reconnect_attempts <= 0) h->options.reconnect_attempts = 5;
    if (h->options.reconnect_backoff_ms <= 0) h->options.reconnect_backoff_ms = 50;

    rc = parse_url(h, url, errstr);
    if (rc != RT_OK) {
        if (rc == RT_ENOMEM) rt_set_errstr(errstr, "out of memory");
        goto out;
    }
    rc = ensure_connected(h);
    if (rc != RT_OK) {
        rt_set_errstr(errstr, "%s", h->errstr);
        goto out;
    }
    *out = h;
    h = NULL;
out:
    rt_redis_free(h);
    return rc;
}

void rt_redis_free(rt_redis *h)
{
    if (!h) return;
    disconnect(h);
    free(h->host);
    free(h->user);
    if (h->password) {
        explicit_bzero(h->password, strlen(h->password));
        free(h->password);
    }
    free(h);
}

const char *rt_redis_errstr(const rt_redis *h) { return h ? h->errstr : "no handle"; }

bool rt_redis_is_connected(const rt_redis *h) { return h && h->ctx && !h->broken; }

/* Reconnects if needed and sends; error replies are returned as replies. */
static int command_raw(rt_redis *h, int argc, const char **argv, const size_t *argvlen,
                       redisReply **reply)
{
    int rc = ensure_connected(h);
    if (rc != RT_OK) return rc;
    return send_raw(h, argc, argv, argvlen, reply);
}

/* Turns an error reply into RT_EUPSTREAM, and hands the reply over (or frees it). */
static int finish_reply(rt_redis *h, const char *what, redisReply *r, redisReply **reply)
{
    if (r->type == REDIS_REPLY_ERROR) {
        rt_set_errstr(h->errstr, "redis %s: %s", what, r->str);
        freeReplyObject(r);
        return RT_EUPSTREAM;
    }
    if (reply)
        *reply = r;
    else
        freeReplyObject(r);
    return RT_OK;
}

int rt_redis_command_argv(rt_redis *h, int argc, const char **argv, const size_t *argvlen,
                          redisReply **reply)
{
    redisReply *r = NULL;
    int rc;

    if (reply) *reply = NULL;
    if (argc < 1 || !argv || !argv[0]) {
        rt_set_errstr(h->errstr, "redis command: no command given");
        return RT_EINVAL;
    }
    rc = command_raw(h, argc, argv, argvlen, &r);
    if (rc != RT_OK) return rc;
    return finish_reply(h, argv[0], r, reply);
}

int rt_redis_script_load(rt_redis *h, const rt_redis_script *script)
{
    const char *argv[3] = {"SCRIPT", "LOAD", script->source};
    redisReply *r = NULL;
    int rc = command_raw(h, 3, argv, NULL, &r);
    if (rc != RT_OK) return rc;
    if (r->type == REDIS_REPLY_ERROR) return finish_reply(h, "SCRIPT LOAD", r, NULL);
    if (r->type != REDIS_REPLY_STRING || strcmp(r->str, script->sha1) != 0) {
        rt_set_errstr(h->errstr, "redis SCRIPT LOAD: the server named the script %s, not %s",
                      r->type == REDIS_REPLY_STRING ? r->str : "(not a string)", script->sha1);
        rc = RT_EPROTO;
    }
    freeReplyObject(r);
    return rc;
}

int rt_redis_eval(rt_redis *h, const rt_redis_script *script, int nkeys, const char *const keys[],
                  int nargs, const char *const args[], redisReply **reply)
{
    const char **argv = NULL;
    redisReply *r = NULL;
    char numkeys[16];
    int argc, rc;

    if (reply) *reply = NULL;
    if (nkeys < 0 || nargs < 0 || nkeys > RT_REDIS_MAX_ARGS || nargs > RT_REDIS_MAX_ARGS) {
        rt_set_errstr(h->errstr, "redis EVALSHA: bad key or argument count");
        return RT_EINVAL;
    }
    argc = 3 + nkeys + nargs;
    argv = malloc(sizeof *argv * (size_t)argc);
    if (!argv) {
        rt_set_errstr(h->errstr, "out of memory");
        return RT_ENOMEM;
    }
    snprintf(numkeys, sizeof numkeys, "%d", nkeys);
    argv[0] = "EVALSHA";
    argv[1] = script->sha1;
    argv[2] = numkeys;
    for (int i = 0; i < nkeys; i++) argv[3 + i] = keys[i];
    for (int i = 0; i < nargs; i++) argv[3 + nkeys + i] = args[i];

    rc = command_raw(h, argc, argv, NULL, &r);
    if (rc != RT_OK) goto out;
    if (r->type == REDIS_REPLY_ERROR && !strncmp(r->str, "NOSCRIPT", 8)) {
        freeReplyObject(r);
        r = NULL;
        rt_log_debug("redis script not cached; loading it", "sha1", script->sha1);
        rc = rt_redis_script_load(h, script);
        if (rc != RT_OK) goto out;
        rc = command_raw(h, argc, argv, NULL, &r);
        if (rc != RT_OK) goto out;
    }
    rc = finish_reply(h, "EVALSHA", r, reply);
    r = NULL;
out:
    if (r) freeReplyObject(r);
    free(argv);
    return rc;
}
