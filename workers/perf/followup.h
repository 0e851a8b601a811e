/* SPDX-License-Identifier: MPL-2.0 */
/* followup.h - retrig-perf's follow-up of the backfills it triggered (migration 0007).
 *
 * For every alert whose backfill action task we created (outcome triggered or
 * found-existing, not dry-run) and whose follow-up is not settled: the action task's
 * status, then, once it completed, the jobs it spawned: the tasks of its task group whose
 * extra.parent (gecko's action code sets it to the action task id on every task an action
 * creates) or tags.created-by is the action task id. Their states, and for completed jobs
 * whose Treeherder logs are parsed, whether Perfherder has a data point of the alert's
 * series from one of them, decide perf_alerts.followup_state (pending, done, failed) and
 * followup_reason (action-failed, jobs-failed, jobs-exception, deadline-exceeded,
 * no-data). Whatever is still unsettled perf_followup_window_hours after the trigger is
 * failed/deadline-exceeded. Upstream errors leave an alert pending for the next run.
 * Updates are conditional on the state still being pending, so two runners agree. */
#ifndef RETRIG_WORKERS_PERF_FOLLOWUP_H
#define RETRIG_WORKERS_PERF_FOLLOWUP_H

#include "common/config.h"
#include "common/http.h"
#include "common/pg.h"

/* Follows up every unsettled backfill. RT_OK, or the Postgres error that stopped it (an
 * upstream error only skips that alert). *settled receives how many became done or
 * failed. */
RT_MUSTCHECK int rt_perf_followup(const rt_config *cfg, rt_pg *pg, rt_http *http, int *settled);

#endif
