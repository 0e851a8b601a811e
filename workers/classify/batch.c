/* SPDX-License-Identifier: MPL-2.0 */
/* batch.c - retrig-classify's fast path (classify.h): most Pulse messages are completed or
 * exception runs that only need a runs row with their verdict, written many at a time. */
#include "workers/classify/classify.h"

#include <stdlib.h>

#include "common/io/log.h"
#include "common/io/metrics.h"
#include "common/store/runs.h"

/* One statement per batch (rt_runs_record_batch, common/store/runs.h): picks out the completed
 * and exception runs that may be members of a retrigger set, for the full path to record, and
 * inserts every other run with its verdict, and the failed runs without one (the full path
 * classifies them, without recording them again). */
enum { FULL_PATH, FAST_PATH, RECORD_ONLY };

/* Parses a delivery for the batch. FAST_PATH: it needs nothing but a runs row with its verdict
 * (or nothing at all); RECORD_ONLY: a failed run, recorded by the batch and then classified
 * by the full path from msg; FULL_PATH: everything else (invalid bodies, retries), msg unset. */
static int batch_candidate(classify *w, const rt_amqp_message *m, rt_pulse_task *msg)
{
    if (rt_amqp_message_header(m, "x-retrig-original-exchange")) return FULL_PATH; /* a retry */
    char reason[RT_PULSE_REASON_SIZE];
    if (rt_pulse_parse(m->body, m->len, m->exchange, (size_t)w->cfg->max_message_bytes, msg,
                       reason) != RT_OK)
        return FULL_PATH;
    for (size_t i = 0; i < m->cc_count; i++) (void)rt_pulse_apply_route(msg, m->cc[i]);
    if (msg->run_id == RT_PULSE_NO_RUN) return FULL_PATH; /* no run to write */
    return msg->event == RT_TASK_EVENT_FAILED ? RECORD_ONLY : FAST_PATH;
}

/* Handles the deliveries of one batch: completed and exception runs of task groups that
 * have no retrigger set are written in one INSERT and acked; everything else goes through
 * process() one by one. Long because its three stages share their arrays and the labels
 * fallback and slow: sort each delivery (fast, record-only or full path), write the fast and
 * record-only rows in one INSERT of FAST_COLUMNS arrays (one line per column), then settle the
 * others one by one and ack the fast ones in one frame. */
void classify_process_batch(classify *w, rt_amqp *src, rt_amqp_message *batch, size_t n)
{
    double started = rt_metrics_now();
    rt_pulse_task *msgs = calloc(n, sizeof *msgs);
    int *kind = calloc(n, sizeof *kind);
    bool *recorded = calloc(n, sizeof *recorded);
    rt_amqp_message **acks = calloc(n, sizeof *acks);
    if (!msgs || !kind || !recorded || !acks) goto fallback;

    for (size_t i = 0; i < n; i++) kind[i] = batch_candidate(w, &batch[i], &msgs[i]);
    size_t rows = 0;
    for (size_t i = 0; i < n; i++)
        if (kind[i] != FULL_PATH && msgs[i].event != RT_TASK_EVENT_OTHER) rows++;
    if (rows) {
        rt_run_record *records = calloc(n, sizeof *records);
        bool *member = calloc(n, sizeof *member);
        for (size_t i = 0; records && i < n; i++) {
            if (kind[i] == FULL_PATH || msgs[i].event == RT_TASK_EVENT_OTHER) continue;
            rt_pulse_task *t = &msgs[i];
            bool failed = kind[i] == RECORD_ONLY;
            bool completed = t->event == RT_TASK_EVENT_COMPLETED;
            records[i] = (rt_run_record){.task_id = t->task_id,
                                         .run_id = t->run_id,
                                         .state = classify_member_state(t),
                                         .reason_resolved = t->reason_resolved,
                                         .task_queue_id = t->task_queue_id,
                                         .task_group_id = t->task_group_id,
                                         .project = t->project,
                                         .revision = t->revision,
                                         .label = t->tag_label,
                                         .scheduled_at = t->scheduled,
                                         .started_at = t->started,
                                         .resolved_at = t->resolved,
                                         .verdict = failed ? NULL : "skip",
                                         .verdict_reason = failed      ? NULL
                                                           : completed ? "not-failed"
                                                                       : "exception"};
        }
        int rc = records && member ? rt_runs_record_batch(w->pg, records, n, member) : RT_ENOMEM;
        if (rc != RT_OK) {
            /* A bad value in one row (or Postgres down): let the full path sort them out. */
            rt_log_debug("batch insert failed; handling one by one", "error", rt_pg_errstr(w->pg));
            for (size_t i = 0; i < n; i++)
                if (msgs[i].event != RT_TASK_EVENT_OTHER) kind[i] = FULL_PATH;
        } else {
            for (size_t i = 0; i < n; i++) recorded[i] = kind[i] == RECORD_ONLY;
            /* May be a member of a set: the full path says. */
            for (size_t i = 0; i < n; i++)
                if (member[i]) kind[i] = FULL_PATH;
        }
        free(records);
        free(member);
    }
    goto slow;
fallback:
    /* Something failed before the batch was written: every message takes the full path. */
    for (size_t i = 0; kind && i < n; i++) kind[i] = FULL_PATH;
slow:
    /* The others first, each settled on its own, so that the fast ones, whose rows are
     * written, can then be acked together in one frame. A failed run the batch recorded is
     * classified from its parsed message. */
    for (size_t i = 0; i < n; i++)
        if (!kind || kind[i] != FAST_PATH)
            classify_process(w, src, &batch[i], recorded && recorded[i] ? &msgs[i] : NULL);
    if (kind) {
        size_t nfast = 0;
        for (size_t i = 0; i < n; i++)
            if (kind[i] == FAST_PATH) acks[nfast++] = &batch[i];
        if (nfast && rt_amqp_ack_many(src, acks, nfast) != RT_OK)
            rt_log_warn("could not ack; the broker will redeliver", "error", rt_amqp_errstr(src));
        for (size_t i = 0; i < n; i++)
            if (kind[i] == FAST_PATH)
                rt_metric_inc(rt_metrics_std()->messages, "acked",
                              msgs[i].event == RT_TASK_EVENT_COMPLETED   ? "not-failed"
                              : msgs[i].event == RT_TASK_EVENT_EXCEPTION ? "exception"
                                                                         : "other-event");
        if (nfast)
            rt_metric_observe(rt_metrics_std()->processing_seconds, rt_metrics_now() - started,
                              "batch");
    }
    for (size_t i = 0; msgs && i < n; i++) rt_pulse_task_free(&msgs[i]);
    free(msgs);
    free(kind);
    free(recorded);
    free(acks);
}
