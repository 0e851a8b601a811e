/* SPDX-License-Identifier: MPL-2.0 */
/* history_store.h - the one writer of the test history's rows (migrations/0006_history.sql)
 * and retrig-decide's look-up of a decision's lines in it. The rows themselves are built by
 * the pure common/core/history.h.
 *
 * rt_history_store writes one run with its rows in the caller's transaction, in multi-row
 * INSERTs; the unique keys make a second store of the same run a no-op (errorsummary) or a
 * merge in which a failure wins (JUnit). Thread-safety: per rt_pg handle. */
#ifndef RETRIG_COMMON_IO_HISTORY_STORE_H
#define RETRIG_COMMON_IO_HISTORY_STORE_H

#include "common/not_core.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/core/decide_model.h"
#include "common/core/failure_line.h"
#include "common/core/history.h"
#include "common/io/pg.h"

/* Writes the run and its rows in the caller's transaction. *inserted is true when the run
 * was new. merge false: a run already stored is left as it is (its rows were written with
 * it); merge true: the rows are merged into it, a failure winning. */
RT_MUSTCHECK int rt_history_store(rt_pg *pg, const rt_history_run *run, const rt_history_rows *rows,
                                  bool merge, bool *inserted);

/* Writes n errorsummary runs (rows[i] the rows of runs[i]) in the caller's transaction in
 * a few statements whatever n: one multi-row INSERT of the runs, then the groups and the
 * tests of the runs that were new in one COPY each. A run already stored (a redelivery,
 * or twice in the batch) is left as it is, like rt_history_store with merge false;
 * inserted[i] says whether run i was new. RT_OK; RT_EDB with the server's message in
 * errstr (the transaction is then aborted: roll back; a bad value anywhere fails the whole
 * batch, so callers store the runs one by one to find it); RT_ENOMEM. */
RT_MUSTCHECK int rt_history_store_batch(rt_pg *pg, const rt_history_run *runs,
                                        const rt_history_rows *const *rows, size_t n,
                                        bool *inserted, char *errstr);

/* Adds the runs waiting for the per-day rollup (migrations/0020_history_rollup.sql: every
 * new run is queued by a trigger) to it, up to `chunk` runs a transaction, until none are
 * left or another session holds the rollup (that session adds them). Call it after the
 * transaction that stored runs has committed: the dashboard's figures (history_flakes over
 * whole days) count only the runs in the rollup. *added (optional) counts the runs added.
 * RT_OK, or RT_EDB with rt_pg_errstr (the open transaction was rolled back). */
RT_MUSTCHECK int rt_history_rollup(rt_pg *pg, int chunk, long *added);

/* Retention and partitions ahead (history_maintain, migrations/0019 and 0020): days older
 * than retention_days (0: none) are dropped as whole partitions, the week ahead is
 * created, and the rollup answers from the first day kept. *partitions (optional) is
 * the number of partitions left, -1 when another session was maintaining. RT_OK, RT_EDB. */
RT_MUSTCHECK int rt_history_maintain(rt_pg *pg, int retention_days, long *partitions);

/* After retention: removes the rollup's rows of the days retention dropped (never read once
 * history_maintain moved the rollup's horizon), 10,000 rows of each table a transaction,
 * until none are left. *removed (optional) counts them. RT_OK, RT_EDB. */
RT_MUSTCHECK int rt_history_rollup_prune(rt_pg *pg, long *removed);

/* What retrig-decide asks of the history about the failure lines of one decision. */
typedef struct rt_history_lookup {
    const char *repository; /* history_repository */
    int window_days;        /* history_flaky_window_days: the window ends now */
    int min_branches;       /* history_flaky_min_branches */
    const char *project;    /* the push decided about: its own runs are not "other" */
    const char *revision;
} rt_history_lookup;

/* The cross-branch history of each line's test and signature, in one query: *out is a
 * JSON array of nlines objects, in the order of lines, each
 *   {"window_days", "runs", "failures", "pushes", "branches", "prs", "main_pushes",
 *    "same_signature_pushes", "flaky", "first_failure", "first_failure_same_signature"}
 * runs: runs of the test in the window (history_test_runs, passes included); failures,
 * pushes, prs, main_pushes (on main branches) and same_signature_pushes (with the line's
 * signature): its failures in the window on other pushes than the one decided about;
 * branches: the distinct branches other than main ones among those (branch keys of branch
 * class other: try pushes, pull requests); flaky: it failed on more than min_branches such
 * branches in the window (that push included; failures on main branches never count);
 * first_failure: the test's earliest failure, whatever its signature, on any branch at any
 * time, {"at", "project", "branch", "push", "revision", "signature"}, or null;
 * first_failure_same_signature: the earliest with the line's signature, {"at", "project",
 * "branch", "push", "revision"}, or null. RT_OK, RT_EDB (rt_pg_errstr), RT_ENOMEM. */
RT_MUSTCHECK int rt_history_lines_lookup(rt_pg *pg, const rt_history_lookup *q,
                                         const rt_failure_line *lines, size_t nlines, json_t **out);

/* The counts the verdict model reads (common/core/decide_model.h), per line, in one query:
 * runs of the line's test (history_test_runs, passes included) in the history window on
 * other pushes than (project, revision) that resolved before `before` (an ISO-8601 time;
 * NULL or "": now), failures of the test among them, and those with the line's signature
 * (-1 when the line has none). A line without a test has no history (0, 0, -1). The
 * history before the failure is what a regression leaves untouched: later pushes carry the
 * regression too, and the set's own retriggers are on its push. out: nlines entries.
 * RT_OK, RT_EDB (rt_pg_errstr), RT_ENOMEM. */
RT_MUSTCHECK int rt_history_model_counts(rt_pg *pg, const rt_history_lookup *q, const char *before,
                                         const rt_failure_line *lines, size_t nlines,
                                         rt_decide_history *out);

#endif
