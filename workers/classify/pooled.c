/* SPDX-License-Identifier: MPL-2.0 */
/* pooled.c - retrig-classify's side of decide_policy = pooled (see pooled.h). */
#include "workers/classify/pooled.h"

#include <stdio.h>

#include "common/core/decide_pool.h"
#include "common/io/log.h"
#include "common/policy.h"
#include "common/store/pools.h"
#include "common/store/sets.h"

/* The first failure naming a test, NULL when none does. */
static const rt_es_failure *first_test(const rt_errorsummary *es)
{
    for (size_t i = 0; es && i < es->nfailures; i++)
        if (es->failures[i].test && es->failures[i].test[0]) return &es->failures[i];
    return NULL;
}

bool classify_pooled(const rt_config *cfg, const rt_errorsummary *es)
{
    return rt_decide_policy_pooled(cfg) && first_test(es) != NULL;
}

int classify_pool_join(rt_pg *pg, const rt_config *cfg, const rt_taskdef *task,
                       const rt_errorsummary *es)
{
    const rt_es_failure *first = first_test(es);
    if (!first || !task->project || !task->revision || !task->label) return RT_OK;
    rt_set_ref set;
    int rc = rt_sets_find(pg, task->project, task->revision, task->label, &set);
    if (rc != RT_OK || !set.id) return rc;
    char config[RT_POOLS_CONFIG_SIZE];
    if (rt_pool_config_name(task->platform ? task->platform : "unknown", task->label, config,
                            sizeof config) != RT_OK)
        snprintf(config, sizeof config, "unknown");
    rt_pools_join_in in = {.project = task->project,
                           .revision = task->revision,
                           .test = first->test,
                           .group_name = first->group && first->group[0] ? first->group : NULL,
                           .set_id = set.id,
                           .config = config,
                           .settle_s = cfg->decide_pool_settle_s,
                           .deadline_minutes = cfg->decide_pool_deadline_minutes};
    long long pool_id = 0;
    bool opened = false, joined = false;
    if ((rc = rt_pools_join(pg, &in, &pool_id, &opened, &joined)) != RT_OK) return rc;
    if (joined) {
        char pool[32], set_text[32];
        snprintf(pool, sizeof pool, "%lld", pool_id);
        snprintf(set_text, sizeof set_text, "%lld", set.id);
        rt_log_info(opened ? "pooled set opened" : "pooled set joined", "pool_id", pool, "set_id",
                    set_text, "test", first->test, "config", config);
    }
    return RT_OK;
}
