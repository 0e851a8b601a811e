/* SPDX-License-Identifier: MPL-2.0 */
/* pooled.c - retrig-classify's side of decide_policy = pooled (see pooled.h). */
#include "workers/classify/pooled.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/decide_pool.h"
#include "common/core/ids.h"
#include "common/io/log.h"
#include "common/policy.h"
#include "common/store/pools.h"
#include "common/store/sets.h"
#include "common/io/upstream.h"

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

/* The walk of the task group: the tasks of one label family. */
typedef struct family_walk {
    char family[256];
    rt_pools_task *tasks;
    size_t n, max;
    bool over; /* more than max */
} family_walk;

static const char *text_at(json_t *o, const char *const *path, size_t depth)
{
    for (size_t i = 0; i < depth; i++) o = json_object_get(o, path[i]);
    return json_string_value(o);
}

static bool family_task(void *ctx, const char *task_id, json_t *status, json_t *task)
{
    family_walk *w = ctx;
    static const char *const tag[] = {"tags", "label"}, *const name[] = {"metadata", "name"},
                             *const platform_at[] = {"extra", "treeherder", "machine", "platform"};
    const char *label = text_at(task, tag, 2);
    if (!label) label = text_at(task, name, 2);
    char family[sizeof w->family];
    if (!task_id || !rt_valid_task_id(task_id) || !label ||
        rt_pool_label_family(label, family, sizeof family) != RT_OK || strcmp(family, w->family))
        return false;
    if (w->n == w->max) {
        w->over = true;
        return true;
    }
    rt_pools_task *t = &w->tasks[w->n];
    const char *platform = text_at(task, platform_at, 4);
    const char *state = json_string_value(json_object_get(status, "state"));
    if (strlen(label) >= sizeof t->label || !platform ||
        rt_pool_config_name(platform, label, t->config, sizeof t->config) != RT_OK)
        return false; /* a task of no configuration cannot be waited for by one */
    snprintf(t->task_id, sizeof t->task_id, "%s", task_id);
    snprintf(t->label, sizeof t->label, "%s", label);
    snprintf(t->state, sizeof t->state, "%s", state ? state : "unscheduled");
    w->n++;
    return false;
}

/* Records the push's tasks of the task's label family on the pooled set, once per family
 * (the task itself recorded means its family was). A listing that fails records nothing. */
static int record_family(rt_pg *pg, rt_http *http, const rt_config *cfg, long long pool_id,
                         const char *task_id, const rt_taskdef *task)
{
    family_walk w = {.max = RT_POOLS_MAX_TASKS};
    bool listed = false;
    int rc = rt_pools_has_task(pg, pool_id, task_id, &listed);
    if (rc != RT_OK || listed || !task->task_group_id[0] ||
        rt_pool_label_family(task->label, w.family, sizeof w.family) != RT_OK)
        return rc;
    if (!(w.tasks = calloc(w.max, sizeof *w.tasks))) return RT_ENOMEM;
    char errstr[RT_ERRSTR_SIZE] = "";
    if (rt_tc_each_group_task(http, cfg->taskcluster_root_url, task->task_group_id, family_task, &w,
                              errstr) != RT_OK ||
        w.over) {
        rt_log_warn(w.over ? "pooled set: too many tasks in the label family; the settle "
                             "window waits for its time"
                           : "pooled set: the task group could not be listed; the settle "
                             "window waits for its time",
                    "task_group_id", task->task_group_id, "family", w.family, "error", errstr);
    } else {
        rc = rt_pools_add_tasks(pg, pool_id, w.tasks, w.n);
    }
    free(w.tasks);
    return rc;
}

int classify_pool_join(rt_pg *pg, rt_http *http, const rt_config *cfg, const char *task_id,
                       const rt_taskdef *task, const rt_errorsummary *es)
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
    return record_family(pg, http, cfg, pool_id, task_id, task);
}
