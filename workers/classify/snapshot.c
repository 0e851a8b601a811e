/* SPDX-License-Identifier: MPL-2.0 */
/* snapshot.c - the configuration retrig-classify's lanes share (classify.h).
 *
 * The configuration they share is an immutable snapshot, swapped by pointer: a lane takes
 * the current one at each safe point and keeps it (a reference) until the next, so a batch
 * reads one configuration from start to end. A SIGHUP is applied by whichever lane reaches
 * a safe point first: it copies the current configuration, applies the reload to the copy
 * and publishes it; no lane waits for another's batch, and the old snapshot is freed when
 * its last lane lets go of it. */
#include "workers/classify/classify.h"

#include <pthread.h>
#include <stdlib.h>

#include "common/io/log.h"
#include "common/options.h"
#include "common/policy.h"

static pthread_mutex_t g_snapshot_lock = PTHREAD_MUTEX_INITIALIZER; /* g_snapshot's pointer */
static snapshot *g_snapshot; /* the current one; holds one reference */
static atomic_uint g_snapshot_generation;
static pthread_mutex_t g_reload_lock = PTHREAD_MUTEX_INITIALIZER; /* one lane reloads */

snapshot *classify_snapshot_new(const rt_config *from)
{
    snapshot *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    if (rt_config_copy(&s->cfg, from) != RT_OK) {
        free(s);
        return NULL;
    }
    atomic_init(&s->refs, 1);
    rt_elig_policy_from_config(&s->cfg, &s->policy);
    return s;
}

void classify_snapshot_release(snapshot *s)
{
    if (s && atomic_fetch_sub(&s->refs, 1) == 1) {
        rt_config_free(&s->cfg);
        free(s);
    }
}

snapshot *classify_snapshot_acquire(unsigned *generation)
{
    pthread_mutex_lock(&g_snapshot_lock);
    snapshot *s = g_snapshot;
    atomic_fetch_add(&s->refs, 1);
    *generation = atomic_load(&g_snapshot_generation);
    pthread_mutex_unlock(&g_snapshot_lock);
    return s;
}

static void snapshot_publish(snapshot *s)
{
    pthread_mutex_lock(&g_snapshot_lock);
    snapshot *old = g_snapshot;
    g_snapshot = s;
    atomic_fetch_add(&g_snapshot_generation, 1);
    pthread_mutex_unlock(&g_snapshot_lock);
    classify_snapshot_release(old);
}

/* Applies a pending SIGHUP to a copy of the current configuration and publishes it. */
void classify_reload_if_asked(void)
{
    if (!rt_worker_reload_pending() || pthread_mutex_trylock(&g_reload_lock) != 0) return;
    unsigned generation;
    snapshot *current = classify_snapshot_acquire(&generation);
    snapshot *next = classify_snapshot_new(&current->cfg);
    classify_snapshot_release(current);
    if (!next) {
        rt_log_error("reload: out of memory; keeping the running configuration");
    } else if (rt_worker_reload(&next->cfg)) {
        rt_elig_policy_from_config(&next->cfg, &next->policy);
        snapshot_publish(next);
    } else {
        classify_snapshot_release(next);
    }
    pthread_mutex_unlock(&g_reload_lock);
}

unsigned classify_snapshot_generation(void) { return atomic_load(&g_snapshot_generation); }

int classify_snapshot_start(const rt_config *cfg)
{
    g_snapshot = classify_snapshot_new(cfg);
    return g_snapshot ? RT_OK : RT_ENOMEM;
}

void classify_snapshot_stop(void)
{
    classify_snapshot_release(g_snapshot);
    g_snapshot = NULL;
}
