/* SPDX-License-Identifier: MPL-2.0 */
/* taskdef.h - the parts of a Taskcluster task definition (GET /api/queue/v1/task/<id>)
 * that retrig decides on: Treeherder job kind, tier, platform, build type, label, action tag,
 * task queue, the push (project, revision, pushlog id) from the tc-treeherder route, and the
 * task's owner (metadata.owner: for Gecko's tasks the push's author).
 * Untrusted input, parsed once here. Pure: no I/O. */
#ifndef RETRIG_COMMON_TASKDEF_H
#define RETRIG_COMMON_TASKDEF_H

#include <stddef.h>

#include "common/core/errors.h"

#define RT_TASKDEF_MAX_TIER          100 /* a larger tier is invalid-value (Treeherder's are 1-3) */
#define RT_TASKDEF_MAX_BUILD_OPTIONS 8   /* option names in one build type at most */

/* The build type is what Treeherder shows next to the platform (its Taskcluster pulse
 * handler makes the job's labels, its UI prints their option collection): the names of
 * extra.treeherder.labels when that is a non-empty array, else the member names of
 * extra.treeherder.collection when that is a non-empty object, else "opt"; distinct, sorted
 * (byte order) and joined with ",": {"debug": true} is "debug", {"opt": true, "asan": true}
 * "asan,opt". A name must be what Treeherder's schema allows a label (1 to 50 of
 * [A-Za-z0-9_-]); a malformed name, a label that is no string or more than
 * RT_TASKDEF_MAX_BUILD_OPTIONS names leave the type unknown (NULL) without refusing the
 * definition: Treeherder would not show the job, retrig still records its run. */

typedef struct rt_taskdef {
    char task_group_id[23];
    char *task_queue_id; /* taskQueueId, or provisionerId/workerType */
    char *scheduler_id;  /* schedulerId ("gecko-level-3"), may be NULL */
    char *job_kind;      /* extra.treeherder.jobKind, may be NULL */
    int tier;            /* extra.treeherder.tier, 0..RT_TASKDEF_MAX_TIER: 1 when absent
                          * (Treeherder's default), 0 without extra.treeherder */
    char *platform;      /* extra.treeherder.machine.platform, may be NULL */
    char *build_type;    /* the build type Treeherder shows ("debug", "opt", "asan"), below;
                          * NULL without extra.treeherder or when it is malformed */
    char *label;         /* tags.label, else metadata.name */
    char *kind;          /* tags.kind, may be NULL */
    char *action;        /* tags.action (set on tasks made by actions), may be NULL */
    char *project, *revision, *pushlog_id; /* from the tc-treeherder.v2 route, may be NULL */
    char *created;                         /* ISO-8601, may be NULL */
    char *owner;   /* metadata.owner (Gecko: the email of the push's author), may be NULL */
    char *storage; /* a parsed definition keeps every string above in this one block */
} rt_taskdef;

/* Returns RT_OK, RT_EPROTO (reason like "wrong-type:extra.treeherder.tier"), RT_ETOOBIG,
 * RT_ENOMEM. reason holds at least 128 bytes. */
RT_MUSTCHECK int rt_taskdef_parse(const char *body, size_t len, size_t max_bytes, rt_taskdef *out,
                                  char *reason);
void rt_taskdef_free(rt_taskdef *def);

#endif
