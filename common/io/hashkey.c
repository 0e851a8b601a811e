/* SPDX-License-Identifier: MPL-2.0 */
/* hashkey.c - one random SipHash key per process. */
#include "common/io/hashkey.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

static rt_siphash_key g_key;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void draw(void)
{
    unsigned char bytes[16];
    if (getrandom(bytes, sizeof bytes, 0) == (ssize_t)sizeof bytes) {
        memcpy(&g_key.k0, bytes, 8);
        memcpy(&g_key.k1, bytes + 8, 8);
        return;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    g_key.k0 = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ULL ^ (uint64_t)ts.tv_sec;
    g_key.k1 = (uint64_t)getpid() * 0xc2b2ae3d27d4eb4fULL ^ (uint64_t)(uintptr_t)&g_key;
}

const rt_siphash_key *rt_hash_key(void)
{
    pthread_once(&g_once, draw);
    return &g_key;
}
