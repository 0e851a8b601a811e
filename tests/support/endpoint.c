/* SPDX-License-Identifier: MPL-2.0 */
/* endpoint.c - a worker's /metrics and /healthz from a test. */
#include "support/endpoint.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/io/http.h"
#include "support/util.h"

int rt_test_free_port(void)
{
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = 0};
    socklen_t len = sizeof addr;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&addr, sizeof addr), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&addr, &len), 0);
    close(fd);
    return ntohs(addr.sin_port);
}

void rt_test_pause_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

long rt_test_get(int port, const char *path, char **body)
{
    rt_http *http = NULL;
    rt_http_options opts = {.max_attempts = 1, .timeout_ms = 5000, .connect_timeout_ms = 1000};
    assert_int_equal(rt_http_new(&http, &opts, NULL), RT_OK);
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", port, path);
    rt_http_response resp;
    int rc = rt_http_get(http, url, &resp);
    (void)rc;
    long status = resp.status;
    *body = strdup(resp.body ? resp.body : "");
    rt_http_response_free(&resp);
    rt_http_free(http);
    return status;
}

char *rt_test_wait_health(int port, long want, int timeout_ms)
{
    int64_t deadline = rt_test_now_ms() + timeout_ms;
    for (;;) {
        char *body = NULL;
        long status = rt_test_get(port, "/healthz", &body);
        if (status == want) return body;
        if (rt_test_now_ms() > deadline)
            fail_msg("/healthz answered %ld (%s), not %ld, for %d ms", status, body, want,
                     timeout_ms);
        free(body);
        rt_test_pause_ms(100);
    }
}

double rt_test_sample(int port, const char *series)
{
    char *text = NULL;
    assert_int_equal(rt_test_get(port, "/metrics", &text), 200);
    double sum = 0;
    size_t n = strlen(series);
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (strncmp(line, series, n) != 0) continue;
        if (series[n - 1] != '{' && line[n] != ' ') continue;
        const char *value = strrchr(line, ' ');
        if (value) sum += strtod(value + 1, NULL);
    }
    free(text);
    return sum;
}

double rt_test_wait_sample(int port, const char *series, double want, int timeout_ms)
{
    int64_t deadline = rt_test_now_ms() + timeout_ms;
    double v;
    while ((v = rt_test_sample(port, series)) < want && rt_test_now_ms() < deadline)
        rt_test_pause_ms(50);
    return v;
}
