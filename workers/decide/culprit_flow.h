/* SPDX-License-Identifier: MPL-2.0 */
/* culprit_flow.h - retrig-decide's side of a culprit search (common/core/culprit_flow.h): a
 * regression on a project of culprit_projects is stored with culprit_status 'searching'; the
 * worker's tick then finds the search's window from Treeherder's push list and the failing
 * label's jobs on each push, and stores the first step on the decision: the culprit at once
 * when no push lies between a push that ran the label without reproducing and the failing
 * push ("no-candidate"), else the range. At each later poll it reads the probed pushes' new
 * jobs, asks retrig-retrigger for the next probe (a culprit-probe request: add-new-jobs on
 * that push) and stores the answer: found, culprit-before-window, or stopped with the range
 * (budget-exhausted, a probe that failed, dry-run). Single-threaded, as the worker. */
#ifndef RETRIG_WORKERS_DECIDE_CULPRIT_FLOW_H
#define RETRIG_WORKERS_DECIDE_CULPRIT_FLOW_H

#include <stdbool.h>

#include "common/config.h"
#include "common/io/amqp.h"
#include "common/io/http.h"
#include "common/io/pg.h"

typedef struct rt__decide_culprit_io {
    const rt_config *cfg;
    rt_pg *pg;
    rt_http *http;      /* Treeherder and Taskcluster GETs */
    rt_amqp *amqp;      /* the probe requests, to retrig-retrigger's queue; the culprit events */
    const char *events; /* the decisions exchange, <amqp_namespace>.decisions */
} rt__decide_culprit_io;

/* True when project matches a glob of culprit_projects. */
bool rt__decide_culprit_project(const rt_config *cfg, const char *project);

/* Moves the searches due (searching, not looked at for culprit_poll_interval_s) one step,
 * a few per call: the window when it has none, else the probes' runs and the next probe. A
 * search whose Treeherder answers are not ready (a job pending, its logs not parsed, a 5xx)
 * is looked at again at the next interval; one Treeherder refuses is stopped with the
 * reason. Best effort: errors are logged. */
void rt__decide_culprit_poll(const rt__decide_culprit_io *io);

#endif
