/* SPDX-License-Identifier: MPL-2.0 */
/* proxy.c - a switchable TCP forwarder for tests (see proxy.h). */
#include "support/proxy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "support/endpoint.h"
#include "support/util.h"

#define MAX_PAIRS 64

typedef struct pair {
    int a, b; /* client side, server side; -1 when unused */
} pair;

struct rt_proxy {
    int port, target;
    pthread_t thread;
    pthread_mutex_t lock;
    bool want_up, running;
    int listener; /* -1 while down */
    pair pairs[MAX_PAIRS];
    atomic_int accepted;
};

static int listen_on(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(fd, 64) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static int connect_to(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static void close_pair(pair *p)
{
    if (p->a >= 0) close(p->a);
    if (p->b >= 0) close(p->b);
    p->a = p->b = -1;
}

/* Moves what is readable on from to to; false when either side is done. */
static bool forward(int from, int to)
{
    char buf[16384];
    ssize_t n = read(from, buf, sizeof buf);
    if (n <= 0) return false;
    for (ssize_t off = 0; off < n;) {
        ssize_t w = write(to, buf + off, (size_t)(n - off));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        off += w;
    }
    return true;
}

static void *run(void *arg)
{
    rt_proxy *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        bool running = p->running, up = p->want_up;
        if (!running || !up) {
            for (size_t i = 0; i < MAX_PAIRS; i++) close_pair(&p->pairs[i]);
            if (p->listener >= 0) close(p->listener);
            p->listener = -1;
        } else if (p->listener < 0) {
            p->listener = listen_on(p->port);
        }
        struct pollfd fds[1 + 2 * MAX_PAIRS];
        size_t nfds = 0;
        if (p->listener >= 0) fds[nfds++] = (struct pollfd){.fd = p->listener, .events = POLLIN};
        for (size_t i = 0; i < MAX_PAIRS; i++) {
            if (p->pairs[i].a < 0) continue;
            fds[nfds++] = (struct pollfd){.fd = p->pairs[i].a, .events = POLLIN};
            fds[nfds++] = (struct pollfd){.fd = p->pairs[i].b, .events = POLLIN};
        }
        pthread_mutex_unlock(&p->lock);
        if (!running) return NULL;
        if (poll(fds, nfds, 50) <= 0) continue;
        pthread_mutex_lock(&p->lock);
        for (size_t k = 0; k < nfds; k++) {
            if (!fds[k].revents) continue;
            if (fds[k].fd == p->listener) {
                int client = accept4(p->listener, NULL, NULL, SOCK_CLOEXEC);
                if (client < 0) continue;
                int server = connect_to(p->target);
                size_t slot = 0;
                while (slot < MAX_PAIRS && p->pairs[slot].a >= 0) slot++;
                if (server < 0 || slot == MAX_PAIRS) {
                    close(client);
                    if (server >= 0) close(server);
                    continue;
                }
                p->pairs[slot] = (pair){client, server};
                atomic_fetch_add(&p->accepted, 1);
                continue;
            }
            for (size_t i = 0; i < MAX_PAIRS; i++) {
                pair *q = &p->pairs[i];
                if (q->a < 0) continue;
                if (fds[k].fd == q->a && !forward(q->a, q->b))
                    close_pair(q);
                else if (fds[k].fd == q->b && !forward(q->b, q->a))
                    close_pair(q);
            }
        }
        pthread_mutex_unlock(&p->lock);
    }
}

rt_proxy *rt_proxy_new(int target_port)
{
    rt_proxy *p = calloc(1, sizeof *p);
    assert_non_null(p);
    p->port = rt_test_free_port();
    p->target = target_port;
    p->listener = -1;
    p->running = true;
    for (size_t i = 0; i < MAX_PAIRS; i++) p->pairs[i] = (pair){-1, -1};
    pthread_mutex_init(&p->lock, NULL);
    assert_int_equal(pthread_create(&p->thread, NULL, run, p), 0);
    return p;
}

int rt_proxy_port(const rt_proxy *p) { return p->port; }

int rt_proxy_accepted(const rt_proxy *p) { return atomic_load(&((rt_proxy *)p)->accepted); }

static void set_up(rt_proxy *p, bool up)
{
    pthread_mutex_lock(&p->lock);
    p->want_up = up;
    pthread_mutex_unlock(&p->lock);
    rt_test_pause_ms(120); /* a poll round or two: the state has taken effect */
}

void rt_proxy_up(rt_proxy *p) { set_up(p, true); }
void rt_proxy_down(rt_proxy *p) { set_up(p, false); }

void rt_proxy_free(rt_proxy *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->lock);
    p->running = false;
    pthread_mutex_unlock(&p->lock);
    pthread_join(p->thread, NULL);
    for (size_t i = 0; i < MAX_PAIRS; i++) close_pair(&p->pairs[i]);
    if (p->listener >= 0) close(p->listener);
    pthread_mutex_destroy(&p->lock);
    free(p);
}
