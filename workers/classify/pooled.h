/* SPDX-License-Identifier: MPL-2.0 */
/* pooled.h - retrig-classify under decide_policy = pooled (issue 32): a failing test task's
 * retrigger set asks for no retrigger at first, and joins the pooled set of its failing test
 * on the push (common/store/pools.h): the first failing task of the test opens it, later
 * ones join it, exactly once whatever replicas race (the pooled set's unique key). The
 * task's test is its errorsummary's first failure naming one (its group with it): a task
 * failing several tests is pooled with the first. retrig-decide then decides the pooled
 * set (workers/decide/pool_flow.h) and joins a set it finds unpooled the same way, so a
 * crash between the set's commit and the join loses nothing.
 *
 * A member that joins lists the push's task group once (its own task not recorded on the
 * pooled set yet) and records the tasks of its label family (rt_pool_label_family, migration
 * 0042), whose finishing ends the settle window early (rt_pool_settle_done). A listing that
 * fails, or a family of more than RT_POOLS_MAX_TASKS tasks, records nothing: the window's
 * time ends the wait then. Single-threaded per lane. */
#ifndef RETRIG_WORKERS_CLASSIFY_POOLED_H
#define RETRIG_WORKERS_CLASSIFY_POOLED_H

#include "common/not_core.h"

#include "common/config.h"
#include "common/core/errorsummary.h"
#include "common/core/taskdef.h"
#include "common/io/http.h"
#include "common/io/pg.h"

/* Whether the failure is pooled: decide_policy = pooled and a failure of es names a test
 * (a failure naming none, a crash of no test, keeps the seed rule's retriggers). */
bool classify_pooled(const rt_config *cfg, const rt_errorsummary *es);

/* Joins the set of (task's project, revision, label), when it exists, to the pooled set of
 * es's first failing test, then records the push's tasks of its label family (listed
 * through http). RT_OK with nothing done when the set does not exist (the failure was not
 * retriggered: budget, duplicate of another task) or no failure names a test. */
RT_MUSTCHECK int classify_pool_join(rt_pg *pg, rt_http *http, const rt_config *cfg,
                                    const char *task_id, const rt_taskdef *task,
                                    const rt_errorsummary *es);

#endif
