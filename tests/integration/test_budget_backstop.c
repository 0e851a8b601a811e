/* SPDX-License-Identifier: MPL-2.0 */
/* test_budget_backstop.c - rt_budget_settle on the local Redis: how a set claim gives back
 * what the Postgres budget backstop did not let it keep (partly or wholly), atomically and
 * only once, and never another claimant's spend. The worker-level behaviour (a counter
 * that lost a committed claim) is in test_classify.c. Keys live under a unique prefix. */
#include "support/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "common/io/budget.h"
#include "common/io/redis.h"

typedef struct fixture {
    rt_config cfg;
    rt_redis *redis;
    char prefix[96];
    rt_claim_request req;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    char errstr[RT_ERRSTR_SIZE] = "";
    assert_int_equal(rt_config_load(&f->cfg, NULL, errstr), RT_OK);
    assert_int_equal(rt_redis_connect(&f->redis, f->cfg.redis_url, NULL, errstr), RT_OK);
    char name[80];
    rt_test_unique_name(name, sizeof name, "tbackstop");
    snprintf(f->prefix, sizeof f->prefix, "%s:", name);
    f->req = (rt_claim_request){.key_prefix = f->prefix,
                                .project = "autoland",
                                .revision = "b437ae030825a8ea9fa7a632b1fcb9becbe11f69",
                                .label = "test-linux/opt-mochitest-1",
                                .platform = "linux64",
                                .task_id = "GWxTc8p_RUa5_Xo4RtMiCA",
                                .day = "2026-11-30",
                                .wanted = 5,
                                .minimum = 2,
                                .limit = 10,
                                .ledger_spent = 0};
    *state = f;
    return 0;
}

static void del(fixture *f, const char *key)
{
    const char *argv[] = {"DEL", key};
    assert_int_equal(rt_redis_command_argv(f->redis, 2, argv, NULL, NULL), RT_OK);
}

static void set_key(fixture *f, char *out, size_t size)
{
    snprintf(out, size, "%sset:%s:%s:%s", f->prefix, f->req.project, f->req.revision, f->req.label);
}

static int teardown(void **state)
{
    fixture *f = *state;
    char key[512];
    set_key(f, key, sizeof key);
    del(f, key);
    snprintf(key, sizeof key, "%sbudget:%s:%s", f->prefix, f->req.platform, f->req.day);
    del(f, key);
    rt_redis_free(f->redis);
    rt_config_free(&f->cfg);
    free(f);
    return 0;
}

/* GET of the set's dedupe key, malloc'd; NULL when absent. Also its TTL in seconds. */
static char *set_value(fixture *f, long long *ttl)
{
    char key[512];
    set_key(f, key, sizeof key);
    const char *get[] = {"GET", key};
    redisReply *reply = NULL;
    assert_int_equal(rt_redis_command_argv(f->redis, 2, get, NULL, &reply), RT_OK);
    char *value = reply->type == REDIS_REPLY_STRING ? strdup(reply->str) : NULL;
    freeReplyObject(reply);
    if (ttl) {
        const char *t[] = {"TTL", key};
        assert_int_equal(rt_redis_command_argv(f->redis, 2, t, NULL, &reply), RT_OK);
        *ttl = reply->integer;
        freeReplyObject(reply);
    }
    return value;
}

static int counter(fixture *f)
{
    int spent = -1;
    assert_int_equal(rt_budget_spent(f->redis, f->prefix, f->req.platform, f->req.day, &spent),
                     RT_OK);
    return spent;
}

static void claim_five(fixture *f)
{
    rt_claim c;
    assert_int_equal(rt_budget_claim(f->redis, &f->req, &c), RT_OK);
    assert_int_equal(c.status, RT_CLAIM_CLAIMED);
    assert_int_equal(c.spent, 5);
    assert_int_equal(counter(f), 5);
    assert_int_equal(c.total, 5); /* the counter the claim left, without asking again */
}

static void test_a_partly_kept_claim_gives_the_rest_back_once(void **state)
{
    fixture *f = *state;
    claim_five(f);
    int refunded = -1;
    /* Postgres kept 2 of the 5; the ledger then holds 10. */
    assert_int_equal(rt_budget_settle(f->redis, &f->req, 5, 2, 10, &refunded), RT_OK);
    assert_int_equal(refunded, 3);
    assert_int_equal(counter(f), 10); /* 5 - 3, raised to the ledger's 10 */
    long long ttl = 0;
    char *value = set_value(f, &ttl);
    assert_non_null(value);
    assert_string_equal(value, "GWxTc8p_RUa5_Xo4RtMiCA:2");
    assert_true(ttl > 86400); /* the dedupe key keeps its expiry */
    free(value);

    /* A repeat (a redelivery) finds the key at 2 and changes nothing. */
    assert_int_equal(rt_budget_settle(f->redis, &f->req, 5, 2, 10, &refunded), RT_OK);
    assert_int_equal(refunded, 0);
    assert_int_equal(counter(f), 10);
    /* The redelivery's claim sees its own set with what was kept. */
    rt_claim c;
    assert_int_equal(rt_budget_claim(f->redis, &f->req, &c), RT_OK);
    assert_int_equal(c.status, RT_CLAIM_EXISTS);
    assert_int_equal(c.spent, 2);
}

static void test_a_refused_claim_frees_its_set_key_and_all_its_budget(void **state)
{
    fixture *f = *state;
    claim_five(f);
    int refunded = -1;
    /* Nothing kept; the ledger holds 3 (less than the counter: no raise). */
    assert_int_equal(rt_budget_settle(f->redis, &f->req, 5, 0, 3, &refunded), RT_OK);
    assert_int_equal(refunded, 5);
    assert_int_equal(counter(f), 3);
    char *value = set_value(f, NULL);
    assert_null(value);
    assert_int_equal(rt_budget_settle(f->redis, &f->req, 5, 0, 3, &refunded), RT_OK);
    assert_int_equal(refunded, 0);
    assert_int_equal(counter(f), 3);
    /* The set can be claimed again, from what is really left. */
    rt_claim c;
    assert_int_equal(rt_budget_claim(f->redis, &f->req, &c), RT_OK);
    assert_int_equal(c.status, RT_CLAIM_CLAIMED);
    assert_int_equal(c.spent, 5);
    assert_int_equal(counter(f), 8);
    assert_int_equal(c.total, 8);
}

static void test_another_claimants_key_and_spend_are_left_alone(void **state)
{
    fixture *f = *state;
    claim_five(f);
    rt_claim_request other = f->req;
    other.task_id = "B3EheQ-IQ5aPzw34KS_a6g";
    int refunded = -1;
    assert_int_equal(rt_budget_settle(f->redis, &other, 5, 0, 0, &refunded), RT_OK);
    assert_int_equal(refunded, 0);
    assert_int_equal(counter(f), 5);
    char *value = set_value(f, NULL);
    assert_non_null(value);
    assert_string_equal(value, "GWxTc8p_RUa5_Xo4RtMiCA:5");
    free(value);
    /* Nor a claim of another size than the one the key records. */
    assert_int_equal(rt_budget_settle(f->redis, &f->req, 4, 0, 0, &refunded), RT_OK);
    assert_int_equal(refunded, 0);
    assert_int_equal(counter(f), 5);
}

static void test_a_claim_lost_with_redis_gives_nothing_back(void **state)
{
    fixture *f = *state;
    claim_five(f);
    /* Redis restarted: key and counter gone; a replica re-created the counter from the
     * ledger (4), which does not count this claim. */
    char key[512];
    set_key(f, key, sizeof key);
    del(f, key);
    char ckey[512];
    snprintf(ckey, sizeof ckey, "%sbudget:%s:%s", f->prefix, f->req.platform, f->req.day);
    const char *set[] = {"SET", ckey, "4"};
    assert_int_equal(rt_redis_command_argv(f->redis, 3, set, NULL, NULL), RT_OK);
    int refunded = -1;
    assert_int_equal(rt_budget_settle(f->redis, &f->req, 5, 0, 9, &refunded), RT_OK);
    assert_int_equal(refunded, 0);
    assert_int_equal(counter(f), 4);
}

/* A platform name long enough to fill the old 512-byte key buffer cut the counter key
 * before its ":<day>": two days, or two such platforms, shared one counter. Keys are whole. */
static void test_long_platform_names_keep_whole_counter_keys(void **state)
{
    fixture *f = *state;
    char a[501], b[501];
    memset(a, 'p', 500);
    a[500] = '\0';
    memcpy(b, a, sizeof a);
    b[499] = 'q'; /* differs only at its end */
    f->req.platform = a;
    claim_five(f);
    rt_claim_request other = f->req;
    other.platform = b;
    other.label = "test-linux/opt-mochitest-2";
    rt_claim c;
    assert_int_equal(rt_budget_claim(f->redis, &other, &c), RT_OK);
    assert_int_equal(c.status, RT_CLAIM_CLAIMED);
    assert_int_equal(c.total, 5); /* its own counter, not a's */
    int spent = -1;
    assert_int_equal(rt_budget_spent(f->redis, f->prefix, a, "2026-12-01", &spent), RT_OK);
    assert_int_equal(spent, 0); /* the next day's counter is another key */
    char key[1024];
    snprintf(key, sizeof key, "%sbudget:%s:%s", f->prefix, a, f->req.day);
    const char *get[] = {"GET", key};
    redisReply *reply = NULL;
    assert_int_equal(rt_redis_command_argv(f->redis, 2, get, NULL, &reply), RT_OK);
    assert_int_equal(reply->type, REDIS_REPLY_STRING); /* whole, with its day */
    assert_string_equal(reply->str, "5");
    freeReplyObject(reply);
    del(f, key);
    snprintf(key, sizeof key, "%sbudget:%s:%s", f->prefix, b, f->req.day);
    del(f, key);
    snprintf(key, sizeof key, "%sset:%s:%s:%s", f->prefix, other.project, other.revision,
             other.label);
    del(f, key);
    /* A key past RT_BUDGET_MAX_KEY is refused, not cut. */
    char *huge = malloc(RT_BUDGET_MAX_KEY + 1);
    assert_non_null(huge);
    memset(huge, 'h', RT_BUDGET_MAX_KEY);
    huge[RT_BUDGET_MAX_KEY] = '\0';
    other.platform = huge;
    assert_int_equal(rt_budget_claim(f->redis, &other, &c), RT_EINVAL);
    free(huge);
    f->req.platform = "linux64";
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_long_platform_names_keep_whole_counter_keys, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_partly_kept_claim_gives_the_rest_back_once, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_refused_claim_frees_its_set_key_and_all_its_budget,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_another_claimants_key_and_spend_are_left_alone, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_claim_lost_with_redis_gives_nothing_back, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
