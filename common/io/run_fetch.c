/* SPDX-License-Identifier: MPL-2.0 */
/* run_fetch.c - a run's task definition and errorsummaries, for classify and history. */
#include "common/io/run_fetch.h"

#include <stdlib.h>
#include <string.h>

#include "common/io/deadline.h"
#include "common/io/hashkey.h"
#include "common/io/log.h"
#include "common/io/upstream.h"

void rt_outcome_upstream(rt_outcome *h, int rc, const char *what, const char *errstr)
{
    rt_outcome_set(h, rt_upstream_transient(rc) ? RT_SETTLE_RETRY : RT_SETTLE_DEAD,
                   "upstream-error: %s: %s", what, errstr);
}

int rt_run_fetch_task(const rt_run_fetch *f, const char *task_id, rt_taskdef *def, rt_outcome *h)
{
    char *body = NULL, errstr[RT_ERRSTR_SIZE] = "";
    size_t len = 0;
    int rc = rt_tc_get_task(f->http, f->root_url, task_id, &body, &len, errstr);
    if (rc != RT_OK) {
        rt_outcome_upstream(h, rc, "task definition", errstr);
        return rc;
    }
    char reason[128] = "";
    rc = rt_taskdef_parse(body, len, f->max_body_bytes, def, reason);
    free(body);
    if (rc != RT_OK)
        rt_outcome_set(h, rc == RT_ENOMEM ? RT_SETTLE_REQUEUE : RT_SETTLE_DEAD,
                       "invalid task definition: %s", reason);
    return rc;
}

/* One artifact into the summary; RT_OK or the code that ends the reading, with *h set. */
static int add_artifact(const rt_run_fetch *f, const char *task_id, int run_id, const char *name,
                        rt_errorsummary *es, rt_outcome *h)
{
    char *body = NULL, errstr[RT_ERRSTR_SIZE] = "";
    size_t len = 0;
    int rc = rt_tc_get_artifact(f->http, f->root_url, task_id, run_id, name, &body, &len, errstr);
    if (rc != RT_OK) {
        rt_outcome_upstream(h, rc, "errorsummary artifact", errstr);
        return rc;
    }
    rc = rt_errorsummary_add(es, body, len);
    free(body);
    if (rc == RT_ETIMEDOUT) {
        rt_outcome_set(h, RT_SETTLE_RETRY,
                       "parse-timeout: errorsummary artifacts of %s/%d took more than "
                       "message_time_budget_ms (%ld ms)",
                       task_id, run_id, f->time_budget_ms);
        rt_log_warn("errorsummary parsing over its time budget; retried later", "task_id", task_id);
    } else if (rc != RT_OK) {
        rt_outcome_set(h, RT_SETTLE_REQUEUE, "out of memory parsing the errorsummary");
    }
    return rc;
}

int rt_run_fetch_errorsummary(const rt_run_fetch *f, const char *task_id, int run_id,
                              rt_errorsummary *es, rt_outcome *h)
{
    rt_deadline deadline;
    rt_deadline_start(&deadline, f->time_budget_ms);
    rt_errorsummary_init(es, rt_hash_key(), f->max_es_bytes, rt_deadline_expired, &deadline);
    rt_tc_artifact_names names;
    char errstr[RT_ERRSTR_SIZE] = "";
    int rc = rt_tc_list_artifacts(f->http, f->root_url, task_id, run_id, &names, errstr);
    if (rc != RT_OK) {
        rt_outcome_upstream(h, rc, "artifact list", errstr);
    } else {
        size_t read = 0;
        for (size_t i = 0; i < names.count && read < RT_RUN_FETCH_MAX_ERRORSUMMARIES &&
                           !es->too_big && rc == RT_OK;
             i++) {
            if (!strstr(names.names[i], "errorsummary")) continue;
            rc = add_artifact(f, task_id, run_id, names.names[i], es, h);
            read++;
        }
        rt_tc_artifact_names_free(&names);
    }
    es->expired = NULL; /* the deadline lives on this stack frame */
    es->expired_context = NULL;
    return rc;
}
