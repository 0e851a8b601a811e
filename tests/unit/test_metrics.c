/* SPDX-License-Identifier: MPL-2.0 */
/* test_metrics.c - the Prometheus registry and its exposition (common/io/metrics.h), and the
 * /metrics and /healthz endpoint on a loopback port. */
#include "support/util.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/io/http.h"
#include "common/io/metrics.h"

static bool has_line(const char *text, const char *line)
{
    size_t n = strlen(line);
    for (const char *p = text; (p = strstr(p, line)); p++)
        if ((p == text || p[-1] == '\n') && (p[n] == '\n' || p[n] == '\0')) return true;
    return false;
}

static void assert_has_line(const char *text, const char *line)
{
    if (!has_line(text, line)) fail_msg("missing line <%s> in:\n%s", line, text);
}

static void test_counter_with_labels_is_exposed_with_help_type_and_escaped_values(void **state)
{
    (void)state;
    rt_metric *m = rt_metrics_counter("t_requests_total", "Requests\nby kind", "kind,code");
    assert_non_null(m);
    rt_metric_inc(m, "plain", "200");
    rt_metric_inc(m, "plain", "200");
    rt_metric_add(m, 3, "quo\"te\\back", "500");
    rt_metric_add(m, -5, "plain", "200"); /* counters never go down */
    assert_true(rt_metric_value(m, "plain", "200") == 2);
    char *text = rt_metrics_render();
    assert_non_null(text);
    assert_has_line(text, "# HELP t_requests_total Requests\\nby kind");
    assert_has_line(text, "# TYPE t_requests_total counter");
    assert_has_line(text, "t_requests_total{kind=\"plain\",code=\"200\"} 2");
    assert_has_line(text, "t_requests_total{kind=\"quo\\\"te\\\\back\",code=\"500\"} 3");
    free(text);
}

static void test_registering_a_name_again_returns_the_same_family_unless_it_differs(void **state)
{
    (void)state;
    rt_metric *a = rt_metrics_gauge("t_depth", "Depth", "queue");
    assert_non_null(a);
    assert_ptr_equal(rt_metrics_gauge("t_depth", "Depth", "queue"), a);
    assert_null(rt_metrics_counter("t_depth", "Depth", "queue"));
    assert_null(rt_metrics_gauge("t_depth", "Depth", "queue,other"));
    assert_null(rt_metrics_counter("9bad", "bad name", NULL));
    assert_null(rt_metrics_counter("t_bad_label", "bad label", "le"));
    rt_metric_set(a, 7, "q1");
    rt_metric_gauge_add(a, -2.5, "q1");
    char *text = rt_metrics_render();
    assert_has_line(text, "t_depth{queue=\"q1\"} 4.5");
    free(text);
    rt_metric_inc(NULL, "ignored"); /* a failed registration is a no-op to update */
}

static void test_histogram_buckets_are_cumulative_with_sum_and_count(void **state)
{
    (void)state;
    static const double bounds[] = {0.25, 1, 10};
    rt_metric *h = rt_metrics_histogram("t_seconds", "Durations", "path", bounds, 3);
    assert_non_null(h);
    rt_metric_observe(h, 0.125, "a");
    rt_metric_observe(h, 0.25, "a"); /* le is inclusive */
    rt_metric_observe(h, 5, "a");
    rt_metric_observe(h, 50, "a");
    char *text = rt_metrics_render();
    assert_has_line(text, "# TYPE t_seconds histogram");
    assert_has_line(text, "t_seconds_bucket{path=\"a\",le=\"0.25\"} 2");
    assert_has_line(text, "t_seconds_bucket{path=\"a\",le=\"1\"} 2");
    assert_has_line(text, "t_seconds_bucket{path=\"a\",le=\"10\"} 3");
    assert_has_line(text, "t_seconds_bucket{path=\"a\",le=\"+Inf\"} 4");
    assert_has_line(text, "t_seconds_sum{path=\"a\"} 55.375");
    assert_has_line(text, "t_seconds_count{path=\"a\"} 4");
    free(text);
}

static void test_a_full_family_counts_new_label_values_in_one_overflow_series(void **state)
{
    (void)state;
    rt_metric *m = rt_metrics_counter("t_hosts_total", "Hosts", "host");
    char host[32];
    for (int i = 0; i < RT_METRICS_MAX_SERIES + 10; i++) {
        snprintf(host, sizeof host, "h%d", i);
        rt_metric_inc(m, host);
    }
    char *text = rt_metrics_render();
    assert_has_line(text, "t_hosts_total{host=\"h0\"} 1");
    snprintf(host, sizeof host, "t_hosts_total{host=\"h%d\"} 1", RT_METRICS_MAX_SERIES - 2);
    assert_has_line(text, host);
    assert_has_line(text, "t_hosts_total{host=\"_other\"} 11");
    free(text);
}

static void test_reason_label_keeps_the_leading_word_only(void **state)
{
    (void)state;
    char out[RT_METRICS_LABEL_SIZE];
    rt_metrics_reason_label("upstream-error: GET http://x/api: HTTP 503", out, sizeof out);
    assert_string_equal(out, "upstream-error");
    rt_metrics_reason_label("invalid-value:status.runs[] time", out, sizeof out);
    assert_string_equal(out, "invalid-value");
    rt_metrics_reason_label("", out, sizeof out);
    assert_string_equal(out, "none");
    rt_metrics_reason_label(NULL, out, sizeof out);
    assert_string_equal(out, "none");
}

static atomic_bool g_ready;

static bool ready_fn(void *ctx, char *why, size_t size)
{
    (void)ctx;
    if (atomic_load(&g_ready)) return true;
    snprintf(why, size, "down: redis");
    return false;
}

static long get(int port, const char *path, char **body)
{
    rt_http *http = NULL;
    rt_http_options opts = {.max_attempts = 1, .timeout_ms = 5000};
    assert_int_equal(rt_http_new(&http, &opts, NULL), RT_OK);
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", port, path);
    rt_http_response resp;
    int rc = rt_http_get(http, url, &resp);
    (void)rc;
    long status = resp.status;
    *body = strdup(resp.body);
    rt_http_response_free(&resp);
    rt_http_free(http);
    return status;
}

static void test_endpoint_serves_metrics_and_healthz_follows_readiness(void **state)
{
    (void)state;
    rt_metrics_server *s = NULL;
    char errstr[RT_ERRSTR_SIZE] = "";
    int rc = rt_metrics_server_start(&s, "127.0.0.1", 0, ready_fn, NULL, errstr);
    if (rc != RT_OK) fail_msg("start: %s", errstr);
    int port = rt_metrics_server_port(s);
    assert_true(port > 0);
    rt_metric *m = rt_metrics_counter("t_served_total", "Served", NULL);
    rt_metric_inc(m);

    char *body = NULL;
    assert_int_equal(get(port, "/metrics", &body), 200);
    assert_has_line(body, "t_served_total 1");
    free(body);

    atomic_store(&g_ready, false);
    assert_int_equal(get(port, "/healthz", &body), 503);
    assert_string_equal(body, "not ready: down: redis\n");
    free(body);
    atomic_store(&g_ready, true);
    assert_int_equal(get(port, "/healthz", &body), 200);
    assert_string_equal(body, "ready\n");
    free(body);
    assert_int_equal(get(port, "/nothing", &body), 404);
    free(body);
    rt_metrics_server_stop(s);
}

static void test_endpoint_refuses_a_bind_address_that_is_not_an_address(void **state)
{
    (void)state;
    rt_metrics_server *s = NULL;
    char errstr[RT_ERRSTR_SIZE] = "";
    assert_int_equal(rt_metrics_server_start(&s, "localhost", 0, NULL, NULL, errstr), RT_EINVAL);
    assert_null(s);
    assert_non_null(strstr(errstr, "metrics_bind"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counter_with_labels_is_exposed_with_help_type_and_escaped_values),
        cmocka_unit_test(test_registering_a_name_again_returns_the_same_family_unless_it_differs),
        cmocka_unit_test(test_histogram_buckets_are_cumulative_with_sum_and_count),
        cmocka_unit_test(test_a_full_family_counts_new_label_values_in_one_overflow_series),
        cmocka_unit_test(test_reason_label_keeps_the_leading_word_only),
        cmocka_unit_test(test_endpoint_serves_metrics_and_healthz_follows_readiness),
        cmocka_unit_test(test_endpoint_refuses_a_bind_address_that_is_not_an_address),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
