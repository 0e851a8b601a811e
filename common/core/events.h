/* SPDX-License-Identifier: MPL-2.0 */
/* events.h - the events retrig-decide publishes for bots on the decisions exchange
 * (queue-schemas/): the decision event of a retrigger set and the culprit event that ends a
 * regression's culprit search. Built here, so that the publisher writes the schema's shape,
 * and parsed here, strictly (a bot's view, and the round-trip tests'). Pure. */
#ifndef RETRIG_COMMON_CORE_EVENTS_H
#define RETRIG_COMMON_CORE_EVENTS_H

#include <stdbool.h>
#include <stddef.h>

#include "common/core/errors.h"

#define RT_EVENT_MAX_TASKS 100  /* retrigger_task_ids (the schema's maxItems) */
#define RT_EVENT_MAX_LINES 1000 /* lines an event may carry */

typedef char rt_event_task_id[23];

/* A failure line of the original run and the retriggers that reproduced it. */
typedef struct rt_decision_event_line {
    char *line; /* the normalised signature (failure_line.h) */
    rt_event_task_id *reproduced_by;
    size_t nreproduced_by;
} rt_decision_event_line;

/* queue-schemas/decision-event.json. */
typedef struct rt_decision_event {
    long long set_id;
    char project[65];
    char revision[41];
    char *label;
    char platform[129];
    char verdict[16]; /* regression, intermittent, infra, undecided */
    char reason[257];
    char original_task_id[23];
    rt_event_task_id *retrigger_task_ids; /* unique, at most RT_EVENT_MAX_TASKS */
    size_t nretrigger_task_ids;
    rt_decision_event_line *lines;
    size_t nlines;
    int threshold; /* 0: absent */
    char decided_at[40];
} rt_decision_event;

/* A malloc'd compact JSON text of the event; NULL when out of memory or a string is NULL. */
char *rt_decision_event_build(const rt_decision_event *event);
/* The event in body, validated as the schema says (unknown members refused); RT_EPROTO with
 * reason (RT_MESSAGE_REASON_SIZE, "missing-field:verdict", ...), RT_ENOMEM. Free with
 * rt_decision_event_free, also after a failure. */
RT_MUSTCHECK int rt_decision_event_parse(const char *body, size_t len, rt_decision_event *out,
                                         char *reason);
/* Frees what parse filled (label, lists, each line). A builder's caller may lend its own
 * strings and arrays instead, and then frees them itself. */
void rt_decision_event_free(rt_decision_event *event);

/* queue-schemas/culprit-event.json. */
typedef struct rt_culprit_event {
    long long set_id;
    char project[65];
    char revision[41];
    char *label;
    char status[32]; /* found, culprit-before-window, stopped */
    char reason[161];
    bool found; /* the culprit below is set (else "culprit": null) */
    struct {
        char revision[41];
        long long pushlog_id; /* 0: null, its decision task is not indexed */
        char *author;
        char *url;
    } culprit;
    char range_first[41], range_last[41];
    int rounds, pushes_probed, jobs_spent;
} rt_culprit_event;

char *rt_culprit_event_build(const rt_culprit_event *event);
RT_MUSTCHECK int rt_culprit_event_parse(const char *body, size_t len, rt_culprit_event *out,
                                        char *reason);
void rt_culprit_event_free(rt_culprit_event *event);

#endif
