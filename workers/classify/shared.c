/* SPDX-License-Identifier: MPL-2.0 */
/* shared.c - what retrig-classify's lanes share besides the configuration (classify.h): the
 * table of task groups being listed, and each lane's task definition cache. */
#include "workers/classify/classify.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* Listings of one task group are taken one at a time (a failure's retriggers are counted
 * while its siblings are, and each listing is up to 1,000 pages): a lane that needs a group
 * being listed waits until that listing ends, then lists its own label (the failures of one
 * group are of different labels: one listing's runs are not another's). No lock is held
 * across the network: the table of groups being listed is locked only to look at it and
 * change it, so the listings of other groups go on in parallel, a slow one stalling no other
 * group. A lane lists one group at a time, so the table has a place for each lane
 * (classify_concurrency <= 64). */
#define GROUP_LISTINGS 64
static pthread_mutex_t g_listings_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_listing_done = PTHREAD_COND_INITIALIZER;
static struct {
    bool used;
    char task_group_id[23];
} g_listings[GROUP_LISTINGS]; /* the groups being listed */

/* Waits until no other lane lists the group, then marks it listed; returns its place. */
size_t classify_group_listing_begin(const char *task_group_id)
{
    size_t place;
    pthread_mutex_lock(&g_listings_lock);
    for (;;) {
        bool busy = false;
        place = GROUP_LISTINGS;
        for (size_t i = 0; i < GROUP_LISTINGS; i++) {
            if (!g_listings[i].used)
                place = place < GROUP_LISTINGS ? place : i;
            else if (!strcmp(g_listings[i].task_group_id, task_group_id))
                busy = true;
        }
        if (!busy && place < GROUP_LISTINGS) break;
        pthread_cond_wait(&g_listing_done, &g_listings_lock);
    }
    g_listings[place].used = true;
    snprintf(g_listings[place].task_group_id, sizeof g_listings[place].task_group_id, "%s",
             task_group_id);
    pthread_mutex_unlock(&g_listings_lock);
    return place;
}

void classify_group_listing_end(size_t place)
{
    pthread_mutex_lock(&g_listings_lock);
    g_listings[place].used = false;
    pthread_cond_broadcast(&g_listing_done);
    pthread_mutex_unlock(&g_listings_lock);
}

static size_t cache_slot(const classify *w, const char *task_id)
{
    size_t h = 5381;
    for (const char *p = task_id; *p; p++) h = h * 33 + (unsigned char)*p;
    return h % w->cache_size;
}

const rt_taskdef *classify_cache_get(classify *w, const char *task_id)
{
    if (!w->cache_size) return NULL;
    cached_task *c = &w->cache[cache_slot(w, task_id)];
    return strcmp(c->task_id, task_id) == 0 ? &c->def : NULL;
}

/* Takes ownership of def's contents. Returns where it lives now (or def when not cached). */
const rt_taskdef *classify_cache_put(classify *w, const char *task_id, rt_taskdef *def)
{
    if (!w->cache_size) return def;
    cached_task *c = &w->cache[cache_slot(w, task_id)];
    rt_taskdef_free(&c->def);
    snprintf(c->task_id, sizeof c->task_id, "%s", task_id);
    c->def = *def;
    memset(def, 0, sizeof *def);
    return &c->def;
}
