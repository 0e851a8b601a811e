/* SPDX-License-Identifier: MPL-2.0 */
/* test_jscan.c - the strict JSON scanner (common/core/jscan.h): named edge cases, the token
 * walk, and agreement with jansson on every JSON fixture and on systematic damage to them
 * (every truncation of a Pulse body, byte flips at fixed strides). */
#include "support/util.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/jscan.h"
#include "common/core/taskdef.h"
#include "support/jscan_diff.h"

static int parse(const char *text)
{
    rt_jscan js;
    rt_jscan_init(&js);
    int rc = rt_jscan_parse(&js, text, strlen(text));
    rt_jscan_free(&js);
    return rc;
}

static void test_strict_grammar_refuses_what_json_does_not_allow(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "",
        " ",
        "{",
        "{\"a\":1,}",
        "[1,]",
        "[01]",
        "[-]",
        "[1.]",
        "[1e]",
        "[.5]",
        "[+1]",
        "{\"a\" 1}",
        "{a:1}",
        "[\"\\x\"]",
        "[\"\\u12\"]",
        "[\"\\u0000\"]",
        "[\"\\uD800\"]",
        "[\"\\uDC00\"]",
        "[\"\\uD800\\u0041\"]",
        "[\"a\nb\"]",
        "[tru]",
        "[nul]",
        "[1] [2]",
        "[\"\xc0\xaf\"]",
        "[\"\xed\xa0\x80\"]",
        "[\"\xf4\x90\x80\x80\"]",
        "[\"\xe2\x82\"]",
        "{\"a\":1,\"a\":2}",
        "{\"a\":1,\"\\u0061\":2}",
        "[99999999999999999999]",
        "[-9223372036854775809]",
        "[1e999]",
        "{\"k\":1}x",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (parse(bad[i]) != RT_EPROTO) fail_msg("accepted: %s", bad[i]);
        assert_int_equal(rt_jscan_diff(bad[i], strlen(bad[i])), 0);
    }
    static const char *const good[] = {
        "0",
        "-0",
        "\"\"",
        "[]",
        "{}",
        " [ 1 , -2.5e+3 , true , false , null ] ",
        "[\"\\ud83d\\ude00 \\\" \\\\ \\/ \\b\\f\\n\\r\\t\"]",
        "[9223372036854775807]",
        "[-9223372036854775808]",
        "[1e-999]",
        "{\"a\":{\"a\":{\"a\":[]}}}",
        "[\"\xf0\x9f\x98\x80 caf\xc3\xa9\"]",
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        if (parse(good[i]) != RT_OK) fail_msg("refused: %s", good[i]);
        assert_int_equal(rt_jscan_diff(good[i], strlen(good[i])), 0);
    }
}

static void test_nesting_deeper_than_jansson_allows_is_refused(void **state)
{
    (void)state;
    /* 2047 arrays around a scalar are 2048 values deep: allowed; one more is not. */
    for (int depth = 2046; depth <= 2049; depth++) {
        char *text = malloc((size_t)depth * 2 + 2);
        assert_non_null(text);
        memset(text, '[', (size_t)depth);
        text[depth] = '1';
        memset(text + depth + 1, ']', (size_t)depth);
        text[depth * 2 + 1] = '\0';
        assert_int_equal(parse(text), depth + 1 <= RT_JSCAN_MAX_DEPTH ? RT_OK : RT_EPROTO);
        assert_int_equal(rt_jscan_diff(text, strlen(text)), 0);
        free(text);
    }
}

static void test_tokens_walk_members_and_decode_strings(void **state)
{
    (void)state;
    const char *text =
        "{\"status\": {\"runs\": [{\"runId\": 0}, {\"runId\": 1}], \"taskId\":"
        " \"a\\u00e9\\n\"}, \"runId\": 1, \"big\": [[1, 2], {\"x\": null}], \"z\": 3}";
    rt_jscan js;
    rt_jscan_init(&js);
    assert_int_equal(rt_jscan_parse(&js, text, strlen(text)), RT_OK);
    int status = rt_js_get(&js, 0, "status");
    assert_int_equal(rt_js_type_of(&js, status), RT_JS_OBJECT);
    int runs = rt_js_get(&js, status, "runs");
    assert_int_equal(js.tok[runs].count, 2);
    int run = rt_js_first(&js, runs), seen = 0;
    for (; run >= 0; run = rt_js_after(&js, runs, run))
        assert_int_equal(rt_js_integer(&js, rt_js_get(&js, run, "runId")), seen++);
    assert_int_equal(seen, 2);
    int id = rt_js_get(&js, status, "taskId");
    assert_int_equal(rt_js_strlen(&js, id), 4);
    char *s = rt_js_strdup(&js, id);
    assert_string_equal(s, "a\xc3\xa9\n");
    free(s);
    assert_true(rt_js_streq(&js, id, "a\xc3\xa9\n"));
    assert_false(rt_js_streq(&js, id, "a\xc3\xa9"));
    /* Siblings are found past nested containers; absent keys and wrong types give -1. */
    assert_int_equal(rt_js_integer(&js, rt_js_get(&js, 0, "z")), 3);
    assert_int_equal(rt_js_get(&js, 0, "missing"), -1);
    assert_int_equal(rt_js_get(&js, runs, "runId"), -1);
    rt_jscan_free(&js);
}

static void
test_large_documents_move_to_the_heap_and_objects_with_many_keys_are_checked(void **state)
{
    (void)state;
    size_t n = 5000, cap = n * 16 + 16, len = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    text[len++] = '{';
    for (size_t i = 0; i < n; i++)
        len += (size_t)sprintf(text + len, "%s\"k%zu\":%zu", i ? "," : "", i, i);
    text[len++] = '}';
    text[len] = '\0';
    rt_jscan js;
    rt_jscan_init(&js);
    assert_int_equal(rt_jscan_parse(&js, text, len), RT_OK);
    assert_true(js.tok != js.local);
    assert_int_equal(rt_js_integer(&js, rt_js_get(&js, 0, "k4999")), 4999);
    /* The same key twice among thousands is found (sorted check). */
    memcpy(text + 1, "\"k1\"", 4);
    assert_int_equal(rt_jscan_parse(&js, text, len), RT_EPROTO);
    assert_non_null(strstr(js.err, "duplicate"));
    rt_jscan_free(&js);
    assert_int_equal(rt_jscan_diff(text, len), 0);
    free(text);
}

/* Every fixture file that jansson reads as JSON, whole and damaged. */
static void check_file(const char *path, bool every_truncation)
{
    size_t len = 0;
    char *text = rt_test_read_file(path, &len);
    assert_non_null(text);
    if (rt_jscan_diff(text, len)) fail_msg("disagree on %s", path);
    size_t stride = every_truncation ? 1 : len / 64 + 1;
    for (size_t cut = 0; cut < len; cut += stride)
        if (rt_jscan_diff(text, cut)) fail_msg("disagree on %s cut at %zu", path, cut);
    static const char flips[] = {'"', '\\', '}', ']', ',', ':', '0', 'e', '\x80', '\0', 'u', ' '};
    for (size_t at = 0; at < len; at += len / 97 + 1) {
        char saved = text[at];
        for (size_t f = 0; f < sizeof flips; f++) {
            text[at] = flips[f];
            if (rt_jscan_diff(text, len))
                fail_msg("disagree on %s with 0x%02x at %zu", path, (unsigned char)flips[f], at);
        }
        text[at] = saved;
    }
    free(text);
}

static void test_agrees_with_jansson_on_fixtures_and_their_damage(void **state)
{
    (void)state;
    static const char *const dirs[] = {"pulse", "taskcluster", "treeherder", "perfherder"};
    int files = 0;
    for (size_t d = 0; d < sizeof dirs / sizeof dirs[0]; d++) {
        char dir[1024];
        snprintf(dir, sizeof dir, "%s", rt_test_fixture(dirs[d]));
        DIR *dp = opendir(dir);
        assert_non_null(dp);
        struct dirent *e;
        while ((e = readdir(dp))) {
            size_t n = strlen(e->d_name);
            if (n < 5 || strcmp(e->d_name + n - 5, ".json")) continue;
            char path[2048];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            check_file(path, d == 0 && files < 4);
            files++;
        }
        closedir(dp);
    }
    assert_true(files >= 10);
}

/* Every lane of retrig-classify scans task definitions and errorsummaries at once: the
 * duplicate-key check of large objects (sorted) must not share state between threads. Each
 * thread scans objects of its own size and keys, half of them with one duplicated name. */
typedef struct scan_job {
    int id;
    int wrong; /* verdicts that were not the expected one */
} scan_job;

static void *scan_many(void *arg)
{
    scan_job *job = arg;
    int keys = 17 + job->id * 9;
    char *doc[2];
    for (int dup = 0; dup < 2; dup++) {
        size_t cap = (size_t)keys * 40 + 16, n = 0;
        doc[dup] = malloc(cap);
        n += (size_t)snprintf(doc[dup] + n, cap - n, "{");
        for (int k = 0; k < keys; k++)
            n += (size_t)snprintf(doc[dup] + n, cap - n, "%s\"t%d-key-%03d\":%d", k ? "," : "",
                                  job->id, dup && k == keys - 1 ? 3 : k, k);
        snprintf(doc[dup] + n, cap - n, "}");
    }
    rt_jscan js;
    rt_jscan_init(&js);
    for (int i = 0; i < 3000; i++) {
        int dup = i % 2, rc = rt_jscan_parse(&js, doc[dup], strlen(doc[dup]));
        if (rc != (dup ? RT_EPROTO : RT_OK)) job->wrong++;
    }
    rt_jscan_free(&js);
    free(doc[0]);
    free(doc[1]);
    return NULL;
}

static void test_threads_check_duplicate_keys_independently(void **state)
{
    (void)state;
    enum { THREADS = 4 };
    pthread_t t[THREADS];
    scan_job jobs[THREADS];
    for (int i = 0; i < THREADS; i++) {
        jobs[i] = (scan_job){.id = i};
        assert_int_equal(pthread_create(&t[i], NULL, scan_many, &jobs[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        assert_int_equal(pthread_join(t[i], NULL), 0);
        assert_int_equal(jobs[i].wrong, 0);
    }
}

/* 10 MB of "[0,0,...]" is 5 million values: the scanner kept a 20-byte token for each
 * (303 MB resident with the doubling). Past RT_JSCAN_MAX_TOKENS it stops with a clear error,
 * its buffer bounded. */
static void test_a_document_of_too_many_values_is_refused_with_bounded_memory(void **state)
{
    (void)state;
    size_t n = 10 << 20;
    char *text = malloc(n + 1);
    assert_non_null(text);
    text[0] = '[';
    for (size_t i = 1; i + 1 < n; i += 2) {
        text[i] = '0';
        text[i + 1] = ',';
    }
    text[n - 2] = '0';
    text[n - 1] = ']';
    text[n] = '\0';
    rt_jscan js;
    rt_jscan_init(&js);
    assert_int_equal(rt_jscan_parse(&js, text, n), RT_EPROTO);
    assert_true(js.too_many);
    assert_non_null(strstr(js.err, "more than 1048576 values"));
    assert_true(js.cap <= RT_JSCAN_MAX_TOKENS);
    rt_jscan_free(&js);
    rt_taskdef def;
    char reason[128];
    assert_int_equal(rt_taskdef_parse(text, n, n, &def, reason), RT_EPROTO);
    assert_string_equal(reason, "too-big:more than 1048576 values");
    /* A document just under the cap still parses. */
    size_t ok = 2 * (RT_JSCAN_MAX_TOKENS - 1) + 1;
    text[ok - 1] = ']';
    rt_jscan_init(&js);
    assert_int_equal(rt_jscan_parse(&js, text, ok), RT_OK);
    assert_int_equal(js.ntok, RT_JSCAN_MAX_TOKENS);
    rt_jscan_free(&js);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_document_of_too_many_values_is_refused_with_bounded_memory),
        cmocka_unit_test(test_strict_grammar_refuses_what_json_does_not_allow),
        cmocka_unit_test(test_nesting_deeper_than_jansson_allows_is_refused),
        cmocka_unit_test(test_tokens_walk_members_and_decode_strings),
        cmocka_unit_test(
            test_large_documents_move_to_the_heap_and_objects_with_many_keys_are_checked),
        cmocka_unit_test(test_agrees_with_jansson_on_fixtures_and_their_damage),
        cmocka_unit_test(test_threads_check_duplicate_keys_independently),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
