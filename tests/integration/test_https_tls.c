/* SPDX-License-Identifier: MPL-2.0 */
/* test_https_tls.c - TLS verification of the HTTP client (common/io/http.h) against a real TLS
 * server (openssl s_server -www) with a fresh self-signed certificate: refused with the
 * system CAs, with another CA and for another host name; accepted once its CA is configured. */
#include "support/util.h"

#include "common/io/http.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct tls_server {
    char *dir;
    char cert[512];  /* the server's self-signed certificate (its own CA) */
    char other[512]; /* an unrelated self-signed certificate */
    int port;
    pid_t pid;
    int stdin_fd; /* kept open: s_server stops when its stdin ends */
} tls_server;

static tls_server server;

static int free_port(void)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0) return -1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    int port = -1;
    if (bind(s, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(s, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    close(s);
    return port;
}

static bool port_open(int port)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0) return false;
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    bool ok = connect(s, (struct sockaddr *)&a, sizeof a) == 0;
    close(s);
    return ok;
}

static int make_cert(const char *dir, const char *name, const char *cn)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
             "-keyout %s/%s.key -out %s/%s.pem -days 1 -subj /CN=%s "
             "-addext subjectAltName=DNS:%s >/dev/null 2>&1",
             dir, name, dir, name, cn, cn);
    return system(cmd) == 0 ? 0 : -1;
}

static int group_setup(void **state)
{
    (void)state;
    server.dir = rt_test_tempdir();
    if (make_cert(server.dir, "server", "localhost") != 0 ||
        make_cert(server.dir, "other", "localhost") != 0) {
        fprintf(stderr, "openssl req failed\n");
        return -1;
    }
    snprintf(server.cert, sizeof server.cert, "%s/server.pem", server.dir);
    snprintf(server.other, sizeof server.other, "%s/other.pem", server.dir);
    server.port = free_port();
    if (server.port < 0) return -1;
    int fds[2];
    if (pipe(fds) != 0) return -1;
    server.pid = fork();
    if (server.pid < 0) return -1;
    if (server.pid == 0) {
        char accept[32], key[600];
        snprintf(accept, sizeof accept, "127.0.0.1:%d", server.port);
        snprintf(key, sizeof key, "%s/server.key", server.dir);
        dup2(fds[0], 0);
        close(fds[1]);
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) {
            dup2(devnull, 1);
            dup2(devnull, 2);
        }
        execlp("openssl", "openssl", "s_server", "-accept", accept, "-cert", server.cert, "-key",
               key, "-www", "-quiet", (char *)NULL);
        _exit(127);
    }
    close(fds[0]);
    server.stdin_fd = fds[1];
    int64_t deadline = rt_test_now_ms() + 10000;
    while (!port_open(server.port)) {
        if (rt_test_now_ms() > deadline) {
            fprintf(stderr, "openssl s_server did not start\n");
            return -1;
        }
        usleep(20000);
    }
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    kill(server.pid, SIGTERM);
    waitpid(server.pid, NULL, 0);
    close(server.stdin_fd);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", server.dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", server.dir);
    free(server.dir);
    return 0;
}

static void no_sleep(void *ctx, long ms)
{
    (void)ctx;
    (void)ms;
}

/* GET https://<host>:<port>/ with ca_file (NULL: the system CAs). */
static int get(const char *host, const char *ca_file, rt_http_response *resp, char *errstr)
{
    rt_http_options opts = {
        .ca_file = ca_file, .max_attempts = 3, .timeout_ms = 10000, .sleep_ms = no_sleep};
    rt_http *h = NULL;
    char err[RT_ERRSTR_SIZE];
    if (rt_http_new(&h, &opts, err) != 0) fail_msg("rt_http_new: %s", err);
    char url[128];
    snprintf(url, sizeof url, "https://%s:%d/", host, server.port);
    int rc = rt_http_get(h, url, resp);
    snprintf(errstr, RT_ERRSTR_SIZE, "%s", rt_http_errstr(h));
    rt_http_free(h);
    return rc;
}

static void test_https_with_unknown_certificate_is_refused_with_system_cas(void **state)
{
    (void)state;
    rt_http_response resp;
    char err[RT_ERRSTR_SIZE];
    assert_int_equal(get("localhost", NULL, &resp, err), RT_ECONN);
    assert_int_equal(resp.status, 0);
    assert_int_equal(resp.attempts, 1); /* a certificate failure is not retried */
    assert_non_null(strstr(err, "TLS verification failed"));
    rt_http_response_free(&resp);
}

static void test_https_with_another_ca_configured_is_refused(void **state)
{
    (void)state;
    rt_http_response resp;
    char err[RT_ERRSTR_SIZE];
    assert_int_equal(get("localhost", server.other, &resp, err), RT_ECONN);
    assert_int_equal(resp.status, 0);
    assert_non_null(strstr(err, "TLS verification failed"));
    rt_http_response_free(&resp);
}

static void test_https_with_its_ca_but_another_host_name_is_refused(void **state)
{
    (void)state;
    rt_http_response resp;
    char err[RT_ERRSTR_SIZE];
    /* The certificate names DNS:localhost only, not IP 127.0.0.1. */
    assert_int_equal(get("127.0.0.1", server.cert, &resp, err), RT_ECONN);
    assert_int_equal(resp.status, 0);
    assert_non_null(strstr(err, "TLS verification failed"));
    rt_http_response_free(&resp);
}

static void test_https_with_its_ca_configured_is_accepted(void **state)
{
    (void)state;
    rt_http_response resp;
    char err[RT_ERRSTR_SIZE];
    int rc = get("localhost", server.cert, &resp, err);
    if (rc != 0) fail_msg("GET failed: %s", err);
    assert_int_equal(resp.status, 200);
    assert_non_null(strstr(resp.body, "s_server")); /* -www echoes its command line */
    rt_http_response_free(&resp);
}

/* An https upstream that redirects to http would send the request (and any answer it
 * trusts) in clear: refused. Python's ssl server on one port redirects /clear to a plain
 * http server on another (which counts what reaches it) and /secure to itself. */
static void test_https_never_follows_a_redirect_to_http(void **state)
{
    (void)state;
    static const char script[] =
        "import http.server, ssl, sys, threading\n"
        "cert, key, tls_port, plain_port, hits = sys.argv[1:6]\n"
        "class Tls(http.server.BaseHTTPRequestHandler):\n"
        "    def log_message(self, *a): pass\n"
        "    def do_GET(self):\n"
        "        if self.path == '/ok':\n"
        "            self.send_response(200); self.end_headers(); self.wfile.write(b'secure'); "
        "return\n"
        "        to = ('http://127.0.0.1:%s/x' % plain_port) if self.path == '/clear' else \\\n"
        "             ('https://localhost:%s/ok' % tls_port)\n"
        "        self.send_response(302); self.send_header('Location', to); self.end_headers()\n"
        "class Plain(http.server.BaseHTTPRequestHandler):\n"
        "    def log_message(self, *a): pass\n"
        "    def do_GET(self):\n"
        "        open(hits, 'a').write('hit\\n')\n"
        "        self.send_response(200); self.end_headers(); self.wfile.write(b'clear')\n"
        "tls = http.server.HTTPServer(('127.0.0.1', int(tls_port)), Tls)\n"
        "ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); ctx.load_cert_chain(cert, key)\n"
        "tls.socket = ctx.wrap_socket(tls.socket, server_side=True)\n"
        "plain = http.server.HTTPServer(('127.0.0.1', int(plain_port)), Plain)\n"
        "threading.Thread(target=plain.serve_forever, daemon=True).start()\n"
        "tls.serve_forever()\n";
    int tls_port = free_port(), plain_port = free_port();
    assert_true(tls_port > 0 && plain_port > 0 && tls_port != plain_port);
    char key[600], hits[600], tls_text[16], plain_text[16];
    snprintf(key, sizeof key, "%s/server.key", server.dir);
    snprintf(hits, sizeof hits, "%s/plain-hits", server.dir);
    snprintf(tls_text, sizeof tls_text, "%d", tls_port);
    snprintf(plain_text, sizeof plain_text, "%d", plain_port);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlives a failed test */
        int devnull = open("/dev/null", O_RDWR);
        if (devnull >= 0) {
            dup2(devnull, 0);
            dup2(devnull, 1);
            dup2(devnull, 2);
        }
        execl(RT_TEST_PYTHON, RT_TEST_PYTHON, "-c", script, server.cert, key, tls_text, plain_text,
              hits, (char *)NULL);
        _exit(127);
    }
    int64_t deadline = rt_test_now_ms() + 10000;
    while (!(port_open(tls_port) && port_open(plain_port)) && rt_test_now_ms() < deadline)
        usleep(20000);
    rt_http_options opts = {
        .ca_file = server.cert, .max_attempts = 1, .timeout_ms = 10000, .sleep_ms = no_sleep};
    rt_http *h = NULL;
    char err[RT_ERRSTR_SIZE];
    assert_int_equal(rt_http_new(&h, &opts, err), RT_OK);
    char url[128];
    rt_http_response resp;
    snprintf(url, sizeof url, "https://localhost:%d/secure", tls_port);
    int rc = rt_http_get(h, url, &resp);
    if (rc != RT_OK) fail_msg("https -> https: %s", rt_http_errstr(h));
    assert_string_equal(resp.body, "secure"); /* redirects within https are followed */
    rt_http_response_free(&resp);
    snprintf(url, sizeof url, "https://localhost:%d/clear", tls_port);
    assert_int_not_equal(rt_http_get(h, url, &resp), RT_OK);
    assert_true(resp.body == NULL || strcmp(resp.body, "clear") != 0);
    rt_http_response_free(&resp);
    assert_int_equal(access(hits, F_OK), -1); /* nothing reached the plain http server */
    rt_http_free(h);
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_https_with_unknown_certificate_is_refused_with_system_cas),
        cmocka_unit_test(test_https_with_another_ca_configured_is_refused),
        cmocka_unit_test(test_https_with_its_ca_but_another_host_name_is_refused),
        cmocka_unit_test(test_https_with_its_ca_configured_is_accepted),
        cmocka_unit_test(test_https_never_follows_a_redirect_to_http),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
