/* SPDX-License-Identifier: MPL-2.0 */
/* run_fetch.h - what retrig-classify and retrig-history both read of a resolved run: its
 * task definition and its errorsummary artifacts, fetched over rt_http and parsed by the
 * core, with the failure said as a message outcome (core/settle.h):
 *   an upstream failure    RETRY when transient (429/5xx, timeouts), else DEAD,
 *                          reason "upstream-error: <what>: <detail>";
 *   an unusable definition DEAD "invalid task definition: <why>" (REQUEUE when memory ran out);
 *   a parse over budget    RETRY "parse-timeout: ..." (so it is retried through the delay
 *                          queues, then dead-lettered, never redelivered forever);
 *   memory                 REQUEUE.
 * Thread-safety: that of the rt_http passed in. */
#ifndef RETRIG_COMMON_IO_RUN_FETCH_H
#define RETRIG_COMMON_IO_RUN_FETCH_H

#include "common/not_core.h"

#include "common/core/errorsummary.h"
#include "common/core/settle.h"
#include "common/core/taskdef.h"
#include "common/io/http.h"

#define RT_RUN_FETCH_MAX_ERRORSUMMARIES 32 /* errorsummary artifacts of one run read at most */

typedef struct rt_run_fetch {
    rt_http *http;
    const char *root_url;  /* Taskcluster root URL */
    size_t max_body_bytes; /* a task definition's cap (http_max_body_bytes) */
    long time_budget_ms;   /* parsing a run's errorsummaries (message_time_budget_ms) */
    size_t max_es_bytes;   /* all errorsummaries of a run (errorsummary_max_bytes) */
} rt_run_fetch;

/* Sets *h for an upstream call that failed with rc (see above). */
void rt_outcome_upstream(rt_outcome *h, int rc, const char *what, const char *errstr);

/* Fetches and parses task_id's definition into *def (the caller frees it). On failure *h
 * says what becomes of the message. */
RT_MUSTCHECK int rt_run_fetch_task(const rt_run_fetch *f, const char *task_id, rt_taskdef *def,
                                   rt_outcome *h);

/* Reads every errorsummary artifact of task_id's run (at most
 * RT_RUN_FETCH_MAX_ERRORSUMMARIES; artifact names containing "errorsummary") into *es,
 * initialised here with the process's hash key, the byte cap and a deadline of
 * time_budget_ms. On failure *h says what becomes of the message; *es holds what was read
 * and must be freed either way. */
RT_MUSTCHECK int rt_run_fetch_errorsummary(const rt_run_fetch *f, const char *task_id, int run_id,
                                           rt_errorsummary *es, rt_outcome *h);

#endif
