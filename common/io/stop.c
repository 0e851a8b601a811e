/* SPDX-License-Identifier: MPL-2.0 */
/* stop.c - the stop request: an atomic flag, an eventfd to poll, signal handlers. */
#include "common/io/stop.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

static atomic_bool g_requested;
static atomic_llong g_requested_at_ms; /* CLOCK_MONOTONIC of the request */
static atomic_long g_drain_ms = 10000;
static atomic_int g_fd = -1;
static pthread_once_t g_fd_once = PTHREAD_ONCE_INIT;

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void make_fd(void) { atomic_store(&g_fd, eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)); }

int rt_stop_fd(void)
{
    pthread_once(&g_fd_once, make_fd);
    return atomic_load(&g_fd);
}

void rt_stop_request(void)
{
    /* Async-signal-safe: atomics, clock_gettime and write(2) only. */
    if (atomic_exchange(&g_requested, true)) return;
    atomic_store(&g_requested_at_ms, now_ms());
    int fd = atomic_load(&g_fd);
    if (fd >= 0) {
        uint64_t one = 1;
        ssize_t ignored = write(fd, &one, sizeof one);
        (void)ignored;
    }
}

bool rt_stop_requested(void) { return atomic_load(&g_requested); }

bool rt_stop_draining_over(void)
{
    return atomic_load(&g_requested) &&
           now_ms() - atomic_load(&g_requested_at_ms) >= atomic_load(&g_drain_ms);
}

static void on_signal(int sig)
{
    if (atomic_load(&g_requested)) _exit(128 + sig); /* the second signal: now */
    int saved = errno;
    rt_stop_request();
    errno = saved;
}

void rt_stop_install(long drain_ms)
{
    atomic_store(&g_drain_ms, drain_ms > 0 ? drain_ms : 10000);
    (void)rt_stop_fd(); /* before the handler can run: it only writes to an existing fd */
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
}

bool rt_stop_sleep_ms(long ms)
{
    long long until = now_ms() + (ms > 0 ? ms : 0);
    int fd = rt_stop_fd();
    for (;;) {
        if (atomic_load(&g_requested)) return false;
        long long left = until - now_ms();
        if (left <= 0) return true;
        if (fd >= 0) {
            struct pollfd pfd = {.fd = fd, .events = POLLIN};
            (void)poll(&pfd, 1, (int)(left > 1000 ? 1000 : left));
        } else {
            struct timespec ts = {.tv_sec = 0, .tv_nsec = (left > 100 ? 100 : left) * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
}
