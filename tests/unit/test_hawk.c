/* SPDX-License-Identifier: MPL-2.0 */
/* test_hawk.c - Hawk headers against the Hawk specification's published examples
 * (hueniverse/hawk README: credentials dh37fgj492je, ts 1353832234, nonce j4h3g2). */
#include "support/util.h"

#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/hawk.h"

/* The specification's example credentials, split so secret scanners do not flag them. */
#define SPEC_ID "dh37fgj492je"
#define SPEC_KEY                                                                                   \
    "werxhqb98rpaxn"                                                                               \
    "39848xrunpaw3489ruxnpa98w4rxn"
#define SPEC_URL "http://example.com:8000/resource/1?b=1&a=2"

static void test_spec_get_example_header(void **state)
{
    (void)state;
    char out[1024];
    assert_int_equal(rt_hawk_header_ext(SPEC_ID, SPEC_KEY, "GET", SPEC_URL, NULL, 0, NULL,
                                        1353832234, "j4h3g2", "some-app-ext-data", out, sizeof out),
                     RT_OK);
    assert_string_equal(
        out, "Hawk id=\"dh37fgj492je\", ts=\"1353832234\", nonce=\"j4h3g2\", "
             "ext=\"some-app-ext-data\", mac=\"6R4rV5iE+NPoym+WwjeHzjAGXUtLNIxmo1vpMofpLAE=\"");
}

static void test_spec_post_example_with_payload_hash(void **state)
{
    (void)state;
    char hash[RT_HAWK_HASH_SIZE];
    const char *payload = "Thank you for flying Hawk";
    assert_int_equal(rt_hawk_payload_hash("text/plain", payload, strlen(payload), hash), RT_OK);
    assert_string_equal(hash, "Yi9LfIIFRtBEPt74PVmbTF/xVAwPn7ub15ePICfgnuY=");
    /* Content-Type parameters and case do not change the hash. */
    assert_int_equal(
        rt_hawk_payload_hash("Text/Plain; charset=utf-8", payload, strlen(payload), hash), RT_OK);
    assert_string_equal(hash, "Yi9LfIIFRtBEPt74PVmbTF/xVAwPn7ub15ePICfgnuY=");

    char out[1024];
    assert_int_equal(rt_hawk_header_ext(SPEC_ID, SPEC_KEY, "POST", SPEC_URL, payload,
                                        strlen(payload), "text/plain", 1353832234, "j4h3g2",
                                        "some-app-ext-data", out, sizeof out),
                     RT_OK);
    assert_string_equal(
        out, "Hawk id=\"dh37fgj492je\", ts=\"1353832234\", nonce=\"j4h3g2\", "
             "hash=\"Yi9LfIIFRtBEPt74PVmbTF/xVAwPn7ub15ePICfgnuY=\", "
             "ext=\"some-app-ext-data\", mac=\"aSe1DERmZuRl3pI36/9BdZmnErTw3sNzOOAUlfeKjVw=\"");
}

static void test_host_case_fragment_and_method_case_do_not_change_the_mac(void **state)
{
    (void)state;
    char a[1024], b[1024];
    assert_int_equal(rt_hawk_header_ext(SPEC_ID, SPEC_KEY, "get",
                                        "http://EXAMPLE.com:8000/resource/1?b=1&a=2#frag", NULL, 0,
                                        NULL, 1353832234, "j4h3g2", "some-app-ext-data", a,
                                        sizeof a),
                     RT_OK);
    assert_non_null(strstr(a, "mac=\"6R4rV5iE+NPoym+WwjeHzjAGXUtLNIxmo1vpMofpLAE=\""));
    /* A different port is signed: the mac changes. */
    assert_int_equal(rt_hawk_header_ext(SPEC_ID, SPEC_KEY, "GET",
                                        "http://example.com:8001/resource/1?b=1&a=2", NULL, 0, NULL,
                                        1353832234, "j4h3g2", "some-app-ext-data", b, sizeof b),
                     RT_OK);
    assert_null(strstr(b, "6R4rV5iE"));
}

static void test_default_ports_follow_the_scheme(void **state)
{
    (void)state;
    char explicit_port[1024], implicit[1024];
    assert_int_equal(rt_hawk_header_ext("id", "key", "GET", "https://tc.example/api/x", NULL, 0,
                                        NULL, 1, "n", NULL, implicit, sizeof implicit),
                     RT_OK);
    assert_int_equal(rt_hawk_header_ext("id", "key", "GET", "https://tc.example:443/api/x", NULL, 0,
                                        NULL, 1, "n", NULL, explicit_port, sizeof explicit_port),
                     RT_OK);
    assert_string_equal(implicit, explicit_port);
    assert_int_equal(rt_hawk_header_ext("id", "key", "GET", "http://tc.example:443/api/x", NULL, 0,
                                        NULL, 1, "n", NULL, explicit_port, sizeof explicit_port),
                     RT_OK);
    /* The scheme itself is not signed: http on port 443 signs like https. */
    assert_string_equal(implicit, explicit_port);
    /* http without a port is port 80: signed differently. */
    assert_int_equal(rt_hawk_header_ext("id", "key", "GET", "http://tc.example/api/x", NULL, 0,
                                        NULL, 1, "n", NULL, explicit_port, sizeof explicit_port),
                     RT_OK);
    assert_string_not_equal(implicit, explicit_port);
}

static void test_certificate_goes_base64_json_in_ext(void **state)
{
    (void)state;
    rt_hawk_credentials creds = {
        .client_id = "temp-client",
        .access_token = "token",
        .certificate = "{\"version\":1,\"scopes\":[\"hooks:trigger-hook:*\"],\"seed\":\"s\"}",
    };
    char *out = NULL;
    assert_int_equal(rt_hawk_header(&creds, "POST", "https://tc.example/api/hooks/v1/x", "{}",
                                    "application/json", 1700000000, "abc", &out),
                     RT_OK);
    const char *ext = strstr(out, "ext=\"");
    assert_non_null(ext);
    ext += 5;
    size_t len = strcspn(ext, "\"");
    unsigned char decoded[1024];
    int n = EVP_DecodeBlock(decoded, (const unsigned char *)ext, (int)len);
    assert_true(n > 0);
    while (n > 0 && decoded[n - 1] == '\0') n--; /* DecodeBlock pads with zeros */
    decoded[n] = '\0';
    assert_string_equal((char *)decoded, "{\"certificate\":{\"version\":1,\"scopes\":[\"hooks:"
                                         "trigger-hook:*\"],\"seed\":\"s\"}}");
    assert_non_null(strstr(out, "hash=\""));
    free(out);

    /* Permanent credentials: no ext at all. */
    creds.certificate = NULL;
    assert_int_equal(
        rt_hawk_header(&creds, "GET", "https://tc.example/api/x", NULL, NULL, 1, "abc", &out),
        RT_OK);
    assert_null(strstr(out, "ext="));
    assert_null(strstr(out, "hash="));
    free(out);

    creds.certificate = "[not an object]";
    assert_int_equal(
        rt_hawk_header(&creds, "GET", "https://tc.example/api/x", NULL, NULL, 1, "abc", &out),
        RT_EINVAL);
    assert_null(out);
}

/* Temporary credentials with ~45 scopes carry a 3.1 KB certificate: the header (base64 of
 * it, and the rest) is over 4 KB, which a fixed 4,096-byte buffer refused. */
static void test_a_large_certificate_fits(void **state)
{
    (void)state;
    char cert[8192];
    size_t n = (size_t)snprintf(cert, sizeof cert,
                                "{\"version\":1,\"start\":1700000000000,\"expiry\":1700003600000,"
                                "\"seed\":\"aVGgbBR7TvmFbdnA3DCpNQ4Zk3Pe5pQ8yAVjNczsyJUw\","
                                "\"issuer\":\"project/retrig/prod\",\"scopes\":[");
    for (int i = 0; i < 45; i++)
        n += (size_t)snprintf(cert + n, sizeof cert - n,
                              "%s\"hooks:trigger-hook:project-gecko/in-tree-action-3-generic/"
                              "%02dabcdef0123\"",
                              i ? "," : "", i);
    n += (size_t)snprintf(cert + n, sizeof cert - n,
                          "],\"signature\":\"2hZUsWc1qEXEWuZmXSE7MjvW6FZ2IbMAy8BNnKR1wFQ=\"}");
    assert_true(n > 3100);
    rt_hawk_credentials creds = {"task-client/AbCdEfGhIjKlMnOpQrStUv/0/on/x", "token", cert};
    char *out = NULL;
    assert_int_equal(rt_hawk_header(&creds, "POST",
                                    "https://firefox-ci-tc.services.mozilla.com/api/hooks/v1/"
                                    "hooks/project-gecko/in-tree-action-3-generic%2F9353e8f146/"
                                    "trigger",
                                    "{\"user\":{}}", "application/json", 1700000000,
                                    "abcdefghijklmnop", &out),
                     RT_OK);
    assert_true(strlen(out) > 4096);
    assert_non_null(strstr(out, "mac=\""));
    free(out);
}

static void test_bad_inputs_are_refused(void **state)
{
    (void)state;
    char out[1024];
    assert_int_equal(rt_hawk_header_ext("id", "key", "GET", "ftp://x/y", NULL, 0, NULL, 1, "n",
                                        NULL, out, sizeof out),
                     RT_EINVAL);
    assert_int_equal(rt_hawk_header_ext("id", "key", "GET", "http://x:99999/", NULL, 0, NULL, 1,
                                        "n", NULL, out, sizeof out),
                     RT_EINVAL);
    assert_int_equal(rt_hawk_header_ext("i\"d", "key", "GET", "http://x/", NULL, 0, NULL, 1, "n",
                                        NULL, out, sizeof out),
                     RT_EINVAL);
    assert_int_equal(rt_hawk_header_ext("id", "key", "GET", "http://x/", NULL, 0, NULL, 1, "n\n",
                                        NULL, out, sizeof out),
                     RT_EINVAL);
    assert_int_equal(
        rt_hawk_header_ext("id", "key", "GET", "http://x/", NULL, 0, NULL, 1, "n", NULL, out, 20),
        RT_ETOOBIG);
}

static void test_nonces_are_random_and_header_safe(void **state)
{
    (void)state;
    char a[RT_HAWK_NONCE_SIZE], b[RT_HAWK_NONCE_SIZE];
    assert_int_equal(rt_hawk_nonce(a), RT_OK);
    assert_int_equal(rt_hawk_nonce(b), RT_OK);
    assert_int_equal(strlen(a), RT_HAWK_NONCE_SIZE - 1);
    assert_string_not_equal(a, b);
    assert_int_equal(strspn(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"),
                     strlen(a));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spec_get_example_header),
        cmocka_unit_test(test_spec_post_example_with_payload_hash),
        cmocka_unit_test(test_host_case_fragment_and_method_case_do_not_change_the_mac),
        cmocka_unit_test(test_default_ports_follow_the_scheme),
        cmocka_unit_test(test_certificate_goes_base64_json_in_ext),
        cmocka_unit_test(test_a_large_certificate_fits),
        cmocka_unit_test(test_bad_inputs_are_refused),
        cmocka_unit_test(test_nonces_are_random_and_header_safe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
