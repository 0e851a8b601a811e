/* SPDX-License-Identifier: MPL-2.0 */
/* ids.h - validation of identifiers that come from untrusted messages before they reach
 * a URL, a Redis key, a SQL row or a log line: task ids, labels, projects, revisions,
 * platforms, task queue ids. Pure. */
#ifndef RETRIG_COMMON_IDS_H
#define RETRIG_COMMON_IDS_H

#include <stdbool.h>

/* Taskcluster slugid: 22 characters of [A-Za-z0-9_-]. */
bool rt_valid_task_id(const char *s);
/* Treeherder project / repository name: 1-64 of [A-Za-z0-9._-], not starting with '.'. */
bool rt_valid_project(const char *s);
/* Revision: 12-40 hex digits. */
bool rt_valid_revision(const char *s);
/* Task label or platform: 1-512 printable ASCII characters without spaces at the ends,
 * no control characters, no "..". */
bool rt_valid_label(const char *s);
/* taskQueueId "provisioner/workerType": printable, 3-256 characters, exactly one '/'. */
bool rt_valid_task_queue_id(const char *s);

#endif
