/* SPDX-License-Identifier: MPL-2.0 */
/* fake_upstream.c - spawning and driving the fake upstream server from C tests. */
#include "support/fake_upstream.h"

#include <curl/curl.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RT_FAKE_MAX_LIVE         16
#define RT_FAKE_START_TIMEOUT_MS 20000

static pid_t live[RT_FAKE_MAX_LIVE];
static bool atexit_registered;

static void kill_live_children(void)
{
    for (int i = 0; i < RT_FAKE_MAX_LIVE; i++) {
        if (live[i] > 0) {
            kill(live[i], SIGKILL);
            waitpid(live[i], NULL, 0);
            live[i] = 0;
        }
    }
}

static void remember_child(pid_t pid, bool alive)
{
    for (int i = 0; i < RT_FAKE_MAX_LIVE; i++) {
        if (alive && live[i] == 0) {
            live[i] = pid;
            return;
        }
        if (!alive && live[i] == pid) {
            live[i] = 0;
            return;
        }
    }
}

static void sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int read_port(const char *path)
{
    FILE *f = fopen(path, "r");
    int port = 0;
    if (!f) return 0;
    if (fscanf(f, "%d", &port) != 1) port = 0;
    fclose(f);
    return port;
}

int rt_fake_start(rt_fake *fake, const char *scenario_path)
{
    char script[4096], port_file[256];

    memset(fake, 0, sizeof *fake);
    snprintf(fake->dir, sizeof fake->dir, "/tmp/retrig-fake-XXXXXX");
    if (!mkdtemp(fake->dir)) {
        fprintf(stderr, "rt_fake_start: mkdtemp: %s\n", strerror(errno));
        return -1;
    }
    snprintf(script, sizeof script, "%s/tests/fake-upstream/fake_upstream.py", RT_TEST_SOURCE_DIR);
    snprintf(port_file, sizeof port_file, "%s/port", fake->dir);
    if (!atexit_registered) {
        atexit(kill_live_children);
        atexit_registered = true;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "rt_fake_start: fork: %s\n", strerror(errno));
        rmdir(fake->dir);
        return -1;
    }
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent) _exit(127);
        if (scenario_path) {
            execl(RT_TEST_PYTHON, RT_TEST_PYTHON, script, "--port", "0", "--port-file", port_file,
                  "--fixtures", RT_TEST_FIXTURES_DIR, "--scenario", scenario_path, (char *)NULL);
        } else {
            execl(RT_TEST_PYTHON, RT_TEST_PYTHON, script, "--port", "0", "--port-file", port_file,
                  "--fixtures", RT_TEST_FIXTURES_DIR, (char *)NULL);
        }
        fprintf(stderr, "rt_fake_start: exec %s: %s\n", RT_TEST_PYTHON, strerror(errno));
        _exit(127);
    }
    fake->pid = pid;
    remember_child(pid, true);

    long deadline = now_ms() + RT_FAKE_START_TIMEOUT_MS;
    while (now_ms() < deadline) {
        int status;
        if (waitpid(pid, &status, WNOHANG) == pid) {
            fprintf(stderr, "rt_fake_start: the fake upstream exited (status %d)\n", status);
            remember_child(pid, false);
            fake->pid = 0;
            rmdir(fake->dir);
            return -1;
        }
        if (!fake->port) fake->port = read_port(port_file);
        if (fake->port) {
            snprintf(fake->base_url, sizeof fake->base_url, "http://127.0.0.1:%d", fake->port);
            if (rt_fake_control(fake, "GET", "/_control/triggers", NULL, NULL) == 200) return 0;
        }
        sleep_ms(20);
    }
    fprintf(stderr, "rt_fake_start: no answer within %d ms\n", RT_FAKE_START_TIMEOUT_MS);
    rt_fake_stop(fake);
    return -1;
}

void rt_fake_stop(rt_fake *fake)
{
    char port_file[256];

    if (!fake || fake->pid <= 0) return;
    kill(fake->pid, SIGTERM);
    long deadline = now_ms() + 2000;
    bool reaped = false;
    while (!reaped && now_ms() < deadline) {
        if (waitpid(fake->pid, NULL, WNOHANG) == fake->pid)
            reaped = true;
        else
            sleep_ms(10);
    }
    if (!reaped) {
        kill(fake->pid, SIGKILL);
        waitpid(fake->pid, NULL, 0);
    }
    remember_child(fake->pid, false);
    fake->pid = 0;
    snprintf(port_file, sizeof port_file, "%s/port", fake->dir);
    unlink(port_file);
    rmdir(fake->dir);
}

typedef struct {
    char *data;
    size_t len;
} rt__fake_buf;

static size_t collect(char *data, size_t size, size_t nmemb, void *userdata)
{
    rt__fake_buf *b = userdata;
    size_t n = size * nmemb;
    char *grown = realloc(b->data, b->len + n + 1);
    if (!grown) return 0;
    memcpy(grown + b->len, data, n);
    b->data = grown;
    b->len += n;
    b->data[b->len] = '\0';
    return n;
}

int rt_fake_control(rt_fake *fake, const char *method, const char *path, const char *json_body,
                    char **response)
{
    rt__fake_buf buf = {0};
    struct curl_slist *headers = NULL;
    long status = -1;
    CURL *c = curl_easy_init();

    if (response) *response = NULL;
    if (!c) return -1;
    headers = curl_slist_append(headers, "Content-Type: application/json");
    char url[4096];
    snprintf(url, sizeof url, "%s%s", fake->base_url, path);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 10000L);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &buf);
    if (strcmp(method, "GET") != 0) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, json_body ? json_body : "");
        if (strcmp(method, "POST") != 0) curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    }
    if (curl_easy_perform(c) == CURLE_OK) { curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status); }
    curl_slist_free_all(headers);
    curl_easy_cleanup(c);
    if (response && status > 0) {
        *response = buf.data ? buf.data : strdup("");
        buf.data = NULL;
    }
    free(buf.data);
    return (int)status;
}

int rt_fake_reset(rt_fake *fake)
{
    return rt_fake_control(fake, "POST", "/_control/reset", "{}", NULL);
}

int rt_fake_load_scenario(rt_fake *fake, const char *json)
{
    return rt_fake_control(fake, "POST", "/_control/scenario", json, NULL);
}

int rt_fake_add_fault(rt_fake *fake, const char *json)
{
    return rt_fake_control(fake, "POST", "/_control/faults", json, NULL);
}

static json_t *control_json(rt_fake *fake, const char *path)
{
    char *body = NULL;
    json_t *result = NULL;

    if (rt_fake_control(fake, "GET", path, NULL, &body) == 200) {
        result = json_loads(body, 0, NULL);
    }
    free(body);
    return result;
}

json_t *rt_fake_calls(rt_fake *fake, const char *path_prefix)
{
    char path[1024];
    char *escaped = curl_easy_escape(NULL, path_prefix ? path_prefix : "", 0);

    if (!escaped) return NULL;
    snprintf(path, sizeof path, "/_control/calls?path_prefix=%s", escaped);
    curl_free(escaped);
    return control_json(fake, path);
}

json_t *rt_fake_triggers(rt_fake *fake) { return control_json(fake, "/_control/triggers"); }

const char *rt_fake_url(const rt_fake *fake, const char *path)
{
    static char url[4096];
    snprintf(url, sizeof url, "%s%s", fake->base_url, path);
    return url;
}
