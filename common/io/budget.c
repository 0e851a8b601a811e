/* SPDX-License-Identifier: MPL-2.0 */
/* budget.c - atomic claim of a retrigger set and its budget in Redis (Lua), and the give-back
 * of what the Postgres backstop did not let a claim keep. */
#include "common/io/budget.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEDUPE_TTL_SECONDS  "1209600" /* 14 days: far beyond any retrigger set's life */
#define COUNTER_TTL_SECONDS "259200"  /* 3 days */

/* KEYS: dedupe key, counter key. ARGV: owner task, wanted, minimum, limit, ledger spent,
 * dedupe ttl, counter ttl. Returns {status, number, owner[, the counter after a claim]}. */
static const char claim_source[] =
    "local existing = redis.call('GET', KEYS[1])\n"
    "if existing then\n"
    "  local owner, spent = string.match(existing, '^(.*):(%d+)$')\n"
    "  return {'exists', spent or '0', owner or existing}\n"
    "end\n"
    "local spent = tonumber(redis.call('GET', KEYS[2]) or '-1')\n"
    "if spent < 0 then\n"
    "  spent = tonumber(ARGV[5])\n"
    "  redis.call('SET', KEYS[2], spent, 'EX', ARGV[7])\n"
    "end\n"
    "local left = tonumber(ARGV[4]) - spent\n"
    "local take = math.max(math.min(tonumber(ARGV[2]), left), 0)\n"
    "if take < tonumber(ARGV[3]) then\n"
    "  return {'exhausted', tostring(math.max(left, 0)), ''}\n"
    "end\n"
    "local total = redis.call('INCRBY', KEYS[2], take)\n"
    "redis.call('SET', KEYS[1], ARGV[1] .. ':' .. take, 'EX', ARGV[6])\n"
    "return {'claimed', tostring(take), ARGV[1], tostring(total)}\n";

/* Gives AMOUNT (a Lua expression) back to the counter KEY, never below zero; leaves the
 * amount given back in `back`. Shared by the refund and the settle scripts. */
#define REFUND_LUA(KEY, AMOUNT)                                                                    \
    "local spent = tonumber(redis.call('GET', " KEY ") or '0')\n"                                  \
    "local back = math.max(math.min(spent, " AMOUNT "), 0)\n"                                      \
    "if back > 0 then redis.call('DECRBY', " KEY ", back) end\n"

/* KEYS: counter. ARGV: amount. Returns what was given back. */
static const char refund_source[] = REFUND_LUA("KEYS[1]", "tonumber(ARGV[1])") "return back\n";

/* KEYS: dedupe key, counter key. ARGV: owner task, claimed, kept, ledger total. Only while the
 * dedupe key still records this claim ("owner:claimed"): it now records "owner:kept" (same
 * TTL), or goes when kept is 0; claimed - kept goes back to the counter; then a counter that
 * exists is raised to at least the ledger total. Returns what was given back. */
#define SETTLE_KEY_LUA                                                                             \
    "if redis.call('GET', KEYS[1]) ~= ARGV[1] .. ':' .. ARGV[2] then return 0 end\n"               \
    "local kept = tonumber(ARGV[3])\n"                                                             \
    "if kept > 0 then\n"                                                                           \
    "  redis.call('SET', KEYS[1], ARGV[1] .. ':' .. kept, 'KEEPTTL')\n"                            \
    "else\n"                                                                                       \
    "  redis.call('DEL', KEYS[1])\n"                                                               \
    "end\n"
#define RAISE_COUNTER_LUA                                                                          \
    "local now = redis.call('GET', KEYS[2])\n"                                                     \
    "if now and tonumber(now) < tonumber(ARGV[4]) then\n"                                          \
    "  redis.call('SET', KEYS[2], ARGV[4], 'KEEPTTL')\n"                                           \
    "end\n"
static const char settle_source[] = SETTLE_KEY_LUA REFUND_LUA("KEYS[2]", "tonumber(ARGV[2]) - kept")
    RAISE_COUNTER_LUA "return back\n";

static rt_redis_script claim_script, refund_script, settle_script;
static pthread_once_t scripts_once = PTHREAD_ONCE_INIT;

static void fill_scripts(void)
{
    rt_redis_script_init(&claim_script, claim_source);
    rt_redis_script_init(&refund_script, refund_source);
    rt_redis_script_init(&settle_script, settle_source);
}

static void init_scripts(void) { pthread_once(&scripts_once, fill_scripts); }

/* Keys are made whole, never cut: a platform name long enough to fill a fixed buffer lost
 * the counter's ":<day>" suffix, and days, or platforms sharing a long prefix, then shared
 * one counter. A key longer than RT_BUDGET_MAX_KEY is refused (RT_EINVAL). */
static int make_key(char **out, const char *fmt, ...) RT_PRINTF(2, 3);
static int make_key(char **out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(out, fmt, ap);
    va_end(ap);
    if (n < 0) {
        *out = NULL;
        return RT_ENOMEM;
    }
    if ((size_t)n > RT_BUDGET_MAX_KEY) {
        free(*out);
        *out = NULL;
        return RT_EINVAL;
    }
    return RT_OK;
}

static int counter_key(char **out, const char *prefix, const char *platform, const char *day)
{
    return make_key(out, "%sbudget:%s:%s", prefix, platform, day);
}

static int set_key(char **out, const rt_claim_request *req)
{
    return make_key(out, "%sset:%s:%s:%s", req->key_prefix, req->project, req->revision,
                    req->label);
}

static int claim(rt_redis *redis, const rt_claim_request *req, const char *dedupe, rt_claim *out)
{
    init_scripts();
    memset(out, 0, sizeof *out);
    char *counter = NULL;
    int rc = counter_key(&counter, req->key_prefix, req->platform, req->day);
    if (rc != RT_OK) return rc;
    char wanted[16], minimum[16], limit[16], ledger[16];
    snprintf(wanted, sizeof wanted, "%d", req->wanted);
    snprintf(minimum, sizeof minimum, "%d", req->minimum);
    snprintf(limit, sizeof limit, "%d", req->limit);
    snprintf(ledger, sizeof ledger, "%d", req->ledger_spent);
    const char *keys[] = {dedupe, counter};
    const char *args[] = {req->task_id,       wanted, minimum, limit, ledger, DEDUPE_TTL_SECONDS,
                          COUNTER_TTL_SECONDS};
    redisReply *reply = NULL;
    rc = rt_redis_eval(redis, &claim_script, 2, keys, 7, args, &reply);
    free(counter);
    if (rc != RT_OK) return rc;
    rc = RT_EPROTO;
    if (reply->type != REDIS_REPLY_ARRAY || reply->elements < 3 || reply->elements > 4) goto out;
    for (size_t i = 0; i < reply->elements; i++)
        if (reply->element[i]->type != REDIS_REPLY_STRING) goto out;
    const char *status = reply->element[0]->str;
    int number = atoi(reply->element[1]->str);
    if (!strcmp(status, "claimed")) {
        out->status = RT_CLAIM_CLAIMED;
        out->spent = number;
        out->total = reply->elements == 4 ? atoi(reply->element[3]->str) : -1;
    } else if (!strcmp(status, "exists")) {
        out->status = RT_CLAIM_EXISTS;
        out->spent = number;
        snprintf(out->owner_task_id, sizeof out->owner_task_id, "%s", reply->element[2]->str);
    } else if (!strcmp(status, "exhausted")) {
        out->status = RT_CLAIM_EXHAUSTED;
        out->left = number;
    } else {
        goto out;
    }
    rc = RT_OK;
out:
    freeReplyObject(reply);
    return rc;
}

int rt_budget_claim(rt_redis *redis, const rt_claim_request *req, rt_claim *out)
{
    char *dedupe = NULL;
    int rc = set_key(&dedupe, req);
    if (rc == RT_OK) rc = claim(redis, req, dedupe, out);
    free(dedupe);
    return rc;
}

int rt_budget_claim_keyed(rt_redis *redis, const rt_claim_request *req, const char *dedupe_key,
                          rt_claim *out)
{
    char *dedupe = NULL;
    int rc = make_key(&dedupe, "%s%s", req->key_prefix, dedupe_key);
    if (rc == RT_OK) rc = claim(redis, req, dedupe, out);
    free(dedupe);
    return rc;
}

static int settle(rt_redis *redis, const rt_claim_request *req, const char *dedupe, int claimed,
                  int kept, int ledger_total, int *refunded)
{
    init_scripts();
    if (refunded) *refunded = 0;
    char *counter = NULL;
    int rc = counter_key(&counter, req->key_prefix, req->platform, req->day);
    if (rc != RT_OK) return rc;
    char claimed_text[16], kept_text[16], total_text[16];
    snprintf(claimed_text, sizeof claimed_text, "%d", claimed);
    snprintf(kept_text, sizeof kept_text, "%d", kept);
    snprintf(total_text, sizeof total_text, "%d", ledger_total);
    const char *keys[] = {dedupe, counter};
    const char *args[] = {req->task_id, claimed_text, kept_text, total_text};
    redisReply *reply = NULL;
    rc = rt_redis_eval(redis, &settle_script, 2, keys, 4, args, &reply);
    free(counter);
    if (rc != RT_OK) return rc;
    if (reply->type != REDIS_REPLY_INTEGER)
        rc = RT_EPROTO;
    else if (refunded)
        *refunded = (int)reply->integer;
    freeReplyObject(reply);
    return rc;
}

int rt_budget_settle(rt_redis *redis, const rt_claim_request *req, int claimed, int kept,
                     int ledger_total, int *refunded)
{
    char *dedupe = NULL;
    int rc = set_key(&dedupe, req);
    if (rc == RT_OK) rc = settle(redis, req, dedupe, claimed, kept, ledger_total, refunded);
    free(dedupe);
    return rc;
}

int rt_budget_settle_keyed(rt_redis *redis, const rt_claim_request *req, const char *dedupe_key,
                           int claimed, int kept, int ledger_total, int *refunded)
{
    char *dedupe = NULL;
    int rc = make_key(&dedupe, "%s%s", req->key_prefix, dedupe_key);
    if (rc == RT_OK) rc = settle(redis, req, dedupe, claimed, kept, ledger_total, refunded);
    free(dedupe);
    return rc;
}

int rt_budget_refund(rt_redis *redis, const char *key_prefix, const char *platform, const char *day,
                     int amount)
{
    init_scripts();
    char *counter = NULL, value[16];
    int rc = counter_key(&counter, key_prefix, platform, day);
    if (rc != RT_OK) return rc;
    snprintf(value, sizeof value, "%d", amount);
    const char *keys[] = {counter};
    const char *args[] = {value};
    redisReply *reply = NULL;
    rc = rt_redis_eval(redis, &refund_script, 1, keys, 1, args, &reply);
    freeReplyObject(reply);
    free(counter);
    return rc;
}

int rt_budget_spent(rt_redis *redis, const char *key_prefix, const char *platform, const char *day,
                    int *spent)
{
    char *counter = NULL;
    int rc = counter_key(&counter, key_prefix, platform, day);
    if (rc != RT_OK) return rc;
    const char *argv[] = {"GET", counter};
    redisReply *reply = NULL;
    rc = rt_redis_command_argv(redis, 2, argv, NULL, &reply);
    free(counter);
    if (rc != RT_OK) return rc;
    *spent = reply->type == REDIS_REPLY_STRING ? atoi(reply->str) : 0;
    freeReplyObject(reply);
    return RT_OK;
}
