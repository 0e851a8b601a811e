/* SPDX-License-Identifier: MPL-2.0 */
/* culprit_searches.h - the store of culprit searches as retrig-decide runs them (the culprit
 * columns of decisions, and culprit_pending_probes as the search reads and closes them): the
 * searches due, claimed for one replica; a probe's row; a step stored exactly once. The
 * statements were workers/decide/culprit_flow.c's until issue 33; they live in
 * culprit_searches.c and no PGresult leaves it. A write that changes nothing (another replica
 * got there first, or the search is over) says so with *changed false.
 * Errors: RT_EDB (rt_pg_errstr), RT_ECONN, RT_ENOMEM. Thread-safety: per rt_pg handle.
 * Layer: common/store. */
#ifndef RETRIG_COMMON_STORE_CULPRIT_SEARCHES_H
#define RETRIG_COMMON_STORE_CULPRIT_SEARCHES_H

#include "common/not_core.h"

#include <stdbool.h>
#include <stddef.h>

#include "common/core/errors.h"
#include "common/io/pg.h"

/* A search due, as its decision holds it. Texts are "" when unknown. */
typedef struct rt_culprit_claimed {
    char *set_id, *project, *revision, *label;
    char *evidence; /* the decision's evidence, JSON text */
    char *platform; /* "unknown" when the set has none */
    char *window;   /* culprit_window's JSON text, "" before the window is found */
    long long jobs_spent;
    char *range_first, *range_last;
    char *failure_seen_at; /* UTC, with milliseconds */
} rt_culprit_claimed;
/* Claims up to batch searches whose last look is older than interval_s (or that were never
 * looked at), moving their culprit_checked_at so that replicas skip them. */
RT_MUSTCHECK int rt_culprit_searches_claim(rt_pg *pg, int interval_s, int batch,
                                           rt_culprit_claimed **rows, size_t *n);
void rt_culprit_claimed_free(rt_culprit_claimed *rows, size_t n);

/* The probe row of (set, revision): *found false when none; error "" when none. */
RT_MUSTCHECK int rt_culprit_searches_probe(rt_pg *pg, const char *set_id, const char *revision,
                                           int *attempt, char state[16], char *error,
                                           size_t error_size, bool *found);
/* A triggered probe whose runs have all resolved is done. */
RT_MUSTCHECK int rt_culprit_searches_probe_done(rt_pg *pg, const char *set_id, const char *revision,
                                                int attempt);

/* What a search's end or step stores on its decision (NULL members are SQL NULL). */
typedef struct rt_culprit_stored {
    const char *set_id;
    const char *window;     /* JSON text */
    const char *probes;     /* JSON text; rt_culprit_searches_step only */
    const char *jobs_spent; /* integer text; rt_culprit_searches_step only */
    const char *status;     /* searching, found, range, stopped */
    const char *reason;
    const char *revision;   /* the culprit's, NULL unless found */
    const char *pushlog_id; /* integer text */
    const char *author, *url;
    const char *range_first, *range_last;
} rt_culprit_stored;
/* The window found, once: only while the search has none. */
RT_MUSTCHECK int rt_culprit_searches_store_window(rt_pg *pg, const rt_culprit_stored *s,
                                                  bool *changed);
/* A step of a search under way: its window, probes, spend and, once over, its end. */
RT_MUSTCHECK int rt_culprit_searches_step(rt_pg *pg, const rt_culprit_stored *s, bool *changed);
/* Stops a search still searching, with reason. */
RT_MUSTCHECK int rt_culprit_searches_stop(rt_pg *pg, const char *set_id, const char *reason,
                                          bool *changed);

#endif
