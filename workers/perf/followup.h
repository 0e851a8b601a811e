/* SPDX-License-Identifier: MPL-2.0 */
/* followup.h - retrig-perf's follow-up of the backfills it triggered (migration 0007).
 *
 * For every alert whose backfill action task we created (outcome triggered or
 * found-existing, not dry-run) and whose follow-up is not settled: the action task's
 * status, then, once it completed, the jobs it spawned, wherever they landed. Action tasks
 * write public/label-to-taskid.json (or public/actions/label-to-taskid.json) naming the
 * tasks they created, which may sit in other pushes' decision task groups; the follow-up
 * reads the action task's, fetches each task named there (id validated first): an action
 * task it triggered (tags.kind action-callback or extra.action; e.g. a backfill-task on an
 * earlier push) is followed through its own artifact in turn (at most 3 levels, 32 action
 * tasks, 200 listed tasks per backfill); a task whose extra.parent (gecko's action code sets
 * it to the creating action task on every task it creates) or tags.created-by names the
 * action task that listed it is a spawned job; anything else listed (a reused build, say)
 * is left out. Without an artifact on the action task: the backfill-task action tasks
 * found through the index (below), else the tasks of its own task group naming it
 * (rt_tc_each_group_task). A triggered action task that failed makes
 * the backfill action-failed; one still unresolved keeps it pending. The jobs' states, and
 * for completed jobs whose Treeherder logs are parsed, whether Perfherder has a data point
 * of the alert's series from one of them, decide perf_alerts.followup_state (pending, done, failed)
 * and followup_reason (action-failed, jobs-failed, jobs-exception, deadline-exceeded, no-data).
 * Whatever is still unsettled perf_followup_window_hours after the trigger is
 * failed/deadline-exceeded. Upstream errors leave an alert pending for the next run.
 * Updates are conditional on the state still being pending, so two runners agree.
 *
 * gecko's own backfill: today's `backfill` action creates no task itself and writes no
 * label-to-taskid artifact; it fires a `backfill-task` hook per earlier push
 * (trigger_action). Those action tasks sit in each earlier push's decision task group
 * (extra.parent = that decision task), name the label and the alert push's revision in
 * extra.action.context.input, and are indexed under
 * <trust>.v2.<project>.pushlog-id.<id>.actions.<taskId>. So when the action task wrote no
 * artifact, the follow-up reads from its definition the project and pushlog id (its index
 * or tc-treeherder route, else extra.action.context.parameters), the revision, the depth
 * and inclusive of its input (gecko's default 9, at most 25) and the backfilled task's
 * label (metadata.name), lists the index namespace ...pushlog-id.<id>.actions of each
 * earlier push (rt_tc_index_each_task; at most 64 entries each, 32 action tasks in all),
 * keeps the backfill-task action tasks for that label and revision created at or after our
 * action task, and follows their label-to-taskid artifacts as above. Only when none is
 * found is its own group scanned. Limits: the index only lists completed tasks, so a
 * backfill-task that failed or is still running is not seen; while none is indexed, the
 * backfill stays pending for an hour after the action task resolved, then is
 * failed/no-data with a detail naming the label and pushes looked at. */
#ifndef RETRIG_WORKERS_PERF_FOLLOWUP_H
#define RETRIG_WORKERS_PERF_FOLLOWUP_H

#include "common/config.h"
#include "common/io/http.h"
#include "common/io/pg.h"

/* Follows up every unsettled backfill. RT_OK, or the Postgres error that stopped it (an
 * upstream error only skips that alert). *settled receives how many became done or
 * failed. */
RT_MUSTCHECK int rt_perf_followup(const rt_config *cfg, rt_pg *pg, rt_http *http, int *settled);

#endif
