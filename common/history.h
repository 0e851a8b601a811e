/* SPDX-License-Identifier: MPL-2.0 */
/* history.h - the test history: which runs are recorded, how their results become rows,
 * and the one writer of those rows (migrations/0006_history.sql).
 *
 * The pure part decides, without I/O: whether a project is recorded (allow-list of globs)
 * and whether a task run is in the sample (a hash of its task id, so a redelivery decides
 * the same), the branch class and the branch key, and turns an errorsummary or a JUnit
 * file into group rows and test rows, one per test (several results of one test are
 * merged, a failure winning; the first failure gives the signature, normalised by
 * common/failure_line.h like retrig-decide's lines).
 *
 * rt_history_store writes one run with its rows in the caller's transaction, in
 * multi-row INSERTs; the unique keys make a second store of the same run a no-op
 * (errorsummary) or a merge in which a failure wins (JUnit). Not thread-safe per value. */
#ifndef RETRIG_COMMON_HISTORY_H
#define RETRIG_COMMON_HISTORY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/config.h"
#include "common/errors.h"
#include "common/errorsummary.h"
#include "common/failure_line.h"
#include "common/pg.h"

typedef struct rt_history_group {
    char *name;
    char *status;     /* may be NULL (listed, never finished) */
    long duration_ms; /* -1 when unknown */
    bool failed;
    bool derived; /* made from its tests (JUnit): status is OK or FAIL */
} rt_history_group;

typedef struct rt_history_test {
    char *test;
    char *group;    /* "" when none */
    char *status;   /* FAIL, TIMEOUT, PASS, SKIP, ... */
    char *expected; /* may be NULL */
    bool failed;
    char *message;   /* may be NULL */
    char *signature; /* normalised failure line, NULL for passes */
    char signature_hash[17];
} rt_history_test;

typedef struct rt_history_rows {
    rt_history_group *groups;
    size_t ngroups;
    rt_history_test *tests;
    size_t ntests;
    size_t rt__cap_groups, rt__cap_tests; /* internal: allocation and name indexes */
    size_t *rt__group_index, *rt__test_index, rt__index_size;
} rt_history_rows;

typedef struct rt_history_run {
    const char *source;     /* "taskcluster" or "junit" */
    const char *run_key;    /* "<taskId>/<runId>" or the JUnit run id */
    const char *repository; /* what `retrig flakes --project` asks about */
    const char *project;
    const char *branch;
    bool main;              /* branch class main (else other) */
    const char *branch_key; /* see rt_history_branch_key */
    int pr;                 /* 0: none */
    const char *push;
    const char *revision;  /* may be NULL */
    const char *platform;  /* may be NULL */
    const char *label;     /* may be NULL */
    const char *run_at;    /* ISO-8601 */
    bool complete_results; /* passes recorded too */
} rt_history_run;

/* True when project matches one of the globs (fnmatch) of the list. */
bool rt_history_project_allowed(const rt_config_list *projects, const char *project);
/* True when the task run is in a sample of `percent` (0..100) of all task ids. */
bool rt_history_sampled(const char *task_id, int percent);
/* True when project is one of main_projects (exact names). */
bool rt_history_is_main(const rt_config_list *main_projects, const char *project);
/* The branch key of a Taskcluster run into out: the project, or "<project>:<push>" for
 * try and try-* projects, whose pushes are each someone's own branch. */
void rt_history_branch_key(const char *project, const char *push, char *out, size_t size);

/* The failure line of an errorsummary failure, as mozlog's TBPL formatter writes it
 * ("TEST-UNEXPECTED-<STATUS> | <test> | [<subtest> - ]<message>"), normalised. RT_OK,
 * RT_ENOTFOUND when it does not normalise, RT_ENOMEM. */
RT_MUSTCHECK int rt_history_failure_signature(const char *status, const char *test,
                                              const char *subtest, const char *message,
                                              char **signature, char hash_hex[17]);

/* Group and test rows of an errorsummary (only failures are test rows). */
RT_MUSTCHECK int rt_history_rows_from_errorsummary(const rt_errorsummary *es, rt_history_rows *out);
/* Adds a group (or updates the one of that name: status and duration replaced, failed
 * or'ed). The strings are copied. */
RT_MUSTCHECK int rt_history_rows_add_group(rt_history_rows *rows, const char *name,
                                           const char *status, long duration_ms, bool failed);
/* Adds one test result, merged with an earlier row of the same test: a failure wins and
 * the first failure keeps its message and signature. The message stored is
 * "<subtest> - <message>" when there is a subtest. The strings are copied. A test of a
 * group not added yet adds it (derived: status OK or FAIL); a failing test fails its group
 * ("" names no group). */
RT_MUSTCHECK int rt_history_rows_add_test(rt_history_rows *rows, const char *test,
                                          const char *group, const char *status,
                                          const char *expected, bool failed, const char *subtest,
                                          const char *message);
void rt_history_rows_free(rt_history_rows *rows);

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
 *    "same_signature_pushes", "flaky", "first_failure"}
 * runs: runs of the test in the window (history_test_runs, passes included); failures,
 * pushes, branches (branch keys), prs, main_pushes (on main branches) and
 * same_signature_pushes (with the line's signature): its failures in the window on other
 * pushes than the one decided about; flaky: it failed on more than min_branches branches
 * in the window (that push included); first_failure: the earliest failure with the same
 * signature on any branch at any time, {"at", "project", "branch", "push", "revision"},
 * or null. RT_OK, RT_EDB (rt_pg_errstr), RT_ENOMEM. */
RT_MUSTCHECK int rt_history_lines_lookup(rt_pg *pg, const rt_history_lookup *q,
                                         const rt_failure_line *lines, size_t nlines, json_t **out);

#endif
