/* SPDX-License-Identifier: MPL-2.0 */
/* history.h - the test history: which runs are recorded and how their results become rows
 * (the writer of those rows is common/io/history_store.h).
 *
 * The pure part decides, without I/O: whether a project is recorded (allow-list of globs)
 * and whether a task run is in the sample (a hash of its task id, so a redelivery decides
 * the same), the branch class and the branch key, and turns an errorsummary or a JUnit
 * file into group rows and test rows, one per test (several results of one test are
 * merged, a failure winning; the first failure gives the signature, normalised by
 * common/core/failure_line.h like retrig-decide's lines).
 *
 * rt_history_store writes one run with its rows in the caller's transaction, in
 * multi-row INSERTs; the unique keys make a second store of the same run a no-op
 * (errorsummary) or a merge in which a failure wins (JUnit). Not thread-safe per value. */
#ifndef RETRIG_COMMON_HISTORY_H
#define RETRIG_COMMON_HISTORY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/core/errors.h"
#include "common/core/errorsummary.h"
#include "common/core/failure_line.h"
#include "common/core/siphash.h"
#include "common/core/strlist.h"

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
    int attempts; /* runs of the test within the run (JUnit reruns and duplicates), 0: not counted
                   */
} rt_history_test;

typedef struct rt_history_rows {
    /* The key of the name indexes (SipHash: names come from artifacts); set it before the
     * first add (the process's random key, common/io/hashkey.h). A zeroed struct works. */
    rt_siphash_key hash_key;
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
    const char *revision;   /* may be NULL */
    const char *platform;   /* may be NULL */
    const char *build_type; /* Treeherder's (rt_taskdef.build_type), may be NULL */
    const char *label;      /* may be NULL */
    const char *run_at;     /* ISO-8601 */
    bool complete_results;  /* passes recorded too */
} rt_history_run;

/* True when project matches one of the globs (fnmatch) of the list. */
bool rt_history_project_allowed(const rt_strlist *projects, const char *project);
/* True when the task run is in a sample of `percent` (0..100) of all task ids. */
bool rt_history_sampled(const char *task_id, int percent);
/* True when project is one of main_projects (exact names). */
bool rt_history_is_main(const rt_strlist *main_projects, const char *project);
/* The branch key of a Taskcluster run into out: the project, or for try and try-* projects
 * (someone's own work) "<project>:author:<author>" when the push's author is known (author:
 * the task's metadata.owner, lower-cased, so that one person's try pushes of a patch are one
 * branch, not one each), else "<project>:<push>". author may be NULL or "". */
void rt_history_branch_key(const char *project, const char *push, const char *author, char *out,
                           size_t size);

/* The failure line of an errorsummary failure, as mozlog's TBPL formatter writes it
 * ("TEST-UNEXPECTED-<STATUS> | <test> | [<subtest> - ]<message>"), normalised. RT_OK,
 * RT_ENOTFOUND when it does not normalise, RT_ENOMEM. */
RT_MUSTCHECK int rt_history_failure_signature(const char *status, const char *test,
                                              const char *subtest, const char *message,
                                              char **signature, char hash_hex[17]);

/* Group and test rows of an errorsummary (only failures are test rows; a group failing with
 * no failure of its own is its group row alone), indexed with the
 * summary's hash key. */
RT_MUSTCHECK int rt_history_rows_from_errorsummary(const rt_errorsummary *es, rt_history_rows *out);
/* Adds a group (or updates the one of that name: status and duration replaced, failed
 * or'ed). The strings are copied. */
RT_MUSTCHECK int rt_history_rows_add_group(rt_history_rows *rows, const char *name,
                                           const char *status, long duration_ms, bool failed);
/* Adds one test result, merged with an earlier row of the same test whatever their order:
 * FAIL (and any other failing status) > ERROR > PASS > SKIP > anything else (DISABLED,
 * COLLECTION_ERROR, BUILD_FAILED); a failure and a pass of one test (or a FLAKY result) make
 * FLAKY, still failed; among failures of one rank the first keeps its message and signature. The
 * message stored is
 * "<subtest> - <message>" when there is a subtest. The strings are copied. A test of a
 * group not added yet adds it (derived: status OK or FAIL); a failing test fails its group
 * ("" names no group). */
RT_MUSTCHECK int rt_history_rows_add_test(rt_history_rows *rows, const char *test,
                                          const char *group, const char *status,
                                          const char *expected, bool failed, const char *subtest,
                                          const char *message);
/* Adds n to the attempts of the test (added before). RT_OK, RT_ENOTFOUND. */
RT_MUSTCHECK int rt_history_rows_add_attempts(rt_history_rows *rows, const char *test, int n);
void rt_history_rows_free(rt_history_rows *rows);

#endif
